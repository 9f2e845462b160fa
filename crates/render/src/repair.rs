//! Reading malformed messages the way mail programs do, where mail-parser 0.11 reads them
//! differently.
//!
//! Only the *view* is repaired: the bytes Countersign sends are never the output of this
//! module. Each repair is named in a warning on the draft, because a message that needed one
//! is malformed and some recipient's program may still read it another way.
//!
//! The cases (each has a golden fixture in `tests/fixtures/render/agree/`):
//! - whitespace-only lines before the first header: mail programs skip them; mail-parser
//!   reads them as the end of an empty header block, so every header became body text;
//! - a header block ended by a line holding only spaces or tabs: mail programs start the body
//!   there; mail-parser reads the line as a fold and the body as more headers;
//! - a part (or forwarded `message/rfc822`) header block that runs into a boundary line:
//!   mail programs stop at the boundary; mail-parser swallowed it with every later part;
//! - `filename=` followed by a fold, its quoted value on the next line: the name was lost;
//! - folding whitespace inside or between encoded words of a parameter value: RFC 2047 §6.2
//!   says whitespace between adjacent encoded words is not displayed, and mail programs also
//!   join an encoded word broken by a fold; mail-parser kept the spaces;
//! - a multipart nested in a part (a forwarded message) that never closes before a boundary of
//!   the multipart around it: that boundary ends it (RFC 2046 section 5.1.2), so later parts
//!   stay parts; mail-parser swallowed them into the nested message.

use std::borrow::Cow;
use std::collections::BTreeSet;

/// A repair made to read a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Repair {
    LeadingWhitespaceLines,
    WhitespaceLineEndsHeaders,
    HeadersRunIntoBoundary,
    FoldedParameterValue,
    FoldedEncodedWord,
    UnclosedInnerMultipart,
    /// Adjacent encoded words of a subject or address header joined before decoding, so a
    /// character split across two of them reads whole (as mail programs show it). Common in
    /// real mail and read alike everywhere: no warning.
    JoinedHeaderWords,
}

impl Repair {
    /// What was wrong, as a phrase for the warning.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Repair::LeadingWhitespaceLines => {
                "blank lines holding spaces come before the first header"
            }
            Repair::WhitespaceLineEndsHeaders => {
                "the headers end with a line holding only spaces instead of an empty line"
            }
            Repair::HeadersRunIntoBoundary => {
                "the headers of a part or forwarded message never end before the next part begins"
            }
            Repair::FoldedParameterValue => "an attachment's file name starts on a folded line",
            Repair::FoldedEncodedWord => "an encoded file name is broken by line folding",
            Repair::UnclosedInnerMultipart => {
                "a nested part never closes before the part around it continues"
            }
            Repair::JoinedHeaderWords => "",
        }
    }

    /// The repair is how every mail program reads the message: not worth a warning.
    pub(crate) fn is_silent(self) -> bool {
        self == Repair::JoinedHeaderWords
    }
}

/// The bytes to parse for the view, and what had to be repaired to get them.
pub(crate) struct Repaired<'r> {
    pub bytes: Cow<'r, [u8]>,
    pub repairs: BTreeSet<Repair>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    /// In a header block; `top` is the message's own.
    Headers {
        top: bool,
    },
    Body,
}

/// Repairs `raw` for viewing. Returns it borrowed when nothing needed repair.
pub(crate) fn repair(raw: &[u8]) -> Repaired<'_> {
    let lines: Vec<&[u8]> = raw.split_inclusive(|&b| b == b'\n').collect();
    let boundaries = boundaries(raw);
    let mut repairs = BTreeSet::new();
    let mut out = Vec::with_capacity(raw.len() + 64);
    let mut i = 0;
    while i < lines.len() && is_whitespace_only(lines[i]) {
        repairs.insert(Repair::LeadingWhitespaceLines);
        i += 1;
    }
    let mut state = State::Headers { top: true };
    let mut field: Vec<u8> = Vec::new();
    let mut block_is_message = false;
    let mut block_boundary: Option<Vec<u8>> = None;
    // Boundaries of the multiparts whose body we are in, outermost first.
    let mut open: Vec<Vec<u8>> = Vec::new();
    for &line in &lines[i..] {
        match state {
            State::Headers { top } => {
                let fold = matches!(line.first(), Some(b' ' | b'\t'));
                if fold && !is_whitespace_only(line) && !field.is_empty() {
                    field.extend_from_slice(line);
                    continue;
                }
                let declared = flush_field(&mut field, &mut out, &mut repairs);
                block_is_message |= declared.is_message;
                if declared.boundary.is_some() {
                    block_boundary = declared.boundary;
                }
                let delimiter = !top && is_delimiter(line, &boundaries);
                if is_blank(line) || is_whitespace_only(line) || delimiter {
                    if is_whitespace_only(line) {
                        repairs.insert(Repair::WhitespaceLineEndsHeaders);
                    }
                    if delimiter {
                        repairs.insert(Repair::HeadersRunIntoBoundary);
                    }
                    out.extend_from_slice(line_end(line));
                    if let Some(boundary) = block_boundary.take() {
                        open.push(boundary);
                    }
                    if delimiter {
                        close_inner(line, &mut open, &mut out, &mut repairs);
                        out.extend_from_slice(line);
                        state = State::Headers { top: false };
                    } else if block_is_message {
                        state = State::Headers { top: false };
                    } else {
                        state = State::Body;
                    }
                    block_is_message = false;
                } else {
                    field.extend_from_slice(line);
                }
            }
            State::Body => {
                if is_delimiter(line, &boundaries) {
                    close_inner(line, &mut open, &mut out, &mut repairs);
                    out.extend_from_slice(line);
                    if !is_close_delimiter(line, &boundaries) {
                        state = State::Headers { top: false };
                    }
                } else {
                    out.extend_from_slice(line);
                }
            }
        }
    }
    flush_field(&mut field, &mut out, &mut repairs);
    if repairs.is_empty() {
        Repaired {
            bytes: Cow::Borrowed(raw),
            repairs,
        }
    } else {
        Repaired {
            bytes: Cow::Owned(out),
            repairs,
        }
    }
}

/// What a header field declares about the body that follows its block.
#[derive(Default)]
struct Declared {
    /// `message/rfc822`: the body starts with another header block.
    is_message: bool,
    /// A multipart's boundary.
    boundary: Option<Vec<u8>>,
}

/// Before a delimiter `line`: closes every multipart nested inside the one the delimiter
/// belongs to that never closed itself, as mail programs end them there; then, for a close
/// delimiter, that multipart too.
fn close_inner(
    line: &[u8],
    open: &mut Vec<Vec<u8>>,
    out: &mut Vec<u8>,
    repairs: &mut BTreeSet<Repair>,
) {
    let Some(at) = open
        .iter()
        .rposition(|b| is_delimiter(line, std::slice::from_ref(b)))
    else {
        return;
    };
    while open.len() > at + 1 {
        let inner = open.pop().unwrap_or_default();
        repairs.insert(Repair::UnclosedInnerMultipart);
        out.extend_from_slice(b"--");
        out.extend_from_slice(&inner);
        out.extend_from_slice(b"--");
        out.extend_from_slice(line_end(line));
    }
    if is_close_delimiter(line, &open[at..]) {
        open.truncate(at);
    }
}

/// Writes a header field (first line and folds) to `out`, repaired if it is one whose
/// parameters mail-parser misreads, and says what it declares.
fn flush_field(field: &mut Vec<u8>, out: &mut Vec<u8>, repairs: &mut BTreeSet<Repair>) -> Declared {
    if field.is_empty() {
        return Declared::default();
    }
    let name_end = field.iter().position(|&b| b == b':').unwrap_or(0);
    let name = String::from_utf8_lossy(&field[..name_end])
        .trim()
        .to_ascii_lowercase();
    let mut declared = Declared::default();
    if name == "content-type" || name == "content-disposition" {
        let fixed = unfold_parameter_values(field, repairs);
        if name == "content-type" {
            let value = String::from_utf8_lossy(&fixed[name_end + 1..]).to_ascii_lowercase();
            declared.is_message = value.trim_start().starts_with("message/rfc822");
            if value.trim_start().starts_with("multipart/") {
                declared.boundary = boundaries(&fixed[name_end + 1..]).into_iter().next();
            }
        }
        out.extend_from_slice(&fixed);
    } else if DECODED_HEADERS.contains(&name.as_str()) {
        let joined = join_encoded_words(field, &mut BTreeSet::new());
        if joined != *field {
            repairs.insert(Repair::JoinedHeaderWords);
        }
        out.extend_from_slice(&joined);
    } else {
        out.extend_from_slice(field);
    }
    field.clear();
    declared
}

/// Headers whose encoded words the review decodes and shows (subject and display names).
const DECODED_HEADERS: &[&str] = &["subject", "from", "to", "cc", "bcc", "reply-to", "sender"];

/// Removes the folds mail programs ignore in a parameter value: right after `=` and inside an
/// encoded word; then joins adjacent encoded words (see [`join_encoded_words`]).
fn unfold_parameter_values(field: &[u8], repairs: &mut BTreeSet<Repair>) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    let mut in_word = false;
    while i < field.len() {
        let rest = &field[i..];
        if !in_word && rest.starts_with(b"=?") {
            in_word = true;
            out.extend_from_slice(b"=?");
            i += 2;
            continue;
        }
        if in_word && rest.starts_with(b"?=") && !is_encoded_word_marker(field, i) {
            in_word = false;
            out.extend_from_slice(b"?=");
            i += 2;
            continue;
        }
        let fold = fold_len(rest);
        if fold > 0 && in_word {
            repairs.insert(Repair::FoldedEncodedWord);
            i += fold;
            continue;
        }
        if fold > 0 && out.last() == Some(&b'=') {
            repairs.insert(Repair::FoldedParameterValue);
            i += fold;
            continue;
        }
        out.push(field[i]);
        i += 1;
    }
    join_encoded_words(&out, repairs)
}

/// One RFC 2047 encoded word found in a value.
struct EncodedWord<'a> {
    start: usize,
    end: usize,
    charset: &'a [u8],
    bytes: Vec<u8>,
}

/// The encoded word starting at `at` (`=?charset?Q|B?text?=`), decoded to bytes.
fn encoded_word_at(value: &[u8], at: usize) -> Option<EncodedWord<'_>> {
    let rest = value.get(at..)?.strip_prefix(b"=?")?;
    let q1 = rest.iter().position(|&b| b == b'?')?;
    let charset = &rest[..q1];
    let encoding = *rest.get(q1 + 1)?;
    if rest.get(q1 + 2) != Some(&b'?') {
        return None;
    }
    let text_start = q1 + 3;
    let text_len = super::sniff::find(&rest[text_start..], b"?=")?;
    let text = &rest[text_start..text_start + text_len];
    let bytes = match encoding {
        b'B' | b'b' => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text))
                .ok()?
        }
        b'Q' | b'q' => decode_q(text),
        _ => return None,
    };
    Some(EncodedWord {
        start: at,
        end: at + 2 + text_start + text_len + 2,
        charset,
        bytes,
    })
}

/// RFC 2047 section 4.2 "Q": `_` is a space, `=XX` a byte.
fn decode_q(text: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'_' => out.push(b' '),
            b'=' => {
                let pair = (
                    text.get(i + 1).copied().and_then(hex),
                    text.get(i + 2).copied().and_then(hex),
                );
                if let (Some(hi), Some(lo)) = pair {
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                } else {
                    out.push(b'=');
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// Joins encoded words separated only by whitespace (folded or not) into one, as RFC 2047
/// section 6.2 says to display them: without the whitespace. Words of one charset are merged
/// into a single base64 word, so a character split across two words is whole again.
fn join_encoded_words(value: &[u8], repairs: &mut BTreeSet<Repair>) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let Some(first) = encoded_word_at(value, i) else {
            out.push(value[i]);
            i += 1;
            continue;
        };
        let mut joined = first.bytes.clone();
        let mut end = first.end;
        let mut count = 1;
        loop {
            let ws = value[end..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
                .count();
            match encoded_word_at(value, end + ws) {
                Some(next) if next.charset.eq_ignore_ascii_case(first.charset) => {
                    joined.extend_from_slice(&next.bytes);
                    end = next.end;
                    count += 1;
                }
                _ => break,
            }
        }
        if count == 1 {
            out.extend_from_slice(&value[first.start..first.end]);
        } else {
            use base64::Engine as _;
            repairs.insert(Repair::FoldedEncodedWord);
            out.extend_from_slice(b"=?");
            out.extend_from_slice(first.charset);
            out.extend_from_slice(b"?B?");
            out.extend_from_slice(
                base64::engine::general_purpose::STANDARD
                    .encode(&joined)
                    .as_bytes(),
            );
            out.extend_from_slice(b"?=");
        }
        i = end;
    }
    out
}

/// `?=` at `i` is the start of `?Q?`/`?B?` separators' neighbour, not an encoded word's end,
/// when it is the second or third `?` of the word (charset?encoding?text).
fn is_encoded_word_marker(field: &[u8], i: usize) -> bool {
    // Count the '?' since the word's "=?": the end is the fourth one.
    let start = field[..i]
        .windows(2)
        .rposition(|w| w == b"=?")
        .map_or(0, |p| p + 2);
    field[start..i].iter().filter(|&&b| b == b'?').count() < 2
}

/// Length of a fold (CRLF or LF followed by spaces or tabs) at the start of `s`, or 0.
fn fold_len(s: &[u8]) -> usize {
    let eol = if s.starts_with(b"\r\n") {
        2
    } else if s.starts_with(b"\n") {
        1
    } else {
        return 0;
    };
    let ws = s[eol..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    if ws == 0 {
        0
    } else {
        eol + ws
    }
}

fn is_blank(line: &[u8]) -> bool {
    line == b"\r\n" || line == b"\n"
}

/// A line of spaces and tabs only (at least one), not an empty line.
fn is_whitespace_only(line: &[u8]) -> bool {
    let content = trim_eol(line);
    !content.is_empty() && content.iter().all(|b| matches!(b, b' ' | b'\t'))
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn line_end(line: &[u8]) -> &'static [u8] {
    if line.ends_with(b"\r\n") || !line.ends_with(b"\n") {
        b"\r\n"
    } else {
        b"\n"
    }
}

/// Every `boundary=` value declared anywhere in the message.
fn boundaries(raw: &[u8]) -> Vec<Vec<u8>> {
    let lower = raw.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = super::sniff::find(&lower[from..], b"boundary=") {
        let start = from + at + b"boundary=".len();
        let rest = &raw[start..];
        let value: &[u8] = if let Some(quoted) = rest.strip_prefix(b"\"") {
            let end = quoted.iter().position(|&b| b == b'"' || b == b'\n');
            &quoted[..end.unwrap_or(quoted.len())]
        } else {
            let end = rest
                .iter()
                .position(|&b| matches!(b, b';' | b' ' | b'\t' | b'\r' | b'\n'));
            &rest[..end.unwrap_or(rest.len())]
        };
        if !value.is_empty() && !out.iter().any(|b: &Vec<u8>| b == value) {
            out.push(value.to_vec());
        }
        from = start;
    }
    out
}

fn is_delimiter(line: &[u8], boundaries: &[Vec<u8>]) -> bool {
    let content = trim_eol(line);
    let Some(rest) = content.strip_prefix(b"--") else {
        return false;
    };
    boundaries.iter().any(|b| {
        rest.strip_prefix(b.as_slice()).is_some_and(|tail| {
            let tail = tail.strip_prefix(b"--").unwrap_or(tail);
            tail.iter().all(|c| matches!(c, b' ' | b'\t'))
        })
    })
}

fn is_close_delimiter(line: &[u8], boundaries: &[Vec<u8>]) -> bool {
    let content = trim_eol(line);
    boundaries.iter().any(|b| {
        content.len() >= b.len() + 4
            && content.starts_with(b"--")
            && content[2..].starts_with(b)
            && content[2 + b.len()..].starts_with(b"--")
    })
}

#[cfg(test)]
mod tests;
