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
