"""What every framework adapter shares: whether to trace, and an agent's scope (a run, or a step of one)."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable
from typing import Any

from opentelemetry import context, trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY_PLAIN
from opentelemetry.trace import SpanKind

from agentotel import _context, _tracing
from agentotel._internal import report_internal_error
from agentotel.content import Payload
from agentotel.runs import INVOKE_AGENT, record_error, run
from agentotel.semconv import GEN_AI_AGENT_NAME, GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_NAME
from agentotel.tools import EXECUTE_TOOL, framework_tool_span


def traced(call: Any, wrapped: Any, args: tuple, kwargs: dict, done: Callable[[Any, Any], None] | None = None) -> Any:
    """Run a framework's function as the tool call `call` (None: untraced): current while it runs, its
    exception recorded and re-raised unchanged, its result ending the call through `done(call, result)`
    (default: the result as it is)."""
    if call is None:
        return wrapped(*args, **kwargs)
    call.attach()
    try:
        result = wrapped(*args, **kwargs)
    except BaseException as exc:
        call.fail(exc)
        raise
    (done or _succeed)(call, result)
    return result


async def traced_async(call: Any, wrapped: Any, args: tuple, kwargs: dict, done: Callable[[Any, Any], None] | None = None) -> Any:
    """`traced` for a coroutine function."""
    if call is None:
        return await wrapped(*args, **kwargs)
    call.attach()
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        call.fail(exc)
        raise
    (done or _succeed)(call, result)
    return result


def _succeed(call: Any, result: Any) -> None:
    call.succeed(result)


def current_tool_span(name: str | None = None, call_id: str | None = None) -> Any:
    """The span of this very call in progress (tool `name`, call `call_id`; each checked when given): a framework's
    tool call of `name` (even below a client library's span of the request, as fastmcp's `tools/call` under
    pydantic-ai's MCP toolset), else the current span when it is a recording `execute_tool` span of the call:
    another record of the call, to complete instead of adding a second."""
    span = (framework_tool_span(name) if name is not None else None) or trace.get_current_span()
    attributes = getattr(span, "attributes", None)
    if not attributes or not span.is_recording() or attributes.get(GEN_AI_OPERATION_NAME) != EXECUTE_TOOL:
        return None
    if (name is not None and attributes.get(GEN_AI_TOOL_NAME) != name) or (call_id is not None and attributes.get(GEN_AI_TOOL_CALL_ID) != call_id):
        return None
    return span


def suppressed() -> bool:
    """OTel's suppress_instrumentation() is on: record nothing."""
    current = context.get_current()
    return bool(current.get(_SUPPRESS_INSTRUMENTATION_KEY) or current.get(_SUPPRESS_INSTRUMENTATION_KEY_PLAIN))


class AgentScope:
    """An agent invocation of a framework: a run of its own (`agentotel.run(name)`) when none is open,
    else an `invoke_agent {name}` step of the open run (`step=False`: nothing, for what is no agent, such
    as a chain). Enter and exit in the same context (sync `with`, also inside async code). `opened_run`
    says which it was."""

    __slots__ = ("name", "_step", "_run", "_span", "_token", "opened_run")

    def __init__(self, name: str, step: bool = True) -> None:
        self.name = name or "agent"
        self._step = step
        self._run: Any = None
        self._span: Any = None
        self._token: Any = None
        self.opened_run = False

    def __enter__(self) -> "AgentScope":
        try:
            if _context.current_run() is None:
                self._run = run(self.name)
                self._run.__enter__()
                self.opened_run = True
            elif self._step:
                self._span = start_agent_step(self.name)
                self._token = context.attach(trace.set_span_in_context(self._span))
        except Exception as exc:  # noqa: BLE001 - the agent runs untraced
            report_internal_error("integrations.agent_scope", exc)
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if self._run is not None:
                self._run.__exit__(exc_type, exc, tb)
            elif self._span is not None:
                context.detach(self._token)
                if exc is not None and not isinstance(exc, GeneratorExit):
                    record_error(self._span, exc, Payload())
                self._span.end()
        except Exception as internal:  # noqa: BLE001
            report_internal_error("integrations.agent_scope_exit", internal)


def start_agent_step(name: str, parent: Any = None, start_time: int | None = None) -> Any:
    """An `invoke_agent {name}` step's span (not made current), under `parent` (a context; default: the current one)."""
    return _tracing.get_tracer().start_span(
        f"{INVOKE_AGENT} {name}", parent, kind=SpanKind.INTERNAL, start_time=start_time,
        attributes={GEN_AI_OPERATION_NAME: INVOKE_AGENT, GEN_AI_AGENT_NAME: name},
    )


# --- a framework's stream inside a scope ------------------------------------------------------------------


def scoped_stream(scope: Any, wrapped: Any, args: tuple, kwargs: dict) -> Any:
    """`wrapped(*args, **kwargs)`'s iterator, run inside `scope` (a context manager: a run, a step, a graph's
    invocation) from its first item to its end, however it ends."""
    # The framework's steps run while the caller iterates. They run in a context of their own (a copy of the
    # caller's at the first item), so what the scope makes current is current for them and never for the
    # caller's code between items.
    ctx = contextvars.copy_context()
    ctx.run(scope.__enter__)
    try:
        iterator = ctx.run(wrapped, *args, **kwargs)
    except BaseException as exc:
        ctx.run(scope.__exit__, type(exc), exc, None)
        raise
    try:
        while True:
            try:
                item = ctx.run(next, iterator)
            except StopIteration:
                break
            yield item
    except BaseException as exc:  # the framework failed, or the caller closed the stream early (GeneratorExit)
        ctx.run(_close, iterator)
        ctx.run(scope.__exit__, type(exc), exc, None)
        raise
    ctx.run(scope.__exit__, None, None, None)


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


async def scoped_astream(scope: Any, wrapped: Any, args: tuple, kwargs: dict) -> Any:
    """`scoped_stream` for an async iterator: each of its steps runs as a task in the scope's context."""
    ctx = contextvars.copy_context()
    ctx.run(scope.__enter__)
    iterator = ctx.run(wrapped, *args, **kwargs)
    try:
        while True:
            try:
                item = await _task_in(ctx, _anext(iterator))
            except StopAsyncIteration:
                break
            yield item
    except BaseException as exc:
        await _task_in(ctx, _aclose(iterator))
        ctx.run(scope.__exit__, type(exc), exc, None)
        raise
    ctx.run(scope.__exit__, None, None, None)


def _task_in(ctx: contextvars.Context, coroutine: Any) -> Any:
    if sys.version_info >= (3, 11):
        return asyncio.create_task(coroutine, context=ctx)
    return ctx.run(asyncio.ensure_future, coroutine)  # 3.10: the task runs in a copy of ctx


async def _anext(iterator: Any) -> Any:
    return await iterator.__anext__()


async def _aclose(iterator: Any) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()
