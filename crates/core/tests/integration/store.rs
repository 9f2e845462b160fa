//! The mirror on real files: migrations, durability across processes, refusing foreign files,
//! and the typed store API.

use std::path::Path;
use std::process::Command;

use chrono::{Duration, Utc};
use countersign_core::store::{
    DecisionFilter, DraftContent, MusterFields, NewAccount, NewDecision, ObservedDraft,
    RefusalKind, SecretStorage, MIGRATOR, MIRROR_FILE,
};
use countersign_core::store::{Settings, SettingsChange};
use countersign_core::{
    DecisionKind, DecisionState, DispatchOutcome, Error, ItemEvent, ItemFilter, ItemState, Source,
    Store,
};

async fn store_in(dir: &Path) -> Store {
    Store::open(dir).await.expect("open the mirror")
}

async fn gmail_account(store: &Store) -> String {
    store
        .add_account(NewAccount {
            kind: Source::Gmail,
            label: "Work".into(),
            address: "owner@example.com".into(),
            api_base: "http://127.0.0.1:1/gmail/v1/users/me".into(),
            granted_scopes: vec!["https://www.googleapis.com/auth/gmail.modify".into()],
            secret_storage: SecretStorage::File,
        })
        .await
        .unwrap()
        .id
}

fn draft(account: &str, draft_id: &str, message_id: &str, body: &str) -> ObservedDraft {
    ObservedDraft {
        account_id: account.to_string(),
        source: Source::Gmail,
        external_id: draft_id.to_string(),
        version: message_id.to_string(),
        content: DraftContent::Raw(
            format!("To: ana@example.com\r\nSubject: Invoice\r\n\r\n{body}\r\n").into_bytes(),
        ),
        observed_state: ItemState::Pending,
        gmail_internal_date: None,
        thread_id: Some("t1".into()),
        subject: "Invoice".into(),
        from_addr: "owner@example.com".into(),
        recipients: "ana@example.com".into(),
        snippet: body.chars().take(40).collect(),
        muster: MusterFields::default(),
        answers_json: None,
        state_reason: None,
    }
}

/// A fresh mirror with one Gmail account and one draft (`d1` at version `m1`).
async fn mirror_with_one_draft() -> (
    tempfile::TempDir,
    Store,
    String,
    countersign_core::store::RecordOutcome,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    let account = gmail_account(&store).await;
    let item = store
        .record_draft(&draft(&account, "d1", "m1", "v1"))
        .await
        .unwrap();
    (dir, store, account, item)
}

async fn approve(
    store: &Store,
    item_id: i64,
    window_secs: i64,
) -> countersign_core::store::Decision {
    let item = store.get_item(item_id).await.unwrap();
    let version = store.version(item_id, &item.summary.version).await.unwrap();
    let shown = countersign_core::decide::Shown {
        id: item_id,
        version: version.version.clone(),
        digest: version.sha256.clone(),
    };
    store
        .record_view(
            &shown,
            "owner via test",
            countersign_core::store::ShownPart::Html,
        )
        .await
        .unwrap();
    store
        .enqueue_decision(NewDecision {
            item_id,
            kind: DecisionKind::Approve,
            reason: None,
            version: version.version.clone(),
            digest: version.sha256.clone(),
            undo_window: Duration::seconds(window_secs),
            actor: "owner via test".into(),
            despite: vec![],
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn migrations_apply_to_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    assert!(dir.path().join(MIRROR_FILE).is_file());
    assert!(store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.settings().await.unwrap().undo_window_secs, 10);
    // Opening again is a no-op, not an error.
    store.close().await;
    store_in(dir.path()).await;
}

#[tokio::test]
async fn migrations_apply_to_a_file_at_the_previous_migration_and_keep_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(MIRROR_FILE);
    let all = MIGRATOR.migrations.to_vec();
    assert!(all.len() >= 2, "this test needs at least two migrations");
    let mut previous = sqlx::migrate::Migrator::DEFAULT;
    previous.migrations = all[..all.len() - 1].to_vec().into();
    {
        let old = Store::open_unmigrated(&path).await.unwrap();
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        previous.run(&pool).await.unwrap();
        sqlx::query(
            "INSERT INTO accounts (id, kind, label, address, api_base, created_at)
             VALUES ('gmail-old', 'gmail', 'Old', 'old@example.com', 'http://x', '2026-01-01T00:00:00.000Z')",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO audit_log (at, actor, action) VALUES ('2026-01-01T00:00:00.000Z', 'owner', 'reject')",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO review_items (account_id, source, external_id, state, version,
                created_at, updated_at)
             VALUES ('gmail-old', 'gmail', 'd-old', 'pending', 'm-old',
                '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
        old.close().await;
    }
    let store = Store::open_file(&path).await.unwrap();
    let accounts = store.list_accounts().await.unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].id, "gmail-old");
    // The newest migration (20261205090000_labels): an item kept from before carries no
    // labels and the account none, until the next sync reads them. Update this with the next
    // migration.
    let name = &MIGRATOR.migrations.last().unwrap().description;
    assert_eq!(name, "labels", "check what the newest migration did here");
    assert!(store.labels(Some("gmail-old")).await.unwrap().is_empty());
    // 20261205080000_draft_internal_date: a version synced before it has no Gmail date, and
    // the send path falls back to this computer's clock for it.
    for item in store.list_items(&ItemFilter::default()).await.unwrap() {
        assert!(store.item_labels(item.id).await.unwrap().is_empty());
        assert_eq!(
            store
                .version_gmail_date(item.id, &item.version)
                .await
                .unwrap(),
            None
        );
    }
    // 20261205070000_sealed_record is checked below, with the old audit row sealed at the
    // first open with a key.
    let cursor = store.sync_cursor("gmail-old").await.unwrap();
    assert_eq!(cursor.delivery, None);
    assert_eq!(
        cursor.status_word(),
        if cursor.online { "online" } else { "offline" }
    );
    // 20261205060000_muster_delivery (how a followed muster account's changes arrive): no
    // app follows an old account. 20261205040000_muster_undecidable (why a muster draft cannot
    // be decided): an item kept from before is decidable.
    let old_items = store.list_items(&ItemFilter::default()).await.unwrap();
    assert_eq!(old_items.len(), 1);
    let old_item = store.get_item(old_items[0].id).await.unwrap();
    assert_eq!(old_item.muster.undecidable_reason, None);
    let approve = old_item
        .summary
        .actions
        .iter()
        .find(|a| a.action == countersign_core::actions::Action::Approve)
        .unwrap();
    assert!(approve.allowed, "{approve:?}");
    // The owners' vetoes (20261205000000_owner_vetoes) are read by the rules' look at the
    // pending drafts, and the rules (20261203120000_rules) keep working on the old data too.
    assert!(store.items_for_rules(Utc::now()).await.unwrap().is_empty());
    assert!(store.rules().await.unwrap().is_empty());
    let rule = store
        .add_rule(
            &countersign_core::rules::RuleDefinition {
                name: "Short replies".into(),
                scope: Default::default(),
                conditions: Default::default(),
                action: countersign_core::rules::RuleAction::Hold,
                daily_cap: None,
            },
            "owner via test",
        )
        .await
        .unwrap();
    assert_eq!(
        (rule.version, rule.mode),
        (1, countersign_core::store::RuleMode::Shadow)
    );
    // The old audit row was sealed once, at the first open with a key (20261205070000_sealed_
    // record), and the verdict says so; the rule's row continues the seals.
    let verdict = store.verify_audit().await.unwrap();
    assert_eq!(verdict.rows, 2);
    assert_eq!(verdict.broken, None);
    let legacy = verdict.legacy.unwrap();
    assert!(
        legacy.contains("the first 1 rows were written before the record was sealed"),
        "{legacy}"
    );
    let chained: Vec<Option<String>> = sqlx::query_scalar("SELECT mac FROM audit_log")
        .fetch_all(
            &sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(chained
        .iter()
        .all(|h| h.as_ref().map(String::len) == Some(64)));
}

#[tokio::test]
async fn a_file_that_is_not_sqlite_is_refused_by_name_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(MIRROR_FILE);
    let garbage = b"this is my tax return, not a database\n".repeat(100);
    std::fs::write(&path, &garbage).unwrap();
    let error = Store::open(dir.path()).await.unwrap_err();
    assert!(matches!(error, Error::CorruptMirror { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.starts_with("cannot open the mirror"), "{message}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert!(!dir.path().join(format!("{MIRROR_FILE}-wal")).exists());
}

#[tokio::test]
async fn a_damaged_sqlite_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(MIRROR_FILE);
    {
        let store = store_in(dir.path()).await;
        gmail_account(&store).await;
        store.close().await;
    }
    // Keep the header, smash the pages behind it.
    let mut bytes = std::fs::read(&path).unwrap();
    for byte in bytes.iter_mut().skip(100) {
        *byte = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join(format!("{MIRROR_FILE}-wal")));
    let _ = std::fs::remove_file(dir.path().join(format!("{MIRROR_FILE}-shm")));
    let error = Store::open(dir.path()).await.unwrap_err();
    assert!(matches!(error, Error::CorruptMirror { .. }), "{error:?}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[tokio::test]
async fn a_stored_value_this_version_cannot_read_is_reported_as_a_damaged_mirror() {
    let (dir, store, _account, item) = mirror_with_one_draft().await;
    // What another writer (a newer Countersign, a hand edit) could leave behind: a state
    // name this version does not know, and a text version that is no longer UTF-8.
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join(MIRROR_FILE).display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE review_items SET state = 'snoozed' WHERE id = ?")
        .bind(item.item_id)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE draft_versions SET content_kind = 'text', content = x'C328' WHERE item_id = ?",
    )
    .bind(item.item_id)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;

    let error = store.get_item(item.item_id).await.unwrap_err();
    assert!(matches!(error, Error::Corrupt(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with("cannot understand the mirror"),
        "{message}"
    );
    assert!(message.contains("state"), "{message}");
    let error = store.versions(item.item_id).await.unwrap_err();
    assert!(matches!(error, Error::Corrupt(_)), "{error:?}");
    assert!(error.to_string().contains("content"), "{error}");
}

/// Runs only as the child of `a_second_process_sees_committed_decisions`.
#[tokio::test]
#[ignore = "run as a second process by a_second_process_sees_committed_decisions"]
async fn child_process_prints_the_outbox() {
    let dir = std::env::var("COUNTERSIGN_TEST_CHILD_DIR").expect("run by the parent test");
    let store = Store::open(Path::new(&dir)).await.unwrap();
    let decisions = store.list_decisions(DecisionFilter::All).await.unwrap();
    let audit = store.audit_log().await.unwrap();
    println!(
        "CHILD-OUTBOX {}",
        serde_json::json!({ "decisions": decisions, "audit": audit.len() })
    );
}

#[tokio::test]
async fn a_second_process_sees_committed_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    let account = gmail_account(&store).await;
    let item = store
        .record_draft(&draft(&account, "d1", "m1", "Hello"))
        .await
        .unwrap();
    let decision = approve(&store, item.item_id, 10).await;
    // The first process keeps its connections open: WAL readers must still see the commit.
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::child_process_prints_the_outbox",
            "--ignored",
            "--nocapture",
        ])
        .env("COUNTERSIGN_TEST_CHILD_DIR", dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| {
            l.split_once("CHILD-OUTBOX ")
                .map(|(_, json)| json.to_string())
        })
        .expect("the child printed the outbox");
    let seen: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(seen["decisions"][0]["id"], decision.id);
    assert_eq!(seen["decisions"][0]["state"], "queued");
    assert_eq!(seen["decisions"][0]["digest"], decision.digest);
    assert_eq!(seen["audit"], 1);
}

#[tokio::test]
async fn an_updated_draft_keeps_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    let account = gmail_account(&store).await;
    let first = store
        .record_draft(&draft(&account, "d1", "m1", "v1"))
        .await
        .unwrap();
    assert!(first.created && first.new_version);
    let again = store
        .record_draft(&draft(&account, "d1", "m1", "v1"))
        .await
        .unwrap();
    assert!(!again.created && !again.new_version);
    store
        .record_draft(&draft(&account, "d1", "m2", "v2"))
        .await
        .unwrap();
    store
        .record_draft(&draft(&account, "d1", "m3", "v3"))
        .await
        .unwrap();
    let versions = store.versions(first.item_id).await.unwrap();
    let ids: Vec<_> = versions.iter().map(|v| v.version.as_str()).collect();
    assert_eq!(ids, ["m1", "m2", "m3"]);
    assert_ne!(versions[0].sha256, versions[2].sha256);
    assert_eq!(versions[0].sha256, versions[0].content.digest());
    let item = store.get_item(first.item_id).await.unwrap();
    assert_eq!(item.summary.version, "m3");
    assert_eq!(
        store
            .list_items(&ItemFilter::default())
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_decision_is_written_with_its_audit_row_and_refused_on_a_stale_version() {
    let (_dir, store, account, item) = mirror_with_one_draft().await;
    let reviewed = store.version(item.item_id, "m1").await.unwrap();
    // The agent updates the draft before the owner decides on what they saw.
    store
        .record_draft(&draft(&account, "d1", "m2", "v2"))
        .await
        .unwrap();
    let stale = store
        .enqueue_decision(NewDecision {
            item_id: item.item_id,
            kind: DecisionKind::Approve,
            reason: None,
            version: reviewed.version.clone(),
            digest: reviewed.sha256.clone(),
            undo_window: Duration::seconds(10),
            actor: "owner via test".into(),
            despite: vec![],
        })
        .await
        .unwrap_err();
    assert!(
        matches!(stale, countersign_core::Error::ChangedSinceShown { .. }),
        "{stale}"
    );
    assert!(store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());
    assert!(store.audit_log().await.unwrap().is_empty());

    let decision = approve(&store, item.item_id, 10).await;
    assert_eq!(decision.version, "m2");
    assert_eq!(
        store.get_item(item.item_id).await.unwrap().summary.state,
        ItemState::Queued
    );
    let audit = store.audit_for_item(item.item_id).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(
        audit[0].line.digest.as_deref(),
        Some(decision.digest.as_str())
    );
    // A second decision on the same item is refused.
    let item_row = store.get_item(item.item_id).await.unwrap();
    let twice = store
        .enqueue_decision(NewDecision {
            item_id: item.item_id,
            kind: DecisionKind::Reject,
            reason: Some("no".into()),
            version: item_row.summary.version.clone(),
            digest: decision.digest.clone(),
            undo_window: Duration::seconds(0),
            actor: "owner via test".into(),
            despite: vec![],
        })
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("already decided"), "{twice}");
}

#[tokio::test]
async fn the_audit_log_refuses_to_be_rewritten() {
    let (_dir, store, _, item) = mirror_with_one_draft().await;
    approve(&store, item.item_id, 10).await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display()))
        .await
        .unwrap();
    let update = sqlx::query("UPDATE audit_log SET outcome = 'forged'")
        .execute(&pool)
        .await;
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = sqlx::query("DELETE FROM audit_log").execute(&pool).await;
    assert!(delete.unwrap_err().to_string().contains("append-only"));
    assert_eq!(
        store.audit_log().await.unwrap()[0].line.outcome.as_deref(),
        Some("queued")
    );
}

#[tokio::test]
async fn undo_works_inside_the_window_and_after_it_until_the_decision_is_claimed() {
    let (_dir, store, _, item) = mirror_with_one_draft().await;
    approve(&store, item.item_id, 10).await;
    let undone = store
        .cancel_decision(item.item_id, Utc::now(), "owner")
        .await
        .unwrap();
    assert_eq!(undone.state, DecisionState::Cancelled);
    assert_eq!(
        store.get_item(item.item_id).await.unwrap().summary.state,
        ItemState::Pending
    );

    // Past its window but not claimed (nothing has left): still undone.
    approve(&store, item.item_id, 10).await;
    let late = store
        .cancel_decision(item.item_id, Utc::now() + Duration::seconds(11), "owner")
        .await
        .unwrap();
    assert_eq!(late.state, DecisionState::Cancelled);

    // Claimed by a dispatcher: too late.
    approve(&store, item.item_id, 0).await;
    store
        .claim_next_due(Utc::now(), "dispatcher")
        .await
        .unwrap()
        .expect("due");
    let claimed = store
        .cancel_decision(item.item_id, Utc::now(), "owner")
        .await
        .unwrap_err();
    assert!(
        claimed.to_string().contains("already being sent"),
        "{claimed}"
    );
    assert_eq!(
        store.get_item(item.item_id).await.unwrap().summary.state,
        ItemState::Sending
    );
}

#[tokio::test]
async fn two_dispatchers_never_claim_the_same_decision() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    let account = gmail_account(&store).await;
    for n in 0..20 {
        let item = store
            .record_draft(&draft(&account, &format!("d{n}"), &format!("m{n}"), "hi"))
            .await
            .unwrap();
        approve(&store, item.item_id, 0).await;
    }
    // A second store handle has its own connections, like a second process.
    let other = Store::open(dir.path()).await.unwrap();
    let claim_all = |store: Store, name: &'static str| async move {
        let mut claimed = Vec::new();
        while let Some(decision) = store.claim_next_due(Utc::now(), name).await.unwrap() {
            claimed.push(decision.id);
        }
        claimed
    };
    let (a, b) = tokio::join!(claim_all(store.clone(), "a"), claim_all(other, "b"));
    let mut all: Vec<_> = a.iter().chain(b.iter()).copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20);
    assert_eq!(a.len() + b.len(), 20, "a decision was claimed twice");
    for decision in store.list_decisions(DecisionFilter::All).await.unwrap() {
        assert_eq!(decision.state, DecisionState::Dispatching);
        assert_eq!(decision.attempts, 1);
    }
}

#[tokio::test]
async fn a_decision_inside_its_undo_window_is_not_claimed() {
    let (_dir, store, _, item) = mirror_with_one_draft().await;
    let decision = approve(&store, item.item_id, 10).await;
    assert!(store
        .claim_next_due(Utc::now(), "a")
        .await
        .unwrap()
        .is_none());
    let claimed = store
        .claim_next_due(decision.due_at + Duration::milliseconds(1), "a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, decision.id);
    assert_eq!(
        store.get_item(item.item_id).await.unwrap().summary.state,
        ItemState::Sending
    );
    let done = store
        .finish_decision(
            decision.id,
            &DispatchOutcome::Done,
            Some(ItemEvent::Delivered),
            None,
        )
        .await
        .unwrap();
    assert_eq!(done.state, DecisionState::Done);
    assert_eq!(
        store.get_item(item.item_id).await.unwrap().summary.state,
        ItemState::Sent
    );
    let audit = store.audit_for_item(item.item_id).await.unwrap();
    assert_eq!(audit.last().unwrap().line.outcome.as_deref(), Some("done"));
}

#[tokio::test]
async fn a_dispatch_abandoned_by_a_dead_process_becomes_uncertain() {
    let (_dir, store, _, item) = mirror_with_one_draft().await;
    approve(&store, item.item_id, 0).await;
    store
        .claim_next_due(Utc::now(), "dead")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.mark_abandoned_dispatches_uncertain().await.unwrap(),
        1
    );
    let uncertain = store.uncertain_decisions().await.unwrap();
    assert_eq!(uncertain.len(), 1);
    // Never claimed again for a blind resend.
    assert!(store
        .claim_next_due(Utc::now(), "b")
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_refusal_is_recorded_once_however_often_it_is_seen() {
    let (_dir, store, _, item) = mirror_with_one_draft().await;
    let first = store
        .record_refusal(
            item.item_id,
            RefusalKind::SendFailed,
            "mailbox full",
            "d1@m1",
        )
        .await
        .unwrap();
    assert!(first.is_some());
    for _ in 0..3 {
        let again = store
            .record_refusal(
                item.item_id,
                RefusalKind::SendFailed,
                "mailbox full",
                "d1@m1",
            )
            .await
            .unwrap();
        assert!(again.is_none());
    }
    let pending = store.unnotified_refusals().await.unwrap();
    assert_eq!(pending.len(), 1);
    store.mark_refusal_notified(pending[0].id).await.unwrap();
    assert!(store.unnotified_refusals().await.unwrap().is_empty());
}

#[tokio::test]
async fn settings_out_of_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    let too_long = SettingsChange {
        undo_window_secs: Some(61),
        ..SettingsChange::default()
    };
    let refused = store
        .update_settings(&too_long, "owner via test")
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot save the settings: the undo window can be at most 60 seconds"
    );
    assert_eq!(store.settings().await.unwrap().undo_window_secs, 10);
    let none = SettingsChange {
        undo_window_secs: Some(0),
        ..SettingsChange::default()
    };
    store
        .update_settings(&none, "owner via test")
        .await
        .unwrap();
    assert_eq!(store.settings().await.unwrap().undo_window_secs, 0);
}

#[tokio::test]
async fn removing_an_account_removes_its_items_but_keeps_the_audit_log() {
    let (_dir, store, account, item) = mirror_with_one_draft().await;
    approve(&store, item.item_id, 10).await;
    store.remove_account(&account).await.unwrap();
    assert!(store
        .list_items(&ItemFilter::default())
        .await
        .unwrap()
        .is_empty());
    let audit = store.audit_log().await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].line.item_id, None);
    // The schema cleared the references of rows whose item is gone: the seal, which covers
    // them as written, still holds.
    let verdict = store.verify_audit().await.unwrap();
    assert_eq!(verdict.findings, vec![], "{verdict:?}");
}

#[tokio::test]
async fn a_stale_copy_of_the_settings_cannot_turn_hold_everything_or_pause_sending_off() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    // The Settings page keeps the copy it loaded…
    let loaded = store.settings().await.unwrap();
    // …while the owner holds everything and pauses sending from the tray.
    countersign_core::rules::pass::set_hold_everything(&store, true, "owner via tray")
        .await
        .unwrap();
    store.set_paused(true, "owner via tray").await.unwrap();
    // Then saves the undo window from that page: what it sends is what the owner changed.
    let wanted = Settings {
        undo_window_secs: 5,
        ..loaded.clone()
    };
    let change = SettingsChange::between(&loaded, &wanted);
    assert_eq!(
        change,
        SettingsChange {
            undo_window_secs: Some(5),
            ..SettingsChange::default()
        }
    );
    store
        .update_settings(&change, "owner via desktop")
        .await
        .unwrap();

    let now = store.settings().await.unwrap();
    assert_eq!(
        now.undo_window_secs, 5,
        "the change the owner made is saved"
    );
    assert!(now.hold_everything, "Hold everything stays on");
    assert!(now.paused, "Pause sending stays on");

    // Each change of a safety setting is in the audit log, whose and from what to what; a
    // setting saved with the value it has is no change.
    store
        .update_settings(&change, "owner via desktop")
        .await
        .unwrap();
    let quiet = SettingsChange {
        notifications: Some(false),
        ..SettingsChange::default()
    };
    store
        .update_settings(&quiet, "owner via desktop")
        .await
        .unwrap();
    let changes: Vec<(String, String)> = store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.line.action == "setting changed")
        .map(|e| (e.line.actor, e.line.detail.unwrap_or_default()))
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "owner via tray".into(),
                "Hold everything: off \u{2192} on".into()
            ),
            (
                "owner via tray".into(),
                "Pause sending: off \u{2192} on".into()
            ),
            (
                "owner via desktop".into(),
                "undo window: 10 s \u{2192} 5 s".into()
            ),
        ]
    );
    assert!(!store.settings().await.unwrap().notifications);

    // A mirror written before each setting had its own row keeps what it said.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display()))
        .await
        .unwrap();
    sqlx::query("DELETE FROM settings")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO settings (key, value) VALUES ('settings', ?)")
        .bind(r#"{"undoWindowSecs":30,"paused":true,"holdEverything":true}"#)
        .execute(&pool)
        .await
        .unwrap();
    let legacy = store.settings().await.unwrap();
    assert_eq!(
        (
            legacy.undo_window_secs,
            legacy.paused,
            legacy.hold_everything
        ),
        (30, true, true)
    );
    store
        .update_settings(&change, "owner via desktop")
        .await
        .unwrap();
    let updated = store.settings().await.unwrap();
    assert_eq!(
        (
            updated.undo_window_secs,
            updated.paused,
            updated.hold_everything
        ),
        (5, true, true),
        "one setting changed over the old whole value, the others kept"
    );
}

/// Issue 39: the outcome of a dispatched decision lands on an item a sync may have moved first.
/// "Gone" (all a sync can say of a draft that left Drafts) takes the dispatcher's truer word,
/// what the item already shows is "already so", and a contradiction is a conflict the owner is
/// told about — none of them an error.
#[tokio::test]
async fn an_outcome_on_an_item_a_sync_moved_first_is_recorded_never_refused() {
    use countersign_core::{DispatchOutcome, ItemEvent};
    let cases = [
        (
            ItemEvent::Vanished,
            ItemEvent::Delivered,
            ItemState::Sent,
            "sent: exactly",
        ),
        (
            ItemEvent::Vanished,
            ItemEvent::Vanished,
            ItemState::Gone,
            "already so",
        ),
        (
            ItemEvent::CheckRefused,
            ItemEvent::Delivered,
            ItemState::Conflict,
            "the service says it was sent, but the mirror says it is rejected",
        ),
    ];
    for (synced, heard, ends, audit) in cases {
        let (_dir, store, _, item) = mirror_with_one_draft().await;
        approve(&store, item.item_id, 0).await;
        let claimed = store
            .claim_next_due(Utc::now(), "dispatcher")
            .await
            .unwrap()
            .expect("due");
        store
            .set_decision_sent_bytes(claimed.id, &claimed.digest, None)
            .await
            .unwrap();
        // A sync moves the item first.
        store
            .apply_item_event(item.item_id, synced, Some("seen by a sync"))
            .await
            .unwrap();
        let finished = store
            .finish_decision(claimed.id, &DispatchOutcome::Done, Some(heard), None)
            .await
            .unwrap();
        assert_eq!(
            finished.state,
            DecisionState::Done,
            "{synced:?} then {heard:?}"
        );
        let now = store.get_item(item.item_id).await.unwrap().summary;
        assert_eq!(now.state, ends, "{synced:?} then {heard:?}");
        let last = store.audit_log().await.unwrap().pop().unwrap();
        assert!(
            last.line.detail.as_deref().unwrap_or("").contains(audit),
            "{synced:?} then {heard:?}: {last:?}"
        );
    }
}
