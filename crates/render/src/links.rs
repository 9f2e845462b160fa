//! Links that mislead: text showing one place while the link opens another.
//!
//! Hosts are compared as a mail program resolves them: full-width dots (`。．｡`) are dots and
//! internationalized names are compared in their ASCII (IDNA) form, so "bücher.example" and
//! "xn--bcher-kva.example" are one host. A host is also suspect on its own when, read in
//! Unicode, one of its labels mixes scripts or is written wholly in letters of another script
//! that look like Latin ones (UTS #39, `unicode-security`). An e-mail address shown as text
//! must be the one address its `mailto:` opens (no other `to`, `cc` or `bcc`).
//!
//! Links the sanitized review cannot show are read from the draft's own HTML: relative links
//! that a `<base href>` sends elsewhere, and image-map `<area href>` regions.

use unicode_security::{skeleton, MixedScript};

use super::dom::Dom;
use serde::{Deserialize, Serialize};

use super::text::{decode_entities, html_to_text};
use super::unicode::document_order;

/// Host names use these as dots (IDNA maps them to `.`).
pub(crate) fn normalize_dots(text: &str) -> String {
    text.replace(['\u{3002}', '\u{ff0e}', '\u{ff61}'], ".")
}

/// What is suspect about a host (ASCII or Unicode form) on its own, if anything.
pub(crate) fn host_warning(host: &str) -> Option<String> {
    let (unicode, _) = idna::domain_to_unicode(host);
    for label in unicode.split('.') {
        if label.is_ascii() {
            continue;
        }
        if !label.is_single_script() {
            return Some(format!(
                "the host \u{201c}{unicode}\u{201d} mixes letters of different scripts"
            ));
        }
        let reads: String = skeleton(label).collect();
        if reads.is_ascii() && reads.chars().any(|c| c.is_ascii_alphabetic()) {
            return Some(format!(
                "the host \u{201c}{unicode}\u{201d} is written in letters that look like \
                 \u{201c}{reads}\u{201d}"
            ));
        }
    }
    None
}

/// The address a piece of link text shows, when it is one e-mail address.
fn shown_address(text: &str) -> Option<String> {
    let t = text
        .trim()
        .trim_matches(|c| matches!(c, '<' | '>' | '(' | ')' | '.' | ',' | ';' | ':'));
    let t = t.strip_prefix("mailto:").unwrap_or(t);
    let (local, domain) = t.split_once('@')?;
    let ok = !local.is_empty()
        && !t.contains(char::is_whitespace)
        && !t.contains(['/', '?', '#'])
        && !domain.contains('@')
        && domain.contains('.');
    ok.then(|| normalize_dots(t).to_lowercase())
}

/// Every address a `mailto:` URL writes to: its path and its `to`, `cc` and `bcc` fields.
fn mailto_addresses(href: &str) -> Option<Vec<String>> {
    let href = href.trim();
    let rest = href
        .get(..7)?
        .eq_ignore_ascii_case("mailto:")
        .then(|| &href[7..])?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut out: Vec<String> = path.split(',').map(str::to_owned).collect();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if matches!(key.to_ascii_lowercase().as_str(), "to" | "cc" | "bcc") {
            out.extend(value.split(',').map(str::to_owned));
        }
    }
    Some(
        out.iter()
            .map(|a| normalize_dots(&percent_decoded(a)).trim().to_lowercase())
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// True when a link with this text and target misleads: the text shows another host or
/// another address than the link opens, or the host it opens is a look-alike.
pub(crate) fn misleads(text: &str, href: &str) -> bool {
    if let Some(shown) = shown_address(text) {
        return mailto_addresses(href).is_none_or(|all| all != [shown]);
    }
    let real = href_host(href);
    if real.as_deref().is_some_and(|h| host_warning(h).is_some()) {
        return true;
    }
    match shown_host(text) {
        Some(shown) => real.is_none_or(|real| real != shown),
        None => false,
    }
}

/// The `link_text_mismatch` explanation for a link.
pub(crate) fn explain(text: &str, href: &str) -> String {
    let real = href_host(href).unwrap_or_else(|| href.to_owned());
    let warning = href_host(href)
        .and_then(|h| host_warning(&h))
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    if text.is_empty() {
        format!("A link opens {real}{warning}.")
    } else {
        format!("A link shows \u{201c}{text}\u{201d} but opens {real}{warning}.")
    }
}

/// Links of the draft's own HTML that the sanitized review drops: relative links a
/// `<base href>` resolves (recipients' programs follow them there) and image-map areas.
pub(crate) fn unshown_links(dom: &Dom) -> Vec<Link> {
    let order = document_order(dom);
    let base = order
        .iter()
        .filter(|&&id| dom.tag(id) == Some("base"))
        .find_map(|&id| dom.attr(id, "href"))
        .and_then(|h| url::Url::parse(h.trim()).ok());
    let mut out = Vec::new();
    for &id in &order {
        let Some(href) = dom.attr(id, "href") else {
            continue;
        };
        match dom.tag(id) {
            Some("area") => {
                let href = match &base {
                    Some(b) => b
                        .join(href.trim())
                        .map_or(href.to_owned(), |u| u.to_string()),
                    None => href.to_owned(),
                };
                let alt = dom.attr(id, "alt").unwrap_or("").trim();
                out.push(Link {
                    text: if alt.is_empty() {
                        "[image-map area]".to_owned()
                    } else {
                        format!("[image-map area: {alt}]")
                    },
                    href,
                    mismatch: true,
                });
            }
            Some("a") => {
                let Some(base) = &base else { continue };
                if url::Url::parse(href.trim()).is_ok() {
                    continue;
                }
                if let Ok(resolved) = base.join(href.trim()) {
                    out.push(Link {
                        text: text_of(dom, id),
                        href: resolved.to_string(),
                        mismatch: true,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Every URL the draft's HTML links to or shows an image from: a text part may write any of
/// them (Outlook writes image addresses in `<…>`).
pub(crate) fn html_urls(dom: &Dom) -> Vec<String> {
    document_order(dom)
        .into_iter()
        .filter_map(|id| match dom.tag(id) {
            Some("a" | "area") => dom.attr(id, "href"),
            Some("img") => dom.attr(id, "src"),
            _ => None,
        })
        .map(str::to_owned)
        .collect()
}

/// The alt texts and file names of the HTML's images: what a text part writes in their place
/// (and the word "image", as in Outlook's `[Image]`, when there is any).
pub(crate) fn image_words(dom: &Dom) -> Vec<String> {
    let mut out = Vec::new();
    for id in document_order(dom) {
        if dom.tag(id) != Some("img") {
            continue;
        }
        if out.is_empty() {
            out.push("image".to_owned());
        }
        out.extend(dom.attr(id, "alt").map(str::to_owned));
        if let Some(src) = dom.attr(id, "src") {
            let name = src.split(['?', '#']).next().unwrap_or("");
            out.extend(name.rsplit('/').next().map(str::to_owned));
        }
    }
    out
}

fn text_of(dom: &Dom, id: usize) -> String {
    let text = dom.texts_under(id, |_| false).concat();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A link in the body, with the URL it really opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Link {
    /// The text the reader sees.
    pub text: String,
    /// Where the link goes.
    pub href: String,
    /// The link misleads: its text shows another host or address than `href` opens, `href`
    /// is a look-alike host, or the review cannot show the link (a `<base href>` target, an
    /// image-map area). See `render::links`.
    pub mismatch: bool,
}

/// The links of a sanitized fragment, in document order.
pub fn extract_links(fragment: &str) -> Vec<Link> {
    let mut links = Vec::new();
    let mut rest = fragment;
    while let Some(at) = rest.find("<a ") {
        rest = &rest[at..];
        let Some(tag_end) = rest.find('>') else {
            break;
        };
        let tag = &rest[..tag_end];
        let href = tag
            .find(" href=\"")
            .map(|h| &tag[h + 7..])
            .and_then(|v| v.find('"').map(|e| decode_entities(&v[..e])));
        let body = &rest[tag_end + 1..];
        let close = body.find("</a>").unwrap_or(body.len());
        let text = html_to_text(&body[..close]);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(href) = href {
            let mismatch = link_mismatch(&text, &href);
            links.push(Link {
                text,
                href,
                mismatch,
            });
        }
        rest = &body[close..];
    }
    links
}

/// The host a piece of link text *shows*, when the text looks like a URL or a bare domain.
pub fn shown_host(text: &str) -> Option<String> {
    let t = text
        .trim()
        .trim_matches(|c| matches!(c, '<' | '>' | '(' | ')' | '[' | ']'));
    if t.is_empty() || t.contains(char::is_whitespace) {
        return None;
    }
    let lower = normalize_dots(t).to_lowercase();
    let candidate = if lower.contains("://") {
        lower
    } else if lower.starts_with("www.") || looks_like_domain(&lower) {
        format!("https://{lower}")
    } else {
        return None;
    };
    let url = url::Url::parse(&candidate).ok()?;
    url.host_str().map(normalize_host)
}

fn looks_like_domain(text: &str) -> bool {
    let host = text.split(['/', '?', '#']).next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && !host.contains('@')
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'))
}

fn normalize_host(host: &str) -> String {
    let host = host.trim_end_matches('.').to_lowercase();
    host.strip_prefix("www.").map(str::to_owned).unwrap_or(host)
}

/// The host a link really opens.
pub fn href_host(href: &str) -> Option<String> {
    url::Url::parse(href.trim())
        .ok()
        .and_then(|u| u.host_str().map(normalize_host))
}

/// True when the text shows a URL whose host is not the one the link opens.
pub fn link_mismatch(text: &str, href: &str) -> bool {
    misleads(text, href)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alike_hosts_are_suspect_and_consistent_idn_hosts_are_not() {
        assert!(
            host_warning("xn--pypal-4ve.com").is_some(),
            "Cyrillic а in paypal"
        );
        assert!(
            host_warning("xn--80ak6aa92e.com").is_some(),
            "all-Cyrillic apple"
        );
        assert_eq!(host_warning("xn--bcher-kva.example"), None);
        assert_eq!(host_warning("example.com"), None);
    }

    #[test]
    fn a_mailto_must_open_the_address_it_shows_and_no_other() {
        assert!(!misleads("ana@example.com", "mailto:Ana@Example.com"));
        assert!(misleads("ana@example.com", "mailto:eve@evil.example"));
        assert!(misleads(
            "ana@example.com",
            "mailto:ana@example.com?bcc=eve@evil.example"
        ));
        assert!(misleads("ana@example.com", "https://evil.example"));
        assert!(!misleads("ana@example.com.", "mailto:ana@example.com"));
        assert!(!misleads(
            "https://x.example/off?ana@example.com",
            "https://x.example/off"
        ));
    }

    #[test]
    fn full_width_dots_and_idna_are_normalized_before_comparing() {
        assert!(misleads(
            "www\u{3002}bank\u{3002}example",
            "https://evil.example/"
        ));
        assert!(!misleads("bank\u{ff0e}example", "https://bank.example/"));
        assert!(!misleads(
            "https://bücher.example/",
            "https://xn--bcher-kva.example/"
        ));
    }

    #[test]
    fn a_link_showing_one_domain_and_opening_another_is_a_mismatch() {
        assert!(link_mismatch(
            "www.bank.example",
            "https://evil.example/login"
        ));
        assert!(link_mismatch(
            "https://bank.example/",
            "https://bank.example.evil.example/"
        ));
        assert!(!link_mismatch(
            "https://www.bank.example/x",
            "https://bank.example/y"
        ));
        assert!(!link_mismatch("click here", "https://evil.example"));
        assert!(!link_mismatch("ana@example.com", "mailto:ana@example.com"));
    }
}
