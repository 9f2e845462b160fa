//! Shared helpers for the end-to-end suites.
//!
//! `webdriver` is a small W3C WebDriver client; `desktop` starts the real `countersign-desktop`
//! binary under `WebKitWebDriver` with its own data directory and environment; `fixture` prepares
//! that data directory through `countersign-core` against the fakes (the app itself is still
//! only ever driven from the outside, through its window).

#![deny(missing_docs)]

pub mod desktop;
pub mod fixture;
pub mod webdriver;
