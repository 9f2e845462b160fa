//! What the running app holds: the data directory, the mirror (or why it could not open), the
//! running core app (dispatcher and live syncs) and, in demo mode, the embedded fakes.

use std::sync::{Mutex, RwLock};

use countersign_core::app::{AppOptions, OnEvent, RunningApp};
use countersign_core::services::Services;
use countersign_core::Store;
use countersign_gmail::TokenStore;

use crate::args::DataDir;
#[cfg(feature = "demo")]
use crate::demo::Demo;
use crate::error::{UiError, UiErrorCode};

/// Managed Tauri state, shared by every command: the session the app runs now. "Try the demo"
/// (from the welcome, when there is no account) replaces it once with a demo session.
pub struct AppState {
    /// Sessions live as long as the app (one, or two after "Try the demo"), so commands can
    /// borrow from the current one while another command replaces it.
    session: RwLock<&'static Session>,
    /// Sessions replaced by another, kept for [`AppState::remove_demo_dirs`].
    replaced: Mutex<Vec<&'static Session>>,
}

/// Where a session keeps Gmail tokens and muster passwords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secrets {
    /// The owner's: the OS keyring when one answers, 0600 files when none does or when
    /// `COUNTERSIGN_SECRET_STORE=file` says so.
    Owner,
    /// 0600 files in the data directory, whatever the environment says: the keyring is never
    /// asked, not even whether it is there (demo sessions, and tests, which must not start the
    /// keyring of whoever runs them).
    Files,
}

/// One data directory with its mirror, its running core app and, in demo mode, the fakes.
pub struct Session {
    /// The mirror, opened once at start, or the sentence saying why it could not be. A mirror
    /// that does not open (e.g. a corrupt file) is shown in the window rather than crashing the
    /// app before it has one, so the owner learns which file is wrong.
    mirror: Result<Store, String>,
    /// The dispatcher and live syncs over the mirror, or why they did not start.
    app: Result<RunningApp, String>,
    /// The embedded fakes of `--demo`, kept serving as long as the app runs.
    #[cfg(feature = "demo")]
    demo: Option<Demo>,
    /// The data directory; a demo's is deleted by [`AppState::remove_demo_dirs`].
    data_dir: DataDir,
}

impl AppState {
    /// Starts a [`Session`] (see [`Session::start`]) and makes it the current one.
    pub async fn start(
        data_dir: DataDir,
        demo: bool,
        secrets: Secrets,
        on_event: OnEvent,
    ) -> AppState {
        let session = Session::start(data_dir, demo, secrets, on_event).await;
        AppState {
            session: RwLock::new(Box::leak(Box::new(session))),
            replaced: Mutex::default(),
        }
    }

    fn current(&self) -> &'static Session {
        *self.session.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `session` the current one. The one it replaces stops syncing and dispatching; it
    /// stays allocated because a command that started before may still be using it.
    #[cfg(any(feature = "demo", test))]
    pub fn replace(&self, session: Session) {
        let session: &'static Session = Box::leak(Box::new(session));
        let old = std::mem::replace(
            &mut *self.session.write().unwrap_or_else(|e| e.into_inner()),
            session,
        );
        if let Ok(app) = &old.app {
            app.stop();
        }
        self.replaced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(old);
    }

    /// Deletes the throw-away directories of demo sessions, when the app exits: sessions live
    /// as long as the process, so their directories are not deleted on drop.
    pub fn remove_demo_dirs(&self) {
        let replaced = self.replaced.lock().unwrap_or_else(|e| e.into_inner());
        for session in replaced.iter().copied().chain([self.current()]) {
            if let DataDir::Demo(dir) = &session.data_dir {
                // Its tasks write into the directory until they stop and the mirror is closed:
                // a file created while the directory is being deleted leaves it behind.
                if let Ok(app) = &session.app {
                    app.stop();
                }
                if let Ok(store) = &session.mirror {
                    tauri::async_runtime::block_on(store.close());
                }
                if let Err(error) = std::fs::remove_dir_all(dir.path()) {
                    tracing::warn!(error = %error, "cannot delete the demo directory");
                }
            }
        }
    }

    /// The open mirror of the current session (see [`Session::store`]).
    pub fn store(&self) -> Result<&Store, UiError> {
        self.current().store()
    }

    /// The running core app of the current session (see [`Session::app`]).
    pub fn app(&self) -> Result<&RunningApp, UiError> {
        self.current().app()
    }

    /// The embedded fakes, in demo mode.
    #[cfg(feature = "demo")]
    pub fn demo(&self) -> Option<&Demo> {
        self.current().demo()
    }

    /// Whether the app runs in demo mode.
    pub fn is_demo(&self) -> bool {
        self.current().is_demo()
    }
}

/// The desktop's core options: accounts are contacted only once the window has painted the
/// queue from the mirror (the UI's `painted`, or at once when the app starts hidden).
fn window_first() -> AppOptions {
    AppOptions {
        defer_syncs: true,
        muster_polling: muster_polling_for_tests().unwrap_or_default(),
        ..AppOptions::default()
    }
}

/// Debug builds only: `COUNTERSIGN_TEST_MUSTER_POLL_MS` polls muster that often (visible or
/// not) while its event stream does not deliver, so the end-to-end suite need not wait 30 s.
fn muster_polling_for_tests() -> Option<countersign_core::live::MusterPolling> {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("COUNTERSIGN_TEST_MUSTER_POLL_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let every = std::time::Duration::from_millis(ms);
        return Some(countersign_core::live::MusterPolling {
            visible: every,
            hidden: every,
            max_backoff: every * 4,
        });
    }
    None
}

impl Session {
    /// Opens the mirror in `data_dir` (creating and migrating it if needed) and starts the core
    /// app on it; `on_event` hears every [`countersign_core::app::AppEvent`]. With `demo`, the
    /// fakes are started first and both demo accounts connected in `data_dir`, and everything
    /// is synced once before this returns, so the first queue the window paints is full.
    /// Secrets go where `secrets` says; a demo's always go to files.
    ///
    /// Must run inside a Tokio runtime (Tauri's): the core app spawns its tasks on it.
    pub async fn start(
        data_dir: DataDir,
        demo: bool,
        secrets: Secrets,
        on_event: OnEvent,
    ) -> Session {
        // The record's key is kept where the tokens are; demo mode and the e2e suite's files
        // never touch a keyring.
        let keys = if demo || matches!(secrets, Secrets::Files) {
            countersign_core::store::RecordKeyStore::file(data_dir.path())
        } else {
            Services::new(data_dir.path()).record_keys()
        };
        let mirror = Store::open_keyed(data_dir.path(), &keys)
            .await
            .map_err(|error| {
                tracing::error!(error = %error, "cannot open the local mirror");
                error.to_string()
            });
        let Ok(store) = &mirror else {
            let why = "the mirror is unavailable".to_string();
            return Session {
                mirror,
                app: Err(why),
                #[cfg(feature = "demo")]
                demo: None,
                data_dir,
            };
        };
        // The record's checkpoint in the owner's chosen folder, once a day (issue 35).
        tokio::spawn(countersign_core::store::keep_checkpoints_daily(
            store.clone(),
        ));
        let path = data_dir.path();
        let owner_services = || match secrets {
            // Honours COUNTERSIGN_SECRET_STORE=file (the e2e suite never touches a keyring).
            Secrets::Owner => Services::new(path),
            Secrets::Files => Services::with_token_store(path, TokenStore::file(path)),
        };
        #[cfg(feature = "demo")]
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
            (services, window_first(), demo)
        } else {
            (owner_services(), window_first(), None)
        };
        #[cfg(not(feature = "demo"))]
        let (services, options) = {
            // `main` refuses `--demo` in a build without the fakes.
            debug_assert!(!demo, "demo mode needs the `demo` feature");
            (owner_services(), window_first())
        };
        let app = RunningApp::start(store.clone(), services, path, options, on_event)
            .await
            .map_err(|error| {
                tracing::error!(error = %error, "cannot start syncing and dispatching");
                error.to_string()
            });
        #[cfg(feature = "demo")]
        if let (Ok(app), Some(_)) = (&app, &demo) {
            if let Err(error) = app.sync_now().await {
                tracing::warn!(error = %error, "cannot run the demo's first sync");
            }
        }
        Session {
            mirror,
            app,
            #[cfg(feature = "demo")]
            demo,
            data_dir,
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
    #[cfg(feature = "demo")]
    pub fn demo(&self) -> Option<&Demo> {
        self.demo.as_ref()
    }

    /// Whether the app runs in demo mode.
    pub fn is_demo(&self) -> bool {
        #[cfg(feature = "demo")]
        let demo = self.demo.is_some();
        #[cfg(not(feature = "demo"))]
        let demo = false;
        demo
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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
            Secrets::Files,
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

    #[cfg(feature = "demo")]
    #[test]
    fn demo_mode_fills_a_fresh_mirror_with_the_drafts_of_both_fakes() {
        use countersign_core::{ItemFilter, Source};

        let dir = tempfile::tempdir().unwrap();
        let state = tauri::async_runtime::block_on(AppState::start(
            DataDir::Demo(dir),
            true,
            Secrets::Files,
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
                .all(|a| a.profile.secret_storage == countersign_core::store::SecretStorage::File),
            "demo secrets never go to the keyring: {accounts:?}"
        );
        assert!(state.app().unwrap().is_dispatcher());
    }

    #[test]
    fn the_throw_away_directories_of_demo_sessions_are_deleted_at_exit() {
        let kept = tempfile::tempdir().unwrap();
        let state = tauri::async_runtime::block_on(AppState::start(
            DataDir::Persistent(kept.path().to_path_buf()),
            false,
            Secrets::Files,
            ignore_events(),
        ));
        let demo = tempfile::tempdir().unwrap();
        let demo_path = demo.path().to_path_buf();
        let session = tauri::async_runtime::block_on(Session::start(
            DataDir::Demo(demo),
            false,
            Secrets::Files,
            ignore_events(),
        ));
        state.replace(session);
        assert!(demo_path
            .join(countersign_core::store::MIRROR_FILE)
            .is_file());

        state.remove_demo_dirs();
        assert!(!demo_path.exists(), "the demo directory is gone");
        assert!(
            kept.path()
                .join(countersign_core::store::MIRROR_FILE)
                .is_file(),
            "the owner's directory is left alone"
        );
    }
}
