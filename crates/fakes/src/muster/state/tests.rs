use super::*;

fn store() -> Store {
    Store::new("a-long-enough-pw".into(), Broadcaster::default())
}

#[test]
fn timestamps_never_repeat_even_within_one_microsecond() {
    let mut s = store();
    let stamps: Vec<String> = (0..1000).map(|_| s.stamp()).collect();
    let unique: std::collections::HashSet<&String> = stamps.iter().collect();
    assert_eq!(unique.len(), stamps.len());
    assert!(stamps.windows(2).all(|w| w[0] < w[1]));
}

fn relayed(s: &mut Store, draft_checks: bool) -> Relayed {
    s.create_plugin("p", draft_checks).unwrap();
    s.relay_message("p", "inbox-chat", "a@example.com", "Hi", "…")
        .unwrap()
}

fn approve(s: &mut Store, id: &str) {
    let at = s.get_draft(id).unwrap()["updatedAt"]
        .as_str()
        .unwrap()
        .to_owned();
    s.decide(id, OwnerDecision::Approve, &at).unwrap();
}

#[test]
fn a_route_takes_no_second_draft_while_one_is_in_review() {
    let mut s = store();
    let r = relayed(&mut s, false);
    s.file_draft(&r.route_id, "one").unwrap();
    let e = s.file_draft(&r.route_id, "two").unwrap_err();
    assert_eq!(e.status, 409);
}

#[test]
fn a_refused_check_hands_the_message_back_for_a_linked_new_draft_on_the_same_route() {
    let mut s = store();
    let r = relayed(&mut s, true);
    let first = s.file_draft(&r.route_id, "one").unwrap();
    s.record_check(&first, CheckVerdict::Refused, Some("no"))
        .unwrap();
    let draft = s.get_draft(&first).unwrap();
    assert_eq!(draft["state"], "rejected");
    assert_eq!(draft["checkState"], "refused");
    let second = s.file_draft(&r.route_id, "two").unwrap();
    let draft = s.get_draft(&second).unwrap();
    assert_eq!(draft["redraftOf"], json!(first));
    assert_eq!(draft["checkState"], "awaiting");
    // A verdict is given once.
    assert_eq!(
        s.record_check(&first, CheckVerdict::Sendable, None)
            .unwrap_err()
            .status,
        409
    );
}

#[test]
fn after_the_chief_also_fails_no_further_route_opens() {
    let mut s = store();
    let r = relayed(&mut s, false);
    let mut route = r.route_id.clone();
    for round in 0..4 {
        let id = s.file_draft(&route, "try").unwrap();
        approve(&mut s, &id);
        s.report_result(&id, false, Some("no")).unwrap();
        let routes = s.list_routes(&r.message_id);
        if round < 3 {
            assert_eq!(routes.len(), round + 2);
            route = routes.last().unwrap()["id"].as_str().unwrap().to_owned();
        } else {
            assert_eq!(routes.len(), 4, "no fifth route after the chief failed");
        }
    }
    let states: Vec<Value> = s
        .list_routes(&r.message_id)
        .iter()
        .map(|r| r["state"].clone())
        .collect();
    assert_eq!(states, vec![json!("send_failed"); 4]);
    assert_eq!(s.list_messages(None)[0]["state"], "send_failed");
}

#[test]
fn every_change_is_announced_once() {
    let events = Broadcaster::default();
    let (_, mut rx) = events.subscribe();
    let mut s = Store::new("pw".into(), events);
    let r = relayed(&mut s, false);
    let id = s.file_draft(&r.route_id, "one").unwrap();
    approve(&mut s, &id);
    s.report_result(&id, false, Some("full")).unwrap();
    s.report_result(&id, false, Some("full")).unwrap();
    let mut seen = Vec::new();
    while let Ok(change) = rx.try_recv() {
        seen.push(change);
    }
    assert_eq!(
        seen,
        vec![
            Change::Route(r.route_id.clone()),
            Change::Draft(id.clone()),
            Change::Draft(id.clone()),
            Change::Draft(id),
            Change::Route(r.route_id),
            Change::Route("2".into()),
        ]
    );
}

#[test]
fn the_eleventh_login_in_a_minute_is_refused() {
    let mut s = store();
    for _ in 0..10 {
        assert!(matches!(
            s.login(Ok(Some("nope".into()))),
            LoginAnswer::WrongPassword
        ));
    }
    assert!(matches!(
        s.login(Ok(Some("a-long-enough-pw".into()))),
        LoginAnswer::TooManyAttempts
    ));
}

#[test]
fn a_password_under_twelve_characters_signs_no_one_in() {
    let mut s = Store::new("elevenchars".into(), Broadcaster::default());
    assert!(matches!(
        s.login(Ok(Some("elevenchars".into()))),
        LoginAnswer::NoPassword
    ));
}

#[test]
fn a_cookie_is_checked_by_its_signature_and_survives_a_restart() {
    let mut s = store();
    let LoginAnswer::SignedIn(cookie) = s.login(Ok(Some("a-long-enough-pw".into()))) else {
        panic!("not signed in");
    };
    assert!(s.is_signed_in(&cookie));
    // A new store with the same password stands for muster after a restart.
    assert!(store().is_signed_in(&cookie));
    assert!(
        !Store::new("another-long-password".into(), Broadcaster::default()).is_signed_in(&cookie)
    );
    let last = if cookie.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &cookie[..cookie.len() - 1]);
    assert!(!s.is_signed_in(&forged));
    s.expire_sessions();
    assert!(!s.is_signed_in(&cookie));
}

#[test]
fn the_same_stamp_fault_changes_a_pending_drafts_text_only_and_a_decided_one_not_at_all() {
    let mut s = store();
    let r = relayed(&mut s, false);
    let id = s.file_draft(&r.route_id, "first").unwrap();
    let before = s.get_draft(&id).unwrap();
    s.rewrite_text_keeping_stamp(&id, "second").unwrap();
    let after = s.get_draft(&id).unwrap();
    assert_eq!(after["text"], "second");
    assert_eq!(after["updatedAt"], before["updatedAt"]);
    // muster's decide matches the stamp only: it takes the decision on the new text.
    approve(&mut s, &id);
    assert_eq!(s.get_draft(&id).unwrap()["state"], "approved");
    assert_eq!(
        s.rewrite_text_keeping_stamp(&id, "third")
            .unwrap_err()
            .status,
        409
    );
}
