//! Just enough CSS to tell whether mail text is displayed: declarations, `<style>` rules with
//! simple selectors, colours and lengths.
//!
//! Only what applies to every recipient is read: rules inside `@media` and other at-rules are
//! skipped (they show or hide per screen), as are selectors with combinators, attributes or
//! pseudo-classes. What is skipped can only miss hidden text, never invent it.

/// One `property: value` pair.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Declaration {
    /// Lower-case property name.
    pub property: String,
    /// The value, `!important` removed, trimmed.
    pub value: String,
    pub important: bool,
}

/// A compound selector: `span`, `.x`, `#y`, `td.a.b`, `*`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Selector {
    pub tag: Option<String>,
    pub id: Option<String>,
    pub classes: Vec<String>,
    /// The selector as written, for naming the rule.
    pub text: String,
}

impl Selector {
    /// CSS specificity as (ids, classes, tags).
    pub fn specificity(&self) -> (usize, usize, usize) {
        (
            usize::from(self.id.is_some()),
            self.classes.len(),
            usize::from(self.tag.is_some()),
        )
    }

    /// Whether an element with this tag, id and class list matches.
    pub fn matches(&self, tag: &str, id: Option<&str>, classes: &[&str]) -> bool {
        self.tag
            .as_deref()
            .is_none_or(|t| t.eq_ignore_ascii_case(tag))
            && self.id.as_deref().is_none_or(|want| id == Some(want))
            && self.classes.iter().all(|c| classes.contains(&c.as_str()))
    }
}

/// One style rule: a selector (a selector list becomes several rules) and its declarations.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub selector: Selector,
    pub declarations: Vec<Declaration>,
}

/// Removes `/* … */` comments (an unclosed one runs to the end, as in browsers).
pub(super) fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        // A comment separates tokens, like whitespace.
        out.push(' ');
        rest = rest[start + 2..]
            .find("*/")
            .map_or("", |end| &rest[start + 2 + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// The declarations of a declaration block or `style` attribute, in order.
pub(super) fn parse_declarations(block: &str) -> Vec<Declaration> {
    block
        .split(';')
        .filter_map(|d| {
            let (property, value) = d.split_once(':')?;
            let property = property.trim().to_ascii_lowercase();
            let mut value = value.trim();
            let mut important = false;
            if let Some(bang) = value.rfind('!') {
                if value[bang + 1..].trim().eq_ignore_ascii_case("important") {
                    important = true;
                    value = value[..bang].trim_end();
                }
            }
            (!property.is_empty() && !value.is_empty()).then(|| Declaration {
                property,
                value: value.to_owned(),
                important,
            })
        })
        .collect()
}

/// The rules of a style sheet that apply on every screen, in order.
pub(super) fn parse_stylesheet(css: &str) -> Vec<Rule> {
    let css = strip_comments(css).replace("<!--", " ").replace("-->", " ");
    let mut rules = Vec::new();
    let mut rest = css.as_str();
    while let Some(open) = rest.find('{') {
        let prelude = rest[..open].trim();
        // Find the matching close brace (at-rules nest blocks).
        let mut depth = 0usize;
        let mut close = rest.len();
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let block = &rest[open + 1..close];
        // A statement at-rule before the block (`@import url(x);`) ends at its semicolon.
        let prelude = prelude.rsplit(';').next().unwrap_or("").trim();
        if !prelude.starts_with('@') {
            let declarations = parse_declarations(block);
            for text in prelude.split(',') {
                if let Some(selector) = parse_selector(text.trim()) {
                    rules.push(Rule {
                        selector,
                        declarations: declarations.clone(),
                    });
                }
            }
        }
        rest = rest.get(close + 1..).unwrap_or("");
    }
    rules
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-' || c == '_'
}

/// A compound selector, or `None` for anything more complex.
fn parse_selector(text: &str) -> Option<Selector> {
    if text.is_empty() {
        return None;
    }
    let mut selector = Selector {
        tag: None,
        id: None,
        classes: Vec::new(),
        text: text.to_owned(),
    };
    let mut chars = text.char_indices().peekable();
    let mut first = true;
    while let Some((at, c)) = chars.next() {
        let kind = match c {
            '.' | '#' => c,
            '*' if first => {
                first = false;
                continue;
            }
            c if first && is_name_char(c) => 't',
            _ => return None,
        };
        first = false;
        let start = if kind == 't' { at } else { at + 1 };
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if !is_name_char(c) {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        if kind == 't' {
            end = end.max(at + c.len_utf8());
        }
        let name = &text[start..end];
        if name.is_empty() {
            return None;
        }
        match kind {
            '.' => selector.classes.push(name.to_owned()),
            '#' => selector.id = Some(name.to_owned()),
            _ => selector.tag = Some(name.to_ascii_lowercase()),
        }
    }
    Some(selector)
}

/// An sRGB colour with alpha in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Colour {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub alpha: f32,
}

impl Colour {
    pub const WHITE: Colour = Colour::rgb(255, 255, 255);
    pub const BLACK: Colour = Colour::rgb(0, 0, 0);
    /// The colour browsers give unvisited links.
    pub const LINK_BLUE: Colour = Colour::rgb(0, 0, 238);

    const fn rgb(r: u8, g: u8, b: u8) -> Colour {
        Colour {
            r,
            g,
            b,
            alpha: 1.0,
        }
    }

    /// WCAG relative luminance.
    pub fn luminance(self) -> f64 {
        let channel = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(self.r) + 0.7152 * channel(self.g) + 0.0722 * channel(self.b)
    }

    /// WCAG contrast ratio, 1 (none) to 21 (black on white).
    pub fn contrast(self, other: Colour) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }

    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

const NAMED: &[(&str, (u8, u8, u8))] = &[
    ("white", (255, 255, 255)),
    ("black", (0, 0, 0)),
    ("snow", (255, 250, 250)),
    ("ivory", (255, 255, 240)),
    ("ghostwhite", (248, 248, 255)),
    ("whitesmoke", (245, 245, 245)),
    ("floralwhite", (255, 250, 240)),
    ("azure", (240, 255, 255)),
    ("mintcream", (245, 255, 250)),
    ("seashell", (255, 245, 238)),
    ("linen", (250, 240, 230)),
    ("aliceblue", (240, 248, 255)),
    ("lightyellow", (255, 255, 224)),
    ("beige", (245, 245, 220)),
    ("gainsboro", (220, 220, 220)),
    ("lightgray", (211, 211, 211)),
    ("lightgrey", (211, 211, 211)),
    ("silver", (192, 192, 192)),
    ("gray", (128, 128, 128)),
    ("grey", (128, 128, 128)),
    ("red", (255, 0, 0)),
    ("green", (0, 128, 0)),
    ("blue", (0, 0, 255)),
    ("navy", (0, 0, 128)),
    ("yellow", (255, 255, 0)),
    ("orange", (255, 165, 0)),
    ("purple", (128, 0, 128)),
];

/// Reads a CSS colour value (or an HTML `color`/`bgcolor` attribute); `None` when unknown.
pub(super) fn parse_colour(value: &str) -> Option<Colour> {
    let v = value.trim().to_ascii_lowercase();
    if v == "transparent" {
        return Some(Colour {
            alpha: 0.0,
            ..Colour::BLACK
        });
    }
    if let Some(&(_, (r, g, b))) = NAMED.iter().find(|(name, _)| *name == v) {
        return Some(Colour::rgb(r, g, b));
    }
    if let Some(hex) = v.strip_prefix('#') {
        let digit = |i: usize| u8::from_str_radix(hex.get(i..=i)?, 16).ok();
        let pair = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
        return match hex.len() {
            3 | 4 => {
                let (r, g, b) = (digit(0)? * 17, digit(1)? * 17, digit(2)? * 17);
                let alpha = if hex.len() == 4 {
                    f32::from(digit(3)? * 17) / 255.0
                } else {
                    1.0
                };
                Some(Colour { r, g, b, alpha })
            }
            6 | 8 => {
                let (r, g, b) = (pair(0)?, pair(2)?, pair(4)?);
                let alpha = if hex.len() == 8 {
                    f32::from(pair(6)?) / 255.0
                } else {
                    1.0
                };
                Some(Colour { r, g, b, alpha })
            }
            _ => None,
        };
    }
    let args = v
        .strip_prefix("rgba(")
        .or_else(|| v.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let parts: Vec<&str> = args
        .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let channel = |p: &str| -> Option<u8> {
        let n = match p.strip_suffix('%') {
            Some(pct) => pct.parse::<f32>().ok()? * 2.55,
            None => p.parse::<f32>().ok()?,
        };
        Some(n.clamp(0.0, 255.0).round() as u8)
    };
    let alpha = match parts.get(3) {
        Some(a) => match a.strip_suffix('%') {
            Some(pct) => pct.parse::<f32>().ok()? / 100.0,
            None => a.parse::<f32>().ok()?,
        },
        None => 1.0,
    };
    Some(Colour {
        r: channel(parts.first()?)?,
        g: channel(parts.get(1)?)?,
        b: channel(parts.get(2)?)?,
        alpha: alpha.clamp(0.0, 1.0),
    })
}

/// The colour in a `background` shorthand, if it names one.
pub(super) fn background_colour(value: &str) -> Option<Colour> {
    // rgb(…) holds spaces: try the whole value first, then each word.
    parse_colour(value).or_else(|| value.split_whitespace().find_map(parse_colour))
}

/// A length in CSS pixels: `Some(px)` for absolute lengths and for any zero; `None` for
/// relative non-zero lengths and anything unreadable.
pub(super) fn length_px(value: &str) -> Option<f32> {
    let v = value.trim().to_ascii_lowercase();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(v.len());
    let number: f32 = v[..split].parse().ok()?;
    let unit = v[split..].trim();
    if number == 0.0 {
        return Some(0.0);
    }
    match unit {
        "px" | "" => Some(number),
        "pt" => Some(number * 4.0 / 3.0),
        "cm" => Some(number * 96.0 / 2.54),
        "mm" => Some(number * 96.0 / 25.4),
        "in" => Some(number * 96.0),
        // Relative to the font: about 16 px in mail.
        "em" | "rem" => Some(number * 16.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_with_simple_selectors_are_read_and_media_blocks_skipped() {
        let rules = parse_stylesheet(
            "/* x */ .a, span#b.c { display: none !important }\n\
             @media (max-width: 600px) { .m { display:none } }\n\
             div p { display:none } a:hover { color: red }",
        );
        let texts: Vec<&str> = rules.iter().map(|r| r.selector.text.as_str()).collect();
        assert_eq!(texts, [".a", "span#b.c"]);
        assert!(rules[0].declarations[0].important);
        assert!(rules[1].selector.matches("SPAN", Some("b"), &["c", "d"]));
        assert!(!rules[1].selector.matches("span", Some("b"), &["d"]));
        assert_eq!(rules[1].selector.specificity(), (1, 1, 1));
    }

    #[test]
    fn colours_read_in_every_common_notation() {
        assert_eq!(parse_colour("#FFF"), Some(Colour::WHITE));
        assert_eq!(
            parse_colour("#fefefe").map(Colour::hex).as_deref(),
            Some("#fefefe")
        );
        assert_eq!(parse_colour("rgb(255, 255, 255)"), Some(Colour::WHITE));
        assert_eq!(parse_colour("rgba(0,0,0,0)").map(|c| c.alpha), Some(0.0));
        assert_eq!(parse_colour("White"), Some(Colour::WHITE));
        assert_eq!(parse_colour("inherit"), None);
        assert_eq!(
            background_colour("#ffffff url(x.png) no-repeat"),
            Some(Colour::WHITE)
        );
        assert!(Colour::WHITE.contrast(Colour::BLACK) > 20.0);
    }

    #[test]
    fn lengths_convert_to_pixels() {
        assert_eq!(length_px("-9999px"), Some(-9999.0));
        assert_eq!(length_px("0"), Some(0.0));
        assert_eq!(length_px("0em"), Some(0.0));
        assert_eq!(length_px("1pt"), Some(4.0 / 3.0));
        assert_eq!(length_px("50%"), None);
    }
}
