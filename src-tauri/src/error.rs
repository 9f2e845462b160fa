//! The one error shape the UI receives from every command: `{"code": "…", "message": "…"}`.
//!
//! `message` is a sentence for the owner. `code` exists only where the UI does something
//! different from showing the message; everything else is `internal`.

use serde::Serialize;

/// What the UI can branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum UiErrorCode {
    /// The local mirror cannot be read: the UI shows it in place of the queue.
    MirrorUnavailable,
    /// The rules refuse the decision (e.g. approving an item awaiting its check): the UI shows
    /// the sentence next to the action.
    Refused,
    /// The draft changed since the version the decision was made on was shown: the UI shows
    /// the new version (with what changed) and asks again.
    ChangedSinceShown,
    /// The version was never displayed (its frame did not load): the UI shows it again.
    NotShown,
    /// The version has cautions (a malformed structure, alternatives that differ): the UI asks
    /// "Approve anyway?", naming them.
    NeedsConfirmation,
    /// The item (or account, decision…) no longer exists: the UI reloads the queue.
    NotFound,
    /// Anything else: the UI shows the message.
    Internal,
}

/// An error as the UI sees it. Built from core errors, whose messages never carry secrets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[error("{message}")]
pub struct UiError {
    /// What the UI branches on.
    pub code: UiErrorCode,
    /// A sentence for the owner.
    pub message: String,
}

impl UiError {
    /// An error with `code` and `message`.
    pub fn new(code: UiErrorCode, message: impl Into<String>) -> Self {
        UiError {
            code,
            message: message.into(),
        }
    }
}

impl From<countersign_core::Error> for UiError {
    fn from(error: countersign_core::Error) -> Self {
        // Core's messages are "cannot …" sentences without secrets (its contract), so they can
        // be shown as they are; the full chain goes to the log for whoever debugs it.
        tracing::warn!(error = %error, "command failed");
        let code = match &error {
            countersign_core::Error::Refused { .. } => UiErrorCode::Refused,
            // The draft changed under the owner either way: show what is current now.
            countersign_core::Error::ChangedSinceShown { .. }
            | countersign_core::Error::EditOvertaken { .. } => UiErrorCode::ChangedSinceShown,
            countersign_core::Error::NotFound { .. } => UiErrorCode::NotFound,
            countersign_core::Error::NotShown { .. } => UiErrorCode::NotShown,
            countersign_core::Error::NeedsConfirmation { .. } => UiErrorCode::NeedsConfirmation,
            _ => UiErrorCode::Internal,
        };
        UiError::new(code, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_reach_the_ui_as_code_and_message() {
        let error = UiError::new(UiErrorCode::MirrorUnavailable, "cannot read the mirror");
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            serde_json::json!({"code": "mirror_unavailable", "message": "cannot read the mirror"})
        );
    }

    #[test]
    fn a_refused_decision_reaches_the_ui_as_refused_with_the_rules_sentence() {
        let error = UiError::from(countersign_core::Error::refused(
            "approve “Re: Lunch”",
            "the plugin has not checked it yet",
        ));
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            serde_json::json!({
                "code": "refused",
                "message": "cannot approve “Re: Lunch”: the plugin has not checked it yet"
            })
        );
    }

    #[test]
    fn a_decision_on_a_version_no_longer_current_reaches_the_ui_as_changed_since_shown() {
        let error = UiError::from(countersign_core::Error::ChangedSinceShown {
            action: "approve “Re: Lunch”".into(),
            shown: "m1".into(),
            current: "m2".into(),
        });
        assert_eq!(
            serde_json::to_value(error.code).unwrap(),
            serde_json::json!("changed_since_shown")
        );
        assert!(error.message.contains("changed since it was shown"));
    }

    #[test]
    fn a_vanished_item_reaches_the_ui_as_not_found() {
        let error = UiError::from(countersign_core::Error::NotFound {
            what: "item",
            id: "42".into(),
        });
        assert_eq!(error.code, UiErrorCode::NotFound);
        assert_eq!(
            serde_json::to_value(error.code).unwrap(),
            serde_json::json!("not_found")
        );
    }

    #[test]
    fn other_core_failures_reach_the_ui_as_internal() {
        let error = UiError::from(countersign_core::Error::Corrupt("bad state name".into()));
        assert_eq!(error.code, UiErrorCode::Internal);
        assert!(error.message.starts_with("cannot "), "{}", error.message);
    }
}
