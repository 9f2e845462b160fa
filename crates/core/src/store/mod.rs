//! The local mirror: one SQLite file in the data directory, opened with WAL, foreign keys, a
//! busy timeout and `synchronous=FULL` (the outbox and the audit log must survive a power cut,
//! and one setting for the whole file keeps that true for every write path).
//!
//! Migrations live in the workspace's top-level `migrations/` and are embedded at build time.

mod accounts;
mod audit;
mod checkpoint_folder;
mod cursors;
mod decision_seal;
mod decisions;
mod draft_words;
mod export;
mod items;
mod labels;
mod names;
mod queue;
mod record;
mod refusals;
mod routes;
mod rule_order;
mod rules;
mod seal;
mod settings;
mod stamps;
mod threads;
mod verify;
mod versions;
mod views;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use crate::error::{Error, Result};

pub use accounts::{Account, NewAccount, SecretStorage};
pub use audit::{AuditEntry, NewAuditEntry};
pub use checkpoint_folder::keep_checkpoints_daily;
pub use cursors::{Delivery, SyncCursor};
pub use decision_seal::UNVOUCHED;
pub use decisions::{Claim, Decision, DecisionFilter, NewDecision};
pub use export::{ExportEnd, ExportRow, ExportVerdict};
pub use items::{
    DraftContent, Item, ItemFilter, ItemSummary, LiveDecision, MusterFields, ObservedDraft,
    RecordOutcome,
};
pub use labels::MirroredLabel;
pub use queue::{PageStart, QueueCursor, QueuePage, StateCounts};
pub use refusals::{Refusal, RefusalKind};
pub use routes::RouteRecord;
pub use rules::{rule_of_actor, NewEvaluation, Rule, RuleEvaluation, RuleMode};
pub use seal::RecordKeyStore;
pub use settings::{RemoteContentPolicy, Settings, SettingsChange};
pub use stamps::stamp_conflict_reason;
pub use threads::ThreadMessage;
pub use verify::{AuditBreak, AuditVerdict, Checkpoint, RecordStanding, VerdictStatus};
pub use versions::DraftVersion;
pub(crate) use views::view_of_in;
pub use views::{ShownPart, ViewEvent};

/// The file name of the mirror inside the data directory.
pub const MIRROR_FILE: &str = "mirror.sqlite3";

/// Every migration, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// A handle on the mirror. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// The record's key (issue 35), found or made when the mirror was opened.
    keys: seal::KeyState,
}

impl Store {
    /// Open (or create) the mirror in `data_dir`, creating the directory if needed, with the
    /// record's key in a 0600 file under it — what the file secret store does (tests, demo
    /// mode). The app and the CLI use [`Store::open_keyed`] with the store their tokens use.
    pub async fn open(data_dir: &Path) -> Result<Store> {
        Store::open_keyed(data_dir, &RecordKeyStore::file(data_dir)).await
    }

    /// Open (or create) the mirror in `data_dir`, its record's key kept in `keys`.
    pub async fn open_keyed(data_dir: &Path, keys: &RecordKeyStore) -> Result<Store> {
        std::fs::create_dir_all(data_dir).map_err(|source| Error::DataDir {
            path: data_dir.to_path_buf(),
            source,
        })?;
        restrict_permissions(data_dir);
        Store::open_file_keyed(&data_dir.join(MIRROR_FILE), keys).await
    }

    /// Open (or create) the mirror at exactly `path` and bring it up to date, with the
    /// record's key in a 0600 file beside it (tests).
    pub async fn open_file(path: &Path) -> Result<Store> {
        let dir = path.parent().unwrap_or(Path::new("."));
        Store::open_file_keyed(path, &RecordKeyStore::file(dir)).await
    }

    /// Open (or create) the mirror at exactly `path`, its record's key kept in `keys`.
    pub async fn open_file_keyed(path: &Path, keys: &RecordKeyStore) -> Result<Store> {
        let pool = connect(path).await?;
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|e| migrate_error(path, e))?;
        let mut store = Store {
            pool,
            path: path.to_path_buf(),
            keys: seal::KeyState::Missing,
        };
        store.keys = seal::open_seal(&store, keys).await?;
        Ok(store)
    }

    /// Open the mirror at `path` without running migrations (tests of the migrations use this).
    pub async fn open_unmigrated(path: &Path) -> Result<Store> {
        Ok(Store {
            pool: connect(path).await?,
            path: path.to_path_buf(),
            keys: seal::KeyState::Missing,
        })
    }

    /// The mirror file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection pool, for the modules of this crate that run their own queries.
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Every row of `table` about one item, oldest first: its versions, decisions, refusals
    /// and audit lines are each read this way.
    async fn rows_of_item<T>(&self, table: &'static str, item_id: i64) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
    {
        let sql = format!("SELECT * FROM {table} WHERE item_id = ? ORDER BY id");
        Ok(sqlx::query_as(&sql)
            .bind(item_id)
            .fetch_all(self.pool())
            .await?)
    }

    /// Start a transaction that holds the write lock from its first statement, so two
    /// processes cannot both read a row as free and then both write it.
    pub(crate) async fn write_tx(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Close every connection (checkpointing the WAL).
    pub async fn close(&self) {
        // Fold the WAL back into the main file so the mirror is one self-contained file.
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await
        {
            tracing::warn!(error = %e, "cannot fold the WAL back into the mirror on close");
        }
        self.pool.close().await;
    }
}

/// SQLite's page cache per connection, in KiB.
pub(crate) const CACHE_KIB: u32 = 512;

async fn connect(path: &Path) -> Result<SqlitePool> {
    refuse_foreign_file(path)?;
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10))
        .synchronous(SqliteSynchronous::Full)
        // REGEXP, for searches that fold case beyond ASCII (`contains_ignoring_case`).
        .with_regexp()
        // A bounded page cache per connection (negative: KiB), so an app that lives in the
        // tray all day does not keep SQLite's default 2 MiB × every pooled connection; the
        // queue is read a page at a time, which fits well within it.
        .pragma("cache_size", format!("-{CACHE_KIB}"));
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .map_err(|e| open_error(path, e))?;
    // A file with a valid header can still be damaged inside: make SQLite read the schema now.
    sqlx::query("SELECT count(*) FROM sqlite_master")
        .fetch_one(&pool)
        .await
        .map_err(|e| open_error(path, e))?;
    Ok(pool)
}

/// Refuse, before SQLite touches it, a file that is not a SQLite database: opening it in WAL
/// mode would otherwise fail half-way or, for an empty-looking file, start writing into it.
fn refuse_foreign_file(path: &Path) -> Result<()> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::DataDir {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let mut header = [0u8; 16];
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(source) => {
                return Err(Error::DataDir {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }
    if read == 0 {
        // An empty file is what SQLite itself creates; it is safe to use.
        return Ok(());
    }
    if read < header.len() || &header != SQLITE_HEADER {
        return Err(Error::CorruptMirror {
            path: path.to_path_buf(),
            detail: "it does not start with the SQLite header".into(),
        });
    }
    Ok(())
}

fn open_error(path: &Path, error: sqlx::Error) -> Error {
    let text = error.to_string();
    if text.contains("not a database") || text.contains("malformed") || text.contains("corrupt") {
        Error::CorruptMirror {
            path: path.to_path_buf(),
            detail: text,
        }
    } else {
        Error::Database(error)
    }
}

fn migrate_error(path: &Path, error: sqlx::migrate::MigrateError) -> Error {
    let text = error.to_string();
    if text.contains("not a database") || text.contains("malformed") {
        Error::CorruptMirror {
            path: path.to_path_buf(),
            detail: text,
        }
    } else {
        Error::Migrate {
            path: path.to_path_buf(),
            detail: text,
        }
    }
}

#[cfg(unix)]
fn restrict_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // The mirror holds the owner's mail: nobody else on the machine should read it.
    if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)) {
        tracing::warn!(path = %dir.display(), error = %e, "cannot make the data directory private");
    }
}

#[cfg(not(unix))]
fn restrict_permissions(_dir: &Path) {}

/// A timestamp as stored: RFC 3339, UTC, milliseconds, so text order is time order.
pub fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Parse a stored timestamp.
pub fn parse_time(text: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| Error::Corrupt(format!("bad timestamp {text:?}: {e}")))
}

/// A row or version looked up by what the caller named must exist.
pub(crate) trait Found<T> {
    /// `None` becomes [`Error::NotFound`] naming `what` and `id`.
    fn found(self, what: &'static str, id: impl ToString) -> Result<T>;
}

impl<T> Found<T> for Option<T> {
    fn found(self, what: &'static str, id: impl ToString) -> Result<T> {
        self.ok_or_else(|| Error::NotFound {
            what,
            id: id.to_string(),
        })
    }
}

/// A write that touched no row did not find what it was to change.
impl Found<()> for sqlx::sqlite::SqliteQueryResult {
    fn found(self, what: &'static str, id: impl ToString) -> Result<()> {
        (self.rows_affected() > 0).then_some(()).found(what, id)
    }
}

/// A pattern for SQL's `REGEXP` (sqlx's, the `regex` crate's syntax) that finds `text` anywhere,
/// literally, ignoring case as Unicode folds it: "élodie" finds "Élodie", which SQLite's `LIKE`
/// and `lower()` (ASCII only without ICU) do not. The owner's `%`, `.` or `*` are characters.
pub(crate) fn contains_ignoring_case(text: &str) -> String {
    format!("(?i){}", regex::escape(text))
}
