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
