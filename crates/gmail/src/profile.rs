//! `users.getProfile`: the mailbox's address and current history id.
//!
//! Reference: <https://developers.google.com/gmail/api/reference/rest/v1/users/getProfile>.

use crate::client::{Call, GmailClient};
use crate::error::Result;
use crate::quota::Method;
use crate::wire;

/// The signed-in mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The account's address.
    pub email_address: String,
    /// The mailbox's current history id (start of the next incremental sync).
    pub history_id: String,
    /// Messages in the mailbox.
    pub messages_total: Option<i64>,
    /// Threads in the mailbox.
    pub threads_total: Option<i64>,
}

impl GmailClient {
    /// Read the profile (`getProfile`, 1 unit).
    pub async fn profile(&self) -> Result<Profile> {
        let profile: wire::Profile = self
            .execute(&Call::get(Method::GetProfile, "/profile"))
            .await?;
        Ok(Profile {
            email_address: profile.email_address,
            history_id: profile.history_id,
            messages_total: profile.messages_total,
            threads_total: profile.threads_total,
        })
    }
}
