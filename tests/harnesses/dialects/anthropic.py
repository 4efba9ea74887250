"""Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it with
`ANTHROPIC_BASE_URL`.

A tool result is a `tool_result` block in a user message; a step is
answered as one assistant message with one `tool_use` block (or a text),
streamed as Messages events when the request asks for a stream.
`count_tokens` is answered with a small count.
"""

from __future__ import annotations

import itertools
import json

from scripted_model import Request, Response, Text, ToolCall

_ids = itertools.count(1)


def _tool_results(body: dict) -> list[str]:
    results = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(part.get("text", "") for part in inner if isinstance(part, dict))
                results.append(inner if isinstance(inner, str) else json.dumps(inner))
    return results


def _content(step) -> list[dict]:
    if isinstance(step, ToolCall):
        return [{"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": step.name, "input": step.arguments}]
    return [{"type": "text", "text": step.text}]


def handle(request: Request, model) -> Response | None:
    path = request.path.split("?", 1)[0]
    if request.method != "POST" or not path.startswith("/v1/messages"):
        return None
    if path.endswith("/count_tokens"):
        return Response.of_json({"input_tokens": 10})
    body = request.json() or {}
    # Side requests (titles, summaries) carry no tools: answer them with text.
    step = model.step(_tool_results(body)) if body.get("tools") else Text("ok")
    content = _content(step)
    stop = "tool_use" if isinstance(step, ToolCall) else "end_turn"
    message = {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
    if not body.get("stream"):
        return Response.of_json(message)

    def events():
        yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
        for index, block in enumerate(content):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 10}}
        yield "message_stop", {"type": "message_stop"}

    return Response.of_events(events())
