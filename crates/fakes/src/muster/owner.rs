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
use super::state::{ApiError, LoginAnswer, OwnerDecision, MIN_PASSWORD_LEN, SESSION_TTL};
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

/// muster's sign-in page: every answer of `POST /login` but the 303 is this HTML document with
/// `Cache-Control: no-store` (`internal/api/login.go`, `renderLoginPage`).
fn login_page(status: StatusCode, problem: &str) -> Response {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in · muster</title></head>\n\
         <body><main><form method=\"POST\" action=\"/login\"><h1>Sign in to muster</h1>\n\
         <p role=\"alert\">{problem}</p>\n\
         <label for=\"muster-password\">Operator password</label>\n\
         <input id=\"muster-password\" name=\"password\" type=\"password\" required>\n\
         <button type=\"submit\">Sign in</button></form></main></body></html>"
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response()
}

/// Go's `ParseForm`: the body must be valid percent-encoded UTF-8.
fn read_form(body: &[u8]) -> Result<Option<String>, ()> {
    let text = std::str::from_utf8(body).map_err(drop)?;
    for pair in text.split('&') {
        let bytes = pair.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let hex = bytes.get(i + 1..i + 3).ok_or(())?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err(());
                }
                i += 3;
            } else {
                i += 1;
            }
        }
    }
    Ok(url::form_urlencoded::parse(body)
        .find(|(name, _)| name == "password")
        .map(|(_, value)| value.into_owned()))
}

/// `POST /login`, form field `password` (`internal/api/login.go`, `handleLoginSubmit`).
pub(crate) async fn login(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let answer = shared.store().login(read_form(&body));
    match answer {
        LoginAnswer::SignedIn(session) => (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, "/".to_owned()),
                (
                    header::SET_COOKIE,
                    format!(
                        "muster_session={session}; Path=/; Max-Age={}; HttpOnly; SameSite=Lax",
                        SESSION_TTL.as_secs()
                    ),
                ),
            ],
        )
            .into_response(),
        LoginAnswer::UnreadableForm => {
            login_page(StatusCode::BAD_REQUEST, "That form could not be read.")
        }
        LoginAnswer::WrongPassword => {
            login_page(StatusCode::UNAUTHORIZED, "That password is not right.")
        }
        LoginAnswer::TooManyAttempts => login_page(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many attempts. Wait a minute and try again.",
        ),
        LoginAnswer::NoPassword => login_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "This server has no operator password configured (MUSTER_UI_PASSWORD is not set or \
             shorter than 12 characters).",
        ),
    }
}

/// `POST /logout`: muster clears the cookie in the browser and sends it to the login page; the
/// cookie itself stays valid (it is checked by signature alone).
pub(crate) async fn logout() -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/login"),
            (
                header::SET_COOKIE,
                "muster_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
            ),
        ],
    )
        .into_response()
}

/// Go's mux answer to a route it does not have.
pub(crate) fn page_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        "404 page not found\n",
    )
        .into_response()
}

/// Middleware in front of every owner route: the session cookie is required. A muster without
/// the plugin-draft routes answers them as unknown, before any session check (the mux routes
/// first).
pub(crate) async fn require_session(
    State(shared): State<Arc<Shared>>,
    req: Request,
    next: Next,
) -> Response {
    if shared.store().style.no_plugin_api && req.uri().path().starts_with("/api/plugin/") {
        return page_not_found();
    }
    let navigation = is_document_navigation(req.headers());
    if shared.store().password.len() < MIN_PASSWORD_LEN {
        // `requireSession` refuses before looking at the cookie (`internal/api/auth.go`); a
        // browser's page load is sent to /login, which explains the missing password.
        if navigation {
            return see_other("/login".to_owned());
        }
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the web UI is not configured for login (MUSTER_UI_PASSWORD)",
        );
    }
    let signed_in = session_cookie(req.headers()).is_some_and(|s| shared.store().is_signed_in(&s));
    if !signed_in {
        // `refuseUnauthenticated`: a page load lands on the sign-in form, which returns it
        // to where it was going; anything else gets the JSON 401.
        if navigation {
            return see_other(login_path_for(req.uri()));
        }
        return error(StatusCode::UNAUTHORIZED, "not signed in");
    }
    next.run(req).await
}

/// muster's `isDocumentNavigation` (`internal/api/auth.go`): a browser fetching a top-level
/// document, told by `Sec-Fetch-Dest` / `Sec-Fetch-Mode` where sent, else by an `Accept` that
/// asks for HTML from something that is not htmx or an XHR.
fn is_document_navigation(headers: &header::HeaderMap) -> bool {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if get("HX-Request").is_some_and(|v| !v.is_empty())
        || get("X-Requested-With") == Some("XMLHttpRequest")
    {
        return false;
    }
    if let Some(dest) = get("Sec-Fetch-Dest").filter(|v| !v.is_empty()) {
        return dest == "document";
    }
    if let Some(mode) = get("Sec-Fetch-Mode").filter(|v| !v.is_empty()) {
        return mode == "navigate";
    }
    get("Accept").is_some_and(|v| v.contains("text/html"))
}

/// muster's `loginPathFor`: the sign-in page, with the page asked for as a relative `next`.
fn login_path_for(uri: &axum::http::Uri) -> String {
    let want = uri.path_and_query().map_or("/", |p| p.as_str());
    if want.is_empty() || want == "/" || want.starts_with("/login") {
        return "/login".to_owned();
    }
    let next: String = url::form_urlencoded::byte_serialize(want.as_bytes()).collect();
    format!("/login?next={next}")
}

/// Go's `http.Redirect` with 303 for a request that is not a HEAD or GET of HTML: the status and
/// `Location` (its short HTML body is not needed by anyone reading the status).
fn see_other(location: String) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

/// A list as this muster writes it: bare, or wrapped under `field`.
fn list(shared: &Shared, field: &str, items: Vec<Value>) -> Response {
    if shared.store().style.bare_lists {
        Json(Value::Array(items)).into_response()
    } else {
        Json(json!({ field: items })).into_response()
    }
}

/// `GET /api/plugin/drafts?state=…`
pub(crate) async fn list_drafts(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let state = query.get("state").map_or("all", String::as_str);
    // The store's guard must be gone before `list` looks at the wire style.
    let drafts = shared.store().list_drafts(state);
    match drafts {
        Ok(drafts) => list(&shared, "drafts", drafts),
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
        Err(e) => per_id_error(e),
    }
}

/// An error on a per-id route. muster's session-tier handlers answer a record they do not have
/// with Go's `http.NotFound`: plain text, the same as a route that does not exist.
fn per_id_error(e: ApiError) -> Response {
    if e.status == 404 {
        page_not_found()
    } else {
        e.into_response()
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
        Err(e) => per_id_error(e),
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
    list(&shared, "routes", routes)
}

/// `GET /api/plugin/messages?state=…`
pub(crate) async fn list_messages(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let messages = shared
        .store()
        .list_messages(query.get("state").map(String::as_str));
    list(&shared, "messages", messages)
}
