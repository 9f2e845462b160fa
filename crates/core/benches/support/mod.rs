//! What the benchmarks that run against the fakes share: their counts from the environment and
//! a Gmail account connected to the fake. Each bench uses a part of it.
#![allow(dead_code)]

use countersign_core::services::{GmailConnect, Services};
use countersign_core::store::Account;
use countersign_core::Store;
use countersign_fakes::gmail::FakeGmail;

/// The count named by environment variable `var`, or `default`.
pub fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Run a bench's async body on a multi-threaded runtime, as the app runs.
pub fn block_on<F: std::future::Future>(body: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(body)
}

/// `gmail` connected as an account of `store`, consent given by the fake.
pub async fn connect_fake_gmail(services: &Services, store: &Store, gmail: &FakeGmail) -> Account {
    services
        .connect_gmail(
            store,
            GmailConnect::auto_consent(
                gmail.client_secret_json().to_string(),
                gmail.api_base(),
                gmail.tokeninfo_url(),
            ),
        )
        .await
        .expect("connect the fake Gmail")
}
