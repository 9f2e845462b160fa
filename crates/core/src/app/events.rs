//! What the running app tells the UI: which items changed and why, reachability, new drafts,
//! and refusals to notify (each exactly once, from the mirror).

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::domain::OutcomeKind;
use crate::error::Result;
use crate::outbox::DispatchReport;
use crate::store::{rule_of_actor, ItemSummary, Refusal, Store};

/// Why items changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ChangeCause {
    /// A sync (live, or asked for) brought in what the service holds.
    Synced,
    /// The owner decided (approve or reject): the decision is in the outbox.
    Decided,
    /// The owner took a decision back.
    Undone,
    /// The owner edited a draft: its new version awaits review.
    Edited,
    /// The dispatcher carried out (or gave up on, or postponed) decisions.
    Dispatched,
    /// An account was connected or removed.
    Accounts,
    /// Armed rules decided drafts (their decisions wait out the undo window like a click).
    RulesDecided,
}

/// Which items changed and why: the one change event core sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ItemsChanged {
    /// Why.
    pub cause: ChangeCause,
    /// The account whose items changed, when one is concerned.
    pub account_id: Option<String>,
    /// The items as they are now, when core knows which changed (a decision, a dispatch): a
    /// screen updates these rows from here without reading the queue again. Empty: any item
    /// of `account_id` (or of every account) may have changed; read the queue again.
    pub items: Vec<ItemSummary>,
}

impl ItemsChanged {
    /// Something changed for `account_id` (or anywhere): read again.
    pub fn unknown(cause: ChangeCause, account_id: Option<String>) -> ItemsChanged {
        ItemsChanged {
            cause,
            account_id,
            items: vec![],
        }
    }
}

/// What the UI must hear about.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum AppEvent {
    /// Items changed: which and why.
    ItemsChanged(ItemsChanged),
    /// An account's service stopped or started answering.
    Reachability {
        /// The account.
        account_id: String,
        /// Whether it answers.
        online: bool,
        /// Why not.
        detail: Option<String>,
    },
    /// Drafts arrived that await review: one notification "N new drafts to review" per burst
    /// (only when the owner turned these notifications on).
    NewDrafts {
        /// How many.
        count: usize,
    },
    /// This app became the dispatcher of its data directory: another Countersign process (the
    /// CLI's `dispatch`, another app) held the role at start and has let go. The status's
    /// `dispatching` changed; a status bar reads it again.
    DispatcherRole {
        /// Whether this app dispatches now.
        dispatcher: bool,
    },
    /// Drafts a rule approved that were sent in one dispatch pass: one notification for all
    /// of them ("Sent by rule R: Re: …", or "Sent by rules: N drafts"), only when the owner
    /// has notifications on.
    SentByRule {
        /// Each draft sent with the name of the rule that approved it, in the order sent.
        sent: Vec<RuleSend>,
    },
    /// The rules judged drafts and recorded what each would do (shadow rules too): their
    /// records changed, and a rules page on screen reads them again.
    RulesJudged {
        /// The drafts judged.
        items: Vec<i64>,
    },
    /// A refusal the owner must be told about (a notification).
    Refusal {
        /// The refusal.
        refusal: Refusal,
        /// The item it is about.
        item: Box<ItemSummary>,
    },
}

/// A draft a rule approved, sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleSend {
    /// The rule's name (at the version that decided).
    pub rule: String,
    /// The item as it is now (sent).
    pub item: ItemSummary,
}

/// The callback that hears [`AppEvent`]s.
pub type OnEvent = Arc<dyn Fn(AppEvent) + Send + Sync>;

/// Tell the UI that `item_ids` changed, with their rows as they are now.
pub(super) async fn emit_items(
    store: &Store,
    on_event: &OnEvent,
    cause: ChangeCause,
    item_ids: Vec<i64>,
) {
    let mut items = Vec::with_capacity(item_ids.len());
    for id in item_ids {
        match store.get_item(id).await {
            Ok(item) => items.push(item.summary),
            Err(e) => tracing::warn!(item = id, error = %e, "cannot read a changed item"),
        }
    }
    let event = if items.is_empty() {
        ItemsChanged::unknown(cause, None)
    } else {
        ItemsChanged {
            cause,
            account_id: None,
            items,
        }
    };
    on_event(AppEvent::ItemsChanged(event));
}

/// Tell the owner, once per burst, how many new drafts await review.
pub(super) async fn deliver_new_drafts(store: &Store, on_event: &OnEvent) {
    match announce_new_drafts(store).await {
        Ok(Some(count)) => on_event(AppEvent::NewDrafts { count }),
        Ok(None) => {}
        Err(error) => tracing::warn!(error = %error, "cannot count the new drafts"),
    }
}

/// How many drafts became reviewable since the last call, when the owner wants to hear about
/// them (`Settings::new_draft_notifications`); `None` when there are none or they are not
/// wanted. Every call marks them told either way, so turning the setting on later does not
/// announce old drafts.
pub async fn announce_new_drafts(store: &Store) -> Result<Option<usize>> {
    let count = store.take_unannounced_drafts().await?;
    let wanted = store.settings().await?.new_draft_notifications;
    Ok((wanted && count > 0).then_some(count))
}

/// Tell the owner about each refusal once: as an event (a notification), unless they are
/// looking at that item already or have turned notifications off.
pub(super) async fn deliver_refusals(
    store: &Store,
    viewing: &Mutex<Option<i64>>,
    on_event: &OnEvent,
) {
    let Ok(refusals) = store.unnotified_refusals().await else {
        return;
    };
    let notify = store
        .settings()
        .await
        .map(|s| s.notifications)
        .unwrap_or(true);
    for refusal in refusals {
        // Mark first: a crash between the two must not notify twice.
        if !matches!(store.mark_refusal_notified(refusal.id).await, Ok(true)) {
            continue;
        }
        let in_view = *viewing.lock().unwrap_or_else(|e| e.into_inner()) == Some(refusal.item_id);
        if !notify || in_view {
            continue;
        }
        let Ok(item) = store.get_item(refusal.item_id).await else {
            continue;
        };
        on_event(AppEvent::Refusal {
            refusal,
            item: Box::new(item.summary),
        });
    }
}

/// Tell the owner, once per dispatch pass, which drafts a rule approved were sent (`report`'s
/// attempts that ended done, decided by `rule:<id>@<version>`), unless notifications are off.
/// The draft in view is left out, as a refusal is: the owner watches it change.
pub(super) async fn deliver_rule_sends(
    store: &Store,
    report: &DispatchReport,
    viewing: &Mutex<Option<i64>>,
    on_event: &OnEvent,
) {
    let in_view = *viewing.lock().unwrap_or_else(|e| e.into_inner());
    match rule_sends(store, report, in_view).await {
        Ok(sent) if !sent.is_empty() => on_event(AppEvent::SentByRule { sent }),
        Ok(_) => {}
        Err(error) => tracing::warn!(error = %error, "cannot tell the rule sends"),
    }
}

/// The drafts of `report` a rule approved and that were sent, when the owner wants to hear
/// about them ([`crate::store::Settings::notifications`]), but for `in_view`, the item the
/// owner is looking at.
pub async fn rule_sends(
    store: &Store,
    report: &DispatchReport,
    in_view: Option<i64>,
) -> Result<Vec<RuleSend>> {
    let mut sent = Vec::new();
    for attempt in &report.attempts {
        let decision = &attempt.decision;
        if in_view == Some(decision.item_id) {
            continue;
        }
        let by_rule = decision.decided_by.as_deref().and_then(rule_of_actor);
        let (OutcomeKind::Done, Some(rule_id), crate::domain::DecisionKind::Approve) =
            (attempt.outcome, by_rule, decision.kind)
        else {
            continue;
        };
        if sent.is_empty() && !store.settings().await?.notifications {
            return Ok(sent);
        }
        sent.push(RuleSend {
            rule: store.rule(rule_id).await?.definition.name,
            item: store.get_item(decision.item_id).await?.summary,
        });
    }
    Ok(sent)
}
