//! Every client call against the fake, as the sync and the outbox use them.

use countersign_gmail::{Error, MessageQuery};

use crate::support::{client, fake, parent, reply};

#[tokio::test]
async fn listing_drafts_follows_every_page() {
    let fake = fake().await;
    for i in 0..1100 {
        fake.file_draft(&reply(&format!("<d{i}@example.com>"), "hi"), None);
    }
    let drafts = client(&fake).list_drafts().await.unwrap();
    assert_eq!(drafts.len(), 1100);
    let mut ids: Vec<_> = drafts.iter().map(|d| d.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1100, "no draft twice");
    // 500 a page: three pages.
    assert_eq!(fake.request_count("drafts.list"), 3);
}

#[tokio::test]
async fn an_empty_mailbox_lists_no_drafts() {
    let fake = fake().await;
    assert!(client(&fake).list_drafts().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_draft_comes_back_byte_for_byte_with_its_version_and_thread() {
    let fake = fake().await;
    let (_, thread) = fake.add_inbox_message(&parent(), None);
    let raw = reply("<r1@example.com>", "Friday works, caf\u{e9} at noon?");
    let filed = fake.file_draft(&raw, Some(&thread));
    let gmail = client(&fake);

    let draft = gmail.get_draft_raw(&filed.id).await.unwrap();
    assert_eq!(draft.raw, raw);
    assert_eq!(draft.message_id, filed.message_id);
    assert_eq!(draft.thread_id, thread);
    assert_eq!(draft.label_ids, vec!["DRAFT"]);

    let minimal = gmail.get_draft_minimal(&filed.id).await.unwrap();
    assert_eq!(minimal.message_id, filed.message_id);
    assert_eq!(minimal.thread_id, thread);
}

#[tokio::test]
async fn an_agent_update_shows_as_a_new_message_id_of_the_same_draft() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<r1@example.com>", "v1"), None);
    let new_message = fake
        .update_draft(&filed.id, &reply("<r1@example.com>", "v2"), None)
        .unwrap();
    let gmail = client(&fake);
    let listed = gmail.list_drafts().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, filed.id);
    assert_eq!(listed[0].message_id, new_message);
    assert_ne!(new_message, filed.message_id);
}

#[tokio::test]
async fn sending_sends_the_reviewed_bytes_on_the_thread_and_the_draft_vanishes() {
    let fake = fake().await;
    let (_, thread) = fake.add_inbox_message(&parent(), None);
    let reviewed = reply("<reviewed@example.com>", "reviewed text");
    let filed = fake.file_draft(&reviewed, Some(&thread));
    // The agent changes the draft after the review; the reviewed bytes are what must leave.
    fake.update_draft(
        &filed.id,
        &reply("<reviewed@example.com>", "newer text"),
        None,
    );
    let gmail = client(&fake);

    let sent = gmail
        .send_draft(&filed.id, &reviewed, Some(&thread))
        .await
        .unwrap();
    assert_eq!(sent.thread_id, thread);
    assert_eq!(sent.label_ids, vec!["SENT"]);
    let on_the_wire = fake.sent_messages();
    assert_eq!(on_the_wire.len(), 1);
    assert_eq!(on_the_wire[0].raw, reviewed);

    assert!(matches!(
        gmail.get_draft_raw(&filed.id).await,
        Err(Error::NotFound { .. })
    ));
    let found = gmail
        .find_sent_by_message_id("<reviewed@example.com>")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, sent.id);
}

#[tokio::test]
async fn a_deleted_draft_is_gone_and_deleting_again_says_not_found() {
    let fake = fake().await;
    let filed = fake.file_draft(&reply("<x@example.com>", "x"), None);
    let gmail = client(&fake);
    gmail.delete_draft(&filed.id).await.unwrap();
    assert!(gmail.list_drafts().await.unwrap().is_empty());
    assert!(matches!(
        gmail.delete_draft(&filed.id).await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn the_parent_message_headers_are_read_with_metadata() {
    let fake = fake().await;
    let (id, thread) = fake.add_inbox_message(&parent(), None);
    let meta = client(&fake)
        .get_message_metadata(&id, &["From", "Message-ID"])
        .await
        .unwrap();
    assert_eq!(meta.thread_id, thread);
    assert_eq!(meta.header("from"), Some("Alice <alice@example.org>"));
    assert_eq!(meta.header("Message-Id"), Some("<parent@example.org>"));
    assert_eq!(meta.header("Subject"), None, "only the headers asked for");
    assert!(meta.label_ids.contains(&"INBOX".to_string()));
}

#[tokio::test]
async fn a_message_id_search_finds_only_that_message() {
    let fake = fake().await;
    fake.add_inbox_message(&parent(), None);
    fake.add_inbox_message(&reply("<other@example.com>", "x"), None);
    let found = client(&fake)
        .list_messages(&MessageQuery {
            q: Some("rfc822msgid:parent@example.org".into()),
            ..MessageQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    // Nothing was sent, so SENT has nothing under that id.
    assert!(client(&fake)
        .find_sent_by_message_id("<parent@example.org>")
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn history_lists_draft_changes_since_the_profile_history_id() {
    let fake = fake().await;
    let gmail = client(&fake);
    let start = gmail.profile().await.unwrap().history_id;
    fake.add_inbox_message(&parent(), None);
    let filed = fake.file_draft(&reply("<h@example.com>", "v1"), None);
    let v2 = fake
        .update_draft(&filed.id, &reply("<h@example.com>", "v2"), None)
        .unwrap();

    let changes = gmail.list_draft_history(&start).await.unwrap();
    let added: Vec<_> = changes
        .records
        .iter()
        .flat_map(|r| r.messages_added.iter().map(|m| m.id.clone()))
        .collect();
    let deleted: Vec<_> = changes
        .records
        .iter()
        .flat_map(|r| r.messages_deleted.iter().map(|m| m.id.clone()))
        .collect();
    assert_eq!(
        added,
        vec![filed.message_id.clone(), v2.clone()],
        "the inbox message is not a draft change"
    );
    assert_eq!(deleted, vec![filed.message_id]);
    assert_eq!(changes.history_id, fake.history_id().to_string());

    let nothing = gmail.list_draft_history(&changes.history_id).await.unwrap();
    assert!(nothing.is_empty());
}

#[tokio::test]
async fn a_too_old_history_id_is_not_found_so_the_caller_resyncs() {
    let fake = fake().await;
    let gmail = client(&fake);
    let start = gmail.profile().await.unwrap().history_id;
    fake.file_draft(&reply("<h@example.com>", "v1"), None);
    fake.expire_history();
    assert!(matches!(
        gmail.list_draft_history(&start).await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test]
async fn the_profile_names_the_mailbox() {
    let fake = fake().await;
    let profile = client(&fake).profile().await.unwrap();
    assert_eq!(profile.email_address, "owner@example.com");
    assert_eq!(profile.history_id, fake.history_id().to_string());
}

#[tokio::test]
async fn granted_scopes_are_read_from_tokeninfo() {
    let fake = fake().await;
    let granted = client(&fake).granted_scopes().await.unwrap();
    assert_eq!(granted.scopes, vec![countersign_gmail::oauth::GMAIL_MODIFY]);
    assert!(granted.expires_in.unwrap() > 3000);
}

#[tokio::test]
async fn labels_list_gives_each_label_with_its_kind() {
    let fake = fake().await;
    let billing = fake.create_label("Agents/Billing");
    let labels = client(&fake).list_labels().await.unwrap();
    let user = labels
        .iter()
        .find(|l| l.id == billing)
        .expect("the user label is listed");
    assert_eq!(user.name, "Agents/Billing");
    assert_eq!(user.kind, countersign_gmail::LabelKind::User);
    let draft = labels
        .iter()
        .find(|l| l.id == "DRAFT")
        .expect("DRAFT is listed");
    assert_eq!(draft.kind, countersign_gmail::LabelKind::System);
    assert_eq!(fake.request_count("labels.list"), 1);
}
