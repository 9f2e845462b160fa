//! Per agent figures over the record: how often the owner approved, edited or rejected what an
//! agent drafted, how often a rule decided, and how long a version waited for its decision.

use serde::{Deserialize, Serialize};

use super::{HistoryEntry, HistoryKind};
use crate::domain::{DecisionKind, Source};

/// One agent's figures: what the owner (and rules) decided on what it drafted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentFigures {
    /// The account.
    pub account_id: String,
    /// Its address.
    pub account: String,
    /// Gmail or muster.
    pub source: Source,
    /// Gmail: the sender address of its drafts; muster: the plugin and whether the reply was
    /// written on a relayed route or filed by the chief ("gmail-relay, relayed").
    pub agent: String,
    /// Approved by the owner as the agent wrote it.
    pub approved: u32,
    /// Approved by the owner after editing it.
    pub edited: u32,
    /// Rejected by the owner.
    pub rejected: u32,
    /// Decided by a rule (either way).
    pub by_rule: u32,
    /// Of all of them, how many failed.
    pub failed: u32,
    /// The median time, in seconds, from a version's first sight to the owner's decision on it
    /// (a rule's decisions are left out: they take no thought); `None` without any.
    pub median_seconds_to_decision: Option<f64>,
}

/// Group the record by agent (account, source, agent) and count.
pub(super) fn figures_of(entries: &[HistoryEntry]) -> Vec<AgentFigures> {
    let mut groups: Vec<(AgentFigures, Vec<f64>)> = Vec::new();
    for entry in entries {
        let at = groups.iter().position(|(f, _)| {
            f.account_id == entry.account_id && f.source == entry.source && f.agent == entry.agent
        });
        let (figures, waits) = match at {
            Some(at) => &mut groups[at],
            None => {
                groups.push((
                    AgentFigures {
                        account_id: entry.account_id.clone(),
                        account: entry.account.clone(),
                        source: entry.source,
                        agent: entry.agent.clone(),
                        approved: 0,
                        edited: 0,
                        rejected: 0,
                        by_rule: 0,
                        failed: 0,
                        median_seconds_to_decision: None,
                    },
                    Vec::new(),
                ));
                groups.last_mut().expect("just pushed")
            }
        };
        if entry.is(HistoryKind::Failed) {
            figures.failed += 1;
        }
        if entry.is(HistoryKind::ByRule) {
            figures.by_rule += 1;
            continue;
        }
        match (entry.decision, entry.is(HistoryKind::Edited)) {
            (DecisionKind::Approve, true) => figures.edited += 1,
            (DecisionKind::Approve, false) => figures.approved += 1,
            (DecisionKind::Reject, _) => figures.rejected += 1,
        }
        waits.extend(entry.seconds_to_decision());
    }
    let mut figures: Vec<AgentFigures> = groups
        .into_iter()
        .map(|(mut figures, mut waits)| {
            figures.median_seconds_to_decision = median(&mut waits);
            figures
        })
        .collect();
    let total = |f: &AgentFigures| f.approved + f.edited + f.rejected + f.by_rule;
    figures.sort_by(|a, b| {
        total(b)
            .cmp(&total(a))
            .then_with(|| a.account.cmp(&b.account))
            .then_with(|| a.agent.cmp(&b.agent))
    });
    figures
}

/// The median of `values` (sorted in place): the middle one, or the mean of the two middle ones
/// for an even count; `None` for none.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    })
}
