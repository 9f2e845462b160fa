//! The message a Gmail reply answers, as a fact: a received or sent message of the draft's own
//! thread, read with `threads.get` each time a new version of the draft is fetched.
//!
//! The agent writes every byte of its drafts, In-Reply-To and References included, and can
//! create and delete drafts at will (issue 33). So the parent is never looked up anywhere else
//! in the mailbox by its Message-ID (a bait draft the agent filed and deleted, or a message of
//! another conversation, would then decide who is "on the thread"), never a draft (the agent
//! writes those), and never a message in Trash or Spam. A Message-ID the draft names that is not
//! in its conversation is kept as a claim and flagged, and then nobody counts as on the thread.

use std::collections::HashMap;

use countersign_gmail::{GmailClient, MessageMetadata};

use crate::error::Result;
use crate::render::{render_message, Address, ParentMessage, RenderOptions};
use crate::store::{Store, ThreadMessage};

/// What the review lists of each message of a thread, and what its participants and threading
/// are read from. `threads.get?format=metadata` takes `metadataHeaders[]` ("When given and
/// format is METADATA, only include headers specified":
/// <https://developers.google.com/gmail/api/reference/rest/v1/users.threads/get>; 10 quota
/// units, <https://developers.google.com/gmail/api/reference/quota>).
const THREAD_HEADERS: [&str; 9] = [
    "From",
    "To",
    "Cc",
    "Reply-To",
    "Subject",
    "Date",
    "Message-ID",
    "In-Reply-To",
    "References",
];

/// Labels of messages that are not part of the conversation as its participants know it:
/// drafts (the agent writes them), and messages in Trash or Spam (a message in Trash is not a
/// conversation the owner is having, and Spam is written by strangers). `threads.get` returns
/// them all, each with its `labelIds` (discovery document, `Message.labelIds`).
const NOT_CONVERSATION: [&str; 3] = ["DRAFT", "TRASH", "SPAM"];

/// The Message-IDs a draft names in its threading headers.
#[derive(Clone, Debug, Default)]
pub(super) struct Claims {
    /// In-Reply-To, in order (the first is the parent).
    pub in_reply_to: Vec<String>,
    /// References, oldest first.
    pub references: Vec<String>,
}

impl Claims {
    /// The message the draft says it answers: its In-Reply-To, else the last of its
    /// References (RFC 5322 §3.6.4: the last identifier of References is the parent's).
    fn parent(&self) -> Option<&str> {
        self.in_reply_to
            .first()
            .or_else(|| self.references.last())
            .map(|id| bare_message_id(id))
            .filter(|id| !id.is_empty())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.parent().is_none()
    }
}

/// Conversations already read in this sync pass, by thread id: each thread is read once a pass
/// however many of its drafts changed, and again in the next pass that fetches a new version.
pub(super) type Conversations = HashMap<String, Vec<MessageMetadata>>;

/// The message a reply answers, read from the draft's own thread; `None` when the draft names
/// no parent at all.
pub(super) async fn answered_message(
    store: &Store,
    client: &GmailClient,
    account_id: &str,
    thread_id: Option<&str>,
    claims: &Claims,
    read: &mut Conversations,
) -> Result<Option<ParentMessage>> {
    let Some(claimed) = claims.parent() else {
        return Ok(None);
    };
    let conversation = match thread_id {
        Some(thread_id) => {
            if !read.contains_key(thread_id) {
                let messages = read_conversation(store, client, account_id, thread_id).await?;
                read.insert(thread_id.to_owned(), messages);
            }
            read[thread_id].clone()
        }
        None => Vec::new(),
    };
    // What the conversation itself vouches for: its messages' own Message-IDs (a parent must be
    // one of those) and the ids their own threading headers name (a reply's References may
    // rightly name earlier messages the owner never received).
    let own_ids: Vec<&str> = conversation
        .iter()
        .filter_map(|m| m.header("Message-ID"))
        .map(bare_message_id)
        .collect();
    let mut vouched: Vec<String> = own_ids.iter().map(|id| (*id).to_owned()).collect();
    for m in &conversation {
        for name in ["In-Reply-To", "References"] {
            for value in m
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                vouched.extend(message_ids(&value.1));
            }
        }
    }
    // In-Reply-To (and the parent, whichever header names it) must be a message of the
    // conversation; a References entry, a message of it or one its messages name.
    let mut not_in_conversation: Vec<String> = Vec::new();
    let in_reply_to = claims
        .in_reply_to
        .iter()
        .map(|id| (bare_message_id(id), false));
    let references = claims
        .references
        .iter()
        .map(|id| (bare_message_id(id), true));
    let parent = std::iter::once((claimed, false));
    for (id, is_reference) in in_reply_to.chain(references).chain(parent) {
        let vouched_for = if is_reference && id != claimed {
            vouched.iter().any(|v| v == id)
        } else {
            own_ids.contains(&id)
        };
        if !vouched_for && !not_in_conversation.iter().any(|n| n == id) {
            not_in_conversation.push(id.to_owned());
        }
    }
    let participants = participants(&conversation);
    let parent = conversation
        .iter()
        .find(|m| m.header("Message-ID").map(bare_message_id) == Some(claimed));
    let Some(parent) = parent else {
        // Only the claim is known: never whom that "parent" was from or to.
        return Ok(Some(ParentMessage {
            message_id: Some(claimed.to_owned()),
            participants,
            not_in_conversation,
            ..ParentMessage::default()
        }));
    };
    let raw = match store.thread_message_raw(account_id, &parent.id).await? {
        Some(raw) => raw,
        None => match client.get_message_raw(&parent.id).await {
            Ok(raw) => {
                store
                    .save_thread_message_raw(account_id, &parent.id, &raw)
                    .await?;
                raw
            }
            // Deleted between the two reads: read from its headers as the thread gave them.
            Err(countersign_gmail::Error::NotFound { .. }) => header_block(parent),
            Err(e) => return Err(e.into()),
        },
    };
    let mut answered = parent_from(&raw, claimed);
    answered.participants = participants;
    answered.not_in_conversation = not_in_conversation;
    Ok(Some(answered))
}

/// The thread's received and sent messages (oldest first), kept in the mirror for the review
/// in place of what was kept before: a message that left the thread (deleted, trashed, or a
/// draft that was sent and is now a message of its own) is forgotten.
async fn read_conversation(
    store: &Store,
    client: &GmailClient,
    account_id: &str,
    thread_id: &str,
) -> Result<Vec<MessageMetadata>> {
    let messages = match client.get_thread_metadata(thread_id, &THREAD_HEADERS).await {
        Ok(thread) => thread
            .messages
            .into_iter()
            .filter(|m| {
                !m.label_ids
                    .iter()
                    .any(|l| NOT_CONVERSATION.contains(&l.as_str()))
            })
            .collect(),
        // A thread whose messages are all gone.
        Err(countersign_gmail::Error::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let kept: Vec<ThreadMessage> = messages
        .iter()
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
    store.save_thread(account_id, thread_id, &kept).await?;
    Ok(messages)
}

/// Everyone on the conversation: From, To, Cc and Reply-To of each message, read by the
/// renderer's own header parser so both sides of the recipient check are read alike.
fn participants(conversation: &[MessageMetadata]) -> Vec<Address> {
    let mut out: Vec<Address> = Vec::new();
    for m in conversation {
        let view = render_message(&header_block(m), &RenderOptions::default());
        for a in view
            .from
            .into_iter()
            .chain(view.to)
            .chain(view.cc)
            .chain(view.reply_to)
        {
            if !out.iter().any(|o| o.email.eq_ignore_ascii_case(&a.email)) {
                out.push(a);
            }
        }
    }
    out
}

/// A message's headers as `threads.get` gave them, as a header block the renderer reads.
fn header_block(m: &MessageMetadata) -> Vec<u8> {
    let mut head = String::new();
    for (name, value) in &m.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// The `<…>` identifiers of a threading header's value.
fn message_ids(value: &str) -> Vec<String> {
    value
        .split(['<', '>', ' ', '\t', ',', '\r', '\n'])
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}

fn bare_message_id(id: &str) -> &str {
    id.trim().trim_start_matches('<').trim_end_matches('>')
}

/// The parent as the recipient check and the review need it, read from its bytes by the
/// renderer's own parser, so both sides of the check are read alike.
fn parent_from(raw: &[u8], bare_id: &str) -> ParentMessage {
    let view = render_message(raw, &RenderOptions::default());
    ParentMessage {
        from: view.from,
        to: view.to,
        cc: view.cc,
        reply_to: view.reply_to,
        // The id the thread gave it, which the review looks it up by.
        message_id: Some(bare_id.to_owned()),
        subject: view.subject,
        ..ParentMessage::default()
    }
}
