//! [`MusterClient`]: the connection to one muster instance, and the request path every call
//! shares — the session cookie, the one silent re-login on a 401, and reading muster's answers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE, COOKIE};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use url::Url;

use crate::error::{Error, Result};
use crate::login::{Secret, SessionState};
use crate::paths;
use crate::session::{MemorySessionKeeper, SessionKeeper};
use crate::wire;

/// How long one owner-API call may take before it counts as a transport failure.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A client of one muster instance's owner API. Cheap to clone: clones share the session.
#[derive(Clone)]
pub struct MusterClient {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) http: reqwest::Client,
    pub(crate) base: Url,
    /// Replaced only by a successful [`MusterClient::sign_in_with`].
    pub(crate) password: std::sync::Mutex<Secret>,
    pub(crate) session: tokio::sync::Mutex<SessionState>,
    pub(crate) request_timeout: Duration,
    /// Where the cookie is kept between processes, and who paces sign-ins.
    pub(crate) keeper: Arc<dyn SessionKeeper>,
}

impl fmt::Debug for MusterClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MusterClient")
            .field("base_url", &self.inner.base.as_str())
            .field("password", &"[redacted]")
            .finish_non_exhaustive()
    }
}

impl MusterClient {
    /// A client for the instance at `base_url` (e.g. `http://127.0.0.1:8105`, muster's
    /// `MUSTER_API_URL`), signing in with the owner `password`. Nothing is sent until the first
    /// call. Calls time out after [`DEFAULT_REQUEST_TIMEOUT`].
    pub fn new(base_url: Url, password: String) -> Result<Self> {
        Self::with_request_timeout(base_url, password, DEFAULT_REQUEST_TIMEOUT)
    }

    /// Like [`Self::new`] with another per-call timeout (the open event stream has none).
    pub fn with_request_timeout(
        base_url: Url,
        password: String,
        request_timeout: Duration,
    ) -> Result<Self> {
        Self::with_session_keeper(
            base_url,
            password,
            request_timeout,
            Arc::new(MemorySessionKeeper::default()),
        )
    }

    /// Like [`Self::with_request_timeout`], keeping the session cookie and pacing sign-ins with
    /// `keeper` (shared by every process of the machine, so that they sign in once between them).
    pub fn with_session_keeper(
        base_url: Url,
        password: String,
        request_timeout: Duration,
        keeper: Arc<dyn SessionKeeper>,
    ) -> Result<Self> {
        let base = normalise_base(base_url)?;
        let http = reqwest::Client::builder()
            // A 303 from /login must reach us: its Set-Cookie is the session.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            // The event stream may be silent for hours; keep-alive probes are what end it when
            // muster's host or the path to it is gone (a dead peer is noticed within about
            // 30 s + 4 × 15 s), where a read timeout would end every quiet stream.
            .tcp_keepalive(Duration::from_secs(30))
            .tcp_keepalive_interval(Duration::from_secs(15))
            .tcp_keepalive_retries(4)
            .user_agent(concat!("countersign/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| Error::InvalidUrl {
                url: base.to_string(),
                problem: "the HTTP client cannot be built on this system".into(),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                base,
                password: std::sync::Mutex::new(Secret::new(password)),
                session: tokio::sync::Mutex::new(SessionState::Fresh),
                request_timeout,
                keeper,
            }),
        })
    }

    /// The instance's base URL.
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    pub(crate) fn url(&self, path: &str) -> Url {
        let mut url = self.inner.base.clone();
        let joined = format!("{}{}", url.path().trim_end_matches('/'), path);
        url.set_path(&joined);
        url
    }

    /// Send an owner-API request with the session cookie; on a 401, sign in once more and send
    /// it once more. Answers other than 401 are returned for the caller to read.
    ///
    /// Retrying after a 401 is safe even for `decide`: muster refuses an unsigned request before
    /// looking at it.
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        build: impl Fn(RequestBuilder) -> RequestBuilder,
        timeout: Option<Duration>,
    ) -> Result<Response> {
        // A sign-in that fails on the network happens before the call (or after muster refused
        // it unread with a 401): whatever became of the login, the call itself was not acted on.
        let call_not_sent = |e: Error| match e {
            Error::Transport { .. } => Error::Transport {
                request_sent: false,
            },
            other => other,
        };
        let cookie = self.session_cookie().await.map_err(call_not_sent)?;
        let response = self
            .send_with(&method, path, &build, &cookie, timeout)
            .await?;
        let response = match screen(path, response).await? {
            Answer::Muster(response) => return Ok(response),
            Answer::NotSignedIn => {
                let cookie = self.renew_session(&cookie).await.map_err(call_not_sent)?;
                self.send_with(&method, path, &build, &cookie, timeout)
                    .await?
            }
        };
        match screen(path, response).await? {
            Answer::Muster(response) => Ok(response),
            Answer::NotSignedIn => {
                self.give_up_session().await;
                Err(Error::SignInAgain)
            }
        }
    }

    async fn send_with(
        &self,
        method: &Method,
        path: &str,
        build: &impl Fn(RequestBuilder) -> RequestBuilder,
        cookie: &Secret,
        timeout: Option<Duration>,
    ) -> Result<Response> {
        let mut value =
            HeaderValue::from_str(&format!("{}={}", paths::SESSION_COOKIE, cookie.expose()))
                .map_err(|_| {
                    Error::bad(
                        &format!("POST {}", paths::LOGIN),
                        "an unusable cookie value",
                    )
                })?;
        value.set_sensitive(true);
        let mut request = self
            .inner
            .http
            .request(method.clone(), self.url(path))
            .header(COOKIE, value);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        let mut request = build(request).build().map_err(|e| Error::transport(&e))?;
        // Without it muster may take a call for a browser's page load and answer a 303 to its
        // login page (`internal/api/auth.go`, `isDocumentNavigation`). The event stream asks
        // for `text/event-stream` itself.
        request
            .headers_mut()
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        self.inner
            .http
            .execute(request)
            .await
            .map_err(|e| Error::transport(&e))
    }

    /// `GET` a JSON resource: 200 is decoded into `T`, 404 becomes [`Error::NotFound`] naming
    /// `what`, any other status an error from muster's `{"error"}` body.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        what: impl FnOnce() -> String,
    ) -> Result<T> {
        let endpoint = format!("GET {path}");
        let response = self
            .send(
                Method::GET,
                path,
                |r| r.query(query),
                Some(self.inner.request_timeout),
            )
            .await?;
        match response.status() {
            StatusCode::OK => read_json(&endpoint, response).await,
            StatusCode::NOT_FOUND => Err(Error::NotFound { what: what() }),
            status => Err(error_from(&endpoint, status, response).await),
        }
    }

    /// `GET` a list muster writes either bare (`[…]`) or wrapped (`{"<field>": […]}`).
    pub(crate) async fn get_list<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        field: &str,
        what: impl FnOnce() -> String,
    ) -> Result<Vec<T>> {
        let value = self.get_json(path, query, what).await?;
        list_in(&format!("GET {path}"), value, field)
    }
}

/// muster's answer to a call without a valid session cookie.
const NOT_SIGNED_IN: &str = "not signed in";

/// How an answer is to be taken before anyone reads it.
enum Answer {
    /// muster answered (any status left is muster's own).
    Muster(Response),
    /// muster's JSON 401: the cookie was refused.
    NotSignedIn,
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"))
}

/// Tell muster's answers from what something else wrote. muster writes every API error as
/// JSON (`writeJSON`); Go's mux answers an unknown route with plain-text `404 page not found`;
/// a proxy or SSO in front answers redirects and HTML 401/403 pages.
async fn screen(path: &str, response: Response) -> Result<Answer> {
    let status = response.status();
    if status.is_redirection() {
        return Err(Error::NotMuster {
            status: status.as_u16(),
        });
    }
    let json = is_json(&response);
    match status {
        StatusCode::UNAUTHORIZED if json => {
            // Only the session tier's refusal is about the cookie (`refuseUnauthenticated` in
            // muster's internal/api/auth.go); another JSON 401 (the hook tier's "invalid or
            // missing hook token", the service tier's) would not be cured by signing in again,
            // which costs one of muster's 10 logins a minute.
            let bytes = response.bytes().await.map_err(|e| Error::transport(&e))?;
            let text = serde_json::from_slice::<wire::ErrorBody>(&bytes)
                .ok()
                .and_then(|b| b.error)
                .unwrap_or_default();
            if text == NOT_SIGNED_IN {
                Ok(Answer::NotSignedIn)
            } else {
                Err(Error::Server {
                    endpoint: path.to_owned(),
                    status: status.as_u16(),
                    message: if text.is_empty() {
                        "Unauthorized".to_owned()
                    } else {
                        text
                    },
                })
            }
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if !json => Err(Error::NotMuster {
            status: status.as_u16(),
        }),
        StatusCode::NOT_FOUND if !json => Err(Error::NoPluginApi),
        StatusCode::SERVICE_UNAVAILABLE if json => {
            // `requireSession` answers 503 `{"error": "the web UI is not configured for login
            // (MUSTER_UI_PASSWORD)"}` (muster `internal/api/auth.go`); other 503s are outages.
            let bytes = response.bytes().await.map_err(|e| Error::transport(&e))?;
            let text = serde_json::from_slice::<wire::ErrorBody>(&bytes)
                .ok()
                .and_then(|b| b.error)
                .unwrap_or_default();
            if text.contains("MUSTER_UI_PASSWORD") {
                Err(Error::NotConfigured)
            } else {
                Err(Error::Server {
                    endpoint: path.to_owned(),
                    status: status.as_u16(),
                    message: if text.is_empty() {
                        "Service Unavailable".to_owned()
                    } else {
                        text
                    },
                })
            }
        }
        _ => Ok(Answer::Muster(response)),
    }
}

/// A list muster wrote bare or wrapped in an object under `field`.
fn list_in<T: DeserializeOwned>(
    endpoint: &str,
    value: serde_json::Value,
    field: &str,
) -> Result<Vec<T>> {
    let list = match value {
        serde_json::Value::Array(_) => value,
        serde_json::Value::Object(mut object) => object.remove(field).ok_or_else(|| {
            Error::bad(
                endpoint,
                format!("neither a list nor an object with `{field}`"),
            )
        })?,
        // Go's encoding/json writes a nil slice as `null`: muster's empty list.
        serde_json::Value::Null => return Ok(Vec::new()),
        _ => return Err(Error::bad(endpoint, "not a list")),
    };
    if list.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(list).map_err(|e| Error::bad(endpoint, e.to_string()))
}

/// Decode a JSON body, naming the endpoint (and serde's field) when it does not fit.
pub(crate) async fn read_json<T: DeserializeOwned>(
    endpoint: &str,
    response: Response,
) -> Result<T> {
    let bytes = response.bytes().await.map_err(|e| Error::transport(&e))?;
    decode(endpoint, &bytes)
}

pub(crate) fn decode<T: DeserializeOwned>(endpoint: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::bad(endpoint, e.to_string()))
}

/// An error for an answer no caller expects, from muster's `{"error": "…"}` body when it has one.
pub(crate) async fn error_from(endpoint: &str, status: StatusCode, response: Response) -> Error {
    let bytes = response.bytes().await.unwrap_or_default();
    // muster's JSON `{"error"}`, else the sentence of a plain-text answer (Go's `http.Error`
    // writes one, as muster's own CLI shows it), trimmed, else the status's reason.
    let message = serde_json::from_slice::<wire::ErrorBody>(&bytes)
        .ok()
        .and_then(|b| b.error)
        .or_else(|| plain_text(&bytes))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("no reason").to_owned());
    Error::Server {
        endpoint: endpoint.to_owned(),
        status: status.as_u16(),
        message,
    }
}

/// The first line of a plain-text body, at most 200 characters; `None` for an empty, binary or
/// JSON body.
fn plain_text(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if text.is_empty() || text.starts_with(['{', '[', '<']) {
        return None;
    }
    let line = text.lines().next().unwrap_or_default().trim();
    Some(line.chars().take(200).collect())
}

fn normalise_base(url: Url) -> Result<Url> {
    let shown = {
        let mut shown = url.clone();
        let _ = shown.set_password(None);
        shown.to_string()
    };
    let invalid = |problem: &str| Error::InvalidUrl {
        url: shown.clone(),
        problem: problem.to_owned(),
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("only http and https are supported"));
    }
    if url.cannot_be_a_base() || url.host().is_none() {
        return Err(invalid("it has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "put the password in the password field, not in the URL",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it must not have a query or fragment"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(url: &str) -> Result<MusterClient> {
        MusterClient::new(Url::parse(url).unwrap(), "pw".into())
    }

    #[test]
    fn paths_are_joined_under_a_base_with_or_without_a_prefix() {
        let c = client("http://127.0.0.1:8105").unwrap();
        assert_eq!(
            c.url("/api/plugin/drafts").as_str(),
            "http://127.0.0.1:8105/api/plugin/drafts"
        );
        let c = client("https://example.com/muster/").unwrap();
        assert_eq!(c.url("/login").as_str(), "https://example.com/muster/login");
    }

    #[test]
    fn an_id_is_sent_as_one_encoded_path_segment() {
        let c = client("http://127.0.0.1:8105").unwrap();
        assert_eq!(
            c.url(&paths::decide("a/b?c")).as_str(),
            "http://127.0.0.1:8105/api/plugin/drafts/a%2Fb%3Fc/decide"
        );
    }

    #[test]
    fn a_password_in_the_url_is_refused_and_not_repeated() {
        let e = client("http://owner:hunter2@example.com").unwrap_err();
        assert!(matches!(e, Error::InvalidUrl { .. }));
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(client("ftp://example.com").is_err());
    }

    #[test]
    fn debug_output_shows_the_url_but_not_the_password() {
        let c =
            MusterClient::new(Url::parse("http://127.0.0.1:1").unwrap(), "hunter2".into()).unwrap();
        let shown = format!("{c:?}");
        assert!(shown.contains("127.0.0.1:1"));
        assert!(!shown.contains("hunter2"));
    }
}
