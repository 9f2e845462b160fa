//! `users.getProfile` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.getProfile>).

use super::*;

pub(super) async fn profile(call: Call) -> Response {
    call.run(&scopes::GET_PROFILE, |s, _| {
        let threads: std::collections::HashSet<&String> =
            s.messages.values().map(|m| &m.thread_id).collect();
        Ok(Answer::Json(json!({
            "emailAddress": s.email,
            "messagesTotal": s.messages.len(),
            "threadsTotal": threads.len(),
            "historyId": s.history_id.to_string(),
        })))
    })
    .await
}
