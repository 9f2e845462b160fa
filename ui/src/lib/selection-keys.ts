// The keys that pick drafts for a bulk decision, apart from the app's key handler so they can
// be tested without a window: x picks or unpicks the selected draft, shift+j / shift+k pick
// while moving, * picks every draft the filters show, Escape unpicks everything.
import type { Queue } from "./queue.svelte";

/** What of a key press matters here (a `KeyboardEvent` has it). */
export interface KeyPress {
  key: string;
  shiftKey: boolean;
}

/** Does what `press` means for the picked drafts; false when it means nothing here (the
 * caller then handles it). Escape counts only while something is picked. */
export function pickingKey(queue: Queue, press: KeyPress): boolean {
  // With shift, a letter arrives upper-case ("J"); with Caps Lock too, which is not meant.
  const key = press.key.length === 1 && press.shiftKey ? press.key.toLowerCase() : press.key;
  switch (key) {
    case "x":
      if (press.shiftKey) return false;
      queue.togglePick();
      return true;
    case "j":
    case "k":
      if (!press.shiftKey) return false;
      queue.extend(key === "j" ? 1 : -1);
      return true;
    case "*":
      void queue.pickAllShown();
      return true;
    case "Escape":
      if (queue.pickedCount === 0) return false;
      queue.clearPicks();
      return true;
    default:
      return false;
  }
}
