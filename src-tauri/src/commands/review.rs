//! The review pane's commands: one draft's detail, deciding and editing it, and its source,
//! reveal and attachments.

use base64::Engine;
use countersign_core::decide::{Confirmation, Shown, PRESET_REJECT_REASONS};
use countersign_core::render::{AttachmentMeta, AttachmentPreview};
use countersign_core::review::{self, ReviewDetail};
use countersign_core::store::Decision;
use countersign_core::store::ShownPart;
use serde::Serialize;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use crate::dialog::{chosen_path, Chooser};
use crate::error::{UiError, UiErrorCode};
use crate::state::AppState;
use crate::tray;

use super::ACTOR;

/// An attachment as the preview pane shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentView {
    /// File name, type, size, digest.
    pub meta: AttachmentMeta,
    /// What can be shown safely.
    pub preview: AttachmentPreview,
    /// The bytes, base64, for pdf.js — only when `preview.kind` is `pdf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf_base64: Option<String>,
}

/// Where an attachment was saved.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SavedAttachment {
    /// The file the owner chose.
    pub path: String,
    /// Bytes written.
    pub bytes: u64,
}

/// Everything the detail pane shows for one item; the owner is now looking at it.
#[tauri::command]
pub async fn get_review(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
    load_remote: bool,
    since: Option<String>,
) -> Result<ReviewDetail, UiError> {
    // In view from the moment it is asked for: a `set_viewing(null)` the UI sends after this
    // call (the owner moved on while the detail loaded) must win over it, not be undone by it.
    state.app()?.set_viewing(Some(id));
    tray::mark_read(&app, id);
    slow_detail_for_tests().await;
    Ok(review::review_detail_since(state.store()?, id, load_remote, since.as_deref()).await?)
}

/// Debug builds only: `COUNTERSIGN_TEST_REVIEW_DELAY_MS` makes every detail load that much
/// slower, so the end-to-end suite can press keys while a detail is still loading.
async fn slow_detail_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("COUNTERSIGN_TEST_REVIEW_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// The mail frame of version `shown` finished rendering `part` (the HTML, or the plain text
/// after the owner switched to it): recorded as shown, which an approval needs.
#[tauri::command]
pub async fn displayed(
    state: State<'_, AppState>,
    shown: Shown,
    part: ShownPart,
) -> Result<(), UiError> {
    state.store()?.record_view(&shown, ACTOR, part).await?;
    Ok(())
}

/// Approve the version shown (the review detail's `shown`); it is sent when the undo window
/// closes. Another current version is refused (`changed_since_shown`), a version never
/// displayed too (`not_shown`), and one with cautions asks first (`needs_confirmation`) unless
/// the owner said "Approve anyway" (`anyway`).
#[tauri::command]
pub async fn approve(
    state: State<'_, AppState>,
    shown: Shown,
    anyway: Option<bool>,
) -> Result<Decision, UiError> {
    let confirmation = if anyway == Some(true) {
        Confirmation::DespiteCautions
    } else {
        Confirmation::None
    };
    // Core tells the UI (items-changed) before this returns.
    Ok(state.app()?.approve(&shown, ACTOR, confirmation).await?)
}

/// Save the owner's edit of the version shown (Gmail): the draft's new version, which the
/// owner reviews and approves like any other. Another current version is refused
/// (`changed_since_shown`).
#[tauri::command]
pub async fn save_edit(
    state: State<'_, AppState>,
    shown: Shown,
    subject: String,
    text: String,
) -> Result<Shown, UiError> {
    Ok(state
        .app()?
        .save_edit(&shown, &subject, &text, ACTOR)
        .await?)
}

/// Reject the version shown, with a reason.
#[tauri::command]
pub async fn reject(
    state: State<'_, AppState>,
    shown: Shown,
    reason: String,
) -> Result<Decision, UiError> {
    Ok(state.app()?.reject(&shown, &reason, ACTOR).await?)
}

/// Take back the decision while nothing of it has left (core's `actions::undoable`).
#[tauri::command]
pub async fn undo(state: State<'_, AppState>, id: i64) -> Result<Decision, UiError> {
    Ok(state.app()?.undo(id, ACTOR).await?)
}

/// The reasons offered when rejecting.
#[tauri::command]
pub fn reject_reasons() -> Vec<String> {
    PRESET_REJECT_REASONS
        .iter()
        .map(|r| r.to_string())
        .collect()
}

/// The current version's source.
/// Opens the Gmail draft in the system browser (the link comes from the mirror, never from
/// the UI, so the webview cannot make the shell open anything else).
#[tauri::command]
pub async fn open_in_gmail(state: State<'_, AppState>, id: i64) -> Result<(), UiError> {
    let link = countersign_core::answered::gmail_link_of(state.store()?, id)
        .await?
        .ok_or_else(|| UiError::new(UiErrorCode::Internal, "A muster draft has no Gmail link."))?;
    crate::browser::open(&link).map_err(|e| {
        tracing::warn!(error = %e, "cannot open the browser");
        UiError::new(
            UiErrorCode::Internal,
            format!("Cannot open the browser ({e}); the link is {link}"),
        )
    })
}

#[tauri::command]
pub async fn raw_source(state: State<'_, AppState>, id: i64) -> Result<String, UiError> {
    Ok(review::raw_source(state.store()?, id).await?)
}

/// The reveal rendering of version `version` of item `id`, for a sandboxed frame.
#[tauri::command]
pub async fn reveal(
    state: State<'_, AppState>,
    id: i64,
    version: String,
) -> Result<String, UiError> {
    Ok(review::reveal(state.store()?, id, &version).await?)
}

/// One attachment's metadata and safe preview (with its bytes only for a PDF).
#[tauri::command]
pub async fn attachment_preview(
    state: State<'_, AppState>,
    id: i64,
    index: usize,
) -> Result<AttachmentView, UiError> {
    let (meta, preview, bytes) = review::attachment(state.store()?, id, index).await?;
    let pdf_base64 = matches!(preview, AttachmentPreview::Pdf)
        .then(|| base64::engine::general_purpose::STANDARD.encode(&bytes));
    Ok(AttachmentView {
        meta,
        preview,
        pdf_base64,
    })
}

/// Asks where to save one attachment (native dialog), then saves it; `null` when cancelled.
#[tauri::command]
pub async fn save_attachment(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
    index: usize,
) -> Result<Option<SavedAttachment>, UiError> {
    let store = state.store()?;
    let (meta, _, _) = review::attachment(store, id, index).await?;
    let mut dialog = app.dialog().file();
    if let Some(name) = &meta.file_name {
        dialog = dialog.set_file_name(name);
    }
    let Some(path) = chosen_path(dialog, Chooser::Save, "cannot save to the place chosen").await?
    else {
        return Ok(None);
    };
    let bytes = review::save_attachment(store, id, index, &path).await?;
    Ok(Some(SavedAttachment {
        path: path.display().to_string(),
        bytes,
    }))
}

/// What approving the version shown would ask to confirm, one sentence each: the
/// "Approve anyway?" question lists them under the draft's subject.
#[tauri::command]
pub async fn approval_cautions(
    state: State<'_, AppState>,
    shown: Shown,
) -> Result<Vec<String>, UiError> {
    Ok(countersign_core::decide::approval_cautions(state.store()?, &shown, ACTOR).await?)
}
