//! The invisible characters of what the review lists beside the body: the subject, the
//! display names and addresses, the attachment names.

use super::ReviewView;
use crate::unicode::{check, mark_text};

/// Adds the invisible characters of the subject, the display names and addresses, and the
/// attachment names to the body's.
pub(crate) fn check_headers(view: &mut ReviewView) {
    let mut found = Vec::new();
    found.extend(
        view.subject
            .as_deref()
            .and_then(|s| check("the subject", s)),
    );
    let people = view
        .from
        .iter()
        .chain(&view.sender)
        .chain(&view.reply_to)
        .chain(&view.to)
        .chain(&view.cc)
        .chain(&view.bcc);
    for a in people {
        let place = format!("the display name or address of {}", a.email);
        let both = format!("{} {}", a.name.as_deref().unwrap_or(""), a.email);
        if let Some(f) = check(&place, &both) {
            if !found.contains(&f) {
                found.push(f);
            }
        }
    }
    for a in &view.attachments {
        if let Some(name) = &a.file_name {
            let place = format!("the attachment name \u{201c}{}\u{201d}", mark_text(name));
            found.extend(check(&place, name));
        }
    }
    found.append(&mut view.invisible_characters);
    view.invisible_characters = found;
}
