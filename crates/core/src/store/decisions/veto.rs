//! Owner vetoes: a version the owner took back or refused is final for every rule.

use chrono::Utc;

use crate::error::Result;
use crate::store::format_time;

/// Why a rule may not decide a version the owner took back or refused.
pub(super) const RULES_VETOED: &str =
    "you took this version back or refused it, so no rule decides it again";

/// Record that the owner took `version` of `item_id` back (`undo`) or refused it (`reject`):
/// final for every rule until a new version arrives.
pub(super) async fn veto_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    version: &str,
    digest: &str,
    kind: &str,
    actor: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT OR IGNORE INTO owner_vetoes (item_id, version, digest, kind, actor, created_at)
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(item_id)
    .bind(version)
    .bind(digest)
    .bind(kind)
    .bind(actor)
    .bind(format_time(Utc::now()))
    .execute(&mut *tx)
    .await?;
    Ok(())
}

pub(super) async fn vetoed_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    version: &str,
) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM owner_vetoes WHERE item_id = ? AND version = ?)",
    )
    .bind(item_id)
    .bind(version)
    .fetch_one(&mut *tx)
    .await?)
}
