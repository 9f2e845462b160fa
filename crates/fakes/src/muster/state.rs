//! The fake muster's data and the state rules of the owner-API contract (`docs/muster.md`).
//!
//! Everything the owner API and the control API change goes through [`Store`], so both see the
//! same rules: `draft_checks` plugins start drafts `awaiting`, a refused check rejects for good,
//! a failed send opens a `redraft` route at most [`MAX_ROUTE_REDRAFTS`] times and then falls back
//! to the chief, and a repeated plugin result changes nothing.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::broadcast::Broadcaster;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

mod owner;
mod plugin;
mod views;

/// muster's `MaxRouteRedrafts`: how often one message is handed back for a redraft.
pub const MAX_ROUTE_REDRAFTS: u32 = 2;

/// The session a message goes to once its redrafts are used up.
pub const CHIEF_SESSION: &str = "chief";

/// Login attempts muster accepts per window, for all callers together, before answering 429
/// (muster `internal/api/login.go`: `loginRateBurst`, `loginRateWindow`).
const LOGIN_ATTEMPTS_PER_MINUTE: usize = 10;
/// muster's sign-in window: fixed, starting at the first attempt after the previous one ended.
const LOGIN_WINDOW: Duration = Duration::from_secs(60);
/// muster refuses to sign anyone in with a shorter operator password
/// (`internal/api/auth.go`: `minUIPasswordLen`).
pub const MIN_PASSWORD_LEN: usize = 12;
/// How long a session cookie lives (`internal/api/auth.go`: `sessionTTL`).
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// How the fake writes its JSON: as the contract first wrote it, or as muster's Go types do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireStyle {
    /// Ids as JSON numbers (muster's `int64`) instead of strings.
    pub numeric_ids: bool,
    /// Lists as bare arrays instead of `{"drafts": […]}`.
    pub bare_lists: bool,
    /// The plugin-draft routes are missing (a muster too old for them): Go's plain-text 404.
    pub no_plugin_api: bool,
    /// Timestamps as Go's `time.RFC3339Nano` writes a local time: trailing zeros of the
    /// fraction dropped (so their width varies, down to none) and the zone as an offset
    /// (`+05:30`) instead of `Z`.
    pub go_times: bool,
    /// Counts (`redraftNumber`, `redraftCount`) of zero left out, as Go's `encoding/json`
    /// writes a zero under `omitempty`.
    pub omit_zero_counts: bool,
}

/// A change that is announced on `/events`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// `plugin.draft.changed` with this draft id.
    Draft(String),
    /// `plugin.route.changed` with this route id.
    Route(String),
    /// One of muster's other events (tasks, agents, chat), which share the stream.
    Other {
        /// The event name, e.g. `task.changed`.
        name: &'static str,
        /// The record's id.
        id: String,
    },
}

/// An error answer: status plus muster's `{"error": …}` body (with `code`/`draft` when the
/// contract gives them).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// The `error` text.
    pub message: String,
    /// The machine-readable `code`, for the 409/412 answers of `decide`.
    pub code: Option<&'static str>,
    /// The draft as it is now, for `already_decided` and `stale`.
    pub draft: Option<Value>,
}

impl ApiError {
    pub(crate) fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: None,
            draft: None,
        }
    }

    fn coded(status: u16, code: &'static str, message: &str, draft: Option<Value>) -> Self {
        Self {
            status,
            message: message.to_owned(),
            code: Some(code),
            draft,
        }
    }

    /// The JSON body muster sends with this error.
    pub fn body(&self) -> Value {
        let mut body = json!({ "error": self.message });
        if let Some(code) = self.code {
            body["code"] = json!(code);
        }
        if let Some(draft) = &self.draft {
            body["draft"] = draft.clone();
        }
        body
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.message)
    }
}

impl std::error::Error for ApiError {}

pub(crate) type ApiResult<T> = std::result::Result<T, ApiError>;

#[derive(Clone, Debug)]
struct Plugin {
    draft_checks: bool,
}

#[derive(Clone, Debug)]
struct Message {
    id: String,
    plugin: String,
    from: String,
    subject: String,
    snippet: String,
    /// The message's full text, when the plugin gave it (optional in the contract).
    text: Option<String>,
    received_at: String,
    state: String,
    routes: Vec<u64>,
}

/// Why a route exists; its `state` moves on (e.g. to `send_failed`) but this does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RouteKind {
    Relayed,
    Redraft,
    Fallback,
}

impl RouteKind {
    /// The state a route of this kind opens in (and its message with it).
    fn opening_state(self) -> &'static str {
        match self {
            RouteKind::Relayed => "relayed",
            RouteKind::Redraft => "redraft",
            RouteKind::Fallback => "fallback",
        }
    }
}

#[derive(Clone, Debug)]
struct Route {
    id: u64,
    message_id: String,
    session: String,
    kind: RouteKind,
    state: &'static str,
    routed_via: String,
    redraft_of: Option<u64>,
    redraft_count: u32,
    reason: Option<String>,
    created_at: String,
    updated_at: String,
}

#[derive(Clone, Debug)]
struct Draft {
    id: u64,
    /// `None` for a draft the chief filed itself (muster's `reply_draft`): no route.
    route_id: Option<u64>,
    message_id: String,
    state: &'static str,
    check_state: &'static str,
    check_detail: Option<String>,
    text: String,
    redraft_of: Option<u64>,
    redraft_number: u32,
    result: Option<(bool, Option<String>)>,
    claimed: bool,
    created_at: String,
    updated_at: String,
}

impl Draft {
    /// Still in play on its route: the session may not file another one beside it.
    fn is_live(&self) -> bool {
        matches!(self.state, "pending" | "approved")
    }
}

/// The owner's decision on a draft.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerDecision {
    /// `approve`
    Approve,
    /// `reject`
    Reject,
}

/// The plugin's verdict on a draft of a `draft_checks` plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckVerdict {
    /// The reply may be sent: the owner is asked.
    Sendable,
    /// The reply is rejected for good and the message handed back.
    Refused,
}

/// A message relayed to a session: what the control API answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relayed {
    /// The new message's id (`m-…`).
    pub message_id: String,
    /// The route that carries it to the session.
    pub route_id: String,
}

/// All of the fake muster's state behind one lock.
pub(crate) struct Store {
    pub(crate) password: String,
    /// Simulated password rotations (`expire_sessions`): each changes the cookie key. A restart
    /// of the fake forgets them, as muster forgets nothing it did not keep in its password.
    rotations: u32,
    login_window: Option<(Instant, usize)>,
    logins: usize,
    pub(crate) style: WireStyle,
    plugins: BTreeMap<String, Plugin>,
    // Nothing is ever removed from these: a record's id is its place in the table, from 1 (see
    // `insert_next`), like muster's database sequences.
    messages: BTreeMap<String, Message>,
    routes: BTreeMap<u64, Route>,
    drafts: BTreeMap<u64, Draft>,
    /// Drafts muster deleted: kept in `drafts` so that their ids are never reused.
    deleted_drafts: std::collections::BTreeSet<u64>,
    /// A fault: drafts written oddly on the wire (fields replaced or left out), as a newer muster
    /// (a state this contract does not list) or a broken record would be. Only the JSON changes.
    odd_drafts: BTreeMap<u64, OddFields>,
    last_stamp: DateTime<Utc>,
    events: Broadcaster,
}

/// How one draft's JSON is changed on the wire (a fault): fields set to other values, and
/// fields left out.
#[derive(Clone, Debug, Default)]
pub(crate) struct OddFields {
    pub set: serde_json::Map<String, Value>,
    pub drop: Vec<String>,
}

/// What `POST /login` answers.
pub(crate) enum LoginAnswer {
    SignedIn(String),
    UnreadableForm,
    WrongPassword,
    TooManyAttempts,
    NoPassword,
}

impl Store {
    pub(crate) fn new(password: String, events: Broadcaster) -> Self {
        Self {
            password,
            rotations: 0,
            login_window: None,
            logins: 0,
            style: WireStyle::default(),
            plugins: BTreeMap::new(),
            messages: BTreeMap::new(),
            routes: BTreeMap::new(),
            drafts: BTreeMap::new(),
            deleted_drafts: Default::default(),
            odd_drafts: BTreeMap::new(),
            last_stamp: DateTime::<Utc>::MIN_UTC,
            events,
        }
    }

    /// A timestamp later than every one handed out before, so two changes never share an
    /// `updatedAt` (the client's version check depends on it).
    fn stamp(&mut self) -> String {
        // Compare at the precision that is written out, or two stamps could print alike.
        let now = DateTime::<Utc>::from_timestamp_micros(Utc::now().timestamp_micros())
            .unwrap_or_else(Utc::now);
        let next = if now > self.last_stamp {
            now
        } else {
            self.last_stamp + chrono::Duration::microseconds(1)
        };
        self.last_stamp = next;
        if self.style.go_times {
            go_rfc3339_nano(next)
        } else {
            next.to_rfc3339_opts(SecondsFormat::Micros, true)
        }
    }

    fn emit(&self, change: Change) {
        // No stream connected is fine: muster does not keep events for later.
        self.events.broadcast(change);
    }

    // ---- sign-in -------------------------------------------------------------------------

    /// `POST /login` in muster's order: configuration, the form, the rate limit, the password
    /// (`internal/api/login.go`, `handleLoginSubmit`). `password` is `Err` for an unreadable form.
    pub(crate) fn login(&mut self, password: Result<Option<String>, ()>) -> LoginAnswer {
        // Go's `len` counts bytes: "ééééééé" (7 characters, 14 bytes) is long enough.
        if self.password.len() < MIN_PASSWORD_LEN {
            return LoginAnswer::NoPassword;
        }
        let Ok(password) = password else {
            return LoginAnswer::UnreadableForm;
        };
        let now = Instant::now();
        let (start, count) = match self.login_window {
            Some((start, count)) if now.duration_since(start) < LOGIN_WINDOW => (start, count),
            _ => (now, 0),
        };
        if count >= LOGIN_ATTEMPTS_PER_MINUTE {
            return LoginAnswer::TooManyAttempts;
        }
        self.login_window = Some((start, count + 1));
        if password.as_deref() != Some(self.password.as_str()) {
            return LoginAnswer::WrongPassword;
        }
        self.logins += 1;
        let issued = unix_now();
        let expiry = issued + SESSION_TTL.as_secs() as i64;
        let key = session_key(&self.password, self.rotations);
        LoginAnswer::SignedIn(sign_session(&key, issued, expiry))
    }

    /// Successful sign-ins so far.
    pub(crate) fn logins(&self) -> usize {
        self.logins
    }

    /// muster's `VerifySession`: three `|`-separated fields, the signature checked before the
    /// expiry.
    pub(crate) fn is_signed_in(&self, session: &str) -> bool {
        let parts: Vec<&str> = session.split('|').collect();
        let [issued, expiry, _] = parts[..] else {
            return false;
        };
        let (Ok(issued), Ok(expiry)) = (issued.parse::<i64>(), expiry.parse::<i64>()) else {
            return false;
        };
        let key = session_key(&self.password, self.rotations);
        sign_session(&key, issued, expiry) == session && unix_now() < expiry
    }

    /// Every cookie issued so far stops verifying. muster's one way to do this is rotating the
    /// operator password, which changes the signing key; the fake rotates its key as if the
    /// password had been rotated (and back), so the configured password keeps working.
    pub(crate) fn expire_sessions(&mut self) {
        self.rotations += 1;
    }

    fn id(&self, id: u64) -> Value {
        if self.style.numeric_ids {
            json!(id)
        } else {
            json!(id.to_string())
        }
    }

    /// A message id as written: `m-7`, or `7` when ids are numbers.
    fn message_ref(&self, message_id: &str) -> Value {
        match message_id
            .strip_prefix("m-")
            .and_then(|n| n.parse::<u64>().ok())
        {
            Some(n) if self.style.numeric_ids => json!(n),
            _ => json!(message_id),
        }
    }
}

/// Files the record `make` builds for the table's next id, and returns that id.
fn insert_next<T>(table: &mut BTreeMap<u64, T>, make: impl FnOnce(u64) -> T) -> u64 {
    let id = table.len() as u64 + 1;
    table.insert(id, make(id));
    id
}

/// `t` as Go's `Format(time.RFC3339Nano)` writes it for a host in India (UTC+05:30): the
/// fraction without trailing zeros (none at all on a whole second) and a numeric offset.
fn go_rfc3339_nano(t: DateTime<Utc>) -> String {
    let zone = chrono::FixedOffset::east_opt(5 * 3600 + 30 * 60).expect("a valid offset");
    let local = t.with_timezone(&zone);
    let nanos = format!("{:09}", local.timestamp_subsec_nanos());
    let fraction = nanos.trim_end_matches('0');
    let dot = if fraction.is_empty() { "" } else { "." };
    format!(
        "{}{dot}{fraction}{}",
        local.format("%Y-%m-%dT%H:%M:%S"),
        local.format("%:z")
    )
}

/// Seconds since the Unix epoch, as muster's cookies count them.
fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// muster's `uiSessionSecret`: the cookie key is derived from the operator password with a
/// domain separator (`internal/api/auth.go`). After `rotations` simulated password rotations
/// the fake mixes the count in, so earlier cookies stop verifying.
fn session_key(password: &str, rotations: u32) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"muster-ui-session-v1\0");
    hasher.update(password.as_bytes());
    if rotations > 0 {
        hasher.update(format!("\0rotated {rotations}").as_bytes());
    }
    hasher.finalize().into()
}

/// A session cookie as muster's `SignSession` writes one: `<issued>|<expiry>|<hex HMAC-SHA256
/// of "<issued>|<expiry>">` (`internal/auth/auth.go`), in Unix seconds.
fn sign_session(key: &[u8; 32], issued: i64, expiry: i64) -> String {
    let payload = format!("{issued}|{expiry}");
    format!(
        "{payload}|{}",
        hex_encode(&hmac_sha256(key, payload.as_bytes()))
    )
}

/// HMAC (RFC 2104) over SHA-256 with a 32-byte key (shorter than the 64-byte block, so it is
/// padded, never hashed).
fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
