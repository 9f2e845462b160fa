//! Reviewing Gmail drafts in the window: approve with its undo countdown, undo, reject with a
//! reason, and every keyboard shortcut — checked at the fake Gmail, not only on screen.

use std::time::Duration;

use countersign_core::actions::Action;
use countersign_core::decide::{self, UndoWindow};
use countersign_core::review::review_detail;
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};

use crate::support::*;

/// Long enough for the dispatcher to have sent twice, were it going to.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_with_a_shows_the_countdown_then_sends_the_reviewed_bytes_exactly_once() {
    let Some(prerequisites) = skip_or_fail(
        "approving_with_a_shows_the_countdown_then_sends_the_reviewed_bytes_exactly_once",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    // The test looks inside the undo window: long enough that a busy machine's slow frame
    // does not outlast it (the queued state is otherwise gone before it is read).
    fixture
        .set_undo_window(LOOK_INSIDE_UNDO_SECS)
        .await
        .unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let raw = gmail_reply(1, "Invoice 7", "Here is the invoice you asked for.");
    let draft = fixture.gmail.file_draft(&raw, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    app.screenshot("queue").await.unwrap();

    session.press_keys("a").await.unwrap();
    let countdown = session
        .wait_for_text("[data-testid=countdown]", "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app);
    let shown = countdown.text().await.unwrap();
    assert!(shown.ends_with(" s"), "the countdown says {shown:?}");
    app.screenshot("undo-countdown").await.unwrap();
    assert!(
        fixture.gmail.sent_messages().is_empty(),
        "nothing may leave inside the undo window"
    );

    eventually(UI_TIMEOUT, "the approved draft is sent", || async {
        !fixture.gmail.sent_messages().is_empty()
    })
    .await
    .or_log(&app);
    wait_detail_state(session, "sent").await.or_log(&app);
    // Quit first: after that no second request can come, however late.
    app.quit().await.unwrap();
    assert_eq!(fixture.gmail.send_requests(&draft.id), 1, "sent once");
    let sent = fixture.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].draft_id, draft.id);
    assert_eq!(sent[0].raw, raw, "the bytes sent are the bytes reviewed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z_inside_the_undo_window_takes_the_approval_back_and_nothing_is_sent() {
    let Some(prerequisites) =
        skip_or_fail("z_inside_the_undo_window_takes_the_approval_back_and_nothing_is_sent")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    // z must land inside the window, however slow the machine's frames are.
    fixture
        .set_undo_window(LOOK_INSIDE_UNDO_SECS)
        .await
        .unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let draft = fixture
        .gmail
        .file_draft(&gmail_reply(1, "Quote", "It is 40 EUR."), None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();
    // A second draft Google refuses to send (no recipient: 400 "Invalid To header"), approved
    // before the app starts: the app's dispatcher meets the refusal.
    let refused_draft = fixture.gmail.file_draft(
        b"From: owner@example.com\r\nSubject: To no one\r\n\r\nHello.\r\n",
        None,
    );
    fixture.sync(&account).await.unwrap();
    let refused = fixture.item(&refused_draft.id).await.unwrap();
    let shown = decide::current(&fixture.store, refused.id).await.unwrap();
    // Read elsewhere (the command line) and approved there: the app only sees the outcome.
    fixture
        .store
        .record_view(
            &shown,
            "owner via test",
            countersign_core::store::ShownPart::Text,
        )
        .await
        .unwrap();
    decide::approve(
        &fixture.store,
        &shown,
        UndoWindow::None,
        "owner via test",
        decide::Confirmation::None,
    )
    .await
    .unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    // A click on Approve: the queue row turns queued from core's items-changed event, which
    // carries the row (no poll; the page read that follows only brings the counts per state
    // and the status bar's countdowns).
    session
        .find("[data-action=approve]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for(
            &format!("[role=option][data-id=\"{}\"][data-state=queued]", item.id),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=countdown]", "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app);
    session.press_keys("z").await.unwrap();
    wait_detail_state(session, "pending").await.or_log(&app);
    wait_approve(session, true).await.or_log(&app);

    // Undone is cancelled in the outbox, which never sends a cancelled decision.
    assert_only_decision_cancelled(&fixture, item.id).await;
    assert!(
        fixture.gmail.sent_messages().is_empty(),
        "an undone approval sends nothing"
    );
    assert_eq!(detail_state(session).await.as_deref(), Some("pending"));

    // The refused Gmail draft is still in Drafts: core offers approving it again, and the
    // button follows core's detail (the UI once kept its own rule and disabled it).
    open_item(session, refused.id).await.or_log(&app);
    wait_detail_state(session, "send_failed").await.or_log(&app);
    let detail = review_detail(&fixture.store, refused.id, false)
        .await
        .unwrap();
    let approve = detail
        .item
        .summary
        .actions
        .iter()
        .find(|a| a.action == Action::Approve)
        .cloned()
        .unwrap();
    assert!(approve.allowed, "core allows it: {approve:?}");
    wait_approve(session, approve.allowed).await.or_log(&app);
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_with_a_reason_deletes_the_draft_and_shows_the_reason_in_the_audit_trail() {
    let Some(prerequisites) = skip_or_fail(
        "rejecting_with_a_reason_deletes_the_draft_and_shows_the_reason_in_the_audit_trail",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let draft = fixture
        .gmail
        .file_draft(&gmail_reply(1, "Offer", "We can do it for free."), None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    session.press_keys("r").await.unwrap();
    session
        .wait_for("[data-testid=reject-dialog]", UI_TIMEOUT)
        .await
        .or_log(&app);
    // A preset reason and the owner's own words.
    session
        .find("[data-testid=reject-dialog] input[type=radio]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .find("[data-testid=reject-text]")
        .await
        .unwrap()
        .send_keys("never promise free work")
        .await
        .unwrap();
    session
        .find("[data-action=confirm-reject]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    eventually(
        UI_TIMEOUT,
        "the rejected draft is deleted at Gmail",
        || async { fixture.gmail.drafts().iter().all(|d| d.id != draft.id) },
    )
    .await
    .or_log(&app);
    wait_detail_state(session, "rejected").await.or_log(&app);
    session
        .wait_for_text("[data-testid=audit]", "never promise free work", UI_TIMEOUT)
        .await
        .or_log(&app);
    assert!(fixture.gmail.sent_messages().is_empty());
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_shortcut_does_what_the_overlay_says_even_after_clicking_into_the_mail() {
    let Some(prerequisites) =
        skip_or_fail("each_shortcut_does_what_the_overlay_says_even_after_clicking_into_the_mail")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    // a then z inside the window, however slow the machine's frames are.
    fixture
        .set_undo_window(LOOK_INSIDE_UNDO_SECS)
        .await
        .unwrap();
    let ids = three_drafts(&fixture).await;

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    // The queue opens on its first row; j and k walk it.
    wait_detail(session, ids[0]).await.or_log(&app);
    session.press_keys("j").await.unwrap();
    wait_selected(session, ids[1]).await.or_log(&app);
    session.press_keys("j").await.unwrap();
    wait_selected(session, ids[2]).await.or_log(&app);
    session.press_keys("k").await.unwrap();
    wait_detail(session, ids[1]).await.or_log(&app);

    // Keys still work after a click into the mail body (focus is taken back from the iframe).
    session.find("iframe").await.unwrap().click().await.unwrap();
    // The click gave the sandboxed frame the focus; the app takes it back (ui/src/lib/focus.ts;
    // a key pressed before that goes to the frame, as it would for an owner typing within the
    // same instant). Wait for that, as the owner's next key comes after it.
    wait_focus_on_queue(session).await.or_log(&app);
    session.press_keys("k").await.unwrap();
    wait_detail(session, ids[0]).await.or_log(&app);

    // ? shows the shortcuts, Escape closes them.
    session.press_keys("?").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=shortcuts]",
            "Undo the queued decision",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session.press_keys("\u{E00C}").await.unwrap();
    assert!(session
        .find_all("[data-testid=shortcuts]")
        .await
        .unwrap()
        .is_empty());

    // u shows the raw source of the selected draft.
    session.press_keys("u").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=raw-text]",
            "Subject: Draft number",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session.press_keys("\u{E00C}").await.unwrap();
    assert!(session
        .find_all("[data-testid=raw-source]")
        .await
        .unwrap()
        .is_empty());

    // r opens the reason dialog (and Escape leaves the draft as it was).
    session.press_keys("r").await.unwrap();
    session
        .wait_for("[data-testid=reject-dialog]", UI_TIMEOUT)
        .await
        .or_log(&app);
    session.press_keys("\u{E00C}").await.unwrap();
    assert!(session
        .find_all("[data-testid=reject-dialog]")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(detail_state(session).await.as_deref(), Some("pending"));

    // e opens the editor on this draft's subject (and Escape leaves it unchanged).
    session.press_keys("e").await.unwrap();
    let subject = session
        .wait_for("[data-testid=edit-subject]", UI_TIMEOUT)
        .await
        .or_log(&app);
    assert!(subject
        .attribute("value")
        .await
        .unwrap()
        .unwrap_or_default()
        .starts_with("Draft number"));
    session.press_keys("\u{E00C}").await.unwrap();
    assert!(session
        .find_all("[data-testid=edit-dialog]")
        .await
        .unwrap()
        .is_empty());

    // / focuses the filter; typing there filters instead of triggering shortcuts.
    session.press_keys("/").await.unwrap();
    assert_eq!(focused(session).await, "filter");
    session.press_keys("number 3").await.unwrap();
    eventually(UI_TIMEOUT, "the filter leaves one row", || async {
        session
            .find_all("[role=option]")
            .await
            .map(|r| r.len())
            .unwrap_or(0)
            == 1
    })
    .await
    .or_log(&app);
    // a acts only on a draft whose detail is on screen: wait for it, as the owner would.
    wait_detail(session, ids[2]).await.or_log(&app);
    assert_eq!(detail_state(session).await.as_deref(), Some("pending"));
    session.press_keys("\u{E00C}").await.unwrap();

    // a approves (countdown), z undoes it.
    session.press_keys("a").await.unwrap();
    session
        .wait_for_text("[data-testid=countdown]", "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app);
    session.press_keys("z").await.unwrap();
    wait_detail_state(session, "pending").await.or_log(&app);
    assert_only_decision_cancelled(&fixture, ids[2]).await;
    assert!(fixture.gmail.sent_messages().is_empty());
    app.quit().await.unwrap();
}

/// A change read while the owner walks the queue must not put the selection back where it was
/// when the read started: the key pressed meanwhile would be lost (found by the soak: the
/// second `j` of the shortcut test, pressed while the queue was read again after a sync).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_pressed_while_the_queue_is_read_again_is_not_undone_by_that_read() {
    let Some(prerequisites) =
        skip_or_fail("a_key_pressed_while_the_queue_is_read_again_is_not_undone_by_that_read")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    // Nothing is sent while the test runs: a dispatch would read the queue again too.
    fixture.set_undo_window(60).await.unwrap();
    three_drafts(&fixture).await;
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("refresh");
    let app = fixture
        .launch_with_env(
            &prerequisites,
            vec![(
                "COUNTERSIGN_TEST_REFRESH_GATE".into(),
                gate.display().to_string(),
            )],
        )
        .await
        .unwrap();
    let session = app.session();
    let order = queue_order(session).await;
    assert_eq!(order.len(), 3);
    wait_detail(session, order[0]).await.or_log(&app);

    // Approving the first draft updates its row at once, then reads the queue again for the
    // counts: that read is held open here, having asked where the first draft is.
    std::fs::write(&gate, b"").unwrap();
    session.press_keys("a").await.unwrap();
    let held = gate.with_extension("waiting");
    let asked = || std::fs::read_to_string(&held).unwrap_or_default();
    eventually(UI_TIMEOUT, "the queue is being read again", || async {
        !asked().is_empty()
    })
    .await
    .or_log(&app);
    session.press_keys("j").await.unwrap();
    wait_selected(session, order[1]).await.or_log(&app);
    // The held read is the only one: nothing read the queue after the j.
    assert_eq!(asked(), format!("{}\n", order[0]));

    // The read lands (the status bar counts the queued draft); the next j goes on from where
    // the owner is, not from where the read found the first draft.
    std::fs::remove_file(&gate).unwrap();
    session
        .wait_for_text("[data-testid=status-queued]", "1 queued", UI_TIMEOUT)
        .await
        .or_log(&app);
    let now = queue_order(session).await;
    let next = now[now.iter().position(|id| *id == order[1]).unwrap() + 1];
    session.press_keys("j").await.unwrap();
    wait_selected(session, next).await.or_log(&app);
}

/// The ids of the queue's rows, top to bottom, once it has any.
async fn queue_order(session: &countersign_e2e::webdriver::Session) -> Vec<i64> {
    let deadline = std::time::Instant::now() + UI_TIMEOUT;
    loop {
        let order: Vec<i64> = session
            .execute(
                "return [...document.querySelectorAll('[role=option]')].map(r => Number(r.dataset.id));",
                vec![],
            )
            .await
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|id| id.as_i64())
            .collect();
        if !order.is_empty() {
            return order;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the queue was never listed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The item's decisions in the outbox: exactly one, cancelled (undone).
async fn assert_only_decision_cancelled(fixture: &Fixture, item_id: i64) {
    let decisions: Vec<_> = fixture
        .store
        .list_decisions(countersign_core::store::DecisionFilter::All)
        .await
        .unwrap()
        .into_iter()
        .filter(|d| d.item_id == item_id)
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(
        decisions[0].state,
        countersign_core::DecisionState::Cancelled,
        "{decisions:?}"
    );
}

/// The owner comes back from another program by clicking into the mail of the window in the
/// background: WebDriver's click reaches the page without activating its window, as a click
/// that lands before the window manager activates it. The keys must still reach the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_into_the_mail_of_a_window_in_the_background_leaves_the_keys_with_the_queue() {
    let Some(prerequisites) = skip_or_fail(
        "a_click_into_the_mail_of_a_window_in_the_background_leaves_the_keys_with_the_queue",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = three_drafts(&fixture).await;
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, ids[0]).await.or_log(&app);

    // Another program's window takes the focus: a second Countersign, on its own mirror.
    let elsewhere = Fixture::new().await.unwrap();
    let other = elsewhere.launch(&prerequisites).await.unwrap();
    eventually(
        UI_TIMEOUT,
        "the first window is in the background",
        || async {
            session
                .execute("return document.hasFocus();", vec![])
                .await
                .ok()
                .and_then(|v| v.as_bool())
                == Some(false)
        },
    )
    .await
    .or_log(&app);

    session.find("iframe").await.unwrap().click().await.unwrap();
    wait_focus_on_queue(session).await.or_log(&app);
    session.press_keys("j").await.unwrap();
    wait_detail(session, ids[1]).await.or_log(&app);
    other.quit().await.unwrap();
    app.quit().await.unwrap();
}

/// Three Gmail drafts ("Draft number 1" to 3) of a connected account, in the mirror.
async fn three_drafts(fixture: &Fixture) -> Vec<i64> {
    gmail_drafts(fixture, 3, |n| format!("Draft number {n}")).await
}
