//! What you saw is what is sent, in the window: keys never decide on a draft that is not on
//! screen yet, and a draft that changes while it is read is shown again before it can be
//! approved — checked at the fake Gmail and in the mirror, not only on screen.

use std::time::Duration;

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
    tokio::time::sleep(Duration::from_secs(1)).await;
    let sent = fixture.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].raw, second, "the bytes sent are the new version's");
    app.quit().await.unwrap();
}
