//! Where Countersign keeps its data, the same for the desktop app and the CLI.

use std::path::PathBuf;

/// The environment variable that overrides the platform data directory.
pub const DATA_DIR_ENV: &str = "COUNTERSIGN_DATA_DIR";

/// The data directory: `COUNTERSIGN_DATA_DIR` when set, else the platform's (on Linux
/// `~/.local/share/countersign`).
pub fn default_data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("dev", "countersign", "countersign")
        .map(|dirs| dirs.data_dir().to_path_buf())
}
