//! The service clients of every account, built on first use and kept (the client cache), and
//! the files and secrets an account keeps. Connecting is in `connect.rs`.
//!
//! A Gmail account keeps, in `DATA_DIR/accounts/<id>/gmail.json`, the user's own OAuth client
//! (needed to refresh tokens) and the tokeninfo URL; its tokens live in the keyring (or a 0600
//! file). A muster account keeps its password the same way. The mirror records only where the
//! secret is, never the secret.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use countersign_gmail::{
    ClientConfig, ClientSecret, GmailClient, OAuthTokenSource, RetryPolicy, TokenStorageKind,
    TokenStore,
};
use countersign_muster::MusterClient;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::domain::Source;
use crate::error::{Error, Result};
use crate::secrets::PasswordStore;
use crate::store::{Account, SecretStorage, Store};

#[cfg(feature = "auto-consent")]
mod auto_consent;
mod connect;

#[cfg(feature = "auto-consent")]
pub use auto_consent::auto_consent_browser;
pub use connect::GmailConnect;

/// The log filter directive every binary adds so yup-oauth2 never logs tokens.
pub const YUP_OAUTH2_LOG_DIRECTIVE: &str = countersign_gmail::LOG_FILTER_DIRECTIVE;

/// Set to `file` to keep every secret in 0600 files in the data directory.
pub const SECRET_STORE_ENV: &str = "COUNTERSIGN_SECRET_STORE";

/// Per-account Gmail settings kept beside the mirror.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GmailAccountFile {
    /// The `client_secret.json` the user supplied, verbatim.
    pub(super) client_secret: String,
    /// Where granted scopes are read.
    pub(super) tokeninfo_url: String,
}

/// The two clients of one Gmail account; they share the account's quota.
#[derive(Clone)]
pub(super) struct GmailClients {
    sync: GmailClient,
    dispatch: GmailClient,
}

/// The clients of every account of one data directory, built on first use.
#[derive(Clone)]
pub struct Services {
    data_dir: PathBuf,
    pub(super) tokens: TokenStore,
    pub(super) passwords: PasswordStore,
    units_per_second: u32,
    retry: RetryPolicy,
    dispatch_retry: RetryPolicy,
    pub(super) gmail: Arc<Mutex<HashMap<String, GmailClients>>>,
    pub(super) muster: Arc<Mutex<HashMap<String, MusterClient>>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("data_dir", &self.data_dir)
            .field("tokens", &self.tokens.kind())
            .finish_non_exhaustive()
    }
}

impl Services {
    /// Services for `data_dir`, keeping secrets in the keyring when one answers — or always
    /// in 0600 files when `COUNTERSIGN_SECRET_STORE=file` (tests and demo mode, which must
    /// never write to the owner's keyring).
    pub fn new(data_dir: &Path) -> Services {
        let tokens = match std::env::var(SECRET_STORE_ENV).as_deref() {
            Ok("file") => {
                // Meant for tests and demo mode: a release build says so at every start, so
                // that nobody keeps real secrets in files by accident.
                if cfg!(not(debug_assertions)) {
                    tracing::warn!(
                        "{SECRET_STORE_ENV}=file: Gmail tokens and muster passwords are kept in \
                         0600 files under {}, not in the OS keyring",
                        data_dir.display()
                    );
                }
                TokenStore::file(data_dir)
            }
            _ => TokenStore::open(data_dir),
        };
        Services::with_token_store(data_dir, tokens)
    }

    /// Services with a chosen token store (tests use the file store).
    pub fn with_token_store(data_dir: &Path, tokens: TokenStore) -> Services {
        Services {
            data_dir: data_dir.to_path_buf(),
            passwords: PasswordStore::open(data_dir, &tokens),
            tokens,
            units_per_second: 250,
            // Syncs ride out rate-limit storms (Google's retry times are honoured).
            retry: RetryPolicy::default(),
            // The dispatcher has its own backoff per decision: its reads give up quickly so
            // that an offline service shows as "queued — offline" within seconds.
            dispatch_retry: RetryPolicy {
                max_attempts: 2,
                initial_backoff: Duration::from_millis(250),
                max_backoff: Duration::from_secs(2),
            },
            gmail: Arc::default(),
            muster: Arc::default(),
        }
    }

    /// Change the Gmail quota budget per account (units per second).
    pub fn with_units_per_second(mut self, units: u32) -> Services {
        self.units_per_second = units;
        self
    }

    /// Change how reads are retried: by syncs, and by the dispatcher.
    pub fn with_retry(mut self, sync: RetryPolicy, dispatch: RetryPolicy) -> Services {
        self.retry = sync;
        self.dispatch_retry = dispatch;
        self
    }

    /// Where the record's key is kept: the same store as the tokens (issue 35).
    pub fn record_keys(&self) -> crate::store::RecordKeyStore {
        match self.tokens.kind() {
            TokenStorageKind::Keyring => crate::store::RecordKeyStore::Keyring,
            TokenStorageKind::File => crate::store::RecordKeyStore::file(&self.data_dir),
        }
    }

    /// Where secrets are kept.
    pub fn secret_storage(&self) -> SecretStorage {
        match self.tokens.kind() {
            TokenStorageKind::Keyring => SecretStorage::Keyring,
            TokenStorageKind::File => SecretStorage::File,
        }
    }

    /// Remove an account: its secrets, its files, and everything mirrored for it.
    pub async fn remove_account(&self, store: &Store, account_id: &str) -> Result<()> {
        let account = store.get_account(account_id).await?;
        match account.profile.kind {
            Source::Gmail => {
                self.tokens.remove(account_id)?;
                self.gmail.lock().await.remove(account_id);
            }
            Source::Muster => {
                self.passwords.remove(account_id)?;
                self.muster.lock().await.remove(account_id);
            }
        }
        let dir = self.account_dir(account_id);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|source| Error::DataDir { path: dir, source })?;
        }
        store.remove_account(account_id).await
    }

    /// The Gmail client of an account, for syncing.
    pub async fn gmail(&self, account: &Account) -> Result<GmailClient> {
        Ok(self.gmail_clients(account).await?.sync)
    }

    /// The Gmail client of an account for the dispatcher: the same quota, quicker to give up.
    pub async fn gmail_for_dispatch(&self, account: &Account) -> Result<GmailClient> {
        Ok(self.gmail_clients(account).await?.dispatch)
    }

    async fn gmail_clients(&self, account: &Account) -> Result<GmailClients> {
        let mut clients = self.gmail.lock().await;
        if let Some(pair) = clients.get(&account.id) {
            return Ok(pair.clone());
        }
        let file = read_account_file(&self.account_dir(&account.id))?;
        let secret = ClientSecret::from_json(&file.client_secret)?;
        let sync = self.build_gmail(
            &secret,
            &account.id,
            &account.profile.api_base,
            &file.tokeninfo_url,
        )?;
        let mut config =
            ClientConfig::with_endpoints(&account.profile.api_base, &file.tokeninfo_url);
        config.retry = self.dispatch_retry.clone();
        let source = OAuthTokenSource::new(secret, self.tokens.clone(), &account.id)?;
        let dispatch = GmailClient::with_quota(config, Arc::new(source), sync.quota().clone())?;
        let pair = GmailClients { sync, dispatch };
        clients.insert(account.id.clone(), pair.clone());
        Ok(pair)
    }

    /// The muster client of an account.
    pub async fn muster(&self, account: &Account) -> Result<MusterClient> {
        let mut clients = self.muster.lock().await;
        if let Some(client) = clients.get(&account.id) {
            return Ok(client.clone());
        }
        let password = self.passwords.load(&account.id)?;
        let base = account.profile.api_base.parse().map_err(|e| {
            Error::Corrupt(format!(
                "the muster URL of {} does not parse: {e}",
                account.id
            ))
        })?;
        let keeper = crate::secrets::MusterSessions::new(
            &self.data_dir,
            self.passwords.clone(),
            &account.id,
        );
        let client = MusterClient::with_session_keeper(
            base,
            password,
            countersign_muster::DEFAULT_REQUEST_TIMEOUT,
            Arc::new(keeper),
        )?;
        clients.insert(account.id.clone(), client.clone());
        Ok(client)
    }

    pub(super) fn build_gmail(
        &self,
        secret: &ClientSecret,
        account_id: &str,
        api_base: &str,
        tokeninfo_url: &str,
    ) -> Result<GmailClient> {
        let source = OAuthTokenSource::new(secret.clone(), self.tokens.clone(), account_id)?;
        let mut config = ClientConfig::with_endpoints(api_base, tokeninfo_url);
        config.units_per_second = self.units_per_second;
        config.retry = self.retry.clone();
        Ok(GmailClient::new(config, Arc::new(source))?)
    }

    pub(super) fn account_dir(&self, account_id: &str) -> PathBuf {
        self.data_dir.join("accounts").join(account_id)
    }
}

pub(super) fn write_account_file(dir: &Path, file: &GmailAccountFile) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::DataDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join("gmail.json");
    let json = serde_json::to_vec_pretty(file).map_err(|e| Error::Encode {
        what: "the account file",
        detail: e.to_string(),
    })?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    use std::io::Write;
    options
        .open(&path)
        .and_then(|mut f| f.write_all(&json))
        .map_err(|source| Error::DataDir {
            path: path.clone(),
            source,
        })?;
    // `mode` applies only when the file is created: an older file is tightened too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|source| Error::DataDir { path, source })?;
    }
    Ok(())
}

fn read_account_file(dir: &Path) -> Result<GmailAccountFile> {
    let path = dir.join("gmail.json");
    let bytes = std::fs::read(&path).map_err(|source| Error::DataDir {
        path: path.clone(),
        source,
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::Corrupt(format!("{} does not parse: {e}", path.display())))
}
