"""Replay other projects' recorded SDK traffic through the real SDKs with agentotel on; check each span against the recording.

A cassette (vcrpy YAML, or the `requests:`/`responses:` YAML.gz that langchain's suites write) holds
HTTP interactions. For each one this works out the SDK call that made it (from the method, URL and
request body), makes that call through the real openai / anthropic / boto3 / google-genai client
while vcrpy plays the recorded response back (matched on method and URL only), reads the answer to
the end as a caller would, and compares the one span agentotel made with what the recorded response
itself says: operation, request and response model, response id, finish reasons, token counts
(cache and reasoning included), the output messages' text, thinking and tool calls (ids, names,
arguments), and the error status for 4xx/5xx answers. The expectations are read from the recorded
bytes here, independently of agentotel's adapters.

    python -m tests.providers.peer_replay DIR_OR_FILE ... [--show N] [--flip] [--no-content]

prints, per SDK, the calls replayed, how many were fully correct, and each kind of mismatch.
`--flip` replays each cassette a second time through the SDK's other surface (async for sync,
anthropic's stream manager for `create(stream=True)`, and back). `--no-content` replays with content
capture off: every check but the messages, and no message may reach a span. Interactions that are no model call agentotel traces (legacy completions, Assistants, image
downloads, ...) are counted apart as "not traced".
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import inspect
import json
import logging
import os
import re
import sys
import tempfile
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vcr
import yaml

from agentotel._json import parse as parse_json

REDACTED = "**REDACTED**"


# --- Loading cassettes ------------------------------------------------------------------------------------


def load(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette as vcrpy's dicts (request: method, uri, body, headers; response: status, headers, body)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if "interactions" in data:
        interactions = data["interactions"]
    else:  # langchain's serializer: two parallel lists, request dicts flat
        interactions = [{"request": q, "response": r} for q, r in zip(data["requests"], data["responses"])]
    return [_normalised(i) for i in interactions]


def _normalised(interaction: dict[str, Any]) -> dict[str, Any]:
    request, response = dict(interaction["request"]), dict(interaction["response"])
    body = request.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    request["body"] = body
    request["headers"] = {k: v for k, v in (request.get("headers") or {}).items() if v != [REDACTED] and v != REDACTED}
    payload = (response.get("body") or {}).get("string", b"")
    if isinstance(payload, str):
        payload = payload.encode()
    headers = {k: v for k, v in (response.get("headers") or {}).items() if v != [REDACTED] and v != REDACTED}
    lower = {k.lower(): (v[0] if isinstance(v, list) else v) for k, v in headers.items()}
    encoding = (lower.get("content-encoding") or "").lower()
    if encoding == "gzip" or payload[:2] == b"\x1f\x8b":  # stored compressed: hand the SDK plain bytes
        try:
            payload = gzip.decompress(payload)
        except OSError:
            pass
        headers = {k: v for k, v in headers.items() if k.lower() not in ("content-encoding", "content-length")}
    if "content-type" not in lower:  # redacted by the recording suite: say what the bytes are
        headers["Content-Type"] = [_sniff(payload)]
    headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    response["headers"] = headers
    response["body"] = {"string": payload}
    if REDACTED in str(request.get("uri")) and str(request.get("method")).upper() == "POST":
        request["uri"] = _endpoint_of(payload) or request["uri"]
    return {"request": request, "response": response}


def _endpoint_of(payload: bytes) -> str | None:
    """The API a response came from, by its shape (for suites that redact the URL itself)."""
    head = payload.lstrip()[:4000].decode("utf-8", "replace")
    if '"response.created"' in head or '"object": "response"' in head or '"object":"response"' in head:
        return "https://api.openai.com/v1/responses"
    if "chat.completion" in head:
        return "https://api.openai.com/v1/chat/completions"
    if '"embedding"' in head and '"object"' in head:
        return "https://api.openai.com/v1/embeddings"
    if "message_start" in head or ('"type":"message"' in head.replace(" ", "") and '"content"' in head):
        return "https://api.anthropic.com/v1/messages"
    return None


def _sniff(payload: bytes) -> str:
    head = payload.lstrip()[:16]
    if head[:1] in (b"{", b"["):
        return "application/json"
    if head.startswith((b"data:", b"event:", b":")):
        return "text/event-stream"
    if len(payload) > 12 and payload[8:12] != b"" and not head.isascii():
        return "application/vnd.amazon.eventstream"
    return "application/octet-stream"


# --- What call a recorded request was ------------------------------------------------------------------------


@dataclass
class Call:
    """One recorded interaction and the SDK call that made it."""

    cassette: str
    index: int
    sdk: str  # openai, azure, anthropic, anthropic-bedrock, bedrock, genai
    api: str  # chat, responses, embeddings, messages, converse, converse-stream, invoke, invoke-stream, generate, stream-generate, embed
    uri: str
    body: Any
    headers: dict[str, Any]
    status: int
    response_headers: dict[str, str]
    payload: bytes
    asynchronous: bool = False
    manager: bool = False  # anthropic: made through messages.stream()
    untraced: str | None = None  # why this interaction is no traced model call


def plan(path: Path, interactions: list[dict[str, Any]]) -> list[Call]:
    calls = []
    name = path.name.lower()
    for index, interaction in enumerate(interactions):
        request, response = interaction["request"], interaction["response"]
        uri = request["uri"]
        parts = urllib.parse.urlsplit(uri)
        body_text = request.get("body")
        if isinstance(body_text, bytes):
            body_text = body_text.decode("utf-8", "replace")
        try:
            body = json.loads(body_text) if body_text else {}
        except ValueError:
            body = body_text
        headers = {k.lower(): (v[0] if isinstance(v, list) and v else v) for k, v in (request.get("headers") or {}).items()}
        response_headers = {k.lower(): (v[0] if isinstance(v, list) and v else v) for k, v in (response.get("headers") or {}).items()}
        stainless = str(headers.get("x-stainless-async", ""))
        asynchronous = stainless.startswith("async:") or "async" in name or name.startswith(("test_ainvoke", "test_astream", "test_abatch"))
        call = Call(
            cassette=str(path), index=index, sdk="?", api="?", uri=uri, body=body, headers=headers,
            status=int(response["status"]["code"]), response_headers=response_headers,
            payload=response["body"]["string"], asynchronous=asynchronous,
        )  # fmt: skip
        host, route = parts.hostname or "", parts.path
        if request["method"].upper() != "POST":
            call.untraced = f"{request['method']} {host}"
        elif host.startswith("bedrock-runtime"):
            operation = route.rstrip("/").rsplit("/", 1)[-1]
            call.sdk = "anthropic-bedrock" if "anthropic_version" in (body if isinstance(body, dict) else {}) and ":" in urllib.parse.unquote(route) and "%3A" not in route else "bedrock"
            call.api = {"converse": "converse", "converse-stream": "converse-stream", "invoke": "invoke", "invoke-with-response-stream": "invoke-stream"}.get(operation, "?")
            if call.sdk == "anthropic-bedrock":
                call.api = "messages"
            if call.api == "?":
                call.untraced = f"bedrock {operation}"
        elif host.startswith("bedrock-agent") or host.startswith("bedrock."):
            call.untraced = f"bedrock {host.split('.')[0]}"
        elif "anthropic" in host:
            call.sdk, call.api = "anthropic", "messages"
            if not route.endswith("/messages"):
                call.untraced = f"anthropic {route}"
            call.manager = "stream_manager" in name or "helper" in name
        elif "googleapis.com" in host:
            call.sdk = "genai"
            method = route.rsplit(":", 1)[-1] if ":" in route else route
            call.api = {"generateContent": "generate", "streamGenerateContent": "stream-generate", "embedContent": "embed", "batchEmbedContents": "embed"}.get(method, "?")
            if call.api == "?":
                call.untraced = f"genai {method}"
            elif "enum-encoding" in urllib.parse.unquote(parts.query):  # google-cloud-aiplatform's REST transport, not google-genai
                call.untraced = "aiplatform REST (int enums)"
        else:  # openai or an OpenAI-compatible server
            call.sdk = "azure" if "/openai/deployments/" in route or host.endswith(".azure.com") else "openai"
            if route.endswith("/chat/completions"):
                call.api = "chat"
            elif route.endswith("/responses"):
                call.api = "responses"
            elif route.endswith("/embeddings"):
                call.api = "embeddings"
            else:
                call.untraced = "openai " + re.sub(r"/[a-z]+_[A-Za-z0-9]+", "/{id}", route.split("/v1", 1)[-1] or route)
        calls.append(call)
    return calls


# --- What the recorded response says ---------------------------------------------------------------------------


@dataclass
class Message:
    text: str = ""
    thinking: str = ""
    calls: list[tuple[Any, Any, Any]] = field(default_factory=list)  # (id or None when the API gives none, name, arguments)


@dataclass
class Expected:
    operation: str = "chat"
    request_model: str | None = None
    response_model: str | None = None
    response_id: str | None = None
    finish_reasons: list[str] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    messages: list[Message] | None = None
    error: bool = False
    stream: bool = False


def _json(payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        return None


def sse(payload: bytes) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) of a server-sent event stream."""
    events, name, data = [], None, []
    for line in payload.decode("utf-8", "replace").splitlines() + [""]:
        if not line:
            if data:
                text = "\n".join(data)
                events.append((name, None if text == "[DONE]" else _json(text.encode())))
            name, data = None, []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    return events


def aws_events(payload: bytes) -> list[tuple[str, str, Any]]:
    """(message type, event type, parsed payload) of an AWS event stream."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(payload)
    out = []
    for message in buffer:
        headers = message.headers
        out.append((headers.get(":message-type"), headers.get(":event-type") or headers.get(":exception-type"), _json(message.payload)))
    return out


_arguments = parse_json  # a tool call's arguments: parsed when they are JSON text


def _openai_usage(expected: Expected, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    chat = "prompt_tokens" in usage
    expected.input_tokens = usage.get("prompt_tokens" if chat else "input_tokens")
    expected.output_tokens = usage.get("completion_tokens" if chat else "output_tokens")
    expected.cache_read = (usage.get("prompt_tokens_details" if chat else "input_tokens_details") or {}).get("cached_tokens")
    expected.reasoning = (usage.get("completion_tokens_details" if chat else "output_tokens_details") or {}).get("reasoning_tokens")


def expect_openai_chat(call: Call) -> Expected:
    expected = Expected(stream=bool(isinstance(call.body, dict) and call.body.get("stream")))
    if expected.stream:
        choices: dict[int, dict[str, Any]] = {}
        for _, chunk in sse(call.payload):
            if not isinstance(chunk, dict):
                continue
            expected.response_id = expected.response_id or chunk.get("id") or None
            expected.response_model = expected.response_model or chunk.get("model") or None
            if chunk.get("usage"):
                _openai_usage(expected, chunk["usage"])
            for choice in chunk.get("choices") or ():
                state = choices.setdefault(choice.get("index", 0), {"text": "", "calls": {}, "function": None, "finish": None})
                delta = choice.get("delta") or {}
                state["text"] += (delta.get("content") or "") + (delta.get("refusal") or "")
                for tool in delta.get("tool_calls") or ():
                    slot = state["calls"].setdefault(tool.get("index", 0), [None, None, ""])
                    slot[0] = slot[0] or tool.get("id")
                    function = tool.get("function") or {}
                    slot[1] = slot[1] or function.get("name")
                    slot[2] += function.get("arguments") or ""
                if delta.get("function_call"):
                    function = state["function"] = state["function"] or [None, ""]
                    function[0] = function[0] or delta["function_call"].get("name")
                    function[1] += delta["function_call"].get("arguments") or ""
                state["finish"] = choice.get("finish_reason") or state["finish"]
        messages = []
        for _, state in sorted(choices.items()):
            message = Message(text=state["text"])
            message.calls = [(i, n, _arguments(a)) for _, (i, n, a) in sorted(state["calls"].items())]
            if state["function"]:
                message.calls.append((None, state["function"][0], _arguments(state["function"][1])))
            if state["finish"]:
                expected.finish_reasons.append(state["finish"])
            messages.append(message)
        expected.messages = messages
        return expected
    body = _json(call.payload) or {}
    expected.response_id, expected.response_model = body.get("id"), body.get("model")
    _openai_usage(expected, body.get("usage"))
    messages = []
    for choice in body.get("choices") or ():
        message = choice.get("message") or {}
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or () if isinstance(p, dict))
        if not message and isinstance(choice.get("text"), str):  # a text completion's choice
            text = choice["text"]
        item = Message(text=text + (message.get("refusal") or ""))
        for tool in message.get("tool_calls") or ():
            function = tool.get("function") or {}
            item.calls.append((tool.get("id"), function.get("name"), _arguments(function.get("arguments"))))
        if message.get("function_call"):
            item.calls.append((None, message["function_call"].get("name"), _arguments(message["function_call"].get("arguments"))))
        finish = choice.get("finish_reason") or choice.get("stop_reason")  # Mistral on Bedrock says stop_reason
        if finish:
            expected.finish_reasons.append(finish)
        messages.append(item)
    expected.messages = messages
    return expected


_STATUS_REASON = {"completed": "stop", "incomplete": "length", "failed": "error", "cancelled": "cancelled"}


def expect_openai_responses(call: Call) -> Expected:
    expected = Expected(stream=bool(isinstance(call.body, dict) and call.body.get("stream")))
    result: dict[str, Any] = {}
    if expected.stream:
        for _, event in sse(call.payload):
            if isinstance(event, dict) and isinstance(event.get("response"), dict):
                result = event["response"]
    else:
        result = _json(call.payload) or {}
    expected.response_id, expected.response_model = result.get("id"), result.get("model")
    _openai_usage(expected, result.get("usage"))
    message = Message()
    for item in result.get("output") or ():
        kind = item.get("type")
        if kind == "message":
            message.text += "".join(p.get("text") or p.get("refusal") or "" for p in item.get("content") or ())
        elif kind in ("function_call", "custom_tool_call"):
            message.calls.append((item.get("call_id"), item.get("name"), _arguments(item.get("arguments", item.get("input")))))
        elif kind == "reasoning":
            message.thinking += "".join(s.get("text", "") for s in item.get("summary") or ())
    status = result.get("status")
    reason = "tool_calls" if message.calls and status == "completed" else _STATUS_REASON.get(status, status)
    if reason:
        expected.finish_reasons.append(reason)
    expected.messages = [message]
    return expected


def expect_openai_embeddings(call: Call) -> Expected:
    body = _json(call.payload) or {}
    expected = Expected(operation="embeddings", response_model=body.get("model"))
    expected.input_tokens = (body.get("usage") or {}).get("prompt_tokens")
    return expected


def _anthropic_usage(expected: Expected, usage: dict[str, Any]) -> None:
    read, write = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
    if usage.get("input_tokens") is not None:
        expected.input_tokens = usage["input_tokens"] + (read or 0) + (write or 0)
    expected.output_tokens = usage.get("output_tokens")
    expected.cache_read, expected.cache_write = read, write


def _anthropic_message(expected: Expected, message: dict[str, Any]) -> None:
    expected.response_id, expected.response_model = message.get("id"), message.get("model")
    _anthropic_usage(expected, message.get("usage") or {})
    item = Message()
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            item.text += block.get("text", "")
        elif kind == "thinking":
            item.thinking += block.get("thinking", "")
        elif kind in ("tool_use", "server_tool_use"):
            item.calls.append((block.get("id"), block.get("name"), block.get("input")))
    if message.get("stop_reason"):
        expected.finish_reasons.append(message["stop_reason"])
    expected.messages = [item]


def _anthropic_events(expected: Expected, events: list[dict[str, Any]]) -> None:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
            usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            if block.get("type") in ("tool_use", "server_tool_use"):
                block["partial"] = ""
            blocks[event.get("index", len(blocks))] = block
        elif kind == "content_block_delta":
            block = blocks.get(event.get("index", 0))
            delta = event.get("delta") or {}
            if block is None:
                continue
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif delta.get("type") == "input_json_delta":
                block["partial"] = block.get("partial", "") + delta.get("partial_json", "")
        elif kind == "message_delta":
            message["stop_reason"] = (event.get("delta") or {}).get("stop_reason") or message.get("stop_reason")
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
    for block in blocks.values():
        if "partial" in block:
            block["input"] = _arguments(block.pop("partial")) if block.get("partial") else (block.get("input") or {})
    message["content"] = [blocks[i] for i in sorted(blocks)]
    message["usage"] = usage
    _anthropic_message(expected, message)


def expect_anthropic(call: Call) -> Expected:
    expected = Expected(stream=bool(isinstance(call.body, dict) and call.body.get("stream")))
    if expected.stream:
        _anthropic_events(expected, [e for _, e in sse(call.payload) if isinstance(e, dict)])
    else:
        _anthropic_message(expected, _json(call.payload) or {})
    return expected


def _converse_usage(expected: Expected, usage: dict[str, Any]) -> None:
    read = usage.get("cacheReadInputTokens", usage.get("cacheReadInputTokenCount"))
    write = usage.get("cacheWriteInputTokens", usage.get("cacheWriteInputTokenCount"))
    if usage.get("inputTokens") is not None:
        expected.input_tokens = usage["inputTokens"] + (read or 0) + (write or 0)
    expected.output_tokens = usage.get("outputTokens")
    expected.cache_read, expected.cache_write = read, write


def _converse_message(expected: Expected, content: list[dict[str, Any]]) -> None:
    item = Message()
    for block in content or ():
        if "text" in block:
            item.text += block["text"]
        elif "toolUse" in block:
            tool = block["toolUse"]
            item.calls.append((tool.get("toolUseId"), tool.get("name"), _arguments(tool.get("input"))))
        elif "reasoningContent" in block:
            item.thinking += ((block["reasoningContent"] or {}).get("reasoningText") or {}).get("text", "")
    expected.messages = [item]


def _converse_events(expected: Expected, events: list[dict[str, Any]]) -> None:
    blocks: dict[int, dict[str, Any]] = {}
    for name, event in events:
        if name == "contentBlockStart":
            start = (event.get("start") or {}).get("toolUse")
            if start:
                blocks[event.get("contentBlockIndex", 0)] = {"toolUse": {**start, "input": ""}}
        elif name == "contentBlockDelta":
            index, delta = event.get("contentBlockIndex", 0), event.get("delta") or {}
            block = blocks.setdefault(index, {})
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "toolUse" in delta:
                block.setdefault("toolUse", {"input": ""})["input"] += delta["toolUse"].get("input", "")
            elif "reasoningContent" in delta:
                text = delta["reasoningContent"].get("text", "")
                reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})
                reasoning["reasoningText"]["text"] += text
        elif name == "messageStop":
            expected.finish_reasons = [event["stopReason"]] if event.get("stopReason") else []
        elif name == "metadata":
            _converse_usage(expected, event.get("usage") or {})
    _converse_message(expected, [blocks[i] for i in sorted(blocks)])


def _family(model: str) -> str:
    model = model.rsplit("/", 1)[-1]
    for prefix in ("us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca."):
        if model.startswith(prefix):
            model = model[len(prefix):]
    return model.split(".", 1)[0] if "." in model else ""


def _invoke_body(expected: Expected, family: str, body: dict[str, Any]) -> None:
    """A text family's InvokeModel body (anthropic and nova have their own shapes)."""
    if body.get("type") == "message" or (family == "anthropic" and "content" in body):
        _anthropic_message(expected, body)
        return
    if "output" in body and isinstance(body["output"], dict) and "message" in body["output"]:  # Nova: the Converse shape
        _converse_message(expected, body["output"]["message"].get("content"))
        expected.finish_reasons = [body["stopReason"]] if body.get("stopReason") else []
        _converse_usage(expected, body.get("usage") or {})
        return
    if "choices" in body:  # OpenAI-compatible (gpt-oss, Jamba, Mistral chat)
        call = Call("", 0, "", "", "", {}, {}, 200, {}, json.dumps(body).encode())
        inner = expect_openai_chat(call)
        inner.request_model = expected.request_model
        expected.__dict__.update({k: v for k, v in inner.__dict__.items() if k not in ("request_model", "stream")})
        return
    text = finish = None
    if "results" in body:  # Titan
        result = (body.get("results") or [{}])[0]
        text, finish = result.get("outputText"), result.get("completionReason")
        expected.input_tokens, expected.output_tokens = body.get("inputTextTokenCount"), result.get("tokenCount")
    elif "outputText" in body:  # a Titan stream chunk
        text, finish = body.get("outputText"), body.get("completionReason")
    elif "generation" in body:  # Llama
        text, finish = body.get("generation"), body.get("stop_reason")
        expected.input_tokens, expected.output_tokens = body.get("prompt_token_count"), body.get("generation_token_count")
    elif "outputs" in body:  # Mistral
        output = (body.get("outputs") or [{}])[0]
        text, finish = output.get("text"), output.get("stop_reason")
    elif "generations" in body:  # Cohere Command
        generation = (body.get("generations") or [{}])[0]
        text, finish = generation.get("text"), generation.get("finish_reason")
    elif "completions" in body:  # AI21 Jurassic
        completion = (body.get("completions") or [{}])[0]
        text, finish = (completion.get("data") or {}).get("text"), (completion.get("finishReason") or {}).get("reason")
    elif "completion" in body:  # Claude text completions
        text, finish = body.get("completion"), body.get("stop_reason")
    elif "text" in body:  # Cohere Command R
        text, finish = body.get("text"), body.get("finish_reason")
        expected.response_id = body.get("response_id")
    expected.messages = [Message(text=text or "")]
    expected.finish_reasons = [finish] if finish else []


def expect_bedrock(call: Call) -> Expected:
    model = urllib.parse.unquote(urllib.parse.urlsplit(call.uri).path.split("/model/", 1)[-1].rsplit("/", 1)[0])
    expected = Expected(request_model=model, stream=call.api in ("converse-stream", "invoke-stream"))
    if call.api == "converse":
        body = _json(call.payload) or {}
        _converse_message(expected, ((body.get("output") or {}).get("message") or {}).get("content"))
        expected.finish_reasons = [body["stopReason"]] if body.get("stopReason") else []
        _converse_usage(expected, body.get("usage") or {})
    elif call.api == "converse-stream":
        events = aws_events(call.payload)
        expected.error = any(kind == "exception" for kind, _, _ in events)
        _converse_events(expected, [(name, event or {}) for kind, name, event in events if kind == "event"])
    elif call.api == "invoke":
        body = _json(call.payload) or {}
        _invoke_body(expected, _family(model), body)
        header = call.response_headers
        if expected.input_tokens is None and str(header.get("x-amzn-bedrock-input-token-count", "")).isdigit():
            expected.input_tokens = int(header["x-amzn-bedrock-input-token-count"])
        if expected.output_tokens is None and str(header.get("x-amzn-bedrock-output-token-count", "")).isdigit():
            expected.output_tokens = int(header["x-amzn-bedrock-output-token-count"])
    else:
        events = aws_events(call.payload)
        expected.error = any(kind == "exception" for kind, _, _ in events)
        chunks = []
        for kind, name, event in events:
            if kind == "event" and name == "chunk" and isinstance(event, dict) and "bytes" in event:
                chunks.append(json.loads(base64.b64decode(event["bytes"])))
        _invoke_chunks(expected, _family(model), chunks)
    return expected


def _invoke_chunks(expected: Expected, family: str, chunks: list[dict[str, Any]]) -> None:
    metrics = next((c["amazon-bedrock-invocationMetrics"] for c in reversed(chunks) if "amazon-bedrock-invocationMetrics" in c), {})
    if any("type" in c and str(c.get("type", "")).startswith(("message_", "content_block")) for c in chunks):
        _anthropic_events(expected, chunks)
    elif any(k in c for c in chunks for k in ("contentBlockDelta", "messageStart", "messageStop")):  # Nova
        _converse_events(expected, [(next(iter(c)), c[next(iter(c))]) for c in chunks if c and next(iter(c)) != "amazon-bedrock-invocationMetrics"])
    elif any("choices" in c for c in chunks):
        text, finish = "", None
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                text += ((choice.get("delta") or {}).get("content") or "") + ((choice.get("message") or {}).get("content") or "")
                finish = choice.get("finish_reason") or choice.get("stop_reason") or finish
        expected.messages, expected.finish_reasons = [Message(text=text)], [finish] if finish else []
    else:
        text, finish = "", None
        for chunk in chunks:
            probe = Expected()
            _invoke_body(probe, family, chunk)
            text += probe.messages[0].text if probe.messages else ""
            finish = (probe.finish_reasons or [finish])[0]
        expected.messages, expected.finish_reasons = [Message(text=text)], [finish] if finish else []
    if metrics:  # Bedrock's own counts: where the body has none
        if expected.input_tokens is None:
            expected.input_tokens = metrics.get("inputTokenCount")
        if expected.output_tokens is None:
            expected.output_tokens = metrics.get("outputTokenCount")
        if metrics.get("cacheReadInputTokenCount") or metrics.get("cacheWriteInputTokenCount"):
            expected.cache_read = metrics.get("cacheReadInputTokenCount")
            expected.cache_write = metrics.get("cacheWriteInputTokenCount")


def _genai_response(expected: Expected, chunks: list[dict[str, Any]]) -> None:
    candidates: dict[int, Message] = {}
    finishes: dict[int, str] = {}
    usage: dict[str, Any] = {}
    for chunk in chunks:
        expected.response_id = expected.response_id or chunk.get("responseId")
        expected.response_model = expected.response_model or chunk.get("modelVersion")
        if (chunk.get("usageMetadata") or {}).get("promptTokenCount") is not None:
            usage = chunk["usageMetadata"]
        for position, candidate in enumerate(chunk.get("candidates") or ()):
            index = candidate.get("index", position)
            message = candidates.setdefault(index, Message())
            for part in (candidate.get("content") or {}).get("parts") or ():
                if "text" in part:
                    if part.get("thought"):
                        message.thinking += part["text"]
                    else:
                        message.text += part["text"]
                elif "functionCall" in part:
                    function = part["functionCall"]
                    message.calls.append((function.get("id"), function.get("name"), function.get("args") or {}))
            if candidate.get("finishReason"):
                finishes[index] = candidate["finishReason"].lower()
    expected.messages = [candidates[i] for i in sorted(candidates)]
    expected.finish_reasons = [finishes[i] for i in sorted(finishes)]
    if usage:
        expected.input_tokens = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
        if usage.get("candidatesTokenCount") is not None or usage.get("thoughtsTokenCount") is not None:
            expected.output_tokens = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
        expected.cache_read, expected.reasoning = usage.get("cachedContentTokenCount"), usage.get("thoughtsTokenCount")


def expect_genai(call: Call) -> Expected:
    model = urllib.parse.urlsplit(call.uri).path.rsplit("/models/", 1)[-1].split(":", 1)[0]
    if call.api == "embed":
        return Expected(operation="embeddings", request_model=model)
    expected = Expected(request_model=model, stream=call.api == "stream-generate")
    chunks = [e for _, e in sse(call.payload) if isinstance(e, dict)] if expected.stream else [_json(call.payload) or {}]
    if expected.stream and not chunks and isinstance(_json(call.payload), list):
        chunks = _json(call.payload)
    _genai_response(expected, chunks)
    return expected


def expected_of(call: Call) -> Expected:
    if call.status >= 400:
        return _error_expected(call)
    if call.sdk in ("openai", "azure"):
        expected = {"chat": expect_openai_chat, "responses": expect_openai_responses, "embeddings": expect_openai_embeddings}[call.api](call)
        expected.request_model = call.body.get("model") if isinstance(call.body, dict) else None
    elif call.sdk in ("anthropic", "anthropic-bedrock"):
        expected = expect_anthropic(call)
        if call.sdk == "anthropic-bedrock":
            expected.request_model = urllib.parse.unquote(urllib.parse.urlsplit(call.uri).path.split("/model/", 1)[-1].rsplit("/", 1)[0])
        else:
            expected.request_model = call.body.get("model")
    elif call.sdk == "bedrock":
        expected = expect_bedrock(call)
    else:
        expected = expect_genai(call)
    return expected


def _error_expected(call: Call) -> Expected:
    """A 4xx/5xx answer: the span is an error span of the call's operation and request model."""
    body = call.body if isinstance(call.body, dict) else {}
    path = urllib.parse.unquote(urllib.parse.urlsplit(call.uri).path)
    if call.sdk == "bedrock" or call.sdk == "anthropic-bedrock":
        model = path.split("/model/", 1)[-1].rsplit("/", 1)[0]
    elif call.sdk == "genai":
        model = path.rsplit("/models/", 1)[-1].split(":", 1)[0]
    else:
        model = body.get("model")
    operation = "embeddings" if call.api in ("embeddings", "embed") else "chat"
    return Expected(operation=operation, request_model=model, error=True)


# --- What the recorded request says ------------------------------------------------------------------------------------


def expected_request(call: Call) -> tuple[dict[str, Any], list[str] | None]:
    """The sampling parameters (attribute name -> value) and the tool names the recorded request body gives."""
    from agentotel import semconv as sc

    body = call.body if isinstance(call.body, dict) else {}
    names: dict[str, str] = {}
    config = body
    tools: list[str] | None = None
    if call.sdk in ("openai", "azure") and call.api == "chat":
        names = {"temperature": sc.GEN_AI_REQUEST_TEMPERATURE, "top_p": sc.GEN_AI_REQUEST_TOP_P, "seed": sc.GEN_AI_REQUEST_SEED,
                 "frequency_penalty": sc.GEN_AI_REQUEST_FREQUENCY_PENALTY, "presence_penalty": sc.GEN_AI_REQUEST_PRESENCE_PENALTY,
                 "max_tokens": sc.GEN_AI_REQUEST_MAX_TOKENS, "max_completion_tokens": sc.GEN_AI_REQUEST_MAX_TOKENS}  # fmt: skip
        tools = [(t.get("function") or t).get("name") for t in body.get("tools") or ()] + [f.get("name") for f in body.get("functions") or ()]
    elif call.sdk in ("openai", "azure") and call.api == "responses":
        names = {"temperature": sc.GEN_AI_REQUEST_TEMPERATURE, "top_p": sc.GEN_AI_REQUEST_TOP_P, "max_output_tokens": sc.GEN_AI_REQUEST_MAX_TOKENS}
        tools = [t.get("name") for t in body.get("tools") or () if t.get("name")]
    elif call.sdk.startswith("anthropic") or (call.sdk == "bedrock" and call.api.startswith("invoke") and "anthropic_version" in body):
        names = {"temperature": sc.GEN_AI_REQUEST_TEMPERATURE, "top_p": sc.GEN_AI_REQUEST_TOP_P, "top_k": sc.GEN_AI_REQUEST_TOP_K,
                 "max_tokens": sc.GEN_AI_REQUEST_MAX_TOKENS, "stop_sequences": sc.GEN_AI_REQUEST_STOP_SEQUENCES}  # fmt: skip
        tools = [t.get("name") for t in body.get("tools") or ()]
    elif call.sdk == "bedrock" and (call.api.startswith("converse") or "inferenceConfig" in body):
        config = body.get("inferenceConfig") or {}
        names = {"temperature": sc.GEN_AI_REQUEST_TEMPERATURE, "topP": sc.GEN_AI_REQUEST_TOP_P, "maxTokens": sc.GEN_AI_REQUEST_MAX_TOKENS,
                 "stopSequences": sc.GEN_AI_REQUEST_STOP_SEQUENCES}  # fmt: skip
        tools = [(t.get("toolSpec") or {}).get("name") for t in (body.get("toolConfig") or {}).get("tools") or () if "toolSpec" in t]
    elif call.sdk == "genai" and call.api != "embed":
        config = body.get("generationConfig") or {}
        names = {"temperature": sc.GEN_AI_REQUEST_TEMPERATURE, "topP": sc.GEN_AI_REQUEST_TOP_P, "topK": sc.GEN_AI_REQUEST_TOP_K,
                 "maxOutputTokens": sc.GEN_AI_REQUEST_MAX_TOKENS, "stopSequences": sc.GEN_AI_REQUEST_STOP_SEQUENCES,
                 "seed": sc.GEN_AI_REQUEST_SEED, "presencePenalty": sc.GEN_AI_REQUEST_PRESENCE_PENALTY,
                 "frequencyPenalty": sc.GEN_AI_REQUEST_FREQUENCY_PENALTY}  # fmt: skip
        tools = [d.get("name") for t in body.get("tools") or () for d in t.get("functionDeclarations") or t.get("function_declarations") or ()]
    params = {}
    for key, attribute in names.items():
        value = config.get(key)
        if value is not None and not isinstance(value, bool):
            params[attribute] = list(value) if isinstance(value, list) else value
    stop = body.get("stop") if call.sdk in ("openai", "azure") and call.api == "chat" else None
    if stop is not None:
        params[sc.GEN_AI_REQUEST_STOP_SEQUENCES] = [stop] if isinstance(stop, str) else list(stop)
    return params, tools or None


# --- Making the call -----------------------------------------------------------------------------------------------------


def _split(method: Any, body: dict[str, Any]) -> dict[str, Any]:
    """`body` as keyword arguments of `method`: the parameters it names, the rest in `extra_body`."""
    names = set(inspect.signature(method).parameters)
    kwargs = {k: v for k, v in body.items() if k in names}
    extra = {k: v for k, v in body.items() if k not in names}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _openai_client(call: Call) -> Any:
    import openai

    parts = urllib.parse.urlsplit(call.uri)
    query = dict(urllib.parse.parse_qsl(parts.query))
    origin = f"{parts.scheme}://{parts.netloc}"
    if call.sdk == "azure":
        deployment = parts.path.split("/deployments/", 1)[1].split("/", 1)[0]
        cls = openai.AsyncAzureOpenAI if call.asynchronous else openai.AzureOpenAI
        return cls(api_key="test", azure_endpoint=origin, azure_deployment=deployment, api_version=query.get("api-version", "2024-02-01"), max_retries=0)
    suffix = {"chat": "/chat/completions", "responses": "/responses", "embeddings": "/embeddings"}[call.api]
    cls = openai.AsyncOpenAI if call.asynchronous else openai.OpenAI
    return cls(api_key="sk-test", base_url=origin + parts.path[: -len(suffix)], max_retries=0)


async def _drain_async(result: Any) -> Any:
    if hasattr(result, "__aiter__"):
        async for _ in result:
            pass
    return result


def _drain(result: Any) -> Any:
    if hasattr(result, "__iter__") and not isinstance(result, (dict, list, str, bytes)) and hasattr(result, "__next__") or type(result).__name__ in ("Stream",):
        for _ in result:
            pass
    return result


def _openai_call(call: Call) -> None:
    client = _openai_client(call)
    resource = {"chat": lambda c: c.chat.completions, "responses": lambda c: c.responses, "embeddings": lambda c: c.embeddings}[call.api](client)
    body = dict(call.body)
    if call.sdk == "azure":
        body.setdefault("model", urllib.parse.urlsplit(call.uri).path.split("/deployments/", 1)[1].split("/", 1)[0])
    kwargs = _split(resource.create, body)
    if call.asynchronous:
        async def run() -> None:
            result = await resource.create(**kwargs)
            await _drain_async(result)
            await client.close()

        asyncio.run(run())
    else:
        _drain(resource.create(**kwargs))


def _anthropic_call(call: Call) -> None:
    import anthropic

    parts = urllib.parse.urlsplit(call.uri)
    body = dict(call.body)
    if call.sdk == "anthropic-bedrock":
        region = parts.hostname.split(".")[1]
        cls = anthropic.AsyncAnthropicBedrock if call.asynchronous else anthropic.AnthropicBedrock
        client = cls(aws_region=region, aws_access_key="testing", aws_secret_key="testing", max_retries=0)
        body.pop("anthropic_version", None)
        body["model"] = urllib.parse.unquote(parts.path.split("/model/", 1)[1].rsplit("/", 1)[0])
    else:
        cls = anthropic.AsyncAnthropic if call.asynchronous else anthropic.Anthropic
        # A timeout of our own: the SDK refuses a large non-streamed max_tokens under its default one.
        client = cls(api_key="sk-test", base_url=f"{parts.scheme}://{parts.netloc}", max_retries=0, timeout=600.0)
    beta = "beta=true" in parts.query
    messages = client.beta.messages if beta else client.messages
    stream = body.get("stream") is True
    if call.manager and stream:
        body.pop("stream")
        kwargs = _split(messages.stream, body)
        if call.asynchronous:
            async def run_manager() -> None:
                async with messages.stream(**kwargs) as events:
                    await events.get_final_message()

            asyncio.run(run_manager())
        else:
            with messages.stream(**kwargs) as events:
                events.get_final_message()
        return
    kwargs = _split(messages.create, body)
    if call.asynchronous:
        async def run() -> None:
            await _drain_async(await messages.create(**kwargs))

        asyncio.run(run())
    else:
        _drain(messages.create(**kwargs))


def _bytes_fields(value: Any) -> Any:
    """A Converse request as JSON says it (base64 text for image / document bytes) as boto3 takes it (bytes)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "bytes" and isinstance(item, str):
                out[key] = base64.b64decode(item)
            else:
                out[key] = _bytes_fields(item)
        return out
    if isinstance(value, list):
        return [_bytes_fields(v) for v in value]
    return value


def _bedrock_call(call: Call) -> None:
    import boto3
    from botocore.config import Config

    parts = urllib.parse.urlsplit(call.uri)
    region = parts.hostname.split(".")[1]
    client = boto3.client(
        "bedrock-runtime", region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}),
    )  # fmt: skip
    model = urllib.parse.unquote(parts.path.split("/model/", 1)[1].rsplit("/", 1)[0])
    headers = call.headers
    if call.api in ("converse", "converse-stream"):
        params = _bytes_fields(call.body if isinstance(call.body, dict) else {})
        if call.api == "converse":
            client.converse(modelId=model, **params)
        else:
            for _ in client.converse_stream(modelId=model, **params)["stream"]:
                pass
        return
    raw = call.body if isinstance(call.body, str) else json.dumps(call.body)
    params: dict[str, Any] = {"modelId": model, "body": raw}
    for header, name in (("content-type", "contentType"), ("accept", "accept"), ("x-amzn-bedrock-guardrailidentifier", "guardrailIdentifier"),
                         ("x-amzn-bedrock-guardrailversion", "guardrailVersion"), ("x-amzn-bedrock-trace", "trace")):  # fmt: skip
        if isinstance(headers.get(header), str):
            params[name] = headers[header]
    if call.api == "invoke":
        client.invoke_model(**params)["body"].read()
    else:
        params.pop("accept", None)
        for _ in client.invoke_model_with_response_stream(**params)["body"]:
            pass


def _genai_call(call: Call) -> None:
    from google import genai
    from google.genai import types

    parts = urllib.parse.urlsplit(call.uri)
    path = parts.path
    model = path.rsplit("/models/", 1)[-1].split(":", 1)[0]
    if "aiplatform" in (parts.hostname or ""):
        import google.oauth2.credentials

        segments = path.split("/")
        project, location = segments[segments.index("projects") + 1], segments[segments.index("locations") + 1]
        client = genai.Client(vertexai=True, project=project, location=location, credentials=google.oauth2.credentials.Credentials("test"))
    else:
        version = path.strip("/").split("/", 1)[0]
        client = genai.Client(api_key="test", http_options=types.HttpOptions(api_version=version, base_url=f"{parts.scheme}://{parts.netloc}/"))
    body = call.body if isinstance(call.body, dict) else {}
    models = client.aio.models if call.asynchronous else client.models
    if call.api == "embed":
        requests = body.get("requests") or [body]
        contents = [r.get("content") for r in requests]
        config = {k: v for k, v in requests[0].items() if k in ("taskType", "title", "outputDimensionality")}
        kwargs = {"model": model, "contents": contents if len(contents) > 1 else contents[0], "config": types.EmbedContentConfig.model_validate(config) if config else None}
        if call.asynchronous:
            asyncio.run(models.embed_content(**kwargs))
        else:
            models.embed_content(**kwargs)
        return
    config: dict[str, Any] = dict(body.get("generationConfig") or {})
    for key in ("systemInstruction", "tools", "toolConfig", "safetySettings", "cachedContent", "labels"):
        if key in body:
            config[key] = body[key]
    kwargs = {"model": model, "contents": body.get("contents"), "config": types.GenerateContentConfig.model_validate(config) if config else None}
    if call.api == "stream-generate":
        if call.asynchronous:
            async def run_stream() -> None:
                async for _ in await models.generate_content_stream(**kwargs):
                    pass

            asyncio.run(run_stream())
        else:
            for _ in models.generate_content_stream(**kwargs):
                pass
    elif call.asynchronous:
        asyncio.run(models.generate_content(**kwargs))
    else:
        models.generate_content(**kwargs)


MAKE = {"openai": _openai_call, "azure": _openai_call, "anthropic": _anthropic_call, "anthropic-bedrock": _anthropic_call,
        "bedrock": _bedrock_call, "genai": _genai_call}  # fmt: skip


# --- Checking the span -----------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    call: Call
    mismatches: list[str] = field(default_factory=list)  # kinds
    details: list[str] = field(default_factory=list)
    replay_error: str | None = None  # the replay itself failed (no verdict on agentotel)
    spans: list[Any] = field(default_factory=list)  # agentotel's spans of this call
    flipped: bool = False  # made through the other surface (see replay_cassette)


def _span_messages(value: Any) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    return json.loads(value)


def _capturing() -> bool:
    from agentotel import _config

    return _config.current().capture_content


def _provider_of(host: str) -> str | None:
    """gen_ai.provider.name of the service a host belongs to (None: a host this check does not know)."""
    if host.startswith("bedrock-runtime."):
        return "aws.bedrock"
    if host.endswith(".openai.azure.com"):
        return "azure.ai.openai"
    if host.endswith("aiplatform.googleapis.com"):
        return "gcp.vertex_ai"
    return {"generativelanguage.googleapis.com": "gcp.gemini", "api.anthropic.com": "anthropic", "api.openai.com": "openai"}.get(host)


def _same_arguments(expected: Any, actual: Any) -> bool:
    if expected in ("", None, {}) and actual in ("", None, {}):
        return True
    return expected == actual


def check(call: Call, expected: Expected, spans: list[Any], raised: BaseException | None, internal: list[str]) -> Outcome:
    from agentotel import semconv as sc

    model_spans = [s for s in spans if s.instrumentation_scope.name.startswith("agentotel.")]
    outcome = Outcome(call, spans=model_spans)

    def bad(kind: str, detail: str = "") -> None:
        outcome.mismatches.append(kind)
        outcome.details.append(f"{kind}: {detail}"[:400])

    for message in internal:
        bad("internal_error", message)
    if len(model_spans) != 1:
        bad("span_count", f"{len(model_spans)} spans: {[s.name for s in model_spans]}")
        return outcome
    span = model_spans[0]
    attributes = dict(span.attributes or {})
    if attributes.get(sc.GEN_AI_OPERATION_NAME) != expected.operation:
        bad("operation", f"{attributes.get(sc.GEN_AI_OPERATION_NAME)!r} != {expected.operation!r}")
    if expected.request_model and attributes.get(sc.GEN_AI_REQUEST_MODEL) != expected.request_model:
        bad("request_model", f"{attributes.get(sc.GEN_AI_REQUEST_MODEL)!r} != {expected.request_model!r}")
    host = urllib.parse.urlsplit(call.uri).hostname or ""
    if attributes.get(sc.SERVER_ADDRESS) != host:
        bad("server_address", f"{attributes.get(sc.SERVER_ADDRESS)!r} != {host!r}")
    provider = _provider_of(host)
    if provider is not None and attributes.get(sc.GEN_AI_PROVIDER_NAME) != provider:
        bad("provider_name", f"{attributes.get(sc.GEN_AI_PROVIDER_NAME)!r} != {provider!r}")
    params, tools = expected_request(call)
    for name, value in params.items():
        actual = attributes.get(name)
        actual = list(actual) if isinstance(actual, tuple) else actual
        if actual != value:
            bad("request_params", f"{name}: {actual!r} != {value!r}")
    if tools and _capturing():  # definitions follow the content policy (their descriptions are content)
        definitions = json.loads(attributes.get(sc.GEN_AI_TOOL_DEFINITIONS) or "[]")
        named = [d.get("name") for d in definitions if d.get("name")]  # hosted tools (web search, ...) have none
        if named != tools:
            bad("tool_definitions", f"{named} != {tools}")
    if expected.error:
        if span.status.status_code.name != "ERROR":
            bad("error_status", f"status {span.status.status_code.name}")
        if not attributes.get(sc.ERROR_TYPE):
            bad("error_type", "no error.type")
        return outcome
    if raised is not None:
        bad("sdk_raised", repr(raised))
    if span.status.status_code.name == "ERROR":
        bad("error_status", f"error on a {call.status} answer: {attributes.get(sc.ERROR_TYPE)}")
    if attributes.get(sc.AGENTOTEL_STREAM_ABANDONED):
        bad("stream_end", "marked abandoned after reading to the end")
    if expected.response_model and attributes.get(sc.GEN_AI_RESPONSE_MODEL) != expected.response_model:
        bad("response_model", f"{attributes.get(sc.GEN_AI_RESPONSE_MODEL)!r} != {expected.response_model!r}")
    if expected.response_id and attributes.get(sc.GEN_AI_RESPONSE_ID) != expected.response_id:
        bad("response_id", f"{attributes.get(sc.GEN_AI_RESPONSE_ID)!r} != {expected.response_id!r}")
    if list(attributes.get(sc.GEN_AI_RESPONSE_FINISH_REASONS) or []) != expected.finish_reasons:
        bad("finish_reasons", f"{list(attributes.get(sc.GEN_AI_RESPONSE_FINISH_REASONS) or [])} != {expected.finish_reasons}")
    for kind, name, value in (
        ("input_tokens", sc.GEN_AI_USAGE_INPUT_TOKENS, expected.input_tokens),
        ("output_tokens", sc.GEN_AI_USAGE_OUTPUT_TOKENS, expected.output_tokens),
        ("cache_read_tokens", sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, expected.cache_read),
        ("cache_write_tokens", sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, expected.cache_write),
        ("reasoning_tokens", sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, expected.reasoning),
    ):
        actual = attributes.get(name)
        if value is not None and actual != value and not (value == 0 and actual is None):
            bad(kind, f"{actual!r} != {value!r}")
    if not _capturing():  # content off: no message may reach the span, the rest as with content on
        leaked = [n for n in (sc.GEN_AI_INPUT_MESSAGES, sc.GEN_AI_OUTPUT_MESSAGES, sc.GEN_AI_SYSTEM_INSTRUCTIONS) if n in attributes]
        if leaked:
            bad("content_leak", f"{leaked} recorded with content capture off")
        return outcome
    if expected.messages is None:
        return outcome
    recorded = _span_messages(attributes.get(sc.GEN_AI_OUTPUT_MESSAGES)) or []
    if len(recorded) != len(expected.messages) and any(m.text or m.calls or m.thinking for m in expected.messages):
        bad("output_messages", f"{len(recorded)} messages != {len(expected.messages)}")
        return outcome
    for message, want in zip(recorded, expected.messages):
        parts = message.get("parts") or []
        text = "".join(p.get("content") or "" for p in parts if p.get("type") == "text")
        if text != want.text:
            bad("output_text", f"{text[:80]!r} != {want.text[:80]!r}")
        thinking = "".join(p.get("content") or "" for p in parts if p.get("type") == "reasoning")
        if want.thinking and thinking != want.thinking:
            bad("output_thinking", f"{thinking[:80]!r} != {want.thinking[:80]!r}")
        calls = [(p.get("id"), p.get("name"), p.get("arguments")) for p in parts if p.get("type") == "tool_call"]
        if len(calls) != len(want.calls):
            bad("output_tool_calls", f"{calls} != {want.calls}"[:300])
            continue
        for (call_id, name, arguments), (want_id, want_name, want_arguments) in zip(calls, want.calls):
            if (want_id and call_id != want_id) or not call_id:
                bad("tool_call_id", f"{call_id!r} != {want_id!r}")
            if name != want_name:
                bad("tool_call_name", f"{name!r} != {want_name!r}")
            if not _same_arguments(want_arguments, arguments):
                bad("tool_call_arguments", f"{arguments!r} != {want_arguments!r}"[:300])
    return outcome


# --- Running a cassette -------------------------------------------------------------------------------------------------------


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]!r}"
        self.messages.append(text)


def _same_method(recorded: Any, made: Any) -> None:
    assert recorded.method.upper() == made.method.upper()


def replay_cassette(path: Path, exporter: Any, flip: bool = False) -> list[Outcome]:
    """Replay every interaction of one cassette (instrumentation must be on, spans going to `exporter`).

    `flip`: through the other surface of the same SDK: the async client for a sync recording and back
    (not boto3, which has none), anthropic's `messages.stream()` for `create(stream=True)` and back.
    """
    from agentotel import _internal

    interactions = load(path)
    calls = plan(path, interactions)
    if flip:
        for call in calls:
            if call.sdk != "bedrock":
                call.asynchronous = not call.asynchronous
            call.manager = not call.manager
    outcomes = []
    collect = _Collect()
    logger = logging.getLogger("agentotel")
    logger.addHandler(collect)
    level = logger.level
    logger.setLevel(logging.WARNING)
    sdk_logger = logging.getLogger("opentelemetry.sdk.trace")  # "Calling end() on an ended span": a span ended twice
    sdk_logger.addHandler(collect)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "cassette.yaml"
        copy.write_text(yaml.dump({"version": 1, "interactions": interactions}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
        # Played in order, each once; the query is left out (an older SDK sent `?beta=true`, a newer one does not).
        recorder = vcr.VCR(record_mode="none", match_on=["method", "scheme", "host", "port", "path"])
        recorder.register_matcher("method", _same_method)
        try:
            with recorder.use_cassette(str(copy)) as cassette:
                for call in calls:
                    if call.untraced:
                        # Consumed in order by whatever made it; nothing of ours runs: mark it played.
                        _mark_played(cassette, call.index)
                        outcomes.append(Outcome(call))
                        continue
                    exporter.clear()
                    collect.messages.clear()
                    _internal._seen.clear()
                    try:
                        expected = expected_of(call)
                    except Exception as exc:  # noqa: BLE001 - a recording this checker cannot read
                        outcomes.append(Outcome(call, replay_error=f"expectation: {exc!r}"))
                        _mark_played(cassette, call.index)
                        continue
                    raised = None
                    try:
                        MAKE[call.sdk](call)
                    except Exception as exc:  # noqa: BLE001 - 4xx/5xx answers raise; so may a replay we got wrong
                        raised = exc
                    if raised is not None and not expected.error and _replay_problem(raised):
                        outcomes.append(Outcome(call, replay_error=repr(raised)[:300]))
                        _mark_played(cassette, call.index)
                        continue
                    outcomes.append(check(call, expected, list(exporter.get_finished_spans()), raised, list(collect.messages)))
        finally:
            logger.removeHandler(collect)
            logger.setLevel(level)
            sdk_logger.removeHandler(collect)
    return outcomes


def _replay_problem(exc: BaseException) -> bool:
    """Whether an exception says the replay itself went wrong (no matching recording, a call we built wrong)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        if "CannotOverwriteExistingCassetteException" in type(exc).__name__:
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    name = type(exc).__name__
    text = str(exc)
    return (
        "CannotOverwriteExistingCassetteException" in name
        or "Can't overwrite existing cassette" in text
        or isinstance(exc, (TypeError, KeyError, ValueError, AttributeError))
        or name in ("ParamValidationError", "ValidationError")
    )


def _mark_played(cassette: Any, index: int) -> None:
    cassette.play_counts[index] += 1


# --- The table ----------------------------------------------------------------------------------------------------------------


def cassettes_under(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_file():
            found.append(path)
        else:
            found.extend(sorted(p for p in path.rglob("*") if p.name.endswith((".yaml", ".yaml.gz", ".yml"))))
    return found


def run(paths: list[str], flip: bool = False, content: bool = True) -> list[Outcome]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentotel import _config, _tracing
    from agentotel.providers import instrument_providers, uninstrument_providers

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _config.reset()
    if not content:
        _config.configure(_config.Settings.resolve(capture_content=False))
    _tracing.set_providers(provider, None)
    instrument_providers()
    outcomes: list[Outcome] = []
    try:
        for path in cassettes_under(paths):
            try:
                outcomes.extend(replay_cassette(path, exporter))
                if flip:
                    for outcome in replay_cassette(path, exporter, flip=True):
                        outcome.flipped = True
                        outcomes.append(outcome)
            except Exception as exc:  # noqa: BLE001 - a cassette this replayer cannot load
                print(f"{path}: not replayed: {exc!r}", file=sys.stderr)
    finally:
        uninstrument_providers()
        _tracing.set_providers(None, None)
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    rows: dict[str, Counter] = defaultdict(Counter)
    kinds: dict[str, Counter] = defaultdict(Counter)
    for outcome in outcomes:
        sdk = outcome.call.sdk if not outcome.call.untraced else "(not traced)"
        if outcome.flipped:
            if outcome.call.untraced:
                continue
            sdk += " (other surface)"
        row = rows[sdk]
        if outcome.call.untraced:
            row["calls"] += 1
            kinds[sdk][outcome.call.untraced] += 1
            continue
        if outcome.replay_error:
            row["not replayed"] += 1
            continue
        row["replayed"] += 1
        if not outcome.mismatches:
            row["correct"] += 1
        for kind in set(outcome.mismatches):
            kinds[sdk][kind] += 1
    lines = ["| SDK | replayed | fully correct | mismatches (calls) | not replayed |", "|---|---|---|---|---|"]
    for sdk in sorted(rows):
        row = rows[sdk]
        detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds[sdk].items(), key=lambda kv: -kv[1])) or "-"
        if sdk == "(not traced)":
            lines.append(f"| {sdk} | {row['calls']} | - | {detail} | - |")
        else:
            lines.append(f"| {sdk} | {row['replayed']} | {row['correct']} | {detail} | {row['not replayed']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    show = 0
    flip, content = "--flip" in argv, "--no-content" not in argv
    argv = [a for a in argv if a not in ("--flip", "--no-content")]
    if "--show" in argv:
        at = argv.index("--show")
        show = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    outcomes = run(argv, flip, content)
    print(table(outcomes))
    shown = 0
    for outcome in outcomes:
        if shown >= show:
            break
        if outcome.mismatches or outcome.replay_error:
            shown += 1
            print(f"\n{outcome.call.cassette} #{outcome.call.index} ({outcome.call.sdk} {outcome.call.api})")
            print("   ", outcome.replay_error or "\n    ".join(outcome.details))


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    main(sys.argv[1:])
