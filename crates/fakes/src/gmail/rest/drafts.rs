//! `users.drafts`: `list`, `get`, `create`, `update`, `delete` and `send`, plain and uploaded
//! (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.drafts>).

use super::*;

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

pub(super) async fn drafts_list(call: Call) -> Response {
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

pub(super) async fn drafts_get(call: Call) -> Response {
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

pub(super) async fn drafts_create(call: Call, body: Bytes) -> Response {
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

pub(super) async fn drafts_update(call: Call, body: Bytes) -> Response {
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

pub(super) async fn drafts_delete(call: Call) -> Response {
    call.run(&scopes::DRAFTS_DELETE, |s, _| {
        s.delete_draft(&call.id)?;
        Ok(Answer::Empty)
    })
    .await
}

pub(super) async fn drafts_send(call: Call, body: Bytes) -> Response {
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
pub(super) async fn drafts_send_upload(
    call: Call,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
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
pub(super) async fn drafts_update_upload(
    call: Call,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Response {
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

fn send(s: &mut Mailbox, body: DraftBody, raw: Option<Vec<u8>>) -> Result<Answer, ApiError> {
    let id = body
        .id
        .filter(|i| !i.is_empty())
        .ok_or_else(|| ApiError::invalid("Invalid draft"))?;
    let thread = body.message.and_then(|m| m.thread_id);
    let sent = s.send_draft_by_api(&id, raw, thread)?;
    Ok(Answer::Json(message_labels(&sent)))
}
