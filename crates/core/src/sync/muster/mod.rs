//! Syncing a muster instance's plugin reply drafts and routes into the mirror.
//!
//! muster's event stream has no ids and no replay, and drops events for a slow reader, so a full
//! sync runs after every (re)connect and every few minutes while connected;
//! `plugin.draft.changed` / `plugin.route.changed` re-fetch just that draft or route.
//! Each new refusal (a failed send, a refused check) is recorded once, however many times a
//! sync sees it, for the desktop app to turn into one notification.

use chrono::Utc;
use countersign_muster::{CheckState, DraftState, MusterClient, PluginDraft, Route, Unreadable};
use serde::{Deserialize, Serialize};

use crate::domain::{ItemState, RouteState, Source, MAX_ROUTE_REDRAFTS};
use crate::error::{Error, Result};
use crate::render::{render_message, Address, RenderOptions};
use crate::store::{
    parse_time, Account, DraftContent, MusterFields, ObservedDraft, Refusal, RefusalKind,
    RouteRecord, Store,
};

mod resync;

pub use resync::{apply_event, sync_muster, sync_muster_scoped, MusterScope};

/// What a muster sync did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MusterSyncReport {
    /// Drafts seen.
    pub drafts: usize,
    /// Items seen for the first time.
    pub new_items: usize,
    /// New versions of known items.
    pub new_versions: usize,
    /// Routes mirrored.
    pub routes: usize,
    /// Refusals seen for the first time.
    pub new_refusals: Vec<Refusal>,
    /// Records muster sent that Countersign could not read (drafts, routes, messages), one
    /// sentence each; the others synced. A draft among them with an id is also an item.
    pub unreadable: Vec<String>,
}

/// What a muster draft answers, as kept in the mirror (a superset of the renderer's
/// `ParentMessage`, so the review can read it directly).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MusterAnswers {
    /// Who wrote the message answered.
    pub from: Vec<Address>,
    /// Its subject.
    pub subject: Option<String>,
    /// The first words of it.
    pub snippet: String,
    /// When it arrived.
    pub received_at: Option<String>,
    /// Its full text, when muster gave it (`inReplyTo.text`); `None`: only the snippet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A draft muster no longer has is gone — unless a decision on it is in flight (queued or
/// sending), which settles it itself, or it already ended.
async fn mark_deleted_in_muster(store: &Store, item_id: i64, state: ItemState) -> Result<()> {
    if !state.is_final() && !matches!(state, ItemState::Queued | ItemState::Sending) {
        store
            .apply_item_event(
                item_id,
                crate::domain::ItemEvent::Vanished,
                Some("deleted in muster"),
            )
            .await?;
    }
    Ok(())
}

/// Re-fetch one draft (after `plugin.draft.changed`), and the routes of its message.
pub async fn sync_muster_draft(
    store: &Store,
    account: &Account,
    client: &MusterClient,
    draft_id: &str,
) -> Result<MusterSyncReport> {
    let mut report = MusterSyncReport::default();
    let draft = match client.get_draft(draft_id).await {
        Ok(draft) => draft,
        Err(countersign_muster::Error::NotFound { .. }) => {
            if let Some(item_id) = store.find_item(&account.id, draft_id).await? {
                let state = store.get_item(item_id).await?.summary.state;
                mark_deleted_in_muster(store, item_id, state).await?;
            }
            return Ok(report);
        }
        // A draft this client cannot read: the full sync mirrors it with its warning.
        Err(countersign_muster::Error::BadResponse { .. }) => {
            return sync_muster(store, account, client).await
        }
        Err(e) => return Err(e.into()),
    };
    report.routes += mirror_routes(store, account, client, &draft.message_id, &mut report).await?;
    record(store, account, &draft, &mut report).await?;
    // The mirror is as fresh as muster's last event: say so in the status bar.
    store.record_sync_success(&account.id, None, false).await?;
    Ok(report)
}

/// Re-fetch the routes of the message a route belongs to (after `plugin.route.changed`).
/// muster cannot look a route up by id, so a route never seen before is found through the
/// message list.
pub async fn sync_muster_route(
    store: &Store,
    account: &Account,
    client: &MusterClient,
    route_id: &str,
) -> Result<MusterSyncReport> {
    let message_id = match store.route_message(&account.id, route_id).await? {
        Some(message_id) => Some(message_id),
        None => client
            .list_messages(None)
            .await?
            .records
            .into_iter()
            .find(|m| m.routes.iter().any(|r| r == route_id))
            .map(|m| m.id),
    };
    let Some(message_id) = message_id else {
        return Ok(MusterSyncReport::default());
    };
    let mut report = MusterSyncReport::default();
    report.routes = mirror_routes(store, account, client, &message_id, &mut report).await?;
    store.record_sync_success(&account.id, None, false).await?;
    Ok(report)
}

/// Mirror the routes of one message; one that cannot be read, or is in a state the mirror
/// cannot hold, is named in `report.unreadable` and the others are mirrored.
async fn mirror_routes(
    store: &Store,
    account: &Account,
    client: &MusterClient,
    message_id: &str,
    report: &mut MusterSyncReport,
) -> Result<usize> {
    let routes = resync::retrying(|| client.list_routes(message_id)).await?;
    for odd in &routes.unreadable {
        report.unreadable.push(unreadable_sentence("route", odd));
    }
    let mut mirrored = 0;
    for route in &routes.records {
        match route_record(account, route) {
            Some(record) => {
                store.upsert_route(&record).await?;
                mirrored += 1;
            }
            None => report.unreadable.push(format!(
                "muster says route {} is '{}', which Countersign does not know",
                route.id,
                route.state.as_str()
            )),
        }
    }
    Ok(mirrored)
}

/// The sentence for a record muster sent that could not be read.
fn unreadable_sentence(kind: &str, odd: &Unreadable) -> String {
    match &odd.id {
        Some(id) => format!(
            "muster sent a {kind} Countersign cannot read ({kind} {id}): {}",
            odd.reason
        ),
        None => format!(
            "muster sent a {kind} Countersign cannot read (without an id): {}",
            odd.reason
        ),
    }
}

/// The mirror's record of a route, or `None` for a state the mirror does not know (the route
/// is then left out: the mirror keeps only the states of the contract).
fn route_record(account: &Account, route: &Route) -> Option<RouteRecord> {
    Some(RouteRecord {
        account_id: account.id.clone(),
        route_id: route.id.clone(),
        message_id: route.message_id.clone(),
        session: route.session.clone(),
        state: match route.state {
            countersign_muster::RouteState::Relayed => RouteState::Relayed,
            countersign_muster::RouteState::SendFailed => RouteState::SendFailed,
            countersign_muster::RouteState::Redraft => RouteState::Redraft,
            countersign_muster::RouteState::TimedOut => RouteState::TimedOut,
            countersign_muster::RouteState::Fallback => RouteState::Fallback,
            countersign_muster::RouteState::Unknown(_) => return None,
        },
        routed_via: Some(route.routed_via.clone()).filter(|r| !r.is_empty()),
        redraft_of: route.redraft_of.clone(),
        redraft_count: route.redraft_count,
        reason: route.reason.clone(),
        created_at: muster_time(&route.created_at),
        updated_at: muster_time(&route.updated_at),
    })
}

fn muster_time(text: &str) -> chrono::DateTime<Utc> {
    parse_time(text).unwrap_or_else(|_| Utc::now())
}

async fn record(
    store: &Store,
    account: &Account,
    draft: &PluginDraft,
    report: &mut MusterSyncReport,
) -> Result<()> {
    let observed = observe(account, draft)?;
    let outcome = store.record_draft(&observed).await?;
    report.drafts += 1;
    if outcome.created {
        report.new_items += 1;
    } else if outcome.new_version {
        report.new_versions += 1;
    }
    let refusal = match (&draft.state, &draft.check) {
        (DraftState::Failed, _) => Some((RefusalKind::SendFailed, refusal_reason(draft))),
        (_, CheckState::Refused) => Some((
            RefusalKind::CheckRefused,
            draft
                .check_detail
                .clone()
                .unwrap_or_else(|| "the plugin's check refused it".into()),
        )),
        _ => None,
    };
    if let Some((kind, reason)) = refusal {
        let key = format!("muster:{}:{}:{}", account.id, draft.id, kind.as_str());
        if let Some(new) = store
            .record_refusal(outcome.item_id, kind, &reason, &key)
            .await?
        {
            report.new_refusals.push(new);
        }
    }
    Ok(())
}

/// Why no decision may bind to a draft in a state Countersign does not know: what muster
/// would do with it cannot be told. `None` for the states of the contract.
pub fn unknown_state_reason(draft: &PluginDraft) -> Option<String> {
    match (&draft.state, &draft.check) {
        (DraftState::Unknown(state), _) => Some(format!(
            "muster says this draft is '{state}', which Countersign does not know; decide it in \
             muster"
        )),
        // The check matters only while the draft waits for the owner.
        (DraftState::Pending, CheckState::Unknown(check)) => Some(format!(
            "muster says this draft's check is '{check}', which Countersign does not know; \
             decide it in muster"
        )),
        _ => None,
    }
}

/// The item state a muster draft is shown in, and the reason that goes with it.
pub fn observed_state(draft: &PluginDraft) -> (ItemState, Option<String>) {
    // Shown, with the state muster gave, as a conflict: it needs the owner's eyes, and no
    // decision can bind to it (see `unknown_state_reason`).
    if let Some(reason) = unknown_state_reason(draft) {
        return (ItemState::Conflict, Some(reason));
    }
    match (&draft.state, &draft.check) {
        (DraftState::Pending, CheckState::Awaiting) => (ItemState::AwaitingCheck, None),
        (DraftState::Pending, CheckState::Refused) => (
            ItemState::Rejected,
            Some(
                draft
                    .check_detail
                    .clone()
                    .unwrap_or_else(|| "the plugin's check refused it".into()),
            ),
        ),
        (DraftState::Pending, _) => (ItemState::Pending, None),
        (DraftState::Approved, _) => (
            ItemState::Sending,
            Some("queued at the plugin — not sent yet".into()),
        ),
        (DraftState::Sent, _) => (ItemState::Sent, None),
        (DraftState::Failed, _) => (ItemState::SendFailed, Some(refusal_reason(draft))),
        (DraftState::Rejected, CheckState::Refused) => (
            ItemState::Rejected,
            Some(format!(
                "refused by the plugin's check: {}",
                draft.check_detail.as_deref().unwrap_or("no reason given")
            )),
        ),
        (DraftState::Rejected, _) => (ItemState::Rejected, None),
        // Answered above; kept whole so a new arm is never a panic.
        (DraftState::Unknown(_), _) => (ItemState::Conflict, unknown_state_reason(draft)),
    }
}

/// The plugin's reason for not sending; a draft the chief filed has no route to hand back to,
/// so muster notes the refusal to the chief instead of opening a redraft.
fn refusal_reason(draft: &PluginDraft) -> String {
    let detail = draft
        .result
        .as_ref()
        .and_then(|r| r.detail.clone())
        .unwrap_or_else(|| "the plugin could not send it".into());
    if draft.route_id.is_none() {
        format!("{detail} (noted to the chief, who filed it; no redraft)")
    } else {
        detail
    }
}

fn observe(account: &Account, draft: &PluginDraft) -> Result<ObservedDraft> {
    let (state, reason) = observed_state(draft);
    let from = parse_addresses(&draft.in_reply_to.from);
    let answers = MusterAnswers {
        from: from.clone(),
        subject: Some(draft.in_reply_to.subject.clone()).filter(|s| !s.is_empty()),
        snippet: draft.in_reply_to.snippet.clone(),
        received_at: draft.in_reply_to.received_at.clone(),
        text: draft
            .in_reply_to
            .text
            .clone()
            .filter(|t| !t.trim().is_empty()),
    };
    let subject = if draft.in_reply_to.subject.is_empty() {
        String::new()
    } else if draft.in_reply_to.subject.to_lowercase().starts_with("re:") {
        draft.in_reply_to.subject.clone()
    } else {
        format!("Re: {}", draft.in_reply_to.subject)
    };
    Ok(ObservedDraft {
        account_id: account.id.clone(),
        source: Source::Muster,
        external_id: draft.id.clone(),
        version: draft.updated_at.clone(),
        content: DraftContent::Text(draft.text.clone()),
        observed_state: state,
        gmail_internal_date: None,
        thread_id: None,
        subject,
        from_addr: if draft.route_id.is_none() {
            // muster's `reply_draft`: the chief wrote it itself, on no route.
            format!("filed by the chief (via {})", draft.plugin)
        } else {
            format!("{} (via {})", draft.session, draft.plugin)
        },
        recipients: super::gmail::addresses(&from),
        snippet: super::gmail::snippet(&draft.text),
        muster: MusterFields {
            route_id: draft.route_id.clone(),
            plugin: Some(draft.plugin.clone()),
            session: Some(draft.session.clone()),
            message_ref: Some(draft.message_id.clone()),
            check_state: Some(draft.check.as_str().into()),
            check_detail: draft.check_detail.clone(),
            redraft_of: draft.redraft_of.clone(),
            redraft_number: draft.redraft_number,
            undecidable_reason: unknown_state_reason(draft),
        },
        answers_json: Some(serde_json::to_string(&answers).map_err(|e| Error::Encode {
            what: "the answered message",
            detail: e.to_string(),
        })?),
        state_reason: reason,
    })
}

/// Mirror a draft muster sent that could not be read, when it has an id: an item in conflict
/// with the warning as its reason, which no decision may bind to. What could be read of it
/// (its text, subject, session) is shown; its version is its `updatedAt` when it has one, else
/// a fingerprint of the record, so a change of it is a new version.
async fn record_unreadable(
    store: &Store,
    account: &Account,
    odd: &Unreadable,
    report: &mut MusterSyncReport,
) -> Result<()> {
    let Some(id) = &odd.id else {
        return Ok(());
    };
    let warning = format!(
        "muster sent a draft Countersign cannot read: {}",
        odd.reason
    );
    let text_at = |pointer: &str| {
        odd.raw
            .pointer(pointer)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let raw = serde_json::to_string_pretty(&odd.raw).map_err(|e| Error::Encode {
        what: "the unreadable draft",
        detail: e.to_string(),
    })?;
    let version = text_at("/updatedAt")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            let digest = DraftContent::Text(raw.clone()).digest();
            format!("unreadable:{}", &digest[..16.min(digest.len())])
        });
    // The reply as muster wrote it when that much is readable, else the record itself.
    let text = text_at("/text").unwrap_or(raw);
    let subject = text_at("/inReplyTo/subject").unwrap_or_default();
    let from = text_at("/inReplyTo/from").unwrap_or_default();
    let session = text_at("/session");
    let plugin = text_at("/plugin");
    let observed = ObservedDraft {
        account_id: account.id.clone(),
        source: Source::Muster,
        external_id: id.clone(),
        version,
        content: DraftContent::Text(text.clone()),
        observed_state: ItemState::Conflict,
        gmail_internal_date: None,
        thread_id: None,
        subject: if subject.is_empty() || subject.to_lowercase().starts_with("re:") {
            subject
        } else {
            format!("Re: {subject}")
        },
        from_addr: match (&session, &plugin) {
            (Some(session), Some(plugin)) => format!("{session} (via {plugin})"),
            _ => "muster".into(),
        },
        recipients: super::gmail::addresses(&parse_addresses(&from)),
        snippet: super::gmail::snippet(&text),
        muster: MusterFields {
            plugin,
            session,
            message_ref: text_at("/messageId"),
            undecidable_reason: Some(warning.clone()),
            ..MusterFields::default()
        },
        answers_json: None,
        state_reason: Some(warning),
    };
    let outcome = store.record_draft(&observed).await?;
    report.drafts += 1;
    if outcome.created {
        report.new_items += 1;
    } else if outcome.new_version {
        report.new_versions += 1;
    }
    Ok(())
}

/// Read an address list such as `Ana <ana@example.com>` with the renderer's header parser.
fn parse_addresses(text: &str) -> Vec<Address> {
    let clean: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    let head = format!("From: {clean}\r\n\r\n");
    let parsed = render_message(head.as_bytes(), &RenderOptions::default()).from;
    if parsed.is_empty() && !clean.trim().is_empty() {
        return vec![Address {
            name: None,
            email: clean.trim().to_string(),
        }];
    }
    parsed
}

/// How far a message has gone through muster's redraft bound, in words: "redraft 2 of 2: the
/// next refusal goes to the chief".
pub fn redraft_bound(redraft_number: u32) -> Option<String> {
    match redraft_number {
        0 => None,
        n if n >= MAX_ROUTE_REDRAFTS => Some(format!(
            "redraft {n} of {MAX_ROUTE_REDRAFTS}: the next refusal goes to the chief"
        )),
        n => Some(format!(
            "redraft {n} of {MAX_ROUTE_REDRAFTS}: a refusal hands it back to the session once more"
        )),
    }
}
