#!/usr/bin/env bash
# Installs the pinned agent harnesses (package.json) the real-harness suite
# drives, with the Node they run on. Droid and opencode are pinned by their
# linux-x64 packages (the binaries themselves): their wrapper packages list a
# binary per platform, and npm ci refuses a lock file that lacks the others.
# Does nothing when the installed tree already matches the lock file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
installed="$here/node_modules/.installed-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$installed" 2>/dev/null; then
    (cd "$here" && npm ci --silent --no-audit --no-fund)
    cp "$here/package-lock.json" "$installed"
fi
