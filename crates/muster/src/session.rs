//! Keeping the `muster_session` cookie between processes and pacing sign-ins with them.
//!
//! muster signs the cookie (HMAC over the operator password) and lets it live 30 days, across
//! muster restarts, until the password changes (muster `internal/api/auth.go`: `sessionTTL`,
//! `uiSessionSecret`). Its `POST /login` allows 10 attempts per minute for every caller
//! together, successful ones included (`internal/api/login.go`: `loginRateBurst`,
//! `loginRateWindow`). So a client reuses a kept cookie, signs in only when muster answers 401,
//! and asks a [`SessionKeeper`] — shared by every process on the machine — before each sign-in.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// muster's sign-in budget: attempts per window, for all callers together.
pub const SIGN_INS_PER_WINDOW: usize = 10;
/// muster's sign-in window.
pub const SIGN_IN_WINDOW: Duration = Duration::from_secs(60);

/// Where a client keeps its session cookie and how it paces sign-ins with other clients of the
/// same instance. Implementations must never log the cookie.
pub trait SessionKeeper: Send + Sync {
    /// The cookie last kept by any client of this instance, if any.
    fn load(&self) -> Option<String>;
    /// Keep a new cookie.
    fn save(&self, cookie: &str);
    /// Ask leave to post `/login` now. `Err(wait)`: the budget is used up (or muster said 429)
    /// and no one may try for `wait`; nothing must be sent.
    fn reserve_sign_in(&self, now: SystemTime) -> Result<(), Duration>;
    /// muster answered 429 at `now`: no client may try before `now + wait`.
    fn sign_in_refused(&self, now: SystemTime, wait: Duration);
}

/// The paced record of sign-ins: times of recent attempts and a "not before" after a 429.
/// Any 60 s span then holds at most [`SIGN_INS_PER_WINDOW`] of them, so muster's fixed window,
/// wherever it starts, does too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignInRecord {
    /// Attempts in the last window, oldest first.
    pub attempts: VecDeque<SystemTime>,
    /// No attempt before this (set by a 429).
    pub not_before: Option<SystemTime>,
}

impl SignInRecord {
    /// Reserve one attempt at `now`, or say how long to wait.
    pub fn reserve(&mut self, now: SystemTime) -> Result<(), Duration> {
        if let Some(wait) = self
            .not_before
            .and_then(|t| t.duration_since(now).ok())
            .filter(|w| !w.is_zero())
        {
            return Err(wait);
        }
        while let Some(first) = self.attempts.front() {
            match now.duration_since(*first) {
                Ok(age) if age >= SIGN_IN_WINDOW => {
                    self.attempts.pop_front();
                }
                _ => break,
            }
        }
        if self.attempts.len() >= SIGN_INS_PER_WINDOW {
            let first = self.attempts.front().copied().unwrap_or(now);
            let age = now.duration_since(first).unwrap_or_default();
            return Err(SIGN_IN_WINDOW
                .saturating_sub(age)
                .max(Duration::from_secs(1)));
        }
        self.attempts.push_back(now);
        Ok(())
    }

    /// muster said 429 at `now`.
    pub fn refused(&mut self, now: SystemTime, wait: Duration) {
        let until = now + wait;
        if self.not_before.is_none_or(|t| t < until) {
            self.not_before = Some(until);
        }
    }
}

/// A keeper for one process only: the cookie in memory, the pacing record in memory.
#[derive(Debug, Default)]
pub struct MemorySessionKeeper {
    cookie: Mutex<Option<String>>,
    record: Mutex<SignInRecord>,
}

impl SessionKeeper for MemorySessionKeeper {
    fn load(&self) -> Option<String> {
        self.cookie
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn save(&self, cookie: &str) {
        *self.cookie.lock().unwrap_or_else(|e| e.into_inner()) = Some(cookie.to_owned());
    }

    fn reserve_sign_in(&self, now: SystemTime) -> Result<(), Duration> {
        self.record
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reserve(now)
    }

    fn sign_in_refused(&self, now: SystemTime, wait: Duration) {
        self.record
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .refused(now, wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eleventh_sign_in_within_a_minute_waits_for_the_first_to_age_out() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut record = SignInRecord::default();
        for i in 0..10 {
            record.reserve(start + Duration::from_secs(i)).unwrap();
        }
        let wait = record.reserve(start + Duration::from_secs(20)).unwrap_err();
        assert_eq!(wait, Duration::from_secs(40));
        record.reserve(start + Duration::from_secs(60)).unwrap();
    }

    #[test]
    fn a_refusal_holds_everyone_back_until_its_time() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut record = SignInRecord::default();
        record.refused(now, Duration::from_secs(60));
        assert_eq!(
            record.reserve(now + Duration::from_secs(15)).unwrap_err(),
            Duration::from_secs(45)
        );
        record.reserve(now + Duration::from_secs(60)).unwrap();
    }
}
