#!/usr/bin/env bash
# Prints, per flag kind, how many messages of a public corpus raise it (overall, among two-part
# messages, mail programs vs marketing tools). The corpus is never in this repository: see
# docs/rendering.md, "The public corpus", for its sources and how to rebuild it.
# Usage: scripts/corpus-rates.sh [DIR]   (default /work/corpus)
#        CORPUS_SHOW=alternatives_differ scripts/corpus-rates.sh   also lists each hit.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${CORPUS_DIR:-/work/corpus}}
# The dev profile: the corpus is small and a release build of the renderer takes minutes.
cargo bench --profile dev -p countersign-render --bench corpus -- "$dir"
