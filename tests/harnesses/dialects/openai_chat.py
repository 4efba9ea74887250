"""OpenAI Chat Completions (`POST .../chat/completions`), as spoken by
Copilot CLI with a custom provider (`COPILOT_PROVIDER_WIRE_API=completions`),
Factory Droid's `generic-chat-completion-api` custom models and opencode's
`@ai-sdk/openai-compatible` providers.

A tool result is a message with role `tool`; a step is answered as one
assistant message with one tool call (or a text), streamed as
`chat.completion.chunk` events when the request asks for a stream.
A step whose arguments are a string is a freeform (`custom`) tool call,
as Copilot offers `apply_patch` to GPT models. `GET .../models` lists the one scripted model, for harnesses that check.
"""

from __future__ import annotations

import itertools
import json
import time

from scripted_model import Request, Response, Text, ToolCall

_ids = itertools.count(1)


def _tool_results(body: dict) -> list[str]:
    results = []
    for message in body.get("messages") or []:
        if message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            results.append(content if isinstance(content, str) else json.dumps(content))
    return results


def _models(model_name: str) -> Response:
    return Response.of_json({"object": "list", "data": [{"id": model_name, "object": "model", "created": 0, "owned_by": "scripted"}]})


def handle(request: Request, model) -> Response | None:
    path = request.path.split("?", 1)[0]
    if request.method == "GET" and path.endswith("/models"):
        return _models("scripted")
    if request.method != "POST" or not path.endswith("/chat/completions"):
        return None
    body = request.json() or {}
    step = model.step(_tool_results(body))
    name = body.get("model") or "scripted"
    created = int(time.time())
    completion_id = f"chatcmpl-{next(_ids)}"
    if isinstance(step, ToolCall):
        if isinstance(step.arguments, str):
            # A freeform ("custom") tool such as Copilot's apply_patch for GPT models.
            call = {"id": f"call_{next(_ids)}", "type": "custom", "custom": {"name": step.name, "input": step.arguments}}
        else:
            call = {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.arguments)},
            }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        assert isinstance(step, Text)
        message = {"role": "assistant", "content": step.text}
        finish = "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        return Response.of_json(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": name,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    def chunk(delta: dict, finish_reason=None, with_usage=False):
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if with_usage:
            data["usage"] = usage
        return (None, data)

    if isinstance(step, ToolCall):
        tool_call = dict(message["tool_calls"][0], index=0)
        deltas = [{"role": "assistant", "content": None, "tool_calls": [tool_call]}]
    else:
        deltas = [{"role": "assistant", "content": step.text}]
    events = [chunk(delta) for delta in deltas] + [chunk({}, finish, with_usage=True)]
    response = Response.of_events(events)
    response.chunks = itertools.chain(response.chunks, [b"data: [DONE]\n\n"])
    return response
