"""How to read the anthropic SDK: messages.create / .parse / .stream, sync and async, beta included.

The SDK emits its own CLIENT span per call (scope `com.anthropic.sdk.python`, name
`anthropic.messages.create`). Ours wraps the SDK method, so theirs is always our child: ours is the
model-call span (messages, tokens, cost); queries skip theirs when its parent is one of ours (see
the providers package docstring).
"""

from __future__ import annotations

from typing import Any

from agentotel._context import PendingToolCall
from agentotel.providers._core import (
    Patch,
    Request,
    Response,
    Usage,
    capturing,
    field_of,
    given,
    media_part,
    put,
    reasoning_part,
    server_attributes,
    text_part,
    tool_call_part,
    tool_choice,
    tool_response_part,
)
from agentotel.providers._stream import Bounded, limits
from agentotel.semconv import (
    AGENTOTEL_REQUEST_TOOL_CHOICE,
    GEN_AI_OUTPUT_TYPE,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_part(content)]
    parts = []
    for block in content:
        kind = field_of(block, "type")
        if kind == "text":
            parts.append(text_part(field_of(block, "text", "")))
        elif kind in ("tool_use", "server_tool_use"):
            parts.append(tool_call_part(field_of(block, "id"), field_of(block, "name"), field_of(block, "input")))
        elif kind == "tool_result":
            result = field_of(block, "content")
            if isinstance(result, list):
                texts = [field_of(b, "text") for b in result if field_of(b, "type") == "text"]
                result = "".join(texts) if len(texts) == len(result) else result
            parts.append(tool_response_part(field_of(block, "tool_use_id"), result))
        elif kind == "thinking":
            parts.append(reasoning_part(field_of(block, "thinking", "")))
        elif kind in ("image", "document"):
            source = field_of(block, "source")
            modality = "image" if kind == "image" else "file"
            if field_of(source, "type") == "url":
                parts.append(media_part(modality, uri=field_of(source, "url")))
            else:
                parts.append(media_part(modality, mime_type=field_of(source, "media_type"), data=field_of(source, "data")))
        elif kind == "redacted_thinking":
            continue  # encrypted: nothing readable to record
        else:
            parts.append({"type": kind or "unknown", "content": block})
    return parts


def _messages(messages: Any) -> list[dict[str, Any]]:
    out = []
    for message in messages or ():
        parts = _blocks(field_of(message, "content"))
        role = field_of(message, "role", "user")
        if parts and all(p["type"] == "tool_call_response" for p in parts):
            role = "tool"
        out.append({"role": role, "parts": parts})
    return out


def _tool_definitions(tools: Any) -> list[dict[str, Any]] | None:
    if not given(tools):
        return None
    definitions = []
    for tool in tools:
        definition = {"type": "function" if field_of(tool, "input_schema") is not None else field_of(tool, "type", "function")}
        definition["name"] = field_of(tool, "name")
        if field_of(tool, "description"):
            definition["description"] = field_of(tool, "description")
        if field_of(tool, "input_schema") is not None:
            definition["parameters"] = field_of(tool, "input_schema")
        definitions.append(definition)
    return definitions or None


# The anthropic SDK's clients for Claude served by a cloud: the span names that cloud as the provider.
_CLOUD_CLIENTS = {"AnthropicBedrock": "aws.bedrock", "AnthropicVertex": "gcp.vertex_ai"}
_providers: dict[type, str] = {}


def _provider(client: Any) -> str:
    cls = type(client)
    provider = _providers.get(cls)
    if provider is None:
        names = [c.__name__.removeprefix("Async") for c in cls.__mro__]
        provider = next((_CLOUD_CLIENTS[n] for n in names if n in _CLOUD_CLIENTS), "anthropic")
        if len(_providers) < 64:
            _providers[cls] = provider
    return provider


def _request(instance: Any, kwargs: dict[str, Any]) -> Request:
    extra = kwargs.get("extra_body")
    if isinstance(extra, dict):  # newer SDKs take sampling parameters only through extra_body
        kwargs = {**extra, **kwargs}
    client = getattr(instance, "_client", None)
    attributes = server_attributes(getattr(client, "base_url", None))
    put(attributes, GEN_AI_REQUEST_MAX_TOKENS, kwargs.get("max_tokens"), int)
    put(attributes, GEN_AI_REQUEST_TEMPERATURE, kwargs.get("temperature"), (int, float))
    put(attributes, GEN_AI_REQUEST_TOP_P, kwargs.get("top_p"), (int, float))
    put(attributes, GEN_AI_REQUEST_TOP_K, kwargs.get("top_k"), (int, float))
    put(attributes, GEN_AI_REQUEST_STOP_SEQUENCES, kwargs.get("stop_sequences"), (list, tuple))
    put(attributes, AGENTOTEL_REQUEST_TOOL_CHOICE, tool_choice(kwargs.get("tool_choice")))
    if given(kwargs.get("output_format")) or isinstance(field_of(kwargs.get("output_config"), "format"), dict):
        attributes[GEN_AI_OUTPUT_TYPE] = "json"
    stream = kwargs.get("stream") is True
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    system = kwargs.get("system")
    model = kwargs.get("model")
    capture = capturing()
    return Request(
        operation="chat",
        provider=_provider(client),
        model=model if isinstance(model, str) else None,
        attributes=attributes,
        stream=stream,
        input_messages=_messages(kwargs.get("messages")) if capture else None,
        system_instructions=_blocks(system) if capture and given(system) else None,
        tool_definitions=_tool_definitions(kwargs.get("tools")),
    )


def _stream_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    request = _request(instance, kwargs)
    request.stream = True
    request.attributes[GEN_AI_REQUEST_STREAM] = True
    return request


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    cache_read = field_of(usage, "cache_read_input_tokens")
    cache_write = field_of(usage, "cache_creation_input_tokens")
    uncached = field_of(usage, "input_tokens")
    # Anthropic's input_tokens leaves the cache out; the GenAI convention counts every input token.
    total_input = None if uncached is None else uncached + (cache_read or 0) + (cache_write or 0)
    return Usage(
        input_tokens=total_input,
        output_tokens=field_of(usage, "output_tokens"),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=field_of(field_of(usage, "output_tokens_details"), "thinking_tokens"),
    )


def _tool_calls(blocks: Any) -> list[PendingToolCall]:
    """The client-side tool calls (`tool_use`; server tools run at Anthropic and no `@tool` claims them)."""
    calls = []
    for block in blocks or ():
        if field_of(block, "type") == "tool_use" and field_of(block, "id") and field_of(block, "name"):
            calls.append(PendingToolCall(field_of(block, "id"), field_of(block, "name"), field_of(block, "input")))
    return calls


def _response(message: Any) -> Response:
    parts = _blocks(field_of(message, "content"))
    stop = field_of(message, "stop_reason")
    return Response(
        id=field_of(message, "id"),
        model=field_of(message, "model"),
        finish_reasons=[stop] if stop else [],
        usage=_usage(field_of(message, "usage")),
        output_messages=[{"role": "assistant", "parts": parts, "finish_reason": stop}],
        tool_calls=_tool_calls(field_of(message, "content")),
    )


# A content block delta's type -> the field holding its text (signature and citation deltas add none).
_DELTA_TEXT = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking"}


def _delta_text(delta: Any) -> Any:
    return field_of(delta, "text") or field_of(delta, "partial_json") or field_of(delta, "thinking")


class _Stream:
    """Raw message stream events: content blocks assembled from their deltas."""

    def __init__(self, request: Request) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.stop: str | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.text_limit, self.args_limit = limits()

    def _merge_usage(self, usage: Any) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = field_of(usage, name)
            if value is not None:
                self.usage[name] = value

    def chunk(self, event: Any) -> None:
        if type(event) is not dict and getattr(event, "type", None) == "content_block_delta":
            # Nearly every event, as the SDK's typed object: read with plain attribute access (each
            # `field_of` is a call), and only the delta's own field (asking a pydantic model for a
            # field it lacks raises inside, which is slow).
            state = self.blocks.get(event.index)
            if state is not None:
                delta = event.delta
                name = _DELTA_TEXT.get(getattr(delta, "type", None))
                text = getattr(delta, name, None) if name is not None else _delta_text(delta)
                state["buffer"].add(text)
            return
        kind = field_of(event, "type")
        if kind == "message_start":
            message = field_of(event, "message")
            self.id, self.model = field_of(message, "id"), field_of(message, "model")
            self._merge_usage(field_of(message, "usage"))
        elif kind == "content_block_start":
            block = field_of(event, "content_block")
            block_type = field_of(block, "type")
            limit = self.args_limit if block_type in ("tool_use", "server_tool_use") else self.text_limit
            state = {"type": block_type, "id": field_of(block, "id"), "name": field_of(block, "name"), "buffer": Bounded(limit), "block": block}
            state["buffer"].add(field_of(block, "text") or field_of(block, "thinking"))
            self.blocks[field_of(event, "index", len(self.blocks))] = state
        elif kind == "content_block_delta":
            state = self.blocks.get(field_of(event, "index", 0))
            if state is not None:
                state["buffer"].add(_delta_text(field_of(event, "delta")))
        elif kind == "message_delta":
            self.stop = field_of(field_of(event, "delta"), "stop_reason") or self.stop
            self._merge_usage(field_of(event, "usage"))

    def response(self) -> Response:
        parts, calls = [], []
        for _, block in sorted(self.blocks.items()):
            text = block["buffer"].text()
            if block["type"] in ("tool_use", "server_tool_use"):
                # A call made from code execution comes whole in its start event, with no deltas.
                part = tool_call_part(block["id"], block["name"], text or field_of(block["block"], "input") or {})
                parts.append(part)
                if block["type"] == "tool_use" and block["id"] and block["name"]:
                    calls.append(PendingToolCall(block["id"], block["name"], part["arguments"]))
            elif block["type"] == "thinking":
                parts.append(reasoning_part(text))
            elif block["type"] == "text":
                if text:
                    parts.append(text_part(text))
            elif block["type"] != "redacted_thinking":  # a server tool's result and the like: whole in its start event
                parts.extend(_blocks([block["block"]]))
        return Response(
            id=self.id,
            model=self.model,
            finish_reasons=[self.stop] if self.stop else [],
            usage=_usage(self.usage) if self.usage else None,
            output_messages=[{"role": "assistant", "parts": parts, "finish_reason": self.stop}],
            tool_calls=calls,
        )


_MESSAGES = "anthropic.resources.messages.messages"
_BETA = "anthropic.resources.beta.messages.messages"

PATCHES = [
    *(
        Patch(module, f"{cls}.{method}", _request, _response, _Stream)
        for module in (_MESSAGES, _BETA)
        for cls in ("Messages", "AsyncMessages")
        for method in ("create", "parse")
    ),
    *(
        Patch(module, f"{cls}.stream", _stream_request, _response, _Stream, kind="stream_manager")
        for module in (_MESSAGES, _BETA)
        for cls in ("Messages", "AsyncMessages")
    ),
]
