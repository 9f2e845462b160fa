//! Shared helpers: fixture paths and checks on rendered documents.

use std::path::PathBuf;

/// `crates/render/tests/fixtures/<sub>`.
pub fn fixtures(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(sub)
}

/// An HTML draft as raw RFC 5322 bytes.
pub fn html_draft(html: &str) -> Vec<u8> {
    format!(
        "From: Owen <owen@example.com>\r\nTo: ana@example.com\r\nSubject: test\r\n\
         MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    )
    .into_bytes()
}

/// The part of a rendered document between `<body>` and `</body>`.
pub fn body_of(document: &str) -> &str {
    let start = document.find("<body>").map_or(0, |i| i + 6);
    let end = document.rfind("</body>").unwrap_or(document.len());
    &document[start..end]
}

/// Every tag of serialized HTML as (name, [(attribute, value)]). Only valid on html5ever
/// output, where a literal `<` in text is always escaped.
pub fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let name: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
            .collect();
        let mut attrs = Vec::new();
        let mut r = &rest[name.len()..];
        loop {
            r = r.trim_start();
            if r.is_empty() || r.starts_with('>') || r.starts_with("/>") {
                break;
            }
            let attr: String = r
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '=' && *c != '>')
                .collect();
            r = &r[attr.len()..];
            let mut value = String::new();
            if let Some(after) = r.strip_prefix("=\"") {
                let end = after.find('"').unwrap_or(after.len());
                value = after[..end].to_owned();
                r = &after[(end + 1).min(after.len())..];
            }
            if attr.is_empty() {
                r = &r[r.chars().next().map_or(0, char::len_utf8)..];
                continue;
            }
            attrs.push((attr.to_ascii_lowercase(), value));
        }
        out.push((name.to_ascii_lowercase(), attrs));
        rest = r;
    }
    out
}
