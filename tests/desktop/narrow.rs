//! A narrow window (800 × 600): a queue row keeps its state and a rule decision's countdown
//! whole, and cuts the rule's name instead, which stays whole on hover.

use countersign_core::rules::{pass, Conditions, RuleAction, RuleDefinition};
use countersign_core::store::{RuleMode, SettingsChange};
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::Fixture;

use crate::support::*;

const LONG_NAME: &str = "Short replies to the people we already write to every single week, \
                         approved without asking because they are routine";

fn threaded(body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question\r\nMessage-ID: <narrow-reply@agent.example>\r\n\
         In-Reply-To: <narrow-question@example.com>\r\n\
         References: <narrow-question@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_800_wide_a_long_rule_name_gives_way_and_the_countdown_stays_whole() {
    let Some(prerequisites) =
        skip_or_fail("at_800_wide_a_long_rule_name_gives_way_and_the_countdown_stays_whole")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let before = fixture.store.settings().await.unwrap();
    let mut settings = before.clone();
    // Long enough that the decision is still counting down when the test looks.
    settings.undo_window_secs = 60;
    settings.rule_settle_secs = 0;
    fixture
        .store
        .update_settings(
            &SettingsChange::between(&before, &settings),
            "owner via test",
        )
        .await
        .unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let rule = fixture
        .store
        .add_rule(
            &RuleDefinition {
                name: LONG_NAME.into(),
                scope: Default::default(),
                conditions: Conditions {
                    recipients_within: vec!["example.com".into()],
                    ..Conditions::default()
                },
                action: RuleAction::Approve,
                daily_cap: None,
            },
            "owner via test",
        )
        .await
        .unwrap();
    fixture
        .store
        .set_rule_mode(rule.id, RuleMode::Armed, "owner via test")
        .await
        .unwrap();
    let (_, thread) = fixture.gmail.add_inbox_message(
        b"From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Question\r\n\
          Message-ID: <narrow-question@example.com>\r\n\r\nTuesday?\r\n",
        None,
    );
    let draft = fixture
        .gmail
        .file_draft(&threaded("Yes, Tuesday works."), Some(&thread));
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap().id;
    let decided = pass::run(&fixture.store, chrono::Utc::now()).await.unwrap();
    assert_eq!(decided.decided.len(), 1, "the rule approves the draft");

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session.set_window_size(800, 600).await.unwrap();
    let row = format!("[role=option][data-id=\"{item}\"]");
    session
        .wait_for_text(&format!("{row} .countdown"), "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app);
    // Measured in the page: each part's own width against the room it was given.
    let widths = session
        .execute(
            "const row = document.querySelector(arguments[0]);
             const part = (s) => { const e = row.querySelector(s);
               return e ? {shown: e.clientWidth, needs: e.scrollWidth, title: e.title,
                           text: e.textContent} : null; };
             return {window: window.innerWidth, row: row.clientWidth,
                     state: part('.state'), countdown: part('.countdown'),
                     rule: part('.by-rule')};",
            vec![serde_json::json!(row)],
        )
        .await
        .unwrap();
    app.screenshot("narrow-row-long-rule-name").await.unwrap();
    let window = widths["window"].as_i64().unwrap_or(0);
    assert!(window <= 800, "the window is not narrow: {widths}");
    for part in ["state", "countdown"] {
        let shown = widths[part]["shown"].as_i64().unwrap_or(0);
        let needs = widths[part]["needs"].as_i64().unwrap_or(i64::MAX);
        assert!(shown > 0 && needs <= shown, "the {part} is cut: {widths}");
    }
    let rule = &widths["rule"];
    assert!(
        rule["needs"].as_i64().unwrap_or(0) > rule["shown"].as_i64().unwrap_or(0),
        "the long rule name should be the part that gives way: {widths}"
    );
    assert_eq!(
        rule["title"].as_str(),
        Some(format!("Approved by rule {LONG_NAME}").as_str()),
        "the full name on hover"
    );
}
