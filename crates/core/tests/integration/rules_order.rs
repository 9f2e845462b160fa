//! The order of the rules decides which acts first, and the owner changes it: moving a rule
//! above another makes it the one that decides, a duplicate starts at the end in shadow, and
//! every pass that records verdicts (shadow ones too) is announced, so a rules page on screen
//! shows the record as it grows.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use countersign_core::app::{AppEvent, AppOptions, RunningApp};
use countersign_core::rules::pass;
use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
use countersign_core::store::RuleMode;
use countersign_core::DecisionKind;

use crate::support::*;

const THE_OWNER: &str = "owner via test";

fn rule(name: &str, action: RuleAction) -> RuleDefinition {
    RuleDefinition {
        name: name.into(),
        scope: Default::default(),
        conditions: Conditions {
            recipients_within: vec!["example.com".into()],
            ..Conditions::default()
        },
        action,
        daily_cap: None,
    }
}

async fn judged_at_once(env: &Env) {
    let mut settings = env.store.settings().await.unwrap();
    settings.rule_settle_secs = 0;
    save_whole_settings(&env.store, &settings, THE_OWNER).await;
}

#[tokio::test]
async fn moving_a_rule_above_another_makes_it_the_one_that_decides() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    judged_at_once(&env).await;
    let approve = env
        .store
        .add_rule(
            &rule("Replies to example.com", RuleAction::Approve),
            THE_OWNER,
        )
        .await
        .unwrap();
    let reject = env
        .store
        .add_rule(
            &rule(
                "Nothing to example.com this week",
                RuleAction::Reject {
                    reason: "not this week".into(),
                },
            ),
            THE_OWNER,
        )
        .await
        .unwrap();
    for id in [approve.id, reject.id] {
        env.store
            .set_rule_mode(id, RuleMode::Armed, THE_OWNER)
            .await
            .unwrap();
    }
    // The rejecting rule, second, goes first.
    let order = env.store.move_rule(reject.id, 0, THE_OWNER).await.unwrap();
    let names: Vec<&str> = order.iter().map(|r| r.definition.name.as_str()).collect();
    assert_eq!(
        names,
        ["Nothing to example.com this week", "Replies to example.com"]
    );
    let (_, thread) = env.gmail.add_inbox_message(&parent(1), None);
    let draft = env
        .gmail
        .file_draft(&reply(1, "Yes, Tuesday works."), Some(&thread));
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;

    let pass = pass::run(&env.store, chrono::Utc::now()).await.unwrap();
    let decided: Vec<(i64, DecisionKind, String)> = pass
        .decided
        .iter()
        .map(|(d, name)| (d.item_id, d.kind, name.clone()))
        .collect();
    assert_eq!(
        decided,
        vec![(
            item.id,
            DecisionKind::Reject,
            "Nothing to example.com this week".to_string()
        )],
        "the rule now first decides"
    );
    let moved = env
        .store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.line.action == "rule moved")
        .count();
    assert_eq!(moved, 1, "the move is in the record");
}

#[tokio::test]
async fn a_move_past_the_end_puts_the_rule_last_and_a_duplicate_starts_last_in_shadow() {
    let env = Env::new().await;
    let mut ids = Vec::new();
    for name in ["First", "Second", "Third"] {
        let added = env
            .store
            .add_rule(&rule(name, RuleAction::Hold), THE_OWNER)
            .await
            .unwrap();
        ids.push(added.id);
    }
    env.store
        .set_rule_mode(ids[0], RuleMode::Armed, THE_OWNER)
        .await
        .unwrap();
    let names = |rules: Vec<countersign_core::store::Rule>| -> Vec<String> {
        rules.into_iter().map(|r| r.definition.name).collect()
    };
    let order = env.store.move_rule(ids[0], 99, THE_OWNER).await.unwrap();
    assert_eq!(names(order), ["Second", "Third", "First"]);
    let order = env.store.move_rule(ids[2], 1, THE_OWNER).await.unwrap();
    assert_eq!(names(order), ["Second", "Third", "First"], "already there");

    let copy = env.store.duplicate_rule(ids[0], THE_OWNER).await.unwrap();
    assert_eq!(copy.definition.name, "First (copy)");
    assert_eq!(copy.mode, RuleMode::Shadow, "a copy has no record yet");
    assert_eq!(
        copy.definition.conditions,
        env.store.rule(ids[0]).await.unwrap().definition.conditions
    );
    assert_eq!(
        names(env.store.rules().await.unwrap()),
        ["Second", "Third", "First", "First (copy)"]
    );

    env.store.remove_rule(ids[1], THE_OWNER).await.unwrap();
    let refused = env.store.move_rule(ids[1], 0, THE_OWNER).await.unwrap_err();
    assert!(
        refused.to_string().contains("“Second”"),
        "a removed rule is named, not numbered: {refused}"
    );
}

#[tokio::test]
async fn a_shadow_rules_verdict_is_announced_so_the_rules_page_can_show_it() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    judged_at_once(&env).await;
    env.store
        .add_rule(
            &rule("Replies to example.com", RuleAction::Approve),
            THE_OWNER,
        )
        .await
        .unwrap();
    let (_, thread) = env.gmail.add_inbox_message(&parent(1), None);
    let draft = env
        .gmail
        .file_draft(&reply(1, "Yes, Tuesday works."), Some(&thread));
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;

    let judged: Arc<Mutex<Vec<i64>>> = Arc::default();
    let app = RunningApp::start(
        env.store.clone(),
        env.services.clone(),
        env.dir.path(),
        AppOptions {
            dispatch: quick_dispatch(),
            ..AppOptions::default()
        },
        {
            let judged = judged.clone();
            Arc::new(move |event| {
                if let AppEvent::RulesJudged { items } = event {
                    judged.lock().unwrap().extend(items);
                }
            })
        },
    )
    .await
    .unwrap();
    eventually(
        Duration::from_secs(20),
        "the shadow rule's verdict is announced",
        || async { judged.lock().unwrap().contains(&item.id) },
    )
    .await;
    app.stop();
    assert!(
        env.store
            .decisions_for_item(item.id)
            .await
            .unwrap()
            .is_empty(),
        "a shadow rule decides nothing"
    );
}

#[tokio::test]
async fn an_edit_made_from_a_version_changed_elsewhere_is_refused_not_written_over_it() {
    let env = Env::new().await;
    let opened = env
        .store
        .add_rule(&rule("Short replies", RuleAction::Approve), THE_OWNER)
        .await
        .unwrap();
    // The command line changes the rule while the window's dialog shows version 1.
    let mut elsewhere = opened.definition.clone();
    elsewhere.conditions.max_words = Some(30);
    env.store
        .edit_rule(opened.id, &elsewhere, "owner via cli")
        .await
        .unwrap();
    let mut in_the_dialog = opened.definition.clone();
    in_the_dialog.action = RuleAction::Hold;
    let refused = env
        .store
        .edit_rule_from(opened.id, opened.version, &in_the_dialog, THE_OWNER)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("cannot change the rule “Short replies”: it was changed elsewhere"),
        "{refused}"
    );
    let now = env.store.rule(opened.id).await.unwrap();
    assert_eq!(now.version, 2);
    assert_eq!(now.definition, elsewhere, "the other change stands");

    // From the version it shows now, the edit is made.
    let edited = env
        .store
        .edit_rule_from(opened.id, 2, &in_the_dialog, THE_OWNER)
        .await
        .unwrap();
    assert_eq!(edited.version, 3);
    assert_eq!(edited.definition.action, RuleAction::Hold);
}
