//! Gmail drafts into the mirror: full, incremental and no-change syncs, versions, vanished
//! drafts, parents, and a large sync through 429 storms.

use std::time::Duration;

use countersign_core::sync::sync_gmail;
use countersign_core::{ItemFilter, ItemState};
use countersign_fakes::gmail::{Failure, GmailConfig};

use crate::support::{parent, reply, Env};

#[tokio::test]
async fn a_full_sync_mirrors_every_draft_and_a_sync_with_no_changes_makes_one_request() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    for n in 0..3 {
        let (_, thread) = env.gmail.add_inbox_message(&parent(n), None);
        env.gmail
            .file_draft(&reply(n, "Here it is."), Some(&thread));
    }
    let client = env.services.gmail(&account).await.unwrap();
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert!(report.full);
    assert_eq!(report.new_items, 3);
    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|i| i.state == ItemState::Pending));
    assert!(items
        .iter()
        .all(|i| i.recipients.contains("ana@example.com")));

    env.gmail.clear_requests();
    let quiet = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(quiet, Default::default());
    let requests = env.gmail.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].method, "history.list", "{requests:?}");
}

#[tokio::test]
async fn an_incremental_sync_fetches_only_the_draft_that_changed() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let drafts: Vec<_> = (0..5)
        .map(|n| env.gmail.file_draft(&reply(n, "first"), None))
        .collect();
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();

    env.gmail
        .update_draft(&drafts[2].id, &reply(2, "second"), None)
        .unwrap();
    env.gmail.clear_requests();
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert!(!report.full);
    assert_eq!(report.new_versions, 1);
    assert_eq!(env.gmail.request_count("drafts.get"), 1);
}

#[tokio::test]
async fn a_history_record_with_only_messages_brings_the_new_draft_in_one_cycle() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    env.gmail.file_draft(&reply(0, "first"), None);
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();

    // Records that name their messages but not how they changed; the listing is not due.
    env.gmail.set_history_only_messages(true);
    let draft = env.gmail.file_draft(&reply(1, "new"), None);
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert!(!report.full);
    assert_eq!(report.new_items, 1, "{report:?}");
    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    assert!(items.iter().any(|i| i.external_id == draft.id), "{items:?}");
}

#[tokio::test]
async fn a_draft_updated_twice_keeps_all_three_versions() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "one"), None);
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    env.gmail
        .update_draft(&draft.id, &reply(1, "two"), None)
        .unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    env.gmail
        .update_draft(&draft.id, &reply(1, "three"), None)
        .unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();

    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    assert_eq!(items.len(), 1);
    let versions = env.store.versions(items[0].id).await.unwrap();
    assert_eq!(versions.len(), 3);
    let bodies: Vec<String> = versions
        .iter()
        .map(|v| String::from_utf8_lossy(v.content.bytes()).into_owned())
        .collect();
    assert!(bodies[0].contains("one") && bodies[1].contains("two") && bodies[2].contains("three"));
}

#[tokio::test]
async fn a_history_id_too_old_falls_back_to_a_full_sync() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    env.gmail.file_draft(&reply(1, "one"), None);
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    env.gmail.file_draft(&reply(2, "two"), None);
    env.gmail.expire_history();
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    assert!(report.full);
    assert_eq!(report.new_items, 1);
}

#[tokio::test]
async fn a_draft_deleted_or_sent_elsewhere_is_marked_gone_with_the_reason() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let deleted = env.gmail.file_draft(&reply(1, "delete me"), None);
    let sent = env.gmail.file_draft(&reply(2, "send me"), None);
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();

    env.gmail.delete_draft(&deleted.id);
    // The owner sends one from Gmail's own web page.
    client
        .send_draft(&sent.id, &reply(2, "send me"), None)
        .await
        .unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();

    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    let by_draft = |id: &str| items.iter().find(|i| i.external_id == id).unwrap().clone();
    let gone = by_draft(&deleted.id);
    assert_eq!(gone.state, ItemState::Gone);
    assert!(gone.state_reason.unwrap().contains("deleted elsewhere"));
    let elsewhere = by_draft(&sent.id);
    assert_eq!(elsewhere.state, ItemState::Gone);
    assert!(elsewhere.state_reason.unwrap().contains("sent elsewhere"));
}

#[tokio::test]
async fn the_parent_of_a_reply_is_fetched_once_and_kept_with_the_item() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let (_, thread) = env.gmail.add_inbox_message(&parent(7), None);
    let draft = env.gmail.file_draft(&reply(7, "v1"), Some(&thread));
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    env.gmail
        .update_draft(&draft.id, &reply(7, "v2"), None)
        .unwrap();
    env.gmail.clear_requests();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(
        env.gmail.request_count("messages.get"),
        0,
        "parent fetched again"
    );

    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    let item = env.store.get_item(items[0].id).await.unwrap();
    let answers: serde_json::Value = serde_json::from_str(&item.answers_json.unwrap()).unwrap();
    assert_eq!(answers["from"][0]["email"], "ana@example.com");
    assert_eq!(answers["messageId"], "parent-7@example.com");
}

#[tokio::test]
async fn a_thousand_drafts_are_all_mirrored_through_429_storms() {
    let env = Env::with_gmail(GmailConfig {
        quota_units_per_minute: 1_000_000,
        ..GmailConfig::default()
    })
    .await;
    let account = env.connect_gmail().await;
    for n in 0..1000 {
        env.gmail.file_draft(&reply(n, "bulk"), None);
    }
    let client = env.services.gmail(&account).await.unwrap();
    // Storms: after every 50 reads, the next 3 are refused with 429 and a retry time.
    let storm_fake = env.gmail.clone();
    let storms = tokio::spawn(async move {
        let mut storms = 0;
        let mut next = 50;
        while storms < 15 {
            if storm_fake.request_count("drafts.get") >= next {
                storm_fake.fail_next(
                    "drafts.get",
                    3,
                    Failure::status(429)
                        .reason("rateLimitExceeded")
                        .retry_after(Duration::from_millis(20)),
                );
                storms += 1;
                next += 50;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    let report = sync_gmail(&env.store, &account, &client).await.unwrap();
    storms.await.unwrap();
    assert_eq!(report.new_items, 1000);
    assert_eq!(
        env.store
            .list_items(&ItemFilter::default())
            .await
            .unwrap()
            .len(),
        1000
    );
    // More reads than drafts: refused ones were retried, none failed the sync.
    assert!(
        env.gmail.request_count("drafts.get") > 1000,
        "the storm never hit the sync"
    );
}

#[tokio::test]
async fn a_reply_s_thread_is_read_once_and_the_message_it_answers_is_kept_in_full() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let earlier = b"From: Bo <bo@example.com>\r\nTo: owner@example.com\r\nSubject: Invoice 7\r\n\
        Date: Mon, 30 Nov 2026 09:00:00 +0000\r\nMessage-ID: <earlier-7@example.com>\r\n\r\n\
        Has the invoice gone out?\r\n";
    let (_, thread) = env.gmail.add_inbox_message(earlier, None);
    env.gmail.add_inbox_message(&parent(7), Some(&thread));
    let first = env.gmail.file_draft(&reply(7, "one"), Some(&thread));
    env.gmail
        .file_draft(&reply(7, "second reply"), Some(&thread));
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail(&env.store, &account, &client).await.unwrap();
    assert_eq!(
        env.gmail.request_count("threads.get"),
        1,
        "one read per thread"
    );
    assert_eq!(
        env.gmail.request_count("messages.get"),
        1,
        "the parent's bytes are read once"
    );
    assert_eq!(env.gmail.request_count("messages.list"), 0);

    // The review is built from the mirror alone: the fake is gone.
    env.gmail.clear_requests();
    let id = env
        .store
        .find_item(&account.id, &first.id)
        .await
        .unwrap()
        .unwrap();
    let detail = countersign_core::review::review_detail(&env.store, id, false)
        .await
        .unwrap();
    assert!(env.gmail.requests().is_empty());
    let answered = detail.content.answered.expect("what the draft answers");
    assert!(!answered.snippet_only);
    assert_eq!(answered.from[0].email, "ana@example.com");
    let view = answered.view.expect("the parent rendered");
    assert_eq!(view.text_body.trim(), "Please send the invoice.");
    assert!(view.html_body.contains("Please send the invoice."));
    assert_eq!(answered.thread.len(), 1, "{:?}", answered.thread);
    assert_eq!(answered.thread[0].from, "Bo <bo@example.com>");
    assert_eq!(answered.thread[0].snippet, "Has the invoice gone out?");
    assert_eq!(
        detail.content.gmail_link.as_deref(),
        Some(
            format!(
                "https://mail.google.com/mail/u/{}/#drafts?compose={}",
                account.profile.address, first.message_id
            )
            .as_str()
        )
    );
}
