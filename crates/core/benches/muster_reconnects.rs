//! muster behind a reverse proxy that closes the silent event stream: what the closes cost.
//!
//! A proxy's read timeout (nginx's `proxy_read_timeout`, 60 s by default) closes muster's
//! stream whenever nothing happened for that long. The fake muster plays the proxy; Countersign
//! follows the account as the app does (`follow_muster`) for the whole run, with 20 relayed
//! messages mirrored. It prints how many requests reached muster, how many re-syncs (drafts
//! list reads) and route reads there were per close, and how often the owner was told the
//! account is offline or polling. It asserts none of the figures.
//!
//! `cargo bench -p countersign-core --bench muster_reconnects`: 5 minutes with a close every
//! 60 s. `MUSTER_BENCH_SECS` and `MUSTER_BENCH_CLOSE_EVERY_SECS` (fractions allowed) make it
//! shorter, e.g. `MUSTER_BENCH_SECS=6 MUSTER_BENCH_CLOSE_EVERY_SECS=1`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_core::live::{follow_muster, LiveChange, MusterPace};
use countersign_core::services::Services;
use countersign_core::store::Store;
use countersign_core::sync::sync_muster;
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_gmail::TokenStore;

/// The seconds in the environment variable `name`, or `default`.
fn seconds(name: &str, default: f64) -> Duration {
    let secs = std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

#[tokio::main]
async fn main() {
    let total = seconds("MUSTER_BENCH_SECS", 300.0);
    let close_every = seconds("MUSTER_BENCH_CLOSE_EVERY_SECS", 60.0);
    let messages = 20;

    let dir = tempfile::tempdir().expect("a temp dir");
    let store = Store::open(dir.path()).await.expect("the mirror");
    let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()));
    let muster = FakeMuster::start(MusterConfig::default())
        .await
        .expect("the fake muster");
    let account = services
        .connect_muster(&store, &muster.url(), muster.password())
        .await
        .expect("the muster account");
    muster
        .create_plugin("gmail-relay", false)
        .expect("a plugin");
    for n in 0..messages {
        let relayed = muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                &format!("sender{n}@example.com"),
                "Hi",
                "Hello",
            )
            .expect("a relayed message");
        muster
            .file_draft(&relayed.route_id, "Hello back")
            .expect("a draft");
    }
    let client = services.muster(&account).await.expect("a muster client");
    sync_muster(&store, &account, &client)
        .await
        .expect("the first sync");

    muster.set_proxy_read_timeout(Some(close_every));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    muster.clear_requests();
    let follower = tokio::spawn(follow_muster(
        store.clone(),
        account.clone(),
        client,
        MusterPace::default(),
        tokio::sync::watch::channel(true).1,
        Arc::new(move |change: LiveChange| sink.lock().expect("the log").push(change)),
        stop_rx,
    ));
    println!(
        "muster behind a proxy closing the silent stream every {close_every:?}, for {total:?}, \
         {messages} messages mirrored"
    );
    tokio::time::sleep(total).await;
    stop_tx.send_replace(true);
    let _ = follower.await;

    let streams = muster.count_requests("GET", "/events");
    let closes = streams.saturating_sub(1);
    let all = muster.requests().len();
    let drafts = muster.count_requests("GET", "/api/plugin/drafts");
    let routes = muster.count_requests("GET", "/api/plugin/routes");
    let seen = seen.lock().expect("the log");
    let offline = seen
        .iter()
        .filter(|c| matches!(c, LiveChange::Reachability { online: false, .. }))
        .count();
    let polling = seen
        .iter()
        .filter(|c| {
            matches!(c, LiveChange::Reachability { detail: Some(d), .. } if d.starts_with("polling"))
        })
        .count();
    println!("closes by the proxy:        {closes}");
    println!("requests to muster:         {all}");
    println!("re-syncs (drafts listed):   {drafts}");
    println!("route reads:                {routes}");
    println!(
        "requests per close:         {:.1}",
        all as f64 / closes.max(1) as f64
    );
    println!("outages told (offline):     {offline}");
    println!("status changes to polling:  {polling}");
}
