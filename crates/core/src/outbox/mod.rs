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

use backon::{BackoffBuilder, ExponentialBuilder};
use chrono::{DateTime, Utc};

use crate::domain::{DecisionKind, DispatchOutcome, ItemEvent, OutcomeKind, Source};
use crate::error::{Error, Result};
use crate::reachability::{classify, Failure, Reach};
use crate::services::Services;
use crate::store::{Account, Claim, Decision, Store};

mod gmail;
pub(crate) use gmail::content_digest;
mod muster;
mod record;
mod step;

use gmail::GmailDispatch;
use muster::{muster_decide, muster_look_up};
use record::ended_as;
use step::Step;
pub use step::MUSTER_SIGN_IN_LIMITED;

/// The lock file that makes one process the dispatcher of a data directory.
pub const LOCK_FILE: &str = "dispatch.lock";

/// How the dispatcher backs off after a retryable failure.
#[derive(Clone, Copy, Debug)]
pub struct DispatchConfig {
    /// First wait after a failure.
    pub retry_base: Duration,
    /// Longest wait before jitter (which adds up to as much again).
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DispatchReport {
    /// The decisions tried, in the order tried.
    pub attempts: Vec<Attempt>,
    /// Sending is paused: nothing was done.
    pub paused: bool,
    /// What the rules decided and held before the pass (they decide even while sending is
    /// paused: their decisions wait in the outbox like the owner's).
    pub rules: crate::rules::pass::RulesPass,
}

/// One decision a pass tried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The decision as recorded after the attempt (its state, its detail, its item).
    pub decision: Decision,
    /// How the attempt ended.
    pub outcome: OutcomeKind,
}

impl DispatchReport {
    /// The ids of the decisions whose attempt ended as `outcome`, in the order tried.
    pub fn ended(&self, outcome: OutcomeKind) -> Vec<i64> {
        self.attempts
            .iter()
            .filter(|a| a.outcome == outcome)
            .map(|a| a.decision.id)
            .collect()
    }
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
        self.run_as_of(Utc::now()).await
    }

    /// [`Dispatcher::run_once`] as of `now`: what is due at that time is carried out. The app
    /// and the CLI pass the wall clock; a test passes a decision's `due_at` to cross its undo
    /// window without waiting it out (and a moment before it, to see that nothing leaves).
    pub async fn run_as_of(&self, now: DateTime<Utc>) -> Result<DispatchReport> {
        let mut report = DispatchReport::default();
        // The rules decide in the dispatching process only, so two processes never both act
        // on one draft (the outbox would refuse the second decision anyway).
        match crate::rules::pass::run(&self.store, now).await {
            Ok(rules) => report.rules = rules,
            Err(e) => {
                tracing::warn!(error = %e, "cannot run the rules: every draft waits for the owner")
            }
        }
        if self.store.settings().await?.paused {
            report.paused = true;
            return Ok(report);
        }
        // What is due when the pass starts: a decision put back during the pass (its retry
        // time is then later than this) waits for the next pass, so a call that takes longer
        // than its backoff cannot make one pass retry it over and over.
        let pass_started = now;
        for decision in self.store.due_uncertain_decisions(pass_started).await? {
            let outcome = self.reconcile(&decision).await;
            self.record_or_set_aside(&decision, outcome, &mut report)
                .await?;
        }
        while let Some(claim) = self
            .store
            .claim_next_due(pass_started, &self.claimant)
            .await?
        {
            let decision = match claim {
                Claim::Claimed(decision) => decision,
                // Its item moved on while it waited: ended off the wire.
                Claim::Settled(decision) => {
                    report.attempts.push(Attempt {
                        outcome: ended_as(decision.state),
                        decision,
                    });
                    continue;
                }
            };
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
            self.record_or_set_aside(&decision, outcome, &mut report)
                .await?;
        }
        Ok(report)
    }
    async fn context(&self, decision: &Decision) -> Result<(Account, crate::store::Item)> {
        let item = self.store.get_item(decision.item_id).await?;
        let account = self.store.get_account(&item.summary.account_id).await?;
        Ok((account, item))
    }

    async fn dispatch(&self, decision: &Decision) -> Result<(Step, Timing)> {
        let (account, item) = self.context(decision).await?;
        let step = match account.profile.kind {
            Source::Gmail => {
                if let Some(reason) = &account.reconnect_reason {
                    // Not even a token refresh: it waits, queued, for the reconnect.
                    return Ok((
                        Step::retry(reason.clone()).met(Failure::Refused),
                        Timing::answered_or_not(),
                    ));
                }
                let client = self.services.gmail_for_dispatch(&account).await?;
                let gmail = self.gmail(&client, &account, &item, decision);
                match decision.kind {
                    DecisionKind::Approve => gmail.approve().await,
                    DecisionKind::Reject => {
                        let keep = self.store.settings().await?.keep_rejected_gmail_drafts;
                        gmail.reject(keep).await
                    }
                }
            }
            Source::Muster => {
                return match self.muster_client(&account, Step::retry).await {
                    Ok(client) => {
                        muster_decide(&self.store, &client, &item.summary.external_id, decision)
                            .await
                    }
                    Err(waiting) => Ok(waiting),
                };
            }
        };
        step.map(|s| (s, Timing::answered_or_not()))
    }

    async fn reconcile(&self, decision: &Decision) -> Result<(Step, Timing)> {
        let (account, item) = self.context(decision).await?;
        match account.profile.kind {
            Source::Gmail => {
                if let Some(reason) = &account.reconnect_reason {
                    // No token can be had until the reconnect: the look-up waits for it, and
                    // a wait that asked nothing spends none of the look-up budget.
                    return Ok((
                        Step::uncertain(reason.clone()).met(Failure::Refused),
                        Timing::default(),
                    ));
                }
                let client = self.services.gmail_for_dispatch(&account).await?;
                let step = self
                    .gmail(&client, &account, &item, decision)
                    .reconcile()
                    .await;
                step.map(|s| (s, Timing::answered_or_not()))
            }
            // muster's draft says what became of the decide: look, never decide blindly.
            Source::Muster => match self.muster_client(&account, Step::uncertain).await {
                Ok(client) => muster_look_up(&client, &item.summary.external_id, decision).await,
                Err(waiting) => Ok(waiting),
            },
        }
    }

    fn gmail<'a>(
        &'a self,
        client: &'a countersign_gmail::GmailClient,
        account: &'a Account,
        item: &'a crate::store::Item,
        decision: &'a Decision,
    ) -> GmailDispatch<'a> {
        GmailDispatch {
            store: &self.store,
            client,
            account,
            draft_id: &item.summary.external_id,
            thread_id: item.thread_id.as_deref(),
            decision,
        }
    }

    /// The account's muster client; when there is none (say, the password is not stored)
    /// nothing was sent, and `waiting` (a retry, or an outcome still unknown) is what to record.
    async fn muster_client(
        &self,
        account: &Account,
        waiting: fn(String) -> Step,
    ) -> std::result::Result<countersign_muster::MusterClient, (Step, Timing)> {
        self.services.muster(account).await.map_err(|e| {
            (
                waiting(e.to_string()).met(classify(&e)),
                Timing::muster_waiting(None),
            )
        })
    }
}

/// Whether a decision's detail is the sentence of an account that must be reconnected
/// ([`countersign_gmail::Error::reconnect_reason`]): it is then marked so, once, and nothing
/// more is asked of Google for it until the owner reconnects it.
fn reconnect_sentence(detail: &str) -> bool {
    [
        countersign_gmail::GRANT_ENDED_SENTENCE,
        countersign_gmail::CLIENT_GONE_SENTENCE,
    ]
    .contains(&detail)
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

impl Timing {
    fn muster_waiting(not_before: Option<chrono::DateTime<Utc>>) -> Timing {
        Timing {
            not_before,
            counts_as_lookup: false,
            muster: true,
        }
    }
}
