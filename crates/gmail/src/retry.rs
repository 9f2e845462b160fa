//! When and how long to wait before retrying a read.
//!
//! Google asks clients to retry 429 and 5xx answers with exponential backoff and jitter
//! (<https://developers.google.com/gmail/api/guides/handle-errors#exponential-backoff>). Only
//! reads are retried here: a send or delete whose outcome is unknown must be reconciled by the
//! caller, never repeated blindly.
//!
//! Google's own retry time ("Retry after <time>") is waited inside the call only up to
//! [`MAX_WAIT_IN_CALL`]; a longer one ends the call with `RateLimited { retry_after }` at once,
//! and the caller schedules the next try (a send's decision, a sync's next check) instead of
//! holding a sync or a dispatch pass for minutes.

use std::time::Duration;

use backon::ExponentialBuilder;

use crate::error::Error;

/// The longest retry time from Google a call waits itself: 30 s.
///
/// Gmail's per-user limit is a budget per minute, so a time asked for the per-user rate is
/// within a minute and mostly seconds; waiting that long keeps the call simple for its caller.
/// Anything longer is a different limit (sending limits name hours) and would hold a sync
/// round or a dispatch pass — and every account and decision behind it — for that long, so it
/// goes back to the caller. 30 s rather than 60 s: half the whole-request timeout of a small
/// call, so a call never waits longer for Google's permission than it would for its answer.
pub const MAX_WAIT_IN_CALL: Duration = Duration::from_secs(30);

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

    /// The waits between attempts as a `backon` backoff: the n-th wait lies between half and
    /// all of `initial_backoff · 2^(n-1)`, capped at `max_backoff`.
    ///
    /// backon's jitter adds up to the whole current delay again (`d` becomes `d..=2d`), so the
    /// delays it doubles are half of ours: the spread keeps parallel reads apart while the wait
    /// still grows.
    pub fn backoff(&self) -> ExponentialBuilder {
        let retries = self.max_attempts.saturating_sub(1) as usize;
        ExponentialBuilder::default()
            .with_min_delay(self.initial_backoff.min(self.max_backoff) / 2)
            .with_max_delay(self.max_backoff / 2)
            .with_factor(2.0)
            .with_jitter()
            .with_max_times(retries)
    }

    /// The wait before retrying after `error`, given backon's next `wait` (`None` once the
    /// attempts are used up): Google's own retry time wins when it is longer, and one longer
    /// than [`MAX_WAIT_IN_CALL`] ends the call (`None`) with that error.
    pub(crate) fn wait_after(error: &Error, wait: Option<Duration>) -> Option<Duration> {
        let wait = wait?;
        match error.retry_after() {
            Some(asked) if asked > MAX_WAIT_IN_CALL => None,
            Some(asked) => Some(wait.max(asked)),
            None => Some(wait),
        }
    }
}

#[cfg(test)]
mod tests {
    use backon::BackoffBuilder;

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
        for _ in 0..50 {
            let waits: Vec<Duration> = policy.backoff().build().collect();
            assert_eq!(waits.len(), 9, "one wait between each two of 10 attempts");
            let first = waits[0];
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let fourth = waits[3];
            assert!(fourth >= Duration::from_millis(400) && fourth <= Duration::from_millis(800));
            assert!(waits.iter().all(|w| *w <= Duration::from_millis(1000)));
            assert!(waits[8] >= Duration::from_millis(500));
        }
    }

    #[test]
    fn a_retry_time_from_google_is_honoured() {
        let limited = Error::RateLimited {
            retry_after: Some(Duration::from_secs(5)),
        };
        let wait = RetryPolicy::wait_after(&limited, Some(Duration::from_millis(100)));
        assert_eq!(wait, Some(Duration::from_secs(5)));
        let short = RetryPolicy::wait_after(&server_error(), Some(Duration::from_millis(100)));
        assert_eq!(short, Some(Duration::from_millis(100)));
    }

    #[test]
    fn a_retry_time_longer_than_the_cap_ends_the_call() {
        let at_cap = Error::RateLimited {
            retry_after: Some(MAX_WAIT_IN_CALL),
        };
        assert_eq!(
            RetryPolicy::wait_after(&at_cap, Some(Duration::from_millis(100))),
            Some(MAX_WAIT_IN_CALL)
        );
        let fifteen_minutes = Error::RateLimited {
            retry_after: Some(Duration::from_secs(15 * 60)),
        };
        assert_eq!(
            RetryPolicy::wait_after(&fifteen_minutes, Some(Duration::from_millis(100))),
            None
        );
    }

    #[test]
    fn not_found_and_missing_scope_are_never_retried() {
        let missing = Error::NotFound {
            message: "Requested entity was not found.".into(),
        };
        assert!(!missing.is_retryable());
        assert!(!Error::InsufficientScope { needed: vec![] }.is_retryable());
        assert!(server_error().is_retryable());
    }

    #[test]
    fn the_last_attempt_gives_up() {
        let policy = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        assert_eq!(policy.backoff().build().count(), 2);
        assert_eq!(RetryPolicy::never().backoff().build().count(), 0);
        assert_eq!(RetryPolicy::wait_after(&server_error(), None), None);
    }
}
