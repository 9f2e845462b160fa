//! Google's tokeninfo endpoint: which scopes the user actually granted.
//!
//! Reference: <https://developers.google.com/identity/protocols/oauth2/native-app> ("Token
//! info"), `GET https://oauth2.googleapis.com/tokeninfo?access_token=…` answering
//! `{"aud","scope":"<space-separated>","exp","expires_in","email",…}`. The user may untick
//! scopes on the consent page, and yup-oauth2 does not report what was granted, so this is the
//! only way to know.

use crate::client::{read_answer, token_for_request, GmailClient};
use crate::error::{Error, Result};
use crate::wire;

/// What a token is good for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantedScopes {
    /// Scopes granted, as Google spells them.
    pub scopes: Vec<String>,
    /// The account's address, when the token carries the `email` scope.
    pub email: Option<String>,
    /// Seconds the token stays valid.
    pub expires_in: Option<u64>,
}

impl GrantedScopes {
    /// Whether `scope` was granted.
    pub fn contains(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// Ask `tokeninfo_url` about `access_token`.
pub async fn fetch_granted_scopes(
    http: &reqwest::Client,
    tokeninfo_url: &str,
    access_token: &str,
) -> Result<GrantedScopes> {
    let response = http
        .get(tokeninfo_url)
        .query(&[("access_token", access_token)])
        .send()
        .await
        .map_err(|e| Error::from_reqwest(&e))?;
    // tokeninfo answers 400 {"error":"invalid_token"} for a dead token, not Google's API
    // error shape.
    if response.status() == reqwest::StatusCode::BAD_REQUEST {
        return Err(Error::Unauthorized);
    }
    let body = read_answer(response).await?;
    let info: wire::TokenInfo = serde_json::from_slice(&body).map_err(|e| Error::BadResponse {
        detail: format!("tokeninfo answered unexpected JSON: {e}"),
    })?;
    Ok(GrantedScopes {
        scopes: info
            .scope
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        email: info.email,
        expires_in: info.expires_in.and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_u64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        }),
    })
}

impl GmailClient {
    /// The scopes of the token this client currently uses.
    /// A token refused by tokeninfo is refreshed once, as for any other call.
    pub async fn granted_scopes(&self) -> Result<GrantedScopes> {
        let token = token_for_request(self.tokens().access_token().await)?;
        match fetch_granted_scopes(self.http(), self.tokeninfo_url(), &token).await {
            Err(Error::Unauthorized) => {
                let token = token_for_request(self.tokens().refresh_after_rejection().await)?;
                fetch_granted_scopes(self.http(), self.tokeninfo_url(), &token).await
            }
            other => other,
        }
    }
}
