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

# Fetch the crate's source through a throw-away project, then build it with
# its own lockfile. Its lockfile pins a webpki-roots release the registry
# mirror may lack, and its build dependencies declare a newer rust-version
# than stable: both are relaxed here, for this build only.
mkdir -p "$work/fetch/src"
printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ndestructive_command_guard = "=%s"\n' "$version" >"$work/fetch/Cargo.toml"
echo 'fn main() {}' >"$work/fetch/src/main.rs"
(cd "$work/fetch" && cargo fetch --quiet)
src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/destructive_command_guard-"$version" | head -1)"
cp -r "$src" "$work/dcg"
rm -rf "$work/dcg/rust-toolchain.toml" "$work/dcg/.cargo"
(cd "$work/dcg" && { cargo update --quiet -p webpki-roots --precise 1.0.10 2>/dev/null || true; } && cargo build --quiet --release --locked --ignore-rust-version)
dcg="$work/dcg/target/release/dcg"

# Every pack `dcg packs` lists ("  ○ id - description").
packs="$("$dcg" packs 2>/dev/null | grep -oE '[a-z0-9_]+(\.[a-z0-9_]+)+ - ' | sed 's/ - $//' | sort -u | sed 's/.*/"&"/' | paste -sd, -)"
printf '[packs]\nenabled = [%s]\n' "$packs" >"$work/all-packs.toml"

python3 benches/versus-dcg.py --dongle target/release/safety-dongle --dcg "$dcg"
echo
python3 benches/versus-dcg.py --dongle target/release/safety-dongle --dcg "$dcg" --dcg-config "$work/all-packs.toml"
