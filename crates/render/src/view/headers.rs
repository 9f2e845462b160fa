//! Reading a draft's headers into the view: addresses, threading ids, the date, and the
//! warnings a damaged or duplicated header earns.

use mail_parser::Message;

use super::{Address, ReviewView, Warning, WarningKind};
use crate::flag::DuplicateHeader;

fn addresses(addr: Option<&mail_parser::Address<'_>>) -> Vec<Address> {
    let Some(addr) = addr else {
        return Vec::new();
    };
    addr.iter()
        .filter_map(|a| {
            let email = a.address.as_deref()?.trim();
            if email.is_empty() {
                return None;
            }
            Some(Address {
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

fn id_list(value: &mail_parser::HeaderValue<'_>) -> Vec<String> {
    match value {
        mail_parser::HeaderValue::Text(t) => vec![t.to_string()],
        mail_parser::HeaderValue::TextList(l) => l.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn read_headers(message: &Message<'_>, view: &mut ReviewView) {
    view.from = addresses(message.from());
    view.sender = addresses(message.sender()).into_iter().next();
    view.reply_to = addresses(message.reply_to());
    view.to = addresses(message.to());
    view.cc = addresses(message.cc());
    view.bcc = addresses(message.bcc());
    view.subject = message.subject().map(str::to_owned);
    view.message_id = message.message_id().map(str::to_owned);
    view.in_reply_to = id_list(message.in_reply_to());
    view.references = id_list(message.references());
    match message.date() {
        Some(date) if date.is_valid() => view.date = Some(date.to_rfc3339()),
        _ => {
            if let Some(raw) = message.header_raw("Date") {
                view.warnings.push(Warning {
                    kind: WarningKind::InvalidDate,
                    message: format!(
                        "The Date header \"{}\" is not a date; no date is shown.",
                        printable(raw.trim(), 80)
                    ),
                });
            }
        }
    }
    let root = message.root_part();
    for header in &root.headers {
        for charset in unknown_encoded_word_charsets(&unfolded_raw_value(message, header)) {
            view.warnings.push(Warning {
                kind: WarningKind::UnknownCharset,
                message: format!(
                    "{} declares the unknown charset \"{}\"; it may show wrong characters.",
                    header_label(header.name()),
                    printable(&charset, 40)
                ),
            });
        }
    }
    undecodable_words(message, view);
    let standard = root
        .headers
        .iter()
        .any(|h| !matches!(h.name, mail_parser::HeaderName::Other(_)));
    if !standard {
        view.warnings.push(Warning {
            kind: WarningKind::NotAMessage,
            message: "No standard header (From, To, Subject, Date, Content-Type...) was found: \
                      these bytes are probably not an email message."
                .into(),
        });
    }
    if let Some(header) = root.headers.iter().find(|h| {
        let end = (h.offset_end as usize).min(message.raw_message.len());
        let start = (h.offset_start as usize).min(end);
        std::str::from_utf8(&message.raw_message[start..end]).is_err()
    }) {
        view.warnings.push(Warning {
            kind: WarningKind::BrokenHeader,
            message: format!(
                "{} contains raw bytes that are not text; unreadable characters show as \
                 \u{fffd}.",
                header_label(header.name())
            ),
        });
    }
}

/// Warns of a subject or display name whose encoded words did not decode: mail programs show
/// the same garbage, so the owner should know the recipient cannot read it either.
fn undecodable_words(message: &Message<'_>, view: &mut ReviewView) {
    let root = message.root_part();
    for header in &root.headers {
        let name = header.name();
        let shown: Vec<String> = match name.to_ascii_lowercase().as_str() {
            "subject" => view.subject.iter().cloned().collect(),
            "from" | "sender" | "reply-to" | "to" | "cc" | "bcc" => {
                let mut names = Vec::new();
                if let mail_parser::HeaderValue::Address(a) = &header.value {
                    names.extend(
                        a.iter()
                            .filter_map(|a| a.name.as_deref().map(str::to_owned)),
                    );
                }
                names
            }
            _ => continue,
        };
        let raw = unfolded_raw_value(message, header);
        if !raw.contains("=?") {
            continue;
        }
        if let Some(bad) = shown
            .iter()
            .find(|v| v.contains('\u{fffd}') || has_encoded_word(v))
        {
            view.warnings.push(Warning {
                kind: WarningKind::UndecodableHeader,
                message: format!(
                    "{} cannot be decoded: it reads \u{201c}{}\u{201d}, and the recipient's \
                     mail program shows the same.",
                    header_label(name),
                    printable(bad, 80)
                ),
            });
        }
    }
}

/// Whether `text` still holds an RFC 2047 encoded word (`=?charset?Q|B?…?=`).
fn has_encoded_word(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("=?") {
        rest = &rest[at + 2..];
        let mut fields = rest.splitn(3, '?');
        let (Some(charset), Some(encoding), Some(tail)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return false;
        };
        if !charset.is_empty() && matches!(encoding, "q" | "Q" | "b" | "B") && tail.contains("?=") {
            return true;
        }
    }
    false
}

/// Headers RFC 5322 allows once, which a message carries more than once: programs pick
/// different ones (mail-parser the last, others the first), so the reader must see both.
const SINGLETON_HEADERS: &[&str] = &[
    "Subject",
    "From",
    "Sender",
    "Reply-To",
    "To",
    "Cc",
    "Bcc",
    "Date",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Message-ID",
    "In-Reply-To",
];

pub(super) fn duplicate_singletons(message: &Message<'_>) -> Vec<DuplicateHeader> {
    let headers = &message.root_part().headers;
    SINGLETON_HEADERS
        .iter()
        .filter_map(|&name| {
            let values: Vec<String> = headers
                .iter()
                .filter(|h| h.name.as_str().eq_ignore_ascii_case(name))
                .map(|h| match &h.value {
                    mail_parser::HeaderValue::Text(t) => printable(t.trim(), 200),
                    _ => printable(&unfolded_raw_value(message, h), 200),
                })
                .collect();
            (values.len() > 1).then(|| DuplicateHeader {
                name: name.to_owned(),
                values,
            })
        })
        .collect()
}

/// A header's value as written, folds joined.
pub(super) fn unfolded_raw_value(
    message: &Message<'_>,
    header: &mail_parser::Header<'_>,
) -> String {
    let end = (header.offset_end as usize).min(message.raw_message.len());
    let start = (header.offset_start as usize).min(end);
    let raw = String::from_utf8_lossy(&message.raw_message[start..end]);
    raw.split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Charsets of RFC 2047 encoded words (`=?charset?Q?...?=`) that no decoder knows, in a
/// header's raw value.
fn unknown_encoded_word_charsets(raw_value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = raw_value;
    while let Some(at) = rest.find("=?") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find('?') else { break };
        // RFC 2231 section 5 lets the charset carry a language: `utf-8*en`.
        let charset = rest[..end].split('*').next().unwrap_or_default().trim();
        let encoding = rest[end + 1..].chars().next();
        if charset.is_empty() || !matches!(encoding, Some('q' | 'Q' | 'b' | 'B')) {
            continue;
        }
        if !is_known_charset(charset)
            && !out.iter().any(|c: &String| c.eq_ignore_ascii_case(charset))
        {
            out.push(charset.to_owned());
        }
        rest = &rest[end + 1..];
    }
    out
}

pub(super) fn is_known_charset(charset: &str) -> bool {
    mail_parser::decoders::charsets::map::charset_decoder(charset.as_bytes()).is_some()
        || ["utf-8", "utf8", "us-ascii", "ascii"]
            .contains(&charset.trim().to_ascii_lowercase().as_str())
}

/// A header named in a sentence; garbage names are not repeated.
fn header_label(name: &str) -> String {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        format!("The {name} header")
    } else {
        "A header with an unreadable name".to_owned()
    }
}

/// `text` made safe to quote in a warning: control characters dropped, length capped.
pub(super) fn printable(text: &str, max_chars: usize) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() > max_chars {
        let cut: String = clean.chars().take(max_chars).collect();
        format!("{cut}\u{2026}")
    } else {
        clean
    }
}
