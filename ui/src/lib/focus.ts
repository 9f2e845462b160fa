// Keeps the keyboard focus out of the mail frame, so j/k/a/r keep working after a click into
// the mail body. The frame is sandboxed and cross-origin: once it has the focus, its key
// presses never reach this document, and nothing inside it can run to hand the focus back.

/** How often to look while the window is in the background (see `keepKeysInTheApp`). */
const BACKGROUND_LOOK_MS = 100;

function mailHasFocus(): boolean {
  return document.activeElement instanceof HTMLIFrameElement;
}

function takeFocusBack(): void {
  if (mailHasFocus()) {
    (document.querySelector<HTMLElement>('[role="listbox"]') ?? document.body).focus();
  }
}

/**
 * Takes the focus back whenever the mail frame gets it; returns the function that stops.
 *
 * In a window that has the focus, a click into the frame blurs this window: the focus is taken
 * back right after. In a window in the background (the owner is in another program, or a
 * click has not activated the window yet) WebKit moves the focus into a clicked frame without
 * that blur, and when the window comes back the focus event goes to the frame, not here: no
 * event tells this document. So from the moment the window loses the focus until it has it
 * again with the focus outside the frame, this looks every `BACKGROUND_LOOK_MS`.
 */
export function keepKeysInTheApp(): () => void {
  let looking: ReturnType<typeof setInterval> | undefined;
  const stopLooking = () => {
    clearInterval(looking);
    looking = undefined;
  };
  const look = () => {
    takeFocusBack();
    if (document.hasFocus() && !mailHasFocus()) stopLooking();
  };
  const lookWhileInBackground = () => {
    if (looking === undefined && !document.hasFocus()) {
      looking = setInterval(look, BACKGROUND_LOOK_MS);
    }
  };
  // The focus moves after the blur event: look once it has.
  const onBlur = () =>
    setTimeout(() => {
      takeFocusBack();
      lookWhileInBackground();
    }, 0);
  const onFocus = () => {
    takeFocusBack();
    stopLooking();
  };
  window.addEventListener("blur", onBlur);
  window.addEventListener("focus", onFocus);
  lookWhileInBackground();
  return () => {
    window.removeEventListener("blur", onBlur);
    window.removeEventListener("focus", onFocus);
    stopLooking();
  };
}
