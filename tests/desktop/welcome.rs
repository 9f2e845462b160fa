//! The first run: a data directory without accounts shows the welcome, from which the owner
//! connects Gmail (file dialog bypassed by the debug-build hook, consent played by the fake
//! Google), connects muster, or tries the demo; and the demo window paints its queue (also run
//! against the installed package: `COUNTERSIGN_DESKTOP_BIN=/usr/bin/countersign-desktop`).

use countersign_e2e::desktop::{skip_or_fail, DesktopApp, LaunchOptions};
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};

use crate::support::*;

/// Queue rows on screen.
async fn row_count(app: &DesktopApp) -> usize {
    app.session()
        .find_all("[role=option]")
        .await
        .map(|rows| rows.len())
        .unwrap_or(0)
}

/// How many different colours a PNG has (a blank window has one or two).
fn distinct_colours(png_bytes: &[u8]) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sane PNG size")];
    let frame = reader.next_frame(&mut pixels).expect("a PNG frame");
    // Bytes per pixel: samples of at least one byte each (WebKit's screenshots are 8-bit RGBA).
    let pixel = frame.color_type.samples() * usize::from((frame.bit_depth as u8).max(8) / 8);
    let mut colours: Vec<&[u8]> = pixels[..frame.buffer_size()].chunks_exact(pixel).collect();
    colours.sort_unstable();
    colours.dedup();
    colours.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_data_dir_shows_the_welcome_with_three_ways_on() {
    let Some(prerequisites) = skip_or_fail("a_fresh_data_dir_shows_the_welcome_with_three_ways_on")
    else {
        return;
    };
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    let session = app.session();
    session
        .wait_for_text("[data-testid=welcome] h2", "Welcome", UI_TIMEOUT)
        .await
        .or_log(&app);
    for way in ["welcome-gmail", "welcome-muster", "try-demo"] {
        let button = session
            .find(&format!("[data-action={way}]"))
            .await
            .unwrap_or_else(|e| panic!("no {way} button: {e:#}"));
        assert!(button.is_enabled().await.unwrap(), "{way}");
    }
    assert_eq!(row_count(&app).await, 0, "no queue beside the welcome");
    app.screenshot("welcome").await.unwrap();
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_the_demo_shows_the_demo_queue_marked_as_demo_and_leaves_the_data_dir_alone() {
    let Some(prerequisites) = skip_or_fail(
        "try_the_demo_shows_the_demo_queue_marked_as_demo_and_leaves_the_data_dir_alone",
    ) else {
        return;
    };
    let app = DesktopApp::launch(&prerequisites, LaunchOptions::default())
        .await
        .expect("the app starts");
    let session = app.session();
    session
        .wait_for("[data-action=try-demo]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    session
        .wait_for_text(".demo", "demo mode", UI_TIMEOUT)
        .await
        .or_log(&app);
    // The demo seed: three Gmail drafts and four muster drafts (the scripted agent adds more).
    eventually(UI_TIMEOUT, "the demo queue is shown", || async {
        row_count(&app).await >= 7
    })
    .await
    .or_log(&app);
    assert!(session
        .find_all("[data-testid=welcome]")
        .await
        .unwrap()
        .is_empty());
    app.screenshot("welcome-demo").await.unwrap();

    // The demo ran in a throw-away directory: the owner's data dir still has no account.
    let store = countersign_core::Store::open(app.data_dir()).await.unwrap();
    assert!(store.list_accounts().await.unwrap().is_empty());
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_the_fake_gmail_from_the_welcome_ends_on_the_queue_with_its_drafts() {
    let Some(prerequisites) = skip_or_fail(
        "connecting_the_fake_gmail_from_the_welcome_ends_on_the_queue_with_its_drafts",
    ) else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    for n in 1..=2 {
        fixture.gmail.file_draft(
            &gmail_reply(n, &format!("Welcome draft {n}"), "Hello from the agent."),
            None,
        );
    }
    let secret_dir = tempfile::tempdir().unwrap();
    let client_secret = secret_dir.path().join("client_secret.json");
    std::fs::write(
        &client_secret,
        fixture.gmail.client_secret_json().to_string(),
    )
    .unwrap();

    let app = DesktopApp::launch(
        &prerequisites,
        LaunchOptions {
            data_dir: Some(fixture.path().to_path_buf()),
            env: vec![
                ("COUNTERSIGN_SECRET_STORE".into(), "file".into()),
                (
                    "COUNTERSIGN_TEST_CLIENT_SECRET".into(),
                    client_secret.display().to_string(),
                ),
                (
                    "COUNTERSIGN_TEST_GMAIL_API_BASE".into(),
                    fixture.gmail.api_base(),
                ),
                (
                    "COUNTERSIGN_TEST_GMAIL_TOKENINFO".into(),
                    fixture.gmail.tokeninfo_url(),
                ),
            ],
            ..LaunchOptions::default()
        },
    )
    .await
    .expect("the app starts");
    let session = app.session();
    session
        .wait_for("[data-action=welcome-gmail]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the queue shows the two drafts", || async {
        row_count(&app).await == 2
    })
    .await
    .or_log(&app);
    let mut subjects: Vec<_> = fixture
        .items()
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.subject)
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["Welcome draft 1", "Welcome draft 2"]);
    assert_eq!(row_count(&app).await, 2);
    assert!(session
        .find_all("[data-testid=welcome]")
        .await
        .unwrap()
        .is_empty());
    let accounts = fixture.store.list_accounts().await.unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].profile.kind, countersign_core::Source::Gmail);
    app.quit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_muster_password_is_said_in_the_welcome_and_nothing_is_added() {
    let Some(prerequisites) =
        skip_or_fail("a_wrong_muster_password_is_said_in_the_welcome_and_nothing_is_added")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    session
        .wait_for("[data-testid=welcome-muster-url]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .send_keys(&fixture.muster.url())
        .await
        .unwrap();
    session
        .find("[data-testid=welcome-muster-password]")
        .await
        .unwrap()
        .send_keys("not the password")
        .await
        .unwrap();
    session
        .find("[data-action=welcome-muster]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let error = session
        .wait_for("[data-testid=welcome-error]", UI_TIMEOUT)
        .await
        .or_log(&app);
    let message = error.text().await.unwrap();
    assert!(message.starts_with("cannot"), "a sentence: {message}");
    assert!(
        !message.contains("not the password"),
        "the password never shows: {message}"
    );
    assert!(fixture.store.list_accounts().await.unwrap().is_empty());
    // Still on the welcome, ready for another try.
    assert!(session
        .find("[data-action=welcome-muster]")
        .await
        .unwrap()
        .is_enabled()
        .await
        .unwrap());
    app.quit().await.unwrap();
}

/// `--demo` paints its queue: the window is more than a blank. The install check of
/// scripts/test.sh runs this against the packaged binary (`COUNTERSIGN_DESKTOP_BIN`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_window_paints_its_queue() {
    let Some(prerequisites) = skip_or_fail("the_demo_window_paints_its_queue") else {
        return;
    };
    let app = DesktopApp::launch(
        &prerequisites,
        LaunchOptions {
            args: vec!["--demo".into()],
            ..LaunchOptions::default()
        },
    )
    .await
    .expect("the app starts");
    eventually(UI_TIMEOUT, "the demo queue is shown", || async {
        row_count(&app).await >= 7
    })
    .await
    .or_log(&app);
    let shot = app.screenshot("demo-window").await.unwrap();
    let colours = distinct_colours(&std::fs::read(&shot).unwrap());
    assert!(
        colours > 32,
        "the window looks blank: {colours} colours in {}",
        shot.display()
    );
    app.quit().await.unwrap();
}
