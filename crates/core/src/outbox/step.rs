//! What one dispatch attempt came to ([`Step`]), and how a failed call to Gmail or muster
//! becomes one: retry, uncertain, refused or conflict, with where it failed for the account's
//! reachability.

use std::time::Duration;

use chrono::Utc;

use crate::domain::{DispatchOutcome, ItemEvent};
use crate::reachability::{classify_gmail, classify_muster, Failure};
use crate::store::RefusalKind;

use super::Timing;

/// The result of one attempt: the decision's outcome, the item's event, and a refusal to tell
/// the owner about.
pub(super) struct Step {
    pub(super) outcome: DispatchOutcome,
    pub(super) item_event: Option<ItemEvent>,
    pub(super) refusal: Option<(RefusalKind, String)>,
    /// Not before this time, when the service named one (instead of the backoff).
    pub(super) retry_at: Option<chrono::DateTime<Utc>>,
    /// The call failed, and where ([`crate::reachability::classify`]); `None`: it answered.
    pub(super) failure: Option<Failure>,
}

impl Step {
    /// This step comes from a failed call that `failure` classifies.
    pub(super) fn met(self, failure: Failure) -> Step {
        Step {
            failure: Some(failure),
            ..self
        }
    }

    pub(super) fn done(item_event: ItemEvent) -> Step {
        Step {
            outcome: DispatchOutcome::Done,
            item_event: Some(item_event),
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    pub(super) fn retry(why: impl Into<String>) -> Step {
        Step {
            outcome: DispatchOutcome::Retry(why.into()),
            item_event: Some(ItemEvent::DispatchRetried),
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    /// Google asked this account to slow down: wait for the time it named, when it named one.
    pub(super) fn rate_limited(retry_after: Option<Duration>) -> Step {
        let Some(wait) = retry_after else {
            return Step::retry("Gmail asked to slow down; sending again shortly");
        };
        let at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
        Step {
            retry_at: Some(at),
            ..Step::retry(format!(
                "Google limits sending from this account: next try at {}",
                at.with_timezone(&chrono::Local).format("%H:%M")
            ))
        }
    }

    pub(super) fn uncertain(why: impl Into<String>) -> Step {
        Step {
            outcome: DispatchOutcome::Uncertain(why.into()),
            item_event: None,
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    pub(super) fn conflict(why: impl Into<String>, item_event: ItemEvent) -> Step {
        let why = why.into();
        Step {
            outcome: DispatchOutcome::Conflict(why.clone()),
            item_event: Some(item_event),
            refusal: Some((RefusalKind::Conflict, why)),
            retry_at: None,
            failure: None,
        }
    }

    pub(super) fn refused(why: impl Into<String>) -> Step {
        let why = why.into();
        Step {
            outcome: DispatchOutcome::Failed(why.clone()),
            item_event: Some(ItemEvent::SendRefused),
            refusal: Some((RefusalKind::SendRefused, why)),
            retry_at: None,
            failure: None,
        }
    }
}

pub(super) const CHANGED: &str = "changed since you reviewed it: review the new version";
pub(super) const OFFLINE_GMAIL: &str = "offline: Gmail does not answer; it goes out when it does";
pub(super) const OFFLINE_MUSTER: &str = "offline: muster does not answer; it goes out when it does";
/// How the detail of a decision held back by muster's sign-in limit starts.
pub const MUSTER_SIGN_IN_LIMITED: &str = "queued — muster sign-in limited";

/// Which Gmail call failed: a read is repeated freely; a send or a delete changes the mailbox,
/// so one that may have reached Google is looked at again, never repeated blindly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GmailCall {
    /// `drafts.get` and the other reads before a send or a delete.
    Read,
    /// `drafts.send`.
    Send,
    /// `drafts.delete` (a rejection).
    Delete,
}

/// The step for a Gmail call that failed.
pub(super) fn gmail_failure(error: countersign_gmail::Error, call: GmailCall) -> Step {
    use countersign_gmail::Error as G;
    let failure = classify_gmail(&error);
    let changes_mailbox = call != GmailCall::Read;
    match error {
        // Never reached Google: trying again is safe.
        G::Transport {
            request_sent: false,
        } => Step::retry(OFFLINE_GMAIL),
        // Google answered "slow down": it did not act on it. Wait as long as it asked.
        G::RateLimited { retry_after } => Step::rate_limited(retry_after),
        // Too large for Gmail: nothing left, and sending again would not help.
        e @ G::TooLarge { .. } => Step::refused(e.to_string()),
        // A send or a delete may have been acted on: look, never repeat blindly. A success
        // whose body could not be read was acted on, most likely (muster's path does the same).
        e @ (G::Transport { .. } | G::Server { .. } | G::UnreadableAnswer { .. })
            if changes_mailbox =>
        {
            Step::uncertain(e.to_string())
        }
        G::Transport { .. } | G::Server { .. } => Step::retry(OFFLINE_GMAIL),
        // (A delete's missing draft is a done rejection, and a first send's is gone before
        // the send: their callers never get here. After an earlier send of the same decision,
        // that send may be what took the draft: look.)
        G::NotFound { .. } if call == GmailCall::Send => {
            Step::uncertain("the draft vanished while it was being sent")
        }
        G::SignInAgain | G::Unauthorized => {
            Step::retry("sign in to Gmail again: the account's access was refused")
        }
        // The token refresh failed before the call left: it waits, queued, until the account
        // is reconnected (`record` marks the account).
        // The same for an OAuth client Google no longer knows: only a new one helps.
        e @ (G::GrantEnded | G::ClientGone) => {
            Step::retry(e.reconnect_reason().unwrap_or_default())
        }
        other if call == GmailCall::Send => {
            Step::refused(format!("Google refused to send it: {other}"))
        }
        other => Step::refused(other.to_string()),
    }
    .met(failure)
}

/// What a muster call that did not answer means for a decision: a sign-in that did not happen
/// (refused, limited, not configured, not answered) or an answer from something that is not
/// muster means the decide was never sent, so the decision waits; only a decide that left
/// without an answer is uncertain.
pub(super) fn muster_not_done(e: countersign_muster::Error, looking_up: bool) -> (Step, Timing) {
    use countersign_muster::Error as M;
    let failure = classify_muster(&e);
    let waiting = |step: Step| (step, Timing::muster_waiting(None));
    let (step, timing) = match e {
        M::RateLimited { retry_after } => {
            let wait = retry_after.unwrap_or(countersign_muster::SIGN_IN_WINDOW);
            let at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
            let local = at.with_timezone(&chrono::Local).format("%H:%M");
            let why = format!("{MUSTER_SIGN_IN_LIMITED}, next try at {local}");
            let step = if looking_up {
                Step::uncertain(why)
            } else {
                Step::retry(why)
            };
            (step, Timing::muster_waiting(Some(at)))
        }
        e @ (M::SignInAgain
        | M::WrongPassword
        | M::NotConfigured
        | M::NoPluginApi
        | M::NotMuster { .. }) => {
            if looking_up {
                waiting(Step::uncertain(e.to_string()))
            } else {
                waiting(Step::retry(e.to_string()))
            }
        }
        M::Transport {
            request_sent: false,
        } if !looking_up => waiting(Step::retry(OFFLINE_MUSTER)),
        // The decide (or the look-up) left and no readable answer came back.
        e @ (M::Transport { .. } | M::Server { .. } | M::BadResponse { .. }) => {
            (Step::uncertain(e.to_string()), Timing::muster())
        }
        // Refused unread (a 4xx that is not a decide answer): nothing happened at muster, and
        // the owner may decide again; never "send failed", which is the plugin's word.
        e => (
            Step::conflict(
                format!("muster did not take the decision ({e}): review it again"),
                ItemEvent::Conflicted,
            ),
            Timing::muster(),
        ),
    };
    (step.met(failure), timing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_gmail::Error as G;

    fn outcome(error: G, call: GmailCall) -> &'static str {
        match gmail_failure(error, call).outcome {
            DispatchOutcome::Retry(_) => "retry",
            DispatchOutcome::Uncertain(_) => "uncertain",
            DispatchOutcome::Failed(_) => "refused",
            DispatchOutcome::Conflict(_) => "conflict",
            DispatchOutcome::Done => "done",
        }
    }

    /// A read is repeated freely; a send or a delete that may have reached Google is looked at
    /// again; an account that must sign in again makes any call wait, a rejection too.
    #[test]
    fn a_failed_gmail_call_becomes_the_step_its_call_allows() {
        use GmailCall::{Delete, Read, Send};
        let server = || G::Server {
            status: 503,
            message: "backend error".into(),
        };
        let refused = || G::Refused {
            status: 400,
            reason: "invalidArgument".into(),
            message: "bad".into(),
        };
        // An error (made afresh for each call) and the step for a read, a send, a delete.
        type Case = (fn() -> G, [&'static str; 3]);
        let cases: [Case; 7] = [
            (
                || G::Transport {
                    request_sent: false,
                },
                ["retry", "retry", "retry"],
            ),
            (
                || G::Transport { request_sent: true },
                ["retry", "uncertain", "uncertain"],
            ),
            (server, ["retry", "uncertain", "uncertain"]),
            (|| G::GrantEnded, ["retry", "retry", "retry"]),
            (|| G::ClientGone, ["retry", "retry", "retry"]),
            (|| G::SignInAgain, ["retry", "retry", "retry"]),
            (refused, ["refused", "refused", "refused"]),
        ];
        for (error, expected) in cases {
            let got = [Read, Send, Delete].map(|call| outcome(error(), call));
            assert_eq!(got, expected, "{}", error());
        }
        match gmail_failure(refused(), Send).outcome {
            DispatchOutcome::Failed(why) => assert!(why.starts_with("Google refused to send it")),
            _ => unreachable!(),
        }
    }
}
