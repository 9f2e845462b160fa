//! Accessibility in the real window: axe-core (the version pinned in `ui/package.json`) run
//! through WebDriver on every view, draft state and dialog the owner meets, with no critical or
//! serious violation allowed; every main action reachable with Tab alone, each with a visible
//! focus indicator; and the window following the system's dark and reduced-motion preferences.
//!
//! axe is read from `ui/node_modules` and injected into the page by the test: nothing is
//! fetched at test time, and the app ships without it.
//!
//! What axe does not look into: the mail body and the answered message, each rendered in an
//! `<iframe sandbox="" srcdoc=…>`. The frame's content is the agent's HTML (or the sender's),
//! not our UI, and a sandbox without `allow-scripts` cannot run axe inside it anyway — axe
//! would wait for an answer that never comes. The `<iframe>` element itself (its title) is
//! ours and is checked.

use std::fmt::Write as _;

use countersign_core::decide::{self, UndoWindow};
use countersign_core::rules::{Conditions, RuleAction, RuleDefinition};
use countersign_e2e::desktop::{skip_or_fail, workspace_root, DesktopApp, LaunchOptions};
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};
use countersign_e2e::webdriver::Session;
use serde_json::{json, Value};

use crate::support::*;

/// The axe-core build `npm ci` installed in `ui/` (a devDependency, pinned exactly).
fn axe_source() -> String {
    let path = workspace_root().join("ui/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): run `npm ci` in ui/ (scripts/setup.sh does)",
            path.display()
        )
    })
}

/// Runs axe on the whole document as it is now and returns each critical or serious violation
/// (rule, impact, what to fix, the first few elements), with `view` it was found on.
pub(crate) async fn serious_violations(session: &Session, view: &str) -> Vec<(String, String)> {
    // Injected as the script itself (the page's CSP allows no eval); once per page, which
    // lives as long as the app (the UI never navigates).
    let present = session
        .execute("return typeof window.axe === 'object';", vec![])
        .await
        .unwrap();
    if present != json!(true) {
        let script = format!("{}\nreturn typeof window.axe;", axe_source());
        let injected = session.execute(&script, vec![]).await.unwrap();
        assert_eq!(injected, json!("object"), "axe did not load in the page");
    }
    let result = session
        .execute_async(
            "const done = arguments[arguments.length - 1];
             // iframes: false — the mail frames are sandboxed (no scripts) and hold the
             // agent's HTML, not our UI: see this file's header.
             axe.run(document, {resultTypes: ['violations'], iframes: false})
               .then(r => done({ok: r.violations
                 .filter(v => v.impact === 'critical' || v.impact === 'serious')
                 .map(v => ({id: v.id, impact: v.impact, help: v.help,
                             count: v.nodes.length,
                             targets: v.nodes.slice(0, 4).map(n => n.target.join(' ')),
                             summary: v.nodes[0]?.failureSummary ?? ''}))}))
               .catch(e => done({error: String(e)}));",
            vec![],
        )
        .await
        .unwrap();
    if let Some(error) = result.get("error") {
        panic!("axe failed on {view}: {error}");
    }
    result["ok"]
        .as_array()
        .expect("axe's violations are a list")
        .iter()
        .map(|v| (view.to_owned(), describe(v)))
        .collect()
}

fn describe(v: &Value) -> String {
    let mut line = format!(
        "{} ({}) — {} — {} element(s): {}",
        v["id"].as_str().unwrap_or("?"),
        v["impact"].as_str().unwrap_or("?"),
        v["help"].as_str().unwrap_or(""),
        v["count"],
        v["targets"]
            .as_array()
            .map(|t| t
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | "))
            .unwrap_or_default(),
    );
    let summary = v["summary"].as_str().unwrap_or("").replace('\n', " ");
    if !summary.is_empty() {
        let _ = write!(line, " [{summary}]");
    }
    line
}

/// Fails listing every violation found, each once with every view it was found on.
pub(crate) fn assert_none(violations: &[(String, String)]) {
    let mut grouped: Vec<(&str, Vec<&str>)> = Vec::new();
    for (view, violation) in violations {
        match grouped.iter_mut().find(|(v, _)| v == violation) {
            Some((_, views)) => views.push(view),
            None => grouped.push((violation, vec![view])),
        }
    }
    let report: Vec<String> = grouped
        .iter()
        .map(|(violation, views)| format!("- {violation}\n  on: {}", views.join("; ")))
        .collect();
    assert!(
        violations.is_empty(),
        "{} critical or serious accessibility violation(s):\n{}",
        grouped.len(),
        report.join("\n")
    );
}

/// Opens an overlay with `key`, checks it, closes it with Escape.
async fn check_overlay(
    app: &DesktopApp,
    key: &str,
    testid: &str,
    view: &str,
    found: &mut Vec<(String, String)>,
) {
    let session = app.session();
    session.press_keys(key).await.unwrap();
    session
        .wait_for(&format!("[data-testid={testid}]"), UI_TIMEOUT)
        .await
        .or_log(app);
    found.extend(serious_violations(session, view).await);
    close_overlay(app, testid).await;
}

/// Escape, and waits until the overlay `testid` is gone.
async fn close_overlay(app: &DesktopApp, testid: &str) {
    app.session().press_keys(ESCAPE).await.unwrap();
    wait_gone(app, &format!("[data-testid={testid}]")).await;
}

/// The spec's code point for Escape.
const ESCAPE: &str = "\u{E00C}";

/// Waits until nothing matches `selector`.
async fn wait_gone(app: &DesktopApp, selector: &str) {
    let session = app.session();
    eventually(UI_TIMEOUT, &format!("`{selector}` goes"), || async {
        session
            .find_all(selector)
            .await
            .is_ok_and(|found| found.is_empty())
    })
    .await
    .or_log(app);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_welcome_its_shortcuts_and_settings_have_no_serious_accessibility_violations() {
    let Some(prerequisites) = skip_or_fail(
        "the_welcome_its_shortcuts_and_settings_have_no_serious_accessibility_violations",
    ) else {
        return;
    };
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    let session = app.session();
    session
        .wait_for_text("[data-testid=welcome] h2", "Welcome", UI_TIMEOUT)
        .await
        .or_log(&app);
    let mut found = serious_violations(session, "the welcome").await;
    check_overlay(&app, "?", "shortcuts", "the shortcuts overlay", &mut found).await;

    // A failed connection: the error beside the form (nothing listens on the discard port).
    session
        .find("[data-testid=welcome-muster-url]")
        .await
        .unwrap()
        .send_keys("http://127.0.0.1:9")
        .await
        .unwrap();
    session
        .find("[data-testid=welcome-muster-password]")
        .await
        .unwrap()
        .send_keys("secret")
        .await
        .unwrap();
    session
        .find("[data-action=welcome-muster]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=welcome-error]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the welcome with a failed connection").await);

    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "settings without accounts").await);
    app.quit().await.unwrap();
    assert_none(&found);
}

/// The queue, as the accessibility tree (not the markup) has it: a listbox with a name, and
/// each row an option named by its subject and recipients — what a screen reader announces
/// when j/k move through it.
async fn assert_queue_is_a_named_listbox(app: &DesktopApp) {
    let session = app.session();
    let list = session.find("[role=listbox]").await.or_log(app);
    assert_eq!(list.computed_role().await.or_log(app), "listbox");
    assert_eq!(list.computed_label().await.or_log(app), "Review queue");
    let rows = session.find_all("[role=listbox] > *").await.or_log(app);
    assert!(!rows.is_empty(), "the listbox has no rows");
    for row in rows {
        let role = row.computed_role().await.or_log(app);
        let name = row.computed_label().await.or_log(app);
        let subject = row_subject(session, &row).await;
        assert_eq!(
            role, "option",
            "a row of the queue is a {role:?} ({name:?})"
        );
        assert!(
            !subject.is_empty() && name.starts_with(&subject) && name.contains(" To "),
            "a row's accessible name does not say what it is: {name:?} (subject {subject:?})"
        );
    }
}

/// The subject a queue row shows.
async fn row_subject(session: &Session, row: &countersign_e2e::webdriver::Element) -> String {
    let id = row
        .attribute("data-id")
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    session
        .execute(
            "return document.querySelector(`[role=option][data-id=\"${arguments[0]}\"] .subject`)
               ?.textContent.trim() ?? '';",
            vec![json!(id)],
        )
        .await
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A muster reply the plugin has not checked yet.
async fn muster_awaiting_check(fixture: &Fixture) -> String {
    let account = fixture.connect_muster().await.unwrap();
    fixture.muster.create_plugin("careful", true).unwrap();
    let relayed = fixture
        .muster
        .relay_message(
            "careful",
            "inbox-chat",
            "bo@example.com",
            "Quote",
            "How much?",
        )
        .unwrap();
    let draft = fixture
        .muster
        .file_draft(&relayed.route_id, "It is 40 EUR.")
        .unwrap();
    fixture.sync(&account).await.unwrap();
    draft
}

/// A multipart whose boundary never appears: a parse warning, and "Approve anyway?".
const MALFORMED: &[u8] = b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
      Subject: Re: Figures\r\nMessage-ID: <e2e-a11y-malformed@agent.example>\r\n\
      MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n\
      The figures are attached.\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_each_draft_state_every_dialog_settings_and_history_have_no_serious_accessibility_violations(
) {
    let Some(prerequisites) = skip_or_fail(
        "the_queue_each_draft_state_every_dialog_settings_and_history_have_no_serious_accessibility_violations",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let gmail = fixture.connect_gmail().await.unwrap();
    let pending = fixture
        .gmail
        .file_draft(&gmail_reply(1, "Invoice 7", "Here is the invoice."), None);
    let warned = fixture.gmail.file_draft(MALFORMED, None);
    let to_send = fixture
        .gmail
        .file_draft(&gmail_reply(3, "Thanks", "Thank you, Ana."), None);
    let to_reject = fixture
        .gmail
        .file_draft(&gmail_reply(4, "Offer", "We can do it for free."), None);
    fixture.sync(&gmail).await.unwrap();
    let muster = muster_awaiting_check(&fixture).await;
    let pending = fixture.item(&pending.id).await.unwrap().id;
    let warned = fixture.item(&warned.id).await.unwrap().id;
    let sent = fixture.item(&to_send.id).await.unwrap().id;
    let rejected = fixture.item(&to_reject.id).await.unwrap().id;
    let muster = fixture.item(&muster).await.unwrap().id;

    // Decided elsewhere (the command line) before the app starts: its dispatcher sends one and
    // deletes the other, so both reach their final state in the window.
    let shown = decide::current(&fixture.store, sent).await.unwrap();
    fixture
        .store
        .record_view(
            &shown,
            "owner via test",
            countersign_core::store::ShownPart::Text,
        )
        .await
        .unwrap();
    decide::approve(
        &fixture.store,
        &shown,
        UndoWindow::None,
        "owner via test",
        decide::Confirmation::None,
    )
    .await
    .unwrap();
    let shown = decide::current(&fixture.store, rejected).await.unwrap();
    decide::reject(&fixture.store, &shown, "Too generous", "owner via test")
        .await
        .unwrap();
    // A rule in shadow, for Settings → Rules and its Arm dialog (in shadow it only records).
    let rule = fixture
        .store
        .add_rule(
            &RuleDefinition {
                name: "Short replies".into(),
                scope: Default::default(),
                conditions: Conditions {
                    recipients_within: vec!["example.com".into()],
                    max_words: Some(30),
                    ..Conditions::default()
                },
                action: RuleAction::Approve,
                daily_cap: None,
            },
            "owner via test",
        )
        .await
        .unwrap();
    // The approval below is looked at inside its undo window.
    fixture
        .set_undo_window(LOOK_INSIDE_UNDO_SECS)
        .await
        .unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    let mut found = Vec::new();

    // The queue and a pending draft, then its dialogs.
    open_item(session, pending).await.or_log(&app);
    assert_queue_is_a_named_listbox(&app).await;
    found.extend(serious_violations(session, "the queue with a pending draft").await);
    check_overlay(&app, "r", "reject-dialog", "the Reject dialog", &mut found).await;
    check_overlay(&app, "e", "edit-dialog", "the Edit dialog", &mut found).await;
    check_overlay(&app, "u", "raw-source", "the raw source", &mut found).await;
    check_overlay(&app, "?", "shortcuts", "the shortcuts overlay", &mut found).await;

    // Picked for a bulk decision, and its confirmation.
    session.press_keys("x").await.unwrap();
    session
        .wait_for_text("[data-testid=picked-count]", "1 selected", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the queue with a picked draft").await);
    session
        .find("[data-action=bulk-reject]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=bulk-summary]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the bulk confirmation").await);
    close_overlay(&app, "bulk-dialog").await;
    // Escape again unpicks.
    session.press_keys(ESCAPE).await.unwrap();
    wait_gone(&app, "[data-testid=picked-count]").await;

    // A draft with a warning, and "Approve anyway?".
    open_item(session, warned).await.or_log(&app);
    session
        .wait_for("[data-testid=warnings]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "a draft with a warning").await);
    session.press_keys("a").await.unwrap();
    session
        .wait_for("[data-testid=approve-anyway]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the Approve anyway dialog").await);
    close_overlay(&app, "approve-anyway").await;

    // Sent, rejected, and a muster reply awaiting its check.
    for (id, state) in [
        (sent, "sent"),
        (rejected, "rejected"),
        (muster, "awaiting_check"),
    ] {
        open_item(session, id).await.or_log(&app);
        wait_detail_state(session, state).await.or_log(&app);
        found.extend(serious_violations(session, &format!("a draft in state {state}")).await);
    }

    // Queued in its undo window, then undone.
    open_item(session, pending).await.or_log(&app);
    wait_approve(session, true).await.or_log(&app);
    session.press_keys("a").await.unwrap();
    session
        .wait_for_text("[data-testid=countdown]", "Sending in", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "a draft queued in its undo window").await);
    session.press_keys("z").await.unwrap();
    wait_detail_state(session, "pending").await.or_log(&app);

    // Settings with a Gmail and a muster account.
    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "settings with two accounts and a rule").await);
    let card = format!("[data-rule=\"{}\"]", rule.id);
    session
        .wait_for(&format!("{card} [data-action=arm-rule]"), UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=arm-record]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "the Arm dialog").await);
    // A dialog inside a page still leaves the whole window behind it inert, header included.
    let behind = session
        .execute(
            "return ['[data-action=queue]', '[data-testid=rules] form', '[data-action=sync-now]']
               .filter(s => !document.querySelector(s)?.closest('[inert]'));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(behind, json!([]), "not inert behind the Arm dialog");
    session
        .find("[data-testid=arm-dialog] .close")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_gone(&app, "[data-testid=arm-dialog]").await;

    // History: the decisions made above, and the sent one opened (what left, in its frame).
    session
        .find("[data-action=record]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let entry = format!("[data-testid=record] .entry[data-item=\"{sent}\"]");
    session.wait_for(&entry, UI_TIMEOUT).await.or_log(&app);
    found.extend(serious_violations(session, "History").await);
    session.find(&entry).await.unwrap().click().await.unwrap();
    session
        .wait_for("[data-testid=record-digest]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "a decision opened in History").await);

    app.quit().await.unwrap();
    assert_none(&found);
}

/// The spec's code point for Tab.
const TAB: &str = "\u{E004}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_alone_reaches_the_queue_the_decisions_and_settings_each_with_a_visible_focus() {
    let Some(prerequisites) = skip_or_fail(
        "tab_alone_reaches_the_queue_the_decisions_and_settings_each_with_a_visible_focus",
    ) else {
        return;
    };
    let raw = gmail_reply(1, "Invoice 7", "Here is the invoice.");
    let (_fixture, app, _id) = one_draft_on_screen(&prerequisites, &raw).await;
    let session = app.session();
    wait_approve(session, true).await.or_log(&app);
    // From the top of the page, as after a click on nothing, in the window in front.
    session.focus_window().await.or_log(&app);
    session
        .execute("document.activeElement?.blur();", vec![])
        .await
        .unwrap();

    // Tab through the whole window once: each stop named, and whether it shows it has the
    // focus (an outline or a box shadow that is there only while focused by the keyboard).
    let mut stops: Vec<Value> = Vec::new();
    for _ in 0..80 {
        session.press_keys(TAB).await.unwrap();
        let stop = focus_stop(&app).await;
        // Round once: the first stop again ends the tour.
        if !stops.is_empty() && stop == stops[0] {
            break;
        }
        stops.push(stop);
    }
    let names: Vec<&str> = stops.iter().filter_map(|s| s["name"].as_str()).collect();
    for wanted in [
        "role=listbox",
        "action=approve",
        "action=reject",
        "action=edit",
        "action=raw",
        "action=record",
        "action=settings",
    ] {
        assert!(
            names.contains(&wanted),
            "Tab never reaches {wanted}; it stops at {names:?}"
        );
    }
    let unseen: Vec<String> = stops
        .iter()
        .filter(|s| !s.is_null())
        .filter(|s| s["keyboard"] != json!(true) || s["visible"] != json!(true))
        .map(|s| format!("{} ({})", s["name"], s["style"]))
        .collect();
    assert!(
        unseen.is_empty(),
        "focused by Tab without a visible focus indicator: {unseen:#?}"
    );

    // A dialog keeps the keyboard: Tab goes round inside it, never to the window behind.
    session.press_keys("r").await.unwrap();
    session
        .wait_for("[data-testid=reject-dialog]", UI_TIMEOUT)
        .await
        .or_log(&app);
    for _ in 0..12 {
        session.press_keys(TAB).await.unwrap();
        let inside = session
            .execute(
                "const e = document.activeElement;
                 return e?.closest('[role=dialog]') ? null : (e?.outerHTML ?? 'nothing').slice(0, 120);",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(inside, Value::Null, "Tab left the open dialog for {inside}");
    }
    close_overlay(&app, "reject-dialog").await;

    // And Settings opens from the keyboard.
    while focused_action(session).await.as_deref() != Some("settings") {
        session.press_keys(TAB).await.unwrap();
    }
    session.press_keys("\u{E007}").await.unwrap();
    session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.quit().await.unwrap();
}

/// The focused element (named by its `data-action`, role, or tag and label) and whether it
/// shows it has the focus, read while the window has the keyboard focus: a window in the
/// background (another test's app opened after this one) matches no `:focus`, so it is
/// brought back first.
async fn focus_stop(app: &DesktopApp) -> Value {
    let session = app.session();
    for _ in 0..10 {
        let stop = session
            .execute(
                "const e = document.activeElement;
                 if (!document.hasFocus()) return 'background';
                 if (!e || e === document.body) return null;
                 const s = getComputedStyle(e);
                 const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
                 return {
                   name: e.dataset.action ? `action=${e.dataset.action}`
                     : e.getAttribute('role') ? `role=${e.getAttribute('role')}`
                     : `${e.tagName.toLowerCase()} ${e.getAttribute('aria-label') ?? ''}`,
                   keyboard: e.matches(':focus-visible'),
                   visible: outline || s.boxShadow !== 'none',
                   style: `outline ${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}; \
                           shadow ${s.boxShadow}`,
                 };",
                vec![],
            )
            .await
            .or_log(app);
        if stop != json!("background") {
            return stop;
        }
        session.focus_window().await.or_log(app);
    }
    panic!("the window never kept the focus\n{}", app.log_tail());
}

/// The `data-action` of the focused element.
async fn focused_action(session: &Session) -> Option<String> {
    session
        .execute(
            "return document.activeElement?.dataset?.action ?? null;",
            vec![],
        )
        .await
        .ok()?
        .as_str()
        .map(str::to_owned)
}

/// A GTK settings file asking for the dark variant and no animations: what GNOME's "Dark
/// style" and "Reduce animation" settings amount to for a GTK app. WebKitGTK derives
/// `prefers-color-scheme` from `gtk-application-prefer-dark-theme` and
/// `prefers-reduced-motion` from `gtk-enable-animations`, and GTK reads this file from
/// `$XDG_CONFIG_HOME/gtk-3.0/` when no settings daemon runs (none does under Xvfb). WebDriver
/// itself has no way to emulate a media feature in WebKitGTK.
pub(crate) fn dark_and_still_config() -> tempfile::TempDir {
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("gtk-3.0")).unwrap();
    std::fs::write(
        config.path().join("gtk-3.0/settings.ini"),
        "[Settings]\ngtk-application-prefer-dark-theme=1\ngtk-enable-animations=0\n",
    )
    .unwrap();
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_systems_dark_style_and_reduced_motion_the_window_is_dark_still_and_accessible() {
    let Some(prerequisites) = skip_or_fail(
        "with_the_systems_dark_style_and_reduced_motion_the_window_is_dark_still_and_accessible",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let ids = gmail_drafts(&fixture, 2, |n| format!("Invoice {n}")).await;
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
    wait_detail(session, ids[0]).await.or_log(&app);

    // The system's choice reached the page…
    let media = session
        .execute(
            "return [matchMedia('(prefers-color-scheme: dark)').matches,
                     matchMedia('(prefers-reduced-motion: reduce)').matches];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        media,
        json!([true, true]),
        "the GTK settings did not reach WebKit"
    );
    // …and the stylesheet follows it: a dark window, and no transition even where one is asked
    // for (a probe element with one of its own).
    let looks = session
        .execute(
            "const bg = getComputedStyle(document.documentElement).backgroundColor;
             const [r, g, b] = bg.match(/\\d+/g).map(Number);
             const probe = document.createElement('div');
             probe.style.transition = 'opacity 2s';
             probe.style.animation = 'x 2s infinite';
             document.body.append(probe);
             const s = getComputedStyle(probe);
             const still = [s.transitionDuration, s.animationName];
             probe.remove();
             return {bg, luminance: (r + g + b) / 3, still};",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        looks["luminance"].as_f64().unwrap() < 64.0,
        "the window is not dark: {looks}"
    );
    assert!(
        looks["still"] == json!(["0s", "none"]),
        "a transition or animation still runs under reduced motion: {looks}"
    );
    app.screenshot("dark").await.unwrap();

    // The dark tokens pass the same checks as the light ones.
    let mut found = serious_violations(session, "the queue in dark style").await;
    check_overlay(
        &app,
        "r",
        "reject-dialog",
        "the Reject dialog in dark style",
        &mut found,
    )
    .await;
    session.press_keys("x").await.unwrap();
    session
        .wait_for_text("[data-testid=picked-count]", "1 selected", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "a picked draft in dark style").await);
    session.press_keys(ESCAPE).await.unwrap();
    wait_gone(&app, "[data-testid=picked-count]").await;
    session
        .find("[data-action=settings]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=undo-window]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "settings in dark style").await);
    session
        .find("[data-action=record]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for("[data-testid=record]", UI_TIMEOUT)
        .await
        .or_log(&app);
    found.extend(serious_violations(session, "History in dark style").await);
    app.quit().await.unwrap();
    assert_none(&found);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stylesheet_has_dark_and_reduced_motion_rules() {
    let Some(prerequisites) = skip_or_fail("the_stylesheet_has_dark_and_reduced_motion_rules")
    else {
        return;
    };
    // The window under the suite's own (light) GTK settings: the rules are read from the
    // CSSOM, whatever the system decided, so they are checked even where the preference
    // cannot be set (another desktop, a GTK that ignores the settings file).
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    let session = app.session();
    session
        .wait_for("[data-testid=welcome]", UI_TIMEOUT)
        .await
        .or_log(&app);
    let rules = session
        .execute(
            "const found = {dark: [], reduce: []};
             const walk = (rules) => {
               for (const rule of rules) {
                 if (rule instanceof CSSMediaRule) {
                   const text = rule.conditionText ?? rule.media.mediaText;
                   const inner = [...rule.cssRules].map(r => r.cssText).join(' ');
                   if (/prefers-color-scheme:\\s*dark/.test(text)) found.dark.push(inner);
                   if (/prefers-reduced-motion:\\s*reduce/.test(text)) found.reduce.push(inner);
                   walk(rule.cssRules);
                 }
               }
             };
             for (const sheet of document.styleSheets) walk(sheet.cssRules);
             return found;",
            vec![],
        )
        .await
        .unwrap();
    let dark = rules["dark"].to_string();
    for token in ["--bg:", "--fg:", "--fg-muted:", "--accent:", "--focus:"] {
        assert!(
            dark.contains(token),
            "no dark value for {token} in a prefers-color-scheme: dark rule: {dark}"
        );
    }
    let reduce = rules["reduce"].to_string();
    for property in ["transition", "animation", "scroll-behavior"] {
        assert!(
            reduce.contains(property),
            "the prefers-reduced-motion: reduce rule does not turn {property} off: {reduce}"
        );
    }
    app.quit().await.unwrap();
}
