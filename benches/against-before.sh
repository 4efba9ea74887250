#!/usr/bin/env bash
# Runs benches against the code before a change, in one run: builds REV's
# release binary in a temporary worktree (its own target folder, kept in
# target/baseline-REV for the next run), then runs each named bench with
# SAFETY_DONGLE_BASELINE pointing at it; the benches alternate the two
# builds and print both builds' figures and their ratio
# (benches/support/builds.rs).
#
#   bash benches/against-before.sh e9e1e5f steps hook proxy
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse --short "${1:?usage: against-before.sh REV BENCH...}")
shift
baseline_target="$PWD/target/baseline-$rev"
if [ ! -x "$baseline_target/release/safety-dongle" ]; then
    worktree=$(mktemp -d)
    git worktree add --detach "$worktree" "$rev" >/dev/null
    trap 'git worktree remove --force "$worktree"' EXIT
    (cd "$worktree" && CARGO_TARGET_DIR="$baseline_target" cargo build --release --locked --bin safety-dongle)
fi
for bench in "$@"; do
    SAFETY_DONGLE_BASELINE="$baseline_target/release/safety-dongle" cargo bench --locked --bench "$bench"
done
