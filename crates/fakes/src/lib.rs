//! countersign-fakes: faithful loopback fakes of Gmail (with its OAuth endpoints) and of muster's
//! owner API, used by every test that crosses a network and by the desktop app's demo mode.
//!
//! The fakes follow the real services — Google's discovery document and error bodies, muster's
//! contract in `docs/muster.md` — not our clients. This crate depends on nothing of ours: wire
//! types are declared here again on purpose, so that a client bug cannot be mirrored by the fake.
//! Every fake binds 127.0.0.1 and can inject faults (see [`server`]).

#![deny(missing_docs)]

pub mod gmail;
pub mod muster;
pub mod secret_service;
pub mod server;

pub use muster::{FakeMuster, MusterConfig};

/// What a fake holds when it starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seed {
    /// Nothing: tests file what they need through the control API.
    #[default]
    Empty,
    /// Realistic drafts that show every feature of the app.
    Demo,
}
