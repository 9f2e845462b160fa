//! `users.threads.get` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.threads/get>).

use super::*;

/// `threads.get`: the thread's messages oldest first, each as `messages.get` would give it in
/// `format` (`full`, `metadata` or `minimal`; Google refuses `raw` for threads). A thread
/// whose messages are all gone is "not found", as in Gmail.
pub(super) async fn threads_get(call: Call) -> Response {
    call.run(&scopes::THREADS_GET, |s, req| {
        let format = req.param("format").unwrap_or("full").to_ascii_lowercase();
        if !matches!(format.as_str(), "full" | "metadata" | "minimal") {
            return Err(ApiError::invalid(format!(
                "Invalid value at 'format' ({format})"
            )));
        }
        let mut in_thread: Vec<&StoredMessage> = s
            .messages
            .values()
            .filter(|m| m.thread_id == call.id)
            .collect();
        if in_thread.is_empty() {
            return Err(ApiError::not_found());
        }
        in_thread.sort_by_key(|m| (m.internal_date_ms, m.seq));
        let headers = req.params("metadataHeaders");
        let messages = in_thread
            .iter()
            .map(|m| {
                if format == "minimal" {
                    Ok(message_labels(m))
                } else {
                    message_json(m, &format, &headers)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let history_id = in_thread.iter().map(|m| m.history_id).max().unwrap_or(0);
        Ok(Answer::Json(json!({
            "id": call.id,
            "snippet": mime::snippet(&in_thread[in_thread.len() - 1].raw),
            "historyId": history_id.to_string(),
            "messages": messages,
        })))
    })
    .await
}
