//! The cascade in each world: which declarations win for an element, what style it passes
//! down, how it hides its content, and whether text with that style can be read.

use crate::dom::{Dom, NodeId};
use crate::styling::selector::{self, Complex, Selector};
use crate::styling::sheet::{self, Declaration, Sheet};
use crate::styling::values::{self as css, Colour};

/// Which reading of the HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum World {
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
pub(super) struct Inherited {
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

impl Inherited {
    /// The page's own style: nothing set, fully opaque.
    pub(super) fn page() -> Self {
        Inherited {
            opacity: 1.0,
            ..Inherited::default()
        }
    }
}

/// A `<style>` rule as the cascade uses it: one selector that can match.
#[derive(Clone)]
pub(super) struct AppliedRule {
    selector: Complex,
    declarations: Vec<Declaration>,
}

/// The rules of `sheet` that apply on a screen `width` px wide.
pub(super) fn rules_at(sheet: &Sheet, width: f32) -> Vec<AppliedRule> {
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

/// The element tree and the `<style>` rules that apply to it in each world.
pub(super) struct Cascade<'d> {
    pub(super) dom: &'d Dom,
    /// The rules recipients' programs apply on this screen.
    pub(super) rules: Vec<AppliedRule>,
    /// The rules the review applies (written into `style` attributes): a desktop's.
    pub(super) review_rules: Vec<AppliedRule>,
}

impl Cascade<'_> {
    /// The style element `id` passes down in `world`, given its parent's.
    pub(super) fn inherit(
        &self,
        id: NodeId,
        tag: &str,
        parent: &Inherited,
        world: World,
    ) -> Inherited {
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
pub(super) fn text_hiding(style: &Inherited) -> Option<String> {
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
