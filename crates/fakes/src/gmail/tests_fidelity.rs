//! The fake against Google's documented behaviour for threads, uploads, the `gmail.metadata`
//! scope, and the slow-link fault.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::rest::encode_raw;
use super::{FakeGmail, GmailConfig};

const MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
const READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
const METADATA: &str = "https://www.googleapis.com/auth/gmail.metadata";

async fn fake() -> FakeGmail {
    FakeGmail::start(GmailConfig::default()).await.unwrap()
}

fn http() -> reqwest::Client {
    reqwest::Client::new()
}

fn upload_base(fake: &FakeGmail) -> String {
    fake.api_base().replace("/gmail/v1/", "/upload/gmail/v1/")
}

/// A reply to the parent message: the headers that would thread it, if the thread is named.
fn reply(message_id: &str) -> Vec<u8> {
    format!(
        "From: owner@example.com\r\nTo: alice@example.org\r\nSubject: Re: Lunch\r\n\
         Message-ID: {message_id}\r\nIn-Reply-To: <parent@example.org>\r\n\
         References: <parent@example.org>\r\n\r\nYes.\r\n"
    )
    .into_bytes()
}

fn parent() -> Vec<u8> {
    b"From: alice@example.org\r\nTo: owner@example.com\r\nSubject: Lunch\r\n\
      Message-ID: <parent@example.org>\r\n\r\nLunch?\r\n"
        .to_vec()
}

/// `method` `url` with `token` and a JSON body; status and JSON answer.
async fn call_json(method: reqwest::Method, url: String, token: &str, body: Value) -> (u16, Value) {
    let response = http()
        .request(method, url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// An upload of `body` as `content_type` to `path` below the upload base.
async fn upload(
    fake: &FakeGmail,
    token: &str,
    method: reqwest::Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    let response = http()
        .request(method, format!("{}{path}", upload_base(fake)))
        .bearer_auth(token)
        .header("Content-Type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A `multipart/related` body: `metadata` as `metadata_type`, then `media` as `media_type`.
fn related(metadata_type: &str, metadata: &str, media_type: &str, media: &[u8]) -> Vec<u8> {
    let mut body =
        format!("--b7\r\nContent-Type: {metadata_type}\r\n\r\n{metadata}\r\n--b7\r\nContent-Type: {media_type}\r\n\r\n")
            .into_bytes();
    body.extend_from_slice(media);
    body.extend_from_slice(b"\r\n--b7--\r\n");
    body
}

/// Google: a message or draft joins a thread only when "the requested threadId [is] specified
/// on the Message or Draft.Message you supply with your request" (discovery document,
/// `Message.threadId`; <https://developers.google.com/workspace/gmail/api/guides/threads>).
/// Matching `References`/`Subject` alone do not put it there.
#[tokio::test]
async fn a_draft_or_message_without_a_thread_id_starts_a_thread_of_its_own() {
    let fake = fake().await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let (_, thread) = fake.add_inbox_message(&parent(), None);
    let api = fake.api_base();
    let post = reqwest::Method::POST;

    let (status, created) = call_json(
        post.clone(),
        format!("{api}/drafts"),
        &token,
        json!({"message": {"raw": encode_raw(&reply("<d1@x>"))}}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_ne!(
        created["message"]["threadId"],
        json!(thread),
        "drafts.create"
    );

    let (_, in_thread) = call_json(
        post.clone(),
        format!("{api}/drafts"),
        &token,
        json!({"message": {"raw": encode_raw(&reply("<d2@x>")), "threadId": thread}}),
    )
    .await;
    assert_eq!(in_thread["message"]["threadId"], json!(thread));
    let id = in_thread["id"].as_str().unwrap();

    // drafts.update replaces the whole message: without threadId the draft leaves the thread.
    let (status, updated) = call_json(
        reqwest::Method::PUT,
        format!("{api}/drafts/{id}"),
        &token,
        json!({"message": {"raw": encode_raw(&reply("<d3@x>"))}}),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_ne!(
        updated["message"]["threadId"],
        json!(thread),
        "drafts.update"
    );

    let (status, sent) = call_json(
        post.clone(),
        format!("{api}/messages/send"),
        &token,
        json!({"raw": encode_raw(&reply("<m1@x>"))}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert_ne!(sent["threadId"], json!(thread), "messages.send");
    assert_eq!(sent["labelIds"], json!(["SENT"]));
    let (_, sent_in_thread) = call_json(
        post,
        format!("{api}/messages/send"),
        &token,
        json!({"raw": encode_raw(&reply("<m2@x>")), "threadId": thread}),
    )
    .await;
    assert_eq!(sent_in_thread["threadId"], json!(thread));
}

/// The upload guide's simple upload (`uploadType=media`): the body is the message itself
/// (<https://developers.google.com/workspace/gmail/api/guides/uploads#simple>).
#[tokio::test]
async fn an_upload_takes_the_message_as_media_as_well_as_multipart() {
    let fake = fake().await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let draft = fake.file_draft(&reply("<v1@x>"), None);

    let (status, body) = upload(
        &fake,
        &token,
        reqwest::Method::PUT,
        &format!("/drafts/{}?uploadType=media", draft.id),
        "message/rfc822",
        reply("<v2@x>"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.draft_raw(&draft.id).unwrap(), reply("<v2@x>"));

    let (status, body) = upload(
        &fake,
        &token,
        reqwest::Method::POST,
        "/messages/send?uploadType=media",
        "message/rfc822",
        reply("<m@x>"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["labelIds"], json!(["SENT"]));

    let (status, body) = upload(
        &fake,
        &token,
        reqwest::Method::PUT,
        &format!("/drafts/{}?uploadType=multipart", draft.id),
        "multipart/related; boundary=b7",
        related(
            "application/json; charset=UTF-8",
            "{}",
            "message/rfc822",
            &reply("<v3@x>"),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.draft_raw(&draft.id).unwrap(), reply("<v3@x>"));
}

/// Every Gmail upload method accepts `message/*` media (discovery document,
/// `mediaUpload.accept`); anything else is Google's 400 `badRequest`.
#[tokio::test]
async fn an_upload_part_of_the_wrong_type_answers_googles_400() {
    let fake = fake().await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let draft = fake.file_draft(&reply("<v1@x>"), None);
    let path = format!("/drafts/{}", draft.id);
    let put = reqwest::Method::PUT;

    let (status, body) = upload(
        &fake,
        &token,
        put.clone(),
        &format!("{path}?uploadType=media"),
        "text/plain; charset=utf-8",
        reply("<v2@x>"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["errors"][0]["reason"], "badRequest");
    assert_eq!(
        body["error"]["message"],
        "Media type 'text/plain; charset=utf-8' is not supported. Valid media types: [message/*]"
    );

    let (status, body) = upload(
        &fake,
        &token,
        put.clone(),
        &format!("{path}?uploadType=multipart"),
        "multipart/related; boundary=b7",
        related("text/plain", "{}", "message/rfc822", &reply("<v3@x>")),
    )
    .await;
    assert_eq!(status, 400, "metadata part not JSON: {body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");

    let (status, body) = upload(
        &fake,
        &token,
        put,
        &format!("{path}?uploadType=multipart"),
        "multipart/related; boundary=b7",
        related(
            "application/json",
            "{}",
            "application/octet-stream",
            &reply("<v4@x>"),
        ),
    )
    .await;
    assert_eq!(status, 400, "media part not message/*: {body}");
    assert_eq!(fake.draft_raw(&draft.id).unwrap(), reply("<v1@x>"));
}

/// The discovery document: `q` "cannot be used when accessing the api using the
/// gmail.metadata scope"; formats `raw` and `full` likewise. Google's answers are 403
/// `forbidden` with the texts owners report (see `scopes::metadata_limits`), also when the
/// token holds a broader scope beside it.
#[tokio::test]
async fn a_metadata_grant_can_neither_search_nor_read_bodies() {
    let fake = fake().await;
    let (message, _) = fake.add_inbox_message(&parent(), None);
    let token = fake.issue_tokens(&[METADATA]).access_token;
    let api = fake.api_base();
    let get = |path: String| {
        let token = token.clone();
        async move {
            let response = http().get(path).bearer_auth(token).send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };

    let (status, body) = get(format!("{api}/messages?q=lunch")).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Metadata scope does not support 'q' parameter"
    );
    assert_eq!(body["error"]["errors"][0]["reason"], "forbidden");
    assert_eq!(get(format!("{api}/messages")).await.0, 200);

    let (status, body) = get(format!("{api}/messages/{message}?format=raw")).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["error"]["message"],
        "Metadata scope doesn't allow format RAW"
    );
    // `full` is the default format.
    let (status, body) = get(format!("{api}/messages/{message}")).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["error"]["message"],
        "Metadata scope doesn't allow format FULL"
    );
    let (status, body) = get(format!("{api}/messages/{message}?format=metadata")).await;
    assert_eq!(status, 200, "{body}");

    let both = fake.issue_tokens(&[READONLY, METADATA]).access_token;
    let response = http()
        .get(format!("{api}/messages?q=lunch"))
        .bearer_auth(&both)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        403,
        "gmail.metadata limits a broader grant too"
    );
    let readonly = fake.issue_tokens(&[READONLY]).access_token;
    let response = http()
        .get(format!("{api}/messages?q=lunch"))
        .bearer_auth(&readonly)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// The throttle paces an upload: its bytes cannot all arrive before size / rate has passed (a
/// lower bound the pacing guarantees, whatever the machine's speed).
#[tokio::test]
async fn a_throttled_upload_arrives_no_faster_than_the_rate() {
    let fake = fake().await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let draft = fake.file_draft(&reply("<v1@x>"), None);
    let mut big = reply("<v2@x>");
    big.extend(std::iter::repeat_n(b'a', 200_000));
    let set = http()
        .post(format!("{}/_control/faults/throttle", fake.base_url()))
        .json(&json!({"bytesPerSecond": 200_000}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 204);

    let started = Instant::now();
    let (status, _) = upload(
        &fake,
        &token,
        reqwest::Method::PUT,
        &format!("/drafts/{}?uploadType=media", draft.id),
        "message/rfc822",
        big.clone(),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "200 kB at 200 kB/s took {:?}",
        started.elapsed()
    );
    assert!(fake.draft_raw(&draft.id).unwrap() == big);
}

/// At 0 bytes per second nothing moves: the request never completes (a deadline ends the
/// wait) and Google never acts on it; lifting the throttle lets the next request through.
#[tokio::test]
async fn a_throttle_of_zero_stalls_the_request_and_nothing_is_done() {
    let fake = fake().await;
    let token = fake.issue_tokens(&[MODIFY]).access_token;
    let draft = fake.file_draft(&reply("<v1@x>"), None);
    fake.throttle_bytes_per_second(Some(0));
    let stalled = http()
        .put(format!(
            "{}/drafts/{}?uploadType=media",
            upload_base(&fake),
            draft.id
        ))
        .bearer_auth(&token)
        .header("Content-Type", "message/rfc822")
        .body(reply("<v2@x>"))
        .timeout(Duration::from_millis(500))
        .send()
        .await;
    assert!(stalled.is_err_and(|e| e.is_timeout()));
    assert_eq!(fake.request_count("drafts.update"), 0);
    assert_eq!(fake.draft_raw(&draft.id).unwrap(), reply("<v1@x>"));

    let lifted = http()
        .post(format!("{}/_control/faults/throttle", fake.base_url()))
        .json(&json!({"bytesPerSecond": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(lifted.status(), 204);
    let (status, _) = upload(
        &fake,
        &token,
        reqwest::Method::PUT,
        &format!("/drafts/{}?uploadType=media", draft.id),
        "message/rfc822",
        reply("<v3@x>"),
    )
    .await;
    assert_eq!(status, 200);
}
