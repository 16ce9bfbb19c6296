"""LangChain: tool runs, retrievers, chains (LangGraph's graphs: langgraph.py).

- `BaseTool.run` / `arun` (every tool, `@tool` and `StructuredTool` included, however invoked: directly,
  by `invoke`, or by LangGraph's `ToolNode`) is an `execute_tool {name}` span: the arguments the model
  gave (injected ones left out), the tool message's content as the result (also when it comes in a
  LangGraph `Command(update=...)`), the tool call's id. A tool error the tool handled
  (`handle_tool_error`: the model gets an error message) marks the span ERROR.
- `BaseRetriever.invoke` / `ainvoke` is a `retrieval {retriever}` span with the query and the documents.
- A chat model's call (`BaseChatModel.generate` / `agenerate` / `stream` / `astream`, where every call of one
  goes) adds no step (the provider's request is the model step); in a node of a graph of agents it makes the
  node an agent (langgraph.py).
- An LCEL chain (`RunnableSequence`: `retriever | format_docs | prompt | llm`) invoked or streamed when no
  run is open opens `agentotel.run(<run_name, else the chain's name, else "chain">)`, so its retrieval and
  model steps are one run; inside a run (or a graph) it adds nothing: a chain is no agent.
"""

from __future__ import annotations

from typing import Any

from agentotel import _context
from agentotel._internal import report_internal_error
from agentotel.integrations import langgraph
from agentotel.integrations._common import AgentScope, scoped_astream, scoped_stream, suppressed, traced, traced_async
from agentotel.tools import DefinedTool, ToolCall, defined_tool, retrieval_call, start_tool_call


def patches() -> list[tuple[Any, str, Any]]:
    from langchain_core.language_models import BaseChatModel
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
        (BaseChatModel, "generate", _generate),
        (BaseChatModel, "agenerate", _agenerate),
        (BaseChatModel, "stream", _model_stream),
        (BaseChatModel, "astream", _model_stream),
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


# --- chat models ---------------------------------------------------------------------------------------------


def _generate(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    # Every way a chat model is called reaches generate, agenerate or a stream (invoke -> generate); in a graph of
    # agents the node calling it is an agent from now on. The call itself is the provider's model step.
    task = langgraph.model_called()
    result = wrapped(*args, **kwargs)
    if task is not None:
        langgraph.model_answered(task, result)
    return result


async def _agenerate(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    task = langgraph.model_called()
    result = await wrapped(*args, **kwargs)
    if task is not None:
        langgraph.model_answered(task, result)
    return result


def _model_stream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    langgraph.model_called()
    return wrapped(*args, **kwargs)


# --- chains ------------------------------------------------------------------------------------------------


def _chain_run(instance: Any, args: tuple, kwargs: dict) -> AgentScope | None:
    """The run a top-level chain opens (None: a run is open, or a graph runs it: it adds nothing)."""
    if suppressed() or langgraph.in_graph() or _context.current_run() is not None:
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
    return wrapped(*args, **kwargs) if scope is None else scoped_stream(scope, wrapped, args, kwargs)


def _chain_astream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    scope = _chain_run(instance, args, kwargs)
    return wrapped(*args, **kwargs) if scope is None else scoped_astream(scope, wrapped, args, kwargs)
