//! `users.threads`: get (metadata) — the conversation a reply draft belongs to.
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users.threads/get>
//! (10 quota units; `format` is `full`, `metadata` or `minimal`, `metadataHeaders` repeats).
//! Countersign reads a reply's thread with each new version of it, to list the earlier messages
//! under the draft and to find the message it answers among them (only there: issue 33).

use crate::client::{segment, Call, GmailClient};
use crate::error::Result;
use crate::messages::MessageMetadata;
use crate::quota::Method;
use crate::wire;

/// A thread's messages, oldest first, as `format=metadata` gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadMetadata {
    /// Thread id.
    pub id: String,
    /// Its messages (drafts included, with the `DRAFT` label), oldest first.
    pub messages: Vec<MessageMetadata>,
}

impl GmailClient {
    /// A thread's messages with the headers named (`threads.get?format=metadata`, 10 units).
    pub async fn get_thread_metadata(
        &self,
        thread_id: &str,
        headers: &[&str],
    ) -> Result<ThreadMetadata> {
        let call = Call::metadata(
            Method::ThreadsGet,
            format!("/threads/{}", segment(thread_id)),
            headers,
        );
        let thread: wire::Thread = self.execute(&call).await?;
        Ok(ThreadMetadata {
            id: thread.id,
            messages: thread
                .messages
                .into_iter()
                .map(MessageMetadata::from_wire)
                .collect(),
        })
    }
}
