//! Per-account sync cursors: Gmail's history id, the last sync, and whether the service
//! answered.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{format_time, Store};
use crate::error::Result;
use crate::reachability::Reach;

/// Where an account's sync stands (a row of `sync_cursors`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SyncCursor {
    /// The account.
    pub account_id: String,
    /// Gmail's history id after the last sync.
    pub history_id: Option<String>,
    /// Last sync that worked.
    pub last_sync_at: Option<DateTime<Utc>>,
    /// Last full sync.
    pub last_full_at: Option<DateTime<Utc>>,
    /// Last time `drafts.list` reconciled every draft of the account (Gmail).
    pub last_listed_at: Option<DateTime<Utc>>,
    /// What went wrong last time, if the last sync failed.
    pub last_error: Option<String>,
    /// Whether the service answered last time.
    pub online: bool,
    /// How a running app gets the account's changes (muster only; `None`: no app follows it).
    pub delivery: Option<Delivery>,
}

/// How a followed muster account's changes reach the mirror.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::Type)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
#[sqlx(rename_all = "lowercase")]
pub enum Delivery {
    /// muster's event stream delivers: a change shows within a second.
    Live,
    /// The stream does not deliver (a proxy breaks it, or it is reconnecting): the API is polled.
    Polling,
}

impl SyncCursor {
    /// The account's status in one word, as the status bar and `countersign status` show it:
    /// "offline" (the service does not answer), else "live" or "polling" for a followed muster
    /// account, else "online".
    pub fn status_word(&self) -> &'static str {
        match (self.online, self.delivery) {
            (false, _) => "offline",
            (true, Some(Delivery::Live)) => "live",
            (true, Some(Delivery::Polling)) => "polling",
            (true, None) => "online",
        }
    }
}

impl Store {
    /// The cursor of an account (an empty one if it never synced).
    pub async fn sync_cursor(&self, account_id: &str) -> Result<SyncCursor> {
        let cursor = sqlx::query_as("SELECT * FROM sync_cursors WHERE account_id = ?")
            .bind(account_id)
            .fetch_optional(self.pool())
            .await?;
        Ok(cursor.unwrap_or_else(|| SyncCursor {
            account_id: account_id.to_string(),
            online: true,
            ..SyncCursor::default()
        }))
    }

    /// Record a sync that worked.
    pub async fn record_sync_success(
        &self,
        account_id: &str,
        history_id: Option<&str>,
        full: bool,
    ) -> Result<()> {
        let now = format_time(Utc::now());
        sqlx::query(
            "INSERT INTO sync_cursors (account_id, history_id, last_sync_at, last_full_at, last_error, online)
             VALUES (?, ?, ?, ?, NULL, 1)
             ON CONFLICT (account_id) DO UPDATE SET
                history_id = COALESCE(excluded.history_id, history_id),
                last_sync_at = excluded.last_sync_at,
                last_full_at = COALESCE(excluded.last_full_at, last_full_at),
                last_error = NULL, online = 1",
        )
        .bind(account_id)
        .bind(history_id)
        .bind(&now)
        .bind(full.then(|| now.clone()))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Record that every draft of the account was just reconciled against `drafts.list`, at
    /// `at` (tests and benchmarks may date it back to make the next listing due).
    pub async fn record_listing(&self, account_id: &str, at: DateTime<Utc>) -> Result<()> {
        sqlx::query(
            "INSERT INTO sync_cursors (account_id, last_listed_at, online) VALUES (?, ?, 1)
             ON CONFLICT (account_id) DO UPDATE SET last_listed_at = excluded.last_listed_at",
        )
        .bind(account_id)
        .bind(format_time(at))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Record how a running app gets the account's changes now (`None`: it stopped following).
    pub async fn record_delivery(
        &self,
        account_id: &str,
        delivery: Option<Delivery>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO sync_cursors (account_id, online, delivery) VALUES (?, 1, ?)
             ON CONFLICT (account_id) DO UPDATE SET delivery = excluded.delivery",
        )
        .bind(account_id)
        .bind(delivery)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Record what the last call to the account's service found, whoever made it (a sync, a
    /// live loop, the dispatcher): the one place "is this account online?" is written.
    /// Answered: online (the last error stays until a sync succeeds); unreachable: offline
    /// with the sentence; refused: online with the sentence; a local failure: the sentence,
    /// online left as it was.
    pub async fn record_reachability(&self, account_id: &str, reach: Reach<'_>) -> Result<()> {
        let (online, error) = match reach {
            Reach::Answered => (Some(true), None),
            Reach::Failed(_, sentence) => (reach.online(), Some(sentence)),
        };
        sqlx::query(
            "INSERT INTO sync_cursors (account_id, last_error, online) VALUES (?, ?, COALESCE(?, 1))
             ON CONFLICT (account_id) DO UPDATE SET
                online = COALESCE(?, online),
                last_error = COALESCE(excluded.last_error, last_error)",
        )
        .bind(account_id)
        .bind(error)
        .bind(online)
        .bind(online)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
