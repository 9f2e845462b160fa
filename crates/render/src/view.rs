//! The review view model: everything a person needs to judge a draft, built from its raw
//! RFC 5322 bytes (Gmail) or its plain text (muster).
//!
//! Building a view never fails and never panics: whatever cannot be read becomes a
//! [`Warning`] that the review shows, rather than an error that hides the draft.

mod addresses;
mod attachments;
mod body;
mod headers;
mod invisible;
mod preview;

use mail_parser::{Message, MessageParser};
use serde::{Deserialize, Serialize};

use super::alternatives::AlternativesDifference;
use super::hidden::HiddenPassage;
use super::machine::MachineText;
use super::repair;
use super::sanitize;
use super::sniff;
use super::styling::UnverifiableStyle;
use super::text;
use super::unicode::{self, InvisibleCharacters};
use crate::flag::{ArchiveListing, DuplicateHeader, Flag};
pub use crate::links::Link;
pub use preview::AttachmentPreview;

use attachments::{cid_images, collect_attachments};
use body::{read_bodies, read_structure_warnings};
use headers::{duplicate_singletons, read_headers};

/// One mailbox: `Ana Lima <ana@example.com>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Address {
    /// The display name, if any (encoded words already decoded).
    pub name: Option<String>,
    /// The address itself.
    pub email: String,
}

/// The message a reply answers, as far as the review needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct ParentMessage {
    /// The parent's From.
    pub from: Vec<Address>,
    /// The parent's To.
    pub to: Vec<Address>,
    /// The parent's Cc.
    pub cc: Vec<Address>,
    /// The parent's Reply-To.
    pub reply_to: Vec<Address>,
    /// The parent's Message-ID, without angle brackets.
    pub message_id: Option<String>,
    /// The parent's subject, shown next to the reply (muster gives it).
    pub subject: Option<String>,
    /// Gmail: everyone on the draft's conversation — From, To, Cc and Reply-To of each of its
    /// received and sent messages (never of a draft, nor of one in Trash or Spam), read from
    /// `threads.get`. With the parent's own addresses, who counts as "on the thread".
    pub participants: Vec<Address>,
    /// Gmail: the Message-IDs the draft's In-Reply-To or References name that are nothing in
    /// its conversation — a parent the agent may have invented (a bait draft, a message found
    /// elsewhere). Not empty: the draft is flagged and no recipient counts as on the thread.
    pub not_in_conversation: Vec<String>,
}

impl ParentMessage {
    /// The parent itself is not a message of the draft's conversation: only the claim of it
    /// (its Message-ID) is known, never whom it was from or to.
    pub fn is_claim_only(&self) -> bool {
        self.message_id
            .as_ref()
            .is_some_and(|id| self.not_in_conversation.contains(id))
    }

    /// The addresses that count as "on the thread", lower-case: the parent's From, To, Cc and
    /// Reply-To and the conversation's participants — none at all when the draft names a
    /// message that is not in its conversation, since the agent chose whom that "parent" was
    /// addressed to.
    pub fn on_thread(&self) -> std::collections::BTreeSet<String> {
        if !self.not_in_conversation.is_empty() {
            return std::collections::BTreeSet::new();
        }
        self.from
            .iter()
            .chain(&self.to)
            .chain(&self.cc)
            .chain(&self.reply_to)
            .chain(&self.participants)
            .map(|a| a.email.to_lowercase())
            .collect()
    }
}

/// How to render: what the owner allowed and who the owner is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RenderOptions {
    /// Keep remote images and other remote content (the owner asked for it, for this draft).
    pub allow_remote_content: bool,
    /// The owner's own domains; recipients elsewhere are flagged. Empty: no such flag.
    pub owner_domains: Vec<String>,
    /// The message this draft answers, when known.
    pub parent: Option<ParentMessage>,
    /// The draft is a reply even if no parent is known (e.g. Gmail says it is on a thread).
    pub is_reply: bool,
}

/// An attachment (or inline part) as listed in the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentMeta {
    /// Position in [`ReviewView::attachments`]; pass it to [`attachment_bytes`].
    pub index: usize,
    /// The file name the recipient will see (RFC 2231 / encoded words decoded).
    pub file_name: Option<String>,
    /// The Content-Type the draft declares, lower-case, without parameters.
    pub declared_type: Option<String>,
    /// What the bytes actually are, when recognisable.
    pub sniffed_type: Option<String>,
    /// Decoded size in bytes.
    pub size: u64,
    /// SHA-256 of the decoded bytes, lower-case hex.
    pub sha256: String,
    /// Shown inside the body (`Content-Disposition: inline` or referenced by `cid:`).
    pub inline: bool,
    /// The Content-ID, without angle brackets.
    pub content_id: Option<String>,
}

/// Remote content the HTML referenced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteContent {
    /// References that were blocked (0 when allowed).
    pub blocked_count: usize,
    /// Whether remote content was allowed for this rendering.
    pub allowed: bool,
    /// Every remote URL referenced, without duplicates, in document order.
    pub urls: Vec<String>,
}

/// What kind of parse problem a [`Warning`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// Zero bytes.
    EmptyMessage,
    /// No header could be read at all.
    NotAMessage,
    /// A multipart without a usable boundary.
    MissingBoundary,
    /// A part or the multipart structure ends early or cannot be decoded.
    TruncatedPart,
    /// Text that is not valid in its declared charset.
    BrokenCharset,
    /// A charset nobody knows; the text was read as UTF-8.
    UnknownCharset,
    /// A Date header that is not a date.
    InvalidDate,
    /// Raw bytes that are not UTF-8 in a header.
    BrokenHeader,
    /// The HTML shows a `cid:` image that the message does not contain.
    MissingInlineImage,
    /// The MIME parser gave up on the structure (it stopped on an internal check).
    UnparseableStructure,
    /// The message breaks the format in a way mail programs read differently; what the review
    /// shows may differ from what the recipient sees.
    Malformed,
    /// The HTML nests elements deeper than browsers and mail programs render as written; the
    /// review shows its text instead.
    DeeplyNested,
    /// An address header that mail programs read differently (present twice, empty beside
    /// another, an encoded word or a second `@` where an address belongs, a group, a display
    /// name or comment that is an address…): the review lists every address any of them finds.
    AmbiguousAddress,
    /// A subject or display name whose encoded words cannot be decoded (a broken encoding, or
    /// bytes that are not text in the charset they name): it shows � or the raw `=?…?=`.
    UndecodableHeader,
}

impl WarningKind {
    /// The message's structure is broken, so mail programs may read it otherwise than the
    /// review shows it (or it shows nothing): approving it asks "Approve anyway?". A date, a
    /// charset or a missing inline image is visible as it is and asks nothing.
    pub fn is_structural(self) -> bool {
        match self {
            WarningKind::EmptyMessage
            | WarningKind::NotAMessage
            | WarningKind::MissingBoundary
            | WarningKind::TruncatedPart
            | WarningKind::UnparseableStructure
            | WarningKind::Malformed
            | WarningKind::DeeplyNested
            | WarningKind::AmbiguousAddress => true,
            WarningKind::BrokenCharset
            | WarningKind::UnknownCharset
            | WarningKind::InvalidDate
            | WarningKind::BrokenHeader
            | WarningKind::MissingInlineImage
            | WarningKind::UndecodableHeader => false,
        }
    }
}

/// A problem found while reading the draft, shown to the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// The kind of problem.
    pub kind: WarningKind,
    /// One sentence saying what is wrong and what the review shows instead.
    pub message: String,
}

/// Everything the review shows for one draft version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    /// From (usually one mailbox).
    pub from: Vec<Address>,
    /// Sender, when it differs from From.
    pub sender: Option<Address>,
    /// Reply-To.
    pub reply_to: Vec<Address>,
    /// To.
    pub to: Vec<Address>,
    /// Cc.
    pub cc: Vec<Address>,
    /// Bcc (present in drafts: Gmail strips it only when sending).
    pub bcc: Vec<Address>,
    /// Subject, decoded.
    pub subject: Option<String>,
    /// Date as RFC 3339.
    pub date: Option<String>,
    /// Message-ID without angle brackets.
    pub message_id: Option<String>,
    /// In-Reply-To ids.
    pub in_reply_to: Vec<String>,
    /// References ids.
    pub references: Vec<String>,
    /// The text body (derived from the HTML when the draft has none).
    pub text_body: String,
    /// The sanitized HTML body as a complete document for `<iframe sandbox srcdoc>` (derived
    /// from the text when the draft has none).
    pub html_body: String,
    /// `text_body` was derived from the HTML.
    pub text_derived: bool,
    /// `html_body` was derived from the text.
    pub html_derived: bool,
    /// Attachments and inline parts, in MIME order.
    pub attachments: Vec<AttachmentMeta>,
    /// Remote content referenced by the HTML.
    pub remote_content: RemoteContent,
    /// Links in the body.
    pub links: Vec<Link>,
    /// Parse problems.
    pub warnings: Vec<Warning>,
    /// Safety flags.
    pub flags: Vec<Flag>,
    /// Size of the raw message (or of the text for muster drafts), in bytes.
    pub raw_size: u64,
    /// The draft is a reply.
    pub is_reply: bool,
    /// What the draft answers, when known.
    pub answers: Option<ParentMessage>,
    /// Passages of the HTML that recipients' mail programs do not display (see
    /// `render::hidden`).
    pub hidden_text: Vec<HiddenPassage>,
    /// Where the plain-text and HTML alternatives first say different things (only when the
    /// draft has both and neither was derived from the other).
    pub alternatives_differ: Option<AlternativesDifference>,
    /// Styling of the HTML that could change what recipients see and that Countersign cannot
    /// evaluate (see `styling`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverifiable_styling: Vec<UnverifiableStyle>,
    /// Every text a program could read that the rendering does not show (see `machine`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_text: Vec<MachineText>,
    /// Characters recipients do not see but programs read (or that reorder what is shown),
    /// by place; the renderings above show them as `⟨U+…⟩` markers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invisible_characters: Vec<InvisibleCharacters>,
}

/// Reads a raw RFC 5322 draft into its review view, flags not yet computed; with what the
/// flags are computed from besides the view (archive listings, headers present twice).
pub(crate) fn read_message(
    raw: &[u8],
    options: &RenderOptions,
) -> (ReviewView, Vec<ArchiveListing>, Vec<DuplicateHeader>) {
    let mut view = ReviewView {
        raw_size: raw.len() as u64,
        ..ReviewView::default()
    };
    let mut archives = Vec::new();
    let mut duplicates = Vec::new();
    let repaired = repair::repair(raw);
    let raw = repaired.bytes.as_ref();
    let what: Vec<&str> = repaired
        .repairs
        .iter()
        .filter(|r| !r.is_silent())
        .map(|r| r.describe())
        .collect();
    if !what.is_empty() {
        view.warnings.push(Warning {
            kind: WarningKind::Malformed,
            message: format!(
                "This message is malformed ({}); it is shown the way common mail programs read \
                 it, but what you see may differ from what the recipient sees.",
                what.join("; ")
            ),
        });
    }
    if raw.is_empty() {
        view.warnings.push(Warning {
            kind: WarningKind::EmptyMessage,
            message: "The draft is empty: it has no headers and no body.".into(),
        });
    } else if let Some(message) = parse(raw, &mut view.warnings) {
        read_headers(&message, &mut view);
        addresses::read_address_headers(&message, &mut view);
        duplicates = duplicate_singletons(&message);
        read_structure_warnings(&message, raw, &mut view.warnings);
        let parts = collect_attachments(&message, raw);
        archives = parts
            .iter()
            .filter_map(|(meta, bytes)| {
                let zip = meta.sniffed_type.as_deref().is_some_and(is_zip_container);
                zip.then(|| ArchiveListing {
                    attachment: meta.index,
                    names: sniff::zip_entry_names(bytes),
                })
            })
            .collect();
        let cids = cid_images(&message, raw);
        let used = read_bodies(&message, cids, options, &mut view);
        view.attachments = parts.into_iter().map(|(meta, _)| meta).collect();
        for a in &mut view.attachments {
            if let Some(cid) = &a.content_id {
                if used.contains(&sanitize::normalize_cid(cid)) {
                    a.inline = true;
                }
            }
        }
    } else if view.warnings.is_empty() {
        view.warnings.push(Warning {
            kind: WarningKind::NotAMessage,
            message: "Cannot find any header: these bytes are not an email message, so \
                      nothing of them is shown."
                .into(),
        });
    }
    if view.html_body.is_empty() {
        view.html_body = sanitize::wrap_document("", options.allow_remote_content);
    }
    view.remote_content.allowed = options.allow_remote_content;
    // A "Re:" subject is how a person recognises a reply, so it counts even when the caller
    // could not say (a Gmail draft whose thread is unknown).
    let looks_like_reply = view.subject.as_deref().is_some_and(|s| {
        s.trim_start()
            .get(..3)
            .is_some_and(|p| p.eq_ignore_ascii_case("re:"))
    });
    view.is_reply = options.is_reply || options.parent.is_some() || looks_like_reply;
    view.answers = options.parent.clone();
    invisible::check_headers(&mut view);
    (view, archives, duplicates)
}

/// Reads a muster plugin draft (its plain-text reply and what it answers) into its review
/// view, flags not yet computed; with the options its flags are computed with.
pub(crate) fn read_plain_text(
    text: &str,
    answers: Option<&ParentMessage>,
    options: &RenderOptions,
) -> (ReviewView, RenderOptions) {
    let text = text.replace("\r\n", "\n");
    let fragment = text::text_to_html(&text);
    let mut view = ReviewView {
        text_body: text.clone(),
        html_body: sanitize::wrap_document(&fragment, options.allow_remote_content),
        html_derived: true,
        links: crate::links::extract_links(&fragment),
        raw_size: text.len() as u64,
        is_reply: answers.is_some() || options.is_reply,
        answers: answers.cloned().or_else(|| options.parent.clone()),
        ..ReviewView::default()
    };
    view.invisible_characters
        .extend(unicode::check("the text body", &text));
    view.text_body = unicode::mark_text(&text);
    view.html_body = sanitize::wrap_document(
        &unicode::mark_fragment(&fragment, unicode::has_rtl(&text)),
        options.allow_remote_content,
    );
    if let Some(id) = answers.and_then(|a| a.message_id.clone()) {
        view.in_reply_to = vec![id.clone()];
        view.references = vec![id];
    }
    view.remote_content.allowed = options.allow_remote_content;
    let options = RenderOptions {
        parent: answers.cloned(),
        ..options.clone()
    };
    (view, options)
}

/// The metadata and decoded bytes of attachment `index` (as numbered in
/// [`ReviewView::attachments`]), so the app can save it where the owner chooses.
pub fn attachment_bytes(raw: &[u8], index: usize) -> Option<(AttachmentMeta, Vec<u8>)> {
    // Numbered as in the view, which is read from the repaired bytes.
    let repaired = repair::repair(raw);
    let raw = repaired.bytes.as_ref();
    let message = parse(raw, &mut Vec::new())?;
    let mut parts = collect_attachments(&message, raw);
    if index >= parts.len() {
        return None;
    }
    let (mut meta, bytes) = parts.swap_remove(index);
    // `inline` depends on the HTML; recompute it the way render_message does.
    let cids = cid_images(&message, raw);
    let mut view = ReviewView::default();
    let used = read_bodies(&message, cids, &RenderOptions::default(), &mut view);
    if let Some(cid) = &meta.content_id {
        if used.contains(&sanitize::normalize_cid(cid)) {
            meta.inline = true;
        }
    }
    Some((meta, bytes.into_owned()))
}

/// The one guarded parse of a draft's bytes for the rest of Countersign (core's editor): `None` when
/// mail-parser cannot read them or stops on one of its internal checks.
pub fn parse_message(raw: &[u8]) -> Option<Message<'_>> {
    parse(raw, &mut Vec::new())
}

/// Parses with mail-parser, which handles malformed MIME gracefully in release builds but
/// stops on internal `debug_assert!`s (and overflow checks) in debug builds of the app and CLI;
/// such a draft must still be reviewable, so the stop becomes a warning.
fn parse<'r>(raw: &'r [u8], warnings: &mut Vec<Warning>) -> Option<Message<'r>> {
    match std::panic::catch_unwind(|| MessageParser::default().parse(raw)) {
        Ok(message) => message,
        Err(_) => {
            warnings.push(Warning {
                kind: WarningKind::UnparseableStructure,
                message: "The MIME structure of this draft is too damaged to read; nothing of \
                          it can be shown. Reject it or look at the raw message."
                    .into(),
            });
            None
        }
    }
}

fn is_zip_container(t: &str) -> bool {
    t == "application/zip" || t == "application/java-archive" || t.contains("openxmlformats")
}
