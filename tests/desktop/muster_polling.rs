//! muster behind something that breaks its event stream (a proxy's HTML page with 200, or a
//! 502) while its API answers: the app polls, a new draft reaches the queue and a refusal the
//! tray, and the status bar says "polling".

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, Fixture};
use countersign_fakes::muster::FaultAction;

use crate::support::*;

/// How often the app polls muster in these tests (30 s in the field).
const POLL_MS: &str = "500";

async fn drafts_and_refusals_arrive_by_polling(name: &str, front: FaultAction) {
    let Some(prerequisites) = skip_or_fail(name) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_muster().await.unwrap();
    fixture.muster.create_plugin("gmail-relay", false).unwrap();
    fixture.muster.inject("GET", "/events", u32::MAX, front);

    let watch = NotificationWatch::start().expect(
        "cannot watch notifications: this test needs dbus-daemon, dunst and a display \
         (scripts/test.sh runs the suite under Xvfb with both installed)",
    );
    let mut env = watch.env();
    env.push(("COUNTERSIGN_TEST_MUSTER_POLL_MS".into(), POLL_MS.into()));
    let app = fixture.launch_with_env(&prerequisites, env).await.unwrap();
    let session = app.session();
    let status = format!("[data-account=\"{}\"]", account.id);
    session
        .wait_for_text(&status, "polling", UI_TIMEOUT)
        .await
        .or_log(&app);

    // A new draft, announced on no stream: it reaches the queue by polling.
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
    let draft = fixture
        .muster
        .file_draft(&relayed.route_id, "Here is the invoice.")
        .unwrap();
    eventually(UI_TIMEOUT, "the app mirrors the draft", || async {
        fixture.item(&draft).await.is_ok()
    })
    .await
    .or_log(&app);
    let item = fixture.item(&draft).await.unwrap();
    open_item(session, item.id).await.or_log(&app);
    session.press_keys("a").await.unwrap();
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
    // The owner looks elsewhere, so the refusal is notified.
    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually(
        UI_TIMEOUT,
        "the plugin can claim the approved draft",
        || async { fixture.muster.claim(&draft).is_ok() },
    )
    .await
    .or_log(&app);
    fixture
        .muster
        .report_result(&draft, false, Some("recipient mailbox full"))
        .unwrap();
    watch
        .wait_for("recipient mailbox full", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text(&status, "polling", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot(&format!("{name}-status")).await.unwrap();
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_proxys_page_for_musters_stream_drafts_reach_the_queue_and_refusals_the_tray() {
    drafts_and_refusals_arrive_by_polling(
        "with_a_proxys_page_for_musters_stream_drafts_reach_the_queue_and_refusals_the_tray",
        FaultAction::FrontPage(200),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_502_for_musters_stream_drafts_reach_the_queue_and_refusals_the_tray() {
    drafts_and_refusals_arrive_by_polling(
        "with_a_502_for_musters_stream_drafts_reach_the_queue_and_refusals_the_tray",
        FaultAction::Fail(502),
    )
    .await;
}
