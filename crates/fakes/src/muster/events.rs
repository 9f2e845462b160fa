//! `GET /events` of the fake muster: Server-Sent Events exactly as muster writes them — a
//! `: connected` comment first, then `event: <name>` / `data: {"id":"…"}` frames, with no `id:`
//! lines, no replay and no heartbeat. The control API can cut every open stream.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tokio::sync::{broadcast, watch};

use super::state::Change;
use super::Shared;

/// The SSE frame muster writes for one change.
fn frame(change: &Change, numeric_ids: bool) -> Bytes {
    let (name, id) = match change {
        Change::Draft(id) => ("plugin.draft.changed", id),
        Change::Route(id) => ("plugin.route.changed", id),
    };
    let data = match id.parse::<u64>() {
        Ok(n) if numeric_ids => serde_json::json!({ "id": n }),
        _ => serde_json::json!({ "id": id }),
    };
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

enum Phase {
    Greeting,
    Streaming,
}

/// `GET /events`
pub(crate) async fn events(State(shared): State<Arc<Shared>>) -> Response {
    // Subscribe before answering: a change made after the client saw the head is delivered.
    let changes = shared.events.subscribe();
    let numeric_ids = shared.store().style.numeric_ids;
    let mut cut = shared.cut.subscribe();
    cut.mark_unchanged();
    let stream = futures_util::stream::unfold(
        (Phase::Greeting, changes, cut),
        move |(phase, mut changes, mut cut): (
            Phase,
            broadcast::Receiver<Change>,
            watch::Receiver<u64>,
        )| async move {
            if let Phase::Greeting = phase {
                let hello = Bytes::from_static(b": connected\n\n");
                return Some((Ok::<_, Infallible>(hello), (Phase::Streaming, changes, cut)));
            }
            loop {
                tokio::select! {
                    change = changes.recv() => match change {
                        Ok(change) => {
                            return Some((
                                Ok(frame(&change, numeric_ids)),
                                (Phase::Streaming, changes, cut),
                            ));
                        }
                        // muster drops what a slow reader missed; so does the fake.
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return None,
                    },
                    _ = cut.changed() => return None,
                }
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
