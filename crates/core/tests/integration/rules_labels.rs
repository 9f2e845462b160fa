//! The Gmail label scope (issue 38): a rule scoped to a label decides only drafts carrying it,
//! and stops deciding a draft whose label is taken off in Gmail (seen through the history
//! sync), its countdown taken back; a draft that gains the label is judged again.

use countersign_core::rules::{Conditions, RuleAction, RuleDefinition, Scope};
use countersign_core::store::{Account, RuleMode};
use countersign_core::ItemState;

use crate::support::{item_for, parent, reply, sync, Env};

const THE_OWNER: &str = "owner via test";

/// The Gmail label id of `name`, as the owner picks it: by name, from the mirrored list.
async fn label_named(env: &Env, account: &Account, name: &str) -> String {
    env.store
        .labels(Some(&account.id))
        .await
        .unwrap()
        .into_iter()
        .find(|l| l.user && l.name == name)
        .unwrap_or_else(|| panic!("the label {name} is mirrored"))
        .id
}

async fn armed_for_label(env: &Env, label_id: &str) -> i64 {
    let definition = RuleDefinition {
        name: "Billing agent".into(),
        scope: Scope {
            label: Some(label_id.to_owned()),
            ..Scope::default()
        },
        conditions: Conditions {
            recipients_within: vec!["example.com".into()],
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
    rule.id
}

/// Rules may act at once; a decision waits `undo_secs` before it leaves.
async fn settle_now(env: &Env, undo_secs: u32) {
    let mut settings = env.store.settings().await.unwrap();
    settings.rule_settle_secs = 0;
    settings.undo_window_secs = undo_secs;
    crate::support::save_whole_settings(&env.store, &settings, THE_OWNER).await;
}

#[tokio::test]
async fn a_label_scoped_rule_decides_only_the_drafts_carrying_the_label() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    settle_now(&env, 30).await;
    let billing = env.gmail.create_label("Agents/Billing");
    let other = env.gmail.create_label("Agents/Support");
    let (_, t1) = env.gmail.add_inbox_message(&parent(1), None);
    let (_, t2) = env.gmail.add_inbox_message(&parent(2), None);
    let labelled =
        env.gmail
            .file_draft_with_labels(&reply(1, "The invoice."), Some(&t1), &[&billing]);
    let unlabelled =
        env.gmail
            .file_draft_with_labels(&reply(2, "The invoice."), Some(&t2), &[&other]);
    sync(&env, &account).await;
    let labelled = item_for(&env, &labelled.id).await.id;
    let unlabelled = item_for(&env, &unlabelled.id).await.id;
    assert_eq!(
        env.store.item_user_label_names(labelled).await.unwrap(),
        vec!["Agents/Billing"],
        "the draft's user labels are mirrored by name, DRAFT left out"
    );
    armed_for_label(&env, &label_named(&env, &account, "Agents/Billing").await).await;

    let report = env.dispatcher().await.run_once().await.unwrap();
    let decided: Vec<i64> = report
        .rules
        .decided
        .iter()
        .map(|(d, _)| d.item_id)
        .collect();
    assert_eq!(
        decided,
        vec![labelled],
        "only the labelled draft is decided"
    );
    assert_eq!(
        env.store.get_item(unlabelled).await.unwrap().summary.state,
        ItemState::Pending
    );
}

#[tokio::test]
async fn a_draft_whose_label_is_removed_in_gmail_is_no_longer_decided_by_the_rule() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    settle_now(&env, 30).await;
    let billing = env.gmail.create_label("Agents/Billing");
    let (_, thread) = env.gmail.add_inbox_message(&parent(1), None);
    let draft =
        env.gmail
            .file_draft_with_labels(&reply(1, "The invoice."), Some(&thread), &[&billing]);
    sync(&env, &account).await;
    let item_id = item_for(&env, &draft.id).await.id;
    armed_for_label(&env, &billing).await;
    let dispatcher = env.dispatcher().await;
    assert_eq!(dispatcher.run_once().await.unwrap().rules.decided.len(), 1);
    assert_eq!(
        env.store.get_item(item_id).await.unwrap().summary.state,
        ItemState::Queued,
        "the rule's countdown runs"
    );

    // The label is taken off in Gmail (messages.modify keeps the message id: no new version).
    env.gmail
        .modify_labels(&draft.message_id, &[], &[&billing])
        .expect("the fake relabels");
    sync(&env, &account).await;
    assert_eq!(
        env.store.get_item(item_id).await.unwrap().summary.state,
        ItemState::Pending,
        "the countdown of the rule whose label is gone is taken back"
    );
    let report = dispatcher.run_once().await.unwrap();
    assert!(
        report.rules.decided.is_empty(),
        "the rule no longer decides it"
    );
    assert!(env.gmail.sent_messages().is_empty());

    // Labelled again, the rule judges it again and decides.
    env.gmail
        .modify_labels(&draft.message_id, &[&billing], &[])
        .expect("the fake relabels");
    sync(&env, &account).await;
    let report = dispatcher.run_once().await.unwrap();
    assert_eq!(
        report
            .rules
            .decided
            .iter()
            .map(|(d, _)| d.item_id)
            .collect::<Vec<_>>(),
        vec![item_id],
        "labelled again, the rule decides it again"
    );
}
