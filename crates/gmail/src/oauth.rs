//! Connecting a Gmail account: Google's installed-app OAuth flow with a loopback redirect, the
//! scopes it grants, and refreshing tokens afterwards.
//!
//! Consent runs through yup-oauth2's `InstalledFlowAuthenticator` with
//! `InstalledFlowReturnMethod::HTTPRedirect` (the out-of-band flow is gone:
//! <https://developers.google.com/identity/protocols/oauth2/resources/oob-migration>).
//! Afterwards [`OAuthTokenSource`] refreshes the stored tokens itself: yup-oauth2's
//! `Authenticator::token` silently starts a new browser consent when a refresh fails
//! (`authenticator.rs`, `find_token_info`), and a revoked token must instead say "sign in to
//! Gmail again" once, not open browser windows in a loop.
//!
//! yup-oauth2 logs tokens at debug level; binaries must add [`LOG_FILTER_DIRECTIVE`] to their
//! log filter.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::Mutex;

use crate::error::{Error, Result};
use crate::token::TokenSource;
use crate::token_store::{ConsentStorage, OAuthTokens, TokenStorageKind, TokenStore};
use crate::tokeninfo::{fetch_granted_scopes, GrantedScopes};

/// Read, compose and send (and label); what Countersign asks for.
pub const GMAIL_MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
/// Manage drafts and send: also enough to send drafts.
pub const GMAIL_COMPOSE: &str = "https://www.googleapis.com/auth/gmail.compose";
/// Read only.
pub const GMAIL_READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
/// Send only; **cannot** send (or even read) drafts.
pub const GMAIL_SEND: &str = "https://www.googleapis.com/auth/gmail.send";
/// Full mailbox access.
pub const MAIL_GOOGLE_COM: &str = "https://mail.google.com/";
/// The scopes Countersign requests.
pub const REQUESTED_SCOPES: &[&str] = &[GMAIL_MODIFY];

/// Add this to a binary's `tracing`/`env_logger` filter: yup-oauth2 logs tokens at debug.
pub const LOG_FILTER_DIRECTIVE: &str = "yup_oauth2=warn";

/// How long consent may take in the browser before giving up.
pub const DEFAULT_CONSENT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The sentence shown when an account may not send drafts.
pub const CANNOT_SEND_SENTENCE: &str = "This Gmail account was connected without permission to \
    send drafts. Reconnect it and allow 'Read, compose and send' (gmail.modify).";

/// A sentence for the user explaining why an action is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusalSentence(pub String);

impl std::fmt::Display for RefusalSentence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `scopes` allow sending a draft: `drafts.send` takes `gmail.modify`, `gmail.compose`
/// or full access, never `gmail.send` alone (Gmail discovery document, `users.drafts.send`).
pub fn can_send<S: AsRef<str>>(scopes: &[S]) -> std::result::Result<(), RefusalSentence> {
    let allowed = [GMAIL_MODIFY, GMAIL_COMPOSE, MAIL_GOOGLE_COM];
    if scopes.iter().any(|s| allowed.contains(&s.as_ref())) {
        Ok(())
    } else {
        Err(RefusalSentence(CANNOT_SEND_SENTENCE.to_owned()))
    }
}

/// Whether `scopes` allow reading drafts and history (sync).
pub fn can_read<S: AsRef<str>>(scopes: &[S]) -> std::result::Result<(), RefusalSentence> {
    let allowed = [GMAIL_MODIFY, GMAIL_READONLY, MAIL_GOOGLE_COM];
    if scopes.iter().any(|s| allowed.contains(&s.as_ref())) {
        Ok(())
    } else {
        Err(RefusalSentence(
            "This Gmail account was connected without permission to read drafts. Reconnect it \
             and allow 'Read, compose and send' (gmail.modify)."
                .to_owned(),
        ))
    }
}

/// The user's own OAuth client, from the `client_secret.json` Google Cloud Console gives for a
/// "Desktop app" client. `Debug` hides the secret.
#[derive(Clone)]
pub struct ClientSecret(yup_oauth2::ApplicationSecret);

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSecret")
            .field("client_id", &self.0.client_id)
            .field("auth_uri", &self.0.auth_uri)
            .field("token_uri", &self.0.token_uri)
            .finish_non_exhaustive()
    }
}

impl ClientSecret {
    /// Parse a `client_secret.json` (`{"installed":{…}}`, or `{"web":{…}}`).
    pub fn from_json(json: &str) -> Result<Self> {
        let console: yup_oauth2::ConsoleApplicationSecret =
            serde_json::from_str(json).map_err(|e| Error::ClientSecret {
                detail: format!("not a Google OAuth client file: {e}"),
            })?;
        let secret = console
            .installed
            .or(console.web)
            .ok_or_else(|| Error::ClientSecret {
                detail: "it has neither an \"installed\" nor a \"web\" client; create a \
                         \"Desktop app\" OAuth client"
                    .into(),
            })?;
        if secret.client_id.is_empty() || secret.token_uri.is_empty() || secret.auth_uri.is_empty()
        {
            return Err(Error::ClientSecret {
                detail: "client_id, auth_uri or token_uri is missing".into(),
            });
        }
        Ok(ClientSecret(secret))
    }

    /// Read and parse the file at `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let json = std::fs::read_to_string(path).map_err(|e| Error::ClientSecret {
            detail: format!("cannot read {}: {e}", path.display()),
        })?;
        ClientSecret::from_json(&json)
    }

    /// The OAuth client id.
    pub fn client_id(&self) -> &str {
        &self.0.client_id
    }

    /// Google's token endpoint (or the fake's).
    pub fn token_uri(&self) -> &str {
        &self.0.token_uri
    }
}

/// A function that shows a URL to the user, e.g. opens it in a browser.
pub type OpenUrl = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = std::result::Result<(), String>> + Send>>
        + Send
        + Sync,
>;

/// How the consent page reaches the user.
#[derive(Clone)]
pub enum Browser {
    /// Open the system browser (`xdg-open`, `open`, `start`); print the URL if that fails.
    System,
    /// Only print the URL on stderr (`--no-browser`).
    PrintUrl,
    /// Hand the URL to this function (tests play the browser with it).
    Custom(OpenUrl),
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Browser::System => "System",
            Browser::PrintUrl => "PrintUrl",
            Browser::Custom(_) => "Custom",
        })
    }
}

/// Settings of [`connect`].
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// How to show the consent page.
    pub browser: Browser,
    /// How long to wait for consent.
    pub consent_timeout: Duration,
    /// Where to read the granted scopes.
    pub tokeninfo_url: String,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            browser: Browser::System,
            consent_timeout: DEFAULT_CONSENT_TIMEOUT,
            tokeninfo_url: crate::client::GOOGLE_TOKENINFO_URL.to_owned(),
        }
    }
}

/// What connecting an account produced (the tokens themselves are in the store).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// The scopes the user granted: record them on the account.
    pub granted: GrantedScopes,
    /// Where the tokens were stored.
    pub storage_kind: TokenStorageKind,
}

/// Run the consent flow for `account_id` and store its tokens in `store`.
///
/// The consent page is always shown, even when tokens are stored (reconnecting is how a user
/// grants a missing scope). Fails with [`Error::ConsentTimedOut`] when the browser does not come
/// back within `options.consent_timeout`.
pub async fn connect(
    secret: &ClientSecret,
    store: &TokenStore,
    account_id: &str,
    options: ConnectOptions,
) -> Result<Connection> {
    let authenticator = yup_oauth2::InstalledFlowAuthenticator::builder(
        secret.0.clone(),
        yup_oauth2::InstalledFlowReturnMethod::HTTPRedirect,
    )
    .with_storage(Box::new(ConsentStorage {
        store: store.clone(),
        account: account_id.to_owned(),
    }))
    .flow_delegate(Box::new(ConsentDelegate {
        browser: options.browser.clone(),
    }))
    // `prompt=select_account consent`: Google hands out a refresh token only on a consent it
    // shows, so a reconnect (e.g. to grant a missing scope) must show it again; it also lets
    // the user pick the right Google account.
    .force_account_selection(true)
    .build()
    .await
    .map_err(|e| Error::OAuth {
        detail: format!("cannot start the sign-in: {e}"),
    })?;

    let token = tokio::time::timeout(
        options.consent_timeout,
        authenticator.token(REQUESTED_SCOPES),
    )
    .await
    .map_err(|_| Error::ConsentTimedOut {
        waited: options.consent_timeout,
    })?
    .map_err(oauth_error)?;
    let access = token.token().ok_or_else(|| Error::OAuth {
        detail: "Google gave no access token".into(),
    })?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| Error::OAuth {
            detail: format!("cannot build the HTTP client: {e}"),
        })?;
    let granted = fetch_granted_scopes(&http, &options.tokeninfo_url, access).await?;
    Ok(Connection {
        granted,
        storage_kind: store.kind(),
    })
}

/// yup-oauth2 errors, without anything secret: its `Display` names error codes and Google's
/// descriptions, never tokens.
fn oauth_error(error: yup_oauth2::Error) -> Error {
    match error {
        yup_oauth2::Error::AuthError(auth) => Error::OAuth {
            detail: format!("Google refused: {auth}"),
        },
        yup_oauth2::Error::HttpError(_) | yup_oauth2::Error::HttpClientError(_) => {
            Error::Transport { request_sent: true }
        }
        other => Error::OAuth {
            detail: other.to_string(),
        },
    }
}

struct ConsentDelegate {
    browser: Browser,
}

impl yup_oauth2::authenticator_delegate::InstalledFlowDelegate for ConsentDelegate {
    fn present_user_url<'a>(
        &'a self,
        url: &'a str,
        _need_code: bool,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<String, String>> + Send + 'a>> {
        let url = url.to_owned();
        let browser = self.browser.clone();
        Box::pin(async move {
            match browser {
                Browser::Custom(open) => open(url).await?,
                Browser::PrintUrl => print_url(&url),
                Browser::System => match open_in_system_browser(&url) {
                    // `xdg-open` may start and still fail later (no display), so the address
                    // is always shown as well.
                    Ok(()) => eprintln!(
                        "Your browser should open Google's sign-in page. If it does not, open:\n\n  {url}\n"
                    ),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot open the browser; printing the URL");
                        print_url(&url);
                    }
                },
            }
            // The code comes back on the loopback redirect, not from here.
            Ok(String::new())
        })
    }
}

fn print_url(url: &str) {
    eprintln!("To connect Gmail, open this address in a browser on this computer and allow access:\n\n  {url}\n");
}

fn open_in_system_browser(url: &str) -> std::io::Result<()> {
    let mut command = if cfg!(target_os = "macos") {
        let mut c = std::process::Command::new("open");
        c.arg(url);
        c
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        // The empty title keeps `start` from taking the URL as the window title.
        c.args(["/C", "start", ""]).arg(url);
        c
    } else {
        let mut c = std::process::Command::new("xdg-open");
        c.arg(url);
        c
    };
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
}

/// Access tokens for a connected account: stored tokens, refreshed at the token endpoint when
/// they expire or Gmail refuses them.
pub struct OAuthTokenSource {
    secret: ClientSecret,
    store: TokenStore,
    account: String,
    http: reqwest::Client,
    cached: Mutex<Option<OAuthTokens>>,
}

impl std::fmt::Debug for OAuthTokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokenSource")
            .field("account", &self.account)
            .field("storage", &self.store.kind())
            .finish_non_exhaustive()
    }
}

/// Answer of the token endpoint (wire type), success or error.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<i64>,
    error: Option<String>,
    error_description: Option<String>,
}

impl OAuthTokenSource {
    /// Tokens of `account_id` in `store`, refreshed with `secret`'s token endpoint.
    pub fn new(
        secret: ClientSecret,
        store: TokenStore,
        account_id: impl Into<String>,
    ) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::OAuth {
                detail: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(OAuthTokenSource {
            secret,
            store,
            account: account_id.into(),
            http,
            cached: Mutex::new(None),
        })
    }

    async fn token(&self, force_refresh: bool) -> Result<String> {
        let mut cached = self.cached.lock().await;
        if cached.is_none() {
            *cached = self.store.load(&self.account)?;
        }
        let current = cached.as_ref().ok_or(Error::SignInAgain)?;
        let now = chrono::Utc::now().timestamp();
        if !force_refresh && !current.needs_refresh(now) {
            if let Some(access) = &current.access_token {
                return Ok(access.clone());
            }
        }
        let refresh_token = current.refresh_token.clone().ok_or(Error::SignInAgain)?;
        let fresh = self.refresh(&refresh_token).await?;
        self.store.save(&self.account, &fresh)?;
        let access = fresh.access_token.clone().ok_or_else(|| Error::OAuth {
            detail: "the token endpoint gave no access token".into(),
        })?;
        *cached = Some(fresh);
        Ok(access)
    }

    async fn refresh(&self, refresh_token: &str) -> Result<OAuthTokens> {
        let response = self
            .http
            .post(self.secret.token_uri())
            .form(&[
                ("client_id", self.secret.0.client_id.as_str()),
                ("client_secret", self.secret.0.client_secret.as_str()),
                ("refresh_token", refresh_token),
                ("grant_type", "refresh_token"),
            ])
            .send()
            .await
            .map_err(|e| Error::from_reqwest(&e))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| Error::from_reqwest(&e))?;
        let answer: Option<TokenAnswer> = serde_json::from_slice(&body).ok();
        if status.is_server_error() {
            return Err(Error::Server {
                status: status.as_u16(),
                message: "the token endpoint failed".into(),
            });
        }
        let Some(answer) = answer else {
            return Err(Error::BadResponse {
                detail: format!("the token endpoint answered {status} with unreadable JSON"),
            });
        };
        match answer.error.as_deref() {
            // RFC 6749 §5.2: the refresh token is invalid, expired or revoked.
            Some("invalid_grant") => return Err(Error::SignInAgain),
            Some(code) => {
                return Err(Error::OAuth {
                    detail: format!(
                        "the token endpoint refused the refresh: {code}{}",
                        answer
                            .error_description
                            .map(|d| format!(" ({d})"))
                            .unwrap_or_default()
                    ),
                })
            }
            None => {}
        }
        if !status.is_success() || answer.access_token.is_none() {
            return Err(Error::BadResponse {
                detail: format!("the token endpoint answered {status} without a token"),
            });
        }
        Ok(OAuthTokens {
            access_token: answer.access_token,
            // Google omits the refresh token on refresh: keep using the one we have.
            refresh_token: answer
                .refresh_token
                .or_else(|| Some(refresh_token.to_owned())),
            expires_at_unix: answer
                .expires_in
                .map(|s| chrono::Utc::now().timestamp() + s),
        })
    }
}

#[async_trait::async_trait]
impl TokenSource for OAuthTokenSource {
    async fn access_token(&self) -> Result<String> {
        self.token(false).await
    }

    async fn refresh_after_rejection(&self) -> Result<String> {
        self.token(true).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmail_send_alone_cannot_send_drafts() {
        assert_eq!(
            can_send(&[GMAIL_SEND, GMAIL_READONLY]),
            Err(RefusalSentence(CANNOT_SEND_SENTENCE.into()))
        );
        assert!(can_send(&[GMAIL_MODIFY]).is_ok());
        assert!(can_send(&[GMAIL_COMPOSE.to_string()]).is_ok());
    }

    #[test]
    fn compose_alone_cannot_sync() {
        assert!(can_read(&[GMAIL_COMPOSE]).is_err());
        assert!(can_read(&[GMAIL_READONLY]).is_ok());
    }

    #[test]
    fn a_client_file_without_an_installed_client_is_explained() {
        let err = ClientSecret::from_json(r#"{"other":{}}"#).unwrap_err();
        assert!(err.to_string().contains("Desktop app"), "{err}");
    }

    #[test]
    fn the_client_secret_never_shows_in_debug() {
        let secret = ClientSecret::from_json(
            r#"{"installed":{"client_id":"id.apps.googleusercontent.com","client_secret":"GOCSPX-hidden","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","redirect_uris":["http://localhost"]}}"#,
        )
        .unwrap();
        assert!(!format!("{secret:?}").contains("GOCSPX"));
    }
}
