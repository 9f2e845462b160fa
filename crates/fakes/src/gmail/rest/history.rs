//! `users.history.list` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.history/list>).

use super::*;

pub(super) async fn history_list(call: Call) -> Response {
    call.run(&scopes::HISTORY_LIST, |s, req| {
        let start: u64 = req
            .param("startHistoryId")
            .ok_or_else(|| ApiError::invalid("Missing required field: startHistoryId"))?
            .parse()
            .map_err(|_| ApiError::invalid("Invalid startHistoryId"))?;
        // Gmail keeps a limited window of history; an id from before it is "not found".
        if start < s.history_floor {
            return Err(ApiError::not_found());
        }
        let label = req.param("labelId");
        let types = req.params("historyTypes");
        let events: Vec<Value> = s
            .history
            .iter()
            .filter(|e| e.id > start)
            .filter(|e| label.is_none_or(|l| e.label_ids.iter().any(|x| x == l)))
            .filter(|e| s.history_reports_deletions || !matches!(e.change, Change::Deleted))
            .filter(|e| {
                types.is_empty()
                    || types.iter().any(|t| match e.change {
                        Change::Added => *t == "messageAdded",
                        Change::Deleted => *t == "messageDeleted",
                        Change::LabelsAdded(_) => *t == "labelAdded",
                        Change::LabelsRemoved(_) => *t == "labelRemoved",
                    })
            })
            .map(|e| {
                let m =
                    json!({"id": e.message_id, "threadId": e.thread_id, "labelIds": e.label_ids});
                // `labelsAdded` / `labelsRemoved` carry the label ids changed beside the message.
                let (key, change) = match &e.change {
                    Change::Added => ("messagesAdded", json!({"message": m})),
                    Change::Deleted => ("messagesDeleted", json!({"message": m})),
                    Change::LabelsAdded(ids) => {
                        ("labelsAdded", json!({"message": m, "labelIds": ids}))
                    }
                    Change::LabelsRemoved(ids) => {
                        ("labelsRemoved", json!({"message": m, "labelIds": ids}))
                    }
                };
                let messages = json!([{"id": e.message_id, "threadId": e.thread_id}]);
                if s.history_only_messages {
                    // Google's discovery document: the change-type fields "may duplicate
                    // messages in this field" — a record may say only which messages.
                    json!({"id": e.id.to_string(), "messages": messages})
                } else {
                    json!({"id": e.id.to_string(), "messages": messages, key: [change]})
                }
            })
            .collect();
        let (from, max) = page(req, events.len())?;
        let end = (from + max).min(events.len());
        let mut v = json!({"historyId": s.history_id.to_string()});
        if end > from {
            v["history"] = json!(events[from..end]);
        }
        if end < events.len() {
            v["nextPageToken"] = json!(end.to_string());
        }
        Ok(Answer::Json(v))
    })
    .await
}
