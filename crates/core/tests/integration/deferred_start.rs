//! A running app whose syncs wait for the shell (the desktop window paints the queue from the
//! mirror first): nothing reaches Gmail until `start_syncs`, then the account is followed.
//! The desktop suite (tests/desktop/start.rs) checks the order against a real window.

use std::sync::Arc;
use std::time::Duration;

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::ItemFilter;

use crate::support::{eventually, reply, Env};

#[tokio::test]
async fn a_deferred_app_syncs_only_once_told_to_start() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "Hello"), None);
    let before = env.gmail.requests().len();

    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            defer_syncs: true,
            ..AppOptions::default()
        },
        Arc::new(|_| {}),
    )
    .await
    .unwrap();
    // The same app on another data directory and fake, not deferred, started just after: once
    // it has asked its Gmail for drafts, the deferred one had as long to do the same (a check
    // made at once could not fail, whatever the app did later).
    let control_env = Env::new().await;
    control_env.connect_gmail().await;
    let control_before = control_env.gmail.requests().len();
    let control = RunningApp::start(
        control_env.store.clone(),
        control_env.services.clone(),
        control_env.dir.path(),
        AppOptions::default(),
        Arc::new(|_| {}),
    )
    .await
    .unwrap();
    eventually(
        Duration::from_secs(20),
        "the app that is not deferred lists its drafts",
        || async {
            control_env
                .gmail
                .requests()
                .iter()
                .skip(control_before)
                .any(|r| r.method == "drafts.list")
        },
    )
    .await;
    control.stop();
    // The dispatcher is running (it has nothing to send); the mirror answers at once.
    assert!(app.is_dispatcher());
    assert!(env
        .store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        env.gmail.requests().len(),
        before,
        "no request before start_syncs"
    );

    app.start_syncs().await.unwrap();
    app.start_syncs().await.unwrap();
    eventually(
        Duration::from_secs(10),
        "the draft in the mirror",
        || async {
            env.store
                .find_item(&account.id, &draft.id)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    app.stop();
}
