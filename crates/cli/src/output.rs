//! How the CLI prints things: JSON with `--json` (stable, for scripts), plain text otherwise.

use anyhow::Result;
use chrono::Utc;
use countersign_core::store::{AuditEntry, Decision, Item, Refusal};
use countersign_core::{ItemSummary, Store};
use serde::Serialize;

use crate::review::Review;

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
    /// The rendered current version and the item's story.
    #[serde(flatten)]
    review: Review,
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
        let review = Review::load(store, &item).await?;
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
            review,
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
    let view = &detail.review.view;
    println!(
        "Subject: {}",
        view.subject.as_deref().unwrap_or(&summary.subject)
    );
    if view.from.is_empty() {
        println!("From:    {}", summary.from);
    } else {
        println!("From:    {}", addresses(&view.from));
    }
    if view.to.is_empty() {
        println!("To:      {}", summary.recipients);
    } else {
        println!("To:      {}", addresses(&view.to));
    }
    if !view.cc.is_empty() {
        println!("Cc:      {}", addresses(&view.cc));
    }
    if !view.bcc.is_empty() {
        println!("Bcc:     {}", addresses(&view.bcc));
    }
    if let Some(answers) = &view.answers {
        let from = addresses(&answers.from);
        let subject = answers.subject.as_deref().unwrap_or("");
        println!("Answers: {from} {subject}");
    }
    if let Some(reason) = &summary.state_reason {
        println!("Reason:  {reason}");
    }
    if let Some(reason) = &detail.review.refusal_reason {
        if Some(reason) != summary.state_reason.as_ref() {
            println!("Refused: {reason}");
        }
    }
    if let Some(refusal) = &detail.review.send_refusal {
        println!("Cannot send: {refusal}");
    }
    println!("\n{}\n", view.text_body.trim_end());
    if !view.attachments.is_empty() {
        println!("Attachments:");
        for a in &view.attachments {
            println!(
                "  [{}] {}  {}  {} bytes{}",
                a.index,
                a.file_name.as_deref().unwrap_or("(no name)"),
                a.sniffed_type
                    .as_deref()
                    .or(a.declared_type.as_deref())
                    .unwrap_or("unknown type"),
                a.size,
                if a.inline { "  inline" } else { "" }
            );
        }
    }
    if view.remote_content.blocked_count > 0 {
        println!(
            "Remote content: {} reference(s) blocked",
            view.remote_content.blocked_count
        );
    }
    for flag in &view.flags {
        println!("Flag:    {}", flag.explanation);
    }
    for warning in &view.warnings {
        println!("Warning: {}", warning.message);
    }
    if !detail.review.routes.is_empty() {
        println!("Routes:");
        for route in &detail.review.routes {
            println!(
                "  {}  {:<12} session {}{}",
                route.route_id,
                route.state.as_str(),
                route.session,
                route
                    .reason
                    .as_deref()
                    .map(|r| format!(" — {r}"))
                    .unwrap_or_default()
            );
        }
    }
    if let Some(bound) = &detail.review.redraft_bound {
        println!("Redraft: {bound}");
    }
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

fn addresses(list: &[countersign_core::render::Address]) -> String {
    list.iter()
        .map(|a| match &a.name {
            Some(name) => format!("{name} <{}>", a.email),
            None => a.email.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
