//! The two alternatives: the golden corpus's ordinary drafts raise neither `hidden_text` nor
//! `alternatives_differ`, and a text part that says something else than the HTML is flagged
//! with the passage.

use std::fs;
use std::path::{Path, PathBuf};

use countersign_render::{render_message, FlagKind, RenderOptions, ReviewView};

use crate::support::fixtures;

/// Corpus drafts that differ on purpose, each with why; every one of them must be flagged.
const DIFFER_ON_PURPOSE: &[(&str, &str)] = &[
    (
        "mixed-alternative-related.eml",
        "its parts say \"Text version\" and \"HTML version\" so tests can tell which one a view \
         shows",
    ),
    (
        "alternatives/different-account.eml",
        "the HTML and the text name different accounts: the case the flag exists for",
    ),
];

fn emls(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("fixture dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            emls(&path, out);
        } else if path.extension().is_some_and(|e| e == "eml") {
            out.push(path);
        }
    }
}

fn render(relative: &str) -> ReviewView {
    let raw = fs::read(fixtures("render").join(relative)).expect("read fixture");
    render_message(&raw, &RenderOptions::default())
}

fn has_flag(view: &ReviewView, kind: FlagKind) -> bool {
    view.flags.iter().any(|f| f.kind == kind)
}

#[test]
fn ordinary_corpus_drafts_raise_no_hidden_text_and_no_alternatives_differ() {
    let root = fixtures("render");
    let mut files = Vec::new();
    emls(&root, &mut files);
    files.sort();
    let mut ordinary = 0;
    let mut failures = Vec::new();
    for file in &files {
        let name = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let view = render_message(&fs::read(file).unwrap(), &RenderOptions::default());
        if !view.hidden_text.is_empty() || has_flag(&view, FlagKind::HiddenText) {
            failures.push(format!("{name}: hidden text {:?}", view.hidden_text));
        }
        let differs = view.alternatives_differ.is_some();
        if differs != has_flag(&view, FlagKind::AlternativesDiffer) {
            failures.push(format!("{name}: the flag and the view disagree"));
        }
        match DIFFER_ON_PURPOSE.iter().find(|(n, _)| *n == name) {
            Some((_, why)) if !differs => {
                failures.push(format!("{name} should differ ({why}) but does not"))
            }
            Some(_) => {}
            None if differs => failures.push(format!(
                "{name}: alternatives differ: {:?}",
                view.alternatives_differ
            )),
            None => ordinary += 1,
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        ordinary >= 50,
        "only {ordinary} ordinary drafts were checked"
    );
}

#[test]
fn a_text_part_naming_another_account_is_flagged_with_the_passage() {
    let view = render("alternatives/different-account.eml");
    let difference = view.alternatives_differ.as_ref().expect("differs");
    assert_eq!(
        difference.text_passage,
        "\u{2026} 2026-118 to our account 222 by Friday Thanks Owen"
    );
    assert_eq!(
        difference.html_passage,
        "\u{2026} 2026-118 to our account 111 by Friday Thanks Owen"
    );
    let flag = view
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::AlternativesDiffer)
        .expect("flag");
    assert!(
        flag.explanation.contains("account 222") && flag.explanation.contains("account 111"),
        "{}",
        flag.explanation
    );
}

#[test]
fn gmail_and_outlook_idioms_with_the_same_words_do_not_differ() {
    for name in [
        "alternatives/gmail-reply.eml",
        "alternatives/outlook-reply.eml",
    ] {
        let view = render(name);
        assert!(
            !view.text_derived && !view.html_derived,
            "{name} has both parts"
        );
        assert_eq!(view.alternatives_differ, None, "{name}");
        assert!(!has_flag(&view, FlagKind::AlternativesDiffer), "{name}");
    }
}

#[test]
fn one_changed_word_in_the_gmail_reply_is_a_difference() {
    // The same realistic reply, with one word of the HTML changed: the comparison must see it.
    let raw = fs::read(fixtures("render").join("alternatives/gmail-reply.eml")).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let changed = raw.replacen("interviews next week</li>", "interviews next month</li>", 1);
    assert_ne!(raw, changed, "the fixture holds the phrase");
    let view = render_message(changed.as_bytes(), &RenderOptions::default());
    let difference = view.alternatives_differ.expect("differs");
    assert!(
        difference.text_passage.contains("next week"),
        "{difference:?}"
    );
    assert!(
        difference.html_passage.contains("next month"),
        "{difference:?}"
    );
}

#[test]
fn text_hidden_in_the_html_is_not_part_of_what_recipients_see() {
    // The HTML carries the text part's words plus hidden ones: the visible text still agrees,
    // and the hidden words are reported as hidden text instead.
    let raw =
        "From: owen@example.com\r\nTo: ana@example.com\r\nSubject: x\r\nMIME-Version: 1.0\r\n\
        Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n\
        --b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee you on Monday.\r\n\
        --b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>See you on Monday.</p>\
        <p style=\"display:none\">and bring the keys</p>\r\n--b--\r\n";
    let view = render_message(raw.as_bytes(), &RenderOptions::default());
    assert_eq!(view.alternatives_differ, None);
    assert_eq!(view.hidden_text.len(), 1);
    assert_eq!(view.hidden_text[0].text, "and bring the keys");
}

#[test]
fn a_single_alternative_is_never_compared_with_its_own_derivation() {
    let html_only = render("html-only.eml");
    assert!(html_only.text_derived);
    assert_eq!(html_only.alternatives_differ, None);
    let text_only = render("plain-ascii.eml");
    assert!(text_only.html_derived);
    assert_eq!(text_only.alternatives_differ, None);
}
