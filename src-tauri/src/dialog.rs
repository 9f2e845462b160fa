//! The native file dialogs (`tauri-plugin-dialog`): shown from a command, answered through a
//! callback on the UI thread; [`chosen_path`] turns that answer back into the command's value.

use std::path::PathBuf;

use tauri::Runtime;
use tauri_plugin_dialog::FileDialogBuilder;

use crate::error::{UiError, UiErrorCode};

/// Which file dialog to show.
pub enum Chooser {
    /// Pick an existing file.
    Open,
    /// Choose where to save a file.
    Save,
}

/// Shows `dialog` and waits for the owner's answer: `None` when they cancelled. `cannot_use`
/// starts the error when the answer is not a local path (e.g. "cannot save to the place
/// chosen").
pub async fn chosen_path<R: Runtime>(
    dialog: FileDialogBuilder<R>,
    chooser: Chooser,
    cannot_use: &str,
) -> Result<Option<PathBuf>, UiError> {
    let (chosen, answer) = tokio::sync::oneshot::channel();
    let answered = move |path| {
        if chosen.send(path).is_err() {
            tracing::debug!("the file dialog answered after its command was cancelled");
        }
    };
    match chooser {
        Chooser::Open => dialog.pick_file(answered),
        Chooser::Save => dialog.save_file(answered),
    }
    let Some(path) = answer.await.ok().flatten() else {
        return Ok(None);
    };
    path.into_path()
        .map(Some)
        .map_err(|e| UiError::new(UiErrorCode::Internal, format!("{cannot_use}: {e}")))
}
