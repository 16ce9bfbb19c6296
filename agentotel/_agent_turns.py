"""Which nodes of a LangGraph graph are agents, and when each agent's turn begins and ends: the one rule.

Two readers drive it: agentotel's LangGraph integration (integrations/langgraph.py), live, as LangGraph runs a
node's tasks, and the trajectory (query/trajectory.py), after the fact, from OpenInference's spans of the same
graph (a CHAIN span a node's task). So a graph of agents shows the same agent steps whoever recorded it. It
knows nothing of spans: a turn's `handle` is whatever its reader opened for it (a span, a row).

The rule (the integration's docstring tells it whole): a graph of two or more candidate nodes is a graph of
agents. A candidate node that runs a subgraph is an agent from its start; any other becomes one at its first chat
model call. An agent's turn lasts through the nodes that serve it (its tool node, a router) and its own next
visits, until another agent's turn opens in a later superstep, or the graph ends. A node that is no agent serves
the turn of the agent whose model asked for the tool calls it runs, else of the only open one. Agents started in
one superstep (a fan-out) each have a turn of their own.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

TOOL_NODES = frozenset({"ToolNode", "ValidationNode"})  # LangGraph's prebuilt nodes that run tool calls
PREBUILT_HOOKS = frozenset({"pre_model_hook", "post_model_hook", "generate_structured_response"})  # create_react_agent's
DEFAULT_GRAPH_NAME = "LangGraph"  # what a compiled graph is called unless given a name


def candidate(node: str) -> bool:
    """Whether a node (by name) may be an agent: not LangGraph's own (`__start__`) nor create_react_agent's hooks.
    (A tool node is no candidate either: each reader tells those by what it sees.)"""
    return not node.startswith("__") and node not in PREBUILT_HOOKS


def agent_name(node: str, subgraphs: Iterable[str | None]) -> str:
    """An agent's name: the first of the subgraphs it runs named by `name=`, else its node's."""
    named = [str(g) for g in subgraphs if g not in (None, DEFAULT_GRAPH_NAME)]
    return named[0] if named else node


class Turn:
    """An agent's turn: its reader's handle, the tasks running in it now, when the last of them ended, the latest
    superstep it ran in."""

    __slots__ = ("node", "handle", "running", "last_end", "step")

    def __init__(self, node: str, handle: Any, step: int) -> None:
        self.node = node
        self.handle = handle
        self.running = 0
        self.last_end: int | None = None
        self.step = step


class Task:
    """A node's task: its superstep, start (ns), and the turn it runs in (its own, `own`, or one it serves)."""

    __slots__ = ("node", "step", "start", "turn", "own")

    def __init__(self, node: str, step: int, start: int) -> None:
        self.node = node
        self.step = step
        self.start = start
        self.turn: Turn | None = None
        self.own = False


class Turns:
    """One invocation of a graph of agents. `agents`: candidate node -> (its agent's name, whether it is an agent
    from its start). `open_turn(name, start)` opens a turn's handle, `close_turn(handle, end)` ends it. The caller
    serialises the calls (the integration holds a lock)."""

    __slots__ = ("agents", "open", "asked", "_open_turn", "_close_turn")

    def __init__(self, agents: dict[str, tuple[str, bool]], open_turn: Callable[[str, int], Any],
                 close_turn: Callable[[Any, int | None], None]) -> None:
        self.agents = agents
        self.open: list[Turn] = []
        self.asked: dict[str, Turn] = {}  # tool call id -> the turn whose model asked for it
        self._open_turn = open_turn
        self._close_turn = close_turn

    def task_started(self, task: Task, call_ids: Callable[[], Iterable[str]]) -> Turn | None:
        """The turn `task` runs in as it starts (None: the graph's own level); `call_ids()`: the tool calls it runs."""
        spec = self.agents.get(task.node)
        # Its own turn of an earlier superstep, still open: the same turn (planner -> its tools -> planner).
        turn = next((t for t in self.open if t.node == task.node and t.running == 0 and t.step < task.step), None) if spec else None
        if turn is not None or (spec is not None and spec[1]):
            task.own = True
            turn = turn or self._open(task, spec[0])  # type: ignore[index]
        else:  # no agent (yet): it serves the turn of the agent that asked for its tool calls, else of the only one
            turn = next((t for i in call_ids() if (t := self.asked.get(i)) in self.open), None)
            if turn is None and len(self.open) == 1:
                turn = self.open[0]
        if turn is not None:
            turn.running += 1
            if spec is None or task.own:  # a node that may yet be an agent of its own does not extend another's turn
                turn.step = max(turn.step, task.step)
        task.turn = turn
        return turn

    def model_called(self, task: Task, now: int) -> Turn | None:
        """`task`'s node called a chat model: the turn it opened when that makes it an agent (None: nothing new)."""
        spec = self.agents.get(task.node)
        if spec is None or task.own:
            return None
        if task.turn is not None:
            self._leave(task.turn, now)
        turn = task.turn = self._open(task, spec[0])
        turn.running += 1
        task.own = True
        return turn

    def model_answered(self, task: Task, call_ids: list[str]) -> None:
        """The model `task`'s agent called asked for these tool calls."""
        if task.own and call_ids:
            if len(self.asked) > 4096:
                self.asked.clear()
            self.asked.update((i, task.turn) for i in call_ids)  # type: ignore[misc]

    def task_ended(self, task: Task, now: int) -> None:
        if task.turn is not None:
            self._leave(task.turn, now)

    def close(self) -> None:
        turns, self.open = self.open, []
        for turn in turns:
            self._close_turn(turn.handle, turn.last_end)

    def _open(self, task: Task, name: str) -> Turn:
        # Another agent's turn begins: those of earlier supersteps not running any more have had theirs (agents of
        # this superstep run side by side, however their tasks' times fall).
        for idle in [t for t in self.open if t.running == 0 and t.step < task.step]:
            self.open.remove(idle)
            self._close_turn(idle.handle, idle.last_end)
        turn = Turn(task.node, self._open_turn(name, task.start), task.step)
        self.open.append(turn)
        return turn

    @staticmethod
    def _leave(turn: Turn, now: int) -> None:
        turn.running -= 1
        turn.last_end = now
