//! What a selection of several drafts amounts to, for the confirmation a bulk decision asks
//! first: how many, from which accounts, and to whom — every distinct To/Cc/Bcc address of
//! the versions the rows showed, so the owner sees who hears from them before saying yes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::decide::Listed;
use crate::error::Result;
use crate::store::Store;

/// A selection summed up for the owner.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SelectionSummary {
    /// How many drafts are selected.
    pub count: usize,
    /// The accounts they come from, as the owner named them ("Label <address>", or the
    /// address alone), in the order the accounts were added.
    pub accounts: Vec<String>,
    /// Every distinct recipient (To, Cc and Bcc; a muster reply's addressee), by address
    /// compared without case, sorted; with the first display name seen for it.
    pub recipients: Vec<String>,
}

/// Sum up the drafts `listed`, each at the version its row showed (what a bulk decision binds
/// to). An item or version the mirror does not hold is an error: the owner's list is stale.
pub async fn summarize(store: &Store, listed: &[Listed]) -> Result<SelectionSummary> {
    let mut account_ids = Vec::new();
    // Lower-cased address → how it is shown.
    let mut recipients = BTreeMap::new();
    for one in listed {
        let item = store.get_item(one.id).await?;
        let version = store.version(one.id, &one.version).await?;
        if !account_ids.contains(&item.summary.account_id) {
            account_ids.push(item.summary.account_id.clone());
        }
        for address in crate::review::addressees(&item, &version) {
            recipients
                .entry(address.email.to_lowercase())
                .or_insert_with(|| match &address.name {
                    Some(name) if !name.is_empty() => format!("{name} <{}>", address.email),
                    _ => address.email.clone(),
                });
        }
    }
    let mut accounts = Vec::new();
    for account in store.list_accounts().await? {
        if account_ids.contains(&account.id) {
            let profile = account.profile;
            accounts.push(
                if profile.label.is_empty() || profile.label == profile.address {
                    profile.address
                } else {
                    format!("{} <{}>", profile.label, profile.address)
                },
            );
        }
    }
    Ok(SelectionSummary {
        count: listed.len(),
        accounts,
        recipients: recipients.into_values().collect(),
    })
}
