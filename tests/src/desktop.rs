//! Starting the real `countersign-desktop` binary under automation, for the desktop suite.
//!
//! Each [`DesktopApp`] gets its own `WebKitWebDriver` (WebKitGTK's W3C WebDriver, Debian's
//! `webkit2gtk-driver`) on a free loopback port, which starts the app and passes its own
//! environment on, so tests can set `COUNTERSIGN_*` variables per app. The app always runs on
//! a data directory the test chose (a fresh temp dir unless told otherwise).
//!
//! No `tauri-driver`: on Linux all it adds is two things the harness does itself — it turns
//! `tauri:options` into WebKitGTK's `webkitgtk:browserOptions` (`binary`, `args`) and sets
//! `TAURI_WEBVIEW_AUTOMATION=true`, without which a Tauri 2 release build (the installed
//! package) does not let WebKit automate its window (tauri-apps/tauri,
//! `crates/tauri-driver/src/{server,webdriver}.rs`). Setup then has nothing to compile.
//!
//! The suite needs a display (X11/Xvfb) and `WebKitWebDriver`. Without them,
//! [`DesktopApp::prerequisites`] says what is missing; [`skip_or_fail`] turns that into a
//! failure, or a loud skip when the run asks for one (`COUNTERSIGN_SKIP_DESKTOP=1`, never in CI).

use std::fs::File;
use std::io::Write as _;
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rustix::process::{kill_process_group, Pid, Signal};
use serde_json::json;

use crate::webdriver::Session;

/// The app binary's name in the target directory.
const APP_BINARY: &str = "countersign-desktop";

/// How long the app may take to show its first page (WebKit start-up on a busy CI machine).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How to start the app.
#[derive(Debug, Default)]
pub struct LaunchOptions {
    /// The data directory (`--data-dir`). `None`: a fresh temp dir owned by the [`DesktopApp`].
    pub data_dir: Option<PathBuf>,
    /// More command-line arguments, after `--data-dir`.
    pub args: Vec<String>,
    /// Extra environment variables for the app.
    pub env: Vec<(String, String)>,
    /// Let the app use the OS keyring of its session bus. Off (the default), secrets go to
    /// files (`COUNTERSIGN_SECRET_STORE=file`): a test must never write to, nor start, the
    /// keyring of whoever runs the suite. Only tests that bring their own Secret Service
    /// (`countersign_fakes::secret_service`) turn it on.
    pub os_keyring: bool,
}

/// What the desktop suite needs, found on this machine.
#[derive(Clone, Debug)]
pub struct Prerequisites {
    /// The `WebKitWebDriver` binary.
    pub web_driver: PathBuf,
    /// The `countersign-desktop` binary under test.
    pub app: PathBuf,
}

/// The running app under WebDriver. Dropping it ends the app and its drivers.
pub struct DesktopApp {
    session: Session,
    driver: Driver,
    data_dir: PathBuf,
    // Held so a temp data dir outlives the app.
    _temp_dir: Option<tempfile::TempDir>,
}

/// `WebKitWebDriver` and everything it started (the app, WebKit's helpers), in one process
/// group that is ended on drop, so a failing test leaves no app behind.
struct Driver {
    child: Child,
    log: PathBuf,
    stopped: bool,
}

impl DesktopApp {
    /// Finds what the suite needs, or says in one sentence what is missing.
    pub fn prerequisites() -> std::result::Result<Prerequisites, String> {
        if std::env::var_os("DISPLAY").is_none() {
            return Err(
                "no DISPLAY: run the suite under `xvfb-run -a` (scripts/test.sh does)".into(),
            );
        }
        let web_driver = find_program("WebKitWebDriver").ok_or(
            "no `WebKitWebDriver` on PATH: install Debian's `webkit2gtk-driver` \
             (scripts/setup.sh does)",
        )?;
        let app = app_binary();
        if !app.is_file() {
            return Err(format!(
                "no {} (build it first: `cargo build -p countersign-desktop`)",
                app.display()
            ));
        }
        Ok(Prerequisites { web_driver, app })
    }

    /// Starts the app with `options` and waits until its window has loaded the UI.
    pub async fn launch(prerequisites: &Prerequisites, options: LaunchOptions) -> Result<Self> {
        let (temp_dir, data_dir) = match options.data_dir {
            Some(dir) => (None, dir),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("countersign-e2e-")
                    .tempdir()
                    .context("cannot create a temp data dir")?;
                let path = dir.path().to_path_buf();
                (Some(dir), path)
            }
        };

        let port = free_port()?;
        let log = artifacts_dir()
            .join("e2e-logs")
            .join(format!("app-{port}.log"));
        std::fs::create_dir_all(log.parent().expect("log has a folder"))
            .context("cannot create the e2e log folder")?;
        let log_file = File::create(&log).context("cannot create the app log")?;

        let mut command = Command::new(&prerequisites.web_driver);
        command
            .arg(format!("--port={port}"))
            .arg("--host=127.0.0.1")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().context("cannot share the app log")?)
            .stderr(log_file)
            // Own process group: ending it ends WebKitWebDriver, the app and WebKit's helpers.
            .process_group(0)
            // What lets a Tauri 2 build — a release one too — be automated by WebKit.
            .env("TAURI_WEBVIEW_AUTOMATION", "true")
            // Keep the developer's real mirror out of reach whatever their shell exports.
            .env_remove("COUNTERSIGN_DATA_DIR")
            // No WEBKIT_DISABLE_* switches: with either of them WebKitGTK 2.50 under Xvfb never
            // answers a WebDriver screenshot; its defaults render fine there.
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            );
        if !options.os_keyring {
            command.env("COUNTERSIGN_SECRET_STORE", "file");
        }
        for (key, value) in &options.env {
            command.env(key, value);
        }
        let driver = Driver {
            child: command.spawn().context("cannot start WebKitWebDriver")?,
            log,
            stopped: false,
        };

        let driver_url = format!("http://127.0.0.1:{port}");
        let mut app_args = vec!["--data-dir".to_owned(), data_dir.display().to_string()];
        app_args.extend(options.args);
        let session = async {
            // WebKitWebDriver may still be starting: a session request before it listens fails.
            wait_until_listening(port, Duration::from_secs(20)).await?;
            let session = Session::start(
                &driver_url,
                json!({
                    "webkitgtk:browserOptions": {
                        "binary": prerequisites.app,
                        "args": app_args,
                    }
                }),
            )
            .await?;
            // The app is up when the UI has mounted (its heading is the first thing it renders).
            session.wait_for("h1", STARTUP_TIMEOUT).await?;
            anyhow::Ok(session)
        }
        .await
        .with_context(|| driver.log_tail())?;

        Ok(DesktopApp {
            session,
            driver,
            data_dir,
            _temp_dir: temp_dir,
        })
    }

    /// The WebDriver session, to find elements, press keys, run scripts.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The data directory the app runs on.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Saves a screenshot as `artifacts/screenshots/<name>.png` (the folder CI keeps) and
    /// returns its path.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let path = artifacts_dir()
            .join("screenshots")
            .join(format!("{name}.png"));
        self.session.save_screenshot(&path).await?;
        Ok(path)
    }

    /// The last lines the app and its drivers logged, to explain a failure.
    pub fn log_tail(&self) -> String {
        self.driver.log_tail()
    }

    /// Ends the session (closing the app) and stops the drivers.
    pub async fn quit(mut self) -> Result<()> {
        let ended = self.session.end().await;
        self.driver.stop();
        ended
    }
}

impl Driver {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.len().saturating_sub(40);
        format!(
            "app log {} (last lines):\n{}",
            self.log.display(),
            lines[start..].join("\n")
        )
    }

    fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        // The group outlives WebKitWebDriver if the app is still up, so it is signalled even
        // when the driver itself has already exited. (Signalled directly: procps' `kill` binary
        // can read `-PGID` as something else entirely.)
        // Never 0 (our own group) or 1 (everything): only the group made for the driver.
        let Some(group) = i32::try_from(self.child.id())
            .ok()
            .filter(|pid| *pid > 1)
            .and_then(Pid::from_raw)
        else {
            return;
        };
        // SIGTERM first, so WebKitWebDriver and the app can end cleanly.
        let _ = kill_process_group(group, Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Whatever is left of the group (the app, WebKit helpers) goes now.
        let _ = kill_process_group(group, Signal::KILL);
        let _ = self.child.wait();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The prerequisites, or `None` after telling loudly why the test is skipped — which happens
/// only when the run asks for it with `COUNTERSIGN_SKIP_DESKTOP=1`. Otherwise, CI or not, a
/// missing prerequisite fails the test: a suite must never pass by not looking.
pub fn skip_or_fail(test: &str) -> Option<Prerequisites> {
    match DesktopApp::prerequisites() {
        Ok(found) => Some(found),
        Err(missing) if skipping_allowed() && !is_ci() => {
            // Straight to the process's stderr: libtest captures `eprintln!` of passing tests,
            // and a skip must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED desktop e2e test `{test}`: {missing}\n\
                 !!! (COUNTERSIGN_SKIP_DESKTOP=1 asked for it; `bash scripts/test.sh` runs it for real)\n"
            );
            None
        }
        Err(missing) => panic!(
            "desktop e2e test `{test}` cannot run: {missing}. Run the suite with \
             `bash scripts/test.sh`, or set COUNTERSIGN_SKIP_DESKTOP=1 to skip the desktop tests \
             on purpose (never in CI)"
        ),
    }
}

/// Whether this run asked to skip the desktop tests (`COUNTERSIGN_SKIP_DESKTOP=1`).
pub fn skipping_allowed() -> bool {
    std::env::var("COUNTERSIGN_SKIP_DESKTOP").is_ok_and(|value| value == "1")
}

fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true" || value == "1")
}

/// The workspace root (this crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `artifacts/` at the workspace root: screenshots and logs that CI keeps.
pub fn artifacts_dir() -> PathBuf {
    workspace_root().join("artifacts")
}

/// The app binary: `COUNTERSIGN_DESKTOP_BIN`, else `countersign-desktop` in the target
/// directory this test binary was built into (`target/debug/deps/desktop-…` → `target/debug/`).
pub fn app_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("COUNTERSIGN_DESKTOP_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace_root().join("target").join("debug"));
    profile_dir.join(APP_BINARY)
}

/// `name` on PATH.
fn find_program(name: &str) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    dirs.into_iter()
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A loopback port nobody listens on right now.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}

async fn wait_until_listening(port: u16, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the WebDriver did not listen on port {port} within {timeout:?}")
}
