//! Drafts: filed, updated (by the control API or `drafts.update`), deleted, and the error for a
//! draft id that names none.

use super::*;

impl State {
    /// File a new draft; its message gets the `DRAFT` label.
    pub fn create_draft(
        &mut self,
        raw: Vec<u8>,
        thread_id: Option<String>,
    ) -> (String, StoredMessage) {
        self.create_draft_with_labels(raw, thread_id, Vec::new())
    }

    /// File a new draft whose message also carries the user labels `labels` (its
    /// `message.labelIds`; see [`State::draft_labels`]).
    pub fn create_draft_with_labels(
        &mut self,
        raw: Vec<u8>,
        thread_id: Option<String>,
        labels: Vec<String>,
    ) -> (String, StoredMessage) {
        let labels = self.draft_labels(labels);
        let message = self.insert_message(raw, thread_id, labels);
        let id = self.new_draft_id();
        self.drafts.insert(
            id.clone(),
            StoredDraft {
                message_id: message.id.clone(),
            },
        );
        (id, message)
    }

    /// Replace a draft's content as an agent's own client does it behind the control API: a new
    /// message id, the old message gone, the draft kept on its thread unless another is named.
    pub fn update_draft(
        &mut self,
        draft_id: &str,
        raw: Vec<u8>,
        thread_id: Option<String>,
    ) -> Result<StoredMessage, ApiError> {
        let old_thread = self
            .drafts
            .get(draft_id)
            .and_then(|d| self.messages.get(&d.message_id))
            .map(|m| m.thread_id.clone());
        self.replace_draft(
            draft_id,
            raw,
            thread_id.filter(|t| !t.is_empty()).or(old_thread),
            Vec::new(),
        )
    }

    /// Replace a draft's content with a message on `thread_id`, or on a thread of its own when
    /// none is named: what `drafts.update` does, since a draft only belongs to a thread when
    /// "the requested threadId [is] specified on the Message or Draft.Message you supply with
    /// your request" (discovery document, `Message.threadId`;
    /// <https://developers.google.com/workspace/gmail/api/guides/threads>).
    /// The new message carries `DRAFT` and the user labels in `labels` (the request's
    /// `message.labelIds`), nothing of the old message's: the message is replaced whole.
    fn replace_draft(
        &mut self,
        draft_id: &str,
        raw: Vec<u8>,
        thread_id: Option<String>,
        labels: Vec<String>,
    ) -> Result<StoredMessage, ApiError> {
        let old_id = self
            .drafts
            .get(draft_id)
            .map(|d| d.message_id.clone())
            .ok_or_else(ApiError::not_found)?;
        self.remove_message(&old_id);
        let labels = self.draft_labels(labels);
        let message = self.insert_message(raw, thread_id, labels);
        if let Some(d) = self.drafts.get_mut(draft_id) {
            d.message_id = message.id.clone();
        }
        Ok(message)
    }

    /// `drafts.update` as the API does it: the update, then the agent's update armed for this
    /// draft (if any), which lands before any later request. The answer names the first.
    pub fn update_draft_by_api(
        &mut self,
        draft_id: &str,
        raw: Vec<u8>,
        thread_id: Option<String>,
        labels: Vec<String>,
    ) -> Result<StoredMessage, ApiError> {
        let updated = self.replace_draft(draft_id, raw, thread_id, labels)?;
        if let Some(agents) = self.agent_update_after_update.remove(draft_id) {
            self.update_draft(draft_id, agents, None)?;
        }
        Ok(updated)
    }

    /// Delete a draft and its message.
    pub fn delete_draft(&mut self, draft_id: &str) -> Result<(), ApiError> {
        let draft = self
            .drafts
            .remove(draft_id)
            .ok_or_else(|| self.missing_draft(draft_id))?;
        self.remove_message(&draft.message_id);
        self.vanished_drafts.insert(draft_id.to_owned());
        Ok(())
    }

    /// The error for a draft id that names no draft: 404, or 400 "Invalid draft" for one that
    /// was deleted or sent while `vanished_drafts_answer_400` is on.
    pub fn missing_draft(&self, draft_id: &str) -> ApiError {
        if self.vanished_drafts_answer_400 && self.vanished_drafts.contains(draft_id) {
            ApiError::invalid_draft()
        } else {
            ApiError::not_found()
        }
    }
}
