//! Recording an attempt: its outcome written to the outbox with the next try's time (backon's
//! schedule after a failure), or the decision set aside when that fails for a reason of its own.

use super::*;

impl Dispatcher {
    /// Record an attempt; when that fails for a reason of this decision's own, set the
    /// decision aside (failed, said why, audited, the owner told) and let the pass go on. Only
    /// a failure of the whole — the mirror, the data directory — ends the pass.
    pub(super) async fn record_or_set_aside(
        &self,
        decision: &Decision,
        outcome: Result<(Step, Timing)>,
        report: &mut DispatchReport,
    ) -> Result<()> {
        match self.record_timed(decision, outcome, report).await {
            Err(e) if !e.is_of_the_whole() => {
                tracing::warn!(decision = decision.id, error = %e, "decision set aside");
                let aside = self
                    .store
                    .set_decision_aside(decision.id, &format!("cannot finish this decision: {e}"))
                    .await?;
                report.attempts.push(Attempt {
                    outcome: ended_as(aside.state),
                    decision: aside,
                });
                Ok(())
            }
            other => other,
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
            DispatchOutcome::Retry(d) if reconnect_sentence(d) => {
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
        if let Some(reason) = detail.filter(|d| reconnect_sentence(d)) {
            self.store
                .mark_reconnect_needed(&account_id, reason)
                .await?;
        }
        if let Some((kind, reason)) = &step.refusal {
            let key = format!("decision:{}:{}", decision.id, kind.as_str());
            self.store
                .record_refusal(decision.item_id, *kind, reason, &key)
                .await?;
        }
        report.attempts.push(Attempt {
            outcome: step.outcome.kind(),
            decision: finished,
        });
        Ok(())
    }
}

/// How an attempt that left a decision in `state` ended.
pub(super) fn ended_as(state: crate::domain::DecisionState) -> OutcomeKind {
    use crate::domain::DecisionState as D;
    match state {
        D::Done => OutcomeKind::Done,
        D::Conflict | D::Cancelled => OutcomeKind::Conflict,
        D::Failed => OutcomeKind::Failed,
        D::Uncertain | D::Dispatching => OutcomeKind::Uncertain,
        D::Queued => OutcomeKind::Retrying,
    }
}

/// The wait after a decision's `attempts`-th failure: backon's exponential schedule from
/// `retry_base`, capped at `retry_cap`, with jitter (up to as much again) so a crowd of queued
/// decisions does not hit a recovering service at once. The schedule is read at the stored
/// attempt count rather than kept in memory, because the wait is written to the outbox and must
/// hold across a restart.
fn backoff(config: &DispatchConfig, attempts: u32) -> Duration {
    ExponentialBuilder::new()
        .with_min_delay(config.retry_base)
        .with_max_delay(config.retry_cap)
        .with_jitter()
        .without_max_times()
        .build()
        // Past the cap every step is the cap, so the index is bounded.
        .nth(attempts.saturating_sub(1).min(64) as usize)
        .unwrap_or(config.retry_cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_base_up_to_the_cap_with_at_most_as_much_again_of_jitter() {
        let config = DispatchConfig {
            retry_base: Duration::from_secs(1),
            retry_cap: Duration::from_secs(30),
            ..DispatchConfig::default()
        };
        for (attempts, floor) in [(0, 1), (1, 1), (2, 2), (3, 4), (5, 16), (6, 30), (40, 30)] {
            let floor = Duration::from_secs(floor);
            for _ in 0..50 {
                let wait = backoff(&config, attempts);
                assert!(
                    wait >= floor && wait < floor * 2,
                    "attempt {attempts}: {wait:?} is not in [{floor:?}, {:?})",
                    floor * 2
                );
            }
        }
    }

    #[test]
    fn the_waits_are_spread_so_a_crowd_does_not_retry_at_once() {
        let config = DispatchConfig::default();
        let waits: std::collections::BTreeSet<Duration> =
            (0..20).map(|_| backoff(&config, 3)).collect();
        assert!(waits.len() > 10, "20 waits, only {} distinct", waits.len());
    }
}
