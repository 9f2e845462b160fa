//! Edit before approving, in the window: `e` opens the draft's subject and text, saving makes
//! a new version in Gmail in which nothing else changed, the window shows it as the owner's
//! edit, and approving it sends exactly those bytes — checked at the fake Gmail and in the
//! audit trail.

use countersign_core::edit::EDITED_BY_OWNER;
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, Fixture};
use sha2::{Digest, Sha256};

use crate::support::*;

/// A reply with a text body and a small attachment, as an agent files it.
fn reply_with_attachment() -> Vec<u8> {
    b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
Subject: Re: The contract\r\nMessage-ID: <contract@agent.example>\r\n\
In-Reply-To: <ask@example.com>\r\nReferences: <ask@example.com>\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n\
--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHere is the contract.\r\n\
--b1\r\nContent-Type: text/plain; name=\"contract.txt\"\r\n\
Content-Disposition: attachment; filename=\"contract.txt\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\nVGhlIGNvbnRyYWN0IHRleHQu\r\n--b1--\r\n"
        .to_vec()
}

const HTML_ONLY: &[u8] = b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
Subject: Newsletter\r\nMessage-ID: <news@agent.example>\r\nMIME-Version: 1.0\r\n\
Content-Type: text/html; charset=utf-8\r\n\r\n<p>Our <b>news</b></p>\r\n";

/// The header block's lines without `Subject`.
fn headers_but_subject(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    text[..text.find("\r\n\r\n").unwrap()]
        .split("\r\n")
        .filter(|l| !l.starts_with("Subject:"))
        .map(str::to_owned)
        .collect()
}

/// The attachment part, from its file name on.
fn attachment_part(raw: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(raw).into_owned();
    let start = text
        .find("name=\"contract.txt\"")
        .expect("the attachment is there");
    text.as_bytes()[start..].to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e_edits_subject_and_text_into_a_new_gmail_version_that_is_approved_and_sent_exactly() {
    let Some(prerequisites) = skip_or_fail(
        "e_edits_subject_and_text_into_a_new_gmail_version_that_is_approved_and_sent_exactly",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let original = reply_with_attachment();
    let html_draft = fixture.gmail.file_draft(HTML_ONLY, None);
    let draft = fixture.gmail.file_draft(&original, None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();
    let html_item = fixture.item(&html_draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, item.id).await.or_log(&app);
    let agents_version = shown_version(session).await.expect("a version is shown");

    session.press_keys("e").await.unwrap();
    let subject = session
        .wait_for("[data-testid=edit-subject]", UI_TIMEOUT)
        .await
        .or_log(&app);
    subject.send_keys(" (signed)").await.unwrap();
    session
        .find("[data-testid=edit-text]")
        .await
        .unwrap()
        .send_keys(" It is signed on every page.")
        .await
        .unwrap();
    app.screenshot("edit-dialog").await.unwrap();
    session
        .find("[data-action=save-edit]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // The window shows the owner's version as such, with what changed, once it has rendered.
    session
        .wait_for_text(
            "[data-testid=edited-by-owner]",
            "You edited this draft",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    session
        .wait_for_text("[data-testid=diff]", "signed on every page", UI_TIMEOUT)
        .await
        .or_log(&app);
    eventually(UI_TIMEOUT, "the edited version is rendered", || async {
        shown_version(session)
            .await
            .is_some_and(|v| v != agents_version)
    })
    .await
    .or_log(&app);
    session
        .wait_for_text(
            "[data-testid=detail-subject]",
            "Re: The contract (signed)",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);

    // Gmail holds the new version: the subject and text changed, nothing else.
    let in_gmail = fixture
        .gmail
        .draft_raw(&draft.id)
        .expect("the draft is there");
    assert_ne!(in_gmail, original);
    assert_eq!(
        headers_but_subject(&in_gmail),
        headers_but_subject(&original)
    );
    assert_eq!(attachment_part(&in_gmail), attachment_part(&original));
    let edited_text = String::from_utf8_lossy(&in_gmail).into_owned();
    assert!(edited_text.contains("Subject: Re: The contract (signed)\r\n"));
    assert!(
        edited_text.contains("It is signed on every page."),
        "{edited_text}"
    );

    // Nothing is sent until the owner approves the edited version.
    assert!(fixture.gmail.sent_messages().is_empty());
    wait_detail(session, item.id).await.or_log(&app);
    wait_approve(session, true).await.or_log(&app);
    session.press_keys("a").await.unwrap();
    eventually(UI_TIMEOUT, "the edited draft is sent", || async {
        !fixture.gmail.sent_messages().is_empty()
    })
    .await
    .or_log(&app);
    let sent = fixture.gmail.sent_messages();
    assert_eq!(fixture.gmail.send_requests(&draft.id), 1);
    assert!(
        sent[0].raw == in_gmail,
        "the sent bytes are not the edited ones"
    );

    let audit = fixture.store.audit_for_item(item.id).await.unwrap();
    let edit = audit
        .iter()
        .find(|e| e.line.outcome.as_deref() == Some(EDITED_BY_OWNER))
        .expect("the edit is in the audit log");
    let detail = edit.line.detail.as_deref().unwrap_or_default();
    let digest = |raw: &[u8]| hex::encode(Sha256::digest(raw));
    assert!(
        detail.contains(&digest(&original)) && detail.contains(&digest(&in_gmail)),
        "both digests in the audit: {detail}"
    );

    // An HTML-only draft is not editable here, and the window says where to edit it.
    open_item(session, html_item.id).await.or_log(&app);
    let edit_button = session.find("[data-action=edit]").await.unwrap();
    assert!(!edit_button.is_enabled().await.unwrap());
    let why = edit_button
        .attribute("title")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(why.contains("HTML only") && why.contains("Gmail"), "{why}");
    session.press_keys("e").await.unwrap();
    session
        .wait_for_text("[data-testid=action-error]", "HTML only", UI_TIMEOUT)
        .await
        .or_log(&app);
    app.quit().await.unwrap();
}
