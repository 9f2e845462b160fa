//! A rule's record against the owner's own decisions: what it would have done with each
//! draft it matched, and what the owner did ("would have approved 41; you approved 39, edited
//! 1, rejected 1"). Shown before a rule is armed; `rules test` replays a rule over the history.

use serde::Serialize;

use super::{matches, Draft, RuleDefinition};
use crate::domain::DecisionKind;
use crate::domain::DecisionState;
use crate::error::Result;
use crate::store::{rule_of_actor, ItemFilter, Store};

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

/// A rule's record: one line per draft it matched, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleRecord {
    /// The drafts.
    pub lines: Vec<RecordLine>,
}

impl RuleRecord {
    /// "would have approved 41; you approved 39, edited 1, rejected 1" (one clause per verdict).
    pub fn summary(&self) -> String {
        let mut clauses = Vec::new();
        for would in ["approve", "reject", "hold"] {
            let lines: Vec<&RecordLine> = self.lines.iter().filter(|l| l.would == would).collect();
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
        if clauses.is_empty() {
            "has matched no draft yet".into()
        } else {
            clauses.join(". ")
        }
    }

    /// The drafts where the owner did otherwise than the rule would have.
    pub fn disagreements(&self) -> Vec<&RecordLine> {
        self.lines
            .iter()
            .filter(|l| !l.agrees() && !matches!(l.owner, OwnerDid::Undecided | OwnerDid::ByRule))
            .collect()
    }
}

/// The record of rule `rule_id` (every version of it) from what it recorded as it ran.
pub async fn recorded(store: &Store, rule_id: i64) -> Result<RuleRecord> {
    let mut latest: Vec<(i64, String)> = Vec::new();
    for evaluation in store.evaluations_of_rule(rule_id).await?.into_iter().rev() {
        if evaluation.verdict == "no_match"
            || latest.iter().any(|(id, _)| *id == evaluation.item_id)
        {
            continue;
        }
        latest.push((evaluation.item_id, evaluation.verdict));
    }
    let mut record = RuleRecord::default();
    for (item_id, would) in latest {
        let item = match store.get_item(item_id).await {
            Ok(item) => item,
            Err(crate::Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        record.lines.push(RecordLine {
            item_id,
            subject: item.summary.subject,
            would,
            owner: owner_did(store, item_id).await?.0,
        });
    }
    Ok(record)
}

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
            (OwnerDid::Edited, Some(v)) => versions
                .iter()
                .position(|x| x.version == v)
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| versions.get(i)),
            (_, Some(v)) => versions.iter().find(|x| x.version == v),
            (_, None) => versions.iter().find(|x| x.version == item.summary.version),
        };
        let Some(version) = judged else { continue };
        let (view, parent) = crate::review::render_as_reviewed(store, &item, version).await?;
        let chief_filed = store.chief_filed(&item).await?;
        let draft = Draft {
            account_id: &item.summary.account_id,
            source: item.summary.source,
            plugin: item.muster.plugin.as_deref(),
            chief_filed,
            view: &view,
            parent: parent.as_ref(),
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

/// What the owner did with `item_id`, and the version that decision was on.
async fn owner_did(store: &Store, item_id: i64) -> Result<(OwnerDid, Option<String>)> {
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
            Some(d) => (OwnerDid::ByRule, Some(d.version.clone())),
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
    Ok((did, Some(decision.version.clone())))
}
