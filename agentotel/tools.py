"""`@tool` and `@retrieval`: an agent's own steps as `execute_tool` and `retrieval` spans.

    @agentotel.tool
    def get_weather(city: str, units: str = "metric") -> dict:
        \"\"\"Current weather for a city.\"\"\"

    @agentotel.retrieval(data_source="docs")
    def search(query: str, k: int = 5) -> list[dict]: ...

Plain functions, methods, async functions, generators and async generators are all supported, and
each runs exactly as it would undecorated: arguments are recorded (as JSON, content policy applied)
before the call, so a tool that mutates them does not change the record; its exceptions pass through
unchanged; a failure inside the instrumentation never reaches it.

A tool's JSON schema is derived once, at decoration, from its signature and type hints, and its
hash (`agentotel.tool.schema_hash`) is on every span of the tool, so a changed interface is visible
between runs. When a model asked for a call of this tool with equal arguments in the current run, the
span carries the model's `gen_ai.tool.call.id`. Under `agentotel.replay(case)` a (non-generator) tool
call the case recorded is answered from the case instead of running the body.

A framework's context parameters (pydantic-ai's `RunContext`, the Agents SDK's `ToolContext` /
`RunContextWrapper`, LangChain's `RunnableConfig`, callbacks and injected values) are not arguments
and not in the schema; the call id is read from them when they carry one.

Agent frameworks' own tools (agentotel.integrations) go through the same code: `defined_tool()` makes a
`DefinedTool` from a framework's definition (name, description, parameters schema) and
`start_tool_call()` / `retrieval_call()` run one call's span.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

from opentelemetry import context, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentotel import _context, _tracing
from agentotel._internal import end_span, report_internal_error
from agentotel.cases import _active as _replay
from agentotel.content import Payload, to_json_safe
from agentotel.runs import record_error
from agentotel.semconv import (
    AGENTOTEL_TOOL_SCHEMA_HASH,
    AGENTOTEL_TOOL_SERVER,
    ERROR_TYPE,
    GEN_AI_DATA_SOURCE_ID,
    GEN_AI_OPERATION_NAME,
    GEN_AI_RETRIEVAL_DOCUMENTS,
    GEN_AI_RETRIEVAL_QUERY_TEXT,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_ID,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_DESCRIPTION,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_TYPE,
)

__all__ = ["tool", "retrieval", "registered_tools", "schema_hash", "ToolInfo", "DefinedTool", "defined_tool",
           "start_tool_call", "ToolCall", "retrieval_call"]

F = TypeVar("F", bound=Callable[..., Any])

EXECUTE_TOOL = "execute_tool"
RETRIEVAL = "retrieval"

# A generator's result is the items it yielded, up to this many (the rest are counted).
_MAX_YIELDED = 100
_MAX_DOCUMENTS = 1000


@dataclass(frozen=True)
class ToolInfo:
    """A decorated tool: its name, description, JSON schema and the schema's hash."""

    name: str
    description: str | None
    schema: dict[str, Any]
    schema_hash: str


_registry: dict[str, ToolInfo] = {}


def registered_tools() -> dict[str, ToolInfo]:
    """Every `@tool` defined so far, by name (a later tool of the same name replaces an earlier one)."""
    return dict(_registry)


def schema_hash(schema: Mapping[str, Any]) -> str:
    """SHA-256 (first 16 hex characters) of the schema's canonical JSON: sorted keys, no spaces."""
    canonical = json.dumps(to_json_safe(schema), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: half of a UTF-16 pair (a default value or docstring can hold one) hashes, never raises
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# --- Decorators -------------------------------------------------------------------------------------------


def tool(fn: Any = None, *, name: str | None = None, description: str | None = None) -> Any:
    """Record each call of the function as an `execute_tool {name}` span (`@tool` or `@tool(name=...)`).

    `name` defaults to the function's name, `description` to its docstring. Works on functions,
    methods, async functions, generators and async generators.
    """
    if fn is None:
        return lambda f: _decorate(f, lambda inner: _ToolSpec(inner, name, description))
    return _decorate(fn, lambda inner: _ToolSpec(inner, None, None))


def retrieval(fn: Any = None, *, data_source: str | None = None) -> Any:
    """Record each call as a `retrieval {data_source}` span with the query and the returned documents.

    `data_source` defaults to the function's name. The query is the argument named query (or q,
    text, question, prompt), else the first string argument. Documents may be strings, dicts or
    objects with id / score / content-like fields (in their metadata too), (document, score) pairs or
    (id, score, content) rows; ids and scores are recorded always, contents only when capture is on.
    """
    if fn is None:
        return lambda f: _decorate(f, lambda inner: _RetrievalSpec(inner, data_source))
    return _decorate(fn, lambda inner: _RetrievalSpec(inner, None))


def _decorate(fn: Any, make_spec: Callable[[Callable[..., Any]], "_Spec"]) -> Any:
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(_decorate(fn.__func__, make_spec))
    if not callable(fn):
        raise TypeError(f"agentotel.tool / retrieval decorate functions, not {type(fn).__name__}")
    spec = make_spec(fn)
    if inspect.isasyncgenfunction(fn):
        wrapper = _async_generator_wrapper(fn, spec)
    elif inspect.isgeneratorfunction(fn):
        wrapper = _generator_wrapper(fn, spec)
    elif inspect.iscoroutinefunction(fn):
        wrapper = _async_wrapper(fn, spec)
    else:
        wrapper = _sync_wrapper(fn, spec)
    if isinstance(spec, _ToolSpec):
        wrapper.tool_info = spec.info  # type: ignore[attr-defined]
    return wrapper


# --- What each kind of span records ----------------------------------------------------------------------


class _Spec:
    """Precomputed per decorated function: span name, static attributes, and how to bind arguments."""

    span_name: str
    attributes: dict[str, Any]

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.signature = _signature(fn)
        params = list(self.signature.parameters.values()) if self.signature else []
        # Methods: `self` / `cls` is the instance, not an argument anybody chose.
        self.skip_first = bool(params) and params[0].name in ("self", "cls") and params[0].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )
        if self.skip_first:
            params = params[1:]
        positional_kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        # The names call arguments bind to by position (a framework's context parameters included).
        self.positional = tuple(p.name for p in params if p.kind in positional_kinds)
        var = [p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
        self.var_positional = var[0] if var else "args"
        # A framework's context parameters (RunContext, ToolContext, RunnableConfig, callbacks, an
        # injected tool-call id...) are handed in by the framework, not chosen by the model: they are
        # neither arguments nor part of the schema, and the tool-call id is read from them.
        hints = _type_hints(fn) if params else {}
        self.context_params = tuple(p.name for p in params if _is_framework_context(hints.get(p.name, p.annotation)))
        if self.context_params:
            params = [p for p in params if p.name not in self.context_params]
        self.parameters = params

    def arguments(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The call's arguments by name, as given (defaults are not filled in), `self` and context left out."""
        if self.skip_first and args:
            args = args[1:]
        names = self.positional
        out = dict(zip(names, args))
        if len(args) > len(names):
            out[self.var_positional] = list(args[len(names) :])
        if kwargs:
            out.update(kwargs)  # **kwargs are flattened: they are arguments like any other
        if self.context_params:
            for name in self.context_params:
                out.pop(name, None)
        return out

    def context_call_id(self, args: tuple, kwargs: dict) -> str | None:
        """The tool-call id a framework's context argument carries (ToolContext, RunContext, an injected id)."""
        if self.skip_first and args:
            args = args[1:]
        bound = dict(zip(self.positional, args))
        bound.update(kwargs)
        for name in self.context_params:
            value = bound.get(name)
            call_id = value if isinstance(value, str) else getattr(value, "tool_call_id", None)
            if isinstance(call_id, str) and call_id:
                return call_id
        return None

    def record_input(self, span: Any, payload: Payload, args: tuple, kwargs: dict) -> None:
        raise NotImplementedError

    def record_output(self, span: Any, payload: Payload, result: Any) -> None:
        raise NotImplementedError


class _ToolSpec(_Spec):
    def __init__(self, fn: Callable[..., Any], name: str | None, description: str | None) -> None:
        super().__init__(fn)
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.description = description if description is not None else (inspect.getdoc(fn) or None)
        schema = _tool_schema(self.name, self.description, self.parameters, _type_hints(fn))
        self.info = ToolInfo(self.name, self.description, schema, schema_hash(schema))
        _registry[self.name] = self.info
        self.span_name = f"{EXECUTE_TOOL} {self.name}"
        self.attributes = {
            GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
            GEN_AI_TOOL_NAME: self.name,
            GEN_AI_TOOL_TYPE: "function",
            AGENTOTEL_TOOL_SCHEMA_HASH: self.info.schema_hash,
        }
        if self.description:
            self.attributes[GEN_AI_TOOL_DESCRIPTION] = self.description

    def record_input(self, span: Any, payload: Payload, args: tuple, kwargs: dict) -> None:
        call_id = self.context_call_id(args, kwargs) if self.context_params else None
        _record_tool_input(span, payload, self.name, self.arguments(args, kwargs), call_id)

    def record_output(self, span: Any, payload: Payload, result: Any) -> None:
        payload.set(span, GEN_AI_TOOL_CALL_RESULT, result)


def _record_tool_input(span: Any, payload: Payload, name: str, arguments: Any, call_id: str | None) -> None:
    """Arguments and the model's tool-call id: the one given (a framework knows it), else the pending
    call of this run with this tool name and equal arguments."""
    payload.set(span, GEN_AI_TOOL_CALL_ARGUMENTS, arguments)
    run = _context.current_run()
    if call_id is not None:
        span.set_attribute(GEN_AI_TOOL_CALL_ID, call_id)
        if run is not None and _context.has_pending_tool_calls(run):
            _context.release_tool_call(call_id)
    elif run is not None and _context.has_pending_tool_calls(run):
        call_id = _context.claim_tool_call(name, to_json_safe(arguments))
        if call_id is not None:
            span.set_attribute(GEN_AI_TOOL_CALL_ID, call_id)


class DefinedTool(_ToolSpec):
    """A tool a framework defined (name, description, JSON schema of its parameters), not a decorated
    function: the same `execute_tool {name}` span, schema hash and content policy as `@tool`.

    Integrations make one per framework tool (`defined_tool()` keeps them) and run each call through
    `start_tool_call()`.
    """

    def __init__(self, name: str, description: str | None, parameters: Mapping[str, Any] | None, tool_type: str = "function",
                 server: str | None = None) -> None:
        self.name = name
        self.description = description or None
        self.parameters_schema = dict(parameters or {})
        schema = {"name": name, "description": description or "", "parameters": to_json_safe(self.parameters_schema)}
        self.info = ToolInfo(name, self.description, schema, schema_hash(schema))
        self.span_name = f"{EXECUTE_TOOL} {name}"
        self.attributes = {
            GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
            GEN_AI_TOOL_NAME: name,
            GEN_AI_TOOL_TYPE: tool_type,
            AGENTOTEL_TOOL_SCHEMA_HASH: self.info.schema_hash,
        }
        if self.description:
            self.attributes[GEN_AI_TOOL_DESCRIPTION] = self.description
        if server:
            self.attributes[AGENTOTEL_TOOL_SERVER] = server

    def record_input(self, span: Any, payload: Payload, args: tuple, kwargs: dict) -> None:
        arguments, call_id = args
        _record_tool_input(span, payload, self.name, arguments, call_id)

    def register(self) -> None:
        """Into the environment: the current run's tool definitions (`env`'s model tools), or, outside
        any run, the process's tools (as a `@tool` is at decoration) so the next run records it."""
        run = _context.current_run()
        if run is None:
            _registry[self.name] = self.info
        elif run.tool_definitions.get(self.name) is not self.parameters_schema:
            run.record_tool_definitions({self.name: self.parameters_schema})


_defined: dict[tuple[str, str, str, str, str], DefinedTool] = {}


def defined_tool(name: str, description: str | None, parameters: Mapping[str, Any] | None, tool_type: str = "function",
                 server: str | None = None) -> DefinedTool:
    """The `DefinedTool` for a framework tool's definition (kept, so its schema is hashed once);
    `server`: the server that runs it (an MCP server's name)."""
    try:
        schema = json.dumps(parameters, sort_keys=True, default=str) if parameters else ""
    except (TypeError, ValueError):
        schema = repr(parameters)
    key = (name, description or "", schema, tool_type, server or "")
    tool = _defined.get(key)
    if tool is None:
        if len(_defined) > 4096:
            _defined.clear()
        tool = _defined[key] = DefinedTool(name, description, parameters, tool_type, server)
    return tool


# (span, tool name) in the OTel context while a framework tool's span is current: a `@tool` function of
# that name the framework calls directly inside it is the same call, so it records nothing of its own
# (another @tool the body calls is a call of its own).
_FRAMEWORK_TOOL = context.create_key("agentotel-framework-tool")


def framework_tool_span(name: str) -> Any:
    """The span of a framework's call of tool `name` in progress here (`ToolCall.attach`), whatever span another
    library started below it since; None outside one."""
    marker = context.get_value(_FRAMEWORK_TOOL)
    return marker[0] if marker is not None and marker[1] == name and marker[0].is_recording() else None


class ToolCall:
    """One framework tool call in progress (`start_tool_call()`): current while `attach()`ed, ended by
    `succeed`, `fail` or `failed` (a failure the framework turned into a result) exactly once."""

    __slots__ = ("_call", "_token")

    def __init__(self, call: "_Call") -> None:
        self._call = call
        self._token: Any = None

    @property
    def span(self) -> Any:
        return self._call.span

    def attach(self) -> None:
        call = self._call
        marker = (call.span, getattr(call.spec, "name", None))
        self._token = context.attach(context.set_value(_FRAMEWORK_TOOL, marker, call.ctx))

    def detach(self) -> None:
        token, self._token = self._token, None
        if token is not None:
            context.detach(token)

    def succeed(self, result: Any) -> None:
        self.detach()
        _finish(self._call, None, result)

    def fail(self, exc: BaseException) -> None:
        self.detach()
        _finish(self._call, exc)

    def failed(self, result: Any, exc: BaseException | None = None, kind: str = "tool_error") -> None:
        """The tool failed but the framework answered the model with `result` (an error text, a result
        marked as an error): the result is recorded and the span marked ERROR."""
        self.detach()
        call = self._call
        try:
            call.spec.record_output(call.span, call.payload, result)
            if exc is not None:
                record_error(call.span, exc, call.payload)
            else:
                call.span.set_attribute(ERROR_TYPE, kind)
                call.span.set_status(Status(StatusCode.ERROR, kind))
            call.payload.apply_markers(call.span)
        except Exception as internal:  # noqa: BLE001
            report_internal_error("tools.failed", internal)
        call.end()


def start_tool_call(tool: DefinedTool, arguments: Any, call_id: str | None = None, *, adopt: Any = None) -> ToolCall | None:
    """Start a framework tool call's span (arguments as parsed JSON, the model's call id when known);
    None when it cannot be traced (the tool then runs untraced). `attach()` it around the tool's body.

    `adopt`: the framework's own instrumentation already has a span for this very call (current, with
    this call id): it is completed with what agentotel records instead of a second span (one step)."""
    try:
        tool.register()
        return ToolCall(_Call(tool, (arguments, call_id), {}, adopt))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("tools.start_framework", exc)
        return None


_QUERY_NAMES = ("query", "q", "text", "question", "prompt", "query_text", "search", "input")


class _RetrievalSpec(_Spec):
    def __init__(self, fn: Callable[..., Any], data_source: str | None) -> None:
        super().__init__(fn)
        self.data_source = data_source or getattr(fn, "__name__", None) or "retrieval"
        self.span_name = f"{RETRIEVAL} {self.data_source}"
        self.attributes = {GEN_AI_OPERATION_NAME: RETRIEVAL, GEN_AI_DATA_SOURCE_ID: self.data_source}

    def query(self, args: tuple, kwargs: dict) -> Any:
        """The call's query: the argument named like one, else the first text argument, else None."""
        arguments = self.arguments(args, kwargs)
        query = next((arguments[n] for n in _QUERY_NAMES if n in arguments), None)
        if query is None:
            query = next((v for v in arguments.values() if isinstance(v, str)), None)
        return query

    def record_input(self, span: Any, payload: Payload, args: tuple, kwargs: dict) -> None:
        if not payload.capture:
            return
        query = self.query(args, kwargs)
        if query is not None:
            payload.set(span, GEN_AI_RETRIEVAL_QUERY_TEXT, query)

    def record_output(self, span: Any, payload: Payload, result: Any) -> None:
        documents = _documents(result, with_content=payload.capture)
        if documents is not None:
            payload.set(span, GEN_AI_RETRIEVAL_DOCUMENTS, documents, content=False)


class _SourceRetrieval(_RetrievalSpec):
    """A framework retriever's `retrieval {data_source}` span (the query given, not bound from a signature)."""

    def __init__(self, data_source: str) -> None:
        self.data_source = data_source
        self.span_name = f"{RETRIEVAL} {data_source}"
        self.attributes = {GEN_AI_OPERATION_NAME: RETRIEVAL, GEN_AI_DATA_SOURCE_ID: data_source}

    def record_input(self, span: Any, payload: Payload, args: tuple, kwargs: dict) -> None:
        query = args[0]
        if payload.capture and query is not None:
            payload.set(span, GEN_AI_RETRIEVAL_QUERY_TEXT, query)


_sources: dict[str, _SourceRetrieval] = {}


def retrieval_call(data_source: str, query: Any) -> ToolCall | None:
    """Start a framework retriever's span; its result (documents) is recorded by `succeed`."""
    try:
        spec = _sources.get(data_source)
        if spec is None:
            if len(_sources) > 1024:
                _sources.clear()
            spec = _sources[data_source] = _SourceRetrieval(data_source)
        return ToolCall(_Call(spec, (query,), {}))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("tools.start_retrieval", exc)
        return None


_ID_FIELDS = ("id", "doc_id", "document_id", "_id", "uuid", "key")
_SCORE_FIELDS = ("score", "similarity", "relevance_score", "_score", "distance")
_CONTENT_FIELDS = ("content", "text", "page_content", "document", "body", "chunk", "snippet")
_LIST_FIELDS = ("documents", "results", "matches", "hits", "items", "data", "passages", "chunks", "nodes", "records", "sources",
                "contexts")


def _documents(result: Any, *, with_content: bool) -> list[dict[str, Any]] | None:
    """A retrieval's result as [{id, score, content}], whatever reasonable shape it came in."""
    if result is None:
        return None
    if isinstance(result, Mapping):
        listed = next((result[k] for k in _LIST_FIELDS if isinstance(result.get(k), (list, tuple))), None)
        if listed is None:  # {"query": ..., "<any name>": [...]}: the one list it holds
            lists = [v for v in result.values() if isinstance(v, (list, tuple))]
            listed = lists[0] if len(lists) == 1 else None
        items = listed if listed is not None else [result]
    elif isinstance(result, (list, tuple)):
        items = result
    else:
        items = [result]  # never iterate something else: it may be a one-shot iterator the caller needs
    return [_document(item, with_content) for item in items[:_MAX_DOCUMENTS]]


def _document(item: Any, with_content: bool) -> dict[str, Any]:
    score = None
    if isinstance(item, tuple) and len(item) == 2 and _is_number(item[1]):  # (document, score)
        item, score = item
    elif type(item) is tuple and len(item) == 3 and sum(_is_number(v) for v in item) == 1:
        # A row of a vector store: (id, score, content), (id, content, score), ... — the number is the score,
        # of the others the first is the id, the second the content.
        score = next(v for v in item if _is_number(v))
        doc_id, content = (v for v in item if not _is_number(v))
        doc = {"id": doc_id} if doc_id is not None else {}
        if _is_number(score):
            doc["score"] = float(score)
        if with_content and content is not None:
            doc["content"] = content
        return doc
    doc: dict[str, Any] = {}
    if isinstance(item, (str, bytes)):
        content = item
    elif isinstance(item, Mapping):
        doc_id = _first(item.get, _ID_FIELDS)
        score = score if score is not None else _first(item.get, _SCORE_FIELDS)
        content = _first(item.get, _CONTENT_FIELDS)
        if isinstance(item.get("metadata"), Mapping):
            if doc_id is None:
                doc_id = _first(item["metadata"].get, _ID_FIELDS + ("source",))
            if score is None:
                score = _first(item["metadata"].get, _SCORE_FIELDS)
        if doc_id is not None:
            doc["id"] = doc_id
        if content is None and doc_id is None and score is None:
            content = dict(item)  # no field known by name: the whole item, not an empty document
    else:
        get = functools.partial(_safe_getattr, item)
        doc_id = _first(get, _ID_FIELDS)
        score = score if score is not None else _first(get, _SCORE_FIELDS)
        content = _first(get, _CONTENT_FIELDS)
        metadata = get("metadata")
        if isinstance(metadata, Mapping):  # LangChain's Document keeps its id and score there
            if doc_id is None:
                doc_id = _first(metadata.get, _ID_FIELDS + ("source",))
            if score is None:
                score = _first(metadata.get, _SCORE_FIELDS)
        if doc_id is not None:
            doc["id"] = doc_id
        if content is None and doc_id is None and score is None:
            content = item
    if score is not None and _is_number(score):
        doc["score"] = float(score)
    if with_content and content is not None:
        doc["content"] = content
    return doc


def _first(get: Callable[[str], Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = get(name)
        if value is not None:
            return value
    return None


def _safe_getattr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - a property of the user's object may raise
        return None


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, (int, float)) or type(value).__module__ == "numpy"


# --- One call's span ---------------------------------------------------------------------------------------

_tracer_cache: tuple[Any, Any] = (None, None)


def _tracer() -> trace.Tracer:
    """The agentotel tracer of the configured provider, kept until the provider changes."""
    global _tracer_cache
    provider = _tracing.tracer_provider()
    cached_provider, tracer = _tracer_cache
    if provider is not cached_provider:
        tracer = _tracing.get_tracer()
        _tracer_cache = (provider, tracer)
    return tracer


class _Call:
    """One traced call: its span, the context that makes the span current, its payload."""

    __slots__ = ("spec", "span", "ctx", "payload", "items", "more", "adopted")

    def __init__(self, spec: _Spec, args: tuple, kwargs: dict, adopt: Any = None) -> None:
        self.spec = spec
        self.payload = Payload()
        self.adopted = adopt is not None  # another instrumentation's span of this call: completed, never ended here
        if adopt is None:
            span = _tracer().start_span(spec.span_name, kind=SpanKind.INTERNAL, attributes=spec.attributes)
        else:
            span = adopt
            span.set_attributes(spec.attributes)
        self.span = span
        self.ctx = trace.set_span_in_context(span)
        self.items: list[Any] | None = None
        self.more = 0
        try:
            # Before the call, so a tool that mutates its arguments cannot change what is recorded.
            spec.record_input(span, self.payload, args, kwargs)
        except BaseException:
            self.end()
            raise

    def end(self) -> None:
        if not self.adopted:
            end_span(self.span, "tools.end")

    def collect(self, item: Any) -> None:
        """Keep a yielded item (as it is now: the generator may change it later) for the result."""
        if not self.payload.capture and not isinstance(self.spec, _RetrievalSpec):
            return
        if self.items is None:
            self.items = []
        if len(self.items) < _MAX_YIELDED:
            self.items.append(to_json_safe(item))
        else:
            self.more += 1

    def yielded(self) -> list[Any]:
        items = list(self.items or [])
        if self.more:
            items.append(f"[{self.more} more items]")
        return items

    def succeed(self, result: Any) -> None:
        try:
            # A result already on the span was recorded by the instrumentation that completed this call as its
            # own (an MCP call inside an Agents SDK tool): the tool's own answer, which the framework's text of
            # it for the model (one shape for one content block, another for two) does not replace.
            if self.adopted or _recorded_result(self.span) is None:
                self.spec.record_output(self.span, self.payload, result)
            self.payload.apply_markers(self.span)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("tools.result", exc)
        self.end()

    def fail(self, exc: BaseException) -> None:
        try:
            record_error(self.span, exc, self.payload)
            self.payload.apply_markers(self.span)
        except Exception as internal:  # noqa: BLE001
            report_internal_error("tools.error", internal)
        self.end()


def _recorded_result(span: Any) -> Any:
    attributes = getattr(span, "attributes", None)
    return attributes.get(GEN_AI_TOOL_CALL_RESULT) if attributes else None


def _begin(spec: _Spec, args: tuple, kwargs: dict) -> _Call | None:
    marker = context.get_value(_FRAMEWORK_TOOL)
    if marker is not None and marker[0] is trace.get_current_span() and marker[1] == getattr(spec, "name", None):
        return None  # the framework's tool call of this very tool records it (see ToolCall)
    try:
        return _Call(spec, args, kwargs)
    except Exception as exc:  # noqa: BLE001 - the tool runs untraced
        report_internal_error("tools.start", exc)
        return None


def _finish(call: _Call | None, exc: BaseException | None, result: Any = None) -> None:
    if call is None:
        return
    try:
        if exc is None:
            call.succeed(result)
        else:
            call.fail(exc)
    except Exception as internal:  # noqa: BLE001
        report_internal_error("tools.finish", internal)


def _replayed(spec: _Spec, args: tuple, kwargs: dict) -> tuple[bool, Any]:
    """(True, recorded result) when a replay (`agentotel.replay`) answers this tool call instead of its body.

    The replay's own exceptions (a recorded failure, a forbidden call) are the tool's outcome: they
    propagate like any error of the tool.
    """
    try:
        if isinstance(spec, _RetrievalSpec):
            serve, key = _replay.serve_retrieval, (spec.data_source, to_json_safe(spec.query(args, kwargs)))
        else:
            serve, key = _replay.serve_tool, (spec.name, to_json_safe(spec.arguments(args, kwargs)))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("tools.replay", exc)
        return False, None
    return serve(*key)


def _sync_wrapper(fn: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _begin(spec, args, kwargs)
        if call is None:
            if _replay.current() is not None:
                served, value = _replayed(spec, args, kwargs)
                if served:
                    return value
            return fn(*args, **kwargs)
        token = context.attach(call.ctx)
        try:
            if _replay.current() is None:  # one contextvar read when no replay is active
                result = fn(*args, **kwargs)
            else:
                served, result = _replayed(spec, args, kwargs)
                if not served:
                    result = fn(*args, **kwargs)
        except BaseException as exc:
            context.detach(token)
            _finish(call, exc)
            raise
        context.detach(token)
        _finish(call, None, result)
        return result

    return wrapper


def _async_wrapper(fn: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _begin(spec, args, kwargs)
        if call is None:
            if _replay.current() is not None:
                served, value = _replayed(spec, args, kwargs)
                if served:
                    return value
            return await fn(*args, **kwargs)
        token = context.attach(call.ctx)
        try:
            if _replay.current() is None:
                result = await fn(*args, **kwargs)
            else:
                served, result = _replayed(spec, args, kwargs)
                if not served:
                    result = await fn(*args, **kwargs)
        except BaseException as exc:
            context.detach(token)
            _finish(call, exc)
            raise
        context.detach(token)
        _finish(call, None, result)
        return result

    return wrapper


def _attach(call: _Call | None) -> Any:
    return None if call is None else context.attach(call.ctx)


def _detach(token: Any) -> None:
    if token is not None:
        context.detach(token)


def _collect(call: _Call | None, item: Any) -> None:
    if call is None:
        return
    try:
        call.collect(item)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("tools.collect", exc)


def _generator(fn: Callable[..., Any], spec: _Spec, args: tuple, kwargs: dict, items: Callable[[Any], Any]) -> Any:
    """The generator a wrapper drives: a replay's recorded items when it answers this call, else the body's."""
    if _replay.current() is not None:
        served, value = _replayed(spec, args, kwargs)
        if served:
            return items(value)
    return fn(*args, **kwargs)


def _recorded_items(value: Any) -> list[Any]:
    """What a generator tool yielded, as its span recorded it (a list; None: nothing)."""
    return value if isinstance(value, list) else [] if value is None else [value]


def _items(value: Any) -> Any:
    yield from _recorded_items(value)


async def _async_items(value: Any) -> Any:
    for item in _recorded_items(value):
        yield item


def _generator_wrapper(fn: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    # The span starts when iteration starts (the body runs), and ends exactly once: on exhaustion, an
    # error, close(), or garbage collection (which closes the generator). The span is current only
    # while the body runs, never between items, so the caller's context is left alone.
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _begin(spec, args, kwargs)
        token = _attach(call)
        try:
            inner = _generator(fn, spec, args, kwargs, _items)
        except BaseException as exc:  # a replay's answer to this call: a recorded failure, a forbidden call
            _detach(token)
            _finish(call, exc)
            raise
        _detach(token)
        throw: BaseException | None = None
        sent: Any = None
        while True:
            token = _attach(call)
            try:
                item = inner.send(sent) if throw is None else inner.throw(throw)
            except StopIteration as stop:
                _detach(token)
                _finish(call, None, call.yielded() if call else None)
                return stop.value
            except BaseException as exc:
                _detach(token)
                _finish(call, exc)
                raise
            _detach(token)
            _collect(call, item)
            throw = None
            try:
                sent = yield item
            except GeneratorExit:
                token = _attach(call)
                try:
                    inner.close()
                finally:
                    _detach(token)
                    _finish(call, None, call.yielded() if call else None)
                raise
            except BaseException as exc:  # thrown in by the caller: the tool's body decides what happens
                throw = exc

    return wrapper


def _async_generator_wrapper(fn: Callable[..., Any], spec: _Spec) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _begin(spec, args, kwargs)
        token = _attach(call)
        try:
            inner = _generator(fn, spec, args, kwargs, _async_items)
        except BaseException as exc:
            _detach(token)
            _finish(call, exc)
            raise
        _detach(token)
        throw: BaseException | None = None
        sent: Any = None
        while True:
            token = _attach(call)
            try:
                item = await (inner.asend(sent) if throw is None else inner.athrow(throw))
            except StopAsyncIteration:
                _detach(token)
                _finish(call, None, call.yielded() if call else None)
                return
            except BaseException as exc:
                _detach(token)
                _finish(call, exc)
                raise
            _detach(token)
            _collect(call, item)
            throw = None
            try:
                sent = yield item
            except GeneratorExit:
                token = _attach(call)
                try:
                    await inner.aclose()
                finally:
                    _detach(token)
                    _finish(call, None, call.yielded() if call else None)
                raise
            except BaseException as exc:
                throw = exc

    return wrapper


# --- A framework's context parameters ---------------------------------------------------------------------

# Frameworks hand a tool these (by its annotations); the model never chooses them.
_CONTEXT_MODULES = ("agents.", "pydantic_ai.", "langchain_core.", "langchain.", "langgraph.", "mcp.")
_CONTEXT_WORDS = ("RunContext", "ToolContext", "RunnableConfig", "CallbackManager", "Callbacks", "Injected")


def _is_framework_context(annotation: Any, depth: int = 0) -> bool:
    """Whether a parameter's type hint is a framework's context object or an injected value."""
    if annotation is inspect.Parameter.empty or annotation is None or depth > 4:
        return False
    if isinstance(annotation, str):  # an unresolved forward reference: judge by the names in it
        return any(word in annotation for word in _CONTEXT_WORDS)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        return any(_is_injected(extra) for extra in extras) or _is_framework_context(base, depth + 1)
    if origin is typing.Union or origin is types.UnionType:
        return any(_is_framework_context(a, depth + 1) for a in typing.get_args(annotation) if a is not type(None))
    cls = origin if isinstance(origin, type) else annotation
    if not isinstance(cls, type):
        return False
    for base in cls.__mro__:
        module = getattr(base, "__module__", "") or ""
        if module.startswith(_CONTEXT_MODULES) and any(word in base.__name__ for word in _CONTEXT_WORDS[:4]):
            return True
        if base.__name__ == "Context" and module.startswith("mcp."):  # an MCP server's request context
            return True
    return False


def _is_injected(extra: Any) -> bool:
    """LangChain's InjectedToolCallId / InjectedState / InjectedStore markers (a class or an instance)."""
    cls = extra if isinstance(extra, type) else type(extra)
    return any(b.__name__.startswith("Injected") and (b.__module__ or "").startswith(_CONTEXT_MODULES) for b in cls.__mro__)


# --- The JSON schema of a tool -----------------------------------------------------------------------------


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back to the raw annotations
        return dict(getattr(fn, "__annotations__", {}) or {})


def _tool_schema(name: str, description: str | None, parameters: list[inspect.Parameter], hints: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    additional = False
    for p in parameters:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            additional = True
            continue
        annotation = hints.get(p.name, p.annotation)
        prop = _type_schema(annotation) if annotation is not inspect.Parameter.empty else {}
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            prop = {"type": "array", "items": prop}
        elif p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            prop = {**prop, "default": to_json_safe(p.default)}
        properties[p.name] = prop
    parameters_schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if additional:
        parameters_schema["additionalProperties"] = True
    return {"name": name, "description": description or "", "parameters": parameters_schema}


_SIMPLE_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
    dict: {"type": "object"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    set: {"type": "array", "uniqueItems": True},
    frozenset: {"type": "array", "uniqueItems": True},
    Any: {},
}


def _type_schema(annotation: Any, depth: int = 0) -> dict[str, Any]:  # noqa: C901 - one dispatch over type forms
    """A JSON schema for a type hint; {} (anything) for what has no JSON meaning."""
    if depth > 8:
        return {}
    try:
        simple = _SIMPLE_TYPES.get(annotation)
    except TypeError:  # unhashable annotation
        simple = None
    if simple is not None:
        return dict(simple)
    if isinstance(annotation, str):
        return {"x-annotation": annotation}  # an unresolved forward reference: keep its text
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = _type_schema(args[0], depth + 1)
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": notes[0]} if notes else schema
    if origin is typing.Union or origin is types.UnionType:
        options = [_type_schema(a, depth + 1) for a in args]
        return {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": [to_json_safe(a) for a in args]}
    if origin in (list, set, frozenset, typing.Sequence, typing.Iterable, typing.Collection):
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = _type_schema(args[0], depth + 1)
        if origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0], depth + 1)}
        return {"type": "array", "prefixItems": [_type_schema(a, depth + 1) for a in args]}
    if origin in (dict, typing.Mapping, typing.MutableMapping):
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _type_schema(args[1], depth + 1)
        return schema
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return {"enum": [to_json_safe(m.value) for m in annotation]}
        for base, schema in ((bool, {"type": "boolean"}), (int, {"type": "integer"}), (float, {"type": "number"}), (str, {"type": "string"})):
            if issubclass(annotation, base):
                return dict(schema)
        model_schema = getattr(annotation, "model_json_schema", None)
        if callable(model_schema):  # pydantic v2 model
            try:
                return to_json_safe(model_schema())
            except Exception:  # noqa: BLE001
                return {"type": "object", "title": annotation.__name__}
        if dataclasses.is_dataclass(annotation) or typing.is_typeddict(annotation):
            hints = _type_hints(annotation)
            return {
                "type": "object",
                "title": annotation.__name__,
                "properties": {k: _type_schema(v, depth + 1) for k, v in hints.items()},
            }
        return {"type": "object", "title": annotation.__name__}
    return {}
