use super::*;

/// The mirror, the CLI's text and the JSON the UI reads must all use one name per value.
fn stored_name_is_the_serde_name<T>(values: &[T])
where
    T: Copy + Serialize + std::str::FromStr + PartialEq + std::fmt::Debug + Into<&'static str>,
{
    for &value in values {
        let stored: &'static str = value.into();
        assert_eq!(serde_json::to_value(value).unwrap(), stored, "{value:?}");
        assert_eq!(stored.parse::<T>().ok(), Some(value), "{stored}");
    }
}

#[test]
fn every_value_is_stored_under_its_serde_name_and_read_back() {
    stored_name_is_the_serde_name(&ItemState::ALL);
    stored_name_is_the_serde_name(&[DecisionKind::Approve, DecisionKind::Reject]);
    stored_name_is_the_serde_name(&[Source::Gmail, Source::Muster]);
    stored_name_is_the_serde_name(&DecisionState::ALL);
    stored_name_is_the_serde_name(&[
        RouteState::Relayed,
        RouteState::SendFailed,
        RouteState::Redraft,
        RouteState::TimedOut,
        RouteState::Fallback,
    ]);
    assert!("approved".parse::<DecisionKind>().is_err());
}

#[test]
fn approving_an_item_awaiting_its_check_is_refused_but_rejecting_is_allowed() {
    let refused = ItemState::AwaitingCheck.apply(ItemEvent::Decided(DecisionKind::Approve));
    assert!(refused.is_err());
    assert_eq!(
        ItemState::AwaitingCheck
            .apply(ItemEvent::Decided(DecisionKind::Reject))
            .unwrap(),
        ItemState::Queued
    );
}

#[test]
fn a_sent_item_cannot_be_decided_again() {
    for kind in [DecisionKind::Approve, DecisionKind::Reject] {
        assert!(ItemState::Sent.apply(ItemEvent::Decided(kind)).is_err());
        assert!(ItemState::Gone.apply(ItemEvent::Decided(kind)).is_err());
        assert!(ItemState::Queued.apply(ItemEvent::Decided(kind)).is_err());
    }
}

#[test]
fn undo_returns_the_item_to_where_it_was() {
    assert_eq!(
        ItemState::Queued
            .apply(ItemEvent::Undone {
                awaiting_check: false
            })
            .unwrap(),
        ItemState::Pending
    );
    assert_eq!(
        ItemState::Queued
            .apply(ItemEvent::Undone {
                awaiting_check: true
            })
            .unwrap(),
        ItemState::AwaitingCheck
    );
    assert!(ItemState::Sending
        .apply(ItemEvent::Undone {
            awaiting_check: false
        })
        .is_err());
}

#[test]
fn a_conflict_can_be_decided_again_after_review() {
    let state = ItemState::Sending.apply(ItemEvent::Conflicted).unwrap();
    assert_eq!(state, ItemState::Conflict);
    assert_eq!(
        state
            .apply(ItemEvent::Decided(DecisionKind::Approve))
            .unwrap(),
        ItemState::Queued
    );
}

#[test]
fn only_a_dispatch_in_flight_can_be_delivered() {
    assert!(ItemState::Pending.apply(ItemEvent::Delivered).is_err());
    assert!(ItemState::Queued.apply(ItemEvent::Delivered).is_err());
    assert_eq!(
        ItemState::Sending.apply(ItemEvent::Delivered).unwrap(),
        ItemState::Sent
    );
}

#[test]
fn a_sync_does_not_undo_a_local_decision_but_takes_a_final_answer() {
    use ItemState::*;
    // (the mirror's state, what the sync saw, the state kept)
    for (local, observed, kept) in [
        (Queued, Pending, Queued),
        (Sending, Pending, Sending),
        (Sending, SendFailed, SendFailed),
        (Sent, Pending, Sent),
        (Pending, AwaitingCheck, AwaitingCheck),
    ] {
        assert_eq!(
            local.merge_observed(observed),
            kept,
            "{local:?} seeing {observed:?}"
        );
    }
}

#[test]
fn decision_states_refuse_moves_out_of_final_states() {
    assert!(DecisionState::Done.claim().is_err());
    assert!(DecisionState::Dispatching.cancel().is_err());
    assert!(DecisionState::Cancelled
        .finish(&DispatchOutcome::Done)
        .is_err());
    assert_eq!(
        DecisionState::Dispatching
            .finish(&DispatchOutcome::Retry("offline".into()))
            .unwrap(),
        DecisionState::Queued
    );
    assert_eq!(
        DecisionState::Uncertain
            .finish(&DispatchOutcome::Done)
            .unwrap(),
        DecisionState::Done
    );
}

#[test]
fn every_state_name_round_trips() {
    for state in ItemState::ALL {
        assert_eq!(state.as_str().parse::<ItemState>().unwrap(), state);
    }
    for state in DecisionState::ALL {
        assert_eq!(state.as_str().parse::<DecisionState>().unwrap(), state);
    }
    assert!("bogus".parse::<ItemState>().is_err());
}

/// Issue 39: a sync may mirror what the service did before the dispatcher hears of it. The
/// outcome then lands as "already so", a truer final word replaces "gone", and anything else is
/// a contradiction the owner sees — never a refused move that stops the dispatcher.
#[test]
fn an_outcome_a_sync_mirrored_first_is_already_so_and_a_contradiction_is_named() {
    use ItemEvent as E;
    use ItemState as S;
    let cases = [
        (
            S::Rejected,
            E::RejectionDone,
            Settled::AlreadySo(S::Rejected),
        ),
        (S::Sent, E::Delivered, Settled::AlreadySo(S::Sent)),
        (S::Gone, E::Vanished, Settled::AlreadySo(S::Gone)),
        (
            S::Rejected,
            E::CheckRefused,
            Settled::AlreadySo(S::Rejected),
        ),
        (
            S::SendFailed,
            E::SendRefused,
            Settled::AlreadySo(S::SendFailed),
        ),
        (S::Conflict, E::Conflicted, Settled::AlreadySo(S::Conflict)),
        (S::Gone, E::Delivered, Settled::Moved(S::Sent)),
        (S::Gone, E::RejectionDone, Settled::Moved(S::Rejected)),
        (S::Sending, E::RejectionDone, Settled::Moved(S::Rejected)),
        (S::Rejected, E::Delivered, Settled::Contradicts(S::Rejected)),
        (S::Sent, E::RejectionDone, Settled::Contradicts(S::Sent)),
        (
            S::Rejected,
            E::DispatchRetried,
            Settled::Contradicts(S::Rejected),
        ),
    ];
    for (state, event, settled) in cases {
        assert_eq!(state.settle(event), settled, "{state} on {event:?}");
    }
    for state in ItemState::ALL {
        assert_eq!(
            state.apply(E::Contradicted).unwrap(),
            S::Conflict,
            "{state}"
        );
    }
}
