//! The Gmail label scope in the window (issue 38): the queue row shows a draft's user labels
//! as chips; the owner picks a label by name in the rule form, arms the rule, and it decides
//! only the draft carrying that label. The edit dialog with the label field has no serious
//! accessibility violation.

use countersign_core::store::{RuleMode, SettingsChange};
use countersign_e2e::desktop::{skip_or_fail, DesktopApp};
use countersign_e2e::fixture::{eventually, Fixture};
use countersign_e2e::webdriver::Session;

use crate::accessibility::{assert_none, serious_violations};
use crate::support::*;

fn threaded(n: usize) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <label-reply-{n}@agent.example>\r\n\
         In-Reply-To: <question-{n}@example.com>\r\nReferences: <question-{n}@example.com>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nYes, Tuesday works.\r\n"
    )
    .into_bytes()
}

/// The agent files reply `n` carrying the labels `labels` (ids); its Gmail draft id.
fn file_reply(fixture: &Fixture, n: usize, labels: &[&str]) -> String {
    let question = format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Question {n}\r\n\
         Message-ID: <question-{n}@example.com>\r\n\r\nDoes Tuesday work?\r\n"
    );
    let (_, thread) = fixture.gmail.add_inbox_message(question.as_bytes(), None);
    fixture
        .gmail
        .file_draft_with_labels(&threaded(n), Some(&thread), labels)
        .id
}

async fn click(app: &DesktopApp, selector: &str) {
    app.session()
        .wait_for(selector, UI_TIMEOUT)
        .await
        .or_log(app)
        .click()
        .await
        .unwrap();
}

async fn type_into(session: &Session, selector: &str, text: &str) {
    session
        .find(selector)
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_scoped_rule_made_in_the_window_decides_only_the_labelled_draft() {
    let Some(prerequisites) =
        skip_or_fail("a_label_scoped_rule_made_in_the_window_decides_only_the_labelled_draft")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    // Judged as soon as they arrive; a rule's approval waits 60 s (nothing leaves here).
    let before = fixture.store.settings().await.unwrap();
    let mut after = before.clone();
    after.rule_settle_secs = 0;
    after.undo_window_secs = 60;
    fixture
        .store
        .update_settings(&SettingsChange::between(&before, &after), "owner via test")
        .await
        .unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let billing = fixture.gmail.create_label("Agents/Billing");
    fixture.gmail.create_label("Agents/Support");
    let shown = file_reply(&fixture, 1, &[&billing]);
    fixture.sync(&account).await.unwrap();
    let shown = fixture.item(&shown).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    // The queue row carries the draft's user label as a chip (DRAFT, a system label, is not).
    // (WebKit's element text reads "" for a chip that may be cut: its content is read instead.)
    session
        .wait_for(
            &format!(
                "#item-{} .label-chip[data-label=\"Agents/Billing\"]",
                shown.id
            ),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    let chips = session
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map(c => c.textContent);",
            vec![serde_json::json!(format!("#item-{} .label-chip", shown.id))],
        )
        .await
        .unwrap();
    assert_eq!(chips, serde_json::json!(["Agents/Billing"]));
    app.screenshot("label-chip").await.unwrap();

    // The owner adds the rule in the window, picking the label by name.
    click(&app, "[data-action=settings]").await;
    session
        .wait_for("[data-testid=rule-form]", UI_TIMEOUT)
        .await
        .or_log(&app);
    type_into(
        session,
        "[data-testid=rule-form] [data-field=name]",
        "Billing agent",
    )
    .await;
    type_into(
        session,
        "[data-testid=rule-form] [data-field=within]",
        "example.com",
    )
    .await;
    let option = format!("[data-testid=rule-form] [data-field=label] option[value=\"{billing}\"]");
    session
        .wait_for_text(&option, "Agents/Billing", UI_TIMEOUT)
        .await
        .or_log(&app);
    click(&app, &option).await;
    click(&app, "[data-action=add-rule]").await;
    eventually(UI_TIMEOUT, "the rule is added", || async {
        fixture.store.rules().await.is_ok_and(|r| r.len() == 1)
    })
    .await
    .or_log(&app);
    let rule = fixture.store.rules().await.unwrap().remove(0);
    assert_eq!(
        rule.definition.scope.label.as_deref(),
        Some(billing.as_str())
    );
    let card = format!("[data-rule=\"{}\"]", rule.id);
    session
        .wait_for_text(&card, "labelled Agents/Billing", UI_TIMEOUT)
        .await
        .or_log(&app);

    click(&app, &format!("{card} [data-action=edit-rule]")).await;
    session
        .wait_for("[data-testid=edit-dialog] [data-field=label]", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("label-rule-edit").await.unwrap();
    let found = serious_violations(session, "the edit dialog with a label scope").await;
    session.press_keys("\u{E00C}").await.unwrap();

    click(&app, &format!("{card} [data-action=arm-rule]")).await;
    click(&app, "[data-action=confirm-arm]").await;
    session
        .wait_for(&format!("{card}[data-mode=armed]"), UI_TIMEOUT)
        .await
        .or_log(&app);
    assert_eq!(
        fixture.store.rule(rule.id).await.unwrap().mode,
        RuleMode::Armed
    );

    // Two new replies to example.com, one with the label: the rule decides that one only.
    let labelled = file_reply(&fixture, 2, &[&billing]);
    let unlabelled = file_reply(&fixture, 3, &[]);
    fixture.sync(&account).await.unwrap();
    let labelled = fixture.item(&labelled).await.unwrap();
    let unlabelled = fixture.item(&unlabelled).await.unwrap();
    eventually(
        UI_TIMEOUT,
        "the rule decided the labelled draft",
        || async {
            fixture
                .store
                .decisions_for_item(labelled.id)
                .await
                .is_ok_and(|d| !d.is_empty())
        },
    )
    .await
    .or_log(&app);
    eventually(UI_TIMEOUT, "the rules judged the other draft", || async {
        fixture
            .store
            .evaluations_for_item(unlabelled.id)
            .await
            .is_ok_and(|judged| judged.iter().any(|e| e.rule_id == rule.id))
    })
    .await
    .or_log(&app);
    app.quit().await.unwrap();
    assert!(
        fixture
            .store
            .decisions_for_item(unlabelled.id)
            .await
            .unwrap()
            .is_empty(),
        "the draft without the label waits for the owner"
    );
    assert_none(&found);
}
