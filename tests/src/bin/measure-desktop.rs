//! `measure-desktop DIR`: launches `countersign-desktop --data-dir DIR` through WebDriver (as
//! the desktop suite does; needs a display, `tauri-driver` and `WebKitWebDriver`) and prints
//! figures only, no assertions: cold start to the first painted queue row, and the resident
//! memory (VmRSS) of the app process and of the WebKit processes it started.
//! `scripts/measure-desktop.sh` fills DIR with 10,000 drafts first.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use countersign_e2e::desktop::{DesktopApp, LaunchOptions};

#[tokio::main]
async fn main() -> Result<()> {
    let dir = std::env::args()
        .nth(1)
        .context("usage: measure-desktop DIR")?;
    let prerequisites = DesktopApp::prerequisites().map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let app = DesktopApp::launch(
        &prerequisites,
        LaunchOptions {
            data_dir: Some(dir.clone().into()),
            env: vec![("COUNTERSIGN_SECRET_STORE".into(), "file".into())],
            ..LaunchOptions::default()
        },
    )
    .await?;
    let session = app.session();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Polled tightly: the figure is only as precise as this interval.
    while session.find_all("[role=option]").await?.is_empty() {
        if Instant::now() > deadline {
            bail!("no queue row appeared within 120 s\n{}", app.log_tail());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    session.wait_for_paint().await?;
    let first_row = started.elapsed();
    let rows = session.find_all("[role=option]").await?.len();
    let total = session
        .execute(
            "return document.querySelector('[role=option]').getAttribute('aria-setsize')",
            vec![],
        )
        .await?;
    let in_page = session
        .execute("return Math.round(performance.now())", vec![])
        .await?;

    let app_pid = find_app_pid(&dir).context("cannot find the app process")?;
    let app_rss = vm_rss_kib(app_pid).unwrap_or(0);
    let webkit_rss: u64 = children(app_pid).into_iter().filter_map(vm_rss_kib).sum();

    println!("queue size: {} items", total.as_str().unwrap_or("?"));
    println!("rows in the DOM (virtualized): {rows}");
    println!(
        "cold start → first painted queue row: {} ms (from launching the driver; the page \
         itself was {} ms old)",
        first_row.as_millis(),
        in_page
    );
    println!("app VmRSS: {} MiB", app_rss / 1024);
    println!("WebKit child processes VmRSS: {} MiB", webkit_rss / 1024);
    app.quit().await?;
    Ok(())
}

/// The `countersign-desktop` process running on `dir`.
fn find_app_pid(dir: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let exe = Path::new(std::str::from_utf8(args.first()?).ok()?);
            let is_app = exe.file_name()? == "countersign-desktop";
            let on_dir = args.contains(&dir.as_bytes());
            (is_app && on_dir).then_some(pid)
        })
}

/// The processes whose parent is `pid` (WebKit's web and network processes).
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            let status = std::fs::read_to_string(entry.path().join("status")).ok()?;
            let parent: u32 = status
                .lines()
                .find_map(|l| l.strip_prefix("PPid:"))?
                .trim()
                .parse()
                .ok()?;
            (parent == pid).then_some(child)
        })
        .collect()
}

/// VmRSS of `pid`, in KiB.
fn vm_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
