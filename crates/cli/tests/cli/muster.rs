//! muster from the CLI: one sign-in for many processes, and a dispatcher killed at random while
//! muster's sign-in is limited.

use countersign_fakes::muster::{FakeMuster, MusterConfig};

use crate::support::Cli;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sync_processes_in_a_minute_sign_in_once_between_them() {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    muster.create_plugin("gmail-relay", false).unwrap();
    let relayed = muster
        .relay_message(
            "gmail-relay",
            "inbox-chat",
            "ana@example.com",
            "Invoice",
            "Hi",
        )
        .unwrap();
    muster.file_draft(&relayed.route_id, "Here it is.").unwrap();
    let cli = Cli::new();
    cli.add_muster(&muster).await;
    // Ten at a time, twice: they run side by side, as restarts and the desktop app would.
    for _ in 0..2 {
        let children: Vec<_> = (0..10).map(|_| cli.spawn(&["sync"])).collect();
        for child in children {
            cli.finish(child, &["sync"]).await.ok();
        }
    }
    assert_eq!(muster.sign_ins(), 1, "signed in more than once");
    assert_eq!(muster.count_requests("POST", "/login"), 1);
    assert!(!cli.transcript().contains(muster.password()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_while_musters_sign_in_is_limited_says_when_and_sends_no_login() {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let cli = Cli::new();
    cli.add_muster(&muster).await;
    muster.expire_sessions();
    // Someone else uses up muster's window with wrong guesses.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for _ in 0..10 {
        http.post(format!("{}/login", muster.url()))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("password=someone-elses-guess")
            .send()
            .await
            .unwrap();
    }
    let first = cli.exec(&["sync"]).await;
    assert!(!first.status.success());
    let said = format!("{}{}", first.stdout, first.stderr);
    assert!(said.contains("sign-in limit"), "{said}");
    let logins = muster.count_requests("POST", "/login");
    // The 429 was recorded for every process: the next one does not ask muster at all.
    let second = cli.exec(&["sync"]).await;
    assert!(!second.status.success());
    assert_eq!(muster.count_requests("POST", "/login"), logins);
    let said = format!("{}{}", second.stdout, second.stderr);
    assert!(said.contains("sign-in limit"), "{said}");
}

/// A small deterministic generator, so that a failing run can be repeated from its seed.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// Twelve replies in the fake muster, half approved and half rejected by the owner through the
/// CLI, with no undo window; the draft ids (even: approved).
async fn twelve_decided_replies(muster: &FakeMuster, cli: &Cli) -> Vec<String> {
    muster.create_plugin("gmail-relay", false).unwrap();
    let mut drafts = Vec::new();
    for n in 0..12 {
        let relayed = muster
            .relay_message(
                "gmail-relay",
                "inbox-chat",
                "ana@example.com",
                &format!("Q{n}"),
                "?",
            )
            .unwrap();
        drafts.push(
            muster
                .file_draft(&relayed.route_id, &format!("A{n}"))
                .unwrap(),
        );
    }
    cli.add_muster(muster).await;
    cli.exec(&["settings", "set", "undo-window", "0"])
        .await
        .ok();
    cli.exec(&["sync"]).await.ok();
    for (n, draft) in drafts.iter().enumerate() {
        let id = cli.item_id(draft).await;
        if n % 2 == 0 {
            cli.show(&id).await;
            cli.exec(&["approve", &id, "--no-undo"]).await.ok();
        } else {
            cli.exec(&["reject", &id, "--reason", "not this one"])
                .await
                .ok();
        }
    }
    drafts
}

/// A new seed each run (the kills land elsewhere every time); a failing run is replayed with
/// COUNTERSIGN_KILL_SEED=<the seed it printed>.
fn kill_seed() -> u64 {
    let seed = match std::env::var("COUNTERSIGN_KILL_SEED") {
        Ok(seed) => seed.parse().expect("COUNTERSIGN_KILL_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    };
    eprintln!("kill run seed {seed} (replay: COUNTERSIGN_KILL_SEED={seed})");
    seed
}

/// muster's decide endpoint, as the fake's log names it.
const DECIDE: &str = "/api/plugin/drafts/*/decide";

/// Run one `dispatch` pass and SIGKILL it (nothing of the process's own clean-up runs), timed
/// from the fake's log rather than from the clock: at the moment a request of the kind this
/// round aims at (the `aim`'s nth, or a decide most often, else a look-up of a draft) reaches muster,
/// or up to 4 ms after it. A pass that sends none of them (nothing is due) ends by itself. (A
/// kill timed from the start of the process lands, on a debug build, before it has done
/// anything at all.) Returns whether the kill landed while a decide was at muster, unanswered.
async fn dispatch_and_kill(
    cli: &Cli,
    muster: &FakeMuster,
    aim: Option<(&str, &str, u64)>,
    rng: &mut Lcg,
) -> bool {
    let (method, path, nth) = aim.unwrap_or(match rng.below(4) {
        0 => ("GET", "/api/plugin/drafts/*", 1),
        _ => ("POST", DECIDE, 1),
    });
    let before = muster.arrivals(method, path);
    let mut child = cli.spawn(&["dispatch"]);
    let aimed = tokio::select! {
        () = muster.arrived(method, path, before + nth) => true,
        _ = child.wait() => false,
    };
    if aimed {
        let after = rng.below(5);
        if after > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(after)).await;
        }
    }
    let mid_decide = aimed && muster.in_flight("POST", DECIDE) > 0;
    let _ = child.start_kill();
    cli.finish(child, &["dispatch"]).await;
    mid_decide
}

/// A pass that asked muster nothing: every live decision waits for a later attempt (muster's
/// sign-in window, a look-up's back-off). Wait until the first retry the outbox has scheduled
/// is due, so the next pass has something to send — unless that is more than `at_most` away
/// (false: the back-offs have grown, the rest is for the last dispatch).
async fn until_the_first_retry_is_due(cli: &Cli, at_most: std::time::Duration) -> bool {
    let outbox = cli.exec(&["outbox", "--json"]).await.json();
    let first = outbox
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["nextAttemptAt"].as_str())
        .map(|at| chrono::DateTime::parse_from_rfc3339(at).unwrap().to_utc())
        .min();
    match first.and_then(|at| (at - chrono::Utc::now()).to_std().ok()) {
        Some(wait) if wait > at_most => false,
        Some(wait) => {
            tokio::time::sleep(wait).await;
            true
        }
        None => true,
    }
}

/// With every fault cleared, a last dispatch succeeds and every decision ended as muster holds
/// it: approved drafts approved, rejected ones rejected, every decision done.
async fn every_decision_ends_as_muster_holds_it(
    cli: &Cli,
    muster: &FakeMuster,
    drafts: &[String],
    seed: u64,
) {
    muster.clear_faults();
    // What is left waits for muster's window (at most a minute), then goes out.
    let last = cli
        .command(&["dispatch", "--wait", "--timeout", "100"])
        .output()
        .await
        .unwrap();
    assert!(
        last.status.success(),
        "(seed {seed}) {}\n{}",
        String::from_utf8_lossy(&last.stdout),
        String::from_utf8_lossy(&last.stderr)
    );
    cli.exec(&["sync"]).await.ok();
    for (n, draft) in drafts.iter().enumerate() {
        let held = muster.draft(draft).unwrap()["state"].clone();
        let want = if n % 2 == 0 { "approved" } else { "rejected" };
        assert_eq!(held, want, "draft {draft} (seed {seed})");
        let item = cli.item(draft).await;
        assert_eq!(
            item["state"],
            if n % 2 == 0 { "sending" } else { "rejected" },
            "{item} (seed {seed})"
        );
    }
    let outbox = cli.exec(&["outbox", "--all", "--json"]).await.json();
    for decision in outbox.as_array().unwrap() {
        assert_eq!(decision["state"], "done", "{decision} (seed {seed})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispatcher_killed_a_hundred_times_while_sign_in_is_limited_ends_every_decision_as_muster_holds_it(
) {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let cli = Cli::new();
    let drafts = twelve_decided_replies(&muster, &cli).await;
    let seed = kill_seed();
    let mut rng = Lcg(seed);
    // muster forgets the session and someone else uses up its sign-in window: the dispatchers
    // are killed as their sign-in reaches muster, until every decision waits out the window.
    muster.expire_sessions();
    let http = reqwest::Client::new();
    for _ in 0..10 {
        http.post(format!("{}/login", muster.url()))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("password=someone-elses-guess")
            .send()
            .await
            .unwrap();
    }
    for _ in 0..10 {
        let before = muster.requests().len();
        dispatch_and_kill(&cli, &muster, Some(("POST", "/login", 1)), &mut rng).await;
        if muster.requests().len() == before {
            break;
        }
    }
    assert!(
        muster.count_requests("POST", "/login") > 10,
        "(seed {seed}) a dispatcher met the limit"
    );
    // The window: a minute at most.
    until_the_first_retry_is_due(&cli, std::time::Duration::from_secs(61)).await;

    // Then dispatchers killed as their decides reach muster: muster holds every decide 200 ms,
    // and each pass is killed at its first or second, so the decide before it is
    // answered (or loses its answer on the way back) and the one it dies in is not.
    muster.delay_next(
        "POST",
        DECIDE,
        u32::MAX,
        std::time::Duration::from_millis(200),
    );
    let mut killed_mid_decide = 0;
    for _ in 0..100 {
        if rng.below(3) == 0 {
            muster.drop_after_commit("POST", DECIDE, 1);
        }
        let nth = 1 + rng.below(2);
        let before = muster.requests().len();
        if dispatch_and_kill(&cli, &muster, Some(("POST", DECIDE, nth)), &mut rng).await {
            killed_mid_decide += 1;
        } else if muster.requests().len() == before {
            let live = cli.exec(&["outbox", "--json"]).await.json();
            if live.as_array().unwrap().is_empty() {
                break;
            }
            // Until a kill has landed mid-decide, wait out whatever is left of the sign-in
            // window (the pacing record can end a little after the first retry); after
            // that, only retries due within 2 s.
            let at_most = if killed_mid_decide == 0 { 61 } else { 2 };
            if !until_the_first_retry_is_due(&cli, std::time::Duration::from_secs(at_most)).await {
                break;
            }
        }
    }
    eprintln!("(seed {seed}) {killed_mid_decide} kills landed while a decide was at muster");
    // The point of the test: processes killed in the middle of deciding, not before it. Each
    // interrupted decide backs its decision off for longer (1 s, 4 s, … 30 s): the kills go on
    // while a retry is due within 2 s, and the last dispatch carries out the rest.
    assert!(
        killed_mid_decide >= 1,
        "(seed {seed}) only {killed_mid_decide} of 100 kills landed while a decide was at muster"
    );
    every_decision_ends_as_muster_holds_it(&cli, &muster, &drafts, seed).await;
}

/// Issue 39 at random: decides that land at muster and lose their answer, dispatchers killed
/// mid-way, and syncs between them that mirror what muster holds before the look-ups do. Every
/// sync and every dispatch that is not killed succeeds (a mirrored outcome once made every
/// later dispatch exit 1), and every decision ends as muster holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decides_whose_answers_are_lost_with_syncs_and_kills_between_end_as_muster_holds_them() {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    let cli = Cli::new();
    let drafts = twelve_decided_replies(&muster, &cli).await;
    let seed = kill_seed();
    let mut rng = Lcg(seed);
    for _ in 0..40 {
        if rng.below(2) == 0 {
            muster.drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
        }
        if rng.below(3) == 0 {
            let out = cli.exec(&["dispatch"]).await;
            assert!(
                out.status.success(),
                "(seed {seed}) {}\n{}",
                out.stdout,
                out.stderr
            );
        } else {
            dispatch_and_kill(&cli, &muster, None, &mut rng).await;
        }
        if rng.below(2) == 0 {
            let out = cli.exec(&["sync"]).await;
            assert!(
                out.status.success(),
                "(seed {seed}) {}\n{}",
                out.stdout,
                out.stderr
            );
        }
    }
    every_decision_ends_as_muster_holds_it(&cli, &muster, &drafts, seed).await;
}

/// Issue 39's sequence: a rejection lands at muster but its answer is lost, a sync mirrors the
/// rejection, and the look-up that finds it landed must settle it as "already so" — not stop
/// every later dispatch (it used to exit 1 on every run, and later approvals never left).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_rejection_a_sync_already_mirrored_never_stops_a_later_approval() {
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    muster.create_plugin("gmail-relay", false).unwrap();
    let mut drafts = Vec::new();
    for subject in ["Invoice", "Lunch"] {
        let relayed = muster
            .relay_message("gmail-relay", "inbox-chat", "ana@example.com", subject, "?")
            .unwrap();
        drafts.push(muster.file_draft(&relayed.route_id, "Sure.").unwrap());
    }
    let (rejected, approved) = (&drafts[0], &drafts[1]);
    let cli = Cli::new();
    cli.add_muster(&muster).await;
    cli.exec(&["settings", "set", "undo-window", "0"])
        .await
        .ok();
    cli.exec(&["sync"]).await.ok();
    let rejected_id = cli.item_id(rejected).await;

    // 1. muster commits the rejection and the answer is lost on the way back.
    cli.exec(&["reject", &rejected_id, "--reason", "not this one"])
        .await
        .ok();
    muster.drop_after_commit("POST", "/api/plugin/drafts/*/decide", 1);
    cli.exec(&["dispatch"]).await.ok();
    assert_eq!(muster.draft(rejected).unwrap()["state"], "rejected");
    let outbox = cli.exec(&["outbox", "--json"]).await.json();
    assert_eq!(outbox[0]["state"], "uncertain", "{outbox}");

    // 2. A sync mirrors muster's word: the item is rejected.
    cli.exec(&["sync"]).await.ok();
    assert_eq!(cli.item(rejected).await["state"], "rejected");

    // 3. The look-up finds the rejection landed: already so, and the pass goes on.
    cli.exec(&["dispatch"]).await.ok();
    let approved_id = cli.item_id(approved).await;
    cli.show(&approved_id).await;
    cli.exec(&["approve", &approved_id, "--no-undo"]).await.ok();
    cli.exec(&["dispatch"]).await.ok();
    assert_eq!(muster.draft(approved).unwrap()["state"], "approved");
    assert_eq!(cli.item(rejected).await["state"], "rejected");
    let outbox = cli.exec(&["outbox", "--all", "--json"]).await.json();
    for decision in outbox.as_array().unwrap() {
        assert_eq!(decision["state"], "done", "{outbox}");
    }
    let detail = cli.exec(&["show", &rejected_id, "--json"]).await.json();
    let settled = detail["audit"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|a| a["action"] == "reject dispatched")
        .cloned()
        .unwrap_or_default();
    assert_eq!(settled["outcome"], "done", "{detail}");
    assert!(
        settled["detail"]
            .as_str()
            .is_some_and(|d| d.contains("already so")),
        "{settled}"
    );
}
