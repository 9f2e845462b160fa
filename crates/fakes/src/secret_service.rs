//! Not a fake: the real Secret Service (Debian's `gnome-keyring`) on a private D-Bus session bus
//! of its own, its login keyring created and unlocked with a throw-away password, so that a test
//! can run Countersign against the OS keyring as a desktop session has it — without touching the
//! keyring of whoever runs the suite, and without a window to type a password into.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons may take to come up on a busy machine (a limit on a hang, not a wait).
const START_LIMIT: Duration = Duration::from_secs(30);

/// A running private session bus with an unlocked gnome-keyring on it. Dropping it stops both.
pub struct PrivateSecretService {
    dir: tempfile::TempDir,
    bus_address: String,
    bus: Child,
    keyring: Child,
}

impl PrivateSecretService {
    /// Start `dbus-daemon --session` and `gnome-keyring-daemon --unlock --components=secrets`
    /// in a fresh home, and return once `org.freedesktop.secrets` is owned on that bus.
    pub fn start() -> std::io::Result<PrivateSecretService> {
        let dir = tempfile::tempdir()?;
        for sub in ["home", "data", "runtime"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                dir.path().join("runtime"),
                std::fs::Permissions::from_mode(0o700),
            )?;
        }
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("piped"))
            .read_line(&mut address)
            .inspect_err(|_| {
                let _ = bus.kill();
            })?;
        let bus_address = address.trim().to_string();
        if bus_address.is_empty() {
            let _ = bus.kill();
            return Err(std::io::Error::other("dbus-daemon printed no address"));
        }
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--components=secrets", "--foreground"])
            .envs(session_env(dir.path(), &bus_address))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .inspect_err(|_| {
                let _ = bus.kill();
            })?;
        // The password of the login keyring it creates; closing stdin ends it.
        keyring
            .stdin
            .take()
            .expect("piped")
            .write_all(b"countersign-test-keyring")?;
        let service = PrivateSecretService {
            dir,
            bus_address,
            bus,
            keyring,
        };
        service.wait_until_owned()?;
        Ok(service)
    }

    /// The environment a process needs to find this Secret Service (and nothing of the
    /// caller's own session).
    pub fn env(&self) -> Vec<(String, String)> {
        session_env(self.dir.path(), &self.bus_address)
    }

    /// The D-Bus address of the private session bus.
    pub fn bus_address(&self) -> &str {
        &self.bus_address
    }

    /// Where gnome-keyring keeps its keyrings (`$XDG_DATA_HOME/keyrings`).
    pub fn keyrings_dir(&self) -> PathBuf {
        self.dir.path().join("data").join("keyrings")
    }

    fn wait_until_owned(&self) -> std::io::Result<()> {
        let start = Instant::now();
        loop {
            let answer = Command::new("dbus-send")
                .args([
                    &format!("--bus={}", self.bus_address),
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ])
                .output()?;
            if String::from_utf8_lossy(&answer.stdout).contains("boolean true") {
                return Ok(());
            }
            if start.elapsed() > START_LIMIT {
                return Err(std::io::Error::other(format!(
                    "gnome-keyring did not take org.freedesktop.secrets within {START_LIMIT:?}"
                )));
            }
            // Asking again is the wait: the daemon registers its name when it is ready.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn session_env(dir: &Path, bus_address: &str) -> Vec<(String, String)> {
    let path = |sub: &str| dir.join(sub).display().to_string();
    vec![
        ("DBUS_SESSION_BUS_ADDRESS".into(), bus_address.to_string()),
        ("HOME".into(), path("home")),
        ("XDG_DATA_HOME".into(), path("data")),
        ("XDG_RUNTIME_DIR".into(), path("runtime")),
    ]
}

impl Drop for PrivateSecretService {
    fn drop(&mut self) {
        for child in [&mut self.keyring, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
