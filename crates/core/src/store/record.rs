//! What a sync saw, written to the mirror: the item created or updated and its version kept
//! (every version ever seen), in one transaction.

use chrono::Utc;
use sqlx::Row;

use super::items::{ObservedDraft, RecordOutcome};
use super::{format_time, Store};
use crate::domain::ItemState;
use crate::error::Result;

impl Store {
    /// Record what a sync saw: create the item or update it, storing the version if it is new
    /// (every version ever seen is kept), in one transaction.
    pub async fn record_draft(&self, draft: &ObservedDraft) -> Result<RecordOutcome> {
        let now = format_time(Utc::now());
        let mut tx = self.write_tx().await?;
        let existing = sqlx::query(
            "SELECT id, state FROM review_items WHERE account_id = ? AND external_id = ?",
        )
        .bind(&draft.account_id)
        .bind(&draft.external_id)
        .fetch_optional(&mut *tx)
        .await?;
        let (item_id, created, previous_state, state) = match existing {
            Some(row) => {
                let id: i64 = row.try_get("id")?;
                let previous: ItemState = row.try_get("state")?;
                let state = if draft.source == crate::domain::Source::Muster {
                    previous.merge_observed_muster(draft.observed_state)
                } else {
                    previous.merge_observed(draft.observed_state)
                };
                let query = sqlx::query(
                    "UPDATE review_items SET state = ?, version = ?, thread_id = ?, subject = ?,
                        from_addr = ?, recipients = ?, snippet = ?, route_id = ?, plugin = ?,
                        session = ?, message_ref = ?, check_state = ?, check_detail = ?,
                        redraft_of = ?, redraft_number = ?, answers_json = ?,
                        state_reason = COALESCE(?, state_reason), undecidable_reason = ?,
                        updated_at = ?
                     WHERE id = ?",
                )
                .bind(state.as_str());
                bind_observed(query, draft)
                    .bind(&now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                (id, false, Some(previous), state)
            }
            None => {
                let query = sqlx::query(
                    "INSERT INTO review_items (account_id, source, external_id, state, version,
                        thread_id, subject, from_addr, recipients, snippet, route_id, plugin,
                        session, message_ref, check_state, check_detail, redraft_of,
                        redraft_number, answers_json, state_reason, undecidable_reason,
                        created_at, updated_at)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                     RETURNING id",
                )
                .bind(&draft.account_id)
                .bind(draft.source.as_str())
                .bind(&draft.external_id)
                .bind(draft.observed_state.as_str());
                let row = bind_observed(query, draft)
                    .bind(&now)
                    .bind(&now)
                    .fetch_one(&mut *tx)
                    .await?;
                (row.try_get("id")?, true, None, draft.observed_state)
            }
        };
        let inserted = sqlx::query(
            "INSERT INTO draft_versions
                 (item_id, version, content_kind, content, sha256, first_seen_at, gmail_internal_date)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (item_id, version) DO NOTHING
             RETURNING id",
        )
        .bind(item_id)
        .bind(&draft.version)
        .bind(draft.content.kind())
        .bind(draft.content.bytes())
        .bind(draft.content.digest())
        .bind(&now)
        .bind(draft.gmail_internal_date)
        .fetch_optional(&mut *tx)
        .await?;
        let new_version = inserted.is_some();
        // The same muster stamp with other text: ON CONFLICT kept the first text, which is then
        // no longer necessarily what muster holds.
        if !new_version && draft.source == crate::domain::Source::Muster {
            super::stamps::note_restamped_in(
                &mut tx,
                &self.keys,
                item_id,
                &draft.version,
                &draft.content.digest(),
            )
            .await?;
        }
        // The service settled an item whose decision's outcome is still being looked up: the
        // answer is known now, so the look-up is due at the next pass instead of after its
        // backoff (and the decisions queued behind it go out sooner).
        if state.is_final() && previous_state != Some(state) {
            sqlx::query(
                "UPDATE decisions SET next_attempt_at = NULL
                 WHERE item_id = ? AND state = 'uncertain'",
            )
            .bind(item_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(RecordOutcome {
            item_id,
            created,
            new_version,
            previous_state,
            state,
        })
    }
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

/// Binds what a sync observed of a draft, in the order both statements above name the columns
/// (`version` … `undecidable_reason`).
fn bind_observed<'q>(query: Query<'q>, draft: &'q ObservedDraft) -> Query<'q> {
    query
        .bind(&draft.version)
        .bind(&draft.thread_id)
        .bind(&draft.subject)
        .bind(&draft.from_addr)
        .bind(&draft.recipients)
        .bind(&draft.snippet)
        .bind(&draft.muster.route_id)
        .bind(&draft.muster.plugin)
        .bind(&draft.muster.session)
        .bind(&draft.muster.message_ref)
        .bind(&draft.muster.check_state)
        .bind(&draft.muster.check_detail)
        .bind(&draft.muster.redraft_of)
        .bind(draft.muster.redraft_number)
        .bind(&draft.answers_json)
        .bind(&draft.state_reason)
        .bind(&draft.muster.undecidable_reason)
}
