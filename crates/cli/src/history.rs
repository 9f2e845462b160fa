//! `countersign history` (what was decided: sent, rejected, by rule, edited, failed; the exact
//! bytes of one decision) and `countersign agents` (per agent figures).

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use countersign_core::history::{AgentFigures, HistoryEntry, HistoryFilter, HistoryKind};
use countersign_core::Store;

use crate::output;

/// The filters of `countersign history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only decisions of this kind.
    #[arg(long, value_enum)]
    kind: Option<Kind>,
    /// Only this account (its id, from `account list`).
    #[arg(long)]
    account: Option<String>,
    /// Only decisions with this text (any case) in the subject, the recipients or the reason.
    #[arg(long)]
    search: Option<String>,
    /// At most this many, newest first.
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Skip this many of the newest (the next page).
    #[arg(long, default_value_t = 0)]
    offset: u32,
    /// Print exactly the bytes this decision bound to — for a send, the bytes that left — as
    /// they are, instead of the list (pipe them to `sha256sum` to check the record's digest).
    #[arg(long, value_name = "DECISION", conflicts_with_all = ["kind", "account", "search"])]
    bytes: Option<i64>,
}

/// A kind of decision, as `--kind` takes it.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    /// Approved and carried out.
    Sent,
    /// Rejected.
    Rejected,
    /// Decided by a rule.
    ByRule,
    /// Approved after the owner edited it.
    Edited,
    /// Refused for good by Google or the plugin.
    Failed,
}

impl From<Kind> for HistoryKind {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Sent => HistoryKind::Sent,
            Kind::Rejected => HistoryKind::Rejected,
            Kind::ByRule => HistoryKind::ByRule,
            Kind::Edited => HistoryKind::Edited,
            Kind::Failed => HistoryKind::Failed,
        }
    }
}

/// Run `countersign history`.
pub async fn run(store: &Store, args: &HistoryArgs, json: bool) -> Result<()> {
    if let Some(decision) = args.bytes {
        let left = store.bytes_that_left(decision).await?;
        let mut out = std::io::stdout().lock();
        out.write_all(left.content.bytes())
            .and_then(|()| out.flush())
            .context("cannot write the bytes")?;
        return Ok(());
    }
    let filter = HistoryFilter {
        kind: args.kind.map(HistoryKind::from),
        account_id: args.account.clone(),
        search: args.search.clone(),
        limit: args.limit.max(1),
        offset: args.offset,
    };
    let entries = store.history(&filter).await?;
    output::list(&entries, json, "Nothing decided yet.", entry_line)
}

fn entry_line(entry: &HistoryEntry) {
    let kinds: Vec<&str> = entry.kinds.iter().map(|k| k.as_str()).collect();
    println!(
        "{:>5}  item {:<5} {}  {:<16} {:<20} {:<40} {}",
        entry.decision_id,
        entry.item_id,
        entry.decided_at.format("%Y-%m-%d %H:%M:%S"),
        kinds.join(","),
        output::truncate(&entry.actor, 20),
        output::truncate(&entry.subject, 40),
        output::truncate(&entry.recipients, 40),
    );
    if let Some(reason) = &entry.reason {
        println!("       {reason}");
    }
}

/// Run `countersign agents`.
pub async fn agents(store: &Store, json: bool) -> Result<()> {
    let figures = store.agent_figures().await?;
    if !json && !figures.is_empty() {
        println!(
            "{:<28} {:<28} {:>8} {:>6} {:>8} {:>7} {:>6}  median time to decision",
            "account", "agent", "approved", "edited", "rejected", "by rule", "failed"
        );
    }
    output::list(&figures, json, "Nothing decided yet.", figures_line)
}

fn figures_line(f: &AgentFigures) {
    println!(
        "{:<28} {:<28} {:>8} {:>6} {:>8} {:>7} {:>6}  {}",
        output::truncate(&f.account, 28),
        output::truncate(&f.agent, 28),
        f.approved,
        f.edited,
        f.rejected,
        f.by_rule,
        f.failed,
        f.median_seconds_to_decision
            .map(duration)
            .unwrap_or_else(|| "-".into())
    );
}

/// A duration in seconds as a person reads it: "45 s", "3 min 20 s", "2 h 5 min".
fn duration(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    match whole {
        0..=59 => format!("{whole} s"),
        60..=3599 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_seconds_minutes_or_hours() {
        assert_eq!(duration(30.0), "30 s");
        assert_eq!(duration(200.4), "3 min 20 s");
        assert_eq!(duration(7500.0), "2 h 5 min");
    }
}
