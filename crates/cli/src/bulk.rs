//! `countersign bulk reject|approve`: one decision for several items. Each binds to its own
//! version; an approval only to a version this owner displayed with `show`.

use anyhow::Result;
use clap::Subcommand;
use countersign_core::decide::{self, BulkOutcome, UndoWindow};
use countersign_core::Store;

/// The `bulk` subcommands.
#[derive(Debug, Subcommand)]
pub enum BulkCommand {
    /// Reject every item named with one reason (each at its current version).
    Reject {
        /// Why (goes back to each agent and into the audit log).
        #[arg(long)]
        reason: String,
        /// The item ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Approve the items named whose current version you displayed with `show`; the others
    /// are named and left alone.
    Approve {
        /// Send without the undo window.
        #[arg(long)]
        no_undo: bool,
        /// The item ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
}

/// Run one `bulk` subcommand as `actor`.
pub async fn run(store: &Store, command: &BulkCommand, actor: &str, json: bool) -> Result<()> {
    let outcome = match command {
        BulkCommand::Reject { reason, ids } => {
            let mut shown = Vec::with_capacity(ids.len());
            for &id in ids {
                shown.push(decide::current(store, id).await?);
            }
            decide::reject_all(store, &shown, reason, actor).await?
        }
        BulkCommand::Approve { no_undo, ids } => {
            let window = if *no_undo {
                UndoWindow::None
            } else {
                UndoWindow::FromSettings
            };
            decide::approve_all_displayed(store, ids, window, actor).await?
        }
    };
    print(&outcome, json)
}

fn print(outcome: &BulkOutcome, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(outcome)?);
        return Ok(());
    }
    let ids: Vec<String> = outcome
        .decided
        .iter()
        .map(|d| d.item_id.to_string())
        .collect();
    println!(
        "{} decided{}{}",
        outcome.decided.len(),
        if ids.is_empty() { "" } else { ": " },
        ids.join(", ")
    );
    for skipped in &outcome.skipped {
        println!("skipped {}: {}", skipped.id, skipped.why);
    }
    Ok(())
}
