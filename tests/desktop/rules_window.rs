//! Rules complete in the window: editing a rule's condition says first that it goes back to
//! shadow, and its record starts over; reordering with the keyboard decides which rule acts on
//! the next draft; the record grows while the page stays open; "Test against history" lists
//! what the rule would have done beside what the owner did. The new dialogs have no serious
//! accessibility violations, light and dark.

use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
use countersign_core::store::{Rule, RuleMode, SettingsChange};
use countersign_e2e::desktop::{skip_or_fail, DesktopApp};
use countersign_e2e::fixture::{eventually, Fixture};
use countersign_e2e::webdriver::Session;

use crate::accessibility::{assert_none, dark_and_still_config, serious_violations};
use crate::support::*;

const ALT: &str = "\u{E00A}";
const ARROW_UP: &str = "\u{E013}";

/// A reply to Ana's question `n`, threaded (an unthreaded reply is flagged, and a flag holds
/// every armed rule).
fn threaded(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <window-reply-{n}@agent.example>\r\n\
         In-Reply-To: <question-{n}@example.com>\r\nReferences: <question-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// Ana's question `n` in the inbox; its thread, for the reply to be filed on.
fn question(fixture: &Fixture, n: usize) -> String {
    let raw = format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Question {n}\r\n\
         Message-ID: <question-{n}@example.com>\r\n\r\nDoes Tuesday work?\r\n"
    );
    fixture.gmail.add_inbox_message(raw.as_bytes(), None).1
}

/// The agent files reply `n`; returns its Gmail draft id.
fn file_reply(fixture: &Fixture, n: usize, body: &str) -> String {
    fixture
        .gmail
        .file_draft(&threaded(n, body), Some(&question(fixture, n)))
        .id
}

/// A rule for replies to example.com of at most `max_words` words.
fn replies(name: &str, max_words: u32, action: RuleAction) -> RuleDefinition {
    RuleDefinition {
        name: name.into(),
        scope: Default::default(),
        conditions: Conditions {
            recipients_within: vec!["example.com".into()],
            max_words: Some(max_words),
            ..Conditions::default()
        },
        action,
        daily_cap: None,
    }
}

/// Drafts are judged as soon as they arrive, and a rule's approval waits 60 s (this test never
/// lets one leave).
async fn judge_at_once(fixture: &Fixture) {
    let before = fixture.store.settings().await.unwrap();
    let mut after = before.clone();
    after.rule_settle_secs = 0;
    after.undo_window_secs = 60;
    fixture
        .store
        .update_settings(&SettingsChange::between(&before, &after), "owner via test")
        .await
        .unwrap();
}

async fn add(fixture: &Fixture, definition: &RuleDefinition, mode: RuleMode) -> Rule {
    let rule = fixture
        .store
        .add_rule(definition, "owner via test")
        .await
        .unwrap();
    fixture
        .store
        .set_rule_mode(rule.id, mode, "owner via test")
        .await
        .unwrap()
}

async fn open_settings(app: &DesktopApp) {
    app.session()
        .wait_for("[data-action=settings]", UI_TIMEOUT)
        .await
        .or_log(app)
        .click()
        .await
        .unwrap();
    app.session()
        .wait_for("[data-testid=rules]", UI_TIMEOUT)
        .await
        .or_log(app);
}

fn card(rule: &Rule) -> String {
    format!("[data-rule=\"{}\"]", rule.id)
}

async fn click(session: &Session, selector: &str) {
    session.find(selector).await.unwrap().click().await.unwrap();
}

/// Replaces what a field of the edit dialog holds with `text`.
async fn retype(session: &Session, field: &str, text: &str) {
    let selector = format!("[data-testid=edit-dialog] [data-field={field}]");
    session
        .execute(
            "const f = document.querySelector(arguments[0]); f.value = '';
             f.dispatchEvent(new Event('input', {bubbles: true}));",
            vec![serde_json::json!(selector)],
        )
        .await
        .unwrap();
    session
        .find(&selector)
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_rules_condition_says_first_it_goes_back_to_shadow_and_its_record_starts_over() {
    let Some(prerequisites) = skip_or_fail(
        "editing_a_rules_condition_says_first_it_goes_back_to_shadow_and_its_record_starts_over",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    judge_at_once(&fixture).await;
    let account = fixture.connect_gmail().await.unwrap();
    file_reply(&fixture, 1, "Yes, Tuesday works.");
    file_reply(&fixture, 2, "See you on Tuesday then.");
    fixture.sync(&account).await.unwrap();
    // Armed, holding: it decides nothing, and its record counts both drafts.
    let rule = add(
        &fixture,
        &replies("Short replies", 30, RuleAction::Hold),
        RuleMode::Armed,
    )
    .await;
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_settings(&app).await;
    let record = format!("{} [data-testid=rule-record]", card(&rule));
    session
        .wait_for_text(&record, "would have held 2;", UI_TIMEOUT)
        .await
        .or_log(&app);

    click(session, &format!("{} [data-action=edit-rule]", card(&rule))).await;
    // Said before saving, not after.
    session
        .wait_for_text(
            "[data-testid=edit-warning]",
            "Saving puts this rule back in shadow: it stops deciding until you arm it again",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().version,
        1,
        "the dialog alone changes nothing"
    );
    app.screenshot("edit-rule").await.unwrap();
    let mut found = serious_violations(session, "the edit rule dialog").await;
    // Three words at most: "Yes, Tuesday works." still matches, the five-word reply no more.
    retype(session, "max-words", "3").await;
    click(session, "[data-testid=edit-dialog] [data-action=save-rule]").await;

    session
        .wait_for(&format!("{}[data-mode=shadow]", card(&rule)), UI_TIMEOUT)
        .await
        .or_log(&app);
    // A fresh record: the new version judges the drafts again, and only one matches now.
    session
        .wait_for_text(&record, "would have held 1;", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the rules page after an edit").await);
    app.quit().await.unwrap();
    let edited = fixture.store.rule(rule.id).await.unwrap();
    assert_eq!(edited.version, 2);
    assert_eq!(edited.mode, RuleMode::Shadow);
    assert_eq!(edited.definition.conditions.max_words, Some(3));
    assert_eq!(
        edited.definition.conditions.recipients_within,
        vec!["example.com".to_string()],
        "what the owner did not touch stays"
    );
    assert_none(&found);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moving_a_rule_up_with_alt_up_makes_it_the_one_that_decides_the_next_draft() {
    let Some(prerequisites) =
        skip_or_fail("moving_a_rule_up_with_alt_up_makes_it_the_one_that_decides_the_next_draft")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    judge_at_once(&fixture).await;
    let account = fixture.connect_gmail().await.unwrap();
    let approve = add(
        &fixture,
        &replies("Approve short replies", 30, RuleAction::Approve),
        RuleMode::Armed,
    )
    .await;
    let hold = add(
        &fixture,
        &replies("Ask me about Ana", 30, RuleAction::Hold),
        RuleMode::Armed,
    )
    .await;
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_settings(&app).await;
    session
        .wait_for(&format!("{}[data-position=\"2\"]", card(&hold)), UI_TIMEOUT)
        .await
        .or_log(&app);

    // The owner focuses the second rule and presses Alt+Up.
    session
        .execute(
            "document.querySelector(arguments[0]).focus();",
            vec![serde_json::json!(card(&hold))],
        )
        .await
        .unwrap();
    session.press_chord(&[ALT, ARROW_UP]).await.unwrap();
    session
        .wait_for_text(
            "[data-testid=rules-announcement]",
            "“Ask me about Ana” is now rule 1 of 2, first to act.",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for(&format!("{}[data-position=\"1\"]", card(&hold)), UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("rules-reordered").await.unwrap();
    let still_focused = session
        .execute(
            "return document.activeElement?.dataset?.rule ?? null;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        still_focused,
        serde_json::json!(hold.id.to_string()),
        "the moved rule keeps the focus"
    );
    let order: Vec<i64> = fixture
        .store
        .rules()
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(order, vec![hold.id, approve.id]);

    // A short reply both rules match: the one now first holds it, and nothing is approved.
    let draft = file_reply(&fixture, 1, "Yes, Tuesday works.");
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft).await.unwrap();
    eventually(UI_TIMEOUT, "the rules judged the draft", || async {
        fixture
            .store
            .evaluations_for_item(item.id)
            .await
            .is_ok_and(|judged| {
                judged
                    .iter()
                    .any(|e| e.rule_id == hold.id && e.held.is_some())
            })
    })
    .await
    .or_log(&app);
    app.quit().await.unwrap();
    assert!(
        fixture
            .store
            .decisions_for_item(item.id)
            .await
            .unwrap()
            .is_empty(),
        "the rule moved first held it: the approving rule after it decided nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_page_shows_a_new_verdict_while_it_stays_open_and_tests_a_rule_against_history() {
    let Some(prerequisites) = skip_or_fail(
        "the_rules_page_shows_a_new_verdict_while_it_stays_open_and_tests_a_rule_against_history",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    judge_at_once(&fixture).await;
    let account = fixture.connect_gmail().await.unwrap();
    let rule = add(
        &fixture,
        &replies("Short replies", 30, RuleAction::Approve),
        RuleMode::Shadow,
    )
    .await;
    let config = dark_and_still_config();
    let app = fixture
        .launch_with_env(
            &prerequisites,
            vec![(
                "XDG_CONFIG_HOME".into(),
                config.path().display().to_string(),
            )],
        )
        .await
        .unwrap();
    let session = app.session();
    open_settings(&app).await;
    let record = format!("{} [data-testid=rule-record]", card(&rule));
    session
        .wait_for_text(&record, "has matched no draft yet", UI_TIMEOUT)
        .await
        .or_log(&app);

    // The agent files a reply; another process (the command line) syncs it. The app's rules
    // judge it, and the page, left open, shows the shadow verdict.
    file_reply(&fixture, 1, "Yes, Tuesday works.");
    fixture.sync(&account).await.unwrap();
    session
        .wait_for_text(
            &record,
            "would have approved 1; you approved 0, edited 0, rejected 0, 1 not decided yet",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);

    click(session, &format!("{} [data-action=test-rule]", card(&rule))).await;
    session
        .wait_for_text(
            "[data-testid=test-summary]",
            "would have approved 1; you approved 0",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=test-lines]",
            "Re: Question 1: it would approve it; you have not decided",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("test-rule-dark").await.unwrap();
    let mut found = serious_violations(session, "test against history, dark").await;
    session.press_keys("\u{E00C}").await.unwrap();
    click(session, &format!("{} [data-action=edit-rule]", card(&rule))).await;
    session
        .wait_for("[data-testid=edit-dialog]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the edit rule dialog, dark").await);
    app.quit().await.unwrap();
    assert_none(&found);
}
