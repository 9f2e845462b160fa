//! Desktop notifications for refusals, new drafts and drafts a rule sent, over D-Bus
//! `org.freedesktop.Notifications` on Linux.
//!
//! `notify-rust` is used directly (it is what the notification plugin uses underneath) so a
//! thread can wait for the notification's "default" action: clicking it shows the window and
//! selects the item. Core decides *whether* to notify (once per refusal, not for the item in
//! view, not when notifications are off); this only shows it. Nothing secret is ever in a
//! refusal, and only the subject and the reason are shown.

use countersign_core::app::RuleSend;
use countersign_core::store::Refusal;
use countersign_core::ItemSummary;
use tauri::AppHandle;

/// How many subjects a "Sent by rules: N drafts" notification names.
const SUBJECTS_NAMED: usize = 3;

/// The subject as a notification shows it.
fn subject_of(item: &ItemSummary) -> &str {
    if item.subject.trim().is_empty() {
        "(no subject)"
    } else {
        item.subject.trim()
    }
}

/// The title and body of the notification for `refusal` of `item`.
pub fn text(refusal: &Refusal, item: &ItemSummary) -> (String, String) {
    (
        format!("Refused: {}", subject_of(item)),
        refusal.reason.clone(),
    )
}

/// The title and body of the one notification for the drafts rules sent in one dispatch
/// pass: "Sent by rule R: Re: …" for one; "Sent by rules: N drafts" naming the first subjects
/// (and which rules) for several.
pub fn sent_by_rule_text(sent: &[RuleSend]) -> (String, Option<String>) {
    match sent {
        [one] => (
            format!("Sent by rule {}: {}", one.rule, subject_of(&one.item)),
            None,
        ),
        several => {
            let mut named: Vec<String> = several
                .iter()
                .take(SUBJECTS_NAMED)
                .map(|s| format!("{} (rule {})", subject_of(&s.item), s.rule))
                .collect();
            if several.len() > SUBJECTS_NAMED {
                named.push(format!("and {} more", several.len() - SUBJECTS_NAMED));
            }
            (
                format!("Sent by rules: {} drafts", several.len()),
                Some(named.join(", ")),
            )
        }
    }
}

/// The title of the notification for `count` new drafts (one per burst).
pub fn new_drafts_text(count: usize) -> String {
    if count == 1 {
        "1 new draft to review".to_owned()
    } else {
        format!("{count} new drafts to review")
    }
}

/// Shows "N new drafts to review"; clicking it shows the window.
#[cfg(target_os = "linux")]
pub fn new_drafts(app: &AppHandle, count: usize) {
    show(app, new_drafts_text(count), None, |_| {});
}

/// Elsewhere the tray tooltip's count is all there is, for now.
#[cfg(not(target_os = "linux"))]
pub fn new_drafts(_app: &AppHandle, count: usize) {
    tracing::info!(title = %new_drafts_text(count), "desktop notifications are implemented for Linux only");
}

/// Shows the notification for `refusal` of `item`; clicking it opens the item.
#[cfg(target_os = "linux")]
pub fn refusal(app: &AppHandle, refusal: &Refusal, item: &ItemSummary) {
    use crate::events::{emit, OpenItem, OPEN_ITEM};

    let (title, body) = text(refusal, item);
    let id = item.id;
    show(app, title, Some(body), move |app| {
        emit(app, OPEN_ITEM, OpenItem { id });
    });
}

/// Shows the notification for the drafts rules sent in one pass; clicking it opens the first.
#[cfg(target_os = "linux")]
pub fn sent_by_rule(app: &AppHandle, sent: &[RuleSend]) {
    use crate::events::{emit, OpenItem, OPEN_ITEM};

    let Some(first) = sent.first().map(|s| s.item.id) else {
        return;
    };
    let (title, body) = sent_by_rule_text(sent);
    show(app, title, body, move |app| {
        emit(app, OPEN_ITEM, OpenItem { id: first });
    });
}

/// Elsewhere the queue's rows are all there is, for now.
#[cfg(not(target_os = "linux"))]
pub fn sent_by_rule(_app: &AppHandle, sent: &[RuleSend]) {
    let (title, _) = sent_by_rule_text(sent);
    tracing::info!(%title, "desktop notifications are implemented for Linux only");
}

/// Shows a notification with an "Open" action; clicking it shows the window, then runs
/// `on_open`.
#[cfg(target_os = "linux")]
fn show(
    app: &AppHandle,
    title: String,
    body: Option<String>,
    on_open: impl FnOnce(&AppHandle) + Send + 'static,
) {
    let app = app.clone();
    // `wait_for_action` blocks until the notification is clicked or closed: one short-lived
    // thread per notification, which are rare (one per refusal, one per burst of drafts, one
    // per dispatch pass that sent a rule's approvals).
    let spawned = std::thread::Builder::new()
        .name("notification".into())
        .spawn(move || {
            let mut notification = notify_rust::Notification::new();
            notification.appname("Countersign").summary(&title);
            if let Some(body) = &body {
                // Servers may read the body as markup: a reason is plain text.
                notification.body(&escape_markup(body));
            }
            match notification.action("default", "Open").show() {
                Ok(handle) => handle.wait_for_action(|action| {
                    if action == "default" {
                        crate::tray::show_main(&app);
                        on_open(&app);
                    }
                }),
                Err(error) => tracing::warn!(error = %error, "cannot show a notification"),
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(error = %error, "cannot start the notification thread");
    }
}

/// Elsewhere the window's own refusal banner is all there is, for now.
#[cfg(not(target_os = "linux"))]
pub fn refusal(_app: &AppHandle, refusal: &Refusal, item: &ItemSummary) {
    let (title, _) = text(refusal, item);
    tracing::info!(%title, "desktop notifications are implemented for Linux only");
}

/// Escapes the characters the notification spec's body markup gives meaning to.
fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use countersign_core::store::RefusalKind;
    use countersign_core::{ItemState, Source};

    use super::*;

    fn item(subject: &str) -> ItemSummary {
        ItemSummary {
            id: 4,
            account_id: "muster-1".into(),
            source: Source::Muster,
            external_id: "9".into(),
            state: ItemState::SendFailed,
            version: "v1".into(),
            subject: subject.into(),
            from: "priya.nair@example.com".into(),
            recipients: "priya.nair@example.com".into(),
            snippet: "Thursday at 14:00 works".into(),
            state_reason: Some("recipient mailbox full".into()),
            check_state: None,
            redraft_number: 0,
            decision: None,
            account_online: true,
            updated_at: Utc::now(),
            actions: vec![],
            labels: vec![],
        }
    }

    fn refusal(reason: &str) -> Refusal {
        Refusal {
            id: 1,
            item_id: 4,
            kind: RefusalKind::SendFailed,
            reason: reason.into(),
            recorded_at: Utc::now(),
            notified_at: None,
        }
    }

    #[test]
    fn new_drafts_are_counted_in_one_line() {
        assert_eq!(new_drafts_text(1), "1 new draft to review");
        assert_eq!(new_drafts_text(3), "3 new drafts to review");
    }

    #[test]
    fn the_notification_names_the_subject_and_gives_the_reason() {
        let (title, body) = text(
            &refusal("recipient mailbox full"),
            &item("Can we move Tuesday's review to Thursday?"),
        );
        assert_eq!(title, "Refused: Can we move Tuesday's review to Thursday?");
        assert_eq!(body, "recipient mailbox full");
    }

    #[test]
    fn a_draft_without_subject_still_gets_a_readable_title() {
        let (title, _) = text(&refusal("no"), &item("  "));
        assert_eq!(title, "Refused: (no subject)");
    }

    fn sent(rule: &str, subject: &str) -> RuleSend {
        RuleSend {
            rule: rule.into(),
            item: item(subject),
        }
    }

    #[test]
    fn one_draft_sent_by_a_rule_names_the_rule_and_the_subject() {
        let (title, body) = sent_by_rule_text(&[sent("Short replies", "Re: Tuesday")]);
        assert_eq!(title, "Sent by rule Short replies: Re: Tuesday");
        assert_eq!(body, None);
    }

    #[test]
    fn several_drafts_sent_by_rules_are_one_notification_naming_the_first_subjects() {
        let (title, body) = sent_by_rule_text(&[
            sent("Short replies", "Re: Tuesday"),
            sent("Invoices", "Re: Invoice 7"),
            sent("Short replies", " "),
            sent("Short replies", "Re: Friday"),
            sent("Short replies", "Re: Monday"),
        ]);
        assert_eq!(title, "Sent by rules: 5 drafts");
        assert_eq!(
            body.as_deref(),
            Some(
                "Re: Tuesday (rule Short replies), Re: Invoice 7 (rule Invoices), \
                 (no subject) (rule Short replies), and 2 more"
            )
        );
    }

    #[test]
    fn a_reason_with_angle_brackets_is_shown_as_text_not_markup() {
        assert_eq!(
            escape_markup("mailbox <full> & <b>closed</b>"),
            "mailbox &lt;full&gt; &amp; &lt;b&gt;closed&lt;/b&gt;"
        );
    }
}
