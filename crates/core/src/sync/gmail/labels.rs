//! The account's Gmail labels and each draft's label ids, mirrored for the label scope of
//! rules and the queue row's chips.
//!
//! - `labels.list` (1 unit) is read when a sync lists the drafts (at start, on "Sync now", at
//!   least every [`super::LISTING_INTERVAL`], whenever history reports a change) and again when
//!   a draft carries a label id the mirrored list does not know (a label made since). An idle
//!   sync stays the one `history.list` request.
//! - A fetched draft's `labelIds` (drafts.get) replace what the mirror held for it.
//! - History's `labelsAdded` / `labelsRemoved` (<https://developers.google.com/gmail/api/reference/rest/v1/users.history/list>)
//!   relabel a draft without a new version (Gmail's `messages.modify` keeps the message id):
//!   they are applied to the draft whose current version is that message.
//!
//! A changed label set lets the rules judge the draft again ([`crate::rules::relabel`]).

use countersign_gmail::{GmailClient, HistoryChanges, LabelKind};

use crate::error::Result;
use crate::store::{MirroredLabel, Store};

/// Read the account's labels into the mirror.
pub(super) async fn refresh(store: &Store, account_id: &str, client: &GmailClient) -> Result<()> {
    let labels: Vec<MirroredLabel> = client
        .list_labels()
        .await?
        .into_iter()
        .map(|l| MirroredLabel {
            account_id: account_id.to_owned(),
            id: l.id,
            name: l.name,
            user: l.kind == LabelKind::User,
        })
        .collect();
    store.replace_labels(account_id, &labels).await
}

/// Read the labels again when some draft carries one the mirror does not know.
pub(super) async fn refresh_if_unknown(
    store: &Store,
    account_id: &str,
    client: &GmailClient,
) -> Result<()> {
    if !store.unknown_item_labels(account_id).await?.is_empty() {
        refresh(store, account_id, client).await?;
    }
    Ok(())
}

/// Keep `label_ids` as the labels of draft `item_id` (just fetched); a change of an existing
/// draft's labels lets the rules look again.
pub(super) async fn keep(
    store: &Store,
    item_id: i64,
    created: bool,
    label_ids: &[String],
) -> Result<()> {
    if store.set_item_labels(item_id, label_ids).await? && !created {
        crate::rules::relabel::labels_changed(store, item_id).await?;
    }
    Ok(())
}

/// Apply history's label changes, oldest first, to the drafts whose current version they
/// name; every draft whose labels changed is judged again.
pub(super) async fn apply_history(
    store: &Store,
    account_id: &str,
    changes: &HistoryChanges,
) -> Result<()> {
    let mut changed = Vec::new();
    for record in &changes.records {
        let edits = record
            .labels_added
            .iter()
            .map(|(m, ids)| (m, ids, true))
            .chain(record.labels_removed.iter().map(|(m, ids)| (m, ids, false)));
        for (message, ids, added) in edits {
            let Some(item_id) = store.item_at_gmail_message(account_id, &message.id).await? else {
                continue;
            };
            let mut labels = store.item_labels(item_id).await?;
            if added {
                labels.extend(ids.iter().cloned());
            } else {
                labels.retain(|l| !ids.contains(l));
            }
            if store.set_item_labels(item_id, &labels).await? && !changed.contains(&item_id) {
                changed.push(item_id);
            }
        }
    }
    for item_id in changed {
        crate::rules::relabel::labels_changed(store, item_id).await?;
    }
    Ok(())
}
