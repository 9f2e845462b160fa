//! `Transport { request_sent }`: false only when the connection was never made.

use countersign_muster::{DecideOutcome, Decision, DraftState, Error};

use crate::{client, fake, file_reply, read};

/// Longer than any test runs: a call held this long is never answered while it looks.
const HELD: std::time::Duration = std::time::Duration::from_secs(3600);

#[tokio::test]
async fn an_offline_muster_is_a_transport_error_with_nothing_sent() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    fake.set_online(false);
    fake.server().until_listening(false).await;
    // A new client, so no kept-alive connection from before: a request written onto a socket
    // the server is closing at that very instant may have been read, and is rightly reported
    // as possibly sent. Here the only way to fail is a refused connect.
    let muster = client(&fake);
    let e = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Transport {
                request_sent: false
            }
        ),
        "{e:?}"
    );
    assert!(e.request_not_sent());
    assert_eq!(
        e.to_string(),
        "cannot reach muster (the request was not sent)"
    );
    fake.set_online(true);
    // The fake binds its port again in the background; once it answers, nothing has changed.
    fake.server().until_listening(true).await;
    let after = muster.get_draft(&draft.id).await;
    assert_eq!(after.unwrap().state, DraftState::Pending);
}

#[tokio::test]
async fn a_connection_dropped_after_muster_committed_is_sent_and_the_repeat_says_done() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    fake.drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
    let e = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Transport { request_sent: true }),
        "{e:?}"
    );
    assert!(!e.request_not_sent());
    // The decision did land; deciding again with the reviewed version tells us so.
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(
            outcome,
            DecideOutcome::AlreadyDecided {
                same_decision: true,
                ..
            }
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_server_error_carries_musters_message_and_is_retryable() {
    let fake = fake().await;
    let muster = client(&fake);
    fake.fail_next("GET", "/api/plugin/drafts", 1, 503);
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(
        matches!(&e, Error::Server { status: 503, message, .. } if message == "injected failure"),
        "{e:?}"
    );
    assert!(e.is_retryable());
    muster.list_drafts(None).await.unwrap();
}

/// On tokio's paused clock (the fake answers in this runtime): the held call is never
/// answered, so the 200 ms timeout is what ends it, while the calls before it cannot time out
/// however slow the machine (that clock moves only while everything waits on a timer).
#[tokio::test(start_paused = true)]
async fn a_slow_answer_past_the_request_timeout_counts_as_possibly_sent() {
    let fake = fake().await;
    let muster = countersign_muster::MusterClient::with_request_timeout(
        fake.url().parse().unwrap(),
        fake.password().to_owned(),
        std::time::Duration::from_millis(200),
    )
    .unwrap();
    muster.login().await.unwrap();
    fake.delay_next("GET", "/api/plugin/drafts", 1, HELD);
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(
        matches!(e, Error::Transport { request_sent: true }),
        "{e:?}"
    );
}

/// On tokio's paused clock, as above: only the held sign-in can time out.
#[tokio::test(start_paused = true)]
async fn a_re_login_lost_on_the_network_leaves_the_decision_certainly_unsent() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = countersign_muster::MusterClient::with_request_timeout(
        fake.url().parse().unwrap(),
        fake.password().to_owned(),
        std::time::Duration::from_millis(300),
    )
    .unwrap();
    let draft = read(&muster, &filed.draft_id).await;
    fake.expire_sessions();
    // muster refuses the decision unread (401); the re-login then times out.
    fake.delay_next("POST", "/login", 1, HELD);
    let e = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Transport {
                request_sent: false
            }
        ),
        "{e:?}"
    );
    let fresh = client(&fake);
    assert_eq!(read(&fresh, &draft.id).await.state, DraftState::Pending);
}
