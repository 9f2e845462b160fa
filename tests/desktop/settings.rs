//! The settings and accounts view: what each account was granted and where its secret is
//! kept, and settings that are saved to the mirror the app runs on.

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, Fixture, TEST_UNDO_SECS};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_show_the_accounts_save_the_undo_window_and_pause_and_remove_an_account() {
    let Some(prerequisites) = skip_or_fail(
        "settings_show_the_accounts_save_the_undo_window_and_pause_and_remove_an_account",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let gmail = fixture.connect_gmail().await.unwrap();
    let muster = fixture.connect_muster().await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session
        .wait_for("[data-action=settings]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    let undo = session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text(
            &format!(".settings [data-account=\"{}\"]", gmail.id),
            "auth/gmail",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            &format!(".settings [data-account=\"{}\"]", muster.id),
            "muster",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    let shown = session
        .execute(
            "return document.querySelector('[data-testid=undo-window]').value",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(shown.as_str(), Some(TEST_UNDO_SECS.to_string().as_str()));
    app.screenshot("settings").await.unwrap();

    // Select the field's text and type over it, as a user would. The field is focused and
    // selected in one step: WebDriver's "send keys" to an element that is not the focused one
    // focuses it and puts the caret after its text, so a click that landed elsewhere (the
    // accounts above it re-render as syncs report) made "3" + "25" = "325", which is refused.
    undo.click().await.unwrap();
    session
        .execute(
            "const field = document.querySelector('[data-testid=undo-window]');
             field.focus();
             field.select();",
            vec![],
        )
        .await
        .unwrap();
    undo.send_keys("25").await.unwrap();
    session
        .find("form.prefs button[type=submit]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the undo window is saved", || async {
        fixture
            .store
            .settings()
            .await
            .map(|s| s.undo_window_secs)
            .ok()
            == Some(25)
    })
    .await
    .or_log(&app);

    session
        .find("[data-testid=pause]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "sending is paused", || async {
        fixture.store.settings().await.map(|s| s.paused).ok() == Some(true)
    })
    .await
    .or_log(&app);

    // Removing an account asks first, then it is gone from the mirror and the list.
    let row = format!(".settings [data-account=\"{}\"]", muster.id);
    session
        .find(&format!("{row} button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-action=confirm-remove]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the muster account is removed", || async {
        fixture
            .store
            .list_accounts()
            .await
            .map(|a| a.iter().all(|a| a.id != muster.id))
            .unwrap_or(false)
    })
    .await
    .or_log(&app);
    eventually(UI_TIMEOUT, "the settings no longer list it", || async {
        session
            .find_all(&row)
            .await
            .map(|r| r.is_empty())
            .unwrap_or(false)
    })
    .await
    .or_log(&app);
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_one_setting_leaves_hold_everything_and_pause_sending_as_they_were() {
    let Some(prerequisites) =
        skip_or_fail("saving_one_setting_leaves_hold_everything_and_pause_sending_as_they_were")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    fixture.connect_gmail().await.unwrap();
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session
        .wait_for("[data-action=settings]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    let undo = session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    eventually(UI_TIMEOUT, "the page has loaded the settings", || async {
        session
            .execute(
                "return document.querySelector('[data-testid=undo-window]').value",
                vec![],
            )
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            == Some(TEST_UNDO_SECS.to_string())
    })
    .await
    .or_log(&app);

    // With the page open on the copy it loaded, the owner holds everything and pauses sending
    // elsewhere (the tray, the CLI).
    countersign_core::rules::pass::set_hold_everything(&fixture.store, true, "owner via tray")
        .await
        .unwrap();
    fixture
        .store
        .set_paused(true, "owner via tray")
        .await
        .unwrap();

    // Then changes the undo window on the page and saves.
    undo.click().await.unwrap();
    session
        .execute(
            "const field = document.querySelector('[data-testid=undo-window]');
             field.focus();
             field.select();",
            vec![],
        )
        .await
        .unwrap();
    undo.send_keys("25").await.unwrap();
    session
        .find("form.prefs button[type=submit]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let saved = eventually(UI_TIMEOUT, "the undo window is saved", || async {
        fixture
            .store
            .settings()
            .await
            .map(|s| s.undo_window_secs)
            .ok()
            == Some(25)
    })
    .await;
    if let Err(error) = saved {
        // Say what the page shows: the field's value and any refusal under the form.
        let page = session
            .execute(
                "const alert = document.querySelector('.settings [role=alert]');
                 return [document.querySelector('[data-testid=undo-window]').value,
                         alert ? alert.textContent : ''];",
                vec![],
            )
            .await;
        panic!("{error}; the page shows {page:?}\n{}", app.log_tail());
    }
    let settings = fixture.store.settings().await.unwrap();
    assert!(settings.hold_everything, "Hold everything is still on");
    assert!(settings.paused, "sending is still paused");
    let changes: Vec<(String, String)> = fixture
        .store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.line.action == "setting changed")
        .map(|e| (e.line.actor, e.line.detail.unwrap_or_default()))
        .collect();
    assert_eq!(
        changes.last(),
        Some(&(
            "owner via desktop".to_string(),
            format!("undo window: {TEST_UNDO_SECS} s \u{2192} 25 s")
        )),
        "{changes:?}"
    );
    assert!(
        changes
            .iter()
            .all(|(_, detail)| !detail.contains("on \u{2192} off")),
        "nothing was switched off: {changes:?}"
    );
    app.quit().await.unwrap();
}
