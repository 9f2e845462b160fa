//! How the fake shows its records on the wire: drafts, routes and messages as muster's JSON.

use super::*;

impl Store {
    pub(super) fn draft_json(&self, draft: &Draft) -> Value {
        let route = draft.route_id.map(|r| &self.routes[&r]);
        let message = &self.messages[&draft.message_id];
        let mut json = json!({
            "id": self.id(draft.id),
            "plugin": message.plugin,
            "routeId": route.map(|r| self.id(r.id)),
            "session": route.map_or(CHIEF_SESSION, |r| r.session.as_str()),
            "messageId": self.message_ref(&message.id),
            "state": draft.state,
            "checkState": draft.check_state,
            "checkDetail": draft.check_detail,
            "text": draft.text,
            "inReplyTo": {
                "from": message.from,
                "subject": message.subject,
                "snippet": message.snippet,
                "receivedAt": message.received_at,
            },
            "redraftOf": draft.redraft_of.map(|id| self.id(id)),
            "redraftNumber": draft.redraft_number,
            "result": draft.result.as_ref().map(|(ok, detail)| json!({"ok": ok, "detail": detail})),
            "createdAt": draft.created_at,
            "updatedAt": draft.updated_at,
        });
        // Absent, not null, when the plugin did not give the full text.
        if let Some(text) = &message.text {
            json["inReplyTo"]["text"] = json!(text);
        }
        if self.style.omit_zero_counts && draft.redraft_number == 0 {
            json.as_object_mut()
                .expect("an object")
                .remove("redraftNumber");
        }
        if let Some(odd) = self.odd_drafts.get(&draft.id) {
            let object = json.as_object_mut().expect("an object");
            for (field, value) in &odd.set {
                object.insert(field.clone(), value.clone());
            }
            for field in &odd.drop {
                object.remove(field);
            }
        }
        json
    }

    pub(super) fn route_json(&self, route: &Route) -> Value {
        let mut json = json!({
            "id": self.id(route.id),
            "messageId": self.message_ref(&route.message_id),
            "session": route.session,
            "state": route.state,
            "routedVia": route.routed_via,
            "redraftOf": route.redraft_of.map(|id| self.id(id)),
            "redraftCount": route.redraft_count,
            "reason": route.reason,
            "createdAt": route.created_at,
            "updatedAt": route.updated_at,
        });
        if self.style.omit_zero_counts && route.redraft_count == 0 {
            json.as_object_mut()
                .expect("an object")
                .remove("redraftCount");
        }
        json
    }

    pub(super) fn message_json(&self, message: &Message) -> Value {
        json!({
            "id": self.message_ref(&message.id),
            "plugin": message.plugin,
            "from": message.from,
            "subject": message.subject,
            "state": message.state,
            "routes": message.routes.iter().map(|id| self.id(*id)).collect::<Vec<_>>(),
        })
    }
}
