//! Plugin reply drafts: `GET /api/plugin/drafts?state=…`, `GET /api/plugin/drafts/{id}` and
//! `POST /api/plugin/drafts/{id}/decide` (contract: `docs/muster.md`, "Drafts").

use reqwest::{Method, StatusCode};

use crate::client::{decode, error_from, read_json, MusterClient};
use crate::error::{Error, Result};
use crate::listed::{read_each, Listed};
use crate::paths;
use crate::wire;

/// A reply a session drafted for a message a plugin relayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginDraft {
    /// muster's draft id.
    pub id: String,
    /// The plugin that relayed the message and will send the reply.
    pub plugin: String,
    /// The route the draft was written on; `None` for a draft the chief filed itself (muster's
    /// `reply_draft`), which needs the same approval but has no route chain.
    pub route_id: Option<String>,
    /// The session that wrote it.
    pub session: String,
    /// The message it answers.
    pub message_id: String,
    /// Where the draft stands.
    pub state: DraftState,
    /// The plugin's pre-check (`draft_checks` plugins only).
    pub check: CheckState,
    /// The plugin's words on its check, if any.
    pub check_detail: Option<String>,
    /// The reply, plain text.
    pub text: String,
    /// The message being answered.
    pub in_reply_to: InReplyTo,
    /// The draft this one was written to replace, when it is a redraft.
    pub redraft_of: Option<String>,
    /// How many times the message had been handed back when this was written (0 = first try).
    pub redraft_number: u32,
    /// What the plugin reported after trying to send it; `None` until it did.
    pub result: Option<SendResult>,
    /// When it was written, RFC 3339 as muster wrote it.
    pub created_at: String,
    /// The draft's version: RFC 3339 as muster wrote it. Pass it back verbatim as
    /// `expected_updated_at` to [`MusterClient::decide`].
    pub updated_at: String,
}

/// The message a draft answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InReplyTo {
    /// Its sender.
    pub from: String,
    /// Its subject.
    pub subject: String,
    /// The start of its text.
    pub snippet: String,
    /// When it arrived, RFC 3339, if muster knows.
    pub received_at: Option<String>,
    /// Its full text, when muster gives it (optional in the contract); otherwise only the
    /// snippet is known.
    pub text: Option<String>,
}

/// What the plugin reported after trying to send an approved draft.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendResult {
    /// Whether it was sent.
    pub ok: bool,
    /// The plugin's reason (why it refused, or a note on the send).
    pub detail: Option<String>,
}

/// A draft's `state`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DraftState {
    /// Waiting for the owner.
    Pending,
    /// Approved: queued at the plugin, not yet sent.
    Approved,
    /// Rejected by the owner, or refused by the plugin's check.
    Rejected,
    /// The plugin sent it.
    Sent,
    /// The plugin could not send it (`result.ok == false`); the message was handed back.
    Failed,
    /// A state this client does not know (a newer muster's), kept as muster wrote it: shown,
    /// never guessed at.
    Unknown(String),
}

impl DraftState {
    /// The name muster uses, e.g. for `?state=`.
    pub fn as_str(&self) -> &str {
        match self {
            DraftState::Pending => "pending",
            DraftState::Approved => "approved",
            DraftState::Rejected => "rejected",
            DraftState::Sent => "sent",
            DraftState::Failed => "failed",
            DraftState::Unknown(name) => name,
        }
    }
}

/// A draft's `checkState`: the plugin's pre-check, for plugins minted with `draft_checks`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CheckState {
    /// The plugin does not check drafts.
    None,
    /// The plugin has not checked it yet: it can only be rejected.
    Awaiting,
    /// The plugin says it may be sent: the owner decides.
    Sendable,
    /// The plugin refused it: rejected for good.
    Refused,
    /// A check state this client does not know, kept as muster wrote it.
    Unknown(String),
}

impl CheckState {
    /// The name muster uses.
    pub fn as_str(&self) -> &str {
        match self {
            CheckState::None => "none",
            CheckState::Awaiting => "awaiting",
            CheckState::Sendable => "sendable",
            CheckState::Refused => "refused",
            CheckState::Unknown(name) => name,
        }
    }
}

/// The owner's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Let the plugin send it.
    Approve,
    /// Do not send it; the message is handed back.
    Reject,
}

impl Decision {
    /// The name muster uses in the `decision` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        }
    }

    /// Whether a draft in `state` carries this decision.
    fn is_reflected_by(self, state: &DraftState) -> bool {
        match self {
            Decision::Approve => matches!(
                state,
                DraftState::Approved | DraftState::Sent | DraftState::Failed
            ),
            Decision::Reject => *state == DraftState::Rejected,
        }
    }
}

/// What muster said to a decision. Each contract answer has its own variant; none is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecideOutcome {
    /// 200: accepted. For an approval this means queued at the plugin, not sent.
    Queued {
        /// The draft after the decision.
        draft: PluginDraft,
        /// muster's note for the owner, e.g. "Queued: the plugin sends it and a refusal comes
        /// back here."
        note: String,
    },
    /// 409 `draft_unchecked`: the plugin has not checked it yet; only rejecting is possible.
    Unchecked {
        /// muster's own sentence (its `error`), for the owner.
        message: String,
    },
    /// 409 `already_decided`. `same_decision`: the draft already carries this decision (a
    /// repeat, e.g. after a lost answer: treat as done); otherwise it was decided elsewhere.
    AlreadyDecided {
        /// The draft as it is now.
        draft: PluginDraft,
        /// Whether its decision is the one just asked for.
        same_decision: bool,
    },
    /// 409 `check_refused`: the plugin refused it; it can never be approved.
    CheckRefused {
        /// muster's own sentence (its `error`), for the owner.
        message: String,
    },
    /// 412 `stale`: the draft changed since it was reviewed; review it again.
    Stale {
        /// The draft as it is now.
        draft: PluginDraft,
    },
    /// 404: no such draft.
    NotFound,
}

/// muster's `error` text of a coded answer, or its code's meaning when it sent none.
fn musters_sentence(error: Option<String>) -> String {
    error
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| "muster gave no reason".to_owned())
}

/// An id muster could have minted: anything else cannot name a draft and is not sent.
fn usable_id(id: &str) -> bool {
    !id.is_empty() && id != "." && id != ".."
}

impl MusterClient {
    /// `GET /api/plugin/drafts?state=…`: the drafts in `state`, or all of them for `None`.
    /// Each draft is read on its own: one this client cannot read (a field missing or of
    /// another type) is in [`Listed::unreadable`] and the others are returned as usual.
    pub async fn list_drafts(&self, state: Option<DraftState>) -> Result<Listed<PluginDraft>> {
        let endpoint = format!("GET {}", paths::DRAFTS);
        let filter = state.as_ref().map_or("all", DraftState::as_str);
        let list: Vec<serde_json::Value> = self
            .get_list(
                paths::DRAFTS,
                &[(paths::STATE_PARAM, filter)],
                paths::fields::DRAFTS,
                || "the plugin drafts".to_owned(),
            )
            .await?;
        Ok(read_each(list, |raw| {
            wire::read_record::<wire::Draft, _>(raw, |d| d.into_public(&endpoint))
        }))
    }

    /// `GET /api/plugin/drafts/{id}`. A missing draft is [`Error::NotFound`].
    pub async fn get_draft(&self, id: &str) -> Result<PluginDraft> {
        let not_found = || Error::NotFound {
            what: format!("draft {id}"),
        };
        if !usable_id(id) {
            return Err(not_found());
        }
        let path = paths::draft(id);
        let endpoint = format!("GET {}/{{id}}", paths::DRAFTS);
        let draft: wire::Draft = match self.get_json(&path, &[], || format!("draft {id}")).await {
            Err(Error::NoPluginApi) if self.has_plugin_api().await? => return Err(not_found()),
            answer => answer?,
        };
        draft.into_public(&endpoint)
    }

    /// Whether the plugin-draft routes exist. muster answers a record it does not have on a
    /// per-id route with Go's `http.NotFound` — the same plain-text `404 page not found` as a
    /// route it does not have — so a per-id 404 is read as "gone" only when the collection
    /// route still answers.
    async fn has_plugin_api(&self) -> Result<bool> {
        let probe: Result<serde_json::Value> = self
            .get_json(
                paths::DRAFTS,
                &[(paths::STATE_PARAM, DraftState::Pending.as_str())],
                || "the plugin drafts".to_owned(),
            )
            .await;
        match probe {
            Ok(_) => Ok(true),
            Err(Error::NoPluginApi) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `POST /api/plugin/drafts/{id}/decide` with the `updatedAt` the owner reviewed.
    ///
    /// A [`Error::Transport`] with `request_sent: true` means the outcome is unknown: re-read
    /// the draft (or decide again: a repeat answers [`DecideOutcome::AlreadyDecided`] with
    /// `same_decision`), never assume either way.
    pub async fn decide(
        &self,
        id: &str,
        decision: Decision,
        note: Option<&str>,
        expected_updated_at: &str,
    ) -> Result<DecideOutcome> {
        if !usable_id(id) {
            return Ok(DecideOutcome::NotFound);
        }
        let endpoint = format!("POST {}/{{id}}/decide", paths::DRAFTS);
        let body = wire::DecideRequest {
            decision: decision.as_str(),
            note: note.filter(|n| !n.trim().is_empty()),
            expected_updated_at,
        };
        let body = serde_json::to_vec(&body).map_err(|e| Error::bad(&endpoint, e.to_string()))?;
        let response = match self
            .send(
                Method::POST,
                &paths::decide(id),
                |r| {
                    r.header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body.clone())
                },
                Some(self.inner.request_timeout),
            )
            .await
        {
            // A plain-text 404 changed nothing: muster refuses an unknown id before acting.
            Err(Error::NoPluginApi) if self.has_plugin_api().await? => {
                return Ok(DecideOutcome::NotFound)
            }
            answer => answer?,
        };
        let status = response.status();
        match status {
            StatusCode::OK => {
                let decided: wire::Decided = read_json(&endpoint, response).await?;
                Ok(DecideOutcome::Queued {
                    draft: decided.draft.into_public(&endpoint)?,
                    note: decided.note.unwrap_or_default(),
                })
            }
            StatusCode::NOT_FOUND => Ok(DecideOutcome::NotFound),
            StatusCode::CONFLICT | StatusCode::PRECONDITION_FAILED => {
                let bytes = response.bytes().await.map_err(|e| Error::transport(&e))?;
                let wire::ErrorBody {
                    error,
                    code,
                    draft: body_draft,
                } = decode(&endpoint, &bytes)?;
                let code = code.unwrap_or_default();
                let take_draft = |draft: Option<wire::Draft>| {
                    draft
                        .ok_or_else(|| {
                            Error::bad(
                                &endpoint,
                                format!("{status} `{code}` without the `{}`", paths::fields::DRAFT),
                            )
                        })?
                        .into_public(&endpoint)
                };
                match (status, code.as_str()) {
                    (StatusCode::CONFLICT, paths::codes::DRAFT_UNCHECKED) => {
                        Ok(DecideOutcome::Unchecked {
                            message: musters_sentence(error),
                        })
                    }
                    (StatusCode::CONFLICT, paths::codes::CHECK_REFUSED) => {
                        Ok(DecideOutcome::CheckRefused {
                            message: musters_sentence(error),
                        })
                    }
                    (StatusCode::CONFLICT, paths::codes::ALREADY_DECIDED) => {
                        let draft = take_draft(body_draft)?;
                        let same_decision = decision.is_reflected_by(&draft.state);
                        Ok(DecideOutcome::AlreadyDecided {
                            draft,
                            same_decision,
                        })
                    }
                    (StatusCode::PRECONDITION_FAILED, paths::codes::STALE) => {
                        Ok(DecideOutcome::Stale {
                            draft: take_draft(body_draft)?,
                        })
                    }
                    _ => Err(Error::bad(
                        &endpoint,
                        format!(
                            "{status} with unknown `{}` {code:?}: {}",
                            paths::fields::CODE,
                            error.as_deref().unwrap_or("no error text")
                        ),
                    )),
                }
            }
            status => Err(error_from(&endpoint, status, response).await),
        }
    }
}
