//! Characters a recipient does not see but a program reads, or that reorder what is shown:
//! tag characters ("ASCII smuggling"), bidi controls, invisible format characters and
//! variation selectors outside the sequences that use them.
//!
//! Each is judged in its context, because the same characters are ordinary elsewhere: a soft
//! hyphen inside a word, a zero-width joiner between the letters of a script that joins
//! (Arabic, Persian, the Indic scripts) or inside an emoji sequence, a variation selector after
//! an emoji or an ideograph, the tag letters of a subdivision flag (🏴 + tags + cancel tag),
//! left-to-right and right-to-left marks in text that has right-to-left letters, and padding
//! (a run of one kind of zero-width character next to whitespace, as preheaders use).
//!
//! Found characters are named in an `invisible_characters` flag (with where they are) and
//! replaced in the review's renderings by visible `⟨U+202E⟩` markers: the markers are the
//! review's addition, never what leaves.

mod html;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::escape_html;
use crate::flag::{Flag, FlagKind};

pub(crate) use html::{document_order, scan_html};

/// Characters a recipient does not see (or that reorder what they see), found in one place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InvisibleCharacters {
    /// Where: "the subject", "the HTML body", "the display name of ana@example.com"…
    pub place: String,
    /// Each kind found, e.g. `U+202E right-to-left override (×2)`, or a reordering element
    /// with what it shows and what programs read.
    pub found: Vec<String>,
}

/// What a suspicious character is.
fn name_of(c: char) -> &'static str {
    match c {
        '\u{e0000}'..='\u{e007f}' => "tag character",
        '\u{202a}' => "left-to-right embedding",
        '\u{202b}' => "right-to-left embedding",
        '\u{202c}' => "pop directional formatting",
        '\u{202d}' => "left-to-right override",
        '\u{202e}' => "right-to-left override",
        '\u{2066}' => "left-to-right isolate",
        '\u{2067}' => "right-to-left isolate",
        '\u{2068}' => "first strong isolate",
        '\u{2069}' => "pop directional isolate",
        '\u{200e}' => "left-to-right mark",
        '\u{200f}' => "right-to-left mark",
        '\u{061c}' => "Arabic letter mark",
        '\u{200b}' => "zero-width space",
        '\u{200c}' => "zero-width non-joiner",
        '\u{200d}' => "zero-width joiner",
        '\u{2060}' => "word joiner",
        '\u{feff}' => "zero-width no-break space",
        '\u{00ad}' => "soft hyphen",
        '\u{034f}' => "combining grapheme joiner",
        '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' => "variation selector",
        '\u{180b}'..='\u{180f}' => "Mongolian variation selector",
        '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' => "Hangul filler",
        _ => "invisible format character",
    }
}

/// How a character is judged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Plain,
    /// Flagged wherever it is.
    Always,
    /// Left-to-right / right-to-left / Arabic letter mark: ordinary in right-to-left text.
    Mark,
    /// Zero-width characters judged by their neighbours (see the module docs).
    ZeroWidth,
    VariationSelector,
    Tag,
}

fn class(c: char) -> Class {
    match c {
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Class::Always,
        '\u{200e}' | '\u{200f}' | '\u{061c}' => Class::Mark,
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{00ad}' | '\u{034f}' => {
            Class::ZeroWidth
        }
        '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' | '\u{180b}'..='\u{180d}' => {
            Class::VariationSelector
        }
        '\u{e0000}'..='\u{e007f}' => Class::Tag,
        '\u{2061}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{1d173}'..='\u{1d17a}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{180e}'
        | '\u{180f}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{ffa0}' => Class::Always,
        _ => Class::Plain,
    }
}

/// A letter of a right-to-left script.
pub(crate) fn is_rtl_letter(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08ff}' | '\u{fb1d}'..='\u{fdff}' | '\u{fe70}'..='\u{fefc}'
        | '\u{10800}'..='\u{10fff}' | '\u{1e800}'..='\u{1efff}')
        && c.is_alphabetic()
}

/// Scripts whose spelling uses the zero-width joiner and non-joiner: Arabic (Persian, Urdu),
/// Syriac, N'Ko, the Indic scripts through Sinhala, Tibetan, Myanmar, Khmer, Mongolian.
fn joins(c: char) -> bool {
    matches!(c, '\u{0600}'..='\u{08ff}' | '\u{0900}'..='\u{0dff}' | '\u{0f00}'..='\u{109f}'
        | '\u{1780}'..='\u{18af}' | '\u{a8e0}'..='\u{a8ff}' | '\u{fb50}'..='\u{fdff}'
        | '\u{fe70}'..='\u{fefc}')
}

/// Scripts written without spaces, where a zero-width space marks where a line may break.
fn unspaced(c: char) -> bool {
    matches!(c, '\u{0e00}'..='\u{0eff}' | '\u{1000}'..='\u{109f}' | '\u{1780}'..='\u{17ff}'
        | '\u{3000}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{ac00}'..='\u{d7af}')
}

/// Characters with an emoji presentation a variation selector may choose (approximately the
/// Unicode emoji set: pictographs, dingbats, arrows, keycap bases).
fn emoji_base(c: char) -> bool {
    matches!(c, '\u{1f000}'..='\u{1faff}' | '\u{2600}'..='\u{27bf}' | '\u{2300}'..='\u{23ff}'
        | '\u{2b00}'..='\u{2bff}' | '\u{2190}'..='\u{21ff}' | '\u{25a0}'..='\u{25ff}'
        | '\u{2900}'..='\u{297f}' | '\u{3030}' | '\u{303d}' | '\u{3297}' | '\u{3299}'
        | '\u{00a9}' | '\u{00ae}' | '\u{203c}' | '\u{2049}' | '\u{2122}' | '\u{2139}'
        | '\u{24c2}' | '0'..='9' | '#' | '*')
}

/// Characters with standardized or ideographic variation sequences (CJK ideographs, math
/// operators, Myanmar, Phags-pa, Egyptian hieroglyphs).
fn variant_base(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{20000}'..='\u{3ffff}'
        | '\u{2200}'..='\u{2aff}' | '\u{1000}'..='\u{109f}' | '\u{a840}'..='\u{a87f}'
        | '\u{13000}'..='\u{1345f}')
}

/// Which characters of `chars` are suspicious. `rtl` says whether the place's text has
/// right-to-left letters (where directional marks are ordinary).
fn suspicious(chars: &[char], rtl: bool) -> Vec<bool> {
    let mut out = vec![false; chars.len()];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match class(c) {
            Class::Plain => {}
            Class::Always => out[i] = true,
            Class::Mark => out[i] = !rtl,
            Class::VariationSelector => {
                let prev = i.checked_sub(1).map(|p| chars[p]);
                let ok = match (c, prev) {
                    ('\u{fe0e}' | '\u{fe0f}', Some(p)) => emoji_base(p) || variant_base(p),
                    ('\u{fe00}'..='\u{fe0d}' | '\u{e0100}'..='\u{e01ef}', Some(p)) => {
                        variant_base(p)
                    }
                    ('\u{180b}'..='\u{180d}', Some(p)) => ('\u{1820}'..='\u{18af}').contains(&p),
                    _ => false,
                };
                out[i] = !ok;
            }
            Class::Tag => {
                // A subdivision flag: 🏴, tag letters or digits, cancel tag.
                let start = (0..i).rev().find(|&p| class(chars[p]) != Class::Tag);
                let end = (i..chars.len()).find(|&p| class(chars[p]) != Class::Tag);
                let end = end.unwrap_or(chars.len());
                let start_at = start.map_or(0, |s| s + 1);
                let run = &chars[start_at..end];
                let flag = start.is_some_and(|s| chars[s] == '\u{1f3f4}')
                    && (2..=7).contains(&run.len())
                    && run.last() == Some(&'\u{e007f}')
                    && run[..run.len() - 1].iter().all(
                        |&t| matches!(t, '\u{e0030}'..='\u{e0039}' | '\u{e0061}'..='\u{e007a}'),
                    );
                for flagged in &mut out[start_at..end] {
                    *flagged = !flag;
                }
                i = end;
                continue;
            }
            Class::ZeroWidth => {
                let end = (i..chars.len())
                    .find(|&p| class(chars[p]) != Class::ZeroWidth)
                    .unwrap_or(chars.len());
                judge_zero_width(chars, i, end, &mut out);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Judges the run `chars[start..end]` of zero-width characters by its neighbours.
fn judge_zero_width(chars: &[char], start: usize, end: usize, out: &mut [bool]) {
    let prev = start.checked_sub(1).map(|p| chars[p]);
    let next = chars.get(end).copied();
    let run = &chars[start..end];
    let inside =
        matches!((prev, next), (Some(p), Some(n)) if !p.is_whitespace() && !n.is_whitespace());
    if !inside {
        // Padding carries nothing unless it mixes kinds, which is how zero-width text encodes
        // bits.
        let mut kinds: Vec<char> = run.to_vec();
        kinds.sort_unstable();
        kinds.dedup();
        let encodes = run.len() >= 4 && kinds.len() >= 2;
        let bom_at_start = start == 0 && run == ['\u{feff}'];
        for flagged in &mut out[start..end] {
            *flagged = encodes && !bom_at_start;
        }
        return;
    }
    let (p, n) = (prev.unwrap_or(' '), next.unwrap_or(' '));
    for (k, &c) in run.iter().enumerate() {
        let single = run.len() == 1;
        let ordinary = single
            && match c {
                '\u{00ad}' => p.is_alphabetic() && n.is_alphabetic(),
                '\u{200c}' => joins(p) && joins(n),
                '\u{200d}' => {
                    (joins(p) && joins(n)) || ((emoji_base(p) || p == '\u{fe0f}') && emoji_base(n))
                }
                '\u{200b}' => unspaced(p) || unspaced(n),
                _ => false,
            };
        out[start + k] = !ordinary;
    }
}

/// Counts the suspicious characters of `text`, by character.
pub(crate) fn find(text: &str, rtl: bool) -> BTreeMap<char, usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = BTreeMap::new();
    for (c, bad) in chars.iter().zip(suspicious(&chars, rtl)) {
        if bad {
            *found.entry(*c).or_insert(0) += 1;
        }
    }
    found
}

/// Whether `text` has right-to-left letters.
pub(crate) fn has_rtl(text: &str) -> bool {
    text.chars().any(is_rtl_letter)
}

/// The finding for `place`, if `text` holds any suspicious character.
pub(crate) fn check(place: &str, text: &str) -> Option<InvisibleCharacters> {
    let found = find(text, has_rtl(text));
    (!found.is_empty()).then(|| InvisibleCharacters {
        place: place.to_owned(),
        found: describe(&found),
    })
}

/// `U+202E right-to-left override (×2)` for each kind; tag characters are also spelled out,
/// since they carry ASCII text.
pub(crate) fn describe(found: &BTreeMap<char, usize>) -> Vec<String> {
    let mut out: Vec<String> = found
        .iter()
        .filter(|(c, _)| class(**c) != Class::Tag)
        .map(|(c, n)| {
            let times = if *n > 1 {
                format!(" (\u{d7}{n})")
            } else {
                String::new()
            };
            format!("U+{:04X} {}{times}", *c as u32, name_of(*c))
        })
        .collect();
    let tags: usize = found
        .iter()
        .filter(|(c, _)| class(**c) == Class::Tag)
        .map(|(_, n)| n)
        .sum();
    if tags > 0 {
        let first = found.keys().find(|c| class(**c) == Class::Tag).copied();
        let first = first.map_or(0xe0000, |c| c as u32);
        out.push(format!(
            "U+{first:04X}\u{2026} tag characters (\u{d7}{tags}), invisible text a program reads"
        ));
    }
    out
}

/// The marker the review shows in place of a suspicious character.
fn marker(c: char) -> String {
    format!("\u{27e8}U+{:04X}\u{27e9}", c as u32)
}

/// `text` with each suspicious character replaced by its visible marker.
pub(crate) fn mark_text(text: &str) -> String {
    let rtl = has_rtl(text);
    let chars: Vec<char> = text.chars().collect();
    let bad = suspicious(&chars, rtl);
    if !bad.contains(&true) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 32);
    for (c, bad) in chars.iter().zip(bad) {
        if bad {
            out.push_str(&marker(*c));
        } else {
            out.push(*c);
        }
    }
    out
}

/// A sanitized fragment (html5ever's serialization) with each suspicious character of its
/// text shown as a highlighted marker. Attribute values are left alone.
pub(crate) fn mark_fragment(fragment: &str, rtl: bool) -> String {
    if !fragment.chars().any(|c| class(c) != Class::Plain) {
        return fragment.to_owned();
    }
    let mut out = String::with_capacity(fragment.len() + 64);
    let mut rest = fragment;
    while !rest.is_empty() {
        let text_end = rest.find('<').unwrap_or(rest.len());
        mark_run(&rest[..text_end], rtl, &mut out);
        rest = &rest[text_end..];
        if rest.is_empty() {
            break;
        }
        // A tag: up to the '>' outside a double-quoted attribute value.
        let mut quoted = false;
        let mut tag_end = rest.len();
        for (k, b) in rest.bytes().enumerate() {
            match b {
                b'"' => quoted = !quoted,
                b'>' if !quoted => {
                    tag_end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.push_str(&rest[..tag_end]);
        rest = &rest[tag_end..];
    }
    out
}

fn mark_run(escaped: &str, rtl: bool, out: &mut String) {
    if !escaped.chars().any(|c| class(c) != Class::Plain) {
        out.push_str(escaped);
        return;
    }
    let text = super::text::decode_entities(escaped);
    let chars: Vec<char> = text.chars().collect();
    let flagged = suspicious(&chars, rtl);
    if !flagged.contains(&true) {
        // Ordinary soft hyphens, joiners, selectors: the run stays exactly as serialized.
        out.push_str(escaped);
        return;
    }
    for (c, bad) in chars.iter().zip(flagged) {
        if bad {
            out.push_str(&format!(
                "<mark title=\"{}: not shown to recipients; marked by the review\">{}</mark>",
                escape_html(name_of(*c)),
                marker(*c)
            ));
        } else if *c == '\u{a0}' {
            out.push_str("&nbsp;");
        } else {
            out.push_str(&escape_html(&c.to_string()));
        }
    }
}

/// The `invisible_characters` flags, one per place.
pub(crate) fn flags(found: &[InvisibleCharacters]) -> Vec<Flag> {
    found
        .iter()
        .map(|f| Flag {
            kind: FlagKind::InvisibleCharacters,
            about: f.place.clone(),
            explanation: format!(
                "{} holds characters recipients do not see but programs read, or that \
                 reorder what is shown: {}. The review shows them as \u{27e8}U+\u{2026}\u{27e9} \
                 markers.",
                capitalized(&f.place),
                f.found.join("; ")
            ),
            recipients: Vec::new(),
        })
        .collect()
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(text: &str) -> Vec<char> {
        find(text, has_rtl(text)).into_keys().collect()
    }

    #[test]
    fn ordinary_uses_are_not_flagged() {
        for text in [
            "Zusammen\u{ad}arbeit",
            "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}",
            "\u{915}\u{94d}\u{200d}\u{937}",
            "\u{2764}\u{fe0f} \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}",
            "\u{5e9}\u{5dc}\u{5d5}\u{5dd} \u{200f}123",
            "\u{feff}Hello",
            "Preview\u{a0}\u{200c}\u{a0}\u{200c}\u{a0}\u{34f}\u{200c}\u{a0}",
            "\u{845b}\u{e0100}",
        ] {
            assert!(flagged(text).is_empty(), "{text:?}: {:?}", flagged(text));
        }
    }

    #[test]
    fn smuggling_and_reordering_are_flagged() {
        assert_eq!(
            flagged("Pay \u{202e}0987\u{202c}"),
            ['\u{202c}', '\u{202e}']
        );
        assert_eq!(flagged("hi\u{e0069}\u{e0067}"), ['\u{e0067}', '\u{e0069}']);
        assert_eq!(flagged("pay\u{200b}pal"), ['\u{200b}']);
        assert_eq!(flagged("a\u{fe01}b"), ['\u{fe01}']);
        assert_eq!(
            flagged("\u{1f600}\u{e0101}\u{e0102}"),
            ['\u{e0101}', '\u{e0102}']
        );
        assert_eq!(flagged("total \u{200f}42"), ['\u{200f}']);
        assert_eq!(
            flagged("x \u{200b}\u{200c}\u{200b}\u{200d} y"),
            ['\u{200b}', '\u{200c}', '\u{200d}']
        );
    }

    #[test]
    fn ordinary_characters_leave_the_fragment_as_serialized() {
        let html = "<p title=\"a\">Zusammen\u{ad}arbeit &amp; \"so\"</p>";
        assert_eq!(mark_fragment(html, false), html);
    }

    #[test]
    fn markers_replace_flagged_characters_in_text_and_html() {
        assert_eq!(mark_text("a\u{202e}b"), "a\u{27e8}U+202E\u{27e9}b");
        let html = mark_fragment("<p title=\"x\u{202e}\">a&amp;\u{202e}b</p>", false);
        assert!(
            html.starts_with("<p title=\"x\u{202e}\">a&amp;<mark title="),
            "{html}"
        );
        assert!(
            html.ends_with("\u{27e8}U+202E\u{27e9}</mark>b</p>"),
            "{html}"
        );
    }
}
