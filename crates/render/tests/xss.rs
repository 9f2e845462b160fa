//! The XSS corpus: each payload of `fixtures/xss/` (after the classes of the OWASP XSS filter
//! evasion cheat sheet) is sent as an HTML draft, and nothing executable may survive.

use std::fs;

use base64::Engine as _;
use countersign_render::sanitize::{blocked_image_placeholder, wrap_document};
use countersign_render::{render_message, RenderOptions};

use crate::support::{body_of, fixtures, tags};

/// A 1x1 PNG, attached as `cid:pixel@x` so the corpus also exercises cid resolution.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

fn draft_with_payload(payload: &str) -> Vec<u8> {
    format!(
        "From: Agent <agent@example.com>\r\nTo: ana@example.com\r\nSubject: payload\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{payload}\r\n\
         --b1\r\nContent-Type: image/png\r\nContent-ID: <pixel@x>\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{PIXEL_PNG}\r\n--b1--\r\n"
    )
    .into_bytes()
}

const FORBIDDEN_TAGS: &[&str] = &[
    "script",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "option",
    "meta",
    "base",
    "link",
    "style",
    "svg",
    "math",
    "video",
    "audio",
    "source",
    "track",
    "noscript",
    "xmp",
    "plaintext",
    "param",
    "animate",
    "set",
    "use",
    "image",
    "template",
    "portal",
    "area",
    "map",
];

const FORBIDDEN_ATTRS: &[&str] = &[
    "formaction",
    "srcdoc",
    "xlink:href",
    "action",
    "data",
    "poster",
    "usemap",
    "codebase",
    "code",
    "http-equiv",
];

/// Attributes that may only survive, with web URLs, when the owner allowed remote content.
const REMOTE_ATTRS: &[&str] = &["background", "srcset"];

/// Everything wrong with one rendered document, as readable lines.
fn problems(document: &str, cid_uri: &str, remote_allowed: bool) -> Vec<String> {
    let mut found = Vec::new();
    let expected_head = wrap_document("", remote_allowed);
    let expected_head = &expected_head[..expected_head.find("<body>").unwrap()];
    if !document.starts_with(expected_head) {
        found.push("the document head is not exactly the CSP head".to_owned());
    }
    let body = body_of(document);
    let lower = body.to_ascii_lowercase();
    for needle in [
        "<script",
        "javascript:",
        "vbscript:",
        "livescript:",
        "expression(",
    ] {
        if lower.contains(needle) {
            found.push(format!("contains {needle:?}"));
        }
    }
    let placeholder = blocked_image_placeholder();
    for (tag, attrs) in tags(body) {
        let tag = tag.trim_start_matches('/').to_owned();
        if FORBIDDEN_TAGS.contains(&tag.as_str()) {
            found.push(format!("<{tag}> survived"));
        }
        for (name, value) in attrs {
            if name.starts_with("on") {
                found.push(format!("event handler {name} on <{tag}>"));
            }
            if FORBIDDEN_ATTRS.contains(&name.as_str()) {
                found.push(format!("attribute {name} on <{tag}>"));
            }
            let squeezed: String = value
                .to_ascii_lowercase()
                .chars()
                .filter(|c| !c.is_whitespace() && !c.is_control())
                .collect();
            let web = squeezed.starts_with("https://") || squeezed.starts_with("http://");
            if REMOTE_ATTRS.contains(&name.as_str()) && !(remote_allowed && web) {
                found.push(format!("attribute {name}={value:?} on <{tag}>"));
            }
            let inlined = value == cid_uri || value == placeholder;
            if squeezed.contains("data:") && !(tag == "img" && name == "src" && inlined) {
                found.push(format!("data: URI in {name} of <{tag}>: {value:.60}"));
            }
            if name == "src" && !(inlined || (remote_allowed && web)) {
                found.push(format!(
                    "src that is neither inlined nor allowed: {value:.60}"
                ));
            }
            let fetches = squeezed.contains("url(");
            if name == "style" && ((fetches && !remote_allowed) || squeezed.contains('\\')) {
                found.push(format!("style that can fetch or evade: {value}"));
            }
            if name == "href"
                && !(web || squeezed.starts_with("mailto:") || squeezed.starts_with("tel:"))
            {
                found.push(format!(
                    "href with a scheme that is not a web or mail link: {value}"
                ));
            }
        }
    }
    found
}

#[test]
fn no_payload_of_the_xss_corpus_leaves_anything_executable_even_with_remote_content_allowed() {
    let dir = fixtures("xss");
    let mut payloads: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    payloads.sort();
    let png = base64::engine::general_purpose::STANDARD
        .decode(PIXEL_PNG)
        .unwrap();
    let cid_uri = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    );
    let mut failures = Vec::new();
    for path in &payloads {
        let payload = fs::read_to_string(path).unwrap();
        for remote_allowed in [false, true] {
            let options = RenderOptions {
                allow_remote_content: remote_allowed,
                ..RenderOptions::default()
            };
            let view = render_message(&draft_with_payload(&payload), &options);
            let found = problems(&view.html_body, &cid_uri, remote_allowed);
            if !found.is_empty() {
                failures.push(format!(
                    "{} (remote allowed: {remote_allowed}): {}\n  rendered: {}",
                    path.file_name().unwrap().to_string_lossy(),
                    found.join("; "),
                    body_of(&view.html_body)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} payloads survived:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(payloads.len() >= 40, "only {} payloads ran", payloads.len());
}

#[test]
fn the_cid_image_in_the_corpus_draft_is_really_inlined() {
    // Guards the corpus itself: if cid resolution broke, the data: exception above would be
    // vacuous.
    let view = render_message(
        &draft_with_payload("<img src=\"cid:pixel@x\" alt=\"p\">"),
        &RenderOptions::default(),
    );
    assert!(body_of(&view.html_body).contains("src=\"data:image/png;base64,iVBOR"));
    assert!(view.attachments[0].inline);
}

#[test]
fn the_problem_checker_catches_a_live_handler_and_a_script_link() {
    // Guards the checker: a document that is not sanitized must be reported.
    let head = wrap_document("", false);
    let head = &head[..head.find("<body>").unwrap()];
    let bad = format!(
        "{head}<body><img src=\"x\" onerror=\"alert(1)\"><a href=\"javascript:alert(1)\">x</a></body></html>"
    );
    let found = problems(&bad, "", false);
    assert!(found.iter().any(|f| f.contains("onerror")), "{found:?}");
    assert!(found.iter().any(|f| f.contains("javascript:")), "{found:?}");
    let remote = format!("{head}<body><img src=\"https://t.example/p.gif\"></body></html>");
    assert!(problems(&remote, "", false)
        .iter()
        .any(|f| f.contains("neither inlined")));
    let allowed_head = wrap_document("", true);
    let allowed_head = &allowed_head[..allowed_head.find("<body>").unwrap()];
    let remote = format!("{allowed_head}<body><img src=\"https://t.example/p.gif\"></body></html>");
    assert!(problems(&remote, "", true).is_empty());
}
