//! `--seed demo`: plugin drafts that show every muster state Countersign knows — a pending
//! reply, one awaiting its plugin's check, a refused send with its redraft pending (so the
//! chain is visible), and one approved and queued at the plugin.

use super::state::{ApiResult, OwnerDecision, Store};

pub(crate) fn demo(store: &mut Store) -> ApiResult<()> {
    store.create_plugin("gmail-relay", false)?;
    store.create_plugin("support-desk", true)?;

    // 1. A plain pending reply.
    let invoice = store.relay_message(
        "gmail-relay",
        "inbox-chat",
        "ana@example.com",
        "Invoice 2291 — can we move the due date?",
        "Hi, our finance team closes the month on the 5th. Could invoice 2291 be due on the 10th instead?",
    )?;
    // This plugin hands over the full text, so the review shows the whole message answered.
    store.set_message_text(
        &invoice.message_id,
        "Hi,\n\nour finance team closes the month on the 5th. Could invoice 2291 be due on the \
         10th instead? Everything else on it is fine.\n\nThanks,\nAna Lima\nFinance, Example Co.",
    )?;
    store.file_draft(
        &invoice.route_id,
        "Hi Ana,\n\nOf course — I have moved the due date of invoice 2291 to the 10th. \
         You will get the updated PDF from our billing system today.\n\nBest regards,\nSam",
    )?;

    // 2. A reply the support-desk plugin has not checked yet: Reject only.
    let refund = store.relay_message(
        "support-desk",
        "support-triage",
        "li.wei@example.org",
        "Refund for order #5532",
        "The blender arrived with a cracked jug. I would like a refund rather than a replacement.",
    )?;
    store.file_draft(
        &refund.route_id,
        "Hello Li,\n\nI am sorry the jug arrived cracked. I have started a full refund of \
         €89.00 for order #5532; it reaches your card within 5 business days. There is no \
         need to send the blender back.\n\nKind regards,\nSupport",
    )?;

    // 3. Approved, refused by the plugin at send time, handed back, redraft pending.
    let renewal = store.relay_message(
        "gmail-relay",
        "inbox-chat",
        "tom.becker@example.net",
        "Re: Contract renewal 2027",
        "Thanks for the proposal. Can you confirm the renewal keeps the current SLA?",
    )?;
    let first = file_claimed_draft(
        store,
        &renewal.route_id,
        "Hi Tom,\n\nYes, the renewal keeps the 99.9% SLA. I attach the signed copy.\n\nSam",
    )?;
    store.report_result(
        &first,
        false,
        Some("the draft mentions an attachment but has none"),
    )?;
    let redraft_route = store
        .list_routes(&renewal.message_id)
        .last()
        .and_then(|r| r["id"].as_str().map(str::to_owned))
        .expect("a refusal opens a redraft route");
    store.file_draft(
        &redraft_route,
        "Hi Tom,\n\nYes, the renewal keeps the current 99.9% SLA and the same support hours. \
         I will send the countersigned contract as soon as legal has stamped it.\n\nSam",
    )?;

    // 4. Approved and queued at the plugin, which has claimed it but not reported yet.
    let meeting = store.relay_message(
        "gmail-relay",
        "calendar",
        "priya.nair@example.com",
        "Can we move Tuesday's review to Thursday?",
        "Something came up on Tuesday. Would Thursday at 14:00 work for the design review?",
    )?;
    file_claimed_draft(
        store,
        &meeting.route_id,
        "Hi Priya,\n\nThursday at 14:00 works. I have moved the invite; same room.\n\nSam",
    )?;
    Ok(())
}

/// Files a draft on `route_id` that the owner approves as filed and the plugin then claims to
/// send; returns its id.
fn file_claimed_draft(store: &mut Store, route_id: &str, text: &str) -> ApiResult<String> {
    let id = store.file_draft(route_id, text)?;
    let draft = store.get_draft(&id)?;
    let updated_at = draft["updatedAt"].as_str().unwrap_or_default().to_owned();
    store.decide(&id, OwnerDecision::Approve, &updated_at)?;
    store.claim(&id)?;
    Ok(id)
}
