//! Errors of the muster client.
//!
//! muster answers errors as `{"error": "…"}` (plus `code` on the `decide` conflicts, which are
//! not errors here but [`DecideOutcome`](crate::DecideOutcome)s). No variant ever carries the
//! password or the session cookie: messages are muster's `error` texts or sentences written
//! here, and transport errors keep only whether the request may have left.

use std::time::Duration;

/// Result of every fallible call in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong talking to a muster instance.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The network failed. `request_sent: false` only when the connection was never made
    /// (refused, DNS failure, connect timeout), so muster cannot have acted on it; otherwise the
    /// outcome is unknown and a decision must be reconciled by re-reading the draft.
    #[error("cannot reach muster ({})", if *request_sent { "the request may have been received" } else { "the request was not sent" })]
    Transport {
        /// Whether muster may have acted on the request. `false` also when only the sign-in
        /// before it (or after muster refused it unread) failed on the network.
        request_sent: bool,
    },
    /// The session cookie was refused, one silent re-login with the stored password did not
    /// help, and the client stays signed out until [`MusterClient::login`](crate::MusterClient::login)
    /// succeeds (usually: the password changed on muster).
    #[error("sign in to muster again")]
    SignInAgain,
    /// `POST /login` answered 401.
    #[error("cannot sign in to muster: wrong password")]
    WrongPassword,
    /// `POST /login` answered 429 (muster allows 10 attempts a minute).
    #[error("cannot sign in to muster: too many attempts, try again in a minute")]
    RateLimited {
        /// The wait muster asked for, when it sent `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// `POST /login` answered 503: the instance has no owner password configured.
    #[error("cannot sign in to muster: this instance has no owner password configured")]
    NotConfigured,
    /// 404: the draft (or other resource) does not exist.
    #[error("cannot find {what} in muster")]
    NotFound {
        /// What was looked for, e.g. `draft 42`.
        what: String,
    },
    /// muster answered something this client cannot read: malformed or incomplete JSON, an
    /// unknown state, a missing cookie.
    #[error("cannot read muster's answer to {endpoint}: {problem}")]
    BadResponse {
        /// The call, e.g. `GET /api/plugin/drafts`.
        endpoint: String,
        /// What was wrong, naming the field when one was missing or invalid.
        problem: String,
    },
    /// Any other error status.
    #[error("cannot complete {endpoint}: muster answered {status}: {message}")]
    Server {
        /// The call, e.g. `GET /api/plugin/routes`.
        endpoint: String,
        /// HTTP status.
        status: u16,
        /// muster's `error` text, or the status reason when there was none.
        message: String,
    },
    /// The base URL cannot address a muster instance.
    #[error("cannot use {url:?} as a muster URL: {problem}")]
    InvalidUrl {
        /// The URL as given, without any password it contained.
        url: String,
        /// Why it is unusable.
        problem: String,
    },
}

impl Error {
    /// Whether the same call may simply be tried again later (network, 5xx, 429).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport { .. } | Error::RateLimited { .. } => true,
            Error::Server { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// Whether the request certainly never reached muster (safe to send again, even a decision).
    pub fn request_not_sent(&self) -> bool {
        matches!(
            self,
            Error::Transport {
                request_sent: false
            }
        )
    }

    pub(crate) fn transport(e: &reqwest::Error) -> Self {
        // reqwest's is_connect() covers refused connections, DNS failures and connect
        // timeouts: in each the request never left this machine.
        Error::Transport {
            request_sent: !e.is_connect(),
        }
    }

    pub(crate) fn bad(endpoint: &str, problem: impl Into<String>) -> Self {
        Error::BadResponse {
            endpoint: endpoint.to_owned(),
            problem: problem.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_start_with_cannot_except_the_sign_in_prompt() {
        let errors = [
            Error::Transport { request_sent: true },
            Error::WrongPassword,
            Error::RateLimited { retry_after: None },
            Error::NotConfigured,
            Error::NotFound {
                what: "draft 4".into(),
            },
            Error::bad("GET /x", "missing field `id`"),
        ];
        for e in errors {
            assert!(e.to_string().starts_with("cannot "), "{e}");
        }
        assert_eq!(Error::SignInAgain.to_string(), "sign in to muster again");
    }

    #[test]
    fn only_a_refused_connection_counts_as_not_sent() {
        assert!(Error::Transport {
            request_sent: false
        }
        .request_not_sent());
        assert!(!Error::Transport { request_sent: true }.request_not_sent());
    }
}
