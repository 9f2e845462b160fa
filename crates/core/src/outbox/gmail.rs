//! Carrying out a decision on a Gmail draft: re-read it, send the reviewed bytes (or delete
//! it), and reconcile a send whose answer was lost by looking in Sent. API:
//! <https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.drafts>.

use sha2::{Digest, Sha256};

use crate::domain::{DecisionKind, ItemEvent};
use crate::error::{Error, Result};
use crate::render::{render_message, RenderOptions};
use crate::store::{Account, Decision, Store};
use countersign_gmail::GmailClient;

use super::step::{gmail_failure, GmailCall, Step, CHANGED};

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
            Ok(draft) if draft.message_id == self.decision.version => Ok(DraftCheck::Unchanged),
            Ok(_) => Ok(DraftCheck::Changed),
            Err(countersign_gmail::Error::NotFound { .. }) => Ok(DraftCheck::Gone),
            Err(e) => Err(gmail_failure(e, GmailCall::Read)),
        }
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
            Ok(_) => Ok(Step::done(ItemEvent::Delivered)),
            Err(e) => Ok(gmail_failure(e, GmailCall::Send)),
        }
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
            Err(countersign_gmail::Error::NotFound { .. }) => {
                Ok(Step::done(ItemEvent::RejectionDone))
            }
            Err(e) => Ok(gmail_failure(e, GmailCall::Delete)),
        }
    }

    /// Find out what happened to a send whose answer never came.
    pub(super) async fn reconcile(&self) -> Result<Step> {
        match self.check_draft().await {
            Err(_) => Ok(Step::uncertain(
                "the service does not answer; looking again later",
            )),
            // Sending removes a draft: still there, unchanged, means it was not sent.
            Ok(DraftCheck::Unchanged) => Ok(Step::retry("not sent yet; sending again is safe")),
            Ok(DraftCheck::Changed) => Ok(Step::conflict(
                "not sent, and the agent changed the draft since: review the new version",
                ItemEvent::Conflicted,
            )),
            Ok(DraftCheck::Gone) => match self.decision.kind {
                DecisionKind::Reject => Ok(Step::done(ItemEvent::RejectionDone)),
                DecisionKind::Approve => match self.find_in_sent().await {
                    Ok(true) => Ok(Step::done(ItemEvent::Delivered)),
                    Ok(false) => Ok(Step::uncertain(
                        "the draft is gone and its message is not in Sent (yet)",
                    )),
                    Err(_) => Ok(Step::uncertain("the service does not answer")),
                },
            },
        }
    }

    /// The draft disappeared before we acted: sent or deleted elsewhere.
    pub(super) async fn gone_before_send(&self) -> Result<Step> {
        match self.find_in_sent().await {
            // Someone sent it from Gmail itself: the owner's intent happened, but not through
            // this decision, and nothing is sent again.
            Ok(true) => Ok(match self.decision.kind {
                DecisionKind::Approve => Step::conflict(
                    "sent elsewhere: it was already in Gmail's Sent, so it was not sent again",
                    ItemEvent::Vanished,
                ),
                DecisionKind::Reject => {
                    Step::conflict("sent elsewhere before the rejection", ItemEvent::Vanished)
                }
            }),
            Ok(false) => Ok(match self.decision.kind {
                DecisionKind::Approve => {
                    Step::conflict("deleted elsewhere: nothing was sent", ItemEvent::Vanished)
                }
                DecisionKind::Reject => Step::done(ItemEvent::RejectionDone),
            }),
            Err(step) => Ok(step),
        }
    }

    pub(super) async fn find_in_sent(&self) -> std::result::Result<bool, Step> {
        let message_id = match &self.decision.rfc822_message_id {
            Some(id) => Some(id.clone()),
            None => self
                .reviewed_message_id()
                .await
                .map_err(|e| Step::refused(e.to_string()))?,
        };
        let Some(message_id) = message_id else {
            return Ok(false);
        };
        match self.client.find_sent_by_message_id(&message_id).await {
            Ok(found) => Ok(!found.is_empty()),
            Err(e) => Err(gmail_failure(e, GmailCall::Read)),
        }
    }

    pub(super) async fn reviewed_bytes(&self) -> Result<Vec<u8>> {
        let version = self
            .store
            .version(self.decision.item_id, &self.decision.version)
            .await?;
        if version.sha256 != self.decision.digest {
            return Err(Error::Corrupt(
                "the reviewed version's bytes no longer match their digest".into(),
            ));
        }
        Ok(version.content.bytes().to_vec())
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
