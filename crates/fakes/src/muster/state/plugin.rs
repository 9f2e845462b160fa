//! What the plugin and the sessions do to the store, driven through the control API: relay
//! a message, file drafts, record checks, claim and report sends, time out routes.

use super::*;

impl Store {
    /// A fault: the draft's text changes but its `updatedAt` stays the same — what a muster
    /// whose stamps are coarser than its writes (two writes in one tick) or a write path that
    /// forgets to bump the stamp would serve. Only a pending draft (the agent's to change).
    pub(crate) fn rewrite_text_keeping_stamp(
        &mut self,
        draft_id: &str,
        text: &str,
    ) -> ApiResult<()> {
        let id = self.find_draft(draft_id)?.id;
        let draft = self.drafts.get_mut(&id).expect("found above");
        if draft.state != "pending" {
            return Err(ApiError::new(
                409,
                format!("draft {id} is {}, not pending", draft.state),
            ));
        }
        draft.text = text.to_owned();
        Ok(())
    }

    /// A fault: `draft_id` is written with the fields of `odd.set` replaced and those of
    /// `odd.drop` left out, from now on; what the draft does is unchanged.
    pub(crate) fn write_draft_oddly(&mut self, draft_id: &str, odd: OddFields) -> ApiResult<()> {
        let id = self.find_draft(draft_id)?.id;
        self.odd_drafts.insert(id, odd);
        Ok(())
    }

    pub(crate) fn create_plugin(&mut self, name: &str, draft_checks: bool) -> ApiResult<()> {
        if name.trim().is_empty() {
            return Err(ApiError::new(400, "a plugin needs a name"));
        }
        self.plugins
            .insert(name.to_owned(), Plugin { draft_checks });
        Ok(())
    }

    /// The plugin gives the relayed message's full text (`inReplyTo.text` of its drafts).
    pub(crate) fn set_message_text(&mut self, message_id: &str, text: &str) -> ApiResult<()> {
        let message = self
            .messages
            .get_mut(message_id)
            .ok_or_else(|| ApiError::new(404, format!("no message {message_id:?}")))?;
        message.text = Some(text.to_owned());
        Ok(())
    }

    pub(crate) fn relay_message(
        &mut self,
        plugin: &str,
        session: &str,
        from: &str,
        subject: &str,
        snippet: &str,
    ) -> ApiResult<Relayed> {
        if !self.plugins.contains_key(plugin) {
            return Err(ApiError::new(404, format!("no plugin named {plugin:?}")));
        }
        if session.trim().is_empty() {
            return Err(ApiError::new(400, "a message is relayed to a session"));
        }
        let stamp = self.stamp();
        let message_id = format!("m-{}", self.messages.len() + 1);
        self.messages.insert(
            message_id.clone(),
            Message {
                id: message_id.clone(),
                plugin: plugin.to_owned(),
                from: from.to_owned(),
                subject: subject.to_owned(),
                snippet: snippet.to_owned(),
                text: None,
                received_at: stamp.clone(),
                // Its first route, opened next, gives it its state.
                state: String::new(),
                routes: Vec::new(),
            },
        );
        let route_id = self.open_route(&message_id, session, RouteKind::Relayed, None, 0, &stamp);
        Ok(Relayed {
            message_id,
            route_id: route_id.to_string(),
        })
    }

    /// The session files a reply draft on an open route (a redraft is filed the same way, on
    /// the `redraft` or `fallback` route).
    pub(crate) fn file_draft(&mut self, route_id: &str, text: &str) -> ApiResult<String> {
        let route = self.find_route(route_id)?.clone();
        if !matches!(route.state, "relayed" | "redraft" | "fallback") {
            return Err(ApiError::new(
                409,
                format!(
                    "route {} is {}; no draft can be filed on it",
                    route.id, route.state
                ),
            ));
        }
        let on_route: Vec<&Draft> = self
            .drafts
            .values()
            .filter(|d| d.route_id == Some(route.id))
            .collect();
        if on_route.iter().any(|d| d.is_live()) {
            return Err(ApiError::new(
                409,
                "this route already has a draft in review",
            ));
        }
        // A draft answers what was refused before it: an earlier draft on this route (refused by
        // the check or rejected by the owner), else the failed draft of the route it redrafts.
        let redraft_of = on_route.last().map(|d| d.id).or_else(|| {
            route.redraft_of.and_then(|prev| {
                self.drafts
                    .values()
                    .filter(|d| d.route_id == Some(prev))
                    .map(|d| d.id)
                    .next_back()
            })
        });
        Ok(self.insert_draft(
            Some(route.id),
            &route.message_id,
            text,
            redraft_of,
            route.redraft_count,
        ))
    }

    /// The chief files a reply to a message itself (muster's `reply_draft`): a draft with no
    /// route, which needs the owner's approval like any other.
    pub(crate) fn file_chief_draft(&mut self, message_id: &str, text: &str) -> ApiResult<String> {
        if !self.messages.contains_key(message_id) {
            return Err(ApiError::new(404, "message not found"));
        }
        Ok(self.insert_draft(None, message_id, text, None, 0))
    }

    /// A new pending draft, `awaiting` its check when the message's plugin runs draft checks;
    /// announced, and its id returned.
    fn insert_draft(
        &mut self,
        route_id: Option<u64>,
        message_id: &str,
        text: &str,
        redraft_of: Option<u64>,
        redraft_number: u32,
    ) -> String {
        let plugin = &self.messages[message_id].plugin;
        let draft_checks = self.plugins.get(plugin).is_some_and(|p| p.draft_checks);
        let stamp = self.stamp();
        let id = insert_next(&mut self.drafts, |id| Draft {
            id,
            route_id,
            message_id: message_id.to_owned(),
            state: "pending",
            check_state: if draft_checks { "awaiting" } else { "none" },
            check_detail: None,
            text: text.to_owned(),
            redraft_of,
            redraft_number,
            result: None,
            claimed: false,
            created_at: stamp.clone(),
            updated_at: stamp,
        });
        self.emit(Change::Draft(id.to_string()));
        id.to_string()
    }

    pub(crate) fn record_check(
        &mut self,
        draft_id: &str,
        verdict: CheckVerdict,
        detail: Option<&str>,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?;
        if draft.check_state != "awaiting" || draft.state != "pending" {
            return Err(ApiError::new(
                409,
                format!(
                    "draft {} is not awaiting a check (state {}, check {})",
                    draft.id, draft.state, draft.check_state
                ),
            ));
        }
        let (id, message_id) = (draft.id, draft.message_id.clone());
        let stamp = self.stamp();
        let draft = self.drafts.get_mut(&id).expect("found above");
        draft.check_detail = detail.map(str::to_owned);
        draft.updated_at = stamp;
        match verdict {
            CheckVerdict::Sendable => draft.check_state = "sendable",
            CheckVerdict::Refused => {
                draft.check_state = "refused";
                draft.state = "rejected";
                // Handed back: the route stays open for the session to write again.
                if let Some(message) = self.messages.get_mut(&message_id) {
                    message.state = "relayed".to_owned();
                }
            }
        }
        self.emit(Change::Draft(id.to_string()));
        Ok(self.draft_json(&self.drafts[&id]))
    }

    pub(crate) fn claim(&mut self, draft_id: &str) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?;
        if draft.state != "approved" || draft.claimed {
            return Err(ApiError::new(
                409,
                format!("draft {} is not waiting to be claimed", draft.id),
            ));
        }
        let id = draft.id;
        self.drafts.get_mut(&id).expect("found above").claimed = true;
        Ok(self.draft_json(&self.drafts[&id]))
    }

    /// The plugin reports what happened to an approved draft. Reporting again for a draft that
    /// already has a result changes nothing (the plugin may retry its report).
    pub(crate) fn report_result(
        &mut self,
        draft_id: &str,
        ok: bool,
        detail: Option<&str>,
    ) -> ApiResult<Value> {
        let draft = self.find_draft(draft_id)?.clone();
        if draft.result.is_some() {
            return Ok(self.draft_json(&draft));
        }
        if draft.state != "approved" {
            return Err(ApiError::new(
                409,
                format!("draft {} is {}, not approved", draft.id, draft.state),
            ));
        }
        let stamp = self.stamp();
        {
            let d = self.drafts.get_mut(&draft.id).expect("found above");
            d.claimed = true;
            d.result = Some((ok, detail.map(str::to_owned)));
            d.state = if ok { "sent" } else { "failed" };
            d.updated_at = stamp.clone();
        }
        self.emit(Change::Draft(draft.id.to_string()));
        let Some(route_id) = draft.route_id else {
            // The chief's own draft: no route to hand back; its refusal is the chief's to read.
            self.set_message_state(&draft.message_id, if ok { "sent" } else { "send_failed" });
            return Ok(self.draft_json(&self.drafts[&draft.id]));
        };
        let route = self.routes[&route_id].clone();
        if ok {
            self.set_message_state(&route.message_id, "sent");
            return Ok(self.draft_json(&self.drafts[&draft.id]));
        }
        {
            let r = self.routes.get_mut(&route.id).expect("route of a draft");
            r.state = "send_failed";
            r.reason = Some(detail.unwrap_or("the plugin could not send it").to_owned());
            r.updated_at = stamp.clone();
        }
        self.emit(Change::Route(route.id.to_string()));

        let message_routes: Vec<&Route> = self
            .routes
            .values()
            .filter(|r| r.message_id == route.message_id)
            .collect();
        let redrafts = message_routes
            .iter()
            .filter(|r| r.kind == RouteKind::Redraft)
            .count() as u32;
        let has_fallback = message_routes.iter().any(|r| r.kind == RouteKind::Fallback);
        let next = if redrafts < MAX_ROUTE_REDRAFTS {
            Some((RouteKind::Redraft, route.session.as_str(), redrafts + 1))
        } else if !has_fallback {
            Some((RouteKind::Fallback, CHIEF_SESSION, redrafts))
        } else {
            None
        };
        match next {
            Some((kind, session, count)) => {
                self.open_route(
                    &route.message_id,
                    session,
                    kind,
                    Some(route.id),
                    count,
                    &stamp,
                );
            }
            None => self.set_message_state(&route.message_id, "send_failed"),
        }
        Ok(self.draft_json(&self.drafts[&draft.id]))
    }

    /// Opens a route on a message, in the state its kind opens in, which the message takes too;
    /// announced, and its id returned. `redraft_of` is the route whose failed send it answers.
    fn open_route(
        &mut self,
        message_id: &str,
        session: &str,
        kind: RouteKind,
        redraft_of: Option<u64>,
        redraft_count: u32,
        stamp: &str,
    ) -> u64 {
        let state = kind.opening_state();
        let routed_via = match redraft_of {
            None => format!(
                "relayed by {} to {session}",
                self.messages[message_id].plugin
            ),
            Some(failed) => format!("{state} of {failed} to {session}"),
        };
        let id = insert_next(&mut self.routes, |id| Route {
            id,
            message_id: message_id.to_owned(),
            session: session.to_owned(),
            kind,
            state,
            routed_via,
            redraft_of,
            redraft_count,
            reason: None,
            created_at: stamp.to_owned(),
            updated_at: stamp.to_owned(),
        });
        if let Some(message) = self.messages.get_mut(message_id) {
            message.routes.push(id);
            message.state = state.to_owned();
        }
        self.emit(Change::Route(id.to_string()));
        id
    }

    /// The session did not answer in time.
    pub(crate) fn time_out_route(&mut self, route_id: &str) -> ApiResult<()> {
        let route = self.find_route(route_id)?;
        if !matches!(route.state, "relayed" | "redraft" | "fallback") {
            return Err(ApiError::new(
                409,
                format!("route {} is {}", route.id, route.state),
            ));
        }
        let (id, message_id) = (route.id, route.message_id.clone());
        let stamp = self.stamp();
        let r = self.routes.get_mut(&id).expect("found above");
        r.state = "timed_out";
        r.updated_at = stamp;
        self.set_message_state(&message_id, "timed_out");
        self.emit(Change::Route(id.to_string()));
        Ok(())
    }

    pub(super) fn set_message_state(&mut self, message_id: &str, state: &str) {
        if let Some(message) = self.messages.get_mut(message_id) {
            message.state = state.to_owned();
        }
    }
}
