//! muster plugin drafts and routes into the mirror: the whole refusal story, checks, events,
//! reconnects, and answers that do not parse.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::domain::RouteState;
use countersign_core::live::{follow_muster, LiveChange, MusterPace};
use countersign_core::store::{Account, RefusalKind};
use countersign_core::sync::muster::redraft_bound;
use countersign_core::sync::sync_muster;
use countersign_core::{ItemFilter, ItemState};
use countersign_fakes::muster::CheckVerdict;
use countersign_muster::EventOptions;

use crate::support::{approve_now, eventually, item_for, resync, shown, Env};

const ACTOR: &str = "owner via test";

fn open_route(env: &Env, message_id: &str, state: &str) -> String {
    env.muster
        .routes(message_id)
        .into_iter()
        .rev()
        .find(|r| r["state"] == state)
        .unwrap_or_else(|| panic!("no {state} route"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Approve the item, dispatch, and have the plugin refuse the send.
async fn approve_and_refuse(env: &Env, account: &Account, draft: &str, reason: &str) {
    let item = item_for(env, draft).await;
    decide::approve(
        &env.store,
        &shown(env, item.id).await,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    env.dispatcher().await.run_once().await.unwrap();
    env.muster.claim(draft).unwrap();
    env.muster
        .report_result(draft, false, Some(reason))
        .unwrap();
    resync(env, account).await;
}

#[tokio::test]
async fn the_whole_refusal_story_is_mirrored_up_to_the_redraft_bound() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Hi",
        )
        .unwrap();
    let first = env
        .muster
        .file_draft(&relayed.route_id, "Here is the invoice.")
        .unwrap();
    resync(&env, &account).await;

    approve_and_refuse(&env, &account, &first, "recipient mailbox full").await;
    let failed = item_for(&env, &first).await;
    assert_eq!(failed.state, ItemState::SendFailed);
    assert_eq!(
        failed.state_reason.as_deref(),
        Some("recipient mailbox full")
    );
    // Seen again by later syncs, the refusal is still recorded once.
    resync(&env, &account).await;
    resync(&env, &account).await;
    let refusals = env.store.refusals_for_item(failed.id).await.unwrap();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].kind, RefusalKind::SendFailed);

    let routes = env
        .store
        .routes_for_message(&account.id, &relayed.message_id)
        .await
        .unwrap();
    let states: Vec<_> = routes.iter().map(|r| r.state).collect();
    assert_eq!(states, [RouteState::SendFailed, RouteState::Redraft]);
    assert_eq!(routes[0].reason.as_deref(), Some("recipient mailbox full"));

    // The session writes the redraft on the route that handed the message back.
    let redraft_route = open_route(&env, &relayed.message_id, "redraft");
    let second = env
        .muster
        .file_draft(&redraft_route, "Here is the invoice, as a link.")
        .unwrap();
    resync(&env, &account).await;
    let redraft = env
        .store
        .get_item(item_for(&env, &second).await.id)
        .await
        .unwrap();
    assert_eq!(redraft.muster.redraft_of.as_deref(), Some(first.as_str()));
    assert_eq!(redraft.muster.redraft_number, 1);
    assert_eq!(redraft.summary.state, ItemState::Pending);

    approve_and_refuse(&env, &account, &second, "link blocked").await;
    let redraft_route = open_route(&env, &relayed.message_id, "redraft");
    let third = env
        .muster
        .file_draft(&redraft_route, "Attached as PDF again.")
        .unwrap();
    resync(&env, &account).await;
    let last = item_for(&env, &third).await;
    assert_eq!(last.redraft_number, 2);
    let bound = redraft_bound(last.redraft_number).unwrap();
    assert!(bound.contains("2 of 2"), "{bound}");
    assert!(bound.contains("next refusal goes to the chief"), "{bound}");

    // One more refusal and the message goes to the chief.
    approve_and_refuse(&env, &account, &third, "still full").await;
    let routes = env
        .store
        .routes_for_message(&account.id, &relayed.message_id)
        .await
        .unwrap();
    let fallback = routes.last().unwrap();
    assert_eq!(fallback.state, RouteState::Fallback);
    assert_eq!(fallback.session, "chief");

    // The chief's reply on the fallback route: no session will redraft it again.
    let chiefs = env
        .muster
        .file_draft(&fallback.route_id, "The chief writes back himself.")
        .unwrap();
    resync(&env, &account).await;
    let item = item_for(&env, &chiefs).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    assert_eq!(
        detail.content.redraft_bound.as_deref(),
        Some("the chief's reply — a refusal is final")
    );

    // The history calls it the chief's too, as the rules and the review do: one reading of
    // "chief-filed" (no route, or a route that fell back to the chief).
    approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();
    let history = env
        .store
        .history(&countersign_core::history::HistoryFilter::default())
        .await
        .unwrap();
    let agent_of = |id: i64| {
        history
            .iter()
            .find(|e| e.item_id == id)
            .map(|e| e.agent.clone())
            .unwrap_or_default()
    };
    assert_eq!(agent_of(item.id), "gmail-relay, chief-filed");
    assert_eq!(
        agent_of(item_for(&env, &first).await.id),
        "gmail-relay, relayed",
        "the session's own reply on its route"
    );
}

#[tokio::test]
async fn a_draft_awaiting_its_check_becomes_pending_when_the_plugin_says_sendable() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("careful", true).unwrap();
    let relayed = env
        .muster
        .relay_message(
            "careful",
            "inbox-chat",
            "bo@example.com",
            "Quote",
            "How much?",
        )
        .unwrap();
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "It is 40 EUR.")
        .unwrap();
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    assert_eq!(item.state, ItemState::AwaitingCheck);
    assert_eq!(item.check_state.as_deref(), Some("awaiting"));

    env.muster
        .record_check(&draft, CheckVerdict::Sendable, None)
        .unwrap();
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    assert_eq!(item.state, ItemState::Pending);
    approve_now(&env, item.id).await;
}

fn quick_events() -> EventOptions {
    EventOptions {
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        buffer: 64,
        ..EventOptions::default()
    }
}

async fn follow(
    env: &Env,
    account: &Account,
) -> (
    tokio::sync::watch::Sender<bool>,
    Arc<Mutex<Vec<LiveChange>>>,
) {
    follow_with(env, account, quick_events()).await
}

async fn follow_with(
    env: &Env,
    account: &Account,
    options: EventOptions,
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
            events: options,
            polling: crate::muster_polling::quick_polling(),
        },
        tokio::sync::watch::channel(true).1,
        Arc::new(move |change| sink.lock().unwrap().push(change)),
        stop_rx,
    ));
    (stop_tx, seen)
}

#[tokio::test]
async fn a_change_at_muster_reaches_the_mirror_within_a_second_through_events() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let (_stop, seen) = follow(&env, &account).await;
    // The full sync after connecting has ended (it announces the account online): no request
    // of it can land after the log is cleared.
    until_first_sync(&seen).await;
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
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "Hello back")
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the new draft is mirrored",
        || async {
            env.store
                .find_item(&account.id, &draft)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    // Targeted re-fetches, not a poll of the whole list.
    assert_eq!(env.muster.count_requests("GET", "/api/plugin/drafts"), 0);
}

#[tokio::test]
async fn a_dropped_stream_is_reconnected_and_what_changed_meanwhile_is_mirrored() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let (_stop, seen) = follow(&env, &account).await;
    eventually(Duration::from_secs(5), "the stream connects", || async {
        env.muster.event_streams() > 0
    })
    .await;

    env.muster.set_online(false);
    eventually(Duration::from_secs(5), "the outage is noticed", || async {
        seen.lock()
            .unwrap()
            .iter()
            .any(|c| matches!(c, LiveChange::Reachability { online: false, .. }))
    })
    .await;
    // A change made while the stream is down: no event will ever announce it.
    let relayed = env
        .muster
        .relay_message("gmail-relay", "inbox-chat", "ana@example.com", "Late", "?")
        .unwrap();
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "Sorry for the delay")
        .unwrap();
    env.muster.set_online(true);
    eventually(
        Duration::from_secs(5),
        "re-synced after the reconnect",
        || async {
            env.store
                .find_item(&account.id, &draft)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .any(|c| matches!(c, LiveChange::Reachability { online: true, .. })));
}

mod malformed {
    use super::*;
    use axum::routing::{get, post};

    /// A muster that signs in fine but answers drafts without their `state`.
    async fn broken_muster() -> String {
        let app = axum::Router::new()
            .route(
                "/login",
                post(|| async {
                    (
                        axum::http::StatusCode::SEE_OTHER,
                        [
                            (
                                "set-cookie",
                                "muster_session=s1; HttpOnly; SameSite=Lax; Path=/",
                            ),
                            ("location", "/"),
                        ],
                    )
                }),
            )
            .route(
                "/api/plugin/drafts",
                get(|| async {
                    axum::Json(serde_json::json!({"drafts": [{"id": "1", "text": "hi"}]}))
                }),
            )
            .route(
                "/api/plugin/messages",
                get(|| async { axum::Json(serde_json::json!({"messages": []})) }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    }

    #[tokio::test]
    async fn an_incomplete_draft_is_an_item_with_its_warning_not_a_failed_sync() {
        let env = Env::new().await;
        let url = broken_muster().await;
        let account = env
            .services
            .connect_muster(&env.store, &url, "pw")
            .await
            .unwrap();
        let client = env.services.muster(&account).await.unwrap();
        let report = sync_muster(&env.store, &account, &client).await.unwrap();
        assert_eq!(
            report.unreadable,
            vec!["muster sent a draft Countersign cannot read (draft 1): missing field `plugin`"]
        );
        let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].state, ItemState::Conflict);
        assert_eq!(
            items[0].state_reason.as_deref(),
            Some("muster sent a draft Countersign cannot read: missing field `plugin`")
        );
        assert_eq!(items[0].snippet, "hi");
    }
}

#[tokio::test]
async fn a_muster_reply_shows_the_full_message_when_muster_gives_it_and_the_snippet_otherwise() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let full = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Hi",
        )
        .unwrap();
    env.muster
        .set_message_text(
            &full.message_id,
            "Hi,\n\ncan invoice 7 be due on the 10th?\n\nAna",
        )
        .unwrap();
    let with_text = env.muster.file_draft(&full.route_id, "Yes.").unwrap();
    let short = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Bo <bo@example.com>",
            "Refund",
            "The jug…",
        )
        .unwrap();
    let without = env.muster.file_draft(&short.route_id, "Refunded.").unwrap();
    resync(&env, &account).await;

    let item = item_for(&env, &with_text).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    let answered = detail.content.answered.unwrap();
    assert!(!answered.snippet_only);
    assert_eq!(
        answered.view.unwrap().text_body,
        "Hi,\n\ncan invoice 7 be due on the 10th?\n\nAna"
    );
    assert_eq!(detail.content.gmail_link, None);

    let item = item_for(&env, &without).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    let answered = detail.content.answered.unwrap();
    assert!(answered.snippet_only);
    assert!(answered.view.is_none());
    assert_eq!(answered.snippet, "The jug…");
    assert_eq!(answered.from[0].email, "bo@example.com");
}

#[tokio::test]
async fn new_drafts_are_announced_once_per_burst_and_a_draft_awaiting_its_check_only_once_sendable()
{
    use countersign_core::app::announce_new_drafts;
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let mut settings = env.store.settings().await.unwrap();
    assert!(!settings.new_draft_notifications, "off by default");
    settings.new_draft_notifications = true;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    env.muster.create_plugin("support-desk", true).unwrap();
    for n in 0..3 {
        let relayed = env
            .muster
            .relay_message("gmail-relay", "inbox-chat", "ana@example.com", "Hi", "…")
            .unwrap();
        env.muster
            .file_draft(&relayed.route_id, &format!("Reply {n}"))
            .unwrap();
    }
    let checked = env
        .muster
        .relay_message("support-desk", "triage", "bo@example.com", "Refund", "…")
        .unwrap();
    let unchecked = env
        .muster
        .file_draft(&checked.route_id, "Refunded.")
        .unwrap();
    resync(&env, &account).await;

    // One burst: three reviewable drafts, one notification; the unchecked draft is not in it.
    assert_eq!(announce_new_drafts(&env.store).await.unwrap(), Some(3));
    assert_eq!(announce_new_drafts(&env.store).await.unwrap(), None);

    env.muster
        .record_check(&unchecked, CheckVerdict::Sendable, None)
        .unwrap();
    resync(&env, &account).await;
    assert_eq!(announce_new_drafts(&env.store).await.unwrap(), Some(1));

    // Turned off: nothing is announced, and what arrived meanwhile is not announced later.
    settings.new_draft_notifications = false;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    let relayed = env
        .muster
        .relay_message("gmail-relay", "inbox-chat", "cy@example.com", "Hi", "…")
        .unwrap();
    env.muster.file_draft(&relayed.route_id, "Quiet").unwrap();
    resync(&env, &account).await;
    assert_eq!(announce_new_drafts(&env.store).await.unwrap(), None);
    settings.new_draft_notifications = true;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    assert_eq!(announce_new_drafts(&env.store).await.unwrap(), None);
}

/// A muster version is its `updatedAt` stamp: other text under the same stamp means the stamp
/// no longer names what the owner would decide on.
mod same_stamp_other_text {
    use super::*;
    use countersign_core::actions::Action;
    use countersign_core::store::{stamp_conflict_reason, DecisionFilter};
    use countersign_core::DecisionState;

    #[tokio::test]
    async fn other_text_under_the_same_stamp_is_a_conflict_that_refuses_decisions_and_is_audited() {
        let env = Env::new().await;
        let (account, draft) = crate::support::muster_reply(&env, false).await;
        let item = item_for(&env, &draft).await;
        let seen = shown(&env, item.id).await;
        let stamp = env.muster.draft(&draft).unwrap()["updatedAt"]
            .as_str()
            .unwrap()
            .to_string();

        env.muster
            .rewrite_text_keeping_stamp(&draft, "Here it is, and the password is hunter2.")
            .unwrap();
        assert_eq!(env.muster.draft(&draft).unwrap()["updatedAt"], stamp);
        resync(&env, &account).await;

        let item = item_for(&env, &draft).await;
        assert_eq!(item.state, ItemState::Conflict);
        assert_eq!(
            item.state_reason.as_deref(),
            Some(stamp_conflict_reason(&stamp).as_str())
        );
        // Neither the row nor the review offers a decision, with the same sentence.
        let detail = countersign_core::review::review_detail(&env.store, item.id, false)
            .await
            .unwrap();
        for actions in [&item.actions, &detail.item.summary.actions] {
            for action in [Action::Approve, Action::Reject] {
                let state = actions.iter().find(|a| a.action == action).unwrap();
                assert!(!state.allowed, "{state:?}");
                assert_eq!(
                    state.why_not.as_deref(),
                    Some(stamp_conflict_reason(&stamp).as_str())
                );
            }
        }
        // The owner's view, bound to the first text under that stamp, can decide nothing.
        for refusal in [
            decide::approve(
                &env.store,
                &seen,
                UndoWindow::None,
                ACTOR,
                Confirmation::None,
            )
            .await
            .unwrap_err(),
            decide::reject(&env.store, &seen, "Tone is off", ACTOR)
                .await
                .unwrap_err(),
        ] {
            assert!(
                refusal
                    .to_string()
                    .contains("changed without a new version stamp"),
                "{refusal}"
            );
        }
        assert!(env
            .store
            .list_decisions(DecisionFilter::All)
            .await
            .unwrap()
            .is_empty());
        let audit = env.store.audit_for_item(item.id).await.unwrap();
        let conflicts: Vec<_> = audit
            .iter()
            .filter(|e| e.line.action == "stamp conflict")
            .collect();
        assert_eq!(conflicts.len(), 1, "{audit:?}");
        assert_eq!(conflicts[0].line.version.as_deref(), Some(stamp.as_str()));
        // Synced again, nothing new: audited once.
        resync(&env, &account).await;
        let audit = env.store.audit_for_item(item.id).await.unwrap();
        assert_eq!(
            audit
                .iter()
                .filter(|e| e.line.action == "stamp conflict")
                .count(),
            1
        );
        assert_eq!(env.muster.draft(&draft).unwrap()["state"], "pending");
    }

    #[tokio::test]
    async fn a_queued_approval_whose_stamp_comes_back_with_other_text_never_reaches_muster() {
        let env = Env::new().await;
        let (account, draft) = crate::support::muster_reply(&env, false).await;
        let item = item_for(&env, &draft).await;
        let decision = approve_now(&env, item.id).await;

        env.muster
            .rewrite_text_keeping_stamp(&draft, "Something else entirely.")
            .unwrap();
        resync(&env, &account).await;
        let decision = env.store.get_decision(decision.id).await.unwrap();
        assert_eq!(decision.state, DecisionState::Conflict);
        env.dispatcher().await.run_once().await.unwrap();
        let decides = env
            .muster
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/decide"))
            .count();
        assert_eq!(decides, 0);
        assert_eq!(env.muster.draft(&draft).unwrap()["state"], "pending");
        assert_eq!(item_for(&env, &draft).await.state, ItemState::Conflict);
    }

    #[tokio::test]
    async fn a_new_stamp_after_the_conflict_can_be_decided_again() {
        let env = Env::new().await;
        let (account, draft) = crate::support::muster_reply(&env, true).await;
        env.muster
            .rewrite_text_keeping_stamp(&draft, "Other words.")
            .unwrap();
        resync(&env, &account).await;
        assert_eq!(item_for(&env, &draft).await.state, ItemState::Conflict);
        // The plugin's check bumps the stamp: a version that names one text again.
        env.muster
            .record_check(&draft, CheckVerdict::Sendable, None)
            .unwrap();
        resync(&env, &account).await;
        let item = item_for(&env, &draft).await;
        let decision = approve_now(&env, item.id).await;
        assert_eq!(
            decision.version,
            env.muster.draft(&draft).unwrap()["updatedAt"]
        );
    }
}

/// A muster account with the `gmail-relay` plugin.
async fn muster_env() -> (Env, Account) {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    (env, account)
}

/// A reply to `who` filed by the session and mirrored by a full sync: its draft id.
async fn filed_and_mirrored(env: &Env, account: &Account, who: &str) -> String {
    let relayed = env
        .muster
        .relay_message("gmail-relay", "inbox-chat", who, "Hi", "Hello")
        .unwrap();
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "Hello back")
        .unwrap();
    resync(env, account).await;
    draft
}

/// Waits until the full sync after connecting has ended (it announces the account online).
async fn until_first_sync(seen: &Mutex<Vec<LiveChange>>) {
    eventually(Duration::from_secs(5), "the first sync ends", || async {
        seen.lock()
            .unwrap()
            .iter()
            .any(|c| matches!(c, LiveChange::Reachability { online: true, .. }))
    })
    .await;
}

/// Whether the owner was ever told this account is offline.
fn ever_offline(seen: &Mutex<Vec<LiveChange>>) -> Vec<LiveChange> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|c| matches!(c, LiveChange::Reachability { online: false, .. }))
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_silent_stream_never_shows_the_account_offline_and_resyncs_once_per_interval() {
    // muster writes nothing while nothing happens, for hours. Scaled down: a re-sync every
    // 150 ms stands for the default 4 minutes, and twenty of them for 80 quiet minutes.
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let every = Duration::from_millis(150);
    let (_stop, seen) = follow_with(
        &env,
        &account,
        EventOptions {
            resync_every: every,
            ..quick_events()
        },
    )
    .await;
    until_first_sync(&seen).await;
    env.muster.clear_requests();
    let quiet_since = std::time::Instant::now();

    eventually(
        Duration::from_secs(30),
        "twenty periodic re-syncs",
        || async { env.muster.count_requests("GET", "/api/plugin/drafts") >= 20 },
    )
    .await;
    let full_syncs = env.muster.count_requests("GET", "/api/plugin/drafts");
    // At most one full sync per interval, however slow the machine: no re-sync storm.
    let intervals = quiet_since.elapsed().as_millis() / every.as_millis();
    assert!(
        full_syncs as u128 <= intervals + 1,
        "{full_syncs} full syncs in {intervals} intervals"
    );
    // The same stream all along, and the owner never saw the account go offline.
    assert_eq!(env.muster.count_requests("GET", "/events"), 0);
    assert_eq!(env.muster.event_streams(), 1);
    assert_eq!(ever_offline(&seen), Vec::<LiveChange>::new());
}

#[tokio::test]
async fn with_musters_sixteen_event_buffer_and_noise_every_change_still_reaches_the_mirror() {
    // muster drops events for a subscriber whose 16-event buffer is full, on a stream shared
    // with its task, agent and chat traffic. Scaled down: a re-sync every 300 ms stands for the
    // default 4 minutes, so "within 5 minutes" is within a few seconds here.
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    env.muster.set_event_buffer(Some(16));
    env.muster.set_event_noise(Some(Duration::from_millis(2)));
    let (_stop, seen) = follow_with(
        &env,
        &account,
        EventOptions {
            resync_every: Duration::from_millis(300),
            ..quick_events()
        },
    )
    .await;
    until_first_sync(&seen).await;

    // 200 agents' replies in one burst: muster broadcasts 400 changes without waiting for the
    // stream (this test's runtime has one thread, so the stream cannot drain in between).
    let drafts: Vec<String> = (0..200)
        .map(|n| {
            let relayed = env
                .muster
                .relay_message(
                    "gmail-relay",
                    "inbox-chat",
                    &format!("sender{n}@example.com"),
                    "Hi",
                    "Hello",
                )
                .unwrap();
            env.muster
                .file_draft(&relayed.route_id, &format!("Reply {n}"))
                .unwrap()
        })
        .collect();
    assert!(
        env.muster.dropped_events() > 0,
        "the burst must overflow muster's buffer, or this test shows nothing"
    );

    eventually(
        Duration::from_secs(60),
        "all 200 drafts are mirrored",
        || async {
            for draft in &drafts {
                if env
                    .store
                    .find_item(&account.id, draft)
                    .await
                    .unwrap()
                    .is_none()
                {
                    return false;
                }
            }
            true
        },
    )
    .await;
    assert_eq!(ever_offline(&seen), Vec::<LiveChange>::new());
}

#[tokio::test]
async fn an_approval_of_a_draft_muster_deleted_ends_gone_not_retried_forever() {
    // muster answers a draft it does not have with Go's plain-text 404, the same answer as a
    // route it does not have.
    let (env, account) = muster_env().await;
    let draft = filed_and_mirrored(&env, &account, "ana@example.com").await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster.delete_draft(&draft).unwrap();
    env.muster.clear_requests();

    env.dispatcher().await.run_once().await.unwrap();
    let item = item_for(&env, &draft).await;
    assert_eq!(item.state, ItemState::Gone, "{:?}", item.state_reason);
    assert_eq!(
        env.muster
            .count_requests("POST", &format!("/api/plugin/drafts/{draft}/decide")),
        1
    );
    // Nothing is left to send: another pass asks muster nothing.
    env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(
        env.muster
            .count_requests("POST", &format!("/api/plugin/drafts/{draft}/decide")),
        1
    );
}

#[tokio::test]
async fn a_pending_draft_muster_deleted_leaves_the_queue_at_the_next_full_sync() {
    let (env, account) = muster_env().await;
    let mut drafts = Vec::new();
    for who in ["ana@example.com", "bo@example.com"] {
        drafts.push(filed_and_mirrored(&env, &account, who).await);
    }
    env.muster.delete_draft(&drafts[0]).unwrap();
    resync(&env, &account).await;

    let deleted = item_for(&env, &drafts[0]).await;
    assert_eq!(deleted.state, ItemState::Gone);
    assert_eq!(deleted.state_reason.as_deref(), Some("deleted in muster"));
    assert_eq!(item_for(&env, &drafts[1]).await.state, ItemState::Pending);
}

#[tokio::test]
async fn musters_own_note_on_an_approval_is_in_the_audit_not_a_paraphrase() {
    let (env, account) = muster_env().await;
    let draft = filed_and_mirrored(&env, &account, "ana@example.com").await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();

    let dispatched = env
        .store
        .audit_for_item(item.id)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.line.action == "approve dispatched")
        .expect("the dispatch is audited");
    assert_eq!(
        dispatched.line.detail.as_deref(),
        Some("muster: Queued: the plugin sends it and a refusal comes back here.")
    );
}

/// One odd draft never stops the others: a count Go left out reads as zero, a state Countersign
/// does not know is shown as muster said it, a draft that cannot be read is an item with a
/// warning; the odd ones cannot be decided here, the rest sync and decide as usual.
mod odd_drafts {
    use super::*;
    use countersign_core::actions::Action;
    use countersign_core::store::ItemSummary;
    use countersign_core::Error;
    use serde_json::json;

    const UNKNOWN: &str =
        "muster says this draft is 'archived', which Countersign does not know; decide it in muster";
    const UNREADABLE: &str =
        "muster sent a draft Countersign cannot read: missing field `updatedAt`";

    /// Approve and Reject are closed on the row and in the review, with `why`, and approving
    /// what the owner was shown is refused with it.
    async fn refuses_decisions(env: &Env, item: &ItemSummary, why: &str) {
        let detail = countersign_core::review::review_detail(&env.store, item.id, false)
            .await
            .unwrap();
        for actions in [&item.actions, &detail.item.summary.actions] {
            for action in [Action::Approve, Action::Reject] {
                let state = actions.iter().find(|a| a.action == action).unwrap();
                assert!(!state.allowed, "{state:?}");
                assert_eq!(state.why_not.as_deref(), Some(why));
            }
        }
        let refusal = decide::approve(
            &env.store,
            &shown(env, item.id).await,
            UndoWindow::None,
            ACTOR,
            Confirmation::None,
        )
        .await
        .unwrap_err();
        match &refusal {
            Error::Refused { why: said, .. } => assert_eq!(said, why),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_draft_missing_redraft_number_and_one_in_an_unknown_state_sync_beside_a_good_one() {
        let env = Env::new().await;
        let account = env.connect_muster().await;
        let (_, good) = crate::support::relayed_reply(&env, false);
        let (_, zero) = crate::support::relayed_reply(&env, false);
        let (_, newer) = crate::support::relayed_reply(&env, false);
        // What Go writes for a zero count under `omitempty`, and a newer muster's state.
        env.muster
            .write_draft_oddly(&zero, json!({}), &["redraftNumber"])
            .unwrap();
        assert!(env
            .muster
            .draft(&zero)
            .unwrap()
            .get("redraftNumber")
            .is_none());
        env.muster
            .write_draft_oddly(&newer, json!({"state": "archived"}), &[])
            .unwrap();

        resync(&env, &account).await;

        let zero_item = item_for(&env, &zero).await;
        assert_eq!(zero_item.state, ItemState::Pending);
        assert_eq!(zero_item.redraft_number, 0);
        let newer_item = item_for(&env, &newer).await;
        assert_eq!(newer_item.state, ItemState::Conflict);
        assert_eq!(newer_item.state_reason.as_deref(), Some(UNKNOWN));
        assert_eq!(newer_item.snippet, "Here it is.");
        refuses_decisions(&env, &newer_item, UNKNOWN).await;
        // The good one, and the one without the count, are approved and reach muster.
        for draft in [&good, &zero] {
            let item = item_for(&env, draft).await;
            assert_eq!(item.state, ItemState::Pending);
            approve_now(&env, item.id).await;
        }
        env.dispatcher().await.run_once().await.unwrap();
        for draft in [&good, &zero] {
            assert_eq!(env.muster.draft(draft).unwrap()["state"], "approved");
        }
        assert_eq!(env.muster.draft(&newer).unwrap()["state"], "archived");
    }

    #[tokio::test]
    async fn a_draft_that_cannot_be_read_is_an_item_with_a_warning_and_the_rest_sync() {
        let env = Env::new().await;
        let account = env.connect_muster().await;
        let (_, good) = crate::support::relayed_reply(&env, false);
        let (_, broken) = crate::support::relayed_reply(&env, false);
        let (_, nameless) = crate::support::relayed_reply(&env, false);
        env.muster
            .write_draft_oddly(&broken, json!({}), &["updatedAt"])
            .unwrap();
        env.muster
            .write_draft_oddly(&nameless, json!({"id": true}), &[])
            .unwrap();

        let client = env.services.muster(&account).await.unwrap();
        let report = sync_muster(&env.store, &account, &client).await.unwrap();

        assert_eq!(
            report.unreadable,
            vec![
                format!(
                    "muster sent a draft Countersign cannot read (draft {broken}): missing field \
                     `updatedAt`"
                ),
                "muster sent a draft Countersign cannot read (without an id): invalid type: \
                 boolean `true`, expected an id (a JSON number or string)"
                    .to_string(),
            ]
        );
        let broken_item = item_for(&env, &broken).await;
        assert_eq!(broken_item.state, ItemState::Conflict);
        assert_eq!(broken_item.state_reason.as_deref(), Some(UNREADABLE));
        assert_eq!(broken_item.snippet, "Here it is.");
        refuses_decisions(&env, &broken_item, UNREADABLE).await;
        // A draft without a readable id cannot be an item; nothing else is lost for it.
        let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
        assert_eq!(items.len(), 2, "{items:?}");
        let good_item = item_for(&env, &good).await;
        assert_eq!(good_item.state, ItemState::Pending);
        approve_now(&env, good_item.id).await;
        env.dispatcher().await.run_once().await.unwrap();
        assert_eq!(env.muster.draft(&good).unwrap()["state"], "approved");
    }
}
