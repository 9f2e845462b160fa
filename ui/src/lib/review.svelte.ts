// The open draft: its review detail, loaded when the selection changes or the mirror changes,
// and the owner's actions on it. One class so the buttons and the keyboard shortcuts go
// through the same checks ("you can only reject it") and show errors in the same place.
import * as api from "./api";
import type { ItemSummary, ReviewDetail, UiError } from "./types";

/** Why Approve is disabled for `item`, or null when it can be approved. */
export function approveBlocked(item: ItemSummary | null): string | null {
  if (!item) return "No draft is selected.";
  switch (item.state) {
    case "pending":
    case "conflict":
      return null;
    case "awaiting_check":
      return "The plugin has not checked this reply yet — you can only reject it.";
    case "queued":
      return "A decision is already queued for this draft.";
    case "sending":
      return "This draft is already on its way.";
    default:
      return "This draft can no longer be approved.";
  }
}

/** Why Reject is disabled for `item`, or null when it can be rejected. */
export function rejectBlocked(item: ItemSummary | null): string | null {
  if (!item) return "No draft is selected.";
  return ["pending", "awaiting_check", "conflict"].includes(item.state)
    ? null
    : "This draft can no longer be rejected.";
}

export class Review {
  detail = $state<ReviewDetail | null>(null);
  /** Loading the detail failed. */
  loadError = $state<UiError | null>(null);
  /** The last action failed: shown next to the actions. */
  actionError = $state<UiError | null>(null);
  busy = $state(false);
  /** The owner asked to load remote content for this draft (kept across reloads of it). */
  loadRemote = $state(false);

  #id: number | null = null;
  #generation = 0;

  /** Shows item `id` (or nothing); reloads when it is the same item. */
  async open(id: number | null): Promise<void> {
    if (id !== this.#id) {
      this.#id = id;
      this.loadRemote = false;
      this.actionError = null;
      this.detail = null;
    }
    const generation = ++this.#generation;
    if (id === null) {
      this.loadError = null;
      void api.setViewing(null).catch(() => {});
      return;
    }
    try {
      const detail = await api.getReview(id, this.loadRemote);
      if (generation !== this.#generation) return;
      this.detail = detail;
      this.loadError = null;
    } catch (error) {
      if (generation !== this.#generation) return;
      this.loadError = error as UiError;
    }
  }

  /** Reloads the open item (the mirror changed). */
  reload(): Promise<void> {
    return this.open(this.#id);
  }

  /** Loads this draft's remote content, once, on the owner's word. */
  async allowRemote(): Promise<void> {
    this.loadRemote = true;
    await this.reload();
  }

  async #act(action: () => Promise<unknown>): Promise<boolean> {
    this.busy = true;
    this.actionError = null;
    try {
      await action();
      return true;
    } catch (error) {
      this.actionError = error as UiError;
      // The item vanished or changed under the owner: show what the mirror holds now.
      if (this.actionError.code === "not_found" || this.actionError.code === "refused") {
        void this.reload();
      }
      return false;
    } finally {
      this.busy = false;
    }
  }

  /** Approves `item` if the rules allow it; says why not otherwise. */
  approve(item: ItemSummary | null): Promise<boolean> {
    const blocked = approveBlocked(item);
    if (blocked || !item) {
      this.actionError = { code: "refused", message: blocked ?? "" };
      return Promise.resolve(false);
    }
    return this.#act(() => api.approve(item.id));
  }

  /** Rejects `item` with the owner's reason. */
  reject(item: ItemSummary, reason: string): Promise<boolean> {
    return this.#act(() => api.reject(item.id, reason));
  }

  /** Takes back the queued decision on `item`. */
  undo(item: ItemSummary | null): Promise<boolean> {
    if (!item || item.state !== "queued") {
      this.actionError = { code: "refused", message: "There is nothing to undo for this draft." };
      return Promise.resolve(false);
    }
    return this.#act(() => api.undo(item.id));
  }
}
