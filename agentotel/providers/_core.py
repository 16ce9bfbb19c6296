"""The one generic wrapper every provider adapter plugs into.

An adapter (openai.py, anthropic.py) only declares `Patch`es: which SDK method to wrap, how to read
its request (`Request`), its response (`Response`) and, for streams, its events (an accumulator).
Everything else lives here: the `chat {model}` / `embeddings {model}` CLIENT span with the
sampling-relevant attributes at start, request parameters, response, usage, cost, metrics, messages
through the content policy, error handling, the pending tool calls of the run, and patching itself
(idempotent, reversible, applied when the SDK is imported later).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Protocol
from urllib.parse import urlsplit

import wrapt
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY_PLAIN
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation import _SPAN_KEY  # the key trace.set_span_in_context sets

from agentotel import _config, _context, _json, _tracing
from agentotel._internal import internal_errors, report_internal_error
from agentotel.content import Payload
from agentotel.cost import cost_usd
from agentotel.semconv import (
    AGENTOTEL_COST_USD,
    AGENTOTEL_STREAM_ABANDONED,
    ERROR_TYPE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS,
    GEN_AI_RESPONSE_ID,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOKEN_TYPE,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
    METRIC_AGENTOTEL_CLIENT_COST,
    METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
    METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
    SERVER_ADDRESS,
    SERVER_PORT,
)

log = logging.getLogger("agentotel.providers")

ABANDONED_STREAM = "abandoned_stream"

# The adapters, by the top-level module of the client library they patch.
ADAPTERS = {
    "openai": "agentotel.providers.openai",
    "anthropic": "agentotel.providers.anthropic",
    "google.genai": "agentotel.providers.google_genai",
    "botocore": "agentotel.providers.bedrock",
    "aiobotocore": "agentotel.providers.bedrock",  # async Bedrock: the same adapter, its own patch
}
# gen_ai.provider.name -> the instrumentation scope of its spans (`agentotel.openai` for the rest:
# openai, Azure and any OpenAI-compatible server).
_SCOPES = {
    "anthropic": "agentotel.anthropic",
    "gcp.gemini": "agentotel.google_genai",
    "gcp.vertex_ai": "agentotel.google_genai",
    "aws.bedrock": "agentotel.bedrock",
}

# OTel's runtime context, when it is the default one (a ContextVar): the variable's own get / set / reset,
# called directly. The API's get_current, attach and detach are two Python calls each, on every model call
# (see ModelCall on what a call costs there); a reset that fails goes to the API's detach, which logs it
# as it would have (and raises nothing), so the outcome is the API's.
try:
    from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext

    _runtime = otel_context._RUNTIME_CONTEXT
    if type(_runtime) is not ContextVarsRuntimeContext:
        raise TypeError(type(_runtime).__name__)
    _get_current, _attach, _reset = _runtime._current_context.get, _runtime._current_context.set, _runtime._current_context.reset
except (ImportError, AttributeError, TypeError):  # another runtime context (or layout): the API's own functions
    _get_current, _attach, _reset = otel_context.get_current, otel_context.attach, otel_context.detach

# Set in the OTel context while one of our model spans is active: a nested patched call (parse
# calling create, a wrapper around a wrapper) then records nothing of its own.
_IN_MODEL_CALL = otel_context.create_key("agentotel-model-call")

# Spec bucket boundaries (GenAI semantic conventions v1.41).
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]


# --- What an adapter tells the core ------------------------------------------------------------------


# Slotted (no instance dict to make and fill): every model call makes one of each.
@dataclass(slots=True)
class Usage:
    """Token counts of one call; `input_tokens` includes cache reads and writes (the GenAI convention)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(slots=True)
class Request:
    """A model request as an adapter read it."""

    operation: str  # "chat" or "embeddings"
    provider: str  # gen_ai.provider.name
    model: str | None
    attributes: dict[str, Any] = field(default_factory=dict)  # request parameters, server.*, stream
    stream: bool = False
    input_messages: list[dict[str, Any]] | None = None
    system_instructions: list[dict[str, Any]] | None = None
    tool_definitions: list[dict[str, Any]] | None = None  # GenAI shape: {"type", "name", "description", "parameters"}


@dataclass(slots=True)
class Response:
    """A model response (or what a stream accumulated) as an adapter read it."""

    id: str | None = None
    model: str | None = None
    finish_reasons: list[str] = field(default_factory=list)
    usage: Usage | None = None
    output_messages: list[dict[str, Any]] | None = None
    tool_calls: list[_context.PendingToolCall] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)


class Accumulator(Protocol):
    """Reads one stream's events; `response()` is what they added up to (callable at any point).

    It may also define `iterate(stream, call, end)`: a generator yielding the stream's events, each
    read on its way (the stream proxy's sync loop then runs no call per event), that notes the first
    event on `call` and calls `end()` / `end(exc)` when the stream ends or fails (not on close).
    """

    def chunk(self, event: Any) -> None: ...

    def response(self) -> Response: ...


@dataclass(frozen=True)
class Patch:
    """One SDK method to wrap: `module` and `target` ("Class.method") plus how to read it.

    kind "call": the method returns a response, a stream, or a raw response wrapping either.
    kind "stream_manager": the method returns a context manager whose `__enter__` yields a helper
    stream (anthropic's `messages.stream`) reading a raw stream from its `_raw_stream` attribute.

    A method shared by calls that are not model calls (botocore's `_make_api_call`) names its
    positional parameters in `positional` (they reach `request` as keywords), has `request` return
    None for the calls it does not trace, and may take over what the caller gets back with
    `returned(call, result)` (a result holding a stream, or a body read once, needs the request).
    """

    module: str
    target: str
    request: Callable[[Any, dict[str, Any]], Request | None]
    response: Callable[[Any], Response]
    accumulator: Callable[[Request], Accumulator] | None = None
    kind: str = "call"
    positional: tuple[str, ...] = ()
    returned: Callable[[ModelCall, Any], Any] | None = None


# --- Small helpers adapters share ---------------------------------------------------------------------


_SENTINELS = frozenset({"NotGiven", "Omit"})


def given(value: Any) -> bool:
    """False for None and the SDKs' NOT_GIVEN / omit sentinels."""
    return value is not None and type(value).__name__ not in _SENTINELS


def put(attributes: dict[str, Any], name: str, value: Any, kind: type | tuple[type, ...] | None = None) -> None:
    """Set `name` when `value` was given (and, with `kind`, has that type)."""
    if given(value) and (kind is None or (isinstance(value, kind) and not isinstance(value, bool) or kind is bool)):
        attributes[name] = value


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """`obj.name` or `obj[name]`: SDK objects and plain dicts alike."""
    if obj is None:
        return default
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    if value is None:
        return default
    kind = type(value)
    if kind is str or kind is int or kind is list:  # the usual answers: no sentinel (skips the name test)
        return value
    return default if kind.__name__ in _SENTINELS else value


def capturing() -> bool:
    """Whether message content may be recorded (adapters skip building it otherwise)."""
    settings = _config._current  # `_config.current()`, its usual case inline: every model call asks
    return (settings if settings is not None else _config.current()).capture_content


parse_arguments = _json.parse  # tool-call arguments as parsed JSON when they are JSON text; else as given


def tool_choice(value: Any) -> str | None:
    """A request's tool choice as one string: `auto`, `none`, `required`, or a named tool as canonical JSON."""
    if not given(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"type"} and isinstance(value["type"], str):
        return value["type"]  # anthropic's {"type": "auto"}
    return _context.canonical_arguments(value)


def instructions_text(request: "Request") -> str | None:
    """The instructions a request carries: its system instructions, else its leading system/developer
    messages (chat completions keep the system prompt among the messages), as text."""
    parts = request.system_instructions
    if not parts:
        parts = []
        for message in request.input_messages or ():
            if message.get("role") not in ("system", "developer"):
                break
            parts.extend(message.get("parts") or ())
    texts = [p.get("content") for p in parts if isinstance(p, dict) and isinstance(p.get("content"), str)]
    return "\n".join(texts) if texts else None


def text_part(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def tool_call_part(call_id: str | None, name: str | None, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": parse_arguments(arguments)}


def tool_response_part(call_id: str | None, response: Any) -> dict[str, Any]:
    return {"type": "tool_call_response", "id": call_id, "response": response}


def reasoning_part(content: str) -> dict[str, Any]:
    return {"type": "reasoning", "content": content}


def media_part(modality: str, *, mime_type: str | None = None, data: Any = None, uri: str | None = None) -> dict[str, Any]:
    """A blob (inline data) or uri part; data URIs become blobs."""
    if uri is not None and uri.startswith("data:") and "," in uri:
        header, data = uri.split(",", 1)
        mime_type = mime_type or header[5:].split(";", 1)[0] or None
        uri = None
    if uri is not None:
        part = {"type": "uri", "modality": modality, "uri": uri}
    else:
        part = {"type": "blob", "modality": modality, "content": data}
    if mime_type:
        part["mime_type"] = mime_type
    return part


def server_attributes(base_url: Any) -> dict[str, Any]:
    """server.address / server.port of a client's base URL (any base_url, Azure included)."""
    return {} if base_url is None else dict(_server_attributes(str(base_url)))


@lru_cache(maxsize=256)
def _server_attributes(base_url: str) -> tuple[tuple[str, Any], ...]:
    parts = urlsplit(base_url)
    if not parts.hostname:
        return ()
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return ((SERVER_ADDRESS, parts.hostname),) + (((SERVER_PORT, port),) if port else ())


def error_type(exc: BaseException) -> str:
    """error.type for an exception: the one rule every agentotel span uses (runs.error_type)."""
    from agentotel.runs import error_type as qualified_name

    return qualified_name(exc)


def record_error(span: Any, exc: BaseException, payload: Any) -> None:
    """Status, error.type and exception event, by the content policy (runs.record_error)."""
    from agentotel.runs import record_error as record

    record(span, exc, payload)


# --- Metrics -----------------------------------------------------------------------------------------


class _Instruments:
    def __init__(self, meter: Any) -> None:
        self.tokens = meter.create_histogram(
            METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.duration = meter.create_histogram(
            METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.cost = meter.create_counter(METRIC_AGENTOTEL_CLIENT_COST, unit="USD", description="Cost of model calls.")


# (meter provider, its instruments, and what `_tracing.meter_provider()` found it from: agentotel's
# configured provider and the metrics API's global one)
_instruments: tuple[Any, _Instruments | None, Any, Any] | None = None


def _metrics() -> _Instruments | None:
    """The instruments, or None while no SDK MeterProvider is configured (nothing would be recorded)."""
    global _instruments
    cached = _instruments
    api = _tracing._metrics_api
    # Once per model call: while neither provider `meter_provider()` reads has changed, its answer has
    # not either (with both unset it is the API's proxy, or a provider it loads and then sets as the global).
    if cached is not None and cached[2] is _tracing._meter_provider and api is not None and cached[3] is getattr(api, "_METER_PROVIDER", None):
        return cached[1]
    provider = _tracing.meter_provider()
    if cached is None or cached[0] is not provider:
        # Kept per provider, "none" included: the API's proxy / no-op providers record nothing.
        none = _tracing._meter_provider is None and type(provider).__module__.startswith("opentelemetry.metrics")
        instruments = None if none else _Instruments(_tracing.get_meter("agentotel.providers"))
    else:
        instruments = cached[1]
    cached = _instruments = (provider, instruments, _tracing._meter_provider, getattr(api, "_METER_PROVIDER", None))
    return cached[1]


_tracers: dict[tuple[Any, str], Any] = {}
_finish_lock = threading.Lock()


def _tracer(provider: str) -> Any:
    """The tracer of scope `agentotel.<library>`, kept until the configured provider changes."""
    tracer_provider = _tracing._tracer_provider or trace.get_tracer_provider()  # _tracing.tracer_provider(), inline
    key = (tracer_provider, provider)
    tracer = _tracers.get(key)
    if tracer is None:
        if len(_tracers) > 32:  # providers replaced many times (tests): forget the old ones
            _tracers.clear()
        scope = _SCOPES.get(provider, "agentotel.openai")
        tracer = _tracers[key] = _tracing.get_tracer(scope)
    return tracer


# --- One model call ------------------------------------------------------------------------------------


class ModelCall:
    """The span of one model call, from the request to the one and only `finish`."""

    # The per-call path (here, `finish`, the wrappers) is written with few calls of our own: between
    # the request and the end of a call the SDK runs long enough to push our code out of the CPU
    # caches, and a function run cold costs several times what it costs in a loop (measured around the
    # benchmark's streamed call: 30 distinct small functions added ~25 µs, one called 30 times ~0).
    __slots__ = ("request", "span", "payload", "run", "start", "first_chunk", "stopped", "ended", "_response_reader", "_context", "_inputs")

    def __init__(self, patch: Patch, request: Request, parent: otel_context.Context | None = None) -> None:
        self.request = request
        self._response_reader = patch.response
        self.run = _context.current_run()
        self.start = time.monotonic()
        self.first_chunk: float | None = None
        self.stopped: int | None = None  # wall-clock ns when the caller last left its loop early
        self.ended = False  # read by the proxies (a plain slot, not a property: they ask per stream)
        attributes = {GEN_AI_OPERATION_NAME: request.operation, GEN_AI_PROVIDER_NAME: request.provider}
        if request.model:
            attributes[GEN_AI_REQUEST_MODEL] = request.model
        attributes.update(request.attributes)
        name = f"{request.operation} {request.model}" if request.model else request.operation
        # `_tracer(request.provider)`, its usual case inline (see the note above on what a call costs).
        tracer = _tracers.get((_tracing._tracer_provider or trace.get_tracer_provider(), request.provider))
        if tracer is None:
            tracer = _tracer(request.provider)
        # The context the wrapper found current, passed on: the SDK would look it up twice more.
        span = self.span = tracer.start_span(name, parent, SpanKind.CLIENT, attributes)
        # The context the SDK call runs in (`context()`), made here: no method entered for it on the call's path.
        # One new Context with both values (set_span_in_context, then set_value, would copy it twice).
        values = dict(_get_current() if parent is None else parent)
        values[_SPAN_KEY] = span
        values[_IN_MODEL_CALL] = True
        self._context = otel_context.Context(values)
        self._inputs: dict[str, str] | None = None
        try:
            payload = self.payload = Payload()
            # (an SDK span just started records: no method call for it)
            if type(span) is _tracing._SdkSpan or span.is_recording():
                # Encoded now (the request as it was sent, first in the span's budget), set on the span
                # with the response's attributes in `finish`: one SDK call for all of them.
                inputs = self._inputs = {}
                if request.input_messages:
                    # Messages are bounded one by one: the store keeps each once (store/messages.py).
                    encoded = payload.encode_messages(request.input_messages)
                    if encoded is not None:
                        inputs[GEN_AI_INPUT_MESSAGES] = encoded
                # Sent again as they are on every call of a run: recognised by their text (Payload.encode).
                if request.system_instructions:
                    encoded = payload.encode(request.system_instructions, repeated=True)
                    if encoded is not None:
                        inputs[GEN_AI_SYSTEM_INSTRUCTIONS] = encoded
                if request.tool_definitions:
                    encoded = payload.encode(request.tool_definitions, repeated=True)
                    if encoded is not None:
                        inputs[GEN_AI_TOOL_DEFINITIONS] = encoded
            run = self.run
            if run is not None:
                if request.tool_definitions:
                    self._record_tool_definitions(request)
                if run.instructions is None and request.operation == "chat":
                    # The environment keeps a hash of the run's first system prompt (captured content only).
                    run.instructions = instructions_text(request)
        except BaseException:
            span.end()  # the call runs untraced; never leave a span open
            raise

    def _record_tool_definitions(self, request: Request) -> None:
        definitions = [d for d in request.tool_definitions or () if d.get("name")]
        self.run.record_tool_definitions(  # type: ignore[union-attr]
            {d["name"]: d.get("parameters") for d in definitions},
            {d["name"]: d["description"] for d in definitions if d.get("description")},
        )

    def context(self) -> otel_context.Context:
        """The context the SDK call runs in: our span current, nested patched calls marked (see _IN_MODEL_CALL).

        Built on the context current when the call began, its span's parent context (the wrappers attach
        it at once; a stream manager's request, sent later in `__enter__`, runs under it too).
        """
        return self._context

    def read_response(self, result: Any) -> Response | None:
        # Plain try/except on the per-call path: the internal_errors context manager costs more.
        try:
            return self._response_reader(result)
        except Exception as exc:  # noqa: BLE001 - telemetry must not break the call
            report_internal_error("providers.read_response", exc)
            return None

    def chunk_seen(self) -> None:
        if self.first_chunk is None:
            self.first_chunk = time.monotonic()

    def stopped_reading(self, end: Callable[..., None]) -> None:
        """The caller left its loop over the stream early (`break`, or an exception in the loop's body).

        Not the end of the stream: the caller may read on. If it does not, the span ends when the run
        ends (which knows whether that exit was a failure) or when the stream is collected, at this time.
        """
        self.stopped = time.time_ns()
        if self.run is not None and not self.ended:
            self.run.stream_left(self, end)

    def finish(
        self, response: Response | None = None, error: BaseException | None = None, error_kind: str | None = None
    ) -> None:
        """End the span once: record the response, usage, cost, metrics and tool calls; later calls do nothing."""
        with _finish_lock:  # one lock for every call: held for a test-and-set only
            if self.ended:
                return
            self.ended = True
        end_time = None
        left = False
        if error_kind is not None and error_kind == ABANDONED_STREAM:  # (None == str: the generic compare, cold)
            # A stream the caller stopped reading ends when it stopped. After chunks were read, in a run
            # that did not fail (or outside any run), that was a deliberate `break`: not an error.
            end_time = self.stopped
            run = self.run
            if self.first_chunk is not None and not (run is not None and run.failed):
                error_kind, left = None, True
        # What the call recorded, here rather than in a method of its own (see the note on the per-call path above).
        try:
            span, request = self.span, self.request
            duration = time.monotonic() - self.start
            usage = response.usage if response is not None else None
            cost = None
            if response is not None:
                if response.tool_calls and self.run is not None:
                    self.run.record_tool_calls(response.tool_calls)
                if usage is not None and usage.input_tokens is not None:
                    cost = cost_usd(
                        request.provider,
                        response.model or request.model,
                        input_tokens=usage.input_tokens or 0,
                        output_tokens=usage.output_tokens or 0,
                        cache_read_tokens=usage.cache_read_tokens or 0,
                        cache_write_tokens=usage.cache_write_tokens or 0,
                    )
            kind = error_kind or (error_type(error) if error is not None else None)
            if span.is_recording():
                payload = self.payload
                attributes = self._inputs
                if attributes is None:  # (the span did not record when the call began)
                    attributes = {}
                if response is not None:
                    # The response's attributes: straight-line tests, no loop over (name, value) pairs, and
                    # no function of their own (see the note on the per-call path above).
                    if response.id:
                        attributes[GEN_AI_RESPONSE_ID] = response.id
                    if response.model:
                        attributes[GEN_AI_RESPONSE_MODEL] = response.model
                    if response.finish_reasons:
                        # The response's own list: the SDK copies a sequence into a tuple as it sets it.
                        attributes[GEN_AI_RESPONSE_FINISH_REASONS] = response.finish_reasons
                    if usage is not None:
                        if usage.input_tokens is not None:
                            attributes[GEN_AI_USAGE_INPUT_TOKENS] = usage.input_tokens
                        if usage.output_tokens is not None:
                            attributes[GEN_AI_USAGE_OUTPUT_TOKENS] = usage.output_tokens
                        if usage.cache_read_tokens is not None:
                            attributes[GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read_tokens
                        if usage.cache_write_tokens is not None:
                            attributes[GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write_tokens
                        if usage.reasoning_tokens is not None:
                            attributes[GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = usage.reasoning_tokens
                    if response.attributes:
                        attributes.update(response.attributes)
                    if response.output_messages:
                        encoded = payload.encode(response.output_messages)
                        if encoded is not None:
                            attributes[GEN_AI_OUTPUT_MESSAGES] = encoded
                if self.first_chunk is not None:
                    attributes[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = self.first_chunk - self.start
                if cost is not None:
                    attributes[AGENTOTEL_COST_USD] = cost
                if attributes:
                    _tracing.set_attributes(span, attributes)  # one call for all of them, uncleaned when plain
                if error is not None:
                    # The message and traceback may quote the request: content, so they follow the policy.
                    record_error(span, error, self.payload)
                    if error_kind is not None:
                        span.set_attribute(ERROR_TYPE, error_kind)
                elif kind is not None:
                    span.set_attribute(ERROR_TYPE, kind)
                    span.set_status(Status(StatusCode.ERROR, kind))
                if payload.redactions or payload.truncated:
                    payload.apply_markers(span)
            # `_metrics()`, its usual case inline: the instruments kept while neither meter provider changed.
            cached, api = _instruments, _tracing._metrics_api
            if cached is not None and cached[2] is _tracing._meter_provider and api is not None and cached[3] is getattr(api, "_METER_PROVIDER", None):
                instruments = cached[1]
            else:
                instruments = _metrics()
            if instruments is not None:
                self._record_metrics(instruments, response, usage, cost, duration, kind)
            if left:
                span.set_attribute(AGENTOTEL_STREAM_ABANDONED, True)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("providers.finish", exc)
        finally:
            try:  # inline, not end_span(): see the note on the per-call path above
                self.span.end(end_time)
            except Exception as exc:  # noqa: BLE001 - a failing span processor must not reach the caller
                report_internal_error("providers.end", exc)

    def _record_metrics(
        self,
        instruments: _Instruments,
        response: Response | None,
        usage: Usage | None,
        cost: float | None,
        duration: float,
        kind: str | None,
    ) -> None:
        request = self.request
        attributes: dict[str, Any] = {GEN_AI_OPERATION_NAME: request.operation, GEN_AI_PROVIDER_NAME: request.provider}
        if request.model:
            attributes[GEN_AI_REQUEST_MODEL] = request.model
        if response is not None and response.model:
            attributes[GEN_AI_RESPONSE_MODEL] = response.model
        for key in (SERVER_ADDRESS, SERVER_PORT):
            if key in request.attributes:
                attributes[key] = request.attributes[key]
        if kind is not None:
            attributes[ERROR_TYPE] = kind
        instruments.duration.record(duration, attributes)
        if usage is not None:
            if usage.input_tokens is not None:
                instruments.tokens.record(usage.input_tokens, {**attributes, GEN_AI_TOKEN_TYPE: "input"})
            if usage.output_tokens is not None:
                instruments.tokens.record(usage.output_tokens, {**attributes, GEN_AI_TOKEN_TYPE: "output"})
        if cost is not None:
            instruments.cost.add(cost, attributes)


# --- The wrappers ------------------------------------------------------------------------------------------


def _begin(patch: Patch, instance: Any, args: tuple, kwargs: dict[str, Any]) -> ModelCall | None:
    """A new model call, or None when instrumentation is suppressed, one of ours is already active or this is no model call."""
    # OTel's is_instrumentation_enabled() and our own marker, from one look at the context.
    current = _get_current()
    if (
        current.get(_SUPPRESS_INSTRUMENTATION_KEY)
        or current.get(_SUPPRESS_INSTRUMENTATION_KEY_PLAIN)
        or current.get(_IN_MODEL_CALL)
    ):
        return None
    try:
        if patch.positional and args:
            kwargs = {**dict(zip(patch.positional, args)), **kwargs}
        request = patch.request(instance, kwargs)
        return ModelCall(patch, request, current) if request is not None else None
    except Exception as exc:  # noqa: BLE001 - the call then runs untraced
        report_internal_error("providers.begin", exc)
        return None


_RESPONSE, _AWAITABLE, _RAW, _STREAM = range(4)
# What a result type is: asking a pydantic model for attributes it lacks (`hasattr`) is slow, and a
# client returns a handful of types, all of which answer the same for every instance.
_result_kinds: dict[type, int] = {}


def _result_kind(result: Any) -> int:
    """The kind of a result whose type is not in `_result_kinds` yet (remembered there when it can be)."""
    if inspect.isawaitable(result) and not _stream.is_stream(result):
        kind = _AWAITABLE
    elif _stream.is_raw_response(result):
        kind = _RAW
    elif _stream.is_stream(result):
        kind = _STREAM
    else:
        kind = _RESPONSE
    # A generator's awaitability is per object (types.coroutine), so those are never remembered.
    if not inspect.isgenerator(result) and len(_result_kinds) < 256:
        _result_kinds[type(result)] = kind
    return kind


def _returned(call: ModelCall, patch: Patch, result: Any) -> Any:
    """What the user gets back: the result itself, or a proxy that finishes the span later."""
    try:
        if patch.returned is not None:
            return patch.returned(call, result)
        kind = _result_kinds.get(type(result))
        if kind is None:
            kind = _result_kind(result)
        if kind == _RESPONSE:
            try:  # call.read_response(result), inline (see ModelCall)
                response = patch.response(result)
            except Exception as exc:  # noqa: BLE001 - telemetry must not break the call
                report_internal_error("providers.read_response", exc)
                response = None
            call.finish(response)
            return result
        if kind == _STREAM and patch.accumulator is not None:  # _stream.wrap_stream, inline (see ModelCall)
            return _stream.StreamProxy(result, call, patch.accumulator(call.request))
        if kind == _AWAITABLE:
            return _awaited(call, patch, result)  # an async method we took for a sync one
        if kind == _RAW:
            return _stream.wrap_raw_response(result, call, patch)
        return _stream.wrap_stream(result, call, patch)
    except Exception as exc:  # noqa: BLE001 - our failure: end the span, hand the result back untouched
        report_internal_error("providers.returned", exc)
        call.finish()
        return result


async def _awaited(call: ModelCall, patch: Patch, awaitable: Any) -> Any:
    try:
        result = await awaitable
    except BaseException as exc:
        call.finish(error=exc)
        raise
    return _returned(call, patch, result)


def _sync_wrapper(patch: Patch) -> Callable[..., Any]:
    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple, kwargs: dict) -> Any:
        call = _begin(patch, instance, args, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        token = _attach(call._context)  # (call.context(), read directly)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            call.finish(error=exc)
            raise
        finally:
            try:
                _reset(token)
            except Exception:  # noqa: BLE001 - reset in another context: the API's detach logs it
                otel_context.detach(token)
        if patch.returned is None and _result_kinds.get(type(result)) == _RESPONSE:
            # `_returned`, its usual case inline (see ModelCall on what a call costs).
            try:
                response = patch.response(result)
            except Exception as exc:  # noqa: BLE001 - telemetry must not break the call
                report_internal_error("providers.read_response", exc)
                response = None
            call.finish(response)
            return result
        return _returned(call, patch, result)

    return wrapper


def _async_wrapper(patch: Patch) -> Callable[..., Any]:
    async def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple, kwargs: dict) -> Any:
        call = _begin(patch, instance, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        token = _attach(call._context)  # (call.context(), read directly)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            call.finish(error=exc)
            raise
        finally:
            try:
                _reset(token)
            except Exception:  # noqa: BLE001 - reset in another context: the API's detach logs it
                otel_context.detach(token)
        return _returned(call, patch, result)

    return wrapper


def _manager_wrapper(patch: Patch) -> Callable[..., Any]:
    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple, kwargs: dict) -> Any:
        call = _begin(patch, instance, args, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        token = _attach(call._context)  # (call.context(), read directly)
        try:
            manager = wrapped(*args, **kwargs)
        except BaseException as exc:
            call.finish(error=exc)
            raise
        finally:
            try:
                _reset(token)
            except Exception:  # noqa: BLE001 - reset in another context: the API's detach logs it
                otel_context.detach(token)
        return _stream.wrap_manager(manager, call, patch)

    return wrapper


# --- Patching ------------------------------------------------------------------------------------------------


class _Patched(wrapt.FunctionWrapper):
    """Marks a method wrapped by agentotel, so no second layer is ever added."""

    # wrapt binds a subclass's method through the class it names here, else its own after a failed
    # lookup: an AttributeError made, normalised and cleared on every call of the patched method
    # (~2.5k instructions and cold error-path code, callgrind). Named, it is the same class.
    __bound_function_wrapper__ = wrapt.BoundFunctionWrapper


_lock = threading.RLock()
_enabled = False
_hooked: set[str] = set()
_applied: dict[str, list[tuple[type, str, Any]]] = {}


def instrument_providers() -> None:
    """Patch every supported client library importable now, and any imported later (idempotent)."""
    global _enabled
    with _lock:
        _enabled = True
        for name in ADAPTERS:
            if name not in _hooked:
                _hooked.add(name)
                # Fires now if the library is already imported, else right after its import.
                wrapt.register_post_import_hook(_on_import, name)
            elif name in sys.modules:
                _apply(name)


def uninstrument_providers() -> None:
    """Remove every patch (idempotent); the import hooks stay but apply nothing until re-enabled."""
    global _enabled
    with _lock:
        _enabled = False
        for name in list(_applied):
            for cls, attribute, original in reversed(_applied.pop(name)):
                if isinstance(cls.__dict__.get(attribute), _Patched):
                    setattr(cls, attribute, original)


def _on_import(module: Any) -> None:
    with internal_errors("providers.import_hook"):
        _apply(module.__name__)


def _apply(name: str) -> None:
    with _lock:
        if not _enabled or name in _applied:
            return
        adapter = importlib.import_module(ADAPTERS[name])
        applied = _applied[name] = []
        for patch in adapter.PATCHES:
            # Only this library's own patches: an adapter may serve two libraries (botocore and
            # aiobotocore), each patched when it is imported and either one possibly absent.
            if patch.module != name and not patch.module.startswith(name + "."):
                continue
            target = _resolve(patch)
            if target is None:
                continue
            cls, attribute, original = target
            if isinstance(original, _Patched):
                continue
            if patch.kind == "stream_manager":
                make = _manager_wrapper
            elif inspect.iscoroutinefunction(inspect.unwrap(original)):  # SDK decorators hide `async def`
                make = _async_wrapper
            else:
                make = _sync_wrapper
            setattr(cls, attribute, _Patched(original, make(patch)))
            applied.append((cls, attribute, original))


def _resolve(patch: Patch) -> tuple[type, str, Any] | None:
    """The class, attribute and current function a patch targets; None (and a debug log) if missing."""
    class_name, _, attribute = patch.target.rpartition(".")
    try:
        module = importlib.import_module(patch.module)
        cls = getattr(module, class_name)
        original = cls.__dict__[attribute]
    except (ImportError, AttributeError, KeyError) as exc:
        log.debug("agentotel: %s.%s not found (%r); that method is not traced", patch.module, patch.target, exc)
        return None
    return cls, attribute, original


def patched_methods() -> list[str]:
    """The SDK methods currently wrapped, as "module.Class.method" (for tests and diagnostics)."""
    with _lock:
        return [f"{cls.__module__}.{cls.__qualname__}.{attr}" for items in _applied.values() for cls, attr, _ in items]


def iter_patches() -> Iterable[tuple[type, str, Any]]:
    with _lock:
        return [item for items in _applied.values() for item in items]


# The stream proxies build on the definitions above (a cycle resolved by importing last).
from agentotel.providers import _stream  # noqa: E402
