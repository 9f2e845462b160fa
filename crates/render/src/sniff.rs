//! Content sniffing: what an attachment's bytes really are, whatever its name says.
//!
//! Kept in-house (a few magic numbers and a zip central-directory walk) rather than pulling a
//! sniffing crate, because the review only needs the types whose disagreement with a name is
//! dangerous or confusing, and every branch here is bounded and cannot panic on hostile bytes.

/// The MIME type the bytes look like, or `None` when they match no known signature.
///
/// Zip containers are refined to the Office Open XML type they hold (docx/xlsx/pptx) by their
/// member names, so a real spreadsheet does not look like "a zip pretending to be xlsx".
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let starts = |sig: &[u8]| bytes.starts_with(sig);
    if starts(b"%PDF-") {
        return Some("application/pdf");
    }
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if starts(b"\xff\xd8\xff") {
        return Some("image/jpeg");
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return Some("image/gif");
    }
    if bytes.len() >= 12 && starts(b"RIFF") && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    if starts(b"BM") && bytes.len() >= 14 && bytes[6..10] == [0, 0, 0, 0] {
        return Some("image/bmp");
    }
    if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") {
        let names = zip_entry_names(bytes);
        let has = |prefix: &str| names.iter().any(|n| n.starts_with(prefix));
        if names.iter().any(|n| n == "[Content_Types].xml") {
            if has("word/") {
                return Some(
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                );
            }
            if has("xl/") {
                return Some("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
            }
            if has("ppt/") {
                return Some(
                    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                );
            }
        }
        if names.iter().any(|n| n == "META-INF/MANIFEST.MF") {
            return Some("application/java-archive");
        }
        return Some("application/zip");
    }
    if starts(b"\x1f\x8b") {
        return Some("application/gzip");
    }
    if starts(b"7z\xbc\xaf\x27\x1c") {
        return Some("application/x-7z-compressed");
    }
    if starts(b"Rar!\x1a\x07") {
        return Some("application/vnd.rar");
    }
    if starts(b"MZ") {
        return Some("application/x-msdownload");
    }
    if starts(b"\x7fELF") {
        return Some("application/x-executable");
    }
    if starts(b"\xfe\xed\xfa\xce")
        || starts(b"\xfe\xed\xfa\xcf")
        || starts(b"\xce\xfa\xed\xfe")
        || starts(b"\xcf\xfa\xed\xfe")
    {
        return Some("application/x-mach-binary");
    }
    if starts(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1") {
        // OLE2 compound file: legacy .doc/.xls/.msi all share it.
        return Some("application/x-ole-storage");
    }
    if starts(b"#!") {
        return Some("text/x-shellscript");
    }
    sniff_text(bytes)
}

/// Recognises HTML (and SVG) by its first tag, since a browser would render either.
fn sniff_text(bytes: &[u8]) -> Option<&'static str> {
    let head = &bytes[..bytes.len().min(512)];
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let head: Vec<u8> = head[start..].to_ascii_lowercase();
    for tag in [
        &b"<!doctype html"[..],
        b"<html",
        b"<head",
        b"<body",
        b"<script",
    ] {
        if head.starts_with(tag) {
            return Some("text/html");
        }
    }
    if head.starts_with(b"<svg") || (head.starts_with(b"<?xml") && contains(&head, b"<svg")) {
        return Some("image/svg+xml");
    }
    None
}

/// Whether `needle` occurs in `hay`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

/// Position of the first `needle` in `hay`; linear in practice (first-byte scan).
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let offset = hay[from..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)?;
        let at = from + offset;
        if &hay[at + 1..at + needle.len()] == rest {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Member names of a zip archive, read from its central directory (falling back to the local
/// headers when the directory is missing, as in a truncated archive).
///
/// Capped at 10,000 names so a forged directory cannot make the review slow.
pub fn zip_entry_names(bytes: &[u8]) -> Vec<String> {
    const MAX: usize = 10_000;
    let u16_at = |at: usize| -> Option<usize> {
        let b = bytes.get(at..at + 2)?;
        Some(u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |at: usize| -> Option<usize> {
        let b = bytes.get(at..at + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let mut names = Vec::new();
    // The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
    let tail_start = bytes.len().saturating_sub(65_557);
    let eocd = (tail_start..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| bytes[i..].starts_with(b"PK\x05\x06"));
    if let Some(eocd) = eocd {
        if let (Some(count), Some(mut at)) = (u16_at(eocd + 10), u32_at(eocd + 16)) {
            for _ in 0..count.min(MAX) {
                if !bytes
                    .get(at..)
                    .is_some_and(|b| b.starts_with(b"PK\x01\x02"))
                {
                    break;
                }
                let (Some(name_len), Some(extra), Some(comment)) =
                    (u16_at(at + 28), u16_at(at + 30), u16_at(at + 32))
                else {
                    break;
                };
                let Some(name) = bytes.get(at + 46..at + 46 + name_len) else {
                    break;
                };
                names.push(String::from_utf8_lossy(name).into_owned());
                at += 46 + name_len + extra + comment;
            }
        }
    }
    if names.is_empty() {
        let mut at = 0;
        while names.len() < MAX
            && bytes
                .get(at..)
                .is_some_and(|b| b.starts_with(b"PK\x03\x04"))
        {
            let (Some(size), Some(name_len), Some(extra)) =
                (u32_at(at + 18), u16_at(at + 26), u16_at(at + 28))
            else {
                break;
            };
            let Some(name) = bytes.get(at + 30..at + 30 + name_len) else {
                break;
            };
            names.push(String::from_utf8_lossy(name).into_owned());
            // With a data descriptor the size is 0 here and the walk cannot continue.
            if size == 0 {
                break;
            }
            at += 30 + name_len + extra + size;
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_windows_executable_is_recognised_whatever_it_is_called() {
        assert_eq!(sniff(b"MZ\x90\x00\x03"), Some("application/x-msdownload"));
    }

    #[test]
    fn html_is_recognised_after_whitespace_and_a_bom() {
        assert_eq!(sniff(b"\xef\xbb\xbf  \n<HTML><body>"), Some("text/html"));
        assert_eq!(sniff(b"hello <html>"), None);
    }

    #[test]
    fn garbage_that_starts_like_a_zip_does_not_panic() {
        assert_eq!(sniff(b"PK\x03\x04\xff\xff"), Some("application/zip"));
        assert!(zip_entry_names(b"PK\x05\x06").is_empty());
        assert!(zip_entry_names(b"PK\x03\x04").is_empty());
    }

    #[test]
    fn find_locates_needles_at_the_edges() {
        assert_eq!(find(b"abcabd", b"abd"), Some(3));
        assert_eq!(find(b"ab", b"abc"), None);
        assert_eq!(find(b"abc", b""), None);
    }
}
