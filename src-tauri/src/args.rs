//! Command-line arguments: `countersign-desktop [--data-dir DIR] [--demo] [--hidden]`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;

/// The Countersign desktop app: review the emails your AI agents drafted before they are sent.
#[derive(Debug, Parser)]
#[command(name = "countersign-desktop", version, about)]
pub struct Args {
    /// Where the local mirror lives (default: the platform's data directory).
    #[arg(long, env = "COUNTERSIGN_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Run against the embedded fake Gmail and muster, seeded with demo drafts, in a fresh
    /// temporary data directory. `--data-dir` and `COUNTERSIGN_DATA_DIR` are ignored then, so
    /// a demo can never write into a real mirror.
    /// (Only in a build with the `demo` feature, as the package is.)
    #[arg(long)]
    pub demo: bool,

    /// Start hidden in the tray (how "Start at login" starts the app). Without a tray the
    /// window is shown anyway, as there would be no way to open it.
    #[arg(long)]
    pub hidden: bool,

    /// Open only a window with a blank page: no mirror, no sync, no tray. The floor
    /// `scripts/measure-desktop.sh` compares the app with (debug and demo builds only).
    #[cfg(any(debug_assertions, feature = "demo"))]
    #[arg(long, hide = true)]
    pub blank_window: bool,
}

/// The data directory the app runs on. A demo directory is deleted when this is dropped, so it
/// must live as long as the app.
#[derive(Debug)]
pub enum DataDir {
    /// A directory the user chose or the platform default.
    Persistent(PathBuf),
    /// A fresh directory for `--demo`.
    Demo(tempfile::TempDir),
}

impl DataDir {
    /// A fresh, empty temporary directory for a demo.
    pub fn fresh_demo() -> anyhow::Result<DataDir> {
        let dir = tempfile::Builder::new()
            .prefix("countersign-demo-")
            .tempdir()
            .context("cannot create a temporary data directory for demo mode")?;
        Ok(DataDir::Demo(dir))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        match self {
            DataDir::Persistent(path) => path,
            DataDir::Demo(dir) => dir.path(),
        }
    }
}

impl Args {
    /// Resolves the data directory: `--demo` > `--data-dir`/`COUNTERSIGN_DATA_DIR` > platform.
    pub fn data_dir(&self) -> anyhow::Result<DataDir> {
        if self.demo {
            return DataDir::fresh_demo();
        }
        if let Some(dir) = &self.data_dir {
            return Ok(DataDir::Persistent(dir.clone()));
        }
        let dirs = directories::ProjectDirs::from("dev", "countersign", "Countersign")
            .context("cannot find a home directory; pass --data-dir")?;
        Ok(DataDir::Persistent(dirs.data_dir().to_path_buf()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_flag_is_used_as_given() {
        let args = Args::try_parse_from(["countersign-desktop", "--data-dir", "/tmp/x"]).unwrap();
        let dir = args.data_dir().unwrap();
        assert_eq!(dir.path(), Path::new("/tmp/x"));
    }

    #[test]
    fn demo_mode_gets_a_fresh_directory_that_is_removed_afterwards() {
        let args = Args::try_parse_from(["countersign-desktop", "--demo"]).unwrap();
        let dir = args.data_dir().unwrap();
        let path = dir.path().to_path_buf();
        assert!(path.is_dir());
        assert_eq!(std::fs::read_dir(&path).unwrap().count(), 0);
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn version_prints_the_name_and_the_package_version() {
        let shown = Args::try_parse_from(["countersign-desktop", "--version"]).unwrap_err();
        assert_eq!(shown.kind(), clap::error::ErrorKind::DisplayVersion);
        assert_eq!(
            shown.to_string().trim(),
            format!("countersign-desktop {}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn hidden_is_off_unless_asked_for() {
        let args = Args::try_parse_from(["countersign-desktop"]).unwrap();
        assert!(!args.hidden);
        let args = Args::try_parse_from(["countersign-desktop", "--hidden"]).unwrap();
        assert!(args.hidden);
    }

    #[test]
    fn demo_mode_never_uses_the_given_data_dir() {
        let given = tempfile::tempdir().unwrap();
        let args = Args::try_parse_from([
            "countersign-desktop".as_ref(),
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            given.path().as_os_str(),
        ])
        .unwrap();
        let dir = args.data_dir().unwrap();
        assert_ne!(dir.path(), given.path());
        assert!(matches!(dir, DataDir::Demo(_)));
    }
}
