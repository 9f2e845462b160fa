//! `users.labels.list` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.labels/list>):
//! every label at once, each with only `id`, `name`, the two visibilities and `type`.

use super::*;

pub(super) async fn labels_list(call: Call) -> Response {
    call.run(&scopes::LABELS_LIST, |s, _| {
        let labels: Vec<Value> = s
            .labels
            .values()
            .map(|l| {
                let mut v = json!({"id": l.id, "name": l.name, "type": l.kind});
                if l.kind == "user" {
                    v["messageListVisibility"] = json!("show");
                    v["labelListVisibility"] = json!("labelShow");
                }
                v
            })
            .collect();
        Ok(Answer::Json(json!({"labels": labels})))
    })
    .await
}
