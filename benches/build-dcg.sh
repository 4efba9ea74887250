#!/usr/bin/env bash
# Builds dcg (destructive_command_guard from crates.io) inside a folder the
# caller owns and will delete, for the benches that compare with it; writes
# DIR/all-packs.toml, a dcg config with every pack `dcg packs` lists enabled.
# Prints the dcg binary's path. Nothing of dcg is kept in this repository.
#
#   bash benches/build-dcg.sh VERSION DIR
set -euo pipefail
version="$1"
work="$2"

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
# Its own target folder inside DIR, whatever CARGO_TARGET_DIR says, so it
# goes when DIR goes.
(cd "$work/dcg" && { cargo update --quiet -p webpki-roots --precise 1.0.10 2>/dev/null || true; } \
    && CARGO_TARGET_DIR="$work/dcg/target" cargo build --quiet --release --locked --ignore-rust-version >&2)
dcg="$work/dcg/target/release/dcg"

# Every pack `dcg packs` lists ("  ○ id - description").
packs="$("$dcg" packs 2>/dev/null | grep -oE '[a-z0-9_]+(\.[a-z0-9_]+)+ - ' | sed 's/ - $//' | sort -u | sed 's/.*/"&"/' | paste -sd, -)"
printf '[packs]\nenabled = [%s]\n' "$packs" >"$work/all-packs.toml"
echo "$dcg"
