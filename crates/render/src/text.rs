//! Converting between the text and HTML forms of a body, and reading the links out of
//! sanitized HTML.
//!
//! The link scanner works on ammonia's *serialized output* only, never on the draft's own HTML:
//! that output is normalised by html5ever (lower-case tags, double-quoted attributes, escaped
//! text), so a small scanner reads it exactly.

/// Escapes text for HTML element content and double-quoted attributes.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Decodes the entities html5ever's serializer emits (plus numeric ones).
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // Entity names are ASCII: look for ';' in the first bytes without slicing a char.
        let end = rest.as_bytes()[..rest.len().min(12)]
            .iter()
            .position(|&b| b == b';');
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Turns a plain-text body into HTML: escaped, whitespace kept, and every http(s) URL made a
/// link (links are never fetched; the reader may click them).
pub fn text_to_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str("<pre style=\"white-space: pre-wrap; font-family: inherit\">");
    let mut rest = text;
    while let Some((start, end)) = next_url(rest) {
        out.push_str(&escape_html(&rest[..start]));
        let url = escape_html(&rest[start..end]);
        out.push_str(&format!(
            "<a href=\"{url}\" target=\"_blank\" rel=\"noopener noreferrer\">{url}</a>"
        ));
        rest = &rest[end..];
    }
    out.push_str(&escape_html(rest));
    out.push_str("</pre>");
    out
}

/// The byte range of the next `http://` or `https://` URL in `text`.
fn next_url(text: &str) -> Option<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    loop {
        let at = lower[from..].find("http")? + from;
        let tail = &lower[at..];
        let scheme_len = if tail.starts_with("https://") {
            8
        } else if tail.starts_with("http://") {
            7
        } else {
            from = at + 4;
            continue;
        };
        // A URL must start at a word boundary: "xhttp://" is not one.
        let boundary = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let len = text[at..]
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\''))
            .unwrap_or(text.len() - at);
        let mut end = at + len;
        while end > at + scheme_len
            && text[..end].ends_with(['.', ',', ';', ':', '!', '?', ')', ']', '}'])
        {
            end -= 1;
        }
        if boundary && end > at + scheme_len {
            return Some((at, end));
        }
        from = at + scheme_len;
    }
}

/// The plain text of a sanitized HTML fragment: tags removed, blocks on their own lines.
pub fn html_to_text(fragment: &str) -> String {
    let mut out = String::with_capacity(fragment.len() / 2);
    let mut rest = fragment;
    while let Some(at) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..at]));
        let tag_end = rest[at..].find('>').map_or(rest.len(), |e| at + e);
        let tag = rest[at + 1..tag_end].to_ascii_lowercase();
        let end = (tag_end + 1).min(rest.len());
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let block = matches!(
            name.as_str(),
            "p" | "div"
                | "tr"
                | "li"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "table"
                | "blockquote"
                | "pre"
                | "ul"
                | "ol"
                | "hr"
        );
        let cell = matches!(name.as_str(), "td" | "th") && !tag.starts_with('/');
        let new_line = name == "br" || (block && !out.is_empty() && !out.ends_with('\n'));
        if new_line {
            out.push('\n');
        } else if cell && !out.is_empty() && !out.ends_with(['\n', '\t']) {
            out.push('\t');
        }
        rest = &rest[end..];
    }
    out.push_str(&decode_entities(rest));
    // Collapse the blank lines that nested blocks leave, keeping paragraph breaks readable.
    let mut text = String::with_capacity(out.len());
    let mut blank_run = 0;
    for line in out.replace('\u{a0}', " ").lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        text.push_str(line);
        text.push('\n');
    }
    text.trim().to_owned()
}

/// The first words of `text`, at most `max` characters, with an ellipsis when cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    if let Some(space) = cut.rfind(' ') {
        if space > max / 2 {
            cut.truncate(space);
        }
    }
    format!("{}\u{2026}", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_bodies_become_escaped_html_with_clickable_urls() {
        let html = text_to_html("see <https://example.com/a?b=1&c=2>, ok.\nx https://e.org.");
        assert_eq!(
            html,
            "<pre style=\"white-space: pre-wrap; font-family: inherit\">see &lt;<a href=\"https://example.com/a?b=1&amp;c=2\" target=\"_blank\" rel=\"noopener noreferrer\">https://example.com/a?b=1&amp;c=2</a>&gt;, ok.\nx <a href=\"https://e.org\" target=\"_blank\" rel=\"noopener noreferrer\">https://e.org</a>.</pre>"
        );
    }

    #[test]
    fn html_becomes_text_with_line_breaks_for_blocks() {
        let text = html_to_text("<p>Hello&nbsp;<b>Ana</b>,</p><p>a &amp; b<br>c</p>");
        assert_eq!(text, "Hello Ana,\na & b\nc");
    }

    #[test]
    fn cut_off_markup_and_entities_next_to_multibyte_text_do_not_panic() {
        assert_eq!(decode_entities("&ééééééé;"), "&ééééééé;");
        assert_eq!(html_to_text("a <b é"), "a");
        assert_eq!(html_to_text("é<"), "é");
    }

    #[test]
    fn entities_decode_and_broken_ones_stay() {
        assert_eq!(
            decode_entities("a&amp;b &#x41;&#66; &bogus; &"),
            "a&b AB &bogus; &"
        );
    }
}
