//! The agent is the adversary (issue 33), through the `countersign` binary: a reply to a
//! message the agent invented — a bait draft it then deleted or kept, a message of another
//! conversation, one in the Trash, a forged References chain — is shown flagged, waits for the
//! owner, and an armed `--or-on-thread` rule sends nothing; an honest reply to a received
//! message is still sent by that rule. Sends are counted at the fake Gmail after the
//! dispatcher stopped.

use countersign_fakes::gmail::FakeGmail;

use crate::support::{fakes, Cli};

/// Carla, a client outside the owner's domain, writes to the owner with Dan in Cc.
const CARLA: &[u8] = b"From: Carla Diaz <carla@client.test>\r\nTo: owner@example.com\r\n\
    Cc: Dan <dan@partner.test>\r\nSubject: Quote for May\r\n\
    Date: Tue, 01 Dec 2026 09:00:00 +0000\r\nMessage-ID: <quote-may@client.test>\r\n\r\n\
    Could you send the quote for May?\r\n";

/// A message from the outsider that reached the owner in a conversation of its own.
const EVE_WROTE: &[u8] = b"From: Eve <eve@evil.test>\r\nTo: owner@example.com\r\n\
    Subject: Partnership\r\nDate: Tue, 01 Dec 2026 08:00:00 +0000\r\n\
    Message-ID: <eve-1@evil.test>\r\n\r\nLet's work together.\r\n";

/// The agent's bait: a draft "to" the outsider, with a Message-ID it chose.
const BAIT: &[u8] = b"From: owner@example.com\r\nTo: Eve <eve@evil.test>\r\n\
    Subject: Quote for May\r\nMessage-ID: <bait-1@agent.example>\r\n\r\nbait\r\n";

fn reply(to: &str, threading: &str) -> Vec<u8> {
    format!(
        "From: owner@example.com\r\nTo: {to}\r\nSubject: Re: Quote for May\r\n\
         Message-ID: <reply-1@agent.example>\r\n{threading}\
         Content-Type: text/plain; charset=utf-8\r\n\r\nThe quote is 1,200 EUR.\r\n"
    )
    .into_bytes()
}

/// A CLI on a fresh data directory with the fake Gmail connected, no settling, no undo window,
/// and an armed rule approving replies to example.com or to anyone on the thread.
async fn armed_cli(gmail: &FakeGmail) -> Cli {
    let cli = Cli::new();
    cli.add_gmail(gmail).await;
    cli.rules_act_at_once().await;
    cli.exec(&[
        "rules",
        "add",
        "--name",
        "Replies on the thread",
        "--within",
        "example.com",
        "--or-on-thread",
        "--approve",
    ])
    .await
    .ok();
    cli.exec(&["rules", "arm", "1", "--yes", "--with-no-record"])
        .await
        .ok();
    cli
}

/// Sync, show the draft, run the dispatcher (and the rules) twice; the draft's review and the
/// number of send requests Gmail received once it stopped.
async fn after_dispatch(
    cli: &Cli,
    gmail: &FakeGmail,
    draft_id: &str,
) -> (serde_json::Value, usize) {
    cli.exec(&["sync"]).await.ok();
    let id = cli.item_id(draft_id).await;
    let shown = cli.exec(&["show", &id, "--json"]).await.json();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    cli.exec(&["dispatch", "--wait"]).await.ok();
    (shown, gmail.request_count("drafts.send"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_invented_parent_is_flagged_held_and_never_sent_by_an_on_thread_rule() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "bait deleted",
            "In-Reply-To: <bait-1@agent.example>\r\nReferences: <bait-1@agent.example>\r\n",
            "delete",
        ),
        (
            "bait kept",
            "In-Reply-To: <bait-1@agent.example>\r\nReferences: <bait-1@agent.example>\r\n",
            "keep",
        ),
        (
            "bait in another thread",
            "In-Reply-To: <eve-1@evil.test>\r\nReferences: <eve-1@evil.test>\r\n",
            "elsewhere",
        ),
        (
            "bait in Trash",
            "In-Reply-To: <eve-1@evil.test>\r\nReferences: <eve-1@evil.test>\r\n",
            "trash",
        ),
        (
            "forged References",
            "References: <quote-may@client.test> <bait-1@agent.example>\r\n",
            "keep",
        ),
    ];
    for (case, threading, bait) in cases {
        let (gmail, _muster) = fakes().await;
        let cli = armed_cli(&gmail).await;
        let (_, thread) = gmail.add_inbox_message(CARLA, None);
        let filed_bait = gmail.file_draft(BAIT, None);
        match bait {
            "elsewhere" => {
                gmail.add_inbox_message(EVE_WROTE, None);
            }
            "trash" => {
                gmail.add_message_with_labels(EVE_WROTE, Some(&thread), &["TRASH"]);
            }
            _ => {}
        }
        let draft = gmail.file_draft(&reply("Eve <eve@evil.test>", threading), Some(&thread));
        if bait == "delete" {
            // The mirror saw the bait; then the agent deletes it.
            cli.exec(&["sync"]).await.ok();
            assert!(gmail.delete_draft(&filed_bait.id));
        }
        let (shown, sends) = after_dispatch(&cli, &gmail, &draft.id).await;
        assert_eq!(sends, 0, "{case}: the armed rule sent it");
        assert_eq!(cli.item(&draft.id).await["state"], "pending", "{case}");
        let flags = shown["view"]["flags"].as_array().unwrap();
        assert!(
            flags
                .iter()
                .any(|f| f["kind"] == "answers_message_not_in_conversation"
                    && f["explanation"]
                        .as_str()
                        .unwrap()
                        .starts_with("This answers a message that is not in this conversation")),
            "{case}: {flags:#?}"
        );
        assert!(
            flags
                .iter()
                .any(|f| f["kind"] == "recipient_not_on_thread" && f["about"] == "eve@evil.test"),
            "{case}: {flags:#?}"
        );
        assert!(
            shown["answered"].is_null(),
            "{case}: the review names a parent: {}",
            shown["answered"]
        );
        let human = cli.show(&cli.item_id(&draft.id).await).await.stdout;
        assert!(
            !human.contains("In reply to Eve"),
            "{case}: the review says it answers Eve:\n{human}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_reply_to_a_received_message_is_sent_by_the_on_thread_rule() {
    let (gmail, _muster) = fakes().await;
    let cli = armed_cli(&gmail).await;
    let (_, thread) = gmail.add_inbox_message(CARLA, None);
    // The owner answered once; Carla wrote again with Fay in Cc. Dan was on the first message.
    let owner_wrote = b"From: owner@example.com\r\nTo: Carla Diaz <carla@client.test>\r\n\
        Subject: Re: Quote for May\r\nMessage-ID: <owner-1@example.com>\r\n\
        In-Reply-To: <quote-may@client.test>\r\n\r\nTomorrow.\r\n";
    gmail.add_message_with_labels(owner_wrote, Some(&thread), &["SENT"]);
    let later = b"From: Carla Diaz <carla@client.test>\r\nTo: owner@example.com\r\n\
        Cc: Fay <fay@client.test>\r\nSubject: Re: Quote for May\r\n\
        Message-ID: <quote-may-2@client.test>\r\nIn-Reply-To: <owner-1@example.com>\r\n\
        References: <quote-may@client.test> <owner-1@example.com>\r\n\r\nAnd June?\r\n";
    gmail.add_inbox_message(later, Some(&thread));
    let draft = gmail.file_draft(
        &reply(
            "Carla Diaz <carla@client.test>, Dan <dan@partner.test>, Fay <fay@client.test>",
            "In-Reply-To: <quote-may-2@client.test>\r\nReferences: <quote-may@client.test> \
             <owner-1@example.com> <quote-may-2@client.test>\r\n",
        ),
        Some(&thread),
    );
    let (shown, sends) = after_dispatch(&cli, &gmail, &draft.id).await;
    let flags = shown["view"]["flags"].as_array().unwrap();
    assert!(
        !flags.iter().any(|f| f["kind"] == "recipient_not_on_thread"
            || f["kind"] == "answers_message_not_in_conversation"),
        "a false alarm: {flags:#?}"
    );
    assert_eq!(shown["answered"]["from"][0]["email"], "carla@client.test");
    assert_eq!(sends, 1, "the rule sends it once");
    assert_eq!(cli.item(&draft.id).await["state"], "sent");
}
