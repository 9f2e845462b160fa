//! The two ways in: a draft's raw bytes (Gmail) or a muster plugin's plain-text reply, read
//! into the review view, and the safety flags computed from it. Above both `view` (which
//! reads) and `flags` (which judges what was read), so neither needs the other's way back.

use crate::flags;
use crate::view::{self, ParentMessage, RenderOptions, ReviewView};

/// Renders a raw RFC 5322 draft into its review view.
pub fn render_message(raw: &[u8], options: &RenderOptions) -> ReviewView {
    let (mut view, archives, duplicates) = view::read_message(raw, options);
    view.flags = flags::compute(&view, options, &archives, &duplicates, true);
    view
}

/// Renders a muster plugin draft: its plain-text reply and what it answers.
///
/// muster drafts carry no recipients or threading headers (the plugin addresses and threads
/// the reply), so only body-level flags can apply.
pub fn render_plain_text(
    text: &str,
    answers: Option<&ParentMessage>,
    options: &RenderOptions,
) -> ReviewView {
    let (mut view, options) = view::read_plain_text(text, answers, options);
    view.flags = flags::compute(&view, &options, &[], &[], false);
    view
}
