//! How a dispatched decision ends: its outcome recorded against what the item shows now, or
//! the decision set aside as failed, each with its audit row and the owner told of conflicts.

use chrono::{DateTime, Utc};

use super::Decision;
use crate::domain::{DecisionState, DispatchOutcome, ItemEvent, ItemState, Settled};
use crate::error::Result;
use crate::store::audit::{append_audit_in, NewAuditEntry};
use crate::store::items::{apply_item_event_in, write_item_state_in};
use crate::store::refusals::RefusalKind;
use crate::store::Found;
use crate::store::{format_time, Store};

impl Store {
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
}

pub(super) async fn item_state_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
) -> Result<ItemState> {
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
    crate::store::refusals::record_refusal_in(tx, decision.item_id, kind, reason, &key).await?;
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
pub(super) async fn finish_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &crate::store::seal::KeyState,
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

/// End `decision` as failed with `why`, its item a conflict the owner is told about (a refusal,
/// which the status bar, notifications and `countersign list` show), and an audit row.
pub(super) async fn set_aside_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &crate::store::seal::KeyState,
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
