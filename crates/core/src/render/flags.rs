//! Safety flags: the things about a draft a careful person would want pointed out before it
//! leaves under their name, each with one line saying why it matters.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::view::{Address, AttachmentMeta, RenderOptions, ReviewView};

/// The largest message Gmail's `drafts.send` takes (its upload endpoint's limit, 35 MB; the
/// raw message, attachments encoded). Approving a bigger one is refused.
pub const GMAIL_MAX_MESSAGE_BYTES: u64 = countersign_gmail::drafts::MAX_SEND_BYTES as u64;

/// What a [`Flag`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// A recipient who was not on the message being answered (the exfiltration case).
    RecipientNotOnThread,
    /// A recipient outside the owner's domains.
    ExternalRecipient,
    /// A Bcc recipient: others will not see them.
    BccRecipient,
    /// An attachment of a type that can run code or carry code.
    RiskyAttachment,
    /// An attachment whose bytes are not what its name or declared type says.
    AttachmentTypeMismatch,
    /// Link text showing one URL while the link opens another.
    LinkTextMismatch,
    /// A reply that will not thread: no In-Reply-To and no References.
    ReplyWithoutThreading,
    /// A message Gmail will refuse to send.
    OverSizeLimit,
    /// A header allowed once occurs more than once: mail programs disagree on which one counts.
    DuplicateHeader,
}

/// One safety flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ui-types", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Flag {
    /// What kind of risk.
    pub kind: FlagKind,
    /// Which address, attachment name or link it is about.
    pub about: String,
    /// One line a person understands.
    pub explanation: String,
    /// Every address a recipient flag covers, when it covers more than one (`"a@x.org (To)"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recipients: Vec<String>,
}

/// A header allowed once that a message carries more than once, with every value.
#[derive(Debug, Clone)]
pub(crate) struct DuplicateHeader {
    pub name: String,
    pub values: Vec<String>,
}

/// Member names of one zip-like attachment, for looking inside archives.
#[derive(Debug, Clone)]
pub(crate) struct ArchiveListing {
    pub attachment: usize,
    pub names: Vec<String>,
}

/// Extensions that run code when opened, or render active content.
const RISKY_EXTENSIONS: &[&str] = &[
    "exe",
    "com",
    "scr",
    "pif",
    "bat",
    "cmd",
    "msi",
    "msp",
    "mst",
    "dll",
    "cpl",
    "jar",
    "js",
    "jse",
    "vbs",
    "vbe",
    "wsf",
    "wsh",
    "wsc",
    "ps1",
    "psm1",
    "psd1",
    "hta",
    "lnk",
    "reg",
    "inf",
    "scf",
    "url",
    "sh",
    "bash",
    "zsh",
    "csh",
    "command",
    "app",
    "apk",
    "dmg",
    "pkg",
    "iso",
    "img",
    "vhd",
    "vhdx",
    "html",
    "htm",
    "xhtml",
    "shtml",
    "mht",
    "mhtml",
    "svg",
    "xht",
    "docm",
    "dotm",
    "xlsm",
    "xltm",
    "xlam",
    "pptm",
    "potm",
    "ppam",
    "sldm",
    "one",
    "appref-ms",
    "library-ms",
    "settingcontent-ms",
    "py",
    "pyw",
    "pl",
    "rb",
    "php",
    "elf",
    "run",
    "bin",
    "deb",
    "rpm",
    "msix",
    "appx",
    "xll",
    "chm",
    "gadget",
    "ade",
    "adp",
    "mde",
    "accde",
];

/// Extensions of archives we can look into (zip family) or not.
const ARCHIVE_EXTENSIONS: &[&str] = &[
    "zip", "jar", "7z", "rar", "gz", "tgz", "tar", "bz2", "xz", "cab", "arj", "lz", "zst",
];

/// Declared or sniffed types that are active content.
const RISKY_TYPES: &[&str] = &[
    "application/x-msdownload",
    "application/x-msdos-program",
    "application/x-dosexec",
    "application/x-executable",
    "application/x-mach-binary",
    "application/x-sh",
    "text/x-shellscript",
    "application/x-shellscript",
    "application/javascript",
    "text/javascript",
    "application/x-javascript",
    "application/hta",
    "text/html",
    "application/xhtml+xml",
    "image/svg+xml",
    "application/java-archive",
    "application/x-ms-shortcut",
    "application/vnd.microsoft.portable-executable",
    "application/x-msi",
];

/// What the common document extensions should contain, for the name/bytes comparison.
fn expected_type(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" | "jpe" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "zip" => "application/zip",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "gz" | "tgz" => "application/gzip",
        "7z" => "application/x-7z-compressed",
        "rar" => "application/vnd.rar",
        "exe" | "dll" | "scr" | "com" => "application/x-msdownload",
        "doc" | "xls" | "ppt" | "msi" => "application/x-ole-storage",
        "jar" => "application/java-archive",
        _ => return None,
    })
}

/// Types that carry no claim about the bytes: a mismatch against them means nothing.
fn is_generic_type(t: &str) -> bool {
    matches!(
        t,
        "application/octet-stream"
            | "application/binary"
            | "application/unknown"
            | "binary/octet-stream"
    )
}

/// Types whose content is a zip container of another name (Office, Java, Android...).
fn zip_family(t: &str) -> bool {
    t == "application/zip"
        || t == "application/java-archive"
        || t.contains("openxmlformats")
        || t.starts_with("application/vnd.oasis.opendocument")
        || t == "application/epub+zip"
        || t == "application/vnd.android.package-archive"
        || t == "application/x-zip-compressed"
}

/// Maps the legacy and vendor aliases mail clients still send to one name per type.
fn canonical(t: &str) -> &str {
    match t {
        "image/jpg" | "image/pjpeg" => "image/jpeg",
        "image/x-png" => "image/png",
        "image/x-ms-bmp" | "image/x-bmp" => "image/bmp",
        "application/x-pdf" | "application/acrobat" => "application/pdf",
        "application/x-gzip" | "application/gzip-compressed" => "application/gzip",
        "application/x-zip-compressed" | "application/x-zip" | "multipart/x-zip" => {
            "application/zip"
        }
        "application/x-rar-compressed" | "application/x-rar" => "application/vnd.rar",
        other => other,
    }
}

fn same_kind(a: &str, b: &str) -> bool {
    let (a, b) = (canonical(a), canonical(b));
    a == b
        // Office declares docx as a zip now and then, and zip tools the other way round.
        || (zip_family(a) && zip_family(b) && (a == "application/zip" || b == "application/zip"))
        || (a == "application/x-ole-storage" && is_legacy_office(b))
        || (b == "application/x-ole-storage" && is_legacy_office(a))
        || (a == "application/x-msdownload" && is_executable_type(b))
        || (b == "application/x-msdownload" && is_executable_type(a))
}

fn is_legacy_office(t: &str) -> bool {
    matches!(
        t,
        "application/msword"
            | "application/vnd.ms-excel"
            | "application/vnd.ms-powerpoint"
            | "application/x-msi"
    ) || t.starts_with("application/vnd.ms-")
}

fn is_executable_type(t: &str) -> bool {
    matches!(
        t,
        "application/x-msdownload"
            | "application/x-msdos-program"
            | "application/x-dosexec"
            | "application/vnd.microsoft.portable-executable"
            | "application/x-executable"
    )
}

/// The extension of a file name, lower-case, trailing dots and spaces ignored (Windows drops
/// them, so `evil.exe.` opens as `evil.exe`).
fn extension(name: &str) -> Option<String> {
    let name = name.trim_end_matches(['.', ' ']);
    let (_, ext) = name.rsplit_once('.')?;
    (!ext.is_empty() && !ext.contains(['/', '\\'])).then(|| ext.to_lowercase())
}

/// Why an attachment name is risky on its own, if it is.
fn risky_name(name: &str) -> Option<String> {
    if name.contains(['\u{202e}', '\u{202d}', '\u{2066}', '\u{2067}', '\u{2068}']) {
        return Some(format!(
            "\u{201c}{}\u{201d} hides its real extension with a right-to-left control character.",
            name.replace(
                ['\u{202e}', '\u{202d}', '\u{2066}', '\u{2067}', '\u{2068}'],
                ""
            )
        ));
    }
    let ext = extension(name)?;
    if !RISKY_EXTENSIONS.contains(&ext.as_str()) {
        return None;
    }
    let trimmed = name.trim_end_matches(['.', ' ']);
    let stem = trimmed.rsplit_once('.').map_or("", |(stem, _)| stem);
    if let Some(inner) = extension(stem) {
        if expected_type(&inner).is_some()
            || matches!(inner.as_str(), "txt" | "csv" | "doc" | "rtf")
        {
            return Some(format!(
                "\u{201c}{name}\u{201d} looks like a .{inner} file but is really a .{ext}: a \
                 double extension is a classic way to disguise a program."
            ));
        }
    }
    Some(format!(
        "\u{201c}{name}\u{201d} is a .{ext} file, which can run code on the recipient's computer."
    ))
}

/// Flags for one attachment.
fn attachment_flags(a: &AttachmentMeta, archive: Option<&ArchiveListing>, out: &mut Vec<Flag>) {
    let about = a
        .file_name
        .clone()
        .unwrap_or_else(|| format!("attachment {}", a.index + 1));
    let mut risky = a.file_name.as_deref().and_then(risky_name);
    if risky.is_none() {
        let active = [a.sniffed_type.as_deref(), a.declared_type.as_deref()]
            .into_iter()
            .flatten()
            .find(|t| RISKY_TYPES.contains(t));
        if let Some(t) = active {
            risky = Some(format!(
                "{about} is {t} content, which can run code or scripts when opened."
            ));
        }
    }
    if risky.is_none() {
        if let Some(listing) = archive {
            let inside: Vec<&str> = listing
                .names
                .iter()
                .map(String::as_str)
                .filter(|n| {
                    let n = n.rsplit(['/', '\\']).next().unwrap_or(n);
                    risky_name(n).is_some()
                        || extension(n).is_some_and(|e| ARCHIVE_EXTENSIONS.contains(&e.as_str()))
                })
                .collect();
            if !inside.is_empty() {
                let shown: Vec<&str> = inside.iter().take(3).copied().collect();
                risky = Some(format!(
                    "The archive {about} contains {}{}, which can run code when opened.",
                    shown.join(", "),
                    if inside.len() > 3 {
                        format!(" and {} more", inside.len() - 3)
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
    if let Some(explanation) = risky {
        out.push(Flag {
            kind: FlagKind::RiskyAttachment,
            about: about.clone(),
            explanation,
            recipients: Vec::new(),
        });
    }

    let Some(sniffed) = a.sniffed_type.as_deref() else {
        return;
    };
    let by_name = a
        .file_name
        .as_deref()
        .and_then(extension)
        .and_then(|e| expected_type(&e).map(|t| (e, t)));
    if let Some((ext, expected)) = by_name {
        if !same_kind(expected, sniffed) {
            out.push(Flag {
                kind: FlagKind::AttachmentTypeMismatch,
                about,
                explanation: format!(
                    "It is named .{ext} but its content is {sniffed}: what opens may not be \
                     what the name promises."
                ),
                recipients: Vec::new(),
            });
            return;
        }
    }
    if let Some(declared) = a.declared_type.as_deref() {
        if !is_generic_type(declared) && !same_kind(declared, sniffed) {
            out.push(Flag {
                kind: FlagKind::AttachmentTypeMismatch,
                about,
                explanation: format!("It is declared as {declared} but its content is {sniffed}."),
                recipients: Vec::new(),
            });
        }
    }
}

fn domain_of(email: &str) -> String {
    email
        .rsplit_once('@')
        .map(|(_, d)| d.trim_end_matches('.').to_lowercase())
        .unwrap_or_default()
}

fn in_domains(email: &str, domains: &[String]) -> bool {
    let d = domain_of(email);
    domains.iter().any(|owner| {
        let owner = owner.trim().trim_start_matches('@').to_lowercase();
        d == owner || d.ends_with(&format!(".{owner}"))
    })
}

fn display(a: &Address) -> String {
    a.email.clone()
}

/// How many addresses an aggregated flag's explanation names before "and N more"; the full
/// list is in [`Flag::recipients`].
const NAMED_IN_EXPLANATION: usize = 3;

fn first_few(list: &[(&str, &Address)]) -> String {
    let shown: Vec<&str> = list
        .iter()
        .take(NAMED_IN_EXPLANATION)
        .map(|(_, a)| a.email.as_str())
        .collect();
    let more = list.len().saturating_sub(NAMED_IN_EXPLANATION);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn listed(list: &[(&str, &Address)]) -> Vec<String> {
    list.iter()
        .map(|(field, a)| format!("{} ({field})", a.email))
        .collect()
}

/// Computes the flags of a view. `threading` is false for muster drafts, whose plugin threads
/// the reply itself.
pub(crate) fn compute(
    view: &ReviewView,
    options: &RenderOptions,
    archives: &[ArchiveListing],
    duplicates: &[DuplicateHeader],
    threading: bool,
) -> Vec<Flag> {
    let mut out = Vec::new();
    for d in duplicates {
        let values: Vec<String> = d
            .values
            .iter()
            .map(|v| format!("\u{201c}{v}\u{201d}"))
            .collect();
        out.push(Flag {
            kind: FlagKind::DuplicateHeader,
            about: d.name.clone(),
            explanation: format!(
                "The message has {} {} headers ({}): mail programs disagree on what this \
                 message says, and the recipient may see a different one than you do.",
                d.values.len(),
                d.name,
                values.join(" and ")
            ),
            recipients: Vec::new(),
        });
    }
    let recipients: Vec<(&str, &Address)> = view
        .to
        .iter()
        .map(|a| ("To", a))
        .chain(view.cc.iter().map(|a| ("Cc", a)))
        .chain(view.bcc.iter().map(|a| ("Bcc", a)))
        .collect();

    if let Some(parent) = &options.parent {
        let on_thread: BTreeSet<String> = parent
            .from
            .iter()
            .chain(&parent.to)
            .chain(&parent.cc)
            .chain(&parent.reply_to)
            .map(|a| a.email.to_lowercase())
            .collect();
        let mut seen = BTreeSet::new();
        let strangers: Vec<(&str, &Address)> = recipients
            .iter()
            .filter(|(_, a)| {
                let email = a.email.to_lowercase();
                !on_thread.contains(&email) && seen.insert(email)
            })
            .copied()
            .collect();
        if let [(field, a)] = strangers.as_slice() {
            out.push(Flag {
                kind: FlagKind::RecipientNotOnThread,
                about: display(a),
                explanation: format!(
                    "{} ({field}) was not on the message this replies to: check they should \
                     see it.",
                    a.email
                ),
                recipients: Vec::new(),
            });
        } else if !strangers.is_empty() {
            out.push(Flag {
                kind: FlagKind::RecipientNotOnThread,
                about: format!("{} recipients", strangers.len()),
                explanation: format!(
                    "{} recipients were not on the message this replies to: check they should \
                     see it ({}).",
                    strangers.len(),
                    first_few(&strangers)
                ),
                recipients: listed(&strangers),
            });
        }
    }

    if !options.owner_domains.is_empty() {
        let mut seen = BTreeSet::new();
        let outside: Vec<(&str, &Address)> = recipients
            .iter()
            .filter(|(_, a)| {
                !in_domains(&a.email, &options.owner_domains) && seen.insert(a.email.to_lowercase())
            })
            .copied()
            .collect();
        if let [(field, a)] = outside.as_slice() {
            out.push(Flag {
                kind: FlagKind::ExternalRecipient,
                about: display(a),
                explanation: format!(
                    "{} ({field}) is outside your organisation ({}).",
                    a.email,
                    domain_of(&a.email)
                ),
                recipients: Vec::new(),
            });
        } else if !outside.is_empty() {
            let domains: BTreeSet<String> =
                outside.iter().map(|(_, a)| domain_of(&a.email)).collect();
            out.push(Flag {
                kind: FlagKind::ExternalRecipient,
                about: format!("{} recipients", outside.len()),
                explanation: format!(
                    "{} recipients are outside your organisation, at {} domain{} ({}).",
                    outside.len(),
                    domains.len(),
                    if domains.len() == 1 { "" } else { "s" },
                    first_few(&outside)
                ),
                recipients: listed(&outside),
            });
        }
    }

    let bcc: Vec<(&str, &Address)> = view.bcc.iter().map(|a| ("Bcc", a)).collect();
    if let [(_, a)] = bcc.as_slice() {
        out.push(Flag {
            kind: FlagKind::BccRecipient,
            about: display(a),
            explanation: format!(
                "{} gets a hidden copy (Bcc): the other recipients will not know.",
                a.email
            ),
            recipients: Vec::new(),
        });
    } else if !bcc.is_empty() {
        out.push(Flag {
            kind: FlagKind::BccRecipient,
            about: format!("{} recipients", bcc.len()),
            explanation: format!(
                "{} recipients get a hidden copy (Bcc): the other recipients will not know ({}).",
                bcc.len(),
                first_few(&bcc)
            ),
            recipients: listed(&bcc),
        });
    }

    for a in &view.attachments {
        let archive = archives.iter().find(|l| l.attachment == a.index);
        attachment_flags(a, archive, &mut out);
    }

    let mut seen_links = BTreeSet::new();
    for link in view.links.iter().filter(|l| l.mismatch) {
        if !seen_links.insert((link.text.clone(), link.href.clone())) {
            continue;
        }
        let real = super::text::href_host(&link.href).unwrap_or_else(|| link.href.clone());
        out.push(Flag {
            kind: FlagKind::LinkTextMismatch,
            about: link.href.clone(),
            explanation: format!(
                "A link shows \u{201c}{}\u{201d} but opens {real}.",
                link.text
            ),
            recipients: Vec::new(),
        });
    }

    if threading && view.is_reply && view.in_reply_to.is_empty() && view.references.is_empty() {
        out.push(Flag {
            kind: FlagKind::ReplyWithoutThreading,
            about: view.subject.clone().unwrap_or_default(),
            explanation: "This reply has no In-Reply-To or References header, so it will \
                          arrive as a new conversation instead of in the thread."
                .into(),
            recipients: Vec::new(),
        });
    }

    if view.raw_size > GMAIL_MAX_MESSAGE_BYTES {
        out.push(Flag {
            kind: FlagKind::OverSizeLimit,
            about: format!("{} bytes", view.raw_size),
            explanation: format!(
                "The message is {:.1} MB; Gmail sends at most {} MB, so it cannot be approved.",
                view.raw_size as f64 / (1024.0 * 1024.0),
                GMAIL_MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
            recipients: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, declared: Option<&str>, sniffed: Option<&str>) -> AttachmentMeta {
        AttachmentMeta {
            index: 0,
            file_name: Some(name.into()),
            declared_type: declared.map(Into::into),
            sniffed_type: sniffed.map(Into::into),
            size: 1,
            sha256: String::new(),
            inline: false,
            content_id: None,
        }
    }

    fn kinds(a: &AttachmentMeta, archive: Option<&ArchiveListing>) -> Vec<FlagKind> {
        let mut out = Vec::new();
        attachment_flags(a, archive, &mut out);
        out.into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_double_extension_program_is_risky_and_says_so() {
        let mut out = Vec::new();
        attachment_flags(&meta("invoice.pdf.exe", None, None), None, &mut out);
        assert_eq!(out[0].kind, FlagKind::RiskyAttachment);
        assert!(
            out[0].explanation.contains("double extension"),
            "{}",
            out[0].explanation
        );
    }

    #[test]
    fn non_ascii_names_whose_lower_case_grows_do_not_panic() {
        assert_eq!(
            kinds(&meta("İİİ.pdf.EXE", None, None), None),
            [FlagKind::RiskyAttachment]
        );
        assert_eq!(
            kinds(&meta("x.İexe", None, None), None),
            Vec::<FlagKind>::new()
        );
    }

    #[test]
    fn a_trailing_dot_does_not_hide_an_executable() {
        assert_eq!(
            kinds(&meta("setup.exe.", None, None), None),
            [FlagKind::RiskyAttachment]
        );
    }

    #[test]
    fn a_pdf_that_is_a_pdf_raises_nothing() {
        assert!(kinds(
            &meta("a.pdf", Some("application/pdf"), Some("application/pdf")),
            None
        )
        .is_empty());
    }

    #[test]
    fn an_xlsx_declared_as_zip_is_not_a_mismatch() {
        let xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
        assert!(kinds(&meta("a.xlsx", Some("application/zip"), Some(xlsx)), None).is_empty());
    }

    #[test]
    fn legacy_type_aliases_are_not_a_mismatch() {
        assert!(kinds(
            &meta("a.gz", Some("application/x-gzip"), Some("application/gzip")),
            None
        )
        .is_empty());
        assert!(kinds(
            &meta("a.jpg", Some("image/pjpeg"), Some("image/jpeg")),
            None
        )
        .is_empty());
        assert!(kinds(
            &meta(
                "a.zip",
                Some("application/x-zip-compressed"),
                Some("application/zip")
            ),
            None
        )
        .is_empty());
    }

    #[test]
    fn a_png_named_pdf_is_a_mismatch() {
        assert_eq!(
            kinds(
                &meta("a.pdf", Some("application/pdf"), Some("image/png")),
                None
            ),
            [FlagKind::AttachmentTypeMismatch]
        );
    }

    #[test]
    fn a_zip_holding_a_script_is_risky() {
        let listing = ArchiveListing {
            attachment: 0,
            names: vec!["docs/readme.txt".into(), "docs/run.vbs".into()],
        };
        assert_eq!(
            kinds(
                &meta("a.zip", None, Some("application/zip")),
                Some(&listing)
            ),
            [FlagKind::RiskyAttachment]
        );
    }

    #[test]
    fn subdomains_of_the_owner_domain_are_internal() {
        let domains = vec!["example.com".to_owned()];
        assert!(in_domains("a@mail.example.com", &domains));
        assert!(in_domains("a@EXAMPLE.com", &domains));
        assert!(!in_domains("a@badexample.com", &domains));
    }
}
