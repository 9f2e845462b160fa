//! Attachments in the window: a PDF's first page drawn by the bundled pdf.js under the
//! window's CSP, and a text file shown as text.

use std::time::{Duration, Instant};

use base64::Engine as _;
use countersign_e2e::desktop::skip_or_fail;
use countersign_e2e::fixture::Fixture;

use crate::support::*;

/// A one-page PDF whose page is a blue square on white (pdf.js rebuilds the missing xref).
fn blue_square_pdf() -> Vec<u8> {
    let content = "0 0 1 rg 20 20 160 160 re f";
    format!(
        "%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n\
         2 0 obj <</Type/Pages/Kids[3 0 R]/Count 1>> endobj\n\
         3 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>> endobj\n\
         4 0 obj <</Length {}>> stream\n{content}\nendstream endobj\n\
         trailer <</Root 1 0 R>>\n%%EOF\n",
        content.len()
    )
    .into_bytes()
}

fn draft_with_attachments() -> Vec<u8> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    format!(
        "From: Owner <owner@example.com>\r\nTo: Ana <ana@example.com>\r\n\
         Subject: The quote\r\nMessage-ID: <attach-1@agent.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n\
         --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe quote is attached.\r\n\
         --b1\r\nContent-Type: application/pdf; name=\"quote.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"quote.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n\
         --b1\r\nContent-Type: text/plain; name=\"notes.txt\"\r\n\
         Content-Disposition: attachment; filename=\"notes.txt\"\r\n\r\n\
         Prices valid until March.\r\n--b1--\r\n",
        b64(&blue_square_pdf())
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_attachment_shows_its_first_page_and_a_text_attachment_its_text() {
    let Some(prerequisites) =
        skip_or_fail("a_pdf_attachment_shows_its_first_page_and_a_text_attachment_its_text")
    else {
        return;
    };
    let fixture = Fixture::new().await.unwrap();
    let account = fixture.connect_gmail().await.unwrap();
    let draft = fixture.gmail.file_draft(&draft_with_attachments(), None);
    fixture.sync(&account).await.unwrap();
    let item = fixture.item(&draft.id).await.unwrap();

    let app = fixture.launch(&prerequisites).await.unwrap();
    let session = app.session();
    wait_detail(session, item.id).await.or_log(&app);
    session
        .wait_for_text("#attachments-heading", "Attachments (2)", UI_TIMEOUT)
        .await
        .or_log(&app);
    session
        .wait_for_text(".attachment pre", "Prices valid until March.", UI_TIMEOUT)
        .await
        .or_log(&app);

    // The page is drawn when the canvas's centre is the square's blue.
    let deadline = Instant::now() + UI_TIMEOUT;
    let mut centre = serde_json::Value::Null;
    while Instant::now() < deadline {
        centre = session
            .execute(
                "const c = document.querySelector('canvas[data-testid=pdf-page]');
                 if (!c || !c.width) return null;
                 const d = c.getContext('2d')
                   .getImageData(c.width >> 1, c.height >> 1, 1, 1).data;
                 return Array.from(d);",
                vec![],
            )
            .await
            .unwrap();
        if centre == serde_json::json!([0, 0, 255, 255]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    session
        .execute(
            "document.querySelector('#attachments-heading').scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
    app.screenshot("attachments").await.unwrap();
    assert_eq!(
        centre,
        serde_json::json!([0, 0, 255, 255]),
        "pdf.js drew the first page\n{}",
        app.log_tail()
    );
    app.quit().await.unwrap();
}
