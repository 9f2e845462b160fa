//! `rules add --label NAME`: the rule keeps the label's id, `rules show` names the label, and
//! armed it sends only the draft carrying the label; an unknown label is refused.

use crate::support::{fakes, question, Cli};

fn threaded(n: usize) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <label-reply-{n}@agent.example>\r\n\
         In-Reply-To: <question-{n}@example.com>\r\n\
         References: <question-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nYes, Tuesday works.\r\n"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_scoped_rule_from_the_command_line_sends_only_the_labelled_draft() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    cli.rules_act_at_once().await;
    let billing = gmail.create_label("Agents/Billing");

    // A label Gmail does not have is refused, with what to do.
    let unknown = cli
        .exec(&[
            "rules",
            "add",
            "--name",
            "x",
            "--label",
            "Agents/Nobody",
            "--approve",
        ])
        .await;
    assert!(!unknown.status.success());
    assert!(
        unknown.stderr.contains("no Gmail label of that name"),
        "{}",
        unknown.stderr
    );

    cli.exec(&["sync"]).await.ok();
    let added = cli
        .exec(&[
            "rules",
            "add",
            "--name",
            "Billing agent",
            "--label",
            "agents/billing",
            "--within",
            "example.com",
            "--approve",
        ])
        .await
        .ok();
    assert!(added.stdout.contains("in shadow"), "{}", added.stdout);
    let shown = cli.exec(&["rules", "show", "1"]).await.ok();
    assert!(
        shown.stdout.contains("scope: label Agents/Billing"),
        "{}",
        shown.stdout
    );
    let as_json = cli
        .exec(&["rules", "show", "1", "--json"])
        .await
        .ok()
        .json();
    assert_eq!(as_json["definition"]["scope"]["label"], billing.as_str());
    cli.exec(&["rules", "arm", "1", "--with-no-record"])
        .await
        .ok();

    let labelled =
        gmail.file_draft_with_labels(&threaded(1), Some(&question(&gmail, 1)), &[&billing]);
    let unlabelled = gmail.file_draft(&threaded(2), Some(&question(&gmail, 2)));
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(
        gmail.send_requests(&labelled.id),
        1,
        "the labelled draft is sent by the rule"
    );
    assert_eq!(
        gmail.send_requests(&unlabelled.id),
        0,
        "the other waits for the owner"
    );
}
