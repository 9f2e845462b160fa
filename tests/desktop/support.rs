//! What the desktop tests share: reading the window as a user reads it, and watching the
//! session bus for notifications.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use countersign_e2e::desktop::DesktopApp;
use countersign_e2e::webdriver::Session;
use serde_json::Value;

/// How long the UI may take to show a change (an event, a reload, a render).
pub const UI_TIMEOUT: Duration = Duration::from_secs(20);

/// Panics with the app's log: a failed step shows what the app said.
pub trait OrLog<T> {
    fn or_log(self, app: &DesktopApp) -> T;
}

impl<T> OrLog<T> for anyhow::Result<T> {
    fn or_log(self, app: &DesktopApp) -> T {
        self.unwrap_or_else(|e| panic!("{e:#}\n{}", app.log_tail()))
    }
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
            anyhow::bail!("the item did not show {state} within {UI_TIMEOUT:?} (shows {now:?})");
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

/// A `dbus-monitor` on the session bus recording every `Notify` call (what the notification
/// daemon is asked to show), read on a thread.
pub struct NotificationWatch {
    child: Child,
    seen: Arc<Mutex<String>>,
}

impl NotificationWatch {
    /// Starts watching; `None` without a session bus (the desktop suite runs under
    /// `dbus-run-session`, scripts/test.sh does).
    pub fn start() -> Option<NotificationWatch> {
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS")?;
        let mut child = Command::new("dbus-monitor")
            .args([
                "--session",
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdout = child.stdout.take()?;
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Some(NotificationWatch { child, seen })
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
