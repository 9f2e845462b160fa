//! Core's [`AppEvent`]s, pushed to the main window under the contract's event names
//! (`docs/desktop-api.md`), so the UI reloads on change instead of polling. A refusal, new
//! drafts and drafts a rule sent also become desktop notifications, and every event refreshes
//! the tray.

use std::sync::Arc;

use countersign_core::app::{AppEvent, OnEvent};
use countersign_core::store::Refusal;
use countersign_core::ItemSummary;
use serde::Serialize;
use tauri::{AppHandle, Emitter};

use crate::{notify, tray};

/// The label of the one window events go to.
pub const MAIN_WINDOW: &str = "main";
/// Items changed. Payload core's `ItemsChanged` (which items, why, their rows as they are now),
/// or `null` when the shell itself changed something (pause, demo switch): read everything.
pub const ITEMS_CHANGED: &str = "countersign://items-changed";
/// An account's service stopped or started answering. Payload [`Reachability`].
pub const REACHABILITY: &str = "countersign://reachability";
/// A refusal the owner is told about. Payload [`RefusalNotice`].
pub const REFUSAL: &str = "countersign://refusal";
/// The rules judged drafts: their records changed (a rules page on screen reads them again).
/// Payload the drafts judged, by id.
pub const RULES_JUDGED: &str = "countersign://rules-judged";
/// The owner clicked a notification: show that item. Payload [`OpenItem`].
pub const OPEN_ITEM: &str = "countersign://open-item";

/// Payload of [`REACHABILITY`].
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Reachability<'a> {
    /// The account.
    pub account_id: &'a str,
    /// Whether its service answers.
    pub online: bool,
    /// Why not, in the service's words.
    pub detail: Option<&'a str>,
}

/// Payload of [`REFUSAL`].
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RefusalNotice<'a> {
    /// The refusal.
    pub refusal: &'a Refusal,
    /// The item it is about.
    pub item: &'a ItemSummary,
}

/// Payload of [`OPEN_ITEM`].
#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct OpenItem {
    /// The item to select.
    pub id: i64,
}

/// The `on_event` callback given to core: forwards each event to the main window.
pub fn forwarder(app: AppHandle) -> OnEvent {
    Arc::new(move |event: AppEvent| {
        match &event {
            AppEvent::ItemsChanged(changed) => emit(&app, ITEMS_CHANGED, changed),
            AppEvent::Reachability {
                account_id,
                online,
                detail,
            } => emit(
                &app,
                REACHABILITY,
                Reachability {
                    account_id,
                    online: *online,
                    detail: detail.as_deref(),
                },
            ),
            // The status bar's "sent by another Countersign process" ends: `null` makes the
            // window read everything again, the status with it.
            AppEvent::DispatcherRole { dispatcher } => {
                tracing::info!(dispatcher, "the dispatcher role changed");
                emit(&app, ITEMS_CHANGED, ());
            }
            AppEvent::NewDrafts { count } => {
                tracing::info!(count, "notifying new drafts");
                notify::new_drafts(&app, *count);
            }
            AppEvent::SentByRule { sent } => {
                tracing::info!(count = sent.len(), "notifying drafts sent by rules");
                notify::sent_by_rule(&app, sent);
            }
            AppEvent::RulesJudged { items } => emit(&app, RULES_JUDGED, items),
            AppEvent::Refusal { refusal, item } => {
                tracing::info!(
                    item = item.id,
                    kind = refusal.kind.as_str(),
                    "notifying a refusal"
                );
                tray::mark_unread(&app, item.id);
                emit(&app, REFUSAL, RefusalNotice { refusal, item });
                notify::refusal(&app, refusal, item);
            }
        }
        tray::refresh_later(&app);
    })
}

/// Sends `payload` to the main window; a failure (the window is gone at exit) is only logged.
pub fn emit(app: &AppHandle, event: &str, payload: impl Serialize + Clone) {
    if let Err(error) = app.emit_to(MAIN_WINDOW, event, payload) {
        tracing::debug!(event, error = %error, "cannot emit to the main window");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachability_reaches_the_ui_in_camel_case() {
        let payload = Reachability {
            account_id: "gmail-1",
            online: false,
            detail: Some("connection refused"),
        };
        assert_eq!(
            serde_json::to_value(payload).unwrap(),
            serde_json::json!({"accountId": "gmail-1", "online": false, "detail": "connection refused"})
        );
    }

    #[test]
    fn open_item_names_the_item_by_id() {
        assert_eq!(
            serde_json::to_value(OpenItem { id: 7 }).unwrap(),
            serde_json::json!({"id": 7})
        );
    }
}
