//! What machines read: every text a program could read from the draft that the normal
//! rendering does not show — image `alt`, `title` and ARIA labels, comments, Outlook-only
//! branches, `<noscript>` and `<template>`, a closed `<details>`, a `<title>` in the body,
//! JSON-LD, fallback content, other alternatives of the body, nested messages and headers that
//! only some programs display.
//!
//! Short labels (a logo's "Acme", an emoji sent as an image) and text the page shows anyway (a
//! bulletproof button's Outlook twin) are listed but not flagged; anything else that carries
//! words is flagged: an assistant reading the message reads it, the owner does not.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::dom::{Dom, NodeData, NodeId};
use crate::flag::{Flag, FlagKind};
use crate::text::excerpt;

/// One text a program reads that the rendering does not show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MachineText {
    /// Where it is, in a few words: `image alt text`, `comment`, `Outlook-only branch`.
    pub source: String,
    /// The text, whitespace collapsed (at most 2,000 characters).
    pub text: String,
    /// It carries words that neither a short label nor the shown text explains.
    pub flagged: bool,
}

/// The source of a plain comment's text.
const COMMENT: &str = "comment";

/// The source of the text of Outlook's conditional comments.
pub(crate) const OUTLOOK_BRANCH: &str = "Outlook-only branch";

/// The longest text kept per entry.
const MAX_TEXT: usize = 2_000;
/// The most entries kept.
const MAX_ENTRIES: usize = 200;
/// A label of at most this many words (an alt, a title) is what labels are.
const LABEL_WORDS: usize = 12;

/// The lists of texts machines read, and the words a recipient sees to explain them.
pub(crate) struct MachineReading<'v> {
    shown: HashSet<String>,
    shown_text: &'v str,
    pub found: Vec<MachineText>,
}

impl<'v> MachineReading<'v> {
    /// Starts a reading against the text the recipient sees.
    pub fn new(shown_text: &'v str) -> Self {
        MachineReading {
            shown: words(shown_text).collect(),
            shown_text,
            found: Vec::new(),
        }
    }

    /// Adds `text` from `source`; `label`: judged as a label (short ones pass).
    pub fn add(&mut self, source: &str, text: &str, label: bool) {
        self.add_beside(source, text, label, None);
    }

    /// As [`Self::add`], for a label on a link: an address or URL that is the link's own
    /// (Outlook titles a blocked link "blocked::mailto:…") explains itself.
    fn add_beside(&mut self, source: &str, text: &str, label: bool, link: Option<&str>) {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() || self.found.len() >= MAX_ENTRIES {
            return;
        }
        let unexplained: Vec<String> = words(&text).filter(|w| !self.shown.contains(w)).collect();
        // A comment carries a sentence, not a marker ("end of AOLMsgPart…", "converted from
        // rtf"): at least four unexplained words of three letters or more.
        let sentence = unexplained
            .iter()
            .filter(|w| w.chars().count() >= 3 && w.chars().all(char::is_alphabetic))
            .count()
            >= 4;
        let own_link = link.is_some_and(|href| {
            let href = href.trim();
            let bare = href.strip_prefix("mailto:").unwrap_or(href);
            !bare.is_empty() && text.contains(bare)
        });
        let addresses = (text.contains("://") || text.contains('@')) && !own_link;
        let flagged = if label {
            (words(&text).count() > LABEL_WORDS || addresses) && !self.shown_text.contains(&text)
        } else if source == COMMENT {
            sentence
        } else {
            !unexplained.is_empty()
        };
        if self
            .found
            .iter()
            .any(|m| m.source == source && m.text == text)
        {
            return;
        }
        self.found.push(MachineText {
            source: source.to_owned(),
            text: excerpt(&text, MAX_TEXT),
            flagged,
        });
    }

    /// Reads the HTML document's machine-only texts.
    pub fn read_dom(&mut self, dom: &Dom) {
        for id in 0..dom.nodes.len() {
            match &dom.nodes[id].data {
                NodeData::Comment(comment) => self.comment(comment),
                NodeData::Element { .. } => self.element(dom, id),
                _ => {}
            }
        }
        for &(_, contents) in &dom.templates {
            self.add("inside a <template>", &subtree_text(dom, contents), false);
        }
    }

    fn comment(&mut self, comment: &str) {
        match read_comment(comment) {
            Comment::OutlookBranch(inner) => {
                self.add(OUTLOOK_BRANCH, &shown_text_of(&Dom::parse(inner)), false)
            }
            Comment::BranchSyntax => {}
            // Markup commented out is read for its words.
            Comment::Text(text) if text.contains('<') => {
                self.add(COMMENT, &shown_text_of(&Dom::parse(text)), false)
            }
            Comment::Text(text) => self.add(COMMENT, text, false),
        }
    }

    fn element(&mut self, dom: &Dom, id: NodeId) {
        let tag = dom.tag(id).unwrap_or("");
        for (attribute, source) in [
            ("alt", "image alt text"),
            ("title", "title attribute"),
            ("aria-label", "aria-label"),
            ("aria-description", "aria-description"),
            ("aria-roledescription", "aria-roledescription"),
            ("aria-placeholder", "aria-placeholder"),
            ("placeholder", "placeholder"),
        ] {
            if let Some(value) = dom.attr(id, attribute) {
                self.add_beside(source, value, true, dom.attr(id, "href"));
            }
        }
        let hidden_input = tag == "input"
            && dom
                .attr(id, "type")
                .is_some_and(|t| t.eq_ignore_ascii_case("hidden"));
        if hidden_input {
            if let Some(value) = dom.attr(id, "value") {
                self.add("hidden form field", value, false);
            }
        }
        // Microdata and named metadata; `http-equiv` and `charset` describe the document.
        let names_something = ["itemprop", "name", "property"]
            .iter()
            .any(|a| dom.attr(id, a).is_some());
        if tag == "meta" && names_something && in_body(dom, id) {
            if let Some(content) = dom.attr(id, "content") {
                self.add("<meta> content in the body", content, false);
            }
        }
        match tag {
            "title" if in_body(dom, id) => {
                self.add("<title> in the body", &subtree_text(dom, id), false)
            }
            "script" => {
                let kind = dom.attr(id, "type").unwrap_or("").to_ascii_lowercase();
                if kind.contains("ld+json") || kind.contains("json") {
                    // Gmail turns schema.org markup into buttons and summaries.
                    self.add("JSON-LD (structured data)", &subtree_text(dom, id), false);
                } else {
                    self.add("<script> (never run)", &subtree_text(dom, id), false);
                }
            }
            "noscript" => self.add("<noscript>", &subtree_text(dom, id), false),
            "details" if dom.attr(id, "open").is_none() => {
                let folded: String = dom.nodes[id]
                    .children
                    .iter()
                    .filter(|&&c| dom.tag(c) != Some("summary"))
                    .map(|&c| subtree_text(dom, c))
                    .collect::<Vec<_>>()
                    .join(" ");
                self.add("inside a closed <details>", &folded, false);
            }
            "object" | "video" | "audio" | "canvas" | "iframe" | "embed" => {
                self.add(
                    &format!("fallback content of <{tag}>"),
                    &subtree_text(dom, id),
                    false,
                );
            }
            _ => {}
        }
    }
}

/// What a comment is to mail programs.
pub(crate) enum Comment<'c> {
    /// `[if mso]>…<![endif]`: markup only Outlook renders (the markup inside).
    OutlookBranch(&'c str),
    /// `<!--<![endif]-->`, `<!--[if !mso]><!-->`: the syntax of branches, no text.
    BranchSyntax,
    /// A plain comment (trimmed).
    Text(&'c str),
}

/// Reads `comment` (a comment node's text).
pub(crate) fn read_comment(comment: &str) -> Comment<'_> {
    let trimmed = comment.trim();
    if let Some(rest) = trimmed.strip_prefix("[if") {
        let inner = rest.split_once(']').map_or("", |(_, r)| r);
        let inner = inner.strip_prefix('>').unwrap_or(inner);
        return Comment::OutlookBranch(inner.strip_suffix("<![endif]").unwrap_or(inner));
    }
    if trimmed.is_empty() || trimmed.contains("[endif]") || trimmed.starts_with("<!") {
        return Comment::BranchSyntax;
    }
    Comment::Text(trimmed)
}

/// The text a document shows, Office's XML data islands (`<xml><o:PixelsPerInch>96…`) left out.
fn shown_text_of(dom: &Dom) -> String {
    dom.texts_under(0, |tag| matches!(tag, "xml" | "style" | "script"))
        .join(" ")
}

/// Every text node under `id`, space-joined.
fn subtree_text(dom: &Dom, id: NodeId) -> String {
    dom.texts_under(id, |_| false).join(" ")
}

fn in_body(dom: &Dom, id: NodeId) -> bool {
    let mut at = dom.nodes[id].parent;
    while let Some(p) = at {
        if dom.tag(p) == Some("body") {
            return true;
        }
        at = dom.nodes[p].parent;
    }
    false
}

/// Lower-case words of two or more letters or digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
}

/// The `machine_text` flag, when a flagged entry exists.
pub(crate) fn flag(found: &[MachineText]) -> Option<Flag> {
    let flagged: Vec<&MachineText> = found.iter().filter(|m| m.flagged).collect();
    let first = flagged.first()?;
    let listed: Vec<String> = flagged
        .iter()
        .take(4)
        .map(|m| format!("{}: \u{201c}{}\u{201d}", m.source, excerpt(&m.text, 100)))
        .collect();
    let more = flagged.len().saturating_sub(4);
    Some(Flag {
        kind: FlagKind::MachineText,
        about: first.source.clone(),
        explanation: format!(
            "The draft carries words that mail programs, assistants and search read but this \
             review does not show: {}{}. See \u{201c}What machines read\u{201d}.",
            listed.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ),
        recipients: Vec::new(),
    })
}

impl MachineReading<'_> {
    /// Reads the message's parts and headers that some programs show and the review does not:
    /// other alternatives of the body, nested messages, display-only headers.
    pub fn read_parts(&mut self, message: &mail_parser::Message<'_>) {
        use mail_parser::{MimeHeaders, PartType};
        let bodies: HashSet<u32> = message
            .html_body
            .iter()
            .chain(&message.text_body)
            .copied()
            .collect();
        for (index, part) in message.parts.iter().enumerate() {
            if bodies.contains(&(index as u32)) || part.attachment_name().is_some() {
                continue;
            }
            let kind = part
                .content_type()
                .map(|ct| {
                    format!(
                        "{}/{}",
                        ct.ctype().to_ascii_lowercase(),
                        ct.subtype().unwrap_or("").to_ascii_lowercase()
                    )
                })
                .unwrap_or_default();
            match &part.body {
                PartType::Text(text)
                    if kind.starts_with("text/")
                        && !matches!(kind.as_str(), "text/calendar" | "text/rfc822-headers") =>
                {
                    self.add(
                        &format!("another version of the body ({kind}) that some programs show"),
                        text,
                        false,
                    );
                }
                PartType::Html(html) => self.add(
                    &format!("another version of the body ({kind}) that some programs show"),
                    &crate::text::html_to_text(html),
                    false,
                ),
                PartType::Message(nested) => {
                    let text = nested
                        .body_text(0)
                        .map(|t| t.into_owned())
                        .or_else(|| nested.body_html(0).map(|h| crate::text::html_to_text(&h)))
                        .unwrap_or_default();
                    let subject = nested.subject().unwrap_or("");
                    self.add(
                        "a message inside the draft (message/rfc822)",
                        &format!("{subject} {text}"),
                        false,
                    );
                }
                _ => {}
            }
        }
        // Headers some programs display as banners or keywords, which no review pane shows.
        for name in ["X-Message-Flag", "Comments", "Keywords"] {
            if let Some(value) = message.header_raw(name) {
                self.add(&format!("{name} header"), value, false);
            }
        }
    }
}
