//! Run the real `countersign` binary against a temp data directory, and the fakes it talks to.

#![allow(dead_code)] // Each helper is used by some tests, not necessarily by all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// What a run printed.
#[derive(Debug)]
pub struct Output {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The stdout as JSON, after checking that the command succeeded.
    pub fn json(&self) -> serde_json::Value {
        assert!(
            self.status.success(),
            "failed: {}\n{}",
            self.stderr,
            self.stdout
        );
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    /// The command succeeded.
    pub fn ok(self) -> Output {
        assert!(
            self.status.success(),
            "failed: {}\n{}",
            self.stderr,
            self.stdout
        );
        self
    }
}

/// A CLI bound to one fresh data directory. Every output of every run is kept, so a test can
/// check that no secret was ever printed.
pub struct Cli {
    dir: tempfile::TempDir,
    transcript: Mutex<Vec<String>>,
    /// The environment of a private Secret Service, when secrets go to the OS keyring.
    keyring: Option<Vec<(String, String)>>,
}

/// Ana's question `n` in the fake Gmail's inbox; its thread, for the reply to be filed on (the
/// message a reply answers must be in the reply's own thread, or the reply is flagged and held).
pub fn question(gmail: &countersign_fakes::gmail::FakeGmail, n: usize) -> String {
    let raw = format!(
        "From: Ana <ana@example.com>\r\nTo: owner@example.com\r\nSubject: Question {n}\r\n\
         Message-ID: <question-{n}@example.com>\r\n\r\nDoes Tuesday work?\r\n"
    );
    gmail.add_inbox_message(raw.as_bytes(), None).1
}

impl Cli {
    /// No settling and no undo window: an armed rule decides a draft, and the decision goes
    /// out, at the first dispatch.
    pub async fn rules_act_at_once(&self) {
        for (setting, value) in [("rule-settle", "0"), ("undo-window", "0")] {
            self.exec(&["settings", "set", setting, value]).await.ok();
        }
    }

    pub fn new() -> Cli {
        Cli {
            dir: tempfile::tempdir().unwrap(),
            transcript: Mutex::new(Vec::new()),
            keyring: None,
        }
    }

    /// A CLI whose secrets go to the OS keyring that `service` is (and nowhere else).
    pub fn with_keyring(service: &countersign_fakes::secret_service::PrivateSecretService) -> Cli {
        Cli {
            keyring: Some(service.env()),
            ..Cli::new()
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A scratch directory beside the data dir (for the client secret file…).
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// Everything every run printed so far, stdout and stderr.
    pub fn transcript(&self) -> String {
        self.transcript.lock().unwrap().join("\n")
    }

    /// `countersign --data-dir DIR ARGS…`
    pub fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_countersign"));
        command
            .arg("--data-dir")
            .arg(self.data_dir())
            .args(args)
            .env_remove("COUNTERSIGN_DATA_DIR")
            // Never the keyring of whoever runs the suite (nor start one on their bus).
            .env("COUNTERSIGN_SECRET_STORE", "file");
        self.keep(output(command))
    }

    /// `COUNTERSIGN_DATA_DIR=DIR countersign ARGS…`
    pub fn run_with_env_dir(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_countersign"));
        command
            .args(args)
            .env("COUNTERSIGN_DATA_DIR", self.data_dir())
            .env("COUNTERSIGN_SECRET_STORE", "file");
        self.keep(output(command))
    }

    /// The command for `ARGS…`, as the async tests start it: secrets in files (no keyring is
    /// touched) unless the CLI was made [`Cli::with_keyring`], logs at their default level.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"));
        command
            .arg("--data-dir")
            .arg(self.data_dir())
            .args(args)
            .env_remove("COUNTERSIGN_DATA_DIR")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match &self.keyring {
            Some(env) => command
                .env_remove("COUNTERSIGN_SECRET_STORE")
                .envs(env.iter().map(|(k, v)| (k, v))),
            None => command.env("COUNTERSIGN_SECRET_STORE", "file"),
        };
        command
    }

    /// Run `ARGS…` to the end (at most a minute).
    pub async fn exec(&self, args: &[&str]) -> Output {
        let child = self.command(args).spawn().expect("start countersign");
        self.finish(child, args).await
    }

    /// `show ID`, as the owner reads a draft before approving it (an approval binds to the
    /// version `show` printed).
    pub async fn show(&self, id: &str) -> Output {
        self.exec(&["show", id]).await.ok()
    }

    /// Run `ARGS…` with `input` on stdin.
    pub async fn exec_with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut command = self.command(args);
        command.stdin(Stdio::piped());
        let mut child = command.spawn().expect("start countersign");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).await.unwrap();
        drop(stdin);
        self.finish(child, args).await
    }

    /// Start `ARGS…` in the background.
    pub fn spawn(&self, args: &[&str]) -> tokio::process::Child {
        self.command(args).spawn().expect("start countersign")
    }

    /// Wait for a background run and keep its output.
    pub async fn finish(&self, child: tokio::process::Child, args: &[&str]) -> Output {
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("countersign {args:?} did not finish within a minute"))
            .expect("wait for countersign");
        self.keep(Output {
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Keep what a process printed that the test read itself.
    pub fn keep_text(&self, text: String) {
        self.transcript.lock().unwrap().push(text);
    }

    fn keep(&self, out: Output) -> Output {
        let mut transcript = self.transcript.lock().unwrap();
        transcript.push(out.stdout.clone());
        transcript.push(out.stderr.clone());
        out
    }

    /// `account add-gmail --no-browser` against `gmail`, playing the browser: the consent
    /// URL is read from stderr and "clicked" like `auto_consent_browser` in core does.
    /// Returns the account as printed with `--json`.
    pub async fn add_gmail(&self, gmail: &FakeGmail) -> serde_json::Value {
        let secret = self.scratch().join("client_secret.json");
        std::fs::write(&secret, gmail.client_secret_json().to_string()).unwrap();
        let secret = secret.display().to_string();
        let api_base = gmail.api_base();
        let args = [
            "account",
            "add-gmail",
            "--client-secret",
            &secret,
            "--api-base",
            &api_base,
            "--no-browser",
            "--json",
        ];
        let mut child = self.spawn(&args);
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = String::new();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                seen.push_str(&line);
                seen.push('\n');
                if let Some(url) = line.trim().strip_prefix("http") {
                    return format!("http{url}");
                }
            }
            panic!("no consent URL on stderr: {seen}");
        })
        .await
        .expect("the consent URL within 30 s");
        consent(&url).await;
        let mut rest = String::new();
        lines.into_inner().read_to_string(&mut rest).await.unwrap();
        self.keep_text(format!("{seen}{rest}"));
        let out = self.finish(child, &args).await;
        out.json()
    }

    /// `account add-muster --password-stdin` with the fake's password.
    pub async fn add_muster(&self, muster: &FakeMuster) -> serde_json::Value {
        let url = muster.url();
        self.exec_with_stdin(
            &[
                "account",
                "add-muster",
                "--url",
                &url,
                "--password-stdin",
                "--json",
            ],
            &format!("{}\n", muster.password()),
        )
        .await
        .json()
    }

    /// `list --json`, the item whose external id is `external_id`.
    pub async fn item(&self, external_id: &str) -> serde_json::Value {
        let items = self.exec(&["list", "--json"]).await.json();
        items
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["externalId"] == external_id)
            .unwrap_or_else(|| panic!("{external_id} is not listed: {items}"))
            .clone()
    }

    /// The id of the item for `external_id`, as the commands take it.
    pub async fn item_id(&self, external_id: &str) -> String {
        self.item(external_id).await["id"].to_string()
    }
}

/// What the browser does on the fake's consent page: it approves at once and redirects to the
/// loopback listener of `countersign`, which gets the code.
async fn consent(url: &str) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let page = http.get(url).send().await.expect("open the consent page");
    let location = page
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .expect("the consent page redirects")
        // The listener binds 127.0.0.1 but calls itself localhost: stay on IPv4.
        .replacen("://localhost:", "://127.0.0.1:", 1);
    let back = http
        .get(&location)
        .send()
        .await
        .expect("reach the loopback listener");
    assert!(back.status().is_success(), "{}", back.status());
}

/// Both fakes on 127.0.0.1.
pub async fn fakes() -> (FakeGmail, FakeMuster) {
    let gmail = FakeGmail::start(GmailConfig::default()).await.unwrap();
    let muster = FakeMuster::start(MusterConfig::default()).await.unwrap();
    (gmail, muster)
}

/// Wait until `check` holds, or fail after `limit`.
pub async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < limit {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within {limit:?}");
}

/// A reply with a PDF attachment, as an agent files it.
pub fn reply_with_attachment(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana Lima <ana@example.com>\r\n\
         Subject: Re: Invoice {n}\r\nMessage-ID: <draft-{n}@agent.example>\r\n\
         In-Reply-To: <parent-{n}@example.com>\r\nReferences: <parent-{n}@example.com>\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b{n}\"\r\n\r\n\
         --b{n}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n\
         --b{n}\r\nContent-Type: application/pdf; name=\"invoice-{n}.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"invoice-{n}.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDw+PgplbmRvYmoK\r\n\
         --b{n}--\r\n"
    )
    .into_bytes()
}

/// A plain reply.
pub fn reply(n: usize, body: &str) -> Vec<u8> {
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: Re: Question {n}\r\nMessage-ID: <reply-{n}@agent.example>\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn output(mut command: Command) -> Output {
    let out = command.output().expect("run countersign");
    Output {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
