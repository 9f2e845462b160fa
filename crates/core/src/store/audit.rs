//! The audit log: append-only (triggers in the schema refuse updates and deletes), so it can
//! say exactly who decided what, on which version digest, when, with which outcome.
//!
//! It is also hash-chained, so that a change made around the triggers (with `sqlite3`, say) is
//! seen: each row stores the previous row's hash and its own, `sha256(previous hash, "\n", the
//! row's content as a JSON array)`, and `audit_head` holds the newest row and its hash.
//! [`Store::verify_audit`] walks the chain and names the first row that does not fit. The
//! content is the row's id, time (as stored), actor, action, version, digest, outcome and
//! detail; the item, decision and view references are left out because the schema itself sets
//! them to NULL when an account is removed.

use sha2::{Digest, Sha256};

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

    /// The log from `since` on (all of it for `None`), oldest first.
    pub async fn audit_log_since(&self, since: Option<DateTime<Utc>>) -> Result<Vec<AuditEntry>> {
        let Some(since) = since else {
            return self.audit_log().await;
        };
        Ok(
            sqlx::query_as("SELECT * FROM audit_log WHERE at >= ? ORDER BY id")
                .bind(format_time(since))
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// Chain the rows written before the log was chained (once, after the migration that
    /// added the chain); rows already chained are left alone.
    pub(crate) async fn seal_audit_chain(&self) -> Result<()> {
        // Read first: opening the mirror must not take the write lock when nothing is to do.
        let any: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM audit_log WHERE row_hash IS NULL)")
                .fetch_one(self.pool())
                .await?;
        if !any {
            return Ok(());
        }
        let mut tx = self.write_tx().await?;
        let unsealed: Vec<ChainRow> = sqlx::query_as(
            "SELECT id, at, actor, action, version, digest, outcome, detail, prev_hash, row_hash
             FROM audit_log WHERE row_hash IS NULL ORDER BY id",
        )
        .fetch_all(&mut *tx)
        .await?;
        for row in unsealed {
            let prev = head_hash(&mut tx).await?;
            let hash = row_hash(&prev, &row.content());
            seal(&mut tx, row.id, &prev, &hash).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Walk the hash chain of the audit log: every row must follow the one before it, hash to
    /// what it says, and the newest must be the one `audit_head` names.
    pub async fn verify_audit(&self) -> Result<AuditVerdict> {
        let rows: Vec<ChainRow> = sqlx::query_as(
            "SELECT id, at, actor, action, version, digest, outcome, detail, prev_hash, row_hash
             FROM audit_log ORDER BY id",
        )
        .fetch_all(self.pool())
        .await?;
        let head: Option<(i64, String)> =
            sqlx::query_as("SELECT row_id, row_hash FROM audit_head WHERE id = 1")
                .fetch_optional(self.pool())
                .await?;
        let broken = |row_id: i64, problem: String| AuditVerdict {
            rows: rows.len(),
            broken: Some(AuditBreak { row_id, problem }),
        };
        let mut expected_prev = GENESIS.to_owned();
        let mut previous_id: Option<i64> = None;
        for row in &rows {
            let follows = row.prev_hash.as_deref() == Some(expected_prev.as_str());
            if !follows {
                // A gap in the ids is a removal: the first missing id is named.
                return Ok(match previous_id {
                    Some(before) if row.id != before + 1 => broken(
                        before + 1,
                        format!(
                            "row {} was removed (row {} does not follow row {before})",
                            before + 1,
                            row.id
                        ),
                    ),
                    // Its hash checked out, so the row before was rewritten hash and all.
                    Some(before) => broken(
                        before,
                        format!(
                            "row {before} was changed (row {} no longer follows it)",
                            row.id
                        ),
                    ),
                    None if row.id > 1 => {
                        broken(1, format!("the rows before row {} were removed", row.id))
                    }
                    None => broken(row.id, format!("row {} was changed", row.id)),
                });
            }
            let hash = row_hash(&expected_prev, &row.content());
            if row.row_hash.as_deref() != Some(hash.as_str()) {
                return Ok(broken(row.id, format!("row {} was changed", row.id)));
            }
            expected_prev = hash;
            previous_id = Some(row.id);
        }
        match (head, rows.last()) {
            (None, None) => {}
            (Some((head_id, head_hash)), Some(last))
                if head_id == last.id && Some(head_hash.as_str()) == last.row_hash.as_deref() => {}
            (Some((head_id, _)), Some(last)) if head_id > last.id => {
                return Ok(broken(
                    last.id + 1,
                    format!("the rows after row {} were removed", last.id),
                ))
            }
            (Some((head_id, _)), None) => {
                return Ok(broken(head_id, "every row was removed".into()));
            }
            (_, Some(last)) => {
                return Ok(broken(
                    last.id,
                    format!("row {} is not the newest row the log recorded", last.id),
                ))
            }
        }
        Ok(AuditVerdict {
            rows: rows.len(),
            broken: None,
        })
    }
}

/// What [`Store::verify_audit`] found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerdict {
    /// Rows in the log.
    pub rows: usize,
    /// The first row that does not fit the chain; `None`: the log is intact.
    pub broken: Option<AuditBreak>,
}

/// The first place the audit chain is broken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditBreak {
    /// The row id.
    pub row_id: i64,
    /// What is wrong, in words.
    pub problem: String,
}

/// The hash the first row follows.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A row as the chain sees it.
#[derive(sqlx::FromRow)]
struct ChainRow {
    id: i64,
    // The time exactly as stored: a re-formatted time would not hash alike.
    at: String,
    actor: String,
    action: String,
    version: Option<String>,
    digest: Option<String>,
    outcome: Option<String>,
    detail: Option<String>,
    prev_hash: Option<String>,
    row_hash: Option<String>,
}

impl ChainRow {
    fn content(&self) -> String {
        serde_json::json!([
            self.id,
            self.at,
            self.actor,
            self.action,
            self.version,
            self.digest,
            self.outcome,
            self.detail
        ])
        .to_string()
    }
}

fn row_hash(prev: &str, content: &str) -> String {
    hex::encode(
        Sha256::new()
            .chain_update(prev.as_bytes())
            .chain_update(b"\n")
            .chain_update(content.as_bytes())
            .finalize(),
    )
}

/// The hash the next row follows: the newest row's, or the genesis hash.
async fn head_hash(tx: &mut sqlx::SqliteConnection) -> Result<String> {
    let head: Option<String> = sqlx::query_scalar("SELECT row_hash FROM audit_head WHERE id = 1")
        .fetch_optional(&mut *tx)
        .await?;
    Ok(head.unwrap_or_else(|| GENESIS.to_owned()))
}

async fn seal(tx: &mut sqlx::SqliteConnection, id: i64, prev: &str, hash: &str) -> Result<()> {
    sqlx::query("UPDATE audit_log SET prev_hash = ?, row_hash = ? WHERE id = ?")
        .bind(prev)
        .bind(hash)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO audit_head (id, row_id, row_hash) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET row_id = excluded.row_id, row_hash = excluded.row_hash",
    )
    .bind(id)
    .bind(hash)
    .execute(&mut *tx)
    .await?;
    Ok(())
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
    // Chained in the same transaction: writers are serialised by SQLite, so the head read here
    // is the row just before this one.
    let row: ChainRow = sqlx::query_as(
        "SELECT id, at, actor, action, version, digest, outcome, detail, prev_hash, row_hash
         FROM audit_log WHERE id = ?",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    let prev = head_hash(tx).await?;
    seal(tx, id, &prev, &row_hash(&prev, &row.content())).await?;
    Ok(id)
}
