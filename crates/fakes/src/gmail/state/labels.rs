//! Labels: Gmail's system labels, user labels made through the control API, a draft's
//! `message.labelIds`, and `messages.modify` with the history records it leaves.
//!
//! References: `users.labels` (<https://developers.google.com/gmail/api/reference/rest/v1/users.labels>),
//! `users.messages.modify` (<https://developers.google.com/gmail/api/reference/rest/v1/users.messages/modify>),
//! `users.history.list` (<https://developers.google.com/gmail/api/reference/rest/v1/users.history/list>:
//! `labelsAdded` / `labelsRemoved`, each a message and the label ids changed on it).

use super::*;

/// A label of the mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredLabel {
    /// `Label_N` for a user label; the name itself for a system label.
    pub id: String,
    /// What the owner sees.
    pub name: String,
    /// `system` or `user`.
    pub kind: &'static str,
}

/// Gmail's system labels, as `labels.list` lists them in every mailbox.
const SYSTEM: &[&str] = &[
    "CHAT",
    "SENT",
    "INBOX",
    "IMPORTANT",
    "TRASH",
    "DRAFT",
    "SPAM",
    "CATEGORY_FORUMS",
    "CATEGORY_UPDATES",
    "CATEGORY_PERSONAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_SOCIAL",
    "STARRED",
    "UNREAD",
];

pub(super) fn system_labels() -> BTreeMap<String, StoredLabel> {
    SYSTEM
        .iter()
        .map(|id| {
            (
                (*id).to_owned(),
                StoredLabel {
                    id: (*id).to_owned(),
                    name: (*id).to_owned(),
                    kind: "system",
                },
            )
        })
        .collect()
}

impl State {
    /// Make a user label, as the owner does in Gmail or an agent through `labels.create`; the
    /// existing one when a label of that name exists (names are unique, case-insensitively).
    pub fn create_label(&mut self, name: &str) -> StoredLabel {
        if let Some(found) = self
            .labels
            .values()
            .find(|l| l.name.eq_ignore_ascii_case(name))
        {
            return found.clone();
        }
        let n = self.next();
        let label = StoredLabel {
            id: format!("Label_{n}"),
            name: name.to_owned(),
            kind: "user",
        };
        self.labels.insert(label.id.clone(), label.clone());
        label
    }

    /// Rename a label (its id stays).
    pub fn rename_label(&mut self, id: &str, name: &str) -> bool {
        match self.labels.get_mut(id) {
            Some(label) if label.kind == "user" => {
                label.name = name.to_owned();
                true
            }
            _ => false,
        }
    }

    /// Refuse label ids the mailbox does not have, as Gmail does (400; the text is the fake's:
    /// Google documents none).
    pub fn check_labels(&self, ids: &[String]) -> Result<(), ApiError> {
        match ids.iter().find(|id| !self.labels.contains_key(id.as_str())) {
            Some(unknown) => Err(ApiError::invalid(format!("Invalid label: {unknown}"))),
            None => Ok(()),
        }
    }

    /// The labels of a draft's message: `DRAFT`, then the user labels of `asked` (a client's
    /// `message.labelIds`) in order, each once. System labels asked for are left out: a draft
    /// lives in Drafts only.
    pub(super) fn draft_labels(&self, asked: Vec<String>) -> Vec<String> {
        let mut labels = vec!["DRAFT".to_owned()];
        for id in asked {
            let is_user = self.labels.get(&id).is_some_and(|l| l.kind == "user");
            if is_user && !labels.contains(&id) {
                labels.push(id);
            }
        }
        labels
    }

    /// `messages.modify`: add then remove labels on message `id`. Each change that happened
    /// (a label already there is not added again) gets its own history record, as
    /// `labelsAdded` / `labelsRemoved`.
    pub fn modify_labels(
        &mut self,
        id: &str,
        add: &[String],
        remove: &[String],
    ) -> Result<StoredMessage, ApiError> {
        self.check_labels(add)?;
        self.check_labels(remove)?;
        let Some(message) = self.messages.get_mut(id) else {
            return Err(ApiError::not_found());
        };
        let added: Vec<String> = add
            .iter()
            .filter(|l| !message.label_ids.contains(l) && !remove.contains(l))
            .cloned()
            .collect();
        message.label_ids.extend(added.iter().cloned());
        let removed: Vec<String> = remove
            .iter()
            .filter(|l| message.label_ids.contains(l))
            .cloned()
            .collect();
        message.label_ids.retain(|l| !removed.contains(l));
        let message = message.clone();
        let mut last = None;
        if !added.is_empty() {
            last = Some(self.record(&message, Change::LabelsAdded(added)));
        }
        if !removed.is_empty() {
            last = Some(self.record(&message, Change::LabelsRemoved(removed)));
        }
        if let Some(history_id) = last {
            if let Some(m) = self.messages.get_mut(id) {
                m.history_id = history_id;
            }
        }
        Ok(self.messages.get(id).cloned().unwrap_or(message))
    }
}
