//! The consent "browser" for a fake Google (demo mode, tests, benchmarks): compiled only with
//! the `auto-consent` feature, so the app's production path carries no code that clicks
//! through a consent page.

use std::sync::Arc;
use std::time::Duration;

use countersign_gmail::Browser;

use super::GmailConnect;

/// A "browser" that accepts the consent page by itself and hands the code to the loopback
/// listener: for demo mode and tests, against the fake Google, whose consent page approves at
/// once. Never use it against Google.
pub fn auto_consent_browser() -> Browser {
    Browser::Custom(Arc::new(|url: String| {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(20))
                .build()
                .map_err(|e| e.to_string())?;
            let consent = http.get(&url).send().await.map_err(|e| e.to_string())?;
            let location = consent
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or("the consent page did not redirect")?
                // yup-oauth2 listens on 127.0.0.1 but names it localhost: stay on IPv4.
                .replacen("://localhost:", "://127.0.0.1:", 1);
            let back = http
                .get(&location)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !back.status().is_success() {
                return Err(format!("the loopback listener answered {}", back.status()));
            }
            Ok(())
        })
    }))
}

impl GmailConnect {
    /// Connect to a fake Google (demo mode, tests, benchmarks) whose consent page approves by
    /// itself: the consent is played by [`auto_consent_browser`].
    pub fn auto_consent(
        client_secret_json: String,
        api_base: String,
        tokeninfo_url: String,
    ) -> GmailConnect {
        GmailConnect {
            client_secret_json,
            api_base,
            tokeninfo_url,
            browser: auto_consent_browser(),
            consent_timeout: Duration::from_secs(20),
        }
    }
}
