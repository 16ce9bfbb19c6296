"""LangChain and LangGraph: tool runs, retrievers, graph invocations.

- `BaseTool.run` / `arun` (every tool, `@tool` and `StructuredTool` included, however invoked: directly,
  by `invoke`, or by LangGraph's `ToolNode`) is an `execute_tool {name}` span: the arguments the model
  gave (injected ones left out), the tool message's content as the result (also when it comes in a
  LangGraph `Command(update=...)`), the tool call's id. A tool error the tool handled
  (`handle_tool_error`: the model gets an error message) marks the span ERROR.
- `BaseRetriever.invoke` / `ainvoke` is a `retrieval {retriever}` span with the query and the documents.
- A compiled graph's `invoke` / `ainvoke` / `stream` / `astream` opens `agentotel.run(<graph name>)`
  when no run is open, else is an `invoke_agent {graph}` step of the open run; a graph run by another
  graph (a subgraph) adds nothing of its own.
- An LCEL chain (`RunnableSequence`: `retriever | format_docs | prompt | llm`) invoked or streamed when no
  run is open opens `agentotel.run(<run_name, else the chain's name, else "chain">)`, so its retrieval and
  model steps are one run; inside a run (or a graph) it adds nothing: a chain is no agent.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from typing import Any

from agentotel import _context
from agentotel._internal import report_internal_error
from agentotel.integrations._common import AgentScope, suppressed, traced, traced_async
from agentotel.tools import DefinedTool, ToolCall, defined_tool, retrieval_call, start_tool_call


def patches() -> list[tuple[Any, str, Any]]:
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables.base import RunnableSequence
    from langchain_core.tools import BaseTool

    return [
        (BaseTool, "run", _run),
        (BaseTool, "arun", _arun),
        (BaseRetriever, "invoke", _retrieve),
        (BaseRetriever, "ainvoke", _aretrieve),
        (RunnableSequence, "invoke", _chain_invoke),
        (RunnableSequence, "ainvoke", _chain_ainvoke),
        (RunnableSequence, "stream", _chain_stream),
        (RunnableSequence, "astream", _chain_astream),
    ]


def graph_patches() -> list[tuple[Any, str, Any]]:
    from langgraph.pregel import Pregel

    return [
        (Pregel, "invoke", _graph_invoke),
        (Pregel, "ainvoke", _graph_ainvoke),
        (Pregel, "stream", _graph_stream),
        (Pregel, "astream", _graph_astream),
    ]


# --- tools -----------------------------------------------------------------------------------------------

# id(tool) -> (the tool, kept so the id stays its own; its definition; the names of its injected arguments)
_tools: dict[int, tuple[Any, DefinedTool, frozenset[str]]] = {}
_ALWAYS_INJECTED = frozenset({"run_manager", "callbacks", "config"})


def _definition(tool: Any) -> tuple[Any, DefinedTool, frozenset[str]]:
    entry = _tools.get(id(tool))
    if entry is None or entry[0] is not tool:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        try:  # the definition a model is given (what `bind_tools` sends): injected arguments are not in it
            function = convert_to_openai_tool(tool)["function"]
            definition = defined_tool(function["name"], function.get("description"), function.get("parameters"))
            offered = set((function.get("parameters") or {}).get("properties") or ())
            injected = (_input_fields(tool) | _ALWAYS_INJECTED) - offered
        except Exception:  # noqa: BLE001 - a tool without a schema a model could be given
            definition = defined_tool(str(tool.name), getattr(tool, "description", None), None)
            injected = _ALWAYS_INJECTED
        if len(_tools) > 4096:
            _tools.clear()
        entry = _tools[id(tool)] = (tool, definition, injected)
    return entry


def _input_fields(tool: Any) -> frozenset[str]:
    """Every argument the tool takes, injected ones included (`tool.args` leaves InjectedState, ToolRuntime and
    the like out on langchain-core 1.x, its input schema keeps them)."""
    fields: set[str] = set(getattr(tool, "args", None) or ())
    try:
        fields.update(getattr(tool.get_input_schema(), "model_fields", None) or ())
    except Exception:  # noqa: BLE001 - a tool without an input schema: its offered arguments are all
        pass
    return frozenset(fields)


def _start(tool: Any, args: tuple, kwargs: dict) -> ToolCall | None:
    if suppressed():
        return None
    try:
        tool_input = args[0] if args else kwargs.get("tool_input")
        _tool, definition, injected = _definition(tool)
        if isinstance(tool_input, dict) and not injected.isdisjoint(tool_input):
            tool_input = {k: v for k, v in tool_input.items() if k not in injected}
        return start_tool_call(definition, tool_input, kwargs.get("tool_call_id"))
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.langchain.tool", exc)
        return None


def _end(call: ToolCall, output: Any) -> None:
    # With a tool-call id the result is a ToolMessage: its content is what the model sees.
    message = _tool_message(output)
    if message is not None:
        content = getattr(message, "content", message)
        if getattr(message, "status", None) == "error":
            call.failed(content)
            return
        output = content
    call.succeed(output)


def _tool_message(output: Any) -> Any:
    """The ToolMessage a tool answered with: the result itself, or the one a LangGraph `Command(update=...)`
    adds to the state's messages (a tool that updates the graph's state, or hands off)."""
    kind = type(output).__name__
    if kind == "ToolMessage":
        return output
    if kind == "Command":
        update = getattr(output, "update", None)
        messages = update.get("messages") if isinstance(update, dict) else None
        for message in reversed(messages if isinstance(messages, list) else ()):
            if type(message).__name__ == "ToolMessage":
                return message
    return None


def _run(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return traced(_start(instance, args, kwargs), wrapped, args, kwargs, _end)


async def _arun(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return await traced_async(_start(instance, args, kwargs), wrapped, args, kwargs, _end)


# --- retrievers --------------------------------------------------------------------------------------------


def _start_retrieval(retriever: Any, args: tuple, kwargs: dict) -> ToolCall | None:
    if suppressed():
        return None
    name = getattr(retriever, "name", None) or type(retriever).__name__
    return retrieval_call(str(name), args[0] if args else kwargs.get("input"))


def _retrieve(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return traced(_start_retrieval(instance, args, kwargs), wrapped, args, kwargs)


async def _aretrieve(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return await traced_async(_start_retrieval(instance, args, kwargs), wrapped, args, kwargs)


# --- graphs ------------------------------------------------------------------------------------------------

# Set while a graph invocation is traced: invoke runs stream, a subgraph runs inside its parent.
_in_graph: contextvars.ContextVar[bool] = contextvars.ContextVar("agentotel_langgraph", default=False)


def _graph_name(graph: Any) -> str:
    return str(getattr(graph, "name", None) or "graph")


def _graph_invoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if suppressed() or _in_graph.get():
        return wrapped(*args, **kwargs)
    with AgentScope(_graph_name(instance)):
        token = _in_graph.set(True)
        try:
            return wrapped(*args, **kwargs)
        finally:
            _in_graph.reset(token)


async def _graph_ainvoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if suppressed() or _in_graph.get():
        return await wrapped(*args, **kwargs)
    with AgentScope(_graph_name(instance)):
        token = _in_graph.set(True)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _in_graph.reset(token)


def _graph_stream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if suppressed() or _in_graph.get():
        return wrapped(*args, **kwargs)
    return _scoped_stream(AgentScope(_graph_name(instance)), wrapped, args, kwargs)


def _scoped_stream(scope: AgentScope, wrapped: Any, args: tuple, kwargs: dict, graph: bool = True) -> Any:
    # The graph's steps run while the caller iterates. They run in a context of their own (a copy of the
    # caller's at the first item), so the run or step this opens is current for them and never for the
    # caller's code between items.
    ctx = contextvars.copy_context()
    ctx.run(_enter, scope, graph)
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
    except BaseException as exc:  # the graph failed, or the caller closed the stream early (GeneratorExit)
        ctx.run(_close, iterator)
        ctx.run(scope.__exit__, type(exc), exc, None)
        raise
    ctx.run(scope.__exit__, None, None, None)


def _enter(scope: AgentScope, graph: bool) -> None:
    scope.__enter__()
    if graph:  # a chain's run is no graph: a graph it runs is a step of that run
        _in_graph.set(True)


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def _graph_astream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    if suppressed() or _in_graph.get():
        return wrapped(*args, **kwargs)
    return _scoped_astream(AgentScope(_graph_name(instance)), wrapped, args, kwargs)


async def _scoped_astream(scope: AgentScope, wrapped: Any, args: tuple, kwargs: dict, graph: bool = True) -> Any:
    # As _scoped_stream: each step of the graph's async iterator runs as a task in the graph's context.
    ctx = contextvars.copy_context()
    ctx.run(_enter, scope, graph)
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


# --- chains ------------------------------------------------------------------------------------------------


def _chain_run(instance: Any, args: tuple, kwargs: dict) -> AgentScope | None:
    """The run a top-level chain opens (None: a run is open, or a graph runs it: it adds nothing)."""
    if suppressed() or _in_graph.get() or _context.current_run() is not None:
        return None
    config = args[1] if len(args) > 1 else kwargs.get("config")
    name = (config or {}).get("run_name") if isinstance(config, dict) else None
    return AgentScope(str(name or getattr(instance, "name", None) or "chain"), step=False)


def _chain_invoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    scope = _chain_run(instance, args, kwargs)
    if scope is None:
        return wrapped(*args, **kwargs)
    with scope:
        return wrapped(*args, **kwargs)


async def _chain_ainvoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    scope = _chain_run(instance, args, kwargs)
    if scope is None:
        return await wrapped(*args, **kwargs)
    with scope:
        return await wrapped(*args, **kwargs)


def _chain_stream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    scope = _chain_run(instance, args, kwargs)
    return wrapped(*args, **kwargs) if scope is None else _scoped_stream(scope, wrapped, args, kwargs, graph=False)


def _chain_astream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    scope = _chain_run(instance, args, kwargs)
    return wrapped(*args, **kwargs) if scope is None else _scoped_astream(scope, wrapped, args, kwargs, graph=False)
