//! Styling Countersign can vouch for: a closed world. Every declaration a draft's HTML carries,
//! inline or in a `<style>` rule, is judged against an allow-list of properties and values
//! whose effect on what recipients see is known (see [`judge`]). What the hidden-text reader
//! evaluates (colours, sizes, `display`, media widths) is left to it; everything else that
//! could hide, reveal, move, cover or add text becomes an `unverifiable_styling` finding,
//! instead of being skipped as a list of known tricks would skip it.

mod allowed;
pub(crate) mod inline;
pub(crate) mod judge;
pub(crate) mod media;
pub(crate) mod selector;
pub(crate) mod sheet;
pub(crate) mod values;

use serde::{Deserialize, Serialize};

use crate::dom::{Dom, NodeData, NodeId};
use crate::flag::{Flag, FlagKind};
use judge::{colour_only, judge, Verdict};
use media::Condition;
use selector::Selector;
use sheet::{Declaration, Sheet};

/// Styling in the draft that Countersign cannot evaluate, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UnverifiableStyle {
    /// Where: `inline style of <span>`, `<style> rule .x::before`, `<style> sheet`.
    pub place: String,
    /// What and why, in a few words: `transform: scale(0.01) (a property Countersign does not
    /// evaluate)`.
    pub what: String,
}

/// The most findings kept: a sheet of a thousand odd rules says no more with all of them.
const MAX_FINDINGS: usize = 20;

/// The text of every `<style>` element of `dom`, joined.
pub(crate) fn style_text(dom: &Dom) -> String {
    let mut css = String::new();
    for id in 0..dom.nodes.len() {
        if dom.tag(id) == Some("style") {
            for &c in &dom.nodes[id].children {
                if let NodeData::Text(t) = &dom.nodes[c].data {
                    css.push_str(t);
                    css.push('\n');
                }
            }
        }
    }
    css
}

/// Judges every declaration of `dom` and `sheet` (read from the same document).
pub(crate) fn audit(dom: &Dom, sheet: &Sheet) -> Vec<UnverifiableStyle> {
    let mut found: Vec<UnverifiableStyle> = Vec::new();
    let mut add = |place: String, what: String| {
        if found.len() < MAX_FINDINGS && !found.iter().any(|f| f.what == what) {
            found.push(UnverifiableStyle { place, what });
        }
    };
    for what in &sheet.unverifiable {
        add("<style> sheet".to_owned(), what.clone());
    }
    let elements: Vec<NodeId> = (0..dom.nodes.len())
        .filter(|&id| dom.tag(id).is_some())
        .collect();
    for rule in &sheet.rules {
        if dom.matching_was_cut() {
            break;
        }
        if rule.condition
            == (Condition::Viewports {
                desktop: false,
                phone: false,
            })
        {
            continue;
        }
        // Under a condition not evaluated, a rule may apply to some recipients: whatever it
        // does beyond what is harmless everywhere is unverified. In dark mode colours change
        // as a matter of course.
        let conditional = match &rule.condition {
            Condition::Unknown(c) => Some(c.clone()),
            Condition::DarkScheme => Some("in dark mode".to_owned()),
            _ => None,
        };
        for selector in selector::parse_list(&rule.prelude) {
            let (place, judged): (String, Vec<String>) = match &selector {
                Selector::Static(complex) => {
                    if !elements.iter().any(|&id| complex.matches(dom, id)) {
                        continue;
                    }
                    let judged = rule
                        .declarations
                        .iter()
                        .filter_map(|d| match judge(d, &rule.declarations) {
                            Verdict::Unverifiable(why) => Some(why),
                            Verdict::Evaluated
                                if conditional.is_some() && !dark_colour(d, &rule.condition) =>
                            {
                                Some(format!(
                                    "{}: {} (applies only {})",
                                    d.property,
                                    d.value,
                                    conditional.as_deref().unwrap_or_default()
                                ))
                            }
                            _ => None,
                        })
                        .collect();
                    (format!("<style> rule {}", complex.text), judged)
                }
                Selector::Interactive(text) | Selector::Unevaluated(text) => {
                    let interactive = matches!(selector, Selector::Interactive(_));
                    let judged = rule
                        .declarations
                        .iter()
                        .filter_map(|d| match judge(d, &rule.declarations) {
                            Verdict::Unverifiable(why) => Some(why),
                            // A colour that changes on hover shows nothing the page hid: the
                            // hidden text itself is found as hidden.
                            Verdict::Evaluated if interactive && colour_only(d) => None,
                            Verdict::Evaluated => Some(format!(
                                "{}: {} ({})",
                                d.property,
                                d.value,
                                if interactive {
                                    "changes what is shown when the reader points or clicks"
                                } else {
                                    "a selector Countersign does not evaluate"
                                }
                            )),
                            // Harmless on a page as written, but on hover it may show what
                            // the page hid (`display: inline` over `display: none`).
                            Verdict::Harmless if reveals(d) => Some(format!(
                                "{}: {} ({})",
                                d.property,
                                d.value,
                                if interactive {
                                    "may show what the page hid, when the reader points or clicks"
                                } else {
                                    "a selector Countersign does not evaluate"
                                }
                            )),
                            Verdict::Harmless => None,
                        })
                        .collect();
                    (format!("<style> rule {text}"), judged)
                }
                Selector::PseudoElement(complex, name) => {
                    if matches!(
                        name.as_str(),
                        "selection" | "-moz-selection" | "placeholder" | "marker"
                    ) || !elements.iter().any(|&id| complex.matches(dom, id))
                    {
                        continue;
                    }
                    let judged = pseudo_element(name, &rule.declarations);
                    (format!("<style> rule {}", complex.text), judged)
                }
            };
            for what in judged {
                add(place.clone(), what);
            }
        }
    }
    for &id in &elements {
        let Some(inline) = dom.attr(id, "style") else {
            continue;
        };
        let declarations = sheet::parse_inline(inline);
        for d in &declarations {
            if let Verdict::Unverifiable(why) = judge(d, &declarations) {
                add(
                    format!("inline style of <{}>", dom.tag(id).unwrap_or("?")),
                    why,
                );
            }
        }
    }
    found
}

/// Properties that can show what another declaration hid.
fn reveals(d: &Declaration) -> bool {
    matches!(
        d.property.as_str(),
        "display"
            | "visibility"
            | "opacity"
            | "font-size"
            | "font"
            | "overflow"
            | "overflow-x"
            | "overflow-y"
            | "height"
            | "max-height"
            | "width"
            | "max-width"
            | "line-height"
            | "position"
            | "text-indent"
            | "clip"
            | "clip-path"
    ) || d.property.starts_with("margin")
}

/// A colour declaration in dark mode, which recipients see as they see dark mode.
fn dark_colour(d: &Declaration, condition: &Condition) -> bool {
    *condition == Condition::DarkScheme && colour_only(d)
}

/// `::before` and `::after` add the text of their `content`; `::first-letter` and
/// `::first-line` restyle part of the text, which the reader does not evaluate.
fn pseudo_element(name: &str, declarations: &[Declaration]) -> Vec<String> {
    let adds = matches!(name, "before" | "after");
    declarations
        .iter()
        .filter_map(|d| {
            if d.property == "content" {
                let v = d.value.trim();
                let nothing = matches!(v, "none" | "normal" | "\"\"" | "''");
                return (adds && !nothing).then(|| {
                    format!("content: {v} (puts text on screen that is in no text node)")
                });
            }
            if adds {
                // Without content there is no box; with it, the content finding says enough.
                return None;
            }
            match judge(d, declarations) {
                Verdict::Harmless => None,
                Verdict::Unverifiable(why) => Some(why),
                Verdict::Evaluated => Some(format!(
                    "{}: {} (restyles the {} only, which Countersign does not evaluate)",
                    d.property,
                    d.value,
                    name.replace('-', " ")
                )),
            }
        })
        .collect()
}

/// The `unverifiable_styling` flag for these findings, if any.
pub(crate) fn flag(found: &[UnverifiableStyle]) -> Option<Flag> {
    let first = found.first()?;
    let listed: Vec<String> = found
        .iter()
        .take(5)
        .map(|f| format!("{} in {}", f.what, f.place))
        .collect();
    let more = found.len().saturating_sub(5);
    Some(Flag {
        kind: FlagKind::UnverifiableStyling,
        about: first.place.clone(),
        explanation: format!(
            "The HTML uses styling Countersign cannot check for hidden or added words, so \
             recipients may see something else than this review shows: {}{}. Compare with the \
             reveal view before approving.",
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
