//! The Tauri commands the UI calls (`docs/desktop-api.md` is the contract). Each is a few
//! lines over `countersign-core`: take the managed state, call core, turn its error into a
//! [`UiError`](crate::error::UiError). Logic belongs in core.
//!
//! What core does through the running app (decisions, accounts) it announces as an
//! [`AppEvent`](countersign_core::app::AppEvent), and the tray is refreshed on every event
//! ([`crate::events::forwarder`]); only changes made on the store directly (settings) refresh
//! the tray here.
//!
//! Every command listed here must also be listed in `build.rs` (to get an `allow-…`
//! permission) and granted in `capabilities/main.json`, or the UI's call is refused.

pub mod queue;
pub mod record;
pub mod review;
pub mod rules;
pub mod settings;

/// Who the audit trail says decided, for decisions taken in this app.
pub(crate) const ACTOR: &str = "owner via desktop";

#[cfg(test)]
mod tests;
