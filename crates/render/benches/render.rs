//! Render benchmark: the median time to render each class of golden fixture, and how the whole
//! pipeline (parse, sanitize, sniff, hash, flags) compares with mail-parser's bare parse of the
//! same bytes.
//!
//! `cargo bench -p countersign-render --bench render` (plain timing loop, no harness). Set
//! `RENDER_BENCH_ROUNDS` to change the number of timed rounds per fixture (default 200).

use std::collections::BTreeMap;
use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use countersign_render::{render_message, RenderOptions};
use mail_parser::MessageParser;

fn emls(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("fixtures")
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

/// The fixture's class: its directory for the malformed set, else the first word of its name.
fn class_of(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    if rel.components().count() > 1 {
        return rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match stem.split('-').next().unwrap_or("") {
        "alternative" | "related" | "mixed" => "multipart".to_owned(),
        "nested" => "attachment".to_owned(),
        "plain" | "no" => "plain".to_owned(),
        "bcc" | "external" | "reply" => "addressing".to_owned(),
        "risky" | "type" | "link" => "risky".to_owned(),
        "encoded" => "charset".to_owned(),
        other => other.to_owned(),
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<F: FnMut()>(rounds: usize, mut f: F) -> Duration {
    for _ in 0..rounds.div_ceil(10) {
        f(); // warm-up
    }
    median(
        (0..rounds)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let rounds: usize = std::env::var("RENDER_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200)
        .max(1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/render");
    let mut files = Vec::new();
    emls(&root, &mut files);
    let options = RenderOptions {
        owner_domains: vec!["example.com".into()],
        ..RenderOptions::default()
    };

    // class -> (render medians, parse medians, bytes)
    let mut classes: BTreeMap<String, (Vec<Duration>, Vec<Duration>, usize)> = BTreeMap::new();
    for path in &files {
        let raw = fs::read(path).expect("read");
        let render = time(rounds, || {
            black_box(render_message(black_box(&raw), &options));
        });
        let parse = time(rounds, || {
            black_box(MessageParser::default().parse(black_box(&raw)));
        });
        let entry = classes.entry(class_of(&root, path)).or_default();
        entry.0.push(render);
        entry.1.push(parse);
        entry.2 += raw.len();
    }

    println!(
        "{:<12} {:>5} {:>9} {:>14} {:>14} {:>8}",
        "class", "files", "bytes", "render median", "parse median", "ratio"
    );
    let (mut all_render, mut all_parse) = (Vec::new(), Vec::new());
    for (class, (render, parse, bytes)) in &classes {
        all_render.extend(render.iter().copied());
        all_parse.extend(parse.iter().copied());
        let (r, p) = (median(render.clone()), median(parse.clone()));
        println!(
            "{class:<12} {:>5} {bytes:>9} {:>12.1}µs {:>12.1}µs {:>7.1}x",
            render.len(),
            r.as_secs_f64() * 1e6,
            p.as_secs_f64() * 1e6,
            r.as_secs_f64() / p.as_secs_f64().max(1e-9)
        );
    }
    let (r, p) = (median(all_render), median(all_parse));
    println!(
        "{:<12} {:>5} {:>9} {:>12.1}µs {:>12.1}µs {:>7.1}x",
        "all",
        files.len(),
        "",
        r.as_secs_f64() * 1e6,
        p.as_secs_f64() * 1e6,
        r.as_secs_f64() / p.as_secs_f64().max(1e-9)
    );
}
