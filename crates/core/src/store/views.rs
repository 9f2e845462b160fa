//! View events: which version of a draft was displayed to whom, and which of its renderings.
//! "Shown" means the same thing for the desktop app (the mail frame of that version loaded)
//! and the CLI (`show` printed it), and an approval binds only to a version its actor was shown.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{format_time, Store};
use crate::decide::Shown;
use crate::error::{Error, Result};

/// Which rendering of a version was displayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ShownPart {
    /// The HTML alternative: the desktop's mail frame, or the HTML's visible text in the CLI.
    Html,
    /// The plain-text alternative (what a phone preview, a screen reader or an assistant reads).
    Text,
}

/// One display of one version to one actor (a row of `view_events`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct ViewEvent {
    /// Row id: an approval's audit row names it.
    pub id: i64,
    /// The item.
    pub item_id: i64,
    /// The version displayed.
    pub version: String,
    /// sha256 of that version's bytes.
    pub digest: String,
    /// Who it was displayed to ("owner via desktop", "owner via cli").
    pub actor: String,
    /// Which rendering.
    pub part: ShownPart,
    /// When.
    pub viewed_at: DateTime<Utc>,
}

impl Store {
    /// Record that `shown` was displayed to `actor` as `part`. Refused when the mirror holds no
    /// such version with that digest: a view of bytes Countersign does not have proves nothing.
    pub async fn record_view(
        &self,
        shown: &Shown,
        actor: &str,
        part: ShownPart,
    ) -> Result<ViewEvent> {
        let mut tx = self.write_tx().await?;
        let known: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM draft_versions WHERE item_id = ? AND version = ? AND sha256 = ?",
        )
        .bind(shown.id)
        .bind(&shown.version)
        .bind(&shown.digest)
        .fetch_optional(&mut *tx)
        .await?;
        if known.is_none() {
            return Err(Error::NotFound {
                what: "the version shown of",
                id: super::draft_words::draft_words_in(&mut tx, shown.id).await?,
            });
        }
        let event = sqlx::query_as(
            "INSERT INTO view_events (item_id, version, digest, actor, part, viewed_at)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
        )
        .bind(shown.id)
        .bind(&shown.version)
        .bind(&shown.digest)
        .bind(actor)
        .bind(part)
        .bind(format_time(Utc::now()))
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(event)
    }

    /// The last version of `item_id` displayed to `actor`, if any.
    pub async fn last_view(&self, item_id: i64, actor: &str) -> Result<Option<ViewEvent>> {
        Ok(sqlx::query_as(
            "SELECT * FROM view_events WHERE item_id = ? AND actor = ? ORDER BY id DESC LIMIT 1",
        )
        .bind(item_id)
        .bind(actor)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The renderings of `shown` displayed to `actor` so far.
    pub async fn parts_shown(&self, shown: &Shown, actor: &str) -> Result<Vec<ShownPart>> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT part FROM view_events
             WHERE item_id = ? AND version = ? AND digest = ? AND actor = ? ORDER BY part",
        )
        .bind(shown.id)
        .bind(&shown.version)
        .bind(&shown.digest)
        .bind(actor)
        .fetch_all(self.pool())
        .await?)
    }
}

/// The newest view of `shown` by `actor`, inside the transaction that writes a decision on it;
/// [`Error::NotShown`] when there is none.
pub(crate) async fn view_of_in(
    tx: &mut sqlx::SqliteConnection,
    action: &str,
    shown: &Shown,
    actor: &str,
) -> Result<i64> {
    let id: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM view_events
         WHERE item_id = ? AND version = ? AND digest = ? AND actor = ? ORDER BY id DESC LIMIT 1",
    )
    .bind(shown.id)
    .bind(&shown.version)
    .bind(&shown.digest)
    .bind(actor)
    .fetch_optional(&mut *tx)
    .await?;
    id.ok_or_else(|| Error::NotShown {
        action: action.to_string(),
        version: shown.version.clone(),
    })
}
