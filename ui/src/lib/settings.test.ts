import { describe, expect, it } from "vitest";
import { settingsChange } from "./settings";
import type { Settings } from "./types";

const loaded: Settings = {
  undoWindowSecs: 10,
  keepRejectedGmailDrafts: false,
  notifications: true,
  remoteContent: "block",
  paused: false,
  newDraftNotifications: false,
  holdEverything: false,
  ruleSettleSecs: 60,
};

describe("settingsChange", () => {
  it("sends only the settings the owner changed, never the page's copy of the switches", () => {
    const wanted = { ...loaded, undoWindowSecs: 25 };
    expect(settingsChange(loaded, wanted)).toEqual({ undoWindowSecs: 25 });
  });

  it("sends nothing when nothing changed", () => {
    expect(settingsChange(loaded, { ...loaded })).toEqual({});
  });
});
