use countersign_core::{ItemState, Source};

use super::queue::QueueFilter;
use super::review::reject_reasons;

#[test]
fn a_queue_filter_reads_the_ui_names_of_states_and_sources() {
    let filter: QueueFilter = serde_json::from_value(serde_json::json!({
        "states": ["pending", "awaiting_check", "send_failed"],
        "accountId": "muster-1",
        "source": "muster"
    }))
    .unwrap();
    assert_eq!(
        filter.states,
        vec![
            ItemState::Pending,
            ItemState::AwaitingCheck,
            ItemState::SendFailed
        ]
    );
    assert_eq!(filter.account_id.as_deref(), Some("muster-1"));
    assert_eq!(filter.source, Some(Source::Muster));
}

#[test]
fn an_empty_queue_filter_lists_everything() {
    let filter: QueueFilter = serde_json::from_value(serde_json::json!({})).unwrap();
    assert!(filter.states.is_empty() && filter.account_id.is_none() && filter.source.is_none());
}

#[test]
fn an_unknown_state_in_the_filter_is_refused_rather_than_ignored() {
    let filter = serde_json::from_value::<QueueFilter>(serde_json::json!({"states": ["lost"]}));
    assert!(filter.is_err());
}

#[test]
fn the_preset_reject_reasons_are_offered_in_the_order_the_owner_reads_them() {
    // Written out, not taken from the list the command reads: a reason dropped, renamed or
    // moved shows up here (the desktop suite picks the first one by position).
    assert_eq!(
        reject_reasons(),
        [
            "Wrong recipient",
            "Wrong facts or figures",
            "Tone is off",
            "Should not be answered",
            "Attachment is wrong",
        ]
    );
}
