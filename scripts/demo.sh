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
exec cargo run --quiet -p countersign-desktop -- --demo "$@"
