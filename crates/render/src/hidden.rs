//! Hidden text: words in a draft's HTML that a recipient's mail program does not display, yet
//! that their assistant, search index or plain-text view reads.
//!
//! The draft's own HTML is read before sanitizing, in two ways at once:
//!
//! - as a recipient's mail program shows it: `<style>` rules, inline styles, the `hidden`
//!   attribute and Outlook's `mso-hide` all count;
//! - as this review shows it: the sanitizer keeps inline styles but drops `<style>` and the
//!   `hidden` attribute, and the review frame is a browser, which ignores `mso-hide`.
//!
//! Text hidden from recipients is reported with how it is hidden and whether the owner sees it
//! in the review. Inline hiding is invisible to both; class-based hiding shows the owner text
//! recipients never see. The same walk yields the text a recipient sees, which the
//! alternatives check compares with the plain-text part.

use serde::{Deserialize, Serialize};

use super::dom::{Dom, NodeData, NodeId};
use crate::flag::{Flag, FlagKind};
use crate::machine::{MachineReading, MachineText};
use crate::styling::media::{DESKTOP_WIDTH, PHONE_WIDTH};
use crate::styling::selector::{self, Complex, Selector};
use crate::styling::sheet::{self, Declaration, Sheet};
use crate::styling::values::{self as css, Colour};
use crate::styling::{self as styling, UnverifiableStyle};
use crate::text::excerpt;

/// A passage of the HTML body that recipients' mail programs do not display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HiddenPassage {
    /// The hidden words, whitespace collapsed.
    pub text: String,
    /// How they are hidden, in short: `display:none`, `white on white`,
    /// `<style> rule .x: display:none`.
    pub technique: String,
    /// The review shows these words (the sanitizer dropped what hides them), although
    /// recipients do not see them.
    pub shown_in_review: bool,
    /// The other way round: recipients see these words (a `<style>` rule shows what an inline
    /// style hides), and this review does not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_recipients_see: bool,
}

/// What reading the draft's HTML found.
#[derive(Debug, Default)]
pub(crate) struct HtmlReading {
    /// Hidden passages, in document order.
    pub passages: Vec<HiddenPassage>,
    /// The text a recipient sees: blocks on their own lines, hidden text left out.
    pub visible_text: String,
    /// Styling that could change what recipients see and that is not evaluated.
    pub unverifiable: Vec<UnverifiableStyle>,
    /// Texts programs read that the rendering does not show (alt, comments, …).
    pub machine: Vec<MachineText>,
    /// The HTML to sanitize for the review: the draft's own, with the `<style>` rules that apply
    /// on a desktop written into `style` attributes; `None` when it has no rules.
    pub review_html: Option<String>,
}

/// A `<style>` rule as the cascade uses it: one selector that can match.
#[derive(Clone)]
pub(crate) struct AppliedRule {
    selector: Complex,
    declarations: Vec<Declaration>,
}

/// The rules of `sheet` that apply on a screen `width` px wide.
fn rules_at(sheet: &Sheet, width: f32) -> Vec<AppliedRule> {
    let mut rules = Vec::new();
    for rule in sheet.rules.iter().filter(|r| r.condition.applies_at(width)) {
        for s in selector::parse_list(&rule.prelude) {
            if let Selector::Static(selector) = s {
                rules.push(AppliedRule {
                    selector,
                    declarations: rule.declarations.clone(),
                });
            }
        }
    }
    rules
}

/// `text` with runs of whitespace made one space.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads `html` (a draft's HTML body, unsanitized) as it shows on a desktop and on a phone.
pub(crate) fn read_html(html: &str) -> HtmlReading {
    let dom = Dom::parse(html);
    let sheet = sheet::parse_sheet(&styling::style_text(&dom));
    let unverifiable = styling::audit(&dom, &sheet);
    let desktop = rules_at(&sheet, DESKTOP_WIDTH);
    let phone = rules_at(&sheet, PHONE_WIDTH);
    let narrow_differs = sheet
        .rules
        .iter()
        .any(|r| r.condition.applies_at(DESKTOP_WIDTH) != r.condition.applies_at(PHONE_WIDTH));
    let mut reading = Reader::new(&dom, desktop.clone(), desktop.clone()).read();
    if narrow_differs {
        // Text is hidden from recipients when no screen shows it: what a phone shows and a
        // desktop hides (a mobile-only block) is seen, and so is the reverse. What recipients
        // see and this review does not counts on either screen.
        let on_phones = Reader::new(&dom, phone, desktop).read();
        let phone_shows = squeeze(&on_phones.visible_text);
        reading
            .passages
            .retain(|p| p.only_recipients_see || !phone_shows.contains(&squeeze(&p.text)));
        for mut passage in on_phones.passages {
            let known = reading.passages.iter().any(|p| p.text == passage.text);
            if passage.only_recipients_see && !known {
                passage.technique = format!("on narrow screens, {}", passage.technique);
                reading.passages.push(passage);
            }
        }
    }
    reading.unverifiable = unverifiable;
    // What only Outlook hides, every other program shows.
    let mut shown = reading.visible_text.clone();
    for p in reading
        .passages
        .iter()
        .filter(|p| p.technique.contains("mso-hide"))
    {
        shown.push('\n');
        shown.push_str(&p.text);
    }
    let mut machine = MachineReading::new(&shown);
    machine.read_dom(&dom);
    // A bulletproof button: the link hidden from Outlook (mso-hide) has its twin in the
    // Outlook-only branch, so every recipient sees the words.
    let outlook_words: String = machine
        .found
        .iter()
        .filter(|m| m.source == crate::machine::OUTLOOK_BRANCH)
        .map(|m| m.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    reading.passages.retain(|p| {
        !(p.technique.contains("mso-hide") && squeeze(&outlook_words).contains(&squeeze(&p.text)))
    });
    reading.machine = machine.found;
    let mut review = dom;
    if !sheet.rules.is_empty() {
        styling::inline::inline_rules(&mut review, &sheet);
        reading.review_html = Some(review.to_html());
    }
    // Deny by default: a sheet too large to evaluate in full is styling not evaluated.
    if review.matching_was_cut() {
        reading.unverifiable.push(UnverifiableStyle {
            place: "<style> sheet".to_owned(),
            what: "more style rules and elements than Countersign evaluates: past its budget \
                   of selector tests, rules were not applied"
                .to_owned(),
        });
    }
    reading
}

/// The `hidden_text` flag for these passages, if any.
pub(crate) fn flag(passages: &[HiddenPassage]) -> Option<Flag> {
    let first = passages.first()?;
    let quoted = |p: &HiddenPassage| {
        format!(
            "\u{201c}{}\u{201d} ({})",
            excerpt(&p.text, 120),
            p.technique
        )
    };
    let unseen: Vec<String> = passages
        .iter()
        .filter(|p| !p.shown_in_review)
        .map(quoted)
        .collect();
    let seen: Vec<String> = passages
        .iter()
        .filter(|p| p.shown_in_review)
        .map(quoted)
        .collect();
    let mut sentences = Vec::new();
    if !unseen.is_empty() {
        sentences.push(format!(
            "The HTML hides {}: recipients' assistants, search and plain-text views read it, \
             but you don't see it here.",
            unseen.join("; ")
        ));
    }
    if !seen.is_empty() {
        sentences.push(format!(
            "You see {} here, but recipients' mail programs hide it.",
            seen.join("; ")
        ));
    }
    Some(Flag {
        kind: FlagKind::HiddenText,
        about: excerpt(&first.text, 40),
        explanation: sentences.join(" "),
        recipients: Vec::new(),
    })
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

/// Which reading of the HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum World {
    /// A recipient's mail program.
    Recipient,
    /// The review frame, after sanitizing.
    Review,
}

/// Where a winning declaration came from, for naming the technique.
#[derive(Debug, Clone)]
enum Origin {
    Inline,
    Attribute,
    Rule(String),
}

/// Style inherited down the tree in one world.
#[derive(Debug, Clone, Default)]
struct Inherited {
    /// The outermost hiding element's technique: everything under it is hidden.
    hidden: Option<String>,
    /// The text colour and where it was set; `None`: the default.
    colour: Option<(Colour, Origin)>,
    /// Inside a link (whose default colour is blue) with no colour set inside it.
    in_link: bool,
    /// The nearest background colour; `None`: the page's white.
    background: Option<(Colour, Origin)>,
    /// A background image is painted under the text: its colour cannot be judged.
    background_image: bool,
    /// The product of the opacities set on the way down.
    opacity: f32,
    /// The font size (px) and where it was set; `None`: the default size.
    font_size: Option<(f32, Origin)>,
}

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

struct Reader<'d> {
    dom: &'d Dom,
    /// The rules recipients' programs apply on this screen.
    rules: Vec<AppliedRule>,
    /// The rules the review applies (written into `style` attributes): a desktop's.
    review_rules: Vec<AppliedRule>,
    passages: Vec<HiddenPassage>,
    open: Option<Open>,
    visible: String,
    /// A block boundary or line break passed since the last text.
    pending_break: bool,
    /// Visible words have been seen (hidden text before them is a preheader).
    seen_visible: bool,
}

impl<'d> Reader<'d> {
    fn new(dom: &'d Dom, rules: Vec<AppliedRule>, review_rules: Vec<AppliedRule>) -> Self {
        Reader {
            dom,
            rules,
            review_rules,
            passages: Vec::new(),
            open: None,
            visible: String::new(),
            pending_break: false,
            seen_visible: false,
        }
    }

    fn read(mut self) -> HtmlReading {
        let dom = self.dom;
        // An explicit stack: a hostile draft may nest elements tens of thousands deep.
        enum Step {
            Enter(NodeId, usize),
            Leave(bool),
        }
        let page = Inherited {
            opacity: 1.0,
            ..Inherited::default()
        };
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
                        let recipient = self.inherit(id, tag, &parent.recipient, World::Recipient);
                        let review = self.inherit(id, tag, &parent.review, World::Review);
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
        let Some(parent) = self.dom.nodes[li].parent else {
            return;
        };
        if self.dom.tag(parent) != Some("ol") {
            return;
        }
        let start: usize = self
            .dom
            .attr(parent, "start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let index = self.dom.nodes[parent]
            .children
            .iter()
            .filter(|&&c| self.dom.tag(c) == Some("li"))
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

    /// The style element `id` passes down in `world`, given its parent's.
    fn inherit(&self, id: NodeId, tag: &str, parent: &Inherited, world: World) -> Inherited {
        let mut style = parent.clone();
        let declared = self.declarations(id, world);
        let get = |property: &str| find(&declared, property);
        if tag == "a" {
            style.in_link = true;
            style.colour = None;
        }
        if tag == "font" {
            if let Some(c) = self.dom.attr(id, "color").and_then(css::parse_colour) {
                style.colour = Some((c, Origin::Attribute));
            }
        }
        // <body text="…">: the page's text colour, as old mail programs write it.
        if tag == "body" {
            if let Some(c) = self.dom.attr(id, "text").and_then(css::parse_colour) {
                style.colour = Some((c, Origin::Attribute));
            }
        }
        // WebKit and Blink paint letters with -webkit-text-fill-color over `color`.
        for property in ["color", "-webkit-text-fill-color"] {
            if let Some((d, o)) = get(property) {
                if let Some(c) = css::parse_colour(&d.value) {
                    style.colour = Some((c, o.clone()));
                }
            }
        }
        if let Some((d, _)) = get("opacity") {
            if let Some(opacity) = css::opacity(&d.value) {
                style.opacity *= opacity;
            }
        }
        if let Some(attr) = self.dom.attr(id, "bgcolor") {
            if let Some(c) = css::parse_colour(attr).filter(|c| c.alpha > 0.5) {
                style.background = Some((c, Origin::Attribute));
            }
        }
        if self
            .dom
            .attr(id, "background")
            .is_some_and(|b| !b.trim().is_empty())
        {
            style.background_image = true;
        }
        for property in ["background", "background-color"] {
            if let Some((d, o)) = get(property) {
                let value = d.value.to_ascii_lowercase();
                let colour = if value.split_whitespace().any(|w| w == "currentcolor") {
                    // The text's own colour: whatever is written on it is invisible.
                    Some(style.colour.as_ref().map_or(Colour::BLACK, |(c, _)| *c))
                } else {
                    css::background_colour(&d.value)
                };
                if let Some(c) = colour.filter(|c| c.alpha > 0.5) {
                    style.background = Some((c, o.clone()));
                }
            }
        }
        if get("background-image").is_some_and(|(d, _)| d.value.contains("url("))
            || get("background").is_some_and(|(d, _)| {
                d.value.contains("url(") && css::gradient_colours(&d.value).is_none()
            })
        {
            style.background_image = true;
        }
        if let Some((d, o)) = get("font-size") {
            let v = d.value.trim();
            if let Some(size) = css::length_px(v) {
                style.font_size = Some((size, o.clone()));
            } else if v.ends_with('%') || v.ends_with("em") {
                // Relative to the parent: zero stays zero, anything else is readable.
                if !style.font_size.as_ref().is_some_and(|(s, _)| *s <= 1.0) {
                    style.font_size = None;
                }
            } else {
                style.font_size = None;
            }
        }
        if style.hidden.is_none() {
            style.hidden = self.hides(id, world, &declared);
        }
        style
    }

    /// How element `id` itself hides its content in `world`, if it does.
    fn hides(
        &self,
        id: NodeId,
        world: World,
        declared: &[(Declaration, Origin)],
    ) -> Option<String> {
        let value = |property: &str| {
            find(declared, property).map(|(d, o)| (d.value.to_ascii_lowercase(), o))
        };
        // Mail programs run no script, so they show <noscript>; the review's sanitizer drops it.
        if world == World::Review && self.dom.tag(id) == Some("noscript") {
            return Some("<noscript>, which this review leaves out".into());
        }
        // A `display` set by CSS overrides the attribute, as in browsers.
        if world == World::Recipient
            && self.dom.attr(id, "hidden").is_some()
            && value("display").is_none_or(|(v, _)| v.trim() == "none")
        {
            return Some("hidden attribute".into());
        }
        if let Some((v, o)) = value("display") {
            if v.trim() == "none" {
                return Some(named("display:none", o));
            }
        }
        if let Some((v, o)) = value("visibility") {
            if matches!(v.trim(), "hidden" | "collapse") {
                return Some(named(&format!("visibility:{}", v.trim()), o));
            }
        }
        if let Some((v, o)) = value("opacity") {
            let v = v.trim();
            let opacity = match v.strip_suffix('%') {
                Some(p) => p.trim().parse::<f32>().ok().map(|p| p / 100.0),
                None => v.parse::<f32>().ok(),
            };
            if opacity.is_some_and(|o| o <= 0.05) {
                return Some(named(&format!("opacity:{v}"), o));
            }
        }
        if let Some((v, o)) = value("transform") {
            let squeezed: String = v.chars().filter(|c| !c.is_whitespace()).collect();
            if squeezed.contains("scale(0)") || squeezed.contains("scale(0,0)") {
                return Some(named("transform:scale(0)", o));
            }
        }
        let overflow_hidden = ["overflow", "overflow-y", "overflow-x"]
            .iter()
            .any(|&p| value(p).is_some_and(|(v, _)| matches!(v.trim(), "hidden" | "clip")));
        if overflow_hidden {
            for property in ["max-height", "height", "line-height", "max-width", "width"] {
                if let Some((v, o)) = value(property) {
                    if css::length_px(&v).is_some_and(|px| px <= 0.0) {
                        return Some(named(
                            &format!("{property}:{} with overflow:hidden", v.trim()),
                            o,
                        ));
                    }
                }
            }
        }
        let positioned =
            value("position").is_some_and(|(v, _)| matches!(v.trim(), "absolute" | "fixed"));
        if positioned {
            for property in ["left", "top", "right"] {
                if let Some((v, o)) = value(property) {
                    if css::length_px(&v).is_some_and(|px| px <= -500.0) {
                        return Some(named(
                            &format!("off-screen position ({property}:{})", v.trim()),
                            o,
                        ));
                    }
                }
            }
            if let Some((v, o)) = value("clip") {
                if zero_area_rect(&v) {
                    return Some(named(&format!("clip:{}", v.trim()), o));
                }
            }
        }
        if let Some((v, o)) = value("text-indent") {
            if css::length_px(&v).is_some_and(|px| px <= -500.0) {
                return Some(named(&format!("text-indent:{}", v.trim()), o));
            }
        }
        if let Some((v, o)) = value("clip-path") {
            if clips_everything(&v) {
                return Some(named(&format!("clip-path:{}", v.trim()), o));
            }
        }
        // Only Outlook reads it; named last so a more general technique names the passage.
        if world == World::Recipient {
            if let Some((v, o)) = value("mso-hide") {
                if v.trim() == "all" {
                    return Some(named("mso-hide:all (Outlook hides it)", o));
                }
            }
        }
        None
    }

    /// The declarations that win for element `id` in `world`, one per property.
    fn declarations(&self, id: NodeId, world: World) -> Vec<(Declaration, Origin)> {
        // (important, inline, specificity, order) decides, as in the CSS cascade.
        let mut candidates: Vec<(Precedence, Declaration, Origin)> = Vec::new();
        let mut order = 0;
        let rules = match world {
            World::Recipient => &self.rules,
            World::Review => &self.review_rules,
        };
        for rule in rules {
            if self.dom.matching_was_cut() {
                break;
            }
            if rule.selector.matches(self.dom, id) {
                for d in &rule.declarations {
                    // The sanitizer drops a declaration written with escapes.
                    if world == World::Review && d.raw.contains('\\') {
                        continue;
                    }
                    order += 1;
                    candidates.push((
                        (d.important, false, rule.selector.specificity(), order),
                        d.clone(),
                        Origin::Rule(rule.selector.text.clone()),
                    ));
                }
            }
        }
        if let Some(inline) = self.dom.attr(id, "style") {
            let declarations = sheet::parse_inline(inline);
            for d in declarations {
                // Browsers read past comments and escapes inside a declaration, which the
                // review's sanitizer drops whole.
                if world == World::Review && (d.raw.contains("/*") || d.raw.contains('\\')) {
                    continue;
                }
                order += 1;
                candidates.push(((d.important, true, (0, 0, 0), order), d, Origin::Inline));
            }
        }
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        let mut winners: Vec<(Declaration, Origin)> = Vec::new();
        for (_, d, o) in candidates {
            if !winners.iter().any(|(w, _)| w.property == d.property) {
                winners.push((d, o));
            }
        }
        winners
    }
}

/// Whether text with this inherited style is hidden, and how.
fn text_hiding(style: &Inherited) -> Option<String> {
    if let Some(technique) = &style.hidden {
        return Some(technique.clone());
    }
    if let Some((size, origin)) = &style.font_size {
        if *size <= 1.0 {
            return Some(named(&format!("font-size:{}", px(*size)), origin));
        }
    }
    let (colour, colour_origin) = match &style.colour {
        Some((c, o)) => (*c, Some(o)),
        None if style.in_link => (Colour::LINK_BLUE, None),
        None => (Colour::BLACK, None),
    };
    let colour = Colour {
        alpha: colour.alpha * style.opacity,
        ..colour
    };
    if colour.alpha <= 0.05 {
        return Some(named(
            "transparent text",
            colour_origin.unwrap_or(&Origin::Inline),
        ));
    }
    if style.background_image {
        return None;
    }
    let (background, background_origin) = match &style.background {
        Some((c, o)) => (*c, Some(o)),
        None => (Colour::WHITE, None),
    };
    // A translucent colour is seen mixed with what is under it.
    let colour = colour.over(background);
    if colour.contrast(background) < 1.2 {
        let name = if colour.luminance() > 0.98 && background.luminance() > 0.98 {
            "white on white".to_owned()
        } else if colour.luminance() < 0.002 && background.luminance() < 0.002 {
            "black on black".to_owned()
        } else {
            format!(
                "text coloured like its background ({} on {})",
                colour.hex(),
                background.hex()
            )
        };
        let origin = [colour_origin, background_origin]
            .into_iter()
            .flatten()
            .find(|o| matches!(o, Origin::Rule(_)))
            .or(colour_origin)
            .or(background_origin)
            .unwrap_or(&Origin::Inline);
        return Some(named(&name, origin));
    }
    None
}

fn find<'a>(
    declared: &'a [(Declaration, Origin)],
    property: &str,
) -> Option<&'a (Declaration, Origin)> {
    declared.iter().find(|(d, _)| d.property == property)
}

/// Where a declaration stands in the cascade: `!important`, inline, selector specificity,
/// then document order; the greatest wins.
type Precedence = (bool, bool, (usize, usize, usize), usize);

/// Names a technique after where its declaration came from.
fn named(technique: &str, origin: &Origin) -> String {
    match origin {
        Origin::Rule(selector) => format!("<style> rule {selector}: {technique}"),
        Origin::Inline | Origin::Attribute => technique.to_owned(),
    }
}

fn px(size: f32) -> String {
    if size == 0.0 {
        "0".into()
    } else {
        format!("{size}px")
    }
}

/// `rect(0 0 0 0)`, `rect(1px, 1px, 1px, 1px)`: a clip with no area.
fn zero_area_rect(value: &str) -> bool {
    let Some(args) = value
        .trim()
        .strip_prefix("rect(")
        .and_then(|v| v.strip_suffix(')'))
    else {
        return false;
    };
    let edges: Vec<Option<f32>> = args
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(css::length_px)
        .collect();
    match edges.as_slice() {
        [Some(top), Some(right), Some(bottom), Some(left)] => bottom <= top || right <= left,
        _ => false,
    }
}

/// `inset(50%)` and more, `circle(0)`, `polygon(0 0)`: a clip path that leaves nothing.
fn clips_everything(value: &str) -> bool {
    let v: String = value
        .to_ascii_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let percent = |arg: &str| arg.strip_suffix('%').and_then(|p| p.parse::<f32>().ok());
    if let Some(args) = v.strip_prefix("inset(").and_then(|a| a.strip_suffix(')')) {
        return percent(args).is_some_and(|p| p >= 50.0);
    }
    v.starts_with("circle(0)")
        || v.starts_with("circle(0px")
        || v.starts_with("circle(0%")
        || v.starts_with("ellipse(0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(html: &str) -> Vec<(String, bool)> {
        read_html(html)
            .passages
            .into_iter()
            .map(|p| (p.text, p.shown_in_review))
            .collect()
    }

    #[test]
    fn a_child_that_restores_the_font_size_is_visible() {
        assert!(hidden(
            "<p>Hi</p><div style=\"font-size:0\"><span style=\"font-size:14px\">shown</span></div>"
        )
        .is_empty());
    }

    #[test]
    fn an_inline_rule_beats_a_style_rule_unless_the_rule_is_important() {
        let css = "<style>.x{display:none}</style>";
        assert!(hidden(&format!(
            "{css}<p>a</p><p class=x style=\"display:block\">b</p>"
        ))
        .is_empty());
        // The review applies the rule too (written into the style attribute): hidden there.
        assert_eq!(
            hidden("<style>.x{display:none!important}</style><p>a</p><p class=x style=\"display:block\">b</p>"),
            [("b".to_owned(), false)]
        );
    }

    #[test]
    fn a_comment_inside_an_inline_declaration_hides_from_recipients_but_not_the_review() {
        assert_eq!(
            hidden("<p>a</p><p style=\"display:/**/none\">secret words</p>"),
            [("secret words".to_owned(), true)]
        );
    }

    #[test]
    fn dark_text_on_a_dark_background_is_readable_when_it_contrasts() {
        assert!(hidden(
            "<div style=\"background:#000\"><p style=\"color:#fff\">readable</p></div>"
        )
        .is_empty());
        assert_eq!(
            hidden("<div style=\"background:#000\"><p style=\"color:#010101\">dark</p></div>"),
            [("dark".to_owned(), false)]
        );
    }

    #[test]
    fn visible_text_keeps_blocks_on_their_own_lines_and_skips_the_head() {
        let reading = read_html(
            "<html><head><title>T</title><style>p{}</style></head><body><div dir=ltr>Hi <b>Ana</b>,<br>line<p>para</p><ol><li>one</li><li>two</li></ol></div>",
        );
        assert_eq!(reading.visible_text, "Hi Ana,\nline\npara\n1. one\n2. two");
    }

    #[test]
    fn a_deeply_nested_body_is_read_without_overflowing_the_stack() {
        let html =
            "<div>".repeat(10_000) + "<p>x</p><span style=\"display:none\">deep secret</span>";
        assert_eq!(hidden(&html), [("deep secret".to_owned(), false)]);
    }

    #[test]
    fn excerpts_cut_at_a_word_and_say_so() {
        assert_eq!(excerpt("one two three", 9), "one two\u{2026}");
        assert_eq!(excerpt("short", 9), "short");
    }
}
