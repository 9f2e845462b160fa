//! countersign-core: everything Countersign knows and decides, without a GUI.
//!
//! It holds the domain (review items, their states, routes, decisions), the local SQLite mirror
//! and its migrations, the syncs that fill it from Gmail and muster, the decision outbox and its
//! dispatcher, and the rendering of a draft for review with its safety flags. The CLI and the
//! Tauri shell are thin layers over it. It must not depend on Tauri or on anything graphical;
//! it talks to the services only through `countersign-gmail` and `countersign-muster`,
//! converting their wire types at the boundary.

#![deny(missing_docs)]

pub mod actions;
pub mod answered;
pub mod app;
pub mod autostart;
pub mod decide;
pub mod domain;
pub mod edit;
pub mod error;
pub mod history;
pub mod live;
pub mod outbox;
pub mod paths;
pub mod reachability;
/// Review rendering, its own pure crate (`countersign-render`): bytes in, the review view out.
pub use countersign_render as render;
pub mod review;
pub mod rules;
pub mod secrets;
pub mod selection;
pub mod services;
pub mod store;
pub mod sync;

pub use domain::{
    DecisionKind, DecisionState, DispatchOutcome, ItemEvent, ItemState, OutcomeKind, Source,
};
pub use error::{Error, Result};
pub use store::{ItemFilter, ItemSummary, Store};
