//! Gmail sync benchmark: one full sync of 1,000 drafts against the fake Gmail enforcing the
//! per-user quota (15,000 units per minute, i.e. 250 units/s), with `Services` pacing itself at
//! 250 units/s; then a sync with no change.
//!
//! Last, a smaller full sync with a delay added to every answer of the fake, standing in for the
//! round trip to Google over the internet (the fake answers on loopback in well under a
//! millisecond, which hides what a sequential sync costs against the real service).
//!
//! `cargo bench -p countersign-core --bench gmail_sync` (plain timing, no harness). It prints
//! figures and asserts none of them. `GMAIL_SYNC_BENCH_DRAFTS` changes the number of drafts
//! (default 1,000); `GMAIL_SYNC_BENCH_LATENCY_MS` and `GMAIL_SYNC_BENCH_LATENCY_DRAFTS` the added
//! delay and the drafts of the last sync (default 30 ms and 200; a latency of 0 skips it).
//!
//! Every draft is a reply whose parent is in the inbox, as an agent's drafts usually are, so a
//! new draft costs `drafts.get` plus the parent lookup (`messages.list` + `messages.get`).
//! Unit costs are Google's (<https://developers.google.com/gmail/api/reference/quota>).

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use countersign_core::services::Services;
use countersign_core::sync::sync_gmail;
use countersign_core::Store;
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_gmail::TokenStore;
use support::{connect_fake_gmail, count};

/// Gmail's per-user quota, per minute and per second.
const QUOTA_PER_MINUTE: u32 = 15_000;
const QUOTA_PER_SECOND: f64 = QUOTA_PER_MINUTE as f64 / 60.0;

/// Quota units of the Gmail methods a sync calls; `None` for OAuth and tokeninfo calls,
/// which do not count against the Gmail quota.
fn units(method: &str) -> Option<u64> {
    match method {
        "drafts.get" | "drafts.list" => Some(5),
        "getProfile" => Some(1),
        "history.list" => Some(2),
        "threads.get" => Some(10),
        m if m.starts_with("messages.") => Some(5),
        _ => None,
    }
}

fn reply(n: usize) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Invoice {n}\r\nMessage-ID: <draft-{n}@agent.example>\r\n\
         In-Reply-To: <parent-{n}@example.com>\r\nReferences: <parent-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n\
         Hello Ana,\r\n\r\nThe invoice {n} is attached. Payment is due in 30 days.\r\n\r\n\
         Best regards,\r\nOwner\r\n"
    )
    .into_bytes()
}

fn parent(n: usize) -> Vec<u8> {
    format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Invoice {n}\r\n\
         Message-ID: <parent-{n}@example.com>\r\n\r\nPlease send the invoice.\r\n"
    )
    .into_bytes()
}

/// Requests per method from the fake's log.
fn by_method(gmail: &FakeGmail) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for request in gmail.requests() {
        *counts.entry(request.method).or_insert(0) += 1;
    }
    counts
}

/// The Gmail methods a sync calls, for adding latency to each.
const SYNC_METHODS: [&str; 7] = [
    "getProfile",
    "history.list",
    "drafts.list",
    "drafts.get",
    "threads.get",
    "messages.list",
    "messages.get",
];

fn main() {
    let drafts = count("GMAIL_SYNC_BENCH_DRAFTS", 1_000);
    let latency = Duration::from_millis(count("GMAIL_SYNC_BENCH_LATENCY_MS", 30) as u64);
    let latency_drafts = count("GMAIL_SYNC_BENCH_LATENCY_DRAFTS", 200);
    support::block_on(async {
        run(drafts, Duration::ZERO, true).await;
        if !latency.is_zero() {
            run(latency_drafts, latency, false).await;
        }
    });
}

/// One full sync of `drafts` drafts, each answer of the fake delayed by `latency`; then, if
/// `quiet`, a sync with no change.
async fn run(drafts: usize, latency: Duration, quiet: bool) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let store = Store::open(dir.path()).await.expect("the mirror");
    let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()))
        .with_units_per_second(QUOTA_PER_SECOND as u32);
    let gmail = FakeGmail::start(GmailConfig {
        quota_units_per_minute: QUOTA_PER_MINUTE,
        ..GmailConfig::default()
    })
    .await
    .expect("the fake Gmail");
    let account = connect_fake_gmail(&services, &store, &gmail).await;
    for n in 0..drafts {
        // As in Gmail, the reply draft is on its parent's thread.
        let (_, thread) = gmail.add_inbox_message(&parent(n), None);
        gmail.file_draft(&reply(n), Some(&thread));
    }
    let client = services.gmail(&account).await.expect("the sync client");
    // Let the fake's quota bucket (one second of units) refill after connecting, so the sync
    // starts from the same state as any sync after an idle moment.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    gmail.clear_requests();

    if !latency.is_zero() {
        for method in SYNC_METHODS {
            gmail.delay(method, latency, None);
        }
    }
    println!(
        "gmail_sync: full sync of {drafts} drafts (replies with their parents in the inbox), \
         {} ms added to every answer",
        latency.as_millis()
    );
    println!(
        "  quota: fake Gmail enforces {QUOTA_PER_MINUTE} units/min ({QUOTA_PER_SECOND:.0} units/s); \
         client paces at {QUOTA_PER_SECOND:.0} units/s"
    );
    let start = Instant::now();
    let report = sync_gmail(&store, &account, &client)
        .await
        .expect("the full sync");
    let elapsed = start.elapsed();
    let counts = by_method(&gmail);

    // What a sync without any refusal would have asked for: one page of drafts.list per 500
    // drafts (plus none, since the last page has no nextPageToken), one drafts.get per draft,
    // one threads.get per thread and one messages.get (raw) per parent, one getProfile. Anything
    // logged above that was answered 429 and retried (the fake injects no other failure here).
    let pages = drafts.div_ceil(500).max(1) as u64;
    let expected: BTreeMap<&str, u64> = [
        ("getProfile", 1),
        ("drafts.list", pages),
        ("drafts.get", report.fetched as u64),
        ("threads.get", report.new_items as u64),
        ("messages.get", report.new_items as u64),
    ]
    .into_iter()
    .collect();

    println!(
        "  report: full={} fetched={} new_items={}",
        report.full, report.fetched, report.new_items
    );
    println!("  total time: {:.2} s", elapsed.as_secs_f64());
    println!("  requests by method (logged / answered without 429):");
    let mut logged_total = 0;
    let mut refused_total = 0;
    let mut units_spent = 0;
    for (method, &logged) in &counts {
        let answered = expected.get(method.as_str()).copied().unwrap_or(logged);
        let refused = logged.saturating_sub(answered);
        logged_total += logged;
        refused_total += refused;
        if let Some(cost) = units(method) {
            units_spent += answered * cost;
        }
        println!("    {method:<14} {logged:>6} / {answered:>6}");
    }
    println!("  requests: {logged_total} logged, {refused_total} answered 429 (logged − answered)");
    let achieved = units_spent as f64 / elapsed.as_secs_f64();
    println!("  units spent (answered requests): {units_spent}");
    println!(
        "  units per new draft: {:.1} (drafts.get 5 + threads.get 10 + the parent's raw 5, plus \
         its share of drafts.list and getProfile)",
        units_spent as f64 / report.new_items.max(1) as f64
    );
    println!(
        "  achieved: {achieved:.1} units/s = {:.3} of the quota (target ≥ 0.9)",
        achieved / QUOTA_PER_SECOND
    );

    if !quiet {
        store.close().await;
        return;
    }
    gmail.clear_requests();
    let start = Instant::now();
    let unchanged = sync_gmail(&store, &account, &client)
        .await
        .expect("the quiet sync");
    let elapsed = start.elapsed();
    let requests = gmail.requests();
    let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
    println!(
        "gmail_sync: sync with no change: {} request(s) {methods:?} in {:.1} ms (target 1); \
         fetched={}",
        requests.len(),
        elapsed.as_secs_f64() * 1000.0,
        unchanged.fetched
    );
    store.close().await;
}
