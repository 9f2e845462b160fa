#!/usr/bin/env bash
# The first README command: installs what is missing, builds, and opens Countersign in demo
# mode (fake Gmail and muster, seeded drafts, a throw-away data directory).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

bash scripts/setup.sh

if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
  echo "no display: run this in a desktop session (or under xvfb-run to just try it)" >&2
  exit 1
fi
echo "==> building and starting countersign-desktop --demo"
echo "    watch the queue: ~8 s in an agent files a new Gmail draft, ~15 s in the muster plugin"
echo "    refuses an approved reply (a notification; the tray icon gets a red dot), ~25 s in its redraft arrives"
# The fakes are compiled into the app only with the `demo` feature.
exec cargo run --quiet -p countersign-desktop --features demo -- --demo "$@"
