//! Rewriting a draft's subject and text body in place, byte for byte everywhere else.
//!
//! The owner edits what an agent wrote, not how the message is built: every other header (the
//! recipients, `Message-ID`, `In-Reply-To`, `References`, `Date`, …), the MIME structure, the
//! boundaries and every attachment stay exactly the bytes the agent's version had. Only three
//! byte ranges change: the `Subject` field, the text part (its `Content-Type` and
//! `Content-Transfer-Encoding` fields and its body) and, when the draft also carries an HTML
//! alternative, that part, rebuilt from the new text — otherwise a recipient's mail program
//! would show the agent's old HTML instead of the owner's words.
//!
//! The ranges come from mail-parser's offsets (`offset_field`/`offset_end` of a header,
//! `offset_header`/`offset_body`/`offset_end` of a part), which are positions in the raw bytes.

use std::ops::Range;

use base64::Engine;
use mail_parser::{HeaderName, Message, MessagePart, PartType};

/// What the editor may show of a draft, or why it cannot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Editable {
    /// The subject and text body, as the editor starts with them.
    Text {
        /// The decoded subject (empty when there is none).
        subject: String,
        /// The decoded text body.
        text: String,
        /// The draft also has an HTML version, which saving replaces with the edited text.
        replaces_html: bool,
    },
    /// Why the draft cannot be edited here (a sentence for the owner).
    Not(String),
}

/// The body parts an edit rewrites.
struct BodyParts {
    text: usize,
    html: Option<usize>,
}

/// What the draft's editor starts with, or why it cannot be edited here.
pub fn editable(raw: &[u8]) -> Editable {
    let Some(message) = crate::render::parse_message(raw) else {
        return Editable::Not("this message cannot be read as mail; edit it in Gmail".into());
    };
    match body_parts(&message) {
        Ok(parts) => Editable::Text {
            subject: message.subject().unwrap_or_default().to_string(),
            text: text_of(&message.parts[parts.text]),
            replaces_html: parts.html.is_some(),
        },
        Err(why) => Editable::Not(why),
    }
}

/// `raw` with `subject` and `text` in place of its subject and text body (see the module
/// comment for what changes); `Err` with the sentence of [`editable`] when it cannot be edited.
pub fn rewrite(raw: &[u8], subject: &str, text: &str) -> Result<Vec<u8>, String> {
    let message = crate::render::parse_message(raw)
        .ok_or_else(|| "this message cannot be read as mail; edit it in Gmail".to_string())?;
    let parts = body_parts(&message)?;
    let eol: &[u8] = if raw.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    let mut edits: Vec<(Range<usize>, Vec<u8>)> = Vec::new();
    let root = &message.parts[0];
    let subject_field = [b"Subject: ".as_slice(), &encode_header(subject, eol), eol].concat();
    match find_header(root, &HeaderName::Subject) {
        Some(range) => edits.push((range, subject_field)),
        // No subject yet: it goes first, before every other field.
        None => edits.push((0..0, subject_field)),
    }
    if find_header(root, &HeaderName::MimeVersion).is_none() {
        // The new fields mean something only in a MIME message.
        edits.push((0..0, [b"MIME-Version: 1.0".as_slice(), eol].concat()));
    }
    let text_part = &message.parts[parts.text];
    edits.extend(part_edits(
        raw,
        text_part,
        "text/plain",
        &normalize(text),
        eol,
    ));
    if let Some(html) = parts.html {
        edits.extend(part_edits(
            raw,
            &message.parts[html],
            "text/html",
            &html_from_text(&normalize(text)),
            eol,
        ));
    }
    Ok(apply(raw, edits))
}

/// The one text part and at most one HTML alternative, or why the draft is not editable here.
fn body_parts(message: &Message<'_>) -> Result<BodyParts, String> {
    let mut texts = Vec::new();
    let mut htmls = Vec::new();
    for &id in message.text_body.iter().chain(&message.html_body) {
        let id = id as usize;
        match message.parts.get(id).map(|p| &p.body) {
            Some(PartType::Text(_)) if !texts.contains(&id) => texts.push(id),
            Some(PartType::Html(_)) if !htmls.contains(&id) => htmls.push(id),
            _ => {}
        }
    }
    match (texts.as_slice(), htmls.as_slice()) {
        ([], []) => Err("this draft has no text body to edit; edit it in Gmail".into()),
        ([], _) => Err(
            "this draft's body is HTML only, and editing it here would lose its formatting; \
             open it in Gmail to edit it, or reject it with a note"
                .into(),
        ),
        ([text], []) => Ok(BodyParts {
            text: *text,
            html: None,
        }),
        ([text], [html]) => Ok(BodyParts {
            text: *text,
            html: Some(*html),
        }),
        _ => Err(
            "this draft's body is made of several parts; edit it in Gmail so none is lost".into(),
        ),
    }
}

fn text_of(part: &MessagePart<'_>) -> String {
    match &part.body {
        PartType::Text(t) | PartType::Html(t) => t.to_string(),
        _ => String::new(),
    }
}

/// The byte range of `name`'s first field in `part`'s header block, its line ending included.
fn find_header(part: &MessagePart<'_>, name: &HeaderName<'_>) -> Option<Range<usize>> {
    part.headers
        .iter()
        .find(|h| &h.name == name)
        .map(|h| h.offset_field as usize..h.offset_end as usize)
}

/// The edits that give `part` the body `text` (UTF-8, quoted-printable) as `content_type`: its
/// `Content-Type` and `Content-Transfer-Encoding` fields replaced (or added), its body
/// replaced; the line endings around the body kept.
fn part_edits(
    raw: &[u8],
    part: &MessagePart<'_>,
    content_type: &str,
    text: &str,
    eol: &[u8],
) -> Vec<(Range<usize>, Vec<u8>)> {
    let mut edits = Vec::new();
    let type_field = format!("Content-Type: {content_type}; charset=\"UTF-8\"").into_bytes();
    let encoding_field = b"Content-Transfer-Encoding: quoted-printable".to_vec();
    let type_range = find_header(part, &HeaderName::ContentType);
    let encoding_range = find_header(part, &HeaderName::ContentTransferEncoding);
    let added = match (type_range, encoding_range) {
        (Some(t), Some(e)) => {
            edits.push((t, [type_field.as_slice(), eol].concat()));
            edits.push((e, [encoding_field.as_slice(), eol].concat()));
            None
        }
        (Some(t), None) => {
            edits.push((t, [&type_field, eol, &encoding_field, eol].concat()));
            None
        }
        (None, Some(e)) => {
            edits.push((e, [&type_field, eol, &encoding_field, eol].concat()));
            None
        }
        (None, None) => Some([&type_field, eol, &encoding_field, eol].concat()),
    };
    if let Some(fields) = added {
        // Neither field exists: they go where the part's header block starts.
        let at = part.offset_header as usize;
        edits.push((at..at, fields));
    }
    let body = part.offset_body as usize..part.offset_end as usize;
    let old = &raw[body.clone()];
    let trailing = old.len() - trim_line_ends(old).len();
    // The line end after the last line is the original's (none in a multipart body, where the
    // line end before the boundary belongs to the boundary).
    let text = text.trim_end_matches(['\r', '\n']);
    let mut encoded = quoted_printable::encode_to_str(text.as_bytes()).into_bytes();
    if eol == b"\n" {
        encoded = String::from_utf8_lossy(&encoded)
            .replace("\r\n", "\n")
            .into_bytes();
    }
    encoded.extend_from_slice(&old[old.len() - trailing..]);
    edits.push((body, encoded));
    edits
}

fn trim_line_ends(bytes: &[u8]) -> &[u8] {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    &bytes[..end]
}

/// Apply non-overlapping `(range, replacement)` edits to `raw`.
fn apply(raw: &[u8], mut edits: Vec<(Range<usize>, Vec<u8>)>) -> Vec<u8> {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = Vec::with_capacity(raw.len() + 1024);
    let mut at = 0;
    for (range, replacement) in edits {
        out.extend_from_slice(&raw[at..range.start.max(at)]);
        out.extend_from_slice(&replacement);
        at = at.max(range.end);
    }
    out.extend_from_slice(&raw[at..]);
    out
}

/// The owner's text with CRLF line ends (what quoted-printable and mail expect) and no
/// trailing blank lines beyond one line end.
fn normalize(text: &str) -> String {
    let lf = text.replace("\r\n", "\n");
    let body = lf.trim_end_matches('\n');
    format!("{}\r\n", body.replace('\n', "\r\n"))
}

/// The HTML alternative for `text`: each line escaped, line breaks kept.
fn html_from_text(text: &str) -> String {
    let mut html = String::from("<div dir=\"ltr\">");
    for (i, line) in text.trim_end_matches("\r\n").split("\r\n").enumerate() {
        if i > 0 {
            html.push_str("<br>\r\n");
        }
        for c in line.chars() {
            match c {
                '<' => html.push_str("&lt;"),
                '>' => html.push_str("&gt;"),
                '&' => html.push_str("&amp;"),
                '"' => html.push_str("&quot;"),
                c => html.push(c),
            }
        }
    }
    html.push_str("</div>\r\n");
    html
}

/// A header value: as is when it is plain ASCII of a sane length, else RFC 2047 encoded words
/// (UTF-8, base64), folded so no line exceeds 78 characters.
fn encode_header(value: &str, eol: &[u8]) -> Vec<u8> {
    let value: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    let plain = value
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\t')
        && value.len() <= 900
        && !value.contains("=?");
    if plain {
        return value.into_bytes();
    }
    // 45 bytes of UTF-8 make 60 characters of base64: with "=?UTF-8?B?" and "?=" one word
    // fits a 78-character line.
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in value.chars() {
        if chunk.len() + c.len_utf8() > 45 {
            words.push(std::mem::take(&mut chunk));
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(chunk);
    }
    let fold = [eol, b" "].concat();
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(&fold);
        }
        out.extend_from_slice(b"=?UTF-8?B?");
        out.extend_from_slice(
            base64::engine::general_purpose::STANDARD
                .encode(word.as_bytes())
                .as_bytes(),
        );
        out.extend_from_slice(b"?=");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &[u8] = b"From: Agent <agent@example.com>\r\n\
To: alice@example.org\r\n\
Subject: Re: Meeting next week?\r\n\
Message-ID: <draft-1@example.com>\r\n\
In-Reply-To: <alice-1@example.org>\r\n\
References: <alice-1@example.org>\r\n\
Content-Type: text/plain; charset=us-ascii\r\n\
\r\n\
Tuesday works.\r\n";

    const MIXED: &[u8] = b"From: Agent <agent@example.com>\r\n\
To: bob@example.org\r\n\
Subject: Figures\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"outer\"\r\n\
\r\n\
--outer\r\n\
Content-Type: multipart/alternative; boundary=\"alt\"\r\n\
\r\n\
--alt\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Content-Transfer-Encoding: 7bit\r\n\
\r\n\
The figures are attached.\r\n\
--alt\r\n\
Content-Type: text/html; charset=utf-8\r\n\
\r\n\
<p>The figures are <b>attached</b>.</p>\r\n\
--alt--\r\n\
\r\n\
--outer\r\n\
Content-Type: application/octet-stream; name=\"figures.bin\"\r\n\
Content-Disposition: attachment; filename=\"figures.bin\"\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
AAECAwQFBgcICQ==\r\n\
--outer--\r\n";

    fn parse(raw: &[u8]) -> Message<'_> {
        mail_parser::MessageParser::default().parse(raw).unwrap()
    }

    /// Every header field of the root but those named, as raw text, in order.
    fn other_fields(raw: &[u8], except: &[&str]) -> Vec<String> {
        let message = parse(raw);
        message.parts[0]
            .headers
            .iter()
            .filter(|h| {
                !except
                    .iter()
                    .any(|n| h.name.as_str().eq_ignore_ascii_case(n))
            })
            .map(|h| {
                String::from_utf8_lossy(&raw[h.offset_field as usize..h.offset_end as usize])
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn a_plain_draft_gets_the_new_subject_and_text_and_keeps_every_other_field() {
        let edited = rewrite(
            PLAIN,
            "Re: Meeting next week? (Tuesday)",
            "Tuesday at 10 works.\n",
        )
        .unwrap();
        let message = parse(&edited);
        assert_eq!(message.subject(), Some("Re: Meeting next week? (Tuesday)"));
        assert_eq!(message.body_text(0).unwrap(), "Tuesday at 10 works.\r\n");
        let changed = [
            "Subject",
            "Content-Type",
            "Content-Transfer-Encoding",
            "MIME-Version",
        ];
        assert_eq!(
            other_fields(&edited, &changed),
            other_fields(PLAIN, &changed)
        );
        // The message had no MIME-Version; its new Content-Transfer-Encoding needs one.
        assert!(edited.starts_with(b"MIME-Version: 1.0\r\n"));
    }

    #[test]
    fn the_attachment_bytes_and_boundaries_stay_and_the_html_follows_the_text() {
        let edited = rewrite(MIXED, "Figures for Q3", "See the <figures> & notes.").unwrap();
        let attachment_at = |raw: &[u8]| {
            let text = String::from_utf8_lossy(raw).into_owned();
            text[text
                .find("--outer\r\nContent-Type: application/octet-stream")
                .unwrap()..]
                .to_string()
        };
        assert_eq!(attachment_at(&edited), attachment_at(MIXED));
        let message = parse(&edited);
        assert_eq!(message.body_text(0).unwrap(), "See the <figures> & notes.");
        let html = message.body_html(0).unwrap();
        assert!(
            html.contains("See the &lt;figures&gt; &amp; notes."),
            "{html}"
        );
        assert!(
            !html.contains("attached"),
            "the old HTML must be gone: {html}"
        );
        assert_eq!(message.attachment_count(), 1);
        assert_eq!(
            message.attachment(0).unwrap().contents(),
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!(
            other_fields(&edited, &["Subject"]),
            other_fields(MIXED, &["Subject"])
        );
    }

    #[test]
    fn a_non_ascii_subject_and_long_lines_are_encoded_so_mail_programs_read_them_back() {
        let subject = "Ré: Réunion — la semaine prochaine, mardi ou mercredi, à votre convenance";
        let long_line = "word ".repeat(60);
        let edited = rewrite(PLAIN, subject, &format!("Grüße\n{long_line}")).unwrap();
        assert!(edited.iter().all(|b| b.is_ascii()), "7-bit clean");
        assert!(String::from_utf8_lossy(&edited)
            .lines()
            .all(|l| l.trim_end_matches('\r').len() <= 998));
        let message = parse(&edited);
        assert_eq!(message.subject(), Some(subject));
        assert_eq!(
            message.body_text(0).unwrap(),
            format!("Grüße\r\n{long_line}\r\n")
        );
    }

    #[test]
    fn a_draft_that_trips_the_mime_parser_is_not_editable_instead_of_stopping_the_program() {
        // Found by fuzzing: mail-parser's internal assertion fires on it in debug builds, where
        // reading it for the editor used to stop `countersign show` (exit 101).
        let raw = include_bytes!(
            "../../../render/tests/fixtures/render-regressions/mail-parser-invalid-part-id.eml"
        );
        if cfg!(debug_assertions) {
            assert!(
                matches!(editable(raw), Editable::Not(_)),
                "{:?}",
                editable(raw)
            );
            assert!(rewrite(raw, "s", "t").is_err());
        } else {
            let _ = editable(raw);
        }
    }

    #[test]
    fn html_only_and_several_text_parts_are_not_editable_and_say_why() {
        let html_only =
            b"From: a@example.com\r\nSubject: Hi\r\nContent-Type: text/html\r\n\r\n<p>Hi</p>\r\n";
        match editable(html_only) {
            Editable::Not(why) => assert!(why.contains("HTML only"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(rewrite(html_only, "x", "y").is_err());
        // Two text parts one after the other (multipart/mixed with inline text): editing one
        // would drop or duplicate the other.
        let two_texts = b"From: a@example.com\r\nSubject: Two\r\nMIME-Version: 1.0\r\n\
            Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n\
            --b\r\nContent-Type: text/plain\r\n\r\nFirst part.\r\n\
            --b\r\nContent-Type: text/plain\r\n\r\nSecond part.\r\n--b--\r\n";
        match editable(two_texts) {
            Editable::Not(why) => assert!(why.contains("several parts"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(rewrite(two_texts, "x", "y").is_err());
        // One text and its HTML alternative are editable.
        match editable(MIXED) {
            Editable::Text {
                subject,
                text,
                replaces_html,
            } => {
                assert_eq!(subject, "Figures");
                assert_eq!(text, "The figures are attached.");
                assert!(replaces_html);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_message_without_subject_or_content_type_gets_both() {
        let bare = b"From: a@example.com\nTo: b@example.com\n\nHello\n";
        let edited = rewrite(bare, "Hello again", "Hello, Bob\n").unwrap();
        assert!(
            !edited.windows(2).any(|w| w == b"\r\n"),
            "LF message stays LF"
        );
        let message = parse(&edited);
        assert_eq!(message.subject(), Some("Hello again"));
        assert_eq!(message.body_text(0).unwrap(), "Hello, Bob\n");
        assert_eq!(
            message.from().unwrap().first().unwrap().address(),
            Some("a@example.com")
        );
    }
}
