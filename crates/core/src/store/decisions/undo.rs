//! Undo and take back: a `queued` decision cancelled before anything of it leaves.

use chrono::{DateTime, Utc};

use super::veto::veto_in;
use super::Decision;
use crate::domain::ItemEvent;
use crate::error::{Error, Result};
use crate::store::audit::{append_audit_in, NewAuditEntry};
use crate::store::items::apply_item_event_in;
use crate::store::{format_time, Store};

impl Store {
    /// Undo the live decision of an item while it is still `queued` (nothing of it has left),
    /// inside its undo window or past it. The read and the write are one write transaction, as
    /// a dispatcher's claim is: an undo racing a claim either cancels before the claim (nothing
    /// is sent) or finds the decision claimed and is refused "already being sent".
    ///
    /// This is the owner's Undo: it is final for every rule, present and future, for the
    /// version decided (a new version from the agent is judged anew).
    pub async fn cancel_decision(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
    ) -> Result<Decision> {
        self.cancel_decision_in(item_id, now, actor, true).await
    }

    /// Take back the live decision of an item as [`Store::cancel_decision`] does, but not as
    /// the owner's verdict on the version: Hold everything takes back rule decisions this way,
    /// and the rules look at those drafts again once it is off.
    pub async fn take_back_decision(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
    ) -> Result<Decision> {
        self.cancel_decision_in(item_id, now, actor, false).await
    }

    async fn cancel_decision_in(
        &self,
        item_id: i64,
        now: DateTime<Utc>,
        actor: &str,
        final_for_rules: bool,
    ) -> Result<Decision> {
        let mut tx = self.write_tx().await?;
        let action = format!(
            "undo the decision on {}",
            crate::store::draft_words::draft_words_in(&mut tx, item_id).await?
        );
        let decision: Option<Decision> = sqlx::query_as(
            "SELECT * FROM decisions WHERE item_id = ? AND state IN ('queued', 'dispatching', 'uncertain')",
        )
        .bind(item_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(decision) = decision else {
            return Err(Error::refused(action, crate::actions::NOTHING_TO_UNDO));
        };
        crate::actions::undoable(decision.state).map_err(|why| Error::refused(&action, why))?;
        let state = decision.state.cancel()?;
        sqlx::query("UPDATE decisions SET state = ?, finished_at = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(format_time(now))
            .bind(decision.id)
            .execute(&mut *tx)
            .await?;
        let check_state: Option<String> =
            sqlx::query_scalar("SELECT check_state FROM review_items WHERE id = ?")
                .bind(item_id)
                .fetch_one(&mut *tx)
                .await?;
        let awaiting_check = check_state.as_deref() == Some("awaiting");
        apply_item_event_in(&mut tx, item_id, ItemEvent::Undone { awaiting_check }, None).await?;
        if final_for_rules {
            veto_in(
                &mut tx,
                item_id,
                &decision.version,
                &decision.digest,
                "undo",
                actor,
            )
            .await?;
        }
        append_audit_in(
            &mut tx,
            &self.keys,
            &NewAuditEntry {
                actor: actor.to_string(),
                item_id: Some(item_id),
                decision_id: Some(decision.id),
                action: "undo".into(),
                version: Some(decision.version.clone()),
                digest: Some(decision.digest.clone()),
                outcome: Some("cancelled".into()),
                detail: None,
                view_id: None,
            },
        )
        .await?;
        tx.commit().await?;
        Ok(Decision { state, ..decision })
    }
}
