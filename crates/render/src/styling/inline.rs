//! The review shows what a desktop recipient's program shows: the `<style>` rules that apply
//! at desktop width are written into each element's `style` attribute before sanitizing (which
//! drops `<style>`), in cascade order, so a `td` rule's dark background or a class's colour
//! reaches the review frame. Without it, the review would show white text on white where
//! recipients read white on black, and hide nothing a rule hides.

use crate::dom::{Dom, NodeId};
use crate::styling::media::DESKTOP_WIDTH;
use crate::styling::selector::{self, Selector};
use crate::styling::sheet::{Declaration, Sheet};

/// (important, specificity, order): later in the attribute wins, as in the cascade.
type Precedence = (bool, (usize, usize, usize), usize);

/// Writes the rules of `sheet` that apply at desktop width into the elements of `dom`.
pub(crate) fn inline_rules(dom: &mut Dom, sheet: &Sheet) {
    let rules: Vec<(selector::Complex, &[Declaration])> = sheet
        .rules
        .iter()
        .filter(|r| r.condition.applies_at(DESKTOP_WIDTH))
        .flat_map(|r| {
            selector::parse_list(&r.prelude)
                .into_iter()
                .filter_map(move |s| match s {
                    Selector::Static(c) => Some((c, r.declarations.as_slice())),
                    _ => None,
                })
        })
        .collect();
    if rules.is_empty() {
        return;
    }
    let elements: Vec<NodeId> = (0..dom.nodes.len())
        .filter(|&id| dom.tag(id).is_some())
        .collect();
    for id in elements {
        if dom.matching_was_cut() {
            break;
        }
        let mut matched: Vec<(Precedence, &Declaration)> = Vec::new();
        let mut order = 0;
        for (selector, declarations) in &rules {
            if selector.matches(dom, id) {
                for d in declarations.iter() {
                    order += 1;
                    matched.push(((d.important, selector.specificity(), order), d));
                }
            }
        }
        if matched.is_empty() {
            continue;
        }
        matched.sort_by_key(|(precedence, _)| *precedence);
        let mut style: Vec<String> = matched
            .iter()
            .map(|(_, d)| {
                let important = if d.important { " !important" } else { "" };
                format!("{}: {}{important}", d.property, d.value)
            })
            .collect();
        if let Some(inline) = dom.attr(id, "style") {
            style.push(inline.to_owned());
        }
        dom.set_attr(id, "style", style.join("; "));
    }
}
