//! `countersign settings show|set`: the owner's settings, shared with the desktop app.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use countersign_core::store::{RemoteContentPolicy, SettingsChange};
use countersign_core::Store;

/// The `settings` subcommands.
#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// Print every setting.
    Show,
    /// Change one setting.
    Set {
        /// Which setting.
        name: SettingName,
        /// Its new value: seconds for `undo-window` (0–60), `on`/`off` for the switches,
        /// `block`/`allow` for `remote-content`.
        value: String,
    },
}

/// The settings `set` can change.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SettingName {
    /// Seconds an approval waits before it is sent.
    UndoWindow,
    /// Keep rejected Gmail drafts in Gmail.
    KeepRejectedGmailDrafts,
    /// Desktop notifications for refusals.
    Notifications,
    /// Remote content in HTML drafts.
    RemoteContent,
    /// Seconds a draft must rest unchanged before a rule may decide it.
    RuleSettle,
    /// A folder (a synced or removable drive) the record's checkpoint is written to at each
    /// export and daily; `off` for none.
    CheckpointFolder,
}

/// Run one `settings` subcommand.
pub async fn run(store: &Store, command: &SettingsCommand, actor: &str, json: bool) -> Result<()> {
    let mut settings = store.settings().await?;
    if let SettingsCommand::Set { name, value } = command {
        // The one setting named, on its own: nothing else is written back.
        let mut change = SettingsChange::default();
        match name {
            SettingName::CheckpointFolder => {
                let folder = match value.as_str() {
                    "off" | "none" | "" => None,
                    path => Some(std::path::absolute(path).with_context(|| {
                        format!("cannot use {path:?} as the checkpoint folder")
                    })?),
                };
                store
                    .set_checkpoint_folder(folder.as_deref(), actor)
                    .await?;
            }
            SettingName::UndoWindow => {
                change.undo_window_secs = Some(
                    value
                        .parse()
                        .with_context(|| format!("cannot use {value:?} as a number of seconds"))?,
                );
            }
            SettingName::RuleSettle => {
                change.rule_settle_secs = Some(
                    value
                        .parse()
                        .with_context(|| format!("cannot use {value:?} as a number of seconds"))?,
                );
            }
            SettingName::KeepRejectedGmailDrafts => {
                change.keep_rejected_gmail_drafts = Some(switch(value)?);
            }
            SettingName::Notifications => change.notifications = Some(switch(value)?),
            SettingName::RemoteContent => {
                change.remote_content = Some(match value.as_str() {
                    "block" => RemoteContentPolicy::Block,
                    "allow" => RemoteContentPolicy::Allow,
                    other => anyhow::bail!(
                        "cannot set remote-content to {other:?}: say `block` or `allow`"
                    ),
                })
            }
        }
        settings = store.update_settings(&change, actor).await?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&settings)?);
    } else {
        println!(
            "undo-window                 {} s",
            settings.undo_window_secs
        );
        println!(
            "keep-rejected-gmail-drafts  {}",
            on_off(settings.keep_rejected_gmail_drafts)
        );
        println!(
            "notifications               {}",
            on_off(settings.notifications)
        );
        let remote = match settings.remote_content {
            RemoteContentPolicy::Block => "block",
            RemoteContentPolicy::Allow => "allow",
        };
        println!("remote-content              {remote}");
        println!(
            "sending                     {}",
            if settings.paused { "paused" } else { "on" }
        );
        println!(
            "rule-settle                 {} s",
            settings.rule_settle_secs
        );
        let folder = store.checkpoint_folder().await?;
        println!(
            "checkpoint-folder           {}",
            folder.map_or("none".into(), |f| f.display().to_string())
        );
        println!(
            "rules                       {}",
            if settings.hold_everything {
                "held (Hold everything is on)"
            } else {
                "on"
            }
        );
    }
    Ok(())
}

fn switch(value: &str) -> Result<bool> {
    match value {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        other => anyhow::bail!("cannot use {other:?} as a switch: say `on` or `off`"),
    }
}

fn on_off(value: bool) -> &'static str {
    if value {
        "on"
    } else {
        "off"
    }
}
