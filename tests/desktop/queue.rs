//! A queue of 10,000 drafts: only the rows in view are in the page and only a window of them
//! is loaded from the shell, scrolling reaches the last one, End/j/k walk it with the selection
//! kept in view, and the filter (applied by the shell) finds rows that were never loaded.

use std::time::{Duration, Instant};

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, fill_mirror, Fixture};

use crate::support::*;

const QUEUE: usize = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_of_ten_thousand_renders_only_the_rows_in_view_and_scrolls_to_the_last() {
    let Some(prerequisites) = skip_or_fail(
        "a_queue_of_ten_thousand_renders_only_the_rows_in_view_and_scrolls_to_the_last",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    fill_mirror(&fixture.store, QUEUE).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session
        .wait_for("[role=option]", Duration::from_secs(60))
        .await
        .or_log(&app);
    let setsize = session
        .find("[role=option]")
        .await
        .unwrap()
        .attribute("aria-setsize")
        .await
        .unwrap();
    assert_eq!(
        setsize.as_deref(),
        Some("10000"),
        "every draft is in the list"
    );
    let rendered = session.find_all("[role=option]").await.unwrap().len();
    assert!(
        rendered < 100,
        "{rendered} rows in the DOM: the list is not virtualized"
    );

    // Scroll to the very end: the last row is drawn, and still only a window of rows exists.
    session
        .execute(
            "const s = document.querySelector('.scroller'); s.scrollTop = s.scrollHeight;",
            vec![],
        )
        .await
        .unwrap();
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        let last = session
            .execute(
                "return [...document.querySelectorAll('[role=option]')]
                   .map(r => Number(r.getAttribute('aria-posinset')))
                   .reduce((a, b) => Math.max(a, b), 0);",
                vec![],
            )
            .await
            .unwrap();
        if last.as_u64() == Some(QUEUE as u64) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the last row never appeared (last: {last})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rendered = session.find_all("[role=option]").await.unwrap().len();
    assert!(rendered < 100, "{rendered} rows in the DOM after scrolling");
    let loaded = loaded_rows(session).await;
    assert!(
        (1..=400).contains(&loaded),
        "{loaded} rows loaded after scrolling to the end: the page holds the whole queue"
    );

    // Back at the top, j moves the selection and keeps it on screen.
    session
        .execute("document.querySelector('.scroller').scrollTop = 0;", vec![])
        .await
        .unwrap();
    // The first row (selected when the queue opened) is drawn again once the scroll lands.
    let deadline = Instant::now() + UI_TIMEOUT;
    let first = loop {
        if let Some(id) = selected_id(session).await {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "the selected first row never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    session.press_keys(&"j".repeat(30)).await.unwrap();
    // Thirty presses land one by one, and the list scrolls after each: wait for the last one
    // (row 31 selected, drawn and in view), not just for the selection to have moved.
    wait_selected_position(session, 31).await.or_log(&app);
    assert_ne!(selected_id(session).await, Some(first));
    app.screenshot("large-queue").await.unwrap();

    // End selects the last row (loaded from the end, far from the rows held), k the one before.
    session.press_keys(END).await.unwrap();
    wait_selected_position(session, QUEUE).await.or_log(&app);
    session.press_keys("k").await.unwrap();
    wait_selected_position(session, QUEUE - 1)
        .await
        .or_log(&app);
    session.press_keys("j").await.unwrap();
    wait_selected_position(session, QUEUE).await.or_log(&app);
    let loaded = loaded_rows(session).await;
    assert!(
        (1..=400).contains(&loaded),
        "{loaded} rows loaded after End"
    );

    // The filter finds rows that were never loaded: "Order 12" is Order 12, 120–129 and
    // 1200–1299, 111 drafts.
    session.press_keys("/").await.unwrap();
    session.press_keys("Order 12").await.unwrap();
    eventually(UI_TIMEOUT, "the filtered list of 111", || async {
        list_size(session).await == Some(111)
    })
    .await
    .or_log(&app);
    // Back in the list, its last row is reachable and j/k walk the filtered rows.
    session
        .execute("document.querySelector('[role=listbox]').focus();", vec![])
        .await
        .unwrap();
    session.press_keys(END).await.unwrap();
    wait_selected_position(session, 111).await.or_log(&app);
    let subject = session
        .execute(
            "return document.querySelector('[role=option][aria-selected=true]').textContent",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        subject.as_str().is_some_and(|s| s.contains("Re: Order 12")),
        "the last filtered row is an order 12…: {subject}"
    );
    session.press_keys("kk").await.unwrap();
    wait_selected_position(session, 109).await.or_log(&app);
    app.quit().await.unwrap();
}

/// WebDriver's End key.
const END: &str = "\u{E010}";

/// How many rows the UI holds (loaded from the shell), in view or not.
async fn loaded_rows(session: &countersign_e2e::webdriver::Session) -> usize {
    let value = session
        .execute(
            "return Number(document.querySelector('[role=listbox]').dataset.loaded)",
            vec![],
        )
        .await
        .unwrap();
    value.as_u64().unwrap_or(0) as usize
}

/// The list's size as the rows announce it.
async fn list_size(session: &countersign_e2e::webdriver::Session) -> Option<u64> {
    let value = session
        .execute(
            "const r = document.querySelector('[role=option]');
             return r ? Number(r.getAttribute('aria-setsize')) : null;",
            vec![],
        )
        .await
        .ok()?;
    value.as_u64()
}

/// Waits until the selected row is at `position` (1-based) and in view.
async fn wait_selected_position(
    session: &countersign_e2e::webdriver::Session,
    position: usize,
) -> anyhow::Result<()> {
    let expected = serde_json::json!([position, true]);
    let deadline = Instant::now() + UI_TIMEOUT;
    loop {
        let now = session
            .execute(
                "const r = document.querySelector('[role=option][aria-selected=true]');
                 if (!r) return null;
                 const s = document.querySelector('.scroller').getBoundingClientRect();
                 const b = r.getBoundingClientRect();
                 return [Number(r.getAttribute('aria-posinset')), b.top >= s.top && b.bottom <= s.bottom + 1];",
                vec![],
            )
            .await?;
        if now == expected {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!("row {position} was not selected and in view (now: {now})");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
