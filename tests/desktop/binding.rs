//! What you saw is what is sent, in the window: keys never decide on a draft that is not on
//! screen yet, and a draft that changes while it is read is shown again before it can be
//! approved — checked at the fake Gmail and in the mirror, not only on screen.

use countersign_core::store::DecisionFilter;
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn j_then_a_at_once_never_approves_a_draft_that_was_not_displayed() {
    let Some(prerequisites) =
        skip_or_fail("j_then_a_at_once_never_approves_a_draft_that_was_not_displayed")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = gmail_drafts(&fixture, 22, |n| format!("Draft {n:02}")).await;

    // Every detail takes 400 ms to arrive, as over a slow disk or a busy machine.
    let app = fixture
        .launch_with_env(
            &prerequisites,
            vec![("COUNTERSIGN_TEST_REVIEW_DELAY_MS".into(), "400".into())],
        )
        .await
        .unwrap();
    let session = app.session();
    wait_detail(session, ids[0]).await.or_log(&app);

    for _ in 0..20 {
        session.press_keys("ja").await.unwrap();
    }
    // Every j moved the selection (no key was lost) ...
    wait_selected(session, ids[20]).await.or_log(&app);
    // ... and every a was refused visibly instead of landing on another draft.
    session
        .wait_for_text("[data-testid=action-error]", "Still loading", UI_TIMEOUT)
        .await
        .or_log(&app);
    wait_detail(session, ids[20]).await.or_log(&app);
    for item in fixture.items().await.unwrap() {
        assert!(
            item.decision.is_none() && item.state.as_str() == "pending",
            "item {} was decided without being displayed: {:?}",
            item.id,
            item.state
        );
    }

    // Once displayed, a approves it, bound to the version on screen (read from the outbox:
    // the decision may already be sent by the time the mirror is looked at).
    let on_screen = shown_version(session).await.expect("a version is shown");
    session.press_keys("a").await.unwrap();
    eventually(UI_TIMEOUT, "the displayed draft is approved", || async {
        !fixture
            .store
            .list_decisions(DecisionFilter::All)
            .await
            .unwrap()
            .is_empty()
    })
    .await
    .or_log(&app);
    let decisions = fixture
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].item_id, ids[20]);
    assert_eq!(decisions[0].version, on_screen);
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_updated_while_shown_is_shown_again_and_only_the_new_version_is_sent() {
    let Some(prerequisites) =
        skip_or_fail("a_draft_updated_while_shown_is_shown_again_and_only_the_new_version_is_sent")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let first = gmail_reply(1, "Offer", "We can do it for 400 EUR.");
    let draft = fixture.gmail.file_draft(&first, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    let version_a = shown_version(session).await.expect("version A is shown");
    let digest_a = session
        .execute_async(
            "const done = arguments[arguments.length - 1];
             window.__TAURI_INTERNALS__
               .invoke('get_review', {id: arguments[0], loadRemote: false, since: null})
               .then((d) => done(d.shown.digest), (e) => done(null));",
            vec![item.id.into()],
        )
        .await
        .unwrap();
    let digest_a = digest_a.as_str().map(str::to_owned);
    assert!(digest_a.is_some(), "no digest shown");

    // Watch the DOM: the moment the detail first shows another version, note whether Approve
    // is disabled then — the settle after a swap, seen at the swap itself rather than by a
    // check that a busy machine could make too late.
    session
        .execute(
            "window.__swap = null;
             const read = () => {
               const detail = document.querySelector('[data-testid=detail]');
               const version = detail && detail.getAttribute('data-shown-version');
               if (window.__swap === null && version && version !== arguments[0]) {
                 const approve = document.querySelector('[data-action=approve]');
                 window.__swap = {approveDisabled: !approve || approve.disabled};
               }
             };
             new MutationObserver(read).observe(document.body,
               {subtree: true, childList: true, attributes: true});",
            vec![version_a.clone().into()],
        )
        .await
        .unwrap();

    // The agent rewrites the draft while the owner reads it; a sync brings it in.
    let second = gmail_reply(1, "Offer", "We can do it for 4,000 EUR.");
    fixture
        .gmail
        .update_draft(&draft.id, &second, None)
        .unwrap();
    session
        .find("[data-action=sync-now]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[data-testid=changed-banner]",
            "This draft changed while you were reading it",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=changed-diff]", "4,000", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("changed-while-reading").await.unwrap();

    // The old version cannot be approved, whatever asks for it.
    let answer = session
        .execute_async(
            "const done = arguments[arguments.length - 1];
             window.__TAURI_INTERNALS__
               .invoke('approve', {shown: {id: arguments[0], version: arguments[1], digest: arguments[2]}})
               .then(() => done('approved'), (e) => done(e.code));",
            vec![
                item.id.into(),
                version_a.clone().into(),
                digest_a.unwrap_or_default().into(),
            ],
        )
        .await
        .unwrap();
    assert_eq!(answer, "changed_since_shown");

    // The new version renders, Approve comes back after a moment, and it is what leaves.
    eventually(UI_TIMEOUT, "the new version is shown", || async {
        shown_version(session).await.is_some_and(|v| v != version_a)
    })
    .await
    .or_log(&app);
    let swap = session
        .execute("return window.__swap;", vec![])
        .await
        .unwrap();
    assert_eq!(
        swap["approveDisabled"], true,
        "Approve was enabled the moment the new version appeared: {swap}"
    );
    wait_approve(session, true).await.or_log(&app);
    session
        .find("[data-action=approve]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the reviewed draft is sent", || async {
        !fixture.gmail.sent_messages().is_empty()
    })
    .await
    .or_log(&app);
    // Quit first: after that no second request can come, however late.
    app.quit().await.unwrap();
    assert_eq!(
        fixture.gmail.send_requests(&draft.id),
        1,
        "asked Gmail once"
    );
    let sent = fixture.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].raw, second, "the bytes sent are the new version's");
}

/// A Gmail reply with a text part and an HTML part that links to `href`; `reply_to` is its
/// Reply-To.
fn html_reply(reply_to: &str, html_amount: &str, href: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Reply-To: {reply_to}\r\nSubject: Invoice\r\nMessage-ID: <e2e-html@agent.example>\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
         Please pay 400 EUR on the payment page.\r\n\
         --b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
         <p>Please pay {html_amount} EUR on <a href=\"{href}\">the payment page</a>.</p>\r\n\
         --b1--\r\n"
    )
    .into_bytes()
}

/// Clicks "Sync now".
async fn sync_now(session: &countersign_e2e::webdriver::Session) {
    session
        .find("[data-action=sync-now]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_reply_to_and_link_target_changes_made_while_reading_each_appear_in_the_diff() {
    let Some(prerequisites) = skip_or_fail(
        "html_reply_to_and_link_target_changes_made_while_reading_each_appear_in_the_diff",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let first = html_reply("owner@example.com", "400", "https://pay.example.com/42");
    let draft = fixture.gmail.file_draft(&first, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);

    // The text part stays the same: only the HTML's words, the Reply-To and where the link
    // goes change — each used to be "No change."
    let second = html_reply(
        "collector@exfil.example.net",
        "4,000",
        "https://pay.example.net/42",
    );
    fixture
        .gmail
        .update_draft(&draft.id, &second, None)
        .unwrap();
    sync_now(session).await;
    session
        .wait_for_text(
            "[data-testid=changed-banner]",
            "This draft changed while you were reading it",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    for (kind, expected) in [
        ("diff-html-text", "4,000"),
        ("diff-reply-to", "collector@exfil.example.net"),
        ("diff-link", "https://pay.example.net/42"),
    ] {
        session
            .wait_for_text(
                &format!("[data-testid=changed-diff] [data-testid={kind}]"),
                expected,
                UI_TIMEOUT,
            )
            .await
            .or_log(&app);
    }
    let diff = session
        .find("[data-testid=changed-diff]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!diff.contains("No change."), "{diff}");
    app.screenshot("changed-while-reading-html").await.unwrap();
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_quick_updates_are_both_in_the_diff_against_the_version_last_rendered() {
    let Some(prerequisites) =
        skip_or_fail("two_quick_updates_are_both_in_the_diff_against_the_version_last_rendered")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let first = gmail_reply(1, "Offer", "We can do it for 400 EUR.");
    let draft = fixture.gmail.file_draft(&first, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    let read = shown_version(session)
        .await
        .expect("the first version is shown");

    // The next versions arrive, but their mail frames do not tell the app they rendered until
    // the test lets them (as on a busy machine): the load event of every frame but the one
    // read is held back, and played again for a version when it is let through.
    session
        .execute(
            "window.__frames = { allowed: new Set([arguments[0]]), held: [] };
             document.addEventListener('load', (event) => {
               const frame = event.target;
               if (frame instanceof HTMLIFrameElement
                   && !window.__frames.allowed.has(frame.dataset.version)) {
                 event.stopImmediatePropagation();
                 window.__frames.held.push(frame);
               }
             }, true);",
            vec![read.clone().into()],
        )
        .await
        .unwrap();
    let second = gmail_reply(1, "Offer", "We can do it for 4,000 EUR.");
    let second_version = fixture
        .gmail
        .update_draft(&draft.id, &second, None)
        .unwrap();
    sync_now(session).await;
    session
        .wait_for_text("[data-testid=changed-diff]", "4,000", UI_TIMEOUT)
        .await
        .or_log(&app);
    assert_eq!(
        shown_version(session).await,
        None,
        "the second version's frame was not to render"
    );

    let third = gmail_reply(1, "Final offer", "We can do it for 4,000 EUR.");
    let third_version = fixture.gmail.update_draft(&draft.id, &third, None).unwrap();
    assert_ne!(third_version, second_version);
    session
        .execute(
            "const version = arguments[0];
             window.__frames.allowed.add(version);
             for (const frame of window.__frames.held) {
               if (frame.isConnected && frame.dataset.version === version) {
                 frame.dispatchEvent(new Event('load'));
               }
             }",
            vec![third_version.clone().into()],
        )
        .await
        .unwrap();
    sync_now(session).await;
    eventually(UI_TIMEOUT, "the third version is shown", || async {
        shown_version(session).await.as_deref() == Some(third_version.as_str())
    })
    .await
    .or_log(&app);

    // The owner read the first version: the banner shows both changes since, not only the
    // last one.
    session
        .wait_for_text("[data-testid=changed-diff]", "Final offer", UI_TIMEOUT)
        .await
        .or_log(&app);
    let diff = session
        .find("[data-testid=changed-diff]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        diff.contains("4,000") && diff.contains("400"),
        "the first change is lost: {diff}"
    );
    assert_ne!(read, third_version);
    app.quit().await.unwrap();
}
