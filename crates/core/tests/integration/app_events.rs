//! Core says which items changed and why, at once: a decision taken through the running app is
//! announced with the item's row as it is now (no poll of the outbox), and so is its dispatch.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_core::app::{AppEvent, AppOptions, ChangeCause, ItemsChanged, OnEvent, RunningApp};
use countersign_core::decide::Confirmation;
use countersign_core::ItemState;

use crate::support::*;

/// The running app over `env`, dispatching quickly, telling `on_event` what it does.
async fn start_app(env: &Env, on_event: OnEvent) -> RunningApp {
    RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            dispatch: quick_dispatch(),
            ..AppOptions::default()
        },
        on_event,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_decision_is_announced_at_once_with_the_changed_row_and_so_is_its_dispatch() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(1, "It is 40 EUR."), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let heard: Arc<Mutex<Vec<ItemsChanged>>> = Arc::default();
    let app = start_app(&env, {
        let heard = heard.clone();
        Arc::new(move |event| {
            if let AppEvent::ItemsChanged(changed) = event {
                heard.lock().unwrap().push(changed);
            }
        })
    })
    .await;
    let for_item = |cause: ChangeCause| {
        heard
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.cause == cause)
            .flat_map(|c| c.items.clone())
            .filter(|row| row.id == item.id)
            .collect::<Vec<_>>()
    };

    let shown = shown(&env, item.id).await;
    app.approve(&shown, "owner via test", Confirmation::None)
        .await
        .unwrap();
    // Heard before approve returned: no wait.
    let decided = for_item(ChangeCause::Decided);
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0].state, ItemState::Queued);
    assert!(decided[0].decision.is_some());

    app.undo(item.id, "owner via test").await.unwrap();
    let undone = for_item(ChangeCause::Undone);
    assert_eq!(undone.len(), 1);
    assert_eq!(undone[0].state, ItemState::Pending);

    // Approved again with no undo window: the dispatcher sends it and says so with the row.
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    app.approve(&shown, "owner via test", Confirmation::None)
        .await
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the dispatch is announced",
        || async {
            for_item(ChangeCause::Dispatched)
                .iter()
                .any(|row| row.state == ItemState::Sent)
        },
    )
    .await;
    assert_eq!(env.gmail.sent_messages().len(), 1);
    app.stop();
}

/// Three muster replies, approved and handed to muster, which the plugin has claimed to send:
/// each refusal reported from here on is one to tell the owner. Their draft and item ids.
async fn three_approved_replies_the_plugin_claimed(env: &Env) -> (Vec<String>, Vec<i64>) {
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let mut drafts = Vec::new();
    for n in 0..3 {
        let relayed = env
            .muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                "ana@example.com",
                &format!("Question {n}"),
                "Hi",
            )
            .unwrap();
        drafts.push(
            env.muster
                .file_draft(&relayed.route_id, &format!("Answer {n}"))
                .unwrap(),
        );
    }
    resync(env, &account).await;
    let mut items = Vec::new();
    for draft in &drafts {
        let item = item_for(env, draft).await.id;
        countersign_core::decide::approve(
            &env.store,
            &shown(env, item).await,
            countersign_core::decide::UndoWindow::None,
            "owner via test",
            Confirmation::None,
        )
        .await
        .unwrap();
        items.push(item);
    }
    {
        let dispatcher = env.dispatcher().await;
        dispatcher.run_once().await.unwrap();
    }
    for draft in &drafts {
        env.muster.claim(draft).unwrap();
    }
    (drafts, items)
}

#[tokio::test]
async fn no_notification_for_the_refused_item_in_view_nor_with_notifications_off() {
    let env = Env::new().await;
    let (drafts, items) = three_approved_replies_the_plugin_claimed(&env).await;
    let notified: Arc<Mutex<Vec<i64>>> = Arc::default();
    let app = start_app(&env, {
        let notified = notified.clone();
        Arc::new(move |event| {
            if let AppEvent::Refusal { refusal, .. } = event {
                notified.lock().unwrap().push(refusal.item_id);
            }
        })
    })
    .await;
    let marked = |item: i64| {
        let store = env.store.clone();
        async move {
            store
                .refusals_for_item(item)
                .await
                .unwrap()
                .iter()
                .any(|r| r.notified_at.is_some())
        }
    };
    let (in_view, control, muted) = (items[0], items[1], items[2]);

    // The owner is looking at it: the refusal is on screen, no notification.
    app.set_viewing(Some(in_view));
    env.muster
        .report_result(&drafts[0], false, Some("mailbox full"))
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the refusal in view is handled",
        || marked(in_view),
    )
    .await;

    // Looking elsewhere: notified (the check above could fail).
    app.set_viewing(None);
    env.muster
        .report_result(&drafts[1], false, Some("mailbox full"))
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the other refusal is notified",
        || async { notified.lock().unwrap().contains(&control) },
    )
    .await;

    // Notifications off: handled, not notified.
    let mut settings = env.store.settings().await.unwrap();
    settings.notifications = false;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    env.muster
        .report_result(&drafts[2], false, Some("mailbox full"))
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the muted refusal is handled",
        || marked(muted),
    )
    .await;
    assert_eq!(*notified.lock().unwrap(), vec![control]);
    app.stop();
}

#[tokio::test]
async fn a_rules_decision_is_announced_at_once_and_its_send_is_told_once_with_the_rules_name() {
    use countersign_core::app::RuleSend;

    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_a_rule_for_example_com(&env, 1).await;
    let (_, thread) = env.gmail.add_inbox_message(&parent(1), None);
    let draft = env
        .gmail
        .file_draft(&reply(1, "Yes, Tuesday works."), Some(&thread));
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;

    let decided: Arc<Mutex<Vec<ItemsChanged>>> = Arc::default();
    let told: Arc<Mutex<Vec<Vec<RuleSend>>>> = Arc::default();
    let app = start_app(&env, {
        let (decided, told) = (decided.clone(), told.clone());
        Arc::new(move |event| match event {
            AppEvent::ItemsChanged(changed) if changed.cause == ChangeCause::RulesDecided => {
                decided.lock().unwrap().push(changed)
            }
            AppEvent::SentByRule { sent } => told.lock().unwrap().push(sent),
            _ => {}
        })
    })
    .await;

    eventually(
        Duration::from_secs(20),
        "the rule's send is told",
        || async { !told.lock().unwrap().is_empty() },
    )
    .await;
    let rows: Vec<_> = decided
        .lock()
        .unwrap()
        .iter()
        .flat_map(|c| c.items.clone())
        .collect();
    assert!(
        rows.iter().any(|row| row.id == item.id
            && row.state == ItemState::Queued
            && row.decision.as_ref().and_then(|d| d.by_rule.as_deref())
                == Some("Replies to example.com")),
        "the rule's decision is announced with the rule's name: {rows:?}"
    );
    let told = told.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "one notification per pass: {told:?}");
    assert_eq!(told[0].len(), 1);
    assert_eq!(told[0][0].rule, "Replies to example.com");
    assert_eq!(told[0][0].item.id, item.id);
    assert_eq!(told[0][0].item.state, ItemState::Sent);
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    app.stop();
}

#[tokio::test]
async fn a_rules_send_of_the_draft_in_view_is_not_told_and_one_sent_beside_it_is() {
    use countersign_core::app::RuleSend;

    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_a_rule_for_example_com(&env, 1).await;
    let (_, first) = env.gmail.add_inbox_message(&parent(1), None);
    let (_, second) = env.gmail.add_inbox_message(&parent(2), None);
    let watched = env
        .gmail
        .file_draft(&reply(1, "Yes, Tuesday works."), Some(&first));
    let beside = env
        .gmail
        .file_draft(&reply(2, "Thursday suits me too."), Some(&second));
    sync(&env, &account).await;
    let watched_item = item_for(&env, &watched.id).await;
    let beside_item = item_for(&env, &beside.id).await;

    let told: Arc<Mutex<Vec<Vec<RuleSend>>>> = Arc::default();
    let app = start_app(&env, {
        let told = told.clone();
        Arc::new(move |event| {
            if let AppEvent::SentByRule { sent } = event {
                told.lock().unwrap().push(sent);
            }
        })
    })
    .await;
    // Before the undo window (a second) lets either leave.
    app.set_viewing(Some(watched_item.id));

    let told_of = |id: i64| {
        let told = told.clone();
        move || {
            let told = told.clone();
            async move {
                told.lock()
                    .unwrap()
                    .iter()
                    .flatten()
                    .any(|s| s.item.id == id)
            }
        }
    };
    eventually(
        Duration::from_secs(20),
        "the draft sent beside the one in view is told",
        told_of(beside_item.id),
    )
    .await;
    // The rule decided both in its first pass, with one due time, so both were sent in one
    // pass: the notification that names one would name the other.
    assert_eq!(env.gmail.send_requests(&watched.id), 1);
    assert_eq!(env.gmail.send_requests(&beside.id), 1);
    assert!(
        !told_of(watched_item.id)().await,
        "the send of the draft in view is not notified: {:?}",
        told.lock().unwrap()
    );
    app.stop();
}

/// A refusal is told once, whatever happens to the app: one that restarts over the same mirror
/// (after a crash, say) does not tell again what the one before it told, and still tells what
/// is new. The mark is written before the notification is shown, so a crash between the two
/// loses a notification rather than repeating one.
#[tokio::test]
async fn a_refusal_told_before_a_restart_is_not_told_again_after_it() {
    let env = Env::new().await;
    let (drafts, items) = three_approved_replies_the_plugin_claimed(&env).await;
    let listener = |told: Arc<Mutex<Vec<i64>>>| -> OnEvent {
        Arc::new(move |event| {
            if let AppEvent::Refusal { refusal, .. } = event {
                told.lock().unwrap().push(refusal.item_id);
            }
        })
    };

    let before: Arc<Mutex<Vec<i64>>> = Arc::default();
    let first = start_app(&env, listener(before.clone())).await;
    for draft in &drafts[..2] {
        env.muster
            .report_result(draft, false, Some("mailbox full"))
            .unwrap();
    }
    eventually(
        Duration::from_secs(20),
        "both refusals are told",
        || async {
            let told = before.lock().unwrap();
            told.contains(&items[0]) && told.contains(&items[1])
        },
    )
    .await;
    first.stop();
    drop(first);

    // Another app over the same file, as after a restart.
    let reopened = countersign_core::Store::open(env.dir.path()).await.unwrap();
    let after: Arc<Mutex<Vec<i64>>> = Arc::default();
    let second = RunningApp::start(
        reopened,
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            dispatch: quick_dispatch(),
            ..AppOptions::default()
        },
        listener(after.clone()),
    )
    .await
    .unwrap();
    env.muster
        .report_result(&drafts[2], false, Some("mailbox full"))
        .unwrap();
    // Refusals are told oldest first: by the time the new one is, the old ones would have been.
    eventually(
        Duration::from_secs(20),
        "the new refusal is told",
        || async { after.lock().unwrap().contains(&items[2]) },
    )
    .await;
    assert_eq!(
        *after.lock().unwrap(),
        vec![items[2]],
        "told again after the restart"
    );
    assert_eq!(
        {
            let mut told = before.lock().unwrap().clone();
            told.sort();
            told
        },
        items[..2].to_vec()
    );
    second.stop();
}
