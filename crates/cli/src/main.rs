//! `countersign`: the headless face of Countersign — every command is a thin call into
//! `countersign-core`, so the CLI and the desktop app behave the same on the same data dir.

mod account;
mod audit;
mod bulk;
mod dispatch;
mod history;
mod machine;
mod output;
mod review;
mod rule_labels;
mod rules;
mod settings;
mod status;
mod sync;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use countersign_core::decide::{self, UndoWindow};
use countersign_core::store::{DecisionFilter, ShownPart};
use countersign_core::{ItemFilter, ItemState, Store};

/// Review and decide on the email your AI agents drafted.
#[derive(Debug, Parser)]
#[command(name = "countersign", version, about)]
struct Cli {
    /// The data directory (default: $COUNTERSIGN_DATA_DIR, else the platform data dir).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Connect, list and remove Gmail mailboxes and muster instances.
    Account {
        #[command(subcommand)]
        command: account::AccountCommand,
    },
    /// Bring the mirror up to date with every account.
    Sync,
    /// Carry out the decisions that are due (send approvals, pass on rejections).
    Dispatch {
        /// Keep dispatching until no decision is left waiting (undo windows included).
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds.
        #[arg(long, value_name = "SECS", default_value_t = 600)]
        timeout: u64,
    },
    /// Show or change the settings (e.g. the undo window).
    Settings {
        #[command(subcommand)]
        command: settings::SettingsCommand,
    },
    /// List review items (pending first).
    List {
        /// Only items in this state (pending, awaiting_check, queued, sending, sent, rejected,
        /// send_failed, conflict, gone).
        #[arg(long)]
        state: Vec<String>,
    },
    /// Show one item: headers, warnings, body, versions, decisions and the audit trail. What
    /// it prints counts as shown to you: `approve` binds to the version it printed.
    Show {
        /// The item id from `countersign list`.
        id: i64,
        /// Which alternative's words to print: `text` (the plain-text part, the default) or
        /// `html` (the visible text of the HTML part). When the two say different things, `show`
        /// prints both unless one is named.
        #[arg(long, value_enum)]
        part: Option<Part>,
        /// Also list every text a program could read that the review does not show: hidden
        /// passages, alt/title/ARIA text, comments, Outlook-only branches, other alternatives,
        /// nested messages, and styling Countersign cannot evaluate.
        #[arg(long)]
        machine_text: bool,
    },
    /// Approve an item: it is sent after the undo window. Without `--version`, the version the
    /// last `show` printed is approved (and none is, when `show` printed none).
    Approve {
        #[command(flatten)]
        reviewed: Reviewed,
        /// Send as soon as the dispatcher runs, without an undo window.
        #[arg(long)]
        no_undo: bool,
        /// Approve although the draft has warnings (malformed structure...) or alternatives
        /// that say different things: the audit records what you approved despite.
        #[arg(long)]
        despite_warnings: bool,
    },
    /// Edit a Gmail draft's subject or text before approving it: Gmail gets a new version in
    /// which nothing else changes, which you then review (`show`) and approve.
    Edit {
        #[command(flatten)]
        reviewed: Reviewed,
        /// The new subject (unchanged when not given).
        #[arg(long)]
        subject: Option<String>,
        /// A file holding the new text body, `-` for standard input (unchanged when not given).
        #[arg(long)]
        text_file: Option<PathBuf>,
    },
    /// Reject an item with a reason.
    Reject {
        #[command(flatten)]
        reviewed: Reviewed,
        /// Why (goes back to the agent and into the audit log).
        #[arg(long)]
        reason: String,
    },
    /// Take back a decision that has not left yet (in its undo window, or after it while it waits).
    Undo {
        /// The item id.
        id: i64,
    },
    /// List decisions waiting in the outbox (with --all, every decision ever made).
    Outbox {
        /// Include finished decisions.
        #[arg(long)]
        all: bool,
    },
    /// Reject several items with one reason, or approve those of them you displayed.
    Bulk {
        #[command(subcommand)]
        command: bulk::BulkCommand,
    },
    /// What was decided, newest first: sent, rejected, by rule, edited, failed; or the exact
    /// bytes of one decision (`--bytes`).
    History(history::HistoryArgs),
    /// Per agent (Gmail sender, muster plugin and route kind): how often you approved, edited
    /// and rejected, how often a rule decided, and the median time to your decision.
    Agents,
    /// Rules: decisions you make in advance (list, add, edit, remove, test, arm, disarm, hold).
    Rules {
        #[command(subcommand)]
        // Boxed: the rule flags make this the largest command by far.
        command: Box<rules::RulesCommand>,
    },
    /// Check the audit log's hash chain, or export the log.
    Audit {
        #[command(subcommand)]
        command: audit::AuditCommand,
    },
    /// Whether sending is on, what waits, each account's status ("live" or "polling": a muster
    /// account a running app follows, through its event stream or by polling; "offline": its
    /// service does not answer; or "online") and last sync, whether the record holds, and the
    /// decisions set aside because the record does not vouch for them.
    Status,
    /// Stop sending: no decision leaves until `resume`.
    Pause,
    /// Resume sending.
    Resume,
}

/// One alternative of a draft's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Part {
    /// The plain-text part.
    Text,
    /// The visible text of the HTML part.
    Html,
}

impl From<Part> for ShownPart {
    fn from(part: Part) -> Self {
        match part {
            Part::Text => ShownPart::Text,
            Part::Html => ShownPart::Html,
        }
    }
}

/// The item a decision or an edit is about, and the version the owner reviewed.
#[derive(Debug, Args)]
struct Reviewed {
    /// The item id.
    id: i64,
    /// The version you reviewed (from `show`): refused if the draft has changed since.
    /// Without it the current version is the one bound, and its digest printed; scripts should
    /// pass it.
    #[arg(long)]
    version: Option<String>,
}

const ACTOR: &str = "owner via cli";

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("countersign: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("countersign: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging() {
    // yup-oauth2 logs tokens at debug level: never let it below warn, whatever RUST_LOG says.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
        .add_directive(
            countersign_gmail::LOG_FILTER_DIRECTIVE
                .parse()
                .expect("static directive"),
        );
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn data_dir(cli: &Cli) -> Result<PathBuf> {
    match &cli.data_dir {
        Some(dir) => Ok(dir.clone()),
        None => countersign_core::paths::default_data_dir()
            .context("cannot find a data directory: pass --data-dir or set COUNTERSIGN_DATA_DIR"),
    }
}

/// The service clients of `data_dir`, for one command run.
///
/// A sync from the command line gives up on an unreachable service after a few seconds and
/// says so, instead of riding out half a minute of backoff as the desktop app's background
/// sync does. The dispatcher's policy is core's own.
fn services(data_dir: &Path) -> countersign_core::services::Services {
    use countersign_gmail::RetryPolicy;
    use std::time::Duration;
    let sync = RetryPolicy {
        max_attempts: 4,
        initial_backoff: Duration::from_millis(250),
        max_backoff: Duration::from_secs(4),
    };
    let dispatch = RetryPolicy {
        max_attempts: 2,
        initial_backoff: Duration::from_millis(250),
        max_backoff: Duration::from_secs(2),
    };
    countersign_core::services::Services::new(data_dir).with_retry(sync, dispatch)
}

async fn open_store(dir: &Path) -> Result<Store> {
    // The record's key is kept where the tokens are (the keyring, or their 0600 files).
    Store::open_keyed(dir, &services(dir).record_keys())
        .await
        .with_context(|| format!("cannot open the data directory {}", dir.display()))
}

async fn run(cli: Cli) -> Result<ExitCode> {
    let dir = data_dir(&cli)?;
    let store = open_store(&dir).await?;
    // The daily checkpoint, when the owner chose a folder and the last one is a day old.
    if let Err(e) = store.keep_checkpoint(chrono::Utc::now(), false).await {
        eprintln!("warning: {e}");
    }
    let json = cli.json;
    let printed = match &cli.command {
        Command::Account { command } => return account::run(&store, &dir, command, json).await,
        Command::Sync => return sync::run(&store, &dir, json).await,
        Command::Audit { command } => return audit::run(&store, command, json).await,
        Command::Bulk { command } => bulk::run(&store, command, ACTOR, json).await,
        Command::History(args) => history::run(&store, args, json).await,
        Command::Agents => history::agents(&store, json).await,
        Command::Status => status::run(&store, &dir, json).await,
        Command::Rules { command } => rules::run(&store, command, ACTOR, json).await,
        Command::Dispatch { wait, timeout } => {
            let limit = (*wait).then(|| std::time::Duration::from_secs(*timeout));
            return dispatch::run(&store, &dir, limit, json).await;
        }
        Command::Settings { command } => settings::run(&store, command, ACTOR, json).await,
        Command::List { state } => {
            let states = state
                .iter()
                .map(|s| s.parse::<ItemState>())
                .collect::<Result<Vec<_>, _>>()
                .context("cannot filter by that state")?;
            let filter = ItemFilter {
                states,
                ..ItemFilter::default()
            };
            let items = store.list_items(&filter).await?;
            output::items(&items, json)
        }
        Command::Show {
            id,
            part,
            machine_text,
        } => {
            let detail = output::ItemDetail::load(&store, *id).await?;
            let parts = output::item_detail(&detail, part.map(ShownPart::from), json)?;
            if *machine_text && !json {
                machine::print(&detail.content.view);
            }
            // Printed, so shown: recorded only once it is on the owner's terminal.
            let shown = decide::Shown {
                id: *id,
                version: detail.shown_version.clone(),
                digest: detail.shown_digest.clone(),
            };
            for part in parts {
                store.record_view(&shown, ACTOR, part).await?;
            }
            Ok(())
        }
        Command::Approve {
            reviewed,
            no_undo,
            despite_warnings,
        } => {
            let window = if *no_undo {
                UndoWindow::None
            } else {
                UndoWindow::FromSettings
            };
            let confirmation = if *despite_warnings {
                decide::Confirmation::DespiteCautions
            } else {
                decide::Confirmation::None
            };
            let shown = reviewed.shown_to_you(&store).await?;
            let decision = decide::approve(&store, &shown, window, ACTOR, confirmation)
                .await
                .map_err(|e| match e {
                    countersign_core::Error::NeedsConfirmation { .. } => {
                        anyhow::anyhow!("{e}; pass --despite-warnings to approve it anyway")
                    }
                    e => e.into(),
                })?;
            output::decision_made(&decision, json)
        }
        Command::Reject { reviewed, reason } => {
            let shown = reviewed.shown(&store).await?;
            let decision = decide::reject(&store, &shown, reason, ACTOR).await?;
            output::decision_made(&decision, json)
        }
        Command::Edit {
            reviewed,
            subject,
            text_file,
        } => {
            let shown = reviewed.shown(&store).await?;
            let edited = review::edit(
                &store,
                &services(&dir),
                &shown,
                subject.as_deref(),
                text_file.as_deref(),
                ACTOR,
            )
            .await?;
            output::edited(&edited, json)
        }
        Command::Undo { id } => {
            let decision = decide::undo(&store, *id, ACTOR).await?;
            output::decision_made(&decision, json)
        }
        Command::Outbox { all } => {
            let filter = if *all {
                DecisionFilter::All
            } else {
                DecisionFilter::Live
            };
            let decisions = store.list_decisions(filter).await?;
            output::decisions(&decisions, json)
        }
        Command::Pause => {
            store.set_paused(true, ACTOR).await?;
            output::message(
                "Sending is paused: nothing leaves until `countersign resume`.",
                json,
            )
        }
        Command::Resume => {
            store.set_paused(false, ACTOR).await?;
            output::message("Sending resumed.", json)
        }
    };
    printed.map(|()| ExitCode::SUCCESS)
}

impl Reviewed {
    /// What an approval binds to: the `--version` the owner names, or the version the last
    /// `show` printed (refused when `show` printed none: an approval needs a version shown).
    async fn shown_to_you(&self, store: &countersign_core::Store) -> Result<decide::Shown> {
        if self.version.is_some() {
            return self.shown(store).await;
        }
        store.get_item(self.id).await?;
        match store.last_view(self.id, ACTOR).await? {
            Some(view) => Ok(decide::Shown {
                id: self.id,
                version: view.version,
                digest: view.digest,
            }),
            None => anyhow::bail!(
                "cannot approve item {}: no version of it was shown to you; show it first \
                 (`countersign show {}`)",
                self.id,
                self.id
            ),
        }
    }

    /// What the command binds to: the `--version` the owner names (its digest from the
    /// mirror), or the current version when they name none.
    async fn shown(&self, store: &countersign_core::Store) -> Result<decide::Shown> {
        let id = self.id;
        let current = decide::current(store, id).await?;
        Ok(match self.version.as_deref() {
            None => current,
            Some(version) if version == current.version => current,
            Some(version) => {
                let digest = store
                    .version(id, version)
                    .await
                    .map(|v| v.sha256)
                    // An unknown version still binds, and is refused as not current by core.
                    .unwrap_or_default();
                decide::Shown {
                    id,
                    version: version.to_owned(),
                    digest,
                }
            }
        })
    }
}
