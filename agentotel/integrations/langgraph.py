"""LangGraph: a compiled graph's invocation, and each agent of a multi-agent graph as a step of its own.

- A compiled graph's `invoke` / `ainvoke` / `stream` / `astream` opens `agentotel.run(<graph name>)` when no
  run is open, else is an `invoke_agent {graph}` step of the open run, also when a tool runs it (an agent used
  as a tool: its step inside the tool's, as the Agents SDK's). A graph run inside a node of another graph (a
  subgraph) adds no step of its own: the node that runs it is one (below).
- In a graph of several agents, each agent's turn is an `invoke_agent {agent}` step nested in the graph's step
  (or in the run), holding that agent's model and tool steps. Which nodes are agents is read from the compiled
  graph and from what its nodes do:
  * a graph's candidate nodes are all its nodes but `__start__`, tool nodes (`ToolNode`, `ValidationNode`) and
    create_react_agent's own hooks (`pre_model_hook`, `post_model_hook`, `generate_structured_response`). A graph
    with fewer than two is one agent itself, its nodes add nothing: `create_react_agent` alone is still its model
    and tool steps under the graph's step, as is a hand-built `agent` + `ToolNode` loop (with a tool node written
    as a function instead, the graph has two candidates: its model node is an agent step inside the graph's);
  * a candidate node whose runnable is, or calls, a compiled graph (LangGraph's `PregelNode.subgraphs`: a
    `create_react_agent(..., name=...)` sub-agent, a team) is an agent from its start, named by the subgraph's
    `name=` (else by the node);
  * any other candidate node becomes an agent, named by the node, at its first LangChain chat-model call
    (`BaseChatModel`: invoke, stream, batch, with tools bound or structured output); one that never calls a
    model (a router, a state transform) adds nothing. A node calling a model without LangChain (the openai SDK
    itself) is no agent by this rule: its model steps stay the graph's.
  An agent's step lasts its turn: it stays open through the nodes that serve it (its `ToolNode`, a router) and
  its own next visits, until another agent's step opens in a later superstep, or the graph ends. So planner ->
  planner_tools -> planner is one step holding the tool calls, planner -> executor -> planner three. A node that
  is no agent runs inside the step of the agent whose model asked for the tool calls it runs (the ids in the last
  message of its input, as LangGraph's ToolNode reads them; known for a model called by invoke, not streamed),
  else of the only open agent, else the graph's. Agents started in one superstep (a fan-out, `Send`) each have
  their own step. A node failing ends its agent's step as an error; an interrupt or a `Command` to the parent
  graph does not.
- The rule of which nodes are agents and how long a turn lasts is `agentotel/_agent_turns.py`, which this module
  drives live and the trajectory replays over OpenInference's spans of a graph (query/_graph_agents.py).
- Hooks: LangGraph's own runner of a node's task (`run_with_retry` / `arun_with_retry` in
  `langgraph.pregel._runner`, every task of every superstep, sync or async, invoke or stream, inline or in a
  thread or task of its own) and the graph's `nodes`. A langgraph without them records the graph's step only.
  A task's span is decided while it runs (its first model call can make it an agent), so the span current in a
  task stands for the span its steps nest in (`_NodeParent`) rather than being one.
"""

from __future__ import annotations

import contextvars
import threading
import time
from typing import Any

from opentelemetry import context, trace

from agentotel._agent_turns import TOOL_NODES, Task, Turns, agent_name, candidate
from agentotel._internal import report_internal_error
from agentotel.content import Payload
from agentotel.integrations._common import (
    AgentScope, current_tool_span, scoped_astream, scoped_stream, start_agent_step, suppressed,
)
from agentotel.runs import record_error


def patches() -> list[tuple[Any, str, Any]]:
    from langgraph.pregel import Pregel

    found = [
        (Pregel, "invoke", _graph_invoke),
        (Pregel, "ainvoke", _graph_ainvoke),
        (Pregel, "stream", _graph_stream),
        (Pregel, "astream", _graph_astream),
    ]
    try:
        from langgraph.pregel import _runner
    except ImportError:  # another layout of the Pregel loop: graphs are steps, their nodes add nothing
        return found
    return found + [(_runner, "run_with_retry", _run_task), (_runner, "arun_with_retry", _arun_task)]


# --- which nodes are agents ------------------------------------------------------------------------------


def _graph_name(graph: Any) -> str:
    return str(getattr(graph, "name", None) or "graph")


def _agent_nodes(graph: Any) -> dict[str, tuple[str, bool]] | None:
    """The graph's candidate nodes: node -> (its agent's name, whether it is an agent from its start: a
    subgraph); None when there are fewer than two (the graph is one agent)."""
    found: dict[str, tuple[str, bool]] = {}
    for node, spec in (getattr(graph, "nodes", None) or {}).items():
        runnable = getattr(spec, "bound", None)
        if not candidate(node) or any(c.__name__ in TOOL_NODES for c in type(runnable).__mro__):
            continue
        subgraphs = getattr(spec, "subgraphs", None) or ()
        found[node] = (agent_name(node, [getattr(g, "name", None) for g in subgraphs]), bool(subgraphs))
    return found if len(found) > 1 else None


# --- one invocation of a graph ---------------------------------------------------------------------------


class _Task(Task):
    """A node's task running (the rule's `Task`), in its graph's invocation, with the span current in it."""

    __slots__ = ("graph", "parent")

    def __init__(self, graph: "_Graph", node: str, step: int) -> None:
        super().__init__(node, step, time.time_ns())
        self.graph = graph
        self.parent: _NodeParent | None = None


class _NodeParent(trace.NonRecordingSpan):
    """The span current in a node's task of a graph of agents: it stands for the span the task's steps nest in
    (the graph's step, the agent whose turn it serves, its own agent's step once it calls a model), which every
    context the node's code runs in (LangGraph and LangChain copy theirs) sees change."""

    def __init__(self, target: Any) -> None:
        super().__init__(trace.INVALID_SPAN_CONTEXT)
        self.target = target

    def get_span_context(self) -> trace.SpanContext:
        return self.target.get_span_context()


class _Graph:
    """One invocation of a compiled graph: its agents' turns (`Turns`, whose handles are their steps' spans; None
    for a graph that is one agent)."""

    __slots__ = ("turns", "parent", "outer", "lock")

    def __init__(self, graph: Any, outer: _Task | None) -> None:
        agents = _agent_nodes(graph)
        self.parent = trace.get_current_span()  # what its agents' steps nest in
        self.outer = outer  # the task of the graph running this one in a node, if any
        self.turns = None if agents is None else Turns(agents, self._open_step, _end_step)
        self.lock = threading.Lock()

    def _open_step(self, name: str, start: int) -> Any:
        return start_agent_step(name, trace.set_span_in_context(self.parent), start)

    def task_started(self, task: _Task, pregel_task: Any) -> Any:
        """The span `task`'s steps nest in as it starts (`pregel_task`: LangGraph's task)."""
        with self.lock:
            turn = self.turns.task_started(task, lambda: _tool_calls_in(pregel_task))  # type: ignore[union-attr]
        return turn.handle if turn is not None else self.parent

    def model_called(self, task: _Task) -> None:
        """`task`'s node called a model: an agent from now on, when it is one of the graph's agents."""
        if task.parent is None:
            return
        with self.lock:
            turn = self.turns.model_called(task, time.time_ns())  # type: ignore[union-attr]
        if turn is not None:
            task.parent.target = turn.handle

    def model_answered(self, task: _Task, call_ids: list[str]) -> None:
        """The model `task`'s agent called asked for these tool calls."""
        with self.lock:
            self.turns.model_answered(task, call_ids)  # type: ignore[union-attr]

    def task_ended(self, task: _Task, exc: BaseException | None) -> None:
        if task.turn is None:
            return
        with self.lock:
            self.turns.task_ended(task, time.time_ns())  # type: ignore[union-attr]
        if exc is not None and task.own and not _bubbles_up(exc):
            record_error(task.turn.handle, exc, Payload())

    def close(self) -> None:
        if self.turns is not None:
            with self.lock:
                self.turns.close()


def _end_step(span: Any, end: int | None) -> None:
    span.end(end_time=end)


def _tool_calls_in(task: Any) -> list[str]:
    """The ids of the tool calls a tool node's task is to run: those of the last message of its input's message list
    (what LangGraph's ToolNode runs: the list under its `messages_key`, else the first list with tool calls)."""
    state = getattr(task, "input", None)
    proc = getattr(task, "proc", None)
    runnable = next(iter(getattr(proc, "steps", None) or ()), proc)  # the node's own runnable, then its writers
    key = getattr(runnable, "_messages_key", None) or getattr(runnable, "messages_key", None)  # ToolNode's, by version
    values = [state.get(key)] if isinstance(state, dict) and key in state else state.values() if isinstance(state, dict) else [state]
    for value in values:
        if isinstance(value, list) and value:
            calls = getattr(value[-1], "tool_calls", None)
            if calls:
                return [str(c.get("id")) for c in calls if isinstance(c, dict)]
    return []


def _bubbles_up(exc: BaseException) -> bool:
    """An interrupt, or a `Command` for the parent graph: how LangGraph passes control, no failure."""
    return any(c.__name__ == "GraphBubbleUp" for c in type(exc).__mro__)


# The graph invocation whose tasks run here, and the node task running here (None: the graph's own level).
_graph: contextvars.ContextVar[_Graph | None] = contextvars.ContextVar("agentotel_langgraph", default=None)
_task: contextvars.ContextVar[_Task | None] = contextvars.ContextVar("agentotel_langgraph_task", default=None)


def in_graph() -> bool:
    """A graph runs here (a chain it runs is no run of its own)."""
    return _graph.get() is not None


class _Invocation:
    """A graph's invocation: its scope (a run, or a step of one; none for a subgraph) and its agents."""

    __slots__ = ("pregel", "scope", "graph", "tokens")

    def __init__(self, pregel: Any, scope: AgentScope | None) -> None:
        self.pregel = pregel
        self.scope = scope
        self.graph: _Graph | None = None
        self.tokens: Any = None

    def __enter__(self) -> "_Invocation":
        if self.scope is not None:
            self.scope.__enter__()
        try:
            # A subgraph's model calls can make the node running it an agent; an agent of its own is no node's.
            self.graph = _Graph(self.pregel, _task.get() if self.scope is None else None)
            self.tokens = (_graph.set(self.graph), _task.set(None))
        except Exception as exc:  # noqa: BLE001 - its nodes run untraced
            report_internal_error("integrations.langgraph.graph", exc)
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if self.tokens is not None:
                _task.reset(self.tokens[1])
                _graph.reset(self.tokens[0])
            if self.graph is not None:
                self.graph.close()
        except Exception as internal:  # noqa: BLE001
            report_internal_error("integrations.langgraph.graph_exit", internal)
        if self.scope is not None:
            self.scope.__exit__(exc_type, exc, tb)


def _invocation(pregel: Any) -> _Invocation | None:
    """What invoking `pregel` here opens (None: nothing, it runs as it is)."""
    if suppressed():
        return None
    if _graph.get() is None or current_tool_span() is not None:  # a graph a tool runs is an agent used as a tool
        return _Invocation(pregel, AgentScope(_graph_name(pregel)))
    if _task.get() is None:
        return None  # invoke running its own stream: the same invocation
    return _Invocation(pregel, None)  # a subgraph, run by a node of its parent


def _graph_invoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    invocation = _invocation(instance)
    if invocation is None:
        return wrapped(*args, **kwargs)
    with invocation:
        return wrapped(*args, **kwargs)


async def _graph_ainvoke(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    invocation = _invocation(instance)
    if invocation is None:
        return await wrapped(*args, **kwargs)
    with invocation:
        return await wrapped(*args, **kwargs)


def _graph_stream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    invocation = _invocation(instance)
    return wrapped(*args, **kwargs) if invocation is None else scoped_stream(invocation, wrapped, args, kwargs)


def _graph_astream(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    invocation = _invocation(instance)
    return wrapped(*args, **kwargs) if invocation is None else scoped_astream(invocation, wrapped, args, kwargs)


# --- node tasks ----------------------------------------------------------------------------------------------


def _task_started(args: tuple, kwargs: dict) -> tuple[_Task, Any] | None:
    graph = _graph.get()
    if graph is None:
        return None
    try:
        pregel_task = args[0] if args else kwargs.get("task")
        metadata = (getattr(pregel_task, "config", None) or {}).get("metadata") or {}
        task = _Task(graph, str(getattr(pregel_task, "name", "")), int(metadata.get("langgraph_step") or 0))
        token = _task.set(task)
        if graph.turns is None:  # a graph that is one agent: its nodes' steps are its own
            return task, (token, None)
        task.parent = _NodeParent(graph.task_started(task, pregel_task))
        return task, (token, context.attach(trace.set_span_in_context(task.parent)))
    except Exception as exc:  # noqa: BLE001 - the task runs untraced
        report_internal_error("integrations.langgraph.task", exc)
        return None


def _task_ended(started: tuple[_Task, Any], exc: BaseException | None) -> None:
    task, (token, attached) = started
    try:
        if attached is not None:
            context.detach(attached)
        _task.reset(token)
        task.graph.task_ended(task, exc)
    except Exception as internal:  # noqa: BLE001
        report_internal_error("integrations.langgraph.task_end", internal)


def _run_task(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    started = _task_started(args, kwargs)
    if started is None:
        return wrapped(*args, **kwargs)
    try:
        result = wrapped(*args, **kwargs)
    except BaseException as exc:
        _task_ended(started, exc)
        raise
    _task_ended(started, None)
    return result


async def _arun_task(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    started = _task_started(args, kwargs)
    if started is None:
        return await wrapped(*args, **kwargs)
    try:
        result = await wrapped(*args, **kwargs)
    except BaseException as exc:
        _task_ended(started, exc)
        raise
    _task_ended(started, None)
    return result


def model_called() -> _Task | None:
    """A LangChain chat model is called here: the node running it (or, in a subgraph that is one agent, the
    node of the outer graph running that) is an agent from now on, when its graph says it is one. Returns that
    node's task (for `model_answered`), None outside a graph of agents."""
    task = _task.get()
    if task is None:
        return None
    try:
        while task is not None and task.graph.turns is None:
            task = task.graph.outer
        if task is not None:
            task.graph.model_called(task)
        return task
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.langgraph.model", exc)
        return None


def model_answered(task: _Task, result: Any) -> None:
    """A chat model's `generate` result in `task`: the tool calls it asked for are its agent's (a tool node running
    beside other agents' turns serves the one that asked)."""
    try:
        messages = [getattr(g, "message", None) for generations in getattr(result, "generations", None) or () for g in generations]
        task.graph.model_answered(task, [str(c.get("id")) for m in messages for c in getattr(m, "tool_calls", None) or ()])
    except Exception as exc:  # noqa: BLE001
        report_internal_error("integrations.langgraph.model_answer", exc)
