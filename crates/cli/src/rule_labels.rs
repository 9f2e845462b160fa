//! The Gmail label scope of `rules add/edit --label NAME`: the owner names a label as Gmail
//! shows it; the rule keeps the label's id (stable across renames) and is shown by name.
//! A label is written by the agent too (it may label its own drafts): it picks drafts, it
//! does not vouch for them.

use anyhow::{bail, Result};
use countersign_core::store::MirroredLabel;
use countersign_core::Store;

/// The id of the user label `name` (case-insensitive) among the labels mirrored for
/// `account` (or every account); refused when none or several accounts' labels have it.
pub async fn label_id(store: &Store, account: Option<&str>, name: &str) -> Result<String> {
    let found: Vec<MirroredLabel> = store
        .labels(account)
        .await?
        .into_iter()
        .filter(|l| l.user && l.name.eq_ignore_ascii_case(name.trim()))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => bail!(
            "cannot scope the rule to the label {name:?}: no Gmail label of that name is mirrored \
             (make it in Gmail, then run `countersign sync`)"
        ),
        [first, ..] if found.iter().all(|l| l.id == first.id) => Ok(first.id.clone()),
        _ => bail!(
            "cannot scope the rule to the label {name:?}: several accounts have a label of that \
             name (add --account ID)"
        ),
    }
}

/// How a rule's label scope reads: the label's name, or its id when the label is no longer
/// mirrored (deleted in Gmail).
pub async fn label_words(store: &Store, label_id: &str) -> Result<String> {
    let name = store
        .labels(None)
        .await?
        .into_iter()
        .find(|l| l.id == label_id)
        .map(|l| l.name);
    Ok(match name {
        Some(name) => format!("label {name}"),
        None => format!("label {label_id} (no longer in Gmail)"),
    })
}
