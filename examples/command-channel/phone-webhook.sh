#!/bin/sh
# A `command` channel for safety-dongle's verifier: forwards each request
# to a phone or chat bridge through a generic webhook.
#
#   [verifier]
#   channels = ["dialog", "command"]
#   command = ["/path/to/phone-webhook.sh"]
#
# The webhook URL comes from SAFETY_DONGLE_WEBHOOK_URL (set it where the
# MCP client starts safety-dongle). The request, code included, travels in
# the POST body, never in the URL, which proxies and logs keep.
#
# - A verification code: exit 0 once the webhook accepted it (the code is
#   then in front of a person).
# - An approval request: the webhook answers with `approve` or `deny` as
#   the first line of its response body, within the wait below; anything
#   else, or no answer, is deny.
set -eu

url="${SAFETY_DONGLE_WEBHOOK_URL:?set SAFETY_DONGLE_WEBHOOK_URL to your webhook}"
request=$(cat)

case "$request" in
    *'"approval_request"'*) wait=110 ;;
    *) wait=20 ;;
esac

answer=$(printf '%s' "$request" | curl --silent --show-error --fail --max-time "$wait" \
    --header 'Content-Type: application/json' --data-binary @- "$url")

case "$request" in
    *'"approval_request"'*) printf '%s\n' "$answer" | head -n 1 ;;
esac
