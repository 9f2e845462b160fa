//! Gmail's JSON shapes, as Google's discovery document for Gmail v1 defines them
//! (`gmail/v1/gmail-api.json`, schemas `Draft`, `Message`, `MessagePart`, `History`, `Profile`,
//! `ListDraftsResponse`, `ListMessagesResponse`, `ListHistoryResponse`).
//!
//! These are kept apart from the types the client returns so that a change on the wire is
//! absorbed here. Fields Gmail may leave out are `Option` or defaulted: empty lists are omitted
//! entirely in Google's answers (e.g. `{"resultSizeEstimate": 0}` for no drafts).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};
use serde::{Deserialize, Serialize};

/// A page of `drafts.list` or `messages.list` (`ListDraftsResponse`, `ListMessagesResponse`):
/// the two schemas differ only in what the list is called.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListPage<T> {
    #[serde(default = "Vec::new", alias = "drafts", alias = "messages")]
    pub items: Vec<T>,
    pub next_page_token: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Draft {
    pub id: String,
    pub message: Option<Message>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Message {
    pub id: String,
    pub thread_id: Option<String>,
    #[serde(default)]
    pub label_ids: Vec<String>,
    pub snippet: Option<String>,
    pub history_id: Option<String>,
    pub internal_date: Option<String>,
    pub raw: Option<String>,
    pub payload: Option<MessagePart>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct MessagePart {
    #[serde(default)]
    pub headers: Vec<Header>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Header {
    pub name: String,
    pub value: String,
}

/// A `Thread` resource (`threads.get`).
#[derive(Debug, Deserialize)]
pub(crate) struct Thread {
    pub id: String,
    #[serde(default)]
    pub messages: Vec<Message>,
}

/// Request body of `drafts.send`: a `Draft` resource.
#[derive(Debug, Serialize)]
pub(crate) struct SendDraftRequest<'a> {
    pub id: &'a str,
    pub message: OutgoingMessage<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OutgoingMessage<'a> {
    /// Absent in the metadata part of an upload (the bytes are the media part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<&'a str>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListHistoryResponse {
    #[serde(default)]
    pub history: Vec<History>,
    pub next_page_token: Option<String>,
    pub history_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct History {
    pub id: String,
    /// Every message the record is about; the discovery document says the change-type fields
    /// below "may duplicate messages in this field", and a record may carry only this one.
    #[serde(default)]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub messages_added: Vec<MessageChange>,
    #[serde(default)]
    pub messages_deleted: Vec<MessageChange>,
    #[serde(default)]
    pub labels_added: Vec<LabelChange>,
    #[serde(default)]
    pub labels_removed: Vec<LabelChange>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct MessageChange {
    pub message: Message,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LabelChange {
    pub message: Message,
    #[serde(default)]
    pub label_ids: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Profile {
    pub email_address: String,
    pub messages_total: Option<i64>,
    pub threads_total: Option<i64>,
    pub history_id: String,
}

/// A page of `labels.list` (`ListLabelsResponse`): every label at once, no paging. Each
/// `Label` carries only `id`, `name`, `type` and the two visibilities there.
#[derive(Debug, Deserialize)]
pub(crate) struct ListLabelsResponse {
    #[serde(default)]
    pub labels: Vec<Label>,
}

/// A `Label` resource as `labels.list` gives it.
#[derive(Debug, Deserialize)]
pub(crate) struct Label {
    pub id: String,
    pub name: String,
    /// `system` or `user`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// Answer of Google's tokeninfo endpoint (`oauth2.googleapis.com/tokeninfo`); numbers come as
/// strings there, so they are read loosely.
#[derive(Debug, Deserialize)]
pub(crate) struct TokenInfo {
    pub scope: Option<String>,
    pub email: Option<String>,
    pub expires_in: Option<serde_json::Value>,
}

/// base64url as Gmail uses it for `raw`; padding is optional on input.
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encode raw RFC 5322 bytes for Gmail.
pub fn encode_raw(bytes: &[u8]) -> String {
    URL_SAFE_LENIENT.encode(bytes)
}

/// Decode Gmail's `raw`, padded or not.
pub fn decode_raw(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_LENIENT.decode(text.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_decodes_with_or_without_padding() {
        let bytes = b"Subject: hi\r\n\r\n\xff\xfe?!";
        let padded = encode_raw(bytes);
        assert!(padded.ends_with('='));
        assert_eq!(decode_raw(&padded).unwrap(), bytes);
        assert_eq!(decode_raw(padded.trim_end_matches('=')).unwrap(), bytes);
        assert!(!padded.contains('+') && !padded.contains('/'));
    }

    #[test]
    fn an_empty_draft_list_has_no_drafts_field() {
        let list: ListPage<Draft> = serde_json::from_str(r#"{"resultSizeEstimate": 0}"#).unwrap();
        assert!(list.items.is_empty());
        assert!(list.next_page_token.is_none());
    }

    #[test]
    fn a_page_reads_its_list_under_either_schemas_name() {
        let drafts: ListPage<Draft> =
            serde_json::from_str(r#"{"drafts": [{"id": "r1"}], "nextPageToken": "2"}"#).unwrap();
        assert_eq!(drafts.items[0].id, "r1");
        assert_eq!(drafts.next_page_token.as_deref(), Some("2"));
        let messages: ListPage<Message> =
            serde_json::from_str(r#"{"messages": [{"id": "m1", "threadId": "t1"}]}"#).unwrap();
        assert_eq!(messages.items[0].thread_id.as_deref(), Some("t1"));
    }
}
