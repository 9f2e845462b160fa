//! Sending: `drafts.send` (with what another client was armed to do first) and `messages.send`,
//! and what Gmail does to the bytes on the way (a recipient required, a `Message-ID` added).

use super::*;

impl State {
    /// `drafts.send` as the API does it: first what another client was armed to do to the
    /// draft right before it (see [`BeforeSend`]), then the send. With `raw` given, Gmail sends
    /// those bytes, whatever the draft held by then.
    pub fn send_draft_by_api(
        &mut self,
        draft_id: &str,
        raw: Option<Vec<u8>>,
        thread_id: Option<String>,
    ) -> Result<StoredMessage, ApiError> {
        *self
            .send_requests_per_draft
            .entry(draft_id.to_owned())
            .or_insert(0) += 1;
        match self.before_next_send.remove(draft_id) {
            Some(BeforeSend::Update(agents)) => {
                self.update_draft(draft_id, agents, None)?;
            }
            Some(BeforeSend::Delete) => self.delete_draft(draft_id)?,
            Some(BeforeSend::SendInGmail) => {
                self.send_draft(draft_id, None, None)?;
            }
            None => {}
        }
        self.send_draft(draft_id, raw, thread_id)
    }

    /// Send a draft, with `raw` replacing its content when given. The draft vanishes and the
    /// sent message lands in SENT on the same thread.
    pub fn send_draft(
        &mut self,
        draft_id: &str,
        raw: Option<Vec<u8>>,
        thread_id: Option<String>,
    ) -> Result<StoredMessage, ApiError> {
        let draft = self
            .drafts
            .get(draft_id)
            .cloned()
            .ok_or_else(|| self.missing_draft(draft_id))?;
        let current = self
            .messages
            .get(&draft.message_id)
            .cloned()
            .ok_or_else(ApiError::not_found)?;
        let raw = self.sendable(raw.unwrap_or_else(|| current.raw.clone()))?;
        let thread = thread_id
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| current.thread_id.clone());
        self.drafts.remove(draft_id);
        self.vanished_drafts.insert(draft_id.to_owned());
        self.remove_message(&current.id);
        let sent = self.insert_message(raw.clone(), Some(thread), vec!["SENT".into()]);
        *self.sends_per_draft.entry(draft_id.to_owned()).or_insert(0) += 1;
        self.sent.push(SentRecord {
            draft_id: draft_id.to_owned(),
            message_id: sent.id.clone(),
            thread_id: sent.thread_id.clone(),
            raw,
        });
        Ok(sent)
    }

    /// `messages.send`: `raw` lands in SENT, on `thread_id` when named, else on a thread of
    /// its own (the same threading rule as [`State::replace_draft`]).
    pub fn send_message(
        &mut self,
        raw: Vec<u8>,
        thread_id: Option<String>,
    ) -> Result<StoredMessage, ApiError> {
        let raw = self.sendable(raw)?;
        Ok(self.insert_message(raw, thread_id, vec!["SENT".into()]))
    }

    /// `raw` as Gmail sends it: refused without a recipient, given a `Message-ID` when it has
    /// none.
    fn sendable(&mut self, mut raw: Vec<u8>) -> Result<Vec<u8>, ApiError> {
        let has_recipient = ["To", "Cc", "Bcc"]
            .iter()
            .any(|h| mime::header(&raw, h).is_some_and(|v| v.contains('@')));
        if !has_recipient {
            return Err(ApiError::invalid("Invalid To header"));
        }
        // Gmail gives a message without a Message-ID one of its own when sending it, and
        // (reportedly) sometimes replaces the client's.
        let has_id = mime::header(&raw, "Message-ID").is_some();
        if !has_id || self.replace_message_id_on_send {
            let n = self.next();
            let mut with_id = format!("Message-ID: <fake-{n}@mail.gmail.com>\r\n").into_bytes();
            with_id.extend_from_slice(&mime::without_header(&raw, "Message-ID"));
            raw = with_id;
        }
        Ok(raw)
    }
}
