//! Live changes: a consumer of muster's `GET /events` (Server-Sent Events).
//!
//! muster writes a `: connected` comment, then frames `event: <name>` / `data: {"id":"…"}`,
//! with no `id:` lines, no replay and no heartbeat. So: after every (re)connect the consumer is
//! told [`MusterEvent::Connected`] and must re-sync fully (anything may have changed while the
//! stream was down); a stream silent for longer than [`EventOptions::silence_timeout`] is
//! treated as dead and reconnected; reconnects back off exponentially with jitter; a refused
//! cookie gets the client's one silent re-login.

use std::time::Duration;

use futures_util::StreamExt;
use rand::Rng;
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
    /// A stream with no byte for this long is treated as dead and reconnected (muster sends no
    /// heartbeat, so on a quiet instance this also re-syncs once per timeout).
    pub silence_timeout: Duration,
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
            silence_timeout: Duration::from_secs(60),
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
    let mut failures: u32 = 0;
    let mut down = false;
    loop {
        match connect_once(&client, &options, &tx).await {
            Ended::Stop => return,
            Ended::Retry { reason, connected } => {
                if connected {
                    // It was up (Connected went out): this is a new outage.
                    failures = 0;
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
        tokio::time::sleep(backoff(&options, failures)).await;
        failures = failures.saturating_add(1);
    }
}

/// `min · 2^failures`, capped, then jittered into its upper half so that many clients
/// reconnecting after one muster restart do not arrive together.
fn backoff(options: &EventOptions, failures: u32) -> Duration {
    let base = options
        .min_backoff
        .saturating_mul(2u32.saturating_pow(failures.min(20)))
        .min(options.max_backoff);
    let half = base / 2;
    half + half.mul_f64(rand::thread_rng().gen_range(0.0..=1.0))
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
    // within the silence timeout; the open stream is then watched for silence below.
    let connect = client.send(
        Method::GET,
        paths::EVENTS,
        |r| r.header(ACCEPT, "text/event-stream"),
        None,
    );
    let response = match tokio::time::timeout(options.silence_timeout, connect).await {
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
    let mut parser = Parser::default();
    let mut body = response.bytes_stream();
    loop {
        // reqwest's per-request timeout covers the whole body, so the stream is read without
        // it and silence is timed here instead.
        let chunk = match tokio::time::timeout(options.silence_timeout, body.next()).await {
            Err(_) => {
                return ended(format!(
                    "no event for {} ms; reconnecting",
                    options.silence_timeout.as_millis()
                ))
            }
            Ok(None) => return ended("muster closed the event stream".into()),
            Ok(Some(Err(_))) => return ended("the event stream broke off".into()),
            Ok(Some(Ok(chunk))) => chunk,
        };
        for frame in parser.push(&chunk) {
            if let Some(event) = frame.into_event() {
                if tx.send(event).await.is_err() {
                    return Ended::Stop;
                }
            }
        }
    }
}

/// One dispatched SSE frame.
#[derive(Debug, Default, PartialEq, Eq)]
struct Frame {
    event: Option<String>,
    data: String,
}

impl Frame {
    fn into_event(self) -> Option<MusterEvent> {
        let name = self.event.as_deref().unwrap_or("message");
        let make: fn(String) -> MusterEvent = match name {
            paths::EVENT_DRAFT_CHANGED => |id| MusterEvent::DraftChanged { id },
            paths::EVENT_ROUTE_CHANGED => |id| MusterEvent::RouteChanged { id },
            // muster sends other events too (tasks, sessions): not ours.
            _ => return None,
        };
        match serde_json::from_str::<wire::EventData>(&self.data) {
            Ok(data) if !data.id.is_empty() => Some(make(data.id)),
            _ => {
                // We cannot tell what changed: a full re-sync is the safe reading.
                tracing::warn!(event = name, "unreadable muster event data; re-syncing");
                Some(MusterEvent::Connected)
            }
        }
    }
}

/// An incremental parser of the `text/event-stream` format
/// (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
/// lines end in LF, CRLF or CR; `:` starts a comment; `event` and `data` fields (several `data`
/// lines join with LF); a blank line dispatches. Bytes are kept until a line is complete, so a
/// chunk may split a line or a UTF-8 character anywhere.
#[derive(Debug, Default)]
struct Parser {
    line: Vec<u8>,
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

impl Parser {
    fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut frames),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut frames);
                }
                _ => self.line.push(b),
            }
        }
        frames
    }

    fn end_line(&mut self, frames: &mut Vec<Frame>) {
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            let event = self.event.take();
            if let Some(data) = self.data.take() {
                frames.push(Frame { event, data });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            // `id` and `retry` mean nothing for muster (no replay); unknown fields are ignored.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut parser = Parser::default();
        chunks.iter().flat_map(|c| parser.push(c)).collect()
    }

    #[test]
    fn musters_stream_yields_one_frame_per_change_and_ignores_the_comment() {
        let frames = parse_all(&[
            b": connected\n\nevent: plugin.draft.changed\ndata: {\"id\":\"42\"}\n\n",
            b"event: plugin.route.changed\ndata: {\"id\":\"7\"}\n\n",
        ]);
        let events: Vec<_> = frames.into_iter().filter_map(Frame::into_event).collect();
        assert_eq!(
            events,
            vec![
                MusterEvent::DraftChanged { id: "42".into() },
                MusterEvent::RouteChanged { id: "7".into() },
            ]
        );
    }

    #[test]
    fn a_frame_split_anywhere_and_with_crlf_still_parses() {
        let whole = "event: plugin.draft.changed\r\ndata: {\"id\":\"é9\"}\r\n\r\n".as_bytes();
        for split in 1..whole.len() {
            let frames = parse_all(&[&whole[..split], &whole[split..]]);
            assert_eq!(frames.len(), 1, "split at {split}");
            assert_eq!(
                frames.into_iter().next().unwrap().into_event(),
                Some(MusterEvent::DraftChanged { id: "é9".into() }),
                "split at {split}"
            );
        }
    }

    #[test]
    fn unreadable_data_on_a_known_event_asks_for_a_full_resync() {
        let frames = parse_all(&[b"event: plugin.draft.changed\ndata: {\"nope\n\n"]);
        assert_eq!(
            frames.into_iter().next().unwrap().into_event(),
            Some(MusterEvent::Connected)
        );
    }

    #[test]
    fn other_muster_events_are_not_passed_on() {
        let frames = parse_all(&[b"event: task.changed\ndata: {\"id\":\"1\"}\n\ndata: x\n\n"]);
        assert_eq!(frames.len(), 2);
        assert!(frames.into_iter().all(|f| f.into_event().is_none()));
    }

    #[test]
    fn backoff_grows_stays_capped_and_keeps_jitter_in_the_upper_half() {
        let options = EventOptions {
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            ..EventOptions::default()
        };
        for _ in 0..50 {
            let first = backoff(&options, 0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let late = backoff(&options, 30);
            assert!(late >= Duration::from_secs(1) && late <= Duration::from_secs(2));
        }
    }
}
