//! How the CLI prints things: JSON with `--json` (stable, for scripts), plain text otherwise.

use anyhow::Result;
use chrono::Utc;
use countersign_core::store::Decision;
use countersign_core::ItemSummary;
use serde::Serialize;

pub use crate::review::ItemDetail;
use countersign_core::render::{FlagKind, ReviewView};
use countersign_core::review;
use countersign_core::store::ShownPart;

mod diff;

use diff::version_diff;

fn print_json(value: &impl Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A list: JSON with `--json`; otherwise `empty` when there is nothing, else `line` for each.
pub fn list<T: Serialize>(rows: &[T], json: bool, empty: &str, line: impl FnMut(&T)) -> Result<()> {
    if json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        println!("{empty}");
    }
    rows.iter().for_each(line);
    Ok(())
}

/// The queue.
pub fn items(items: &[ItemSummary], json: bool) -> Result<()> {
    list(items, json, "Nothing to review.", |item| {
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
    })
}

/// What core allows on the item now, and why not the rest: the CLI decides nothing itself.
fn actions(actions: &[countersign_core::actions::ActionState]) {
    let allowed: Vec<&str> = actions
        .iter()
        .filter(|a| a.allowed)
        .map(|a| a.action.as_str())
        .collect();
    println!(
        "Actions: {}",
        if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(", ")
        }
    );
    for refused in actions.iter().filter(|a| !a.allowed) {
        if let Some(why) = &refused.why_not {
            println!("  cannot {}: {why}", refused.action.as_str());
        }
    }
}

/// One item in full, with the words of `part` (or the text part, and the HTML's too when the
/// two alternatives say different things). Returns the renderings printed: what was shown.
pub fn item_detail(
    detail: &ItemDetail,
    part: Option<ShownPart>,
    json: bool,
) -> Result<Vec<ShownPart>> {
    if json {
        // A script that reads the JSON gets both alternatives.
        print_json(detail)?;
        return Ok(vec![ShownPart::Html, ShownPart::Text]);
    }
    let summary = &detail.item.summary;
    println!(
        "Item {} ({}, {})",
        summary.id,
        summary.source.as_str(),
        summary.state
    );
    println!(
        "Version: {} (sha256 {})",
        detail.shown_version, detail.shown_digest
    );
    let view = &detail.content.view;
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
    if let Some(reason) = &detail.refusal_reason {
        if Some(reason) != summary.state_reason.as_ref() {
            println!("Refused: {reason}");
        }
    }
    if let Some(refusal) = &detail.send_refusal {
        println!("Cannot send: {refusal}");
    }
    actions(&summary.actions);
    if let Some(link) = &detail.content.gmail_link {
        println!("In Gmail: {link}");
    }
    // Above the mail, as in the app: what is shown may not be what the recipient reads.
    for warning in &view.warnings {
        println!("Warning: {}", warning.message);
    }
    let parts = match part {
        Some(part) => vec![part],
        None if alternatives_differ(view) => vec![ShownPart::Text, ShownPart::Html],
        None => vec![ShownPart::Text],
    };
    for &part in &parts {
        if parts.len() > 1 || part == ShownPart::Html {
            println!("\n--- {} ---", part_heading(view, part));
        }
        println!("\n{}\n", review::part_text(view, part).trim_end());
    }
    if let Some(answered) = &detail.content.answered {
        answered_message(answered);
    }
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
    section("Routes", &detail.content.routes, |route| {
        format!(
            "{}  {:<12} session {}{}",
            route.route_id,
            route.state.as_str(),
            route.session,
            route
                .reason
                .as_deref()
                .map(|r| format!(" — {r}"))
                .unwrap_or_default()
        )
    });
    if let Some(bound) = &detail.content.redraft_bound {
        println!("Redraft: {bound}");
    }
    if let Some(diff) = &detail.content.diff {
        let base = match diff.base {
            countersign_core::review::DiffBase::PreviousVersion => "the previous version",
            countersign_core::review::DiffBase::RefusedDraft => "the refused draft",
            countersign_core::review::DiffBase::ShownVersion => "the version you were reading",
            countersign_core::review::DiffBase::BeforeOwnerEdit => "the version before your edit",
        };
        println!("Changed against {base} ({}):", diff.base_version);
        version_diff(&diff.diff);
    }
    section("Versions", &detail.content.versions, |version| {
        format!(
            "{}  {}  {} bytes  first seen {}",
            version.version,
            &version.sha256[..12],
            version.size,
            version.first_seen_at
        )
    });
    section("Audit", &detail.content.audit, |entry| {
        format!(
            "{}  {:<12} {:<20} {}",
            entry.at,
            entry.line.actor,
            entry.line.action,
            entry.line.outcome.as_deref().unwrap_or("")
        )
    });
    Ok(parts)
}

/// The draft carries both alternatives and they say different things (core's flag).
fn alternatives_differ(view: &ReviewView) -> bool {
    review::has_both_alternatives(view)
        && view
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::AlternativesDiffer)
}

fn part_heading(view: &ReviewView, part: ShownPart) -> &'static str {
    match (part, review::has_both_alternatives(view)) {
        (ShownPart::Text, _) => "plain-text part",
        (ShownPart::Html, true) => "HTML part (its visible text)",
        (ShownPart::Html, false) => {
            "the body as HTML (its visible text; the draft has no HTML part of its own)"
        }
    }
}

/// `title` and one indented line per item; nothing when there are none.
fn section<T>(title: &str, items: &[T], line: impl Fn(&T) -> String) {
    if items.is_empty() {
        return;
    }
    println!("{title}:");
    for item in items {
        println!("  {}", line(item));
    }
}

/// What a decision command did.
pub fn decision_made(decision: &Decision, json: bool) -> Result<()> {
    if json {
        return print_json(decision);
    }
    // Rounded up: a 1 s window that has 0.9 s left still offers the undo.
    let wait_ms = (decision.due_at - Utc::now()).num_milliseconds().max(0);
    let wait = (wait_ms + 999) / 1000;
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
    if decision.state != countersign_core::DecisionState::Cancelled {
        println!(
            "Bound to version {} (sha256 {}).",
            decision.version, decision.digest
        );
    }
    Ok(())
}

/// The outbox.
pub fn decisions(decisions: &[Decision], json: bool) -> Result<()> {
    list(decisions, json, "The outbox is empty.", |d| {
        println!(
            "{:>5}  item {:<5} {:<8} {:<12} due {}  {}",
            d.id,
            d.item_id,
            d.kind.as_str(),
            d.state,
            d.due_at,
            d.outcome_detail.as_deref().unwrap_or("")
        );
    })
}

/// The version an edit made, and what to do with it.
pub fn edited(shown: &countersign_core::decide::Shown, json: bool) -> Result<()> {
    if json {
        return print_json(&serde_json::json!({
            "id": shown.id,
            "shownVersion": shown.version,
            "shownDigest": shown.digest,
        }));
    }
    println!(
        "Item {} edited: it is now version {} (sha256 {}). Nothing is sent until you approve it: \
         `countersign show {}`, then `countersign approve {} --version {}`.",
        shown.id, shown.version, shown.digest, shown.id, shown.id, shown.version
    );
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

/// `text` cut to `width` characters, the last one an ellipsis when cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// The message a draft answers, quoted under it.
fn answered_message(answered: &countersign_core::answered::AnsweredMessage) {
    let from = addresses(&answered.from);
    let date = answered.date.as_deref().unwrap_or("date unknown");
    println!("In reply to {from} ({date}):");
    match &answered.view {
        Some(view) => {
            for line in view.text_body.trim_end().lines() {
                println!("> {line}");
            }
            for a in &view.attachments {
                println!(
                    ">  [attachment] {}  {} bytes",
                    a.file_name.as_deref().unwrap_or("(no name)"),
                    a.size
                );
            }
        }
        None => println!(
            "> {} [snippet only: the full message is not known]",
            answered.snippet
        ),
    }
    if !answered.thread.is_empty() {
        println!("Earlier in the thread:");
        for m in &answered.thread {
            println!(
                "  {}  {}  {}",
                m.date.as_deref().unwrap_or(""),
                m.from,
                m.snippet
            );
        }
    }
    println!();
}
