//! Sign-in: the cookie, wrong passwords, muster's rate limit, and the one silent re-login.

use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_muster::{DraftState, Error, MusterClient};

use crate::{client, fake, file_reply};

#[tokio::test]
async fn the_first_call_signs_in_and_later_calls_reuse_the_cookie() {
    let fake = fake().await;
    file_reply(&fake, false);
    let muster = client(&fake);
    let drafts = muster
        .list_drafts(Some(DraftState::Pending))
        .await
        .unwrap()
        .records;
    assert_eq!(drafts.len(), 1);
    assert_eq!(drafts[0].text, "Hi Ana, yes: the 10th it is.");
    muster.list_drafts(None).await.unwrap();
    muster.list_messages(None).await.unwrap();
    assert_eq!(fake.count_requests("POST", "/login"), 1);
    let owner_calls: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/api/"))
        .collect();
    assert_eq!(owner_calls.len(), 3);
    assert!(owner_calls
        .iter()
        .all(|r| r.had_session_cookie && r.status == 200));
}

#[tokio::test]
async fn a_wrong_password_is_reported_as_such_and_not_retried_on_every_call() {
    let fake = fake().await;
    let muster = MusterClient::new(fake.url().parse().unwrap(), "not-it".into()).unwrap();
    let first = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(first, Error::WrongPassword), "{first:?}");
    assert_eq!(
        first.to_string(),
        "cannot sign in to muster: wrong password"
    );
    // A wrong password stays wrong: further calls must not eat muster's login limit.
    let second = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(second, Error::SignInAgain), "{second:?}");
    assert_eq!(fake.count_requests("POST", "/login"), 1);
    assert!(muster.needs_sign_in().await);
}

#[tokio::test]
async fn an_explicit_login_with_the_right_password_works_and_a_wrong_one_says_so() {
    let fake = fake().await;
    client(&fake).login().await.unwrap();
    let wrong = MusterClient::new(fake.url().parse().unwrap(), "nope".into()).unwrap();
    assert!(matches!(wrong.login().await, Err(Error::WrongPassword)));
}

#[tokio::test]
async fn the_eleventh_login_within_a_minute_is_rate_limited() {
    let fake = fake().await;
    for _ in 0..10 {
        client(&fake).login().await.unwrap();
    }
    let e = client(&fake).login().await.unwrap_err();
    assert!(matches!(e, Error::RateLimited { .. }), "{e:?}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn an_instance_without_a_password_is_reported_as_not_configured() {
    let fake = FakeMuster::start(MusterConfig {
        password: String::new(),
        ..MusterConfig::default()
    })
    .await
    .unwrap();
    let muster = MusterClient::new(fake.url().parse().unwrap(), "anything".into()).unwrap();
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::NotConfigured), "{e:?}");
}

#[tokio::test]
async fn an_expired_cookie_costs_exactly_one_silent_re_login() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    muster.list_drafts(None).await.unwrap();
    fake.expire_sessions();
    let draft = muster.get_draft(&filed.draft_id).await.unwrap();
    assert_eq!(draft.id, filed.draft_id);
    assert_eq!(fake.count_requests("POST", "/login"), 2);
    let path = format!("/api/plugin/drafts/{}", filed.draft_id);
    let statuses: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|r| r.path == path)
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, vec![401, 200]);
    // And the renewed cookie keeps working without another login.
    muster.list_drafts(None).await.unwrap();
    assert_eq!(fake.count_requests("POST", "/login"), 2);
}

#[tokio::test]
async fn concurrent_calls_refused_together_share_one_re_login() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    fake.expire_sessions();
    let (a, b, c) = tokio::join!(
        muster.list_drafts(None),
        muster.list_messages(None),
        muster.list_routes("m-1")
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    assert_eq!(fake.count_requests("POST", "/login"), 2);
}

#[tokio::test]
async fn a_password_changed_on_muster_ends_in_sign_in_again_after_one_try() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    fake.expire_sessions();
    // Every sign-in is refused from now on, as if the owner changed the password on muster.
    fake.fail_next("POST", "/login", 100, 401);
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::SignInAgain), "{e:?}");
    assert_eq!(e.to_string(), "sign in to muster again");
    let logins_after_first = fake.count_requests("POST", "/login");
    assert_eq!(logins_after_first, 2);
    // Later calls answer at once, without hammering /login.
    assert!(matches!(
        muster.list_drafts(None).await,
        Err(Error::SignInAgain)
    ));
    assert_eq!(fake.count_requests("POST", "/login"), logins_after_first);
    // Signing in explicitly (once the password works again) recovers.
    fake.clear_faults();
    muster.login().await.unwrap();
    muster.list_drafts(None).await.unwrap();
}

#[tokio::test]
async fn a_call_refused_again_right_after_the_re_login_is_sign_in_again() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    fake.fail_next("GET", "/api/plugin/drafts", 2, 401);
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(matches!(e, Error::SignInAgain), "{e:?}");
    assert_eq!(fake.count_requests("POST", "/login"), 2);
    assert_eq!(fake.count_requests("GET", "/api/plugin/drafts"), 2);
}

#[tokio::test]
async fn neither_the_password_nor_the_cookie_appears_in_errors_or_debug_output() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    let shown = format!("{muster:?}");
    assert!(!shown.contains(fake.password()), "{shown}");
    fake.set_online(false);
    let e = muster.list_drafts(None).await.unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(fake.password()), "{shown}");
    assert!(!shown.contains("muster_session"), "{shown}");
}

#[tokio::test]
async fn a_new_password_replaces_the_old_one_only_when_muster_accepts_it() {
    let fake = fake().await;
    let muster = MusterClient::new(fake.url().parse().unwrap(), "old-password".into()).unwrap();
    assert!(muster.list_drafts(None).await.is_err());
    assert!(muster.needs_sign_in().await);
    let e = muster.sign_in_with("still-wrong".into()).await.unwrap_err();
    assert!(matches!(e, Error::WrongPassword), "{e:?}");
    assert!(muster.needs_sign_in().await);
    muster
        .sign_in_with(fake.password().to_owned())
        .await
        .unwrap();
    assert!(!muster.needs_sign_in().await);
    // The accepted password is the stored one now: an expired session renews with it.
    fake.expire_sessions();
    muster.clone().list_drafts(None).await.unwrap();
}

/// Issue 36: a proxy's 503 page on `POST /login` (muster restarting behind nginx) is not
/// muster saying it has no password: the sign-in is tried again and works once muster answers,
/// without the owner typing the password again.
#[tokio::test]
async fn a_proxys_503_on_sign_in_passes_and_the_next_call_signs_in() {
    let fake = fake().await;
    let muster = client(&fake);
    fake.inject(
        "POST",
        "/login",
        1,
        countersign_fakes::muster::FaultAction::FrontPage(503),
    );
    let first = muster.list_drafts(None).await.unwrap_err();
    assert!(
        matches!(first, Error::Server { status: 503, .. }),
        "{first:?}"
    );
    assert!(first.is_retryable(), "{first:?}");
    assert!(!muster.needs_sign_in().await);
    muster.list_drafts(None).await.unwrap();
    assert_eq!(fake.count_requests("POST", "/login"), 2);
}
