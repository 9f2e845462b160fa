//! Filling the mirror from the services: Gmail drafts and muster plugin drafts and routes.

pub mod gmail;
pub mod muster;

pub use gmail::{sync_gmail, GmailSyncReport};
pub use muster::{sync_muster, MusterSyncReport};
