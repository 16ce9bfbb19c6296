"""How to read the openai SDK: chat completions, Responses, embeddings (sync and async, Azure included)."""

from __future__ import annotations

from itertools import repeat, starmap
from time import monotonic
from typing import Any, Callable, Iterator

from agentotel._context import PendingToolCall
from agentotel._internal import report_internal_error
from agentotel.providers._core import (
    ModelCall,
    Patch,
    Request,
    Response,
    Usage,
    capturing,
    field_of,
    given,
    media_part,
    parse_arguments,
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
    GEN_AI_EMBEDDINGS_DIMENSION_COUNT,
    GEN_AI_OUTPUT_TYPE,
    GEN_AI_REQUEST_CHOICE_COUNT,
    GEN_AI_REQUEST_ENCODING_FORMATS,
    GEN_AI_REQUEST_FREQUENCY_PENALTY,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_PRESENCE_PENALTY,
    GEN_AI_REQUEST_SEED,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_P,
)


# (client type, base URL object) -> provider name and server.* attributes, by the URL object's id: the
# entry holds the URL object, so that id is not reused while the entry lives, and a new `base_url`
# (the SDK's setter makes a new URL object) is a new entry.
_clients: dict[int, tuple[Any, type, str, dict[str, Any]]] = {}


def _client_attributes(instance: Any) -> tuple[str, dict[str, Any]]:
    client = getattr(instance, "_client", None)
    # openai 3.x's `base_url` property runs an import statement on every read (~1.3 µs, a third of
    # reading a request): the attribute behind it is read directly where it exists.
    base_url = getattr(client, "_base_url", None)
    if base_url is None:
        base_url = getattr(client, "base_url", None)
    entry = _clients.get(id(base_url))
    if entry is None or entry[0] is not base_url or entry[1] is not type(client):
        provider = "azure.ai.openai" if "azure" in type(client).__name__.lower() else "openai"
        if len(_clients) >= 64:  # clients made and dropped by the hundred: start over
            _clients.clear()
        entry = _clients[id(base_url)] = (base_url, type(client), provider, server_attributes(base_url))
    return entry[2], dict(entry[3])


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    # Chat completions say prompt/completion tokens; Responses and embeddings say input/output.
    # (Asking a pydantic model for a field it lacks is slow, so only the right family is read.)
    if not isinstance(usage, dict):  # the SDK's typed usage (no sentinels): the getattr builtin is cheaper
        input_tokens = getattr(usage, "prompt_tokens", None)
        if input_tokens is not None:
            output_tokens = getattr(usage, "completion_tokens", None)
            input_details = getattr(usage, "prompt_tokens_details", None)
            output_details = getattr(usage, "completion_tokens_details", None)
        else:
            input_tokens = getattr(usage, "input_tokens", None)
            output_tokens = getattr(usage, "output_tokens", None)
            input_details = getattr(usage, "input_tokens_details", None)
            output_details = getattr(usage, "output_tokens_details", None)
        return Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=getattr(input_details, "cached_tokens", None),
            cache_write_tokens=getattr(input_details, "cache_write_tokens", None),
            reasoning_tokens=getattr(output_details, "reasoning_tokens", None),
        )
    input_tokens = field_of(usage, "prompt_tokens")
    if input_tokens is not None:
        output_tokens = field_of(usage, "completion_tokens")
        input_details = field_of(usage, "prompt_tokens_details")
        output_details = field_of(usage, "completion_tokens_details")
    else:
        input_tokens = field_of(usage, "input_tokens")
        output_tokens = field_of(usage, "output_tokens")
        input_details = field_of(usage, "input_tokens_details")
        output_details = field_of(usage, "output_tokens_details")
    return Usage(
        input_tokens=input_tokens,  # OpenAI's prompt tokens already include the cached ones
        output_tokens=output_tokens,
        cache_read_tokens=field_of(input_details, "cached_tokens"),
        cache_write_tokens=field_of(input_details, "cache_write_tokens"),
        reasoning_tokens=field_of(output_details, "reasoning_tokens"),
    )


def _tool_definitions(tools: Any) -> list[dict[str, Any]] | None:
    if not given(tools):
        return None
    definitions = []
    for tool in tools:
        function = field_of(tool, "function")
        source = function if function is not None else tool  # chat nests under "function"; Responses is flat
        name = field_of(source, "name")
        definition = {"type": field_of(tool, "type", "function"), "name": name}
        if field_of(source, "description"):
            definition["description"] = field_of(source, "description")
        if field_of(source, "parameters") is not None:
            definition["parameters"] = field_of(source, "parameters")
        definitions.append(definition)
    return definitions or None


# --- content parts ------------------------------------------------------------------------------------


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_part(content)]
    parts = []
    for item in content:
        kind = field_of(item, "type")
        if kind in ("text", "input_text", "output_text"):
            parts.append(text_part(field_of(item, "text", "")))
        elif kind == "refusal":
            parts.append(text_part(field_of(item, "refusal", "")))
        elif kind == "image_url":
            parts.append(media_part("image", uri=field_of(field_of(item, "image_url"), "url")))
        elif kind == "input_image":
            parts.append(media_part("image", uri=field_of(item, "image_url") or field_of(item, "file_id")))
        elif kind == "input_audio":
            audio = field_of(item, "input_audio")
            parts.append(media_part("audio", mime_type=f"audio/{field_of(audio, 'format', 'wav')}", data=field_of(audio, "data")))
        elif kind in ("file", "input_file"):
            file = field_of(item, "file") or item
            uri = field_of(file, "file_data") or field_of(file, "file_url") or field_of(file, "file_id")
            parts.append(media_part("file", uri=uri))
        else:
            parts.append({"type": kind or "unknown", "content": item})
    return parts


def _chat_messages(messages: Any) -> list[dict[str, Any]]:
    out = []
    for message in messages or ():
        if type(message) is dict:  # the usual {"role": ..., "content": "text"}: what the general case makes of it
            role, content = message.get("role"), message.get("content")
            if (type(role) is str and role != "tool" and role != "function" and type(content) is str
                    and message.get("tool_calls") is None and message.get("function_call") is None):  # fmt: skip
                out.append({"role": role, "parts": [text_part(content)]})
                continue
        role = field_of(message, "role", "user")
        if role == "tool" or role == "function":  # "function": the legacy form, whose results carry no call id
            content = field_of(message, "content")
            out.append({"role": "tool", "parts": [tool_response_part(field_of(message, "tool_call_id"), _plain(content))]})
            continue
        parts = _content_parts(field_of(message, "content"))
        for call in field_of(message, "tool_calls") or ():
            function = field_of(call, "function")
            parts.append(tool_call_part(field_of(call, "id"), field_of(function, "name"), field_of(function, "arguments")))
        legacy = field_of(message, "function_call")
        if legacy is not None:
            parts.append(tool_call_part(None, field_of(legacy, "name"), field_of(legacy, "arguments")))
        out.append({"role": role, "parts": parts})
    return out


def _plain(content: Any) -> Any:
    """A tool message's content as its text (a list of text parts joined), for tool_call_response."""
    if isinstance(content, list):
        texts = [field_of(p, "text") for p in content if field_of(p, "text") is not None]
        return "".join(texts) if len(texts) == len(content) else content
    return content


# --- chat completions ---------------------------------------------------------------------------------


# Request parameters read into attributes (a call naming none of them skips reading them one by one).
_CHAT_PARAMETERS = frozenset({
    "max_completion_tokens", "max_tokens", "temperature", "top_p", "frequency_penalty", "presence_penalty",
    "seed", "stop", "n", "response_format", "tool_choice",
})  # fmt: skip


def _chat_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    provider, attributes = _client_attributes(instance)
    stream = kwargs.get("stream") is True
    if not _CHAT_PARAMETERS.isdisjoint(kwargs):
        _chat_parameters(kwargs, attributes)
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    model = kwargs.get("model")
    tools = kwargs.get("tools")
    request = Request(
        operation="chat",
        provider=provider,
        model=model if isinstance(model, str) else None,
        attributes=attributes,
        stream=stream,
        input_messages=_chat_messages(kwargs.get("messages")) if capturing() else None,
        tool_definitions=_tool_definitions(tools) if tools is not None else None,
    )
    functions = kwargs.get("functions")
    if functions is not None and given(functions):  # the legacy form of `tools`
        request.tool_definitions = [*(request.tool_definitions or ()), *(_tool_definitions(functions) or ())] or None
    return request


def _chat_parameters(kwargs: dict[str, Any], attributes: dict[str, Any]) -> None:
    max_tokens = kwargs.get("max_completion_tokens")
    put(attributes, GEN_AI_REQUEST_MAX_TOKENS, max_tokens if given(max_tokens) else kwargs.get("max_tokens"), int)
    put(attributes, GEN_AI_REQUEST_TEMPERATURE, kwargs.get("temperature"), (int, float))
    put(attributes, GEN_AI_REQUEST_TOP_P, kwargs.get("top_p"), (int, float))
    put(attributes, GEN_AI_REQUEST_FREQUENCY_PENALTY, kwargs.get("frequency_penalty"), (int, float))
    put(attributes, GEN_AI_REQUEST_PRESENCE_PENALTY, kwargs.get("presence_penalty"), (int, float))
    put(attributes, GEN_AI_REQUEST_SEED, kwargs.get("seed"), int)
    stop = kwargs.get("stop")
    put(attributes, GEN_AI_REQUEST_STOP_SEQUENCES, [stop] if isinstance(stop, str) else stop, (list, tuple))
    n = kwargs.get("n")
    if given(n) and n != 1:
        attributes[GEN_AI_REQUEST_CHOICE_COUNT] = n
    put(attributes, AGENTOTEL_REQUEST_TOOL_CHOICE, tool_choice(kwargs.get("tool_choice")))
    response_format = kwargs.get("response_format")
    if given(response_format):
        kind = response_format.get("type") if isinstance(response_format, dict) else "json_schema"
        attributes[GEN_AI_OUTPUT_TYPE] = "text" if kind == "text" else "json"


def _chat_response(completion: Any) -> Response:
    if isinstance(completion, dict):
        return _chat_response_of(completion)
    # The SDK's typed completion (what every call returns): read with the getattr builtin, which is
    # far cheaper per field than `field_of`; a response carries no NOT_GIVEN sentinels, only None.
    usage = getattr(completion, "usage", None)
    response = Response(id=getattr(completion, "id", None), model=getattr(completion, "model", None),
                        usage=_usage(usage) if usage is not None else None)  # fmt: skip
    messages = []
    for choice in getattr(completion, "choices", None) or ():
        finish = getattr(choice, "finish_reason", None)
        if finish:
            response.finish_reasons.append(finish)
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        parts = [text_part(content)] if type(content) is str else _content_parts(content)
        refusal = getattr(message, "refusal", None)
        if refusal:
            parts.append(text_part(refusal))
        for call in getattr(message, "tool_calls", None) or ():
            function = getattr(call, "function", None)
            call_id, name, arguments = getattr(call, "id", None), getattr(function, "name", None), getattr(function, "arguments", None)
            parts.append(tool_call_part(call_id, name, arguments))
            if call_id and name:
                response.tool_calls.append(PendingToolCall(call_id, name, parse_arguments(arguments)))
        function = getattr(message, "function_call", None)
        if function is not None:
            _legacy_call(response, parts, getattr(function, "name", None), getattr(function, "arguments", None))
        role = getattr(message, "role", None)
        messages.append({"role": role if role is not None else "assistant", "parts": parts, "finish_reason": finish})
    response.output_messages = messages
    return response


def _chat_response_of(completion: Any) -> Response:
    """`_chat_response` for a completion given as plain dicts (any mapping shape `field_of` reads)."""
    response = Response(id=field_of(completion, "id"), model=field_of(completion, "model"), usage=_usage(field_of(completion, "usage")))
    messages = []
    for choice in field_of(completion, "choices") or ():
        # OpenAI-shaped bodies from elsewhere (Bedrock): Mistral says stop_reason; a text completion has no message.
        finish = field_of(choice, "finish_reason") or field_of(choice, "stop_reason")
        if finish:
            response.finish_reasons.append(finish)
        message = field_of(choice, "message")
        parts = _content_parts(field_of(message, "content") if message is not None else field_of(choice, "text"))
        refusal = field_of(message, "refusal")
        if refusal:
            parts.append(text_part(refusal))
        for call in field_of(message, "tool_calls") or ():
            function = field_of(call, "function")
            call_id, name, arguments = field_of(call, "id"), field_of(function, "name"), field_of(function, "arguments")
            parts.append(tool_call_part(call_id, name, arguments))
            if call_id and name:
                response.tool_calls.append(PendingToolCall(call_id, name, parse_arguments(arguments)))
        function = field_of(message, "function_call")
        if function is not None:
            _legacy_call(response, parts, field_of(function, "name"), field_of(function, "arguments"))
        messages.append({"role": field_of(message, "role", "assistant"), "parts": parts, "finish_reason": finish})
    response.output_messages = messages
    return response


def _legacy_call(response: Response, parts: list[dict[str, Any]], name: Any, arguments: Any) -> None:
    """A legacy `function_call` (no id of its own): `<completion id>-<n>`, so a `@tool` span can link to it."""
    call_id = f"{response.id or 'call'}-{len(response.tool_calls)}"
    parts.append(tool_call_part(call_id, name, arguments))
    if name:
        response.tool_calls.append(PendingToolCall(call_id, name, parse_arguments(arguments)))


class _Choice:
    __slots__ = ("text", "calls", "finish", "role", "function")

    def __init__(self, text_limit: int) -> None:
        self.text = Bounded(text_limit)
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, Bounded arguments]
        self.finish: str | None = None
        self.role = "assistant"
        self.function: list[Any] | None = None  # the legacy function_call: [name, Bounded arguments]


class _ChatStream:
    """Chat completion chunks: text and tool calls per choice, assembled from deltas.

    Chunks are read in `iterate`, one generator that the user's loop drives directly (no call per
    chunk): between two chunks the SDK runs long enough to push our code out of the CPU caches, so
    the less code and the fewer objects a chunk touches, the less it costs. `chunk()` (a `next()`
    call, async streams) feeds the same code one chunk at a time.
    """

    def __init__(self, request: Request) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Usage | None = None
        self.choices: dict[int, _Choice] = {}
        self.text_limit, self.args_limit = limits()
        self._box: list[Any] = []
        self._feeder: Iterator[Any] | None = None

    def iterate(self, stream: Any, call: ModelCall | None, end: Callable[..., None] | None) -> Iterator[Any]:
        """The chunks of `stream`, each read on its way to the caller; `end` when the stream ends or fails.

        Chunks are the SDK's typed objects: plain attribute access, each field read once.
        """
        choices = self.choices
        index = state = text = None  # the previous chunk's choice (most streams have one)
        waiting = call is not None and call.first_chunk is None
        try:
            for chunk in stream:
                if waiting:
                    call.first_chunk = monotonic()  # type: ignore[union-attr]
                    waiting = False
                try:
                    if not self.id or not self.model:  # Azure may open with a content-filter notice: no id, no model
                        self.id, self.model = self.id or chunk.id or None, self.model or chunk.model or None
                    usage = chunk.usage
                    if usage is not None:
                        self.usage = _usage(usage)
                    for choice in chunk.choices:
                        if choice.index != index:
                            index = choice.index
                            state = choices.get(index)
                            if state is None:
                                state = choices[index] = _Choice(self.text_limit)
                            text = state.text
                        delta = choice.delta
                        if delta is not None:
                            content = delta.content
                            if content and text.size < text.limit:  # Bounded.add, inline
                                text.parts.append(content)
                                text.size += len(content)
                            role = delta.role
                            if role:
                                state.role = role
                            calls = delta.tool_calls
                            if calls:
                                self._tool_calls(state, calls)
                            function = delta.function_call
                            if function is not None:
                                self._function_call(state, function)
                        finish = choice.finish_reason
                        if finish:
                            state.finish = finish
                except Exception as exc:  # noqa: BLE001 - telemetry must never break the user's loop
                    report_internal_error("providers.stream_chunk", exc)
                yield chunk
        except GeneratorExit:  # the loop left early: not the end of the stream (see _stream)
            if call is not None and end is not None:
                call.stopped_reading(end)
            raise
        except BaseException as exc:
            if end is not None:
                end(exc)
            raise
        if end is not None:
            end()

    def chunk(self, chunk: Any) -> None:
        feeder = self._feeder
        if feeder is None:  # `iterate` over a box this method fills, one chunk per step
            feeder = self._feeder = self.iterate(starmap(self._box.pop, repeat(())), None, None)
        self._box.append(chunk)
        next(feeder)

    def _tool_calls(self, state: _Choice, calls: Any) -> None:
        for call in calls:
            slot = state.calls.get(call.index)
            if slot is None:
                slot = state.calls[call.index] = [None, None, Bounded(self.args_limit)]
            slot[0] = slot[0] or call.id
            if call.function is not None:
                slot[1] = slot[1] or call.function.name
                slot[2].add(call.function.arguments)

    def _function_call(self, state: _Choice, function: Any) -> None:
        if state.function is None:
            state.function = [None, Bounded(self.args_limit)]
        state.function[0] = state.function[0] or function.name
        state.function[1].add(function.arguments)

    def response(self) -> Response:
        response = Response(id=self.id, model=self.model, usage=self.usage)
        messages = []
        choices = self.choices
        for state in (choices[i] for i in sorted(choices)) if len(choices) > 1 else choices.values():
            parts = [text_part(state.text.text())] if state.text.size else []
            for _, (call_id, name, buffer) in sorted(state.calls.items()) if state.calls else ():
                arguments = buffer.text()
                parts.append(tool_call_part(call_id, name, arguments))
                if call_id and name:
                    response.tool_calls.append(PendingToolCall(call_id, name, parse_arguments(arguments)))
            if state.function is not None:
                _legacy_call(response, parts, state.function[0], state.function[1].text())
            if state.finish:
                response.finish_reasons.append(state.finish)
            messages.append({"role": state.role, "parts": parts, "finish_reason": state.finish})
        response.output_messages = messages
        return response


# --- Responses API ------------------------------------------------------------------------------------------


def _responses_input(items: Any) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [{"role": "user", "parts": [text_part(items)]}]
    out: list[dict[str, Any]] = []
    for item in items or ():
        kind = field_of(item, "type", "message")
        if kind == "message":
            out.append({"role": field_of(item, "role", "user"), "parts": _content_parts(field_of(item, "content"))})
        elif kind == "function_call" or kind == "custom_tool_call":  # a custom tool's input is free text
            arguments = field_of(item, "arguments") if kind == "function_call" else field_of(item, "input")
            out.append({"role": "assistant", "parts": [tool_call_part(field_of(item, "call_id"), field_of(item, "name"), arguments)]})
        elif kind == "function_call_output" or kind == "custom_tool_call_output":
            out.append({"role": "tool", "parts": [tool_response_part(field_of(item, "call_id"), field_of(item, "output"))]})
        elif kind == "reasoning":
            summary = "".join(field_of(s, "text", "") for s in field_of(item, "summary") or ())
            out.append({"role": "assistant", "parts": [reasoning_part(summary)]})
        else:
            out.append({"role": field_of(item, "role", "user"), "parts": [{"type": kind, "content": item}]})
    return out


def _responses_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    provider, attributes = _client_attributes(instance)
    stream = kwargs.get("stream") is True
    put(attributes, GEN_AI_REQUEST_MAX_TOKENS, kwargs.get("max_output_tokens"), int)
    put(attributes, GEN_AI_REQUEST_TEMPERATURE, kwargs.get("temperature"), (int, float))
    put(attributes, GEN_AI_REQUEST_TOP_P, kwargs.get("top_p"), (int, float))
    put(attributes, AGENTOTEL_REQUEST_TOOL_CHOICE, tool_choice(kwargs.get("tool_choice")))
    text = kwargs.get("text")
    if given(kwargs.get("text_format")) or (isinstance(text, dict) and isinstance(text.get("format"), dict)):
        kind = "json_schema" if given(kwargs.get("text_format")) else text["format"].get("type")
        attributes[GEN_AI_OUTPUT_TYPE] = "text" if kind == "text" else "json"
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    instructions = kwargs.get("instructions")
    model = kwargs.get("model")
    return Request(
        operation="chat",
        provider=provider,
        model=model if isinstance(model, str) else None,
        attributes=attributes,
        stream=stream,
        input_messages=_responses_input(kwargs.get("input")) if capturing() and given(kwargs.get("input")) else None,
        system_instructions=[text_part(instructions)] if capturing() and isinstance(instructions, str) else None,
        tool_definitions=_tool_definitions(kwargs.get("tools")),
    )


_RESPONSE_STATUS_REASON = {"completed": "stop", "incomplete": "length", "failed": "error", "cancelled": "cancelled"}


def _responses_response(result: Any) -> Response:
    response = Response(id=field_of(result, "id"), model=field_of(result, "model"), usage=_usage(field_of(result, "usage")))
    parts: list[dict[str, Any]] = []
    for item in field_of(result, "output") or ():
        kind = field_of(item, "type")
        if kind == "message":
            parts.extend(_content_parts(field_of(item, "content")))
        elif kind == "function_call" or kind == "custom_tool_call":  # a custom tool's input is free text
            call_id, name = field_of(item, "call_id"), field_of(item, "name")
            arguments = field_of(item, "arguments") if kind == "function_call" else field_of(item, "input")
            parts.append(tool_call_part(call_id, name, arguments))
            if call_id and name:
                response.tool_calls.append(PendingToolCall(call_id, name, parse_arguments(arguments)))
        elif kind == "reasoning":
            summary = "".join(field_of(s, "text", "") for s in field_of(item, "summary") or ())
            if summary:
                parts.append(reasoning_part(summary))
    status = field_of(result, "status")
    reason = "tool_calls" if response.tool_calls and status == "completed" else _RESPONSE_STATUS_REASON.get(status, status)
    if reason:
        response.finish_reasons.append(reason)
    response.output_messages = [{"role": "assistant", "parts": parts, "finish_reason": reason}]
    return response


class _ResponsesStream:
    """Responses API events: the final response object when it arrives, else the text deltas so far."""

    _FINAL = ("response.completed", "response.incomplete", "response.failed")

    def __init__(self, request: Request) -> None:
        self.latest: Any = None
        self.final = False
        self.text = Bounded(limits()[0])

    def chunk(self, event: Any) -> None:
        kind = field_of(event, "type")
        if kind == "response.output_text.delta":
            self.text.add(field_of(event, "delta"))
        elif field_of(event, "response") is not None and not self.final:
            self.latest = field_of(event, "response")
            self.final = kind in self._FINAL

    def response(self) -> Response:
        if self.final:
            return _responses_response(self.latest)
        response = Response(id=field_of(self.latest, "id"), model=field_of(self.latest, "model"))
        if self.text:
            response.output_messages = [{"role": "assistant", "parts": [text_part(self.text.text())], "finish_reason": None}]
        return response


# --- embeddings -------------------------------------------------------------------------------------------------


def _embeddings_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    provider, attributes = _client_attributes(instance)
    encoding = kwargs.get("encoding_format")
    if given(encoding):
        attributes[GEN_AI_REQUEST_ENCODING_FORMATS] = [encoding]
    put(attributes, GEN_AI_EMBEDDINGS_DIMENSION_COUNT, kwargs.get("dimensions"), int)
    model = kwargs.get("model")
    return Request(operation="embeddings", provider=provider, model=model if isinstance(model, str) else None, attributes=attributes)


def _embeddings_response(result: Any) -> Response:
    response = Response(model=field_of(result, "model"), usage=_usage(field_of(result, "usage")))
    data = field_of(result, "data") or ()
    if data and isinstance(field_of(data[0], "embedding"), list):
        response.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] = len(field_of(data[0], "embedding"))
    return response


# --- what to patch ------------------------------------------------------------------------------------------------

_CHAT = "openai.resources.chat.completions.completions"
_RESPONSES = "openai.resources.responses.responses"
_EMBEDDINGS = "openai.resources.embeddings"

PATCHES = [
    *(
        Patch(_CHAT, f"{cls}.{method}", _chat_request, _chat_response, _ChatStream)
        for cls in ("Completions", "AsyncCompletions")
        for method in ("create", "parse")
    ),
    *(
        Patch(_RESPONSES, f"{cls}.{method}", _responses_request, _responses_response, _ResponsesStream)
        for cls in ("Responses", "AsyncResponses")
        for method in ("create", "parse")
    ),
    *(Patch(_EMBEDDINGS, f"{cls}.create", _embeddings_request, _embeddings_response) for cls in ("Embeddings", "AsyncEmbeddings")),
]
