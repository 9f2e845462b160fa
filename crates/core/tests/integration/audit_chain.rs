//! The sealed audit log (issue 35; hash-chained since issue 26): intact on a real history, and
//! broken — naming the row — by any one row changed, removed or inserted around the triggers.

use countersign_core::store::{AuditVerdict, NewAuditEntry};
use sqlx::Connection;

use crate::support::Env;

async fn history(env: &Env, rows: usize) {
    for n in 0..rows {
        env.store
            .append_audit(&NewAuditEntry {
                actor: "owner via test".into(),
                action: "reject".into(),
                version: Some(format!("v{n}")),
                digest: Some(format!("{n:064x}")),
                outcome: Some("queued".into()),
                detail: Some(format!("reason {n}, with \"quotes\"")),
                ..NewAuditEntry::default()
            })
            .await
            .unwrap();
    }
}

/// What someone with `sqlite3` and the file could do: the triggers are dropped first, as they
/// refuse it otherwise.
async fn tamper(env: &Env, sql: &str) {
    let url = format!("sqlite://{}", env.store.path().display());
    let mut outsider = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(&format!(
        "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;
         DROP TRIGGER audit_log_chain_written_once; DROP TRIGGER audit_log_seal_written_once;
         {sql}"
    ))
    .execute(&mut outsider)
    .await
    .unwrap();
}

fn broken_at(verdict: &AuditVerdict) -> Option<i64> {
    verdict.broken.as_ref().map(|b| b.row_id)
}

#[tokio::test]
async fn a_real_history_verifies() {
    let env = Env::new().await;
    history(&env, 12).await;
    let verdict = env.store.verify_audit().await.unwrap();
    assert_eq!(verdict.broken, None);
    assert!(verdict.rows >= 12);
}

#[tokio::test]
async fn any_one_row_changed_or_removed_is_named() {
    for (what, sql, named) in [
        (
            "a detail edited",
            "UPDATE audit_log SET detail = 'approved' WHERE id = 5",
            5,
        ),
        (
            "an actor edited",
            "UPDATE audit_log SET actor = 'rule' WHERE id = 1",
            1,
        ),
        ("a row removed", "DELETE FROM audit_log WHERE id = 7", 7),
        (
            "the first row removed",
            "DELETE FROM audit_log WHERE id = 1",
            1,
        ),
        (
            "the last row removed",
            "DELETE FROM audit_log WHERE id = 12",
            12,
        ),
        (
            "a row edited and its own seal replaced by hand",
            "UPDATE audit_log SET outcome = 'sent', mac = 'ff' WHERE id = 3",
            3,
        ),
    ] {
        let env = Env::new().await;
        history(&env, 12).await;
        assert_eq!(
            env.store.verify_audit().await.unwrap().broken,
            None,
            "{what}"
        );
        tamper(&env, sql).await;
        let verdict = env.store.verify_audit().await.unwrap();
        assert_eq!(broken_at(&verdict), Some(named), "{what}: {verdict:?}");
    }
}

#[tokio::test]
async fn the_chain_cannot_be_rewritten_through_the_store_and_triggers_still_refuse_edits() {
    let env = Env::new().await;
    history(&env, 3).await;
    let url = format!("sqlite://{}", env.store.path().display());
    let mut outsider = sqlx::SqliteConnection::connect(&url).await.unwrap();
    for sql in [
        "UPDATE audit_log SET mac = 'x' WHERE id = 2",
        "UPDATE audit_log SET detail = 'x' WHERE id = 2",
        "DELETE FROM audit_log WHERE id = 2",
    ] {
        let refused = sqlx::query(sql).execute(&mut outsider).await.unwrap_err();
        assert!(
            refused.to_string().contains("append-only"),
            "{sql}: {refused}"
        );
    }
}

#[tokio::test]
async fn rows_written_around_countersign_are_findings_and_never_sealed_when_the_mirror_opens() {
    let env = Env::new().await;
    history(&env, 2).await;
    // Someone with the file, not the key (the triggers allow inserts).
    let url = format!("sqlite://{}", env.store.path().display());
    let mut outsider = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(
        "INSERT INTO audit_log (at, actor, action) VALUES ('2026-12-01T10:00:00Z', 'owner', 'undo');
         INSERT INTO audit_log (at, actor, action) VALUES ('2026-12-01T10:00:01Z', 'owner', 'reject');",
    )
    .execute(&mut outsider)
    .await
    .unwrap();
    assert_eq!(broken_at(&env.store.verify_audit().await.unwrap()), Some(3));

    let reopened = countersign_core::Store::open_file(env.store.path())
        .await
        .unwrap();
    // Countersign writes on after them: its row follows the last sealed one, and only the two
    // rows without a seal are named (no gap where they are).
    reopened
        .append_audit(&NewAuditEntry {
            actor: "owner via test".into(),
            action: "reject".into(),
            ..NewAuditEntry::default()
        })
        .await
        .unwrap();
    let verdict = reopened.verify_audit().await.unwrap();
    let named: Vec<i64> = verdict.findings.iter().map(|f| f.row_id).collect();
    assert_eq!(named, vec![3, 4], "{verdict:?}");
    assert!(verdict.findings[0].problem.contains("carries no seal"));
}
