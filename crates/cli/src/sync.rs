//! `countersign sync`: bring the mirror up to date with every account, one after the other.
//!
//! One account that cannot be reached must not keep the others from syncing: its failure is
//! reported and recorded on its cursor, and the command fails only when every account failed.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use countersign_core::reachability::{Failure, Reach};
use countersign_core::store::Account;
use countersign_core::sync::{sync_gmail_with, sync_muster, Listing};
use countersign_core::{Source, Store};
use serde::Serialize;

/// What the sync of one account did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AccountSync {
    account: String,
    kind: Source,
    address: String,
    ok: bool,
    /// Items seen for the first time.
    new_items: usize,
    /// New versions of known items.
    new_versions: usize,
    /// Items that disappeared from the service (Gmail).
    gone: usize,
    /// New refusals reported by muster plugins.
    new_refusals: usize,
    /// Whether the service answered.
    online: bool,
    /// Why it failed.
    error: Option<String>,
}

/// Sync every account and print one line (or JSON object) per account.
pub async fn run(store: &Store, data_dir: &Path, json: bool) -> Result<ExitCode> {
    let services = crate::services(data_dir);
    let accounts = store.list_accounts().await?;
    let mut results = Vec::new();
    for account in &accounts {
        let mut line = AccountSync {
            account: account.id.clone(),
            kind: account.profile.kind,
            address: account.profile.address.clone(),
            ok: true,
            new_items: 0,
            new_versions: 0,
            gone: 0,
            new_refusals: 0,
            online: true,
            error: None,
        };
        if let Err(e) = sync_one(store, &services, account, &mut line).await {
            let message = e.to_string();
            let failure = countersign_core::reachability::classify(&e);
            store
                .record_reachability(&account.id, Reach::Failed(failure, &message))
                .await?;
            let online = failure != Failure::Unreachable;
            line.ok = false;
            line.online = online;
            line.error = Some(message);
        }
        results.push(line);
    }
    print(&results, json)?;
    let all_failed = !results.is_empty() && results.iter().all(|r| !r.ok);
    Ok(if all_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn sync_one(
    store: &Store,
    services: &countersign_core::services::Services,
    account: &Account,
    line: &mut AccountSync,
) -> countersign_core::Result<()> {
    match account.profile.kind {
        Source::Gmail => {
            let client = services.gmail(account).await?;
            // The owner asked: list every draft, so one deleted or sent in Gmail is seen even
            // where history does not report it.
            let report = sync_gmail_with(store, account, &client, Listing::Always).await?;
            line.new_items = report.new_items;
            line.new_versions = report.new_versions;
            line.gone = report.gone;
        }
        Source::Muster => {
            let client = services.muster(account).await?;
            let report = sync_muster(store, account, &client).await?;
            line.new_items = report.new_items;
            line.new_versions = report.new_versions;
            line.new_refusals = report.new_refusals.len();
        }
    }
    Ok(())
}

fn print(results: &[AccountSync], json: bool) -> Result<()> {
    let empty =
        "No accounts to sync: connect one with `countersign account add-gmail` or `add-muster`.";
    crate::output::list(results, json, empty, |r| match &r.error {
        None => println!(
            "{} ({}): {} new, {} changed, {} gone, {} new refusals",
            r.account, r.address, r.new_items, r.new_versions, r.gone, r.new_refusals
        ),
        Some(error) if !r.online => {
            println!("{} ({}): offline — {error}", r.account, r.address)
        }
        Some(error) => println!("{} ({}): failed — {error}", r.account, r.address),
    })
}
