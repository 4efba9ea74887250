"""Gemini API (`POST /v1beta/models/MODEL:generateContent` and
`:streamGenerateContent?alt=sse`), as Gemini CLI speaks it with
`GOOGLE_GEMINI_BASE_URL`.

A tool result is a `functionResponse` part; a step is answered as one
candidate whose content is a `functionCall` part (or a text), streamed
as server-sent events when the path asks for a stream. `countTokens` is
answered with a small count.
"""

from __future__ import annotations

import json

from scripted_model import Request, Response, ToolCall


def _tool_results(body: dict) -> list[str]:
    results = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if isinstance(part, dict) and "functionResponse" in part:
                results.append(json.dumps(part["functionResponse"].get("response")))
    return results


def handle(request: Request, model) -> Response | None:
    path = request.path.split("?", 1)[0]
    if request.method != "POST" or "/models/" not in path:
        return None
    if path.endswith(":countTokens"):
        return Response.of_json({"totalTokens": 10})
    if not (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")):
        return None
    body = request.json() or {}
    # Side requests (routing, summaries) carry no tools: answer them with text.
    has_tools = any(tool.get("functionDeclarations") for tool in body.get("tools") or [])
    step = model.step(_tool_results(body)) if has_tools else None
    if isinstance(step, ToolCall):
        part = {"functionCall": {"name": step.name, "args": step.arguments}}
    else:
        part = {"text": step.text if step else '{"reasoning": "scripted", "model_choice": "flash"}'}
    answer = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": "scripted",
    }
    if path.endswith(":streamGenerateContent"):
        return Response.of_events([(None, answer)])
    return Response.of_json(answer)
