//! A real mirror in a temp dir, the fakes on 127.0.0.1, and accounts connected the way a user
//! connects them (Gmail through the whole OAuth flow, muster with its password).

use std::time::Duration;

use countersign_core::decide::Confirmation;
use countersign_core::outbox::{DispatchConfig, Dispatcher};
use countersign_core::services::{GmailConnect, Services};
use countersign_core::store::{Account, ShownPart};
use countersign_core::sync::{sync_gmail, sync_muster};
use countersign_core::Store;
use countersign_core::{ItemFilter, ItemSummary};
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_gmail::{RetryPolicy, TokenStore};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub services: Services,
    pub gmail: FakeGmail,
    pub muster: FakeMuster,
}

pub fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 8,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(200),
    }
}

pub fn dispatch_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 2,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
    }
}

pub fn quick_dispatch() -> DispatchConfig {
    DispatchConfig {
        retry_base: Duration::from_millis(50),
        retry_cap: Duration::from_millis(200),
        reconcile_attempts: 5,
        muster_lookup_spacing: Duration::from_millis(200),
    }
}

impl Env {
    pub async fn new() -> Env {
        Env::with_gmail(GmailConfig::default()).await
    }

    pub async fn with_gmail(config: GmailConfig) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()))
            .with_retry(quick_retries(), dispatch_retries())
            .with_units_per_second(100_000);
        let gmail = FakeGmail::start(config).await.unwrap();
        let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
        Env {
            dir,
            store,
            services,
            gmail,
            muster,
        }
    }

    pub async fn connect_gmail(&self) -> Account {
        self.services
            .connect_gmail(
                &self.store,
                GmailConnect::auto_consent(
                    self.gmail.client_secret_json().to_string(),
                    self.gmail.api_base(),
                    self.gmail.tokeninfo_url(),
                ),
            )
            .await
            .expect("connect the fake Gmail")
    }

    pub async fn connect_muster(&self) -> Account {
        self.services
            .connect_muster(&self.store, &self.muster.url(), self.muster.password())
            .await
            .expect("connect the fake muster")
    }

    pub async fn dispatcher(&self) -> Dispatcher {
        Dispatcher::acquire(
            self.store.clone(),
            self.services.clone(),
            self.dir.path(),
            quick_dispatch(),
        )
        .await
        .unwrap()
        .expect("no other dispatcher")
    }
}

/// A relay plugin (`checks`: whether it checks replies first), a message from Ana relayed
/// through it and an agent's reply to it, in the fake muster; the message id and the draft id.
pub fn relayed_reply(env: &Env, checks: bool) -> (String, String) {
    env.muster.create_plugin("gmail-relay", checks).unwrap();
    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Hi",
        )
        .unwrap();
    let draft = env
        .muster
        .file_draft(&relayed.route_id, "Here it is.")
        .unwrap();
    (relayed.message_id, draft)
}

/// A muster account with [`relayed_reply`] synced; the account and the draft id.
pub async fn muster_reply(env: &Env, checks: bool) -> (Account, String) {
    let account = env.connect_muster().await;
    let (_, draft) = relayed_reply(env, checks);
    resync(env, &account).await;
    (account, draft)
}

/// A reply as an agent files it.
pub fn reply(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Invoice {n}\r\nMessage-ID: <draft-{n}-{}@agent.example>\r\n\
         In-Reply-To: <parent-{n}@example.com>\r\nReferences: <parent-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n",
        body.len()
    )
    .into_bytes()
}

/// A reply without a Message-ID (some agents file those).
pub fn reply_without_message_id(body: &str) -> Vec<u8> {
    format!(
        "From: owner@example.com\r\nTo: ana@example.com\r\nSubject: Hello\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// The message a reply answers, in the inbox.
pub fn parent(n: usize) -> Vec<u8> {
    format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Invoice {n}\r\n\
         Message-ID: <parent-{n}@example.com>\r\n\r\nPlease send the invoice.\r\n"
    )
    .into_bytes()
}

/// Wait until `check` holds, or fail after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: not within {limit:?}");
}

/// Approve the current version of `item_id` with no undo window, as the owner would after
/// reading it.
pub async fn approve_now(env: &Env, item_id: i64) -> countersign_core::store::Decision {
    let shown = shown(env, item_id).await;
    countersign_core::decide::approve(
        &env.store,
        &shown,
        countersign_core::decide::UndoWindow::None,
        "owner via test",
        Confirmation::None,
    )
    .await
    .unwrap()
}

/// Run dispatch passes until `done` holds. A pass carries out only what is due, so this waits
/// out whatever backoff the dispatcher chose; the limit only stops a hang.
pub async fn dispatch_until<F, Fut>(dispatcher: &Dispatcher, what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let limit = Duration::from_secs(30);
    let start = std::time::Instant::now();
    loop {
        dispatcher.run_once().await.unwrap();
        if done().await {
            return;
        }
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sync a Gmail account of the env once.
pub async fn sync(env: &Env, account: &Account) {
    let client = env.services.gmail(account).await.unwrap();
    sync_gmail(&env.store, account, &client).await.unwrap();
}

/// Sync a muster account of the env once.
pub async fn resync(env: &Env, account: &Account) {
    let client = env.services.muster(account).await.unwrap();
    sync_muster(&env.store, account, &client).await.unwrap();
}

/// The mirrored item of a draft (Gmail draft id or muster draft id).
pub async fn item_for(env: &Env, draft_id: &str) -> ItemSummary {
    env.store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .into_iter()
        .find(|i| i.external_id == draft_id)
        .unwrap_or_else(|| panic!("draft {draft_id} is not mirrored"))
}

/// Who decides in these tests.
pub const OWNER: &str = "owner via test";

/// What the owner sees of `item_id` now: its current version and digest, as the review detail
/// shows them (decisions bind to this), displayed to [`OWNER`] in both its renderings.
pub async fn shown(env: &Env, item_id: i64) -> countersign_core::decide::Shown {
    let shown = countersign_core::review::review_detail(&env.store, item_id, false)
        .await
        .unwrap()
        .shown;
    displayed(env, &shown).await;
    shown
}

/// Record `shown` as displayed to [`OWNER`], the HTML and the plain text, as the app records
/// the frame it rendered and the text the owner switched to.
pub async fn displayed(env: &Env, shown: &countersign_core::decide::Shown) {
    for part in [ShownPart::Html, ShownPart::Text] {
        env.store.record_view(shown, OWNER, part).await.unwrap();
    }
}

/// Save `wanted` as the settings, changing only the settings that differ from the stored ones
/// (each setting is its own write: a test sets what it needs, as the Settings page does).
pub async fn save_whole_settings(
    store: &Store,
    wanted: &countersign_core::store::Settings,
    actor: &str,
) {
    let stored = store.settings().await.unwrap();
    let change = countersign_core::store::SettingsChange::between(&stored, wanted);
    store.update_settings(&change, actor).await.unwrap();
}

/// Waits until the app's dispatch loop has finished `more` passes after the call: the first of
/// them may have begun before, every later one began after, so with `more` ≥ 2 the loop has
/// looked at least once at what the test did before calling.
pub async fn passes_after(app: &countersign_core::app::RunningApp, more: u64) {
    let mut passes = app.dispatch_passes();
    let target = *passes.borrow() + more;
    tokio::time::timeout(Duration::from_secs(20), passes.wait_for(|n| *n >= target))
        .await
        .expect("the dispatch loop did not pass within 20 s")
        .expect("the dispatch loop ended");
}

/// Stops the app and waits until its dispatch loop has ended: nothing it dispatches can start
/// after this, so a count taken now includes any late second send.
pub async fn stop_and_wait(app: &countersign_core::app::RunningApp) {
    let mut passes = app.dispatch_passes();
    app.stop();
    tokio::time::timeout(Duration::from_secs(20), async {
        while passes.changed().await.is_ok() {}
    })
    .await
    .expect("the dispatch loop did not end within 20 s");
}

/// Arm a rule approving replies whose recipients are all within example.com, with drafts
/// judged at once and an undo window of `undo_window_secs` (a window, however short, puts the
/// decision and its send in two passes: the decision is announced while it is queued).
pub async fn arm_a_rule_for_example_com(env: &Env, undo_window_secs: u32) {
    use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
    use countersign_core::store::RuleMode;

    let mut settings = env.store.settings().await.unwrap();
    settings.rule_settle_secs = 0;
    settings.undo_window_secs = undo_window_secs;
    save_whole_settings(&env.store, &settings, "owner via test").await;
    let rule = env
        .store
        .add_rule(
            &RuleDefinition {
                name: "Replies to example.com".into(),
                scope: Default::default(),
                conditions: Conditions {
                    recipients_within: vec!["example.com".into()],
                    ..Conditions::default()
                },
                action: RuleAction::Approve,
                daily_cap: None,
            },
            "owner via test",
        )
        .await
        .unwrap();
    env.store
        .set_rule_mode(rule.id, RuleMode::Armed, "owner via test")
        .await
        .unwrap();
}
