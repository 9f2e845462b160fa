//! Approving and dispatching from the command line: exactly the reviewed bytes, exactly once —
//! through undo windows, pauses, two dispatchers at once, and a dispatcher killed mid-send.

use std::time::Duration;

use countersign_core::decide::Confirmation;
use countersign_fakes::gmail::FakeGmail;

use crate::support::{eventually, fakes, reply, reply_with_attachment, Cli};

/// A CLI with the fake Gmail connected.
async fn gmail_cli() -> (Cli, FakeGmail) {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    (cli, gmail)
}

/// The state of the live decision on `item_id`, from `outbox --json`.
async fn live_decision_state(cli: &Cli, item_id: &str) -> Option<String> {
    let outbox = cli.exec(&["outbox", "--json"]).await.json();
    outbox
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["itemId"].as_i64() == item_id.parse().ok())
        .map(|d| d["state"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_draft_is_sent_once_with_exactly_the_reviewed_bytes() {
    let (cli, gmail) = gmail_cli().await;
    let raw = reply_with_attachment(1, "The invoice is attached.");
    let draft = gmail.file_draft(&raw, None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.exec(&["settings", "set", "undo-window", "1"])
        .await
        .ok();

    cli.show(&id).await;
    let approved = cli.exec(&["approve", &id]).await.ok();
    assert!(approved.stdout.contains("undo"), "{}", approved.stdout);
    let out = cli.exec(&["dispatch", "--wait"]).await.ok();
    assert!(out.stdout.contains("done: sent"), "{}", out.stdout);

    assert_eq!(gmail.send_requests(&draft.id), 1);
    let sent = gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].raw, raw,
        "the sent bytes differ from the reviewed ones"
    );
    assert_eq!(cli.item(&draft.id).await["state"], "sent");

    // Dispatching again sends nothing more.
    let again = cli.exec(&["dispatch", "--wait", "--json"]).await.json();
    assert_eq!(again["status"], "finished");
    assert_eq!(again["outcomes"], serde_json::json!([]));
    assert_eq!(gmail.send_requests(&draft.id), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_sends_nothing_while_the_decision_waits_and_is_refused_once_it_was_sent() {
    let (cli, gmail) = gmail_cli().await;
    let kept = gmail.file_draft(&reply(1, "Not this one"), None);
    let sent = gmail.file_draft(&reply(2, "This one"), None);
    cli.exec(&["sync"]).await.ok();
    let kept_id = cli.item_id(&kept.id).await;
    let sent_id = cli.item_id(&sent.id).await;
    cli.exec(&["settings", "set", "undo-window", "5"])
        .await
        .ok();

    cli.show(&kept_id).await;
    cli.exec(&["approve", &kept_id]).await.ok();
    let undone = cli.exec(&["undo", &kept_id]).await.ok();
    assert!(undone.stdout.contains("Undone"), "{}", undone.stdout);
    let out = cli.exec(&["dispatch", "--wait", "--json"]).await.json();
    assert_eq!(out["live"], 0);
    assert_eq!(gmail.send_requests(&kept.id), 0);
    assert_eq!(cli.item(&kept.id).await["state"], "pending");

    // Past its window, with no dispatcher running, nothing has left: undo still works.
    cli.exec(&["approve", &kept_id, "--no-undo"]).await.ok();
    let late = cli.exec(&["undo", &kept_id]).await.ok();
    assert!(late.stdout.contains("Undone"), "{}", late.stdout);
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&kept.id), 0);

    cli.show(&sent_id).await;
    cli.exec(&["approve", &sent_id, "--no-undo"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&sent.id), 1);
    let after = cli.exec(&["undo", &sent_id]).await;
    assert!(!after.status.success());
    assert!(
        after.stderr.contains("cannot undo the decision on “")
            && after.stderr.contains("no decision waiting"),
        "{}",
        after.stderr
    );
    assert_eq!(gmail.send_requests(&sent.id), 1);
}

/// The next event `wanted` accepts, or a failure after 20 s.
async fn heard(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<countersign_core::app::AppEvent>,
    what: &str,
    wanted: impl Fn(&countersign_core::app::AppEvent) -> bool,
) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(event) = events.recv().await {
            if wanted(&event) {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: not heard within 20 s"));
}

/// The desktop app started while `countersign dispatch` held the dispatcher role: it takes the
/// role over once that process exits, says so, and sends what is approved in it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_started_while_the_cli_dispatches_takes_over_once_the_cli_exits() {
    use countersign_core::app::{AppEvent, AppOptions, ChangeCause, RunningApp};
    use std::sync::Arc;

    let (cli, gmail) = gmail_cli().await;
    let first = gmail.file_draft(&reply(1, "Sent by the CLI"), None);
    let second = gmail.file_draft(&reply(2, "Sent by the app"), None);
    cli.exec(&["sync"]).await.ok();
    let first_id = cli.item_id(&first.id).await;
    let second_id: i64 = cli.item_id(&second.id).await.parse().unwrap();
    cli.show(&first_id).await;
    cli.exec(&["approve", &first_id, "--no-undo"]).await.ok();
    // The CLI's dispatcher holds the role while its re-read of the draft is held up.
    let reads_before = gmail.request_count("drafts.get");
    // Held until the app has seen that the role is taken (no guess at how long that takes).
    let held = gmail.hold_next("drafts.get");
    let dispatch = cli.spawn(&["dispatch", "--wait"]);
    eventually(
        Duration::from_secs(20),
        "the CLI dispatcher re-reads",
        || async { gmail.request_count("drafts.get") > reads_before },
    )
    .await;

    // The app, in this process, on the same data directory.
    let data_dir = cli.data_dir();
    let store = countersign_core::Store::open(&data_dir).await.unwrap();
    let services = countersign_core::services::Services::with_token_store(
        &data_dir,
        countersign_gmail::TokenStore::file(&data_dir),
    );
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let app = RunningApp::start(
        store.clone(),
        services,
        &data_dir,
        AppOptions {
            defer_syncs: true,
            dispatch_tick: Duration::from_millis(50),
            ..AppOptions::default()
        },
        Arc::new(move |event| {
            let _ = tx.send(event);
        }),
    )
    .await
    .unwrap();
    assert!(!app.is_dispatcher(), "the CLI holds the role");
    held.release();

    let dispatched = cli.finish(dispatch, &["dispatch", "--wait"]).await.ok();
    assert!(
        dispatched.stdout.contains("done: sent"),
        "{}",
        dispatched.stdout
    );
    heard(&mut events, "the app becomes the dispatcher", |e| {
        matches!(e, AppEvent::DispatcherRole { dispatcher: true })
    })
    .await;
    assert!(app.is_dispatcher());

    let mut settings = store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    store
        .update_settings(
            &countersign_core::store::SettingsChange::between(
                &store.settings().await.unwrap(),
                &settings,
            ),
            "owner via test",
        )
        .await
        .unwrap();
    let shown = countersign_core::review::review_detail(&store, second_id, false)
        .await
        .unwrap()
        .shown;
    store
        .record_view(
            &shown,
            "owner via test",
            countersign_core::store::ShownPart::Html,
        )
        .await
        .unwrap();
    app.approve(&shown, "owner via test", Confirmation::None)
        .await
        .unwrap();
    heard(&mut events, "the app sends the second draft", |e| match e {
        AppEvent::ItemsChanged(changed) => {
            changed.cause == ChangeCause::Dispatched
                && changed.items.iter().any(|row| {
                    row.id == second_id && row.state == countersign_core::ItemState::Sent
                })
        }
        _ => false,
    })
    .await;
    // A few more passes of the app's dispatch loop (a second send would come from one), then
    // the loop ends before the count: nothing it sends can be missed.
    let mut passes = app.dispatch_passes();
    let target = *passes.borrow() + 3;
    tokio::time::timeout(Duration::from_secs(20), passes.wait_for(|n| *n >= target))
        .await
        .expect("the dispatch loop did not pass within 20 s")
        .expect("the dispatch loop ended early");
    app.stop();
    tokio::time::timeout(Duration::from_secs(20), async {
        while passes.changed().await.is_ok() {}
    })
    .await
    .expect("the dispatch loop did not end within 20 s");
    assert_eq!(gmail.send_requests(&first.id), 1);
    assert_eq!(gmail.send_requests(&second.id), 1);
    assert_eq!(gmail.request_count("drafts.send"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_stops_dispatch_and_resume_lets_the_decision_go() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();
    cli.exec(&["pause"]).await.ok();

    let once = cli.exec(&["dispatch"]).await.ok();
    assert!(once.stdout.contains("paused"), "{}", once.stdout);
    let waited = cli.exec(&["dispatch", "--wait"]).await;
    assert_eq!(waited.status.code(), Some(2), "--wait gives up when paused");
    assert!(waited.stdout.contains("paused"), "{}", waited.stdout);
    assert_eq!(gmail.send_requests(&draft.id), 0);
    assert_eq!(
        live_decision_state(&cli, &id).await.as_deref(),
        Some("queued")
    );

    cli.exec(&["resume"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&draft.id), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispatcher_killed_while_rereading_the_draft_sends_it_once_on_the_next_run() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();

    // The pre-send re-read hangs; the process dies while the decision is `dispatching`.
    let reads_before = gmail.request_count("drafts.get");
    gmail.delay("drafts.get", Duration::from_secs(30), None);
    let mut first = cli.spawn(&["dispatch", "--wait"]);
    eventually(
        Duration::from_secs(20),
        "the re-read reaches Gmail",
        || async { gmail.request_count("drafts.get") > reads_before },
    )
    .await;
    assert_eq!(
        live_decision_state(&cli, &id).await.as_deref(),
        Some("dispatching")
    );
    first.kill().await.unwrap();
    let killed = cli.finish(first, &["dispatch", "--wait"]).await;
    assert!(!killed.status.success());
    assert_eq!(gmail.send_requests(&draft.id), 0);

    gmail.clear_faults();
    let out = cli.exec(&["dispatch", "--wait"]).await.ok();
    assert!(out.stdout.contains("done: sent"), "{}", out.stdout);
    assert_eq!(gmail.send_requests(&draft.id), 1);
    assert_eq!(cli.item(&draft.id).await["state"], "sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispatcher_killed_after_gmail_sent_but_before_the_answer_reconciles_without_resending() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();

    // The fake commits the send, then holds the answer: what is lost is the answer.
    gmail.delay("drafts.send", Duration::from_secs(30), None);
    let mut first = cli.spawn(&["dispatch", "--wait"]);
    eventually(Duration::from_secs(20), "Gmail sends the draft", || async {
        gmail.send_requests(&draft.id) == 1
    })
    .await;
    assert_eq!(
        live_decision_state(&cli, &id).await.as_deref(),
        Some("dispatching")
    );
    first.kill().await.unwrap();
    cli.finish(first, &["dispatch", "--wait"]).await;

    gmail.clear_faults();
    let out = cli.exec(&["dispatch", "--wait", "--json"]).await.json();
    assert_eq!(out["status"], "finished");
    let outcome = &out["outcomes"].as_array().unwrap()[0];
    assert_eq!(outcome["outcome"], "done", "{out}");
    assert_eq!(gmail.send_requests(&draft.id), 1);
    assert_eq!(cli.item(&draft.id).await["state"], "sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_dispatchers_started_together_send_each_of_ten_drafts_exactly_once() {
    let (cli, gmail) = gmail_cli().await;
    let drafts: Vec<_> = (1..=10)
        .map(|n| gmail.file_draft(&reply(n, &format!("Answer {n}")), None))
        .collect();
    cli.exec(&["sync"]).await.ok();
    for draft in &drafts {
        let id = cli.item_id(&draft.id).await;
        cli.show(&id).await;
        cli.exec(&["approve", &id, "--no-undo"]).await.ok();
    }

    let a = cli.spawn(&["dispatch", "--wait"]);
    let b = cli.spawn(&["dispatch", "--wait"]);
    let (a, b) = tokio::join!(
        cli.finish(a, &["dispatch", "--wait"]),
        cli.finish(b, &["dispatch", "--wait"])
    );
    let (a, b) = (a.ok(), b.ok());
    for draft in &drafts {
        assert_eq!(gmail.send_requests(&draft.id), 1, "draft {}", draft.id);
    }
    assert_eq!(gmail.sent_messages().len(), 10);
    let busy = [&a, &b]
        .iter()
        .filter(|o| {
            o.stdout
                .contains("another Countersign process is dispatching")
        })
        .count();
    let sent_lines: usize = [&a, &b]
        .iter()
        .map(|o| o.stdout.matches("done: sent").count())
        .sum();
    assert_eq!(sent_lines, 10, "{}\n{}", a.stdout, b.stdout);
    assert!(busy <= 1, "{}\n{}", a.stdout, b.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_dispatcher_says_another_process_is_dispatching_and_leaves_the_work_to_it() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();
    // The first dispatcher is mid-dispatch (its re-read held until the second has run),
    // holding the lock.
    let reads_before = gmail.request_count("drafts.get");
    let held = gmail.hold_next("drafts.get");
    let first = cli.spawn(&["dispatch", "--wait"]);
    eventually(
        Duration::from_secs(20),
        "the first dispatcher re-reads",
        || async { gmail.request_count("drafts.get") > reads_before },
    )
    .await;

    let second = cli.exec(&["dispatch", "--json"]).await.json();
    assert_eq!(second["status"], "busy", "{second}");
    assert_eq!(
        second["message"],
        "another Countersign process is dispatching these decisions."
    );
    assert_eq!(second["live"], 1);
    assert_eq!(gmail.send_requests(&draft.id), 0);

    held.release();
    let first = cli.finish(first, &["dispatch", "--wait"]).await.ok();
    assert!(first.stdout.contains("done: sent"), "{}", first.stdout);
    assert_eq!(gmail.send_requests(&draft.id), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispatch_wait_gives_up_after_its_timeout_while_gmail_is_offline_and_sends_later() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();
    gmail.set_online(false);

    let out = cli.exec(&["dispatch", "--wait", "--timeout", "2"]).await;
    assert_eq!(out.status.code(), Some(2), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("Gave up waiting after 2 s"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("offline"), "{}", out.stdout);
    assert_eq!(
        live_decision_state(&cli, &id).await.as_deref(),
        Some("queued")
    );

    gmail.set_online(true);
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&draft.id), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_gmail_draft_is_deleted_not_sent_and_its_reason_is_on_record() {
    let (cli, gmail) = gmail_cli().await;
    let draft = gmail.file_draft(&reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    cli.exec(&["settings", "set", "undo-window", "0"])
        .await
        .ok();

    let empty = cli.exec(&["reject", &id, "--reason", " "]).await;
    assert!(!empty.status.success());
    assert!(empty.stderr.contains("say why"), "{}", empty.stderr);

    cli.exec(&["reject", &id, "--reason", "Tone is off"])
        .await
        .ok();
    let out = cli.exec(&["dispatch", "--wait"]).await.ok();
    assert!(out.stdout.contains("done: rejected"), "{}", out.stdout);
    assert_eq!(gmail.send_requests(&draft.id), 0);
    assert!(gmail.drafts().iter().all(|d| d.id != draft.id));
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    assert_eq!(shown["state"], "rejected");
    assert_eq!(shown["decisions"][0]["reason"], "Tone is off");
}
