//! The agent is the adversary (issue 33): it writes every byte of its drafts and can create,
//! update and delete drafts at will, but cannot receive or send mail. These tests play it.
//!
//! The parent is a fact: the message a draft answers is a received or sent message of the
//! draft's own Gmail thread — never a draft (kept or deleted), never one in Trash, never one
//! found elsewhere by its Message-ID — and a draft naming anything else is flagged, with nobody
//! counted as on the thread, so a rule with `--or-on-thread` sends nothing.

use countersign_core::render::FlagKind;
use countersign_core::rules::pass::{self, Judged};
use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
use countersign_core::store::{Account, RuleMode};
use countersign_core::sync::{sync_gmail_with, Listing};
use countersign_core::ItemState;

use crate::support::{item_for, resync, sync, Env};

const THE_OWNER: &str = "owner via test";

/// Carla, a client outside the owner's domain, writes to the owner with Dan in Cc.
const CARLA: &[u8] = b"From: Carla Diaz <carla@client.test>\r\nTo: owner@example.com\r\n\
    Cc: Dan <dan@partner.test>\r\nSubject: Quote for May\r\n\
    Date: Tue, 01 Dec 2026 09:00:00 +0000\r\nMessage-ID: <quote-may@client.test>\r\n\r\n\
    Could you send the quote for May?\r\n";

/// A message from the outsider that reached the owner (another conversation).
const EVE_WROTE: &[u8] = b"From: Eve <eve@evil.test>\r\nTo: owner@example.com\r\n\
    Subject: Partnership\r\nDate: Tue, 01 Dec 2026 08:00:00 +0000\r\n\
    Message-ID: <eve-1@evil.test>\r\n\r\nLet's work together.\r\n";

/// The bait the agent files: a draft of its own, "to" the outsider, with a Message-ID it chose.
const BAIT: &[u8] = b"From: owner@example.com\r\nTo: Eve <eve@evil.test>\r\n\
    Subject: Quote for May\r\nMessage-ID: <bait-1@agent.example>\r\n\r\nbait\r\n";

/// A draft to `to`, with these threading headers.
fn reply(to: &str, threading: &str) -> Vec<u8> {
    format!(
        "From: owner@example.com\r\nTo: {to}\r\nSubject: Re: Quote for May\r\n\
         Message-ID: <reply-{}@agent.example>\r\n{threading}\
         Content-Type: text/plain; charset=utf-8\r\n\r\nThe quote is 1,200 EUR.\r\n",
        to.len() + threading.len()
    )
    .into_bytes()
}

/// An armed rule approving replies to the owner's domain or to anyone on the thread.
async fn arm_or_on_thread(env: &Env) {
    let quick = countersign_core::store::SettingsChange {
        rule_settle_secs: Some(0),
        undo_window_secs: Some(0),
        ..Default::default()
    };
    env.store
        .update_settings(&quick, "owner via test")
        .await
        .unwrap();
    let definition = RuleDefinition {
        name: "Replies on the thread".into(),
        scope: Default::default(),
        conditions: Conditions {
            recipients_within: vec!["example.com".into()],
            or_on_thread: true,
            ..Conditions::default()
        },
        action: RuleAction::Approve,
        daily_cap: None,
    };
    let rule = env.store.add_rule(&definition, THE_OWNER).await.unwrap();
    env.store
        .set_rule_mode(rule.id, RuleMode::Armed, THE_OWNER)
        .await
        .unwrap();
}

/// Run the dispatcher (rules included) past any undo window, stop it, and count the sends
/// Gmail received.
async fn sends_after_the_dispatcher_stopped(env: &Env) -> usize {
    let dispatcher = env.dispatcher().await;
    let later = chrono::Utc::now() + chrono::Duration::hours(1);
    dispatcher.run_once().await.unwrap();
    for _ in 0..3 {
        dispatcher.run_as_of(later).await.unwrap();
    }
    drop(dispatcher);
    env.gmail.request_count("drafts.send")
}

/// The attack ends flagged ("answers a message that is not in this conversation", the outsider
/// not on the thread), the review names no parent, the draft waits for the owner, and the
/// armed rule sends nothing.
async fn assert_flagged_and_held(env: &Env, account: &Account, draft_id: &str, case: &str) {
    sync(env, account).await;
    let item = item_for(env, draft_id).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    assert_eq!(
        sends_after_the_dispatcher_stopped(env).await,
        0,
        "{case}: the armed rule sent it"
    );
    let rules = env.store.rules().await.unwrap();
    let settings = env.store.settings().await.unwrap();
    let judged = pass::judge(&env.store, &rules, &settings, item.id, chrono::Utc::now())
        .await
        .unwrap();
    assert!(
        !matches!(judged, Judged::Decide(_)),
        "{case}: the armed rule decides it"
    );
    let flags = &detail.content.view.flags;
    let invented = flags
        .iter()
        .find(|f| f.kind == FlagKind::AnswersMessageNotInConversation)
        .unwrap_or_else(|| panic!("{case}: no flag for the invented parent: {flags:#?}"));
    assert!(
        invented
            .explanation
            .starts_with("This answers a message that is not in this conversation"),
        "{case}: {}",
        invented.explanation
    );
    let stranger = flags
        .iter()
        .find(|f| f.kind == FlagKind::RecipientNotOnThread)
        .unwrap_or_else(|| panic!("{case}: eve is not flagged as off the thread: {flags:#?}"));
    assert!(
        stranger.explanation.contains("eve@evil.test")
            && stranger
                .explanation
                .contains("not on the message this replies to"),
        "{case}: {}",
        stranger.explanation
    );
    if let Some(answered) = &detail.content.answered {
        assert!(
            !answered.from.iter().any(|a| a.email == "eve@evil.test"),
            "{case}: the review says it answers Eve"
        );
    }

    assert_eq!(
        item_for(env, draft_id).await.state,
        ItemState::Pending,
        "{case}: the draft waits for the owner"
    );
}

#[tokio::test]
async fn a_reply_to_a_bait_draft_that_was_then_deleted_is_flagged_and_held() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    let bait = env.gmail.file_draft(BAIT, None);
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "In-Reply-To: <bait-1@agent.example>\r\nReferences: <bait-1@agent.example>\r\n",
        ),
        Some(&thread),
    );
    // The mirror sees the bait, then the agent deletes it.
    sync(&env, &account).await;
    assert!(env.gmail.delete_draft(&bait.id));
    assert_flagged_and_held(&env, &account, &draft.id, "bait deleted").await;
}

#[tokio::test]
async fn a_reply_to_a_bait_draft_that_is_kept_is_flagged_and_held() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    // The bait sits in the reply's own thread: a draft is still never a parent.
    env.gmail.file_draft(BAIT, Some(&thread));
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "In-Reply-To: <bait-1@agent.example>\r\nReferences: <quote-may@client.test> \
             <bait-1@agent.example>\r\n",
        ),
        Some(&thread),
    );
    assert_flagged_and_held(&env, &account, &draft.id, "bait kept").await;
}

#[tokio::test]
async fn a_reply_naming_a_message_of_another_conversation_is_flagged_and_held() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    // A real message from Eve, received in a thread of its own.
    env.gmail.add_inbox_message(EVE_WROTE, None);
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "In-Reply-To: <eve-1@evil.test>\r\nReferences: <eve-1@evil.test>\r\n",
        ),
        Some(&thread),
    );
    assert_flagged_and_held(&env, &account, &draft.id, "bait in another thread").await;
}

#[tokio::test]
async fn a_reply_naming_a_message_in_the_trash_is_flagged_and_held() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    // Eve's message is in the conversation, but in the Trash.
    env.gmail
        .add_message_with_labels(EVE_WROTE, Some(&thread), &["TRASH"]);
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "In-Reply-To: <eve-1@evil.test>\r\nReferences: <eve-1@evil.test>\r\n",
        ),
        Some(&thread),
    );
    assert_flagged_and_held(&env, &account, &draft.id, "bait in Trash").await;
}

#[tokio::test]
async fn a_reply_whose_references_chain_is_forged_is_flagged_and_held() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    env.gmail.file_draft(BAIT, None);
    // No In-Reply-To: the parent is the last of References (RFC 5322 §3.6.4), the bait.
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "References: <quote-may@client.test> <bait-1@agent.example>\r\n",
        ),
        Some(&thread),
    );
    assert_flagged_and_held(&env, &account, &draft.id, "forged References").await;
}

#[tokio::test]
async fn a_forged_reference_beside_a_true_parent_still_leaves_nobody_on_the_thread() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    env.gmail.file_draft(BAIT, None);
    // The true parent, Carla's, but a chain naming the bait too: Carla herself is then not
    // vouched for either.
    let draft = env.gmail.file_draft(
        &reply(
            "Carla <carla@client.test>, Eve <eve@evil.test>",
            "In-Reply-To: <quote-may@client.test>\r\n\
             References: <bait-1@agent.example> <quote-may@client.test>\r\n",
        ),
        Some(&thread),
    );
    assert_flagged_and_held(&env, &account, &draft.id, "true parent, forged chain").await;
}

#[tokio::test]
async fn an_honest_reply_counts_everyone_on_the_conversation_as_on_the_thread() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    // Carla's message answers a message the owner never received; the owner wrote back once.
    let later = b"From: Carla Diaz <carla@client.test>\r\nTo: owner@example.com\r\n\
        Cc: Fay <fay@client.test>\r\nSubject: Re: Quote for May\r\n\
        Date: Tue, 01 Dec 2026 11:00:00 +0000\r\nMessage-ID: <quote-may-2@client.test>\r\n\
        In-Reply-To: <owner-1@example.com>\r\n\
        References: <before-owner@client.test> <quote-may@client.test> <owner-1@example.com>\r\n\
        \r\nAnd for June?\r\n";
    let owner_wrote = b"From: owner@example.com\r\nTo: Carla Diaz <carla@client.test>\r\n\
        Subject: Re: Quote for May\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\n\
        Message-ID: <owner-1@example.com>\r\nIn-Reply-To: <quote-may@client.test>\r\n\r\n\
        Tomorrow.\r\n";
    env.gmail
        .add_message_with_labels(owner_wrote, Some(&thread), &["SENT"]);
    env.gmail.add_inbox_message(later, Some(&thread));
    // Dan (Cc of the first message) and Fay (Cc of the last) are on the conversation.
    let draft = env.gmail.file_draft(
        &reply(
            "Carla Diaz <carla@client.test>, Dan <dan@partner.test>, Fay <fay@client.test>",
            "In-Reply-To: <quote-may-2@client.test>\r\nReferences: <before-owner@client.test> \
             <quote-may@client.test> <owner-1@example.com> <quote-may-2@client.test>\r\n",
        ),
        Some(&thread),
    );
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    let kinds: Vec<FlagKind> = detail.content.view.flags.iter().map(|f| f.kind).collect();
    assert!(
        !kinds.contains(&FlagKind::AnswersMessageNotInConversation)
            && !kinds.contains(&FlagKind::RecipientNotOnThread),
        "a false alarm: {:#?}",
        detail.content.view.flags
    );
    let answered = detail.content.answered.expect("what it answers");
    assert_eq!(answered.from[0].email, "carla@client.test");
    assert_eq!(answered.snippet, "And for June?");

    let dispatcher = env.dispatcher().await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(report.rules.decided.len(), 1, "the rule approves it");
    drop(dispatcher);
    assert_eq!(sends_after_the_dispatcher_stopped(&env).await, 1);
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn a_muster_reply_answers_the_message_muster_relayed_whatever_its_text_claims() {
    let env = Env::new().await;
    let account = env.connect_muster().await;
    env.muster.create_plugin("gmail-relay", false).unwrap();
    let relayed = env
        .muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "Ana <ana@example.com>",
            "Invoice",
            "Hi",
        )
        .unwrap();
    // The agent writes headers into its reply's text, naming another parent and recipient.
    let draft = env
        .muster
        .file_draft(
            &relayed.route_id,
            "From: Eve <eve@evil.test>\nTo: eve@evil.test\nIn-Reply-To: <eve-1@evil.test>\n\
             References: <eve-1@evil.test>\n\nHere it is.",
        )
        .unwrap();
    resync(&env, &account).await;
    let item = item_for(&env, &draft).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    let answered = detail.content.answered.expect("what the reply answers");
    assert_eq!(answered.from.len(), 1);
    assert_eq!(answered.from[0].email, "ana@example.com");
    let view = &detail.content.view;
    let answers = view.answers.as_ref().expect("the relayed message");
    assert_eq!(answers.from[0].email, "ana@example.com");
    assert!(
        view.to.is_empty() && view.cc.is_empty() && view.bcc.is_empty(),
        "the reply's text named recipients: {:?}",
        view.to
    );
    assert!(
        !view.in_reply_to.iter().any(|id| id.contains("evil")),
        "the reply's text named its parent: {:?}",
        view.in_reply_to
    );
}

#[tokio::test]
async fn a_bcc_hidden_behind_an_empty_bcc_holds_an_armed_rule_and_is_listed() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    // mail-parser keeps the last Bcc (empty); Python's email and others read the first.
    let draft = env.gmail.file_draft(
        &reply(
            "Carla Diaz <carla@client.test>\r\nBcc: eve@evil.test\r\nBcc:",
            "In-Reply-To: <quote-may@client.test>\r\nReferences: <quote-may@client.test>\r\n",
        ),
        Some(&thread),
    );
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    assert_eq!(
        sends_after_the_dispatcher_stopped(&env).await,
        0,
        "the armed rule sent it"
    );
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    let view = &detail.content.view;
    assert_eq!(view.bcc.len(), 1, "{:?}", view.bcc);
    assert_eq!(view.bcc[0].email, "eve@evil.test");
    assert!(
        view.warnings.iter().any(|w| w.kind
            == countersign_core::render::WarningKind::AmbiguousAddress
            && w.message
                .starts_with("The Bcc header appears 2 times (one of them empty)")),
        "{:#?}",
        view.warnings
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Pending);
}

#[tokio::test]
async fn a_parent_trashed_after_the_reply_was_read_is_seen_at_the_next_listing() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (carla, thread) = env.gmail.add_inbox_message(CARLA, None);
    let draft = env.gmail.file_draft(
        &reply(
            "Carla Diaz <carla@client.test>",
            "In-Reply-To: <quote-may@client.test>\r\nReferences: <quote-may@client.test>\r\n",
        ),
        Some(&thread),
    );
    sync(&env, &account).await;
    // The conversation changes, the reply does not: the owner trashes Carla's message.
    assert!(env.gmail.trash_message(&carla));
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail_with(&env.store, &account, &client, Listing::Always)
        .await
        .unwrap();
    assert_eq!(
        sends_after_the_dispatcher_stopped(&env).await,
        0,
        "the armed rule sent it"
    );
    let item = item_for(&env, &draft.id).await;
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    assert!(
        detail
            .content
            .view
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::AnswersMessageNotInConversation),
        "{:#?}",
        detail.content.view.flags
    );
    assert_eq!(item.state, ItemState::Pending);
}

#[tokio::test]
async fn a_reply_kept_without_a_parent_is_checked_at_the_next_listing() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    arm_or_on_thread(&env).await;
    let (_, thread) = env.gmail.add_inbox_message(CARLA, None);
    env.gmail.file_draft(BAIT, None);
    let draft = env.gmail.file_draft(
        &reply(
            "Eve <eve@evil.test>",
            "In-Reply-To: <bait-1@agent.example>\r\nReferences: <bait-1@agent.example>\r\n",
        ),
        Some(&thread),
    );
    sync(&env, &account).await;
    // As a mirror written before this check keeps it: the reply, and no parent at all.
    let item = item_for(&env, &draft.id).await;
    env.store.set_answers(item.id, None).await.unwrap();
    let client = env.services.gmail(&account).await.unwrap();
    sync_gmail_with(&env.store, &account, &client, Listing::Always)
        .await
        .unwrap();
    assert_eq!(
        sends_after_the_dispatcher_stopped(&env).await,
        0,
        "the armed rule sent it"
    );
    let detail = countersign_core::review::review_detail(&env.store, item.id, false)
        .await
        .unwrap();
    assert!(
        detail
            .content
            .view
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::AnswersMessageNotInConversation),
        "{:#?}",
        detail.content.view.flags
    );
}
