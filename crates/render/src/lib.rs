//! Rendering a draft for review: the view model (addresses, bodies, attachments), sanitized
//! HTML for a sandboxed frame, safety flags and the diff between two versions.
//!
//! A pure library: no I/O, no network, no database. Every entry point accepts any bytes and
//! returns a view; problems become warnings in it. See `docs/rendering.md`.

pub mod alternatives;
pub mod diff;
mod dom;
mod flag;
pub mod flags;
pub mod hidden;
mod links;
mod machine;
mod repair;
pub mod reveal;
mod review;
pub mod sanitize;
pub mod sniff;
mod styling;
pub mod text;
pub mod unicode;
pub mod view;

pub use alternatives::AlternativesDifference;
pub use diff::{diff_versions, DraftBytes, RenderedDraft, VersionDiff};
pub use flags::{Flag, FlagKind};
pub use hidden::HiddenPassage;
pub use machine::MachineText;
pub use reveal::render_reveal;
pub use review::{render_message, render_plain_text};
pub use styling::UnverifiableStyle;
pub use unicode::InvisibleCharacters;
pub use view::parse_message;
pub use view::{
    attachment_bytes, Address, AttachmentMeta, AttachmentPreview, Link, ParentMessage,
    RemoteContent, RenderOptions, ReviewView, Warning, WarningKind,
};
