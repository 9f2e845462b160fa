//! Large transfers on slow links, stalled links, and retry times too long to wait in a call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use countersign_fakes::gmail::{Failure, FakeGmail};
use countersign_gmail::oauth::GMAIL_MODIFY;
use countersign_gmail::{Error, FixedToken, GmailClient, RetryPolicy};

use crate::support::{config, fake, quick_retries, reply};

/// The test's whole-request timeout: what every call had before transfers were timed by
/// progress. The throttled transfers below take clearly longer than this.
const WHOLE_REQUEST: Duration = Duration::from_secs(3);
/// The test's idle timeout: a transfer that stops moving for this long fails.
const IDLE: Duration = Duration::from_secs(2);

fn client(fake: &FakeGmail, retry: RetryPolicy) -> GmailClient {
    let mut config = config(fake, retry);
    config.request_timeout = WHOLE_REQUEST;
    config.idle_timeout = IDLE;
    let tokens = fake.issue_tokens(&[GMAIL_MODIFY]);
    GmailClient::new(config, Arc::new(FixedToken::new(tokens.access_token))).unwrap()
}

/// A message of about `size` bytes with a `Message-ID`.
fn large(size: usize) -> Vec<u8> {
    let mut raw = reply("<large@example.com>", "The scans.");
    raw.extend(std::iter::repeat_n(b'a', size));
    raw.extend_from_slice(b"\r\n");
    raw
}

/// The issue's case is 30 MB at 1 Mbit/s: about four minutes of upload, far over the old
/// 60 s whole-request timeout, never idle. Four minutes per run is too long for the suite, so
/// the test keeps the 30 MB and scales both clocks down instead: the link is 30 MB at 6 MB/s
/// (at least 5 s, paced by the fake, never faster) and the test client's whole-request timeout
/// is 3 s, so the transfer lasts clearly longer than the timeout the old client applied to it,
/// while the 2 s idle timeout stays short enough that any stall on the way would fail it. What
/// is proved is the ratio, not the absolute numbers: a transfer longer than the whole-request
/// timeout, but never idle, succeeds, and is sent exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_mb_send_slower_than_the_request_timeout_but_never_idle_is_sent_once() {
    let fake = fake().await;
    let raw = large(30 * 1024 * 1024);
    let filed = fake.file_draft(&raw, None);
    fake.throttle_bytes_per_second(Some(6 * 1024 * 1024));
    let gmail = client(&fake, RetryPolicy::never());

    let started = Instant::now();
    let sent = gmail.send_draft(&filed.id, &raw, None).await;
    let took = started.elapsed();

    let sent = sent.unwrap_or_else(|e| panic!("the slow send failed after {took:?}: {e}"));
    assert!(
        took > WHOLE_REQUEST,
        "the link was meant to be slower than the whole-request timeout, took {took:?}"
    );
    assert_eq!(fake.request_count("drafts.send"), 1);
    assert_eq!(fake.send_count(&filed.id), 1);
    assert!(fake.sent_messages()[0].raw == raw, "not the bytes sent");
    assert_eq!(sent.label_ids, vec!["SENT".to_string()]);
}

/// The answer side: a `format=raw` read of a 3 MB draft (4 MB of JSON) at 1 MB/s is timed by
/// progress as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_read_slower_than_the_request_timeout_but_never_idle_arrives() {
    let fake = fake().await;
    let raw = large(3 * 1024 * 1024);
    let filed = fake.file_draft(&raw, None);
    fake.throttle_bytes_per_second(Some(1024 * 1024));
    let gmail = client(&fake, RetryPolicy::never());

    let started = Instant::now();
    let draft = gmail.get_draft_raw(&filed.id).await;
    let took = started.elapsed();

    let draft = draft.unwrap_or_else(|e| panic!("the slow read failed after {took:?}: {e}"));
    assert!(took > WHOLE_REQUEST, "took {took:?}");
    assert!(draft.raw == raw);
    assert_eq!(fake.request_count("drafts.get"), 1);
}

/// A link that stops moving (the fake reads nothing, the connection stays open) fails after
/// the idle time as "may have been received": the caller reconciles, it never resends blindly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_send_fails_uncertain_after_the_idle_time() {
    let fake = fake().await;
    let raw = large(8 * 1024 * 1024);
    let filed = fake.file_draft(&raw, None);
    fake.throttle_bytes_per_second(Some(0));
    let gmail = client(&fake, RetryPolicy::never());

    let started = Instant::now();
    // The deadline only stops a hang; the idle timeout is what ends the call.
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        gmail.send_draft(&filed.id, &raw, None),
    )
    .await
    .expect("a stalled send must end by itself");

    assert!(
        matches!(outcome, Err(Error::Transport { request_sent: true })),
        "{outcome:?}"
    );
    assert!(started.elapsed() >= IDLE, "gave up before the idle time");
    assert_eq!(fake.send_count(&filed.id), 0);
}

/// Google asks for 15 minutes: far over what a call waits itself (30 s), so the read ends at
/// once with the time asked, for the caller to schedule, instead of holding its caller.
#[tokio::test]
async fn a_retry_time_over_the_cap_ends_a_read_at_once_with_the_time_asked() {
    let fake = fake().await;
    fake.fail_next(
        "drafts.list",
        1,
        Failure::status(429)
            .reason("rateLimitExceeded")
            .retry_after(Duration::from_secs(15 * 60)),
    );
    let gmail = client(&fake, quick_retries());

    // The deadline only stops a 15-minute wait; the cap is what ends the call.
    let outcome = tokio::time::timeout(Duration::from_secs(20), gmail.list_drafts())
        .await
        .expect("the read waited for Google's retry time instead of returning");

    match outcome {
        Err(Error::RateLimited {
            retry_after: Some(wait),
        }) => assert!(wait > Duration::from_secs(14 * 60), "{wait:?}"),
        other => panic!("expected RateLimited with the time, got {other:?}"),
    }
    assert_eq!(fake.request_count("drafts.list"), 1);
}
