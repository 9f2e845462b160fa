//! What the running app holds: the data directory and the mirror (or why it could not open).

use countersign_core::Store;

use crate::args::DataDir;
use crate::error::{UiError, UiErrorCode};

/// Managed Tauri state, shared by every command.
pub struct AppState {
    /// The mirror, opened once at start, or the sentence saying why it could not be. A mirror
    /// that does not open (e.g. a corrupt file) is shown in the window rather than crashing the
    /// app before it has one, so the owner learns which file is wrong.
    mirror: Result<Store, String>,
    /// Kept so a demo directory lives (and is deleted) with the app.
    _data_dir: DataDir,
}

impl AppState {
    /// Opens the mirror in `data_dir`, creating and migrating it if needed.
    pub async fn open(data_dir: DataDir) -> AppState {
        let mirror = Store::open(data_dir.path()).await.map_err(|error| {
            tracing::error!(error = %error, "cannot open the local mirror");
            error.to_string()
        });
        AppState {
            mirror,
            _data_dir: data_dir,
        }
    }

    /// The open mirror, or the `mirror_unavailable` error the UI shows instead of the queue.
    pub fn store(&self) -> Result<&Store, UiError> {
        self.mirror
            .as_ref()
            .map_err(|message| UiError::new(UiErrorCode::MirrorUnavailable, message.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_mirror_is_reported_by_name_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join(countersign_core::store::MIRROR_FILE);
        std::fs::write(&mirror, b"these are not the bytes of an SQLite database").unwrap();

        let state = tauri::async_runtime::block_on(AppState::open(DataDir::Persistent(
            dir.path().to_path_buf(),
        )));

        let error = state.store().unwrap_err();
        assert_eq!(error.code, UiErrorCode::MirrorUnavailable);
        assert!(
            error.message.contains(countersign_core::store::MIRROR_FILE),
            "{}",
            error.message
        );
        assert_eq!(
            std::fs::read(&mirror).unwrap(),
            b"these are not the bytes of an SQLite database"
        );
    }
}
