//! muster routes: a message's trips to sessions, kept so the owner sees the whole story
//! (refused → handed back → redrafted → approved).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{format_time, Store};
use crate::domain::RouteState;
use crate::error::Result;

/// One route as mirrored (a row of `routes`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RouteRecord {
    /// The muster account.
    pub account_id: String,
    /// muster's route id.
    pub route_id: String,
    /// The message it carries.
    pub message_id: String,
    /// The session it went to.
    pub session: String,
    /// Its state.
    pub state: RouteState,
    /// muster's words on how it got there, e.g. "redraft of 7 to inbox-chat".
    pub routed_via: Option<String>,
    /// The route it redrafts.
    pub redraft_of: Option<String>,
    /// How many redrafts this message has had, counting this one.
    pub redraft_count: u32,
    /// Why it failed.
    pub reason: Option<String>,
    /// Created at muster.
    pub created_at: DateTime<Utc>,
    /// Last change at muster.
    pub updated_at: DateTime<Utc>,
}

impl Store {
    /// Whether a muster reply is the chief's: filed on no route (muster's `reply_draft`), or on
    /// a route that fell back to the chief after the redraft bound. One reading for the rules,
    /// the history and the review, so "chief-filed" means the same everywhere.
    pub async fn chief_filed(&self, item: &super::Item) -> Result<bool> {
        if item.summary.source != crate::domain::Source::Muster {
            return Ok(false);
        }
        let Some(route) = item.muster.route_id.as_deref() else {
            return Ok(true);
        };
        let state: Option<RouteState> =
            sqlx::query_scalar("SELECT state FROM routes WHERE account_id = ? AND route_id = ?")
                .bind(&item.summary.account_id)
                .bind(route)
                .fetch_optional(self.pool())
                .await?;
        Ok(state == Some(RouteState::Fallback))
    }

    /// Insert or update a route.
    pub async fn upsert_route(&self, route: &RouteRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO routes (account_id, route_id, message_id, session, state, routed_via,
                redraft_of, redraft_count, reason, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (account_id, route_id) DO UPDATE SET
                message_id = excluded.message_id, session = excluded.session,
                state = excluded.state, routed_via = excluded.routed_via,
                redraft_of = excluded.redraft_of, redraft_count = excluded.redraft_count,
                reason = excluded.reason, updated_at = excluded.updated_at",
        )
        .bind(&route.account_id)
        .bind(&route.route_id)
        .bind(&route.message_id)
        .bind(&route.session)
        .bind(route.state.as_str())
        .bind(&route.routed_via)
        .bind(&route.redraft_of)
        .bind(route.redraft_count)
        .bind(&route.reason)
        .bind(format_time(route.created_at))
        .bind(format_time(route.updated_at))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The message a mirrored route belongs to.
    pub async fn route_message(&self, account_id: &str, route_id: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(
            "SELECT message_id FROM routes WHERE account_id = ? AND route_id = ?",
        )
        .bind(account_id)
        .bind(route_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Every route of one message, oldest first: the chain the owner reads.
    pub async fn routes_for_message(
        &self,
        account_id: &str,
        message_id: &str,
    ) -> Result<Vec<RouteRecord>> {
        Ok(sqlx::query_as(
            "SELECT * FROM routes WHERE account_id = ? AND message_id = ?
             ORDER BY created_at, CAST(route_id AS INTEGER), route_id",
        )
        .bind(account_id)
        .bind(message_id)
        .fetch_all(self.pool())
        .await?)
    }
}
