//! Labels over real HTTP, as Google answers them: `labels.list`, a draft's `message.labelIds`,
//! and `messages.modify` with its `labelsAdded` / `labelsRemoved` history records. Only the
//! REST and control endpoints are used, so these tests read the fake as any client would.

use serde_json::{json, Value};

use super::{FakeGmail, GmailConfig};

const MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
const COMPOSE: &str = "https://www.googleapis.com/auth/gmail.compose";
const SEND: &str = "https://www.googleapis.com/auth/gmail.send";

async fn fake() -> FakeGmail {
    FakeGmail::start(GmailConfig::default()).await.unwrap()
}

async fn call(
    fake: &FakeGmail,
    token: &str,
    method: &str,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let url = format!("{}{path}", fake.api_base());
    let request = match method {
        "GET" => reqwest::Client::new().get(url),
        "PUT" => reqwest::Client::new().put(url).json(&body),
        _ => reqwest::Client::new().post(url).json(&body),
    };
    let response = request.bearer_auth(token).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A user label made through the control API; its id.
async fn label(fake: &FakeGmail, name: &str) -> String {
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/_control/labels", fake.base_url()))
        .json(&json!({"name": name}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["id"].as_str().unwrap().to_owned()
}

fn raw(subject: &str) -> String {
    super::rest::encode_raw(
        format!("From: owner@example.com\r\nTo: a@example.org\r\nSubject: {subject}\r\n\r\nhi\r\n")
            .as_bytes(),
    )
}

#[tokio::test]
async fn labels_list_gives_user_and_system_labels_to_the_scopes_google_allows() {
    let fake = fake().await;
    let billing = label(&fake, "Agents/Billing").await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let (status, answer) = call(&fake, &token, "GET", "/labels", Value::Null).await;
    assert_eq!(status, 200);
    let labels = answer["labels"].as_array().unwrap();
    let user = labels.iter().find(|l| l["id"] == billing.as_str()).unwrap();
    assert_eq!(user["name"], "Agents/Billing");
    assert_eq!(user["type"], "user");
    let draft = labels.iter().find(|l| l["id"] == "DRAFT").unwrap();
    assert_eq!(draft["type"], "system");

    // gmail.send alone is not among labels.list's scopes.
    let send_only = fake.issue_tokens(&[SEND]).access_token;
    let (status, _) = call(&fake, &send_only, "GET", "/labels", Value::Null).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_draft_keeps_the_user_labels_its_message_names_on_create_and_update() {
    let fake = fake().await;
    let billing = label(&fake, "Agents/Billing").await;
    let token = fake.issue_tokens(&[COMPOSE]).access_token;
    let body = json!({"message": {"raw": raw("v1"), "labelIds": [billing]}});
    let (status, created) = call(&fake, &token, "POST", "/drafts", body).await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (_, got) = call(
        &fake,
        &token,
        "GET",
        &format!("/drafts/{id}?format=minimal"),
        Value::Null,
    )
    .await;
    assert_eq!(got["message"]["labelIds"], json!(["DRAFT", billing]));

    // An update replaces the message: it carries the labels the update names, no others.
    let body = json!({"message": {"raw": raw("v2"), "labelIds": []}});
    let (status, _) = call(&fake, &token, "PUT", &format!("/drafts/{id}"), body).await;
    assert_eq!(status, 200);
    let (_, got) = call(
        &fake,
        &token,
        "GET",
        &format!("/drafts/{id}?format=minimal"),
        Value::Null,
    )
    .await;
    assert_eq!(got["message"]["labelIds"], json!(["DRAFT"]));

    let body = json!({"message": {"raw": raw("v3"), "labelIds": ["Label_nope"]}});
    let (status, _) = call(&fake, &token, "PUT", &format!("/drafts/{id}"), body).await;
    assert_eq!(status, 400, "an unknown label is refused");
}

#[tokio::test]
async fn messages_modify_changes_labels_and_history_reports_each_change() {
    let fake = fake().await;
    let billing = label(&fake, "Agents/Billing").await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let (_, created) = call(
        &fake,
        &token,
        "POST",
        "/drafts",
        json!({"message": {"raw": raw("x")}}),
    )
    .await;
    let message = created["message"]["id"].as_str().unwrap().to_owned();
    let (_, profile) = call(&fake, &token, "GET", "/profile", Value::Null).await;
    let start = profile["historyId"].as_str().unwrap().to_owned();

    let path = format!("/messages/{message}/modify");
    let (status, modified) = call(
        &fake,
        &token,
        "POST",
        &path,
        json!({"addLabelIds": [billing]}),
    )
    .await;
    assert_eq!(status, 200, "{modified}");
    assert_eq!(modified["labelIds"], json!(["DRAFT", billing]));
    let (status, _) = call(
        &fake,
        &token,
        "POST",
        &path,
        json!({"removeLabelIds": [billing]}),
    )
    .await;
    assert_eq!(status, 200);

    let history = format!("/history?startHistoryId={start}&labelId=DRAFT");
    let (_, answer) = call(&fake, &token, "GET", &history, Value::Null).await;
    let records = answer["history"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{answer}");
    assert_eq!(records[0]["labelsAdded"][0]["labelIds"], json!([billing]));
    assert_eq!(
        records[0]["labelsAdded"][0]["message"]["id"],
        message.as_str()
    );
    assert_eq!(records[1]["labelsRemoved"][0]["labelIds"], json!([billing]));

    // gmail.compose may write drafts but not relabel messages.
    let compose = fake.issue_tokens(&[COMPOSE]).access_token;
    let (status, _) = call(
        &fake,
        &compose,
        "POST",
        &path,
        json!({"addLabelIds": [billing]}),
    )
    .await;
    assert_eq!(status, 403);
}
