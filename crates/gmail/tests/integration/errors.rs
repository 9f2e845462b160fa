//! Google's error answers become typed errors, never raw 403s.

use std::sync::Arc;
use std::time::Duration;

use countersign_fakes::gmail::Failure;
use countersign_gmail::oauth::{GMAIL_COMPOSE, GMAIL_MODIFY, GMAIL_READONLY, GMAIL_SEND};
use countersign_gmail::{Error, FixedToken, GmailClient, RetryPolicy};

use crate::support::{client_no_retry, client_with_scopes, config, fake, reply};

#[tokio::test]
async fn an_unknown_draft_is_not_found() {
    let fake = fake().await;
    let err = client_no_retry(&fake)
        .get_draft_raw("r123")
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn gmail_send_alone_cannot_send_a_draft_and_the_error_names_what_would() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<s@example.com>", "x"), None);
    let gmail = client_with_scopes(&fake, &[GMAIL_SEND], RetryPolicy::never());
    let err = gmail
        .send_draft(&filed.id, &reply("<s@example.com>", "x"), None)
        .await
        .unwrap_err();
    match &err {
        Error::InsufficientScope { needed } => {
            assert!(needed.iter().any(|s| s == GMAIL_MODIFY));
            assert!(needed.iter().any(|s| s == GMAIL_COMPOSE));
            assert!(!needed.iter().any(|s| s == GMAIL_SEND));
        }
        other => panic!("expected a scope error, got {other:?}"),
    }
    assert!(!err.to_string().contains("403"), "{err}");
    assert_eq!(fake.send_count(&filed.id), 0);
}

#[tokio::test]
async fn a_read_only_account_can_sync_but_not_send() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<s@example.com>", "x"), None);
    let gmail = client_with_scopes(&fake, &[GMAIL_READONLY], RetryPolicy::never());
    assert_eq!(gmail.list_drafts().await.unwrap().len(), 1);
    assert!(matches!(
        gmail.delete_draft(&filed.id).await,
        Err(Error::InsufficientScope { .. })
    ));
}

#[tokio::test]
async fn a_403_rate_limit_is_a_rate_limit_not_a_permission_problem() {
    let fake = fake().await;
    fake.fail_next(
        "drafts.list",
        1,
        Failure::status(403).reason("userRateLimitExceeded"),
    );
    let err = client_no_retry(&fake).list_drafts().await.unwrap_err();
    assert!(
        matches!(err, Error::RateLimited { retry_after: None }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_429_carries_the_retry_time_from_the_message() {
    let fake = fake().await;
    fake.fail_next(
        "drafts.list",
        1,
        Failure::status(429).retry_after(Duration::from_secs(2)),
    );
    // The fake writes "now + 2 s" (to the millisecond, truncated) when it answers and the
    // client subtracts its own now when it reads the answer, so the wait is two seconds less the
    // time between those two moments: bounded by the time around the call, not by a guess of
    // how fast the machine is.
    let before = chrono::Utc::now();
    let err = client_no_retry(&fake).list_drafts().await.unwrap_err();
    let spent = (chrono::Utc::now() - before).to_std().unwrap();
    match err {
        Error::RateLimited {
            retry_after: Some(wait),
        } => assert!(
            wait <= Duration::from_secs(2)
                && wait + spent + Duration::from_millis(1) >= Duration::from_secs(2),
            "{wait:?} after {spent:?}"
        ),
        other => panic!("expected a rate limit with a time, got {other:?}"),
    }
}

#[tokio::test]
async fn a_5xx_is_a_server_error_with_googles_message() {
    let fake = fake().await;
    fake.fail_next("getProfile", 1, Failure::status(503));
    match client_no_retry(&fake).profile().await.unwrap_err() {
        Error::Server { status, message } => {
            assert_eq!(status, 503);
            assert_eq!(message, "The service is currently unavailable.");
        }
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_refused_token_is_unauthorized_and_the_error_does_not_show_it() {
    let fake = fake().await;
    let gmail = GmailClient::new(
        config(&fake, RetryPolicy::never()),
        Arc::new(FixedToken::new("ya29.not-a-real-token")),
    )
    .unwrap();
    let err = gmail.profile().await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("ya29"));
}

#[tokio::test]
async fn a_send_without_recipients_is_refused_with_googles_reason() {
    let fake = fake().await;
    let raw = b"From: owner@example.com\r\nSubject: nobody\r\n\r\nx\r\n";
    let filed = fake.file_draft(raw, None);
    match client_no_retry(&fake)
        .send_draft(&filed.id, raw, None)
        .await
    {
        Err(Error::Refused { status, reason, .. }) => {
            assert_eq!(status, 400);
            assert_eq!(reason, "invalidArgument");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}
