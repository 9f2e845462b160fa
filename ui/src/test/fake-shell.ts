// A stand-in for the desktop shell behind `invoke`, for the UI's unit tests: it answers the
// commands the state modules call the way src-tauri/src/commands.rs and core do (list order,
// keyset pages, `located`, the listing "select all" picks, the `displayed` record an approval
// needs, `changed_since_shown`),
// over a small in-memory mirror. Answers and arguments are copied through JSON, as the IPC
// does, so the UI cannot share objects with the "shell".
//
// A test mocks `@tauri-apps/api/core` with this module's `invoke` and starts a shell per test
// with `startShell`.
import type {
  Decision,
  ItemState,
  ItemSummary,
  PageStart,
  QueueCursor,
  QueueView,
  ReviewDetail,
  Shown,
  ShownPart,
  UiError,
} from "../lib/types";
import type { ListFilter } from "../lib/api";

/** Core's list order: pending first, then by state, newest change first (store/queue.rs). */
const STATE_RANK: Record<ItemState, number> = {
  pending: 0,
  conflict: 1,
  awaiting_check: 2,
  queued: 3,
  sending: 4,
  send_failed: 5,
  sent: 6,
  rejected: 6,
  gone: 6,
};

/** The most rows one `queue_page` answers (commands.rs `MAX_PAGE`). */
const MAX_PAGE = 500;

/** Negative when `a` comes before `b` in the list. */
function compareInList(a: QueueCursor, b: QueueCursor): number {
  return (
    STATE_RANK[a.state] - STATE_RANK[b.state] ||
    // Newest change first.
    (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0) ||
    b.id - a.id
  );
}

const BASE_TIME = Date.parse("2025-03-01T09:00:00Z");

/** A pending Gmail draft as the queue lists it; a higher `id` changed later (lists first). */
export function draft(id: number, overrides: Partial<ItemSummary> = {}): ItemSummary {
  return {
    id,
    accountId: "gmail-owner",
    source: "gmail",
    externalId: `r-${id}`,
    state: "pending",
    version: `m${id}-1`,
    subject: `Draft ${id}`,
    from: "owner@example.com",
    recipients: "client@example.org",
    snippet: "Hello,",
    stateReason: null,
    checkState: null,
    redraftNumber: 0,
    decision: null,
    accountOnline: true,
    updatedAt: new Date(BASE_TIME + id * 1000).toISOString(),
    actions: [
      { action: "approve", allowed: true, whyNot: null, until: null },
      { action: "reject", allowed: true, whyNot: null, until: null },
      { action: "undo", allowed: false, whyNot: "nothing is queued", until: null },
      { action: "edit", allowed: true, whyNot: null, until: null },
    ],
    labels: [],
    ...overrides,
  };
}

/** The sha256 core would record for a version's bytes (any stable, version-specific hex). */
export function digestOf(version: string): string {
  let hash = 0;
  for (const char of version) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash.toString(16).padStart(64, "0");
}

function uiError(code: UiError["code"], message: string): UiError {
  return { code, message };
}

function viaIpc<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export class FakeShell {
  /** The mirror's items, in no particular order (pages sort them). */
  items: ItemSummary[];
  /** Every command the UI sent, with its arguments as the shell received them. */
  readonly calls: { command: string; args: Record<string, unknown> }[] = [];
  /** The versions recorded as displayed (`displayed`), as `id/version/digest`. */
  readonly displayedVersions = new Set<string>();
  /** Items whose approval core answers with `needs_confirmation` unless `anyway`. */
  readonly withCautions = new Set<number>();
  /** Every version the mirror holds (`draft_versions`), as `id/version`: old ones stay. */
  #versions = new Set<string>();
  #held = new Map<string, Promise<void>>();
  #failing = new Map<string, UiError>();
  #nextDecision = 1;

  constructor(items: ItemSummary[]) {
    this.items = items;
    for (const item of items) this.#versions.add(`${item.id}/${item.version}`);
  }

  /** The commands named `command` the UI sent so far. */
  callsOf(command: string): Record<string, unknown>[] {
    return this.calls.filter((call) => call.command === command).map((call) => call.args);
  }

  /** Holds every `command` call sent from now on unanswered until the returned function is
   * called; the answer is read when released (as a slow command would). */
  hold(command: string): () => void {
    let release!: () => void;
    this.#held.set(command, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.#held.delete(command);
      release();
    };
  }

  /** The next `command` call fails with `error` (the mirror could not be read, say). */
  failNext(command: string, error: UiError): void {
    this.#failing.set(command, error);
  }

  /** A new version of item `id` was synced (the draft was edited elsewhere). */
  newVersion(id: number, version: string): void {
    this.#versions.add(`${id}/${version}`);
    this.items = this.items.map((item) =>
      item.id === id
        ? { ...item, version, updatedAt: new Date(Date.parse(item.updatedAt) + 1).toISOString() }
        : item,
    );
  }

  invoke = async (command: string, args: Record<string, unknown> = {}): Promise<unknown> => {
    const received = viaIpc(args);
    this.calls.push({ command, args: received });
    await this.#held.get(command);
    const failure = this.#failing.get(command);
    if (failure) {
      this.#failing.delete(command);
      throw failure;
    }
    return viaIpc(this.#answer(command, received));
  };

  #answer(command: string, args: Record<string, unknown>): unknown {
    switch (command) {
      case "queue_page":
        return this.#queuePage(
          args.filter as ListFilter,
          args.start as PageStart,
          args.limit as number,
          args.locate as number | null,
        );
      case "queue_selection":
        // store.queue_listing: every row the filters show, in list order, as id and version.
        return this.#filtered((args.filter ?? {}) as ListFilter).map(({ id, version }) => ({
          id,
          version,
        }));
      case "get_review":
        return this.#review(args.id as number);
      case "set_viewing":
        return null;
      case "displayed":
        return this.#displayed(args.shown as Shown, args.part as ShownPart);
      case "approve":
        return this.#approve(args.shown as Shown, args.anyway === true);
      case "approval_cautions":
        // decide::approval_cautions: the sentences themselves, without the error around them.
        return this.withCautions.has((args.shown as Shown).id)
          ? ["It goes to an address never written to before."]
          : [];
      default:
        // What Tauri rejects an unknown command with: a plain string.
        throw `command ${command} not found`;
    }
  }

  #find(id: number): ItemSummary {
    const item = this.items.find((candidate) => candidate.id === id);
    if (!item) throw uiError("not_found", `item ${id} not found`);
    return item;
  }

  #filtered(filter: ListFilter, withStatesAndText = true): ItemSummary[] {
    const text = filter.text?.toLowerCase();
    return this.items
      .filter(
        (item) =>
          (!filter.accountId || item.accountId === filter.accountId) &&
          (!filter.source || item.source === filter.source) &&
          (!withStatesAndText ||
            ((!filter.states?.length || filter.states.includes(item.state)) &&
              (!text ||
                [item.subject, item.from, item.recipients].some((field) =>
                  field.toLowerCase().includes(text),
                )))),
      )
      .sort(compareInList);
  }

  #queuePage(
    filter: ListFilter,
    start: PageStart,
    limit: number,
    locate: number | null,
  ): QueueView {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw uiError("internal", `cannot read a page of ${limit} rows: ask for 1 to ${MAX_PAGE}`);
    }
    const list = this.#filtered(filter);
    const total = list.length;
    let items: ItemSummary[];
    switch (start.from) {
      case "first":
        items = list.slice(0, limit);
        break;
      case "at":
        items = list.slice(start.offset, start.offset + limit);
        break;
      case "after": {
        const cursor = start.cursor;
        items = list.filter((row) => compareInList(row, cursor) > 0).slice(0, limit);
        break;
      }
      case "before": {
        const cursor = start.cursor;
        items = list.filter((row) => compareInList(row, cursor) < 0).slice(-limit);
        break;
      }
      case "last":
        items = list.slice(-limit);
        break;
    }
    const first = items[0];
    let position: number;
    if (start.from === "first") position = 0;
    else if (start.from === "at") position = Math.min(start.offset, total);
    else if (first) position = list.filter((row) => compareInList(row, first) < 0).length;
    else position = start.from === "before" ? 0 : total;

    const counts: Partial<Record<ItemState, number>> = {};
    for (const item of this.#filtered(filter, false)) {
      counts[item.state] = (counts[item.state] ?? 0) + 1;
    }
    const located = locate === null ? -1 : list.findIndex((row) => row.id === locate);
    return {
      items,
      start: position,
      total,
      counts,
      soonestQueued: list.filter((row) => row.state === "queued").slice(0, 3),
      located: located < 0 ? null : located,
    };
  }

  #review(id: number): ReviewDetail {
    const item = this.#find(id);
    const shown: Shown = { id, version: item.version, digest: digestOf(item.version) };
    return {
      shown,
      changedSince: null,
      item,
      view: {
        from: [{ name: null, email: item.from }],
        sender: null,
        replyTo: [],
        to: [{ name: null, email: item.recipients }],
        cc: [],
        bcc: [],
        subject: item.subject,
        date: item.updatedAt,
        messageId: `${item.version}@example.com`,
        inReplyTo: [],
        references: [],
        textBody: item.snippet,
        htmlBody: `<!doctype html><p>${item.snippet}</p>`,
        textDerived: false,
        htmlDerived: true,
        attachments: [],
        remoteContent: { blockedCount: 0, allowed: false, urls: [] },
        links: [],
        warnings: [],
        flags: [],
        rawSize: 1200,
        isReply: false,
        answers: null,
        hiddenText: [],
        alternativesDiffer: null,
      },
      versions: [],
      diff: null,
      routes: [],
      redraftBound: null,
      decisions: [],
      refusals: [],
      audit: [],
      remoteAllowed: false,
      answered: null,
      gmailLink: null,
      edit: { kind: "text", subject: item.subject, text: item.snippet, replacesHtml: false },
      editedByOwner: false,
      ruleHold: null,
    };
  }

  #displayed(shown: Shown, _part: ShownPart): null {
    // store.record_view: any version the mirror holds (not only the current one), with its
    // digest.
    this.#find(shown.id);
    const known =
      this.#versions.has(`${shown.id}/${shown.version}`) && digestOf(shown.version) === shown.digest;
    if (!known) {
      throw uiError("not_found", "cannot find the version shown of this draft");
    }
    this.displayedVersions.add(`${shown.id}/${shown.version}/${shown.digest}`);
    return null;
  }

  #approve(shown: Shown, anyway: boolean): Decision {
    // decide::approve: the current version only, and only once it was displayed.
    const item = this.#find(shown.id);
    if (item.version !== shown.version || digestOf(item.version) !== shown.digest) {
      throw uiError(
        "changed_since_shown",
        `cannot approve “${item.subject}”: it changed since it was shown to you; review the new version`,
      );
    }
    if (!this.displayedVersions.has(`${shown.id}/${shown.version}/${shown.digest}`)) {
      throw uiError("not_shown", `cannot approve “${item.subject}”: this version was never shown to you; show it first`);
    }
    if (this.withCautions.has(shown.id) && !anyway) {
      throw uiError(
        "needs_confirmation",
        `cannot approve “${item.subject}” without your confirmation: It goes to an address never written to before.`,
      );
    }
    const now = new Date().toISOString();
    this.items = this.items.map((row) => (row.id === shown.id ? { ...row, state: "queued" } : row));
    return {
      id: this.#nextDecision++,
      itemId: shown.id,
      kind: "approve",
      reason: null,
      version: shown.version,
      digest: shown.digest,
      state: "queued",
      createdAt: now,
      dueAt: new Date(Date.parse(now) + 10_000).toISOString(),
      attempts: 0,
      nextAttemptAt: null,
      claimedBy: null,
      rfc822MessageId: null,
      outcomeDetail: null,
      finishedAt: null,
      sentDigest: null,
      sentHeaderAdded: null,
      gmailMessageId: null,
      serviceNote: null,
      decidedBy: "owner via desktop",
    };
  }
}

let current: FakeShell | null = null;

/** Starts a fresh shell over `items` (a test's own mirror) and returns it. */
export function startShell(items: ItemSummary[]): FakeShell {
  current = new FakeShell(items);
  return current;
}

/** The mock of `@tauri-apps/api/core`'s `invoke`: the current test's shell answers. */
export function invoke<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  if (!current) return Promise.reject("no fake shell started: call startShell() first");
  return current.invoke(command, args) as Promise<T>;
}
