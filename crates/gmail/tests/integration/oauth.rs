//! The OAuth flow through yup-oauth2, with the test playing the browser.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_gmail::oauth::{
    can_send, connect, Browser, ClientSecret, ConnectOptions, OAuthTokenSource, OpenUrl,
    CANNOT_SEND_SENTENCE, GMAIL_MODIFY, GMAIL_READONLY, WEB_CLIENT_SENTENCE,
};
use countersign_gmail::{Error, GmailClient, TokenStorageKind, TokenStore};

use crate::support::{config, fake, fake_with, quick_retries};

/// A browser that follows the consent page's redirect back to the loopback server.
fn test_browser(opened: Arc<AtomicUsize>) -> OpenUrl {
    Arc::new(move |url: String| {
        let opened = opened.clone();
        Box::pin(async move {
            opened.fetch_add(1, Ordering::SeqCst);
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let consent = http.get(&url).send().await.map_err(|e| e.to_string())?;
            assert_eq!(consent.status(), 302, "the fake auto-approves");
            let location = consent
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or("no redirect")?
                // yup-oauth2 listens on 127.0.0.1 and names it localhost; stay on IPv4.
                .replacen("://localhost:", "://127.0.0.1:", 1);
            let back = http
                .get(&location)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            assert!(back.status().is_success(), "loopback took the code");
            Ok(())
        })
    })
}

fn secret(fake: &FakeGmail) -> ClientSecret {
    ClientSecret::from_json(&fake.client_secret_json().to_string()).unwrap()
}

fn options(fake: &FakeGmail, opened: Arc<AtomicUsize>) -> ConnectOptions {
    ConnectOptions {
        browser: Browser::Custom(test_browser(opened)),
        consent_timeout: Duration::from_secs(20),
        tokeninfo_url: fake.tokeninfo_url(),
    }
}

fn oauth_client(fake: &FakeGmail, store: &TokenStore, account: &str) -> GmailClient {
    let tokens = OAuthTokenSource::new(secret(fake), store.clone(), account).unwrap();
    GmailClient::new(config(fake, quick_retries()), Arc::new(tokens)).unwrap()
}

#[tokio::test]
async fn connecting_runs_consent_stores_tokens_and_reports_the_granted_scopes() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let opened = Arc::new(AtomicUsize::new(0));

    let connection = connect(
        &secret(&fake),
        &store,
        "acct-1",
        options(&fake, opened.clone()),
    )
    .await
    .unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(connection.granted.scopes, vec![GMAIL_MODIFY]);
    assert_eq!(connection.storage_kind, TokenStorageKind::File);
    assert!(can_send(&connection.granted.scopes).is_ok());
    let stored = store.load("acct-1").unwrap().expect("tokens stored");
    assert!(stored.refresh_token.is_some());

    // A later process uses the stored tokens without any browser.
    let gmail = oauth_client(&fake, &store, "acct-1");
    assert_eq!(
        gmail.profile().await.unwrap().email_address,
        "owner@example.com"
    );
    assert_eq!(fake.request_count("oauth.authorize"), 1);
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_without_the_user() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(&secret(&fake), &store, "a", options(&fake, Arc::default()))
        .await
        .unwrap();
    let before = store.load("a").unwrap().unwrap();
    let gmail = oauth_client(&fake, &store, "a");
    gmail.profile().await.unwrap();

    fake.expire_access_tokens();
    gmail.profile().await.unwrap();
    let after = store.load("a").unwrap().unwrap();
    assert_ne!(
        after.access_token, before.access_token,
        "the new token is stored"
    );
    assert_eq!(after.refresh_token, before.refresh_token);
    assert_eq!(fake.request_count("oauth.authorize"), 1, "no new consent");
}

#[tokio::test]
async fn fewer_scopes_granted_than_asked_gives_the_refusal_sentence() {
    let fake = fake_with(GmailConfig {
        grant_scopes: Some(vec![GMAIL_READONLY.to_owned()]),
        ..GmailConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let connection = connect(&secret(&fake), &store, "ro", options(&fake, Arc::default()))
        .await
        .unwrap();
    assert_eq!(connection.granted.scopes, vec![GMAIL_READONLY]);
    let refusal = can_send(&connection.granted.scopes).unwrap_err();
    assert_eq!(refusal.to_string(), CANNOT_SEND_SENTENCE);
    // The account still syncs.
    assert!(oauth_client(&fake, &store, "ro")
        .list_drafts()
        .await
        .is_ok());
}

#[tokio::test]
async fn a_revoked_refresh_token_says_sign_in_again_without_opening_a_browser() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let opened = Arc::new(AtomicUsize::new(0));
    connect(&secret(&fake), &store, "r", options(&fake, opened.clone()))
        .await
        .unwrap();
    let gmail = oauth_client(&fake, &store, "r");
    gmail.profile().await.unwrap();

    fake.revoke_refresh_tokens();
    let err = gmail.profile().await.unwrap_err();
    assert!(matches!(err, Error::GrantEnded), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("Reconnect needed: Google ended this sign-in"),
        "{err}"
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1, "only the first consent");
    assert_eq!(fake.request_count("oauth.authorize"), 1);
    // Asking again does not loop either.
    assert!(matches!(gmail.list_drafts().await, Err(Error::GrantEnded)));
}

#[tokio::test]
async fn a_deleted_or_reset_oauth_client_asks_for_a_new_client_not_a_sign_in() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let opened = Arc::new(AtomicUsize::new(0));
    connect(&secret(&fake), &store, "c", options(&fake, opened.clone()))
        .await
        .unwrap();
    let gmail = oauth_client(&fake, &store, "c");
    gmail.profile().await.unwrap();

    // Deleted in Cloud Console: 401 {"error":"deleted_client"}.
    fake.set_client_deleted(true);
    fake.expire_access_tokens();
    let err = gmail.profile().await.unwrap_err();
    assert!(matches!(err, Error::ClientGone), "{err:?}");
    assert!(
        err.to_string().starts_with("Reconnect: new client needed"),
        "{err}"
    );
    assert!(err.to_string().contains("client_secret.json"), "{err}");
    assert_eq!(
        err.reconnect_reason(),
        Some(countersign_gmail::CLIENT_GONE_SENTENCE)
    );

    // Its secret reset: Google answers the old secret 401 invalid_client.
    fake.set_client_deleted(false);
    fake.fail_next(
        "oauth.token",
        1,
        countersign_fakes::gmail::Failure::status(401).reason("invalid_client"),
    );
    let err = gmail.profile().await.unwrap_err();
    assert!(matches!(err, Error::ClientGone), "{err:?}");
    assert_eq!(
        opened.load(Ordering::SeqCst),
        1,
        "no browser opened by itself"
    );
}

#[tokio::test]
async fn an_account_without_tokens_says_sign_in_again() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let gmail = oauth_client(&fake, &TokenStore::file(dir.path()), "never-connected");
    assert!(matches!(gmail.profile().await, Err(Error::SignInAgain)));
}

#[tokio::test]
async fn consent_that_never_comes_back_times_out_with_a_clear_message() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let ignore: OpenUrl = Arc::new(|_url| Box::pin(async { Ok(()) }));
    let err = connect(
        &secret(&fake),
        &store,
        "t",
        ConnectOptions {
            browser: Browser::Custom(ignore),
            consent_timeout: Duration::from_millis(300),
            tokeninfo_url: fake.tokeninfo_url(),
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::ConsentTimedOut { .. }), "{err:?}");
    assert!(err.to_string().contains("browser"), "{err}");
    assert_eq!(store.load("t").unwrap(), None);
}

#[tokio::test]
async fn removing_the_account_tokens_ends_access() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(
        &secret(&fake),
        &store,
        "gone",
        options(&fake, Arc::default()),
    )
    .await
    .unwrap();
    store.remove("gone").unwrap();
    let gmail = oauth_client(&fake, &store, "gone");
    assert!(matches!(gmail.profile().await, Err(Error::SignInAgain)));
}

#[tokio::test]
async fn reconnecting_an_account_gets_a_fresh_refresh_token() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(
        &secret(&fake),
        &store,
        "again",
        options(&fake, Arc::default()),
    )
    .await
    .unwrap();
    let first = store.load("again").unwrap().unwrap().refresh_token;
    fake.revoke_refresh_tokens();
    connect(
        &secret(&fake),
        &store,
        "again",
        options(&fake, Arc::default()),
    )
    .await
    .unwrap();
    let second = store.load("again").unwrap().unwrap().refresh_token;
    assert!(second.is_some());
    assert_ne!(first, second);
    let gmail = oauth_client(&fake, &store, "again");
    fake.expire_access_tokens();
    gmail.profile().await.expect("the new refresh token works");
}

/// A reply the fake will send.
fn sendable() -> Vec<u8> {
    b"From: owner@example.com\r\nTo: a@example.org\r\nSubject: x\r\n\r\nx\r\n".to_vec()
}

#[tokio::test]
async fn a_lost_token_refresh_means_the_send_never_left() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(&secret(&fake), &store, "t", options(&fake, Arc::default()))
        .await
        .unwrap();
    let filed = fake.file_draft(&sendable(), None);
    // The stored access token has run out, and the refresh answer is lost on the way back.
    let mut tokens = store.load("t").unwrap().unwrap();
    tokens.expires_at_unix = Some(0);
    store.save("t", &tokens).unwrap();
    fake.drop_after_commit("oauth.token", 1);
    let gmail = oauth_client(&fake, &store, "t");
    let err = gmail
        .send_draft(&filed.id, &sendable(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Transport {
                request_sent: false
            }
        ),
        "{err:?}"
    );
    assert_eq!(fake.request_count("drafts.send"), 0);
}

#[tokio::test]
async fn granted_scopes_are_read_again_after_the_token_expired() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(&secret(&fake), &store, "s", options(&fake, Arc::default()))
        .await
        .unwrap();
    let gmail = oauth_client(&fake, &store, "s");
    gmail.profile().await.unwrap();
    fake.expire_access_tokens();
    let granted = gmail.granted_scopes().await.unwrap();
    assert_eq!(granted.scopes, vec![GMAIL_MODIFY]);
}

/// A browser that follows the consent page's redirect after `tamper` rewrote its query.
fn rewriting_browser(tamper: fn(&mut Vec<(String, String)>)) -> OpenUrl {
    Arc::new(move |url: String| {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let consent = http.get(&url).send().await.map_err(|e| e.to_string())?;
            let location = consent.headers()["location"].to_str().unwrap().to_owned();
            let mut back = url::Url::parse(&location).unwrap();
            let mut pairs: Vec<(String, String)> = back.query_pairs().into_owned().collect();
            tamper(&mut pairs);
            back.query_pairs_mut().clear().extend_pairs(pairs);
            http.get(back).send().await.map_err(|e| e.to_string())?;
            Ok(())
        })
    })
}

/// A consent that is never finished unless the redirect ends it: a broken error path would
/// wait the whole default five minutes and then fail as `ConsentTimedOut`.
fn patient(fake: &FakeGmail, browser: OpenUrl) -> ConnectOptions {
    ConnectOptions {
        browser: Browser::Custom(browser),
        consent_timeout: countersign_gmail::oauth::DEFAULT_CONSENT_TIMEOUT,
        tokeninfo_url: fake.tokeninfo_url(),
    }
}

#[tokio::test]
async fn cancel_on_googles_page_ends_the_connect_at_once_with_the_sentence() {
    let fake = fake().await;
    fake.set_consent_error(Some("access_denied"));
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let err = connect(
        &secret(&fake),
        &store,
        "c",
        patient(&fake, test_browser(Arc::default())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::ConsentDeclined), "{err:?}");
    assert_eq!(
        err.to_string(),
        "You declined access on Google's page; nothing was connected"
    );
    assert_eq!(store.load("c").unwrap(), None);
    assert_eq!(fake.request_count("oauth.token"), 0);
}

#[tokio::test]
async fn another_error_on_googles_page_is_named() {
    let fake = fake().await;
    fake.set_consent_error(Some("admin_policy_enforced"));
    let dir = tempfile::tempdir().unwrap();
    let err = connect(
        &secret(&fake),
        &TokenStore::file(dir.path()),
        "c",
        patient(&fake, test_browser(Arc::default())),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("admin_policy_enforced"), "{text}");
    assert!(text.contains("administrator"), "{text}");
    assert!(text.ends_with("nothing was connected"), "{text}");
}

#[tokio::test]
async fn a_redirect_with_another_state_is_refused_and_no_code_is_exchanged() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    let forge = rewriting_browser(|pairs| {
        for (k, v) in pairs.iter_mut() {
            if k == "state" {
                *v = "forged".into();
            }
        }
    });
    let err = connect(&secret(&fake), &store, "s", patient(&fake, forge))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConsentStateMismatch), "{err:?}");
    assert_eq!(fake.request_count("oauth.token"), 0);
    assert_eq!(store.load("s").unwrap(), None);

    let drop_state = rewriting_browser(|pairs| pairs.retain(|(k, _)| k != "state"));
    let err = connect(&secret(&fake), &store, "s", patient(&fake, drop_state))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConsentStateMismatch), "{err:?}");
}

#[tokio::test]
async fn the_sign_in_asks_with_state_and_an_s256_challenge_for_a_127_0_0_1_redirect() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    connect(
        &secret(&fake),
        &TokenStore::file(dir.path()),
        "p",
        options(&fake, Arc::default()),
    )
    .await
    .unwrap();
    let authorize = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "oauth.authorize")
        .unwrap();
    let q: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(authorize.query.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["code_challenge"].len(), 43, "base64url of a SHA-256");
    assert!(q["state"].len() >= 16, "a random state: {}", q["state"]);
    let redirect = url::Url::parse(&q["redirect_uri"]).unwrap();
    assert_eq!(redirect.host_str(), Some("127.0.0.1"));
    assert_eq!(redirect.path(), "/");
    // The fake checks the verifier against that challenge: the exchange went through.
    assert_eq!(fake.request_count("oauth.token"), 1);
}

#[tokio::test]
async fn a_web_application_client_is_refused_with_the_desktop_app_sentence() {
    let fake = fake().await;
    let mut json = fake.client_secret_json();
    let web = json["installed"].take();
    let json = serde_json::json!({ "web": web });
    let err = ClientSecret::from_json(&json.to_string()).unwrap_err();
    assert!(err.to_string().contains(WEB_CLIENT_SENTENCE), "{err}");
    assert!(err.to_string().contains("\"Desktop app\""), "{err}");
}

#[tokio::test]
async fn a_refresh_token_google_let_expire_says_reconnect_needed_with_the_causes() {
    let fake = fake().await;
    let dir = tempfile::tempdir().unwrap();
    let store = TokenStore::file(dir.path());
    connect(&secret(&fake), &store, "x", options(&fake, Arc::default()))
        .await
        .unwrap();
    let gmail = oauth_client(&fake, &store, "x");
    gmail.profile().await.unwrap();
    // A "Testing" client's refresh tokens last 7 days; here they have run out.
    fake.set_refresh_token_lifetime(Some(Duration::ZERO));
    fake.expire_access_tokens();
    let err = gmail.profile().await.unwrap_err();
    assert!(matches!(err, Error::GrantEnded), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("\"Testing\""), "{text}");
    assert!(text.contains("7 days"), "{text}");
    assert!(!text.contains("1//fake-refresh"), "no token in the message");
}
