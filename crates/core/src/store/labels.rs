//! The mirror of Gmail labels (migration `20261205090000_labels`): each account's labels as
//! `labels.list` gave them last, and the label ids each draft's current message carries.
//!
//! A label is written by whoever can write the mailbox, the agent included (it may label its
//! own drafts): rules use it as a scope, never as a credential, so nothing here is sealed.

use serde::Serialize;

use super::{format_time, Store};
use crate::error::Result;

/// One label of a Gmail account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MirroredLabel {
    /// The account.
    pub account_id: String,
    /// Gmail's stable id (`Label_12`; `DRAFT` for a system label).
    pub id: String,
    /// The name the owner sees in Gmail.
    pub name: String,
    /// Whether the owner (or a client) made it; system labels (`DRAFT`, `INBOX`) are Gmail's
    /// own and never shown as a draft's labels.
    pub user: bool,
}

impl Store {
    /// Replace `account_id`'s labels with `labels` (a fresh `labels.list`).
    pub async fn replace_labels(&self, account_id: &str, labels: &[MirroredLabel]) -> Result<()> {
        let mut tx = self.write_tx().await?;
        sqlx::query("DELETE FROM gmail_labels WHERE account_id = ?")
            .bind(account_id)
            .execute(&mut *tx)
            .await?;
        for label in labels {
            sqlx::query(
                "INSERT OR REPLACE INTO gmail_labels (account_id, label_id, name, kind)
                 VALUES (?, ?, ?, ?)",
            )
            .bind(account_id)
            .bind(&label.id)
            .bind(&label.name)
            .bind(if label.user { "user" } else { "system" })
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The labels mirrored for every account (`None`) or one, by account then name.
    pub async fn labels(&self, account_id: Option<&str>) -> Result<Vec<MirroredLabel>> {
        let rows: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT account_id, label_id, name, kind FROM gmail_labels
             WHERE ?1 IS NULL OR account_id = ?1 ORDER BY account_id, name COLLATE NOCASE",
        )
        .bind(account_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(account_id, id, name, kind)| MirroredLabel {
                account_id,
                id,
                name,
                user: kind == "user",
            })
            .collect())
    }

    /// The label ids the current version of `item_id` carries, sorted.
    pub async fn item_labels(&self, item_id: i64) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT label_id FROM item_labels WHERE item_id = ? ORDER BY label_id",
        )
        .bind(item_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// The user labels (names) of `item_id`, as the queue row shows them: system labels and
    /// ids not (yet) in the mirrored list are left out.
    pub async fn item_user_label_names(&self, item_id: i64) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT g.name FROM item_labels l
             JOIN review_items i ON i.id = l.item_id
             JOIN gmail_labels g ON g.account_id = i.account_id AND g.label_id = l.label_id
             WHERE l.item_id = ? AND g.kind = 'user' ORDER BY g.name COLLATE NOCASE",
        )
        .bind(item_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Set the label ids of `item_id`'s current version; whether they changed.
    pub async fn set_item_labels(&self, item_id: i64, label_ids: &[String]) -> Result<bool> {
        let mut wanted: Vec<String> = label_ids.to_vec();
        wanted.sort();
        wanted.dedup();
        let mut tx = self.write_tx().await?;
        let before: Vec<String> = sqlx::query_scalar(
            "SELECT label_id FROM item_labels WHERE item_id = ? ORDER BY label_id",
        )
        .bind(item_id)
        .fetch_all(&mut *tx)
        .await?;
        if before == wanted {
            return Ok(false);
        }
        sqlx::query("DELETE FROM item_labels WHERE item_id = ?")
            .bind(item_id)
            .execute(&mut *tx)
            .await?;
        for label in &wanted {
            sqlx::query("INSERT INTO item_labels (item_id, label_id) VALUES (?, ?)")
                .bind(item_id)
                .bind(label)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// The Gmail draft of `account_id` whose current version is message `message_id`, if any:
    /// where a history record about that message lands.
    pub async fn item_at_gmail_message(
        &self,
        account_id: &str,
        message_id: &str,
    ) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM review_items
             WHERE account_id = ? AND source = 'gmail' AND version = ?",
        )
        .bind(account_id)
        .bind(message_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Label ids some draft of `account_id` carries that the mirrored list does not know (a
    /// label made since the last `labels.list`).
    pub async fn unknown_item_labels(&self, account_id: &str) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT l.label_id FROM item_labels l
             JOIN review_items i ON i.id = l.item_id
             WHERE i.account_id = ?1 AND NOT EXISTS (SELECT 1 FROM gmail_labels g
                 WHERE g.account_id = ?1 AND g.label_id = l.label_id)",
        )
        .bind(account_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Let the rules judge `item_id`'s current version again now (its labels changed): every
    /// verdict recorded on that version is due for another look, as a hold that has passed.
    pub async fn rejudge_now(&self, item_id: i64) -> Result<()> {
        sqlx::query(
            "UPDATE rule_evaluations SET retry_at = ?
             WHERE item_id = ? AND version = (SELECT version FROM review_items WHERE id = ?)",
        )
        .bind(format_time(chrono::Utc::now()))
        .bind(item_id)
        .bind(item_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Who made the live (queued, not yet claimed) decision on `item_id`, when a rule did:
    /// `rule:<id>@<version>`.
    pub async fn queued_rule_decider(&self, item_id: i64) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(
            "SELECT decided_by FROM decisions
             WHERE item_id = ? AND state = 'queued' AND decided_by LIKE 'rule:%'",
        )
        .bind(item_id)
        .fetch_optional(self.pool())
        .await?)
    }
}
