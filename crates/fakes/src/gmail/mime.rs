//! Just enough RFC 5322 reading for Gmail's metadata answers and `rfc822msgid:` search.

/// The header fields of `raw`, unfolded, in order.
pub fn headers(raw: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(raw);
    let head = match (text.find("\r\n\r\n"), text.find("\n\n")) {
        (Some(a), Some(b)) => &text[..a.min(b)],
        (Some(a), None) => &text[..a],
        (None, Some(b)) => &text[..b],
        (None, None) => &text[..],
    };
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in head.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            fields.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    fields
}

/// The first header `name` (case-insensitive).
pub fn header(raw: &[u8], name: &str) -> Option<String> {
    headers(raw)
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// `raw` without the header field `name` (case-insensitive, with its folded lines); the rest
/// byte for byte.
pub fn without_header(raw: &[u8], name: &str) -> Vec<u8> {
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 2)
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| i + 1))
        .unwrap_or(raw.len());
    let mut out = Vec::with_capacity(raw.len());
    let mut dropping = false;
    for line in raw[..head_end].split_inclusive(|b| *b == b'\n') {
        let folded = line.starts_with(b" ") || line.starts_with(b"\t");
        if !folded {
            dropping = line.len() > name.len()
                && line[..name.len()].eq_ignore_ascii_case(name.as_bytes())
                && line[name.len()..].trim_ascii_start().starts_with(b":");
        }
        if !dropping {
            out.extend_from_slice(line);
        }
    }
    out.extend_from_slice(&raw[head_end..]);
    out
}

/// The body after the header block.
pub fn body(raw: &[u8]) -> &[u8] {
    for (i, w) in raw.windows(4).enumerate() {
        if w == b"\r\n\r\n" {
            return &raw[i + 4..];
        }
    }
    for (i, w) in raw.windows(2).enumerate() {
        if w == b"\n\n" {
            return &raw[i + 2..];
        }
    }
    &[]
}

/// A plain-text excerpt like Gmail's `snippet` (first text, 100 characters at most).
pub fn snippet(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(body(raw));
    let words: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim();
            !l.is_empty()
                && !l.starts_with("--")
                && !l.contains(':')
                && !l.starts_with('<')
                && !l.starts_with('>')
        })
        .flat_map(|l| l.split_whitespace())
        .collect();
    words.join(" ").chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_headers_are_unfolded() {
        let raw = b"Subject: a long\r\n subject\r\nTo: a@example.com\r\n\r\nbody";
        assert_eq!(header(raw, "subject").as_deref(), Some("a long subject"));
        assert_eq!(body(raw), b"body");
    }
}

/// One part of a `multipart/related` body: its `Content-Type` (empty when it names none) and
/// its content.
#[derive(Debug, PartialEq, Eq)]
pub struct Part {
    pub content_type: String,
    pub content: Vec<u8>,
}

/// The two parts of a `multipart/related` upload body (RFC 2387) as Google's upload endpoints
/// take it: the resource's JSON, then the media. `None` when the body is not framed that way.
pub fn related_parts(content_type: &str, body: &[u8]) -> Option<(Part, Part)> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/related") {
        return None;
    }
    let boundary = params.split(';').find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    })?;
    let delimiter = format!("--{boundary}").into_bytes();
    let mut parts = Vec::new();
    let mut rest = &body[find(body, &delimiter)? + delimiter.len()..];
    loop {
        if rest.starts_with(b"--") {
            break;
        }
        let part_start = find(rest, b"\r\n")? + 2;
        let part = &rest[part_start..];
        let end = find(part, &[b"\r\n".as_slice(), &delimiter].concat())?;
        let content = &part[..end];
        let head_end = find(content, b"\r\n\r\n").map(|i| i + 4).or_else(|| {
            // A part with no header fields starts with the blank line itself.
            content.starts_with(b"\r\n").then_some(2)
        })?;
        let part_type = headers(&content[..head_end])
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("Content-Type"))
            .map(|(_, v)| v)
            .unwrap_or_default();
        parts.push(Part {
            content_type: part_type,
            content: content[head_end..].to_vec(),
        });
        rest = &part[end + 2 + delimiter.len()..];
    }
    let mut parts = parts.into_iter();
    Some((parts.next()?, parts.next()?))
}

/// Where `needle` first occurs. memchr's search, not a loop over every window: an upload is
/// up to 35 MB, and a naive scan of that in a debug build takes the fake seconds of silence,
/// which a client's idle timeout would rightly count against the link.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod related_tests {
    use super::related_parts;

    #[test]
    fn an_upload_body_splits_into_its_json_and_its_message_byte_for_byte() {
        let message = b"Subject: x\r\n\r\nbody with --not-the-boundary\r\n";
        let mut body = b"--b1\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"id\":\"r1\"}\r\n--b1\r\nContent-Type: message/rfc822\r\n\r\n".to_vec();
        body.extend_from_slice(message);
        body.extend_from_slice(b"\r\n--b1--\r\n");
        let (json, media) = related_parts("multipart/related; boundary=b1", &body).unwrap();
        assert_eq!(json.content, b"{\"id\":\"r1\"}");
        assert_eq!(json.content_type, "application/json; charset=UTF-8");
        assert_eq!(media.content, message);
        assert_eq!(media.content_type, "message/rfc822");
        assert!(related_parts("application/json", &body).is_none());
        assert!(related_parts("multipart/related; boundary=zz", &body).is_none());
    }
}
