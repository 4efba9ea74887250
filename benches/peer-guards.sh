#!/usr/bin/env bash
# Every guard on every peer suite, from one run: builds safety-dongle
# (release), installs the peer guards into a temporary folder deleted at the
# end (dcg built from crates.io, cc-safety-net from npm, HOL Guard from PyPI
# in a virtualenv), then runs benches/peer-guards.py, which prints the
# markdown table on stdout. A peer that cannot be installed is reported with
# the reason and the others still run. Nothing of the peers is kept in this
# repository. Takes a while: dcg's release build alone is several minutes.
#
#   nice -n 10 bash benches/peer-guards.sh [--suites DIR] [--json FILE]
#
# Versions, pinned so a re-run measures the same peers (override by
# environment): DCG_VERSION (the version the dcg suite was read from),
# CCSN_VERSION and HOL_GUARD_VERSION (the newest the registries served when
# the table in docs/BENCHMARKS.md was measured).
set -euo pipefail
cd "$(dirname "$0")/.."
dcg_version="${DCG_VERSION:-0.16.0}"
ccsn_version="${CCSN_VERSION:-2.4.5}"
hol_guard_version="${HOL_GUARD_VERSION:-3.57.0}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --locked --bin safety-dongle >&2
dongle="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/safety-dongle"
guards=(--dongle "$dongle")
unavailable() { guards+=(--unavailable "$1: $2"); echo "peer-guards: $1 not installed: $2" >&2; }
last_line() { tail -n 1 "$1" | cut -c1-300; }

echo "peer-guards: building dcg $dcg_version" >&2
if dcg="$(bash benches/build-dcg.sh "$dcg_version" "$work/dcg" 2>"$work/dcg.log")"; then
    guards+=(--dcg "$dcg" --dcg-all-packs "$work/dcg/all-packs.toml")
else
    unavailable "dcg $dcg_version" "the build failed: $(last_line "$work/dcg.log")"
fi

echo "peer-guards: installing cc-safety-net $ccsn_version" >&2
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    unavailable "cc-safety-net $ccsn_version" "node and npm are not on PATH"
elif npm install --prefix "$work/ccsn" --no-audit --no-fund "cc-safety-net@$ccsn_version" >"$work/ccsn.log" 2>&1; then
    guards+=(--ccsn "$work/ccsn/node_modules/cc-safety-net/dist/bin/cc-safety-net.js")
else
    unavailable "cc-safety-net $ccsn_version" "npm install failed: $(grep -m1 'npm error' "$work/ccsn.log" || last_line "$work/ccsn.log")"
fi

echo "peer-guards: installing HOL Guard $hol_guard_version" >&2
if python3 -m venv "$work/hol-guard" >"$work/hol-guard.log" 2>&1 \
    && "$work/hol-guard/bin/pip" install --quiet "hol-guard==$hol_guard_version" >>"$work/hol-guard.log" 2>&1; then
    guards+=(--hol-guard "$work/hol-guard/bin/hol-guard")
else
    unavailable "HOL Guard $hol_guard_version" "the install failed: $(last_line "$work/hol-guard.log")"
fi

python3 benches/peer-guards.py "${guards[@]}" "$@"
