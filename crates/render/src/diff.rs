//! Comparing two versions of a draft: a redraft against the refused one, or a Gmail draft the
//! agent updated since the owner first looked.
//!
//! The diff covers everything a recipient sees or acts on: From, Sender, Reply-To, the
//! recipients, the subject, the text part, the HTML's visible words and its markup, link
//! targets, remote content, attachments (name, declared type, bytes) and every other header.
//! When none of that changed but the bytes did, it says where the bytes differ, so "no change"
//! means the two versions are the same bytes.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

use super::text;
use super::view::{Address, ReviewView};

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

/// A word diff that would take longer than this falls back to coarser chunks; a review must
/// never hang on a pathological pair of texts.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// Headers the diff shows on their own fields (from the rendering), not as "other headers".
const SHOWN_APART: [&str; 7] = ["from", "sender", "reply-to", "to", "cc", "bcc", "subject"];

/// Headers that only describe the MIME structure: what they change shows in the text, the
/// HTML and the attachments; when nothing there changed, they are where the bytes differ.
const STRUCTURE: [&str; 3] = ["mime-version", "content-type", "content-transfer-encoding"];

/// Headers the review keeps out of the diff's changes: a draft's Date and Message-ID say when
/// and where the agent saved it (Gmail stamps its own when it sends), so a new version nearly
/// always has new ones. A version that differs only there is reported as a byte-only change
/// naming them, never as "no change".
const INTERNAL: [&str; 2] = ["date", "message-id"];

/// Compares two versions of a draft, both rendered with the same options.
pub fn diff_versions(old: RenderedDraft<'_>, new: RenderedDraft<'_>) -> VersionDiff {
    let (ov, nv) = (old.view, new.view);
    let mut diff = VersionDiff {
        from: address_change(&ov.from, &nv.from),
        sender: address_change(
            &ov.sender.iter().cloned().collect::<Vec<_>>(),
            &nv.sender.iter().cloned().collect::<Vec<_>>(),
        ),
        reply_to: address_change(&ov.reply_to, &nv.reply_to),
        text_changed: ov.text_body != nv.text_body,
        ..VersionDiff::default()
    };

    let recipients = |v: &ReviewView| -> Vec<RecipientChange> {
        [("to", &v.to), ("cc", &v.cc), ("bcc", &v.bcc)]
            .into_iter()
            .flat_map(|(field, list)| {
                list.iter().map(move |a| RecipientChange {
                    field: field.to_owned(),
                    address: a.clone(),
                })
            })
            .collect()
    };
    // The display name is part of what the recipients see in the header.
    let same_recipient = |a: &RecipientChange, b: &RecipientChange| {
        a.field == b.field
            && a.address.email.eq_ignore_ascii_case(&b.address.email)
            && a.address.name == b.address.name
    };
    let matched = match_up(&recipients(ov), &recipients(nv), same_recipient, |_, _| {
        false
    });
    diff.recipients_removed = matched.removed;
    diff.recipients_added = matched.added;

    if ov.subject != nv.subject {
        diff.subject = Some(SubjectChange {
            old: ov.subject.clone(),
            new: nv.subject.clone(),
        });
    }

    if diff.text_changed {
        diff.text = word_diff(&ov.text_body, &nv.text_body);
    } else if !ov.text_body.is_empty() {
        diff.text.push(TextChange {
            kind: ChangeKind::Equal,
            text: ov.text_body.clone(),
        });
    }

    let matched = match_up(
        &ov.links,
        &nv.links,
        |a, b| a.text == b.text && a.href == b.href,
        |a, b| a.text == b.text,
    );
    diff.links = matched
        .changed
        .into_iter()
        .map(|(o, n)| LinkChange {
            text: n.text,
            old_href: Some(o.href),
            new_href: Some(n.href),
        })
        .chain(matched.removed.into_iter().map(|o| LinkChange {
            text: o.text,
            old_href: Some(o.href),
            new_href: None,
        }))
        .chain(matched.added.into_iter().map(|n| LinkChange {
            text: n.text,
            old_href: None,
            new_href: Some(n.href),
        }))
        .collect();

    let (old_urls, new_urls) = (&ov.remote_content.urls, &nv.remote_content.urls);
    diff.remote_added = new_urls
        .iter()
        .filter(|u| !old_urls.contains(u))
        .cloned()
        .collect();
    diff.remote_removed = old_urls
        .iter()
        .filter(|u| !new_urls.contains(u))
        .cloned()
        .collect();

    compare_html(ov, nv, &mut diff);

    let attachments = |v: &ReviewView| -> Vec<AttachmentChange> {
        v.attachments
            .iter()
            .map(|a| AttachmentChange {
                file_name: a.file_name.clone(),
                declared_type: a.declared_type.clone(),
                sha256: a.sha256.clone(),
                size: a.size,
            })
            .collect()
    };
    let matched = match_up(
        &attachments(ov),
        &attachments(nv),
        |a, b| a == b,
        |a, b| a.file_name == b.file_name,
    );
    diff.attachments_removed = matched.removed;
    diff.attachments_added = matched.added;
    diff.attachments_changed = matched
        .changed
        .into_iter()
        .map(|(old, new)| AttachmentUpdate { old, new })
        .collect();

    let (old_headers, old_body) = split_message(old.bytes);
    let (new_headers, new_body) = split_message(new.bytes);
    let other = |h: &&HeaderLine| {
        let name = h.name.to_ascii_lowercase();
        ![&SHOWN_APART[..], &STRUCTURE[..], &INTERNAL[..]]
            .iter()
            .any(|set| set.contains(&name.as_str()))
    };
    let visible =
        |lines: &[HeaderLine]| -> Vec<HeaderLine> { lines.iter().filter(other).cloned().collect() };
    diff.headers = header_changes(&visible(&old_headers), &visible(&new_headers));

    if !diff.changes_what_recipients_get() && raw(old.bytes) != raw(new.bytes) {
        let mut headers: Vec<String> = Vec::new();
        for change in header_changes(&old_headers, &new_headers) {
            if !headers.iter().any(|h| h.eq_ignore_ascii_case(&change.name)) {
                headers.push(change.name);
            }
        }
        let body = old_body != new_body;
        let text = matches!(new.bytes, DraftBytes::Text(_));
        diff.bytes_only = Some(ByteChange {
            summary: byte_summary(&headers, body, text),
            headers,
            body,
        });
    }
    diff.unchanged = diff.is_empty();
    diff
}

/// The owner's sentence for a byte-only change.
fn byte_summary(headers: &[String], body: bool, text: bool) -> String {
    let mut places = Vec::new();
    match headers {
        [] => {}
        [one] => places.push(format!("the {one} header")),
        [rest @ .., last] => places.push(format!("the {} and {last} headers", rest.join(", "))),
    }
    if body && text {
        places.push("the line endings of the text".to_owned());
    } else if body {
        places.push(
            "the MIME structure or encoding of the body (boundaries, transfer encoding, line \
             wrapping)"
                .to_owned(),
        );
    }
    if places.is_empty() {
        places.push("how the headers are laid out (order, folding or line endings)".to_owned());
    }
    format!(
        "Nothing a recipient sees changed: the bytes differ only in {}.",
        places.join(" and in ")
    )
}

/// The HTML's words and markup, when the text diff does not already say it.
fn compare_html(old: &ReviewView, new: &ReviewView, diff: &mut VersionDiff) {
    // HTML made from the text part shows nothing the text diff does not.
    if old.html_derived && new.html_derived {
        return;
    }
    let (old_body, new_body) = (body_fragment(&old.html_body), body_fragment(&new.html_body));
    if old_body == new_body {
        return;
    }
    let (old_words, new_words) = (text::html_to_text(old_body), text::html_to_text(new_body));
    if old_words != new_words {
        // A text body made from the HTML already shows these words, unless its own converter
        // missed the change.
        let text_is_the_html = old.text_derived && new.text_derived && diff.text_changed;
        if !text_is_the_html {
            diff.html_text = word_diff(&old_words, &new_words);
            diff.html_text_changed = true;
        }
    } else if diff.links.is_empty()
        && diff.remote_added.is_empty()
        && diff.remote_removed.is_empty()
    {
        diff.html_markup_changed = true;
    }
}

/// The part of a rendered document between `<body>` and `</body>`: the head only carries the
/// review's own policy and style.
fn body_fragment(document: &str) -> &str {
    let start = document.find("<body>").map_or(0, |i| i + "<body>".len());
    let end = document
        .rfind("</body>")
        .unwrap_or(document.len())
        .max(start);
    &document[start..end]
}

fn word_diff(old: &str, new: &str) -> Vec<TextChange> {
    let mut runs: Vec<TextChange> = Vec::new();
    let words = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_words(old, new);
    for change in words.iter_all_changes() {
        let kind = match change.tag() {
            ChangeTag::Equal => ChangeKind::Equal,
            ChangeTag::Delete => ChangeKind::Removed,
            ChangeTag::Insert => ChangeKind::Added,
        };
        match runs.last_mut() {
            Some(last) if last.kind == kind => last.text.push_str(change.value()),
            _ => runs.push(TextChange {
                kind,
                text: change.value().to_owned(),
            }),
        }
    }
    runs
}

fn address_change(old: &[Address], new: &[Address]) -> Option<AddressChange> {
    (old != new).then(|| AddressChange {
        old: old.to_vec(),
        new: new.to_vec(),
    })
}

/// One header line, unfolded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeaderLine {
    name: String,
    value: String,
}

/// Headers added, removed or changed, pairing same-named headers in order.
fn header_changes(old: &[HeaderLine], new: &[HeaderLine]) -> Vec<HeaderChange> {
    let matched = match_up(
        old,
        new,
        |a, b| a.name.eq_ignore_ascii_case(&b.name) && a.value == b.value,
        |a, b| a.name.eq_ignore_ascii_case(&b.name),
    );
    matched
        .changed
        .into_iter()
        .map(|(o, n)| HeaderChange {
            name: n.name,
            old: Some(o.value),
            new: Some(n.value),
        })
        .chain(matched.removed.into_iter().map(|o| HeaderChange {
            name: o.name,
            old: Some(o.value),
            new: None,
        }))
        .chain(matched.added.into_iter().map(|n| HeaderChange {
            name: n.name,
            old: None,
            new: Some(n.value),
        }))
        .collect()
}

fn raw<'a>(bytes: DraftBytes<'a>) -> &'a [u8] {
    match bytes {
        DraftBytes::Message(raw) => raw,
        DraftBytes::Text(text) => text.as_bytes(),
    }
}

/// The header lines of a message, unfolded, and its body bytes. Read from the bytes as they
/// are (not as repaired for display): the diff is about what leaves. A muster reply has no
/// headers; all of it is body.
fn split_message(bytes: DraftBytes<'_>) -> (Vec<HeaderLine>, &[u8]) {
    let raw = match bytes {
        DraftBytes::Message(raw) => raw,
        DraftBytes::Text(text) => return (Vec::new(), text.as_bytes()),
    };
    let end = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| find(raw, sep).map(|at| (at, at + sep.len())))
        .min();
    let (head, body) = match end {
        Some((head_end, body_start)) => (&raw[..head_end], &raw[body_start..]),
        None => (raw, &raw[raw.len()..]),
    };
    let mut lines: Vec<HeaderLine> = Vec::new();
    for line in String::from_utf8_lossy(head).split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with([' ', '\t']) {
            if let Some(last) = lines.last_mut() {
                last.value.push_str(line);
            }
        } else if let Some((name, value)) = line.split_once(':') {
            lines.push(HeaderLine {
                name: name.trim().to_owned(),
                value: value.to_owned(),
            });
        }
    }
    for line in &mut lines {
        line.value = line.value.trim().to_owned();
    }
    (lines, body)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `old` and `new` matched up: equal pairs (by `same`) drop out, leftovers that are
/// counterparts (by `counterpart`, e.g. the same name) pair as changed, in order.
struct Matched<T> {
    changed: Vec<(T, T)>,
    removed: Vec<T>,
    added: Vec<T>,
}

fn match_up<T: Clone>(
    old: &[T],
    new: &[T],
    same: impl Fn(&T, &T) -> bool,
    counterpart: impl Fn(&T, &T) -> bool,
) -> Matched<T> {
    let mut new_used = vec![false; new.len()];
    let mut left = Vec::new();
    for o in old {
        match (0..new.len()).find(|&i| !new_used[i] && same(o, &new[i])) {
            Some(i) => new_used[i] = true,
            None => left.push(o),
        }
    }
    let mut matched = Matched {
        changed: Vec::new(),
        removed: Vec::new(),
        added: Vec::new(),
    };
    for o in left {
        match (0..new.len()).find(|&i| !new_used[i] && counterpart(o, &new[i])) {
            Some(i) => {
                new_used[i] = true;
                matched.changed.push((o.clone(), new[i].clone()));
            }
            None => matched.removed.push(o.clone()),
        }
    }
    matched.added = new
        .iter()
        .zip(new_used)
        .filter(|(_, used)| !used)
        .map(|(n, _)| n.clone())
        .collect();
    matched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{render_message, render_plain_text};
    use crate::view::RenderOptions;

    fn muster(text: &str) -> ReviewView {
        render_plain_text(text, None, &RenderOptions::default())
    }

    fn diff_text(old: &str, new: &str) -> VersionDiff {
        let (ov, nv) = (muster(old), muster(new));
        diff_versions(
            RenderedDraft {
                bytes: DraftBytes::Text(old),
                view: &ov,
            },
            RenderedDraft {
                bytes: DraftBytes::Text(new),
                view: &nv,
            },
        )
    }

    fn diff_raw(old: &str, new: &str) -> VersionDiff {
        let options = RenderOptions::default();
        let (ov, nv) = (
            render_message(old.as_bytes(), &options),
            render_message(new.as_bytes(), &options),
        );
        diff_versions(
            RenderedDraft {
                bytes: DraftBytes::Message(old.as_bytes()),
                view: &ov,
            },
            RenderedDraft {
                bytes: DraftBytes::Message(new.as_bytes()),
                view: &nv,
            },
        )
    }

    const HEAD: &str = "From: Owen <owen@example.com>\r\nTo: Ana <ana@example.com>\r\n\
                        Subject: Invoice\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\n\
                        Message-ID: <v1@example.com>\r\nMIME-Version: 1.0\r\n";

    /// A draft with both a text and an HTML part.
    fn alternative(extra_headers: &str, text: &str, html: &str) -> String {
        format!(
            "{HEAD}{extra_headers}Content-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n\
             --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n\
             --b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n--b1--\r\n"
        )
    }

    const TEXT: &str = "Pay 100 EUR at the payment page.";
    const HTML: &str = "<p>Pay 100 EUR at <a href=\"https://pay.example.com/42\">the payment \
                        page</a>.</p>";

    fn draft(extra_headers: &str) -> String {
        alternative(extra_headers, TEXT, HTML)
    }

    /// A draft with one attachment.
    fn with_attachment(content_type: &str, base64: &str) -> String {
        format!(
            "{HEAD}Content-Type: multipart/mixed; boundary=\"m1\"\r\n\r\n\
             --m1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n\
             --m1\r\nContent-Type: {content_type}; name=\"terms.pdf\"\r\n\
             Content-Disposition: attachment; filename=\"terms.pdf\"\r\n\
             Content-Transfer-Encoding: base64\r\n\r\n{base64}\r\n--m1--\r\n"
        )
    }

    #[test]
    fn a_changed_word_shows_as_removed_then_added() {
        let d = diff_text("pay 100 EUR today", "pay 900 EUR today");
        let changed: Vec<(ChangeKind, &str)> = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Equal)
            .map(|c| (c.kind, c.text.as_str()))
            .collect();
        assert_eq!(
            changed,
            [(ChangeKind::Removed, "100"), (ChangeKind::Added, "900")]
        );
        assert!(!d.unchanged);
        // The HTML made from the text says nothing more.
        assert!(!d.html_text_changed && !d.html_markup_changed, "{d:?}");
    }

    #[test]
    fn the_runs_concatenate_back_to_both_versions() {
        let (a, b) = (
            "Hello Ana,\nthe invoice is late.",
            "Hello Ana,\nthe invoice is paid now.",
        );
        let d = diff_text(a, b);
        let old: String = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Added)
            .map(|c| c.text.as_str())
            .collect();
        let new: String = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Removed)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!((old.as_str(), new.as_str()), (a, b));
    }

    #[test]
    fn identical_versions_are_unchanged() {
        let d = diff_text("same", "same");
        assert!(
            d.unchanged && d.is_empty() && d.bytes_only.is_none(),
            "{d:?}"
        );
        let d = diff_raw(&draft(""), &draft(""));
        assert!(d.unchanged && d.is_empty(), "{d:?}");
        assert_eq!(
            d,
            VersionDiff {
                text: d.text.clone(),
                unchanged: true,
                ..VersionDiff::default()
            }
        );
    }

    #[test]
    fn a_change_only_to_the_html_shows_the_htmls_words() {
        let d = diff_raw(
            &draft(""),
            &alternative("", TEXT, &HTML.replace("100", "900")),
        );
        assert!(!d.text_changed, "{d:?}");
        assert!(d.html_text_changed, "{d:?}");
        let changed: Vec<(ChangeKind, &str)> = d
            .html_text
            .iter()
            .filter(|c| c.kind != ChangeKind::Equal)
            .map(|c| (c.kind, c.text.as_str()))
            .collect();
        assert_eq!(
            changed,
            [(ChangeKind::Removed, "100"), (ChangeKind::Added, "900")]
        );
        assert!(!d.unchanged && d.bytes_only.is_none());
    }

    #[test]
    fn a_change_only_to_the_htmls_styling_is_a_markup_change() {
        let d = diff_raw(
            &draft(""),
            &alternative("", TEXT, &HTML.replace("<p>", "<p style=\"color:#fff\">")),
        );
        assert!(d.html_markup_changed, "{d:?}");
        assert!(!d.html_text_changed && !d.text_changed && !d.unchanged);
    }

    #[test]
    fn a_changed_from_is_shown_with_both_mailboxes() {
        let new = draft("").replace("From: Owen", "From: Owen Billing");
        let d = diff_raw(&draft(""), &new);
        let from = d.from.expect("From changed");
        assert_eq!(from.old[0].name.as_deref(), Some("Owen"));
        assert_eq!(from.new[0].name.as_deref(), Some("Owen Billing"));
        assert!(!d.unchanged && d.headers.is_empty());
    }

    #[test]
    fn an_added_sender_is_shown() {
        let d = diff_raw(&draft(""), &draft("Sender: agent@bots.example.net\r\n"));
        let sender = d.sender.expect("Sender changed");
        assert!(sender.old.is_empty());
        assert_eq!(sender.new[0].email, "agent@bots.example.net");
        assert!(
            d.headers.is_empty(),
            "shown apart, not again: {:?}",
            d.headers
        );
    }

    #[test]
    fn a_changed_reply_to_is_shown() {
        let d = diff_raw(
            &draft("Reply-To: owen@example.com\r\n"),
            &draft("Reply-To: collector@exfil.example.net\r\n"),
        );
        let reply_to = d.reply_to.expect("Reply-To changed");
        assert_eq!(reply_to.old[0].email, "owen@example.com");
        assert_eq!(reply_to.new[0].email, "collector@exfil.example.net");
        assert!(!d.unchanged);
    }

    #[test]
    fn a_link_pointing_elsewhere_under_the_same_text_is_shown() {
        let new = HTML.replace("https://pay.example.com/42", "https://pay.example.net/42");
        let d = diff_raw(&draft(""), &alternative("", TEXT, &new));
        assert_eq!(
            d.links,
            [LinkChange {
                text: "the payment page".into(),
                old_href: Some("https://pay.example.com/42".into()),
                new_href: Some("https://pay.example.net/42".into()),
            }]
        );
        assert!(!d.text_changed && !d.html_text_changed && !d.html_markup_changed);
        assert!(!d.unchanged);
    }

    #[test]
    fn added_and_removed_remote_content_is_shown() {
        let image = |url: &str| format!("{HTML}<img src=\"{url}\" alt=\"\">");
        let d = diff_raw(
            &alternative("", TEXT, &image("https://t.example.com/a.gif")),
            &alternative("", TEXT, &image("https://t.example.com/b.gif")),
        );
        assert_eq!(d.remote_added, ["https://t.example.com/b.gif"]);
        assert_eq!(d.remote_removed, ["https://t.example.com/a.gif"]);
        assert!(!d.unchanged && !d.html_markup_changed);
    }

    #[test]
    fn an_attachment_whose_bytes_changed_under_the_same_name_is_a_change() {
        let d = diff_raw(
            &with_attachment("application/pdf", "JVBERi0xLjQKb2xk"),
            &with_attachment("application/pdf", "JVBERi0xLjQKbmV3"),
        );
        assert!(d.attachments_added.is_empty() && d.attachments_removed.is_empty());
        let [update] = d.attachments_changed.as_slice() else {
            panic!("one changed attachment: {d:?}");
        };
        assert_eq!(update.new.file_name.as_deref(), Some("terms.pdf"));
        assert_ne!(update.old.sha256, update.new.sha256);
        assert!(!d.unchanged);
    }

    #[test]
    fn an_attachment_whose_declared_type_changed_is_a_change() {
        let d = diff_raw(
            &with_attachment("application/pdf", "JVBERi0xLjQKb2xk"),
            &with_attachment("application/octet-stream", "JVBERi0xLjQKb2xk"),
        );
        let [update] = d.attachments_changed.as_slice() else {
            panic!("one changed attachment: {d:?}");
        };
        assert_eq!(update.old.declared_type.as_deref(), Some("application/pdf"));
        assert_eq!(
            update.new.declared_type.as_deref(),
            Some("application/octet-stream")
        );
        assert_eq!(update.old.sha256, update.new.sha256);
    }

    #[test]
    fn other_headers_added_removed_or_changed_are_shown() {
        let d = diff_raw(
            &draft("X-Campaign: spring\r\nIn-Reply-To: <p1@example.com>\r\n"),
            &draft("X-Campaign: autumn\r\nDisposition-Notification-To: t@track.example.net\r\n"),
        );
        let change = |name: &str, old: Option<&str>, new: Option<&str>| HeaderChange {
            name: name.into(),
            old: old.map(Into::into),
            new: new.map(Into::into),
        };
        assert_eq!(
            d.headers,
            [
                change("X-Campaign", Some("spring"), Some("autumn")),
                change("In-Reply-To", Some("<p1@example.com>"), None),
                change(
                    "Disposition-Notification-To",
                    None,
                    Some("t@track.example.net")
                ),
            ]
        );
        assert!(!d.unchanged && d.bytes_only.is_none());
    }

    #[test]
    fn a_new_boundary_is_a_byte_only_change_in_the_mime_structure() {
        let new = draft("").replace("b1", "zz-other-boundary");
        let d = diff_raw(&draft(""), &new);
        assert!(!d.changes_what_recipients_get(), "{d:?}");
        let bytes = d.bytes_only.as_ref().expect("the bytes differ");
        assert_eq!(bytes.headers, ["Content-Type"]);
        assert!(bytes.body);
        assert!(
            bytes.summary.contains("Content-Type header")
                && bytes.summary.contains("MIME structure"),
            "{}",
            bytes.summary
        );
        assert!(!d.unchanged && !d.is_empty());
    }

    #[test]
    fn a_new_transfer_encoding_of_the_same_text_is_a_byte_only_change() {
        let plain =
            format!("{HEAD}Content-Type: text/plain; charset=utf-8\r\n\r\nCaf\u{e9} at noon.\r\n");
        let quoted = format!(
            "{HEAD}Content-Type: text/plain; charset=utf-8\r\n\
             Content-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9 at noon.\r\n"
        );
        let d = diff_raw(&plain, &quoted);
        let bytes = d.bytes_only.expect("the bytes differ");
        assert_eq!(bytes.headers, ["Content-Transfer-Encoding"]);
        assert!(bytes.body);
    }

    #[test]
    fn a_new_date_alone_is_named_as_a_byte_only_change() {
        let new = draft("").replace("10:00:00", "10:05:00");
        let d = diff_raw(&draft(""), &new);
        assert!(d.headers.is_empty(), "{:?}", d.headers);
        let bytes = d.bytes_only.expect("the bytes differ");
        assert_eq!(bytes.headers, ["Date"]);
        assert!(!bytes.body);
        assert!(
            bytes.summary.contains("the Date header"),
            "{}",
            bytes.summary
        );
    }

    #[test]
    fn other_line_endings_of_a_muster_reply_are_a_byte_only_change() {
        let d = diff_text("Hello Ana,\nsee you.", "Hello Ana,\r\nsee you.");
        let bytes = d.bytes_only.expect("the bytes differ");
        assert!(bytes.summary.contains("line endings"), "{}", bytes.summary);
        assert!(!d.unchanged);
    }

    #[test]
    fn a_recipients_new_display_name_is_a_change() {
        let new = draft("").replace("To: Ana <", "To: Ana Lima <");
        let d = diff_raw(&draft(""), &new);
        assert_eq!(d.recipients_removed[0].address.name.as_deref(), Some("Ana"));
        assert_eq!(
            d.recipients_added[0].address.name.as_deref(),
            Some("Ana Lima")
        );
    }
}
