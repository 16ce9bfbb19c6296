"""Model calls in a case: the request hash both sides agree on, and a recorded answer as an SDK response.

A recorded model call holds its messages in the GenAI input-messages shape; a replayed call arrives as
the provider's HTTP request body. Both are reduced to one neutral form (role, text, tool calls, tool
results; no ids, no model name) and hashed, so "the same request" means the same conversation. The
recorded GenAI output messages are turned back into the provider's response JSON, which the real SDK
then parses as if the provider had answered.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, Mapping

from agentotel._context import canonical_arguments
from agentotel.cases._steps import parse_json, sha

# GenAI finish reasons -> OpenAI chat-completions finish reasons.
_OPENAI_FINISH = {"tool_call": "tool_calls", "tool_calls": "tool_calls", "stop": "stop", "length": "length",
                  "content_filter": "content_filter", "error": "stop"}


def scrub(value: Any) -> Any:
    """The value with secrets replaced by the content policy (nothing secret may enter a case)."""
    from agentotel import content

    redact = getattr(content, "redact", None)
    if redact is not None:
        return redact(value)[0]
    if isinstance(value, str):
        return content.redact_text(value)[0]
    if isinstance(value, Mapping):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


def _canon(value: Any) -> str:
    return canonical_arguments(parse_json(value) if isinstance(value, str) else value)


def _neutral(role: str, texts: Iterable[str], calls: Iterable[tuple[str, Any]], results: Iterable[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "system" if role == "developer" else role}
    text = "".join(t for t in texts if t)
    if text:
        message["text"] = text
    calls = [[str(name), _canon(args)] for name, args in calls]
    if calls:
        message["calls"] = calls
    results = [_canon(r) for r in results]
    if results:
        message["results"] = results
    return message


def neutral_from_genai(messages: Any, system_instructions: Any = None) -> list[dict[str, Any]]:
    """The neutral form of a recorded request (GenAI input messages, plus system instructions if apart)."""
    out = []
    for message in parse_json(messages) or ():
        if not isinstance(message, Mapping):
            continue
        parts = [p for p in message.get("parts") or () if isinstance(p, Mapping)]
        out.append(
            _neutral(
                str(message.get("role") or ""),
                (str(p.get("content") or "") for p in parts if p.get("type") == "text"),
                ((p.get("name"), p.get("arguments")) for p in parts if p.get("type") == "tool_call"),
                (p.get("response") for p in parts if p.get("type") == "tool_call_response"),
            )
        )
    system = parse_json(system_instructions)
    if system and not (out and out[0]["role"] == "system"):
        items = system if isinstance(system, list) else [system]
        texts = [str(p.get("content") or "") if isinstance(p, Mapping) else str(p) for p in items]
        out.insert(0, _neutral("system", texts, (), ()))
    return out


def _openai_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text") or "") for p in content if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")]
    return []


def neutral_from_openai(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The neutral form of an OpenAI chat-completions request body."""
    out = []
    for message in body.get("messages") or ():
        role = str(message.get("role") or "")
        if role == "tool":
            content = message.get("content")
            result = "".join(_openai_texts(content)) if isinstance(content, list) else content
            out.append(_neutral(role, (), (), [result]))
            continue
        calls = [
            ((call.get("function") or {}).get("name"), (call.get("function") or {}).get("arguments"))
            for call in message.get("tool_calls") or ()
        ]
        out.append(_neutral(role, _openai_texts(message.get("content")), calls, ()))
    return out


def request_hash(neutral: list[dict[str, Any]]) -> str:
    """The hash a model request is known by in a case (computed on redacted content, as recorded)."""
    return sha(canonical_arguments(scrub(neutral)))


# ---- recorded answers as provider responses ----------------------------------------------------------


def _choices(output_messages: Any) -> list[tuple[str | None, list[dict[str, Any]], str]]:
    choices = []
    for message in parse_json(output_messages) or ():
        if not isinstance(message, Mapping):
            continue
        parts = [p for p in message.get("parts") or () if isinstance(p, Mapping)]
        text = "".join(str(p.get("content") or "") for p in parts if p.get("type") == "text") or None
        calls = []
        for number, part in enumerate(p for p in parts if p.get("type") == "tool_call"):
            arguments = part.get("arguments")
            calls.append(
                {
                    "id": part.get("id") or f"call_replay_{number}",
                    "type": "function",
                    "function": {
                        "name": part.get("name"),
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
                    },
                }
            )
        finish = str(message.get("finish_reason") or ("tool_call" if calls else "stop"))
        choices.append((text, calls, _OPENAI_FINISH.get(finish, finish)))
    return choices or [(None, [], "stop")]


_TOKEN_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def _tokens(fixture: Mapping[str, Any]) -> dict[str, int]:
    """A recorded answer's token counts, every one of `_TOKEN_COUNTS` (0 when not recorded); input tokens
    include the cached ones, as the GenAI conventions count them."""
    usage = fixture.get("usage") or {}
    return {key: int(usage.get(key) or 0) for key in _TOKEN_COUNTS}


def openai_completion(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """A chat.completion body carrying a recorded model answer."""
    tokens = _tokens(fixture)
    prompt, completion = tokens["input_tokens"], tokens["output_tokens"]
    return {
        "id": fixture.get("response_id") or f"chatcmpl-replay-{fixture.get('step')}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": fixture.get("model") or "replay",
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": text, "tool_calls": calls or None, "refusal": None},
                "finish_reason": finish,
                "logprobs": None,
            }
            for index, (text, calls, finish) in enumerate(_choices(fixture.get("response")))
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": tokens["cache_read_tokens"]},
                  "completion_tokens_details": {"reasoning_tokens": tokens["reasoning_tokens"]}},
    }


def openai_stream(fixture: Mapping[str, Any]) -> bytes:
    """The same answer as a chat.completion.chunk event stream (for `stream=True` requests)."""
    body = openai_completion(fixture)
    events = []
    for choice in body["choices"]:
        message = choice["message"]
        delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
        if message["tool_calls"]:
            delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
        events.append({"index": choice["index"], "delta": delta, "finish_reason": None})
        events.append({"index": choice["index"], "delta": {}, "finish_reason": choice["finish_reason"]})
    chunks = [
        {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"], "choices": [event]}
        for event in events
    ]
    chunks.append({"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"],
                   "choices": [], "usage": body["usage"]})
    lines = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return lines.encode("utf-8")


# ---- Anthropic messages ------------------------------------------------------------------------------

_ANTHROPIC_STOP = {"tool_call": "tool_use", "tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}


def _anthropic_blocks(content: Any) -> tuple[list[str], list[tuple[str, Any]], list[Any]]:
    if isinstance(content, str):
        return [content], [], []
    texts, calls, results = [], [], []
    for block in content or ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("tool_use", "server_tool_use"):
            calls.append((block.get("name"), block.get("input")))
        elif kind == "tool_result":
            result = block.get("content")
            if isinstance(result, list):
                pieces = [b.get("text") for b in result if isinstance(b, Mapping) and b.get("type") == "text"]
                result = "".join(pieces) if len(pieces) == len(result) else result
            results.append(result)
    return texts, calls, results


def neutral_from_anthropic(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The neutral form of an Anthropic messages request body (the system prompt first)."""
    out = []
    system = body.get("system")
    if system:
        out.append(_neutral("system", _anthropic_blocks(system)[0], (), ()))
    for message in body.get("messages") or ():
        texts, calls, results = _anthropic_blocks(message.get("content"))
        role = str(message.get("role") or "user")
        if results and not texts and not calls:
            role = "tool"  # a user turn made only of tool results, as the instrumentation records it
        out.append(_neutral(role, texts, calls, results))
    return out


def _anthropic_content(fixture: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    blocks: list[dict[str, Any]] = []
    finish = "stop"
    for message in parse_json(fixture.get("response")) or ():
        if not isinstance(message, Mapping):
            continue
        finish = str(message.get("finish_reason") or finish)
        for number, part in enumerate(p for p in message.get("parts") or () if isinstance(p, Mapping)):
            if part.get("type") == "text":
                blocks.append({"type": "text", "text": str(part.get("content") or "")})
            elif part.get("type") == "tool_call":
                arguments = parse_json(part.get("arguments"))
                blocks.append({"type": "tool_use", "id": part.get("id") or f"toolu_replay_{number}", "name": part.get("name"),
                               "input": arguments if isinstance(arguments, Mapping) else {}})
        break  # Anthropic answers with one message
    if any(b["type"] == "tool_use" for b in blocks) and finish in ("stop", "end_turn"):
        finish = "tool_use"
    return blocks, _ANTHROPIC_STOP.get(finish, finish)


def anthropic_message(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """A messages API response body carrying a recorded model answer."""
    tokens = _tokens(fixture)
    cache_read, cache_write = tokens["cache_read_tokens"], tokens["cache_write_tokens"]
    blocks, stop = _anthropic_content(fixture)
    return {
        "id": fixture.get("response_id") or f"msg_replay_{fixture.get('step')}",
        "type": "message",
        "role": "assistant",
        "model": fixture.get("model") or "replay",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        # Recorded input tokens include the cache's, as the GenAI conventions count them; Anthropic's don't.
        "usage": {"input_tokens": max(tokens["input_tokens"] - cache_read - cache_write, 0),
                  "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write,
                  "output_tokens": tokens["output_tokens"]},
    }


def anthropic_stream(fixture: Mapping[str, Any]) -> bytes:
    """The same answer as the messages API's server-sent events (for `stream=True` requests)."""
    body = anthropic_message(fixture)
    start = dict(body, content=[], stop_reason=None, usage=dict(body["usage"], output_tokens=0))
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": dict(block, input={})})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": body["usage"]["output_tokens"]}})
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode("utf-8")


# ---- OpenAI Responses API ----------------------------------------------------------------------------

# GenAI finish reasons -> a response's status (a tool call completes the response like text does).
_RESPONSES_STATUS = {"length": "incomplete", "error": "failed", "cancelled": "cancelled"}


def neutral_from_openai_responses(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The neutral form of a Responses API request body: `instructions` first, then each input item."""
    out = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append(_neutral("system", [instructions], (), ()))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type") or "message"
        if kind == "message":
            out.append(_neutral(str(item.get("role") or "user"), _openai_texts(item.get("content")), (), ()))
        elif kind == "function_call":
            out.append(_neutral("assistant", (), [(item.get("name"), item.get("arguments"))], ()))
        elif kind == "function_call_output":
            out.append(_neutral("tool", (), (), [item.get("output")]))
        else:  # reasoning and other items carry no text the recording keeps as text
            out.append(_neutral("assistant" if kind == "reasoning" else str(item.get("role") or "user"), (), (), ()))
    return out


def _responses_output(fixture: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The recorded answer as Responses output items (a message, then function calls), and the status."""
    step = fixture.get("step")
    items: list[dict[str, Any]] = []
    status = "completed"
    for message in parse_json(fixture.get("response")) or ():
        if not isinstance(message, Mapping):
            continue
        status = _RESPONSES_STATUS.get(str(message.get("finish_reason")), "completed")
        parts = [p for p in message.get("parts") or () if isinstance(p, Mapping)]
        text = "".join(str(p.get("content") or "") for p in parts if p.get("type") == "text")
        if text:
            items.append({"id": f"msg_replay_{step}", "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]})
        for number, part in enumerate(p for p in parts if p.get("type") == "tool_call"):
            arguments = part.get("arguments")
            items.append({"id": f"fc_replay_{step}_{number}", "type": "function_call", "status": "completed",
                          "call_id": part.get("id") or f"call_replay_{number}", "name": part.get("name"),
                          "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)})
        break  # a response is one assistant turn
    return items, status


def openai_response(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API `response` body carrying a recorded model answer."""
    tokens = _tokens(fixture)
    prompt, completion = tokens["input_tokens"], tokens["output_tokens"]
    output, status = _responses_output(fixture)
    now = int(time.time())
    return {
        "id": fixture.get("response_id") or f"resp_replay_{fixture.get('step')}",
        "object": "response",
        "created_at": now,
        "completed_at": now,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "metadata": {},
        "model": fixture.get("model") or "replay",
        "output": output,
        "parallel_tool_calls": True,
        "temperature": None,
        "tool_choice": "auto",
        "tools": [],
        "top_p": None,
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": tokens["cache_read_tokens"]},
                  "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": tokens["reasoning_tokens"]},
                  "total_tokens": prompt + completion},
    }


def openai_response_stream(fixture: Mapping[str, Any]) -> bytes:
    """The same answer as the Responses API's server-sent events, in the order the SDK's stream helper expects."""
    body = openai_response(fixture)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": dict(body, status="in_progress", output=[], usage=None, completed_at=None)}
    ]
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            empty = dict(item["content"][0], text="")
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": dict(item, status="in_progress", content=[])})
            events.append({"type": "response.content_part.added", "output_index": index, "item_id": item["id"],
                           "content_index": 0, "part": empty})
            events.append({"type": "response.output_text.delta", "output_index": index, "item_id": item["id"],
                           "content_index": 0, "delta": text, "logprobs": []})
            events.append({"type": "response.output_text.done", "output_index": index, "item_id": item["id"],
                           "content_index": 0, "text": text, "logprobs": []})
            events.append({"type": "response.content_part.done", "output_index": index, "item_id": item["id"],
                           "content_index": 0, "part": item["content"][0]})
        else:
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": dict(item, status="in_progress", arguments="")})
            events.append({"type": "response.function_call_arguments.delta", "output_index": index, "item_id": item["id"],
                           "delta": item["arguments"]})
            events.append({"type": "response.function_call_arguments.done", "output_index": index, "item_id": item["id"],
                           "name": item["name"], "arguments": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    final = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(body["status"], "response.failed")
    events.append({"type": final, "response": body})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode("utf-8")
