//! Flags about attachments: types that run code, and bytes that are not what the name or
//! declared type says (including what hides inside archives).

use super::{ArchiveListing, Flag, FlagKind};
use crate::view::AttachmentMeta;

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
pub(super) fn attachment_flags(
    a: &AttachmentMeta,
    archive: Option<&ArchiveListing>,
    out: &mut Vec<Flag>,
) {
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
