//! Integration tests of the muster client against the fake muster on 127.0.0.1 (and, for
//! malformed answers, against tiny servers written in the test).

mod as_written;
mod control;
mod decide;
mod events;
mod fake_fidelity;
mod login;
mod malformed;
mod refusal;
mod tolerance;
mod transport;

use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_muster::{MusterClient, PluginDraft};

/// A fresh, empty fake muster with the default password.
pub async fn fake() -> FakeMuster {
    FakeMuster::start(MusterConfig::default())
        .await
        .expect("fake muster starts")
}

/// A client of `fake` with the right password.
pub fn client(fake: &FakeMuster) -> MusterClient {
    MusterClient::new(fake.url().parse().unwrap(), fake.password().to_owned()).unwrap()
}

/// A message relayed by a plugin (with or without `draft_checks`) and a pending reply on it.
pub struct Filed {
    pub message_id: String,
    pub route_id: String,
    pub draft_id: String,
}

pub fn file_reply(fake: &FakeMuster, draft_checks: bool) -> Filed {
    let plugin = if draft_checks {
        "support-desk"
    } else {
        "gmail-relay"
    };
    fake.create_plugin(plugin, draft_checks).unwrap();
    let relayed = fake
        .relay_message(
            plugin,
            "inbox-chat",
            "ana@example.com",
            "Invoice 2291",
            "Could the due date move to the 10th?",
        )
        .unwrap();
    let draft_id = fake
        .file_draft(&relayed.route_id, "Hi Ana, yes: the 10th it is.")
        .unwrap();
    Filed {
        message_id: relayed.message_id,
        route_id: relayed.route_id,
        draft_id,
    }
}

/// The draft as the client reads it now.
pub async fn read(client: &MusterClient, id: &str) -> PluginDraft {
    client.get_draft(id).await.expect("draft readable")
}
