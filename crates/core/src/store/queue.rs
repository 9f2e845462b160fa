//! The queue read a page at a time: keyset pagination over the list order, the counts per
//! state and the soonest queued decisions from SQL, so a window showing a few rows of a
//! 10,000-draft queue never holds (nor makes the shell hold) the whole list.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::items::{summary_from_row, SUMMARY_SELECT};
use super::{format_time, ItemFilter, ItemSummary, Store};
use crate::domain::ItemState;
use crate::error::Result;

/// The rank of a state in the list: what needs the owner first. [`state_rank`] must agree.
macro_rules! state_rank_sql {
    () => {
        "(CASE i.state WHEN 'pending' THEN 0 WHEN 'conflict' THEN 1 \
          WHEN 'awaiting_check' THEN 2 WHEN 'queued' THEN 3 WHEN 'sending' THEN 4 \
          WHEN 'send_failed' THEN 5 ELSE 6 END)"
    };
}

const STATE_RANK: &str = state_rank_sql!();

/// The list order: by [`STATE_RANK`], newest change first within a state, then newest item.
/// `id` last makes the order total, which keyset pagination needs.
pub(super) const LIST_ORDER: &str = concat!(state_rank_sql!(), ", i.updated_at DESC, i.id DESC");

/// The reverse of [`LIST_ORDER`], to read the page before a row (or the last page).
const REVERSE_ORDER: &str = concat!(state_rank_sql!(), " DESC, i.updated_at ASC, i.id ASC");

/// [`STATE_RANK`] in Rust, for a cursor.
fn state_rank(state: ItemState) -> i64 {
    match state {
        ItemState::Pending => 0,
        ItemState::Conflict => 1,
        ItemState::AwaitingCheck => 2,
        ItemState::Queued => 3,
        ItemState::Sending => 4,
        ItemState::SendFailed => 5,
        ItemState::Sent | ItemState::Rejected | ItemState::Gone => 6,
    }
}

/// A row's place in the list order: the fields of its [`ItemSummary`] that order it, so the
/// UI can send a row it holds back as the cursor (unknown fields are ignored).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueueCursor {
    /// The row's item id.
    pub id: i64,
    /// Its state when it was read.
    pub state: ItemState,
    /// Its last change when it was read.
    pub updated_at: DateTime<Utc>,
}

impl From<&ItemSummary> for QueueCursor {
    fn from(item: &ItemSummary) -> Self {
        QueueCursor {
            id: item.id,
            state: item.state,
            updated_at: item.updated_at,
        }
    }
}

/// Where a page starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(tag = "from", rename_all = "camelCase")]
pub enum PageStart {
    /// The top of the list.
    First,
    /// The rows right after this one (scrolling down, `j`).
    After {
        /// The last row the reader holds.
        cursor: QueueCursor,
    },
    /// The rows right before this one (scrolling up, `k`).
    Before {
        /// The first row the reader holds.
        cursor: QueueCursor,
    },
    /// The end of the list (`End`, or the scrollbar dragged to the bottom).
    Last,
    /// The rows from this position on. Only for a jump far from every row the reader holds
    /// (the scrollbar dragged to the middle), where no row is there to be a cursor: SQLite
    /// then walks `offset` rows, which keyset paging avoids everywhere else.
    At {
        /// 0-based position in the list.
        offset: u64,
    },
}

/// One page of the queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueuePage {
    /// The rows, in list order.
    pub items: Vec<ItemSummary>,
    /// 0-based position of the first row in the list (of the filtered list), counted when the
    /// page was read: rows arriving later shift it.
    pub start: u64,
    /// How many rows the filtered list has.
    pub total: u64,
}

/// How many items are in each state (states with none are absent).
pub type StateCounts = HashMap<ItemState, u64>;

/// The filter as SQL: `AND …` conditions on `i` and their bound values, in order.
struct Conditions {
    sql: String,
    binds: Vec<String>,
}

impl Conditions {
    fn of(filter: &ItemFilter, text: Option<&str>) -> Conditions {
        let mut sql = String::new();
        let mut binds = Vec::new();
        if !filter.states.is_empty() {
            let marks = vec!["?"; filter.states.len()].join(", ");
            sql.push_str(&format!(" AND i.state IN ({marks})"));
            binds.extend(filter.states.iter().map(|s| s.as_str().to_string()));
        }
        if let Some(account) = &filter.account_id {
            sql.push_str(" AND i.account_id = ?");
            binds.push(account.clone());
        }
        if let Some(source) = filter.source {
            sql.push_str(" AND i.source = ?");
            binds.push(source.as_str().to_string());
        }
        if let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) {
            let pattern = super::contains_ignoring_case(text);
            sql.push_str(
                " AND (i.subject REGEXP ? OR i.from_addr REGEXP ? OR i.recipients REGEXP ?)",
            );
            binds.extend([pattern.clone(), pattern.clone(), pattern]);
        }
        Conditions { sql, binds }
    }
}

/// `AND` the rows strictly after (`after`) or strictly before `cursor` in the list order.
fn keyset(cursor: &QueueCursor, after: bool) -> (String, Vec<String>) {
    let (rank_cmp, time_cmp, id_cmp) = if after {
        (">", "<", "<")
    } else {
        ("<", ">", ">")
    };
    let rank = state_rank(cursor.state);
    let sql = format!(
        " AND ({STATE_RANK} {rank_cmp} {rank} OR ({STATE_RANK} = {rank} AND
              (i.updated_at {time_cmp} ? OR (i.updated_at = ? AND i.id {id_cmp} {id}))))",
        id = cursor.id
    );
    let time = format_time(cursor.updated_at);
    (sql, vec![time.clone(), time])
}

impl Store {
    /// One page of the queue as [`Store::list_items`] orders it, narrowed by `filter` and by
    /// `text` (in the subject, sender or recipients), at most `limit` rows from `start`.
    ///
    /// Reading on with [`PageStart::After`] the last row of a page gives every row exactly
    /// once, in list order, even while drafts arrive between pages: rows are found by their
    /// place in the order, not by a position that new rows would shift.
    pub async fn queue_page(
        &self,
        filter: &ItemFilter,
        text: Option<&str>,
        start: &PageStart,
        limit: u32,
    ) -> Result<QueuePage> {
        let conditions = Conditions::of(filter, text);
        let total = self.count_where(&conditions, None).await?;
        let mut sql = format!("{SUMMARY_SELECT} WHERE 1 = 1{}", conditions.sql);
        let mut binds = conditions.binds.clone();
        let reversed = matches!(start, PageStart::Before { .. } | PageStart::Last);
        match start {
            PageStart::After { cursor } | PageStart::Before { cursor } => {
                let (condition, times) = keyset(cursor, matches!(start, PageStart::After { .. }));
                sql.push_str(&condition);
                binds.extend(times);
            }
            PageStart::First | PageStart::Last | PageStart::At { .. } => {}
        }
        let order = if reversed { REVERSE_ORDER } else { LIST_ORDER };
        sql.push_str(&format!(" ORDER BY {order} LIMIT {limit}"));
        if let PageStart::At { offset } = start {
            sql.push_str(&format!(" OFFSET {offset}"));
        }
        let mut query = sqlx::query(&sql);
        for value in &binds {
            query = query.bind(value);
        }
        let rows = query.fetch_all(self.pool()).await?;
        let mut items = rows
            .iter()
            .map(summary_from_row)
            .collect::<Result<Vec<_>>>()?;
        if reversed {
            items.reverse();
        }
        let start = match (start, items.first()) {
            (PageStart::First, _) => 0,
            (PageStart::At { offset }, _) => (*offset).min(total),
            (_, Some(first)) => {
                self.count_where(&conditions, Some(&QueueCursor::from(first)))
                    .await?
            }
            (PageStart::Before { .. }, None) => 0,
            (PageStart::After { .. } | PageStart::Last, None) => total,
        };
        Ok(QueuePage {
            items,
            start,
            total,
        })
    }

    /// The 0-based position of item `id` in the queue narrowed by `filter` and `text`, or
    /// `None` when it is not in it (so a window can keep the owner's selection across a
    /// reload without holding the rows in between).
    pub async fn queue_position(
        &self,
        filter: &ItemFilter,
        text: Option<&str>,
        id: i64,
    ) -> Result<Option<u64>> {
        let conditions = Conditions::of(filter, text);
        let sql = format!(
            "SELECT i.state, i.updated_at FROM review_items i WHERE i.id = ?{}",
            conditions.sql
        );
        let mut query = sqlx::query_as(&sql).bind(id);
        for value in &conditions.binds {
            query = query.bind(value);
        }
        let row: Option<(ItemState, DateTime<Utc>)> = query.fetch_optional(self.pool()).await?;
        let Some((state, updated_at)) = row else {
            return Ok(None);
        };
        let cursor = QueueCursor {
            id,
            state,
            updated_at,
        };
        Ok(Some(self.count_where(&conditions, Some(&cursor)).await?))
    }

    /// Every item of the queue narrowed by `filter` and `text`, in list order, as its row
    /// shows it (id and current version): "select all shown by this filter" without reading
    /// the rows themselves.
    pub async fn queue_listing(
        &self,
        filter: &ItemFilter,
        text: Option<&str>,
    ) -> Result<Vec<crate::decide::Listed>> {
        let conditions = Conditions::of(filter, text);
        let sql = format!(
            "SELECT i.id, i.version FROM review_items i WHERE 1 = 1{} ORDER BY {LIST_ORDER}",
            conditions.sql
        );
        let mut query = sqlx::query_as(&sql);
        for value in &conditions.binds {
            query = query.bind(value);
        }
        let rows: Vec<(i64, String)> = query.fetch_all(self.pool()).await?;
        Ok(rows
            .into_iter()
            .map(|(id, version)| crate::decide::Listed { id, version })
            .collect())
    }

    /// Rows matching `conditions`, all of them or only those before `cursor`.
    async fn count_where(
        &self,
        conditions: &Conditions,
        before: Option<&QueueCursor>,
    ) -> Result<u64> {
        let mut sql = format!(
            "SELECT count(*) FROM review_items i WHERE 1 = 1{}",
            conditions.sql
        );
        let mut binds = conditions.binds.clone();
        if let Some(cursor) = before {
            let (condition, times) = keyset(cursor, false);
            sql.push_str(&condition);
            binds.extend(times);
        }
        let mut query = sqlx::query_scalar(&sql);
        for value in &binds {
            query = query.bind(value);
        }
        let n: i64 = query.fetch_one(self.pool()).await?;
        Ok(n as u64)
    }

    /// How many items of `filter`'s account and source are in each state (its `states` are
    /// ignored: the counts are what the state filter offers).
    pub async fn state_counts(&self, filter: &ItemFilter) -> Result<StateCounts> {
        let filter = ItemFilter {
            states: Vec::new(),
            ..filter.clone()
        };
        let conditions = Conditions::of(&filter, None);
        let sql = format!(
            "SELECT i.state, count(*) FROM review_items i WHERE 1 = 1{} GROUP BY i.state",
            conditions.sql
        );
        let mut query = sqlx::query_as(&sql);
        for value in &conditions.binds {
            query = query.bind(value);
        }
        let rows: Vec<(ItemState, i64)> = query.fetch_all(self.pool()).await?;
        Ok(rows
            .into_iter()
            .map(|(state, n)| (state, n as u64))
            .collect())
    }

    /// The `limit` queued items of `filter`'s account and source whose decision is due
    /// soonest (the status bar's countdowns; `filter.states` is ignored).
    pub async fn soonest_queued(
        &self,
        filter: &ItemFilter,
        limit: u32,
    ) -> Result<Vec<ItemSummary>> {
        let filter = ItemFilter {
            states: Vec::new(),
            ..filter.clone()
        };
        let conditions = Conditions::of(&filter, None);
        let sql = format!(
            "{SUMMARY_SELECT} WHERE i.state = 'queued' AND d.id IS NOT NULL{}
             ORDER BY d.due_at, i.id LIMIT {limit}",
            conditions.sql
        );
        let mut query = sqlx::query(&sql);
        for value in &conditions.binds {
            query = query.bind(value);
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter().map(summary_from_row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::CACHE_KIB;
    use crate::Store;

    #[tokio::test]
    async fn every_connection_of_the_mirror_has_a_bounded_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        // Hold several connections at once so the check is not only on the first one.
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut connection = store.pool().acquire().await.unwrap();
            let cache: i64 = sqlx::query_scalar("PRAGMA cache_size")
                .fetch_one(&mut *connection)
                .await
                .unwrap();
            assert_eq!(cache, -i64::from(CACHE_KIB), "cache_size in KiB (negative)");
            held.push(connection);
        }
    }
}
