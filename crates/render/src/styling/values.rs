//! CSS values the hidden-text reader evaluates: colours (every notation, gradients averaged),
//! opacities and lengths. Sheets and selectors are read by `crate::styling`.

/// Removes `/* … */` comments (an unclosed one runs to the end, as in browsers).
pub(crate) fn strip_comments(css: &str) -> String {
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

/// An sRGB colour with alpha in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Colour {
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

    /// This colour painted with its alpha over an opaque `under`.
    pub fn over(self, under: Colour) -> Colour {
        let a = self.alpha.clamp(0.0, 1.0);
        let mix = |top: u8, bottom: u8| {
            (f32::from(top) * a + f32::from(bottom) * (1.0 - a)).round() as u8
        };
        Colour {
            r: mix(self.r, under.r),
            g: mix(self.g, under.g),
            b: mix(self.b, under.b),
            alpha: 1.0,
        }
    }

    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }
}

/// Reads a CSS colour value (or an HTML `color`/`bgcolor` attribute); `None` when unknown.
pub(crate) fn parse_colour(value: &str) -> Option<Colour> {
    let v = value.trim().to_ascii_lowercase();
    if v == "transparent" {
        return Some(Colour {
            alpha: 0.0,
            ..Colour::BLACK
        });
    }
    // Every CSS named colour (cssparser's table), system colours excepted: those are the
    // recipient's own theme, which the review cannot know.
    if let Ok((r, g, b)) = cssparser::color::parse_named_color(&v) {
        return Some(Colour::rgb(r, g, b));
    }
    if let Some(hsl) = parse_hsl(&v) {
        return Some(hsl);
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

/// The colour a `background` shorthand paints text on: a gradient's colours averaged (it is
/// drawn over the colour), else the colour it names.
pub(crate) fn background_colour(value: &str) -> Option<Colour> {
    if let Some(stops) = gradient_colours(value) {
        return average(&stops);
    }
    // rgb(…) holds spaces: try the whole value first, then each word.
    parse_colour(value).or_else(|| value.split_whitespace().find_map(parse_colour))
}

/// The colour stops of the first gradient in `value`, when every one is readable.
pub(crate) fn gradient_colours(value: &str) -> Option<Vec<Colour>> {
    let lower = value.to_ascii_lowercase();
    let at = lower.find("gradient(")?;
    let args = &lower[at + "gradient(".len()..];
    // The arguments up to the matching parenthesis, split at top-level commas.
    let mut depth = 0usize;
    let mut parts = vec![String::new()];
    for c in args.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => break,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    let mut stops = Vec::new();
    for part in &parts {
        let part = part.trim();
        // The direction or shape (`to right`, `45deg`, `circle at center`) is no colour.
        if part.starts_with("to ")
            || part.ends_with("deg")
            || part.ends_with("turn")
            || part.ends_with("rad")
            || part.starts_with("circle")
            || part.starts_with("ellipse")
            || part.starts_with("at ")
            || part.starts_with("from ")
        {
            continue;
        }
        // A stop is a colour and optional positions: the colour may hold spaces (`rgb(0 0 0)`).
        let colour = parse_colour(part).or_else(|| {
            let end = part.rfind(')').map_or_else(
                || part.split_whitespace().next().map_or(0, str::len),
                |p| p + 1,
            );
            parse_colour(&part[..end])
        })?;
        stops.push(colour);
    }
    (!stops.is_empty()).then_some(stops)
}

fn average(colours: &[Colour]) -> Option<Colour> {
    let n = colours.len() as f32;
    let mean = |f: fn(&Colour) -> f32| colours.iter().map(f).sum::<f32>() / n;
    (!colours.is_empty()).then(|| Colour {
        r: mean(|c| f32::from(c.r)).round() as u8,
        g: mean(|c| f32::from(c.g)).round() as u8,
        b: mean(|c| f32::from(c.b)).round() as u8,
        alpha: mean(|c| c.alpha),
    })
}

/// `hsl()` / `hsla()` with commas or spaces, hue in degrees (unit optional).
fn parse_hsl(v: &str) -> Option<Colour> {
    let args = v
        .strip_prefix("hsla(")
        .or_else(|| v.strip_prefix("hsl("))?
        .strip_suffix(')')?;
    let parts: Vec<&str> = args
        .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let hue: f32 = parts.first()?.trim_end_matches("deg").parse().ok()?;
    let percent =
        |p: &str| -> Option<f32> { Some(p.strip_suffix('%')?.parse::<f32>().ok()? / 100.0) };
    let (s, l) = (
        percent(parts.get(1)?)?.clamp(0.0, 1.0),
        percent(parts.get(2)?)?.clamp(0.0, 1.0),
    );
    let alpha = match parts.get(3) {
        Some(a) => opacity(a)?,
        None => 1.0,
    };
    // CSS Color 4, section 7.1: hsl to sRGB.
    let f = |n: f32| {
        let k = (n + hue.rem_euclid(360.0) / 30.0) % 12.0;
        let a = s * l.min(1.0 - l);
        l - a * (k - 3.0).min(9.0 - k).clamp(-1.0, 1.0)
    };
    let byte = |x: f32| (x * 255.0).round().clamp(0.0, 255.0) as u8;
    Some(Colour {
        r: byte(f(0.0)),
        g: byte(f(8.0)),
        b: byte(f(4.0)),
        alpha,
    })
}

/// An opacity or alpha: `0.3`, `30%`.
pub(crate) fn opacity(v: &str) -> Option<f32> {
    let v = v.trim();
    let value = match v.strip_suffix('%') {
        Some(p) => p.trim().parse::<f32>().ok()? / 100.0,
        None => v.parse::<f32>().ok()?,
    };
    Some(value.clamp(0.0, 1.0))
}

/// A length in CSS pixels: `Some(px)` for absolute lengths and for any zero; `None` for
/// relative non-zero lengths and anything unreadable.
pub(crate) fn length_px(value: &str) -> Option<f32> {
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
        assert_eq!(parse_colour("hsl(0, 0%, 100%)"), Some(Colour::WHITE));
        assert_eq!(
            parse_colour("hsl(0deg 0% 0% / 0)").map(|c| c.alpha),
            Some(0.0)
        );
        assert_eq!(
            parse_colour("darkslategray").map(Colour::hex).as_deref(),
            Some("#2f4f4f")
        );
        assert_eq!(parse_colour("Canvas"), None);
        assert_eq!(
            background_colour("linear-gradient(to right, #fff 0%, #ffffff 100%)"),
            Some(Colour::WHITE)
        );
        assert_eq!(
            background_colour("#ff0000 linear-gradient(#000, #000)"),
            Some(Colour::BLACK)
        );
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
