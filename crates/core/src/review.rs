//! Everything the owner needs to judge one item, assembled from the mirror: the rendered view of
//! the current version with its safety flags, the versions and the diff against the previous
//! one (or, for a muster redraft, against the refused draft), the route chain, the decisions,
//! the refusals and the audit trail. The desktop app and `countersign show` both show this.

use crate::store::Found;
use std::path::Path;

use serde::Serialize;

use crate::decide::Shown;
use crate::domain::Source;
use crate::error::{Error, Result};
use crate::render::{
    attachment_bytes, diff_versions, render_message, render_plain_text, AttachmentMeta,
    AttachmentPreview, DraftBytes, ParentMessage, RenderOptions, RenderedDraft, ReviewView,
    VersionDiff,
};
use crate::store::{
    AuditEntry, Decision, DraftContent, DraftVersion, Item, Refusal, RouteRecord, Store,
};
use crate::sync::muster::redraft_bound;

/// The redraft line of a reply written on muster's fallback route.
const CHIEFS_REPLY: &str = "the chief's reply — a refusal is final";

/// One version in the history list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    /// Gmail message id / muster updatedAt.
    pub version: String,
    /// sha256 of its bytes.
    pub sha256: String,
    /// When Countersign first saw it.
    pub first_seen_at: chrono::DateTime<chrono::Utc>,
    /// Size in bytes.
    pub size: usize,
}

/// What the diff is against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DiffBase {
    /// The previous version of the same draft (the agent updated it).
    PreviousVersion,
    /// The draft this redraft replaces (refused by the plugin or the owner).
    RefusedDraft,
    /// The version the owner was reading when this one arrived.
    ShownVersion,
    /// The version the owner edited into this one (in the app, before approving).
    BeforeOwnerEdit,
}

/// A diff with what it compares against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewDiff {
    /// Against what.
    pub base: DiffBase,
    /// Its version.
    pub base_version: String,
    /// The changes.
    pub diff: VersionDiff,
}

/// Everything about one item.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewDetail {
    /// What a decision taken on this detail binds to: the version rendered here and the
    /// sha256 of its bytes.
    pub shown: Shown,
    /// The version the owner was reading changed into this one while on screen: the changes
    /// since then (asked for with `since`; `None` when it is the same version).
    pub changed_since: Option<ReviewDiff>,
    /// The item. The app reads only its queue line (the rest is for the CLI's `show`), so the
    /// UI's type is that line: ts-rs would otherwise print the line's fields again in `Item`.
    #[cfg_attr(feature = "ui-types", ts(as = "crate::store::ItemSummary"))]
    pub item: Item,
    /// The rendering and the history (flattened: the same fields as before, beside `item`).
    #[serde(flatten)]
    #[cfg_attr(feature = "ui-types", ts(flatten))]
    pub content: ReviewContent,
}

/// What the review shows beside the item's own fields: the app's detail and the CLI's `show`
/// both carry it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewContent {
    /// The current version, rendered: headers, bodies (text and sanitized HTML), attachments,
    /// flags and warnings.
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
    /// What the draft answers, in full where it is known; Gmail: the thread's other messages.
    pub answered: Option<crate::answered::AnsweredMessage>,
    /// Gmail: the draft in Gmail's web app.
    pub gmail_link: Option<String>,
    /// What "Edit" opens with, or why this draft cannot be edited here.
    pub edit: crate::edit::EditForm,
    /// The current version is the owner's own edit.
    pub edited_by_owner: bool,
    /// Why an armed rule that matched the current version left it to the owner ("held: rule R
    /// would approve, but …"), if one did.
    pub rule_hold: Option<String>,
}

/// Assemble the review of `item_id`. `load_remote` is the owner's "load remote content for this
/// draft"; the settings may allow it always.
pub async fn review_detail(store: &Store, item_id: i64, load_remote: bool) -> Result<ReviewDetail> {
    review_detail_since(store, item_id, load_remote, None).await
}

/// [`review_detail`] for an owner who was reading version `since` of the item: when the
/// current version is another one, `changed_since` holds the changes from what they read.
pub async fn review_detail_since(
    store: &Store,
    item_id: i64,
    load_remote: bool,
    since: Option<&str>,
) -> Result<ReviewDetail> {
    let mut item = store.get_item(item_id).await?;
    let account = store.get_account(&item.summary.account_id).await?;
    let settings = store.settings().await?;
    let allow_remote =
        load_remote || settings.remote_content == crate::store::RemoteContentPolicy::Allow;
    let versions = store.versions(item_id).await?;
    let current = versions
        .iter()
        .find(|v| v.version == item.summary.version)
        .or(versions.last())
        .found("the current version of", store.draft_words(item_id).await?)?;
    let options = RenderOptions {
        allow_remote_content: allow_remote,
        owner_domains: owner_domains(&account.profile.address, account.profile.kind),
        parent: parent_of(&item),
        // Gmail gives every draft a thread id, a new message too: only a known parent (or the
        // draft's own In-Reply-To / "Re:" subject, which the renderer reads) makes it a reply.
        is_reply: item.answers_json.is_some(),
    };
    let view = render_version(current, &options);
    let audit = store.audit_for_item(item_id).await?;
    let edited_by_owner = audit.iter().any(|entry| {
        entry.line.outcome.as_deref() == Some(crate::edit::EDITED_BY_OWNER)
            && entry.line.version.as_deref() == Some(current.version.as_str())
    });
    // The detail knows the size the row does not: an oversized Gmail message is not approvable.
    item.summary.actions =
        crate::actions::allowed_actions(&item.summary, Some(current.content.bytes().len()));
    if store.version_restamped(item_id, &current.version).await? {
        let why = crate::store::stamp_conflict_reason(&current.version);
        crate::actions::refuse_decisions(&mut item.summary.actions, &why);
    }
    if let Some(why) = &item.muster.undecidable_reason {
        crate::actions::refuse_decisions(&mut item.summary.actions, why);
    }
    // The detail knows the body too: one the editor cannot rewrite is not editable.
    let edit = crate::edit::edit_form(item.summary.source, item.summary.state, &current.content);
    for state in &mut item.summary.actions {
        if let (crate::actions::Action::Edit, crate::edit::EditForm::Refused { why }) =
            (state.action, &edit)
        {
            *state = crate::actions::ActionState::from_check(state.action, Err(why.clone()));
        }
    }
    let diff = match previous_version(&versions, current) {
        Some(previous) => Some(ReviewDiff {
            base: if edited_by_owner {
                DiffBase::BeforeOwnerEdit
            } else {
                DiffBase::PreviousVersion
            },
            base_version: previous.version.clone(),
            diff: diff_against(previous, &options, current, &view),
        }),
        None => refused_draft_diff(store, &item, &options, current, &view).await?,
    };
    let changed_since = match since.filter(|v| *v != current.version) {
        Some(read) => versions
            .iter()
            .find(|v| v.version == read)
            .map(|read| ReviewDiff {
                base: DiffBase::ShownVersion,
                base_version: read.version.clone(),
                diff: diff_against(read, &options, current, &view),
            }),
        None => None,
    };
    let (routes, bound) = match (&item.summary.source, &item.muster.message_ref) {
        (Source::Muster, Some(message)) => {
            let routes = store.routes_for_message(&account.id, message).await?;
            // Past the redraft bound muster routes the message to the chief, and the chief may
            // file a reply on no route at all: a refusal of the chief's reply hands it to
            // nobody (muster's MaxRouteRedrafts).
            let bound = if store.chief_filed(&item).await? {
                Some(CHIEFS_REPLY.to_owned())
            } else {
                redraft_bound(item.muster.redraft_number)
            };
            (routes, bound)
        }
        _ => (vec![], None),
    };
    let answered = crate::answered::answered_message(store, &item).await?;
    let gmail_link = (item.summary.source == Source::Gmail).then(|| {
        crate::answered::gmail_draft_link(&account.profile.address, &item.summary.version)
    });
    Ok(ReviewDetail {
        shown: Shown {
            id: item_id,
            version: current.version.clone(),
            digest: current.sha256.clone(),
        },
        changed_since,
        item,
        content: ReviewContent {
            answered,
            gmail_link,
            versions: versions
                .iter()
                .map(|v| VersionInfo {
                    version: v.version.clone(),
                    sha256: v.sha256.clone(),
                    first_seen_at: v.first_seen_at,
                    size: v.content.bytes().len(),
                })
                .collect(),
            decisions: store.decisions_for_item(item_id).await?,
            refusals: store.refusals_for_item(item_id).await?,
            audit,
            edit,
            edited_by_owner,
            remote_allowed: allow_remote,
            routes,
            redraft_bound: bound,
            rule_hold: store
                .evaluations_for_item(item_id)
                .await?
                .into_iter()
                .rev()
                .find(|e| e.version == current.version && e.armed && e.decision_id.is_none())
                .and_then(|e| e.held),
            diff,
            view,
        },
    })
}

/// The current version's source: the raw message as it will leave (lossy UTF-8 for display),
/// or the muster reply text.
pub async fn raw_source(store: &Store, item_id: i64) -> Result<String> {
    let item = store.get_item(item_id).await?;
    let version = store.version(item_id, &item.summary.version).await?;
    Ok(String::from_utf8_lossy(version.content.bytes()).into_owned())
}

/// The reveal rendering of one version (see `render::reveal`): every word, hiding styles
/// removed, what only machines read inline and marked. A muster reply is its text.
pub async fn reveal(store: &Store, item_id: i64, version: &str) -> Result<String> {
    let version = store.version(item_id, version).await?;
    Ok(crate::render::render_reveal(version.content.bytes()))
}

/// One attachment of the current version: its metadata, a safe preview, and its bytes.
pub async fn attachment(
    store: &Store,
    item_id: i64,
    index: usize,
) -> Result<(AttachmentMeta, AttachmentPreview, Vec<u8>)> {
    let item = store.get_item(item_id).await?;
    let version = store.version(item_id, &item.summary.version).await?;
    let DraftContent::Raw(raw) = &version.content else {
        return Err(Error::NotFound {
            what: "attachment",
            id: format!("{} of {}", index + 1, store.draft_words(item_id).await?),
        });
    };
    let Some((meta, bytes)) = attachment_bytes(raw, index) else {
        return Err(Error::NotFound {
            what: "attachment",
            id: format!("{} of {}", index + 1, store.draft_words(item_id).await?),
        });
    };
    let preview = AttachmentPreview::of(&meta, &bytes, 64 * 1024);
    Ok((meta, preview, bytes))
}

/// Save one attachment to `path`, a file the owner chose. The bytes are written as they are and
/// never opened or executed.
pub async fn save_attachment(
    store: &Store,
    item_id: i64,
    index: usize,
    path: &Path,
) -> Result<u64> {
    let (_, _, bytes) = attachment(store, item_id, index).await?;
    std::fs::write(path, &bytes).map_err(|source| Error::SaveFile {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(bytes.len() as u64)
}

/// What a reader of one alternative reads: the text part as it is, or the visible text of the
/// (sanitized) HTML. The CLI prints it; a draft with one alternative gives the same words both
/// ways.
pub fn part_text(view: &ReviewView, part: crate::store::ShownPart) -> String {
    match part {
        crate::store::ShownPart::Text => view.text_body.clone(),
        crate::store::ShownPart::Html => {
            let document = view.html_body.as_str();
            let body = document
                .split_once("<body>")
                .map_or(document, |(_, rest)| rest);
            let body = body.rsplit_once("</body>").map_or(body, |(body, _)| body);
            crate::render::text::html_to_text(body)
        }
    }
}

/// The renderings of a view that differ from each other, so that both were displayed before an
/// approval: the draft carries a text and an HTML alternative of its own (neither derived).
pub fn has_both_alternatives(view: &ReviewView) -> bool {
    !view.text_derived && !view.html_derived && !view.text_body.is_empty()
}

/// A version's bytes rendered without the owner's options (no parent, no owner domains, remote
/// content blocked): what does not depend on them, its warnings and body-level flags.
pub(crate) fn render_bytes(content: &DraftContent) -> ReviewView {
    let options = RenderOptions::default();
    match content {
        DraftContent::Raw(raw) => render_message(raw, &options),
        DraftContent::Text(text) => render_plain_text(text, None, &options),
    }
}

/// `version` of `item` rendered as the review renders it (remote content blocked), with the
/// message it answers: what a rule judges is what the owner would have been shown.
pub(crate) async fn render_as_reviewed(
    store: &Store,
    item: &Item,
    version: &DraftVersion,
) -> Result<(ReviewView, Option<ParentMessage>)> {
    let account = store.get_account(&item.summary.account_id).await?;
    let options = RenderOptions {
        allow_remote_content: false,
        owner_domains: owner_domains(&account.profile.address, account.profile.kind),
        parent: parent_of(item),
        is_reply: item.answers_json.is_some(),
    };
    Ok((render_version(version, &options), options.parent))
}

/// Whom `version` of `item` goes to: a Gmail draft's To, Cc and Bcc; a muster reply's
/// addressee is the sender of the message it answers (the plugin replies to them).
pub(crate) fn addressees(item: &Item, version: &DraftVersion) -> Vec<crate::render::Address> {
    match &version.content {
        DraftContent::Raw(_) => {
            let view = render_bytes(&version.content);
            view.to.into_iter().chain(view.cc).chain(view.bcc).collect()
        }
        DraftContent::Text(_) => parent_of(item).map(|p| p.from).unwrap_or_default(),
    }
}

fn render_version(version: &DraftVersion, options: &RenderOptions) -> ReviewView {
    match &version.content {
        DraftContent::Raw(raw) => render_message(raw, options),
        DraftContent::Text(text) => render_plain_text(text, options.parent.as_ref(), options),
    }
}

fn draft_bytes(content: &DraftContent) -> DraftBytes<'_> {
    match content {
        DraftContent::Raw(raw) => DraftBytes::Message(raw),
        DraftContent::Text(text) => DraftBytes::Text(text),
    }
}

/// The changes from `base` to `current` (already rendered as `view`).
fn diff_against(
    base: &DraftVersion,
    options: &RenderOptions,
    current: &DraftVersion,
    view: &ReviewView,
) -> VersionDiff {
    let base_view = render_version(base, options);
    diff_versions(
        RenderedDraft {
            bytes: draft_bytes(&base.content),
            view: &base_view,
        },
        RenderedDraft {
            bytes: draft_bytes(&current.content),
            view,
        },
    )
}

fn previous_version<'a>(
    versions: &'a [DraftVersion],
    current: &DraftVersion,
) -> Option<&'a DraftVersion> {
    let position = versions.iter().position(|v| v.id == current.id)?;
    position.checked_sub(1).map(|p| &versions[p])
}

async fn refused_draft_diff(
    store: &Store,
    item: &Item,
    options: &RenderOptions,
    current: &DraftVersion,
    view: &ReviewView,
) -> Result<Option<ReviewDiff>> {
    let Some(refused) = &item.muster.redraft_of else {
        return Ok(None);
    };
    let Some(refused_id) = store.find_item(&item.summary.account_id, refused).await? else {
        return Ok(None);
    };
    let refused_item = store.get_item(refused_id).await?;
    let refused_version = store
        .version(refused_id, &refused_item.summary.version)
        .await?;
    Ok(Some(ReviewDiff {
        base: DiffBase::RefusedDraft,
        base_version: refused_version.version.clone(),
        diff: diff_against(&refused_version, options, current, view),
    }))
}

fn parent_of(item: &Item) -> Option<ParentMessage> {
    item.answers_json
        .as_deref()
        .and_then(|json| serde_json::from_str(json).ok())
}

fn owner_domains(address: &str, kind: Source) -> Vec<String> {
    match kind {
        Source::Gmail => address
            .rsplit_once('@')
            .map(|(_, domain)| vec![domain.to_ascii_lowercase()])
            .unwrap_or_default(),
        Source::Muster => vec![],
    }
}
