//! Build script: checks the UI was built, then lets `tauri-build` read `tauri.conf.json`,
//! generate the ACL for our own commands and embed the icons.

use std::path::Path;

/// Every `#[tauri::command]` of the app. Listing them makes tauri-build generate `allow-…`
/// permissions for them, so a command is callable only from windows whose capability grants it
/// (the main window), never from a frame or window that was not given it.
const COMMANDS: &[&str] = &[
    "list_items",
    "queue_page",
    "painted",
    "get_review",
    "set_viewing",
    "set_idle",
    "displayed",
    "approve",
    "reject",
    "save_edit",
    "undo",
    "reject_reasons",
    "queue_selection",
    "selection_summary",
    "reject_all",
    "approve_all_displayed",
    "raw_source",
    "reveal",
    "approval_cautions",
    "history_page",
    "record_standing",
    "agent_figures",
    "left_message",
    "open_in_gmail",
    "attachment_preview",
    "save_attachment",
    "list_accounts",
    "add_gmail",
    "add_muster",
    "remove_account",
    "get_settings",
    "save_settings",
    "sync_now",
    "set_paused",
    "status",
    "list_rules",
    "add_rule",
    "set_rule_mode",
    "remove_rule",
    "edit_rule",
    "move_rule",
    "duplicate_rule",
    "test_rule",
    "gmail_labels",
    "set_hold_everything",
    "pick_client_secret",
    "demo_available",
    "try_demo",
    "start_at_login",
    "set_start_at_login",
];

fn main() {
    let dist = Path::new("../ui/dist");
    println!("cargo:rerun-if-changed=../ui/dist");
    if !dist.join("index.html").exists() {
        // generate_context! would fail later with a less helpful message; say what to run.
        panic!(
            "cannot find ui/dist/index.html: build the UI first with \
             `npm ci && npm run build` in ui/ (or run `bash scripts/setup.sh`)"
        );
    }
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("cannot prepare the Tauri build (tauri.conf.json, capabilities or icons)");
}
