//! `audit verify` on a real history, and after `sqlite3` changed or removed one row; `audit
//! export` as JSON lines and CSV.

use crate::support::{fakes, reply, Cli};

/// A history as the owner makes one: a draft approved and sent, one rejected with a reason.
async fn real_history() -> Cli {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let sent = gmail.file_draft(&reply(1, "Yes, Tuesday works."), None);
    let rejected = gmail.file_draft(&reply(2, "We will refund you twice."), None);
    cli.exec(&["sync"]).await.ok();
    let sent_id = cli.item_id(&sent.id).await;
    let rejected_id = cli.item_id(&rejected.id).await;
    cli.show(&sent_id).await;
    cli.exec(&["approve", &sent_id, "--no-undo"]).await.ok();
    cli.exec(&["reject", &rejected_id, "--reason", "never promise, refunds"])
        .await
        .ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    cli
}

/// Run `sqlite3` on the mirror: the triggers that keep the log append-only are dropped first,
/// as anyone editing the file by hand would.
fn sqlite3(cli: &Cli, sql: &str) {
    let mirror = cli.data_dir().join("mirror.sqlite3");
    let out = std::process::Command::new("sqlite3")
        .arg(&mirror)
        .arg(format!(
            "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete; {sql}"
        ))
        .output()
        .expect("sqlite3 runs (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_passes_on_a_real_history_and_names_the_row_sqlite3_changed() {
    let cli = real_history().await;
    let intact = cli.exec(&["audit", "verify"]).await.ok();
    assert!(
        intact.stdout.starts_with("The audit log is intact"),
        "{}",
        intact.stdout
    );
    let rows = cli
        .exec(&["audit", "export"])
        .await
        .ok()
        .stdout
        .lines()
        .count();
    assert!(rows >= 4, "{rows} rows");

    sqlite3(
        &cli,
        "UPDATE audit_log SET detail = 'approved by the owner' WHERE id = 3",
    );
    let changed = cli.exec(&["audit", "verify"]).await;
    assert!(!changed.status.success());
    assert!(
        changed.stdout.contains("row 3 was changed"),
        "{}",
        changed.stdout
    );
    let verdict = cli.exec(&["audit", "verify", "--json"]).await;
    let verdict: serde_json::Value = serde_json::from_str(&verdict.stdout).unwrap();
    assert_eq!(verdict["broken"]["rowId"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_names_a_row_sqlite3_removed() {
    let cli = real_history().await;
    sqlite3(&cli, "DELETE FROM audit_log WHERE id = 2");
    let removed = cli.exec(&["audit", "verify"]).await;
    assert!(!removed.status.success());
    assert!(
        removed.stdout.contains("row 2 was removed"),
        "{}",
        removed.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_every_row_as_json_lines_or_csv() {
    let cli = real_history().await;
    let jsonl = cli
        .exec(&["audit", "export", "--format", "jsonl"])
        .await
        .ok();
    let mut rows: Vec<serde_json::Value> = jsonl
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The export ends with the log's checkpoint, and every row carries its seal.
    let end = rows.pop().unwrap();
    assert_eq!(end["checkpoint"]["size"], rows.len(), "{end}");
    assert!(rows
        .iter()
        .all(|r| r["mac"].as_str().map(str::len) == Some(64)));
    assert!(rows
        .iter()
        .any(|r| r["action"] == "reject" && r["detail"] == "never promise, refunds"));
    assert!(rows.iter().any(|r| r["action"] == "approve dispatched"));

    let csv = cli.exec(&["audit", "export", "--format", "csv"]).await.ok();
    let mut lines = csv.stdout.split("\r\n");
    assert_eq!(
        lines.next().unwrap(),
        "id,at,actor,item_id,decision_id,action,version,digest,outcome,detail,view_id"
    );
    // The reason holds a comma: quoted, so a spreadsheet keeps it in one cell.
    assert!(
        csv.stdout.contains(",\"never promise, refunds\","),
        "{}",
        csv.stdout
    );
    assert_eq!(csv.stdout.matches("\r\n").count(), rows.len() + 1);

    // --since in the future leaves no row: only the checkpoint line.
    let none = cli
        .exec(&["audit", "export", "--since", "2999-01-01"])
        .await
        .ok();
    assert_eq!(none.stdout.lines().count(), 1, "{}", none.stdout);
    assert!(none.stdout.starts_with("{\"fromRow\""), "{}", none.stdout);
}
