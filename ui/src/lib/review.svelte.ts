// The open draft: its review detail, loaded when the selection changes or the mirror changes,
// and the owner's actions on it. One class so the buttons and the keyboard shortcuts go
// through the same checks ("you can only reject it") and show errors in the same place.
import * as api from "./api";
import type {
  Action,
  ActionState,
  ItemSummary,
  ReviewDetail,
  ReviewDiff,
  Shown,
  ShownPart,
  UiError,
} from "./types";

/**
 * Why `action` is not open on `item` at `now` (ms), or null when it is: core's word
 * (`item.actions`), never the UI's own rule. `actions` is the freshest list core gave for the
 * item (the open detail's, or the queue row's).
 */
export function actionBlocked(
  item: ItemSummary | null,
  actions: ActionState[] | null,
  action: Action,
  now: number,
): string | null {
  if (!item) return "No draft is selected.";
  const state = (actions ?? item.actions).find((a) => a.action === action);
  if (!state) return `Cannot ${action} this draft.`;
  if (!state.allowed) return `Cannot ${action}: ${state.whyNot ?? "not allowed now"}.`;
  // Core said when it closes by itself (the undo window): no need to ask it again.
  if (state.until !== null && Date.parse(state.until) <= now) {
    return `Cannot ${action}: the window closed; it is too late to take it back.`;
  }
  return null;
}

/** How long Approve waits after the draft on screen was swapped for a newer version, so a
 * click aimed at the old version cannot land on the new one. */
export const SETTLE_MS = 1500;

/** The draft carries a plain-text and an HTML alternative of its own (neither derived from the
 * other): recipients may read either, so the review offers both. */
export function hasBothAlternatives(view: ReviewDetail["view"]): boolean {
  return !view.textDerived && !view.htmlDerived && view.textBody.length > 0;
}

export class Review {
  #detail = $state<ReviewDetail | null>(null);
  /** Loading the detail failed. */
  #loadError = $state<UiError | null>(null);
  /** The last action failed: shown next to the actions. */
  #actionError = $state<UiError | null>(null);
  #busy = $state(false);
  /** The owner asked to load remote content for this draft (kept across reloads of it). */
  #loadRemote = $state(false);
  /** The version whose detail, mail frame included, has rendered: decisions bind to it. */
  #shown = $state<Shown | null>(null);
  /** The draft changed while the owner was reading it: the changes from what they read. */
  #changedWhileReading = $state<ReviewDiff | null>(null);
  /** Approve waits a moment after such a change (see `SETTLE_MS`). */
  #settling = $state(false);
  /** Which alternative of the body is on screen: the HTML (the mail frame) or the plain text. */
  #part = $state<ShownPart>("html");
  /** Core asked "Approve anyway?" for this version: its cautions, until the owner answers. */
  #confirming = $state<{ shown: Shown; cautions: string[] } | null>(null);

  #id: number | null = null;
  #generation = 0;
  /** The last version of `#id` whose mail frame rendered: what the owner has read. A newer
   * version's changes are shown against it, so two quick updates (the second arriving before
   * the first one's frame rendered) show both changes, not only the last. */
  #reading: string | null = null;
  #settleTimer: ReturnType<typeof setTimeout> | null = null;

  // Read-only from outside: the methods below are how the state changes.
  get detail() {
    return this.#detail;
  }
  get loadError() {
    return this.#loadError;
  }
  get actionError() {
    return this.#actionError;
  }
  get busy() {
    return this.#busy;
  }
  get loadRemote() {
    return this.#loadRemote;
  }
  get shown() {
    return this.#shown;
  }
  get changedWhileReading() {
    return this.#changedWhileReading;
  }
  get settling() {
    return this.#settling;
  }
  get part() {
    return this.#part;
  }
  get confirming() {
    return this.#confirming;
  }

  /** Shows item `id` (or nothing); reloads when it is the same item. */
  async open(id: number | null): Promise<void> {
    if (id !== this.#id) {
      this.#id = id;
      this.#loadRemote = false;
      this.#actionError = null;
      this.#detail = null;
      this.#shown = null;
      this.#changedWhileReading = null;
      this.#reading = null;
      this.#part = "html";
      this.#confirming = null;
      this.#settle(false);
    }
    const generation = ++this.#generation;
    if (id === null) {
      this.#loadError = null;
      void api.setViewing(null).catch(() => {});
      return;
    }
    try {
      const since = this.#reading;
      const detail = await api.getReview(id, this.#loadRemote, since);
      if (generation !== this.#generation) return;
      // Only a version that was not on screen yet counts: reloading the one whose frame is
      // still rendering (or rendered while this load was on its way) changes nothing.
      const arrived = detail.shown.version !== this.#detail?.shown.version;
      if (since !== null && arrived && detail.shown.version !== since) {
        // A newer version replaced the one on screen: it must be rendered (and read) before
        // anything is decided on it. Its changes are from the last version the owner read.
        this.#shown = null;
        this.#changedWhileReading = detail.changedSince;
        this.#settle(true);
      }
      this.#detail = detail;
      this.#loadError = null;
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#loadError = error as UiError;
    }
  }

  /** `part` of `version` of the open draft is on screen (the mail frame finished rendering
   * it, or the plain text is displayed): core records it as shown, and decisions bind to it
   * from then on. */
  async displayed(version: string, part: ShownPart): Promise<void> {
    const detail = this.#detail;
    if (!detail || detail.shown.id !== this.#id || detail.shown.version !== version) return;
    const shown = detail.shown;
    try {
      await api.displayed(shown, part);
    } catch (error) {
      this.#loadError = error as UiError;
      return;
    }
    // Still the version on screen, in that rendering, once core has recorded it.
    const now = this.#detail;
    if (now && now.shown.id === shown.id && now.shown.version === shown.version && this.#part === part) {
      this.#shown = shown;
      // What the owner has read: a newer version's changes are shown against it.
      this.#reading = version;
    }
  }

  /** Shows the other alternative of the body (key `t`), when the draft has both. */
  switchPart(): void {
    const view = this.#detail?.view;
    if (!view || !hasBothAlternatives(view)) return;
    this.#part = this.#part === "html" ? "text" : "html";
    // Bound again once the new rendering is on screen (and recorded).
    this.#shown = null;
  }

  /** What a decision on `item` binds to, or why there is none yet. */
  #target(item: ItemSummary): Shown | string {
    const shown = this.#shown;
    if (!shown || shown.id !== item.id || this.#detail?.shown.version !== shown.version) {
      return "Still loading this draft — nothing was decided. Try again once it is shown.";
    }
    if (item.version !== shown.version) {
      // The queue already holds a newer version than the one on screen (its detail is on its
      // way): a decision now would bind to what the owner is no longer shown.
      return "This draft just changed — its new version is loading. Nothing was decided.";
    }
    if (this.#settling) {
      return "This draft just changed — read what changed before deciding.";
    }
    return shown;
  }

  /** Asks core to approve `target`; cautions it names open the "Approve anyway?" question. */
  async #approve(target: Shown, anyway: boolean): Promise<boolean> {
    this.#busy = true;
    this.#actionError = null;
    try {
      await api.approve(target, anyway);
      this.#confirming = null;
      return true;
    } catch (error) {
      const uiError = error as UiError;
      if (uiError.code === "needs_confirmation" && !anyway) {
        // The question lists the cautions themselves, not the error sentence around them.
        const cautions = await api.approvalCautions(target).catch(() => [uiError.message]);
        this.#confirming = { shown: target, cautions: cautions.length > 0 ? cautions : [uiError.message] };
      } else {
        this.#confirming = null;
        this.#actionError = uiError;
        if (["not_found", "refused", "changed_since_shown", "not_shown"].includes(uiError.code)) {
          void this.reload();
        }
      }
      return false;
    } finally {
      this.#busy = false;
    }
  }

  /** The actions core gave for `item`: the open detail's when it is at least as new as the
   * queue row (the detail also knows the message size), else the row's. */
  actionsFor(item: ItemSummary | null): ActionState[] | null {
    const detail = this.#detail;
    if (!item || !detail || detail.item.id !== item.id) return null;
    return Date.parse(detail.item.updatedAt) >= Date.parse(item.updatedAt)
      ? detail.item.actions
      : null;
  }

  /** Why `action` is not open on `item` now (core's sentence), or null. */
  blocked(item: ItemSummary | null, action: Action, now: number = Date.now()): string | null {
    return actionBlocked(item, this.actionsFor(item), action, now);
  }

  /** Why the owner cannot decide on `item` right now (not shown yet, just changed), or null. */
  notReady(item: ItemSummary | null): string | null {
    if (!item) return "No draft is selected.";
    const target = this.#target(item);
    return typeof target === "string" ? target : null;
  }

  #settle(on: boolean): void {
    if (this.#settleTimer) clearTimeout(this.#settleTimer);
    this.#settleTimer = null;
    this.#settling = on;
    if (on) this.#settleTimer = setTimeout(() => this.#settle(false), SETTLE_MS);
  }

  /** Reloads the open item (the mirror changed). */
  reload(): Promise<void> {
    return this.open(this.#id);
  }

  /** Loads this draft's remote content, once, on the owner's word. */
  async allowRemote(): Promise<void> {
    this.#loadRemote = true;
    await this.reload();
  }

  async #act(action: () => Promise<unknown>): Promise<boolean> {
    this.#busy = true;
    this.#actionError = null;
    try {
      await action();
      return true;
    } catch (error) {
      this.#actionError = error as UiError;
      // The item vanished or changed under the owner: show what the mirror holds now.
      if (
        ["not_found", "refused", "changed_since_shown", "not_shown"].includes(this.#actionError.code)
      ) {
        void this.reload();
      }
      return false;
    } finally {
      this.#busy = false;
    }
  }

  #refuse(message: string): Promise<boolean> {
    this.#actionError = { code: "refused", message };
    return Promise.resolve(false);
  }

  /** Approves the version of `item` on screen if the rules allow it; says why not otherwise. */
  approve(item: ItemSummary | null): Promise<boolean> {
    const blocked = this.blocked(item, "approve");
    if (blocked || !item) return this.#refuse(blocked ?? "");
    const target = this.#target(item);
    if (typeof target === "string") return this.#refuse(target);
    return this.#approve(target, false);
  }

  /** The owner answered "Approve anyway" to core's cautions: approves the version they were
   * asked about, if it is still the one on screen. */
  approveAnyway(item: ItemSummary | null): Promise<boolean> {
    const asked = this.#confirming;
    if (!asked || !item) return this.#refuse("Nothing is waiting for your confirmation.");
    const target = this.#target(item);
    if (typeof target === "string") return this.#refuse(target);
    if (target.version !== asked.shown.version || target.digest !== asked.shown.digest) {
      this.#confirming = null;
      return this.#refuse("This draft changed since you were asked — nothing was approved.");
    }
    return this.#approve(target, true);
  }

  /** The owner answered "Cancel" to core's cautions. */
  cancelConfirm(): void {
    this.#confirming = null;
  }

  /** The version a rejection of `item` binds to (taken when the owner starts rejecting), or
   * null with the reason shown. */
  beginReject(item: ItemSummary | null): Shown | null {
    return this.#begin(item, "reject");
  }

  /** The version `action` on `item` binds to, or null with the reason shown: core's rules
   * first, then "not on screen yet". */
  #begin(item: ItemSummary | null, action: Action): Shown | null {
    const blocked = this.blocked(item, action);
    if (blocked || !item) {
      void this.#refuse(blocked ?? "");
      return null;
    }
    const target = this.#target(item);
    if (typeof target === "string") {
      void this.#refuse(target);
      return null;
    }
    this.#actionError = null;
    return target;
  }

  /** Rejects the version `shown` with the owner's reason. */
  reject(shown: Shown, reason: string): Promise<boolean> {
    return this.#act(() => api.reject(shown, reason));
  }

  /** What an edit of `item` starts from (the version it binds to and the form), or null with
   * the reason shown: a muster draft, an HTML-only body, a decided draft, one not shown yet. */
  beginEdit(
    item: ItemSummary | null,
  ): { shown: Shown; subject: string; text: string; replacesHtml: boolean } | null {
    const form = this.#detail?.edit;
    if (item && !form) {
      void this.#refuse("Still loading this draft.");
      return null;
    }
    const target = this.#begin(item, "edit");
    if (!target || !form) return null;
    if (form.kind === "refused") {
      void this.#refuse(`Cannot edit this draft: ${form.why}.`);
      return null;
    }
    return { shown: target, subject: form.subject, text: form.text, replacesHtml: form.replacesHtml };
  }

  /** Saves the owner's edit of `shown`; the edited version is then shown to be reviewed and
   * approved like any other (its own edit is not a change "while reading"). */
  async saveEdit(shown: Shown, subject: string, text: string): Promise<boolean> {
    const saved = await this.#act(() => api.saveEdit(shown, subject, text));
    if (saved) {
      this.#shown = null;
      this.#changedWhileReading = null;
      this.#reading = null;
      await this.reload();
    }
    return saved;
  }

  /** Takes back the queued decision on `item`. */
  undo(item: ItemSummary | null): Promise<boolean> {
    const blocked = this.blocked(item, "undo");
    if (blocked || !item) return this.#refuse(blocked ?? "");
    return this.#act(() => api.undo(item.id));
  }
}
