//! The audit log: append-only (triggers in the schema refuse updates and deletes), so it can
//! say exactly who decided what, on which version digest, when, with which outcome.
//!
//! Every row is sealed (issue 35, `seal.rs`): an HMAC-SHA256, with the mirror's key from the
//! keyring, over the previous row's MAC and all its columns (the references as written), and the
//! sealed head in `record_seal` names the newest row. `verify.rs` checks them. The issue-26 hash
//! chain (`prev_hash`, `row_hash`) is kept for the rows written before sealing: the first sealing
//! reports whether it held.

use sha2::{Digest, Sha256};

use super::seal::{
    audit_row_mac, head_seal, refs_of, KeyState, RecordKey, SealedRow, SEALED_COLUMNS,
};
use super::verify::AuditBreak;
use super::{format_time, Store};
use crate::error::{Error, Result};
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
        let id = append_audit_in(&mut tx, &self.keys, entry).await?;
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

    /// Chain the rows written before the log was hash-chained (issue 26), as the first open
    /// with a key does before sealing them: the hash chain then says whether they were intact.
    pub(crate) async fn hash_chain_legacy_in(tx: &mut sqlx::SqliteConnection) -> Result<()> {
        let unchained: Vec<ChainRow> = sqlx::query_as(
            "SELECT id, at, actor, action, version, digest, outcome, detail, prev_hash, row_hash
             FROM audit_log WHERE row_hash IS NULL AND mac IS NULL ORDER BY id",
        )
        .fetch_all(&mut *tx)
        .await?;
        for row in unchained {
            let prev = head_hash(tx).await?;
            let hash = row_hash(&prev, &row.content());
            seal(tx, row.id, &prev, &hash).await?;
        }
        Ok(())
    }
}

/// The issue-26 hash chain of the rows written before the record was sealed: `None` when it
/// holds, else the first row that does not fit and why. (Its head moves no more once rows are
/// sealed: the sealed head in `record_seal` takes over.)
pub(crate) async fn legacy_chain_break(
    tx: &mut sqlx::SqliteConnection,
) -> Result<Option<AuditBreak>> {
    let rows: Vec<ChainRow> = sqlx::query_as(
        "SELECT id, at, actor, action, version, digest, outcome, detail, prev_hash, row_hash
         FROM audit_log ORDER BY id",
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut expected_prev = GENESIS.to_owned();
    for row in &rows {
        let hash = row_hash(&expected_prev, &row.content());
        if row.prev_hash.as_deref() != Some(expected_prev.as_str())
            || row.row_hash.as_deref() != Some(hash.as_str())
        {
            return Ok(Some(AuditBreak {
                row_id: row.id,
                problem: format!("row {} did not fit the hash chain", row.id),
            }));
        }
        expected_prev = hash;
    }
    let head: Option<i64> = sqlx::query_scalar("SELECT row_id FROM audit_head WHERE id = 1")
        .fetch_optional(&mut *tx)
        .await?;
    match (head, rows.last()) {
        (Some(head), Some(last)) if head != last.id => Ok(Some(AuditBreak {
            row_id: head.min(last.id),
            problem: format!("the hash chain's head named row {head}"),
        })),
        (Some(head), None) => Ok(Some(AuditBreak {
            row_id: head,
            problem: "every row was removed".into(),
        })),
        _ => Ok(None),
    }
}

/// The hash the first row follows.
use super::seal::GENESIS;

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
    keys: &KeyState,
    entry: &NewAuditEntry,
) -> Result<i64> {
    // Nothing is written that cannot be sealed: a mirror without its key is read-only.
    let key = keys
        .key()
        .map_err(|why| Error::refused(format!("record {:?}", entry.action), why))?;
    let refs = refs_of(entry.item_id, entry.decision_id, entry.view_id);
    let id = sqlx::query_scalar(
        "INSERT INTO audit_log (at, actor, item_id, decision_id, action, version, digest, outcome, detail, view_id, refs)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
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
    .bind(&refs)
    .fetch_one(&mut *tx)
    .await?;
    seal_row_in(tx, key, id).await?;
    Ok(id)
}

/// Seal row `id` after the sealed head, and move the head to it. Writers are serialised by
/// SQLite (every writer holds the write lock), so the head read here is the row before it.
pub(crate) async fn seal_row_in(
    tx: &mut sqlx::SqliteConnection,
    key: &RecordKey,
    id: i64,
) -> Result<()> {
    let sql = format!("SELECT {SEALED_COLUMNS} FROM audit_log WHERE id = ?");
    let row: SealedRow = sqlx::query_as(&sql).bind(id).fetch_one(&mut *tx).await?;
    let prev: Option<Option<String>> =
        sqlx::query_scalar("SELECT head_mac FROM record_seal WHERE id = 1")
            .fetch_optional(&mut *tx)
            .await?;
    let prev = prev.flatten().unwrap_or_else(|| GENESIS.to_owned());
    let mac = audit_row_mac(key, &prev, &row);
    sqlx::query("UPDATE audit_log SET prev_mac = ?, mac = ? WHERE id = ?")
        .bind(&prev)
        .bind(&mac)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE record_seal SET head_row = ?, head_mac = ?, head_seal = ? WHERE id = 1")
        .bind(id)
        .bind(&mac)
        .bind(head_seal(key, id, &mac))
        .execute(&mut *tx)
        .await?;
    Ok(())
}
