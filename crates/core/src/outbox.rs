//! The dispatcher: takes due decisions out of the outbox and carries them out, exactly once.
//!
//! Rules (DESIGN §3):
//! - What you saw is what is sent: Gmail drafts are re-read first and a different message id is
//!   a conflict; the send carries the *reviewed* raw bytes. muster's `decide` carries the
//!   reviewed `updatedAt`.
//! - Exactly once: an outcome that is unknown (the request may have left) becomes `uncertain`
//!   and is reconciled by looking at the service, never by sending again blindly.
//! - One dispatcher per data directory (an exclusive file lock), and every claim is a write
//!   transaction, so even two processes that both got past the lock could not claim one
//!   decision twice.
//! - Decisions of one account go out in the order they were made: while an earlier one waits
//!   for the service, the later ones wait behind it.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use chrono::Utc;
use countersign_gmail::GmailClient;
use countersign_muster::{DecideOutcome, MusterClient};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::domain::{DecisionKind, DispatchOutcome, ItemEvent, Source};
use crate::error::{Error, Result};
use crate::reachability::{classify, classify_gmail, classify_muster, Failure, Reach};
use crate::render::{render_message, RenderOptions};
use crate::services::Services;
use crate::store::{Account, Decision, RefusalKind, Store};

/// The lock file that makes one process the dispatcher of a data directory.
pub const LOCK_FILE: &str = "dispatch.lock";

/// How the dispatcher backs off after a retryable failure.
#[derive(Clone, Copy, Debug)]
pub struct DispatchConfig {
    /// First wait after a failure.
    pub retry_base: Duration,
    /// Longest wait.
    pub retry_cap: Duration,
    /// How many times an unknown outcome is looked up before the owner is asked (Gmail). Only
    /// look-ups that got no answer count; claims and sign-ins that did not happen do not.
    pub reconcile_attempts: u32,
    /// The least wait between two unanswered look-ups of a muster decision: beyond muster's
    /// one-minute rate window, so that a look-up never lands in the window that refused the
    /// last one.
    pub muster_lookup_spacing: Duration,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            retry_base: Duration::from_secs(1),
            retry_cap: Duration::from_secs(30),
            reconcile_attempts: 5,
            muster_lookup_spacing: Duration::from_secs(61),
        }
    }
}

/// What one pass over the outbox did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchReport {
    /// Decisions carried out.
    pub done: Vec<i64>,
    /// Decisions that became conflicts.
    pub conflicts: Vec<i64>,
    /// Decisions refused for good.
    pub failed: Vec<i64>,
    /// Decisions whose outcome is unknown for now.
    pub uncertain: Vec<i64>,
    /// Decisions waiting for the service to answer.
    pub retrying: Vec<i64>,
    /// Sending is paused: nothing was done.
    pub paused: bool,
}

/// The one dispatcher of a data directory.
pub struct Dispatcher {
    store: Store,
    services: Services,
    config: DispatchConfig,
    claimant: String,
    _lock: File,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("claimant", &self.claimant)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// Become the dispatcher of `data_dir`, or `None` when another process already is.
    ///
    /// Holding the lock proves that no other dispatcher is alive, so decisions still marked
    /// `dispatching` were left by one that died mid-send: they become `uncertain`.
    pub async fn acquire(
        store: Store,
        services: Services,
        data_dir: &Path,
        config: DispatchConfig,
    ) -> Result<Option<Dispatcher>> {
        let path = data_dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| Error::DataDir {
                path: path.clone(),
                source,
            })?;
        match fs4::fs_std::FileExt::try_lock_exclusive(&file) {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
            Err(source) => return Err(Error::DataDir { path, source }),
        }
        let abandoned = store.mark_abandoned_dispatches_uncertain().await?;
        if abandoned > 0 {
            tracing::warn!(
                abandoned,
                "decisions left mid-send by a stopped process; reconciling"
            );
        }
        Ok(Some(Dispatcher {
            store,
            services,
            config,
            claimant: format!(
                "pid-{}-{}",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..6]
            ),
            _lock: file,
        }))
    }

    /// Reconcile what is uncertain, then carry out every decision that is due now.
    pub async fn run_once(&self) -> Result<DispatchReport> {
        let mut report = DispatchReport::default();
        if self.store.settings().await?.paused {
            report.paused = true;
            return Ok(report);
        }
        for decision in self.store.due_uncertain_decisions(Utc::now()).await? {
            let outcome = self.reconcile(&decision).await;
            self.record_timed(&decision, outcome, &mut report).await?;
        }
        while let Some(decision) = self
            .store
            .claim_next_due(Utc::now(), &self.claimant)
            .await?
        {
            if self.store.settings().await?.paused {
                // The switch was thrown mid-pass: put this one back untouched.
                self.store
                    .finish_decision(
                        decision.id,
                        &DispatchOutcome::Retry("sending is paused".into()),
                        Some(ItemEvent::DispatchRetried),
                        None,
                    )
                    .await?;
                report.paused = true;
                break;
            }
            let outcome = self.dispatch(&decision).await;
            self.record_timed(&decision, outcome, &mut report).await?;
        }
        Ok(report)
    }

    /// Dispatch until `stop` resolves, waking at least every `tick`.
    pub async fn run(&self, tick: Duration, mut stop: tokio::sync::watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.run_once().await {
                tracing::warn!(error = %e, "dispatch pass failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(tick) => {}
                _ = stop.changed() => return,
            }
            if *stop.borrow() {
                return;
            }
        }
    }

    async fn record_timed(
        &self,
        decision: &Decision,
        outcome: Result<(Step, Timing)>,
        report: &mut DispatchReport,
    ) -> Result<()> {
        let (step, timing) = match outcome {
            Ok((step, timing)) => (step, timing),
            // A local failure (the mirror, a missing account file): the owner must see it.
            Err(e) => (
                Step::refused(format!("cannot dispatch: {e}")),
                Timing::default(),
            ),
        };
        let looked_up = decision.state == crate::domain::DecisionState::Uncertain
            && matches!(step.outcome, DispatchOutcome::Uncertain(_));
        // Look-ups are counted apart from claims: a process killed mid-claim, or a sign-in that
        // did not happen, spends nothing of the budget.
        let lookups = if looked_up && timing.counts_as_lookup {
            self.store.count_lookup(decision.id).await?
        } else {
            self.store.lookups(decision.id).await?
        };
        let retry_at = match &step.outcome {
            // Only a reconnect helps, and reconnecting makes it due at once
            // (`Store::account_reconnected`): until then, look rarely.
            DispatchOutcome::Retry(d) if d == countersign_gmail::GRANT_ENDED_SENTENCE => {
                Some(Utc::now() + chrono::Duration::hours(1))
            }
            _ if timing.not_before.is_some() => timing.not_before,
            DispatchOutcome::Retry(_) | DispatchOutcome::Uncertain(_) => {
                step.retry_at.or_else(|| {
                    let mut wait = backoff(&self.config, decision.attempts);
                    if looked_up && timing.muster {
                        wait = wait.max(self.config.muster_lookup_spacing);
                    }
                    Some(Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default())
                })
            }
            _ => None,
        };
        // An uncertain Gmail send looked up too often without an answer goes to the owner.
        // muster's draft always says what became of a decide, so it is looked up until it does.
        let step = match &step.outcome {
            DispatchOutcome::Uncertain(detail)
                if looked_up && !timing.muster && lookups >= self.config.reconcile_attempts =>
            {
                Step::refused(format!(
                    "cannot tell whether it was sent ({detail}); look in the service's Sent \
                     folder before deciding again"
                ))
            }
            _ => step,
        };
        let finished = self
            .store
            .finish_decision(decision.id, &step.outcome, step.item_event, retry_at)
            .await?;
        let account_id = self
            .store
            .get_item(decision.item_id)
            .await?
            .summary
            .account_id;
        let detail = match &step.outcome {
            DispatchOutcome::Done => None,
            DispatchOutcome::Retry(d)
            | DispatchOutcome::Conflict(d)
            | DispatchOutcome::Failed(d)
            | DispatchOutcome::Uncertain(d) => Some(d.as_str()),
        };
        let reach = match (step.failure, detail) {
            (Some(failure), Some(detail)) => Reach::Failed(failure, detail),
            (Some(failure), None) => Reach::Failed(failure, "the call failed"),
            (None, _) => Reach::Answered,
        };
        self.store.record_reachability(&account_id, reach).await?;
        if detail == Some(countersign_gmail::GRANT_ENDED_SENTENCE) {
            self.store
                .mark_reconnect_needed(&account_id, countersign_gmail::GRANT_ENDED_SENTENCE)
                .await?;
        }
        if let Some((kind, reason)) = &step.refusal {
            let key = format!("decision:{}:{}", decision.id, kind.as_str());
            self.store
                .record_refusal(decision.item_id, *kind, reason, &key)
                .await?;
        }
        let bucket = match step.outcome {
            DispatchOutcome::Done => &mut report.done,
            DispatchOutcome::Conflict(_) => &mut report.conflicts,
            DispatchOutcome::Failed(_) => &mut report.failed,
            DispatchOutcome::Uncertain(_) => &mut report.uncertain,
            DispatchOutcome::Retry(_) => &mut report.retrying,
        };
        bucket.push(finished.id);
        Ok(())
    }

    async fn context(&self, decision: &Decision) -> Result<(Account, crate::store::Item)> {
        let item = self.store.get_item(decision.item_id).await?;
        let account = self.store.get_account(&item.summary.account_id).await?;
        Ok((account, item))
    }

    async fn dispatch(&self, decision: &Decision) -> Result<(Step, Timing)> {
        let (account, item) = self.context(decision).await?;
        let step = match account.kind {
            Source::Gmail => {
                if let Some(reason) = &account.reconnect_reason {
                    // Not even a token refresh: it waits, queued, for the reconnect.
                    return Ok((
                        Step::retry(reason.clone()).met(Failure::Refused),
                        Timing::answered_or_not(),
                    ));
                }
                let client = self.services.gmail_for_dispatch(&account).await?;
                let gmail = GmailDispatch {
                    store: &self.store,
                    client: &client,
                    account: &account,
                    draft_id: &item.summary.external_id,
                    thread_id: item.thread_id.as_deref(),
                    decision,
                };
                match decision.kind {
                    DecisionKind::Approve => gmail.approve().await,
                    DecisionKind::Reject => {
                        let keep = self.store.settings().await?.keep_rejected_gmail_drafts;
                        gmail.reject(keep).await
                    }
                }
            }
            Source::Muster => {
                // No client (say, the password is not stored): nothing was sent; it waits.
                let client = match self.services.muster(&account).await {
                    Ok(client) => client,
                    Err(e) => {
                        return Ok((
                            Step::retry(e.to_string()).met(classify(&e)),
                            Timing::muster_waiting(None),
                        ))
                    }
                };
                return muster_decide(&client, &item.summary.external_id, decision).await;
            }
        };
        step.map(|s| (s, Timing::answered_or_not()))
    }

    async fn reconcile(&self, decision: &Decision) -> Result<(Step, Timing)> {
        let (account, item) = self.context(decision).await?;
        let step = match account.kind {
            Source::Gmail => {
                let client = self.services.gmail_for_dispatch(&account).await?;
                GmailDispatch {
                    store: &self.store,
                    client: &client,
                    account: &account,
                    draft_id: &item.summary.external_id,
                    thread_id: item.thread_id.as_deref(),
                    decision,
                }
                .reconcile()
                .await
            }
            // muster's draft says what became of the decide: look, never decide blindly.
            Source::Muster => {
                let client = match self.services.muster(&account).await {
                    Ok(client) => client,
                    Err(e) => {
                        return Ok((
                            Step::uncertain(e.to_string()).met(classify(&e)),
                            Timing::muster_waiting(None),
                        ))
                    }
                };
                return muster_look_up(&client, &item.summary.external_id, decision).await;
            }
        };
        step.map(|s| (s, Timing::answered_or_not()))
    }
}

/// When an attempt's next try may happen, and whether it spent a look-up.
#[derive(Clone, Copy, Debug, Default)]
struct Timing {
    /// Not before this (muster's sign-in limit said when).
    not_before: Option<chrono::DateTime<Utc>>,
    /// A look-up that got no answer: it counts against the budget.
    counts_as_lookup: bool,
    /// A muster decision (its look-ups are spaced beyond muster's rate window, never given up).
    muster: bool,
}

impl Timing {
    /// A Gmail step: an uncertain look-up counts.
    fn answered_or_not() -> Timing {
        Timing {
            counts_as_lookup: true,
            ..Timing::default()
        }
    }

    fn muster() -> Timing {
        Timing {
            counts_as_lookup: true,
            muster: true,
            ..Timing::default()
        }
    }
}

/// The result of one attempt: the decision's outcome, the item's event, and a refusal to tell
/// the owner about.
struct Step {
    outcome: DispatchOutcome,
    item_event: Option<ItemEvent>,
    refusal: Option<(RefusalKind, String)>,
    /// Not before this time, when the service named one (instead of the backoff).
    retry_at: Option<chrono::DateTime<Utc>>,
    /// The call failed, and where ([`crate::reachability::classify`]); `None`: it answered.
    failure: Option<Failure>,
}

impl Step {
    /// This step comes from a failed call that `failure` classifies.
    fn met(self, failure: Failure) -> Step {
        Step {
            failure: Some(failure),
            ..self
        }
    }

    fn done(item_event: ItemEvent) -> Step {
        Step {
            outcome: DispatchOutcome::Done,
            item_event: Some(item_event),
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    fn retry(why: impl Into<String>) -> Step {
        Step {
            outcome: DispatchOutcome::Retry(why.into()),
            item_event: Some(ItemEvent::DispatchRetried),
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    /// Google asked this account to slow down: wait for the time it named, when it named one.
    fn rate_limited(retry_after: Option<Duration>) -> Step {
        let Some(wait) = retry_after else {
            return Step::retry("Gmail asked to slow down; sending again shortly");
        };
        let at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
        Step {
            retry_at: Some(at),
            ..Step::retry(format!(
                "Google limits sending from this account: next try at {}",
                at.with_timezone(&chrono::Local).format("%H:%M")
            ))
        }
    }

    fn uncertain(why: impl Into<String>) -> Step {
        Step {
            outcome: DispatchOutcome::Uncertain(why.into()),
            item_event: None,
            refusal: None,
            retry_at: None,
            failure: None,
        }
    }

    fn conflict(why: impl Into<String>, item_event: ItemEvent) -> Step {
        let why = why.into();
        Step {
            outcome: DispatchOutcome::Conflict(why.clone()),
            item_event: Some(item_event),
            refusal: Some((RefusalKind::Conflict, why)),
            retry_at: None,
            failure: None,
        }
    }

    fn refused(why: impl Into<String>) -> Step {
        let why = why.into();
        Step {
            outcome: DispatchOutcome::Failed(why.clone()),
            item_event: Some(ItemEvent::SendRefused),
            refusal: Some((RefusalKind::SendRefused, why)),
            retry_at: None,
            failure: None,
        }
    }
}

const CHANGED: &str = "changed since you reviewed it: review the new version";
const OFFLINE_GMAIL: &str = "offline: Gmail does not answer; it goes out when it does";
const OFFLINE_MUSTER: &str = "offline: muster does not answer; it goes out when it does";
/// How the detail of a decision held back by muster's sign-in limit starts.
pub const MUSTER_SIGN_IN_LIMITED: &str = "queued — muster sign-in limited";

struct GmailDispatch<'a> {
    store: &'a Store,
    client: &'a GmailClient,
    account: &'a Account,
    draft_id: &'a str,
    thread_id: Option<&'a str>,
    decision: &'a Decision,
}

/// What re-reading a draft before acting on it found.
enum DraftCheck {
    Unchanged,
    Changed,
    Gone,
}

impl GmailDispatch<'_> {
    async fn check_draft(&self) -> std::result::Result<DraftCheck, Step> {
        match self.client.get_draft_minimal(self.draft_id).await {
            Ok(draft) if draft.message_id == self.decision.version => Ok(DraftCheck::Unchanged),
            Ok(_) => Ok(DraftCheck::Changed),
            Err(countersign_gmail::Error::NotFound { .. }) => Ok(DraftCheck::Gone),
            Err(e) => Err(read_failure(e)),
        }
    }

    async fn approve(&self) -> Result<Step> {
        if let Some(sentence) = crate::actions::send_refusal(self.account) {
            return Ok(Step::refused(sentence));
        }
        match self.check_draft().await {
            Err(step) => return Ok(step),
            Ok(DraftCheck::Changed) => return Ok(Step::conflict(CHANGED, ItemEvent::Conflicted)),
            Ok(DraftCheck::Gone) => return self.gone_before_send().await,
            Ok(DraftCheck::Unchanged) => {}
        }
        let (raw, header_added) = self.reviewed_raw_with_message_id().await?;
        self.store
            .set_decision_sent_bytes(
                self.decision.id,
                &hex::encode(Sha256::digest(&raw)),
                header_added,
            )
            .await?;
        match self
            .client
            .send_draft(self.draft_id, &raw, self.thread_id)
            .await
        {
            Ok(_) => Ok(Step::done(ItemEvent::Delivered)),
            Err(e) => Ok(send_failure(e)),
        }
    }

    async fn reject(&self, keep_in_gmail: bool) -> Result<Step> {
        if keep_in_gmail {
            return Ok(Step::done(ItemEvent::RejectionDone));
        }
        match self.check_draft().await {
            Err(step) => return Ok(step),
            Ok(DraftCheck::Changed) => return Ok(Step::conflict(CHANGED, ItemEvent::Conflicted)),
            Ok(DraftCheck::Gone) => return self.gone_before_send().await,
            Ok(DraftCheck::Unchanged) => {}
        }
        match self.client.delete_draft(self.draft_id).await {
            Ok(()) => Ok(Step::done(ItemEvent::RejectionDone)),
            Err(countersign_gmail::Error::NotFound { .. }) => {
                Ok(Step::done(ItemEvent::RejectionDone))
            }
            Err(e) => Ok(delete_failure(e)),
        }
    }

    /// Find out what happened to a send whose answer never came.
    async fn reconcile(&self) -> Result<Step> {
        match self.check_draft().await {
            Err(_) => Ok(Step::uncertain(
                "the service does not answer; looking again later",
            )),
            // Sending removes a draft: still there, unchanged, means it was not sent.
            Ok(DraftCheck::Unchanged) => Ok(Step::retry("not sent yet; sending again is safe")),
            Ok(DraftCheck::Changed) => Ok(Step::conflict(
                "not sent, and the agent changed the draft since: review the new version",
                ItemEvent::Conflicted,
            )),
            Ok(DraftCheck::Gone) => match self.decision.kind {
                DecisionKind::Reject => Ok(Step::done(ItemEvent::RejectionDone)),
                DecisionKind::Approve => match self.find_in_sent().await {
                    Ok(true) => Ok(Step::done(ItemEvent::Delivered)),
                    Ok(false) => Ok(Step::uncertain(
                        "the draft is gone and its message is not in Sent (yet)",
                    )),
                    Err(_) => Ok(Step::uncertain("the service does not answer")),
                },
            },
        }
    }

    /// The draft disappeared before we acted: sent or deleted elsewhere.
    async fn gone_before_send(&self) -> Result<Step> {
        match self.find_in_sent().await {
            // Someone sent it from Gmail itself: the owner's intent happened, but not through
            // this decision, and nothing is sent again.
            Ok(true) => Ok(match self.decision.kind {
                DecisionKind::Approve => Step::conflict(
                    "sent elsewhere: it was already in Gmail's Sent, so it was not sent again",
                    ItemEvent::Vanished,
                ),
                DecisionKind::Reject => {
                    Step::conflict("sent elsewhere before the rejection", ItemEvent::Vanished)
                }
            }),
            Ok(false) => Ok(match self.decision.kind {
                DecisionKind::Approve => {
                    Step::conflict("deleted elsewhere: nothing was sent", ItemEvent::Vanished)
                }
                DecisionKind::Reject => Step::done(ItemEvent::RejectionDone),
            }),
            Err(step) => Ok(step),
        }
    }

    async fn find_in_sent(&self) -> std::result::Result<bool, Step> {
        let message_id = match &self.decision.rfc822_message_id {
            Some(id) => Some(id.clone()),
            None => self
                .reviewed_message_id()
                .await
                .map_err(|e| Step::refused(e.to_string()))?,
        };
        let Some(message_id) = message_id else {
            return Ok(false);
        };
        match self.client.find_sent_by_message_id(&message_id).await {
            Ok(found) => Ok(!found.is_empty()),
            Err(e) => Err(read_failure(e)),
        }
    }

    async fn reviewed_bytes(&self) -> Result<Vec<u8>> {
        let version = self
            .store
            .version(self.decision.item_id, &self.decision.version)
            .await?;
        if version.sha256 != self.decision.digest {
            return Err(Error::Corrupt(
                "the reviewed version's bytes no longer match their digest".into(),
            ));
        }
        Ok(version.content.bytes().to_vec())
    }

    async fn reviewed_message_id(&self) -> Result<Option<String>> {
        let raw = self.reviewed_bytes().await?;
        Ok(render_message(&raw, &RenderOptions::default()).message_id)
    }

    /// The reviewed bytes, with a `Message-ID` added first when the draft has none, recorded
    /// before the send so that an unknown outcome can be looked up in Sent; and the name of the
    /// header added, if one was.
    async fn reviewed_raw_with_message_id(&self) -> Result<(Vec<u8>, Option<&'static str>)> {
        let raw = self.reviewed_bytes().await?;
        if let Some(existing) = render_message(&raw, &RenderOptions::default()).message_id {
            if self.decision.rfc822_message_id.is_none() {
                self.store
                    .set_decision_message_id(self.decision.id, &existing)
                    .await?;
            }
            return Ok((raw, None));
        }
        let id = match &self.decision.rfc822_message_id {
            Some(id) => id.clone(),
            None => {
                let domain = self
                    .account
                    .address
                    .rsplit_once('@')
                    .map(|(_, d)| d.to_string())
                    .unwrap_or_else(|| "countersign.invalid".into());
                let id = format!("countersign.{}@{domain}", uuid::Uuid::new_v4().simple());
                self.store
                    .set_decision_message_id(self.decision.id, &id)
                    .await?;
                id
            }
        };
        let mut with_id = format!("Message-ID: <{id}>\r\n").into_bytes();
        with_id.extend_from_slice(&raw);
        Ok((with_id, Some("Message-ID")))
    }
}

/// The step for a `drafts.delete` that failed.
fn delete_failure(error: countersign_gmail::Error) -> Step {
    use countersign_gmail::Error as G;
    let failure = classify_gmail(&error);
    match error {
        G::Transport {
            request_sent: false,
        } => Step::retry(OFFLINE_GMAIL),
        e @ (G::Transport { .. } | G::Server { .. }) => Step::uncertain(e.to_string()),
        G::RateLimited { retry_after } => Step::rate_limited(retry_after),
        e => Step::refused(e.to_string()),
    }
    .met(failure)
}

fn read_failure(error: countersign_gmail::Error) -> Step {
    let failure = classify_gmail(&error);
    match error {
        countersign_gmail::Error::Transport { .. } | countersign_gmail::Error::Server { .. } => {
            Step::retry(OFFLINE_GMAIL)
        }
        countersign_gmail::Error::RateLimited { retry_after } => Step::rate_limited(retry_after),
        countersign_gmail::Error::SignInAgain | countersign_gmail::Error::Unauthorized => {
            Step::retry("sign in to Gmail again: the account's access was refused")
        }
        // Waits, queued, until the account is reconnected (`record` marks the account).
        countersign_gmail::Error::GrantEnded => {
            Step::retry(countersign_gmail::GRANT_ENDED_SENTENCE)
        }
        other => Step::refused(other.to_string()),
    }
    .met(failure)
}

fn send_failure(error: countersign_gmail::Error) -> Step {
    use countersign_gmail::Error as G;
    let failure = classify_gmail(&error);
    match error {
        // Never reached Google: sending again is safe.
        G::Transport {
            request_sent: false,
        } => Step::retry(OFFLINE_GMAIL),
        // Google answered "slow down": it did not act on it. Wait as long as it asked.
        G::RateLimited { retry_after } => Step::rate_limited(retry_after),
        // Too large for Gmail: nothing left, and sending again would not help.
        e @ G::TooLarge { .. } => Step::refused(e.to_string()),
        // The request may have been acted on: look, never resend blindly.
        e @ (G::Transport { .. } | G::Server { .. }) => Step::uncertain(e.to_string()),
        G::NotFound { .. } => Step::uncertain("the draft vanished while it was being sent"),
        G::SignInAgain | G::Unauthorized => {
            Step::retry("sign in to Gmail again: the account's access was refused")
        }
        // The token refresh failed before the send left: it waits for the reconnect.
        G::GrantEnded => Step::retry(countersign_gmail::GRANT_ENDED_SENTENCE),
        other => Step::refused(format!("Google refused to send it: {other}")),
    }
    .met(failure)
}

/// What a muster call that did not answer means for a decision: a sign-in that did not happen
/// (refused, limited, not configured, not answered) or an answer from something that is not
/// muster means the decide was never sent, so the decision waits; only a decide that left
/// without an answer is uncertain.
fn muster_not_done(e: countersign_muster::Error, looking_up: bool) -> (Step, Timing) {
    use countersign_muster::Error as M;
    let failure = classify_muster(&e);
    let waiting = |step: Step| (step, Timing::muster_waiting(None));
    let (step, timing) = match e {
        M::RateLimited { retry_after } => {
            let wait = retry_after.unwrap_or(countersign_muster::SIGN_IN_WINDOW);
            let at = Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
            let local = at.with_timezone(&chrono::Local).format("%H:%M");
            let why = format!("{MUSTER_SIGN_IN_LIMITED}, next try at {local}");
            let step = if looking_up {
                Step::uncertain(why)
            } else {
                Step::retry(why)
            };
            (step, Timing::muster_waiting(Some(at)))
        }
        e @ (M::SignInAgain
        | M::WrongPassword
        | M::NotConfigured
        | M::NoPluginApi
        | M::NotMuster { .. }) => {
            if looking_up {
                waiting(Step::uncertain(e.to_string()))
            } else {
                waiting(Step::retry(e.to_string()))
            }
        }
        M::Transport {
            request_sent: false,
        } if !looking_up => waiting(Step::retry(OFFLINE_MUSTER)),
        // The decide (or the look-up) left and no readable answer came back.
        e @ (M::Transport { .. } | M::Server { .. } | M::BadResponse { .. }) => {
            (Step::uncertain(e.to_string()), Timing::muster())
        }
        // Refused unread (a 4xx that is not a decide answer): nothing happened at muster, and
        // the owner may decide again; never "send failed", which is the plugin's word.
        e => (
            Step::conflict(
                format!("muster did not take the decision ({e}): review it again"),
                ItemEvent::Conflicted,
            ),
            Timing::muster(),
        ),
    };
    (step.met(failure), timing)
}

impl Timing {
    fn muster_waiting(not_before: Option<chrono::DateTime<Utc>>) -> Timing {
        Timing {
            not_before,
            counts_as_lookup: false,
            muster: true,
        }
    }
}

/// The step for a muster decision that landed (or was found landed by a look-up).
fn muster_done(decision: &Decision) -> Step {
    match decision.kind {
        // Approved at muster means queued at the plugin: the item stays "sending" until the
        // plugin reports, which a sync mirrors.
        DecisionKind::Approve => Step {
            outcome: DispatchOutcome::Done,
            item_event: None,
            refusal: None,
            retry_at: None,
            failure: None,
        },
        DecisionKind::Reject => Step::done(ItemEvent::RejectionDone),
    }
}

fn muster_kind(decision: &Decision) -> countersign_muster::Decision {
    match decision.kind {
        DecisionKind::Approve => countersign_muster::Decision::Approve,
        DecisionKind::Reject => countersign_muster::Decision::Reject,
    }
}

async fn muster_decide(
    client: &MusterClient,
    draft_id: &str,
    decision: &Decision,
) -> Result<(Step, Timing)> {
    let answer = client
        .decide(
            draft_id,
            muster_kind(decision),
            decision.reason.as_deref(),
            &decision.version,
        )
        .await;
    let step = match answer {
        Ok(DecideOutcome::Queued { .. }) => muster_done(decision),
        Ok(DecideOutcome::AlreadyDecided {
            same_decision: true,
            ..
        }) => muster_done(decision),
        Ok(DecideOutcome::AlreadyDecided {
            same_decision: false,
            ..
        }) => Step::conflict("decided elsewhere, differently", ItemEvent::Conflicted),
        Ok(DecideOutcome::Stale { .. }) => Step::conflict(CHANGED, ItemEvent::Conflicted),
        Ok(DecideOutcome::Unchecked) => Step::conflict(
            "the plugin has not checked this reply yet; it can only be rejected for now",
            ItemEvent::Conflicted,
        ),
        Ok(DecideOutcome::CheckRefused) => Step {
            outcome: DispatchOutcome::Failed("the plugin's check refused it".into()),
            item_event: Some(ItemEvent::CheckRefused),
            refusal: Some((
                RefusalKind::CheckRefused,
                "the plugin's check refused it".into(),
            )),
            retry_at: None,
            failure: None,
        },
        Ok(DecideOutcome::NotFound) => {
            Step::conflict("it is no longer in muster", ItemEvent::Vanished)
        }
        Err(e) => return Ok(muster_not_done(e, false)),
    };
    Ok((step, Timing::muster()))
}

/// Find out what became of a decide whose answer never came: muster's draft says.
async fn muster_look_up(
    client: &MusterClient,
    draft_id: &str,
    decision: &Decision,
) -> Result<(Step, Timing)> {
    use countersign_muster::DraftState as D;
    let draft = match client.get_draft(draft_id).await {
        Ok(draft) => draft,
        Err(countersign_muster::Error::NotFound { .. }) => {
            return Ok((
                Step::conflict("it is no longer in muster", ItemEvent::Vanished),
                Timing::muster(),
            ))
        }
        Err(e) => return Ok(muster_not_done(e, true)),
    };
    let ours = match (decision.kind, draft.state) {
        (DecisionKind::Approve, D::Approved | D::Sent | D::Failed) => Some(true),
        (DecisionKind::Reject, D::Rejected) => Some(true),
        (_, D::Pending) => None,
        _ => Some(false),
    };
    let step = match ours {
        Some(true) => muster_done(decision),
        Some(false) => Step::conflict("decided elsewhere, differently", ItemEvent::Conflicted),
        // Still pending as reviewed: the decide never landed, and sending it is safe.
        None if draft.updated_at == decision.version => {
            Step::retry("not decided at muster yet; sending it again is safe")
        }
        None => Step::conflict(CHANGED, ItemEvent::Conflicted),
    };
    Ok((step, Timing::muster()))
}

fn backoff(config: &DispatchConfig, attempts: u32) -> Duration {
    let exp = config
        .retry_base
        .saturating_mul(1u32 << attempts.saturating_sub(1).min(16));
    let capped = exp.min(config.retry_cap);
    // Jitter so a crowd of queued decisions does not hit a recovering service at once.
    let jitter = rand::random::<f64>() * 0.25 + 0.875;
    capped.mul_f64(jitter)
}
