//! What the running app holds: the data directory, the mirror (or why it could not open), the
//! running core app (dispatcher and live syncs) and, in demo mode, the embedded fakes.

use countersign_core::app::{AppOptions, OnEvent, RunningApp};
use countersign_core::services::Services;
use countersign_core::Store;
use countersign_gmail::TokenStore;

use crate::args::DataDir;
use crate::demo::Demo;
use crate::error::{UiError, UiErrorCode};

/// Managed Tauri state, shared by every command.
pub struct AppState {
    /// The mirror, opened once at start, or the sentence saying why it could not be. A mirror
    /// that does not open (e.g. a corrupt file) is shown in the window rather than crashing the
    /// app before it has one, so the owner learns which file is wrong.
    mirror: Result<Store, String>,
    /// The dispatcher and live syncs over the mirror, or why they did not start.
    app: Result<RunningApp, String>,
    /// The embedded fakes of `--demo`, kept serving as long as the app runs.
    demo: Option<Demo>,
    /// Kept so a demo directory lives (and is deleted) with the app. Declared last: fields drop
    /// in order, so the running app and the fakes stop before their directory goes.
    _data_dir: DataDir,
}

impl AppState {
    /// Opens the mirror in `data_dir` (creating and migrating it if needed) and starts the core
    /// app on it; `on_event` hears every [`countersign_core::app::AppEvent`]. With `demo`, the
    /// fakes are started first and both demo accounts connected in `data_dir`, and everything
    /// is synced once before this returns, so the first queue the window paints is full.
    ///
    /// Must run inside a Tokio runtime (Tauri's): the core app spawns its tasks on it.
    pub async fn start(data_dir: DataDir, demo: bool, on_event: OnEvent) -> AppState {
        let mirror = Store::open(data_dir.path()).await.map_err(|error| {
            tracing::error!(error = %error, "cannot open the local mirror");
            error.to_string()
        });
        let Ok(store) = &mirror else {
            let why = "the mirror is unavailable".to_string();
            return AppState {
                mirror,
                app: Err(why),
                demo: None,
                _data_dir: data_dir,
            };
        };
        let path = data_dir.path();
        let (services, options, demo) = if demo {
            // Demo secrets are the fakes' and must never reach the owner's keyring.
            let services = Services::with_token_store(path, TokenStore::file(path));
            let demo = match Demo::start(store, &services).await {
                Ok(demo) => Some(demo),
                Err(error) => {
                    tracing::error!(error = %error, "cannot start demo mode");
                    None
                }
            };
            // The demo's agent files a Gmail draft a few seconds in: the visible-window
            // cadence (5 s) shows it promptly.
            (services, AppOptions::default(), demo)
        } else {
            // Honours COUNTERSIGN_SECRET_STORE=file (the e2e suite never touches a keyring).
            (Services::new(path), AppOptions::default(), None)
        };
        let app = RunningApp::start(store.clone(), services, path, options, on_event)
            .await
            .map_err(|error| {
                tracing::error!(error = %error, "cannot start syncing and dispatching");
                error.to_string()
            });
        if let (Ok(app), Some(_)) = (&app, &demo) {
            if let Err(error) = app.sync_now().await {
                tracing::warn!(error = %error, "cannot run the demo's first sync");
            }
        }
        AppState {
            mirror,
            app,
            demo,
            _data_dir: data_dir,
        }
    }

    /// The open mirror, or the `mirror_unavailable` error the UI shows instead of the queue.
    pub fn store(&self) -> Result<&Store, UiError> {
        self.mirror
            .as_ref()
            .map_err(|message| UiError::new(UiErrorCode::MirrorUnavailable, message.clone()))
    }

    /// The running core app (`mirror_unavailable` when the mirror did not open).
    pub fn app(&self) -> Result<&RunningApp, UiError> {
        self.store()?;
        self.app
            .as_ref()
            .map_err(|message| UiError::new(UiErrorCode::Internal, message.clone()))
    }

    /// The embedded fakes, in demo mode.
    pub fn demo(&self) -> Option<&Demo> {
        self.demo.as_ref()
    }

    /// Whether the app runs in demo mode.
    pub fn is_demo(&self) -> bool {
        self.demo.is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use countersign_core::{ItemFilter, Source};

    use super::*;

    fn ignore_events() -> OnEvent {
        Arc::new(|_| {})
    }

    #[test]
    fn a_file_that_is_not_a_mirror_is_reported_by_name_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join(countersign_core::store::MIRROR_FILE);
        std::fs::write(&mirror, b"these are not the bytes of an SQLite database").unwrap();

        let state = tauri::async_runtime::block_on(AppState::start(
            DataDir::Persistent(dir.path().to_path_buf()),
            false,
            ignore_events(),
        ));

        let error = state.store().unwrap_err();
        assert_eq!(error.code, UiErrorCode::MirrorUnavailable);
        assert!(
            error.message.contains(countersign_core::store::MIRROR_FILE),
            "{}",
            error.message
        );
        assert_eq!(
            state.app().unwrap_err().code,
            UiErrorCode::MirrorUnavailable
        );
        assert_eq!(
            std::fs::read(&mirror).unwrap(),
            b"these are not the bytes of an SQLite database"
        );
    }

    #[test]
    fn demo_mode_fills_a_fresh_mirror_with_the_drafts_of_both_fakes() {
        let dir = tempfile::tempdir().unwrap();
        let state = tauri::async_runtime::block_on(AppState::start(
            DataDir::Demo(dir),
            true,
            ignore_events(),
        ));

        assert!(state.is_demo());
        let store = state.store().unwrap();
        let items =
            tauri::async_runtime::block_on(store.list_items(&ItemFilter::default())).unwrap();
        let gmail = items.iter().filter(|i| i.source == Source::Gmail).count();
        let muster = items.iter().filter(|i| i.source == Source::Muster).count();
        assert!(gmail >= 3, "{gmail} Gmail drafts mirrored");
        assert!(muster >= 4, "{muster} muster drafts mirrored");
        let accounts = tauri::async_runtime::block_on(store.list_accounts()).unwrap();
        assert!(
            accounts
                .iter()
                .all(|a| a.secret_storage == countersign_core::store::SecretStorage::File),
            "demo secrets never go to the keyring: {accounts:?}"
        );
        assert!(state.app().unwrap().is_dispatcher());
    }
}
