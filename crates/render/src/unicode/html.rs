//! The HTML body's invisible characters (in every text node and in the attributes programs
//! read) and its elements that reverse what is shown: `<bdo dir=rtl>`, a `bidi-override`
//! style, or `dir=rtl` on numbers with no right-to-left letter.

use std::collections::BTreeMap;

use super::{describe, find, has_rtl, is_rtl_letter, InvisibleCharacters};
use crate::dom::{Dom, NodeData, NodeId};

/// Attributes whose text a program (screen reader, assistant, search index) reads.
const READ_ATTRIBUTES: &[&str] = &[
    "alt",
    "title",
    "aria-label",
    "aria-description",
    "placeholder",
    "summary",
    "content",
];

/// Elements whose text is no one's reading of the message.
fn not_text(tag: &str) -> bool {
    matches!(tag, "style" | "script")
}

/// The node ids of the document in document order.
pub(crate) fn document_order(dom: &Dom) -> Vec<NodeId> {
    let mut order = Vec::with_capacity(dom.nodes.len());
    let mut stack = vec![0];
    while let Some(id) = stack.pop() {
        order.push(id);
        stack.extend(dom.nodes[id].children.iter().rev());
    }
    order
}

/// The text of `id` and its descendants.
fn text_of(dom: &Dom, id: NodeId) -> String {
    dom.texts_under(id, not_text).concat()
}

/// Finds the HTML body's invisible characters and reversing elements.
pub(crate) fn scan_html(dom: &Dom) -> Option<InvisibleCharacters> {
    let order = document_order(dom);
    let mut text = String::new();
    let mut attributes = Vec::new();
    let mut reordering = Vec::new();
    for &id in &order {
        match &dom.nodes[id].data {
            NodeData::Text(t) => {
                let hidden_parent = dom.nodes[id]
                    .parent
                    .and_then(|p| dom.tag(p))
                    .is_some_and(not_text);
                if !hidden_parent {
                    text.push_str(t);
                }
            }
            NodeData::Element { .. } => {
                for attr in READ_ATTRIBUTES {
                    if let Some(value) = dom.attr(id, attr) {
                        attributes.push(value.to_owned());
                    }
                }
                if let Some(found) = reorders(dom, id) {
                    reordering.push(found);
                }
            }
            _ => {}
        }
    }
    let rtl = has_rtl(&text);
    let mut found: BTreeMap<char, usize> = find(&text, rtl);
    for value in &attributes {
        for (c, n) in find(value, rtl || has_rtl(value)) {
            *found.entry(c).or_insert(0) += n;
        }
    }
    let mut described = describe(&found);
    described.extend(reordering);
    (!described.is_empty()).then(|| InvisibleCharacters {
        place: "the HTML body".into(),
        found: described,
    })
}

/// What element `id` does to the order of its text, when it reverses left-to-right text or
/// numbers: `<bdo dir=rtl>` shows "12345678" where programs read "87654321".
fn reorders(dom: &Dom, id: NodeId) -> Option<String> {
    let tag = dom.tag(id)?;
    let style = dom
        .attr(id, "style")
        .unwrap_or("")
        .to_ascii_lowercase()
        .replace(char::is_whitespace, "");
    let dir_rtl = dom
        .attr(id, "dir")
        .is_some_and(|d| d.trim().eq_ignore_ascii_case("rtl"))
        || style.contains("direction:rtl");
    if !dir_rtl {
        return None;
    }
    let overrides =
        tag == "bdo" || style.contains("bidi-override") || style.contains("isolate-override");
    let text = text_of(dom, id);
    let logical = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if logical.is_empty() || has_rtl(&logical) {
        return None;
    }
    let shown: String = if overrides {
        logical.chars().rev().collect()
    } else {
        // Without an override only the order of number groups changes in a right-to-left
        // paragraph: "1234 5678" shows as "5678 1234".
        let groups = logical
            .split(|c: char| !c.is_ascii_digit())
            .filter(|g| !g.is_empty())
            .count();
        let letters = logical
            .chars()
            .any(|c| c.is_alphabetic() && !is_rtl_letter(c));
        if groups < 2 || letters {
            return None;
        }
        logical.split(' ').rev().collect::<Vec<_>>().join(" ")
    };
    if shown == logical {
        return None;
    }
    let what = if tag == "bdo" {
        "<bdo dir=rtl>".to_owned()
    } else if overrides {
        format!("<{tag}> with a bidi-override style")
    } else {
        format!("<{tag} dir=rtl>")
    };
    Some(format!(
        "{what} shows \u{201c}{}\u{201d} where programs read \u{201c}{}\u{201d}",
        crate::text::excerpt(&shown, 60),
        crate::text::excerpt(&logical, 60)
    ))
}
