//! Which scopes each Gmail method accepts and what it costs in quota units.
//!
//! Scopes are those of Google's discovery document for Gmail v1 (`gmail/v1/gmail-api.json`,
//! the `scopes` list of each method, e.g. `users.drafts.send`: mail.google.com,
//! gmail.addons.current.action.compose, gmail.compose, gmail.modify — so `gmail.send` alone
//! cannot send a draft). Units are from <https://developers.google.com/gmail/api/reference/quota>.

pub const MAIL: &str = "https://mail.google.com/";
pub const MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
pub const COMPOSE: &str = "https://www.googleapis.com/auth/gmail.compose";
pub const READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
pub const METADATA: &str = "https://www.googleapis.com/auth/gmail.metadata";
pub const LABELS: &str = "https://www.googleapis.com/auth/gmail.labels";
pub const SEND: &str = "https://www.googleapis.com/auth/gmail.send";
const ADDON_COMPOSE: &str = "https://www.googleapis.com/auth/gmail.addons.current.action.compose";
const ADDON_ACTION: &str = "https://www.googleapis.com/auth/gmail.addons.current.message.action";
const ADDON_METADATA: &str =
    "https://www.googleapis.com/auth/gmail.addons.current.message.metadata";
const ADDON_READONLY: &str =
    "https://www.googleapis.com/auth/gmail.addons.current.message.readonly";

/// A Gmail REST method the fake serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodSpec {
    /// Name used in the request log and in fault injection, e.g. `drafts.send`.
    pub name: &'static str,
    /// Quota units of one call.
    pub units: u32,
    /// Any one of these scopes allows the call.
    pub scopes: &'static [&'static str],
    /// Google's RPC name, shown in a scope error's `ErrorInfo`.
    pub rpc: &'static str,
}

const DRAFT_READ: &[&str] = &[MAIL, COMPOSE, MODIFY, READONLY];
const DRAFT_WRITE: &[&str] = &[MAIL, ADDON_COMPOSE, COMPOSE, MODIFY];
const MESSAGE_LIST: &[&str] = &[MAIL, METADATA, MODIFY, READONLY];
const MESSAGE_GET: &[&str] = &[
    MAIL,
    ADDON_ACTION,
    ADDON_METADATA,
    ADDON_READONLY,
    METADATA,
    MODIFY,
    READONLY,
];
const PROFILE: &[&str] = &[MAIL, COMPOSE, METADATA, MODIFY, READONLY];

pub const DRAFTS_LIST: MethodSpec = MethodSpec {
    name: "drafts.list",
    units: 5,
    scopes: DRAFT_READ,
    rpc: "caribou.api.proto.MailboxService.ListDrafts",
};
pub const DRAFTS_GET: MethodSpec = MethodSpec {
    name: "drafts.get",
    units: 5,
    scopes: DRAFT_READ,
    rpc: "caribou.api.proto.MailboxService.GetDraft",
};
pub const DRAFTS_CREATE: MethodSpec = MethodSpec {
    name: "drafts.create",
    units: 10,
    scopes: DRAFT_WRITE,
    rpc: "caribou.api.proto.MailboxService.CreateDraft",
};
pub const DRAFTS_UPDATE: MethodSpec = MethodSpec {
    name: "drafts.update",
    units: 15,
    scopes: DRAFT_WRITE,
    rpc: "caribou.api.proto.MailboxService.UpdateDraft",
};
pub const DRAFTS_SEND: MethodSpec = MethodSpec {
    name: "drafts.send",
    units: 100,
    scopes: DRAFT_WRITE,
    rpc: "caribou.api.proto.MailboxService.SendDraft",
};
pub const DRAFTS_DELETE: MethodSpec = MethodSpec {
    name: "drafts.delete",
    units: 10,
    scopes: DRAFT_WRITE,
    rpc: "caribou.api.proto.MailboxService.DeleteDraft",
};
pub const MESSAGES_LIST: MethodSpec = MethodSpec {
    name: "messages.list",
    units: 5,
    scopes: MESSAGE_LIST,
    rpc: "caribou.api.proto.MailboxService.ListMessages",
};
pub const MESSAGES_GET: MethodSpec = MethodSpec {
    name: "messages.get",
    units: 5,
    scopes: MESSAGE_GET,
    rpc: "caribou.api.proto.MailboxService.GetMessage",
};
/// `users.threads.get`: the discovery document lists the same scopes as `users.messages.get`;
/// 10 units in the quota table.
pub const THREADS_GET: MethodSpec = MethodSpec {
    name: "threads.get",
    units: 10,
    scopes: MESSAGE_GET,
    rpc: "caribou.api.proto.MailboxService.GetThread",
};
pub const HISTORY_LIST: MethodSpec = MethodSpec {
    name: "history.list",
    units: 2,
    scopes: MESSAGE_GET,
    rpc: "caribou.api.proto.MailboxService.ListHistory",
};
pub const GET_PROFILE: MethodSpec = MethodSpec {
    name: "getProfile",
    units: 1,
    scopes: PROFILE,
    rpc: "caribou.api.proto.MailboxService.GetProfile",
};

/// `users.labels.list`: the discovery document's scopes (mail.google.com, gmail.modify,
/// gmail.readonly, gmail.labels, gmail.metadata); 1 unit in the quota table.
pub const LABELS_LIST: MethodSpec = MethodSpec {
    name: "labels.list",
    units: 1,
    scopes: &[MAIL, MODIFY, READONLY, LABELS, METADATA],
    rpc: "caribou.api.proto.MailboxService.ListLabels",
};

/// `users.messages.modify`: the discovery document's scopes (mail.google.com, gmail.modify);
/// 5 units in the quota table.
pub const MESSAGES_MODIFY: MethodSpec = MethodSpec {
    name: "messages.modify",
    units: 5,
    scopes: &[MAIL, MODIFY],
    rpc: "caribou.api.proto.MailboxService.ModifyMessage",
};

/// `users.messages.send`: the discovery document's scopes (`gmail.send` among them) and 100
/// units in the quota table.
pub const MESSAGES_SEND: MethodSpec = MethodSpec {
    name: "messages.send",
    units: 100,
    scopes: &[MAIL, ADDON_COMPOSE, COMPOSE, MODIFY, SEND],
    rpc: "caribou.api.proto.MailboxService.SendMessage",
};

/// What a grant holding `gmail.metadata` may not do although the method accepts the scope:
/// no `q` search on `messages.list` (the discovery document: "Parameter cannot be used when
/// accessing the api using the gmail.metadata scope") and no message bodies (`format=raw` or
/// `full`, the default) from `messages.get` or `threads.get` (the discovery document on both
/// `format` values: "Format cannot be used when accessing the api using the gmail.metadata
/// scope.").
///
/// Google applies these limits whenever the token carries `gmail.metadata`, even beside a
/// broader scope: owners hit "Metadata scope does not support 'q' parameter" with tokens also
/// holding `gmail.readonly` or `gmail.modify` (googleapis/google-api-python-client#582, Google
/// issue tracker 115621456; googleworkspace/cli#104 and #200).
pub fn metadata_limits(
    spec: &MethodSpec,
    granted: &[String],
    req: &super::rest::Req,
) -> Result<(), super::errors::ApiError> {
    use super::errors::ApiError;
    if !granted.iter().any(|g| g == METADATA) {
        return Ok(());
    }
    if spec.name == MESSAGES_LIST.name && req.param("q").is_some() {
        return Err(ApiError::metadata_scope(
            "Metadata scope does not support 'q' parameter",
        ));
    }
    if spec.name == MESSAGES_GET.name || spec.name == THREADS_GET.name {
        let format = req.param("format").unwrap_or("full").to_ascii_uppercase();
        if format == "RAW" || format == "FULL" {
            return Err(ApiError::metadata_scope(format!(
                "Metadata scope doesn't allow format {format}"
            )));
        }
    }
    Ok(())
}

/// Whether any granted scope allows `spec`.
pub fn allows(spec: &MethodSpec, granted: &[String]) -> bool {
    granted.iter().any(|g| spec.scopes.contains(&g.as_str()))
}
