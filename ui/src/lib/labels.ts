// Words the owner reads for machine values, so every component says the same thing.
import type {
  Address,
  BulkOutcome,
  HistoryKind,
  ItemSummary,
  ItemState,
  LiveDecision,
  RouteState,
  Source,
} from "./types";

const STATE_LABELS: Record<ItemState, string> = {
  pending: "Pending",
  awaiting_check: "Awaiting the plugin's check",
  queued: "Queued",
  sending: "Sending",
  sent: "Sent",
  rejected: "Rejected",
  send_failed: "Send failed",
  conflict: "Changed — review again",
  gone: "Gone",
};

const ROUTE_STATE_LABELS: Record<RouteState, string> = {
  relayed: "handed to the session",
  send_failed: "the plugin could not send the reply",
  redraft: "handed back for a new draft",
  timed_out: "no reply in time",
  fallback: "passed to the chief",
};

const SOURCE_LABELS: Record<Source, string> = {
  gmail: "Gmail",
  muster: "muster",
};

const KIND_LABELS: Record<HistoryKind, string> = {
  sent: "Sent",
  rejected: "Rejected",
  by_rule: "By rule",
  edited: "Edited",
  failed: "Failed",
};

/** Every kind of decision in the record, in the order the filter offers them. */
export const HISTORY_KINDS: HistoryKind[] = ["sent", "rejected", "by_rule", "edited", "failed"];

/** The owner-facing name of a kind of decision in the record. */
export function kindLabel(kind: HistoryKind): string {
  return KIND_LABELS[kind] ?? kind;
}

/** A duration people read: "45 s", "3 min 20 s", "2 h 5 min"; "—" for none. */
export function durationLabel(seconds: number | null): string {
  if (seconds === null) return "—";
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
}

/** The owner-facing name of a state. */
export function stateLabel(state: ItemState): string {
  return STATE_LABELS[state] ?? state;
}

/** What became of a muster route, in the owner's words. */
export function routeStateLabel(state: RouteState): string {
  return ROUTE_STATE_LABELS[state] ?? state.replaceAll("_", " ");
}

/** The owner-facing name of a source. */
export function sourceLabel(source: Source): string {
  return SOURCE_LABELS[source] ?? source;
}

/** `Name <email>` or just the email. */
export function addressLabel(address: Address): string {
  return address.name ? `${address.name} <${address.email}>` : address.email;
}

/** A size people read: 1.2 MB, 340 KB, 12 bytes. */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** A local date and time for an RFC 3339 instant, in the owner's locale and time zone (the one
 * formatting every view uses; exports keep RFC 3339). */
export function timeLabel(iso: string | null): string {
  if (!iso) return "never";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** The exact moment, for a hover: weekday, date, time with seconds and the time zone. */
export function exactTimeLabel(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, {
    weekday: "short",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
  });
}

/** How long ago, where a list shows recency: "just now", "2 min ago", "3 h ago", then the
 * local date and time. `now` in ms (the app's ticking clock). */
export function recencyLabel(iso: string | null, now: number): string {
  if (!iso) return "never";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((now - at) / 1000);
  if (seconds < 0) return timeLabel(iso);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 6 * 3600) return `${Math.floor(seconds / 3600)} h ago`;
  return timeLabel(iso);
}

/** Why nothing goes out now, when the last status said so. */
export interface SendingState {
  paused: boolean;
  dispatching: boolean;
}

/**
 * What the queued decision of `item` is doing now: "Sending in 7 s" within the undo window
 * ("Approved by rule R — sending in 7 s" when a rule decided),
 * "Queued — offline" when its service does not answer, "Queued — paused: not sent yet, you can
 * still undo" while it waits past its window (or paused), or null when nothing is queued.
 * `now` is passed in so the countdown re-renders from one ticking clock; `sending` is the app's
 * pause switch and dispatcher role.
 */
export function decisionLabel(
  item: ItemSummary,
  now: number,
  sending: SendingState = { paused: false, dispatching: true },
): string | null {
  const parts = decisionParts(item, now, sending);
  if (!parts) return null;
  // A rule's decision names the rule that took it, so the owner knows what Undo takes back.
  if (!parts.byRule) return parts.countdown;
  const what = parts.countdown;
  return `${parts.byRule} — ${what.charAt(0).toLowerCase()}${what.slice(1)}`;
}

/** The queued decision of `item` in two parts, for a row too narrow for both: the countdown
 * ("Sending in 7 s"), which must stay whole, and who decided ("Approved by rule R"), which may
 * be cut. Null when nothing is queued. */
export function decisionParts(
  item: ItemSummary,
  now: number,
  sending: SendingState = { paused: false, dispatching: true },
): { countdown: string; byRule: string | null } | null {
  const decision = item.decision;
  if (!decision || item.state !== "queued") return null;
  const countdown = queuedLabel(decision, item.accountOnline, now, sending);
  if (!decision.byRule) return { countdown, byRule: null };
  const by = decision.kind === "reject" ? "Rejected" : "Approved";
  return { countdown, byRule: `${by} by rule ${decision.byRule}` };
}

function queuedLabel(
  decision: LiveDecision,
  accountOnline: boolean,
  now: number,
  sending: SendingState,
): string {
  const left = Math.ceil((Date.parse(decision.dueAt) - now) / 1000);
  // Core keeps Undo open while a decision is queued, past its window too: nothing has left.
  const undo = "not sent yet, you can still undo";
  if (sending.paused) return `Queued — paused: ${undo}`;
  if (!accountOnline) return left > 0 ? "Queued — offline" : `Queued — offline: ${undo}`;
  if (left <= 0 && !sending.dispatching) {
    return `Queued — another Countersign process sends decisions: ${undo}`;
  }
  if (left <= 0 && decision.detail) return `Queued — ${decision.detail}: ${undo}`;
  const verb = decision.kind === "reject" ? "Rejecting" : "Sending";
  if (left > 0) return `${verb} in ${left} s`;
  return `${verb} now…`;
}

/** What a bulk decision did, in one sentence: "Rejected 50", or "Approved 3; skipped 2:
 * <subject> — <why>; …" naming each draft left alone by its subject. */
export function bulkOutcomeLabel(kind: "reject" | "approve", outcome: BulkOutcome): string {
  const done = `${kind === "reject" ? "Rejected" : "Approved"} ${outcome.decided.length}`;
  if (outcome.skipped.length === 0) return done;
  const skipped = outcome.skipped
    .map((one) => `${one.subject || "(no subject)"} — ${one.why}`)
    .join("; ");
  return `${done}; skipped ${outcome.skipped.length}: ${skipped}`;
}
