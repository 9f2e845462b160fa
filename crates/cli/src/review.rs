//! What `show` adds to the mirror's rows: the review of the current version, rendered by core
//! exactly as the desktop app renders it, and the muster route chain.

use anyhow::Result;
use countersign_core::render::{
    render_message, render_plain_text, ParentMessage, RenderOptions, ReviewView,
};
use countersign_core::store::{Item, RemoteContentPolicy, RouteRecord};
use countersign_core::sync::muster::redraft_bound;
use countersign_core::{ItemState, Source, Store};
use serde::Serialize;

/// The review of one item's current version.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// Headers, bodies (text and sanitized HTML), attachments, flags and warnings.
    pub view: ReviewView,
    /// muster: every route of the message answered, oldest first (relayed → send_failed →
    /// redraft …). Empty for Gmail.
    pub routes: Vec<RouteRecord>,
    /// muster: how far the message is through the redraft bound, in words.
    pub redraft_bound: Option<String>,
    /// Why the item was refused (by the plugin, its check, Google or a conflict), newest.
    pub refusal_reason: Option<String>,
    /// Gmail: why this account cannot send, when its granted scopes do not allow it.
    pub send_refusal: Option<String>,
}

impl Review {
    /// Render the current version of `item` and gather its story.
    pub async fn load(store: &Store, item: &Item) -> Result<Review> {
        let account = store.get_account(&item.summary.account_id).await?;
        let version = store
            .version(item.summary.id, &item.summary.version)
            .await?;
        let settings = store.settings().await?;
        let parent: Option<ParentMessage> = item
            .answers_json
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok());
        let mut options = RenderOptions {
            allow_remote_content: settings.remote_content == RemoteContentPolicy::Allow,
            ..RenderOptions::default()
        };
        let (view, routes, bound, send_refusal) = match account.kind {
            Source::Gmail => {
                options.owner_domains = domain_of(&account.address).into_iter().collect();
                options.parent = parent;
                let view = render_message(version.content.bytes(), &options);
                let refusal = countersign_gmail::can_send(&account.granted_scopes)
                    .err()
                    .map(|s| s.to_string());
                (view, vec![], None, refusal)
            }
            Source::Muster => {
                let text = String::from_utf8_lossy(version.content.bytes());
                let view = render_plain_text(&text, parent.as_ref(), &options);
                let routes = match &item.muster.message_ref {
                    Some(message) => store.routes_for_message(&account.id, message).await?,
                    None => vec![],
                };
                (
                    view,
                    routes,
                    redraft_bound(item.muster.redraft_number),
                    None,
                )
            }
        };
        let refusal_reason = store
            .refusals_for_item(item.summary.id)
            .await?
            .last()
            .map(|r| r.reason.clone())
            .or_else(|| {
                (item.summary.state == ItemState::SendFailed)
                    .then(|| item.summary.state_reason.clone())
                    .flatten()
            });
        Ok(Review {
            view,
            routes,
            redraft_bound: bound,
            refusal_reason,
            send_refusal,
        })
    }
}

/// The domain of the owner's address (`owner@example.com` → `example.com`).
fn domain_of(address: &str) -> Option<String> {
    address
        .rsplit_once('@')
        .map(|(_, domain)| domain.trim().to_ascii_lowercase())
        .filter(|d| !d.is_empty())
}
