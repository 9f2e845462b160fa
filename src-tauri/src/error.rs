//! The one error shape the UI receives from every command: `{"code": "…", "message": "…"}`.
//!
//! `message` is a sentence for the owner. `code` exists only where the UI does something
//! different from showing the message; everything else is `internal`.

use serde::Serialize;

/// What the UI can branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UiErrorCode {
    /// The local mirror cannot be read: the UI shows it in place of the queue.
    MirrorUnavailable,
    /// Anything else: the UI shows the message.
    Internal,
}

/// An error as the UI sees it. Built from core errors, whose messages never carry secrets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
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
        UiError::new(UiErrorCode::Internal, error.to_string())
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
}
