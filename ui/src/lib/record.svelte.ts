// The record (the History view): what was decided, newest first, read a page at a time from
// the shell with the owner's filters (all applied by core, in SQL), the figures per agent, and
// the one decision opened with the exact bytes it bound to. Every read that a later one
// overtook is dropped, so a slow answer for an old filter never replaces a newer one.
import * as api from "./api";
import type {
  AgentFigures,
  HistoryEntry,
  HistoryFilter,
  HistoryKind,
  LeftMessage,
  RecordStanding,
  UiError,
} from "./types";

/** Entries read per page. */
export const PAGE = 100;

export class DecisionRecord {
  #entries = $state<HistoryEntry[]>([]);
  #agents = $state<AgentFigures[]>([]);
  #kind = $state<HistoryKind | null>(null);
  #accountId = $state<string | null>(null);
  #search = $state("");
  #more = $state(false);
  #loading = $state(false);
  #error = $state<UiError | null>(null);
  #opened = $state<LeftMessage | null>(null);
  #standing = $state<RecordStanding | null>(null);
  #openError = $state<UiError | null>(null);
  /** Bumped by every read of the list: an answer to an older read is dropped. */
  #generation = 0;
  #opening = 0;

  get entries(): HistoryEntry[] {
    return this.#entries;
  }
  get agents(): AgentFigures[] {
    return this.#agents;
  }
  get kind(): HistoryKind | null {
    return this.#kind;
  }
  get accountId(): string | null {
    return this.#accountId;
  }
  get search(): string {
    return this.#search;
  }
  /** A full page came back: there may be more. */
  get more(): boolean {
    return this.#more;
  }
  get loading(): boolean {
    return this.#loading;
  }
  get error(): UiError | null {
    return this.#error;
  }
  get opened(): LeftMessage | null {
    return this.#opened;
  }
  get openError(): UiError | null {
    return this.#openError;
  }
  /** Whether the sealed log holds, and its checkpoint (`null` until read, or unreadable). */
  get standing(): RecordStanding | null {
    return this.#standing;
  }

  /** Reads how the record stands (a verification of the whole log). */
  async readStanding(): Promise<void> {
    try {
      this.#standing = await api.recordStanding();
    } catch {
      // The list shows its own error; the banner needs an answer to say anything.
      this.#standing = null;
    }
  }

  #filter(offset: number): HistoryFilter {
    const search = this.#search.trim();
    return {
      kind: this.#kind,
      accountId: this.#accountId,
      search: search === "" ? null : search,
      limit: PAGE,
      offset,
    };
  }

  /** Reads the first page again, and the figures. */
  async refresh(): Promise<void> {
    const generation = ++this.#generation;
    this.#loading = true;
    try {
      const [entries, agents] = await Promise.all([
        api.historyPage(this.#filter(0)),
        api.agentFigures(),
      ]);
      if (generation !== this.#generation) return;
      this.#entries = entries;
      this.#agents = agents;
      this.#more = entries.length === PAGE;
      this.#error = null;
    } catch (error) {
      if (generation === this.#generation) this.#error = error as UiError;
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
  }

  /** Appends the next page. */
  async loadMore(): Promise<void> {
    const generation = ++this.#generation;
    this.#loading = true;
    try {
      const page = await api.historyPage(this.#filter(this.#entries.length));
      if (generation !== this.#generation) return;
      this.#entries = [...this.#entries, ...page];
      this.#more = page.length === PAGE;
      this.#error = null;
    } catch (error) {
      if (generation === this.#generation) this.#error = error as UiError;
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
  }

  /** Only decisions of `kind` (`null`: every kind). */
  filterKind(kind: HistoryKind | null): Promise<void> {
    this.#kind = kind;
    return this.refresh();
  }

  /** Only decisions of this account (`null`: every account). */
  filterAccount(accountId: string | null): Promise<void> {
    this.#accountId = accountId;
    return this.refresh();
  }

  /** Only decisions with `text` in the subject, recipients or reason. */
  filterText(text: string): Promise<void> {
    this.#search = text;
    return this.refresh();
  }

  /** Opens one decision: its exact bytes, rendered and as source. */
  async open(decisionId: number): Promise<void> {
    const opening = ++this.#opening;
    this.#openError = null;
    try {
      const opened = await api.leftMessage(decisionId);
      if (opening === this.#opening) this.#opened = opened;
    } catch (error) {
      if (opening === this.#opening) {
        this.#opened = null;
        this.#openError = error as UiError;
      }
    }
  }

  /** Closes the opened decision. */
  close(): void {
    this.#opening++;
    this.#opened = null;
    this.#openError = null;
  }
}
