#!/usr/bin/env bash
# The black-box tests that drive the debug binary with the official MCP
# TypeScript SDK (the client of Claude Desktop and many others), on the
# pinned Node from the npm registry. Installs the pinned packages first
# when the installed tree does not match the lock file; needs no network
# otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export SAFETY_DONGLE_BIN="${SAFETY_DONGLE_BIN:-$root/target/debug/safety-dongle}"

# npm's own node_modules/.package-lock.json never equals package-lock.json
# byte for byte (it has no root entry), so a copy of the lock file made
# after a successful install marks the tree as current.
installed="$here/node_modules/.installed-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$installed" 2>/dev/null || [ ! -x "$here/node_modules/.bin/node" ]; then
    (cd "$here" && npm ci --silent --no-audit --no-fund)
    cp "$here/package-lock.json" "$installed"
fi
export PATH="$here/node_modules/.bin:$PATH"   # the pinned Node, not the system's
cd "$here"
echo "typescript: $(node --version), @modelcontextprotocol/sdk $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version')"
exec node --test --test-reporter=spec ./*.test.mjs
