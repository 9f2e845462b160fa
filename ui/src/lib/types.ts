// The shapes the desktop shell sends, mirroring countersign-core's serialized types
// (serde, camelCase fields, snake_case enum values) as docs/desktop-api.md lists them.
// Keep in step with crates/core.

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

/** Every state, in the order the filter and the counts show them. */
export const ALL_STATES: ItemState[] = [
  "pending",
  "awaiting_check",
  "queued",
  "sending",
  "sent",
  "rejected",
  "send_failed",
  "conflict",
  "gone",
];

/** The decision on its way for an item ("sending in 7 s"). */
export interface LiveDecision {
  id: number;
  kind: "approve" | "reject";
  state: string;
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
  /** False while the account's service does not answer ("queued — offline"). */
  accountOnline: boolean;
  /** RFC 3339. */
  updatedAt: string;
}

/** The full item (core's `Item`: the summary flattened plus mirror-only fields). */
export interface Item extends ItemSummary {
  threadId: string | null;
  createdAt: string;
  [extra: string]: unknown;
}

/** A mail address as parsed from the draft. */
export interface Address {
  name: string | null;
  email: string;
}

/** A safety flag: what it is about and one line a person understands. */
export interface Flag {
  kind: string;
  about: string;
  explanation: string;
  /** Every address an aggregated recipient flag covers, e.g. "ana@x.org (To)". */
  recipients?: string[];
}

/** One attachment as the draft declares it and as its bytes are. */
export interface AttachmentMeta {
  index: number;
  fileName: string | null;
  declaredType: string | null;
  sniffedType: string | null;
  size: number;
  inline: boolean;
  contentId: string | null;
}

/** A preview the shell can give for an attachment. */
export type AttachmentPreview =
  | { kind: "image"; dataUri: string }
  | { kind: "text"; text: string; truncated: boolean }
  | { kind: "pdf" }
  | { kind: "none"; contentType: string | null; size: number };

/** `attachment_preview`'s answer. */
export interface AttachmentPreviewAnswer {
  meta: AttachmentMeta;
  preview: AttachmentPreview;
  pdfBase64?: string;
}

/** What the rendered draft says (core's `ReviewView`). */
export interface ReviewView {
  from: Address[];
  sender: Address | null;
  replyTo: Address[];
  to: Address[];
  cc: Address[];
  bcc: Address[];
  subject: string | null;
  date: string | null;
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  textBody: string;
  /** A complete sanitized document for `<iframe sandbox srcdoc>`. */
  htmlBody: string;
  attachments: AttachmentMeta[];
  remoteContent: { blockedCount: number; allowed: boolean; urls: string[] };
  links: { text: string; href: string; mismatch: boolean }[];
  warnings: { kind: string; message: string }[];
  flags: Flag[];
  rawSize: number;
  isReply: boolean;
}

/** One word-level change of the body. */
export interface TextChange {
  kind: "equal" | "removed" | "added";
  text: string;
}

/** A recipient added or removed between versions. */
export interface RecipientChange {
  field: string;
  address: Address;
}

/** An attachment added or removed between versions. */
export interface AttachmentChange {
  fileName: string | null;
  size: number;
  [extra: string]: unknown;
}

/** The changes between two versions (core's `VersionDiff`). */
export interface VersionDiff {
  text: TextChange[];
  textChanged: boolean;
  recipientsAdded: RecipientChange[];
  recipientsRemoved: RecipientChange[];
  attachmentsAdded: AttachmentChange[];
  attachmentsRemoved: AttachmentChange[];
  subject: { old: string | null; new: string | null } | null;
  unchanged: boolean;
}

/** A muster route of this message. */
export interface RouteRecord {
  accountId: string;
  routeId: string;
  messageId: string;
  session: string;
  state: string;
  routedVia: string | null;
  redraftOf: string | null;
  redraftCount: number;
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A decision the owner took (core's `Decision`). */
export interface Decision {
  id: number;
  itemId: number;
  kind: "approve" | "reject";
  reason: string | null;
  version: string;
  digest: string;
  state: string;
  createdAt: string;
  dueAt: string;
  attempts: number;
  [extra: string]: unknown;
}

/** A refusal by the plugin or Google. */
export interface Refusal {
  id: number;
  itemId: number;
  kind: string;
  reason: string;
  recordedAt: string;
  notifiedAt: string | null;
}

/** One line of the audit trail. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  itemId: number | null;
  decisionId: number | null;
  action: string;
  version: string | null;
  digest: string | null;
  outcome: string | null;
  detail: string | null;
}

/** The version of an item on screen: decisions carry it (core's `Shown`). */
export interface Shown {
  id: number;
  version: string;
  digest: string;
}

/** A diff with what it compares against (core's `ReviewDiff`). */
export interface ReviewDiff {
  base: "previous_version" | "refused_draft" | "shown_version";
  baseVersion: string;
  diff: VersionDiff;
}

/** Everything about one item (core's `ReviewDetail`). */
export interface ReviewDetail {
  /** What a decision on this detail binds to: the version rendered and its bytes' sha256. */
  shown: Shown;
  /** The changes from the version the owner was reading, when it changed while on screen. */
  changedSince: ReviewDiff | null;
  item: Item;
  view: ReviewView;
  versions: { version: string; sha256: string; firstSeenAt: string; size: number }[];
  diff: ReviewDiff | null;
  routes: RouteRecord[];
  redraftBound: string | null;
  decisions: Decision[];
  refusals: Refusal[];
  audit: AuditEntry[];
  remoteAllowed: boolean;
  /** What the draft answers: in full when known, else its snippet. */
  answered: AnsweredMessage | null;
  /** Gmail: the draft in Gmail's web app. */
  gmailLink: string | null;
}

/** One message of a Gmail thread, as listed under the draft. */
export interface ThreadMessage {
  gmailId: string;
  rfc822MessageId: string | null;
  from: string;
  subject: string;
  date: string | null;
  snippet: string;
}

/** The message a draft answers. */
export interface AnsweredMessage {
  from: Address[];
  subject: string | null;
  date: string | null;
  /** The whole message rendered (remote content blocked); null when only the snippet is known. */
  view: ReviewView | null;
  snippet: string;
  snippetOnly: boolean;
  /** Gmail: the thread's other messages, oldest first. */
  thread: ThreadMessage[];
}

/** A connected account. */
export interface Account {
  id: string;
  kind: Source;
  label: string;
  address: string;
  apiBase: string;
  grantedScopes: string[];
  secretStorage: string;
  createdAt: string;
  /** Why it must be reconnected ("Reconnect needed: Google ended this sign-in …"), or null. */
  reconnectReason: string | null;
}

/** Where an account's sync stands. */
export interface SyncCursor {
  accountId: string;
  historyId: string | null;
  lastSyncAt: string | null;
  lastFullAt: string | null;
  lastError: string | null;
  online: boolean;
}

/** An account with its sync state. */
export interface AccountStatus {
  account: Account;
  cursor: SyncCursor;
}

/** The owner's settings. */
export interface Settings {
  undoWindowSecs: number;
  keepRejectedGmailDrafts: boolean;
  notifications: boolean;
  remoteContent: "block" | "allow";
  paused: boolean;
  /** "N new drafts to review", one notification per burst; off by default. */
  newDraftNotifications: boolean;
}

/** The status bar's figures. */
export interface AppStatus {
  accounts: AccountStatus[];
  awaitingReview: number;
  queued: number;
  paused: boolean;
  dispatching: boolean;
  demo: boolean;
}

/** What every failing command rejects with (the shell's `UiError`). */
export interface UiError {
  /** Only the codes the UI branches on; everything else is "internal". */
  code: "mirror_unavailable" | "refused" | "changed_since_shown" | "not_found" | "internal";
  message: string;
}

/** Where a page of the queue starts (core's `PageStart`): a row the UI holds is a cursor. */
export type PageStart =
  | { from: "first" }
  | { from: "after"; cursor: ItemSummary }
  | { from: "before"; cursor: ItemSummary }
  | { from: "last" }
  | { from: "at"; offset: number };

/** One page of the queue with the counts around it (the shell's `QueueView`). */
export interface QueueView {
  items: ItemSummary[];
  /** 0-based position of the first row in the filtered list. */
  start: number;
  /** Rows in the filtered list. */
  total: number;
  /** Items per state for the account/source filter (absent: none). */
  counts: Partial<Record<ItemState, number>>;
  /** The queued items due soonest (at most three). */
  soonestQueued: ItemSummary[];
  /** Position of the item asked for with `locate`, `null` when the filters leave it out. */
  located: number | null;
}
