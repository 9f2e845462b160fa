//! The Tauri commands the UI calls (`docs/desktop-api.md` is the contract). Each is a few
//! lines over `countersign-core`: take the managed state, call core, turn its error into a
//! [`UiError`]. Logic belongs in core.
//!
//! What core does through the running app (decisions, accounts) it announces as an
//! [`AppEvent`](countersign_core::app::AppEvent), and the tray is refreshed on every event
//! ([`crate::events::forwarder`]); only changes made on the store directly (settings) refresh
//! the tray here.
//!
//! Every command listed here must also be listed in `build.rs` (to get an `allow-…`
//! permission) and granted in `capabilities/main.json`, or the UI's call is refused.

use base64::Engine;
use countersign_core::decide::{BulkOutcome, Confirmation, Listed, Shown, PRESET_REJECT_REASONS};
use countersign_core::history::{self, AgentFigures, HistoryEntry, HistoryFilter, LeftMessage};
use countersign_core::render::{AttachmentMeta, AttachmentPreview};
use countersign_core::review::{self, ReviewDetail};
use countersign_core::rules::record::{self, RecordLine};
use countersign_core::rules::RuleDefinition;
use countersign_core::selection::{self, SelectionSummary};
use countersign_core::store::{
    Account, Decision, DecisionFilter, PageStart, QueuePage, Settings, StateCounts, SyncCursor,
};
use countersign_core::store::{Rule, RuleMode, SettingsChange, ShownPart};
use countersign_core::{ItemFilter, ItemState, ItemSummary, Source};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use crate::dialog::{chosen_path, Chooser};
use crate::error::{UiError, UiErrorCode};
use crate::state::AppState;
use crate::tray;

/// Who the audit trail says decided, for decisions taken in this app.
pub(crate) const ACTOR: &str = "owner via desktop";

/// The queue filter the UI sends (every field optional).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueFilter {
    /// Only these states (empty: all).
    pub states: Vec<ItemState>,
    /// Only this account.
    pub account_id: Option<String>,
    /// Only this source.
    pub source: Option<Source>,
    /// Only items with this in the subject, sender or recipients (`queue_page` only).
    pub text: Option<String>,
}

/// The most rows one `queue_page` answers: a few screens, never the whole queue.
const MAX_PAGE: u32 = 500;

/// A page of the queue with what the list shows around it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    /// The rows, their start position and the filtered total.
    #[serde(flatten)]
    pub page: QueuePage,
    /// Items per state for the account/source filter (what the state filter offers).
    pub counts: StateCounts,
    /// The three queued items due soonest (the status bar's countdowns).
    pub soonest_queued: Vec<ItemSummary>,
    /// Where the item asked for with `locate` is in the filtered list (`null`: not in it).
    pub located: Option<u64>,
}

/// An attachment as the preview pane shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentView {
    /// File name, type, size, digest.
    pub meta: AttachmentMeta,
    /// What can be shown safely.
    pub preview: AttachmentPreview,
    /// The bytes, base64, for pdf.js — only when `preview.kind` is `pdf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf_base64: Option<String>,
}

/// Where an attachment was saved.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SavedAttachment {
    /// The file the owner chose.
    pub path: String,
    /// Bytes written.
    pub bytes: u64,
}

/// An account with where its sync stands.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AccountStatus {
    /// The account.
    pub account: Account,
    /// Its sync cursor (last sync, online).
    pub cursor: SyncCursor,
}

/// What the status bar shows.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    /// Every account with its sync state.
    pub accounts: Vec<AccountStatus>,
    /// Drafts waiting for the owner.
    pub awaiting_review: u64,
    /// Decisions in the outbox.
    pub queued: u64,
    /// Whether sending is paused.
    pub paused: bool,
    /// Whether "Hold everything" is on: no rule decides.
    pub hold_everything: bool,
    /// Whether this app dispatches decisions (false when another process does).
    pub dispatching: bool,
    /// Demo mode (the UI shows a "Demo" badge).
    pub demo: bool,
    /// Every item state in the order the filter and the counts show them (core's
    /// `ItemState::ALL`; the UI keeps no copy).
    pub state_order: Vec<ItemState>,
}

/// The queue: items matching `filter`, pending first.
#[tauri::command]
pub async fn list_items(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
) -> Result<Vec<ItemSummary>, UiError> {
    let filter = filter.unwrap_or_default();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    Ok(state.store()?.list_items(&filter).await?)
}

/// One page of the queue (`limit` rows at most, from `start`), narrowed by `filter`, with the
/// counts per state and where item `locate` is: the window holds the rows in view and a
/// margin, never the whole list.
#[tauri::command]
pub async fn queue_page(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
    start: PageStart,
    limit: u32,
    locate: Option<i64>,
) -> Result<QueueView, UiError> {
    if limit == 0 || limit > MAX_PAGE {
        return Err(UiError::new(
            UiErrorCode::Internal,
            format!("cannot read a page of {limit} rows: ask for 1 to {MAX_PAGE}"),
        ));
    }
    if let Some(id) = locate {
        hold_refresh_for_tests(id).await;
    }
    let filter = filter.unwrap_or_default();
    let text = filter.text.clone();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    let store = state.store()?;
    Ok(QueueView {
        page: store
            .queue_page(&filter, text.as_deref(), &start, limit)
            .await?,
        counts: store.state_counts(&filter).await?,
        soonest_queued: store.soonest_queued(&filter, 3).await?,
        located: match locate {
            Some(id) => store.queue_position(&filter, text.as_deref(), id).await?,
            None => None,
        },
    })
}

/// Debug builds only: with `COUNTERSIGN_TEST_REFRESH_GATE` naming a file, a page that locates
/// the selection (the UI reading its queue again after a change) waits while that file exists,
/// having added a line with the item it locates to `<file>.waiting`; the end-to-end suite holds
/// a refresh open this way and presses keys meanwhile.
async fn hold_refresh_for_tests(locate: i64) {
    #[cfg(debug_assertions)]
    if let Some(gate) = std::env::var_os("COUNTERSIGN_TEST_REFRESH_GATE") {
        use std::io::Write as _;
        let gate = std::path::PathBuf::from(gate);
        if gate.exists() {
            let waiting = gate.with_extension("waiting");
            let marked = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&waiting)
                .and_then(|mut file| writeln!(file, "{locate}"));
            if let Err(e) = marked {
                tracing::warn!("cannot mark the held refresh at {}: {e}", waiting.display());
            }
            while gate.exists() {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = locate;
}

/// The window painted its first queue (from the mirror): the syncs start now, so contacting
/// the accounts never delays the first paint. Later calls do nothing.
#[tauri::command]
pub async fn painted(state: State<'_, AppState>) -> Result<(), UiError> {
    let app = state.app()?;
    tracing::info!("the window painted its first queue: starting the syncs");
    Ok(app.start_syncs().await?)
}

/// Everything the detail pane shows for one item; the owner is now looking at it.
#[tauri::command]
pub async fn get_review(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
    load_remote: bool,
    since: Option<String>,
) -> Result<ReviewDetail, UiError> {
    // In view from the moment it is asked for: a `set_viewing(null)` the UI sends after this
    // call (the owner moved on while the detail loaded) must win over it, not be undone by it.
    state.app()?.set_viewing(Some(id));
    tray::mark_read(&app, id);
    slow_detail_for_tests().await;
    Ok(review::review_detail_since(state.store()?, id, load_remote, since.as_deref()).await?)
}

/// Debug builds only: `COUNTERSIGN_TEST_REVIEW_DELAY_MS` makes every detail load that much
/// slower, so the end-to-end suite can press keys while a detail is still loading.
async fn slow_detail_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("COUNTERSIGN_TEST_REVIEW_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// The owner went idle (no key or pointer input for a while) or came back: Gmail is checked
/// as for a hidden window while idle.
#[tauri::command]
pub fn set_idle(state: State<'_, AppState>, idle: bool) -> Result<(), UiError> {
    state.app()?.set_owner_idle(idle);
    Ok(())
}

/// The item the owner looks at (none: `null`); its refusals are not notified.
#[tauri::command]
pub fn set_viewing(
    app: AppHandle,
    state: State<'_, AppState>,
    id: Option<i64>,
) -> Result<(), UiError> {
    state.app()?.set_viewing(id);
    if let Some(id) = id {
        tray::mark_read(&app, id);
    }
    Ok(())
}

/// The mail frame of version `shown` finished rendering `part` (the HTML, or the plain text
/// after the owner switched to it): recorded as shown, which an approval needs.
#[tauri::command]
pub async fn displayed(
    state: State<'_, AppState>,
    shown: Shown,
    part: ShownPart,
) -> Result<(), UiError> {
    state.store()?.record_view(&shown, ACTOR, part).await?;
    Ok(())
}

/// Approve the version shown (the review detail's `shown`); it is sent when the undo window
/// closes. Another current version is refused (`changed_since_shown`), a version never
/// displayed too (`not_shown`), and one with cautions asks first (`needs_confirmation`) unless
/// the owner said "Approve anyway" (`anyway`).
#[tauri::command]
pub async fn approve(
    state: State<'_, AppState>,
    shown: Shown,
    anyway: Option<bool>,
) -> Result<Decision, UiError> {
    let confirmation = if anyway == Some(true) {
        Confirmation::DespiteCautions
    } else {
        Confirmation::None
    };
    // Core tells the UI (items-changed) before this returns.
    Ok(state.app()?.approve(&shown, ACTOR, confirmation).await?)
}

/// Save the owner's edit of the version shown (Gmail): the draft's new version, which the
/// owner reviews and approves like any other. Another current version is refused
/// (`changed_since_shown`).
#[tauri::command]
pub async fn save_edit(
    state: State<'_, AppState>,
    shown: Shown,
    subject: String,
    text: String,
) -> Result<Shown, UiError> {
    Ok(state
        .app()?
        .save_edit(&shown, &subject, &text, ACTOR)
        .await?)
}

/// Reject the version shown, with a reason.
#[tauri::command]
pub async fn reject(
    state: State<'_, AppState>,
    shown: Shown,
    reason: String,
) -> Result<Decision, UiError> {
    Ok(state.app()?.reject(&shown, &reason, ACTOR).await?)
}

/// Take back the decision while nothing of it has left (core's `actions::undoable`).
#[tauri::command]
pub async fn undo(state: State<'_, AppState>, id: i64) -> Result<Decision, UiError> {
    Ok(state.app()?.undo(id, ACTOR).await?)
}

/// Every item the queue shows under `filter` (its id and the version its row shows), in list
/// order: "select all shown by this filter", without reading the rows.
#[tauri::command]
pub async fn queue_selection(
    state: State<'_, AppState>,
    filter: Option<QueueFilter>,
) -> Result<Vec<Listed>, UiError> {
    let filter = filter.unwrap_or_default();
    let text = filter.text.clone();
    let filter = ItemFilter {
        states: filter.states,
        account_id: filter.account_id,
        source: filter.source,
    };
    Ok(state
        .store()?
        .queue_listing(&filter, text.as_deref())
        .await?)
}

/// How many drafts are selected, from which accounts and to whom (each at the version its row
/// showed): what the confirmation of a bulk decision lists.
#[tauri::command]
pub async fn selection_summary(
    state: State<'_, AppState>,
    items: Vec<Listed>,
) -> Result<SelectionSummary, UiError> {
    Ok(selection::summarize(state.store()?, &items).await?)
}

/// Reject the drafts selected with one reason, each at the version its row showed; one that
/// changed since is skipped (named, with why), never rejected at its new version.
#[tauri::command]
pub async fn reject_all(
    state: State<'_, AppState>,
    items: Vec<Listed>,
    reason: String,
) -> Result<BulkOutcome, UiError> {
    Ok(state
        .app()?
        .reject_all_listed(&items, &reason, ACTOR)
        .await?)
}

/// Approve those of the drafts selected whose current version the owner displayed, each at
/// that version; the others (never displayed, changed since, with cautions) are skipped and
/// named.
#[tauri::command]
pub async fn approve_all_displayed(
    state: State<'_, AppState>,
    ids: Vec<i64>,
) -> Result<BulkOutcome, UiError> {
    Ok(state.app()?.approve_all_displayed(&ids, ACTOR).await?)
}

/// The reasons offered when rejecting.
#[tauri::command]
pub fn reject_reasons() -> Vec<String> {
    PRESET_REJECT_REASONS
        .iter()
        .map(|r| r.to_string())
        .collect()
}

/// The current version's source.
/// Opens the Gmail draft in the system browser (the link comes from the mirror, never from
/// the UI, so the webview cannot make the shell open anything else).
#[tauri::command]
pub async fn open_in_gmail(state: State<'_, AppState>, id: i64) -> Result<(), UiError> {
    let link = countersign_core::answered::gmail_link_of(state.store()?, id)
        .await?
        .ok_or_else(|| UiError::new(UiErrorCode::Internal, "A muster draft has no Gmail link."))?;
    crate::browser::open(&link).map_err(|e| {
        tracing::warn!(error = %e, "cannot open the browser");
        UiError::new(
            UiErrorCode::Internal,
            format!("Cannot open the browser ({e}); the link is {link}"),
        )
    })
}

#[tauri::command]
pub async fn raw_source(state: State<'_, AppState>, id: i64) -> Result<String, UiError> {
    Ok(review::raw_source(state.store()?, id).await?)
}

/// The reveal rendering of version `version` of item `id`, for a sandboxed frame.
#[tauri::command]
pub async fn reveal(
    state: State<'_, AppState>,
    id: i64,
    version: String,
) -> Result<String, UiError> {
    Ok(review::reveal(state.store()?, id, &version).await?)
}

/// A page of the record: decisions carried out or refused, newest first, narrowed by `filter`.
#[tauri::command]
pub async fn history_page(
    state: State<'_, AppState>,
    filter: HistoryFilter,
) -> Result<Vec<HistoryEntry>, UiError> {
    Ok(state.store()?.history(&filter).await?)
}

/// How the record stands: whether the sealed log holds, and its checkpoint (issue 35).
#[tauri::command]
pub async fn record_standing(
    state: State<'_, AppState>,
) -> Result<countersign_core::store::RecordStanding, UiError> {
    Ok(state.store()?.record_standing().await?)
}

/// Per agent figures over the whole record.
#[tauri::command]
pub async fn agent_figures(state: State<'_, AppState>) -> Result<Vec<AgentFigures>, UiError> {
    Ok(state.store()?.agent_figures().await?)
}

/// One decision of the record opened: the exact bytes it bound to (that left, for a send),
/// rendered and as source.
#[tauri::command]
pub async fn left_message(
    state: State<'_, AppState>,
    decision_id: i64,
) -> Result<LeftMessage, UiError> {
    Ok(history::left_message(state.store()?, decision_id).await?)
}

/// One attachment's metadata and safe preview (with its bytes only for a PDF).
#[tauri::command]
pub async fn attachment_preview(
    state: State<'_, AppState>,
    id: i64,
    index: usize,
) -> Result<AttachmentView, UiError> {
    let (meta, preview, bytes) = review::attachment(state.store()?, id, index).await?;
    let pdf_base64 = matches!(preview, AttachmentPreview::Pdf)
        .then(|| base64::engine::general_purpose::STANDARD.encode(&bytes));
    Ok(AttachmentView {
        meta,
        preview,
        pdf_base64,
    })
}

/// Asks where to save one attachment (native dialog), then saves it; `null` when cancelled.
#[tauri::command]
pub async fn save_attachment(
    app: AppHandle,
    state: State<'_, AppState>,
    id: i64,
    index: usize,
) -> Result<Option<SavedAttachment>, UiError> {
    let store = state.store()?;
    let (meta, _, _) = review::attachment(store, id, index).await?;
    let mut dialog = app.dialog().file();
    if let Some(name) = &meta.file_name {
        dialog = dialog.set_file_name(name);
    }
    let Some(path) = chosen_path(dialog, Chooser::Save, "cannot save to the place chosen").await?
    else {
        return Ok(None);
    };
    let bytes = review::save_attachment(store, id, index, &path).await?;
    Ok(Some(SavedAttachment {
        path: path.display().to_string(),
        bytes,
    }))
}

/// Every account with its sync state.
#[tauri::command]
pub async fn list_accounts(state: State<'_, AppState>) -> Result<Vec<AccountStatus>, UiError> {
    account_statuses(state.store()?).await
}

/// Connect a Gmail account (Google's consent in the system browser) and start syncing it.
#[tauri::command]
pub async fn add_gmail(
    state: State<'_, AppState>,
    client_secret_path: String,
) -> Result<Account, UiError> {
    let json = std::fs::read_to_string(&client_secret_path).map_err(|e| {
        UiError::new(
            UiErrorCode::Internal,
            format!("cannot read {client_secret_path}: {e}"),
        )
    })?;
    let account = state
        .app()?
        .connect_gmail(crate::welcome::gmail_connect(json))
        .await?;
    Ok(account)
}

/// Sign in to a muster instance and start following it.
#[tauri::command]
pub async fn add_muster(
    state: State<'_, AppState>,
    url: String,
    password: String,
) -> Result<Account, UiError> {
    let account = state.app()?.connect_muster(&url, &password).await?;
    Ok(account)
}

/// Stop following an account and remove it, its secrets and everything mirrored for it.
#[tauri::command]
pub async fn remove_account(state: State<'_, AppState>, id: String) -> Result<(), UiError> {
    // Core stops the account's live task before deleting it.
    Ok(state.app()?.remove_account(&id).await?)
}

/// The owner's settings.
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> Result<Settings, UiError> {
    Ok(state.store()?.settings().await?)
}

/// Change the settings the owner changed, and only those (each on its own, so a page's older
/// copy of the others cannot undo a switch thrown elsewhere); returns them as stored.
#[tauri::command]
pub async fn save_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    change: SettingsChange,
) -> Result<Settings, UiError> {
    let settings = state.store()?.update_settings(&change, ACTOR).await?;
    tray::refresh_later(&app);
    Ok(settings)
}

/// Sync every account once, now.
#[tauri::command]
pub async fn sync_now(state: State<'_, AppState>) -> Result<(), UiError> {
    Ok(state.app()?.sync_now().await?)
}

/// Pause or resume sending; returns the settings.
#[tauri::command]
pub async fn set_paused(
    app: AppHandle,
    state: State<'_, AppState>,
    paused: bool,
) -> Result<Settings, UiError> {
    let settings = state.store()?.set_paused(paused, ACTOR).await?;
    tray::refresh_later(&app);
    Ok(settings)
}

/// What the status bar shows.
#[tauri::command]
pub async fn status(state: State<'_, AppState>) -> Result<AppStatus, UiError> {
    let store = state.store()?;
    let settings = store.settings().await?;
    Ok(AppStatus {
        accounts: account_statuses(store).await?,
        awaiting_review: store.count_awaiting_review().await?,
        queued: store.list_decisions(DecisionFilter::Live).await?.len() as u64,
        paused: settings.paused,
        hold_everything: settings.hold_everything,
        dispatching: state.app().is_ok_and(|app| app.is_dispatcher()),
        demo: state.is_demo(),
        state_order: ItemState::ALL.to_vec(),
    })
}

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

/// What approving the version shown would ask to confirm, one sentence each: the
/// "Approve anyway?" question lists them under the draft's subject.
#[tauri::command]
pub async fn approval_cautions(
    state: State<'_, AppState>,
    shown: Shown,
) -> Result<Vec<String>, UiError> {
    Ok(countersign_core::decide::approval_cautions(state.store()?, &shown, ACTOR).await?)
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

/// Turn "Hold everything" on (no rule decides, and rule decisions still in their undo window
/// are taken back) or off; returns the items whose rule decision was taken back.
#[tauri::command]
pub async fn set_hold_everything(
    app: AppHandle,
    state: State<'_, AppState>,
    on: bool,
) -> Result<Vec<i64>, UiError> {
    let undone = hold_everything(state.store()?, on).await?;
    // The taken-back rows and the status bar changed: the window reads everything again.
    crate::events::emit(&app, crate::events::ITEMS_CHANGED, ());
    tray::refresh_later(&app);
    Ok(undone)
}

/// [`set_hold_everything`] without the window: the tray's switch calls it too.
pub async fn hold_everything(
    store: &countersign_core::Store,
    on: bool,
) -> Result<Vec<i64>, UiError> {
    Ok(countersign_core::rules::pass::set_hold_everything(store, on, ACTOR).await?)
}

async fn account_statuses(store: &countersign_core::Store) -> Result<Vec<AccountStatus>, UiError> {
    let mut statuses = Vec::new();
    for account in store.list_accounts().await? {
        let cursor = store.sync_cursor(&account.id).await?;
        statuses.push(AccountStatus { account, cursor });
    }
    Ok(statuses)
}

#[cfg(test)]
mod tests;
