//! Labels from outside: a test or the demo makes user labels, files a draft carrying some, and
//! labels or unlabels a message as the owner (or the agent's own client) does in Gmail.
//!
//! Control API: `POST /_control/labels` `{"name": "Agents/Billing"}` answers the label
//! (`{"id", "name", "type"}`); `POST /_control/messages/{id}/modify`
//! `{"addLabelIds": […], "removeLabelIds": […]}` changes a message's labels exactly as
//! `messages.modify` does (history records included); `POST /_control/drafts` takes
//! `labelIds` too.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::{FakeGmail, FiledDraft, Shared};

#[derive(Deserialize)]
pub(super) struct LabelBody {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ModifyBody {
    #[serde(default)]
    add_label_ids: Vec<String>,
    #[serde(default)]
    remove_label_ids: Vec<String>,
}

pub(super) async fn create_label(
    State(sh): State<Arc<Shared>>,
    Json(body): Json<LabelBody>,
) -> Response {
    if body.name.trim().is_empty() {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "give a name"})),
        )
            .into_response();
    }
    let label = sh.lock().create_label(body.name.trim());
    Json(json!({"id": label.id, "name": label.name, "type": label.kind})).into_response()
}

pub(super) async fn modify_message(
    State(sh): State<Arc<Shared>>,
    Path(id): Path<String>,
    Json(body): Json<ModifyBody>,
) -> Response {
    let changed = sh
        .lock()
        .modify_labels(&id, &body.add_label_ids, &body.remove_label_ids);
    match changed {
        Ok(m) => Json(json!({"id": m.id, "labelIds": m.label_ids})).into_response(),
        Err(e) => e.into_response(),
    }
}

impl Shared {
    pub(super) fn file_draft_with_labels(
        &self,
        raw: Vec<u8>,
        thread_id: Option<String>,
        labels: Vec<String>,
    ) -> FiledDraft {
        let (id, m) = self.lock().create_draft_with_labels(raw, thread_id, labels);
        FiledDraft {
            id,
            message_id: m.id,
            thread_id: m.thread_id,
        }
    }
}

impl FakeGmail {
    /// Make a user label named `name` (or find the one of that name); its id.
    pub fn create_label(&self, name: &str) -> String {
        self.shared.lock().create_label(name).id
    }

    /// Rename user label `id`; whether there was one.
    pub fn rename_label(&self, id: &str, name: &str) -> bool {
        self.shared.lock().rename_label(id, name)
    }

    /// File a draft whose message also carries the user labels `labels` (ids), as an agent's
    /// `drafts.create` with `message.labelIds` does.
    pub fn file_draft_with_labels(
        &self,
        raw: &[u8],
        thread_id: Option<&str>,
        labels: &[&str],
    ) -> FiledDraft {
        self.shared.file_draft_with_labels(
            raw.to_vec(),
            thread_id.map(str::to_owned),
            labels.iter().map(|l| (*l).to_owned()).collect(),
        )
    }

    /// Add and remove labels on message `id` as `messages.modify` does (history records
    /// included); its labels after, or `None` for an unknown message or label.
    pub fn modify_labels(&self, id: &str, add: &[&str], remove: &[&str]) -> Option<Vec<String>> {
        let own = |ids: &[&str]| ids.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
        self.shared
            .lock()
            .modify_labels(id, &own(add), &own(remove))
            .ok()
            .map(|m| m.label_ids)
    }

    /// The labels message `id` carries now.
    pub fn message_labels(&self, id: &str) -> Option<Vec<String>> {
        self.shared
            .lock()
            .messages
            .get(id)
            .map(|m| m.label_ids.clone())
    }
}
