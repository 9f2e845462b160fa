//! Every refusal the owner reads names the draft the way the queue does — by its subject — and
//! never by the mirror's item id or Gmail's version ids (issue 38). The sentences are produced
//! by the real flows, not built by hand.

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::edit::save_edit;
use countersign_core::Error;

use crate::support::{displayed, item_for, reply, sync, Env, OWNER};

/// `message` names `subject` in quotes and carries neither `item <n>` nor `version`.
fn in_owners_words(message: &str, subject: &str, version: &str) {
    assert!(
        message.contains(&format!("“{subject}”")),
        "the draft is named by its subject: {message}"
    );
    let mentions_an_item_id = message
        .match_indices("item ")
        .any(|(at, _)| message[at + 5..].starts_with(|c: char| c.is_ascii_digit()));
    assert!(!mentions_an_item_id, "an item id: {message}");
    assert!(!message.contains(version), "a Gmail version id: {message}");
}

/// Approving `shown`, which the test expects refused: the refusal.
async fn approve_refused(env: &Env, shown: &decide::Shown) -> Error {
    decide::approve(
        &env.store,
        shown,
        UndoWindow::None,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap_err()
}

#[tokio::test]
async fn refusals_name_the_draft_by_its_subject_never_by_an_id() {
    let env = Env::new().await;
    let account = env.connect_gmail().await;
    let draft = env.gmail.file_draft(&reply(7, "First words."), None);
    sync(&env, &account).await;
    let id = item_for(&env, &draft.id).await.id;
    let first = decide::current(&env.store, id).await.unwrap();
    let subject = "Re: Invoice 7";

    // Approving what was never displayed.
    let never_shown = approve_refused(&env, &first).await;
    assert!(
        matches!(never_shown, Error::NotShown { .. }),
        "{never_shown}"
    );
    in_owners_words(&never_shown.to_string(), subject, &first.version);

    // Rejecting without a reason.
    displayed(&env, &first).await;
    let no_reason = decide::reject(&env.store, &first, " ", OWNER)
        .await
        .unwrap_err();
    assert!(matches!(no_reason, Error::Refused { .. }), "{no_reason}");
    in_owners_words(&no_reason.to_string(), subject, &first.version);

    // Undo with nothing to undo.
    let nothing = decide::undo(&env.store, id, OWNER).await.unwrap_err();
    assert!(matches!(nothing, Error::Refused { .. }), "{nothing}");
    in_owners_words(&nothing.to_string(), subject, &first.version);

    // The agent rewrites it after the owner looked: approving and editing the old version.
    env.gmail
        .update_draft(&draft.id, &reply(7, "Other words."), None)
        .unwrap();
    sync(&env, &account).await;
    let changed = approve_refused(&env, &first).await;
    assert!(
        matches!(changed, Error::ChangedSinceShown { .. }),
        "{changed}"
    );
    in_owners_words(&changed.to_string(), subject, &first.version);
    let second = decide::current(&env.store, id).await.unwrap();
    assert!(!changed.to_string().contains(&second.version), "{changed}");

    let edit = save_edit(&env.store, &env.services, &first, subject, "Mine.", OWNER)
        .await
        .unwrap_err();
    assert!(matches!(edit, Error::ChangedSinceShown { .. }), "{edit}");
    in_owners_words(&edit.to_string(), subject, &first.version);
}
