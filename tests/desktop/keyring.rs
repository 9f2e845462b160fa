//! The OS keyring from the desktop app: connecting Gmail keeps the token in a real Secret
//! Service (gnome-keyring on a private session bus, `countersign_fakes::secret_service`), the next
//! start reads it back and syncs with it, and no token file is written in the data directory.

use countersign_e2e::desktop::{skip_or_fail, DesktopApp, LaunchOptions};
use countersign_e2e::fixture::{eventually, gmail_reply, Fixture};
use countersign_fakes::secret_service::PrivateSecretService;

use crate::support::*;

async fn row_count(app: &DesktopApp) -> usize {
    app.session()
        .find_all("[role=option]")
        .await
        .map(|rows| rows.len())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gmail_token_lives_in_the_os_keyring_and_the_next_start_syncs_with_it() {
    let Some(prerequisites) =
        skip_or_fail("the_gmail_token_lives_in_the_os_keyring_and_the_next_start_syncs_with_it")
    else {
        return;
    };
    let keyring = PrivateSecretService::start()
        .expect("gnome-keyring and dbus-daemon run (scripts/setup.sh installs them)");
    let fixture = Fixture::new().await.unwrap();
    fixture
        .gmail
        .file_draft(&gmail_reply(1, "Before the restart", "Hello."), None);
    let secret_dir = tempfile::tempdir().unwrap();
    let client_secret = secret_dir.path().join("client_secret.json");
    std::fs::write(
        &client_secret,
        fixture.gmail.client_secret_json().to_string(),
    )
    .unwrap();
    // No COUNTERSIGN_SECRET_STORE: the app finds the private Secret Service on its session bus
    // (and only the bus: notifications have no daemon there, and none is asked for here).
    let options = || LaunchOptions {
        data_dir: Some(fixture.path().to_path_buf()),
        env: vec![
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                keyring.bus_address().to_string(),
            ),
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
        os_keyring: true,
        ..LaunchOptions::default()
    };

    let app = DesktopApp::launch(&prerequisites, options())
        .await
        .expect("the app starts");
    app.session()
        .wait_for("[data-action=welcome-gmail]", UI_TIMEOUT)
        .await
        .or_log(&app)
        .click()
        .await
        .unwrap();
    eventually(UI_TIMEOUT, "the queue shows the draft", || async {
        row_count(&app).await == 1
    })
    .await
    .or_log(&app);
    app.quit().await.unwrap();
    let accounts = fixture.store.list_accounts().await.unwrap();
    assert_eq!(
        accounts[0].profile.secret_storage,
        countersign_core::store::SecretStorage::Keyring
    );
    assert!(
        !fixture.path().join("gmail-tokens").exists(),
        "no token file in the data directory"
    );

    // A new start reads the token back from the keyring: a draft filed meanwhile arrives.
    fixture
        .gmail
        .file_draft(&gmail_reply(2, "After the restart", "Hello again."), None);
    let app = DesktopApp::launch(&prerequisites, options())
        .await
        .expect("the app starts again");
    eventually(
        UI_TIMEOUT,
        "the new draft is synced with the kept token",
        || async { row_count(&app).await == 2 },
    )
    .await
    .or_log(&app);
    app.quit().await.unwrap();
    assert!(!fixture.path().join("gmail-tokens").exists());
    assert!(keyring.keyrings_dir().join("login.keyring").exists());
}
