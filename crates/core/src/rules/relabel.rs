//! A draft's Gmail labels changed (seen by the sync): the rules judge it again, and a rule
//! scoped to a label the draft no longer carries stops deciding it — its countdown is taken
//! back, as Hold everything takes one back, not as the owner's verdict.
//!
//! A new version is judged again because no verdict exists for it yet; a relabelled one keeps
//! its version (Gmail's `messages.modify` keeps the message id), so its verdicts are made due
//! again instead ([`Store::rejudge_now`]), the path a hold that has passed takes.

use crate::decide;
use crate::error::Result;
use crate::store::{rule_of_actor, Store};

/// Actor of the take-back, in the audit log.
pub const RELABELLED: &str = "labels changed";

/// The labels of `item_id` changed: let the rules look again, and take back the countdown of a
/// rule whose label the draft lost. Returns whether a countdown was taken back.
pub async fn labels_changed(store: &Store, item_id: i64) -> Result<bool> {
    store.rejudge_now(item_id).await?;
    let Some(decider) = store.queued_rule_decider(item_id).await? else {
        return Ok(false);
    };
    let Some(rule_id) = rule_of_actor(&decider) else {
        return Ok(false);
    };
    let rule = store.rule(rule_id).await?;
    let Some(label) = &rule.definition.scope.label else {
        return Ok(false);
    };
    if store.item_labels(item_id).await?.contains(label) {
        return Ok(false);
    }
    match decide::take_back(store, item_id, RELABELLED).await {
        Ok(_) => {
            // The rules judge the version again (the rule no longer matches it).
            store.retry_rule_decision(item_id).await?;
            Ok(true)
        }
        // Claimed meanwhile: it is already leaving, as an undo would be told.
        Err(e) if e.is_refusal() => Ok(false),
        Err(e) => Err(e),
    }
}
