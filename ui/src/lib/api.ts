// Typed calls to the desktop shell's Tauri commands and events (docs/desktop-api.md).
// Components call these, never `invoke` or `listen` directly, so every command name and
// payload lives in one place.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  MirroredLabel,
  Account,
  AccountStatus,
  AgentFigures,
  AppStatus,
  AttachmentView,
  BulkOutcome,
  Decision,
  HistoryEntry,
  HistoryFilter,
  ItemState,
  ItemsChanged,
  ItemSummary,
  LeftMessage,
  RecordStanding,
  Listed,
  OpenItem,
  PageStart,
  QueueView,
  Reachability,
  RefusalNotice,
  ReviewDetail,
  SelectionSummary,
  Rule,
  RuleDefinition,
  RuleMode,
  RuleTest,
  RuleView,
  Settings,
  SettingsChange,
  Shown,
  ShownPart,
  Source,
  UiError,
} from "./types";

/** Normalises whatever a failed command threw into a `UiError`. */
export function toUiError(error: unknown): UiError {
  if (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    "message" in error &&
    typeof (error as UiError).message === "string"
  ) {
    return error as UiError;
  }
  // Outside the shell (or an IPC failure) the rejection is a plain string or Error.
  const message = error instanceof Error ? error.message : String(error);
  return { code: "internal", message };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toUiError(error);
  }
}

/** What the queue may be narrowed to on the shell's side. */
export interface ListFilter {
  states?: ItemState[];
  accountId?: string;
  source?: Source;
  /** In the subject, sender or recipients (`queuePage` only). */
  text?: string;
}

/** The queue, pending first. */
export const listItems = (filter?: ListFilter) =>
  call<ItemSummary[]>("list_items", filter ? { filter } : {});
/** A page of the queue (at most `limit` rows from `start`), the counts per state and, with
 * `locate`, where that item is in the filtered list. */
export const queuePage = (
  filter: ListFilter,
  start: PageStart,
  limit: number,
  locate: number | null = null,
) => call<QueueView>("queue_page", { filter, start, limit, locate });
/** Tells the shell the window painted its first queue: the syncs start then. */
export const painted = () => call<null>("painted");
/** Everything about one item; `loadRemote` lets its remote images load this once; `since` is
 * the version the owner was reading (the detail then carries the changes from it). */
export const getReview = (id: number, loadRemote: boolean, since: string | null = null) =>
  call<ReviewDetail>("get_review", { id, loadRemote, since });
/** Tells the shell which item is on screen (no notification for it). */
export const setViewing = (id: number | null) => call<null>("set_viewing", { id });
/** Tells the shell the owner went idle (or came back): Gmail is checked less often meanwhile. */
export const setIdle = (idle: boolean) => call<null>("set_idle", { idle });
/** Records that `part` of version `shown` is on screen (its frame rendered, or the plain text
 * displayed): an approval binds only to a version shown. */
export const displayed = (shown: Shown, part: ShownPart) =>
  call<null>("displayed", { shown, part });
/** Approves the version on screen; refused with `changed_since_shown` if it is not current,
 * `not_shown` if it was never displayed, and `needs_confirmation` when it has cautions and the
 * owner has not said "Approve anyway" (`anyway`). */
export const approve = (shown: Shown, anyway = false) =>
  call<Decision>("approve", { shown, anyway });
/** What approving the version on screen would ask to confirm, one sentence each. */
export const approvalCautions = (shown: Shown) => call<string[]>("approval_cautions", { shown });
/** Rejects the version on screen, with a reason. */
export const reject = (shown: Shown, reason: string) =>
  call<Decision>("reject", { shown, reason });
export const undo = (id: number) => call<Decision>("undo", { id });
/** Saves the owner's edit of the version shown; the draft's new version, to be reviewed. */
export const saveEdit = (shown: Shown, subject: string, text: string) =>
  call<Shown>("save_edit", { shown, subject, text });

/** Every draft the filters show (id and the version its row shows), in list order: "select
 * all shown by this filter". */
export const queueSelection = (filter: ListFilter) =>
  call<Listed[]>("queue_selection", { filter });
/** How many drafts, from which accounts, to whom: what a bulk decision's confirmation lists. */
export const selectionSummary = (items: Listed[]) =>
  call<SelectionSummary>("selection_summary", { items });
/** Rejects the drafts with one reason, each at the version its row showed; those that cannot
 * be (changed since, decided already) are skipped and named. */
export const rejectAll = (items: Listed[], reason: string) =>
  call<BulkOutcome>("reject_all", { items, reason });
/** Approves those drafts whose current version the owner displayed, each at that version; the
 * others are skipped and named. */
export const approveAllDisplayed = (ids: number[]) =>
  call<BulkOutcome>("approve_all_displayed", { ids });

export const rejectReasons = () => call<string[]>("reject_reasons");
export const rawSource = (id: number) => call<string>("raw_source", { id });
/** The reveal rendering of one version: every word, nothing hidden, machine-only text marked. */
export const reveal = (id: number, version: string) => call<string>("reveal", { id, version });
/** A page of the record: decisions carried out or refused, newest first. */
export const historyPage = (filter: HistoryFilter) =>
  call<HistoryEntry[]>("history_page", { filter });
/** How the record stands: whether the sealed log holds, and its checkpoint. */
export const recordStanding = () => call<RecordStanding>("record_standing");
/** Per agent figures: approved, edited, rejected, by rule, median time to decision. */
export const agentFigures = () => call<AgentFigures[]>("agent_figures");
/** One decision of the record: the exact bytes it bound to (that left, for a send). */
export const leftMessage = (decisionId: number) =>
  call<LeftMessage>("left_message", { decisionId });
/** Opens the Gmail draft in the system browser. */
export const openInGmail = (id: number) => call<void>("open_in_gmail", { id });
export const attachmentPreview = (id: number, index: number) =>
  call<AttachmentView>("attachment_preview", { id, index });
/** Opens the native save dialog; `null` when the owner cancelled. */
export const saveAttachment = (id: number, index: number) =>
  call<{ path: string; bytes: number } | null>("save_attachment", { id, index });
export const listAccounts = () => call<AccountStatus[]>("list_accounts");
/** The Gmail accounts' user labels, as the last sync mirrored them (a rule's label scope). */
export const gmailLabels = () => call<MirroredLabel[]>("gmail_labels");
export const addGmail = (clientSecretPath: string) =>
  call<Account>("add_gmail", { clientSecretPath });
export const addMuster = (url: string, password: string) =>
  call<Account>("add_muster", { url, password });
export const removeAccount = (id: string) => call<null>("remove_account", { id });
export const getSettings = () => call<Settings>("get_settings");
/** Saves the settings in `change` and only those (each on its own: a setting changed elsewhere
 * since this page loaded, like Hold everything from the tray, keeps its value); returns the
 * settings as stored. */
export const saveSettings = (change: SettingsChange) => call<Settings>("save_settings", { change });
export const syncNow = () => call<null>("sync_now");
export const setPaused = (paused: boolean) => call<Settings>("set_paused", { paused });
export const getStatus = () => call<AppStatus>("status");
/** The rules in order, each with its record against the owner's own decisions. */
export const listRules = () => call<RuleView[]>("list_rules");
/** Adds a rule (in shadow); a definition that cannot work is refused with core's sentence. */
export const addRule = (definition: RuleDefinition) => call<Rule>("add_rule", { definition });
/** Arms a rule (it decides from now on) or puts it back in shadow; a rule with no record is
 * armed only with `withNoRecord` (the owner's explicit "arm with no record"). */
export const setRuleMode = (id: number, mode: RuleMode, withNoRecord = false) =>
  call<Rule>("set_rule_mode", { id, mode, withNoRecord });
export const removeRule = (id: number) => call<null>("remove_rule", { id });
/** Changes a rule from `version` (the one the owner had open): a new version, back in shadow
 * with a fresh record; refused when it changed elsewhere meanwhile. */
export const editRule = (id: number, version: number, definition: RuleDefinition) =>
  call<Rule>("edit_rule", { id, version, definition });
/** Moves a rule to place `to` (0: first to act); the rules in their new order. */
export const moveRule = (id: number, to: number) => call<Rule[]>("move_rule", { id, to });
/** Adds a copy of a rule ("… (copy)") at the end of the order, in shadow. */
export const duplicateRule = (id: number) => call<Rule>("duplicate_rule", { id });
/** Replays a rule over the history without acting, beside what the owner did. */
export const testRule = (id: number) => call<RuleTest>("test_rule", { id });
/** "Hold everything": no rule decides (rule decisions in their undo window are taken back);
 * the items taken back. */
export const setHoldEverything = (on: boolean) => call<number[]>("set_hold_everything", { on });
/** Opens the native file dialog for the client_secret.json; `null` when the owner cancelled. */
export const pickClientSecret = () => call<string | null>("pick_client_secret");
/** Whether this build offers the demo. */
export const demoAvailable = () => call<boolean>("demo_available");
/** Switches the window to a demo session (only while there is no account). */
export const tryDemo = () => call<null>("try_demo");
/** Whether the app starts (hidden, in the tray) at login. */
export const startAtLogin = () => call<boolean>("start_at_login");
export const setStartAtLogin = (enabled: boolean) =>
  call<boolean>("set_start_at_login", { enabled });

/** The handlers for the shell's events. */
export interface EventHandlers {
  /** `null`: the shell changed something itself (pause, demo): read everything again. */
  itemsChanged: (payload: ItemsChanged | null) => void;
  reachability: (payload: Reachability) => void;
  refusal: (payload: RefusalNotice) => void;
  openItem: (payload: OpenItem) => void;
}

/** Subscribes to every event of the contract; the returned function unsubscribes. */
export async function listenAll(handlers: EventHandlers): Promise<() => void> {
  const unlisten: UnlistenFn[] = await Promise.all([
    listen<ItemsChanged | null>("countersign://items-changed", (e) =>
      handlers.itemsChanged(e.payload ?? null),
    ),
    listen<Reachability>("countersign://reachability", (e) => handlers.reachability(e.payload)),
    listen<RefusalNotice>("countersign://refusal", (e) => handlers.refusal(e.payload)),
    listen<OpenItem>("countersign://open-item", (e) => handlers.openItem(e.payload)),
  ]);
  return () => unlisten.forEach((stop) => stop());
}

/** Calls `changed` whenever the rules' records may have changed while a rules page is open:
 * the rules judged drafts (shadow verdicts too), or items changed (the owner decided one). The
 * returned function unsubscribes. */
export async function onRulesChanged(changed: () => void): Promise<() => void> {
  const unlisten: UnlistenFn[] = await Promise.all([
    listen<number[]>("countersign://rules-judged", () => changed()),
    listen<ItemsChanged | null>("countersign://items-changed", () => changed()),
  ]);
  return () => unlisten.forEach((stop) => stop());
}
