"""pydantic-ai: tool calls and agent runs.

- A function tool's execution (`@agent.tool`, `@agent.tool_plain`, `Tool(...)`, toolsets) is an
  `execute_tool {name}` span: the arguments the model gave (never the `RunContext`), the result (a
  `ToolReturn`'s return value), the call id of the model's `ToolCallPart`.
- An output tool's call (`final_result`, the structured answer of an `output_type`) is a tool step too: the
  model asked for a tool call and pydantic-ai ran it (validation, output functions and validators, which are
  user code), so a trajectory without it would show a call nothing answered (`check`'s unanswered_tool_calls)
  and hide a failing output function. Its result is the validated output; a retry (`ModelRetry` from an
  output function or validator) is an error step the model answers, like a function tool's. The partial
  outputs `run_stream` validates while it streams are not calls: only the final validation is a step.
- A function or output tool call whose arguments fail validation (pydantic-ai answers with a retry prompt)
  is an error step with the arguments as the model gave them.
- `Agent.iter` (and so `run`, `run_sync`, `run_stream`) opens `agentotel.run(<agent name>)` when no run
  is open, else is an `invoke_agent {agent}` step of the open run.
- With pydantic-ai's own instrumentation on (`instrument=True`, `Agent.instrument_all()`, logfire), its
  `execute_tool` span of the call holds agentotel's, as its model-call spans hold agentotel's model calls
  and its `invoke_agent` span sits inside agentotel's span of the same agent: the store counts each once,
  agentotel's record (query/sql/_duplicate_spans.sql: the rule holds for spans that reach a collector too).
  Not completing pydantic-ai's span instead: pydantic-ai writes its `gen_ai.tool.call.result` (a
  `ToolReturn` whole) after the tool returns, over agentotel's.
"""

from __future__ import annotations

import contextvars
from typing import Any

from opentelemetry.trace import NoOpTracer

from agentotel._internal import report_internal_error
from agentotel.integrations._common import AgentScope, suppressed, traced_async
from agentotel.tools import DefinedTool, ToolCall, defined_tool, start_tool_call


def patches() -> list[tuple[Any, str, Any]]:
    from pydantic_ai.agent import Agent
    from pydantic_ai.tool_manager import ToolManager

    return [
        (ToolManager, "_raw_execute", _execute),
        (ToolManager, "_execute_tool_call_impl", _execute_invalid),
        (ToolManager, "execute_output_tool_call", _execute_output),
        (ToolManager, "handle_output_tool_call", _handle_output),
        (ToolManager, "validate_output_tool_call", _validate_output),
        (Agent, "iter", _iter),
    ]


# --- tools -----------------------------------------------------------------------------------------------

_tools: dict[int, tuple[Any, DefinedTool]] = {}  # id(ToolDefinition) -> (it, kept so the id stays its own; ours)


def _definition(tool_def: Any) -> DefinedTool:
    entry = _tools.get(id(tool_def))
    if entry is None or entry[0] is not tool_def:
        if len(_tools) > 4096:
            _tools.clear()
        definition = defined_tool(tool_def.name, tool_def.description, tool_def.parameters_json_schema)
        entry = _tools[id(tool_def)] = (tool_def, definition)
    return entry[1]


def _start(validated: Any, kind: str = "function") -> ToolCall | None:
    if suppressed():
        return None
    try:
        tool_def = validated.tool.tool_def
        if getattr(tool_def, "kind", "function") != kind:
            return None  # external / unapproved tools do not run here
        part = validated.call
        call_id = getattr(part, "tool_call_id", None)
        arguments = _arguments(part) if hasattr(part, "args_as_dict") else validated.validated_args
        return start_tool_call(_definition(tool_def), arguments, call_id)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.pydantic_ai.tool", exc)
        return None


def _arguments(part: Any) -> Any:
    """The arguments the model gave, as it gave them when they are no JSON object."""
    try:
        return part.args_as_dict()
    except Exception:  # noqa: BLE001 - invalid JSON from the model: pydantic-ai asks it to retry
        return getattr(part, "args", None)


async def _execute(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return await traced_async(_start(args[0] if args else kwargs.get("validated")), wrapped, args, kwargs, _returned)


def _returned(call: ToolCall, result: Any) -> None:
    # A `ToolReturn` carries what the model gets (`return_value`) beside content and metadata for the app.
    call.succeed(result.return_value if type(result).__name__ == "ToolReturn" and hasattr(result, "return_value") else result)


async def _execute_invalid(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # A call whose arguments failed validation never reaches _raw_execute: pydantic-ai raises its retry prompt
    # here. It is still the model's call, answered (with an error): an error step, as a ModelRetry is. With
    # pydantic-ai's own instrumentation on (a real tracer in the run context) its span of the failure, ended
    # before this runs, is that step already.
    validated = args[0] if args else kwargs.get("validated")
    if validated is None or validated.args_valid or validated.tool is None or _own_tracing(validated.ctx):
        return await wrapped(*args, **kwargs)
    return await traced_async(_start(validated), wrapped, args, kwargs)


def _own_tracing(ctx: Any) -> bool:
    return not isinstance(getattr(ctx, "tracer", None), (NoOpTracer, type(None)))


# Set while run_stream validates a partial output (allow_partial=True): no call, no step.
_partial: contextvars.ContextVar[bool] = contextvars.ContextVar("agentotel_pydantic_ai_partial", default=False)


async def _execute_output(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if _partial.get():
        return await wrapped(*args, **kwargs)
    return await traced_async(_start(args[0] if args else kwargs.get("validated"), "output"), wrapped, args, kwargs)


async def _validate_output(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # An output tool call whose arguments fail validation is never executed: an error step, as a function tool's
    # (pydantic-ai's own instrumentation records none for it).
    validated = await wrapped(*args, **kwargs)
    try:
        if kwargs.get("allow_partial") or _partial.get() or validated.args_valid or validated.tool is None:
            return validated
        call = _start(validated, "output")
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.pydantic_ai.output", exc)
        return validated
    if call is not None:
        call.fail(validated.validation_error or ValueError("invalid output arguments"))
    return validated


async def _handle_output(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    token = _partial.set(bool(kwargs.get("allow_partial")))
    try:
        return await wrapped(*args, **kwargs)
    finally:
        _partial.reset(token)


# --- agent runs ----------------------------------------------------------------------------------------------


def _iter(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    manager = wrapped(*args, **kwargs)
    if suppressed():
        return manager
    return _Scoped(manager, str(getattr(instance, "name", None) or "agent"))


class _Scoped:
    """`Agent.iter`'s async context manager, inside the agent's scope (a run, or a step of one)."""

    __slots__ = ("_manager", "_scope")

    def __init__(self, manager: Any, name: str) -> None:
        self._manager = manager
        self._scope = AgentScope(name)

    async def __aenter__(self) -> Any:
        self._scope.__enter__()
        try:
            return await self._manager.__aenter__()
        except BaseException as exc:
            self._scope.__exit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        try:
            return await self._manager.__aexit__(exc_type, exc, tb)
        finally:
            self._scope.__exit__(exc_type, exc, tb)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._manager, name)
