//! A dispatcher's bookkeeping: claiming the next due decision, and what it notes about one in
//! flight (bytes and ids sent, the service's note, look-ups of an uncertain outcome).

use chrono::{DateTime, Utc};

use super::finish::{finish_in, item_state_in, set_aside_in};
use super::{Claim, Decision};
use crate::domain::{DecisionKind, DispatchOutcome, ItemEvent, ItemState};
use crate::error::Result;
use crate::store::items::apply_item_event_in;
use crate::store::Found;
use crate::store::{format_time, Store};

impl Store {
    /// Claim the oldest decision that is due at `now`, in one write transaction: no two
    /// dispatchers (in this process or another) can claim the same one.
    pub async fn claim_next_due(
        &self,
        now: DateTime<Utc>,
        claimant: &str,
    ) -> Result<Option<Claim>> {
        let now_text = format_time(now);
        let mut tx = self.write_tx().await?;
        // Decisions of one account leave in the order they were made: one that waits for
        // the service (backing off, or outcome unknown) holds back the later ones.
        let decision: Option<Decision> = sqlx::query_as(
            "SELECT d.* FROM decisions d JOIN review_items i ON i.id = d.item_id
              WHERE d.state = 'queued' AND d.due_at <= ?
                AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= ?)
                AND NOT EXISTS (
                    SELECT 1 FROM decisions e JOIN review_items j ON j.id = e.item_id
                     WHERE j.account_id = i.account_id AND e.id < d.id
                       AND (e.state = 'uncertain'
                            OR (e.state = 'queued' AND e.next_attempt_at > ?)))
              ORDER BY d.id LIMIT 1",
        )
        .bind(&now_text)
        .bind(&now_text)
        .bind(&now_text)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(decision) = decision else {
            return Ok(None);
        };
        // Nothing leaves that the record does not vouch for: a decision written around
        // Countersign (with `sqlite3`, say) is set aside, audited and reported, never retried.
        let unsendable =
            crate::store::decision_seal::why_unsendable_in(&mut tx, &self.keys, decision.id)
                .await?;
        if let Some(why) = unsendable {
            tracing::warn!(decision = decision.id, %why, "a decision the record does not vouch for was set aside");
            let why = format!("{} ({why})", crate::store::decision_seal::UNVOUCHED);
            let aside = set_aside_in(&mut tx, &self.keys, decision, &why).await?;
            tx.commit().await?;
            return Ok(Some(Claim::Settled(aside)));
        }
        let state = decision.state.claim()?;
        let mirrored = item_state_in(&mut tx, decision.item_id).await?;
        if mirrored != ItemState::Queued {
            // A sync moved the item while its decision waited (muster's check refused the
            // reply, say): the decision ends here, off the wire, instead of failing every pass.
            let (outcome, event) = match (decision.kind, mirrored) {
                (DecisionKind::Reject, ItemState::Rejected) => {
                    (DispatchOutcome::Done, ItemEvent::RejectionDone)
                }
                _ => (
                    DispatchOutcome::Retry("the mirror moved on before it left".into()),
                    ItemEvent::DispatchRetried,
                ),
            };
            sqlx::query("UPDATE decisions SET state = ?, claimed_at = ? WHERE id = ?")
                .bind(state.as_str())
                .bind(&now_text)
                .bind(decision.id)
                .execute(&mut *tx)
                .await?;
            let claimed = Decision { state, ..decision };
            let settled =
                finish_in(&mut tx, &self.keys, claimed, &outcome, Some(event), None).await?;
            tx.commit().await?;
            return Ok(Some(Claim::Settled(settled)));
        }
        sqlx::query(
            "UPDATE decisions SET state = ?, claimed_by = ?, claimed_at = ?, attempts = attempts + 1
             WHERE id = ? AND state = 'queued'",
        )
        .bind(state.as_str())
        .bind(claimant)
        .bind(&now_text)
        .bind(decision.id)
        .execute(&mut *tx)
        .await?;
        apply_item_event_in(&mut tx, decision.item_id, ItemEvent::DispatchStarted, None).await?;
        tx.commit().await?;
        self.get_decision(decision.id)
            .await
            .map(|d| Some(Claim::Claimed(d)))
    }

    /// Remember the sha256 of the bytes a send will carry (and the header added to the reviewed
    /// bytes, if any), before it is sent, so the audit can say exactly what left.
    pub async fn set_decision_sent_bytes(
        &self,
        decision_id: i64,
        digest: &str,
        header_added: Option<&str>,
    ) -> Result<()> {
        sqlx::query("UPDATE decisions SET sent_digest = ?, sent_header_added = ? WHERE id = ?")
            .bind(digest)
            .bind(header_added)
            .bind(decision_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Remember what the service said when it took the decision (muster's `note`), for the
    /// owner and the dispatch's audit row.
    pub async fn set_decision_service_note(&self, decision_id: i64, note: &str) -> Result<()> {
        sqlx::query("UPDATE decisions SET service_note = ? WHERE id = ?")
            .bind(note)
            .bind(decision_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Remember Gmail's id of the message a send created (or was found as in Sent).
    pub async fn set_decision_gmail_message_id(
        &self,
        decision_id: i64,
        gmail_message_id: &str,
    ) -> Result<()> {
        sqlx::query("UPDATE decisions SET gmail_message_id = ? WHERE id = ?")
            .bind(gmail_message_id)
            .bind(decision_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Remember the `Message-ID` a send will carry, before it is sent.
    pub async fn set_decision_message_id(&self, decision_id: i64, message_id: &str) -> Result<()> {
        sqlx::query("UPDATE decisions SET rfc822_message_id = ? WHERE id = ?")
            .bind(message_id)
            .bind(decision_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Put decisions left `dispatching` by a process that died into `uncertain`: their outcome
    /// is unknown, so they are reconciled, never resent blindly.
    pub async fn mark_abandoned_dispatches_uncertain(&self) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE decisions SET state = 'uncertain',
                outcome_detail = 'the app stopped while this was being sent'
             WHERE state = 'dispatching'",
        )
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected())
    }

    /// Count one unanswered look-up of an uncertain decision; the count so far.
    pub async fn count_lookup(&self, decision_id: i64) -> Result<u32> {
        let count: i64 = sqlx::query_scalar(
            "UPDATE decisions SET lookups = lookups + 1 WHERE id = ? RETURNING lookups",
        )
        .bind(decision_id)
        .fetch_optional(self.pool())
        .await?
        .found("decision", decision_id)?;
        Ok(count as u32)
    }

    /// How many unanswered look-ups an uncertain decision has had (claims are not counted).
    pub async fn lookups(&self, decision_id: i64) -> Result<u32> {
        let count: Option<i64> = sqlx::query_scalar("SELECT lookups FROM decisions WHERE id = ?")
            .bind(decision_id)
            .fetch_optional(self.pool())
            .await?;
        Ok(count.unwrap_or(0) as u32)
    }
}
