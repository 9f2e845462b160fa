//! Checkpoints written by themselves to a folder the owner chose (a synced or removable
//! drive): at each export, and once a day. A copy of the log's head kept where this computer
//! cannot change it is what reveals a rewrite, even by someone who holds the key.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::audit::{append_audit_in, NewAuditEntry};
use super::Store;
use crate::error::{Error, Result};

/// The settings row holding the folder (JSON: a path, or null).
const FOLDER_KEY: &str = "checkpointFolder";
/// How checkpoint files are named: `countersign-checkpoint-<UTC time>.txt`.
const PREFIX: &str = "countersign-checkpoint-";
const TIME_FORMAT: &str = "%Y%m%dT%H%M%S%.3fZ";
/// A checkpoint is due once this long after the newest one in the folder.
const DAY: chrono::Duration = chrono::Duration::hours(24);

impl Store {
    /// The folder checkpoints are written to, if the owner chose one.
    pub async fn checkpoint_folder(&self) -> Result<Option<PathBuf>> {
        let value: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(FOLDER_KEY)
            .fetch_optional(self.pool())
            .await?;
        let folder: Option<String> = value
            .map(|v| serde_json::from_str(&v))
            .transpose()
            .map_err(|e| Error::Corrupt(format!("bad checkpoint folder setting: {e}")))?
            .flatten();
        Ok(folder.map(PathBuf::from))
    }

    /// Choose the folder (`None`: write no checkpoints by themselves); audited.
    pub async fn set_checkpoint_folder(&self, folder: Option<&Path>, actor: &str) -> Result<()> {
        let before = self.checkpoint_folder().await?;
        let shown = |f: &Option<PathBuf>| {
            f.as_ref()
                .map_or("none".into(), |f| f.display().to_string())
        };
        let after = folder.map(Path::to_path_buf);
        let mut tx = self.write_tx().await?;
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(FOLDER_KEY)
        .bind(serde_json::json!(after.as_ref().map(|f| f.display().to_string())).to_string())
        .execute(&mut *tx)
        .await?;
        append_audit_in(
            &mut tx,
            &self.keys,
            &NewAuditEntry {
                actor: actor.to_string(),
                action: "setting changed".into(),
                detail: Some(format!(
                    "checkpoint folder: {} \u{2192} {}",
                    shown(&before),
                    shown(&after)
                )),
                ..NewAuditEntry::default()
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Write the log's checkpoint to the chosen folder — always with `force` (an export),
    /// else only when the newest one there is a day old or more. Returns the file written.
    pub async fn keep_checkpoint(
        &self,
        now: DateTime<Utc>,
        force: bool,
    ) -> Result<Option<PathBuf>> {
        let Some(folder) = self.checkpoint_folder().await? else {
            return Ok(None);
        };
        if !force && newest_in(&folder).is_some_and(|newest| now - newest < DAY) {
            return Ok(None);
        }
        let checkpoint = self.audit_checkpoint().await?;
        let save = |source| Error::SaveFile {
            path: folder.clone(),
            source,
        };
        std::fs::create_dir_all(&folder).map_err(save)?;
        let path = folder.join(format!("{PREFIX}{}.txt", now.format(TIME_FORMAT)));
        // Whole or not at all: written beside, then renamed.
        let partial = folder.join(format!(".{PREFIX}{}.partial", now.format(TIME_FORMAT)));
        std::fs::write(&partial, checkpoint.to_text()).map_err(save)?;
        std::fs::rename(&partial, &path).map_err(save)?;
        Ok(Some(path))
    }
}

/// When the newest checkpoint in `folder` was written (from its name).
fn newest_in(folder: &Path) -> Option<DateTime<Utc>> {
    std::fs::read_dir(folder)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let time = name.strip_prefix(PREFIX)?.strip_suffix(".txt")?;
            chrono::NaiveDateTime::parse_from_str(time, TIME_FORMAT)
                .ok()
                .map(|t| t.and_utc())
        })
        .max()
}

/// Keep a checkpoint in the chosen folder once a day for as long as the app runs (checked
/// hourly, so a laptop asleep at the due time writes soon after it wakes).
pub async fn keep_checkpoints_daily(store: Store) {
    loop {
        if let Err(e) = store.keep_checkpoint(Utc::now(), false).await {
            tracing::warn!(error = %e, "cannot write the daily checkpoint");
        }
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}
