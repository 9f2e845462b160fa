//! Routes: a message's trips to sessions, `GET /api/plugin/routes?messageId=…` (contract:
//! `docs/muster.md`, "Routes and messages").

use crate::client::MusterClient;
use crate::error::Result;
use crate::listed::{read_each, Listed};
use crate::paths;
use crate::wire;

/// One trip of a message to a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// muster's route id.
    pub id: String,
    /// The message it carries.
    pub message_id: String,
    /// The session it went to (`chief` for the fallback).
    pub session: String,
    /// Where it stands.
    pub state: RouteState,
    /// muster's description, e.g. "redraft of 7 to inbox-chat".
    pub routed_via: String,
    /// The route this one replaces after a refusal.
    pub redraft_of: Option<String>,
    /// How many times the message has been handed back, this route included.
    pub redraft_count: u32,
    /// Why it ended, for `send_failed` (the plugin's reason).
    pub reason: Option<String>,
    /// RFC 3339 as muster wrote it.
    pub created_at: String,
    /// RFC 3339 as muster wrote it.
    pub updated_at: String,
}

/// A route's `state`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RouteState {
    /// The message went to the session.
    Relayed,
    /// The approved reply on it could not be sent (see [`Route::reason`]).
    SendFailed,
    /// The message was handed back to the session to write again.
    Redraft,
    /// The session did not answer in time.
    TimedOut,
    /// The redrafts were used up: the message went to the chief.
    Fallback,
    /// A state this client does not know, kept as muster wrote it.
    Unknown(String),
}

impl RouteState {
    /// The name muster uses.
    pub fn as_str(&self) -> &str {
        match self {
            RouteState::Relayed => "relayed",
            RouteState::SendFailed => "send_failed",
            RouteState::Redraft => "redraft",
            RouteState::TimedOut => "timed_out",
            RouteState::Fallback => "fallback",
            RouteState::Unknown(name) => name,
        }
    }
}

impl MusterClient {
    /// `GET /api/plugin/routes?messageId=…`: every route of one message, oldest first. Each
    /// route is read on its own, like [`MusterClient::list_drafts`]' drafts.
    pub async fn list_routes(&self, message_id: &str) -> Result<Listed<Route>> {
        let endpoint = format!("GET {}", paths::ROUTES);
        let list: Vec<serde_json::Value> = self
            .get_list(
                paths::ROUTES,
                &[(paths::MESSAGE_ID_PARAM, message_id)],
                paths::fields::ROUTES,
                || format!("the routes of message {message_id}"),
            )
            .await?;
        Ok(read_each(list, |raw| {
            wire::read_record::<wire::WireRoute, _>(raw, |r| r.into_public(&endpoint))
        }))
    }
}
