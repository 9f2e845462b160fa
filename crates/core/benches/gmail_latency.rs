//! New-draft latency benchmark: how long after an agent saves a Gmail draft it is in the
//! mirror (and so in the queue), with the running app's real polling cadence — every 5 s while
//! the window is visible, every 60 s while it is hidden — and the Gmail quota units that
//! cadence spends per hour.
//!
//! `cargo bench -p countersign-core --bench gmail_latency` (plain timing, no harness; the
//! figures are set by the cadence, so `cargo test -p countersign-core --bench gmail_latency`,
//! a debug build, measures the same). It prints figures and asserts none of them.
//! `GMAIL_LATENCY_BENCH_VISIBLE` and `GMAIL_LATENCY_BENCH_HIDDEN` set the drafts filed in each
//! state (default 20 and 5: a hidden sample takes up to a minute); `GMAIL_LATENCY_BENCH_RTT_MS`
//! adds a delay to every Gmail answer of the fake, standing in for the round trip to Google
//! (default 30 ms).
//!
//! Each draft is filed at a random moment of the polling cycle (a uniform wait of up to one
//! period after the previous one appeared), as an agent's saves are unrelated to the app's
//! clock. Units are Google's (<https://developers.google.com/gmail/api/reference/quota>):
//! history.list 2, drafts.list 5, drafts.get 5, messages.list 5, messages.get 5, getProfile 1.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::live::GmailCadence;
use countersign_core::services::Services;
use countersign_core::Store;
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_gmail::TokenStore;
use rand::Rng;
use support::{connect_fake_gmail, count};

/// The Gmail methods a poll may call, for adding the round trip to each.
const METHODS: [&str; 6] = [
    "getProfile",
    "history.list",
    "drafts.list",
    "drafts.get",
    "messages.list",
    "messages.get",
];

fn units(method: &str) -> u64 {
    match method {
        "history.list" => 2,
        "getProfile" => 1,
        "drafts.list" | "drafts.get" => 5,
        m if m.starts_with("messages.") => 5,
        _ => 0,
    }
}

fn reply(n: usize) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Invoice {n}\r\nMessage-ID: <latency-{n}@agent.example>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nThe invoice {n} is attached.\r\n"
    )
    .into_bytes()
}

/// The `q`-quantile of sorted `samples` (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() {
    let visible = count("GMAIL_LATENCY_BENCH_VISIBLE", 20);
    let hidden = count("GMAIL_LATENCY_BENCH_HIDDEN", 5);
    let rtt = Duration::from_millis(count("GMAIL_LATENCY_BENCH_RTT_MS", 30) as u64);
    support::block_on(async {
        let cadence = GmailCadence::default();
        println!(
            "gmail_latency: draft filed at the fake -> in the mirror; cadence {} s visible, {} s \
             hidden; {} ms added to every Gmail answer",
            cadence.visible.as_secs(),
            cadence.hidden.as_secs(),
            rtt.as_millis()
        );
        run("visible", true, visible, rtt, cadence).await;
        run("hidden", false, hidden, rtt, cadence).await;
    });
}

async fn run(
    label: &str,
    window_visible: bool,
    drafts: usize,
    rtt: Duration,
    cadence: GmailCadence,
) {
    if drafts == 0 {
        return;
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = Store::open(dir.path()).await.expect("the mirror");
    let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()));
    let gmail = FakeGmail::start(GmailConfig::default())
        .await
        .expect("the fake Gmail");
    let account = connect_fake_gmail(&services, &store, &gmail).await;
    for method in METHODS {
        gmail.delay(method, rtt, None);
    }
    let app = RunningApp::start(
        store.clone(),
        services,
        dir.path(),
        AppOptions {
            gmail_cadence: cadence,
            ..AppOptions::default()
        },
        Arc::new(|_| {}),
    )
    .await
    .expect("the running app");
    app.set_window_visible(window_visible);
    // The reconciliation at start, then count from a quiet mailbox.
    while store
        .sync_cursor(&account.id)
        .await
        .expect("the cursor")
        .last_listed_at
        .is_none()
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gmail.clear_requests();
    let period = cadence.every(window_visible);
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(drafts);
    for n in 0..drafts {
        let wait = rand::thread_rng().gen_range(Duration::ZERO..period);
        tokio::time::sleep(wait).await;
        let filed_at = Instant::now();
        let filed = gmail.file_draft(&reply(n), None);
        loop {
            if store
                .find_item(&account.id, &filed.id)
                .await
                .expect("the mirror answers")
                .is_some()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        latencies.push(filed_at.elapsed());
    }
    let elapsed = started.elapsed();
    app.stop();
    let requests = gmail.requests();
    let spent: u64 = requests.iter().map(|r| units(&r.method)).sum();
    let checks = requests
        .iter()
        .filter(|r| r.method == "history.list")
        .count();
    let listings = requests
        .iter()
        .filter(|r| r.method == "drafts.list")
        .count();
    latencies.sort();
    let per_hour = spent as f64 * 3600.0 / elapsed.as_secs_f64();
    println!(
        "  window {label}: {drafts} drafts over {:.0} s: median {:.2} s, p95 {:.2} s, max {:.2} s",
        elapsed.as_secs_f64(),
        quantile(&latencies, 0.5).as_secs_f64(),
        quantile(&latencies, 0.95).as_secs_f64(),
        latencies.last().expect("samples").as_secs_f64()
    );
    println!(
        "    {checks} history.list checks, {listings} drafts.list listings, {} requests, {spent} \
         units: {per_hour:.0} units/hour ({:.3} % of 15,000 units/min)",
        requests.len(),
        per_hour / (15_000.0 * 60.0) * 100.0
    );
    // Idle cost: no new drafts, only the checks and the 5-minute listings.
    let idle_per_hour = 3600.0 / period.as_secs_f64() * 2.0 + 12.0 * 5.0;
    println!(
        "    with no new drafts the cadence alone costs {idle_per_hour:.0} units/hour \
         ({} checks of 2 units + 12 listings of 5)",
        3600 / period.as_secs()
    );
    store.close().await;
}
