//! The record's key and its seals (issue 35).
//!
//! Every mirror has its own secret key, 32 random bytes, kept where the Gmail tokens are: the
//! OS keyring, or — only where the tokens fall back to 0600 files — a 0600 file beside them.
//! The mirror itself holds only the key's name (`record_seal.mirror_id`) and a MAC that tells
//! the right key from another one. Audit rows and decisions carry HMAC-SHA256 seals made with
//! it, so whoever can write the file but not read the key can neither forge nor rewrite them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::accounts::SecretStorage;
use crate::error::{Error, Result};

/// The MAC the first row follows.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The user name of a mirror's key in the keyring (service `countersign`, as the tokens).
fn keyring_user(mirror_id: &str) -> String {
    format!("record-key-{mirror_id}")
}

/// The secret key of one mirror. `Debug` never shows it.
#[derive(Clone)]
pub struct RecordKey([u8; 32], Hmac<Sha256>);

impl std::fmt::Debug for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordKey(<redacted>)")
    }
}

impl RecordKey {
    fn generate() -> RecordKey {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        RecordKey::from_bytes(bytes)
    }

    fn from_bytes(bytes: [u8; 32]) -> RecordKey {
        // Keyed once: each MAC starts from a clone of this state (a verify of 100,000 rows).
        let keyed =
            <Hmac<Sha256> as Mac>::new_from_slice(&bytes).expect("HMAC takes a key of any length");
        RecordKey(bytes, keyed)
    }

    /// HMAC-SHA256 state over `parts`, each length-prefixed so no two lists of parts read
    /// alike; `domain` keeps a row's seal from ever passing as a decision's or a head's.
    fn keyed(&self, domain: &str, parts: &[&str]) -> Hmac<Sha256> {
        let mut mac = self.1.clone();
        for part in std::iter::once(domain).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    /// The MAC over `parts`, in hex.
    pub(crate) fn mac(&self, domain: &str, parts: &[&str]) -> String {
        hex::encode(self.keyed(domain, parts).finalize().into_bytes())
    }

    /// Whether `mac` is this key's MAC over `parts` (compared in constant time).
    pub(crate) fn verifies(&self, domain: &str, parts: &[&str], mac: &str) -> bool {
        let Ok(given) = hex::decode(mac) else {
            return false;
        };
        self.keyed(domain, parts).verify_slice(&given).is_ok()
    }

    /// What `record_seal.key_check` holds: tells this key from another without revealing it.
    pub(crate) fn check_value(&self) -> String {
        self.mac("countersign key check v1", &[])
    }
}

/// Where the keys of one data directory are kept: the same store as its Gmail tokens.
#[derive(Clone, Debug)]
pub enum RecordKeyStore {
    /// The OS keyring.
    Keyring,
    /// 0600 files in `<data dir>/record-keys` (where the tokens are files too: tests, demo
    /// mode, a machine without a keyring). The record is then only as safe as those files.
    File(PathBuf),
}

impl RecordKeyStore {
    /// Files under `data_dir`.
    pub fn file(data_dir: &Path) -> RecordKeyStore {
        RecordKeyStore::File(data_dir.join("record-keys"))
    }

    /// Which kind of storage this is.
    pub fn kind(&self) -> SecretStorage {
        match self {
            RecordKeyStore::Keyring => SecretStorage::Keyring,
            RecordKeyStore::File(_) => SecretStorage::File,
        }
    }

    fn entry(mirror_id: &str) -> Result<keyring::Entry> {
        keyring::Entry::new(
            countersign_gmail::token_store::KEYRING_SERVICE,
            &keyring_user(mirror_id),
        )
        .map_err(|e| key_error(&format!("the keyring is unusable: {e}")))
    }

    fn path(dir: &Path, mirror_id: &str) -> PathBuf {
        // The id is ours (a UUID), but never let it name a path outside `dir`.
        let safe: String = mirror_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        dir.join(format!("{safe}.key"))
    }

    /// The key of `mirror_id`, if this store holds it.
    pub(crate) fn load(&self, mirror_id: &str) -> Result<Option<RecordKey>> {
        let text = match self {
            RecordKeyStore::Keyring => match Self::entry(mirror_id)?.get_password() {
                Ok(text) => text,
                Err(keyring::Error::NoEntry) => return Ok(None),
                Err(e) => return Err(key_error(&format!("the keyring refused to read it: {e}"))),
            },
            RecordKeyStore::File(dir) => {
                match std::fs::read_to_string(Self::path(dir, mirror_id)) {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(key_error(&format!("cannot read the key file: {e}"))),
                }
            }
        };
        let bytes = hex::decode(text.trim()).ok().filter(|b| b.len() == 32);
        match bytes {
            Some(bytes) => {
                let mut key = [0u8; 32];
                key.copy_from_slice(&bytes);
                Ok(Some(RecordKey::from_bytes(key)))
            }
            None => Err(key_error("the stored key is not 32 bytes of hex")),
        }
    }

    /// Make and keep a new key for `mirror_id`.
    pub(crate) fn create(&self, mirror_id: &str) -> Result<RecordKey> {
        let key = RecordKey::generate();
        let text = hex::encode(key.0);
        match self {
            RecordKeyStore::Keyring => Self::entry(mirror_id)?
                .set_password(&text)
                .map_err(|e| key_error(&format!("the keyring refused to store it: {e}")))?,
            RecordKeyStore::File(dir) => write_private(&Self::path(dir, mirror_id), &text)?,
        }
        Ok(key)
    }
}

fn key_error(detail: &str) -> Error {
    Error::refused("keep the record's key", detail)
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| key_error(&format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| key_error(&format!("cannot write {}: {e}", path.display())))?;
    file.write_all(text.as_bytes())
        .map_err(|e| key_error(&format!("cannot write {}: {e}", path.display())))
}

/// What a store knows of its key.
#[derive(Clone, Debug)]
pub(crate) enum KeyState {
    /// The key, and where it is kept.
    Present(Arc<RecordKey>, SecretStorage),
    /// This account's key store has no key for this mirror (copied from elsewhere, or the
    /// keyring was reset): nothing can be checked, nothing is sealed, nothing is sent.
    Missing,
    /// A key is kept under this mirror's name but it is not the one that sealed it.
    Wrong,
}

/// Why nothing can be checked without the key, in words.
pub(crate) const KEY_MISSING: &str =
    "cannot check: key missing (this account's keyring holds no key for this mirror)";
/// Why nothing can be checked with another key, in words.
pub(crate) const KEY_WRONG: &str =
    "cannot check: the key kept for this mirror is not the one that sealed it";

impl KeyState {
    /// The key, or why there is none.
    pub(crate) fn key(&self) -> std::result::Result<&RecordKey, &'static str> {
        match self {
            KeyState::Present(key, _) => Ok(key),
            KeyState::Missing => Err(KEY_MISSING),
            KeyState::Wrong => Err(KEY_WRONG),
        }
    }
}

/// The content of an audit row as sealed: every column, the references as written.
pub(crate) fn audit_row_content(row: &SealedRow) -> String {
    // A tuple is written as a JSON array, straight to text (no `Value` in between).
    serde_json::to_string(&(
        row.id,
        &row.at,
        &row.actor,
        &row.refs,
        &row.action,
        &row.version,
        &row.digest,
        &row.outcome,
        &row.detail,
    ))
    .expect("strings and numbers always encode")
}

/// An audit row as the seal sees it (times as stored: a re-formatted time would not match).
#[derive(Clone, Debug, sqlx::FromRow)]
pub(crate) struct SealedRow {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub item_id: Option<i64>,
    pub decision_id: Option<i64>,
    pub view_id: Option<i64>,
    pub action: String,
    pub version: Option<String>,
    pub digest: Option<String>,
    pub outcome: Option<String>,
    pub detail: Option<String>,
    pub refs: Option<String>,
    pub prev_mac: Option<String>,
    pub mac: Option<String>,
}

/// The columns [`SealedRow`] reads.
pub(crate) const SEALED_COLUMNS: &str = "id, at, actor, item_id, decision_id, view_id, action, \
     version, digest, outcome, detail, refs, prev_mac, mac";

/// The references of a row as written: `[item_id, decision_id, view_id]`.
pub(crate) fn refs_of(item: Option<i64>, decision: Option<i64>, view: Option<i64>) -> String {
    serde_json::json!([item, decision, view]).to_string()
}

/// The seal of an audit row following `prev_mac`.
pub(crate) fn audit_row_mac(key: &RecordKey, prev_mac: &str, row: &SealedRow) -> String {
    key.mac(
        "countersign audit row v1",
        &[prev_mac, &audit_row_content(row)],
    )
}

/// The seal of the head: the newest row and its MAC.
pub(crate) fn head_seal(key: &RecordKey, row_id: i64, mac: &str) -> String {
    key.mac("countersign audit head v1", &[&row_id.to_string(), mac])
}

/// Find this mirror's key, or — the first time a keyed store opens it — make one and seal what
/// is there: the rows written before (after hash-chaining any written before issue 26, so the
/// note can say whether that chain held) and the live decisions. Never seals anything later:
/// a row without a seal found afterwards is a finding, not something to adopt.
pub(crate) async fn open_seal(store: &super::Store, keys: &RecordKeyStore) -> Result<KeyState> {
    let known: Option<(String, String)> =
        sqlx::query_as("SELECT mirror_id, key_check FROM record_seal WHERE id = 1")
            .fetch_optional(store.pool())
            .await?;
    if let Some((mirror_id, check)) = known {
        return Ok(found_key(keys, &mirror_id, &check));
    }
    let mut tx = store.write_tx().await?;
    // Another process may have sealed it while this one waited for the lock.
    let known: Option<(String, String)> =
        sqlx::query_as("SELECT mirror_id, key_check FROM record_seal WHERE id = 1")
            .fetch_optional(&mut *tx)
            .await?;
    if let Some((mirror_id, check)) = known {
        return Ok(found_key(keys, &mirror_id, &check));
    }
    super::Store::hash_chain_legacy_in(&mut tx).await?;
    let chain = super::audit::legacy_chain_break(&mut tx).await?;
    let legacy: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log")
        .fetch_one(&mut *tx)
        .await?;
    let now = super::format_time(chrono::Utc::now());
    let note = (legacy > 0).then(|| {
        let chain = match &chain {
            None => "their hash chain held".to_owned(),
            Some(b) => format!("their hash chain did not hold: {}", b.problem),
        };
        format!(
            "the first {legacy} rows were written before the record was sealed and were sealed \
             as they stood on {now}; {chain}"
        )
    });
    let mirror_id = uuid::Uuid::new_v4().to_string();
    let key = keys.create(&mirror_id)?;
    sqlx::query(
        "INSERT INTO record_seal (id, mirror_id, key_check, sealed_at, legacy_rows, legacy_note)
         VALUES (1, ?, ?, ?, ?, ?)",
    )
    .bind(&mirror_id)
    .bind(key.check_value())
    .bind(&now)
    .bind(legacy)
    .bind(&note)
    .execute(&mut *tx)
    .await?;
    // Sealed in memory, in order: one read, one write a row, the head once.
    sqlx::query("UPDATE audit_log SET refs = json_array(item_id, decision_id, view_id)")
        .execute(&mut *tx)
        .await?;
    let sql = format!("SELECT {SEALED_COLUMNS} FROM audit_log ORDER BY id");
    let rows: Vec<SealedRow> = sqlx::query_as(&sql).fetch_all(&mut *tx).await?;
    let mut prev = GENESIS.to_owned();
    for row in &rows {
        let mac = audit_row_mac(&key, &prev, row);
        sqlx::query("UPDATE audit_log SET prev_mac = ?, mac = ? WHERE id = ?")
            .bind(&prev)
            .bind(&mac)
            .bind(row.id)
            .execute(&mut *tx)
            .await?;
        prev = mac;
    }
    if let Some(last) = rows.last() {
        sqlx::query(
            "UPDATE record_seal SET head_row = ?, head_mac = ?, head_seal = ? WHERE id = 1",
        )
        .bind(last.id)
        .bind(&prev)
        .bind(head_seal(&key, last.id, &prev))
        .execute(&mut *tx)
        .await?;
    }
    super::decision_seal::seal_live_legacy_in(&mut tx, &key).await?;
    tx.commit().await?;
    Ok(KeyState::Present(Arc::new(key), keys.kind()))
}

fn found_key(keys: &RecordKeyStore, mirror_id: &str, check: &str) -> KeyState {
    match keys.load(mirror_id) {
        Ok(Some(key)) if key.check_value() == check => {
            KeyState::Present(Arc::new(key), keys.kind())
        }
        Ok(Some(_)) => KeyState::Wrong,
        Ok(None) => KeyState::Missing,
        Err(e) => {
            // Reading stays possible; writing and sending are refused until the key is back.
            tracing::warn!(error = %e, "cannot read the record's key");
            KeyState::Missing
        }
    }
}
