//! The audit log as exported (JSON lines): every row with its references as sealed, its MAC
//! and the previous row's, then one last line with the checkpoint of the whole log — so an
//! export can be checked later, here or elsewhere ([`Store::verify_export`]).

use serde::{Deserialize, Serialize};

use super::seal::{audit_row_mac, SealedRow, GENESIS, SEALED_COLUMNS};
use super::verify::{AuditBreak, Checkpoint};
use super::{format_time, Store};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};

/// One exported row: every column as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportRow {
    /// Row id.
    pub id: i64,
    /// When, exactly as stored (the MAC covers this text).
    pub at: String,
    /// Who.
    pub actor: String,
    /// The item (as it is now: None once its account was removed).
    pub item_id: Option<i64>,
    /// The decision.
    pub decision_id: Option<i64>,
    /// What happened.
    pub action: String,
    /// The version.
    pub version: Option<String>,
    /// sha256 of that version's bytes.
    pub digest: Option<String>,
    /// The outcome.
    pub outcome: Option<String>,
    /// Reason or the service's words.
    pub detail: Option<String>,
    /// The view an approval was taken on.
    pub view_id: Option<i64>,
    /// The references as sealed: `[item_id, decision_id, view_id]`.
    pub refs: Option<String>,
    /// The previous row's MAC.
    pub prev_mac: Option<String>,
    /// This row's MAC.
    pub mac: Option<String>,
}

impl From<SealedRow> for ExportRow {
    fn from(r: SealedRow) -> Self {
        ExportRow {
            id: r.id,
            at: r.at,
            actor: r.actor,
            item_id: r.item_id,
            decision_id: r.decision_id,
            action: r.action,
            version: r.version,
            digest: r.digest,
            outcome: r.outcome,
            detail: r.detail,
            view_id: r.view_id,
            refs: r.refs,
            prev_mac: r.prev_mac,
            mac: r.mac,
        }
    }
}

impl From<&ExportRow> for SealedRow {
    fn from(r: &ExportRow) -> Self {
        SealedRow {
            id: r.id,
            at: r.at.clone(),
            actor: r.actor.clone(),
            item_id: r.item_id,
            decision_id: r.decision_id,
            view_id: r.view_id,
            action: r.action.clone(),
            version: r.version.clone(),
            digest: r.digest.clone(),
            outcome: r.outcome.clone(),
            detail: r.detail.clone(),
            refs: r.refs.clone(),
            prev_mac: r.prev_mac.clone(),
            mac: r.mac.clone(),
        }
    }
}

/// The last line of an export.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportEnd {
    /// The id of the first row exported (1 for the whole log; later with `--since`).
    pub from_row: i64,
    /// The checkpoint of the whole log when it was exported.
    pub checkpoint: Checkpoint,
}

/// What [`Store::verify_export`] found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportVerdict {
    /// Rows in the export.
    pub rows: usize,
    /// Every place the export does not hold.
    pub findings: Vec<AuditBreak>,
    /// Whether each row's MAC was recomputed (only with this mirror's key).
    pub macs_checked: bool,
    /// What could not be checked, in words.
    pub unchecked: Option<String>,
}

impl Store {
    /// The log from `since` on (all of it for `None`), as exported rows.
    pub async fn export_rows(&self, since: Option<DateTime<Utc>>) -> Result<Vec<ExportRow>> {
        let sql = format!("SELECT {SEALED_COLUMNS} FROM audit_log WHERE at >= ? ORDER BY id");
        let rows: Vec<SealedRow> = sqlx::query_as(&sql)
            .bind(since.map(format_time).unwrap_or_default())
            .fetch_all(self.pool())
            .await?;
        Ok(rows.into_iter().map(ExportRow::from).collect())
    }

    /// Check an export (`audit export` output): each row follows the one before it, the last
    /// one is the checkpoint's head when the export is whole, and — with this mirror's key, for
    /// an export of this mirror — every MAC is recomputed. Without the key, says so.
    pub async fn verify_export(&self, text: &str) -> Result<ExportVerdict> {
        let mut rows = Vec::new();
        let mut end: Option<ExportEnd> = None;
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            if let Ok(last) = serde_json::from_str::<ExportEnd>(line) {
                end = Some(last);
                continue;
            }
            let row: ExportRow = serde_json::from_str(line).map_err(|e| {
                Error::refused(
                    "read the export",
                    format!("line {} is not a row: {e}", n + 1),
                )
            })?;
            rows.push(row);
        }
        let mut findings = Vec::new();
        let mine = self.audit_checkpoint().await?.origin;
        let key = match (&end, self.keys.key()) {
            (Some(end), Ok(key)) if end.checkpoint.origin == mine => Some(key),
            _ => None,
        };
        let mut previous: Option<&ExportRow> = None;
        for row in &rows {
            let Some(mac) = row.mac.as_deref() else {
                findings.push(AuditBreak {
                    row_id: row.id,
                    problem: format!("row {} carries no seal", row.id),
                });
                continue;
            };
            let follows = match previous {
                Some(p) => p.mac.is_some() && row.prev_mac == p.mac && row.id == p.id + 1,
                None => row.id != 1 || row.prev_mac.as_deref() == Some(GENESIS),
            };
            if !follows {
                findings.push(AuditBreak {
                    row_id: row.id,
                    problem: format!("row {} does not follow the row before it", row.id),
                });
            }
            if let Some(key) = key {
                let prev = row.prev_mac.as_deref().unwrap_or(GENESIS);
                if audit_row_mac(key, prev, &SealedRow::from(row)) != mac {
                    findings.push(AuditBreak {
                        row_id: row.id,
                        problem: format!("row {} was changed", row.id),
                    });
                }
            }
            previous = Some(row);
        }
        let mut unchecked = Vec::new();
        match &end {
            None => unchecked.push("the export has no checkpoint line: it may have been cut short"),
            Some(end) => {
                if let Some(first) = rows.first().filter(|r| r.id != end.from_row) {
                    findings.push(AuditBreak {
                        row_id: end.from_row,
                        problem: format!(
                            "the export began at row {}, its first row now is {}: rows were removed",
                            end.from_row, first.id
                        ),
                    });
                }
                let whole = end.from_row == 1;
                let head = rows
                    .last()
                    .and_then(|r| r.mac.as_deref())
                    .map(|m| {
                        use base64::Engine;
                        base64::engine::general_purpose::STANDARD
                            .encode(hex::decode(m).unwrap_or_default())
                    })
                    .unwrap_or_default();
                if whole
                    && (rows.len() as u64 != end.checkpoint.size || head != end.checkpoint.head)
                {
                    findings.push(AuditBreak {
                        row_id: rows.last().map_or(0, |r| r.id),
                        problem: "the rows do not end at the export's checkpoint: rows were \
                                  removed or added after it was written"
                            .into(),
                    });
                }
            }
        }
        if key.is_none() {
            unchecked.push(
                "the MACs cannot be recomputed without this mirror's key: the links between \
                 rows and the checkpoint were checked, not each row's content",
            );
        }
        findings.sort_by_key(|f| f.row_id);
        Ok(ExportVerdict {
            rows: rows.len(),
            findings,
            macs_checked: key.is_some(),
            unchecked: (!unchecked.is_empty()).then(|| unchecked.join("; ")),
        })
    }
}
