//! `users.messages`: list (with a search query) and get (metadata).
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users.messages>.
//! `list` with `q=rfc822msgid:<id>` finds a sent message by its `Message-ID` header, which is how
//! a send with an unknown outcome is reconciled; `get?format=metadata` reads the parent message
//! a reply answers; `get?format=raw` reads the parent message in full, for the review.

use crate::client::{segment, Call, GmailClient};
use crate::error::Result;
use crate::quota::Method;
use crate::wire;

/// A message as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRef {
    /// Message id.
    pub id: String,
    /// Thread id.
    pub thread_id: String,
}

impl MessageRef {
    pub(crate) fn from_wire(message: wire::Message) -> Self {
        MessageRef {
            id: message.id,
            thread_id: message.thread_id.unwrap_or_default(),
        }
    }
}

/// A message's headers and labels (`format=metadata`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageMetadata {
    /// Message id.
    pub id: String,
    /// Thread id.
    pub thread_id: String,
    /// Labels.
    pub label_ids: Vec<String>,
    /// Gmail's short plain-text excerpt.
    pub snippet: String,
    /// The headers asked for (all when none were named), in message order.
    pub headers: Vec<(String, String)>,
    /// Milliseconds since the epoch when Gmail received it.
    pub internal_date: Option<i64>,
}

impl MessageMetadata {
    pub(crate) fn from_wire(message: wire::Message) -> Self {
        MessageMetadata {
            id: message.id,
            thread_id: message.thread_id.unwrap_or_default(),
            label_ids: message.label_ids,
            snippet: message.snippet.unwrap_or_default(),
            headers: message
                .payload
                .map(|p| p.headers.into_iter().map(|h| (h.name, h.value)).collect())
                .unwrap_or_default(),
            internal_date: message.internal_date.and_then(|d| d.parse().ok()),
        }
    }

    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What `messages.list` should match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageQuery {
    /// Gmail search syntax, e.g. `rfc822msgid:<abc@example.com>`.
    pub q: Option<String>,
    /// Only messages carrying all these labels, e.g. `SENT`.
    pub label_ids: Vec<String>,
    /// Also search spam and trash.
    pub include_spam_trash: bool,
}

impl GmailClient {
    /// Every message matching `query`, following all pages (`messages.list`, 5 units a page).
    pub async fn list_messages(&self, query: &MessageQuery) -> Result<Vec<MessageRef>> {
        let mut call = Call::get(Method::MessagesList, "/messages").query("maxResults", "500");
        if let Some(q) = &query.q {
            call = call.query("q", q.clone());
        }
        for label in &query.label_ids {
            call = call.query("labelIds", label.clone());
        }
        if query.include_spam_trash {
            call = call.query("includeSpamTrash", "true");
        }
        self.list_all(call, |m| Ok(MessageRef::from_wire(m))).await
    }

    /// Sent messages whose `Message-ID` header is `rfc822_message_id` (with or without `<>`).
    pub async fn find_sent_by_message_id(
        &self,
        rfc822_message_id: &str,
    ) -> Result<Vec<MessageRef>> {
        let bare = rfc822_message_id
            .trim()
            .trim_start_matches('<')
            .trim_end_matches('>');
        self.list_messages(&MessageQuery {
            q: Some(format!("rfc822msgid:{bare}")),
            label_ids: vec!["SENT".into()],
            include_spam_trash: false,
        })
        .await
    }

    /// A message's headers (`messages.get?format=metadata`, 5 units). `headers` limits the
    /// answer to those names; empty means all.
    pub async fn get_message_metadata(
        &self,
        message_id: &str,
        headers: &[&str],
    ) -> Result<MessageMetadata> {
        let call = Call::metadata(
            Method::MessagesGet,
            format!("/messages/{}", segment(message_id)),
            headers,
        );
        let message: wire::Message = self.execute(&call).await?;
        Ok(MessageMetadata::from_wire(message))
    }

    /// A message's full RFC 5322 bytes (`messages.get?format=raw`, 5 units).
    pub async fn get_message_raw(&self, message_id: &str) -> Result<Vec<u8>> {
        let call = Call::get(
            Method::MessagesGet,
            format!("/messages/{}", segment(message_id)),
        )
        .query("format", "raw")
        .transfer();
        let message: wire::Message = self.execute(&call).await?;
        message
            .raw
            .as_deref()
            .and_then(wire::decode_raw)
            .ok_or_else(|| crate::Error::BadResponse {
                detail: "messages.get answered no readable base64url `raw`".into(),
            })
    }
}
