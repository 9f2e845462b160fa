//! `countersign account …` against the fakes: Gmail through the whole OAuth flow, muster with
//! its password on stdin, listing and removing.

use countersign_fakes::gmail::SCOPE_GMAIL_MODIFY;

use crate::support::{fakes, Cli};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_gmail_through_the_consent_page_lists_the_granted_scopes_and_file_storage() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    let added = cli.add_gmail(&gmail).await;
    assert_eq!(added["address"], "owner@example.com");
    assert_eq!(added["kind"], "gmail");

    let accounts = cli.exec(&["account", "list", "--json"]).await.json();
    let accounts = accounts.as_array().unwrap();
    assert_eq!(accounts.len(), 1);
    let account = &accounts[0];
    assert_eq!(account["id"], added["id"]);
    assert_eq!(
        account["grantedScopes"],
        serde_json::json!([SCOPE_GMAIL_MODIFY])
    );
    assert_eq!(account["secretStorage"], "file");
    assert_eq!(account["online"], true);
    assert_eq!(account["lastSyncAt"], serde_json::Value::Null);
    assert_eq!(account["sendRefusal"], serde_json::Value::Null);
    let id = account["id"].as_str().unwrap();
    assert!(
        cli.data_dir()
            .join("gmail-tokens")
            .join(format!("{id}.json"))
            .is_file(),
        "the tokens are not in the token file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gmail_grant_without_a_sending_scope_is_added_with_a_warning_saying_so() {
    let (gmail, _muster) = fakes().await;
    gmail.set_grant_scopes(Some(vec![
        "https://www.googleapis.com/auth/gmail.readonly".into(),
        "https://www.googleapis.com/auth/gmail.send".into(),
    ]));
    let cli = Cli::new();
    let added = cli.add_gmail(&gmail).await;
    let refusal = added["sendRefusal"].as_str().expect("a refusal sentence");
    assert!(refusal.contains("gmail.modify"), "{refusal}");
    assert!(
        cli.transcript().contains(&format!("warning: {refusal}")),
        "no warning on stderr: {}",
        cli.transcript()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_muster_takes_the_password_from_stdin_and_lists_the_instance() {
    let (_gmail, muster) = fakes().await;
    let cli = Cli::new();
    let added = cli.add_muster(&muster).await;
    assert_eq!(added["kind"], "muster");
    assert_eq!(added["address"], muster.url());

    let out = cli.exec(&["account", "list"]).await.ok();
    assert!(out.stdout.contains(&muster.url()), "{}", out.stdout);
    assert!(out.stdout.contains("muster"), "{}", out.stdout);
    assert!(out.stdout.contains("secret in file"), "{}", out.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_muster_password_is_a_clear_error_and_stores_nothing() {
    let (_gmail, muster) = fakes().await;
    let cli = Cli::new();
    let url = muster.url();
    let out = cli
        .exec_with_stdin(
            &["account", "add-muster", "--url", &url, "--password-stdin"],
            "not-the-password\n",
        )
        .await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("wrong password"), "{}", out.stderr);
    assert!(!out.stderr.contains("not-the-password"), "{}", out.stderr);
    let accounts = cli.exec(&["account", "list", "--json"]).await.json();
    assert_eq!(accounts, serde_json::json!([]));
    let secrets = cli.data_dir().join("muster-secrets");
    let stored = std::fs::read_dir(&secrets).map(|d| d.count()).unwrap_or(0);
    assert_eq!(stored, 0, "a password was stored for a refused sign-in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_muster_without_password_stdin_refuses_to_take_the_password_elsewhere() {
    let (_gmail, muster) = fakes().await;
    let cli = Cli::new();
    let url = muster.url();
    let out = cli.exec(&["account", "add-muster", "--url", &url]).await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("--password-stdin"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_gmail_account_removes_its_token_file_and_its_items() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    let added = cli.add_gmail(&gmail).await;
    let id = added["id"].as_str().unwrap();
    let token_file = cli
        .data_dir()
        .join("gmail-tokens")
        .join(format!("{id}.json"));
    assert!(token_file.is_file());
    gmail.file_draft(&crate::support::reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    assert_eq!(
        cli.exec(&["list", "--json"])
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let out = cli.exec(&["account", "remove", id]).await.ok();
    assert!(out.stdout.contains(id), "{}", out.stdout);
    assert!(!token_file.exists(), "the token file is still there");
    assert_eq!(
        cli.exec(&["account", "list", "--json"]).await.json(),
        serde_json::json!([])
    );
    assert_eq!(
        cli.exec(&["list", "--json"]).await.json(),
        serde_json::json!([])
    );

    let again = cli.exec(&["account", "remove", id]).await;
    assert!(!again.status.success());
    assert!(
        again.stderr.contains("cannot find account"),
        "{}",
        again.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_output_ever_contains_the_oauth_tokens_or_the_muster_password() {
    let (gmail, muster) = fakes().await;
    let cli = Cli::new();
    let added = cli.add_gmail(&gmail).await;
    // Signing in with every log switched on: the password must not show up in any of it.
    let url = muster.url();
    let mut add_muster = cli.command(&["account", "add-muster", "--url", &url, "--password-stdin"]);
    add_muster
        .env("RUST_LOG", "trace")
        .stdin(std::process::Stdio::piped());
    let mut child = add_muster.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{}\n", muster.password()).as_bytes())
        .await
        .unwrap();
    drop(stdin);
    cli.finish(child, &["account", "add-muster"]).await.ok();
    gmail.file_draft(&crate::support::reply(1, "Hello"), None);
    cli.exec(&["sync"]).await.ok();
    cli.exec(&["sync", "--json"]).await.ok();
    cli.exec(&["account", "list"]).await.ok();
    cli.exec(&["account", "list", "--json"]).await.ok();
    cli.exec(&["list", "--json"]).await.ok();
    cli.exec(&["dispatch", "--json"]).await.ok();
    // A refresh: the new access token must not leak either.
    gmail.expire_access_tokens();
    cli.exec(&["sync"]).await.ok();
    // Verbose logs too: yup-oauth2's debug output is filtered whatever RUST_LOG says.
    let mut verbose = cli.command(&["sync"]);
    verbose.env("RUST_LOG", "trace");
    let out = verbose.output().await.unwrap();
    cli.keep_text(String::from_utf8_lossy(&out.stdout).into_owned());
    cli.keep_text(String::from_utf8_lossy(&out.stderr).into_owned());

    let id = added["id"].as_str().unwrap();
    let tokens: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            cli.data_dir()
                .join("gmail-tokens")
                .join(format!("{id}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    let access = tokens["access_token"].as_str().expect("an access token");
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    let transcript = cli.transcript();
    assert!(!transcript.is_empty());
    for (what, secret) in [
        ("access token", access),
        ("refresh token", refresh),
        ("muster password", muster.password()),
    ] {
        assert!(secret.len() >= 8, "{what} too short to search for");
        assert!(
            !transcript.contains(secret),
            "the {what} was printed:\n{transcript}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_whose_sign_in_google_ended_says_so_in_the_list() {
    let (gmail, _muster) = fakes().await;
    let cli = Cli::new();
    cli.add_gmail(&gmail).await;
    gmail.revoke_refresh_tokens();
    // The sync meets `invalid_grant`: the account is marked for reconnecting.
    cli.exec(&["sync"]).await;

    let accounts = cli.exec(&["account", "list", "--json"]).await.json();
    let reason = accounts[0]["reconnectReason"]
        .as_str()
        .expect("a reconnect reason");
    assert!(reason.starts_with("Reconnect needed"), "{reason}");
    let out = cli.exec(&["account", "list"]).await.ok();
    assert!(out.stdout.contains(reason), "{}", out.stdout);
}
