#!/usr/bin/env bash
# Installs the pinned npm packages the tests use: the reference MCP servers
# (server-everything and server-filesystem) and the Node they run on, which
# the proxy tests start behind the dongle, @octokit/openapi, GitHub's
# REST API description, which the OpenAPI import test reads, the TypeScript
# SDK, and MCP Inspector, whose README recipe is run as written. Does nothing
# when the installed tree already matches the lock file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# npm's own node_modules/.package-lock.json never equals package-lock.json
# byte for byte (it has no root entry), so a copy of the lock file made
# after a successful install marks the tree as current.
installed="$here/node_modules/.installed-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$installed" 2>/dev/null \
    || [ ! -x "$here/node_modules/.bin/mcp-server-everything" ] \
    || [ ! -x "$here/node_modules/.bin/mcp-inspector" ] \
    || [ ! -f "$here/node_modules/@octokit/openapi/generated/api.github.com.json" ]; then
    (cd "$here" && npm ci --silent --no-audit --no-fund)
    cp "$here/package-lock.json" "$installed"
fi
