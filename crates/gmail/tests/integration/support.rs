//! Shared set-up: a fake Gmail and a client pointed at it.

use std::sync::Arc;
use std::time::Duration;

use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_gmail::oauth::GMAIL_MODIFY;
use countersign_gmail::{ClientConfig, FixedToken, GmailClient, RetryPolicy};

pub async fn fake() -> FakeGmail {
    fake_with(GmailConfig::default()).await
}

pub async fn fake_with(config: GmailConfig) -> FakeGmail {
    FakeGmail::start(config).await.expect("fake Gmail starts")
}

/// Wait until the fake's port accepts connections (`listening`) or refuses them.
pub async fn until_listening(fake: &FakeGmail, listening: bool) {
    fake.server().until_listening(listening).await;
}

/// Retries that are quick enough for tests.
pub fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 8,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(200),
    }
}

pub fn config(fake: &FakeGmail, retry: RetryPolicy) -> ClientConfig {
    let mut config = ClientConfig::with_endpoints(fake.api_base(), fake.tokeninfo_url());
    config.retry = retry;
    config
}

/// A client holding a token for `scopes`.
pub fn client_with_scopes(fake: &FakeGmail, scopes: &[&str], retry: RetryPolicy) -> GmailClient {
    let tokens = fake.issue_tokens(scopes);
    GmailClient::new(
        config(fake, retry),
        Arc::new(FixedToken::new(tokens.access_token)),
    )
    .expect("client builds")
}

/// A gmail.modify client with quick retries.
pub fn client(fake: &FakeGmail) -> GmailClient {
    client_with_scopes(fake, &[GMAIL_MODIFY], quick_retries())
}

/// A gmail.modify client that never retries, to see single answers.
pub fn client_no_retry(fake: &FakeGmail) -> GmailClient {
    client_with_scopes(fake, &[GMAIL_MODIFY], RetryPolicy::never())
}

/// A reply to `parent_id` with its own Message-ID.
pub fn reply(message_id: &str, body: &str) -> Vec<u8> {
    format!(
        "From: owner@example.com\r\nTo: alice@example.org\r\nSubject: Re: Lunch\r\nMessage-ID: {message_id}\r\nIn-Reply-To: <parent@example.org>\r\nReferences: <parent@example.org>\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// The message a reply answers.
pub fn parent() -> Vec<u8> {
    b"From: Alice <alice@example.org>\r\nTo: owner@example.com\r\nSubject: Lunch\r\nMessage-ID: <parent@example.org>\r\n\r\nLunch on Friday?\r\n".to_vec()
}
