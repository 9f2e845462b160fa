//! Comparing two versions of a draft: a redraft against the refused one, or a Gmail draft the
//! agent updated since the owner first looked.
//!
//! The diff covers everything a recipient sees or acts on: From, Sender, Reply-To, the
//! recipients, the subject, the text part, the HTML's visible words and its markup, link
//! targets, remote content, attachments (name, declared type, bytes) and every other header.
//! When none of that changed but the bytes did, it says where the bytes differ, so "no change"
//! means the two versions are the same bytes.

mod changes;
mod compare;

pub use self::changes::{
    AddressChange, AttachmentChange, AttachmentUpdate, ByteChange, ChangeKind, DraftBytes,
    HeaderChange, LinkChange, RecipientChange, RenderedDraft, SubjectChange, TextChange,
    VersionDiff,
};
use self::compare::{
    address_change, compare_html, header_changes, match_up, raw, split_message, word_diff,
    HeaderLine,
};
use crate::view::ReviewView;

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

#[cfg(test)]
mod tests;
