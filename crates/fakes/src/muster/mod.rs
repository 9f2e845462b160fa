//! Fake muster: the owner API Countersign calls (`docs/muster.md` is the contract), served over
//! real HTTP on 127.0.0.1 by [`crate::server::serve`].
//!
//! - `POST /login` with the configured password (303 + `muster_session` cookie; 401 wrong
//!   password; 429 after 10 attempts a minute; 503 when no password is configured);
//! - the cookie is required on every owner route (401 `{"error":"not signed in"}`);
//! - `/api/plugin/drafts`, `/api/plugin/drafts/{id}`, `/api/plugin/drafts/{id}/decide`,
//!   `/api/plugin/routes`, `/api/plugin/messages` and `/events`, with muster's state rules
//!   (see `state.rs`);
//! - a control API under `/_control/` (see `control.rs`) and the same methods in-process on
//!   [`FakeMuster`], to play the plugin and the sessions and to inject faults.

mod broadcast;
mod control;
mod events;
mod faults;
mod owner;
mod seed;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use tokio::sync::watch;

pub use faults::{FaultAction, LoggedRequest};
pub use state::{
    ApiError, CheckVerdict, Relayed, WireStyle, CHIEF_SESSION, MAX_ROUTE_REDRAFTS,
    MIN_PASSWORD_LEN, SESSION_TTL,
};

use crate::server::ServerHandle;
use broadcast::{Broadcaster, Noise};
use faults::Faults;
use state::Store;

/// How to start a fake muster.
#[derive(Clone, Debug)]
pub struct MusterConfig {
    /// Where to listen; port 0 picks a free one.
    pub addr: SocketAddr,
    /// What it holds at start.
    pub seed: crate::Seed,
    /// The owner password `POST /login` accepts; empty or under [`MIN_PASSWORD_LEN`]
    /// characters means "no password configured" (503), as in muster.
    pub password: String,
}

impl Default for MusterConfig {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: crate::Seed::Empty,
            password: "demo-password".to_owned(),
        }
    }
}

/// What the handlers share.
pub(crate) struct Shared {
    store: Mutex<Store>,
    faults: Mutex<Faults>,
    log: Mutex<Vec<LoggedRequest>>,
    /// Requests by method and path as they arrive, before any fault or answer.
    arrivals: faults::Arrivals,
    events: Broadcaster,
    noise: Noise,
    cut: watch::Sender<u64>,
    /// A proxy in front: each stream is closed after this long without a byte (`None`: none).
    proxy_read_timeout: Mutex<Option<Duration>>,
    server: OnceLock<ServerHandle>,
}

impl Shared {
    fn store(&self) -> MutexGuard<'_, Store> {
        // A panicking handler must not take the whole fake down with a poisoned lock.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cut_event_streams(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

/// A running fake muster.
#[derive(Clone)]
pub struct FakeMuster {
    shared: Arc<Shared>,
    server: ServerHandle,
    password: String,
}

impl std::fmt::Debug for FakeMuster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password is a demo credential, but Debug output still never carries secrets.
        f.debug_struct("FakeMuster")
            .field("url", &self.server.base_url())
            .finish_non_exhaustive()
    }
}

fn router(shared: Arc<Shared>) -> Router {
    let owner = Router::new()
        .route("/api/plugin/drafts", get(owner::list_drafts))
        .route("/api/plugin/drafts/{id}", get(owner::get_draft))
        .route("/api/plugin/drafts/{id}/decide", post(owner::decide))
        .route("/api/plugin/routes", get(owner::list_routes))
        .route("/api/plugin/messages", get(owner::list_messages))
        .route("/events", get(events::events))
        .route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            owner::require_session,
        ));
    Router::new()
        .route("/login", post(owner::login))
        .route("/logout", post(owner::logout))
        .merge(owner)
        .merge(control::router())
        // Go's mux: an unknown route is plain text (muster `internal/api/server.go`).
        .fallback(|| async { owner::page_not_found() })
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            faults::observe,
        ))
        .with_state(shared)
}

impl FakeMuster {
    /// Start serving; the seed is filed before the first request can arrive.
    pub async fn start(config: MusterConfig) -> std::io::Result<FakeMuster> {
        let events = Broadcaster::default();
        let (cut, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::new(config.password.clone(), events.clone())),
            faults: Mutex::new(Faults::default()),
            log: Mutex::new(Vec::new()),
            arrivals: faults::Arrivals::default(),
            events,
            noise: Noise::default(),
            cut,
            proxy_read_timeout: Mutex::new(None),
            server: OnceLock::new(),
        });
        if config.seed == crate::Seed::Demo {
            seed::demo(&mut shared.store()).map_err(std::io::Error::other)?;
        }
        let server = crate::server::serve(router(shared.clone()), config.addr).await?;
        let _ = shared.server.set(server.clone());
        Ok(FakeMuster {
            shared,
            server,
            password: config.password,
        })
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> String {
        self.server.base_url()
    }

    /// The owner password `POST /login` accepts.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The server handle (address, online switch, shutdown).
    pub fn server(&self) -> &ServerHandle {
        &self.server
    }

    // ---- playing the plugin and the sessions --------------------------------------------

    /// Mint a plugin; with `draft_checks` its drafts start `checkState: "awaiting"`.
    pub fn create_plugin(&self, name: &str, draft_checks: bool) -> Result<(), ApiError> {
        self.shared.store().create_plugin(name, draft_checks)
    }

    /// The plugin relays a message to `session`: a message and its first route.
    pub fn relay_message(
        &self,
        plugin: &str,
        session: &str,
        from: &str,
        subject: &str,
        snippet: &str,
    ) -> Result<Relayed, ApiError> {
        self.shared
            .store()
            .relay_message(plugin, session, from, subject, snippet)
    }

    /// The plugin gives the full text of a relayed message: its drafts then carry
    /// `inReplyTo.text` (an optional field of the contract, see `docs/muster.md`).
    pub fn set_message_text(&self, message_id: &str, text: &str) -> Result<(), ApiError> {
        self.shared.store().set_message_text(message_id, text)
    }

    /// The session files a reply draft on an open route (also how a redraft is filed, on the
    /// `redraft` or `fallback` route). Returns the draft id.
    pub fn file_draft(&self, route_id: &str, text: &str) -> Result<String, ApiError> {
        self.shared.store().file_draft(route_id, text)
    }

    /// A fault: the draft's text changes without a new `updatedAt` (muster's version stamp),
    /// as a muster whose stamps are coarser than its writes would serve it.
    pub fn rewrite_text_keeping_stamp(&self, draft_id: &str, text: &str) -> Result<(), ApiError> {
        self.shared
            .store()
            .rewrite_text_keeping_stamp(draft_id, text)
    }

    /// A fault: from now on `draft_id` is written with the fields of `set` (a JSON object)
    /// replaced and the fields named in `drop` left out — a newer muster's state the contract
    /// does not list (`{"state": "archived"}`), or a broken record (`updatedAt` missing). Only
    /// its JSON changes; the fake keeps treating the draft as it is.
    pub fn write_draft_oddly(
        &self,
        draft_id: &str,
        set: serde_json::Value,
        drop: &[&str],
    ) -> Result<(), ApiError> {
        let odd = state::OddFields {
            set: set.as_object().cloned().unwrap_or_default(),
            drop: drop.iter().map(|f| f.to_string()).collect(),
        };
        self.shared.store().write_draft_oddly(draft_id, odd)
    }

    /// The chief files a reply to `message_id` itself (muster's `reply_draft`): a draft with no
    /// route. Returns the draft id.
    pub fn file_chief_draft(&self, message_id: &str, text: &str) -> Result<String, ApiError> {
        self.shared.store().file_chief_draft(message_id, text)
    }

    /// Write JSON as muster's Go types do (ids as numbers, bare lists), or drop the
    /// plugin-draft routes (a muster too old for them).
    pub fn set_wire_style(&self, style: WireStyle) {
        self.shared.store().style = style;
    }

    /// How many sign-ins succeeded so far.
    pub fn sign_ins(&self) -> usize {
        self.shared.store().logins()
    }

    /// The plugin's check verdict on an `awaiting` draft.
    pub fn record_check(
        &self,
        draft_id: &str,
        verdict: CheckVerdict,
        detail: Option<&str>,
    ) -> Result<(), ApiError> {
        self.shared
            .store()
            .record_check(draft_id, verdict, detail)
            .map(drop)
    }

    /// The plugin claims an approved draft to send it.
    pub fn claim(&self, draft_id: &str) -> Result<(), ApiError> {
        self.shared.store().claim(draft_id).map(drop)
    }

    /// The plugin reports its send. `ok: false` fails the draft, ends its route
    /// `send_failed` and opens a redraft route (or falls back to the chief). A repeated report
    /// changes nothing.
    pub fn report_result(
        &self,
        draft_id: &str,
        ok: bool,
        detail: Option<&str>,
    ) -> Result<(), ApiError> {
        self.shared
            .store()
            .report_result(draft_id, ok, detail)
            .map(drop)
    }

    /// The session did not answer on this route in time.
    pub fn time_out_route(&self, route_id: &str) -> Result<(), ApiError> {
        self.shared.store().time_out_route(route_id)
    }

    /// muster deletes the draft: every owner route answers it as not found (plain text).
    pub fn delete_draft(&self, draft_id: &str) -> Result<(), ApiError> {
        self.shared.store().delete_draft(draft_id)
    }

    /// The draft as the owner API shows it, without a cookie (for assertions).
    pub fn draft(&self, draft_id: &str) -> Option<serde_json::Value> {
        self.shared.store().get_draft(draft_id).ok()
    }

    /// The routes of a message as the owner API shows them (for assertions).
    pub fn routes(&self, message_id: &str) -> Vec<serde_json::Value> {
        self.shared.store().list_routes(message_id)
    }

    // ---- faults --------------------------------------------------------------------------

    /// Every session cookie stops working: the next owner call answers 401.
    pub fn expire_sessions(&self) {
        self.shared.store().expire_sessions();
    }

    /// Arm a fault for the next `times` requests to `method` (`*` = any) and `path` (`*`
    /// matches any run of characters). The control API is never faulted.
    pub fn inject(&self, method: &str, path: &str, times: u32, action: FaultAction) {
        self.shared
            .faults
            .lock()
            .expect("faults lock")
            .arm(method, path, times, action);
    }

    /// Answer the next `times` matching requests with `status` and change nothing.
    pub fn fail_next(&self, method: &str, path: &str, times: u32, status: u16) {
        self.inject(method, path, times, FaultAction::Fail(status));
    }

    /// Hold the next `times` matching requests for `wait` before handling them.
    pub fn delay_next(&self, method: &str, path: &str, times: u32, wait: Duration) {
        self.inject(method, path, times, FaultAction::Delay(wait));
    }

    /// Handle the next `times` matching requests, then cut the connection unanswered.
    pub fn drop_after_commit(&self, method: &str, path: &str, times: u32) {
        self.inject(method, path, times, FaultAction::DropAfterCommit);
    }

    /// Disarm every fault.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().expect("faults lock").clear();
    }

    /// Refuse connections (`false`) or accept them again (`true`).
    pub fn set_online(&self, online: bool) {
        self.server.set_online(online);
    }

    /// End every open `/events` stream (the client must reconnect and re-sync).
    pub fn cut_event_streams(&self) {
        self.shared.cut_event_streams();
    }

    /// How many `/events` streams are open right now.
    pub fn event_streams(&self) -> usize {
        self.shared.events.count()
    }

    /// Give each `/events` stream opened from now on a buffer of `size` events, dropping what
    /// does not fit — muster's broadcaster has 16 (`Some(16)`); `None`: the fake's roomy
    /// default.
    pub fn set_event_buffer(&self, size: Option<usize>) {
        self.shared.events.set_buffer(size);
    }

    /// How many events were dropped for a stream whose buffer was full.
    pub fn dropped_events(&self) -> u64 {
        self.shared.events.dropped()
    }

    /// Play a reverse proxy in front of muster: each `/events` stream is closed after `timeout`
    /// without a byte written (nginx's `proxy_read_timeout`, 60 s by default), as a proxy
    /// closes a silent stream; `None` stops. muster itself never closes a stream.
    pub fn set_proxy_read_timeout(&self, timeout: Option<Duration>) {
        *self
            .shared
            .proxy_read_timeout
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = timeout;
    }

    /// Play muster's other events (`task.changed`, `agent.stream`, …) on every stream, one
    /// every `every`; `None` stops. Must be called inside a Tokio runtime.
    pub fn set_event_noise(&self, every: Option<Duration>) {
        self.shared.noise.set(&self.shared.events, every);
    }

    /// Every request answered so far, oldest first.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.shared.log.lock().expect("log lock").clone()
    }

    /// How many requests matched `method` and `path` (exact).
    pub fn count_requests(&self, method: &str, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && r.path == path)
            .count()
    }

    /// How many requests to `method` and `path` (`*` matches any run of characters) have
    /// arrived, counted when they arrive — before a delay, a fault or the answer. With
    /// [`FakeMuster::count_requests`]-like answers counted apart, a test tells a request in
    /// flight from one answered: a kill timed from an arrival lands mid-request.
    pub fn arrivals(&self, method: &str, path: &str) -> u64 {
        self.shared.arrivals.count(method, path)
    }

    /// How many of the requests to `method` and `path` (glob) that arrived have not been
    /// answered (or cut) yet.
    pub fn in_flight(&self, method: &str, path: &str) -> u64 {
        let answered = self
            .requests()
            .iter()
            .filter(|r| r.method.eq_ignore_ascii_case(method) && faults::glob(path, &r.path))
            .count() as u64;
        self.arrivals(method, path).saturating_sub(answered)
    }

    /// Resolves once at least `at_least` requests to `method` and `path` (glob) have arrived.
    pub async fn arrived(&self, method: &str, path: &str, at_least: u64) {
        self.shared.arrivals.wait(method, path, at_least).await;
    }

    /// Forget the request log.
    pub fn clear_requests(&self) {
        self.shared.log.lock().expect("log lock").clear();
    }
}
