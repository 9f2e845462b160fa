//! Rules in the window: a draft an armed rule approved shows the rule's name with the undo
//! countdown, and Undo (or Hold everything) keeps it from being sent; a rule's send is
//! notified and the notification opens the draft; Settings → Rules shows a shadow rule's
//! record against the owner's own decisions, and arming asks first with that record.

use countersign_core::decide;
use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
use countersign_core::store::{DecisionFilter, RuleMode, ShownPart};
use countersign_core::DecisionState;
use countersign_e2e::desktop::{skip_or_fail, DesktopApp};
use countersign_e2e::fixture::{eventually, Fixture, TEST_UNDO_SECS};

use crate::support::*;

/// The rule's name, as the queue and the settings page show it.
const RULE: &str = "Short replies";

/// The undo window of the rule's decision: the draft arrives through the app's own sync, and
/// the row, the detail and the Undo click must all land inside the window on a busy machine.
const RULE_UNDO_SECS: u32 = 30;

/// A reply to Ana's question `n`, threaded (a reply without In-Reply-To is flagged, and a flag
/// holds every rule).
fn threaded(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <rule-reply-{n}@agent.example>\r\n\
         In-Reply-To: <question-{n}@example.com>\r\nReferences: <question-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// Ana's question `n` in the inbox; its thread, for the reply to be filed on (the message a
/// reply answers must be in the reply's own thread, or the reply is flagged and held).
fn question(gmail: &countersign_fakes::gmail::FakeGmail, n: usize) -> String {
    let raw = format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Question {n}\r\n\
         Message-ID: <question-{n}@example.com>\r\n\r\nDoes Tuesday work?\r\n"
    );
    gmail.add_inbox_message(raw.as_bytes(), None).1
}

/// Approve short replies whose every recipient is at example.com.
fn short_replies() -> RuleDefinition {
    RuleDefinition {
        name: RULE.into(),
        scope: Default::default(),
        conditions: Conditions {
            recipients_within: vec!["example.com".into()],
            max_words: Some(30),
            ..Conditions::default()
        },
        action: RuleAction::Approve,
        daily_cap: None,
    }
}

/// A data directory with a Gmail account, `rule` armed, rules judging a draft as soon as it
/// arrives and an undo window of `undo_secs`; one long draft (no rule matches it) waits, so
/// the window opens on the queue. Returns the fixture, the rule's id and that draft's item id.
async fn armed_rule(undo_secs: u32) -> (Fixture, i64, i64) {
    let fixture = Fixture::new().await.unwrap();
    let mut settings = fixture.store.settings().await.unwrap();
    settings.undo_window_secs = undo_secs;
    // A draft is judged as soon as it arrives, not after the usual minute of settling.
    settings.rule_settle_secs = 0;
    fixture
        .store
        .update_settings(
            &countersign_core::store::SettingsChange::between(
                &fixture.store.settings().await.unwrap(),
                &settings,
            ),
            "owner via test",
        )
        .await
        .unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let rule = fixture
        .store
        .add_rule(&short_replies(), "owner via test")
        .await
        .unwrap();
    fixture
        .store
        .set_rule_mode(rule.id, RuleMode::Armed, "owner via test")
        .await
        .unwrap();
    let earlier = fixture.gmail.file_draft(
        &threaded(1, &"A long answer. ".repeat(40)),
        Some(&question(&fixture.gmail, 1)),
    );
    fixture.sync(&account).await.unwrap();
    let earlier = fixture.item(&earlier.id).await.unwrap();
    (fixture, rule.id, earlier.id)
}

/// The agent files a short reply and the owner presses Sync now: the armed rule approves it.
/// Returns the Gmail draft's id and its item id once it is in the mirror.
async fn a_short_reply_arrives(fixture: &Fixture, app: &DesktopApp) -> (String, i64) {
    let draft = fixture.gmail.file_draft(
        &threaded(2, "Yes, Tuesday works."),
        Some(&question(&fixture.gmail, 2)),
    );
    app.session()
        .find("[data-action=sync-now]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the new draft is in the mirror", || async {
        fixture.item(&draft.id).await.is_ok()
    })
    .await
    .or_log(app);
    let item = fixture.item(&draft.id).await.unwrap();
    (draft.id, item.id)
}

/// The decisions on `item_id`, oldest first.
async fn decisions_on(fixture: &Fixture, item_id: i64) -> Vec<countersign_core::store::Decision> {
    fixture
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .into_iter()
        .filter(|d| d.item_id == item_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_an_armed_rule_approved_names_the_rule_with_its_countdown_and_undo_keeps_it_unsent()
{
    let Some(prerequisites) = skip_or_fail(
        "a_draft_an_armed_rule_approved_names_the_rule_with_its_countdown_and_undo_keeps_it_unsent",
    ) else {
        return;
    };
    let (fixture, rule_id, earlier) = armed_rule(RULE_UNDO_SECS).await;
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, earlier).await.or_log(&app);
    let (draft, item) = a_short_reply_arrives(&fixture, &app).await;

    let row = format!("[role=option][data-id=\"{item}\"]");
    // The row shows the countdown and, apart (it gives way in a narrow row), the rule.
    let shown = session
        .wait_for_text(&format!("{row} .countdown"), "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app)
        .text()
        .await
        .unwrap();
    assert!(shown.contains(" s"), "the row counts down: {shown:?}");
    // Named by its own part of the row (its full text is its title: WebDriver's visible text
    // leaves out a part that may be cut with an ellipsis).
    session
        .wait_for(
            &format!("{row} .by-rule[title=\"Approved by rule {RULE}\"]"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=status-queued]",
            &format!("approved by rule {RULE} — sending in"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    open_item(session, item).await.or_log(&app);
    session
        .wait_for_text(
            "[data-testid=countdown]",
            &format!("Approved by rule {RULE} — sending in"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("approved-by-rule").await.unwrap();
    assert!(
        fixture.gmail.sent_messages().is_empty(),
        "nothing leaves inside the undo window"
    );

    session
        .find("[data-action=undo]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_detail_state(session, "pending").await.or_log(&app);
    wait_approve(session, true).await.or_log(&app);
    // Quit first: after that nothing can be sent, however late.
    app.quit().await.unwrap();
    assert_eq!(
        fixture.gmail.send_requests(&draft),
        0,
        "an undone rule approval sends nothing"
    );
    let decisions = decisions_on(&fixture, item).await;
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].state, DecisionState::Cancelled);
    assert_eq!(
        decisions[0].decided_by.as_deref(),
        Some(format!("rule:{rule_id}@1").as_str()),
        "the rule decided it"
    );
    assert_eq!(
        fixture.item(&draft).await.unwrap().state,
        countersign_core::ItemState::Pending,
        "back with the owner"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_everything_in_the_status_bar_takes_back_a_rules_approval_and_says_rules_are_held() {
    let Some(prerequisites) = skip_or_fail(
        "hold_everything_in_the_status_bar_takes_back_a_rules_approval_and_says_rules_are_held",
    ) else {
        return;
    };
    let (fixture, _, earlier) = armed_rule(RULE_UNDO_SECS).await;
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, earlier).await.or_log(&app);
    let (draft, item) = a_short_reply_arrives(&fixture, &app).await;
    let row = format!("[role=option][data-id=\"{item}\"]");
    session
        .wait_for(
            &format!("{row} .by-rule[title=\"Approved by rule {RULE}\"]"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);

    session
        .find("[data-testid=hold-everything]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text("[data-testid=status-hold]", "rules held", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for(&format!("{row}[data-state=pending]"), UI_TIMEOUT)
        .await
        .or_log(&app);
    assert!(fixture.store.settings().await.unwrap().hold_everything);
    app.quit().await.unwrap();
    assert_eq!(fixture.gmail.send_requests(&draft), 0, "held, not sent");
    let decisions = decisions_on(&fixture, item).await;
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].state, DecisionState::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_page_shows_a_shadow_rules_record_and_arming_asks_with_it_first() {
    let Some(prerequisites) =
        skip_or_fail("the_rules_page_shows_a_shadow_rules_record_and_arming_asks_with_it_first")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let first = fixture.gmail.file_draft(
        &threaded(1, "Yes, Tuesday works."),
        Some(&question(&fixture.gmail, 1)),
    );
    let second = fixture.gmail.file_draft(
        &threaded(2, "See you on Tuesday."),
        Some(&question(&fixture.gmail, 2)),
    );
    fixture.sync(&account).await.unwrap();
    let rule = fixture
        .store
        .add_rule(&short_replies(), "owner via test")
        .await
        .unwrap();
    let summary = "would have approved 2; you approved 0, edited 0, rejected 1, 1 not decided yet";

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    // The app's dispatcher lets the shadow rule look at both drafts: it records that it would
    // approve them, and only records.
    eventually(UI_TIMEOUT, "the shadow rule judged both drafts", || async {
        fixture
            .store
            .evaluations_of_rule(rule.id)
            .await
            .is_ok_and(|judged| judged.len() == 2)
    })
    .await
    .or_log(&app);
    // The owner rejects the first one (elsewhere: the command line).
    let rejected = fixture.item(&first.id).await.unwrap();
    let shown = decide::current(&fixture.store, rejected.id).await.unwrap();
    fixture
        .store
        .record_view(&shown, "owner via test", ShownPart::Text)
        .await
        .unwrap();
    decide::reject(&fixture.store, &shown, "not Tuesday", "owner via test")
        .await
        .unwrap();
    assert!(
        fixture
            .store
            .decisions_for_item(fixture.item(&second.id).await.unwrap().id)
            .await
            .unwrap()
            .is_empty(),
        "a shadow rule decides nothing"
    );

    session
        .wait_for("[data-action=settings]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    let card = format!("[data-rule=\"{}\"]", rule.id);
    session
        .wait_for_text(
            &format!("{card} [data-testid=rule-record]"),
            summary,
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .find(&format!(
            "{card}[data-mode=shadow] [data-action=see-disagreements]"
        ))
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            &format!("{card} [data-testid=disagreements]"),
            "Re: Question 1: it would approve it; you rejected it",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);

    // Arm asks first, showing the record; nothing is armed until the owner confirms.
    session
        .find(&format!("{card} [data-action=arm-rule]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text("[data-testid=arm-record]", summary, UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("arm-rule").await.unwrap();
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().mode,
        RuleMode::Shadow,
        "the dialog alone arms nothing"
    );
    session
        .find("[data-testid=arm-dialog] [data-action=confirm-arm]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for(&format!("{card}[data-mode=armed]"), UI_TIMEOUT)
        .await
        .or_log(&app);
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().mode,
        RuleMode::Armed
    );

    // A rule core refuses (a subject pattern that is not a regular expression) says why in the
    // form, and nothing is added.
    session
        .find("[data-field=name]")
        .await
        .unwrap()
        .send_keys("Broken pattern")
        .await
        .unwrap();
    session
        .find("[data-field=subject]")
        .await
        .unwrap()
        .send_keys("Re: (")
        .await
        .unwrap();
    session
        .find("[data-action=add-rule]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[data-testid=rule-form-error]",
            "the subject pattern",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.quit().await.unwrap();
    assert_eq!(fixture.store.rules().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_a_rule_sent_is_notified_with_the_rules_name_and_the_notification_opens_it() {
    let Some(prerequisites) = skip_or_fail(
        "a_draft_a_rule_sent_is_notified_with_the_rules_name_and_the_notification_opens_it",
    ) else {
        return;
    };
    // The fixture's short undo window: this test waits it out.
    let (fixture, _, earlier) = armed_rule(TEST_UNDO_SECS).await;

    // The notification is the point of this test: without a bus and dunst it fails.
    let watch = NotificationWatch::start().expect(
        "cannot watch notifications: this test needs dbus-daemon, dunst and a display \
         (scripts/test.sh runs the suite under Xvfb with both installed)",
    );
    let app = fixture
        .launch_with_env(&prerequisites, watch.env())
        .await
        .unwrap();
    let session = app.session();
    wait_detail(session, earlier).await.or_log(&app);
    // The owner looks at the settings; the agent files a short reply, which the armed rule
    // approves and, once the undo window has passed, sends.
    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=rules]", UI_TIMEOUT)
        .await
        .or_log(&app);
    let (draft, item) = a_short_reply_arrives(&fixture, &app).await;
    watch
        .wait_for(&format!("Sent by rule {RULE}: Re: Question 2"), UI_TIMEOUT)
        .await
        .or_log(&app);

    // Clicking it shows the draft the rule sent, leaving the settings view.
    assert!(watch.click(), "dunstctl action failed");
    wait_detail(session, item).await.or_log(&app);
    wait_detail_state(session, "sent").await.or_log(&app);
    app.quit().await.unwrap();
    assert_eq!(fixture.gmail.send_requests(&draft), 1, "sent once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_a_guard_held_from_an_armed_rule_says_why_above_the_mail() {
    let Some(prerequisites) =
        skip_or_fail("a_draft_a_guard_held_from_an_armed_rule_says_why_above_the_mail")
    else {
        return;
    };
    let (fixture, _rule, _earlier) = armed_rule(RULE_UNDO_SECS).await;
    let account = fixture.store.list_accounts().await.unwrap().remove(0);
    // A short reply the rule matches, but with a Bcc: a guard no rule can lift.
    let raw = String::from_utf8(threaded(3, "Yes, Tuesday works."))
        .unwrap()
        .replacen(
            "To: Ana <ana@example.com>\r\n",
            "To: Ana <ana@example.com>\r\nBcc: eve@example.com\r\n",
            1,
        );
    let draft = fixture
        .gmail
        .file_draft(raw.as_bytes(), Some(&question(&fixture.gmail, 3)));
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, item.id).await.or_log(&app);
    session
        .wait_for_text(
            "[data-testid=rule-hold]",
            &format!("held: rule {RULE} would approve, but"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    let why = session
        .find("[data-testid=rule-hold]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(why.contains("Bcc"), "names the guard: {why}");
    app.quit().await.unwrap();
    assert!(decisions_on(&fixture, item.id).await.is_empty());
    assert_eq!(fixture.gmail.send_requests(&draft.id), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arming_a_rule_with_no_record_says_so_and_arms_only_as_arm_with_no_record() {
    let Some(prerequisites) =
        skip_or_fail("arming_a_rule_with_no_record_says_so_and_arms_only_as_arm_with_no_record")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    fixture.connect_gmail().await.unwrap();
    let rule = fixture
        .store
        .add_rule(&short_replies(), "owner via test")
        .await
        .unwrap();
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session
        .wait_for("[data-action=settings]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    let card = format!("[data-rule=\"{}\"]", rule.id);
    session
        .wait_for_text(
            &format!("{card} [data-testid=rule-record]"),
            "has matched no draft yet",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .find(&format!("{card} [data-action=arm-rule]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[data-testid=arm-no-record]",
            "It has no record",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    let confirm = session
        .find("[data-testid=arm-dialog] [data-action=confirm-arm]")
        .await
        .unwrap();
    assert_eq!(confirm.text().await.unwrap(), "Arm with no record");
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().mode,
        RuleMode::Shadow,
        "the dialog alone arms nothing"
    );
    confirm.click().await.unwrap();
    session
        .wait_for(&format!("{card}[data-mode=armed]"), UI_TIMEOUT)
        .await
        .or_log(&app);
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().mode,
        RuleMode::Armed
    );
    let armed_by: Vec<String> = fixture
        .store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.line.action == "rule armed")
        .map(|e| e.line.actor)
        .collect();
    assert_eq!(armed_by, vec!["owner via desktop".to_string()]);
    app.quit().await.unwrap();
}
