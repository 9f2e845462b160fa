// The queue window: pages read in list order, the selection kept across refreshes, j/k across
// the edge of what is loaded. The shell behind `invoke` is the fake in src/test/fake-shell.ts.
import { beforeEach, describe, expect, test, vi } from "vitest";
import { draft, startShell, type FakeShell } from "../test/fake-shell";
import { settled } from "../test/settled";
import { Queue } from "./queue.svelte";
import type { PageStart } from "./types";

vi.mock("@tauri-apps/api/core", () => import("../test/fake-shell"));

/** 250 pending drafts; the newest (id 250) lists first, so position `p` holds id `250 - p`. */
const DRAFTS = 250;
const idAt = (position: number) => DRAFTS - position;

let shell: FakeShell;
let queue: Queue;

beforeEach(() => {
  shell = startShell(Array.from({ length: DRAFTS }, (_, i) => draft(i + 1)));
  queue = new Queue();
});

/** Where each `queue_page` the queue sent so far started. */
function pageStarts(): PageStart[] {
  return shell.callsOf("queue_page").map((args) => args.start as PageStart);
}

describe("paging", () => {
  test("the first refresh reads the top of the list and selects its first row", async () => {
    await queue.refresh();
    await settled();

    expect(queue.status).toBe("ready");
    expect(queue.total).toBe(DRAFTS);
    expect(queue.offset).toBe(0);
    expect(queue.rows.map((row) => row.id).slice(0, 3)).toEqual([250, 249, 248]);
    expect(queue.selectedId).toBe(250);
    expect(queue.selectedIndex).toBe(0);
    // One page covers the rows in view and the margin: no second read.
    expect(pageStarts()).toEqual([{ from: "first" }]);
  });

  test("scrolling down reads the next pages after the last row held, in list order", async () => {
    await queue.refresh();
    await settled();
    const firstPage = queue.rows.length;

    queue.show(firstPage - 20, firstPage);
    await settled();
    queue.show(DRAFTS - 20, DRAFTS);
    await settled();

    const starts = pageStarts();
    expect(starts.map((start) => start.from)).toEqual(["first", "after", "after"]);
    // Each page goes on from the last row the window held (keyset), never skipping one.
    const cursors = starts.slice(1).map((start) => ("cursor" in start ? start.cursor.id : null));
    expect(cursors).toEqual([idAt(firstPage - 1), idAt(2 * firstPage - 1)]);
    expect(queue.offset).toBe(0);
    expect(queue.rows.map((row) => row.id)).toEqual(
      Array.from({ length: DRAFTS }, (_, position) => idAt(position)),
    );
  });

  test("j past the last loaded row selects the next draft once its page is read", async () => {
    await queue.refresh();
    await settled();
    const lastLoaded = queue.rows.length - 1;
    queue.moveTo(lastLoaded);
    expect(queue.selectedId).toBe(idAt(lastLoaded));

    queue.move(1);
    // Not loaded yet: the position moves at once, the draft shown waits for its row.
    expect(queue.selectedIndex).toBe(lastLoaded + 1);
    expect(queue.selectedId).toBe(idAt(lastLoaded));
    await settled();

    expect(queue.selectedId).toBe(idAt(lastLoaded + 1));
    expect(queue.selected?.subject).toBe(`Draft ${idAt(lastLoaded + 1)}`);
    expect(pageStarts().at(-1)).toMatchObject({ from: "after", cursor: { id: idAt(lastLoaded) } });

    queue.move(-1);
    expect(queue.selectedId).toBe(idAt(lastLoaded));
  });

  test("a shell that cannot read the queue leaves it failed with the shell's error", async () => {
    shell.failNext("queue_page", { code: "mirror_unavailable", message: "the mirror is locked" });

    expect(await queue.refresh()).toBeNull();

    expect(queue.status).toBe("failed");
    expect(queue.error).toEqual({ code: "mirror_unavailable", message: "the mirror is locked" });
  });
});

describe("selection across refreshes", () => {
  test("a refresh keeps the selected draft selected, at its new position", async () => {
    await queue.refresh();
    await settled();
    queue.moveTo(10);
    const selected = idAt(10);

    // Two drafts arrive; they list above the selection.
    shell.items.push(draft(DRAFTS + 1), draft(DRAFTS + 2));
    const located = await queue.refresh();
    await settled();

    expect(located).toBe(12);
    expect(queue.selectedId).toBe(selected);
    expect(queue.selectedIndex).toBe(12);
    expect(queue.rowAt(12)?.id).toBe(selected);
    expect(shell.callsOf("queue_page").at(-1)?.locate).toBe(selected);
  });

  test("when the selected draft leaves the filtered list, the first row is selected", async () => {
    queue.filterState("pending");
    await settled();
    queue.moveTo(10);
    const leaving = idAt(10);

    // Approved elsewhere: no longer pending.
    shell.items = shell.items.map((item) =>
      item.id === leaving ? { ...item, state: "queued" } : item,
    );
    expect(await queue.refresh()).toBeNull();
    await settled();

    expect(queue.total).toBe(DRAFTS - 1);
    expect(queue.selectedId).toBe(idAt(0));
    expect(queue.selectedIndex).toBe(0);
    expect(queue.rows.some((row) => row.id === leaving)).toBe(false);
  });

  test("when the list empties, nothing stays selected", async () => {
    await queue.refresh();
    await settled();

    shell.items = [];
    await queue.refresh();
    await settled();

    expect(queue.total).toBe(0);
    expect(queue.selectedId).toBeNull();
    expect(queue.selected).toBeNull();
    expect(queue.selectedIndex).toBe(-1);
  });

  test("j pressed while a refresh is on its way is not undone when it lands", async () => {
    await queue.refresh();
    await settled();
    queue.moveTo(5);

    const release = shell.hold("queue_page");
    const refreshing = queue.refresh();
    queue.move(1);
    const movedTo = idAt(6);
    // A draft arrives meanwhile, shifting every position by one.
    shell.items.push(draft(DRAFTS + 1));
    release();
    await refreshing;
    await settled();

    expect(queue.selectedId).toBe(movedTo);
    expect(queue.rowAt(queue.selectedIndex)?.id).toBe(movedTo);
    // The next j goes on to the draft listed after it, not from where the refresh found the
    // old selection (which would select the same draft again).
    queue.move(1);
    expect(queue.selectedId).toBe(movedTo - 1);
  });

  test("revealing a draft the filters hide clears the filters and selects it", async () => {
    shell.items = [draft(1, { state: "sent" }), draft(2), draft(3)];
    queue.filterState("pending");
    await settled();
    expect(queue.rows.map((row) => row.id)).toEqual([3, 2]);

    await queue.reveal(1);
    await settled();

    expect(queue.stateFilter).toBe("");
    expect(queue.selectedId).toBe(1);
    expect(queue.selected?.id).toBe(1);
    expect(queue.rowAt(queue.selectedIndex)?.id).toBe(1);
  });
});

describe("rows changed in place", () => {
  test("update puts changed rows in place, selection included, without reading the queue", async () => {
    await queue.refresh();
    await settled();
    const reads = shell.callsOf("queue_page").length;
    const changed = { ...queue.rows[0]!, subject: "Edited subject" };

    expect(queue.update([changed])).toBe(true);

    expect(queue.rows[0]?.subject).toBe("Edited subject");
    expect(queue.selected?.subject).toBe("Edited subject");
    expect(shell.callsOf("queue_page").length).toBe(reads);
  });

  test("update refuses a row the window does not hold, so the caller reads the queue", async () => {
    await queue.refresh();
    await settled();
    const before = queue.rows;

    expect(queue.update([draft(9999)])).toBe(false);
    expect(queue.rows).toBe(before);
  });
});
