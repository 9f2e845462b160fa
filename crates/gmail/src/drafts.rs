//! `users.drafts`: list, get, update, send, delete.
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users.drafts>.
//! `drafts.send` takes the draft as JSON (`raw` base64url inside) or, for a large message,
//! through the upload endpoint `POST /upload/gmail/v1/users/me/drafts/send?uploadType=multipart`
//! (the discovery document's `mediaUpload` for drafts.send: `message/*`, max 35 MB;
//! <https://developers.google.com/gmail/api/guides/uploads>).
//! Calls that carry or fetch a whole message (send, update, `format=raw`) are timed by
//! progress ([`crate::ClientConfig::idle_timeout`]), not by their length: a 35 MB send on a slow
//! link may take many minutes and is still sent once.
//! A draft's `id` is stable; its `message.id` changes on every update, so it is the draft's
//! version. A sent or deleted draft answers 404 (sometimes 400) afterwards.
//! `drafts.update` (`PUT /drafts/{id}`, 15 units) replaces the draft's whole message; like
//! send, a large message goes through `PUT /upload/gmail/v1/users/me/drafts/{id}?uploadType=multipart`.

use crate::client::{segment, Body, Call, GmailClient};
use crate::error::{Error, Result};
use crate::quota::Method;
use crate::wire;

/// Largest page `drafts.list` accepts.
const MAX_PAGE: &str = "500";

/// The largest message `drafts.send` accepts: the discovery document's `mediaUpload.maxSize`
/// for the method, "35MB" (Google's megabytes are MiB in its upload limits).
pub const MAX_SEND_BYTES: usize = 35 * 1024 * 1024;

/// A draft as listed: its stable id and its current version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DraftRef {
    /// The draft id (stable across updates).
    pub id: String,
    /// The id of the draft's current message (changes on every update).
    pub message_id: String,
    /// The thread the draft belongs to.
    pub thread_id: String,
}

/// A draft with its full RFC 5322 bytes (`format=raw`).
#[derive(Clone, PartialEq, Eq)]
pub struct RawDraft {
    /// The draft id.
    pub id: String,
    /// The current message id (the version).
    pub message_id: String,
    /// The thread.
    pub thread_id: String,
    /// Labels of the draft message (`DRAFT`, …).
    pub label_ids: Vec<String>,
    /// The mailbox history id at this message, when Gmail gives it.
    pub history_id: Option<String>,
    /// The message exactly as Gmail stores it.
    pub raw: Vec<u8>,
    /// Gmail's `internalDate` of the draft message (epoch ms, Google's clock).
    pub internal_date: Option<i64>,
}

impl std::fmt::Debug for RawDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawDraft")
            .field("id", &self.id)
            .field("message_id", &self.message_id)
            .field("thread_id", &self.thread_id)
            .field("label_ids", &self.label_ids)
            .field("raw_len", &self.raw.len())
            .finish()
    }
}

/// The message Gmail created by sending a draft.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentMessage {
    /// The sent message's id.
    pub id: String,
    /// Its thread (the draft's thread when one was given).
    pub thread_id: String,
    /// Its labels (`SENT`, …).
    pub label_ids: Vec<String>,
}

impl GmailClient {
    /// Every draft of the mailbox, following all pages (`drafts.list`, 5 units a page).
    pub async fn list_drafts(&self) -> Result<Vec<DraftRef>> {
        let call = Call::get(Method::DraftsList, "/drafts").query("maxResults", MAX_PAGE);
        self.list_all(call, draft_ref).await
    }

    /// One draft with its raw bytes (`drafts.get?format=raw`, 5 units).
    pub async fn get_draft_raw(&self, draft_id: &str) -> Result<RawDraft> {
        let call = Call::get(Method::DraftsGet, format!("/drafts/{}", segment(draft_id)))
            .query("format", "raw")
            .transfer();
        let draft: wire::Draft = self.execute(&call).await?;
        let message = draft.message.ok_or_else(|| Error::BadResponse {
            detail: "drafts.get answered a draft without a message".into(),
        })?;
        let raw = message
            .raw
            .as_deref()
            .and_then(wire::decode_raw)
            .ok_or_else(|| Error::BadResponse {
                detail: "drafts.get answered no readable base64url `raw`".into(),
            })?;
        Ok(RawDraft {
            id: draft.id,
            message_id: message.id,
            thread_id: message.thread_id.unwrap_or_default(),
            label_ids: message.label_ids,
            history_id: message.history_id,
            internal_date: message
                .internal_date
                .as_deref()
                .and_then(|d| d.parse().ok()),
            raw,
        })
    }

    /// One draft's current version only (`drafts.get?format=minimal`, 5 units): the cheap
    /// re-read before a send.
    pub async fn get_draft_minimal(&self, draft_id: &str) -> Result<DraftRef> {
        let call = Call::get(Method::DraftsGet, format!("/drafts/{}", segment(draft_id)))
            .query("format", "minimal");
        let draft: wire::Draft = self.execute(&call).await?;
        draft_ref(draft)
    }

    /// Replace a draft's message with exactly `raw` (`drafts.update`, 15 units): the draft
    /// keeps its id and gets a new message id, its new version, which is returned.
    ///
    /// Never retried here: Gmail has no precondition on the version replaced, so the caller
    /// checks the version first and reads the draft back afterwards.
    pub async fn update_draft(
        &self,
        draft_id: &str,
        raw: &[u8],
        thread_id: Option<&str>,
    ) -> Result<DraftRef> {
        let path = format!("/drafts/{}", segment(draft_id));
        let body = self.message_body(draft_id, raw, thread_id)?;
        let call = Call::new(Method::DraftsUpdate, reqwest::Method::PUT, path)
            .body(body)
            .transfer();
        let draft: wire::Draft = self.execute(&call).await?;
        draft_ref(draft)
    }

    /// Send a draft with exactly `raw` as its content (`drafts.send`, 100 units).
    ///
    /// Passing the reviewed bytes makes Gmail send those and nothing newer. A message whose
    /// JSON body would exceed the client's JSON limit goes through the upload endpoint, still
    /// with exactly these bytes. Never retried here: on `Transport { request_sent: true }` the
    /// caller must reconcile (look for the `Message-ID` in SENT) before trying again.
    pub async fn send_draft(
        &self,
        draft_id: &str,
        raw: &[u8],
        thread_id: Option<&str>,
    ) -> Result<SentMessage> {
        let body = self.message_body(draft_id, raw, thread_id)?;
        let call = Call::new(Method::DraftsSend, reqwest::Method::POST, "/drafts/send")
            .body(body)
            .transfer();
        let message: wire::Message = self.execute(&call).await?;
        Ok(SentMessage {
            id: message.id,
            thread_id: message.thread_id.unwrap_or_default(),
            label_ids: message.label_ids,
        })
    }

    /// Delete a draft for good (`drafts.delete`, 10 units). Never retried here.
    pub async fn delete_draft(&self, draft_id: &str) -> Result<()> {
        let call = Call::new(
            Method::DraftsDelete,
            reqwest::Method::DELETE,
            format!("/drafts/{}", segment(draft_id)),
        );
        self.execute_raw(&call).await.map(|_| ())
    }
}

impl GmailClient {
    /// The Draft resource carrying `raw`: JSON when it fits the JSON limit, else the upload
    /// endpoint's `multipart/related` body with the same bytes.
    fn message_body(&self, draft_id: &str, raw: &[u8], thread_id: Option<&str>) -> Result<Body> {
        if raw.len() > MAX_SEND_BYTES {
            return Err(Error::TooLarge {
                size: raw.len(),
                limit: MAX_SEND_BYTES,
            });
        }
        let json = encode_json(&wire::SendDraftRequest {
            id: draft_id,
            message: wire::OutgoingMessage {
                raw: Some(wire::encode_raw(raw)),
                thread_id,
            },
        })?;
        if json.len() <= self.json_body_limit() {
            return Ok(Body::Json(serde_json::from_slice(&json).map_err(|e| {
                Error::BadResponse {
                    detail: format!("cannot encode the draft: {e}"),
                }
            })?));
        }
        let metadata = encode_json(&wire::SendDraftRequest {
            id: draft_id,
            message: wire::OutgoingMessage {
                raw: None,
                thread_id,
            },
        })?;
        Ok(related_body(&metadata, raw))
    }
}

fn encode_json(value: &impl serde::Serialize) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| Error::BadResponse {
        detail: format!("cannot encode the draft: {e}"),
    })
}

/// A `multipart/related` body: the Draft resource as JSON, then the message as
/// `message/rfc822`, byte for byte. The boundary is chosen so it does not occur in the message.
fn related_body(metadata: &[u8], raw: &[u8]) -> Body {
    let boundary = loop {
        let candidate = format!("countersign_{:032x}", rand::random::<u128>());
        if !contains(raw, candidate.as_bytes()) {
            break candidate;
        }
    };
    let mut bytes = Vec::with_capacity(raw.len() + metadata.len() + 256);
    bytes.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
    bytes.extend_from_slice(b"Content-Type: application/json; charset=UTF-8\r\n\r\n");
    bytes.extend_from_slice(metadata);
    bytes.extend_from_slice(format!("\r\n--{boundary}\r\n").as_bytes());
    bytes.extend_from_slice(b"Content-Type: message/rfc822\r\n\r\n");
    bytes.extend_from_slice(raw);
    bytes.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Body::Related { boundary, bytes }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn draft_ref(draft: wire::Draft) -> Result<DraftRef> {
    let message = draft.message.ok_or_else(|| Error::BadResponse {
        detail: format!("draft {} came without its message", draft.id),
    })?;
    Ok(DraftRef {
        id: draft.id,
        message_id: message.id,
        thread_id: message.thread_id.unwrap_or_default(),
    })
}
