//! How a sentence for the owner names a draft: by its subject, as the queue shows it, never by
//! the mirror's item id or Gmail's version ids (issue 38: words a person uses).

use sqlx::SqliteConnection;

use super::Store;
use crate::error::Result;

/// `“Re: Lunch”`, or `the draft without a subject`; `this draft` when the mirror no longer
/// holds it (the sentence then goes on to say it cannot be found).
pub(crate) fn draft_words(subject: Option<&str>) -> String {
    match subject.map(str::trim) {
        Some("") => "the draft without a subject".to_string(),
        Some(subject) => format!("“{subject}”"),
        None => "this draft".to_string(),
    }
}

/// The words for item `item_id`, read inside a transaction.
pub(crate) async fn draft_words_in(conn: &mut SqliteConnection, item_id: i64) -> Result<String> {
    let subject: Option<String> =
        sqlx::query_scalar("SELECT subject FROM review_items WHERE id = ?")
            .bind(item_id)
            .fetch_optional(conn)
            .await?;
    Ok(draft_words(subject.as_deref()))
}

impl Store {
    /// How a sentence for the owner names item `item_id`: its subject in quotes.
    pub async fn draft_words(&self, item_id: i64) -> Result<String> {
        let mut conn = self.pool().acquire().await?;
        draft_words_in(&mut conn, item_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::draft_words;

    #[test]
    fn a_draft_is_named_by_its_subject_never_its_id() {
        assert_eq!(draft_words(Some("Re: Lunch")), "“Re: Lunch”");
        assert_eq!(draft_words(Some("  ")), "the draft without a subject");
        assert_eq!(draft_words(None), "this draft");
    }
}
