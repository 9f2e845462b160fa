//! The OAuth grants the fake issued: access and refresh tokens, their scopes and expiry.

use super::*;

impl State {
    /// Issue an access token (and optionally a refresh token) for `scopes`.
    pub fn issue(&mut self, scopes: Vec<String>, with_refresh: bool) -> (String, Option<String>) {
        let refresh = with_refresh.then(|| {
            let token = self.new_secret("1//fake-refresh-");
            self.refresh_tokens.insert(
                token.clone(),
                RefreshGrant {
                    scopes: scopes.clone(),
                    revoked: false,
                    issued_at: Instant::now(),
                },
            );
            token
        });
        let access = self.new_secret("ya29.fake-");
        self.access_tokens.insert(
            access.clone(),
            Grant {
                scopes,
                expires_at: Instant::now() + Duration::from_secs(ACCESS_TOKEN_SECONDS),
                refresh_token: refresh.clone(),
            },
        );
        (access, refresh)
    }

    /// Revoke every refresh token, and the access tokens issued with them, as Google does when
    /// the user removes the app's access.
    pub fn revoke_all(&mut self) {
        for grant in self.refresh_tokens.values_mut() {
            grant.revoked = true;
        }
        self.access_tokens.clear();
    }

    /// Whether a refresh token may still be used: not revoked, not past its lifetime.
    pub fn refresh_grant(&self, refresh_token: &str) -> Option<&RefreshGrant> {
        self.refresh_tokens.get(refresh_token).filter(|g| {
            !g.revoked
                && self
                    .refresh_token_lifetime
                    .is_none_or(|life| g.issued_at.elapsed() < life)
        })
    }

    pub fn expire_access_tokens(&mut self) {
        let past = Instant::now();
        for grant in self.access_tokens.values_mut() {
            grant.expires_at = past;
        }
    }

    /// The live grant of an access token.
    pub fn grant(&self, access_token: &str) -> Option<&Grant> {
        self.access_tokens
            .get(access_token)
            .filter(|g| g.expires_at > Instant::now())
    }
}
