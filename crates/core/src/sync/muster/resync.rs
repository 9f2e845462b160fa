//! A whole muster sync: the drafts and messages lists, and the routes of every message
//! ([`MusterScope::Full`]) or of those that changed ([`MusterScope::Changed`], the re-sync after
//! a reconnect). Each read that fails for want of an answer is tried again on its own.

use std::collections::BTreeSet;

use countersign_muster::{MusterClient, MusterEvent};

use super::{
    mark_deleted_in_muster, mirror_routes, record, record_unreadable, unreadable_sentence,
};
use super::{sync_muster_draft, sync_muster_route, MusterSyncReport};
use crate::error::Result;
use crate::reachability::{Failure, Reach, MUSTER_SIGN_IN_AGAIN};
use crate::store::{Account, Store};

/// How much a muster sync reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MusterScope {
    /// The drafts, the messages and the routes of every message: after a start, and every few
    /// minutes (a route can change on its own, a timed-out one, with no draft changing).
    Full,
    /// The drafts and the messages, and the routes only of the messages with a draft that is
    /// new or has a new `updatedAt`, or with a route the mirror has not seen. muster offers no
    /// "changed since" (its stream has no event ids and no replay, its lists no updated-after
    /// filter), so this is the re-sync after a reconnect: 2 requests when nothing changed,
    /// instead of 2 + one per message.
    Changed,
}

/// Mirror every draft and route of the instance.
pub async fn sync_muster(
    store: &Store,
    account: &Account,
    client: &MusterClient,
) -> Result<MusterSyncReport> {
    sync_muster_scoped(store, account, client, MusterScope::Full).await
}

/// Mirror the instance's drafts, and the routes `scope` says.
pub async fn sync_muster_scoped(
    store: &Store,
    account: &Account,
    client: &MusterClient,
    scope: MusterScope,
) -> Result<MusterSyncReport> {
    // Each record is read on its own: one muster sends oddly never stops the others.
    let listed_drafts = retrying(|| client.list_drafts(None)).await?;
    let listed_messages = retrying(|| client.list_messages(None)).await?;
    let mut report = MusterSyncReport::default();
    for odd in &listed_messages.unreadable {
        report.unreadable.push(unreadable_sentence("message", odd));
    }
    let drafts = listed_drafts.records;
    let known: std::collections::HashMap<String, String> = store
        .item_versions(&account.id)
        .await?
        .into_iter()
        .map(|(_, external_id, version, _)| (external_id, version))
        .collect();
    let mut message_ids = BTreeSet::new();
    for message in listed_messages.records {
        let mut changed = scope == MusterScope::Full;
        for route in &message.routes {
            if changed {
                break;
            }
            changed = store.route_message(&account.id, route).await?.is_none();
        }
        if changed {
            message_ids.insert(message.id);
        }
    }
    message_ids.extend(
        drafts
            .iter()
            .filter(|d| scope == MusterScope::Full || known.get(&d.id) != Some(&d.updated_at))
            .map(|d| d.message_id.clone()),
    );
    // Routes first: a draft's story refers to them.
    for message_id in &message_ids {
        report.routes += mirror_routes(store, account, client, message_id, &mut report).await?;
    }
    for draft in &drafts {
        record(store, account, draft, &mut report).await?;
    }
    for odd in &listed_drafts.unreadable {
        report.unreadable.push(unreadable_sentence("draft", odd));
        record_unreadable(store, account, odd, &mut report).await?;
    }
    // The list holds every draft in every state: one missing from it was deleted in muster.
    // Only drafts still waiting for the owner change; a decision in flight settles its own.
    // A draft that could not be read without an id could be any of them: none is called gone.
    if listed_drafts.unreadable.iter().all(|odd| odd.id.is_some()) {
        let listed: BTreeSet<&str> = drafts
            .iter()
            .map(|d| d.id.as_str())
            .chain(
                listed_drafts
                    .unreadable
                    .iter()
                    .filter_map(|o| o.id.as_deref()),
            )
            .collect();
        for (item_id, external_id, _, state) in store.item_versions(&account.id).await? {
            if !listed.contains(external_id.as_str()) {
                mark_deleted_in_muster(store, item_id, state).await?;
            }
        }
    }
    store
        .record_sync_success(&account.id, None, scope == MusterScope::Full)
        .await?;
    Ok(report)
}

/// How many times one read of a sync is tried when muster (or a proxy in front of it) did not
/// answer it: a failed call is tried again on its own, not the whole sync.
const CALL_TRIES: u32 = 3;

/// `call`, tried again (after 250 ms, then 500 ms) while it fails for want of an answer (a
/// transport error, a 5xx, a proxy's page). A refusal is final at once. Only reads go through
/// here: repeating them changes nothing at muster.
pub(super) async fn retrying<T, F, Fut>(
    call: F,
) -> std::result::Result<T, countersign_muster::Error>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, countersign_muster::Error>>,
{
    let mut wait = std::time::Duration::from_millis(250);
    let mut tries = 1;
    loop {
        match call().await {
            Err(e)
                if tries < CALL_TRIES
                    && crate::reachability::classify_muster(&e) == Failure::Unreachable =>
            {
                tracing::debug!(error = %e, "a muster read failed; trying that call again");
                tokio::time::sleep(wait).await;
                wait *= 2;
                tries += 1;
            }
            other => return other,
        }
    }
}

/// Apply one event from muster's stream to the mirror.
pub async fn apply_event(
    store: &Store,
    account: &Account,
    client: &MusterClient,
    event: &MusterEvent,
) -> Result<Option<MusterSyncReport>> {
    let report = match event {
        MusterEvent::Connected | MusterEvent::Resync => sync_muster(store, account, client).await?,
        MusterEvent::DraftChanged { id } => sync_muster_draft(store, account, client, id).await?,
        MusterEvent::RouteChanged { id } => sync_muster_route(store, account, client, id).await?,
        MusterEvent::Disconnected { reason } => {
            store
                .record_reachability(&account.id, Reach::Failed(Failure::Unreachable, reason))
                .await?;
            return Ok(None);
        }
        MusterEvent::SignInAgain => {
            store
                .record_reachability(
                    &account.id,
                    Reach::Failed(Failure::Refused, MUSTER_SIGN_IN_AGAIN),
                )
                .await?;
            return Ok(None);
        }
    };
    Ok(Some(report))
}
