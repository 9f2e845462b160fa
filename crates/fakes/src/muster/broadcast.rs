//! The fake muster's event fan-out, shaped like muster's own (`ZacxDev/muster`
//! internal/sse/broadcaster.go): each `/events` subscriber has a buffer of its own, and an event
//! for a subscriber whose buffer is full is dropped for that subscriber — muster drops rather
//! than block, so a slow reader silently misses changes.
//!
//! muster's buffer is 16 events; the fake's default is roomier (1024) so that suites which file
//! bursts of drafts are not at the mercy of scheduling, and [`Broadcaster::set_buffer`] sets
//! muster's 16 for the tests about dropped events. The same stream carries muster's other events
//! (tasks, agents, chat); [`Noise`] plays them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::state::Change;

/// The fake's default per-subscriber buffer.
const DEFAULT_BUFFER: usize = 1024;

/// muster's other event names, which share the stream with the plugin events (muster's
/// `internal/api` broadcasts these; none of them is the reviewer's business).
const NOISE_EVENTS: [&str; 5] = [
    "task.changed",
    "agent.changed",
    "chat.reply",
    "agent.stream",
    "privilege.created",
];

#[derive(Default)]
struct Subscribers {
    next_id: u64,
    buffer: Option<usize>,
    senders: Vec<(u64, mpsc::Sender<Change>)>,
}

/// Fans each change out to every open `/events` stream, without ever waiting for one.
#[derive(Clone, Default)]
pub(crate) struct Broadcaster {
    subscribers: Arc<Mutex<Subscribers>>,
    dropped: Arc<AtomicU64>,
}

impl Broadcaster {
    fn subscribers(&self) -> std::sync::MutexGuard<'_, Subscribers> {
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new subscriber: its id (to unsubscribe) and its buffered receiver.
    pub(crate) fn subscribe(&self) -> (u64, mpsc::Receiver<Change>) {
        let mut subscribers = self.subscribers();
        let (tx, rx) = mpsc::channel(subscribers.buffer.unwrap_or(DEFAULT_BUFFER).max(1));
        subscribers.next_id += 1;
        let id = subscribers.next_id;
        subscribers.senders.push((id, tx));
        (id, rx)
    }

    /// Forget a subscriber whose stream ended.
    pub(crate) fn unsubscribe(&self, id: u64) {
        self.subscribers().senders.retain(|(sid, _)| *sid != id);
    }

    /// Deliver `change` to every subscriber with room for it; drop it for the others.
    pub(crate) fn broadcast(&self, change: Change) {
        let mut subscribers = self.subscribers();
        subscribers
            .senders
            .retain(|(_, tx)| match tx.try_send(change.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            });
    }

    /// Streams opened from now on get buffers of `size` events (`None`: the fake's default).
    pub(crate) fn set_buffer(&self, size: Option<usize>) {
        self.subscribers().buffer = size;
    }

    /// How many events were dropped for a full buffer so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// How many streams are subscribed.
    pub(crate) fn count(&self) -> usize {
        self.subscribers().senders.len()
    }
}

/// muster's other traffic on the stream, played at a steady rate while switched on.
#[derive(Default)]
pub(crate) struct Noise {
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Noise {
    /// Broadcast one of muster's other events every `every` (`None`: stop). Must be called
    /// inside a Tokio runtime when switching on.
    pub(crate) fn set(&self, broadcaster: &Broadcaster, every: Option<Duration>) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = task.take() {
            old.abort();
        }
        let Some(every) = every.filter(|d| !d.is_zero()) else {
            return;
        };
        let broadcaster = broadcaster.clone();
        *task = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            for n in 0u64.. {
                tick.tick().await;
                let name = NOISE_EVENTS[(n % NOISE_EVENTS.len() as u64) as usize];
                broadcaster.broadcast(Change::Other {
                    name,
                    id: (n + 1).to_string(),
                });
            }
        }));
    }
}

impl Drop for Noise {
    fn drop(&mut self) {
        if let Some(task) = self
            .task
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
    }
}
