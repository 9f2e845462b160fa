//! The UI's TypeScript types are generated from the Rust types the shell sends (ts-rs), so the
//! two cannot drift apart: this test writes them to a temp dir and compares them with
//! `ui/src/lib/generated/`, which `ui/src/lib/types.ts` re-exports. After changing a type, run
//! `COUNTERSIGN_WRITE_UI_TYPES=1 cargo test -p countersign-desktop ui_types` and commit the
//! files it wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ts_rs::{Config, TS};

/// Every type a command returns or an event carries; their dependencies come with them.
fn export_all(dir: &Path) {
    let cfg = Config::new()
        .with_out_dir(dir)
        // ids and counts are JSON numbers well inside 2^53.
        .with_large_int("number");
    countersign_core::review::ReviewDetail::export_all(&cfg).unwrap();
    countersign_core::store::ItemSummary::export_all(&cfg).unwrap();
    countersign_core::store::Settings::export_all(&cfg).unwrap();
    countersign_core::store::SettingsChange::export_all(&cfg).unwrap();
    countersign_core::store::Decision::export_all(&cfg).unwrap();
    countersign_core::render::AttachmentPreview::export_all(&cfg).unwrap();
    countersign_core::decide::Shown::export_all(&cfg).unwrap();
    countersign_core::history::HistoryFilter::export_all(&cfg).unwrap();
    countersign_core::history::HistoryEntry::export_all(&cfg).unwrap();
    countersign_core::history::AgentFigures::export_all(&cfg).unwrap();
    countersign_core::history::LeftMessage::export_all(&cfg).unwrap();
    countersign_core::store::RecordStanding::export_all(&cfg).unwrap();
    countersign_core::decide::Listed::export_all(&cfg).unwrap();
    countersign_core::decide::BulkOutcome::export_all(&cfg).unwrap();
    countersign_core::selection::SelectionSummary::export_all(&cfg).unwrap();
    countersign_core::store::ShownPart::export_all(&cfg).unwrap();
    crate::commands::settings::AppStatus::export_all(&cfg).unwrap();
    crate::commands::review::SavedAttachment::export_all(&cfg).unwrap();
    crate::commands::review::AttachmentView::export_all(&cfg).unwrap();
    crate::commands::settings::AccountStatus::export_all(&cfg).unwrap();
    crate::error::UiError::export_all(&cfg).unwrap();
    countersign_core::app::ItemsChanged::export_all(&cfg).unwrap();
    countersign_core::store::PageStart::export_all(&cfg).unwrap();
    crate::commands::queue::QueueView::export_all(&cfg).unwrap();
    crate::events::Reachability::export_all(&cfg).unwrap();
    crate::events::RefusalNotice::export_all(&cfg).unwrap();
    crate::events::OpenItem::export_all(&cfg).unwrap();
    crate::commands::rules::RuleView::export_all(&cfg).unwrap();
    countersign_core::rules::RuleDefinition::export_all(&cfg).unwrap();
    crate::commands::rules::RuleTest::export_all(&cfg).unwrap();
    countersign_core::store::MirroredLabel::export_all(&cfg).unwrap();
    write_index(dir);
}

/// `index.ts`: every generated type, for `ui/src/lib/types.ts` to re-export.
fn write_index(dir: &Path) {
    let mut names: Vec<String> = files(dir)
        .into_keys()
        .filter_map(|f| f.strip_suffix(".ts").map(str::to_owned))
        .filter(|name| name != "index")
        .collect();
    names.sort();
    let mut index =
        String::from("// Generated with the types beside it (see src-tauri/src/ui_types.rs).\n");
    for name in names {
        index.push_str(&format!("export type {{ {name} }} from \"./{name}\";\n"));
    }
    std::fs::write(dir.join("index.ts"), index).unwrap();
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "ts"))
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read_to_string(&p).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_ui_types_are_the_ones_generated_from_the_rust_types() {
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/generated");
    if std::env::var_os("COUNTERSIGN_WRITE_UI_TYPES").is_some() {
        // A CI run checks the committed types; writing them there would pass any drift.
        let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !ci,
            "COUNTERSIGN_WRITE_UI_TYPES under CI: CI checks ui/src/lib/generated/, it never \
             rewrites it"
        );
        let _ = std::fs::remove_dir_all(&committed);
        export_all(&committed);
        return;
    }
    let fresh = tempfile::tempdir().unwrap();
    export_all(fresh.path());
    let (want, have) = (files(fresh.path()), files(&committed));
    let stale: Vec<&String> = want
        .keys()
        .chain(have.keys())
        .filter(|name| want.get(*name) != have.get(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "ui/src/lib/generated/ is out of date with the Rust types ({stale:?}); run \
         COUNTERSIGN_WRITE_UI_TYPES=1 cargo test -p countersign-desktop ui_types and commit it"
    );
}
