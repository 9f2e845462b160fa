//! Hidden text: words in a draft's HTML that a recipient's mail program does not display, yet
//! that their assistant, search index or plain-text view reads.
//!
//! The draft's own HTML is read before sanitizing, in two ways at once:
//!
//! - as a recipient's mail program shows it: `<style>` rules, inline styles, the `hidden`
//!   attribute and Outlook's `mso-hide` all count;
//! - as this review shows it: the sanitizer keeps inline styles but drops `<style>` and the
//!   `hidden` attribute, and the review frame is a browser, which ignores `mso-hide`.
//!
//! Text hidden from recipients is reported with how it is hidden and whether the owner sees it
//! in the review. Inline hiding is invisible to both; class-based hiding shows the owner text
//! recipients never see. The same walk yields the text a recipient sees, which the
//! alternatives check compares with the plain-text part.

mod cascade;
mod reader;
mod reading;

pub use self::reading::HiddenPassage;
pub(crate) use self::reading::HtmlReading;

use self::cascade::rules_at;
use self::reader::Reader;
use crate::dom::Dom;
use crate::flag::{Flag, FlagKind};
use crate::machine::MachineReading;
use crate::styling::media::{DESKTOP_WIDTH, PHONE_WIDTH};
use crate::styling::sheet;
use crate::styling::{self as styling, UnverifiableStyle};
use crate::text::excerpt;

/// `text` with runs of whitespace made one space.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads `html` (a draft's HTML body, unsanitized) as it shows on a desktop and on a phone.
pub(crate) fn read_html(html: &str) -> HtmlReading {
    let dom = Dom::parse(html);
    let sheet = sheet::parse_sheet(&styling::style_text(&dom));
    let unverifiable = styling::audit(&dom, &sheet);
    let desktop = rules_at(&sheet, DESKTOP_WIDTH);
    let phone = rules_at(&sheet, PHONE_WIDTH);
    let narrow_differs = sheet
        .rules
        .iter()
        .any(|r| r.condition.applies_at(DESKTOP_WIDTH) != r.condition.applies_at(PHONE_WIDTH));
    let mut reading = Reader::new(&dom, desktop.clone(), desktop.clone()).read();
    if narrow_differs {
        // Text is hidden from recipients when no screen shows it: what a phone shows and a
        // desktop hides (a mobile-only block) is seen, and so is the reverse. What recipients
        // see and this review does not counts on either screen.
        let on_phones = Reader::new(&dom, phone, desktop).read();
        let phone_shows = squeeze(&on_phones.visible_text);
        reading
            .passages
            .retain(|p| p.only_recipients_see || !phone_shows.contains(&squeeze(&p.text)));
        for mut passage in on_phones.passages {
            let known = reading.passages.iter().any(|p| p.text == passage.text);
            if passage.only_recipients_see && !known {
                passage.technique = format!("on narrow screens, {}", passage.technique);
                reading.passages.push(passage);
            }
        }
    }
    reading.unverifiable = unverifiable;
    // What only Outlook hides, every other program shows.
    let mut shown = reading.visible_text.clone();
    for p in reading
        .passages
        .iter()
        .filter(|p| p.technique.contains("mso-hide"))
    {
        shown.push('\n');
        shown.push_str(&p.text);
    }
    let mut machine = MachineReading::new(&shown);
    machine.read_dom(&dom);
    // A bulletproof button: the link hidden from Outlook (mso-hide) has its twin in the
    // Outlook-only branch, so every recipient sees the words.
    let outlook_words: String = machine
        .found
        .iter()
        .filter(|m| m.source == crate::machine::OUTLOOK_BRANCH)
        .map(|m| m.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    reading.passages.retain(|p| {
        !(p.technique.contains("mso-hide") && squeeze(&outlook_words).contains(&squeeze(&p.text)))
    });
    reading.machine = machine.found;
    let mut review = dom;
    if !sheet.rules.is_empty() {
        styling::inline::inline_rules(&mut review, &sheet);
        reading.review_html = Some(review.to_html());
    }
    // Deny by default: a sheet too large to evaluate in full is styling not evaluated.
    if review.matching_was_cut() {
        reading.unverifiable.push(UnverifiableStyle {
            place: "<style> sheet".to_owned(),
            what: "more style rules and elements than Countersign evaluates: past its budget \
                   of selector tests, rules were not applied"
                .to_owned(),
        });
    }
    reading
}

/// The `hidden_text` flag for these passages, if any.
pub(crate) fn flag(passages: &[HiddenPassage]) -> Option<Flag> {
    let first = passages.first()?;
    let quoted = |p: &HiddenPassage| {
        format!(
            "\u{201c}{}\u{201d} ({})",
            excerpt(&p.text, 120),
            p.technique
        )
    };
    let unseen: Vec<String> = passages
        .iter()
        .filter(|p| !p.shown_in_review)
        .map(quoted)
        .collect();
    let seen: Vec<String> = passages
        .iter()
        .filter(|p| p.shown_in_review)
        .map(quoted)
        .collect();
    let mut sentences = Vec::new();
    if !unseen.is_empty() {
        sentences.push(format!(
            "The HTML hides {}: recipients' assistants, search and plain-text views read it, \
             but you don't see it here.",
            unseen.join("; ")
        ));
    }
    if !seen.is_empty() {
        sentences.push(format!(
            "You see {} here, but recipients' mail programs hide it.",
            seen.join("; ")
        ));
    }
    Some(Flag {
        kind: FlagKind::HiddenText,
        about: excerpt(&first.text, 40),
        explanation: sentences.join(" "),
        recipients: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(html: &str) -> Vec<(String, bool)> {
        read_html(html)
            .passages
            .into_iter()
            .map(|p| (p.text, p.shown_in_review))
            .collect()
    }

    #[test]
    fn a_child_that_restores_the_font_size_is_visible() {
        assert!(hidden(
            "<p>Hi</p><div style=\"font-size:0\"><span style=\"font-size:14px\">shown</span></div>"
        )
        .is_empty());
    }

    #[test]
    fn an_inline_rule_beats_a_style_rule_unless_the_rule_is_important() {
        let css = "<style>.x{display:none}</style>";
        assert!(hidden(&format!(
            "{css}<p>a</p><p class=x style=\"display:block\">b</p>"
        ))
        .is_empty());
        // The review applies the rule too (written into the style attribute): hidden there.
        assert_eq!(
            hidden("<style>.x{display:none!important}</style><p>a</p><p class=x style=\"display:block\">b</p>"),
            [("b".to_owned(), false)]
        );
    }

    #[test]
    fn a_comment_inside_an_inline_declaration_hides_from_recipients_but_not_the_review() {
        assert_eq!(
            hidden("<p>a</p><p style=\"display:/**/none\">secret words</p>"),
            [("secret words".to_owned(), true)]
        );
    }

    #[test]
    fn dark_text_on_a_dark_background_is_readable_when_it_contrasts() {
        assert!(hidden(
            "<div style=\"background:#000\"><p style=\"color:#fff\">readable</p></div>"
        )
        .is_empty());
        assert_eq!(
            hidden("<div style=\"background:#000\"><p style=\"color:#010101\">dark</p></div>"),
            [("dark".to_owned(), false)]
        );
    }

    #[test]
    fn visible_text_keeps_blocks_on_their_own_lines_and_skips_the_head() {
        let reading = read_html(
            "<html><head><title>T</title><style>p{}</style></head><body><div dir=ltr>Hi <b>Ana</b>,<br>line<p>para</p><ol><li>one</li><li>two</li></ol></div>",
        );
        assert_eq!(reading.visible_text, "Hi Ana,\nline\npara\n1. one\n2. two");
    }

    #[test]
    fn a_deeply_nested_body_is_read_without_overflowing_the_stack() {
        let html =
            "<div>".repeat(10_000) + "<p>x</p><span style=\"display:none\">deep secret</span>";
        assert_eq!(hidden(&html), [("deep secret".to_owned(), false)]);
    }

    #[test]
    fn excerpts_cut_at_a_word_and_say_so() {
        assert_eq!(excerpt("one two three", 9), "one two\u{2026}");
        assert_eq!(excerpt("short", 9), "short");
    }
}
