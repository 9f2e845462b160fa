//! The owner's settings, kept in the mirror so the desktop app and the CLI agree.
//!
//! Each setting is its own row (`settings.key` is the setting's camelCase name), changed on
//! its own in one write transaction: a window that kept an old copy of every setting and saves
//! one of them cannot turn Hold everything or Pause sending back off. A change of a safety
//! setting is written to the audit log, in the same transaction, with its old and new value.

use serde::{Deserialize, Serialize};

use super::audit::{append_audit_in, NewAuditEntry};
use super::Store;
use crate::error::{Error, Result};

/// The longest undo window the owner can choose, in seconds.
pub const MAX_UNDO_WINDOW_SECS: u32 = 60;

/// What to do with remote content (images, fonts) in a draft's HTML.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum RemoteContentPolicy {
    /// Blocked; loadable per draft on request.
    #[default]
    Block,
    /// Always loaded (the owner's IP is then visible to senders of remote images).
    Allow,
}

/// The owner's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Seconds an approval waits before it is sent (0–60).
    pub undo_window_secs: u32,
    /// Keep rejected Gmail drafts in Gmail (only the mirror and audit log record the rejection).
    pub keep_rejected_gmail_drafts: bool,
    /// Desktop notifications for refusals.
    pub notifications: bool,
    /// Remote content in HTML drafts.
    pub remote_content: RemoteContentPolicy,
    /// The "pause sending" switch: no decision is dispatched while it is on.
    pub paused: bool,
    /// A desktop notification "N new drafts to review" when drafts arrive (one per burst).
    /// Off unless the owner turns it on.
    pub new_draft_notifications: bool,
    /// "Hold everything": no rule decides anything while it is on (the owner's switch in the
    /// tray and the status bar).
    pub hold_everything: bool,
    /// A draft changed less than this many seconds ago may still be being written: no rule
    /// decides it until then.
    pub rule_settle_secs: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            undo_window_secs: 10,
            keep_rejected_gmail_drafts: false,
            notifications: true,
            remote_content: RemoteContentPolicy::Block,
            paused: false,
            new_draft_notifications: false,
            hold_everything: false,
            rule_settle_secs: 60,
        }
    }
}

/// The settings to change, and only those: every field left `None` keeps its stored value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[cfg_attr(feature = "ui-types", ts(optional_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct SettingsChange {
    /// Seconds an approval waits before it is sent (0–60).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undo_window_secs: Option<u32>,
    /// Keep rejected Gmail drafts in Gmail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_rejected_gmail_drafts: Option<bool>,
    /// Desktop notifications for refusals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notifications: Option<bool>,
    /// Remote content in HTML drafts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_content: Option<RemoteContentPolicy>,
    /// Pause sending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// "N new drafts to review" notifications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_draft_notifications: Option<bool>,
    /// Hold everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_everything: Option<bool>,
    /// Seconds a draft rests unchanged before a rule may decide it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_settle_secs: Option<u32>,
}

impl SettingsChange {
    /// What the owner changed on a page that loaded `loaded` and now shows `wanted`: only the
    /// fields that differ, so a setting changed elsewhere meanwhile keeps its new value.
    pub fn between(loaded: &Settings, wanted: &Settings) -> SettingsChange {
        fn changed<T: PartialEq + Clone>(old: &T, new: &T) -> Option<T> {
            (old != new).then(|| new.clone())
        }
        SettingsChange {
            undo_window_secs: changed(&loaded.undo_window_secs, &wanted.undo_window_secs),
            keep_rejected_gmail_drafts: changed(
                &loaded.keep_rejected_gmail_drafts,
                &wanted.keep_rejected_gmail_drafts,
            ),
            notifications: changed(&loaded.notifications, &wanted.notifications),
            remote_content: changed(&loaded.remote_content, &wanted.remote_content),
            paused: changed(&loaded.paused, &wanted.paused),
            new_draft_notifications: changed(
                &loaded.new_draft_notifications,
                &wanted.new_draft_notifications,
            ),
            hold_everything: changed(&loaded.hold_everything, &wanted.hold_everything),
            rule_settle_secs: changed(&loaded.rule_settle_secs, &wanted.rule_settle_secs),
        }
    }
}

/// The settings whose changes are audited, with the words the audit row uses: each guards
/// what leaves under the owner's name.
const SAFETY_SETTINGS: [(&str, &str); 4] = [
    ("holdEverything", "Hold everything"),
    ("paused", "Pause sending"),
    ("undoWindowSecs", "undo window"),
    ("ruleSettleSecs", "rule settle"),
];

/// A setting's value as the audit row says it: on/off, or seconds.
fn audit_value(key: &str, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Bool(true) => "on".into(),
        serde_json::Value::Bool(false) => "off".into(),
        serde_json::Value::Number(n) if key.ends_with("Secs") => format!("{n} s"),
        other => other.to_string(),
    }
}

/// Where every setting was kept before each had its own row: read under the rows, never
/// written again.
const LEGACY_KEY: &str = "settings";

async fn read_settings(conn: &mut sqlx::SqliteConnection) -> Result<Settings> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM settings")
        .fetch_all(&mut *conn)
        .await?;
    let corrupt = |e: serde_json::Error| Error::Corrupt(format!("bad settings: {e}"));
    let mut merged = serde_json::to_value(Settings::default()).map_err(corrupt)?;
    if let Some((_, legacy)) = rows.iter().find(|(k, _)| k == LEGACY_KEY) {
        let legacy: Settings = serde_json::from_str(legacy).map_err(corrupt)?;
        merged = serde_json::to_value(legacy).map_err(corrupt)?;
    }
    if let serde_json::Value::Object(fields) = &mut merged {
        for (key, value) in rows.iter().filter(|(k, _)| k != LEGACY_KEY) {
            fields.insert(key.clone(), serde_json::from_str(value).map_err(corrupt)?);
        }
    }
    serde_json::from_value(merged).map_err(corrupt)
}

impl Store {
    /// The settings (defaults where never set).
    pub async fn settings(&self) -> Result<Settings> {
        let mut conn = self.pool().acquire().await?;
        read_settings(&mut conn).await
    }

    /// Change the settings `change` names, each on its own, refusing values out of range; the
    /// others keep what is stored, whatever the caller last read. A change of a safety setting
    /// (Hold everything, Pause sending, the undo window, the rule settle) is audited as
    /// `actor`'s with its old and new value. Returns the settings as they now are.
    pub async fn update_settings(&self, change: &SettingsChange, actor: &str) -> Result<Settings> {
        if change
            .undo_window_secs
            .is_some_and(|secs| secs > MAX_UNDO_WINDOW_SECS)
        {
            return Err(Error::refused(
                "save the settings",
                format!("the undo window can be at most {MAX_UNDO_WINDOW_SECS} seconds"),
            ));
        }
        let encode = |e: serde_json::Error| Error::Encode {
            what: "the settings",
            detail: e.to_string(),
        };
        let serde_json::Value::Object(changed) = serde_json::to_value(change).map_err(encode)?
        else {
            return self.settings().await;
        };
        let mut tx = self.write_tx().await?;
        let before = serde_json::to_value(read_settings(&mut tx).await?).map_err(encode)?;
        for (key, new) in changed {
            let old = before.get(&key).cloned().unwrap_or(serde_json::Value::Null);
            if old == new {
                continue;
            }
            sqlx::query(
                "INSERT INTO settings (key, value) VALUES (?, ?)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(&key)
            .bind(new.to_string())
            .execute(&mut *tx)
            .await?;
            if let Some((_, words)) = SAFETY_SETTINGS.iter().find(|(k, _)| *k == key) {
                append_audit_in(
                    &mut tx,
                    &self.keys,
                    &NewAuditEntry {
                        actor: actor.to_string(),
                        action: "setting changed".into(),
                        detail: Some(format!(
                            "{words}: {} \u{2192} {}",
                            audit_value(&key, &old),
                            audit_value(&key, &new)
                        )),
                        ..NewAuditEntry::default()
                    },
                )
                .await?;
            }
        }
        tx.commit().await?;
        self.settings().await
    }

    /// Turn the "pause sending" switch on or off (audited as `actor`'s).
    pub async fn set_paused(&self, paused: bool, actor: &str) -> Result<Settings> {
        self.update_settings(
            &SettingsChange {
                paused: Some(paused),
                ..SettingsChange::default()
            },
            actor,
        )
        .await
    }
}
