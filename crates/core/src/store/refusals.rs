//! Refusals the owner must hear about, recorded once each however often a sync sees them; the
//! desktop app turns the unnotified ones into notifications.

use super::{format_time, Store};
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What kind of refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RefusalKind {
    /// The plugin reported `ok: false`.
    SendFailed,
    /// The plugin's check refused the reply.
    CheckRefused,
    /// Google refused the send.
    SendRefused,
    /// The draft changed since it was reviewed, or was decided elsewhere.
    Conflict,
}

impl RefusalKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One recorded refusal (a row of `refusals`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    /// Row id.
    pub id: i64,
    /// The item refused.
    pub item_id: i64,
    /// What kind.
    pub kind: RefusalKind,
    /// The reason, in the plugin's or Google's words.
    pub reason: String,
    /// When Countersign first saw it.
    pub recorded_at: DateTime<Utc>,
    /// When the owner was told.
    pub notified_at: Option<DateTime<Utc>>,
}

impl Store {
    /// Record a refusal once: `dedup_key` names it (e.g. the draft id and the version it
    /// happened on). Returns the new refusal, or `None` when it was already recorded.
    pub async fn record_refusal(
        &self,
        item_id: i64,
        kind: RefusalKind,
        reason: &str,
        dedup_key: &str,
    ) -> Result<Option<Refusal>> {
        let mut conn = self.pool().acquire().await?;
        record_refusal_in(&mut conn, item_id, kind, reason, dedup_key).await
    }

    /// Refusals the owner has not been told about yet, oldest first.
    pub async fn unnotified_refusals(&self) -> Result<Vec<Refusal>> {
        Ok(
            sqlx::query_as("SELECT * FROM refusals WHERE notified_at IS NULL ORDER BY id")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// Every refusal of an item, oldest first.
    pub async fn refusals_for_item(&self, item_id: i64) -> Result<Vec<Refusal>> {
        self.rows_of_item("refusals", item_id).await
    }

    /// Mark a refusal as told (or as not needing telling: the owner was looking at it).
    /// Returns whether this call marked it — only that caller may notify, so two tasks that
    /// both saw it unnotified cannot both tell the owner.
    pub async fn mark_refusal_notified(&self, id: i64) -> Result<bool> {
        let done =
            sqlx::query("UPDATE refusals SET notified_at = ? WHERE id = ? AND notified_at IS NULL")
                .bind(format_time(Utc::now()))
                .bind(id)
                .execute(self.pool())
                .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// [`Store::record_refusal`] on the caller's connection (inside its transaction).
pub(super) async fn record_refusal_in(
    conn: &mut sqlx::SqliteConnection,
    item_id: i64,
    kind: RefusalKind,
    reason: &str,
    dedup_key: &str,
) -> Result<Option<Refusal>> {
    Ok(sqlx::query_as(
        "INSERT INTO refusals (item_id, kind, reason, dedup_key, recorded_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING RETURNING *",
    )
    .bind(item_id)
    .bind(kind)
    .bind(reason)
    .bind(dedup_key)
    .bind(format_time(Utc::now()))
    .fetch_optional(&mut *conn)
    .await?)
}
