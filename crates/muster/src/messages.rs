//! Plugin messages as muster's `plugin_messages_list` shows them,
//! `GET /api/plugin/messages?state=…` (contract: `docs/muster.md`, "Routes and messages").

use crate::client::MusterClient;
use crate::error::Result;
use crate::listed::{read_each, Listed};
use crate::paths;
use crate::wire;

/// A message a plugin relayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginMessage {
    /// muster's message id.
    pub id: String,
    /// The plugin that relayed it.
    pub plugin: String,
    /// Its sender.
    pub from: String,
    /// Its subject.
    pub subject: String,
    /// muster's state for it (`relayed`, `send_failed`, …). The contract leaves the list open,
    /// so it is kept as muster wrote it.
    pub state: String,
    /// Its route ids, oldest first.
    pub routes: Vec<String>,
}

impl MusterClient {
    /// `GET /api/plugin/messages?state=…`: the messages in `state`, or all for `None`. Each
    /// message is read on its own, like [`MusterClient::list_drafts`]' drafts.
    pub async fn list_messages(&self, state: Option<&str>) -> Result<Listed<PluginMessage>> {
        let endpoint = format!("GET {}", paths::MESSAGES);
        let query: Vec<(&str, &str)> = state.map(|s| (paths::STATE_PARAM, s)).into_iter().collect();
        let list: Vec<serde_json::Value> = self
            .get_list(paths::MESSAGES, &query, paths::fields::MESSAGES, || {
                "the plugin messages".to_owned()
            })
            .await?;
        Ok(read_each(list, |raw| {
            wire::read_record::<wire::WireMessage, _>(raw, |m| m.into_public(&endpoint))
        }))
    }
}
