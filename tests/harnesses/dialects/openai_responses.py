"""OpenAI Responses (`POST .../responses`), as Codex CLI speaks it with a
custom `model_providers` entry (`wire_api = "responses"`).

A tool result is an input item of type `function_call_output` or
`custom_tool_call_output`; a step is answered as one output item, a
`function_call` (arguments a JSON object), a `custom_tool_call` (arguments
a string: Codex's freeform `apply_patch`), or a `message` with the text,
streamed as Responses events.
"""

from __future__ import annotations

import itertools
import json

from scripted_model import Request, Response, ToolCall

_ids = itertools.count(1)


def _tool_results(body: dict) -> list[str]:
    results = []
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            results.append(output if isinstance(output, str) else json.dumps(output))
    return results


def _item(step) -> dict:
    n = next(_ids)
    if isinstance(step, ToolCall) and isinstance(step.arguments, str):
        return {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "name": step.name, "input": step.arguments, "status": "completed"}
    if isinstance(step, ToolCall):
        return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": step.name, "arguments": json.dumps(step.arguments), "status": "completed"}
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": step.text, "annotations": []}]}


def handle(request: Request, model) -> Response | None:
    path = request.path.split("?", 1)[0]
    if request.method == "GET" and path.endswith("/models"):
        return Response.of_json({"object": "list", "data": [{"id": "scripted", "object": "model", "created": 0, "owned_by": "scripted"}], "models": []})
    if request.method != "POST" or not path.endswith("/responses"):
        return None
    body = request.json() or {}
    item = _item(model.step(_tool_results(body)))
    response = {"id": f"resp_{next(_ids)}", "object": "response", "status": "completed", "model": body.get("model", "scripted"), "output": [item], "usage": {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}
    if not body.get("stream"):
        return Response.of_json(response)

    def events():
        yield "response.created", {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
        yield "response.completed", {"type": "response.completed", "response": response}

    return Response.of_events(events())
