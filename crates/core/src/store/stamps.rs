//! muster versions are stamps (`updatedAt`), not digests of the text: when the same stamp comes
//! back with other text, the stamp no longer names one text. muster's `decide` matches the
//! stamp only, so a decision bound to it could apply to text the owner never saw. The item
//! becomes a conflict, decisions on that version are refused, and the audit says so, until a
//! new stamp arrives.

use chrono::Utc;

use super::audit::{append_audit_in, NewAuditEntry};
use super::{format_time, Store};
use crate::error::{Error, Result};

/// Why a version whose stamp came back with other text cannot be decided.
pub fn stamp_conflict_reason(stamp: &str) -> String {
    format!(
        "the draft's text changed without a new version stamp (updatedAt {stamp} stayed the \
         same), so a decision could apply to text you were never shown; wait for the agent's \
         next update or decide it in muster"
    )
}

/// Note that `version` of `item_id` was seen with the text of digest `sha256`: when the stored
/// text under that stamp is another, mark the version restamped, make the item a conflict
/// (unless it was decided already), turn its queued decisions into conflicts (none of them has
/// left) and audit it once per new text. Whether it was a new stamp conflict.
pub(super) async fn note_restamped_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &super::seal::KeyState,
    item_id: i64,
    version: &str,
    sha256: &str,
) -> Result<bool> {
    let stored: Option<(String, Option<String>)> = sqlx::query_as(
        "SELECT sha256, restamped_sha256 FROM draft_versions WHERE item_id = ? AND version = ?",
    )
    .bind(item_id)
    .bind(version)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((first, restamped)) = stored else {
        return Ok(false);
    };
    if first == sha256 || restamped.as_deref() == Some(sha256) {
        return Ok(false);
    }
    let reason = stamp_conflict_reason(version);
    let now = format_time(Utc::now());
    sqlx::query("UPDATE draft_versions SET restamped_sha256 = ? WHERE item_id = ? AND version = ?")
        .bind(sha256)
        .bind(item_id)
        .bind(version)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE review_items SET state = 'conflict', state_reason = ?, updated_at = ?
         WHERE id = ? AND version = ? AND state IN ('pending', 'awaiting_check', 'queued', 'conflict')",
    )
    .bind(&reason)
    .bind(&now)
    .bind(item_id)
    .bind(version)
    .execute(&mut *tx)
    .await?;
    // A decision still queued has not left: it must not, muster would match the stamp.
    sqlx::query(
        "UPDATE decisions SET state = 'conflict', outcome_detail = ?, finished_at = ?
         WHERE item_id = ? AND state = 'queued'",
    )
    .bind(&reason)
    .bind(&now)
    .bind(item_id)
    .execute(&mut *tx)
    .await?;
    append_audit_in(
        &mut *tx,
        keys,
        &NewAuditEntry {
            actor: "sync".into(),
            item_id: Some(item_id),
            decision_id: None,
            action: "stamp conflict".into(),
            version: Some(version.to_string()),
            digest: Some(sha256.to_string()),
            outcome: Some("conflict".into()),
            detail: Some(format!(
                "{reason} (first text sha256 {first}, now sha256 {sha256})"
            )),
            view_id: None,
        },
    )
    .await?;
    Ok(true)
}

/// Refuse `action` on `version` of `item_id` when its stamp came back with other text.
pub(super) async fn refuse_restamped_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    version: &str,
    action: &str,
) -> Result<()> {
    let restamped: Option<Option<String>> = sqlx::query_scalar(
        "SELECT restamped_sha256 FROM draft_versions WHERE item_id = ? AND version = ?",
    )
    .bind(item_id)
    .bind(version)
    .fetch_optional(&mut *tx)
    .await?;
    if restamped.flatten().is_some() {
        return Err(Error::refused(action, stamp_conflict_reason(version)));
    }
    Ok(())
}

impl Store {
    /// Whether `version` of `item_id` came back with other text under the same stamp (a muster
    /// version no decision may bind to).
    pub async fn version_restamped(&self, item_id: i64, version: &str) -> Result<bool> {
        let restamped: Option<Option<String>> = sqlx::query_scalar(
            "SELECT restamped_sha256 FROM draft_versions WHERE item_id = ? AND version = ?",
        )
        .bind(item_id)
        .bind(version)
        .fetch_optional(self.pool())
        .await?;
        Ok(restamped.flatten().is_some())
    }
}
