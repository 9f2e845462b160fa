//! What a safety flag is: its kind, and the data the flags are computed from that the readers
//! hand on. A leaf: every reader (hidden text, styling, machine text, Unicode, links, the
//! alternatives) names its flag with these types, and `flags` computes the list from the view.

use serde::{Deserialize, Serialize};

/// What a [`Flag`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// A recipient who was not on the message being answered (the exfiltration case).
    RecipientNotOnThread,
    /// The draft's In-Reply-To or References names a message that is not a received or sent
    /// message of its own conversation: the parent it claims is not a fact.
    AnswersMessageNotInConversation,
    /// A recipient outside the owner's domains.
    ExternalRecipient,
    /// A Bcc recipient: others will not see them.
    BccRecipient,
    /// An attachment of a type that can run code or carry code.
    RiskyAttachment,
    /// An attachment whose bytes are not what its name or declared type says.
    AttachmentTypeMismatch,
    /// Link text showing one URL or address while the link opens another, a link to a
    /// look-alike host, or a link the review cannot show (`<base href>`, image-map areas).
    LinkTextMismatch,
    /// A reply that will not thread: no In-Reply-To and no References.
    ReplyWithoutThreading,
    /// A message Gmail will refuse to send.
    OverSizeLimit,
    /// A header allowed once occurs more than once: mail programs disagree on which one counts.
    DuplicateHeader,
    /// Text a recipient's mail program would not display (or the review would not), but that
    /// an assistant, a search index or a plain-text view reads.
    HiddenText,
    /// The plain-text and HTML alternatives say different things.
    AlternativesDiffer,
    /// The HTML uses styling whose effect on what recipients see Countersign cannot evaluate:
    /// it may hide, reveal, move, cover or add words.
    UnverifiableStyling,
    /// Words only programs read — alt text, comments, Outlook-only branches, other
    /// alternatives, nested messages — that the review does not show.
    MachineText,
    /// Characters recipients do not see but programs read, or that reorder what is shown
    /// (tag characters, bidi controls, zero-width characters, stray variation selectors), in
    /// the body, the subject, a display name or an attachment name.
    InvisibleCharacters,
}

/// One safety flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Flag {
    /// What kind of risk.
    pub kind: FlagKind,
    /// Which address, attachment name or link it is about.
    pub about: String,
    /// One line a person understands.
    pub explanation: String,
    /// Every address a recipient flag covers, when it covers more than one (`"a@x.org (To)"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<String>,
}

/// A header allowed once that a message carries more than once, with every value.
#[derive(Debug, Clone)]
pub(crate) struct DuplicateHeader {
    pub name: String,
    pub values: Vec<String>,
}

/// Member names of one zip-like attachment, for looking inside archives.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveListing {
    pub attachment: usize,
    pub names: Vec<String>,
}
