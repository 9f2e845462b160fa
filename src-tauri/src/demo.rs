//! Demo mode (`--demo`): the fake Gmail and fake muster run inside the app, seeded with their
//! demo drafts, both accounts are connected in the fresh temporary data directory, and a small
//! scripted agent acts a little after start so a newcomer sees the story unfold: a new Gmail
//! draft arrives, the muster plugin refuses the reply the owner had approved (a notification,
//! the tray turns to alert), and the session files its redraft on the redraft route.

use std::time::Duration;

use anyhow::Context;
use countersign_core::rules::{AttachmentCondition, Conditions, RuleAction, RuleDefinition};
use countersign_core::services::{GmailConnect, Services};
use countersign_core::Store;
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_fakes::Seed;

/// What the plugin says when it refuses the queued demo reply.
pub const REFUSAL_REASON: &str = "recipient mailbox full";

/// The demo's one rule, in shadow: it approves nothing, but Settings → Rules shows what it
/// would have done beside what the owner does.
pub fn shadow_rule() -> RuleDefinition {
    RuleDefinition {
        name: "Short replies to people on the thread".into(),
        scope: Default::default(),
        conditions: Conditions {
            or_on_thread: true,
            no_cc_or_bcc: true,
            attachments: Some(AttachmentCondition::None),
            max_words: Some(150),
            ..Conditions::default()
        },
        action: RuleAction::Approve,
        daily_cap: Some(20),
    }
}

/// The embedded fakes of demo mode. Cheap to clone; clones control the same fakes.
#[derive(Clone, Debug)]
pub struct Demo {
    /// The fake Gmail the demo Gmail account talks to.
    pub gmail: FakeGmail,
    /// The fake muster the demo muster account talks to.
    pub muster: FakeMuster,
}

/// When the scripted agent acts, counted from [`Demo::run_agent`].
#[derive(Clone, Copy, Debug)]
pub struct AgentTimes {
    /// A new Gmail draft (answering a new inbox message) is filed.
    pub new_gmail_draft: Duration,
    /// The plugin refuses the approved, queued muster reply.
    pub plugin_refuses: Duration,
    /// The session files its redraft on the redraft route.
    pub session_redrafts: Duration,
}

impl Default for AgentTimes {
    fn default() -> Self {
        AgentTimes {
            new_gmail_draft: Duration::from_secs(8),
            plugin_refuses: Duration::from_secs(15),
            session_redrafts: Duration::from_secs(25),
        }
    }
}

impl Demo {
    /// Starts both fakes with their demo seed on 127.0.0.1 and connects an account for each in
    /// `store` through `services` (whose secrets must be kept in files, never the keyring).
    pub async fn start(store: &Store, services: &Services) -> anyhow::Result<Demo> {
        let gmail = FakeGmail::start(GmailConfig {
            seed: Seed::Demo,
            ..GmailConfig::default()
        })
        .await
        .context("cannot start the demo's fake Gmail")?;
        let muster = FakeMuster::start(MusterConfig {
            seed: Seed::Demo,
            ..MusterConfig::default()
        })
        .await
        .context("cannot start the demo's fake muster")?;
        services
            .connect_gmail(
                store,
                GmailConnect::auto_consent(
                    gmail.client_secret_json().to_string(),
                    gmail.api_base(),
                    gmail.tokeninfo_url(),
                ),
            )
            .await
            .context("cannot connect the demo Gmail account")?;
        services
            .connect_muster(store, &muster.url(), muster.password())
            .await
            .context("cannot connect the demo muster account")?;
        store
            .add_rule(&shadow_rule(), "demo")
            .await
            .context("cannot add the demo's shadow rule")?;
        Ok(Demo { gmail, muster })
    }

    /// Plays the agents on a background task, at `times`.
    pub fn run_agent(&self, times: AgentTimes) {
        let demo = self.clone();
        // Tauri's runtime: this is called from the app's setup, outside any Tokio context.
        tauri::async_runtime::spawn(async move {
            let start = tokio::time::Instant::now();
            tokio::time::sleep_until(start + times.new_gmail_draft).await;
            demo.file_gmail_reply();
            tokio::time::sleep_until(start + times.plugin_refuses).await;
            let Some(message_id) = demo.refuse_queued_reply() else {
                tracing::warn!("demo: no approved muster reply to refuse");
                return;
            };
            tokio::time::sleep_until(start + times.session_redrafts).await;
            if let Err(error) = demo.file_redraft(&message_id) {
                tracing::warn!(error = %error, "demo: cannot file the redraft");
            }
        });
    }

    /// An email arrives in the inbox and the agent files its reply as a Gmail draft in the same
    /// thread. Returns the draft id.
    pub fn file_gmail_reply(&self) -> String {
        let parent = crlf(
            "From: Dana Okafor <dana@example.com>\nTo: owner@example.com\n\
             Subject: Workshop slides for Friday\nDate: Tue, 01 Dec 2026 09:40:00 +0000\n\
             Message-ID: <parent-workshop@example.com>\nMIME-Version: 1.0\n\
             Content-Type: text/plain; charset=utf-8\n\n\
             Hi, could you send me the slides for Friday's workshop by Thursday noon?\n\nDana\n",
        );
        let (_, thread_id) = self.gmail.add_inbox_message(&parent, None);
        let reply = crlf(
            "From: owner@example.com\nTo: Dana Okafor <dana@example.com>\n\
             Subject: Re: Workshop slides for Friday\nDate: Tue, 01 Dec 2026 09:41:00 +0000\n\
             Message-ID: <draft-workshop@countersign.example>\n\
             In-Reply-To: <parent-workshop@example.com>\n\
             References: <parent-workshop@example.com>\nMIME-Version: 1.0\n\
             Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n\
             Hi Dana,\n\nSure: you will have the slides on Wednesday evening, a day early.\n\n\
             Best regards\n",
        );
        let draft = self.gmail.file_draft(&reply, Some(&thread_id));
        tracing::info!(draft = %draft.id, "demo: the agent filed a new Gmail draft");
        draft.id
    }

    /// The plugin reports `ok: false` for the reply the demo seed approved and queued. Returns
    /// the muster message id it answers, or `None` when no such reply is left.
    pub fn refuse_queued_reply(&self) -> Option<String> {
        // The fake numbers its drafts from 1 and has no in-process listing: look them over.
        let queued = (1..=64)
            .map(|n| n.to_string())
            .filter_map(|id| self.muster.draft(&id))
            .find(|d| d["state"] == "approved" && d["result"].is_null())?;
        let id = queued["id"].as_str()?.to_owned();
        // The seed has the plugin claim it already; a second claim is refused, which is fine.
        let _ = self.muster.claim(&id);
        if let Err(error) = self.muster.report_result(&id, false, Some(REFUSAL_REASON)) {
            tracing::warn!(error = ?error, "demo: the plugin cannot report its refusal");
            return None;
        }
        tracing::info!(draft = %id, "demo: the plugin refused a queued reply");
        queued["messageId"].as_str().map(str::to_owned)
    }

    /// The session files its redraft on the open redraft route of `message_id`. Returns the new
    /// draft id.
    pub fn file_redraft(&self, message_id: &str) -> anyhow::Result<String> {
        let route = self
            .muster
            .routes(message_id)
            .into_iter()
            .rev()
            .find(|r| r["state"] == "redraft")
            .and_then(|r| r["id"].as_str().map(str::to_owned))
            .context("cannot find the redraft route")?;
        let id = self
            .muster
            .file_draft(
                &route,
                "Hi Priya,\n\nThursday at 14:00 works. I could not reach your calendar, so here \
                 are the details again: design review, Thursday 14:00, room 3.2.\n\nSam",
            )
            .map_err(|e| anyhow::anyhow!("cannot file the redraft: {e:?}"))?;
        tracing::info!(draft = %id, "demo: the session filed its redraft");
        Ok(id)
    }
}

fn crlf(text: &str) -> Vec<u8> {
    text.replace('\n', "\r\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use countersign_gmail::TokenStore;

    use super::*;

    async fn demo() -> (tempfile::TempDir, Store, Demo) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()));
        let demo = Demo::start(&store, &services).await.unwrap();
        (dir, store, demo)
    }

    #[tokio::test]
    async fn demo_connects_one_gmail_and_one_muster_account() {
        let (_dir, store, _demo) = demo().await;
        let kinds: Vec<_> = store
            .list_accounts()
            .await
            .unwrap()
            .into_iter()
            .map(|a| a.profile.kind)
            .collect();
        assert_eq!(kinds.len(), 2, "one account per fake, not more: {kinds:?}");
        assert!(kinds.contains(&countersign_core::Source::Gmail));
        assert!(kinds.contains(&countersign_core::Source::Muster));
    }

    #[tokio::test]
    async fn the_demo_has_one_shadow_rule_whose_record_shows_after_a_dispatch_pass() {
        let (dir, store, _demo) = demo().await;
        let rules = store.rules().await.unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].mode, countersign_core::store::RuleMode::Shadow);
        let services = Services::with_token_store(dir.path(), TokenStore::file(dir.path()));
        for account in store.list_accounts().await.unwrap() {
            match account.profile.kind {
                countersign_core::Source::Gmail => {
                    let client = services.gmail(&account).await.unwrap();
                    countersign_core::sync::sync_gmail(&store, &account, &client)
                        .await
                        .unwrap();
                }
                countersign_core::Source::Muster => {
                    let client = services.muster(&account).await.unwrap();
                    countersign_core::sync::sync_muster(&store, &account, &client)
                        .await
                        .unwrap();
                }
            }
        }
        countersign_core::rules::pass::run(&store, chrono::Utc::now())
            .await
            .unwrap();
        let record = countersign_core::rules::record::recorded(&store, rules[0].id)
            .await
            .unwrap();
        assert!(
            record.summary().starts_with("would have approved"),
            "{}",
            record.summary()
        );
        assert!(
            store
                .list_decisions(countersign_core::store::DecisionFilter::All)
                .await
                .unwrap()
                .is_empty(),
            "a shadow rule decides nothing"
        );
    }

    #[tokio::test]
    async fn the_agent_files_a_gmail_reply_threaded_under_a_new_inbox_message() {
        let (_dir, _store, demo) = demo().await;
        let before = demo.gmail.drafts().len();
        let id = demo.file_gmail_reply();
        let drafts = demo.gmail.drafts();
        assert_eq!(drafts.len(), before + 1);
        assert_eq!(drafts[0].id, id, "the newest draft is the agent's");
    }

    #[tokio::test]
    async fn the_plugin_refuses_the_queued_reply_and_the_session_redrafts_it() {
        let (_dir, _store, demo) = demo().await;
        let message_id = demo
            .refuse_queued_reply()
            .expect("the seed queues one reply");
        let refused = (1..=64)
            .filter_map(|n| demo.muster.draft(&n.to_string()))
            .find(|d| d["messageId"] == message_id.as_str() && d["state"] == "failed")
            .expect("the queued reply failed");
        assert_eq!(refused["result"]["detail"], REFUSAL_REASON);
        assert!(
            demo.refuse_queued_reply().is_none(),
            "the only queued reply was refused already"
        );

        let redraft = demo.file_redraft(&message_id).unwrap();
        let redraft = demo.muster.draft(&redraft).unwrap();
        assert_eq!(redraft["state"], "pending");
        assert_eq!(redraft["redraftOf"], refused["id"]);
        assert_eq!(redraft["redraftNumber"], 1);
    }
}
