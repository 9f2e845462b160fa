//! Gmail as Google behaves over days of use (issue 12): deletions that history leaves out,
//! unusable history ids, sign-ins Google ends, and the polling cadence of a running app.

use countersign_core::Error;
use std::sync::Arc;
use std::time::Duration;

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::live::GmailCadence;
use countersign_core::services::GmailConnect;
use countersign_core::store::DecisionFilter;
use countersign_core::sync::{sync_gmail, sync_gmail_with, Listing, LISTING_INTERVAL};
use countersign_core::OutcomeKind;
use countersign_core::{DecisionState, ItemState};
use countersign_gmail::Browser;

use crate::support::{
    approve_now, eventually, item_for, passes_after, quick_dispatch, reply, shown, sync, Env,
};

const ACTOR: &str = "owner via test";

/// An env whose fake Gmail, like (possibly) the real one, leaves deletions out of history.
async fn env_without_deletions_in_history() -> (Env, countersign_core::store::Account) {
    let env = Env::new().await;
    env.gmail.set_history_reports_deletions(false);
    let account = env.connect_gmail().await;
    (env, account)
}

/// Date the last listing back so that the next sync must list.
async fn make_listing_due(env: &Env, account_id: &str) {
    let long_ago = chrono::Utc::now() - chrono::Duration::from_std(LISTING_INTERVAL).unwrap();
    env.store
        .record_listing(account_id, long_ago)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_draft_deleted_in_gmail_leaves_the_queue_at_the_next_reconciliation_though_history_says_nothing(
) {
    let (env, account) = env_without_deletions_in_history().await;
    let kept = env.gmail.file_draft(&reply(1, "keep"), None);
    let deleted = env.gmail.file_draft(&reply(2, "delete me"), None);
    sync(&env, &account).await;
    let client = env.services.gmail(&account).await.unwrap();

    env.gmail.delete_draft(&deleted.id);
    // History is silent and the last listing is fresh: nothing is noticed yet.
    let quiet = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(quiet, Default::default());
    assert_eq!(item_for(&env, &deleted.id).await.state, ItemState::Pending);

    // Five minutes on, the listing reconciles the mirror.
    make_listing_due(&env, &account.id).await;
    env.gmail.clear_requests();
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(report.gone, 1);
    assert_eq!(env.gmail.request_count("drafts.list"), 1);
    let gone = item_for(&env, &deleted.id).await;
    assert_eq!(gone.state, ItemState::Gone);
    assert!(gone.state_reason.unwrap().contains("deleted elsewhere"));
    assert_eq!(item_for(&env, &kept.id).await.state, ItemState::Pending);

    // And the listing is not repeated on every check.
    env.gmail.clear_requests();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(env.gmail.request_count("drafts.list"), 0);
}

#[tokio::test]
async fn a_draft_sent_from_gmail_becomes_sent_elsewhere_and_is_never_sent_again() {
    let (env, account) = env_without_deletions_in_history().await;
    let pending = env.gmail.file_draft(&reply(1, "pending"), None);
    let approved = env.gmail.file_draft(&reply(2, "approved"), None);
    sync(&env, &account).await;
    let client = env.services.gmail(&account).await.unwrap();
    let approved_item = item_for(&env, &approved.id).await;
    let decision = approve_now(&env, approved_item.id).await;

    // The owner presses Send in Gmail on both before Countersign acts.
    env.gmail.send_draft_in_gmail(&pending.id).unwrap();
    env.gmail.send_draft_in_gmail(&approved.id).unwrap();

    // "Sync now" reconciles against drafts.list at once.
    sync_gmail_with(&env.store, &account, &client, Listing::Always)
        .await
        .unwrap();
    let elsewhere = item_for(&env, &pending.id).await;
    assert_eq!(elsewhere.state, ItemState::Gone);
    assert!(elsewhere.state_reason.unwrap().contains("sent elsewhere"));
    let refused = decide::approve(
        &env.store,
        &shown(&env, elsewhere.id).await,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, Error::Refused { why, .. } if why.contains("not there any more")),
        "a draft gone from Gmail cannot be approved: {refused:?}"
    );

    // The queued approval finds it in Sent and does not send it again.
    let dispatcher = env.dispatcher().await;
    dispatcher.run_once().await.unwrap();
    dispatcher.run_once().await.unwrap();
    let after = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(after.state, DecisionState::Conflict);
    assert!(after.outcome_detail.unwrap().contains("sent elsewhere"));
    assert_eq!(
        env.gmail.send_count(&pending.id),
        1,
        "only Gmail's own send"
    );
    assert_eq!(
        env.gmail.send_requests(&pending.id),
        0,
        "Countersign never asked Gmail to send it"
    );
    assert_eq!(
        env.gmail.send_count(&approved.id),
        1,
        "only Gmail's own send"
    );
    assert_eq!(
        env.gmail.send_requests(&approved.id),
        0,
        "Countersign never asked Gmail to send it"
    );
    assert_eq!(env.gmail.request_count("drafts.send"), 0);
}

#[tokio::test]
async fn a_start_history_id_answered_400_falls_back_to_a_full_sync() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    env.gmail.file_draft(&reply(1, "one"), None);
    sync(&env, &account).await;
    env.gmail.file_draft(&reply(2, "two"), None);
    // A history id Gmail cannot use is answered 400 "Invalid startHistoryId".
    env.store
        .record_sync_success(&account.id, Some("not-a-history-id"), false)
        .await
        .unwrap();
    let client = env.services.gmail(&account).await.unwrap();
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert!(report.full);
    assert_eq!(report.new_items, 1);
    let cursor = env.store.sync_cursor(&account.id).await.unwrap();
    assert_eq!(cursor.history_id, Some(env.gmail.history_id().to_string()));
}

#[tokio::test]
async fn invalid_grant_marks_reconnect_needed_and_the_queued_approval_is_sent_once_after_reconnecting(
) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let raw = reply(1, "The invoice is attached.");
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;

    // A "Testing" OAuth client's refresh token has lived its 7 days.
    env.gmail.set_refresh_token_lifetime(Some(Duration::ZERO));
    env.gmail.expire_access_tokens();
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert!(report.ended(OutcomeKind::Done).is_empty());
    assert_eq!(env.gmail.request_count("drafts.send"), 0);
    let waiting = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(
        waiting.state,
        DecisionState::Queued,
        "it waits, nothing is lost"
    );
    let marked = env.store.get_account(&account.id).await.unwrap();
    let reason = marked.reconnect_reason.expect("account marked");
    assert!(
        reason.starts_with("Reconnect needed: Google ended this sign-in"),
        "{reason}"
    );
    assert!(reason.contains("7 days"), "{reason}");

    // Reads stop: a sync does not even ask Google for a token.
    env.gmail.clear_requests();
    let client = env.services.gmail(&account).await.unwrap();
    let err = sync_gmail(&env.store, &account, &client).await.unwrap_err();
    assert!(err.to_string().starts_with("Reconnect needed"), "{err}");
    assert!(
        env.gmail.requests().is_empty(),
        "{:?}",
        env.gmail.requests()
    );

    // The owner reconnects (the client is now "In production", say).
    env.gmail.set_refresh_token_lifetime(None);
    let reconnected = env.connect_gmail().await;
    assert_eq!(reconnected.id, account.id);
    assert_eq!(reconnected.reconnect_reason, None);
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Done), vec![decision.id]);
    dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert_eq!(env.gmail.sent_messages()[0].raw, raw);
    assert!(env
        .store
        .list_decisions(DecisionFilter::Live)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn showing_the_window_switches_gmail_checks_to_the_visible_cadence() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let app = app_checking_gmail_every_20_ms_when_looked_at(&env).await;
    app.set_window_visible(false);
    // The reconciliation at start.
    first_listing(&env, &account).await;
    let draft = env.gmail.file_draft(&reply(1, "new"), None);
    app.set_window_visible(true);
    eventually(
        Duration::from_secs(10),
        "the draft in the mirror",
        || async {
            env.store
                .find_item(&account.id, &draft.id)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    app.stop();
}

#[test]
fn the_default_cadence_is_five_seconds_visible_and_a_minute_hidden() {
    let cadence = GmailCadence::default();
    assert_eq!(cadence.every(true), Duration::from_secs(5));
    assert_eq!(cadence.every(false), Duration::from_secs(60));
}

#[tokio::test]
async fn a_web_application_client_is_refused_before_any_browser_opens() {
    let env = Env::new().await;
    let mut json = env.gmail.client_secret_json();
    let web = json["installed"].take();
    let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = opened.clone();
    let connect = GmailConnect {
        client_secret_json: serde_json::json!({ "web": web }).to_string(),
        api_base: env.gmail.api_base(),
        tokeninfo_url: env.gmail.tokeninfo_url(),
        browser: Browser::Custom(Arc::new(move |_url| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Ok(()) })
        })),
        consent_timeout: Duration::from_secs(300),
    };
    let err = env
        .services
        .connect_gmail(&env.store, connect)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("create an OAuth client of type \"Desktop app\""),
        "{err}"
    );
    assert_eq!(opened.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(env.gmail.request_count("oauth.authorize"), 0);
    assert!(env.store.list_accounts().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_idle_owner_is_checked_for_as_rarely_as_a_hidden_window_and_coming_back_checks() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let app = app_checking_gmail_every_20_ms_when_looked_at(&env).await;
    first_listing(&env, &account).await;
    // The window stays visible, but the owner is idle.
    app.set_owner_idle(true);
    env.gmail.clear_requests();
    let draft = env.gmail.file_draft(&reply(1, "new"), None);
    // Twenty-five visible periods: a visible cadence would have checked many times. Only a
    // check already on its way when the owner went idle may land (however late it lands).
    // Every check starts with one `history.list` (a listing follows it only when something
    // changed, as the draft just filed did): that is what counts the checks. The periods are
    // counted, not slept: the app's dispatch loop, ticking as often as a visible check would,
    // finishes twenty-five passes (a loaded machine slows both alike).
    passes_after(&app, 25).await;
    let checks = env.gmail.request_count("history.list");
    assert!(
        checks <= 1,
        "Gmail was checked {checks} times while the owner was idle"
    );
    // Coming back checks at once (and brings the draft in, unless that late check did).
    app.set_owner_idle(false);
    eventually(
        Duration::from_secs(10),
        "a check after coming back, and the draft in the mirror",
        || async {
            env.gmail.request_count("history.list") > checks
                && env
                    .store
                    .find_item(&account.id, &draft.id)
                    .await
                    .unwrap()
                    .is_some()
        },
    )
    .await;
    app.stop();
}

/// A running app checking Gmail every 20 ms while looked at and hourly otherwise: only the
/// visible cadence can bring a new draft in during a test.
async fn app_checking_gmail_every_20_ms_when_looked_at(env: &Env) -> RunningApp {
    let options = AppOptions {
        gmail_cadence: GmailCadence {
            visible: Duration::from_millis(20),
            hidden: Duration::from_secs(3600),
        },
        dispatch: quick_dispatch(),
        // As often as a visible check: its passes count the visible periods that went by.
        dispatch_tick: Duration::from_millis(20),
        ..AppOptions::default()
    };
    RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        options,
        Arc::new(|_| {}),
    )
    .await
    .unwrap()
}

/// Waits for the reconciliation at start.
async fn first_listing(env: &Env, account: &countersign_core::store::Account) {
    eventually(Duration::from_secs(10), "the first listing", || async {
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .last_listed_at
            .is_some()
    })
    .await;
}

/// Issue 36: Gmail may replace a draft's Message-ID when it sends it. A draft the owner sent
/// from Gmail's own page that way is still recorded as sent elsewhere — found by its thread and
/// its bodies, as a lost send is — never as deleted.
#[tokio::test]
async fn a_draft_sent_from_gmail_with_its_message_id_replaced_is_recorded_as_sent_elsewhere() {
    let (env, account) = env_without_deletions_in_history().await;
    let (_, thread) = env
        .gmail
        .add_inbox_message(&crate::support::parent(1), None);
    let draft = env
        .gmail
        .file_draft(&reply(1, "See you Tuesday."), Some(&thread));
    let deleted = env
        .gmail
        .file_draft(&reply(2, "Never mind."), Some(&thread));
    sync(&env, &account).await;
    env.gmail.set_replace_message_id_on_send(true);
    env.gmail.send_draft_in_gmail(&draft.id).unwrap();
    env.gmail.delete_draft(&deleted.id);

    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail_with(&env.store, &account, &client, Listing::Always)
        .await
        .unwrap();
    let sent = item_for(&env, &draft.id).await;
    assert_eq!(sent.state, ItemState::Gone);
    assert!(
        sent.state_reason
            .as_deref()
            .unwrap_or("")
            .contains("sent elsewhere"),
        "{sent:?}"
    );
    // A deletion in the same thread is not taken for a send.
    let gone = item_for(&env, &deleted.id).await;
    assert!(
        gone.state_reason
            .as_deref()
            .unwrap_or("")
            .contains("deleted elsewhere"),
        "{gone:?}"
    );
}
