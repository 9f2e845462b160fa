// Picking drafts for a bulk decision, by the keys the owner presses (lib/selection-keys.ts) and
// by clicks: x toggles, shift+j/k extend while moving, shift+click picks a range, * picks every
// draft the filters show (and only those), Escape clears. The shell behind `invoke` is the fake
// in src/test/fake-shell.ts.
import { beforeEach, describe, expect, test, vi } from "vitest";
import { draft, startShell, type FakeShell } from "../test/fake-shell";
import { settled } from "../test/settled";
import { Queue } from "./queue.svelte";
import { pickingKey, type KeyPress } from "./selection-keys";

vi.mock("@tauri-apps/api/core", () => import("../test/fake-shell"));

/** 250 pending drafts; the newest (id 250) lists first, so position `p` holds id `250 - p`. */
const DRAFTS = 250;
const idAt = (position: number) => DRAFTS - position;

let shell: FakeShell;
let queue: Queue;

beforeEach(async () => {
  shell = startShell(Array.from({ length: DRAFTS }, (_, i) => draft(i + 1)));
  queue = new Queue();
  await queue.refresh();
  await settled();
});

/** Presses `key` (shift held with `shift`), as the app's key handler passes it on. */
function press(key: string, shift = false): boolean {
  const event: KeyPress = { key, shiftKey: shift };
  return pickingKey(queue, event);
}

/** The ids picked, in list order. */
function picked(): number[] {
  return queue
    .pickedListed()
    .map((row) => row.id)
    .sort((a, b) => b - a);
}

describe("keys", () => {
  test("x picks the selected draft at the version its row shows, and x again unpicks it", () => {
    expect(press("x")).toBe(true);
    expect(queue.pickedListed()).toEqual([{ id: idAt(0), version: `m${idAt(0)}-1` }]);
    expect(queue.isPicked(idAt(0))).toBe(true);

    // x acts on the draft under the cursor: move, pick another, then unpick the first.
    queue.move(1);
    press("x");
    expect(picked()).toEqual([idAt(0), idAt(1)]);
    queue.move(-1);
    press("x");
    expect(picked()).toEqual([idAt(1)]);
  });

  test("shift+j picks while moving down and shift+k while moving up", () => {
    queue.moveTo(5);
    // With shift held the browser reports the letter upper-case.
    expect(press("J", true)).toBe(true);
    expect(press("J", true)).toBe(true);
    expect(queue.selectedId).toBe(idAt(7));
    expect(picked()).toEqual([idAt(5), idAt(6), idAt(7)]);

    queue.moveTo(3);
    press("K", true);
    expect(queue.selectedId).toBe(idAt(2));
    expect(picked()).toEqual([idAt(2), idAt(3), idAt(5), idAt(6), idAt(7)]);

    // Plain j/k are not picking keys: they only move (the app's handler does that).
    expect(press("j")).toBe(false);
    expect(press("x", true)).toBe(false);
  });

  test("shift+j onto a row not loaded yet picks it once its page is read", async () => {
    const lastLoaded = queue.rows.length - 1;
    queue.moveTo(lastLoaded);

    press("J", true);
    expect(picked()).toEqual([idAt(lastLoaded)]);
    await settled();

    expect(queue.selectedId).toBe(idAt(lastLoaded + 1));
    expect(picked()).toEqual([idAt(lastLoaded), idAt(lastLoaded + 1)]);
    // A plain j afterwards moves without picking.
    queue.move(1);
    await settled();
    expect(picked()).toEqual([idAt(lastLoaded), idAt(lastLoaded + 1)]);
  });

  test("Escape clears the picks, and means nothing here when none is picked", () => {
    press("x");
    press("J", true);
    expect(queue.pickedCount).toBe(2);

    expect(press("Escape")).toBe(true);
    expect(queue.pickedCount).toBe(0);
    // Nothing picked: Escape is left to the app (it closes overlays or leaves the filter).
    expect(press("Escape")).toBe(false);
  });
});

describe("clicks", () => {
  test("shift+click picks every row from the last one clicked to it", async () => {
    queue.click(idAt(2));
    await queue.pickRange(idAt(6));

    expect(picked()).toEqual([2, 3, 4, 5, 6].map(idAt));
    expect(queue.selectedId).toBe(idAt(6));
    // The range starts from the row clicked, upwards too; rows in the window need no read.
    await queue.pickRange(idAt(0));
    expect(picked()).toEqual([0, 1, 2, 3, 4, 5, 6].map(idAt));
    expect(shell.callsOf("queue_selection")).toEqual([]);
  });

  test("a range whose start was dropped from the window is read from the shell", async () => {
    const many = 1000;
    shell = startShell(Array.from({ length: many }, (_, i) => draft(i + 1)));
    queue = new Queue();
    await queue.refresh();
    await settled();
    queue.click(many);
    // Far down the list (End; the list scrolls there): the window holds other rows now.
    queue.moveTo(many - 1);
    queue.show(many - 10, many);
    await settled();
    expect(queue.rowAt(0)).toBeUndefined();

    await queue.pickRange(1);

    expect(queue.pickedCount).toBe(many);
    expect(queue.selectedId).toBe(1);
    expect(shell.callsOf("queue_selection").length).toBe(1);
  });
});

describe("select all shown by this filter", () => {
  test("* picks every draft the filters show, loaded or not, and only those", async () => {
    // Two sent drafts and a text filter: "Draft 1" is 1, 10–19, 100–199 (111 drafts).
    shell.items = shell.items.map((item) =>
      item.id === 150 || item.id === 12 ? { ...item, state: "sent" } : item,
    );
    queue.filterState("pending");
    queue.filterText("Draft 1");
    await settled();
    expect(queue.total).toBe(109);

    expect(press("*")).toBe(true);
    await settled();

    expect(queue.pickedCount).toBe(109);
    expect(queue.isPicked(150)).toBe(false);
    expect(queue.isPicked(12)).toBe(false);
    expect(queue.isPicked(2)).toBe(false);
    expect(queue.isPicked(199)).toBe(true);
    // Each at the version its row shows.
    expect(queue.pickedListed().find((row) => row.id === 199)?.version).toBe("m199-1");
    expect(shell.callsOf("queue_selection").at(-1)?.filter).toEqual({
      states: ["pending"],
      text: "Draft 1",
    });
  });

  test("changing a filter clears the picks: a bulk decision covers only drafts listed", async () => {
    press("*");
    await settled();
    expect(queue.pickedCount).toBe(DRAFTS);

    queue.filterText("Draft 2");
    expect(queue.pickedCount).toBe(0);
  });

  test("a listing read for filters changed meanwhile picks nothing", async () => {
    const release = shell.hold("queue_selection");
    const picking = queue.pickAllShown();
    queue.filterText("Draft 2");
    release();
    await picking;
    await settled();

    expect(queue.pickedCount).toBe(0);
  });

  test("a listing the shell cannot read is shown as an error, nothing picked", async () => {
    shell.failNext("queue_selection", { code: "mirror_unavailable", message: "the mirror is locked" });

    await queue.pickAllShown();

    expect(queue.pickedCount).toBe(0);
    expect(queue.pickError?.message).toBe("the mirror is locked");
  });
});

describe("the outcome", () => {
  test("names each draft left alone by its subject, with why", async () => {
    const { bulkOutcomeLabel } = await import("./labels");
    const decided = (itemId: number) => ({ itemId }) as never;
    expect(bulkOutcomeLabel("reject", { decided: [1, 2].map(decided), skipped: [] })).toBe(
      "Rejected 2",
    );
    expect(
      bulkOutcomeLabel("approve", {
        decided: [decided(1)],
        skipped: [
          { id: 2, subject: "Re: Offer", why: "you have not displayed it" },
          { id: 3, subject: "", why: "cannot approve the draft without a subject: it changed since it was shown to you" },
        ],
      }),
    ).toBe(
      "Approved 1; skipped 2: Re: Offer — you have not displayed it; (no subject) — cannot " +
        "approve the draft without a subject: it changed since it was shown to you",
    );
  });
});
