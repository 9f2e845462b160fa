//! The fake mailbox: drafts, messages, history, OAuth grants, quota, faults and the request log.
//!
//! All of it sits behind one mutex; handlers never hold it across an `await`.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::errors::ApiError;
use super::mime;

mod drafts;
mod faults;
mod grants;
mod labels;
mod send;

pub use labels::StoredLabel;

/// History ids start here, like a mailbox that has lived a while.
const FIRST_HISTORY_ID: u64 = 1000;
/// Lifetime of an access token, as Google gives it.
pub const ACCESS_TOKEN_SECONDS: u64 = 3599;

/// A message of the mailbox (a draft version, an inbox message, a sent message).
#[derive(Clone, Debug)]
pub struct StoredMessage {
    pub id: String,
    pub thread_id: String,
    pub label_ids: Vec<String>,
    pub raw: Vec<u8>,
    pub internal_date_ms: i64,
    pub history_id: u64,
    /// Creation order, for newest-first listings.
    pub seq: u64,
}

/// A draft: a stable id pointing at its current message.
#[derive(Clone, Debug)]
pub struct StoredDraft {
    pub message_id: String,
}

#[derive(Clone, Debug)]
pub enum Change {
    Added,
    Deleted,
    /// `labelsAdded`: these labels were put on the message.
    LabelsAdded(Vec<String>),
    /// `labelsRemoved`: these labels were taken off the message.
    LabelsRemoved(Vec<String>),
}

/// One history record (each change gets its own id).
#[derive(Clone, Debug)]
pub struct HistoryEvent {
    pub id: u64,
    pub message_id: String,
    pub thread_id: String,
    pub label_ids: Vec<String>,
    pub change: Change,
}

/// A message sent through `drafts.send`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SentRecord {
    /// The draft that was sent.
    pub draft_id: String,
    /// The sent message's id.
    pub message_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The bytes as sent.
    #[serde(skip)]
    pub raw: Vec<u8>,
}

/// One request to the fake's Google endpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedRequest {
    /// Google's method name (`drafts.get`, `oauth.token`, …).
    pub method: String,
    /// HTTP method.
    pub http_method: String,
    /// Path.
    pub path: String,
    /// Query string (access tokens in it are masked).
    pub query: String,
    /// When it arrived.
    pub at: chrono::DateTime<chrono::Utc>,
}

/// An injected failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailFault {
    /// Calls still to fail.
    pub remaining: u32,
    /// HTTP status to answer.
    pub status: u16,
    /// Google `reason` (e.g. `rateLimitExceeded`); a fitting default otherwise.
    pub reason: Option<String>,
    /// Message instead of Google's default text.
    pub message: Option<String>,
    /// For 429/403 rate limits: put "Retry after <now + this>" in the message.
    pub retry_after: Option<Duration>,
}

#[derive(Clone, Debug)]
pub struct DelayFault {
    pub delay: Duration,
    pub remaining: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Grant {
    pub scopes: Vec<String>,
    pub expires_at: Instant,
    pub refresh_token: Option<String>,
}

#[derive(Clone, Debug)]
pub struct RefreshGrant {
    pub scopes: Vec<String>,
    pub revoked: bool,
    pub issued_at: Instant,
}

#[derive(Clone, Debug)]
pub struct CodeGrant {
    pub scopes: Vec<String>,
    pub redirect_uri: String,
    /// `access_type=offline` was asked: only then does Google give a refresh token.
    pub offline: bool,
    /// PKCE `(code_challenge, code_challenge_method)` of the authorization request: the code
    /// exchange must then carry the matching `code_verifier` (RFC 7636 §4.6).
    pub challenge: Option<(String, String)>,
}

#[derive(Debug)]
struct Bucket {
    per_minute: u32,
    available: f64,
    updated: Instant,
}

impl Bucket {
    fn rate(&self) -> f64 {
        f64::from(self.per_minute) / 60.0
    }

    /// Google's per-user limit is a per-minute budget enforced as a moving rate; the bucket
    /// holds one second of it, which is what "250 units per second" means in practice.
    fn take(&mut self, units: u32) -> Result<(), Duration> {
        let now = Instant::now();
        let rate = self.rate();
        let capacity = rate.max(f64::from(units));
        self.available =
            (self.available + now.duration_since(self.updated).as_secs_f64() * rate).min(capacity);
        self.updated = now;
        if self.available >= f64::from(units) {
            self.available -= f64::from(units);
            Ok(())
        } else {
            let missing = f64::from(units) - self.available;
            Err(Duration::from_secs_f64(missing / rate.max(0.001)))
        }
    }
}

/// Everything the fake knows.
#[derive(Debug)]
pub struct State {
    pub email: String,
    counter: u64,
    pub history_id: u64,
    pub history_floor: u64,
    pub history: Vec<HistoryEvent>,
    pub drafts: BTreeMap<String, StoredDraft>,
    pub messages: BTreeMap<String, StoredMessage>,
    /// The mailbox's labels by id: Gmail's system labels, and user labels made through the
    /// control API (see `labels`).
    pub labels: BTreeMap<String, StoredLabel>,
    pub sent: Vec<SentRecord>,
    pub sends_per_draft: HashMap<String, u32>,
    /// `drafts.send` requests per draft id that reached Gmail's send (sent, or answered that
    /// the draft is gone): how often a client asked, which "sent once" must count, since a
    /// second request for a sent draft only gets a 404.
    pub send_requests_per_draft: HashMap<String, u32>,
    pub codes: HashMap<String, CodeGrant>,
    /// Whether the user has consented before: Google then skips the consent page and gives no
    /// new refresh token unless `prompt=consent` is asked.
    pub consented_before: bool,
    pub access_tokens: HashMap<String, Grant>,
    pub refresh_tokens: HashMap<String, RefreshGrant>,
    /// Refresh tokens older than this answer `invalid_grant`, as Google's do after 7 days for
    /// an OAuth client in "Testing" publishing status.
    pub refresh_token_lifetime: Option<Duration>,
    /// The error code the consent page redirects with instead of a code (`access_denied`: the
    /// owner pressed Cancel).
    pub consent_error: Option<String>,
    /// Whether `history.list` reports deleted messages. Google does not document that it does
    /// for `labelId=DRAFT`; with this off the client must notice deletions by listing drafts.
    pub history_reports_deletions: bool,
    /// Whether `history.list` records carry only `messages`, without `messagesAdded` and the
    /// other change-type fields (the discovery document allows it).
    pub history_only_messages: bool,
    quota: Bucket,
    pub fail: HashMap<String, FailFault>,
    pub delay: HashMap<String, DelayFault>,
    /// The next call of a method waits (after its change is made) until the test lets it go.
    pub held: HashMap<String, tokio::sync::watch::Receiver<bool>>,
    pub drop: HashMap<String, u32>,
    /// Calls whose change is made and whose 200 answer is then cut short (unreadable JSON).
    pub garble: HashMap<String, u32>,
    /// Bodies of the REST and upload endpoints move at most this fast (0: not at all); see
    /// `throttle`.
    pub throttle_bytes_per_second: Option<u64>,
    pub log: Vec<LoggedRequest>,
    /// Largest JSON request body accepted (Google: about 5 MB); larger ones answer 413.
    pub json_body_limit: usize,
    /// An agent's update waiting for the next `drafts.update` of that draft (by id): applied
    /// right after it commits, before anyone reads the draft back.
    pub agent_update_after_update: HashMap<String, Vec<u8>>,
    /// What happens to a draft (by id) right before the next `drafts.send` of it through the
    /// API: another client acts between Countersign's re-read and its send.
    pub before_next_send: HashMap<String, BeforeSend>,
    /// Ids of drafts deleted or sent: with `vanished_drafts_answer_400`, reads and sends of
    /// them answer 400 "Invalid draft" instead of 404, as Gmail is reported to do.
    pub vanished_drafts: std::collections::HashSet<String>,
    /// See `vanished_drafts`.
    pub vanished_drafts_answer_400: bool,
    /// `drafts.send` gives the sent message a `Message-ID` of Gmail's own, replacing the
    /// client's (third-party reports say Gmail sometimes does).
    pub replace_message_id_on_send: bool,
    /// How far Google's clock (every message's `internalDate`) is from this computer's, in ms:
    /// negative when the computer's clock runs fast.
    pub clock_offset_ms: i64,
    /// The OAuth client was deleted in Google Cloud Console: the token endpoint answers every
    /// request 401 `deleted_client`.
    pub client_deleted: bool,
}

/// What another client does to a draft right before the next `drafts.send` of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BeforeSend {
    /// The agent updates the draft to these bytes (a new message id).
    Update(Vec<u8>),
    /// Someone deletes the draft.
    Delete,
    /// The owner sends it from Gmail itself.
    SendInGmail,
}

impl State {
    pub fn new(email: String, quota_units_per_minute: u32) -> Self {
        let per_minute = quota_units_per_minute.max(1);
        State {
            email,
            counter: 0,
            history_id: FIRST_HISTORY_ID,
            history_floor: FIRST_HISTORY_ID,
            history: Vec::new(),
            drafts: BTreeMap::new(),
            messages: BTreeMap::new(),
            labels: labels::system_labels(),
            sent: Vec::new(),
            sends_per_draft: HashMap::new(),
            send_requests_per_draft: HashMap::new(),
            codes: HashMap::new(),
            consented_before: false,
            json_body_limit: super::DEFAULT_JSON_BODY_LIMIT,
            agent_update_after_update: HashMap::new(),
            before_next_send: HashMap::new(),
            vanished_drafts: std::collections::HashSet::new(),
            vanished_drafts_answer_400: false,
            replace_message_id_on_send: false,
            clock_offset_ms: 0,
            client_deleted: false,
            access_tokens: HashMap::new(),
            refresh_tokens: HashMap::new(),
            refresh_token_lifetime: None,
            consent_error: None,
            history_reports_deletions: true,
            history_only_messages: false,
            quota: Bucket {
                per_minute,
                available: f64::from(per_minute) / 60.0,
                updated: Instant::now(),
            },
            fail: HashMap::new(),
            delay: HashMap::new(),
            held: HashMap::new(),
            drop: HashMap::new(),
            garble: HashMap::new(),
            throttle_bytes_per_second: None,
            log: Vec::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// A Gmail-looking message id: 16 hex digits.
    fn new_message_id(&mut self) -> String {
        let n = self.next();
        format!("{:016x}", 0x18c0_0000_0000_0000u64 + n * 0x1_0003)
    }

    /// A Gmail-looking draft id: `r` and digits.
    fn new_draft_id(&mut self) -> String {
        let n = self.next();
        format!("r{}", 5_000_000_000_000_000_000u64 + n * 7919)
    }

    /// A random opaque token with a Google-like prefix.
    pub fn new_secret(&mut self, prefix: &str) -> String {
        use rand::Rng;
        let n = self.next();
        let random: u128 = rand::thread_rng().gen();
        format!("{prefix}{n:x}{random:032x}")
    }

    pub fn set_quota(&mut self, per_minute: u32) {
        self.quota.per_minute = per_minute.max(1);
        self.quota.available = self.quota.available.min(self.quota.rate());
    }

    pub fn quota_per_minute(&self) -> u32 {
        self.quota.per_minute
    }

    /// Take `units` or say when to retry.
    pub fn take_quota(&mut self, units: u32) -> Result<(), Duration> {
        self.quota.take(units)
    }

    fn record(&mut self, message: &StoredMessage, change: Change) -> u64 {
        self.history_id += 1;
        let id = self.history_id;
        self.history.push(HistoryEvent {
            id,
            message_id: message.id.clone(),
            thread_id: message.thread_id.clone(),
            label_ids: message.label_ids.clone(),
            change,
        });
        id
    }

    fn insert_message(
        &mut self,
        raw: Vec<u8>,
        thread_id: Option<String>,
        label_ids: Vec<String>,
    ) -> StoredMessage {
        let id = self.new_message_id();
        let seq = self.counter;
        let thread_id = thread_id
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| id.clone());
        let mut message = StoredMessage {
            id: id.clone(),
            thread_id,
            label_ids,
            raw,
            internal_date_ms: chrono::Utc::now().timestamp_millis() + self.clock_offset_ms,
            history_id: 0,
            seq,
        };
        message.history_id = self.record(&message, Change::Added);
        self.messages.insert(id, message.clone());
        message
    }

    fn remove_message(&mut self, id: &str) {
        if let Some(message) = self.messages.remove(id) {
            self.record(&message, Change::Deleted);
        }
    }

    /// `messages.trash` as another client does it: the message gets the `TRASH` label and
    /// stays in its thread (`threads.get` still returns it, with that label). Its other labels
    /// are left as they were: nothing here depends on them. No history record: the fake keeps
    /// history for additions and deletions only, and Countersign reads `labelId=DRAFT` history.
    pub fn trash_message(&mut self, id: &str) -> bool {
        match self.messages.get_mut(id) {
            Some(m) => {
                if !m.label_ids.iter().any(|l| l == "TRASH") {
                    m.label_ids.push("TRASH".into());
                }
                true
            }
            None => false,
        }
    }

    /// A message arriving in the inbox (e.g. the one a draft replies to).
    pub fn add_inbox_message(
        &mut self,
        raw: Vec<u8>,
        thread_id: Option<String>,
        label_ids: Vec<String>,
    ) -> StoredMessage {
        self.insert_message(raw, thread_id, label_ids)
    }

    /// Messages newest first.
    pub fn messages_newest_first(&self) -> Vec<&StoredMessage> {
        let mut all: Vec<&StoredMessage> = self.messages.values().collect();
        all.sort_by_key(|m| std::cmp::Reverse(m.seq));
        all
    }

    /// Drafts newest first (by their current message).
    pub fn drafts_newest_first(&self) -> Vec<(&String, &StoredMessage)> {
        let mut all: Vec<(&String, &StoredMessage)> = self
            .drafts
            .iter()
            .filter_map(|(id, d)| self.messages.get(&d.message_id).map(|m| (id, m)))
            .collect();
        all.sort_by_key(|d| std::cmp::Reverse(d.1.seq));
        all
    }

    /// Forget history before now: any earlier start id answers 404.
    pub fn expire_history(&mut self) {
        self.history_floor = self.history_id;
        self.history.clear();
    }
}
