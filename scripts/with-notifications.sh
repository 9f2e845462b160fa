#!/usr/bin/env bash
# Runs a command with a notification daemon (dunst) on the current D-Bus session bus and X
# display, so the desktop app's notifications are shown and can be observed on the bus.
# Meant to run inside `xvfb-run -a dbus-run-session -- …` (scripts/test.sh does).
set -uo pipefail
cd "$(dirname "$0")/.."

dunst_pid=
if [[ -n ${DISPLAY:-} && -n ${DBUS_SESSION_BUS_ADDRESS:-} ]] && command -v dunst >/dev/null; then
  mkdir -p artifacts/e2e-logs
  dunst >artifacts/e2e-logs/dunst.log 2>&1 &
  dunst_pid=$!
else
  echo "note: no display, session bus or dunst: running without a notification daemon" >&2
fi
stop_dunst() { [[ -n $dunst_pid ]] && kill "$dunst_pid" 2>/dev/null; wait 2>/dev/null; }
trap stop_dunst EXIT

"$@"
