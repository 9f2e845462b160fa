//! The reveal rendering, shown beside the normal one on request: every word of the draft,
//! with what hides it taken away (inline styles, `<style>` sheets, the `hidden` attribute,
//! colours, closed `<details>`) and what only machines read written inline and marked (alt,
//! title and ARIA text, comments, Outlook-only branches, `<noscript>`, `<template>`, scripts,
//! text a `::before`/`::after` rule adds, other alternatives, nested messages). It is for
//! finding words, not for judging the look: what leaves is the normal rendering's.

use std::collections::HashMap;

use crate::dom::{Dom, NodeData, NodeId};
use crate::machine::{read_comment, Comment, MachineReading};
use crate::sanitize;
use crate::styling::selector::{self, Selector};
use crate::styling::{sheet, style_text};
use crate::text::{escape_html, text_to_html};
use crate::view::parse_message;

/// Attributes that style, hide or colour: left out of the reveal rendering.
const HIDING_ATTRIBUTES: &[&str] = &["style", "hidden", "bgcolor", "background", "color", "text"];
/// Attributes whose text programs read and pages do not show.
const MACHINE_ATTRIBUTES: &[(&str, &str)] = &[
    ("alt", "alt"),
    ("title", "title"),
    ("aria-label", "aria-label"),
    ("aria-description", "aria-description"),
    ("placeholder", "placeholder"),
];

/// The marker the reveal style sheet draws: dashed, tinted, never mistaken for the mail's text.
const REVEAL_STYLE: &str = "<style>mark.cs-machine{background:#fff3bf;color:#3d2e00;\
     outline:1px dashed #8a6d00;font:12px/1.4 sans-serif;padding:0 2px}</style></head>";

/// Renders `raw` (a draft's bytes) as the reveal document for a sandboxed frame.
pub fn render_reveal(raw: &[u8]) -> String {
    let Some(message) = parse_message(raw) else {
        let text = String::from_utf8_lossy(raw);
        return with_style(&sanitize::wrap_document(&text_to_html(&text), false));
    };
    let mut html = String::new();
    for &id in &message.html_body {
        if let Some(mail_parser::PartType::Html(h)) =
            message.parts.get(id as usize).map(|p| &p.body)
        {
            html.push_str(h);
        }
    }
    let mut fragment = if html.is_empty() {
        let text: String = message
            .text_body
            .iter()
            .filter_map(
                |&id| match message.parts.get(id as usize).map(|p| &p.body) {
                    Some(mail_parser::PartType::Text(t)) => Some(t.as_ref()),
                    _ => None,
                },
            )
            .collect::<Vec<_>>()
            .join("\n\n");
        text_to_html(&text)
    } else if sanitize::nesting_depth(&html) > sanitize::MAX_PARSED_DEPTH {
        text_to_html(&crate::text::html_to_text(&html))
    } else {
        let dom = Dom::parse(&html);
        let revealed = Revealer::new(&dom).write();
        sanitize::sanitize_html(&revealed, HashMap::new(), false).fragment
    };
    let mut parts = MachineReading::new("");
    parts.read_parts(&message);
    for found in parts.found {
        fragment.push_str(&format!("<p>{}</p>", mark(&found.source, &found.text)));
    }
    with_style(&sanitize::wrap_document(&fragment, false))
}

fn with_style(document: &str) -> String {
    document.replacen("</head>", REVEAL_STYLE, 1)
}

/// `[source: text]`, marked.
fn mark(source: &str, text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "<mark class=\"cs-machine\">[{}: {}]</mark>",
        escape_html(source),
        escape_html(&text)
    )
}

struct Revealer<'d> {
    dom: &'d Dom,
    /// Text `::before` / `::after` rules add, per element.
    generated: HashMap<NodeId, Vec<(bool, String)>>,
    /// Template contents, per template element.
    templates: HashMap<NodeId, NodeId>,
}

impl<'d> Revealer<'d> {
    fn new(dom: &'d Dom) -> Self {
        let sheet = sheet::parse_sheet(&style_text(dom));
        let mut generated: HashMap<NodeId, Vec<(bool, String)>> = HashMap::new();
        for rule in &sheet.rules {
            let Some(content) = rule
                .declarations
                .iter()
                .rev()
                .find(|d| d.property == "content")
            else {
                continue;
            };
            for s in selector::parse_list(&rule.prelude) {
                if let Selector::PseudoElement(complex, name) = s {
                    let before = match name.as_str() {
                        "before" => true,
                        "after" => false,
                        _ => continue,
                    };
                    for id in (0..dom.nodes.len()).filter(|&id| complex.matches(dom, id)) {
                        generated
                            .entry(id)
                            .or_default()
                            .push((before, content.value.clone()));
                    }
                }
            }
        }
        Revealer {
            dom,
            generated,
            templates: dom.templates.iter().copied().collect(),
        }
    }

    fn write(&self) -> String {
        enum Step {
            Open(NodeId),
            Close(&'static str, NodeId),
        }
        let dom = self.dom;
        let mut out = String::new();
        let mut stack: Vec<Step> = dom.nodes[0]
            .children
            .iter()
            .rev()
            .map(|&c| Step::Open(c))
            .collect();
        while let Some(step) = stack.pop() {
            match step {
                Step::Close(tag, id) => {
                    for (before, content) in self.generated.get(&id).into_iter().flatten() {
                        if !before {
                            out.push_str(&mark("added by a ::after rule", content));
                        }
                    }
                    out.push_str(&format!("</{tag}>"));
                }
                Step::Open(id) => match &dom.nodes[id].data {
                    NodeData::Text(text) => out.push_str(&escape_html(text)),
                    NodeData::Comment(comment) => out.push_str(&self.comment(comment)),
                    NodeData::Element { .. } => {
                        self.element(id, &mut out, &mut stack_push(&mut stack))
                    }
                    _ => {}
                },
            }
        }
        return out;

        fn stack_push(
            stack: &mut Vec<Step>,
        ) -> impl FnMut(Vec<NodeId>, Option<(&'static str, NodeId)>) + '_ {
            move |children, close| {
                if let Some((tag, id)) = close {
                    stack.push(Step::Close(tag, id));
                }
                stack.extend(children.into_iter().rev().map(Step::Open));
            }
        }
    }

    fn comment(&self, comment: &str) -> String {
        match read_comment(comment) {
            Comment::OutlookBranch(inner) => {
                let text = crate::text::html_to_text(inner);
                if text.trim().is_empty() {
                    String::new()
                } else {
                    mark("Outlook only", &text)
                }
            }
            Comment::BranchSyntax => String::new(),
            Comment::Text(text) => mark("comment", text),
        }
    }

    /// Writes element `id`'s start, its machine texts, and queues its children and end.
    fn element(
        &self,
        id: NodeId,
        out: &mut String,
        push: &mut impl FnMut(Vec<NodeId>, Option<(&'static str, NodeId)>),
    ) {
        let dom = self.dom;
        let tag = dom.tag(id).unwrap_or("");
        let children = dom.nodes[id].children.clone();
        match tag {
            "style" => return,
            "script" => {
                let text = text_of(dom, id);
                if !text.trim().is_empty() {
                    out.push_str(&mark("script, never run", &text));
                }
                return;
            }
            "title" => {
                out.push_str(&mark("<title>", &text_of(dom, id)));
                return;
            }
            "template" => {
                out.push_str(&mark("inside a <template>", ""));
                let contents = self
                    .templates
                    .get(&id)
                    .map(|&c| dom.nodes[c].children.clone());
                out.push_str("<div>");
                push(contents.unwrap_or_default(), Some(("div", id)));
                return;
            }
            "noscript" => {
                out.push_str(&mark("<noscript>", ""));
                out.push_str("<div>");
                push(children, Some(("div", id)));
                return;
            }
            "input"
                if dom
                    .attr(id, "type")
                    .is_some_and(|t| t.eq_ignore_ascii_case("hidden")) =>
            {
                out.push_str(&mark(
                    "hidden form field",
                    dom.attr(id, "value").unwrap_or(""),
                ));
                return;
            }
            "meta" => {
                if let Some(content) = dom.attr(id, "content") {
                    out.push_str(&mark("<meta> content", content));
                }
                return;
            }
            _ => {}
        }
        let NodeData::Element { name, attrs } = &dom.nodes[id].data else {
            return;
        };
        out.push('<');
        out.push_str(&name.local);
        for a in attrs {
            let local: &str = &a.name.local;
            if HIDING_ATTRIBUTES.contains(&local) || a.name.ns != html5ever::ns!() {
                continue;
            }
            out.push_str(&format!(" {local}=\"{}\"", escape_html(&a.value)));
        }
        if tag == "details" && dom.attr(id, "open").is_none() {
            out.push_str(" open");
        }
        out.push('>');
        for (before, content) in self.generated.get(&id).into_iter().flatten() {
            if *before {
                out.push_str(&mark("added by a ::before rule", content));
            }
        }
        for (attribute, source) in MACHINE_ATTRIBUTES {
            if let Some(value) = dom.attr(id, attribute).filter(|v| !v.trim().is_empty()) {
                out.push_str(&mark(source, value));
            }
        }
        if !crate::dom::is_void(tag) {
            push(children, Some((static_tag(tag), id)));
        }
    }
}

fn text_of(dom: &Dom, id: NodeId) -> String {
    dom.texts_under(id, |_| false).concat()
}

/// The end tag to write: the element's own name when it is a known one, else `span` (the
/// sanitizer drops unknown elements and keeps their text either way).
fn static_tag(tag: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "a",
        "abbr",
        "address",
        "article",
        "aside",
        "b",
        "bdi",
        "bdo",
        "blockquote",
        "body",
        "caption",
        "center",
        "cite",
        "code",
        "dd",
        "del",
        "details",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "font",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "html",
        "i",
        "ins",
        "kbd",
        "li",
        "main",
        "map",
        "mark",
        "nav",
        "ol",
        "p",
        "pre",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "section",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "time",
        "tr",
        "tt",
        "u",
        "ul",
        "var",
        "object",
        "video",
        "audio",
        "canvas",
        "iframe",
        "form",
        "label",
        "button",
        "select",
        "option",
        "textarea",
        "fieldset",
        "legend",
    ];
    KNOWN.iter().find(|k| **k == tag).copied().unwrap_or("span")
}
