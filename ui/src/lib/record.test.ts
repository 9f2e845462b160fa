// The record's reads: the filters go to the shell as core's `HistoryFilter`, a later page is
// read from where the list ends, and an answer a newer read overtook never replaces it.
import { beforeEach, describe, expect, test, vi } from "vitest";
import { DecisionRecord, PAGE } from "./record.svelte";
import { durationLabel } from "./labels";
import type { HistoryEntry, HistoryFilter } from "./types";

const calls: { command: string; args?: Record<string, unknown> }[] = [];
/** Answers held back until the test releases them, per call. */
const pending: ((value: unknown) => void)[] = [];

/** Releases the `n`th held-back answer with `value`. */
function answer(n: number, value: unknown) {
  const release = pending[n];
  if (!release) throw new Error(`no call ${n} is waiting`);
  release(value);
}

vi.mock("@tauri-apps/api/core", () => ({
  invoke: (command: string, args?: Record<string, unknown>) => {
    calls.push({ command, args: structuredClone(args) });
    if (command === "agent_figures") return Promise.resolve([]);
    return new Promise((resolve) => pending.push(resolve));
  },
}));

function entry(decisionId: number): HistoryEntry {
  return {
    decisionId,
    itemId: decisionId,
    accountId: "gmail-owner",
    account: "owner@example.com",
    source: "gmail",
    agent: "owner@example.com",
    subject: `Re: ${decisionId}`,
    recipients: "ana@example.com",
    decision: "approve",
    kinds: ["sent"],
    actor: "owner via desktop",
    decidedAt: "2026-12-03T10:00:00.000Z",
    finishedAt: null,
    finalState: "sent",
    decisionState: "done",
    reason: null,
    version: `m${decisionId}`,
    digest: "0".repeat(64),
    sentDigest: null,
    firstSeenAt: null,
  };
}

function filters(): HistoryFilter[] {
  return calls
    .filter((c) => c.command === "history_page")
    .map((c) => c.args?.filter as HistoryFilter);
}

async function flush() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

beforeEach(() => {
  calls.length = 0;
  pending.length = 0;
});

describe("the record", () => {
  test("sends the filters as core reads them, a blank search as none", async () => {
    const record = new DecisionRecord();
    void record.filterKind("rejected");
    void record.filterAccount("gmail-owner");
    void record.filterText("  refund ");
    void record.filterText("   ");
    expect(filters()).toEqual([
      { kind: "rejected", accountId: null, search: null, limit: PAGE, offset: 0 },
      { kind: "rejected", accountId: "gmail-owner", search: null, limit: PAGE, offset: 0 },
      { kind: "rejected", accountId: "gmail-owner", search: "refund", limit: PAGE, offset: 0 },
      { kind: "rejected", accountId: "gmail-owner", search: null, limit: PAGE, offset: 0 },
    ]);
  });

  test("an answer a newer read overtook is dropped", async () => {
    const record = new DecisionRecord();
    void record.filterText("old");
    void record.filterText("new");
    answer(1, [entry(2)]);
    await flush();
    answer(0, [entry(1)]);
    await flush();
    expect(record.entries.map((e) => e.decisionId)).toEqual([2]);
    expect(record.loading).toBe(false);
  });

  test("a full page offers more, read from where the list ends", async () => {
    const record = new DecisionRecord();
    void record.refresh();
    answer(0, Array.from({ length: PAGE }, (_, i) => entry(i + 1)));
    await flush();
    expect(record.more).toBe(true);
    void record.loadMore();
    expect(filters()[1]?.offset).toBe(PAGE);
    answer(1, [entry(PAGE + 1)]);
    await flush();
    expect(record.entries.length).toBe(PAGE + 1);
    expect(record.more).toBe(false);
  });
});

test("durations read in seconds, minutes or hours", () => {
  expect(durationLabel(null)).toBe("—");
  expect(durationLabel(30)).toBe("30 s");
  expect(durationLabel(200.4)).toBe("3 min 20 s");
  expect(durationLabel(7500)).toBe("2 h 5 min");
});
