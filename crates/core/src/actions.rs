//! What the owner may do to an item right now, and the sentence saying why not: the one place
//! these rules live. [`crate::decide`] refuses with the same checks and sentences, the desktop
//! app enables its buttons from [`ActionState::allowed`] and shows [`ActionState::why_not`],
//! and the CLI prints them; neither decides anything itself.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::{DecisionKind, DecisionState, ItemState, Source};
use crate::store::{Account, ItemSummary, LiveDecision};

/// Something the owner can do to an item from the review screen or the CLI. New actions (an
/// `Edit` of a Gmail text body) are added here with their rule in [`allowed_actions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Send it (Gmail) or let the plugin send it (muster), after the undo window.
    Approve,
    /// Discard it, with a reason.
    Reject,
    /// Take back a decision that has not left yet (queued: in its undo window or after it).
    Undo,
    /// Change a Gmail draft's subject and text before approving it ([`crate::edit`]).
    Edit,
}

impl Action {
    /// The name `--json` and the UI use, which is also the CLI command.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Reject => "reject",
            Action::Undo => "undo",
            Action::Edit => "edit",
        }
    }
}

/// Whether one [`Action`] is open on an item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ActionState {
    /// The action.
    pub action: Action,
    /// Core would accept it now.
    pub allowed: bool,
    /// When not allowed: the sentence for the owner ("it has been sent already").
    pub why_not: Option<String>,
    /// When allowed only until a known instant: then it closes by itself, and a screen that
    /// keeps the item open greys the action out without asking again. No action has one today
    /// (undo stays open until the dispatcher claims the decision, which is announced).
    pub until: Option<DateTime<Utc>>,
}

impl ActionState {
    /// The state of `action` after `check`: open, or closed with its sentence.
    pub fn from_check(action: Action, check: std::result::Result<(), String>) -> ActionState {
        match check {
            Ok(()) => ActionState {
                action,
                allowed: true,
                why_not: None,
                until: None,
            },
            Err(why) => ActionState {
                action,
                allowed: false,
                why_not: Some(why),
                until: None,
            },
        }
    }
}

/// Whether the owner can decide `kind` on an item of `source` in `state`, and if not, why.
pub fn decidable(
    source: Source,
    state: ItemState,
    kind: DecisionKind,
) -> std::result::Result<(), &'static str> {
    // A Gmail draft whose send Google refused is still in Drafts: deciding again is the owner's
    // way to retry once the cause is fixed (e.g. the account reconnected with send permission).
    // A muster draft the plugin failed is final: the session writes a redraft instead.
    if source == Source::Gmail && state == ItemState::SendFailed {
        return Ok(());
    }
    state.check_decidable(kind)
}

/// Whether a message of `size` bytes from `source` can be approved: Gmail's `drafts.send`
/// takes at most [`countersign_gmail::drafts::MAX_SEND_BYTES`].
pub fn sendable_size(source: Source, size: usize) -> std::result::Result<(), String> {
    if source == Source::Gmail && size > countersign_gmail::drafts::MAX_SEND_BYTES {
        return Err(format!(
            "the message is {:.1} MB and Gmail sends at most {} MB; ask the agent for a smaller \
             one (a link instead of the attachment)",
            size as f64 / 1_048_576.0,
            countersign_gmail::drafts::MAX_SEND_BYTES / 1_048_576
        ));
    }
    Ok(())
}

/// Whether a decision in `state` can still be taken back: as long as it is `queued`, nothing
/// of it has left — inside its undo window, or past it while it waits (sending paused, the
/// service offline, a reconnect needed). Once a dispatcher has claimed it (in the same kind of
/// write transaction as the undo, so exactly one of the two wins) it is too late.
pub fn undoable(state: DecisionState) -> std::result::Result<(), String> {
    if state != DecisionState::Queued {
        return Err(ALREADY_SENDING.into());
    }
    Ok(())
}

/// The sentence when a decision is being carried out already.
pub const ALREADY_SENDING: &str = "it is already being sent; it is too late to take it back";

/// Whether the owner can edit an item of `source` in `state` (its content may still refuse:
/// see [`crate::edit::edit_form`]), and if not, why.
pub fn editable(source: Source, state: ItemState) -> std::result::Result<(), &'static str> {
    if source == Source::Muster {
        return Err(
            "muster drafts cannot be edited: muster's decision carries no text. Reject it with \
             a note saying what to change, and the agent writes a new draft",
        );
    }
    match state {
        // Undecided, or a send Google refused, which the owner may fix and approve again.
        ItemState::Pending | ItemState::Conflict | ItemState::SendFailed => Ok(()),
        ItemState::Queued => {
            Err("it is already decided; undo the decision first (it has not left)")
        }
        ItemState::Sending => Err("it is already being sent"),
        ItemState::AwaitingCheck => Err("its plugin has not checked it yet"),
        ItemState::Sent => Err("it has been sent already"),
        ItemState::Rejected => Err("it has been rejected already"),
        ItemState::Gone => Err("it is not there any more (deleted or sent elsewhere)"),
    }
}

/// Why `account` cannot send at all, when its granted scopes do not allow it (Gmail connected
/// read-only); `None` when it can. Approving stays open: the dispatcher refuses the send with
/// this sentence, and the item becomes decidable again once the account is reconnected.
pub fn send_refusal(account: &Account) -> Option<String> {
    match account.profile.kind {
        Source::Gmail => countersign_gmail::can_send(&account.profile.granted_scopes)
            .err()
            .map(|sentence| sentence.to_string()),
        Source::Muster => None,
    }
}

/// Close Approve and Reject with `why`: the item's current version is one no decision may bind
/// to (a muster stamp that came back with other text, see
/// [`crate::store::stamp_conflict_reason`]). Core's decide refuses it with the same sentence.
pub fn refuse_decisions(actions: &mut [ActionState], why: &str) {
    for state in actions {
        if matches!(state.action, Action::Approve | Action::Reject) {
            *state = ActionState::from_check(state.action, Err(why.to_string()));
        }
    }
}

/// The sentence when there is no decision to take back.
pub const NOTHING_TO_UNDO: &str = "there is no decision waiting on it";

/// Every action on `item` now, in the order the screens offer them. `message_size` is the
/// current version's size when known (the review detail): an oversized Gmail message cannot be
/// approved. The list row passes `None`; the detail, and core's approve, check it.
pub fn allowed_actions(item: &ItemSummary, message_size: Option<usize>) -> Vec<ActionState> {
    let approve = decidable(item.source, item.state, DecisionKind::Approve)
        .map_err(str::to_string)
        .and_then(|()| match message_size {
            Some(size) => sendable_size(item.source, size),
            None => Ok(()),
        });
    let reject = decidable(item.source, item.state, DecisionKind::Reject).map_err(str::to_string);
    let edit = editable(item.source, item.state).map_err(str::to_string);
    vec![
        ActionState::from_check(Action::Approve, approve),
        ActionState::from_check(Action::Reject, reject),
        undo_state(item.decision.as_ref()),
        ActionState::from_check(Action::Edit, edit),
    ]
}

fn undo_state(decision: Option<&LiveDecision>) -> ActionState {
    match decision {
        None => ActionState::from_check(Action::Undo, Err(NOTHING_TO_UNDO.into())),
        // Open as long as the decision waits, past its window too: no instant closes it, the
        // dispatcher's claim does (and the row then changes, announced by an event).
        Some(decision) => ActionState::from_check(Action::Undo, undoable(decision.state)),
    }
}

#[cfg(test)]
mod tests {
    /// The review's "too big to send" flag and the send path's refusal use the same limit.
    #[test]
    fn the_renderer_and_the_gmail_client_agree_on_the_largest_message() {
        assert_eq!(
            crate::render::flags::GMAIL_MAX_MESSAGE_BYTES,
            countersign_gmail::drafts::MAX_SEND_BYTES as u64
        );
    }
}
