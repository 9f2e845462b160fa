//! `countersign status`: whether sending is on, what waits in the outbox, each account's
//! status and last sync, whether the record holds, and the decisions it did not vouch for (set
//! aside, never sent).

use anyhow::Result;
use countersign_core::store::{Decision, DecisionFilter, SecretStorage, VerdictStatus};
use countersign_core::Store;

/// What `status --json` prints.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    paused: bool,
    waiting: usize,
    accounts: Vec<crate::account::AccountLine>,
    record: countersign_core::store::AuditVerdict,
    not_vouched_for: Vec<Decision>,
}

/// Print the status.
pub async fn run(store: &Store, data_dir: &std::path::Path, json: bool) -> Result<()> {
    let status = Status {
        paused: store.settings().await?.paused,
        waiting: store.list_decisions(DecisionFilter::Live).await?.len(),
        accounts: crate::account::lines(store, data_dir).await?,
        record: store.verify_audit().await?,
        not_vouched_for: store.unvouched_decisions().await?,
    };
    if json {
        println!("{}", serde_json::to_string(&status)?);
        return Ok(());
    }
    println!("Sending: {}", if status.paused { "paused" } else { "on" });
    println!("Outbox: {} waiting", status.waiting);
    crate::account::print_list(&status.accounts, false)?;
    let record = &status.record;
    match (record.status, &record.broken, &record.cannot_check) {
        (VerdictStatus::Intact, _, _) => println!("Record: intact ({} rows)", record.rows),
        (VerdictStatus::Tampered, Some(first), _) => println!(
            "Record: TAMPERED — {} finding(s), first: row {}: {} (`countersign audit verify`)",
            record.findings.len(),
            first.row_id,
            first.problem
        ),
        (_, _, why) => println!("Record: {}", why.as_deref().unwrap_or("cannot be checked")),
    }
    if record.key_storage == Some(SecretStorage::File) {
        println!(
            "Record key: in a file in the data directory — the record is only as safe as that file"
        );
    }
    if !status.not_vouched_for.is_empty() {
        println!("Not sent, set aside:");
        for d in &status.not_vouched_for {
            println!(
                "  decision {} ({} item {}): {}",
                d.id,
                d.kind.as_str(),
                d.item_id,
                d.outcome_detail.as_deref().unwrap_or_default()
            );
        }
    }
    Ok(())
}
