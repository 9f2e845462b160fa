//! The main window: built from `tauri.conf.json` (where it is marked `create: false` so the
//! shell decides what it loads) with the webview's memory settings for an app that lives in the
//! tray all day.

use anyhow::Context;
#[cfg(any(debug_assertions, feature = "demo"))]
use tauri::WebviewUrl;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

use crate::events::MAIN_WINDOW;

/// What the main window loads.
pub enum Page {
    /// The Countersign UI (`ui/dist/index.html`).
    App,
    /// `ui/dist/blank.html`: the floor a measurement compares the app with.
    #[cfg(any(debug_assertions, feature = "demo"))]
    Blank,
}

/// Creates the main window (hidden, as configured) loading `page`.
pub fn create(app: &App, page: Page) -> anyhow::Result<WebviewWindow> {
    #[allow(unused_mut)] // only debug/demo builds change the page
    let mut config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == MAIN_WINDOW)
        .context("tauri.conf.json has no main window")?
        .clone();
    match page {
        Page::App => {}
        #[cfg(any(debug_assertions, feature = "demo"))]
        Page::Blank => config.url = WebviewUrl::App("blank.html".into()),
    }
    let window = WebviewWindowBuilder::from_config(app.handle(), &config)
        .context("cannot prepare the main window")?
        .build()
        .context("cannot open the main window")?;
    small_footprint(&window);
    Ok(window)
}

/// WebKit settings that cost the owner nothing visible: the window shows one page that never
/// navigates, so a back/forward page cache and a browser-sized memory cache of resources
/// (all of them local, from `ui/dist`) only hold memory.
#[cfg(target_os = "linux")]
fn small_footprint(window: &WebviewWindow) {
    let applied = window.with_webview(|webview| {
        use webkit2gtk::{CacheModel, SettingsExt, WebContextExt, WebViewExt};
        let view = webview.inner();
        if let Some(context) = view.context() {
            // WebKit's smallest memory cache: what a viewer of one local document needs.
            context.set_cache_model(CacheModel::DocumentViewer);
        }
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_enable_page_cache(false);
        }
    });
    if let Err(error) = applied {
        tracing::warn!(error = %error, "cannot apply the webview's memory settings");
    }
}

#[cfg(not(target_os = "linux"))]
fn small_footprint(_window: &WebviewWindow) {}
