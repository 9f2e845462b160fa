//! Reviewing with context: the message a draft answers is shown under it — the demo's Gmail
//! reply "Re: Meeting next week?" with Alice's message, a muster reply with the message it
//! answers (in full when muster gives the text, its snippet labelled as such otherwise).

use countersign_core::ItemFilter;
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::Fixture;

use crate::support::*;

async fn item_with_subject(fixture: &Fixture, subject: &str) -> i64 {
    fixture
        .store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.subject.contains(subject))
        .unwrap_or_else(|| panic!("no item {subject:?}"))
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_meeting_reply_shows_alices_message_under_the_draft() {
    let Some(prerequisites) =
        skip_or_fail("the_demo_meeting_reply_shows_alices_message_under_the_draft")
    else {
        return;
    };
    let fixture = Fixture::with_demo().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    fixture.sync(&account).await.unwrap();
    let id = item_with_subject(&fixture, "Re: Meeting next week?").await;

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, id).await.or_log(&app);
    session
        .wait_for_text("[data-testid=answered-from]", "Alice Martin", UI_TIMEOUT)
        .await
        .or_log(&app);
    // Collapsed by default: its first lines, not the whole message.
    session
        .wait_for_text(
            "[data-testid=answered-first-lines]",
            "could we meet on Tuesday or Wednesday",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("answered-gmail").await.unwrap();
    // Expanded: rendered in its own sandboxed frame, like the draft.
    session
        .find("[data-action=expand-answered]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let frame = session
        .wait_for("[data-testid=answered] iframe", UI_TIMEOUT)
        .await
        .or_log(&app);
    assert_eq!(
        frame.attribute("sandbox").await.unwrap().as_deref(),
        Some("")
    );
    let srcdoc = frame.attribute("srcdoc").await.unwrap().unwrap_or_default();
    assert!(
        srcdoc.contains("could we meet on Tuesday or Wednesday"),
        "{srcdoc}"
    );
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_muster_reply_shows_the_message_it_answers() {
    let Some(prerequisites) = skip_or_fail("a_muster_reply_shows_the_message_it_answers") else {
        return;
    };
    let fixture = Fixture::with_demo().await.unwrap();
    let account = fixture.connect_muster().await.unwrap();
    fixture.sync(&account).await.unwrap();
    let full = item_with_subject(&fixture, "Invoice 2291").await;
    let snippet_only = item_with_subject(&fixture, "Refund for order #5532").await;

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, full).await.or_log(&app);
    session
        .wait_for_text("[data-testid=answered-from]", "ana@example.com", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=answered-first-lines]",
            "our finance team closes the month on the 5th",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("answered-muster").await.unwrap();

    open_item(session, snippet_only).await.or_log(&app);
    session
        .wait_for_text(
            "[data-testid=answered-snippet]",
            "Only the start of the message is known.",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=answered-snippet]",
            "The blender arrived with a cracked jug.",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.quit().await.unwrap();
}
