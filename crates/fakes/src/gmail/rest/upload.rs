//! Media uploads (`/upload/gmail/v1/…`): the metadata and the message of an upload, as Google's
//! upload guide describes them.

use super::*;

/// The resource of an upload's metadata part; an upload without one (`uploadType=media`)
/// carries an empty resource.
pub(super) fn parse_metadata<T: for<'de> Deserialize<'de> + Default>(
    metadata: Option<Vec<u8>>,
) -> Result<T, ApiError> {
    metadata.map_or_else(|| Ok(T::default()), |json| parse_body(&json))
}

/// Whether `content_type` names one of `essence` (`application/json`) or, with a `/*`
/// ending, one of its family (`message/*`), parameters aside.
fn is_type(content_type: &str, essence: &str) -> bool {
    let kind = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.strip_suffix("/*") {
        Some(family) => kind
            .split_once('/')
            .is_some_and(|(top, sub)| top == family && !sub.is_empty()),
        None => kind == essence,
    }
}

/// The metadata JSON (if any) and the message of an upload, as Google's upload guide describes
/// them (<https://developers.google.com/workspace/gmail/api/guides/uploads>):
/// - `uploadType=media`: the body is the message itself, its `Content-Type` one the method
///   accepts (`message/*`: the discovery document's `mediaUpload.accept` of every Gmail
///   upload method); there is no metadata.
/// - `uploadType=multipart`: a `multipart/related` body of the resource's metadata
///   (`Content-Type: application/json`) and then the media (`message/*`).
///
/// A media type the method does not take answers Google's 400 ("Media type '…' is not
/// supported. Valid media types: [message/*]"). A metadata part that is not JSON answers the
/// same 400 shape; Google documents no text for that case, so the message is the fake's own.
/// Resumable uploads are not served by the fake.
pub(super) fn upload_parts(
    req: &Req,
    headers: &axum::http::HeaderMap,
    body: &[u8],
) -> Result<(Option<Vec<u8>>, Vec<u8>), ApiError> {
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let (metadata, media) = match req.param("uploadType") {
        Some("media") => {
            if !is_type(content_type, "message/*") {
                return Err(ApiError::unsupported_media(content_type));
            }
            (None, body.to_vec())
        }
        Some("multipart") => {
            let (metadata, media) = mime::related_parts(content_type, body)
                .ok_or_else(|| ApiError::invalid("Invalid multipart request"))?;
            if !is_type(&metadata.content_type, "application/json") {
                return Err(
                    ApiError::unsupported_media(&metadata.content_type).with_message(format!(
                        "Metadata part has media type '{}'; it must be application/json",
                        metadata.content_type
                    )),
                );
            }
            if !is_type(&media.content_type, "message/*") {
                return Err(ApiError::unsupported_media(&media.content_type));
            }
            (Some(metadata.content), media.content)
        }
        other => {
            return Err(ApiError::invalid(format!(
                "Invalid upload type '{}': this fake serves uploadType=media and multipart",
                other.unwrap_or_default()
            )))
        }
    };
    if media.len() > crate::gmail::MAX_UPLOAD_BYTES {
        return Err(ApiError::payload_too_large(crate::gmail::MAX_UPLOAD_BYTES));
    }
    Ok((metadata, media))
}
