//! Opening a web page in the owner's browser (not in the webview, which never navigates).
//!
//! `BROWSER`, when set, names the program to run with the URL (the convention xdg-utils and
//! most command-line tools follow); otherwise the platform's opener: `xdg-open` on Linux and
//! the BSDs, `open` on macOS, `explorer` on Windows.

use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// Opens `url` (https only) in the system browser, without waiting for it.
pub fn open(url: &str) -> Result<()> {
    if !url.starts_with("https://") {
        bail!("cannot open a link that is not https");
    }
    let program = std::env::var_os("BROWSER")
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| platform_opener().into());
    Command::new(&program)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", program.to_string_lossy()))?;
    Ok(())
}

fn platform_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}
