"""One run as detectors see it, and what earlier runs of the same agent saw of its tools.

`RunRecord` is plain data (the run's summary, its trajectory steps as dicts, a few span attributes),
so detectors can be exercised from step dicts alone; `load_run` / `load_history` fill it from a
`Traces` (the query layer: its trajectory and views, never the files).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from dataclasses import dataclass, field
from importlib import resources
from collections.abc import Iterable, Mapping
from typing import Any

from agentotel import _json, semconv
from agentotel.analysis._schema import OutputSchema
from agentotel.analysis._steps import LLM, RETRIEVAL, TOOL, agent_of, final_text, is_error, tool_name, tool_payload
from agentotel.store import dialects, messages

# The span attributes (beyond the step fields) that detectors read.
ATTRIBUTES = (
    semconv.AGENTOTEL_TOOL_SCHEMA_HASH,
    semconv.GEN_AI_TOOL_DEFINITIONS,
    semconv.GEN_AI_SYSTEM_INSTRUCTIONS,
    semconv.GEN_AI_TOOL_DESCRIPTION,
    semconv.GEN_AI_DATA_SOURCE_ID,
    semconv.GEN_AI_AGENT_NAME,
    semconv.AGENTOTEL_RUN_NAME,
    semconv.AGENTOTEL_ENV_SNAPSHOT,
    semconv.ERROR_TYPE,
    semconv.AGENTOTEL_PAYLOAD_TRUNCATED,
)
STATUS_MESSAGE = "status_message"  # the span's status message, kept next to its attributes (a column, not an attribute)


@dataclass
class RunRecord:
    """A run: its summary (`run_id`, `trace_id`, `status`, `start_time`, `task`, `output`, `error`, ...),
    its trajectory steps, and the extra attributes of each step's span (keyed by span id) and of its root."""

    run: dict[str, Any]
    steps: list[dict[str, Any]]
    span_attributes: dict[str, dict[str, str]] = field(default_factory=dict)
    root_attributes: dict[str, str] = field(default_factory=dict)

    @property
    def run_id(self) -> str | None:
        return self.run.get("run_id")

    def attribute(self, step: Mapping[str, Any], name: str) -> str | None:
        return self.span_attributes.get(str(step.get("span_id")), {}).get(name)

    def error(self, step: Mapping[str, Any]) -> str | None:
        """The step's error text: its status message (the exception or API error), else its error type. A Python
        traceback after the message (OpenInference's langchain spans append one) is left out: findings are one line."""
        text = step.get("error") or self.attribute(step, STATUS_MESSAGE) or step.get("error_type") or None
        if isinstance(text, str) and _TRACEBACK in text:
            text = text.split(_TRACEBACK, 1)[0].strip() or text
        return text

    def tool_steps(self) -> list[dict[str, Any]]:
        return [s for s in self.steps if s.get("type") == TOOL]

    def retrieval_steps(self) -> list[dict[str, Any]]:
        return [s for s in self.steps if s.get("type") == RETRIEVAL]

    def declared_tools(self) -> dict[str, Mapping[str, Any]]:
        """Tool name -> the schema the tool itself declares ({name, description, parameters}), from the
        run's environment snapshot (every `@agentotel.tool` registered when the run started)."""
        snapshot = _json.parse(self.root_attributes.get(semconv.AGENTOTEL_ENV_SNAPSHOT))
        tools = snapshot.get("tools") if isinstance(snapshot, Mapping) else None
        found: dict[str, Mapping[str, Any]] = {}
        for name, info in (tools or {}).items() if isinstance(tools, Mapping) else ():
            schema = info.get("schema") if isinstance(info, Mapping) else None
            if isinstance(schema, Mapping):
                found[str(name)] = schema
        return found


_TRACEBACK = "Traceback (most recent call last):"


@dataclass
class History:
    """What earlier runs of the agent saw of each tool: its learned output schema and latest schema hash."""

    outputs: dict[str, OutputSchema] = field(default_factory=dict)
    schema_hashes: dict[str, tuple[str, str]] = field(default_factory=dict)  # tool -> (run id, hash), the latest
    runs: dict[str, list[str]] = field(default_factory=dict)  # tool -> the runs its schema was learned from, newest first
    first_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (run id, first model step of each agent and model), newest first
    inputs: dict[str, list[tuple[str, Any]]] = field(default_factory=dict)  # tool -> (run id, arguments) of its calls that worked, newest first
    # run id -> (tool, arguments, result) of its calls that worked (the newest RESULTS_KEPT of all runs), and
    # run id -> its final answer: which call each figure of an answer came from
    results: dict[str, list[tuple[str, Any, Any]]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    _kept: int = field(default=0, repr=False)  # results kept so far

    def add(self, run_id: str, name: str, output: Any, schema_hash: str | None, failed: bool, arguments: Any = None) -> None:
        """One earlier call, newest first (the first hash seen per tool is the latest)."""
        if schema_hash and name not in self.schema_hashes:
            self.schema_hashes[name] = (run_id, schema_hash)
        if failed or output is None:
            return
        if not name.startswith(RETRIEVAL_KEY):  # a retrieval teaches its documents' shape only
            if arguments is not None:
                self.inputs.setdefault(name, []).append((run_id, arguments))
            if self._kept < RESULTS_KEPT:
                self._kept += 1
                self.results.setdefault(run_id, []).append((name, arguments, output))
        self.outputs.setdefault(name, OutputSchema()).learn(output)
        seen = self.runs.setdefault(name, [])
        if run_id not in seen:
            seen.append(run_id)

    def only(self, names: Iterable[str]) -> "History":
        """This history of the tools `names` alone (its first calls and answers are not carried over)."""
        wanted = set(names)
        results = {run: kept for run, calls in self.results.items() if (kept := [c for c in calls if c[0] in wanted])}
        return History({k: v for k, v in self.outputs.items() if k in wanted},
                       {k: v for k, v in self.schema_hashes.items() if k in wanted},
                       {k: v for k, v in self.runs.items() if k in wanted},
                       inputs={k: v for k, v in self.inputs.items() if k in wanted}, results=results)

    @classmethod
    def from_records(cls, records: Iterable[RunRecord]) -> "History":
        """History from earlier runs given oldest first (the most recent one's schema hash wins)."""
        history = cls()
        for record in reversed(list(records)):
            for step in sorted(record.tool_steps() + record.retrieval_steps(), key=lambda s: s["index"], reverse=True):
                history.add(str(record.run_id), history_key(step), tool_payload(step.get("output")),
                            record.attribute(step, semconv.AGENTOTEL_TOOL_SCHEMA_HASH), is_error(step), step.get("input"))
            answer = next((text for s in reversed(record.steps) if s.get("type") == LLM and (text := final_text(s))), None)
            if answer:
                history.answers[str(record.run_id)] = answer
        return history


# ---- from the store ----------------------------------------------------------------------------------

HISTORY_RUNS = 10  # earlier runs of the agent learned from: enough to see optional fields, few row groups to read
RESULTS_KEPT = 200  # earlier tool results kept whole (History.results), the newest: a long run's stay bounded


@functools.cache
def sql(name: str) -> str:
    """A query of agentotel/analysis/sql/ by file name (without .sql), `{whole_input:ROWS}` expanded as the
    query layer's own queries are (model calls' inputs rebuilt whole)."""
    from agentotel.query import _whole_input  # here: the query layer imports analysis lazily too

    return _whole_input(resources.files("agentotel.analysis").joinpath("sql", f"{name}.sql").read_text("utf-8"))


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))  # dataclasses.fields() builds its tuple at every call


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if dataclasses.is_dataclass(value):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    return dict(value.to_dict())


# What load_run reads of each span in the trajectory's own pass (trace_spans.sql's call_attributes, over the
# stored row): the attributes detectors read ($names), and the run id as stored (the trajectory's rows fill
# a missing one in). A second pass would decompress the row group's payload columns again for the root's.
# A trace root outside any run (another instrumentation's app span) also gives its task and answer attributes.
_READ = ("{'attributes': map_from_entries(list_filter(map_entries(attributes), lambda e: list_contains($names, e.key) "
         "OR (parent_span_id IS NULL AND run_id IS NULL AND list_contains($root_names, e.key)))), "
         "'run_id': run_id}")


def load_run(traces: Any, run: str) -> RunRecord:
    """The run (run id, trace id or a unique prefix) from a `Traces`, with the attributes detectors read."""
    return _load_run(traces, traces.resolve(run))


def _load_run(traces: Any, ref: Any, held: Any = None) -> RunRecord:
    from agentotel.query.trajectory import build_trajectory  # the query layer imports analysis: not at import time

    rows = traces._trace_rows(ref, _READ, {"names": list(ATTRIBUTES), "root_names": _ROOT_NAMES}, held=held)
    read = [row.pop("call_attributes") or {} for row in rows]
    trajectory = build_trajectory(rows, ref.run_id)
    summary = _as_dict(trajectory.run)
    steps = [_as_dict(step) for step in trajectory.steps]
    spans = {s["span_id"] for s in steps}
    span_attributes: dict[str, dict[str, str]] = {}
    root_attributes: dict[str, str] = {}
    for row, own in zip(rows, read):
        # A run's root is the invoke_agent span run() opened; spans recorded outside any run (another
        # instrumentation's CHAIN, workflow or ai.generateText root) have the trace's root span instead,
        # which holds that run's task and answer as well.
        root = (row["operation"] == "invoke_agent" and own.get("run_id") == ref.run_id) or (
            not own.get("run_id") and bool(row.get("is_root")) and (row.get("run_id") or row["trace_id"]) == ref.run_id)
        if row["span_id"] not in spans and not root:
            continue
        chosen = dict(own.get("attributes") or {})
        if row["status_message"]:
            chosen[STATUS_MESSAGE] = row["status_message"]
        span_attributes[row["span_id"]] = chosen
        if root and row["span_id"] not in spans:
            root_attributes = chosen
            summary.setdefault("error", row["status_message"])
            task, answer = (row["input"], row["output"]) if own.get("run_id") else _foreign_payloads(row, chosen)
            summary.setdefault("task", task)
            summary.setdefault("output", answer)
    return RunRecord(summary, steps, span_attributes, root_attributes)


_ROOT_NAMES = [*dialects.RUN_INPUT_KEYS, *dialects.RUN_OUTPUT_KEYS]


def _foreign_payloads(row: Mapping[str, Any], attributes: dict[str, str]) -> tuple[Any, Any]:
    """A foreign root's task and answer: its payload columns, else the attributes its instrumentation keeps
    them in (taken out of the map: the detectors read them as the run's, not as span attributes)."""
    found = dialects.run_payloads(attributes)
    for name in _ROOT_NAMES:
        attributes.pop(name, None)
    return row["input"] or found[0], row["output"] or found[1]


def load(traces: Any, run: str, *, runs: int = HISTORY_RUNS) -> tuple[RunRecord, History]:
    """`load_run` and `load_history` of a run, with one read of the row groups they share.

    An agent's latest runs mostly sit in the same row groups as the run itself, and most of what reading
    a few traces costs is decompressing their payload columns: so the history is planned from the roots
    index (the run's start and name as its root span says), the run's trace and the earlier runs' traces
    are read once (`Traces._hold`, which finds those traces in the same statement), and both are built
    from those rows. Should the run's trajectory say another start or agent name than its root span did,
    its history is read as `load_history` does.
    """
    ref = traces.resolve(run)
    root = traces._rows(sql("run_root"), {"run": ref.run_id, "trace": ref.trace_id})
    if len(root) != 1:
        record = _load_run(traces, ref)
        return record, load_history(traces, record, runs=runs)
    start, agent = root[0]["start_time"], _agent_key(root[0]["run_name"])
    earlier = _earlier(traces, ref.run_id, start, agent, runs)
    if earlier:
        first, last = min(ref.first_start, min(row["start_time"] for row in earlier)), max(ref.last_start, start)
        shared = _bytes_within(traces, first, last) >= SHARED_READ_BYTES
    if not earlier or not shared:  # small files: a third query costs more than it saves
        plan = _plan(traces, earlier, start) if earlier else None
        record = _load_run(traces, ref)
        if _start(record) == start and _agent_key(_agent(record)) == agent:
            return record, (_read_history(traces, plan, _tool_names(record)) if plan is not None
                            else _without_plan(traces, record, start, runs))
        return record, load_history(traces, record, runs=runs)
    held = traces._hold([ref.trace_id], first, last, runs=(list(_order(earlier)), _since(earlier), start))
    try:
        # The history's two queries run on a second connection while this thread reads the run: DuckDB
        # runs both at once (two cores). Every tool's earlier calls are read there, since the run's tools
        # are not known yet; only those of the run's tools are learned from.
        side = _Side(traces, earlier, start, held)
        try:
            record = _load_run(traces, ref, held)
        finally:
            found = side.result()
        if _start(record) == start and _agent_key(_agent(record)) == agent:
            if found is None:  # the second connection failed (a compaction renewed the connection, say)
                plan = _plan(traces, earlier, start, held)
                return record, (_read_history(traces, plan, _tool_names(record), held) if plan is not None
                                else _without_plan(traces, record, start, runs))
            plan, rows, tools = found
            return record, (_history_from(traces, plan, _tool_names(record), rows, held, tools) if plan is not None
                            else _without_plan(traces, record, start, runs))
        return record, load_history(traces, record, runs=runs)
    finally:
        traces._release(held)


class _Side(threading.Thread):
    """`_plan`, the history's payload rows (every tool's calls) from held rows, on `Traces._side()`, and
    every tool's `_tool_history`, in a thread of its own; `result()`: (plan, rows, tools), or None when that
    failed (the caller reads them)."""

    def __init__(self, traces: Any, earlier: list[dict[str, Any]], start: Any, held: Any) -> None:
        super().__init__(name="agentotel-history", daemon=True)
        self._inputs = (traces, earlier, start, held)
        self._found: tuple[_Plan | None, list[dict[str, Any]], History] | None = None
        try:
            self._con = traces._side()  # made here: the caller's connection is busy once the thread starts
        except Exception:  # noqa: BLE001 - the caller reads the history itself
            return
        self.start()

    def run(self) -> None:
        traces, earlier, start, held = self._inputs
        try:
            con = self._con
            plan = _plan(traces, earlier, start, held, con=con)
            if plan is None:
                self._found = (None, [], History())
                return
            rows = _payload_rows(traces, plan, None, held, con=con)
            self._found = (plan, rows, _tool_history(rows))
        except Exception:  # noqa: BLE001 - any failure here means: read them on the caller's connection
            self._found = None

    def result(self) -> tuple[_Plan | None, list[dict[str, Any]], History] | None:
        if self.ident is not None:  # started
            self.join()
        return self._found


# Below this many bytes of Parquet in the window a run and its history are read apart: decompressing small
# row groups twice costs less than the extra query that reads them once (measured: a few ms either way).
SHARED_READ_BYTES = 16 * 1024 * 1024


def _bytes_within(traces: Any, first: Any, last: Any) -> int:
    """The size of the Parquet files a read of spans starting within [first, last] opens."""
    from agentotel.query import _ns  # the query layer imports analysis: not at import time

    total = 0
    for path in traces._sources.files_starting_within(_ns(first), _ns(last)):
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


def _start(record: RunRecord) -> Any:
    return record.run.get("start_time") or min((s.get("start_time") for s in record.steps if s.get("start_time")), default=None)


def _agent(record: RunRecord) -> Any:
    return record.root_attributes.get(semconv.AGENTOTEL_RUN_NAME) or record.run.get("name")


def _agent_key(agent: Any) -> str | None:
    """The run name earlier runs are matched by (None: every run)."""
    return agent if agent and agent != "(unnamed)" else None


def _tool_names(record: RunRecord) -> list[str]:
    return sorted({history_key(s) for s in record.tool_steps() + record.retrieval_steps()})


# A retrieval's history key: its span's name after this (a tool may share the name of the retriever it runs).
RETRIEVAL_KEY = "retrieval: "


def history_key(step: Mapping[str, Any]) -> str:
    """The name a tool or retrieval step's earlier calls are learned under."""
    return RETRIEVAL_KEY + str(step.get("name")) if step.get("type") == RETRIEVAL else str(tool_name(step))


@dataclass
class _Plan:
    """Which earlier runs a history reads, and where: their order (newest first), the query parameters
    (run ids, traces, the window [since, before)), the files' window, and each run's first model calls."""

    order: dict[str, int]
    params: dict[str, Any]
    within: tuple[Any, Any]
    calls: list[dict[str, Any]]
    last_calls: list[dict[str, Any]] = field(default_factory=list)  # each run's last model call: its answer


def _earlier(traces: Any, run_id: str | None, start: Any, agent: str | None, runs: int) -> list[dict[str, Any]]:
    """The latest earlier runs of the agent, newest first, from the roots index (earlier_runs.sql)."""
    return traces._rows(sql("earlier_runs"), {"run": run_id, "before": start, "runs": runs, "agent": agent})


def _order(earlier: list[dict[str, Any]]) -> dict[str, int]:
    return {row["run_id"]: i for i, row in enumerate(earlier)}  # newest first


def _since(earlier: list[dict[str, Any]]) -> str:
    return earlier[0]["since"]


def _plan(traces: Any, earlier: list[dict[str, Any]], start: Any, held: Any = None, con: Any = None) -> _Plan | None:
    """Where the spans of `earlier` runs (`_earlier`) are, from the cheap columns (None: none has spans);
    from the store, or from `held` rows (`Traces._hold`) that hold every trace those runs have spans in."""
    # Only the spans that started since the earliest of those runs are read (the files of that window).
    order = _order(earlier)
    params = {"runs": list(order), "since": _since(earlier), "before": start}
    within = (min(row["start_time"] for row in earlier), start)
    spans = traces._rows(sql("history_spans"), params, within=within, held=held, con=con)
    params["traces"] = sorted({row["trace_id"] for row in spans})
    if not params["traces"]:
        return None
    agents = [row for row in spans if row["step_type"] == "agent"]
    roots = {(row["trace_id"], row["span_id"]) for row in traces._rows(sql("run_root_spans"), {"traces": sorted({
        row["trace_id"] for row in agents})}, held=held, con=con)} if agents else set()
    by_id = {(row["trace_id"], row["span_id"]): row for row in spans}
    agent_steps = {(row["trace_id"], row["span_id"]): row["name"] for row in agents if (row["trace_id"], row["span_id"]) not in roots}
    firsts: dict[tuple[Any, Any, Any], dict[str, Any]] = {}  # (run, model, agent): its first model call
    for row in spans:
        if row["step_type"] != "llm":
            continue
        parent = by_id.get((row["trace_id"], row["parent_span_id"]))
        agent = agent_steps.get((row["trace_id"], row["parent_span_id"]))
        if agent is None and parent is not None:
            agent = agent_steps.get((row["trace_id"], parent["parent_span_id"]))
        key = (row["run_id"], row["model"], agent)
        if key not in firsts or (row["start_ns"], row["span_id"]) < (firsts[key]["start_ns"], firsts[key]["span_id"]):
            firsts[key] = {**row, "agent": agent}
    calls = [{"run_id": row["run_id"], "span_id": row["span_id"], "start_time": row["start_time"], "agent": row["agent"]}
             for row in firsts.values()]
    lasts: dict[Any, dict[str, Any]] = {}
    for row in spans:
        if row["step_type"] == "llm" and (row["run_id"] not in lasts or (row["start_ns"], row["span_id"]) > (
                lasts[row["run_id"]]["start_ns"], lasts[row["run_id"]]["span_id"])):
            lasts[row["run_id"]] = row
    last_calls = [{"run_id": row["run_id"], "span_id": row["span_id"], "start_time": row["start_time"]} for row in lasts.values()]
    return _Plan(order, params, within, calls, last_calls)


def load_history(traces: Any, record: RunRecord, *, runs: int = HISTORY_RUNS) -> History:
    """What the latest earlier runs of the same agent (same run name) saw: every call of this run's tools,
    and what each run's first model call was given (instructions, tools offered)."""
    start = _start(record)
    if start is None:
        return History()
    earlier = _earlier(traces, record.run_id, start, _agent_key(_agent(record)), runs)
    plan = _plan(traces, earlier, start) if earlier else None
    return _read_history(traces, plan, _tool_names(record)) if plan is not None else _without_plan(traces, record, start, runs)


def _without_plan(traces: Any, record: RunRecord, start: Any, runs: int) -> History:
    """No earlier agentotel run of the agent: a run another instrumentation recorded (no agentotel root)
    still has the earlier runs of its name; any other run has no history."""
    return _foreign_history(traces, record, start, runs) if not record.root_attributes else History()


def _read_history(traces: Any, plan: _Plan, names: list[str], held: Any = None) -> History:
    """The history `plan` says where to find: from the store, or from `held` rows (`Traces._hold`) that
    include the plan's traces over its window."""
    return _history_from(traces, plan, names, _payload_rows(traces, plan, names, held), held)


def _payload_rows(traces: Any, plan: _Plan, names: list[str] | None, held: Any = None, con: Any = None) -> list[dict[str, Any]]:
    """history_payloads.sql's rows: the earlier calls of the tools `names` (None: of every tool), and the plan's
    first model calls."""
    if names is not None and not names and not plan.calls:
        return []
    calls = plan.calls
    rows = traces._rows(sql("history_payloads"), {**plan.params, "names": names, "hash": semconv.AGENTOTEL_TOOL_SCHEMA_HASH,
                                                  "retrieval": RETRIEVAL_KEY,
                                                  "spans": [c["span_id"] for c in (*calls, *plan.last_calls)],
                                                  "definitions": semconv.GEN_AI_TOOL_DEFINITIONS,
                                                  "instructions": semconv.GEN_AI_SYSTEM_INSTRUCTIONS},
                        within=plan.within, held=held, con=con)
    wanted = set(names) if names is not None else None
    first = {(c["run_id"], c["span_id"], c["start_time"]) for c in calls}
    last = {(c["run_id"], c["span_id"], c["start_time"]) for c in plan.last_calls}
    found: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()  # a first call in the WAL and in a Parquet file: one row
    for row in sorted(rows, key=lambda row: row["start_ns"], reverse=True):  # newest first
        if (row["run_id"], row["span_id"], row["start_time"]) in last and (row["run_id"], "answer") not in taken:
            taken.add((row["run_id"], "answer"))
            found.append({"kind": "answer", "run_id": row["run_id"], "output": row["output"]})
        if row["operation"] in ("execute_tool", "retrieval") and (wanted is None or row["tool_name"] in wanted):
            found.append({"kind": "tool", "run_id": row["run_id"], "span_id": row["span_id"], "tool_name": row["tool_name"],
                          "status_code": row["status_code"], "output": row["output"], "schema_hash": row["schema_hash"],
                          "input": row["input"]})
        elif (row["run_id"], row["span_id"], row["start_time"]) in first and (row["run_id"], row["span_id"]) not in taken:
            taken.add((row["run_id"], row["span_id"]))
            found.append({"kind": "call", "run_id": row["run_id"], "span_id": row["span_id"], "model": row["model"],
                          "input": row["input"], "definitions": row["definitions"], "instructions": row["instructions"]})
    return found


def _tool_history(found: list[dict[str, Any]], names: list[str] | None = None) -> History:
    """What the tool rows of `_payload_rows` teach (those of `names`; None: of every tool in them)."""
    history = History()
    wanted = set(names) if names is not None else None
    for row in found:  # newest first
        if row["kind"] == "tool" and (wanted is None or row["tool_name"] in wanted):
            history.add(row["run_id"], row["tool_name"], tool_payload(row["output"]), row["schema_hash"],
                        row["status_code"] == "ERROR", row.get("input"))
    return history


def _history_from(traces: Any, plan: _Plan, names: list[str], found: list[dict[str, Any]], held: Any = None,
                  tools: History | None = None) -> History:
    """The history from `_payload_rows` read for `names` or for more tools (only the calls of `names` count);
    `tools`: `_tool_history` of those rows for every tool, already learned."""
    params, calls, order, within = plan.params, plan.calls, plan.order, plan.within
    if not names and not calls:
        return History()
    # What is learned of one tool depends on that tool's calls alone: every tool's history, cut to `names`,
    # is the history of `names`.
    history = _tool_history(found, names) if tools is None else tools.only(names)
    for row in found:
        if row["kind"] == "answer" and (answer := final_text({"type": LLM, "output": row["output"]})):
            history.answers[row["run_id"]] = answer
    found = [row for row in found if row["kind"] == "call"]  # newest run first, then its latest call
    continued = [c for c in calls if c["span_id"] in {row["span_id"] for row in found if row["input"] is None}]
    if continued:  # stored as a continuation of an earlier call: rebuilt whole, a second read for these only
        inputs = _continued_inputs(traces, params, continued, within, held)
        found = [{**row, "input": inputs.get(row["span_id"], row["input"])} for row in found]
    agents = {c["span_id"]: c.get("agent") for c in calls}
    for row in sorted(found, key=lambda row: order[row["run_id"]]):
        history.first_calls.append((row["run_id"], {"type": "llm", "model": row["model"], "input": _json.parse(row["input"]),
                                                    "definitions": row["definitions"], "instructions": row["instructions"],
                                                    "agent": agents.get(row["span_id"])}))
    return history


def _continued_inputs(traces: Any, params: Mapping[str, Any], continued: list[dict[str, Any]], within: Any,
                      held: Any) -> dict[str, Any]:
    """{span id: whole input} of first model calls stored as continuations: rebuilt in Python from their runs'
    rows (store/messages.py whole_rows, as a trajectory is), else by the store (first_call_inputs.sql, which
    has every copy of every row and gives NULL where an input is unknown)."""
    bound = {"traces": params["traces"], "since": params["since"], "before": params["before"]}
    rows = traces._rows(sql("first_call_rows"), {**bound, "runs": sorted({c["run_id"] for c in continued}),
                                                 "last": max(c["start_time"] for c in continued)},
                        within=within, held=held)
    # A span in the WAL and in a Parquet file is one row: its latest record, as trace_spans.sql keeps.
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["trace_id"], row["span_id"])
        if key not in latest or (row["end_ns"] or 0) > (latest[key]["end_ns"] or 0):
            latest[key] = row
    wanted = {(c["run_id"], c["span_id"]) for c in continued}
    if messages.whole_rows(list(latest.values())):  # NULL stays NULL: an input never stored is not rebuilt either way
        return {row["span_id"]: row["input"] for row in latest.values() if (row["run_id"], row["span_id"]) in wanted}
    rebuilt = traces._rows(sql("first_call_inputs"), {**bound, "calls": continued, "spans": [c["span_id"] for c in continued]},
                           within=within, held=held)
    return {row["span_id"]: row["input"] for row in rebuilt}


def _foreign_history(traces: Any, record: RunRecord, start: Any, runs: int) -> History:
    """The history of a run another instrumentation recorded (its root is no agentotel run, so the roots index
    has none of its kind): the latest earlier runs of the same name (the `runs` view names a trace after its
    root span), each read whole. Slower than the indexed path, and only taken for such runs."""
    name = record.run.get("name")
    history = History()
    if not name or name == "(unnamed)":
        return history
    rows = traces.sql("SELECT run_id FROM runs WHERE name = $name AND start_time < $before AND run_id IS DISTINCT FROM $run "
                      "ORDER BY start_time DESC LIMIT $runs",
                      {"name": name, "before": start, "run": record.run_id, "runs": runs}).fetchall()
    records = [load_run(traces, row[0]) for row in rows]  # newest first
    history = History.from_records(reversed(records))
    for earlier in records:
        firsts: dict[Any, dict[str, Any]] = {}
        by_index = {s["index"]: s for s in earlier.steps}
        for step in earlier.steps:
            if step.get("type") == "llm":
                firsts.setdefault((agent_of(step, by_index), step.get("model")), step)
        for (agent, _model), step in firsts.items():
            history.first_calls.append((str(earlier.run_id), {
                "type": "llm", "model": step.get("model"), "input": step.get("input"),
                "definitions": earlier.attribute(step, semconv.GEN_AI_TOOL_DEFINITIONS),
                "instructions": earlier.attribute(step, semconv.GEN_AI_SYSTEM_INSTRUCTIONS), "agent": agent}))
    return history
