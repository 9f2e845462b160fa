//! The first run and the login start: the commands of the welcome view (shown while there is no
//! account: connect Gmail with a picked `client_secret.json`, connect muster, or try the demo)
//! and of the "Start at login" setting. Each is a thin adapter; the autostart entry is core's
//! (`countersign_core::autostart`).

use countersign_core::autostart::{self, Autostart};
use countersign_core::services::GmailConnect;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use crate::dialog::{chosen_path, Chooser};
use crate::error::{UiError, UiErrorCode};
use crate::state::AppState;

/// Debug builds only: a `client_secret.json` path that [`pick_client_secret`] returns instead
/// of opening the file dialog (the desktop suite cannot click through a native dialog).
#[cfg(debug_assertions)]
pub const TEST_CLIENT_SECRET_ENV: &str = "COUNTERSIGN_TEST_CLIENT_SECRET";
/// Debug builds with the `demo` feature only: the API base of a fake Google to connect Gmail
/// accounts to, with [`TEST_GMAIL_TOKENINFO_ENV`]; its consent page is then accepted without a
/// browser.
#[cfg(all(debug_assertions, feature = "demo"))]
pub const TEST_GMAIL_API_BASE_ENV: &str = "COUNTERSIGN_TEST_GMAIL_API_BASE";
/// Debug builds with `demo` only: the fake Google's tokeninfo endpoint (see
/// [`TEST_GMAIL_API_BASE_ENV`]).
#[cfg(all(debug_assertions, feature = "demo"))]
pub const TEST_GMAIL_TOKENINFO_ENV: &str = "COUNTERSIGN_TEST_GMAIL_TOKENINFO";

/// How a Gmail account is connected from the window: Google's endpoints and consent in the
/// system browser. A debug build with `demo` honours the test hooks above; a release build
/// never does.
pub fn gmail_connect(client_secret_json: String) -> GmailConnect {
    #[cfg(all(debug_assertions, feature = "demo"))]
    if let (Ok(api_base), Ok(tokeninfo)) = (
        std::env::var(TEST_GMAIL_API_BASE_ENV),
        std::env::var(TEST_GMAIL_TOKENINFO_ENV),
    ) {
        return GmailConnect::auto_consent(client_secret_json, api_base, tokeninfo);
    }
    GmailConnect::google(client_secret_json, false)
}

/// Asks for the `client_secret.json` (native file dialog); `null` when the owner cancelled.
#[tauri::command]
pub async fn pick_client_secret(app: AppHandle) -> Result<Option<String>, UiError> {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os(TEST_CLIENT_SECRET_ENV) {
        return Ok(Some(path.to_string_lossy().into_owned()));
    }
    let dialog = app
        .dialog()
        .file()
        .set_title("The client_secret.json of your Google Cloud OAuth client")
        .add_filter("OAuth client (JSON)", &["json"]);
    let path = chosen_path(dialog, Chooser::Open, "cannot use the file chosen").await?;
    Ok(path.map(|path| path.display().to_string()))
}

/// Whether this build offers the demo (the `demo` feature).
#[tauri::command]
pub fn demo_available() -> bool {
    cfg!(feature = "demo")
}

/// "Try the demo": switches the window to a demo session (the fake Gmail and muster with their
/// demo drafts, in a fresh throw-away data directory). Only while the mirror has no account, so
/// it can never hide real drafts.
#[tauri::command]
pub async fn try_demo(app: AppHandle, state: State<'_, AppState>) -> Result<(), UiError> {
    if state.is_demo() {
        return Ok(());
    }
    if !state.store()?.list_accounts().await?.is_empty() {
        return Err(UiError::new(
            UiErrorCode::Refused,
            "cannot start the demo here: this mirror has accounts; \
             start `countersign-desktop --demo` to try it apart from them",
        ));
    }
    start_demo(&app, &state).await
}

#[cfg(feature = "demo")]
async fn start_demo(app: &AppHandle, state: &AppState) -> Result<(), UiError> {
    use crate::args::DataDir;
    use crate::state::{Secrets, Session};
    use crate::{demo, events, tray};

    let dir =
        DataDir::fresh_demo().map_err(|e| UiError::new(UiErrorCode::Internal, format!("{e:#}")))?;
    let session = Session::start(dir, true, Secrets::Files, events::forwarder(app.clone())).await;
    let Some(running) = session.demo() else {
        return Err(UiError::new(
            UiErrorCode::Internal,
            "cannot start the demo: its fake services did not start (the log says why)",
        ));
    };
    running.run_agent(demo::AgentTimes::default());
    state.replace(session);
    // The window is painted already (the owner clicked "Try the demo"): sync at once.
    state.app()?.start_syncs().await?;
    tracing::info!("switched to demo mode");
    events::emit(app, events::ITEMS_CHANGED, ());
    tray::refresh_later(app);
    Ok(())
}

#[cfg(not(feature = "demo"))]
async fn start_demo(_app: &AppHandle, _state: &AppState) -> Result<(), UiError> {
    Err(UiError::new(
        UiErrorCode::Internal,
        "cannot start the demo: this build of Countersign has no demo mode \
         (it was built without the `demo` feature)",
    ))
}

/// Whether "Start at login" is on (the autostart entry exists).
#[tauri::command]
pub fn start_at_login() -> bool {
    Autostart::from_env().is_some_and(|a| a.is_enabled())
}

/// Turns "Start at login" on or off; returns whether it is on now.
#[tauri::command]
pub fn set_start_at_login(enabled: bool) -> Result<bool, UiError> {
    let entry = Autostart::from_env().ok_or_else(|| {
        UiError::new(
            UiErrorCode::Internal,
            "cannot find your configuration directory: neither XDG_CONFIG_HOME nor HOME is set",
        )
    })?;
    let exe = std::env::current_exe().map_err(|e| {
        UiError::new(
            UiErrorCode::Internal,
            format!("cannot tell where Countersign is installed: {e}"),
        )
    })?;
    Ok(entry.set(enabled, &autostart::program_for(&exe))?)
}
