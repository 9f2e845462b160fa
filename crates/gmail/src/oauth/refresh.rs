//! Refreshing a connected account's access token at Google's token endpoint, without ever
//! starting a new browser consent on its own (RFC 6749 section 6:
//! <https://datatracker.ietf.org/doc/html/rfc6749#section-6>).

use std::time::Duration;

use serde::Deserialize;
use tokio::sync::Mutex;

use super::ClientSecret;
use crate::error::{Error, Result};
use crate::token::TokenSource;
use crate::token_store::{OAuthTokens, TokenStore};

/// Access tokens for a connected account: stored tokens, refreshed at the token endpoint when
/// they expire or Gmail refuses them.
pub struct OAuthTokenSource {
    secret: ClientSecret,
    store: TokenStore,
    account: String,
    http: reqwest::Client,
    cached: Mutex<Option<OAuthTokens>>,
}

impl std::fmt::Debug for OAuthTokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokenSource")
            .field("account", &self.account)
            .field("storage", &self.store.kind())
            .finish_non_exhaustive()
    }
}

/// Answer of the token endpoint (wire type), success or error.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<i64>,
    error: Option<String>,
    error_description: Option<String>,
}

impl OAuthTokenSource {
    /// Tokens of `account_id` in `store`, refreshed with `secret`'s token endpoint.
    pub fn new(
        secret: ClientSecret,
        store: TokenStore,
        account_id: impl Into<String>,
    ) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::OAuth {
                detail: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(OAuthTokenSource {
            secret,
            store,
            account: account_id.into(),
            http,
            cached: Mutex::new(None),
        })
    }

    async fn token(&self, force_refresh: bool) -> Result<String> {
        let mut cached = self.cached.lock().await;
        if cached.is_none() {
            *cached = self.store.load(&self.account)?;
        }
        let current = cached.as_ref().ok_or(Error::SignInAgain)?;
        let now = chrono::Utc::now().timestamp();
        if !force_refresh && !current.needs_refresh(now) {
            if let Some(access) = &current.access_token {
                return Ok(access.clone());
            }
        }
        let refresh_token = current.refresh_token.clone().ok_or(Error::SignInAgain)?;
        let fresh = self.refresh(&refresh_token).await?;
        self.store.save(&self.account, &fresh)?;
        let access = fresh.access_token.clone().ok_or_else(|| Error::OAuth {
            detail: "the token endpoint gave no access token".into(),
        })?;
        *cached = Some(fresh);
        Ok(access)
    }

    async fn refresh(&self, refresh_token: &str) -> Result<OAuthTokens> {
        let response = self
            .http
            .post(self.secret.token_uri())
            .form(&[
                ("client_id", self.secret.0.client_id.as_str()),
                ("client_secret", self.secret.0.client_secret.as_str()),
                ("refresh_token", refresh_token),
                ("grant_type", "refresh_token"),
            ])
            .send()
            .await
            .map_err(|e| Error::from_reqwest(&e))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| Error::from_reqwest(&e))?;
        let answer: Option<TokenAnswer> = serde_json::from_slice(&body).ok();
        if status.is_server_error() {
            return Err(Error::Server {
                status: status.as_u16(),
                message: "the token endpoint failed".into(),
            });
        }
        let Some(answer) = answer else {
            return Err(Error::BadResponse {
                detail: format!("the token endpoint answered {status} with unreadable JSON"),
            });
        };
        match answer.error.as_deref() {
            // RFC 6749 §5.2: the refresh token is invalid, expired or revoked.
            Some("invalid_grant") => return Err(Error::GrantEnded),
            // RFC 6749 §5.2: the client is unknown (Google: `deleted_client` once it is deleted
            // in Cloud Console, `invalid_client` once its secret is reset). Only a new
            // client_secret.json helps, so the account is marked once and not asked again.
            Some("deleted_client" | "invalid_client") => return Err(Error::ClientGone),
            Some(code) => {
                return Err(Error::OAuth {
                    detail: format!(
                        "the token endpoint refused the refresh: {code}{}",
                        answer
                            .error_description
                            .map(|d| format!(" ({d})"))
                            .unwrap_or_default()
                    ),
                })
            }
            None => {}
        }
        if !status.is_success() || answer.access_token.is_none() {
            return Err(Error::BadResponse {
                detail: format!("the token endpoint answered {status} without a token"),
            });
        }
        Ok(OAuthTokens {
            access_token: answer.access_token,
            // Google omits the refresh token on refresh: keep using the one we have.
            refresh_token: answer
                .refresh_token
                .or_else(|| Some(refresh_token.to_owned())),
            expires_at_unix: answer
                .expires_in
                .map(|s| chrono::Utc::now().timestamp() + s),
        })
    }
}

#[async_trait::async_trait]
impl TokenSource for OAuthTokenSource {
    async fn access_token(&self) -> Result<String> {
        self.token(false).await
    }

    async fn refresh_after_rejection(&self) -> Result<String> {
        self.token(true).await
    }
}
