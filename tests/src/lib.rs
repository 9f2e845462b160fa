//! Shared helpers for the end-to-end suites.
//!
//! `webdriver` is a small W3C WebDriver client; `desktop` starts the real `countersign-desktop`
//! binary under `tauri-driver` with its own data directory and environment. They must not
//! depend on the app's crates: the suites test the binaries from the outside, as a user would.

pub mod desktop;
pub mod webdriver;
