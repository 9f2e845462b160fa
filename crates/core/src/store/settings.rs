//! The owner's settings, kept in the mirror so the desktop app and the CLI agree.

use serde::{Deserialize, Serialize};

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

const SETTINGS_KEY: &str = "settings";

impl Store {
    /// The settings (defaults where never set).
    pub async fn settings(&self) -> Result<Settings> {
        let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(SETTINGS_KEY)
            .fetch_optional(self.pool())
            .await?;
        match value {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| Error::Corrupt(format!("bad settings: {e}"))),
            None => Ok(Settings::default()),
        }
    }

    /// Save the settings, refusing values out of range.
    pub async fn save_settings(&self, settings: &Settings) -> Result<()> {
        if settings.undo_window_secs > MAX_UNDO_WINDOW_SECS {
            return Err(Error::refused(
                "save the settings",
                format!("the undo window can be at most {MAX_UNDO_WINDOW_SECS} seconds"),
            ));
        }
        let json = serde_json::to_string(settings).map_err(|e| Error::Encode {
            what: "the settings",
            detail: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(SETTINGS_KEY)
        .bind(json)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Turn the "pause sending" switch on or off.
    pub async fn set_paused(&self, paused: bool) -> Result<Settings> {
        let mut settings = self.settings().await?;
        settings.paused = paused;
        self.save_settings(&settings).await?;
        Ok(settings)
    }
}
