//! The Gmail client: authentication, quota, retries and error mapping shared by every call.
//!
//! API reference: <https://developers.google.com/gmail/api/reference/rest>. The resource
//! modules (`drafts`, `messages`, `history`, `profile`, `tokeninfo`) add the calls themselves.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use backon::Retryable;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::error::{Error, Result};
use crate::quota::{Method, QuotaLimiter, DEFAULT_UNITS_PER_SECOND};
use crate::retry::RetryPolicy;
use crate::token::TokenSource;
use crate::wire;

mod transfer;

pub(crate) use transfer::read_answer;
use transfer::{progressing_body, read_answer_with_progress, watch_idle, Progress};

/// Gmail's API base for the signed-in user.
pub const GOOGLE_API_BASE: &str = "https://gmail.googleapis.com/gmail/v1/users/me";
/// Google's tokeninfo endpoint.
pub const GOOGLE_TOKENINFO_URL: &str = "https://oauth2.googleapis.com/tokeninfo";

/// How a [`GmailClient`] talks to Gmail.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// API base including the user, e.g. `http://127.0.0.1:PORT/gmail/v1/users/me`.
    pub api_base: String,
    /// The tokeninfo endpoint, e.g. `http://127.0.0.1:PORT/tokeninfo`.
    pub tokeninfo_url: String,
    /// Quota budget of this account, units per second (Gmail's per-user rate is 250).
    pub units_per_second: u32,
    /// Backoff for reads.
    pub retry: RetryPolicy,
    /// Timeout of one small JSON call (lists, metadata, deletes, history), connection included.
    /// Transfers (uploads, message bodies, `format=raw` reads) have [`Self::idle_timeout`]
    /// instead: their length depends on the link, not on Google.
    pub request_timeout: Duration,
    /// How long a transfer may go without moving a byte (sent or received) before it is given
    /// up as `Transport { request_sent: true }`. However long it takes, a transfer that keeps
    /// moving is never cut.
    pub idle_timeout: Duration,
    /// Timeout of establishing the connection alone.
    pub connect_timeout: Duration,
    /// Largest JSON body a send carries; a bigger message goes through the upload endpoint.
    pub json_body_limit: usize,
}

/// Largest JSON request body sent to Gmail. Google documents 5 MB for simple uploads and owners
/// report 413 / "payload exceeds" answers for JSON bodies well below 25 MB, so anything over
/// 4 MB of JSON goes through the upload endpoint instead
/// (<https://developers.google.com/gmail/api/guides/uploads>).
pub const DEFAULT_JSON_BODY_LIMIT: usize = 4_000_000;

/// A transfer is given up after 60 s without a byte moving: the whole-request limit small
/// calls had always had, so no answer that used to arrive in time can now be cut (Google may
/// think for a while between the last byte of a large send and its answer), while a dead link
/// is still noticed within a minute.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            api_base: GOOGLE_API_BASE.to_owned(),
            tokeninfo_url: GOOGLE_TOKENINFO_URL.to_owned(),
            units_per_second: DEFAULT_UNITS_PER_SECOND,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(60),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            connect_timeout: Duration::from_secs(10),
            json_body_limit: DEFAULT_JSON_BODY_LIMIT,
        }
    }
}

impl ClientConfig {
    /// Google's endpoints with default limits.
    pub fn google() -> Self {
        ClientConfig::default()
    }

    /// The API base given on a command line (`--api-base`): Google's own tokeninfo endpoint for
    /// Google's API, otherwise `/tokeninfo` at the same origin (where the fake serves it).
    pub fn with_api_base(api_base: impl Into<String>) -> Self {
        let api_base = api_base.into();
        let tokeninfo = tokeninfo_url_for(&api_base);
        ClientConfig::with_endpoints(api_base, tokeninfo)
    }

    /// Another API base (a fake Gmail) and tokeninfo URL, default limits.
    pub fn with_endpoints(api_base: impl Into<String>, tokeninfo_url: impl Into<String>) -> Self {
        ClientConfig {
            api_base: api_base.into().trim_end_matches('/').to_owned(),
            tokeninfo_url: tokeninfo_url.into(),
            ..ClientConfig::default()
        }
    }
}

/// The tokeninfo endpoint that goes with `api_base` (see [`ClientConfig::with_api_base`]).
pub fn tokeninfo_url_for(api_base: &str) -> String {
    match url::Url::parse(api_base) {
        Ok(url) if url.host_str() != Some("gmail.googleapis.com") => {
            format!("{}/tokeninfo", url.origin().ascii_serialization())
        }
        _ => GOOGLE_TOKENINFO_URL.to_owned(),
    }
}

/// A Gmail client for one account. Cheap to clone; clones share the quota limiter.
#[derive(Clone)]
pub struct GmailClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// For small JSON calls: a whole-request timeout.
    http: reqwest::Client,
    /// For transfers: no whole-request timeout; [`watch_idle`] ends one that stops moving.
    transfer_http: reqwest::Client,
    idle_timeout: Duration,
    api_base: String,
    upload_base: String,
    json_body_limit: usize,
    tokeninfo_url: String,
    tokens: Arc<dyn TokenSource>,
    quota: Arc<QuotaLimiter>,
    retry: RetryPolicy,
}

impl std::fmt::Debug for GmailClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GmailClient")
            .field("api_base", &self.inner.api_base)
            .field("units_per_second", &self.inner.quota.units_per_second())
            .finish_non_exhaustive()
    }
}

/// One call to a Gmail method.
#[derive(Clone)]
pub(crate) struct Call {
    pub method: Method,
    pub http: reqwest::Method,
    /// Path below the API base (or the upload base), starting with `/`.
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Body>,
    /// Carries or fetches a whole message (an upload, a `format=raw` read): timed by progress,
    /// not by its total length.
    pub transfer: bool,
}

/// What a call carries.
#[derive(Clone)]
pub(crate) enum Body {
    /// A JSON resource, to the API base.
    Json(serde_json::Value),
    /// A media upload (`uploadType=multipart`): a `multipart/related` body of the resource's
    /// JSON and the media, to the upload base (`/upload/gmail/v1/…`).
    /// <https://developers.google.com/gmail/api/guides/uploads#multipart>
    Related {
        /// The boundary named in the `Content-Type`.
        boundary: String,
        /// The whole body, both parts framed.
        bytes: Vec<u8>,
    },
}

impl Call {
    /// A call of `method` as `http` to `path`, with no query and no body yet.
    pub fn new(method: Method, http: reqwest::Method, path: impl Into<String>) -> Self {
        Call {
            method,
            http,
            path: path.into(),
            query: Vec::new(),
            body: None,
            transfer: false,
        }
    }

    /// This call moves a whole message (see [`Call::transfer`]).
    pub fn transfer(mut self) -> Self {
        self.transfer = true;
        self
    }

    pub fn get(method: Method, path: impl Into<String>) -> Self {
        Call::new(method, reqwest::Method::GET, path)
    }

    pub fn body(mut self, body: Body) -> Self {
        self.body = Some(body);
        self
    }

    pub fn query(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.query.push((name, value.into()));
        self
    }

    /// A `format=metadata` read answering only the `headers` named (all of them when empty).
    pub fn metadata(method: Method, path: impl Into<String>, headers: &[&str]) -> Self {
        headers.iter().fold(
            Call::get(method, path).query("format", "metadata"),
            |call, name| call.query("metadataHeaders", *name),
        )
    }
}

impl GmailClient {
    /// A client with its own quota limiter of `config.units_per_second`.
    pub fn new(config: ClientConfig, tokens: Arc<dyn TokenSource>) -> Result<Self> {
        let quota = Arc::new(QuotaLimiter::new(config.units_per_second));
        GmailClient::with_quota(config, tokens, quota)
    }

    /// A client sharing `quota` (e.g. with another client of the same account).
    pub fn with_quota(
        config: ClientConfig,
        tokens: Arc<dyn TokenSource>,
        quota: Arc<QuotaLimiter>,
    ) -> Result<Self> {
        let build = |builder: reqwest::ClientBuilder| {
            builder
                .connect_timeout(config.connect_timeout)
                .build()
                .map_err(|e| Error::BadResponse {
                    detail: format!("cannot build the HTTP client: {e}"),
                })
        };
        let http = build(reqwest::Client::builder().timeout(config.request_timeout))?;
        let transfer_http = build(reqwest::Client::builder())?;
        let api_base = config.api_base.trim_end_matches('/').to_owned();
        Ok(GmailClient {
            inner: Arc::new(Inner {
                http,
                transfer_http,
                idle_timeout: config.idle_timeout,
                upload_base: upload_base_for(&api_base),
                json_body_limit: config.json_body_limit,
                api_base,
                tokeninfo_url: config.tokeninfo_url,
                tokens,
                quota,
                retry: config.retry,
            }),
        })
    }

    /// The largest JSON body this client sends (see [`ClientConfig::json_body_limit`]).
    pub(crate) fn json_body_limit(&self) -> usize {
        self.inner.json_body_limit
    }

    /// The account's quota limiter.
    pub fn quota(&self) -> &Arc<QuotaLimiter> {
        &self.inner.quota
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }

    pub(crate) fn tokeninfo_url(&self) -> &str {
        &self.inner.tokeninfo_url
    }

    pub(crate) fn tokens(&self) -> &Arc<dyn TokenSource> {
        &self.inner.tokens
    }

    /// Run `call` and parse its JSON answer.
    pub(crate) async fn execute<T: DeserializeOwned>(&self, call: &Call) -> Result<T> {
        let body = self.execute_raw(call).await?;
        serde_json::from_slice(&body).map_err(|e| Error::UnreadableAnswer {
            method: call.method.name(),
            detail: format!("unexpected JSON: {e}"),
        })
    }

    /// Every item of a `drafts.list` or `messages.list` call, each turned by `each` as its page
    /// comes, following `nextPageToken` until Gmail names no further page.
    pub(crate) async fn list_all<T: DeserializeOwned, U>(
        &self,
        call: Call,
        mut each: impl FnMut(T) -> Result<U>,
    ) -> Result<Vec<U>> {
        let mut found = Vec::new();
        let mut page_token: Option<String> = None;
        loop {
            let mut page_call = call.clone();
            if let Some(token) = page_token.take() {
                page_call = page_call.query("pageToken", token);
            }
            let page: wire::ListPage<T> = self.execute(&page_call).await?;
            for item in page.items {
                found.push(each(item)?);
            }
            match page.next_page_token {
                Some(token) if !token.is_empty() => page_token = Some(token),
                _ => return Ok(found),
            }
        }
    }

    /// Run `call` with quota, one token refresh on 401, and retries when it is a read.
    pub(crate) async fn execute_raw(&self, call: &Call) -> Result<Vec<u8>> {
        let token = Mutex::new(token_for_request(self.inner.tokens.access_token().await)?);
        let refreshed = AtomicBool::new(false);
        let attempt = || self.attempt(call, &token, &refreshed);
        if !call.method.is_read() {
            return attempt().await;
        }
        attempt
            .retry(self.inner.retry.backoff())
            .sleep(tokio::time::sleep)
            .when(Error::is_retryable)
            .adjust(RetryPolicy::wait_after)
            .notify(|err, wait| {
                tracing::debug!(
                    method = call.method.name(),
                    wait_ms = wait.as_millis() as u64,
                    error = %err,
                    "retrying gmail read"
                );
            })
            .await
    }

    /// One attempt of `call` under quota. A 401 means Google did nothing with the request, so
    /// even a send is repeated once, with a fresh token, over all attempts of the call.
    async fn attempt(
        &self,
        call: &Call,
        token: &Mutex<String>,
        refreshed: &AtomicBool,
    ) -> Result<Vec<u8>> {
        self.inner.quota.acquire(call.method).await;
        let current = token.lock().await.clone();
        match self.send_once(call, &current).await {
            Err(Error::Unauthorized) if !refreshed.swap(true, Ordering::Relaxed) => {
                let fresh = token_for_request(self.inner.tokens.refresh_after_rejection().await)?;
                *token.lock().await = fresh.clone();
                self.inner.quota.acquire(call.method).await;
                self.send_once(call, &fresh).await
            }
            answer => answer,
        }
    }

    async fn send_once(&self, call: &Call, token: &str) -> Result<Vec<u8>> {
        if !call.transfer {
            let request = self.request(&self.inner.http, call, token, None)?;
            let response = request.send().await.map_err(|e| Error::from_reqwest(&e))?;
            return read_answer(response).await;
        }
        let progress = Progress::new();
        let request = self.request(&self.inner.transfer_http, call, token, Some(&progress))?;
        watch_idle(
            call.method.name(),
            &progress,
            self.inner.idle_timeout,
            async {
                let response = request.send().await.map_err(|e| Error::from_reqwest(&e))?;
                progress.moved();
                read_answer_with_progress(response, Some(&progress)).await
            },
        )
        .await
    }

    /// The HTTP request of `call`; with `progress`, its body is handed over in pieces, each
    /// recorded as progress when the connection takes it.
    fn request(
        &self,
        http: &reqwest::Client,
        call: &Call,
        token: &str,
        progress: Option<&Progress>,
    ) -> Result<reqwest::RequestBuilder> {
        let base = match &call.body {
            Some(Body::Related { .. }) => &self.inner.upload_base,
            _ => &self.inner.api_base,
        };
        let url = format!("{base}{}", call.path);
        let mut request = http
            .request(call.http.clone(), url)
            .bearer_auth(token)
            // Every JSON answer, including errors, as Google's JSON (not an HTML error page).
            .header(reqwest::header::ACCEPT, "application/json")
            .query(&call.query);
        let (content_type, bytes) = match &call.body {
            None => return Ok(request),
            Some(Body::Json(body)) => (
                "application/json".to_owned(),
                serde_json::to_vec(body).map_err(|e| Error::BadResponse {
                    detail: format!("cannot encode the request: {e}"),
                })?,
            ),
            Some(Body::Related { boundary, bytes }) => {
                request = request.query(&[("uploadType", "multipart")]);
                (
                    format!("multipart/related; boundary={boundary}"),
                    bytes.clone(),
                )
            }
        };
        request = request.header(reqwest::header::CONTENT_TYPE, content_type);
        Ok(match progress {
            None => request.body(bytes),
            // The length is known: Google gets a Content-Length, not a chunked body.
            Some(progress) => request
                .header(reqwest::header::CONTENT_LENGTH, bytes.len())
                .body(progressing_body(bytes, progress.clone())),
        })
    }
}

/// A token for the next Gmail request. A network failure while refreshing it happened before
/// the Gmail request existed, so for the caller that request was certainly not sent (a send
/// must not become "uncertain" because the token endpoint dropped a connection).
pub(crate) fn token_for_request(token: Result<String>) -> Result<String> {
    token.map_err(|e| match e {
        Error::Transport { .. } => Error::Transport {
            request_sent: false,
        },
        other => other,
    })
}

/// The upload base that goes with `api_base`: `…/upload/gmail/v1/users/me` for
/// `…/gmail/v1/users/me` (Google's `rootUrl` + `mediaUpload.protocols.simple.path`).
pub(crate) fn upload_base_for(api_base: &str) -> String {
    match api_base.find("/gmail/v1/") {
        Some(at) => format!("{}/upload{}", &api_base[..at], &api_base[at..]),
        None => format!("{api_base}/upload"),
    }
}

/// RFC 3986 section 2.3's unreserved characters: everything else in an id is encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encode an id for use as one path segment.
pub(crate) fn segment(id: &str) -> String {
    utf8_percent_encode(id, UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_api_base_finds_tokeninfo_on_the_same_origin() {
        assert_eq!(
            tokeninfo_url_for("http://127.0.0.1:4001/gmail/v1/users/me"),
            "http://127.0.0.1:4001/tokeninfo"
        );
        assert_eq!(tokeninfo_url_for(GOOGLE_API_BASE), GOOGLE_TOKENINFO_URL);
    }

    #[test]
    fn uploads_go_to_the_upload_base_of_the_same_api() {
        assert_eq!(
            upload_base_for(GOOGLE_API_BASE),
            "https://gmail.googleapis.com/upload/gmail/v1/users/me"
        );
        assert_eq!(
            upload_base_for("http://127.0.0.1:4001/gmail/v1/users/me"),
            "http://127.0.0.1:4001/upload/gmail/v1/users/me"
        );
    }

    #[test]
    fn ids_cannot_escape_their_path_segment() {
        assert_eq!(segment("r-12_3"), "r-12_3");
        assert_eq!(segment("../x?y"), "..%2Fx%3Fy");
    }
}
