//! Sanitizing a draft's HTML into a document that is safe to show in `<iframe sandbox srcdoc>`.
//!
//! ammonia does the structural work (an allow-list of tags and attributes, URL schemes, link
//! `rel`); an attribute filter on top of it resolves `cid:` images from the message's own parts,
//! blocks remote content (counting and listing what it blocked) and cleans inline CSS. The
//! output is wrapped in a full document whose CSP forbids scripts, forms and — unless the owner
//! allowed remote content for this draft — every fetch except `data:` images.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;

/// What an embedded `cid:` image resolves to.
#[derive(Clone)]
pub struct CidImage {
    /// The image's MIME type (only `image/*` parts are ever inlined).
    pub content_type: String,
    /// The decoded image bytes.
    pub bytes: Vec<u8>,
}

/// The result of sanitizing one HTML body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized {
    /// The sanitized fragment (what goes inside `<body>`).
    pub fragment: String,
    /// Every remote URL the HTML referenced for fetching (images, srcset, backgrounds, CSS),
    /// in order of first appearance, without duplicates.
    pub remote_urls: Vec<String>,
    /// How many remote references were blocked (0 when remote content is allowed).
    pub blocked_count: usize,
    /// Content-IDs that the HTML referenced and that were resolved from the message's parts.
    pub used_cids: Vec<String>,
    /// Content-IDs that the HTML referenced but no image part of the message has.
    pub missing_cids: Vec<String>,
}

/// Shown instead of a blocked remote image: a grey box saying what happened, as a `data:` SVG
/// (scripts never run in an SVG loaded through `<img>`).
const BLOCKED_IMAGE_SVG: &str = "<svg xmlns='http://www.w3.org/2000/svg' width='160' height='24'>\
<rect width='160' height='24' fill='#eee' stroke='#999'/>\
<text x='80' y='16' font-family='sans-serif' font-size='11' text-anchor='middle' fill='#555'>\
remote image blocked</text></svg>";

/// The `src` given to blocked remote images.
pub fn blocked_image_placeholder() -> String {
    format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(BLOCKED_IMAGE_SVG)
    )
}

#[derive(Default)]
struct Findings {
    remote_urls: Vec<String>,
    seen: HashSet<String>,
    blocked: usize,
    used_cids: BTreeMap<String, ()>,
    missing_cids: BTreeMap<String, ()>,
}

impl Findings {
    fn remote(&mut self, url: &str, blocked: bool) {
        if self.seen.insert(url.to_owned()) {
            self.remote_urls.push(url.to_owned());
        }
        if blocked {
            self.blocked += 1;
        }
    }
}

/// Normalises a Content-ID for lookup: `<a@b>` and `a@b` name the same part.
pub fn normalize_cid(cid: &str) -> String {
    let cid = cid.trim();
    let cid = cid.strip_prefix('<').unwrap_or(cid);
    let cid = cid.strip_suffix('>').unwrap_or(cid);
    cid.to_ascii_lowercase()
}

/// `Some(absolute_url)` when `value` would make the viewer fetch from the network.
fn remote_url(value: &str) -> Option<String> {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        Some(v.to_owned())
    } else if v.starts_with("//") {
        // Protocol-relative: inside srcdoc it would resolve against about:srcdoc and fail, but
        // it is still a remote reference the owner should know about.
        Some(format!("https:{v}"))
    } else {
        None
    }
}

/// Sanitizes `html`: see the module docs. `cids` maps normalized Content-IDs to images; only
/// the images the HTML really shows are encoded.
pub fn sanitize_html(
    html: &str,
    cids: HashMap<String, CidImage>,
    allow_remote_content: bool,
) -> Sanitized {
    let findings = Arc::new(Mutex::new(Findings::default()));
    // The filter must be 'static, so it owns the images it may inline.
    let cids = Arc::new(cids);
    let placeholder = blocked_image_placeholder();

    let mut builder = ammonia::Builder::default();
    builder
        .add_tags(["font", "center"])
        .rm_tags(["area", "map"])
        .add_clean_content_tags(["title", "noscript"])
        .add_generic_attributes([
            "style",
            "align",
            "valign",
            "width",
            "height",
            "bgcolor",
            "color",
            "border",
            "dir",
            "class",
            "background",
        ])
        .add_tag_attributes("font", ["face", "size", "color"])
        .add_tag_attributes("img", ["srcset", "border", "hspace", "vspace"])
        .add_tag_attributes("table", ["cellpadding", "cellspacing", "border", "summary"])
        .add_tag_attributes("td", ["colspan", "rowspan", "nowrap"])
        .add_tag_attributes("th", ["colspan", "rowspan", "nowrap", "scope"])
        .url_schemes(HashSet::from(["http", "https", "mailto", "tel", "cid"]))
        // No base exists for a draft: a relative URL would resolve against about:srcdoc.
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .set_tag_attribute_value("a", "target", "_blank")
        .strip_comments(true);

    let state = Arc::clone(&findings);
    builder.attribute_filter(move |element, attribute, value| {
        let mut found = state.lock().unwrap_or_else(PoisonError::into_inner);
        filter_attribute(
            element,
            attribute,
            value,
            allow_remote_content,
            &cids,
            &placeholder,
            &mut found,
        )
    });
    let fragment = builder.clean(html).to_string();
    drop(builder);

    let found = std::mem::take(&mut *findings.lock().unwrap_or_else(PoisonError::into_inner));
    Sanitized {
        fragment,
        remote_urls: found.remote_urls,
        blocked_count: found.blocked,
        used_cids: found.used_cids.into_keys().collect(),
        missing_cids: found.missing_cids.into_keys().collect(),
    }
}

fn filter_attribute<'u>(
    element: &str,
    attribute: &str,
    value: &'u str,
    allow_remote: bool,
    cids: &HashMap<String, CidImage>,
    placeholder: &str,
    found: &mut Findings,
) -> Option<Cow<'u, str>> {
    match attribute {
        "style" => {
            let clean = sanitize_style(value, allow_remote, found);
            (!clean.is_empty()).then_some(Cow::Owned(clean))
        }
        "src" if element == "img" => {
            let lower = value.trim().to_ascii_lowercase();
            if let Some(cid) = lower.strip_prefix("cid:") {
                let cid = normalize_cid(&percent_decode(cid));
                let Some(image) = cids.get(&cid) else {
                    found.missing_cids.insert(cid, ());
                    return None;
                };
                found.used_cids.insert(cid, ());
                Some(Cow::Owned(format!(
                    "data:{};base64,{}",
                    image.content_type,
                    base64::engine::general_purpose::STANDARD.encode(&image.bytes)
                )))
            } else if let Some(url) = remote_url(value) {
                found.remote(&url, !allow_remote);
                Some(if allow_remote {
                    Cow::Owned(url)
                } else {
                    Cow::Owned(placeholder.to_owned())
                })
            } else {
                None
            }
        }
        "src" => None,
        "srcset" => {
            let mut all_remote = true;
            for candidate in value.split(',') {
                let url = candidate.split_whitespace().next().unwrap_or("");
                match remote_url(url) {
                    Some(url) => found.remote(&url, !allow_remote),
                    None => all_remote = false,
                }
            }
            (allow_remote && all_remote).then_some(Cow::Borrowed(value))
        }
        "background" => {
            let url = remote_url(value)?;
            found.remote(&url, !allow_remote);
            allow_remote.then_some(Cow::Owned(url))
        }
        "href" => {
            // A cid: link means nothing to a reader and would be a dead click.
            (!value.trim().to_ascii_lowercase().starts_with("cid:")).then_some(Cow::Borrowed(value))
        }
        _ => Some(Cow::Borrowed(value)),
    }
}

/// Decodes `%XX` escapes (RFC 2392 allows them in `cid:` URLs); invalid escapes stay as typed.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Cleans an inline `style` attribute declaration by declaration.
///
/// Dropped: anything using CSS escapes or comments (classic filter evasion, never needed in
/// mail), `expression()`, `behavior`, `-moz-binding`, `@import`, script URLs, and every `url()`
/// that is not a plain remote http(s) URL. Remote `url()`s are counted and kept only when the
/// owner allowed remote content.
fn sanitize_style(value: &str, allow_remote: bool, found: &mut Findings) -> String {
    let mut kept = Vec::new();
    for declaration in value.split(';') {
        let declaration = declaration.trim();
        if declaration.is_empty() {
            continue;
        }
        if declaration.contains('\\') || declaration.contains("/*") || declaration.contains('\0') {
            continue;
        }
        let squeezed: String = declaration
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        let dangerous = [
            "expression",
            "behavior",
            "behaviour",
            "binding",
            "@import",
            "javascript:",
            "vbscript:",
            "livescript:",
            "image-set(",
            "src(",
        ];
        if dangerous.iter().any(|d| squeezed.contains(d)) {
            continue;
        }
        if squeezed.contains("url(") {
            let urls = css_urls(declaration);
            let remote: Vec<String> = urls.iter().filter_map(|u| remote_url(u)).collect();
            for url in &remote {
                found.remote(url, !allow_remote);
            }
            if allow_remote && !urls.is_empty() && remote.len() == urls.len() {
                kept.push(declaration.to_owned());
            }
            continue;
        }
        kept.push(declaration.to_owned());
    }
    kept.join("; ")
}

/// The arguments of every `url(...)` in a declaration, quotes removed.
fn css_urls(declaration: &str) -> Vec<String> {
    let lower = declaration.to_ascii_lowercase();
    let mut urls = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("url(") {
        let start = from + at + 4;
        let end = lower[start..].find(')').map_or(lower.len(), |e| start + e);
        let arg = declaration[start..end]
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        urls.push(arg.trim().to_owned());
        from = end.min(lower.len());
        if from >= lower.len() {
            break;
        }
    }
    urls
}

/// The CSP of the review frame: nothing runs, nothing is submitted, and nothing is fetched
/// except inline `data:` images unless the owner allowed remote content.
pub fn content_security_policy(allow_remote_content: bool) -> String {
    let img = if allow_remote_content {
        "data: https: http:"
    } else {
        "data:"
    };
    format!(
        "default-src 'none'; img-src {img}; style-src 'unsafe-inline'; script-src 'none'; \
         form-action 'none'; base-uri 'none'"
    )
}

/// How deep the HTML parsers of browsers and mail programs nest elements: WebKit and Blink
/// rebuild anything deeper as siblings (`kMaximumHTMLParserDOMTreeDepth = 512` in Blink's
/// html_construction_site.h; WebKit's HTMLConstructionSite has the same limit), so a deeper
/// body is not shown the way its source says — by the review's frame either.
pub const MAX_RENDERED_DEPTH: usize = 512;

/// How deep a draft's own HTML may nest before it is not parsed at all: html5ever's tree
/// builder slows down with the square of the depth (minutes for 50,000 levels in a debug
/// build), and nothing that deep is shown as written anyway (see [`MAX_RENDERED_DEPTH`]).
pub const MAX_PARSED_DEPTH: usize = 4 * MAX_RENDERED_DEPTH;

/// The deepest element nesting of an HTML text, counting start and end tags. Exact on a
/// sanitized fragment (its serializer closes every element that is not void, quotes every
/// attribute value and escapes `<` in text); on a draft's own HTML an upper bound, as elements
/// left open (`<p>`, `<li>`) count as nested.
pub fn nesting_depth(fragment: &str) -> usize {
    const VOID: [&str; 18] = [
        "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
        "keygen", "link", "meta", "param", "source", "track", "wbr",
    ];
    let bytes = fragment.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        let start = at + offset + 1;
        let closing = bytes.get(start) == Some(&b'/');
        let name_start = if closing { start + 1 } else { start };
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let name = fragment[name_start..name_start + name_len].to_ascii_lowercase();
        if bytes[start..].starts_with(b"!--") {
            // A comment ends at `-->`, whatever it holds.
            let close = fragment[start..]
                .find("-->")
                .map_or(bytes.len(), |c| start + c + 3);
            at = close.min(bytes.len());
            continue;
        }
        // The end of the tag: the first `>` outside a quoted attribute value.
        let mut quote = None;
        let mut end = name_start + name_len;
        while let Some(&b) = bytes.get(end) {
            match (quote, b) {
                (None, b'"' | b'\'') => quote = Some(b),
                (Some(q), b) if b == q => quote = None,
                (None, b'>') => break,
                _ => {}
            }
            end += 1;
        }
        if name_len > 0 {
            if closing {
                depth = depth.saturating_sub(1);
            } else if !VOID.contains(&name.as_str()) && bytes.get(end - 1) != Some(&b'/') {
                depth += 1;
                deepest = deepest.max(depth);
            }
        }
        at = (end + 1).min(bytes.len());
    }
    deepest
}

/// Wraps a sanitized fragment in the complete document given to `<iframe sandbox srcdoc>`.
pub fn wrap_document(fragment: &str, allow_remote_content: bool) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <style>body{{margin:8px;font-family:sans-serif;overflow-wrap:anywhere}}\
         img{{max-width:100%;height:auto}}pre{{white-space:pre-wrap}}</style>\
         </head><body>{}</body></html>",
        content_security_policy(allow_remote_content),
        fragment
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(html: &str) -> Sanitized {
        sanitize_html(html, HashMap::new(), false)
    }

    #[test]
    fn nesting_depth_counts_open_elements_not_void_ones_or_quoted_brackets() {
        assert_eq!(nesting_depth(""), 0);
        assert_eq!(nesting_depth("<p>a<br>b<img src=\"x\"></p>"), 1);
        assert_eq!(
            nesting_depth("<div><div title=\"a > b <c>\"><b>x</b></div></div><p>y</p>"),
            3
        );
        let deep = format!("{}x{}", "<div>".repeat(600), "</div>".repeat(600));
        assert_eq!(nesting_depth(&clean(&deep).fragment), 600);
        // A draft's own HTML: single quotes and comments do not hide or invent tags.
        assert_eq!(
            nesting_depth("<p title='a > <b>'>x<!-- <div><div> --></p><p>y</p>"),
            1
        );
    }

    #[test]
    fn script_tags_and_handlers_are_removed() {
        let out = clean("<p onclick=\"x()\">hi<script>alert(1)</script></p>");
        assert_eq!(out.fragment, "<p>hi</p>");
    }

    #[test]
    fn remote_images_are_replaced_counted_and_listed() {
        let out = clean(
            "<img src=\"https://t.example/p.gif\" alt=\"x\"><img src=\"https://t.example/p.gif\">",
        );
        assert_eq!(out.blocked_count, 2);
        assert_eq!(out.remote_urls, ["https://t.example/p.gif"]);
        assert!(!out.fragment.contains("t.example"));
        assert!(out.fragment.contains("data:image/svg+xml;base64,"));
    }

    #[test]
    fn remote_images_are_kept_when_the_owner_allows_them() {
        let out = sanitize_html(
            "<img src=\"https://t.example/p.gif\">",
            HashMap::new(),
            true,
        );
        assert_eq!(out.blocked_count, 0);
        assert!(out.fragment.contains("https://t.example/p.gif"));
    }

    #[test]
    fn style_urls_and_expressions_are_dropped_but_colours_stay() {
        let out = clean(
            "<p style=\"color: red; background: url(https://x.example/a.png); width: expression(alert(1))\">a</p>",
        );
        assert_eq!(out.fragment, "<p style=\"color: red\">a</p>");
        assert_eq!(out.blocked_count, 1);
    }

    #[test]
    fn cid_images_become_data_uris() {
        let mut cids = HashMap::new();
        cids.insert(
            "logo@x".to_owned(),
            CidImage {
                content_type: "image/png".into(),
                bytes: vec![1, 2, 3],
            },
        );
        let out = sanitize_html("<img src=\"cid:logo@x\">", cids, false);
        assert_eq!(out.fragment, "<img src=\"data:image/png;base64,AQID\">");
        assert_eq!(out.used_cids, ["logo@x"]);
    }

    #[test]
    fn links_keep_their_target_and_get_noopener() {
        let out = clean("<a href=\"https://example.com/a?b=1&amp;c=2\">x</a>");
        assert_eq!(
            out.fragment,
            "<a href=\"https://example.com/a?b=1&amp;c=2\" target=\"_blank\" rel=\"noopener noreferrer\">x</a>"
        );
    }
}
