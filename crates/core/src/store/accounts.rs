//! Accounts: Gmail mailboxes and muster instances, several of each.

use super::Found;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{format_time, Store};
use crate::domain::Source;
use crate::error::{Error, Result};

/// Where an account's secret (OAuth tokens, muster password) is kept. Never the secret itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SecretStorage {
    /// The OS keyring (Secret Service, Keychain, Credential Manager).
    Keyring,
    /// A 0600 file in the data directory, only where no keyring exists.
    File,
    /// Nothing stored.
    None,
}

impl SecretStorage {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A connected account: what was connected, and what the mirror keeps of it (a row of
/// `accounts`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// Stable id, e.g. `gmail-3f2a91c0`.
    pub id: String,
    /// What was connected (flattened: the wire keeps one flat account).
    #[serde(flatten)]
    #[sqlx(flatten)]
    #[cfg_attr(feature = "ui-types", ts(flatten))]
    pub profile: NewAccount,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// Why it must be reconnected before it is read or sent from again (e.g. "Reconnect
    /// needed: Google ended this sign-in …"); `None` when it works. Connecting again clears it.
    pub reconnect_reason: Option<String>,
}

/// What is needed to add an account, and what connecting it again may change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct NewAccount {
    /// Gmail or muster.
    pub kind: Source,
    /// What the owner calls it.
    pub label: String,
    /// The mailbox address (Gmail) or instance URL (muster).
    pub address: String,
    /// The API base URL the clients talk to.
    pub api_base: String,
    /// OAuth scopes Google reported as granted (Gmail only; stored as a JSON array).
    #[sqlx(json)]
    pub granted_scopes: Vec<String>,
    /// Where the secret lives.
    pub secret_storage: SecretStorage,
}

impl Store {
    /// Add an account, or update the one with the same kind and address (reconnecting).
    pub async fn add_account(&self, new: NewAccount) -> Result<Account> {
        let id = format!(
            "{}-{}",
            new.kind.as_str(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let scopes = serde_json::to_string(&new.granted_scopes).map_err(|e| Error::Encode {
            what: "the granted scopes",
            detail: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO accounts (id, kind, label, address, api_base, granted_scopes, secret_storage, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (kind, address) DO UPDATE SET
               label = excluded.label, api_base = excluded.api_base,
               granted_scopes = excluded.granted_scopes, secret_storage = excluded.secret_storage,
               reconnect_reason = NULL",
        )
        .bind(&id)
        .bind(new.kind.as_str())
        .bind(&new.label)
        .bind(&new.address)
        .bind(&new.api_base)
        .bind(scopes)
        .bind(new.secret_storage.as_str())
        .bind(format_time(Utc::now()))
        .execute(self.pool())
        .await?;
        Ok(
            sqlx::query_as("SELECT * FROM accounts WHERE kind = ? AND address = ?")
                .bind(new.kind.as_str())
                .bind(&new.address)
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// Every account, oldest first.
    pub async fn list_accounts(&self) -> Result<Vec<Account>> {
        Ok(
            sqlx::query_as("SELECT * FROM accounts ORDER BY created_at, id")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// One account.
    pub async fn get_account(&self, id: &str) -> Result<Account> {
        sqlx::query_as("SELECT * FROM accounts WHERE id = ?")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .found("account", id)
    }

    /// Record that the account must be reconnected, and why: its syncs stop and its queued
    /// decisions wait (they stay queued) until [`Store::add_account`] reconnects it.
    pub async fn mark_reconnect_needed(&self, id: &str, reason: &str) -> Result<()> {
        sqlx::query("UPDATE accounts SET reconnect_reason = ? WHERE id = ?")
            .bind(reason)
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The account was connected again: it needs no reconnecting, and its queued decisions
    /// that were waiting for it are due now instead of at the end of their backoff.
    pub async fn account_reconnected(&self, id: &str) -> Result<()> {
        let mut tx = self.write_tx().await?;
        sqlx::query("UPDATE accounts SET reconnect_reason = NULL WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "UPDATE decisions SET next_attempt_at = NULL
              WHERE state = 'queued'
                AND item_id IN (SELECT id FROM review_items WHERE account_id = ?)",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Remove an account and everything mirrored for it. The audit log keeps its rows (their
    /// item link becomes empty): what was decided stays on record.
    pub async fn remove_account(&self, id: &str) -> Result<()> {
        sqlx::query("DELETE FROM accounts WHERE id = ?")
            .bind(id)
            .execute(self.pool())
            .await?
            .found("account", id)
    }
}
