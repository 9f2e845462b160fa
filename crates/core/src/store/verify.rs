//! Checking the sealed audit log, and its checkpoints (C2SP `tlog-checkpoint` in spirit: an
//! origin line naming the mirror, the number of rows, the MAC of the last row).
//!
//! A checkpoint kept elsewhere (a synced folder, a removable drive, a printout) is what makes a
//! rewrite visible even to someone who holds the key too: the present log must contain, at
//! that row count, the same MAC — and every MAC covers all the rows before it.

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::seal::{audit_row_mac, head_seal, KeyState, SealedRow, GENESIS, SEALED_COLUMNS};
use super::{SecretStorage, Store};
use crate::error::{Error, Result};

/// What [`Store::verify_audit`] found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerdict {
    /// Rows in the log.
    pub rows: usize,
    /// `intact`, `tampered`, or `cannot check` (no key, or another key).
    pub status: VerdictStatus,
    /// The first finding; `None`: nothing found (or nothing could be checked).
    pub broken: Option<AuditBreak>,
    /// Every finding, oldest row first.
    pub findings: Vec<AuditBreak>,
    /// Why nothing could be checked, when `status` is `cannot check`.
    pub cannot_check: Option<String>,
    /// Where the key is kept: with `file`, the record is only as safe as that file.
    pub key_storage: Option<SecretStorage>,
    /// What the first sealing found of the rows written before it.
    pub legacy: Option<String>,
}

/// The outcome of a verification, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum VerdictStatus {
    /// Every row is sealed, in order, and the head is the newest row.
    Intact,
    /// At least one finding.
    Tampered,
    /// The key is not here: nothing can be said either way.
    CannotCheck,
}

/// One place where the log does not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditBreak {
    /// The row id.
    pub row_id: i64,
    /// What is wrong, in words.
    pub problem: String,
}

/// The head of the log at one moment, to keep elsewhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// The origin line: names the mirror.
    pub origin: String,
    /// How many rows the log held.
    pub size: u64,
    /// The MAC of the last of them (base64, as tlog-checkpoint writes hashes).
    pub head: String,
}

const ORIGIN_PREFIX: &str = "countersign.audit/";

impl Checkpoint {
    /// The note text: origin, size and head, one a line, each ending in a newline.
    pub fn to_text(&self) -> String {
        format!("{}\n{}\n{}\n", self.origin, self.size, self.head)
    }

    /// Read a checkpoint's text (the first three lines; a signature block after is ignored).
    pub fn parse(text: &str) -> Result<Checkpoint> {
        let bad = |why: &str| Error::refused("read the checkpoint", why.to_owned());
        let mut lines = text.lines();
        let origin = lines.next().unwrap_or_default().trim().to_owned();
        if !origin.starts_with(ORIGIN_PREFIX) {
            return Err(bad("its first line is not a Countersign origin line"));
        }
        let size = lines
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| bad("its second line is not a row count"))?;
        let head = lines.next().unwrap_or_default().trim().to_owned();
        if base64::engine::general_purpose::STANDARD
            .decode(&head)
            .map(|b| b.len())
            != Ok(32)
        {
            return Err(bad("its third line is not a 32-byte MAC in base64"));
        }
        Ok(Checkpoint { origin, size, head })
    }
}

fn mac_to_base64(mac: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(hex::decode(mac).unwrap_or_default())
}

impl Store {
    /// Where the key of this mirror is kept, or why there is none.
    pub fn key_storage(&self) -> std::result::Result<SecretStorage, &'static str> {
        match &self.keys {
            KeyState::Present(_, storage) => Ok(*storage),
            other => other.key().map(|_| SecretStorage::Keyring),
        }
    }

    async fn sealed_rows(&self) -> Result<Vec<SealedRow>> {
        let sql = format!("SELECT {SEALED_COLUMNS} FROM audit_log ORDER BY id");
        Ok(sqlx::query_as(&sql).fetch_all(self.pool()).await?)
    }

    /// The head of the log now: its origin, row count and last MAC.
    pub async fn audit_checkpoint(&self) -> Result<Checkpoint> {
        let mirror: Option<String> =
            sqlx::query_scalar("SELECT mirror_id FROM record_seal WHERE id = 1")
                .fetch_optional(self.pool())
                .await?;
        let (size, mac): (i64, Option<String>) = sqlx::query_as(
            "SELECT count(*), (SELECT mac FROM audit_log ORDER BY id DESC LIMIT 1) FROM audit_log",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(Checkpoint {
            origin: format!("{ORIGIN_PREFIX}{}", mirror.unwrap_or_default()),
            size: size as u64,
            head: mac_to_base64(mac.as_deref().unwrap_or(GENESIS)),
        })
    }

    /// Check every row's seal, the order of the rows, their references and the sealed head;
    /// with `checkpoint`, also that the present log extends it.
    pub async fn verify_audit_against(
        &self,
        checkpoint: Option<&Checkpoint>,
    ) -> Result<AuditVerdict> {
        let rows = self.sealed_rows().await?;
        let legacy: Option<Option<String>> =
            sqlx::query_scalar("SELECT legacy_note FROM record_seal WHERE id = 1")
                .fetch_optional(self.pool())
                .await?;
        let mut verdict = AuditVerdict {
            rows: rows.len(),
            status: VerdictStatus::Intact,
            broken: None,
            findings: Vec::new(),
            cannot_check: None,
            key_storage: None,
            legacy: legacy.flatten(),
        };
        let key = match self.keys.key() {
            Ok(key) => key,
            Err(why) => {
                verdict.status = VerdictStatus::CannotCheck;
                verdict.cannot_check = Some(why.to_owned());
                return Ok(verdict);
            }
        };
        verdict.key_storage = self.key_storage().ok();
        let mut findings = Vec::new();
        let mut found =
            |row_id: i64, problem: String| findings.push(AuditBreak { row_id, problem });
        let mut expected_prev = GENESIS.to_owned();
        let mut previous_id = 0;
        for row in &rows {
            let Some(mac) = row.mac.as_deref() else {
                found(
                    row.id,
                    format!(
                        "row {} carries no seal: it was written around Countersign",
                        row.id
                    ),
                );
                // Its id is taken: the next sealed row follows the last sealed one, not a gap.
                previous_id = row.id;
                continue;
            };
            if row.prev_mac.as_deref() != Some(expected_prev.as_str()) {
                if row.id != previous_id + 1 {
                    found(
                        previous_id + 1,
                        format!(
                            "row {} was removed (row {} does not follow row {previous_id})",
                            previous_id + 1,
                            row.id
                        ),
                    );
                } else {
                    found(row.id, format!("row {} does not follow row {previous_id}: a row was inserted, removed or re-chained before it", row.id));
                }
            } else if row.id != previous_id + 1 {
                // Sealed in order but with a gap: the rows between were never sealed or are gone.
                found(
                    previous_id + 1,
                    format!("row {} was removed", previous_id + 1),
                );
            }
            let prev = row.prev_mac.as_deref().unwrap_or(GENESIS);
            if audit_row_mac(key, prev, row) != mac {
                found(row.id, format!("row {} was changed", row.id));
            } else if let Some(problem) = reference_changed(self, row).await? {
                found(row.id, problem);
            }
            expected_prev = mac.to_owned();
            previous_id = row.id;
        }
        let head: Option<(Option<i64>, Option<String>, Option<String>)> =
            sqlx::query_as("SELECT head_row, head_mac, head_seal FROM record_seal WHERE id = 1")
                .fetch_optional(self.pool())
                .await?;
        if let Some((Some(head_row), Some(head_mac), Some(seal))) = head {
            let last = rows.iter().rev().find(|r| r.mac.is_some());
            if head_seal(key, head_row, &head_mac) != seal {
                found(head_row, "the sealed head of the log was changed".into());
            } else if last.map(|r| r.id) != Some(head_row)
                || last.and_then(|r| r.mac.as_deref()) != Some(head_mac.as_str())
            {
                let newest = last.map(|r| r.id).unwrap_or(0);
                if newest < head_row {
                    found(newest + 1, format!("the rows after row {newest} were removed (the log's head was row {head_row})"));
                } else {
                    found(
                        newest,
                        format!(
                            "row {newest} is not the newest row the log sealed (row {head_row} is)"
                        ),
                    );
                }
            }
        }
        if let Some(checkpoint) = checkpoint {
            if let Some(problem) = extends(&rows, checkpoint) {
                found(problem.row_id, problem.problem);
            }
        }
        findings.sort_by_key(|f| f.row_id);
        verdict.broken = findings.first().cloned();
        if !findings.is_empty() {
            verdict.status = VerdictStatus::Tampered;
        }
        verdict.findings = findings;
        Ok(verdict)
    }

    /// [`Store::verify_audit_against`] without a checkpoint.
    pub async fn verify_audit(&self) -> Result<AuditVerdict> {
        self.verify_audit_against(None).await
    }
}

/// Whether the log `rows` extends `checkpoint`: it has at least that many rows, and the row at
/// that count carries the checkpoint's MAC (which covers every row before it).
fn extends(rows: &[SealedRow], checkpoint: &Checkpoint) -> Option<AuditBreak> {
    let size = checkpoint.size as usize;
    if size == 0 {
        return None;
    }
    if rows.len() < size {
        return Some(AuditBreak {
            row_id: rows.len() as i64 + 1,
            problem: format!(
                "the log was truncated: the checkpoint counted {size} rows, the log holds {}",
                rows.len()
            ),
        });
    }
    let at = &rows[size - 1];
    let mac = at.mac.as_deref().map(mac_to_base64);
    (mac.as_deref() != Some(checkpoint.head.as_str())).then(|| AuditBreak {
        row_id: at.id,
        problem: format!(
            "the log does not extend the checkpoint: row {} (the {size}th) is not the row it \
             sealed — the rows up to it were rewritten, re-chained, inserted or removed",
            at.id
        ),
    })
}

/// A live reference that differs from the one sealed: set to another row (an approval moved to
/// another item's trail), or cleared while the row it named is still there.
async fn reference_changed(store: &Store, row: &SealedRow) -> Result<Option<String>> {
    let sealed: [Option<i64>; 3] = row
        .refs
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default();
    let live = [row.item_id, row.decision_id, row.view_id];
    for ((name, table), (sealed, live)) in [
        ("item", "review_items"),
        ("decision", "decisions"),
        ("view", "view_events"),
    ]
    .into_iter()
    .zip(sealed.into_iter().zip(live))
    {
        match (sealed, live) {
            (s, l) if s == l => {}
            // The schema clears a reference when its account is removed: fine if it is gone.
            (Some(s), None) => {
                let sql = format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE id = ?)");
                let still: bool = sqlx::query_scalar(&sql)
                    .bind(s)
                    .fetch_one(store.pool())
                    .await?;
                if still {
                    return Ok(Some(format!(
                        "row {}'s {name} reference was cleared ({name} {s} is still there)",
                        row.id
                    )));
                }
            }
            (s, l) => {
                return Ok(Some(format!(
                    "row {}'s {name} reference was changed (sealed {}, now {})",
                    row.id,
                    s.map_or("none".into(), |v| v.to_string()),
                    l.map_or("none".into(), |v| v.to_string()),
                )))
            }
        }
    }
    Ok(None)
}

/// How the record stands, for the History view: the verdict in words and the checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecordStanding {
    /// Rows in the log.
    pub rows: usize,
    /// Every row sealed, in order, the head the newest row.
    pub intact: bool,
    /// What does not hold, one sentence a finding (the first few).
    pub findings: Vec<String>,
    /// How many findings in all.
    pub finding_count: usize,
    /// Why nothing could be checked (the key is missing, or another).
    pub cannot_check: Option<String>,
    /// The key is in a file in the data directory: the record is only as safe as that file.
    pub key_in_file: bool,
    /// The checkpoint to keep elsewhere, as `audit checkpoint` prints it.
    pub checkpoint: String,
}

impl Store {
    /// How the record stands now.
    pub async fn record_standing(&self) -> Result<RecordStanding> {
        let verdict = self.verify_audit().await?;
        let checkpoint = self.audit_checkpoint().await?;
        Ok(RecordStanding {
            rows: verdict.rows,
            intact: verdict.status == VerdictStatus::Intact,
            findings: verdict
                .findings
                .iter()
                .take(5)
                .map(|f| f.problem.clone())
                .collect(),
            finding_count: verdict.findings.len(),
            cannot_check: verdict.cannot_check,
            key_in_file: verdict.key_storage == Some(SecretStorage::File),
            checkpoint: checkpoint.to_text(),
        })
    }
}
