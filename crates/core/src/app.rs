//! The running app: the mirror, the service clients, the one dispatcher of the data directory
//! and the live syncs of every account, with one callback for everything the UI must hear
//! (items changed, an account went offline or came back, a refusal to notify).
//!
//! The desktop shell holds one [`RunningApp`] and forwards its events; it decides nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_muster::EventOptions;
use serde::Serialize;
use tokio::sync::watch;

use crate::domain::Source;
use crate::error::Result;
use crate::live::{follow_muster, poll_gmail, GmailCadence, LiveChange, OnChange};
use crate::outbox::{DispatchConfig, DispatchReport, Dispatcher};
use crate::services::Services;
use crate::store::{Account, ItemSummary, Refusal, Store};
use crate::sync::{sync_gmail_with, sync_muster, Listing};

/// How the running app paces itself.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// How often Gmail is synced (it has no push for desktop apps), window visible or not.
    pub gmail_cadence: GmailCadence,
    /// How often the dispatcher looks at the outbox.
    pub dispatch_tick: Duration,
    /// muster's event stream.
    pub events: EventOptions,
    /// The dispatcher's backoff.
    pub dispatch: DispatchConfig,
    /// Accounts are synced only once [`RunningApp::start_syncs`] is called (the desktop calls
    /// it when its window has painted the queue from the mirror), not at start.
    pub defer_syncs: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions {
            gmail_cadence: GmailCadence::default(),
            dispatch_tick: Duration::from_millis(250),
            events: EventOptions::default(),
            dispatch: DispatchConfig::default(),
            defer_syncs: false,
        }
    }
}

/// What the UI must hear about.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum AppEvent {
    /// Items changed: reload the queue (and the open item).
    ItemsChanged,
    /// An account's service stopped or started answering.
    Reachability {
        /// The account.
        account_id: String,
        /// Whether it answers.
        online: bool,
        /// Why not.
        detail: Option<String>,
    },
    /// Drafts arrived that await review: one notification "N new drafts to review" per burst
    /// (only when the owner turned these notifications on).
    NewDrafts {
        /// How many.
        count: usize,
    },
    /// A refusal the owner must be told about (a notification).
    Refusal {
        /// The refusal.
        refusal: Refusal,
        /// The item it is about.
        item: Box<ItemSummary>,
    },
}

/// The callback that hears [`AppEvent`]s.
pub type OnEvent = Arc<dyn Fn(AppEvent) + Send + Sync>;

/// A started app.
pub struct RunningApp {
    store: Store,
    services: Services,
    data_dir: PathBuf,
    options: AppOptions,
    on_event: OnEvent,
    viewing: Arc<Mutex<Option<i64>>>,
    stop: watch::Sender<bool>,
    dispatching: bool,
    /// Whether the owner can be looking: the window is visible and the owner not idle.
    window_visible: watch::Sender<bool>,
    /// The window is shown and not minimized (the shell says).
    shown: std::sync::atomic::AtomicBool,
    /// No key or pointer input in the window for a while (the UI says).
    idle: std::sync::atomic::AtomicBool,
    poll_gmail_now: Arc<tokio::sync::Notify>,
    followed_gmail: Mutex<HashSet<String>>,
    /// [`RunningApp::start_syncs`] ran.
    syncs_started: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for RunningApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningApp")
            .field("data_dir", &self.data_dir)
            .field("dispatching", &self.dispatching)
            .finish_non_exhaustive()
    }
}

impl RunningApp {
    /// Start the dispatcher (when no other process is the dispatcher of `data_dir`) and, unless
    /// `options.defer_syncs`, the live sync of every account.
    pub async fn start(
        store: Store,
        services: Services,
        data_dir: &Path,
        options: AppOptions,
        on_event: OnEvent,
    ) -> Result<RunningApp> {
        let (stop, _) = watch::channel(false);
        let mut app = RunningApp {
            store,
            services,
            data_dir: data_dir.to_path_buf(),
            options,
            on_event,
            viewing: Arc::default(),
            stop,
            dispatching: false,
            // Until the shell says otherwise (a headless app has no window to hide).
            window_visible: watch::channel(true).0,
            shown: std::sync::atomic::AtomicBool::new(true),
            idle: std::sync::atomic::AtomicBool::new(false),
            poll_gmail_now: Arc::default(),
            followed_gmail: Mutex::default(),
            syncs_started: std::sync::atomic::AtomicBool::new(false),
        };
        app.dispatching = app.start_dispatcher().await?;
        if !app.options.defer_syncs {
            app.start_syncs().await?;
        }
        Ok(app)
    }

    /// Start the live sync of every account (once; later calls do nothing). Called by
    /// [`RunningApp::start`] unless [`AppOptions::defer_syncs`] is set.
    pub async fn start_syncs(&self) -> Result<()> {
        if self
            .syncs_started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Ok(());
        }
        for account in self.store.list_accounts().await? {
            self.follow(account);
        }
        Ok(())
    }

    /// The mirror.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The service clients.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Whether this process is the dispatcher (false when the CLI or another app already is).
    pub fn is_dispatcher(&self) -> bool {
        self.dispatching
    }

    /// Start following an account that was just connected. A Gmail account followed already
    /// (reconnected) is checked at once by its running loop.
    pub fn follow(&self, account: Account) {
        let on_change = self.change_handler();
        let stop = self.stop.subscribe();
        let store = self.store.clone();
        match account.kind {
            Source::Gmail => {
                let new = self
                    .followed_gmail
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(account.id.clone());
                if !new {
                    self.poll_gmail_now.notify_waiters();
                    return;
                }
                tokio::spawn(poll_gmail(
                    store,
                    self.services.clone(),
                    account,
                    self.options.gmail_cadence,
                    self.window_visible.subscribe(),
                    self.poll_gmail_now.clone(),
                    on_change,
                    stop,
                ));
            }
            Source::Muster => {
                let services = self.services.clone();
                let options = self.options.events.clone();
                tokio::spawn(async move {
                    match services.muster(&account).await {
                        Ok(client) => {
                            follow_muster(store, account, client, options, on_change, stop).await
                        }
                        Err(e) => {
                            tracing::warn!(account = %account.id, error = %e, "cannot follow muster")
                        }
                    }
                });
            }
        }
    }

    /// The owner is looking at `item_id` (or at nothing): a refusal of the item in view is not
    /// notified — the owner sees it already.
    pub fn set_viewing(&self, item_id: Option<i64>) {
        *self.viewing.lock().unwrap_or_else(|e| e.into_inner()) = item_id;
    }

    /// Whether the main window is visible (shown and not minimized): Gmail is then checked every
    /// `gmail_cadence.visible`, otherwise every `gmail_cadence.hidden`. Becoming visible checks at
    /// once when the last check is older than the visible cadence.
    pub fn set_window_visible(&self, visible: bool) {
        self.shown
            .store(visible, std::sync::atomic::Ordering::SeqCst);
        self.update_cadence();
    }

    /// Whether the owner is idle (no key or pointer input in the window for a while): an idle
    /// owner is treated like a hidden window (Gmail checked every `gmail_cadence.hidden`);
    /// coming back checks at once when the last check is older than the visible cadence.
    pub fn set_owner_idle(&self, idle: bool) {
        self.idle.store(idle, std::sync::atomic::Ordering::SeqCst);
        self.update_cadence();
    }

    fn update_cadence(&self) {
        let looking = self.shown.load(std::sync::atomic::Ordering::SeqCst)
            && !self.idle.load(std::sync::atomic::Ordering::SeqCst);
        self.window_visible.send_if_modified(|current| {
            let changed = *current != looking;
            *current = looking;
            changed
        });
    }

    /// Sync every account once, now (listing every Gmail draft: the owner asked).
    pub async fn sync_now(&self) -> Result<()> {
        for account in self.store.list_accounts().await? {
            let result = match account.kind {
                Source::Gmail => match self.services.gmail(&account).await {
                    Ok(client) => sync_gmail_with(&self.store, &account, &client, Listing::Always)
                        .await
                        .map(drop),
                    Err(e) => Err(e),
                },
                Source::Muster => match self.services.muster(&account).await {
                    Ok(client) => sync_muster(&self.store, &account, &client).await.map(drop),
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = result {
                let _ = self
                    .store
                    .record_sync_failure(&account.id, &e.to_string(), false)
                    .await;
            }
        }
        (self.on_event)(AppEvent::ItemsChanged);
        deliver_refusals(&self.store, &self.viewing, &self.on_event).await;
        Ok(())
    }

    /// Stop every task.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    fn change_handler(&self) -> OnChange {
        let on_event = self.on_event.clone();
        let store = self.store.clone();
        let viewing = self.viewing.clone();
        Arc::new(move |change: LiveChange| {
            match change {
                LiveChange::ItemsChanged { .. } => on_event(AppEvent::ItemsChanged),
                LiveChange::Reachability {
                    account_id,
                    online,
                    detail,
                } => on_event(AppEvent::Reachability {
                    account_id,
                    online,
                    detail,
                }),
            }
            let store = store.clone();
            let viewing = viewing.clone();
            let on_event = on_event.clone();
            tokio::spawn(async move {
                deliver_new_drafts(&store, &on_event).await;
                deliver_refusals(&store, &viewing, &on_event).await;
            });
        })
    }

    async fn start_dispatcher(&self) -> Result<bool> {
        let Some(dispatcher) = Dispatcher::acquire(
            self.store.clone(),
            self.services.clone(),
            &self.data_dir,
            self.options.dispatch,
        )
        .await?
        else {
            tracing::info!("another process dispatches this data directory");
            return Ok(false);
        };
        let mut stop = self.stop.subscribe();
        let tick = self.options.dispatch_tick;
        let store = self.store.clone();
        let viewing = self.viewing.clone();
        let on_event = self.on_event.clone();
        tokio::spawn(async move {
            let mut last_live = usize::MAX;
            loop {
                match dispatcher.run_once().await {
                    Ok(report) => {
                        let live = store
                            .list_decisions(crate::store::DecisionFilter::Live)
                            .await
                            .map(|d| d.len())
                            .unwrap_or(0);
                        if changed(&report) || live != last_live {
                            on_event(AppEvent::ItemsChanged);
                            deliver_refusals(&store, &viewing, &on_event).await;
                        }
                        last_live = live;
                    }
                    Err(e) => tracing::warn!(error = %e, "dispatch pass failed"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(tick) => {}
                    _ = stop.changed() => return,
                }
            }
        });
        Ok(true)
    }
}

impl Drop for RunningApp {
    fn drop(&mut self) {
        self.stop();
    }
}

fn changed(report: &DispatchReport) -> bool {
    !(report.done.is_empty()
        && report.conflicts.is_empty()
        && report.failed.is_empty()
        && report.uncertain.is_empty()
        && report.retrying.is_empty())
}

/// Tell the owner, once per burst, how many new drafts await review.
async fn deliver_new_drafts(store: &Store, on_event: &OnEvent) {
    match announce_new_drafts(store).await {
        Ok(Some(count)) => on_event(AppEvent::NewDrafts { count }),
        Ok(None) => {}
        Err(error) => tracing::warn!(error = %error, "cannot count the new drafts"),
    }
}

/// How many drafts became reviewable since the last call, when the owner wants to hear about
/// them (`Settings::new_draft_notifications`); `None` when there are none or they are not
/// wanted. Every call marks them told either way, so turning the setting on later does not
/// announce old drafts.
pub async fn announce_new_drafts(store: &Store) -> Result<Option<usize>> {
    let count = store.take_unannounced_drafts().await?;
    let wanted = store.settings().await?.new_draft_notifications;
    Ok((wanted && count > 0).then_some(count))
}

/// Tell the owner about each refusal once: as an event (a notification), unless they are
/// looking at that item already or have turned notifications off.
async fn deliver_refusals(store: &Store, viewing: &Mutex<Option<i64>>, on_event: &OnEvent) {
    let Ok(refusals) = store.unnotified_refusals().await else {
        return;
    };
    let notify = store
        .settings()
        .await
        .map(|s| s.notifications)
        .unwrap_or(true);
    for refusal in refusals {
        // Mark first: a crash between the two must not notify twice.
        if !matches!(store.mark_refusal_notified(refusal.id).await, Ok(true)) {
            continue;
        }
        let in_view = *viewing.lock().unwrap_or_else(|e| e.into_inner()) == Some(refusal.item_id);
        if !notify || in_view {
            continue;
        }
        let Ok(item) = store.get_item(refusal.item_id).await else {
            continue;
        };
        on_event(AppEvent::Refusal {
            refusal,
            item: Box::new(item.summary),
        });
    }
}
