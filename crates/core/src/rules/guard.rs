//! The hard guards: what holds a draft for the owner whatever an armed rule says. No rule can
//! lift them — a rule is a decision made in advance about ordinary drafts, never the easy way
//! round a safety flag.

use chrono::{DateTime, Utc};

use super::{Draft, RuleDefinition};
use crate::render::FlagKind;

/// Why an armed rule did not act on a draft, and whether time alone can lift it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    /// One sentence per guard, in the order checked.
    pub reasons: Vec<String>,
    /// When to look again: a guard that passes with time (the draft still being written, a
    /// failed sync, the daily cap, Hold everything). `None`: only a new version can change it.
    pub retry_at: Option<DateTime<Utc>>,
}

/// What the guards know besides the draft.
#[derive(Clone, Debug)]
pub struct GuardContext {
    /// Now.
    pub now: DateTime<Utc>,
    /// When this version of the draft was first seen.
    pub version_seen_at: DateTime<Utc>,
    /// A version newer than this many seconds may still be being written.
    pub settle_secs: u32,
    /// What went wrong in the account's last sync, when it failed.
    pub last_sync_error: Option<String>,
    /// How many decisions the rule made today.
    pub decided_today: u32,
    /// When the owner's day ends (the daily cap starts over).
    pub day_ends_at: DateTime<Utc>,
    /// The owner's "Hold everything" switch.
    pub hold_everything: bool,
}

/// How long to wait before looking again at a draft held by a failed sync.
const SYNC_RETRY_SECS: i64 = 15;

/// The guards that hold `draft` from `rule`, if any.
pub fn check(rule: &RuleDefinition, draft: &Draft<'_>, context: &GuardContext) -> Option<Hold> {
    let mut reasons = Vec::new();
    let mut retry_at: Option<DateTime<Utc>> = None;
    let mut retry = |at: DateTime<Utc>| {
        retry_at = Some(retry_at.map_or(at, |r| r.max(at)));
    };
    for flag in &draft.view.flags {
        // A rule that names where its recipients may be has judged what this flag says.
        if flag.kind == FlagKind::ExternalRecipient && rule.conditions.vets_recipients() {
            continue;
        }
        reasons.push(flag.explanation.clone());
    }
    for warning in &draft.view.warnings {
        reasons.push(format!("the message has a problem: {}", warning.message));
    }
    let lasting_count = reasons.len();
    let settles_at =
        context.version_seen_at + chrono::Duration::seconds(context.settle_secs.into());
    if settles_at > context.now {
        reasons.push(format!(
            "it changed less than {} s ago: the agent may still be writing it",
            context.settle_secs
        ));
        retry(settles_at);
    }
    if let Some(error) = &context.last_sync_error {
        reasons.push(format!("the account's last sync failed ({error})"));
        retry(context.now + chrono::Duration::seconds(SYNC_RETRY_SECS));
    }
    if let Some(cap) = rule.daily_cap {
        if context.decided_today >= cap {
            reasons.push(format!("the rule reached its daily cap of {cap}"));
            retry(context.day_ends_at);
        }
    }
    if context.hold_everything {
        reasons.push("Hold everything is on".into());
        // Turning the switch off looks again at once (see rules::pass::set_hold_everything).
        retry(context.now + chrono::Duration::seconds(SYNC_RETRY_SECS));
    }
    // A lasting guard (a flag, a warning) keeps this version for the owner: no retry then.
    let lasting = lasting_count > 0;
    if reasons.is_empty() {
        return None;
    }
    Some(Hold {
        reasons,
        retry_at: if lasting { None } else { retry_at },
    })
}

/// "held: rule R would approve, but …" — the sentence the queue and the audit show.
pub fn held_sentence(rule_name: &str, verdict: &str, hold: &Hold) -> String {
    format!(
        "held: rule {rule_name} would {verdict}, but {}",
        hold.reasons.join("; ")
    )
}
