//! Rules: the owner's decisions made in advance (docs/rules.md).
//!
//! A rule has a scope (which agent's drafts it looks at), conditions over the rendered view
//! (what the owner would have been shown) and an action: approve, hold for the owner, or
//! reject with a reason. Rules are ordered; the first armed rule that matches a draft decides
//! it, and "hold" stops every rule after it. A rule's decision is a decision like a click: it
//! binds to the version and digest the rule judged, waits out the undo window and is audited
//! under `rule:<id>@<version>`. Hard guards ([`guard`]) hold a draft for the owner whatever a
//! rule says; a new rule starts in shadow and only records what it would have done.

pub mod guard;
pub mod pass;
pub mod record;
pub mod relabel;

use serde::{Deserialize, Serialize};

use crate::domain::Source;
use crate::render::{Address, FlagKind, ParentMessage, ReviewView};

/// What a rule does with a draft it matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuleAction {
    /// Approve it (after the undo window), exactly as the owner's click would.
    Approve,
    /// Always ask the owner: no later rule may decide it.
    Hold,
    /// Reject it with this reason (it goes back to the agent and into the audit log).
    Reject {
        /// The reason.
        reason: String,
    },
}

impl RuleAction {
    /// "approve", "hold" or "reject", as stored in the record.
    pub fn verdict(&self) -> &'static str {
        match self {
            RuleAction::Approve => "approve",
            RuleAction::Hold => "hold",
            RuleAction::Reject { .. } => "reject",
        }
    }
}

/// Whose drafts a rule looks at. Every field left empty matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Scope {
    /// Only this account (its id).
    pub account: Option<String>,
    /// Gmail: only drafts whose From header is this address (the agent writing as the owner).
    /// It reads the From header the agent wrote, which the agent chooses: a scope, never a
    /// safeguard.
    pub sender: Option<String>,
    /// Gmail: only drafts carrying this label (its id, e.g. `Label_12`; chosen by name from
    /// the account's mirrored labels, shown by name). Labels are how Gmail users already sort
    /// mail by agent — but the agent writes them too (it can label its own drafts, or drop a
    /// label): a scope, never a safeguard or a credential.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// muster: only replies for this plugin (e.g. "email").
    pub plugin: Option<String>,
    /// muster: only replies the chief filed (`true`: on no route, or on a route that fell back
    /// to the chief) or only the sessions' own (`false`).
    pub chief_filed: Option<bool>,
}

/// Which attachments a rule accepts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentCondition {
    /// No attachments at all.
    None,
    /// Only these types (MIME types like `application/pdf`, or `image/*`), each at most
    /// `max_bytes`.
    OnlyTypes {
        /// The types allowed; the sniffed type must be one too when the bytes are recognised.
        types: Vec<String>,
        /// The largest attachment allowed, in bytes.
        #[serde(rename = "maxBytes")]
        max_bytes: u64,
    },
}

/// What the rendered draft must look like for a rule to match. Every condition left empty
/// holds for every draft.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Conditions {
    /// Every recipient's domain is one of these…
    pub recipients_within: Vec<String>,
    /// …or the recipient was already on the message being answered. Alone (no domains): every
    /// recipient was on that message.
    pub or_on_thread: bool,
    /// No Cc and no Bcc.
    pub no_cc_or_bcc: bool,
    /// Which attachments are allowed (none: any).
    pub attachments: Option<AttachmentCondition>,
    /// The body has at most this many words.
    pub max_words: Option<u32>,
    /// The subject matches this regular expression (case-insensitive).
    pub subject_matches: Option<String>,
    /// None of these flags is raised (every flag holds an armed rule anyway, see [`guard`]:
    /// this makes the rule not match at all, so it is not even counted).
    pub no_flags: Vec<FlagKind>,
}

impl Conditions {
    /// The rule names where its recipients may be: the "outside your organisation" flag is
    /// then what the rule itself judged, not a guard.
    pub fn vets_recipients(&self) -> bool {
        !self.recipients_within.is_empty() || self.or_on_thread
    }
}

/// A rule as the owner wrote it (one version of it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleDefinition {
    /// The name the queue, the notifications and the record use.
    pub name: String,
    /// Whose drafts.
    #[serde(default)]
    pub scope: Scope,
    /// What they must look like.
    #[serde(default)]
    pub conditions: Conditions,
    /// What the rule does.
    pub action: RuleAction,
    /// At most this many decisions a day (the owner's local day); then drafts wait.
    #[serde(default)]
    pub daily_cap: Option<u32>,
}

impl RuleDefinition {
    /// Refuse a definition that could never work: no name, a subject pattern that is not a
    /// regular expression, a reject without a reason, domains that are not domains.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("give the rule a name".into());
        }
        if let Some(pattern) = &self.conditions.subject_matches {
            subject_pattern(pattern).map_err(|e| format!("the subject pattern: {e}"))?;
        }
        if let RuleAction::Reject { reason } = &self.action {
            if reason.trim().is_empty() {
                return Err("say why the rule rejects: the reason goes back to the agent".into());
            }
        }
        if let Some(domain) = self
            .conditions
            .recipients_within
            .iter()
            .find(|d| d.trim().is_empty() || d.contains('@') || d.contains(char::is_whitespace))
        {
            return Err(format!("{domain:?} is not a domain (write example.org)"));
        }
        Ok(())
    }
}

fn subject_pattern(pattern: &str) -> std::result::Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
}

/// What a rule looks at: one version of one draft as the review renders it, and who wrote it.
#[derive(Clone, Debug)]
pub struct Draft<'a> {
    /// The account.
    pub account_id: &'a str,
    /// Gmail or muster.
    pub source: Source,
    /// muster: the plugin.
    pub plugin: Option<&'a str>,
    /// muster: the chief filed it (on no route, or its route fell back to the chief).
    pub chief_filed: bool,
    /// The rendered version.
    pub view: &'a ReviewView,
    /// The message it answers, when known.
    pub parent: Option<&'a ParentMessage>,
    /// Gmail: the label ids its current message carries (mirrored; none for muster).
    pub labels: &'a [String],
}

/// Whether `definition` matches `draft`: `Ok` when it does, or the first thing that did not.
pub fn matches(definition: &RuleDefinition, draft: &Draft<'_>) -> std::result::Result<(), String> {
    in_scope(&definition.scope, draft)?;
    meets(&definition.conditions, draft)
}

fn in_scope(scope: &Scope, draft: &Draft<'_>) -> std::result::Result<(), String> {
    if let Some(account) = &scope.account {
        if account != draft.account_id {
            return Err(format!("another account than {account}"));
        }
    }
    if let Some(sender) = &scope.sender {
        let from_sender = draft.source == Source::Gmail
            && draft
                .view
                .from
                .iter()
                .any(|a| a.email.eq_ignore_ascii_case(sender));
        if !from_sender {
            return Err(format!("not a Gmail draft from {sender}"));
        }
    }
    if let Some(label) = &scope.label {
        if draft.source != Source::Gmail || !draft.labels.contains(label) {
            return Err("not a Gmail draft carrying the rule's label".into());
        }
    }
    if let Some(plugin) = &scope.plugin {
        if draft.plugin != Some(plugin.as_str()) {
            return Err(format!("not a reply for the {plugin} plugin"));
        }
    }
    if let Some(chief) = scope.chief_filed {
        if draft.source != Source::Muster || draft.chief_filed != chief {
            return Err(if chief {
                "not filed by the chief".into()
            } else {
                "filed by the chief".into()
            });
        }
    }
    Ok(())
}

fn recipients(view: &ReviewView) -> impl Iterator<Item = &Address> {
    view.to.iter().chain(&view.cc).chain(&view.bcc)
}

/// The domain of an address; none for one with more than one `@`, which readers split
/// differently (`eve@evil.test@example.com` is not at example.com for every reader).
fn domain_of(email: &str) -> String {
    match email.split_once('@') {
        Some((_, domain)) if !domain.contains('@') => domain.to_ascii_lowercase(),
        _ => String::new(),
    }
}

fn meets(conditions: &Conditions, draft: &Draft<'_>) -> std::result::Result<(), String> {
    let view = draft.view;
    if conditions.vets_recipients() {
        // The same "on the thread" as the review's flag: the parent and the conversation's
        // participants, and nobody when the parent is not a message of the conversation.
        let on_thread = draft.parent.map(|p| p.on_thread()).unwrap_or_default();
        let within: Vec<String> = conditions
            .recipients_within
            .iter()
            .map(|d| d.trim().trim_start_matches('@').to_ascii_lowercase())
            .collect();
        for address in recipients(view) {
            let email = address.email.to_lowercase();
            let allowed = within.contains(&domain_of(&email))
                || (conditions.or_on_thread && on_thread.contains(&email));
            if !allowed {
                return Err(format!(
                    "{} is outside the rule's recipients",
                    address.email
                ));
            }
        }
    }
    if conditions.no_cc_or_bcc && !(view.cc.is_empty() && view.bcc.is_empty()) {
        return Err("it has Cc or Bcc".into());
    }
    if let Some(allowed) = &conditions.attachments {
        // Every part that is not the displayed body counts: shown inline, referenced by
        // `cid:`, a nested message or unnamed, the recipient receives its bytes all the same.
        let attached = &view.attachments;
        match allowed {
            AttachmentCondition::None if !attached.is_empty() => {
                return Err(format!("it has {} attachment(s)", attached.len()));
            }
            AttachmentCondition::None => {}
            AttachmentCondition::OnlyTypes { types, max_bytes } => {
                for attachment in attached {
                    let name = attachment.file_name.as_deref().unwrap_or("an attachment");
                    let declared = attachment.declared_type.as_deref().unwrap_or("");
                    let type_ok = |t: &str| types.iter().any(|allowed| type_matches(allowed, t));
                    // The bytes must be what the rule allows too, when they are recognisable.
                    let sniffed_ok = attachment.sniffed_type.as_deref().is_none_or(type_ok);
                    if !type_ok(declared) || !sniffed_ok {
                        return Err(format!("{name} is not of a type the rule allows"));
                    }
                    if attachment.size > *max_bytes {
                        return Err(format!("{name} is larger than the rule allows"));
                    }
                }
            }
        }
    }
    if let Some(max) = conditions.max_words {
        let words = view.text_body.split_whitespace().count();
        if words > max as usize {
            return Err(format!(
                "the body has {words} words (the rule allows {max})"
            ));
        }
    }
    if let Some(pattern) = &conditions.subject_matches {
        let subject = view.subject.as_deref().unwrap_or("");
        let matched = subject_pattern(pattern)
            .map(|re| re.is_match(subject))
            .unwrap_or(false);
        if !matched {
            return Err(format!("the subject does not match {pattern:?}"));
        }
    }
    if let Some(flag) = view
        .flags
        .iter()
        .find(|f| conditions.no_flags.contains(&f.kind))
    {
        return Err(format!("flagged: {}", flag.explanation));
    }
    Ok(())
}

fn type_matches(allowed: &str, actual: &str) -> bool {
    let (allowed, actual) = (allowed.to_ascii_lowercase(), actual.to_ascii_lowercase());
    match allowed.strip_suffix("/*") {
        Some(family) => actual.split('/').next() == Some(family),
        None => allowed == actual,
    }
}

#[cfg(test)]
mod tests;
