//! A list answer read record by record: muster is a moving target (a newer one may add a state,
//! an older one may break a record), and one record this client cannot read must not hide the
//! others. Each record of a list is decoded on its own; one that does not decode is returned
//! beside the rest as an [`Unreadable`] record, with its id when it has one.

/// The records of one list answer: those read, in muster's order, and those that could not be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed<T> {
    /// The records that were read.
    pub records: Vec<T>,
    /// The records that could not be read, in muster's order.
    pub unreadable: Vec<Unreadable>,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed {
            records: Vec::new(),
            unreadable: Vec::new(),
        }
    }
}

/// A record of a list that this client could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// Its `id` as text, when it has one this client can read (a JSON string or number);
    /// `None` when the id itself is missing or of another type.
    pub id: Option<String>,
    /// What was wrong with it, naming the field, e.g. "missing field `updatedAt`".
    pub reason: String,
    /// The record exactly as muster sent it, so it can be shown as it is.
    pub raw: serde_json::Value,
}

/// The `id` of a raw record, read as every id is (a JSON string or number, kept as text).
pub(crate) fn raw_id(raw: &serde_json::Value) -> Option<String> {
    match raw.get("id")? {
        serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// Read each raw record with `read`; one that fails becomes an [`Unreadable`].
pub(crate) fn read_each<T>(
    raw: Vec<serde_json::Value>,
    read: impl Fn(serde_json::Value) -> std::result::Result<T, String>,
) -> Listed<T> {
    let mut listed = Listed::default();
    for record in raw {
        match read(record.clone()) {
            Ok(value) => listed.records.push(value),
            Err(reason) => listed.unreadable.push(Unreadable {
                id: raw_id(&record),
                reason,
                raw: record,
            }),
        }
    }
    listed
}
