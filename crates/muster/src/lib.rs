//! countersign-muster: a client of muster's owner API for plugin reply drafts — sign-in with the
//! owner password, drafts, routes and messages, the owner's decision, and live events.
//!
//! The contract it follows is `docs/muster.md`; every path and field name is in [`paths`].
//!
//! ```no_run
//! # async fn demo() -> countersign_muster::Result<()> {
//! use countersign_muster::{Decision, DecideOutcome, DraftState, MusterClient};
//! let muster = MusterClient::new("http://127.0.0.1:8105".parse().unwrap(), "password".into())?;
//! for draft in muster.list_drafts(Some(DraftState::Pending)).await?.records {
//!     match muster.decide(&draft.id, Decision::Approve, None, &draft.updated_at).await? {
//!         DecideOutcome::Queued { note, .. } => println!("{note}"),
//!         other => println!("not approved: {other:?}"),
//!     }
//! }
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod client;
mod drafts;
mod error;
mod events;
mod listed;
mod login;
mod messages;
pub mod paths;
mod routes;
mod session;
mod wire;

pub use client::{MusterClient, DEFAULT_REQUEST_TIMEOUT};
pub use drafts::{
    CheckState, DecideOutcome, Decision, DraftState, InReplyTo, PluginDraft, SendResult,
};
pub use error::{Error, Result};
pub use events::{EventOptions, MusterEvent};
pub use listed::{Listed, Unreadable};
pub use messages::PluginMessage;
pub use routes::{Route, RouteState};
pub use session::{
    MemorySessionKeeper, SessionKeeper, SignInRecord, SIGN_INS_PER_WINDOW, SIGN_IN_WINDOW,
};
pub use url::Url;
