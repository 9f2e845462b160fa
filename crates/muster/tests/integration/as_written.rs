//! Answers read as muster writes them (ids as numbers, bare lists, a draft the chief filed),
//! and answers that are not muster's (no plugin-draft routes, a proxy in front, sign-in not
//! configured), each with the sentence the owner is shown.

use std::sync::Arc;
use std::time::Duration;

use countersign_fakes::muster::{FaultAction, MusterConfig, WireStyle};
use countersign_muster::{
    DecideOutcome, Decision, DraftState, Error, MemorySessionKeeper, MusterClient, SessionKeeper,
    DEFAULT_REQUEST_TIMEOUT,
};

use crate::{client, fake, file_reply};

#[tokio::test]
async fn ids_written_as_numbers_and_bare_lists_are_read_like_the_contracts_forms() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    fake.set_wire_style(WireStyle {
        numeric_ids: true,
        bare_lists: true,
        ..WireStyle::default()
    });
    // The fake writes what real muster writes: numbers and a bare array.
    let raw = fake.draft(&filed.draft_id).unwrap();
    assert!(raw["id"].is_u64() && raw["routeId"].is_u64(), "{raw}");
    let muster = client(&fake);
    let drafts = muster.list_drafts(None).await.unwrap().records;
    assert_eq!(drafts.len(), 1);
    assert_eq!(drafts[0].id, filed.draft_id);
    assert_eq!(drafts[0].route_id.as_deref(), Some(filed.route_id.as_str()));
    let messages = muster.list_messages(None).await.unwrap().records;
    assert_eq!(messages[0].routes, vec![filed.route_id.clone()]);
    let routes = muster.list_routes(&messages[0].id).await.unwrap().records;
    assert_eq!(routes.len(), 1);
    assert_eq!(routes[0].id, filed.route_id);
    let one = muster.get_draft(&filed.draft_id).await.unwrap();
    assert_eq!(one.state, DraftState::Pending);
}

#[tokio::test]
async fn a_draft_the_chief_filed_has_no_route_and_is_read_all_the_same() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let chief = fake
        .file_chief_draft(&filed.message_id, "From the chief: done.")
        .unwrap();
    let draft = client(&fake).get_draft(&chief).await.unwrap();
    assert_eq!(draft.route_id, None);
    assert_eq!(draft.session, "chief");
    assert_eq!(draft.text, "From the chief: done.");
}

#[tokio::test]
async fn a_muster_without_the_plugin_draft_routes_is_named_not_taken_for_an_empty_one() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    muster.list_drafts(None).await.unwrap();
    fake.set_wire_style(WireStyle {
        no_plugin_api: true,
        ..WireStyle::default()
    });
    let e = muster.get_draft(&filed.draft_id).await.unwrap_err();
    assert!(matches!(e, Error::NoPluginApi), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot use this muster: it has no plugin-draft API (too old, or not muster)"
    );
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::NoPluginApi), "{e:?}");
    // With the routes there, the same plain-text 404 on a per-id route is muster's
    // `http.NotFound` for a draft it does not have: told apart by the collection answering.
    fake.set_wire_style(WireStyle::default());
    let e = muster.get_draft("999").await.unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
}

#[tokio::test]
async fn a_draft_muster_deleted_answers_plain_text_404_and_is_read_as_gone() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = muster.get_draft(&filed.draft_id).await.unwrap();
    fake.delete_draft(&filed.draft_id).unwrap();
    fake.clear_requests();

    let e = muster.get_draft(&filed.draft_id).await.unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
    let outcome = muster
        .decide(&filed.draft_id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert_eq!(outcome, DecideOutcome::NotFound);
    // What muster wrote was Go's plain text, and each 404 cost one look at the collection.
    let answered: Vec<_> = fake
        .requests()
        .into_iter()
        .map(|r| (r.method, r.path, r.status))
        .collect();
    let draft_path = format!("/api/plugin/drafts/{}", filed.draft_id);
    assert_eq!(
        answered,
        vec![
            ("GET".to_owned(), draft_path.clone(), 404),
            ("GET".to_owned(), "/api/plugin/drafts".to_owned(), 200),
            ("POST".to_owned(), format!("{draft_path}/decide"), 404),
            ("GET".to_owned(), "/api/plugin/drafts".to_owned(), 200),
        ]
    );
}

#[tokio::test]
async fn an_html_401_is_something_in_front_of_muster_and_costs_no_sign_in() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.list_drafts(None).await.unwrap();
    fake.inject("GET", "/api/plugin/drafts", 1, FaultAction::FrontPage(401));
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::NotMuster { status: 401 }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot reach muster's API: something in front of muster answered (401; a proxy or login page)"
    );
    assert_eq!(fake.count_requests("POST", "/login"), 1);
    // Nothing was lost: the session still works.
    muster.list_drafts(None).await.unwrap();
}

#[tokio::test]
async fn a_redirect_is_something_in_front_of_muster() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.list_drafts(None).await.unwrap();
    fake.inject("GET", "/api/plugin/drafts", 1, FaultAction::FrontPage(302));
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::NotMuster { status: 302 }), "{e:?}");
    assert!(
        e.to_string().contains("something in front of muster"),
        "{e}"
    );
    assert_eq!(fake.count_requests("POST", "/login"), 1);
}

#[tokio::test]
async fn muster_without_an_operator_password_says_which_setting_is_missing() {
    let fake = countersign_fakes::muster::FakeMuster::start(MusterConfig {
        password: "short".into(),
        ..MusterConfig::default()
    })
    .await
    .unwrap();
    let e = MusterClient::new(fake.url().parse().unwrap(), "short".into())
        .unwrap()
        .list_drafts(None)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::NotConfigured), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot sign in to muster: its web sign-in is not configured (MUSTER_UI_PASSWORD)"
    );
    // An API route says the same with a JSON 503 even to a caller holding a cookie.
    let kept = Arc::new(MemorySessionKeeper::default());
    kept.save("123.abc");
    let e = MusterClient::with_session_keeper(
        fake.url().parse().unwrap(),
        "short".into(),
        DEFAULT_REQUEST_TIMEOUT,
        kept,
    )
    .unwrap()
    .list_drafts(None)
    .await
    .unwrap_err();
    assert!(matches!(e, Error::NotConfigured), "{e:?}");
    assert_eq!(fake.count_requests("POST", "/login"), 1);
}

#[tokio::test]
async fn every_call_asks_for_json() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.list_drafts(None).await.unwrap();
    muster.list_messages(None).await.unwrap();
    let log = fake.requests();
    assert!(
        log.iter()
            .all(|r| r.accept.as_deref() == Some("application/json")),
        "{log:?}"
    );
}

#[tokio::test]
async fn a_kept_cookie_is_used_without_signing_in_and_a_new_one_is_kept() {
    let fake = fake().await;
    let kept: Arc<MemorySessionKeeper> = Arc::default();
    let first = MusterClient::with_session_keeper(
        fake.url().parse().unwrap(),
        fake.password().to_owned(),
        DEFAULT_REQUEST_TIMEOUT,
        kept.clone(),
    )
    .unwrap();
    first.list_drafts(None).await.unwrap();
    assert!(kept.load().is_some());
    // A second client (another process) with the same keeper signs in no more.
    let second = MusterClient::with_session_keeper(
        fake.url().parse().unwrap(),
        fake.password().to_owned(),
        DEFAULT_REQUEST_TIMEOUT,
        kept.clone(),
    )
    .unwrap();
    second.list_drafts(None).await.unwrap();
    assert_eq!(fake.sign_ins(), 1);
    // When muster forgets it, one client signs in and the other takes the new cookie from
    // the keeper instead of signing in too.
    fake.expire_sessions();
    second.list_drafts(None).await.unwrap();
    first.list_drafts(None).await.unwrap();
    assert_eq!(fake.sign_ins(), 2);
}

#[tokio::test]
async fn sign_ins_are_paced_by_the_keeper_before_muster_has_to_refuse_them() {
    let fake = fake().await;
    let kept: Arc<MemorySessionKeeper> = Arc::default();
    for _ in 0..countersign_muster::SIGN_INS_PER_WINDOW {
        kept.reserve_sign_in(std::time::SystemTime::now()).unwrap();
    }
    let muster = MusterClient::with_session_keeper(
        fake.url().parse().unwrap(),
        fake.password().to_owned(),
        DEFAULT_REQUEST_TIMEOUT,
        kept,
    )
    .unwrap();
    let e = muster.list_drafts(None).await.unwrap_err();
    match e {
        Error::RateLimited {
            retry_after: Some(wait),
        } => assert!(wait <= Duration::from_secs(60)),
        other => panic!("{other:?}"),
    }
    assert_eq!(fake.count_requests("POST", "/login"), 0);
}

#[tokio::test]
async fn a_429_from_muster_holds_back_every_client_of_the_keeper() {
    let fake = fake().await;
    for _ in 0..10 {
        let _ = MusterClient::new(fake.url().parse().unwrap(), "wrong-password!".into())
            .unwrap()
            .login()
            .await;
    }
    let kept: Arc<MemorySessionKeeper> = Arc::default();
    let make = || {
        MusterClient::with_session_keeper(
            fake.url().parse().unwrap(),
            fake.password().to_owned(),
            DEFAULT_REQUEST_TIMEOUT,
            kept.clone(),
        )
        .unwrap()
    };
    let e = make().list_drafts(None).await.unwrap_err();
    assert!(
        matches!(
            e,
            Error::RateLimited {
                retry_after: Some(_)
            }
        ),
        "{e:?}"
    );
    let before = fake.count_requests("POST", "/login");
    let e = make().list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::RateLimited { .. }), "{e:?}");
    assert_eq!(fake.count_requests("POST", "/login"), before);
}
