#!/usr/bin/env bash
# Runs the benchmarks of countersign-core and countersign-render and prints their figures: the full Gmail sync under
# the 250 units/s quota (gmail_sync), the outbox's durable enqueue cost and dispatch throughput
# (outbox), and review rendering (render). The benches print and never assert timings; record
# the figures of a run in docs/performance.md with the date and the machine.
#
#   scripts/bench.sh                 # everything (the Gmail sync alone takes about a minute)
#   scripts/bench.sh outbox render   # only some benches
#   scripts/bench.sh gmail_latency   # new-draft latency at the real polling cadence (about
#                                    # 6 minutes, so not in the default set)
#   scripts/bench.sh muster_reconnects  # a proxy closing muster's silent stream every 60 s for
#                                    # 5 minutes (MUSTER_BENCH_SECS, MUSTER_BENCH_CLOSE_EVERY_SECS
#                                    # make it shorter; not in the default set)
#
# The counts can be changed through GMAIL_SYNC_BENCH_DRAFTS, OUTBOX_BENCH_DECISIONS,
# OUTBOX_BENCH_DISPATCH, OUTBOX_BENCH_QUOTA_SENDS and RENDER_BENCH_ROUNDS.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

benches=("$@")
if ((${#benches[@]} == 0)); then
  benches=(gmail_sync outbox render)
fi
args=()
for bench in "${benches[@]}"; do
  args+=(--bench "$bench")
done

mkdir -p artifacts
out="artifacts/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "# countersign benches, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# $(nproc) cores, $(uname -srm), $(rustc --version)"
} | tee "$out"
# Cargo's build progress goes to stderr; the figures (stdout) are also kept in $out.
cargo bench --workspace "${args[@]}" | tee -a "$out"
echo "figures saved in $out" >&2
