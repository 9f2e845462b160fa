//! Every path, query parameter, cookie and JSON field name of muster's owner API in one place,
//! so the client can follow muster if its routes differ (`docs/muster.md` is the contract).

/// `POST /login` (form).
pub const LOGIN: &str = "/login";
/// The form field of `POST /login`.
pub const LOGIN_PASSWORD_FIELD: &str = "password";
/// The session cookie `POST /login` sets.
pub const SESSION_COOKIE: &str = "muster_session";

/// `GET /api/plugin/drafts?state=…`
pub const DRAFTS: &str = "/api/plugin/drafts";
/// The state filter of [`DRAFTS`] and [`MESSAGES`].
pub const STATE_PARAM: &str = "state";
/// `GET /api/plugin/drafts/{id}`
pub fn draft(id: &str) -> String {
    format!("{DRAFTS}/{}", encode_segment(id))
}
/// `POST /api/plugin/drafts/{id}/decide`
pub fn decide(id: &str) -> String {
    format!("{}/decide", draft(id))
}

/// `GET /api/plugin/routes?messageId=…`
pub const ROUTES: &str = "/api/plugin/routes";
/// The message filter of [`ROUTES`].
pub const MESSAGE_ID_PARAM: &str = "messageId";

/// `GET /api/plugin/messages?state=…`
pub const MESSAGES: &str = "/api/plugin/messages";

/// `GET /events` (Server-Sent Events).
pub const EVENTS: &str = "/events";
/// Event name: a plugin draft changed; data `{"id": "<draft id>"}`.
pub const EVENT_DRAFT_CHANGED: &str = "plugin.draft.changed";
/// Event name: a route changed; data `{"id": "<route id>"}`.
pub const EVENT_ROUTE_CHANGED: &str = "plugin.route.changed";

/// JSON field names (camelCase, as muster writes them). The wire structs use the same names
/// through serde; these constants are for the places that name a field in an error or a body.
pub mod fields {
    /// `{"drafts": […]}`
    pub const DRAFTS: &str = "drafts";
    /// `{"routes": […]}`
    pub const ROUTES: &str = "routes";
    /// `{"messages": […]}`
    pub const MESSAGES: &str = "messages";
    /// `{"draft": {…}}` in decide answers.
    pub const DRAFT: &str = "draft";
    /// `{"note": "…"}` in the decide answer.
    pub const NOTE: &str = "note";
    /// `{"error": "…"}`
    pub const ERROR: &str = "error";
    /// `{"code": "…"}` of decide conflicts.
    pub const CODE: &str = "code";
    /// Decide body: `decision`.
    pub const DECISION: &str = "decision";
    /// Decide body: `expectedUpdatedAt`.
    pub const EXPECTED_UPDATED_AT: &str = "expectedUpdatedAt";
    /// Event data: `id`.
    pub const ID: &str = "id";
}

/// The `code` values of the decide answers.
pub mod codes {
    /// 409: the plugin has not checked the draft yet.
    pub const DRAFT_UNCHECKED: &str = "draft_unchecked";
    /// 409: decided before (by us or elsewhere).
    pub const ALREADY_DECIDED: &str = "already_decided";
    /// 409: the plugin refused the draft for good.
    pub const CHECK_REFUSED: &str = "check_refused";
    /// 412: `updatedAt` moved on.
    pub const STALE: &str = "stale";
}

/// Percent-encode one path segment, so an id can never climb out of its route.
fn encode_segment(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_with_slashes_stays_inside_its_path_segment() {
        assert_eq!(draft("42"), "/api/plugin/drafts/42");
        assert_eq!(decide("../x y"), "/api/plugin/drafts/..%2Fx%20y/decide");
    }
}
