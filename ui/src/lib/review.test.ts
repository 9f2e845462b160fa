// The open draft's binding: a decision goes to the version whose rendering the shell recorded
// as displayed, Approve waits `SETTLE_MS` after the draft on screen was swapped for a newer
// version, and the `Shown` an approval sends is never a version the owner was not shown.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { digestOf, draft, startShell, type FakeShell } from "../test/fake-shell";
import { settled } from "../test/settled";
import { Review, SETTLE_MS } from "./review.svelte";
import type { ItemSummary, Shown } from "./types";

vi.mock("@tauri-apps/api/core", () => import("../test/fake-shell"));

let shell: FakeShell;
let review: Review;

beforeEach(() => {
  vi.useFakeTimers();
  shell = startShell([draft(1), draft(2)]);
  review = new Review();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Item `id`'s queue row as the shell has it now. */
function row(id: number): ItemSummary {
  const item = shell.items.find((candidate) => candidate.id === id);
  if (!item) throw new Error(`no item ${id}`);
  return structuredClone(item);
}

function shownOf(id: number, version: string): Shown {
  return { id, version, digest: digestOf(version) };
}

/** The `Shown` of every approval the shell received. */
function approvalsSent(): Shown[] {
  return shell.callsOf("approve").map((args) => args.shown as Shown);
}

describe("binding to the version displayed", () => {
  test("Approve is closed until the shell has recorded the version as displayed", async () => {
    await review.open(1);

    expect(review.detail?.shown.version).toBe("m1-1");
    expect(review.notReady(row(1))).toMatch(/Still loading/);
    expect(await review.approve(row(1))).toBe(false);
    expect(review.actionError?.message).toMatch(/nothing was decided/);
    expect(approvalsSent()).toEqual([]);

    await review.displayed("m1-1", "html");

    expect(shell.callsOf("displayed")).toEqual([{ shown: shownOf(1, "m1-1"), part: "html" }]);
    expect(review.notReady(row(1))).toBeNull();
    expect(await review.approve(row(1))).toBe(true);
    expect(approvalsSent()).toEqual([shownOf(1, "m1-1")]);
  });

  test("a frame that finished rendering a version no longer on screen binds nothing", async () => {
    await review.open(1);
    shell.newVersion(1, "m1-2");
    await review.reload();
    expect(review.detail?.shown.version).toBe("m1-2");

    // The old version's frame reports its load late.
    await review.displayed("m1-1", "html");

    expect(shell.callsOf("displayed")).toEqual([]);
    expect(review.shown).toBeNull();
    expect(await review.approve(row(1))).toBe(false);
    expect(approvalsSent()).toEqual([]);
  });

  test("a displayed record answered after a newer version arrived binds nothing", async () => {
    await review.open(1);
    const release = shell.hold("displayed");
    const recording = review.displayed("m1-1", "html");
    shell.newVersion(1, "m1-2");
    await review.reload();
    release();
    await recording;

    // The shell recorded m1-1 (it was on screen), but the screen now shows m1-2.
    expect(review.shown).toBeNull();
    expect(await review.approve(row(1))).toBe(false);
    expect(approvalsSent()).toEqual([]);
  });

  test("opening another draft drops the binding to the one before", async () => {
    await review.open(1);
    await review.displayed("m1-1", "html");

    await review.open(2);

    expect(review.notReady(row(2))).toMatch(/Still loading/);
    expect(await review.approve(row(1))).toBe(false);
    expect(approvalsSent()).toEqual([]);
  });
});

describe("settle after a version swap", () => {
  test("Approve is closed for SETTLE_MS after the draft on screen changed, then binds to the new version", async () => {
    await review.open(1);
    await review.displayed("m1-1", "html");

    shell.newVersion(1, "m1-2");
    await review.reload();

    expect(review.settling).toBe(true);
    expect(review.shown).toBeNull();
    await review.displayed("m1-2", "html");
    expect(review.notReady(row(1))).toMatch(/read what changed/);
    expect(await review.approve(row(1))).toBe(false);

    vi.advanceTimersByTime(SETTLE_MS - 1);
    expect(review.settling).toBe(true);
    expect(review.notReady(row(1))).not.toBeNull();

    vi.advanceTimersByTime(1);
    expect(review.settling).toBe(false);
    expect(review.notReady(row(1))).toBeNull();
    expect(await review.approve(row(1))).toBe(true);
    expect(approvalsSent()).toEqual([shownOf(1, "m1-2")]);
  });

  test("reloading the same version does not start a settle", async () => {
    await review.open(1);
    await review.displayed("m1-1", "html");

    await review.reload();

    expect(review.settling).toBe(false);
    expect(review.notReady(row(1))).toBeNull();
  });
});

describe("the Shown an approval sends", () => {
  test("a queue row already newer than the version on screen approves nothing", async () => {
    await review.open(1);
    await review.displayed("m1-1", "html");
    // The change event updated the queue row; the detail of m1-2 is still on its way.
    shell.newVersion(1, "m1-2");

    expect(await review.approve(row(1))).toBe(false);

    expect(review.actionError?.message).toMatch(/new version is loading/);
    expect(approvalsSent()).toEqual([]);
  });

  test("an approval the shell refuses as changed approves nothing and loads the new version", async () => {
    await review.open(1);
    await review.displayed("m1-1", "html");
    // Synced in the shell, but no change has reached the UI yet: its row still says m1-1.
    const staleRow = row(1);
    shell.newVersion(1, "m1-2");

    expect(await review.approve(staleRow)).toBe(false);
    await settled();

    // What was sent was what the owner saw, and the shell refused it.
    expect(approvalsSent()).toEqual([shownOf(1, "m1-1")]);
    expect(review.actionError?.code).toBe("changed_since_shown");
    expect(review.detail?.shown.version).toBe("m1-2");
    expect(review.settling).toBe(true);
    expect(review.shown).toBeNull();
  });

  test("Approve anyway binds to the version the owner was asked about", async () => {
    shell.withCautions.add(1);
    await review.open(1);
    await review.displayed("m1-1", "html");

    expect(await review.approve(row(1))).toBe(false);
    expect(review.confirming?.shown).toEqual(shownOf(1, "m1-1"));
    // The question lists the cautions, never the error sentence with the item's id.
    expect(review.confirming?.cautions).toEqual(["It goes to an address never written to before."]);

    expect(await review.approveAnyway(row(1))).toBe(true);
    expect(shell.callsOf("approve").map((args) => [args.shown, args.anyway])).toEqual([
      [shownOf(1, "m1-1"), false],
      [shownOf(1, "m1-1"), true],
    ]);
  });

  test("Approve anyway on a draft that changed since the question approves nothing", async () => {
    shell.withCautions.add(1);
    await review.open(1);
    await review.displayed("m1-1", "html");
    expect(await review.approve(row(1))).toBe(false);

    shell.newVersion(1, "m1-2");
    await review.reload();
    await review.displayed("m1-2", "html");
    vi.advanceTimersByTime(SETTLE_MS);

    expect(await review.approveAnyway(row(1))).toBe(false);
    expect(review.actionError?.message).toMatch(/changed since you were asked/);
    expect(shell.callsOf("approve").filter((args) => args.anyway === true)).toEqual([]);
  });
});
