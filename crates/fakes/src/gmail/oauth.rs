//! Google's OAuth endpoints for an installed app: consent (auto-approved), token exchange and
//! refresh, tokeninfo.
//!
//! Shapes follow <https://developers.google.com/identity/protocols/oauth2/native-app>: the
//! consent page redirects to the loopback `redirect_uri` with `code` (and `scope`, `state`);
//! `POST /token` answers `{"access_token","expires_in","refresh_token","scope","token_type"}`
//! or `{"error","error_description"}` (RFC 6749 §5.2); tokeninfo answers
//! `{"azp","aud","scope","exp","expires_in","access_type"}` with numbers as strings.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use super::rest::Req;
use super::state::{CodeGrant, LoggedRequest, ACCESS_TOKEN_SECONDS};
use super::Shared;
use crate::server::DropConnection;

pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/o/oauth2/auth", get(authorize))
        .route("/o/oauth2/v2/auth", get(authorize))
        .route("/token", post(token))
        .route("/o/oauth2/token", post(token))
        .route("/tokeninfo", get(tokeninfo))
}

fn log(shared: &Shared, method: &str, req: &Req) {
    shared.lock().log.push(LoggedRequest {
        method: method.to_owned(),
        http_method: req.http_method.clone(),
        path: req.path.clone(),
        query: req.logged_query(),
        at: chrono::Utc::now(),
    });
}

fn consent_error(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!("<!doctype html><title>Error</title><h1>Access blocked: authorization error</h1><p>{text}</p>"),
    )
        .into_response()
}

fn is_loopback(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return false;
    };
    url.scheme() == "http"
        && matches!(
            url.host_str(),
            Some("localhost") | Some("127.0.0.1") | Some("[::1]")
        )
}

/// The consent page: the user "clicks Allow" at once (granting fewer scopes when configured).
async fn authorize(State(sh): State<Arc<Shared>>, req: Req) -> Response {
    log(&sh, "oauth.authorize", &req);
    if req.param("client_id") != Some(sh.client_id.as_str()) {
        return consent_error(
            StatusCode::UNAUTHORIZED,
            "Error 401: invalid_client. The OAuth client was not found.",
        );
    }
    let Some(redirect_uri) = req.param("redirect_uri").filter(|u| is_loopback(u)) else {
        return consent_error(StatusCode::BAD_REQUEST, "Error 400: redirect_uri_mismatch");
    };
    if req.param("response_type") != Some("code") {
        return consent_error(
            StatusCode::BAD_REQUEST,
            "Error 400: unsupported_response_type",
        );
    }
    let requested: Vec<String> = req
        .param("scope")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if requested.is_empty() {
        return consent_error(
            StatusCode::BAD_REQUEST,
            "Error 400: invalid_request. Missing required parameter: scope",
        );
    }
    // PKCE (RFC 7636 §4.3): Google takes `S256` and `plain`; a challenge without a known
    // method is refused on the page.
    let challenge = match (
        req.param("code_challenge"),
        req.param("code_challenge_method"),
    ) {
        (None, _) => None,
        (Some(c), None | Some("plain")) => Some((c.to_owned(), "plain".to_owned())),
        (Some(c), Some("S256")) => Some((c.to_owned(), "S256".to_owned())),
        (Some(_), Some(_)) => {
            return consent_error(
                StatusCode::BAD_REQUEST,
                "Error 400: invalid_request. Invalid code_challenge_method",
            )
        }
    };
    let mut location = url::Url::parse(redirect_uri).expect("checked above");
    // The owner pressed Cancel (or another error): Google redirects with `error=` and the
    // `state` it was given, and no code (native-app guide, "Handle the OAuth 2.0 server
    // response": `http://127.0.0.1:PORT/?error=access_denied`).
    let consent_error = sh.lock().consent_error.clone();
    if let Some(error) = consent_error {
        {
            let mut pairs = location.query_pairs_mut();
            pairs.append_pair("error", &error);
            if let Some(state) = req.param("state") {
                pairs.append_pair("state", state);
            }
        }
        return (
            StatusCode::FOUND,
            [(header::LOCATION, location.to_string())],
        )
            .into_response();
    }
    let granted = sh
        .grant_scopes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or(requested);
    let code = {
        let mut s = sh.lock();
        let code = s.new_secret("4/0fake-");
        let prompted = req
            .param("prompt")
            .is_some_and(|p| p.split([' ', '+']).any(|w| w == "consent"));
        // Google gives a refresh token for offline access on a consent it shows: the first
        // one, or any with `prompt=consent`.
        let offline =
            req.param("access_type") == Some("offline") && (prompted || !s.consented_before);
        s.consented_before = true;
        s.codes.insert(
            code.clone(),
            CodeGrant {
                scopes: granted.clone(),
                redirect_uri: redirect_uri.to_owned(),
                offline,
                challenge,
            },
        );
        code
    };
    {
        let mut pairs = location.query_pairs_mut();
        if let Some(state) = req.param("state") {
            pairs.append_pair("state", state);
        }
        pairs.append_pair("code", &code);
        pairs.append_pair("scope", &granted.join(" "));
    }
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

/// Client credentials from the form or HTTP Basic (both are allowed by RFC 6749 §2.3.1).
fn client_credentials(
    form: &[(String, String)],
    headers: &HeaderMap,
) -> (Option<String>, Option<String>) {
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if let (Some(id), Some(secret)) = (field("client_id"), field("client_secret")) {
        return (Some(id), Some(secret));
    }
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(b).ok()
        })
        .and_then(|b| String::from_utf8(b).ok());
    match basic.as_deref().and_then(|b| b.split_once(':')) {
        Some((id, secret)) => (Some(id.to_owned()), Some(secret.to_owned())),
        None => (field("client_id"), field("client_secret")),
    }
}

/// `POST /token`; a successful answer may be cut off after the tokens were issued.
async fn token(
    State(sh): State<Arc<Shared>>,
    headers: HeaderMap,
    req: Req,
    body: Bytes,
) -> Response {
    let mut response = token_answer(&sh, headers, req, body).await;
    if response.status().is_success() && sh.lock().take_drop("oauth.token") {
        response.extensions_mut().insert(DropConnection);
    }
    response
}

async fn token_answer(sh: &Shared, headers: HeaderMap, req: Req, body: Bytes) -> Response {
    log(sh, "oauth.token", &req);
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let delay = sh.lock().take_delay("oauth.token");
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }
    let mut s = sh.lock();
    if let Some(fault) = s.take_fail("oauth.token") {
        let status =
            StatusCode::from_u16(fault.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let error = fault.reason.unwrap_or_else(|| "internal_failure".into());
        return token_error(
            status,
            &error,
            fault.message.as_deref().unwrap_or("Backend error"),
        );
    }
    // A client deleted in Cloud Console is refused before anything else is looked at, with
    // Google's answer (RFC 6749 §5.2 error, Google's own code and text).
    if s.client_deleted {
        return token_error(
            StatusCode::UNAUTHORIZED,
            "deleted_client",
            "The OAuth client was deleted.",
        );
    }
    let (client_id, client_secret) = client_credentials(&form, &headers);
    if client_id.as_deref() != Some(sh.client_id.as_str())
        || client_secret.as_deref() != Some(sh.client_secret.as_str())
    {
        return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "Unauthorized");
    }
    match field("grant_type").as_deref() {
        Some("authorization_code") => {
            let code = field("code").unwrap_or_default();
            let Some(grant) = s.codes.remove(&code) else {
                return token_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Malformed auth code.",
                );
            };
            if field("redirect_uri").as_deref() != Some(grant.redirect_uri.as_str()) {
                return token_error(
                    StatusCode::BAD_REQUEST,
                    "redirect_uri_mismatch",
                    "Bad Request",
                );
            }
            if let Some((challenge, method)) = &grant.challenge {
                // Google's answers to a missing or wrong verifier (RFC 7636 §4.6).
                let Some(verifier) = field("code_verifier") else {
                    return token_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "Missing code verifier.",
                    );
                };
                let derived = if method == "S256" {
                    use base64::Engine;
                    use sha2::Digest;
                    base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(sha2::Sha256::digest(verifier.as_bytes()))
                } else {
                    verifier
                };
                if &derived != challenge {
                    return token_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "Invalid code verifier.",
                    );
                }
            }
            let scope = grant.scopes.join(" ");
            let (access, refresh) = s.issue(grant.scopes, grant.offline);
            let mut answer = json!({
                "access_token": access,
                "expires_in": ACCESS_TOKEN_SECONDS,
                "scope": scope,
                "token_type": "Bearer",
            });
            if let Some(refresh) = refresh {
                answer["refresh_token"] = json!(refresh);
            }
            Json(answer).into_response()
        }
        Some("refresh_token") => {
            let refresh = field("refresh_token").unwrap_or_default();
            let scopes = match s.refresh_grant(&refresh) {
                Some(g) => g.scopes.clone(),
                None => {
                    return token_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "Token has been expired or revoked.",
                    )
                }
            };
            let scope = scopes.join(" ");
            let (access, _) = s.issue(scopes, false);
            if let Some(g) = s.access_tokens.get_mut(&access) {
                g.refresh_token = Some(refresh);
            }
            // Google does not send the refresh token again on refresh.
            Json(json!({
                "access_token": access,
                "expires_in": ACCESS_TOKEN_SECONDS,
                "scope": scope,
                "token_type": "Bearer",
            }))
            .into_response()
        }
        Some(other) => token_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("Invalid grant_type: {other}"),
        ),
        None => token_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing required parameter: grant_type",
        ),
    }
}

async fn tokeninfo(State(sh): State<Arc<Shared>>, req: Req) -> Response {
    log(&sh, "oauth.tokeninfo", &req);
    let s = sh.lock();
    let grant = req.param("access_token").and_then(|t| s.grant(t));
    let Some(grant) = grant else {
        return token_error(StatusCode::BAD_REQUEST, "invalid_token", "Invalid Value");
    };
    let left = grant
        .expires_at
        .saturating_duration_since(std::time::Instant::now())
        .as_secs();
    let mut v = json!({
        "azp": sh.client_id,
        "aud": sh.client_id,
        "scope": grant.scopes.join(" "),
        "exp": (chrono::Utc::now().timestamp() + left as i64).to_string(),
        "expires_in": left.to_string(),
        "access_type": if grant.refresh_token.is_some() { "offline" } else { "online" },
    });
    if grant
        .scopes
        .iter()
        .any(|s| s == "email" || s.ends_with("/auth/userinfo.email"))
    {
        v["email"] = json!(s.email);
        v["email_verified"] = json!("true");
    }
    Json(v).into_response()
}
