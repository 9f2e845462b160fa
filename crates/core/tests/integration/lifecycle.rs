//! Core owns following an account: a running app follows what it connects, and removing an
//! account stops its live task (and waits for it) before anything is deleted, so no request
//! of the removed account reaches the service afterwards.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::live::GmailCadence;
use countersign_core::services::GmailConnect;
use countersign_core::ItemFilter;
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};

use crate::support::*;

#[tokio::test]
async fn removing_an_account_stops_its_sync_no_request_reaches_the_fake_after_removal() {
    let env = Env::new().await;
    let removed = env.connect_gmail().await;
    env.gmail.file_draft(&reply(1, "It is 40 EUR."), None);
    // A second account on its own fake: its polls show time passing for both loops.
    let witness_fake = FakeGmail::start(GmailConfig {
        email: "witness@example.com".into(),
        ..GmailConfig::default()
    })
    .await
    .unwrap();
    // The witness's own draft must outlive the removal (a removal wiping every item fails).
    witness_fake.file_draft(&reply(3, "The witness's own."), None);
    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            gmail_cadence: GmailCadence {
                visible: Duration::from_millis(20),
                hidden: Duration::from_millis(20),
            },
            ..AppOptions::default()
        },
        Arc::new(|_| {}),
    )
    .await
    .unwrap();
    let witness = app
        .connect_gmail(GmailConnect::auto_consent(
            witness_fake.client_secret_json().to_string(),
            witness_fake.api_base(),
            witness_fake.tokeninfo_url(),
        ))
        .await
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "both drafts are mirrored",
        || async {
            env.store
                .list_items(&ItemFilter::default())
                .await
                .unwrap()
                .len()
                == 2
        },
    )
    .await;

    // Each check now waits on Google: the removal lands while one is on the wire, and a new
    // draft makes that check go on to fetch it (were the loop left running).
    env.gmail
        .delay("history.list", Duration::from_millis(300), None);
    env.gmail.file_draft(&reply(2, "A second one."), None);
    let checks = env.gmail.request_count("history.list");
    eventually(
        Duration::from_secs(20),
        "a check is on the wire",
        || async { env.gmail.request_count("history.list") > checks },
    )
    .await;
    app.remove_account(&removed.id).await.unwrap();
    let removed_at = Utc::now();

    // The witness is checked many times over: a loop left running would have called too.
    let witness_seen = witness_fake.requests().len();
    eventually(
        Duration::from_secs(20),
        "the witness is polled on",
        || async { witness_fake.requests().len() >= witness_seen + 10 },
    )
    .await;
    let late: Vec<_> = env
        .gmail
        .requests()
        .into_iter()
        .filter(|r| r.at > removed_at)
        .collect();
    assert!(late.is_empty(), "requests after the removal: {late:?}");
    let gone = env.store.get_account(&removed.id).await.unwrap_err();
    assert!(
        matches!(
            &gone,
            countersign_core::Error::NotFound {
                what: "account",
                ..
            }
        ),
        "{gone:?}"
    );
    let items = env.store.list_items(&ItemFilter::default()).await.unwrap();
    assert_eq!(items.len(), 1, "the witness's draft is left: {items:?}");
    assert!(
        items.iter().all(|i| i.account_id == witness.id),
        "nothing of the removed account is left: {items:?}"
    );
    app.stop();
}

#[tokio::test]
async fn removing_a_muster_account_closes_its_event_stream_and_nothing_reaches_muster_after() {
    let env = Env::new().await;
    // A second instance on its own fake: its drafts show the app following on.
    let witness_fake = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions::default(),
        Arc::new(|_| {}),
    )
    .await
    .unwrap();
    let removed = app
        .connect_muster(&env.muster.url(), env.muster.password())
        .await
        .unwrap();
    let witness = app
        .connect_muster(&witness_fake.url(), witness_fake.password())
        .await
        .unwrap();
    let (_, draft) = relayed_reply(&env, false);
    eventually(
        Duration::from_secs(20),
        "the muster draft is mirrored",
        || async {
            env.store
                .find_item(&removed.id, &draft)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    assert_eq!(env.muster.event_streams(), 1);

    app.remove_account(&removed.id).await.unwrap();
    // The fake notices a closed stream when it next writes to it: every relay is a change
    // muster pushes, and one a follower would answer by reading the drafts again.
    eventually(
        Duration::from_secs(20),
        "the removed account's event stream is closed",
        || async {
            env.muster
                .relay_message("gmail-relay", "inbox-chat", "bo@example.com", "Hi", "")
                .unwrap();
            env.muster.event_streams() == 0
        },
    )
    .await;
    let seen = env.muster.requests().len();
    let relayed = env
        .muster
        .relay_message("gmail-relay", "inbox-chat", "cy@example.com", "Hello", "Hi")
        .unwrap();
    env.muster
        .file_draft(&relayed.route_id, "Hello Cy")
        .unwrap();
    // The witness is followed on: its new draft reaches the mirror.
    witness_fake.create_plugin("gmail-relay", false).unwrap();
    let witness_message = witness_fake
        .relay_message("gmail-relay", "inbox-chat", "di@example.com", "Hey", "Hi")
        .unwrap();
    let witness_draft = witness_fake
        .file_draft(&witness_message.route_id, "Hello Di")
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the witness's draft is mirrored",
        || async {
            env.store
                .find_item(&witness.id, &witness_draft)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    let late = &env.muster.requests()[seen..];
    assert!(late.is_empty(), "requests after the removal: {late:?}");
    assert_eq!(env.muster.event_streams(), 0);
    let gone = env.store.get_account(&removed.id).await.unwrap_err();
    assert!(
        matches!(
            &gone,
            countersign_core::Error::NotFound {
                what: "account",
                ..
            }
        ),
        "{gone:?}"
    );
    app.stop();
}
