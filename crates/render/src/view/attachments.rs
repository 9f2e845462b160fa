//! Listing a draft's attachments: their decoded bytes as the recipient would save them, what
//! they really are, and the inline images the HTML body may show.

use std::borrow::Cow;
use std::collections::HashMap;

use mail_parser::{Message, MessagePart, MimeHeaders, PartType};
use sha2::{Digest, Sha256};

use super::super::sanitize::{self, CidImage};
use super::super::sniff;
use super::body::{content_type_of, fallback_body_part};
use super::AttachmentMeta;

/// The decoded bytes of a part as the recipient would save them.
fn part_bytes<'m>(part: &'m MessagePart<'m>, raw: &'m [u8]) -> Option<Cow<'m, [u8]>> {
    match &part.body {
        PartType::Binary(b) | PartType::InlineBinary(b) => Some(Cow::Borrowed(b.as_ref())),
        PartType::Text(t) | PartType::Html(t) => {
            // mail-parser hands text parts over already converted to UTF-8; a saved attachment
            // must keep its own charset, so decode the transfer encoding again from the source.
            let end = (part.offset_end as usize).min(raw.len());
            let start = (part.offset_body as usize).min(end);
            let source = &raw[start..end];
            let decoded = if part.is_encoding_problem {
                None
            } else {
                match part.encoding {
                    mail_parser::Encoding::Base64 => {
                        mail_parser::decoders::base64::base64_decode(source)
                    }
                    mail_parser::Encoding::QuotedPrintable => {
                        mail_parser::decoders::quoted_printable::quoted_printable_decode(source)
                    }
                    mail_parser::Encoding::None => None,
                }
            };
            match decoded {
                Some(bytes) => Some(Cow::Owned(bytes)),
                None => {
                    let unchanged = matches!(part.encoding, mail_parser::Encoding::None)
                        && std::str::from_utf8(source).is_ok_and(|s| s == t.as_ref());
                    Some(if unchanged {
                        Cow::Borrowed(source)
                    } else {
                        Cow::Borrowed(t.as_bytes())
                    })
                }
            }
        }
        PartType::Message(_) => {
            let end = (part.offset_end as usize).min(raw.len());
            let start = (part.offset_body as usize).min(end);
            Some(Cow::Borrowed(&raw[start..end]))
        }
        PartType::Multipart(_) => None,
    }
}

pub(super) fn collect_attachments<'m>(
    message: &'m Message<'m>,
    raw: &'m [u8],
) -> Vec<(AttachmentMeta, Cow<'m, [u8]>)> {
    let mut out = Vec::with_capacity(message.attachments.len());
    let shown_as_body = fallback_body_part(message);
    for &id in &message.attachments {
        if shown_as_body == Some(id as usize) {
            continue;
        }
        let Some(part) = message.parts.get(id as usize) else {
            continue;
        };
        let Some(bytes) = part_bytes(part, raw) else {
            continue;
        };
        let inline = part
            .content_disposition()
            .is_some_and(|d| d.ctype().eq_ignore_ascii_case("inline"));
        let meta = AttachmentMeta {
            index: out.len(),
            file_name: part.attachment_name().map(str::to_owned),
            declared_type: content_type_of(part),
            sniffed_type: sniff::sniff(&bytes).map(str::to_owned),
            size: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(&bytes)),
            inline,
            content_id: part.content_id().map(|c| {
                let c = c.trim();
                c.trim_start_matches('<').trim_end_matches('>').to_owned()
            }),
        };
        out.push((meta, bytes));
    }
    out
}

/// Every part with a Content-ID whose bytes really are a raster image.
pub(super) fn cid_images(message: &Message<'_>, raw: &[u8]) -> HashMap<String, CidImage> {
    let mut map = HashMap::new();
    for part in &message.parts {
        let Some(cid) = part.content_id() else {
            continue;
        };
        if !matches!(part.body, PartType::Binary(_) | PartType::InlineBinary(_)) {
            continue;
        }
        let Some(bytes) = part_bytes(part, raw) else {
            continue;
        };
        // Trust the bytes, not the label: a "PNG" that is really HTML is not inlined.
        if let Some(t @ ("image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp")) =
            sniff::sniff(&bytes)
        {
            map.entry(sanitize::normalize_cid(cid))
                .or_insert_with(|| CidImage {
                    content_type: t.to_owned(),
                    bytes: bytes.into_owned(),
                });
        }
    }
    map
}
