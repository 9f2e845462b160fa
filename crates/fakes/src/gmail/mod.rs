//! Fake Gmail: the REST API Countersign uses, Google's OAuth endpoints, and a control API.
//!
//! Faithful to Google, not to our client: paths, parameters, JSON shapes, scopes and quota
//! units follow the discovery document for Gmail v1 (`gmail/v1/gmail-api.json`), error bodies
//! follow <https://developers.google.com/gmail/api/guides/handle-errors>. Tests drive it either
//! over HTTP (`/_control/…`, see [`control`]) or in process through [`FakeGmail`]'s methods.

mod control;
mod errors;
mod labels;
mod mime;
mod oauth;
mod rest;
mod scopes;
mod seed;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fidelity;
#[cfg(test)]
mod tests_labels;
mod throttle;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use serde_json::json;

pub use state::{BeforeSend, LoggedRequest, SentRecord};

use crate::server::{self, ServerHandle};
use crate::Seed;

/// OAuth client id the fake accepts.
pub const CLIENT_ID: &str = "countersign-fake.apps.googleusercontent.com";
/// OAuth client secret the fake accepts (not a secret: it only opens the fake).
pub const CLIENT_SECRET: &str = "GOCSPX-fake-client-secret";
/// The scope Countersign asks for.
pub const SCOPE_GMAIL_MODIFY: &str = scopes::MODIFY;

/// Largest JSON request body the fake accepts by default: Google's simple-upload limit, 5 MB
/// (<https://developers.google.com/gmail/api/guides/uploads>); bigger messages must go through
/// the upload endpoint.
pub const DEFAULT_JSON_BODY_LIMIT: usize = 5 * 1024 * 1024;
/// Largest message the upload endpoint of `drafts.send` accepts: the discovery document's
/// `mediaUpload.maxSize`, "35MB".
pub const MAX_UPLOAD_BYTES: usize = 35 * 1024 * 1024;
/// Largest request body the fake reads at all (the control API files 30 MB drafts as base64).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// How to start a [`FakeGmail`].
#[derive(Clone, Debug)]
pub struct GmailConfig {
    /// Where to listen (port 0 picks one).
    pub addr: SocketAddr,
    /// What the mailbox holds at start.
    pub seed: Seed,
    /// Per-user quota, units per minute (Gmail: 15,000).
    pub quota_units_per_minute: u32,
    /// The mailbox's address.
    pub email: String,
    /// Scopes the consent page grants instead of those asked for (a user unticking boxes).
    pub grant_scopes: Option<Vec<String>>,
}

impl Default for GmailConfig {
    fn default() -> Self {
        GmailConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: Seed::Empty,
            quota_units_per_minute: 15_000,
            email: "owner@example.com".to_owned(),
            grant_scopes: None,
        }
    }
}

/// A draft filed through the control API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiledDraft {
    /// Draft id (stable).
    pub id: String,
    /// Its current message id.
    pub message_id: String,
    /// Its thread.
    pub thread_id: String,
}

/// How an injected failure answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// HTTP status.
    pub status: u16,
    /// Google `reason`, e.g. `rateLimitExceeded` or `userRateLimitExceeded` with 403.
    pub reason: Option<String>,
    /// Replaces Google's default message.
    pub message: Option<String>,
    /// Adds "Retry after <now + this>" to the message.
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// Google's answer for `status`.
    pub fn status(status: u16) -> Self {
        Failure {
            status,
            reason: None,
            message: None,
            retry_after: None,
        }
    }

    /// With Google's `reason`.
    pub fn reason(mut self, reason: &str) -> Self {
        self.reason = Some(reason.to_owned());
        self
    }

    /// With a "Retry after" time this far ahead.
    pub fn retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
        self
    }
}

/// A call held by [`FakeGmail::hold_next`]; it answers once released or dropped.
#[derive(Debug)]
pub struct HeldCall {
    release: tokio::sync::watch::Sender<bool>,
}

impl HeldCall {
    /// Let the held call answer.
    pub fn release(self) {
        self.release.send_replace(true);
    }
}

impl Drop for HeldCall {
    fn drop(&mut self) {
        self.release.send_replace(true);
    }
}

/// Tokens issued without going through consent.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedTokens {
    /// Bearer token for the REST API.
    pub access_token: String,
    /// Refresh token for `POST /token`.
    pub refresh_token: String,
}

impl std::fmt::Debug for IssuedTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IssuedTokens(<redacted>)")
    }
}

pub(crate) struct Shared {
    state: Mutex<state::State>,
    grant_scopes: Mutex<Option<Vec<String>>>,
    client_id: String,
    client_secret: String,
    server: OnceLock<ServerHandle>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, state::State> {
        // A panicking handler must not take the whole fake down with a poisoned lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn file_draft(&self, raw: Vec<u8>, thread_id: Option<String>) -> FiledDraft {
        let (id, m) = self.lock().create_draft(raw, thread_id);
        FiledDraft {
            id,
            message_id: m.id,
            thread_id: m.thread_id,
        }
    }

    fn update_draft(&self, id: &str, raw: Vec<u8>, thread_id: Option<String>) -> Option<String> {
        self.lock()
            .update_draft(id, raw, thread_id)
            .ok()
            .map(|m| m.id)
    }

    fn delete_draft(&self, id: &str) -> bool {
        self.lock().delete_draft(id).is_ok()
    }

    fn add_message(
        &self,
        raw: Vec<u8>,
        thread_id: Option<String>,
        labels: Vec<String>,
    ) -> (String, String) {
        let m = self.lock().add_inbox_message(raw, thread_id, labels);
        (m.id, m.thread_id)
    }

    fn set_delay(&self, method: &str, delay: Duration, times: Option<u32>) {
        self.lock().delay.insert(
            method.to_owned(),
            state::DelayFault {
                delay,
                remaining: times,
            },
        );
    }

    fn clear_faults(&self) {
        let mut s = self.lock();
        s.fail.clear();
        s.delay.clear();
        s.drop.clear();
        s.garble.clear();
        s.vanished_drafts_answer_400 = false;
        s.replace_message_id_on_send = false;
        s.client_deleted = false;
        s.throttle_bytes_per_second = None;
    }
}

/// A running fake Gmail. Cheap to clone; clones control the same fake.
#[derive(Clone)]
pub struct FakeGmail {
    shared: Arc<Shared>,
    server: ServerHandle,
}

impl std::fmt::Debug for FakeGmail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGmail")
            .field("base_url", &self.base_url())
            .finish_non_exhaustive()
    }
}

impl FakeGmail {
    /// Bind `config.addr` and serve.
    pub async fn start(config: GmailConfig) -> std::io::Result<FakeGmail> {
        let mut mailbox = state::State::new(config.email.clone(), config.quota_units_per_minute);
        if config.seed == Seed::Demo {
            seed::demo(&mut mailbox);
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(mailbox),
            grant_scopes: Mutex::new(config.grant_scopes),
            client_id: CLIENT_ID.to_owned(),
            client_secret: CLIENT_SECRET.to_owned(),
            server: OnceLock::new(),
        });
        let router = rest::routes()
            .layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                throttle::pace,
            ))
            .merge(oauth::routes())
            .merge(control::routes())
            .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .with_state(shared.clone());
        let server = server::serve(router, config.addr).await?;
        let _ = shared.server.set(server.clone());
        Ok(FakeGmail { shared, server })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The API base a client is configured with: `<base>/gmail/v1/users/me`.
    pub fn api_base(&self) -> String {
        format!("{}/gmail/v1/users/me", self.base_url())
    }

    /// The consent page (`auth_uri`).
    pub fn auth_url(&self) -> String {
        format!("{}/o/oauth2/auth", self.base_url())
    }

    /// The token endpoint (`token_uri`).
    pub fn token_url(&self) -> String {
        format!("{}/token", self.base_url())
    }

    /// The tokeninfo endpoint.
    pub fn tokeninfo_url(&self) -> String {
        format!("{}/tokeninfo", self.base_url())
    }

    /// A Google "installed" `client_secret.json` pointing at this fake.
    pub fn client_secret_json(&self) -> serde_json::Value {
        json!({
            "installed": {
                "client_id": CLIENT_ID,
                "project_id": "countersign-fake",
                "auth_uri": self.auth_url(),
                "token_uri": self.token_url(),
                "auth_provider_x509_cert_url": format!("{}/oauth2/v1/certs", self.base_url()),
                "client_secret": CLIENT_SECRET,
                "redirect_uris": ["http://localhost"],
            }
        })
    }

    /// The server handle (online switch, shutdown).
    pub fn server(&self) -> &ServerHandle {
        &self.server
    }

    /// Refuse (`false`) or accept (`true`) every connection.
    pub fn set_online(&self, online: bool) {
        self.server.set_online(online);
    }

    /// File a draft as an agent would (`raw` is the RFC 5322 message).
    pub fn file_draft(&self, raw: &[u8], thread_id: Option<&str>) -> FiledDraft {
        self.shared
            .file_draft(raw.to_vec(), thread_id.map(str::to_owned))
    }

    /// Replace a draft's content; its new message id, or `None` for an unknown draft.
    pub fn update_draft(&self, id: &str, raw: &[u8], thread_id: Option<&str>) -> Option<String> {
        self.shared
            .update_draft(id, raw.to_vec(), thread_id.map(str::to_owned))
    }

    /// The agent updates draft `id` to `raw` right after the next `drafts.update` of it commits,
    /// before the caller can read it back: real Gmail serves concurrent writers this way (an
    /// update has no precondition, and the agent's client may write at any moment).
    pub fn agent_updates_after_next_update(&self, id: &str, raw: &[u8]) {
        self.shared
            .lock()
            .agent_update_after_update
            .insert(id.to_owned(), raw.to_vec());
    }

    /// Delete a draft; whether it existed.
    pub fn delete_draft(&self, id: &str) -> bool {
        self.shared.delete_draft(id)
    }

    /// The message a draft holds now, byte for byte; `None` for an unknown draft.
    pub fn draft_raw(&self, id: &str) -> Option<Vec<u8>> {
        let state = self.shared.lock();
        let draft = state.drafts.get(id)?;
        state.messages.get(&draft.message_id).map(|m| m.raw.clone())
    }

    /// Ids of the drafts now in the mailbox, newest first, with their message ids.
    pub fn drafts(&self) -> Vec<FiledDraft> {
        self.shared
            .lock()
            .drafts_newest_first()
            .into_iter()
            .map(|(id, m)| FiledDraft {
                id: id.clone(),
                message_id: m.id.clone(),
                thread_id: m.thread_id.clone(),
            })
            .collect()
    }

    /// Add a received message to the inbox; its (message id, thread id).
    pub fn add_inbox_message(&self, raw: &[u8], thread_id: Option<&str>) -> (String, String) {
        self.shared.add_message(
            raw.to_vec(),
            thread_id.map(str::to_owned),
            vec!["INBOX".into(), "UNREAD".into()],
        )
    }

    /// Add a message with these labels (`["TRASH"]`, `["SPAM"]`, `["SENT"]`…) as another mail
    /// program or Gmail itself would have put it there; its (message id, thread id).
    pub fn add_message_with_labels(
        &self,
        raw: &[u8],
        thread_id: Option<&str>,
        labels: &[&str],
    ) -> (String, String) {
        self.shared.add_message(
            raw.to_vec(),
            thread_id.map(str::to_owned),
            labels.iter().map(|l| (*l).to_owned()).collect(),
        )
    }

    /// Move a message to the Trash, as the owner does in Gmail (see `State::trash_message`);
    /// false when there is no such message.
    pub fn trash_message(&self, id: &str) -> bool {
        self.shared.lock().trash_message(id)
    }

    /// Everything sent through `drafts.send`, in order, with the bytes as sent.
    pub fn sent_messages(&self) -> Vec<SentRecord> {
        self.shared.lock().sent.clone()
    }

    /// How many `drafts.send` requests for `draft_id` reached Gmail's send logic — sent, or
    /// answered that the draft is gone. "Sent exactly once" is this being 1: the fake deletes a
    /// draft on its first send, so [`FakeGmail::send_count`] can never say 2.
    pub fn send_requests(&self, draft_id: &str) -> u32 {
        self.shared
            .lock()
            .send_requests_per_draft
            .get(draft_id)
            .copied()
            .unwrap_or(0)
    }

    /// How often `draft_id` was sent (by any client, Gmail's own web page included).
    pub fn send_count(&self, draft_id: &str) -> u32 {
        self.shared
            .lock()
            .sends_per_draft
            .get(draft_id)
            .copied()
            .unwrap_or(0)
    }

    /// Every request to the Google endpoints so far.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.shared.lock().log.clone()
    }

    /// How many requests called `method` (e.g. `drafts.get`).
    pub fn request_count(&self, method: &str) -> usize {
        self.shared
            .lock()
            .log
            .iter()
            .filter(|r| r.method == method)
            .count()
    }

    /// Forget the request log.
    pub fn clear_requests(&self) {
        self.shared.lock().log.clear();
    }

    /// Fail the next `times` calls of `method` with `failure` (before any change).
    pub fn fail_next(&self, method: &str, times: u32, failure: Failure) {
        self.shared.lock().fail.insert(
            method.to_owned(),
            state::FailFault {
                remaining: times,
                status: failure.status,
                reason: failure.reason,
                message: failure.message,
                retry_after: failure.retry_after,
            },
        );
    }

    /// Delay calls of `method` by `delay`: the next `times`, or all when `None`.
    pub fn delay(&self, method: &str, delay: Duration, times: Option<u32>) {
        self.shared.set_delay(method, delay, times);
    }

    /// Hold the answer to the next call of `method` (its change is made first) until the
    /// returned handle is released or dropped: a test that needs a call in flight waits for
    /// the moment it needs, not for a guessed duration.
    pub fn hold_next(&self, method: &str) -> HeldCall {
        let (release, held) = tokio::sync::watch::channel(false);
        self.shared.lock().held.insert(method.to_owned(), held);
        HeldCall { release }
    }

    /// For the next `times` calls of `method`: do the work, then close the connection without
    /// answering.
    pub fn drop_after_commit(&self, method: &str, times: u32) {
        self.shared.lock().drop.insert(method.to_owned(), times);
    }

    /// For the next `times` calls of `method`: do the work, then answer 200 with a body cut
    /// short (what a proxy or a dropped stream leaves): the client cannot read the answer.
    pub fn garble_after_commit(&self, method: &str, times: u32) {
        self.shared.lock().garble.insert(method.to_owned(), times);
    }

    /// Whether a draft that was deleted or sent answers `drafts.get` and `drafts.send` with 400
    /// "Invalid draft" (`invalidArgument`) instead of 404, as Gmail is reported to do.
    pub fn set_vanished_drafts_answer_400(&self, on: bool) {
        self.shared.lock().vanished_drafts_answer_400 = on;
    }

    /// Whether `drafts.send` gives every sent message a `Message-ID` of Gmail's own, replacing
    /// the one the client sent (reported of Gmail).
    pub fn set_replace_message_id_on_send(&self, on: bool) {
        self.shared.lock().replace_message_id_on_send = on;
    }

    /// Sets Google's clock `offset_ms` from this computer's: every message written from now on
    /// is dated (`internalDate`) by it. `-180_000`: the computer's clock runs three minutes fast.
    pub fn set_clock_offset_ms(&self, offset_ms: i64) {
        self.shared.lock().clock_offset_ms = offset_ms;
    }

    /// Whether the OAuth client was deleted in Cloud Console: the token endpoint then answers
    /// every request 401 `{"error":"deleted_client","error_description":"The OAuth client was
    /// deleted."}`. Off again stands for the owner's new client.
    pub fn set_client_deleted(&self, deleted: bool) {
        self.shared.lock().client_deleted = deleted;
    }

    /// Right before the next `drafts.send` of draft `id` (through the API), another client
    /// does `action` to it: the agent updates it, someone deletes it, or the owner sends it
    /// from Gmail. The send then goes on as Gmail would (with a `raw`, those bytes are sent).
    pub fn before_next_send(&self, id: &str, action: BeforeSend) {
        self.shared
            .lock()
            .before_next_send
            .insert(id.to_owned(), action);
    }

    /// Move request and answer bodies of the Gmail REST and upload endpoints at most
    /// `bytes_per_second` (a slow link); `Some(0)` moves nothing while the connection stays open
    /// (a dead link); `None` is full speed. Applies to requests arriving from now on.
    pub fn throttle_bytes_per_second(&self, bytes_per_second: Option<u64>) {
        self.shared.lock().throttle_bytes_per_second = bytes_per_second;
    }

    /// Remove every injected fault (the switches and the throttle above included).
    pub fn clear_faults(&self) {
        self.shared.clear_faults();
    }

    /// Revoke every refresh token (and the access tokens from them).
    pub fn revoke_refresh_tokens(&self) {
        self.shared.lock().revoke_all();
    }

    /// Let refresh tokens live `lifetime` from when they were issued (`None`: until revoked),
    /// as Google's do for a client in "Testing" status (7 days); older ones answer
    /// `invalid_grant`.
    pub fn set_refresh_token_lifetime(&self, lifetime: Option<Duration>) {
        self.shared.lock().refresh_token_lifetime = lifetime;
    }

    /// Make the consent page answer with `error` (e.g. `access_denied`: the owner pressed
    /// Cancel) instead of a code; `None` approves again.
    pub fn set_consent_error(&self, error: Option<&str>) {
        self.shared.lock().consent_error = error.map(str::to_owned);
    }

    /// Whether `history.list` reports deleted messages (on by default). Off, a draft deleted
    /// or sent leaves no trace in `history.list?labelId=DRAFT`.
    pub fn set_history_reports_deletions(&self, reports: bool) {
        self.shared.lock().history_reports_deletions = reports;
    }

    /// Whether `history.list` records carry only `messages` (off by default): on, no record
    /// says `messagesAdded` or `messagesDeleted`.
    pub fn set_history_only_messages(&self, only: bool) {
        self.shared.lock().history_only_messages = only;
    }

    /// Send a draft from Gmail's own side (the owner pressing Send in Gmail); the sent
    /// message's id, or `None` for an unknown draft or one Gmail would not send.
    pub fn send_draft_in_gmail(&self, id: &str) -> Option<String> {
        self.shared
            .lock()
            .send_draft(id, None, None)
            .ok()
            .map(|m| m.id)
    }

    /// Every access and refresh token issued so far (to check that none is stored in clear).
    pub fn issued_tokens(&self) -> Vec<String> {
        let state = self.shared.lock();
        state
            .access_tokens
            .keys()
            .chain(state.refresh_tokens.keys())
            .cloned()
            .collect()
    }

    /// Make every access token expired, so clients must refresh.
    pub fn expire_access_tokens(&self) {
        self.shared.lock().expire_access_tokens();
    }

    /// Issue tokens for `scopes` without the consent page.
    pub fn issue_tokens(&self, scopes: &[&str]) -> IssuedTokens {
        let (access, refresh) = self
            .shared
            .lock()
            .issue(scopes.iter().map(|s| (*s).to_owned()).collect(), true);
        IssuedTokens {
            access_token: access,
            refresh_token: refresh.unwrap_or_default(),
        }
    }

    /// Change which scopes consent grants (`None`: those asked for).
    pub fn set_grant_scopes(&self, scopes: Option<Vec<String>>) {
        *self
            .shared
            .grant_scopes
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = scopes;
    }

    /// Forget history: every earlier start id now answers 404.
    pub fn expire_history(&self) {
        self.shared.lock().expire_history();
    }

    /// The mailbox's current history id.
    pub fn history_id(&self) -> u64 {
        self.shared.lock().history_id
    }
}
