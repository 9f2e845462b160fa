// Settings → Rules: the add and edit form's fields turned into core's `RuleDefinition` (and
// back, to edit), and the words the page uses for what a rule does, its order and its record. Core checks the definition
// (a name, a subject pattern that is a regular expression, a reason to reject with); this only
// turns text fields into numbers and lists.
import type {
  AttachmentCondition,
  FlagKind,
  MirroredLabel,
  OwnerDid,
  RuleAction,
  RuleDefinition,
  RuleMode,
  UiError,
} from "./types";

/** The add and edit form as the owner fills it in: every scope and condition core has. */
export interface RuleForm {
  name: string;
  action: "approve" | "hold" | "reject";
  /** The reason a reject rule gives (it goes back to the agent). */
  reason: string;
  /** Only this account (its id; empty: every account). */
  account: string;
  /** Gmail: only drafts whose From is this address (empty: any). */
  sender: string;
  /** Gmail: only drafts carrying this label (its id, picked by name; empty: any). */
  label: string;
  /** muster: only replies for this plugin (empty: any). */
  plugin: string;
  /** muster: only the chief's replies, only the sessions' own, or either. */
  chiefFiled: "any" | "chief" | "sessions";
  /** Every recipient is in one of these domains (comma separated). */
  within: string;
  /** …or was already on the message answered. */
  orOnThread: boolean;
  noCcOrBcc: boolean;
  /** Any attachments, none at all, or only these types. */
  attachments: "any" | "none" | "types";
  /** With `types`: the types allowed (comma separated, `image/*` for a family). */
  attachmentTypes: string;
  /** With `types`: the largest attachment allowed, in bytes. */
  maxAttachmentBytes: string;
  /** The body has at most this many words (empty: any length). */
  maxWords: string;
  /** The subject matches this regular expression (empty: any subject). */
  subject: string;
  /** None of these flags is raised. */
  noFlags: FlagKind[];
  /** At most this many decisions a day (empty: no cap). */
  dailyCap: string;
}

/** A blank form: a rule that approves, with no condition yet. */
export function emptyRuleForm(): RuleForm {
  return {
    name: "",
    action: "approve",
    reason: "",
    account: "",
    sender: "",
    label: "",
    plugin: "",
    chiefFiled: "any",
    within: "",
    orOnThread: false,
    noCcOrBcc: false,
    attachments: "any",
    attachmentTypes: "",
    maxAttachmentBytes: "",
    maxWords: "",
    subject: "",
    noFlags: [],
    dailyCap: "",
  };
}

/** The form showing `definition`, to edit it: `definitionOf(formOf(d))` gives `d` back. */
export function formOf(definition: RuleDefinition): RuleForm {
  const c = definition.conditions;
  const s = definition.scope;
  return {
    name: definition.name,
    action: definition.action.kind,
    reason: definition.action.kind === "reject" ? definition.action.reason : "",
    account: s.account ?? "",
    sender: s.sender ?? "",
    label: s.label ?? "",
    plugin: s.plugin ?? "",
    chiefFiled: s.chiefFiled === null ? "any" : s.chiefFiled ? "chief" : "sessions",
    within: c.recipientsWithin.join(", "),
    orOnThread: c.orOnThread,
    noCcOrBcc: c.noCcOrBcc,
    attachments: c.attachments === null ? "any" : c.attachments.kind === "none" ? "none" : "types",
    attachmentTypes: c.attachments?.kind === "only_types" ? c.attachments.types.join(", ") : "",
    maxAttachmentBytes:
      c.attachments?.kind === "only_types" ? String(c.attachments.maxBytes) : "",
    maxWords: c.maxWords === null ? "" : String(c.maxWords),
    subject: c.subjectMatches ?? "",
    noFlags: [...c.noFlags],
    dailyCap: definition.dailyCap === null ? "" : String(definition.dailyCap),
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

/** A comma-separated field as a list, blanks left out. */
function list(field: string): string[] {
  return field
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** An optional text field: `null` when blank. */
function optional(field: string): string | null {
  return field.trim() ? field.trim() : null;
}

/** What the attachments choice says, or what is wrong with it. */
function attachmentsOf(form: RuleForm): AttachmentCondition | null | UiError {
  switch (form.attachments) {
    case "any":
      return null;
    case "none":
      return { kind: "none" };
    case "types": {
      const types = list(form.attachmentTypes);
      if (types.length === 0) {
        return { code: "refused", message: "Name the attachment types the rule allows." };
      }
      const maxBytes = count(form.maxAttachmentBytes, "The largest attachment");
      if (isError(maxBytes)) return maxBytes;
      if (maxBytes === null) {
        return { code: "refused", message: "Say how large an attachment may be, in bytes." };
      }
      return { kind: "only_types", types, maxBytes };
    }
  }
}

/** The definition the form describes, or what is wrong with a field. */
export function definitionOf(form: RuleForm): RuleDefinition | UiError {
  const maxWords = count(form.maxWords, "The most words");
  if (isError(maxWords)) return maxWords;
  const dailyCap = count(form.dailyCap, "The daily cap");
  if (isError(dailyCap)) return dailyCap;
  const attachments = attachmentsOf(form);
  if (isError(attachments)) return attachments;
  const action: RuleAction =
    form.action === "reject" ? { kind: "reject", reason: form.reason.trim() } : { kind: form.action };
  return {
    name: form.name.trim(),
    scope: {
      account: optional(form.account),
      sender: optional(form.sender),
      label: optional(form.label),
      plugin: optional(form.plugin),
      chiefFiled: form.chiefFiled === "any" ? null : form.chiefFiled === "chief",
    },
    conditions: {
      recipientsWithin: list(form.within),
      orOnThread: form.orOnThread,
      noCcOrBcc: form.noCcOrBcc,
      attachments,
      maxWords,
      // Not trimmed: a space in a regular expression is part of what it matches.
      subjectMatches: form.subject.trim() ? form.subject : null,
      noFlags: [...form.noFlags],
    },
    action,
    dailyCap,
  };
}

/** Every flag a rule may require absent, with the words the review shows for it. */
export const FLAG_WORDS: Record<FlagKind, string> = {
  recipient_not_on_thread: "a recipient not on the thread",
  answers_message_not_in_conversation: "answers a message not in its conversation",
  external_recipient: "an external recipient",
  bcc_recipient: "a Bcc recipient",
  risky_attachment: "a risky attachment",
  attachment_type_mismatch: "an attachment whose type does not match its contents",
  link_text_mismatch: "a misleading link",
  reply_without_threading: "a reply that will not thread",
  over_size_limit: "too large to send",
  duplicate_header: "headers programs read differently",
  hidden_text: "hidden text",
  alternatives_differ: "text and HTML that differ",
  unverifiable_styling: "styling that could not be checked",
  machine_text: "text only machines read",
  invisible_characters: "invisible characters",
};

/** The flags in the order the form lists them. */
export const FLAG_KINDS = Object.keys(FLAG_WORDS) as FlagKind[];

/** The place a rule moves to with Alt+Up (`-1`) or Alt+Down (`+1`), or `null` at an end. */
export function movedTo(from: number, step: -1 | 1, count: number): number | null {
  const to = from + step;
  return to < 0 || to >= count ? null : to;
}

/** What a screen reader hears after a move: "“Short replies” is now rule 1 of 3, first to act." */
export function movedAnnouncement(name: string, to: number, count: number): string {
  const place = to === 0 ? ", first to act" : to === count - 1 ? ", last to act" : "";
  return `“${name}” is now rule ${to + 1} of ${count}${place}.`;
}

/** What saving an edit does to the rule, said before saving. */
export function editWarning(mode: RuleMode): string {
  return mode === "armed"
    ? "Saving puts this rule back in shadow: it stops deciding until you arm it again, and its record starts over."
    : "Saving starts its record over: it records afresh what it would do, and stays in shadow.";
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

/** The name of the label a rule keeps by id, among the mirrored `labels`. */
export function labelName(id: string, labels: MirroredLabel[]): string {
  return labels.find((l) => l.id === id)?.name ?? `${id} (no longer in Gmail)`;
}

/** What a rule looks for, in one line ("any draft" when it has no condition); its label by
 * name, from the mirrored `labels`. */
export function conditionsLabel(definition: RuleDefinition, labels: MirroredLabel[] = []): string {
  const c = definition.conditions;
  const parts: string[] = [];
  const s = definition.scope;
  if (s.account) parts.push(`account ${s.account}`);
  if (s.sender) parts.push(`from ${s.sender}`);
  if (s.label) parts.push(`labelled ${labelName(s.label, labels)}`);
  if (s.plugin) parts.push(`for the ${s.plugin} plugin`);
  if (s.chiefFiled === true) parts.push("filed by the chief");
  if (s.chiefFiled === false) parts.push("the sessions' own replies");
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
  if (c.noFlags.length > 0) parts.push(`not flagged for ${c.noFlags.map((k) => FLAG_WORDS[k]).join(", ")}`);
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
