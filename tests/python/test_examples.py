"""The example `command` channel script (examples/command-channel/
phone-webhook.sh) against a local webhook on 127.0.0.1: the request, code
included, arrives in the POST body and never in the URL; an approval is
answered by the webhook's response."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "command-channel" / "phone-webhook.sh"

CODE = "F31R8-40359-3HCR3-NSF45-JJC9M-D"


class Webhook:
    """A local webhook that records requests and answers `reply`."""

    def __init__(self, reply: str):
        self.requests: list[tuple[str, bytes]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.requests.append((self.path, body))
                answer = reply.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()


def run(request: dict, url: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "SAFETY_DONGLE_WEBHOOK_URL": url}
    return subprocess.run([str(SCRIPT)], input=json.dumps(request), capture_output=True, text=True, env=env, timeout=30)


def test_a_code_travels_in_the_body_only() -> None:
    hook = Webhook("ok")
    try:
        request = {"type": "verification_code", "challenge_id": "c1", "agent": "a", "tier": "danger_zone",
                   "reason": "r", "action": "rm -rf /", "code": CODE, "expires_at": "2026-11-22T13:00:00Z"}
        done = run(request, hook.url)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "", "nothing on stdout for a code"
        path, body = hook.requests[0]
        assert json.loads(body)["code"] == CODE
        assert CODE not in path and CODE.replace("-", "") not in path
    finally:
        hook.close()


def test_an_approval_is_answered_by_the_webhook() -> None:
    for reply, expected in (("approve\n", "approve"), ("deny\n", "deny")):
        hook = Webhook(reply)
        try:
            request = {"type": "approval_request", "approval_id": "p1", "agent": "a", "reason": "r",
                       "action": "git push", "expires_at": "2026-11-22T13:00:00Z"}
            done = run(request, hook.url)
            assert done.returncode == 0, done.stderr
            assert done.stdout.splitlines()[0] == expected
        finally:
            hook.close()


def test_an_unreachable_webhook_is_a_failure() -> None:
    request = {"type": "verification_code", "challenge_id": "c", "agent": "a", "code": CODE}
    done = run(request, "http://127.0.0.1:9/unreachable")
    assert done.returncode != 0, "the verifier must not count the code as shown"
