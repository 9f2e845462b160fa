//! Every answer of `POST /api/plugin/drafts/{id}/decide` in the contract, as a typed outcome.

use countersign_fakes::muster::CheckVerdict;
use countersign_muster::{CheckState, DecideOutcome, Decision, DraftState};

use crate::{client, fake, file_reply, read};

#[tokio::test]
async fn approving_a_pending_draft_queues_it_at_the_plugin_with_musters_note() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    assert_eq!(draft.state, DraftState::Pending);
    assert_eq!(draft.check, CheckState::None);
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    let DecideOutcome::Queued { draft: after, note } = outcome else {
        panic!("expected Queued, got {outcome:?}");
    };
    assert_eq!(after.state, DraftState::Approved);
    assert_ne!(after.updated_at, draft.updated_at);
    assert_eq!(
        note,
        "Queued: the plugin sends it and a refusal comes back here."
    );
}

#[tokio::test]
async fn rejecting_with_a_note_is_accepted() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    let outcome = muster
        .decide(
            &draft.id,
            Decision::Reject,
            Some("wrong tone"),
            &draft.updated_at,
        )
        .await
        .unwrap();
    assert!(
        matches!(&outcome, DecideOutcome::Queued { draft, .. } if draft.state == DraftState::Rejected),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn approving_before_the_plugin_checked_is_refused_as_unchecked_but_rejecting_works() {
    let fake = fake().await;
    let filed = file_reply(&fake, true);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    assert_eq!(draft.check, CheckState::Awaiting);
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    // muster's own sentence comes along, for the owner to read.
    assert_eq!(
        outcome,
        DecideOutcome::Unchecked {
            message: "the plugin has not checked this draft yet; it can only be rejected".into()
        }
    );
    assert_eq!(read(&muster, &draft.id).await.state, DraftState::Pending);
    let outcome = muster
        .decide(&draft.id, Decision::Reject, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(outcome, DecideOutcome::Queued { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_draft_the_plugin_found_sendable_can_be_approved() {
    let fake = fake().await;
    let filed = file_reply(&fake, true);
    let muster = client(&fake);
    fake.record_check(&filed.draft_id, CheckVerdict::Sendable, None)
        .unwrap();
    let draft = read(&muster, &filed.draft_id).await;
    assert_eq!(draft.check, CheckState::Sendable);
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(outcome, DecideOutcome::Queued { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_draft_the_plugin_refused_can_never_be_approved() {
    let fake = fake().await;
    let filed = file_reply(&fake, true);
    let muster = client(&fake);
    fake.record_check(
        &filed.draft_id,
        CheckVerdict::Refused,
        Some("quotes a price we do not offer"),
    )
    .unwrap();
    let draft = read(&muster, &filed.draft_id).await;
    assert_eq!(draft.state, DraftState::Rejected);
    assert_eq!(draft.check, CheckState::Refused);
    assert_eq!(
        draft.check_detail.as_deref(),
        Some("quotes a price we do not offer")
    );
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert_eq!(
        outcome,
        DecideOutcome::CheckRefused {
            message: "the plugin refused this draft; it can never be approved".into()
        }
    );
}

#[tokio::test]
async fn the_same_decision_twice_is_already_decided_with_the_same_decision() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let draft = read(&muster, &filed.draft_id).await;
    muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    // The caller retries with the version it reviewed, as after a lost answer.
    let outcome = muster
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    let DecideOutcome::AlreadyDecided {
        draft: now,
        same_decision,
    } = outcome
    else {
        panic!("expected AlreadyDecided, got {outcome:?}");
    };
    assert!(same_decision);
    assert_eq!(now.state, DraftState::Approved);
}

#[tokio::test]
async fn a_draft_decided_otherwise_elsewhere_is_already_decided_with_another_decision() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let here = client(&fake);
    let elsewhere = client(&fake);
    let draft = read(&here, &filed.draft_id).await;
    elsewhere
        .decide(&draft.id, Decision::Reject, None, &draft.updated_at)
        .await
        .unwrap();
    let outcome = here
        .decide(&draft.id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(
            &outcome,
            DecideOutcome::AlreadyDecided { draft, same_decision: false } if draft.state == DraftState::Rejected
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_draft_changed_since_review_is_stale_and_comes_back_as_it_is_now() {
    let fake = fake().await;
    let filed = file_reply(&fake, true);
    let muster = client(&fake);
    let reviewed = read(&muster, &filed.draft_id).await;
    // The plugin's verdict moves updatedAt on after the owner looked.
    fake.record_check(&filed.draft_id, CheckVerdict::Sendable, Some("ok"))
        .unwrap();
    let outcome = muster
        .decide(&reviewed.id, Decision::Approve, None, &reviewed.updated_at)
        .await
        .unwrap();
    let DecideOutcome::Stale { draft } = outcome else {
        panic!("expected Stale, got {outcome:?}");
    };
    assert_eq!(draft.check, CheckState::Sendable);
    assert_ne!(draft.updated_at, reviewed.updated_at);
    assert_eq!(read(&muster, &reviewed.id).await.state, DraftState::Pending);
}

#[tokio::test]
async fn deciding_an_unknown_draft_is_not_found() {
    let fake = fake().await;
    let muster = client(&fake);
    let outcome = muster
        .decide("999", Decision::Approve, None, "2026-01-01T00:00:00Z")
        .await
        .unwrap();
    assert_eq!(outcome, DecideOutcome::NotFound);
    let e = muster.get_draft("999").await.unwrap_err();
    assert_eq!(e.to_string(), "cannot find draft 999 in muster");
}
