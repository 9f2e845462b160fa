//! The owner's decisions: approve, reject, undo. Each is written to the outbox with the audit
//! row in one transaction before anything goes on the wire (the dispatcher sends it later).

use chrono::{Duration, Utc};

use crate::domain::{DecisionKind, ItemEvent, ItemState, Source};
use crate::error::{Error, Result};
use crate::store::{Decision, NewDecision, Store};

/// Reasons offered when rejecting; free text is always allowed too.
pub const PRESET_REJECT_REASONS: [&str; 5] = [
    "Wrong recipient",
    "Wrong facts or figures",
    "Tone is off",
    "Should not be answered",
    "Attachment is wrong",
];

/// How long an approval waits before it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoWindow {
    /// The owner's setting (default 10 s).
    FromSettings,
    /// Send as soon as the dispatcher runs (`--no-undo`).
    None,
}

/// Approve the version of `item_id` that is current in the mirror — the one the owner was
/// shown — recording its digest, so that exactly those bytes are what is sent.
pub async fn approve(
    store: &Store,
    item_id: i64,
    window: UndoWindow,
    actor: &str,
) -> Result<Decision> {
    decide(store, item_id, DecisionKind::Approve, None, window, actor).await
}

/// Reject the current version of `item_id` with a reason (required).
pub async fn reject(store: &Store, item_id: i64, reason: &str, actor: &str) -> Result<Decision> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Error::refused(
            format!("reject item {item_id}"),
            "say why: the reason goes back to the agent and into the audit log",
        ));
    }
    decide(
        store,
        item_id,
        DecisionKind::Reject,
        Some(reason.to_string()),
        UndoWindow::FromSettings,
        actor,
    )
    .await
}

/// Take back the decision on `item_id` while its undo window is open.
pub async fn undo(store: &Store, item_id: i64, actor: &str) -> Result<Decision> {
    store.cancel_decision(item_id, Utc::now(), actor).await
}

async fn decide(
    store: &Store,
    item_id: i64,
    kind: DecisionKind,
    reason: Option<String>,
    window: UndoWindow,
    actor: &str,
) -> Result<Decision> {
    let mut item = store.get_item(item_id).await?;
    // A Gmail draft whose send Google refused is still in Drafts: deciding again is the owner's
    // way to retry once the cause is fixed (e.g. the account reconnected with send permission).
    // A muster draft the plugin failed is final: the session writes a redraft instead.
    if item.summary.state == ItemState::SendFailed && item.summary.source == Source::Gmail {
        item.summary.state = store
            .apply_item_event(item_id, ItemEvent::ReviewAgain, None)
            .await?;
    }
    // Refuse early with the state's own sentence (the store checks again in its transaction).
    item.summary
        .state
        .check_decidable(kind)
        .map_err(|why| Error::refused(format!("{} item {item_id}", kind.as_str()), why))?;
    let version = store.version(item_id, &item.summary.version).await?;
    let undo_window = match window {
        UndoWindow::FromSettings => {
            Duration::seconds(i64::from(store.settings().await?.undo_window_secs))
        }
        UndoWindow::None => Duration::zero(),
    };
    store
        .enqueue_decision(NewDecision {
            item_id,
            kind,
            reason,
            version: version.version,
            digest: version.sha256,
            undo_window,
            actor: actor.to_string(),
        })
        .await
}
