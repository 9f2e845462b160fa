// Words the owner reads for machine values, so every component says the same thing.
import type { ItemState, Source } from "./types";

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

const SOURCE_LABELS: Record<Source, string> = {
  gmail: "Gmail",
  muster: "muster",
};

/** The owner-facing name of a state. */
export function stateLabel(state: ItemState): string {
  return STATE_LABELS[state];
}

/** The owner-facing name of a source. */
export function sourceLabel(source: Source): string {
  return SOURCE_LABELS[source];
}
