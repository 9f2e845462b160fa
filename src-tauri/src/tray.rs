//! The tray icon: its variant and tooltip say how many drafts await review, and turn to
//! "alert" when a refusal is unread or an account is offline; its menu opens the window, syncs,
//! pauses or resumes sending, holds everything (no rule decides) or lets the rules decide
//! again, and quits. Closing the window only hides it (see `main.rs`).

use std::collections::HashSet;
use std::sync::Mutex;

use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};

use crate::events::{self, MAIN_WINDOW};
use crate::state::AppState;

/// The tray icon's id.
pub const TRAY_ID: &str = "main";

const MENU_OPEN: &str = "open";
const MENU_SYNC: &str = "sync";
const MENU_PAUSE: &str = "pause";
const MENU_HOLD: &str = "hold";
const MENU_QUIT: &str = "quit";

/// Which tray icon is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrayIcon {
    /// Nothing awaits the owner.
    Idle,
    /// Drafts await review.
    Pending,
    /// A refusal is unread or an account is offline.
    Alert,
}

impl TrayIcon {
    fn png(self) -> &'static [u8] {
        match self {
            TrayIcon::Idle => include_bytes!("../../icons/tray-idle.png"),
            TrayIcon::Pending => include_bytes!("../../icons/tray-pending.png"),
            TrayIcon::Alert => include_bytes!("../../icons/tray-alert.png"),
        }
    }

    fn image(self) -> tauri::Result<Image<'static>> {
        Image::from_bytes(self.png())
    }
}

/// What the tray shows, from the counts that matter to the owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrayLook {
    /// The icon variant.
    pub icon: TrayIcon,
    /// The tooltip.
    pub tooltip: String,
}

impl TrayLook {
    /// The look for `awaiting` drafts awaiting review, `unread_refusals` refusals the owner has
    /// not opened yet and `offline_accounts` accounts whose service does not answer.
    pub fn of(awaiting: u64, unread_refusals: usize, offline_accounts: usize) -> TrayLook {
        let icon = if unread_refusals > 0 || offline_accounts > 0 {
            TrayIcon::Alert
        } else if awaiting > 0 {
            TrayIcon::Pending
        } else {
            TrayIcon::Idle
        };
        TrayLook {
            icon,
            tooltip: format!("Countersign — {awaiting} awaiting review"),
        }
    }
}

/// The label of the pause item, which follows the state.
pub fn pause_label(paused: bool) -> &'static str {
    if paused {
        "Resume sending"
    } else {
        "Pause sending"
    }
}

/// The label of the "Hold everything" item, which follows the switch.
pub fn hold_label(hold_everything: bool) -> &'static str {
    if hold_everything {
        "Let rules decide again"
    } else {
        "Hold everything (no rule decides)"
    }
}

/// What the tray keeps between refreshes (managed state).
pub struct Tray {
    pause: MenuItem<Wry>,
    hold: MenuItem<Wry>,
    /// Items with a refusal the owner was notified of but has not opened yet.
    unread: Mutex<HashSet<i64>>,
}

/// Builds the tray icon and its menu, and manages [`Tray`].
pub fn create(app: &tauri::App) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, MENU_OPEN, "Open", true, None::<&str>)?;
    let sync = MenuItem::with_id(app, MENU_SYNC, "Sync now", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, MENU_PAUSE, pause_label(false), true, None::<&str>)?;
    let hold = MenuItem::with_id(app, MENU_HOLD, hold_label(false), true, None::<&str>)?;
    let quit = MenuItem::with_id(app, MENU_QUIT, "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&open, &sync, &pause, &hold, &quit])?;
    let look = TrayLook::of(0, 0, 0);
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(look.icon.image()?)
        .tooltip(&look.tooltip)
        .menu(&menu)
        .show_menu_on_left_click(false)
        .on_menu_event(on_menu)
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                show_main(tray.app_handle());
            }
        })
        .build(app)?;
    app.manage(Tray {
        pause,
        hold,
        unread: Mutex::default(),
    });
    Ok(())
}

fn on_menu(app: &AppHandle, event: MenuEvent) {
    match event.id().as_ref() {
        MENU_OPEN => show_main(app),
        MENU_SYNC => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let state = app.state::<AppState>();
                if let Ok(running) = state.app() {
                    if let Err(error) = running.sync_now().await {
                        tracing::warn!(error = %error, "cannot sync from the tray");
                    }
                }
            });
        }
        MENU_PAUSE => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let state = app.state::<AppState>();
                let Ok(store) = state.store() else { return };
                let paused = store.settings().await.map(|s| s.paused).unwrap_or(false);
                if let Err(error) = store.set_paused(!paused, crate::commands::ACTOR).await {
                    tracing::warn!(error = %error, "cannot switch sending from the tray");
                }
                // The status bar shows the switch: let the UI reload.
                events::emit(&app, events::ITEMS_CHANGED, ());
                refresh(&app).await;
            });
        }
        MENU_HOLD => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let state = app.state::<AppState>();
                let Ok(store) = state.store() else { return };
                let on = store
                    .settings()
                    .await
                    .map(|s| s.hold_everything)
                    .unwrap_or(false);
                if let Err(error) = crate::commands::settings::hold_everything(store, !on).await {
                    tracing::warn!(error = %error.message, "cannot switch Hold everything from the tray");
                }
                // The status bar shows the switch and taken-back rows changed: reload.
                events::emit(&app, events::ITEMS_CHANGED, ());
                refresh(&app).await;
            });
        }
        MENU_QUIT => app.exit(0),
        _ => {}
    }
}

/// Shows, unminimizes and focuses the main window.
pub fn show_main(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        for (what, done) in [
            ("show", window.show()),
            ("unminimize", window.unminimize()),
            ("focus", window.set_focus()),
        ] {
            if let Err(e) = done {
                tracing::warn!(error = %e, "cannot {what} the main window");
            }
        }
    }
}

/// Whether the tray exists (the window may then hide instead of closing).
pub fn exists(app: &AppHandle) -> bool {
    app.try_state::<Tray>().is_some()
}

/// A refusal of `item_id` was notified: the tray alerts until the owner opens that item.
pub fn mark_unread(app: &AppHandle, item_id: i64) {
    if let Some(tray) = app.try_state::<Tray>() {
        tray.unread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(item_id);
    }
}

/// The owner opened `item_id`: its refusal is read.
pub fn mark_read(app: &AppHandle, item_id: i64) {
    let Some(tray) = app.try_state::<Tray>() else {
        return;
    };
    let was_unread = tray
        .unread
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&item_id);
    if was_unread {
        refresh_later(app);
    }
}

/// Refreshes the tray on a background task.
pub fn refresh_later(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move { refresh(&app).await });
}

/// Sets the icon, tooltip and pause label from the mirror.
pub async fn refresh(app: &AppHandle) {
    let (Some(state), Some(tray)) = (app.try_state::<AppState>(), app.try_state::<Tray>()) else {
        return;
    };
    let Ok(store) = state.store() else { return };
    let awaiting = store.count_awaiting_review().await.unwrap_or(0);
    let mut offline = 0;
    for account in store.list_accounts().await.unwrap_or_default() {
        if store
            .sync_cursor(&account.id)
            .await
            .is_ok_and(|c| !c.online)
        {
            offline += 1;
        }
    }
    let settings = store.settings().await.ok();
    let paused = settings.as_ref().is_some_and(|s| s.paused);
    let hold_everything = settings.as_ref().is_some_and(|s| s.hold_everything);
    let unread = tray.unread.lock().unwrap_or_else(|e| e.into_inner()).len();
    let look = TrayLook::of(awaiting, unread, offline);
    if let Some(icon) = app.tray_by_id(TRAY_ID) {
        match look.icon.image() {
            Ok(image) => {
                if let Err(e) = icon.set_icon(Some(image)) {
                    tracing::warn!(error = %e, "cannot set the tray icon");
                }
            }
            Err(error) => tracing::warn!(error = %error, "cannot load the tray icon"),
        }
        if let Err(e) = icon.set_tooltip(Some(&look.tooltip)) {
            tracing::warn!(error = %e, "cannot set the tray tooltip");
        }
    }
    if let Err(e) = tray.pause.set_text(pause_label(paused)) {
        tracing::warn!(error = %e, "cannot relabel the tray's pause item");
    }
    if let Err(e) = tray.hold.set_text(hold_label(hold_everything)) {
        tracing::warn!(error = %e, "cannot relabel the tray's hold item");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_queue_shows_the_idle_icon() {
        let look = TrayLook::of(0, 0, 0);
        assert_eq!(look.icon, TrayIcon::Idle);
        assert_eq!(look.tooltip, "Countersign — 0 awaiting review");
    }

    #[test]
    fn drafts_awaiting_review_show_the_pending_icon_and_their_number() {
        let look = TrayLook::of(3, 0, 0);
        assert_eq!(look.icon, TrayIcon::Pending);
        assert_eq!(look.tooltip, "Countersign — 3 awaiting review");
    }

    #[test]
    fn an_unread_refusal_turns_the_icon_to_alert_even_with_an_empty_queue() {
        assert_eq!(TrayLook::of(0, 1, 0).icon, TrayIcon::Alert);
        assert_eq!(TrayLook::of(5, 1, 0).icon, TrayIcon::Alert);
    }

    #[test]
    fn an_offline_account_turns_the_icon_to_alert() {
        assert_eq!(TrayLook::of(2, 0, 1).icon, TrayIcon::Alert);
    }

    #[test]
    fn the_pause_item_offers_the_opposite_of_the_current_state() {
        assert_eq!(pause_label(false), "Pause sending");
        assert_eq!(pause_label(true), "Resume sending");
    }

    #[test]
    fn the_hold_item_offers_the_opposite_of_the_switch() {
        assert_eq!(hold_label(false), "Hold everything (no rule decides)");
        assert_eq!(hold_label(true), "Let rules decide again");
    }

    #[test]
    fn every_tray_icon_is_a_png_that_loads() {
        for icon in [TrayIcon::Idle, TrayIcon::Pending, TrayIcon::Alert] {
            let image = icon.image().unwrap();
            assert!(image.width() > 0 && image.height() > 0, "{icon:?}");
        }
    }
}
