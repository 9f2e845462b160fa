//! The versions of an item: every one ever seen, with its bytes.

use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row;

use super::items::DraftContent;
use super::Store;
use crate::error::{Error, Result};

/// One version of an item (a row of `draft_versions`).
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct DraftVersion {
    /// Row id.
    pub id: i64,
    /// The item.
    pub item_id: i64,
    /// Gmail message id / muster updatedAt.
    pub version: String,
    /// The bytes.
    #[sqlx(flatten)]
    pub content: DraftContent,
    /// Hex sha256 of the bytes.
    pub sha256: String,
    /// When Countersign first saw it.
    pub first_seen_at: DateTime<Utc>,
}

/// The bytes are read as the kind they were stored as (`content_kind`): a muster reply is
/// text, and text that is no longer UTF-8 is a damaged mirror, not a message to show.
impl<'r> sqlx::FromRow<'r, SqliteRow> for DraftContent {
    fn from_row(row: &'r SqliteRow) -> sqlx::Result<Self> {
        let bytes: Vec<u8> = row.try_get("content")?;
        match row.try_get::<&str, _>("content_kind")? {
            "raw" => Ok(DraftContent::Raw(bytes)),
            "text" => String::from_utf8(bytes)
                .map(DraftContent::Text)
                .map_err(|e| sqlx::Error::ColumnDecode {
                    index: "\"content\"".into(),
                    source: Box::new(e),
                }),
            other => Err(sqlx::Error::ColumnDecode {
                index: "\"content_kind\"".into(),
                source: format!("unknown content kind {other:?}").into(),
            }),
        }
    }
}

impl Store {
    /// Every version of an item, oldest first.
    pub async fn versions(&self, item_id: i64) -> Result<Vec<DraftVersion>> {
        self.rows_of_item("draft_versions", item_id).await
    }

    /// Keep `content` as version `version` of `item_id` without making it the item's current
    /// version (a version Countersign wrote that was replaced before it could be read back);
    /// nothing when that version is kept already. Whether it was new.
    pub async fn keep_version(
        &self,
        item_id: i64,
        version: &str,
        content: &DraftContent,
    ) -> Result<bool> {
        let inserted = sqlx::query(
            "INSERT INTO draft_versions (item_id, version, content_kind, content, sha256, first_seen_at)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (item_id, version) DO NOTHING",
        )
        .bind(item_id)
        .bind(version)
        .bind(content.kind())
        .bind(content.bytes())
        .bind(content.digest())
        .bind(super::format_time(Utc::now()))
        .execute(self.pool())
        .await?;
        Ok(inserted.rows_affected() == 1)
    }

    /// Gmail's `internalDate` of `version` of item `item_id` (epoch ms, Google's clock), when
    /// the sync saw it.
    pub async fn version_gmail_date(&self, item_id: i64, version: &str) -> Result<Option<i64>> {
        let date: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT gmail_internal_date FROM draft_versions WHERE item_id = ? AND version = ?",
        )
        .bind(item_id)
        .bind(version)
        .fetch_optional(&self.pool)
        .await?;
        Ok(date.flatten())
    }

    /// One version of an item.
    pub async fn version(&self, item_id: i64, version: &str) -> Result<DraftVersion> {
        let found =
            sqlx::query_as("SELECT * FROM draft_versions WHERE item_id = ? AND version = ?")
                .bind(item_id)
                .bind(version)
                .fetch_optional(self.pool())
                .await?;
        match found {
            Some(version) => Ok(version),
            None => Err(Error::NotFound {
                what: "that version of",
                id: self.draft_words(item_id).await?,
            }),
        }
    }
}
