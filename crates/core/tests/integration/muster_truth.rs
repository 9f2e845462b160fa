//! muster as it really is, seen from the mirror and the outbox: a session kept between
//! processes, sign-ins that did not happen never taken for "outcome unknown", look-ups counted
//! apart from claims, a muster without the plugin-draft routes, and drafts the chief filed.

use countersign_core::services::Services;
use countersign_core::store::{DecisionFilter, RefusalKind};
use countersign_core::sync::sync_muster;
use countersign_core::DecisionState;
use countersign_core::ItemState;
use countersign_core::OutcomeKind;
use countersign_fakes::muster::{FaultAction, WireStyle};
use countersign_gmail::TokenStore;

use crate::support::{approve_now, dispatch_until, item_for, resync, Env};

async fn relayed(env: &Env) -> (String, String) {
    crate::support::relayed_reply(env, false)
}

/// Use up muster's sign-in window with wrong passwords from "someone else".
async fn exhaust_sign_ins(env: &Env) {
    for _ in 0..10 {
        let _ = countersign_muster::MusterClient::new(
            env.muster.url().parse().unwrap(),
            "someone-elses-guess".into(),
        )
        .unwrap()
        .login()
        .await;
    }
}

#[tokio::test]
async fn another_process_reuses_the_kept_session_instead_of_signing_in() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let _ = relayed(&env).await;
    resync(&env, &account).await;
    // A second Services on the same data dir is what another process builds.
    let other = Services::with_token_store(env.dir.path(), TokenStore::file(env.dir.path()));
    let client = other.muster(&account).await.unwrap();
    sync_muster(&env.store, &account, &client).await.unwrap();
    assert_eq!(env.muster.sign_ins(), 1, "only connecting signed in");
}

#[tokio::test]
async fn a_rate_limited_sign_in_leaves_the_decision_queued_with_the_next_try_never_uncertain() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    // muster forgets the session and its sign-in window is used up by someone else.
    env.muster.expire_sessions();
    exhaust_sign_ins(&env).await;
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Retrying).len(), 1, "{report:?}");
    assert!(
        report.ended(OutcomeKind::Uncertain).is_empty()
            && report.ended(OutcomeKind::Failed).is_empty()
    );
    let decision = &env.store.list_decisions(DecisionFilter::All).await.unwrap()[0];
    assert_eq!(decision.state, DecisionState::Queued);
    let detail = decision.outcome_detail.clone().unwrap();
    assert!(
        detail.starts_with("queued — muster sign-in limited, next try at "),
        "{detail}"
    );
    assert!(decision.next_attempt_at.unwrap() > chrono::Utc::now());
    assert_eq!(env.muster.draft(&draft).unwrap()["state"], "pending");
    assert_eq!(item_for(&env, &draft).await.state, ItemState::Queued);
}

#[tokio::test]
async fn a_decide_whose_answer_was_lost_is_looked_up_and_found_done() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster
        .drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Uncertain).len(), 1, "{report:?}");
    // The look-up reads the draft; it does not decide again.
    let decides = env
        .muster
        .count_requests("POST", &format!("/api/plugin/drafts/{draft}/decide"));
    // The look-up is due at its spaced time: pass that as the dispatcher's clock (no sleep).
    let look_at = env.store.list_decisions(DecisionFilter::All).await.unwrap()[0]
        .next_attempt_at
        .expect("an uncertain decision has a time for its next look");
    let report = dispatcher.run_as_of(look_at).await.unwrap();
    assert_eq!(
        report.ended(OutcomeKind::Done).len(),
        1,
        "{report:?} {:?}",
        env.store.list_decisions(DecisionFilter::All).await.unwrap()
    );
    assert_eq!(
        env.muster
            .count_requests("POST", &format!("/api/plugin/drafts/{draft}/decide")),
        decides
    );
    assert_eq!(env.muster.draft(&draft).unwrap()["state"], "approved");
    // The plugin's later result shows on the item.
    env.muster.claim(&draft).unwrap();
    env.muster.report_result(&draft, true, None).unwrap();
    resync(&env, &account).await;
    assert_eq!(item_for(&env, &draft).await.state, ItemState::Sent);
}

#[tokio::test]
async fn unanswered_look_ups_never_end_a_muster_decision_as_send_failed() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster
        .drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
    env.muster.fail_next("GET", "/api/plugin/drafts/*", 8, 503);
    let dispatcher = env.dispatcher().await;
    // One decide whose answer is lost, eight look-ups answered 503, then one that reads it.
    let decision =
        || async { env.store.list_decisions(DecisionFilter::All).await.unwrap()[0].clone() };
    dispatch_until(&dispatcher, "the decision ends", || async {
        decision().await.state.is_final()
    })
    .await;
    assert_eq!(
        env.muster
            .count_requests("GET", &format!("/api/plugin/drafts/{draft}")),
        9
    );
    let decision = &decision().await;
    assert_eq!(decision.state, DecisionState::Done, "{decision:?}");
    assert_ne!(item_for(&env, &draft).await.state, ItemState::SendFailed);
    assert!(env.store.unnotified_refusals().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_muster_without_the_plugin_draft_routes_cannot_be_added_and_an_existing_account_keeps_its_items(
) {
    let env = Env::new().await;
    env.muster.set_wire_style(WireStyle {
        no_plugin_api: true,
        ..WireStyle::default()
    });
    let e = env
        .services
        .connect_muster(&env.store, &env.muster.url(), env.muster.password())
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("it has no plugin-draft API (too old, or not muster)"),
        "{e}"
    );
    assert!(env.store.list_accounts().await.unwrap().is_empty());

    env.muster.set_wire_style(WireStyle::default());
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    env.muster.set_wire_style(WireStyle {
        no_plugin_api: true,
        ..WireStyle::default()
    });
    let client = env.services.muster(&account).await.unwrap();
    let e = sync_muster(&env.store, &account, &client)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no plugin-draft API"), "{e}");
    let e =
        countersign_core::sync::muster::sync_muster_draft(&env.store, &account, &client, &draft)
            .await
            .unwrap_err();
    assert!(e.to_string().contains("no plugin-draft API"), "{e}");
    assert_eq!(item_for(&env, &draft).await.state, ItemState::Pending);
}

#[tokio::test]
async fn a_draft_the_chief_filed_is_mirrored_approvable_and_its_refusal_has_no_redraft_chain() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (message_id, first) = relayed(&env).await;
    env.muster.set_wire_style(WireStyle {
        numeric_ids: true,
        bare_lists: true,
        ..WireStyle::default()
    });
    let chief = env
        .muster
        .file_chief_draft(&message_id, "The chief answers.")
        .unwrap();
    resync(&env, &account).await;
    let item = item_for(&env, &chief).await;
    assert_eq!(item.state, ItemState::Pending);
    assert!(item.from.contains("filed by the chief"), "{}", item.from);
    assert_eq!(item_for(&env, &first).await.state, ItemState::Pending);
    approve_now(&env, item.id).await;
    env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(env.muster.draft(&chief).unwrap()["state"], "approved");
    env.muster.claim(&chief).unwrap();
    env.muster
        .report_result(&chief, false, Some("mailbox full"))
        .unwrap();
    resync(&env, &account).await;
    let failed = item_for(&env, &chief).await;
    assert_eq!(failed.state, ItemState::SendFailed);
    let reason = failed.state_reason.unwrap();
    assert!(
        reason.contains("mailbox full") && reason.contains("noted to the chief"),
        "{reason}"
    );
    let refusals = env.store.unnotified_refusals().await.unwrap();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].kind, RefusalKind::SendFailed);
    // No redraft route was opened for it.
    assert_eq!(env.muster.routes(&message_id).len(), 1);
}

#[tokio::test]
async fn a_proxy_answering_instead_of_muster_holds_the_decision_back_unsent() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster.inject(
        "POST",
        "/api/plugin/drafts/*/decide",
        1,
        FaultAction::FrontPage(302),
    );
    let report = env.dispatcher().await.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Retrying).len(), 1, "{report:?}");
    let decision = &env.store.list_decisions(DecisionFilter::All).await.unwrap()[0];
    assert!(
        decision
            .outcome_detail
            .as_deref()
            .is_some_and(|d| d.contains("something in front of muster")),
        "{decision:?} {report:?}"
    );
}

#[tokio::test]
async fn claims_by_killed_processes_do_not_spend_the_look_up_budget() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env
        .gmail
        .file_draft(&crate::support::reply(1, "after many kills"), None);
    crate::support::sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    approve_now(&env, item.id).await;
    // Six processes claim it and die before sending (the next start puts it back).
    for _ in 0..6 {
        let claimed = env
            .store
            .claim_next_due(chrono::Utc::now(), "pid-that-dies")
            .await
            .unwrap()
            .expect("due");
        env.store
            .finish_decision(
                claimed.id,
                &countersign_core::DispatchOutcome::Retry("not sent yet".into()),
                Some(countersign_core::ItemEvent::DispatchRetried),
                None,
            )
            .await
            .unwrap();
    }
    // Then the send's answer is lost and the first look-up meets a server error.
    env.gmail.drop_after_commit("drafts.send", 1);
    env.gmail.fail_next(
        "messages.list",
        1,
        countersign_fakes::gmail::Failure::status(500).reason("backendError"),
    );
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the decision ends", || async {
        env.store.list_decisions(DecisionFilter::All).await.unwrap()[0]
            .state
            .is_final()
    })
    .await;
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
}

#[test]
fn every_process_of_a_data_dir_paces_its_sign_ins_with_the_others() {
    use countersign_muster::SessionKeeper;
    let dir = tempfile::tempdir().unwrap();
    let tokens = TokenStore::file(dir.path());
    let passwords = countersign_core::secrets::PasswordStore::open(dir.path(), &tokens);
    // Two keepers of one account stand for two processes.
    let one =
        countersign_core::secrets::MusterSessions::new(dir.path(), passwords.clone(), "muster-1");
    let other = countersign_core::secrets::MusterSessions::new(dir.path(), passwords, "muster-1");
    let now = std::time::SystemTime::now();
    for _ in 0..countersign_muster::SIGN_INS_PER_WINDOW {
        one.reserve_sign_in(now).unwrap();
    }
    // The other process is told to wait out the rest of muster's one-minute window.
    let wait = other.reserve_sign_in(now).unwrap_err();
    assert!(
        wait > std::time::Duration::ZERO && wait <= std::time::Duration::from_secs(61),
        "{wait:?}"
    );
    let later = now + std::time::Duration::from_secs(61);
    other.reserve_sign_in(later).unwrap();
    other.sign_in_refused(later, std::time::Duration::from_secs(60));
    // muster's refusal holds every process back for the time it named (60 s from `later`).
    let wait = one
        .reserve_sign_in(later + std::time::Duration::from_secs(30))
        .unwrap_err();
    assert!(
        wait > std::time::Duration::from_secs(25) && wait <= std::time::Duration::from_secs(30),
        "{wait:?}"
    );
    // The cookie one keeps is the one the other finds.
    one.save("123.abc");
    assert_eq!(other.load().as_deref(), Some("123.abc"));
}

#[tokio::test]
async fn a_lost_decide_whose_draft_muster_now_shows_in_an_unknown_state_stays_uncertain_not_decided_elsewhere(
) {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster
        .drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
    // A newer muster's state for it: the approval may have led there, or another decision.
    env.muster
        .write_draft_oddly(&draft, serde_json::json!({"state": "archived"}), &[])
        .unwrap();
    let dispatcher = env.dispatcher().await;
    let looked_up = format!("/api/plugin/drafts/{draft}");
    dispatch_until(&dispatcher, "the draft is looked up", || async {
        env.muster.count_requests("GET", &looked_up) > 0
    })
    .await;
    let decision = env.store.list_decisions(DecisionFilter::All).await.unwrap()[0].clone();
    assert_eq!(decision.state, DecisionState::Uncertain, "{decision:?}");
    let detail = decision.outcome_detail.unwrap_or_default();
    assert!(
        detail.contains("'archived', which Countersign does not know"),
        "{detail}"
    );
    assert!(!detail.contains("decided elsewhere"), "{detail}");
    assert_ne!(item_for(&env, &draft).await.state, ItemState::Conflict);
}

/// A decide muster answered with a 503 (did it land? the look-up will say), and meanwhile
/// muster shows the draft at another version: the look-up ends the decision as changed. The
/// decide is not sent again — that would decide a version the owner never saw.
#[tokio::test]
async fn a_decide_that_did_not_land_is_not_sent_again_once_the_draft_changed() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    let (_, draft) = relayed(&env).await;
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    approve_now(&env, item.id).await;
    env.muster
        .fail_next("POST", "/api/plugin/drafts/*/decide", 1, 503);
    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Uncertain).len(), 1, "{report:?}");
    let decide_path = format!("/api/plugin/drafts/{draft}/decide");
    let decides = env.muster.count_requests("POST", &decide_path);

    env.muster
        .write_draft_oddly(
            &draft,
            serde_json::json!({"updatedAt": "2026-12-31T23:59:59.000001Z"}),
            &[],
        )
        .unwrap();
    let look_at = env.store.list_decisions(DecisionFilter::All).await.unwrap()[0]
        .next_attempt_at
        .expect("an uncertain decision has a time for its next look");
    let report = dispatcher.run_as_of(look_at).await.unwrap();
    assert_eq!(report.ended(OutcomeKind::Conflict).len(), 1, "{report:?}");
    assert_eq!(env.muster.count_requests("POST", &decide_path), decides);
    assert_eq!(env.muster.draft(&draft).unwrap()["state"], "pending");
}
