#!/usr/bin/env bash
# Figures for the desktop app on a large queue, no assertions: fills a fresh mirror with
# 10,000 drafts through core's store API (tests/src/bin/fill-mirror.rs), launches the real app
# on it under Xvfb through WebDriver (tests/src/bin/measure-desktop.rs) and prints the cold
# start to the first painted queue row (ms) and the resident memory (VmRSS) of the app and of
# its WebKit processes. Usage: bash scripts/measure-desktop.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
count=${1:-10000}

# The UI is embedded in the app at compile time: build it first, then the binaries.
(cd ui && npm run --silent build >/dev/null)
cargo build --quiet -p countersign-desktop
cargo build --quiet -p countersign-e2e --bin fill-mirror --bin measure-desktop

dir=$(mktemp -d -t countersign-measure-XXXXXX)
trap 'rm -rf "$dir"' EXIT
started=$SECONDS
target/debug/fill-mirror "$dir" "$count"
echo "filled in $((SECONDS - started)) s"

# The measuring binary sits beside the app, not in deps/ as the test binaries do.
export COUNTERSIGN_DESKTOP_BIN=${COUNTERSIGN_DESKTOP_BIN:-$PWD/target/debug/countersign-desktop}
run=(target/debug/measure-desktop "$dir")
if [[ -z ${DISPLAY:-} ]]; then
  run=(xvfb-run -a -s "-screen 0 1280x800x24" "${run[@]}")
fi
"${run[@]}"
