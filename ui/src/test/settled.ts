// Waits until every answer the fake shell owes has been delivered and handled.
//
// The fake answers from memory, so an exchange is a chain of promise callbacks with no I/O or
// timer in it: once the microtask queue is empty, every chain the module under test started
// (a fill reading page after page, a reload it fired and forgot) has run to its end. A
// `setImmediate` callback runs only then. Node's own, taken before any test fakes the timers
// (typed here: the UI's tsconfig has the browser's globals, not Node's).
const realSetImmediate = (globalThis as unknown as { setImmediate: (run: () => void) => unknown })
  .setImmediate;

export function settled(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(() => resolve()));
}
