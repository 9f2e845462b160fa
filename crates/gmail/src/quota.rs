//! Per-account quota limiter: keeps a client under Gmail's per-user rate instead of being
//! throttled into errors.
//!
//! Gmail allows 15,000 quota units per user per minute, about 250 units per second, and each
//! method costs a fixed number of units
//! (<https://developers.google.com/gmail/api/reference/quota>). The limiter is a token bucket
//! refilling at the configured rate; a call waits until its units are available, it never
//! fails.
//!
//! The bucket holds only half a second of units although Google tolerates a one-second burst:
//! requests reach Google with varying latency, so two calls spaced exactly right here can
//! arrive closer together there. Keeping the burst smaller than Google's leaves that jitter room
//! without lowering the sustained rate.
//!
//! The bucket keeps Tokio's clock (`tokio::time::Instant`, the monotonic clock unless a test
//! pauses time), so tests can check the waits in virtual time instead of timing the machine.

use std::time::Duration;

use tokio::time::Instant;

use tokio::sync::Mutex;

/// Gmail's per-user rate, in units per second.
pub const DEFAULT_UNITS_PER_SECOND: u32 = 250;

/// The Gmail methods this client calls, each with its quota cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `users.drafts.list`
    DraftsList,
    /// `users.drafts.get`
    DraftsGet,
    /// `users.drafts.send`
    DraftsSend,
    /// `users.drafts.delete`
    DraftsDelete,
    /// `users.drafts.update`
    DraftsUpdate,
    /// `users.messages.list`
    MessagesList,
    /// `users.messages.get`
    MessagesGet,
    /// `users.history.list`
    HistoryList,
    /// `users.getProfile`
    GetProfile,
    /// `users.threads.get`
    ThreadsGet,
    /// `users.labels.list`
    LabelsList,
}

impl Method {
    /// Quota units of one call, from Google's quota table.
    pub fn units(self) -> u32 {
        match self {
            Method::DraftsList | Method::DraftsGet => 5,
            Method::DraftsSend => 100,
            Method::DraftsDelete => 10,
            Method::DraftsUpdate => 15,
            Method::MessagesList | Method::MessagesGet => 5,
            Method::HistoryList => 2,
            Method::GetProfile => 1,
            Method::ThreadsGet => 10,
            // The quota table: labels.list costs 1 unit.
            Method::LabelsList => 1,
        }
    }

    /// Google's name of the method, e.g. `drafts.get`.
    pub fn name(self) -> &'static str {
        match self {
            Method::DraftsList => "drafts.list",
            Method::DraftsGet => "drafts.get",
            Method::DraftsSend => "drafts.send",
            Method::DraftsDelete => "drafts.delete",
            Method::DraftsUpdate => "drafts.update",
            Method::MessagesList => "messages.list",
            Method::MessagesGet => "messages.get",
            Method::HistoryList => "history.list",
            Method::GetProfile => "getProfile",
            Method::ThreadsGet => "threads.get",
            Method::LabelsList => "labels.list",
        }
    }

    /// Whether the call only reads (and so may be retried inside the client).
    pub fn is_read(self) -> bool {
        !matches!(
            self,
            Method::DraftsSend | Method::DraftsDelete | Method::DraftsUpdate
        )
    }
}

/// A token bucket of quota units shared by every call made for one account.
#[derive(Debug)]
pub struct QuotaLimiter {
    units_per_second: f64,
    capacity: f64,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    available: f64,
    updated: Instant,
}

impl QuotaLimiter {
    /// A limiter allowing `units_per_second` (at least 1), starting with a full bucket.
    pub fn new(units_per_second: u32) -> Self {
        let rate = f64::from(units_per_second.max(1));
        let capacity = (rate / 2.0).max(1.0);
        QuotaLimiter {
            units_per_second: rate,
            capacity,
            state: Mutex::new(Bucket {
                available: capacity,
                updated: Instant::now(),
            }),
        }
    }

    /// The configured rate.
    pub fn units_per_second(&self) -> u32 {
        self.units_per_second as u32
    }

    /// Wait until `method`'s units are available, then take them.
    pub async fn acquire(&self, method: Method) {
        self.acquire_units(method.units()).await;
    }

    /// Wait until `units` are available, then take them.
    pub async fn acquire_units(&self, units: u32) {
        // A call costing more than the bucket holds (drafts.send at a small configured rate)
        // would wait forever; it is allowed once the bucket is full instead.
        let units = f64::from(units).min(self.capacity);
        // The lock is held while sleeping so waiting calls are served in order and a burst
        // cannot overtake: fairness matters more than parallel waiting here.
        let mut bucket = self.state.lock().await;
        loop {
            let now = Instant::now();
            let elapsed = now.duration_since(bucket.updated).as_secs_f64();
            bucket.available =
                (bucket.available + elapsed * self.units_per_second).min(self.capacity);
            bucket.updated = now;
            if bucket.available >= units {
                bucket.available -= units;
                return;
            }
            let missing = units - bucket.available;
            tokio::time::sleep(Duration::from_secs_f64(missing / self.units_per_second)).await;
        }
    }
}

impl Default for QuotaLimiter {
    fn default() -> Self {
        QuotaLimiter::new(DEFAULT_UNITS_PER_SECOND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How long `calls` `drafts.get` calls (5 units each) wait through a fresh limiter of
    /// `units_per_second`, in Tokio's clock (virtual time when the test pauses it).
    async fn time_to_acquire(units_per_second: u32, calls: usize) -> Duration {
        let limiter = QuotaLimiter::new(units_per_second);
        let start = Instant::now();
        for _ in 0..calls {
            limiter.acquire(Method::DraftsGet).await;
        }
        start.elapsed()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_beyond_the_bucket_is_spread_at_the_configured_rate() {
        // 30 calls are 150 units at 100 units/s. The bucket holds half a second (50 units), so
        // the other 100 units take exactly one second to refill: the 20 calls beyond the bucket
        // wait 50 ms each for their 5 units.
        assert_eq!(time_to_acquire(100, 30).await, Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn calls_within_the_bucket_do_not_wait() {
        // 25 calls are 125 units, exactly the bucket at 250 units/s.
        assert_eq!(time_to_acquire(250, 25).await, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_call_beyond_the_bucket_waits_for_its_own_units_only() {
        // The bucket at 100 units/s holds 50 units: ten calls of 5. The eleventh waits for its
        // 5 units, 50 ms, and not for a whole refill.
        assert_eq!(time_to_acquire(100, 11).await, Duration::from_millis(50));
    }

    #[test]
    fn sends_cost_twenty_times_a_read() {
        assert_eq!(Method::DraftsSend.units(), 20 * Method::DraftsGet.units());
        assert_eq!(Method::HistoryList.units(), 2);
    }
}
