//! Live events from `GET /events`: delivery, reconnects after a cut or silence, re-login.

use std::time::{Duration, Instant};

use countersign_muster::{EventOptions, MusterEvent};
use tokio::sync::mpsc::Receiver;

use crate::{client, fake, file_reply};

fn quick() -> EventOptions {
    EventOptions {
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(400),
        ..EventOptions::default()
    }
}

/// How long a test waits for an event before it fails. Only a broken stream ever waits this
/// long: every wait ends when the event comes, so the bound is generous for a loaded machine.
const WITHIN: Duration = Duration::from_secs(20);

async fn next_within(events: &mut Receiver<MusterEvent>, within: Duration) -> MusterEvent {
    tokio::time::timeout(within, events.recv())
        .await
        .unwrap_or_else(|_| panic!("no event within {within:?}"))
        .expect("the event stream is still running")
}

async fn next(events: &mut Receiver<MusterEvent>) -> MusterEvent {
    next_within(events, WITHIN).await
}

/// Skip events until `wanted` arrives.
async fn until(events: &mut Receiver<MusterEvent>, wanted: &MusterEvent) {
    let deadline = Instant::now() + WITHIN;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if &next_within(events, left).await == wanted {
            return;
        }
    }
}

#[tokio::test]
async fn a_change_on_muster_is_pushed_over_the_open_stream() {
    // What the owner notices is a change showing up at once, not after the next reconnect and
    // re-sync (up to a silence timeout later). So the changes must arrive as their own frames
    // on the stream already open, with no request at all from the client in between.
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    fake.clear_requests();
    let second = fake
        .relay_message("gmail-relay", "inbox-chat", "bo@example.com", "Hi", "…")
        .unwrap();
    let draft = fake.file_draft(&second.route_id, "Hello Bo").unwrap();
    assert_eq!(
        next(&mut events).await,
        MusterEvent::RouteChanged {
            id: second.route_id.clone()
        }
    );
    assert_eq!(
        next(&mut events).await,
        MusterEvent::DraftChanged { id: draft }
    );
    // A reconnect would have sent Disconnected and Connected before these and a GET /events;
    // a poll would show as a request too.
    let requests: Vec<_> = fake
        .requests()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(requests.is_empty(), "{requests:?}");
    assert_eq!(fake.event_streams(), 1);
    drop(filed);
}

#[tokio::test]
async fn a_cut_stream_is_reconnected_and_connected_is_sent_again() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    let muster = client(&fake);
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    fake.cut_event_streams();
    assert!(matches!(
        next(&mut events).await,
        MusterEvent::Disconnected { .. }
    ));
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    // The new stream delivers changes too.
    fake.time_out_route(&filed.route_id).unwrap();
    assert_eq!(
        next(&mut events).await,
        MusterEvent::RouteChanged {
            id: filed.route_id.clone()
        }
    );
    assert_eq!(fake.count_requests("GET", "/events"), 2);
    // A second cut is a second outage, reported and recovered the same way.
    fake.cut_event_streams();
    assert!(matches!(
        next(&mut events).await,
        MusterEvent::Disconnected { .. }
    ));
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
}

#[tokio::test]
async fn a_silent_stream_stays_open_and_asks_for_a_resync_every_interval() {
    // muster has no heartbeat: silence is a quiet instance, not a dead stream.
    let fake = fake().await;
    let muster = client(&fake);
    let mut events = muster.events(EventOptions {
        resync_every: Duration::from_millis(100),
        ..quick()
    });
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    for _ in 0..10 {
        assert_eq!(next(&mut events).await, MusterEvent::Resync);
    }
    assert_eq!(fake.count_requests("GET", "/events"), 1);
    assert_eq!(fake.event_streams(), 1);
}

#[tokio::test]
async fn events_arrive_among_musters_other_traffic_and_ids_are_strings_on_the_stream() {
    let fake = fake().await;
    let filed = file_reply(&fake, false);
    fake.set_wire_style(countersign_fakes::muster::WireStyle {
        numeric_ids: true,
        ..Default::default()
    });
    fake.set_event_noise(Some(Duration::from_millis(1)));
    let muster = client(&fake);
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    fake.time_out_route(&filed.route_id).unwrap();
    // task.changed, agent.stream, … are not passed on; the route change is.
    assert_eq!(
        next(&mut events).await,
        MusterEvent::RouteChanged {
            id: filed.route_id.clone()
        }
    );
    fake.set_event_noise(None);
}

#[tokio::test]
async fn an_outage_is_reported_once_and_the_stream_comes_back_with_muster() {
    let fake = fake().await;
    let muster = client(&fake);
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    fake.set_online(false);
    assert!(matches!(
        next(&mut events).await,
        MusterEvent::Disconnected { .. }
    ));
    // Back on the network but answering 503 three times (a proxy in front of muster while it
    // restarts): three more failed reconnects, counted at the fake, and still no second
    // Disconnected — the next event is the reconnection.
    let before = fake.count_requests("GET", "/events");
    fake.fail_next("GET", "/events", 3, 503);
    fake.set_online(true);
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    assert!(
        fake.count_requests("GET", "/events") >= before + 4,
        "three refused reconnects, then the one that worked"
    );
}

#[tokio::test]
async fn an_expired_cookie_on_the_stream_is_renewed_silently() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    fake.expire_sessions();
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    assert_eq!(fake.count_requests("POST", "/login"), 2);
}

#[tokio::test]
async fn a_session_that_cannot_be_renewed_ends_the_stream_with_sign_in_again() {
    let fake = fake().await;
    let muster = client(&fake);
    muster.login().await.unwrap();
    fake.expire_sessions();
    fake.fail_next("POST", "/login", 10, 401);
    let mut events = muster.events(quick());
    assert_eq!(next(&mut events).await, MusterEvent::SignInAgain);
    let end = tokio::time::timeout(WITHIN, events.recv())
        .await
        .expect("the stream ends");
    assert_eq!(end, None);
}

#[tokio::test]
async fn dropping_the_receiver_closes_the_stream() {
    let fake = fake().await;
    file_reply(&fake, false);
    let muster = client(&fake);
    let mut events = muster.events(quick());
    until(&mut events, &MusterEvent::Connected).await;
    assert_eq!(fake.event_streams(), 1);
    drop(events);
    // The fake notices a closed connection when it next writes to it.
    let deadline = Instant::now() + WITHIN;
    while fake.event_streams() > 0 && Instant::now() < deadline {
        // Every relay is a change, so each round writes to the stream.
        fake.relay_message("gmail-relay", "inbox-chat", "x@example.com", "ping", "")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(fake.event_streams(), 0);
}

#[tokio::test]
async fn an_error_answer_to_the_stream_is_retried_with_backoff_until_it_connects() {
    let fake = fake().await;
    let muster = client(&fake);
    fake.fail_next("GET", "/events", 3, 503);
    let mut events = muster.events(quick());
    let MusterEvent::Disconnected { reason } = next(&mut events).await else {
        panic!("expected Disconnected first");
    };
    assert!(reason.contains("503"), "{reason}");
    assert_eq!(next(&mut events).await, MusterEvent::Connected);
    assert_eq!(fake.count_requests("GET", "/events"), 4);
}
