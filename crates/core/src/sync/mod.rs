//! Filling the mirror from the services: Gmail drafts and muster plugin drafts and routes.

pub mod gmail;
pub mod muster;

pub use gmail::{sync_gmail, sync_gmail_with, GmailSyncReport, Listing, LISTING_INTERVAL};
pub use muster::{sync_muster, MusterSyncReport};
