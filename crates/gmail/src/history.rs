//! `users.history.list`: what changed in the drafts since a history id.
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users.history/list>.
//! A start id that is too old (Gmail keeps history for about a week, sometimes less) answers
//! 404, returned as [`crate::Error::NotFound`]: the caller then does a full sync.

use crate::client::{Call, GmailClient};
use crate::error::Result;
use crate::messages::MessageRef;
use crate::quota::Method;
use crate::wire;

/// One history record: the messages it added, deleted or relabelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryRecord {
    /// The record's history id.
    pub id: String,
    /// Every message the record is about (Gmail may send only this, without saying how each
    /// changed).
    pub messages: Vec<MessageRef>,
    /// Messages added (a new draft version is a new message).
    pub messages_added: Vec<MessageRef>,
    /// Messages deleted (an old draft version, a deleted or sent draft).
    pub messages_deleted: Vec<MessageRef>,
    /// Messages that gained labels, with the labels.
    pub labels_added: Vec<(MessageRef, Vec<String>)>,
    /// Messages that lost labels, with the labels.
    pub labels_removed: Vec<(MessageRef, Vec<String>)>,
}

impl HistoryRecord {
    /// Whether the record changes anything at all.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.messages_added.is_empty()
            && self.messages_deleted.is_empty()
            && self.labels_added.is_empty()
            && self.labels_removed.is_empty()
    }
}

/// All draft changes after a start id, and the mailbox's history id now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryChanges {
    /// Records in order, oldest first.
    pub records: Vec<HistoryRecord>,
    /// The id to start from next time.
    pub history_id: String,
}

impl HistoryChanges {
    /// Whether nothing changed: no record at all. A record is a change whatever fields it
    /// carries (one with only `messages`, or none Countersign reads, still says the drafts
    /// moved), so the caller lists the drafts rather than trust the record's detail.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

impl GmailClient {
    /// Changes touching drafts (`labelId=DRAFT`) after `start_history_id`, all pages
    /// (`history.list`, 2 units a page).
    pub async fn list_draft_history(&self, start_history_id: &str) -> Result<HistoryChanges> {
        self.list_history(start_history_id, Some("DRAFT")).await
    }

    /// Changes after `start_history_id`, optionally only those touching `label_id`.
    pub async fn list_history(
        &self,
        start_history_id: &str,
        label_id: Option<&str>,
    ) -> Result<HistoryChanges> {
        let mut changes = HistoryChanges {
            records: Vec::new(),
            history_id: start_history_id.to_owned(),
        };
        let mut page_token: Option<String> = None;
        loop {
            let mut call = Call::get(Method::HistoryList, "/history")
                .query("startHistoryId", start_history_id)
                .query("maxResults", "500");
            if let Some(label) = label_id {
                call = call.query("labelId", label);
            }
            if let Some(token) = page_token.take() {
                call = call.query("pageToken", token);
            }
            let page: wire::ListHistoryResponse = self.execute(&call).await?;
            if let Some(id) = page.history_id {
                changes.history_id = id;
            }
            changes.records.extend(page.history.into_iter().map(record));
            match page.next_page_token {
                Some(token) if !token.is_empty() => page_token = Some(token),
                _ => return Ok(changes),
            }
        }
    }
}

fn record(history: wire::History) -> HistoryRecord {
    HistoryRecord {
        id: history.id,
        messages: history
            .messages
            .into_iter()
            .map(MessageRef::from_wire)
            .collect(),
        messages_added: history
            .messages_added
            .into_iter()
            .map(|c| MessageRef::from_wire(c.message))
            .collect(),
        messages_deleted: history
            .messages_deleted
            .into_iter()
            .map(|c| MessageRef::from_wire(c.message))
            .collect(),
        labels_added: history
            .labels_added
            .into_iter()
            .map(|c| (MessageRef::from_wire(c.message), c.label_ids))
            .collect(),
        labels_removed: history
            .labels_removed
            .into_iter()
            .map(|c| (MessageRef::from_wire(c.message), c.label_ids))
            .collect(),
    }
}
