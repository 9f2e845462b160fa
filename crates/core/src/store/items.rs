//! Review items and every version of them ever seen.

use super::Found;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::{FromRow, Row};

use super::{format_time, Store};
use crate::domain::{DecisionKind, DecisionState, ItemEvent, ItemState, Source};
use crate::error::Result;

/// The bytes of one version: the raw RFC 5322 message (Gmail) or the reply text (muster).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DraftContent {
    /// Raw RFC 5322 bytes.
    Raw(Vec<u8>),
    /// Plain reply text.
    Text(String),
}

impl DraftContent {
    /// The bytes the digest is computed over.
    pub fn bytes(&self) -> &[u8] {
        match self {
            DraftContent::Raw(raw) => raw,
            DraftContent::Text(text) => text.as_bytes(),
        }
    }

    /// Hex sha256 of the bytes: what a decision records as "what the owner saw".
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.bytes()))
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            DraftContent::Raw(_) => "raw",
            DraftContent::Text(_) => "text",
        }
    }
}

/// Fields only muster items have (columns of `review_items`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct MusterFields {
    /// The route the reply was written on.
    pub route_id: Option<String>,
    /// The plugin that will send it.
    pub plugin: Option<String>,
    /// The session that wrote it.
    pub session: Option<String>,
    /// muster's message id (the message answered).
    pub message_ref: Option<String>,
    /// `none`, `awaiting`, `sendable` or `refused`.
    pub check_state: Option<String>,
    /// The plugin's words about its check.
    pub check_detail: Option<String>,
    /// The draft this one redrafts.
    pub redraft_of: Option<String>,
    /// 0 for a first draft, 1 and 2 for redrafts.
    pub redraft_number: u32,
    /// Why no decision may bind to the draft as muster sends it now (a state Countersign does
    /// not know, a record it cannot read); `None` for a draft read normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecidable_reason: Option<String>,
}

/// A draft as a sync saw it at the service.
#[derive(Clone, Debug)]
pub struct ObservedDraft {
    /// The account it belongs to.
    pub account_id: String,
    /// Gmail or muster.
    pub source: Source,
    /// Gmail draft id or muster draft id.
    pub external_id: String,
    /// Gmail message id, or muster `updatedAt`.
    pub version: String,
    /// Its bytes.
    pub content: DraftContent,
    /// What the service says its state is.
    pub observed_state: ItemState,
    /// Gmail's `internalDate` of this version (epoch ms, Google's clock): a send of it is dated
    /// after it, whatever this computer's clock says. `None` for muster.
    pub gmail_internal_date: Option<i64>,
    /// Gmail thread id.
    pub thread_id: Option<String>,
    /// Subject line (muster: the subject of what it answers).
    pub subject: String,
    /// Sender as shown.
    pub from_addr: String,
    /// Recipients as shown, comma separated.
    pub recipients: String,
    /// The first words.
    pub snippet: String,
    /// muster-only fields.
    pub muster: MusterFields,
    /// JSON of the message it answers.
    pub answers_json: Option<String>,
    /// The service's reason for a refusal, when there is one.
    pub state_reason: Option<String>,
}

/// What [`Store::record_draft`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOutcome {
    /// The item's id in the mirror.
    pub item_id: i64,
    /// The item was new.
    pub created: bool,
    /// A version not seen before was stored.
    pub new_version: bool,
    /// The state before (None when created).
    pub previous_state: Option<ItemState>,
    /// The state now.
    pub state: ItemState,
}

/// The live decision of an item, as the queue shows it ("sending in 7 s").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LiveDecision {
    /// Decision id.
    pub id: i64,
    /// Approve or reject.
    pub kind: DecisionKind,
    /// Queued, dispatching or uncertain.
    pub state: DecisionState,
    /// End of the undo window.
    pub due_at: DateTime<Utc>,
    /// The last thing that went wrong, e.g. "offline".
    pub detail: Option<String>,
    /// The rule that made it, by name ("approved by rule R"); none when the owner did.
    #[serde(default)]
    pub by_rule: Option<String>,
}

/// One line of the queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ItemSummary {
    /// Mirror id (what `countersign show ID` takes).
    pub id: i64,
    /// Account id.
    pub account_id: String,
    /// Gmail or muster.
    pub source: Source,
    /// Gmail draft id / muster draft id.
    pub external_id: String,
    /// State.
    pub state: ItemState,
    /// Current version.
    pub version: String,
    /// Subject.
    pub subject: String,
    /// From.
    pub from: String,
    /// Recipients.
    pub recipients: String,
    /// First words.
    pub snippet: String,
    /// Why it failed or conflicts.
    pub state_reason: Option<String>,
    /// muster check state.
    pub check_state: Option<String>,
    /// muster redraft number.
    pub redraft_number: u32,
    /// The decision on its way, if any.
    pub decision: Option<LiveDecision>,
    /// Whether the account's service answered last time (a queued decision then says
    /// "queued — offline").
    pub account_online: bool,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// What the owner may do to it when it was read, with the sentence for what not
    /// ([`crate::actions::allowed_actions`]).
    #[serde(default)]
    pub actions: Vec<crate::actions::ActionState>,
    /// Gmail: the names of the user labels its current message carries (system labels such
    /// as DRAFT or INBOX left out), as the queue row shows them. The agent may write them.
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A whole item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The queue line.
    #[serde(flatten)]
    pub summary: ItemSummary,
    /// Gmail thread id.
    pub thread_id: Option<String>,
    /// muster fields.
    pub muster: MusterFields,
    /// JSON of the message it answers.
    pub answers_json: Option<String>,
    /// First seen.
    pub created_at: DateTime<Utc>,
}

/// Which items to list.
#[derive(Clone, Debug, Default)]
pub struct ItemFilter {
    /// Only these states (empty: all).
    pub states: Vec<ItemState>,
    /// Only this account.
    pub account_id: Option<String>,
    /// Only this source.
    pub source: Option<Source>,
}

pub(super) const SUMMARY_SELECT: &str =
    "SELECT i.*, d.id AS d_id, d.kind AS d_kind, d.state AS d_state,
       d.due_at AS d_due_at, d.outcome_detail AS d_detail,
       json_extract(r.definition, '$.name') AS d_rule,
       COALESCE(c.online, 1) AS account_online, v.restamped_sha256 AS restamped,
       (SELECT json_group_array(name) FROM (SELECT g.name FROM item_labels l
            JOIN gmail_labels g ON g.account_id = i.account_id AND g.label_id = l.label_id
            WHERE l.item_id = i.id AND g.kind = 'user' ORDER BY g.name COLLATE NOCASE))
         AS user_labels
  FROM review_items i
  LEFT JOIN decisions d ON d.item_id = i.id AND d.state IN ('queued', 'dispatching', 'uncertain')
  LEFT JOIN rules r ON d.decided_by LIKE 'rule:%'
       AND r.id = CAST(substr(d.decided_by, 6, instr(d.decided_by, '@') - 6) AS INTEGER)
  LEFT JOIN sync_cursors c ON c.account_id = i.account_id
  LEFT JOIN draft_versions v ON v.item_id = i.id AND v.version = i.version";

impl Store {
    /// Move an item through `event` (refusing illegal moves), recording `reason` when given.
    pub async fn apply_item_event(
        &self,
        item_id: i64,
        event: ItemEvent,
        reason: Option<&str>,
    ) -> Result<ItemState> {
        let mut tx = self.write_tx().await?;
        let state = apply_item_event_in(&mut tx, item_id, event, reason).await?;
        tx.commit().await?;
        Ok(state)
    }

    /// The queue, pending first, newest change first within a state (all of it: the window
    /// reads it a page at a time with [`Store::queue_page`]).
    pub async fn list_items(&self, filter: &ItemFilter) -> Result<Vec<ItemSummary>> {
        let mut sql = format!("{SUMMARY_SELECT} WHERE 1 = 1");
        if !filter.states.is_empty() {
            let marks = vec!["?"; filter.states.len()].join(", ");
            sql.push_str(&format!(" AND i.state IN ({marks})"));
        }
        if filter.account_id.is_some() {
            sql.push_str(" AND i.account_id = ?");
        }
        if filter.source.is_some() {
            sql.push_str(" AND i.source = ?");
        }
        sql.push_str(&format!(" ORDER BY {}", super::queue::LIST_ORDER));
        let mut query = sqlx::query(&sql);
        for state in &filter.states {
            query = query.bind(state.as_str());
        }
        if let Some(account) = &filter.account_id {
            query = query.bind(account);
        }
        if let Some(source) = filter.source {
            query = query.bind(source.as_str());
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter().map(summary_from_row).collect()
    }

    /// One whole item.
    pub async fn get_item(&self, item_id: i64) -> Result<Item> {
        let row = sqlx::query(&format!("{SUMMARY_SELECT} WHERE i.id = ?"))
            .bind(item_id)
            .fetch_optional(self.pool())
            .await?
            .found("item", item_id)?;
        Ok(Item {
            summary: summary_from_row(&row)?,
            thread_id: row.try_get("thread_id")?,
            muster: MusterFields::from_row(&row)?,
            answers_json: row.try_get("answers_json")?,
            created_at: row.try_get("created_at")?,
        })
    }

    /// Find an item by its account and external id.
    pub async fn find_item(&self, account_id: &str, external_id: &str) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM review_items WHERE account_id = ? AND external_id = ?",
        )
        .bind(account_id)
        .bind(external_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// `(item id, external id, version, state)` of every item of an account, for a sync to
    /// tell which drafts disappeared.
    pub async fn item_versions(
        &self,
        account_id: &str,
    ) -> Result<Vec<(i64, String, String, ItemState)>> {
        Ok(sqlx::query_as(
            "SELECT id, external_id, version, state FROM review_items WHERE account_id = ?",
        )
        .bind(account_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// How many items are waiting for the owner (pending, conflict, awaiting check).
    pub async fn count_awaiting_review(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM review_items WHERE state IN ('pending', 'conflict', 'awaiting_check')",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(n as u64)
    }
}

/// Apply an item event inside an open transaction.
pub(crate) async fn apply_item_event_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    event: ItemEvent,
    reason: Option<&str>,
) -> Result<ItemState> {
    let current: ItemState = sqlx::query_scalar("SELECT state FROM review_items WHERE id = ?")
        .bind(item_id)
        .fetch_optional(&mut *tx)
        .await?
        .found("item", item_id)?;
    let next = current.apply(event)?;
    write_item_state_in(tx, item_id, next, reason).await?;
    Ok(next)
}

/// Write a state the domain already allowed ([`ItemState::apply`] or [`ItemState::settle`]).
pub(crate) async fn write_item_state_in(
    tx: &mut sqlx::SqliteConnection,
    item_id: i64,
    next: ItemState,
    reason: Option<&str>,
) -> Result<()> {
    sqlx::query(
        "UPDATE review_items SET state = ?, state_reason = COALESCE(?, state_reason), updated_at = ?
         WHERE id = ?",
    )
    .bind(next.as_str())
    .bind(reason)
    .bind(format_time(Utc::now()))
    .bind(item_id)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

pub(super) fn summary_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<ItemSummary> {
    let decision = match row.try_get::<Option<i64>, _>("d_id")? {
        Some(id) => Some(LiveDecision {
            id,
            kind: row.try_get("d_kind")?,
            state: row.try_get("d_state")?,
            due_at: row.try_get("d_due_at")?,
            detail: row.try_get("d_detail")?,
            by_rule: row.try_get("d_rule")?,
        }),
        None => None,
    };
    let mut summary = ItemSummary {
        id: row.try_get("id")?,
        account_id: row.try_get("account_id")?,
        source: row.try_get("source")?,
        external_id: row.try_get("external_id")?,
        state: row.try_get("state")?,
        version: row.try_get("version")?,
        subject: row.try_get("subject")?,
        from: row.try_get("from_addr")?,
        recipients: row.try_get("recipients")?,
        snippet: row.try_get("snippet")?,
        state_reason: row.try_get("state_reason")?,
        check_state: row.try_get("check_state")?,
        redraft_number: row.try_get("redraft_number")?,
        decision,
        account_online: row.try_get("account_online")?,
        updated_at: row.try_get("updated_at")?,
        actions: vec![],
        labels: row
            .try_get::<Option<String>, _>("user_labels")?
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default(),
    };
    summary.actions = crate::actions::allowed_actions(&summary, None);
    if row.try_get::<Option<String>, _>("restamped")?.is_some() {
        let why = super::stamp_conflict_reason(&summary.version);
        crate::actions::refuse_decisions(&mut summary.actions, &why);
    }
    if let Some(why) = row.try_get::<Option<String>, _>("undecidable_reason")? {
        crate::actions::refuse_decisions(&mut summary.actions, &why);
    }
    Ok(summary)
}

impl Store {
    /// Marks every reviewable draft the owner was not yet told about as told, and returns how
    /// many there were. Drafts awaiting their plugin's check are not reviewable yet: they are
    /// counted once the plugin says they are sendable. One statement, so two callers never
    /// count the same draft.
    pub async fn take_unannounced_drafts(&self) -> Result<usize> {
        let rows = sqlx::query(
            "UPDATE review_items SET announced_at = ?
             WHERE announced_at IS NULL AND state = 'pending' RETURNING id",
        )
        .bind(format_time(Utc::now()))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.len())
    }
}
