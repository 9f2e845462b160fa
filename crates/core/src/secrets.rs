//! The muster password of each instance: in the OS keyring, or — only where no keyring service
//! answers — in a 0600 file in the data directory. Gmail tokens are kept by
//! `countersign_gmail::TokenStore`, whose choice of backend this follows, so one data dir never
//! mixes the two.

use std::path::{Path, PathBuf};

use countersign_gmail::{TokenStorageKind, TokenStore};

use crate::error::{Error, Result};
use crate::store::SecretStorage;

const KEYRING_SERVICE: &str = "countersign-muster";

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

    /// Forget the password of `account_id` (nothing stored is fine).
    pub fn remove(&self, account_id: &str) -> Result<()> {
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
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    }
    file.write_all(secret.as_bytes())
        .map_err(|e| storage_error(&format!("cannot write {}: {e}", path.display())))
}
