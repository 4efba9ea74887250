#!/usr/bin/env bash
# Side by side with dcg (destructive_command_guard from crates.io) on the
# policy corpus: builds safety-dongle (release) and dcg into a temporary
# folder, then runs benches/versus-dcg.py twice: dcg with its defaults and
# dcg with every pack enabled. Nothing of dcg is kept in this repository.
#
#   bash benches/versus-dcg.sh [DCG_VERSION]      (default 0.16.0)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-0.16.0}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --locked --bin safety-dongle
dongle="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/safety-dongle"

dcg="$(bash benches/build-dcg.sh "$version" "$work")"

python3 benches/versus-dcg.py --dongle "$dongle" --dcg "$dcg"
echo
python3 benches/versus-dcg.py --dongle "$dongle" --dcg "$dcg" --dcg-config "$work/all-packs.toml"
