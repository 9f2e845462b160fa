//! `countersign rules …`: the owner's decisions made in advance (docs/rules.md). A new rule
//! starts in shadow; `test` replays one over the history; `arm` shows its record and asks;
//! `move` changes the order, which decides which rule acts first.

use std::io::IsTerminal;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use countersign_core::render::FlagKind;
use countersign_core::rules::pass::set_hold_everything;
use countersign_core::rules::record::{self, RuleRecord};
use countersign_core::rules::{AttachmentCondition, Conditions, RuleAction, RuleDefinition, Scope};
use countersign_core::store::{Rule, RuleMode};
use countersign_core::Store;

/// The `rules` subcommands.
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List the rules in order, with their mode and record.
    List,
    /// Add a rule (at the end of the order, in shadow).
    Add(RuleFlags),
    /// Change a rule: the flags given replace those parts; it goes back to shadow.
    Edit {
        /// The rule id.
        id: i64,
        #[command(flatten)]
        flags: RuleFlags,
    },
    /// Show one rule: its scope, conditions and action.
    Show {
        /// The rule id.
        id: i64,
    },
    /// Move a rule to another place in the order (the first armed rule that matches decides).
    Move {
        /// The rule id.
        id: i64,
        /// Its new place: 1 is first.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        to: u32,
    },
    /// Add a copy of a rule ("… (copy)") at the end of the order, in shadow.
    Duplicate {
        /// The rule id.
        id: i64,
    },
    /// Remove a rule (the record still names it).
    Remove {
        /// The rule id.
        id: i64,
    },
    /// Replay a rule over every draft in the mirror without acting, beside what you did.
    Test {
        /// The rule id.
        id: i64,
    },
    /// Let a rule decide: shows its record (at the rule's current version) and asks first
    /// (`--yes` to skip the question). A rule with no record is refused unless
    /// `--with-no-record` says you know.
    Arm {
        /// The rule id.
        id: i64,
        /// Arm without asking (after reading `rules test`).
        #[arg(long)]
        yes: bool,
        /// Arm it although it has no record yet (it has matched no draft since it last
        /// changed): nothing shows what it would decide.
        #[arg(long)]
        with_no_record: bool,
    },
    /// Put a rule back in shadow.
    Disarm {
        /// The rule id.
        id: i64,
    },
    /// "Hold everything": stop every rule at once (`on`), or let them decide again (`off`).
    Hold {
        /// on or off.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
}

/// A rule's parts, as flags.
#[derive(Debug, Args)]
pub struct RuleFlags {
    /// Its name (the queue and the notifications use it).
    #[arg(long)]
    name: Option<String>,
    /// Only this account (its id from `account list`).
    #[arg(long)]
    account: Option<String>,
    /// Gmail: only drafts whose From header is this address (the agent writes that header:
    /// this picks drafts, it does not vouch for them).
    #[arg(long)]
    sender: Option<String>,
    /// Gmail: only drafts carrying this label (its name as Gmail shows it; the agent can
    /// label its own drafts: this picks drafts, it does not vouch for them).
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// muster: only replies for this plugin.
    #[arg(long)]
    plugin: Option<String>,
    /// muster: only replies the chief filed (true: on no route, or on a route that fell back to
    /// the chief) or only the sessions' own (false).
    #[arg(long)]
    chief_filed: Option<bool>,
    /// Every recipient is in one of these domains (repeat the flag for several).
    #[arg(long = "within", value_name = "DOMAIN")]
    within: Vec<String>,
    /// …or was already on the message answered.
    #[arg(long)]
    or_on_thread: bool,
    /// No Cc and no Bcc.
    #[arg(long)]
    no_cc: bool,
    /// No attachments.
    #[arg(long, conflicts_with = "attachment_type")]
    no_attachments: bool,
    /// Only attachments of these types (`application/pdf`, `image/*`; repeat the flag).
    #[arg(long, value_name = "TYPE", requires = "max_attachment_bytes")]
    attachment_type: Vec<String>,
    /// With --attachment-type: the largest attachment allowed.
    #[arg(long, value_name = "BYTES")]
    max_attachment_bytes: Option<u64>,
    /// The body has at most this many words.
    #[arg(long)]
    max_words: Option<u32>,
    /// The subject matches this regular expression (case-insensitive).
    #[arg(long, value_name = "REGEX")]
    subject: Option<String>,
    /// None of these flags is raised (e.g. external_recipient; repeat the flag).
    #[arg(long = "no-flag", value_name = "KIND")]
    no_flags: Vec<String>,
    /// The rule approves.
    #[arg(long, group = "action")]
    approve: bool,
    /// The rule holds for you (no later rule decides).
    #[arg(long, group = "action")]
    hold: bool,
    /// The rule rejects with this reason.
    #[arg(long, group = "action", value_name = "REASON")]
    reject: Option<String>,
    /// At most this many decisions a day.
    #[arg(long)]
    daily_cap: Option<u32>,
}

impl RuleFlags {
    /// Apply the flags given to `definition`.
    fn apply(&self, definition: &mut RuleDefinition) -> Result<()> {
        let set = |target: &mut Option<String>, value: &Option<String>| {
            if value.is_some() {
                target.clone_from(value);
            }
        };
        if let Some(name) = &self.name {
            definition.name.clone_from(name);
        }
        let scope: &mut Scope = &mut definition.scope;
        set(&mut scope.account, &self.account);
        set(&mut scope.sender, &self.sender);
        set(&mut scope.plugin, &self.plugin);
        if self.chief_filed.is_some() {
            scope.chief_filed = self.chief_filed;
        }
        let conditions: &mut Conditions = &mut definition.conditions;
        if !self.within.is_empty() {
            conditions.recipients_within.clone_from(&self.within);
        }
        conditions.or_on_thread |= self.or_on_thread;
        conditions.no_cc_or_bcc |= self.no_cc;
        if self.no_attachments {
            conditions.attachments = Some(AttachmentCondition::None);
        }
        if let Some(max_bytes) = self.max_attachment_bytes {
            conditions.attachments = Some(AttachmentCondition::OnlyTypes {
                types: self.attachment_type.clone(),
                max_bytes,
            });
        }
        if self.max_words.is_some() {
            conditions.max_words = self.max_words;
        }
        set(&mut conditions.subject_matches, &self.subject);
        if !self.no_flags.is_empty() {
            conditions.no_flags = self
                .no_flags
                .iter()
                .map(|kind| {
                    serde_json::from_value::<FlagKind>(serde_json::Value::String(kind.clone()))
                        .with_context(|| format!("{kind:?} is not a kind of flag"))
                })
                .collect::<Result<_>>()?;
        }
        if self.approve {
            definition.action = RuleAction::Approve;
        } else if self.hold {
            definition.action = RuleAction::Hold;
        } else if let Some(reason) = &self.reject {
            definition.action = RuleAction::Reject {
                reason: reason.clone(),
            };
        }
        if self.daily_cap.is_some() {
            definition.daily_cap = self.daily_cap;
        }
        Ok(())
    }
}

impl RuleFlags {
    /// `--label NAME`: the id of that label among the rule's account's mirrored labels.
    async fn apply_label(&self, store: &Store, definition: &mut RuleDefinition) -> Result<()> {
        if let Some(name) = &self.label {
            let account = definition.scope.account.clone();
            definition.scope.label =
                Some(crate::rule_labels::label_id(store, account.as_deref(), name).await?);
        }
        Ok(())
    }
}

/// Run one `rules` subcommand as `actor`.
pub async fn run(store: &Store, command: &RulesCommand, actor: &str, json: bool) -> Result<()> {
    match command {
        RulesCommand::List => {
            let rules = store.rules().await?;
            let mut lines = Vec::new();
            for rule in &rules {
                let recorded = record::recorded(store, rule.id).await?;
                lines.push((rule, recorded));
            }
            if json {
                let value: Vec<_> = lines
                    .iter()
                    .map(|(rule, recorded)| {
                        serde_json::json!({"rule": rule, "record": recorded.summary()})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else if lines.is_empty() {
                println!("No rules: every draft waits for you.");
            } else {
                for (rule, recorded) in lines {
                    println!("{}", describe(rule));
                    println!("    {}", recorded.summary());
                }
            }
        }
        RulesCommand::Add(flags) => {
            if !(flags.approve || flags.hold || flags.reject.is_some()) {
                bail!(
                    "cannot add the rule: say what it does (--approve, --hold or --reject REASON)"
                );
            }
            let mut definition = RuleDefinition {
                name: String::new(),
                scope: Scope::default(),
                conditions: Conditions::default(),
                action: RuleAction::Hold,
                daily_cap: None,
            };
            flags.apply(&mut definition)?;
            flags.apply_label(store, &mut definition).await?;
            let rule = store.add_rule(&definition, actor).await?;
            print_rule(
                &rule,
                json,
                "Added in shadow: it records what it would do until you arm it.",
            )?;
        }
        RulesCommand::Edit { id, flags } => {
            let mut definition = store.rule(*id).await?.definition;
            flags.apply(&mut definition)?;
            flags.apply_label(store, &mut definition).await?;
            let rule = store.edit_rule(*id, &definition, actor).await?;
            print_rule(
                &rule,
                json,
                "Changed, and back in shadow: its record starts over.",
            )?;
        }
        RulesCommand::Show { id } => {
            let rule = store.rule(*id).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rule)?);
            } else {
                println!("{}", describe(&rule));
                let scope = &rule.definition.scope;
                let mut parts = Vec::new();
                if let Some(account) = &scope.account {
                    parts.push(format!("account {account}"));
                }
                if let Some(sender) = &scope.sender {
                    parts.push(format!("from {sender}"));
                }
                if let Some(label) = &scope.label {
                    parts.push(crate::rule_labels::label_words(store, label).await?);
                }
                if let Some(plugin) = &scope.plugin {
                    parts.push(format!("plugin {plugin}"));
                }
                if let Some(chief) = scope.chief_filed {
                    parts.push(
                        if chief {
                            "filed by the chief"
                        } else {
                            "the sessions' own"
                        }
                        .into(),
                    );
                }
                let scope = if parts.is_empty() {
                    "every draft".to_owned()
                } else {
                    parts.join(", ")
                };
                println!("    scope: {scope}");
                println!(
                    "    conditions: {}",
                    serde_json::to_string(&rule.definition.conditions)?
                );
            }
        }
        RulesCommand::Move { id, to } => {
            let order = store.move_rule(*id, *to as usize - 1, actor).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&order)?);
            } else {
                for rule in &order {
                    println!("{}", describe(rule));
                }
            }
        }
        RulesCommand::Duplicate { id } => {
            let rule = store.duplicate_rule(*id, actor).await?;
            print_rule(
                &rule,
                json,
                "Copied at the end, in shadow: it records what it would do until you arm it.",
            )?;
        }
        RulesCommand::Remove { id } => {
            store.remove_rule(*id, actor).await?;
            if !json {
                println!("Rule {id} removed.");
            }
        }
        RulesCommand::Test { id } => {
            let rule = store.rule(*id).await?;
            let replayed = record::replay(store, &rule.definition).await?;
            print_record(&rule, &replayed, json)?;
        }
        RulesCommand::Arm {
            id,
            yes,
            with_no_record,
        } => {
            let rule = store.rule(*id).await?;
            let recorded = record::recorded(store, rule.id).await?;
            if !json {
                println!("{}", describe(&rule));
                println!("Its record: {}.", recorded.summary());
                for line in recorded.disagreements() {
                    println!(
                        "  item {} {:?}: it would {}, you {}",
                        line.item_id,
                        line.subject,
                        line.would,
                        owner_words(line.owner)
                    );
                }
            }
            if recorded.lines.is_empty() && !with_no_record {
                bail!(
                    "cannot arm rule {id}: {} (pass --with-no-record to arm it all the same)",
                    record::NO_RECORD.trim_end_matches('.')
                );
            }
            // A rule with a record asks (or takes --yes); one with none takes only
            // --with-no-record, which says the owner knows there is nothing to read.
            if !recorded.lines.is_empty()
                && !yes
                && !confirm("Arm it, so that it decides from now on?")?
            {
                bail!("cannot arm rule {id}: not confirmed (answer y, or pass --yes)");
            }
            let confirmation = if *with_no_record {
                record::ArmConfirmation::NoRecord
            } else {
                record::ArmConfirmation::Record
            };
            // Armed at the version whose record was shown: an edit meanwhile is refused.
            let rule = record::arm(store, *id, confirmation, actor).await?;
            print_rule(
                &rule,
                json,
                "Armed: it decides matching drafts from now on.",
            )?;
        }
        RulesCommand::Disarm { id } => {
            let rule = store.set_rule_mode(*id, RuleMode::Shadow, actor).await?;
            print_rule(&rule, json, "Back in shadow.")?;
        }
        RulesCommand::Hold { state } => {
            let on = state == "on";
            let undone = set_hold_everything(store, on, actor).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"holdEverything": on, "undone": undone})
                );
            } else if on {
                println!(
                    "Hold everything is on: no rule decides; {} rule decision(s) taken back.",
                    undone.len()
                );
            } else {
                println!("Hold everything is off: armed rules decide again.");
            }
        }
    }
    Ok(())
}

fn confirm(question: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("{question} [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn describe(rule: &Rule) -> String {
    let mode = match rule.mode {
        RuleMode::Shadow => "shadow",
        RuleMode::Armed => "ARMED",
    };
    let action = match &rule.definition.action {
        RuleAction::Approve => "approves".to_string(),
        RuleAction::Hold => "holds for you".to_string(),
        RuleAction::Reject { reason } => format!("rejects ({reason})"),
    };
    format!(
        "{:>3}  {:<6}  {} (version {}) {}",
        rule.id, mode, rule.definition.name, rule.version, action
    )
}

fn owner_words(did: record::OwnerDid) -> &'static str {
    match did {
        record::OwnerDid::Approved => "approved it",
        record::OwnerDid::Edited => "edited it",
        record::OwnerDid::Rejected => "rejected it",
        record::OwnerDid::ByRule => "let a rule decide it",
        record::OwnerDid::Undecided => "have not decided",
        record::OwnerDid::NotJudged => "decided a version it never judged",
    }
}

fn print_rule(rule: &Rule, json: bool, note: &str) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(rule)?);
    } else {
        println!("{}", describe(rule));
        println!("{note}");
    }
    Ok(())
}

fn print_record(rule: &Rule, replayed: &RuleRecord, json: bool) -> Result<()> {
    if json {
        println!(
            "{}",
            serde_json::json!({"rule": rule.id, "summary": replayed.summary(), "lines": replayed.lines})
        );
        return Ok(());
    }
    println!(
        "Rule {} over the history: {}.",
        rule.definition.name,
        replayed.summary()
    );
    for line in &replayed.lines {
        let mark = if line.agrees() { " " } else { "!" };
        println!(
            "{mark} item {:>4}  would {:<7}  you {:<22}  {}",
            line.item_id,
            line.would,
            owner_words(line.owner),
            line.subject
        );
    }
    Ok(())
}
