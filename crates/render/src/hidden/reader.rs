//! The walk over a draft's HTML: the reader that follows each element's inherited style in both
//! worlds (recipient and review), collects hidden passages and the text a recipient sees.

use super::cascade::{text_hiding, AppliedRule, Cascade, Inherited, World};
use super::reading::{HiddenPassage, HtmlReading};
use crate::dom::{Dom, NodeData, NodeId};

struct Frame {
    recipient: Inherited,
    review: Inherited,
}

/// Elements whose content is never body text.
fn never_text(tag: &str) -> bool {
    matches!(
        tag,
        "head" | "title" | "script" | "style" | "template" | "meta" | "link" | "xml"
    )
}

fn is_block(tag: &str) -> bool {
    matches!(
        tag,
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
            | "tbody"
            | "thead"
            | "tfoot"
            | "blockquote"
            | "pre"
            | "ul"
            | "ol"
            | "dl"
            | "dt"
            | "dd"
            | "hr"
            | "center"
            | "section"
            | "article"
            | "header"
            | "footer"
            | "address"
            | "form"
            | "fieldset"
            | "figure"
            | "figcaption"
            | "body"
    )
}

/// A hidden passage being collected.
struct Open {
    technique: String,
    shown_in_review: bool,
    only_recipients_see: bool,
    text: String,
}

pub(super) struct Reader<'d> {
    /// The element tree and the rules that style it in each world.
    cascade: Cascade<'d>,
    passages: Vec<HiddenPassage>,
    open: Option<Open>,
    visible: String,
    /// A block boundary or line break passed since the last text.
    pending_break: bool,
    /// Visible words have been seen (hidden text before them is a preheader).
    seen_visible: bool,
}

impl<'d> Reader<'d> {
    pub(super) fn new(
        dom: &'d Dom,
        rules: Vec<AppliedRule>,
        review_rules: Vec<AppliedRule>,
    ) -> Self {
        Reader {
            cascade: Cascade {
                dom,
                rules,
                review_rules,
            },
            passages: Vec::new(),
            open: None,
            visible: String::new(),
            pending_break: false,
            seen_visible: false,
        }
    }

    pub(super) fn read(mut self) -> HtmlReading {
        let dom = self.cascade.dom;
        // An explicit stack: a hostile draft may nest elements tens of thousands deep.
        enum Step {
            Enter(NodeId, usize),
            Leave(bool),
        }
        let page = Inherited::page();
        let mut frames: Vec<Frame> = vec![Frame {
            recipient: page.clone(),
            review: page,
        }];
        let mut stack: Vec<Step> = dom.nodes[0]
            .children
            .iter()
            .rev()
            .map(|&c| Step::Enter(c, 0))
            .collect();
        while let Some(step) = stack.pop() {
            match step {
                Step::Leave(block) => {
                    frames.pop();
                    if block {
                        self.pending_break = true;
                    }
                }
                Step::Enter(id, parent_frame) => match &dom.nodes[id].data {
                    NodeData::Text(text) => {
                        let frame = &frames[parent_frame];
                        self.text(text, frame);
                    }
                    NodeData::Element { .. } => {
                        let tag = dom.tag(id).unwrap_or("");
                        if never_text(tag) {
                            continue;
                        }
                        if tag == "br" {
                            self.pending_break = true;
                            continue;
                        }
                        let parent = &frames[parent_frame];
                        let recipient =
                            self.cascade
                                .inherit(id, tag, &parent.recipient, World::Recipient);
                        let review = self.cascade.inherit(id, tag, &parent.review, World::Review);
                        let block = is_block(tag) || matches!(tag, "td" | "th");
                        if block {
                            self.pending_break = true;
                        }
                        if tag == "li" {
                            self.list_number(id);
                        }
                        frames.truncate(parent_frame + 1);
                        frames.push(Frame { recipient, review });
                        let me = frames.len() - 1;
                        stack.push(Step::Leave(block));
                        stack.extend(
                            dom.nodes[id]
                                .children
                                .iter()
                                .rev()
                                .map(|&c| Step::Enter(c, me)),
                        );
                    }
                    _ => {}
                },
            }
        }
        self.close();
        let visible = self
            .visible
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        HtmlReading {
            passages: self.passages,
            visible_text: visible,
            unverifiable: Vec::new(),
            machine: Vec::new(),
            review_html: None,
        }
    }

    /// Writes `1. ` before the items of an ordered list, as text renderings of HTML do.
    fn list_number(&mut self, li: NodeId) {
        let Some(parent) = self.cascade.dom.nodes[li].parent else {
            return;
        };
        if self.cascade.dom.tag(parent) != Some("ol") {
            return;
        }
        let start: usize = self
            .cascade
            .dom
            .attr(parent, "start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let index = self.cascade.dom.nodes[parent]
            .children
            .iter()
            .filter(|&&c| self.cascade.dom.tag(c) == Some("li"))
            .position(|&c| c == li)
            .unwrap_or(0);
        self.visible.push('\n');
        self.visible.push_str(&format!("{}. ", start + index));
        self.pending_break = false;
    }

    fn text(&mut self, text: &str, frame: &Frame) {
        let recipient = text_hiding(&frame.recipient);
        let review = text_hiding(&frame.review);
        match recipient {
            Some(technique) => {
                if !has_words(text) {
                    if let Some(open) = &mut self.open {
                        open.text.push(' ');
                    }
                    return;
                }
                let technique = if self.seen_visible {
                    technique
                } else {
                    format!("preheader, {technique}")
                };
                let shown_in_review = review.is_none();
                let same = self.open.as_ref().is_some_and(|o| {
                    o.technique == technique
                        && o.shown_in_review == shown_in_review
                        && !o.only_recipients_see
                });
                if !same {
                    self.close();
                    self.open = Some(Open {
                        technique,
                        shown_in_review,
                        only_recipients_see: false,
                        text: String::new(),
                    });
                }
                if let Some(open) = &mut self.open {
                    if self.pending_break {
                        open.text.push(' ');
                    }
                    open.text.push_str(text);
                }
                self.pending_break = false;
            }
            None if review.is_some() && has_words(text) => {
                // Shown to recipients by a <style> rule over what this review hides.
                let technique = format!(
                    "hidden here by {}, shown to recipients by a <style> rule",
                    review.unwrap_or_default()
                );
                let same = self
                    .open
                    .as_ref()
                    .is_some_and(|o| o.technique == technique && o.only_recipients_see);
                if !same {
                    self.close();
                    self.open = Some(Open {
                        technique,
                        shown_in_review: false,
                        only_recipients_see: true,
                        text: String::new(),
                    });
                }
                if let Some(open) = &mut self.open {
                    open.text.push(' ');
                    open.text.push_str(text);
                }
                if self.pending_break {
                    self.visible.push('\n');
                    self.pending_break = false;
                }
                self.visible.push_str(text);
            }
            None => {
                if self.pending_break {
                    self.visible.push('\n');
                    self.pending_break = false;
                }
                self.visible.push_str(text);
                if has_words(text) {
                    self.close();
                    self.seen_visible = true;
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(open) = self.open.take() {
            let text: String = open
                .text
                .chars()
                .filter(|&c| c.is_whitespace() || !is_invisible(c))
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if has_words(&text) {
                self.passages.push(HiddenPassage {
                    text,
                    technique: open.technique,
                    shown_in_review: open.shown_in_review,
                    only_recipients_see: open.only_recipients_see,
                });
            }
        }
    }
}

/// Characters that take no visible room: text made only of them (and whitespace) is padding,
/// such as a preheader's `&zwnj;&nbsp;` filler, not hidden words.
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{00ad}' | '\u{034f}'
        )
}

fn has_words(text: &str) -> bool {
    text.chars().any(|c| !is_invisible(c))
}
