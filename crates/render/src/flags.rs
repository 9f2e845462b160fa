//! Safety flags: the things about a draft a careful person would want pointed out before it
//! leaves under their name, each with one line saying why it matters.

use std::collections::BTreeSet;

mod attachments;

use super::view::{Address, RenderOptions, ReviewView};
use crate::flag::{ArchiveListing, DuplicateHeader};
pub use crate::flag::{Flag, FlagKind};
use attachments::attachment_flags;

/// The largest message Gmail's `drafts.send` takes (its upload endpoint's limit, 35 MB; the
/// raw message, attachments encoded). Approving a bigger one is refused. The same figure as
/// `countersign_gmail::drafts::MAX_SEND_BYTES`, which this pure crate does not depend on; a core
/// test holds the two equal.
pub const GMAIL_MAX_MESSAGE_BYTES: u64 = 35 * 1024 * 1024;

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
        for claimed in &parent.not_in_conversation {
            out.push(Flag {
                kind: FlagKind::AnswersMessageNotInConversation,
                about: claimed.clone(),
                explanation: format!(
                    "This answers a message that is not in this conversation (<{}>): the \
                     agent may have invented what it replies to, so no recipient counts as \
                     on the thread.",
                    claimed
                ),
                recipients: Vec::new(),
            });
        }
        let on_thread = parent.on_thread();
        let mut seen = BTreeSet::new();
        let strangers: Vec<(&str, &Address)> = recipients
            .iter()
            .filter(|(_, a)| {
                let email = a.email.to_lowercase();
                !on_thread.contains(&email) && seen.insert(email)
            })
            .copied()
            .collect();
        out.extend(recipient_flag(
            FlagKind::RecipientNotOnThread,
            &strangers,
            |field, a| {
                format!(
                    "{} ({field}) was not on the message this replies to: check they should \
                     see it.",
                    a.email
                )
            },
            || {
                format!(
                    "{} recipients were not on the message this replies to: check they should \
                     see it ({}).",
                    strangers.len(),
                    first_few(&strangers)
                )
            },
        ));
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
        out.extend(recipient_flag(
            FlagKind::ExternalRecipient,
            &outside,
            |field, a| {
                format!(
                    "{} ({field}) is outside your organisation ({}).",
                    a.email,
                    domain_of(&a.email)
                )
            },
            || {
                let domains: BTreeSet<String> =
                    outside.iter().map(|(_, a)| domain_of(&a.email)).collect();
                format!(
                    "{} recipients are outside your organisation, at {} domain{} ({}).",
                    outside.len(),
                    domains.len(),
                    if domains.len() == 1 { "" } else { "s" },
                    first_few(&outside)
                )
            },
        ));
    }

    let bcc: Vec<(&str, &Address)> = view.bcc.iter().map(|a| ("Bcc", a)).collect();
    out.extend(recipient_flag(
        FlagKind::BccRecipient,
        &bcc,
        |_, a| {
            format!(
                "{} gets a hidden copy (Bcc): the other recipients will not know.",
                a.email
            )
        },
        || {
            format!(
                "{} recipients get a hidden copy (Bcc): the other recipients will not know ({}).",
                bcc.len(),
                first_few(&bcc)
            )
        },
    ));

    for a in &view.attachments {
        let archive = archives.iter().find(|l| l.attachment == a.index);
        attachment_flags(a, archive, &mut out);
    }

    let mut seen_links = BTreeSet::new();
    for link in view.links.iter().filter(|l| l.mismatch) {
        if !seen_links.insert((link.text.clone(), link.href.clone())) {
            continue;
        }
        out.push(Flag {
            kind: FlagKind::LinkTextMismatch,
            about: link.href.clone(),
            explanation: super::links::explain(&link.text, &link.href),
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

    out.extend(super::hidden::flag(&view.hidden_text));
    out.extend(super::styling::flag(&view.unverifiable_styling));
    out.extend(super::machine::flag(&view.machine_text));
    out.extend(super::unicode::flags(&view.invisible_characters));
    out.extend(
        view.alternatives_differ
            .as_ref()
            .map(super::alternatives::flag),
    );

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

/// The flag `kind` about `who`, if anyone: one recipient is named and said of with `one`
/// (its header field and address); several are counted, listed, and said of with `several`.
fn recipient_flag(
    kind: FlagKind,
    who: &[(&str, &Address)],
    one: impl FnOnce(&str, &Address) -> String,
    several: impl FnOnce() -> String,
) -> Option<Flag> {
    match who {
        [] => None,
        [(field, a)] => Some(Flag {
            kind,
            about: display(a),
            explanation: one(field, a),
            recipients: Vec::new(),
        }),
        _ => Some(Flag {
            kind,
            about: format!("{} recipients", who.len()),
            explanation: several(),
            recipients: listed(who),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::AttachmentMeta;

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
