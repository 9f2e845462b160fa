//! `rules add` in shadow, `rules test` beside the owner's own decisions, `rules arm`, and a
//! matching new draft sent once by the rule, the audit naming the rule and its version.

use crate::support::{fakes, question, Cli};

/// A threaded reply to Ana (a reply without In-Reply-To is flagged, and flags hold rules).
fn threaded(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <rule-reply-{n}@agent.example>\r\n\
         In-Reply-To: <question-{n}@example.com>\r\nReferences: <question-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_is_tested_against_the_history_then_armed_and_sends_a_new_draft_once() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    cli.rules_act_at_once().await;
    // A recorded history: three short replies approved, one rejected, one long one approved.
    let mut drafts = Vec::new();
    for n in 1..=4 {
        drafts.push(gmail.file_draft(
            &threaded(n, "Yes, Tuesday works."),
            Some(&question(&gmail, n)),
        ));
    }
    let long = gmail.file_draft(
        &threaded(5, &"Many words here. ".repeat(20)),
        Some(&question(&gmail, 5)),
    );
    cli.exec(&["sync"]).await.ok();
    for draft in &drafts[..3] {
        let id = cli.item_id(&draft.id).await;
        cli.show(&id).await;
        cli.exec(&["approve", &id]).await.ok();
    }
    let rejected = cli.item_id(&drafts[3].id).await;
    cli.exec(&["reject", &rejected, "--reason", "not Tuesday"])
        .await
        .ok();
    let long_id = cli.item_id(&long.id).await;
    cli.show(&long_id).await;
    cli.exec(&["approve", &long_id]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();

    let added = cli
        .exec(&[
            "rules",
            "add",
            "--name",
            "Short replies to example.com",
            "--within",
            "example.com",
            "--no-attachments",
            "--max-words",
            "30",
            "--approve",
        ])
        .await
        .ok();
    assert!(added.stdout.contains("in shadow"), "{}", added.stdout);
    let tested = cli.exec(&["rules", "test", "1"]).await.ok();
    assert!(
        tested
            .stdout
            .contains("would have approved 4; you approved 3, edited 0, rejected 1"),
        "{}",
        tested.stdout
    );
    assert!(
        tested.stdout.contains(&format!("! item {rejected:>4}")),
        "the disagreement is marked: {}",
        tested.stdout
    );
    assert!(
        !tested.stdout.contains(&format!("item {long_id:>4}")),
        "too long to match"
    );

    // In shadow, a new matching draft waits for the owner.
    let shadowed = gmail.file_draft(&threaded(6, "Shadowed."), Some(&question(&gmail, 6)));
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&shadowed.id), 0, "shadow never sends");

    // Now the rule has a record (the shadowed draft): without a terminal and without --yes,
    // arming is refused for want of the owner's yes (before that draft, it was refused for
    // having no record, which says nothing about --yes).
    let unconfirmed = cli.exec(&["rules", "arm", "1"]).await;
    assert!(!unconfirmed.status.success());
    assert!(
        unconfirmed
            .stderr
            .contains("cannot arm rule 1: not confirmed (answer y, or pass --yes)"),
        "{}",
        unconfirmed.stderr
    );

    let armed = cli.exec(&["rules", "arm", "1", "--yes"]).await.ok();
    assert!(armed.stdout.contains("Armed"), "{}", armed.stdout);
    let new = gmail.file_draft(&threaded(7, "See you Tuesday."), Some(&question(&gmail, 7)));
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&new.id), 1, "sent once, by the rule");
    // The shadowed draft was judged in shadow: arming does not reach back to it.
    assert_eq!(gmail.send_requests(&shadowed.id), 0);

    let new_id = cli.item_id(&new.id).await;
    let audit = cli.exec(&["audit", "export"]).await.ok();
    let by_rule: Vec<serde_json::Value> = audit
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|row: &serde_json::Value| {
            row["itemId"] == new_id.parse::<i64>().unwrap() && row["action"] == "approve"
        })
        .collect();
    assert_eq!(by_rule.len(), 1, "{}", audit.stdout);
    assert_eq!(by_rule[0]["actor"], "rule:1@1");
    let verified = cli.exec(&["audit", "verify"]).await.ok();
    assert!(verified.stdout.starts_with("The audit log is intact"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_attachments_rule_never_sends_an_inline_pdf_and_arming_with_no_record_asks() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    cli.rules_act_at_once().await;
    cli.exec(&[
        "rules",
        "add",
        "--name",
        "Plain replies",
        "--within",
        "example.com",
        "--no-attachments",
        "--approve",
    ])
    .await
    .ok();

    // No draft has been judged: nothing shows what the rule would do, and --yes is not enough.
    let refused = cli.exec(&["rules", "arm", "1", "--yes"]).await;
    assert!(!refused.status.success());
    assert!(
        refused
            .stderr
            .contains("cannot arm rule 1: it has no record")
            && refused.stderr.contains("--with-no-record"),
        "{}",
        refused.stderr
    );
    let listed = cli.exec(&["rules", "list"]).await.ok();
    assert!(!listed.stdout.contains("ARMED"), "{}", listed.stdout);
    let armed = cli
        .exec(&["rules", "arm", "1", "--with-no-record"])
        .await
        .ok();
    assert!(armed.stdout.contains("Armed"), "{}", armed.stdout);

    // The agent attaches the customer list as an inline part.
    let inline_pdf = "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question 1\r\nMessage-ID: <rule-reply-1@agent.example>\r\n\
         In-Reply-To: <question-1@example.com>\r\nReferences: <question-1@example.com>\r\n\
         Content-Type: multipart/mixed; boundary=\"p\"\r\n\r\n--p\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nYes, Tuesday works.\r\n--p\r\n\
         Content-Type: application/pdf; name=\"customers.pdf\"\r\n\
         Content-Disposition: inline; filename=\"customers.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJcfsj6IK\r\n--p--\r\n";
    let smuggled = gmail.file_draft(inline_pdf.as_bytes(), Some(&question(&gmail, 1)));
    let plain = gmail.file_draft(
        &threaded(2, "Yes, Tuesday works."),
        Some(&question(&gmail, 2)),
    );
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&plain.id), 1, "the rule works");
    assert_eq!(
        gmail.send_requests(&smuggled.id),
        0,
        "an inline PDF is an attachment: the rule leaves it to the owner"
    );
    let id = cli.item_id(&smuggled.id).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.ok();
    assert!(shown.stdout.contains("customers.pdf"), "{}", shown.stdout);
}

#[tokio::test]
async fn a_rule_moved_first_decides_and_a_duplicate_lands_last_in_shadow() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    cli.exec(&["settings", "set", "rule-settle", "0"])
        .await
        .ok();
    for (name, action) in [
        ("Replies to example.com", "--approve"),
        ("Ask me about Ana", "--hold"),
    ] {
        cli.exec(&[
            "rules",
            "add",
            "--name",
            name,
            "--within",
            "example.com",
            action,
        ])
        .await
        .ok();
    }
    for id in ["1", "2"] {
        cli.exec(&["rules", "arm", id, "--with-no-record"])
            .await
            .ok();
    }
    let moved = cli.exec(&["rules", "move", "2", "--to", "1"]).await.ok();
    let first = moved.stdout.lines().next().unwrap_or_default();
    assert!(first.contains("Ask me about Ana"), "{}", moved.stdout);

    let reply = gmail.file_draft(
        &threaded(1, "Yes, Tuesday works."),
        Some(&question(&gmail, 1)),
    );
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    let id = cli.item_id(&reply.id).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.ok();
    assert!(
        shown.stdout.contains("\"pending\""),
        "the hold rule, now first, left it to the owner: {}",
        shown.stdout
    );
    assert_eq!(gmail.send_requests(&reply.id), 0);

    let copied = cli.exec(&["rules", "duplicate", "1"]).await.ok();
    assert!(
        copied.stdout.contains("Replies to example.com (copy)") && copied.stdout.contains("shadow"),
        "{}",
        copied.stdout
    );
}
