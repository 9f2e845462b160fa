//! One meaning of "shown": an approval binds only to a version its actor was displayed, names
//! that view in its audit row, and asks before approving a version whose structure is broken.

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::store::{DecisionFilter, ShownPart};
use countersign_core::Error;

use crate::support::{displayed, item_for, reply, sync, Env, OWNER};

/// A multipart whose boundary never appears: mail programs disagree on what it says.
fn malformed_reply() -> Vec<u8> {
    b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
      Subject: Re: Figures\r\nMessage-ID: <malformed-1@agent.example>\r\n\
      MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n\
      The figures are attached.\r\n"
        .to_vec()
}

/// A mirror with one synced Gmail draft of `raw`: the env and the item's current version.
async fn one_draft(raw: &[u8]) -> (Env, decide::Shown) {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(raw, None);
    sync(&env, &account).await;
    let item = item_for(&env, &draft.id).await;
    let current = decide::current(&env.store, item.id).await.unwrap();
    (env, current)
}

async fn approve(
    env: &Env,
    shown: &decide::Shown,
    actor: &str,
    confirmation: Confirmation,
) -> Result<(), Error> {
    decide::approve(&env.store, shown, UndoWindow::None, actor, confirmation)
        .await
        .map(|_| ())
}

#[tokio::test]
async fn a_version_never_displayed_is_refused_and_the_refusal_is_audited() {
    let (env, current) = one_draft(&reply(1, "Unseen.")).await;
    // Displayed to somebody else: that does not count for this actor.
    env.store
        .record_view(&current, "owner via desktop", ShownPart::Html)
        .await
        .unwrap();

    let error = approve(&env, &current, OWNER, Confirmation::DespiteCautions)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::NotShown { .. }), "{error}");
    assert!(error.to_string().contains("show it first"), "{error}");
    assert!(env
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());
    let audit = env.store.audit_for_item(current.id).await.unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].line.outcome.as_deref(), Some("refused"));
    assert_eq!(audit[0].line.actor, OWNER);
}

#[tokio::test]
async fn an_approval_names_the_view_it_was_taken_on() {
    let (env, current) = one_draft(&reply(1, "Read.")).await;
    let view = env
        .store
        .record_view(&current, OWNER, ShownPart::Html)
        .await
        .unwrap();
    approve(&env, &current, OWNER, Confirmation::None)
        .await
        .unwrap();
    let audit = env.store.audit_for_item(current.id).await.unwrap();
    let queued = audit
        .iter()
        .find(|a| a.line.outcome.as_deref() == Some("queued"))
        .unwrap();
    assert_eq!(queued.line.view_id, Some(view.id));
    assert_eq!(
        env.store.last_view(current.id, OWNER).await.unwrap(),
        Some(view)
    );
}

#[tokio::test]
async fn a_view_of_bytes_the_mirror_does_not_hold_is_refused() {
    let (env, current) = one_draft(&reply(1, "Read.")).await;
    let forged = decide::Shown {
        digest: "0".repeat(64),
        ..current
    };
    let error = env
        .store
        .record_view(&forged, OWNER, ShownPart::Html)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::NotFound { .. }), "{error}");
}

#[tokio::test]
async fn a_malformed_draft_asks_before_approving_and_the_audit_says_despite_what() {
    let (env, current) = one_draft(&malformed_reply()).await;
    displayed(&env, &current).await;

    let asked = approve(&env, &current, OWNER, Confirmation::None)
        .await
        .unwrap_err();
    let Error::NeedsConfirmation { cautions, .. } = &asked else {
        panic!("not asked: {asked}");
    };
    assert_eq!(cautions.len(), 1, "{cautions:?}");
    assert!(cautions[0].contains("boundary"), "{cautions:?}");
    assert!(env
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());

    approve(&env, &current, OWNER, Confirmation::DespiteCautions)
        .await
        .unwrap();
    let audit = env.store.audit_for_item(current.id).await.unwrap();
    let queued = audit
        .iter()
        .find(|a| a.line.outcome.as_deref() == Some("queued"))
        .unwrap();
    assert_eq!(
        queued.line.detail.as_deref(),
        Some(format!("approved despite: {}", cautions[0]).as_str())
    );
}

/// A reply whose HTML scales a sentence down to nothing with a transform: styling no check
/// evaluates.
fn transformed_reply() -> Vec<u8> {
    b"From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
      Subject: Re: Invoice\r\nMessage-ID: <styled-1@agent.example>\r\n\
      MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
      <p>Invoice attached.</p><p style=\"transform:scale(0.001)\">Wire it to 4471.</p>\r\n"
        .to_vec()
}

#[tokio::test]
async fn styling_no_check_evaluates_asks_before_approving_even_when_displayed() {
    let (env, current) = one_draft(&transformed_reply()).await;
    displayed(&env, &current).await;
    let asked = approve(&env, &current, OWNER, Confirmation::None)
        .await
        .unwrap_err();
    let Error::NeedsConfirmation { cautions, .. } = &asked else {
        panic!("not asked: {asked}");
    };
    assert!(
        cautions
            .iter()
            .any(|c| c.contains("transform: scale(0.001)")),
        "{cautions:?}"
    );
    assert!(env
        .store
        .list_decisions(DecisionFilter::All)
        .await
        .unwrap()
        .is_empty());
    approve(&env, &current, OWNER, Confirmation::DespiteCautions)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_ordinary_draft_asks_nothing() {
    let (env, current) = one_draft(&reply(1, "Fine.")).await;
    displayed(&env, &current).await;
    approve(&env, &current, OWNER, Confirmation::None)
        .await
        .unwrap();
    let audit = env.store.audit_for_item(current.id).await.unwrap();
    assert_eq!(audit[0].line.detail, None, "{audit:?}");
}
