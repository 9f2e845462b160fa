//! Live changes: a consumer of muster's `GET /events` (Server-Sent Events).
//!
//! muster writes a `: connected` comment, then frames `event: <name>` / `data: {"id":"…"}`,
//! with no `id:` lines, no replay and no heartbeat. So:
//! - after every (re)connect the consumer is told [`MusterEvent::Connected`] and must re-sync
//!   fully (anything may have changed while the stream was down);
//! - silence is normal (a quiet instance writes nothing for hours), so it is never read as an
//!   outage: the socket has TCP keep-alive (the client's, see `MusterClient`), which ends a
//!   stream whose peer is gone, and while the stream is open the consumer is told
//!   [`MusterEvent::Resync`] every [`EventOptions::resync_every`];
//! - muster's broadcaster gives each subscriber a 16-event buffer and drops what a slow reader
//!   missed (`ZacxDev/muster` internal/sse/broadcaster.go, `Broadcast`), on a stream that also
//!   carries every task, agent and chat event: the periodic re-sync is what catches a dropped
//!   draft change, and its requests prove the service still answers;
//! - reconnects back off exponentially with jitter; a refused cookie gets the client's one
//!   silent re-login.
//!
//! The `text/event-stream` framing is `eventsource-stream`'s. muster writes each frame as
//! `event: <name>\ndata: <json>\n\n` and refuses CR or LF inside the data
//! (`ZacxDev/muster` internal/sse/broadcaster.go, `ValidData`).

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use tokio::sync::mpsc;

use crate::client::MusterClient;
use crate::error::Error;
use crate::paths;
use crate::wire;

/// What the event stream tells its consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MusterEvent {
    /// The stream is (re)connected — or a frame could not be read. Anything may have changed
    /// unseen: re-sync fully.
    Connected,
    /// The stream is open but events may have been dropped since the last full sync (muster
    /// drops them for a slow reader): re-sync fully. Sent every [`EventOptions::resync_every`].
    Resync,
    /// `plugin.draft.changed`: re-fetch this draft.
    DraftChanged {
        /// The draft id.
        id: String,
    },
    /// `plugin.route.changed`: re-fetch this route (and its message's routes).
    RouteChanged {
        /// The route id.
        id: String,
    },
    /// The stream is down (once per outage); reconnecting goes on by itself.
    Disconnected {
        /// Why, in words fit for a status line (never a secret).
        reason: String,
    },
    /// The session was refused and the silent re-login did not help. The stream stops (the
    /// channel closes after this); sign in again and subscribe again.
    SignInAgain,
}

/// How the event stream behaves.
#[derive(Clone, Debug)]
pub struct EventOptions {
    /// How long the answer to `GET /events` (its head) may take before the attempt counts as
    /// failed. The open stream itself has no time limit: muster writes nothing while nothing
    /// happens.
    pub connect_timeout: Duration,
    /// While the stream is open, a [`MusterEvent::Resync`] is sent this often: muster drops
    /// events for a subscriber whose 16-event buffer is full, and nothing else would notice.
    pub resync_every: Duration,
    /// The first reconnect delay; it doubles on every failed attempt.
    pub min_backoff: Duration,
    /// The longest reconnect delay.
    pub max_backoff: Duration,
    /// How many events may wait in the channel before the stream stops reading.
    pub buffer: usize,
}

impl Default for EventOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(30),
            // Within the five minutes a dropped change may stay unseen; each re-sync is a few
            // requests (drafts, messages, the routes of each message).
            resync_every: Duration::from_secs(4 * 60),
            min_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            buffer: 256,
        }
    }
}

impl MusterClient {
    /// Follow `GET /events` in a background task until the receiver is dropped. Must be called
    /// inside a Tokio runtime.
    pub fn events(&self, options: EventOptions) -> mpsc::Receiver<MusterEvent> {
        let (tx, rx) = mpsc::channel(options.buffer.max(1));
        let client = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = follow(client, options, tx.clone()) => {}
                () = tx.closed() => {}
            }
        });
        rx
    }
}

/// Why one connection ended.
enum Ended {
    /// Try again after a backoff; `connected` says whether it got as far as a stream.
    Retry { reason: String, connected: bool },
    /// The consumer is gone or the session cannot be renewed.
    Stop,
}

async fn follow(client: MusterClient, options: EventOptions, tx: mpsc::Sender<MusterEvent>) {
    let mut waits = reconnect_waits(&options).build();
    let mut down = false;
    loop {
        match connect_once(&client, &options, &tx).await {
            Ended::Stop => return,
            Ended::Retry { reason, connected } => {
                if connected {
                    // It was up (Connected went out): this is a new outage.
                    waits = reconnect_waits(&options).build();
                    down = false;
                }
                tracing::debug!(base = %client.base_url(), %reason, "muster event stream ended");
                if !down {
                    down = true;
                    if tx.send(MusterEvent::Disconnected { reason }).await.is_err() {
                        return;
                    }
                }
            }
        }
        // Without a limit on attempts the backoff never runs out; the cap is its last value.
        tokio::time::sleep(waits.next().unwrap_or(options.max_backoff)).await;
    }
}

/// Reconnect waits: `min · 2^failures`, capped, each jittered into its upper half so that many
/// clients reconnecting after one muster restart do not arrive together. backon's jitter adds
/// up to the whole delay again (`d` becomes `d..=2d`), so the delays it doubles are halves.
fn reconnect_waits(options: &EventOptions) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(options.min_backoff.min(options.max_backoff) / 2)
        .with_max_delay(options.max_backoff / 2)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
}

async fn connect_once(
    client: &MusterClient,
    options: &EventOptions,
    tx: &mpsc::Sender<MusterEvent>,
) -> Ended {
    let retry = |reason: String| Ended::Retry {
        reason,
        connected: false,
    };
    // No reqwest timeout here: it would cover the whole endless body. The head must arrive
    // within the connect timeout; the open stream then has no time limit.
    let connect = client.send(
        Method::GET,
        paths::EVENTS,
        |r| r.header(ACCEPT, "text/event-stream"),
        None,
    );
    let response = match tokio::time::timeout(options.connect_timeout, connect).await {
        Err(_) => return retry("GET /events did not answer in time".into()),
        Ok(Ok(response)) => response,
        Ok(Err(Error::SignInAgain | Error::WrongPassword)) => {
            let _ = tx.send(MusterEvent::SignInAgain).await;
            return Ended::Stop;
        }
        Ok(Err(e)) => return retry(e.to_string()),
    };
    if response.status() != StatusCode::OK {
        return retry(format!(
            "muster answered {} to GET /events",
            response.status()
        ));
    }
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        return retry("GET /events did not answer an event stream".into());
    }
    if tx.send(MusterEvent::Connected).await.is_err() {
        return Ended::Stop;
    }
    let ended = |reason: String| Ended::Retry {
        reason,
        connected: true,
    };
    // Bytes that are not UTF-8 never complete a frame; the next re-sync still catches up.
    let mut frames = response.bytes_stream().eventsource();
    // The first tick of an interval is at once; Connected has just asked for that sync.
    let mut resync = tokio::time::interval_at(
        tokio::time::Instant::now() + options.resync_every,
        options.resync_every,
    );
    // A consumer slower than the interval gets one Resync, not a burst of them.
    resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let frame = tokio::select! {
            frame = frames.next() => frame,
            _ = resync.tick() => {
                if tx.send(MusterEvent::Resync).await.is_err() {
                    return Ended::Stop;
                }
                continue;
            }
        };
        let frame = match frame {
            None => return ended("muster closed the event stream".into()),
            Some(Err(EventStreamError::Transport(_))) => {
                return ended("the event stream broke off".into())
            }
            Some(Err(_)) => return ended("the event stream sent an unreadable frame".into()),
            Some(Ok(frame)) => frame,
        };
        if let Some(event) = muster_event(&frame) {
            if tx.send(event).await.is_err() {
                return Ended::Stop;
            }
        }
    }
}

/// What one SSE frame means to the consumer: a change to re-fetch, a full re-sync when the
/// frame names a change of ours but not which, or nothing (muster's other events).
fn muster_event(frame: &Event) -> Option<MusterEvent> {
    let name = frame.event.as_str();
    let make: fn(String) -> MusterEvent = match name {
        paths::EVENT_DRAFT_CHANGED => |id| MusterEvent::DraftChanged { id },
        paths::EVENT_ROUTE_CHANGED => |id| MusterEvent::RouteChanged { id },
        // muster sends other events too (tasks, sessions): not ours.
        _ => return None,
    };
    match serde_json::from_str::<wire::EventData>(&frame.data) {
        Ok(data) if !data.id.is_empty() => Some(make(data.id)),
        _ => {
            // We cannot tell what changed: a full re-sync is the safe reading.
            tracing::warn!(event = name, "unreadable muster event data; re-syncing");
            Some(MusterEvent::Connected)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    /// The frames of a body that arrives in `chunks`, read as the stream reads it.
    async fn parse_all(chunks: &[&[u8]]) -> Vec<Event> {
        let body = chunks.iter().map(|c| Ok::<_, Infallible>(c.to_vec()));
        futures_util::stream::iter(body)
            .eventsource()
            .map(|frame| frame.expect("a readable frame"))
            .collect()
            .await
    }

    #[tokio::test]
    async fn musters_stream_yields_one_frame_per_change_and_ignores_the_comment() {
        let frames = parse_all(&[
            b": connected\n\nevent: plugin.draft.changed\ndata: {\"id\":\"42\"}\n\n",
            b"event: plugin.route.changed\ndata: {\"id\":\"7\"}\n\n",
        ])
        .await;
        let events: Vec<_> = frames.iter().filter_map(muster_event).collect();
        assert_eq!(
            events,
            vec![
                MusterEvent::DraftChanged { id: "42".into() },
                MusterEvent::RouteChanged { id: "7".into() },
            ]
        );
    }

    #[tokio::test]
    async fn a_frame_split_anywhere_and_with_crlf_still_parses() {
        let whole = "event: plugin.draft.changed\r\ndata: {\"id\":\"é9\"}\r\n\r\n".as_bytes();
        for split in 1..whole.len() {
            let frames = parse_all(&[&whole[..split], &whole[split..]]).await;
            assert_eq!(frames.len(), 1, "split at {split}");
            assert_eq!(
                muster_event(&frames[0]),
                Some(MusterEvent::DraftChanged { id: "é9".into() }),
                "split at {split}"
            );
        }
    }

    #[tokio::test]
    async fn unreadable_data_on_a_known_event_asks_for_a_full_resync() {
        let frames = parse_all(&[b"event: plugin.draft.changed\ndata: {\"nope\n\n"]).await;
        assert_eq!(muster_event(&frames[0]), Some(MusterEvent::Connected));
    }

    #[tokio::test]
    async fn other_muster_events_are_not_passed_on() {
        let frames =
            parse_all(&[b"event: task.changed\ndata: {\"id\":\"1\"}\n\ndata: x\n\n"]).await;
        assert_eq!(frames.len(), 2);
        assert!(frames.iter().all(|f| muster_event(f).is_none()));
    }

    #[test]
    fn backoff_grows_stays_capped_and_keeps_jitter_in_the_upper_half() {
        let options = EventOptions {
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            ..EventOptions::default()
        };
        for _ in 0..50 {
            let waits: Vec<Duration> = reconnect_waits(&options).build().take(30).collect();
            assert_eq!(waits.len(), 30, "the waits never run out");
            let first = waits[0];
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let late = waits[29];
            assert!(late >= Duration::from_secs(1) && late <= Duration::from_secs(2));
        }
    }
}
