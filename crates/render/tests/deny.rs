//! Deny by default: every fixture of `fixtures/deny/` plays an agent slipping words past the
//! owner — styling the reader cannot evaluate, rules that un-hide or add text, content only
//! some programs show, text only machines read — and names in its leading comment (or its
//! `X-Fixture-Flag` header) the flag that must catch it. `fixtures/deny/ordinary/` holds mail
//! as mail programs and careful senders write it, which must raise none of these flags.

use std::fs;
use std::path::{Path, PathBuf};

use countersign_render::{render_message, FlagKind, RenderOptions, ReviewView};

use crate::support::{fixtures, html_draft};

/// The flags that say "recipients or their programs get words you do not see here".
const CONCEALMENT: [FlagKind; 4] = [
    FlagKind::HiddenText,
    FlagKind::UnverifiableStyling,
    FlagKind::MachineText,
    FlagKind::AlternativesDiffer,
];

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "html" || e == "eml"))
        .collect();
    files.sort();
    files
}

/// Renders a fixture without its expectation comment (itself a comment machines read).
fn render(path: &Path) -> (ReviewView, String) {
    let text = fs::read_to_string(path).expect("read fixture");
    if path.extension().is_some_and(|e| e == "eml") {
        let flag = text
            .lines()
            .find_map(|l| l.strip_prefix("X-Fixture-Flag:"))
            .unwrap_or("")
            .trim()
            .to_owned();
        return (
            render_message(text.as_bytes(), &RenderOptions::default()),
            flag,
        );
    }
    let (flag, html) = match text.strip_prefix("<!--").and_then(|c| c.split_once("-->")) {
        Some((comment, html)) => (
            comment
                .lines()
                .find_map(|l| l.strip_prefix("flag:"))
                .unwrap_or("")
                .trim()
                .to_owned(),
            html.to_owned(),
        ),
        None => (String::new(), text),
    };
    (
        render_message(&html_draft(&html), &RenderOptions::default()),
        flag,
    )
}

fn kind_name(kind: FlagKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[test]
fn every_way_of_slipping_words_past_the_owner_is_flagged() {
    let all = files(&fixtures("deny"));
    assert!(all.len() >= 50, "only {} attack fixtures", all.len());
    let mut missed = Vec::new();
    for path in &all {
        let (view, want) = render(path);
        assert!(!want.is_empty(), "{} names no flag", path.display());
        let raised: Vec<String> = view.flags.iter().map(|f| kind_name(f.kind)).collect();
        if want == "shown" {
            // Not flagged, because the review shows the words as recipients see them: in its
            // body, and nothing in the review's reading hides them.
            let shown = view.html_body.contains("Wire the payment")
                && view
                    .hidden_text
                    .iter()
                    .all(|p| !p.text.contains("Wire the payment"));
            if !shown {
                missed.push(format!("{}: not shown", path.display()));
            }
            continue;
        }
        if !raised.contains(&want) {
            missed.push(format!(
                "{}: wanted {want}, raised {raised:?}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn mail_as_mail_programs_write_it_raises_no_concealment_flag() {
    let all = files(&fixtures("deny").join("ordinary"));
    assert!(all.len() >= 20, "only {} ordinary fixtures", all.len());
    let mut alarms = Vec::new();
    for path in &all {
        let (view, _) = render(path);
        for flag in view.flags.iter().filter(|f| CONCEALMENT.contains(&f.kind)) {
            alarms.push(format!(
                "{}: {} — {}",
                path.file_name().unwrap_or_default().to_string_lossy(),
                kind_name(flag.kind),
                flag.explanation
            ));
        }
    }
    assert!(
        alarms.is_empty(),
        "{} false alarms:\n{}",
        alarms.len(),
        alarms.join("\n")
    );
}

#[test]
fn machine_only_words_are_listed_for_the_owner_with_their_source() {
    let (view, _) = render(&fixtures("deny").join("machine-comment.html"));
    let comment = view
        .machine_text
        .iter()
        .find(|m| m.source == "comment")
        .expect("the comment is listed");
    assert!(comment.flagged);
    assert!(
        comment.text.contains("mark the payment as verified"),
        "{comment:?}"
    );
    // A short label is listed but not flagged.
    let (view, _) = render(
        &fixtures("deny")
            .join("ordinary")
            .join("gmail-signature.html"),
    );
    let alt = view
        .machine_text
        .iter()
        .find(|m| m.source == "image alt text")
        .expect("the logo's alt is listed");
    assert_eq!((alt.text.as_str(), alt.flagged), ("Example Ltd", false));
}
