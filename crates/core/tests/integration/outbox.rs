//! Decisions through the outbox against the fakes: what was reviewed is what is sent, exactly
//! once, through conflicts, dropped connections, refusals and offline stretches.

use countersign_core::Error;
use std::time::Duration;

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::outbox::Dispatcher;
use countersign_core::store::{Account, DecisionFilter, RefusalKind};
use countersign_core::sync::sync_muster;
use countersign_core::OutcomeKind;
use countersign_core::{DecisionState, ItemFilter, ItemState};
use countersign_fakes::gmail::Failure;
use countersign_fakes::muster::CheckVerdict;

use crate::support::{
    approve_now, dispatch_until, eventually, item_for, quick_dispatch, reply,
    reply_without_message_id, resync, shown, sync, Env,
};

const ACTOR: &str = "owner via test";

async fn gmail_env() -> (Env, Account) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    (env, account)
}

async fn set_undo_window(env: &Env, secs: u32) {
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = secs;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
}

#[tokio::test]
async fn approve_sends_exactly_the_reviewed_bytes_once_after_the_undo_window() {
    let (env, account) = gmail_env().await;
    set_undo_window(&env, 10).await;
    let raw = reply(1, "The invoice is attached.");
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;

    let decision = decide::approve(
        &env.store,
        &shown(&env, item.id).await,
        UndoWindow::FromSettings,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    assert_eq!((decision.due_at - decision.created_at).num_seconds(), 10);
    let dispatcher = env.dispatcher().await;
    // The dispatcher's clock, not the wall's: a moment before the window ends, then its end.
    let early = dispatcher
        .run_as_of(decision.due_at - chrono::Duration::milliseconds(1))
        .await
        .unwrap();
    assert!(
        early.ended(OutcomeKind::Done).is_empty(),
        "sent inside the undo window"
    );
    assert_eq!(env.gmail.send_requests(&draft.id), 0);

    let report = dispatcher.run_as_of(decision.due_at).await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Done).len(), 1);
    let sent = env.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].raw, raw,
        "the sent bytes differ from the reviewed ones"
    );
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert!(
        env.gmail.drafts().iter().all(|d| d.id != draft.id),
        "draft still there"
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
    let audit = env.store.audit_for_item(item.id).await.unwrap();
    assert_eq!(audit.last().unwrap().line.outcome.as_deref(), Some("done"));

    // Nothing more happens on later passes.
    dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
}

#[tokio::test]
async fn a_draft_without_a_message_id_is_sent_with_one_that_was_recorded_first() {
    let (env, account) = gmail_env().await;
    let raw = reply_without_message_id("Hi Ana");
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();

    let recorded = env
        .store
        .get_decision(decision.id)
        .await
        .unwrap()
        .rfc822_message_id
        .expect("a Message-ID was recorded");
    let sent = &env.gmail.sent_messages()[0].raw;
    let header = format!("Message-ID: <{recorded}>\r\n");
    assert!(sent.starts_with(header.as_bytes()));
    assert_eq!(
        &sent[header.len()..],
        &raw[..],
        "only the Message-ID was added"
    );
}

#[tokio::test]
async fn approve_after_the_agent_changed_the_draft_is_a_conflict_not_a_send() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "what you saw"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    // The agent rewrites the draft after the owner looked at it.
    env.gmail
        .update_draft(&draft.id, &reply(1, "something else"), None)
        .unwrap();
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict).len(), 1);
    assert_eq!(env.gmail.send_requests(&draft.id), 0);
    let conflicted = item_for(&env, &draft.id).await;
    assert_eq!(conflicted.state, ItemState::Conflict);
    assert!(conflicted
        .state_reason
        .unwrap()
        .contains("changed since you reviewed it"));
    let refusals = env.store.unnotified_refusals().await.unwrap();
    assert_eq!(refusals[0].kind, RefusalKind::Conflict);

    // Review again: the new version is mirrored, approved, and that is what is sent.
    sync(&env, &account).await;
    approve_now(&env, item.id).await;
    dispatcher.run_once().await.unwrap();
    let sent = env.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert!(String::from_utf8_lossy(&sent[0].raw).contains("something else"));
}

#[tokio::test]
async fn a_connection_dropped_after_the_send_committed_is_reconciled_as_sent_once() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "once"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;
    env.gmail.drop_after_commit("drafts.send", 1);
    let dispatcher = env.dispatcher().await;
    let first = dispatcher.run_once().await.unwrap();
    assert_eq!(first.ended(OutcomeKind::Uncertain), vec![decision.id]);
    assert_eq!(
        env.store.get_decision(decision.id).await.unwrap().state,
        DecisionState::Uncertain
    );

    // The next look is due at its backoff time: pass it as the dispatcher's clock.
    let retry_at = env
        .store
        .get_decision(decision.id)
        .await
        .unwrap()
        .next_attempt_at
        .expect("an uncertain decision has a time for its next look");
    dispatcher.run_as_of(retry_at).await.unwrap();
    assert_eq!(
        env.store.get_decision(decision.id).await.unwrap().state,
        DecisionState::Done
    );
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_send_whose_success_answer_cannot_be_read_is_looked_up_not_refused_and_sent_once() {
    let (env, account) = gmail_env().await;
    let draft = env
        .gmail
        .file_draft(&reply(1, "sent, answer garbled"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;
    // Google sends it, then its 200 answer arrives cut short.
    env.gmail.garble_after_commit("drafts.send", 1);
    let dispatcher = env.dispatcher().await;
    let first = dispatcher.run_once().await.unwrap();
    assert_eq!(first.ended(OutcomeKind::Uncertain), vec![decision.id]);
    dispatch_until(&dispatcher, "the send is found in Sent", || async {
        env.store.get_decision(decision.id).await.unwrap().state == DecisionState::Done
    })
    .await;
    assert_eq!(env.gmail.request_count("drafts.send"), 1, "sent again");
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_429_on_send_is_retried_and_a_503_is_reconciled_first_never_duplicated() {
    let (env, account) = gmail_env().await;
    let limited = env.gmail.file_draft(&reply(1, "rate limited"), None);
    let unavailable = env.gmail.file_draft(&reply(2, "unavailable"), None);
    sync(&env, &account).await;
    for draft in [&limited, &unavailable] {
        let item = item_for(&env, &draft.id).await;
        approve_now(&env, item.id).await;
    }
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(429).reason("rateLimitExceeded"),
    );
    let dispatcher = env.dispatcher().await;
    dispatcher.run_once().await.unwrap();
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(503).reason("backendError"),
    );
    dispatch_until(&dispatcher, "both are sent", || async {
        env.gmail.sent_messages().len() == 2
    })
    .await;
    assert_eq!(env.gmail.send_requests(&limited.id), 1);
    assert_eq!(env.gmail.send_requests(&unavailable.id), 1);
    let decisions = env.store.list_decisions(DecisionFilter::All).await.unwrap();
    assert!(
        decisions.iter().all(|d| d.state == DecisionState::Done),
        "{decisions:?}"
    );
}

#[tokio::test]
async fn reject_deletes_the_draft_or_keeps_it_when_the_setting_says_so() {
    let (env, account) = gmail_env().await;
    let deleted = env.gmail.file_draft(&reply(1, "delete"), None);
    let kept = env.gmail.file_draft(&reply(2, "keep"), None);
    sync(&env, &account).await;
    let dispatcher = env.dispatcher().await;
    set_undo_window(&env, 0).await;

    let item = item_for(&env, &deleted.id).await;
    decide::reject(
        &env.store,
        &shown(&env, item.id).await,
        "Wrong recipient",
        ACTOR,
    )
    .await
    .unwrap();
    dispatcher.run_once().await.unwrap();
    assert!(env.gmail.drafts().iter().all(|d| d.id != deleted.id));
    assert_eq!(item_for(&env, &deleted.id).await.state, ItemState::Rejected);
    let audit = env.store.audit_for_item(item.id).await.unwrap();
    assert_eq!(audit[0].line.detail.as_deref(), Some("Wrong recipient"));

    let mut settings = env.store.settings().await.unwrap();
    settings.keep_rejected_gmail_drafts = true;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    let item = item_for(&env, &kept.id).await;
    decide::reject(
        &env.store,
        &shown(&env, item.id).await,
        "Tone is off",
        ACTOR,
    )
    .await
    .unwrap();
    dispatcher.run_once().await.unwrap();
    assert!(env.gmail.drafts().iter().any(|d| d.id == kept.id));
    assert_eq!(item_for(&env, &kept.id).await.state, ItemState::Rejected);
    assert_eq!(env.gmail.send_requests(&kept.id), 0);
}

#[tokio::test]
async fn a_reject_without_a_reason_is_refused_before_anything_is_written() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "x"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let error = decide::reject(&env.store, &shown(&env, item.id).await, "  ", ACTOR)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("say why"), "{error}");
    assert!(env
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn undo_inside_the_window_sends_nothing() {
    let (env, account) = gmail_env().await;
    set_undo_window(&env, 10).await;
    let draft = env.gmail.file_draft(&reply(1, "oops"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = decide::approve(
        &env.store,
        &shown(&env, item.id).await,
        UndoWindow::FromSettings,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    decide::undo(&env.store, item.id, ACTOR).await.unwrap();
    env.dispatcher()
        .await
        .run_as_of(decision.due_at + chrono::Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 0);
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Pending);
}

#[tokio::test]
async fn twenty_approvals_made_offline_go_out_once_in_order_when_the_services_answer() {
    let env = Env::new().await;
    let gmail = env.connect_gmail().await;
    let muster = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let mut gmail_drafts = Vec::new();
    for n in 0..10 {
        gmail_drafts.push(env.gmail.file_draft(&reply(n, "offline"), None));
    }
    let mut muster_drafts = Vec::new();
    for n in 0..10 {
        let relayed = env
            .muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                "ana@example.com",
                &format!("Q{n}"),
                "?",
            )
            .unwrap();
        muster_drafts.push(env.muster.file_draft(&relayed.route_id, "Answer").unwrap());
    }
    sync(&env, &gmail).await;
    let client = env.services.muster(&muster).await.unwrap();
    sync_muster(&env.store, &muster, &client).await.unwrap();

    env.gmail.set_online(false);
    env.muster.set_online(false);
    for (g, m) in gmail_drafts.iter().zip(&muster_drafts) {
        for external in [&g.id, m] {
            let item = item_for(&env, external).await;
            approve_now(&env, item.id).await;
        }
    }
    let dispatcher = env.dispatcher().await;
    for _ in 0..3 {
        dispatcher.run_once().await.unwrap();
    }
    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    assert!(
        items.iter().all(|i| i.state == ItemState::Queued),
        "{items:?}"
    );
    // Every queued item shows its account offline; the first of each waited on the wire.
    assert!(items.iter().all(|i| !i.account_online), "{items:?}");
    let tried = items
        .iter()
        .filter(|i| {
            i.decision
                .as_ref()
                .unwrap()
                .detail
                .as_deref()
                .unwrap_or("")
                .starts_with("offline")
        })
        .count();
    assert_eq!(
        tried, 2,
        "later decisions must wait behind the first of their account"
    );
    assert!(env.gmail.sent_messages().is_empty());

    env.gmail.set_online(true);
    env.muster.set_online(true);
    eventually(Duration::from_secs(20), "all dispatched", || async {
        dispatcher.run_once().await.unwrap();
        env.store
            .list_decisions(DecisionFilter::Live)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let sent: Vec<String> = env
        .gmail
        .sent_messages()
        .into_iter()
        .map(|s| s.draft_id)
        .collect();
    let expected: Vec<String> = gmail_drafts.iter().map(|d| d.id.clone()).collect();
    assert_eq!(sent, expected, "sent out of order or more than once");
    for id in &muster_drafts {
        assert_eq!(env.muster.draft(id).unwrap()["state"], "approved");
    }
    let decisions = env.store.list_decisions(DecisionFilter::All).await.unwrap();
    assert_eq!(decisions.len(), 20);
    assert!(decisions.iter().all(|d| d.state == DecisionState::Done));
}

#[tokio::test]
async fn only_one_dispatcher_per_data_directory() {
    let (env, _) = gmail_env().await;
    let first = env.dispatcher().await;
    let second = Dispatcher::acquire(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        quick_dispatch(),
    )
    .await
    .unwrap();
    assert!(second.is_none(), "a second dispatcher got the lock");
    drop(first);
    assert!(Dispatcher::acquire(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        quick_dispatch()
    )
    .await
    .unwrap()
    .is_some());
}

#[tokio::test]
async fn pause_stops_every_dispatch_until_resumed() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "paused"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    env.store.set_paused(true, "owner via test").await.unwrap();
    let dispatcher = env.dispatcher().await;
    assert!(dispatcher.run_once().await.unwrap().paused);
    assert_eq!(env.gmail.send_requests(&draft.id), 0);
    env.store.set_paused(false, "owner via test").await.unwrap();
    dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
}

#[tokio::test]
async fn an_account_without_send_permission_is_refused_with_a_sentence_not_a_403() {
    let env = Env::with_gmail(countersign_fakes::gmail::GmailConfig {
        grant_scopes: Some(vec!["https://www.googleapis.com/auth/gmail.readonly".into()]),
        ..Default::default()
    })
    .await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "x"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();
    let failed = item_for(&env, &draft.id).await;
    assert_eq!(failed.state, ItemState::SendFailed);
    let reason = failed.state_reason.unwrap();
    assert!(reason.contains("Reconnect"), "{reason}");
    assert!(!reason.contains("403"), "{reason}");
    assert_eq!(env.gmail.send_requests(&draft.id), 0);
}

mod muster {
    use super::*;

    async fn muster_env(checks: bool) -> (Env, Account, String) {
        let env = Env::new().await;
        let (account, draft) = crate::support::muster_reply(&env, checks).await;
        (env, account, draft)
    }

    #[tokio::test]
    async fn approving_a_draft_awaiting_its_check_is_refused_before_anything_is_written() {
        let (env, _, draft) = muster_env(true).await;
        let item = item_for(&env, &draft).await;
        assert_eq!(item.state, ItemState::AwaitingCheck);
        let error = decide::approve(
            &env.store,
            &shown(&env, item.id).await,
            UndoWindow::None,
            ACTOR,
            Confirmation::None,
        )
        .await
        .unwrap_err();
        assert!(error.to_string().contains("not checked"), "{error}");
        assert!(env
            .store
            .list_decisions(DecisionFilter::All)
            .await
            .unwrap()
            .is_empty());
        assert!(env.store.audit_log().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn one_pass_tries_a_failing_decision_once_however_short_its_backoff() {
        let (env, _, draft) = muster_env(false).await;
        let item = item_for(&env, &draft).await;
        approve_now(&env, item.id).await;
        // Something in front of muster answers every decide, and the backoff is shorter than
        // one attempt takes: the pass must still end after one try, leaving it for the next.
        env.muster.inject(
            "POST",
            "/api/plugin/drafts/*/decide",
            u32::MAX,
            countersign_fakes::muster::FaultAction::FrontPage(302),
        );
        let dispatcher = Dispatcher::acquire(
            env.store.clone(),
            env.services.clone(),
            env.dir.path(),
            countersign_core::outbox::DispatchConfig {
                retry_base: Duration::from_micros(1),
                retry_cap: Duration::from_micros(1),
                ..quick_dispatch()
            },
        )
        .await
        .unwrap()
        .expect("no other dispatcher");
        let report = tokio::time::timeout(Duration::from_secs(60), dispatcher.run_once())
            .await
            .expect("the pass ends")
            .unwrap();
        assert_eq!(report.ended(OutcomeKind::Retrying).len(), 1, "{report:?}");
        let decides = env
            .muster
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/decide"))
            .count();
        assert_eq!(decides, 1, "one pass, one attempt");
        let decision = &env.store.list_decisions(DecisionFilter::All).await.unwrap()[0];
        assert!(
            decision
                .outcome_detail
                .as_deref()
                .is_some_and(|d| d.contains("something in front of muster")),
            "{decision:?}"
        );
    }

    #[tokio::test]
    async fn an_approval_is_queued_at_the_plugin_not_sent() {
        let (env, account, draft) = muster_env(false).await;
        let item = item_for(&env, &draft).await;
        approve_now(&env, item.id).await;
        env.dispatcher().await.run_once().await.unwrap();
        assert_eq!(env.muster.draft(&draft).unwrap()["state"], "approved");
        let queued = item_for(&env, &draft).await;
        assert_eq!(queued.state, ItemState::Sending);
        resync(&env, &account).await;
        let after = item_for(&env, &draft).await;
        assert_eq!(after.state, ItemState::Sending);
        assert!(after.state_reason.unwrap().contains("not sent yet"));
    }

    #[tokio::test]
    async fn a_draft_that_changed_is_stale_and_becomes_a_conflict() {
        let (env, _, draft) = muster_env(true).await;
        set_undo_window(&env, 0).await;
        // The owner saw the version awaiting its check and rejects it; meanwhile the plugin
        // passes it, which changes the draft.
        let item = item_for(&env, &draft).await;
        decide::reject(
            &env.store,
            &shown(&env, item.id).await,
            "Tone is off",
            ACTOR,
        )
        .await
        .unwrap();
        env.muster
            .record_check(&draft, CheckVerdict::Sendable, None)
            .unwrap();
        env.dispatcher().await.run_once().await.unwrap();
        let item = item_for(&env, &draft).await;
        assert_eq!(item.state, ItemState::Conflict);
        assert_eq!(env.muster.draft(&draft).unwrap()["state"], "pending");
    }

    #[tokio::test]
    async fn the_same_decision_made_elsewhere_is_done_and_another_is_a_conflict() {
        let (env, account, draft) = muster_env(false).await;
        let client = env.services.muster(&account).await.unwrap();
        let item = item_for(&env, &draft).await;
        // Approved elsewhere with the same version: our approval is simply done.
        client
            .decide(
                &draft,
                countersign_muster::Decision::Approve,
                None,
                &item.version,
            )
            .await
            .unwrap();
        approve_now(&env, item.id).await;
        let dispatcher = env.dispatcher().await;
        let report = dispatcher.run_once().await.unwrap();
        assert_eq!(report.ended(OutcomeKind::Done).len(), 1);

        let relayed = env
            .muster
            .relay_message("gmail-relay", "inbox-chat", "bo@example.com", "Other", "?")
            .unwrap();
        let other = env.muster.file_draft(&relayed.route_id, "Reply").unwrap();
        resync(&env, &account).await;
        let other_item = item_for(&env, &other).await;
        client
            .decide(
                &other,
                countersign_muster::Decision::Reject,
                Some("no"),
                &other_item.version,
            )
            .await
            .unwrap();
        approve_now(&env, other_item.id).await;
        let report = dispatcher.run_once().await.unwrap();
        assert_eq!(report.ended(OutcomeKind::Conflict).len(), 1);
        assert!(item_for(&env, &other)
            .await
            .state_reason
            .unwrap()
            .contains("decided elsewhere"));
    }

    #[tokio::test]
    async fn a_draft_the_check_refused_can_never_be_approved() {
        let (env, account, draft) = muster_env(true).await;
        env.muster
            .record_check(&draft, CheckVerdict::Refused, Some("mentions a price"))
            .unwrap();
        resync(&env, &account).await;
        let item = item_for(&env, &draft).await;
        assert_eq!(item.state, ItemState::Rejected);
        let refused = decide::approve(
            &env.store,
            &shown(&env, item.id).await,
            UndoWindow::None,
            ACTOR,
            Confirmation::None,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&refused, Error::Refused { why, .. } if why.contains("rejected already")),
            "{refused:?}"
        );
        let refusals = env.store.unnotified_refusals().await.unwrap();
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].kind, RefusalKind::CheckRefused);
        assert_eq!(refusals[0].reason, "mentions a price");
    }
}

#[tokio::test]
async fn after_reconnecting_with_send_permission_a_refused_gmail_draft_can_be_approved_again() {
    let env = Env::with_gmail(countersign_fakes::gmail::GmailConfig {
        grant_scopes: Some(vec!["https://www.googleapis.com/auth/gmail.readonly".into()]),
        ..Default::default()
    })
    .await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "retry me"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    let dispatcher = env.dispatcher().await;
    dispatcher.run_once().await.unwrap();
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::SendFailed);

    env.gmail.set_grant_scopes(None);
    let reconnected = env.connect_gmail().await;
    assert_eq!(reconnected.id, account.id, "reconnecting keeps the account");
    approve_now(&env, item.id).await;
    dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_draft_sent_from_gmail_itself_before_dispatch_is_a_conflict_and_not_sent_again() {
    let (env, account) = gmail_env().await;
    let raw = reply(1, "sent by hand");
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    let client = env.services.gmail(&account).await.unwrap();
    client.send_draft(&draft.id, &raw, None).await.unwrap();
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict).len(), 1);
    // The owner's own send is the one request: a dispatcher that tried again would make two
    // (the fake counts a send of a gone draft too; its Sent folder could never hold a second).
    assert_eq!(env.gmail.send_requests(&draft.id), 1, "sent twice");
    let gone = item_for(&env, &draft.id).await;
    assert_eq!(gone.state, ItemState::Gone);
    assert!(gone.state_reason.unwrap().contains("sent elsewhere"));
}

#[tokio::test]
async fn an_outcome_that_stays_unknown_goes_to_the_owner_instead_of_being_resent() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "unknown"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    env.gmail.drop_after_commit("drafts.send", 1);
    // Sent, but Sent cannot be searched: the outcome cannot be confirmed.
    env.gmail.fail_next(
        "messages.list",
        1000,
        Failure::status(500).reason("backendError"),
    );
    let dispatcher = env.dispatcher().await;
    eventually(Duration::from_secs(15), "the owner is asked", || async {
        dispatcher.run_once().await.unwrap();
        item_for(&env, &draft.id).await.state == ItemState::SendFailed
    })
    .await;
    assert_eq!(env.gmail.send_requests(&draft.id), 1, "resent blindly");
    let refusals = env.store.refusals_for_item(item.id).await.unwrap();
    assert!(refusals[0]
        .reason
        .contains("cannot tell whether it was sent"));
}

/// Approvals that have not left can be taken back whenever: past the undo window too, while
/// they wait for the pause to end or the service to answer. Only the dispatcher's claim closes
/// undo, and the two cannot both win.
mod not_left_yet {
    use super::*;
    use countersign_core::actions::Action;

    async fn undo_offered(env: &Env, item_id: i64) -> bool {
        let row = env
            .store
            .list_items(&ItemFilter::default())
            .await
            .unwrap()
            .into_iter()
            .find(|i| i.id == item_id)
            .unwrap();
        row.actions
            .iter()
            .find(|a| a.action == Action::Undo)
            .unwrap()
            .allowed
    }

    #[tokio::test]
    async fn a_paused_approval_past_its_window_can_still_be_undone_and_nothing_is_sent() {
        let (env, account) = gmail_env().await;
        let draft = env.gmail.file_draft(&reply(1, "not yet"), None);
        sync(&env, &account).await;
        let item = item_for(&env, &draft.id).await;
        env.store.set_paused(true, "owner via test").await.unwrap();
        // No undo window: the approval is due at once, but sending is paused.
        let decision = approve_now(&env, item.id).await;
        let dispatcher = env.dispatcher().await;
        assert!(dispatcher.run_once().await.unwrap().paused);
        assert!(decision.due_at <= chrono::Utc::now(), "past its window");
        assert!(undo_offered(&env, item.id).await, "the row offers undo");

        let undone = decide::undo(&env.store, item.id, ACTOR).await.unwrap();
        assert_eq!(undone.state, DecisionState::Cancelled);
        env.store.set_paused(false, "owner via test").await.unwrap();
        dispatcher.run_once().await.unwrap();
        assert_eq!(env.gmail.request_count("drafts.send"), 0);
        assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Pending);
    }

    #[tokio::test]
    async fn an_offline_muster_approval_past_its_window_can_be_undone_then_rejected() {
        let env = Env::new().await;
        let (_, draft) = crate::support::muster_reply(&env, false).await;
        let item = item_for(&env, &draft).await;
        env.muster.set_online(false);
        approve_now(&env, item.id).await;
        let dispatcher = env.dispatcher().await;
        dispatcher.run_once().await.unwrap();
        let waiting = item_for(&env, &draft).await;
        assert_eq!(waiting.state, ItemState::Queued, "{waiting:?}");
        assert!(!waiting.account_online);
        assert!(undo_offered(&env, item.id).await, "the row offers undo");

        decide::undo(&env.store, item.id, ACTOR).await.unwrap();
        set_undo_window(&env, 0).await;
        decide::reject(
            &env.store,
            &shown(&env, item.id).await,
            "Tone is off",
            ACTOR,
        )
        .await
        .unwrap();
        env.muster.set_online(true);
        dispatch_until(&dispatcher, "the rejection reaches muster", || async {
            item_for(&env, &draft).await.state == ItemState::Rejected
        })
        .await;
        assert_eq!(env.muster.draft(&draft).unwrap()["state"], "rejected");
        // The approval never reached muster: the only decide it got is the rejection.
        let decides: Vec<String> = env
            .muster
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/decide") && r.status < 500)
            .map(|r| r.path.clone())
            .collect();
        assert_eq!(decides.len(), 1, "{decides:?}");
    }

    #[tokio::test]
    async fn an_approval_claimed_for_dispatch_can_no_longer_be_undone() {
        let (env, account) = gmail_env().await;
        let draft = env.gmail.file_draft(&reply(1, "going"), None);
        sync(&env, &account).await;
        let item = item_for(&env, &draft.id).await;
        approve_now(&env, item.id).await;
        let claimed = env
            .store
            .claim_next_due(chrono::Utc::now(), "another dispatcher")
            .await
            .unwrap()
            .expect("due at once");
        assert!(!undo_offered(&env, item.id).await);
        let refusal = decide::undo(&env.store, item.id, ACTOR)
            .await
            .unwrap_err()
            .to_string();
        assert!(refusal.contains("already being sent"), "{refusal}");
        let decision = env.store.get_decision(claimed.id).await.unwrap();
        assert_eq!(decision.state, DecisionState::Dispatching);
    }

    #[tokio::test]
    async fn an_undo_racing_the_claim_either_cancels_or_is_refused_never_both() {
        let (env, account) = gmail_env().await;
        let draft = env.gmail.file_draft(&reply(1, "race"), None);
        sync(&env, &account).await;
        let item = item_for(&env, &draft.id).await;
        let (mut cancelled, mut claimed) = (0, 0);
        for round in 0..20 {
            let decision = approve_now(&env, item.id).await;
            // Each side starts first in every other round, so neither wins by being polled first.
            let (undo, claim) = if round % 2 == 0 {
                tokio::join!(
                    decide::undo(&env.store, item.id, ACTOR),
                    env.store.claim_next_due(chrono::Utc::now(), "racer"),
                )
            } else {
                let (claim, undo) = tokio::join!(
                    env.store.claim_next_due(chrono::Utc::now(), "racer"),
                    decide::undo(&env.store, item.id, ACTOR),
                );
                (undo, claim)
            };
            let claim = claim.unwrap();
            let after = env.store.get_decision(decision.id).await.unwrap();
            match (undo, claim) {
                (Ok(_), None) => {
                    cancelled += 1;
                    assert_eq!(after.state, DecisionState::Cancelled);
                }
                (Err(refusal), Some(_)) => {
                    claimed += 1;
                    assert!(
                        refusal.to_string().contains("already being sent"),
                        "{refusal}"
                    );
                    assert_eq!(after.state, DecisionState::Dispatching);
                    // Put the item back to pending for the next round, as a conflict would.
                    env.store
                        .finish_decision(
                            decision.id,
                            &countersign_core::DispatchOutcome::Conflict("race round".into()),
                            Some(countersign_core::ItemEvent::Conflicted),
                            None,
                        )
                        .await
                        .unwrap();
                }
                (undo, claim) => panic!("round {round}: undo {undo:?} and claim {claim:?}"),
            }
        }
        assert_eq!(cancelled + claimed, 20);
        // Both outcomes happened: the race was run, not won by one side every time.
        assert!(
            cancelled > 0 && claimed > 0,
            "cancelled {cancelled}, claimed {claimed}: one side always won"
        );
        assert_eq!(env.gmail.request_count("drafts.send"), 0);
    }
}

#[tokio::test]
async fn pausing_mid_pass_lets_the_send_under_way_finish_and_holds_the_next() {
    let (env, account) = gmail_env().await;
    let first = env.gmail.file_draft(&reply(1, "first"), None);
    let second = env.gmail.file_draft(&reply(2, "second"), None);
    sync(&env, &account).await;
    for draft in [&first, &second] {
        approve_now(&env, item_for(&env, &draft.id).await.id).await;
    }
    // The first decision's re-read before its send is held at Gmail: the pass is under way.
    let reads_before = env.gmail.request_count("drafts.get");
    let held = env.gmail.hold_next("drafts.get");
    let dispatcher = env.dispatcher().await;
    let pass = tokio::spawn(async move { dispatcher.run_once().await.map(|r| (r, dispatcher)) });
    eventually(
        Duration::from_secs(20),
        "the first send is under way",
        || async { env.gmail.request_count("drafts.get") > reads_before },
    )
    .await;
    env.store.set_paused(true, "owner via test").await.unwrap();
    held.release();
    let (report, dispatcher) = pass.await.unwrap().unwrap();
    assert!(report.paused, "the pass saw the switch");
    let sends = |draft: &countersign_fakes::gmail::FiledDraft| env.gmail.send_requests(&draft.id);
    assert_eq!(
        sends(&first) + sends(&second),
        1,
        "the send under way finished; the next one was not started"
    );
    let waiting = if sends(&first) == 1 { &second } else { &first };
    assert_eq!(item_for(&env, &waiting.id).await.state, ItemState::Queued);

    env.store.set_paused(false, "owner via test").await.unwrap();
    dispatcher.run_once().await.unwrap();
    assert_eq!((sends(&first), sends(&second)), (1, 1), "each sent once");
}

#[tokio::test]
async fn one_account_offline_does_not_hold_up_another_that_sends() {
    let env = Env::new().await;
    let gmail = env.connect_gmail().await;
    let (_muster, muster_draft) = crate::support::muster_reply(&env, false).await;
    let gmail_draft = env.gmail.file_draft(&reply(1, "Gmail"), None);
    sync(&env, &gmail).await;
    let gmail_item = item_for(&env, &gmail_draft.id).await.id;
    let muster_item = item_for(&env, &muster_draft).await.id;
    approve_now(&env, gmail_item).await;
    approve_now(&env, muster_item).await;
    env.gmail.set_online(false);
    env.gmail.server().until_listening(false).await;

    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the muster reply is handed over", || async {
        item_for(&env, &muster_draft).await.state == ItemState::Sending
    })
    .await;
    let decides = || {
        env.muster
            .count_requests("POST", &format!("/api/plugin/drafts/{muster_draft}/decide"))
    };
    assert_eq!(decides(), 1);
    let gmail_row = item_for(&env, &gmail_draft.id).await;
    assert_eq!(gmail_row.state, ItemState::Queued, "waits for Gmail");
    assert!(!gmail_row.account_online, "shown as queued — offline");
    assert_eq!(env.gmail.send_requests(&gmail_draft.id), 0);

    env.gmail.set_online(true);
    env.gmail.server().until_listening(true).await;
    dispatch_until(&dispatcher, "Gmail sends once it answers", || async {
        item_for(&env, &gmail_draft.id).await.state == ItemState::Sent
    })
    .await;
    assert_eq!(env.gmail.send_requests(&gmail_draft.id), 1);
    assert_eq!(decides(), 1);
}

/// Someone with the file changes the bytes of a version the owner approved, leaving the digest
/// stored beside them as it was: the dispatcher hashes the bytes themselves against what the
/// decision bound to, sends nothing, and tells the owner why.
#[tokio::test]
async fn bytes_changed_in_the_mirror_file_after_approval_are_never_sent() {
    use sqlx::Connection;
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "It is 40 EUR."), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;

    let url = format!("sqlite://{}", env.store.path().display());
    let mut outsider = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("UPDATE draft_versions SET content = ? WHERE item_id = ?")
        .bind(reply(1, "It is 4000 EUR, wired to the account below.").as_slice())
        .bind(item.id)
        .execute(&mut outsider)
        .await
        .unwrap();
    outsider.close().await.unwrap();

    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.send_requests(&draft.id), 0, "{report:?}");
    assert!(env.gmail.sent_messages().is_empty());
    let decision = &env.store.decisions_for_item(item.id).await.unwrap()[0];
    assert!(decision.state.is_final(), "{decision:?}");
    let why = decision.outcome_detail.clone().unwrap_or_default();
    assert!(why.contains("changed in the mirror file"), "{why}");
}
