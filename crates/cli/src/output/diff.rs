//! Printing a version diff: every change on its own indented line, the words of the text and
//! of the HTML marked `[-removed-]` and `{+added+}`.

use countersign_core::render::VersionDiff;

use super::addresses;

/// Every change of a version diff, one indented line each; the words of the text and of the
/// HTML marked `[-removed-]` and `{+added+}`.
pub(super) fn version_diff(diff: &VersionDiff) {
    if diff.unchanged {
        println!("  No change.");
    }
    if let Some(bytes) = &diff.bytes_only {
        println!("  {}", bytes.summary);
    }
    for (label, change) in [
        ("From", &diff.from),
        ("Sender", &diff.sender),
        ("Reply-To", &diff.reply_to),
    ] {
        if let Some(change) = change {
            println!(
                "  {label}: {} -> {}",
                mailboxes(&change.old),
                mailboxes(&change.new)
            );
        }
    }
    if let Some(subject) = &diff.subject {
        println!(
            "  Subject: {} -> {}",
            subject.old.as_deref().unwrap_or("(none)"),
            subject.new.as_deref().unwrap_or("(none)")
        );
    }
    for (sign, changes) in [
        ("+", &diff.recipients_added),
        ("-", &diff.recipients_removed),
    ] {
        for change in changes {
            println!(
                "  {sign} {}: {}",
                change.field,
                addresses(std::slice::from_ref(&change.address))
            );
        }
    }
    for (sign, changes) in [
        ("+", &diff.attachments_added),
        ("-", &diff.attachments_removed),
    ] {
        for change in changes {
            println!("  {sign} attachment {}", attachment_label(change));
        }
    }
    for change in &diff.attachments_changed {
        println!(
            "  Attachment changed: {} -> {}",
            attachment_label(&change.old),
            attachment_label(&change.new)
        );
    }
    for link in &diff.links {
        match (&link.old_href, &link.new_href) {
            (Some(old), Some(new)) => println!("  Link \"{}\": {old} -> {new}", link.text),
            (None, Some(new)) => println!("  + link \"{}\": {new}", link.text),
            (Some(old), None) => println!("  - link \"{}\": {old}", link.text),
            (None, None) => {}
        }
    }
    for url in &diff.remote_added {
        println!("  + remote content {url}");
    }
    for url in &diff.remote_removed {
        println!("  - remote content {url}");
    }
    for header in &diff.headers {
        match (&header.old, &header.new) {
            (Some(old), Some(new)) => println!("  Header {}: {old} -> {new}", header.name),
            (None, Some(new)) => println!("  + header {}: {new}", header.name),
            (Some(old), None) => println!("  - header {}: {old}", header.name),
            (None, None) => {}
        }
    }
    if diff.html_markup_changed {
        println!("  The HTML's styling or layout changed (same words, links and remote content).");
    }
    if diff.text_changed {
        println!("  Text: {}", marked_words(&diff.text));
    }
    if diff.html_text_changed {
        println!("  HTML words: {}", marked_words(&diff.html_text));
    }
}

fn mailboxes(list: &[countersign_core::render::Address]) -> String {
    if list.is_empty() {
        "(none)".to_owned()
    } else {
        addresses(list)
    }
}

fn attachment_label(a: &countersign_core::render::diff::AttachmentChange) -> String {
    format!(
        "{} ({}, {} bytes, sha256 {})",
        a.file_name.as_deref().unwrap_or("(no name)"),
        a.declared_type.as_deref().unwrap_or("no declared type"),
        a.size,
        &a.sha256[..a.sha256.len().min(12)]
    )
}

/// Changed words in the wdiff style; unchanged runs as they are.
fn marked_words(changes: &[countersign_core::render::diff::TextChange]) -> String {
    use countersign_core::render::diff::ChangeKind;
    changes
        .iter()
        .map(|c| match c.kind {
            ChangeKind::Equal => c.text.clone(),
            ChangeKind::Removed => format!("[-{}-]", c.text),
            ChangeKind::Added => format!("{{+{}+}}", c.text),
        })
        .collect()
}
