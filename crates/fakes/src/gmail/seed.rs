//! `--seed demo`: drafts an agent would have written, each answering a message in the inbox,
//! chosen so every review feature has something to show.

use base64::Engine;

use super::state::State;

/// A 1×1 PNG, the "logo" the newsletter reply embeds by `cid:`.
const LOGO_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n";

const SHEET_CSV: &str =
    "Region,Q2,Q3\r\nNorth,120400,131250\r\nSouth,98200,104900\r\nTotal,218600,236150\r\n";

fn wrapped_base64(bytes: &[u8]) -> String {
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    text.as_bytes()
        .chunks(76)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("\r\n")
}

fn crlf(text: &str) -> Vec<u8> {
    text.replace("\r\n", "\n")
        .replace('\n', "\r\n")
        .into_bytes()
}

/// The inbox message a demo draft answers.
struct Parent {
    from: &'static str,
    subject: &'static str,
    message_id: &'static str,
    body: &'static str,
}

/// The agent's draft answering a [`Parent`]: its threading headers (`To`, `Subject: Re:`,
/// `In-Reply-To`, `References`) come from the parent, so they cannot disagree with it.
struct Reply {
    /// Someone copied who is not on the thread.
    cc: Option<&'static str>,
    date: &'static str,
    message_id: &'static str,
    /// The MIME entity: its `Content-*` headers, a blank line, the body.
    content: String,
}

fn add_parent(s: &mut State, owner: &str, parent: &Parent) -> String {
    let Parent {
        from,
        subject,
        message_id,
        body,
    } = parent;
    let raw = crlf(&format!(
        "From: {from}\nTo: {owner}\nSubject: {subject}\nDate: Mon, 30 Nov 2026 09:12:00 +0000\nMessage-ID: {message_id}\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n{body}\n"
    ));
    s.add_inbox_message(raw, None, vec!["INBOX".into()])
        .thread_id
}

/// Files `parent` in the inbox and `reply` as a draft on its thread.
fn add_conversation(s: &mut State, owner: &str, parent: &Parent, reply: &Reply) {
    let thread = add_parent(s, owner, parent);
    let Reply {
        cc,
        date,
        message_id,
        content,
    } = reply;
    let cc = cc.map(|cc| format!("Cc: {cc}\n")).unwrap_or_default();
    let raw = crlf(&format!(
        "From: {owner}\nTo: {to}\n{cc}Subject: Re: {subject}\nDate: {date}\nMessage-ID: {message_id}\nIn-Reply-To: {parent_mid}\nReferences: {parent_mid}\nMIME-Version: 1.0\n{content}",
        to = parent.from,
        subject = parent.subject,
        parent_mid = parent.message_id,
    ));
    s.create_draft(raw, Some(thread));
}

/// Fill `s` with the demo mailbox.
pub fn demo(s: &mut State) {
    let owner = s.email.clone();

    // 1. A plain reply.
    add_conversation(
        s,
        &owner,
        &Parent {
            from: "Alice Martin <alice@example.org>",
            subject: "Meeting next week?",
            message_id: "<parent-meeting@example.org>",
            body: "Hi, could we meet on Tuesday or Wednesday to go through the proposal?\n\nAlice",
        },
        &Reply {
            cc: None,
            date: "Tue, 01 Dec 2026 08:00:00 +0000",
            message_id: "<draft-meeting@countersign.example>",
            content: "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\nHi Alice,\n\nTuesday at 10:00 works for me. I'll bring the revised figures.\n\nBest regards\n".to_owned(),
        },
    );

    // 2. A newsletter-style HTML reply with remote images and an inline `cid:` logo.
    add_conversation(
        s,
        &owner,
        &Parent {
            from: "Community Team <community@news.example.net>",
            subject: "Can you send us your December update?",
            message_id: "<parent-newsletter@news.example.net>",
            body: "Hello! Please reply with your December update for the members' newsletter.",
        },
        &Reply {
            cc: None,
            date: "Tue, 01 Dec 2026 08:05:00 +0000",
            message_id: "<draft-newsletter@countersign.example>",
            content: format!("Content-Type: multipart/related; boundary=\"rel-1\"\n\n--rel-1\nContent-Type: multipart/alternative; boundary=\"alt-1\"\n\n--alt-1\nContent-Type: text/plain; charset=utf-8\n\nDecember update: we shipped the new dashboard and opened two positions.\nRead more: https://blog.example.com/december\n\n--alt-1\nContent-Type: text/html; charset=utf-8\n\n<html><body style=\"font-family:sans-serif\">\n<img src=\"cid:logo@countersign.example\" alt=\"Logo\" width=\"48\" height=\"48\">\n<h1>December update</h1>\n<p>We shipped the <b>new dashboard</b> and opened two positions.</p>\n<img src=\"https://images.example.com/banner-december.png\" alt=\"Banner\" width=\"600\">\n<img src=\"https://tracker.example.com/pixel.gif?id=42\" width=\"1\" height=\"1\">\n<p><a href=\"https://evil.example.net/login\">https://blog.example.com/december</a></p>\n</body></html>\n\n--alt-1--\n\n--rel-1\nContent-Type: image/png; name=\"logo.png\"\nContent-Transfer-Encoding: base64\nContent-ID: <logo@countersign.example>\nContent-Disposition: inline; filename=\"logo.png\"\n\n{LOGO_PNG_BASE64}\n--rel-1--\n"),
        },
    );

    // 3. A reply with a PDF and a spreadsheet attached.
    add_conversation(
        s,
        &owner,
        &Parent {
            from: "Bob Chen <bob@example.org>",
            subject: "Quarterly report",
            message_id: "<parent-report@example.org>",
            body: "Could you send me the Q3 report and the figures behind it?\n\nThanks, Bob",
        },
        &Reply {
            cc: None,
            date: "Tue, 01 Dec 2026 08:10:00 +0000",
            message_id: "<draft-report@countersign.example>",
            content: format!(
                "Content-Type: multipart/mixed; boundary=\"mix-1\"\n\n--mix-1\nContent-Type: text/plain; charset=utf-8\n\nHi Bob,\n\nAttached are the Q3 report and the spreadsheet with the figures.\n\nBest\n\n--mix-1\nContent-Type: application/pdf; name=\"q3-report.pdf\"\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"q3-report.pdf\"\n\n{pdf}\n--mix-1\nContent-Type: text/csv; name=\"q3-figures.csv\"\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"q3-figures.csv\"\n\n{csv}\n--mix-1--\n",
                pdf = wrapped_base64(PDF),
                csv = wrapped_base64(SHEET_CSV.as_bytes()),
            ),
        },
    );

    // 4. A reply that adds a recipient who is not on the thread.
    add_conversation(
        s,
        &owner,
        &Parent {
            from: "Carol Diaz <carol@example.org>",
            subject: "Contract draft",
            message_id: "<parent-contract@example.org>",
            body:
                "Here is my feedback on the contract draft; see my comments on section 4.\n\nCarol",
        },
        &Reply {
            cc: Some("Mallory <mallory@outside.example.com>"),
            date: "Tue, 01 Dec 2026 08:15:00 +0000",
            message_id: "<draft-contract@countersign.example>",
            content: "Content-Type: text/plain; charset=utf-8\n\nHi Carol,\n\nThanks for the comments. I have copied Mallory, who will handle section 4.\n\nBest\n".to_owned(),
        },
    );
}
