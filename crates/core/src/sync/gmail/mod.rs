//! Syncing a Gmail account's drafts into the mirror.
//!
//! - Incremental from the stored history id: `history.list?labelId=DRAFT` (2 units). Nothing
//!   changed ⇒ that one request is the whole sync. Something changed ⇒ list the drafts and fetch
//!   only those whose message id (their version) is new. A 404 or 400 ⇒ the id is unusable ⇒
//!   full sync.
//! - `drafts.list` is the authority: it reconciles the mirror at start, on "Sync now" and at
//!   least every [`LISTING_INTERVAL`], so a draft deleted, sent or edited in Gmail is noticed
//!   even when history does not report it
//!   (<https://developers.google.com/gmail/api/guides/sync>).
//! - Full: the profile's history id first (so nothing that happens during the sync is missed),
//!   then the same list-and-fetch.
//! - A draft that disappeared is marked gone, "sent elsewhere" when SENT has its Message-ID.
//! - The conversation of a reply is read again with each new version of the draft
//!   (`threads.get` metadata: the addresses, threading ids, Date and snippet of each message)
//!   and the message it answers once in full (`messages.get` raw), both kept in the mirror: the
//!   review shows them offline, and the conversation's addresses feed the recipient check. The
//!   parent is only ever a received or sent message of the draft's own thread (see
//!   [`answered`]): one named but not there is flagged, never looked for elsewhere.
//! - Labels ([`labels`]): `labels.list` with each listing, each fetched draft's `labelIds`, and
//!   history's `labelsAdded` / `labelsRemoved`.

mod answered;
mod labels;

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use chrono::Utc;

use countersign_gmail::{GmailClient, RawDraft};
use serde::Serialize;

use crate::domain::{ItemEvent, ItemState, Source};
use crate::error::{Error, Result};
use crate::render::{render_message, RenderOptions, ReviewView};
use crate::store::{Account, DraftContent, MusterFields, ObservedDraft, Store};

/// What a Gmail sync did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GmailSyncReport {
    /// It was a full sync.
    pub full: bool,
    /// Drafts fetched (new or changed).
    pub fetched: usize,
    /// Items seen for the first time.
    pub new_items: usize,
    /// New versions of known items.
    pub new_versions: usize,
    /// Items that disappeared.
    pub gone: usize,
}

/// Draft fetches kept in flight during a sync: enough to cover ~70 ms round trips at 250
/// units/s (a draft costs up to 15 units with its parent).
const FETCHES_IN_FLIGHT: usize = 4;

/// `drafts.list` reconciles the whole mirror at least this often, whatever history says:
/// Google does not document that `history.list?labelId=DRAFT` reports deleted or sent drafts.
pub const LISTING_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// Whether a sync lists every draft (5 units a page of 500) when history reports no change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// List now: at start, and when the owner asks to sync.
    Always,
    /// List when the last listing is [`LISTING_INTERVAL`] old; otherwise history decides.
    WhenDue,
}

/// Bring the mirror up to date with the account's drafts, listing them when due.
pub async fn sync_gmail(
    store: &Store,
    account: &Account,
    client: &GmailClient,
) -> Result<GmailSyncReport> {
    sync_gmail_with(store, account, client, Listing::WhenDue).await
}

/// Bring the mirror up to date with the account's drafts.
///
/// An account that needs reconnecting is not read at all. A refresh answered `invalid_grant`
/// (the sentence names the likely causes), or `deleted_client` / `invalid_client` (a new OAuth
/// client is needed), marks the account so; its queued decisions wait.
pub async fn sync_gmail_with(
    store: &Store,
    account: &Account,
    client: &GmailClient,
    listing: Listing,
) -> Result<GmailSyncReport> {
    // The caller's copy may predate a reconnect or a refused refresh: the mirror decides.
    let current = store.get_account(&account.id).await?;
    if let Some(reason) = &current.reconnect_reason {
        return Err(countersign_gmail::Error::from_reconnect_reason(reason).into());
    }
    let sync = AccountSync {
        store,
        account,
        client,
    };
    let result = sync.changes(listing).await;
    if let Some(reason) = result.as_ref().err().and_then(|e| match e {
        Error::Gmail(g) => g.reconnect_reason(),
        _ => None,
    }) {
        store.mark_reconnect_needed(&account.id, reason).await?;
    }
    result
}

/// One account's sync: the mirror, the account and its Gmail client.
#[derive(Clone, Copy)]
struct AccountSync<'a> {
    store: &'a Store,
    account: &'a Account,
    client: &'a GmailClient,
}

impl AccountSync<'_> {
    /// Read what changed since the stored history id, listing the drafts when something did or
    /// a listing is due; a full sync when the id is unusable or there is none.
    async fn changes(self, listing: Listing) -> Result<GmailSyncReport> {
        let (store, account) = (self.store, self.account);
        let cursor = store.sync_cursor(&account.id).await?;
        if let Some(start) = cursor.history_id.as_deref() {
            match self.client.list_draft_history(start).await {
                Ok(changes) => {
                    let listing_due = listing == Listing::Always
                        || cursor.last_listed_at.is_none_or(|at| {
                            (Utc::now() - at).to_std().unwrap_or_default() >= LISTING_INTERVAL
                        });
                    labels::apply_history(store, &account.id, &changes).await?;
                    if changes.is_empty() && !listing_due {
                        store
                            .record_sync_success(&account.id, Some(&changes.history_id), false)
                            .await?;
                        return Ok(GmailSyncReport::default());
                    }
                    return self.reconcile(false, &changes.history_id).await;
                }
                // Google answers a start id it no longer has with 404, sometimes 400
                // ("Synchronizing clients with Gmail": "…you receive an HTTP 404 error
                // response…"; issue 12 for 400).
                Err(countersign_gmail::Error::NotFound { .. })
                | Err(countersign_gmail::Error::Refused { status: 400, .. }) => {
                    tracing::info!(account = %account.id, "history id unusable; full sync");
                }
                Err(e) => return Err(e.into()),
            }
        }
        let profile = self.client.profile().await?;
        self.reconcile(true, &profile.history_id).await
    }

    /// List every draft and bring the mirror in line with the listing (fetching the new
    /// versions, marking the vanished), then record the listing and that the mirror is
    /// current up to `history_id`.
    async fn reconcile(self, full: bool, history_id: &str) -> Result<GmailSyncReport> {
        let listed_at = Utc::now();
        let (store, id) = (self.store, &self.account.id);
        labels::refresh(store, id, self.client).await?;
        let report = self.mirror_listing(full).await?;
        labels::refresh_if_unknown(store, id, self.client).await?;
        store.record_listing(id, listed_at).await?;
        store
            .record_sync_success(id, Some(history_id), full)
            .await?;
        Ok(report)
    }

    /// The listing itself: fetch the drafts whose version is new (a few at a time), record
    /// them in list order, and mark the ones no longer listed as gone.
    async fn mirror_listing(self, full: bool) -> Result<GmailSyncReport> {
        let AccountSync {
            store,
            account,
            client,
        } = self;
        let mut report = GmailSyncReport {
            full,
            ..GmailSyncReport::default()
        };
        let listed = client.list_drafts().await?;
        let known: HashMap<String, (i64, String, ItemState)> = store
            .item_versions(&account.id)
            .await?
            .into_iter()
            .map(|(id, external, version, state)| (external, (id, version, state)))
            .collect();
        let listed_ids: HashSet<&str> = listed.iter().map(|d| d.id.as_str()).collect();
        // What to fetch: drafts whose version is new. Each new version's parent is read again
        // from its thread: the agent may have rewritten its threading headers, and the thread
        // may have changed since (issue 33).
        let mut wanted = Vec::new();
        for draft in &listed {
            match known.get(&draft.id) {
                Some((_, version, _)) if *version == draft.message_id => {}
                _ => wanted.push(draft.id.clone()),
            }
        }
        // A few fetches in flight hide the round trips to Google (the account's quota limiter is
        // shared by the clones); results are recorded one at a time, in list order.
        let mut wanted = wanted.into_iter();
        let mut in_flight = VecDeque::new();
        let mut conversations = answered::Conversations::new();
        loop {
            while in_flight.len() < FETCHES_IN_FLIGHT {
                let Some(draft_id) = wanted.next() else {
                    break;
                };
                in_flight.push_back(tokio::spawn(fetch_draft(
                    client.clone(),
                    account.clone(),
                    draft_id,
                )));
            }
            let Some(fetch) = in_flight.pop_front() else {
                break;
            };
            let fetched = match fetch.await {
                Ok(fetched) => fetched,
                Err(e) => Err(Error::TaskFailed {
                    what: "a draft fetch",
                    detail: e.to_string(),
                }),
            };
            let (mut observed, claims, label_ids) = match fetched {
                Ok(Some(observed)) => observed,
                Ok(None) => continue,
                Err(e) => {
                    // Dropping a task handle does not stop the task.
                    for other in &in_flight {
                        other.abort();
                    }
                    return Err(e);
                }
            };
            report.fetched += 1;
            if observed.answers_json.is_none() && !claims.is_empty() {
                observed.answers_json = answered::answered_message(
                    store,
                    client,
                    &account.id,
                    observed.thread_id.as_deref(),
                    &claims,
                    &mut conversations,
                )
                .await?
                .map(|parent| serde_json::to_string(&parent))
                .transpose()
                .map_err(|e| Error::Encode {
                    what: "the answered message",
                    detail: e.to_string(),
                })?;
            }
            let outcome = store.record_draft(&observed).await?;
            labels::keep(store, outcome.item_id, outcome.created, &label_ids).await?;
            if outcome.created {
                report.new_items += 1;
            } else if outcome.new_version {
                report.new_versions += 1;
            }
        }
        // A reply's conversation can change while the reply does not (its parent trashed or
        // deleted): every listing reads the thread of each reply still waiting again.
        for draft in &listed {
            match known.get(&draft.id) {
                Some((item_id, version, state))
                    if *version == draft.message_id && is_mirrored_as_present(*state) =>
                {
                    recheck_answers(self, *item_id, version, &mut conversations).await?;
                }
                _ => {}
            }
        }
        for (external_id, (item_id, _, state)) in &known {
            if listed_ids.contains(external_id.as_str()) || !is_mirrored_as_present(*state) {
                continue;
            }
            let reason = vanished_reason(store, client, *item_id).await?;
            store
                .apply_item_event(*item_id, ItemEvent::Vanished, Some(&reason))
                .await?;
            report.gone += 1;
        }
        Ok(report)
    }
}

/// Read again what the current `version` of item `item_id` answers, and keep it if it changed.
async fn recheck_answers(
    sync: AccountSync<'_>,
    item_id: i64,
    version: &str,
    conversations: &mut answered::Conversations,
) -> Result<()> {
    let item = sync.store.get_item(item_id).await?;
    let stored = sync.store.version(item_id, version).await?;
    // A reply kept without a parent (mirrored before parents were checked this way) is
    // checked too; a draft naming no parent at all costs no rendering.
    if item.answers_json.is_none() && !names_a_parent(stored.content.bytes()) {
        return Ok(());
    }
    let view = render_message(stored.content.bytes(), &RenderOptions::default());
    let claims = answered::Claims {
        in_reply_to: view.in_reply_to,
        references: view.references,
    };
    let answers = answered::answered_message(
        sync.store,
        sync.client,
        &sync.account.id,
        item.thread_id.as_deref(),
        &claims,
        conversations,
    )
    .await?
    .map(|parent| serde_json::to_string(&parent))
    .transpose()
    .map_err(|e| Error::Encode {
        what: "the answered message",
        detail: e.to_string(),
    })?;
    if answers != item.answers_json {
        sync.store.set_answers(item_id, answers.as_deref()).await?;
    }
    Ok(())
}

/// Whether a message's header block has an In-Reply-To or References header at all.
fn names_a_parent(raw: &[u8]) -> bool {
    raw.split(|b| *b == b'\n')
        .take_while(|line| !line.iter().all(|b| b.is_ascii_whitespace()))
        .any(|line| {
            let name = line.split(|b| *b == b':').next().unwrap_or_default();
            name.eq_ignore_ascii_case(b"in-reply-to") || name.eq_ignore_ascii_case(b"references")
        })
}

/// Fetch one draft, with the Message-IDs its threading headers name and its label ids; `None`
/// when it vanished since the list.
async fn fetch_draft(
    client: GmailClient,
    account: Account,
    draft_id: String,
) -> Result<Option<(ObservedDraft, answered::Claims, Vec<String>)>> {
    let raw = match client.get_draft_raw(&draft_id).await {
        Ok(raw) => raw,
        // Sent or deleted between the list and the get: the next sync sees it gone.
        Err(countersign_gmail::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let (observed, claims) = observe(&account, &raw, None);
    Ok(Some((observed, claims, raw.label_ids)))
}

/// States in which a draft missing from Gmail means it went away behind our back. Queued and
/// sending items belong to the dispatcher, which reconciles them itself.
fn is_mirrored_as_present(state: ItemState) -> bool {
    matches!(
        state,
        ItemState::Pending | ItemState::Conflict | ItemState::AwaitingCheck
    )
}

async fn vanished_reason(store: &Store, client: &GmailClient, item_id: i64) -> Result<String> {
    let item = store.get_item(item_id).await?;
    let version = store.version(item_id, &item.summary.version).await?;
    let message_id = render_message(version.content.bytes(), &RenderOptions::default()).message_id;
    if let Some(message_id) = message_id {
        if !client
            .find_sent_by_message_id(&message_id)
            .await?
            .is_empty()
        {
            return Ok("sent elsewhere (it is in Gmail's Sent)".into());
        }
    }
    // Gmail may replace the Message-ID on send (DESIGN §4): settled as the send path settles
    // a lost send, by a message labelled SENT in the draft's own thread whose bodies are the
    // draft's. No local clock is involved, so a fast clock cannot hide it.
    if let Some(thread_id) = &item.thread_id {
        if sent_in_thread(client, thread_id, version.content.bytes()).await? {
            return Ok("sent elsewhere (it is in Gmail's Sent)".into());
        }
    }
    Ok("deleted elsewhere (it is no longer in Gmail's Drafts)".into())
}

/// Whether a message labelled `SENT` in `thread_id` carries the same text and HTML bodies as
/// `raw` (`threads.get` metadata, 10 units, then `messages.get?format=raw`, 5 units each).
async fn sent_in_thread(client: &GmailClient, thread_id: &str, raw: &[u8]) -> Result<bool> {
    let Some(want) = crate::outbox::content_digest(raw) else {
        return Ok(false);
    };
    let thread = match client.get_thread_metadata(thread_id, &[]).await {
        Ok(thread) => thread,
        Err(countersign_gmail::Error::NotFound { .. }) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    for candidate in thread
        .messages
        .iter()
        .filter(|m| m.label_ids.iter().any(|l| l == "SENT"))
    {
        match client.get_message_raw(&candidate.id).await {
            Ok(sent) if crate::outbox::content_digest(&sent).as_deref() == Some(&want) => {
                return Ok(true)
            }
            Ok(_) | Err(countersign_gmail::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(false)
}

/// The mirror's record of a Gmail draft as fetched, answering `answers_json`.
pub(crate) fn observed_draft(
    account: &Account,
    raw: &RawDraft,
    answers_json: Option<String>,
) -> ObservedDraft {
    observe(account, raw, answers_json).0
}

fn observe(
    account: &Account,
    raw: &RawDraft,
    answers_json: Option<String>,
) -> (ObservedDraft, answered::Claims) {
    let view = render_message(&raw.raw, &RenderOptions::default());
    let observed = ObservedDraft {
        account_id: account.id.clone(),
        source: Source::Gmail,
        external_id: raw.id.clone(),
        version: raw.message_id.clone(),
        content: DraftContent::Raw(raw.raw.clone()),
        observed_state: ItemState::Pending,
        gmail_internal_date: raw.internal_date,
        thread_id: Some(raw.thread_id.clone()).filter(|t| !t.is_empty()),
        subject: view.subject.clone().unwrap_or_default(),
        from_addr: addresses(&view.from),
        recipients: recipients(&view),
        snippet: snippet(&view.text_body),
        muster: MusterFields::default(),
        answers_json,
        state_reason: None,
    };
    let claims = answered::Claims {
        in_reply_to: view.in_reply_to.clone(),
        references: view.references.clone(),
    };
    (observed, claims)
}

pub(crate) fn addresses(list: &[crate::render::Address]) -> String {
    list.iter()
        .map(|a| match &a.name {
            Some(name) if !name.is_empty() => format!("{name} <{}>", a.email),
            _ => a.email.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn recipients(view: &ReviewView) -> String {
    let all: Vec<_> = view
        .to
        .iter()
        .chain(&view.cc)
        .chain(&view.bcc)
        .cloned()
        .collect();
    addresses(&all)
}

pub(crate) fn snippet(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 160 {
        return flat;
    }
    let mut cut: String = flat.chars().take(159).collect();
    cut.push('…');
    cut
}
