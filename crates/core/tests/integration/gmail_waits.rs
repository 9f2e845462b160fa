//! Google asking for a long wait ("Retry after" a quarter of an hour): the sync gives the call
//! back at once, tells the owner when the next check is, and asks nothing of Gmail before then,
//! while other accounts go on.

use std::sync::Arc;
use std::time::Duration;

use countersign_core::live::{poll_gmail, GmailCadence, LiveChange, OnChange, GMAIL_ASKED_TO_WAIT};
use countersign_core::services::GmailConnect;
use countersign_fakes::gmail::{Failure, FakeGmail, GmailConfig};
use tokio::sync::{mpsc, watch, Notify};

use crate::support::{eventually, Env};

const FIFTEEN_MINUTES: Duration = Duration::from_secs(15 * 60);

#[tokio::test]
async fn a_15_minute_retry_after_neither_blocks_the_sync_nor_makes_it_poll_before_then() {
    let env = Env::new().await;
    let limited = env.connect_gmail().await;
    let other_gmail = FakeGmail::start(GmailConfig {
        email: "other@example.com".into(),
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    let other = env
        .services
        .connect_gmail(
            &env.store,
            GmailConnect::auto_consent(
                other_gmail.client_secret_json().to_string(),
                other_gmail.api_base(),
                other_gmail.tokeninfo_url(),
            ),
        )
        .await
        .unwrap();
    // Whichever call the first check makes, Google answers it with its per-user limit and a
    // retry time 15 minutes ahead.
    for method in ["getProfile", "drafts.list", "history.list"] {
        env.gmail.fail_next(
            method,
            1,
            Failure::status(403)
                .reason("userRateLimitExceeded")
                .retry_after(FIFTEEN_MINUTES),
        );
    }
    env.gmail.clear_requests();

    // Test cadences: a loop that ignored the retry time would check every 20 ms.
    let cadence = GmailCadence {
        visible: Duration::from_millis(20),
        hidden: Duration::from_millis(20),
    };
    let (_visible, window_visible) = watch::channel(true);
    let (stop, stopped) = watch::channel(false);
    let poll_now = Arc::new(Notify::new());
    let (changes, mut heard) = mpsc::unbounded_channel();
    let on_change: OnChange = Arc::new(move |change| {
        let _ = changes.send(change);
    });
    for account in [limited.clone(), other.clone()] {
        tokio::spawn(poll_gmail(
            env.store.clone(),
            env.services.clone(),
            account,
            cadence,
            window_visible.clone(),
            poll_now.clone(),
            on_change.clone(),
            stopped.clone(),
        ));
    }

    // The call comes back at once (not after 15 minutes) and the owner is told when the next
    // check is. The deadline only bounds a failure.
    let (online, detail) = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match heard.recv().await.expect("the loops are running") {
                LiveChange::Reachability {
                    account_id,
                    online,
                    detail: Some(detail),
                } if account_id == limited.id => return (online, detail),
                _ => {}
            }
        }
    })
    .await
    .expect("the sync held on to Google's 15-minute retry time instead of returning");
    assert!(online, "Google answered: the account is not offline");
    let next_check = |minutes: i64| {
        (chrono::Local::now() + chrono::Duration::minutes(minutes))
            .format("%H:%M")
            .to_string()
    };
    assert!(
        detail.starts_with(GMAIL_ASKED_TO_WAIT)
            && [14, 15, 16]
                .iter()
                .any(|m| detail.ends_with(&next_check(*m))),
        "{detail}"
    );
    let cursor = env.store.sync_cursor(&limited.id).await.unwrap();
    assert_eq!(cursor.last_error.as_deref(), Some(detail.as_str()));
    let asked = env.gmail.requests();

    // The other account goes on meanwhile: 25 more of its checks are the window in which the
    // limited account, at the same cadence and with "Sync now" pressed, must ask nothing.
    let other_checks = other_gmail.requests().len();
    eventually(
        Duration::from_secs(20),
        "the other account keeps syncing",
        || {
            poll_now.notify_waiters();
            let seen = other_gmail.requests().len();
            async move { seen >= other_checks + 25 }
        },
    )
    .await;
    assert_eq!(
        env.gmail.requests(),
        asked,
        "the limited account was checked before Google's retry time"
    );
    stop.send_replace(true);
}

/// Issue 36: Google's daily limit on a send is a usage limit to wait out, not a refusal: the
/// decision waits in the outbox, saying why, and goes out once when the limit is lifted.
#[tokio::test]
async fn a_send_refused_for_the_daily_limit_waits_and_goes_out_once_when_it_is_lifted() {
    use countersign_core::{DecisionState, OutcomeKind};

    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env
        .gmail
        .file_draft(&crate::support::reply(1, "Yes."), None);
    crate::support::sync(&env, &account).await;
    let item = crate::support::item_for(&env, &draft.id).await;
    let decision = crate::support::approve_now(&env, item.id).await;
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(403).reason("dailyLimitExceeded"),
    );
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Retrying), vec![decision.id]);
    let waiting = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(waiting.state, DecisionState::Queued);
    assert!(
        waiting
            .outcome_detail
            .as_deref()
            .is_some_and(|d| d.contains("Gmail asked to slow down")),
        "{waiting:?}"
    );
    assert_eq!(env.gmail.send_count(&draft.id), 0);

    // The limit is lifted (the injected answer was for one call).
    crate::support::dispatch_until(&dispatcher, "the send after the limit", || async {
        env.store.get_decision(decision.id).await.unwrap().state == DecisionState::Done
    })
    .await;
    drop(dispatcher);
    assert_eq!(env.gmail.send_count(&draft.id), 1);
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
}
