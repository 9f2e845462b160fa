//! Comparing a draft's two alternatives: the plain-text part and the text a recipient sees in
//! the HTML part. A phone preview, a screen reader or the recipient's own assistant may read
//! either one, so both must say the same thing.
//!
//! The comparison is on words: whitespace, `>` quoting, link syntax (`text <url>`,
//! `text [url]`, `[text](url)`, bare URLs), markdown emphasis, list bullets, punctuation at
//! word ends and Gmail's `[image: …]` placeholders do not count. Letter case and everything
//! else does.

use serde::{Deserialize, Serialize};
use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::flags::{Flag, FlagKind};
use super::hidden::excerpt;

/// Where a draft's plain-text and HTML alternatives first say different things.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AlternativesDifference {
    /// The passage as the plain-text part says it (a few words of context around the change).
    pub text_passage: String,
    /// The same passage as the HTML part shows it.
    pub html_passage: String,
}

/// Words of unchanged context shown before and after the first difference.
const CONTEXT_WORDS: usize = 4;
/// At most this many changed words are quoted from each side.
const CHANGED_WORDS: usize = 16;

/// Compares the plain-text part with the HTML's visible text; `None` when they agree.
pub(crate) fn compare(text_part: &str, html_visible: &str) -> Option<AlternativesDifference> {
    let text = words(&strip_image_placeholders(text_part));
    let html = words(html_visible);
    let ops = capture_diff_slices(Algorithm::Myers, &text, &html);
    let first = ops.iter().find(|op| !matches!(op, DiffOp::Equal { .. }))?;
    let (_, old, new) = first.as_tag_tuple();
    let passage = |side: &[String], range: std::ops::Range<usize>| {
        let start = range.start.saturating_sub(CONTEXT_WORDS);
        let changed_end = range.end.min(range.start + CHANGED_WORDS);
        let end = (changed_end + CONTEXT_WORDS).min(side.len());
        let end = if range.end > changed_end {
            changed_end
        } else {
            end
        };
        let mut out = side[start..end].join(" ");
        if start > 0 {
            out.insert_str(0, "\u{2026} ");
        }
        if end < side.len() {
            out.push_str(" \u{2026}");
        }
        if out.is_empty() {
            out.push_str("(nothing)");
        }
        out
    };
    Some(AlternativesDifference {
        text_passage: passage(&text, old),
        html_passage: passage(&html, new),
    })
}

/// The `alternatives_differ` flag for a difference.
pub(crate) fn flag(difference: &AlternativesDifference) -> Flag {
    Flag {
        kind: FlagKind::AlternativesDiffer,
        about: excerpt(&difference.html_passage, 40),
        explanation: format!(
            "The plain-text and HTML versions of this message say different things: the plain \
             text says \u{201c}{}\u{201d} where the HTML says \u{201c}{}\u{201d}. Recipients \
             whose mail program, phone preview or assistant reads the plain text get words you \
             may not have reviewed.",
            difference.text_passage, difference.html_passage
        ),
        recipients: Vec::new(),
    }
}

/// Removes the `[image: alt]` placeholders Gmail writes into the text part for HTML images.
fn strip_image_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("[image:") {
        out.push_str(&rest[..at]);
        match rest[at..].find(']') {
            Some(end) => rest = &rest[at + end + 1..],
            None => {
                rest = "";
            }
        }
        out.push(' ');
    }
    out.push_str(rest);
    out
}

/// Characters that separate words here: whitespace and the brackets of link syntax.
fn separates(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '<' | '>' | '[' | ']' | '(' | ')' | '{' | '}' | '"' | '\u{201c}' | '\u{201d}'
        )
}

/// Punctuation and markup dropped from either end of a word.
fn trimmed(c: char) -> bool {
    matches!(
        c,
        '*' | '_'
            | '~'
            | '`'
            | '.'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '\''
            | '\u{2018}'
            | '\u{2019}'
            | '#'
            | '='
            | '|'
            | '-'
            | '\u{2013}'
            | '\u{2014}'
            | '\u{2022}'
            | '\u{00b7}'
    ) || matches!(
        c,
        '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}' | '\u{034f}'
    )
}

fn is_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.contains("://") || lower.starts_with("mailto:") || lower.starts_with("www.")
}

/// The words that carry meaning, in order.
fn words(text: &str) -> Vec<String> {
    text.split(separates)
        .map(|w| w.trim_matches(trimmed))
        .filter(|w| !w.is_empty() && !is_url(w))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_syntax_quoting_and_emphasis_do_not_count() {
        let text = "Hi *Ana*,\n\nthe _report_ is here <https://x.example/r> and [there](https://y.example).\n\
                    Mail me: ana@example.com <mailto:ana@example.com>\n> quoted line\n>> deeper\n-- \nOwen";
        let html = "Hi Ana,\nthe report is here and there.\nMail me: ana@example.com\nquoted line\ndeeper\n--\nOwen";
        assert_eq!(compare(text, html), None);
    }

    #[test]
    fn a_changed_number_is_quoted_from_both_sides_with_context() {
        let d = compare(
            "Please pay the invoice to account 222 by Friday. Thanks",
            "Please pay the invoice to account 111 by Friday. Thanks",
        )
        .expect("differs");
        assert_eq!(
            d.text_passage,
            "\u{2026} the invoice to account 222 by Friday Thanks"
        );
        assert_eq!(
            d.html_passage,
            "\u{2026} the invoice to account 111 by Friday Thanks"
        );
    }

    #[test]
    fn words_only_one_side_has_are_a_difference() {
        let d = compare("See you Monday", "See you Monday and wire the money").expect("differs");
        assert_eq!(d.text_passage, "See you Monday");
        assert_eq!(d.html_passage, "See you Monday and wire the money");
    }

    #[test]
    fn case_counts() {
        assert!(compare("ok", "OK").is_some());
    }

    #[test]
    fn gmail_image_placeholders_are_not_words() {
        assert_eq!(compare("Owen\n[image: Logo]\nCEO", "Owen\nCEO"), None);
    }
}
