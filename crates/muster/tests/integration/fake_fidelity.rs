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

#[tokio::test]
async fn the_cookie_is_musters_issued_expiry_and_hex_signature() {
    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let signed_in = post_login(&fake.url(), "password=demo-password").await;
    let set_cookie = signed_in.headers()["set-cookie"].to_str().unwrap();
    let value = set_cookie
        .split(';')
        .next()
        .unwrap()
        .strip_prefix("muster_session=")
        .unwrap();
    // `internal/auth/auth.go`, SignSession: "<issuedUnix>|<expiryUnix>|<hex HMAC-SHA256>".
    let fields: Vec<&str> = value.split('|').collect();
    assert_eq!(fields.len(), 3, "{value}");
    let issued: i64 = fields[0].parse().unwrap();
    let expiry: i64 = fields[1].parse().unwrap();
    assert_eq!(expiry - issued, 30 * 24 * 3600);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((issued - now).abs() < 60);
    assert_eq!(fields[2].len(), 64);
    assert!(fields[2]
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[tokio::test]
async fn the_operator_password_is_measured_in_bytes_as_go_does() {
    // Seven "é" are 14 bytes: long enough for muster's 12, though only 7 characters.
    let long_in_bytes = FakeMuster::start(MusterConfig {
        password: "ééééééé".to_owned(),
        ..MusterConfig::default()
    })
    .await
    .unwrap();
    let answer = post_login(
        &long_in_bytes.url(),
        "password=%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9",
    )
    .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    // Five are 10 bytes: too short, so nobody signs in.
    let short = FakeMuster::start(MusterConfig {
        password: "ééééé".to_owned(),
        ..MusterConfig::default()
    })
    .await
    .unwrap();
    let answer = post_login(&short.url(), "password=%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9").await;
    assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn a_page_load_without_a_session_is_sent_to_the_login_page_and_an_api_call_gets_401() {
    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let url = format!("{}/api/plugin/drafts?state=all", fake.url());
    let page_load = http()
        .get(&url)
        .header("accept", "text/html,application/xhtml+xml")
        .header("sec-fetch-dest", "document")
        .send()
        .await
        .unwrap();
    assert_eq!(page_load.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        page_load.headers()["location"],
        "/login?next=%2Fapi%2Fplugin%2Fdrafts%3Fstate%3Dall"
    );
    // A fetch that asks for HTML but says it is not a document, and htmx, get the JSON 401.
    for (name, value) in [("sec-fetch-dest", "empty"), ("hx-request", "true")] {
        let call = http()
            .get(&url)
            .header("accept", "text/html")
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(call.status(), StatusCode::UNAUTHORIZED, "{name}");
        assert_eq!(
            call.json::<serde_json::Value>().await.unwrap(),
            serde_json::json!({ "error": "not signed in" })
        );
    }
}

#[tokio::test]
async fn go_times_vary_in_width_and_zone_and_still_round_trip_through_a_decision() {
    use countersign_fakes::muster::WireStyle;
    use countersign_muster::{DecideOutcome, Decision, DraftState};

    let fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    fake.set_wire_style(WireStyle {
        go_times: true,
        ..WireStyle::default()
    });
    let filed = crate::file_reply(&fake, false);
    let stamp = fake.draft(&filed.draft_id).unwrap()["updatedAt"]
        .as_str()
        .unwrap()
        .to_owned();
    // Go's RFC3339Nano: no trailing zeros in the fraction, a numeric zone.
    assert!(stamp.ends_with("+05:30"), "{stamp}");
    let seconds_end = "2026-01-01T00:00:00".len();
    let fraction = &stamp[seconds_end..stamp.len() - "+05:30".len()];
    assert!(
        fraction.is_empty() || (fraction.starts_with('.') && !fraction.ends_with('0')),
        "{stamp}"
    );

    let muster = crate::client(&fake);
    let draft = muster.get_draft(&filed.draft_id).await.unwrap();
    assert_eq!(
        draft.updated_at, stamp,
        "the stamp is kept as muster wrote it"
    );
    let outcome = muster
        .decide(&filed.draft_id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    let DecideOutcome::Queued { draft, .. } = outcome else {
        panic!("not queued: {outcome:?}");
    };
    assert_eq!(draft.state, DraftState::Approved);
}
