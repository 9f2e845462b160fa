// The add-rule form becomes core's definition: comma-separated domains, empty numbers as "no
// limit", and a number field that is not a number refused before anything is sent.
import { describe, expect, test } from "vitest";
import {
  actionLabel,
  conditionsLabel,
  definitionOf,
  editWarning,
  emptyRuleForm,
  formOf,
  isDefinition,
  movedAnnouncement,
  movedTo,
  ownerDidLabel,
  wouldLabel,
} from "./rules";
import type { RuleDefinition } from "./types";

function defined(form: Partial<ReturnType<typeof emptyRuleForm>>): RuleDefinition {
  const definition = definitionOf({ ...emptyRuleForm(), ...form });
  if (!isDefinition(definition)) throw new Error(definition.message);
  return definition;
}

describe("definitionOf", () => {
  test("every field of the form reaches the definition", () => {
    const definition = defined({
      name: "  Short replies ",
      within: "example.com, example.org ,, ",
      orOnThread: true,
      noCcOrBcc: true,
      attachments: "none",
      maxWords: "30",
      subject: "^Re: ",
      dailyCap: "5",
    });
    expect(definition).toEqual({
      name: "Short replies",
      scope: { account: null, sender: null, label: null, plugin: null, chiefFiled: null },
      conditions: {
        recipientsWithin: ["example.com", "example.org"],
        orOnThread: true,
        noCcOrBcc: true,
        attachments: { kind: "none" },
        maxWords: 30,
        subjectMatches: "^Re: ",
        noFlags: [],
      },
      action: { kind: "approve" },
      dailyCap: 5,
    });
  });

  test("empty fields set no condition", () => {
    const definition = defined({ name: "Anything", action: "hold" });
    expect(definition.conditions.recipientsWithin).toEqual([]);
    expect(definition.conditions.maxWords).toBeNull();
    expect(definition.conditions.subjectMatches).toBeNull();
    expect(definition.conditions.attachments).toBeNull();
    expect(definition.dailyCap).toBeNull();
    expect(definition.action).toEqual({ kind: "hold" });
    expect(conditionsLabel(definition)).toBe("any draft");
  });

  test("a reject rule carries its reason", () => {
    expect(defined({ name: "No", action: "reject", reason: " not on Fridays " }).action).toEqual({
      kind: "reject",
      reason: "not on Fridays",
    });
  });

  test("a word limit that is not a whole number is refused in the form", () => {
    const refused = definitionOf({ ...emptyRuleForm(), name: "x", maxWords: "thirty" });
    expect(isDefinition(refused)).toBe(false);
    expect(refused).toEqual({
      code: "refused",
      message: "The most words must be a whole number (or empty).",
    });
  });
});

describe("the page's words", () => {
  test("what a rule does and looks for", () => {
    const definition = defined({
      name: "Short",
      within: "example.com",
      orOnThread: true,
      noCcOrBcc: true,
      maxWords: "30",
      dailyCap: "5",
    });
    expect(actionLabel(definition.action)).toBe("approves");
    expect(actionLabel({ kind: "reject", reason: "no" })).toBe("rejects (“no”)");
    expect(conditionsLabel(definition)).toBe(
      "every recipient in example.com or on the thread; no Cc or Bcc; at most 30 words; at most 5 a day",
    );
  });

  test("a disagreement reads as what the rule would do and what you did", () => {
    expect(`${wouldLabel("approve")}; ${ownerDidLabel("rejected")}`).toBe(
      "it would approve it; you rejected it",
    );
    expect(wouldLabel("hold")).toBe("it would hold it for you");
  });
});

describe("editing a rule", () => {
  test("every scope and condition the command line has survives the round trip through the form", () => {
    const definition: RuleDefinition = {
      name: "Invoices",
      scope: {
        account: "gmail-1",
        sender: "agent@example.com",
        label: "Label_12",
        plugin: "email",
        chiefFiled: false,
      },
      conditions: {
        recipientsWithin: ["example.com", "example.org"],
        orOnThread: true,
        noCcOrBcc: true,
        attachments: { kind: "only_types", types: ["application/pdf", "image/*"], maxBytes: 500000 },
        maxWords: 120,
        subjectMatches: "^Re: Invoice",
        noFlags: ["external_recipient", "hidden_text"],
      },
      action: { kind: "reject", reason: "ask me first" },
      dailyCap: 3,
    };
    expect(definitionOf(formOf(definition))).toEqual(definition);
    const chief = { ...definition, scope: { ...definition.scope, chiefFiled: true } };
    expect(definitionOf(formOf(chief))).toEqual(chief);
  });

  test("scope and conditions read as words", () => {
    const definition = defined({
      name: "x",
      account: "gmail-1",
      sender: "agent@example.com",
      chiefFiled: "chief",
      attachments: "types",
      attachmentTypes: "application/pdf",
      maxAttachmentBytes: "1000",
      noFlags: ["hidden_text"],
    });
    expect(conditionsLabel(definition)).toBe(
      "account gmail-1; from agent@example.com; filed by the chief; attachments: application/pdf; not flagged for hidden text",
    );
  });

  test("a label scope keeps the label's id and reads as its name", () => {
    const definition = defined({ name: "x", label: "Label_12" });
    expect(definition.scope.label).toBe("Label_12");
    const labels = [{ accountId: "gmail-1", id: "Label_12", name: "Agents/Billing", user: true }];
    expect(conditionsLabel(definition, labels)).toBe("labelled Agents/Billing");
    expect(conditionsLabel(definition, [])).toBe("labelled Label_12 (no longer in Gmail)");
  });

  test("allowed attachment types need a size", () => {
    expect(
      definitionOf({ ...emptyRuleForm(), name: "x", attachments: "types", attachmentTypes: "image/*" }),
    ).toEqual({ code: "refused", message: "Say how large an attachment may be, in bytes." });
  });

  test("an armed rule's edit says before saving that it goes back to shadow", () => {
    expect(editWarning("armed")).toMatch(
      /^Saving puts this rule back in shadow: it stops deciding until you arm it again/,
    );
    expect(editWarning("shadow")).toMatch(/record over/);
  });
});

describe("the order", () => {
  test("Alt+Up and Alt+Down move one place, not past the ends", () => {
    expect(movedTo(1, -1, 3)).toBe(0);
    expect(movedTo(0, -1, 3)).toBeNull();
    expect(movedTo(2, 1, 3)).toBeNull();
    expect(movedTo(0, 1, 3)).toBe(1);
  });

  test("a move is announced by the rule's name and place", () => {
    expect(movedAnnouncement("Short replies", 0, 3)).toBe(
      "“Short replies” is now rule 1 of 3, first to act.",
    );
    expect(movedAnnouncement("Short replies", 1, 3)).toBe("“Short replies” is now rule 2 of 3.");
  });
});
