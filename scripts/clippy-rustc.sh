#!/usr/bin/env bash
# Cargo's RUSTC_WORKSPACE_WRAPPER for the test build in scripts/test.sh: every workspace crate is
# compiled by clippy-driver (rustc with Clippy's lints; what `cargo clippy` runs) with warnings
# denied, while the dependencies go to plain rustc. So one build both lints and makes the test
# binaries, and the dependency tree is not compiled a second time in `cargo check` mode just to
# lint our own code (about five minutes of CI on two cores).
#
# Cargo calls it as `clippy-rustc.sh <path to rustc> <rustc arguments…>`; clippy-driver takes
# the same form (https://doc.rust-lang.org/cargo/reference/environment-variables.html,
# RUSTC_WORKSPACE_WRAPPER; clippy's README, "Using clippy-driver").
set -euo pipefail
driver=${CLIPPY_DRIVER:-$(rustup which clippy-driver 2>/dev/null || echo "$(rustc --print sysroot)/bin/clippy-driver")}
exec "$driver" "$@" -D warnings
