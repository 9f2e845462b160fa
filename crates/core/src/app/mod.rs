//! The running app: the mirror, the service clients, the one dispatcher of the data directory
//! and the live syncs of every account, with one callback for everything the UI must hear
//! (items changed, an account went offline or came back, a refusal to notify).
//!
//! The desktop shell holds one [`RunningApp`] and forwards its events; it decides nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_muster::EventOptions;
use tokio::sync::watch;

use crate::decide::{self, Shown, UndoWindow};
use crate::domain::Source;
use crate::error::Result;
use crate::live::{
    follow_muster, poll_gmail, GmailCadence, LiveChange, MusterPace, MusterPolling, OnChange,
};
use crate::outbox::{DispatchConfig, Dispatcher};
use crate::services::Services;
use crate::store::{Account, Decision, Store};
use crate::sync::{sync_gmail_with, sync_muster, Listing};

mod accounts;
mod decisions;
mod events;

pub use events::{
    announce_new_drafts, rule_sends, AppEvent, ChangeCause, ItemsChanged, OnEvent, RuleSend,
};
use events::{deliver_new_drafts, deliver_refusals, deliver_rule_sends, emit_items};

/// How the running app paces itself.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// How often Gmail is synced (it has no push for desktop apps), window visible or not.
    pub gmail_cadence: GmailCadence,
    /// How often the dispatcher looks at the outbox.
    pub dispatch_tick: Duration,
    /// muster's event stream.
    pub events: EventOptions,
    /// How often muster is polled while its event stream does not deliver.
    pub muster_polling: MusterPolling,
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
            muster_polling: MusterPolling::default(),
            dispatch: DispatchConfig::default(),
            defer_syncs: false,
        }
    }
}

/// A started app.
pub struct RunningApp {
    store: Store,
    services: Services,
    data_dir: PathBuf,
    options: AppOptions,
    on_event: OnEvent,
    viewing: Arc<Mutex<Option<i64>>>,
    stop: watch::Sender<bool>,
    /// This process holds the dispatcher lock (it may get it later than at start: see
    /// [`RunningApp::is_dispatcher`]).
    dispatching: Arc<std::sync::atomic::AtomicBool>,
    /// Whether the owner can be looking: the window is visible and the owner not idle.
    window_visible: watch::Sender<bool>,
    /// The window is shown and not minimized (the shell says).
    shown: std::sync::atomic::AtomicBool,
    /// No key or pointer input in the window for a while (the UI says).
    idle: std::sync::atomic::AtomicBool,
    poll_gmail_now: Arc<tokio::sync::Notify>,
    /// The live task of every followed account, by account id.
    followed: Mutex<HashMap<String, Following>>,
    /// [`RunningApp::start_syncs`] ran.
    syncs_started: std::sync::atomic::AtomicBool,
    /// Passes of the dispatch loop finished; closed when the loop has ended.
    dispatch_passes: watch::Receiver<u64>,
}

/// One account's live task (Gmail poll or muster event stream) and its own stop switch.
struct Following {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RunningApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningApp")
            .field("data_dir", &self.data_dir)
            .field("dispatching", &self.is_dispatcher())
            .finish_non_exhaustive()
    }
}

impl RunningApp {
    /// Start the dispatcher (at once when no other process is the dispatcher of `data_dir`,
    /// otherwise as soon as that process lets go) and, unless `options.defer_syncs`, the live
    /// sync of every account.
    pub async fn start(
        store: Store,
        services: Services,
        data_dir: &Path,
        options: AppOptions,
        on_event: OnEvent,
    ) -> Result<RunningApp> {
        let (stop, _) = watch::channel(false);
        let (passes, dispatch_passes) = watch::channel(0);
        let app = RunningApp {
            store,
            services,
            data_dir: data_dir.to_path_buf(),
            options,
            on_event,
            viewing: Arc::default(),
            stop,
            dispatching: Arc::default(),
            // Until the shell says otherwise (a headless app has no window to hide).
            window_visible: watch::channel(true).0,
            shown: std::sync::atomic::AtomicBool::new(true),
            idle: std::sync::atomic::AtomicBool::new(false),
            poll_gmail_now: Arc::default(),
            followed: Mutex::default(),
            syncs_started: std::sync::atomic::AtomicBool::new(false),
            dispatch_passes,
        };
        app.start_dispatcher(passes).await?;
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

    /// The service clients.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Whether this process is the dispatcher now (false while the CLI or another app is). The
    /// app tries again on every dispatch tick and, when it becomes the dispatcher, says so with
    /// [`AppEvent::DispatcherRole`].
    pub fn is_dispatcher(&self) -> bool {
        self.dispatching.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The owner is looking at `item_id` (or at nothing): a refusal of the item in view, or its
    /// send by a rule, is not notified — the owner sees it already.
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
            let result = match account.profile.kind {
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
                tracing::warn!(account = %account.id, error = %e, "sync failed");
                crate::reachability::record_failure(&self.store, &account.id, &e).await;
            }
        }
        (self.on_event)(AppEvent::ItemsChanged(ItemsChanged::unknown(
            ChangeCause::Synced,
            None,
        )));
        deliver_refusals(&self.store, &self.viewing, &self.on_event).await;
        Ok(())
    }

    /// The number of passes the dispatch loop has finished (each one tried the dispatcher lock
    /// or dispatched), to wait on: a pass finished after an action proves the loop saw it. The
    /// channel closes once the loop has ended (after [`RunningApp::stop`]), so nothing this app
    /// dispatches can start after that.
    pub fn dispatch_passes(&self) -> watch::Receiver<u64> {
        self.dispatch_passes.clone()
    }

    /// Stop every task.
    pub fn stop(&self) {
        self.stop.send_replace(true);
        for following in self
            .followed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            following.stop.send_replace(true);
        }
    }

    fn change_handler(&self) -> OnChange {
        let on_event = self.on_event.clone();
        let store = self.store.clone();
        let viewing = self.viewing.clone();
        Arc::new(move |change: LiveChange| {
            match change {
                LiveChange::ItemsChanged { account_id, .. } => on_event(AppEvent::ItemsChanged(
                    ItemsChanged::unknown(ChangeCause::Synced, Some(account_id)),
                )),
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

    /// Try to become the dispatcher now (an error opening the lock file fails the start), then
    /// run the dispatch loop: while another process (`countersign dispatch`, another app) holds
    /// the lock, every tick tries again, so decisions go out as soon as it lets go.
    async fn start_dispatcher(&self, passes: watch::Sender<u64>) -> Result<()> {
        let acquire = {
            let store = self.store.clone();
            let services = self.services.clone();
            let data_dir = self.data_dir.clone();
            let config = self.options.dispatch;
            move || {
                let (store, services, data_dir) =
                    (store.clone(), services.clone(), data_dir.clone());
                async move { Dispatcher::acquire(store, services, &data_dir, config).await }
            }
        };
        let mut dispatcher = acquire().await?;
        self.dispatching
            .store(dispatcher.is_some(), std::sync::atomic::Ordering::SeqCst);
        if dispatcher.is_none() {
            tracing::info!("another process dispatches this data directory; trying every tick");
        }
        let dispatching = self.dispatching.clone();
        let mut stop = self.stop.subscribe();
        let tick = self.options.dispatch_tick;
        let store = self.store.clone();
        let viewing = self.viewing.clone();
        let on_event = self.on_event.clone();
        tokio::spawn(async move {
            loop {
                if dispatcher.is_none() {
                    match acquire().await {
                        Ok(Some(acquired)) => {
                            tracing::info!("the other dispatcher let go: this app dispatches now");
                            dispatcher = Some(acquired);
                            dispatching.store(true, std::sync::atomic::Ordering::SeqCst);
                            on_event(AppEvent::DispatcherRole { dispatcher: true });
                        }
                        Ok(None) => {}
                        Err(e) => tracing::warn!(error = %e, "cannot try the dispatcher lock"),
                    }
                }
                if let Some(dispatcher) = &dispatcher {
                    match dispatcher.run_once().await {
                        Ok(report) => {
                            // A rule's decision shows in the queue at once ("approved by rule
                            // R — sending in 8 s"), even when nothing was dispatched yet.
                            let decided: Vec<i64> = report
                                .rules
                                .decided
                                .iter()
                                .map(|(decision, _)| decision.item_id)
                                .collect();
                            if !report.rules.judged.is_empty() {
                                on_event(AppEvent::RulesJudged {
                                    items: report.rules.judged.clone(),
                                });
                            }
                            if !decided.is_empty() {
                                emit_items(&store, &on_event, ChangeCause::RulesDecided, decided)
                                    .await;
                            }
                            if !report.attempts.is_empty() {
                                let item_ids =
                                    report.attempts.iter().map(|a| a.decision.item_id).collect();
                                emit_items(&store, &on_event, ChangeCause::Dispatched, item_ids)
                                    .await;
                                deliver_refusals(&store, &viewing, &on_event).await;
                                deliver_rule_sends(&store, &report, &viewing, &on_event).await;
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "dispatch pass failed"),
                    }
                }
                passes.send_modify(|n| *n += 1);
                tokio::select! {
                    _ = tokio::time::sleep(tick) => {}
                    _ = stop.changed() => return,
                }
            }
        });
        Ok(())
    }
}

impl Drop for RunningApp {
    fn drop(&mut self) {
        self.stop();
    }
}
