//! What the owner sees before approving is what the recipient may read: parse warnings above
//! the mail, and "Approve anyway?" before a draft whose structure mail programs read otherwise.

use countersign_core::store::DecisionFilter;
use countersign_e2e::desktop::skip_or_fail;

use crate::support::*;

/// A multipart whose boundary never appears: what a recipient's program shows is anyone's
/// guess.
fn malformed_reply() -> Vec<u8> {
    b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
      Subject: Re: Figures\r\nMessage-ID: <e2e-malformed@agent.example>\r\n\
      MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n\
      The figures are attached.\r\n"
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_draft_shows_its_warning_above_the_mail_and_approve_asks_first() {
    let Some(prerequisites) =
        skip_or_fail("a_malformed_draft_shows_its_warning_above_the_mail_and_approve_asks_first")
    else {
        return;
    };
    let raw = malformed_reply();
    let (fixture, app, id) = one_draft_on_screen(&prerequisites, &raw).await;
    let session = app.session();
    session
        .wait_for_text("[data-testid=warnings]", "boundary", UI_TIMEOUT)
        .await
        .or_log(&app);
    let above = session
        .execute(
            "const w = document.querySelector('[data-testid=warnings]');\
             const mail = document.querySelector('iframe.body');\
             return !!(w && mail && (w.compareDocumentPosition(mail) & \
             Node.DOCUMENT_POSITION_FOLLOWING));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        above,
        serde_json::json!(true),
        "the warning is not above the mail"
    );
    app.screenshot("malformed-warning").await.unwrap();

    session.press_keys("a").await.unwrap();
    session
        .wait_for_text(
            "[data-testid=approve-anyway-cautions]",
            "boundary",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    app.screenshot("approve-anyway").await.unwrap();
    assert!(
        fixture
            .store
            .list_decisions(DecisionFilter::All)
            .await
            .unwrap()
            .is_empty(),
        "asking queued a decision"
    );

    session
        .find("[data-action=approve-anyway]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_detail_state(session, "sent").await.or_log(&app);
    let audit = fixture.store.audit_for_item(id).await.unwrap();
    let despite = audit
        .iter()
        .filter_map(|a| a.line.detail.as_deref())
        .find(|d| d.starts_with("approved despite: "));
    assert!(
        despite.is_some_and(|d| d.contains("boundary")),
        "{audit:#?}"
    );
    session
        .wait_for_text("[data-testid=audit]", "approved despite", UI_TIMEOUT)
        .await
        .or_log(&app);
    // Counted once the app has ended: a late second send would be in the count.
    app.quit().await.unwrap();
    fixture.app_ended().await.unwrap();
    assert_eq!(fixture.gmail.request_count("drafts.send"), 1);
    assert_eq!(fixture.gmail.sent_messages()[0].raw, raw);
}

/// A reply whose two alternatives name different accounts: the words a phone preview or an
/// assistant reads (the text) are not the ones the HTML shows.
fn reply_whose_alternatives_differ() -> Vec<u8> {
    b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
      Subject: Re: Payment\r\nMessage-ID: <e2e-alternatives@agent.example>\r\n\
      MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n\
      --alt\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
      Please pay the invoice to account 222-999.\r\n\
      --alt\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
      <p>Please pay the invoice to account 111-000.</p>\r\n\
      --alt--\r\n"
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternatives_that_differ_are_flagged_and_approve_needs_the_plain_text_shown() {
    let Some(prerequisites) =
        skip_or_fail("alternatives_that_differ_are_flagged_and_approve_needs_the_plain_text_shown")
    else {
        return;
    };
    let raw = reply_whose_alternatives_differ();
    let (fixture, app, _id) = one_draft_on_screen(&prerequisites, &raw).await;
    let session = app.session();
    // The flag quotes the passage where they part.
    session
        .wait_for_text("[data-flag=alternatives_differ]", "222", UI_TIMEOUT)
        .await
        .or_log(&app);

    // Only the HTML was on screen: Approve asks, and nothing is queued.
    session.press_keys("a").await.unwrap();
    session
        .wait_for("[data-testid=approve-anyway]", UI_TIMEOUT)
        .await
        .or_log(&app);
    session.press_keys("\u{E00C}").await.unwrap(); // Escape: back to the draft
    assert!(fixture
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());

    // `t` shows the plain text; once it is on screen, Approve asks nothing more.
    session.press_keys("t").await.unwrap();
    session
        .wait_for_text("[data-testid=text-part]", "222-999", UI_TIMEOUT)
        .await
        .or_log(&app);
    wait_approve(session, true).await.or_log(&app);
    app.screenshot("plain-text-part").await.unwrap();
    session.press_keys("a").await.unwrap();
    wait_detail_state(session, "sent").await.or_log(&app);
    assert!(
        session
            .find_all("[data-testid=approve-anyway]")
            .await
            .unwrap()
            .is_empty(),
        "asked although the plain text was shown"
    );
    // Counted once the app has ended: a late second send would be in the count.
    app.quit().await.unwrap();
    fixture.app_ended().await.unwrap();
    assert_eq!(fixture.gmail.request_count("drafts.send"), 1);
    assert_eq!(fixture.gmail.sent_messages()[0].raw, raw);
}
