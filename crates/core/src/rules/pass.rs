//! One pass of the rules over the drafts waiting for the owner. The dispatcher runs it before
//! each dispatch pass, so exactly one process decides by rule (the one holding the lock).

use chrono::{DateTime, Local, Utc};

use super::guard::{self, GuardContext};
use super::{matches, Draft, RuleAction};
use crate::decide::{self, Confirmation, Shown, UndoWindow};
use crate::domain::ItemState;
use crate::error::{Error, Result};
use crate::store::{
    Decision, NewAuditEntry, NewEvaluation, Rule, RuleMode, Settings, SettingsChange, ShownPart,
    Store,
};

/// A decision an armed rule reached on one version, not yet made.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The rule, at the version that judged.
    pub rule: Rule,
    /// The version judged (the decision binds to it).
    pub shown: Shown,
    /// What the rule does.
    pub action: RuleAction,
}

/// What one pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RulesPass {
    /// The decisions rules made, each with the rule's name.
    pub decided: Vec<(Decision, String)>,
    /// The drafts an armed rule matched but left to the owner, with the sentence why.
    pub held: Vec<(i64, String)>,
    /// Every draft the rules judged (their verdicts, shadow ones too, were recorded): the
    /// rules' records changed.
    pub judged: Vec<i64>,
}

/// Let the rules look at every draft they have not judged yet (or held for a reason that has
/// passed), record what each would do, and make the decisions the armed ones reach.
pub async fn run(store: &Store, now: DateTime<Utc>) -> Result<RulesPass> {
    let mut pass = RulesPass::default();
    let rules = store.rules().await?;
    if rules.is_empty() {
        return Ok(pass);
    }
    let settings = store.settings().await?;
    for item_id in store.items_for_rules(now).await? {
        let judged = match judge(store, &rules, &settings, item_id, now).await {
            Ok(judged) => judged,
            // The draft went away or changed while it was being judged: the next pass sees it.
            Err(Error::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        pass.judged.push(item_id);
        match judged {
            Judged::Decide(verdict) => match act(store, &verdict).await {
                Ok(decision) => pass
                    .decided
                    .push((decision, verdict.rule.definition.name.clone())),
                Err(refusal) if refusal.is_refusal() => {
                    let why = format!(
                        "held: rule {} was refused: {refusal}",
                        verdict.rule.definition.name
                    );
                    // Looked at again later: a refusal can pass (Hold everything turned off).
                    record(
                        store,
                        &verdict.rule,
                        &verdict.shown,
                        &verdict.action,
                        Some(&why),
                        Some(now + chrono::Duration::seconds(15)),
                        None,
                    )
                    .await?;
                    pass.held.push((item_id, why));
                }
                Err(e) => return Err(e),
            },
            Judged::Held(why) => pass.held.push((item_id, why)),
            Judged::Nothing => {}
        }
    }
    Ok(pass)
}

/// What the rules made of a draft.
#[derive(Clone, Debug)]
pub enum Judged {
    /// An armed rule decides it.
    Decide(Box<Verdict>),
    /// An armed rule matched but the draft waits for the owner (a hold rule, or a guard).
    Held(String),
    /// No armed rule matched.
    Nothing,
}

/// Judge the current version of `item_id` with every rule, in order, and record what each
/// would do. The first armed rule that matches decides; nothing after it does.
pub async fn judge(
    store: &Store,
    rules: &[Rule],
    settings: &Settings,
    item_id: i64,
    now: DateTime<Utc>,
) -> Result<Judged> {
    let item = store.get_item(item_id).await?;
    let version = store.version(item_id, &item.summary.version).await?;
    let (view, parent) = crate::review::render_as_reviewed(store, &item, &version).await?;
    let chief_filed = store.chief_filed(&item).await?;
    let labels = store.item_labels(item_id).await?;
    let draft = Draft {
        account_id: &item.summary.account_id,
        source: item.summary.source,
        plugin: item.muster.plugin.as_deref(),
        chief_filed,
        view: &view,
        parent: parent.as_ref(),
        labels: &labels,
    };
    let shown = Shown {
        id: item_id,
        version: version.version.clone(),
        digest: version.sha256.clone(),
    };
    let cursor = store.sync_cursor(&item.summary.account_id).await?;
    let mut outcome = Judged::Nothing;
    let mut decided = false;
    for rule in rules {
        let matched = matches(&rule.definition, &draft).is_ok();
        if !matched || rule.mode == RuleMode::Shadow || decided {
            let verdict = if matched {
                rule.definition.action.verdict()
            } else {
                "no_match"
            };
            record_verdict(store, rule, &shown, verdict, None, None, None).await?;
            continue;
        }
        let verdict = rule.definition.action.clone();
        decided = true;
        let name = &rule.definition.name;
        if verdict == RuleAction::Hold {
            let why = format!("held: rule {name} holds it for you");
            record(store, rule, &shown, &verdict, Some(&why), None, None).await?;
            outcome = Judged::Held(why);
            continue;
        }
        let context = GuardContext {
            now,
            version_seen_at: version.first_seen_at,
            settle_secs: settings.rule_settle_secs,
            last_sync_error: cursor.last_error.clone(),
            decided_today: store
                .rule_decisions_since(rule.id, start_of_day(now))
                .await?,
            day_ends_at: start_of_day(now) + chrono::Duration::days(1),
            hold_everything: settings.hold_everything,
        };
        let mut hold = guard::check(&rule.definition, &draft, &context);
        if verdict == RuleAction::Approve && item.summary.state == ItemState::AwaitingCheck {
            // The plugin has not said yet whether it may be sent: look again later.
            let hold = hold.get_or_insert(guard::Hold {
                reasons: vec![],
                retry_at: Some(now + chrono::Duration::seconds(15)),
            });
            hold.reasons
                .push("the plugin has not checked it yet".into());
        }
        match hold {
            Some(hold) => {
                let why = guard::held_sentence(name, verdict.verdict(), &hold);
                record(
                    store,
                    rule,
                    &shown,
                    &verdict,
                    Some(&why),
                    hold.retry_at,
                    None,
                )
                .await?;
                outcome = Judged::Held(why);
            }
            None => {
                outcome = Judged::Decide(Box::new(Verdict {
                    rule: rule.clone(),
                    shown: shown.clone(),
                    action: verdict,
                }))
            }
        }
    }
    Ok(outcome)
}

/// Make the decision `verdict` reached, bound to the version the rule judged: an agent update
/// since is refused [`Error::ChangedSinceShown`], exactly as the owner's click would be.
pub async fn act(store: &Store, verdict: &Verdict) -> Result<Decision> {
    let actor = verdict.rule.actor();
    // The rule judged the rendered view: both renderings, as the owner would be shown them.
    for part in [ShownPart::Html, ShownPart::Text] {
        store.record_view(&verdict.shown, &actor, part).await?;
    }
    let decision = match &verdict.action {
        RuleAction::Approve => {
            decide::approve(
                store,
                &verdict.shown,
                UndoWindow::FromSettings,
                &actor,
                Confirmation::None,
            )
            .await?
        }
        RuleAction::Reject { reason } => {
            decide::reject(store, &verdict.shown, reason, &actor).await?
        }
        RuleAction::Hold => {
            return Err(Error::refused(
                format!(
                    "let a rule decide {}",
                    store.draft_words(verdict.shown.id).await?
                ),
                "a hold rule leaves the draft to you",
            ))
        }
    };
    // Hold everything may have been turned on while this pass judged: its sweep of queued
    // rule decisions could then have run before this one was written. The switch is saved
    // before the sweep, so reading it after the write closes that gap.
    if store.settings().await?.hold_everything {
        decide::take_back(store, verdict.shown.id, "hold everything").await?;
        return Err(Error::refused(
            format!(
                "let a rule decide {}",
                store.draft_words(verdict.shown.id).await?
            ),
            "Hold everything is on",
        ));
    }
    record(
        store,
        &verdict.rule,
        &verdict.shown,
        &verdict.action,
        None,
        None,
        Some(decision.id),
    )
    .await?;
    Ok(decision)
}

/// Turn "Hold everything" on or off. On, it also takes back every decision a rule made that
/// has not started to leave; off, the rules look again at once at what it held.
pub async fn set_hold_everything(store: &Store, on: bool, actor: &str) -> Result<Vec<i64>> {
    // The switch alone, audited with its old and new value: no other setting is touched.
    store
        .update_settings(
            &SettingsChange {
                hold_everything: Some(on),
                ..SettingsChange::default()
            },
            actor,
        )
        .await?;
    let mut undone = Vec::new();
    if on {
        for item_id in store.queued_rule_decisions().await? {
            match decide::take_back(store, item_id, actor).await {
                Ok(_) => {
                    // Not the owner's verdict on the draft: the rule looks again once the
                    // switch is off (an owner's Undo of one rule decision stays final).
                    store.retry_rule_decision(item_id).await?;
                    undone.push(item_id)
                }
                // Claimed meanwhile: it is already leaving, as an undo would be told.
                Err(e) if e.is_refusal() => {}
                Err(e) => return Err(e),
            }
        }
    } else {
        store.retry_held_now().await?;
    }
    Ok(undone)
}

async fn record(
    store: &Store,
    rule: &Rule,
    shown: &Shown,
    action: &RuleAction,
    held: Option<&str>,
    retry_at: Option<DateTime<Utc>>,
    decision_id: Option<i64>,
) -> Result<()> {
    let first_hold = match held {
        Some(why) => {
            let before = store.evaluations_for_item(shown.id).await?;
            !before.iter().any(|e| {
                e.rule_id == rule.id
                    && e.rule_version == rule.version
                    && e.version == shown.version
                    && e.held.as_deref() == Some(why)
            })
        }
        None => false,
    };
    record_verdict(
        store,
        rule,
        shown,
        action.verdict(),
        held.map(str::to_string),
        retry_at,
        decision_id,
    )
    .await?;
    if first_hold {
        // Once per reason: a guard looked at again every pass does not fill the record.
        store
            .append_audit(&NewAuditEntry {
                actor: rule.actor(),
                item_id: Some(shown.id),
                action: action.verdict().to_string(),
                version: Some(shown.version.clone()),
                digest: Some(shown.digest.clone()),
                outcome: Some("held".into()),
                detail: held.map(str::to_string),
                ..NewAuditEntry::default()
            })
            .await?;
    }
    Ok(())
}

async fn record_verdict(
    store: &Store,
    rule: &Rule,
    shown: &Shown,
    verdict: &str,
    held: Option<String>,
    retry_at: Option<DateTime<Utc>>,
    decision_id: Option<i64>,
) -> Result<()> {
    store
        .record_evaluation(&NewEvaluation {
            rule,
            item_id: shown.id,
            version: &shown.version,
            digest: &shown.digest,
            verdict,
            held,
            retry_at,
            decision_id,
        })
        .await?;
    Ok(())
}

/// Midnight of the owner's day that `now` is in (the machine's time zone is the owner's).
fn start_of_day(now: DateTime<Utc>) -> DateTime<Utc> {
    start_of_day_in(now, &Local)
}

/// Midnight of the day that `now` is in, in time zone `zone`.
fn start_of_day_in<Z: chrono::TimeZone>(now: DateTime<Utc>, zone: &Z) -> DateTime<Utc> {
    now.with_timezone(zone)
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .and_then(|midnight| midnight.and_local_timezone(zone.clone()).earliest())
        .map(|midnight| midnight.with_timezone(&Utc))
        .unwrap_or(now - chrono::Duration::days(1))
}

#[cfg(test)]
mod tests {
    use super::start_of_day_in;
    use chrono::{DateTime, FixedOffset, Utc};

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339)
            .unwrap()
            .with_timezone(&Utc)
    }

    /// A daily cap counts the owner's day, not UTC's: in India (UTC+5:30) the day of
    /// 20:00 UTC on 5 December began at 18:30 UTC; in New York (UTC-5) the day of 03:00 UTC on
    /// 6 December began at 05:00 UTC on the 5th.
    #[test]
    fn the_owners_day_starts_at_their_own_midnight() {
        let india = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
        assert_eq!(
            start_of_day_in(at("2026-12-05T20:00:00Z"), &india),
            at("2026-12-05T18:30:00Z")
        );
        assert_eq!(
            start_of_day_in(at("2026-12-05T18:29:59Z"), &india),
            at("2026-12-04T18:30:00Z")
        );
        let new_york = FixedOffset::west_opt(5 * 3600).unwrap();
        assert_eq!(
            start_of_day_in(at("2026-12-06T03:00:00Z"), &new_york),
            at("2026-12-05T05:00:00Z")
        );
    }
}
