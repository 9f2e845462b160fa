//! Edit before approving: the owner's edit is a new version in Gmail in which only the subject
//! and the text changed, it is reviewed and approved like any other, and exactly it is sent.

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::edit::{save_edit, EditForm, EDITED_BY_OWNER};
use countersign_core::review::{review_detail, DiffBase};
use countersign_core::{Error, ItemState};
use sha2::{Digest, Sha256};

use crate::support::{item_for, muster_reply, shown, sync, Env};

const ACTOR: &str = "owner via test";

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A reply with a text body, an HTML alternative and an attachment of `size` bytes.
fn reply_with_attachment(size: usize) -> Vec<u8> {
    use base64::Engine;
    let data: Vec<u8> = (0..size).map(|i| (i * 13 % 251) as u8).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
    let lines: String = encoded
        .as_bytes()
        .chunks(76)
        .map(|c| format!("{}\r\n", std::str::from_utf8(c).unwrap()))
        .collect();
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Cc: Bo <bo@example.com>\r\nSubject: Re: The scans\r\n\
         Date: Tue, 01 Dec 2026 09:00:00 +0000\r\nMessage-ID: <scans@agent.example>\r\n\
         In-Reply-To: <ask@example.com>\r\nReferences: <ask@example.com>\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n\
         --b2\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe scans are attached.\r\n\
         --b2\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>The scans are attached.</p>\r\n\
         --b2--\r\n\r\n\
         --b1\r\nContent-Type: application/pdf; name=\"scans.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"scans.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{lines}--b1--\r\n"
    )
    .into_bytes()
}

/// The message's header block as lines, without the fields named.
fn header_lines_except(raw: &[u8], except: &[&str]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let block = &text[..text.find("\r\n\r\n").unwrap()];
    block
        .split("\r\n")
        .filter(|line| {
            !except.iter().any(|name| {
                line.to_ascii_lowercase()
                    .starts_with(&format!("{}:", name.to_ascii_lowercase()))
            })
        })
        .map(str::to_owned)
        .collect()
}

/// Everything from the attachment's boundary on.
fn attachment_tail(raw: &[u8]) -> &[u8] {
    let at = raw
        .windows(12)
        .position(|w| w == b"--b1\r\nConten")
        .and_then(|first| {
            raw[first + 1..]
                .windows(12)
                .position(|w| w == b"--b1\r\nConten")
                .map(|second| first + 1 + second)
        })
        .expect("two parts under b1");
    &raw[at..]
}

#[tokio::test]
async fn an_edit_is_a_new_gmail_version_changing_only_subject_and_text_and_approval_sends_exactly_it(
) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    // 5 MB of attachment: the update's JSON would pass Gmail's JSON limit, so it goes through
    // the upload endpoint like a large send.
    let original = reply_with_attachment(5 * 1024 * 1024);
    let draft = env.gmail.file_draft(&original, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    match &detail.content.edit {
        EditForm::Text {
            subject,
            text,
            replaces_html,
        } => {
            assert_eq!(subject, "Re: The scans");
            assert_eq!(text, "The scans are attached.");
            assert!(replaces_html);
        }
        other => panic!("a text draft must be editable: {other:?}"),
    }
    // As the UI receives it (ui/src/lib/generated/EditForm.ts).
    let form = serde_json::to_value(&detail.content.edit).unwrap();
    assert_eq!(form["kind"], "text");
    assert_eq!(form["replacesHtml"], true);
    let agents = detail.shown.clone();

    let edited = save_edit(
        &env.store,
        &env.services,
        &agents,
        "Re: The scans (signed)",
        "The signed scans are attached.\nBest, Owner\n",
        ACTOR,
    )
    .await
    .unwrap();
    assert_ne!(edited.version, agents.version);

    // Gmail holds the new version: same draft, other headers and attachment bytes identical.
    let in_gmail = env
        .gmail
        .draft_raw(&draft.id)
        .expect("the draft is still there");
    assert_eq!(sha256(&in_gmail), edited.digest);
    assert_eq!(
        header_lines_except(&in_gmail, &["Subject"]),
        header_lines_except(&original, &["Subject"])
    );
    assert!(String::from_utf8_lossy(&in_gmail).contains("\r\nSubject: Re: The scans (signed)\r\n"));
    assert!(
        attachment_tail(&in_gmail) == attachment_tail(&original),
        "the attachment part changed"
    );
    let updates: Vec<String> = env
        .gmail
        .requests()
        .into_iter()
        .filter(|r| r.method == "drafts.update")
        .map(|r| r.path)
        .collect();
    assert_eq!(
        updates,
        vec![format!("/upload/gmail/v1/users/me/drafts/{}", draft.id)]
    );

    // The review shows the edit against the agent's version, and it is still to be approved.
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    assert_eq!(detail.shown, edited);
    assert!(detail.content.edited_by_owner);
    assert_eq!(detail.item.summary.state, ItemState::Pending);
    let diff = detail
        .content
        .diff
        .expect("a diff against the agent's version");
    assert_eq!(diff.base, DiffBase::BeforeOwnerEdit);
    assert_eq!(diff.base_version, agents.version);
    assert!(detail
        .content
        .view
        .text_body
        .contains("The signed scans are attached."));
    let edit_entry = detail
        .content
        .audit
        .iter()
        .find(|e| e.line.outcome.as_deref() == Some(EDITED_BY_OWNER))
        .expect("the audit records the edit");
    let note = edit_entry.line.detail.as_deref().unwrap();
    assert!(
        note.contains(&agents.digest) && note.contains(&edited.digest),
        "{note}"
    );
    assert_eq!(edit_entry.line.actor, ACTOR);

    // Approving what was on screen before the edit binds to nothing.
    let stale = decide::approve(
        &env.store,
        &agents,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap_err();
    assert!(matches!(stale, Error::ChangedSinceShown { .. }), "{stale}");
    // A later sync sees the same version: nothing new to review.
    sync(&env, &account).await;
    assert_eq!(shown(&env, item.id).await, edited);

    decide::approve(
        &env.store,
        &edited,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    env.dispatcher().await.run_once().await.unwrap();
    let sent = env.gmail.sent_messages();
    // Requests, not Sent: the fake takes a draft out of Drafts on its first send, so a second
    // send could never add a message.
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert!(
        sent[0].raw == in_gmail,
        "the sent bytes are not the edited ones"
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}

#[tokio::test]
async fn an_edit_of_a_draft_the_agent_changed_meanwhile_is_refused_and_gmail_keeps_the_agents() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply_with_attachment(10), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let read = shown(&env, item.id).await;
    // The agent updates the draft in Gmail; no sync has seen it yet.
    let agents_new = reply_with_attachment(20);
    env.gmail
        .update_draft(&draft.id, &agents_new, None)
        .unwrap();

    let error = save_edit(&env.store, &env.services, &read, "x", "y", ACTOR)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::ChangedSinceShown { .. }), "{error}");
    assert!(env.gmail.draft_raw(&draft.id).unwrap() == agents_new);
    assert_eq!(env.gmail.request_count("drafts.update"), 0);
}

#[tokio::test]
async fn html_only_and_muster_drafts_are_not_editable_and_say_what_to_do_instead() {
    let env = Env::new().await;
    let gmail = env.connect_gmail().await;
    let html_only = b"From: owner@example.com\r\nTo: ana@example.com\r\nSubject: Hi\r\n\
        MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Hi <b>Ana</b></p>\r\n";
    let draft = env.gmail.file_draft(html_only, None);
    sync(&env, &gmail).await;
    let item = item_for(&env, &draft.id).await;
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    match &detail.content.edit {
        EditForm::Refused { why } => {
            assert!(why.contains("HTML only") && why.contains("Gmail"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    let error = save_edit(
        &env.store,
        &env.services,
        &detail.shown,
        "Hi",
        "Hi Ana",
        ACTOR,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, Error::Refused { .. }), "{error}");
    assert_eq!(env.gmail.request_count("drafts.update"), 0);

    let (_, filed) = muster_reply(&env, false).await;
    let item = item_for(&env, &filed).await;
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    match &detail.content.edit {
        EditForm::Refused { why } => assert!(why.contains("Reject it with a note"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_agent_update_landing_right_after_the_owners_edit_is_recorded_as_the_agents_not_the_owners(
) {
    use countersign_core::edit::UPDATED_BY_AGENT_AFTER_EDIT;
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply_with_attachment(10), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let read = shown(&env, item.id).await;
    // The agent writes again between the owner's drafts.update and Countersign's read-back.
    let agents_new = reply_with_attachment(30);
    env.gmail
        .agent_updates_after_next_update(&draft.id, &agents_new);

    let error = save_edit(
        &env.store,
        &env.services,
        &read,
        "Invoice",
        "It is 45 EUR.",
        ACTOR,
    )
    .await
    .unwrap_err();
    let Error::EditOvertaken {
        item_id,
        edited,
        current,
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(*item_id, item.id);
    assert_ne!(edited, current);
    assert_eq!(env.gmail.request_count("drafts.update"), 1);
    assert!(env.gmail.draft_raw(&draft.id).unwrap() == agents_new);

    // The mirror's current version is the agent's, byte for byte; the owner's is kept before it.
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    assert_eq!(&detail.shown.version, current);
    assert_eq!(detail.shown.digest, sha256(&agents_new));
    assert!(
        !detail.content.edited_by_owner,
        "the agent's version is not the owner's edit"
    );
    let diff = detail
        .content
        .diff
        .expect("a diff against the owner's version");
    assert_eq!(diff.base, DiffBase::PreviousVersion);
    assert_eq!(&diff.base_version, edited);
    let owners = env.store.version(item.id, edited).await.unwrap();
    assert!(String::from_utf8_lossy(owners.content.bytes()).contains("It is 45 EUR."));

    // The audit names each version for what it is.
    let by_owner = detail
        .content
        .audit
        .iter()
        .find(|e| e.line.outcome.as_deref() == Some(EDITED_BY_OWNER))
        .expect("the owner's edit is audited");
    assert_eq!(by_owner.line.version.as_ref(), Some(edited));
    assert_eq!(
        by_owner.line.digest.as_deref(),
        Some(owners.sha256.as_str())
    );
    let by_agent = detail
        .content
        .audit
        .iter()
        .find(|e| e.line.outcome.as_deref() == Some(UPDATED_BY_AGENT_AFTER_EDIT))
        .expect("the agent's update is audited");
    assert_eq!(by_agent.line.version.as_ref(), Some(current));

    // Nothing the owner was shown binds to the agent's version: neither the version read
    // before the edit nor the owner's own edit.
    for stale in [
        read.clone(),
        countersign_core::decide::Shown {
            id: item.id,
            version: edited.clone(),
            digest: owners.sha256.clone(),
        },
    ] {
        let refusal = decide::approve(
            &env.store,
            &stale,
            UndoWindow::None,
            ACTOR,
            Confirmation::None,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(refusal, Error::ChangedSinceShown { .. }),
            "{refusal}"
        );
    }
}
