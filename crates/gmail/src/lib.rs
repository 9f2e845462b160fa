//! countersign-gmail: the Gmail REST client, Google OAuth, and token storage for Countersign.
//!
//! - [`GmailClient`] calls Gmail for one account: drafts ([`GmailClient::list_drafts`],
//!   [`GmailClient::get_draft_raw`], [`GmailClient::get_draft_minimal`],
//!   [`GmailClient::send_draft`], [`GmailClient::delete_draft`]), messages
//!   ([`GmailClient::list_messages`], [`GmailClient::find_sent_by_message_id`],
//!   [`GmailClient::get_message_metadata`], [`GmailClient::get_message_raw`]), threads
//!   ([`GmailClient::get_thread_metadata`]), history ([`GmailClient::list_draft_history`]),
//!   labels ([`GmailClient::list_labels`]),
//!   the profile and the granted scopes. Reads wait for quota and retry; sends and deletes
//!   never retry.
//! - [`oauth::connect`] runs the consent flow; [`oauth::OAuthTokenSource`] gives access tokens
//!   afterwards; [`TokenStore`] keeps tokens in the OS keyring or a 0600 file.
//! - Errors are typed from Google's error JSON ([`Error`]); none ever contains a token.
//!
//! Binaries must filter yup-oauth2's debug logs with [`oauth::LOG_FILTER_DIRECTIVE`].

#![deny(missing_docs)]

mod client;
pub mod drafts;
mod error;
pub mod history;
pub mod labels;
pub mod messages;
pub mod oauth;
pub mod profile;
pub mod quota;
pub mod retry;
pub mod threads;
mod token;
pub mod token_store;
pub mod tokeninfo;
mod wire;

pub use client::{
    tokeninfo_url_for, ClientConfig, GmailClient, DEFAULT_IDLE_TIMEOUT, GOOGLE_API_BASE,
    GOOGLE_TOKENINFO_URL,
};
pub use drafts::{DraftRef, RawDraft, SentMessage};
pub use error::{Error, Result, CLIENT_GONE_SENTENCE, GRANT_ENDED_SENTENCE};
pub use history::{HistoryChanges, HistoryRecord};
pub use labels::{Label, LabelKind};
pub use messages::{MessageMetadata, MessageQuery, MessageRef};
pub use oauth::{
    can_read, can_send, connect, Browser, ClientSecret, ConnectOptions, Connection,
    OAuthTokenSource, OpenUrl, RefusalSentence, LOG_FILTER_DIRECTIVE, WEB_CLIENT_SENTENCE,
};
pub use profile::Profile;
pub use quota::{Method, QuotaLimiter};
pub use retry::RetryPolicy;
pub use token::{FixedToken, TokenSource};
pub use token_store::{OAuthTokens, TokenStorageKind, TokenStore};
pub use tokeninfo::GrantedScopes;
pub use wire::{decode_raw, encode_raw};
