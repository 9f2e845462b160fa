//! Google's error answers, body and headers, as Gmail sends them.
//!
//! Shape: `{"error":{"code","message","errors":[{"message","domain","reason"}],"status"}}`
//! (<https://cloud.google.com/apis/design/errors#http_mapping>,
//! <https://developers.google.com/gmail/api/guides/handle-errors>). A missing scope also carries
//! an `ErrorInfo` detail `ACCESS_TOKEN_SCOPE_INSUFFICIENT` and a `WWW-Authenticate` challenge
//! listing the scopes that would do (RFC 6750 §3).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A Google API error ready to be answered (boxed: it travels in many `Result`s).
#[derive(Clone, Debug)]
pub(crate) struct ApiError(Box<ApiErrorBody>);

impl std::ops::Deref for ApiError {
    type Target = ApiErrorBody;

    fn deref(&self) -> &ApiErrorBody {
        &self.0
    }
}

impl std::ops::DerefMut for ApiError {
    fn deref_mut(&mut self) -> &mut ApiErrorBody {
        &mut self.0
    }
}

/// The parts of a Google API error.
#[derive(Clone, Debug)]
pub(crate) struct ApiErrorBody {
    pub status: u16,
    pub message: String,
    pub reason: String,
    pub domain: &'static str,
    pub status_text: &'static str,
    /// Scopes for the `WWW-Authenticate` challenge of a scope 403.
    pub needed_scopes: Option<Vec<&'static str>>,
    /// RPC method for the `ErrorInfo` detail of a scope 403.
    pub rpc_method: Option<&'static str>,
}

impl ApiError {
    fn new(status: u16, message: impl Into<String>, reason: &str) -> Self {
        let (domain, status_text) = match status {
            400 => ("global", "INVALID_ARGUMENT"),
            401 => ("global", "UNAUTHENTICATED"),
            403 => ("global", "PERMISSION_DENIED"),
            404 => ("global", "NOT_FOUND"),
            409 => ("global", "ABORTED"),
            429 => ("usageLimits", "RESOURCE_EXHAUSTED"),
            503 => ("global", "UNAVAILABLE"),
            _ => ("global", "INTERNAL"),
        };
        ApiError(Box::new(ApiErrorBody {
            status,
            message: message.into(),
            reason: reason.to_owned(),
            domain,
            status_text,
            needed_scopes: None,
            rpc_method: None,
        }))
    }

    pub fn not_found() -> Self {
        ApiError::new(404, "Requested entity was not found.", "notFound")
    }

    /// 400 for a draft id Gmail no longer holds (sent or deleted): reported for `drafts.send`
    /// and `drafts.get` next to the documented 404 (e.g. taylorwilsdon/google_workspace_mcp#1035
    /// handles "400 or 404" for a draft "already sent or deleted").
    pub fn invalid_draft() -> Self {
        ApiError::new(400, "Invalid draft", "invalidArgument")
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        ApiError::new(400, message, "invalidArgument")
    }

    pub fn unauthenticated(missing: bool) -> Self {
        if missing {
            ApiError::new(
                401,
                "Request is missing required authentication credential. Expected OAuth 2 access \
                 token, login cookie or other valid authentication credential. See \
                 https://developers.google.com/identity/sign-in/web/devconsole-project.",
                "required",
            )
        } else {
            ApiError::new(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access token, \
                 login cookie or other valid authentication credential. See \
                 https://developers.google.com/identity/sign-in/web/devconsole-project.",
                "authError",
            )
        }
    }

    pub fn insufficient_scope(needed: &[&'static str], rpc_method: &'static str) -> Self {
        let mut e = ApiError::new(
            403,
            "Request had insufficient authentication scopes.",
            "insufficientPermissions",
        );
        e.needed_scopes = Some(needed.to_vec());
        e.rpc_method = Some(rpc_method);
        e
    }

    pub fn delegation_denied(user: &str) -> Self {
        ApiError::new(403, format!("Delegation denied for {user}"), "forbidden")
    }

    /// 429 as Gmail answers when the per-user rate is exceeded; the retry time is only in the
    /// message text.
    pub fn rate_limited(retry_at: Option<chrono::DateTime<chrono::Utc>>) -> Self {
        let message = match retry_at {
            Some(at) => format!(
                "User-rate limit exceeded.  Retry after {}",
                at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            ),
            None => "User-rate limit exceeded.".to_owned(),
        };
        ApiError::new(429, message, "rateLimitExceeded")
    }

    /// 403 `userRateLimitExceeded`: the per-user rate is exceeded. The quota page names this
    /// reason for the per-user limit ("Per user rate limit | 15,000 quota units per user per
    /// minute | userRateLimitExceeded", <https://developers.google.com/workspace/gmail/api/reference/quota>)
    /// and the error guide answers it with 403 in the `usageLimits` domain
    /// (<https://developers.google.com/workspace/gmail/api/guides/handle-errors>). Gmail puts
    /// the time to retry only in the message text ("User-rate limit exceeded.  Retry after
    /// <RFC 3339 time>"), never in a header.
    pub fn user_rate_limited(retry_at: Option<chrono::DateTime<chrono::Utc>>) -> Self {
        let mut e = ApiError::rate_limited(retry_at);
        e.status = 403;
        e.status_text = "PERMISSION_DENIED";
        e.reason = "userRateLimitExceeded".to_owned();
        e
    }

    /// 403 `forbidden` for what a `gmail.metadata` grant may not do, with Google's own text
    /// ("Metadata scope does not support 'q' parameter", "Metadata scope doesn't allow format
    /// FULL"; seen in owners' reports, e.g. googleworkspace/cli#104, dacastro4/laravel-gmail#50
    /// and #89, Slava/meteor-gmail#7).
    pub fn metadata_scope(message: impl Into<String>) -> Self {
        ApiError::new(403, message, "forbidden")
    }

    /// 400 for an upload whose media is not of a type the method takes. Google's text and
    /// reason for it ("Media type 'text/plain; charset=utf-8' is not supported. Valid media
    /// types: [...]", `badRequest`), as owners report it (googleapis/google-api-go-client#778,
    /// MrSwitch/hello.js#412); the accepted types are the method's `mediaUpload.accept` in the
    /// discovery document, `message/*` for every Gmail upload.
    pub fn unsupported_media(content_type: &str) -> Self {
        ApiError::new(
            400,
            format!("Media type '{content_type}' is not supported. Valid media types: [message/*]"),
            "badRequest",
        )
    }

    /// 413 for a request body over Google's limit (owners report "Request payload size exceeds
    /// the limit: 5242880 bytes." for large JSON sends, e.g.
    /// googleapis/google-api-dotnet-client#1357, jennybc/send-email-with-r#6).
    pub fn payload_too_large(limit: usize) -> Self {
        ApiError::new(
            413,
            format!("Request payload size exceeds the limit: {limit} bytes."),
            "uploadTooLarge",
        )
    }

    /// The answer Google gives for `status`, used by injected faults.
    pub fn for_status(status: u16, reason: Option<&str>, message: Option<&str>) -> Self {
        let mut e = match (status, reason) {
            (403, Some("rateLimitExceeded")) => {
                ApiError::new(403, "Rate Limit Exceeded", "rateLimitExceeded")
            }
            (403, Some("userRateLimitExceeded")) => {
                ApiError::new(403, "User Rate Limit Exceeded", "userRateLimitExceeded")
            }
            (403, Some("insufficientPermissions")) => ApiError::insufficient_scope(
                &[
                    super::scopes::MAIL,
                    super::scopes::COMPOSE,
                    super::scopes::MODIFY,
                ],
                "caribou.api.proto.MailboxService.SendDraft",
            ),
            (403, _) => ApiError::new(403, "The caller does not have permission", "forbidden"),
            (400, _) => ApiError::invalid("Invalid argument"),
            (401, _) => ApiError::unauthenticated(false),
            (404, _) => ApiError::not_found(),
            (429, _) => ApiError::rate_limited(None),
            (503, _) => ApiError::new(503, "The service is currently unavailable.", "backendError"),
            (status, _) if status >= 500 => {
                ApiError::new(status, "Internal error encountered.", "backendError")
            }
            (status, _) => ApiError::new(status, "Request failed.", "failed"),
        };
        if let Some(r) = reason {
            e.reason = r.to_owned();
            if status == 429 || r.contains("RateLimit") {
                e.domain = "usageLimits";
            }
        }
        if let Some(m) = message {
            e.message = m.to_owned();
        }
        e
    }

    /// The same error with another message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    pub fn body(&self) -> serde_json::Value {
        let mut error = json!({
            "code": self.status,
            "message": self.message,
            "errors": [{"message": self.item_message(), "domain": self.domain, "reason": self.reason}],
            "status": self.status_text,
        });
        if let Some(method) = self.rpc_method {
            error["details"] = json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                "domain": "googleapis.com",
                "metadata": {"service": "gmail.googleapis.com", "method": method},
            }]);
        }
        json!({ "error": error })
    }

    fn item_message(&self) -> String {
        match self.reason.as_str() {
            "insufficientPermissions" => "Insufficient Permission".to_owned(),
            "authError" => "Invalid Credentials".to_owned(),
            "required" => "Login Required.".to_owned(),
            _ => self.message.clone(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(self.body())).into_response();
        if let Some(scopes) = &self.needed_scopes {
            let challenge = format!(
                "Bearer realm=\"https://accounts.google.com/\", error=\"insufficient_scope\", scope=\"{}\"",
                scopes.join(" ")
            );
            if let Ok(v) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
        } else if self.status == 401 {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"https://accounts.google.com/\""),
            );
        }
        response
    }
}
