"""A multi-agent LangGraph graph recorded by OpenInference: each agent's turn an agent step, as agentotel records it.

OpenInference's LangChain instrumentation records a node's task as a span of its own (the store's dialect marks it
`langgraph`, store/dialects.py), and nothing of which nodes are agents. This replays agentotel's one rule
(agentotel/_agent_turns.py, which the LangGraph integration drives live) over those spans in time order: a node
task's start and end, its first model call, the tool calls that model asked for, the tool calls a node ran. The
span of the task that opened a turn becomes the turn's `invoke_agent {agent}` step, lasting the turn; the spans of
the tasks that ran in the turn since (its tool node, its next visits) nest in it.

What the spans cannot say, the replay reads from what ran: a tool node is a node whose task wrote tool messages only
(dialect `langgraph-tools`) or ran tool calls and nothing else that is a step, and the graph's candidate nodes are
those that ran (the integration reads the compiled graph's). A trace in which agentotel recorded agent steps of its own is left alone: its integration
recorded the agents.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentotel import _json
from agentotel._agent_turns import Task, Turns, agent_name, candidate
from agentotel._internal import report_internal_error
from agentotel.store.dialects import LANGGRAPH_NODE, LANGGRAPH_TOOL_NODE

_NODE_DIALECTS = frozenset({LANGGRAPH_NODE, LANGGRAPH_TOOL_NODE})


def graph_agents(rows: list[Mapping[str, Any]]) -> None:
    """Turn the node spans of each multi-agent graph invocation in `rows` (one trace's, as build_trajectory reads
    them) into its agents' steps, in place."""
    nodes = [i for i, r in enumerate(rows) if _NODE_DIALECTS.intersection((r.get("dialect") or "").split("+"))]
    if not nodes or any(r.get("own") and r.get("step_type") == "agent" for r in rows):
        return
    children: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r.get("parent_span_id"):
            children.setdefault(r["parent_span_id"], []).append(i)
    graphs: dict[str, list[int]] = {}  # graph invocation span -> its node tasks' rows
    for i in nodes:
        graphs.setdefault(rows[i].get("parent_span_id") or "", []).append(i)
    replays = [r for tasks in graphs.values() if (r := _Replay(rows, tasks, children, graphs)).turns is not None]
    if not replays:
        return
    task_of = {i: replay for replay in replays for i in replay.tasks}
    by_id = {r["span_id"]: i for i, r in enumerate(rows)}
    for i, r in enumerate(rows):  # each model call to the node task that made it (of the innermost graph of agents)
        at = r.get("parent_span_id") if r.get("step_type") == "llm" else None
        while at in by_id and by_id[at] not in task_of:
            at = rows[by_id[at]].get("parent_span_id")
        if at in by_id:
            task_of[by_id[at]].models.append((i, by_id[at]))
    for replay in replays:
        try:
            replay.run()
        except Exception as exc:  # noqa: BLE001 - spans of a shape the replay does not know: its graph's nodes stay no steps
            report_internal_error("query.graph_agents", exc)


class _Replay:
    """One graph invocation's node tasks, replayed through the rule."""

    def __init__(self, rows: list[Mapping[str, Any]], tasks: list[int], children: dict[str, list[int]],
                 graphs: dict[str, list[int]]) -> None:
        self.rows = rows
        self.children = children
        self.models: list[tuple[int, int]] = []  # (model call's row, its node task's row)
        self.tasks: dict[int, Task] = {}
        ran: dict[str, list[str]] = {}  # candidate node -> the subgraphs its tasks ran
        for step, i in _supersteps(rows, tasks):
            node = str(rows[i].get("name") or "")
            self.tasks[i] = Task(node, step, rows[i].get("start_ns") or 0)
            kids = [rows[k] for k in children.get(rows[i]["span_id"], ())]
            worked = [k.get("step_type") for k in kids if k.get("step_type")]
            subgraphs = [k.get("name") for k in kids if k["span_id"] in graphs]
            tools = LANGGRAPH_TOOL_NODE in (rows[i].get("dialect") or "").split("+") or (worked and all(t == "tool" for t in worked))
            if candidate(node) and (subgraphs or not tools):
                ran.setdefault(node, []).extend(subgraphs)
        agents = {node: (agent_name(node, subgraphs), bool(subgraphs)) for node, subgraphs in ran.items()}
        self.turns = Turns(agents, _open, _close) if len(agents) > 1 else None

    def run(self) -> None:
        turns = self.turns
        assert turns is not None
        rows = self.rows
        # (time, what, row, task's row): at one time, ends first, then starts, then model calls
        events = [(rows[i].get(edge) or 0, what, i, i) for i in self.tasks for what, edge in ((0, "end_ns"), (1, "start_ns"))]
        events += [(rows[m].get("start_ns") or 0, 2, m, t) for m, t in self.models]
        opened_by: dict[int, int] = {}  # id(turn) -> the row of the task that opened it
        for time, what, i, t in sorted(events):
            task = self.tasks[t]
            if what == 0:
                turns.task_ended(task, time)
                continue
            if what == 1:
                known = {id(turn) for turn in turns.open}
                turn = turns.task_started(task, lambda: self._tool_calls(t))
                opened = turn if turn is not None and id(turn) not in known else None
            else:
                opened = turns.model_called(task, time)
                turns.model_answered(task, _asked(rows[i].get("output")))
            if opened is not None:
                opened_by[id(opened)] = t
        turns.close()
        changed = {}  # all or nothing
        for i, task in self.tasks.items():
            if task.turn is None:
                continue
            head = opened_by[id(task.turn)]
            if head != i:  # a task that ran in a turn another opened: inside that turn's step
                changed[i] = {**rows[i], "parent_span_id": rows[head]["span_id"]}
                continue
            name, start, end = task.turn.handle["name"], rows[i].get("start_ns"), task.turn.handle.get("end")
            end = end if end is not None else rows[i].get("end_ns")
            changed[i] = {**rows[i], "step_type": "agent", "name": f"invoke_agent {name}", "agent_name": name, "end_ns": end,
                          "duration_ns": end - start if end is not None and start is not None else rows[i].get("duration_ns")}
        for i, row in changed.items():
            rows[i] = row

    def _tool_calls(self, i: int) -> list[str]:
        """The ids of the tool calls node task `i` ran (its tool spans')."""
        return [str(r["tool_call_id"]) for k in self.children.get(self.rows[i]["span_id"], ())
                if (r := self.rows[k]).get("step_type") == "tool" and r.get("tool_call_id")]


def _open(name: str, start: int) -> dict[str, Any]:
    return {"name": name}


def _close(handle: dict[str, Any], end: int | None) -> None:
    handle["end"] = end


def _supersteps(rows: list[Mapping[str, Any]], tasks: list[int]) -> list[tuple[int, int]]:
    """(superstep, row) of a graph invocation's node tasks in start order: a superstep's tasks run side by side,
    the next one's start once all of them have ended."""
    out = []
    step, until = 0, None
    for i in sorted(tasks, key=lambda i: (rows[i].get("start_ns") or 0, rows[i]["span_id"])):
        start = rows[i].get("start_ns") or 0
        if until is None or start >= until:
            step, until = step + 1, rows[i].get("end_ns") or start
        else:
            until = max(until, rows[i].get("end_ns") or start)
        out.append((step, i))
    return out


def _asked(raw: Any) -> list[str]:
    """The ids of the tool calls a model call's output (GenAI messages, JSON) asks for."""
    messages = _json.parse(raw) if isinstance(raw, str) else raw
    return [str(part["id"]) for message in messages if isinstance(message, dict)
            for part in message.get("parts") or () if isinstance(part, dict) and part.get("type") == "tool_call" and part.get("id")
            ] if isinstance(messages, list) else []


# The views' reading (sql/_graph_agent_steps.sql): the same replay, called by DuckDB on each trace's spans.
SQL_FUNCTION = "agentotel_graph_agents"
SQL_SPANS = ("STRUCT(span_id VARCHAR, parent_span_id VARCHAR, name VARCHAR, start_ns BIGINT, end_ns BIGINT, "
             "duration_ns BIGINT, dialect VARCHAR, own BOOLEAN, step_type VARCHAR, tool_call_id VARCHAR, output VARCHAR)[]")
SQL_CHANGES = "STRUCT(span_id VARCHAR, step_type VARCHAR, name VARCHAR, parent_span_id VARCHAR, duration_ns BIGINT)[]"


def changed_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spans of one trace `graph_agents` changes (an agent step now, or nested in one), as SQL_CHANGES. A span
    given twice (stored twice) counts as its latest-ending copy."""
    latest: dict[str, dict[str, Any]] = {}
    for span in spans:
        kept = latest.get(span["span_id"])
        if kept is None or (span.get("end_ns") or 0) > (kept.get("end_ns") or 0):
            latest[span["span_id"]] = span
    spans = list(latest.values())
    rows = list(spans)
    graph_agents(rows)
    return [{"span_id": r["span_id"], "step_type": r.get("step_type"), "name": r.get("name"),
             "parent_span_id": r.get("parent_span_id"), "duration_ns": r.get("duration_ns")}
            for r, before in zip(rows, spans) if r is not before]


def register(con: Any) -> None:
    """Make `agentotel_graph_agents(spans)` (changed_spans) callable on a DuckDB connection."""
    con.create_function(SQL_FUNCTION, changed_spans, [con.type(SQL_SPANS)], con.type(SQL_CHANGES))
