//! What a diff between two versions is made of: the versions compared and every kind of change
//! the review shows.

use serde::{Deserialize, Serialize};

use crate::view::{Address, ReviewView};

/// The stored form of a version: what the diff reads headers and bytes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftBytes<'a> {
    /// A raw RFC 5322 message (Gmail).
    Message(&'a [u8]),
    /// A plain-text reply without headers (muster).
    Text(&'a str),
}

/// One side of a comparison: a version's bytes and their rendering (with the same options as
/// the other side).
#[derive(Debug, Clone, Copy)]
pub struct RenderedDraft<'a> {
    /// The bytes as stored.
    pub bytes: DraftBytes<'a>,
    /// What they render to.
    pub view: &'a ReviewView,
}

/// Whether a piece of text stayed, went or came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// In both versions.
    Equal,
    /// Only in the old version.
    Removed,
    /// Only in the new version.
    Added,
}

/// A run of words with the same [`ChangeKind`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TextChange {
    /// What happened to this run.
    pub kind: ChangeKind,
    /// The text, whitespace included, so the runs concatenate back to either version.
    pub text: String,
}

/// A recipient added or removed, with the header it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecipientChange {
    /// `to`, `cc` or `bcc`.
    pub field: String,
    /// The recipient.
    pub address: Address,
}

/// A From, Sender or Reply-To header before and after (display names count: recipients see
/// them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AddressChange {
    /// Before (empty: the header was absent).
    pub old: Vec<Address>,
    /// After (empty: the header is gone).
    pub new: Vec<Address>,
}

/// One attachment as the diff compares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentChange {
    /// The file name.
    pub file_name: Option<String>,
    /// The Content-Type the draft declares for it.
    pub declared_type: Option<String>,
    /// SHA-256 of the content.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

/// An attachment kept under the same name whose bytes or declared type changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentUpdate {
    /// Before.
    pub old: AttachmentChange,
    /// After.
    pub new: AttachmentChange,
}

/// The subject before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SubjectChange {
    /// Before.
    pub old: Option<String>,
    /// After.
    pub new: Option<String>,
}

/// A link added, removed, or pointing somewhere else under the same text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LinkChange {
    /// The text the reader sees.
    pub text: String,
    /// Where it went before (`None`: the link is new).
    pub old_href: Option<String>,
    /// Where it goes now (`None`: the link was removed).
    pub new_href: Option<String>,
}

/// A header (other than those the diff shows on their own) added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeaderChange {
    /// The header's name as the draft spells it.
    pub name: String,
    /// Its value before, unfolded, as in the bytes (`None`: the header is new).
    pub old: Option<String>,
    /// Its value after (`None`: the header was removed).
    pub new: Option<String>,
}

/// Where two versions differ when nothing a recipient sees or acts on changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ByteChange {
    /// Headers whose lines differ: those the diff keeps out of view (Date, Message-ID), the
    /// MIME ones (Content-Type…), or a visible one encoded differently.
    pub headers: Vec<String>,
    /// The body's bytes differ: MIME boundaries, transfer encoding, line wrapping (a muster
    /// reply: line endings).
    pub body: bool,
    /// One sentence saying where, for the owner.
    pub summary: String,
}

/// What changed between two versions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VersionDiff {
    /// Set when From changed.
    pub from: Option<AddressChange>,
    /// Set when Sender changed.
    pub sender: Option<AddressChange>,
    /// Set when Reply-To changed.
    pub reply_to: Option<AddressChange>,
    /// Recipients only in the new version.
    pub recipients_added: Vec<RecipientChange>,
    /// Recipients only in the old version.
    pub recipients_removed: Vec<RecipientChange>,
    /// Set when the subject changed.
    pub subject: Option<SubjectChange>,
    /// Word-level changes of the text body, in order (one equal run when it did not change).
    pub text: Vec<TextChange>,
    /// The text bodies differ.
    pub text_changed: bool,
    /// Word-level changes of the words the HTML shows, in order; empty when they did not
    /// change, or when the text above already is the HTML's words (or the HTML was made from
    /// the text).
    pub html_text: Vec<TextChange>,
    /// The words the HTML shows differ (reported when the text body does not already say it).
    pub html_text_changed: bool,
    /// The HTML differs only in its markup (styling, layout, images): same words, links and
    /// remote content.
    pub html_markup_changed: bool,
    /// Links added, removed or retargeted.
    pub links: Vec<LinkChange>,
    /// Remote content (images, styles) referenced only by the new version.
    pub remote_added: Vec<String>,
    /// Remote content referenced only by the old version.
    pub remote_removed: Vec<String>,
    /// Attachments only in the new version.
    pub attachments_added: Vec<AttachmentChange>,
    /// Attachments only in the old version.
    pub attachments_removed: Vec<AttachmentChange>,
    /// Attachments under the same name whose bytes or declared type changed.
    pub attachments_changed: Vec<AttachmentUpdate>,
    /// Other headers added, removed or changed (threading, read receipts, custom ones…).
    pub headers: Vec<HeaderChange>,
    /// Nothing above changed but the bytes did: where.
    pub bytes_only: Option<ByteChange>,
    /// The two versions are the same: nothing above changed and the bytes are equal.
    pub unchanged: bool,
}

impl VersionDiff {
    /// Something a recipient sees or acts on changed.
    pub fn changes_what_recipients_get(&self) -> bool {
        self.from.is_some()
            || self.sender.is_some()
            || self.reply_to.is_some()
            || !self.recipients_added.is_empty()
            || !self.recipients_removed.is_empty()
            || self.subject.is_some()
            || self.text_changed
            || self.html_text_changed
            || self.html_markup_changed
            || !self.links.is_empty()
            || !self.remote_added.is_empty()
            || !self.remote_removed.is_empty()
            || !self.attachments_added.is_empty()
            || !self.attachments_removed.is_empty()
            || !self.attachments_changed.is_empty()
            || !self.headers.is_empty()
    }

    /// No difference at all, not even in the bytes: "No change."
    pub fn is_empty(&self) -> bool {
        !self.changes_what_recipients_get() && self.bytes_only.is_none()
    }
}
