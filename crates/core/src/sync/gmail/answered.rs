//! The message a Gmail reply answers: read from its thread (`threads.get` metadata, once per
//! thread, kept in the mirror) and its raw bytes (`messages.get`), or found by Message-ID
//! anywhere in the mailbox when it is not in the draft's thread.

use countersign_gmail::{GmailClient, MessageQuery};

use crate::error::Result;
use crate::render::{render_message, ParentMessage, RenderOptions};
use crate::store::{Store, ThreadMessage};

const PARENT_HEADERS: [&str; 6] = ["From", "To", "Cc", "Reply-To", "Message-ID", "Subject"];

/// What the review lists of each earlier message of a thread.
const THREAD_HEADERS: [&str; 4] = ["From", "Subject", "Date", "Message-ID"];

/// The message a reply answers, from its thread (read once per thread and kept) when it is
/// there, else found by Message-ID anywhere in the mailbox.
pub(super) async fn answered_message(
    store: &Store,
    client: &GmailClient,
    account_id: &str,
    thread_id: Option<&str>,
    parent_id: &str,
) -> Result<Option<ParentMessage>> {
    let bare = bare_message_id(parent_id);
    let Some(thread_id) = thread_id else {
        return fetch_parent(client, parent_id).await;
    };
    let known = store.thread_known(account_id, thread_id).await?;
    let mut parent = None;
    if known {
        parent = find_in_thread(store, account_id, thread_id, bare).await?;
    }
    // Not read yet, or the parent arrived after it was read: read the thread (again).
    if parent.is_none() {
        match client.get_thread_metadata(thread_id, &THREAD_HEADERS).await {
            Ok(thread) => {
                let messages: Vec<ThreadMessage> = thread
                    .messages
                    .iter()
                    .filter(|m| !m.label_ids.iter().any(|l| l == "DRAFT"))
                    .map(|m| ThreadMessage {
                        gmail_id: m.id.clone(),
                        rfc822_message_id: m
                            .header("Message-ID")
                            .map(|v| bare_message_id(v).to_owned()),
                        from: m.header("From").unwrap_or_default().to_owned(),
                        subject: m.header("Subject").unwrap_or_default().to_owned(),
                        date: m.header("Date").map(str::to_owned),
                        snippet: m.snippet.clone(),
                        has_raw: false,
                    })
                    .collect();
                store.save_thread(account_id, thread_id, &messages).await?;
                parent = find_in_thread(store, account_id, thread_id, bare).await?;
            }
            Err(countersign_gmail::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let Some(parent) = parent else {
        return fetch_parent(client, parent_id).await;
    };
    let raw = match store
        .thread_message_raw(account_id, &parent.gmail_id)
        .await?
    {
        Some(raw) => raw,
        None => match client.get_message_raw(&parent.gmail_id).await {
            Ok(raw) => {
                store
                    .save_thread_message_raw(account_id, &parent.gmail_id, &raw)
                    .await?;
                raw
            }
            Err(countersign_gmail::Error::NotFound { .. }) => {
                return fetch_parent(client, parent_id).await
            }
            Err(e) => return Err(e.into()),
        },
    };
    Ok(Some(parent_from(&raw, bare)))
}

async fn find_in_thread(
    store: &Store,
    account_id: &str,
    thread_id: &str,
    bare_id: &str,
) -> Result<Option<ThreadMessage>> {
    Ok(store
        .thread_messages(account_id, thread_id)
        .await?
        .into_iter()
        .find(|m| m.rfc822_message_id.as_deref() == Some(bare_id)))
}

fn bare_message_id(id: &str) -> &str {
    id.trim().trim_start_matches('<').trim_end_matches('>')
}

/// The message a reply answers, found by its Message-ID anywhere in the mailbox.
async fn fetch_parent(client: &GmailClient, message_id: &str) -> Result<Option<ParentMessage>> {
    let bare = bare_message_id(message_id);
    let found = client
        .list_messages(&MessageQuery {
            q: Some(format!("rfc822msgid:{bare}")),
            ..MessageQuery::default()
        })
        .await?;
    let Some(first) = found.first() else {
        return Ok(None);
    };
    let metadata = match client
        .get_message_metadata(&first.id, &PARENT_HEADERS)
        .await
    {
        Ok(metadata) => metadata,
        Err(countersign_gmail::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // Let the renderer's own header parser read the addresses, so both sides of the
    // recipient check are read the same way.
    let mut head = String::new();
    for (name, value) in &metadata.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    Ok(Some(parent_from(head.as_bytes(), bare)))
}

/// The parent as the recipient check and the review need it, read from its bytes (or its
/// header block) by the renderer's own parser, so both sides of the check are read alike.
fn parent_from(raw: &[u8], bare_id: &str) -> ParentMessage {
    let view = render_message(raw, &RenderOptions::default());
    ParentMessage {
        from: view.from,
        to: view.to,
        cc: view.cc,
        reply_to: view.reply_to,
        message_id: view.message_id.or_else(|| Some(bare_id.to_owned())),
        subject: view.subject,
    }
}
