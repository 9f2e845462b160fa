//! Settings, accounts and the status bar: accounts added and removed, the settings, syncing
//! now, pausing sending and "Hold everything" (the tray's switches call the same core).

use countersign_core::store::SettingsChange;
use countersign_core::store::{Account, DecisionFilter, Settings, SyncCursor};
use countersign_core::ItemState;
use serde::Serialize;
use tauri::{AppHandle, State};

use crate::error::{UiError, UiErrorCode};
use crate::state::AppState;
use crate::tray;

use super::ACTOR;

/// An account with where its sync stands.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AccountStatus {
    /// The account.
    pub account: Account,
    /// Its sync cursor (last sync, online).
    pub cursor: SyncCursor,
}

/// What the status bar shows.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    /// Every account with its sync state.
    pub accounts: Vec<AccountStatus>,
    /// Drafts waiting for the owner.
    pub awaiting_review: u64,
    /// Decisions in the outbox.
    pub queued: u64,
    /// Whether sending is paused.
    pub paused: bool,
    /// Whether "Hold everything" is on: no rule decides.
    pub hold_everything: bool,
    /// Whether this app dispatches decisions (false when another process does).
    pub dispatching: bool,
    /// Demo mode (the UI shows a "Demo" badge).
    pub demo: bool,
    /// Every item state in the order the filter and the counts show them (core's
    /// `ItemState::ALL`; the UI keeps no copy).
    pub state_order: Vec<ItemState>,
}

/// Every account with its sync state.
#[tauri::command]
pub async fn list_accounts(state: State<'_, AppState>) -> Result<Vec<AccountStatus>, UiError> {
    account_statuses(state.store()?).await
}

/// Connect a Gmail account (Google's consent in the system browser) and start syncing it.
#[tauri::command]
pub async fn add_gmail(
    state: State<'_, AppState>,
    client_secret_path: String,
) -> Result<Account, UiError> {
    let json = std::fs::read_to_string(&client_secret_path).map_err(|e| {
        UiError::new(
            UiErrorCode::Internal,
            format!("cannot read {client_secret_path}: {e}"),
        )
    })?;
    let account = state
        .app()?
        .connect_gmail(crate::welcome::gmail_connect(json))
        .await?;
    Ok(account)
}

/// Sign in to a muster instance and start following it.
#[tauri::command]
pub async fn add_muster(
    state: State<'_, AppState>,
    url: String,
    password: String,
) -> Result<Account, UiError> {
    let account = state.app()?.connect_muster(&url, &password).await?;
    Ok(account)
}

/// Stop following an account and remove it, its secrets and everything mirrored for it.
#[tauri::command]
pub async fn remove_account(state: State<'_, AppState>, id: String) -> Result<(), UiError> {
    // Core stops the account's live task before deleting it.
    Ok(state.app()?.remove_account(&id).await?)
}

/// The owner's settings.
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> Result<Settings, UiError> {
    Ok(state.store()?.settings().await?)
}

/// Change the settings the owner changed, and only those (each on its own, so a page's older
/// copy of the others cannot undo a switch thrown elsewhere); returns them as stored.
#[tauri::command]
pub async fn save_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    change: SettingsChange,
) -> Result<Settings, UiError> {
    let settings = state.store()?.update_settings(&change, ACTOR).await?;
    tray::refresh_later(&app);
    Ok(settings)
}

/// Sync every account once, now.
#[tauri::command]
pub async fn sync_now(state: State<'_, AppState>) -> Result<(), UiError> {
    Ok(state.app()?.sync_now().await?)
}

/// Pause or resume sending; returns the settings.
#[tauri::command]
pub async fn set_paused(
    app: AppHandle,
    state: State<'_, AppState>,
    paused: bool,
) -> Result<Settings, UiError> {
    let settings = state.store()?.set_paused(paused, ACTOR).await?;
    tray::refresh_later(&app);
    Ok(settings)
}

/// What the status bar shows.
#[tauri::command]
pub async fn status(state: State<'_, AppState>) -> Result<AppStatus, UiError> {
    let store = state.store()?;
    let settings = store.settings().await?;
    Ok(AppStatus {
        accounts: account_statuses(store).await?,
        awaiting_review: store.count_awaiting_review().await?,
        queued: store.list_decisions(DecisionFilter::Live).await?.len() as u64,
        paused: settings.paused,
        hold_everything: settings.hold_everything,
        dispatching: state.app().is_ok_and(|app| app.is_dispatcher()),
        demo: state.is_demo(),
        state_order: ItemState::ALL.to_vec(),
    })
}

/// Turn "Hold everything" on (no rule decides, and rule decisions still in their undo window
/// are taken back) or off; returns the items whose rule decision was taken back.
#[tauri::command]
pub async fn set_hold_everything(
    app: AppHandle,
    state: State<'_, AppState>,
    on: bool,
) -> Result<Vec<i64>, UiError> {
    let undone = hold_everything(state.store()?, on).await?;
    // The taken-back rows and the status bar changed: the window reads everything again.
    crate::events::emit(&app, crate::events::ITEMS_CHANGED, ());
    tray::refresh_later(&app);
    Ok(undone)
}

/// [`set_hold_everything`] without the window: the tray's switch calls it too.
pub async fn hold_everything(
    store: &countersign_core::Store,
    on: bool,
) -> Result<Vec<i64>, UiError> {
    Ok(countersign_core::rules::pass::set_hold_everything(store, on, ACTOR).await?)
}

async fn account_statuses(store: &countersign_core::Store) -> Result<Vec<AccountStatus>, UiError> {
    let mut statuses = Vec::new();
    for account in store.list_accounts().await? {
        let cursor = store.sync_cursor(&account.id).await?;
        statuses.push(AccountStatus { account, cursor });
    }
    Ok(statuses)
}
