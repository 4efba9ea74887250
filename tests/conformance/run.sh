#!/usr/bin/env bash
# The MCP conformance suite (server mode, over the --http transport)
# against the debug binary, with the committed baseline of expected
# failures: a new failure, or a baseline entry that now passes, fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
binary="${SAFETY_DONGLE_BIN:-$root/target/debug/safety-dongle}"

if [ ! -x "$here/node_modules/.bin/conformance" ] || ! cmp -s "$here/package-lock.json" "$here/node_modules/.package-lock.json" 2>/dev/null; then
    (cd "$here" && npm ci --silent --no-audit --no-fund)
fi
export PATH="$here/node_modules/.bin:$PATH"   # node@22 from the registry, as the suite needs

state="$(mktemp -d)"
log="$state/server.log"
"$binary" serve --http 127.0.0.1:0 --data-dir "$state/data" 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$state"' EXIT
url=""
for _ in $(seq 1 100); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n 1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "conformance: the server did not announce its address" >&2
    cat "$log" >&2
    exit 1
fi
echo "conformance: $(node --version), suite $(conformance --version), server $url"
status=0
conformance server --url "$url" --expected-failures "$here/expected-failures.yml" -o "$state/results" > "$state/output.txt" 2>&1 || status=$?
# The summary, and the verdict on the baseline.
sed -n '/=== SUMMARY/,$p' "$state/output.txt"
exit "$status"
