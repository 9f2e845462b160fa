//! muster drafts in the window: a reply awaiting the plugin's check cannot be approved until
//! the plugin says it is sendable; a refusal reaches the owner as a desktop notification (whose
//! click opens the item) and as `send_failed` with the plugin's reason, and the redraft shows up
//! linked, with its diff.

use std::time::Duration;

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, Fixture};
use countersign_fakes::muster::CheckVerdict;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_awaiting_its_check_can_only_be_rejected_until_the_plugin_says_sendable() {
    let Some(prerequisites) = skip_or_fail(
        "a_reply_awaiting_its_check_can_only_be_rejected_until_the_plugin_says_sendable",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_muster().await.unwrap();
    fixture.muster.create_plugin("careful", true).unwrap();
    let relayed = fixture
        .muster
        .relay_message(
            "careful",
            "inbox-chat",
            "bo@example.com",
            "Quote",
            "How much?",
        )
        .unwrap();
    let draft = fixture
        .muster
        .file_draft(&relayed.route_id, "It is 40 EUR.")
        .unwrap();
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    wait_detail_state(session, "awaiting_check")
        .await
        .or_log(&app);
    assert!(
        !approve_enabled(session).await.unwrap(),
        "Approve is disabled"
    );
    session
        .wait_for_text(
            "[data-testid=awaiting-check]",
            "The plugin has not checked this reply yet — you can only reject it",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    // The shortcut is refused the same way the button is.
    session.press_keys("a").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=action-error]",
            "you can only reject it",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    assert_eq!(
        detail_state(session).await.as_deref(),
        Some("awaiting_check")
    );

    // The plugin checks it; the app hears it on muster's event stream and the UI reloads.
    fixture
        .muster
        .record_check(&draft, CheckVerdict::Sendable, None)
        .unwrap();
    wait_approve(session, true).await.or_log(&app);
    wait_detail_state(session, "pending").await.or_log(&app);

    // Approved, it goes to the plugin, which has not sent it yet. (The countdown lasts the
    // fixture's 3 s undo window: review's countdown test reads it with a longer one.)
    session.press_keys("a").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=queued-at-plugin]",
            "Queued at the plugin — not sent yet",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_send_is_notified_shown_as_send_failed_and_its_redraft_appears_with_a_diff() {
    let Some(prerequisites) = skip_or_fail(
        "a_refused_send_is_notified_shown_as_send_failed_and_its_redraft_appears_with_a_diff",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_muster().await.unwrap();
    fixture.muster.create_plugin("gmail-relay", false).unwrap();
    let relayed = fixture
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Hi",
        )
        .unwrap();
    let first = fixture
        .muster
        .file_draft(&relayed.route_id, "Here is the invoice.")
        .unwrap();
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&first).await.unwrap();

    // The notification is the point of this test: without a bus and dunst it fails rather
    // than turn into a plain click on the queue.
    let watch = NotificationWatch::start().expect(
        "cannot watch notifications: this test needs dbus-daemon, dunst and a display \
         (scripts/test.sh runs the suite under Xvfb with both installed)",
    );
    let app = fixture
        .launch_with_env(&prerequisites, watch.env())
        .await
        .unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    session.press_keys("a").await.unwrap();
    // The approval is made (its countdown may be over already on a busy machine).
    eventually(UI_TIMEOUT, "the approval is in the outbox", || async {
        !fixture
            .store
            .list_decisions(countersign_core::store::DecisionFilter::All)
            .await
            .unwrap()
            .is_empty()
    })
    .await
    .or_log(&app);
    // The owner looks elsewhere: no item is in view, so the refusal is notified (the item in
    // view is not, the owner already sees it).
    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);

    // The plugin claims the approved draft and reports that sending failed.
    eventually(
        Duration::from_secs(30),
        "the plugin can claim the approved draft",
        || async { fixture.muster.claim(&first).is_ok() },
    )
    .await
    .or_log(&app);
    fixture
        .muster
        .report_result(&first, false, Some("recipient mailbox full"))
        .unwrap();

    watch
        .wait_for("recipient mailbox full", UI_TIMEOUT)
        .await
        .or_log(&app);
    // The owner clicks the notification (dunst's default action): the window shows the
    // refused item (`countersign://open-item`), leaving the settings view.
    assert!(watch.click(), "dunstctl action failed");
    wait_detail(session, item.id).await.or_log(&app);
    wait_detail_state(session, "send_failed").await.or_log(&app);
    session
        .wait_for_text(
            "[data-testid=state-reason]",
            "recipient mailbox full",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);

    // The session writes the redraft on the route muster opened for it.
    let redraft_route = fixture
        .muster
        .routes(&relayed.message_id)
        .into_iter()
        .rev()
        .find(|r| r["state"] == "redraft")
        .expect("muster opened a redraft route")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = fixture
        .muster
        .file_draft(&redraft_route, "Here is the invoice, as a link.")
        .unwrap();
    eventually(UI_TIMEOUT, "the app mirrors the redraft", || async {
        fixture.item(&second).await.is_ok()
    })
    .await
    .or_log(&app);
    let redraft = fixture.item(&second).await.unwrap();
    assert_eq!(redraft.redraft_number, 1);
    open_item(session, redraft.id).await.or_log(&app);
    session
        .wait_for_text(
            "[data-testid=diff]",
            "Changes from the refused draft",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=diff]", "as a link", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=routes]", "recipient mailbox full", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("redraft-diff").await.unwrap();
    app.quit().await.unwrap();
}
