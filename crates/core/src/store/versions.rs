//! The versions of an item: every one ever seen, with its bytes.

use super::Found;
use chrono::{DateTime, Utc};
use sqlx::Row;

use super::items::DraftContent;
use super::{parse_time, Store};
use crate::error::{Error, Result};

/// One version of an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftVersion {
    /// Row id.
    pub id: i64,
    /// The item.
    pub item_id: i64,
    /// Gmail message id / muster updatedAt.
    pub version: String,
    /// The bytes.
    pub content: DraftContent,
    /// Hex sha256 of the bytes.
    pub sha256: String,
    /// When Countersign first saw it.
    pub first_seen_at: DateTime<Utc>,
}

impl Store {
    /// Every version of an item, oldest first.
    pub async fn versions(&self, item_id: i64) -> Result<Vec<DraftVersion>> {
        let rows = sqlx::query("SELECT * FROM draft_versions WHERE item_id = ? ORDER BY id")
            .bind(item_id)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(version_from_row).collect()
    }

    /// One version of an item.
    pub async fn version(&self, item_id: i64, version: &str) -> Result<DraftVersion> {
        let row = sqlx::query("SELECT * FROM draft_versions WHERE item_id = ? AND version = ?")
            .bind(item_id)
            .bind(version)
            .fetch_optional(self.pool())
            .await?
            .found("version", format!("{version} of item {item_id}"))?;
        version_from_row(&row)
    }
}

fn version_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<DraftVersion> {
    let kind: &str = row.try_get("content_kind")?;
    let bytes: Vec<u8> = row.try_get("content")?;
    let content = match kind {
        "raw" => DraftContent::Raw(bytes),
        "text" => DraftContent::Text(
            String::from_utf8(bytes)
                .map_err(|_| Error::Corrupt("text version is not UTF-8".into()))?,
        ),
        other => return Err(Error::Corrupt(format!("unknown content kind {other:?}"))),
    };
    Ok(DraftVersion {
        id: row.try_get("id")?,
        item_id: row.try_get("item_id")?,
        version: row.try_get("version")?,
        content,
        sha256: row.try_get("sha256")?,
        first_seen_at: parse_time(row.try_get::<&str, _>("first_seen_at")?)?,
    })
}
