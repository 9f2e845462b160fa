//! Comparing two versions of a draft: a redraft against the refused one, or a Gmail draft the
//! agent updated since the owner first looked.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

use super::view::{Address, ReviewView};

/// Whether a piece of text stayed, went or came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// In both versions.
    Equal,
    /// Only in the old version.
    Removed,
    /// Only in the new version.
    Added,
}

/// A run of words with the same [`ChangeKind`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TextChange {
    /// What happened to this run.
    pub kind: ChangeKind,
    /// The text, whitespace included, so the runs concatenate back to either version.
    pub text: String,
}

/// A recipient added or removed, with the header it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecipientChange {
    /// `to`, `cc` or `bcc`.
    pub field: String,
    /// The recipient.
    pub address: Address,
}

/// An attachment added or removed; two attachments are the same when name and bytes match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentChange {
    /// The file name.
    pub file_name: Option<String>,
    /// SHA-256 of the content.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

/// The subject before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SubjectChange {
    /// Before.
    pub old: Option<String>,
    /// After.
    pub new: Option<String>,
}

/// What changed between two versions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VersionDiff {
    /// Word-level changes of the text body, in order.
    pub text: Vec<TextChange>,
    /// The text bodies differ.
    pub text_changed: bool,
    /// Recipients only in the new version.
    pub recipients_added: Vec<RecipientChange>,
    /// Recipients only in the old version.
    pub recipients_removed: Vec<RecipientChange>,
    /// Attachments only in the new version.
    pub attachments_added: Vec<AttachmentChange>,
    /// Attachments only in the old version.
    pub attachments_removed: Vec<AttachmentChange>,
    /// Set when the subject changed.
    pub subject: Option<SubjectChange>,
    /// Nothing above changed.
    pub unchanged: bool,
}

/// A word diff that would take longer than this falls back to coarser chunks; a review must
/// never hang on a pathological pair of texts.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// Compares two versions of a draft.
pub fn diff_versions(old: &ReviewView, new: &ReviewView) -> VersionDiff {
    let mut diff = VersionDiff {
        text_changed: old.text_body != new.text_body,
        ..VersionDiff::default()
    };
    if diff.text_changed {
        let words = TextDiff::configure()
            .timeout(DIFF_DEADLINE)
            .diff_words(old.text_body.as_str(), new.text_body.as_str());
        for change in words.iter_all_changes() {
            let kind = match change.tag() {
                ChangeTag::Equal => ChangeKind::Equal,
                ChangeTag::Delete => ChangeKind::Removed,
                ChangeTag::Insert => ChangeKind::Added,
            };
            match diff.text.last_mut() {
                Some(last) if last.kind == kind => last.text.push_str(change.value()),
                _ => diff.text.push(TextChange {
                    kind,
                    text: change.value().to_owned(),
                }),
            }
        }
    } else if !old.text_body.is_empty() {
        diff.text.push(TextChange {
            kind: ChangeKind::Equal,
            text: old.text_body.clone(),
        });
    }

    let recipients = |v: &ReviewView| -> Vec<RecipientChange> {
        [("to", &v.to), ("cc", &v.cc), ("bcc", &v.bcc)]
            .into_iter()
            .flat_map(|(field, list)| {
                list.iter().map(move |a| RecipientChange {
                    field: field.to_owned(),
                    address: a.clone(),
                })
            })
            .collect()
    };
    let same_recipient = |a: &RecipientChange, b: &RecipientChange| {
        a.field == b.field && a.address.email.eq_ignore_ascii_case(&b.address.email)
    };
    let (old_r, new_r) = (recipients(old), recipients(new));
    diff.recipients_added = only_in(&new_r, &old_r, same_recipient);
    diff.recipients_removed = only_in(&old_r, &new_r, same_recipient);

    let attachments = |v: &ReviewView| -> Vec<AttachmentChange> {
        v.attachments
            .iter()
            .map(|a| AttachmentChange {
                file_name: a.file_name.clone(),
                sha256: a.sha256.clone(),
                size: a.size,
            })
            .collect()
    };
    let (old_a, new_a) = (attachments(old), attachments(new));
    let same_attachment = |a: &AttachmentChange, b: &AttachmentChange| {
        a.file_name == b.file_name && a.sha256 == b.sha256
    };
    diff.attachments_added = only_in(&new_a, &old_a, same_attachment);
    diff.attachments_removed = only_in(&old_a, &new_a, same_attachment);

    if old.subject != new.subject {
        diff.subject = Some(SubjectChange {
            old: old.subject.clone(),
            new: new.subject.clone(),
        });
    }
    diff.unchanged = !diff.text_changed
        && diff.recipients_added.is_empty()
        && diff.recipients_removed.is_empty()
        && diff.attachments_added.is_empty()
        && diff.attachments_removed.is_empty()
        && diff.subject.is_none();
    diff
}

/// What `these` has that `those` has not, by `same`.
fn only_in<T: Clone>(these: &[T], those: &[T], same: impl Fn(&T, &T) -> bool) -> Vec<T> {
    these
        .iter()
        .filter(|this| !those.iter().any(|that| same(this, that)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> ReviewView {
        ReviewView {
            text_body: text.into(),
            ..ReviewView::default()
        }
    }

    #[test]
    fn a_changed_word_shows_as_removed_then_added() {
        let d = diff_versions(&view("pay 100 EUR today"), &view("pay 900 EUR today"));
        let changed: Vec<(ChangeKind, &str)> = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Equal)
            .map(|c| (c.kind, c.text.as_str()))
            .collect();
        assert_eq!(
            changed,
            [(ChangeKind::Removed, "100"), (ChangeKind::Added, "900")]
        );
        assert!(!d.unchanged);
    }

    #[test]
    fn the_runs_concatenate_back_to_both_versions() {
        let (a, b) = (
            "Hello Ana,\nthe invoice is late.",
            "Hello Ana,\nthe invoice is paid now.",
        );
        let d = diff_versions(&view(a), &view(b));
        let old: String = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Added)
            .map(|c| c.text.as_str())
            .collect();
        let new: String = d
            .text
            .iter()
            .filter(|c| c.kind != ChangeKind::Removed)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!((old.as_str(), new.as_str()), (a, b));
    }

    #[test]
    fn identical_versions_are_unchanged() {
        assert!(diff_versions(&view("same"), &view("same")).unchanged);
    }
}
