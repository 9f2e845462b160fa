//! The preview of one attachment for the review pane, chosen from what its bytes are.

use serde::{Deserialize, Serialize};

use super::AttachmentMeta;

/// A preview of one attachment, for the review pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentPreview {
    /// A raster image, inlined.
    Image {
        /// `data:` URI of the image.
        #[serde(rename = "dataUri")]
        data_uri: String,
    },
    /// Text, the first bytes only.
    Text {
        /// The text (lossy UTF-8).
        text: String,
        /// More text followed.
        truncated: bool,
    },
    /// A PDF: the UI renders its first page with pdf.js from the bytes.
    Pdf,
    /// Nothing can be previewed safely.
    None {
        /// The best known type.
        #[serde(rename = "contentType")]
        content_type: Option<String>,
        /// Size in bytes.
        size: u64,
    },
}

impl AttachmentPreview {
    /// Chooses a preview from what the bytes *are* (sniffed), not what the draft says.
    ///
    /// Text previews stop at `max_text_bytes`. SVG is never previewed: it is a document, not an
    /// image, and the preview must not depend on the sandbox to be safe.
    pub fn of(meta: &AttachmentMeta, bytes: &[u8], max_text_bytes: usize) -> Self {
        let sniffed = meta.sniffed_type.as_deref();
        let declared = meta.declared_type.as_deref().unwrap_or("");
        match sniffed {
            Some(t @ ("image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp")) => {
                use base64::Engine as _;
                AttachmentPreview::Image {
                    data_uri: format!(
                        "data:{t};base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(bytes)
                    ),
                }
            }
            Some("application/pdf") => AttachmentPreview::Pdf,
            None if declared.starts_with("text/") && declared != "text/html" => {
                let cut = bytes.len().min(max_text_bytes);
                let mut text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
                // A cut inside a UTF-8 sequence would end in a replacement char: drop it.
                if cut < bytes.len() && text.ends_with('\u{fffd}') {
                    text.pop();
                }
                AttachmentPreview::Text {
                    text,
                    truncated: cut < bytes.len(),
                }
            }
            _ => AttachmentPreview::None {
                content_type: meta
                    .sniffed_type
                    .clone()
                    .or_else(|| meta.declared_type.clone()),
                size: meta.size,
            },
        }
    }
}
