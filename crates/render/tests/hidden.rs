//! Hidden text: each fixture of `fixtures/hidden/` hides words one way and says in its leading
//! comment which words, how, and whether the review shows them; `fixtures/hidden/not-hidden/`
//! holds look-alikes that hide nothing.

use std::fs;
use std::path::PathBuf;

use countersign_render::{render_message, FlagKind, RenderOptions, ReviewView};

use crate::support::{body_of, fixtures, html_draft, tags};

struct Expected {
    text: String,
    technique: String,
    shown_in_review: bool,
}

/// Reads the `text:` / `technique:` / `shown_in_review:` lines of a fixture's first comment.
fn expected(html: &str) -> Expected {
    let comment = html
        .strip_prefix("<!--")
        .and_then(|c| c.split_once("-->"))
        .map(|(c, _)| c)
        .expect("fixture starts with its expectation comment");
    let field = |name: &str| {
        comment
            .lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("no {name} line"))
    };
    Expected {
        text: field("text:"),
        technique: field("technique:"),
        shown_in_review: field("shown_in_review:") == "true",
    }
}

fn html_files(dir: PathBuf) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    files.sort();
    files
}

fn render_html(html: &str) -> ReviewView {
    render_message(&html_draft(html), &RenderOptions::default())
}

#[test]
fn every_hiding_technique_is_found_with_its_exact_words() {
    let files = html_files(fixtures("hidden"));
    assert!(files.len() >= 12, "only {} hiding fixtures", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let html = fs::read_to_string(file).expect("read fixture");
        let want = expected(&html);
        let view = render_html(&html);
        let name = file.file_name().unwrap().to_string_lossy();
        let found: Vec<(&str, &str, bool)> = view
            .hidden_text
            .iter()
            .map(|p| (p.text.as_str(), p.technique.as_str(), p.shown_in_review))
            .collect();
        if found
            != [(
                want.text.as_str(),
                want.technique.as_str(),
                want.shown_in_review,
            )]
        {
            failures.push(format!(
                "{name}: expected [({:?}, {:?}, {})], found {found:?}",
                want.text, want.technique, want.shown_in_review
            ));
            continue;
        }
        let flags: Vec<_> = view
            .flags
            .iter()
            .filter(|f| f.kind == FlagKind::HiddenText)
            .collect();
        let quoted = format!("\u{201c}{}\u{201d}", want.text);
        if flags.len() != 1 || !flags[0].explanation.contains(&quoted) {
            failures.push(format!("{name}: flag does not name the words: {flags:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn both_directions_are_covered_by_the_fixtures() {
    let all: Vec<Expected> = html_files(fixtures("hidden"))
        .iter()
        .map(|f| expected(&fs::read_to_string(f).unwrap()))
        .collect();
    // Rules reach the review as inline styles: what only the review shows is what its
    // sanitizer drops (the `hidden` attribute, a commented declaration) or Outlook alone reads.
    assert!(all.iter().filter(|e| e.shown_in_review).count() >= 3);
    assert!(all.iter().filter(|e| !e.shown_in_review).count() >= 10);
}

#[test]
fn look_alikes_that_hide_no_words_raise_nothing() {
    let files = html_files(fixtures("hidden").join("not-hidden"));
    assert!(files.len() >= 5);
    for file in files {
        let view = render_html(&fs::read_to_string(&file).unwrap());
        assert_eq!(view.hidden_text, [], "{}", file.display());
        assert!(
            view.flags.iter().all(|f| f.kind != FlagKind::HiddenText),
            "{}",
            file.display()
        );
    }
}

#[test]
fn the_flag_says_who_sees_the_words_in_each_direction() {
    let view = render_html(
        "<p>Offer attached.</p>\
         <p hidden>shown to you only</p><p>More.</p>\
         <p style=\"display:none\">hidden from you too</p>",
    );
    let flag = view
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::HiddenText)
        .expect("hidden_text flag");
    assert_eq!(flag.about, "shown to you only");
    assert!(
        flag.explanation.contains(
            "You see \u{201c}shown to you only\u{201d} (hidden attribute) here, \
             but recipients' mail programs hide it."
        ),
        "{}",
        flag.explanation
    );
    assert!(
        flag.explanation
            .contains("\u{201c}hidden from you too\u{201d} (display:none)")
            && flag.explanation.contains("but you don't see it here"),
        "{}",
        flag.explanation
    );
    // The review's body really carries the attribute-hidden words without the attribute.
    let body = body_of(&view.html_body);
    assert!(body.contains("shown to you only"), "{body}");
    let attribute_kept = tags(body)
        .iter()
        .any(|(_, attrs)| attrs.iter().any(|(n, _)| n == "hidden"));
    assert!(!attribute_kept, "{body}");
}

#[test]
fn the_review_applies_the_style_rules_recipients_programs_apply() {
    // A `td` rule's dark background and a class rule that hides: the review frame, which
    // never sees <style>, gets them as inline styles, so it shows what a desktop recipient
    // sees (white on black, readable) and hides what the rule hides.
    let view = render_html(
        "<style>td.hero{background:#000000} .gone{display:none}</style>\
         <table><tr><td class=\"hero\"><span style=\"color:#ffffff\">Meeting at 3</span></td></tr></table>\
         <p class=\"gone\">rule-hidden words</p>",
    );
    let body = body_of(&view.html_body);
    let styles: Vec<String> = tags(body)
        .into_iter()
        .flat_map(|(_, attrs)| attrs)
        .filter(|(n, _)| n == "style")
        .map(|(_, v)| v)
        .collect();
    assert!(
        styles.iter().any(|s| s.contains("background: #000000")),
        "{styles:?}"
    );
    assert!(
        styles.iter().any(|s| s.contains("display: none")),
        "{styles:?}"
    );
    let hidden: Vec<(&str, bool)> = view
        .hidden_text
        .iter()
        .map(|p| (p.text.as_str(), p.shown_in_review))
        .collect();
    assert_eq!(hidden, [("rule-hidden words", false)]);
}

#[test]
fn words_the_review_shows_are_in_its_body_without_what_hides_them() {
    // `shownInReview` is a claim about the sanitizer: it drops the `hidden` attribute and
    // inline declarations holding a CSS comment. Check that it does.
    for (file, hiding) in [
        ("13-hidden-attribute.html", "hidden"),
        ("20-comment-in-inline-style.html", "/**/"),
    ] {
        let html = fs::read_to_string(fixtures("hidden").join(file)).unwrap();
        let want = expected(&html);
        assert!(want.shown_in_review, "{file}");
        let view = render_html(&html);
        let body = body_of(&view.html_body);
        assert!(body.contains(&want.text), "{file}: {body}");
        let kept = tags(body)
            .iter()
            .any(|(_, attrs)| attrs.iter().any(|(n, v)| n == hiding || v.contains(hiding)));
        assert!(!kept && !body.contains(hiding), "{file}: {body}");
    }
}
