//! Sealed-record benchmark (issue 35): what sealing and verifying the audit log cost.
//!
//! 1. Sealing 100,000 rows: a mirror file whose log was written before sealing (plain
//!    inserts), opened with a key for the first time — every row is MAC'd and chained in one
//!    transaction, as the upgrade does.
//! 2. Verifying those 100,000 rows (`Store::verify_audit`), and against a checkpoint.
//! 3. Sealed appends one at a time (`Store::append_audit`: a transaction and an fsync each), to
//!    show what a seal adds to an ordinary write.
//!
//! `cargo bench -p countersign-core --bench record_seal` (plain timing, no harness). It prints
//! figures and asserts none of them. `SEAL_BENCH_ROWS` and `SEAL_BENCH_APPENDS` change the
//! counts (defaults 100,000 and 1,000).

use std::time::Instant;

use countersign_core::store::{NewAuditEntry, MIGRATOR};
use countersign_core::Store;

fn count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let rows = count("SEAL_BENCH_ROWS", 100_000);
    let appends = count("SEAL_BENCH_APPENDS", 1_000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("mirror.sqlite3");

    // A log as an older Countersign left it: rows, no seals.
    {
        let old = Store::open_unmigrated(&path).await.expect("the mirror");
        old.close().await;
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
            .await
            .expect("a pool");
        MIGRATOR.run(&pool).await.expect("migrations");
        let mut tx = pool.begin().await.expect("a transaction");
        for n in 0..rows {
            sqlx::query(
                "INSERT INTO audit_log (at, actor, action, version, digest, outcome, detail)
                 VALUES ('2026-12-01T10:00:00.000Z', 'owner via bench', 'reject', ?, ?, 'queued', ?)",
            )
            .bind(format!("v{n}"))
            .bind(format!("{n:064x}"))
            .bind(format!("reason {n}"))
            .execute(&mut *tx)
            .await
            .expect("a row");
        }
        tx.commit().await.expect("commit");
        pool.close().await;
    }

    let started = Instant::now();
    let store = Store::open_file(&path).await.expect("the first keyed open");
    let sealing = started.elapsed();
    println!(
        "seal {rows} rows (first open with a key): {:.2} s ({:.1} µs a row)",
        sealing.as_secs_f64(),
        sealing.as_secs_f64() * 1e6 / rows as f64
    );

    let started = Instant::now();
    let verdict = store.verify_audit().await.expect("verify");
    let verifying = started.elapsed();
    println!(
        "verify {} rows: {:.3} s ({:.2} µs a row) — {:?}",
        verdict.rows,
        verifying.as_secs_f64(),
        verifying.as_secs_f64() * 1e6 / verdict.rows.max(1) as f64,
        verdict.status
    );

    let checkpoint = store.audit_checkpoint().await.expect("checkpoint");
    let started = Instant::now();
    let against = store
        .verify_audit_against(Some(&checkpoint))
        .await
        .expect("verify against");
    println!(
        "verify {} rows against a checkpoint: {:.3} s — {:?}",
        against.rows,
        started.elapsed().as_secs_f64(),
        against.status
    );

    let started = Instant::now();
    for n in 0..appends {
        store
            .append_audit(&NewAuditEntry {
                actor: "owner via bench".into(),
                action: "reject".into(),
                version: Some(format!("w{n}")),
                outcome: Some("queued".into()),
                ..NewAuditEntry::default()
            })
            .await
            .expect("an append");
    }
    let appending = started.elapsed();
    println!(
        "{appends} sealed appends, one transaction (fsync) each: {:.2} s ({:.2} ms each)",
        appending.as_secs_f64(),
        appending.as_secs_f64() * 1e3 / appends as f64
    );
    store.close().await;
}
