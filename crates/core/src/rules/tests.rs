//! Each condition over the rendered view, against a draft that meets it and one that does not.

use super::*;
use crate::render::{render_message, RenderOptions};

fn draft_view(extra_headers: &str, content: &str) -> ReviewView {
    let raw = format!(
        "From: owner@example.com\r\nTo: Ana <ana@example.com>\r\n{extra_headers}\
         Subject: Re: Invoice 7\r\nMIME-Version: 1.0\r\n{content}"
    );
    render_message(raw.as_bytes(), &RenderOptions::default())
}

fn text(body: &str) -> String {
    format!("Content-Type: text/plain\r\n\r\n{body}\r\n")
}

fn with_pdf(size: usize) -> String {
    use base64::Engine as _;
    let mut pdf = b"%PDF-1.4\n".to_vec();
    pdf.resize(size, b' ');
    let encoded = base64::engine::general_purpose::STANDARD.encode(pdf);
    format!(
        "Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
         The invoice.\r\n--b\r\nContent-Type: application/pdf\r\n\
         Content-Disposition: attachment; filename=\"invoice.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{encoded}\r\n--b--\r\n"
    )
}

fn rule(conditions: Conditions) -> RuleDefinition {
    RuleDefinition {
        name: "r".into(),
        scope: Scope::default(),
        conditions,
        action: RuleAction::Approve,
        daily_cap: None,
    }
}

fn judge(conditions: Conditions, view: &ReviewView, parent: Option<&ParentMessage>) -> bool {
    let draft = Draft {
        account_id: "g1",
        source: Source::Gmail,
        plugin: None,
        chief_filed: false,
        view,
        parent,
        labels: &[],
    };
    matches(&rule(conditions), &draft).is_ok()
}

#[test]
fn each_condition_matches_the_draft_that_meets_it_and_not_the_one_that_does_not() {
    let plain = draft_view("", &text("The invoice is attached."));
    let cc = draft_view("Cc: bob@example.com\r\n", &text("The invoice."));
    let elsewhere = draft_view("Cc: eve@elsewhere.org\r\n", &text("The invoice."));
    let long = draft_view("", &text(&"word ".repeat(50)));
    let small_pdf = draft_view("", &with_pdf(2_000));
    let big_pdf = draft_view("", &with_pdf(200_000));
    let parent = ParentMessage {
        from: vec![Address {
            name: None,
            email: "eve@elsewhere.org".into(),
        }],
        ..ParentMessage::default()
    };
    let only = |types: &[&str], max_bytes| {
        Some(AttachmentCondition::OnlyTypes {
            types: types.iter().map(|t| t.to_string()).collect(),
            max_bytes,
        })
    };
    let cases: Vec<(&str, Conditions, &ReviewView, Option<&ParentMessage>, bool)> = vec![
        (
            "no condition",
            Conditions::default(),
            &elsewhere,
            None,
            true,
        ),
        (
            "recipients within the domain",
            Conditions {
                recipients_within: vec!["example.com".into()],
                ..Default::default()
            },
            &cc,
            None,
            true,
        ),
        (
            "a recipient outside the domain",
            Conditions {
                recipients_within: vec!["example.com".into()],
                ..Default::default()
            },
            &elsewhere,
            None,
            false,
        ),
        (
            "outside the domain but on the thread",
            Conditions {
                recipients_within: vec!["example.com".into()],
                or_on_thread: true,
                ..Default::default()
            },
            &elsewhere,
            Some(&parent),
            true,
        ),
        (
            "on the thread alone: Ana was not on it",
            Conditions {
                or_on_thread: true,
                ..Default::default()
            },
            &elsewhere,
            Some(&parent),
            false,
        ),
        (
            "no Cc: none",
            Conditions {
                no_cc_or_bcc: true,
                ..Default::default()
            },
            &plain,
            None,
            true,
        ),
        (
            "no Cc: one",
            Conditions {
                no_cc_or_bcc: true,
                ..Default::default()
            },
            &cc,
            None,
            false,
        ),
        (
            "no attachments: none",
            Conditions {
                attachments: Some(AttachmentCondition::None),
                ..Default::default()
            },
            &plain,
            None,
            true,
        ),
        (
            "no attachments: a PDF",
            Conditions {
                attachments: Some(AttachmentCondition::None),
                ..Default::default()
            },
            &small_pdf,
            None,
            false,
        ),
        (
            "PDFs under 10 kB: a small one",
            Conditions {
                attachments: only(&["application/pdf"], 10_000),
                ..Default::default()
            },
            &small_pdf,
            None,
            true,
        ),
        (
            "PDFs under 10 kB: a big one",
            Conditions {
                attachments: only(&["application/pdf"], 10_000),
                ..Default::default()
            },
            &big_pdf,
            None,
            false,
        ),
        (
            "images only: a PDF",
            Conditions {
                attachments: only(&["image/*"], 10_000_000),
                ..Default::default()
            },
            &small_pdf,
            None,
            false,
        ),
        (
            "under 20 words",
            Conditions {
                max_words: Some(20),
                ..Default::default()
            },
            &plain,
            None,
            true,
        ),
        (
            "over 20 words",
            Conditions {
                max_words: Some(20),
                ..Default::default()
            },
            &long,
            None,
            false,
        ),
        (
            "subject matches",
            Conditions {
                subject_matches: Some("^re: invoice \\d+$".into()),
                ..Default::default()
            },
            &plain,
            None,
            true,
        ),
        (
            "subject does not match",
            Conditions {
                subject_matches: Some("refund".into()),
                ..Default::default()
            },
            &plain,
            None,
            false,
        ),
        (
            "no external recipients: flagged",
            Conditions {
                no_flags: vec![FlagKind::ExternalRecipient],
                ..Default::default()
            },
            &elsewhere,
            None,
            true, // without owner domains nothing is flagged external
        ),
    ];
    for (name, conditions, view, parent, expected) in cases {
        assert_eq!(judge(conditions, view, parent), expected, "{name}");
    }
}

#[test]
fn a_flag_named_in_the_conditions_makes_the_rule_not_match() {
    let view = render_message(
        b"From: owner@example.com\r\nTo: ana@example.com\r\nBcc: eve@example.com\r\n\
          Subject: x\r\n\r\nHi\r\n",
        &RenderOptions::default(),
    );
    assert!(view.flags.iter().any(|f| f.kind == FlagKind::BccRecipient));
    let conditions = Conditions {
        no_flags: vec![FlagKind::BccRecipient],
        ..Default::default()
    };
    assert!(!judge(conditions, &view, None));
}

#[test]
fn the_scope_picks_the_agent() {
    let view = draft_view("", &text("x"));
    let labels = vec!["Label_7".to_owned()];
    let in_scope = |scope: Scope, source: Source, plugin: Option<&str>, chief: bool| {
        let draft = Draft {
            account_id: "g1",
            source,
            plugin,
            chief_filed: chief,
            view: &view,
            parent: None,
            labels: &labels,
        };
        matches(
            &RuleDefinition {
                scope,
                ..rule(Conditions::default())
            },
            &draft,
        )
        .is_ok()
    };
    let account = |a: &str| Scope {
        account: Some(a.into()),
        ..Scope::default()
    };
    assert!(in_scope(account("g1"), Source::Gmail, None, false));
    assert!(!in_scope(account("g2"), Source::Gmail, None, false));
    let sender = |s: &str| Scope {
        sender: Some(s.into()),
        ..Scope::default()
    };
    assert!(in_scope(
        sender("OWNER@example.com"),
        Source::Gmail,
        None,
        false
    ));
    assert!(!in_scope(
        sender("agent@example.com"),
        Source::Gmail,
        None,
        false
    ));
    let plugin = Scope {
        plugin: Some("email".into()),
        ..Scope::default()
    };
    assert!(in_scope(
        plugin.clone(),
        Source::Muster,
        Some("email"),
        false
    ));
    assert!(!in_scope(plugin, Source::Muster, Some("sms"), false));
    let chief = Scope {
        chief_filed: Some(true),
        ..Scope::default()
    };
    assert!(in_scope(chief.clone(), Source::Muster, Some("email"), true));
    assert!(!in_scope(chief, Source::Muster, Some("email"), false));
    // The label: by id, on Gmail drafts only (the test drafts carry `Label_7`).
    let label = |id: &str| Scope {
        label: Some(id.into()),
        ..Scope::default()
    };
    assert!(in_scope(label("Label_7"), Source::Gmail, None, false));
    assert!(!in_scope(label("Label_8"), Source::Gmail, None, false));
    assert!(!in_scope(
        label("Label_7"),
        Source::Muster,
        Some("email"),
        false
    ));
}

#[test]
fn a_definition_that_cannot_work_is_refused() {
    let bad = |f: fn(&mut RuleDefinition)| {
        let mut definition = rule(Conditions::default());
        f(&mut definition);
        definition.check().unwrap_err()
    };
    assert!(bad(|d| d.name = " ".into()).contains("name"));
    assert!(bad(|d| d.conditions.subject_matches = Some("(".into())).contains("subject pattern"));
    assert!(bad(|d| d.action = RuleAction::Reject { reason: "".into() }).contains("say why"));
    assert!(
        bad(|d| d.conditions.recipients_within = vec!["a@b.org".into()]).contains("not a domain")
    );
}

#[test]
fn an_address_with_two_ats_is_in_no_domain_and_a_claimed_parent_puts_nobody_on_the_thread() {
    let eve = Address {
        name: None,
        email: "eve@evil.test@example.com".into(),
    };
    let two_ats = ReviewView {
        to: vec![eve.clone()],
        ..ReviewView::default()
    };
    let within = Conditions {
        recipients_within: vec!["example.com".into()],
        ..Default::default()
    };
    assert!(
        !judge(within, &two_ats, None),
        "eve@evil.test@example.com counted as example.com"
    );

    let outsider = ReviewView {
        to: vec![Address {
            name: None,
            email: "eve@evil.test".into(),
        }],
        ..ReviewView::default()
    };
    // The agent's bait "parent" was addressed to Eve; it is not in the conversation.
    let claimed = ParentMessage {
        to: outsider.to.clone(),
        message_id: Some("bait-1@agent.example".into()),
        not_in_conversation: vec!["bait-1@agent.example".into()],
        ..ParentMessage::default()
    };
    let on_thread = Conditions {
        or_on_thread: true,
        ..Default::default()
    };
    assert!(!judge(on_thread.clone(), &outsider, Some(&claimed)));
    let real = ParentMessage {
        not_in_conversation: Vec::new(),
        ..claimed
    };
    assert!(judge(on_thread, &outsider, Some(&real)), "no false alarm");
}
