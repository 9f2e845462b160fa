//! Gmail when things go wrong (issue 25): a send whose answer was lost and whose `Message-ID`
//! Gmail replaced, a lost rejection of a draft sent elsewhere, a vanished draft answering 400 or
//! 404, a deleted OAuth client, and an agent writing between the re-read and the send.

use std::sync::Arc;
use std::time::Duration;

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::decide;
use countersign_core::live::GmailCadence;
use countersign_core::services::GmailConnect;
use countersign_core::store::Account;
use countersign_core::sync::sync_gmail;
use countersign_core::OutcomeKind;
use countersign_core::{DecisionState, ItemState};
use countersign_fakes::gmail::{BeforeSend, Failure, FakeGmail, GmailConfig};

use crate::support::{
    approve_now, dispatch_until, eventually, item_for, quick_dispatch, reply, shown, sync, Env,
};

/// An env whose fake Gmail has quota for many sends a second.
async fn roomy_env() -> (Env, Account) {
    let env = Env::with_gmail(GmailConfig {
        quota_units_per_minute: 100_000_000,
        ..GmailConfig::default()
    })
    .await;
    let account = env.connect_gmail().await;
    (env, account)
}

#[tokio::test]
async fn fifty_lost_sends_whose_message_id_gmail_replaced_each_end_sent_exactly_once() {
    let (env, account) = roomy_env().await;
    env.gmail.set_replace_message_id_on_send(true);
    let drafts: Vec<_> = (0..50)
        .map(|n| {
            env.gmail
                .file_draft(&reply(n, &format!("Invoice {n} is attached.")), None)
        })
        .collect();
    sync(&env, &account).await;
    let mut decisions = Vec::new();
    for draft in &drafts {
        let item = item_for(&env, &draft.id).await;
        decisions.push(approve_now(&env, item.id).await.id);
    }
    // Every send is carried out, and every answer is lost.
    env.gmail.drop_after_commit("drafts.send", 50);
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "every lost send is found in Sent", || async {
        let mut all = true;
        for id in &decisions {
            let state = env.store.get_decision(*id).await.unwrap().state;
            assert_ne!(
                state,
                DecisionState::Failed,
                "decision {id} went to the owner"
            );
            all &= state == DecisionState::Done;
        }
        all
    })
    .await;
    // Requests, not what the fake kept: a second send of one draft would show here.
    assert_eq!(env.gmail.request_count("drafts.send"), 50);
    let sent = env.gmail.sent_messages();
    for (draft, id) in drafts.iter().zip(&decisions) {
        assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
        let record = sent.iter().find(|s| s.draft_id == draft.id).unwrap();
        // Found by its content: the Message-ID Countersign knows is not the one sent.
        let decision = env.store.get_decision(*id).await.unwrap();
        assert!(!String::from_utf8_lossy(&record.raw)
            .contains(decision.rfc822_message_id.as_deref().unwrap()));
        assert_eq!(
            decision.gmail_message_id.as_deref(),
            Some(record.message_id.as_str())
        );
    }
}

#[tokio::test]
async fn a_lost_send_is_found_by_google_s_own_clock_when_this_computer_s_runs_three_minutes_fast() {
    let (env, account) = roomy_env().await;
    // Google's clock three minutes behind this computer's: every message Gmail writes, the
    // draft and its send, is dated three minutes before the local time of the decision.
    env.gmail.set_clock_offset_ms(-180_000);
    env.gmail.set_replace_message_id_on_send(true);
    let draft = env
        .gmail
        .file_draft(&reply(1, "Invoice 1 is attached."), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await.id;
    env.gmail.drop_after_commit("drafts.send", 1);
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the lost send is found in Sent", || async {
        let state = env.store.get_decision(decision).await.unwrap().state;
        assert_ne!(
            state,
            DecisionState::Failed,
            "the decision went to the owner"
        );
        state == DecisionState::Done
    })
    .await;
    assert_eq!(env.gmail.request_count("drafts.send"), 1);
    let sent = env.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        env.store
            .get_decision(decision)
            .await
            .unwrap()
            .gmail_message_id
            .as_deref(),
        Some(sent[0].message_id.as_str()),
        "found by its content, dated by Google's clock"
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_send_s_answer_gives_gmail_s_message_id_to_the_decision_and_the_audit() {
    let (env, account) = roomy_env().await;
    let draft = env.gmail.file_draft(&reply(1, "answered"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();
    let sent_id = env.gmail.sent_messages()[0].message_id.clone();
    let done = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(done.gmail_message_id.as_deref(), Some(sent_id.as_str()));
    let audit = env.store.audit_for_item(item.id).await.unwrap();
    let dispatched = audit
        .iter()
        .find(|a| a.line.action == "approve dispatched")
        .unwrap();
    let detail = dispatched.line.detail.as_deref().unwrap();
    assert!(
        detail.contains(&format!("Gmail message {sent_id}")),
        "{detail}"
    );
}

#[tokio::test]
async fn a_lost_rejection_of_a_draft_sent_elsewhere_ends_sent_elsewhere_not_rejected() {
    let (env, account) = roomy_env().await;
    let draft = env.gmail.file_draft(&reply(1, "reject me"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = decide::reject(
        &env.store,
        &shown(&env, item.id).await,
        "Tone is off",
        "owner via test",
    )
    .await
    .unwrap();
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    // The delete's answer is lost (a 503: Google may or may not have acted), and meanwhile a
    // second client sends the draft.
    env.gmail
        .fail_next("drafts.delete", 1, Failure::status(503));
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the rejection is uncertain", || async {
        env.store.get_decision(decision.id).await.unwrap().state == DecisionState::Uncertain
    })
    .await;
    assert!(env.gmail.send_draft_in_gmail(&draft.id).is_some());
    dispatch_until(&dispatcher, "the rejection is settled", || async {
        env.store.get_decision(decision.id).await.unwrap().state != DecisionState::Uncertain
    })
    .await;
    let settled = item_for(&env, &draft.id).await;
    assert_eq!(settled.state, ItemState::Gone);
    assert!(
        settled
            .state_reason
            .as_deref()
            .unwrap()
            .contains("sent elsewhere"),
        "{:?}",
        settled.state_reason
    );
    assert_eq!(
        env.store.get_decision(decision.id).await.unwrap().state,
        DecisionState::Conflict
    );
}

/// Approve the draft of a fresh reply; the env, the draft id and the decision id.
async fn approved(n: usize) -> (Env, String, i64) {
    let (env, account) = roomy_env().await;
    let draft = env.gmail.file_draft(&reply(n, "approved"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;
    (env, draft.id, decision.id)
}

/// The item of `draft_id` ended "deleted elsewhere: nothing was sent", at once.
async fn assert_deleted_elsewhere(env: &Env, draft_id: &str, decision_id: i64) {
    let decision = env.store.get_decision(decision_id).await.unwrap();
    assert_eq!(decision.state, DecisionState::Conflict, "{decision:?}");
    let item = item_for(env, draft_id).await;
    assert_eq!(item.state, ItemState::Gone);
    assert_eq!(
        item.state_reason.as_deref(),
        Some("deleted elsewhere: nothing was sent")
    );
    assert!(env.gmail.sent_messages().is_empty());
}

#[tokio::test]
async fn a_draft_deleted_elsewhere_that_gmail_answers_400_for_is_gone_not_refused() {
    let (env, draft, decision) = approved(1).await;
    env.gmail.set_vanished_drafts_answer_400(true);
    env.gmail.delete_draft(&draft);
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict), vec![decision]);
    assert_deleted_elsewhere(&env, &draft, decision).await;
    assert_eq!(env.gmail.request_count("drafts.send"), 0);
}

#[tokio::test]
async fn a_send_answered_400_because_the_draft_was_just_deleted_is_gone_and_not_sent_again() {
    let (env, draft, decision) = approved(1).await;
    env.gmail.set_vanished_drafts_answer_400(true);
    env.gmail.before_next_send(&draft, BeforeSend::Delete);
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict), vec![decision]);
    assert_deleted_elsewhere(&env, &draft, decision).await;
    assert_eq!(env.gmail.request_count("drafts.send"), 1);
}

#[tokio::test]
async fn a_first_404_on_send_is_deleted_elsewhere_not_an_unknown_outcome() {
    let (env, draft, decision) = approved(1).await;
    env.gmail.before_next_send(&draft, BeforeSend::Delete);
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict), vec![decision]);
    assert_deleted_elsewhere(&env, &draft, decision).await;
    dispatcher.run_once().await.unwrap();
    assert_eq!(env.gmail.request_count("drafts.send"), 1, "sent again");
}

#[tokio::test]
async fn a_draft_sent_in_gmail_right_before_the_send_answered_400_is_sent_elsewhere_once() {
    let (env, draft, decision) = approved(1).await;
    env.gmail.set_vanished_drafts_answer_400(true);
    env.gmail.before_next_send(&draft, BeforeSend::SendInGmail);
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict), vec![decision]);
    let item = item_for(&env, &draft).await;
    assert_eq!(item.state, ItemState::Gone);
    assert!(item.state_reason.unwrap().starts_with("sent elsewhere"));
    assert_eq!(env.gmail.sent_messages().len(), 1);
    assert_eq!(env.gmail.request_count("drafts.send"), 1);
}

#[tokio::test]
async fn a_400_on_send_for_a_draft_still_there_is_google_s_refusal() {
    let (env, draft, decision) = approved(1).await;
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(400).reason("invalidArgument"),
    );
    env.dispatcher().await.run_once().await.unwrap();
    let refused = env.store.get_decision(decision).await.unwrap();
    assert_eq!(refused.state, DecisionState::Failed);
    assert!(refused
        .outcome_detail
        .unwrap()
        .starts_with("Google refused to send it"));
    assert_eq!(item_for(&env, &draft).await.state, ItemState::SendFailed);
}

#[tokio::test]
async fn an_agent_update_between_the_re_read_and_the_send_is_not_sent_the_reviewed_bytes_are() {
    let (env, account) = roomy_env().await;
    let reviewed = reply(1, "reviewed text");
    let draft = env.gmail.file_draft(&reviewed, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    env.gmail.before_next_send(
        &draft.id,
        BeforeSend::Update(reply(1, "the agent's unreviewed text")),
    );
    env.dispatcher().await.run_once().await.unwrap();
    let sent = env.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].raw, reviewed, "what left is what was reviewed");
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_deleted_oauth_client_keeps_decisions_queued_and_asks_once_for_a_new_client() {
    let (env, account) = roomy_env().await;
    let raw = reply(1, "waits for the new client");
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let decision = approve_now(&env, item.id).await;

    env.gmail.set_client_deleted(true);
    env.gmail.expire_access_tokens();
    env.gmail.clear_requests();
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert!(report.ended(OutcomeKind::Failed).is_empty(), "{report:?}");
    let waiting = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(
        waiting.state,
        DecisionState::Queued,
        "it waits, not refused"
    );
    let reason = env
        .store
        .get_account(&account.id)
        .await
        .unwrap()
        .reconnect_reason
        .expect("account marked");
    assert!(
        reason.starts_with("Reconnect: new client needed"),
        "{reason}"
    );
    assert_eq!(env.gmail.request_count("oauth.token"), 1);

    // Nothing asks Google for a token again: not a sync, not the dispatcher.
    env.gmail.clear_requests();
    let client = env.services.gmail(&account).await.unwrap();
    let err = sync_gmail(&env.store, &account, &client).await.unwrap_err();
    assert!(err.to_string().contains("new client needed"), "{err}");
    dispatcher.run_once().await.unwrap();
    assert!(
        env.gmail.requests().is_empty(),
        "{:?}",
        env.gmail.requests()
    );

    // The owner creates a new client and reconnects: the decision goes out once.
    env.gmail.set_client_deleted(false);
    let reconnected = env.connect_gmail().await;
    assert_eq!(reconnected.reconnect_reason, None);
    dispatch_until(&dispatcher, "the queued approval is sent", || async {
        env.store.get_decision(decision.id).await.unwrap().state == DecisionState::Done
    })
    .await;
    assert_eq!(env.gmail.request_count("drafts.send"), 1);
    assert_eq!(env.gmail.sent_messages()[0].raw, raw);
}

#[tokio::test]
async fn the_poll_loop_stops_asking_for_tokens_once_the_oauth_client_is_gone() {
    let (env, account) = roomy_env().await;
    // A second mailbox the same app follows on the same cadence: its checks show the loops
    // going round.
    let other = FakeGmail::start(GmailConfig {
        email: "other@example.com".into(),
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    env.services
        .connect_gmail(
            &env.store,
            GmailConnect::auto_consent(
                other.client_secret_json().to_string(),
                other.api_base(),
                other.tokeninfo_url(),
            ),
        )
        .await
        .unwrap();
    env.gmail.set_client_deleted(true);
    env.gmail.expire_access_tokens();
    let options = AppOptions {
        gmail_cadence: GmailCadence {
            visible: Duration::from_millis(20),
            hidden: Duration::from_millis(20),
        },
        dispatch: quick_dispatch(),
        ..AppOptions::default()
    };
    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        options,
        Arc::new(|_| {}),
    )
    .await
    .unwrap();
    eventually(Duration::from_secs(10), "the account marked", || async {
        env.store
            .get_account(&account.id)
            .await
            .unwrap()
            .reconnect_reason
            .is_some_and(|r| r.contains("new client needed"))
    })
    .await;
    let tokens = env.gmail.request_count("oauth.token");
    let checks = other.request_count("history.list");
    eventually(
        Duration::from_secs(20),
        "25 more checks of the other mailbox",
        || async { other.request_count("history.list") >= checks + 25 },
    )
    .await;
    assert_eq!(
        env.gmail.request_count("oauth.token"),
        tokens,
        "the token endpoint was asked again"
    );
    assert!(
        tokens <= 2,
        "asked {tokens} times before the account was marked"
    );

    // A new client: the loop reads the mailbox again.
    env.gmail.set_client_deleted(false);
    env.connect_gmail().await;
    let listed = env.gmail.request_count("history.list") + env.gmail.request_count("drafts.list");
    eventually(Duration::from_secs(10), "checks again", || async {
        env.gmail.request_count("history.list") + env.gmail.request_count("drafts.list") > listed
    })
    .await;
    app.stop();
}
