//! Sign-in: `POST /login` with the owner password (form field `password`), keeping the
//! `muster_session` cookie with a [`SessionKeeper`](crate::SessionKeeper) so that every
//! process reuses it (muster `internal/api/login.go`, `handleLoginSubmit`).
//!
//! The session moves between three states. `Fresh`: no cookie yet; the first call takes the
//! kept one, and signs in only when there is none.
//! `SignedIn`: calls carry the cookie; on a 401 the client signs in once more, silently, with
//! the stored password, and retries the call once. `SignInAgain`: that did not help; every call
//! answers [`Error::SignInAgain`] without touching the network (so a changed password cannot
//! burn muster's 10-a-minute login limit) until [`MusterClient::login`] succeeds.

use std::fmt;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderValue, LOCATION, RETRY_AFTER, SET_COOKIE};
use reqwest::StatusCode;

use crate::client::MusterClient;
use crate::error::{Error, Result};
use crate::paths;

/// A secret string: the password or the session cookie. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(value: String) -> Self {
        Self(value)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Where the client's sign-in stands.
#[derive(Clone, Debug)]
pub(crate) enum SessionState {
    Fresh,
    SignedIn(Secret),
    SignInAgain,
}

impl MusterClient {
    /// Sign in now with the stored password, replacing any session (also the way out of
    /// [`Error::SignInAgain`]). Other calls sign in by themselves when needed.
    ///
    /// Errors: [`Error::WrongPassword`], [`Error::RateLimited`], [`Error::NotConfigured`],
    /// [`Error::Transport`].
    pub async fn login(&self) -> Result<()> {
        let mut state = self.inner.session.lock().await;
        let cookie = self.sign_in(&self.password()).await?;
        *state = SessionState::SignedIn(cookie);
        Ok(())
    }

    /// Sign in with a new owner password (after [`Error::SignInAgain`] because it changed on
    /// muster). Only when muster accepts it does it replace the stored one, for this client and
    /// its clones; a refused one leaves everything as it was.
    pub async fn sign_in_with(&self, password: String) -> Result<()> {
        let password = Secret::new(password);
        let mut state = self.inner.session.lock().await;
        let cookie = self.sign_in(&password).await?;
        *self
            .inner
            .password
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = password;
        *state = SessionState::SignedIn(cookie);
        Ok(())
    }

    fn password(&self) -> Secret {
        self.inner
            .password
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the client has given up signing in by itself (see [`Error::SignInAgain`]).
    pub async fn needs_sign_in(&self) -> bool {
        matches!(*self.inner.session.lock().await, SessionState::SignInAgain)
    }

    /// The cookie to send: the current one, or a fresh sign-in when there is none yet.
    pub(crate) async fn session_cookie(&self) -> Result<Secret> {
        let mut state = self.inner.session.lock().await;
        match &*state {
            SessionState::SignedIn(cookie) => Ok(cookie.clone()),
            SessionState::SignInAgain => Err(Error::SignInAgain),
            SessionState::Fresh => match self.kept_cookie(None) {
                Some(cookie) => {
                    *state = SessionState::SignedIn(cookie.clone());
                    Ok(cookie)
                }
                None => self.sign_in_from_fresh(&mut state).await,
            },
        }
    }

    async fn sign_in_from_fresh(&self, state: &mut SessionState) -> Result<Secret> {
        match self.sign_in(&self.password()).await {
            Ok(cookie) => {
                *state = SessionState::SignedIn(cookie.clone());
                Ok(cookie)
            }
            Err(e @ (Error::WrongPassword | Error::NotConfigured)) => {
                *state = SessionState::SignInAgain;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// The cookie the keeper holds, unless it is the one muster just refused.
    fn kept_cookie(&self, refused: Option<&Secret>) -> Option<Secret> {
        self.inner
            .keeper
            .load()
            .filter(|c| !c.is_empty())
            .map(Secret::new)
            .filter(|c| Some(c) != refused)
    }

    /// `refused` was answered 401: sign in once more, unless another call already did (then its
    /// cookie is used, so concurrent 401s cost one login, not one each).
    pub(crate) async fn renew_session(&self, refused: &Secret) -> Result<Secret> {
        let mut state = self.inner.session.lock().await;
        match &*state {
            SessionState::SignedIn(current) if current != refused => return Ok(current.clone()),
            SessionState::SignInAgain => return Err(Error::SignInAgain),
            _ => {}
        }
        // Another process may have signed in already: its cookie costs no sign-in.
        if let Some(cookie) = self.kept_cookie(Some(refused)) {
            *state = SessionState::SignedIn(cookie.clone());
            return Ok(cookie);
        }
        tracing::info!(base = %self.inner.base, "muster session expired; signing in again");
        match self.sign_in(&self.password()).await {
            Ok(cookie) => {
                *state = SessionState::SignedIn(cookie.clone());
                Ok(cookie)
            }
            Err(Error::WrongPassword | Error::NotConfigured) => {
                *state = SessionState::SignInAgain;
                Err(Error::SignInAgain)
            }
            Err(e) => {
                *state = SessionState::Fresh;
                Err(e)
            }
        }
    }

    /// The call was refused again right after a re-login: give up until [`Self::login`].
    pub(crate) async fn give_up_session(&self) {
        *self.inner.session.lock().await = SessionState::SignInAgain;
    }

    /// Post `/login` if the shared pacing record allows it, and keep what it gives.
    async fn sign_in(&self, password: &Secret) -> Result<Secret> {
        let keeper = &self.inner.keeper;
        if let Err(wait) = keeper.reserve_sign_in(SystemTime::now()) {
            return Err(Error::RateLimited {
                retry_after: Some(wait),
            });
        }
        match self.post_login(password).await {
            Ok(cookie) => {
                keeper.save(cookie.expose());
                Ok(cookie)
            }
            Err(Error::RateLimited { retry_after }) => {
                // muster's window is fixed, a minute long: waiting one covers it whenever it began.
                let wait = retry_after.unwrap_or(crate::session::SIGN_IN_WINDOW);
                keeper.sign_in_refused(SystemTime::now(), wait);
                Err(Error::RateLimited {
                    retry_after: Some(wait),
                })
            }
            Err(e) => Err(e),
        }
    }

    async fn post_login(&self, password: &Secret) -> Result<Secret> {
        let endpoint = format!("POST {}", paths::LOGIN);
        let url = self.url(paths::LOGIN);
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair(paths::LOGIN_PASSWORD_FIELD, password.expose())
            .finish();
        let response = self
            .inner
            .http
            .post(url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .timeout(self.inner.request_timeout)
            .send()
            .await
            .map_err(|e| Error::transport(&e))?;
        match response.status() {
            // muster answers 303 to send a browser on; other redirects or a 200 with the
            // cookie are accepted too, the cookie is what counts.
            s if s.is_redirection() || s.is_success() => session_from_headers(
                response.headers().get_all(SET_COOKIE).iter(),
            )
            .ok_or_else(|| {
                let to = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("nowhere");
                Error::bad(
                    &endpoint,
                    format!("{s} (to {to}) without a {} cookie", paths::SESSION_COOKIE),
                )
            }),
            StatusCode::UNAUTHORIZED => Err(Error::WrongPassword),
            StatusCode::TOO_MANY_REQUESTS => Err(Error::RateLimited {
                retry_after: response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs),
            }),
            // muster's 503 is its sign-in page saying no password is configured; a 503 from
            // anything else (a proxy while muster restarts) says nothing about muster's
            // configuration and passes: it must not leave the account at "sign in again".
            StatusCode::SERVICE_UNAVAILABLE => {
                let page = response.text().await.unwrap_or_default();
                if is_sign_in_page(&page) {
                    Err(Error::NotConfigured)
                } else {
                    Err(Error::Server {
                        endpoint,
                        status: 503,
                        message: "something in front of muster answered 503 (it may be \
                                  restarting); trying again later"
                            .into(),
                    })
                }
            }
            // muster's 400 is "That form could not be read."; an HTML page either way.
            StatusCode::BAD_REQUEST => Err(Error::bad(
                &endpoint,
                "400: muster could not read the sign-in form",
            )),
            status => Err(crate::client::error_from(&endpoint, status, response).await),
        }
    }
}

/// Whether an HTML answer of `POST /login` is muster's own sign-in page
/// (`internal/api/login.go`, `renderLoginPage`): its form posts the `password` field to
/// `/login`. A proxy's error page has no such form.
fn is_sign_in_page(page: &str) -> bool {
    page.contains("action=\"/login\"")
        && page.contains(&format!("name=\"{}\"", paths::LOGIN_PASSWORD_FIELD))
}

/// The `muster_session` value among `Set-Cookie` headers.
fn session_from_headers<'a>(headers: impl Iterator<Item = &'a HeaderValue>) -> Option<Secret> {
    headers
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == paths::SESSION_COOKIE && !value.is_empty())
        .map(|(_, value)| Secret::new(value.trim_matches('"').to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug_output() {
        let s = Secret::new("hunter2".into());
        assert_eq!(format!("{s:?}"), "[redacted]");
        let state = SessionState::SignedIn(s);
        assert!(!format!("{state:?}").contains("hunter2"));
    }

    #[test]
    fn the_session_cookie_is_found_among_other_cookies() {
        let headers = [
            HeaderValue::from_static("theme=dark; Path=/"),
            HeaderValue::from_static("muster_session=abc123; HttpOnly; SameSite=Lax; Path=/"),
        ];
        assert_eq!(
            session_from_headers(headers.iter()).map(|s| s.expose().to_owned()),
            Some("abc123".to_owned())
        );
        let none = [HeaderValue::from_static("muster_session=; Max-Age=0")];
        assert!(session_from_headers(none.iter()).is_none());
    }
}
