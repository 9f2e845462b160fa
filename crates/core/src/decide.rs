//! The owner's decisions: approve, reject, undo. Each is written to the outbox with the audit
//! row in one transaction before anything goes on the wire (the dispatcher sends it later).

use chrono::{Duration, Utc};

use crate::domain::{DecisionKind, ItemEvent, ItemState};
use crate::error::{Error, Result};
use crate::store::{Decision, DraftVersion, NewAuditEntry, NewDecision, ShownPart, Store};

/// Reasons offered when rejecting; free text is always allowed too.
pub const PRESET_REJECT_REASONS: [&str; 5] = [
    "Wrong recipient",
    "Wrong facts or figures",
    "Tone is off",
    "Should not be answered",
    "Attachment is wrong",
];

/// How long an approval waits before it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoWindow {
    /// The owner's setting (default 10 s).
    FromSettings,
    /// Send as soon as the dispatcher runs (`--no-undo`).
    None,
}

/// What the owner had on screen when deciding: the item, the version shown and the sha256 of
/// the bytes rendered. Every decision carries it, and core refuses it when the item's current
/// version is another one ([`Error::ChangedSinceShown`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    /// The item.
    pub id: i64,
    /// Gmail message id / muster updatedAt of the version shown.
    pub version: String,
    /// sha256 (hex) of that version's bytes.
    pub digest: String,
}

/// The item's current version as [`Shown`]: for a caller that shows it right now (the CLI
/// without `--version` prints the digest it approves).
pub async fn current(store: &Store, item_id: i64) -> Result<Shown> {
    let item = store.get_item(item_id).await?;
    let version = store.version(item_id, &item.summary.version).await?;
    Ok(Shown {
        id: item_id,
        version: version.version,
        digest: version.sha256,
    })
}

/// Whether the owner confirmed approving a version despite its cautions (see [`cautions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmation {
    /// No: a version with cautions is refused with [`Error::NeedsConfirmation`].
    None,
    /// "Approve anyway": the cautions are accepted and the audit names them.
    DespiteCautions,
}

/// What approving `shown` would ask `actor` to confirm, one sentence each (empty: nothing):
/// for the "Approve anyway?" question to list without the error sentence around them.
pub async fn approval_cautions(store: &Store, shown: &Shown, actor: &str) -> Result<Vec<String>> {
    let parts = store.parts_shown(shown, actor).await?;
    let version = store.version(shown.id, &shown.version).await?;
    if version.sha256 != shown.digest || parts.is_empty() {
        return Ok(Vec::new());
    }
    Ok(cautions(&version, &parts))
}

/// Approve the version the owner was shown, so that exactly those bytes are what is sent.
///
/// Refused when `actor` was never shown that version ([`Error::NotShown`], audited), and, unless
/// `confirmation` says "anyway", when the version has cautions ([`Error::NeedsConfirmation`]).
pub async fn approve(
    store: &Store,
    shown: &Shown,
    window: UndoWindow,
    actor: &str,
    confirmation: Confirmation,
) -> Result<Decision> {
    let action = format!("approve {}", store.draft_words(shown.id).await?);
    let parts = store.parts_shown(shown, actor).await?;
    let despite = match store.version(shown.id, &shown.version).await {
        // Another version or digest than the current one is refused as not current when it is
        // queued, and a version never shown as not shown: nobody is asked to confirm either.
        Ok(version) if version.sha256 == shown.digest && !parts.is_empty() => {
            let found = cautions(&version, &parts);
            if confirmation == Confirmation::None && !found.is_empty() {
                return Err(Error::NeedsConfirmation {
                    action,
                    cautions: found,
                });
            }
            found
        }
        Ok(_) | Err(Error::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    decide(
        store,
        shown,
        DecisionKind::Approve,
        None,
        window,
        actor,
        despite,
    )
    .await
}

/// What the owner must confirm before `version` is approved, one sentence each, given the
/// renderings of it they were shown: every structural parse warning (mail programs may read
/// the message otherwise than the review showed it), and alternatives that say different
/// things unless both were displayed, and styling Countersign cannot evaluate (recipients may
/// see other words than the review shows, whatever the owner displayed).
pub fn cautions(version: &DraftVersion, parts: &[ShownPart]) -> Vec<String> {
    let view = crate::review::render_bytes(&version.content);
    let mut found: Vec<String> = view
        .warnings
        .iter()
        .filter(|w| w.kind.is_structural())
        .map(|w| w.message.clone())
        .collect();
    found.extend(
        view.flags
            .iter()
            .filter(|f| f.kind == crate::render::FlagKind::UnverifiableStyling)
            .map(|f| f.explanation.clone()),
    );
    let both_shown = parts.contains(&ShownPart::Text) && parts.contains(&ShownPart::Html);
    if !both_shown && crate::review::has_both_alternatives(&view) {
        found.extend(
            view.flags
                .iter()
                .filter(|f| f.kind == crate::render::FlagKind::AlternativesDiffer)
                .map(|f| {
                    format!(
                        "{} Recipients whose mail program shows the other one read words you \
                         have not seen: display the plain text (and the HTML) first.",
                        f.explanation
                    )
                }),
        );
    }
    found
}

/// Reject the version the owner was shown, with a reason (required). A rejected Gmail draft is
/// deleted, so this binds just as an approval does.
pub async fn reject(store: &Store, shown: &Shown, reason: &str, actor: &str) -> Result<Decision> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Error::refused(
            format!("reject {}", store.draft_words(shown.id).await?),
            "say why: the reason goes back to the agent and into the audit log",
        ));
    }
    decide(
        store,
        shown,
        DecisionKind::Reject,
        Some(reason.to_string()),
        UndoWindow::FromSettings,
        actor,
        Vec::new(),
    )
    .await
}

/// Take back the decision on `item_id` while nothing of it has left (it is still queued: in
/// its undo window, or past it while sending is paused or the service does not answer).
pub async fn undo(store: &Store, item_id: i64, actor: &str) -> Result<Decision> {
    store.cancel_decision(item_id, Utc::now(), actor).await
}

/// Take back the live decision on `item_id` without it being the owner's verdict on the
/// version (Hold everything): the rules may judge the version again later.
pub async fn take_back(store: &Store, item_id: i64, actor: &str) -> Result<Decision> {
    store.take_back_decision(item_id, Utc::now(), actor).await
}

async fn decide(
    store: &Store,
    shown: &Shown,
    kind: DecisionKind,
    reason: Option<String>,
    window: UndoWindow,
    actor: &str,
    despite: Vec<String>,
) -> Result<Decision> {
    let undo_window = match window {
        UndoWindow::FromSettings => {
            Duration::seconds(i64::from(store.settings().await?.undo_window_secs))
        }
        UndoWindow::None => Duration::zero(),
    };
    let new = NewDecision {
        item_id: shown.id,
        kind,
        reason,
        version: shown.version.clone(),
        digest: shown.digest.clone(),
        undo_window,
        actor: actor.to_string(),
        despite,
    };
    let outcome = enqueue(store, new.clone()).await;
    if let Err(refusal @ (Error::ChangedSinceShown { .. } | Error::NotShown { .. })) = &outcome {
        // The audit says why nothing was queued, with what the owner had on screen or named (a
        // refusal by the state rules writes nothing: nothing about the draft was misjudged).
        store
            .append_audit(&NewAuditEntry {
                actor: new.actor,
                item_id: Some(new.item_id),
                decision_id: None,
                action: kind.as_str().to_string(),
                version: Some(new.version),
                digest: Some(new.digest),
                outcome: Some("refused".into()),
                detail: Some(refusal.to_string()),
                view_id: None,
            })
            .await?;
    }
    outcome
}

/// Queue `new` when the version shown is still the current one and the rules allow it.
async fn enqueue(store: &Store, new: NewDecision) -> Result<Decision> {
    let (item_id, kind) = (new.item_id, new.kind);
    let action = format!("{} {}", kind.as_str(), store.draft_words(item_id).await?);
    let item = store.get_item(item_id).await?;
    // Refuse before anything moves; the store checks again in its transaction.
    let current = store.version(item_id, &item.summary.version).await?;
    if current.version != new.version || current.sha256 != new.digest {
        return Err(Error::ChangedSinceShown {
            action,
            shown: new.version,
            current: current.version,
        });
    }
    // Refuse early with the rule's own sentence (the store checks the state again in its
    // transaction); the same rules give the actions the screens offer (crate::actions).
    let source = item.summary.source;
    crate::actions::decidable(source, item.summary.state, kind)
        .map_err(|why| Error::refused(&action, why))?;
    if kind == DecisionKind::Approve {
        crate::actions::sendable_size(source, current.content.bytes().len())
            .map_err(|why| Error::refused(&action, why))?;
    }
    // A Gmail draft whose send Google refused is decided again from pending (see
    // crate::actions::decidable).
    if item.summary.state == ItemState::SendFailed {
        store
            .apply_item_event(item_id, ItemEvent::ReviewAgain, None)
            .await?;
    }
    store.enqueue_decision(new).await
}

/// A queue row as the owner saw it listed: the item and the version the row showed. A row
/// carries no digest, so core looks up the digest of *that* version ([`shown_as_listed`]) —
/// never the current one's: a draft that changed since the row was read is refused as
/// changed, not decided at its new version.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The item.
    pub id: i64,
    /// Gmail message id / muster updatedAt of the version the row showed.
    pub version: String,
}

/// The version a queue row showed as [`Shown`]: its digest is that version's, read from the
/// mirror (which keeps every version), so a decision on it binds to what the row showed.
pub async fn shown_as_listed(store: &Store, listed: &Listed) -> Result<Shown> {
    let version = store.version(listed.id, &listed.version).await?;
    Ok(Shown {
        id: listed.id,
        version: version.version,
        digest: version.sha256,
    })
}

/// What a decision on several items did with each of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BulkOutcome {
    /// The decisions made, one per item decided.
    pub decided: Vec<Decision>,
    /// The items left alone, each with why (in words for the owner).
    pub skipped: Vec<Skipped>,
}

impl BulkOutcome {
    /// Count `result` for item `id`: a decision, or a refusal skipped with its sentence.
    async fn take(&mut self, store: &Store, id: i64, result: Result<Decision>) -> Result<()> {
        match result {
            Ok(decision) => self.decided.push(decision),
            // The row already names the draft: the sentence says what to do about it.
            Err(Error::NeedsConfirmation { cautions, .. }) => {
                let why = format!(
                    "it needs your confirmation, one draft at a time: {}",
                    cautions.join(" ")
                );
                self.skip(store, id, why).await?
            }
            Err(e) if e.is_refusal() => self.skip(store, id, e.to_string()).await?,
            Err(e) => return Err(e),
        }
        Ok(())
    }

    async fn skip(&mut self, store: &Store, id: i64, why: String) -> Result<()> {
        let subject = match store.get_item(id).await {
            Ok(item) => item.summary.subject,
            // Gone from the mirror (its account removed): the sentence says so.
            Err(Error::NotFound { .. }) => String::new(),
            Err(e) => return Err(e),
        };
        self.skipped.push(Skipped { id, subject, why });
        Ok(())
    }
}

/// An item a bulk decision left alone.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The item.
    pub id: i64,
    /// Its subject, so the owner can tell which draft it is ("" when it has none).
    pub subject: String,
    /// Why it was not decided.
    pub why: String,
}

/// Refuse a bulk rejection without a reason, as one rejection is refused.
fn require_reason(reason: &str, count: usize) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(Error::refused(
            format!("reject {count} items"),
            "say why: the reason goes back to the agents and into the audit log",
        ));
    }
    Ok(())
}

/// Reject every item in `shown` with one `reason`. Each rejection binds to its own shown
/// version, exactly as one rejection does; an item that cannot be rejected (changed since, or
/// already decided) is skipped with core's sentence, and the others still go.
pub async fn reject_all(
    store: &Store,
    shown: &[Shown],
    reason: &str,
    actor: &str,
) -> Result<BulkOutcome> {
    require_reason(reason, shown.len())?;
    let mut outcome = BulkOutcome::default();
    for one in shown {
        let result = reject(store, one, reason, actor).await;
        outcome.take(store, one.id, result).await?;
    }
    Ok(outcome)
}

/// [`reject_all`] for queue rows: each item is rejected at the version its row showed
/// ([`shown_as_listed`]). A row whose draft changed since is skipped as changed; one whose
/// version the mirror does not hold is skipped too, with why.
pub async fn reject_all_listed(
    store: &Store,
    listed: &[Listed],
    reason: &str,
    actor: &str,
) -> Result<BulkOutcome> {
    require_reason(reason, listed.len())?;
    let mut outcome = BulkOutcome::default();
    for one in listed {
        match shown_as_listed(store, one).await {
            Ok(shown) => {
                let result = reject(store, &shown, reason, actor).await;
                outcome.take(store, one.id, result).await?;
            }
            Err(e @ Error::NotFound { .. }) => outcome.skip(store, one.id, e.to_string()).await?,
            Err(e) => return Err(e),
        }
    }
    Ok(outcome)
}

/// Approve those of `ids` whose current version `actor` displayed, each bound to the version
/// it was displayed at — never one the owner has not seen. The others are skipped and named:
/// never displayed, changed since, or with cautions that need a confirmation of their own.
pub async fn approve_all_displayed(
    store: &Store,
    ids: &[i64],
    window: UndoWindow,
    actor: &str,
) -> Result<BulkOutcome> {
    let mut outcome = BulkOutcome::default();
    for &id in ids {
        let Some(view) = store.last_view(id, actor).await? else {
            outcome
                .skip(store, id, "you have not displayed it".into())
                .await?;
            continue;
        };
        let shown = Shown {
            id,
            version: view.version,
            digest: view.digest,
        };
        // A caution is confirmed for one draft at a time, never in bulk.
        let result = approve(store, &shown, window, actor, Confirmation::None).await;
        outcome.take(store, id, result).await?;
    }
    Ok(outcome)
}
