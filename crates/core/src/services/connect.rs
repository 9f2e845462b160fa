//! Connecting accounts: Google's consent flow for a Gmail account
//! (<https://developers.google.com/identity/protocols/oauth2/native-app>), muster's owner sign-in
//! (docs/muster-owner-api.md) for a muster instance.

use std::sync::Arc;
use std::time::Duration;

use countersign_gmail::{Browser, ClientSecret, ConnectOptions};
use countersign_muster::MusterClient;

use super::{write_account_file, GmailAccountFile, Services};
use crate::domain::Source;
use crate::error::{Error, Result};
use crate::store::{Account, NewAccount, Store};

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

impl Services {
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
}
