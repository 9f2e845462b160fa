//! Bulk decisions in the window: drafts picked with "select all shown" (`*`), one confirmation
//! listing what they cover, one reason for a rejection; an approval takes only the drafts the
//! owner displayed and names the others — checked at the fake Gmail and in the audit log.

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, Fixture};
use countersign_e2e::webdriver::Session;

use crate::support::*;

/// Picks every draft the queue shows with `*` and waits for the bulk bar to count `count`.
async fn pick_all_shown(session: &Session, count: usize) -> anyhow::Result<()> {
    session.press_keys("*").await?;
    session
        .wait_for_text(
            "[data-testid=picked-count]",
            &format!("{count} selected"),
            UI_TIMEOUT,
        )
        .await?;
    Ok(())
}

/// Clicks the element `selector`.
async fn click(session: &Session, selector: &str) -> anyhow::Result<()> {
    session.find(selector).await?.click().await
}

/// The requests that deleted Gmail draft `draft_id`.
fn deletions(fixture: &Fixture, draft_id: &str) -> usize {
    let path = format!("/drafts/{draft_id}");
    fixture
        .gmail
        .requests()
        .iter()
        .filter(|r| r.method == "drafts.delete" && r.path.ends_with(&path))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_drafts_selected_all_at_once_are_rejected_with_one_reason_each_exactly_once() {
    let Some(prerequisites) = skip_or_fail(
        "fifty_drafts_selected_all_at_once_are_rejected_with_one_reason_each_exactly_once",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = gmail_drafts(&fixture, 50, |n| format!("Offer {n}")).await;
    let items = fixture.items().await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, ids[0]).await.or_log(&app);
    pick_all_shown(session, 50).await.or_log(&app);
    // Screen readers hear every row in view as selected, in a multi-select listbox.
    let announced = session
        .execute(
            "const list = document.querySelector('[role=listbox]');
             const rows = [...list.querySelectorAll('[role=option]')];
             return [list.getAttribute('aria-multiselectable'), rows.length > 0 &&
                     rows.every(r => r.getAttribute('aria-selected') === 'true')];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(announced, serde_json::json!(["true", true]));
    app.screenshot("bulk-picked").await.unwrap();

    click(session, "[data-action=bulk-reject]")
        .await
        .or_log(&app);
    // The confirmation lists what the rejection covers before anything is decided.
    session
        .wait_for_text("[data-testid=bulk-count]", "50", UI_TIMEOUT)
        .await
        .or_log(&app);
    let recipients = session
        .find("[data-testid=bulk-recipients]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        recipients, "Ana <ana@example.com>",
        "one distinct recipient"
    );
    let summary = session
        .find("[data-testid=bulk-summary]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        summary.contains("owner@example.com"),
        "the account is named: {summary}"
    );
    assert!(fixture.gmail.drafts().len() == 50, "nothing decided yet");
    app.screenshot("bulk-reject-confirmation").await.unwrap();

    click(
        session,
        "[data-testid=bulk-dialog] input[value='Tone is off']",
    )
    .await
    .or_log(&app);
    session
        .find("[data-testid=bulk-dialog] [data-testid=reject-text]")
        .await
        .unwrap()
        .send_keys("too pushy")
        .await
        .unwrap();
    click(session, "[data-action=confirm-bulk]")
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=bulk-result]", "Rejected 50", UI_TIMEOUT)
        .await
        .or_log(&app);

    eventually(
        UI_TIMEOUT,
        "all fifty drafts are deleted at Gmail",
        || async { fixture.gmail.drafts().is_empty() },
    )
    .await
    .or_log(&app);
    // Quit first: after that no second request can come, however late.
    app.quit().await.unwrap();
    for item in &items {
        assert_eq!(
            deletions(&fixture, &item.external_id),
            1,
            "draft {} deleted exactly once",
            item.external_id
        );
    }
    assert!(fixture.gmail.sent_messages().is_empty());
    let reason = "Tone is off: too pushy";
    let rejections: Vec<_> = fixture
        .store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|entry| entry.line.action == "reject")
        .collect();
    assert_eq!(rejections.len(), 50, "one reject row per draft");
    for item in &items {
        let row = rejections
            .iter()
            .find(|entry| entry.line.item_id == Some(item.id))
            .unwrap_or_else(|| panic!("no reject row for item {}", item.id));
        assert_eq!(row.line.detail.as_deref(), Some(reason));
        // Bound to the version its row showed.
        assert_eq!(row.line.version.as_deref(), Some(item.version.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_approval_sends_only_the_drafts_displayed_and_names_the_others() {
    let Some(prerequisites) =
        skip_or_fail("a_bulk_approval_sends_only_the_drafts_displayed_and_names_the_others")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = gmail_drafts(&fixture, 4, |n| format!("Quote {n}")).await;
    let items = fixture.items().await.unwrap();
    let draft_of = |id: i64| {
        items
            .iter()
            .find(|item| item.id == id)
            .map(|item| (item.external_id.clone(), item.subject.clone()))
            .unwrap()
    };

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    // The queue opens on its first draft (displayed); the owner opens the second too. The other
    // two are never displayed.
    wait_detail(session, ids[0]).await.or_log(&app);
    open_item(session, ids[1]).await.or_log(&app);
    pick_all_shown(session, 4).await.or_log(&app);
    click(session, "[data-action=bulk-approve]")
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=bulk-count]", "4", UI_TIMEOUT)
        .await
        .or_log(&app);
    click(session, "[data-action=confirm-bulk]")
        .await
        .or_log(&app);
    let result = session
        .wait_for_text(
            "[data-testid=bulk-result]",
            "Approved 2; skipped 2",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app)
        .text()
        .await
        .unwrap();
    app.screenshot("bulk-approve-result").await.unwrap();
    for &id in &ids[2..] {
        let (_, subject) = draft_of(id);
        assert!(
            result.contains(&format!("{subject} — you have not displayed it")),
            "the result names {subject:?}: {result}"
        );
    }
    for &id in &ids[..2] {
        let (_, subject) = draft_of(id);
        assert!(
            !result.contains(&subject),
            "{subject:?} is not skipped: {result}"
        );
    }

    // Sent once the undo window has passed (the fixture's short one).
    eventually(UI_TIMEOUT, "the two displayed drafts are sent", || async {
        fixture.gmail.sent_messages().len() == 2
    })
    .await
    .or_log(&app);
    for &id in &ids[..2] {
        session
            .wait_for(
                &format!("[role=option][data-id=\"{id}\"][data-state=sent]"),
                UI_TIMEOUT,
            )
            .await
            .or_log(&app);
    }
    app.quit().await.unwrap();
    for &id in &ids[..2] {
        let (draft, subject) = draft_of(id);
        assert_eq!(
            fixture.gmail.send_requests(&draft),
            1,
            "{subject} sent once"
        );
    }
    for &id in &ids[2..] {
        let (draft, subject) = draft_of(id);
        assert_eq!(
            fixture.gmail.send_requests(&draft),
            0,
            "{subject} never displayed, never sent"
        );
        let item = fixture.item(&draft).await.unwrap();
        assert_eq!(item.state, countersign_core::ItemState::Pending);
    }
}

/// The ids of the rows drawn as picked, in list order.
async fn picked_rows(session: &Session) -> Vec<i64> {
    let value = session
        .execute(
            "return [...document.querySelectorAll('[role=option][data-picked=true]')]
               .sort((a, b) => a.getAttribute('aria-posinset') - b.getAttribute('aria-posinset'))
               .map(r => Number(r.dataset.id));",
            vec![],
        )
        .await
        .unwrap_or_default();
    serde_json::from_value(value).unwrap_or_default()
}

/// Waits until exactly the rows `ids` are drawn as picked and said so to screen readers (with
/// none picked, the listbox says the current row is the selected one, as before picking).
async fn wait_picked(session: &Session, ids: &[i64]) -> anyhow::Result<()> {
    let want = ids.to_vec();
    eventually(UI_TIMEOUT, &format!("rows {want:?} picked"), || async {
        let selected: Vec<i64> = serde_json::from_value(
            session
                .execute(
                    "return [...document.querySelectorAll('[role=option][aria-selected=true]')]
                       .map(r => Number(r.dataset.id));",
                    vec![],
                )
                .await
                .unwrap_or_default(),
        )
        .unwrap_or_default();
        let mut selected_sorted = selected.clone();
        let mut want_sorted = want.clone();
        selected_sorted.sort_unstable();
        want_sorted.sort_unstable();
        picked_rows(session).await == want && (want.is_empty() || selected_sorted == want_sorted)
    })
    .await
    .map_err(|e| e.context(format!("picked: {:?}", ids)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_shift_j_and_shift_click_pick_rows_and_escape_clears_them() {
    let Some(prerequisites) =
        skip_or_fail("x_shift_j_and_shift_click_pick_rows_and_escape_clears_them")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = gmail_drafts(&fixture, 8, |n| format!("Note {n}")).await;

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, ids[0]).await.or_log(&app);

    // x picks the row under the cursor; Shift+J picks on while moving down.
    session.press_keys("x").await.unwrap();
    wait_picked(session, &ids[..1]).await.or_log(&app);
    session.press_with_shift('j').await.unwrap();
    session.press_with_shift('j').await.unwrap();
    wait_picked(session, &ids[..3]).await.or_log(&app);
    session
        .wait_for_text("[data-testid=picked-count]", "3 selected", UI_TIMEOUT)
        .await
        .or_log(&app);
    // Shift+K moves back up (the rows it passes stay picked); x unpicks the one it lands on.
    session.press_with_shift('k').await.unwrap();
    wait_selected_cursor(session, ids[1]).await.or_log(&app);
    session.press_keys("x").await.unwrap();
    wait_picked(session, &[ids[0], ids[2]]).await.or_log(&app);

    // Escape clears the picks: the current row is the selected one again.
    session.press_keys("\u{E00C}").await.unwrap();
    wait_picked(session, &[]).await.or_log(&app);
    wait_selected(session, ids[1]).await.or_log(&app);
    assert!(session
        .find_all("[data-testid=picked-count]")
        .await
        .unwrap()
        .is_empty());

    // A click, then a shift+click further down: the range between them.
    open_item(session, ids[4]).await.or_log(&app);
    session
        .find(&format!("[role=option][data-id=\"{}\"]", ids[6]))
        .await
        .unwrap()
        .shift_click()
        .await
        .unwrap();
    wait_picked(session, &ids[4..7]).await.or_log(&app);
    app.quit().await.unwrap();
}

/// Waits until the row the keys act on (the detail's draft) is item `id`.
async fn wait_selected_cursor(session: &Session, id: i64) -> anyhow::Result<()> {
    session
        .wait_for(
            &format!("[role=option].current[data-id=\"{id}\"]"),
            UI_TIMEOUT,
        )
        .await?;
    Ok(())
}
