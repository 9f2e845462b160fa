//! The audit log: append-only (triggers in the schema refuse updates and deletes), so it can
//! say exactly who decided what, on which version digest, when, with which outcome.

use super::{format_time, Store};
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One line of the audit log (a row of `audit_log`; times are stored as RFC 3339 text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Row id.
    pub id: i64,
    /// When.
    pub at: DateTime<Utc>,
    /// What was appended.
    #[serde(flatten)]
    #[sqlx(flatten)]
    #[cfg_attr(feature = "ui-types", ts(flatten))]
    pub line: NewAuditEntry,
}

/// An audit line to append (and, in [`AuditEntry`], what was appended).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct NewAuditEntry {
    /// Who: "owner via cli", "owner via desktop", "dispatcher", "sync".
    pub actor: String,
    /// The item (None once its account was removed).
    pub item_id: Option<i64>,
    /// The decision it is about.
    pub decision_id: Option<i64>,
    /// What happened: approve, reject, undo, "approve dispatched"...
    pub action: String,
    /// The version it was about.
    pub version: Option<String>,
    /// sha256 of that version's bytes.
    pub digest: Option<String>,
    /// The outcome.
    pub outcome: Option<String>,
    /// Reason or the service's words.
    pub detail: Option<String>,
    /// The view of the version the decision was taken on (approvals).
    pub view_id: Option<i64>,
}

impl Store {
    /// Append one line.
    pub async fn append_audit(&self, entry: &NewAuditEntry) -> Result<i64> {
        let mut tx = self.write_tx().await?;
        let id = append_audit_in(&mut tx, entry).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The audit trail of one item, oldest first.
    pub async fn audit_for_item(&self, item_id: i64) -> Result<Vec<AuditEntry>> {
        self.rows_of_item("audit_log", item_id).await
    }

    /// The whole log, oldest first.
    pub async fn audit_log(&self) -> Result<Vec<AuditEntry>> {
        Ok(sqlx::query_as("SELECT * FROM audit_log ORDER BY id")
            .fetch_all(self.pool())
            .await?)
    }
}

pub(crate) async fn append_audit_in(
    tx: &mut sqlx::SqliteConnection,
    entry: &NewAuditEntry,
) -> Result<i64> {
    let id = sqlx::query_scalar(
        "INSERT INTO audit_log (at, actor, item_id, decision_id, action, version, digest, outcome, detail, view_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(format_time(Utc::now()))
    .bind(&entry.actor)
    .bind(entry.item_id)
    .bind(entry.decision_id)
    .bind(&entry.action)
    .bind(&entry.version)
    .bind(&entry.digest)
    .bind(&entry.outcome)
    .bind(&entry.detail)
    .bind(entry.view_id)
    .fetch_one(&mut *tx)
    .await?;
    Ok(id)
}
