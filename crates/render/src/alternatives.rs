//! Comparing a draft's two alternatives: the plain-text part and the text a recipient sees in
//! the HTML part. A phone preview, a screen reader or the recipient's own assistant may read
//! either one, so both must say the same thing.
//!
//! The comparison is on words: whitespace, `>` quoting, link syntax (`text <url>`,
//! `text [url]`, `[text](url)`, bare URLs), markdown emphasis, list bullets, punctuation at
//! word ends and Gmail's `[image: …]` placeholders do not count. Letter case and everything
//! else does.

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

use similar::{capture_diff_slices, Algorithm};

use crate::flag::{Flag, FlagKind};
use crate::text::excerpt;

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

/// What the HTML part offers a reader besides its visible text.
#[derive(Debug, Default)]
pub(crate) struct HtmlSide<'a> {
    /// The text a recipient sees.
    pub visible: &'a str,
    /// Where its links go.
    pub hrefs: Vec<String>,
    /// Alt texts of its images and the file names of the message's images and attachments:
    /// what a text part writes in an image's place (`[image: Logo]`, `[blue ball]`, `a.png`).
    pub image_words: Vec<String>,
}

/// How the plain-text part is wrapped (RFC 3676).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Wrapping {
    #[default]
    Fixed,
    /// `format=flowed`: a line ending in a space continues on the next.
    Flowed,
    /// `format=flowed; delsp=yes`: that space is not part of the text either.
    FlowedDelSp,
}

/// Compares the plain-text part with the HTML's visible text; `None` when they agree.
pub(crate) fn compare(
    text_part: &str,
    flowed: Wrapping,
    html: &HtmlSide<'_>,
) -> Option<AlternativesDifference> {
    let text_part = unflow(text_part, flowed);
    let text = words(&without_separators(&without_references(
        &open_placeholders(&text_part),
    )));
    let html_words = words(&without_separators(html.visible));
    let pictures: HashSet<String> = html
        .image_words
        .iter()
        .flat_map(|w| words(w).keys)
        .chain(html.image_words.iter().map(|w| w.to_lowercase()))
        .collect();
    // A URL is a word too, matched against every URL the other part writes or links to.
    let html_urls: HashSet<String> = html
        .hrefs
        .iter()
        .map(|h| url_key(&normal_url(h)))
        .chain(html_words.urls.iter().map(|u| url_key(u)))
        .collect();
    let text_urls: HashSet<String> = text.urls.iter().map(|u| url_key(u)).collect();
    let ops = capture_diff_slices(Algorithm::Myers, &text.keys, &html_words.keys);
    let accepted = |range: std::ops::Range<usize>, side: &[String], urls: &HashSet<String>| {
        side[range]
            .iter()
            .all(|w| pictures.contains(w) || urls.contains(w))
    };
    // The same letters spaced otherwise ("nord-occidentale" against an HTML source line break
    // read as "nord-o ccidentale"); not for digits, where a space splits an amount.
    let respaced = |old: std::ops::Range<usize>, new: std::ops::Range<usize>| {
        let (a, b) = (text.keys[old].concat(), html_words.keys[new].concat());
        a == b && !a.chars().any(|c| c.is_ascii_digit())
    };
    let first = ops.iter().find(|op| {
        let (tag, old, new) = op.as_tag_tuple();
        tag != similar::DiffTag::Equal
            && !(accepted(old.clone(), &text.keys, &html_urls)
                && accepted(new.clone(), &html_words.keys, &text_urls))
            && !respaced(old, new)
    })?;
    let (_, old, new) = first.as_tag_tuple();
    Some(AlternativesDifference {
        text_passage: passage(&text.shown, old),
        html_passage: passage(&html_words.shown, new),
    })
}

/// The comparison key of a normalized URL: never equal to a word's.
fn url_key(normal: &str) -> String {
    format!("\u{1}{normal}")
}

fn passage(side: &[String], range: std::ops::Range<usize>) -> String {
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

/// Opens the `[image: alt]` placeholders Gmail writes into the text part for HTML images: the
/// alt's words stay, to be matched with the HTML's images (they must not carry other text).
fn open_placeholders(text: &str) -> String {
    text.replace("[image:", " ").replace("[Image:", " ")
}

/// Removes `[1]`-style link-reference markers (the footnote's URL stays, and is compared).
fn without_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && digits <= 3 && tail[digits..].starts_with(']') {
            out.push(' ');
            rest = &tail[digits + 1..];
        } else {
            out.push('[');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Removes the "----- Original Message -----" and "---------- Forwarded message ---------"
/// lines mail programs write in the text part where the HTML draws a rule.
fn without_separators(text: &str) -> String {
    text.lines()
        .filter(|line| {
            let words = line
                .trim()
                .trim_matches(|c: char| c == '-' || c.is_whitespace())
                .to_ascii_lowercase();
            let dashed = line.trim_start().starts_with("--");
            !(dashed && matches!(words.as_str(), "original message" | "forwarded message"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Joins the soft line breaks of a `format=flowed` text (RFC 3676 section 4): a line ending
/// in a space continues on the next, without that space when `delsp=yes`. Space-stuffing
/// and the signature separator are respected.
fn unflow(text: &str, flowed: Wrapping) -> String {
    if flowed == Wrapping::Fixed {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.strip_prefix(' ').unwrap_or(line);
        if line.ends_with(' ') && line != "-- " {
            let kept = if flowed == Wrapping::FlowedDelSp {
                &line[..line.len() - 1]
            } else {
                line
            };
            out.push_str(kept);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Characters that separate words here: whitespace and the brackets of link syntax.
fn separates(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '<' | '>'
                | '['
                | ']'
                | '('
                | ')'
                | '{'
                | '}'
                | '"'
                | '\u{201c}'
                | '\u{201d}'
                | '\u{201e}'
                | '\u{201f}'
                | '\u{00ab}'
                | '\u{00bb}'
                | '\u{2039}'
                | '\u{203a}'
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
            | '#'
            | '='
            | '|'
            | '-'
            | '\u{2022}'
            | '\u{00b7}'
            | '\u{25aa}'
            | '\u{25cf}'
            | '\u{2023}'
    )
}

/// Typography a reader does not read: curly quotes and apostrophes, the dashes, the minus
/// sign, and the invisible characters that only join, break or hyphenate words.
fn typography(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => Some('\''),
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe63}' | '\u{ff0d}' => Some('-'),
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{00ad}' | '\u{034f}' => None,
        c => Some(c),
    }
}

fn is_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.contains("://") || lower.starts_with("mailto:") || lower.starts_with("www.")
}

/// A URL as a reader compares it: no scheme, no `www.`, host and scheme in lower case, no
/// trailing slash or punctuation, `&amp;` read as `&`.
fn normal_url(url: &str) -> String {
    let url = url.trim().replace("&amp;", "&");
    let url = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '/', '\'']);
    let lower = url.to_ascii_lowercase();
    if let Some(address) = lower.strip_prefix("mailto:") {
        return format!("mailto:{address}");
    }
    let rest = lower.find("://").map_or(url, |at| &url[at + 3..]);
    let (host, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let host = host.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    format!("{host}{path}").trim_end_matches('/').to_owned()
}

/// File names of images run together by some mail programs ("a.pngb.png"), taken apart.
fn split_image_names(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = word;
    'outer: while !rest.is_empty() {
        for ext in [".png", ".jpg", ".jpeg", ".gif"] {
            if let Some(at) = rest.find(ext) {
                let end = at + ext.len();
                if end < rest.len() {
                    out.push(rest[..end].to_owned());
                    rest = &rest[end..];
                    continue 'outer;
                }
            }
        }
        out.push(rest.to_owned());
        break;
    }
    out
}

/// The words that carry meaning, in order, as written (see [`words`]).
struct Words {
    /// Lower case, for comparing.
    keys: Vec<String>,
    /// As written, for quoting.
    shown: Vec<String>,
    /// The URLs, normalized.
    urls: Vec<String>,
}

/// The words that carry meaning, in order and in lower case, and the URLs, normalized.
/// A sign stays on a number: "-500" is not "500".
fn words(text: &str) -> Words {
    let text: String = text.chars().filter_map(typography).collect();
    let mut out = Words {
        keys: Vec::new(),
        shown: Vec::new(),
        urls: Vec::new(),
    };
    for raw in text.split(separates) {
        if is_url(raw) {
            let normal = normal_url(raw);
            out.keys.push(url_key(&normal));
            out.shown.push(
                raw.trim_end_matches(['.', ',', ';', ':', '!', '?'])
                    .to_owned(),
            );
            out.urls.push(normal);
            continue;
        }
        let mut w = raw.trim_matches(trimmed);
        if w.is_empty() {
            continue;
        }
        // Keep the sign of an amount.
        let start = raw.len() - raw.trim_start_matches(trimmed).len();
        if start > 0
            && raw[..start].ends_with(['-', '+'])
            && w.starts_with(|c: char| c.is_ascii_digit())
        {
            let at = raw[..start].len() - 1;
            w = &raw[at..at + 1 + w.len()];
        }
        for part in split_image_names(w) {
            // An apostrophe a charset could not carry comes out as '?': "all?attività".
            out.keys.push(part.to_lowercase().replace(['\'', '?'], ""));
            out.shown.push(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compare(text: &str, html: &str) -> Option<AlternativesDifference> {
        with(text, html, &[], &[])
    }

    fn with(
        text: &str,
        html: &str,
        hrefs: &[&str],
        images: &[&str],
    ) -> Option<AlternativesDifference> {
        super::compare(
            text,
            Wrapping::Fixed,
            &HtmlSide {
                visible: html,
                hrefs: hrefs.iter().map(|h| h.to_string()).collect(),
                image_words: images.iter().map(|h| h.to_string()).collect(),
            },
        )
    }

    #[test]
    fn link_syntax_quoting_and_emphasis_do_not_count() {
        let text = "Hi *Ana*,\n\nthe _report_ is here <https://x.example/r> and [there](https://y.example).\n\
                    Mail me: ana@example.com <mailto:ana@example.com>\n> quoted line\n>> deeper\n-- \nOwen";
        let html = "Hi Ana,\nthe report is here and there.\nMail me: ana@example.com\nquoted line\ndeeper\n--\nOwen";
        let hrefs = [
            "https://x.example/r",
            "https://y.example",
            "mailto:ana@example.com",
        ];
        assert_eq!(with(text, html, &hrefs, &[]), None);
        let changed = with(
            text,
            html,
            &["https://evil.example/r", hrefs[1], hrefs[2]],
            &[],
        );
        let changed = changed.expect("differs");
        assert!(
            changed.text_passage.contains("https://x.example/r"),
            "{changed:?}"
        );
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
    fn flowed_delsp_references_and_typography_do_not_count() {
        let flowed = super::compare(
            "Die Zusammen \r\narbeit l\u{e4}uft.  \r\nSee the report[1].\r\n\r\n[1] https://x.example/r\r\n",
            Wrapping::FlowedDelSp,
            &HtmlSide {
                visible: "Die Zusammen\u{ad}arbeit l\u{e4}uft. See the \u{201c}report\u{201d}.",
                hrefs: vec!["https://x.example/r".into()],
                image_words: Vec::new(),
            },
        );
        assert_eq!(flowed, None);
        assert_eq!(
            compare("1. it\u{2019}s done \u{2013} ok", "1 it's done - ok"),
            None
        );
    }

    #[test]
    fn letter_case_does_not_count_but_a_sign_does() {
        assert_eq!(compare("ok", "OK"), None);
        assert!(compare("refund 500 EUR", "refund -500 EUR").is_some());
        assert_eq!(compare("refund \u{2212}500", "refund -500"), None);
    }

    #[test]
    fn gmail_image_placeholders_are_not_words() {
        assert_eq!(
            with("Owen\n[image: Logo]\nCEO", "Owen\nCEO", &[], &["Logo"]),
            None
        );
        let smuggled = with(
            "Owen\n[image: wire it today]\nCEO",
            "Owen\nCEO",
            &[],
            &["Logo"],
        );
        assert_eq!(
            smuggled.expect("differs").text_passage,
            "Owen wire it today CEO"
        );
    }
}
