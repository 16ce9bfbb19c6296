"""Runs: one root span per agent run, and the run's attribution stamped on every span inside it.

    with agentotel.run("triage", user="alice", session="s-1", task=issue) as run:
        ...                                   # model calls, tools, HTTP, threads, asyncio tasks
        run.output = answer

`run()` is a context manager (sync and async) and a decorator (sync and async functions). Inside a
run, every span started in this process — ours, other instrumentations' (HTTP clients, databases),
in threads started or pool tasks submitted inside the run, in asyncio tasks — carries the run's id,
user, session and trigger, so any single stored row is attributable.

Across processes, the run id, user and session travel as W3C baggage only with `propagate=True`
(or AGENTOTEL_PROPAGATE=true). Baggage goes out in the headers of every outgoing HTTP request made
inside the run (to any host the instrumented clients call), so enable it only when the user and
session ids may be seen by those services. A receiving process takes them only with
AGENTOTEL_ACCEPT_BAGGAGE=true: inbound baggage is whatever the caller sent.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import os
import sys
import threading
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, TypeVar

from opentelemetry import baggage, context, trace
from opentelemetry.sdk.trace import Span, SpanProcessor
from opentelemetry.semconv.attributes.exception_attributes import (
    EXCEPTION_MESSAGE,
    EXCEPTION_STACKTRACE,
    EXCEPTION_TYPE,
)
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentotel import _config, _context, _tracing
from agentotel._internal import end_span, internal_errors, report_internal_error
from agentotel.content import Payload, capture_enabled, redact, redact_text
from agentotel.semconv import (
    AGENTOTEL_RUN_ID,
    AGENTOTEL_RUN_METADATA,
    AGENTOTEL_RUN_NAME,
    AGENTOTEL_RUN_OUTPUT,
    AGENTOTEL_RUN_PARENT_ID,
    AGENTOTEL_RUN_TASK,
    AGENTOTEL_RUN_TRIGGER,
    ENDUSER_ID,
    ERROR_TYPE,
    GEN_AI_AGENT_NAME,
    GEN_AI_AGENT_VERSION,
    GEN_AI_CONVERSATION_ID,
    GEN_AI_OPERATION_NAME,
)

__all__ = ["run", "Run", "AttributionProcessor"]

F = TypeVar("F", bound=Callable[..., Any])

INVOKE_AGENT = "invoke_agent"

# The attributes that travel as baggage with propagate=True (values are the run's, never payload).
_BAGGAGE_KEYS = (AGENTOTEL_RUN_ID, ENDUSER_ID, GEN_AI_CONVERSATION_ID, AGENTOTEL_RUN_TRIGGER)

# Environment variables set by CI systems (any one present means the run was started by CI).
_CI_VARIABLES = (
    "CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "JENKINS_URL", "TF_BUILD", "TRAVIS",
    "TEAMCITY_VERSION", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_ID", "DRONE", "APPVEYOR",
)  # fmt: skip


def infer_trigger(environ: Mapping[str, str] | None = None, interactive: bool | None = None) -> str:
    """`ci` when a CI variable is set, `cli` on an interactive terminal, else `api`."""
    environ = os.environ if environ is None else environ
    for name in _CI_VARIABLES:
        value = environ.get(name, "")
        if value and value.strip().lower() not in {"0", "false", "no"}:
            return "ci"
    if interactive is None:
        try:
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
        except (AttributeError, ValueError, OSError):  # closed or replaced streams
            interactive = False
    return "cli" if interactive else "api"


def error_type(exc: BaseException) -> str:
    """The exception's fully qualified class name (builtins without a module), for `error.type`."""
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


def record_error(span: Any, exc: BaseException, payload: Payload | None = None) -> None:
    """Mark `span` as failed by `exc`: status ERROR, `error.type`, and an `exception` event.

    An exception's message and traceback can quote the data the code worked on, so they are treated
    as content: redacted, bounded, and left out entirely when capture is off (only the type remains).
    """
    kind = error_type(exc)
    span.set_attribute(ERROR_TYPE, kind)
    if not (payload.capture if payload is not None else capture_enabled()):
        span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        span.add_event("exception", {EXCEPTION_TYPE: kind})
        return
    message, found = redact_text(_safe_str(exc)[:_MAX_ERROR_CHARS])
    try:
        stack = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:  # noqa: BLE001 - a failing __str__ inside the chain
        stack = ""
    stack, found_in_stack = redact_text(stack[-_MAX_ERROR_CHARS:])
    if payload is not None:
        payload.redactions += found + found_in_stack
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {message}"[:1024]))
    span.add_event("exception", {EXCEPTION_TYPE: kind, EXCEPTION_MESSAGE: message, EXCEPTION_STACKTRACE: stack})


_MAX_ERROR_CHARS = 16 * 1024


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a user's __str__ may raise
        return f"<unprintable {type(exc).__name__}>"


class Run:
    """The run in progress: its `id`, its `trace_id` (hex), and a settable `output` recorded at the end."""

    __slots__ = ("id", "name", "trace_id", "span_id", "user", "session", "trigger", "parent_id", "_output", "_has_output")

    def __init__(self, *, id: str, name: str, trace_id: str, span_id: str, user: str | None,
                 session: str | None, trigger: str, parent_id: str | None) -> None:  # fmt: skip
        self.id = id
        self.name = name
        self.trace_id = trace_id
        self.span_id = span_id
        self.user = user
        self.session = session
        self.trigger = trigger
        self.parent_id = parent_id
        self._output: Any = None
        self._has_output = False

    @property
    def output(self) -> Any:
        return self._output

    @output.setter
    def output(self, value: Any) -> None:
        self._output = value
        self._has_output = True

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, name={self.name!r}, trace_id={self.trace_id!r})"


class _Active:
    """Everything one entered run holds until it exits."""

    __slots__ = ("run", "span", "run_context", "tokens", "payload", "environment")

    def __init__(self) -> None:
        self.tokens: list[Any] = []
        self.environment = False


class _RunScope:
    """What `run(...)` returns: enter it (with / async with) or decorate a function with it."""

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self._name = name
        self._options = options
        self._active: list[_Active] = []

    # --- context manager -----------------------------------------------------------------------------

    def __enter__(self) -> Run:
        return self._start()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self._finish(exc)

    async def __aenter__(self) -> Run:
        return self._start()

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self._finish(exc)

    # --- decorator -----------------------------------------------------------------------------------

    def __call__(self, fn: F) -> F:
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(f"run() cannot decorate the generator {fn.__qualname__}: use `with run(...)` in its body")
        name, options = self._name, self._options
        task_given = options.get("task") is not None
        signature = _signature(fn)

        def scope(args: tuple, kwargs: dict) -> _RunScope:
            opts = options
            if not task_given and signature is not None:
                opts = {**options, "task": _bound_arguments(signature, args, kwargs)}
            return _RunScope(name, opts)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                async with scope(args, kwargs) as current:
                    result = await fn(*args, **kwargs)
                    if not current._has_output:
                        current.output = result
                    return result

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with scope(args, kwargs) as current:
                result = fn(*args, **kwargs)
                if not current._has_output:
                    current.output = result
                return result

        return wrapper  # type: ignore[return-value]

    # --- the run's life ------------------------------------------------------------------------------

    def _start(self) -> Run:
        active = _Active()
        try:
            _start_run(active, self._name, self._options)
        except Exception as exc:  # noqa: BLE001 - the run goes on untraced
            started = getattr(active, "span", None)
            if started is not None:
                end_span(started, "runs.start.end")
            _unwind(active)
            report_internal_error("runs.start", exc)
            active.run = _untraced_run(self._name, self._options)
            active.span = None
        self._active.append(active)
        return active.run

    def _finish(self, exc: BaseException | None) -> None:
        active = self._active.pop()
        if active.span is None:
            return
        try:
            _finish_run(active, exc)
        except Exception as internal:  # noqa: BLE001 - the user's exception (if any) passes through unchanged
            report_internal_error("runs.finish", internal)
        finally:
            _unwind(active)


def run(
    name: str | Callable[..., Any],
    *,
    user: str | None = None,
    session: str | None = None,
    trigger: str | None = None,
    run_id: str | None = None,
    task: Any = None,
    metadata: Mapping[str, Any] | None = None,
    repo: str | os.PathLike[str] | None = None,
    agent_version: str | None = None,
    propagate: bool | None = None,
) -> Any:
    """A run of an agent: `with run(...) as r:`, `async with run(...) as r:`, or `@run(...)`.

    Opens the root span `invoke_agent {name}`; every span started inside carries the run's id
    (`run_id`, else a new UUID), `user`, `session` and `trigger` (inferred when not given: `ci`,
    `cli` or `api`). `task` is recorded as the run's input and `r.output` as its output (both
    content: not recorded when capture is off); `metadata` as JSON. An exception marks the run ERROR
    and passes through unchanged. A run inside a run is a sub-agent with its own id. As a decorator,
    the function's arguments are the task and its return value the output unless set otherwise.
    `propagate=True` sends run id, user and session downstream as W3C baggage (HTTP headers).
    """
    options = {
        "user": user, "session": session, "trigger": trigger, "run_id": run_id, "task": task,
        "metadata": metadata, "repo": repo, "agent_version": agent_version, "propagate": propagate,
    }  # fmt: skip
    if callable(name) and not isinstance(name, str):  # bare @run
        return _RunScope(getattr(name, "__name__", "agent"), options)(name)
    return _RunScope(str(name), options)


def _start_run(active: _Active, name: str, options: dict[str, Any]) -> None:
    settings = _config.current()
    _propagate_into_threads()
    parent = _context.current_run()
    inherited = _baggage_attribution(context.get_current()) if parent is None else {}

    run_id = str(options["run_id"] or uuid.uuid4())
    user = options["user"] or (parent.user if parent else inherited.get(ENDUSER_ID))
    session = options["session"] or (parent.session if parent else inherited.get(GEN_AI_CONVERSATION_ID))
    trigger = options["trigger"] or (parent.trigger if parent else inherited.get(AGENTOTEL_RUN_TRIGGER)) or infer_trigger()
    parent_id = parent.run_id if parent else inherited.get(AGENTOTEL_RUN_ID)

    attribution: dict[str, Any] = {AGENTOTEL_RUN_ID: run_id, AGENTOTEL_RUN_TRIGGER: str(trigger)}
    if user is not None:
        attribution[ENDUSER_ID] = str(user)
    if session is not None:
        attribution[GEN_AI_CONVERSATION_ID] = str(session)
    run_context = _context.RunContext(
        run_id=run_id, name=name, trigger=str(trigger), user=attribution.get(ENDUSER_ID),
        session=attribution.get(GEN_AI_CONVERSATION_ID), parent=parent, attributes=attribution,
    )  # fmt: skip
    active.run_context = run_context

    attributes: dict[str, Any] = {
        GEN_AI_OPERATION_NAME: INVOKE_AGENT,
        GEN_AI_AGENT_NAME: name,
        AGENTOTEL_RUN_NAME: name,
        **attribution,
    }
    if parent_id is not None:
        attributes[AGENTOTEL_RUN_PARENT_ID] = str(parent_id)
    version = options["agent_version"] or settings.agent_version
    if version:
        attributes[GEN_AI_AGENT_VERSION] = version if "@" in version else f"{name}@{version}"
    active.payload = Payload()
    if options["metadata"] is not None:
        # Metadata is the user's labels, not content: recorded (redacted) even when capture is off.
        safe, count = redact(options["metadata"])
        attributes[AGENTOTEL_RUN_METADATA] = _json(safe)
        active.payload.redactions += count

    # The run is current before its span starts, so the processor stamps the root span consistently.
    active.tokens.append(("run", _context.set_current_run(run_context)))
    ctx = context.get_current()
    propagate = options["propagate"] if options["propagate"] is not None else settings.propagate
    if propagate:
        for key in _BAGGAGE_KEYS:
            if key in attribution:
                ctx = baggage.set_baggage(key, attribution[key], ctx)
    span = _tracing.get_tracer().start_span(f"{INVOKE_AGENT} {name}", ctx, kind=SpanKind.INTERNAL, attributes=attributes)
    active.span = span
    active.tokens.append(("otel", context.attach(trace.set_span_in_context(span, ctx))))
    span_context = span.get_span_context()
    active.run = Run(
        id=run_id, name=name, trace_id=format(span_context.trace_id, "032x"),
        span_id=format(span_context.span_id, "016x"), user=run_context.user, session=run_context.session,
        trigger=run_context.trigger, parent_id=None if parent_id is None else str(parent_id),
    )  # fmt: skip

    if options["task"] is not None:
        active.payload.set(span, AGENTOTEL_RUN_TASK, options["task"])

    # The environment is the process's: captured once, by the outermost run.
    if parent is None and settings.capture_environment:
        environment = _environment()
        if environment is not None:
            with internal_errors("runs.environment.capture"):
                span.set_attributes(_attribute_values(environment.capture_for_run(
                    run_context, repo=options["repo"], agent_version=attributes.get(GEN_AI_AGENT_VERSION)
                )))
                active.environment = True


def _failed(exc: BaseException | None) -> bool:
    """Whether the run ended in failure: an exception, but not a generator closed early or a clean
    `sys.exit(0)` (the program chose to stop, successfully), nor a regression case's replay stopping the
    run where its recording ends (`agentotel.cases.ReplayFrontier`: the run did not fail, it was cut)."""
    if exc is None or isinstance(exc, GeneratorExit) or getattr(exc, "stops_a_replay", False):
        return False
    return not (isinstance(exc, SystemExit) and exc.code in (None, 0))


def _finish_run(active: _Active, exc: BaseException | None) -> None:
    span, current = active.span, active.run
    with internal_errors("runs.streams"):
        active.run_context.end(_failed(exc))  # before the run's own span ends: its steps end inside it
    with internal_errors("runs.finish"):
        if current._has_output:
            active.payload.set(span, AGENTOTEL_RUN_OUTPUT, current._output)
        if _failed(exc):
            record_error(span, exc, active.payload)
        active.payload.apply_markers(span)
    if active.environment:
        environment = _environment()
        with internal_errors("runs.environment.finish"):
            span.set_attributes(_attribute_values(environment.finish_for_run(active.run_context)))
    end_span(span, "runs.end")


def _unwind(active: _Active) -> None:
    """Restore the OTel context and the current run, in reverse order of setting them."""
    while active.tokens:
        kind, token = active.tokens.pop()
        with internal_errors("runs.unwind"):
            if kind == "otel":
                context.detach(token)
            else:
                _context.reset_current_run(token)


def _untraced_run(name: str, options: dict[str, Any]) -> Run:
    return Run(id=str(options["run_id"] or uuid.uuid4()), name=name, trace_id="0" * 32, span_id="0" * 16,
               user=options["user"], session=options["session"], trigger=str(options["trigger"] or "api"),
               parent_id=None)  # fmt: skip


def _environment() -> Any:
    try:
        from agentotel import environment
    except ModuleNotFoundError as exc:
        if exc.name != "agentotel.environment":  # the module exists but is broken: say so
            report_internal_error("runs.environment.import", exc)
        return None  # not installed: runs go on without an environment snapshot
    return environment


def _attribute_values(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """Only values a span attribute can hold (str, bool, int, float, or lists of one of them)."""
    out: dict[str, Any] = {}
    for key, value in (attributes or {}).items():
        if value is None:
            continue
        if isinstance(value, (str, bool, int, float)):
            out[key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = _json(redact(value)[0])
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _bound_arguments(signature: inspect.Signature, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return {"args": list(args), "kwargs": kwargs} if args or kwargs else None
    arguments = dict(bound.arguments)
    first = next(iter(signature.parameters), None)
    if first in ("self", "cls"):  # a method's instance is not part of the task
        arguments.pop(first, None)
    return arguments or None


# --- Attribution on every span --------------------------------------------------------------------------


def _baggage_attribution(ctx: Any) -> dict[str, str]:
    """The run attribution an upstream process sent as baggage, when this process accepts it
    (AGENTOTEL_ACCEPT_BAGGAGE): otherwise any caller could set the user or the parent run."""
    entries = baggage.get_all(ctx)
    if not entries or AGENTOTEL_RUN_ID not in entries or not _config.current().accept_baggage:
        return {}
    return {key: str(entries[key]) for key in _BAGGAGE_KEYS if key in entries}


class AttributionProcessor(SpanProcessor):
    """Stamps the current run's id, user, session and trigger on every span started inside a run.

    Add it to the SDK tracer provider ahead of exporting processors (`instrument()` does). Spans
    that set one of these attributes themselves keep their value. Outside any run, a span whose
    context carries agentotel baggage (a run in an upstream process with `propagate=True`) gets the
    upstream run's attribution, in a process that accepts it (AGENTOTEL_ACCEPT_BAGGAGE).
    """

    def __init__(self) -> None:
        _propagate_into_threads()

    def on_start(self, span: Span, parent_context: context.Context | None = None) -> None:
        try:
            run_context = _context.current_run()
            if run_context is not None:
                stamp = run_context.attributes
            else:
                stamp = _baggage_attribution(parent_context if parent_context is not None else context.get_current())
                if not stamp:
                    return
            existing = span.attributes
            if existing and any(key in existing for key in stamp):
                stamp = {key: value for key, value in stamp.items() if key not in existing}
            span.set_attributes(stamp)  # one lock round for all of them
        except Exception as exc:  # noqa: BLE001 - a processor must never fail the span
            report_internal_error("runs.attribution", exc)


# --- Context into threads ------------------------------------------------------------------------------

_propagation_lock = threading.Lock()
_propagation_installed = False


def _propagate_into_threads() -> None:
    """Make threads started, and pool tasks submitted, inside a run see the run and its current span.

    Python starts a thread with an empty context, so neither the current run nor the current span would
    reach it. A thread started (or a task submitted to a ThreadPoolExecutor) while a run is active now
    runs in a copy of the starting context. Outside a run nothing changes.
    """
    global _propagation_installed
    if _propagation_installed:
        return
    with _propagation_lock:
        if _propagation_installed:
            return
        _patch_thread_start()
        _patch_executor_submit()
        _propagation_installed = True


def _patch_thread_start() -> None:
    original_start = threading.Thread.start
    if getattr(original_start, "_agentotel", False):
        return

    @functools.wraps(original_start)
    def start(self: threading.Thread) -> None:
        if _context.current_run() is not None:
            # An instance attribute, so Thread subclasses that override run() are covered too.
            ctx, target = contextvars.copy_context(), self.run
            self.run = lambda: ctx.run(target)  # type: ignore[method-assign]
        original_start(self)

    start._agentotel = True  # type: ignore[attr-defined]
    threading.Thread.start = start  # type: ignore[method-assign]


def _patch_executor_submit() -> None:
    original_submit = ThreadPoolExecutor.submit
    if getattr(original_submit, "_agentotel", False):
        return

    @functools.wraps(original_submit)
    def submit(self: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if _context.current_run() is not None:
            return original_submit(self, contextvars.copy_context().run, fn, *args, **kwargs)
        return original_submit(self, fn, *args, **kwargs)

    submit._agentotel = True  # type: ignore[attr-defined]
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
