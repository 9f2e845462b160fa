//! Malformed and incomplete answers give a clear error naming the endpoint and the field,
//! never a panic. Served by tiny axum servers that sign in like muster and then misbehave.

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use countersign_muster::{Decision, Error, MusterClient, RouteState};

/// A server whose `/login` works and whose `path` answers `status` with `body` as JSON.
async fn serve(path: &'static str, status: StatusCode, body: &'static str) -> MusterClient {
    serve_as(path, status, "application/json", body).await.0
}

/// [`serve`] with the body's content type, and how many times `/login` was called.
async fn serve_as(
    path: &'static str,
    status: StatusCode,
    content_type: &'static str,
    body: &'static str,
) -> (MusterClient, Arc<AtomicUsize>) {
    let logins = Arc::new(AtomicUsize::new(0));
    let counted = logins.clone();
    let answer = move || async move { (status, [(header::CONTENT_TYPE, content_type)], body) };
    let app = Router::new()
        .route(
            "/login",
            post(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async {
                    (
                        StatusCode::SEE_OTHER,
                        [
                            (header::LOCATION, "/"),
                            (
                                header::SET_COOKIE,
                                "muster_session=s1; HttpOnly; SameSite=Lax; Path=/",
                            ),
                        ],
                    )
                        .into_response()
                }
            }),
        )
        .route(path, get(answer).post(answer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = MusterClient::new(format!("http://{addr}").parse().unwrap(), "pw".into()).unwrap();
    (client, logins)
}

fn problem(e: Error) -> (String, String) {
    match e {
        Error::BadResponse { endpoint, problem } => (endpoint, problem),
        other => panic!("expected BadResponse, got {other:?}"),
    }
}

#[tokio::test]
async fn a_draft_list_that_is_not_json_is_a_bad_response_naming_the_endpoint() {
    let muster = serve("/api/plugin/drafts", StatusCode::OK, "<html>oops</html>").await;
    let e = muster.list_drafts(None).await.unwrap_err();
    assert!(e
        .to_string()
        .starts_with("cannot read muster's answer to GET /api/plugin/drafts"));
    let (endpoint, _) = problem(e);
    assert_eq!(endpoint, "GET /api/plugin/drafts");
}

#[tokio::test]
async fn go_s_null_for_an_empty_list_reads_as_empty() {
    // encoding/json writes a nil slice as `null`, bare or under the list's field.
    for body in ["null", r#"{"drafts":null}"#] {
        let muster = serve("/api/plugin/drafts", StatusCode::OK, body).await;
        assert_eq!(
            muster.list_drafts(None).await.unwrap().records,
            vec![],
            "{body}"
        );
    }
    let muster = serve(
        "/api/plugin/messages",
        StatusCode::OK,
        r#"{"messages":[{"id":3,"plugin":"p","from":"a@b","subject":"s","state":"relayed",
        "routes":null}]}"#,
    )
    .await;
    let messages = muster.list_messages(None).await.unwrap().records;
    assert_eq!(messages.len(), 1);
    assert!(messages[0].routes.is_empty());
}

#[tokio::test]
async fn a_draft_without_updated_at_is_returned_unreadable_naming_the_missing_field() {
    let muster = serve(
        "/api/plugin/drafts",
        StatusCode::OK,
        r#"{"drafts":[{"id":"1","plugin":"p","routeId":"2","session":"s","messageId":"m-1",
        "state":"pending","checkState":"none","text":"t",
        "inReplyTo":{"from":"a@b","subject":"s"},"redraftNumber":0,"createdAt":"x"}]}"#,
    )
    .await;
    let listed = muster.list_drafts(None).await.unwrap();
    assert_eq!(listed.records, vec![]);
    assert_eq!(listed.unreadable.len(), 1);
    assert_eq!(listed.unreadable[0].id.as_deref(), Some("1"));
    assert_eq!(
        listed.unreadable[0].reason, "missing field `updatedAt`",
        "{:?}",
        listed.unreadable[0]
    );
}

#[tokio::test]
async fn a_truncated_answer_is_a_bad_response() {
    let muster = serve(
        "/api/plugin/routes",
        StatusCode::OK,
        r#"{"routes":[{"id":"7","mess"#,
    )
    .await;
    let (endpoint, problem) = problem(muster.list_routes("m-1").await.unwrap_err());
    assert_eq!(endpoint, "GET /api/plugin/routes");
    assert!(problem.contains("EOF"), "{problem}");
}

#[tokio::test]
async fn a_route_in_an_unknown_state_is_kept_as_muster_wrote_it() {
    let muster = serve(
        "/api/plugin/routes",
        StatusCode::OK,
        r#"{"routes":[{"id":"7","messageId":"m-1","session":"s","state":"teleported",
        "routedVia":"x","redraftOf":null,"redraftCount":0,"reason":null,"createdAt":"a","updatedAt":"b"}]}"#,
    )
    .await;
    let routes = muster.list_routes("m-1").await.unwrap().records;
    assert_eq!(routes[0].state, RouteState::Unknown("teleported".into()));
}

#[tokio::test]
async fn a_message_list_with_the_wrong_shape_is_a_bad_response() {
    let muster = serve(
        "/api/plugin/messages",
        StatusCode::OK,
        r#"{"messages":{"id":"m-1"}}"#,
    )
    .await;
    problem(muster.list_messages(None).await.unwrap_err());
}

#[tokio::test]
async fn a_stale_answer_without_the_draft_is_a_bad_response_not_a_guess() {
    let muster = serve(
        "/api/plugin/drafts/{id}/decide",
        StatusCode::PRECONDITION_FAILED,
        r#"{"error":"stale","code":"stale"}"#,
    )
    .await;
    let (endpoint, problem) = problem(
        muster
            .decide("5", Decision::Approve, None, "2026-01-01T00:00:00Z")
            .await
            .unwrap_err(),
    );
    assert_eq!(endpoint, "POST /api/plugin/drafts/{id}/decide");
    assert!(problem.contains("`draft`"), "{problem}");
}

#[tokio::test]
async fn a_conflict_with_an_unknown_code_is_a_bad_response_with_musters_text() {
    let muster = serve(
        "/api/plugin/drafts/{id}/decide",
        StatusCode::CONFLICT,
        r#"{"error":"the moon is full","code":"lunar"}"#,
    )
    .await;
    let (_, problem) = problem(
        muster
            .decide("5", Decision::Reject, None, "2026-01-01T00:00:00Z")
            .await
            .unwrap_err(),
    );
    assert!(
        problem.contains("lunar") && problem.contains("the moon is full"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_login_redirect_without_the_cookie_is_a_bad_response() {
    let app = Router::new().route(
        "/login",
        post(|| async { (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response() }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let muster = MusterClient::new(format!("http://{addr}").parse().unwrap(), "pw".into()).unwrap();
    let (endpoint, problem) = problem(muster.login().await.unwrap_err());
    assert_eq!(endpoint, "POST /login");
    assert!(problem.contains("muster_session"), "{problem}");
}

#[tokio::test]
async fn a_json_401_that_is_not_about_the_session_is_shown_and_signs_in_no_more() {
    // The hook tier's refusal (muster's requireHookToken): signing in again cannot cure it.
    let (muster, logins) = serve_as(
        "/api/plugin/drafts",
        StatusCode::UNAUTHORIZED,
        "application/json",
        r#"{"error":"invalid or missing hook token"}"#,
    )
    .await;
    let error = muster.list_drafts(None).await.unwrap_err();
    assert!(
        matches!(&error, Error::Server { status: 401, message, .. }
            if message == "invalid or missing hook token"),
        "{error:?}"
    );
    assert_eq!(logins.load(Ordering::SeqCst), 1, "signed in again for it");
}

#[tokio::test]
async fn a_plain_text_500_shows_musters_sentence() {
    let (muster, _) = serve_as(
        "/api/plugin/drafts",
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/plain; charset=utf-8",
        "database is locked\n",
    )
    .await;
    let error = muster.list_drafts(None).await.unwrap_err();
    assert!(
        matches!(&error, Error::Server { status: 500, message, .. } if message == "database is locked"),
        "{error:?}"
    );
    assert!(error.to_string().contains("database is locked"), "{error}");
}
