//! `countersign dispatch [--wait]`: become the dispatcher of the data directory and carry out
//! the decisions that are due.
//!
//! Only one process dispatches a data directory at a time (core's lock): when the desktop app
//! or another `countersign dispatch` already does, this one says so and leaves the work to it —
//! that is success, not an error, because the decisions will still be carried out.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use countersign_core::outbox::{DispatchConfig, DispatchReport, Dispatcher};
use countersign_core::store::DecisionFilter;
use countersign_core::{DecisionKind, OutcomeKind, Store};
use serde::Serialize;

/// How often `--wait` looks at the outbox again.
const TICK: Duration = Duration::from_millis(200);

/// The exit code when `--wait` gives up (paused, or the time limit passed) with decisions left.
const GAVE_UP: u8 = 2;

const BUSY: &str = "another Countersign process is dispatching these decisions";

/// How one decision ended (or why it is still waiting), as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Outcome {
    decision: i64,
    item: i64,
    outcome: OutcomeKind,
    /// What happened, in words.
    detail: Option<String>,
}

/// Everything `dispatch --json` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    /// `finished` (nothing left, or one pass done), `paused`, `busy` or `timed_out`.
    status: &'static str,
    message: String,
    outcomes: Vec<Outcome>,
    /// Decisions still queued, dispatching or uncertain.
    live: usize,
}

/// Dispatch once, or with `wait_limit` until the outbox has no live decision left.
pub async fn run(
    store: &Store,
    data_dir: &Path,
    wait_limit: Option<Duration>,
    json: bool,
) -> Result<ExitCode> {
    let services = crate::services(data_dir);
    let Some(dispatcher) =
        Dispatcher::acquire(store.clone(), services, data_dir, DispatchConfig::default()).await?
    else {
        finish(
            Summary {
                status: "busy",
                message: format!("{BUSY}."),
                outcomes: vec![],
                live: live_count(store).await?,
            },
            json,
        )?;
        return Ok(ExitCode::SUCCESS);
    };

    let start = Instant::now();
    let mut outcomes = Vec::new();
    // The last thing printed per decision, so a decision that keeps waiting is told once.
    let mut told: HashMap<i64, Outcome> = HashMap::new();
    loop {
        let report = dispatcher.run_once().await?;
        for outcome in outcomes_of(&report) {
            if told.get(&outcome.decision) == Some(&outcome) {
                continue;
            }
            if !json {
                println!("{}", describe(&outcome));
            }
            told.insert(outcome.decision, outcome.clone());
            outcomes.push(outcome);
        }
        let live = live_count(store).await?;
        if report.paused {
            let message = format!(
                "Sending is paused: nothing was sent ({live} decision(s) wait). Resume with \
                 `countersign resume`."
            );
            finish(
                Summary {
                    status: "paused",
                    message,
                    outcomes,
                    live,
                },
                json,
            )?;
            return Ok(if wait_limit.is_some() {
                ExitCode::from(GAVE_UP)
            } else {
                ExitCode::SUCCESS
            });
        }
        let Some(limit) = wait_limit else {
            let message = if live == 0 {
                "The outbox is empty.".to_string()
            } else {
                format!("{live} decision(s) still wait in the outbox (undo windows, retries).")
            };
            finish(
                Summary {
                    status: "finished",
                    message,
                    outcomes,
                    live,
                },
                json,
            )?;
            return Ok(ExitCode::SUCCESS);
        };
        if live == 0 {
            finish(
                Summary {
                    status: "finished",
                    message: "The outbox is empty.".into(),
                    outcomes,
                    live,
                },
                json,
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        if start.elapsed() >= limit {
            let message = format!(
                "Gave up waiting after {} s: {live} decision(s) still wait in the outbox \
                 (see `countersign outbox`).",
                limit.as_secs()
            );
            finish(
                Summary {
                    status: "timed_out",
                    message,
                    outcomes,
                    live,
                },
                json,
            )?;
            return Ok(ExitCode::from(GAVE_UP));
        }
        tokio::time::sleep(TICK).await;
    }
}

async fn live_count(store: &Store) -> Result<usize> {
    Ok(store.list_decisions(DecisionFilter::Live).await?.len())
}

fn outcomes_of(report: &DispatchReport) -> Vec<Outcome> {
    let mut outcomes: Vec<Outcome> = report
        .attempts
        .iter()
        .map(|attempt| {
            let decision = &attempt.decision;
            Outcome {
                decision: decision.id,
                item: decision.item_id,
                outcome: attempt.outcome,
                detail: match attempt.outcome {
                    OutcomeKind::Done => Some(
                        match decision.kind {
                            DecisionKind::Approve => "sent",
                            DecisionKind::Reject => "rejected",
                        }
                        .to_string(),
                    ),
                    _ => decision.outcome_detail.clone(),
                },
            }
        })
        .collect();
    outcomes.sort_by_key(|o| o.decision);
    outcomes
}

fn describe(outcome: &Outcome) -> String {
    let detail = outcome.detail.as_deref().unwrap_or("");
    let what = match outcome.outcome {
        OutcomeKind::Done => format!("done: {detail}"),
        OutcomeKind::Conflict => format!("conflict: {detail}"),
        OutcomeKind::Failed => format!("failed: {detail}"),
        OutcomeKind::Uncertain => {
            format!("outcome unknown, looking it up (never resent blindly): {detail}")
        }
        OutcomeKind::Retrying => format!("waiting: {detail}"),
    };
    format!(
        "item {} (decision {}): {what}",
        outcome.item, outcome.decision
    )
}

fn finish(summary: Summary, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!("{}", summary.message);
    }
    Ok(())
}
