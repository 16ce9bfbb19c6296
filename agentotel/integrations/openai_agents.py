"""OpenAI Agents SDK (`openai-agents`): function tools, agents and handoffs, runs.

- A function tool's call (`@function_tool`, any `FunctionTool`) is an `execute_tool {name}` span with the
  model's arguments, the result, and the call id the SDK's `ToolContext` carries. A failure the SDK turns
  into an error text for the model (its failure_error_function) marks the span ERROR with the exception.
  A call a tool input guardrail rejects (the tool never runs; the model gets the rejection) or trips is an
  error step too (`error.type` `guardrail_rejected`, or the tripwire's exception), and so is a call whose
  result a tool output guardrail rejects or trips on (the step's result is then what the model got).
- `Runner.run` / `run_sync` / `run_streamed` open `agentotel.run(<agent name>)` when no run is open, else
  they are an `invoke_agent {agent}` step of the open run.
- A handoff the model asks for (`transfer_to_<agent>`) is an `execute_tool {name}` span with its call id and
  the transfer message the model is given, as a function tool's call is: the call the model made is answered
  by a step, and the next agent's step follows it.
- Each further agent the loop runs (after a handoff) is an `invoke_agent {agent}` step, read from the
  SDK's own agent spans (`agents.tracing`), which are created whether its tracing is on or off; the SDK's
  tracing itself is left as it is.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any

from opentelemetry import context, trace

from agentotel import _context, _json
from agentotel._internal import report_internal_error
from agentotel.integrations._common import AgentScope, start_agent_step, suppressed, traced_async
from agentotel.tools import DefinedTool, defined_tool, start_tool_call


def patches() -> list[tuple[Any, str, Any]]:
    from agents import run as run_module
    from agents import tool as tool_module
    from agents.run_internal import tool_execution, turn_resolution
    from agents.tracing import spans

    return [
        # Every function tool's invocation, whatever made the FunctionTool: the run loop's call site and
        # the one realtime sessions use (the same function, imported into both modules).
        (tool_execution, "_invoke_function_tool_with_metadata", _invoke_tool),
        (tool_module, "_invoke_function_tool_with_metadata", _invoke_tool),
        (tool_module, "maybe_invoke_function_tool_failure_error_function", _failure_answered),
        (tool_execution, "_execute_tool_input_guardrails", _input_guardrails),
        (tool_execution, "_execute_tool_output_guardrails", _output_guardrails),
        (tool_execution._FunctionToolBatchExecutor, "_invoke_tool_and_run_post_invoke", _post_invoke),
        # Both of the run loop's call sites read the module's function when a turn runs.
        (turn_resolution, "execute_handoffs", _execute_handoffs),
        (run_module.AgentRunner, "run", _runner_run),
        (run_module, "start_streaming", _start_streaming),
        (spans.SpanImpl, "start", _span_start),
        (spans.SpanImpl, "finish", _span_finish),
        (spans.NoOpSpan, "start", _span_start),
        (spans.NoOpSpan, "finish", _span_finish),
    ]


# --- function tools ------------------------------------------------------------------------------------

_tools: dict[int, tuple[Any, DefinedTool]] = {}  # id(FunctionTool) -> (the tool, kept alive so the id stays its own; its definition)


def _definition(tool: Any) -> DefinedTool:
    entry = _tools.get(id(tool))
    if entry is None or entry[0] is not tool:
        if len(_tools) > 4096:
            _tools.clear()
        entry = _tools[id(tool)] = (tool, defined_tool(tool.name, tool.description, tool.params_json_schema))
    return entry[1]


class _Answered:
    """The exception the SDK's failure handler turned into the tool's answer, during one tool call."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: BaseException | None = None


_answered: contextvars.ContextVar[_Answered | None] = contextvars.ContextVar("agentotel_agents_answered", default=None)


async def _invoke_tool(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # _invoke_function_tool_with_metadata(*, function_tool, context, arguments) -> a result with `.output`
    tool = kwargs.get("function_tool")
    if tool is None or suppressed():
        return await wrapped(*args, **kwargs)
    call = None
    try:
        call_id = getattr(kwargs.get("context"), "tool_call_id", None)
        call = start_tool_call(_definition(tool), _json.parse(kwargs.get("arguments")), call_id)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.agents.tool", exc)
    if call is None:
        return await wrapped(*args, **kwargs)
    answered = _Answered()
    token = _answered.set(answered)
    call.attach()
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        _answered.reset(token)
        call.fail(exc)
        raise
    _answered.reset(token)
    call.detach()
    guarded = _guarded.get()
    if guarded is not None and guarded.tool is tool and guarded.call is None:
        guarded.call, guarded.result, guarded.answered = call, result, answered  # ended after its output guardrails
    else:
        _end_tool_call(call, result, answered)
    return result


def _end_tool_call(call: Any, result: Any, answered: _Answered) -> None:
    output = getattr(result, "output", result)
    if answered.error is not None:
        call.failed(output, answered.error)
    elif getattr(result, "is_sdk_generated_error", False):  # a timeout the SDK answered for the tool
        call.failed(output)
    else:
        call.succeed(output)


class _Guarded:
    """A tool call with output guardrails: its span ends after them, rejected (the model gets the rejection
    instead of the result: an error step, that rejection as its result) or not (the tool's own ending)."""

    __slots__ = ("tool", "call", "result", "answered", "rejected")

    def __init__(self, tool: Any) -> None:
        self.tool = tool
        self.call: Any = None
        self.result: Any = None
        self.answered: Any = None
        self.rejected: Any = None


_guarded: contextvars.ContextVar[_Guarded | None] = contextvars.ContextVar("agentotel_agents_guarded", default=None)


async def _post_invoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # _FunctionToolBatchExecutor._invoke_tool_and_run_post_invoke(*, func_tool, ...): the tool's invocation, then
    # its output guardrails, in one task.
    tool = kwargs.get("func_tool")
    if not getattr(tool, "tool_output_guardrails", None) or suppressed():
        return await wrapped(*args, **kwargs)
    guarded = _Guarded(tool)
    token = _guarded.set(guarded)
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        _guarded.reset(token)
        _finish_guarded(guarded, exc)
        raise
    _guarded.reset(token)
    _finish_guarded(guarded, None)
    return result


def _finish_guarded(guarded: _Guarded, exc: BaseException | None) -> None:
    call = guarded.call
    if call is None:
        return  # the tool was never invoked (or its call untraced)
    if exc is not None:  # a guardrail's tripwire: the result never reached the model
        call.fail(exc)
    elif guarded.rejected is not None:
        call.failed(guarded.rejected, kind="guardrail_rejected")
    else:
        _end_tool_call(call, guarded.result, guarded.answered)


async def _output_guardrails(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    result = await wrapped(*args, **kwargs)
    guarded = _guarded.get()
    if guarded is not None and guarded.call is not None and getattr(result, "is_rejection", False):
        guarded.rejected = getattr(result, "output", None)
    return result


async def _failure_answered(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    result = await wrapped(*args, **kwargs)
    box = _answered.get()
    if box is not None and result is not None:  # None: no handler, the exception propagates
        box.error = kwargs.get("error")
    return result


async def _input_guardrails(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # _execute_tool_input_guardrails(*, func_tool, tool_context, ...) -> the rejection message, or None: the tool
    # runs. A rejected call never reaches the tool, yet the model asked for it and is answered: an error step.
    tool = kwargs.get("func_tool")
    if not getattr(tool, "tool_input_guardrails", None) or suppressed():
        return await wrapped(*args, **kwargs)
    try:
        rejected = await wrapped(*args, **kwargs)
    except BaseException as exc:  # a guardrail raising (its tripwire): the run ends with it
        call = _guarded_call(tool, kwargs.get("tool_context"))
        if call is not None:
            call.fail(exc)
        raise
    if rejected is not None:
        call = _guarded_call(tool, kwargs.get("tool_context"))
        if call is not None:
            call.failed(rejected, kind="guardrail_rejected")
    return rejected


def _guarded_call(tool: Any, tool_context: Any) -> Any:
    try:
        arguments = _json.parse(getattr(tool_context, "tool_arguments", None))
        return start_tool_call(_definition(tool), arguments, getattr(tool_context, "tool_call_id", None))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.agents.guardrail", exc)
        return None


async def _execute_handoffs(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # execute_handoffs(*, run_handoffs, ...) -> a SingleStepResult: the SDK runs the first handoff asked for and
    # answers the others with a refusal (in its new_step_items), as it answers calls no tool ran.
    handoffs = kwargs.get("run_handoffs")
    if not handoffs or suppressed():
        return await wrapped(*args, **kwargs)
    call = None
    try:
        handoff, asked = handoffs[0].handoff, handoffs[0].tool_call
        tool = defined_tool(handoff.tool_name, handoff.tool_description, handoff.input_json_schema)
        call = start_tool_call(tool, _json.parse(asked.arguments or "{}"), asked.call_id)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.agents.handoff", exc)
    return await traced_async(call, wrapped, args, kwargs, lambda call, result: call.succeed(_transfer_message(handoff, result)))


def _transfer_message(handoff: Any, result: Any) -> Any:
    """What the handoff answered the call with (`{"assistant": <agent>}`): what the model is told, unless an input
    filter leaves it out of the conversation (a history fault the next agent's model call shows)."""
    try:
        agent = getattr(getattr(result, "next_step", None), "new_agent", None)
        return handoff.get_transfer_message(agent) if agent is not None else None
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.agents.handoff", exc)
        return None


# --- runs and agents -------------------------------------------------------------------------------------


class _Runner:
    """The Runner call in progress: its scope, and whether the SDK's first agent span is the scope's own."""

    __slots__ = ("scope", "first_agent_seen")

    def __init__(self, scope: AgentScope) -> None:
        self.scope = scope
        self.first_agent_seen = False


_runner: contextvars.ContextVar[_Runner | None] = contextvars.ContextVar("agentotel_agents_runner", default=None)


def _agent_name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or "agent")


async def _runner_run(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if suppressed() or _runner.get() is not None:  # run_sync -> run: one scope
        return await wrapped(*args, **kwargs)
    agent = args[0] if args else kwargs.get("starting_agent")
    with AgentScope(_agent_name(agent)) as scope:
        token = _runner.set(_Runner(scope))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _runner.reset(token)


async def _start_streaming(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # run_streamed's loop, in the background task it starts: the run lasts as long as the loop.
    if suppressed() or _runner.get() is not None:
        return await wrapped(*args, **kwargs)
    with AgentScope(_agent_name(kwargs.get("starting_agent"))) as scope:
        token = _runner.set(_Runner(scope))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _runner.reset(token)


# The SDK's agent spans (started and finished in the run loop's task) -> our invoke_agent step spans.
_agent_spans: dict[int, tuple[Any, Any, Any]] = {}  # id(SDK span) -> (SDK span, our span, context token)
_agent_lock = threading.Lock()


def _span_start(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    result = wrapped(*args, **kwargs)
    try:
        data = instance.span_data
        if type(data).__name__ == "AgentSpanData" and not suppressed() and _context.current_run() is not None:
            _agent_started(instance, str(getattr(data, "name", None) or "agent"))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.agents.agent_span", exc)
    return result


def _agent_started(sdk_span: Any, name: str) -> None:
    runner = _runner.get()
    if runner is not None and not runner.first_agent_seen:
        runner.first_agent_seen = True
        if name == runner.scope.name:
            return  # the starting agent: the Runner's scope already stands for it
    span = start_agent_step(name)
    token = context.attach(trace.set_span_in_context(span))
    with _agent_lock:
        _agent_spans[id(sdk_span)] = (sdk_span, span, token)


def _span_finish(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if _agent_spans:
        with _agent_lock:
            entry = _agent_spans.get(id(instance))
            if entry is not None and entry[0] is instance:
                del _agent_spans[id(instance)]
            else:
                entry = None
        if entry is not None:
            _sdk_span, span, token = entry
            try:
                context.detach(token)
            except Exception:  # noqa: BLE001 - finished in another context than it started: the span still ends
                pass
            span.end()
    return wrapped(*args, **kwargs)
