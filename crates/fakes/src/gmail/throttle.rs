//! A slow link in front of the Gmail REST and upload endpoints: while a throttle is set, the
//! fake reads every request body and writes every answer body at most that many bytes per
//! second, and at 0 bytes per second it moves no byte at all while the connection stays open
//! (a link that died without a reset, the case an idle timeout exists for).
//!
//! The rate is taken when a request arrives, so changing it affects the next requests, not one
//! already moving. The request is logged and acted on only once its whole body has arrived, as
//! at Google: a send whose upload never finishes sends nothing.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::{Stream, StreamExt};

use super::Shared;

/// Pieces are small enough that even a slow rate moves something several times a second (a
/// client's idle watchdog sees steady progress) and large enough that a fast one is not a
/// storm of wake-ups.
const MAX_PIECE: usize = 64 * 1024;

/// The middleware: paces the request body and the answer body at the throttle set now.
pub(crate) async fn pace(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(bytes_per_second) = shared.lock().throttle_bytes_per_second else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let request = Request::from_parts(
        parts,
        Body::from_stream(paced(body.into_data_stream(), bytes_per_second)),
    );
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        Body::from_stream(paced(body.into_data_stream(), bytes_per_second)),
    )
}

struct Pacer<S> {
    inner: S,
    pending: Bytes,
    started: tokio::time::Instant,
    moved: u64,
    bytes_per_second: u64,
}

/// `body` again, at most `bytes_per_second`; nothing at all at 0.
fn paced<S>(body: S, bytes_per_second: u64) -> impl Stream<Item = Result<Bytes, axum::Error>>
where
    S: Stream<Item = Result<Bytes, axum::Error>> + Unpin + Send + 'static,
{
    let pacer = Pacer {
        inner: body,
        pending: Bytes::new(),
        started: tokio::time::Instant::now(),
        moved: 0,
        bytes_per_second,
    };
    futures_util::stream::unfold(pacer, |mut p| async move {
        if p.bytes_per_second == 0 {
            // A dead link: the connection stays open and nothing moves, ever.
            std::future::pending::<()>().await;
        }
        while p.pending.is_empty() {
            match p.inner.next().await? {
                Ok(chunk) => p.pending = chunk,
                Err(e) => return Some((Err(e), p)),
            }
        }
        let piece_size = usize::try_from(p.bytes_per_second / 10)
            .unwrap_or(MAX_PIECE)
            .clamp(1, MAX_PIECE);
        let piece = p.pending.split_to(piece_size.min(p.pending.len()));
        p.moved += piece.len() as u64;
        // Paced by the total moved, not piece by piece, so timer overshoot does not add up:
        // byte n leaves no earlier than n / rate after the start.
        let due = p.started + Duration::from_secs_f64(p.moved as f64 / p.bytes_per_second as f64);
        tokio::time::sleep_until(due).await;
        Some((Ok(piece), p))
    })
}
