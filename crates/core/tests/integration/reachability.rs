//! "Is this account online?" is answered in one place: real failures on 127.0.0.1 (a closed
//! connection, a 503, a 401) are classified by `reachability::classify`, and the mirror records
//! each the same way whichever caller met it (the live Gmail loop of a running app, a sync the
//! owner asked for, the dispatcher).

use std::sync::Arc;

use countersign_core::app::{AppOptions, RunningApp};
use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::reachability::{classify, Failure};
use countersign_core::store::Account;
use countersign_core::sync::{sync_gmail_with, sync_muster, Listing};
use countersign_fakes::gmail::Failure as GoogleFailure;
use std::time::Duration;

use crate::support::*;

/// The failures a service can show, made real at the fake.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Every connection is refused.
    ClosedPort,
    /// Google answers 503 `backendError` to every call of `method`.
    Unavailable,
    /// Google refuses the access token of every call of `method` (even after a refresh).
    Unauthorized,
}

impl Fault {
    /// Where the mirror must say the account stands after it.
    fn expected(self) -> (Failure, bool) {
        match self {
            Fault::ClosedPort | Fault::Unavailable => (Failure::Unreachable, false),
            Fault::Unauthorized => (Failure::Refused, true),
        }
    }

    fn inject(self, env: &Env, method: &str) {
        // More failures than the client's retries, so the call fails for good.
        match self {
            Fault::ClosedPort => env.gmail.set_online(false),
            Fault::Unavailable => env.gmail.fail_next(
                method,
                100,
                GoogleFailure::status(503).reason("backendError"),
            ),
            Fault::Unauthorized => {
                env.gmail
                    .fail_next(method, 100, GoogleFailure::status(401).reason("authError"))
            }
        }
    }
}

const FAULTS: [Fault; 3] = [Fault::ClosedPort, Fault::Unavailable, Fault::Unauthorized];

/// A mirror with a synced Gmail account holding one draft.
async fn synced_gmail() -> (Env, Account) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    env.gmail.file_draft(&reply(1, "It is 40 EUR."), None);
    sync(&env, &account).await;
    let cursor = env.store.sync_cursor(&account.id).await.unwrap();
    assert!(cursor.online && cursor.last_error.is_none(), "{cursor:?}");
    (env, account)
}

#[tokio::test]
async fn real_failures_are_classified_as_unreachable_refused_or_local() {
    for fault in FAULTS {
        let (env, account) = synced_gmail().await;
        fault.inject(&env, "drafts.list");
        let client = env.services.gmail(&account).await.unwrap();
        let error = sync_gmail_with(&env.store, &account, &client, Listing::Always)
            .await
            .expect_err("the sync fails");
        assert_eq!(classify(&error), fault.expected().0, "{fault:?}: {error}");
    }

    // muster's port closed: unreachable too.
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.set_online(false);
    let client = env.services.muster(&account).await.unwrap();
    let error = sync_muster(&env.store, &account, &client)
        .await
        .expect_err("the sync fails");
    assert_eq!(classify(&error), Failure::Unreachable, "{error}");

    // The mirror itself failing says nothing about the service.
    let error = env.store.get_item(4242).await.unwrap_err();
    assert_eq!(classify(&error), Failure::Local, "{error}");
}

/// What the mirror says of the account: (online, an error recorded).
async fn recorded(env: &Env, account: &Account) -> (bool, bool) {
    let cursor = env.store.sync_cursor(&account.id).await.unwrap();
    (cursor.online, cursor.last_error.is_some())
}

#[tokio::test]
async fn the_mirror_records_a_failure_the_same_way_whichever_caller_met_it() {
    for fault in FAULTS {
        let (_, online) = fault.expected();

        // The live loop of a running app.
        let (env, account) = synced_gmail().await;
        fault.inject(&env, "drafts.list");
        let app = RunningApp::start(
            env.store.clone(),
            env.services.clone(),
            env.dir.path(),
            AppOptions::default(),
            Arc::new(|_| {}),
        )
        .await
        .unwrap();
        eventually(Duration::from_secs(20), "the loop records it", || async {
            recorded(&env, &account).await.1
        })
        .await;
        let by_loop = recorded(&env, &account).await;

        // A sync the owner asked for, in the same app.
        env.store
            .record_sync_success(&account.id, None, false)
            .await
            .unwrap();
        app.sync_now().await.unwrap();
        let by_sync_now = recorded(&env, &account).await;
        app.stop();

        // The dispatcher, re-reading the draft before it sends.
        let (env, account) = synced_gmail().await;
        let item = item_for(&env, &env.gmail.drafts()[0].id).await;
        let shown = crate::support::shown(&env, item.id).await;
        decide::approve(
            &env.store,
            &shown,
            UndoWindow::None,
            "owner via test",
            Confirmation::None,
        )
        .await
        .unwrap();
        fault.inject(&env, "drafts.get");
        env.dispatcher().await.run_once().await.unwrap();
        let by_dispatcher = recorded(&env, &account).await;

        for (caller, got) in [
            ("live loop", by_loop),
            ("sync now", by_sync_now),
            ("dispatcher", by_dispatcher),
        ] {
            assert_eq!(got, (online, true), "{fault:?} met by the {caller}");
        }
        assert!(
            env.gmail.sent_messages().is_empty(),
            "nothing left while it failed"
        );
    }
}
