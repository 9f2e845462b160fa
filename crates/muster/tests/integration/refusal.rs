//! The whole refusal story through the fake: approve → the plugin reports `ok: false` → the
//! draft `failed` and its route `send_failed` with the reason → a `redraft` route to the same
//! session → a second redraft → the next refusal goes to the chief.

use countersign_muster::{DecideOutcome, Decision, DraftState, MusterClient, RouteState};

use crate::{client, fake, file_reply, read};

async fn approve(muster: &MusterClient, id: &str) {
    let draft = read(muster, id).await;
    let outcome = muster
        .decide(id, Decision::Approve, None, &draft.updated_at)
        .await
        .unwrap();
    assert!(
        matches!(outcome, DecideOutcome::Queued { .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn refused_sends_are_redrafted_twice_then_go_to_the_chief() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);

    // First try: approved, claimed, refused by the plugin.
    approve(&muster, &filed.draft_id).await;
    fake.claim(&filed.draft_id).unwrap();
    fake.report_result(&filed.draft_id, false, Some("recipient mailbox full"))
        .unwrap();
    let failed = read(&muster, &filed.draft_id).await;
    assert_eq!(failed.state, DraftState::Failed);
    let result = failed.result.clone().expect("the plugin's report");
    assert!(!result.ok);
    assert_eq!(result.detail.as_deref(), Some("recipient mailbox full"));

    let routes = muster.list_routes(&filed.message_id).await.unwrap().records;
    assert_eq!(routes.len(), 2);
    assert_eq!(routes[0].id, filed.route_id);
    assert_eq!(routes[0].state, RouteState::SendFailed);
    assert_eq!(routes[0].reason.as_deref(), Some("recipient mailbox full"));
    let first_redraft = &routes[1];
    assert_eq!(first_redraft.state, RouteState::Redraft);
    assert_eq!(first_redraft.session, "inbox-chat");
    assert_eq!(
        first_redraft.redraft_of.as_deref(),
        Some(filed.route_id.as_str())
    );
    assert_eq!(first_redraft.redraft_count, 1);
    assert_eq!(
        first_redraft.routed_via,
        format!("redraft of {} to inbox-chat", filed.route_id)
    );

    // A repeated report changes nothing.
    let before = read(&muster, &filed.draft_id).await;
    fake.report_result(&filed.draft_id, false, Some("recipient mailbox full"))
        .unwrap();
    assert_eq!(read(&muster, &filed.draft_id).await, before);
    assert_eq!(
        muster
            .list_routes(&filed.message_id)
            .await
            .unwrap()
            .records
            .len(),
        2
    );

    // The session writes the redraft, linked to what was refused.
    let second = fake
        .file_draft(&first_redraft.id, "Hi Ana, the 10th it is (resent).")
        .unwrap();
    let redraft = read(&muster, &second).await;
    assert_eq!(redraft.redraft_of.as_deref(), Some(filed.draft_id.as_str()));
    assert_eq!(redraft.redraft_number, 1);
    assert_eq!(redraft.state, DraftState::Pending);

    // Refused again: the second (and last) redraft.
    approve(&muster, &second).await;
    fake.report_result(&second, false, Some("blocked by policy"))
        .unwrap();
    let routes = muster.list_routes(&filed.message_id).await.unwrap().records;
    assert_eq!(routes.len(), 3);
    assert_eq!(routes[1].state, RouteState::SendFailed);
    assert_eq!(routes[1].reason.as_deref(), Some("blocked by policy"));
    assert_eq!(routes[2].state, RouteState::Redraft);
    assert_eq!(routes[2].redraft_count, 2);
    let third = fake
        .file_draft(&routes[2].id, "Hi Ana, third try.")
        .unwrap();
    assert_eq!(read(&muster, &third).await.redraft_number, 2);

    // Refused a third time: the redrafts are used up, so the chief gets it.
    approve(&muster, &third).await;
    fake.report_result(&third, false, Some("still blocked"))
        .unwrap();
    let routes = muster.list_routes(&filed.message_id).await.unwrap().records;
    assert_eq!(routes.len(), 4);
    assert_eq!(routes[2].state, RouteState::SendFailed);
    let chief = &routes[3];
    assert_eq!(chief.state, RouteState::Fallback);
    assert_eq!(chief.session, "chief");
    assert_eq!(chief.redraft_of.as_deref(), Some(routes[2].id.as_str()));

    let messages = muster.list_messages(None).await.unwrap().records;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].state, "fallback");
    assert_eq!(
        messages[0].routes,
        routes.iter().map(|r| r.id.clone()).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_send_the_plugin_confirms_ends_sent() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    approve(&muster, &filed.draft_id).await;
    fake.report_result(&filed.draft_id, true, None).unwrap();
    let draft = read(&muster, &filed.draft_id).await;
    assert_eq!(draft.state, DraftState::Sent);
    assert_eq!(draft.result.map(|r| r.ok), Some(true));
    let sent = muster
        .list_drafts(Some(DraftState::Sent))
        .await
        .unwrap()
        .records;
    assert_eq!(sent.len(), 1);
    assert!(muster
        .list_drafts(Some(DraftState::Pending))
        .await
        .unwrap()
        .records
        .is_empty());
}

#[tokio::test]
async fn the_demo_seed_shows_every_state_including_a_visible_redraft_chain() {
    let fake =
        countersign_fakes::muster::FakeMuster::start(countersign_fakes::muster::MusterConfig {
            seed: countersign_fakes::Seed::Demo,
            ..Default::default()
        })
        .await
        .unwrap();
    let muster = client(&fake);
    let drafts = muster.list_drafts(None).await.unwrap().records;
    let pending: Vec<_> = drafts
        .iter()
        .filter(|d| d.state == DraftState::Pending)
        .collect();
    assert!(pending
        .iter()
        .any(|d| d.check == countersign_muster::CheckState::Awaiting));
    let redraft = pending
        .iter()
        .find(|d| d.redraft_of.is_some())
        .expect("a pending redraft");
    let refused = drafts
        .iter()
        .find(|d| Some(&d.id) == redraft.redraft_of.as_ref())
        .unwrap();
    assert_eq!(refused.state, DraftState::Failed);
    assert!(drafts.iter().any(|d| d.state == DraftState::Approved));
    let routes = muster
        .list_routes(&redraft.message_id)
        .await
        .unwrap()
        .records;
    assert_eq!(
        routes.iter().map(|r| r.state.clone()).collect::<Vec<_>>(),
        vec![RouteState::SendFailed, RouteState::Redraft]
    );
}
