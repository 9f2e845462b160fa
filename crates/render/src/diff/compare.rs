//! Comparing the parts of two versions: words, addresses, the HTML's words and markup, header
//! lines and raw bytes, and matching up items that moved.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::changes::*;
use crate::text;
use crate::view::{Address, ReviewView};

/// A word diff that would take longer than this falls back to coarser chunks; a review must
/// never hang on a pathological pair of texts.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// The HTML's words and markup, when the text diff does not already say it.
pub(super) fn compare_html(old: &ReviewView, new: &ReviewView, diff: &mut VersionDiff) {
    // HTML made from the text part shows nothing the text diff does not.
    if old.html_derived && new.html_derived {
        return;
    }
    let (old_body, new_body) = (body_fragment(&old.html_body), body_fragment(&new.html_body));
    if old_body == new_body {
        return;
    }
    let (old_words, new_words) = (text::html_to_text(old_body), text::html_to_text(new_body));
    if old_words != new_words {
        // A text body made from the HTML already shows these words, unless its own converter
        // missed the change.
        let text_is_the_html = old.text_derived && new.text_derived && diff.text_changed;
        if !text_is_the_html {
            diff.html_text = word_diff(&old_words, &new_words);
            diff.html_text_changed = true;
        }
    } else if diff.links.is_empty()
        && diff.remote_added.is_empty()
        && diff.remote_removed.is_empty()
    {
        diff.html_markup_changed = true;
    }
}

/// The part of a rendered document between `<body>` and `</body>`: the head only carries the
/// review's own policy and style.
fn body_fragment(document: &str) -> &str {
    let start = document.find("<body>").map_or(0, |i| i + "<body>".len());
    let end = document
        .rfind("</body>")
        .unwrap_or(document.len())
        .max(start);
    &document[start..end]
}

pub(super) fn word_diff(old: &str, new: &str) -> Vec<TextChange> {
    let mut runs: Vec<TextChange> = Vec::new();
    let words = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_words(old, new);
    for change in words.iter_all_changes() {
        let kind = match change.tag() {
            ChangeTag::Equal => ChangeKind::Equal,
            ChangeTag::Delete => ChangeKind::Removed,
            ChangeTag::Insert => ChangeKind::Added,
        };
        match runs.last_mut() {
            Some(last) if last.kind == kind => last.text.push_str(change.value()),
            _ => runs.push(TextChange {
                kind,
                text: change.value().to_owned(),
            }),
        }
    }
    runs
}

pub(super) fn address_change(old: &[Address], new: &[Address]) -> Option<AddressChange> {
    (old != new).then(|| AddressChange {
        old: old.to_vec(),
        new: new.to_vec(),
    })
}

/// One header line, unfolded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HeaderLine {
    pub(super) name: String,
    pub(super) value: String,
}

/// Headers added, removed or changed, pairing same-named headers in order.
pub(super) fn header_changes(old: &[HeaderLine], new: &[HeaderLine]) -> Vec<HeaderChange> {
    let matched = match_up(
        old,
        new,
        |a, b| a.name.eq_ignore_ascii_case(&b.name) && a.value == b.value,
        |a, b| a.name.eq_ignore_ascii_case(&b.name),
    );
    matched
        .changed
        .into_iter()
        .map(|(o, n)| HeaderChange {
            name: n.name,
            old: Some(o.value),
            new: Some(n.value),
        })
        .chain(matched.removed.into_iter().map(|o| HeaderChange {
            name: o.name,
            old: Some(o.value),
            new: None,
        }))
        .chain(matched.added.into_iter().map(|n| HeaderChange {
            name: n.name,
            old: None,
            new: Some(n.value),
        }))
        .collect()
}

pub(super) fn raw<'a>(bytes: DraftBytes<'a>) -> &'a [u8] {
    match bytes {
        DraftBytes::Message(raw) => raw,
        DraftBytes::Text(text) => text.as_bytes(),
    }
}

/// The header lines of a message, unfolded, and its body bytes. Read from the bytes as they
/// are (not as repaired for display): the diff is about what leaves. A muster reply has no
/// headers; all of it is body.
pub(super) fn split_message(bytes: DraftBytes<'_>) -> (Vec<HeaderLine>, &[u8]) {
    let raw = match bytes {
        DraftBytes::Message(raw) => raw,
        DraftBytes::Text(text) => return (Vec::new(), text.as_bytes()),
    };
    let end = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| find(raw, sep).map(|at| (at, at + sep.len())))
        .min();
    let (head, body) = match end {
        Some((head_end, body_start)) => (&raw[..head_end], &raw[body_start..]),
        None => (raw, &raw[raw.len()..]),
    };
    let mut lines: Vec<HeaderLine> = Vec::new();
    for line in String::from_utf8_lossy(head).split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with([' ', '\t']) {
            if let Some(last) = lines.last_mut() {
                last.value.push_str(line);
            }
        } else if let Some((name, value)) = line.split_once(':') {
            lines.push(HeaderLine {
                name: name.trim().to_owned(),
                value: value.to_owned(),
            });
        }
    }
    for line in &mut lines {
        line.value = line.value.trim().to_owned();
    }
    (lines, body)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `old` and `new` matched up: equal pairs (by `same`) drop out, leftovers that are
/// counterparts (by `counterpart`, e.g. the same name) pair as changed, in order.
pub(super) struct Matched<T> {
    pub(super) changed: Vec<(T, T)>,
    pub(super) removed: Vec<T>,
    pub(super) added: Vec<T>,
}

pub(super) fn match_up<T: Clone>(
    old: &[T],
    new: &[T],
    same: impl Fn(&T, &T) -> bool,
    counterpart: impl Fn(&T, &T) -> bool,
) -> Matched<T> {
    let mut new_used = vec![false; new.len()];
    let mut left = Vec::new();
    for o in old {
        match (0..new.len()).find(|&i| !new_used[i] && same(o, &new[i])) {
            Some(i) => new_used[i] = true,
            None => left.push(o),
        }
    }
    let mut matched = Matched {
        changed: Vec::new(),
        removed: Vec::new(),
        added: Vec::new(),
    };
    for o in left {
        match (0..new.len()).find(|&i| !new_used[i] && counterpart(o, &new[i])) {
            Some(i) => {
                new_used[i] = true;
                matched.changed.push((o.clone(), new[i].clone()));
            }
            None => matched.removed.push(o.clone()),
        }
    }
    matched.added = new
        .iter()
        .zip(new_used)
        .filter(|(_, used)| !used)
        .map(|(n, _)| n.clone())
        .collect();
    matched
}
