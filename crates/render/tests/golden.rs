//! The golden corpus: every `fixtures/render/**/*.eml` renders to exactly its `.json`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p countersign-render --test render golden` rewrites the JSON;
//! read every changed file before committing it — a golden that records a bug is a defect.

use std::fs;
use std::path::{Path, PathBuf};

use countersign_render::{render_message, RenderOptions};

use crate::support::fixtures;

fn emls(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            emls(&path, out);
        } else if path.extension().is_some_and(|e| e == "eml") {
            out.push(path);
        }
    }
}

fn options_for(eml: &Path) -> RenderOptions {
    let path = eml.with_extension("options.json");
    match fs::read_to_string(&path) {
        Ok(json) => serde_json::from_str(&json).expect("options json"),
        Err(_) => RenderOptions {
            owner_domains: vec!["example.com".into()],
            ..RenderOptions::default()
        },
    }
}

#[test]
fn every_golden_fixture_renders_exactly_as_recorded() {
    let root = fixtures("render");
    let mut files = Vec::new();
    emls(&root, &mut files);
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    // A CI run checks the golden files; a rewrite there would pass whatever the renderer does.
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !(update && ci),
        "UPDATE_GOLDEN=1 under CI: CI checks the golden JSON, it never rewrites it"
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for eml in &files {
        let raw = fs::read(eml).expect("read eml");
        let view = render_message(&raw, &options_for(eml));
        let actual = serde_json::to_string_pretty(&view).expect("serialize") + "\n";
        let golden = eml.with_extension("json");
        ran += 1;
        if update {
            fs::write(&golden, &actual).expect("write golden");
            continue;
        }
        let expected = fs::read_to_string(&golden).unwrap_or_default();
        if expected != actual {
            let diff = similar::TextDiff::from_lines(&expected, &actual)
                .unified_diff()
                .context_radius(3)
                .header("expected", "actual")
                .to_string();
            failures.push(format!(
                "{}:\n{diff}",
                eml.strip_prefix(&root).unwrap().display()
            ));
        }
        // The JSON is the contract with the UI: it must read back into the same view.
        let back: countersign_render::ReviewView =
            serde_json::from_str(&actual).expect("deserialize");
        assert_eq!(back, view, "{} does not round-trip", eml.display());
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} fixtures differ from their golden JSON (UPDATE_GOLDEN=1 rewrites):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 30, "only {ran} golden fixtures ran");
    assert!(
        files
            .iter()
            .any(|f| f.parent().is_some_and(|p| p.ends_with("malformed"))),
        "the malformed set did not run"
    );
    eprintln!("golden fixtures run: {ran}");
}
