//! The decision outbox: decisions are written here, with the audit row, before anything goes on
//! the wire; a dispatcher claims them one at a time in a write transaction.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::{format_time, Found, Store};
use crate::domain::{DecisionKind, DecisionState};
use crate::error::Result;

/// A decision in the outbox (a row of `decisions`; times are stored as RFC 3339 text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Row id.
    pub id: i64,
    /// The item decided on.
    pub item_id: i64,
    /// Approve or reject.
    pub kind: DecisionKind,
    /// The owner's reason (reject), or note.
    pub reason: Option<String>,
    /// The version the owner reviewed.
    pub version: String,
    /// sha256 of the reviewed bytes.
    pub digest: String,
    /// Where it is.
    pub state: DecisionState,
    /// When the owner decided.
    pub created_at: DateTime<Utc>,
    /// End of the undo window.
    pub due_at: DateTime<Utc>,
    /// Dispatch attempts so far.
    pub attempts: u32,
    /// Not before this time (backoff after a retryable failure).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Which dispatcher holds it.
    pub claimed_by: Option<String>,
    /// The `Message-ID` the send carries, so it can be found in SENT again.
    pub rfc822_message_id: Option<String>,
    /// The last word from the service.
    pub outcome_detail: Option<String>,
    /// When it reached a final state.
    pub finished_at: Option<DateTime<Utc>>,
    /// sha256 of the bytes the send carried (Gmail approvals), recorded before the request.
    pub sent_digest: Option<String>,
    /// The header added to the reviewed bytes before sending (`Message-ID`), if any: the sent
    /// bytes are the reviewed ones with this header in front.
    pub sent_header_added: Option<String>,
    /// Gmail's id of the sent message (Gmail approvals): from the `drafts.send` answer, or the
    /// message a send whose answer was lost (or a draft sent elsewhere) was found as in Sent.
    pub gmail_message_id: Option<String>,
    /// What the service said when it took the decision, in its own words (muster's `note`).
    pub service_note: Option<String>,
    /// Who decided: "owner via desktop", "owner via cli", or `rule:<id>@<version>`.
    pub decided_by: Option<String>,
}

/// A decision to write.
#[derive(Clone, Debug)]
pub struct NewDecision {
    /// The item.
    pub item_id: i64,
    /// Approve or reject.
    pub kind: DecisionKind,
    /// Reason (required for reject by the caller's rules).
    pub reason: Option<String>,
    /// The version the owner reviewed.
    pub version: String,
    /// sha256 of the reviewed bytes.
    pub digest: String,
    /// How long the owner can undo.
    pub undo_window: Duration,
    /// Who decided (e.g. "owner via cli").
    pub actor: String,
    /// The cautions (warnings, differing alternatives) the owner confirmed approving despite,
    /// one sentence each: the audit says "approved despite: …".
    pub despite: Vec<String>,
}

/// What [`Store::claim_next_due`] took out of the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Claimed: this dispatcher carries it out.
    Claimed(Decision),
    /// Its item moved on while it waited (a sync mirrored the service settling it): ended
    /// without going on the wire, "already so" or a conflict the owner is told about.
    Settled(Decision),
}

impl std::ops::Deref for Claim {
    type Target = Decision;

    /// The decision, claimed or settled.
    fn deref(&self) -> &Decision {
        match self {
            Claim::Claimed(d) | Claim::Settled(d) => d,
        }
    }
}

/// Which decisions to list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecisionFilter {
    /// Queued, dispatching or uncertain.
    #[default]
    Live,
    /// Everything.
    All,
}

mod claim;
mod enqueue;
mod finish;
mod undo;
mod veto;

impl Store {
    /// Decisions whose outcome is unknown, oldest first.
    pub async fn uncertain_decisions(&self) -> Result<Vec<Decision>> {
        Ok(
            sqlx::query_as("SELECT * FROM decisions WHERE state = 'uncertain' ORDER BY id")
                .fetch_all(self.pool())
                .await?,
        )
    }

    /// Uncertain decisions whose next look-up is due at `now`, oldest first.
    pub async fn due_uncertain_decisions(&self, now: DateTime<Utc>) -> Result<Vec<Decision>> {
        Ok(sqlx::query_as(
            "SELECT * FROM decisions WHERE state = 'uncertain'
                AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY id",
        )
        .bind(format_time(now))
        .fetch_all(self.pool())
        .await?)
    }

    /// One decision.
    pub async fn get_decision(&self, id: i64) -> Result<Decision> {
        sqlx::query_as("SELECT * FROM decisions WHERE id = ?")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .found("decision", id)
    }

    /// The outbox, oldest first.
    pub async fn list_decisions(&self, filter: DecisionFilter) -> Result<Vec<Decision>> {
        let sql = match filter {
            DecisionFilter::Live => {
                "SELECT * FROM decisions WHERE state IN ('queued', 'dispatching', 'uncertain') ORDER BY id"
            }
            DecisionFilter::All => "SELECT * FROM decisions ORDER BY id",
        };
        Ok(sqlx::query_as(sql).fetch_all(self.pool()).await?)
    }

    /// Every decision made on an item, oldest first.
    pub async fn decisions_for_item(&self, item_id: i64) -> Result<Vec<Decision>> {
        self.rows_of_item("decisions", item_id).await
    }
}
