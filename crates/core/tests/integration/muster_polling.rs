//! muster without its event stream: something in front of muster breaks Server-Sent Events
//! (an HTML page with 200, a 502) while the API answers. Drafts and refusals still reach the
//! mirror by polling, and the account says "polling", never "offline".

use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_core::live::{follow_muster, LiveChange, MusterPace, MusterPolling};
use countersign_core::store::{Account, Delivery};
use countersign_core::ItemState;
use countersign_fakes::muster::FaultAction;
use countersign_muster::EventOptions;

use crate::support::{approve_now, eventually, Env};

/// The polling of these tests: 400 ms stands for the 30 s of a visible window.
pub fn quick_polling() -> MusterPolling {
    MusterPolling {
        visible: Duration::from_millis(400),
        hidden: Duration::from_millis(800),
        max_backoff: Duration::from_secs(2),
    }
}

/// Follow `account` with quick reconnects and quick polling; the changes it reports.
pub async fn follow_polling(
    env: &Env,
    account: &Account,
    events: EventOptions,
) -> (
    tokio::sync::watch::Sender<bool>,
    Arc<Mutex<Vec<LiveChange>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let client = env.services.muster(account).await.unwrap();
    let sink = seen.clone();
    tokio::spawn(follow_muster(
        env.store.clone(),
        account.clone(),
        client,
        MusterPace {
            events,
            polling: quick_polling(),
        },
        tokio::sync::watch::channel(true).1,
        Arc::new(move |change| sink.lock().unwrap().push(change)),
        stop_rx,
    ));
    (stop_tx, seen)
}

pub fn quick_events() -> EventOptions {
    EventOptions {
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        buffer: 64,
        ..EventOptions::default()
    }
}

/// Whether the owner was ever told the account is offline.
pub fn told_offline(seen: &Mutex<Vec<LiveChange>>) -> bool {
    seen.lock()
        .unwrap()
        .iter()
        .any(|c| matches!(c, LiveChange::Reachability { online: false, .. }))
}

/// With `/events` answered by `front` (forever), a new draft and a plugin's refusal reach the
/// mirror within a few polling intervals, and the account says "polling".
async fn drafts_and_refusals_arrive_while_the_stream_is(front: FaultAction) {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    env.muster.inject("GET", "/events", u32::MAX, front);
    let (_stop, seen) = follow_polling(&env, &account, quick_events()).await;
    let within = quick_polling().visible * 10;

    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "ana@example.com",
            "Hi",
            "Hello",
        )
        .unwrap();
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "Hello back")
        .unwrap();
    eventually(within, "the new draft reaches the mirror", || async {
        env.store
            .find_item(&account.id, &draft)
            .await
            .unwrap()
            .is_some()
    })
    .await;
    let item_id = env
        .store
        .find_item(&account.id, &draft)
        .await
        .unwrap()
        .unwrap();

    // The owner approves; the plugin refuses the send.
    approve_now(&env, item_id).await;
    env.dispatcher().await.run_once().await.unwrap();
    env.muster.claim(&draft).unwrap();
    env.muster
        .report_result(&draft, false, Some("recipient mailbox full"))
        .unwrap();
    // The sync writes the draft's new state, then its refusal: wait for the second.
    eventually(within, "the refusal reaches the mirror", || async {
        !env.store
            .refusals_for_item(item_id)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    assert_eq!(
        env.store.get_item(item_id).await.unwrap().summary.state,
        ItemState::SendFailed
    );
    let refusals = env.store.refusals_for_item(item_id).await.unwrap();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].reason, "recipient mailbox full");

    let cursor = env.store.sync_cursor(&account.id).await.unwrap();
    assert_eq!(cursor.delivery, Some(Delivery::Polling));
    assert_eq!(cursor.status_word(), "polling");
    assert!(!told_offline(&seen), "{:?}", seen.lock().unwrap());
    // The stream was tried, and it still is (it makes changes faster once it works).
    assert!(env.muster.count_requests("GET", "/events") > 0);
}

#[tokio::test]
async fn with_a_proxys_html_page_for_the_stream_drafts_and_refusals_arrive_by_polling() {
    drafts_and_refusals_arrive_while_the_stream_is(FaultAction::FrontPage(200)).await;
}

#[tokio::test]
async fn with_a_502_for_the_stream_drafts_and_refusals_arrive_by_polling() {
    drafts_and_refusals_arrive_while_the_stream_is(FaultAction::Fail(502)).await;
}

#[tokio::test]
async fn a_stream_that_delivers_says_live_and_polling_stops() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let (_stop, _seen) = follow_polling(&env, &account, quick_events()).await;
    eventually(Duration::from_secs(5), "the account is live", || async {
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .status_word()
            == "live"
    })
    .await;
    // Once live, no poll: the lists are read again only for an event or the periodic re-sync.
    env.muster.clear_requests();
    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "ana@example.com",
            "Hi",
            "Hello",
        )
        .unwrap();
    let draft = env.muster.file_draft(&relayed.route_id, "Hi back").unwrap();
    eventually(Duration::from_secs(5), "the draft arrives", || async {
        env.store
            .find_item(&account.id, &draft)
            .await
            .unwrap()
            .is_some()
    })
    .await;
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/drafts"), 0);
}

#[tokio::test]
async fn a_muster_that_does_not_answer_at_all_is_offline() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster
        .inject("GET", "/events", u32::MAX, FaultAction::Fail(502));
    env.muster
        .inject("GET", "/api/*", u32::MAX, FaultAction::Fail(502));
    let (_stop, seen) = follow_polling(&env, &account, quick_events()).await;
    eventually(
        Duration::from_secs(10),
        "the owner is told offline",
        || async { told_offline(&seen) },
    )
    .await;
    let cursor = env.store.sync_cursor(&account.id).await.unwrap();
    assert_eq!(cursor.status_word(), "offline");
    env.muster.clear_faults();
    eventually(Duration::from_secs(10), "back, and live", || async {
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .status_word()
            == "live"
    })
    .await;
}

/// `n` relayed messages, each with a draft, mirrored by a full sync.
async fn messages_mirrored(env: &Env, account: &Account, n: usize) {
    for k in 0..n {
        let relayed = env
            .muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                &format!("s{k}@example.com"),
                "Hi",
                "Hello",
            )
            .unwrap();
        env.muster
            .file_draft(&relayed.route_id, "Hello back")
            .unwrap();
    }
    crate::support::resync(env, account).await;
}

#[tokio::test]
async fn one_route_read_a_proxy_failed_is_tried_again_not_the_whole_sync() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    messages_mirrored(&env, &account, 2).await;
    env.muster.clear_requests();
    env.muster.fail_next("GET", "/api/plugin/routes", 1, 502);

    let client = env.services.muster(&account).await.unwrap();
    countersign_core::sync::sync_muster(&env.store, &account, &client)
        .await
        .expect("the sync passes over one failed call");
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/drafts"), 1);
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/messages"), 1);
    // Two messages' routes, one of them read twice.
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/routes"), 3);
}

#[tokio::test]
async fn a_stream_a_proxy_closed_is_reconnected_quietly_and_reads_only_what_changed() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    messages_mirrored(&env, &account, 5).await;
    let (_stop, seen) = follow_polling(&env, &account, quick_events()).await;
    eventually(Duration::from_secs(5), "the account is live", || async {
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .status_word()
            == "live"
    })
    .await;
    let items_changed = |seen: &Mutex<Vec<LiveChange>>| {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|c| matches!(c, LiveChange::ItemsChanged { .. }))
            .count()
    };
    let before = items_changed(&seen);
    env.muster.clear_requests();

    // A proxy's read timeout closes the silent stream.
    env.muster.cut_event_streams();
    eventually(
        Duration::from_secs(5),
        "the re-sync after the reconnect",
        || async { items_changed(&seen) > before },
    )
    .await;
    assert_eq!(env.muster.count_requests("GET", "/events"), 1);
    // What changed is read, not every message's routes: nothing changed.
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/drafts"), 1);
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/routes"), 0);
    assert!(!told_offline(&seen), "{:?}", seen.lock().unwrap());
    assert_eq!(
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .status_word(),
        "live"
    );
}

#[tokio::test]
async fn a_proxy_closing_the_silent_stream_again_and_again_is_never_an_outage() {
    // A proxy's read timeout (nginx: 60 s) closes the silent stream over and over. Scaled
    // down: a close after 150 ms of silence, six times.
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    messages_mirrored(&env, &account, 3).await;
    env.muster
        .set_proxy_read_timeout(Some(Duration::from_millis(150)));
    let (_stop, seen) = follow_polling(&env, &account, quick_events()).await;
    eventually(Duration::from_secs(5), "the account is live", || async {
        env.store
            .sync_cursor(&account.id)
            .await
            .unwrap()
            .status_word()
            == "live"
    })
    .await;
    env.muster.clear_requests();
    eventually(Duration::from_secs(20), "six closes", || async {
        env.muster.count_requests("GET", "/events") >= 6
    })
    .await;
    let reconnects = env.muster.count_requests("GET", "/events");
    let resyncs = env.muster.count_requests("GET", "/api/plugin/drafts");
    // At most one re-sync per close (the one after the stream that is open now may be running).
    assert!(
        resyncs <= reconnects,
        "{resyncs} re-syncs for {reconnects} closes"
    );
    // Nothing changed: no message's routes were read again.
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/routes"), 0);
    assert!(!told_offline(&seen), "{:?}", seen.lock().unwrap());
    let polling_told = seen.lock().unwrap().iter().any(|c| {
        matches!(c, LiveChange::Reachability { detail: Some(d), .. } if d.starts_with("polling"))
    });
    assert!(
        !polling_told,
        "a quiet reconnect is not worth a status change"
    );
}

#[tokio::test]
async fn a_proxys_503_on_sign_in_leaves_the_account_recovering_by_itself() {
    // muster restarts behind a proxy: the session is gone and the proxy answers the sign-in
    // with its own 503 page. That is not muster saying it has no password.
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    env.muster
        .inject("GET", "/events", u32::MAX, FaultAction::Fail(502));
    env.muster.expire_sessions();
    // Two polls' worth: each read of a sync is tried 3 times.
    env.muster
        .inject("POST", "/login", 6, FaultAction::FrontPage(503));
    let (_stop, seen) = follow_polling(&env, &account, quick_events()).await;
    eventually(
        Duration::from_secs(10),
        "the owner is told offline",
        || async { told_offline(&seen) },
    )
    .await;
    // muster answers again: the account signs in by itself, with the password it has.
    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "ana@example.com",
            "Hi",
            "Hello",
        )
        .unwrap();
    let draft = env.muster.file_draft(&relayed.route_id, "Hi back").unwrap();
    eventually(Duration::from_secs(10), "the draft arrives", || async {
        env.store
            .find_item(&account.id, &draft)
            .await
            .unwrap()
            .is_some()
    })
    .await;
    eventually(
        Duration::from_secs(10),
        "the account says polling",
        || async {
            env.store
                .sync_cursor(&account.id)
                .await
                .unwrap()
                .status_word()
                == "polling"
        },
    )
    .await;
    let told_sign_in_again = seen.lock().unwrap().iter().any(
        |c| matches!(c, LiveChange::Reachability { detail: Some(d), .. } if d.contains("sign in")),
    );
    assert!(!told_sign_in_again, "{:?}", seen.lock().unwrap());
    assert_eq!(
        env.store
            .get_account(&account.id)
            .await
            .unwrap()
            .reconnect_reason,
        None
    );
}
