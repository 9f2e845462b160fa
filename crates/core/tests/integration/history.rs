//! The record read back: every carried-out or failed decision with its kind (sent, rejected, by
//! rule, edited, failed), narrowed by kind, account, text and page; the exact bytes each
//! decision bound to and that left; and per agent figures with the median time to decision.

use chrono::Duration;
use countersign_core::decide::{self, Confirmation, Shown, UndoWindow};
use countersign_core::edit::save_edit;
use countersign_core::history::{left_message, HistoryFilter, HistoryKind};
use countersign_core::store::{format_time, DraftContent, ShownPart};
use countersign_core::Error;
use countersign_core::{DecisionKind, DecisionState, ItemState};
use countersign_fakes::gmail::Failure;
use sha2::{Digest, Sha256};
use sqlx::Connection;

use crate::support::{
    approve_now, dispatch_until, item_for, muster_reply, reply, reply_without_message_id, shown,
    sync, Env, OWNER,
};

/// A rule's actor, as the rules record it.
const RULE: &str = "rule:7@2";

/// A reply from `from` to `to`, otherwise like [`reply`].
fn reply_between(n: usize, from: &str, to: &str, body: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: {to}\r\nSubject: Re: Order {n}\r\n\
         Message-ID: <order-{n}@agent.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
         {body}\r\n"
    )
    .into_bytes()
}

/// `item_id`'s current version approved by a rule: displayed to the rule's actor (a rule
/// evaluates the rendered view), then decided as it.
async fn approve_by_rule(env: &Env, item_id: i64) {
    let shown = decide::current(&env.store, item_id).await.unwrap();
    for part in [ShownPart::Html, ShownPart::Text] {
        env.store.record_view(&shown, RULE, part).await.unwrap();
    }
    decide::approve(
        &env.store,
        &shown,
        UndoWindow::None,
        RULE,
        Confirmation::None,
    )
    .await
    .unwrap();
}

/// Rejections wait out the undo window too: make it none.
async fn no_undo_window(env: &Env) {
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
}

async fn reject_now(env: &Env, item_id: i64, reason: &str) {
    let shown = shown(env, item_id).await;
    decide::reject(&env.store, &shown, reason, OWNER)
        .await
        .unwrap();
}

fn items(entries: &[countersign_core::history::HistoryEntry]) -> Vec<i64> {
    entries.iter().map(|e| e.item_id).collect()
}

async fn history(env: &Env, filter: HistoryFilter) -> Vec<i64> {
    items(&env.store.history(&filter).await.unwrap())
}

fn of_kind(kind: HistoryKind) -> HistoryFilter {
    HistoryFilter {
        kind: Some(kind),
        ..HistoryFilter::default()
    }
}

fn searching(text: &str) -> HistoryFilter {
    HistoryFilter {
        search: Some(text.into()),
        ..HistoryFilter::default()
    }
}

#[tokio::test]
async fn the_record_names_each_decision_by_kind_and_every_filter_narrows_it() {
    let env = Env::new().await;
    let gmail = env.connect_gmail().await;
    let failing = env.gmail.file_draft(&reply(5, "Refused by Google."), None);
    let sent = env.gmail.file_draft(&reply(1, "Sent as written."), None);
    let rejected = env.gmail.file_draft(
        &reply_between(
            2,
            "owner@example.com",
            "zoe@client.example",
            "Wrong figure.",
        ),
        None,
    );
    let edited = env.gmail.file_draft(&reply(3, "Needs a fix."), None);
    let by_rule = env.gmail.file_draft(&reply(4, "Routine."), None);
    let undone = env.gmail.file_draft(&reply(6, "Taken back."), None);
    let waiting = env
        .gmail
        .file_draft(&reply(7, "Still in its window."), None);
    sync(&env, &gmail).await;
    let id = |draft: &countersign_fakes::gmail::FiledDraft| {
        let draft = draft.id.clone();
        let env = &env;
        async move { item_for(env, &draft).await.id }
    };
    let (failing, sent, rejected, edited, by_rule, undone, waiting) = (
        id(&failing).await,
        id(&sent).await,
        id(&rejected).await,
        id(&edited).await,
        id(&by_rule).await,
        id(&undone).await,
        id(&waiting).await,
    );
    // Rejections wait out the undo window too: none, until the decision left waiting in it.
    let mut settings = env.store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    let dispatcher = env.dispatcher().await;

    // Google refuses the first send for good.
    approve_now(&env, failing).await;
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(400).reason("invalidArgument"),
    );
    dispatch_until(&dispatcher, "the refused send fails", || async {
        env.store.get_item(failing).await.unwrap().summary.state == ItemState::SendFailed
    })
    .await;

    approve_now(&env, sent).await;
    reject_now(&env, rejected, "Wrong facts: ÉLODIE's figures").await;
    let agents = shown(&env, edited).await;
    let fixed = save_edit(
        &env.store,
        &env.services,
        &agents,
        "Re: Invoice 3 (fixed)",
        "Fixed.\n",
        OWNER,
    )
    .await
    .unwrap();
    crate::support::displayed(&env, &fixed).await;
    decide::approve(
        &env.store,
        &fixed,
        UndoWindow::None,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
    approve_by_rule(&env, by_rule).await;
    let undo_shown = shown(&env, undone).await;
    decide::approve(
        &env.store,
        &undo_shown,
        UndoWindow::FromSettings,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
    decide::undo(&env.store, undone, OWNER).await.unwrap();
    // The longest window: this one stays queued for the rest of the test.
    settings.undo_window_secs = 60;
    crate::support::save_whole_settings(&env.store, &settings, "owner via test").await;
    let wait_shown = shown(&env, waiting).await;
    decide::approve(
        &env.store,
        &wait_shown,
        UndoWindow::FromSettings,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
    dispatch_until(
        &dispatcher,
        "the decided drafts are carried out",
        || async {
            let mut all = true;
            for item in [sent, edited, by_rule] {
                all &= env.store.get_item(item).await.unwrap().summary.state == ItemState::Sent;
            }
            all && env.store.get_item(rejected).await.unwrap().summary.state == ItemState::Rejected
        },
    )
    .await;

    // The muster side: one approval taken by muster for its plugin.
    let (muster, draft) = muster_reply(&env, false).await;
    let relayed = item_for(&env, &draft).await.id;
    approve_now(&env, relayed).await;
    dispatch_until(&dispatcher, "muster takes the approval", || async {
        env.store.decisions_for_item(relayed).await.unwrap()[0].state == DecisionState::Done
    })
    .await;

    // Newest decision first; the undone and the still-queued decisions are not in the record.
    let all = env.store.history(&HistoryFilter::default()).await.unwrap();
    assert_eq!(
        items(&all),
        vec![relayed, by_rule, edited, rejected, sent, failing]
    );
    let entry = |item: i64| all.iter().find(|e| e.item_id == item).unwrap();
    use HistoryKind::*;
    assert_eq!(entry(sent).kinds, vec![Sent]);
    assert_eq!(entry(rejected).kinds, vec![Rejected]);
    assert_eq!(entry(edited).kinds, vec![Sent, Edited]);
    assert_eq!(entry(by_rule).kinds, vec![Sent, ByRule]);
    assert_eq!(entry(failing).kinds, vec![Failed]);
    assert_eq!(entry(relayed).kinds, vec![Sent]);
    assert_eq!(entry(by_rule).actor, RULE);
    assert_eq!(entry(sent).actor, OWNER);
    assert_eq!(entry(rejected).decision, DecisionKind::Reject);
    assert_eq!(
        entry(rejected).reason.as_deref(),
        Some("Wrong facts: ÉLODIE's figures")
    );
    assert_eq!(entry(rejected).recipients, "zoe@client.example");
    assert_eq!(entry(rejected).final_state, ItemState::Rejected);
    assert_eq!(entry(sent).final_state, ItemState::Sent);
    assert_eq!(entry(failing).final_state, ItemState::SendFailed);
    assert!(
        entry(failing)
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("Google refused to send it")),
        "{:?}",
        entry(failing).reason
    );
    // The edited entry bound to the owner's version, not the agent's.
    assert_eq!(entry(edited).version, fixed.version);
    assert_eq!(entry(edited).digest, fixed.digest);
    assert_eq!(entry(sent).agent, "owner@example.com");
    assert_eq!(entry(relayed).agent, "gmail-relay, relayed");
    assert_eq!(entry(relayed).account_id, muster.id);

    assert_eq!(
        history(&env, of_kind(Sent)).await,
        vec![relayed, by_rule, edited, sent]
    );
    assert_eq!(history(&env, of_kind(Rejected)).await, vec![rejected]);
    assert_eq!(history(&env, of_kind(ByRule)).await, vec![by_rule]);
    assert_eq!(history(&env, of_kind(Edited)).await, vec![edited]);
    assert_eq!(history(&env, of_kind(Failed)).await, vec![failing]);

    let of_account = |account: &str| HistoryFilter {
        account_id: Some(account.into()),
        ..HistoryFilter::default()
    };
    assert_eq!(history(&env, of_account(&muster.id)).await, vec![relayed]);
    assert_eq!(
        history(&env, of_account(&gmail.id)).await,
        vec![by_rule, edited, rejected, sent, failing]
    );
    // Text in the reason, the recipients or the subject, in any case.
    assert_eq!(
        history(&env, searching("WRONG FACTS")).await,
        vec![rejected]
    );
    // Beyond ASCII too (SQLite's own LIKE and lower() fold only A-Z).
    assert_eq!(history(&env, searching("élodie's")).await, vec![rejected]);
    assert_eq!(history(&env, searching("zoe@client")).await, vec![rejected]);
    assert_eq!(
        history(&env, searching("invoice 3 (fixed)")).await,
        vec![edited]
    );
    assert_eq!(
        history(&env, searching("no such words")).await,
        Vec::<i64>::new()
    );
    let combined = HistoryFilter {
        kind: Some(Sent),
        account_id: Some(gmail.id.clone()),
        search: Some("invoice 4".into()),
        ..HistoryFilter::default()
    };
    assert_eq!(history(&env, combined).await, vec![by_rule]);
    // Pages.
    let page = |offset, limit| HistoryFilter {
        offset,
        limit,
        ..HistoryFilter::default()
    };
    assert_eq!(history(&env, page(0, 2)).await, vec![relayed, by_rule]);
    assert_eq!(history(&env, page(2, 2)).await, vec![edited, rejected]);
    assert_eq!(history(&env, page(6, 2)).await, Vec::<i64>::new());

    // The figures over the same record: the owner's approvals, edits and rejections apart from
    // the rule's decisions, failures among them counted too.
    let figures = env.store.agent_figures().await.unwrap();
    assert_eq!(figures.len(), 2, "{figures:?}");
    let owner = &figures[0];
    assert_eq!(
        (owner.account_id.as_str(), owner.agent.as_str()),
        (gmail.id.as_str(), "owner@example.com")
    );
    assert_eq!(
        (
            owner.approved,
            owner.edited,
            owner.rejected,
            owner.by_rule,
            owner.failed
        ),
        (2, 1, 1, 1, 1)
    );
    let plugin = &figures[1];
    assert_eq!(plugin.agent, "gmail-relay, relayed");
    assert_eq!((plugin.approved, plugin.rejected), (1, 0));
}

/// Open the mirror as another program would, to set times a test cannot wait for.
async fn outsider(env: &Env) -> sqlx::SqliteConnection {
    let url = format!("sqlite://{}", env.store.path().display());
    sqlx::SqliteConnection::connect(&url).await.unwrap()
}

#[tokio::test]
async fn an_agents_median_time_to_decision_is_the_mean_of_the_middle_two_of_an_even_count() {
    let env = Env::new().await;
    no_undo_window(&env).await;
    let gmail = env.connect_gmail().await;
    let mut drafts = Vec::new();
    for n in 0..5 {
        drafts.push(env.gmail.file_draft(&reply(n, "Fine."), None));
    }
    let other = env.gmail.file_draft(
        &reply_between(9, "Bot <Bot@Agents.example>", "ana@example.com", "Hello."),
        None,
    );
    sync(&env, &gmail).await;
    let mut ids = Vec::new();
    for draft in &drafts {
        ids.push(item_for(&env, &draft.id).await.id);
    }
    let other = item_for(&env, &other.id).await.id;
    let mut decisions = Vec::new();
    for &id in &ids[..3] {
        decisions.push(approve_now(&env, id).await);
    }
    reject_now(&env, ids[3], "Tone is off").await;
    decisions.push(env.store.decisions_for_item(ids[3]).await.unwrap()[0].clone());
    approve_by_rule(&env, ids[4]).await;
    decisions.push(env.store.decisions_for_item(ids[4]).await.unwrap()[0].clone());
    approve_now(&env, other).await;
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "all are carried out", || async {
        env.store
            .history(&HistoryFilter::default())
            .await
            .unwrap()
            .len()
            == 6
    })
    .await;

    // Each version first seen this long before its decision: the owner's four took 100, 10,
    // 40 and 20 seconds (median 30: the mean of 20 and 40), the rule's half a second (left
    // out; counted in, the median would be 20).
    let mut db = outsider(&env).await;
    for (decision, waited_ms) in decisions.iter().zip([100_000, 10_000, 40_000, 20_000, 500]) {
        let seen = decision.created_at - Duration::milliseconds(waited_ms);
        sqlx::query(
            "UPDATE draft_versions SET first_seen_at = ? WHERE item_id = ? AND version = ?",
        )
        .bind(format_time(seen))
        .bind(decision.item_id)
        .bind(&decision.version)
        .execute(&mut db)
        .await
        .unwrap();
    }

    let figures = env.store.agent_figures().await.unwrap();
    assert_eq!(figures.len(), 2, "{figures:?}");
    let owner = &figures[0];
    assert_eq!(owner.agent, "owner@example.com");
    assert_eq!(
        (owner.approved, owner.edited, owner.rejected, owner.by_rule),
        (3, 0, 1, 1)
    );
    assert_eq!(owner.median_seconds_to_decision, Some(30.0));
    let bot = &figures[1];
    assert_eq!(bot.agent, "bot@agents.example");
    assert_eq!((bot.approved, bot.rejected, bot.by_rule), (1, 0, 0));
    assert!(bot.median_seconds_to_decision.is_some());
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[tokio::test]
async fn the_bytes_that_left_are_exactly_what_gmail_received_and_a_changed_mirror_is_refused() {
    let env = Env::new().await;
    no_undo_window(&env).await;
    let gmail = env.connect_gmail().await;
    let plain_raw = reply(1, "As filed.");
    let plain = env.gmail.file_draft(&plain_raw, None);
    let bare_raw = reply_without_message_id("No Message-ID here.");
    let bare = env.gmail.file_draft(&bare_raw, None);
    let refused_raw = reply(3, "Never leaves.");
    let refused = env.gmail.file_draft(&refused_raw, None);
    sync(&env, &gmail).await;
    let plain_id = item_for(&env, &plain.id).await.id;
    let bare_id = item_for(&env, &bare.id).await.id;
    let refused_id = item_for(&env, &refused.id).await.id;
    let plain_decision = approve_now(&env, plain_id).await;
    let bare_decision = approve_now(&env, bare_id).await;
    reject_now(&env, refused_id, "Should not be answered").await;
    let refused_decision = env.store.decisions_for_item(refused_id).await.unwrap()[0].clone();
    let dispatcher = env.dispatcher().await;
    dispatch_until(&dispatcher, "both are sent and one rejected", || async {
        env.store
            .history(&HistoryFilter::default())
            .await
            .unwrap()
            .len()
            == 3
    })
    .await;
    let received = |draft: &str| {
        env.gmail
            .sent_messages()
            .into_iter()
            .find(|m| m.draft_id == draft)
            .unwrap()
            .raw
    };

    // A draft with a Message-ID leaves as it was reviewed, byte for byte.
    let left = env.store.bytes_that_left(plain_decision.id).await.unwrap();
    assert!(left.left);
    assert_eq!(left.content, DraftContent::Raw(plain_raw.clone()));
    assert_eq!(left.content.bytes(), received(&plain.id).as_slice());
    assert_eq!(left.header_added, None);
    assert_eq!(left.digest, sha256(&plain_raw));

    // One without leaves with the Message-ID Countersign put in front: those bytes, and the
    // digest recorded before the send.
    let left = env.store.bytes_that_left(bare_decision.id).await.unwrap();
    let sent = env.store.get_decision(bare_decision.id).await.unwrap();
    assert_eq!(left.header_added.as_deref(), Some("Message-ID"));
    assert_eq!(left.content.bytes(), received(&bare.id).as_slice());
    assert!(left.content.bytes().ends_with(&bare_raw));
    assert_eq!(Some(left.digest.clone()), sent.sent_digest);
    let entry = env.store.history_entry(bare_decision.id).await.unwrap();
    assert_eq!(entry.sent_digest, sent.sent_digest);
    assert_eq!(entry.digest, sha256(&bare_raw));

    // A rejection's bytes are the version rejected; nothing left.
    let rejected = env
        .store
        .bytes_that_left(refused_decision.id)
        .await
        .unwrap();
    assert!(!rejected.left);
    assert_eq!(rejected.content.bytes(), refused_raw.as_slice());

    // Opened from the record: rendered with the review's renderer, and as source.
    let opened = left_message(&env.store, plain_decision.id).await.unwrap();
    assert!(
        opened.view.text_body.contains("As filed."),
        "{:?}",
        opened.view.text_body
    );
    assert_eq!(opened.source, String::from_utf8(plain_raw).unwrap());
    assert_eq!(opened.entry.decision_id, plain_decision.id);

    // A decision not in the record (still in its window) has no entry to open.
    let later = env.gmail.file_draft(&reply(4, "Later."), None);
    sync(&env, &gmail).await;
    let later = item_for(&env, &later.id).await.id;
    let pending: Shown = shown(&env, later).await;
    let queued = decide::approve(
        &env.store,
        &pending,
        UndoWindow::FromSettings,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
    // Not sent: not in the record, so there are no bytes "that left" to show.
    let not_yet = env.store.bytes_that_left(queued.id).await.unwrap_err();
    assert!(matches!(not_yet, Error::NotFound { .. }), "{not_yet:?}");

    // Bytes changed in the mirror no longer hash to what the decision bound to: refused, not
    // shown as what left.
    let mut db = outsider(&env).await;
    sqlx::query("UPDATE draft_versions SET content = ? WHERE item_id = ?")
        .bind(b"From: someone@else.example\r\n\r\nOther words.\r\n".as_slice())
        .bind(plain_id)
        .execute(&mut db)
        .await
        .unwrap();
    let refused = env
        .store
        .bytes_that_left(plain_decision.id)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, Error::Refused { why, .. } if why.contains("not the bytes it bound to")),
        "{refused:?}"
    );
}
