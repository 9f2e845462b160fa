//! The owner API of the fake muster: `POST /login`, the plugin-draft routes and the session
//! check in front of them, answered exactly as `docs/muster.md` (the contract) says.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::faults::session_cookie;
use super::state::{ApiError, LoginAnswer, OwnerDecision};
use super::Shared;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(self.body())).into_response()
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// `POST /login`, form field `password`.
pub(crate) async fn login(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let password = url::form_urlencoded::parse(&body)
        .find(|(name, _)| name == "password")
        .map(|(_, value)| value.into_owned());
    let answer = shared.store().login(password.as_deref());
    match answer {
        LoginAnswer::SignedIn(session) => (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, "/".to_owned()),
                (
                    header::SET_COOKIE,
                    format!("muster_session={session}; HttpOnly; SameSite=Lax; Path=/"),
                ),
            ],
        )
            .into_response(),
        LoginAnswer::WrongPassword => error(StatusCode::UNAUTHORIZED, "wrong password"),
        LoginAnswer::TooManyAttempts => error(StatusCode::TOO_MANY_REQUESTS, "too many attempts"),
        LoginAnswer::NoPassword => error(StatusCode::SERVICE_UNAVAILABLE, "no password configured"),
    }
}

/// Middleware in front of every owner route: the session cookie is required.
pub(crate) async fn require_session(
    State(shared): State<Arc<Shared>>,
    req: Request,
    next: Next,
) -> Response {
    let signed_in = session_cookie(req.headers()).is_some_and(|s| shared.store().is_signed_in(&s));
    if !signed_in {
        return error(StatusCode::UNAUTHORIZED, "not signed in");
    }
    next.run(req).await
}

/// `GET /api/plugin/drafts?state=…`
pub(crate) async fn list_drafts(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let state = query.get("state").map_or("all", String::as_str);
    match shared.store().list_drafts(state) {
        Ok(drafts) => Json(json!({ "drafts": drafts })).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /api/plugin/drafts/{id}`
pub(crate) async fn get_draft(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Response {
    match shared.store().get_draft(&id) {
        Ok(draft) => Json(draft).into_response(),
        Err(e) => e.into_response(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DecideBody {
    decision: String,
    #[allow(dead_code)] // muster keeps the note for its own log; the contract never returns it
    note: Option<String>,
    expected_updated_at: String,
}

/// `POST /api/plugin/drafts/{id}/decide`
pub(crate) async fn decide(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let body: DecideBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("invalid request: {e}")),
    };
    let decision = match body.decision.as_str() {
        "approve" => OwnerDecision::Approve,
        "reject" => OwnerDecision::Reject,
        other => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("decision must be approve or reject, not {other:?}"),
            )
        }
    };
    let outcome = shared
        .store()
        .decide(&id, decision, &body.expected_updated_at);
    match outcome {
        Ok(draft) => {
            let note = match decision {
                OwnerDecision::Approve => {
                    "Queued: the plugin sends it and a refusal comes back here."
                }
                OwnerDecision::Reject => "Rejected: the message is handed back to its session.",
            };
            Json(json!({ "draft": draft, "note": note })).into_response()
        }
        Err(e) => e.into_response(),
    }
}

/// `GET /api/plugin/routes?messageId=…`
pub(crate) async fn list_routes(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(message_id) = query.get("messageId") else {
        return error(StatusCode::BAD_REQUEST, "messageId is required");
    };
    let routes: Vec<Value> = shared.store().list_routes(message_id);
    Json(json!({ "routes": routes })).into_response()
}

/// `GET /api/plugin/messages?state=…`
pub(crate) async fn list_messages(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let messages = shared
        .store()
        .list_messages(query.get("state").map(String::as_str));
    Json(json!({ "messages": messages })).into_response()
}
