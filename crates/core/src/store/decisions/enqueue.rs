//! Enqueueing: an owner's or a rule's decision checked against the item and written, with its
//! audit row, in one transaction.

use chrono::Utc;
use sqlx::Row;

use super::veto::{veto_in, vetoed_in, RULES_VETOED};
use super::{Decision, NewDecision};
use crate::decide::Shown;
use crate::domain::{DecisionKind, ItemEvent, ItemState};
use crate::error::{Error, Result};
use crate::store::audit::{append_audit_in, NewAuditEntry};
use crate::store::items::apply_item_event_in;
use crate::store::view_of_in;
use crate::store::Found;
use crate::store::{format_time, Store};

impl Store {
    /// Write a decision and its audit row in one transaction, after checking that the item can
    /// be decided and that the owner reviewed its current version.
    pub async fn enqueue_decision(&self, new: NewDecision) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let action = format!(
            "{} {}",
            new.kind.as_str(),
            crate::store::draft_words::draft_words_in(&mut tx, new.item_id).await?
        );
        let row = sqlx::query("SELECT state, version FROM review_items WHERE id = ?")
            .bind(new.item_id)
            .fetch_optional(&mut *tx)
            .await?
            .found("item", new.item_id)?;
        let state: ItemState = row.try_get("state")?;
        let current_version: String = row.try_get("version")?;
        state
            .check_decidable(new.kind)
            .map_err(|why| Error::refused(&action, why))?;
        let digest: Option<String> = sqlx::query_scalar(
            "SELECT sha256 FROM draft_versions WHERE item_id = ? AND version = ?",
        )
        .bind(new.item_id)
        .bind(&current_version)
        .fetch_optional(&mut *tx)
        .await?;
        // Checked in the same transaction that writes the decision, so a sync that lands a new
        // version between the owner's look and this write cannot slip in.
        if current_version != new.version || digest.as_deref() != Some(new.digest.as_str()) {
            return Err(Error::ChangedSinceShown {
                action,
                shown: new.version,
                current: current_version,
            });
        }
        crate::store::stamps::refuse_restamped_in(&mut tx, new.item_id, &new.version, &action)
            .await?;
        let by_rule = crate::store::rule_of_actor(&new.actor).is_some();
        // The owner took this version back (Undo) or refused it: no rule, present or future,
        // decides it again. Checked here, in the writing transaction, whatever judged it.
        if by_rule && vetoed_in(&mut tx, new.item_id, &new.version).await? {
            return Err(Error::refused(&action, RULES_VETOED));
        }
        // A muster draft Countersign could not fully read: what it would decide is unknown.
        let undecidable: Option<Option<String>> =
            sqlx::query_scalar("SELECT undecidable_reason FROM review_items WHERE id = ?")
                .bind(new.item_id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(why) = undecidable.flatten() {
            return Err(Error::refused(action, why));
        }
        // An approval binds only to a version its actor was shown (rejections send nothing
        // under the owner's name, and may be made in bulk on what the queue lists).
        let view_id = match new.kind {
            DecisionKind::Approve => Some(
                view_of_in(
                    &mut tx,
                    &action,
                    &Shown {
                        id: new.item_id,
                        version: new.version.clone(),
                        digest: new.digest.clone(),
                    },
                    &new.actor,
                )
                .await?,
            ),
            DecisionKind::Reject => None,
        };
        let now = Utc::now();
        let due = now + new.undo_window;
        let decision: Decision = sqlx::query_as(
            "INSERT INTO decisions
                (item_id, kind, reason, version, digest, state, created_at, due_at, decided_by)
             VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?) RETURNING *",
        )
        .bind(new.item_id)
        .bind(new.kind.as_str())
        .bind(&new.reason)
        .bind(&new.version)
        .bind(&new.digest)
        .bind(format_time(now))
        .bind(format_time(due))
        .bind(&new.actor)
        .fetch_one(&mut *tx)
        .await?;
        apply_item_event_in(&mut tx, new.item_id, ItemEvent::Decided(new.kind), None).await?;
        if new.kind == DecisionKind::Reject && !by_rule {
            veto_in(
                &mut tx,
                new.item_id,
                &new.version,
                &new.digest,
                "reject",
                &new.actor,
            )
            .await?;
        }
        let audit_id = append_audit_in(
            &mut tx,
            &self.keys,
            &NewAuditEntry {
                actor: new.actor.clone(),
                item_id: Some(new.item_id),
                decision_id: Some(decision.id),
                action: new.kind.as_str().to_string(),
                version: Some(new.version.clone()),
                digest: Some(new.digest.clone()),
                outcome: Some("queued".into()),
                detail: match new.despite.as_slice() {
                    [] => new.reason.clone(),
                    cautions => Some(format!("approved despite: {}", cautions.join(" "))),
                },
                view_id,
            },
        )
        .await?;
        crate::store::decision_seal::seal_decision_in(
            &mut tx,
            &self.keys,
            decision.id,
            audit_id,
            view_id,
        )
        .await?;
        tx.commit().await?;
        Ok(decision)
    }
}
