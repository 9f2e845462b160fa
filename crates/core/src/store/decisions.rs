//! The decision outbox: decisions are written here, with the audit row, before anything goes on
//! the wire; a dispatcher claims them one at a time in a write transaction.

use super::Found;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::audit::{append_audit_in, NewAuditEntry};
use super::items::{apply_item_event_in, write_item_state_in};
use super::refusals::RefusalKind;
use super::view_of_in;
use super::{format_time, Store};
use crate::decide::Shown;
use crate::domain::{DecisionKind, DecisionState, DispatchOutcome, ItemEvent, ItemState, Settled};
use crate::error::{Error, Result};

/// A decision in the outbox (a row of `decisions`; times are stored as RFC 3339 text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Row id.
    pub id: i64,
    /// The item decided on.
    pub item_id: i64,
    /// Approve or reject.
    pub kind: DecisionKind,
    /// The owner's reason (reject), or note.
    pub reason: Option<String>,
    /// The version the owner reviewed.
    pub version: String,
    /// sha256 of the reviewed bytes.
    pub digest: String,
    /// Where it is.
    pub state: DecisionState,
    /// When the owner decided.
    pub created_at: DateTime<Utc>,
    /// End of the undo window.
    pub due_at: DateTime<Utc>,
    /// Dispatch attempts so far.
    pub attempts: u32,
    /// Not before this time (backoff after a retryable failure).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Which dispatcher holds it.
    pub claimed_by: Option<String>,
    /// The `Message-ID` the send carries, so it can be found in SENT again.
    pub rfc822_message_id: Option<String>,
    /// The last word from the service.
    pub outcome_detail: Option<String>,
    /// When it reached a final state.
    pub finished_at: Option<DateTime<Utc>>,
    /// sha256 of the bytes the send carried (Gmail approvals), recorded before the request.
    pub sent_digest: Option<String>,
    /// The header added to the reviewed bytes before sending (`Message-ID`), if any: the sent
    /// bytes are the reviewed ones with this header in front.
    pub sent_header_added: Option<String>,
    /// Gmail's id of the sent message (Gmail approvals): from the `drafts.send` answer, or the
    /// message a send whose answer was lost (or a draft sent elsewhere) was found as in Sent.
    pub gmail_message_id: Option<String>,
    /// What the service said when it took the decision, in its own words (muster's `note`).
    pub service_note: Option<String>,
    /// Who decided: "owner via desktop", "owner via cli", or `rule:<id>@<version>`.
    pub decided_by: Option<String>,
}

/// A decision to write.
#[derive(Clone, Debug)]
pub struct NewDecision {
    /// The item.
    pub item_id: i64,
    /// Approve or reject.
    pub kind: DecisionKind,
    /// Reason (required for reject by the caller's rules).
    pub reason: Option<String>,
    /// The version the owner reviewed.
    pub version: String,
    /// sha256 of the reviewed bytes.
    pub digest: String,
    /// How long the owner can undo.
    pub undo_window: Duration,
    /// Who decided (e.g. "owner via cli").
    pub actor: String,
    /// The cautions (warnings, differing alternatives) the owner confirmed approving despite,
    /// one sentence each: the audit says "approved despite: …".
    pub despite: Vec<String>,
}

/// What [`Store::claim_next_due`] took out of the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Claimed: this dispatcher carries it out.
    Claimed(Decision),
    /// Its item moved on while it waited (a sync mirrored the service settling it): ended
    /// without going on the wire, "already so" or a conflict the owner is told about.
    Settled(Decision),
}

impl std::ops::Deref for Claim {
    type Target = Decision;

    /// The decision, claimed or settled.
    fn deref(&self) -> &Decision {
        match self {
            Claim::Claimed(d) | Claim::Settled(d) => d,
        }
    }
}

/// Which decisions to list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecisionFilter {
    /// Queued, dispatching or uncertain.
    #[default]
    Live,
    /// Everything.
    All,
}

impl Store {
    /// Write a decision and its audit row in one transaction, after checking that the item can
    /// be decided and that the owner reviewed its current version.
    pub async fn enqueue_decision(&self, new: NewDecision) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let action = format!(
            "{} {}",
            new.kind.as_str(),
            super::draft_words::draft_words_in(&mut tx, new.item_id).await?
        );
        let row = sqlx::query("SELECT state, version FROM review_items WHERE id = ?")
            .bind(new.item_id)
            .fetch_optional(&mut *tx)
            .await?
            .found("item", new.item_id)?;
        let state: ItemState = row.try_get("state")?;
        let current_version: String = row.try_get("version")?;
        state
            .check_decidable(new.kind)
            .map_err(|why| Error::refused(&action, why))?;
        let digest: Option<String> = sqlx::query_scalar(
            "SELECT sha256 FROM draft_versions WHERE item_id = ? AND version = ?",
        )
        .bind(new.item_id)
        .bind(&current_version)
        .fetch_optional(&mut *tx)
        .await?;
        // Checked in the same transaction that writes the decision, so a sync that lands a new
        // version between the owner's look and this write cannot slip in.
        if current_version != new.version || digest.as_deref() != Some(new.digest.as_str()) {
            return Err(Error::ChangedSinceShown {
                action,
                shown: new.version,
                current: current_version,
            });
        }
        super::stamps::refuse_restamped_in(&mut tx, new.item_id, &new.version, &action).await?;
        let by_rule = super::rule_of_actor(&new.actor).is_some();
        // The owner took this version back (Undo) or refused it: no rule, present or future,
        // decides it again. Checked here, in the writing transaction, whatever judged it.
        if by_rule && vetoed_in(&mut tx, new.item_id, &new.version).await? {
            return Err(Error::refused(&action, RULES_VETOED));
        }
        // A muster draft Countersign could not fully read: what it would decide is unknown.
        let undecidable: Option<Option<String>> =
            sqlx::query_scalar("SELECT undecidable_reason FROM review_items WHERE id = ?")
                .bind(new.item_id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(why) = undecidable.flatten() {
            return Err(Error::refused(action, why));
        }
        // An approval binds only to a version its actor was shown (rejections send nothing
        // under the owner's name, and may be made in bulk on what the queue lists).
        let view_id = match new.kind {
            DecisionKind::Approve => Some(
                view_of_in(
                    &mut tx,
                    &action,
                    &Shown {
                        id: new.item_id,
                        version: new.version.clone(),
                        digest: new.digest.clone(),
                    },
                    &new.actor,
                )
                .await?,
            ),
            DecisionKind::Reject => None,
        };
        let now = Utc::now();
        let due = now + new.undo_window;
        let decision: Decision = sqlx::query_as(
            "INSERT INTO decisions
                (item_id, kind, reason, version, digest, state, created_at, due_at, decided_by)
             VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?) RETURNING *",
        )
        .bind(new.item_id)
        .bind(new.kind.as_str())
        .bind(&new.reason)
        .bind(&new.version)
        .bind(&new.digest)
        .bind(format_time(now))
        .bind(format_time(due))
        .bind(&new.actor)
        .fetch_one(&mut *tx)
        .await?;
        apply_item_event_in(&mut tx, new.item_id, ItemEvent::Decided(new.kind), None).await?;
        if new.kind == DecisionKind::Reject && !by_rule {
            veto_in(
                &mut tx,
                new.item_id,
                &new.version,
                &new.digest,
                "reject",
                &new.actor,
            )
            .await?;
        }
        let audit_id = append_audit_in(
            &mut tx,
            &self.keys,
            &NewAuditEntry {
                actor: new.actor.clone(),
                item_id: Some(new.item_id),
                decision_id: Some(decision.id),
                action: new.kind.as_str().to_string(),
                version: Some(new.version.clone()),
                digest: Some(new.digest.clone()),
                outcome: Some("queued".into()),
                detail: match new.despite.as_slice() {
                    [] => new.reason.clone(),
                    cautions => Some(format!("approved despite: {}", cautions.join(" "))),
                },
                view_id,
            },
        )
        .await?;
        super::decision_seal::seal_decision_in(&mut tx, &self.keys, decision.id, audit_id, view_id)
            .await?;
        tx.commit().await?;
        Ok(decision)
    }

    /// Undo the live decision of an item while it is still `queued` (nothing of it has left),
    /// inside its undo window or past it. The read and the write are one write transaction, as
    /// a dispatcher's claim is: an undo racing a claim either cancels before the claim (nothing
    /// is sent) or finds the decision claimed and is refused "already being sent".
    ///
    /// This is the owner's Undo: it is final for every rule, present and future, for the
    /// version decided (a new version from the agent is judged anew).
    pub async fn cancel_decision(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
    ) -> Result<Decision> {
        self.cancel_decision_in(item_id, now, actor, true).await
    }

    /// Take back the live decision of an item as [`Store::cancel_decision`] does, but not as
    /// the owner's verdict on the version: Hold everything takes back rule decisions this way,
    /// and the rules look at those drafts again once it is off.
    pub async fn take_back_decision(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
    ) -> Result<Decision> {
        self.cancel_decision_in(item_id, now, actor, false).await
    }

    async fn cancel_decision_in(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
        final_for_rules: bool,
    ) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let action = format!(
            "undo the decision on {}",
            super::draft_words::draft_words_in(&mut tx, item_id).await?
        );
        let decision: Option<Decision> = sqlx::query_as(
            "SELECT * FROM decisions WHERE item_id = ? AND state IN ('queued', 'dispatching', 'uncertain')",
        )
        .bind(item_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(decision) = decision else {
            return Err(Error::refused(action, crate::actions::NOTHING_TO_UNDO));
        };
        crate::actions::undoable(decision.state).map_err(|why| Error::refused(&action, why))?;
        let state = decision.state.cancel()?;
        sqlx::query("UPDATE decisions SET state = ?, finished_at = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(format_time(now))
            .bind(decision.id)
            .execute(&mut *tx)
            .await?;
        let check_state: Option<String> =
            sqlx::query_scalar("SELECT check_state FROM review_items WHERE id = ?")
                .bind(item_id)
                .fetch_one(&mut *tx)
                .await?;
        let awaiting_check = check_state.as_deref() == Some("awaiting");
        apply_item_event_in(&mut tx, item_id, ItemEvent::Undone { awaiting_check }, None).await?;
        if final_for_rules {
            veto_in(
                &mut tx,
                item_id,
                &decision.version,
                &decision.digest,
                "undo",
                actor,
            )
            .await?;
        }
        append_audit_in(
            &mut tx,
            &self.keys,
            &NewAuditEntry {
                actor: actor.to_string(),
                item_id: Some(item_id),
                decision_id: Some(decision.id),
                action: "undo".into(),
                version: Some(decision.version.clone()),
                digest: Some(decision.digest.clone()),
                outcome: Some("cancelled".into()),
                detail: None,
                view_id: None,
            },
        )
        .await?;
        tx.commit().await?;
        Ok(Decision { state, ..decision })
    }

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
            super::decision_seal::why_unsendable_in(&mut tx, &self.keys, decision.id).await?;
        if let Some(why) = unsendable {
            tracing::warn!(decision = decision.id, %why, "a decision the record does not vouch for was set aside");
            let why = format!("{} ({why})", super::decision_seal::UNVOUCHED);
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

    /// Record how a dispatch (or a reconciliation) ended: the decision's new state, the item's
    /// event, and the audit row, in one transaction.
    ///
    /// A sync may have mirrored the service's state before the dispatcher heard its answer
    /// ([`ItemState::settle`]): an outcome the item already shows is recorded "already so"; one
    /// that contradicts it leaves the item a conflict the owner is told about; a retry of an
    /// item the service settled meanwhile ends the decision, since nothing is left to send.
    /// None of these is an error: one decision's trouble never stops the others.
    pub async fn finish_decision(
        &self,
        decision_id: i64,
        outcome: &DispatchOutcome,
        item_event: Option<ItemEvent>,
        retry_at: Option<DateTime<Utc>>,
    ) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let decision: Decision = sqlx::query_as("SELECT * FROM decisions WHERE id = ?")
            .bind(decision_id)
            .fetch_optional(&mut *tx)
            .await?
            .found("decision", decision_id)?;
        let finished =
            finish_in(&mut tx, &self.keys, decision, outcome, item_event, retry_at).await?;
        tx.commit().await?;
        Ok(finished)
    }

    /// End a decision the dispatcher could not carry through or record (its item is not where
    /// a decision in flight leaves it, or writing its outcome failed for a reason of its own):
    /// failed, with `why`, its item a conflict the owner is told about, and an audit row — so
    /// the pass goes on with the next decision instead of stopping on this one for good.
    pub async fn set_decision_aside(&self, decision_id: i64, why: &str) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let decision: Decision = sqlx::query_as("SELECT * FROM decisions WHERE id = ?")
            .bind(decision_id)
            .fetch_optional(&mut *tx)
            .await?
            .found("decision", decision_id)?;
        if decision.state.is_final() {
            return Ok(decision);
        }
        let aside = set_aside_in(&mut tx, &self.keys, decision, why).await?;
        tx.commit().await?;
        Ok(aside)
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

    /// Decisions whose outcome is unknown, oldest first.
    pub async fn uncertain_decisions(&self) -> Result<Vec<Decision>> {
        Ok(
            sqlx::query_as("SELECT * FROM decisions WHERE state = 'uncertain' ORDER BY id")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// Uncertain decisions whose next look-up is due at `now`, oldest first.
    pub async fn due_uncertain_decisions(&self, now: DateTime<Utc>) -> Result<Vec<Decision>> {
        Ok(sqlx::query_as(
            "SELECT * FROM decisions WHERE state = 'uncertain'
                AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY id",
        )
        .bind(format_time(now))
        .fetch_all(self.pool())
        .await?)
    }

    /// One decision.
    pub async fn get_decision(&self, id: i64) -> Result<Decision> {
        sqlx::query_as("SELECT * FROM decisions WHERE id = ?")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .found("decision", id)
    }

    /// The outbox, oldest first.
    pub async fn list_decisions(&self, filter: DecisionFilter) -> Result<Vec<Decision>> {
        let sql = match filter {
            DecisionFilter::Live => {
                "SELECT * FROM decisions WHERE state IN ('queued', 'dispatching', 'uncertain') ORDER BY id"
            }
            DecisionFilter::All => "SELECT * FROM decisions ORDER BY id",
        };
        Ok(sqlx::query_as(sql).fetch_all(self.pool()).await?)
    }

    /// Every decision made on an item, oldest first.
    pub async fn decisions_for_item(&self, item_id: i64) -> Result<Vec<Decision>> {
        self.rows_of_item("decisions", item_id).await
    }
}

async fn item_state_in(tx: &mut sqlx::SqliteConnection, item_id: i64) -> Result<ItemState> {
    sqlx::query_scalar("SELECT state FROM review_items WHERE id = ?")
        .bind(item_id)
        .fetch_optional(&mut *tx)
        .await?
        .found("item", item_id)
}

/// Tell the owner (a refusal row, which the app turns into a notification), once per decision.
async fn record_refusal_in(
    tx: &mut sqlx::SqliteConnection,
    decision: &Decision,
    kind: RefusalKind,
    reason: &str,
) -> Result<()> {
    let key = format!("decision:{}:{}", decision.id, kind.as_str());
    super::refusals::record_refusal_in(tx, decision.item_id, kind, reason, &key).await?;
    Ok(())
}

/// What a dispatched decision's outcome says, for a contradiction's sentence.
fn heard(event: ItemEvent) -> &'static str {
    match event {
        ItemEvent::Delivered => "the service says it was sent",
        ItemEvent::RejectionDone => "the service says it was rejected",
        ItemEvent::SendRefused => "the service refused to send it",
        ItemEvent::CheckRefused => "the plugin's check refused it",
        ItemEvent::Conflicted => "it changed or was decided elsewhere",
        ItemEvent::Vanished => "it is no longer at the service",
        _ => "the service answered",
    }
}

/// [`Store::finish_decision`] inside the caller's transaction.
async fn finish_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &super::seal::KeyState,
    decision: Decision,
    outcome: &DispatchOutcome,
    item_event: Option<ItemEvent>,
    retry_at: Option<DateTime<Utc>>,
) -> Result<Decision> {
    let decision_id = decision.id;
    let mut outcome = outcome.clone();

    let mut note = None;
    if let Some(event) = item_event {
        let mirrored = item_state_in(&mut *tx, decision.item_id).await?;
        match mirrored.settle(event) {
            // (Written as settled: a refinement of "gone" is no move `apply` knows.)
            Settled::Moved(next) => {
                write_item_state_in(&mut *tx, decision.item_id, next, outcome.detail()).await?;
            }
            Settled::AlreadySo(state) => {
                note = Some(format!(
                    "already so: the mirror showed it {state} before the service's answer came"
                ));
            }
            // Put back for another try, but the service settled it meanwhile: nothing is
            // left to send, and the decision ends here.
            Settled::Contradicts(state) if event == ItemEvent::DispatchRetried => {
                let why = format!(
                    "nothing was sent: it is {state} at the service now ({})",
                    outcome.detail().unwrap_or("retry")
                );
                if !state.is_final() {
                    let item = decision.item_id;
                    apply_item_event_in(&mut *tx, item, ItemEvent::Contradicted, Some(&why))
                        .await?;
                }
                record_refusal_in(&mut *tx, &decision, RefusalKind::Conflict, &why).await?;
                outcome = DispatchOutcome::Conflict(why);
            }
            Settled::Contradicts(state) => {
                let why = format!(
                    "{}, but the mirror says it is {state}: look at it in the service",
                    heard(event)
                );
                apply_item_event_in(
                    &mut *tx,
                    decision.item_id,
                    ItemEvent::Contradicted,
                    Some(&why),
                )
                .await?;
                record_refusal_in(&mut *tx, &decision, RefusalKind::Conflict, &why).await?;
                note = Some(why);
            }
        }
    }
    let state = decision.state.finish(&outcome)?;
    let detail = outcome.detail().map(str::to_owned);
    let now = format_time(Utc::now());
    let finished = state.is_final().then(|| now.clone());
    sqlx::query(
        "UPDATE decisions SET state = ?, outcome_detail = ?, finished_at = ?,
            next_attempt_at = ?, claimed_by = CASE WHEN ? = 'queued' THEN NULL ELSE claimed_by END,
            attempts = attempts + CASE WHEN ? = 'uncertain' THEN 1 ELSE 0 END
         WHERE id = ?",
    )
    .bind(state.as_str())
    .bind(&detail)
    .bind(&finished)
    .bind(
        retry_at
            .filter(|_| state == DecisionState::Queued || state == DecisionState::Uncertain)
            .map(format_time),
    )
    .bind(state.as_str())
    .bind(decision.state.as_str())
    .bind(decision_id)
    .execute(&mut *tx)
    .await?;
    // A send's row records the digest of the bytes that left; its detail says how they
    // relate to the reviewed ones.
    let (audit_digest, audit_detail) = match (&outcome, &decision.sent_digest) {
        (DispatchOutcome::Done, Some(sent)) => (
            sent.clone(),
            Some(
                match &decision.sent_header_added {
                    Some(header) => format!(
                        "sent: the reviewed bytes (sha256 {}) with an added {header} header",
                        decision.digest
                    ),
                    None => "sent: exactly the reviewed bytes".to_string(),
                } + &decision
                    .gmail_message_id
                    .as_ref()
                    .map(|id| format!(" (Gmail message {id})"))
                    .unwrap_or_default(),
            ),
        ),
        // The service's own words on taking it, when it said something.
        (DispatchOutcome::Done, None) => (
            decision.digest.clone(),
            decision
                .service_note
                .as_ref()
                .map(|note| format!("muster: {note}")),
        ),
        _ => (decision.digest.clone(), detail.clone()),
    };
    let audit_detail = match (audit_detail, note) {
        (Some(detail), Some(note)) => Some(format!("{detail}; {note}")),
        (detail, note) => detail.or(note),
    };
    append_audit_in(
        &mut *tx,
        keys,
        &NewAuditEntry {
            actor: "dispatcher".into(),
            item_id: Some(decision.item_id),
            decision_id: Some(decision_id),
            action: format!("{} dispatched", decision.kind.as_str()),
            version: Some(decision.version.clone()),
            digest: Some(audit_digest),
            outcome: Some(state.as_str().to_string()),
            detail: audit_detail,
            view_id: None,
        },
    )
    .await?;
    Ok(Decision {
        state,
        outcome_detail: detail,
        ..decision
    })
}

/// Why a rule may not decide a version the owner took back or refused.
pub const RULES_VETOED: &str =
    "you took this version back or refused it, so no rule decides it again";

/// Record that the owner took `version` of `item_id` back (`undo`) or refused it (`reject`):
/// final for every rule until a new version arrives.
async fn veto_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    version: &str,
    digest: &str,
    kind: &str,
    actor: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT OR IGNORE INTO owner_vetoes (item_id, version, digest, kind, actor, created_at)
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(item_id)
    .bind(version)
    .bind(digest)
    .bind(kind)
    .bind(actor)
    .bind(format_time(Utc::now()))
    .execute(&mut *tx)
    .await?;
    Ok(())
}

async fn vetoed_in(tx: &mut sqlx::SqliteConnection, item_id: i64, version: &str) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM owner_vetoes WHERE item_id = ? AND version = ?)",
    )
    .bind(item_id)
    .bind(version)
    .fetch_one(&mut *tx)
    .await?)
}

/// End `decision` as failed with `why`, its item a conflict the owner is told about (a refusal,
/// which the status bar, notifications and `countersign list` show), and an audit row.
async fn set_aside_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &super::seal::KeyState,
    decision: Decision,
    why: &str,
) -> Result<Decision> {
    let why = match decision.state {
        // It may have left: the owner looks before deciding again.
        DecisionState::Dispatching | DecisionState::Uncertain => {
            format!("{why}; it may have reached the service: look there before deciding again")
        }
        _ => format!("{why}; nothing was sent"),
    };
    let state = DecisionState::Failed;
    sqlx::query(
        "UPDATE decisions SET state = ?, outcome_detail = ?, finished_at = ?,
            next_attempt_at = NULL WHERE id = ?",
    )
    .bind(state.as_str())
    .bind(&why)
    .bind(format_time(Utc::now()))
    .bind(decision.id)
    .execute(&mut *tx)
    .await?;
    // (Its item may be gone with its account: the decision still ends.)
    let mirrored: Option<ItemState> =
        sqlx::query_scalar("SELECT state FROM review_items WHERE id = ?")
            .bind(decision.item_id)
            .fetch_optional(&mut *tx)
            .await?;
    if let Some(mirrored) = mirrored {
        if !mirrored.is_final() {
            let item = decision.item_id;
            apply_item_event_in(&mut *tx, item, ItemEvent::Contradicted, Some(&why)).await?;
        }
        record_refusal_in(&mut *tx, &decision, RefusalKind::Conflict, &why).await?;
    }
    append_audit_in(
        &mut *tx,
        keys,
        &NewAuditEntry {
            actor: "dispatcher".into(),
            item_id: Some(decision.item_id),
            decision_id: Some(decision.id),
            action: format!("{} dispatched", decision.kind.as_str()),
            version: Some(decision.version.clone()),
            digest: Some(decision.digest.clone()),
            outcome: Some(state.as_str().to_string()),
            detail: Some(why.clone()),
            view_id: None,
        },
    )
    .await?;
    Ok(Decision {
        state,
        outcome_detail: Some(why),
        ..decision
    })
}
