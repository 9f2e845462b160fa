//! Where the client gets its OAuth access token from.
//!
//! [`TokenSource`] is implemented by [`crate::oauth::OAuthTokenSource`] (stored tokens, refreshed
//! at Google's token endpoint) and by [`FixedToken`] for tests and scripts.

use crate::error::Result;

/// Gives the bearer token for the next Gmail request.
#[async_trait::async_trait]
pub trait TokenSource: Send + Sync {
    /// A currently valid access token (refreshed first when it is about to expire).
    async fn access_token(&self) -> Result<String>;

    /// Called after Gmail answered 401 to the token last given: fetch a new one now.
    /// The default gives the same token again, which makes the client report `Unauthorized`.
    async fn refresh_after_rejection(&self) -> Result<String> {
        self.access_token().await
    }
}

/// A token that never changes (tests, or a token obtained elsewhere).
#[derive(Clone)]
pub struct FixedToken(String);

impl FixedToken {
    /// Use `token` for every request.
    pub fn new(token: impl Into<String>) -> Self {
        FixedToken(token.into())
    }
}

impl std::fmt::Debug for FixedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FixedToken(<redacted>)")
    }
}

#[async_trait::async_trait]
impl TokenSource for FixedToken {
    async fn access_token(&self) -> Result<String> {
        Ok(self.0.clone())
    }
}
