//! The JSON muster sends, exactly as the contract (`docs/muster.md`) writes it, and its
//! conversion into this crate's public types. Fields the contract always sends are required;
//! fields it sends as "… or null" may also be missing (serde reads a missing `Option` as
//! `None`; one read through `deserialize_with` needs `default` for that). Counts may be missing:
//! muster's Go structs leave a zero out under `omitempty`, so a missing count is zero. A state
//! this client does not know is kept as muster wrote it (`Unknown`), never guessed at.

use serde::{Deserialize, Serialize};

use crate::drafts::{CheckState, DraftState, InReplyTo, PluginDraft, SendResult};
use crate::error::{Error, Result};
use crate::messages::PluginMessage;
use crate::routes::{Route, RouteState};

/// `{"error": "…", "code": "…", "draft": {…}}`: every error answer (most have only `error`).
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorBody {
    pub error: Option<String>,
    pub code: Option<String>,
    pub draft: Option<Draft>,
}

/// `POST …/decide` 200.
#[derive(Debug, Deserialize)]
pub(crate) struct Decided {
    pub draft: Draft,
    pub note: Option<String>,
}

/// `POST …/decide` body.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecideRequest<'a> {
    pub decision: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
    pub expected_updated_at: &'a str,
}

/// One plugin reply draft.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Draft {
    #[serde(deserialize_with = "id")]
    pub id: String,
    pub plugin: String,
    /// Absent or null for a draft the chief filed itself (muster's `reply_draft`).
    #[serde(default, deserialize_with = "optional_id")]
    pub route_id: Option<String>,
    pub session: String,
    #[serde(deserialize_with = "id")]
    pub message_id: String,
    pub state: String,
    pub check_state: String,
    pub check_detail: Option<String>,
    pub text: String,
    pub in_reply_to: DraftInReplyTo,
    #[serde(default, deserialize_with = "optional_id")]
    pub redraft_of: Option<String>,
    /// Go leaves a zero out under `omitempty`: missing reads as 0.
    #[serde(default)]
    pub redraft_number: u32,
    pub result: Option<DraftResult>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DraftInReplyTo {
    pub from: String,
    pub subject: String,
    pub snippet: Option<String>,
    pub received_at: Option<String>,
    pub text: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct DraftResult {
    pub ok: bool,
    pub detail: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireRoute {
    #[serde(deserialize_with = "id")]
    pub id: String,
    #[serde(deserialize_with = "id")]
    pub message_id: String,
    pub session: String,
    pub state: String,
    pub routed_via: Option<String>,
    #[serde(default, deserialize_with = "optional_id")]
    pub redraft_of: Option<String>,
    /// Go leaves a zero out under `omitempty`: missing reads as 0.
    #[serde(default)]
    pub redraft_count: u32,
    pub reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireMessage {
    #[serde(deserialize_with = "id")]
    pub id: String,
    pub plugin: String,
    pub from: String,
    pub subject: String,
    pub state: String,
    #[serde(default, deserialize_with = "id_list")]
    pub routes: Vec<String>,
}

/// The data of an event frame: `{"id": "…"}`.
#[derive(Debug, Deserialize)]
pub(crate) struct EventData {
    #[serde(deserialize_with = "id")]
    pub id: String,
}

/// An id as muster writes it: a JSON number (its ids are `int64`) or, as the contract first
/// wrote them, a string. Kept as text either way.
struct IdText;

impl<'de> serde::de::Visitor<'de> for IdText {
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an id (a JSON number or string)")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
}

/// [`IdText`] or null.
struct OptionalIdText;

impl<'de> serde::de::Visitor<'de> for OptionalIdText {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an id (a JSON number or string) or null")
    }

    fn visit_none<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(IdText).map(Some)
    }
}

fn id<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    d.deserialize_any(IdText)
}

fn optional_id<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    d.deserialize_option(OptionalIdText)
}

/// A list of ids; `null` (Go's nil slice) is the empty list.
fn id_list<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    struct Id(#[serde(deserialize_with = "id")] String);
    Ok(Option::<Vec<Id>>::deserialize(d)?
        .unwrap_or_default()
        .into_iter()
        .map(|i| i.0)
        .collect())
}

/// Read one record of a list: its serde error, or the problem [`Error::BadResponse`] names, is
/// the reason it could not be read.
pub(crate) fn read_record<W: serde::de::DeserializeOwned, T>(
    raw: serde_json::Value,
    public: impl FnOnce(W) -> Result<T>,
) -> std::result::Result<T, String> {
    let wire: W = serde_json::from_value(raw).map_err(|e| e.to_string())?;
    public(wire).map_err(|e| match e {
        Error::BadResponse { problem, .. } => problem,
        other => other.to_string(),
    })
}

fn required(endpoint: &str, field: &str, value: String) -> Result<String> {
    if value.is_empty() {
        Err(Error::bad(endpoint, format!("`{field}` is empty")))
    } else {
        Ok(value)
    }
}

impl Draft {
    pub(crate) fn into_public(self, endpoint: &str) -> Result<PluginDraft> {
        let state = match self.state.as_str() {
            "pending" => DraftState::Pending,
            "approved" => DraftState::Approved,
            "rejected" => DraftState::Rejected,
            "sent" => DraftState::Sent,
            "failed" => DraftState::Failed,
            _ => DraftState::Unknown(self.state),
        };
        let check = match self.check_state.as_str() {
            "none" => CheckState::None,
            "awaiting" => CheckState::Awaiting,
            "sendable" => CheckState::Sendable,
            "refused" => CheckState::Refused,
            _ => CheckState::Unknown(self.check_state),
        };
        Ok(PluginDraft {
            id: required(endpoint, "id", self.id)?,
            plugin: self.plugin,
            route_id: self.route_id.filter(|r| !r.is_empty()),
            session: self.session,
            message_id: required(endpoint, "messageId", self.message_id)?,
            state,
            check,
            check_detail: self.check_detail,
            text: self.text,
            in_reply_to: InReplyTo {
                from: self.in_reply_to.from,
                subject: self.in_reply_to.subject,
                snippet: self.in_reply_to.snippet.unwrap_or_default(),
                received_at: self.in_reply_to.received_at,
                text: self.in_reply_to.text,
            },
            redraft_of: self.redraft_of.filter(|s| !s.is_empty()),
            redraft_number: self.redraft_number,
            result: self.result.map(|r| SendResult {
                ok: r.ok,
                detail: r.detail,
            }),
            created_at: self.created_at,
            updated_at: required(endpoint, "updatedAt", self.updated_at)?,
        })
    }
}

impl WireRoute {
    pub(crate) fn into_public(self, endpoint: &str) -> Result<Route> {
        let state = match self.state.as_str() {
            "relayed" => RouteState::Relayed,
            "send_failed" => RouteState::SendFailed,
            "redraft" => RouteState::Redraft,
            "timed_out" => RouteState::TimedOut,
            "fallback" => RouteState::Fallback,
            _ => RouteState::Unknown(self.state),
        };
        Ok(Route {
            id: required(endpoint, "id", self.id)?,
            message_id: self.message_id,
            session: self.session,
            state,
            routed_via: self.routed_via.unwrap_or_default(),
            redraft_of: self.redraft_of.filter(|s| !s.is_empty()),
            redraft_count: self.redraft_count,
            reason: self.reason,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

impl WireMessage {
    pub(crate) fn into_public(self, endpoint: &str) -> Result<PluginMessage> {
        Ok(PluginMessage {
            id: required(endpoint, "id", self.id)?,
            plugin: self.plugin,
            from: self.from,
            subject: self.subject,
            state: self.state,
            routes: self.routes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAFT: &str = r#"{
      "id": "42", "plugin": "gmail-relay", "routeId": "7", "session": "inbox-chat",
      "messageId": "m-19", "state": "failed",
      "checkState": "none", "checkDetail": null,
      "text": "the reply",
      "inReplyTo": {"from": "ana@example.com", "subject": "Invoice", "snippet": "…", "receivedAt": "2026-12-01T07:00:00Z"},
      "redraftOf": null, "redraftNumber": 0,
      "result": {"ok": false, "detail": "recipient mailbox full"},
      "createdAt": "2026-12-01T07:00:00.1Z", "updatedAt": "2026-12-01T07:00:00.2Z"
    }"#;

    #[test]
    fn the_contracts_example_draft_is_read_as_written() {
        let draft: Draft = serde_json::from_str(DRAFT).unwrap();
        let draft = draft.into_public("GET x").unwrap();
        assert_eq!(draft.state, DraftState::Failed);
        assert_eq!(draft.route_id.as_deref(), Some("7"));
        assert_eq!(
            draft.result.unwrap().detail.as_deref(),
            Some("recipient mailbox full")
        );
        assert_eq!(draft.updated_at, "2026-12-01T07:00:00.2Z");
    }

    #[test]
    fn ids_written_as_numbers_are_read_as_text() {
        let json = DRAFT
            .replace(r#""id": "42""#, r#""id": 42"#)
            .replace(r#""routeId": "7""#, r#""routeId": 7"#)
            .replace(r#""redraftOf": null"#, r#""redraftOf": 41"#);
        let draft: Draft = serde_json::from_str(&json).unwrap();
        let draft = draft.into_public("GET x").unwrap();
        assert_eq!(
            (
                draft.id.as_str(),
                draft.route_id.as_deref(),
                draft.redraft_of.as_deref()
            ),
            ("42", Some("7"), Some("41"))
        );
    }

    #[test]
    fn a_draft_the_chief_filed_has_no_route() {
        for form in [r#""routeId": null, "#, ""] {
            let json = DRAFT.replace(r#""routeId": "7", "#, form);
            let draft: Draft = serde_json::from_str(&json).unwrap();
            assert_eq!(draft.into_public("GET x").unwrap().route_id, None);
        }
    }

    #[test]
    fn an_id_of_another_type_is_refused_by_name() {
        let json = DRAFT.replace(r#""id": "42""#, r#""id": true"#);
        let e = serde_json::from_str::<Draft>(&json).unwrap_err();
        assert!(
            e.to_string().contains("an id (a JSON number or string)"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_state_is_kept_as_muster_wrote_it() {
        let json = DRAFT
            .replace(r#""state": "failed""#, r#""state": "exploded""#)
            .replace(r#""checkState": "none""#, r#""checkState": "pondering""#);
        let draft: Draft = serde_json::from_str(&json).unwrap();
        let draft = draft.into_public("GET /api/plugin/drafts").unwrap();
        assert_eq!(draft.state, DraftState::Unknown("exploded".into()));
        assert_eq!(draft.check, CheckState::Unknown("pondering".into()));
    }

    #[test]
    fn a_count_go_left_out_reads_as_zero() {
        let json = DRAFT.replace(r#""redraftNumber": 0,"#, "");
        let draft: Draft = serde_json::from_str(&json).unwrap();
        assert_eq!(draft.into_public("GET x").unwrap().redraft_number, 0);
    }
}
