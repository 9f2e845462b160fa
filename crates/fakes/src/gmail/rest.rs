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

mod history;
mod labels;
mod messages;
mod profile;
mod threads;

use history::history_list;
use labels::labels_list;
use messages::{message_json, messages_get, messages_list, messages_modify};
use profile::profile;
use threads::threads_get;

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

/// The message of a `drafts.create` or `drafts.update` body.
struct DraftMessage {
    /// Its raw bytes (required).
    raw: Vec<u8>,
    /// The thread it names.
    thread: Option<String>,
    /// The labels it asks for (`message.labelIds`).
    labels: Vec<String>,
}

fn draft_message(body: &[u8]) -> Result<DraftMessage, ApiError> {
    let body: DraftBody = parse_body(body)?;
    let message = body.message.unwrap_or_default();
    let raw = message
        .raw
        .ok_or_else(|| ApiError::invalid("Missing draft message"))?;
    let raw = decode_raw(&raw).ok_or_else(|| ApiError::invalid("Invalid value for ByteString"))?;
    Ok(DraftMessage {
        raw,
        thread: message.thread_id,
        labels: message.label_ids,
    })
}

/// A `Draft` resource as `drafts.create` and `drafts.update` answer it: the id and the
/// message's ids and labels.
fn draft_resource(id: &str, m: &StoredMessage) -> Answer {
    Answer::Json(json!({"id": id, "message": message_labels(m)}))
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

async fn drafts_list(call: Call) -> Response {
    call.run(&scopes::DRAFTS_LIST, |s, req| {
        let all = s.drafts_newest_first();
        let (start, max) = page(req, all.len())?;
        let end = (start + max).min(all.len());
        let drafts: Vec<Value> = all[start..end]
            .iter()
            .map(|(id, m)| json!({"id": id, "message": message_ref(m)}))
            .collect();
        let mut v = json!({"resultSizeEstimate": all.len()});
        if !drafts.is_empty() {
            v["drafts"] = json!(drafts);
        }
        if end < all.len() {
            v["nextPageToken"] = json!(end.to_string());
        }
        Ok(Answer::Json(v))
    })
    .await
}

async fn drafts_get(call: Call) -> Response {
    call.run(&scopes::DRAFTS_GET, |s, req| {
        let draft = s
            .drafts
            .get(&call.id)
            .ok_or_else(|| s.missing_draft(&call.id))?;
        let m = s
            .messages
            .get(&draft.message_id)
            .ok_or_else(ApiError::not_found)?;
        let format = req.param("format").unwrap_or("full").to_ascii_lowercase();
        let message = if format == "minimal" {
            message_labels(m)
        } else {
            message_json(m, &format, &req.params("metadataHeaders"))?
        };
        Ok(Answer::Json(json!({"id": call.id, "message": message})))
    })
    .await
}

async fn drafts_create(call: Call, body: Bytes) -> Response {
    call.run(&scopes::DRAFTS_CREATE, |s, _| {
        let DraftMessage {
            raw,
            thread,
            labels,
        } = draft_message(&body)?;
        s.check_labels(&labels)?;
        let (id, m) = s.create_draft_with_labels(raw, thread, labels);
        Ok(draft_resource(&id, &m))
    })
    .await
}

async fn drafts_update(call: Call, body: Bytes) -> Response {
    call.run(&scopes::DRAFTS_UPDATE, |s, _| {
        if body.len() > s.json_body_limit {
            return Err(ApiError::payload_too_large(s.json_body_limit));
        }
        let DraftMessage {
            raw,
            thread,
            labels,
        } = draft_message(&body)?;
        s.check_labels(&labels)?;
        let m = s.update_draft_by_api(&call.id, raw, thread, labels)?;
        Ok(draft_resource(&call.id, &m))
    })
    .await
}

async fn drafts_delete(call: Call) -> Response {
    call.run(&scopes::DRAFTS_DELETE, |s, _| {
        s.delete_draft(&call.id)?;
        Ok(Answer::Empty)
    })
    .await
}

async fn drafts_send(call: Call, body: Bytes) -> Response {
    call.run(&scopes::DRAFTS_SEND, |s, _| {
        if body.len() > s.json_body_limit {
            return Err(ApiError::payload_too_large(s.json_body_limit));
        }
        let body: DraftBody = parse_body(&body)?;
        let raw = match body.message.as_ref().and_then(|m| m.raw.as_deref()) {
            Some(text) => Some(
                decode_raw(text)
                    .ok_or_else(|| ApiError::invalid("Invalid value for ByteString"))?,
            ),
            None => None,
        };
        send(s, body, raw)
    })
    .await
}

/// `POST /upload/gmail/v1/users/{userId}/drafts/send`: the Draft resource and the message
/// uploaded as media (see [`upload_parts`]).
async fn drafts_send_upload(call: Call, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    call.run(&scopes::DRAFTS_SEND, |s, req| {
        let (draft, media) = upload_parts(req, &headers, &body)?;
        let draft: DraftBody = parse_metadata(draft)?;
        send(s, draft, Some(media))
    })
    .await
}

/// `PUT /upload/gmail/v1/users/{userId}/drafts/{id}`: drafts.update with the message as media,
/// like [`drafts_send_upload`]. Without a `threadId` in the metadata (always so for
/// `uploadType=media`) the draft starts a thread of its own.
async fn drafts_update_upload(call: Call, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    call.run(&scopes::DRAFTS_UPDATE, |s, req| {
        let (draft, media) = upload_parts(req, &headers, &body)?;
        let draft: DraftBody = parse_metadata(draft)?;
        let message = draft.message.unwrap_or_default();
        s.check_labels(&message.label_ids)?;
        let m = s.update_draft_by_api(&call.id, media, message.thread_id, message.label_ids)?;
        Ok(draft_resource(&call.id, &m))
    })
    .await
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

/// The resource of an upload's metadata part; an upload without one (`uploadType=media`)
/// carries an empty resource.
fn parse_metadata<T: for<'de> Deserialize<'de> + Default>(
    metadata: Option<Vec<u8>>,
) -> Result<T, ApiError> {
    metadata.map_or_else(|| Ok(T::default()), |json| parse_body(&json))
}

/// Whether `content_type` names one of `essence` (`application/json`) or, with a `/*`
/// ending, one of its family (`message/*`), parameters aside.
fn is_type(content_type: &str, essence: &str) -> bool {
    let kind = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.strip_suffix("/*") {
        Some(family) => kind
            .split_once('/')
            .is_some_and(|(top, sub)| top == family && !sub.is_empty()),
        None => kind == essence,
    }
}

/// The metadata JSON (if any) and the message of an upload, as Google's upload guide describes
/// them (<https://developers.google.com/workspace/gmail/api/guides/uploads>):
/// - `uploadType=media`: the body is the message itself, its `Content-Type` one the method
///   accepts (`message/*`: the discovery document's `mediaUpload.accept` of every Gmail
///   upload method); there is no metadata.
/// - `uploadType=multipart`: a `multipart/related` body of the resource's metadata
///   (`Content-Type: application/json`) and then the media (`message/*`).
///
/// A media type the method does not take answers Google's 400 ("Media type '…' is not
/// supported. Valid media types: [message/*]"). A metadata part that is not JSON answers the
/// same 400 shape; Google documents no text for that case, so the message is the fake's own.
/// Resumable uploads are not served by the fake.
fn upload_parts(
    req: &Req,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Result<(Option<Vec<u8>>, Vec<u8>), ApiError> {
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let (metadata, media) = match req.param("uploadType") {
        Some("media") => {
            if !is_type(content_type, "message/*") {
                return Err(ApiError::unsupported_media(content_type));
            }
            (None, body.to_vec())
        }
        Some("multipart") => {
            let (metadata, media) = mime::related_parts(content_type, body)
                .ok_or_else(|| ApiError::invalid("Invalid multipart request"))?;
            if !is_type(&metadata.content_type, "application/json") {
                return Err(
                    ApiError::unsupported_media(&metadata.content_type).with_message(format!(
                        "Metadata part has media type '{}'; it must be application/json",
                        metadata.content_type
                    )),
                );
            }
            if !is_type(&media.content_type, "message/*") {
                return Err(ApiError::unsupported_media(&media.content_type));
            }
            (Some(metadata.content), media.content)
        }
        other => {
            return Err(ApiError::invalid(format!(
                "Invalid upload type '{}': this fake serves uploadType=media and multipart",
                other.unwrap_or_default()
            )))
        }
    };
    if media.len() > super::MAX_UPLOAD_BYTES {
        return Err(ApiError::payload_too_large(super::MAX_UPLOAD_BYTES));
    }
    Ok((metadata, media))
}

fn send(s: &mut Mailbox, body: DraftBody, raw: Option<Vec<u8>>) -> Result<Answer, ApiError> {
    let id = body
        .id
        .filter(|i| !i.is_empty())
        .ok_or_else(|| ApiError::invalid("Invalid draft"))?;
    let thread = body.message.and_then(|m| m.thread_id);
    let sent = s.send_draft_by_api(&id, raw, thread)?;
    Ok(Answer::Json(message_labels(&sent)))
}

/// How an answer is held back after its change is made.
enum Pause {
    /// For a time (`FakeGmail::delay`).
    For(std::time::Duration),
    /// Until the test lets it go (`FakeGmail::hold_next`).
    Until(tokio::sync::watch::Receiver<bool>),
}
