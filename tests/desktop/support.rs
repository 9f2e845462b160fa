//! What the desktop tests share: reading the window as a user reads it, and watching the
//! session bus for notifications.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use countersign_e2e::desktop::DesktopApp;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};
use countersign_e2e::webdriver::Session;
use serde_json::Value;

/// How long the UI may take to show a change (an event, a reload, a render).
pub const UI_TIMEOUT: Duration = Duration::from_secs(20);

/// The undo window of a test that reads or acts on the queued state (the countdown, `z`): the
/// fixture's 3 s would let a decision be sent before a busy machine shows its countdown.
pub const LOOK_INSIDE_UNDO_SECS: u32 = 12;

/// Panics with the app's log: a failed step shows what the app said.
pub trait OrLog<T> {
    fn or_log(self, app: &DesktopApp) -> T;
}

impl<T> OrLog<T> for anyhow::Result<T> {
    fn or_log(self, app: &DesktopApp) -> T {
        self.unwrap_or_else(|e| panic!("{e:#}\n{}", app.log_tail()))
    }
}

/// Waits until the keyboard focus is on the queue (not in the mail frame, where keys never
/// reach the app); the error says where the focus is instead.
pub async fn wait_focus_on_queue(session: &Session) -> anyhow::Result<()> {
    let seen = Mutex::new(String::new());
    eventually(UI_TIMEOUT, "the focus comes back to the queue", || async {
        let focus = session
            .execute(
                "const e = document.activeElement;
                 return `${e?.tagName} role=${e?.getAttribute('role')} \
                         (the window ${document.hasFocus() ? 'has' : 'does not have'} the focus)`;",
                vec![],
            )
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let back = focus.contains("role=listbox");
        *seen.lock().unwrap() = focus;
        back
    })
    .await
    .map_err(|e| e.context(format!("the focus is on {}", seen.lock().unwrap())))
}

/// The id of the selected queue row.
pub async fn selected_id(session: &Session) -> Option<i64> {
    let value = session
        .execute(
            "const row = document.querySelector('[role=option][aria-selected=true]');
             return row ? Number(row.dataset.id) : null;",
            vec![],
        )
        .await
        .ok()?;
    value.as_i64()
}

/// Waits until the row of item `id` is the selected one.
pub async fn wait_selected(session: &Session, id: i64) -> anyhow::Result<()> {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        if selected_id(session).await == Some(id) {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "item {id} was not selected within {UI_TIMEOUT:?} (selected: {:?})",
                selected_id(session).await
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the detail pane shows item `id` fully rendered, its mail frame included (what
/// a decision may bind to).
pub async fn wait_detail(session: &Session, id: i64) -> anyhow::Result<()> {
    wait_selected(session, id).await?;
    session
        .wait_for(
            &format!("[data-testid=detail][data-shown-id=\"{id}\"]"),
            UI_TIMEOUT,
        )
        .await?;
    session.wait_for("[data-testid=audit]", UI_TIMEOUT).await?;
    Ok(())
}

/// The version whose detail is rendered now, if any.
pub async fn shown_version(session: &Session) -> Option<String> {
    session
        .find("[data-testid=detail]")
        .await
        .ok()?
        .attribute("data-shown-version")
        .await
        .ok()?
        .filter(|v| !v.is_empty())
}

/// Clicks the queue row of item `id` and waits for its detail.
pub async fn open_item(session: &Session, id: i64) -> anyhow::Result<()> {
    session
        .wait_for(&format!("[role=option][data-id=\"{id}\"]"), UI_TIMEOUT)
        .await?
        .click()
        .await?;
    wait_detail(session, id).await
}

/// Whether the Approve button is enabled now.
pub async fn approve_enabled(session: &Session) -> anyhow::Result<bool> {
    session
        .find("[data-action=approve]")
        .await?
        .is_enabled()
        .await
}

/// Waits until Approve is enabled (`true`) or disabled (`false`).
pub async fn wait_approve(session: &Session, enabled: bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        if let Ok(now) = approve_enabled(session).await {
            if now == enabled {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            anyhow::bail!("Approve did not become enabled={enabled} within {UI_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The detail pane's state (`data-state` of the state line).
pub async fn detail_state(session: &Session) -> Option<String> {
    session
        .find("[data-testid=detail-state]")
        .await
        .ok()?
        .attribute("data-state")
        .await
        .ok()?
}

/// Waits until the detail pane says the item is in `state`.
pub async fn wait_detail_state(session: &Session, state: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        let now = detail_state(session).await;
        if now.as_deref() == Some(state) {
            return Ok(());
        }
        if Instant::now() > deadline {
            // What the window shows instead (a blank detail pane says the selection was lost;
            // an error notice names the failed read): the clue a flaky run leaves.
            let shown = session
                .execute(
                    "return (document.querySelector('main') ?? document.body).innerText \
                       .slice(0, 600);",
                    vec![],
                )
                .await
                .unwrap_or(Value::Null);
            anyhow::bail!(
                "the item did not show {state} within {UI_TIMEOUT:?} (shows {now:?}); \
                 the window reads: {shown}"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the focused element is (tag and data-testid), to check where keys go.
pub async fn focused(session: &Session) -> Value {
    session
        .execute(
            "const e = document.activeElement;
             return e ? (e.dataset.testid || e.tagName.toLowerCase()) : null;",
            vec![],
        )
        .await
        .unwrap_or(Value::Null)
}

/// A private D-Bus session bus with its own notification daemon (dunst) and a `dbus-monitor`
/// recording every `Notify` call on it. The app under test is started on this bus
/// ([`NotificationWatch::env`]), so the notification a test clicks is its app's: on the suite's
/// shared bus, `dunstctl action 0` clicked whichever notification dunst listed first — another
/// test's app notifying at the same moment (a demo start notifies its seeded refusal).
pub struct NotificationWatch {
    monitor: Child,
    dunst: Child,
    bus: Child,
    address: String,
    seen: Arc<Mutex<String>>,
}

impl NotificationWatch {
    /// Starts the bus, dunst on it and the monitor; `None` without `dbus-daemon`, `dunst` or a
    /// display (scripts/test.sh runs the suite under Xvfb with both installed).
    pub fn start() -> Option<NotificationWatch> {
        std::env::var_os("DISPLAY")?;
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut address = String::new();
        BufReader::new(bus.stdout.take()?)
            .read_line(&mut address)
            .ok()?;
        let address = address.trim().to_owned();
        let dunst = Command::new("dunst")
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        // dunst owns org.freedesktop.Notifications once dunstctl gets an answer from it.
        let deadline = Instant::now() + UI_TIMEOUT;
        while !Command::new("dunstctl")
            .arg("is-paused")
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut monitor = Command::new("dbus-monitor")
            .args([
                "--address",
                &address,
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdout = monitor.stdout.take()?;
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Some(NotificationWatch {
            monitor,
            dunst,
            bus,
            address,
            seen,
        })
    }

    /// The environment that puts the app on this bus.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("DBUS_SESSION_BUS_ADDRESS".into(), self.address.clone())]
    }

    /// Clicks the notification shown (dunst's default action), as the owner would.
    pub fn click(&self) -> bool {
        Command::new("dunstctl")
            .args(["action", "0"])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Waits until a notification containing `text` was asked for.
    pub async fn wait_for(&self, text: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.seen.lock().unwrap().contains(text) {
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "no notification with {text:?} on the session bus within {timeout:?}; saw:\n{}",
                    self.seen.lock().unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for NotificationWatch {
    fn drop(&mut self) {
        for child in [&mut self.monitor, &mut self.dunst, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `count` Gmail drafts of a connected account ("Body text.", subjects from `subject`), in the
/// mirror; returns their ids in queue order.
pub async fn gmail_drafts(
    fixture: &Fixture,
    count: usize,
    subject: impl Fn(usize) -> String,
) -> Vec<i64> {
    let account = fixture.connect_gmail().await.unwrap();
    for n in 1..=count {
        fixture
            .gmail
            .file_draft(&gmail_reply(n, &subject(n), "Body text."), None);
    }
    fixture.sync(&account).await.unwrap();
    let ids: Vec<i64> = fixture
        .items()
        .await
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(ids.len(), count, "every draft filed is in the mirror");
    ids
}

/// One Gmail draft of `raw` in the mirror of a fresh fixture, and the app showing it: the
/// fixture (the fakes, the mirror), the app, and the draft's item id.
pub async fn one_draft_on_screen(
    prerequisites: &countersign_e2e::desktop::Prerequisites,
    raw: &[u8],
) -> (Fixture, DesktopApp, i64) {
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let draft = fixture.gmail.file_draft(raw, None);
    fixture.sync(&account).await.unwrap();
    let id = fixture.item(&draft.id).await.unwrap().id;
    let app = fixture.launch(prerequisites).await.unwrap();
    wait_detail(app.session(), id).await.or_log(&app);
    (fixture, app, id)
}
