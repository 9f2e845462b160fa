//! What one declaration can do to the text under it: nothing that hides, moves, covers or adds
//! text (harmless); something the hidden-text reader works out (evaluated); or something
//! Countersign cannot vouch for. An allow-list: a property or value not named here is the last.

use super::allowed::{HARMLESS, MSO_HARMLESS_PREFIXES, UNRESOLVED_FUNCTIONS};
use super::sheet::Declaration;
use crate::styling::values::{self as css, length_px};

/// The verdict on one declaration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// Cannot hide, reveal, move, cover or add text.
    Harmless,
    /// Can, and the hidden-text reader evaluates it (colours, sizes, `display`…).
    Evaluated,
    /// Can, and is not evaluated: the reason, in a few words.
    Unverifiable(String),
}

/// Judges `d`, given the other declarations of the same element (`margin-left` excuses a
/// negative `text-indent`, `overflow:hidden` makes a height matter).
pub(crate) fn judge(d: &Declaration, siblings: &[Declaration]) -> Verdict {
    let p = d.property.as_str();
    let v = d.value.trim().to_ascii_lowercase();
    let sibling = |name: &str| {
        siblings
            .iter()
            .rev()
            .find(|s| s.property == name)
            .map(|s| s.value.trim().to_ascii_lowercase())
    };
    let unresolved = d
        .functions
        .iter()
        .find(|f| UNRESOLVED_FUNCTIONS.contains(&f.as_str()));
    let unverifiable = |why: &str| Verdict::Unverifiable(format!("{p}: {} ({why})", d.value));
    if p.starts_with("--") {
        // A custom property does nothing until a `var()` reads it, which is judged there.
        return Verdict::Harmless;
    }
    if matches!(
        v.as_str(),
        "inherit" | "initial" | "unset" | "revert" | "revert-layer"
    ) {
        // The parent's own value was judged where it was set; `initial` is the default.
        return Verdict::Harmless;
    }
    let clips = || {
        ["overflow", "overflow-x", "overflow-y"].iter().any(|o| {
            sibling(o).is_some_and(|v| matches!(v.as_str(), "hidden" | "clip" | "auto" | "scroll"))
        })
    };
    match p {
        "width" | "height" | "max-width" | "max-height" | "line-height" if clips() => {
            if length_px(&v).is_some_and(|px| px <= 0.0) {
                Verdict::Evaluated
            } else {
                unverifiable("a fixed size with overflow hidden can cut text off")
            }
        }
        "color"
        | "background-color"
        | "-webkit-text-fill-color"
        | "border-color"
        | "border-top-color"
        | "border-bottom-color"
        | "border-left-color"
        | "border-right-color" => match unresolved {
            Some(f) => unverifiable(&format!("{f}() is not evaluated")),
            None if css::parse_colour(&v).is_some()
                || v == "currentcolor"
                || (p == "color" && matches!(v.as_str(), "inherit" | "initial" | "unset")) =>
            {
                if p.starts_with("border") {
                    Verdict::Harmless
                } else {
                    Verdict::Evaluated
                }
            }
            None => unverifiable("a colour Countersign cannot read"),
        },
        "background" | "background-image" => match unresolved {
            Some(f) => unverifiable(&format!("{f}() is not evaluated")),
            None if v.contains("url(") || css::background_colour(&v).is_some() || v == "none" => {
                Verdict::Evaluated
            }
            None if css::gradient_colours(&v).is_some() => Verdict::Evaluated,
            None => unverifiable("a background Countersign cannot read"),
        },
        "background-clip" | "-webkit-background-clip" => {
            if v.contains("text") {
                unverifiable("paints the background through the letters")
            } else {
                Verdict::Harmless
            }
        }
        "opacity" => match css::opacity(&v) {
            Some(_) if unresolved.is_none() => Verdict::Evaluated,
            _ => unverifiable("an opacity Countersign cannot read"),
        },
        "font-size" => {
            if unresolved.is_some() {
                return unverifiable("a computed size");
            }
            let keyword = matches!(
                v.as_str(),
                "xx-small"
                    | "x-small"
                    | "small"
                    | "medium"
                    | "large"
                    | "x-large"
                    | "xx-large"
                    | "xxx-large"
                    | "smaller"
                    | "larger"
            );
            if keyword || length_px(&v).is_some() || v.ends_with('%') || v.ends_with("em") {
                Verdict::Evaluated
            } else {
                unverifiable("a size Countersign cannot read")
            }
        }
        "font" => font_shorthand(&v)
            .unwrap_or_else(|| unverifiable("a font size Countersign cannot read")),
        "display" => match v.as_str() {
            "none" => Verdict::Evaluated,
            "block" | "inline" | "inline-block" | "table" | "inline-table" | "table-row"
            | "table-cell" | "table-row-group" | "table-header-group" | "table-footer-group"
            | "table-column" | "table-column-group" | "table-caption" | "list-item" | "flex"
            | "inline-flex" | "grid" | "inline-grid" | "contents" | "flow-root" => {
                Verdict::Harmless
            }
            _ => unverifiable("a display Countersign does not evaluate"),
        },
        "visibility" => match v.as_str() {
            "visible" | "hidden" | "collapse" => Verdict::Evaluated,
            _ => unverifiable("a visibility Countersign does not evaluate"),
        },
        "overflow" | "overflow-x" | "overflow-y" => match v.as_str() {
            "visible" | "hidden" | "clip" | "auto" | "scroll" => Verdict::Harmless,
            _ => unverifiable("an overflow Countersign does not evaluate"),
        },
        "position" => match v.as_str() {
            "static" => Verdict::Harmless,
            "relative" => {
                let moved = ["top", "left", "right", "bottom", "inset"]
                    .iter()
                    .any(|o| sibling(o).is_some_and(|v| v != "auto" && length_px(&v) != Some(0.0)));
                if moved {
                    unverifiable("moves the text from where it is written")
                } else {
                    Verdict::Harmless
                }
            }
            _ => unverifiable("takes the text out of the flow, where it can move or cover"),
        },
        "margin"
        | "margin-top"
        | "margin-right"
        | "margin-bottom"
        | "margin-left"
        | "margin-inline"
        | "margin-block"
        | "margin-inline-start"
        | "margin-inline-end" => {
            if unresolved.is_some() {
                return unverifiable("a computed margin");
            }
            // Small negative margins pull a box a few pixels: nothing leaves the page.
            let pulls = v
                .split_whitespace()
                .any(|part| part.starts_with('-') && length_px(part).is_none_or(|px| px < -10.0));
            if pulls {
                unverifiable("a negative margin can move text off the page or over other text")
            } else {
                Verdict::Harmless
            }
        }
        "text-indent" => {
            let Some(px) = length_px(&v).filter(|_| unresolved.is_none()) else {
                return if v.starts_with('-') {
                    unverifiable("an indent Countersign cannot read")
                } else {
                    Verdict::Harmless
                };
            };
            if px <= -500.0 {
                return Verdict::Evaluated;
            }
            // Word's hanging indents: a list's first line pulled back into its own margin.
            let room = ["margin-left", "padding-left", "mso-margin-left-alt"]
                .iter()
                .filter_map(|o| sibling(o).and_then(|v| length_px(&v)))
                .fold(0.0_f32, f32::max);
            if px >= -10.0 || room + px >= -1.0 {
                Verdict::Harmless
            } else {
                unverifiable("a negative indent can move text off the page")
            }
        }
        "letter-spacing" | "word-spacing" => {
            if v == "normal" {
                return Verdict::Harmless;
            }
            match length_px(&v).filter(|_| unresolved.is_none()) {
                Some(px) if px >= -2.0 => Verdict::Harmless,
                _ if !v.starts_with('-') && unresolved.is_none() => Verdict::Harmless,
                _ => unverifiable("squeezes letters together"),
            }
        }
        "direction" => match v.as_str() {
            "ltr" | "rtl" => Verdict::Harmless,
            _ => unverifiable("a direction Countersign does not evaluate"),
        },
        "unicode-bidi" => match v.as_str() {
            "normal" | "embed" | "isolate" | "plaintext" => Verdict::Harmless,
            _ => unverifiable("shows the characters in another order than they are written"),
        },
        "flex-direction" => {
            if v.ends_with("reverse") {
                unverifiable("shows the text in another order than it is written")
            } else {
                Verdict::Harmless
            }
        }
        "list-style-type" | "list-style" => {
            if v.contains('"') || v.contains('\'') || v.contains("url(") || unresolved.is_some() {
                unverifiable("a list marker that is text or an image")
            } else {
                Verdict::Harmless
            }
        }
        "zoom" => match v.as_str() {
            "1" | "100%" | "normal" | "reset" => Verdict::Harmless,
            _ => unverifiable("scales the text"),
        },
        "mso-hide" => match v.as_str() {
            "all" => Verdict::Evaluated,
            "none" => Verdict::Harmless,
            _ => unverifiable("an Outlook setting Countersign does not evaluate"),
        },
        "border"
        | "border-top"
        | "border-bottom"
        | "border-left"
        | "border-right"
        | "border-width"
        | "border-style"
        | "border-top-width"
        | "border-bottom-width"
        | "border-left-width"
        | "border-right-width"
        | "border-top-style"
        | "border-bottom-style"
        | "border-left-style"
        | "border-right-style"
        | "border-top-left-radius"
        | "border-top-right-radius"
        | "border-bottom-left-radius"
        | "border-bottom-right-radius" => Verdict::Harmless,
        _ if p.starts_with("mso-") => {
            if MSO_HARMLESS_PREFIXES.iter().any(|m| p.starts_with(m)) {
                Verdict::Harmless
            } else {
                unverifiable("an Outlook property Countersign does not evaluate")
            }
        }
        _ if HARMLESS.contains(&p) => Verdict::Harmless,
        _ => unverifiable("a property Countersign does not evaluate"),
    }
}

/// `font: italic bold 12px/30px Georgia, serif`: the size is the one part that can hide text.
fn font_shorthand(v: &str) -> Option<Verdict> {
    if matches!(
        v,
        "inherit"
            | "initial"
            | "unset"
            | "caption"
            | "menu"
            | "message-box"
            | "small-caption"
            | "status-bar"
            | "icon"
    ) {
        return Some(Verdict::Harmless);
    }
    for word in v.split_whitespace() {
        let size = word.split('/').next().unwrap_or(word);
        if let Some(px) = length_px(size) {
            return (px > 4.0).then_some(Verdict::Harmless);
        }
        if size.ends_with('%') || size.ends_with("em") {
            return Some(Verdict::Harmless).filter(|_| !size.starts_with('0'));
        }
    }
    None
}

/// Whether a verdict on a declaration concerns colours only, which recipients in dark mode
/// see changed as a matter of course (and which the light rendering already judges).
pub(crate) fn colour_only(d: &Declaration) -> bool {
    matches!(
        d.property.as_str(),
        "color"
            | "background-color"
            | "background"
            | "background-image"
            | "border-color"
            | "-webkit-text-fill-color"
    )
}
