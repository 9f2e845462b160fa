//! A queue of 10,000 drafts: only the rows in view are in the page, scrolling reaches the
//! last one, and j walks it with the selection kept in view.

use std::time::{Duration, Instant};

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{fill_mirror, Fixture};

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
    let deadline = Instant::now() + UI_TIMEOUT;
    while selected_id(session).await == Some(first) {
        assert!(Instant::now() < deadline, "j did not move the selection");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let position = session
        .execute(
            "const r = document.querySelector('[role=option][aria-selected=true]');
             const s = document.querySelector('.scroller').getBoundingClientRect();
             const b = r.getBoundingClientRect();
             return [Number(r.getAttribute('aria-posinset')), b.top >= s.top && b.bottom <= s.bottom + 1];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        position,
        serde_json::json!([31, true]),
        "row 31 is selected and in view"
    );
    app.screenshot("large-queue").await.unwrap();
    app.quit().await.unwrap();
}
