//! Carrying out a decision on a Gmail draft: re-read it, send the reviewed bytes (or delete
//! it), and reconcile a send whose answer was lost by looking in Sent. API:
//! <https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.drafts>.
//!
//! A draft sent or deleted elsewhere answers 404, and (reported, DESIGN §4) sometimes 400: a
//! 400 on `drafts.get` or `drafts.send` is "possibly gone", settled by the list of drafts (the
//! authority) and a look in Sent, never a plain refusal.

use sha2::{Digest, Sha256};

use countersign_gmail::Error as G;

use crate::domain::{DecisionKind, DispatchOutcome, ItemEvent};
use crate::error::{Error, Result};
use crate::render::{render_message, RenderOptions};
use crate::store::{Account, Decision, Store};
use countersign_gmail::GmailClient;

use super::step::{gmail_failure, GmailCall, Step, CHANGED};

/// How far before the decision a sent message found by its content may be dated, for a version
/// whose own Gmail date is not known: Gmail's `internalDate` is Google's clock, the decision's
/// time this computer's.
const CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(2);

/// Whether Gmail's refusal may mean that the draft is no longer there (a 400 for a draft sent
/// or deleted elsewhere, besides the documented 404).
fn possibly_gone(error: &G) -> bool {
    matches!(error, G::Refused { status: 400, .. })
}

pub(super) struct GmailDispatch<'a> {
    pub(super) store: &'a Store,
    pub(super) client: &'a GmailClient,
    pub(super) account: &'a Account,
    pub(super) draft_id: &'a str,
    pub(super) thread_id: Option<&'a str>,
    pub(super) decision: &'a Decision,
}

/// What re-reading a draft before acting on it found.
pub(super) enum DraftCheck {
    Unchanged,
    Changed,
    Gone,
}

impl GmailDispatch<'_> {
    pub(super) async fn check_draft(&self) -> std::result::Result<DraftCheck, Step> {
        match self.client.get_draft_minimal(self.draft_id).await {
            Ok(draft) => Ok(self.compare(&draft.message_id)),
            Err(G::NotFound { .. }) => Ok(DraftCheck::Gone),
            Err(e) if possibly_gone(&e) => self.check_in_listing().await,
            Err(e) => Err(gmail_failure(e, GmailCall::Read)),
        }
    }

    fn compare(&self, message_id: &str) -> DraftCheck {
        if message_id == self.decision.version {
            DraftCheck::Unchanged
        } else {
            DraftCheck::Changed
        }
    }

    /// `drafts.get` answered 400: whether the draft is listed (and at which version) says if
    /// it is still there, as the sync's reconciliation decides it too.
    async fn check_in_listing(&self) -> std::result::Result<DraftCheck, Step> {
        match self.client.list_drafts().await {
            Ok(drafts) => Ok(drafts
                .iter()
                .find(|d| d.id == self.draft_id)
                .map_or(DraftCheck::Gone, |d| self.compare(&d.message_id))),
            Err(e) => Err(gmail_failure(e, GmailCall::Read)),
        }
    }

    /// Whether no send of this decision was tried before this attempt (the bytes a send will
    /// carry are recorded before every send): a draft missing at the send is then certainly
    /// not gone through this decision.
    fn first_send(&self) -> bool {
        self.decision.sent_digest.is_none()
    }

    pub(super) async fn approve(&self) -> Result<Step> {
        if let Some(sentence) = crate::actions::send_refusal(self.account) {
            return Ok(Step::refused(sentence));
        }
        match self.check_draft().await {
            Err(step) => return Ok(step),
            Ok(DraftCheck::Changed) => return Ok(Step::conflict(CHANGED, ItemEvent::Conflicted)),
            Ok(DraftCheck::Gone) => return self.gone_before_send().await,
            Ok(DraftCheck::Unchanged) => {}
        }
        let (raw, header_added) = self.reviewed_raw_with_message_id().await?;
        self.store
            .set_decision_sent_bytes(
                self.decision.id,
                &hex::encode(Sha256::digest(&raw)),
                header_added,
            )
            .await?;
        match self
            .client
            .send_draft(self.draft_id, &raw, self.thread_id)
            .await
        {
            Ok(sent) => {
                self.store
                    .set_decision_gmail_message_id(self.decision.id, &sent.id)
                    .await?;
                Ok(Step::done(ItemEvent::Delivered))
            }
            // Gmail sent nothing: the draft went (sent or deleted elsewhere) between the
            // re-read and the send. Only an earlier send of this decision could have taken it,
            // and then it is looked up as uncertain.
            Err(G::NotFound { .. }) if self.first_send() => self.gone_before_send().await,
            Err(e) if possibly_gone(&e) => self.after_send_refused(e).await,
            Err(e) => Ok(gmail_failure(e, GmailCall::Send)),
        }
    }

    /// `drafts.send` answered 400: Gmail sent nothing. Re-read the draft: gone means sent or
    /// deleted elsewhere; still there unchanged means Google refused these bytes.
    async fn after_send_refused(&self, refusal: G) -> Result<Step> {
        Ok(match self.check_draft().await {
            Ok(DraftCheck::Gone) if self.first_send() => return self.gone_before_send().await,
            Ok(DraftCheck::Gone) => Step::uncertain("the draft vanished while it was being sent"),
            Ok(DraftCheck::Changed) => Step::conflict(CHANGED, ItemEvent::Conflicted),
            Ok(DraftCheck::Unchanged) => gmail_failure(refusal, GmailCall::Send),
            // Nothing was sent (the send was refused): trying again after the re-read is safe.
            Err(step) => step,
        })
    }

    pub(super) async fn reject(&self, keep_in_gmail: bool) -> Result<Step> {
        if keep_in_gmail {
            return Ok(Step::done(ItemEvent::RejectionDone));
        }
        match self.check_draft().await {
            Err(step) => return Ok(step),
            Ok(DraftCheck::Changed) => return Ok(Step::conflict(CHANGED, ItemEvent::Conflicted)),
            Ok(DraftCheck::Gone) => return self.gone_before_send().await,
            Ok(DraftCheck::Unchanged) => {}
        }
        match self.client.delete_draft(self.draft_id).await {
            Ok(()) => Ok(Step::done(ItemEvent::RejectionDone)),
            Err(G::NotFound { .. }) => Ok(Step::done(ItemEvent::RejectionDone)),
            Err(e) => Ok(gmail_failure(e, GmailCall::Delete)),
        }
    }

    /// Find out what happened to a send whose answer never came.
    pub(super) async fn reconcile(&self) -> Result<Step> {
        match self.check_draft().await {
            // An account that must be reconnected is marked so by its sentence.
            Err(Step {
                outcome: DispatchOutcome::Retry(why),
                failure,
                ..
            }) if super::reconnect_sentence(&why) => Ok(Step {
                failure,
                ..Step::uncertain(why)
            }),
            Err(_) => Ok(Step::uncertain(
                "the service does not answer; looking again later",
            )),
            // Sending removes a draft: still there, unchanged, means it was not sent.
            Ok(DraftCheck::Unchanged) => Ok(Step::retry("not sent yet; sending again is safe")),
            Ok(DraftCheck::Changed) => Ok(Step::conflict(
                "not sent, and the agent changed the draft since: review the new version",
                ItemEvent::Conflicted,
            )),
            // Gone: our send or delete landed, or another client sent or deleted it. Sent
            // tells (a second client may have sent a draft whose rejection was lost).
            Ok(DraftCheck::Gone) => match (self.find_in_sent().await, self.decision.kind) {
                (Ok(Some(found)), DecisionKind::Approve) => {
                    self.store
                        .set_decision_gmail_message_id(self.decision.id, &found)
                        .await?;
                    Ok(Step::done(ItemEvent::Delivered))
                }
                (Ok(Some(_)), DecisionKind::Reject) => Ok(Step::conflict(
                    "sent elsewhere before the rejection",
                    ItemEvent::Vanished,
                )),
                (Ok(None), DecisionKind::Approve) => Ok(Step::uncertain(
                    "the draft is gone and its message is not in Sent (yet)",
                )),
                (Ok(None), DecisionKind::Reject) => Ok(Step::done(ItemEvent::RejectionDone)),
                (Err(_), _) => Ok(Step::uncertain("the service does not answer")),
            },
        }
    }

    /// The draft disappeared before we acted: sent or deleted elsewhere.
    pub(super) async fn gone_before_send(&self) -> Result<Step> {
        match self.find_in_sent().await {
            // Someone sent it from Gmail itself: the owner's intent happened, but not through
            // this decision, and nothing is sent again. Where it went is kept.
            Ok(Some(found)) => {
                self.store
                    .set_decision_gmail_message_id(self.decision.id, &found)
                    .await?;
                Ok(match self.decision.kind {
                    DecisionKind::Approve => Step::conflict(
                        "sent elsewhere: it was already in Gmail's Sent, so it was not sent again",
                        ItemEvent::Vanished,
                    ),
                    DecisionKind::Reject => {
                        Step::conflict("sent elsewhere before the rejection", ItemEvent::Vanished)
                    }
                })
            }
            Ok(None) => Ok(match self.decision.kind {
                DecisionKind::Approve => {
                    Step::conflict("deleted elsewhere: nothing was sent", ItemEvent::Vanished)
                }
                DecisionKind::Reject => Step::done(ItemEvent::RejectionDone),
            }),
            Err(step) => Ok(step),
        }
    }

    /// Gmail's id of the reviewed message in Sent, if it is there: looked up by its RFC 822
    /// `Message-ID`, and, because Gmail may replace that header on send, by its content in the
    /// draft's thread ([`GmailDispatch::find_in_thread`]).
    pub(super) async fn find_in_sent(&self) -> std::result::Result<Option<String>, Step> {
        let message_id = match &self.decision.rfc822_message_id {
            Some(id) => Some(id.clone()),
            None => self
                .reviewed_message_id()
                .await
                .map_err(|e| Step::refused(e.to_string()))?,
        };
        if let Some(message_id) = message_id {
            match self.client.find_sent_by_message_id(&message_id).await {
                Ok(found) => {
                    if let Some(first) = found.into_iter().next() {
                        return Ok(Some(first.id));
                    }
                }
                Err(e) => return Err(gmail_failure(e, GmailCall::Read)),
            }
        }
        self.find_in_thread().await
    }

    /// A message labelled `SENT` in the draft's thread, dated (`internalDate`) at or after the
    /// reviewed version itself (both by Google's clock), whose text and HTML bodies are the
    /// reviewed ones ([`content_digest`]).
    ///
    /// `threads.get` lists a thread's messages with their labels and dates (10 units;
    /// <https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.threads/get>),
    /// and `drafts.send` puts the sent message in the draft's thread (the `threadId` it is
    /// sent with); `messages.get?format=raw` (5 units each) gives the candidates' bytes. A
    /// Gmail search cannot do this: it has no operator for a thread, and `rfc822msgid:` is the
    /// very header that may have been replaced.
    async fn find_in_thread(&self) -> std::result::Result<Option<String>, Step> {
        let Some(thread_id) = self.thread_id else {
            return Ok(None);
        };
        let reviewed = self
            .reviewed_bytes()
            .await
            .map_err(|e| Step::refused(e.to_string()))?;
        let Some(want) = content_digest(&reviewed) else {
            return Ok(None);
        };
        // A send of this version is dated after the version itself by Google's own clock; only
        // a version synced before Countersign kept that date falls back to this computer's.
        let since = match self
            .store
            .version_gmail_date(self.decision.item_id, &self.decision.version)
            .await
        {
            Ok(Some(saved)) => saved,
            _ => (self.decision.created_at - CLOCK_SKEW).timestamp_millis(),
        };
        let thread = match self.client.get_thread_metadata(thread_id, &[]).await {
            Ok(thread) => thread,
            Err(G::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(gmail_failure(e, GmailCall::Read)),
        };
        let candidates = thread.messages.into_iter().filter(|m| {
            m.label_ids.iter().any(|l| l == "SENT") && m.internal_date.is_some_and(|d| d >= since)
        });
        for candidate in candidates {
            match self.client.get_message_raw(&candidate.id).await {
                Ok(raw) if content_digest(&raw).as_deref() == Some(want.as_str()) => {
                    return Ok(Some(candidate.id))
                }
                Ok(_) | Err(G::NotFound { .. }) => {}
                Err(e) => return Err(gmail_failure(e, GmailCall::Read)),
            }
        }
        Ok(None)
    }

    pub(super) async fn reviewed_bytes(&self) -> Result<Vec<u8>> {
        let version = self
            .store
            .version(self.decision.item_id, &self.decision.version)
            .await?;
        // The bytes themselves against the digest the (sealed) decision bound to — not the
        // digest stored beside them, which whoever changes the bytes in the file can change too.
        let bytes = version.content.bytes();
        if hex::encode(Sha256::digest(bytes)) != self.decision.digest
            || version.sha256 != self.decision.digest
        {
            return Err(Error::Corrupt(
                "the bytes you approved were changed in the mirror file since: nothing was sent"
                    .into(),
            ));
        }
        Ok(bytes.to_vec())
    }

    pub(super) async fn reviewed_message_id(&self) -> Result<Option<String>> {
        let raw = self.reviewed_bytes().await?;
        Ok(render_message(&raw, &RenderOptions::default()).message_id)
    }

    /// The reviewed bytes, with a `Message-ID` added first when the draft has none, recorded
    /// before the send so that an unknown outcome can be looked up in Sent; and the name of the
    /// header added, if one was.
    pub(super) async fn reviewed_raw_with_message_id(
        &self,
    ) -> Result<(Vec<u8>, Option<&'static str>)> {
        let raw = self.reviewed_bytes().await?;
        if let Some(existing) = render_message(&raw, &RenderOptions::default()).message_id {
            if self.decision.rfc822_message_id.is_none() {
                self.store
                    .set_decision_message_id(self.decision.id, &existing)
                    .await?;
            }
            return Ok((raw, None));
        }
        let id = match &self.decision.rfc822_message_id {
            Some(id) => id.clone(),
            None => {
                let domain = self
                    .account
                    .profile
                    .address
                    .rsplit_once('@')
                    .map(|(_, d)| d.to_string())
                    .unwrap_or_else(|| "countersign.invalid".into());
                let id = format!("countersign.{}@{domain}", uuid::Uuid::new_v4().simple());
                self.store
                    .set_decision_message_id(self.decision.id, &id)
                    .await?;
                id
            }
        };
        let mut with_id = format!("Message-ID: <{id}>\r\n").into_bytes();
        with_id.extend_from_slice(&raw);
        Ok((with_id, Some("Message-ID")))
    }
}

/// A digest of what the recipient reads: the decoded text of the message's text/plain and
/// text/html bodies, each with its line ends made `\n` and trailing whitespace cut; `None` when
/// the message has no body text to go by.
///
/// Why the bodies and nothing else: on send Gmail rewrites headers (it may replace the
/// `Message-ID`, sets `Date`, rewrites `From`'s form, adds `Received` and its own fields) and
/// may re-encode a part (another transfer encoding, new MIME boundaries, folded or re-ended
/// lines); decoding the parts and normalising line ends and trailing spaces leaves exactly the
/// words and markup, which it does not touch. Recipients and subject are not compared: the
/// candidate is already in the draft's thread, sent after the decision.
pub(crate) fn content_digest(raw: &[u8]) -> Option<String> {
    let message = mail_parser::MessageParser::default().parse(raw)?;
    let mut hasher = Sha256::new();
    let mut any = false;
    for (kind, parts) in [("text", &message.text_body), ("html", &message.html_body)] {
        for &index in parts {
            let Some(text) = message
                .parts
                .get(index as usize)
                .and_then(|p| p.text_contents())
            else {
                continue;
            };
            let normalised = text
                .lines()
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n");
            let normalised = normalised.trim_end_matches('\n');
            if normalised.is_empty() {
                continue;
            }
            any = true;
            hasher.update(kind.as_bytes());
            hasher.update([0]);
            hasher.update(normalised.as_bytes());
            hasher.update([0]);
        }
    }
    any.then(|| hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::content_digest;

    #[test]
    fn the_content_digest_ignores_rewritten_headers_encodings_and_line_ends_but_not_words() {
        let reviewed = b"Message-ID: <a@agent.example>\r\nFrom: Owner <o@example.com>\r\n\
            To: ana@example.com\r\nSubject: Hi\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
            Caf\xc3\xa9 at 10.\r\nSee you\r\n";
        let as_sent =
            b"Message-ID: <CA+x@mail.gmail.com>\r\nDate: Thu, 3 Dec 2026 09:00:00 +0000\r\n\
            From: \"Owner\" <o@example.com>\r\nTo: ana@example.com\r\nSubject: Hi\r\n\
            MIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n\
            Content-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9 at 10. \nSee you\n";
        let other = b"To: ana@example.com\r\nSubject: Hi\r\n\r\nCafe at 11.\r\nSee you\r\n";
        assert!(content_digest(reviewed).is_some());
        assert_eq!(content_digest(reviewed), content_digest(as_sent));
        assert_ne!(content_digest(reviewed), content_digest(other));
        assert_eq!(content_digest(b"To: ana@example.com\r\n\r\n"), None);
    }
}
