//! What a draft answers, for the review: the parent message rendered in full (Gmail: its raw
//! bytes kept during sync; muster: `inReplyTo.text` when muster gives it) with the same
//! pipeline as the draft — sanitized, remote content blocked, attachments listed — or only its
//! snippet, said so; and for Gmail the thread's other messages (From, Date, snippet).

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Serialize;

use crate::domain::Source;
use crate::error::Result;
use crate::render::{render_message, render_plain_text, Address, RenderOptions, ReviewView};
use crate::store::{Item, Store, ThreadMessage};
use crate::sync::muster::MusterAnswers;

/// The message a draft answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AnsweredMessage {
    /// Its sender.
    pub from: Vec<Address>,
    /// Its subject.
    pub subject: Option<String>,
    /// When it was written (its Date, RFC 3339) or arrived (muster), when known.
    pub date: Option<String>,
    /// The whole message rendered (remote content always blocked); `None` when only the
    /// snippet is known.
    pub view: Option<ReviewView>,
    /// The first words of it.
    pub snippet: String,
    /// Only `snippet` is known, not the whole message: the review must say so.
    pub snippet_only: bool,
    /// Gmail: the thread's other messages, oldest first.
    pub thread: Vec<ThreadMessage>,
}

/// What `item` answers, from the mirror only (it works offline).
pub async fn answered_message(store: &Store, item: &Item) -> Result<Option<AnsweredMessage>> {
    let Some(json) = item.answers_json.as_deref() else {
        return Ok(None);
    };
    match item.summary.source {
        Source::Muster => Ok(muster_answered(json)),
        Source::Gmail => gmail_answered(store, item, json).await,
    }
}

fn never_remote() -> RenderOptions {
    RenderOptions::default()
}

fn muster_answered(json: &str) -> Option<AnsweredMessage> {
    let answers: MusterAnswers = serde_json::from_str(json).ok()?;
    let view = answers
        .text
        .as_deref()
        .map(|text| render_plain_text(text, None, &never_remote()));
    Some(AnsweredMessage {
        from: answers.from,
        subject: answers.subject,
        date: answers.received_at,
        snippet_only: view.is_none(),
        view,
        snippet: answers.snippet,
        thread: Vec::new(),
    })
}

async fn gmail_answered(store: &Store, item: &Item, json: &str) -> Result<Option<AnsweredMessage>> {
    let Ok(parent) = serde_json::from_str::<crate::render::ParentMessage>(json) else {
        return Ok(None);
    };
    // A Message-ID the draft names but its conversation does not hold: the review says so in a
    // flag, and shows no "Answers" of the agent's choosing.
    if parent.is_claim_only() {
        return Ok(None);
    }
    let account = &item.summary.account_id;
    let thread = match item.thread_id.as_deref() {
        Some(thread_id) => store.thread_messages(account, thread_id).await?,
        None => Vec::new(),
    };
    let in_thread = thread
        .iter()
        .find(|m| m.rfc822_message_id.is_some() && m.rfc822_message_id == parent.message_id);
    let raw = match in_thread {
        Some(m) => store.thread_message_raw(account, &m.gmail_id).await?,
        None => None,
    };
    let view = raw.map(|raw| render_message(&raw, &never_remote()));
    let snippet = in_thread.map(|m| m.snippet.clone()).unwrap_or_default();
    let parent_gmail_id = in_thread.map(|m| m.gmail_id.clone());
    Ok(Some(AnsweredMessage {
        from: parent.from,
        subject: parent.subject,
        date: view.as_ref().and_then(|v| v.date.clone()),
        snippet_only: view.is_none(),
        view,
        snippet,
        thread: thread
            .into_iter()
            .filter(|m| Some(&m.gmail_id) != parent_gmail_id.as_ref())
            .collect(),
    }))
}

/// The draft in Gmail's web app, in the account's own browser session: Gmail opens a draft by
/// its *message* id (the version), `#drafts?compose=<message id>`, and `/mail/u/<address>/`
/// picks the signed-in account by address rather than by a position that differs per browser.
pub fn gmail_draft_link(account_address: &str, message_id: &str) -> String {
    format!(
        "https://mail.google.com/mail/u/{}/#drafts?compose={}",
        url_component(account_address),
        url_component(message_id)
    )
}

/// The Gmail link of item `item_id`; `None` for a muster item.
pub async fn gmail_link_of(store: &Store, item_id: i64) -> Result<Option<String>> {
    let item = store.get_item(item_id).await?;
    if item.summary.source != Source::Gmail {
        return Ok(None);
    }
    let account = store.get_account(&item.summary.account_id).await?;
    Ok(Some(gmail_draft_link(
        &account.profile.address,
        &item.summary.version,
    )))
}

/// What stays as it is in a Gmail link's account and draft parts: RFC 3986's unreserved
/// characters, and `@` and `+` as Gmail writes addresses there.
const LINK_SAFE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'@')
    .remove(b'+');

fn url_component(text: &str) -> String {
    utf8_percent_encode(text, LINK_SAFE).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gmail_link_names_the_account_and_the_draft_message() {
        assert_eq!(
            gmail_draft_link("owen@example.com", "18c2f0a9b1d3e4f5"),
            "https://mail.google.com/mail/u/owen@example.com/#drafts?compose=18c2f0a9b1d3e4f5"
        );
        assert_eq!(
            gmail_draft_link("o w/en@example.com", "a#b"),
            "https://mail.google.com/mail/u/o%20w%2Fen@example.com/#drafts?compose=a%23b"
        );
    }
}
