//! `countersign status` while an app follows a muster account whose event stream is broken by
//! something in front of muster: the account says "polling", and a new draft still arrives.

use std::sync::Arc;
use std::time::Duration;

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::live::MusterPolling;
use countersign_fakes::muster::{FakeMuster, FaultAction, MusterConfig};

use crate::support::{eventually, Cli};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_502_for_muster_s_stream_status_says_polling_and_drafts_still_arrive() {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    muster.create_plugin("gmail-relay", false).unwrap();
    let cli = Cli::new();
    let account = cli.add_muster(&muster).await;
    let account_id = account["id"].as_str().unwrap().to_string();
    muster.inject("GET", "/events", u32::MAX, FaultAction::Fail(502));

    // The app, in this process, on the same data directory.
    let data_dir = cli.data_dir();
    let store = countersign_core::Store::open(&data_dir).await.unwrap();
    let services = countersign_core::services::Services::with_token_store(
        &data_dir,
        countersign_gmail::TokenStore::file(&data_dir),
    );
    let polling = MusterPolling {
        visible: Duration::from_millis(400),
        hidden: Duration::from_millis(800),
        max_backoff: Duration::from_secs(2),
    };
    let _app = RunningApp::start(
        store.clone(),
        services,
        &data_dir,
        AppOptions {
            muster_polling: polling,
            ..AppOptions::default()
        },
        Arc::new(|_| {}),
    )
    .await
    .unwrap();

    let relayed = muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "ana@example.com",
            "Hi",
            "Hello",
        )
        .unwrap();
    let draft = muster.file_draft(&relayed.route_id, "Hello back").unwrap();
    eventually(
        polling.visible * 10,
        "the draft reaches the mirror",
        || async {
            store
                .find_item(&account_id, &draft)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;

    // The draft may come with the first sync, before the stream was even tried: the app says
    // polling once the stream has failed and the next poll ran.
    eventually(
        polling.visible * 10,
        "the app says it is polling",
        || async { store.sync_cursor(&account_id).await.unwrap().status_word() == "polling" },
    )
    .await;
    let status = cli.exec(&["status", "--json"]).await.json();
    let line = &status["accounts"].as_array().unwrap()[0];
    assert_eq!(line["status"], "polling", "{status}");
    assert_eq!(line["online"], true, "{status}");
    let text = cli.exec(&["status"]).await.ok();
    assert!(text.stdout.contains("(polling, "), "{}", text.stdout);
}
