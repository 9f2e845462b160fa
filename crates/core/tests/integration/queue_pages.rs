//! The queue read a page at a time (keyset pagination) from a real mirror file: every item
//! exactly once and in list order while drafts arrive, backwards from the end, the text
//! filter and the counts per state from SQL.

use std::collections::HashMap;

use countersign_core::store::{
    DraftContent, MusterFields, NewAccount, ObservedDraft, PageStart, QueueCursor, QueuePage,
    SecretStorage,
};
use countersign_core::{
    DecisionKind, ItemEvent, ItemFilter, ItemState, ItemSummary, Source, Store,
};

async fn mirror() -> (tempfile::TempDir, Store, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let account = store
        .add_account(NewAccount {
            kind: Source::Gmail,
            label: "Work".into(),
            address: "owner@example.com".into(),
            api_base: "http://127.0.0.1:1/gmail/v1/users/me".into(),
            granted_scopes: vec![],
            secret_storage: SecretStorage::None,
        })
        .await
        .unwrap()
        .id;
    (dir, store, account)
}

async fn file(store: &Store, account: &str, n: usize, subject: &str) -> i64 {
    store
        .record_draft(&ObservedDraft {
            account_id: account.to_string(),
            source: Source::Gmail,
            external_id: format!("d-{n}"),
            version: format!("m-{n}"),
            content: DraftContent::Raw(format!("Subject: {subject}\r\n\r\nbody {n}\r\n").into()),
            observed_state: ItemState::Pending,
            gmail_internal_date: None,
            thread_id: None,
            subject: subject.to_string(),
            from_addr: "owner@example.com".into(),
            recipients: format!("client{n}@example.com"),
            snippet: format!("body {n}"),
            muster: MusterFields::default(),
            answers_json: None,
            state_reason: None,
        })
        .await
        .unwrap()
        .item_id
}

/// `count` drafts, every seventh queued for sending (a decision taken) so the list has two
/// state ranks; many share a millisecond, so the id decides their order.
async fn queue_of(store: &Store, account: &str, count: usize) {
    for n in 0..count {
        let id = file(store, account, n, &format!("Order {n}")).await;
        if n % 7 == 0 {
            store
                .apply_item_event(id, ItemEvent::Decided(DecisionKind::Reject), None)
                .await
                .unwrap();
        }
    }
}

fn ids(items: &[ItemSummary]) -> Vec<i64> {
    items.iter().map(|i| i.id).collect()
}

async fn page(store: &Store, start: PageStart, limit: u32) -> QueuePage {
    store
        .queue_page(&ItemFilter::default(), None, &start, limit)
        .await
        .unwrap()
}

#[tokio::test]
async fn reading_on_after_the_last_row_gives_every_item_once_in_list_order_while_drafts_arrive() {
    let (_dir, store, account) = mirror().await;
    queue_of(&store, &account, 230).await;
    let before = ids(&store.list_items(&ItemFilter::default()).await.unwrap());

    let mut seen = Vec::new();
    let mut arrived = 0;
    let mut start = PageStart::First;
    loop {
        let page = page(&store, start, 37).await;
        assert_eq!(
            page.start as usize,
            seen.len() + arrived,
            "a page's start counts the rows before it now, including drafts that arrived"
        );
        assert_eq!(page.total as usize, before.len() + arrived);
        let Some(last) = page.items.last() else {
            break;
        };
        start = PageStart::After {
            cursor: QueueCursor::from(last),
        };
        seen.extend(ids(&page.items));
        // New drafts arrive between pages: newest first, they sort above the rows read so far.
        for _ in 0..3 {
            file(&store, &account, 1000 + arrived, "Late").await;
            arrived += 1;
        }
    }
    assert_eq!(seen, before, "every item once, in list order");
}

#[tokio::test]
async fn reading_back_from_the_end_gives_the_list_in_reverse() {
    let (_dir, store, account) = mirror().await;
    queue_of(&store, &account, 120).await;
    let all = ids(&store.list_items(&ItemFilter::default()).await.unwrap());

    let mut pages = Vec::new();
    let mut start = PageStart::Last;
    loop {
        let page = page(&store, start, 25).await;
        let Some(first) = page.items.first() else {
            assert_eq!(page.start, 0);
            break;
        };
        assert_eq!(
            ids(&page.items),
            all[page.start as usize..page.start as usize + page.items.len()],
            "the page is the slice of the list at its start"
        );
        start = PageStart::Before {
            cursor: QueueCursor::from(first),
        };
        pages.push(page.items);
    }
    pages.reverse();
    assert_eq!(ids(&pages.concat()), all);

    for (position, id) in all.iter().enumerate() {
        let found = store
            .queue_position(&ItemFilter::default(), None, *id)
            .await
            .unwrap();
        assert_eq!(found, Some(position as u64), "position of item {id}");
    }
    let pending_only = ItemFilter {
        states: vec![ItemState::Pending],
        ..ItemFilter::default()
    };
    let queued = store.list_items(&ItemFilter::default()).await.unwrap()[119].clone();
    assert_eq!(queued.state, ItemState::Queued);
    assert_eq!(
        store
            .queue_position(&pending_only, None, queued.id)
            .await
            .unwrap(),
        None,
        "an item the filter leaves out has no position"
    );

    let jump = page(&store, PageStart::At { offset: 100 }, 25).await;
    assert_eq!(jump.start, 100);
    assert_eq!(
        ids(&jump.items),
        all[100..120],
        "a jump reads the rows at its offset"
    );
}

#[tokio::test]
async fn the_text_filter_and_the_counts_per_state_come_from_sql() {
    let (_dir, store, account) = mirror().await;
    queue_of(&store, &account, 40).await;
    file(&store, &account, 500, "Discount 100% off").await;
    file(&store, &account, 501, "Discount 1000 off").await;
    file(&store, &account, 502, "Devis pour Élodie").await;

    let filtered = store
        .queue_page(
            &ItemFilter::default(),
            Some(" order 3"),
            &PageStart::First,
            100,
        )
        .await
        .unwrap();
    let subjects: Vec<_> = filtered.items.iter().map(|i| i.subject.as_str()).collect();
    // "Order 3", "Order 30" … "Order 39", case-insensitive, in list order.
    assert_eq!(filtered.total, 11);
    assert_eq!(subjects.len(), 11);
    assert!(
        subjects.iter().all(|s| s.starts_with("Order 3")),
        "{subjects:?}"
    );
    let in_list: Vec<_> = store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|i| i.subject.starts_with("Order 3"))
        .map(|i| i.id)
        .collect();
    assert_eq!(ids(&filtered.items), in_list);

    // The owner's % is a character, not a wildcard.
    let percent = store
        .queue_page(&ItemFilter::default(), Some("100%"), &PageStart::First, 100)
        .await
        .unwrap();
    assert_eq!(percent.items.len(), 1);
    assert_eq!(percent.items[0].subject, "Discount 100% off");

    // Case folds beyond ASCII (SQLite's own LIKE folds only A-Z), and a `.` is a character.
    let accented = store
        .queue_page(
            &ItemFilter::default(),
            Some("élodie"),
            &PageStart::First,
            100,
        )
        .await
        .unwrap();
    assert_eq!(accented.items.len(), 1);
    assert_eq!(accented.items[0].subject, "Devis pour Élodie");
    let dot = store
        .queue_page(
            &ItemFilter::default(),
            Some("order 3."),
            &PageStart::First,
            100,
        )
        .await
        .unwrap();
    assert_eq!(dot.total, 0, "{:?}", dot.items);

    // Recipients match too, and a state filter narrows by SQL.
    let queued_to_client7 = store
        .queue_page(
            &ItemFilter {
                states: vec![ItemState::Queued],
                ..ItemFilter::default()
            },
            Some("CLIENT7@"),
            &PageStart::First,
            100,
        )
        .await
        .unwrap();
    assert_eq!(queued_to_client7.items.len(), 1);
    assert_eq!(queued_to_client7.items[0].recipients, "client7@example.com");

    let counts = store.state_counts(&ItemFilter::default()).await.unwrap();
    let mut expected: HashMap<ItemState, u64> = HashMap::new();
    for item in store.list_items(&ItemFilter::default()).await.unwrap() {
        *expected.entry(item.state).or_default() += 1;
    }
    assert_eq!(counts, expected);
    assert_eq!(counts[&ItemState::Queued], 6);
    assert_eq!(counts[&ItemState::Pending], 37);
}
