//! The fake's control API over HTTP (what the `countersign-fakes` binary offers black-box tests
//! and demo scripts) plays the plugin and the sessions with the same rules as in-process.

use std::time::{Duration, Instant};

use countersign_muster::{CheckState, DecideOutcome, Decision, DraftState, Error, RouteState};
use serde_json::{json, Value};

use crate::{client, fake};

async fn control(base: &str, path: &str, body: Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{base}/_control/{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

/// The `support-desk` plugin relays a refund request to the `triage` session:
/// `{"messageId", "routeId"}`.
async fn relay_refund_request(base: &str) -> Value {
    control(
        base,
        "messages",
        json!({"plugin": "support-desk", "session": "triage", "from": "li@example.org",
               "subject": "Refund", "snippet": "cracked jug"}),
    )
    .await
}

#[tokio::test]
async fn the_http_control_api_plays_plugin_and_session_through_a_checked_refused_send() {
    let fake = fake().await;
    let base = fake.url();
    control(
        &base,
        "plugins",
        json!({"name": "support-desk", "draftChecks": true}),
    )
    .await;
    let relayed = relay_refund_request(&base).await;
    let route = relayed["routeId"].as_str().unwrap();
    let message = relayed["messageId"].as_str().unwrap();
    let filed = control(
        &base,
        &format!("routes/{route}/drafts"),
        json!({"text": "Refunded."}),
    )
    .await;
    let id = filed["draft"]["id"].as_str().unwrap().to_owned();
    assert_eq!(filed["draft"]["checkState"], "awaiting");

    let muster = client(&fake);
    assert_eq!(
        muster.get_draft(&id).await.unwrap().check,
        CheckState::Awaiting
    );
    control(
        &base,
        &format!("drafts/{id}/check"),
        json!({"verdict": "sendable"}),
    )
    .await;
    let draft = muster.get_draft(&id).await.unwrap();
    let outcome = muster
        .decide(&id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(outcome, DecideOutcome::Queued { .. }),
        "{outcome:?}"
    );
    control(&base, &format!("drafts/{id}/claim"), json!({})).await;
    control(
        &base,
        &format!("drafts/{id}/result"),
        json!({"ok": false, "detail": "refund amount exceeds order"}),
    )
    .await;
    assert_eq!(
        muster.get_draft(&id).await.unwrap().state,
        DraftState::Failed
    );
    let routes = muster.list_routes(message).await.unwrap().records;
    assert_eq!(
        routes.iter().map(|r| r.state.clone()).collect::<Vec<_>>(),
        vec![RouteState::SendFailed, RouteState::Redraft]
    );
    assert_eq!(
        routes[0].reason.as_deref(),
        Some("refund amount exceeds order")
    );
}

/// On tokio's paused clock (the fake answers in this runtime): the offline window and the
/// polls below move only that clock, so the window is seen whatever the machine's speed.
#[tokio::test(start_paused = true)]
async fn the_http_control_api_arms_faults_expires_sessions_and_logs_without_cookies() {
    let fake = fake().await;
    let base = fake.url();
    let muster = client(&fake);
    muster.login().await.unwrap();

    control(
        &base,
        "faults/fail",
        json!({"method": "GET", "path": "/api/plugin/*", "times": 1, "status": 500}),
    )
    .await;
    let e = muster.list_messages(None).await.unwrap_err();
    assert!(matches!(e, Error::Server { status: 500, .. }), "{e:?}");
    muster.list_messages(None).await.unwrap();

    control(
        &base,
        "faults",
        json!({"path": "/api/plugin/*/x", "action": "fail", "status": 500}),
    )
    .await;
    // A pattern that does not match leaves the call alone.
    muster.list_messages(None).await.unwrap();

    control(&base, "sessions/expire", json!({})).await;
    muster.list_messages(None).await.unwrap();
    assert_eq!(fake.count_requests("POST", "/login"), 2);

    // Offline starts just after the answer and ends by itself: the calls fail with a transport
    // error once it has started, and succeed again once it is over, no earlier than the time
    // asked (on the paused clock; the real-time deadline only stops a hang).
    control(&base, "offline", json!({"millis": 300})).await;
    let asked = tokio::time::Instant::now();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match muster.list_messages(None).await {
            Ok(_) => {}
            Err(Error::Transport { .. }) => break,
            Err(e) => panic!("offline must be a transport error, got {e:?}"),
        }
        assert!(Instant::now() < deadline, "the fake never went offline");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    while let Err(e) = muster.list_messages(None).await {
        assert!(matches!(e, Error::Transport { .. }), "{e:?}");
        assert!(Instant::now() < deadline, "the fake never came back");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        asked.elapsed() >= Duration::from_millis(300),
        "back after {:?}",
        asked.elapsed()
    );

    let log: Value = reqwest::get(format!("{base}/_control/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = log.to_string();
    assert!(text.contains("/api/plugin/messages"));
    assert!(!text.contains(fake.password()));
    // The log says a cookie came along, never what it was.
    assert!(log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["hadSessionCookie"] == true));
    assert!(!text.contains("muster_session="));
}

#[tokio::test]
async fn the_http_control_api_files_a_chief_draft_and_refuses_an_unknown_verdict() {
    let fake = fake().await;
    let base = fake.url();
    control(&base, "plugins", json!({"name": "support-desk"})).await;
    let relayed = relay_refund_request(&base).await;
    let message = relayed["messageId"].as_str().unwrap();
    let filed = control(
        &base,
        &format!("messages/{message}/chief-draft"),
        json!({"text": "The chief answers."}),
    )
    .await;
    // The chief-draft route answers with the new draft's id only.
    let id = filed["draft"].as_str().unwrap().to_owned();
    let draft = client(&fake).get_draft(&id).await.unwrap();
    assert_eq!(
        (draft.route_id, draft.text.as_str()),
        (None, "The chief answers.")
    );

    let refused = reqwest::Client::new()
        .post(format!("{base}/_control/drafts/{id}/check"))
        .json(&json!({"verdict": "maybe"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let text = refused.text().await.unwrap();
    assert!(
        text.contains("verdict must be sendable or refused"),
        "{text}"
    );
}
