//! `measure-desktop --empty DIR --full DIR [--runs N] [--thunderbird PROFILE]`: figures only, no
//! assertions. Launches `countersign-desktop` through WebDriver (as the desktop suite does;
//! needs a display and `WebKitWebDriver`) in three setups, alternating, `N`
//! times each (default 3):
//!
//! - **floor**: the same binary with `--blank-window` (the same window and webview showing one
//!   static heading: no UI bundle, no mirror, no sync, no tray);
//! - **empty**: the app on the empty mirror in the first DIR;
//! - **full**: the app on the mirror in the second DIR (`scripts/measure-desktop.sh` fills it
//!   with 10,000 drafts).
//!
//! For each it prints the start (the process's start, from `/proc/<pid>/stat`, to the first
//! paint: the page's marker element found, then two animation frames) and, 5 s after the
//! paint, the RSS and PSS (`/proc/<pid>/smaps_rollup`) of the app and of every process under it
//! (WebKit's web and network processes), as medians. With `--thunderbird`, Thunderbird is
//! started on that profile the same number of times and measured the same way, its paint read
//! from the X screen (see [`measure_thunderbird`]); the full mirror's start is then also read
//! from the screen, so the start ratio to Thunderbird compares like with like. Then the ratios
//! and the goals, each PASS or MISS.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use countersign_e2e::desktop::{DesktopApp, LaunchOptions, Prerequisites};

/// How long after the paint the memory is read: the page and its caches have settled.
const SETTLE: Duration = Duration::from_secs(5);

/// One Countersign setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Setup {
    Floor,
    Empty,
    Full,
}

impl Setup {
    fn name(self) -> &'static str {
        match self {
            Setup::Floor => "floor (--blank-window)",
            Setup::Empty => "empty mirror",
            Setup::Full => "full mirror",
        }
    }

    /// The element whose presence (then two frames) is the paint.
    fn painted_when(self) -> &'static str {
        match self {
            Setup::Floor => "#floor",
            // The UI marks its first queue (here: none) painted.
            Setup::Empty => "html[data-first-paint]",
            Setup::Full => "[role=option]",
        }
    }
}

/// One run's figures.
#[derive(Clone, Debug, Default)]
struct Sample {
    start_ms: f64,
    /// Start to "visually complete" read from the X screen (as Thunderbird's), when watched.
    screen_ms: Option<f64>,
    rss_kib: u64,
    pss_kib: u64,
    /// Per process name: (RSS, PSS) in KiB.
    processes: BTreeMap<String, (u64, u64)>,
}

struct Options {
    empty: PathBuf,
    full: PathBuf,
    runs: usize,
    thunderbird: Option<PathBuf>,
}

fn options() -> Result<Options> {
    let usage = "usage: measure-desktop --empty DIR --full DIR [--runs N] [--thunderbird PROFILE]";
    let mut args = std::env::args().skip(1);
    let (mut empty, mut full, mut runs, mut thunderbird) = (None, None, 3, None);
    while let Some(arg) = args.next() {
        let mut value = || args.next().context(usage);
        match arg.as_str() {
            "--empty" => empty = Some(PathBuf::from(value()?)),
            "--full" => full = Some(PathBuf::from(value()?)),
            "--runs" => runs = value()?.parse().context("--runs takes a number")?,
            "--thunderbird" => thunderbird = Some(PathBuf::from(value()?)),
            _ => bail!("{usage}"),
        }
    }
    Ok(Options {
        empty: empty.context(usage)?,
        full: full.context(usage)?,
        runs,
        thunderbird,
    })
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = options()?;
    let prerequisites = DesktopApp::prerequisites().map_err(anyhow::Error::msg)?;
    let mut samples: BTreeMap<Setup, Vec<Sample>> = BTreeMap::new();
    let mut thunderbird = Vec::new();
    for run in 1..=options.runs {
        for setup in [Setup::Floor, Setup::Empty, Setup::Full] {
            let dir = match setup {
                Setup::Floor => None,
                Setup::Empty => Some(options.empty.clone()),
                Setup::Full => Some(options.full.clone()),
            };
            // The full mirror's paint is also read from the screen, as Thunderbird's.
            let watch = setup == Setup::Full && options.thunderbird.is_some();
            let sample = measure_app(&prerequisites, setup, dir, watch)
                .await
                .with_context(|| format!("cannot measure the {} (run {run})", setup.name()))?;
            println!(
                "run {run}: {:<24} start {:>6.0} ms  RSS {:>5} MiB  PSS {:>5} MiB{}",
                setup.name(),
                sample.start_ms,
                sample.rss_kib / 1024,
                sample.pss_kib / 1024,
                sample
                    .screen_ms
                    .map_or(String::new(), |ms| format!("  screen settled {ms:.0} ms"))
            );
            samples.entry(setup).or_default().push(sample);
        }
        if let Some(profile) = &options.thunderbird {
            let sample = measure_thunderbird(profile)
                .await
                .with_context(|| format!("cannot measure Thunderbird (run {run})"))?;
            println!(
                "run {run}: {:<24} start {:>6.0} ms  RSS {:>5} MiB  PSS {:>5} MiB",
                "Thunderbird",
                sample.start_ms,
                sample.rss_kib / 1024,
                sample.pss_kib / 1024
            );
            thunderbird.push(sample);
        }
    }

    println!("\nmedians of {} runs:", options.runs);
    let median_of = |list: &[Sample]| Figures::of(list);
    let floor = median_of(&samples[&Setup::Floor]);
    let empty = median_of(&samples[&Setup::Empty]);
    let full = median_of(&samples[&Setup::Full]);
    let thunderbird = (!thunderbird.is_empty()).then(|| median_of(&thunderbird));
    for (name, figures, list) in [
        (Setup::Floor.name(), &floor, &samples[&Setup::Floor]),
        (Setup::Empty.name(), &empty, &samples[&Setup::Empty]),
        (Setup::Full.name(), &full, &samples[&Setup::Full]),
    ] {
        figures.print(name);
        print_processes(list);
    }
    if let Some(figures) = &thunderbird {
        figures.print("Thunderbird");
    }

    println!("\nratios (full mirror):");
    println!(
        "  to the floor:       start {:.2}×, PSS {:.2}×, RSS {:.2}×",
        full.start_ms / floor.start_ms,
        full.pss_mib / floor.pss_mib,
        full.rss_mib / floor.rss_mib
    );
    println!(
        "  to the empty mirror: start {:.2}×, PSS {:+.1} MiB, RSS {:+.1} MiB",
        full.start_ms / empty.start_ms,
        full.pss_mib - empty.pss_mib,
        full.rss_mib - empty.rss_mib
    );
    match &thunderbird {
        Some(tb) => println!(
            "  to Thunderbird:     start {:.2}× (both read from the screen), PSS {:.2}×, RSS {:.2}×",
            full.screen_ms.unwrap_or(f64::NAN) / tb.start_ms,
            full.pss_mib / tb.pss_mib,
            full.rss_mib / tb.rss_mib
        ),
        None => println!("  to Thunderbird:     not measured (no --thunderbird)"),
    }

    println!("\ngoals (issue 16):");
    let over_empty = full.pss_mib - empty.pss_mib;
    goal(
        "the full mirror (10,000 drafts) costs at most 20 MiB PSS over the empty one",
        Some(over_empty <= 20.0),
        &format!("{over_empty:+.1} MiB"),
    );
    let to_floor = full.pss_mib / floor.pss_mib;
    goal(
        "summed PSS at most 1.3× the minimal window's",
        Some(to_floor <= 1.3),
        &format!("{to_floor:.2}×"),
    );
    let pss_to_tb = thunderbird.as_ref().map(|tb| full.pss_mib / tb.pss_mib);
    goal(
        "summed PSS at most 0.6× Thunderbird's",
        pss_to_tb.map(|r| r <= 0.6),
        &pss_to_tb.map_or("not measured".into(), |r| format!("{r:.2}×")),
    );
    // Both read from the X screen ("visually complete"), the same way.
    let start_to_tb = thunderbird
        .as_ref()
        .and_then(|tb| Some(full.screen_ms? / tb.start_ms));
    goal(
        "start to painted queue at most 0.5× Thunderbird's",
        start_to_tb.map(|r| r <= 0.5),
        &start_to_tb.map_or("not measured".into(), |r| format!("{r:.2}×")),
    );
    let start_to_floor = full.start_ms / floor.start_ms;
    goal(
        "start to painted queue within 1.3× the minimal window's",
        Some(start_to_floor <= 1.3),
        &format!("{start_to_floor:.2}×"),
    );
    Ok(())
}

fn goal(what: &str, met: Option<bool>, figure: &str) {
    let verdict = match met {
        Some(true) => "PASS",
        Some(false) => "MISS",
        None => "----",
    };
    println!("  {verdict}  {what}: {figure}");
}

/// Medians of a setup's runs.
struct Figures {
    start_ms: f64,
    /// Start to the settled screen, when it was watched in every run.
    screen_ms: Option<f64>,
    rss_mib: f64,
    pss_mib: f64,
}

impl Figures {
    fn of(samples: &[Sample]) -> Figures {
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let screen: Option<Vec<f64>> = samples.iter().map(|s| s.screen_ms).collect();
        Figures {
            start_ms: median(samples.iter().map(|s| s.start_ms).collect()),
            screen_ms: screen.map(median),
            rss_mib: median(samples.iter().map(|s| s.rss_kib as f64 / 1024.0).collect()),
            pss_mib: median(samples.iter().map(|s| s.pss_kib as f64 / 1024.0).collect()),
        }
    }

    fn print(&self, name: &str) {
        println!(
            "  {name:<24} start {:>6.0} ms  RSS {:>6.1} MiB  PSS {:>6.1} MiB{}",
            self.start_ms,
            self.rss_mib,
            self.pss_mib,
            self.screen_ms.map_or(String::new(), |ms| format!(
                "  (screen settled: {ms:.0} ms)"
            ))
        );
    }
}

/// The last run's processes of a setup, by name.
fn print_processes(samples: &[Sample]) {
    if let Some(last) = samples.last() {
        for (name, (rss, pss)) in &last.processes {
            println!(
                "      {name:<20} RSS {:>6.1} MiB  PSS {:>6.1} MiB",
                *rss as f64 / 1024.0,
                *pss as f64 / 1024.0
            );
        }
    }
}

/// One launch of the app in `setup`, on `dir` (a fresh empty one when `None`).
async fn measure_app(
    prerequisites: &Prerequisites,
    setup: Setup,
    dir: Option<PathBuf>,
    watch_screen: bool,
) -> Result<Sample> {
    let screen = watch_screen.then(ScreenWatch::start).transpose()?;
    let scratch = tempfile::Builder::new()
        .prefix("countersign-floor-")
        .tempdir()?;
    let dir = dir.unwrap_or_else(|| scratch.path().to_path_buf());
    let args = match setup {
        Setup::Floor => vec!["--blank-window".to_string()],
        Setup::Empty | Setup::Full => Vec::new(),
    };
    let app = DesktopApp::launch(
        prerequisites,
        LaunchOptions {
            data_dir: Some(dir.clone()),
            args,
            ..LaunchOptions::default()
        },
    )
    .await?;
    // Every step says what it was doing, with the app's log: a measurement that fails must
    // say what failed (a bare WebDriver error once left only "cannot measure the full mirror").
    let measured = measure_started(&app, setup, &dir, screen).await;
    let quit = app
        .quit()
        .await
        .context("cannot quit the app after measuring it");
    let sample = measured?;
    quit?;
    Ok(sample)
}

/// The paint, the memory and (with `screen`) the screen's settling of the app just launched.
async fn measure_started(
    app: &DesktopApp,
    setup: Setup,
    dir: &Path,
    screen: Option<ScreenWatch>,
) -> Result<Sample> {
    let with_log = |step: &str| format!("{step}\n{}", app.log_tail());
    let session = app.session();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Polled tightly: the figure is only as precise as this interval.
    while session
        .find_all(setup.painted_when())
        .await
        .with_context(|| with_log("cannot look for the painted queue"))?
        .is_empty()
    {
        if Instant::now() > deadline {
            bail!("nothing painted within 120 s\n{}", app.log_tail());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    session
        .wait_for_paint()
        .await
        .with_context(|| with_log("cannot wait for the paint"))?;
    let painted = uptime_s()?;
    let pid = find_app_pid(&dir.display().to_string())
        .with_context(|| with_log("cannot find the app process"))?;
    let start_ms = (painted
        - process_start_s(pid).with_context(|| with_log("cannot read the app's start time"))?)
        * 1000.0;
    tokio::time::sleep(SETTLE).await;
    let mut sample = memory_of_tree(pid, start_ms);
    if let Some(screen) = screen {
        // Overlay scrollbars fade, the status bar changes once the syncs ran: wait for the
        // screen to be still (the memory was read at the paint's 5 s, as for the others).
        let deadline = Instant::now() + Duration::from_secs(60);
        let settled = loop {
            if let Some(at) = screen.settled_at() {
                break at;
            }
            if let Some(failure) = screen.failure() {
                bail!(with_log(&format!("cannot watch the screen: {failure}")));
            }
            if Instant::now() > deadline {
                bail!(with_log("the screen never settled within 60 s"));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        sample.screen_ms = Some((settled - process_start_s(pid)?) * 1000.0);
    }
    Ok(sample)
}

/// The X screen (`xwd -root`) read every 50 ms on a thread, until dropped: for each frame,
/// when it was read and whether it differs from the last different one by at least
/// [`SIGNIFICANT`] of the screen.
struct ScreenWatch {
    changes: Arc<Mutex<Vec<(f64, bool)>>>,
    stop: Arc<AtomicBool>,
    /// Why the watching thread stopped early, if it did.
    failed: Arc<Mutex<Option<String>>>,
}

/// Changes smaller than this share of the screen do not count: an overlay scrollbar fading
/// out, a status line. Rows of a list appearing change far more.
const SIGNIFICANT: f64 = 0.05;

/// How long the screen must stay without a significant change for what is on it to count as
/// painted.
const STILL: f64 = 2.0;

impl ScreenWatch {
    fn start() -> Result<ScreenWatch> {
        let mut reference = screen()?;
        let changes = Arc::new(Mutex::new(vec![(uptime_s()?, false)]));
        let stop = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(Mutex::new(None));
        let (seen, stopping, failing) = (changes.clone(), stop.clone(), failed.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                let frame = uptime_s().and_then(|at| Ok((at, screen()?)));
                let (at, frame) = match frame {
                    Ok(read) => read,
                    Err(e) => {
                        *failing.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{e:#}"));
                        break;
                    }
                };
                let significant = changed_share(&reference, &frame) >= SIGNIFICANT;
                if significant {
                    reference = frame;
                }
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((at, significant));
            }
        });
        Ok(ScreenWatch {
            changes,
            stop,
            failed,
        })
    }

    /// Why the watch stopped reading the screen, if it did.
    fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// When the screen last changed significantly, once it has then stayed without such a
    /// change for [`STILL`] seconds (and had changed at all since the watch started).
    fn settled_at(&self) -> Option<f64> {
        let changes = self.changes.lock().unwrap_or_else(|e| e.into_inner());
        let (last_change, _) = *changes.iter().rev().find(|(_, significant)| *significant)?;
        let (now, _) = *changes.last()?;
        (now - last_change >= STILL).then_some(last_change)
    }
}

impl Drop for ScreenWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The whole X screen as `xwd -root` dumps it.
fn screen() -> Result<Vec<u8>> {
    let output = Command::new("xwd")
        .args(["-root", "-silent"])
        .output()
        .context("cannot run xwd (Debian: x11-apps)")?;
    if !output.status.success() {
        bail!(
            "xwd failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
}

/// The share of 64-byte blocks (16 pixels of 32 bits) that differ between two dumps.
fn changed_share(a: &[u8], b: &[u8]) -> f64 {
    if a.len() != b.len() {
        return 1.0;
    }
    let blocks = a.len() / 64;
    let changed = a
        .chunks_exact(64)
        .zip(b.chunks_exact(64))
        .filter(|(x, y)| x != y)
        .count();
    changed as f64 / blocks.max(1) as f64
}

/// One start of Thunderbird on (a fresh copy of) `profile`, in a 1200×800 window as the app's.
///
/// Thunderbird has no WebDriver, so its paint is read from the X screen ([`ScreenWatch`]): `xwd`
/// dumps the root window every 50 ms from the launch; the paint is the last change of at least
/// 5 % of the screen before 2 s without one (the window mapped and its folder with the message
/// list drawn). The full mirror's start is read the same way for the ratio to Thunderbird.
async fn measure_thunderbird(profile: &Path) -> Result<Sample> {
    let copy = tempfile::Builder::new()
        .prefix("countersign-thunderbird-")
        .tempdir()?;
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", profile.display()))
        .arg(copy.path())
        .status()
        .context("cannot copy the Thunderbird profile")?;
    if !status.success() {
        bail!("cannot copy the Thunderbird profile");
    }
    // Its first frame is the screen before Thunderbird.
    let screen = ScreenWatch::start()?;
    let mut child = Command::new("thunderbird")
        .args(["--no-remote", "--profile"])
        .arg(copy.path())
        .env("MOZ_CRASHREPORTER_DISABLE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start thunderbird")?;
    let pid = child.id();
    let started = process_start_s(pid)?;
    // Its paint is known once the screen has been still for a while; the memory is read 5 s
    // after it, as the app's.
    let deadline = Instant::now() + Duration::from_secs(120);
    let last_change = loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if let Some(at) = screen.settled_at() {
            break at;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("Thunderbird's screen never settled within 120 s");
        }
    };
    drop(screen);
    let wait = (last_change + SETTLE.as_secs_f64() - uptime_s()?).max(0.0);
    tokio::time::sleep(Duration::from_secs_f64(wait)).await;
    let start_ms = (last_change - started) * 1000.0;
    let mut sample = memory_of_tree(pid, start_ms);
    sample.screen_ms = Some(start_ms);
    let _ = child.kill();
    let _ = child.wait();
    // Its child processes (content, GPU, …) end with it; wait so the next run starts clean.
    for _ in 0..100 {
        if descendants(pid).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(sample)
}

/// Seconds since boot (`/proc/uptime`, 10 ms steps).
fn uptime_s() -> Result<f64> {
    let text = std::fs::read_to_string("/proc/uptime")?;
    text.split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .context("cannot read /proc/uptime")
}

/// When `pid` started, in seconds since boot (`/proc/<pid>/stat`, field 22, in clock ticks).
fn process_start_s(pid: u32) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) may hold spaces: count the fields after its closing paren.
    let after = stat.rsplit_once(')').context("odd /proc/<pid>/stat")?.1;
    let ticks: f64 = after
        .split_whitespace()
        .nth(19)
        .and_then(|s| s.parse().ok())
        .context("no start time in /proc/<pid>/stat")?;
    Ok(ticks / clock_ticks_per_second())
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// RSS and PSS of `pid` and of every process under it.
fn memory_of_tree(pid: u32, start_ms: f64) -> Sample {
    let mut sample = Sample {
        start_ms,
        ..Sample::default()
    };
    for process in std::iter::once(pid).chain(descendants(pid)) {
        let rss = status_kib(process, "VmRSS:").unwrap_or(0);
        let pss = pss_kib(process).unwrap_or(0);
        sample.rss_kib += rss;
        sample.pss_kib += pss;
        let name = std::fs::read_to_string(format!("/proc/{process}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| process.to_string());
        let entry = sample.processes.entry(name).or_default();
        entry.0 += rss;
        entry.1 += pss;
    }
    sample
}

/// Every process under `pid` (children, their children, …).
fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((child, status_kib(child, "PPid:")? as u32))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for (child, _) in parents.iter().filter(|(_, p)| *p == parent) {
            found.push(*child);
            frontier.push(*child);
        }
    }
    found
}

/// The number after `field` in `/proc/<pid>/status` (`VmRSS:` in KiB, `PPid:`).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Proportional set size of `pid`, in KiB: shared pages counted by the share each process has.
fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
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
