//! Retries, quota and what the outbox needs to know when the network fails.

use std::time::{Duration, Instant};

use countersign_fakes::gmail::{Failure, GmailConfig};
use countersign_gmail::oauth::GMAIL_MODIFY;
use countersign_gmail::{Error, RetryPolicy};

use crate::support::{
    client, client_no_retry, client_with_scopes, config, fake, fake_with, quick_retries, reply,
    until_listening,
};

#[tokio::test]
async fn a_429_storm_on_reads_is_retried_to_success() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<a@example.com>", "x"), None);
    fake.fail_next(
        "drafts.get",
        5,
        Failure::status(429).retry_after(Duration::from_millis(20)),
    );
    let draft = client(&fake).get_draft_raw(&filed.id).await.unwrap();
    assert_eq!(draft.id, filed.id);
    assert_eq!(fake.request_count("drafts.get"), 6);
}

#[tokio::test]
async fn server_errors_on_reads_are_retried_to_success() {
    let fake = fake().await;
    fake.fail_next("drafts.list", 3, Failure::status(500));
    client(&fake).list_drafts().await.unwrap();
    assert_eq!(fake.request_count("drafts.list"), 4);
}

/// On tokio's paused clock (the fake answers in this runtime, so that clock moves only while
/// everything waits on a timer): what the client waited is its own wait, not the machine's
/// slowness. Google names a wall-clock time ("Retry after …"), so the client waits what is
/// left of it when the answer is read: its wait plus the real time spent reaches the time
/// named (to the millisecond the message is written in), and a client that ignored it would
/// have waited nothing at all, however slow the machine.
#[tokio::test(start_paused = true)]
async fn the_retry_time_google_asks_for_is_waited() {
    let fake = fake().await;
    fake.fail_next(
        "getProfile",
        1,
        Failure::status(429).retry_after(Duration::from_millis(600)),
    );
    let (waited_from, spent_from) = (tokio::time::Instant::now(), Instant::now());
    client(&fake).profile().await.unwrap();
    let (waited, spent) = (waited_from.elapsed(), spent_from.elapsed());
    assert!(waited > Duration::ZERO, "the client never waited");
    assert!(
        waited + spent + Duration::from_millis(1) >= Duration::from_millis(600),
        "waited {waited:?}, spent {spent:?}"
    );
    assert_eq!(fake.request_count("getProfile"), 2);
}

#[tokio::test]
async fn reads_give_up_after_the_last_attempt() {
    let fake = fake().await;
    fake.fail_next("drafts.list", 100, Failure::status(503));
    let policy = RetryPolicy {
        max_attempts: 3,
        ..quick_retries()
    };
    let err = client_with_scopes(&fake, &[GMAIL_MODIFY], policy)
        .list_drafts()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Server { status: 503, .. }));
    assert_eq!(fake.request_count("drafts.list"), 3);
}

#[tokio::test]
async fn a_read_whose_connection_drops_is_retried() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<a@example.com>", "x"), None);
    fake.drop_after_commit("drafts.get", 1);
    let draft = client(&fake).get_draft_raw(&filed.id).await.unwrap();
    assert_eq!(draft.id, filed.id);
    assert_eq!(fake.request_count("drafts.get"), 2);
}

#[tokio::test]
async fn a_refused_connection_means_the_request_was_not_sent() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<a@example.com>", "x"), None);
    let gmail = client_no_retry(&fake);
    fake.set_online(false);
    until_listening(&fake, false).await;
    let err = gmail
        .send_draft(&filed.id, &reply("<a@example.com>", "x"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                request_sent: false
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        gmail.list_drafts().await,
        Err(Error::Transport {
            request_sent: false
        })
    ));
    fake.set_online(true);
    until_listening(&fake, true).await;
    assert_eq!(fake.send_count(&filed.id), 0);
    assert_eq!(
        gmail.list_drafts().await.unwrap().len(),
        1,
        "the draft is still there"
    );
}

#[tokio::test]
async fn a_send_whose_answer_is_lost_is_uncertain_and_never_repeated() {
    let fake = fake().await;
    let raw = reply("<lost@example.com>", "x");
    let filed = fake.file_draft(&raw, None);
    fake.drop_after_commit("drafts.send", 1);
    // Even with generous retries configured, a send is tried once.
    let gmail = client(&fake);
    let err = gmail.send_draft(&filed.id, &raw, None).await.unwrap_err();
    assert!(
        matches!(err, Error::Transport { request_sent: true }),
        "{err:?}"
    );
    assert_eq!(fake.request_count("drafts.send"), 1);
    assert_eq!(fake.send_count(&filed.id), 1);
    // What the outbox does next: find the Message-ID in SENT.
    let found = gmail
        .find_sent_by_message_id("<lost@example.com>")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
}

#[tokio::test]
async fn a_failed_send_is_not_retried_inside_the_client() {
    let fake = fake().await;
    let raw = reply("<f@example.com>", "x");
    let filed = fake.file_draft(&raw, None);
    fake.fail_next("drafts.send", 1, Failure::status(503));
    let err = client(&fake)
        .send_draft(&filed.id, &raw, None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Server { status: 503, .. }));
    assert_eq!(fake.request_count("drafts.send"), 1);
}

#[tokio::test]
async fn the_quota_limiter_keeps_a_burst_under_the_fakes_quota() {
    // 3,000 units a minute is 50 a second; 30 drafts.get are 150 units.
    let fake = fake_with(GmailConfig {
        quota_units_per_minute: 3_000,
        ..GmailConfig::default()
    })
    .await;
    let filed = fake.file_draft(&reply("<q@example.com>", "x"), None);
    let mut cfg = config(&fake, RetryPolicy::never());
    cfg.units_per_second = 50;
    let tokens = fake.issue_tokens(&[GMAIL_MODIFY]);
    let gmail = countersign_gmail::GmailClient::new(
        cfg,
        std::sync::Arc::new(countersign_gmail::FixedToken::new(tokens.access_token)),
    )
    .unwrap();

    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..30 {
        let gmail = gmail.clone();
        let id = filed.id.clone();
        tasks.spawn(async move { gmail.get_draft_minimal(&id).await });
    }
    while let Some(result) = tasks.join_next().await {
        result.unwrap().expect("no call is throttled");
    }
    // 50 units were there at once; the other 100 took two seconds to accrue.
    assert!(
        start.elapsed() >= Duration::from_millis(1800),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(fake.request_count("drafts.get"), 30);
}

#[tokio::test]
async fn without_the_limiter_the_same_burst_is_throttled_by_the_fake() {
    // The control case: proves the fake does enforce its quota.
    let fake = fake_with(GmailConfig {
        quota_units_per_minute: 3_000,
        ..GmailConfig::default()
    })
    .await;
    let filed = fake.file_draft(&reply("<q@example.com>", "x"), None);
    let mut cfg = config(&fake, RetryPolicy::never());
    cfg.units_per_second = 100_000;
    let tokens = fake.issue_tokens(&[GMAIL_MODIFY]);
    let gmail = countersign_gmail::GmailClient::new(
        cfg,
        std::sync::Arc::new(countersign_gmail::FixedToken::new(tokens.access_token)),
    )
    .unwrap();
    let mut throttled = 0;
    for _ in 0..30 {
        if let Err(Error::RateLimited { retry_after }) = gmail.get_draft_minimal(&filed.id).await {
            assert!(retry_after.is_some());
            throttled += 1;
        }
    }
    assert!(throttled > 0);
}

#[tokio::test]
async fn a_send_that_times_out_after_connecting_is_uncertain_and_still_happens() {
    let fake = fake().await;
    let raw = reply("<slow@example.com>", "x");
    let filed = fake.file_draft(&raw, None);
    fake.delay("drafts.send", Duration::from_millis(800), Some(1));
    let mut cfg = config(&fake, quick_retries());
    // A send is a transfer: it is given up when nothing moves for the idle time, here while
    // the answer is held back.
    cfg.idle_timeout = Duration::from_millis(300);
    let tokens = fake.issue_tokens(&[GMAIL_MODIFY]);
    let gmail = countersign_gmail::GmailClient::new(
        cfg,
        std::sync::Arc::new(countersign_gmail::FixedToken::new(tokens.access_token)),
    )
    .unwrap();
    let err = gmail.send_draft(&filed.id, &raw, None).await.unwrap_err();
    assert!(
        matches!(err, Error::Transport { request_sent: true }),
        "{err:?}"
    );
    // Google went on with it: exactly why the outbox must reconcile instead of resending. The
    // fake sends once its delay is over, whenever that is on a busy machine; the deadline only
    // stops a hang.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fake.send_count(&filed.id) == 0 {
        assert!(Instant::now() < deadline, "the send never happened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(fake.send_count(&filed.id), 1);
    assert_eq!(fake.request_count("drafts.send"), 1);
}

#[tokio::test]
async fn a_long_run_of_reads_from_many_workers_is_never_throttled() {
    // 6,000 units a minute is 100 a second; 120 drafts.get are 600 units, six times the fake's
    // one-second bucket, so only pacing keeps every call under the quota. How close to the quota
    // the pacing runs is a speed figure: crates/core/benches/gmail_sync.rs prints the reached
    // share (target ≥ 0.9) instead of a wall-clock floor here.
    let fake = fake_with(GmailConfig {
        quota_units_per_minute: 6_000,
        ..GmailConfig::default()
    })
    .await;
    let filed = fake.file_draft(&reply("<q@example.com>", "x"), None);
    let mut cfg = config(&fake, RetryPolicy::never());
    cfg.units_per_second = 100;
    let tokens = fake.issue_tokens(&[GMAIL_MODIFY]);
    let gmail = countersign_gmail::GmailClient::new(
        cfg,
        std::sync::Arc::new(countersign_gmail::FixedToken::new(tokens.access_token)),
    )
    .unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let gmail = gmail.clone();
        let id = filed.id.clone();
        tasks.spawn(async move {
            for _ in 0..15 {
                gmail
                    .get_draft_minimal(&id)
                    .await
                    .unwrap_or_else(|e| panic!("worker {worker} was throttled: {e:?}"));
            }
        });
    }
    while let Some(result) = tasks.join_next().await {
        result.unwrap();
    }
    // Every read was answered on its first try: none was refused and sent again.
    assert_eq!(fake.request_count("drafts.get"), 120);
}
