//! The muster password and session cookie of each instance: in the OS keyring, or — only where
//! no keyring service answers — in 0600 files in the data directory. Beside them, a small shared
//! record of recent sign-ins paces every process of the data directory within muster's limit. Gmail tokens are kept by
//! `countersign_gmail::TokenStore`, whose choice of backend this follows, so one data dir never
//! mixes the two.

use std::path::{Path, PathBuf};

use countersign_gmail::{TokenStorageKind, TokenStore};

use crate::error::{Error, Result};
use crate::store::SecretStorage;

const KEYRING_SERVICE: &str = "countersign-muster";
/// The session cookie is kept under the account id with this suffix, beside the password.
const SESSION_SUFFIX: &str = "-session";

/// Where muster passwords go for one data directory.
#[derive(Clone, Debug)]
pub struct PasswordStore {
    backend: Backend,
}

#[derive(Clone, Debug)]
enum Backend {
    Keyring,
    File(PathBuf),
}

impl PasswordStore {
    /// The same backend the Gmail tokens of `data_dir` use.
    pub fn open(data_dir: &Path, tokens: &TokenStore) -> PasswordStore {
        PasswordStore {
            backend: match tokens.kind() {
                TokenStorageKind::Keyring => Backend::Keyring,
                TokenStorageKind::File => Backend::File(data_dir.join("muster-secrets")),
            },
        }
    }

    /// Which kind of storage this is, as recorded on the account.
    pub fn kind(&self) -> SecretStorage {
        match self.backend {
            Backend::Keyring => SecretStorage::Keyring,
            Backend::File(_) => SecretStorage::File,
        }
    }

    /// Store the password of `account_id`.
    pub fn save(&self, account_id: &str, password: &str) -> Result<()> {
        match &self.backend {
            Backend::Keyring => entry(account_id)?
                .set_password(password)
                .map_err(|e| storage_error(&format!("the keyring refused to store it: {e}"))),
            Backend::File(dir) => write_private(dir, account_id, password),
        }
    }

    /// The password of `account_id`.
    pub fn load(&self, account_id: &str) -> Result<String> {
        let missing = || {
            Error::refused(
                format!("use muster account {account_id}"),
                "its password is not stored; add the account again",
            )
        };
        match &self.backend {
            Backend::Keyring => match entry(account_id)?.get_password() {
                Ok(password) => Ok(password),
                Err(keyring::Error::NoEntry) => Err(missing()),
                Err(e) => Err(storage_error(&format!(
                    "the keyring refused to read it: {e}"
                ))),
            },
            Backend::File(dir) => match std::fs::read_to_string(dir.join(file_name(account_id))) {
                Ok(password) => Ok(password),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing()),
                Err(e) => Err(storage_error(&format!(
                    "cannot read the password file: {e}"
                ))),
            },
        }
    }

    /// Keep the session cookie of `account_id` (muster's `muster_session`).
    pub fn save_session(&self, account_id: &str, cookie: &str) -> Result<()> {
        self.save(&format!("{account_id}{SESSION_SUFFIX}"), cookie)
    }

    /// The kept session cookie of `account_id`, if any.
    pub fn load_session(&self, account_id: &str) -> Option<String> {
        self.load(&format!("{account_id}{SESSION_SUFFIX}"))
            .ok()
            .filter(|c| !c.is_empty())
    }

    /// Forget the password and the session cookie of `account_id` (nothing stored is fine).
    pub fn remove(&self, account_id: &str) -> Result<()> {
        self.remove_one(&format!("{account_id}{SESSION_SUFFIX}"))?;
        self.remove_one(account_id)
    }

    fn remove_one(&self, account_id: &str) -> Result<()> {
        match &self.backend {
            Backend::Keyring => match entry(account_id)?.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(storage_error(&format!(
                    "the keyring refused to delete it: {e}"
                ))),
            },
            Backend::File(dir) => match std::fs::remove_file(dir.join(file_name(account_id))) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(storage_error(&format!(
                    "cannot delete the password file: {e}"
                ))),
            },
        }
    }
}

fn entry(account_id: &str) -> Result<keyring::Entry> {
    keyring::Entry::new(KEYRING_SERVICE, account_id)
        .map_err(|e| storage_error(&format!("the keyring is unusable: {e}")))
}

fn storage_error(detail: &str) -> Error {
    Error::refused("store the muster password", detail)
}

/// Account ids are ours (`muster-<hex>`), but never let one name a path outside `dir`.
fn file_name(account_id: &str) -> String {
    let safe: String = account_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.secret")
}

fn write_private(dir: &Path, account_id: &str, secret: &str) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| storage_error(&format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(file_name(account_id));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    use std::io::Write;
    let mut file = options
        .open(&path)
        .map_err(|e| storage_error(&format!("cannot write {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Err(e) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!(path = %path.display(), error = %e, "cannot make a secret file private");
        }
    }
    file.write_all(secret.as_bytes())
        .map_err(|e| storage_error(&format!("cannot write {}: {e}", path.display())))
}

/// The [`SessionKeeper`](countersign_muster::SessionKeeper) of one muster account: the cookie in
/// the [`PasswordStore`], the sign-in record in `DATA_DIR/muster-sign-ins/<account>.json`, read
/// and written under an exclusive file lock so that every process paces with every other.
pub struct MusterSessions {
    passwords: PasswordStore,
    account_id: String,
    record: PathBuf,
}

impl std::fmt::Debug for MusterSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MusterSessions")
            .field("account_id", &self.account_id)
            .finish_non_exhaustive()
    }
}

/// The sign-in record as written to disk: milliseconds since the Unix epoch.
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RecordFile {
    attempts: Vec<u64>,
    not_before: Option<u64>,
}

fn to_millis(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

fn from_millis(ms: u64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)
}

impl MusterSessions {
    /// The keeper of `account_id` in `data_dir`.
    pub fn new(data_dir: &Path, passwords: PasswordStore, account_id: &str) -> MusterSessions {
        MusterSessions {
            passwords,
            account_id: account_id.to_owned(),
            record: data_dir.join("muster-sign-ins").join(format!(
                "{}.json",
                file_name(account_id).trim_end_matches(".secret")
            )),
        }
    }

    /// Read, change and write the record under the lock. A record that cannot be kept (a
    /// read-only disk) must not stop the call: the change then holds for this process only,
    /// and muster's own limit still answers.
    fn with_record<T>(
        &self,
        change: impl FnOnce(&mut countersign_muster::SignInRecord) -> T,
    ) -> std::io::Result<T> {
        if let Some(dir) = self.record.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // The lock has a file of its own: the record is replaced by a rename, so that a process
        // killed mid-write leaves the old record, never half a new one.
        let lock = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.record.with_extension("lock"))?;
        fs4::fs_std::FileExt::lock_exclusive(&lock)?;
        let text = match std::fs::read_to_string(&self.record) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let stored: RecordFile = serde_json::from_str(&text).unwrap_or_default();
        let mut record = countersign_muster::SignInRecord {
            attempts: stored.attempts.into_iter().map(from_millis).collect(),
            not_before: stored.not_before.map(from_millis),
        };
        let answer = change(&mut record);
        let stored = RecordFile {
            attempts: record.attempts.iter().copied().map(to_millis).collect(),
            not_before: record.not_before.map(to_millis),
        };
        let text = serde_json::to_string(&stored).map_err(std::io::Error::other)?;
        let fresh = self.record.with_extension("json.new");
        std::fs::write(&fresh, text)?;
        std::fs::rename(&fresh, &self.record)?;
        // The lock ends with `lock`.
        Ok(answer)
    }
}

impl countersign_muster::SessionKeeper for MusterSessions {
    fn load(&self) -> Option<String> {
        self.passwords.load_session(&self.account_id)
    }

    fn save(&self, cookie: &str) {
        if let Err(e) = self.passwords.save_session(&self.account_id, cookie) {
            // The session still works in this process; the next one signs in again.
            tracing::warn!(account = %self.account_id, error = %e, "cannot keep the muster session");
        }
    }

    fn reserve_sign_in(
        &self,
        now: std::time::SystemTime,
    ) -> std::result::Result<(), std::time::Duration> {
        match self.with_record(|r| r.reserve(now)) {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(account = %self.account_id, error = %e, "cannot read the shared sign-in record");
                Ok(())
            }
        }
    }

    fn sign_in_refused(&self, now: std::time::SystemTime, wait: std::time::Duration) {
        if let Err(e) = self.with_record(|r| r.refused(now, wait)) {
            tracing::warn!(account = %self.account_id, error = %e, "cannot write the shared sign-in record");
        }
    }
}
