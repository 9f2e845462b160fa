//! The OS keyring, really used: a Gmail token and a muster password kept in a real Secret
//! Service (gnome-keyring on a private session bus), read back by later runs, and no secret file
//! anywhere in the data directory.

use countersign_fakes::secret_service::PrivateSecretService;

use crate::support::{fakes, reply, Cli};

/// Every file under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_go_to_the_os_keyring_and_are_read_back_by_the_next_run() {
    let keyring = PrivateSecretService::start()
        .expect("gnome-keyring and dbus-daemon run (scripts/setup.sh installs them)");
    let (gmail, muster) = fakes().await;
    let cli = Cli::with_keyring(&keyring);
    let gmail_account = cli.add_gmail(&gmail).await;
    cli.add_muster(&muster).await;

    // Every later run is a new process: the secrets come back from the keyring.
    let listed = cli.exec(&["account", "list"]).await.ok();
    assert_eq!(
        listed.stdout.matches("secret in keyring").count(),
        2,
        "{}",
        listed.stdout
    );
    let draft = gmail.file_draft(&reply(1, "Yes."), None);
    let synced = cli.exec(&["sync", "--json"]).await.ok();
    let synced: serde_json::Value = serde_json::from_str(&synced.stdout).unwrap();
    assert!(
        synced.as_array().unwrap().iter().all(|a| a["ok"] == true),
        "both accounts sync with the secrets read back: {synced}"
    );
    cli.item_id(&draft.id).await;

    let data_files = files(&cli.data_dir());
    let secret_files: Vec<_> = data_files
        .iter()
        .filter(|p| {
            let p = p.display().to_string();
            p.contains("gmail-tokens") || p.contains("muster-secrets")
        })
        .collect();
    assert!(secret_files.is_empty(), "no secret file: {secret_files:?}");
    let token = gmail.issued_tokens();
    assert!(!token.is_empty());
    for path in &data_files {
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in token.iter().map(String::as_str).chain([muster.password()]) {
            assert!(
                !text.contains(secret),
                "{} holds a secret in clear",
                path.display()
            );
        }
    }
    assert!(
        keyring.keyrings_dir().join("login.keyring").exists(),
        "the keyring holds them"
    );
    assert!(gmail_account["id"].is_string());
}
