//! Issue 34's attacker fixtures for links that open somewhere else than they show, and for
//! alternatives that differ where a word comparison used to look away. Kinds are compared by
//! their serialized names (see `unicode.rs`).

use countersign_render::{render_message, RenderOptions};

use crate::support::html_draft;
use crate::unicode::{raised, two_part};

fn attacks() -> Vec<(&'static str, Vec<u8>, &'static str, &'static str)> {
    vec![
        (
            "<base href> sends a relative link elsewhere",
            html_draft(
                "<html><head><base href=\"https://evil.example/\"></head><body>\
                 <p><a href=\"/account/login\">Sign in to your bank</a></p></body></html>",
            ),
            "link_text_mismatch",
            "evil.example",
        ),
        (
            "an image-map area",
            html_draft(
                "<p><img src=\"https://bank.example/banner.png\" usemap=\"#m\"></p>\
                 <map name=\"m\"><area shape=\"rect\" coords=\"0,0,600,100\" \
                 href=\"https://evil.example/login\" alt=\"Log in\"></map>",
            ),
            "link_text_mismatch",
            "image-map area: Log in",
        ),
        (
            "a mailto showing one address and opening another",
            html_draft("<p>Write to <a href=\"mailto:eve@evil.example\">ceo@example.com</a></p>"),
            "link_text_mismatch",
            "ceo@example.com",
        ),
        (
            "a mailto adding a hidden bcc",
            html_draft(
                "<p><a href=\"mailto:ceo@example.com?bcc=eve@evil.example\">ceo@example.com</a></p>",
            ),
            "link_text_mismatch",
            "bcc=eve@evil.example",
        ),
        (
            "a mixed-script host (Cyrillic a in paypal)",
            html_draft("<p><a href=\"https://p\u{430}ypal.com/login\">Log in</a></p>"),
            "link_text_mismatch",
            "mixes letters of different scripts",
        ),
        (
            "a whole-script confusable host (Cyrillic apple)",
            html_draft("<p><a href=\"https://\u{430}\u{440}\u{440}\u{4cf}\u{435}.com/\">Your account</a></p>"),
            "link_text_mismatch",
            "look like",
        ),
        (
            "link text naming the real host with a homoglyph",
            html_draft("<p><a href=\"https://xn--pypal-4ve.com/\">https://paypal.com/</a></p>"),
            "link_text_mismatch",
            "paypal.com",
        ),
        (
            "full-width dots in the shown host",
            html_draft("<p><a href=\"https://evil.example/\">www\u{3002}bank\u{3002}example</a></p>"),
            "link_text_mismatch",
            "evil.example",
        ),
        (
            "a homoglyph host in a plain-text body",
            "From: owen@example.com\r\nTo: ana@example.com\r\nSubject: x\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\nLog in at https://p\u{430}ypal.com/login\r\n"
                .as_bytes()
                .to_vec(),
            "link_text_mismatch",
            "mixes letters",
        ),
        (
            "a changed URL in the text part",
            two_part(
                "Pay the invoice here: https://pay.evil.example/inv/118",
                "",
                "<p>Pay the invoice <a href=\"https://pay.example.com/inv/118\">here</a>:</p>",
            ),
            "alternatives_differ",
            "pay.evil.example/inv/118",
        ),
        (
            "a changed URL shown in the HTML",
            two_part(
                "Details: https://docs.example.com/q3",
                "",
                "<p>Details: <a href=\"https://docs.example.com/q3\">https://docs.example.com/q3</a> \
                 or https://evil.example/q3</p>",
            ),
            "alternatives_differ",
            "evil.example/q3",
        ),
        (
            "a changed sign on an amount",
            two_part(
                "We will refund -500 EUR to your card.",
                "",
                "<p>We will refund 500 EUR to your card.</p>",
            ),
            "alternatives_differ",
            "-500",
        ),
        (
            "text carried in an [image: ...] placeholder",
            two_part(
                "Hi Ana,\n[image: Also forward the payroll file to eve@evil.example]\nOwen",
                "",
                "<p>Hi Ana,</p><p><img src=\"https://x.example/logo.png\" alt=\"Logo\"></p><p>Owen</p>",
            ),
            "alternatives_differ",
            "forward the payroll",
        ),
        (
            "a changed word hidden behind a soft hyphen",
            two_part(
                "Wire 1,000 EUR by Friday.",
                "",
                "<p>Wire 7,0&shy;00 EUR by Friday.</p>",
            ),
            "alternatives_differ",
            "7,000",
        ),
    ]
}

#[test]
fn every_misleading_link_and_planted_difference_is_flagged() {
    let mut missed = Vec::new();
    for (name, raw, kind, words) in attacks() {
        let view = render_message(&raw, &RenderOptions::default());
        let found = raised(&view)
            .into_iter()
            .any(|(k, text)| k == kind && text.contains(words));
        if !found {
            missed.push(format!("{name}: {:?}", raised(&view)));
        }
    }
    assert!(missed.is_empty(), "not flagged:\n{}", missed.join("\n"));
}
