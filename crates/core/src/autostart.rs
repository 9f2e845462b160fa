//! "Start at login": an XDG autostart entry that starts the desktop app hidden in the tray.
//!
//! Desktop sessions that follow the XDG Autostart Specification start every `*.desktop` file in
//! `$XDG_CONFIG_HOME/autostart/` (default `~/.config/autostart/`) at login:
//! <https://specifications.freedesktop.org/autostart-spec/latest/>. The entry's format is the
//! Desktop Entry Specification's, including how `Exec` arguments are quoted:
//! <https://specifications.freedesktop.org/desktop-entry-spec/latest/exec-variables.html>.
//! The setting is the file itself: it is on exactly when the entry exists.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The entry's file name inside the autostart directory.
pub const ENTRY_FILE: &str = "countersign.desktop";

/// The desktop app's flag for "start hidden in the tray", written into the entry.
pub const HIDDEN_FLAG: &str = "--hidden";

/// The installed desktop app's name, as the package puts it on `PATH` (`/usr/bin`).
pub const INSTALLED_PROGRAM: &str = "countersign-desktop";

/// The autostart directory of one user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Autostart {
    dir: PathBuf,
}

impl Autostart {
    /// `$XDG_CONFIG_HOME/autostart`, or `$HOME/.config/autostart` (see [`Autostart::from_vars`]).
    pub fn from_env() -> Option<Autostart> {
        Autostart::from_vars(
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// The autostart directory for these values of `XDG_CONFIG_HOME` and `HOME`:
    /// `$XDG_CONFIG_HOME/autostart`, or `$HOME/.config/autostart` when `XDG_CONFIG_HOME` is
    /// unset, empty or relative (the base-directory spec says to ignore a relative one).
    /// `None` when neither tells where the configuration lives.
    pub fn from_vars(
        xdg_config_home: Option<std::ffi::OsString>,
        home: Option<std::ffi::OsString>,
    ) -> Option<Autostart> {
        let config_home = xdg_config_home
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| {
                home.map(PathBuf::from)
                    .filter(|home| home.is_absolute())
                    .map(|home| home.join(".config"))
            })?;
        Some(Autostart::in_config_home(&config_home))
    }

    /// The autostart directory under the configuration directory `config_home`.
    pub fn in_config_home(config_home: &Path) -> Autostart {
        Autostart {
            dir: config_home.join("autostart"),
        }
    }

    /// Where the entry is (whether or not it exists).
    pub fn entry_path(&self) -> PathBuf {
        self.dir.join(ENTRY_FILE)
    }

    /// Whether the app starts at login (the entry exists).
    pub fn is_enabled(&self) -> bool {
        self.entry_path().is_file()
    }

    /// Writes the entry so that `program --hidden` starts at login; replaces an older entry.
    pub fn enable(&self, program: &str) -> Result<()> {
        let path = self.entry_path();
        let failed = |source| Error::Autostart {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        // Written beside and renamed over: a session starting meanwhile never reads half a file.
        let partial = self.dir.join(format!(".{ENTRY_FILE}.partial"));
        std::fs::write(&partial, desktop_entry(program)).map_err(failed)?;
        std::fs::rename(&partial, &path).map_err(failed)
    }

    /// Removes the entry; nothing to do when there is none.
    pub fn disable(&self) -> Result<()> {
        let path = self.entry_path();
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(Error::Autostart {
                path,
                source: error,
            }),
            _ => Ok(()),
        }
    }

    /// Turns the entry on or off for `program`; returns whether it is on now.
    pub fn set(&self, enabled: bool, program: &str) -> Result<bool> {
        if enabled {
            self.enable(program)?;
        } else {
            self.disable()?;
        }
        Ok(self.is_enabled())
    }
}

/// The program to write into the entry for the running executable `exe`: the bare name when it
/// is the installed app (found on `PATH` after an upgrade too), else its absolute path (a build
/// run from a checkout).
pub fn program_for(exe: &Path) -> String {
    if exe == Path::new("/usr/bin").join(INSTALLED_PROGRAM) {
        INSTALLED_PROGRAM.to_owned()
    } else {
        exe.display().to_string()
    }
}

/// The entry's text for `program`.
pub fn desktop_entry(program: &str) -> String {
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Countersign\n\
         Comment=Review the emails your AI agents drafted before they are sent\n\
         Exec={} {HIDDEN_FLAG}\n\
         Icon=countersign-desktop\n\
         Terminal=false\n\
         X-GNOME-Autostart-enabled=true\n",
        exec_quote(program)
    )
}

/// Quotes one `Exec` argument as the Desktop Entry Specification asks: inside double quotes,
/// `"`, `` ` ``, `$` and `\` take a backslash; `%` is doubled in any case (field codes).
fn exec_quote(argument: &str) -> String {
    let reserved = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\''
                    | '\\'
                    | '>'
                    | '<'
                    | '~'
                    | '|'
                    | '&'
                    | ';'
                    | '$'
                    | '*'
                    | '?'
                    | '#'
                    | '('
                    | ')'
                    | '`'
            )
    };
    let argument = argument.replace('%', "%%");
    if !argument.chars().any(reserved) {
        return argument;
    }
    let mut quoted = String::with_capacity(argument.len() + 2);
    quoted.push('"');
    for c in argument.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_program_is_written_as_it_is() {
        assert_eq!(exec_quote("countersign-desktop"), "countersign-desktop");
        assert!(
            desktop_entry("countersign-desktop").contains("\nExec=countersign-desktop --hidden\n")
        );
    }

    #[test]
    fn a_path_with_spaces_and_reserved_characters_is_quoted_per_the_spec() {
        assert_eq!(
            exec_quote("/home/me/my apps/$x/countersign"),
            r#""/home/me/my apps/\$x/countersign""#
        );
        assert_eq!(exec_quote("/opt/100%/app"), "/opt/100%%/app");
    }

    #[test]
    fn the_installed_app_is_named_by_its_name_a_checkout_by_its_path() {
        assert_eq!(
            program_for(Path::new("/usr/bin/countersign-desktop")),
            "countersign-desktop"
        );
        assert_eq!(
            program_for(Path::new("/src/target/release/countersign-desktop")),
            "/src/target/release/countersign-desktop"
        );
    }
}
