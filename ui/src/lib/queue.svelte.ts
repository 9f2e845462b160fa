// The queue's state, shared by the components that show or act on it. A class with runes so
// the list, the selection and (later) keyboard triage read one source of truth.
import { listItems } from "./api";
import type { ItemSummary, UiError } from "./types";

/** Loading → loaded (possibly empty) or failed. */
export type QueueStatus = "loading" | "ready" | "failed";

export class Queue {
  items = $state<ItemSummary[]>([]);
  status = $state<QueueStatus>("loading");
  error = $state<UiError | null>(null);
  selectedId = $state<number | null>(null);

  /** The selected item, if it is still in the queue. */
  selected = $derived(this.items.find((item) => item.id === this.selectedId) ?? null);

  /** Reads the queue from the shell. */
  async refresh(): Promise<void> {
    try {
      this.items = await listItems();
      this.error = null;
      this.status = "ready";
      if (this.selectedId === null || !this.items.some((i) => i.id === this.selectedId)) {
        this.selectedId = this.items[0]?.id ?? null;
      }
    } catch (error) {
      this.error = error as UiError;
      this.status = "failed";
    }
  }

  /** Selects the item `offset` places away from the selected one (j/k), clamped to the ends. */
  move(offset: number): void {
    if (this.items.length === 0) return;
    const current = this.items.findIndex((item) => item.id === this.selectedId);
    const next = Math.min(Math.max(current + offset, 0), this.items.length - 1);
    this.selectedId = this.items[next]?.id ?? null;
  }

  select(id: number): void {
    this.selectedId = id;
  }
}
