//! `users.labels.list`: the mailbox's labels, system and user.
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users.labels/list>.
//! One answer holds every label (no paging); each `Label` there carries only `id`, `name`,
//! `messageListVisibility`, `labelListVisibility` and `type` (`system` or `user`). A label's id
//! is stable across renames (user labels look like `Label_12`; system labels are their names,
//! `DRAFT`, `INBOX`, …). Scopes: mail.google.com, gmail.modify, gmail.readonly, gmail.labels,
//! gmail.metadata; 1 quota unit (<https://developers.google.com/gmail/api/reference/quota>).

use crate::client::{Call, GmailClient};
use crate::error::Result;
use crate::quota::Method;
use crate::wire;

/// Whether Gmail made a label or the owner did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// Gmail's own (`DRAFT`, `INBOX`, `SENT`, `CATEGORY_…`).
    System,
    /// Made by the owner or a client (an agent may make its own).
    User,
}

impl LabelKind {
    /// `system` or `user`, as Gmail writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelKind::System => "system",
            LabelKind::User => "user",
        }
    }
}

/// One label of the mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The stable id (`Label_12`, `DRAFT`).
    pub id: String,
    /// The name the owner sees (`Agents/Billing`); it may change.
    pub name: String,
    /// System or user.
    pub kind: LabelKind,
}

impl GmailClient {
    /// Every label of the mailbox (`labels.list`, 1 unit).
    pub async fn list_labels(&self) -> Result<Vec<Label>> {
        let answer: wire::ListLabelsResponse = self
            .execute(&Call::get(Method::LabelsList, "/labels"))
            .await?;
        Ok(answer.labels.into_iter().map(label).collect())
    }
}

fn label(label: wire::Label) -> Label {
    // Anything but an explicit `user` is Gmail's: a label of unknown kind is never offered as
    // one the owner sorts mail by.
    let kind = match label.kind.as_deref() {
        Some(kind) if kind.eq_ignore_ascii_case("user") => LabelKind::User,
        _ => LabelKind::System,
    };
    Label {
        id: label.id,
        name: label.name,
        kind,
    }
}
