//! False-alarm rates on a folder of real-world messages: renders every `.eml` under the folder
//! and prints, per flag kind, how many messages raise it — overall, among two-part (text and
//! HTML both written) messages, and split between messages written by mail programs and by
//! marketing tools.
//!
//! `cargo bench -p countersign-render --bench corpus -- /work/corpus` (no harness); the
//! corpus and how to rebuild it are in docs/rendering.md. `CORPUS_SHOW=alternatives_differ`
//! also prints each message that raises that flag, with the flag's explanation.
//!
//! "Marketing tool": a message with a `List-Unsubscribe`, `List-Id`, `Precedence: bulk`/`list`,
//! `Feedback-ID` or `X-Campaign*` header, or an `X-Mailer` naming a bulk sender (Mailchimp,
//! SendGrid, Mailgun, Amazon SES, Salesforce/ExactTarget, HubSpot, Constant Contact…). Every
//! other message counts as written by a mail program.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use countersign_render::{render_message, FlagKind, RenderOptions};

fn emls(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            emls(&path, out);
        } else if path.extension().is_some_and(|e| e == "eml") {
            out.push(path);
        }
    }
}

const BULK_MAILERS: &[&str] = &[
    "mailchimp",
    "mailgun",
    "sendgrid",
    "amazon ses",
    "exacttarget",
    "salesforce",
    "hubspot",
    "constant contact",
    "campaign monitor",
    "createsend",
    "sendinblue",
    "brevo",
    "klaviyo",
    "marketo",
    "mailjet",
    "sparkpost",
    "postmark",
    "mandrill",
    "phplist",
    "mautic",
    "acoustic",
    "silverpop",
    "responsys",
    "eloqua",
    "pardot",
    "aweber",
    "getresponse",
    "convertkit",
];

/// The header block of a raw message, lower-case, folds joined.
fn headers(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw).replace("\r\n", "\n");
    let end = text.find("\n\n").unwrap_or(text.len());
    text[..end]
        .replace("\n ", " ")
        .replace("\n\t", " ")
        .to_lowercase()
}

fn is_marketing(raw: &[u8]) -> bool {
    let h = headers(raw);
    let has = |name: &str| h.lines().any(|l| l.starts_with(name));
    let mailer = h
        .lines()
        .filter(|l| l.starts_with("x-mailer:") || l.starts_with("x-sender:"))
        .any(|l| BULK_MAILERS.iter().any(|m| l.contains(m)));
    has("list-unsubscribe:")
        || has("list-id:")
        || has("feedback-id:")
        || has("x-campaign")
        || h.lines()
            .any(|l| l.starts_with("precedence:") && (l.contains("bulk") || l.contains("list")))
        || mailer
}

#[derive(Default)]
struct Group {
    messages: usize,
    flagged: BTreeMap<String, usize>,
}

fn kind_name(kind: FlagKind) -> String {
    serde_json::to_string(&kind)
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned()
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("CORPUS_DIR").ok())
        .unwrap_or_else(|| "/work/corpus".into());
    // mail-parser stops on internal checks in debug builds; render_message turns that into a
    // warning, so the panic messages are noise here.
    std::panic::set_hook(Box::new(|_| {}));
    let show = std::env::var("CORPUS_SHOW").ok();
    let known_path = std::env::var("CORPUS_KNOWN").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/corpus-known-different.txt"
        )
        .into()
    });
    let known: Vec<String> = fs::read_to_string(&known_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('\t').next().map(str::to_owned))
        .collect();
    let mut false_alarms: BTreeMap<&str, usize> = BTreeMap::new();
    let mut files = Vec::new();
    emls(Path::new(&dir), &mut files);
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for file in &files {
        let Ok(raw) = fs::read(file) else { continue };
        let view = render_message(&raw, &RenderOptions::default());
        let two_part = !view.text_derived && !view.html_derived && !view.text_body.is_empty();
        let who = if is_marketing(&raw) {
            "marketing tools"
        } else {
            "mail programs"
        };
        let mut kinds: Vec<String> = view.flags.iter().map(|f| kind_name(f.kind)).collect();
        if kinds
            .iter()
            .any(|k| k == "hidden_text" || k == "unverifiable_styling")
        {
            kinds.push("hidden_text or unverifiable_styling".into());
        }
        kinds.sort();
        kinds.dedup();
        if let Some(show) = &show {
            for f in view.flags.iter().filter(|f| &kind_name(f.kind) == show) {
                println!("{}: {}", file.display(), f.explanation);
            }
        }
        let relative = file
            .strip_prefix(&dir)
            .unwrap_or(file)
            .to_string_lossy()
            .trim_start_matches('/')
            .to_owned();
        let differs = kinds.iter().any(|k| k == "alternatives_differ");
        if two_part && differs && !known.contains(&relative) {
            *false_alarms.entry(who).or_default() += 1;
            *false_alarms.entry("all").or_default() += 1;
        }
        let mut names = vec!["all", who];
        if two_part {
            names.extend([
                "two-part",
                if who == "marketing tools" {
                    "two-part, marketing tools"
                } else {
                    "two-part, mail programs"
                },
            ]);
        }
        for name in names {
            let g = groups.entry(name).or_default();
            g.messages += 1;
            for k in &kinds {
                *g.flagged.entry(k.clone()).or_default() += 1;
            }
        }
    }
    println!("{} messages under {dir}", files.len());
    let two_part = |name: &str| groups.get(name).map_or(0, |g| g.messages);
    for (who, group) in [
        ("all", "two-part"),
        ("mail programs", "two-part, mail programs"),
        ("marketing tools", "two-part, marketing tools"),
    ] {
        let n = false_alarms.get(who).copied().unwrap_or(0);
        println!(
            "alternatives_differ false alarms ({group}; not in {}): {n} of {}  ({:.1} %)",
            known_path.rsplit('/').next().unwrap_or(""),
            two_part(group),
            100.0 * n as f64 / two_part(group).max(1) as f64
        );
    }
    let kinds = [
        "alternatives_differ",
        "hidden_text",
        "unverifiable_styling",
        "hidden_text or unverifiable_styling",
        "invisible_characters",
        "link_text_mismatch",
    ];
    for (name, g) in &groups {
        println!("\n{name}: {} messages", g.messages);
        let mut all: Vec<&String> = g.flagged.keys().collect();
        all.sort_by_key(|k| (!kinds.contains(&k.as_str()), k.to_string()));
        for k in kinds
            .iter()
            .map(|k| k.to_string())
            .filter(|k| !g.flagged.contains_key(k))
        {
            println!("  {k:<36} {:>5}  {:>5.1} %", 0, 0.0);
        }
        for k in all {
            let n = g.flagged[k];
            println!(
                "  {k:<30} {n:>5}  {:>5.1} %",
                100.0 * n as f64 / g.messages.max(1) as f64
            );
        }
    }
}
