//! Connecting a Gmail account: Google's installed-app OAuth flow with a loopback redirect, the
//! scopes it grants, and refreshing tokens afterwards.
//!
//! Consent runs through the `oauth2` crate (authorization URL with `state` and PKCE `S256`,
//! code exchange with the verifier) and a loopback listener on `http://127.0.0.1:PORT/` (the
//! out-of-band flow is gone:
//! <https://developers.google.com/identity/protocols/oauth2/resources/oob-migration>).
//! yup-oauth2's installed flow sends neither `state` nor PKCE and keeps waiting after an
//! `error=` redirect, so it only parses `client_secret.json` here (docs/gmail.md).
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

use crate::error::{Error, Result};
use crate::token_store::{OAuthTokens, TokenStorageKind, TokenStore};
use crate::tokeninfo::{fetch_granted_scopes, GrantedScopes};

mod refresh;

pub use refresh::OAuthTokenSource;

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

/// Why a "Web application" client is refused: Google accepts for it only the redirect URIs
/// registered in the console, never a loopback port chosen at sign-in (native-app guide,
/// "Loopback IP address").
pub const WEB_CLIENT_SENTENCE: &str = "this is a \"Web application\" OAuth client, and Google \
    refuses its sign-in from a desktop app (web clients cannot redirect to a port on this \
    computer). In Google Cloud Console, create an OAuth client of type \"Desktop app\" and use \
    its client_secret.json";

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
    /// Parse a `client_secret.json` of a "Desktop app" client (`{"installed":{…}}`); a "Web
    /// application" client (`{"web":{…}}`) is refused with [`WEB_CLIENT_SENTENCE`].
    pub fn from_json(json: &str) -> Result<Self> {
        let console: yup_oauth2::ConsoleApplicationSecret =
            serde_json::from_str(json).map_err(|e| Error::ClientSecret {
                detail: format!("not a Google OAuth client file: {e}"),
            })?;
        if console.installed.is_none() && console.web.is_some() {
            return Err(Error::ClientSecret {
                detail: WEB_CLIENT_SENTENCE.into(),
            });
        }
        let secret = console.installed.ok_or_else(|| Error::ClientSecret {
            detail: "it holds no \"installed\" client; in Google Cloud Console create an \
                     OAuth client of type \"Desktop app\" and use its client_secret.json"
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
/// Google's installed-app flow
/// (<https://developers.google.com/identity/protocols/oauth2/native-app>): a listener on
/// `http://127.0.0.1:PORT/` (an IP literal, so a browser that resolves `localhost` to `::1`
/// cannot miss it), an authorization request with a random `state` and a PKCE `S256`
/// challenge, then the code exchanged with its `code_verifier`. The redirect is checked before
/// anything else: a foreign `state` is refused; `error=access_denied` (Cancel) and any other
/// `error=` end the connect at once, not after `options.consent_timeout`.
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
    let setup = |e: &dyn std::fmt::Display| Error::OAuth {
        detail: format!("cannot start the sign-in: {e}"),
    };
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .await
        .map_err(|e| setup(&e))?;
    let port = listener.local_addr().map_err(|e| setup(&e))?.port();
    let redirect = format!("http://127.0.0.1:{port}/");
    let client = oauth2::basic::BasicClient::new(oauth2::ClientId::new(secret.0.client_id.clone()))
        .set_client_secret(oauth2::ClientSecret::new(secret.0.client_secret.clone()))
        .set_auth_uri(oauth2::AuthUrl::new(secret.0.auth_uri.clone()).map_err(|e| setup(&e))?)
        .set_token_uri(oauth2::TokenUrl::new(secret.0.token_uri.clone()).map_err(|e| setup(&e))?)
        .set_redirect_uri(oauth2::RedirectUrl::new(redirect).map_err(|e| setup(&e))?)
        // Google's examples send the client in the form body.
        .set_auth_type(oauth2::AuthType::RequestBody);
    let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(oauth2::CsrfToken::new_random)
        .add_scopes(
            REQUESTED_SCOPES
                .iter()
                .map(|s| oauth2::Scope::new((*s).to_owned())),
        )
        .set_pkce_challenge(challenge)
        // A refresh token, on every connect: Google hands one out only on a consent it shows,
        // so a reconnect (e.g. to grant a missing scope) must show it again; it also lets the
        // user pick the right Google account.
        .add_extra_param("access_type", "offline")
        .add_extra_param("prompt", "select_account consent")
        .url();

    let (redirects, mut redirected) = tokio::sync::mpsc::channel(1);
    let (stop_listener, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(
            move |axum::extract::RawQuery(query): axum::extract::RawQuery| async move {
                let params: Vec<(String, String)> =
                    url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
                        .into_owned()
                        .collect();
                let failed = params.iter().any(|(k, _)| k == "error");
                // Only the first answer counts; a reload finds the channel full.
                let _ = redirects.try_send(params);
                axum::response::Html(if failed {
                    "<!doctype html><title>Countersign</title><p>Nothing was connected. You can \
                     close this tab and return to Countersign.</p>"
                } else {
                    "<!doctype html><title>Countersign</title><p>Countersign received Google's \
                     answer. You can close this tab and return to Countersign.</p>"
                })
            },
        ),
    );
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                // Either signal or drop ends the listener: both mean this sign-in is over.
                let _ = stopped.await;
            })
            .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "the sign-in's loopback listener stopped");
        }
    });
    // Dropped on every return: the listener ends with this sign-in.
    let _stop_listener = stop_listener;

    present_url(&options.browser, url.as_str())
        .await
        .map_err(|e| Error::OAuth {
            detail: format!("cannot show Google's sign-in page: {e}"),
        })?;
    let params = tokio::time::timeout(options.consent_timeout, redirected.recv())
        .await
        .map_err(|_| Error::ConsentTimedOut {
            waited: options.consent_timeout,
        })?
        .ok_or_else(|| Error::OAuth {
            detail: "the loopback listener stopped".into(),
        })?;
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    // The state first: an answer to someone else's request is refused whatever it says
    // (RFC 6749 §10.12).
    if param("state") != Some(state.secret().as_str()) {
        return Err(Error::ConsentStateMismatch);
    }
    match param("error") {
        Some("access_denied") => return Err(Error::ConsentDeclined),
        Some(code) => {
            return Err(Error::ConsentRefused {
                code: code.to_owned(),
            })
        }
        None => {}
    }
    let code = param("code").ok_or_else(|| Error::BadResponse {
        detail: "Google's redirect carried neither a code nor an error".into(),
    })?;
    let http = reqwest::Client::builder()
        // The token endpoint must answer itself: following a redirect would hand the code on.
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| setup(&e))?;
    let token = client
        .exchange_code(oauth2::AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(verifier)
        .request_async(&http)
        .await
        .map_err(exchange_error)?;
    use oauth2::TokenResponse as _;
    let tokens = OAuthTokens {
        access_token: Some(token.access_token().secret().clone()),
        refresh_token: token.refresh_token().map(|r| r.secret().clone()),
        expires_at_unix: token
            .expires_in()
            .map(|d| chrono::Utc::now().timestamp() + d.as_secs() as i64),
    };
    let access = token.access_token().secret().as_str();
    let granted = fetch_granted_scopes(&http, &options.tokeninfo_url, access).await?;
    store.save(account_id, &tokens)?;
    Ok(Connection {
        granted,
        storage_kind: store.kind(),
    })
}

/// The code exchange's errors, without anything secret: Google's error code and description,
/// never the code or the tokens.
fn exchange_error(
    error: oauth2::RequestTokenError<
        oauth2::HttpClientError<reqwest::Error>,
        oauth2::basic::BasicErrorResponse,
    >,
) -> Error {
    match error {
        oauth2::RequestTokenError::ServerResponse(answer) => Error::OAuth {
            detail: format!(
                "Google refused the sign-in code: {}{}",
                answer.error(),
                answer
                    .error_description()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
        },
        oauth2::RequestTokenError::Request(_) => Error::Transport { request_sent: true },
        oauth2::RequestTokenError::Parse(_, _) | oauth2::RequestTokenError::Other(_) => {
            Error::BadResponse {
                detail: "the token endpoint answered something unreadable".into(),
            }
        }
    }
}

async fn present_url(browser: &Browser, url: &str) -> std::result::Result<(), String> {
    match browser {
        Browser::Custom(open) => open(url.to_owned()).await?,
        Browser::PrintUrl => print_url(url),
        Browser::System => match open_in_system_browser(url) {
            // `xdg-open` may start and still fail later (no display), so the address is always
            // shown as well.
            Ok(()) => eprintln!(
                "Your browser should open Google's sign-in page. If it does not, open:\n\n  {url}\n"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "cannot open the browser; printing the URL");
                print_url(url);
            }
        },
    }
    Ok(())
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
