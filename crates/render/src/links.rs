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

use super::dom::{Dom, NodeData};
use super::text::{href_host, shown_host};
use super::unicode::document_order;
use super::view::Link;

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
    let mut out = String::new();
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        match &dom.nodes[n].data {
            NodeData::Text(t) => out.push_str(t),
            _ => stack.extend(dom.nodes[n].children.iter().rev()),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
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
}
