//! Keeping the mirror fresh while an app runs: muster's event stream (a full re-sync after every
//! (re)connect, targeted re-fetches on change events) and a periodic Gmail sync.
//!
//! Each change is reported to a callback, which the desktop app turns into UI events and
//! notifications; nothing here polls the UI or knows about it.

use std::sync::Arc;
use std::time::Duration;

use countersign_muster::{EventOptions, MusterClient, MusterEvent};
use serde::Serialize;
use tokio::sync::watch;

use crate::error::Result;
use crate::services::Services;
use crate::store::{Account, Refusal, Store};
use crate::sync::{muster::apply_event, sync_gmail};

/// Something that changed in the mirror or in a service's reachability.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum LiveChange {
    /// Items of this account changed.
    ItemsChanged {
        /// The account.
        account_id: String,
        /// New refusals to tell the owner about.
        new_refusals: Vec<Refusal>,
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

/// Follow one muster account's event stream until `stop` turns true.
pub async fn follow_muster(
    store: Store,
    account: Account,
    client: MusterClient,
    options: EventOptions,
    on_change: OnChange,
    mut stop: watch::Receiver<bool>,
) {
    let mut events = client.events(options);
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = stop.changed() => return,
        };
        let Some(event) = event else {
            return;
        };
        match apply_event(&store, &account, &client, &event).await {
            Ok(Some(report)) => {
                if matches!(event, MusterEvent::Connected) {
                    let _ = store.set_account_online(&account.id, true, None).await;
                    on_change(LiveChange::Reachability {
                        account_id: account.id.clone(),
                        online: true,
                        detail: None,
                    });
                }
                on_change(LiveChange::ItemsChanged {
                    account_id: account.id.clone(),
                    new_refusals: report.new_refusals,
                });
            }
            Ok(None) => {
                let detail = match &event {
                    MusterEvent::Disconnected { reason } => reason.clone(),
                    _ => "sign in to muster again".into(),
                };
                on_change(LiveChange::Reachability {
                    account_id: account.id.clone(),
                    online: false,
                    detail: Some(detail),
                });
            }
            Err(e) => {
                tracing::warn!(account = %account.id, error = %e, "muster sync failed");
                let _ = store
                    .record_sync_failure(&account.id, &e.to_string(), true)
                    .await;
            }
        }
    }
}

/// Sync one Gmail account every `every` until `stop` turns true (Gmail offers no push to a
/// desktop app; an incremental sync with no changes costs one request).
pub async fn poll_gmail(
    store: Store,
    services: Services,
    account: Account,
    every: Duration,
    on_change: OnChange,
    mut stop: watch::Receiver<bool>,
) {
    let mut online = true;
    loop {
        match sync_account_once(&store, &services, &account).await {
            Ok(changed) => {
                if !online {
                    online = true;
                    let _ = store.set_account_online(&account.id, true, None).await;
                    on_change(LiveChange::Reachability {
                        account_id: account.id.clone(),
                        online,
                        detail: None,
                    });
                }
                if changed {
                    on_change(LiveChange::ItemsChanged {
                        account_id: account.id.clone(),
                        new_refusals: vec![],
                    });
                }
            }
            Err(e) => {
                let unreachable = matches!(
                    &e,
                    crate::Error::Gmail(countersign_gmail::Error::Transport { .. })
                        | crate::Error::Gmail(countersign_gmail::Error::Server { .. })
                );
                let _ = store
                    .record_sync_failure(&account.id, &e.to_string(), !unreachable)
                    .await;
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
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => return,
        }
    }
}

async fn sync_account_once(store: &Store, services: &Services, account: &Account) -> Result<bool> {
    let client = services.gmail(account).await?;
    let report = sync_gmail(store, account, &client).await?;
    Ok(report != Default::default())
}
