"""Bedrock's Converse API (Converse, ConverseStream), and Nova's InvokeModel body, which has its shape.

Read by `bedrock.py`, which patches botocore: the request's messages, system blocks, tool
configuration and inference parameters; the response's blocks, stop reason and usage; the stream's
events assembled into the same blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import monotonic
from typing import Any, Callable, Iterator

from agentotel._context import PendingToolCall
from agentotel._internal import report_internal_error
from agentotel.providers._core import (
    ModelCall,
    Request,
    Response,
    Usage,
    capturing,
    field_of,
    media_part,
    put,
    reasoning_part,
    text_part,
    tool_call_part,
    tool_response_part,
)
from agentotel.providers._stream import Bounded, limits
from agentotel.semconv import (
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
)

PROVIDER = "aws.bedrock"
_EMPTY: dict[str, Any] = {}


@dataclass(slots=True)
class BedrockRequest(Request):
    """A Bedrock request: which operation, and (for InvokeModel) which body family."""

    operation_name: str = ""
    family: str = "converse"


def converse_parts(content: Any) -> list[dict[str, Any]]:
    """Converse content blocks as GenAI parts (Strands Agents writes its messages in them too: store/dialects.py)."""
    parts: list[dict[str, Any]] = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(text_part(block))
        elif "text" in block:
            parts.append(text_part(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            parts.append(tool_call_part(use.get("toolUseId"), use.get("name"), use.get("input")))
        elif "toolResult" in block:
            result = block["toolResult"]
            items = result.get("content") or []
            texts = [i["text"] for i in items if "text" in i]
            value: Any = "".join(texts) if len(texts) == len(items) else [i.get("json", i) for i in items]
            parts.append(tool_response_part(result.get("toolUseId"), value))
        elif "reasoningContent" in block:
            parts.append(reasoning_part(field_of(block["reasoningContent"].get("reasoningText"), "text", "")))
        elif "image" in block or "document" in block or "video" in block:
            kind = "image" if "image" in block else "video" if "video" in block else "document"
            media, source = block[kind], block[kind].get("source") or {}
            mime = f"{'application' if kind == 'document' else kind}/{media.get('format')}" if media.get("format") else None
            modality = "file" if kind == "document" else kind
            if "s3Location" in source:
                parts.append(media_part(modality, mime_type=mime, uri=source["s3Location"].get("uri")))
            else:
                parts.append(media_part(modality, mime_type=mime, data=source.get("bytes")))
        elif "cachePoint" in block:
            continue
        else:
            parts.append({"type": next(iter(block), "unknown"), "content": block})
    return parts


def _messages(messages: Any) -> list[dict[str, Any]]:
    out = []
    for message in messages or ():
        parts = converse_parts(message.get("content"))
        role = message.get("role", "user")
        if parts and all(p["type"] == "tool_call_response" for p in parts):
            role = "tool"
        out.append({"role": role, "parts": parts})
    return out


def _tool_definitions(tool_config: Any) -> list[dict[str, Any]] | None:
    definitions = []
    for tool in field_of(tool_config, "tools") or ():
        spec = tool.get("toolSpec")
        if spec is None:
            continue
        definition = {"type": "function", "name": spec.get("name")}
        if spec.get("description"):
            definition["description"] = spec["description"]
        schema = spec.get("inputSchema") or {}
        if "json" in schema:
            definition["parameters"] = schema["json"]
        definitions.append(definition)
    return definitions or None


def converse_usage(usage: Any) -> Usage | None:
    if not usage:
        return None
    # Bedrock's inputTokens leaves the cache out (totalTokens adds them); the GenAI convention counts them.
    read = usage.get("cacheReadInputTokens", usage.get("cacheReadInputTokenCount"))
    write = usage.get("cacheWriteInputTokens", usage.get("cacheWriteInputTokenCount"))
    uncached = usage.get("inputTokens")
    # Positional (input, output, cache read, cache write): a class called with keywords gets them as a
    # dict first, which costs more than the rest of its constructor (made on every call).
    return Usage(None if uncached is None else uncached + (read or 0) + (write or 0), usage.get("outputTokens"), read, write)


def pending_calls(parts: list[dict[str, Any]]) -> list[PendingToolCall]:
    return [PendingToolCall(p["id"], p["name"], p["arguments"]) for p in parts if p["type"] == "tool_call" and p["id"] and p["name"]]


def converse_response(body: Any) -> Response:
    if type(body) is dict:  # botocore's parsed response (every call): plain look-ups, no field_of
        output = body.get("output")
        message = output.get("message") if type(output) is dict else field_of(output, "message")
        parts = converse_parts(message.get("content") if type(message) is dict else field_of(message, "content"))
        stop, usage = body.get("stopReason"), body.get("usage")
    else:
        parts = converse_parts(field_of(field_of(field_of(body, "output"), "message"), "content"))
        stop, usage = field_of(body, "stopReason"), field_of(body, "usage")
    # (id, model, finish reasons, usage, output messages, tool calls: positional, as in `converse_usage`)
    return Response(
        None,
        None,
        [stop] if stop else [],
        converse_usage(usage),
        [{"role": "assistant", "parts": parts, "finish_reason": stop}],
        pending_calls(parts),
    )


class ConverseStream:
    """ConverseStream events (and Nova's InvokeModel stream chunks, the same events): blocks from their deltas."""

    def __init__(self, request: Request | None = None) -> None:
        self.blocks: dict[int, list[Any]] = {}  # index -> [kind, id, name, Bounded]
        self.stop: str | None = None
        self.usage: Any = None
        self.text_limit, self.args_limit = limits()

    def _block(self, index: int, kind: str, call_id: Any = None, name: Any = None) -> list[Any]:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = [kind, call_id, name, Bounded(self.args_limit if kind == "tool" else self.text_limit)]
        return block

    def iterate(self, stream: Any, call: ModelCall, end: Callable[..., None]) -> Iterator[Any]:
        """The events of `stream`, each read on its way to the caller (the Accumulator's `iterate`).

        A text delta, nearly every event, is added inline (its block remembered from the previous
        one); any other event goes through `chunk`.
        """
        blocks, chunk = self.blocks, self.chunk
        index = buffer = None
        waiting = call.first_chunk is None
        try:
            for event in stream:
                if waiting:
                    call.first_chunk = monotonic()
                    waiting = False
                try:
                    delta = event.get("contentBlockDelta")
                    text = None if delta is None else (delta.get("delta") or _EMPTY).get("text")
                    if text is None:
                        chunk(event)
                    else:
                        at = delta.get("contentBlockIndex", 0)
                        if at != index or buffer is None:
                            block = blocks.get(at)
                            buffer = (block if block is not None else self._block(at, "text"))[3]
                            index = at
                        if text and buffer.size < buffer.limit:  # Bounded.add, inline
                            buffer.parts.append(text)
                            buffer.size += len(text)
                except Exception as exc:  # noqa: BLE001 - telemetry must never break the user's loop
                    report_internal_error("providers.stream_chunk", exc)
                yield event
        except GeneratorExit:  # the loop left early: not the end of the stream (see _stream)
            call.stopped_reading(end)
            raise
        except BaseException as exc:
            end(exc)
            raise
        end()

    def chunk(self, event: Any) -> None:
        delta = event.get("contentBlockDelta")
        if delta is not None:
            change, index = delta.get("delta") or {}, delta.get("contentBlockIndex", 0)
            text = change.get("text")
            if text is not None:  # the usual event: its block looked up and its text added inline
                block = self.blocks.get(index)
                buffer = (block if block is not None else self._block(index, "text"))[3]
                if text and buffer.size < buffer.limit:
                    buffer.parts.append(text)
                    buffer.size += len(text)
            elif "toolUse" in change:
                self._block(index, "tool")[3].add(change["toolUse"].get("input"))
            elif "reasoningContent" in change:
                self._block(index, "reasoning")[3].add(change["reasoningContent"].get("text"))
            return
        start = event.get("contentBlockStart")
        if start is not None:
            use = (start.get("start") or {}).get("toolUse")
            if use is not None:
                self._block(start.get("contentBlockIndex", 0), "tool", use.get("toolUseId"), use.get("name"))
        elif "messageStop" in event:
            self.stop = event["messageStop"].get("stopReason")
        elif "metadata" in event:
            self.usage = event["metadata"].get("usage")

    def response(self) -> Response:
        parts = []
        for _, (kind, call_id, name, buffer) in sorted(self.blocks.items()):
            text = buffer.text()
            if kind == "tool":
                parts.append(tool_call_part(call_id, name, text or {}))
            elif kind == "reasoning":
                parts.append(reasoning_part(text))
            elif text and parts and parts[-1]["type"] == "text":
                parts[-1]["content"] += text  # Nova's stream opens a new block for every text delta
            elif text:
                parts.append(text_part(text))
        return Response(  # (positional, as in `converse_response`)
            None,
            None,
            [self.stop] if self.stop else [],
            converse_usage(self.usage),
            [{"role": "assistant", "parts": parts, "finish_reason": self.stop}],
            pending_calls(parts),
        )


# inferenceConfig field -> (attribute, accepted types), for Converse and for Nova's InvokeModel body.
_CONVERSE_PARAMETERS = (
    ("maxTokens", GEN_AI_REQUEST_MAX_TOKENS, int),
    ("temperature", GEN_AI_REQUEST_TEMPERATURE, (int, float)),
    ("topP", GEN_AI_REQUEST_TOP_P, (int, float)),
    ("topK", GEN_AI_REQUEST_TOP_K, int),
    ("stopSequences", GEN_AI_REQUEST_STOP_SEQUENCES, (list, tuple)),
)
# Nova's own spelling (max_new_tokens, top_p, top_k) and the Converse one, which Nova's InvokeModel accepts too.
_NOVA_PARAMETERS = (
    ("max_new_tokens", GEN_AI_REQUEST_MAX_TOKENS, int),
    ("top_p", GEN_AI_REQUEST_TOP_P, (int, float)),
    ("top_k", GEN_AI_REQUEST_TOP_K, int),
    *_CONVERSE_PARAMETERS,
)


def converse_request(params: dict[str, Any], attributes: dict[str, Any], request: BedrockRequest, nova: bool = False) -> None:
    config = params.get("inferenceConfig")
    if config:  # one loop, no call per parameter: this runs on every model call
        for name, attribute, kind in _NOVA_PARAMETERS if nova else _CONVERSE_PARAMETERS:
            value = config.get(name)
            if value is not None and isinstance(value, kind) and type(value) is not bool:
                attributes.setdefault(attribute, value)  # Nova: its own spelling first
    extra = params.get("additionalModelRequestFields")
    if extra and GEN_AI_REQUEST_TOP_K not in attributes:
        put(attributes, GEN_AI_REQUEST_TOP_K, field_of(extra, "top_k"), int)
    if capturing():
        request.input_messages = _messages(params.get("messages"))
        request.system_instructions = converse_parts(params.get("system")) or None
    tool_config = params.get("toolConfig")
    if tool_config:
        request.tool_definitions = _tool_definitions(tool_config)
