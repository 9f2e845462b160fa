//! A model test of the item state machine and the outbox together (issue 39): random
//! interleavings of the owner's decisions and undos, syncs, what agents, plugins and Gmail's own
//! page do meanwhile (new versions, deletions, sends elsewhere, a check's or a plugin's refusal),
//! how the services answer (ok, lost after commit, an error, a rate limit, offline) and process
//! kills mid-pass — against the fakes on 127.0.0.1 and a real mirror file.
//!
//! After every step: no error escapes a dispatch pass, and no draft was sent twice. At the end,
//! with the services answering again: every decision is final, nothing left that the owner did
//! not approve, every approval that ended done left exactly once, and every item's state says
//! why.
//!
//! `COUNTERSIGN_MODEL_RUNS=N` runs N seeds (CI runs a fixed count); `COUNTERSIGN_MODEL_SEED=S`
//! replays one. A failure prints its seed and every step taken.

use std::collections::BTreeMap;
use std::time::Duration;

use countersign_core::decide::{self, Confirmation, UndoWindow};
use countersign_core::outbox::Dispatcher;
use countersign_core::store::{Account, DecisionFilter};
use countersign_core::{DecisionKind, DecisionState, Error, ItemState, Source};
use countersign_fakes::gmail::Failure;
use countersign_fakes::muster::CheckVerdict;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

use countersign_core::services::Services;
use countersign_core::Store;
use countersign_gmail::TokenStore;

use crate::support::{
    dispatch_retries, parent, quick_dispatch, quick_retries, resync, shown, sync, Env, OWNER,
};

/// Seeds run when `COUNTERSIGN_MODEL_RUNS` does not say.
const RUNS: u64 = 20;
/// Steps per run.
const STEPS: usize = 80;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_interleaving_of_decisions_syncs_faults_and_kills_stops_a_pass_or_sends_twice() {
    // RUST_LOG=debug shows what a failing seed's steps did inside.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let seeds: Vec<u64> = match std::env::var("COUNTERSIGN_MODEL_SEED") {
        Ok(seed) => vec![seed.parse().expect("COUNTERSIGN_MODEL_SEED is a number")],
        Err(_) => {
            let runs = std::env::var("COUNTERSIGN_MODEL_RUNS")
                .map(|n| n.parse().expect("COUNTERSIGN_MODEL_RUNS is a number"))
                .unwrap_or(RUNS);
            (1..=runs).collect()
        }
    };
    for seed in seeds {
        let mut model = Model::start(seed).await;
        model.run().await;
    }
}

/// One run: the fakes, a mirror with a Gmail and a muster account, and what was done so far.
struct Model {
    seed: u64,
    rng: StdRng,
    env: Env,
    gmail: Account,
    muster: Account,
    dispatcher: Option<Dispatcher>,
    /// Gmail draft ids, with the thread each answers in.
    gmail_drafts: Vec<(String, String)>,
    /// The relayed muster messages (drafts are filed on their open routes).
    muster_messages: Vec<String>,
    /// Every muster draft filed.
    muster_drafts: Vec<String>,
    /// Messages sent from Gmail's own page (not by Countersign).
    sent_in_gmail: Vec<String>,
    /// Drafts whose rejection came from the plugin's check, not from the owner.
    check_refused: Vec<String>,
    /// Every step, for the failure message.
    log: Vec<String>,
}

impl Model {
    async fn start(seed: u64) -> Model {
        let env = Env::new().await;
        // Rejections wait out the owner's undo window: none here, so an undo races the pass.
        let no_window = countersign_core::store::SettingsChange {
            undo_window_secs: Some(0),
            ..Default::default()
        };
        env.store.update_settings(&no_window, OWNER).await.unwrap();
        let gmail = env.connect_gmail().await;
        let muster = env.connect_muster().await;
        // Replies to a checking plugin and to one that does not check.
        env.muster.create_plugin("gmail-relay", false).unwrap();
        env.muster.create_plugin("checked-relay", true).unwrap();
        let mut model = Model {
            seed,
            rng: StdRng::seed_from_u64(seed),
            dispatcher: None,
            gmail,
            muster,
            gmail_drafts: Vec::new(),
            muster_messages: Vec::new(),
            muster_drafts: Vec::new(),
            sent_in_gmail: Vec::new(),
            check_refused: Vec::new(),
            log: Vec::new(),
            env,
        };
        for n in 0..3 {
            model.new_gmail_draft(n);
            let plugin = if n == 0 {
                "checked-relay"
            } else {
                "gmail-relay"
            };
            let relayed = model
                .env
                .muster
                .relay_message(
                    plugin,
                    "inbox-chat",
                    "ana@example.com",
                    &format!("Q{n}"),
                    "?",
                )
                .unwrap();
            let draft = model
                .env
                .muster
                .file_draft(&relayed.route_id, &format!("A{n}"))
                .unwrap();
            model.muster_drafts.push(draft);
            model.muster_messages.push(relayed.message_id);
        }
        sync(&model.env, &model.gmail).await;
        resync(&model.env, &model.muster).await;
        model.dispatcher = Some(model.env.dispatcher().await);
        model
    }

    fn new_gmail_draft(&mut self, n: usize) {
        let (_, thread) = self.env.gmail.add_inbox_message(&parent(n), None);
        let filed = self
            .env
            .gmail
            .file_draft(&crate::support::reply(n, "First words."), Some(&thread));
        self.gmail_drafts.push((filed.id, thread));
    }

    fn fail(&self, what: impl std::fmt::Display) -> ! {
        panic!(
            "seed {} (replay: COUNTERSIGN_MODEL_SEED={}): {what}\nsteps:\n  {}",
            self.seed,
            self.seed,
            self.log.join("\n  ")
        )
    }

    async fn run(&mut self) {
        for _ in 0..STEPS {
            let started = std::time::Instant::now();
            let logged = self.log.len();
            // Only stops a hang: every step is a few calls on loopback.
            if tokio::time::timeout(Duration::from_secs(60), self.step())
                .await
                .is_err()
            {
                self.fail("a step did not end within a minute");
            }
            if let Some(line) = self.log.get_mut(logged) {
                line.push_str(&format!("  [{:?}]", started.elapsed()));
            }
            self.never_sent_twice();
        }
        self.settle().await;
        self.check_the_end().await;
    }

    async fn step(&mut self) {
        match self.rng.gen_range(0..100) {
            0..=21 => self.decide().await,
            22..=25 => self.undo().await,
            26..=37 => self.sync_one().await,
            38..=47 => self.agent_or_plugin().await,
            48..=61 => self.fault(),
            62..=65 => {
                let online = self.rng.gen_bool(0.5);
                self.log.push(format!("services online: {online}"));
                self.env.gmail.set_online(online);
                self.env.muster.set_online(online);
            }
            66..=91 => {
                self.log.push("dispatch pass…".into());
                self.dispatch().await
            }
            _ => self.kill().await,
        }
    }

    /// The owner decides on an item that can be decided, as the review shows it.
    async fn decide(&mut self) {
        let items = self
            .env
            .store
            .list_items(&Default::default())
            .await
            .unwrap();
        let decidable: Vec<_> = items
            .iter()
            .filter(|i| {
                matches!(
                    i.state,
                    ItemState::Pending | ItemState::Conflict | ItemState::AwaitingCheck
                )
            })
            .collect();
        if decidable.is_empty() {
            return;
        }
        let item = decidable[self.rng.gen_range(0..decidable.len())].clone();
        let approve = item.state != ItemState::AwaitingCheck && self.rng.gen_bool(0.6);
        // No undo window: an undo races the next pass instead, which is what matters here
        // (and a pass as of a later time would retry what it put back within the same pass).
        let window = UndoWindow::None;
        let on_screen = shown(&self.env, item.id).await;
        let decided = if approve {
            decide::approve(
                &self.env.store,
                &on_screen,
                window,
                OWNER,
                Confirmation::DespiteCautions,
            )
            .await
        } else {
            decide::reject(&self.env.store, &on_screen, "not this one", OWNER).await
        };
        self.log.push(format!(
            "owner {} item {} ({} {}): {}",
            if approve { "approves" } else { "rejects" },
            item.id,
            item.source.as_str(),
            item.external_id,
            match &decided {
                Ok(d) => format!("decision {}", d.id),
                Err(e) => format!("refused: {e}"),
            }
        ));
    }

    async fn undo(&mut self) {
        let live = self.live().await;
        if live.is_empty() {
            return;
        }
        let item_id = live[self.rng.gen_range(0..live.len())].item_id;
        let undone = decide::undo(&self.env.store, item_id, OWNER).await;
        self.log.push(format!(
            "owner undoes item {item_id}: {}",
            match undone {
                Ok(d) => format!("decision {} cancelled", d.id),
                Err(e) => format!("refused: {e}"),
            }
        ));
    }

    /// A sync may fail on a service that does not answer, never on the mirror's own rules.
    async fn sync_one(&mut self) {
        let (which, result) = if self.rng.gen_bool(0.5) {
            let client = self.env.services.gmail(&self.gmail).await.unwrap();
            let result = countersign_core::sync::sync_gmail(&self.env.store, &self.gmail, &client)
                .await
                .map(drop);
            ("gmail", result)
        } else {
            let result = match self.env.services.muster(&self.muster).await {
                Ok(client) => {
                    countersign_core::sync::sync_muster(&self.env.store, &self.muster, &client)
                        .await
                        .map(drop)
                }
                Err(e) => Err(e),
            };
            ("muster", result)
        };
        self.log.push(format!("sync {which}: {result:?}"));
        if let Err(e @ (Error::Refused { .. } | Error::Corrupt(_) | Error::Database(_))) = &result {
            self.fail(format!("the {which} sync broke on the mirror: {e}"));
        }
    }

    /// What the other parties do meanwhile.
    async fn agent_or_plugin(&mut self) {
        let pick = self.rng.gen_range(0..self.gmail_drafts.len());
        let (draft, thread) = self.gmail_drafts[pick].clone();
        let what = match self.rng.gen_range(0..9) {
            0 => {
                let body = format!("Words {}.", self.rng.gen_range(0..1000));
                let raw = crate::support::reply(pick, &body);
                format!(
                    "agent rewrites gmail draft {draft}: {:?}",
                    self.env.gmail.update_draft(&draft, &raw, Some(&thread))
                )
            }
            1 => format!(
                "agent deletes gmail draft {draft}: {}",
                self.env.gmail.delete_draft(&draft)
            ),
            2 => {
                let sent = self.env.gmail.send_draft_in_gmail(&draft);
                self.sent_in_gmail.extend(sent.clone());
                format!("owner sends gmail draft {draft} from Gmail's page: {sent:?}")
            }
            3 => {
                let n = self.gmail_drafts.len();
                self.new_gmail_draft(n);
                format!("agent files gmail draft {}", self.gmail_drafts[n].0)
            }
            // The plugin sends what muster approved, or refuses it.
            4 | 5 => {
                let id = self.some_muster_draft();
                let ok = self.rng.gen_bool(0.5);
                let _ = self.env.muster.claim(&id);
                format!(
                    "plugin reports draft {id} ok={ok}: {:?}",
                    self.env.muster.report_result(
                        &id,
                        ok,
                        (!ok).then_some("recipient mailbox full")
                    )
                )
            }
            6 => {
                let id = self.some_muster_draft();
                let verdict = if self.rng.gen_bool(0.5) {
                    CheckVerdict::Sendable
                } else {
                    CheckVerdict::Refused
                };
                let recorded = self.env.muster.record_check(&id, verdict, Some("checked"));
                if recorded.is_ok() && verdict == CheckVerdict::Refused {
                    self.check_refused.push(id.clone());
                }
                format!("plugin checks draft {id} {verdict:?}: {recorded:?}")
            }
            7 => {
                let id = self.some_muster_draft();
                format!(
                    "muster deletes draft {id}: {:?}",
                    self.env.muster.delete_draft(&id)
                )
            }
            // A session writes on an open route (a redraft after a refusal, or a new reply).
            _ => {
                let routes = self.muster_routes_now();
                let route = routes[self.rng.gen_range(0..routes.len())].clone();
                let filed = self.env.muster.file_draft(&route, "Another try.");
                self.muster_drafts.extend(filed.clone().ok());
                format!("session files a draft on route {route}: {filed:?}")
            }
        };
        self.log.push(what);
    }

    fn some_muster_draft(&mut self) -> String {
        self.muster_drafts[self.rng.gen_range(0..self.muster_drafts.len())].clone()
    }

    /// Every route of every relayed message (redraft routes included).
    fn muster_routes_now(&self) -> Vec<String> {
        self.muster_messages
            .iter()
            .flat_map(|message| self.env.muster.routes(message))
            .filter_map(|route| match &route["id"] {
                serde_json::Value::String(id) => Some(id.clone()),
                serde_json::Value::Number(id) => Some(id.to_string()),
                _ => None,
            })
            .collect()
    }

    /// The next call of some kind answers badly.
    fn fault(&mut self) {
        let gmail = &self.env.gmail;
        let muster = &self.env.muster;
        let decide = "/api/plugin/drafts/*/decide";
        let what = match self.rng.gen_range(0..9) {
            0 => {
                gmail.drop_after_commit("drafts.send", 1);
                "gmail: the next send is made and its answer lost"
            }
            1 => {
                gmail.drop_after_commit("drafts.delete", 1);
                "gmail: the next delete is made and its answer lost"
            }
            2 => {
                gmail.fail_next("drafts.send", 1, Failure::status(500));
                "gmail: the next send answers 500"
            }
            3 => {
                gmail.fail_next(
                    "drafts.send",
                    1,
                    Failure::status(429).retry_after(Duration::from_secs(1)),
                );
                "gmail: the next send is rate limited"
            }
            4 => {
                gmail.fail_next("drafts.get", 1, Failure::status(503));
                "gmail: the next draft read answers 503"
            }
            5 => {
                muster.drop_after_commit("POST", decide, 1);
                "muster: the next decide lands and its answer is lost"
            }
            6 => {
                muster.fail_next("POST", decide, 1, 503);
                "muster: the next decide answers 503"
            }
            7 => {
                muster.fail_next("POST", decide, 1, 429);
                "muster: the next decide answers 429"
            }
            _ => {
                muster.fail_next("GET", "/api/plugin/drafts/*", 1, 502);
                "muster: the next draft read answers 502"
            }
        };
        self.log.push(what.to_string());
    }

    /// One pass, due or not: no error may escape it.
    async fn dispatch(&mut self) {
        let dispatcher = self.dispatcher.as_ref().expect("a dispatcher");
        match dispatcher.run_once().await {
            Ok(report) => self.log.push(format!(
                "dispatch: {:?}",
                report
                    .attempts
                    .iter()
                    .map(|a| (a.decision.id, a.outcome, a.decision.outcome_detail.clone()))
                    .collect::<Vec<_>>()
            )),
            Err(e) => self.fail(format!("an error escaped the dispatch pass: {e}")),
        }
    }

    /// The process dies somewhere in a pass (its future is dropped where it stands, as a
    /// SIGKILL leaves it), and a new one takes over the data directory.
    async fn kill(&mut self) {
        let after = Duration::from_millis(self.rng.gen_range(0..25));
        let dispatcher = self.dispatcher.take().expect("a dispatcher");
        let ended = tokio::time::timeout(after, dispatcher.run_once()).await;
        drop(dispatcher);
        self.log.push(format!(
            "process killed after {after:?}: {}",
            match ended {
                Ok(Ok(_)) => "the pass had finished".to_string(),
                Ok(Err(e)) => self.fail(format!("an error escaped the dispatch pass: {e}")),
                Err(_) => "mid-pass".to_string(),
            }
        ));
        // A killed process's open transaction and locks die with it: here, the old mirror
        // connections are closed (rolling back what the dropped pass left open) and a new
        // process opens the mirror and its services afresh.
        self.env.store.close().await;
        self.env.store = Store::open(self.env.dir.path()).await.unwrap();
        self.env.services =
            Services::with_token_store(self.env.dir.path(), TokenStore::file(self.env.dir.path()))
                .with_retry(quick_retries(), dispatch_retries())
                .with_units_per_second(100_000);
        let next = Dispatcher::acquire(
            self.env.store.clone(),
            self.env.services.clone(),
            self.env.dir.path(),
            quick_dispatch(),
        )
        .await;
        match next {
            Ok(Some(d)) => self.dispatcher = Some(d),
            other => self.fail(format!("cannot take over after the kill: {other:?}")),
        }
    }

    async fn live(&self) -> Vec<countersign_core::store::Decision> {
        self.env
            .store
            .list_decisions(DecisionFilter::Live)
            .await
            .unwrap()
    }

    /// Gmail never got the same draft sent twice (a send elsewhere is not ours, but two sends of
    /// one draft are impossible either way: the first takes it out of Drafts).
    fn never_sent_twice(&self) {
        for (draft, _) in &self.gmail_drafts {
            let sent = self.env.gmail.send_count(draft);
            if sent > 1 {
                self.fail(format!("gmail draft {draft} was sent {sent} times"));
            }
        }
    }

    /// The services answer again; sync and dispatch until nothing is live.
    async fn settle(&mut self) {
        self.log.push("— the services answer again —".into());
        self.env.gmail.clear_faults();
        self.env.muster.clear_faults();
        self.env.gmail.set_online(true);
        self.env.muster.set_online(true);
        for _ in 0..30 {
            sync(&self.env, &self.gmail).await;
            resync(&self.env, &self.muster).await;
            self.dispatch().await;
            if self.live().await.is_empty() {
                return;
            }
            // A rate limit's or muster's look-up spacing (200 ms here) runs on the wall clock.
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let live = self.live().await;
        self.fail(format!(
            "decisions still live with every service answering: {live:#?}"
        ));
    }

    async fn check_the_end(&self) {
        let store = &self.env.store;
        let decisions = store.list_decisions(DecisionFilter::All).await.unwrap();
        let mut by_item: BTreeMap<i64, Vec<_>> = BTreeMap::new();
        for d in &decisions {
            by_item.entry(d.item_id).or_default().push(d.clone());
        }
        let sent = self.env.gmail.sent_messages();
        for item in store.list_items(&Default::default()).await.unwrap() {
            let made = by_item.get(&item.id).cloned().unwrap_or_default();
            let approvals: Vec<_> = made
                .iter()
                .filter(|d| d.kind == DecisionKind::Approve)
                .collect();
            // Every item's state says why: nothing waits on a decision that is over.
            match item.state {
                ItemState::Queued | ItemState::Sending
                    if !(item.source == Source::Muster && item.state == ItemState::Sending) =>
                {
                    self.fail(format!(
                        "item {} is stuck {}: {made:#?}",
                        item.id, item.state
                    ))
                }
                ItemState::Conflict | ItemState::SendFailed | ItemState::Gone
                    if item.state_reason.as_deref().unwrap_or("").is_empty() =>
                {
                    self.fail(format!(
                        "item {} is {} and says not why",
                        item.id, item.state
                    ))
                }
                _ => {}
            }
            match item.source {
                Source::Gmail => {
                    // Ours: what drafts.send carried (Gmail's own page sends without a decision).
                    let ours: Vec<_> = sent
                        .iter()
                        .filter(|s| s.draft_id == item.external_id)
                        .filter(|s| !self.sent_in_gmail.contains(&s.message_id))
                        .collect();
                    let done: Vec<_> = approvals
                        .iter()
                        .filter(|d| d.state == DecisionState::Done)
                        .collect();
                    if done.len() > 1 {
                        self.fail(format!(
                            "item {} has two approvals done: {done:#?}",
                            item.id
                        ));
                    }
                    for message in &ours {
                        // The bytes that left are a reviewed version, approved (with at most a
                        // Message-ID added in front).
                        let vouched = approvals.iter().any(|d| {
                            d.sent_digest.as_deref()
                                == Some(&hex::encode(Sha256::digest(&message.raw)))
                                || d.digest == hex::encode(Sha256::digest(&message.raw))
                        });
                        if !vouched {
                            self.fail(format!(
                                "gmail draft {} left with bytes no approval vouches for: {made:#?}",
                                item.external_id
                            ));
                        }
                    }
                    // Done means the approved version is in Sent, once — sent by Countersign,
                    // or found there after the owner sent it from Gmail's own page.
                    let left = sent
                        .iter()
                        .filter(|s| s.draft_id == item.external_id)
                        .count();
                    if let [approval] = done.as_slice() {
                        if left != 1 {
                            self.fail(format!(
                                "approval {} is done but {left} message(s) of draft {} left",
                                approval.id, item.external_id
                            ));
                        }
                    }
                }
                Source::Muster => {
                    let Some(draft) = self.env.muster.draft(&item.external_id) else {
                        continue;
                    };
                    let state = draft["state"].as_str().unwrap_or_default().to_string();
                    let owner_rejected = made.iter().any(|d| d.kind == DecisionKind::Reject);
                    match state.as_str() {
                        "approved" | "sent" | "failed" if approvals.is_empty() => {
                            self.fail(format!(
                                "muster draft {} is {state} with no approval",
                                item.external_id
                            ))
                        }
                        "rejected"
                            if !owner_rejected
                                && !self.check_refused.contains(&item.external_id) =>
                        {
                            self.fail(format!(
                                "muster draft {} is rejected by nobody here",
                                item.external_id
                            ))
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}
