//! Checks of the security settings in `tauri.conf.json` and `capabilities/`: they are easy to
//! loosen by accident in an edit, and nothing else fails when they are.
//!
//! Being an integration test also makes `cargo test --workspace` build the real
//! `countersign-desktop` binary (with the workspace's feature set) before any test runs, which
//! the desktop e2e suite in `tests/desktop` starts.

use serde_json::Value;

fn read_json(relative: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn csp() -> serde_json::Map<String, Value> {
    read_json("tauri.conf.json")["app"]["security"]["csp"]
        .as_object()
        .expect("the CSP is set (as an object), never null")
        .clone()
}

#[test]
fn the_window_csp_allows_only_our_own_scripts_and_no_remote_origin_but_for_images() {
    let csp = csp();
    assert_eq!(csp["default-src"], "'self'");
    assert_eq!(csp["script-src"], "'self'");
    assert_eq!(csp["object-src"], "'none'");
    assert_eq!(csp["base-uri"], "'none'");
    for (directive, sources) in &csp {
        let sources = sources.as_str().unwrap();
        for source in sources.split_whitespace() {
            assert!(
                !matches!(source, "*" | "'unsafe-eval'"),
                "{directive} allows {source}"
            );
            // A srcdoc mail frame inherits this policy and can only narrow it, so images are
            // the one kind of remote content the window may allow: "load remote content for
            // this draft" needs it, and the frame's own CSP blocks them until the owner asks.
            // Nothing that runs code, fetches data or frames a page may name a remote origin.
            let remote = source.starts_with("http") && source != "http://ipc.localhost";
            assert!(
                !remote || directive == "img-src",
                "{directive} allows the remote origin {source}"
            );
        }
    }
    assert!(!csp["script-src"]
        .as_str()
        .unwrap()
        .contains("unsafe-inline"));
}

#[test]
fn the_ui_is_embedded_and_never_loaded_from_a_dev_server() {
    let config = read_json("tauri.conf.json");
    assert_eq!(config["build"]["frontendDist"], "../ui/dist");
    assert!(config["build"].get("devUrl").is_none());
}

#[test]
fn capabilities_are_granted_to_the_main_window_only() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let capability: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            capability["windows"],
            serde_json::json!(["main"]),
            "{}",
            path.display()
        );
        assert!(capability.get("webviews").is_none(), "{}", path.display());
        assert!(capability.get("remote").is_none(), "{}", path.display());
    }
}

/// The quoted names between `start` and the next `]` of `source`.
fn names_after(source: &str, start: &str) -> Vec<String> {
    let from = source
        .find(start)
        .unwrap_or_else(|| panic!("{start} not found"))
        + start.len();
    let list = &source[from..from + source[from..].find(']').unwrap()];
    list.split(',')
        .map(|entry| {
            // A handler is named by its path (`commands::approve`, `welcome::try_demo`); the
            // command is its last segment.
            let entry = entry.trim().trim_matches('"');
            entry.rsplit("::").next().unwrap_or(entry).to_string()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn every_command_the_app_registers_is_granted_to_the_main_window_and_nothing_more() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = std::fs::read_to_string(dir.join("build.rs")).unwrap();
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    let mut listed = names_after(&build, "const COMMANDS: &[&str] = &[");
    let mut registered = names_after(&main, "tauri::generate_handler![");
    listed.sort();
    registered.sort();
    assert_eq!(
        listed, registered,
        "build.rs must list exactly the registered commands"
    );

    let capability = read_json("capabilities/main.json");
    let mut granted: Vec<String> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
        .map(|p| p.replace('-', "_"))
        .collect();
    granted.sort();
    assert_eq!(granted, registered, "capabilities/main.json grants");
}
