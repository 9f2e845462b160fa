//! The record window's commands: the history of decisions, each agent's standing and figures,
//! and the messages that left.

use countersign_core::history::{self, AgentFigures, HistoryEntry, HistoryFilter, LeftMessage};
use tauri::State;

use crate::error::UiError;
use crate::state::AppState;

/// A page of the record: decisions carried out or refused, newest first, narrowed by `filter`.
#[tauri::command]
pub async fn history_page(
    state: State<'_, AppState>,
    filter: HistoryFilter,
) -> Result<Vec<HistoryEntry>, UiError> {
    Ok(state.store()?.history(&filter).await?)
}

/// How the record stands: whether the sealed log holds, and its checkpoint (issue 35).
#[tauri::command]
pub async fn record_standing(
    state: State<'_, AppState>,
) -> Result<countersign_core::store::RecordStanding, UiError> {
    Ok(state.store()?.record_standing().await?)
}

/// Per agent figures over the whole record.
#[tauri::command]
pub async fn agent_figures(state: State<'_, AppState>) -> Result<Vec<AgentFigures>, UiError> {
    Ok(state.store()?.agent_figures().await?)
}

/// One decision of the record opened: the exact bytes it bound to (that left, for a send),
/// rendered and as source.
#[tauri::command]
pub async fn left_message(
    state: State<'_, AppState>,
    decision_id: i64,
) -> Result<LeftMessage, UiError> {
    Ok(history::left_message(state.store()?, decision_id).await?)
}
