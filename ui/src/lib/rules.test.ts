// The add-rule form becomes core's definition: comma-separated domains, empty numbers as "no
// limit", and a number field that is not a number refused before anything is sent.
import { describe, expect, test } from "vitest";
import {
  actionLabel,
  conditionsLabel,
  definitionOf,
  emptyRuleForm,
  isDefinition,
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
      noAttachments: true,
      maxWords: "30",
      subject: "^Re: ",
      dailyCap: "5",
    });
    expect(definition).toEqual({
      name: "Short replies",
      scope: { account: null, sender: null, plugin: null, chiefFiled: null },
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
