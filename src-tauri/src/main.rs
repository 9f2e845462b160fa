//! countersign-desktop: the Tauri 2 shell of Countersign.
//!
//! This binary owns the window, the tray and the wiring between the webview (`ui/`) and
//! `countersign-core`; it holds no domain logic. Every `#[tauri::command]` is a thin adapter
//! that calls core and maps the result for the UI (see `commands`). It must not talk to Gmail or
//! muster directly, nor touch the mirror's SQL: that is core's job.

// A release build on Windows must not open a console next to the window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod browser;
mod commands;
#[cfg(feature = "demo")]
mod demo;
mod dialog;
mod error;
mod events;
mod notify;
mod state;
mod tray;
#[cfg(test)]
mod ui_types;
mod welcome;
mod window;

use anyhow::Context;
use clap::Parser;
use tauri::{Manager, RunEvent, WindowEvent};

use crate::args::Args;
use crate::state::AppState;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    init_tracing();
    if args.demo && !cfg!(feature = "demo") {
        anyhow::bail!(
            "cannot start in demo mode: this build has no demo mode \
             (build it with `--features demo`, as scripts/demo.sh does)"
        );
    }

    let data_dir = args
        .data_dir()
        .context("cannot decide where the data directory is")?;
    let demo = args.demo;
    let hidden = args.hidden;
    #[cfg(any(debug_assertions, feature = "demo"))]
    let blank_window = args.blank_window;
    tracing::info!(data_dir = %data_dir.path().display(), demo, "starting");

    tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .setup(move |app| {
            #[cfg(any(debug_assertions, feature = "demo"))]
            if blank_window {
                window::create(app, window::Page::Blank)?.show()?;
                return Ok(());
            }
            // Created first, as Tauri would: the page loads while the mirror opens (its calls
            // wait for this setup to finish).
            window::create(app, window::Page::App)?;
            // Started inside Tauri's Tokio runtime, which the dispatcher and syncs then run on.
            // Waiting here keeps every command from running before the state is there; in demo
            // mode it also means the first queue painted already holds the demo drafts.
            let on_event = events::forwarder(app.handle().clone());
            // The demo's secrets are the fakes' and never go near the owner's keyring.
            let secrets = if demo {
                state::Secrets::Files
            } else {
                state::Secrets::Owner
            };
            let state =
                tauri::async_runtime::block_on(AppState::start(data_dir, demo, secrets, on_event));
            #[cfg(feature = "demo")]
            if let Some(demo) = state.demo() {
                demo.run_agent(demo::AgentTimes::default());
            }
            app.manage(state);
            // Without a tray (no status notifier on this desktop) the app still works; the
            // window then closes for real, as there would be no way back to it.
            let tray_icon = tray::create(app);
            if let Err(error) = &tray_icon {
                tracing::warn!(error = %error, "cannot create the tray icon");
            }
            // The window is created hidden (tauri.conf.json): `--hidden` (a start at login)
            // leaves it so when there is a tray to open it from.
            if !(hidden && tray_icon.is_ok()) {
                tray::show_main(app.handle());
            } else {
                // Nothing is painted while hidden: sync at once instead of waiting for
                // the window's `painted`.
                start_syncs_now(app.handle().clone());
            }
            tray::refresh_later(app.handle());
            Ok(())
        })
        .on_window_event(|window, event| {
            if window.label() == events::MAIN_WINDOW
                && matches!(
                    event,
                    WindowEvent::Focused(_)
                        | WindowEvent::Resized(_)
                        | WindowEvent::CloseRequested { .. }
                )
            {
                // Core paces the Gmail checks by this (every 5 s visible, 60 s hidden); hiding
                // to the tray below also ends here, as the window is no longer visible then.
                let visible = window.is_visible().unwrap_or(true)
                    && !window.is_minimized().unwrap_or(false)
                    && !matches!(event, WindowEvent::CloseRequested { .. });
                // No state in a `--blank-window` run.
                if let Some(running) = window
                    .try_state::<AppState>()
                    .and_then(|state| state.inner().app().ok())
                {
                    running.set_window_visible(visible);
                }
            }
            if let WindowEvent::CloseRequested { api, .. } = event {
                if window.label() == events::MAIN_WINDOW && tray::exists(window.app_handle()) {
                    // Closing hides: the app stays in the tray; "Quit" exits.
                    api.prevent_close();
                    if let Err(e) = window.hide() {
                        tracing::warn!(error = %e, "cannot hide the window");
                    }
                    // Nothing is in view any more: a refusal of the open item is notified now.
                    if let Ok(running) = window.state::<AppState>().app() {
                        running.set_viewing(None);
                    }
                }
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::queue::list_items,
            commands::queue::queue_page,
            commands::queue::painted,
            commands::review::get_review,
            commands::queue::set_viewing,
            commands::queue::set_idle,
            commands::review::displayed,
            commands::review::approve,
            commands::review::reject,
            commands::review::save_edit,
            commands::review::undo,
            commands::review::reject_reasons,
            commands::queue::queue_selection,
            commands::queue::selection_summary,
            commands::queue::reject_all,
            commands::queue::approve_all_displayed,
            commands::review::raw_source,
            commands::review::reveal,
            commands::review::approval_cautions,
            commands::record::history_page,
            commands::record::record_standing,
            commands::record::agent_figures,
            commands::record::left_message,
            commands::review::open_in_gmail,
            commands::review::attachment_preview,
            commands::review::save_attachment,
            commands::settings::list_accounts,
            commands::settings::add_gmail,
            commands::settings::add_muster,
            commands::settings::remove_account,
            commands::settings::get_settings,
            commands::settings::save_settings,
            commands::settings::sync_now,
            commands::settings::set_paused,
            commands::settings::status,
            commands::rules::list_rules,
            commands::rules::add_rule,
            commands::rules::set_rule_mode,
            commands::rules::remove_rule,
            commands::rules::edit_rule,
            commands::rules::move_rule,
            commands::rules::duplicate_rule,
            commands::rules::test_rule,
            commands::rules::gmail_labels,
            commands::settings::set_hold_everything,
            welcome::pick_client_secret,
            welcome::demo_available,
            welcome::try_demo,
            welcome::start_at_login,
            welcome::set_start_at_login,
        ])
        .build(tauri::generate_context!())
        .context("cannot build the Countersign window")?
        .run(|app, event| {
            if let RunEvent::Exit = event {
                if let Some(state) = app.try_state::<AppState>() {
                    state.remove_demo_dirs();
                }
            }
        });
    Ok(())
}

/// Starts the current session's syncs without waiting for the window to paint.
fn start_syncs_now(app: tauri::AppHandle) {
    tauri::async_runtime::spawn(async move {
        let state = app.state::<AppState>();
        if let Ok(running) = state.app() {
            if let Err(error) = running.start_syncs().await {
                tracing::warn!(error = %error, "cannot start the syncs");
            }
        }
    });
}

/// Logs to stderr, `info` by default, `RUST_LOG` to change it.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
        // yup-oauth2 logs tokens at debug level (DESIGN §4): never below warn, whatever
        // RUST_LOG says.
        .add_directive(
            countersign_core::services::YUP_OAUTH2_LOG_DIRECTIVE
                .parse()
                .expect("a static directive"),
        );
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
