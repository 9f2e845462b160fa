import type { Settings, SettingsChange } from "./types";

/** What the owner changed on a page that loaded `loaded` and now shows `wanted`: only the
 * settings that differ. The rest are not sent, so a page's older copy of them (Hold everything
 * or Pause sending switched from the tray meanwhile) cannot undo a change made elsewhere. */
export function settingsChange(loaded: Settings, wanted: Settings): SettingsChange {
  const change: SettingsChange = {};
  for (const key of Object.keys(wanted) as (keyof Settings)[]) {
    if (wanted[key] !== loaded[key]) {
      (change as Record<string, unknown>)[key] = wanted[key];
    }
  }
  return change;
}
