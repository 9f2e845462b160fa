//! Big drafts: a 30 MB attachment and a 5,000-part message render completely.

use base64::Engine as _;
use countersign_render::{render_message, FlagKind, RenderOptions};
use sha2::{Digest, Sha256};

fn with_attachment(bytes: &[u8]) -> Vec<u8> {
    let mut raw = b"From: owen@example.com\r\nTo: ana@example.com\r\nSubject: big\r\n\
        MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
        --b\r\nContent-Type: text/plain\r\n\r\nthe archive\r\n\
        --b\r\nContent-Type: application/octet-stream; name=\"big.bin\"\r\n\
        Content-Transfer-Encoding: base64\r\n\r\n"
        .to_vec();
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    raw.reserve(encoded.len() + encoded.len() / 38 + 16);
    for line in encoded.as_bytes().chunks(76) {
        raw.extend_from_slice(line);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"--b--\r\n");
    raw
}

#[test]
fn a_30_mb_attachment_renders_with_its_real_size_and_hash_and_the_size_flag() {
    let bytes: Vec<u8> = (0..30 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let raw = with_attachment(&bytes);
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(view.attachments.len(), 1);
    assert_eq!(view.attachments[0].size, bytes.len() as u64);
    assert_eq!(
        view.attachments[0].sha256,
        hex::encode(Sha256::digest(&bytes))
    );
    assert!(
        view.flags.iter().any(|f| f.kind == FlagKind::OverSizeLimit),
        "{:?}",
        view.flags
    );
    assert!(view.warnings.is_empty(), "{:?}", view.warnings);
}

fn many_parts(n: usize) -> Vec<u8> {
    let mut raw = b"From: owen@example.com\r\nTo: ana@example.com\r\nSubject: parts\r\n\
        MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"p\"\r\n\r\n\
        --p\r\nContent-Type: text/plain\r\n\r\nmany parts follow\r\n"
        .to_vec();
    for i in 1..n {
        raw.extend_from_slice(
            format!(
                "--p\r\nContent-Type: application/octet-stream; name=\"part-{i}.bin\"\r\n\
                 Content-Disposition: attachment; filename=\"part-{i}.bin\"\r\n\r\npart {i}\r\n"
            )
            .as_bytes(),
        );
    }
    raw.extend_from_slice(b"--p--\r\n");
    raw
}

fn attachment_count(raw: &[u8]) -> usize {
    render_message(raw, &RenderOptions::default())
        .attachments
        .len()
}

#[test]
fn a_5000_part_message_renders_every_part() {
    // Not a timing assertion: a ratio of two timings fails on a busy machine with nothing wrong.
    assert_eq!(
        attachment_count(&many_parts(5_000)),
        4_999,
        "every attachment part is listed"
    );
}

#[test]
fn a_body_nested_too_deep_to_render_is_shown_as_its_text_with_a_structural_warning() {
    // Hundreds of KB of nested tags: deeper than any browser's parser keeps as written.
    let depth = 40_000;
    let html = format!(
        "{}Transfer the deposit today.{}",
        "<div><span>".repeat(depth / 2),
        "</span></div>".repeat(depth / 2)
    );
    assert!(html.len() > 400_000);
    let raw = format!(
        "From: owen@example.com\r\nTo: ana@example.com\r\nSubject: nested\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    );
    let view = render_message(raw.as_bytes(), &RenderOptions::default());
    let warning = view
        .warnings
        .iter()
        .find(|w| w.kind == countersign_render::WarningKind::DeeplyNested)
        .unwrap_or_else(|| panic!("no warning: {:?}", view.warnings));
    assert!(warning.kind.is_structural());
    assert!(
        warning.message.contains("40000 levels"),
        "{}",
        warning.message
    );
    // Never a blank page: the words are in what the frame shows, and in the text.
    assert!(view.html_body.contains("Transfer the deposit today."));
    assert!(
        view.html_body.len() < 10_000,
        "the nesting itself is not shown"
    );
    assert!(view.text_body.contains("Transfer the deposit today."));
}

#[test]
fn a_body_nested_past_what_browsers_render_but_parseable_gets_the_same_warning() {
    let html = format!(
        "{}Sign here.{}",
        "<div>".repeat(1000),
        "</div>".repeat(1000)
    );
    let raw = format!(
        "From: owen@example.com\r\nTo: ana@example.com\r\nSubject: nested\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    );
    let view = render_message(raw.as_bytes(), &RenderOptions::default());
    assert_eq!(view.warnings.len(), 1, "{:?}", view.warnings);
    assert!(view.warnings[0].message.contains("1000 levels"));
    assert!(view.html_body.contains("Sign here."));
    assert!(!view.html_body.contains("<div><div>"));
}

#[test]
fn an_ordinarily_nested_body_is_shown_as_it_is() {
    let html = format!("{}Hello.{}", "<div>".repeat(60), "</div>".repeat(60));
    let raw = format!(
        "From: owen@example.com\r\nTo: ana@example.com\r\nSubject: nested\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    );
    let view = render_message(raw.as_bytes(), &RenderOptions::default());
    assert_eq!(view.warnings, vec![]);
    assert!(view.html_body.contains(&"<div>".repeat(60)));
}

#[test]
fn a_sheet_too_large_to_evaluate_in_full_is_styling_not_evaluated() {
    // Thousands of descendant rules over thousands of deeply nested elements: past the budget
    // of selector tests the review stops matching (it must not stall) and says so.
    let css: String = (0..2000)
        .map(|i| format!("article span.x{i}, section span {{ color: #{i:06x} }}\n"))
        .collect();
    let html = format!(
        "<style>{css}</style>{}{}<p>Invoice attached.</p>{}",
        "<div>".repeat(1500),
        "<span>s</span><b>b</b>".repeat(2000),
        "</div>".repeat(1500)
    );
    let view = countersign_render::render_message(
        &crate::support::html_draft(&html),
        &countersign_render::RenderOptions::default(),
    );
    assert!(
        view.unverifiable_styling.iter().any(|s| s
            .what
            .starts_with("more style rules and elements than Countersign evaluates")),
        "{:?}",
        view.unverifiable_styling
    );
}
