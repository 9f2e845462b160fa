//! countersign-desktop: the Tauri 2 shell of Countersign.
//!
//! This binary owns the window, the tray and the wiring between the webview (`ui/`) and
//! `countersign-core`; it holds no domain logic. Every `#[tauri::command]` is a thin adapter
//! that calls core and maps the result for the UI (see `commands`). It must not talk to Gmail or
//! muster directly, nor touch the mirror's SQL: that is core's job.

// A release build on Windows must not open a console next to the window.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod args;
mod commands;
mod error;
mod state;

use anyhow::Context;
use clap::Parser;
use tauri::Manager;

use crate::args::Args;
use crate::state::AppState;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    init_tracing();

    let data_dir = args
        .data_dir()
        .context("cannot decide where the data directory is")?;
    tracing::info!(data_dir = %data_dir.path().display(), demo = args.demo, "starting");
    if args.demo {
        // Demo mode (embedded fakes, seeded drafts) arrives with issue 7; until then `--demo`
        // only gives a fresh, empty data directory so the app can be looked at safely.
        tracing::warn!("demo mode is not implemented yet: starting with an empty mirror");
    }

    tauri::Builder::default()
        .setup(move |app| {
            app.manage(tauri::async_runtime::block_on(AppState::open(data_dir)));
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![commands::list_items])
        .run(tauri::generate_context!())
        .context("cannot run the Countersign window")?;
    Ok(())
}

/// Logs to stderr, `info` by default, `RUST_LOG` to change it.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        // yup-oauth2 logs tokens at debug level (DESIGN §4): keep it quiet whatever the default.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,yup_oauth2=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
