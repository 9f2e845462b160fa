//! The one error type of countersign-core.

use std::path::PathBuf;

/// Everything that can go wrong in the core, phrased for the person who will read it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The mirror file exists but is not a SQLite database (or is damaged). It is left untouched.
    #[error(
        "cannot open the mirror at {path}: the file is not a Countersign database or is damaged \
         ({detail}); it was left as it is — move it aside to start a fresh mirror"
    )]
    CorruptMirror {
        /// The file that was refused.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The data directory cannot be created or read.
    #[error("cannot use the data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file the owner chose to save to cannot be written.
    #[error("cannot save to {path}: {source}")]
    SaveFile {
        /// The file chosen.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A value cannot be encoded (to JSON) to be stored.
    #[error("cannot encode {what}: {detail}")]
    Encode {
        /// What, e.g. "the settings".
        what: &'static str,
        /// The encoder's words.
        detail: String,
    },
    /// A background task of this process stopped before finishing (it panicked).
    #[error("cannot finish {what}: the task stopped ({detail})")]
    TaskFailed {
        /// What the task was doing.
        what: &'static str,
        /// The runtime's words.
        detail: String,
    },
    /// A migration failed.
    #[error("cannot bring the mirror at {path} up to date: {detail}")]
    Migrate {
        /// The mirror file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
    /// Any other database failure.
    #[error("cannot read or write the mirror: {0}")]
    Database(#[source] sqlx::Error),
    /// A value in the mirror does not parse (a state name, a timestamp...).
    #[error("cannot understand the mirror: {0}")]
    Corrupt(String),
    /// No such item, account, decision...
    #[error("cannot find {what} {id}")]
    NotFound {
        /// The kind of thing.
        what: &'static str,
        /// Its id as the user typed it.
        id: String,
    },
    /// An item or decision cannot move the way it was asked to.
    #[error("cannot {action}: {why}")]
    Refused {
        /// What was asked, in the owner's words: e.g. "approve “Re: Lunch”".
        action: String,
        /// A sentence for the owner.
        why: String,
    },
    /// The owner decided on a version that is no longer the draft's current one: what was on
    /// screen is not what would be sent (or deleted). Nothing was queued.
    #[error("cannot {action}: it changed since it was shown to you; review the new version")]
    ChangedSinceShown {
        /// What was asked, in the owner's words: e.g. "approve “Re: Lunch”".
        action: String,
        /// The version the owner saw.
        shown: String,
        /// The draft's current version.
        current: String,
    },
    /// An approval names a version its actor was never shown (the desktop's frame of it did
    /// not load; the CLI's `show` did not print it). Nothing was queued.
    #[error(
        "cannot {action}: this version was never shown to you; show it first (the app: open \
         the draft; the command line: `countersign show`)"
    )]
    NotShown {
        /// What was asked, in the owner's words: e.g. "approve “Re: Lunch”".
        action: String,
        /// The version named.
        version: String,
    },
    /// The version carries warnings or differences the owner must confirm having seen before
    /// it is approved ("Approve anyway?"). Nothing was queued.
    #[error("cannot {action} without your confirmation: {}", cautions.join(" "))]
    NeedsConfirmation {
        /// What was asked, in the owner's words: e.g. "approve “Re: Lunch”".
        action: String,
        /// One sentence per caution, for the confirmation to name.
        cautions: Vec<String>,
    },
    /// The owner's edit was written to Gmail, but the agent updated the draft again before it
    /// could be read back: the draft now holds the agent's version, which the owner has not
    /// seen. Both versions are recorded as what they are.
    #[error(
        "cannot finish your edit: it was saved to Gmail, but the agent updated the draft right \
         after; review the agent's version before deciding"
    )]
    EditOvertaken {
        /// The item.
        item_id: i64,
        /// The owner's version (the message id `drafts.update` returned).
        edited: String,
        /// The agent's newer version, now current.
        current: String,
    },
    /// The "Start at login" entry cannot be written or removed.
    #[error("cannot change the autostart entry {path}: {source}")]
    Autostart {
        /// The entry file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A Gmail call failed.
    #[error(transparent)]
    Gmail(#[from] countersign_gmail::Error),
    /// A muster call failed.
    #[error(transparent)]
    Muster(#[from] countersign_muster::Error),
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<sqlx::Error> for Error {
    /// A stored value that does not decode (a state name this version does not know, a
    /// timestamp that is not one, a text version that is not UTF-8) is a mirror this version
    /// did not write, not a failing database: it becomes [`Error::Corrupt`].
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => {
                Error::Corrupt(error.to_string())
            }
            error => Error::Database(error),
        }
    }
}

impl Error {
    /// Whether this is core saying no to a decision (the state rules, a version that changed or
    /// was never shown, a caution to confirm) rather than something failing: a bulk decision
    /// names such an item and goes on with the others.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Error::Refused { .. }
                | Error::ChangedSinceShown { .. }
                | Error::NotShown { .. }
                | Error::NeedsConfirmation { .. }
        )
    }

    /// A failure of the whole — the mirror file, the data directory — rather than of one
    /// decision or item: a dispatch pass stops for these and for nothing else (issue 39).
    pub fn is_of_the_whole(&self) -> bool {
        matches!(
            self,
            Error::Database(_)
                | Error::DataDir { .. }
                | Error::CorruptMirror { .. }
                | Error::Migrate { .. }
        )
    }

    /// Build a [`Error::Refused`].
    pub fn refused(action: impl Into<String>, why: impl Into<String>) -> Self {
        Error::Refused {
            action: action.into(),
            why: why.into(),
        }
    }
}
