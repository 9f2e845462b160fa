//! Where an account's OAuth tokens live: the OS keyring, or a 0600 file when there is none.
//!
//! The keyring (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows) is
//! used through the `keyring` crate with service `countersign` and the account id as user. Only
//! when no keyring service answers (a headless box without a Secret Service) are tokens written
//! to `<data dir>/gmail-tokens/<account>.json`, readable by the owner only. [`TokenStore::kind`]
//! says which one is in use so the app can tell the user.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Keyring service name of every Countersign secret.
pub const KEYRING_SERVICE: &str = "countersign";

/// Which storage holds the tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenStorageKind {
    /// The OS keyring.
    Keyring,
    /// A file readable only by the user, in the data directory.
    File,
}

impl TokenStorageKind {
    /// `keyring` or `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenStorageKind::Keyring => "keyring",
            TokenStorageKind::File => "file",
        }
    }
}

/// An account's OAuth tokens. `Debug` never shows them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthTokens {
    /// The current access token.
    pub access_token: Option<String>,
    /// The long-lived refresh token.
    pub refresh_token: Option<String>,
    /// When the access token expires, seconds since the epoch.
    pub expires_at_unix: Option<i64>,
}

impl std::fmt::Debug for OAuthTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokens")
            .field(
                "access_token",
                &self.access_token.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at_unix", &self.expires_at_unix)
            .finish()
    }
}

impl OAuthTokens {
    /// Whether the access token is missing or expires within a minute of `now_unix`.
    pub fn needs_refresh(&self, now_unix: i64) -> bool {
        match (&self.access_token, self.expires_at_unix) {
            (None, _) => true,
            (Some(_), Some(at)) => at - 60 <= now_unix,
            (Some(_), None) => false,
        }
    }
}

/// Reads and writes account tokens in the keyring or the fallback file.
#[derive(Clone, Debug)]
pub struct TokenStore {
    backend: Backend,
}

#[derive(Clone, Debug)]
enum Backend {
    Keyring,
    File { dir: PathBuf },
}

impl TokenStore {
    /// The keyring when a keyring service answers, else files under `data_dir`.
    pub fn open(data_dir: &Path) -> Self {
        if keyring_available() {
            TokenStore::keyring()
        } else {
            tracing::info!("no OS keyring service answers; Gmail tokens go to a 0600 file");
            TokenStore::file(data_dir)
        }
    }

    /// Always the OS keyring.
    pub fn keyring() -> Self {
        TokenStore {
            backend: Backend::Keyring,
        }
    }

    /// Always files under `data_dir/gmail-tokens` (tests, or a user without a keyring).
    pub fn file(data_dir: &Path) -> Self {
        TokenStore {
            backend: Backend::File {
                dir: data_dir.join("gmail-tokens"),
            },
        }
    }

    /// Which storage this is.
    pub fn kind(&self) -> TokenStorageKind {
        match self.backend {
            Backend::Keyring => TokenStorageKind::Keyring,
            Backend::File { .. } => TokenStorageKind::File,
        }
    }

    /// Store `tokens` for `account`, replacing what was there.
    pub fn save(&self, account: &str, tokens: &OAuthTokens) -> Result<()> {
        let json = serde_json::to_string(tokens).map_err(|e| storage_error(format!("{e}")))?;
        match &self.backend {
            Backend::Keyring => keyring_entry(account)?
                .set_password(&json)
                .map_err(|e| storage_error(format!("keyring refused to store: {e}"))),
            Backend::File { dir } => write_private(dir, &file_name(account), json.as_bytes()),
        }
    }

    /// The tokens of `account`, if any.
    pub fn load(&self, account: &str) -> Result<Option<OAuthTokens>> {
        let json = match &self.backend {
            Backend::Keyring => match keyring_entry(account)?.get_password() {
                Ok(json) => json,
                Err(keyring::Error::NoEntry) => return Ok(None),
                Err(e) => return Err(storage_error(format!("keyring refused to read: {e}"))),
            },
            Backend::File { dir } => match std::fs::read_to_string(dir.join(file_name(account))) {
                Ok(json) => json,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(storage_error(format!("cannot read the token file: {e}"))),
            },
        };
        serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| storage_error(format!("stored tokens are unreadable: {e}")))
    }

    /// Forget the tokens of `account` (nothing stored is fine).
    pub fn remove(&self, account: &str) -> Result<()> {
        match &self.backend {
            Backend::Keyring => match keyring_entry(account)?.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(storage_error(format!("keyring refused to delete: {e}"))),
            },
            Backend::File { dir } => match std::fs::remove_file(dir.join(file_name(account))) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(storage_error(format!("cannot delete the token file: {e}"))),
            },
        }
    }
}

fn storage_error(detail: String) -> Error {
    Error::TokenStorage { detail }
}

fn keyring_entry(account: &str) -> Result<keyring::Entry> {
    keyring::Entry::new(KEYRING_SERVICE, account)
        .map_err(|e| storage_error(format!("keyring unusable: {e}")))
}

/// Whether a keyring service answers: reading a name that does not exist must say "no entry".
fn keyring_available() -> bool {
    match keyring::Entry::new(KEYRING_SERVICE, "countersign-keyring-probe") {
        Ok(entry) => match entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => true,
            Err(e) => {
                tracing::debug!(error = %e, "keyring probe failed");
                false
            }
        },
        Err(_) => false,
    }
}

/// A file name for `account` that cannot escape the directory.
fn file_name(account: &str) -> String {
    let mut name = String::new();
    for b in account.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'@') {
            name.push(b as char);
        } else {
            name.push_str(&format!("_{b:02x}"));
        }
    }
    if name.starts_with('.') {
        name.replace_range(0..1, "_2e");
    }
    format!("{name}.json")
}

/// Write `bytes` to `dir/name` so that only the owner can ever read it.
fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)
        .map_err(|e| storage_error(format!("cannot create {}: {e}", dir.display())))?;
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        // The file itself is created 0600 below; a directory that stays readable only shows
        // the file's name, so this is worth a warning, not a refusal.
        if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)) {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot make the token directory private");
        }
    }
    let mut file = options
        .open(&tmp)
        .map_err(|e| storage_error(format!("cannot write the token file: {e}")))?;
    #[cfg(unix)]
    {
        // `mode` only applies when the file is created; a leftover temp file is fixed here.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| storage_error(format!("cannot protect the token file: {e}")))?;
    }
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| storage_error(format!("cannot write the token file: {e}")))?;
    std::fs::rename(&tmp, dir.join(name))
        .map_err(|e| storage_error(format!("cannot write the token file: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> OAuthTokens {
        OAuthTokens {
            access_token: Some("ya29.secret-access".into()),
            refresh_token: Some("1//secret-refresh".into()),
            expires_at_unix: Some(2_000_000_000),
        }
    }

    #[test]
    fn tokens_saved_to_a_file_come_back_and_are_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::file(dir.path());
        store.save("owner@example.com", &tokens()).unwrap();
        assert_eq!(store.load("owner@example.com").unwrap(), Some(tokens()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = dir.path().join("gmail-tokens/owner@example.com.json");
            let mode = std::fs::metadata(path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.kind(), TokenStorageKind::File);
    }

    #[test]
    fn removing_an_account_deletes_its_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::file(dir.path());
        store.save("a", &tokens()).unwrap();
        store.remove("a").unwrap();
        assert_eq!(store.load("a").unwrap(), None);
        store.remove("a").unwrap();
    }

    #[test]
    fn an_account_id_cannot_leave_the_token_directory() {
        assert_eq!(
            file_name("../../etc/passwd"),
            "_2e._2f.._2fetc_2fpasswd.json"
        );
        assert!(!file_name("a/b").contains('/'));
    }

    #[test]
    fn debug_output_never_shows_tokens() {
        let shown = format!("{:?}", tokens());
        assert!(!shown.contains("secret"), "{shown}");
    }

    /// The child of [`without_a_secret_service_tokens_go_to_an_owner_only_file`]: opens a
    /// token store in `COUNTERSIGN_TOKEN_TEST_DIR` under the bus its parent gave it.
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore = "run as a child process by without_a_secret_service_tokens_go_to_an_owner_only_file"]
    fn child_opens_a_token_store() {
        let dir = std::env::var_os("COUNTERSIGN_TOKEN_TEST_DIR").expect("run by the parent test");
        let store = TokenStore::open(Path::new(&dir));
        assert_eq!(store.kind(), TokenStorageKind::File);
        store.save("x", &tokens()).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn without_a_secret_service_tokens_go_to_an_owner_only_file() {
        // Whatever session bus this suite runs under (dbus-run-session gives it one), the
        // child runs where no Secret Service can answer: a bus address that leads nowhere.
        let dir = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "token_store::tests::child_opens_a_token_store",
                "--ignored",
                "--test-threads=1",
            ])
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/countersign-test-bus",
            )
            .env("COUNTERSIGN_TOKEN_TEST_DIR", dir.path())
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&child.stdout);
        assert!(child.status.success(), "{report}");
        assert!(report.contains("1 passed"), "the child ran: {report}");
        let file = dir.path().join("gmail-tokens/x.json");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only: {mode:o}");
    }

    #[test]
    fn a_token_expiring_within_a_minute_needs_refresh() {
        let t = tokens();
        assert!(!t.needs_refresh(2_000_000_000 - 120));
        assert!(t.needs_refresh(2_000_000_000 - 30));
    }
}
