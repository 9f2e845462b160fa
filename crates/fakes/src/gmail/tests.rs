//! The fake Gmail over real HTTP, checked against what Google answers.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Failure, FakeGmail, GmailConfig, CLIENT_ID, CLIENT_SECRET};
use crate::Seed;

const MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
const SEND: &str = "https://www.googleapis.com/auth/gmail.send";

async fn fake() -> FakeGmail {
    FakeGmail::start(GmailConfig::default()).await.unwrap()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn get(fake: &FakeGmail, token: &str, path: &str) -> (u16, Value) {
    let response = http()
        .get(format!("{}{path}", fake.api_base()))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The JSON a `GET /_control/{path}` answers.
async fn control_get(fake: &FakeGmail, path: &str) -> Value {
    http()
        .get(format!("{}/_control/{path}", fake.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn raw(message_id: &str) -> Vec<u8> {
    format!("From: owner@example.com\r\nTo: a@example.org\r\nSubject: x\r\nMessage-ID: {message_id}\r\n\r\nhello\r\n").into_bytes()
}

#[tokio::test]
async fn consent_redirects_to_the_loopback_with_code_scope_and_state() {
    let fake = fake().await;
    let response = http()
        .get(fake.auth_url())
        .query(&[
            ("client_id", CLIENT_ID),
            ("redirect_uri", "http://localhost:5555"),
            ("response_type", "code"),
            ("scope", MODIFY),
            ("access_type", "offline"),
            ("state", "s1"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
    let location = url::Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    assert_eq!(location.host_str(), Some("localhost"));
    assert_eq!(location.port(), Some(5555));
    let q: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(q["state"], "s1");
    assert_eq!(q["scope"], MODIFY);
    assert!(q["code"].starts_with("4/"));
}

#[tokio::test]
async fn consent_refuses_a_redirect_that_is_not_the_loopback() {
    let fake = fake().await;
    let response = http()
        .get(fake.auth_url())
        .query(&[
            ("client_id", CLIENT_ID),
            ("redirect_uri", "https://attacker.example.com/cb"),
            ("response_type", "code"),
            ("scope", MODIFY),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert!(response
        .text()
        .await
        .unwrap()
        .contains("redirect_uri_mismatch"));
}

async fn exchange(fake: &FakeGmail, form: &[(&str, &str)]) -> (u16, Value) {
    let response = http()
        .post(fake.token_url())
        .form(form)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_code_is_exchanged_once_and_a_revoked_refresh_token_is_an_invalid_grant() {
    let fake = fake().await;
    let response = http()
        .get(fake.auth_url())
        .query(&[
            ("client_id", CLIENT_ID),
            ("redirect_uri", "http://127.0.0.1:5555/"),
            ("response_type", "code"),
            ("scope", MODIFY),
            ("access_type", "offline"),
        ])
        .send()
        .await
        .unwrap();
    let location = url::Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    let code = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
        ("redirect_uri", "http://127.0.0.1:5555/"),
    ];
    let (status, tokens) = exchange(&fake, &form).await;
    assert_eq!(status, 200);
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["scope"], MODIFY);
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(exchange(&fake, &form).await.1["error"], "invalid_grant");

    let refresh_form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.as_str()),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
    ];
    let (status, refreshed) = exchange(&fake, &refresh_form).await;
    assert_eq!(status, 200);
    assert!(
        refreshed.get("refresh_token").is_none(),
        "Google does not repeat it"
    );

    fake.revoke_refresh_tokens();
    let (status, error) = exchange(&fake, &refresh_form).await;
    assert_eq!(status, 400);
    assert_eq!(
        error,
        json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
    );
}

#[tokio::test]
async fn a_wrong_client_secret_is_an_invalid_client() {
    let fake = fake().await;
    let (status, error) = exchange(
        &fake,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "x"),
            ("client_id", CLIENT_ID),
            ("client_secret", "wrong"),
        ],
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(error["error"], "invalid_client");
}

#[tokio::test]
async fn tokeninfo_gives_scopes_and_times_as_strings() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY, SEND]);
    let info: Value = http()
        .get(fake.tokeninfo_url())
        .query(&[("access_token", tokens.access_token.as_str())])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["scope"], format!("{MODIFY} {SEND}"));
    assert!(info["expires_in"].is_string() && info["exp"].is_string());
    assert_eq!(info["aud"], CLIENT_ID);
    let bad = http()
        .get(fake.tokeninfo_url())
        .query(&[("access_token", "nope")])
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(
        fake.requests()
            .iter()
            .all(|r| !r.query.contains(&tokens.access_token)),
        "the log masks tokens"
    );
}

#[tokio::test]
async fn a_missing_scope_answers_like_google_with_the_scopes_that_would_do() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[SEND]);
    let response = http()
        .post(format!("{}/drafts/send", fake.api_base()))
        .bearer_auth(&tokens.access_token)
        .json(&json!({"id": "r1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("insufficient_scope") && challenge.contains(MODIFY));
    assert!(!challenge.contains(SEND));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "insufficientPermissions"
    );
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    );
}

#[tokio::test]
async fn no_token_and_a_foreign_user_are_refused() {
    let fake = fake().await;
    let response = http()
        .get(format!("{}/profile", fake.api_base()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let tokens = fake.issue_tokens(&[MODIFY]);
    let response = http()
        .get(format!(
            "{}/gmail/v1/users/someone@else.example/profile",
            fake.base_url()
        ))
        .bearer_auth(&tokens.access_token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    // The mailbox's own address works like `me`.
    let (status, _) = get(&fake, &tokens.access_token, "/profile").await;
    assert_eq!(status, 200);
}

/// Google's quota page names `userRateLimitExceeded` for the per-user limit and its error guide
/// answers that reason with 403 (see `ApiError::user_rate_limited`).
#[tokio::test]
async fn over_the_per_user_quota_answers_403_user_rate_limit_exceeded_with_a_retry_time() {
    let fake = FakeGmail::start(GmailConfig {
        quota_units_per_minute: 600,
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    let tokens = fake.issue_tokens(&[MODIFY]);
    // 10 units a second: two drafts.list pass, the third does not.
    assert_eq!(get(&fake, &tokens.access_token, "/drafts").await.0, 200);
    assert_eq!(get(&fake, &tokens.access_token, "/drafts").await.0, 200);
    let (status, body) = get(&fake, &tokens.access_token, "/drafts").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "userRateLimitExceeded"
    );
    assert_eq!(body["error"]["errors"][0]["domain"], "usageLimits");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Retry after 20"));
}

/// `threads.get` returns every message of the thread, those in Trash and Spam and drafts too,
/// each with its `labelIds` (the reference has no `includeSpamTrash` for it, unlike the list
/// methods), and costs 10 units
/// (<https://developers.google.com/gmail/api/reference/rest/v1/users.threads/get>,
/// <https://developers.google.com/gmail/api/reference/quota>).
#[tokio::test]
async fn threads_get_returns_trashed_messages_with_their_labels_and_costs_ten_units() {
    let fake = FakeGmail::start(GmailConfig {
        quota_units_per_minute: 600,
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    let tokens = fake.issue_tokens(&[MODIFY]);
    let (_, thread) = fake.add_inbox_message(&raw("<a@x>"), None);
    fake.add_message_with_labels(&raw("<t@x>"), Some(&thread), &["TRASH"]);
    let path = format!("/threads/{thread}?format=metadata&metadataHeaders=Message-ID");
    let (status, body) = get(&fake, &tokens.access_token, &path).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["messages"][1]["labelIds"], json!(["TRASH"]));
    assert_eq!(
        body["messages"][1]["payload"]["headers"],
        json!([{"name": "Message-ID", "value": "<t@x>"}])
    );
    // 10 units a second: one threads.get spent them all.
    let (status, body) = get(&fake, &tokens.access_token, &path).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "userRateLimitExceeded"
    );
}

#[tokio::test]
async fn drafts_get_a_new_message_id_on_update_and_vanish_when_sent() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let filed: Value = http()
        .post(format!("{}/_control/drafts", fake.base_url()))
        .json(&json!({"rawText": String::from_utf8(raw("<v1@x>")).unwrap()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = filed["id"].as_str().unwrap().to_owned();
    let updated: Value = http()
        .put(format!("{}/_control/drafts/{id}", fake.base_url()))
        .json(&json!({"rawText": String::from_utf8(raw("<v2@x>")).unwrap()}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_ne!(updated["messageId"], filed["messageId"]);

    // Unpadded base64url is accepted, as Google does.
    let unpadded = super::rest::encode_raw(&raw("<sent@x>"))
        .trim_end_matches('=')
        .to_owned();
    let response = http()
        .post(format!("{}/drafts/send", fake.api_base()))
        .bearer_auth(&tokens.access_token)
        .json(&json!({"id": id, "message": {"raw": unpadded, "threadId": filed["threadId"]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let sent: Value = response.json().await.unwrap();
    assert_eq!(sent["threadId"], filed["threadId"]);
    assert_eq!(sent["labelIds"], json!(["SENT"]));
    assert_eq!(
        get(&fake, &tokens.access_token, &format!("/drafts/{id}"))
            .await
            .0,
        404
    );

    let (_, found) = get(
        &fake,
        &tokens.access_token,
        "/messages?q=rfc822msgid:sent@x",
    )
    .await;
    assert_eq!(found["messages"][0]["id"], sent["id"]);
    let listed = control_get(&fake, "sent").await;
    assert_eq!(
        listed[0]["rawText"],
        String::from_utf8(raw("<sent@x>")).unwrap()
    );
    let count = control_get(&fake, &format!("sends/{id}")).await;
    assert_eq!(count["count"], 1);
}

#[tokio::test]
async fn an_injected_failure_answers_googles_body_for_that_status() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    http()
        .post(format!("{}/_control/faults/fail", fake.base_url()))
        .json(&json!({"method": "getProfile", "times": 1, "status": 500}))
        .send()
        .await
        .unwrap();
    let (status, body) = get(&fake, &tokens.access_token, "/profile").await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["errors"][0]["reason"], "backendError");
    assert_eq!(
        get(&fake, &tokens.access_token, "/profile").await.0,
        200,
        "only once"
    );
    let log = control_get(&fake, "requests").await;
    assert_eq!(
        log.as_array()
            .unwrap()
            .iter()
            .filter(|r| r["method"] == "getProfile")
            .count(),
        2
    );
}

#[tokio::test]
async fn the_control_routes_change_what_they_name_and_refuse_a_bad_body() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let control = |path: &str, body: Value| {
        http()
            .post(format!("{}/_control/{path}", fake.base_url()))
            .json(&body)
            .send()
    };

    let set = control("quota", json!({"unitsPerMinute": 600}))
        .await
        .unwrap();
    assert_eq!(set.status(), 204);
    assert_eq!(
        control_get(&fake, "state").await["quotaUnitsPerMinute"],
        600
    );
    let refused = control("quota", json!({"units": 1})).await.unwrap();
    assert!(refused.status().is_client_error(), "{}", refused.status());
    assert_eq!(
        control_get(&fake, "state").await["quotaUnitsPerMinute"],
        600,
        "unchanged"
    );

    assert_eq!(get(&fake, &tokens.access_token, "/profile").await.0, 200);
    let revoked = control("oauth/revoke", Value::Null).await.unwrap();
    assert_eq!(revoked.status(), 204);
    assert_eq!(get(&fake, &tokens.access_token, "/profile").await.0, 401);
}

#[tokio::test]
async fn going_offline_refuses_connections_for_the_time_asked() {
    let fake = fake().await;
    // Measured from before the request: the fake cannot go offline before it gets it, so a
    // slow answer or a slow test only makes the time seen longer, never shorter.
    let started = std::time::Instant::now();
    let response = http()
        .post(format!("{}/_control/offline", fake.base_url()))
        .json(&json!({"seconds": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    // Waits on what a client sees, not on the clock: connections are refused for a while,
    // then answered again. (The limits only stop a hang; two seconds offline leave a busy
    // machine time to see the refusal.)
    let state = || async {
        http()
            .get(format!("{}/_control/state", fake.base_url()))
            .send()
            .await
    };
    loop {
        match state().await {
            Err(e) if e.is_connect() => break,
            _ => assert!(started.elapsed() < Duration::from_secs(2), "never refused"),
        }
    }
    while state().await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "never back");
    }
    // Back after the two seconds asked for, not before.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_too_old_history_id_is_not_found() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let start = fake.history_id();
    fake.file_draft(&raw("<h@x>"), None);
    let (status, body) = get(
        &fake,
        &tokens.access_token,
        &format!("/history?startHistoryId={start}&labelId=DRAFT"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["history"].as_array().unwrap().len(), 1);
    fake.expire_history();
    let (status, _) = get(
        &fake,
        &tokens.access_token,
        &format!("/history?startHistoryId={start}"),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_failure_with_retry_after_names_the_time() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    fake.fail_next(
        "drafts.list",
        1,
        Failure::status(403)
            .reason("userRateLimitExceeded")
            .retry_after(Duration::from_secs(3)),
    );
    let (status, body) = get(&fake, &tokens.access_token, "/drafts").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["errors"][0]["domain"], "usageLimits");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Retry after"));
}

#[tokio::test]
async fn the_demo_seed_files_four_replies_each_answering_an_inbox_message() {
    let fake = FakeGmail::start(GmailConfig {
        seed: Seed::Demo,
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    let tokens = fake.issue_tokens(&[MODIFY]);
    let drafts = fake.drafts();
    assert_eq!(drafts.len(), 4);
    for draft in drafts {
        let (_, d) = get(
            &fake,
            &tokens.access_token,
            &format!("/drafts/{}?format=raw", draft.id),
        )
        .await;
        let bytes = super::rest::decode_raw(d["message"]["raw"].as_str().unwrap()).unwrap();
        let parent_id = super::mime::header(&bytes, "In-Reply-To").unwrap();
        let (_, parents) = get(
            &fake,
            &tokens.access_token,
            &format!(
                "/messages?q=rfc822msgid:{}",
                parent_id.trim_matches(['<', '>'])
            ),
        )
        .await;
        let parent = parents["messages"][0].clone();
        assert_eq!(
            parent["threadId"],
            json!(draft.thread_id),
            "the reply is on its parent's thread"
        );
    }
}

#[tokio::test]
async fn the_control_api_files_a_30_mb_draft_and_drafts_send_takes_it_only_through_the_upload_endpoint(
) {
    let fake = fake().await;
    let mut big = raw("<big@x>");
    big.extend(std::iter::repeat_n(b'a', 30 * 1024 * 1024));
    let filed = http()
        .post(format!("{}/_control/drafts", fake.base_url()))
        .json(&json!({"raw": super::rest::encode_raw(&big)}))
        .send()
        .await
        .unwrap();
    assert_eq!(filed.status(), 200, "{}", filed.text().await.unwrap());
    let draft = fake.drafts().remove(0);
    let token = fake.issue_tokens(&[MODIFY]).access_token;

    // As JSON, over the 5 MB limit: Google's 413.
    let json_send = http()
        .post(format!("{}/drafts/send", fake.api_base()))
        .bearer_auth(&token)
        .json(&json!({"id": draft.id, "message": {"raw": super::rest::encode_raw(&big)}}))
        .send()
        .await
        .unwrap();
    assert_eq!(json_send.status(), 413);
    let body: Value = json_send.json().await.unwrap();
    assert_eq!(body["error"]["code"], 413);
    assert_eq!(fake.send_count(&draft.id), 0);

    // Through the upload endpoint: the Draft JSON and the message, sent byte for byte.
    let mut upload = b"--xyz\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".to_vec();
    upload.extend_from_slice(format!("{{\"id\":\"{}\"}}", draft.id).as_bytes());
    upload.extend_from_slice(b"\r\n--xyz\r\nContent-Type: message/rfc822\r\n\r\n");
    upload.extend_from_slice(&big);
    upload.extend_from_slice(b"\r\n--xyz--\r\n");
    let upload_url = fake.api_base().replace("/gmail/v1/", "/upload/gmail/v1/");
    let sent = http()
        .post(format!("{upload_url}/drafts/send?uploadType=multipart"))
        .bearer_auth(&token)
        .header("Content-Type", "multipart/related; boundary=xyz")
        .body(upload)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200, "{}", sent.text().await.unwrap());
    assert_eq!(fake.send_count(&draft.id), 1);
    assert!(fake.sent_messages()[0].raw == big);
}

/// The consent page's redirect for `params`, as query pairs.
async fn consent(
    fake: &FakeGmail,
    extra: &[(&str, &str)],
) -> std::collections::HashMap<String, String> {
    let mut query = vec![
        ("client_id", CLIENT_ID),
        ("redirect_uri", "http://127.0.0.1:5555/"),
        ("response_type", "code"),
        ("scope", MODIFY),
        ("access_type", "offline"),
    ];
    query.extend_from_slice(extra);
    let response = http()
        .get(fake.auth_url())
        .query(&query)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
    let location = url::Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    location.query_pairs().into_owned().collect()
}

fn code_exchange<'a>(code: &'a str, verifier: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
        ("redirect_uri", "http://127.0.0.1:5555/"),
    ];
    if let Some(v) = verifier {
        form.push(("code_verifier", v));
    }
    form
}

#[tokio::test]
async fn a_pkce_code_is_exchanged_only_with_its_verifier() {
    let fake = fake().await;
    // BASE64URL(SHA256(verifier)) without padding (RFC 7636 §4.2), worked out beforehand.
    let verifier = "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc";
    let pkce = [
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ];

    let code = consent(&fake, &pkce).await["code"].clone();
    let (status, error) = exchange(&fake, &code_exchange(&code, None)).await;
    assert_eq!(status, 400);
    assert_eq!(
        error,
        json!({"error": "invalid_grant", "error_description": "Missing code verifier."})
    );

    let code = consent(&fake, &pkce).await["code"].clone();
    let (status, error) = exchange(&fake, &code_exchange(&code, Some("not-the-verifier"))).await;
    assert_eq!(status, 400);
    assert_eq!(error["error_description"], "Invalid code verifier.");

    let code = consent(&fake, &pkce).await["code"].clone();
    let (status, tokens) = exchange(&fake, &code_exchange(&code, Some(verifier))).await;
    assert_eq!(status, 200, "{tokens}");
    assert!(tokens["access_token"].is_string());
}

#[tokio::test]
async fn cancel_on_the_consent_page_redirects_with_access_denied_and_the_state() {
    let fake = fake().await;
    fake.set_consent_error(Some("access_denied"));
    let answer = consent(&fake, &[("state", "s-42")]).await;
    assert_eq!(
        answer.get("error").map(String::as_str),
        Some("access_denied")
    );
    assert_eq!(answer.get("state").map(String::as_str), Some("s-42"));
    assert!(!answer.contains_key("code"));
    fake.set_consent_error(None);
    assert!(consent(&fake, &[]).await.contains_key("code"));
}

#[tokio::test]
async fn a_refresh_token_past_its_lifetime_is_an_invalid_grant() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", tokens.refresh_token.as_str()),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
    ];
    assert_eq!(exchange(&fake, &form).await.0, 200);
    fake.set_refresh_token_lifetime(Some(Duration::ZERO));
    let (status, error) = exchange(&fake, &form).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"], "invalid_grant");
}

#[tokio::test]
async fn with_deletions_left_out_history_reports_no_deleted_draft() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let filed = fake.file_draft(&raw("<del@x>"), None);
    let start = fake.history_id();
    fake.set_history_reports_deletions(false);
    fake.delete_draft(&filed.id);
    let path = format!("/history?startHistoryId={start}&labelId=DRAFT");
    let (status, body) = get(&fake, &tokens.access_token, &path).await;
    assert_eq!(status, 200);
    assert!(body.get("history").is_none(), "{body}");
    fake.set_history_reports_deletions(true);
    let (_, body) = get(&fake, &tokens.access_token, &path).await;
    assert_eq!(
        body["history"][0]["messagesDeleted"][0]["message"]["id"],
        filed.message_id
    );
}

#[tokio::test]
async fn threads_get_lists_a_threads_messages_oldest_first_and_refuses_raw() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let token = tokens.access_token.as_str();
    let (first, thread) = fake.add_inbox_message(&raw("<a@x>"), None);
    let (second, _) = fake.add_inbox_message(&raw("<b@x>"), Some(&thread));
    let draft = fake.file_draft(&raw("<d@x>"), Some(&thread));

    let (status, body) = get(
        &fake,
        token,
        &format!("/threads/{thread}?format=metadata&metadataHeaders=Message-ID"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], thread.as_str());
    let ids: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [first.as_str(), second.as_str(), draft.message_id.as_str()]
    );
    assert_eq!(
        body["messages"][0]["payload"]["headers"],
        json!([{"name": "Message-ID", "value": "<a@x>"}])
    );
    assert_eq!(body["messages"][2]["labelIds"], json!(["DRAFT"]));

    // Google offers threads in full, metadata or minimal only.
    let (status, _) = get(&fake, token, &format!("/threads/{thread}?format=raw")).await;
    assert_eq!(status, 400);
    let (status, _) = get(&fake, token, "/threads/nope").await;
    assert_eq!(status, 404);
    assert_eq!(fake.request_count("threads.get"), 3);
}

#[tokio::test]
async fn an_agent_update_armed_for_the_next_drafts_update_lands_right_after_it() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let filed = fake.file_draft(&raw("<v1@x>"), None);
    let armed = http()
        .post(format!(
            "{}/_control/drafts/{}/agent-update-after-next-update",
            fake.base_url(),
            filed.id
        ))
        .json(&json!({"rawText": String::from_utf8(raw("<agent@x>")).unwrap()}))
        .send()
        .await
        .unwrap();
    assert_eq!(armed.status(), 204);

    let response = http()
        .put(format!("{}/drafts/{}", fake.api_base(), filed.id))
        .bearer_auth(&tokens.access_token)
        .json(&json!({"message": {"raw": super::rest::encode_raw(&raw("<owner@x>"))}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let updated: Value = response.json().await.unwrap();
    // The update is answered with its own message; the draft already holds the agent's.
    let (_, now) = get(
        &fake,
        &tokens.access_token,
        &format!("/drafts/{}?format=minimal", filed.id),
    )
    .await;
    assert_ne!(now["message"]["id"], updated["message"]["id"]);
    assert!(fake.draft_raw(&filed.id).unwrap() == raw("<agent@x>"));

    // Armed once: the next update stays.
    let again: Value = http()
        .put(format!("{}/drafts/{}", fake.api_base(), filed.id))
        .bearer_auth(&tokens.access_token)
        .json(&json!({"message": {"raw": super::rest::encode_raw(&raw("<owner2@x>"))}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (_, now) = get(
        &fake,
        &tokens.access_token,
        &format!("/drafts/{}?format=minimal", filed.id),
    )
    .await;
    assert_eq!(now["message"]["id"], again["message"]["id"]);
}

/// A fake whose quota leaves room for several sends a second.
async fn roomy() -> FakeGmail {
    FakeGmail::start(GmailConfig {
        quota_units_per_minute: 1_000_000,
        ..GmailConfig::default()
    })
    .await
    .unwrap()
}

/// `POST /_control/{path}` with a JSON body; its status.
async fn control_post(fake: &FakeGmail, path: &str, body: Value) -> u16 {
    http()
        .post(format!("{}/_control/{path}", fake.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn send_draft(fake: &FakeGmail, token: &str, id: &str, raw: &[u8]) -> (u16, Value) {
    let response = http()
        .post(format!("{}/drafts/send", fake.api_base()))
        .bearer_auth(token)
        .json(&json!({"id": id, "message": {"raw": super::rest::encode_raw(raw)}}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_vanished_draft_answers_google_s_400_invalid_draft_when_switched_on_and_404_otherwise() {
    let fake = roomy().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let sent = fake.file_draft(&raw("<a@x>"), None);
    let deleted = fake.file_draft(&raw("<b@x>"), None);
    assert!(fake.send_draft_in_gmail(&sent.id).is_some());
    assert!(fake.delete_draft(&deleted.id));
    let never = "r123";
    assert_eq!(
        get(&fake, &tokens.access_token, &format!("/drafts/{}", sent.id))
            .await
            .0,
        404,
        "off by default"
    );

    assert_eq!(
        control_post(&fake, "faults/vanished-draft-400", json!({"on": true})).await,
        204
    );
    for id in [&sent.id, &deleted.id] {
        let (status, body) = get(&fake, &tokens.access_token, &format!("/drafts/{id}")).await;
        assert_eq!(status, 400);
        assert_eq!(
            body,
            json!({"error": {
                "code": 400,
                "message": "Invalid draft",
                "errors": [{"message": "Invalid draft", "domain": "global", "reason": "invalidArgument"}],
                "status": "INVALID_ARGUMENT",
            }})
        );
        let (status, body) = send_draft(&fake, &tokens.access_token, id, &raw("<c@x>")).await;
        assert_eq!(status, 400);
        assert_eq!(body["error"]["message"], "Invalid draft");
    }
    // A draft id that never was one is still not found.
    assert_eq!(
        get(&fake, &tokens.access_token, &format!("/drafts/{never}"))
            .await
            .0,
        404
    );
    fake.set_vanished_drafts_answer_400(false);
    assert_eq!(
        send_draft(&fake, &tokens.access_token, &sent.id, &raw("<c@x>"))
            .await
            .0,
        404
    );
    assert_eq!(fake.sent_messages().len(), 1, "nothing more was sent");
}

#[tokio::test]
async fn with_message_ids_replaced_a_sent_message_carries_gmail_s_id_not_the_client_s() {
    let fake = roomy().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    let filed = fake.file_draft(&raw("<mine@agent.example>"), None);
    assert_eq!(
        control_post(&fake, "faults/replace-message-id", json!({"on": true})).await,
        204
    );
    let (status, sent) = send_draft(
        &fake,
        &tokens.access_token,
        &filed.id,
        &raw("<mine@agent.example>"),
    )
    .await;
    assert_eq!(status, 200);
    let stored = &fake.sent_messages()[0].raw;
    let ids: Vec<String> = super::mime::headers(stored)
        .into_iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Message-ID"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(ids.len(), 1, "one Message-ID: {ids:?}");
    assert!(ids[0].ends_with("@mail.gmail.com>"), "{ids:?}");
    // The rest of the message is the client's, byte for byte.
    assert!(String::from_utf8_lossy(stored)
        .ends_with("To: a@example.org\r\nSubject: x\r\n\r\nhello\r\n"));
    let (_, by_old) = get(
        &fake,
        &tokens.access_token,
        "/messages?q=rfc822msgid:mine@agent.example",
    )
    .await;
    assert_eq!(by_old["resultSizeEstimate"], 0);
    let (_, by_new) = get(
        &fake,
        &tokens.access_token,
        &format!("/messages?q=rfc822msgid:{}", ids[0]),
    )
    .await;
    assert_eq!(by_new["messages"][0]["id"], sent["id"]);
}

#[tokio::test]
async fn a_deleted_client_is_refused_at_the_token_endpoint_with_google_s_401_deleted_client() {
    let fake = fake().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    assert_eq!(
        control_post(&fake, "oauth/client-deleted", json!({"on": true})).await,
        204
    );
    let (status, body) = exchange(
        &fake,
        &[
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
            ("refresh_token", &tokens.refresh_token),
            ("grant_type", "refresh_token"),
        ],
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({"error": "deleted_client", "error_description": "The OAuth client was deleted."})
    );
    fake.set_client_deleted(false);
    let (status, _) = exchange(
        &fake,
        &[
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
            ("refresh_token", &tokens.refresh_token),
            ("grant_type", "refresh_token"),
        ],
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn another_client_acts_on_a_draft_right_before_the_next_drafts_send_of_it() {
    let fake = roomy().await;
    let tokens = fake.issue_tokens(&[MODIFY]);
    // The agent updates it: Gmail still sends the bytes the send carries.
    let updated = fake.file_draft(&raw("<v1@x>"), None);
    assert_eq!(
        control_post(
            &fake,
            &format!("drafts/{}/before-next-send", updated.id),
            json!({"action": "update", "rawText": String::from_utf8(raw("<agent@x>")).unwrap()}),
        )
        .await,
        204
    );
    let (status, _) = send_draft(&fake, &tokens.access_token, &updated.id, &raw("<v1@x>")).await;
    assert_eq!(status, 200);
    assert_eq!(fake.sent_messages()[0].raw, raw("<v1@x>"));

    // Someone deletes it: the send finds no draft.
    let deleted = fake.file_draft(&raw("<d@x>"), None);
    assert_eq!(
        control_post(
            &fake,
            &format!("drafts/{}/before-next-send", deleted.id),
            json!({"action": "delete"}),
        )
        .await,
        204
    );
    let (status, body) = send_draft(&fake, &tokens.access_token, &deleted.id, &raw("<d@x>")).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["status"], "NOT_FOUND");

    // The owner sends it from Gmail: one send, then none.
    let elsewhere = fake.file_draft(&raw("<e@x>"), None);
    fake.before_next_send(&elsewhere.id, super::BeforeSend::SendInGmail);
    let (status, _) = send_draft(&fake, &tokens.access_token, &elsewhere.id, &raw("<e@x>")).await;
    assert_eq!(status, 404);
    assert_eq!(fake.send_count(&elsewhere.id), 1);
    assert_eq!(fake.sent_messages().len(), 2);

    assert_eq!(
        control_post(
            &fake,
            "drafts/r404/before-next-send",
            json!({"action": "delete"})
        )
        .await,
        404
    );
    let live = fake.file_draft(&raw("<f@x>"), None);
    assert_eq!(
        control_post(
            &fake,
            &format!("drafts/{}/before-next-send", live.id),
            json!({"action": "explode"})
        )
        .await,
        400
    );
}
