//! The owner API's reads and decisions on the store (`docs/muster.md`, `/api/owner/...`).

use super::*;

impl Store {
    pub(crate) fn list_drafts(&self, state: &str) -> ApiResult<Vec<Value>> {
        const STATES: [&str; 6] = ["pending", "approved", "rejected", "sent", "failed", "all"];
        if !STATES.contains(&state) {
            return Err(ApiError::new(400, format!("unknown state {state:?}")));
        }
        Ok(self
            .drafts
            .values()
            .filter(|d| !self.deleted_drafts.contains(&d.id))
            .filter(|d| state == "all" || d.state == state)
            .map(|d| self.draft_json(d))
            .collect())
    }

    pub(crate) fn get_draft(&self, id: &str) -> ApiResult<Value> {
        let draft = self.find_draft(id)?;
        Ok(self.draft_json(draft))
    }

    pub(crate) fn list_routes(&self, message_id: &str) -> Vec<Value> {
        // Numbers stand for `m-<n>` (see `message_ref`).
        let key = if message_id.parse::<u64>().is_ok() {
            format!("m-{message_id}")
        } else {
            message_id.to_owned()
        };
        self.routes
            .values()
            .filter(|r| r.message_id == key)
            .map(|r| self.route_json(r))
            .collect()
    }

    pub(crate) fn list_messages(&self, state: Option<&str>) -> Vec<Value> {
        self.messages
            .values()
            .filter(|m| matches!(state, None | Some("all")) || Some(m.state.as_str()) == state)
            .map(|m| self.message_json(m))
            .collect()
    }

    /// `POST /api/plugin/drafts/{id}/decide`. The order of the checks matters: a decision that
    /// was already made answers `already_decided` even though `updatedAt` moved on, so that a
    /// caller who lost the first answer can tell its own decision landed.
    pub(crate) fn decide(
        &mut self,
        id: &str,
        decision: OwnerDecision,
        expected_updated_at: &str,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(id)?.clone();
        let approving = decision == OwnerDecision::Approve;
        let refusal = if approving && draft.check_state == "refused" {
            Some(Refusal::CheckRefused)
        } else if draft.state != "pending" {
            Some(Refusal::AlreadyDecided)
        } else if draft.updated_at != expected_updated_at {
            Some(Refusal::Stale)
        } else if approving && draft.check_state == "awaiting" {
            Some(Refusal::DraftUnchecked)
        } else {
            None
        };
        if let Some(refusal) = refusal {
            return Err(refusal.error(self.draft_json(&draft)));
        }
        let stamp = self.stamp();
        let draft = self.drafts.get_mut(&draft.id).expect("found above");
        draft.state = match decision {
            OwnerDecision::Approve => "approved",
            OwnerDecision::Reject => "rejected",
        };
        draft.updated_at = stamp;
        let id = draft.id;
        self.emit(Change::Draft(id.to_string()));
        Ok(self.draft_json(&self.drafts[&id]))
    }

    /// muster deletes a draft (its retention, or the plugin's removal): it is gone from every
    /// owner route. Its id is never handed out again.
    pub(crate) fn delete_draft(&mut self, id: &str) -> ApiResult<()> {
        let id = self.find_draft(id)?.id;
        self.deleted_drafts.insert(id);
        Ok(())
    }

    pub(super) fn find_draft(&self, id: &str) -> ApiResult<&Draft> {
        id.parse::<u64>()
            .ok()
            .filter(|id| !self.deleted_drafts.contains(id))
            .and_then(|id| self.drafts.get(&id))
            .ok_or_else(|| ApiError::new(404, "draft not found"))
    }

    pub(super) fn find_route(&self, id: &str) -> ApiResult<&Route> {
        id.parse::<u64>()
            .ok()
            .and_then(|id| self.routes.get(&id))
            .ok_or_else(|| ApiError::new(404, "route not found"))
    }
}

/// Why `decide` refuses a decision: the coded answers of the contract.
#[derive(Clone, Copy)]
enum Refusal {
    CheckRefused,
    AlreadyDecided,
    Stale,
    DraftUnchecked,
}

impl Refusal {
    /// The answer muster gives; `draft` goes with the refusals that are about the draft having
    /// moved on, so the caller sees where it stands.
    fn error(self, draft: Value) -> ApiError {
        let (status, code, message) = match self {
            Refusal::CheckRefused => (
                409,
                "check_refused",
                "the plugin refused this draft; it can never be approved",
            ),
            Refusal::AlreadyDecided => (409, "already_decided", "this draft was already decided"),
            Refusal::Stale => (412, "stale", "the draft changed since it was reviewed"),
            Refusal::DraftUnchecked => (
                409,
                "draft_unchecked",
                "the plugin has not checked this draft yet; it can only be rejected",
            ),
        };
        let draft = matches!(self, Refusal::AlreadyDecided | Refusal::Stale).then_some(draft);
        ApiError::coded(status, code, message, draft)
    }
}
