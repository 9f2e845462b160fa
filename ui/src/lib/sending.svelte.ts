// Whether anything goes out from this window's process right now, as the last status said:
// every row's "not sent yet" reason reads it, so it lives here once instead of being handed
// down through every list and pane. App.svelte sets it from each status it loads.

class Sending {
  /** "Pause sending" is on. */
  paused = $state(false);
  /** This app is the dispatcher (false while another Countersign process is). */
  dispatching = $state(true);
}

/** The shared sending state. */
export const sending = new Sending();
