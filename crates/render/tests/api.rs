//! The helpers the app calls besides `render_message`: saving and previewing attachments,
//! muster drafts, version diffs — and robustness on cut-off input.

use std::fs;

use countersign_render::diff::ChangeKind;
use countersign_render::{
    attachment_bytes, diff_versions, render_message, render_plain_text, Address, AttachmentPreview,
    DraftBytes, Flag, FlagKind, ParentMessage, RenderOptions, RenderedDraft, ReviewView,
    VersionDiff, WarningKind,
};
use sha2::{Digest, Sha256};

use crate::support::{body_of, fixtures};

fn fixture(name: &str) -> Vec<u8> {
    fs::read(fixtures("render").join(name)).unwrap()
}

/// The diff between two raw drafts and their renderings.
fn diff_messages(old: (&[u8], &ReviewView), new: (&[u8], &ReviewView)) -> VersionDiff {
    diff_versions(
        RenderedDraft {
            bytes: DraftBytes::Message(old.0),
            view: old.1,
        },
        RenderedDraft {
            bytes: DraftBytes::Message(new.0),
            view: new.1,
        },
    )
}

#[test]
fn a_saved_attachment_has_the_exact_bytes_the_view_describes() {
    let raw = fixture("attachment-pdf.eml");
    let view = render_message(&raw, &RenderOptions::default());
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    assert_eq!(meta, view.attachments[0]);
    assert!(bytes.starts_with(b"%PDF-1.4"));
    assert_eq!(meta.sha256, hex::encode(Sha256::digest(&bytes)));
    assert_eq!(meta.size, bytes.len() as u64);
    assert!(attachment_bytes(&raw, 1).is_none());
}

#[test]
fn a_latin1_text_attachment_is_saved_in_latin1_not_re_encoded() {
    let raw = fixture("attachment-csv-latin1.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    assert_eq!(meta.file_name.as_deref(), Some("export.csv"));
    assert_eq!(
        bytes,
        b"name;city\r\nJos\xe9;S\xe3o Paulo\r\nM\xfcller;K\xf6ln\r\n"
    );
}

#[test]
fn previews_follow_what_the_bytes_are() {
    let raw = fixture("attachment-images.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    match AttachmentPreview::of(&meta, &bytes, 1024) {
        AttachmentPreview::Image { data_uri } => {
            assert!(data_uri.starts_with("data:image/png;base64,iVBOR"))
        }
        other => panic!("{other:?}"),
    }
    let raw = fixture("attachment-pdf.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    assert_eq!(
        AttachmentPreview::of(&meta, &bytes, 1024),
        AttachmentPreview::Pdf
    );

    let raw = fixture("attachment-csv-latin1.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    match AttachmentPreview::of(&meta, &bytes, 12) {
        AttachmentPreview::Text { text, truncated } => {
            assert_eq!(text, "name;city\r\nJ");
            assert!(truncated);
        }
        other => panic!("{other:?}"),
    }

    let raw = fixture("risky-double-extension.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    assert_eq!(
        AttachmentPreview::of(&meta, &bytes, 1024),
        AttachmentPreview::None {
            content_type: Some("application/x-msdownload".into()),
            size: bytes.len() as u64
        }
    );
    // A "photo" that is really a PDF is previewed as what it is.
    let raw = fixture("type-mismatch.eml");
    let (meta, bytes) = attachment_bytes(&raw, 0).unwrap();
    assert_eq!(
        AttachmentPreview::of(&meta, &bytes, 1024),
        AttachmentPreview::Pdf
    );
}

fn parent() -> ParentMessage {
    ParentMessage {
        from: vec![Address {
            name: Some("Ana".into()),
            email: "ana@client.example.org".into(),
        }],
        subject: Some("Invoice".into()),
        ..ParentMessage::default()
    }
}

#[test]
fn a_muster_draft_is_shown_as_escaped_text_with_what_it_answers() {
    let view = render_plain_text(
        "Hi <Ana>, the invoice is at https://pay.example.com/42.",
        Some(&parent()),
        &RenderOptions::default(),
    );
    let body = body_of(&view.html_body);
    assert!(body.contains("Hi &lt;Ana&gt;"), "{body}");
    assert!(body.contains(
        "<a href=\"https://pay.example.com/42\" target=\"_blank\" rel=\"noopener noreferrer\">"
    ));
    assert_eq!(view.links.len(), 1);
    assert!(!view.links[0].mismatch);
    assert_eq!(
        view.answers.as_ref().and_then(|a| a.subject.as_deref()),
        Some("Invoice")
    );
    assert!(view.is_reply);
    assert!(view.flags.is_empty(), "{:?}", view.flags);
}

#[test]
fn a_redraft_diff_shows_the_changed_words_and_the_new_recipient() {
    let (old_raw, new_raw) = (
        fixture("reply-threaded.eml"),
        fixture("reply-exfiltration.eml"),
    );
    let old = render_message(&old_raw, &RenderOptions::default());
    let new = render_message(&new_raw, &RenderOptions::default());
    let diff = diff_messages((&old_raw, &old), (&new_raw, &new));
    assert!(diff.text_changed);
    assert!(diff
        .text
        .iter()
        .any(|c| c.kind == ChangeKind::Added && c.text.contains("customer")));
    let added: Vec<&str> = diff
        .recipients_added
        .iter()
        .map(|r| r.address.email.as_str())
        .collect();
    assert_eq!(
        added,
        [
            "collector@exfil.example.net",
            "archive@elsewhere.example.net"
        ]
    );
    let removed: Vec<&str> = diff
        .recipients_removed
        .iter()
        .map(|r| r.address.email.as_str())
        .collect();
    assert_eq!(removed, ["bob@client.example.org"]);
    assert!(diff.subject.is_none());
    assert!(!diff.unchanged);
}

#[test]
fn a_replaced_attachment_shows_as_removed_and_added() {
    let (old_raw, new_raw) = (
        fixture("attachment-pdf.eml"),
        fixture("risky-double-extension.eml"),
    );
    let old = render_message(&old_raw, &RenderOptions::default());
    let new = render_message(&new_raw, &RenderOptions::default());
    let diff = diff_messages((&old_raw, &old), (&new_raw, &new));
    assert_eq!(
        diff.attachments_removed[0].file_name.as_deref(),
        Some("invoice-42.pdf")
    );
    assert_eq!(
        diff.attachments_added[0].file_name.as_deref(),
        Some("invoice.pdf.exe")
    );
    assert!(diff.subject.is_some());
    assert!(diff_messages((&new_raw, &new), (&new_raw, &new)).unchanged);
}

#[test]
fn every_prefix_of_a_rich_draft_renders_without_panicking() {
    for name in [
        "mixed-alternative-related.eml",
        "risky-zip-with-script.eml",
        "encoded-word-headers.eml",
    ] {
        let raw = fixture(name);
        for cut in (0..raw.len()).step_by(7) {
            let view = render_message(&raw[..cut], &RenderOptions::default());
            assert_eq!(view.raw_size, cut as u64);
        }
    }
}

#[test]
fn the_exfiltration_reply_is_flagged_for_the_stranger_and_the_bcc() {
    let raw = fixture("reply-exfiltration.eml");
    let options = RenderOptions {
        parent: Some(ParentMessage {
            from: vec![Address {
                name: None,
                email: "ana@client.example.org".into(),
            }],
            to: vec![Address {
                name: None,
                email: "owen@example.com".into(),
            }],
            ..ParentMessage::default()
        }),
        ..RenderOptions::default()
    };
    let view = render_message(&raw, &options);
    // One flag for both strangers, naming each with the header it is in.
    let strangers: Vec<&Flag> = view
        .flags
        .iter()
        .filter(|f| f.kind == FlagKind::RecipientNotOnThread)
        .collect();
    assert_eq!(strangers.len(), 1, "{strangers:?}");
    assert_eq!(
        strangers[0].recipients,
        [
            "collector@exfil.example.net (To)",
            "archive@elsewhere.example.net (Bcc)"
        ]
    );
    assert!(view.flags.iter().any(|f| f.kind == FlagKind::BccRecipient));
}

#[test]
fn a_draft_that_trips_the_mime_parser_still_renders() {
    // Found by fuzzing: mail-parser's internal assertion fires on it in debug builds.
    let raw =
        fs::read(fixtures("render-regressions").join("mail-parser-invalid-part-id.eml")).unwrap();
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(view.raw_size, raw.len() as u64);
    if cfg!(debug_assertions) {
        assert!(
            view.warnings
                .iter()
                .any(|w| w.kind == countersign_render::WarningKind::UnparseableStructure),
            "{:?}",
            view.warnings
        );
    }
    let _ = attachment_bytes(&raw, 0);
}

#[test]
fn ten_thousand_outside_recipients_are_one_flag_listing_them_all() {
    let to: Vec<String> = (0..10_000)
        .map(|i| format!("r{i}@partner{}.example.net", i % 7))
        .collect();
    let raw = format!(
        "From: owen@example.com\r\nTo: {}\r\nSubject: invite\r\n\r\nHello\r\n",
        to.join(",\r\n ")
    );
    let view = render_message(
        raw.as_bytes(),
        &RenderOptions {
            owner_domains: vec!["example.com".into()],
            ..RenderOptions::default()
        },
    );
    let external: Vec<&Flag> = view
        .flags
        .iter()
        .filter(|f| f.kind == FlagKind::ExternalRecipient)
        .collect();
    assert_eq!(external.len(), 1);
    assert_eq!(external[0].about, "10000 recipients");
    assert!(
        external[0]
            .explanation
            .starts_with("10000 recipients are outside your organisation, at 7 domains"),
        "{}",
        external[0].explanation
    );
    assert_eq!(external[0].recipients.len(), 10_000);
    assert_eq!(external[0].recipients[0], "r0@partner0.example.net (To)");
}

/// Each `agree/` fixture is a case where mail programs read the message one way and mail-parser
/// 0.11 alone another. If mail-parser learns to read one, this fails, and the repair for it
/// (and its malformed warning) can go.
#[test]
fn mail_parser_alone_misreads_every_agree_fixture() {
    use mail_parser::{MessageParser, MimeHeaders};
    let dir = fixtures("render").join("agree");
    let parse = |name: &str| fs::read(dir.join(name)).unwrap();
    let names = |raw: &[u8]| -> Vec<Option<String>> {
        let m = MessageParser::default().parse(raw).unwrap();
        m.attachments()
            .map(|a| a.attachment_name().map(str::to_owned))
            .collect()
    };

    let raw = parse("whitespace-line-before-headers.eml");
    let alone = MessageParser::default().parse(&raw[..]).unwrap();
    assert_eq!(alone.subject(), None, "mail-parser now reads the headers");
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(view.subject.as_deref(), Some("Quarterly numbers"));
    assert_eq!(view.to.len(), 1);

    let raw = parse("header-block-ended-by-space-line.eml");
    let alone = MessageParser::default().parse(&raw[..]).unwrap();
    assert!(
        !alone
            .body_text(0)
            .unwrap_or_default()
            .contains("Friday at noon"),
        "mail-parser now finds the body"
    );
    let view = render_message(&raw, &RenderOptions::default());
    assert!(view.text_body.starts_with("Friday at noon works for me."));

    let raw = parse("rfc822-headers-never-end.eml");
    assert!(names(&raw).len() < 3, "mail-parser now finds every part");
    let view = render_message(&raw, &RenderOptions::default());
    let files: Vec<_> = view
        .attachments
        .iter()
        .map(|a| a.file_name.clone())
        .collect();
    assert_eq!(
        files,
        [
            Some("note.eml".to_owned()),
            Some("list.csv".to_owned()),
            Some("summary.pdf".to_owned())
        ]
    );

    let raw = parse("filename-folded-onto-next-line.eml");
    assert_ne!(names(&raw), [Some("Résumé Ana.pdf".to_owned())]);
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(
        view.attachments[0].file_name.as_deref(),
        Some("Résumé Ana.pdf")
    );

    let raw = parse("filename-character-split-across-encoded-words.eml");
    assert_ne!(
        names(&raw),
        [Some("Angebot für Müller GmbH.pdf".to_owned())]
    );
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(
        view.attachments[0].file_name.as_deref(),
        Some("Angebot für Müller GmbH.pdf")
    );

    let raw = parse("filename-encoded-words-folded.eml");
    assert_ne!(
        names(&raw),
        [Some("Angebot für Müller GmbH.pdf".to_owned())]
    );
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(
        view.attachments[0].file_name.as_deref(),
        Some("Angebot für Müller GmbH.pdf")
    );

    let raw = parse("nested-multipart-never-closes.eml");
    assert!(
        names(&raw).len() < 2,
        "mail-parser now ends the nested multipart"
    );
    let view = render_message(&raw, &RenderOptions::default());
    let files: Vec<_> = view
        .attachments
        .iter()
        .map(|a| a.file_name.clone())
        .collect();
    assert_eq!(
        files,
        [Some("thread.eml".to_owned()), Some("list.csv".to_owned())]
    );

    // Every repaired view says the message is malformed.
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "eml") {
            let view = render_message(&fs::read(&path).unwrap(), &RenderOptions::default());
            assert!(
                view.warnings
                    .iter()
                    .any(|w| w.kind == WarningKind::Malformed),
                "{} has no malformed warning",
                path.display()
            );
        }
    }
}

#[test]
fn attachments_of_a_repaired_message_are_numbered_as_in_its_view() {
    let raw = fs::read(
        fixtures("render")
            .join("agree")
            .join("rfc822-headers-never-end.eml"),
    )
    .unwrap();
    let (meta, bytes) = attachment_bytes(&raw, 2).expect("the third attachment");
    assert_eq!(meta.file_name.as_deref(), Some("summary.pdf"));
    assert!(bytes.starts_with(b"%PDF"));
}
