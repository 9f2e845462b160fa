//! Keeping the mirror fresh while an app runs: muster's event stream when it delivers, polling
//! when it does not ([`follow_muster`]) and a periodic Gmail sync whose cadence
//! follows whether the window is visible ([`GmailCadence`]).
//!
//! Each change is reported to a callback, which the desktop app turns into UI events and
//! notifications; nothing here polls the UI or knows about it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::error::Result;
use crate::reachability::{self, Failure};
use crate::services::Services;
use crate::store::{Account, Store};
use crate::sync::{sync_gmail_with, Listing};

mod muster;

pub use muster::{follow_muster, MusterPace, MusterPolling, MUSTER_POLLING};

/// Something that changed in the mirror or in a service's reachability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveChange {
    /// Items of this account changed.
    /// (New refusals among them are in the mirror, marked unnotified: the app tells the owner
    /// about each exactly once from there, even across a crash.)
    ItemsChanged {
        /// The account.
        account_id: String,
    },
    /// The account's service answers again, or stopped answering.
    Reachability {
        /// The account.
        account_id: String,
        /// Whether it answers.
        online: bool,
        /// Why not, in words for a status line.
        detail: Option<String>,
    },
}

/// The callback that hears about changes.
pub type OnChange = Arc<dyn Fn(LiveChange) + Send + Sync>;

/// How often Gmail is checked. Gmail offers a desktop app no push; an incremental check with no
/// change is one `history.list` (2 units): every 5 s is 24 units a minute, 0.2 % of the
/// 15,000-unit per-user quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GmailCadence {
    /// While the window is visible: a draft the agent saves shows within seconds.
    pub visible: Duration,
    /// While the window is hidden (in the tray) or minimized.
    pub hidden: Duration,
}

impl Default for GmailCadence {
    fn default() -> Self {
        GmailCadence {
            visible: Duration::from_secs(5),
            hidden: Duration::from_secs(60),
        }
    }
}

impl GmailCadence {
    /// The wait between two checks for this window state.
    pub fn every(&self, window_visible: bool) -> Duration {
        if window_visible {
            self.visible
        } else {
            self.hidden
        }
    }
}

/// Sync one Gmail account at `cadence` until `stop` turns true: every `cadence.visible` while
/// `window_visible` holds true, every `cadence.hidden` otherwise; a `poll_now` notification
/// checks at once. The first sync of the loop lists every draft (the reconciliation at start);
/// later ones list when [`crate::sync::LISTING_INTERVAL`] has passed.
///
/// An account that needs reconnecting is not read: the loop says so once and waits until the
/// account is connected again.
///
/// When Google asks for a wait longer than a call waits itself (a `Retry-After` over
/// [`countersign_gmail::retry::MAX_WAIT_IN_CALL`]), the sync returns at once, the owner is
/// told when the next check is ([`GMAIL_ASKED_TO_WAIT`], as the account's reachability detail),
/// and nothing is asked of Gmail for this account before then, "Sync now" included.
#[allow(clippy::too_many_arguments)]
pub async fn poll_gmail(
    store: Store,
    services: Services,
    account: Account,
    cadence: GmailCadence,
    mut window_visible: watch::Receiver<bool>,
    poll_now: Arc<tokio::sync::Notify>,
    on_change: OnChange,
    mut stop: watch::Receiver<bool>,
) {
    let mut online = true;
    let mut listed_at_start = false;
    let mut told_reconnect = false;
    // Google named a time to come back after (a Retry-After longer than the client waits in a
    // call): no check before it, whatever the cadence or a "Sync now" asks.
    let mut not_before: Option<tokio::time::Instant> = None;
    let mut told_wait = false;
    loop {
        let current = match store.get_account(&account.id).await {
            Ok(current) => current,
            // Removed while we slept: nothing left to follow.
            Err(crate::Error::NotFound { .. }) => return,
            Err(_) => account.clone(),
        };
        if let Some(reason) = &current.reconnect_reason {
            if !told_reconnect {
                told_reconnect = true;
                on_change(LiveChange::Reachability {
                    account_id: account.id.clone(),
                    online: false,
                    detail: Some(reason.clone()),
                });
            }
        } else {
            if told_reconnect {
                // Reconnected: say so even if the service never stopped answering.
                told_reconnect = false;
                online = false;
            }
            let listing = if listed_at_start {
                Listing::WhenDue
            } else {
                Listing::Always
            };
            // A removal waits for this task to end: a sync in progress is dropped, not finished.
            let synced = tokio::select! {
                synced = sync_account_once(&store, &services, &current, listing) => synced,
                _ = stop.changed() => return,
            };
            match synced {
                Ok(changed) => {
                    listed_at_start = true;
                    if !online || told_wait {
                        online = true;
                        told_wait = false;
                        reachability::record_answered(&store, &account.id).await;
                        on_change(LiveChange::Reachability {
                            account_id: account.id.clone(),
                            online,
                            detail: None,
                        });
                    }
                    if changed {
                        on_change(LiveChange::ItemsChanged {
                            account_id: account.id.clone(),
                        });
                    }
                }
                Err(
                    e @ crate::Error::Gmail(
                        countersign_gmail::Error::GrantEnded | countersign_gmail::Error::ClientGone,
                    ),
                ) => {
                    // The sync marked the account; the next round tells the owner once.
                    reachability::record_failure(&store, &account.id, &e).await;
                    continue;
                }
                Err(crate::Error::Gmail(countersign_gmail::Error::RateLimited {
                    retry_after: Some(wait),
                })) => {
                    // Google answered: the account is online, and asked for quiet until then.
                    not_before = Some(tokio::time::Instant::now() + wait);
                    let sentence = gmail_wait_sentence(wait);
                    if let Err(e) = store
                        .record_reachability(
                            &account.id,
                            reachability::Reach::Failed(Failure::Refused, &sentence),
                        )
                        .await
                    {
                        tracing::warn!(account = %account.id, error = %e, "cannot record a wait");
                    }
                    online = true;
                    told_wait = true;
                    on_change(LiveChange::Reachability {
                        account_id: account.id.clone(),
                        online,
                        detail: Some(sentence),
                    });
                }
                Err(e) => {
                    let unreachable = reachability::record_failure(&store, &account.id, &e).await
                        == Failure::Unreachable;
                    if unreachable && online {
                        online = false;
                        on_change(LiveChange::Reachability {
                            account_id: account.id.clone(),
                            online,
                            detail: Some(e.to_string()),
                        });
                    }
                }
            }
        }
        let checked = tokio::time::Instant::now();
        // "Sync now" checks at once, unless Google asked to wait: then it is the check at the
        // time Google named (already planned), not an earlier one.
        let may_check = || not_before.is_none_or(|t| tokio::time::Instant::now() >= t);
        loop {
            let next = checked + cadence.every(*window_visible.borrow());
            let next = not_before.map_or(next, |t| next.max(t));
            tokio::select! {
                _ = tokio::time::sleep_until(next) => break,
                _ = poll_now.notified() => if may_check() { break },
                // Shown again: the visible cadence applies from the last check at once.
                changed = window_visible.changed() => {
                    if changed.is_err() {
                        // No shell reports visibility any more: keep the last known state.
                        tokio::select! {
                            _ = tokio::time::sleep_until(next) => break,
                            _ = poll_now.notified() => if may_check() { break },
                            _ = stop.changed() => return,
                        }
                    }
                }
                _ = stop.changed() => return,
            }
        }
        not_before = None;
    }
}

/// How a Gmail sync held back by Google's retry time reads on the account's status line.
pub const GMAIL_ASKED_TO_WAIT: &str = "Gmail asked to wait: next check at";

/// "Gmail asked to wait: next check at 14:05" for a wait of `wait` from now (local time).
fn gmail_wait_sentence(wait: Duration) -> String {
    let at = chrono::Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
    format!(
        "{GMAIL_ASKED_TO_WAIT} {}",
        at.with_timezone(&chrono::Local).format("%H:%M")
    )
}

async fn sync_account_once(
    store: &Store,
    services: &Services,
    account: &Account,
    listing: Listing,
) -> Result<bool> {
    let client = services.gmail(account).await?;
    let report = sync_gmail_with(store, account, &client, listing).await?;
    Ok(report != Default::default())
}
