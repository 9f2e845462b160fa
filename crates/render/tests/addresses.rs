//! One reading of addresses, the strictest (issue 33): address headers that mail programs
//! read differently are flagged, and the review lists every address any of them finds.
//!
//! The table is `fixtures/addresses/python-readings.json`, written once by
//! `fixtures/addresses/python_readings.py` (Python 3.11's `email` package, `policy=default`):
//! each shape's bytes, whether the review must warn, and Python's reading of every occurrence of
//! every address header. The test compares Python's reading with mail-parser's (the review's
//! parser) and with the review itself; it needs no Python.

use std::collections::BTreeSet;

use countersign_render::{render_message, Address, RenderOptions, ReviewView, WarningKind};
use mail_parser::MessageParser;
use serde::Deserialize;

use crate::support::fixtures;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Table {
    shapes: Vec<Shape>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Shape {
    shape: String,
    raw: String,
    expect_warning: bool,
    /// Header name → its occurrences in message order, as Python read each.
    python: std::collections::BTreeMap<String, Vec<Occurrence>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Occurrence {
    addresses: Vec<PythonAddress>,
    defects: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PythonAddress {
    addr_spec: String,
}

/// The addresses a list holds, lower-case.
fn emails<'a>(list: impl IntoIterator<Item = &'a Address>) -> BTreeSet<String> {
    list.into_iter().map(|a| a.email.to_lowercase()).collect()
}

/// What the review lists for `header`.
fn listed(view: &ReviewView, header: &str) -> BTreeSet<String> {
    match header {
        "From" => emails(&view.from),
        "Sender" => emails(view.sender.iter()),
        "Reply-To" => emails(&view.reply_to),
        "To" => emails(&view.to),
        "Cc" => emails(&view.cc),
        "Bcc" => emails(&view.bcc),
        other => panic!("not an address header: {other}"),
    }
}

/// mail-parser's own reading of `header` (the one it keeps: the last occurrence).
fn mail_parser_reading(raw: &[u8], header: &str) -> BTreeSet<String> {
    let message = MessageParser::default().parse(raw).expect("a message");
    let value = match header {
        "From" => message.from(),
        "Sender" => message.sender(),
        "Reply-To" => message.reply_to(),
        "To" => message.to(),
        "Cc" => message.cc(),
        "Bcc" => message.bcc(),
        other => panic!("not an address header: {other}"),
    };
    value
        .map(|a| {
            a.iter()
                .filter_map(|a| a.address.as_deref())
                .map(|e| e.trim().to_lowercase())
                .filter(|e| !e.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Python's addr_spec as a mailbox a person would read: quotes dropped (`"eve@evil.test"` is
/// what Python makes of an encoded-word address); `None` for what is no mailbox at all (`<>`).
fn as_mailbox(addr_spec: &str) -> Option<String> {
    let bare = addr_spec.replace('"', "").to_lowercase();
    (bare.matches('@').count() == 1 && !bare.starts_with('@') && !bare.ends_with('@'))
        .then_some(bare)
}

#[test]
fn every_address_header_that_readers_disagree_on_is_flagged_and_lists_every_reading() {
    let table: Table = serde_json::from_slice(
        &std::fs::read(fixtures("addresses").join("python-readings.json")).unwrap(),
    )
    .unwrap();
    assert!(
        table.shapes.len() >= 15,
        "the table has {}",
        table.shapes.len()
    );
    let mut failures = Vec::new();
    for shape in &table.shapes {
        let raw = shape.raw.as_bytes();
        let view = render_message(raw, &RenderOptions::default());
        let warned: Vec<&str> = view
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::AmbiguousAddress)
            .map(|w| w.message.as_str())
            .collect();
        let mut disagreement = Vec::new();
        for (header, occurrences) in &shape.python {
            // The shapes add a plain From to every draft; only a shape about From judges it.
            if header == "From" && !shape.shape.contains("From") {
                continue;
            }
            let first: BTreeSet<String> = occurrences[0]
                .addresses
                .iter()
                .map(|a| a.addr_spec.to_lowercase())
                .collect();
            let ours = mail_parser_reading(raw, header);
            if occurrences.len() > 1 {
                disagreement.push(format!("{header} appears {} times", occurrences.len()));
            }
            if first != ours {
                disagreement.push(format!(
                    "{header}: Python reads {first:?}, mail-parser {ours:?}"
                ));
            }
            if occurrences.iter().any(|o| !o.defects.is_empty()) {
                disagreement.push(format!("{header}: Python notes defects"));
            }
            // The review lists every mailbox any reading finds, in any occurrence.
            let shown = listed(&view, header);
            for mailbox in occurrences
                .iter()
                .flat_map(|o| &o.addresses)
                .filter_map(|a| as_mailbox(&a.addr_spec))
            {
                // The review shows one Sender; its warning names every one.
                let named = header == "Sender" && warned.iter().any(|w| w.contains(&mailbox));
                if !shown.contains(&mailbox) && !named {
                    failures.push(format!(
                        "{}: Python finds {mailbox} in {header}, the review lists {shown:?}",
                        shape.shape
                    ));
                }
            }
        }
        if !disagreement.is_empty() && warned.is_empty() {
            failures.push(format!(
                "{}: readers disagree ({}) and the review does not warn",
                shape.shape,
                disagreement.join("; ")
            ));
        }
        if shape.expect_warning && warned.is_empty() {
            failures.push(format!("{}: no warning", shape.shape));
        }
        if !shape.expect_warning && !warned.is_empty() {
            failures.push(format!("{}: a false alarm: {warned:?}", shape.shape));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_bcc_followed_by_an_empty_bcc_is_listed_and_asks_before_approving() {
    let raw = b"From: owner@example.com\r\nTo: ana@example.com\r\nBcc: eve@evil.test\r\nBcc:\r\n\
        Subject: Invoice\r\n\r\nThe invoice.\r\n";
    let view = render_message(raw, &RenderOptions::default());
    assert_eq!(
        emails(&view.bcc),
        BTreeSet::from(["eve@evil.test".to_owned()])
    );
    let warning = view
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::AmbiguousAddress)
        .expect("a warning");
    assert!(warning.kind.is_structural(), "Approve asks");
    assert_eq!(
        warning.message,
        "The Bcc header appears 2 times (one of them empty): mail programs read it differently, \
         so the review lists every address any of them finds (eve@evil.test)."
    );
}

#[test]
fn an_address_with_two_ats_is_flagged_and_its_first_reading_listed() {
    let raw = b"From: owner@example.com\r\nTo: eve@evil.test@example.com\r\n\
        Subject: Invoice\r\n\r\nThe invoice.\r\n";
    let view = render_message(raw, &RenderOptions::default());
    assert!(
        emails(&view.to).contains("eve@evil.test"),
        "the reading up to the second @ is listed: {:?}",
        view.to
    );
    let warning = view
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::AmbiguousAddress)
        .expect("a warning");
    assert!(
        warning.message.contains("more than one @"),
        "{}",
        warning.message
    );
}
