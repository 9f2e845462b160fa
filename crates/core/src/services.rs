//! Connecting accounts and building the service clients for them.
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
    Browser, ClientConfig, ClientSecret, ConnectOptions, GmailClient, OAuthTokenSource,
    RetryPolicy, TokenStorageKind, TokenStore,
};
use countersign_muster::MusterClient;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::domain::Source;
use crate::error::{Error, Result};
use crate::secrets::PasswordStore;
use crate::store::{Account, NewAccount, SecretStorage, Store};

/// The log filter directive every binary adds so yup-oauth2 never logs tokens.
pub const YUP_OAUTH2_LOG_DIRECTIVE: &str = countersign_gmail::LOG_FILTER_DIRECTIVE;

/// Set to `file` to keep every secret in 0600 files in the data directory.
pub const SECRET_STORE_ENV: &str = "COUNTERSIGN_SECRET_STORE";

/// Per-account Gmail settings kept beside the mirror.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GmailAccountFile {
    /// The `client_secret.json` the user supplied, verbatim.
    client_secret: String,
    /// Where granted scopes are read.
    tokeninfo_url: String,
}

/// How to reach Google when connecting a Gmail account.
#[derive(Clone, Debug)]
pub struct GmailConnect {
    /// Contents of the user's `client_secret.json`.
    pub client_secret_json: String,
    /// API base (Google's, or a fake's).
    pub api_base: String,
    /// tokeninfo endpoint.
    pub tokeninfo_url: String,
    /// How the consent page is opened.
    pub browser: Browser,
    /// How long to wait for consent.
    pub consent_timeout: Duration,
}

impl GmailConnect {
    /// Google's endpoints, the system browser (or the URL printed), 5 minutes to consent.
    pub fn google(client_secret_json: String, no_browser: bool) -> GmailConnect {
        GmailConnect {
            client_secret_json,
            api_base: countersign_gmail::GOOGLE_API_BASE.into(),
            tokeninfo_url: countersign_gmail::GOOGLE_TOKENINFO_URL.into(),
            browser: if no_browser {
                Browser::PrintUrl
            } else {
                Browser::System
            },
            consent_timeout: Duration::from_secs(300),
        }
    }
}

/// The two clients of one Gmail account; they share the account's quota.
#[derive(Clone)]
struct GmailClients {
    sync: GmailClient,
    dispatch: GmailClient,
}

/// A "browser" that accepts the consent page by itself and hands the code to the loopback
/// listener: for demo mode and tests, against the fake Google, whose consent page approves at
/// once. Never use it against Google.
pub fn auto_consent_browser() -> Browser {
    Browser::Custom(Arc::new(|url: String| {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(20))
                .build()
                .map_err(|e| e.to_string())?;
            let consent = http.get(&url).send().await.map_err(|e| e.to_string())?;
            let location = consent
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or("the consent page did not redirect")?
                // yup-oauth2 listens on 127.0.0.1 but names it localhost: stay on IPv4.
                .replacen("://localhost:", "://127.0.0.1:", 1);
            let back = http
                .get(&location)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !back.status().is_success() {
                return Err(format!("the loopback listener answered {}", back.status()));
            }
            Ok(())
        })
    }))
}

impl GmailConnect {
    /// Connect to a fake Google (demo mode, tests, benchmarks) whose consent page approves by
    /// itself: the consent is played by [`auto_consent_browser`].
    pub fn auto_consent(
        client_secret_json: String,
        api_base: String,
        tokeninfo_url: String,
    ) -> GmailConnect {
        GmailConnect {
            client_secret_json,
            api_base,
            tokeninfo_url,
            browser: auto_consent_browser(),
            consent_timeout: Duration::from_secs(20),
        }
    }
}

/// The clients of every account of one data directory, built on first use.
#[derive(Clone)]
pub struct Services {
    data_dir: PathBuf,
    tokens: TokenStore,
    passwords: PasswordStore,
    units_per_second: u32,
    retry: RetryPolicy,
    dispatch_retry: RetryPolicy,
    gmail: Arc<Mutex<HashMap<String, GmailClients>>>,
    muster: Arc<Mutex<HashMap<String, MusterClient>>>,
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
            Ok("file") => TokenStore::file(data_dir),
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

    /// Where secrets are kept.
    pub fn secret_storage(&self) -> SecretStorage {
        match self.tokens.kind() {
            TokenStorageKind::Keyring => SecretStorage::Keyring,
            TokenStorageKind::File => SecretStorage::File,
        }
    }

    /// Run Google's consent flow and add (or reconnect) the Gmail account it grants.
    pub async fn connect_gmail(&self, store: &Store, connect: GmailConnect) -> Result<Account> {
        let secret = ClientSecret::from_json(&connect.client_secret_json)?;
        let provisional = format!("gmail-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let connection = countersign_gmail::connect(
            &secret,
            &self.tokens,
            &provisional,
            ConnectOptions {
                browser: connect.browser.clone(),
                consent_timeout: connect.consent_timeout,
                tokeninfo_url: connect.tokeninfo_url.clone(),
            },
        )
        .await?;
        let client = self.build_gmail(
            &secret,
            &provisional,
            &connect.api_base,
            &connect.tokeninfo_url,
        )?;
        let profile = match client.profile().await {
            Ok(profile) => profile,
            Err(e) => {
                if let Err(cleanup) = self.tokens.remove(&provisional) {
                    tracing::warn!(error = %cleanup, "cannot remove the tokens of a connection that failed");
                }
                return Err(e.into());
            }
        };
        let account = store
            .add_account(NewAccount {
                kind: Source::Gmail,
                label: profile.email_address.clone(),
                address: profile.email_address.clone(),
                api_base: connect.api_base.clone(),
                granted_scopes: connection.granted.scopes.clone(),
                secret_storage: self.secret_storage(),
            })
            .await?;
        if account.id != provisional {
            // Reconnecting an account we know: its tokens move to its own id.
            if let Some(tokens) = self.tokens.load(&provisional)? {
                self.tokens.save(&account.id, &tokens)?;
            }
            self.tokens.remove(&provisional)?;
        }
        write_account_file(
            &self.account_dir(&account.id),
            &GmailAccountFile {
                client_secret: connect.client_secret_json,
                tokeninfo_url: connect.tokeninfo_url,
            },
        )?;
        self.gmail.lock().await.remove(&account.id);
        store.account_reconnected(&account.id).await?;
        Ok(account)
    }

    /// Sign in to a muster instance with its owner password and add it.
    pub async fn connect_muster(
        &self,
        store: &Store,
        url: &str,
        password: &str,
    ) -> Result<Account> {
        let base: countersign_muster::Url = url.parse().map_err(|e| {
            Error::refused(
                format!("add the muster instance {url}"),
                format!("that is not a URL: {e}"),
            )
        })?;
        let kept = Arc::new(countersign_muster::MemorySessionKeeper::default());
        let client = MusterClient::with_session_keeper(
            base.clone(),
            password.to_string(),
            countersign_muster::DEFAULT_REQUEST_TIMEOUT,
            kept.clone(),
        )?;
        client.login().await?;
        // An instance without the plugin-draft routes would look empty forever: say so now.
        // Other trouble with the list is the first sync's to report.
        if let Err(e @ countersign_muster::Error::NoPluginApi) = client
            .list_drafts(Some(countersign_muster::DraftState::Pending))
            .await
        {
            return Err(e.into());
        }
        let address = base.as_str().trim_end_matches('/').to_string();
        let account = store
            .add_account(NewAccount {
                kind: Source::Muster,
                label: base.host_str().unwrap_or("muster").to_string(),
                address: address.clone(),
                api_base: address,
                granted_scopes: vec![],
                secret_storage: self.passwords.kind(),
            })
            .await?;
        self.passwords.save(&account.id, password)?;
        if let Some(cookie) = countersign_muster::SessionKeeper::load(kept.as_ref()) {
            self.passwords.save_session(&account.id, &cookie)?;
        }
        // The account's own client keeps its session for every process from now on.
        self.muster.lock().await.remove(&account.id);
        Ok(account)
    }

    /// Remove an account: its secrets, its files, and everything mirrored for it.
    pub async fn remove_account(&self, store: &Store, account_id: &str) -> Result<()> {
        let account = store.get_account(account_id).await?;
        match account.kind {
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
        let sync =
            self.build_gmail(&secret, &account.id, &account.api_base, &file.tokeninfo_url)?;
        let mut config = ClientConfig::with_endpoints(&account.api_base, &file.tokeninfo_url);
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
        let base = account.api_base.parse().map_err(|e| {
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

    fn build_gmail(
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

    fn account_dir(&self, account_id: &str) -> PathBuf {
        self.data_dir.join("accounts").join(account_id)
    }
}

fn write_account_file(dir: &Path, file: &GmailAccountFile) -> Result<()> {
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
