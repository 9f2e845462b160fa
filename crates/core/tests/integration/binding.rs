//! What you saw is what is sent: decisions bound to the version on screen, sends of any size
//! up to Gmail's limit, and sends Google rate-limits.

use std::time::Duration;

use countersign_core::decide::{self, Confirmation, Shown, UndoWindow};
use countersign_core::review::review_detail;
use countersign_core::store::Account;
use countersign_core::OutcomeKind;
use countersign_core::{Error, ItemState};
use countersign_fakes::gmail::Failure;
use sha2::{Digest, Sha256};

use crate::support::{item_for, reply, sync, Env};

const ACTOR: &str = "owner via test";

async fn gmail_env() -> (Env, Account) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    (env, account)
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[tokio::test]
async fn approving_what_was_shown_after_the_draft_changed_is_refused_and_nothing_is_sent() {
    let (env, account) = gmail_env().await;
    let first = reply(1, "What the owner read.");
    let draft = env.gmail.file_draft(&first, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let shown_a = crate::support::shown(&env, item.id).await;
    assert_eq!(shown_a.digest, sha256(&first));

    // The agent updates the draft and a poll lands it while the owner reads version A.
    let second = reply(1, "Something the owner never saw.");
    env.gmail.update_draft(&draft.id, &second, None).unwrap();
    sync(&env, &account).await;

    let error = decide::approve(
        &env.store,
        &shown_a,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .expect_err("an approval of version A must not bind to version B");
    assert!(
        matches!(&error, Error::ChangedSinceShown { shown, current, .. }
            if *shown == shown_a.version && *current != shown_a.version),
        "{error}"
    );
    assert!(env
        .store
        .decisions_for_item(item.id)
        .await
        .unwrap()
        .is_empty());
    env.dispatcher().await.run_once().await.unwrap();
    assert!(env.gmail.sent_messages().is_empty(), "something was sent");
    let audit = env.store.audit_for_item(item.id).await.unwrap();
    let refusal = audit.last().unwrap();
    assert_eq!(refusal.line.outcome.as_deref(), Some("refused"));
    assert_eq!(
        refusal.line.version.as_deref(),
        Some(shown_a.version.as_str())
    );
    assert!(
        refusal
            .line
            .detail
            .as_deref()
            .unwrap()
            .contains("changed since it was shown"),
        "{refusal:?}"
    );

    // Shown B, approved B: B's bytes leave, once.
    let shown_b = crate::support::shown(&env, item.id).await;
    assert_eq!(shown_b.digest, sha256(&second));
    decide::approve(
        &env.store,
        &shown_b,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    env.dispatcher().await.run_once().await.unwrap();
    let sent = env.gmail.sent_messages();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].raw, second);
}

#[tokio::test]
async fn a_rejection_binds_to_the_version_shown_too_so_unseen_content_is_not_deleted() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "first"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let shown_a = decide::current(&env.store, item.id).await.unwrap();
    env.gmail
        .update_draft(&draft.id, &reply(1, "second"), None)
        .unwrap();
    sync(&env, &account).await;

    let error = decide::reject(&env.store, &shown_a, "Tone is off", ACTOR)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::ChangedSinceShown { .. }), "{error}");
    env.dispatcher().await.run_once().await.unwrap();
    assert!(
        env.gmail.drafts().iter().any(|d| d.id == draft.id),
        "the newer draft was deleted unseen"
    );
}

#[tokio::test]
async fn a_digest_that_is_not_the_versions_own_is_refused() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "body"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let current = decide::current(&env.store, item.id).await.unwrap();
    let forged = Shown {
        digest: sha256(b"other bytes"),
        ..current
    };
    let error = decide::approve(
        &env.store,
        &forged,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, Error::ChangedSinceShown { .. }), "{error}");
}

/// A reply with one attachment of `size` bytes (base64 in the message, as agents file them).
fn reply_with_attachment(size: usize) -> Vec<u8> {
    use base64::Engine;
    let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&data);
    let mut lines = String::with_capacity(encoded.len() + encoded.len() / 38);
    for chunk in encoded.as_bytes().chunks(76) {
        lines.push_str(std::str::from_utf8(chunk).unwrap());
        lines.push_str("\r\n");
    }
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: The scans\r\nMessage-ID: <scans@agent.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe scans are attached.\r\n\
         --b1\r\nContent-Type: application/pdf; name=\"scans.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"scans.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{lines}--b1--\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn a_draft_with_a_20_mb_attachment_is_sent_through_the_upload_endpoint_byte_for_byte() {
    let (env, account) = gmail_env().await;
    let raw = reply_with_attachment(20 * 1024 * 1024);
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let shown = crate::support::shown(&env, item.id).await;
    let decision = decide::approve(
        &env.store,
        &shown,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    env.dispatcher().await.run_once().await.unwrap();

    let sent = env.gmail.sent_messages();
    assert_eq!(
        sent.len(),
        1,
        "{:?}",
        env.store.get_decision(decision.id).await
    );
    assert!(
        sent[0].raw == raw,
        "the sent bytes are not the reviewed ones"
    );
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
    let paths: Vec<String> = env
        .gmail
        .requests()
        .into_iter()
        .filter(|r| r.method == "drafts.send")
        .map(|r| format!("{} {}", r.path, r.query))
        .collect();
    assert_eq!(
        paths,
        vec!["/upload/gmail/v1/users/me/drafts/send uploadType=multipart".to_string()]
    );
    // The audit names the digest shown and the digest of what left (here the same bytes).
    let decision = env.store.get_decision(decision.id).await.unwrap();
    assert_eq!(decision.digest, sha256(&raw));
    assert_eq!(decision.sent_digest.as_deref(), Some(sha256(&raw).as_str()));
    let audit = env.store.audit_for_item(item.id).await.unwrap();
    let send = audit.last().unwrap();
    assert_eq!(send.line.outcome.as_deref(), Some("done"));
    assert_eq!(send.line.digest.as_deref(), Some(sha256(&raw).as_str()));
}

#[tokio::test]
async fn a_draft_over_gmails_limit_is_flagged_and_approving_it_is_refused_before_anything_leaves() {
    let (env, account) = gmail_env().await;
    let raw = reply_with_attachment(30 * 1024 * 1024);
    assert!(raw.len() > 40 * 1024 * 1024);
    let draft = env.gmail.file_draft(&raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let detail = review_detail(&env.store, item.id, false).await.unwrap();
    assert!(
        detail
            .content
            .view
            .flags
            .iter()
            .any(|f| f.explanation.contains("Gmail sends at most 35 MB")),
        "no size flag: {:?}",
        detail.content.view.flags
    );
    let error = decide::approve(
        &env.store,
        &detail.shown,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("Gmail sends at most 35 MB"),
        "{error}"
    );
    env.gmail.clear_requests();
    env.dispatcher().await.run_once().await.unwrap();
    assert!(env.gmail.requests().is_empty(), "a request left");
    assert!(env.gmail.sent_messages().is_empty());
}

#[tokio::test]
async fn a_rate_limited_send_waits_for_the_time_google_names_and_is_sent_once() {
    let (env, account) = gmail_env().await;
    let draft = env.gmail.file_draft(&reply(1, "soon"), None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    env.gmail.fail_next(
        "drafts.send",
        1,
        Failure::status(429)
            .reason("rateLimitExceeded")
            .retry_after(Duration::from_secs(2)),
    );
    let shown = crate::support::shown(&env, item.id).await;
    decide::approve(
        &env.store,
        &shown,
        UndoWindow::None,
        ACTOR,
        Confirmation::None,
    )
    .await
    .unwrap();
    let dispatcher = env.dispatcher().await;
    let first = dispatcher.run_once().await.unwrap();
    assert_eq!(first.ended(OutcomeKind::Retrying).len(), 1);
    let refused_at = env
        .gmail
        .requests()
        .into_iter()
        .rfind(|r| r.method == "drafts.send")
        .unwrap()
        .at;
    let waiting = item_for(&env, &draft.id).await;
    let detail = waiting.decision.as_ref().and_then(|d| d.detail.clone());
    assert!(
        detail
            .as_deref()
            .is_some_and(|d| d.starts_with("Google limits sending from this account: next try at")),
        "{detail:?}"
    );

    // Passes before the retry time do nothing; the one after sends.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while env.gmail.send_requests(&draft.id) == 0 {
        assert!(std::time::Instant::now() < deadline, "never sent");
        dispatcher.run_once().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let retry_time = refused_at + chrono::Duration::milliseconds(1900);
    for request in env.gmail.requests() {
        if request.at > refused_at && request.method.starts_with("drafts.") {
            assert!(
                request.at >= retry_time,
                "{} at {} before the retry time {}",
                request.method,
                request.at,
                retry_time
            );
        }
    }
    assert_eq!(env.gmail.send_requests(&draft.id), 1);
    assert_eq!(item_for(&env, &draft.id).await.state, ItemState::Sent);
}
