//! The fake muster's data and the state rules of the owner-API contract (`docs/muster.md`).
//!
//! Everything the owner API and the control API change goes through [`Store`], so both see the
//! same rules: `draft_checks` plugins start drafts `awaiting`, a refused check rejects for good,
//! a failed send opens a `redraft` route at most [`MAX_ROUTE_REDRAFTS`] times and then falls back
//! to the chief, and a repeated plugin result changes nothing.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use tokio::sync::broadcast;

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
}

/// A change that is announced on `/events`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// `plugin.draft.changed` with this draft id.
    Draft(String),
    /// `plugin.route.changed` with this route id.
    Route(String),
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
    /// Cookies issued at or before this instant are refused (`expire_sessions`); a restart of
    /// the fake forgets it, like muster, whose cookies are checked by signature alone.
    revoked_before: Option<u128>,
    login_window: Option<(Instant, usize)>,
    logins: usize,
    pub(crate) style: WireStyle,
    plugins: BTreeMap<String, Plugin>,
    messages: BTreeMap<String, Message>,
    routes: BTreeMap<u64, Route>,
    drafts: BTreeMap<u64, Draft>,
    next_message: u64,
    next_route: u64,
    next_draft: u64,
    last_stamp: DateTime<Utc>,
    events: broadcast::Sender<Change>,
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
    pub(crate) fn new(password: String, events: broadcast::Sender<Change>) -> Self {
        Self {
            password,
            revoked_before: None,
            login_window: None,
            logins: 0,
            style: WireStyle::default(),
            plugins: BTreeMap::new(),
            messages: BTreeMap::new(),
            routes: BTreeMap::new(),
            drafts: BTreeMap::new(),
            next_message: 1,
            next_route: 1,
            next_draft: 1,
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
        next.to_rfc3339_opts(SecondsFormat::Micros, true)
    }

    fn emit(&self, change: Change) {
        // No stream connected is fine: muster does not keep events for later.
        let _ = self.events.send(change);
    }

    // ---- sign-in -------------------------------------------------------------------------

    /// `POST /login` in muster's order: configuration, the form, the rate limit, the password
    /// (`internal/api/login.go`, `handleLoginSubmit`). `password` is `Err` for an unreadable form.
    pub(crate) fn login(&mut self, password: Result<Option<String>, ()>) -> LoginAnswer {
        if self.password.chars().count() < MIN_PASSWORD_LEN {
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
        LoginAnswer::SignedIn(sign_session(&self.password, issued_now()))
    }

    /// Successful sign-ins so far.
    pub(crate) fn logins(&self) -> usize {
        self.logins
    }

    pub(crate) fn is_signed_in(&self, session: &str) -> bool {
        let Some((issued, _)) = session.split_once('.') else {
            return false;
        };
        let Ok(issued) = issued.parse::<u128>() else {
            return false;
        };
        let now = issued_now();
        sign_session(&self.password, issued) == session
            && now.saturating_sub(issued) < SESSION_TTL.as_micros()
            && self.revoked_before.is_none_or(|r| issued > r)
    }

    pub(crate) fn expire_sessions(&mut self) {
        self.revoked_before = Some(issued_now());
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

    // ---- JSON views ----------------------------------------------------------------------

    fn draft_json(&self, draft: &Draft) -> Value {
        let route = draft.route_id.map(|r| &self.routes[&r]);
        let message = &self.messages[&draft.message_id];
        let mut json = json!({
            "id": self.id(draft.id),
            "plugin": message.plugin,
            "routeId": route.map(|r| self.id(r.id)),
            "session": route.map_or(CHIEF_SESSION, |r| r.session.as_str()),
            "messageId": self.message_ref(&message.id),
            "state": draft.state,
            "checkState": draft.check_state,
            "checkDetail": draft.check_detail,
            "text": draft.text,
            "inReplyTo": {
                "from": message.from,
                "subject": message.subject,
                "snippet": message.snippet,
                "receivedAt": message.received_at,
            },
            "redraftOf": draft.redraft_of.map(|id| self.id(id)),
            "redraftNumber": draft.redraft_number,
            "result": draft.result.as_ref().map(|(ok, detail)| json!({"ok": ok, "detail": detail})),
            "createdAt": draft.created_at,
            "updatedAt": draft.updated_at,
        });
        // Absent, not null, when the plugin did not give the full text.
        if let Some(text) = &message.text {
            json["inReplyTo"]["text"] = json!(text);
        }
        json
    }

    fn route_json(&self, route: &Route) -> Value {
        json!({
            "id": self.id(route.id),
            "messageId": self.message_ref(&route.message_id),
            "session": route.session,
            "state": route.state,
            "routedVia": route.routed_via,
            "redraftOf": route.redraft_of.map(|id| self.id(id)),
            "redraftCount": route.redraft_count,
            "reason": route.reason,
            "createdAt": route.created_at,
            "updatedAt": route.updated_at,
        })
    }

    fn message_json(&self, message: &Message) -> Value {
        json!({
            "id": self.message_ref(&message.id),
            "plugin": message.plugin,
            "from": message.from,
            "subject": message.subject,
            "state": message.state,
            "routes": message.routes.iter().map(|id| self.id(*id)).collect::<Vec<_>>(),
        })
    }

    // ---- owner API -----------------------------------------------------------------------

    pub(crate) fn list_drafts(&self, state: &str) -> ApiResult<Vec<Value>> {
        const STATES: [&str; 6] = ["pending", "approved", "rejected", "sent", "failed", "all"];
        if !STATES.contains(&state) {
            return Err(ApiError::new(400, format!("unknown state {state:?}")));
        }
        Ok(self
            .drafts
            .values()
            .filter(|d| state == "all" || d.state == state)
            .map(|d| self.draft_json(d))
            .collect())
    }

    pub(crate) fn get_draft(&self, id: &str) -> ApiResult<Value> {
        let draft = self.find_draft(id)?;
        Ok(self.draft_json(draft))
    }

    pub(crate) fn list_routes(&self, message_id: &str) -> Vec<Value> {
        // Numbers stand for `m-<n>` (see `message_ref`).
        let key = if message_id.parse::<u64>().is_ok() {
            format!("m-{message_id}")
        } else {
            message_id.to_owned()
        };
        self.routes
            .values()
            .filter(|r| r.message_id == key)
            .map(|r| self.route_json(r))
            .collect()
    }

    pub(crate) fn list_messages(&self, state: Option<&str>) -> Vec<Value> {
        self.messages
            .values()
            .filter(|m| matches!(state, None | Some("all")) || Some(m.state.as_str()) == state)
            .map(|m| self.message_json(m))
            .collect()
    }

    /// `POST /api/plugin/drafts/{id}/decide`. The order of the checks matters: a decision that
    /// was already made answers `already_decided` even though `updatedAt` moved on, so that a
    /// caller who lost the first answer can tell its own decision landed.
    pub(crate) fn decide(
        &mut self,
        id: &str,
        decision: OwnerDecision,
        expected_updated_at: &str,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(id)?.clone();
        let view = self.draft_json(&draft);
        if decision == OwnerDecision::Approve && draft.check_state == "refused" {
            return Err(ApiError::coded(
                409,
                "check_refused",
                "the plugin refused this draft; it can never be approved",
                None,
            ));
        }
        if draft.state != "pending" {
            return Err(ApiError::coded(
                409,
                "already_decided",
                "this draft was already decided",
                Some(view),
            ));
        }
        if draft.updated_at != expected_updated_at {
            return Err(ApiError::coded(
                412,
                "stale",
                "the draft changed since it was reviewed",
                Some(view),
            ));
        }
        if decision == OwnerDecision::Approve && draft.check_state == "awaiting" {
            return Err(ApiError::coded(
                409,
                "draft_unchecked",
                "the plugin has not checked this draft yet; it can only be rejected",
                None,
            ));
        }
        let stamp = self.stamp();
        let draft = self.drafts.get_mut(&draft.id).expect("found above");
        draft.state = match decision {
            OwnerDecision::Approve => "approved",
            OwnerDecision::Reject => "rejected",
        };
        draft.updated_at = stamp;
        let id = draft.id;
        self.emit(Change::Draft(id.to_string()));
        Ok(self.draft_json(&self.drafts[&id]))
    }

    fn find_draft(&self, id: &str) -> ApiResult<&Draft> {
        id.parse::<u64>()
            .ok()
            .and_then(|id| self.drafts.get(&id))
            .ok_or_else(|| ApiError::new(404, "draft not found"))
    }

    fn find_route(&self, id: &str) -> ApiResult<&Route> {
        id.parse::<u64>()
            .ok()
            .and_then(|id| self.routes.get(&id))
            .ok_or_else(|| ApiError::new(404, "route not found"))
    }

    // ---- the plugin and the sessions (control API) ---------------------------------------

    pub(crate) fn create_plugin(&mut self, name: &str, draft_checks: bool) -> ApiResult<()> {
        if name.trim().is_empty() {
            return Err(ApiError::new(400, "a plugin needs a name"));
        }
        self.plugins
            .insert(name.to_owned(), Plugin { draft_checks });
        Ok(())
    }

    /// The plugin gives the relayed message's full text (`inReplyTo.text` of its drafts).
    pub(crate) fn set_message_text(&mut self, message_id: &str, text: &str) -> ApiResult<()> {
        let message = self
            .messages
            .get_mut(message_id)
            .ok_or_else(|| ApiError::new(404, format!("no message {message_id:?}")))?;
        message.text = Some(text.to_owned());
        Ok(())
    }

    pub(crate) fn relay_message(
        &mut self,
        plugin: &str,
        session: &str,
        from: &str,
        subject: &str,
        snippet: &str,
    ) -> ApiResult<Relayed> {
        if !self.plugins.contains_key(plugin) {
            return Err(ApiError::new(404, format!("no plugin named {plugin:?}")));
        }
        if session.trim().is_empty() {
            return Err(ApiError::new(400, "a message is relayed to a session"));
        }
        let stamp = self.stamp();
        let message_id = format!("m-{}", self.next_message);
        self.next_message += 1;
        let route_id = self.next_route;
        self.next_route += 1;
        self.routes.insert(
            route_id,
            Route {
                id: route_id,
                message_id: message_id.clone(),
                session: session.to_owned(),
                kind: RouteKind::Relayed,
                state: "relayed",
                routed_via: format!("relayed by {plugin} to {session}"),
                redraft_of: None,
                redraft_count: 0,
                reason: None,
                created_at: stamp.clone(),
                updated_at: stamp.clone(),
            },
        );
        self.messages.insert(
            message_id.clone(),
            Message {
                id: message_id.clone(),
                plugin: plugin.to_owned(),
                from: from.to_owned(),
                subject: subject.to_owned(),
                snippet: snippet.to_owned(),
                text: None,
                received_at: stamp,
                state: "relayed".to_owned(),
                routes: vec![route_id],
            },
        );
        self.emit(Change::Route(route_id.to_string()));
        Ok(Relayed {
            message_id,
            route_id: route_id.to_string(),
        })
    }

    /// The session files a reply draft on an open route (a redraft is filed the same way, on
    /// the `redraft` or `fallback` route).
    pub(crate) fn file_draft(&mut self, route_id: &str, text: &str) -> ApiResult<String> {
        let route = self.find_route(route_id)?.clone();
        if !matches!(route.state, "relayed" | "redraft" | "fallback") {
            return Err(ApiError::new(
                409,
                format!(
                    "route {} is {}; no draft can be filed on it",
                    route.id, route.state
                ),
            ));
        }
        let on_route: Vec<&Draft> = self
            .drafts
            .values()
            .filter(|d| d.route_id == Some(route.id))
            .collect();
        if on_route.iter().any(|d| d.is_live()) {
            return Err(ApiError::new(
                409,
                "this route already has a draft in review",
            ));
        }
        // A draft answers what was refused before it: an earlier draft on this route (refused by
        // the check or rejected by the owner), else the failed draft of the route it redrafts.
        let redraft_of = on_route.last().map(|d| d.id).or_else(|| {
            route.redraft_of.and_then(|prev| {
                self.drafts
                    .values()
                    .filter(|d| d.route_id == Some(prev))
                    .map(|d| d.id)
                    .next_back()
            })
        });
        let plugin = &self.messages[&route.message_id].plugin;
        let draft_checks = self.plugins.get(plugin).is_some_and(|p| p.draft_checks);
        let stamp = self.stamp();
        let id = self.next_draft;
        self.next_draft += 1;
        self.drafts.insert(
            id,
            Draft {
                id,
                route_id: Some(route.id),
                message_id: route.message_id.clone(),
                state: "pending",
                check_state: if draft_checks { "awaiting" } else { "none" },
                check_detail: None,
                text: text.to_owned(),
                redraft_of,
                redraft_number: route.redraft_count,
                result: None,
                claimed: false,
                created_at: stamp.clone(),
                updated_at: stamp,
            },
        );
        self.emit(Change::Draft(id.to_string()));
        Ok(id.to_string())
    }

    /// The chief files a reply to a message itself (muster's `reply_draft`): a draft with no
    /// route, which needs the owner's approval like any other.
    pub(crate) fn file_chief_draft(&mut self, message_id: &str, text: &str) -> ApiResult<String> {
        let message = self
            .messages
            .get(message_id)
            .ok_or_else(|| ApiError::new(404, "message not found"))?;
        let draft_checks = self
            .plugins
            .get(&message.plugin)
            .is_some_and(|p| p.draft_checks);
        let stamp = self.stamp();
        let id = self.next_draft;
        self.next_draft += 1;
        self.drafts.insert(
            id,
            Draft {
                id,
                route_id: None,
                message_id: message_id.to_owned(),
                state: "pending",
                check_state: if draft_checks { "awaiting" } else { "none" },
                check_detail: None,
                text: text.to_owned(),
                redraft_of: None,
                redraft_number: 0,
                result: None,
                claimed: false,
                created_at: stamp.clone(),
                updated_at: stamp,
            },
        );
        self.emit(Change::Draft(id.to_string()));
        Ok(id.to_string())
    }

    pub(crate) fn record_check(
        &mut self,
        draft_id: &str,
        verdict: CheckVerdict,
        detail: Option<&str>,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?;
        if draft.check_state != "awaiting" || draft.state != "pending" {
            return Err(ApiError::new(
                409,
                format!(
                    "draft {} is not awaiting a check (state {}, check {})",
                    draft.id, draft.state, draft.check_state
                ),
            ));
        }
        let (id, message_id) = (draft.id, draft.message_id.clone());
        let stamp = self.stamp();
        let draft = self.drafts.get_mut(&id).expect("found above");
        draft.check_detail = detail.map(str::to_owned);
        draft.updated_at = stamp;
        match verdict {
            CheckVerdict::Sendable => draft.check_state = "sendable",
            CheckVerdict::Refused => {
                draft.check_state = "refused";
                draft.state = "rejected";
                // Handed back: the route stays open for the session to write again.
                if let Some(message) = self.messages.get_mut(&message_id) {
                    message.state = "relayed".to_owned();
                }
            }
        }
        self.emit(Change::Draft(id.to_string()));
        Ok(self.draft_json(&self.drafts[&id]))
    }

    pub(crate) fn claim(&mut self, draft_id: &str) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?;
        if draft.state != "approved" || draft.claimed {
            return Err(ApiError::new(
                409,
                format!("draft {} is not waiting to be claimed", draft.id),
            ));
        }
        let id = draft.id;
        self.drafts.get_mut(&id).expect("found above").claimed = true;
        Ok(self.draft_json(&self.drafts[&id]))
    }

    /// The plugin reports what happened to an approved draft. Reporting again for a draft that
    /// already has a result changes nothing (the plugin may retry its report).
    pub(crate) fn report_result(
        &mut self,
        draft_id: &str,
        ok: bool,
        detail: Option<&str>,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?.clone();
        if draft.result.is_some() {
            return Ok(self.draft_json(&draft));
        }
        if draft.state != "approved" {
            return Err(ApiError::new(
                409,
                format!("draft {} is {}, not approved", draft.id, draft.state),
            ));
        }
        let stamp = self.stamp();
        {
            let d = self.drafts.get_mut(&draft.id).expect("found above");
            d.claimed = true;
            d.result = Some((ok, detail.map(str::to_owned)));
            d.state = if ok { "sent" } else { "failed" };
            d.updated_at = stamp.clone();
        }
        self.emit(Change::Draft(draft.id.to_string()));
        let Some(route_id) = draft.route_id else {
            // The chief's own draft: no route to hand back; its refusal is the chief's to read.
            self.set_message_state(&draft.message_id, if ok { "sent" } else { "send_failed" });
            return Ok(self.draft_json(&self.drafts[&draft.id]));
        };
        let route = self.routes[&route_id].clone();
        if ok {
            self.set_message_state(&route.message_id, "sent");
            return Ok(self.draft_json(&self.drafts[&draft.id]));
        }
        {
            let r = self.routes.get_mut(&route.id).expect("route of a draft");
            r.state = "send_failed";
            r.reason = Some(detail.unwrap_or("the plugin could not send it").to_owned());
            r.updated_at = stamp.clone();
        }
        self.emit(Change::Route(route.id.to_string()));

        let message_routes: Vec<&Route> = self
            .routes
            .values()
            .filter(|r| r.message_id == route.message_id)
            .collect();
        let redrafts = message_routes
            .iter()
            .filter(|r| r.kind == RouteKind::Redraft)
            .count() as u32;
        let has_fallback = message_routes.iter().any(|r| r.kind == RouteKind::Fallback);
        let next = if redrafts < MAX_ROUTE_REDRAFTS {
            Some((
                RouteKind::Redraft,
                "redraft",
                route.session.clone(),
                redrafts + 1,
            ))
        } else if !has_fallback {
            Some((
                RouteKind::Fallback,
                "fallback",
                CHIEF_SESSION.to_owned(),
                redrafts,
            ))
        } else {
            None
        };
        match next {
            Some((kind, state, session, count)) => {
                let id = self.next_route;
                self.next_route += 1;
                self.routes.insert(
                    id,
                    Route {
                        id,
                        message_id: route.message_id.clone(),
                        session: session.clone(),
                        kind,
                        state,
                        routed_via: format!("{state} of {} to {session}", route.id),
                        redraft_of: Some(route.id),
                        redraft_count: count,
                        reason: None,
                        created_at: stamp.clone(),
                        updated_at: stamp,
                    },
                );
                if let Some(message) = self.messages.get_mut(&route.message_id) {
                    message.routes.push(id);
                    message.state = state.to_owned();
                }
                self.emit(Change::Route(id.to_string()));
            }
            None => self.set_message_state(&route.message_id, "send_failed"),
        }
        Ok(self.draft_json(&self.drafts[&draft.id]))
    }

    /// The session did not answer in time.
    pub(crate) fn time_out_route(&mut self, route_id: &str) -> ApiResult<()> {
        let route = self.find_route(route_id)?;
        if !matches!(route.state, "relayed" | "redraft" | "fallback") {
            return Err(ApiError::new(
                409,
                format!("route {} is {}", route.id, route.state),
            ));
        }
        let (id, message_id) = (route.id, route.message_id.clone());
        let stamp = self.stamp();
        let r = self.routes.get_mut(&id).expect("found above");
        r.state = "timed_out";
        r.updated_at = stamp;
        self.set_message_state(&message_id, "timed_out");
        self.emit(Change::Route(id.to_string()));
        Ok(())
    }

    fn set_message_state(&mut self, message_id: &str, state: &str) {
        if let Some(message) = self.messages.get_mut(message_id) {
            message.state = state.to_owned();
        }
    }
}

/// Microseconds since the Unix epoch: when a cookie is issued.
fn issued_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros()
}

/// A session cookie as muster makes one: the issue time, signed with a key derived from the
/// operator password, so it survives a restart and dies with a password change
/// (`internal/api/auth.go`, `uiSessionSecret`; the fake's signature is its own).
fn sign_session(password: &str, issued: u128) -> String {
    use sha2::{Digest, Sha256};
    let key = Sha256::digest(format!("muster-ui-session-v1\0{password}").as_bytes());
    let mut mac = Sha256::new();
    mac.update(key);
    mac.update(issued.to_string().as_bytes());
    format!("{issued}.{:x}", mac.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        let (tx, _) = broadcast::channel(16);
        Store::new("a-long-enough-pw".into(), tx)
    }

    #[test]
    fn timestamps_never_repeat_even_within_one_microsecond() {
        let mut s = store();
        let stamps: Vec<String> = (0..1000).map(|_| s.stamp()).collect();
        let unique: std::collections::HashSet<&String> = stamps.iter().collect();
        assert_eq!(unique.len(), stamps.len());
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
    }

    fn relayed(s: &mut Store, draft_checks: bool) -> Relayed {
        s.create_plugin("p", draft_checks).unwrap();
        s.relay_message("p", "inbox-chat", "a@example.com", "Hi", "…")
            .unwrap()
    }

    fn approve(s: &mut Store, id: &str) {
        let at = s.get_draft(id).unwrap()["updatedAt"]
            .as_str()
            .unwrap()
            .to_owned();
        s.decide(id, OwnerDecision::Approve, &at).unwrap();
    }

    #[test]
    fn a_route_takes_no_second_draft_while_one_is_in_review() {
        let mut s = store();
        let r = relayed(&mut s, false);
        s.file_draft(&r.route_id, "one").unwrap();
        let e = s.file_draft(&r.route_id, "two").unwrap_err();
        assert_eq!(e.status, 409);
    }

    #[test]
    fn a_refused_check_hands_the_message_back_for_a_linked_new_draft_on_the_same_route() {
        let mut s = store();
        let r = relayed(&mut s, true);
        let first = s.file_draft(&r.route_id, "one").unwrap();
        s.record_check(&first, CheckVerdict::Refused, Some("no"))
            .unwrap();
        let draft = s.get_draft(&first).unwrap();
        assert_eq!(draft["state"], "rejected");
        assert_eq!(draft["checkState"], "refused");
        let second = s.file_draft(&r.route_id, "two").unwrap();
        let draft = s.get_draft(&second).unwrap();
        assert_eq!(draft["redraftOf"], json!(first));
        assert_eq!(draft["checkState"], "awaiting");
        // A verdict is given once.
        assert_eq!(
            s.record_check(&first, CheckVerdict::Sendable, None)
                .unwrap_err()
                .status,
            409
        );
    }

    #[test]
    fn after_the_chief_also_fails_no_further_route_opens() {
        let mut s = store();
        let r = relayed(&mut s, false);
        let mut route = r.route_id.clone();
        for round in 0..4 {
            let id = s.file_draft(&route, "try").unwrap();
            approve(&mut s, &id);
            s.report_result(&id, false, Some("no")).unwrap();
            let routes = s.list_routes(&r.message_id);
            if round < 3 {
                assert_eq!(routes.len(), round + 2);
                route = routes.last().unwrap()["id"].as_str().unwrap().to_owned();
            } else {
                assert_eq!(routes.len(), 4, "no fifth route after the chief failed");
            }
        }
        let states: Vec<Value> = s
            .list_routes(&r.message_id)
            .iter()
            .map(|r| r["state"].clone())
            .collect();
        assert_eq!(states, vec![json!("send_failed"); 4]);
        assert_eq!(s.list_messages(None)[0]["state"], "send_failed");
    }

    #[test]
    fn every_change_is_announced_once() {
        let (tx, mut rx) = broadcast::channel(16);
        let mut s = Store::new("pw".into(), tx);
        let r = relayed(&mut s, false);
        let id = s.file_draft(&r.route_id, "one").unwrap();
        approve(&mut s, &id);
        s.report_result(&id, false, Some("full")).unwrap();
        s.report_result(&id, false, Some("full")).unwrap();
        let mut seen = Vec::new();
        while let Ok(change) = rx.try_recv() {
            seen.push(change);
        }
        assert_eq!(
            seen,
            vec![
                Change::Route(r.route_id.clone()),
                Change::Draft(id.clone()),
                Change::Draft(id.clone()),
                Change::Draft(id),
                Change::Route(r.route_id),
                Change::Route("2".into()),
            ]
        );
    }

    #[test]
    fn the_eleventh_login_in_a_minute_is_refused() {
        let mut s = store();
        for _ in 0..10 {
            assert!(matches!(
                s.login(Ok(Some("nope".into()))),
                LoginAnswer::WrongPassword
            ));
        }
        assert!(matches!(
            s.login(Ok(Some("a-long-enough-pw".into()))),
            LoginAnswer::TooManyAttempts
        ));
    }

    #[test]
    fn a_password_under_twelve_characters_signs_no_one_in() {
        let (tx, _) = broadcast::channel(16);
        let mut s = Store::new("elevenchars".into(), tx);
        assert!(matches!(
            s.login(Ok(Some("elevenchars".into()))),
            LoginAnswer::NoPassword
        ));
    }

    #[test]
    fn a_cookie_is_checked_by_its_signature_and_survives_a_restart() {
        let mut s = store();
        let LoginAnswer::SignedIn(cookie) = s.login(Ok(Some("a-long-enough-pw".into()))) else {
            panic!("not signed in");
        };
        assert!(s.is_signed_in(&cookie));
        // A new store with the same password stands for muster after a restart.
        assert!(store().is_signed_in(&cookie));
        let (tx, _) = broadcast::channel(16);
        assert!(!Store::new("another-long-password".into(), tx).is_signed_in(&cookie));
        let last = if cookie.ends_with('0') { '1' } else { '0' };
        let forged = format!("{}{last}", &cookie[..cookie.len() - 1]);
        assert!(!s.is_signed_in(&forged));
        s.expire_sessions();
        assert!(!s.is_signed_in(&cookie));
    }
}
