//! The app's dispatcher role: when another Countersign process (the CLI's `dispatch`) holds
//! the data directory's dispatcher lock at the app's start, the app keeps trying and takes over
//! as soon as it is let go, says so, and sends what waited exactly once.

use std::sync::Arc;
use std::time::Duration;

use countersign_core::app::{AppEvent, AppOptions, ChangeCause, RunningApp};
use countersign_core::decide::Confirmation;
use countersign_core::ItemState;
use tokio::sync::mpsc;

use crate::support::*;

/// The next event `wanted` accepts, or a failure after `limit`.
async fn heard(
    events: &mut mpsc::UnboundedReceiver<AppEvent>,
    what: &str,
    wanted: impl Fn(&AppEvent) -> bool,
) {
    let limit = Duration::from_secs(20);
    tokio::time::timeout(limit, async {
        while let Some(event) = events.recv().await {
            if wanted(&event) {
                return;
            }
        }
        panic!("{what}: the app stopped talking");
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: not heard within {limit:?}"));
}

/// The running app over `env`, trying the dispatcher lock every 20 ms, and what it says.
async fn start_app(env: &Env) -> (RunningApp, mpsc::UnboundedReceiver<AppEvent>) {
    let (tx, events) = mpsc::unbounded_channel();
    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            dispatch: quick_dispatch(),
            dispatch_tick: Duration::from_millis(20),
            ..AppOptions::default()
        },
        Arc::new(move |event| {
            let _ = tx.send(event);
        }),
    )
    .await
    .unwrap();
    (app, events)
}

#[tokio::test]
async fn an_app_started_while_another_process_dispatches_takes_over_when_it_lets_go_and_sends_once()
{
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "It is 40 EUR."), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;

    // Another holder of the lock (as `countersign dispatch` would be): a second open of the
    // lock file, which flock(2) treats as another owner even in this process.
    let other = env.dispatcher().await;
    let (app, mut events) = start_app(&env).await;
    assert!(!app.is_dispatcher(), "the other process holds the role");

    let shown = shown(&env, item.id).await;
    app.approve(&shown, "owner via test", Confirmation::None)
        .await
        .unwrap();
    // While the other holds the lock and does not dispatch, the approval waits: looked at once
    // the app has tried the lock (and failed) a few times since the approval was stored.
    passes_after(&app, 3).await;
    assert!(
        !app.is_dispatcher(),
        "the other process still holds the role"
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Queued);
    assert_eq!(env.gmail.request_count("drafts.send"), 0);

    drop(other);
    heard(&mut events, "the app becomes the dispatcher", |event| {
        matches!(event, AppEvent::DispatcherRole { dispatcher: true })
    })
    .await;
    assert!(app.is_dispatcher());
    heard(&mut events, "the approval is sent", |event| match event {
        AppEvent::ItemsChanged(changed) => {
            changed.cause == ChangeCause::Dispatched
                && changed
                    .items
                    .iter()
                    .any(|row| row.id == item.id && row.state == ItemState::Sent)
        }
        _ => false,
    })
    .await;
    // A few more passes (a second send would come from one), then the loop ends before counting.
    passes_after(&app, 3).await;
    stop_and_wait(&app).await;
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert_eq!(env.gmail.request_count("drafts.send"), 1);
    assert_eq!(env.gmail.sent_messages().len(), 1);
}

/// Only the process holding the dispatcher role runs the rules: an app that does not hold it
/// judges nothing (no record, no decision) however many passes it makes, and judges the draft
/// as soon as the role is its own.
#[tokio::test]
async fn only_the_dispatching_process_runs_the_rules() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_a_rule_for_example_com(&env, 0).await;
    let (_, thread) = env.gmail.add_inbox_message(&parent(1), None);
    let draft = env
        .gmail
        .file_draft(&reply(1, "It is 40 EUR."), Some(&thread));
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;

    let other = env.dispatcher().await;
    let (app, mut events) = start_app(&env).await;
    passes_after(&app, 5).await;
    assert!(!app.is_dispatcher());
    assert!(
        env.store
            .evaluations_for_item(item.id)
            .await
            .unwrap()
            .is_empty(),
        "a process without the role judged the draft"
    );
    assert!(env
        .store
        .decisions_for_item(item.id)
        .await
        .unwrap()
        .is_empty());

    drop(other);
    heard(&mut events, "the app becomes the dispatcher", |event| {
        matches!(event, AppEvent::DispatcherRole { dispatcher: true })
    })
    .await;
    heard(
        &mut events,
        "the rule's approval is sent",
        |event| match event {
            AppEvent::ItemsChanged(changed) => changed
                .items
                .iter()
                .any(|row| row.id == item.id && row.state == ItemState::Sent),
            _ => false,
        },
    )
    .await;
    stop_and_wait(&app).await;
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
}
