//! The queue's commands: pages of the list, the owner's selection and what it is looking at,
//! and the bulk decisions taken on a selection.

use countersign_core::decide::{BulkOutcome, Listed};
use countersign_core::selection::{self, SelectionSummary};
use countersign_core::store::{PageStart, QueuePage, StateCounts};
use countersign_core::{ItemFilter, ItemState, ItemSummary, Source};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, State};

use crate::error::{UiError, UiErrorCode};
use crate::state::AppState;
use crate::tray;

use super::ACTOR;

/// The queue filter the UI sends (every field optional).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueFilter {
    /// Only these states (empty: all).
    pub states: Vec<ItemState>,
    /// Only this account.
    pub account_id: Option<String>,
    /// Only this source.
    pub source: Option<Source>,
    /// Only items with this in the subject, sender or recipients (`queue_page` only).
    pub text: Option<String>,
}

/// The most rows one `queue_page` answers: a few screens, never the whole queue.
const MAX_PAGE: u32 = 500;

/// A page of the queue with what the list shows around it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    /// The rows, their start position and the filtered total.
    #[serde(flatten)]
    pub page: QueuePage,
    /// Items per state for the account/source filter (what the state filter offers).
    pub counts: StateCounts,
    /// The three queued items due soonest (the status bar's countdowns).
    pub soonest_queued: Vec<ItemSummary>,
    /// Where the item asked for with `locate` is in the filtered list (`null`: not in it).
    pub located: Option<u64>,
}

/// The queue: items matching `filter`, pending first.
#[tauri::command]
pub async fn list_items(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
) -> Result<Vec<ItemSummary>, UiError> {
    let filter = filter.unwrap_or_default();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    Ok(state.store()?.list_items(&filter).await?)
}

/// One page of the queue (`limit` rows at most, from `start`), narrowed by `filter`, with the
/// counts per state and where item `locate` is: the window holds the rows in view and a
/// margin, never the whole list.
#[tauri::command]
pub async fn queue_page(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
    start: PageStart,
    limit: u32,
    locate: Option<i64>,
) -> Result<QueueView, UiError> {
    if limit == 0 || limit > MAX_PAGE {
        return Err(UiError::new(
            UiErrorCode::Internal,
            format!("cannot read a page of {limit} rows: ask for 1 to {MAX_PAGE}"),
        ));
    }
    if let Some(id) = locate {
        hold_refresh_for_tests(id).await;
    }
    let filter = filter.unwrap_or_default();
    let text = filter.text.clone();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    let store = state.store()?;
    Ok(QueueView {
        page: store
            .queue_page(&filter, text.as_deref(), &start, limit)
            .await?,
        counts: store.state_counts(&filter).await?,
        soonest_queued: store.soonest_queued(&filter, 3).await?,
        located: match locate {
            Some(id) => store.queue_position(&filter, text.as_deref(), id).await?,
            None => None,
        },
    })
}

/// Debug builds only: with `COUNTERSIGN_TEST_REFRESH_GATE` naming a file, a page that locates
/// the selection (the UI reading its queue again after a change) waits while that file exists,
/// having added a line with the item it locates to `<file>.waiting`; the end-to-end suite holds
/// a refresh open this way and presses keys meanwhile.
async fn hold_refresh_for_tests(locate: i64) {
    #[cfg(debug_assertions)]
    if let Some(gate) = std::env::var_os("COUNTERSIGN_TEST_REFRESH_GATE") {
        use std::io::Write as _;
        let gate = std::path::PathBuf::from(gate);
        if gate.exists() {
            let waiting = gate.with_extension("waiting");
            let marked = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&waiting)
                .and_then(|mut file| writeln!(file, "{locate}"));
            if let Err(e) = marked {
                tracing::warn!("cannot mark the held refresh at {}: {e}", waiting.display());
            }
            while gate.exists() {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = locate;
}

/// The window painted its first queue (from the mirror): the syncs start now, so contacting
/// the accounts never delays the first paint. Later calls do nothing.
#[tauri::command]
pub async fn painted(state: State<'_, AppState>) -> Result<(), UiError> {
    let app = state.app()?;
    tracing::info!("the window painted its first queue: starting the syncs");
    Ok(app.start_syncs().await?)
}

/// The owner went idle (no key or pointer input for a while) or came back: Gmail is checked
/// as for a hidden window while idle.
#[tauri::command]
pub fn set_idle(state: State<'_, AppState>, idle: bool) -> Result<(), UiError> {
    state.app()?.set_owner_idle(idle);
    Ok(())
}

/// The item the owner looks at (none: `null`); its refusals are not notified.
#[tauri::command]
pub fn set_viewing(
    app: AppHandle,
    state: State<'_, AppState>,
    id: Option<i64>,
) -> Result<(), UiError> {
    state.app()?.set_viewing(id);
    if let Some(id) = id {
        tray::mark_read(&app, id);
    }
    Ok(())
}

/// Every item the queue shows under `filter` (its id and the version its row shows), in list
/// order: "select all shown by this filter", without reading the rows.
#[tauri::command]
pub async fn queue_selection(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
) -> Result<Vec<Listed>, UiError> {
    let filter = filter.unwrap_or_default();
    let text = filter.text.clone();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    Ok(state
        .store()?
        .queue_listing(&filter, text.as_deref())
        .await?)
}

/// How many drafts are selected, from which accounts and to whom (each at the version its row
/// showed): what the confirmation of a bulk decision lists.
#[tauri::command]
pub async fn selection_summary(
    state: State<'_, AppState>,
    items: Vec<Listed>,
) -> Result<SelectionSummary, UiError> {
    Ok(selection::summarize(state.store()?, &items).await?)
}

/// Reject the drafts selected with one reason, each at the version its row showed; one that
/// changed since is skipped (named, with why), never rejected at its new version.
#[tauri::command]
pub async fn reject_all(
    state: State<'_, AppState>,
    items: Vec<Listed>,
    reason: String,
) -> Result<BulkOutcome, UiError> {
    Ok(state
        .app()?
        .reject_all_listed(&items, &reason, ACTOR)
        .await?)
}

/// Approve those of the drafts selected whose current version the owner displayed, each at
/// that version; the others (never displayed, changed since, with cautions) are skipped and
/// named.
#[tauri::command]
pub async fn approve_all_displayed(
    state: State<'_, AppState>,
    ids: Vec<i64>,
) -> Result<BulkOutcome, UiError> {
    Ok(state.app()?.approve_all_displayed(&ids, ACTOR).await?)
}
