//! Following one muster account: a sync at start, muster's event stream while it delivers, and
//! polling whenever it does not.
//!
//! Anything between the app and muster can break Server-Sent Events while muster's API answers
//! (a proxy's HTML page with 200, a 502, headers held back): the stream only makes changes
//! arrive faster, it is never the only way in. So:
//! - the account is synced at start and after a wake from sleep, whatever the stream does;
//! - while the stream is not delivering, muster is polled every [`MusterPolling::visible`]
//!   (window visible) or [`MusterPolling::hidden`] (in the tray), jittered, backing off while
//!   muster does not answer;
//! - the status is "live" (the stream delivers), "polling" (it does not, the API answers) or
//!   "offline" (the API does not answer): a stream closed by a proxy after a silence is
//!   reconnected quietly, and is "polling" only if it stays down until the next poll is due;
//! - the re-sync after a reconnect and the polls read what changed
//!   ([`MusterScope::Changed`]); a full sync runs at least every [`EventOptions::resync_every`].

use std::time::{Duration, SystemTime};

use countersign_muster::{EventOptions, MusterClient, MusterEvent};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{LiveChange, OnChange};
use crate::error::Result;
use crate::reachability::{self, Failure, Reach, MUSTER_SIGN_IN_AGAIN};
use crate::store::{Account, Delivery, Store};
use crate::sync::muster::{apply_event, sync_muster_scoped, MusterScope, MusterSyncReport};

/// How often muster is polled while its event stream does not deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MusterPolling {
    /// While the owner can be looking (window visible, not idle).
    pub visible: Duration,
    /// While the window is in the tray, minimized, or the owner idle.
    pub hidden: Duration,
    /// The longest wait between two polls that muster did not answer (each doubles the wait).
    pub max_backoff: Duration,
}

impl Default for MusterPolling {
    fn default() -> Self {
        MusterPolling {
            visible: Duration::from_secs(30),
            hidden: Duration::from_secs(3 * 60),
            max_backoff: Duration::from_secs(10 * 60),
        }
    }
}

impl MusterPolling {
    /// The wait before the next poll: the cadence for the window's state, doubled for each
    /// poll in a row that muster did not answer (capped), jittered into its upper fifth so that
    /// many apps do not poll one muster in step.
    pub fn wait(&self, window_visible: bool, failures: u32) -> Duration {
        let base = if window_visible {
            self.visible
        } else {
            self.hidden
        };
        let backed_off = base
            .checked_mul(1u32 << failures.min(16))
            .unwrap_or(self.max_backoff);
        let wait = if failures == 0 {
            base
        } else {
            backed_off.min(self.max_backoff.max(base))
        };
        // A v4 UUID is 122 random bits: enough randomness for a jitter, without a new crate.
        let permille = (uuid::Uuid::new_v4().as_u128() % 1000) as u32;
        wait - wait * permille / 5000
    }
}

/// How one muster account is followed: its event stream and its polling.
#[derive(Clone, Debug, Default)]
pub struct MusterPace {
    /// muster's event stream.
    pub events: EventOptions,
    /// The polling while the stream does not deliver.
    pub polling: MusterPolling,
}

/// The status line of a muster account that is polled because its stream does not deliver.
pub const MUSTER_POLLING: &str = "polling: muster's event stream does not deliver";

/// How long the wall clock may run ahead of the monotonic one between two looks before it
/// counts as a sleep of the computer (the monotonic clock stops while it sleeps).
const WAKE_SLACK: Duration = Duration::from_secs(10);

/// How often the loop looks for a wake from sleep.
const WAKE_CHECK: Duration = Duration::from_secs(15);

/// What the owner was last told about the account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Told {
    /// It answers; changes arrive this way (`None`: not known yet, the stream was not tried).
    Answered(Option<Delivery>),
    Offline,
}

/// Follow one muster account until `stop` turns true (or its session cannot be renewed): sync
/// at start, then apply the event stream while it delivers and poll while it does not.
#[allow(clippy::too_many_arguments)]
pub async fn follow_muster(
    store: Store,
    account: Account,
    client: MusterClient,
    pace: MusterPace,
    mut window_visible: watch::Receiver<bool>,
    on_change: OnChange,
    mut stop: watch::Receiver<bool>,
) {
    let mut follow = Follow {
        store,
        account,
        client,
        on_change,
        told: None,
        last_full: None,
    };
    let mut events = follow.client.events(pace.events.clone());
    let resync_every = pace.events.resync_every;
    let mut stream_up = false;
    // The stream was tried and is down: a poll then means "polling" (before, at start, the
    // stream may simply not have connected yet).
    let mut stream_down = false;
    let mut failures = 0u32;
    // The sync at start.
    let mut next_poll = Instant::now();
    let mut last_poll = Instant::now();
    let mut visibility_known = true;
    let mut wake = tokio::time::interval(WAKE_CHECK);
    let mut wall = (SystemTime::now(), Instant::now());
    loop {
        let step = tokio::select! {
            event = events.recv() => Step::Event(event),
            _ = tokio::time::sleep_until(next_poll), if !stream_up => Step::Poll,
            changed = window_visible.changed(), if visibility_known => {
                visibility_known = changed.is_ok();
                Step::Visibility
            }
            _ = wake.tick() => Step::WakeCheck,
            _ = stop.changed() => Step::Stop,
        };
        let visible = *window_visible.borrow();
        match step {
            Step::Stop => break,
            Step::Visibility => {
                // Shown again: the visible cadence applies from the last poll at once.
                if failures == 0 {
                    next_poll = last_poll + follow_wait(&pace.polling, visible, 0);
                }
            }
            Step::WakeCheck => {
                let (then_wall, then_mono) = wall;
                wall = (SystemTime::now(), Instant::now());
                let wall_elapsed = wall.0.duration_since(then_wall).unwrap_or_default();
                if wall_elapsed > wall.1.duration_since(then_mono) + WAKE_SLACK {
                    tracing::info!(account = %follow.account.id, "woke from sleep; syncing muster");
                    let delivery = if stream_up {
                        Some(Delivery::Live)
                    } else {
                        stream_down.then_some(Delivery::Polling)
                    };
                    let synced = tokio::select! {
                        synced = follow.sync(MusterScope::Full) => synced,
                        _ = stop.changed() => break,
                    };
                    if follow.settle(synced, delivery).await.is_err() {
                        break;
                    }
                }
            }
            Step::Poll => {
                let scope = follow.scope(resync_every);
                let synced = tokio::select! {
                    synced = follow.sync(scope) => synced,
                    _ = stop.changed() => break,
                };
                last_poll = Instant::now();
                match follow
                    .settle(synced, stream_down.then_some(Delivery::Polling))
                    .await
                {
                    Err(SignInAgain) => break,
                    Ok(true) => failures = 0,
                    Ok(false) => failures = failures.saturating_add(1),
                }
                next_poll = last_poll + follow_wait(&pace.polling, visible, failures);
            }
            Step::Event(None) => break,
            Step::Event(Some(event)) => {
                let synced = match &event {
                    MusterEvent::Disconnected { reason } => {
                        // Not an outage yet: a proxy closes a silent stream, and it comes back
                        // at once. Polling takes over if it stays down until the poll is due.
                        tracing::debug!(account = %follow.account.id, %reason, "muster stream down");
                        stream_up = false;
                        stream_down = true;
                        failures = 0;
                        last_poll = Instant::now();
                        next_poll = last_poll + follow_wait(&pace.polling, visible, 0);
                        continue;
                    }
                    MusterEvent::SignInAgain => {
                        follow.sign_in_again().await;
                        break;
                    }
                    MusterEvent::Connected => {
                        stream_up = true;
                        stream_down = false;
                        let scope = follow.scope(resync_every);
                        tokio::select! {
                            synced = follow.sync(scope) => synced,
                            _ = stop.changed() => break,
                        }
                    }
                    MusterEvent::Resync => tokio::select! {
                        synced = follow.sync(MusterScope::Full) => synced,
                        _ = stop.changed() => break,
                    },
                    MusterEvent::DraftChanged { .. } | MusterEvent::RouteChanged { .. } => {
                        // A removal waits for this task to end: a sync in progress is dropped.
                        let applied = tokio::select! {
                            applied = apply_event(&follow.store, &follow.account, &follow.client, &event) => applied,
                            _ = stop.changed() => break,
                        };
                        applied.map(Option::unwrap_or_default)
                    }
                };
                let delivery = stream_up.then_some(Delivery::Live);
                if let Err(SignInAgain) = follow.settle(synced, delivery).await {
                    break;
                }
            }
        }
    }
    // No app follows it any more: the status must not keep saying "live".
    if let Err(e) = follow.store.record_delivery(&follow.account.id, None).await {
        tracing::debug!(account = %follow.account.id, error = %e, "cannot clear the delivery");
    }
}

fn follow_wait(polling: &MusterPolling, visible: bool, failures: u32) -> Duration {
    polling.wait(visible, failures)
}

enum Step {
    Event(Option<MusterEvent>),
    Poll,
    Visibility,
    WakeCheck,
    Stop,
}

/// The session cannot be renewed: following ends (a new password follows the account anew).
struct SignInAgain;

struct Follow {
    store: Store,
    account: Account,
    client: MusterClient,
    on_change: OnChange,
    told: Option<Told>,
    last_full: Option<Instant>,
}

impl Follow {
    /// A full sync when none ran for `resync_every` (a route can change with no draft
    /// changing), else what changed.
    fn scope(&self, resync_every: Duration) -> MusterScope {
        match self.last_full {
            Some(at) if at.elapsed() < resync_every => MusterScope::Changed,
            _ => MusterScope::Full,
        }
    }

    async fn sync(&mut self, scope: MusterScope) -> Result<MusterSyncReport> {
        let report = sync_muster_scoped(&self.store, &self.account, &self.client, scope).await?;
        if scope == MusterScope::Full {
            self.last_full = Some(Instant::now());
        }
        Ok(report)
    }

    /// Tell what a sync found: the items changed, and the status when it is not what the owner
    /// was last told. `delivery` is how changes arrive now (`None`: as before). Returns whether
    /// muster answered.
    async fn settle(
        &mut self,
        synced: Result<MusterSyncReport>,
        delivery: Option<Delivery>,
    ) -> std::result::Result<bool, SignInAgain> {
        let id = self.account.id.clone();
        match synced {
            Ok(_report) => {
                let delivery = delivery.or(match self.told {
                    Some(Told::Answered(d)) => d,
                    _ => None,
                });
                if self.told != Some(Told::Answered(delivery)) {
                    self.told = Some(Told::Answered(delivery));
                    reachability::record_answered(&self.store, &id).await;
                    if let Err(e) = self.store.record_delivery(&id, delivery).await {
                        tracing::warn!(account = %id, error = %e, "cannot record the delivery");
                    }
                    (self.on_change)(LiveChange::Reachability {
                        account_id: id.clone(),
                        online: true,
                        detail: (delivery == Some(Delivery::Polling))
                            .then(|| MUSTER_POLLING.to_string()),
                    });
                }
                (self.on_change)(LiveChange::ItemsChanged { account_id: id });
                Ok(true)
            }
            Err(crate::Error::Muster(
                countersign_muster::Error::SignInAgain | countersign_muster::Error::WrongPassword,
            )) => {
                self.sign_in_again().await;
                Err(SignInAgain)
            }
            Err(e) => {
                tracing::warn!(account = %id, error = %e, "muster sync failed");
                let failure = reachability::record_failure(&self.store, &id, &e).await;
                if failure == Failure::Unreachable {
                    if self.told != Some(Told::Offline) {
                        self.told = Some(Told::Offline);
                        (self.on_change)(LiveChange::Reachability {
                            account_id: id,
                            online: false,
                            detail: Some(e.to_string()),
                        });
                    }
                    return Ok(false);
                }
                // muster answered, with a refusal: it is not offline.
                Ok(true)
            }
        }
    }

    /// The session was refused and the silent sign-in did not help: say so once and stop
    /// (muster allows 10 sign-ins a minute; polling would spend them).
    async fn sign_in_again(&mut self) {
        let id = &self.account.id;
        if let Err(e) = self
            .store
            .record_reachability(id, Reach::Failed(Failure::Refused, MUSTER_SIGN_IN_AGAIN))
            .await
        {
            tracing::warn!(account = %id, error = %e, "cannot record the refused session");
        }
        (self.on_change)(LiveChange::Reachability {
            account_id: id.clone(),
            online: true,
            detail: Some(MUSTER_SIGN_IN_AGAIN.to_string()),
        });
    }
}
