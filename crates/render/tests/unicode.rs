//! Issue 34's attacker fixtures for invisible and reordering Unicode, misleading links,
//! header decoding and the two alternatives — each must be flagged — and the ordinary
//! look-alikes that must raise nothing.
//!
//! Kinds are compared by their serialized names ("invisible_characters"), so the same table
//! runs against a renderer that lacks a kind: there every attack fails.

use countersign_render::{render_message, render_plain_text, RenderOptions, ReviewView};

use crate::support::html_draft;

const HEAD: &str = "From: Owen <owen@example.com>\r\nTo: ana@example.com\r\nMIME-Version: 1.0\r\n";

fn text_draft(text: &str) -> Vec<u8> {
    format!("{HEAD}Subject: test\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n")
        .into_bytes()
}

fn headers_draft(headers: &str) -> Vec<u8> {
    format!(
        "{headers}\r\nTo: ana@example.com\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nHello\r\n"
    )
    .into_bytes()
}

/// A two-part draft; `params` is added to the text part's Content-Type.
pub fn two_part(text: &str, params: &str, html: &str) -> Vec<u8> {
    format!(
        "{HEAD}Subject: test\r\nContent-Type: multipart/alternative; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain; charset=utf-8{params}\r\n\r\n{text}\r\n\
         --b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n--b--\r\n"
    )
    .into_bytes()
}

fn attachment_draft(name_param: &str) -> Vec<u8> {
    format!(
        "{HEAD}Subject: test\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
         --b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n\
         --b\r\nContent-Type: application/octet-stream\r\n\
         Content-Disposition: attachment; {name_param}\r\n\r\nAAAA\r\n--b--\r\n"
    )
    .into_bytes()
}

/// Serialized name of each flag kind and warning kind the view raises, with its text.
pub fn raised(view: &ReviewView) -> Vec<(String, String)> {
    let name = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let flags = view.flags.iter().map(|f| {
        (
            name(serde_json::to_value(f.kind).unwrap()),
            format!("{} | {}", f.about, f.explanation),
        )
    });
    let warnings = view.warnings.iter().map(|w| {
        (
            name(serde_json::to_value(w.kind).unwrap()),
            w.message.clone(),
        )
    });
    flags.chain(warnings).collect()
}

/// Attacks: (name, draft, kind it must raise, words its text must hold).
fn attacks() -> Vec<(&'static str, Vec<u8>, &'static str, &'static str)> {
    vec![
        (
            "tag characters in the HTML (ASCII smuggling)",
            html_draft("<p>Thanks!\u{e0049}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}</p>"),
            "invisible_characters",
            "tag characters (\u{d7}6)",
        ),
        (
            "tag characters in the text body",
            text_draft("See you\u{e0053}\u{e0065}\u{e006e}\u{e0064} soon"),
            "invisible_characters",
            "the text body",
        ),
        (
            "right-to-left override in the HTML",
            html_draft("<p>Pay to account \u{202e}4321-8765\u{202c} today</p>"),
            "invisible_characters",
            "U+202E right-to-left override",
        ),
        (
            "bidi isolates in the text body",
            text_draft("Amount: \u{2067}000,01\u{2069} EUR"),
            "invisible_characters",
            "U+2067 right-to-left isolate",
        ),
        (
            "zero-width space inside a word",
            html_draft("<p>Reset your pass\u{200b}word here</p>"),
            "invisible_characters",
            "U+200B zero-width space",
        ),
        (
            "zero-width space written as an entity",
            html_draft("<p>Log in to pay&#8203;pal now</p>"),
            "invisible_characters",
            "U+200B",
        ),
        (
            "zero-width characters encoding bits",
            text_draft("Hello \u{200b}\u{200c}\u{200b}\u{200c}\u{200c}\u{200b} there"),
            "invisible_characters",
            "U+200C zero-width non-joiner",
        ),
        (
            "variation selectors after a letter",
            html_draft("<p>Total a\u{fe01}mount</p>"),
            "invisible_characters",
            "U+FE01 variation selector",
        ),
        (
            "variation selectors smuggled after an emoji",
            text_draft("Great \u{1f600}\u{e0101}\u{e0102}\u{e0103}\u{e0104} work"),
            "invisible_characters",
            "U+E0101 variation selector",
        ),
        (
            "a left-to-right mark in Latin text",
            text_draft("Total\u{200e} 500 EUR"),
            "invisible_characters",
            "U+200E left-to-right mark",
        ),
        (
            "a word joiner inside a word",
            html_draft("<p>Open the in\u{2060}voice</p>"),
            "invisible_characters",
            "U+2060 word joiner",
        ),
        (
            "an invisible math operator",
            text_draft("Pay 1\u{2062}000"),
            "invisible_characters",
            "U+2062",
        ),
        (
            "a Hangul filler as the display name",
            headers_draft("From: =?UTF-8?B?44Wk?= <owen@example.com>\r\nSubject: hi"),
            "invisible_characters",
            "display name or address of owen@example.com",
        ),
        (
            "a right-to-left override in the subject",
            headers_draft(
                "From: owen@example.com\r\nSubject: =?UTF-8?B?SW52b2ljZSDigK5mZHAuZXhl?=",
            ),
            "invisible_characters",
            "The subject",
        ),
        (
            "a right-to-left override in an attachment name",
            attachment_draft("filename*=UTF-8''invoice%E2%80%AEgpj.exe"),
            "invisible_characters",
            "attachment name",
        ),
        (
            "<bdo dir=rtl> shows digits reversed",
            html_draft("<p>Account: <bdo dir=\"rtl\">87654321</bdo></p>"),
            "invisible_characters",
            "shows \u{201c}12345678\u{201d} where programs read \u{201c}87654321\u{201d}",
        ),
        (
            "a bidi-override style",
            html_draft(
                "<p>IBAN <span style=\"unicode-bidi: bidi-override; direction: rtl\">99 DE</span></p>",
            ),
            "invisible_characters",
            "bidi-override",
        ),
        (
            "dir=rtl on number groups",
            html_draft("<p>Card:</p><div dir=\"rtl\">1234 5678</div>"),
            "invisible_characters",
            "shows \u{201c}5678 1234\u{201d}",
        ),
        (
            "tag characters in an image alt (programs read it)",
            html_draft("<p>Hi</p><img src=\"https://x.example/a.png\" alt=\"logo\u{e0041}\u{e0042}\">"),
            "invisible_characters",
            "tag characters",
        ),
        (
            "a Mongolian variation selector after a Latin letter",
            text_draft("confirm\u{180b}ed"),
            "invisible_characters",
            "U+180B",
        ),
    ]
}

#[test]
fn every_invisible_character_attack_is_flagged_with_what_and_where() {
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

#[test]
fn invisible_characters_are_visible_markers_in_both_renderings() {
    let raw = two_part(
        "Pay to \u{202e}4321\u{202c}",
        "",
        "<p>Pay to \u{202e}4321\u{202c}</p>",
    );
    let view = render_message(&raw, &RenderOptions::default());
    assert!(view
        .text_body
        .contains("Pay to \u{27e8}U+202E\u{27e9}4321\u{27e8}U+202C\u{27e9}"));
    assert!(
        view.html_body.contains("\u{27e8}U+202E\u{27e9}</mark>4321"),
        "{}",
        view.html_body
    );
    assert!(
        !view.html_body.contains('\u{202e}'),
        "the override itself is gone"
    );
    // The markers are the review's: the two parts still agree.
    assert_eq!(view.alternatives_differ, None);
}

#[test]
fn a_muster_draft_with_tag_characters_is_flagged_and_marked() {
    let view = render_plain_text(
        "Sure, see you then.\u{e0053}\u{e0045}\u{e004e}\u{e0044}",
        None,
        &RenderOptions::default(),
    );
    let flagged = raised(&view)
        .iter()
        .any(|(k, text)| k == "invisible_characters" && text.contains("tag characters (\u{d7}4)"));
    assert!(flagged, "{:?}", raised(&view));
    assert!(view.text_body.ends_with("then.\u{27e8}U+E0053\u{27e9}\u{27e8}U+E0045\u{27e9}\u{27e8}U+E004E\u{27e9}\u{27e8}U+E0044\u{27e9}"));
    assert!(view.html_body.contains("\u{27e8}U+E0053\u{27e9}</mark>"));
}

#[test]
fn a_character_split_across_encoded_words_reads_whole() {
    let raw = headers_draft(
        "From: =?UTF-8?Q?Ana_Omre=C5?= =?UTF-8?Q?=BEje?= <ana@example.com>\r\n\
         Subject: =?UTF-8?B?b21yZcU=?=\r\n =?UTF-8?B?vmpl?=",
    );
    let view = render_message(&raw, &RenderOptions::default());
    assert_eq!(view.subject.as_deref(), Some("omre\u{17e}je"));
    assert_eq!(view.from[0].name.as_deref(), Some("Ana Omre\u{17e}je"));
    assert!(view.warnings.is_empty(), "{:?}", view.warnings);
}

#[test]
fn a_subject_or_name_that_cannot_be_decoded_says_so() {
    for headers in [
        "From: owen@example.com\r\nSubject: =?UTF-8?B?/w==?= report",
        "From: =?UTF-8?Q?Ow=FFen?= <owen@example.com>\r\nSubject: hi",
    ] {
        let view = render_message(&headers_draft(headers), &RenderOptions::default());
        let warned = raised(&view)
            .iter()
            .any(|(k, text)| k == "undecodable_header" && text.contains("cannot be decoded"));
        assert!(warned, "{headers}: {:?}", raised(&view));
    }
}

/// Ordinary mail that looks like the attacks: none of these kinds may be raised.
pub const QUIET: &[&str] = &[
    "invisible_characters",
    "link_text_mismatch",
    "alternatives_differ",
    "undecodable_header",
    "hidden_text",
    "unverifiable_styling",
    "machine_text",
];

fn look_alikes() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "soft hyphens inside words",
            html_draft("<p>Die Zusammen&shy;arbeit l\u{e4}uft gut.</p>"),
        ),
        (
            "a zero-width non-joiner in Persian",
            text_draft("\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645} \u{628}\u{631}\u{648}\u{645}"),
        ),
        (
            "a zero-width joiner in Devanagari",
            html_draft("<p>\u{915}\u{94d}\u{200d}\u{937} \u{928}\u{92e}\u{938}\u{94d}\u{924}\u{947}</p>"),
        ),
        (
            "emoji with VS16 and ZWJ sequences",
            text_draft("Congrats \u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} \u{1f44d}\u{1f3fd} 1\u{fe0f}\u{20e3}"),
        ),
        (
            "a subdivision flag in the subject",
            headers_draft(
                "From: owen@example.com\r\nSubject: =?UTF-8?B?8J+PtPOggafzoIGi86CBpfOgga7zoIGn86CBvyBtYXRjaA==?=",
            ),
        ),
        (
            "Hebrew text with a right-to-left mark and a dir=rtl block",
            html_draft(
                "<div dir=\"rtl\">\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{200f}123 \u{5e2}\u{5d5}\u{5dc}\u{5dd}</div>",
            ),
        ),
        (
            "Arabic text with an Arabic letter mark",
            text_draft("\u{645}\u{631}\u{62d}\u{628}\u{627} \u{61c}2026 \u{645}\u{639} \u{627}\u{644}\u{633}\u{644}\u{627}\u{645}"),
        ),
        (
            "preheader padding of zero-width non-joiners",
            html_draft("<p>Hello Ana</p><p>&zwnj;&nbsp;&zwnj;&nbsp;&#847;&zwnj;&nbsp;</p>"),
        ),
        ("a byte order mark at the start", text_draft("\u{feff}Hello Ana")),
        (
            "an ideographic variation sequence",
            text_draft("\u{845b}\u{e0100}\u{98fe}\u{533a}"),
        ),
        (
            "an IDN host written the same in text and link",
            html_draft("<p><a href=\"https://xn--bcher-kva.example/\">b\u{fc}cher.example</a></p>"),
        ),
        (
            "a mailto showing its own address",
            html_draft("<p><a href=\"mailto:Ana@Example.com\">ana@example.com</a></p>"),
        ),
        (
            "full-width dots in a link's own host",
            html_draft("<p><a href=\"https://bank.example/\">bank\u{ff0e}example</a></p>"),
        ),
        (
            "smart quotes, dashes and NBSP in the HTML only",
            two_part(
                "It's \"done\" -- see you at 10 o'clock.",
                "",
                "<p>It\u{2019}s \u{201c}done\u{201d} \u{2014} see you at 10&nbsp;o\u{2019}clock.</p>",
            ),
        ),
        (
            "list markers",
            two_part(
                "Agenda:\n1. budget\n2. hiring\n* coffee\n- cake",
                "",
                "<p>Agenda:</p><ol><li>budget</li><li>hiring</li></ol><ul><li>coffee</li><li>cake</li></ul>",
            ),
        ),
        (
            "[1] link references",
            two_part(
                "See the report [1] and the slides [2].\n\n[1] https://x.example/report\n[2] https://x.example/slides",
                "",
                "<p>See the <a href=\"https://x.example/report\">report</a> and the \
                 <a href=\"https://x.example/slides/\">slides</a>.</p>",
            ),
        ),
        (
            "an emoji sent as an image alt",
            two_part(
                "Great work \u{1f389}\n[image: Logo]\nOwen",
                "",
                "<p>Great work <img src=\"https://x.example/e.png\" alt=\"\u{1f389}\"></p>\
                 <p><img src=\"https://x.example/logo.png\" alt=\"Logo\"></p><p>Owen</p>",
            ),
        ),
        (
            "format=flowed; delsp=yes",
            two_part(
                "This sentence is wrapped by the mail program in the mid \r\ndle of a word and  \r\ncontinues.",
                "; format=flowed; delsp=yes",
                "<p>This sentence is wrapped by the mail program in the middle of a word and continues.</p>",
            ),
        ),
        (
            "a signed amount written with a minus sign in the HTML",
            two_part(
                "Balance: -250.00 EUR",
                "",
                "<p>Balance: \u{2212}250.00 EUR</p>",
            ),
        ),
    ]
}

#[test]
fn ordinary_look_alikes_raise_nothing() {
    let mut alarms = Vec::new();
    for (name, raw) in look_alikes() {
        let view = render_message(&raw, &RenderOptions::default());
        let bad: Vec<_> = raised(&view)
            .into_iter()
            .filter(|(k, _)| QUIET.contains(&k.as_str()))
            .collect();
        if !bad.is_empty() {
            alarms.push(format!("{name}: {bad:?}"));
        }
    }
    assert!(alarms.is_empty(), "false alarms:\n{}", alarms.join("\n"));
}
