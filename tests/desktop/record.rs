//! The History view: one draft approved and one rejected in the window are both in the record
//! with their kinds, the kind filter narrows it to the rejection, and the sent one opens the
//! exact bytes that left, rendered and as raw source.

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};
use countersign_e2e::webdriver::Session;

use crate::support::*;

/// `(item id, kinds)` of every entry the History list shows, top to bottom.
async fn record_entries(session: &Session) -> Vec<(i64, String)> {
    let shown = session
        .execute(
            "return [...document.querySelectorAll('[data-testid=record] .entry')]
               .map(e => [Number(e.dataset.item), e.dataset.kinds]);",
            vec![],
        )
        .await
        .unwrap_or_default();
    serde_json::from_value(shown).unwrap_or_default()
}

/// Waits until the History list shows exactly `want`.
async fn wait_record(session: &Session, want: &[(i64, &str)]) -> anyhow::Result<()> {
    let want: Vec<(i64, String)> = want.iter().map(|(id, k)| (*id, k.to_string())).collect();
    let seen = std::sync::Mutex::new(Vec::new());
    let found = eventually(UI_TIMEOUT, "the record shows the decisions", || async {
        let now = record_entries(session).await;
        let done = now == want;
        *seen.lock().unwrap() = now;
        done
    })
    .await;
    found.map_err(|e| {
        let seen = seen.lock().unwrap();
        e.context(format!("want {want:?}, the record shows {seen:?}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_lists_an_approved_and_a_rejected_draft_filters_by_kind_and_opens_what_left() {
    let Some(prerequisites) = skip_or_fail(
        "history_lists_an_approved_and_a_rejected_draft_filters_by_kind_and_opens_what_left",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let approved_draft = fixture.gmail.file_draft(
        &gmail_reply(1, "Invoice 7", "Here is the invoice you asked for."),
        None,
    );
    let rejected_draft = fixture
        .gmail
        .file_draft(&gmail_reply(2, "Offer", "We can do it for free."), None);
    fixture.sync(&account).await.unwrap();
    let approved = fixture.item(&approved_draft.id).await.unwrap().id;
    let rejected = fixture.item(&rejected_draft.id).await.unwrap().id;

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();

    open_item(session, approved).await.or_log(&app);
    session.press_keys("a").await.unwrap();
    eventually(UI_TIMEOUT, "the approved draft is sent", || async {
        !fixture.gmail.sent_messages().is_empty()
    })
    .await
    .or_log(&app);
    wait_detail_state(session, "sent").await.or_log(&app);

    open_item(session, rejected).await.or_log(&app);
    session.press_keys("r").await.unwrap();
    session
        .wait_for("[data-testid=reject-dialog]", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .find("[data-testid=reject-text]")
        .await
        .unwrap()
        .send_keys("never promise free work")
        .await
        .unwrap();
    session
        .find("[data-action=confirm-reject]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_detail_state(session, "rejected").await.or_log(&app);

    // H opens History: both decisions, newest first, each with its kind.
    session.press_keys("H").await.unwrap();
    session
        .wait_for("[data-testid=record]", UI_TIMEOUT)
        .await
        .or_log(&app);
    wait_record(session, &[(rejected, "rejected"), (approved, "sent")])
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=record]",
            "never promise free work",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=agents]", "owner@example.com", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.screenshot("record").await.unwrap();

    // The kind filter: only the rejection.
    session
        .find("[data-testid=record-kind] option[value=rejected]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_record(session, &[(rejected, "rejected")])
        .await
        .or_log(&app);

    // Back to every kind; the sent one opens the bytes that left.
    session
        .find("[data-testid=record-kind] option[value='']")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_record(session, &[(rejected, "rejected"), (approved, "sent")])
        .await
        .or_log(&app);
    session
        .find(&format!(
            "[data-testid=record] .entry[data-item=\"{approved}\"]"
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[data-testid=record-outcome]",
            "the bytes that left",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    let body = session
        .execute(
            "return document.querySelector('[data-testid=record-opened] iframe')?.srcdoc ?? '';",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        body.as_str()
            .unwrap_or_default()
            .contains("Here is the invoice you asked for."),
        "the opened decision's frame holds {body}"
    );
    let sent = fixture.gmail.sent_messages();
    let digest = session
        .find("[data-testid=record-digest]")
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        digest,
        sha256_hex(&sent[0].raw),
        "the digest shown is that of the bytes Gmail received"
    );
    session
        .find("[data-action=record-raw]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[data-testid=raw-text]",
            "Here is the invoice you asked for.",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("record-opened").await.unwrap();
    app.quit().await.unwrap();
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// The sealed record (issue 35): History shows the checkpoint to keep elsewhere, and a log
/// changed with `sqlite3` (around the triggers, as an intruder would) as a banner naming the
/// row — not as an ordinary list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_shows_the_checkpoint_and_a_record_changed_with_sqlite3_as_a_banner() {
    let Some(prerequisites) =
        skip_or_fail("history_shows_the_checkpoint_and_a_record_changed_with_sqlite3_as_a_banner")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    fixture.connect_gmail().await.unwrap();
    for n in 0..3 {
        fixture
            .store
            .append_audit(&countersign_core::store::NewAuditEntry {
                actor: "owner via test".into(),
                action: "reject".into(),
                detail: Some(format!("reason {n}")),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let checkpoint = fixture.store.audit_checkpoint().await.unwrap();
    let rows = checkpoint.size;
    let out = std::process::Command::new("sqlite3")
        .arg(fixture.path().join("mirror.sqlite3"))
        .arg(format!(
            "DROP TRIGGER audit_log_no_update; UPDATE audit_log SET detail = 'approved' WHERE id = {rows}"
        ))
        .output()
        .expect("sqlite3 runs (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session.press_keys("H").await.unwrap();
    session
        .wait_for("[data-testid=record]", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=record-banner]",
            &format!("row {rows} was changed"),
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=record-checkpoint]",
            &checkpoint.origin,
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    // The suite keeps secrets in files: the view says what that means for the record.
    session
        .wait_for_text(
            "[data-testid=record-key-file]",
            "only as safe as that file",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("record-tampered").await.unwrap();
    app.quit().await.unwrap();
}
