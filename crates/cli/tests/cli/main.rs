//! The `countersign` CLI as a user runs it: a real binary, a real data directory.

mod accounts;
mod adversary;
mod audit;
mod dispatch;
mod history;
mod keyring;
mod muster;
mod muster_status;
mod review;
mod rule_labels;
mod rules;
mod sealed;
mod shown;
mod support;

use support::Cli;

#[test]
fn list_on_an_empty_mirror_prints_an_empty_json_array() {
    let cli = Cli::new();
    let out = cli.run(&["list", "--json"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "[]");
    assert!(cli.data_dir().join("mirror.sqlite3").is_file());
}

#[test]
fn version_prints_the_package_version() {
    let out = Cli::new().run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        out.stdout.trim(),
        format!("countersign {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_data_dir_comes_from_the_environment_when_not_given() {
    let cli = Cli::new();
    let out = cli.run_with_env_dir(&["list", "--json"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(cli.data_dir().join("mirror.sqlite3").is_file());
}

#[test]
fn a_corrupt_mirror_is_named_in_the_error_and_left_alone() {
    let cli = Cli::new();
    std::fs::create_dir_all(cli.data_dir()).unwrap();
    let mirror = cli.data_dir().join("mirror.sqlite3");
    std::fs::write(&mirror, b"not a database at all").unwrap();
    let out = cli.run(&["list", "--json"]);
    assert!(!out.status.success());
    assert!(
        out.stderr.contains(&mirror.display().to_string()),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("cannot open the mirror"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read(&mirror).unwrap(), b"not a database at all");
    assert!(out.stdout.is_empty());
}

#[test]
fn deciding_on_an_unknown_item_says_so() {
    let out = Cli::new().run(&["approve", "42"]);
    assert!(!out.status.success());
    assert!(out.stderr.contains("cannot find item 42"), "{}", out.stderr);
}

#[test]
fn pause_and_resume_are_acknowledged() {
    let cli = Cli::new();
    let out = cli.run(&["pause"]);
    assert!(out.status.success());
    assert!(out.stdout.contains("paused"), "{}", out.stdout);
    let out = cli.run(&["resume", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["message"], "Sending resumed.");
}

#[test]
fn the_undo_window_is_set_in_seconds_and_refused_above_a_minute() {
    let cli = Cli::new();
    let out = cli.run(&["settings", "set", "undo-window", "3", "--json"]);
    assert!(out.status.success(), "{}", out.stderr);
    let settings: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(settings["undoWindowSecs"], 3);

    let out = cli.run(&["settings", "set", "undo-window", "61"]);
    assert!(!out.status.success());
    assert!(out.stderr.contains("at most 60 seconds"), "{}", out.stderr);
    let out = cli.run(&["settings", "show"]);
    assert!(
        out.stdout.contains("undo-window                 3 s"),
        "{}",
        out.stdout
    );
}

#[test]
fn add_gmail_with_a_missing_client_secret_file_names_the_file() {
    let cli = Cli::new();
    let missing = cli.scratch().join("nowhere.json");
    let missing = missing.display().to_string();
    let out = cli.run(&["account", "add-gmail", "--client-secret", &missing]);
    assert!(!out.status.success());
    assert!(
        out.stderr
            .contains(&format!("cannot read the OAuth client file {missing}")),
        "{}",
        out.stderr
    );
}
