//! A data directory prepared the way a user's would be, for one desktop test: the fakes
//! running in the test process on 127.0.0.1, accounts connected through `countersign-core`
//! exactly as the app connects them (Gmail through the whole OAuth flow against the fake's
//! consent page, muster with its password), drafts synced into the mirror, and a short undo
//! window. The app is then launched on that directory with file-backed secrets.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use countersign_core::services::{GmailConnect, Services};
use countersign_core::store::{
    Account, DraftContent, MusterFields, NewAccount, ObservedDraft, SecretStorage, SettingsChange,
};
use countersign_core::sync::{sync_gmail, sync_muster};
use countersign_core::{ItemFilter, ItemState, ItemSummary, Source, Store};
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_gmail::TokenStore;

use crate::desktop::{DesktopApp, LaunchOptions, Prerequisites};

/// The undo window the tests run with: long enough to see and undo, short enough to wait out.
pub const TEST_UNDO_SECS: u32 = 3;

/// A prepared data directory with both fakes.
pub struct Fixture {
    /// The data directory (deleted on drop).
    pub dir: tempfile::TempDir,
    /// The mirror, open in the test process too (SQLite lets the app share it).
    pub store: Store,
    /// Connections with file-backed secrets, as the app makes them under
    /// `COUNTERSIGN_SECRET_STORE=file`.
    pub services: Services,
    /// The fake Gmail.
    pub gmail: FakeGmail,
    /// The fake muster.
    pub muster: FakeMuster,
}

impl Fixture {
    /// A fresh data directory, both fakes started, the undo window set to [`TEST_UNDO_SECS`].
    pub async fn new() -> Result<Fixture> {
        Fixture::seeded(countersign_fakes::Seed::Empty).await
    }

    /// Like [`Fixture::new`], with both fakes holding the demo's drafts (`--seed demo`).
    pub async fn with_demo() -> Result<Fixture> {
        Fixture::seeded(countersign_fakes::Seed::Demo).await
    }

    async fn seeded(seed: countersign_fakes::Seed) -> Result<Fixture> {
        let dir = tempfile::Builder::new()
            .prefix("countersign-e2e-")
            .tempdir()
            .context("cannot create a data dir")?;
        let store = Store::open(dir.path())
            .await
            .context("cannot create the mirror")?;
        let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()));
        let gmail = FakeGmail::start(GmailConfig {
            seed,
            ..GmailConfig::default()
        })
        .await
        .context("cannot start the fake Gmail")?;
        let muster = FakeMuster::start(MusterConfig {
            seed,
            ..MusterConfig::default()
        })
        .await
        .context("cannot start the fake muster")?;
        let fixture = Fixture {
            dir,
            store,
            services,
            gmail,
            muster,
        };
        fixture.set_undo_window(TEST_UNDO_SECS).await?;
        Ok(fixture)
    }

    /// The data directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Sets the undo window in the mirror's settings.
    pub async fn set_undo_window(&self, secs: u32) -> Result<()> {
        let change = SettingsChange {
            undo_window_secs: Some(secs),
            ..SettingsChange::default()
        };
        self.store
            .update_settings(&change, "owner via test")
            .await?;
        Ok(())
    }

    /// Connects the fake Gmail through its OAuth consent page.
    pub async fn connect_gmail(&self) -> Result<Account> {
        let account = self
            .services
            .connect_gmail(
                &self.store,
                GmailConnect::auto_consent(
                    self.gmail.client_secret_json().to_string(),
                    self.gmail.api_base(),
                    self.gmail.tokeninfo_url(),
                ),
            )
            .await
            .context("cannot connect the fake Gmail")?;
        Ok(account)
    }

    /// Connects the fake muster with its password.
    pub async fn connect_muster(&self) -> Result<Account> {
        let account = self
            .services
            .connect_muster(&self.store, &self.muster.url(), self.muster.password())
            .await
            .context("cannot connect the fake muster")?;
        Ok(account)
    }

    /// Brings the mirror up to date with `account`'s drafts.
    pub async fn sync(&self, account: &Account) -> Result<()> {
        match account.profile.kind {
            countersign_core::Source::Gmail => {
                let client = self.services.gmail(account).await?;
                sync_gmail(&self.store, account, &client).await?;
            }
            countersign_core::Source::Muster => {
                let client = self.services.muster(account).await?;
                sync_muster(&self.store, account, &client).await?;
            }
        }
        Ok(())
    }

    /// Every item in the mirror, pending first.
    pub async fn items(&self) -> Result<Vec<ItemSummary>> {
        Ok(self.store.list_items(&ItemFilter::default()).await?)
    }

    /// The mirrored item of the draft `external_id`.
    pub async fn item(&self, external_id: &str) -> Result<ItemSummary> {
        self.items()
            .await?
            .into_iter()
            .find(|i| i.external_id == external_id)
            .with_context(|| format!("draft {external_id} is not mirrored"))
    }

    /// Launches the app on this data directory with file-backed secrets.
    pub async fn launch(&self, prerequisites: &Prerequisites) -> Result<DesktopApp> {
        self.launch_with_env(prerequisites, vec![]).await
    }

    /// [`Fixture::launch`] with more environment variables (e.g. the debug build's
    /// `COUNTERSIGN_TEST_REVIEW_DELAY_MS`).
    pub async fn launch_with_env(
        &self,
        prerequisites: &Prerequisites,
        env: Vec<(String, String)>,
    ) -> Result<DesktopApp> {
        let mut all = vec![("COUNTERSIGN_SECRET_STORE".into(), "file".into())];
        all.extend(env);
        DesktopApp::launch(
            prerequisites,
            LaunchOptions {
                data_dir: Some(self.path().to_path_buf()),
                env: all,
                ..LaunchOptions::default()
            },
        )
        .await
    }

    /// Waits until no process dispatches this data directory any more — after
    /// [`DesktopApp::quit`], the app's process has ended (its dispatcher lock goes with it), so
    /// a send counted now includes any it made late. (The deadline only stops a hang.)
    pub async fn app_ended(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let taken = countersign_core::outbox::Dispatcher::acquire(
                self.store.clone(),
                self.services.clone(),
                self.path(),
                countersign_core::outbox::DispatchConfig::default(),
            )
            .await?;
            if taken.is_some() {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the app still dispatches after 20 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Fills `store` with `count` pending Gmail drafts ("Re: Order N") of one account, straight
/// through the store API (a large queue without a fake holding it). The account points at a
/// closed loopback port, so a launched app's live sync of it fails quietly (it shows offline)
/// instead of reaching anything.
pub async fn fill_mirror(store: &Store, count: usize) -> Result<Account> {
    let account = store
        .add_account(NewAccount {
            kind: Source::Gmail,
            label: "bulk@example.com".into(),
            address: "bulk@example.com".into(),
            api_base: "http://127.0.0.1:9/".into(),
            granted_scopes: vec![],
            secret_storage: SecretStorage::None,
        })
        .await?;
    for n in 0..count {
        let subject = format!("Re: Order {n}");
        let raw = format!(
            "From: bulk@example.com\r\nTo: client{n}@example.com\r\nSubject: {subject}\r\n\
             Message-ID: <bulk-{n}@agent.example>\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\nYour order {n} ships today.\r\n"
        );
        store
            .record_draft(&ObservedDraft {
                account_id: account.id.clone(),
                source: Source::Gmail,
                external_id: format!("r-{n}"),
                version: format!("m-{n}"),
                content: DraftContent::Raw(raw.into_bytes()),
                observed_state: ItemState::Pending,
                gmail_internal_date: None,
                thread_id: None,
                subject,
                from_addr: "bulk@example.com".into(),
                recipients: format!("client{n}@example.com"),
                snippet: format!("Your order {n} ships today."),
                muster: MusterFields::default(),
                answers_json: None,
                state_reason: None,
            })
            .await?;
    }
    Ok(account)
}

/// A Gmail draft as an agent files it: a plain-text reply.
pub fn gmail_reply(n: usize, subject: &str, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: {subject}\r\nMessage-ID: <e2e-{n}@agent.example>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// An HTTP server on 127.0.0.1 that only counts the connections it gets: the "remote image
/// host" a hostile draft points at, which must never be contacted.
pub struct RemoteHost {
    /// `http://127.0.0.1:PORT`
    pub url: String,
    hits: Arc<AtomicUsize>,
}

impl RemoteHost {
    /// Starts listening.
    pub async fn start() -> Result<RemoteHost> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt as _;
                    let _ = socket
                        .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                        .await;
                });
            }
        });
        Ok(RemoteHost { url, hits })
    }

    /// How many connections it got.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Waits until `check` holds, polling every 50 ms; fails with `what` after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < limit {
        if check().await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("{what}: not within {limit:?}")
}
