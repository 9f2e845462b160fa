//! The owner's decisions through the running app: each is made by core's `decide` and then
//! announced at once with the rows it changed.

use super::*;

impl RunningApp {
    /// Approve the version the owner was shown ([`crate::decide::approve`]) and tell the UI
    /// at once, with the item's row as it is now.
    pub async fn approve(
        &self,
        shown: &Shown,
        actor: &str,
        confirmation: decide::Confirmation,
    ) -> Result<Decision> {
        let decision = decide::approve(
            &self.store,
            shown,
            UndoWindow::FromSettings,
            actor,
            confirmation,
        )
        .await?;
        self.decided(shown.id, ChangeCause::Decided).await;
        Ok(decision)
    }

    /// Reject the version the owner was shown ([`crate::decide::reject`]), telling the UI.
    pub async fn reject(&self, shown: &Shown, reason: &str, actor: &str) -> Result<Decision> {
        let decision = decide::reject(&self.store, shown, reason, actor).await?;
        self.decided(shown.id, ChangeCause::Decided).await;
        Ok(decision)
    }

    /// Reject the drafts `listed`, each at the version its row showed, with one reason
    /// ([`crate::decide::reject_all_listed`]), telling the UI about those decided.
    pub async fn reject_all_listed(
        &self,
        listed: &[decide::Listed],
        reason: &str,
        actor: &str,
    ) -> Result<decide::BulkOutcome> {
        let outcome = decide::reject_all_listed(&self.store, listed, reason, actor).await?;
        self.decided_all(&outcome).await;
        Ok(outcome)
    }

    /// Approve those of `ids` whose current version `actor` displayed, each at that version
    /// ([`crate::decide::approve_all_displayed`]), telling the UI about those decided.
    pub async fn approve_all_displayed(
        &self,
        ids: &[i64],
        actor: &str,
    ) -> Result<decide::BulkOutcome> {
        let outcome =
            decide::approve_all_displayed(&self.store, ids, UndoWindow::FromSettings, actor)
                .await?;
        self.decided_all(&outcome).await;
        Ok(outcome)
    }

    /// Take back the decision on `item_id` ([`crate::decide::undo`]), telling the UI.
    pub async fn undo(&self, item_id: i64, actor: &str) -> Result<Decision> {
        let decision = decide::undo(&self.store, item_id, actor).await?;
        self.decided(item_id, ChangeCause::Undone).await;
        Ok(decision)
    }

    /// Save the owner's edit of the version shown ([`crate::edit::save_edit`]), telling the UI;
    /// the new version, which still has to be approved.
    pub async fn save_edit(
        &self,
        shown: &Shown,
        subject: &str,
        text: &str,
        actor: &str,
    ) -> Result<Shown> {
        let edited =
            crate::edit::save_edit(&self.store, &self.services, shown, subject, text, actor)
                .await?;
        self.decided(shown.id, ChangeCause::Edited).await;
        Ok(edited)
    }

    async fn decided(&self, item_id: i64, cause: ChangeCause) {
        emit_items(&self.store, &self.on_event, cause, vec![item_id]).await;
    }

    /// One event for every item a bulk decision decided (none when it decided nothing: the
    /// skipped ones did not change).
    async fn decided_all(&self, outcome: &decide::BulkOutcome) {
        if outcome.decided.is_empty() {
            return;
        }
        let ids = outcome.decided.iter().map(|d| d.item_id).collect();
        emit_items(&self.store, &self.on_event, ChangeCause::Decided, ids).await;
    }
}
