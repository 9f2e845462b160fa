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
        bytes.summary.contains("Content-Type header") && bytes.summary.contains("MIME structure"),
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
