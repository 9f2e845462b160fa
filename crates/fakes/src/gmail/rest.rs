//! Gmail REST endpoints under `/gmail/v1/users/{userId}/…`, answering with Google's JSON shapes
//! (discovery document `gmail/v1/gmail-api.json`: `Draft`, `Message`, `ListDraftsResponse`,
//! `ListMessagesResponse`, `ListHistoryResponse`, `Profile`).
//!
//! Every call goes through [`Call::run`]: log, bearer token, user id, scope, injected failure,
//! quota; then the change; then an injected delay of the answer; then, if asked, the connection
//! is dropped although the change is committed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::errors::ApiError;
use super::mime;
use super::scopes::{self, MethodSpec};
use super::state::{Change, State as Mailbox, StoredMessage};
use super::Shared;
use crate::server::DropConnection;

mod drafts;
mod history;
mod labels;
mod messages;
mod profile;
mod threads;
mod upload;

use drafts::{
    drafts_create, drafts_delete, drafts_get, drafts_list, drafts_send, drafts_send_upload,
    drafts_update, drafts_update_upload,
};
use history::history_list;
use labels::labels_list;
use messages::{message_json, messages_get, messages_list, messages_modify};
use profile::profile;
use threads::threads_get;
use upload::{parse_metadata, upload_parts};

/// What the handlers need of a request besides path and body.
pub(crate) struct Req {
    pub http_method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub bearer: Option<String>,
}

impl Req {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn params(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The query with secrets masked, for the request log.
    pub fn logged_query(&self) -> String {
        self.query
            .iter()
            .map(|(k, v)| {
                if k == "access_token" {
                    format!("{k}=<redacted>")
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join("&")
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Req {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let raw_query = parts.uri.query().unwrap_or_default().to_owned();
        let query = url::form_urlencoded::parse(raw_query.as_bytes())
            .into_owned()
            .collect();
        let bearer = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(|t| t.trim().to_owned());
        Ok(Req {
            http_method: parts.method.to_string(),
            path: parts.uri.path().to_owned(),
            query,
            bearer,
        })
    }
}

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/gmail/v1/users/{user}/drafts",
            get(drafts_list).post(drafts_create),
        )
        .route("/gmail/v1/users/{user}/drafts/send", post(drafts_send))
        .route(
            "/upload/gmail/v1/users/{user}/drafts/send",
            post(drafts_send_upload),
        )
        .route(
            "/upload/gmail/v1/users/{user}/drafts/{id}",
            put(drafts_update_upload),
        )
        .route(
            "/gmail/v1/users/{user}/drafts/{id}",
            get(drafts_get).put(drafts_update).delete(drafts_delete),
        )
        .route("/gmail/v1/users/{user}/messages/send", post(messages_send))
        .route(
            "/upload/gmail/v1/users/{user}/messages/send",
            post(messages_send_upload),
        )
        .route("/gmail/v1/users/{user}/messages", get(messages_list))
        .route("/gmail/v1/users/{user}/messages/{id}", get(messages_get))
        .route(
            "/gmail/v1/users/{user}/messages/{id}/modify",
            post(messages_modify),
        )
        .route("/gmail/v1/users/{user}/labels", get(labels_list))
        .route("/gmail/v1/users/{user}/threads/{id}", get(threads_get))
        .route("/gmail/v1/users/{user}/history", get(history_list))
        .route("/gmail/v1/users/{user}/profile", get(profile))
}

/// A handler's answer: JSON, or 204 without a body.
enum Answer {
    Json(Value),
    Empty,
}

/// One call of a Gmail method: the fake, the `{user}` and (for a method on one resource) the
/// `{id}` of the path, and the request. Every handler takes one and answers through
/// [`Call::run`].
pub(crate) struct Call {
    shared: Arc<Shared>,
    user: String,
    /// Empty for a method on a collection.
    id: String,
    req: Req,
}

impl FromRequestParts<Arc<Shared>> for Call {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, Response> {
        let Path(mut path) = Path::<HashMap<String, String>>::from_request_parts(parts, shared)
            .await
            .map_err(IntoResponse::into_response)?;
        let Ok(req) = Req::from_request_parts(parts, shared).await;
        Ok(Call {
            shared: Arc::clone(shared),
            user: path.remove("user").unwrap_or_default(),
            id: path.remove("id").unwrap_or_default(),
            req,
        })
    }
}

impl Call {
    /// Runs the method `spec` (see the module header); `body` makes its change and answer.
    async fn run(
        &self,
        spec: &MethodSpec,
        body: impl FnOnce(&mut Mailbox, &Req) -> Result<Answer, ApiError>,
    ) -> Response {
        let req = &self.req;
        let (delay, outcome, dropped, garbled) = {
            let mut s = self.shared.lock();
            s.log.push(super::state::LoggedRequest {
                method: spec.name.to_owned(),
                http_method: req.http_method.clone(),
                path: req.path.clone(),
                query: req.logged_query(),
                at: chrono::Utc::now(),
            });
            let delay = s.take_delay(spec.name);
            let held = s.held.remove(spec.name);
            let outcome = match admit(&mut s, spec, req, &self.user) {
                Ok(()) => body(&mut s, req),
                Err(e) => Err(e),
            };
            let dropped = outcome.is_ok() && s.take_drop(spec.name);
            let garbled = outcome.is_ok() && s.take_garble(spec.name);
            (
                delay.map(Pause::For).or(held.map(Pause::Until)),
                outcome,
                dropped,
                garbled,
            )
        };
        // The change is made before the delay, as at Google: a client that gives up waiting does
        // not undo what the server already did.
        match delay {
            Some(Pause::For(delay)) => tokio::time::sleep(delay).await,
            Some(Pause::Until(mut released)) => {
                // Released, or the test's handle dropped: either way the call goes on.
                let _ = released.wait_for(|go| *go).await;
            }
            None => {}
        }
        let mut response = match outcome {
            Ok(Answer::Json(v)) if garbled => {
                let text = v.to_string();
                let cut = &text[..text.len() / 2];
                (
                    StatusCode::OK,
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "application/json; charset=UTF-8",
                    )],
                    cut.to_owned(),
                )
                    .into_response()
            }
            Ok(Answer::Json(v)) => Json(v).into_response(),
            Ok(Answer::Empty) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => e.into_response(),
        };
        if dropped {
            response.extensions_mut().insert(DropConnection);
        }
        response
    }
}

/// Authentication, user, scope, injected failure and quota, in Google's order.
fn admit(s: &mut Mailbox, spec: &MethodSpec, req: &Req, user: &str) -> Result<(), ApiError> {
    let token = req
        .bearer
        .as_deref()
        .ok_or_else(|| ApiError::unauthenticated(true))?;
    let scopes = s
        .grant(token)
        .map(|g| g.scopes.clone())
        .ok_or_else(|| ApiError::unauthenticated(false))?;
    if user != "me" && !user.eq_ignore_ascii_case(&s.email) {
        return Err(ApiError::delegation_denied(user));
    }
    if !scopes::allows(spec, &scopes) {
        return Err(ApiError::insufficient_scope(spec.scopes, spec.rpc));
    }
    scopes::metadata_limits(spec, &scopes, req)?;
    if let Some(fault) = s.take_fail(spec.name) {
        let mut error = ApiError::for_status(
            fault.status,
            fault.reason.as_deref(),
            fault.message.as_deref(),
        );
        if let Some(wait) = fault.retry_after {
            let at = chrono::Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
            error.message = format!(
                "{}  Retry after {}",
                error.message,
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            );
        }
        return Err(error);
    }
    s.take_quota(spec.units).map_err(|wait| {
        let at = chrono::Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
        ApiError::user_rate_limited(Some(at))
    })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct DraftBody {
    id: Option<String>,
    message: Option<MessageBody>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct MessageBody {
    raw: Option<String>,
    thread_id: Option<String>,
    /// The labels a client asks the draft's message to carry.
    #[serde(default)]
    label_ids: Vec<String>,
}

fn parse_body<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid(format!("Invalid JSON payload received. {e}")))
}

/// Decode `raw` as Google does: base64url or base64, padded or not.
pub(crate) fn decode_raw(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::DecodePaddingMode;
    use base64::{alphabet, Engine};
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let text = text.trim();
    GeneralPurpose::new(&alphabet::URL_SAFE, config)
        .decode(text)
        .or_else(|_| GeneralPurpose::new(&alphabet::STANDARD, config).decode(text))
        .ok()
}

pub(crate) fn encode_raw(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE.encode(bytes)
}

fn message_ref(m: &StoredMessage) -> Value {
    json!({"id": m.id, "threadId": m.thread_id})
}

fn message_labels(m: &StoredMessage) -> Value {
    json!({"id": m.id, "threadId": m.thread_id, "labelIds": m.label_ids})
}

fn page(req: &Req, total: usize) -> Result<(usize, usize), ApiError> {
    let max = match req.param("maxResults") {
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ApiError::invalid(format!("Invalid value at 'max_results' ({v})")))?,
        None => 100,
    }
    .clamp(1, 500);
    let start = match req.param("pageToken") {
        Some(t) => t
            .parse::<usize>()
            .map_err(|_| ApiError::invalid("Invalid pageToken"))?,
        None => 0,
    };
    Ok((start.min(total), max))
}

/// `POST /gmail/v1/users/{userId}/messages/send`: a Message resource (`raw`, `threadId`) sent
/// as it is; without `threadId` it starts a thread of its own.
async fn messages_send(call: Call, body: Bytes) -> Response {
    call.run(&scopes::MESSAGES_SEND, |s, _| {
        if body.len() > s.json_body_limit {
            return Err(ApiError::payload_too_large(s.json_body_limit));
        }
        let message: MessageBody = parse_body(&body)?;
        let raw = message
            .raw
            .as_deref()
            .and_then(decode_raw)
            .ok_or_else(|| ApiError::invalid("Invalid value for ByteString"))?;
        let sent = s.send_message(raw, message.thread_id)?;
        Ok(Answer::Json(message_labels(&sent)))
    })
    .await
}

/// `POST /upload/gmail/v1/users/{userId}/messages/send`: messages.send with the message as
/// media; the metadata part (multipart only) may name the thread.
async fn messages_send_upload(call: Call, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    call.run(&scopes::MESSAGES_SEND, |s, req| {
        let (metadata, media) = upload_parts(req, &headers, &body)?;
        let message: MessageBody = parse_metadata(metadata)?;
        let sent = s.send_message(media, message.thread_id)?;
        Ok(Answer::Json(message_labels(&sent)))
    })
    .await
}

/// How an answer is held back after its change is made.
enum Pause {
    /// For a time (`FakeGmail::delay`).
    For(std::time::Duration),
    /// Until the test lets it go (`FakeGmail::hold_next`).
    Until(tokio::sync::watch::Receiver<bool>),
}
