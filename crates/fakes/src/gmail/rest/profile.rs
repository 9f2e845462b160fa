//! `users.getProfile` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.getProfile>).

use super::*;

pub(super) async fn profile(
    State(sh): State<Arc<Shared>>,
    Path(user): Path<String>,
    req: Req,
) -> Response {
    run(&sh, &scopes::GET_PROFILE, &req, &user, |s| {
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
