//! Carrying out a decision on a muster plugin draft (`POST /api/plugin/drafts/{id}/decide`
//! with the reviewed `updatedAt`), and looking up what became of one whose answer was lost.
//! API: docs/muster-owner-api.md.

use crate::domain::{DecisionKind, DispatchOutcome, ItemEvent};
use crate::error::Result;
use crate::store::{Decision, RefusalKind, Store};
use countersign_muster::{DecideOutcome, MusterClient};

use super::step::{muster_not_done, Step, CHANGED};
use super::Timing;

/// The step for a muster decision that landed (or was found landed by a look-up).
pub(super) fn muster_done(decision: &Decision) -> Step {
    match decision.kind {
        // Approved at muster means queued at the plugin: the item stays "sending" until the
        // plugin reports, which a sync mirrors.
        DecisionKind::Approve => Step {
            outcome: DispatchOutcome::Done,
            item_event: None,
            refusal: None,
            retry_at: None,
            failure: None,
        },
        DecisionKind::Reject => Step::done(ItemEvent::RejectionDone),
    }
}

pub(super) fn muster_kind(decision: &Decision) -> countersign_muster::Decision {
    match decision.kind {
        DecisionKind::Approve => countersign_muster::Decision::Approve,
        DecisionKind::Reject => countersign_muster::Decision::Reject,
    }
}

pub(super) async fn muster_decide(
    store: &Store,
    client: &MusterClient,
    draft_id: &str,
    decision: &Decision,
) -> Result<(Step, Timing)> {
    let answer = client
        .decide(
            draft_id,
            muster_kind(decision),
            decision.reason.as_deref(),
            &decision.version,
        )
        .await;
    let step = match answer {
        Ok(DecideOutcome::Queued { note, .. }) => {
            // muster's note says what happens next, in its words: the audit keeps them.
            let note = note.trim();
            if !note.is_empty() {
                store.set_decision_service_note(decision.id, note).await?;
            }
            muster_done(decision)
        }
        Ok(DecideOutcome::AlreadyDecided {
            same_decision: true,
            ..
        }) => muster_done(decision),
        Ok(DecideOutcome::AlreadyDecided {
            same_decision: false,
            ..
        }) => Step::conflict("decided elsewhere, differently", ItemEvent::Conflicted),
        Ok(DecideOutcome::Stale { .. }) => Step::conflict(CHANGED, ItemEvent::Conflicted),
        // muster's own words, as its own CLI shows them.
        Ok(DecideOutcome::Unchecked { message }) => {
            Step::conflict(format!("muster: {message}"), ItemEvent::Conflicted)
        }
        Ok(DecideOutcome::CheckRefused { message }) => Step {
            outcome: DispatchOutcome::Failed(format!("muster: {message}")),
            item_event: Some(ItemEvent::CheckRefused),
            refusal: Some((RefusalKind::CheckRefused, format!("muster: {message}"))),
            retry_at: None,
            failure: None,
        },
        Ok(DecideOutcome::NotFound) => {
            Step::conflict("it is no longer in muster", ItemEvent::Vanished)
        }
        Err(e) => return Ok(muster_not_done(e, false)),
    };
    Ok((step, Timing::muster()))
}

/// Find out what became of a decide whose answer never came: muster's draft says.
pub(super) async fn muster_look_up(
    client: &MusterClient,
    draft_id: &str,
    decision: &Decision,
) -> Result<(Step, Timing)> {
    use countersign_muster::DraftState as D;
    let draft = match client.get_draft(draft_id).await {
        Ok(draft) => draft,
        Err(countersign_muster::Error::NotFound { .. }) => {
            return Ok((
                Step::conflict("it is no longer in muster", ItemEvent::Vanished),
                Timing::muster(),
            ))
        }
        Err(e) => return Ok(muster_not_done(e, true)),
    };
    if let D::Unknown(state) = &draft.state {
        // A newer muster's state: it may be ours (an approval's own next step) or another's.
        // Calling it "decided elsewhere" would record a guess as muster's word.
        return Ok((
            Step::uncertain(format!(
                "muster now shows the draft as '{state}', which Countersign does not know: \
                 whether this decision landed cannot be told; look in muster"
            )),
            Timing::muster(),
        ));
    }
    let ours = match (decision.kind, draft.state) {
        (DecisionKind::Approve, D::Approved | D::Sent | D::Failed) => Some(true),
        (DecisionKind::Reject, D::Rejected) => Some(true),
        (_, D::Pending) => None,
        _ => Some(false),
    };
    let step = match ours {
        Some(true) => muster_done(decision),
        Some(false) => Step::conflict("decided elsewhere, differently", ItemEvent::Conflicted),
        // Still pending as reviewed: the decide never landed, and sending it is safe.
        None if draft.updated_at == decision.version => {
            Step::retry("not decided at muster yet; sending it again is safe")
        }
        None => Step::conflict(CHANGED, ItemEvent::Conflicted),
    };
    Ok((step, Timing::muster()))
}
