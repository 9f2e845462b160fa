//! The actions core offers on an item (what the desktop app enables and the CLI prints) are
//! exactly the decisions core accepts: a table over every state × source, on a real mirror
//! file, with each state reached the way the app reaches it (syncs, decisions, dispatch ends).

use chrono::{Duration, Utc};
use countersign_core::actions::{Action, ActionState};
use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::edit::save_edit;
use countersign_core::review::review_detail;
use countersign_core::store::{
    DraftContent, MusterFields, NewAccount, ObservedDraft, SecretStorage,
};
use countersign_core::{DispatchOutcome, ItemEvent, ItemFilter, ItemState, Source, Store};

const OWNER: &str = "owner via test";

/// A fresh mirror holding one item of `source` in `state`; its id.
async fn item_in(source: Source, state: ItemState) -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let account = store
        .add_account(NewAccount {
            kind: source,
            label: "Work".into(),
            address: "owner@example.com".into(),
            api_base: "http://127.0.0.1:1/".into(),
            granted_scopes: vec!["https://www.googleapis.com/auth/gmail.modify".into()],
            secret_storage: SecretStorage::File,
        })
        .await
        .unwrap()
        .id;
    let content = match source {
        Source::Gmail => DraftContent::Raw(
            b"To: ana@example.com\r\nSubject: Invoice\r\n\r\nIt is 40 EUR.\r\n".to_vec(),
        ),
        Source::Muster => DraftContent::Text("It is 40 EUR.".into()),
    };
    let observed_state = if state == ItemState::AwaitingCheck {
        ItemState::AwaitingCheck
    } else {
        ItemState::Pending
    };
    let id = store
        .record_draft(&ObservedDraft {
            account_id: account,
            source,
            external_id: "d1".into(),
            version: "v1".into(),
            content,
            observed_state,
            gmail_internal_date: None,
            thread_id: None,
            subject: "Invoice".into(),
            from_addr: "owner@example.com".into(),
            recipients: "ana@example.com".into(),
            snippet: "It is 40 EUR.".into(),
            muster: MusterFields::default(),
            answers_json: None,
            state_reason: None,
        })
        .await
        .unwrap()
        .item_id;
    let shown = shown_to_owner(&store, id).await;
    let later = Utc::now() + Duration::days(1);
    // Claims the decision just made and ends its dispatch with `outcome`.
    let dispatch = |outcome: Option<(DispatchOutcome, ItemEvent)>| {
        let store = store.clone();
        async move {
            let claimed = store.claim_next_due(later, "test").await.unwrap().unwrap();
            if let Some((outcome, event)) = outcome {
                store
                    .finish_decision(claimed.id, &outcome, Some(event), None)
                    .await
                    .unwrap();
            }
        }
    };
    match state {
        ItemState::Pending | ItemState::AwaitingCheck => {}
        ItemState::Conflict => {
            store
                .apply_item_event(id, ItemEvent::Conflicted, None)
                .await
                .unwrap();
        }
        ItemState::Gone => {
            store
                .apply_item_event(id, ItemEvent::Vanished, None)
                .await
                .unwrap();
        }
        ItemState::Queued => {
            approve_as_owner(&store, &shown).await;
        }
        ItemState::Sending => {
            approve_as_owner(&store, &shown).await;
            dispatch(None).await;
        }
        ItemState::Sent => {
            approve_as_owner(&store, &shown).await;
            dispatch(Some((DispatchOutcome::Done, ItemEvent::Delivered))).await;
        }
        ItemState::Rejected => {
            decide::reject(&store, &shown, "Tone is off", OWNER)
                .await
                .unwrap();
            dispatch(Some((DispatchOutcome::Done, ItemEvent::RejectionDone))).await;
        }
        ItemState::SendFailed => {
            approve_as_owner(&store, &shown).await;
            dispatch(Some((
                DispatchOutcome::Failed("the recipient's server refused it".into()),
                ItemEvent::SendRefused,
            )))
            .await;
        }
    }
    assert_eq!(store.get_item(id).await.unwrap().summary.state, state);
    (dir, store, id)
}

fn state_of(actions: &[ActionState], action: Action) -> ActionState {
    actions
        .iter()
        .find(|a| a.action == action)
        .unwrap_or_else(|| panic!("{action:?} is offered: {actions:?}"))
        .clone()
}

/// The owner approves `shown` with the settings' undo window.
async fn approve_as_owner(store: &Store, shown: &decide::Shown) {
    decide::approve(
        store,
        shown,
        UndoWindow::FromSettings,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
}

/// The item's current version, displayed to the owner (an approval binds only to that).
async fn shown_to_owner(store: &Store, id: i64) -> decide::Shown {
    let shown = decide::current(store, id).await.unwrap();
    store
        .record_view(&shown, OWNER, countersign_core::store::ShownPart::Html)
        .await
        .unwrap();
    shown
}

/// What core's own functions say when `action` is tried on the item.
async fn attempt(store: &Store, id: i64, action: Action) -> Result<(), String> {
    let shown = shown_to_owner(store, id).await;
    let outcome = match action {
        Action::Approve => {
            decide::approve(
                store,
                &shown,
                UndoWindow::FromSettings,
                OWNER,
                Confirmation::None,
            )
            .await
        }
        Action::Reject => decide::reject(store, &shown, "Tone is off", OWNER).await,
        Action::Undo => decide::undo(store, id, OWNER).await,
        Action::Edit => {
            // The account here has no credentials and no Gmail: an edit the rules let through
            // then fails reaching Gmail, which is not a refusal.
            let dir = tempfile::tempdir().unwrap();
            // Secrets in files: a test never probes the keyring of whoever runs it.
            let services = countersign_core::services::Services::with_token_store(
                dir.path(),
                countersign_gmail::TokenStore::file(dir.path()),
            );
            return match save_edit(store, &services, &shown, "Invoice", "It is 45 EUR.", OWNER)
                .await
            {
                Err(refusal @ countersign_core::Error::Refused { .. }) => Err(refusal.to_string()),
                Ok(_) => Ok(()),
                // Past the rules, on its way to Gmail: this account has no client file.
                Err(countersign_core::Error::DataDir { path, .. })
                    if path.ends_with("gmail.json") =>
                {
                    Ok(())
                }
                Err(other) => panic!("an edit neither accepted nor refused: {other:?}"),
            };
        }
    };
    outcome.map(|_| ()).map_err(|e| e.to_string())
}

#[tokio::test]
async fn an_action_is_offered_exactly_when_core_accepts_it_in_every_state_and_source() {
    let mut offered = vec![];
    for source in [Source::Gmail, Source::Muster] {
        for state in ItemState::ALL {
            for action in [Action::Approve, Action::Reject, Action::Undo, Action::Edit] {
                let (_dir, store, id) = item_in(source, state).await;
                let detail = review_detail(&store, id, false).await.unwrap();
                let in_detail = state_of(&detail.item.summary.actions, action);
                let row = store.list_items(&ItemFilter::default()).await.unwrap();
                let in_row = state_of(&row[0].actions, action);
                assert_eq!(
                    in_row.allowed, in_detail.allowed,
                    "{source:?} {state:?} {action:?}: the row and the detail agree"
                );
                let cell = format!("{source:?} {state:?} {action:?}");
                match attempt(&store, id, action).await {
                    Ok(()) => assert!(in_detail.allowed, "{cell}: core accepted it: {in_detail:?}"),
                    Err(error) => {
                        assert!(!in_detail.allowed, "{cell}: core refused it: {error}");
                        let why = in_detail.why_not.expect("a sentence when not allowed");
                        assert!(
                            error.contains(&why),
                            "{cell}: core refuses with the offered sentence: {error} / {why}"
                        );
                    }
                }
                if in_detail.allowed {
                    offered.push((source, state, action));
                }
            }
        }
    }
    // The rules the table pins down (so a rule that changes shows up here, not only in the UI).
    let expected = [
        (Source::Gmail, ItemState::Pending, Action::Approve),
        (Source::Gmail, ItemState::Pending, Action::Reject),
        (Source::Gmail, ItemState::Pending, Action::Edit),
        (Source::Gmail, ItemState::Conflict, Action::Approve),
        (Source::Gmail, ItemState::Conflict, Action::Reject),
        (Source::Gmail, ItemState::Conflict, Action::Edit),
        (Source::Gmail, ItemState::AwaitingCheck, Action::Reject),
        (Source::Gmail, ItemState::Queued, Action::Undo),
        // Google refused the send; the draft is still in Drafts: decide again.
        (Source::Gmail, ItemState::SendFailed, Action::Approve),
        (Source::Gmail, ItemState::SendFailed, Action::Reject),
        (Source::Gmail, ItemState::SendFailed, Action::Edit),
        (Source::Muster, ItemState::Pending, Action::Approve),
        (Source::Muster, ItemState::Pending, Action::Reject),
        (Source::Muster, ItemState::Conflict, Action::Approve),
        (Source::Muster, ItemState::Conflict, Action::Reject),
        (Source::Muster, ItemState::AwaitingCheck, Action::Reject),
        (Source::Muster, ItemState::Queued, Action::Undo),
    ];
    assert_eq!(offered, expected);
}

#[tokio::test]
async fn undo_is_offered_while_the_decision_waits_and_refused_with_the_same_sentence_once_claimed()
{
    let (_queued_dir, store, _) = item_in(Source::Gmail, ItemState::Queued).await;
    let row = store.list_items(&ItemFilter::default()).await.unwrap();
    let undo = state_of(&row[0].actions, Action::Undo);
    assert!(undo.allowed);
    assert_eq!(undo.until, None, "no instant closes it: the claim does");

    // With no undo window the decision is due at once: still offered and accepted while no
    // dispatcher has claimed it (nothing has left).
    let (_dir, store, id) = item_in(Source::Gmail, ItemState::Pending).await;
    let mut settings = store.settings().await.unwrap();
    settings.undo_window_secs = 0;
    crate::support::save_whole_settings(&store, &settings, "owner via test").await;
    let shown = shown_to_owner(&store, id).await;
    decide::approve(
        &store,
        &shown,
        UndoWindow::FromSettings,
        OWNER,
        Confirmation::None,
    )
    .await
    .unwrap();
    let row = store.list_items(&ItemFilter::default()).await.unwrap();
    assert!(state_of(&row[0].actions, Action::Undo).allowed);

    // Claimed: not offered, and core refuses with the sentence the row gives.
    store
        .claim_next_due(chrono::Utc::now(), "dispatcher")
        .await
        .unwrap()
        .expect("due at once");
    let row = store.list_items(&ItemFilter::default()).await.unwrap();
    let undo = state_of(&row[0].actions, Action::Undo);
    assert!(!undo.allowed, "{undo:?}");
    let refusal = attempt(&store, id, Action::Undo).await.unwrap_err();
    assert!(
        refusal.contains(undo.why_not.as_deref().unwrap()),
        "{refusal}"
    );
    assert!(refusal.contains("already being sent"), "{refusal}");
}
