//! Decisions on several items at once: one reason for a bulk rejection, each binding to its
//! own shown version; a bulk approval only of what this owner displayed, the rest named.

use countersign_core::decide::{self, UndoWindow};
use countersign_core::ItemState;

use crate::support::{dispatch_until, displayed, item_for, reply, sync, Env, OWNER};

#[tokio::test]
async fn fifty_drafts_rejected_at_once_each_bind_to_their_own_version_and_are_deleted() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let drafts: Vec<_> = (0..50)
        .map(|n| {
            env.gmail
                .file_draft(&reply(n, "We can do it for free."), None)
        })
        .collect();
    sync(&env, &account).await;
    let mut shown = Vec::new();
    for draft in &drafts {
        let item = item_for(&env, &draft.id).await;
        shown.push(decide::current(&env.store, item.id).await.unwrap());
    }

    let outcome = decide::reject_all(&env.store, &shown, "never promise free work", OWNER)
        .await
        .unwrap();
    assert_eq!(outcome.decided.len(), 50);
    assert!(outcome.skipped.is_empty(), "{:?}", outcome.skipped);
    for (decision, one) in outcome.decided.iter().zip(&shown) {
        assert_eq!(
            (decision.item_id, &decision.version),
            (one.id, &one.version)
        );
        assert_eq!(decision.digest, one.digest);
    }

    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "all fifty are rejected", || async {
        let mut all = true;
        for draft in &drafts {
            all &= item_for(&env, &draft.id).await.state == ItemState::Rejected;
        }
        all
    })
    .await;
    assert!(
        env.gmail.drafts().is_empty(),
        "every draft deleted in Gmail"
    );
    assert!(env.gmail.sent_messages().is_empty());
}

#[tokio::test]
async fn a_bulk_rejection_needs_a_reason_and_skips_a_draft_that_changed_since() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let first = env.gmail.file_draft(&reply(1, "One"), None);
    let second = env.gmail.file_draft(&reply(2, "Two"), None);
    sync(&env, &account).await;
    let mut shown = Vec::new();
    for draft in [&first, &second] {
        let item = item_for(&env, &draft.id).await;
        shown.push(decide::current(&env.store, item.id).await.unwrap());
    }
    assert!(decide::reject_all(&env.store, &shown, "  ", OWNER)
        .await
        .is_err());

    env.gmail
        .update_draft(&second.id, &reply(2, "Two, rewritten"), None)
        .unwrap();
    sync(&env, &account).await;
    let outcome = decide::reject_all(&env.store, &shown, "not now", OWNER)
        .await
        .unwrap();
    assert_eq!(outcome.decided.len(), 1);
    assert_eq!(outcome.skipped.len(), 1);
    assert_eq!(outcome.skipped[0].id, shown[1].id);
    assert!(
        outcome.skipped[0].why.contains("changed since"),
        "{:?}",
        outcome.skipped
    );
}

#[tokio::test]
async fn a_bulk_approval_sends_only_what_was_displayed_and_names_the_rest() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let seen = env.gmail.file_draft(&reply(1, "Seen and fine."), None);
    let changed = env
        .gmail
        .file_draft(&reply(2, "Seen, then rewritten."), None);
    let unseen = env.gmail.file_draft(&reply(3, "Never opened."), None);
    sync(&env, &account).await;
    let mut ids = Vec::new();
    for draft in [&seen, &changed, &unseen] {
        ids.push(item_for(&env, &draft.id).await.id);
    }
    for &id in &ids[..2] {
        displayed(&env, &decide::current(&env.store, id).await.unwrap()).await;
    }
    // The agent rewrites the second after the owner looked at it.
    env.gmail
        .update_draft(
            &changed.id,
            &reply(2, "Rewritten: a different promise."),
            None,
        )
        .unwrap();
    sync(&env, &account).await;

    let outcome = decide::approve_all_displayed(&env.store, &ids, UndoWindow::None, OWNER)
        .await
        .unwrap();
    assert_eq!(outcome.decided.len(), 1);
    assert_eq!(outcome.decided[0].item_id, ids[0]);
    let skipped: Vec<(i64, &str)> = outcome
        .skipped
        .iter()
        .map(|s| (s.id, s.why.as_str()))
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].0, ids[1]);
    assert!(skipped[0].1.contains("changed since"), "{skipped:?}");
    assert_eq!(skipped[1], (ids[2], "you have not displayed it"));

    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the displayed one is sent", || async {
        item_for(&env, &seen.id).await.state == ItemState::Sent
    })
    .await;
    assert_eq!(env.gmail.send_requests(&seen.id), 1);
    assert_eq!(env.gmail.send_requests(&changed.id), 0);
    assert_eq!(env.gmail.send_requests(&unseen.id), 0);
}
