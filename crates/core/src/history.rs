//! The record, read back: what was decided (sent, rejected, by a rule, edited first, failed),
//! the exact bytes each decision bound to and — for a send — the bytes that left, and per agent
//! figures (how often the owner approved, edited, rejected, how often a rule decided, and how
//! long a version waited for its decision): the evidence a rule is built on.
//!
//! Everything here is read from the mirror; nothing is written. A decision is in the record once
//! it was carried out (`done`) or refused for good (`failed`): one still in its undo window,
//! undone, in conflict (the owner decides again) or of unknown outcome is not a decision that
//! happened yet.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::domain::{DecisionKind, DecisionState, ItemState, Source};
use crate::error::{Error, Result};
use crate::render::ReviewView;
use crate::store::{DraftContent, Found, Store};

mod figures;

use figures::figures_of;
pub use figures::{median, AgentFigures};

/// The actor of a rule's decision starts with this (`rule:<id>@<version>`).
pub const RULE_ACTOR_PREFIX: &str = "rule:";

/// What kind of decision an entry of the record is. An entry has one outcome (sent, rejected or
/// failed) and may also be by a rule, or of a version the owner edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[derive(strum::IntoStaticStr, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum HistoryKind {
    /// Approved and carried out: Gmail sent it, or muster took it for its plugin to send.
    Sent,
    /// Rejected (the Gmail draft deleted or kept, the muster draft handed back).
    Rejected,
    /// Decided by a rule (`rule:<id>@<version>`), not by the owner's hand.
    ByRule,
    /// The owner edited the draft, then approved the edited version.
    Edited,
    /// The send or rejection was refused for good (by Google, or by the plugin after muster
    /// took it).
    Failed,
}

impl HistoryKind {
    /// Every kind, in the order the filters offer them.
    pub const ALL: [HistoryKind; 5] = [
        HistoryKind::Sent,
        HistoryKind::Rejected,
        HistoryKind::ByRule,
        HistoryKind::Edited,
        HistoryKind::Failed,
    ];

    /// The name used in filters and JSON.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Which part of the record to read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct HistoryFilter {
    /// Only entries of this kind.
    pub kind: Option<HistoryKind>,
    /// Only this account.
    pub account_id: Option<String>,
    /// Only entries with this text (any case) in the subject, the recipients or the reason.
    pub search: Option<String>,
    /// At most this many entries (0: [`HistoryFilter::DEFAULT_LIMIT`]).
    pub limit: u32,
    /// Skip this many of the newest (the next page).
    pub offset: u32,
}

impl HistoryFilter {
    /// The page size when none is given.
    pub const DEFAULT_LIMIT: u32 = 100;
}

/// One decision in the record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The decision (what [`left_message`] opens).
    pub decision_id: i64,
    /// The item decided on.
    pub item_id: i64,
    /// Its account.
    pub account_id: String,
    /// The account's address (Gmail mailbox, muster URL).
    pub account: String,
    /// Gmail or muster.
    pub source: Source,
    /// Who drafted it: see [`AgentFigures::agent`].
    pub agent: String,
    /// Subject.
    pub subject: String,
    /// Recipients.
    pub recipients: String,
    /// Approve or reject.
    pub decision: DecisionKind,
    /// Its outcome first (sent, rejected or failed), then by rule and edited when they hold.
    pub kinds: Vec<HistoryKind>,
    /// Who decided: "owner via desktop", "owner via cli", `rule:<id>@<version>`...
    pub actor: String,
    /// When the decision was taken.
    pub decided_at: DateTime<Utc>,
    /// When it was carried out (or refused).
    pub finished_at: Option<DateTime<Utc>>,
    /// The item's state now.
    pub final_state: ItemState,
    /// Where the decision ended (done or failed).
    pub decision_state: DecisionState,
    /// The owner's reason for a rejection, or why it failed.
    pub reason: Option<String>,
    /// The version the decision bound to.
    pub version: String,
    /// sha256 of that version's bytes.
    pub digest: String,
    /// sha256 of the bytes that left, when they are not exactly the version's (a send to which
    /// Countersign added a `Message-ID`); `None` otherwise.
    pub sent_digest: Option<String>,
    /// When that version was first seen (for the time to decision).
    pub first_seen_at: Option<DateTime<Utc>>,
}

impl HistoryEntry {
    /// Whether the entry is of `kind`.
    pub fn is(&self, kind: HistoryKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// How long the version waited from first seen to the decision, in seconds.
    pub fn seconds_to_decision(&self) -> Option<f64> {
        let seen = self.first_seen_at?;
        Some((self.decided_at - seen).num_milliseconds().max(0) as f64 / 1000.0)
    }
}

/// A decision's bytes: the version it bound to and, for a send, exactly what left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftBytes {
    /// The bytes (the raw message that left, or the muster reply text).
    pub content: DraftContent,
    /// sha256 of `content`, checked against the record.
    pub digest: String,
    /// The header Countersign put in front of the reviewed bytes before sending, if any.
    pub header_added: Option<String>,
    /// These bytes left (a carried-out approval); otherwise they are the version decided on.
    pub left: bool,
}

/// A decision opened from the record: the entry, its bytes rendered (remote content blocked)
/// and as source.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LeftMessage {
    /// The record's entry.
    pub entry: HistoryEntry,
    /// The bytes rendered with the review's renderer.
    pub view: ReviewView,
    /// The bytes as text (lossy UTF-8): the raw source.
    pub source: String,
    /// sha256 of the bytes.
    pub digest: String,
    /// The header Countersign added before sending, if any.
    pub header_added: Option<String>,
    /// These bytes left; otherwise they are the version rejected (or whose send failed).
    pub left: bool,
}

/// The record as one query: every carried-out or failed decision with what it was about. The
/// outcome is `failed` for a decision refused for good, and for a muster approval whose plugin
/// then refused to send (the item's latest decision, the item now `send_failed`).
const RECORD: &str = "
WITH record AS (
  SELECT d.id AS decision_id, d.item_id, d.kind, d.state AS decision_state, d.version, d.digest,
         d.sent_digest, d.sent_header_added, d.created_at AS decided_at, d.finished_at,
         COALESCE(d.reason, d.outcome_detail,
                  CASE WHEN i.state = 'send_failed' THEN i.state_reason END) AS reason,
         i.account_id, a.address AS account, i.source, i.subject, i.recipients, i.from_addr,
         i.plugin, i.state AS final_state, v.first_seen_at,
         -- Chief-filed as the rules and the review read it: on no route, or on a route that
         -- fell back to the chief.
         (i.route_id IS NULL OR EXISTS (SELECT 1 FROM routes r
            WHERE r.account_id = i.account_id AND r.route_id = i.route_id
              AND r.state = 'fallback')) AS chief_filed,
         -- Who decided: the decision names it since rules came; older ones, their audit row.
         COALESCE(d.decided_by,
                  (SELECT l.actor FROM audit_log l
                    WHERE l.item_id = d.item_id AND l.decision_id = d.id AND l.action = d.kind
                    ORDER BY l.id LIMIT 1), '') AS actor,
         EXISTS (SELECT 1 FROM audit_log e
                  WHERE e.item_id = d.item_id AND e.action = 'edit' AND e.outcome = ?7
                    AND e.version = d.version) AS edited,
         CASE
           WHEN d.state = 'failed' THEN 'failed'
           WHEN d.kind = 'approve' AND i.state = 'send_failed'
                AND d.id = (SELECT max(x.id) FROM decisions x WHERE x.item_id = d.item_id)
             THEN 'failed'
           WHEN d.kind = 'approve' THEN 'sent'
           ELSE 'rejected'
         END AS outcome
    FROM decisions d
    JOIN review_items i ON i.id = d.item_id
    JOIN accounts a ON a.id = i.account_id
    LEFT JOIN draft_versions v ON v.item_id = d.item_id AND v.version = d.version
   WHERE d.state IN ('done', 'failed')
)
SELECT * FROM record
 WHERE (?1 IS NULL OR (CASE ?1
          -- RULE_ACTOR_PREFIX, compared case-sensitively as the entry's kinds are (LIKE is not)
          WHEN 'by_rule' THEN substr(actor, 1, 5) = 'rule:'
          WHEN 'edited' THEN edited AND kind = 'approve'
          ELSE outcome = ?1 END))
   AND (?2 IS NULL OR account_id = ?2)
   -- ?3 is a pattern from store::contains_ignoring_case
   AND (?3 IS NULL OR (subject || char(10) || recipients || char(10) || COALESCE(reason, ''))
                      REGEXP ?3)
   AND (?4 IS NULL OR decision_id = ?4)
 ORDER BY decided_at DESC, decision_id DESC
 LIMIT ?5 OFFSET ?6";

impl Store {
    /// The record, newest decision first, narrowed by `filter`.
    pub async fn history(&self, filter: &HistoryFilter) -> Result<Vec<HistoryEntry>> {
        let limit = match filter.limit {
            0 => HistoryFilter::DEFAULT_LIMIT,
            n => n,
        };
        let search = filter
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(crate::store::contains_ignoring_case);
        self.record(
            filter.kind,
            filter.account_id.as_deref(),
            search.as_deref(),
            None,
            i64::from(limit),
            i64::from(filter.offset),
        )
        .await
    }

    /// The record's entry of one decision (refused when it is not in the record: still
    /// queued, undone, in conflict...).
    pub async fn history_entry(&self, decision_id: i64) -> Result<HistoryEntry> {
        self.record(None, None, None, Some(decision_id), 1, 0)
            .await?
            .pop()
            .found("decided decision", decision_id)
    }

    /// Per agent figures over the whole record, the busiest agent first.
    pub async fn agent_figures(&self) -> Result<Vec<AgentFigures>> {
        let entries = self.record(None, None, None, None, -1, 0).await?;
        Ok(figures_of(&entries))
    }

    /// The bytes decision `decision_id` bound to and, when it was a carried-out send, exactly
    /// the bytes that left: the reviewed version with the header Countersign added in front
    /// (a `Message-ID`, so the send could be found again), checked against the digest recorded
    /// before the send. Refused when the mirror's bytes no longer hash to what the record says.
    pub async fn bytes_that_left(&self, decision_id: i64) -> Result<LeftBytes> {
        let entry = self.history_entry(decision_id).await?;
        let decision = self.get_decision(decision_id).await?;
        let version = self.version(entry.item_id, &entry.version).await?;
        let action = format!(
            "show the bytes the decision on {} bound to",
            self.draft_words(entry.item_id).await?
        );
        // The bytes themselves, against the digest the sealed record holds (not the one
        // stored beside them, which `sqlite3` can change with the bytes): a changed mirror must
        // not be shown as what the decision bound to.
        let sealed = self.sealed_digest(decision_id).await?.map_err(|why| {
            Error::refused(&action, format!("the record does not vouch for it: {why}"))
        })?;
        let stored = hex::encode(Sha256::digest(version.content.bytes()));
        if stored != sealed || stored != entry.digest {
            return Err(Error::refused(
                &action,
                format!(
                    "these are not the bytes it bound to: they now hash to {stored}, the sealed \
                     record says {sealed}"
                ),
            ));
        }
        let left = entry.is(HistoryKind::Sent);
        let (content, header_added) = match (
            decision.sent_header_added.as_deref(),
            decision.rfc822_message_id.as_deref(),
            &version.content,
        ) {
            (Some(header @ "Message-ID"), Some(id), DraftContent::Raw(raw)) => {
                let mut with_id = format!("{header}: <{id}>\r\n").into_bytes();
                with_id.extend_from_slice(raw);
                (DraftContent::Raw(with_id), Some(header.to_string()))
            }
            (Some(header), _, _) => {
                return Err(Error::Corrupt(format!(
                    "{action}: the send added a {header} header this mirror cannot reproduce"
                )))
            }
            (None, _, content) => (content.clone(), None),
        };
        let digest = hex::encode(Sha256::digest(content.bytes()));
        if let Some(sent) = &decision.sent_digest {
            if *sent != digest {
                return Err(Error::Corrupt(format!(
                    "{action}: the bytes rebuilt from the mirror hash to {digest}, the send \
                     recorded {sent}"
                )));
            }
        }
        Ok(LeftBytes {
            content,
            digest,
            header_added,
            left,
        })
    }
}

/// Decision `decision_id` opened from the record: its entry, and its bytes
/// ([`Store::bytes_that_left`]) rendered as the review renders a draft (remote content
/// blocked) and as source.
pub async fn left_message(store: &Store, decision_id: i64) -> Result<LeftMessage> {
    let entry = store.history_entry(decision_id).await?;
    let bytes = store.bytes_that_left(decision_id).await?;
    Ok(LeftMessage {
        entry,
        view: crate::review::render_bytes(&bytes.content),
        source: String::from_utf8_lossy(bytes.content.bytes()).into_owned(),
        digest: bytes.digest,
        header_added: bytes.header_added,
        left: bytes.left,
    })
}

impl Store {
    async fn record(
        &self,
        kind: Option<HistoryKind>,
        account_id: Option<&str>,
        // A pattern from `store::contains_ignoring_case`.
        search: Option<&str>,
        decision_id: Option<i64>,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<HistoryEntry>> {
        // Bound in the order of the statement's numbered parameters, ?1 to ?7.
        let rows = sqlx::query(RECORD)
            .bind(kind.map(HistoryKind::as_str))
            .bind(account_id)
            .bind(search)
            .bind(decision_id)
            .bind(limit)
            .bind(offset)
            .bind(crate::edit::EDITED_BY_OWNER)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(entry_from_row).collect()
    }
}

fn entry_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<HistoryEntry> {
    let decision: DecisionKind = row.try_get("kind")?;
    let outcome: &str = row.try_get("outcome")?;
    let actor: String = row.try_get("actor")?;
    let edited: bool = row.try_get("edited")?;
    let mut kinds = vec![outcome
        .parse::<HistoryKind>()
        .map_err(|_| Error::Corrupt(format!("unknown outcome {outcome:?} in the record")))?];
    if actor.starts_with(RULE_ACTOR_PREFIX) {
        kinds.push(HistoryKind::ByRule);
    }
    if edited && decision == DecisionKind::Approve {
        kinds.push(HistoryKind::Edited);
    }
    let source: Source = row.try_get("source")?;
    let digest: String = row.try_get("digest")?;
    let sent_digest: Option<String> = row.try_get("sent_digest")?;
    Ok(HistoryEntry {
        decision_id: row.try_get("decision_id")?,
        item_id: row.try_get("item_id")?,
        account_id: row.try_get("account_id")?,
        account: row.try_get("account")?,
        source,
        agent: agent_name(
            source,
            row.try_get("from_addr")?,
            row.try_get("plugin")?,
            !row.try_get::<bool, _>("chief_filed")?,
        ),
        subject: row.try_get("subject")?,
        recipients: row.try_get("recipients")?,
        decision,
        kinds,
        actor,
        decided_at: row.try_get("decided_at")?,
        finished_at: row.try_get("finished_at")?,
        final_state: row.try_get("final_state")?,
        decision_state: row.try_get("decision_state")?,
        reason: row.try_get("reason")?,
        version: row.try_get("version")?,
        sent_digest: sent_digest.filter(|sent| *sent != digest),
        digest,
        first_seen_at: row.try_get("first_seen_at")?,
    })
}

/// Who drafted an item. Gmail: the address in its From (lowercased, without the display
/// name); muster: the plugin it goes out through and how the reply came to be — on a route a
/// message was relayed on, or filed by the chief (on no route, or on a route that fell back to
/// the chief).
fn agent_name(source: Source, from: &str, plugin: Option<String>, on_route: bool) -> String {
    match source {
        Source::Gmail => {
            let address = match (from.rfind('<'), from.rfind('>')) {
                (Some(open), Some(close)) if open < close => &from[open + 1..close],
                _ => from,
            };
            address.trim().to_lowercase()
        }
        Source::Muster => format!(
            "{}, {}",
            plugin.as_deref().unwrap_or("unknown plugin"),
            if on_route { "relayed" } else { "chief-filed" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_two_middle_values() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [7.0]), Some(7.0));
        assert_eq!(median(&mut [40.0, 10.0, 100.0, 20.0]), Some(30.0));
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn a_gmail_agent_is_its_sender_address_and_a_muster_agent_its_plugin_and_route_kind() {
        assert_eq!(
            agent_name(Source::Gmail, "Owner <Owner@Example.com>", None, false),
            "owner@example.com"
        );
        assert_eq!(
            agent_name(Source::Gmail, "bot@example.com", None, false),
            "bot@example.com"
        );
        assert_eq!(
            agent_name(Source::Muster, "x", Some("gmail-relay".into()), true),
            "gmail-relay, relayed"
        );
        assert_eq!(
            agent_name(Source::Muster, "x", Some("gmail-relay".into()), false),
            "gmail-relay, chief-filed"
        );
    }
}
