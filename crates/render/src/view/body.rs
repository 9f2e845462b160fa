//! Reading a draft's MIME structure and bodies into the view: the shown HTML and text, and
//! the warnings a broken structure or charset earns.

use std::collections::{HashMap, HashSet};

use mail_parser::{Message, MessagePart, MimeHeaders, PartType};

use super::super::dom::Dom;
use crate::machine::MachineReading;

use super::super::sanitize::{self, CidImage};
use super::super::{alternatives, hidden, links, sniff, text, unicode};
use super::headers::{is_known_charset, printable};
use super::{RenderOptions, ReviewView, Warning, WarningKind};

fn part_label(id: usize, part: &MessagePart<'_>) -> String {
    match (id, part.attachment_name()) {
        (0, _) => "The body".to_owned(),
        (_, Some(name)) => format!("Part {id} (\u{201c}{}\u{201d})", printable(name, 80)),
        (_, None) => format!("Part {id}"),
    }
}

/// The part shown as the body when the structure gave none: a multipart whose boundary is
/// missing or never appears leaves its whole content in one undivided part.
pub(super) fn fallback_body_part(message: &Message<'_>) -> Option<usize> {
    let has_body = message
        .html_body
        .iter()
        .chain(&message.text_body)
        .any(|&id| {
            message
                .parts
                .get(id as usize)
                .is_some_and(|p| matches!(p.body, PartType::Text(_) | PartType::Html(_)))
        });
    let root = message.parts.first()?;
    let multipart = content_type_of(root).is_some_and(|t| t.starts_with("multipart/"));
    (!has_body && multipart && !matches!(root.body, PartType::Multipart(_))).then_some(0)
}

pub(super) fn content_type_of(part: &MessagePart<'_>) -> Option<String> {
    part.content_type().map(|ct| match ct.subtype() {
        Some(sub) => format!("{}/{}", ct.ctype(), sub).to_ascii_lowercase(),
        None => ct.ctype().to_ascii_lowercase(),
    })
}

pub(super) fn read_structure_warnings(
    message: &Message<'_>,
    raw: &[u8],
    warnings: &mut Vec<Warning>,
) {
    for (id, part) in message.parts.iter().enumerate() {
        let label = part_label(id, part);
        let ctype = content_type_of(part).unwrap_or_default();
        if ctype.starts_with("multipart/") {
            let boundary = part.content_type().and_then(|ct| ct.attribute("boundary"));
            match (boundary, &part.body) {
                (None, _) => warnings.push(Warning {
                    kind: WarningKind::MissingBoundary,
                    message: format!(
                        "{label} is {ctype} without a boundary, so its parts cannot be told \
                         apart; it is shown as raw text."
                    ),
                }),
                (Some(b), PartType::Multipart(_)) => {
                    let close = format!("--{b}--");
                    let start = (part.offset_body as usize).min(raw.len());
                    if !sniff::contains(&raw[start..], close.as_bytes()) {
                        warnings.push(Warning {
                            kind: WarningKind::TruncatedPart,
                            message: format!(
                                "{label} ({ctype}) never reaches its closing boundary: the \
                                 message may be cut off."
                            ),
                        });
                    }
                }
                (Some(_), _) => warnings.push(Warning {
                    kind: WarningKind::MissingBoundary,
                    message: format!(
                        "{label} is {ctype} but its boundary never appears in the body; it is \
                         shown as raw text."
                    ),
                }),
            }
            continue;
        }
        if part.is_encoding_problem {
            let no_body = id == 0
                && matches!(&part.body, PartType::Text(t) if t.is_empty())
                && part.offset_body as usize >= raw.len();
            warnings.push(Warning {
                kind: WarningKind::TruncatedPart,
                message: if no_body {
                    "The draft ends after its headers: it has no body.".to_owned()
                } else {
                    format!(
                        "{label} is damaged or cut off and could not be decoded; what could be \
                         read is kept as it is."
                    )
                },
            });
        }
        if let PartType::Text(t) | PartType::Html(t) = &part.body {
            let charset = part.content_type().and_then(|ct| ct.attribute("charset"));
            if let Some(cs) = charset {
                if !is_known_charset(cs) {
                    warnings.push(Warning {
                        kind: WarningKind::UnknownCharset,
                        message: format!(
                            "{label} declares the unknown charset \"{}\"; it is read as \
                             UTF-8 and may show wrong characters.",
                            printable(cs, 40)
                        ),
                    });
                    continue;
                }
            }
            if t.contains('\u{fffd}') {
                let cs = printable(charset.unwrap_or("us-ascii"), 40);
                warnings.push(Warning {
                    kind: WarningKind::BrokenCharset,
                    message: format!(
                        "{label} contains bytes that are not valid {cs}; they show as \u{fffd}."
                    ),
                });
            }
        }
    }
}

fn too_deep(depth: usize) -> Warning {
    Warning {
        kind: WarningKind::DeeplyNested,
        message: format!(
            "The HTML body nests its elements {depth} levels deep; browsers and mail programs \
             rebuild anything deeper than {} levels their own way, so what the recipient sees \
             cannot be known. Its text is shown here instead.",
            sanitize::MAX_RENDERED_DEPTH
        ),
    }
}

/// `html` without the contents of the elements whose text is not shown (scripts, styles, the
/// head), for reading an unparsed body's words.
fn without_raw_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    loop {
        let lower = rest.to_ascii_lowercase();
        let next = ["<script", "<style", "<head", "<title"]
            .iter()
            .filter_map(|open| lower.find(open).map(|at| (at, &open[1..])))
            .min();
        let Some((at, name)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let close = format!("</{name}");
        rest = match lower[at..].find(&close) {
            Some(end) => {
                let after = at + end;
                let gt = lower[after..]
                    .find('>')
                    .map_or(rest.len(), |g| after + g + 1);
                &rest[gt..]
            }
            None => "",
        };
    }
}

/// How the first plain-text part is wrapped (`format=flowed`, `delsp=yes`).
fn text_wrapping(message: &Message<'_>) -> alternatives::Wrapping {
    let Some(ct) = message
        .text_body
        .first()
        .and_then(|&id| message.parts.get(id as usize))
        .and_then(|p| p.content_type())
    else {
        return alternatives::Wrapping::Fixed;
    };
    let is = |name: &str, value: &str| {
        ct.attribute(name)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
    };
    match (is("format", "flowed"), is("delsp", "yes")) {
        (true, true) => alternatives::Wrapping::FlowedDelSp,
        (true, false) => alternatives::Wrapping::Flowed,
        _ => alternatives::Wrapping::Fixed,
    }
}

pub(super) fn read_bodies(
    message: &Message<'_>,
    cids: HashMap<String, CidImage>,
    options: &RenderOptions,
    view: &mut ReviewView,
) -> HashSet<String> {
    let mut html_source = String::new();
    for &id in &message.html_body {
        if let Some(PartType::Html(h)) = message.parts.get(id as usize).map(|p| &p.body) {
            html_source.push_str(h);
        }
    }
    let mut texts = Vec::new();
    for &id in &message.text_body {
        if let Some(PartType::Text(t)) = message.parts.get(id as usize).map(|p| &p.body) {
            texts.push(t.as_ref());
        }
    }
    // A multipart that lost its boundary leaves no body at all: show its raw text instead of
    // an empty review (the warning explains why).
    let mut fallback = String::new();
    if let Some(id) = fallback_body_part(message) {
        match &message.parts[id].body {
            PartType::Text(t) | PartType::Html(t) => fallback.push_str(t),
            PartType::Binary(b) | PartType::InlineBinary(b) => {
                fallback.push_str(&String::from_utf8_lossy(b))
            }
            _ => {}
        }
    }
    if !fallback.is_empty() {
        texts.push(&fallback);
    }
    // Shown text uses \n line ends whatever the wire form (CRLF) is, so diffs compare words.
    let text_source = texts.join("\n\n").replace("\r\n", "\n");

    let fragment;
    // What the frame shows when it cannot be the fragment itself (nested too deep to render).
    let mut shown = None;
    let mut used_cids = HashSet::new();
    let mut html_visible = None;
    let mut rtl = unicode::has_rtl(&text_source);
    let mut unshown = Vec::new();
    let mut image_words = Vec::new();
    let mut source_urls = Vec::new();
    let source_depth = sanitize::nesting_depth(&html_source);
    if source_depth > sanitize::MAX_PARSED_DEPTH {
        // Not parsed (see MAX_PARSED_DEPTH): its words, shown as text, with the warning.
        view.warnings.push(too_deep(source_depth));
        fragment = text::text_to_html(&text::html_to_text(&without_raw_text(&html_source)));
    } else if !html_source.is_empty() {
        // Read before sanitizing: it drops the <style> rules recipients' programs apply.
        let reading = hidden::read_html(&html_source);
        let dom = Dom::parse(&html_source);
        view.invisible_characters.extend(unicode::scan_html(&dom));
        unshown = links::unshown_links(&dom);
        image_words = links::image_words(&dom);
        source_urls = links::html_urls(&dom);
        image_words.extend(
            message
                .attachments()
                .filter_map(|p| p.attachment_name())
                .map(str::to_owned),
        );
        rtl = unicode::has_rtl(&reading.visible_text);
        view.hidden_text = reading.passages;
        view.unverifiable_styling = reading.unverifiable;
        view.machine_text = reading.machine;
        html_visible = Some(reading.visible_text);
        let review_html = reading.review_html.as_deref().unwrap_or(&html_source);
        let clean = sanitize::sanitize_html(review_html, cids, options.allow_remote_content);
        view.remote_content.blocked_count = clean.blocked_count;
        view.remote_content.urls = clean.remote_urls;
        used_cids = clean.used_cids.into_iter().collect();
        for cid in clean.missing_cids {
            view.warnings.push(Warning {
                kind: WarningKind::MissingInlineImage,
                message: format!(
                    "The body shows the inline image \"cid:{}\", but the draft contains no \
                     image part with that Content-ID; the recipient will see a broken image.",
                    printable(&cid, 80)
                ),
            });
        }
        fragment = clean.fragment;
        let depth = sanitize::nesting_depth(&fragment);
        if depth > sanitize::MAX_RENDERED_DEPTH {
            view.warnings.push(too_deep(depth));
            shown = Some(text::text_to_html(&text::html_to_text(&fragment)));
        }
    } else if !text_source.is_empty() {
        fragment = text::text_to_html(&text_source);
        view.html_derived = true;
    } else {
        fragment = String::new();
    }
    if !text_source.is_empty() {
        view.text_body = text_source;
    } else if !fragment.is_empty() {
        view.text_body = text::html_to_text(&fragment);
        view.text_derived = true;
    }
    // Both alternatives were written: neither is this review's rendering of the other.
    let both_written = !view.text_derived && !view.text_body.is_empty();
    let shown_text = html_visible
        .clone()
        .unwrap_or_else(|| view.text_body.clone());
    let mut machine = MachineReading::new(&shown_text);
    machine.read_parts(message);
    view.machine_text.extend(machine.found);
    view.links = crate::links::extract_links(&fragment);
    if let Some(html_visible) = html_visible.filter(|_| both_written) {
        let html = alternatives::HtmlSide {
            visible: &html_visible,
            hrefs: view
                .links
                .iter()
                .map(|l| l.href.clone())
                .chain(source_urls)
                .collect(),
            image_words,
        };
        view.alternatives_differ =
            alternatives::compare(&view.text_body, text_wrapping(message), &html);
    }
    view.links.extend(unshown);
    if !view.text_derived && !view.text_body.is_empty() {
        view.invisible_characters
            .extend(unicode::check("the text body", &view.text_body));
    }
    // Markers last: they are the review's, and neither alternative has them.
    view.text_body = unicode::mark_text(&view.text_body);
    view.html_body = sanitize::wrap_document(
        &unicode::mark_fragment(shown.as_deref().unwrap_or(&fragment), rtl),
        options.allow_remote_content,
    );
    used_cids
}
