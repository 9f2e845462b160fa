// The queue's state, shared by the components that show or act on it: the items, the filters,
// the counts per state and the selection, as one source of truth for the list, the detail
// pane and keyboard triage.
import { listItems } from "./api";
import type { ItemState, ItemSummary, Source, UiError } from "./types";

/** Loading → loaded (possibly empty) or failed. */
export type QueueStatus = "loading" | "ready" | "failed";

export class Queue {
  /** Everything the shell listed for the account/source filter. */
  all = $state<ItemSummary[]>([]);
  status = $state<QueueStatus>("loading");
  error = $state<UiError | null>(null);
  selectedId = $state<number | null>(null);

  accountFilter = $state<string>("");
  sourceFilter = $state<"" | Source>("");
  stateFilter = $state<"" | ItemState>("");
  textFilter = $state("");

  /** The rows shown: the state and text filters applied to what the shell listed. */
  items = $derived.by(() => {
    const text = this.textFilter.trim().toLowerCase();
    return this.all.filter(
      (item) =>
        (this.stateFilter === "" || item.state === this.stateFilter) &&
        (text === "" ||
          item.subject.toLowerCase().includes(text) ||
          item.from.toLowerCase().includes(text) ||
          item.recipients.toLowerCase().includes(text)),
    );
  });

  /** How many items are in each state (for the account/source filter); absent: none. */
  counts = $derived.by(() => {
    const counts: Partial<Record<ItemState, number>> = {};
    for (const item of this.all) counts[item.state] = (counts[item.state] ?? 0) + 1;
    return counts;
  });

  /** The selected item, if it is still shown. */
  selected = $derived(this.items.find((item) => item.id === this.selectedId) ?? null);

  /** Index of the selected row in `items`, or -1. */
  selectedIndex = $derived(this.items.findIndex((item) => item.id === this.selectedId));

  #generation = 0;

  /** Reads the queue from the shell (the account/source filters are applied there). */
  async refresh(): Promise<void> {
    // A slow answer to an older filter must not overwrite a newer one.
    const generation = ++this.#generation;
    try {
      const items = await listItems({
        accountId: this.accountFilter || undefined,
        source: this.sourceFilter || undefined,
      });
      if (generation !== this.#generation) return;
      this.all = items;
      this.error = null;
      this.status = "ready";
      this.#keepSelection();
    } catch (error) {
      if (generation !== this.#generation) return;
      this.error = error as UiError;
      this.status = "failed";
    }
  }

  #keepSelection(): void {
    if (this.selectedId === null || !this.items.some((i) => i.id === this.selectedId)) {
      this.selectedId = this.items[0]?.id ?? null;
    }
  }

  /** Puts the rows core sent with a change in place of the ones shown (no read of the queue).
   * False when one of them is not in the list (then read the queue again). */
  update(changed: ItemSummary[]): boolean {
    const byId = new Map(changed.map((item) => [item.id, item]));
    if (changed.some((item) => !this.all.some((row) => row.id === item.id))) return false;
    this.all = this.all.map((row) => byId.get(row.id) ?? row);
    this.#keepSelection();
    return true;
  }

  /** Re-applies client-side filters to the selection. */
  filtersChanged(): void {
    this.#keepSelection();
  }

  /** Selects the item `offset` places away from the selected one (j/k), clamped to the ends. */
  move(offset: number): void {
    if (this.items.length === 0) return;
    const current = this.selectedIndex;
    const next = Math.min(Math.max(current + offset, 0), this.items.length - 1);
    this.selectedId = this.items[next]?.id ?? null;
  }

  select(id: number): void {
    this.selectedId = id;
  }

  /** Shows item `id` whatever the filters (a notification was clicked). */
  async reveal(id: number): Promise<void> {
    if (!this.all.some((i) => i.id === id) || !this.items.some((i) => i.id === id)) {
      this.accountFilter = "";
      this.sourceFilter = "";
      this.stateFilter = "";
      this.textFilter = "";
      await this.refresh();
    }
    this.selectedId = id;
  }
}
