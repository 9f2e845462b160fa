//! One reading of address headers, the strictest (issue 33).
//!
//! The agent writes every byte of a draft, so it can write an address header that the review's
//! parser (mail-parser, which keeps the last of two headers) reads one way and the recipient's
//! mail program, Gmail or Python's `email` (which read the first) another. Each address header
//! (From, Sender, Reply-To, To, Cc, Bcc — RFC 5322 §3.6 allows each at most once) is read
//! three ways: by mail-parser, occurrence by occurrence; by a strict RFC 5322 §3.4 address-list
//! grammar; and by a loose reader that takes every `local@domain` it can see, in display names,
//! comments, quoted strings and decoded encoded words alike. Whatever any reading finds is
//! listed, and anything they could disagree on is a structural warning: it holds every rule
//! and makes Approve ask. docs/rendering.md lists the cases and their sources.

use mail_parser::{Header, HeaderValue, Message, MessageParser};

use super::headers::{printable, unfolded_raw_value};
use super::{Address, ReviewView, Warning, WarningKind};

/// The address headers, each allowed at most once (RFC 5322 §3.6, the table of field counts).
const ADDRESS_HEADERS: [&str; 6] = ["From", "Sender", "Reply-To", "To", "Cc", "Bcc"];

/// Read every address header the strictest way, widening the view's lists to every address any
/// reading finds and warning where the readings can differ.
pub(super) fn read_address_headers(message: &Message<'_>, view: &mut ReviewView) {
    let headers = &message.root_part().headers;
    for name in ADDRESS_HEADERS {
        let occurrences: Vec<&Header<'_>> = headers
            .iter()
            .filter(|h| h.name.as_str().eq_ignore_ascii_case(name))
            .collect();
        if occurrences.is_empty() {
            continue;
        }
        let mut problems: Vec<String> = Vec::new();
        let mut listed: Vec<Address> = match name {
            "From" => view.from.clone(),
            "Sender" => view.sender.iter().cloned().collect(),
            "Reply-To" => view.reply_to.clone(),
            "To" => view.to.clone(),
            "Cc" => view.cc.clone(),
            _ => view.bcc.clone(),
        };
        let raws: Vec<String> = occurrences
            .iter()
            .map(|h| unfolded_raw_value(message, h))
            .collect();
        if occurrences.len() > 1 {
            let empty = raws.iter().any(|r| r.trim().is_empty());
            problems.push(format!(
                "appears {} times{}",
                occurrences.len(),
                if empty { " (one of them empty)" } else { "" }
            ));
        }
        // Every occurrence as mail-parser reads it on its own (it keeps only the last).
        for header in &occurrences {
            for address in parsed(&header.value) {
                add(&mut listed, address);
            }
        }
        for raw in &raws {
            if let Err(problem) = strict_reading(raw) {
                problems.push(problem.to_owned());
            }
            for decoded in encoded_words(raw)
                .into_iter()
                .filter_map(|w| decode_word(&w))
            {
                if decoded.contains(['@', '<', '>']) {
                    problems.push(format!(
                        "has an encoded word where an address belongs (\u{201c}{}\u{201d})",
                        printable(&decoded, 80)
                    ));
                }
            }
            let mut candidates = loose_addresses(raw);
            candidates.extend(loose_addresses(&decode_inline(raw)));
            // A reader that shows quoted strings without their quotes and escapes
            // (`"ceo\"@example.com" <eve@…>` shows `ceo"@example.com`).
            candidates.extend(loose_addresses(&raw.replace(['\\', '"'], "")));
            for candidate in candidates {
                if !listed
                    .iter()
                    .any(|a| a.email.eq_ignore_ascii_case(&candidate))
                {
                    problems.push(format!(
                        "can also be read as {}",
                        printable(&candidate, 120)
                    ));
                    add(
                        &mut listed,
                        Address {
                            name: None,
                            email: candidate,
                        },
                    );
                }
            }
        }
        if listed.iter().any(|a| a.email.matches('@').count() > 1) {
            problems.push("has more than one @ in an address".to_owned());
        }
        let mut seen = Vec::new();
        problems.retain(|p| {
            let new = !seen.contains(p);
            seen.push(p.clone());
            new
        });
        if !problems.is_empty() {
            let emails: Vec<&str> = listed.iter().map(|a| a.email.as_str()).collect();
            view.warnings.push(Warning {
                kind: WarningKind::AmbiguousAddress,
                message: format!(
                    "The {name} header {}: mail programs read it differently, so the review \
                     lists every address any of them finds ({}).",
                    problems.join("; "),
                    if emails.is_empty() {
                        "none".to_owned()
                    } else {
                        printable(&emails.join(", "), 400)
                    }
                ),
            });
        }
        match name {
            "From" => view.from = listed,
            // The review shows one Sender; the warning names every one.
            "Sender" => view.sender = listed.into_iter().next(),
            "Reply-To" => view.reply_to = listed,
            "To" => view.to = listed,
            "Cc" => view.cc = listed,
            _ => view.bcc = listed,
        }
    }
}

fn add(list: &mut Vec<Address>, address: Address) {
    if !list
        .iter()
        .any(|a| a.email.eq_ignore_ascii_case(&address.email))
    {
        list.push(address);
    }
}

/// The mailboxes of one parsed occurrence (groups flattened), those with an address.
fn parsed(value: &HeaderValue<'_>) -> Vec<Address> {
    let HeaderValue::Address(address) = value else {
        return Vec::new();
    };
    address
        .iter()
        .filter_map(|a| {
            let email = a.address.as_deref()?.trim();
            (!email.is_empty()).then(|| Address {
                name: a
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned),
                email: email.to_owned(),
            })
        })
        .collect()
}

/// A lexical token of an address header (RFC 5322 §3.2): comments and white space dropped.
#[derive(Debug, PartialEq)]
enum Token {
    /// An atom or dot-atom (encoded words included), or a domain literal.
    Word,
    /// A quoted string.
    Quoted,
    /// One of the specials that matter here.
    Special(char),
}

/// The tokens of `value`, or why it cannot be tokenized.
fn tokens(value: &str) -> Result<Vec<Token>, &'static str> {
    const UNBALANCED: &str = "has an unclosed quote, comment or bracket";
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' => {
                let mut depth = 1;
                while depth > 0 {
                    match chars.next().ok_or(UNBALANCED)? {
                        '\\' => {
                            chars.next();
                        }
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                }
            }
            '"' => {
                loop {
                    match chars.next().ok_or(UNBALANCED)? {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push(Token::Quoted);
            }
            '[' => {
                loop {
                    match chars.next().ok_or(UNBALANCED)? {
                        ']' => break,
                        '[' | '\\' => return Err(UNBALANCED),
                        _ => {}
                    }
                }
                out.push(Token::Word);
            }
            '<' | '>' | '@' | ',' | ':' | ';' | ')' | ']' | '\\' => out.push(Token::Special(c)),
            _ => {
                while chars
                    .peek()
                    .is_some_and(|n| !n.is_whitespace() && !"()<>[]:;@\\,\"".contains(*n))
                {
                    chars.next();
                }
                out.push(Token::Word);
            }
        }
    }
    Ok(out)
}

/// Whether `value` is a well-formed RFC 5322 §3.4 list of mailboxes, each a `local@domain` or a
/// display name and `<local@domain>`, separated by commas; else what is wrong with it. An empty
/// value is no list at all, and is judged by the caller (beside another header it is a
/// duplicate; alone, every reader reads nothing).
fn strict_reading(value: &str) -> Result<(), &'static str> {
    let tokens = tokens(value)?;
    if tokens.is_empty() {
        return Ok(());
    }
    if tokens.contains(&Token::Special(':')) {
        return Err("uses group syntax");
    }
    if tokens.contains(&Token::Special(';')) {
        return Err("separates addresses with \u{201c};\u{201d}");
    }
    // A second `@` in one address is not well-formed either; the loose reading names it.
    for mailbox in tokens.split(|t| *t == Token::Special(',')) {
        let well_formed = match mailbox.iter().position(|t| *t == Token::Special('<')) {
            Some(open) => {
                mailbox[..open]
                    .iter()
                    .all(|t| matches!(t, Token::Word | Token::Quoted))
                    && is_addr_spec(&mailbox[open + 1..mailbox.len().saturating_sub(1)])
                    && mailbox.last() == Some(&Token::Special('>'))
                    && mailbox.len() > open + 1
            }
            None => is_addr_spec(mailbox),
        };
        if !well_formed {
            return Err("is not a well-formed list of addresses");
        }
    }
    Ok(())
}

/// `local-part "@" domain`, as tokens.
fn is_addr_spec(tokens: &[Token]) -> bool {
    matches!(
        tokens,
        [
            Token::Word | Token::Quoted,
            Token::Special('@'),
            Token::Word
        ]
    )
}

/// The RFC 2047 encoded words (`=?charset?q|b?text?=`) in `value`, as written.
fn encoded_words(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("=?") {
        let after = &rest[start + 2..];
        // charset ? encoding ? text ?=
        let Some(q1) = after.find('?') else { break };
        let Some(q2) = after[q1 + 1..].find('?').map(|i| q1 + 1 + i) else {
            break;
        };
        let Some(end) = after[q2 + 1..].find("?=").map(|i| q2 + 1 + i) else {
            break;
        };
        out.push(rest[start..start + 2 + end + 2].to_owned());
        rest = &after[end + 2..];
    }
    out
}

/// One encoded word decoded, as mail-parser decodes it in unstructured text.
fn decode_word(word: &str) -> Option<String> {
    let head = format!("Subject: {word}\r\n\r\n");
    let message = MessageParser::default().parse(head.as_bytes())?;
    let decoded = message.subject()?.to_owned();
    (decoded != word).then_some(decoded)
}

/// `value` with each encoded word replaced by its text, wherever it stands: what a reader that
/// decodes encoded words everywhere shows.
fn decode_inline(value: &str) -> String {
    let mut out = value.to_owned();
    for word in encoded_words(value) {
        if let Some(decoded) = decode_word(&word) {
            out = out.replacen(&word, &decoded, 1);
        }
    }
    out
}

/// Every `local@domain` anyone could read in `value`: runs of characters around an `@` that no
/// address delimiter interrupts, wherever they stand (in a display name, a quoted string or a
/// comment too). A run with more than one `@` is read whole (as mail-parser does) and up to its
/// second `@` (the first address in it).
fn loose_addresses(value: &str) -> Vec<String> {
    let delimiter = |c: char| c.is_whitespace() || "<>()[],;:\"\\".contains(c);
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<(usize, char)> = value.char_indices().collect();
    for (i, &(_, c)) in chars.iter().enumerate() {
        if c != '@' {
            continue;
        }
        let mut start = i;
        while start > 0 && !delimiter(chars[start - 1].1) {
            start -= 1;
        }
        let mut end = i + 1;
        while end < chars.len() && !delimiter(chars[end].1) {
            end += 1;
        }
        let from = chars[start].0;
        let to = chars.get(end).map_or(value.len(), |&(at, _)| at);
        let run = value[from..to].trim_matches('.');
        let mut readings = vec![run.to_owned()];
        let ats: Vec<usize> = run.match_indices('@').map(|(at, _)| at).collect();
        if ats.len() > 1 {
            readings.push(run[..ats[1]].to_owned());
        }
        for reading in readings {
            let plausible = reading
                .split_once('@')
                .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty());
            if plausible && !out.iter().any(|o| o.eq_ignore_ascii_case(&reading)) {
                out.push(reading);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_reading_takes_ordinary_lists_and_refuses_the_rest() {
        for ok in [
            "ana@example.com",
            "Ana Lima <ana@example.com>, bo@example.com",
            "\"Lima, Ana\" <ana@example.com>",
            "=?utf-8?q?Ana?= <ana@example.com> (Ana)",
            "\"ana lima\"@example.com",
            "ana@[192.0.2.1]",
            "",
        ] {
            assert_eq!(strict_reading(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("friends: a@example.com;", "uses group syntax"),
            (
                "a@example.com; b@example.com",
                "separates addresses with \u{201c};\u{201d}",
            ),
            (
                "eve@evil.test@example.com",
                "is not a well-formed list of addresses",
            ),
            (
                "a@example.com b@example.com",
                "is not a well-formed list of addresses",
            ),
            (
                "Ana <a@example.com> <b@example.com>",
                "is not a well-formed list of addresses",
            ),
            (
                "Ana <a@example.com",
                "is not a well-formed list of addresses",
            ),
            (
                "=?utf-8?q?eve=40evil.test?=",
                "is not a well-formed list of addresses",
            ),
            (
                "\"Ana <a@example.com>",
                "has an unclosed quote, comment or bracket",
            ),
            (
                "a@example.com,,b@example.com",
                "is not a well-formed list of addresses",
            ),
        ] {
            assert_eq!(strict_reading(bad), Err(why), "{bad}");
        }
    }

    #[test]
    fn the_loose_reading_finds_addresses_wherever_they_stand() {
        assert_eq!(
            loose_addresses("\"ceo@example.com\" <eve@evil.test> (cfo@example.com)"),
            ["ceo@example.com", "eve@evil.test", "cfo@example.com"]
        );
        assert_eq!(
            loose_addresses("eve@evil.test@example.com"),
            ["eve@evil.test@example.com", "eve@evil.test"]
        );
        assert!(loose_addresses("Ana Lima (no address)").is_empty());
        assert_eq!(
            decode_inline("=?utf-8?q?eve=40evil.test?="),
            "eve@evil.test"
        );
    }
}
