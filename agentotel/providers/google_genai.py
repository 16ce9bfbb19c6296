"""How to read google-genai: `models.generate_content` and its stream, sync and async, Gemini API and Vertex AI;
`embed_content` and `count_tokens`.

One span per request to the model. `generate_content` may send several: automatic function calling
runs the user's Python functions between requests, and automatic continuation follows continuation
tokens. So the patch sits on the method that sends one request (`Models._generate_content`, called by
`generate_content`, by `chats` and by the async client alike): every model call gets its own span with
its own tokens and cost, and a `@agentotel.tool` function run by automatic function calling links to
the call that asked for it. (Should a release drop that private method, the public one is patched.)
Streams are patched at `generate_content_stream`, the object the user holds, so that closing it,
leaving it early or dropping it ends the span as for every other provider; a stream that runs
automatic function calling (which the SDK advises against) is then one span for its requests.

`embed_content` is an `embeddings {model}` span (an embedding step: tokens from the Gemini API's usage
or Vertex AI's per-embedding statistics, the dimension count); `count_tokens` a `count_tokens {model}`
span with no usage (nothing is spent, and it is no step of the run).

The provider is `gcp.vertex_ai` for a Vertex AI client and `gcp.gemini` for the Gemini API.
Gemini's function calls often carry no id: they then get `<response id>-<index>` so that the output
message's tool call and the `@tool` span that claims it share one id. Every part kind is kept, in
calls and streams alike: code execution and built-in tools (search, maps) as the conventions' server
tool calls and their responses, media as blob / uri parts, any other kind as a generic part.
"""

from __future__ import annotations

from typing import Any

from agentotel import _config
from agentotel._context import PendingToolCall, canonical_arguments, current_run, stable_call_id
from agentotel.providers._core import (
    Patch,
    Request,
    Response,
    Usage,
    field_of,
    given,
    media_part,
    reasoning_part,
    server_attributes,
    text_part,
    tool_call_part,
    tool_response_part,
)
from agentotel.providers._stream import Bounded, limits
from agentotel.semconv import (
    GEN_AI_EMBEDDINGS_DIMENSION_COUNT,
    GEN_AI_OUTPUT_TYPE,
    GEN_AI_REQUEST_CHOICE_COUNT,
    GEN_AI_REQUEST_FREQUENCY_PENALTY,
    GEN_AI_REQUEST_MAX_TOKENS,
    GEN_AI_REQUEST_PRESENCE_PENALTY,
    GEN_AI_REQUEST_SEED,
    GEN_AI_REQUEST_STOP_SEQUENCES,
    GEN_AI_REQUEST_STREAM,
    GEN_AI_REQUEST_TEMPERATURE,
    GEN_AI_REQUEST_TOP_K,
    GEN_AI_REQUEST_TOP_P,
)

_ROLES = {"model": "assistant", "user": "user", "function": "tool", "tool": "tool", "system": "system"}


def _model_name(model: Any) -> str | None:
    """The model id: `models/x`, `publishers/google/models/x` and full Vertex resource names give `x`."""
    if not isinstance(model, str):
        return None
    return model.rpartition("models/")[2] if "models/" in model else model


def _modality(mime_type: str | None) -> str:
    kind = (mime_type or "").partition("/")[0]
    return kind if kind in ("image", "audio", "video") else "file"


def _part(part: Any, tools: list[tuple[dict[str, Any], Any]] | None = None) -> dict[str, Any] | None:
    """A google-genai Part (or its dict form) in the GenAI message-part shape.

    With `tools`, each function call and response read is added to it with its tool's name (a response's
    part does not hold it): `_paired` gives the id-less ones ids.
    """
    if isinstance(part, str):
        return text_part(part)
    # A text part, nearly every one, read without field_of (google-genai has no sentinel values).
    if isinstance(part, dict):
        text, thought = part.get("text"), part.get("thought")
    else:
        text, thought = getattr(part, "text", None), getattr(part, "thought", None)
    if text is not None:
        return reasoning_part(text) if thought else text_part(text)
    call = field_of(part, "function_call")
    if call is not None:
        read = tool_call_part(field_of(call, "id"), field_of(call, "name"), field_of(call, "args"))
        if tools is not None:
            tools.append((read, read["name"]))
        return read
    result = field_of(part, "function_response")
    if result is not None:
        read = tool_response_part(field_of(result, "id"), field_of(result, "response"))
        if tools is not None:
            tools.append((read, field_of(result, "name")))
        return read
    blob = field_of(part, "inline_data")
    if blob is not None:
        mime = field_of(blob, "mime_type")
        return media_part(_modality(mime), mime_type=mime, data=field_of(blob, "data"))
    file = field_of(part, "file_data")
    if file is not None:
        mime = field_of(file, "mime_type")
        return media_part(_modality(mime), mime_type=mime, uri=field_of(file, "file_uri"))
    if field_of(part, "uri") is not None:  # an uploaded types.File given directly as content
        mime = field_of(part, "mime_type")
        return media_part(_modality(mime), mime_type=mime, uri=field_of(part, "uri"))
    return _other_part(part)


# Part fields that qualify another part (its signature, media settings, metadata), never content of their own.
_QUALIFIERS = frozenset({"thought", "thought_signature", "video_metadata", "part_metadata", "media_resolution"})


def _plain(value: Any) -> Any:
    """An SDK object as plain JSON values (its unset fields left out); anything else as it is."""
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True, mode="json") if dump is not None and not isinstance(value, type) else value


# Gemini's own tool runs, its code execution and its built-in tools (search, maps, URL context): what
# the GenAI conventions call server tool calls (True) and their responses (False).
_SERVER_TOOL_KINDS = {"executable_code": True, "code_execution_result": False, "tool_call": True, "tool_response": False}


def _other_part(part: Any) -> dict[str, Any] | None:
    """A part other than text, thought, function call or response, and media.

    Server tool calls and their responses as the conventions shape them; a kind they have no part
    for as a generic part (its field name as the type, its value as the content); None for a part
    holding only qualifiers (a bare thought signature: nothing readable).
    """
    from google.genai import types

    if isinstance(part, dict):
        items: Any = part.items()
    elif isinstance(part, types.Part):
        items = ((name, getattr(part, name, None)) for name in type(part).model_fields)
    else:  # an object the SDK turns into a part itself (an image, say)
        return {"type": type(part).__name__, "content": part}
    for kind, value in items:
        if value is None or kind in _QUALIFIERS or kind.endswith("_metadata"):
            continue
        content = _plain(value)
        call = _SERVER_TOOL_KINDS.get(kind)
        if call is None or not isinstance(content, dict):
            return {"type": kind, "content": content}
        content = dict(content)
        call_id = content.pop("id", None)
        tool = str(content.pop("tool_type", None) or "code_execution").lower()
        body = {"type": tool, **content}
        if call:
            return {"type": "server_tool_call", "id": call_id, "name": tool, "server_tool_call": body}
        return {"type": "server_tool_call_response", "id": call_id, "server_tool_call_response": body}
    return None


def _parts(content: Any, tools: list[tuple[dict[str, Any], Any]] | None = None) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):  # a system instruction, usually (text_part's dict, inline)
        return [{"type": "text", "content": content}]
    items = content.get("parts") if isinstance(content, dict) else getattr(content, "parts", None)
    if items is None:
        if field_of(content, "role") is not None:  # a Content without parts (a blocked candidate): no part
            return []
        items = content if isinstance(content, (list, tuple)) else [content]
    if tools is None:
        return [p for p in map(_part, items) if p is not None]
    return [p for p in (_part(item, tools) for item in items) if p is not None]


def _is_content(item: Any) -> bool:
    return field_of(item, "parts") is not None or field_of(item, "role") is not None


def _messages(contents: Any) -> list[dict[str, Any]]:
    """The request's contents as messages: Content items as they are, loose parts grouped as the user's (as the SDK does)."""
    if contents is None:
        return []
    if isinstance(contents, str) or not isinstance(contents, (list, tuple)):  # (a plain str prompt: `_request`)
        contents = [contents]
    messages: list[dict[str, Any]] = []
    loose: list[dict[str, Any]] = []
    tools: list[tuple[dict[str, Any], Any]] = []  # the function calls and responses, in order
    for item in contents:
        if isinstance(item, str):  # the usual prompt: a loose text part
            loose.append(text_part(item))
        elif _is_content(item):
            if loose:
                messages.append({"role": "user", "parts": loose})
                loose = []
            parts = _parts(item, tools)
            role = _ROLES.get(field_of(item, "role", "user"), "user")
            if parts and all(p["type"] == "tool_call_response" for p in parts):
                role = "tool"
            messages.append({"role": role, "parts": parts})
        else:
            part = _part(item, tools)
            if part is not None:
                loose.append(part)
    if loose:
        messages.append({"role": "user", "parts": loose})
    if tools:
        _paired(tools)
    return messages


def _paired(tools: list[tuple[dict[str, Any], Any]]) -> None:
    """Ids for the function calls and responses of a request's history that carry none (Gemini's, sent back).

    A call gets the id the run recorded it with when a model response asked for it (`_with_ids`), so the
    history's call, its result and the `@tool` span that ran it share one id; a call the run never saw
    asked for (a history from another process) gets one made from itself (`stable_call_id`). A response gets
    the id of the earliest unanswered call of its tool before it. Ids the SDK or the app gave are kept.
    """
    calls = [part for part, _ in tools if part["type"] == "tool_call"]
    if not all(part["id"] for part in calls):
        keys = [(part["name"], canonical_arguments(part["arguments"])) for part in calls]
        _ids_from_run(calls, keys)
        seen: dict[tuple[Any, str], int] = {}
        for part, key in zip(calls, keys):
            seen[key] = count = seen.get(key, 0) + 1
            if not part["id"]:
                part["id"] = stable_call_id(key[0], key[1], count)
    unanswered: list[dict[str, Any]] = []
    for part, name in tools:
        if part["type"] == "tool_call":
            unanswered.append(part)
        elif part["id"]:
            unanswered = [call for call in unanswered if call["id"] != part["id"]]
        else:
            call = next((call for call in unanswered if call["name"] == name), None)
            if call is not None:  # (a response whose call is not in the history keeps no id: it answers nothing here)
                unanswered.remove(call)
                part["id"] = call["id"]


def _ids_from_run(calls: list[dict[str, Any]], keys: list[tuple[Any, str]]) -> None:
    """The ids the current run (else an enclosing one) recorded for the id-less calls: matched by tool and
    arguments from the history's last call back, each to an earlier asked call than the one after it (a
    history is in the order the model asked, and may have lost its oldest turns)."""
    given = {part["id"] for part in calls if part["id"]}
    run = current_run()
    while run is not None:
        asked = [call for call in run.asked_tool_calls() if call.id not in given]
        canon: dict[int, str] = {}
        end = len(asked)
        for part, (name, wanted) in zip(reversed(calls), reversed(keys)):
            if part["id"]:
                continue
            for i in range(end - 1, -1, -1):
                call = asked[i]
                if call.name != name:
                    continue
                if i not in canon:
                    canon[i] = canonical_arguments(call.arguments)
                if canon[i] == wanted:
                    part["id"] = call.id
                    end = i
                    break
        if all(part["id"] for part in calls):
            return
        run = run.parent


def _schema(value: Any) -> Any:
    if value is None or isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True, mode="json") if dump is not None else value


def _tool_definitions(tools: Any) -> list[dict[str, Any]] | None:
    if not given(tools) or not tools:
        return None
    definitions: list[dict[str, Any]] = []
    for tool in tools:
        if callable(tool) and not hasattr(tool, "function_declarations"):  # a Python function (automatic calling)
            definitions.append(_callable_definition(tool))
            continue
        declarations = field_of(tool, "function_declarations")
        for declaration in declarations or ():
            definition = {"type": "function", "name": field_of(declaration, "name")}
            if field_of(declaration, "description"):
                definition["description"] = field_of(declaration, "description")
            parameters = field_of(declaration, "parameters_json_schema") or _schema(field_of(declaration, "parameters"))
            if parameters is not None:
                definition["parameters"] = parameters
            definitions.append(definition)
        # Built-in tools (google_search, code_execution, ...): one definition per tool set. (An MCP
        # session given as a tool is neither a dict nor a Tool: its tools are not known here.)
        fields = getattr(type(tool), "model_fields", None) or ()
        others = tool.items() if isinstance(tool, dict) else ((k, getattr(tool, k, None)) for k in fields)
        for kind, value in others:
            if kind != "function_declarations" and value is not None:
                definitions.append({"type": kind, "name": kind})
    return definitions or None


def _callable_definition(function: Any) -> dict[str, Any]:
    definition: dict[str, Any] = {"type": "function", "name": getattr(function, "__name__", repr(function))}
    if getattr(function, "__doc__", None):
        definition["description"] = function.__doc__.strip()
    try:  # the declaration the SDK itself would send
        from google.genai import types

        declaration = types.FunctionDeclaration.from_callable_with_api_option(callable=function)
        if declaration.parameters is not None:
            definition["parameters"] = _schema(declaration.parameters)
    except Exception:  # noqa: BLE001 - a signature the SDK cannot describe: name and description only
        pass
    return definition


# config field -> (attribute, accepted types): read in one loop (this runs on every model call).
_PARAMETERS = {
    "max_output_tokens": (GEN_AI_REQUEST_MAX_TOKENS, int),
    "temperature": (GEN_AI_REQUEST_TEMPERATURE, (int, float)),
    "top_p": (GEN_AI_REQUEST_TOP_P, (int, float)),
    "top_k": (GEN_AI_REQUEST_TOP_K, (int, float)),
    "seed": (GEN_AI_REQUEST_SEED, int),
    "frequency_penalty": (GEN_AI_REQUEST_FREQUENCY_PENALTY, (int, float)),
    "presence_penalty": (GEN_AI_REQUEST_PRESENCE_PENALTY, (int, float)),
    "stop_sequences": (GEN_AI_REQUEST_STOP_SEQUENCES, (list, tuple)),
}
# Every config field a request is read for.
_CONFIG_FIELDS = frozenset({*_PARAMETERS, "candidate_count", "response_mime_type", "system_instruction", "tools"})


# (base URL object, Vertex AI or not) -> provider name and server.* attributes, by the URL object's id: the
# entry holds the URL object, so that id is not reused while the entry lives (as openai.py's `_clients`).
_clients: dict[int, tuple[Any, bool, str, dict[str, Any]]] = {}


def _client_attributes(instance: Any) -> tuple[str, dict[str, Any]]:
    client = getattr(instance, "_api_client", None)
    vertex = bool(getattr(client, "vertexai", False))
    base_url = getattr(getattr(client, "_http_options", None), "base_url", None)
    entry = _clients.get(id(base_url))
    if entry is None or entry[0] is not base_url or entry[1] is not vertex:
        if len(_clients) >= 64:  # clients made and dropped by the hundred: start over
            _clients.clear()
        entry = _clients[id(base_url)] = (base_url, vertex, "gcp.vertex_ai" if vertex else "gcp.gemini", server_attributes(base_url))
    return entry[2], dict(entry[3])


def _request(instance: Any, kwargs: dict[str, Any], stream: bool = False) -> Request:
    # `_client_attributes(instance)`, its usual case inline (each function this path enters costs more than its
    # body, see providers/_core.ModelCall): the client's entry, found by its base URL object.
    client = getattr(instance, "_api_client", None)
    base_url = getattr(getattr(client, "_http_options", None), "base_url", None)
    entry = _clients.get(id(base_url))
    if entry is not None and entry[0] is base_url and entry[1] is bool(getattr(client, "vertexai", False)):
        provider, attributes = entry[2], dict(entry[3])
    else:
        provider, attributes = _client_attributes(instance)
    config = kwargs.get("config")
    # A GenerateContentConfig keeps its fields in __dict__ (pydantic), every one of its ~40 present,
    # nearly all None: only those the caller set (model_fields_set) are read. A dict config is read as it is.
    if isinstance(config, dict):
        fields, given_fields = config, config.keys()
    else:
        fields = getattr(config, "__dict__", None) or {}
        # (pydantic's own set, read directly: `model_fields_set` is a property, a Python call)
        given_fields = getattr(config, "__pydantic_fields_set__", None) or fields.keys()
    system = tools = None
    # (each field given tested, not an intersection made: a new set's C path, run cold, costs more)
    for name in given_fields if fields else ():
        if name not in _CONFIG_FIELDS:
            continue
        value = fields.get(name)
        if value is None:
            continue
        parameter = _PARAMETERS.get(name)
        if parameter is not None:
            if isinstance(value, parameter[1]) and type(value) is not bool:
                attributes[parameter[0]] = value
        elif name == "system_instruction":
            system = value
        elif name == "tools":
            tools = value
        elif name == "candidate_count":
            if isinstance(value, int) and value != 1:
                attributes[GEN_AI_REQUEST_CHOICE_COUNT] = value
        elif value:  # response_mime_type
            attributes[GEN_AI_OUTPUT_TYPE] = "json" if "json" in value else "text"
    if stream:
        attributes[GEN_AI_REQUEST_STREAM] = True
    model = kwargs.get("model")
    messages = instructions = None
    settings = _config._current  # `capturing()`, its usual case inline
    if (settings if settings is not None else _config.current()).capture_content:
        # The usual prompt and system instruction, plain strings, read here (text_part's dicts, inline:
        # each function this path enters costs more than its body, see providers/_core.ModelCall).
        contents = kwargs.get("contents")
        messages = [{"role": "user", "parts": [{"type": "text", "content": contents}]}] if type(contents) is str else _messages(contents)
        if system is not None:
            instructions = [{"type": "text", "content": system}] if type(system) is str else _parts(system)
    # Positional, in the fields' order (operation, provider, model, attributes, stream, input messages,
    # system instructions, tool definitions): a class called with keywords gets them as a dict, which
    # costs this call more than the rest of the constructor.
    return Request(
        "chat",
        provider,
        model if type(model) is str and "models/" not in model else _model_name(model),  # (a bare id, usually)
        attributes,
        stream,
        messages,
        instructions,
        _tool_definitions(tools) if tools else None,
    )


def _stream_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    return _request(instance, kwargs, stream=True)


# Responses and stream chunks are the SDK's own types (GenerateContentResponse and its parts), read
# by plain attribute access: this runs on every call, and per chunk of a stream.


def _usage(metadata: Any) -> Usage | None:
    if metadata is None:
        return None
    prompt = metadata.prompt_token_count
    candidates = metadata.candidates_token_count
    thoughts = metadata.thoughts_token_count
    if prompt is None and candidates is None:
        return None
    # Gemini's prompt count includes the cached tokens (the GenAI convention); thinking tokens are
    # counted apart from the candidates' but billed as output, so output includes them.
    # (input, output, cache read, cache write, reasoning: positional, as `_request`'s Request)
    return Usage(
        None if prompt is None else prompt + (metadata.tool_use_prompt_token_count or 0),
        None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0),
        metadata.cached_content_token_count,
        None,
        thoughts,
    )


_finish_names: dict[Any, str] = {}


def _finish(reason: Any) -> str | None:
    """A candidate's finish reason (an enum, or a string the SDK did not know) in lower case."""
    if reason is None:
        return None
    name = _finish_names.get(reason)  # an enum's `.value` runs two Python functions: remembered
    if name is None:
        name = str(getattr(reason, "value", reason)).lower()
        if len(_finish_names) < 256:
            _finish_names[reason] = name
    return name


def _with_ids(parts: list[dict[str, Any]], response_id: str | None, calls: list[PendingToolCall]) -> None:
    """Give id-less function calls `<response id>-<n>` (n counts the response's calls) and collect them as pending."""
    for part in parts:
        if part["type"] == "tool_call":
            if not part["id"]:
                part["id"] = f"{response_id or 'call'}-{len(calls)}"
            if part["name"]:
                calls.append(PendingToolCall(part["id"], part["name"], part["arguments"]))


def _response(result: Any) -> Response:
    response_id = result.response_id
    response = Response(response_id, result.model_version, [], _usage(result.usage_metadata))  # (id, model, finish reasons, usage)
    messages = []
    for candidate in result.candidates or ():
        reason = candidate.finish_reason
        finish = _finish_names.get(reason) or _finish(reason)  # (the remembered name read here: one call less)
        if finish:
            response.finish_reasons.append(finish)
        content = candidate.content
        items = content.parts if content is not None else None
        parts = []
        calls = False
        for part in items or ():
            # A text part, nearly every one, read here (see the note above `_usage`); `_part` reads the rest.
            text = part.text
            if text is not None and not part.thought:
                parts.append({"type": "text", "content": text})
                continue
            read = _part(part)
            if read is not None:
                parts.append(read)
                calls = calls or read["type"] == "tool_call"
        if calls:
            _with_ids(parts, response_id, response.tool_calls)
        messages.append({"role": "assistant", "parts": parts, "finish_reason": finish})
    response.output_messages = messages
    return response


class _Candidate:
    """One candidate's parts so far. Text deltas go to the open text (or thought) buffer; a part of
    another kind (code execution, media) closes both, so text after it is a part of its own, as in a
    whole response. Function calls come last, in their order."""

    __slots__ = ("text", "thought", "parts", "calls", "room", "finish")

    def __init__(self, text_limit: int) -> None:
        self.text: Bounded | None = None
        self.thought: Bounded | None = None
        self.parts: list[Any] = []  # (is thought, Bounded) text buffers and other part dicts, in order
        self.calls: list[dict[str, Any]] = []  # Gemini streams each function call whole, in one chunk
        self.room = {False: text_limit, True: text_limit}  # characters left for text, for thoughts
        self.finish: str | None = None

    def open(self, thought: bool) -> Bounded:
        buffer = Bounded(self.room[thought])
        if thought:
            self.thought = buffer
            self.parts.append((True, buffer))
        else:
            self.text = buffer
            self.parts.append((False, buffer))
        return buffer

    def add(self, part: dict[str, Any]) -> None:
        for buffer in (self.text, self.thought):
            if buffer is not None:
                self.room[buffer is self.thought] -= min(buffer.size, buffer.limit)
        self.text = self.thought = None
        self.parts.append(part)


class _Stream:
    """Stream chunks (each a partial GenerateContentResponse): every part kind, per candidate, in order."""

    def __init__(self, request: Request) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Any = None
        self.candidates: dict[int, _Candidate] = {}
        self.text_limit = limits()[0]

    def chunk(self, chunk: Any) -> None:
        # One call per chunk, the usual text delta read inline (see the note above `_usage`).
        if self.id is None:
            self.id = chunk.response_id
        if self.model is None:
            self.model = chunk.model_version
        usage = chunk.usage_metadata
        if usage is not None and usage.prompt_token_count is not None:
            self.usage = usage  # the last chunk's counts are the totals
        for position, candidate in enumerate(chunk.candidates or ()):
            index = candidate.index
            if index is None:
                index = position
            state = self.candidates.get(index)
            if state is None:
                state = self.candidates[index] = _Candidate(self.text_limit)
            content = candidate.content
            for part in (content.parts if content is not None else None) or ():
                text = part.text
                if text is not None:
                    buffer = state.thought if part.thought else state.text
                    if buffer is None:  # the first text (or the first after another part)
                        buffer = state.open(bool(part.thought))
                    if text and buffer.size < buffer.limit:  # Bounded.add, inline
                        buffer.parts.append(text)
                        buffer.size += len(text)
                    continue
                call = part.function_call
                if call is not None:  # kept with capture off too: `@tool` spans link to it
                    state.calls.append(tool_call_part(call.id, call.name, call.args))
                elif self.text_limit:  # content: kept only when it may be recorded
                    other = _part(part)
                    if other is not None:
                        state.add(other)
            reason = candidate.finish_reason
            if reason is not None:
                state.finish = _finish(reason)

    def response(self) -> Response:
        response = Response(self.id, self.model, [], _usage(self.usage))  # (id, model, finish reasons, usage)
        messages = []
        for _, state in sorted(self.candidates.items()):
            parts = []
            for item in state.parts:
                if type(item) is tuple:
                    thought, buffer = item
                    if buffer:
                        parts.append(reasoning_part(buffer.text()) if thought else text_part(buffer.text()))
                else:
                    parts.append(item)
            calls = [dict(c) for c in state.calls]  # copies: ids are added to them
            _with_ids(calls, self.id, response.tool_calls)
            parts.extend(calls)
            if state.finish:
                response.finish_reasons.append(state.finish)
            messages.append({"role": "assistant", "parts": parts, "finish_reason": state.finish})
        response.output_messages = messages
        return response


# --- embed_content and count_tokens -------------------------------------------------------------------------


def _client_request(instance: Any, kwargs: dict[str, Any], operation: str) -> Request:
    provider, attributes = _client_attributes(instance)
    return Request(operation=operation, provider=provider, model=_model_name(kwargs.get("model")), attributes=attributes)


def _embed_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    request = _client_request(instance, kwargs, "embeddings")
    config = kwargs.get("config")
    fields = config if isinstance(config, dict) else getattr(config, "__dict__", None) or {}
    dimensions = fields.get("output_dimensionality")
    if isinstance(dimensions, int) and type(dimensions) is not bool:
        request.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] = dimensions
    return request


def _embed_response(result: Any) -> Response:
    """Tokens: the Gemini API's usage, else (Vertex AI) the sum of each embedding's own count."""
    embeddings = result.embeddings or ()
    usage = _usage(result.usage_metadata)
    if usage is None:
        counts = [e.statistics.token_count for e in embeddings if e.statistics is not None and e.statistics.token_count is not None]
        usage = Usage(input_tokens=int(sum(counts))) if counts else None
    response = Response(usage=usage)
    if embeddings and embeddings[0].values:
        response.attributes[GEN_AI_EMBEDDINGS_DIMENSION_COUNT] = len(embeddings[0].values)
    return response


def _count_request(instance: Any, kwargs: dict[str, Any]) -> Request:
    return _client_request(instance, kwargs, "count_tokens")


def _count_response(result: Any) -> Response:
    # No usage: counting is not billed, and the count is no tokens the run spent (the span is no step).
    return Response()


def _patches() -> list[Patch]:
    from google.genai import models

    call = "_generate_content" if hasattr(models.Models, "_generate_content") else "generate_content"
    return [
        *(Patch("google.genai.models", f"{cls}.{call}", _request, _response, _Stream) for cls in ("Models", "AsyncModels")),
        *(
            Patch("google.genai.models", f"{cls}.generate_content_stream", _stream_request, _response, _Stream)
            for cls in ("Models", "AsyncModels")
        ),
        *(Patch("google.genai.models", f"{cls}.embed_content", _embed_request, _embed_response) for cls in ("Models", "AsyncModels")),
        *(Patch("google.genai.models", f"{cls}.count_tokens", _count_request, _count_response) for cls in ("Models", "AsyncModels")),
    ]


PATCHES = _patches()
