//! What `show` prints: core's review of the item (the same one the desktop app shows), with the
//! item's own fields at the top level and the refusal reasons spelled out.

use anyhow::Result;
use countersign_core::answered::AnsweredMessage;
use countersign_core::render::ReviewView;
use countersign_core::review::{review_detail, ReviewDetail, ReviewDiff, VersionInfo};
use countersign_core::store::{AuditEntry, Decision, Item, Refusal, RouteRecord};
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
    /// Headers, bodies (text and sanitized HTML), attachments, flags and warnings of the
    /// current version.
    pub view: ReviewView,
    /// Every version, oldest first.
    pub versions: Vec<VersionInfo>,
    /// Changes against the previous version or the refused draft.
    pub diff: Option<ReviewDiff>,
    /// muster: every route of the message answered, oldest first. Empty for Gmail.
    pub routes: Vec<RouteRecord>,
    /// muster: how far the message is through the redraft bound, in words.
    pub redraft_bound: Option<String>,
    /// Decisions made on it.
    pub decisions: Vec<Decision>,
    /// Refusals (failed sends, refused checks, conflicts), oldest first.
    pub refusals: Vec<Refusal>,
    /// The audit trail.
    pub audit: Vec<AuditEntry>,
    /// Remote content is shown in this rendering.
    pub remote_allowed: bool,
    /// Why it was refused, newest reason first: the plugin's, its check's, Google's.
    pub refusal_reason: Option<String>,
    /// Gmail: why this account cannot send, when its granted scopes do not allow it.
    pub send_refusal: Option<String>,
    /// What the draft answers: rendered in full when known, else its snippet; Gmail: the
    /// thread's other messages.
    pub answered: Option<AnsweredMessage>,
    /// Gmail: the draft in Gmail's web app.
    pub gmail_link: Option<String>,
}

impl ItemDetail {
    /// Read and render it all from the mirror.
    pub async fn load(store: &Store, id: i64) -> Result<ItemDetail> {
        let ReviewDetail {
            shown,
            changed_since: _,
            item,
            view,
            versions,
            diff,
            routes,
            redraft_bound,
            decisions,
            refusals,
            audit,
            remote_allowed,
            answered,
            gmail_link,
        } = review_detail(store, id, false).await?;
        let account = store.get_account(&item.summary.account_id).await?;
        let send_refusal = countersign_core::actions::send_refusal(&account);
        let refusal_reason = refusals.last().map(|r| r.reason.clone()).or_else(|| {
            (item.summary.state == ItemState::SendFailed)
                .then(|| item.summary.state_reason.clone())
                .flatten()
        });
        Ok(ItemDetail {
            shown_version: shown.version,
            shown_digest: shown.digest,
            item,
            view,
            versions,
            diff,
            routes,
            redraft_bound,
            decisions,
            refusals,
            audit,
            remote_allowed,
            refusal_reason,
            send_refusal,
            answered,
            gmail_link,
        })
    }
}
