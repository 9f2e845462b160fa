//! The review view model: everything a person needs to judge a draft, built from its raw
//! RFC 5322 bytes (Gmail) or its plain text (muster).
//!
//! Building a view never fails and never panics: whatever cannot be read becomes a
//! [`Warning`] that the review shows, rather than an error that hides the draft.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use mail_parser::{Message, MessageParser, MessagePart, MimeHeaders, PartType};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::flags::{self, ArchiveListing, DuplicateHeader, Flag};
use super::repair;
use super::sanitize::{self, CidImage};
use super::sniff;
use super::text;

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
}

/// How to render: what the owner allowed and who the owner is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
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

/// A link in the body, with the URL it really opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Link {
    /// The text the reader sees.
    pub text: String,
    /// Where the link goes.
    pub href: String,
    /// The text shows a URL on another host than `href`.
    pub mismatch: bool,
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
}

/// A preview of one attachment, for the review pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentPreview {
    /// A raster image, inlined.
    Image {
        /// `data:` URI of the image.
        #[serde(rename = "dataUri")]
        data_uri: String,
    },
    /// Text, the first bytes only.
    Text {
        /// The text (lossy UTF-8).
        text: String,
        /// More text followed.
        truncated: bool,
    },
    /// A PDF: the UI renders its first page with pdf.js from the bytes.
    Pdf,
    /// Nothing can be previewed safely.
    None {
        /// The best known type.
        #[serde(rename = "contentType")]
        content_type: Option<String>,
        /// Size in bytes.
        size: u64,
    },
}

impl AttachmentPreview {
    /// Chooses a preview from what the bytes *are* (sniffed), not what the draft says.
    ///
    /// Text previews stop at `max_text_bytes`. SVG is never previewed: it is a document, not an
    /// image, and the preview must not depend on the sandbox to be safe.
    pub fn of(meta: &AttachmentMeta, bytes: &[u8], max_text_bytes: usize) -> Self {
        let sniffed = meta.sniffed_type.as_deref();
        let declared = meta.declared_type.as_deref().unwrap_or("");
        match sniffed {
            Some(t @ ("image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp")) => {
                use base64::Engine as _;
                AttachmentPreview::Image {
                    data_uri: format!(
                        "data:{t};base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(bytes)
                    ),
                }
            }
            Some("application/pdf") => AttachmentPreview::Pdf,
            None if declared.starts_with("text/") && declared != "text/html" => {
                let cut = bytes.len().min(max_text_bytes);
                let mut text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
                // A cut inside a UTF-8 sequence would end in a replacement char: drop it.
                if cut < bytes.len() && text.ends_with('\u{fffd}') {
                    text.pop();
                }
                AttachmentPreview::Text {
                    text,
                    truncated: cut < bytes.len(),
                }
            }
            _ => AttachmentPreview::None {
                content_type: meta
                    .sniffed_type
                    .clone()
                    .or_else(|| meta.declared_type.clone()),
                size: meta.size,
            },
        }
    }
}

/// Renders a raw RFC 5322 draft into its review view.
pub fn render_message(raw: &[u8], options: &RenderOptions) -> ReviewView {
    let mut view = ReviewView {
        raw_size: raw.len() as u64,
        ..ReviewView::default()
    };
    let mut archives = Vec::new();
    let mut duplicates = Vec::new();
    let repaired = repair::repair(raw);
    let raw = repaired.bytes.as_ref();
    if !repaired.repairs.is_empty() {
        let what: Vec<&str> = repaired.repairs.iter().map(|r| r.describe()).collect();
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
    view.flags = flags::compute(&view, options, &archives, &duplicates, true);
    view
}

/// Renders a muster plugin draft: its plain-text reply and what it answers.
///
/// muster drafts carry no recipients or threading headers (the plugin addresses and threads
/// the reply), so only body-level flags can apply.
pub fn render_plain_text(
    text: &str,
    answers: Option<&ParentMessage>,
    options: &RenderOptions,
) -> ReviewView {
    let text = text.replace("\r\n", "\n");
    let fragment = text::text_to_html(&text);
    let mut view = ReviewView {
        text_body: text.clone(),
        html_body: sanitize::wrap_document(&fragment, options.allow_remote_content),
        html_derived: true,
        links: text::extract_links(&fragment),
        raw_size: text.len() as u64,
        is_reply: answers.is_some() || options.is_reply,
        answers: answers.cloned().or_else(|| options.parent.clone()),
        ..ReviewView::default()
    };
    if let Some(id) = answers.and_then(|a| a.message_id.clone()) {
        view.in_reply_to = vec![id.clone()];
        view.references = vec![id];
    }
    view.remote_content.allowed = options.allow_remote_content;
    let options = RenderOptions {
        parent: answers.cloned(),
        ..options.clone()
    };
    view.flags = flags::compute(&view, &options, &[], &[], false);
    view
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

fn addresses(addr: Option<&mail_parser::Address<'_>>) -> Vec<Address> {
    let Some(addr) = addr else {
        return Vec::new();
    };
    addr.iter()
        .filter_map(|a| {
            let email = a.address.as_deref()?.trim();
            if email.is_empty() {
                return None;
            }
            Some(Address {
                name: a
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned),
                email: email.to_owned(),
            })
        })
        .collect()
}

fn id_list(value: &mail_parser::HeaderValue<'_>) -> Vec<String> {
    match value {
        mail_parser::HeaderValue::Text(t) => vec![t.to_string()],
        mail_parser::HeaderValue::TextList(l) => l.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn read_headers(message: &Message<'_>, view: &mut ReviewView) {
    view.from = addresses(message.from());
    view.sender = addresses(message.sender()).into_iter().next();
    view.reply_to = addresses(message.reply_to());
    view.to = addresses(message.to());
    view.cc = addresses(message.cc());
    view.bcc = addresses(message.bcc());
    view.subject = message.subject().map(str::to_owned);
    view.message_id = message.message_id().map(str::to_owned);
    view.in_reply_to = id_list(message.in_reply_to());
    view.references = id_list(message.references());
    match message.date() {
        Some(date) if date.is_valid() => view.date = Some(date.to_rfc3339()),
        _ => {
            if let Some(raw) = message.header_raw("Date") {
                view.warnings.push(Warning {
                    kind: WarningKind::InvalidDate,
                    message: format!(
                        "The Date header \"{}\" is not a date; no date is shown.",
                        printable(raw.trim(), 80)
                    ),
                });
            }
        }
    }
    let root = message.root_part();
    for header in &root.headers {
        for charset in unknown_encoded_word_charsets(&unfolded_raw_value(message, header)) {
            view.warnings.push(Warning {
                kind: WarningKind::UnknownCharset,
                message: format!(
                    "{} declares the unknown charset \"{}\"; it may show wrong characters.",
                    header_label(header.name()),
                    printable(&charset, 40)
                ),
            });
        }
    }
    let standard = root
        .headers
        .iter()
        .any(|h| !matches!(h.name, mail_parser::HeaderName::Other(_)));
    if !standard {
        view.warnings.push(Warning {
            kind: WarningKind::NotAMessage,
            message: "No standard header (From, To, Subject, Date, Content-Type...) was found: \
                      these bytes are probably not an email message."
                .into(),
        });
    }
    if let Some(header) = root.headers.iter().find(|h| {
        let end = (h.offset_end as usize).min(message.raw_message.len());
        let start = (h.offset_start as usize).min(end);
        std::str::from_utf8(&message.raw_message[start..end]).is_err()
    }) {
        view.warnings.push(Warning {
            kind: WarningKind::BrokenHeader,
            message: format!(
                "{} contains raw bytes that are not text; unreadable characters show as \
                 \u{fffd}.",
                header_label(header.name())
            ),
        });
    }
}

/// Headers RFC 5322 allows once, which a message carries more than once: programs pick
/// different ones (mail-parser the last, others the first), so the reader must see both.
const SINGLETON_HEADERS: &[&str] = &[
    "Subject",
    "From",
    "To",
    "Cc",
    "Date",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Message-ID",
    "In-Reply-To",
];

fn duplicate_singletons(message: &Message<'_>) -> Vec<DuplicateHeader> {
    let headers = &message.root_part().headers;
    SINGLETON_HEADERS
        .iter()
        .filter_map(|&name| {
            let values: Vec<String> = headers
                .iter()
                .filter(|h| h.name.as_str().eq_ignore_ascii_case(name))
                .map(|h| match &h.value {
                    mail_parser::HeaderValue::Text(t) => printable(t.trim(), 200),
                    _ => printable(&unfolded_raw_value(message, h), 200),
                })
                .collect();
            (values.len() > 1).then(|| DuplicateHeader {
                name: name.to_owned(),
                values,
            })
        })
        .collect()
}

/// A header's value as written, folds joined.
fn unfolded_raw_value(message: &Message<'_>, header: &mail_parser::Header<'_>) -> String {
    let end = (header.offset_end as usize).min(message.raw_message.len());
    let start = (header.offset_start as usize).min(end);
    let raw = String::from_utf8_lossy(&message.raw_message[start..end]);
    raw.split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Charsets of RFC 2047 encoded words (`=?charset?Q?...?=`) that no decoder knows, in a
/// header's raw value.
fn unknown_encoded_word_charsets(raw_value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = raw_value;
    while let Some(at) = rest.find("=?") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find('?') else { break };
        // RFC 2231 section 5 lets the charset carry a language: `utf-8*en`.
        let charset = rest[..end].split('*').next().unwrap_or_default().trim();
        let encoding = rest[end + 1..].chars().next();
        if charset.is_empty() || !matches!(encoding, Some('q' | 'Q' | 'b' | 'B')) {
            continue;
        }
        if !is_known_charset(charset)
            && !out.iter().any(|c: &String| c.eq_ignore_ascii_case(charset))
        {
            out.push(charset.to_owned());
        }
        rest = &rest[end + 1..];
    }
    out
}

fn is_known_charset(charset: &str) -> bool {
    mail_parser::decoders::charsets::map::charset_decoder(charset.as_bytes()).is_some()
        || ["utf-8", "utf8", "us-ascii", "ascii"]
            .contains(&charset.trim().to_ascii_lowercase().as_str())
}

/// A header named in a sentence; garbage names are not repeated.
fn header_label(name: &str) -> String {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        format!("The {name} header")
    } else {
        "A header with an unreadable name".to_owned()
    }
}

fn part_label(id: usize, part: &MessagePart<'_>) -> String {
    match (id, part.attachment_name()) {
        (0, _) => "The body".to_owned(),
        (_, Some(name)) => format!("Part {id} (\u{201c}{}\u{201d})", printable(name, 80)),
        (_, None) => format!("Part {id}"),
    }
}

/// `text` made safe to quote in a warning: control characters dropped, length capped.
fn printable(text: &str, max_chars: usize) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() > max_chars {
        let cut: String = clean.chars().take(max_chars).collect();
        format!("{cut}\u{2026}")
    } else {
        clean
    }
}

/// The part shown as the body when the structure gave none: a multipart whose boundary is
/// missing or never appears leaves its whole content in one undivided part.
fn fallback_body_part(message: &Message<'_>) -> Option<usize> {
    let has_body = message
        .html_body
        .iter()
        .chain(&message.text_body)
        .any(|&id| {
            message
                .parts
                .get(id as usize)
                .is_some_and(|p| matches!(p.body, PartType::Text(_) | PartType::Html(_)))
        });
    let root = message.parts.first()?;
    let multipart = content_type_of(root).is_some_and(|t| t.starts_with("multipart/"));
    (!has_body && multipart && !matches!(root.body, PartType::Multipart(_))).then_some(0)
}

fn content_type_of(part: &MessagePart<'_>) -> Option<String> {
    part.content_type().map(|ct| match ct.subtype() {
        Some(sub) => format!("{}/{}", ct.ctype(), sub).to_ascii_lowercase(),
        None => ct.ctype().to_ascii_lowercase(),
    })
}

fn read_structure_warnings(message: &Message<'_>, raw: &[u8], warnings: &mut Vec<Warning>) {
    for (id, part) in message.parts.iter().enumerate() {
        let label = part_label(id, part);
        let ctype = content_type_of(part).unwrap_or_default();
        if ctype.starts_with("multipart/") {
            let boundary = part.content_type().and_then(|ct| ct.attribute("boundary"));
            match (boundary, &part.body) {
                (None, _) => warnings.push(Warning {
                    kind: WarningKind::MissingBoundary,
                    message: format!(
                        "{label} is {ctype} without a boundary, so its parts cannot be told \
                         apart; it is shown as raw text."
                    ),
                }),
                (Some(b), PartType::Multipart(_)) => {
                    let close = format!("--{b}--");
                    let start = (part.offset_body as usize).min(raw.len());
                    if !sniff::contains(&raw[start..], close.as_bytes()) {
                        warnings.push(Warning {
                            kind: WarningKind::TruncatedPart,
                            message: format!(
                                "{label} ({ctype}) never reaches its closing boundary: the \
                                 message may be cut off."
                            ),
                        });
                    }
                }
                (Some(_), _) => warnings.push(Warning {
                    kind: WarningKind::MissingBoundary,
                    message: format!(
                        "{label} is {ctype} but its boundary never appears in the body; it is \
                         shown as raw text."
                    ),
                }),
            }
            continue;
        }
        if part.is_encoding_problem {
            let no_body = id == 0
                && matches!(&part.body, PartType::Text(t) if t.is_empty())
                && part.offset_body as usize >= raw.len();
            warnings.push(Warning {
                kind: WarningKind::TruncatedPart,
                message: if no_body {
                    "The draft ends after its headers: it has no body.".to_owned()
                } else {
                    format!(
                        "{label} is damaged or cut off and could not be decoded; what could be \
                         read is kept as it is."
                    )
                },
            });
        }
        if let PartType::Text(t) | PartType::Html(t) = &part.body {
            let charset = part.content_type().and_then(|ct| ct.attribute("charset"));
            if let Some(cs) = charset {
                if !is_known_charset(cs) {
                    warnings.push(Warning {
                        kind: WarningKind::UnknownCharset,
                        message: format!(
                            "{label} declares the unknown charset \"{}\"; it is read as \
                             UTF-8 and may show wrong characters.",
                            printable(cs, 40)
                        ),
                    });
                    continue;
                }
            }
            if t.contains('\u{fffd}') {
                let cs = printable(charset.unwrap_or("us-ascii"), 40);
                warnings.push(Warning {
                    kind: WarningKind::BrokenCharset,
                    message: format!(
                        "{label} contains bytes that are not valid {cs}; they show as \u{fffd}."
                    ),
                });
            }
        }
    }
}

/// The decoded bytes of a part as the recipient would save them.
fn part_bytes<'m>(part: &'m MessagePart<'m>, raw: &'m [u8]) -> Option<Cow<'m, [u8]>> {
    match &part.body {
        PartType::Binary(b) | PartType::InlineBinary(b) => Some(Cow::Borrowed(b.as_ref())),
        PartType::Text(t) | PartType::Html(t) => {
            // mail-parser hands text parts over already converted to UTF-8; a saved attachment
            // must keep its own charset, so decode the transfer encoding again from the source.
            let end = (part.offset_end as usize).min(raw.len());
            let start = (part.offset_body as usize).min(end);
            let source = &raw[start..end];
            let decoded = if part.is_encoding_problem {
                None
            } else {
                match part.encoding {
                    mail_parser::Encoding::Base64 => {
                        mail_parser::decoders::base64::base64_decode(source)
                    }
                    mail_parser::Encoding::QuotedPrintable => {
                        mail_parser::decoders::quoted_printable::quoted_printable_decode(source)
                    }
                    mail_parser::Encoding::None => None,
                }
            };
            match decoded {
                Some(bytes) => Some(Cow::Owned(bytes)),
                None => {
                    let unchanged = matches!(part.encoding, mail_parser::Encoding::None)
                        && std::str::from_utf8(source).is_ok_and(|s| s == t.as_ref());
                    Some(if unchanged {
                        Cow::Borrowed(source)
                    } else {
                        Cow::Borrowed(t.as_bytes())
                    })
                }
            }
        }
        PartType::Message(_) => {
            let end = (part.offset_end as usize).min(raw.len());
            let start = (part.offset_body as usize).min(end);
            Some(Cow::Borrowed(&raw[start..end]))
        }
        PartType::Multipart(_) => None,
    }
}

fn collect_attachments<'m>(
    message: &'m Message<'m>,
    raw: &'m [u8],
) -> Vec<(AttachmentMeta, Cow<'m, [u8]>)> {
    let mut out = Vec::with_capacity(message.attachments.len());
    let shown_as_body = fallback_body_part(message);
    for &id in &message.attachments {
        if shown_as_body == Some(id as usize) {
            continue;
        }
        let Some(part) = message.parts.get(id as usize) else {
            continue;
        };
        let Some(bytes) = part_bytes(part, raw) else {
            continue;
        };
        let inline = part
            .content_disposition()
            .is_some_and(|d| d.ctype().eq_ignore_ascii_case("inline"));
        let meta = AttachmentMeta {
            index: out.len(),
            file_name: part.attachment_name().map(str::to_owned),
            declared_type: content_type_of(part),
            sniffed_type: sniff::sniff(&bytes).map(str::to_owned),
            size: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(&bytes)),
            inline,
            content_id: part.content_id().map(|c| {
                let c = c.trim();
                c.trim_start_matches('<').trim_end_matches('>').to_owned()
            }),
        };
        out.push((meta, bytes));
    }
    out
}

/// Every part with a Content-ID whose bytes really are a raster image.
fn cid_images(message: &Message<'_>, raw: &[u8]) -> HashMap<String, CidImage> {
    let mut map = HashMap::new();
    for part in &message.parts {
        let Some(cid) = part.content_id() else {
            continue;
        };
        if !matches!(part.body, PartType::Binary(_) | PartType::InlineBinary(_)) {
            continue;
        }
        let Some(bytes) = part_bytes(part, raw) else {
            continue;
        };
        // Trust the bytes, not the label: a "PNG" that is really HTML is not inlined.
        if let Some(t @ ("image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp")) =
            sniff::sniff(&bytes)
        {
            map.entry(sanitize::normalize_cid(cid))
                .or_insert_with(|| CidImage {
                    content_type: t.to_owned(),
                    bytes: bytes.into_owned(),
                });
        }
    }
    map
}

fn read_bodies(
    message: &Message<'_>,
    cids: HashMap<String, CidImage>,
    options: &RenderOptions,
    view: &mut ReviewView,
) -> HashSet<String> {
    let mut html_source = String::new();
    for &id in &message.html_body {
        if let Some(PartType::Html(h)) = message.parts.get(id as usize).map(|p| &p.body) {
            html_source.push_str(h);
        }
    }
    let mut texts = Vec::new();
    for &id in &message.text_body {
        if let Some(PartType::Text(t)) = message.parts.get(id as usize).map(|p| &p.body) {
            texts.push(t.as_ref());
        }
    }
    // A multipart that lost its boundary leaves no body at all: show its raw text instead of
    // an empty review (the warning explains why).
    let mut fallback = String::new();
    if let Some(id) = fallback_body_part(message) {
        match &message.parts[id].body {
            PartType::Text(t) | PartType::Html(t) => fallback.push_str(t),
            PartType::Binary(b) | PartType::InlineBinary(b) => {
                fallback.push_str(&String::from_utf8_lossy(b))
            }
            _ => {}
        }
    }
    if !fallback.is_empty() {
        texts.push(&fallback);
    }
    // Shown text uses \n line ends whatever the wire form (CRLF) is, so diffs compare words.
    let text_source = texts.join("\n\n").replace("\r\n", "\n");

    let fragment;
    let mut used_cids = HashSet::new();
    if !html_source.is_empty() {
        let clean = sanitize::sanitize_html(&html_source, cids, options.allow_remote_content);
        view.remote_content.blocked_count = clean.blocked_count;
        view.remote_content.urls = clean.remote_urls;
        used_cids = clean.used_cids.into_iter().collect();
        for cid in clean.missing_cids {
            view.warnings.push(Warning {
                kind: WarningKind::MissingInlineImage,
                message: format!(
                    "The body shows the inline image \"cid:{}\", but the draft contains no \
                     image part with that Content-ID; the recipient will see a broken image.",
                    printable(&cid, 80)
                ),
            });
        }
        fragment = clean.fragment;
    } else if !text_source.is_empty() {
        fragment = text::text_to_html(&text_source);
        view.html_derived = true;
    } else {
        fragment = String::new();
    }
    if !text_source.is_empty() {
        view.text_body = text_source;
    } else if !fragment.is_empty() {
        view.text_body = text::html_to_text(&fragment);
        view.text_derived = true;
    }
    view.links = text::extract_links(&fragment);
    view.html_body = sanitize::wrap_document(&fragment, options.allow_remote_content);
    used_cids
}
