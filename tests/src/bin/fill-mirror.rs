//! `fill-mirror DIR [N]`: fills the mirror in DIR with N (default 10,000) pending Gmail drafts
//! through core's store API, for `scripts/measure-desktop.sh` to time the app's first painted
//! queue row and read its memory on a large queue.
//!
//! The account points at a closed loopback port, so the launched app's live sync of it fails
//! quietly (the account shows offline) instead of reaching anything.

use anyhow::{Context, Result};
use countersign_core::store::{
    DraftContent, MusterFields, NewAccount, ObservedDraft, SecretStorage,
};
use countersign_core::{ItemState, Source, Store};

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().context("usage: fill-mirror DIR [N]")?;
    let count: usize = match args.next() {
        Some(n) => n.parse().context("N must be a number")?,
        None => 10_000,
    };
    let store = Store::open(std::path::Path::new(&dir))
        .await
        .context("cannot open the mirror")?;
    let account = store
        .add_account(NewAccount {
            kind: Source::Gmail,
            label: "measure@example.com".into(),
            address: "measure@example.com".into(),
            api_base: "http://127.0.0.1:9/".into(),
            granted_scopes: vec![],
            secret_storage: SecretStorage::None,
        })
        .await?;
    for n in 0..count {
        let subject = format!("Re: Order {n}");
        let raw = format!(
            "From: measure@example.com\r\nTo: client{n}@example.com\r\nSubject: {subject}\r\n\
             Message-ID: <measure-{n}@agent.example>\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\nYour order {n} ships today.\r\n"
        );
        store
            .record_draft(&ObservedDraft {
                account_id: account.id.clone(),
                source: Source::Gmail,
                external_id: format!("r-{n}"),
                version: format!("m-{n}"),
                content: DraftContent::Raw(raw.into_bytes()),
                observed_state: ItemState::Pending,
                thread_id: None,
                subject,
                from_addr: "measure@example.com".into(),
                recipients: format!("client{n}@example.com"),
                snippet: format!("Your order {n} ships today."),
                muster: MusterFields::default(),
                answers_json: None,
                state_reason: None,
                attachments: vec![],
            })
            .await?;
    }
    println!("filled {dir} with {count} drafts");
    Ok(())
}
