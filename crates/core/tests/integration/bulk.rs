//! Decisions on several items at once: one reason for a bulk rejection, each binding to its
//! own shown version; a bulk approval only of what this owner displayed, the rest named.

use countersign_core::decide::{self, Listed, UndoWindow};
use countersign_core::selection;
use countersign_core::store::PageStart;
use countersign_core::Error;
use countersign_core::{ItemFilter, ItemState};

use crate::support::{dispatch_until, displayed, item_for, muster_reply, reply, sync, Env, OWNER};

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
    let refused = decide::reject_all(&env.store, &shown, "  ", OWNER)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, Error::Refused { why, .. } if why.contains("reason")),
        "{refused:?}"
    );

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
    assert_eq!(
        outcome.skipped[1].subject, "Re: Invoice 3",
        "named by its subject"
    );

    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the displayed one is sent", || async {
        item_for(&env, &seen.id).await.state == ItemState::Sent
    })
    .await;
    assert_eq!(env.gmail.send_requests(&seen.id), 1);
    assert_eq!(env.gmail.send_requests(&changed.id), 0);
    assert_eq!(env.gmail.send_requests(&unseen.id), 0);
}

#[tokio::test]
async fn a_bulk_rejection_of_listed_rows_binds_each_to_the_version_its_row_showed() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let kept = env.gmail.file_draft(&reply(1, "One"), None);
    let rewritten = env.gmail.file_draft(&reply(2, "Two"), None);
    sync(&env, &account).await;
    // What the queue listed ("select all shown by this filter"), before the agent rewrote one.
    let listed = env
        .store
        .queue_listing(&ItemFilter::default(), None)
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    env.gmail
        .update_draft(&rewritten.id, &reply(2, "Two, rewritten"), None)
        .unwrap();
    sync(&env, &account).await;
    let rewritten_item = item_for(&env, &rewritten.id).await;
    let mut with_unknown = listed.clone();
    with_unknown.push(Listed {
        id: item_for(&env, &kept.id).await.id,
        version: "a-version-never-synced".into(),
    });

    let outcome = decide::reject_all_listed(&env.store, &with_unknown, "not now", OWNER)
        .await
        .unwrap();

    assert_eq!(outcome.decided.len(), 1, "{:?}", outcome.skipped);
    assert_eq!(
        outcome.decided[0].item_id,
        item_for(&env, &kept.id).await.id
    );
    assert_eq!(outcome.skipped.len(), 2, "{:?}", outcome.skipped);
    // The rewritten draft is refused as changed, named by its subject, and not rejected at
    // its new version.
    let changed = &outcome.skipped[0];
    assert_eq!(changed.id, rewritten_item.id);
    assert_eq!(changed.subject, "Re: Invoice 2");
    assert!(changed.why.contains("changed since"), "{changed:?}");
    assert_eq!(
        item_for(&env, &rewritten.id).await.state,
        ItemState::Pending
    );
    assert!(env
        .store
        .decisions_for_item(rewritten_item.id)
        .await
        .unwrap()
        .is_empty());
    // A version the mirror never held is skipped with why, not rejected at the current one.
    assert!(
        outcome.skipped[1].why.starts_with("cannot "),
        "{:?}",
        outcome.skipped[1]
    );
}

#[tokio::test]
async fn the_queue_listing_is_every_row_the_filter_shows_in_list_order() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    for n in 1..=12 {
        env.gmail.file_draft(&reply(n, "Body."), None);
    }
    sync(&env, &account).await;
    let all = env
        .store
        .queue_listing(&ItemFilter::default(), None)
        .await
        .unwrap();
    let page = env
        .store
        .queue_page(&ItemFilter::default(), None, &PageStart::First, 100)
        .await
        .unwrap();
    let rows: Vec<Listed> = page
        .items
        .iter()
        .map(|i| Listed {
            id: i.id,
            version: i.version.clone(),
        })
        .collect();
    assert_eq!(all, rows, "the rows the queue shows, in its order");

    // "Invoice 1" is Invoice 1, 10, 11 and 12.
    let filtered = env
        .store
        .queue_listing(&ItemFilter::default(), Some("Invoice 1"))
        .await
        .unwrap();
    assert_eq!(filtered.len(), 4);
    let sent_only = ItemFilter {
        states: vec![ItemState::Sent],
        ..ItemFilter::default()
    };
    assert!(env
        .store
        .queue_listing(&sent_only, None)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_selection_is_summed_up_by_count_accounts_and_distinct_recipients() {
    let env = Env::new().await;
    let gmail = env.connect_gmail().await;
    let plain = env.gmail.file_draft(&reply(1, "One"), None);
    // Ana again (other case), and a Cc and a Bcc.
    let copied = env.gmail.file_draft(
        b"From: Owner <owner@example.com>\r\nTo: ANA@example.com\r\n\
          Cc: bo@example.org\r\nBcc: Hidden <hidden@example.net>\r\n\
          Subject: Copies\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello.\r\n",
        None,
    );
    sync(&env, &gmail).await;
    // A muster reply to Ana's relayed message: addressed to her.
    let (muster, muster_draft) = muster_reply(&env, false).await;
    let mut listed = Vec::new();
    for draft in [&plain.id, &copied.id, &muster_draft] {
        let item = item_for(&env, draft).await;
        listed.push(Listed {
            id: item.id,
            version: item.version,
        });
    }

    let summary = selection::summarize(&env.store, &listed).await.unwrap();

    assert_eq!(summary.count, 3);
    assert_eq!(summary.accounts.len(), 2, "{:?}", summary.accounts);
    assert!(summary.accounts[0].contains(&gmail.profile.address));
    assert!(summary.accounts[1].contains(&muster.profile.address));
    assert_eq!(
        summary.recipients,
        vec![
            "Ana <ana@example.com>",
            "bo@example.org",
            "Hidden <hidden@example.net>"
        ],
        "every To, Cc and Bcc once, whatever its case"
    );

    // One draft: its own recipients only.
    let one = selection::summarize(&env.store, &listed[..1])
        .await
        .unwrap();
    assert_eq!(
        (one.count, one.recipients),
        (1, vec!["Ana <ana@example.com>".to_string()])
    );
}

/// A draft whose structure is broken needs "Approve anyway?" — asked of one draft at a time,
/// with its cautions named. Approving a selection never confirms it on the owner's behalf: it
/// is skipped, named by its subject, and nothing of it is sent.
#[tokio::test]
async fn a_bulk_approval_never_confirms_a_caution() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let fine = env.gmail.file_draft(&reply(1, "All in order."), None);
    let broken = env.gmail.file_draft(
        b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
          Subject: Re: Figures\r\nMessage-ID: <bulk-caution@agent.example>\r\n\
          MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n\
          The figures are attached.\r\n",
        None,
    );
    sync(&env, &account).await;
    let mut ids = Vec::new();
    for draft in [&fine, &broken] {
        let id = item_for(&env, &draft.id).await.id;
        displayed(&env, &decide::current(&env.store, id).await.unwrap()).await;
        ids.push(id);
    }

    let outcome = decide::approve_all_displayed(&env.store, &ids, UndoWindow::None, OWNER)
        .await
        .unwrap();
    assert_eq!(outcome.decided.len(), 1, "{outcome:?}");
    assert_eq!(outcome.decided[0].item_id, ids[0]);
    assert_eq!(outcome.skipped.len(), 1, "{outcome:?}");
    let skipped = &outcome.skipped[0];
    assert_eq!(
        (skipped.id, skipped.subject.as_str()),
        (ids[1], "Re: Figures")
    );
    assert!(
        skipped.why.contains("one draft at a time") && skipped.why.contains("boundary"),
        "the caution is named and left to a decision of its own: {}",
        skipped.why
    );
    assert!(!skipped.why.contains("item"), "{}", skipped.why);

    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "the one without cautions is sent", || async {
        item_for(&env, &fine.id).await.state == ItemState::Sent
    })
    .await;
    assert_eq!(env.gmail.send_requests(&broken.id), 0);
    assert_eq!(item_for(&env, &broken.id).await.state, ItemState::Pending);
    assert!(env
        .store
        .list_decisions(countersign_core::store::DecisionFilter::All)
        .await
        .unwrap()
        .iter()
        .all(|d| d.item_id != ids[1]));
}
