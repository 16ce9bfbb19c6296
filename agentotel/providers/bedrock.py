"""How to read AWS Bedrock Runtime through botocore: Converse, ConverseStream, InvokeModel (with and without stream).

botocore builds its client methods at run time, so the patch sits on the one method they all call,
`BaseClient._make_api_call(operation_name, api_params)`: a call to another service or operation
passes straight through (one dictionary look-up by client class). boto3 and aiobotocore-free code
alike go through it.

InvokeModel bodies are read per model family, from the model id (an inference-profile prefix such as
`us.` and an ARN's path are looked through) or, for an id that names none, from the body's shape:
Anthropic Messages (read as the anthropic adapter reads them), Amazon Nova (the Converse shape),
Amazon Titan, Meta Llama, Mistral (prompt and chat forms), Cohere Command and Command R, and the old
Claude text completions. The response body is read once and handed back as a fresh stream with the
same bytes. Token counts missing from a body come from Bedrock's own counts (response headers, or
the stream's `amazon-bedrock-invocationMetrics`).

Tool calls (`toolUse`, Anthropic `tool_use`, Command R `tool_calls`) become pending tool calls of the
run, so a later `@agentotel.tool` links to them.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

from agentotel._context import PendingToolCall
from agentotel._internal import report_internal_error
from agentotel.providers import anthropic as anthropic_adapter
from agentotel.providers._core import (
    ModelCall,
    Patch,
    Request,
    Response,
    Usage,
    capturing,
    field_of,
    media_part,
    put,
    reasoning_part,
    server_attributes,
    text_part,
    tool_call_part,
    tool_response_part,
)
from agentotel.providers._stream import Bounded, StreamProxy, limits
from agentotel.semconv import (
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
)

_OPERATIONS = {"Converse": False, "ConverseStream": True, "InvokeModel": False, "InvokeModelWithResponseStream": True}
_PROVIDER = "aws.bedrock"


@dataclass
class _Request(Request):
    """A Bedrock request: which operation, and (for InvokeModel) which body family."""

    operation_name: str = ""
    family: str = "converse"


# --- Converse (and Nova, whose InvokeModel body is the same shape) ---------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
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
        parts = _blocks(message.get("content"))
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


def _converse_usage(usage: Any) -> Usage | None:
    if not usage:
        return None
    # Bedrock's inputTokens leaves the cache out (totalTokens adds them); the GenAI convention counts them.
    read = usage.get("cacheReadInputTokens", usage.get("cacheReadInputTokenCount"))
    write = usage.get("cacheWriteInputTokens", usage.get("cacheWriteInputTokenCount"))
    uncached = usage.get("inputTokens")
    return Usage(
        input_tokens=None if uncached is None else uncached + (read or 0) + (write or 0),
        output_tokens=usage.get("outputTokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _pending(parts: list[dict[str, Any]]) -> list[PendingToolCall]:
    return [PendingToolCall(p["id"], p["name"], p["arguments"]) for p in parts if p["type"] == "tool_call" and p["id"] and p["name"]]


def _converse_response(body: Any) -> Response:
    parts = _blocks(field_of(field_of(field_of(body, "output"), "message"), "content"))
    stop = field_of(body, "stopReason")
    return Response(
        finish_reasons=[stop] if stop else [],
        usage=_converse_usage(field_of(body, "usage")),
        output_messages=[{"role": "assistant", "parts": parts, "finish_reason": stop}],
        tool_calls=_pending(parts),
    )


class _ConverseStream:
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
        return Response(
            finish_reasons=[self.stop] if self.stop else [],
            usage=_converse_usage(self.usage),
            output_messages=[{"role": "assistant", "parts": parts, "finish_reason": self.stop}],
            tool_calls=_pending(parts),
        )


# inferenceConfig field -> (attribute, accepted types), for Converse and for Nova's InvokeModel body.
_CONVERSE_PARAMETERS = (
    ("maxTokens", GEN_AI_REQUEST_MAX_TOKENS, int),
    ("temperature", GEN_AI_REQUEST_TEMPERATURE, (int, float)),
    ("topP", GEN_AI_REQUEST_TOP_P, (int, float)),
    ("topK", GEN_AI_REQUEST_TOP_K, int),
    ("stopSequences", GEN_AI_REQUEST_STOP_SEQUENCES, (list, tuple)),
)
_NOVA_PARAMETERS = (("max_new_tokens", GEN_AI_REQUEST_MAX_TOKENS, int), *_CONVERSE_PARAMETERS[1:])


def _converse_request(params: dict[str, Any], attributes: dict[str, Any], request: _Request, nova: bool = False) -> None:
    config = params.get("inferenceConfig")
    if config:  # one loop, no call per parameter: this runs on every model call
        for name, attribute, kind in _NOVA_PARAMETERS if nova else _CONVERSE_PARAMETERS:
            value = config.get(name)
            if value is not None and isinstance(value, kind) and type(value) is not bool:
                attributes[attribute] = value
    if GEN_AI_REQUEST_TOP_K not in attributes:
        put(attributes, GEN_AI_REQUEST_TOP_K, (params.get("additionalModelRequestFields") or {}).get("top_k"), int)
    if capturing():
        request.input_messages = _messages(params.get("messages"))
        request.system_instructions = _blocks(params.get("system")) or None
    request.tool_definitions = _tool_definitions(params.get("toolConfig"))


# --- InvokeModel bodies of the other families --------------------------------------------------------------

# family -> the body's (max tokens, temperature, top_p, top_k, stop sequences) parameter names
_PARAMETERS = {
    "anthropic": ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences"),
    "claude_text": ("max_tokens_to_sample", "temperature", "top_p", "top_k", "stop_sequences"),
    "titan": ("maxTokenCount", "temperature", "topP", None, "stopSequences"),
    "llama": ("max_gen_len", "temperature", "top_p", None, None),
    "mistral": ("max_tokens", "temperature", "top_p", "top_k", "stop"),
    "cohere": ("max_tokens", "temperature", "p", "k", "stop_sequences"),
    "cohere_chat": ("max_tokens", "temperature", "p", "k", "stop_sequences"),
}


def _family(model: str, body: Any) -> str:
    name = model.rpartition("/")[2].lower()
    prefix, dot, rest = name.partition(".")
    if dot and prefix in ("us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"):  # a cross-region inference profile
        name = rest
    body = body if isinstance(body, dict) else {}
    if name.startswith("anthropic.") or "anthropic_version" in body:
        return "claude_text" if "prompt" in body else "anthropic"
    if name.startswith("amazon.nova") or "schemaVersion" in body or ("messages" in body and "inferenceConfig" in body):
        return "nova"
    if name.startswith("amazon.titan") or "inputText" in body:
        return "titan"
    if name.startswith("meta.") or "max_gen_len" in body:
        return "llama"
    if name.startswith("cohere.command-r") or ("message" in body and "chat_history" in body):
        return "cohere_chat"
    if name.startswith("cohere.") or "k" in body or "p" in body:
        return "cohere"
    if name.startswith("mistral.") or "messages" in body or "prompt" in body:
        return "mistral"
    return "unknown"


def _body_request(body: dict[str, Any], family: str, attributes: dict[str, Any], request: _Request) -> None:
    if family == "nova":
        _converse_request(body, attributes, request, nova=True)
        return
    names = _PARAMETERS.get(family)
    if names is not None:
        config = body.get("textGenerationConfig") or {} if family == "titan" else body
        for attribute, name, kind in zip(
            (GEN_AI_REQUEST_MAX_TOKENS, GEN_AI_REQUEST_TEMPERATURE, GEN_AI_REQUEST_TOP_P, GEN_AI_REQUEST_TOP_K, GEN_AI_REQUEST_STOP_SEQUENCES),
            names,
            (int, (int, float), (int, float), int, (list, tuple)),
        ):
            if name is not None:
                put(attributes, attribute, config.get(name), kind)
    if family == "anthropic":
        if capturing():
            request.input_messages = anthropic_adapter._messages(body.get("messages"))
            request.system_instructions = anthropic_adapter._blocks(body["system"]) if body.get("system") else None
        request.tool_definitions = anthropic_adapter._tool_definitions(body.get("tools"))
        return
    if family == "cohere_chat":
        if capturing():
            history = [
                {"role": "assistant" if m.get("role") == "CHATBOT" else "user", "parts": [text_part(m.get("message", ""))]}
                for m in body.get("chat_history") or ()
            ]
            request.input_messages = [*history, {"role": "user", "parts": [text_part(body.get("message", ""))]}]
            request.system_instructions = [text_part(body["preamble"])] if body.get("preamble") else None
        definitions = [
            {"type": "function", "name": t.get("name"), "description": t.get("description"), "parameters": t.get("parameter_definitions")}
            for t in body.get("tools") or ()
        ]
        request.tool_definitions = definitions or None
        return
    if not capturing():
        return
    if "messages" in body:  # Mistral's chat form: OpenAI-like messages
        request.input_messages = [
            {"role": m.get("role", "user"), "parts": [text_part(m["content"])] if isinstance(m.get("content"), str) else []}
            for m in body["messages"]
        ]
    else:
        prompt = body.get("inputText", body.get("prompt"))
        if isinstance(prompt, str):
            request.input_messages = [{"role": "user", "parts": [text_part(prompt)]}]


def _text_of(body: dict[str, Any], family: str) -> tuple[str | None, str | None, int | None, int | None]:
    """A text family's body (or stream chunk): its text, finish reason, input and output tokens."""
    if family == "titan":
        result = (body.get("results") or [body])[0]
        output = result.get("tokenCount", body.get("totalOutputTextTokenCount"))
        return result.get("outputText"), result.get("completionReason"), body.get("inputTextTokenCount"), output
    if family == "llama":
        return body.get("generation"), body.get("stop_reason"), body.get("prompt_token_count"), body.get("generation_token_count")
    if family == "cohere":
        generation = (body.get("generations") or [body])[0]
        return generation.get("text"), generation.get("finish_reason"), None, None
    if family == "claude_text":
        return body.get("completion"), body.get("stop_reason"), None, None
    if family == "cohere_chat":
        billed = field_of(field_of(body.get("response", body), "meta"), "billed_units") or {}
        text = body.get("text") if body.get("event_type") in (None, "text-generation") else None
        return text, body.get("finish_reason"), billed.get("input_tokens"), billed.get("output_tokens")
    # mistral (prompt form: outputs; chat form: choices)
    if "choices" in body:
        choice = body["choices"][0] if body["choices"] else {}
        message = choice.get("message") or choice.get("delta") or {}
        return message.get("content"), choice.get("stop_reason") or choice.get("finish_reason"), None, None
    output = (body.get("outputs") or [{}])[0]
    return output.get("text"), output.get("stop_reason"), None, None


def _cohere_calls(body: dict[str, Any], response_id: Any) -> list[dict[str, Any]]:
    calls = field_of(body.get("response", body), "tool_calls") or ()
    return [tool_call_part(f"{response_id or 'call'}-{i}", c.get("name"), c.get("parameters")) for i, c in enumerate(calls)]


def _body_response(body: Any, family: str, counts: tuple[int | None, int | None]) -> Response:
    if family == "anthropic":
        return anthropic_adapter._response(body)
    if family == "nova":
        response = _converse_response(body)
    else:
        text, finish, input_tokens, output_tokens = _text_of(body, family)
        parts = [text_part(text)] if text else []
        response_id = body.get("response_id") or body.get("id")
        if family == "cohere_chat":
            parts.extend(_cohere_calls(body, response_id))
        finish = finish or None
        response = Response(
            id=response_id,
            finish_reasons=[finish] if finish else [],
            usage=Usage(input_tokens, output_tokens) if input_tokens is not None or output_tokens is not None else None,
            output_messages=[{"role": "assistant", "parts": parts, "finish_reason": finish}],
            tool_calls=_pending(parts),
        )
    if response.usage is None and counts != (None, None):
        response.usage = Usage(*counts)  # Bedrock's own counts
    return response


class _InvokeStream:
    """InvokeModelWithResponseStream events: each `{"chunk": {"bytes": json}}` read by the body's family."""

    def __init__(self, request: Request) -> None:
        self.family = request.family  # type: ignore[attr-defined]
        self.inner: Any = None
        if self.family == "anthropic":
            self.inner = anthropic_adapter._Stream(request)
        elif self.family == "nova":
            self.inner = _ConverseStream(request)
        self.text = Bounded(limits()[0])
        self.finish: str | None = None
        self.tokens: list[int | None] = [None, None]
        self.metrics: dict[str, Any] | None = None
        self.last: dict[str, Any] = {}

    def chunk(self, event: Any) -> None:
        data = (event.get("chunk") or {}).get("bytes")
        if not data:
            return
        body = json.loads(data)
        metrics = body.get("amazon-bedrock-invocationMetrics")
        if metrics is not None:
            self.metrics = metrics
        if self.inner is not None:
            self.inner.chunk(body)
            return
        text, finish, input_tokens, output_tokens = _text_of(body, self.family)
        self.text.add(text)
        self.finish = finish or self.finish
        if input_tokens is not None:
            self.tokens[0] = input_tokens
        if output_tokens is not None:
            self.tokens[1] = output_tokens
        self.last = body

    def response(self) -> Response:
        if self.inner is not None:
            response = self.inner.response()
        else:
            parts = [text_part(self.text.text())] if self.text else []
            if self.family == "cohere_chat":
                parts.extend(_cohere_calls(self.last, (self.last.get("response") or {}).get("response_id")))
            response = Response(
                finish_reasons=[self.finish] if self.finish else [],
                usage=Usage(*self.tokens) if self.tokens != [None, None] else None,
                output_messages=[{"role": "assistant", "parts": parts, "finish_reason": self.finish}],
                tool_calls=_pending(parts),
            )
        if response.usage is None and self.metrics:
            response.usage = _converse_usage(
                {
                    "inputTokens": self.metrics.get("inputTokenCount"),
                    "outputTokens": self.metrics.get("outputTokenCount"),
                    "cacheReadInputTokenCount": self.metrics.get("cacheReadInputTokenCount"),
                    "cacheWriteInputTokenCount": self.metrics.get("cacheWriteInputTokenCount"),
                }
            )
        return response


# --- The patch -------------------------------------------------------------------------------------------------

_bedrock_clients: dict[type, bool] = {}


def _body_of(params: dict[str, Any]) -> Any:
    """The request body as JSON, or None (not JSON, or a stream that cannot be read twice)."""
    body = params.get("body")
    if hasattr(body, "read") and hasattr(body, "seek"):  # a seekable file: read, then put back where it was
        position = body.tell()
        data = body.read()
        body.seek(position)
        body = data
    if not isinstance(body, (bytes, bytearray, str)):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _request(instance: Any, kwargs: dict[str, Any]) -> _Request | None:
    cls = type(instance)
    bedrock = _bedrock_clients.get(cls)
    if bedrock is None:
        bedrock = _bedrock_clients[cls] = instance.meta.service_model.service_name == "bedrock-runtime"
    operation = kwargs.get("operation_name")
    if not bedrock or operation not in _OPERATIONS:
        return None
    params = kwargs.get("api_params") or {}
    model = params.get("modelId")
    stream = _OPERATIONS[operation]
    attributes = server_attributes(getattr(instance.meta, "endpoint_url", None))
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    request = _Request(
        operation="chat", provider=_PROVIDER, model=model if isinstance(model, str) else None,
        attributes=attributes, stream=stream, operation_name=operation,
    )  # fmt: skip
    try:
        if operation.startswith("Converse"):
            _converse_request(params, attributes, request)
        else:
            body = _body_of(params)
            request.family = _family(request.model or "", body)
            if isinstance(body, dict):
                _body_request(body, request.family, attributes, request)
    except Exception as exc:  # noqa: BLE001 - a body we cannot read: the call is still traced
        report_internal_error("providers.bedrock_request", exc)
    return request


def _header_counts(result: Any) -> tuple[int | None, int | None]:
    headers = field_of(field_of(result, "ResponseMetadata"), "HTTPHeaders") or {}

    def count(name: str) -> int | None:
        value = headers.get(name)
        return int(value) if isinstance(value, str) and value.isdigit() else None

    return count("x-amzn-bedrock-input-token-count"), count("x-amzn-bedrock-output-token-count")


def _returned(call: ModelCall, result: Any) -> Any:
    """What the caller gets: the result, its stream behind our proxy, or its body re-readable."""
    request: _Request = call.request  # type: ignore[assignment]
    operation = request.operation_name
    if operation == "Converse":
        call.finish(call.read_response(result))
        return result
    if operation == "ConverseStream":
        result["stream"] = StreamProxy(result["stream"], call, _ConverseStream(request))
        return result
    if operation == "InvokeModelWithResponseStream":
        result["body"] = StreamProxy(result["body"], call, _InvokeStream(request))
        return result
    # InvokeModel: read the body once, give the caller the same bytes as a fresh stream.
    from botocore.response import StreamingBody

    try:
        data = result["body"].read()
    except BaseException as exc:  # the body could not be read: the call failed after all
        call.finish(error=exc)
        raise
    result["body"] = StreamingBody(io.BytesIO(data), len(data))
    response = None
    try:
        response = _body_response(json.loads(data), request.family, _header_counts(result))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("providers.bedrock_response", exc)
    call.finish(response)
    return result


PATCHES = [
    Patch(
        "botocore.client", "BaseClient._make_api_call", _request, _converse_response,
        positional=("operation_name", "api_params"), returned=_returned,
    ),
]  # fmt: skip
