//! "Is this account online?": the one place a failure is classified (the service did not
//! answer, answered with a refusal, or the trouble is on this computer) and the one shape the
//! store records it in ([`crate::store::Store::record_reachability`]). The syncs (CLI, desktop,
//! live loops) and the dispatcher all go through here, so an account is shown offline for the
//! same reasons whichever of them met the failure.

use crate::error::Error;
use crate::store::Store;

/// Where a failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The service did not answer, or answered that it cannot serve now (5xx, a proxy in front
    /// of muster answering for it): the account is offline; decisions wait, nothing is lost.
    Unreachable,
    /// The service answered and refused (401/403/404/4xx, a sign-in that is needed, an answer
    /// it cannot parse): it is online, and the owner may have to act.
    Refused,
    /// Something on this computer failed (the mirror, a file, a token store): says nothing
    /// about the service.
    Local,
}

/// Classify `error` (from any call to Gmail or muster, or from the mirror).
pub fn classify(error: &Error) -> Failure {
    match error {
        Error::Gmail(e) => classify_gmail(e),
        Error::Muster(e) => classify_muster(e),
        Error::CorruptMirror { .. }
        | Error::DataDir { .. }
        | Error::SaveFile { .. }
        | Error::Encode { .. }
        | Error::TaskFailed { .. }
        | Error::Migrate { .. }
        | Error::Database(_)
        | Error::Corrupt(_)
        | Error::NotFound { .. }
        | Error::Refused { .. }
        | Error::ChangedSinceShown { .. }
        | Error::EditOvertaken { .. }
        | Error::NotShown { .. }
        | Error::NeedsConfirmation { .. }
        | Error::Autostart { .. } => Failure::Local,
    }
}

/// [`classify`] for an error of the Gmail client.
pub fn classify_gmail(error: &countersign_gmail::Error) -> Failure {
    use countersign_gmail::Error as G;
    match error {
        // A 5xx is Google saying it cannot serve now (`backendError`): as good as no answer.
        G::Transport { .. } | G::Server { .. } => Failure::Unreachable,
        G::TokenStorage { .. } | G::ClientSecret { .. } => Failure::Local,
        _ => Failure::Refused,
    }
}

/// [`classify`] for an error of the muster client.
pub fn classify_muster(error: &countersign_muster::Error) -> Failure {
    use countersign_muster::Error as M;
    match error {
        M::Transport { .. } => Failure::Unreachable,
        // Something in front of muster answered for it (a proxy's 502, a login page).
        M::NotMuster { .. } => Failure::Unreachable,
        M::Server { status, .. } if *status >= 500 => Failure::Unreachable,
        M::InvalidUrl { .. } => Failure::Local,
        _ => Failure::Refused,
    }
}

/// What the last call to an account's service found, as the store records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach<'a> {
    /// It answered (and did what was asked).
    Answered,
    /// It failed: where, and the sentence for the status line.
    Failed(Failure, &'a str),
}

impl<'a> Reach<'a> {
    /// The reach of `error`, with `sentence` (usually `error.to_string()`) as what to show.
    pub fn of(error: &Error, sentence: &'a str) -> Reach<'a> {
        Reach::Failed(classify(error), sentence)
    }

    /// Whether the account counts as online after this (a local failure: `None`, unknown).
    pub fn online(self) -> Option<bool> {
        match self {
            Reach::Answered => Some(true),
            Reach::Failed(Failure::Unreachable, _) => Some(false),
            Reach::Failed(Failure::Refused, _) => Some(true),
            Reach::Failed(Failure::Local, _) => None,
        }
    }
}

/// What muster's stream says when its session ended and the password is needed again.
pub const MUSTER_SIGN_IN_AGAIN: &str = "sign in to muster again";

/// Classify `error`, met on a call for `account_id`, and record it: what every caller does with
/// a failed sync. A failure to record is logged (the sync's own error is what the caller
/// reports). Returns the classification.
pub async fn record_failure(store: &Store, account_id: &str, error: &Error) -> Failure {
    let sentence = error.to_string();
    let failure = classify(error);
    if let Err(e) = store
        .record_reachability(account_id, Reach::Failed(failure, &sentence))
        .await
    {
        tracing::warn!(account = %account_id, error = %e, "cannot record a failed call");
    }
    failure
}

/// Record that the account's service answered (see [`record_failure`]).
pub async fn record_answered(store: &Store, account_id: &str) {
    if let Err(e) = store.record_reachability(account_id, Reach::Answered).await {
        tracing::warn!(account = %account_id, error = %e, "cannot record an answered call");
    }
}
