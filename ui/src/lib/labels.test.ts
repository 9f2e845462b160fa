// The queued decision's label: a rule's decision names the rule, with the same countdown and
// "you can still undo" words as the owner's own click.
import { describe, expect, test } from "vitest";
import { draft } from "../test/fake-shell";
import { decisionLabel, decisionParts, exactTimeLabel, recencyLabel, timeLabel } from "./labels";
import type { ItemSummary, LiveDecision } from "./types";

const NOW = Date.parse("2026-12-03T10:00:00Z");

function queued(decision: Partial<LiveDecision>, overrides: Partial<ItemSummary> = {}) {
  return draft(1, {
    state: "queued",
    decision: {
      id: 7,
      kind: "approve",
      state: "queued",
      dueAt: new Date(NOW + 8000).toISOString(),
      detail: null,
      byRule: null,
      ...decision,
    },
    ...overrides,
  });
}

describe("decisionLabel", () => {
  test("the owner's approval counts down", () => {
    expect(decisionLabel(queued({}), NOW)).toBe("Sending in 8 s");
  });

  test("a rule's approval names the rule before the countdown", () => {
    expect(decisionLabel(queued({ byRule: "Short replies" }), NOW)).toBe(
      "Approved by rule Short replies — sending in 8 s",
    );
  });

  test("a rule's rejection says rejected by the rule", () => {
    expect(decisionLabel(queued({ byRule: "No Friday", kind: "reject" }), NOW)).toBe(
      "Rejected by rule No Friday — rejecting in 8 s",
    );
  });

  test("a rule's approval held by the pause switch still names the rule and offers undo", () => {
    expect(
      decisionLabel(queued({ byRule: "Short replies" }), NOW, { paused: true, dispatching: true }),
    ).toBe("Approved by rule Short replies — queued — paused: not sent yet, you can still undo");
  });

  test("nothing is said once the item is no longer queued", () => {
    expect(decisionLabel(queued({ byRule: "Short replies" }, { state: "sent" }), NOW)).toBeNull();
  });
});

describe("times", () => {
  const at = "2026-12-01T08:00:00.123456Z";
  test("recency reads as a person says it, then falls back to the local date", () => {
    const base = Date.parse(at);
    expect(recencyLabel(at, base + 20_000)).toBe("just now");
    expect(recencyLabel(at, base + 2 * 60_000 + 5_000)).toBe("2 min ago");
    expect(recencyLabel(at, base + 3 * 3_600_000)).toBe("3 h ago");
    expect(recencyLabel(at, base + 2 * 86_400_000)).toBe(timeLabel(at));
    expect(recencyLabel(null, base)).toBe("never");
  });
  test("no view shows the raw RFC 3339 string, microseconds and all", () => {
    for (const label of [timeLabel(at), exactTimeLabel(at)]) {
      expect(label).not.toContain("T08:00");
      expect(label).not.toContain(".123456");
      expect(label).toMatch(/2026/);
    }
  });
});

describe("decisionParts", () => {
  test("a rule's decision keeps the countdown apart from the rule's name", () => {
    expect(decisionParts(queued({ byRule: "A very long rule name indeed" }), NOW)).toEqual({
      countdown: "Sending in 8 s",
      byRule: "Approved by rule A very long rule name indeed",
    });
    expect(decisionParts(queued({}), NOW)).toEqual({ countdown: "Sending in 8 s", byRule: null });
  });
});
