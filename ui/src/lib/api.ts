// Typed calls to the desktop shell's Tauri commands. Components call these, never `invoke`
// directly, so every command name and payload lives in one place.
import { invoke } from "@tauri-apps/api/core";
import type { ItemSummary, UiError } from "./types";

/** Normalises whatever a failed command threw into a `UiError`. */
export function toUiError(error: unknown): UiError {
  if (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    "message" in error &&
    typeof (error as UiError).message === "string"
  ) {
    return error as UiError;
  }
  // Outside the shell (or an IPC failure) the rejection is a plain string or Error.
  const message = error instanceof Error ? error.message : String(error);
  return { code: "internal", message };
}

/** The queue: every item in the mirror, pending first. */
export async function listItems(): Promise<ItemSummary[]> {
  try {
    return await invoke<ItemSummary[]>("list_items");
  } catch (error) {
    throw toUiError(error);
  }
}
