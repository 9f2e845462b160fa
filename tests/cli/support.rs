//! Run the real `countersign` binary against a temp data directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// What a run printed.
pub struct Output {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// A CLI bound to one fresh data directory.
pub struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    pub fn new() -> Cli {
        Cli {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `countersign --data-dir DIR ARGS…`
    pub fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(binary("countersign", "countersign-cli"));
        command
            .arg("--data-dir")
            .arg(self.data_dir())
            .args(args)
            .env_remove("COUNTERSIGN_DATA_DIR");
        output(command)
    }

    /// `COUNTERSIGN_DATA_DIR=DIR countersign ARGS…`
    pub fn run_with_env_dir(&self, args: &[&str]) -> Output {
        let mut command = Command::new(binary("countersign", "countersign-cli"));
        command
            .args(args)
            .env("COUNTERSIGN_DATA_DIR", self.data_dir());
        output(command)
    }
}

fn output(mut command: Command) -> Output {
    let out = command.output().expect("run countersign");
    Output {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The path of a workspace binary, built first if this test run did not build it.
pub fn binary(name: &str, package: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/cli-… → target/debug/
    let profile_dir: &Path = exe.parent().and_then(Path::parent).unwrap();
    let path = profile_dir.join(name);
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", package, "--bin", name])
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cannot build {name}");
    });
    path
}
