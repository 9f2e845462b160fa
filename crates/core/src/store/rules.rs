//! The owner's rules, their versions and what each rule made of each draft version
//! (`rules`, `rule_versions`, `rule_evaluations`; see crates/core/src/rules).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::audit::{append_audit_in, NewAuditEntry};
use super::{format_time, Found, Store};
use crate::error::{Error, Result};
use crate::rules::RuleDefinition;

mod evaluations;

pub use evaluations::{NewEvaluation, RuleEvaluation};

/// Whether a rule acts or only records what it would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum RuleMode {
    /// Records what it would do; never decides.
    Shadow,
    /// Decides.
    Armed,
}

/// One rule as stored: its current version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Its id (what `countersign rules arm ID` takes).
    pub id: i64,
    /// Its place in the order (rules are tried first to last).
    pub position: i64,
    /// Its version: every edit adds one.
    pub version: u32,
    /// Shadow or armed.
    pub mode: RuleMode,
    /// What the owner wrote.
    pub definition: RuleDefinition,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// When the owner removed it (only a removed rule the record names has one).
    #[serde(skip)]
    #[cfg_attr(feature = "ui-types", ts(skip))]
    pub removed_at: Option<DateTime<Utc>>,
}

impl Rule {
    /// Whether the owner removed it (the record still names it).
    pub fn removed(&self) -> bool {
        self.removed_at.is_some()
    }

    /// The actor its decisions are recorded under: `rule:<id>@<version>`.
    pub fn actor(&self) -> String {
        format!("rule:{}@{}", self.id, self.version)
    }
}

/// The rule id in an actor `rule:<id>@<version>`, if it is one.
pub fn rule_of_actor(actor: &str) -> Option<i64> {
    actor.strip_prefix("rule:")?.split('@').next()?.parse().ok()
}

fn rule_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<Rule> {
    let json: String = row.try_get("definition")?;
    Ok(Rule {
        id: row.try_get("id")?,
        position: row.try_get("position")?,
        version: row.try_get("version")?,
        mode: row.try_get("mode")?,
        definition: serde_json::from_str(&json)
            .map_err(|e| Error::Corrupt(format!("bad rule definition: {e}")))?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        removed_at: row.try_get("removed_at")?,
    })
}

impl Store {
    /// Add a rule at the end of the order, in shadow, audited as `actor`'s.
    pub async fn add_rule(&self, definition: &RuleDefinition, actor: &str) -> Result<Rule> {
        definition
            .check()
            .map_err(|why| Error::refused("add the rule", why))?;
        let json = encode(definition)?;
        let now = format_time(Utc::now());
        let mut tx = self.write_tx().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO rules (position, version, mode, definition, created_at, updated_at)
             VALUES ((SELECT COALESCE(MAX(position), 0) + 1 FROM rules), 1, 'shadow', ?, ?, ?)
             RETURNING id",
        )
        .bind(&json)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        write_version(&mut tx, id, 1, &json, &now).await?;
        audit_rule(&mut tx, &self.keys, actor, "rule added", id, 1, &json).await?;
        tx.commit().await?;
        self.rule(id).await
    }

    /// Change a rule: a new version, back in shadow (what it does changed, so its record
    /// starts over before it may act again).
    pub async fn edit_rule(
        &self,
        id: i64,
        definition: &RuleDefinition,
        actor: &str,
    ) -> Result<Rule> {
        self.edit_rule_at(id, None, definition, actor).await
    }

    /// [`Store::edit_rule`] of the version the owner had open (`from`): a rule changed
    /// meanwhile (by the command line, another window) is refused rather than overwritten
    /// with a definition made from what it was.
    pub async fn edit_rule_from(
        &self,
        id: i64,
        from: u32,
        definition: &RuleDefinition,
        actor: &str,
    ) -> Result<Rule> {
        self.edit_rule_at(id, Some(from), definition, actor).await
    }

    async fn edit_rule_at(
        &self,
        id: i64,
        from: Option<u32>,
        definition: &RuleDefinition,
        actor: &str,
    ) -> Result<Rule> {
        let current = self.rule(id).await?;
        let action = format!("change the rule “{}”", current.definition.name);
        definition
            .check()
            .map_err(|why| Error::refused(action.clone(), why))?;
        let json = encode(definition)?;
        let now = format_time(Utc::now());
        let base = from.unwrap_or(current.version);
        let version = base + 1;
        let mut tx = self.write_tx().await?;
        let changed = sqlx::query(
            "UPDATE rules SET version = ?, definition = ?, mode = 'shadow', updated_at = ?
             WHERE id = ? AND version = ? AND removed_at IS NULL",
        )
        .bind(version)
        .bind(&json)
        .bind(&now)
        .bind(id)
        .bind(base)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Err(Error::refused(
                action,
                if current.removed() {
                    "it was removed".to_string()
                } else {
                    "it was changed elsewhere since you opened it: open it again to see the \
                     change"
                        .to_string()
                },
            ));
        }
        write_version(&mut tx, id, version, &json, &now).await?;
        audit_rule(
            &mut tx,
            &self.keys,
            actor,
            "rule edited",
            id,
            version,
            &json,
        )
        .await?;
        tx.commit().await?;
        self.rule(id).await
    }

    /// Arm or disarm a rule, whatever its record (the owner's `rules arm` goes through
    /// [`crate::rules::record::arm`], which shows the record and asks first).
    pub async fn set_rule_mode(&self, id: i64, mode: RuleMode, actor: &str) -> Result<Rule> {
        let rule = self.rule(id).await?;
        self.set_rule_mode_at(id, rule.version, mode, actor).await
    }

    /// Arm rule `id` if it is still at `version`, the version whose record the owner read:
    /// an edit meanwhile (a new version, back in shadow, its record started over) is refused.
    pub async fn arm_rule_at(&self, id: i64, version: u32, actor: &str) -> Result<Rule> {
        self.set_rule_mode_at(id, version, RuleMode::Armed, actor)
            .await
    }

    async fn set_rule_mode_at(
        &self,
        id: i64,
        version: u32,
        mode: RuleMode,
        actor: &str,
    ) -> Result<Rule> {
        let rule = self.rule(id).await?;
        let mut tx = self.write_tx().await?;
        let changed =
            sqlx::query("UPDATE rules SET mode = ?, updated_at = ? WHERE id = ? AND version = ?")
                .bind(mode)
                .bind(format_time(Utc::now()))
                .bind(id)
                .bind(version)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if changed == 0 {
            return Err(Error::refused(
                format!("change the mode of the rule “{}”", rule.definition.name),
                format!(
                    "it changed since its record was read (version {} now, not {version})",
                    rule.version
                ),
            ));
        }
        let action = match mode {
            RuleMode::Armed => "rule armed",
            RuleMode::Shadow => "rule disarmed",
        };
        audit_rule(
            &mut tx,
            &self.keys,
            actor,
            action,
            id,
            rule.version,
            &rule.definition.name,
        )
        .await?;
        tx.commit().await?;
        self.rule(id).await
    }

    /// Remove a rule. It is kept out of sight, so the record can still name it.
    pub async fn remove_rule(&self, id: i64, actor: &str) -> Result<()> {
        let rule = self.rule(id).await?;
        let mut tx = self.write_tx().await?;
        sqlx::query("UPDATE rules SET removed_at = ? WHERE id = ?")
            .bind(format_time(Utc::now()))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        audit_rule(
            &mut tx,
            &self.keys,
            actor,
            "rule removed",
            id,
            rule.version,
            &rule.definition.name,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The rules in order (removed ones left out).
    pub async fn rules(&self) -> Result<Vec<Rule>> {
        let rows =
            sqlx::query("SELECT * FROM rules WHERE removed_at IS NULL ORDER BY position, id")
                .fetch_all(self.pool())
                .await?;
        rows.iter().map(rule_from_row).collect()
    }

    /// One rule (a removed one too: the record names it).
    pub async fn rule(&self, id: i64) -> Result<Rule> {
        let row = sqlx::query("SELECT * FROM rules WHERE id = ?")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .found("rule", id)?;
        rule_from_row(&row)
    }
}

fn encode(definition: &RuleDefinition) -> Result<String> {
    serde_json::to_string(definition).map_err(|e| Error::Encode {
        what: "the rule",
        detail: e.to_string(),
    })
}

async fn write_version(
    tx: &mut sqlx::SqliteConnection,
    id: i64,
    version: u32,
    json: &str,
    now: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO rule_versions (rule_id, version, definition, created_at) VALUES (?, ?, ?, ?)",
    )
    .bind(id)
    .bind(version)
    .bind(json)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

pub(super) async fn audit_rule(
    tx: &mut sqlx::SqliteConnection,
    keys: &super::seal::KeyState,
    actor: &str,
    action: &str,
    id: i64,
    version: u32,
    detail: &str,
) -> Result<()> {
    append_audit_in(
        tx,
        keys,
        &NewAuditEntry {
            actor: actor.to_string(),
            action: action.to_string(),
            version: Some(format!("rule:{id}@{version}")),
            detail: Some(detail.to_string()),
            ..NewAuditEntry::default()
        },
    )
    .await?;
    Ok(())
}
