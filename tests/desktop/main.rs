//! Desktop app tests through WebDriver: the real `countersign-desktop` binary, under Xvfb,
//! driven through WebKitGTK's `WebKitWebDriver` as a user would use it.
//!
//! Each test starts its own app on a fresh data directory. Without a display or the drivers the
//! tests are skipped loudly on a developer machine and fail in CI (see
//! `countersign_e2e::desktop::skip_or_fail`). Run them with `bash scripts/test.sh`.
//!
//! The tests that review drafts prepare their data directory with `countersign-core` against
//! the fakes running in the test process (`countersign_e2e::fixture`), then check the outcome
//! where it matters: at the fake Gmail or muster, and on the D-Bus session bus.

mod accessibility;
mod attachments;
mod binding;
mod bulk;
mod context;
mod edit;
mod keyring;
mod muster;
mod muster_polling;
mod narrow;
mod offline;
mod queue;
mod record;
mod reveal;
mod review;
mod rules;
mod rules_labels;
mod rules_window;
mod safety;
mod settings;
mod start;
mod support;
mod warnings;
mod welcome;

use countersign_e2e::desktop::{skip_or_fail, DesktopApp, LaunchOptions};
use support::UI_TIMEOUT;

#[tokio::test]
async fn the_app_opens_a_countersign_window_with_the_welcome() {
    let Some(prerequisites) = skip_or_fail("the_app_opens_a_countersign_window_with_the_welcome")
    else {
        return;
    };
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    let session = app.session();

    assert_eq!(session.title().await.unwrap(), "Countersign");
    let heading = session.find("h1").await.unwrap().text().await.unwrap();
    assert_eq!(heading, "Countersign");
    // No account yet: the welcome stands where the queue will be.
    session
        .wait_for_text("[data-testid=welcome] h2", "Welcome", UI_TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e:#}\n{}", app.log_tail()));

    let shot = app.screenshot("first-window").await.unwrap();
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000);
    app.quit().await.unwrap();
}

#[tokio::test]
async fn the_app_creates_its_mirror_in_the_data_dir_it_was_given() {
    let Some(prerequisites) =
        skip_or_fail("the_app_creates_its_mirror_in_the_data_dir_it_was_given")
    else {
        return;
    };
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    app.session()
        .wait_for("[data-testid=welcome]", UI_TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e:#}\n{}", app.log_tail()));

    assert!(app.data_dir().join("mirror.sqlite3").is_file());
    app.quit().await.unwrap();
}

#[tokio::test]
async fn a_corrupt_mirror_is_shown_in_the_window_by_file_name() {
    let Some(prerequisites) = skip_or_fail("a_corrupt_mirror_is_shown_in_the_window_by_file_name")
    else {
        return;
    };
    let data_dir = tempfile::tempdir().unwrap();
    let mirror = data_dir.path().join("mirror.sqlite3");
    std::fs::write(&mirror, b"not a database").unwrap();

    let app = DesktopApp::launch(
        &prerequisites,
        LaunchOptions {
            data_dir: Some(data_dir.path().to_path_buf()),
            ..LaunchOptions::default()
        },
    )
    .await
    .expect("the app starts");

    let alert = app
        .session()
        .wait_for_text("[role=alert]", "mirror.sqlite3", UI_TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e:#}\n{}", app.log_tail()));
    assert!(alert.text().await.unwrap().contains("cannot be opened"));
    assert_eq!(std::fs::read(&mirror).unwrap(), b"not a database");
    app.quit().await.unwrap();
}
