//! Fault injection and the request log of the fake muster.
//!
//! Every request passes [`observe`]: it is logged (method, path, query, status, whether a
//! session cookie came along — never the cookie itself), and an armed fault may fail it with a
//! status, delay it, or let it commit and then cut the connection unanswered. The control API
//! (`/_control/…`) is logged but never faulted, so a test can always repair the fake.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use tokio::sync::watch;

use super::Shared;
use crate::server::DropConnection;

/// How many requests the log keeps before it forgets the older half.
const LOG_LIMIT: usize = 20_000;

/// One request the fake muster answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The status answered (for `/events`: the status of the stream's head).
    pub status: u16,
    /// Whether a `muster_session` cookie was sent (valid or not).
    pub had_session_cookie: bool,
    /// The `Accept` header, if any (muster tells a browser's page load from an API call by it).
    pub accept: Option<String>,
    /// Whether the connection was cut instead of answering.
    pub dropped: bool,
}

/// What an armed fault does to a matching request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAction {
    /// Answer this status with `{"error": "injected failure"}` without touching any state; a
    /// 401 is muster's own session refusal, `{"error": "not signed in"}` (the only JSON 401 of
    /// its owner routes: `refuseUnauthenticated` in internal/api/auth.go).
    Fail(u16),
    /// Wait this long, then handle the request normally.
    Delay(Duration),
    /// Handle the request (state changes happen), then close the connection without answering.
    DropAfterCommit,
    /// Something in front of muster (a proxy, an SSO login page) answers instead: a 3xx
    /// status redirects to `/sso/login`, any other is an HTML page with that status.
    FrontPage(u16),
}

#[derive(Clone, Debug)]
struct Fault {
    method: Option<String>,
    path: String,
    remaining: u32,
    action: FaultAction,
}

impl Fault {
    fn matches(&self, method: &str, path: &str) -> bool {
        let method_ok = self
            .method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method));
        method_ok && glob(&self.path, path)
    }
}

/// `*` in `pattern` matches any run of characters (`/api/plugin/drafts/*/decide`,
/// `/api/*`); everything else matches itself.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The armed faults.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    armed: Vec<Fault>,
}

impl Faults {
    /// Arm `action` for the next `times` requests to `method` (`*` for any) and `path` (`*`
    /// matches any run of characters).
    pub(crate) fn arm(&mut self, method: &str, path: &str, times: u32, action: FaultAction) {
        if times == 0 {
            return;
        }
        self.armed.push(Fault {
            method: (method != "*").then(|| method.to_owned()),
            path: path.to_owned(),
            remaining: times,
            action,
        });
    }

    pub(crate) fn clear(&mut self) {
        self.armed.clear();
    }

    /// Consume one use of every fault that matches.
    fn take(&mut self, method: &str, path: &str) -> Vec<FaultAction> {
        let mut actions = Vec::new();
        for fault in &mut self.armed {
            if fault.remaining > 0 && fault.matches(method, path) {
                fault.remaining -= 1;
                actions.push(fault.action);
            }
        }
        self.armed.retain(|f| f.remaining > 0);
        actions
    }
}

/// Every request by method and path, counted as it arrives.
#[derive(Default)]
pub(crate) struct Arrivals {
    by_request: Mutex<HashMap<(String, String), u64>>,
    total: watch::Sender<u64>,
}

impl Arrivals {
    fn note(&self, method: &str, path: &str) {
        *self
            .by_request
            .lock()
            .expect("arrivals lock")
            .entry((method.to_owned(), path.to_owned()))
            .or_default() += 1;
        self.total.send_modify(|total| *total += 1);
    }

    pub(crate) fn count(&self, method: &str, path: &str) -> u64 {
        self.by_request
            .lock()
            .expect("arrivals lock")
            .iter()
            .filter(|((m, p), _)| m.eq_ignore_ascii_case(method) && glob(path, p))
            .map(|(_, n)| n)
            .sum()
    }

    pub(crate) async fn wait(&self, method: &str, path: &str, at_least: u64) {
        let mut total = self.total.subscribe();
        while self.count(method, path) < at_least {
            if total.changed().await.is_err() {
                return;
            }
        }
    }
}

/// The value of the `muster_session` cookie, if the request carries one.
pub(crate) fn session_cookie(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == "muster_session")
        .map(|(_, value)| value.to_owned())
}

/// Middleware: log the request and apply armed faults.
pub(crate) async fn observe(
    State(shared): State<Arc<Shared>>,
    req: Request,
    next: Next,
) -> Response {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    if !path.starts_with("/_control/") {
        shared.arrivals.note(&method, &path);
    }
    let query = req.uri().query().map(str::to_owned);
    let had_session_cookie = session_cookie(req.headers()).is_some();
    let accept = req
        .headers()
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let log = |status: u16, dropped: bool| {
        let mut log = shared.log.lock().expect("log lock");
        // Demo mode runs for hours: keep the recent past, not all of it.
        if log.len() >= LOG_LIMIT {
            log.drain(..LOG_LIMIT / 2);
        }
        log.push(LoggedRequest {
            method: method.clone(),
            path: path.clone(),
            query: query.clone(),
            status,
            had_session_cookie,
            accept: accept.clone(),
            dropped,
        });
    };

    let mut drop_after_commit = false;
    if !path.starts_with("/_control/") {
        let actions = shared
            .faults
            .lock()
            .expect("faults lock")
            .take(&method, &path);
        for action in actions {
            match action {
                FaultAction::Fail(status) => {
                    log(status, false);
                    let status = axum::http::StatusCode::from_u16(status)
                        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                    let text = if status == axum::http::StatusCode::UNAUTHORIZED {
                        "not signed in"
                    } else {
                        "injected failure"
                    };
                    return (status, Json(serde_json::json!({ "error": text }))).into_response();
                }
                FaultAction::FrontPage(status) => {
                    log(status, false);
                    let status = axum::http::StatusCode::from_u16(status)
                        .unwrap_or(axum::http::StatusCode::FORBIDDEN);
                    let html = [(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")];
                    if status.is_redirection() {
                        return (
                            status,
                            [(axum::http::header::LOCATION, "/sso/login")],
                            html,
                            "",
                        )
                            .into_response();
                    }
                    return (status, html, "<!doctype html><title>Sign in</title>").into_response();
                }
                FaultAction::Delay(wait) => tokio::time::sleep(wait).await,
                FaultAction::DropAfterCommit => drop_after_commit = true,
            }
        }
    }
    let mut response = next.run(req).await;
    log(response.status().as_u16(), drop_after_commit);
    if drop_after_commit {
        response.extensions_mut().insert(DropConnection);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn fault_paths_match_exactly_or_with_wildcards() {
        assert!(glob("/login", "/login"));
        assert!(!glob("/login", "/login/x"));
        assert!(glob("/api/*", "/api/plugin/drafts"));
        assert!(glob(
            "/api/plugin/drafts/*/decide",
            "/api/plugin/drafts/42/decide"
        ));
        assert!(!glob(
            "/api/plugin/drafts/*/decide",
            "/api/plugin/drafts/42"
        ));
        assert!(glob("*", "/events"));
    }
}
