//! The Gmail conversations reply drafts belong to: their received and sent messages (From, Date,
//! snippet), read again with each new version of a reply, and the raw bytes of the messages
//! drafts answer.

use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::Store;
use crate::error::Result;

/// One message of a thread, as the review lists it (a row of `thread_messages`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ThreadMessage {
    /// Gmail's message id.
    pub gmail_id: String,
    /// The RFC 5322 Message-ID, without angle brackets.
    pub rfc822_message_id: Option<String>,
    /// The From header as written.
    #[sqlx(rename = "from_addr")]
    pub from: String,
    /// The Subject header.
    pub subject: String,
    /// The Date header as written.
    pub date: Option<String>,
    /// Gmail's short plain-text excerpt.
    pub snippet: String,
    /// Its bytes are in the mirror (it is the message a draft answers).
    #[serde(skip)]
    pub has_raw: bool,
}

impl Store {
    /// Keep a thread's messages (oldest first), in place of those kept before. Messages already
    /// kept keep their bytes.
    pub async fn save_thread(
        &self,
        account_id: &str,
        thread_id: &str,
        messages: &[ThreadMessage],
    ) -> Result<()> {
        let mut tx = self.write_tx().await?;
        // A message that left the thread (deleted, trashed, a draft sent since) is forgotten:
        // the review lists the conversation as it is now.
        let kept: Vec<&str> = messages.iter().map(|m| m.gmail_id.as_str()).collect();
        let known: Vec<(String,)> = sqlx::query_as(
            "SELECT gmail_id FROM thread_messages WHERE account_id = ? AND thread_id = ?",
        )
        .bind(account_id)
        .bind(thread_id)
        .fetch_all(&mut *tx)
        .await?;
        for (gone,) in known.iter().filter(|(id,)| !kept.contains(&id.as_str())) {
            sqlx::query(
                "DELETE FROM thread_messages WHERE account_id = ? AND thread_id = ? \
                 AND gmail_id = ?",
            )
            .bind(account_id)
            .bind(thread_id)
            .bind(gone)
            .execute(&mut *tx)
            .await?;
        }
        for (position, m) in messages.iter().enumerate() {
            sqlx::query(
                "INSERT INTO thread_messages (account_id, thread_id, gmail_id, position,
                     rfc822_message_id, from_addr, subject, date, snippet)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (account_id, thread_id, gmail_id) DO UPDATE SET
                     position = excluded.position",
            )
            .bind(account_id)
            .bind(thread_id)
            .bind(&m.gmail_id)
            .bind(position as i64)
            .bind(&m.rfc822_message_id)
            .bind(&m.from)
            .bind(&m.subject)
            .bind(&m.date)
            .bind(&m.snippet)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A thread's kept messages, oldest first.
    pub async fn thread_messages(
        &self,
        account_id: &str,
        thread_id: &str,
    ) -> Result<Vec<ThreadMessage>> {
        Ok(sqlx::query_as(
            "SELECT gmail_id, rfc822_message_id, from_addr, subject, date, snippet,
                    raw IS NOT NULL AS has_raw
             FROM thread_messages WHERE account_id = ? AND thread_id = ? ORDER BY position",
        )
        .bind(account_id)
        .bind(thread_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Replace what item `item_id` answers (its conversation changed while its version did
    /// not: the parent trashed or deleted, a new message in the thread).
    pub async fn set_answers(&self, item_id: i64, answers_json: Option<&str>) -> Result<()> {
        sqlx::query("UPDATE review_items SET answers_json = ? WHERE id = ?")
            .bind(answers_json)
            .bind(item_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Keep the bytes of a thread message (the one a draft answers).
    pub async fn save_thread_message_raw(
        &self,
        account_id: &str,
        gmail_id: &str,
        raw: &[u8],
    ) -> Result<()> {
        sqlx::query("UPDATE thread_messages SET raw = ? WHERE account_id = ? AND gmail_id = ?")
            .bind(raw)
            .bind(account_id)
            .bind(gmail_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The kept bytes of a thread message, if any.
    pub async fn thread_message_raw(
        &self,
        account_id: &str,
        gmail_id: &str,
    ) -> Result<Option<Vec<u8>>> {
        let row = sqlx::query(
            "SELECT raw FROM thread_messages WHERE account_id = ? AND gmail_id = ? \
             AND raw IS NOT NULL LIMIT 1",
        )
        .bind(account_id)
        .bind(gmail_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| r.try_get("raw")).transpose()?)
    }
}
