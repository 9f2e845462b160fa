//! What each rule made of each draft version (`rule_evaluations`), and the rules pass's own
//! bookkeeping: which items it looks at, held decisions it tries again, what rules decided.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Rule, RuleMode};
use crate::error::Result;
use crate::store::{format_time, Store};

/// What one rule made of one version of one draft (a row of `rule_evaluations`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleEvaluation {
    /// Row id.
    pub id: i64,
    /// The rule.
    pub rule_id: i64,
    /// The rule's version.
    pub rule_version: u32,
    /// The draft.
    pub item_id: i64,
    /// The version judged.
    pub version: String,
    /// sha256 of its bytes.
    pub digest: String,
    /// approve, hold, reject or no_match.
    pub verdict: String,
    /// The rule was armed.
    pub armed: bool,
    /// Why an armed rule did not act ("held: rule R would approve, but …").
    pub held: Option<String>,
    /// When to look again (a guard that passes with time).
    pub retry_at: Option<DateTime<Utc>>,
    /// The decision it made.
    pub decision_id: Option<i64>,
    /// When.
    pub evaluated_at: DateTime<Utc>,
}

/// An evaluation to record.
#[derive(Clone, Debug)]
pub struct NewEvaluation<'a> {
    /// The rule, at the version judged with.
    pub rule: &'a Rule,
    /// The draft.
    pub item_id: i64,
    /// The version judged.
    pub version: &'a str,
    /// Its digest.
    pub digest: &'a str,
    /// approve, hold, reject or no_match.
    pub verdict: &'a str,
    /// Why it did not act.
    pub held: Option<String>,
    /// When to look again.
    pub retry_at: Option<DateTime<Utc>>,
    /// The decision it made.
    pub decision_id: Option<i64>,
}

impl Store {
    /// Record what `new.rule` made of a version; a second look at the same version (after a
    /// guard that passes with time) updates the row.
    pub async fn record_evaluation(&self, new: &NewEvaluation<'_>) -> Result<RuleEvaluation> {
        Ok(sqlx::query_as(
            "INSERT INTO rule_evaluations (rule_id, rule_version, item_id, version, digest,
                 verdict, armed, held, retry_at, decision_id, evaluated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (rule_id, rule_version, item_id, version) DO UPDATE SET
                 armed = excluded.armed, held = excluded.held, retry_at = excluded.retry_at,
                 decision_id = COALESCE(excluded.decision_id, decision_id),
                 evaluated_at = excluded.evaluated_at
             RETURNING *",
        )
        .bind(new.rule.id)
        .bind(new.rule.version)
        .bind(new.item_id)
        .bind(new.version)
        .bind(new.digest)
        .bind(new.verdict)
        .bind(new.rule.mode == RuleMode::Armed)
        .bind(&new.held)
        .bind(new.retry_at.map(format_time))
        .bind(new.decision_id)
        .bind(format_time(Utc::now()))
        .fetch_one(self.pool())
        .await?)
    }

    /// Every evaluation of `item_id`, oldest first.
    pub async fn evaluations_for_item(&self, item_id: i64) -> Result<Vec<RuleEvaluation>> {
        self.rows_of_item("rule_evaluations", item_id).await
    }

    /// Every evaluation by `rule_id` (any version), oldest first.
    pub async fn evaluations_of_rule(&self, rule_id: i64) -> Result<Vec<RuleEvaluation>> {
        Ok(
            sqlx::query_as("SELECT * FROM rule_evaluations WHERE rule_id = ? ORDER BY id")
                .bind(rule_id)
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// The drafts the rules have to look at: waiting for the owner, no decision on its way, a
    /// current version the owner has not taken back or refused (final for every rule, whatever
    /// rules are added or changed later), and one that some rule (at its current version) has
    /// not judged yet, or one an armed rule held for a reason that passes with time, now passed.
    pub async fn items_for_rules(&self, now: DateTime<Utc>) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT i.id FROM review_items i
             WHERE i.state IN ('pending', 'awaiting_check')
               AND NOT EXISTS (SELECT 1 FROM owner_vetoes v
                               WHERE v.item_id = i.id AND v.version = i.version)
               AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = i.id
                               AND d.state IN ('queued', 'dispatching', 'uncertain'))
               AND (EXISTS (SELECT 1 FROM rules r WHERE r.removed_at IS NULL
                            AND NOT EXISTS (SELECT 1 FROM rule_evaluations e
                                WHERE e.rule_id = r.id AND e.rule_version = r.version
                                  AND e.item_id = i.id AND e.version = i.version))
                    OR EXISTS (SELECT 1 FROM rule_evaluations e JOIN rules r ON r.id = e.rule_id
                            WHERE r.removed_at IS NULL AND r.mode = 'armed'
                              AND e.rule_version = r.version AND e.item_id = i.id
                              AND e.version = i.version AND e.retry_at IS NOT NULL
                              AND e.retry_at <= ?))
             ORDER BY i.id",
        )
        .bind(format_time(now))
        .fetch_all(self.pool())
        .await?)
    }

    /// Look again now at every draft held for a reason that passes with time.
    pub async fn retry_held_now(&self) -> Result<()> {
        sqlx::query("UPDATE rule_evaluations SET retry_at = ? WHERE retry_at IS NOT NULL")
            .bind(format_time(Utc::now()))
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Let the rules look again at `item_id`, whose rule decision Hold everything took back.
    pub async fn retry_rule_decision(&self, item_id: i64) -> Result<()> {
        sqlx::query(
            "UPDATE rule_evaluations SET retry_at = ?, decision_id = NULL
             WHERE item_id = ? AND decision_id IS NOT NULL",
        )
        .bind(format_time(Utc::now()))
        .bind(item_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// How many decisions `rule_id` (any version) made since `since`, undone ones left out.
    pub async fn rule_decisions_since(&self, rule_id: i64, since: DateTime<Utc>) -> Result<u32> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM decisions
             WHERE decided_by LIKE ? AND created_at >= ? AND state != 'cancelled'",
        )
        .bind(format!("rule:{rule_id}@%"))
        .bind(format_time(since))
        .fetch_one(self.pool())
        .await?)
    }

    /// The live decisions some rule made (queued, not yet claimed): what Hold everything takes
    /// back.
    pub async fn queued_rule_decisions(&self) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT item_id FROM decisions WHERE state = 'queued' AND decided_by LIKE 'rule:%'",
        )
        .fetch_all(self.pool())
        .await?)
    }
}
