//! What `show` prints: core's review of the item (the same one the desktop app shows), with the
//! item's own fields at the top level and the refusal reasons spelled out.

use anyhow::Result;
use countersign_core::review::{review_detail, ReviewContent};
use countersign_core::store::Item;
use countersign_core::{ItemState, Store};
use serde::Serialize;

/// Everything `show` prints about one item.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemDetail {
    /// The version shown here: `approve --version` and `reject --version` bind to it.
    pub shown_version: String,
    /// sha256 (hex) of that version's bytes.
    pub shown_digest: String,
    /// The item's fields (id, state, subject, muster fields…).
    #[serde(flatten)]
    pub item: Item,
    /// What the app's review shows: the rendering, versions, diff, routes, decisions,
    /// refusals, audit, the message answered.
    #[serde(flatten)]
    pub content: ReviewContent,
    /// Why it was refused, newest reason first: the plugin's, its check's, Google's.
    pub refusal_reason: Option<String>,
    /// Gmail: why this account cannot send, when its granted scopes do not allow it.
    pub send_refusal: Option<String>,
}

impl ItemDetail {
    /// Read and render it all from the mirror.
    pub async fn load(store: &Store, id: i64) -> Result<ItemDetail> {
        let detail = review_detail(store, id, false).await?;
        let account = store.get_account(&detail.item.summary.account_id).await?;
        let send_refusal = countersign_core::actions::send_refusal(&account);
        let summary = &detail.item.summary;
        let refusal_reason = detail
            .content
            .refusals
            .last()
            .map(|r| r.reason.clone())
            .or_else(|| {
                (summary.state == ItemState::SendFailed)
                    .then(|| summary.state_reason.clone())
                    .flatten()
            });
        Ok(ItemDetail {
            shown_version: detail.shown.version,
            shown_digest: detail.shown.digest,
            item: detail.item,
            content: detail.content,
            refusal_reason,
            send_refusal,
        })
    }
}

/// Edit the version `shown` of a Gmail draft: `subject` and the text read from `text_file`
/// (`-`: standard input) replace the current ones, each only when given. The new version.
pub async fn edit(
    store: &Store,
    services: &countersign_core::services::Services,
    shown: &countersign_core::decide::Shown,
    subject: Option<&str>,
    text_file: Option<&std::path::Path>,
    actor: &str,
) -> Result<countersign_core::decide::Shown> {
    use anyhow::Context;
    use countersign_core::edit::EditForm;
    if subject.is_none() && text_file.is_none() {
        anyhow::bail!(
            "cannot edit item {}: say what changes (--subject, --text-file)",
            shown.id
        );
    }
    let detail = review_detail(store, shown.id, false).await?;
    let (current_subject, current_text) = match detail.content.edit {
        EditForm::Text { subject, text, .. } => (subject, text),
        EditForm::Refused { why } => anyhow::bail!("cannot edit item {}: {why}", shown.id),
    };
    let text = match text_file {
        None => current_text,
        Some(path) if path.as_os_str() == "-" => {
            std::io::read_to_string(std::io::stdin()).context("cannot read the text from stdin")?
        }
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the text from {}", path.display()))?,
    };
    let subject = subject.map(str::to_owned).unwrap_or(current_subject);
    Ok(countersign_core::edit::save_edit(store, services, shown, &subject, &text, actor).await?)
}
