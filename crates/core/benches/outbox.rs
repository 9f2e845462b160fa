//! Outbox benchmark: what a decision costs to make durable, and how fast the dispatcher
//! carries decisions out against the fakes.
//!
//! 1. Durable enqueue: `decide::approve` on a real mirror file (WAL, `synchronous=FULL`, so
//!    every decision is fsynced with its audit row before the call returns), 1,000 times.
//! 2. Dispatch throughput without undo window (`UndoWindow::None`, one `Dispatcher::run_once`):
//!    200 Gmail approvals with the quota out of the way (what our side costs), a few Gmail
//!    approvals under the real quota (250 units/s: a send is 100 units), and 200 muster
//!    approvals.
//!
//! `cargo bench -p countersign-core --bench outbox` (plain timing, no harness). It prints figures
//! and asserts none of them. `OUTBOX_BENCH_DECISIONS`, `OUTBOX_BENCH_DISPATCH` and
//! `OUTBOX_BENCH_QUOTA_SENDS` change the counts (defaults 1,000, 200 and 10).

mod support;

use std::time::{Duration, Instant};

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::outbox::{DispatchConfig, Dispatcher};
use countersign_core::services::Services;
use countersign_core::store::{Account, ShownPart};
use countersign_core::sync::{sync_gmail, sync_muster};
use countersign_core::OutcomeKind;
use countersign_core::{ItemFilter, ItemState, Store};
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_gmail::TokenStore;
use support::{connect_fake_gmail, count};

const ACTOR: &str = "owner via bench";

/// A mirror in a temp dir with its services; the fakes are started by each phase.
struct Env {
    dir: tempfile::TempDir,
    store: Store,
    services: Services,
}

impl Env {
    async fn new(units_per_second: u32) -> Env {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = Store::open(dir.path()).await.expect("the mirror");
        let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()))
            .with_units_per_second(units_per_second);
        Env {
            dir,
            store,
            services,
        }
    }

    async fn connect_gmail(&self, gmail: &FakeGmail) -> Account {
        connect_fake_gmail(&self.services, &self.store, gmail).await
    }

    /// Gmail drafts filed and mirrored; returns the ids of their items.
    async fn gmail_items(&self, gmail: &FakeGmail, count: usize) -> Vec<i64> {
        let account = self.connect_gmail(gmail).await;
        for n in 0..count {
            gmail.file_draft(&reply(n), None);
        }
        let client = self.services.gmail(&account).await.expect("a Gmail client");
        sync_gmail(&self.store, &account, &client)
            .await
            .expect("the Gmail sync");
        self.pending_ids().await
    }

    async fn pending_ids(&self) -> Vec<i64> {
        self.store
            .list_items(&ItemFilter::default())
            .await
            .expect("the items")
            .into_iter()
            .filter(|i| i.state == ItemState::Pending)
            .map(|i| i.id)
            .collect()
    }

    async fn dispatcher(&self) -> Dispatcher {
        Dispatcher::acquire(
            self.store.clone(),
            self.services.clone(),
            self.dir.path(),
            DispatchConfig::default(),
        )
        .await
        .expect("the dispatch lock")
        .expect("no other dispatcher")
    }

    /// The version on screen, recorded as displayed to the owner, as the app records its frame
    /// before Approve can bind.
    async fn displayed(&self, id: i64) -> decide::Shown {
        let shown = decide::current(&self.store, id).await.expect("the item");
        self.store
            .record_view(&shown, ACTOR, ShownPart::Html)
            .await
            .expect("the view");
        shown
    }

    async fn approve_all(&self, items: &[i64]) {
        for &id in items {
            let shown = self.displayed(id).await;
            decide::approve(
                &self.store,
                &shown,
                UndoWindow::None,
                ACTOR,
                Confirmation::None,
            )
            .await
            .expect("the approval");
        }
    }
}

fn reply(n: usize) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Invoice {n}\r\nMessage-ID: <bench-{n}@agent.example>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n\
         Hello Ana,\r\n\r\nThe invoice {n} is attached.\r\n\r\nBest regards,\r\nOwner\r\n"
    )
    .into_bytes()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// A fake Gmail whose quota is out of the way (the client's limiter is too).
async fn unthrottled_gmail() -> FakeGmail {
    FakeGmail::start(GmailConfig {
        quota_units_per_minute: 1_000_000_000,
        ..GmailConfig::default()
    })
    .await
    .expect("the fake Gmail")
}

async fn enqueue(decisions: usize) {
    let env = Env::new(1_000_000).await;
    let gmail = unthrottled_gmail().await;
    let items = env.gmail_items(&gmail, decisions).await;
    let mut samples = Vec::with_capacity(items.len());
    for &id in &items {
        // Displaying is not part of the enqueue measured here.
        let shown = env.displayed(id).await;
        let start = Instant::now();
        decide::approve(
            &env.store,
            &shown,
            UndoWindow::None,
            ACTOR,
            Confirmation::None,
        )
        .await
        .expect("the approval");
        samples.push(start.elapsed());
    }
    samples.sort();
    let total: Duration = samples.iter().sum();
    println!(
        "outbox: durable enqueue (decide::approve, WAL + synchronous=FULL, {} decisions)",
        samples.len()
    );
    println!(
        "  median {}  p90 {}  p99 {}  max {}  ({:.0} decisions/s one at a time)",
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.9)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().expect("samples")),
        samples.len() as f64 / total.as_secs_f64()
    );
}

/// Approve `count` Gmail drafts and time the one pass that sends them.
async fn dispatch_gmail(count: usize, quota: Option<u32>) {
    let (env, gmail) = match quota {
        None => (Env::new(1_000_000).await, unthrottled_gmail().await),
        Some(per_second) => (
            Env::new(per_second).await,
            FakeGmail::start(GmailConfig {
                quota_units_per_minute: per_second * 60,
                ..GmailConfig::default()
            })
            .await
            .expect("the fake Gmail"),
        ),
    };
    let items = env.gmail_items(&gmail, count).await;
    env.approve_all(&items).await;
    let dispatcher = env.dispatcher().await;
    if quota.is_some() {
        // Start from a full quota bucket, as after any idle moment.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    let start = Instant::now();
    let report = dispatcher.run_once().await.expect("the dispatch pass");
    let elapsed = start.elapsed();
    let sent = gmail.sent_messages().len();
    let label = match quota {
        None => "quota out of the way".to_string(),
        Some(per_second) => format!("fake and client at {per_second} units/s"),
    };
    println!(
        "outbox: Gmail dispatch ({label}): {} done, {} retrying, {} uncertain, {sent} sent, in \
         {:.2} s = {:.1} decisions/s",
        report.ended(OutcomeKind::Done).len(),
        report.ended(OutcomeKind::Retrying).len(),
        report.ended(OutcomeKind::Uncertain).len(),
        elapsed.as_secs_f64(),
        report.ended(OutcomeKind::Done).len() as f64 / elapsed.as_secs_f64()
    );
}

async fn dispatch_muster(count: usize) {
    let env = Env::new(1_000_000).await;
    let muster = FakeMuster::start(MusterConfig::default())
        .await
        .expect("the fake muster");
    let account = env
        .services
        .connect_muster(&env.store, &muster.url(), muster.password())
        .await
        .expect("connect the fake muster");
    muster
        .create_plugin("gmail-relay", false)
        .expect("a plugin");
    for n in 0..count {
        let relayed = muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                "Ana <ana@example.com>",
                &format!("Invoice {n}"),
                "Please send the invoice.",
            )
            .expect("a relayed message");
        muster
            .file_draft(&relayed.route_id, "Here is the invoice.")
            .expect("a draft");
    }
    let client = env
        .services
        .muster(&account)
        .await
        .expect("a muster client");
    sync_muster(&env.store, &account, &client)
        .await
        .expect("the muster sync");
    let items = env.pending_ids().await;
    env.approve_all(&items).await;
    let dispatcher = env.dispatcher().await;
    let start = Instant::now();
    let report = dispatcher.run_once().await.expect("the dispatch pass");
    let elapsed = start.elapsed();
    println!(
        "outbox: muster dispatch: {} of {} done, {} retrying, {} uncertain, in {:.2} s = {:.1} \
         decisions/s",
        report.ended(OutcomeKind::Done).len(),
        items.len(),
        report.ended(OutcomeKind::Retrying).len(),
        report.ended(OutcomeKind::Uncertain).len(),
        elapsed.as_secs_f64(),
        report.ended(OutcomeKind::Done).len() as f64 / elapsed.as_secs_f64()
    );
}

fn main() {
    let decisions = count("OUTBOX_BENCH_DECISIONS", 1_000);
    let dispatch = count("OUTBOX_BENCH_DISPATCH", 200);
    let quota_sends = count("OUTBOX_BENCH_QUOTA_SENDS", 10);
    support::block_on(async {
        enqueue(decisions).await;
        dispatch_gmail(dispatch, None).await;
        if quota_sends > 0 {
            dispatch_gmail(quota_sends, Some(250)).await;
        }
        dispatch_muster(dispatch).await;
    });
}
