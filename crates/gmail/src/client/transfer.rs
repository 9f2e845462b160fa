//! A transfer on the wire: a request body handed over in pieces, an answer read piece by piece,
//! and the idle watch that ends a transfer on which nothing has moved for too long.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{self, Error, Result};

/// Transfers move in pieces of this size; each piece taken by the connection is progress.
const TRANSFER_PIECE: usize = 64 * 1024;

/// When a transfer last moved a byte.
#[derive(Clone)]
pub(super) struct Progress(Arc<std::sync::Mutex<tokio::time::Instant>>);

impl Progress {
    pub(super) fn new() -> Self {
        Progress(Arc::new(std::sync::Mutex::new(tokio::time::Instant::now())))
    }

    pub(super) fn moved(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = tokio::time::Instant::now();
    }

    pub(super) fn last(&self) -> tokio::time::Instant {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `bytes` as a request body handed over in [`TRANSFER_PIECE`]s: the connection takes the
/// next piece only once it has room, so taking one is progress on the wire.
pub(super) fn progressing_body(bytes: Vec<u8>, progress: Progress) -> reqwest::Body {
    let bytes = Arc::new(bytes);
    let len = bytes.len();
    let pieces = (0..len).step_by(TRANSFER_PIECE).map(move |start| {
        progress.moved();
        Ok::<_, std::io::Error>(bytes[start..(start + TRANSFER_PIECE).min(len)].to_vec())
    });
    reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
}

/// Run `transfer` until it ends, or until `idle` has passed without progress: a link that
/// died mid-transfer (no reset, no byte) ends here as "uncertain", like a timeout, while one
/// that keeps moving, however slowly, is never cut.
pub(super) async fn watch_idle<T>(
    method: &'static str,
    progress: &Progress,
    idle: Duration,
    transfer: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    tokio::pin!(transfer);
    loop {
        tokio::select! {
            done = &mut transfer => return done,
            _ = tokio::time::sleep_until(progress.last() + idle) => {
                if progress.last() + idle <= tokio::time::Instant::now() {
                    tracing::debug!(method, idle_ms = idle.as_millis() as u64, "gmail transfer stalled");
                    return Err(Error::Transport { request_sent: true });
                }
            }
        }
    }
}

/// Read an answer: the body on success, a typed error otherwise.
pub(crate) async fn read_answer(response: reqwest::Response) -> Result<Vec<u8>> {
    read_answer_with_progress(response, None).await
}

/// [`read_answer`], recording each piece of the body that arrives in `progress`.
pub(super) async fn read_answer_with_progress(
    mut response: reqwest::Response,
    progress: Option<&Progress>,
) -> Result<Vec<u8>> {
    let status = response.status().as_u16();
    let www_authenticate = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let retry_after_header = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| error::parse_retry_after_header(v, chrono::Utc::now()));
    let body = match progress {
        None => response
            .bytes()
            .await
            .map_err(|e| Error::from_reqwest(&e))?
            .to_vec(),
        Some(progress) => {
            let mut body = Vec::new();
            while let Some(piece) = response
                .chunk()
                .await
                .map_err(|e| Error::from_reqwest(&e))?
            {
                progress.moved();
                body.extend_from_slice(&piece);
            }
            body
        }
    };
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        Err(
            match error::from_response(status, www_authenticate.as_deref(), &body) {
                // The time in Google's message wins; the header is the fallback.
                Error::RateLimited { retry_after: None } => Error::RateLimited {
                    retry_after: retry_after_header,
                },
                other => other,
            },
        )
    }
}
