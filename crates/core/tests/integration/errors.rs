//! Errors name what failed: a file the owner chose to save to is not "the data directory".

use countersign_core::review::save_attachment;
use countersign_core::store::{
    DraftContent, MusterFields, NewAccount, ObservedDraft, SecretStorage,
};
use countersign_core::{Error, ItemState, Source, Store};

const WITH_ATTACHMENT: &str = "To: ana@example.com\r\nSubject: Invoice\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\n\
Attached.\r\n--b1\r\nContent-Type: text/plain; name=note.txt\r\n\
Content-Disposition: attachment; filename=note.txt\r\n\r\nhello\r\n--b1--\r\n";

#[tokio::test]
async fn saving_an_attachment_where_it_cannot_be_written_names_the_chosen_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    let account = store
        .add_account(NewAccount {
            kind: Source::Gmail,
            label: "Work".into(),
            address: "owner@example.com".into(),
            api_base: "http://127.0.0.1:1/".into(),
            granted_scopes: vec![],
            secret_storage: SecretStorage::File,
        })
        .await
        .unwrap()
        .id;
    let id = store
        .record_draft(&ObservedDraft {
            account_id: account,
            source: Source::Gmail,
            external_id: "d1".into(),
            version: "m1".into(),
            content: DraftContent::Raw(WITH_ATTACHMENT.as_bytes().to_vec()),
            observed_state: ItemState::Pending,
            gmail_internal_date: None,
            thread_id: None,
            subject: "Invoice".into(),
            from_addr: "owner@example.com".into(),
            recipients: "ana@example.com".into(),
            snippet: "Attached.".into(),
            muster: MusterFields::default(),
            answers_json: None,
            state_reason: None,
        })
        .await
        .unwrap()
        .item_id;
    let chosen = dir.path().join("no-such-folder").join("note.txt");
    let error = save_attachment(&store, id, 0, &chosen).await.unwrap_err();
    assert!(matches!(error, Error::SaveFile { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot save to {}", chosen.display())),
        "{error}"
    );
    // Where it can be written, the bytes are saved as they are.
    let fine = dir.path().join("note.txt");
    save_attachment(&store, id, 0, &fine).await.unwrap();
    assert_eq!(std::fs::read(&fine).unwrap(), b"hello");
}
