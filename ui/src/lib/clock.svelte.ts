// One ticking clock for every countdown on screen. It only ticks while someone needs it (a
// decision is queued): the countdown is computed locally from `decision.dueAt`, the shell is
// never polled.

class Clock {
  #now = $state(Date.now());
  #timer: ReturnType<typeof setInterval> | null = null;

  /** The time, as of the last tick (ms since the epoch). */
  get now(): number {
    return this.#now;
  }

  /** Ticks (4 times a second, so "7 s" turns to "6 s" on time) while `needed` is true. */
  run(needed: boolean): void {
    if (needed && this.#timer === null) {
      this.#now = Date.now();
      this.#timer = setInterval(() => (this.#now = Date.now()), 250);
    } else if (!needed && this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }
}

/** The shared clock. */
export const clock = new Clock();
