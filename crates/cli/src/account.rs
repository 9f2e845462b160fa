//! `countersign account …`: connect Gmail mailboxes and muster instances, list and remove them.
//!
//! Every secret stays inside core's stores: the muster password is read from stdin and handed
//! straight to `connect_muster`; OAuth tokens never leave the gmail crate. What is printed is
//! only *where* a secret is kept.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use countersign_core::services::GmailConnect;
use countersign_core::store::{Account, SecretStorage};
use countersign_core::{Source, Store};
use serde::Serialize;

/// The `account` subcommands.
#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Connect a Gmail mailbox with your own OAuth client (Google's consent page opens).
    AddGmail {
        /// The `client_secret.json` of your OAuth client ("Desktop app" type).
        #[arg(long, value_name = "FILE")]
        client_secret: PathBuf,
        /// Another Gmail API base (e.g. a local fake): `http://127.0.0.1:PORT/gmail/v1/users/me`.
        #[arg(long, value_name = "URL")]
        api_base: Option<String>,
        /// Do not open a browser: print the consent address on stderr instead.
        #[arg(long)]
        no_browser: bool,
    },
    /// Connect a muster instance with its owner password, read from stdin.
    AddMuster {
        /// The instance's base URL, e.g. `http://127.0.0.1:8105`.
        #[arg(long, value_name = "URL")]
        url: String,
        /// Read the password as one line from stdin (it is never echoed or logged).
        #[arg(long)]
        password_stdin: bool,
    },
    /// List the connected accounts.
    List,
    /// Remove an account: its secrets, its files and everything mirrored for it.
    Remove {
        /// The account id from `countersign account list`.
        id: String,
    },
}

/// One account as `account list` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AccountLine {
    /// The account as the mirror keeps it (flattened: one flat JSON object a line).
    #[serde(flatten)]
    account: Account,
    /// Where the secret is, in words (a path for the file storage).
    secret_location: String,
    /// Whether its service answered last time.
    online: bool,
    /// "live", "polling" (muster, followed by a running app), "offline" or "online".
    status: &'static str,
    last_sync_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    /// Why this account cannot send, when its scopes do not allow it (Gmail).
    send_refusal: Option<String>,
}

impl AccountLine {
    async fn load(store: &Store, data_dir: &Path, account: Account) -> Result<AccountLine> {
        let cursor = store.sync_cursor(&account.id).await?;
        Ok(AccountLine {
            secret_location: secret_location(data_dir, &account),
            send_refusal: countersign_core::actions::send_refusal(&account),
            account,
            online: cursor.online,
            status: cursor.status_word(),
            last_sync_at: cursor.last_sync_at,
            last_error: cursor.last_error,
        })
    }
}

/// Run one `account` subcommand.
pub async fn run(
    store: &Store,
    data_dir: &Path,
    command: &AccountCommand,
    json: bool,
) -> Result<ExitCode> {
    let services = crate::services(data_dir);
    match command {
        AccountCommand::AddGmail {
            client_secret,
            api_base,
            no_browser,
        } => {
            let secret_json = std::fs::read_to_string(client_secret).with_context(|| {
                format!(
                    "cannot read the OAuth client file {}",
                    client_secret.display()
                )
            })?;
            let mut connect = GmailConnect::google(secret_json, *no_browser);
            if let Some(base) = api_base {
                connect.tokeninfo_url = countersign_gmail::tokeninfo_url_for(base);
                connect.api_base = base.trim_end_matches('/').to_string();
            }
            let account = services
                .connect_gmail(store, connect)
                .await
                .context("cannot connect the Gmail account")?;
            added(store, data_dir, account, json).await?;
        }
        AccountCommand::AddMuster {
            url,
            password_stdin,
        } => {
            if !*password_stdin {
                bail!(
                    "cannot add the muster instance without its password: pass --password-stdin \
                     and write the password on stdin (it is never taken as an argument, where \
                     other users could see it)"
                );
            }
            let password = read_password_line()?;
            let account = services
                .connect_muster(store, url, &password)
                .await
                .with_context(|| format!("cannot add the muster instance {url}"))?;
            added(store, data_dir, account, json).await?;
        }
        AccountCommand::List => print_list(&lines(store, data_dir).await?, json)?,
        AccountCommand::Remove { id } => {
            services
                .remove_account(store, id)
                .await
                .with_context(|| format!("cannot remove account {id}"))?;
            crate::output::message(
                &format!("Removed account {id}, its stored secret and everything mirrored for it."),
                json,
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line from stdin without its line ending; nothing else of stdin is read.
fn read_password_line() -> Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the password from stdin")?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    if password.is_empty() {
        bail!("cannot add the muster instance: stdin gave an empty password");
    }
    Ok(password.to_string())
}

async fn added(store: &Store, data_dir: &Path, account: Account, json: bool) -> Result<()> {
    let line = AccountLine::load(store, data_dir, account).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&line)?);
    } else {
        let profile = &line.account.profile;
        println!(
            "Connected {} ({}, {}).",
            profile.address,
            profile.kind.as_str(),
            line.account.id
        );
        if profile.kind == Source::Gmail {
            println!("Granted scopes: {}", scopes_text(&profile.granted_scopes));
        }
        println!("Secret kept in {}.", line.secret_location);
    }
    if let Some(refusal) = &line.send_refusal {
        eprintln!("warning: {refusal}");
    }
    Ok(())
}

/// Every account with its status ("live", "polling", "offline" or "online") and last sync:
/// `countersign status` and `countersign account list`.
pub(crate) async fn lines(store: &Store, data_dir: &Path) -> Result<Vec<AccountLine>> {
    let mut lines = Vec::new();
    for account in store.list_accounts().await? {
        lines.push(AccountLine::load(store, data_dir, account).await?);
    }
    Ok(lines)
}

pub(crate) fn print_list(lines: &[AccountLine], json: bool) -> Result<()> {
    let empty = "No accounts: connect one with `countersign account add-gmail` or `add-muster`.";
    crate::output::list(lines, json, empty, |line| {
        let synced = line
            .last_sync_at
            .map(|t| format!("last sync {t}"))
            .unwrap_or_else(|| "never synced".into());
        let status = line.status;
        let profile = &line.account.profile;
        println!(
            "{}  {:<6}  {}  ({status}, {synced}, secret in {})",
            line.account.id,
            profile.kind.as_str(),
            profile.address,
            profile.secret_storage.as_str()
        );
        if profile.kind == Source::Gmail {
            println!("    scopes: {}", scopes_text(&profile.granted_scopes));
        }
        if let Some(reason) = &line.account.reconnect_reason {
            println!("    {reason}");
        }
        if let Some(error) = &line.last_error {
            println!("    last error: {error}");
        }
        if let Some(refusal) = &line.send_refusal {
            println!("    {refusal}");
        }
    })
}

fn scopes_text(scopes: &[String]) -> String {
    if scopes.is_empty() {
        "none".into()
    } else {
        scopes.join(" ")
    }
}

/// Where the account's secret is, in words. The file layout is the gmail crate's
/// (`gmail-tokens/<id>.json`) and core's (`muster-secrets/…`), named here only to tell the user.
fn secret_location(data_dir: &Path, account: &Account) -> String {
    match account.profile.secret_storage {
        SecretStorage::Keyring => "the OS keyring".into(),
        SecretStorage::File => {
            let dir = match account.profile.kind {
                Source::Gmail => data_dir.join("gmail-tokens"),
                Source::Muster => data_dir.join("muster-secrets"),
            };
            format!("a file readable only by you in {}", dir.display())
        }
        SecretStorage::None => "nowhere (nothing stored)".into(),
    }
}
