//! The fake muster answers sign-in as muster's `internal/api/login.go` does: HTML pages with
//! `Cache-Control: no-store`, one fixed window of 10 attempts for all callers, a signed
//! 30-day cookie that outlives a restart, `POST /logout`, and Go's plain-text 404.

use countersign_fakes::muster::{FakeMuster, MusterConfig};
use reqwest::redirect::Policy;
use reqwest::StatusCode;

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

async fn post_login(url: &str, body: &'static str) -> reqwest::Response {
    http()
        .post(format!("{url}/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

fn is_login_page(response: &reqwest::Response) -> bool {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    header("content-type").starts_with("text/html") && header("cache-control") == "no-store"
}

#[tokio::test]
async fn every_refused_sign_in_is_an_uncached_html_page_with_musters_status() {
    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let url = fake.url();
    let wrong = post_login(&url, "password=not-the-password").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(is_login_page(&wrong));
    assert!(wrong
        .text()
        .await
        .unwrap()
        .contains("That password is not right."));
    let unreadable = post_login(&url, "password=%zz").await;
    assert_eq!(unreadable.status(), StatusCode::BAD_REQUEST);
    assert!(is_login_page(&unreadable));
    // Ten attempts in the window (the unreadable form was not counted), then 429 for everyone.
    for _ in 0..9 {
        post_login(&url, "password=not-the-password").await;
    }
    let limited = post_login(&url, "password=demo-password").await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(is_login_page(&limited));

    let short = FakeMuster::start(MusterConfig {
        password: "eleven-char".into(),
        ..MusterConfig::default()
    })
    .await
    .unwrap();
    let refused = post_login(&short.url(), "password=eleven-char").await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(is_login_page(&refused));
}

#[tokio::test]
async fn the_cookie_lasts_thirty_days_and_outlives_a_restart_of_muster() {
    let config = MusterConfig::default();
    let fake = FakeMuster::start(config.clone()).await.unwrap();
    let signed_in = post_login(&fake.url(), "password=demo-password").await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    let set_cookie = signed_in.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(set_cookie.contains("Max-Age=2592000"), "{set_cookie}");
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"));
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    // Another start with the same password stands for muster after a restart.
    let restarted = FakeMuster::start(config).await.unwrap();
    let drafts = http()
        .get(format!("{}/api/plugin/drafts", restarted.url()))
        .header("cookie", &cookie)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(drafts.status(), StatusCode::OK);
    assert_eq!(restarted.sign_ins(), 0);
}

#[tokio::test]
async fn logout_clears_the_cookie_and_sends_the_browser_to_the_login_page() {
    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let out = http()
        .post(format!("{}/logout", fake.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(out.headers()["location"], "/login");
    let cleared = out.headers()["set-cookie"].to_str().unwrap();
    assert!(cleared.starts_with("muster_session=;") && cleared.contains("Max-Age=0"));
}

#[tokio::test]
async fn an_unknown_route_is_gos_plain_text_404() {
    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let answer = http()
        .get(format!("{}/api/nothing-here", fake.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    assert!(answer.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    assert_eq!(answer.text().await.unwrap(), "404 page not found\n");
}
