// The shapes the desktop shell sends, mirroring countersign-core's serialized types
// (serde, camelCase fields, snake_case enum values). Keep in step with crates/core.

/** Where a draft comes from. */
export type Source = "gmail" | "muster";

/** A review item's state as the owner sees it (DESIGN §2). */
export type ItemState =
  | "pending"
  | "awaiting_check"
  | "queued"
  | "sending"
  | "sent"
  | "rejected"
  | "send_failed"
  | "conflict"
  | "gone";

/** The decision on its way for an item ("sending in 7 s"). */
export interface LiveDecision {
  id: number;
  kind: "approve" | "reject";
  state: "queued" | "dispatching" | "uncertain";
  /** RFC 3339: end of the undo window. */
  dueAt: string;
  detail: string | null;
}

/** One line of the queue (core's `ItemSummary`). */
export interface ItemSummary {
  id: number;
  accountId: string;
  source: Source;
  externalId: string;
  state: ItemState;
  version: string;
  subject: string;
  from: string;
  recipients: string;
  snippet: string;
  stateReason: string | null;
  checkState: string | null;
  redraftNumber: number;
  decision: LiveDecision | null;
  /** RFC 3339. */
  updatedAt: string;
}

/** What every failing command rejects with (the shell's `UiError`). */
export interface UiError {
  /** Only the codes the UI branches on; everything else is "internal". */
  code: "mirror_unavailable" | "internal";
  message: string;
}
