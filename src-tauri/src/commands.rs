//! The Tauri commands the UI calls. Each is a few lines over `countersign-core`: take the
//! managed state, call core, turn its error into a [`UiError`]. Logic belongs in core.
//!
//! Every command listed here must also be listed in `build.rs` (to get an `allow-…`
//! permission) and granted in `capabilities/main.json`, or the UI's call is refused.

use countersign_core::{ItemFilter, ItemSummary};
use tauri::State;

use crate::error::UiError;
use crate::state::AppState;

/// The queue: every item in the mirror, pending first.
#[tauri::command]
pub async fn list_items(state: State<'_, AppState>) -> Result<Vec<ItemSummary>, UiError> {
    Ok(state.store()?.list_items(&ItemFilter::default()).await?)
}
