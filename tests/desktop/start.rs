//! Start: the window paints the queue from the mirror before any account is contacted, and
//! the syncs start only once the UI said it painted.

use std::time::Duration;

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mirrors_queue_is_painted_while_gmail_is_slow_and_syncs_start_after_the_paint() {
    let Some(prerequisites) = skip_or_fail(
        "the_mirrors_queue_is_painted_while_gmail_is_slow_and_syncs_start_after_the_paint",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    for n in 1..=3 {
        let raw = gmail_reply(n, &format!("Mirrored {n}"), "Already in the mirror.");
        fixture.gmail.file_draft(&raw, None);
    }
    fixture.sync(&account).await.unwrap();
    // From now on Gmail answers each sync request only after a minute: a window that waited
    // for it would show nothing.
    for method in ["history.list", "drafts.list", "drafts.get", "getProfile"] {
        fixture.gmail.delay(method, Duration::from_secs(60), None);
    }
    let before_launch = fixture.gmail.requests().len();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    eventually(
        UI_TIMEOUT,
        "the mirror's three drafts in the queue",
        || async {
            session
                .find_all("[role=option]")
                .await
                .map(|rows| rows.len())
                .unwrap_or(0)
                == 3
        },
    )
    .await
    .or_log(&app);

    // The UI marks the moment it painted before telling the shell; the first request of the
    // sync must come after it.
    eventually(UI_TIMEOUT, "the UI reported its first paint", || async {
        session
            .execute(
                "return document.documentElement.dataset.firstPaint ?? null",
                vec![],
            )
            .await
            .is_ok_and(|v| v.is_string())
    })
    .await
    .or_log(&app);
    let painted_ms: i64 = session
        .execute("return document.documentElement.dataset.firstPaint", vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    eventually(UI_TIMEOUT, "the sync's first request at Gmail", || async {
        fixture.gmail.requests().len() > before_launch
    })
    .await
    .or_log(&app);
    let requests = fixture.gmail.requests();
    let first_request = &requests[before_launch];
    assert!(
        first_request.at.timestamp_millis() >= painted_ms,
        "the sync's first request ({} at {}) came before the window's first paint ({painted_ms})\n{}",
        first_request.method,
        first_request.at.timestamp_millis(),
        app.log_tail()
    );
    app.quit().await.unwrap();
}
