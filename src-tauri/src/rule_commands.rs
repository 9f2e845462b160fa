//! The Tauri commands of Settings → Rules beyond add, arm and remove (`docs/desktop-api.md`):
//! edit, reorder, duplicate and "test against history". Each is a few lines over core's store
//! and `rules::record`; the page reads the rules again after each.

use countersign_core::rules::record::{self, RecordLine};
use countersign_core::rules::RuleDefinition;
use countersign_core::store::{MirroredLabel, Rule};
use serde::Serialize;
use tauri::State;

use crate::commands::ACTOR;
use crate::error::UiError;
use crate::state::AppState;

/// Change a rule from `version`, the one the dialog showed: a new version, back in shadow with
/// a fresh record (the page says so before saving). A definition that cannot work, or a rule
/// changed elsewhere since the dialog opened, is refused with core's sentence.
#[tauri::command]
pub async fn edit_rule(
    state: State<'_, AppState>,
    id: i64,
    version: u32,
    definition: RuleDefinition,
) -> Result<Rule, UiError> {
    Ok(state
        .store()?
        .edit_rule_from(id, version, &definition, ACTOR)
        .await?)
}

/// Move a rule to place `to` (0: first) in the order, which decides which rule acts first;
/// the rules in their new order.
#[tauri::command]
pub async fn move_rule(
    state: State<'_, AppState>,
    id: i64,
    to: usize,
) -> Result<Vec<Rule>, UiError> {
    Ok(state.store()?.move_rule(id, to, ACTOR).await?)
}

/// Add a copy of a rule ("… (copy)") at the end of the order, in shadow.
#[tauri::command]
pub async fn duplicate_rule(state: State<'_, AppState>, id: i64) -> Result<Rule, UiError> {
    Ok(state.store()?.duplicate_rule(id, ACTOR).await?)
}

/// One draft of a rule's replay over the history, as `countersign rules test` prints it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TestedLine {
    /// The draft, what the rule would do and what the owner did.
    pub line: RecordLine,
    /// The owner decided otherwise than the rule would have (the window marks it with `!`).
    pub disagrees: bool,
}

/// A rule replayed over every draft in the mirror, without acting.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleTest {
    /// "would have approved 4; you approved 2, edited 0, rejected 1".
    pub summary: String,
    /// Each draft it matches, newest first.
    pub lines: Vec<TestedLine>,
}

/// Replay rule `id` (its current version) over the history without acting: what it would
/// have done with each draft, beside what the owner did.
#[tauri::command]
pub async fn test_rule(state: State<'_, AppState>, id: i64) -> Result<RuleTest, UiError> {
    let store = state.store()?;
    let rule = store.rule(id).await?;
    let replayed = record::replay(store, &rule.definition).await?;
    Ok(RuleTest {
        summary: replayed.summary(),
        lines: replayed
            .lines
            .iter()
            .map(|line| TestedLine {
                disagrees: line.disagrees(),
                line: line.clone(),
            })
            .collect(),
    })
}

/// The user labels of every Gmail account, as the last sync mirrored them: what a rule's label
/// scope offers, by name (the rule keeps the id). System labels (DRAFT, INBOX) are left out.
#[tauri::command]
pub async fn gmail_labels(state: State<'_, AppState>) -> Result<Vec<MirroredLabel>, UiError> {
    Ok(state
        .store()?
        .labels(None)
        .await?
        .into_iter()
        .filter(|l| l.user)
        .collect())
}
