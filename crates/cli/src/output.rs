//! How the CLI prints things: JSON with `--json` (stable, for scripts), plain text otherwise.

use anyhow::Result;
use chrono::Utc;
use countersign_core::store::{AuditEntry, Decision, Item, Refusal};
use countersign_core::{ItemSummary, Store};
use serde::Serialize;

/// Everything `show` prints about one item.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemDetail {
    #[serde(flatten)]
    item: Item,
    versions: Vec<VersionLine>,
    decisions: Vec<Decision>,
    audit: Vec<AuditEntry>,
    refusals: Vec<Refusal>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionLine {
    version: String,
    sha256: String,
    first_seen_at: chrono::DateTime<Utc>,
    size: usize,
}

impl ItemDetail {
    /// Read it all from the mirror.
    pub async fn load(store: &Store, id: i64) -> Result<ItemDetail> {
        let item = store.get_item(id).await?;
        let versions = store
            .versions(id)
            .await?
            .into_iter()
            .map(|v| VersionLine {
                size: v.content.bytes().len(),
                version: v.version,
                sha256: v.sha256,
                first_seen_at: v.first_seen_at,
            })
            .collect();
        Ok(ItemDetail {
            item,
            versions,
            decisions: store.decisions_for_item(id).await?,
            audit: store.audit_for_item(id).await?,
            refusals: store.refusals_for_item(id).await?,
        })
    }
}

fn print_json(value: &impl Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The queue.
pub fn items(items: &[ItemSummary], json: bool) -> Result<()> {
    if json {
        return print_json(&items);
    }
    if items.is_empty() {
        println!("Nothing to review.");
        return Ok(());
    }
    for item in items {
        let queued = item
            .decision
            .as_ref()
            .map(|d| format!("  [{} {}]", d.kind.as_str(), d.state))
            .unwrap_or_default();
        println!(
            "{:>5}  {:<14} {:<7} {:<40} {}{}",
            item.id,
            item.state.as_str(),
            item.source.as_str(),
            truncate(&item.subject, 40),
            truncate(&item.recipients, 40),
            queued
        );
    }
    Ok(())
}

/// One item in full.
pub fn item_detail(detail: &ItemDetail, json: bool) -> Result<()> {
    if json {
        return print_json(detail);
    }
    let summary = &detail.item.summary;
    println!(
        "Item {} ({}, {})",
        summary.id,
        summary.source.as_str(),
        summary.state
    );
    println!("Subject: {}", summary.subject);
    println!("From:    {}", summary.from);
    println!("To:      {}", summary.recipients);
    if let Some(reason) = &summary.state_reason {
        println!("Reason:  {reason}");
    }
    println!("\n{}\n", summary.snippet);
    println!("Versions:");
    for version in &detail.versions {
        println!(
            "  {}  {}  {} bytes  first seen {}",
            version.version,
            &version.sha256[..12],
            version.size,
            version.first_seen_at
        );
    }
    if !detail.audit.is_empty() {
        println!("Audit:");
        for entry in &detail.audit {
            println!(
                "  {}  {:<12} {:<20} {}",
                entry.at,
                entry.actor,
                entry.action,
                entry.outcome.as_deref().unwrap_or("")
            );
        }
    }
    Ok(())
}

/// What a decision command did.
pub fn decision_made(decision: &Decision, json: bool) -> Result<()> {
    if json {
        return print_json(decision);
    }
    let wait = (decision.due_at - Utc::now()).num_seconds().max(0);
    match decision.state {
        countersign_core::DecisionState::Cancelled => {
            println!("Undone: item {} is back in the queue.", decision.item_id)
        }
        _ if wait > 0 => println!(
            "Queued: item {} will be {} in {wait} s (undo with `countersign undo {}`).",
            decision.item_id,
            past(decision.kind),
            decision.item_id
        ),
        _ => println!(
            "Queued: item {} will be {} when the dispatcher runs.",
            decision.item_id,
            past(decision.kind)
        ),
    }
    Ok(())
}

/// The outbox.
pub fn decisions(decisions: &[Decision], json: bool) -> Result<()> {
    if json {
        return print_json(&decisions);
    }
    if decisions.is_empty() {
        println!("The outbox is empty.");
    }
    for d in decisions {
        println!(
            "{:>5}  item {:<5} {:<8} {:<12} due {}  {}",
            d.id,
            d.item_id,
            d.kind.as_str(),
            d.state,
            d.due_at,
            d.outcome_detail.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

/// A one-line message.
pub fn message(text: &str, json: bool) -> Result<()> {
    if json {
        return print_json(&serde_json::json!({ "message": text }));
    }
    println!("{text}");
    Ok(())
}

fn past(kind: countersign_core::DecisionKind) -> &'static str {
    match kind {
        countersign_core::DecisionKind::Approve => "sent",
        countersign_core::DecisionKind::Reject => "rejected",
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}
