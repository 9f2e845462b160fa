//! `history` lists what was decided, narrowed by kind and text, and prints the exact bytes one
//! decision sent; `agents` prints the figures per sender.

use crate::support::{fakes, reply, Cli};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_lists_sent_and_rejected_drafts_filters_them_and_prints_the_bytes_that_left() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let sent_raw = reply(1, "Yes, Tuesday works.");
    let sent = gmail.file_draft(&sent_raw, None);
    let rejected = gmail.file_draft(&reply(2, "We will refund you twice."), None);
    let undecided = gmail.file_draft(&reply(3, "Not decided."), None);
    cli.exec(&["sync"]).await.ok();
    let sent_id = cli.item_id(&sent.id).await;
    let rejected_id = cli.item_id(&rejected.id).await;
    let undecided_id = cli.item_id(&undecided.id).await;
    cli.exec(&["settings", "set", "undo-window", "0"])
        .await
        .ok();
    cli.show(&sent_id).await;
    cli.exec(&["approve", &sent_id, "--no-undo"]).await.ok();
    cli.exec(&["reject", &rejected_id, "--reason", "never promise refunds"])
        .await
        .ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();

    let all = cli.exec(&["history", "--json"]).await.ok().json();
    let all = all.as_array().unwrap();
    let items: Vec<String> = all.iter().map(|e| e["itemId"].to_string()).collect();
    assert_eq!(items, vec![rejected_id.clone(), sent_id.clone()], "{all:?}");
    assert!(!items.contains(&undecided_id));
    assert_eq!(all[0]["kinds"], serde_json::json!(["rejected"]));
    assert_eq!(all[0]["reason"], "never promise refunds");
    assert_eq!(all[0]["actor"], "owner via cli");
    assert_eq!(all[1]["kinds"], serde_json::json!(["sent"]));
    assert_eq!(all[1]["finalState"], "sent");

    let only_rejected = cli
        .exec(&["history", "--kind", "rejected", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(only_rejected.as_array().unwrap().len(), 1);
    assert_eq!(only_rejected[0]["itemId"].to_string(), rejected_id);
    let searched = cli
        .exec(&["history", "--search", "TUESDAY", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(
        searched.as_array().unwrap().len(),
        0,
        "the body is not searched"
    );
    let searched = cli
        .exec(&["history", "--search", "refunds", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(searched[0]["itemId"].to_string(), rejected_id);
    let text = cli.exec(&["history", "--limit", "1"]).await.ok().stdout;
    assert!(text.contains("rejected"), "{text}");
    assert!(text.contains("never promise refunds"), "{text}");
    assert!(!text.contains("Question 1"), "{text}");

    // The bytes that left, as they are: they hash to the digest the record names.
    let decision = all[1]["decisionId"].to_string();
    let bytes = cli
        .exec(&["history", "--bytes", &decision])
        .await
        .ok()
        .stdout;
    assert_eq!(bytes.as_bytes(), sent_raw.as_slice());
    assert_eq!(
        sha256sum(bytes.as_bytes()),
        all[1]["digest"].as_str().unwrap()
    );
    let refused = cli.exec(&["history", "--bytes", "999"]).await;
    assert!(!refused.status.success());
    assert!(refused.stderr.contains("cannot find"), "{}", refused.stderr);

    let agents = cli.exec(&["agents", "--json"]).await.ok().json();
    assert_eq!(agents.as_array().unwrap().len(), 1, "{agents}");
    assert_eq!(agents[0]["agent"], "owner@example.com");
    assert_eq!(agents[0]["approved"], 1);
    assert_eq!(agents[0]["rejected"], 1);
    assert_eq!(agents[0]["byRule"], 0);
    let table = cli.exec(&["agents"]).await.ok().stdout;
    assert!(table.starts_with("account"), "{table}");
    assert!(table.contains("owner@example.com"), "{table}");
}

/// The hex sha256 of `bytes`, as `sha256sum` prints it (what the docs tell owners to run).
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
