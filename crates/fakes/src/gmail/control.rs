//! The control API under `/_control/`: what tests and demo mode do to the fake from outside —
//! file drafts as an agent would, add inbox messages, read what was sent, count requests,
//! inject faults, revoke tokens.
//!
//! JSON bodies in camelCase. Raw messages are given either as `raw` (base64url) or as
//! `rawText` (the message as plain text).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put, MethodRouter};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;

use super::rest::{decode_raw, encode_raw};
use super::state::{BeforeSend, FailFault, State as GmailState};
use super::Shared;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_control/drafts", post(file_draft).get(list_drafts))
        .route(
            "/_control/drafts/{id}",
            put(update_draft).delete(delete_draft),
        )
        .route("/_control/messages", post(add_message))
        .route("/_control/labels", post(super::labels::create_label))
        .route(
            "/_control/messages/{id}/modify",
            post(super::labels::modify_message),
        )
        .route("/_control/sent", get(sent))
        .route("/_control/sends", get(sends))
        .route("/_control/sends/{draft_id}", get(sends_of))
        .route("/_control/requests", get(requests).delete(clear_requests))
        .route("/_control/faults/fail", change(fail))
        .route("/_control/faults/delay", post(delay_fault))
        .route(
            "/_control/faults/drop",
            change(|s, body: DropBody| {
                s.drop.insert(body.method, body.times);
            }),
        )
        .route(
            "/_control/faults/garble",
            change(|s, body: DropBody| {
                s.garble.insert(body.method, body.times);
            }),
        )
        .route(
            "/_control/faults/vanished-draft-400",
            change(|s, body: OnBody| s.vanished_drafts_answer_400 = body.on),
        )
        .route(
            "/_control/faults/replace-message-id",
            change(|s, body: OnBody| s.replace_message_id_on_send = body.on),
        )
        .route(
            "/_control/oauth/client-deleted",
            change(|s, body: OnBody| s.client_deleted = body.on),
        )
        .route(
            "/_control/faults/throttle",
            change(|s, body: ThrottleBody| {
                s.throttle_bytes_per_second = body.bytes_per_second;
            }),
        )
        .route("/_control/faults", delete(clear_faults))
        .route("/_control/offline", post(offline))
        .route("/_control/oauth/revoke", act(GmailState::revoke_all))
        .route(
            "/_control/oauth/expire",
            act(GmailState::expire_access_tokens),
        )
        .route("/_control/oauth/tokens", post(issue_tokens))
        .route("/_control/oauth/grant-scopes", post(grant_scopes))
        .route("/_control/history/expire", act(GmailState::expire_history))
        .route(
            "/_control/history/deletions",
            change(|s, body: ReportsBody| s.history_reports_deletions = body.reports),
        )
        .route(
            "/_control/history/only-messages",
            change(|s, body: ReportsBody| s.history_only_messages = body.reports),
        )
        .route(
            "/_control/oauth/refresh-lifetime",
            change(|s, body: LifetimeBody| {
                s.refresh_token_lifetime = body
                    .seconds
                    .map(|seconds| Duration::from_secs_f64(seconds.clamp(0.0, 1e9)));
            }),
        )
        .route(
            "/_control/oauth/consent-error",
            change(|s, body: ConsentErrorBody| s.consent_error = body.error),
        )
        .route("/_control/drafts/{id}/send", post(send_in_gmail))
        .route(
            "/_control/drafts/{id}/agent-update-after-next-update",
            post(agent_update_after_next_update),
        )
        .route(
            "/_control/drafts/{id}/before-next-send",
            post(before_next_send),
        )
        .route(
            "/_control/quota",
            change(|s, body: QuotaBody| s.set_quota(body.units_per_minute)),
        )
        .route("/_control/state", get(state))
}

/// `{"bytesPerSecond": n}` throttles (0: nothing moves), `{"bytesPerSecond": null}` ends it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThrottleBody {
    bytes_per_second: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBody {
    raw: Option<String>,
    raw_text: Option<String>,
    thread_id: Option<String>,
    label_ids: Option<Vec<String>>,
}

impl RawBody {
    fn bytes(&self) -> Result<Vec<u8>, &'static str> {
        match (&self.raw, &self.raw_text) {
            (Some(raw), _) => decode_raw(raw).ok_or("raw is not base64url"),
            (None, Some(text)) => Ok(text.clone().into_bytes()),
            (None, None) => Err("give raw (base64url) or rawText"),
        }
    }
}

/// A `POST` that changes the fake's state with its JSON body; answers 204. Most knobs and
/// fault switches are one such change.
fn change<B>(apply: fn(&mut GmailState, B)) -> MethodRouter<Arc<Shared>>
where
    B: DeserializeOwned + Send + 'static,
{
    post(
        move |State(sh): State<Arc<Shared>>, Json(body): Json<B>| async move {
            apply(&mut sh.lock(), body);
            StatusCode::NO_CONTENT
        },
    )
}

/// A `POST` with no body that runs one action on the fake's state; answers 204.
fn act(apply: fn(&mut GmailState)) -> MethodRouter<Arc<Shared>> {
    post(move |State(sh): State<Arc<Shared>>| async move {
        apply(&mut sh.lock());
        StatusCode::NO_CONTENT
    })
}

fn bad(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": message}))).into_response()
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"error": "no such draft"})),
    )
        .into_response()
}

/// The agent updates the draft to this message right after the next `drafts.update` of it.
async fn agent_update_after_next_update(
    State(sh): State<Arc<Shared>>,
    Path(id): Path<String>,
    Json(body): Json<RawBody>,
) -> Response {
    let raw = match body.bytes() {
        Ok(r) => r,
        Err(e) => return bad(e),
    };
    let mut s = sh.lock();
    if !s.drafts.contains_key(&id) {
        return not_found();
    }
    s.agent_update_after_update.insert(id, raw);
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BeforeSendBody {
    /// `update` (with `raw` or `rawText`), `delete` or `sendInGmail`.
    action: String,
    raw: Option<String>,
    raw_text: Option<String>,
}

/// Another client acts on the draft right before the next `drafts.send` of it.
async fn before_next_send(
    State(sh): State<Arc<Shared>>,
    Path(id): Path<String>,
    Json(body): Json<BeforeSendBody>,
) -> Response {
    let action = match body.action.as_str() {
        "update" => {
            let raw = RawBody {
                raw: body.raw,
                raw_text: body.raw_text,
                thread_id: None,
                label_ids: None,
            };
            match raw.bytes() {
                Ok(r) => BeforeSend::Update(r),
                Err(e) => return bad(e),
            }
        }
        "delete" => BeforeSend::Delete,
        "sendInGmail" => BeforeSend::SendInGmail,
        _ => return bad("action must be update, delete or sendInGmail"),
    };
    let mut s = sh.lock();
    if !s.drafts.contains_key(&id) {
        return not_found();
    }
    s.before_next_send.insert(id, action);
    StatusCode::NO_CONTENT.into_response()
}

async fn file_draft(State(sh): State<Arc<Shared>>, Json(body): Json<RawBody>) -> Response {
    let raw = match body.bytes() {
        Ok(r) => r,
        Err(e) => return bad(e),
    };
    let filed = sh.file_draft_with_labels(raw, body.thread_id, body.label_ids.unwrap_or_default());
    Json(json!({"id": filed.id, "messageId": filed.message_id, "threadId": filed.thread_id}))
        .into_response()
}

async fn list_drafts(State(sh): State<Arc<Shared>>) -> Response {
    let s = sh.lock();
    let drafts: Vec<_> = s
        .drafts_newest_first()
        .into_iter()
        .map(|(id, m)| json!({"id": id, "messageId": m.id, "threadId": m.thread_id}))
        .collect();
    Json(json!(drafts)).into_response()
}

async fn update_draft(
    State(sh): State<Arc<Shared>>,
    Path(id): Path<String>,
    Json(body): Json<RawBody>,
) -> Response {
    let raw = match body.bytes() {
        Ok(r) => r,
        Err(e) => return bad(e),
    };
    match sh.update_draft(&id, raw, body.thread_id) {
        Some(message_id) => Json(json!({"id": id, "messageId": message_id})).into_response(),
        None => not_found(),
    }
}

async fn delete_draft(State(sh): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    if sh.delete_draft(&id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        not_found()
    }
}

async fn add_message(State(sh): State<Arc<Shared>>, Json(body): Json<RawBody>) -> Response {
    let raw = match body.bytes() {
        Ok(r) => r,
        Err(e) => return bad(e),
    };
    let labels = body
        .label_ids
        .clone()
        .unwrap_or_else(|| vec!["INBOX".into(), "UNREAD".into()]);
    let (id, thread_id) = sh.add_message(raw, body.thread_id, labels);
    Json(json!({"id": id, "threadId": thread_id})).into_response()
}

async fn sent(State(sh): State<Arc<Shared>>) -> Response {
    let sent: Vec<_> = sh
        .lock()
        .sent
        .iter()
        .map(|r| {
            json!({
                "draftId": r.draft_id,
                "messageId": r.message_id,
                "threadId": r.thread_id,
                "raw": encode_raw(&r.raw),
                "rawText": String::from_utf8_lossy(&r.raw),
            })
        })
        .collect();
    Json(json!(sent)).into_response()
}

async fn sends(State(sh): State<Arc<Shared>>) -> Response {
    Json(json!(sh.lock().sends_per_draft)).into_response()
}

async fn sends_of(State(sh): State<Arc<Shared>>, Path(draft_id): Path<String>) -> Response {
    let count = sh
        .lock()
        .sends_per_draft
        .get(&draft_id)
        .copied()
        .unwrap_or(0);
    Json(json!({"draftId": draft_id, "count": count})).into_response()
}

async fn requests(State(sh): State<Arc<Shared>>) -> Response {
    Json(json!(sh.lock().log)).into_response()
}

async fn clear_requests(State(sh): State<Arc<Shared>>) -> Response {
    sh.lock().log.clear();
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FailBody {
    method: String,
    #[serde(default = "one")]
    times: u32,
    status: u16,
    reason: Option<String>,
    message: Option<String>,
    retry_after_ms: Option<u64>,
}

fn one() -> u32 {
    1
}

fn fail(s: &mut GmailState, body: FailBody) {
    s.fail.insert(
        body.method,
        FailFault {
            remaining: body.times,
            status: body.status,
            reason: body.reason,
            message: body.message,
            retry_after: body.retry_after_ms.map(Duration::from_millis),
        },
    );
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DelayBody {
    method: String,
    ms: u64,
    times: Option<u32>,
}

async fn delay_fault(State(sh): State<Arc<Shared>>, Json(body): Json<DelayBody>) -> Response {
    sh.set_delay(&body.method, Duration::from_millis(body.ms), body.times);
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
struct DropBody {
    method: String,
    #[serde(default = "one")]
    times: u32,
}

async fn clear_faults(State(sh): State<Arc<Shared>>) -> Response {
    sh.clear_faults();
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
struct OfflineBody {
    seconds: f64,
}

/// Go offline for a while: the answer is sent first, then connections are refused until the
/// time is up (a control API that is itself offline could not switch back).
async fn offline(State(sh): State<Arc<Shared>>, Json(body): Json<OfflineBody>) -> Response {
    if let Some(server) = sh.server.get().cloned() {
        let wait = Duration::from_secs_f64(body.seconds.clamp(0.0, 3600.0));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            server.set_online(false);
            tokio::time::sleep(wait).await;
            server.set_online(true);
        });
    }
    StatusCode::ACCEPTED.into_response()
}

#[derive(Deserialize)]
struct ScopesBody {
    scopes: Option<Vec<String>>,
}

async fn issue_tokens(State(sh): State<Arc<Shared>>, Json(body): Json<ScopesBody>) -> Response {
    let scopes = body
        .scopes
        .unwrap_or_else(|| vec![super::scopes::MODIFY.to_owned()]);
    let (access, refresh) = sh.lock().issue(scopes, true);
    Json(json!({"accessToken": access, "refreshToken": refresh})).into_response()
}

async fn grant_scopes(State(sh): State<Arc<Shared>>, Json(body): Json<ScopesBody>) -> Response {
    *sh.grant_scopes.lock().unwrap_or_else(|e| e.into_inner()) = body.scopes;
    StatusCode::NO_CONTENT.into_response()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuotaBody {
    units_per_minute: u32,
}

async fn state(State(sh): State<Arc<Shared>>) -> Response {
    let s = sh.lock();
    Json(json!({
        "email": s.email,
        "historyId": s.history_id.to_string(),
        "drafts": s.drafts.len(),
        "messages": s.messages.len(),
        "sent": s.sent.len(),
        "quotaUnitsPerMinute": s.quota_per_minute(),
    }))
    .into_response()
}

#[derive(Deserialize)]
struct OnBody {
    on: bool,
}

#[derive(Deserialize)]
struct ReportsBody {
    reports: bool,
}

#[derive(Deserialize)]
struct LifetimeBody {
    /// `null`: refresh tokens live until revoked.
    seconds: Option<f64>,
}

#[derive(Deserialize)]
struct ConsentErrorBody {
    /// `null`: the consent page approves again.
    error: Option<String>,
}

/// The owner presses Send on the draft in Gmail itself.
async fn send_in_gmail(State(sh): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match sh.lock().send_draft(&id, None, None) {
        Ok(m) => Json(json!({"id": m.id, "threadId": m.thread_id})).into_response(),
        Err(_) => not_found(),
    }
}
