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
    /// `POST /login` answered 429 (muster allows 10 attempts a minute for all callers
    /// together), or the shared record of this machine's sign-ins says that minute is used up
    /// and nothing was sent. Either way the call itself never reached muster.
    #[error("cannot sign in to muster: its sign-in limit is reached, try again in a minute")]
    RateLimited {
        /// How long to wait: muster's `Retry-After`, or what the shared record says.
        retry_after: Option<Duration>,
    },
    /// muster's web sign-in is not configured: `POST /login` answered 503 (no
    /// `MUSTER_UI_PASSWORD`, or one under 12 characters), or an API route answered 503
    /// `{"error": "… (MUSTER_UI_PASSWORD)"}` (muster `internal/api/auth.go`, `requireSession`).
    #[error("cannot sign in to muster: its web sign-in is not configured (MUSTER_UI_PASSWORD)")]
    NotConfigured,
    /// An owner-API route answered Go's plain-text `404 page not found`: the routes do not
    /// exist there (a muster too old for plugin drafts, or not muster at all). Never "gone".
    #[error("cannot use this muster: it has no plugin-draft API (too old, or not muster)")]
    NoPluginApi,
    /// A redirect, or a 401/403 that is not muster's JSON: something in front of muster (a
    /// proxy or a login page) answered, so signing in to muster would not help.
    #[error("cannot reach muster's API: something in front of muster answered ({status}; a proxy or login page)")]
    NotMuster {
        /// The status that answered.
        status: u16,
    },
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
            Error::NoPluginApi,
            Error::NotMuster { status: 302 },
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
