#!/usr/bin/env bash
# Every test: the Rust suites (unit and integration, both crates), the
# black-box suites that drive the binary with the official Python and
# TypeScript MCP SDKs, and the MCP conformance suite against its committed
# baseline. Creates the Python venv (.venv) and installs the pinned npm
# packages on first use (the TypeScript SDK and its Node; the conformance
# suite; the reference MCP servers behind the proxy).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --workspace --locked
bash tests/downstream/install.sh   # the reference MCP servers the proxy tests run, GitHub's OpenAPI description
cargo test --workspace --locked
# The shipped policies' examples, judged by the binary as each policy is used.
for policies in policies/default.toml "policies/default.toml policies/strict.toml" policies/permissive.toml; do
    # shellcheck disable=SC2086 # one or two files
    target/debug/safety-dongle check $policies
done

venv=.venv
if [ ! -x "$venv/bin/python" ] || ! cmp -s tests/python/requirements.txt "$venv/.requirements"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
    cp tests/python/requirements.txt "$venv/.requirements"
fi
SAFETY_DONGLE_BIN="$PWD/target/debug/safety-dongle" "$venv/bin/python" -m pytest tests/python -q -o tmp_path_retention_policy=failed
# The coding agents themselves (issue 34): each pinned harness from npm, driven
# by a scripted model on 127.0.0.1, guarded by `safety-dongle install`, checked
# on disk. The whole matrix runs: six harnesses, 66 cases, each in its own
# folders with its own model server, side by side (pytest-xdist, one worker
# per core, at most 4): 4.6 minutes on 2 cores, 8 one after another;
# `-k "codex and guarded"` and the like select a part.
# A passing case's temporary folders are removed as it ends, a failing
# one's kept to read (Copilot unpacks 235 MB into each home it is given).
bash tests/harnesses/install.sh
SAFETY_DONGLE_BIN="$PWD/target/debug/safety-dongle" "$venv/bin/python" -m pytest tests/harnesses/test_harnesses.py -q -o tmp_path_retention_policy=failed \
    --numprocesses=auto --maxprocesses=4
SAFETY_DONGLE_BIN="$PWD/target/debug/safety-dongle" bash tests/typescript/run.sh
bash tests/conformance/run.sh
