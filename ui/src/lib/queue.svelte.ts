// The queue's state, shared by the components that show or act on it: a window of rows read a
// page at a time from the mirror (never the whole list), the filters (applied by the shell, in
// SQL), the counts per state, the focused row and the drafts picked for a bulk decision, as one
// source of truth for the list, the detail pane and keyboard triage.
import { queuePage, queueSelection, type ListFilter } from "./api";
import {
  type ItemState,
  type ItemSummary,
  type Listed,
  type PageStart,
  type QueueView,
  type Source,
  type UiError,
} from "./types";

/** Loading → loaded (possibly empty) or failed. */
export type QueueStatus = "loading" | "ready" | "failed";

/** Rows asked for at a time, at least. */
const PAGE = 100;
/** Rows kept loaded above and below the ones in view, so scrolling shows no gap. */
const MARGIN = 60;
/** The most rows the window holds: rows far from view are dropped beyond it. */
const MAX_ROWS = 400;
/** Pages one fill may read before it stops (a list changing under it cannot loop forever). */
const MAX_PAGES_PER_FILL = 8;

/** A page to read, and what it is for. */
interface Wanted {
  start: PageStart;
  limit: number;
}

export class Queue {
  /** The loaded rows: a contiguous slice of the filtered list, from position `offset`. */
  #rows = $state.raw<ItemSummary[]>([]);
  /** Position of `rows[0]` in the filtered list. */
  #offset = $state(0);
  /** How many rows the filtered list has. */
  #total = $state(0);
  #status = $state<QueueStatus>("loading");
  #error = $state<UiError | null>(null);
  #selectedId = $state<number | null>(null);
  /** Position of the selection in the filtered list, -1 when nothing is selected. */
  #selectedIndex = $state(-1);
  /** The selected row as last read (kept while its row is scrolled out of the window). */
  #selected = $state.raw<ItemSummary | null>(null);
  /** How many items are in each state (for the account/source filter), from the shell. */
  #counts = $state.raw<Partial<Record<ItemState, number>>>({});
  /** The queued items due soonest (the status bar's countdowns). */
  #soonestQueued = $state.raw<ItemSummary[]>([]);
  /** The drafts picked for a bulk decision (x, shift+j/k, shift+click, select all), by id,
   * each with the version its row showed when it was picked: a bulk rejection binds to that
   * version, so a draft rewritten since is refused as changed, never decided unseen. */
  #picked = $state.raw<ReadonlyMap<number, string>>(new Map());
  /** Where a shift+click range starts: the row last clicked or toggled. */
  #anchor: number | null = null;
  /** shift+j/k moved the focus to a row not loaded yet: picked once it is. */
  #pickOnArrival = false;
  /** Bumped when the filters change: a "select all" read for older filters is dropped. */
  #filterGeneration = 0;
  /** Why the last "select all" or shift+click range could not be read from the shell. */
  #pickError = $state<UiError | null>(null);

  #accountFilter = $state<string>("");
  #sourceFilter = $state<"" | Source>("");
  #stateFilter = $state<"" | ItemState>("");
  #textFilter = $state("");

  /** Items for the account/source filter, whatever the state and text filters. */
  allCount = $derived(Object.values(this.#counts).reduce((sum, n) => sum + (n ?? 0), 0));

  /** Bumped by every refresh: a page read for an older filter or window is dropped. */
  #generation = 0;
  /** The rows in view, as the list last said (positions, end exclusive). */
  #view = { first: 0, last: 0 };
  /** A selection moved (j/k/End) to a row not loaded yet: selected once it is. */
  #pending: number | null = null;
  /** Bumped by every move of the selection: a refresh asked where the selection was when it
   * started, and must not put it back there if the owner moved on meanwhile. */
  #moves = 0;
  #filling = false;
  #fillAgain = false;

  #filter(): ListFilter {
    return {
      states: this.#stateFilter ? [this.#stateFilter] : undefined,
      accountId: this.#accountFilter || undefined,
      source: this.#sourceFilter || undefined,
      text: this.#textFilter.trim() || undefined,
    };
  }

  // Read-only from outside: the methods below are how the state changes.
  get rows() {
    return this.#rows;
  }
  get offset() {
    return this.#offset;
  }
  get total() {
    return this.#total;
  }
  get status() {
    return this.#status;
  }
  get error() {
    return this.#error;
  }
  get selectedId() {
    return this.#selectedId;
  }
  get selectedIndex() {
    return this.#selectedIndex;
  }
  get selected() {
    return this.#selected;
  }
  get counts() {
    return this.#counts;
  }
  get soonestQueued() {
    return this.#soonestQueued;
  }
  /** How many drafts are picked for a bulk decision. */
  get pickedCount() {
    return this.#picked.size;
  }
  get pickError() {
    return this.#pickError;
  }
  get accountFilter() {
    return this.#accountFilter;
  }
  get sourceFilter() {
    return this.#sourceFilter;
  }
  get stateFilter() {
    return this.#stateFilter;
  }
  get textFilter() {
    return this.#textFilter;
  }

  /** The loaded row at list position `index`, if it is loaded. */
  rowAt(index: number): ItemSummary | undefined {
    return index >= this.#offset ? this.#rows[index - this.#offset] : undefined;
  }

  /** Re-reads the window from the shell (after a change, or with `reset` for new filters,
   * from the top) and where the selection is now; resolves to that position (`null`: the
   * filters leave the selected item out). */
  async refresh(reset = false): Promise<number | null> {
    const generation = ++this.#generation;
    const from = reset ? 0 : this.#offset;
    const limit = Math.min(MAX_ROWS, Math.max(PAGE, this.#rows.length, this.#wantedSpan()));
    const start: PageStart = from === 0 ? { from: "first" } : { from: "at", offset: from };
    const moves = this.#moves;
    try {
      const view = await queuePage(this.#filter(), start, limit, this.#selectedId);
      if (generation !== this.#generation) return null;
      this.#rows = view.items;
      this.#offset = view.start;
      this.#take(view);
      this.#error = null;
      this.#status = "ready";
      if (moves !== this.#moves) {
        // A key moved the selection while the page was read: `located` is where the old
        // selection is, and putting the selection back there would lose that key press.
        return this.#relocateSelection();
      }
      this.#placeSelection(view.located);
      void this.#fill();
      return view.located;
    } catch (error) {
      if (generation !== this.#generation) return null;
      this.#error = error as UiError;
      this.#status = "failed";
      return null;
    }
  }

  /** The list says which rows are in view (`first` to `last`, exclusive): load around them. */
  show(first: number, last: number): void {
    this.#view = { first, last };
    void this.#fill();
  }

  /** Puts the rows core sent with a change in place of the ones held (no read of the queue).
   * False when one of them is not held (then read the queue again). */
  update(changed: ItemSummary[]): boolean {
    const byId = new Map(changed.map((item) => [item.id, item]));
    if (changed.some((item) => !this.#rows.some((row) => row.id === item.id))) return false;
    this.#rows = this.#rows.map((row) => byId.get(row.id) ?? row);
    const selected = this.#selectedId === null ? undefined : byId.get(this.#selectedId);
    if (selected) this.#selected = selected;
    return true;
  }

  /** Shows only the items whose subject, sender or recipients contain `text` (the shell
   * filters, from the top of the list). */
  filterText(text: string): void {
    this.#textFilter = text;
    this.#refiltered();
    void this.refresh(true);
  }

  /** Shows only the items of account `id` ("": every account). */
  filterAccount(id: string): void {
    this.#accountFilter = id;
    this.#refiltered();
    void this.refresh(true);
  }

  /** Shows only the items from `source` ("": both). */
  filterSource(source: "" | Source): void {
    this.#sourceFilter = source;
    this.#refiltered();
    void this.refresh(true);
  }

  /** Shows only the items in `state` ("": every state). */
  filterState(state: "" | ItemState): void {
    this.#stateFilter = state;
    this.#refiltered();
    void this.refresh(true);
  }

  /** Selects the item `offset` places away from the selected one (j/k), clamped to the ends. */
  move(offset: number): void {
    this.#pickOnArrival = false;
    this.#moveBy(offset);
  }

  /** Selects the row at list position `index` (clamped), loading it if needed (Home/End). */
  moveTo(index: number): void {
    this.#pickOnArrival = false;
    this.#moveToIndex(index);
  }

  select(id: number): void {
    const index = this.#rows.findIndex((row) => row.id === id);
    if (index < 0) return;
    this.#pickOnArrival = false;
    this.#selectIndex(this.#offset + index);
  }

  /** A click on row `id`: it is selected, and a later shift+click picks the range from it. */
  click(id: number): void {
    this.#anchor = id;
    this.select(id);
  }

  /** Whether draft `id` is picked for a bulk decision. */
  isPicked(id: number): boolean {
    return this.#picked.has(id);
  }

  /** The drafts picked, each with the version its row showed, in the order they were picked. */
  pickedListed(): Listed[] {
    return [...this.#picked].map(([id, version]) => ({ id, version }));
  }

  /** Picks or unpicks row `id` (default: the selected row; `x`); a shift+click range then
   * starts from it. */
  togglePick(id: number | null = this.#selectedId): void {
    if (id === null) return;
    const row = this.#rows.find((candidate) => candidate.id === id);
    if (!row) return;
    this.#anchor = id;
    const picked = new Map(this.#picked);
    if (picked.has(id)) picked.delete(id);
    else picked.set(id, row.version);
    this.#picked = picked;
  }

  /** shift+j / shift+k: picks the selected row, moves `offset` rows and picks the one it
   * arrives at (once it is loaded). */
  extend(offset: number): void {
    if (this.#total === 0) return;
    if (this.#pending === null && this.#selected) this.#pick([this.#selected]);
    this.#pickOnArrival = true;
    this.#moveBy(offset);
  }

  /** shift+click on row `id`: picks every row from the last one clicked (or the selected
   * one) to it, and selects it. Rows of the range that are not loaded are read from the shell
   * (their ids and versions only). */
  async pickRange(id: number): Promise<void> {
    const anchor = this.#anchor ?? this.#selectedId ?? id;
    const from = this.#rows.findIndex((row) => row.id === anchor);
    const to = this.#rows.findIndex((row) => row.id === id);
    this.select(id);
    if (from >= 0 && to >= 0) {
      this.#pick(this.#rows.slice(Math.min(from, to), Math.max(from, to) + 1));
      return;
    }
    // The anchor's row was dropped from the window (far away): read the list between.
    const listing = await this.#listing();
    if (!listing) return;
    const start = listing.findIndex((row) => row.id === anchor);
    const end = listing.findIndex((row) => row.id === id);
    if (start < 0 || end < 0) return;
    this.#pick(listing.slice(Math.min(start, end), Math.max(start, end) + 1));
  }

  /** Picks every draft the filters show, loaded or not ("select all shown by this filter"). */
  async pickAllShown(): Promise<void> {
    const listing = await this.#listing();
    if (!listing) return;
    this.#picked = new Map(listing.map((row) => [row.id, row.version]));
  }

  /** Unpicks everything (Escape, after a bulk decision). */
  clearPicks(): void {
    this.#picked = new Map();
    this.#anchor = null;
  }

  /** Every draft the filters show, from the shell; null when it failed (the error is kept)
   * or the filters changed meanwhile. */
  async #listing(): Promise<Listed[] | null> {
    const generation = this.#filterGeneration;
    try {
      const listing = await queueSelection(this.#filter());
      this.#pickError = null;
      return generation === this.#filterGeneration ? listing : null;
    } catch (error) {
      this.#pickError = error as UiError;
      return null;
    }
  }

  /** Adds `rows` to the picked drafts, each at the version it shows. */
  #pick(rows: readonly { id: number; version: string }[]): void {
    const picked = new Map(this.#picked);
    for (const row of rows) if (!picked.has(row.id)) picked.set(row.id, row.version);
    this.#picked = picked;
  }

  /** Other filters: what was picked under the old ones may not be shown now, and a bulk
   * decision acts only on drafts the owner can see listed. */
  #refiltered(): void {
    this.#filterGeneration += 1;
    this.clearPicks();
  }

  #moveBy(offset: number): void {
    if (this.#total === 0) return;
    const from = this.#pending ?? this.#selectedIndex;
    this.#moveToIndex(from < 0 ? 0 : from + offset);
  }

  #moveToIndex(index: number): void {
    if (this.#total === 0) return;
    this.#selectIndex(Math.min(Math.max(index, 0), this.#total - 1));
  }

  /** Shows item `id` whatever the filters (a notification was clicked). */
  async reveal(id: number): Promise<void> {
    this.#moves += 1;
    this.#selectedId = id;
    this.#pending = null;
    if ((await this.refresh(true)) !== null) return;
    this.#accountFilter = "";
    this.#sourceFilter = "";
    this.#stateFilter = "";
    this.#textFilter = "";
    this.#refiltered();
    this.#selectedId = id;
    await this.refresh(true);
  }

  #take(view: QueueView): void {
    this.#total = view.total;
    this.#counts = view.counts;
    this.#soonestQueued = view.soonestQueued;
  }

  /** After a refresh: keep the selected item where it now is, or select the first row. */
  #placeSelection(located: number | null): void {
    // A shift+j/k still on its way is moot once the list changed under it.
    this.#pickOnArrival = false;
    if (this.#selectedId !== null && located !== null) {
      this.#pending = null;
      this.#selectedIndex = located;
      const row = this.rowAt(located);
      if (row?.id === this.#selectedId) this.#selected = row;
      return;
    }
    if (this.#total === 0) {
      this.#pending = null;
      this.#selectedId = null;
      this.#selectedIndex = -1;
      this.#selected = null;
      return;
    }
    this.#selectIndex(0);
  }

  /** After a refresh the owner's keys overtook: find the selection in the new window, or read
   * the queue again around it. */
  #relocateSelection(): number | null {
    if (this.#pending !== null) {
      void this.#fill();
      return this.#pending;
    }
    if (!this.#placeSelectedRow()) {
      void this.refresh();
      return null;
    }
    void this.#fill();
    return this.#selectedIndex;
  }

  /** Puts the selection's position where its row is in the window; false when that row is not
   * loaded. */
  #placeSelectedRow(): boolean {
    const index = this.#rows.findIndex((row) => row.id === this.#selectedId);
    if (index < 0) return false;
    this.#selectedIndex = this.#offset + index;
    this.#selected = this.#rows[index] ?? null;
    return true;
  }

  #selectIndex(index: number): void {
    this.#moves += 1;
    this.#selectedIndex = index;
    const row = this.rowAt(index);
    if (row) {
      this.#pending = null;
      this.#selectedId = row.id;
      this.#selected = row;
      if (this.#pickOnArrival) {
        this.#pickOnArrival = false;
        this.#pick([row]);
      }
    } else {
      this.#pending = index;
      void this.#fill();
    }
  }

  /** The rows wanted loaded: the view and a margin, or around a pending selection. */
  #wanted(): [number, number] {
    const pending = this.#pending;
    let { first, last } = this.#view;
    if (pending !== null && (pending < first || pending >= last)) {
      const height = Math.max(last - first, 1);
      first = pending;
      last = pending + height;
    }
    return [Math.max(0, first - MARGIN), Math.min(this.#total, last + MARGIN)];
  }

  #wantedSpan(): number {
    const [from, to] = this.#wanted();
    return to - from;
  }

  /** The next page to read so the wanted rows are loaded, or null when they are. */
  #nextPage(): Wanted | null {
    const [from, to] = this.#wanted();
    if (to <= from) return null;
    const loadedFrom = this.#offset;
    const loadedTo = this.#offset + this.#rows.length;
    const first = this.#rows[0];
    const last = this.#rows[this.#rows.length - 1];
    if (first && last && from >= loadedFrom && to <= loadedTo) return null;
    // Next to what is loaded: read on from its edge (keyset, exact while drafts arrive).
    if (last && to > loadedTo && from <= loadedTo) {
      return { start: { from: "after", cursor: last }, limit: clampPage(to - loadedTo) };
    }
    if (first && from < loadedFrom && to >= loadedFrom) {
      return { start: { from: "before", cursor: first }, limit: clampPage(loadedFrom - from) };
    }
    // Far from every loaded row (the scrollbar dragged, End): jump.
    if (to >= this.#total) return { start: { from: "last" }, limit: clampPage(to - from) };
    if (from === 0) return { start: { from: "first" }, limit: clampPage(to) };
    return { start: { from: "at", offset: from }, limit: clampPage(to - from) };
  }

  /** Reads pages until the wanted rows are loaded; one fill runs at a time. */
  async #fill(): Promise<void> {
    if (this.#status !== "ready") return;
    if (this.#filling) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = true;
    try {
      let pages = 0;
      do {
        this.#fillAgain = false;
        const wanted = this.#nextPage();
        if (!wanted) continue;
        const generation = this.#generation;
        const view = await queuePage(this.#filter(), wanted.start, wanted.limit);
        pages += 1;
        // A refresh replaced the window meanwhile: look again at what is missing.
        if (generation !== this.#generation || !this.#merge(wanted.start, view)) {
          this.#fillAgain = true;
        }
      } while ((this.#fillAgain || this.#nextPage() !== null) && pages < MAX_PAGES_PER_FILL);
    } catch (error) {
      this.#error = error as UiError;
    } finally {
      this.#filling = false;
    }
  }

  /** Puts a page read from `start` into the window; false when the window changed under it. */
  #merge(start: PageStart, view: QueueView): boolean {
    if (start.from === "after") {
      if (this.#rows[this.#rows.length - 1]?.id !== start.cursor.id) return false;
      const held = this.#rows.length;
      let rows = this.#rows.concat(view.items);
      // The page's start is authoritative: rows that arrived above shift the window.
      let offset = view.start - held;
      const drop = Math.max(0, rows.length - MAX_ROWS);
      rows = rows.slice(drop);
      offset += drop;
      this.#rows = rows;
      this.#offset = Math.max(0, offset);
    } else if (start.from === "before") {
      if (this.#rows[0]?.id !== start.cursor.id) return false;
      this.#rows = view.items.concat(this.#rows).slice(0, MAX_ROWS);
      this.#offset = view.start;
    } else {
      this.#rows = view.items;
      this.#offset = view.start;
    }
    this.#take(view);
    if (this.#pending !== null) {
      const row = this.rowAt(this.#pending);
      if (row) this.#selectIndex(this.#pending);
    } else if (this.#selectedId !== null) {
      // Rows that arrived above shift every position: the selection's is where its row is.
      this.#placeSelectedRow();
    }
    return true;
  }
}

function clampPage(rows: number): number {
  return Math.min(MAX_ROWS, Math.max(PAGE, rows));
}
