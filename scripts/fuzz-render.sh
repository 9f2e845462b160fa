#!/usr/bin/env bash
# Fuzzes countersign-render's pipeline (render_message, attachments, previews, plain-text
# drafts and diffs) with cargo-fuzz for the given number of seconds (default 60).
#
#   scripts/fuzz-render.sh [seconds]
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`). The golden
# corpus seeds the run; new inputs go to crates/render/fuzz/corpus/render, crashes to
# crates/render/fuzz/artifacts/render (both git-ignored).
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
  ''|*[!0-9]*) echo "usage: $0 [seconds]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
fuzz_dir="$root/crates/render/fuzz"
corpus="$fuzz_dir/corpus/render"
seeds="$root/crates/render/tests/fixtures/render"

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
  exit 1
fi

mkdir -p "$corpus"
find "$seeds" -name '*.eml' -exec cp -n {} "$corpus/" \;

cd "$fuzz_dir"
# -rss_limit_mb: a 30 MB draft must render, but a leak must not eat the machine.
exec cargo +nightly fuzz run -O render "$corpus" -- \
  -max_total_time="$seconds" -max_len=262144 -rss_limit_mb=2048 -timeout=10
