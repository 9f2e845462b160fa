//! The commands of Settings → Rules: the rules with their records, add, arm, edit, reorder,
//! duplicate, remove and "test against history". Each is a few lines over core's store and
//! `rules::record`; the page reads the rules again after each.

use countersign_core::rules::record::{self, RecordLine};
use countersign_core::rules::RuleDefinition;
use countersign_core::store::{MirroredLabel, Rule, RuleMode};
use serde::Serialize;
use tauri::State;

use crate::error::UiError;
use crate::state::AppState;

use super::ACTOR;

/// A rule as Settings → Rules shows it: the rule, its record against the owner's own
/// decisions in one sentence, and the drafts where the owner did otherwise.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    /// The rule (its current version).
    pub rule: Rule,
    /// "would have approved 4; you approved 2, edited 0, rejected 1" (core's
    /// `RuleRecord::summary`).
    pub summary: String,
    /// The drafts where the owner did otherwise than the rule would have.
    pub disagreements: Vec<RecordLine>,
    /// The rule has no record at its current version: arming it needs the owner's explicit
    /// "arm with no record".
    pub no_record: bool,
}

/// The rules in order, each with its record.
#[tauri::command]
pub async fn list_rules(state: State<'_, AppState>) -> Result<Vec<RuleView>, UiError> {
    let store = state.store()?;
    let mut views = Vec::new();
    for rule in store.rules().await? {
        let recorded = record::recorded(store, rule.id).await?;
        views.push(RuleView {
            summary: recorded.summary(),
            no_record: recorded.lines.is_empty(),
            disagreements: recorded.disagreements().into_iter().cloned().collect(),
            rule,
        });
    }
    Ok(views)
}

/// Add a rule at the end of the order, in shadow; a definition that cannot work (no name, a
/// bad subject pattern, a reject without a reason) is refused with core's sentence.
#[tauri::command]
pub async fn add_rule(
    state: State<'_, AppState>,
    definition: RuleDefinition,
) -> Result<Rule, UiError> {
    Ok(state.store()?.add_rule(&definition, ACTOR).await?)
}

/// Arm a rule (it decides from now on) or put it back in shadow. The UI asks first, showing
/// the rule's record; a rule with no record is armed only with `with_no_record` (core refuses
/// it otherwise with `needs_confirmation`).
#[tauri::command]
pub async fn set_rule_mode(
    state: State<'_, AppState>,
    id: i64,
    mode: RuleMode,
    with_no_record: Option<bool>,
) -> Result<Rule, UiError> {
    let store = state.store()?;
    Ok(match mode {
        RuleMode::Armed => {
            let confirmation = if with_no_record == Some(true) {
                record::ArmConfirmation::NoRecord
            } else {
                record::ArmConfirmation::Record
            };
            record::arm(store, id, confirmation, ACTOR).await?
        }
        RuleMode::Shadow => store.set_rule_mode(id, mode, ACTOR).await?,
    })
}

/// Remove a rule (the record still names it).
#[tauri::command]
pub async fn remove_rule(state: State<'_, AppState>, id: i64) -> Result<(), UiError> {
    Ok(state.store()?.remove_rule(id, ACTOR).await?)
}

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
