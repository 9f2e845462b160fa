//! A rule's record against the owner's own decisions: what it would have done with each
//! draft it matched, and what the owner did ("would have approved 41; you approved 39, edited
//! 1, rejected 1"). Shown before a rule is armed; `rules test` replays a rule over the history.
//!
//! Like is compared with like: a verdict counts against the owner's decision only when both
//! are on the same version and digest, and only the rule's current version counts (any change
//! of a rule starts its record over). The agent chooses every version; a verdict on one it
//! later rewrote says nothing of the one the owner decided.

use serde::{Deserialize, Serialize};

use super::{matches, Draft, RuleDefinition};
use crate::domain::DecisionKind;
use crate::domain::DecisionState;
use crate::error::Result;
use crate::store::{rule_of_actor, ItemFilter, Rule, RuleEvaluation, Store};

/// What the owner did with a draft a rule matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum OwnerDid {
    /// Approved the agent's version.
    Approved,
    /// Edited it, then approved the edit.
    Edited,
    /// Rejected it.
    Rejected,
    /// A rule decided it (the owner let it go).
    ByRule,
    /// Nothing yet.
    Undecided,
    /// Decided a version this rule (at its current version) never judged: neither an
    /// agreement nor a disagreement. An agent that rewrites a draft the rule liked into one
    /// the owner then decides cannot lend the rule the owner's decision.
    NotJudged,
}

/// One draft in a rule's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecordLine {
    /// The draft.
    pub item_id: i64,
    /// Its subject.
    pub subject: String,
    /// What the rule would do: approve, hold or reject.
    pub would: String,
    /// What the owner did.
    pub owner: OwnerDid,
}

impl RecordLine {
    /// The owner did what the rule would have done (a hold agrees with anything the owner
    /// decided: it only asks).
    pub fn agrees(&self) -> bool {
        matches!(
            (self.would.as_str(), self.owner),
            ("approve", OwnerDid::Approved)
                | ("reject", OwnerDid::Rejected)
                | (
                    "hold",
                    OwnerDid::Approved | OwnerDid::Edited | OwnerDid::Rejected
                )
        )
    }
}

impl RecordLine {
    /// The owner decided this draft otherwise than the rule would have (not yet deciding, a
    /// rule's decision and a version the rule never judged are no disagreement).
    pub fn disagrees(&self) -> bool {
        !self.agrees()
            && !matches!(
                self.owner,
                OwnerDid::Undecided | OwnerDid::ByRule | OwnerDid::NotJudged
            )
    }
}

/// A rule's record: one line per draft it matched, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleRecord {
    /// The drafts.
    pub lines: Vec<RecordLine>,
}

impl RuleRecord {
    /// "would have approved 41; you approved 39, edited 1, rejected 1" (one clause per verdict),
    /// then how many drafts the owner decided at a version the rule never judged.
    pub fn summary(&self) -> String {
        let mut clauses = Vec::new();
        for would in ["approve", "reject", "hold"] {
            let lines: Vec<&RecordLine> = self
                .lines
                .iter()
                .filter(|l| l.would == would && l.owner != OwnerDid::NotJudged)
                .collect();
            if lines.is_empty() {
                continue;
            }
            let count = |did: OwnerDid| lines.iter().filter(|l| l.owner == did).count();
            let verb = match would {
                "approve" => "approved",
                "reject" => "rejected",
                _ => "held",
            };
            let mut parts = vec![
                format!("you approved {}", count(OwnerDid::Approved)),
                format!("edited {}", count(OwnerDid::Edited)),
                format!("rejected {}", count(OwnerDid::Rejected)),
            ];
            for (did, words) in [
                (OwnerDid::ByRule, "decided by a rule"),
                (OwnerDid::Undecided, "not decided yet"),
            ] {
                if count(did) > 0 {
                    parts.push(format!("{} {}", count(did), words));
                }
            }
            clauses.push(format!(
                "would have {verb} {}; {}",
                lines.len(),
                parts.join(", ")
            ));
        }
        let not_judged = self
            .lines
            .iter()
            .filter(|l| l.owner == OwnerDid::NotJudged)
            .count();
        if not_judged > 0 {
            clauses.push(format!(
                "{not_judged} not judged (you decided a version it never saw)"
            ));
        }
        if clauses.is_empty() {
            "has matched no draft yet".into()
        } else {
            clauses.join(". ")
        }
    }

    /// The drafts where the owner did otherwise than the rule would have.
    pub fn disagreements(&self) -> Vec<&RecordLine> {
        self.lines.iter().filter(|l| l.disagrees()).collect()
    }
}

/// The record of rule `rule_id` at its current version, from what it recorded as it ran: each
/// draft it judged, paired with the owner's decision on the very version and digest it judged
/// (the agent's version before an owner's edit), or "not judged" when the owner decided a
/// version it never saw.
pub async fn recorded(store: &Store, rule_id: i64) -> Result<RuleRecord> {
    let rule = store.rule(rule_id).await?;
    let evaluations: Vec<RuleEvaluation> = store
        .evaluations_of_rule(rule_id)
        .await?
        .into_iter()
        .filter(|e| e.rule_version == rule.version)
        .collect();
    // Newest first, each draft once.
    let mut seen = std::collections::HashSet::new();
    let items: Vec<i64> = evaluations
        .iter()
        .rev()
        .map(|e| e.item_id)
        .filter(|id| seen.insert(*id))
        .collect();
    let mut record = RuleRecord::default();
    for item_id in items {
        let item = match store.get_item(item_id).await {
            Ok(item) => item,
            Err(crate::Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        let (owner, decided) = owner_did(store, item_id).await?;
        let paired = match (owner, decided) {
            (_, None) => {
                let current = store.version(item_id, &item.summary.version).await?;
                Some((current.version, current.sha256))
            }
            // The owner's edit is the owner's, not the agent's: the agent's version before it
            // is what the owner decided against.
            (OwnerDid::Edited, Some((version, _))) => {
                let versions = store.versions(item_id).await?;
                versions
                    .iter()
                    .position(|v| v.version == version)
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| versions.get(i))
                    .map(|v| (v.version.clone(), v.sha256.clone()))
            }
            (_, Some(decided)) => Some(decided),
        };
        let judged = paired.as_ref().and_then(|(version, digest)| {
            evaluations
                .iter()
                .rev()
                .find(|e| e.item_id == item_id && e.version == *version && e.digest == *digest)
        });
        let line = |would: &str, owner| RecordLine {
            item_id,
            subject: item.summary.subject.clone(),
            would: would.to_string(),
            owner,
        };
        match judged {
            Some(e) if e.verdict == "no_match" => {}
            Some(e) => record.lines.push(line(&e.verdict, owner)),
            // Not decided, and its current version not judged yet: nothing to compare.
            None if owner == OwnerDid::Undecided => {}
            None => {
                // The rule liked another version of it: say so, and count nothing.
                if let Some(other) = evaluations
                    .iter()
                    .rev()
                    .find(|e| e.item_id == item_id && e.verdict != "no_match")
                {
                    record.lines.push(line(&other.verdict, OwnerDid::NotJudged));
                }
            }
        }
    }
    Ok(record)
}

/// How the owner confirmed arming a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ArmConfirmation {
    /// Having read its record (`--yes`, or the window's Arm under the record).
    Record,
    /// Knowing that it has no record at all (`--with-no-record`).
    NoRecord,
}

/// Arm rule `rule_id` (it decides from now on). A rule with no record at its current version
/// asks first ([`crate::Error::NeedsConfirmation`]) unless the owner said so
/// ([`ArmConfirmation::NoRecord`]): nothing shows what it would decide. The version armed is
/// the version whose record was read; a rule changed meanwhile is refused.
pub async fn arm(
    store: &Store,
    rule_id: i64,
    confirmation: ArmConfirmation,
    actor: &str,
) -> Result<Rule> {
    let rule = store.rule(rule_id).await?;
    let record = recorded(store, rule_id).await?;
    if record.lines.is_empty() && confirmation != ArmConfirmation::NoRecord {
        return Err(crate::Error::NeedsConfirmation {
            action: format!("arm the rule “{}”", rule.definition.name),
            cautions: vec![NO_RECORD.to_string()],
        });
    }
    store.arm_rule_at(rule_id, rule.version, actor).await
}

/// The caution when arming a rule with no record.
pub const NO_RECORD: &str = "it has no record: it has matched no draft since it last changed, \
                             so nothing shows what it would decide.";

/// Replay `definition` over every draft in the mirror without acting: each is judged at the
/// version the owner decided on (the agent's version, for one the owner edited), or its
/// current version when undecided.
pub async fn replay(store: &Store, definition: &RuleDefinition) -> Result<RuleRecord> {
    let mut record = RuleRecord::default();
    let mut items = store.list_items(&ItemFilter::default()).await?;
    items.sort_by_key(|item| std::cmp::Reverse(item.updated_at));
    for summary in items {
        let item = store.get_item(summary.id).await?;
        let (owner, decided_version) = owner_did(store, summary.id).await?;
        let versions = store.versions(summary.id).await?;
        let judged = match (owner, decided_version) {
            // The owner's edit is not what the agent wrote: judge the version before it.
            (OwnerDid::Edited, Some((v, _))) => versions
                .iter()
                .position(|x| x.version == v)
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| versions.get(i)),
            (_, Some((v, d))) => versions.iter().find(|x| x.version == v && x.sha256 == d),
            (_, None) => versions.iter().find(|x| x.version == item.summary.version),
        };
        let Some(version) = judged else { continue };
        let (view, parent) = crate::review::render_as_reviewed(store, &item, version).await?;
        let chief_filed = store.chief_filed(&item).await?;
        let labels = store.item_labels(item.summary.id).await?;
        let draft = Draft {
            account_id: &item.summary.account_id,
            source: item.summary.source,
            plugin: item.muster.plugin.as_deref(),
            chief_filed,
            view: &view,
            parent: parent.as_ref(),
            labels: &labels,
        };
        if matches(definition, &draft).is_ok() {
            record.lines.push(RecordLine {
                item_id: summary.id,
                subject: summary.subject,
                would: definition.action.verdict().to_string(),
                owner,
            });
        }
    }
    Ok(record)
}

/// What the owner did with `item_id`, and the version and digest that decision was on.
async fn owner_did(store: &Store, item_id: i64) -> Result<(OwnerDid, Option<(String, String)>)> {
    let decisions = store.decisions_for_item(item_id).await?;
    let standing = decisions
        .iter()
        .rev()
        .filter(|d| d.state != DecisionState::Cancelled)
        .collect::<Vec<_>>();
    let by_owner = standing.iter().find(|d| {
        d.decided_by
            .as_deref()
            .is_none_or(|actor| rule_of_actor(actor).is_none())
    });
    let Some(decision) = by_owner else {
        return Ok(match standing.first() {
            Some(d) => (
                OwnerDid::ByRule,
                Some((d.version.clone(), d.digest.clone())),
            ),
            None => (OwnerDid::Undecided, None),
        });
    };
    let did = match decision.kind {
        DecisionKind::Reject => OwnerDid::Rejected,
        DecisionKind::Approve => {
            let edited = store.audit_for_item(item_id).await?.iter().any(|entry| {
                entry.line.outcome.as_deref() == Some(crate::edit::EDITED_BY_OWNER)
                    && entry.line.version.as_deref() == Some(decision.version.as_str())
            });
            if edited {
                OwnerDid::Edited
            } else {
                OwnerDid::Approved
            }
        }
    };
    Ok((
        did,
        Some((decision.version.clone(), decision.digest.clone())),
    ))
}
