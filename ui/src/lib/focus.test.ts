// @vitest-environment jsdom
// Keys come back to the queue after the mail frame took the focus. jsdom has no window focus
// of its own (its `hasFocus` only says whether an element was ever focused), so each test says
// whether the app's window has the focus, as the window manager would, and fires the window's
// blur/focus events where WebKit fires them.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { keepKeysInTheApp } from "./focus";

let windowHasFocus: boolean;
let queueList: HTMLElement;
let mailFrame: HTMLIFrameElement;
let stop: () => void = () => {};

beforeEach(() => {
  vi.useFakeTimers();
  document.body.innerHTML =
    '<div role="listbox" tabindex="0" aria-label="Queue"></div>' +
    '<iframe sandbox="" title="Mail body"></iframe>';
  queueList = document.querySelector<HTMLElement>('[role="listbox"]')!;
  mailFrame = document.querySelector("iframe")!;
  windowHasFocus = true;
  vi.spyOn(document, "hasFocus").mockImplementation(() => windowHasFocus);
});

afterEach(() => {
  stop();
  stop = () => {};
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A click into the mail body: the cross-origin frame gets the focus. */
function clickIntoMail(): void {
  mailFrame.focus();
  expect(document.activeElement).toBe(mailFrame);
}

describe("a window that has the focus", () => {
  test("a click into the mail frame gives the focus back to the queue right after the blur", () => {
    stop = keepKeysInTheApp();

    clickIntoMail();
    window.dispatchEvent(new Event("blur"));
    // The focus moves after the blur event: it is taken back on the next turn.
    vi.advanceTimersByTime(0);

    expect(document.activeElement).toBe(queueList);
  });

  test("a blur with the focus elsewhere in the app leaves it where it is", () => {
    const filter = document.body.appendChild(document.createElement("input"));
    stop = keepKeysInTheApp();

    filter.focus();
    window.dispatchEvent(new Event("blur"));
    vi.advanceTimersByTime(0);

    expect(document.activeElement).toBe(filter);
  });
});

describe("a window in the background", () => {
  test("a click that moves the focus into the frame without a blur is undone within one look", () => {
    windowHasFocus = false;
    stop = keepKeysInTheApp();

    // WebKit moves the focus into a clicked frame of an inactive window and says nothing.
    clickIntoMail();
    vi.advanceTimersByTime(100);

    expect(document.activeElement).toBe(queueList);
  });

  test("the looking stops once the window has the focus outside the frame", () => {
    windowHasFocus = false;
    stop = keepKeysInTheApp();
    expect(vi.getTimerCount()).toBe(1);

    windowHasFocus = true;
    vi.advanceTimersByTime(100);

    expect(vi.getTimerCount()).toBe(0);
  });

  test("the focus event of a window activated with the frame focused takes the focus back", () => {
    windowHasFocus = false;
    stop = keepKeysInTheApp();
    clickIntoMail();

    windowHasFocus = true;
    window.dispatchEvent(new Event("focus"));

    // At once, not at the next look.
    expect(document.activeElement).toBe(queueList);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  test("a window that loses the focus starts looking, as it cannot tell where the focus goes", () => {
    stop = keepKeysInTheApp();
    expect(vi.getTimerCount()).toBe(0);

    windowHasFocus = false;
    window.dispatchEvent(new Event("blur"));
    vi.advanceTimersByTime(0);
    clickIntoMail();
    vi.advanceTimersByTime(100);

    expect(document.activeElement).toBe(queueList);
  });
});

test("once stopped, nothing takes the focus out of the frame", () => {
  windowHasFocus = false;
  const stopKeeping = keepKeysInTheApp();
  stopKeeping();

  clickIntoMail();
  window.dispatchEvent(new Event("blur"));
  vi.advanceTimersByTime(1000);

  expect(document.activeElement).toBe(mailFrame);
  expect(vi.getTimerCount()).toBe(0);
});
