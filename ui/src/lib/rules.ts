// Settings → Rules: the add form's fields turned into core's `RuleDefinition`, and the words
// the page uses for what a rule does and what its record says. Core checks the definition
// (a name, a subject pattern that is a regular expression, a reason to reject with); this only
// turns text fields into numbers and lists.
import type { OwnerDid, RuleAction, RuleDefinition, UiError } from "./types";

/** The add form as the owner fills it in. */
export interface RuleForm {
  name: string;
  action: "approve" | "hold" | "reject";
  /** The reason a reject rule gives (it goes back to the agent). */
  reason: string;
  /** Every recipient is in one of these domains (comma separated). */
  within: string;
  /** …or was already on the message answered. */
  orOnThread: boolean;
  noCcOrBcc: boolean;
  noAttachments: boolean;
  /** The body has at most this many words (empty: any length). */
  maxWords: string;
  /** The subject matches this regular expression (empty: any subject). */
  subject: string;
  /** At most this many decisions a day (empty: no cap). */
  dailyCap: string;
}

/** A blank form: a rule that approves, with no condition yet. */
export function emptyRuleForm(): RuleForm {
  return {
    name: "",
    action: "approve",
    reason: "",
    within: "",
    orOnThread: false,
    noCcOrBcc: false,
    noAttachments: false,
    maxWords: "",
    subject: "",
    dailyCap: "",
  };
}

/** A whole number typed in a field: `null` when empty, an error when it is not one. */
function count(field: string, what: string): number | null | UiError {
  const text = field.trim();
  if (text === "") return null;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    return { code: "refused", message: `${what} must be a whole number (or empty).` };
  }
  return value;
}

function isError(value: unknown): value is UiError {
  return typeof value === "object" && value !== null && "message" in value;
}

/** The definition the form describes, or what is wrong with a number field. */
export function definitionOf(form: RuleForm): RuleDefinition | UiError {
  const maxWords = count(form.maxWords, "The most words");
  if (isError(maxWords)) return maxWords;
  const dailyCap = count(form.dailyCap, "The daily cap");
  if (isError(dailyCap)) return dailyCap;
  const action: RuleAction =
    form.action === "reject" ? { kind: "reject", reason: form.reason.trim() } : { kind: form.action };
  return {
    name: form.name.trim(),
    scope: { account: null, sender: null, plugin: null, chiefFiled: null },
    conditions: {
      recipientsWithin: form.within
        .split(",")
        .map((domain) => domain.trim())
        .filter(Boolean),
      orOnThread: form.orOnThread,
      noCcOrBcc: form.noCcOrBcc,
      attachments: form.noAttachments ? { kind: "none" } : null,
      maxWords,
      // Not trimmed: a space in a regular expression is part of what it matches.
      subjectMatches: form.subject.trim() ? form.subject : null,
      noFlags: [],
    },
    action,
    dailyCap,
  };
}

/** Whether `definitionOf` gave a definition (not an error). */
export function isDefinition(value: RuleDefinition | UiError): value is RuleDefinition {
  return !isError(value);
}

/** What a rule does, in the page's words. */
export function actionLabel(action: RuleAction): string {
  switch (action.kind) {
    case "approve":
      return "approves";
    case "hold":
      return "holds for you";
    case "reject":
      return `rejects (“${action.reason}”)`;
  }
}

/** What a rule looks for, in one line ("any draft" when it has no condition). */
export function conditionsLabel(definition: RuleDefinition): string {
  const c = definition.conditions;
  const parts: string[] = [];
  if (c.recipientsWithin.length > 0) {
    parts.push(
      `every recipient in ${c.recipientsWithin.join(", ")}${c.orOnThread ? " or on the thread" : ""}`,
    );
  } else if (c.orOnThread) {
    parts.push("every recipient on the thread");
  }
  if (c.noCcOrBcc) parts.push("no Cc or Bcc");
  if (c.attachments?.kind === "none") parts.push("no attachments");
  if (c.attachments?.kind === "only_types") parts.push(`attachments: ${c.attachments.types.join(", ")}`);
  if (c.maxWords !== null) parts.push(`at most ${c.maxWords} words`);
  if (c.subjectMatches) parts.push(`subject matches ${c.subjectMatches}`);
  if (c.noFlags.length > 0) parts.push(`none of these flags: ${c.noFlags.join(", ")}`);
  if (definition.dailyCap !== null) parts.push(`at most ${definition.dailyCap} a day`);
  return parts.length > 0 ? parts.join("; ") : "any draft";
}

/** What the rule would have done with a draft ("approve", "reject", "hold"), as a phrase. */
export function wouldLabel(would: string): string {
  return would === "hold" ? "it would hold it for you" : `it would ${would} it`;
}

/** What the owner did with a draft in a rule's record. */
export function ownerDidLabel(did: OwnerDid): string {
  switch (did) {
    case "approved":
      return "you approved it";
    case "edited":
      return "you edited it";
    case "rejected":
      return "you rejected it";
    case "by_rule":
      return "a rule decided it";
    case "undecided":
      return "you have not decided";
    case "not_judged":
      return "you decided a version it never judged";
  }
}
