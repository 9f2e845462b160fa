//! `countersign audit verify|checkpoint|export`: check the sealed audit log (against a
//! checkpoint kept elsewhere, if given), print its head, and hand the log over as JSON lines or
//! CSV.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use countersign_core::store::{
    AuditEntry, AuditVerdict, Checkpoint, ExportEnd, SecretStorage, VerdictStatus,
};
use countersign_core::Store;

/// The `audit` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check that no row of the audit log was changed, inserted or removed; exits 1 naming
    /// every row that does not hold, 2 when it cannot be checked (the key is missing).
    Verify {
        /// A checkpoint written earlier (`audit checkpoint`): the present log must extend it.
        #[arg(long, value_name = "FILE")]
        checkpoint: Option<std::path::PathBuf>,
        /// Check this export (`audit export` output) instead of the log.
        #[arg(long, value_name = "FILE", conflicts_with = "checkpoint")]
        export: Option<std::path::PathBuf>,
    },
    /// Print the log's head (origin, row count, MAC of the last row): keep it elsewhere, and
    /// `audit verify --checkpoint` proves later that the log only grew.
    Checkpoint,
    /// Print the audit log, oldest first.
    Export {
        /// `jsonl` (one JSON object a line) or `csv` (with a header row).
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        /// Only rows from this time on (RFC 3339, e.g. 2026-12-01T00:00:00Z, or a date,
        /// 2026-12-01, meaning its start in UTC).
        #[arg(long)]
        since: Option<String>,
    },
}

/// How `audit export` writes the log.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object a line.
    Jsonl,
    /// Comma-separated values (RFC 4180), with a header row.
    Csv,
}

/// Run one `audit` subcommand.
pub async fn run(store: &Store, command: &AuditCommand, json: bool) -> Result<ExitCode> {
    match command {
        AuditCommand::Verify {
            export: Some(path), ..
        } => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let verdict = store.verify_export(&text).await?;
            if json {
                println!("{}", serde_json::to_string(&verdict)?);
            } else {
                if verdict.findings.is_empty() {
                    println!("The export holds: {} rows.", verdict.rows);
                } else {
                    println!("The export was tampered with:");
                    for finding in &verdict.findings {
                        println!("  row {}: {}", finding.row_id, finding.problem);
                    }
                }
                if let Some(unchecked) = &verdict.unchecked {
                    println!("Not checked: {unchecked}.");
                }
            }
            Ok(if verdict.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        AuditCommand::Verify { checkpoint, .. } => {
            let checkpoint = match checkpoint {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("cannot read {}", path.display()))?;
                    Some(Checkpoint::parse(&text)?)
                }
                None => None,
            };
            let verdict = store.verify_audit_against(checkpoint.as_ref()).await?;
            if json {
                println!("{}", serde_json::to_string(&verdict)?);
            } else {
                print_verdict(&verdict, checkpoint.is_some());
            }
            Ok(match verdict.status {
                VerdictStatus::Intact => ExitCode::SUCCESS,
                VerdictStatus::Tampered => ExitCode::FAILURE,
                VerdictStatus::CannotCheck => ExitCode::from(2),
            })
        }
        AuditCommand::Checkpoint => {
            let checkpoint = store.audit_checkpoint().await?;
            if json {
                println!("{}", serde_json::to_string(&checkpoint)?);
            } else {
                print!("{}", checkpoint.to_text());
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Export { format, since } => {
            let since = since.as_deref().map(parse_since).transpose()?;
            let mut out = std::io::stdout().lock();
            match format {
                ExportFormat::Jsonl => {
                    // Each row with its MAC and the previous one, then the checkpoint: the
                    // export carries its own proof (`audit verify --export`).
                    let rows = store.export_rows(since).await?;
                    for row in &rows {
                        writeln!(out, "{}", serde_json::to_string(row)?)?;
                    }
                    let checkpoint = store.audit_checkpoint().await?;
                    let end = ExportEnd {
                        // Nothing since then: the export begins after the last row.
                        from_row: rows.first().map_or(checkpoint.size as i64 + 1, |r| r.id),
                        checkpoint,
                    };
                    writeln!(out, "{}", serde_json::to_string(&end)?)?;
                    // An export also leaves its checkpoint in the owner's folder, if chosen.
                    if let Some(kept) = store.keep_checkpoint(chrono::Utc::now(), true).await? {
                        eprintln!("Checkpoint kept in {}.", kept.display());
                    }
                }
                ExportFormat::Csv => write_csv(&mut out, &store.audit_log_since(since).await?)?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_verdict(verdict: &AuditVerdict, against_checkpoint: bool) {
    match verdict.status {
        VerdictStatus::Intact if against_checkpoint => println!(
            "The audit log is intact: {} rows, and it extends the checkpoint.",
            verdict.rows
        ),
        VerdictStatus::Intact => println!("The audit log is intact: {} rows.", verdict.rows),
        VerdictStatus::Tampered => {
            println!("The audit log was tampered with:");
            for finding in &verdict.findings {
                println!("  row {}: {}", finding.row_id, finding.problem);
            }
        }
        VerdictStatus::CannotCheck => println!(
            "The audit log {}; nothing can be said either way.",
            verdict
                .cannot_check
                .as_deref()
                .unwrap_or("cannot be checked")
        ),
    }
    if verdict.key_storage == Some(SecretStorage::File) {
        println!(
            "Its key is kept in a file in the data directory (no OS keyring): the record is only \
             as safe as that file."
        );
    }
    if let Some(legacy) = &verdict.legacy {
        println!("Note: {legacy}.");
    }
}

fn parse_since(text: &str) -> Result<chrono::DateTime<chrono::Utc>> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&chrono::Utc));
    }
    let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").with_context(|| {
        format!("cannot read --since {text:?}: give a date or an RFC 3339 time")
    })?;
    Ok(day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc())
}

const CSV_HEADER: [&str; 11] = [
    "id",
    "at",
    "actor",
    "item_id",
    "decision_id",
    "action",
    "version",
    "digest",
    "outcome",
    "detail",
    "view_id",
];

fn write_csv(out: &mut impl Write, entries: &[AuditEntry]) -> Result<()> {
    // RFC 4180 ends every record, the header too, with CRLF.
    write!(out, "{}\r\n", CSV_HEADER.join(","))?;
    for e in entries {
        let line = &e.line;
        let number = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
        let fields = [
            e.id.to_string(),
            e.at.to_rfc3339(),
            line.actor.clone(),
            number(line.item_id),
            number(line.decision_id),
            line.action.clone(),
            line.version.clone().unwrap_or_default(),
            line.digest.clone().unwrap_or_default(),
            line.outcome.clone().unwrap_or_default(),
            line.detail.clone().unwrap_or_default(),
            number(line.view_id),
        ];
        let quoted: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        write!(out, "{}\r\n", quoted.join(","))?;
    }
    Ok(())
}

/// A field quoted when it holds a comma, a quote or a line break (RFC 4180 §2.6–2.7).
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_with_commas_quotes_or_line_breaks_are_quoted() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("say \"no\""), "\"say \"\"no\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn since_takes_a_date_or_a_time() {
        assert_eq!(
            parse_since("2026-12-01").unwrap().to_rfc3339(),
            "2026-12-01T00:00:00+00:00"
        );
        assert_eq!(
            parse_since("2026-12-01T10:00:00+01:00")
                .unwrap()
                .to_rfc3339(),
            "2026-12-01T09:00:00+00:00"
        );
        assert!(parse_since("yesterday").is_err());
    }
}
