//! Integration tests of countersign-core on real SQLite files in temp dirs, against the fakes
//! on 127.0.0.1.

mod actions;
mod adversary;
mod app_events;
mod audit_chain;
mod autostart;
mod binding;
mod bulk;
mod deferred_start;
mod dispatcher_role;
mod edit;
mod errors;
mod gmail_behaviour;
mod gmail_lost;
mod gmail_waits;
mod history;
mod lifecycle;
mod muster_polling;
mod muster_truth;
mod outbox;
mod outbox_model;
mod queue_pages;
mod reachability;
mod rules;
mod rules_labels;
mod rules_order;
mod shown;
mod store;
mod support;
mod sync_gmail;
mod sync_muster;
mod words;
