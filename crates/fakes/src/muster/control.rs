//! The control API of the fake muster, under `/_control/` (no cookie needed): it plays the
//! plugin and the sessions, and arms faults. Each route mirrors a method of
//! [`FakeMuster`](super::FakeMuster).
//!
//! | route | body | effect |
//! |---|---|---|
//! | `POST /_control/plugins` | `{"name", "draftChecks": bool}` | mint a plugin |
//! | `POST /_control/messages` | `{"plugin", "session", "from", "subject", "snippet", "text"?}` | relay a message: `{"messageId", "routeId"}` |
//! | `POST /_control/routes/{id}/drafts` | `{"text"}` | the session files a draft (or redraft) on the route: `{"draft"}` |
//! | `POST /_control/routes/{id}/timeout` | — | the route times out |
//! | `POST /_control/drafts/{id}/check` | `{"verdict": "sendable"\|"refused", "detail"}` | the plugin's check verdict |
//! | `POST /_control/drafts/{id}/same-stamp-text` | `{"text"}` | a fault: the draft's text changes, its `updatedAt` does not |
//! | `POST /_control/drafts/{id}/odd` | `{"set": {…}, "drop": ["field", …]}` | a fault: the draft's JSON is written with `set`'s fields replaced and `drop`'s left out (a newer muster's state, a broken record); only the JSON changes |
//! | `POST /_control/drafts/{id}/claim` | — | the plugin claims an approved draft |
//! | `DELETE /_control/drafts/{id}` | — | muster deletes the draft (its routes answer Go's plain-text 404 for it) |
//! | `POST /_control/drafts/{id}/result` | `{"ok": bool, "detail"}` | the plugin reports its send |
//! | `POST /_control/messages/{id}/chief-draft` | `{"text"}` | the chief files a reply itself (no route): `{"draft"}` |
//! | `POST /_control/sessions/expire` | — | every session cookie stops working |
//! | `GET /_control/sign-ins` | — | `{"signIns": n}`: successful sign-ins so far |
//! | `POST /_control/wire` | `{"numericIds", "bareLists", "noPluginApi", "goTimes", "omitZeroCounts"}` | write JSON as muster's Go types do (number ids, bare lists, `RFC3339Nano` times in a +05:30 zone, zero counts left out under `omitempty`), or drop the plugin-draft routes |
//! | `POST /_control/faults` | `{"method", "path", "times", "action": "fail"\|"delay"\|"drop_after_commit"\|"front_page", "status", "millis"}` | arm a fault (`front_page`: a proxy's HTML page or redirect answers instead) |
//! | `POST /_control/faults/fail` | `{"method", "path", "times", "status"}` | the same, shaped like the fake Gmail's |
//! | `POST /_control/faults/delay` | `{"method", "path", "times", "ms"}` | 〃 |
//! | `POST /_control/faults/drop` | `{"method", "path", "times"}` | 〃 (drop after commit) |
//! | `DELETE /_control/faults` | — | disarm all faults |
//! | `POST /_control/offline` | `{"millis"}` or `{"seconds"}` | refuse connections for that long |
//!
//! `method` is an HTTP method (default: any); `path` may use `*` for any run of characters,
//! e.g. `/api/plugin/drafts/*/decide`.
//! | `POST /_control/events/cut` | — | end every open `/events` stream |
//! | `POST /_control/events/buffer` | `{"size"}` (absent: the default) | each new stream's buffer; muster's is 16, and a full one drops events |
//! | `POST /_control/events/noise` | `{"everyMs"}` (absent or 0: off) | play muster's other events (tasks, agents, chat) on every stream |
//! | `POST /_control/events/proxy-timeout` | `{"ms"}` (absent: off) | a proxy in front closes each stream after that long without a byte |
//! | `GET /_control/events/dropped` | — | `{"dropped": n}`: events dropped for a full buffer |
//! | `GET`/`DELETE /_control/requests` | — | the request log / clear it |

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, post, MethodRouter};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::faults::FaultAction;
use super::state::{ApiError, ApiResult, CheckVerdict, Store};
use super::Shared;

pub(crate) fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_control/plugins", post(create_plugin))
        .route("/_control/messages", post(relay_message))
        .route("/_control/routes/{id}/drafts", draft_route(file_draft))
        .route("/_control/routes/{id}/timeout", post(time_out_route))
        .route("/_control/drafts/{id}/check", draft_route(record_check))
        .route(
            "/_control/drafts/{id}/same-stamp-text",
            draft_route(rewrite_text_keeping_stamp),
        )
        .route("/_control/drafts/{id}/odd", draft_route(write_draft_oddly))
        .route("/_control/drafts/{id}/claim", post(claim))
        .route("/_control/drafts/{id}", delete(delete_draft))
        .route("/_control/drafts/{id}/result", draft_route(report_result))
        .route("/_control/sessions/expire", post(expire_sessions))
        .route(
            "/_control/messages/{id}/chief-draft",
            draft_route(file_chief_draft),
        )
        .route("/_control/sign-ins", axum::routing::get(sign_ins))
        .route("/_control/wire", post(set_wire_style))
        .route("/_control/faults", post(arm_fault).delete(clear_faults))
        .route("/_control/faults/fail", post(arm_fail))
        .route("/_control/faults/delay", post(arm_delay))
        .route("/_control/faults/drop", post(arm_drop))
        .route("/_control/offline", post(go_offline))
        .route("/_control/events/cut", post(cut_events))
        .route("/_control/events/buffer", post(set_event_buffer))
        .route("/_control/events/noise", post(set_event_noise))
        .route("/_control/events/proxy-timeout", post(set_proxy_timeout))
        .route(
            "/_control/events/dropped",
            axum::routing::get(dropped_events),
        )
        .route("/_control/requests", delete(clear_requests).get(requests))
}

fn answer<T: serde::Serialize>(result: Result<T, ApiError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(e) => e.into_response(),
    }
}

/// A control call's answer that is one draft: `{"draft": …}`.
fn draft_answer<T: serde::Serialize>(draft: Result<T, ApiError>) -> Response {
    answer(draft.map(|draft| json!({ "draft": draft })))
}

/// A `POST` on one id (a route's, a draft's or a message's) with a JSON body, answered with
/// the draft it files or changes: `change` gets the store, the id and the body.
fn draft_route<B, T>(change: fn(&mut Store, &str, B) -> ApiResult<T>) -> MethodRouter<Arc<Shared>>
where
    B: DeserializeOwned + Send + 'static,
    T: serde::Serialize + 'static,
{
    post(
        move |State(shared): State<Arc<Shared>>, Path(id): Path<String>, Json(body): Json<B>| {
            std::future::ready(draft_answer(change(&mut shared.store(), &id, body)))
        },
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewPlugin {
    name: String,
    #[serde(default)]
    draft_checks: bool,
}

async fn create_plugin(State(shared): State<Arc<Shared>>, Json(body): Json<NewPlugin>) -> Response {
    answer(
        shared
            .store()
            .create_plugin(&body.name, body.draft_checks)
            .map(|()| json!({"name": body.name, "draftChecks": body.draft_checks})),
    )
}

#[derive(Deserialize)]
struct NewMessage {
    plugin: String,
    session: String,
    from: String,
    subject: String,
    #[serde(default)]
    snippet: String,
    /// The full text, when the plugin gives it.
    #[serde(default)]
    text: Option<String>,
}

async fn relay_message(State(shared): State<Arc<Shared>>, Json(m): Json<NewMessage>) -> Response {
    let mut store = shared.store();
    answer(
        store
            .relay_message(&m.plugin, &m.session, &m.from, &m.subject, &m.snippet)
            .and_then(|r| {
                if let Some(text) = &m.text {
                    store.set_message_text(&r.message_id, text)?;
                }
                Ok(json!({"messageId": r.message_id, "routeId": r.route_id}))
            }),
    )
}

#[derive(Deserialize)]
struct NewDraft {
    text: String,
}

fn file_draft(store: &mut Store, route: &str, body: NewDraft) -> ApiResult<Value> {
    let id = store.file_draft(route, &body.text)?;
    store.get_draft(&id)
}

fn rewrite_text_keeping_stamp(store: &mut Store, id: &str, body: NewDraft) -> ApiResult<Value> {
    store.rewrite_text_keeping_stamp(id, &body.text)?;
    store.get_draft(id)
}

async fn time_out_route(State(shared): State<Arc<Shared>>, Path(route): Path<String>) -> Response {
    answer(shared.store().time_out_route(&route).map(|()| json!({})))
}

#[derive(Deserialize)]
struct Verdict {
    verdict: String,
    detail: Option<String>,
}

fn record_check(store: &mut Store, id: &str, body: Verdict) -> ApiResult<Value> {
    let verdict = match body.verdict.as_str() {
        "sendable" => CheckVerdict::Sendable,
        "refused" => CheckVerdict::Refused,
        _ => return Err(ApiError::new(400, "verdict must be sendable or refused")),
    };
    store.record_check(id, verdict, body.detail.as_deref())
}

async fn claim(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    draft_answer(shared.store().claim(&id))
}

async fn delete_draft(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    answer(shared.store().delete_draft(&id).map(|()| json!({})))
}

#[derive(Deserialize)]
struct SendResult {
    ok: bool,
    detail: Option<String>,
}

fn report_result(store: &mut Store, id: &str, body: SendResult) -> ApiResult<Value> {
    store.report_result(id, body.ok, body.detail.as_deref())
}

fn file_chief_draft(store: &mut Store, message: &str, body: ChiefDraft) -> ApiResult<String> {
    store.file_chief_draft(message, &body.text)
}

#[derive(Deserialize)]
struct ChiefDraft {
    text: String,
}

#[derive(Deserialize)]
struct Odd {
    #[serde(default)]
    set: serde_json::Map<String, Value>,
    #[serde(default)]
    drop: Vec<String>,
}

fn write_draft_oddly(store: &mut Store, id: &str, odd: Odd) -> ApiResult<Value> {
    store.write_draft_oddly(
        id,
        super::state::OddFields {
            set: odd.set,
            drop: odd.drop,
        },
    )?;
    Ok(json!({}))
}

async fn sign_ins(State(shared): State<Arc<Shared>>) -> Response {
    Json(json!({ "signIns": shared.store().logins() })).into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(default)]
    numeric_ids: bool,
    #[serde(default)]
    bare_lists: bool,
    #[serde(default)]
    no_plugin_api: bool,
    #[serde(default)]
    go_times: bool,
    #[serde(default)]
    omit_zero_counts: bool,
}

async fn set_wire_style(State(shared): State<Arc<Shared>>, Json(w): Json<Wire>) -> Response {
    shared.store().style = super::WireStyle {
        numeric_ids: w.numeric_ids,
        bare_lists: w.bare_lists,
        no_plugin_api: w.no_plugin_api,
        go_times: w.go_times,
        omit_zero_counts: w.omit_zero_counts,
    };
    Json(json!({})).into_response()
}

async fn expire_sessions(State(shared): State<Arc<Shared>>) -> Response {
    shared.store().expire_sessions();
    Json(json!({})).into_response()
}

/// Which requests a fault hits (`method` `*`: any), and how many of them (default 1).
#[derive(Deserialize)]
struct FaultTarget {
    #[serde(default = "any_method")]
    method: String,
    path: String,
    #[serde(default = "once")]
    times: u32,
}

#[derive(Deserialize)]
struct NewFault {
    #[serde(flatten)]
    target: FaultTarget,
    action: String,
    status: Option<u16>,
    millis: Option<u64>,
}

fn any_method() -> String {
    "*".to_owned()
}

fn once() -> u32 {
    1
}

async fn arm_fault(State(shared): State<Arc<Shared>>, Json(f): Json<NewFault>) -> Response {
    let action = match (f.action.as_str(), f.status, f.millis) {
        ("fail", Some(status), _) if (100..600).contains(&status) => FaultAction::Fail(status),
        ("delay", _, Some(ms)) => FaultAction::Delay(Duration::from_millis(ms)),
        ("drop_after_commit", _, _) => FaultAction::DropAfterCommit,
        ("front_page", Some(status), _) if (100..600).contains(&status) => {
            FaultAction::FrontPage(status)
        }
        _ => {
            return ApiError::new(
                400,
                "action must be fail (with status), delay (with millis), drop_after_commit \
                 or front_page (with status)",
            )
            .into_response()
        }
    };
    arm(&shared, &f.target, action)
}

/// A fault shaped like the fake Gmail's: the action is in the route.
#[derive(Deserialize)]
struct ShapedFault {
    #[serde(flatten)]
    target: FaultTarget,
    status: Option<u16>,
    ms: Option<u64>,
}

fn arm(shared: &Shared, target: &FaultTarget, action: FaultAction) -> Response {
    shared.faults.lock().expect("faults lock").arm(
        &target.method,
        &target.path,
        target.times,
        action,
    );
    Json(json!({})).into_response()
}

async fn arm_fail(State(shared): State<Arc<Shared>>, Json(f): Json<ShapedFault>) -> Response {
    match f.status {
        Some(status) if (100..600).contains(&status) => {
            arm(&shared, &f.target, FaultAction::Fail(status))
        }
        _ => ApiError::new(400, "a fail fault needs a status").into_response(),
    }
}

async fn arm_delay(State(shared): State<Arc<Shared>>, Json(f): Json<ShapedFault>) -> Response {
    match f.ms {
        Some(ms) => arm(
            &shared,
            &f.target,
            FaultAction::Delay(Duration::from_millis(ms)),
        ),
        None => ApiError::new(400, "a delay fault needs ms").into_response(),
    }
}

async fn arm_drop(State(shared): State<Arc<Shared>>, Json(f): Json<ShapedFault>) -> Response {
    arm(&shared, &f.target, FaultAction::DropAfterCommit)
}

async fn clear_faults(State(shared): State<Arc<Shared>>) -> Response {
    shared.faults.lock().expect("faults lock").clear();
    Json(json!({})).into_response()
}

#[derive(Deserialize)]
struct Offline {
    millis: Option<u64>,
    seconds: Option<f64>,
}

/// Offline over HTTP must end by itself: while offline, no request reaches the fake.
async fn go_offline(State(shared): State<Arc<Shared>>, Json(body): Json<Offline>) -> Response {
    let Some(server) = shared.server.get().cloned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "not serving yet").into_response();
    };
    let wait = match (body.millis, body.seconds) {
        (Some(ms), _) => Duration::from_millis(ms),
        (None, Some(s)) => Duration::from_secs_f64(s.clamp(0.0, 3600.0)),
        (None, None) => {
            return ApiError::new(400, "say for how long: millis or seconds").into_response()
        }
    };
    tokio::spawn(async move {
        // Let this answer leave before the socket closes.
        tokio::time::sleep(Duration::from_millis(20)).await;
        server.set_online(false);
        tokio::time::sleep(wait).await;
        server.set_online(true);
    });
    Json(json!({})).into_response()
}

#[derive(Deserialize)]
struct BufferBody {
    size: Option<usize>,
}

async fn set_event_buffer(
    State(shared): State<Arc<Shared>>,
    Json(b): Json<BufferBody>,
) -> Response {
    shared.events.set_buffer(b.size);
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NoiseBody {
    every_ms: Option<u64>,
}

async fn set_event_noise(State(shared): State<Arc<Shared>>, Json(b): Json<NoiseBody>) -> Response {
    shared
        .noise
        .set(&shared.events, b.every_ms.map(Duration::from_millis));
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
struct ProxyTimeoutBody {
    ms: Option<u64>,
}

async fn set_proxy_timeout(
    State(shared): State<Arc<Shared>>,
    Json(b): Json<ProxyTimeoutBody>,
) -> Response {
    *shared
        .proxy_read_timeout
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = b.ms.map(Duration::from_millis);
    StatusCode::NO_CONTENT.into_response()
}

async fn dropped_events(State(shared): State<Arc<Shared>>) -> Response {
    Json(json!({ "dropped": shared.events.dropped() })).into_response()
}

async fn cut_events(State(shared): State<Arc<Shared>>) -> Response {
    shared.cut_event_streams();
    Json(json!({})).into_response()
}

async fn requests(State(shared): State<Arc<Shared>>) -> Response {
    Json(json!({ "requests": *shared.log.lock().expect("log lock") })).into_response()
}

async fn clear_requests(State(shared): State<Arc<Shared>>) -> Response {
    shared.log.lock().expect("log lock").clear();
    Json(json!({})).into_response()
}
