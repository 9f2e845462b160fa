//! The seal of a decision (issue 35): a MAC with the record's key over the decision's fixed
//! columns and its links — the audit row that recorded it and, for an approval, the view of
//! the version approved. The dispatcher checks it, and the links, before every claim, so a row
//! written into the outbox by anyone without the key is never sent.

use super::seal::{audit_row_mac, KeyState, RecordKey, SealedRow, SEALED_COLUMNS};
use crate::error::{Error, Result};

const DOMAIN: &str = "countersign decision v1";

/// How the outcome of a decision the record does not vouch for begins.
pub const UNVOUCHED: &str = "not sent: the record does not vouch for this decision";

impl super::Store {
    /// The decisions set aside because the record did not vouch for them, newest first.
    pub async fn unvouched_decisions(&self) -> Result<Vec<super::Decision>> {
        Ok(sqlx::query_as(
            "SELECT * FROM decisions WHERE state = 'failed' AND outcome_detail LIKE ? || '%'
             ORDER BY id DESC",
        )
        .bind(UNVOUCHED)
        .fetch_all(self.pool())
        .await?)
    }
}

/// A decision's fixed columns, as stored (times as text), and its seal.
#[derive(sqlx::FromRow)]
struct SealedDecision {
    id: i64,
    item_id: i64,
    kind: String,
    reason: Option<String>,
    version: String,
    digest: String,
    created_at: String,
    decided_by: Option<String>,
    audit_id: Option<i64>,
    view_id: Option<i64>,
    seal: Option<String>,
}

impl SealedDecision {
    fn content(&self) -> String {
        serde_json::json!([
            self.id,
            self.item_id,
            self.kind,
            self.reason,
            self.version,
            self.digest,
            self.created_at,
            self.decided_by,
            self.audit_id,
            self.view_id,
        ])
        .to_string()
    }
}

async fn read(tx: &mut sqlx::SqliteConnection, id: i64) -> Result<SealedDecision> {
    Ok(sqlx::query_as(
        "SELECT id, item_id, kind, reason, version, digest, created_at, decided_by, audit_id,
                view_id, seal
         FROM decisions WHERE id = ?",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?)
}

impl super::Store {
    /// The digest the sealed record holds for decision `id`: from the first audit row sealed
    /// about it (its references as written), after checking that row's seal and, where the
    /// decision carries one, the decision's own. `Err` says, in words, why the record does not
    /// vouch for it — History then shows that, never the bytes as "what left".
    pub async fn sealed_digest(&self, id: i64) -> Result<std::result::Result<String, String>> {
        let key = match self.keys.key() {
            Ok(key) => key,
            Err(why) => return Ok(Err(why.to_owned())),
        };
        let mut conn = self.pool().acquire().await?;
        let row = read(&mut conn, id).await?;
        if let Some(seal) = row.seal.as_deref() {
            if !key.verifies(DOMAIN, &[&row.content()], seal) {
                return Ok(Err(format!(
                    "decision {id} was changed after it was sealed"
                )));
            }
        }
        let sql = format!(
            "SELECT {SEALED_COLUMNS} FROM audit_log
             WHERE json_extract(refs, '$[1]') = ? ORDER BY id LIMIT 1"
        );
        let audit: Option<SealedRow> = sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        let Some(audit) = audit else {
            return Ok(Err(format!("no sealed audit row records decision {id}")));
        };
        let sealed = match (audit.prev_mac.as_deref(), audit.mac.as_deref()) {
            (Some(prev), Some(mac)) => audit_row_mac(key, prev, &audit) == mac,
            _ => false,
        };
        match audit.digest {
            Some(digest) if sealed => Ok(Ok(digest)),
            _ => Ok(Err(format!(
                "audit row {} about decision {id} does not hold its seal",
                audit.id
            ))),
        }
    }
}

/// Link decision `id` to its audit row and view, and seal it.
pub(crate) async fn seal_decision_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &KeyState,
    id: i64,
    audit_id: i64,
    view_id: Option<i64>,
) -> Result<()> {
    let key = keys
        .key()
        .map_err(|why| Error::refused(format!("seal decision {id}"), why))?;
    link_and_seal(tx, key, id, audit_id, view_id).await
}

async fn link_and_seal(
    tx: &mut sqlx::SqliteConnection,
    key: &RecordKey,
    id: i64,
    audit_id: i64,
    view_id: Option<i64>,
) -> Result<()> {
    let mut row = read(tx, id).await?;
    row.audit_id = Some(audit_id);
    row.view_id = view_id;
    sqlx::query("UPDATE decisions SET audit_id = ?, view_id = ?, seal = ? WHERE id = ?")
        .bind(audit_id)
        .bind(view_id)
        .bind(key.mac(DOMAIN, &[&row.content()]))
        .bind(id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Seal the decisions still in the outbox when the record is first sealed, linked to the
/// audit row that queued them (and its view): they were written by the owner's Countersign.
pub(crate) async fn seal_live_legacy_in(
    tx: &mut sqlx::SqliteConnection,
    key: &RecordKey,
) -> Result<()> {
    let live: Vec<(i64, Option<i64>, Option<i64>)> = sqlx::query_as(
        "SELECT d.id,
                (SELECT min(a.id) FROM audit_log a WHERE a.decision_id = d.id),
                (SELECT a.view_id FROM audit_log a WHERE a.decision_id = d.id ORDER BY a.id LIMIT 1)
         FROM decisions d WHERE d.state IN ('queued', 'dispatching', 'uncertain') AND d.seal IS NULL",
    )
    .fetch_all(&mut *tx)
    .await?;
    for (id, audit_id, view_id) in live {
        if let Some(audit_id) = audit_id {
            link_and_seal(tx, key, id, audit_id, view_id).await?;
        }
    }
    Ok(())
}

/// Why decision `id` must not be sent (`None`: its seal and links hold). Refused outright
/// when the key is missing: then nothing can be vouched for, and nothing is set aside.
pub(crate) async fn why_unsendable_in(
    tx: &mut sqlx::SqliteConnection,
    keys: &KeyState,
    id: i64,
) -> Result<Option<String>> {
    let key = keys
        .key()
        .map_err(|why| Error::refused(format!("send decision {id}"), why))?;
    let row = read(tx, id).await?;
    let Some(seal) = row.seal.as_deref() else {
        return Ok(Some(
            "it carries no seal: it was not written by Countersign".into(),
        ));
    };
    if !key.verifies(DOMAIN, &[&row.content()], seal) {
        return Ok(Some(
            "its seal does not match: it was changed after it was decided".into(),
        ));
    }
    let Some(audit_id) = row.audit_id else {
        return Ok(Some("it is linked to no audit row".into()));
    };
    let sql = format!("SELECT {SEALED_COLUMNS} FROM audit_log WHERE id = ?");
    let audit: Option<SealedRow> = sqlx::query_as(&sql)
        .bind(audit_id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(audit) = audit else {
        return Ok(Some(format!("its audit row {audit_id} is gone")));
    };
    let sealed = match (audit.prev_mac.as_deref(), audit.mac.as_deref()) {
        (Some(prev), Some(mac)) => audit_row_mac(key, prev, &audit) == mac,
        _ => false,
    };
    let refs: [Option<i64>; 3] = audit
        .refs
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or_default();
    if !sealed
        || refs[0] != Some(row.item_id)
        || refs[1] != Some(row.id)
        || audit.digest.as_deref() != Some(row.digest.as_str())
    {
        return Ok(Some(format!(
            "its audit row {audit_id} does not record this decision"
        )));
    }
    if row.kind == "approve" {
        let viewed: Option<(i64, String, String)> = match row.view_id {
            Some(view) => {
                sqlx::query_as("SELECT item_id, version, digest FROM view_events WHERE id = ?")
                    .bind(view)
                    .fetch_optional(&mut *tx)
                    .await?
            }
            None => None,
        };
        if refs[2] != row.view_id
            || viewed != Some((row.item_id, row.version.clone(), row.digest.clone()))
        {
            return Ok(Some(
                "its approval is not linked to a view of the version approved".into(),
            ));
        }
    }
    Ok(None)
}
