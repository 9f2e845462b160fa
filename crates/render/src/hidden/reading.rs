//! What reading a draft's HTML finds: the hidden passages and the text a recipient sees.

use serde::{Deserialize, Serialize};

use crate::machine::MachineText;
use crate::styling::UnverifiableStyle;

/// A passage of the HTML body that recipients' mail programs do not display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HiddenPassage {
    /// The hidden words, whitespace collapsed.
    pub text: String,
    /// How they are hidden, in short: `display:none`, `white on white`,
    /// `<style> rule .x: display:none`.
    pub technique: String,
    /// The review shows these words (the sanitizer dropped what hides them), although
    /// recipients do not see them.
    pub shown_in_review: bool,
    /// The other way round: recipients see these words (a `<style>` rule shows what an inline
    /// style hides), and this review does not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_recipients_see: bool,
}

/// What reading the draft's HTML found.
#[derive(Debug, Default)]
pub(crate) struct HtmlReading {
    /// Hidden passages, in document order.
    pub passages: Vec<HiddenPassage>,
    /// The text a recipient sees: blocks on their own lines, hidden text left out.
    pub visible_text: String,
    /// Styling that could change what recipients see and that is not evaluated.
    pub unverifiable: Vec<UnverifiableStyle>,
    /// Texts programs read that the rendering does not show (alt, comments, …).
    pub machine: Vec<MachineText>,
    /// The HTML to sanitize for the review: the draft's own, with the `<style>` rules that apply
    /// on a desktop written into `style` attributes; `None` when it has no rules.
    pub review_html: Option<String>,
}
