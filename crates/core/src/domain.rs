//! Domain types: review items and their states, routes, decisions and their outcomes.
//!
//! States move only through the functions here, which refuse illegal moves; the store calls
//! them inside the transaction that writes the new state, so the mirror never holds a move the
//! rules forbid.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Where a review item comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Source {
    /// A draft in a Gmail account's Drafts.
    Gmail,
    /// A plugin reply draft in a muster instance.
    Muster,
}

/// The state of a review item as the owner sees it (DESIGN §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ItemState {
    /// Waiting for the owner.
    Pending,
    /// muster: the plugin has not said yet whether the reply is sendable; reject only.
    AwaitingCheck,
    /// A decision is in the outbox; undo is still possible.
    Queued,
    /// The decision is on its way (or, for muster, approved and queued at the plugin).
    Sending,
    /// Sent.
    Sent,
    /// Rejected (by the owner, or by the plugin's check).
    Rejected,
    /// The send was refused (the plugin's `ok: false`, or Google); the reason is kept.
    SendFailed,
    /// Changed since the owner reviewed it, or decided elsewhere: review again.
    Conflict,
    /// No longer there (deleted elsewhere).
    Gone,
}

/// The two decisions an owner can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DecisionKind {
    /// Send it (Gmail) or let the plugin send it (muster).
    Approve,
    /// Discard it, with a reason.
    Reject,
}

/// Something that happens to a review item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemEvent {
    /// The owner decided; the decision is now in the outbox.
    Decided(DecisionKind),
    /// The owner took the decision back inside the undo window.
    Undone {
        /// Whether the plugin still has to check the draft (muster).
        awaiting_check: bool,
    },
    /// The plugin's check said the reply can be sent.
    CheckPassed,
    /// The plugin's check refused the reply: rejected for good.
    CheckRefused,
    /// The dispatcher took the decision and is talking to the service.
    DispatchStarted,
    /// A retryable failure before anything was sent: back to the outbox.
    DispatchRetried,
    /// The service confirmed the message was sent.
    Delivered,
    /// The service confirmed the rejection.
    RejectionDone,
    /// The send was refused by the plugin or by Google.
    SendRefused,
    /// The draft changed since it was reviewed, or was decided elsewhere.
    Conflicted,
    /// The draft is not there any more.
    Vanished,
    /// The owner looks again at a conflict, or at a Gmail draft whose send Google refused
    /// (still in Drafts: after reconnecting the account it can be approved again).
    ReviewAgain,
    /// What a decision came to contradicts what the mirror holds (say, the service answered
    /// "sent" while a sync had mirrored "rejected"): whatever the item was, the owner must
    /// look at it again.
    Contradicted,
}

/// How an outcome the dispatcher learned lands on an item that a sync may have moved first
/// ([`ItemState::settle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The item moved to this state.
    Moved(ItemState),
    /// The item already is where the outcome puts it: a sync mirrored the service's own state
    /// before the dispatcher heard. Nothing changes; the audit says "already so".
    AlreadySo(ItemState),
    /// The mirror holds something the outcome contradicts (this state).
    Contradicts(ItemState),
}

impl ItemState {
    /// All states, in the order the queue lists them.
    pub const ALL: [ItemState; 9] = [
        ItemState::Pending,
        ItemState::Conflict,
        ItemState::AwaitingCheck,
        ItemState::Queued,
        ItemState::Sending,
        ItemState::SendFailed,
        ItemState::Sent,
        ItemState::Rejected,
        ItemState::Gone,
    ];

    /// The name stored in the mirror and shown in `--json` output.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Nothing more will happen to an item in this state.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ItemState::Sent | ItemState::Rejected | ItemState::Gone | ItemState::SendFailed
        )
    }

    /// Whether the owner can decide `kind` on an item in this state, and if not, why.
    pub fn check_decidable(self, kind: DecisionKind) -> std::result::Result<(), &'static str> {
        match (self, kind) {
            (ItemState::Pending | ItemState::Conflict, _) => Ok(()),
            (ItemState::AwaitingCheck, DecisionKind::Reject) => Ok(()),
            (ItemState::AwaitingCheck, DecisionKind::Approve) => {
                Err("the plugin has not checked this reply yet — you can only reject it")
            }
            (ItemState::Queued, _) => Err(
                "it is already decided but has not left; undo that decision first, then decide again",
            ),
            (ItemState::Sending, _) => Err("it is already decided and being sent"),
            (ItemState::Sent, _) => Err("it has been sent already"),
            (ItemState::Rejected, _) => Err("it has been rejected already"),
            (ItemState::SendFailed, _) => {
                Err("its send was refused; the agent has to write a new draft")
            }
            (ItemState::Gone, _) => Err("it is not there any more (deleted or sent elsewhere)"),
        }
    }

    /// Apply `event`, or refuse a move the rules forbid.
    pub fn apply(self, event: ItemEvent) -> Result<ItemState> {
        use ItemEvent as E;
        use ItemState as S;
        let next = match (self, event) {
            (s, E::Decided(kind)) => match s.check_decidable(kind) {
                Ok(()) => Some(S::Queued),
                Err(_) => None,
            },
            (S::Queued, E::Undone { awaiting_check }) => Some(if awaiting_check {
                S::AwaitingCheck
            } else {
                S::Pending
            }),
            (S::AwaitingCheck, E::CheckPassed) => Some(S::Pending),
            (S::AwaitingCheck | S::Queued | S::Sending, E::CheckRefused) => Some(S::Rejected),
            (S::Queued, E::DispatchStarted) => Some(S::Sending),
            (S::Sending, E::DispatchRetried) => Some(S::Queued),
            (S::Sending, E::Delivered) => Some(S::Sent),
            (S::Sending, E::RejectionDone) => Some(S::Rejected),
            (S::Sending, E::SendRefused) => Some(S::SendFailed),
            (S::Queued | S::Sending | S::Pending, E::Conflicted) => Some(S::Conflict),
            (S::Pending | S::AwaitingCheck | S::Conflict | S::Queued | S::Sending, E::Vanished) => {
                Some(S::Gone)
            }
            (S::Conflict | S::SendFailed, E::ReviewAgain) => Some(S::Pending),
            (_, E::Contradicted) => Some(S::Conflict),
            _ => None,
        };
        next.ok_or_else(|| {
            Error::refused(
                format!("move an item that is {} on {:?}", self.as_str(), event),
                "that move is not allowed",
            )
        })
    }

    /// Apply an event the dispatcher learned from the service (a decision's outcome) to an
    /// item a sync may already have moved: the move when it is allowed; "already so" when the
    /// item is where the event leads (a rejection muster confirmed after a sync mirrored it);
    /// otherwise a contradiction, which the caller turns into a conflict the owner sees —
    /// never an error that stops the dispatcher.
    pub fn settle(self, event: ItemEvent) -> Settled {
        if let Ok(next) = self.apply(event) {
            return Settled::Moved(next);
        }
        // Where the event leads from `sending`, the state a dispatched decision's item is in.
        match ItemState::Sending.apply(event) {
            Ok(target) if target == self => Settled::AlreadySo(self),
            // "Gone" is all a sync can say of a draft that left Drafts: the dispatcher's answer
            // (sent, rejected, refused) says more, and is taken.
            Ok(target) if self == ItemState::Gone && target.is_final() => Settled::Moved(target),
            _ => Settled::Contradicts(self),
        }
    }

    /// The state to keep when a sync observes `observed` at the service for an item that is
    /// `self` here: a decision the owner made locally is not overwritten by a stale look at the
    /// service, but a final answer from the service is taken.
    pub fn merge_observed(self, observed: ItemState) -> ItemState {
        match self {
            // Not dispatched yet: the owner's decision wins over what the service still shows.
            // The dispatcher re-validates against the service before anything is sent.
            ItemState::Queued => ItemState::Queued,
            ItemState::Sending if observed.is_final() => observed,
            ItemState::Sending => ItemState::Sending,
            // A conflict is settled by the owner, not by the next sync.
            ItemState::Conflict if observed.is_final() => observed,
            ItemState::Conflict => ItemState::Conflict,
            // Final here stays final, except that a sent/rejected/failed item cannot come back.
            s if s.is_final() => s,
            _ => observed,
        }
    }

    /// [`Self::merge_observed`] for muster, whose draft state is the truth: a final state here
    /// (say, a decision that could not be carried out) never hides what muster shows since —
    /// a draft still pending is decidable again, a plugin's later result is taken.
    pub fn merge_observed_muster(self, observed: ItemState) -> ItemState {
        match self {
            s if s.is_final() => observed,
            s => s.merge_observed(observed),
        }
    }
}

impl fmt::Display for ItemState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DecisionKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl Source {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a decision is in the outbox (DESIGN §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DecisionState {
    /// Written, waiting for its undo window to pass (or for the service to answer).
    Queued,
    /// Claimed by a dispatcher, on the wire.
    Dispatching,
    /// Carried out.
    Done,
    /// The draft changed or was decided elsewhere: the owner reviews again.
    Conflict,
    /// Refused for good; the reason is shown and the owner acts.
    Failed,
    /// Sent, but the answer never came: reconcile, never resend blindly.
    Uncertain,
    /// Undone inside the window.
    Cancelled,
}

/// How a dispatch attempt ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "detail")]
pub enum DispatchOutcome {
    /// Done.
    Done,
    /// Changed since reviewed, or decided elsewhere.
    Conflict(String),
    /// Refused for good.
    Failed(String),
    /// The answer never came.
    Uncertain(String),
    /// Failed before anything was sent; try again later.
    Retry(String),
}

/// How a dispatch attempt ended, without its detail (`dispatch --json` prints it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// Done.
    Done,
    /// Changed since reviewed, or decided elsewhere.
    Conflict,
    /// Refused for good.
    Failed,
    /// The answer never came.
    Uncertain,
    /// Failed before anything was sent; tried again later.
    Retrying,
}

impl DispatchOutcome {
    /// What the service said, for every outcome but done.
    pub fn detail(&self) -> Option<&str> {
        match self {
            DispatchOutcome::Done => None,
            DispatchOutcome::Conflict(d)
            | DispatchOutcome::Failed(d)
            | DispatchOutcome::Uncertain(d)
            | DispatchOutcome::Retry(d) => Some(d),
        }
    }

    /// The outcome without its detail.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            DispatchOutcome::Done => OutcomeKind::Done,
            DispatchOutcome::Conflict(_) => OutcomeKind::Conflict,
            DispatchOutcome::Failed(_) => OutcomeKind::Failed,
            DispatchOutcome::Uncertain(_) => OutcomeKind::Uncertain,
            DispatchOutcome::Retry(_) => OutcomeKind::Retrying,
        }
    }
}

impl DecisionState {
    /// All states.
    pub const ALL: [DecisionState; 7] = [
        DecisionState::Queued,
        DecisionState::Dispatching,
        DecisionState::Done,
        DecisionState::Conflict,
        DecisionState::Failed,
        DecisionState::Uncertain,
        DecisionState::Cancelled,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Nothing more will happen to the decision.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            DecisionState::Done
                | DecisionState::Conflict
                | DecisionState::Failed
                | DecisionState::Cancelled
        )
    }

    /// Claim the decision for dispatch.
    pub fn claim(self) -> Result<DecisionState> {
        match self {
            DecisionState::Queued => Ok(DecisionState::Dispatching),
            other => Err(illegal(other, "claim")),
        }
    }

    /// Take the decision back (undo).
    pub fn cancel(self) -> Result<DecisionState> {
        match self {
            DecisionState::Queued => Ok(DecisionState::Cancelled),
            other => Err(illegal(other, "cancel")),
        }
    }

    /// Record how a dispatch attempt (or a reconciliation of an uncertain one) ended.
    pub fn finish(self, outcome: &DispatchOutcome) -> Result<DecisionState> {
        match (self, outcome) {
            (DecisionState::Dispatching | DecisionState::Uncertain, o) => Ok(match o {
                DispatchOutcome::Done => DecisionState::Done,
                DispatchOutcome::Conflict(_) => DecisionState::Conflict,
                DispatchOutcome::Failed(_) => DecisionState::Failed,
                DispatchOutcome::Uncertain(_) => DecisionState::Uncertain,
                DispatchOutcome::Retry(_) => DecisionState::Queued,
            }),
            (other, _) => Err(illegal(other, "finish")),
        }
    }
}

fn illegal(state: DecisionState, action: &str) -> Error {
    Error::refused(
        format!("{action} a decision that is {}", state.as_str()),
        "that move is not allowed",
    )
}

impl fmt::Display for DecisionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A muster route's state (stored as its snake_case name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RouteState {
    /// The message was relayed to a session.
    Relayed,
    /// The plugin could not send the reply written on this route.
    SendFailed,
    /// Handed back to the session that wrote the refused reply.
    Redraft,
    /// Nobody answered in time.
    TimedOut,
    /// Handed to the chief after the redraft bound.
    Fallback,
}

impl RouteState {
    /// The stored (and muster) name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How many times muster hands a message back for a redraft before it goes to the chief.
pub const MAX_ROUTE_REDRAFTS: u32 = 2;

#[cfg(test)]
mod tests;
