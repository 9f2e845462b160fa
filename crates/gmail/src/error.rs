//! Errors of the Gmail client, typed from Google's error JSON.
//!
//! Google answers errors as
//! `{"error":{"code","message","status","errors":[{"reason","domain","message"}]}}`
//! (<https://cloud.google.com/apis/design/errors#http_mapping>,
//! <https://developers.google.com/gmail/api/guides/handle-errors>). The HTTP status alone is not
//! enough: 403 means both "missing scope" (`insufficientPermissions`) and "slow down"
//! (`rateLimitExceeded`, `userRateLimitExceeded`), so the `reason` decides.
//!
//! No variant ever carries an access or refresh token: messages are Google's `message` texts or
//! sentences written here, and transport errors keep only whether the request left.

use std::time::Duration;

use serde::Deserialize;

/// Result of every fallible call in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong talking to Gmail or Google's OAuth endpoints.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 404 (or a "not found" 400): the draft, message or history position does not exist (any
    /// more). For `history.list` this means the start history id is too old: do a full sync.
    #[error("cannot find it in Gmail: {message}")]
    NotFound {
        /// Google's message.
        message: String,
    },
    /// 403 `insufficientPermissions`: the token lacks a scope this method needs.
    #[error(
        "cannot do this with the Gmail permissions granted: reconnect the account and allow {}",
        describe_scopes(needed)
    )]
    InsufficientScope {
        /// Scopes any one of which would do, from Google's `WWW-Authenticate` header when given.
        needed: Vec<String>,
    },
    /// 429, or 403 with a usage-limit reason (`rateLimitExceeded`, `userRateLimitExceeded`,
    /// `dailyLimitExceeded`, `quotaExceeded`).
    #[error("cannot go on: Gmail asks to slow down{}", retry_after.map(|d| format!(" (retry in {} ms)", d.as_millis())).unwrap_or_default())]
    RateLimited {
        /// How long Google asked to wait, parsed from "Retry after <RFC 3339 time>".
        retry_after: Option<Duration>,
    },
    /// 401: the access token was refused even after one refresh.
    #[error("cannot authenticate to Gmail: the access token was refused")]
    Unauthorized,
    /// 5xx from Google.
    #[error("cannot complete the call: Gmail answered {status}: {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// Google's message.
        message: String,
    },
    /// Another 4xx, e.g. 400 `invalidArgument`, 403 `forbidden`.
    #[error("cannot complete the call: Gmail refused it with {status} ({reason}): {message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// Google's `errors[0].reason`, or the `status` string when no reason was given.
        reason: String,
        /// Google's message.
        message: String,
    },
    /// The network failed. `request_sent: false` only when the request certainly never left
    /// (connection refused, DNS failure, connect timeout); otherwise the outcome is unknown.
    #[error("cannot reach Gmail ({})", if *request_sent { "the request may have been received" } else { "the request was not sent" })]
    Transport {
        /// Whether Google may have received (and acted on) the request.
        request_sent: bool,
    },
    /// The message is larger than Gmail accepts for sending.
    #[error(
        "cannot send it: the message is {:.1} MB and Gmail accepts at most {:.0} MB",
        *size as f64 / 1_048_576.0,
        *limit as f64 / 1_048_576.0
    )]
    TooLarge {
        /// The message's size in bytes.
        size: usize,
        /// Gmail's limit in bytes.
        limit: usize,
    },
    /// Google answered success (2xx) with a body this client cannot read: the call may well
    /// have been carried out (a send, a delete), so its outcome is unknown, not refused.
    #[error("cannot read Gmail's answer to {method}: {detail}")]
    UnreadableAnswer {
        /// The call, e.g. `drafts.send`.
        method: &'static str,
        /// What was wrong with the body.
        detail: String,
    },
    /// Google answered something this client cannot read.
    #[error("cannot read Gmail's answer: {detail}")]
    BadResponse {
        /// What was wrong (never a token).
        detail: String,
    },
    /// The refresh token was revoked or expired (`invalid_grant`), or no tokens are stored.
    #[error("cannot use this Gmail account: sign in to Gmail again (reconnect the account)")]
    SignInAgain,
    /// A refresh was answered `invalid_grant` (RFC 6749 §5.2): Google ended this sign-in. The
    /// account needs reconnecting; nothing it waits to send is lost.
    #[error("{}", GRANT_ENDED_SENTENCE)]
    GrantEnded,
    /// A refresh was answered `deleted_client` or `invalid_client` (RFC 6749 §5.2; Google's
    /// token endpoint answers 401 `{"error":"deleted_client"}` once the OAuth client is deleted
    /// in Cloud Console, `invalid_client` once its secret is reset): no sign-in with this
    /// `client_secret.json` can work again. The account needs reconnecting with a new client;
    /// nothing it waits to send is lost.
    #[error("{}", CLIENT_GONE_SENTENCE)]
    ClientGone,
    /// The owner pressed Cancel on Google's consent page (`error=access_denied`).
    #[error("You declined access on Google's page; nothing was connected")]
    ConsentDeclined,
    /// Google's consent page redirected back with another `error=` code.
    #[error("cannot connect the Gmail account: Google's sign-in page answered {code}{}; nothing was connected", consent_error_meaning(code))]
    ConsentRefused {
        /// Google's `error` code, e.g. `admin_policy_enforced`.
        code: String,
    },
    /// The redirect that reached the loopback listener did not carry the `state` this sign-in
    /// sent: it is not the answer to our request (RFC 6749 §10.12).
    #[error("cannot connect the Gmail account: the answer that reached this computer does not belong to this sign-in (its state did not match); nothing was connected, start again")]
    ConsentStateMismatch,
    /// The user did not finish consent in the browser in time.
    #[error("cannot connect the Gmail account: no answer from the browser within {} s; start again and finish the Google sign-in page", waited.as_secs())]
    ConsentTimedOut {
        /// How long we waited.
        waited: Duration,
    },
    /// The OAuth flow failed for another reason (consent denied, bad client, token endpoint).
    #[error("cannot complete Google sign-in: {detail}")]
    OAuth {
        /// What failed, without tokens.
        detail: String,
    },
    /// `client_secret.json` is unreadable or not a Google OAuth client.
    #[error("cannot use the OAuth client file: {detail}")]
    ClientSecret {
        /// What is wrong with it.
        detail: String,
    },
    /// The keyring or the token file failed.
    #[error("cannot store or read the Gmail tokens: {detail}")]
    TokenStorage {
        /// What failed, without tokens.
        detail: String,
    },
}

/// What the owner reads when Google ended the sign-in, with the likely causes.
pub const GRANT_ENDED_SENTENCE: &str = "Reconnect needed: Google ended this sign-in. Likely \
    causes: the OAuth client is still in \"Testing\" publishing status (Google lets its refresh \
    tokens expire after 7 days), the access was removed at \
    https://myaccount.google.com/permissions, or the Google account's password changed. \
    Decisions waiting to be sent stay queued until the account is reconnected.";

/// What the owner reads when Google no longer knows the account's OAuth client.
pub const CLIENT_GONE_SENTENCE: &str = "Reconnect: new client needed. Google no longer \
    accepts the OAuth client in this account's client_secret.json (it was deleted, or its \
    secret was reset, in Google Cloud Console). Create a new \"Desktop app\" OAuth client, \
    download its client_secret.json and reconnect the account with it. Decisions waiting to be \
    sent stay queued until then.";

impl Error {
    /// The sentence for an account that must be reconnected before anything more can be done
    /// with it ([`Error::GrantEnded`], [`Error::ClientGone`]); `None` for any other error.
    pub fn reconnect_reason(&self) -> Option<&'static str> {
        match self {
            Error::GrantEnded => Some(GRANT_ENDED_SENTENCE),
            Error::ClientGone => Some(CLIENT_GONE_SENTENCE),
            _ => None,
        }
    }

    /// The error a stored reconnect reason stands for (see [`Error::reconnect_reason`]).
    pub fn from_reconnect_reason(reason: &str) -> Error {
        if reason == CLIENT_GONE_SENTENCE {
            Error::ClientGone
        } else {
            Error::GrantEnded
        }
    }
}

/// Google's consent-page error codes in words (native-app guide, "Error messages").
fn consent_error_meaning(code: &str) -> &'static str {
    match code {
        "admin_policy_enforced" => {
            " (the Google Workspace administrator does not allow this app or scope)"
        }
        "disallowed_useragent" => " (Google does not allow sign-in from this browser)",
        "org_internal" => {
            " (the OAuth client is limited to users of another Google Cloud organization)"
        }
        "invalid_client" | "deleted_client" => {
            " (the OAuth client in client_secret.json is unknown or deleted)"
        }
        "invalid_scope" => " (Google does not accept the requested permission)",
        "redirect_uri_mismatch" => {
            " (the OAuth client does not accept a loopback redirect: use a \"Desktop app\" client)"
        }
        "unauthorized_client" => " (this OAuth client may not use this sign-in flow)",
        "invalid_request" => " (the sign-in request was malformed)",
        _ => "",
    }
}

impl Error {
    /// Whether a read may be retried after this error (429, 403 rate limit, 5xx, network).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::RateLimited { .. } | Error::Server { .. } | Error::Transport { .. }
        )
    }

    /// The wait Google asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::RateLimited { retry_after } => *retry_after,
            _ => None,
        }
    }

    /// Build the error for a transport failure reported by reqwest.
    pub(crate) fn from_reqwest(err: &reqwest::Error) -> Self {
        // `is_connect` covers connection refused, DNS failures and connect timeouts: the request
        // never left. Anything later (timeout after connect, connection closed before or while
        // the answer was read, body errors) leaves the outcome unknown.
        let request_sent = !err.is_connect();
        // The URL can carry a token (tokeninfo takes `access_token=`), so it is stripped.
        tracing::debug!(error = %WithoutUrl(err), request_sent, "gmail transport error");
        Error::Transport { request_sent }
    }
}

/// "one of a, b" for the scopes Google named, or the scope Countersign asks for.
fn describe_scopes(needed: &[String]) -> String {
    if needed.is_empty() {
        "'Read, compose and send' (gmail.modify)".to_owned()
    } else {
        format!("one of {}", needed.join(", "))
    }
}

/// Displays a reqwest error without its URL.
struct WithoutUrl<'a>(&'a reqwest::Error);

impl std::fmt::Display for WithoutUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut source: Option<&dyn std::error::Error> = std::error::Error::source(self.0);
        let kind = if self.0.is_timeout() {
            "timeout"
        } else if self.0.is_connect() {
            "connect"
        } else if self.0.is_body() || self.0.is_decode() {
            "body"
        } else {
            "request"
        };
        f.write_str(kind)?;
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        Ok(())
    }
}

/// Google's error envelope (wire type).
#[derive(Debug, Deserialize)]
struct ErrorEnvelope {
    error: ErrorBody,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    errors: Vec<ErrorItem>,
    #[serde(default)]
    details: Vec<ErrorDetail>,
}

#[derive(Debug, Deserialize)]
struct ErrorItem {
    #[serde(default)]
    reason: String,
}

#[derive(Debug, Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    reason: String,
}

/// Map an error answer (status, `WWW-Authenticate` header, body) to an [`Error`].
pub(crate) fn from_response(status: u16, www_authenticate: Option<&str>, body: &[u8]) -> Error {
    let parsed = serde_json::from_slice::<ErrorEnvelope>(body).ok();
    let (message, reason, status_text, detail_reasons) = match &parsed {
        Some(e) => (
            e.error.message.clone(),
            e.error
                .errors
                .first()
                .map(|i| i.reason.clone())
                .unwrap_or_default(),
            e.error.status.clone(),
            e.error
                .details
                .iter()
                .map(|d| d.reason.as_str())
                .collect::<Vec<_>>(),
        ),
        None => (
            String::from_utf8_lossy(body).chars().take(200).collect(),
            String::new(),
            String::new(),
            Vec::new(),
        ),
    };
    // Usage limits are waited out, not refusals: Google's "Resolve errors" guide lists
    // dailyLimitExceeded (the project's daily courtesy limit), userRateLimitExceeded and
    // rateLimitExceeded as 403s to retry later (developers.google.com/gmail/api/guides/
    // handle-errors); quotaExceeded is the same family in the usageLimits domain.
    let rate_reason = matches!(
        reason.as_str(),
        "rateLimitExceeded" | "userRateLimitExceeded" | "dailyLimitExceeded" | "quotaExceeded"
    );
    match status {
        401 => Error::Unauthorized,
        404 => Error::NotFound { message },
        429 => Error::RateLimited {
            retry_after: parse_retry_after(&message, chrono::Utc::now()),
        },
        403 if rate_reason => Error::RateLimited {
            retry_after: parse_retry_after(&message, chrono::Utc::now()),
        },
        403 if reason == "insufficientPermissions"
            || detail_reasons.contains(&"ACCESS_TOKEN_SCOPE_INSUFFICIENT") =>
        {
            Error::InsufficientScope {
                needed: www_authenticate
                    .map(scopes_from_challenge)
                    .unwrap_or_default(),
            }
        }
        // Gmail sometimes answers 400 for an id that no longer exists (a sent draft).
        400 if reason == "notFound" || status_text == "NOT_FOUND" => Error::NotFound { message },
        500..=599 => Error::Server { status, message },
        _ => Error::Refused {
            status,
            reason: if reason.is_empty() {
                status_text
            } else {
                reason
            },
            message,
        },
    }
}

/// The `scope="…"` attribute of a `WWW-Authenticate: Bearer …, error="insufficient_scope"`
/// challenge (RFC 6750 §3), which Google sends with a scope 403.
fn scopes_from_challenge(header: &str) -> Vec<String> {
    let Some(start) = header.find("scope=\"") else {
        return Vec::new();
    };
    let rest = &header[start + 7..];
    let value = rest.split('"').next().unwrap_or_default();
    value.split_whitespace().map(str::to_owned).collect()
}

/// Parse "… Retry after 2026-12-01T07:50:00.000Z" into the wait from `now`.
pub(crate) fn parse_retry_after(
    message: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let at = lower.find("retry after ")?;
    let text = message[at + "retry after ".len()..]
        .split_whitespace()
        .next()?
        .trim_end_matches(['.', ',', ';']);
    let when = chrono::DateTime::parse_from_rfc3339(text).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// A `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after_header(
    value: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (when.with_timezone(&chrono::Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_after_header_in_seconds_or_as_a_date_becomes_a_wait() {
        assert_eq!(
            parse_retry_after_header("120", now()),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after_header("Tue, 01 Dec 2026 07:50:30 GMT", now()),
            Some(Duration::from_millis(31_500))
        );
        assert_eq!(parse_retry_after_header("soon", now()), None);
    }

    fn now() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339("2026-12-01T07:49:58.500Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    #[test]
    fn retry_time_in_the_message_becomes_a_wait() {
        let wait = parse_retry_after(
            "User-rate limit exceeded.  Retry after 2026-12-01T07:50:00.000Z",
            now(),
        );
        assert_eq!(wait, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn a_retry_time_in_the_past_means_retry_now() {
        let wait = parse_retry_after("Retry after 2026-12-01T07:00:00Z", now());
        assert_eq!(wait, Some(Duration::ZERO));
    }

    #[test]
    fn a_message_without_retry_time_gives_no_wait() {
        assert_eq!(parse_retry_after("User Rate Limit Exceeded", now()), None);
    }

    #[test]
    fn a_403_is_a_rate_limit_or_a_scope_problem_by_reason() {
        let rate = br#"{"error":{"code":403,"message":"User Rate Limit Exceeded","errors":[{"message":"User Rate Limit Exceeded","domain":"usageLimits","reason":"userRateLimitExceeded"}],"status":"PERMISSION_DENIED"}}"#;
        assert!(matches!(
            from_response(403, None, rate),
            Error::RateLimited { retry_after: None }
        ));
        let scope = br#"{"error":{"code":403,"message":"Request had insufficient authentication scopes.","errors":[{"message":"Insufficient Permission","domain":"global","reason":"insufficientPermissions"}],"status":"PERMISSION_DENIED"}}"#;
        let challenge = r#"Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="https://mail.google.com/ https://www.googleapis.com/auth/gmail.compose""#;
        match from_response(403, Some(challenge), scope) {
            Error::InsufficientScope { needed } => assert_eq!(
                needed,
                vec![
                    "https://mail.google.com/",
                    "https://www.googleapis.com/auth/gmail.compose"
                ]
            ),
            other => panic!("expected a scope error, got {other:?}"),
        }
    }

    #[test]
    fn an_unreadable_error_body_still_gives_the_status() {
        match from_response(502, None, b"<html>Bad Gateway</html>") {
            Error::Server { status, message } => {
                assert_eq!(status, 502);
                assert!(message.contains("Bad Gateway"));
            }
            other => panic!("expected a server error, got {other:?}"),
        }
    }
}
