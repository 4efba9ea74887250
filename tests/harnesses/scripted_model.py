"""A scripted model on 127.0.0.1 that drives a real agent harness offline.

A harness is pointed at this server (a base URL or a custom provider) and
sends its usual model requests. The server answers from a script: reply
number N, where N is how many tool results the harness has already sent
back in the conversation, is the script's step N (a tool call in the
harness's own tool names, or a final text). So a script of one tool call
and one text asks for the call once, whatever the harness answers, and
then ends the turn.

Wire formats live in `dialects/`, one module per API (Anthropic Messages,
OpenAI Responses, ...). Every module there is loaded and must define:

    def handle(request: Request, model: ScriptedModel) -> Response | None

returning None for a request it does not serve. A dialect reads the tool
results of its own format and asks `model.step(results)` for what to say.

Every request body is kept (`model.requests`), so a test can check what
reached the model: a private key's text must never appear there.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterable, Union

DIALECTS_FOLDER = Path(__file__).parent / "dialects"


@dataclass(frozen=True)
class ToolCall:
    """A tool call in the harness's own names, e.g. ToolCall("Bash", {"command": "ls"})."""

    name: str
    arguments: dict


@dataclass(frozen=True)
class Text:
    """A final answer that ends the turn."""

    text: str


Step = Union[ToolCall, Text]


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    raw: bytes

    def json(self):
        """The body as JSON, or None when it is empty or not JSON."""
        try:
            return json.loads(self.raw) if self.raw else None
        except ValueError:
            return None


@dataclass
class Response:
    status: int = 200
    content_type: str = "application/json"
    chunks: Iterable[bytes] = ()
    # Sent as they are produced (server-sent events) rather than with a length.
    streamed: bool = False

    @staticmethod
    def of_json(value, status: int = 200) -> "Response":
        return Response(status, "application/json", [json.dumps(value).encode()])

    @staticmethod
    def of_events(events: Iterable[tuple[str | None, object]]) -> "Response":
        """Server-sent events: (event name or None, JSON data) pairs."""

        def frames():
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                yield f"{head}data: {json.dumps(data)}\n\n".encode()

        return Response(200, "text/event-stream", frames(), streamed=True)


@dataclass
class ScriptedModel:
    script: list[Step]
    requests: list[Request] = field(default_factory=list)
    tool_results: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, results: list[str]) -> Step:
        """The reply to a conversation that holds these tool results; past
        the script's end, a text that ends the turn."""
        with self._lock:
            if len(results) > len(self.tool_results):
                self.tool_results = list(results)
        if len(results) < len(self.script):
            return self.script[len(results)]
        return Text("done")

    def everything_sent(self) -> str:
        """Every request body the harness sent, as text, to search."""
        return "\n".join(r.raw.decode("utf-8", "replace") for r in self.requests)


def _dialects():
    modules = []
    for info in sorted(pkgutil.iter_modules([str(DIALECTS_FOLDER)]), key=lambda i: i.name):
        modules.append(importlib.import_module(f"dialects.{info.name}"))
    return modules


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "ModelServer"

    def log_message(self, *args):  # the test keeps every request; no console noise
        pass

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = Request(self.command, self.path, dict(self.headers), raw)
        model = self.server.model
        model.requests.append(request)
        response = None
        for dialect in self.server.dialects:
            response = dialect.handle(request, model)
            if response is not None:
                break
        if response is None:
            response = Response.of_json({"error": f"the scripted model does not serve {self.command} {self.path}"}, 404)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        if response.streamed:
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in response.chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True
        else:
            body = b"".join(response.chunks)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _serve


class ModelServer(ThreadingHTTPServer):
    """`with ModelServer(script) as server:` serves on server.url until the block ends."""

    daemon_threads = True

    def __init__(self, script: list[Step]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model = ScriptedModel(script)
        self.dialects = _dialects()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
