// Waits until every answer the fake shell owes has been delivered and handled.
//
// The fake answers from memory, so an exchange is a chain of promise callbacks with no I/O or
// timer in it: once the microtask queue is empty, every chain the module under test started
// (a fill reading page after page, a reload it fired and forgot) has run to its end. A
// `setImmediate` callback runs only then. Node's own, taken before any test fakes the timers.
const realSetImmediate = globalThis.setImmediate;

export function settled(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(() => resolve()));
}
