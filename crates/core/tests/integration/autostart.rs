//! "Start at login" writes and removes a real XDG autostart entry in a temporary
//! `XDG_CONFIG_HOME`.

use countersign_core::autostart::{Autostart, ENTRY_FILE};

// The variables are passed in rather than set with `std::env::set_var`: other tests of this
// binary read the environment on other threads at the same time.
#[test]
fn start_at_login_creates_the_entry_in_xdg_config_home_and_removes_it() {
    let config_home = tempfile::tempdir().unwrap();
    let autostart = Autostart::from_vars(
        Some(config_home.path().as_os_str().to_owned()),
        Some("/home/nobody-here".into()),
    )
    .expect("XDG_CONFIG_HOME is set");
    let entry = config_home.path().join("autostart").join(ENTRY_FILE);
    assert_eq!(autostart.entry_path(), entry);
    assert!(!autostart.is_enabled());

    // The autostart directory does not exist yet: it is created.
    assert!(autostart.set(true, "countersign-desktop").unwrap());
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
    assert!(text.contains("\nType=Application\n"), "{text}");
    assert!(
        text.contains("\nExec=countersign-desktop --hidden\n"),
        "{text}"
    );
    assert!(autostart.is_enabled());
    // Nothing but the entry is left in the directory (no partial file).
    let names: Vec<_> = std::fs::read_dir(config_home.path().join("autostart"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(ENTRY_FILE)]);

    // Turning it on again rewrites it for the program given.
    autostart.set(true, "/opt/count ersign").unwrap();
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(
        text.contains("\nExec=\"/opt/count ersign\" --hidden\n"),
        "{text}"
    );

    assert!(!autostart.set(false, "countersign-desktop").unwrap());
    assert!(!entry.exists());
    // Off when already off is fine.
    assert!(!autostart.set(false, "countersign-desktop").unwrap());
}

#[test]
fn an_autostart_directory_that_cannot_be_written_is_an_error_naming_the_entry() {
    let config_home = tempfile::tempdir().unwrap();
    // A file where the autostart directory should be.
    std::fs::write(config_home.path().join("autostart"), b"not a directory").unwrap();
    let autostart = Autostart::in_config_home(config_home.path());
    let error = autostart.enable("countersign-desktop").unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("cannot change the autostart entry"),
        "{message}"
    );
    assert!(message.contains(ENTRY_FILE), "{message}");
    assert!(!autostart.is_enabled());
}

#[test]
fn without_xdg_config_home_the_entry_goes_to_dot_config_under_home() {
    for xdg in [None, Some("".into()), Some("relative/config".into())] {
        let autostart = Autostart::from_vars(xdg.clone(), Some("/home/me".into())).unwrap();
        assert_eq!(
            autostart.entry_path(),
            std::path::Path::new("/home/me/.config/autostart").join(ENTRY_FILE),
            "XDG_CONFIG_HOME={xdg:?}"
        );
    }
    assert_eq!(Autostart::from_vars(None, None), None);
}
