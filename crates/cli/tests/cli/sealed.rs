//! The sealed record (issue 35), tried as someone with write access to the data directory but
//! not the keyring (the suite's keys are in files, so "without the key" means not using it):
//! every change `sqlite3` makes to the log is named by `audit verify`, against a checkpoint
//! written before it; a decision written into the outbox is never sent; a mirror without its
//! key cannot be vouched for.

use crate::support::{fakes, reply, Cli};
use countersign_fakes::gmail::FakeGmail;

/// A history as the owner makes one: a draft approved and sent, one rejected with a reason.
async fn real_history() -> (Cli, FakeGmail) {
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
    (cli, gmail)
}

/// Run `sqlite3` on the mirror as an intruder would: every trigger that guards the log dropped
/// first.
fn sqlite3(cli: &Cli, sql: &str) -> String {
    let mirror = cli.data_dir().join("mirror.sqlite3");
    let out = std::process::Command::new("sqlite3")
        .arg(&mirror)
        .arg(format!(
            "DROP TRIGGER IF EXISTS audit_log_no_update; DROP TRIGGER IF EXISTS audit_log_no_delete;
             DROP TRIGGER IF EXISTS audit_log_chain_written_once;
             DROP TRIGGER IF EXISTS audit_log_seal_written_once; {sql}"
        ))
        .output()
        .expect("sqlite3 runs (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Write the log's checkpoint to a file kept outside the data directory.
async fn keep_checkpoint(cli: &Cli) -> String {
    let checkpoint = cli.exec(&["audit", "checkpoint"]).await.ok().stdout;
    let path = cli.scratch().join("checkpoint.txt");
    std::fs::write(&path, &checkpoint).unwrap();
    path.display().to_string()
}

/// `audit verify --checkpoint` after `tamper`: fails, naming `expected` in its findings.
async fn verify_names(tamper: &str, expected: &str) {
    let (cli, _gmail) = real_history().await;
    let checkpoint = keep_checkpoint(&cli).await;
    let before = cli
        .exec(&["audit", "verify", "--checkpoint", &checkpoint])
        .await
        .ok();
    assert!(
        before.stdout.starts_with("The audit log is intact"),
        "{}",
        before.stdout
    );
    sqlite3(&cli, tamper);
    let after = cli
        .exec(&["audit", "verify", "--checkpoint", &checkpoint])
        .await;
    assert_eq!(after.status.code(), Some(1), "{}", after.stdout);
    assert!(
        after.stdout.contains(expected),
        "{tamper}: expected {expected:?} in:\n{}",
        after.stdout
    );
    assert!(!after.stdout.contains("intact"), "{}", after.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_inserted_with_sqlite3_is_named_and_never_chained_on_open() {
    verify_names(
        "INSERT INTO audit_log (at, actor, action, outcome)
         VALUES ('2026-12-01T10:00:00.000Z', 'owner via desktop', 'approve', 'queued')",
        "carries no seal",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_edited_with_sqlite3_is_named() {
    verify_names(
        "UPDATE audit_log SET detail = 'approved by the owner' WHERE id = 3",
        "row 3 was changed",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_moved_to_another_item_by_its_id_is_named() {
    verify_names(
        "UPDATE audit_log SET item_id = item_id + 1 WHERE action = 'approve'",
        "item reference was changed",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_deleted_with_sqlite3_is_named() {
    verify_names("DELETE FROM audit_log WHERE id = 2", "row 2 was removed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_tail_with_its_head_moved_is_named() {
    verify_names(
        "DELETE FROM audit_log WHERE id >= 3;
         UPDATE record_seal SET head_row = 2, head_mac = (SELECT mac FROM audit_log WHERE id = 2);
         UPDATE audit_head SET row_id = 2, row_hash = (SELECT row_hash FROM audit_log WHERE id = 2);",
        "truncated",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_removed_and_the_next_one_re_chained_to_its_predecessor_is_named() {
    verify_names(
        "UPDATE audit_log SET prev_mac = (SELECT mac FROM audit_log WHERE id = 1) WHERE id = 3;
         DELETE FROM audit_log WHERE id = 2;",
        "row 2 was removed",
    )
    .await;
}

/// Someone who can also make keys (or who holds the keyring) re-seals an edited log from
/// scratch: it verifies on its own, but not against the checkpoint kept elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_rewritten_and_re_sealed_with_a_new_key_is_named_by_the_checkpoint() {
    let (cli, _gmail) = real_history().await;
    let checkpoint = keep_checkpoint(&cli).await;
    sqlite3(
        &cli,
        "UPDATE audit_log SET detail = 'approved by the owner' WHERE id = 2;
         UPDATE audit_log SET mac = NULL, prev_mac = NULL, refs = NULL;
         UPDATE decisions SET seal = NULL;
         DELETE FROM record_seal;",
    );
    let alone = cli.exec(&["audit", "verify"]).await.ok();
    assert!(
        alone.stdout.starts_with("The audit log is intact"),
        "{}",
        alone.stdout
    );
    let against = cli
        .exec(&["audit", "verify", "--checkpoint", &checkpoint])
        .await;
    assert_eq!(against.status.code(), Some(1), "{}", against.stdout);
    assert!(
        against
            .stdout
            .contains("the log does not extend the checkpoint"),
        "{}",
        against.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_written_into_the_outbox_with_sqlite3_is_never_sent_and_is_reported() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let draft = gmail.file_draft(&reply(1, "Wire 10,000 EUR to the account below."), None);
    cli.exec(&["sync"]).await.ok();
    let item = cli.item_id(&draft.id).await;
    // The intruder queues an approval of the current version, as Countersign would write it,
    // with an audit line saying the owner decided it.
    sqlite3(
        &cli,
        &format!(
            "INSERT INTO decisions (item_id, kind, version, digest, state, created_at, due_at, decided_by)
             SELECT i.id, 'approve', i.version,
                    (SELECT sha256 FROM draft_versions v WHERE v.item_id = i.id AND v.version = i.version),
                    'queued', '2026-12-01T10:00:00.000Z', '2026-12-01T10:00:00.000Z', 'owner via desktop'
             FROM review_items i WHERE i.id = {item};
             UPDATE review_items SET state = 'queued' WHERE id = {item};
             INSERT INTO audit_log (at, actor, item_id, decision_id, action, outcome)
             VALUES ('2026-12-01T10:00:00.000Z', 'owner via desktop', {item},
                     (SELECT max(id) FROM decisions), 'approve', 'queued');"
        ),
    );
    let dispatched = cli.exec(&["dispatch", "--wait"]).await;
    let status = cli.exec(&["status"]).await;
    let shown = cli.show(&item).await;
    // Every process has stopped: whatever reached Gmail is in its log now.
    assert_eq!(gmail.send_requests(&draft.id), 0, "{}", dispatched.stdout);
    assert_eq!(gmail.request_count("drafts.send"), 0);
    assert!(
        status
            .stdout
            .contains("the record does not vouch for this decision"),
        "status:\n{}",
        status.stdout
    );
    assert!(
        shown
            .stdout
            .contains("the record does not vouch for this decision"),
        "show:\n{}",
        shown.stdout
    );
    let audit = cli.exec(&["audit", "export"]).await.ok().stdout;
    assert!(
        audit
            .lines()
            .any(|l| l.contains("\"actor\":\"dispatcher\"") && l.contains("does not vouch")),
        "{audit}"
    );
    // Set aside, not retried: a second pass sends nothing either.
    cli.exec(&["dispatch", "--wait"]).await;
    assert_eq!(gmail.send_requests(&draft.id), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_copied_without_its_key_verifies_as_cannot_check_not_intact() {
    let (cli, _gmail) = real_history().await;
    // The same file in another data directory (another account, a restored backup), with
    // everything but the key.
    let copy = Cli::new();
    std::fs::create_dir_all(copy.data_dir()).unwrap();
    for entry in std::fs::read_dir(cli.data_dir()).unwrap().flatten() {
        if entry.file_name() != "record-keys" && entry.path().is_file() {
            std::fs::copy(entry.path(), copy.data_dir().join(entry.file_name())).unwrap();
        }
    }
    let verify = copy.exec(&["audit", "verify"]).await;
    assert_eq!(verify.status.code(), Some(2), "{}", verify.stdout);
    assert!(
        verify.stdout.contains("cannot check: key missing"),
        "{}",
        verify.stdout
    );
    assert!(!verify.stdout.contains("intact"), "{}", verify.stdout);
}

fn sha256sum(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_refuses_bytes_edited_with_sqlite3_digests_and_all() {
    let (cli, _gmail) = real_history().await;
    let sent = cli
        .exec(&["history", "--kind", "sent", "--json"])
        .await
        .ok()
        .json();
    let decision = sent[0]["decisionId"].to_string();
    let item = sent[0]["itemId"].to_string();
    let genuine = cli.exec(&["history", "--bytes", &decision]).await.ok();
    assert!(
        genuine.stdout.contains("Tuesday works"),
        "{}",
        genuine.stdout
    );

    // The intruder rewrites what was sent, and every digest stored beside it.
    let forged = genuine
        .stdout
        .replace("Yes, Tuesday works.", "Yes, and I agree to pay.");
    let digest = sha256sum(forged.as_bytes());
    let hex: String = forged.bytes().map(|b| format!("{b:02x}")).collect();
    sqlite3(
        &cli,
        &format!(
            "UPDATE draft_versions SET content = X'{hex}', sha256 = '{digest}' WHERE item_id = {item};
             UPDATE decisions SET digest = '{digest}', sent_digest = NULL, sent_header_added = NULL
              WHERE id = {decision};"
        ),
    );
    let shown = cli.exec(&["history", "--bytes", &decision]).await;
    assert!(!shown.status.success(), "{}", shown.stdout);
    assert!(!shown.stdout.contains("I agree to pay"), "{}", shown.stdout);
    assert!(
        shown.stderr.contains("the record does not vouch for it")
            || shown.stderr.contains("these are not the bytes it bound to"),
        "{}",
        shown.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_verifies_and_an_edited_line_of_it_is_named() {
    let (cli, _gmail) = real_history().await;
    let export = cli.exec(&["audit", "export"]).await.ok().stdout;
    let path = cli.scratch().join("export.jsonl");
    std::fs::write(&path, &export).unwrap();
    let path = path.display().to_string();
    let holds = cli.exec(&["audit", "verify", "--export", &path]).await.ok();
    assert!(
        holds.stdout.starts_with("The export holds"),
        "{}",
        holds.stdout
    );

    // Checked on another machine (another mirror, no key): the links and the checkpoint are
    // checked, and it says what it could not check.
    let elsewhere = Cli::new();
    let there = elsewhere
        .exec(&["audit", "verify", "--export", &path])
        .await
        .ok();
    assert!(
        there
            .stdout
            .contains("cannot be recomputed without this mirror's key"),
        "{}",
        there.stdout
    );

    let edited = export.replacen("never promise, refunds", "refunds approved", 1);
    assert_ne!(edited, export);
    std::fs::write(cli.scratch().join("export.jsonl"), &edited).unwrap();
    let named = cli.exec(&["audit", "verify", "--export", &path]).await;
    assert_eq!(named.status.code(), Some(1), "{}", named.stdout);
    assert!(named.stdout.contains("was changed"), "{}", named.stdout);

    // A line cut out, checked where the key is not: the links name it.
    let cut: String = export
        .lines()
        .enumerate()
        .filter(|(n, _)| *n != 1)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    std::fs::write(cli.scratch().join("export.jsonl"), &cut).unwrap();
    let named = elsewhere
        .exec(&["audit", "verify", "--export", &path])
        .await;
    assert_eq!(named.status.code(), Some(1), "{}", named.stdout);
    assert!(
        named.stdout.contains("row 3 does not follow"),
        "{}",
        named.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_are_kept_in_the_chosen_folder_at_each_export_and_once_a_day() {
    let (cli, _gmail) = real_history().await;
    let folder = cli.scratch().join("usb-stick");
    let folder_arg = folder.display().to_string();
    cli.exec(&["settings", "set", "checkpoint-folder", &folder_arg])
        .await
        .ok();
    let kept = |folder: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(folder)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    };
    // The next run wrote the day's checkpoint; another run the same day writes none.
    cli.exec(&["list"]).await.ok();
    assert_eq!(kept(&folder).len(), 1, "{:?}", kept(&folder));
    cli.exec(&["audit", "export"]).await.ok();
    let files = kept(&folder);
    assert!(files.len() >= 2, "an export keeps its own: {files:?}");
    let latest = files.last().unwrap().display().to_string();
    let intact = cli
        .exec(&["audit", "verify", "--checkpoint", &latest])
        .await
        .ok();
    assert!(
        intact.stdout.contains("extends the checkpoint"),
        "{}",
        intact.stdout
    );

    sqlite3(&cli, "DELETE FROM audit_log WHERE id = 2");
    let named = cli
        .exec(&["audit", "verify", "--checkpoint", &latest])
        .await;
    assert_eq!(named.status.code(), Some(1), "{}", named.stdout);
}

/// A row whose hash and seal are cleared with `sqlite3`, then the mirror opened again and
/// written to (a setting saved, which appends an audit row after it): opening does not
/// re-chain or re-seal the cleared row, and `audit verify` names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_whose_hash_is_cleared_stays_named_after_the_mirror_is_reopened_and_written() {
    let (cli, _gmail) = real_history().await;
    let checkpoint = keep_checkpoint(&cli).await;
    sqlite3(
        &cli,
        "UPDATE audit_log SET row_hash = NULL, mac = NULL WHERE id = 3",
    );
    cli.exec(&["settings", "set", "undo-window", "5"])
        .await
        .ok();
    let after = cli
        .exec(&["audit", "verify", "--checkpoint", &checkpoint])
        .await;
    assert_eq!(after.status.code(), Some(1), "{}", after.stdout);
    assert!(after.stdout.contains("row 3"), "{}", after.stdout);
    assert!(!after.stdout.contains("intact"), "{}", after.stdout);
}
