//! `sync`, then `list` / `show` as the owner reads them: a Gmail draft with its headers, text
//! and attachments; a muster reply with what it answers, its route chain and the plugin's
//! refusal.

use crate::support::{fakes, reply_with_attachment, Cli};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_gmail_draft_shows_its_headers_text_and_attachment_list() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let draft = gmail.file_draft(&reply_with_attachment(1, "The invoice is attached."), None);

    let synced = cli.exec(&["sync", "--json"]).await.json();
    assert_eq!(synced[0]["ok"], true);
    assert_eq!(synced[0]["newItems"], 1);

    let item = cli.item(&draft.id).await;
    assert_eq!(item["state"], "pending");
    assert_eq!(item["subject"], "Re: Invoice 1");
    let id = item["id"].to_string();
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    let view = &shown["view"];
    assert_eq!(view["subject"], "Re: Invoice 1");
    assert_eq!(view["to"][0]["email"], "ana@example.com");
    assert_eq!(view["to"][0]["name"], "Ana Lima");
    assert_eq!(view["from"][0]["email"], "owner@example.com");
    assert_eq!(view["inReplyTo"][0], "parent-1@example.com");
    assert_eq!(
        view["textBody"].as_str().unwrap().trim(),
        "The invoice is attached."
    );
    assert!(view["htmlBody"]
        .as_str()
        .unwrap()
        .contains("The invoice is attached."));
    let attachments = view["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 1, "{attachments:?}");
    assert_eq!(attachments[0]["fileName"], "invoice-1.pdf");
    assert_eq!(attachments[0]["sniffedType"], "application/pdf");
    assert!(view["flags"].is_array());
    assert!(view["warnings"].is_array());
    assert_eq!(shown["routes"], serde_json::json!([]));
    assert_eq!(shown["versions"].as_array().unwrap().len(), 1);
    assert_eq!(shown["sendRefusal"], serde_json::Value::Null);
    // What may be done is core's word, printed as it is (the CLI keeps no rule of its own).
    let actions: Vec<(String, bool)> = shown["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap().to_string(),
                a["allowed"] == true,
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("approve".to_string(), true),
            ("reject".to_string(), true),
            ("undo".to_string(), false),
            ("edit".to_string(), true),
        ]
    );

    let human = cli.exec(&["show", &id]).await.ok().stdout;
    for expected in [
        "Actions: approve, reject",
        "cannot undo: there is no decision waiting on it",
        "Re: Invoice 1",
        "Ana Lima <ana@example.com>",
        "The invoice is attached.",
        "invoice-1.pdf",
    ] {
        assert!(
            human.contains(expected),
            "{expected:?} missing from:\n{human}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_muster_reply_shows_what_it_answers_its_route_chain_and_the_plugins_refusal() {
    let (_gmail, muster) = fakes().await;
    let cli = Cli::new();
    cli.add_muster(&muster).await;
    muster.create_plugin("gmail-relay", false).unwrap();
    let relayed = muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Could you send the invoice?",
        )
        .unwrap();
    let draft = muster
        .file_draft(&relayed.route_id, "Here is the invoice.")
        .unwrap();
    cli.exec(&["sync"]).await.ok();

    let id = cli.item_id(&draft).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    assert_eq!(shown["state"], "pending");
    assert_eq!(shown["view"]["textBody"], "Here is the invoice.");
    assert_eq!(shown["view"]["answers"]["subject"], "Invoice");
    assert_eq!(
        shown["view"]["answers"]["from"][0]["email"],
        "ana@example.com"
    );
    let routes = shown["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 1);
    assert_eq!(routes[0]["state"], "relayed");

    // Approved, dispatched to muster, then refused by the plugin when it tries to send.
    cli.show(&id).await;
    cli.exec(&["approve", &id, "--no-undo"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    muster.claim(&draft).unwrap();
    muster
        .report_result(&draft, false, Some("recipient mailbox full"))
        .unwrap();
    cli.exec(&["sync"]).await.ok();

    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    assert_eq!(shown["state"], "send_failed");
    assert_eq!(shown["refusalReason"], "recipient mailbox full");
    let states: Vec<_> = shown["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(states, ["send_failed", "redraft"]);
    assert_eq!(shown["routes"][0]["reason"], "recipient mailbox full");
    let human = cli.exec(&["show", &id]).await.ok().stdout;
    assert!(human.contains("recipient mailbox full"), "{human}");
    assert!(human.contains("redraft"), "{human}");

    // The session redrafts on the route that handed the message back.
    let redraft_route = muster
        .routes(&relayed.message_id)
        .into_iter()
        .find(|r| r["state"] == "redraft")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let second = muster
        .file_draft(&redraft_route, "Here is the invoice, as a link.")
        .unwrap();
    cli.exec(&["sync"]).await.ok();
    let second_id = cli.item_id(&second).await;
    let shown = cli.exec(&["show", &second_id, "--json"]).await.json();
    let bound = shown["redraftBound"].as_str().expect("a redraft bound");
    assert!(bound.contains("redraft 1 of 2"), "{bound}");
    assert_eq!(shown["muster"]["redraftOf"], draft.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_reports_an_unreachable_account_and_still_syncs_the_others() {
    let (gmail, muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let muster_account = cli.add_muster(&muster).await;
    let draft = gmail.file_draft(&crate::support::reply(1, "Hello"), None);
    muster.set_online(false);

    let out = cli.exec(&["sync", "--json"]).await;
    assert!(out.status.success(), "one account synced: {}", out.stderr);
    let results: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let failed = results
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["account"] == muster_account["id"])
        .unwrap();
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["online"], false);
    assert!(failed["error"]
        .as_str()
        .unwrap()
        .contains("cannot reach muster"));
    cli.item(&draft.id).await;

    let accounts = cli.exec(&["account", "list", "--json"]).await.json();
    let listed = accounts
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == muster_account["id"])
        .unwrap();
    assert_eq!(listed["online"], false);
    assert!(listed["lastError"]
        .as_str()
        .unwrap()
        .contains("cannot reach muster"));

    gmail.set_online(false);
    let out = cli.exec(&["sync"]).await;
    assert!(
        !out.status.success(),
        "every account failed: {}",
        out.stdout
    );
    assert!(out.stdout.contains("offline"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_binds_to_the_version_shown_and_refuses_an_older_one() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let draft = gmail.file_draft(&crate::support::reply(1, "What I read."), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    let read = cli.exec(&["show", &id, "--json"]).await.json();
    let old_version = read["shownVersion"].as_str().unwrap().to_owned();
    let old_digest = read["shownDigest"].as_str().unwrap().to_owned();
    let human = cli.exec(&["show", &id]).await.ok().stdout;
    assert!(
        human.contains(&format!("Version: {old_version} (sha256 {old_digest})")),
        "{human}"
    );

    let newer = crate::support::reply(1, "Something else entirely.");
    gmail.update_draft(&draft.id, &newer, None).unwrap();
    cli.exec(&["sync"]).await.ok();

    let refused = cli
        .exec(&["approve", &id, "--version", &old_version, "--no-undo"])
        .await;
    assert!(!refused.status.success(), "{}", refused.stdout);
    assert!(
        refused.stderr.contains("changed since it was shown"),
        "{}",
        refused.stderr
    );
    cli.exec(&["dispatch"]).await.ok();
    assert_eq!(
        gmail.send_requests(&draft.id),
        0,
        "the unseen version was sent"
    );

    let current = cli.exec(&["show", &id, "--json"]).await.json();
    let version = current["shownVersion"].as_str().unwrap().to_owned();
    assert_ne!(version, old_version);
    let approved = cli
        .exec(&["approve", &id, "--version", &version, "--no-undo", "--json"])
        .await
        .json();
    assert_eq!(approved["version"], version.as_str());
    assert_eq!(approved["digest"], current["shownDigest"]);
    cli.exec(&["dispatch"]).await.ok();
    let sent = gmail.sent_messages();
    assert_eq!(gmail.send_requests(&draft.id), 1);
    assert_eq!(sent[0].raw, newer);

    // The decision and the send, with both digests, in `show --json`.
    let after = cli.exec(&["show", &id, "--json"]).await.json();
    let decision = &after["decisions"][0];
    assert_eq!(decision["digest"], current["shownDigest"]);
    assert_eq!(decision["sentDigest"], current["shownDigest"]);
    let audit = after["audit"].as_array().unwrap();
    assert!(
        audit
            .iter()
            .any(|a| a["outcome"] == "refused" && a["version"] == old_version.as_str()),
        "{audit:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_without_a_version_binds_to_the_version_show_printed_and_prints_its_digest() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let draft = gmail.file_draft(&crate::support::reply(2, "Hello."), None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    let approved = cli.exec(&["approve", &id]).await.ok().stdout;
    assert!(
        approved.contains(&format!(
            "Bound to version {} (sha256 {})",
            shown["shownVersion"].as_str().unwrap(),
            shown["shownDigest"].as_str().unwrap()
        )),
        "{approved}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_carries_the_message_answered_and_the_drafts_gmail_link() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    let account = cli.add_gmail(&gmail).await;
    let parent = b"From: Ana Lima <ana@example.com>\r\nTo: owner@example.com\r\n\
        Subject: Invoice 1\r\nDate: Mon, 30 Nov 2026 09:00:00 +0000\r\n\
        Message-ID: <parent-1@example.com>\r\n\r\nCould you send invoice 1 again?\r\n";
    let (_, thread) = gmail.add_inbox_message(parent, None);
    let draft = gmail.file_draft(
        &reply_with_attachment(1, "The invoice is attached."),
        Some(&thread),
    );
    cli.exec(&["sync", "--json"]).await.json();

    let id = cli.item_id(&draft.id).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    let answered = &shown["answered"];
    assert_eq!(answered["from"][0]["email"], "ana@example.com");
    assert_eq!(answered["snippetOnly"], false);
    assert_eq!(
        answered["view"]["textBody"].as_str().unwrap().trim(),
        "Could you send invoice 1 again?"
    );
    assert_eq!(answered["date"], "2026-11-30T09:00:00Z");
    let address = account["address"].as_str().unwrap();
    assert_eq!(
        shown["gmailLink"],
        format!(
            "https://mail.google.com/mail/u/{address}/#drafts?compose={}",
            draft.message_id
        )
    );

    let human = cli.exec(&["show", &id]).await.ok().stdout;
    for expected in [
        "In reply to Ana Lima <ana@example.com>",
        "> Could you send invoice 1 again?",
        "In Gmail: https://mail.google.com/mail/u/",
    ] {
        assert!(
            human.contains(expected),
            "{expected:?} missing from:\n{human}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_makes_a_new_version_that_must_be_approved_and_is_sent_exactly() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let original = crate::support::reply(1, "The agent's words.");
    let draft = gmail.file_draft(&original, None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;
    let read = cli.exec(&["show", &id, "--json"]).await.json();
    let version = read["shownVersion"].as_str().unwrap().to_owned();

    let nothing = cli.exec(&["edit", &id, "--version", &version]).await;
    assert!(!nothing.status.success());
    assert!(
        nothing.stderr.contains("say what changes"),
        "{}",
        nothing.stderr
    );

    let edited = cli
        .exec_with_stdin(
            &[
                "edit",
                &id,
                "--version",
                &version,
                "--text-file",
                "-",
                "--json",
            ],
            "The owner's words.\n",
        )
        .await
        .json();
    let new_version = edited["shownVersion"].as_str().unwrap().to_owned();
    assert_ne!(new_version, version);
    let in_gmail = gmail.draft_raw(&draft.id).unwrap();
    assert!(String::from_utf8_lossy(&in_gmail).contains("The owner's words."));
    // Only the text changed: the subject line is the agent's.
    assert!(String::from_utf8_lossy(&in_gmail).contains("Subject: Re: Question 1\r\n"));

    // The agent's version cannot be approved any more; the edited one is what leaves.
    let stale = cli
        .exec(&["approve", &id, "--version", &version, "--no-undo"])
        .await;
    assert!(!stale.status.success());
    assert!(
        stale.stderr.contains("changed since it was shown"),
        "{}",
        stale.stderr
    );
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    assert_eq!(shown["shownVersion"], new_version.as_str());
    assert_eq!(shown["editedByOwner"], true);
    cli.exec(&["approve", &id, "--version", &new_version, "--no-undo"])
        .await
        .ok();
    cli.exec(&["dispatch"]).await.ok();
    let sent = gmail.sent_messages();
    assert_eq!(gmail.send_requests(&draft.id), 1);
    assert_eq!(sent[0].raw, in_gmail);
}

/// A draft with a text part, an HTML part (a link and a remote image) and an attachment;
/// `headers` are its first header lines.
fn rich_draft(headers: &str, html: &str, attachment_base64: &str, boundary: &str) -> Vec<u8> {
    format!(
        "{headers}To: Ana <ana@example.com>\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n\
         --{boundary}\r\nContent-Type: multipart/alternative; boundary=\"alt-{boundary}\"\r\n\r\n\
         --alt-{boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
         Pay 100 EUR at the payment page.\r\n\
         --alt-{boundary}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n\
         --alt-{boundary}--\r\n\
         --{boundary}\r\nContent-Type: application/pdf; name=\"terms.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"terms.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{attachment_base64}\r\n--{boundary}--\r\n"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_prints_every_kind_of_change_and_names_a_byte_only_one() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let first = rich_draft(
        "From: Owner <owner@example.com>\r\nReply-To: owner@example.com\r\n\
         Subject: Invoice\r\nX-Campaign: spring\r\n",
        "<p>Pay 100 EUR at <a href=\"https://pay.example.com/42\">the payment page</a>.</p>\
         <img src=\"https://t.example.com/a.gif\" alt=\"\">",
        "JVBERi0xLjQKb2xk",
        "b1",
    );
    let draft = gmail.file_draft(&first, None);
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(&draft.id).await;

    // The text part stays; everything else a recipient sees or acts on changes.
    let second = rich_draft(
        "From: Owner Billing <owner@example.com>\r\nSender: agent@bots.example.net\r\n\
         Reply-To: collector@exfil.example.net\r\nCc: archive@elsewhere.example.net\r\n\
         Subject: Invoice due\r\nX-Campaign: autumn\r\n",
        "<p>Pay 900 EUR at <a href=\"https://pay.example.net/42\">the payment page</a>.</p>\
         <img src=\"https://t.example.com/b.gif\" alt=\"\">",
        "JVBERi0xLjQKbmV3",
        "b1",
    );
    gmail.update_draft(&draft.id, &second, None).unwrap();
    cli.exec(&["sync"]).await.ok();
    let shown = cli.exec(&["show", &id]).await.ok().stdout;
    for expected in [
        "Changed against the previous version",
        "From: Owner <owner@example.com> -> Owner Billing <owner@example.com>",
        "Sender: (none) -> agent@bots.example.net",
        "Reply-To: owner@example.com -> collector@exfil.example.net",
        "Subject: Invoice -> Invoice due",
        "+ cc: archive@elsewhere.example.net",
        "Attachment changed: terms.pdf (application/pdf",
        "Link \"the payment page\": https://pay.example.com/42 -> https://pay.example.net/42",
        "+ remote content https://t.example.com/b.gif",
        "- remote content https://t.example.com/a.gif",
        "Header X-Campaign: spring -> autumn",
        "HTML words: Pay [-100-]{+900+} EUR",
    ] {
        assert!(
            shown.contains(expected),
            "{expected:?} missing from:\n{shown}"
        );
    }
    assert!(
        !shown.contains("  Text: "),
        "the text part did not change:\n{shown}"
    );
    assert!(!shown.contains("No change."), "{shown}");

    // The same message with other MIME boundaries: nothing visible, yet not "no change".
    let third = String::from_utf8(second)
        .unwrap()
        .replace("b1", "other-boundary")
        .into_bytes();
    gmail.update_draft(&draft.id, &third, None).unwrap();
    cli.exec(&["sync"]).await.ok();
    let shown = cli.exec(&["show", &id]).await.ok().stdout;
    assert!(
        shown.contains(
            "Nothing a recipient sees changed: the bytes differ only in the Content-Type header \
             and in the MIME structure or encoding of the body"
        ),
        "{shown}"
    );
    assert!(!shown.contains("No change."), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_approve_sends_what_show_printed_and_names_the_never_shown() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    let shown_draft = gmail.file_draft(&crate::support::reply(1, "Shown."), None);
    let unshown_draft = gmail.file_draft(&crate::support::reply(2, "Never shown."), None);
    cli.exec(&["sync"]).await.ok();
    let shown = cli.item_id(&shown_draft.id).await;
    let unshown = cli.item_id(&unshown_draft.id).await;
    cli.show(&shown).await;

    let out = cli
        .exec(&["bulk", "approve", "--no-undo", &shown, &unshown])
        .await
        .ok();
    assert!(
        out.stdout.starts_with(&format!("1 decided: {shown}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("skipped {unshown}: you have not displayed it")),
        "{}",
        out.stdout
    );
    cli.exec(&["dispatch", "--wait"]).await.ok();
    assert_eq!(gmail.send_requests(&shown_draft.id), 1);
    assert_eq!(gmail.send_requests(&unshown_draft.id), 0);

    let rejected = cli
        .exec(&[
            "bulk",
            "reject",
            "--reason",
            "not this week",
            &unshown,
            "--json",
        ])
        .await
        .json();
    assert_eq!(rejected["decided"].as_array().unwrap().len(), 1);
    assert_eq!(rejected["skipped"], serde_json::json!([]));
}
