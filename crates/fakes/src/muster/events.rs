//! `GET /events` of the fake muster: Server-Sent Events exactly as muster writes them — a
//! `: connected` comment first, then `event: <name>` / `data: {"id":"…"}` frames, with no `id:`
//! lines, no replay and no heartbeat. The control API can cut every open stream, or play a
//! proxy that closes a silent stream after its read timeout.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, watch};

use super::broadcast::Broadcaster;
use super::state::Change;
use super::Shared;

/// The SSE frame muster writes for one change. muster's ids are strings on the stream whatever
/// the wire style of its JSON answers.
fn frame(change: &Change) -> Bytes {
    let (name, id) = match change {
        Change::Draft(id) => ("plugin.draft.changed", id),
        Change::Route(id) => ("plugin.route.changed", id),
        Change::Other { name, id } => (*name, id),
    };
    let data = serde_json::json!({ "id": id });
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

enum Phase {
    Greeting,
    Streaming,
}

/// One open stream's place at the broadcaster; leaving it (the stream ended or was dropped)
/// unsubscribes, as muster's handler does when its request context ends.
struct Subscription {
    broadcaster: Broadcaster,
    id: u64,
    changes: mpsc::Receiver<Change>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.broadcaster.unsubscribe(self.id);
    }
}

/// `GET /events`
pub(crate) async fn events(State(shared): State<Arc<Shared>>) -> Response {
    // Subscribe before answering: a change made after the client saw the head is delivered.
    let (id, changes) = shared.events.subscribe();
    let subscription = Subscription {
        broadcaster: shared.events.clone(),
        id,
        changes,
    };
    let mut cut = shared.cut.subscribe();
    cut.mark_unchanged();
    let read_timeout = *shared
        .proxy_read_timeout
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    // A proxy's read timeout: far in the future when there is no proxy.
    let silence = read_timeout.unwrap_or(Duration::from_secs(100 * 365 * 24 * 3600));
    let stream = futures_util::stream::unfold(
        (Phase::Greeting, subscription, cut),
        move |(phase, mut subscription, mut cut): (Phase, Subscription, watch::Receiver<u64>)| async move {
            if let Phase::Greeting = phase {
                let hello = Bytes::from_static(b": connected\n\n");
                return Some((
                    Ok::<_, Infallible>(hello),
                    (Phase::Streaming, subscription, cut),
                ));
            }
            tokio::select! {
                change = subscription.changes.recv() => {
                    let change = change?;
                    Some((Ok(frame(&change)), (Phase::Streaming, subscription, cut)))
                }
                _ = cut.changed() => None,
                // Every byte written restarts the proxy's timer (this future is made anew).
                _ = tokio::time::sleep(silence) => None,
            }
        },
    );
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}
