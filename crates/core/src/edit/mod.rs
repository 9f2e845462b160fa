//! "Edit before approving": the owner fixes a Gmail draft's subject or text body instead of
//! sending it back to the agent.
//!
//! Saving writes a new version of the draft to Gmail (`drafts.update`) in which only the
//! subject and the text body changed (see [`mime`]), reads it back as Gmail stores it and
//! records it in the mirror like any new version: it is shown with its diff against the version
//! it replaced, and it must still be approved — an approval binds to the edited version's bytes.
//! The audit log says "edited by the owner" with the digests of both versions.
//!
//! A muster draft is not editable: muster's `decide` carries no text, so the way back is
//! "Reject with a note". Editing needs Gmail to answer: the edited version must be the draft
//! Gmail holds, or the owner would approve bytes no one else can see.

mod mime;

use serde::Serialize;

pub use mime::{editable, rewrite, Editable};

use crate::decide::Shown;
use crate::domain::{ItemState, Source};
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::{DraftContent, NewAuditEntry, Store};

/// The audit outcome of an owner's edit.
pub const EDITED_BY_OWNER: &str = "edited by the owner";

/// What the editor starts with, or why this draft cannot be edited, for the review detail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum EditForm {
    /// The subject and text body to edit.
    Text {
        /// The current subject.
        subject: String,
        /// The current text body.
        text: String,
        /// Saving replaces the draft's HTML version with the edited text.
        replaces_html: bool,
    },
    /// Not editable here, and why.
    Refused {
        /// A sentence for the owner.
        why: String,
    },
}

/// Whether the item in `state` from `source` with `content` can be edited, and with what: the
/// state rule is [`crate::actions::editable`]'s, then the body must be one this editor can
/// rewrite (a text part, at most one HTML alternative).
pub fn edit_form(source: Source, state: ItemState, content: &DraftContent) -> EditForm {
    if let Err(why) = crate::actions::editable(source, state) {
        return EditForm::Refused { why: why.into() };
    }
    match (editable(content.bytes()), content) {
        (
            Editable::Text {
                subject,
                text,
                replaces_html,
            },
            DraftContent::Raw(_),
        ) => EditForm::Text {
            subject,
            text,
            replaces_html,
        },
        (Editable::Not(why), _) => EditForm::Refused { why },
        (_, _) => EditForm::Refused {
            why: "only a Gmail message can be edited".into(),
        },
    }
}

/// Save the owner's edit of the version they were shown: Gmail gets the new version, the
/// mirror records it, the audit says who changed what. Returns the new version, which the
/// owner must review and approve like any other.
pub async fn save_edit(
    store: &Store,
    services: &Services,
    shown: &Shown,
    subject: &str,
    text: &str,
    actor: &str,
) -> Result<Shown> {
    let action = format!("edit {}", store.draft_words(shown.id).await?);
    let item = store.get_item(shown.id).await?;
    let current = store.version(shown.id, &item.summary.version).await?;
    if current.version != shown.version || current.sha256 != shown.digest {
        return Err(Error::ChangedSinceShown {
            action,
            shown: shown.version.clone(),
            current: current.version,
        });
    }
    if let EditForm::Refused { why } =
        edit_form(item.summary.source, item.summary.state, &current.content)
    {
        return Err(Error::refused(action, why));
    }
    let edited = rewrite(current.content.bytes(), subject, text)
        .map_err(|why| Error::refused(&action, why))?;
    if edited == current.content.bytes() {
        return Ok(shown.clone());
    }
    let account = store.get_account(&item.summary.account_id).await?;
    let client = services.gmail(&account).await?;
    // Gmail replaces a draft without a precondition: make sure the agent did not update it
    // since the sync, or the owner's edit would silently drop the agent's newer version.
    let in_gmail = client.get_draft_minimal(&item.summary.external_id).await?;
    if in_gmail.message_id != shown.version {
        return Err(Error::ChangedSinceShown {
            action,
            shown: shown.version.clone(),
            current: in_gmail.message_id,
        });
    }
    let updated = client
        .update_draft(
            &item.summary.external_id,
            &edited,
            item.thread_id.as_deref(),
        )
        .await?;
    // What Gmail now holds is the version to review, byte for byte.
    let stored = client.get_draft_raw(&item.summary.external_id).await?;
    if stored.message_id != updated.message_id {
        return Err(overtaken(
            store,
            &account,
            shown,
            &updated.message_id,
            edited,
            stored,
            item,
            actor,
        )
        .await?);
    }
    let observed = crate::sync::gmail::observed_draft(&account, &stored, item.answers_json);
    store.record_draft(&observed).await?;
    let new = Shown {
        id: shown.id,
        version: stored.message_id.clone(),
        digest: observed.content.digest(),
    };
    audit_edit(store, shown, &new, actor).await?;
    Ok(new)
}

/// The audit row of the owner's edit: `shown` became `edited`.
async fn audit_edit(store: &Store, shown: &Shown, edited: &Shown, actor: &str) -> Result<()> {
    store
        .append_audit(&NewAuditEntry {
            actor: actor.to_string(),
            item_id: Some(shown.id),
            decision_id: None,
            action: "edit".into(),
            version: Some(edited.version.clone()),
            digest: Some(edited.digest.clone()),
            outcome: Some(EDITED_BY_OWNER.into()),
            detail: Some(format!(
                "{EDITED_BY_OWNER}: version {} (sha256 {}) became version {} (sha256 {})",
                shown.version, shown.digest, edited.version, edited.digest
            )),
            view_id: None,
        })
        .await?;
    Ok(())
}

/// The audit outcome of an agent's update that landed between the owner's edit and its
/// read-back.
pub const UPDATED_BY_AGENT_AFTER_EDIT: &str = "updated by the agent right after the owner's edit";

/// The agent updated the draft between `drafts.update` (which answered with the owner's
/// version, `edited_version`) and the read-back (`stored`, the agent's). Each is recorded as
/// what it is: the owner's version — the bytes Countersign wrote, Gmail no longer holds them —
/// as edited by the owner, the agent's as the current version, which the owner has not seen
/// and must review before deciding (a decision binds to the version shown).
#[allow(clippy::too_many_arguments)]
async fn overtaken(
    store: &Store,
    account: &crate::store::Account,
    shown: &Shown,
    edited_version: &str,
    edited: Vec<u8>,
    stored: countersign_gmail::RawDraft,
    item: crate::store::Item,
    actor: &str,
) -> Result<Error> {
    let owners = DraftContent::Raw(edited);
    store
        .keep_version(shown.id, edited_version, &owners)
        .await?;
    audit_edit(
        store,
        shown,
        &Shown {
            id: shown.id,
            version: edited_version.to_string(),
            digest: owners.digest(),
        },
        actor,
    )
    .await?;
    let observed = crate::sync::gmail::observed_draft(account, &stored, item.answers_json);
    store.record_draft(&observed).await?;
    store
        .append_audit(&NewAuditEntry {
            actor: "sync".into(),
            item_id: Some(shown.id),
            decision_id: None,
            action: "edit".into(),
            version: Some(stored.message_id.clone()),
            digest: Some(observed.content.digest()),
            outcome: Some(UPDATED_BY_AGENT_AFTER_EDIT.into()),
            detail: Some(format!(
                "{UPDATED_BY_AGENT_AFTER_EDIT}: the owner's version {edited_version} became the \
                 agent's version {}; the owner has not reviewed it yet",
                stored.message_id
            )),
            view_id: None,
        })
        .await?;
    Ok(Error::EditOvertaken {
        item_id: shown.id,
        edited: edited_version.to_string(),
        current: stored.message_id,
    })
}
