#!/usr/bin/env bash
# Installs the pinned reference MCP servers (server-everything and
# server-filesystem) that the proxy tests start behind the dongle; does
# nothing when the installed tree already matches the lock file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/node_modules/.bin/mcp-server-everything" ] || ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json" 2>/dev/null; then
    (cd "$here" && npm ci --silent --no-audit --no-fund)
fi
