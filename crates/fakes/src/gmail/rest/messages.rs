//! `users.messages`: `list`, `get` and `modify`, and the `Message` resource in each `format`
//! (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.messages>).

use super::*;

pub(super) fn content_type(raw: &[u8]) -> String {
    mime::header(raw, "Content-Type")
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|| "text/plain".to_owned())
}

/// A `Message` resource in `format`.
pub(super) fn message_json(
    m: &StoredMessage,
    format: &str,
    only_headers: &[&str],
) -> Result<Value, ApiError> {
    let mut v = json!({
        "id": m.id,
        "threadId": m.thread_id,
        "labelIds": m.label_ids,
        "snippet": mime::snippet(&m.raw),
        "sizeEstimate": m.raw.len(),
        "historyId": m.history_id.to_string(),
        "internalDate": m.internal_date_ms.to_string(),
    });
    let headers = || -> Vec<Value> {
        mime::headers(&m.raw)
            .into_iter()
            .filter(|(n, _)| {
                only_headers.is_empty() || only_headers.iter().any(|h| h.eq_ignore_ascii_case(n))
            })
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect()
    };
    match format {
        "minimal" => {}
        "raw" => v["raw"] = json!(encode_raw(&m.raw)),
        "metadata" => {
            v["payload"] = json!({
                "partId": "",
                "mimeType": content_type(&m.raw),
                "filename": "",
                "headers": headers(),
                "body": {"size": 0},
            })
        }
        "full" => {
            let body = mime::body(&m.raw);
            v["payload"] = json!({
                "partId": "",
                "mimeType": content_type(&m.raw),
                "filename": "",
                "headers": headers(),
                "body": {"size": body.len(), "data": encode_raw(body)},
            })
        }
        other => {
            return Err(ApiError::invalid(format!(
                "Invalid value at 'format' ({other})"
            )))
        }
    }
    Ok(v)
}

/// Whether `m` matches the Gmail search `q` (the operators Countersign needs, and plain words).
pub(super) fn matches_query(m: &StoredMessage, q: &str) -> bool {
    q.split_whitespace().all(|term| {
        let lower = term.to_ascii_lowercase();
        let has = |label: &str| m.label_ids.iter().any(|l| l.eq_ignore_ascii_case(label));
        if let Some(id) = lower.strip_prefix("rfc822msgid:") {
            let want = id.trim_start_matches('<').trim_end_matches('>');
            mime::header(&m.raw, "Message-ID").is_some_and(|v| {
                v.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .eq_ignore_ascii_case(want)
            })
        } else if let Some(place) = lower.strip_prefix("in:") {
            match place {
                "anywhere" => true,
                "draft" | "drafts" => has("DRAFT"),
                other => has(other),
            }
        } else if let Some(label) = lower.strip_prefix("label:") {
            has(label)
        } else if let Some(state) = lower.strip_prefix("is:") {
            has(state)
        } else {
            String::from_utf8_lossy(&m.raw)
                .to_ascii_lowercase()
                .contains(&lower)
        }
    })
}

pub(super) async fn messages_list(call: Call) -> Response {
    call.run(&scopes::MESSAGES_LIST, |s, req| {
        let labels = req.params("labelIds");
        let q = req.param("q").unwrap_or_default();
        let spam_trash = req.param("includeSpamTrash") == Some("true");
        let found: Vec<&StoredMessage> = s
            .messages_newest_first()
            .into_iter()
            .filter(|m| spam_trash || !m.label_ids.iter().any(|l| l == "SPAM" || l == "TRASH"))
            .filter(|m| labels.iter().all(|l| m.label_ids.iter().any(|x| x == l)))
            .filter(|m| matches_query(m, q))
            .collect();
        let (start, max) = page(req, found.len())?;
        let end = (start + max).min(found.len());
        let mut v = json!({"resultSizeEstimate": found.len()});
        if end > start {
            v["messages"] = json!(found[start..end]
                .iter()
                .map(|m| message_ref(m))
                .collect::<Vec<_>>());
        }
        if end < found.len() {
            v["nextPageToken"] = json!(end.to_string());
        }
        Ok(Answer::Json(v))
    })
    .await
}

pub(super) async fn messages_get(call: Call) -> Response {
    call.run(&scopes::MESSAGES_GET, |s, req| {
        let m = s.messages.get(&call.id).ok_or_else(ApiError::not_found)?;
        let format = req.param("format").unwrap_or("full").to_ascii_lowercase();
        Ok(Answer::Json(message_json(
            m,
            &format,
            &req.params("metadataHeaders"),
        )?))
    })
    .await
}

/// Body of `messages.modify` (`ModifyMessageRequest`).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ModifyBody {
    #[serde(default)]
    add_label_ids: Vec<String>,
    #[serde(default)]
    remove_label_ids: Vec<String>,
}

/// `POST …/messages/{id}/modify` (<https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.messages/modify>):
/// add and remove labels; answers the `Message` with its ids and labels.
pub(super) async fn messages_modify(call: Call, body: Bytes) -> Response {
    call.run(&scopes::MESSAGES_MODIFY, |s, _| {
        let body: ModifyBody = parse_body(&body)?;
        let m = s.modify_labels(&call.id, &body.add_label_ids, &body.remove_label_ids)?;
        Ok(Answer::Json(message_labels(&m)))
    })
    .await
}
