//! One odd record never hides the others: each draft of a list is read on its own. Counts Go
//! left out read as zero, states this client does not know are kept as muster wrote them, and a
//! draft that cannot be read is returned as unreadable beside the rest.

use countersign_fakes::muster::WireStyle;
use countersign_muster::{CheckState, DraftState};
use serde_json::json;

use crate::{client, fake, file_reply};

#[tokio::test]
async fn a_draft_without_redraft_number_and_one_in_an_unknown_state_are_read_beside_a_good_one() {
    let fake = fake().await;
    let good = file_reply(&fake, false);
    let newer = file_reply(&fake, false);
    // Real muster's Go structs leave a zero count out under `omitempty`.
    fake.set_wire_style(WireStyle {
        omit_zero_counts: true,
        ..WireStyle::default()
    });
    let raw = fake.draft(&good.draft_id).unwrap();
    assert!(raw.get("redraftNumber").is_none(), "{raw}");
    // A newer muster with states this client does not list.
    fake.write_draft_oddly(
        &newer.draft_id,
        json!({"state": "archived", "checkState": "pondering"}),
        &[],
    )
    .unwrap();

    let listed = client(&fake).list_drafts(None).await.unwrap();

    assert_eq!(listed.unreadable, vec![]);
    let by_id = |id: &str| {
        listed
            .records
            .iter()
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("draft {id} in {listed:?}"))
    };
    let good_draft = by_id(&good.draft_id);
    assert_eq!(good_draft.state, DraftState::Pending);
    assert_eq!(good_draft.redraft_number, 0);
    assert_eq!(good_draft.text, "Hi Ana, yes: the 10th it is.");
    let newer_draft = by_id(&newer.draft_id);
    assert_eq!(newer_draft.state, DraftState::Unknown("archived".into()));
    assert_eq!(newer_draft.check, CheckState::Unknown("pondering".into()));
    assert_eq!(newer_draft.state.as_str(), "archived");
}

#[tokio::test]
async fn a_draft_that_cannot_be_read_is_returned_unreadable_with_its_id_and_the_rest_are_read() {
    let fake = fake().await;
    let good = file_reply(&fake, false);
    let broken = file_reply(&fake, false);
    let nameless = file_reply(&fake, false);
    fake.write_draft_oddly(&broken.draft_id, json!({}), &["updatedAt"])
        .unwrap();
    fake.write_draft_oddly(&nameless.draft_id, json!({"id": true}), &[])
        .unwrap();

    let listed = client(&fake).list_drafts(None).await.unwrap();

    let ids: Vec<&str> = listed.records.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, vec![good.draft_id.as_str()]);
    assert_eq!(listed.unreadable.len(), 2, "{:?}", listed.unreadable);
    let broken_record = &listed.unreadable[0];
    assert_eq!(broken_record.id.as_deref(), Some(broken.draft_id.as_str()));
    assert_eq!(broken_record.reason, "missing field `updatedAt`");
    assert_eq!(broken_record.raw["text"], "Hi Ana, yes: the 10th it is.");
    let nameless_record = &listed.unreadable[1];
    assert_eq!(nameless_record.id, None);
    assert!(
        nameless_record
            .reason
            .contains("an id (a JSON number or string)"),
        "{}",
        nameless_record.reason
    );
}
