//! Approving while Gmail does not answer: the decision waits, the window says so, and it is
//! sent once as soon as Gmail answers again.

use std::time::Duration;

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_while_offline_shows_queued_offline_then_is_sent_once_when_back() {
    let Some(prerequisites) =
        skip_or_fail("an_approval_while_offline_shows_queued_offline_then_is_sent_once_when_back")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let raw = gmail_reply(1, "Minutes", "The minutes of Monday.");
    let draft = fixture.gmail.file_draft(&raw, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);

    fixture.gmail.set_online(false);
    session.press_keys("a").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=countdown]",
            "Queued — offline",
            Duration::from_secs(40),
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=status-queued]",
            "queued — offline",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    assert!(fixture.gmail.sent_messages().is_empty());

    fixture.gmail.set_online(true);
    eventually(
        Duration::from_secs(60),
        "the queued approval is sent",
        || async { !fixture.gmail.sent_messages().is_empty() },
    )
    .await
    .or_log(&app);
    wait_detail_state(session, "sent").await.or_log(&app);
    // Quit first: after that no second request can come, however late.
    app.quit().await.unwrap();
    assert_eq!(
        fixture.gmail.send_requests(&draft.id),
        1,
        "sent exactly once"
    );
    let sent = fixture.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].raw, raw);
}
