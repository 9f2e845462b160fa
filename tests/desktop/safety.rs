//! A hostile draft in the window: its scripts, event handlers and remote images must do
//! nothing — no script runs in the webview (the title a payload would change stays, the IPC a
//! payload would call is never reached) and the remote host it points at sees no request —
//! while its safety flags are shown beside the addresses they are about.

use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture, RemoteHost};

use crate::support::*;

/// A call of the shell's `approve` that the command accepts (a well-formed `Shown` for each of
/// the first items) and core would refuse *and audit* (its version is not the current one): if
/// a payload ever reached the shell, the audit log would say so.
const APPROVE_EVERY_ITEM: &str = "for (let id = 1; id <= 3; id++) { \
    window.top.__TAURI_INTERNALS__.invoke('approve', \
      {shown: {id, version: 'payload', digest: 'payload'}, anyway: true}); }";

/// Whether any approval reached core: a decision, or an audited refusal of one.
async fn approvals_that_reached_core(fixture: &Fixture) -> usize {
    let decisions = fixture
        .store
        .list_decisions(countersign_core::store::DecisionFilter::All)
        .await
        .unwrap();
    let refused = fixture
        .store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.line.action == "approve")
        .count();
    decisions.len() + refused
}

fn hostile_draft(remote: &str) -> Vec<u8> {
    let html = format!(
        "<p>Hello Ana,</p>\
         <script>document.title='pwned-script';{APPROVE_EVERY_ITEM}</script>\
         <img src=\"x\" onerror=\"document.title='pwned-onerror';parent.document.title='pwned'\">\
         <img src=\"{remote}/pixel.png\" alt=\"tracker\">\
         <div style=\"background-image:url({remote}/bg.png)\">styled</div>\
         <svg onload=\"top.document.title='pwned-svg'\"></svg>\
         <iframe src=\"javascript:parent.document.title='pwned-frame'\"></iframe>\
         <link rel=\"stylesheet\" href=\"{remote}/style.css\">\
         <a href=\"javascript:top.document.title='pwned-link'\">https://bank.example</a>\
         <p>Regards</p>"
    );
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Bcc: collector@exfil.example\r\nSubject: Your statement\r\n\
         Message-ID: <hostile-1@agent.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_draft_runs_no_script_and_fetches_nothing_while_its_flags_are_shown() {
    let Some(prerequisites) = skip_or_fail(
        "a_hostile_draft_runs_no_script_and_fetches_nothing_while_its_flags_are_shown",
    ) else {
        return;
    };
    let remote = RemoteHost::start().await.unwrap();
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    // Ordinary drafts around it, so the queue (and the screenshot) looks like a real one.
    fixture.gmail.file_draft(
        &gmail_reply(1, "Re: Lunch on Friday", "Friday works."),
        None,
    );
    let draft = fixture.gmail.file_draft(&hostile_draft(&remote.url), None);
    fixture
        .gmail
        .file_draft(&gmail_reply(2, "Re: Invoice 2291", "Attached."), None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, item.id).await.or_log(&app);
    session
        .wait_for("iframe[sandbox]", UI_TIMEOUT)
        .await
        .or_log(&app);
    let sandbox = session
        .find("iframe")
        .await
        .unwrap()
        .attribute("sandbox")
        .await
        .unwrap();
    assert_eq!(
        sandbox.as_deref(),
        Some(""),
        "the body frame has no permissions at all"
    );
    session
        .wait_for_text("[role=note]", "Remote content blocked (", UI_TIMEOUT)
        .await
        .or_log(&app);
    // The Bcc flag sits on the Bcc line, beside the address it is about.
    session
        .wait_for_text("[data-header=Bcc]", "collector@exfil.example", UI_TIMEOUT)
        .await
        .or_log(&app);
    let flags = session
        .find_all("[data-header=Bcc] [data-flag]")
        .await
        .unwrap();
    assert!(
        !flags.is_empty(),
        "the Bcc recipient is flagged on its line"
    );
    // Whatever the mail would fetch or run on its own, it did before its frame's load event,
    // which records the view in the mirror.
    eventually(UI_TIMEOUT, "the mail frame has loaded", || async {
        fixture
            .store
            .last_view(item.id, "owner via desktop")
            .await
            .unwrap()
            .is_some()
    })
    .await
    .or_log(&app);
    // Clicking into the mail (its link) must not run anything either.
    session.find("iframe").await.unwrap().click().await.unwrap();
    // No sleep: the same call made from the app's own window after the click goes the way a
    // payload's would (to core, which refuses it — not the version on screen — and audits the
    // refusal). Once those are audited, anything the mail or the click set off came first.
    session.execute(APPROVE_EVERY_ITEM, vec![]).await.unwrap();
    eventually(UI_TIMEOUT, "the window's own calls are audited", || async {
        approvals_that_reached_core(&fixture).await >= 3
    })
    .await
    .or_log(&app);
    app.screenshot("draft-with-flags").await.unwrap();

    assert_eq!(session.title().await.unwrap(), "Countersign");
    assert_eq!(remote.hits(), 0, "the remote host saw no request");
    assert_eq!(detail_state(session).await.as_deref(), Some("pending"));
    assert!(fixture.gmail.sent_messages().is_empty());
    assert_eq!(
        approvals_that_reached_core(&fixture).await,
        3,
        "only the window's own three calls reached the shell's approve command"
    );
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_image_is_fetched_only_after_the_owner_loads_it_for_that_draft() {
    let Some(prerequisites) =
        skip_or_fail("a_remote_image_is_fetched_only_after_the_owner_loads_it_for_that_draft")
    else {
        return;
    };
    let remote = RemoteHost::start().await.unwrap();
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let newsletter = |n: usize| {
        format!(
            "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
             Subject: Newsletter {n}\r\nMessage-ID: <remote-{n}@agent.example>\r\n\
             MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
             <p>Our news</p><img src=\"{}/banner-{n}.png\" alt=\"banner\">\r\n",
            remote.url
        )
        .into_bytes()
    };
    let draft = fixture.gmail.file_draft(&newsletter(1), None);
    let next = fixture.gmail.file_draft(&newsletter(2), None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();
    let next_item = fixture.item(&next.id).await.unwrap();
    // The mail frame of a draft has loaded when its view is recorded: whatever it would fetch
    // on its own, it has asked for by then.
    let frame_loaded = |id: i64| {
        let store = fixture.store.clone();
        async move {
            store
                .last_view(id, "owner via desktop")
                .await
                .unwrap()
                .is_some()
        }
    };

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    open_item(session, item.id).await.or_log(&app);
    session
        .wait_for_text("[role=note]", "Remote content blocked (1)", UI_TIMEOUT)
        .await
        .or_log(&app);
    countersign_e2e::fixture::eventually(UI_TIMEOUT, "the frame is shown", || {
        frame_loaded(item.id)
    })
    .await
    .or_log(&app);
    assert_eq!(remote.hits(), 0, "fetched before the owner asked");

    session
        .find("[role=note] button")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(
            "[role=note]",
            "Remote content loaded for this draft",
            UI_TIMEOUT,
        )
        .await
        .or_log(&app);
    countersign_e2e::fixture::eventually(UI_TIMEOUT, "the image is fetched", || async {
        remote.hits() > 0
    })
    .await
    .or_log(&app);
    assert_eq!(session.title().await.unwrap(), "Countersign");

    // The next draft is blocked again: the choice was for that draft only.
    let hits_for_the_first = remote.hits();
    open_item(session, next_item.id).await.or_log(&app);
    session
        .wait_for_text("[role=note]", "Remote content blocked (1)", UI_TIMEOUT)
        .await
        .or_log(&app);
    countersign_e2e::fixture::eventually(UI_TIMEOUT, "the next frame is shown", || {
        frame_loaded(next_item.id)
    })
    .await
    .or_log(&app);
    assert_eq!(
        remote.hits(),
        hits_for_the_first,
        "the next draft's image was fetched without asking"
    );
    app.quit().await.unwrap();
}
