//! When and how long to wait before retrying a read.
//!
//! Google asks clients to retry 429 and 5xx answers with exponential backoff and jitter
//! (<https://developers.google.com/gmail/api/guides/handle-errors#exponential-backoff>). Only
//! reads are retried here: a send or delete whose outcome is unknown must be reconciled by the
//! caller, never repeated blindly.

use std::time::Duration;

use rand::Rng;

use crate::error::Error;

/// Backoff settings for reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts of one read, the first included (1 = never retry).
    pub max_attempts: u32,
    /// Wait before the first retry; doubled for every further one.
    pub initial_backoff: Duration,
    /// Upper bound of one wait (a longer retry time from Google is still honoured).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(32),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// How long to wait after `attempt` (1-based) failed with `error`, or `None` to give up.
    pub fn delay_after(&self, attempt: u32, error: &Error) -> Option<Duration> {
        if attempt >= self.max_attempts || !error.is_retryable() {
            return None;
        }
        let exponent = attempt.saturating_sub(1).min(16);
        let backoff = self
            .initial_backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        // Full jitter on half of the backoff: spread retries of parallel reads apart while
        // still growing the wait.
        let half = backoff / 2;
        let jitter = if half.is_zero() {
            Duration::ZERO
        } else {
            rand::thread_rng().gen_range(Duration::ZERO..=half)
        };
        let wait = half + jitter;
        Some(match error.retry_after() {
            Some(asked) => wait.max(asked),
            None => wait,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error() -> Error {
        Error::Server {
            status: 503,
            message: "The service is currently unavailable.".into(),
        }
    }

    #[test]
    fn waits_grow_exponentially_up_to_the_bound() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        let first = policy.delay_after(1, &server_error()).unwrap();
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        let fourth = policy.delay_after(4, &server_error()).unwrap();
        assert!(fourth >= Duration::from_millis(400) && fourth <= Duration::from_millis(800));
        let ninth = policy.delay_after(9, &server_error()).unwrap();
        assert!(ninth <= Duration::from_millis(1000));
    }

    #[test]
    fn a_retry_time_from_google_is_honoured() {
        let policy = RetryPolicy::default();
        let limited = Error::RateLimited {
            retry_after: Some(Duration::from_secs(5)),
        };
        assert!(policy.delay_after(1, &limited).unwrap() >= Duration::from_secs(5));
    }

    #[test]
    fn not_found_and_missing_scope_are_never_retried() {
        let policy = RetryPolicy::default();
        let missing = Error::NotFound {
            message: "Requested entity was not found.".into(),
        };
        assert_eq!(policy.delay_after(1, &missing), None);
        assert_eq!(
            policy.delay_after(1, &Error::InsufficientScope { needed: vec![] }),
            None
        );
    }

    #[test]
    fn the_last_attempt_gives_up() {
        let policy = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        assert!(policy.delay_after(2, &server_error()).is_some());
        assert_eq!(policy.delay_after(3, &server_error()), None);
    }
}
