"""A run's trajectory: its steps in order, rebuilt from the span tree.

A step is a model call, tool call, retrieval, embedding or sub-agent span of the run (which spans are
steps is decided in SQL, `sql/macro_step_type.sql`, so the `steps` view and `Traces.trajectory()`
always agree). Transport spans (HTTP) are not steps, but the tree is walked through them, so a step's
parent is the nearest enclosing step.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping

from agentotel import _json, semconv
from agentotel._context import canonical_arguments, stable_call_id
from agentotel.query._graph_agents import graph_agents
from agentotel.store.dialects import ANTHROPIC_SDK_SCOPE, run_name  # not agentotel.providers: a query imports no patching code
from agentotel.store.schema import duplicate_calls

EXCLUDED_SCOPES: tuple[str, ...] = (ANTHROPIC_SDK_SCOPE,)
"""Client SDKs that trace their own calls: their span under an agentotel model-call span is a duplicate
of that call, not a step (sql/macro_duplicates.sql)."""

_ENV_PREFIX = semconv.AGENTOTEL_ENV_HASH.rpartition(".")[0] + "."


@dataclass
class Step:
    """One step of a trajectory; `to_dict()` is its `--json` form (ARCHITECTURE.md, "Query")."""

    index: int
    type: str  # llm | tool | retrieval | embedding | agent
    name: str
    span_id: str
    parent_index: int | None
    depth: int
    status: str  # ok | error
    start_time: datetime | None
    duration_ms: float | None
    model: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    requested_by: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    input: Any = None  # parsed JSON when the payload is JSON, else the text; None when not captured
    output: Any = None
    error: str | None = None  # the status message of a failed step: the exception or API error text
    error_type: str | None = None
    orphan: bool = False  # its parent span never arrived (a lost span); placed at the top level
    raw_input: str | None = field(default=None, repr=False)
    raw_output: str | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("raw_input")
        data.pop("raw_output")
        data["start_time"] = _iso(self.start_time)
        return data


@dataclass
class Trajectory:
    """A run's summary (`.run`, the `runs` view's columns) and its steps in order (`.steps`)."""

    run: dict[str, Any]
    steps: list[Step]
    _root_attributes: Callable[[], Mapping[str, str]] | None = field(default=None, repr=False)
    _environment: dict[str, str] | None = field(default=None, repr=False)
    _span_attributes: Callable[[list[str]], Mapping[str, Mapping[str, str]]] | None = field(default=None, repr=False)
    _model_attributes: dict[int, dict[str, str]] | None = field(default=None, repr=False)

    @property
    def environment(self) -> dict[str, str]:
        """The root span's agentotel.env.* attributes (read on first use: attribute maps are costly)."""
        if self._environment is None:
            attributes = self._root_attributes() if self._root_attributes is not None else {}
            self._environment = {k: v for k, v in attributes.items() if k.startswith(_ENV_PREFIX)}
        return self._environment

    @property
    def model_attributes(self) -> dict[int, dict[str, str]]:
        """Each model step's span attributes by step index: what the call was given besides its messages
        (system instructions, tools offered, request parameters). Read on first use, for a diff."""
        if self._model_attributes is None:
            spans = {s.span_id: s.index for s in self.steps if s.type == "llm"}
            found = self._span_attributes(list(spans)) if spans and self._span_attributes is not None else {}
            self._model_attributes = {spans[span]: dict(attributes) for span, attributes in found.items() if span in spans}
        return self._model_attributes

    def to_dict(self) -> dict[str, Any]:
        """The `--json` form: {"run": {...}, "steps": [...]}."""
        return {"run": jsonable(self.run), "steps": [s.to_dict() for s in self.steps]}

    def __len__(self) -> int:
        return len(self.steps)


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row with timestamps as ISO strings, ready for json.dumps."""
    return {k: _iso(v) for k, v in row.items()}


def parse_payload(raw: str | None) -> Any:
    """A stored payload as JSON when it is JSON (a JSON string holding JSON is unwrapped), else the text."""
    value = _json.parse(raw)
    if isinstance(value, str) and value is not raw and value[:1] in ("{", "["):
        inner = _json.parse(value)
        return inner if isinstance(inner, (dict, list)) else value
    return value


def build_trajectory(
    rows: Iterable[Mapping[str, Any]],
    run_id: str,
    root_attributes: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None,
    span_attributes: Callable[[list[str]], Mapping[str, Mapping[str, str]]] | None = None,
) -> Trajectory:
    """The trajectory of `run_id` from every span row of its trace (as `sql/trace_spans.sql` returns them).

    `root_attributes(root_row)` reads the root span's attribute map, when the environment is asked for;
    `span_attributes(span_ids)` the attribute maps of those spans (by span id), when a diff asks what
    the model calls were given.
    """
    rows = list(rows)
    _drop_second_records(rows)
    graph_agents(rows)
    by_id = {r["span_id"]: r for r in rows}
    root = next((r for r in rows if r.get("is_root") and (r.get("run_id") or r["trace_id"]) == run_id), None)
    chosen = sorted(
        (r for r in rows if r.get("step_type") and r.get("step_run") == run_id),
        key=lambda r: (r.get("start_ns") is None, r.get("start_ns") or 0, r["span_id"]),
    )
    index_of = {r["span_id"]: i for i, r in enumerate(chosen, start=1)}
    steps: list[Step] = []
    for i, row in enumerate(chosen, start=1):
        parent_index, depth, orphan = _place(row, by_id, index_of, root)
        raw_in, raw_out = row.get("input"), row.get("output")
        steps.append(
            Step(
                index=i,
                type=row["step_type"],
                name=row["name"],
                span_id=row["span_id"],
                parent_index=parent_index,
                depth=depth,
                status="error" if row.get("status_code") == "ERROR" else "ok",
                start_time=row.get("start_time"),
                duration_ms=row["duration_ns"] / 1e6 if row.get("duration_ns") is not None else None,
                model=row.get("response_model") or row.get("request_model"),
                tool_name=row.get("tool_name"),
                tool_call_id=row.get("tool_call_id"),
                input_tokens=row.get("input_tokens"),
                output_tokens=row.get("output_tokens"),
                cost_usd=row.get("cost_usd"),
                # Parsed already when the input was made whole from its conversation (store/messages.py).
                input=_json.whole_characters(row["input_messages"], raw_in) if "input_messages" in row
                else parse_payload(raw_in),
                output=parse_payload(raw_out),
                error=(row.get("status_message") or row.get("error_type")) if row.get("status_code") == "ERROR" else None,
                error_type=row.get("error_type"),
                orphan=orphan,
                raw_input=raw_in,
                raw_output=raw_out,
            )
        )
    _pair_unnamed_calls(steps)
    _link_requests(steps)
    loader = None
    if root is not None and root_attributes is not None:
        loader = lambda: root_attributes(root)  # noqa: E731 - a deferred read, bound to this root
    # Model calls' attribute maps, when the rows carry them (trace_spans.sql's call_attributes, for a diff).
    model_attributes = {index_of[r["span_id"]]: dict(r["call_attributes"]) for r in chosen
                        if r.get("step_type") == "llm" and r.get("call_attributes") is not None}
    return Trajectory(run=_summary(run_id, rows, root, steps), steps=steps, _root_attributes=loader,
                      _environment=None if loader else {}, _span_attributes=span_attributes,
                      _model_attributes=model_attributes or None)


def _summary(run_id: str, rows: list[Mapping[str, Any]], root: Mapping[str, Any] | None, steps: list[Step]) -> dict[str, Any]:
    """The run's row of the `runs` view, computed from the rows at hand (the run's trace: a run nested in
    another trace, started by a service the run called, is in the view's totals only).

    `sql/runs.sql` is the definition; this mirrors it for one run because planning that query costs
    ~30 ms, a third of a trajectory's budget. tests/query/test_trajectory.py checks they agree.
    """
    own = [r for r in rows if (r.get("run_id") or r["trace_id"]) == run_id]
    root = root or {}

    def latest(column: str) -> Any:
        values = [r[column] for r in own if r.get(column) is not None]
        return max(values) if values else None

    start = min((r["start_time"] for r in own if r.get("start_time")), default=None)
    end = max((r["end_time"] for r in own if r.get("end_time")), default=None)
    if root.get("duration_ns") is not None:
        duration_ms = root["duration_ns"] / 1e6
    else:
        duration_ms = (end - start).total_seconds() * 1e3 if start and end else None
    root_error = root.get("status_code") == "ERROR"
    failed_steps = sum(s.status == "error" for s in steps)
    costs = [s.cost_usd for s in steps if s.cost_usd is not None]
    family = _nested_runs(rows, run_id) | {run_id}
    family_steps = [r for r in rows if r.get("step_type") and r.get("step_run") in family]
    family_costs = [r["cost_usd"] for r in family_steps if r.get("cost_usd") is not None]
    return {
        "run_id": run_id,
        "name": (root.get("run_name") or run_name(root["name"])) if root else "(unnamed)",
        "trace_id": root["trace_id"] if root else min((r["trace_id"] for r in own), default=None),
        "user_id": latest("user_id"),
        "session_id": latest("session_id"),
        "trigger": root.get("run_trigger"),
        "start_time": start,
        "duration_ms": duration_ms,
        "status": "running" if not root else "error" if root_error else "ok",
        "steps": len(steps),
        "model_calls": sum(s.type == "llm" for s in steps),
        "tool_calls": sum(s.type == "tool" for s in steps),
        "retrievals": sum(s.type == "retrieval" for s in steps),
        "errors": failed_steps + int(root_error and not failed_steps),
        "input_tokens": sum(s.input_tokens or 0 for s in steps),
        "output_tokens": sum(s.output_tokens or 0 for s in steps),
        "cost_usd": sum(costs) if costs else None,
        "models": sorted({s.model for s in steps if s.type in ("llm", "embedding") and s.model}),
        "env_hash": root.get("env_hash"),
        "agent_name": latest("agent_name"),
        "service_name": latest("service_name"),
        "parent_run_id": root.get("parent_run_id"),
        "total_input_tokens": sum(r.get("input_tokens") or 0 for r in family_steps),
        "total_output_tokens": sum(r.get("output_tokens") or 0 for r in family_steps),
        "total_cost_usd": sum(family_costs) if family_costs else None,
    }


def _nested_runs(rows: list[Mapping[str, Any]], run_id: str) -> set[str]:
    """The runs nested in `run_id` at any depth, among the rows at hand (its trace: where sub-agents run)."""
    parent_of = {(r.get("run_id") or r["trace_id"]): r.get("parent_run_id") for r in rows if r.get("is_root")}
    nested: set[str] = set()
    for child in parent_of:
        seen, at = set(), child
        while at is not None and at not in seen:
            seen.add(at)
            at = parent_of.get(at)
            if at == run_id:
                nested.add(child)
                break
    return nested


def _place(
    row: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], index_of: Mapping[str, int], root: Any
) -> tuple[int | None, int, bool]:
    """(parent step index, depth, orphan): walk up the span tree, through non-step spans, to the run's root."""
    parent_index: int | None = None
    depth = 0
    seen = {row["span_id"]}
    parent_id = row.get("parent_span_id")
    while parent_id and parent_id not in seen:
        seen.add(parent_id)
        if root is not None and parent_id == root["span_id"]:
            break
        parent = by_id.get(parent_id)
        if parent is None:
            # The parent never arrived. While the run is still going its root is not recorded yet,
            # so only a finished run's missing parent means a lost span.
            return parent_index, depth, root is not None and parent_index is None
        if parent["span_id"] in index_of:
            depth += 1
            if parent_index is None:
                parent_index = index_of[parent["span_id"]]
        parent_id = parent.get("parent_span_id")
    return parent_index, depth, False


_AGENT_OPERATIONS = ("invoke_agent", "create_agent")


def _drop_second_records(rows: list[Mapping[str, Any]]) -> None:
    """Unmark as steps the spans that are a second record of a call (another instrumentation's span of a
    call agentotel or an outer span recorded): the rules the store writer marks them by within a batch,
    and another instrumentation's agent span that is all an agentotel agent span holds (the only call or
    agent span directly inside it: the same invocation, its name aside, the Agents SDK's "Agent workflow"
    under OpenInference).

    Records the writer already marked (no step) still take part: a third record of the call written in
    another batch (an MCP server's span, from its own process, inside the client SDK's marked one) is
    found by its parent, as the `_duplicate_spans` view finds it."""
    calls = [
        (i, r["trace_id"], r["span_id"], r.get("parent_span_id"), r.get("start_ns") or 0, r.get("end_ns") or 0,
         r["call_key"], r.get("input_tokens"), r.get("output_tokens"), None, bool(r.get("own")), r.get("tool_call_id"))
        for i, r in enumerate(rows) if r.get("call_key")
    ]
    if all(c[10] for c in calls) and not any(not r.get("own") for r in rows if r.get("step_type") == "agent"):
        return  # agentotel's own spans alone: each is a call of its own
    second = duplicate_calls(calls)
    children: dict[str, list[int]] = {}  # the calls and agent spans directly inside each span
    for i, r in enumerate(rows):
        if r.get("parent_span_id") and (r.get("call_key") or r.get("operation") in _AGENT_OPERATIONS):
            children.setdefault(r["parent_span_id"], []).append(i)
    for r in rows:
        if r.get("own") and r.get("operation") == "invoke_agent":
            only = children.get(r["span_id"], [])
            if len(only) == 1 and not rows[only[0]].get("own") and rows[only[0]].get("operation") in _AGENT_OPERATIONS:
                second.add(only[0])
    for i in second:
        if rows[i].get("step_type"):
            rows[i] = {**rows[i], "step_type": None}


def _link_requests(steps: list[Step]) -> None:
    """Set each tool step's `requested_by`: the latest earlier model step whose output holds its call id."""
    for step in steps:
        if step.type != "tool" or not step.tool_call_id or step.requested_by is not None:
            continue
        needle = json.dumps(step.tool_call_id)
        for earlier in reversed(steps[: step.index - 1]):
            if earlier.type == "llm" and earlier.raw_output and needle in earlier.raw_output:
                step.requested_by = earlier.index
                break


def _pair_unnamed_calls(steps: list[Step]) -> None:
    """Ids for the tool calls, tool results and tool steps recorded without one, so each pairs with the call it
    answers: Gemini's function calls carry none, and other instrumentations' spans of them (OpenInference,
    OpenLLMetry, the contrib one) keep none; a tool span of a decorator never knows its call's id.

    The same way whichever dialect recorded the run, and the same ids in every process (agentotel's
    google-genai provider gives the ones it records the same, `stable_call_id`): a model step's id-less call
    gets an id made from its tool, arguments and how many equal calls the run asked up to it; a history's
    id-less call the id of the run's asked call it repeats (matched by tool and arguments from its last call
    back), else one made from itself; a result or tool step without id the id of the earliest unanswered call of
    its tool (of equal arguments first, for a tool step). Ids the spans carry are kept.

    A tool step that names no tool (OpenInference's span of an Agents SDK handoff, "handoff to <agent>", which
    keeps only the two agents) takes the name and id of a call the model step just before it asked for that no
    named tool step of the run runs: the one naming the agent it gives (`transfer_to_<agent>`), else the only one.
    """
    named = {step.tool_name for step in steps if step.type == "tool" and step.tool_name}
    latest = None  # the latest model step's index
    asked: list[list[Any]] = []  # [part, canonical arguments or None until needed] of every tool call the run's
    # model steps answered with, in order (canonical worked out once: each later history is matched against them)
    asked_by: dict[int, int] = {}  # id(part) -> the model step's index
    counts: dict[tuple[Any, str], int] = {}
    waiting: list[dict[str, Any]] = []  # asked calls no tool step has run yet
    minted: list[list[Any]] = []  # [part, canonical] of the asked calls given a made-up id, until a history names theirs
    paired: dict[str, Step] = {}  # made-up id -> the tool step given it
    for step in steps:
        if step.type == "llm":
            latest = step.index
            if minted:
                _adopt_ids(step.input, minted, paired, asked)
            if not all(part.get("id") for part in _in_order(step.input)):
                _pair_history(step.input, asked)
            for part in _tool_parts(step.output)[0]:
                canonical = None
                if not part.get("id"):  # (equal calls counted among the id-less ones: a Gemini run's are all)
                    canonical = canonical_arguments(part.get("arguments"))
                    key = (part.get("name"), canonical)
                    counts[key] = count = counts.get(key, 0) + 1
                    part["id"] = stable_call_id(key[0], key[1], count)
                    minted.append([part, canonical])
                asked.append([part, canonical])
                asked_by[id(part)] = step.index
                waiting.append(part)
        elif step.type == "tool" and step.tool_name:
            if step.tool_call_id:
                kept = [part for part in waiting if part["id"] != step.tool_call_id]
                if len(kept) < len(waiting) or any(part["id"] == step.tool_call_id for part, _ in asked):
                    waiting = kept
                    continue
                # An id no asked call has: the framework's own (Google ADK's `adk-...`, which its model spans do
                # not record); paired by tool and arguments as an id-less one is, keeping its id.
            same = [part for part in waiting if part.get("name") == step.tool_name]
            if not same:
                continue
            wanted = canonical_arguments(step.input)
            part = next((p for p in same if canonical_arguments(p.get("arguments")) == wanted), same[0])
            waiting.remove(part)
            step.tool_call_id = step.tool_call_id or part["id"]
            step.requested_by = asked_by[id(part)]
            paired[part["id"]] = step
        elif step.type == "tool" and not step.tool_call_id:
            loose = [part for part in waiting if asked_by[id(part)] == latest and part.get("name") not in named]
            target = _agent_key(step.output)
            part = next((p for p in loose if target and _names_agent(p.get("name"), target)), loose[0] if len(loose) == 1 else None)
            if part is not None and part.get("name"):
                waiting.remove(part)
                step.tool_name, step.tool_call_id, step.requested_by = part["name"], part["id"], latest


def _agent_key(name: Any) -> str:
    """An agent's name as a tool name holds it (the Agents SDK's `transfer_to_<agent>`: lower case, words joined by _)."""
    return "_".join(re.findall(r"[a-z0-9]+", name.lower())) if isinstance(name, str) else ""


def _names_agent(tool: Any, agent: str) -> bool:
    """Whether a tool's name ends with the agent's (`transfer_to_order_desk` for "Order Desk")."""
    key = _agent_key(tool)
    return key == agent or key.endswith("_" + agent)


def _adopt_ids(messages: list[Any], minted: list[list[Any]], paired: dict[str, Step], asked: list[list[Any]]) -> None:
    """An asked call's made-up id gives way to the id a later history gives the same call (tool and arguments,
    earliest first; an id the run's calls have already is another call's): LiteLLM's spans keep a call's id only
    in the conversation sent back, not in the answer."""
    known: set[str] | None = None  # the asked calls' ids, gathered at the first history id (a Gemini run has none)
    for call in _tool_parts(messages)[0]:
        real = call.get("id")
        if not real:
            continue
        if known is None:
            known = {entry[0]["id"] for entry in asked}
        if real in known:
            continue
        wanted = canonical_arguments(call.get("arguments"))
        for i, (part, canonical) in enumerate(minted):
            if part.get("name") == call.get("name") and canonical == wanted:
                made = part["id"]
                part["id"] = real
                paired_step = paired.pop(made, None)
                if paired_step is not None and paired_step.tool_call_id == made:  # (not an id of its own)
                    paired_step.tool_call_id = real
                del minted[i]
                break
        if not minted:
            return


def _pair_history(messages: list[Any], asked: list[list[Any]]) -> None:
    """Ids for a model step's input (the conversation sent back) whose tool calls or results carry none."""
    calls, _ = _tool_parts(messages)
    given = {part.get("id") for part in calls if part.get("id")}
    known = [entry for entry in asked if entry[0]["id"] not in given]
    keys = [(part.get("name"), canonical_arguments(part.get("arguments"))) for part in calls]
    end = len(known)
    # A history is in the order the model asked and may have lost its oldest turns: match from its last call back.
    for part, (name, wanted) in zip(reversed(calls), reversed(keys)):
        if part.get("id"):
            continue
        for i in range(end - 1, -1, -1):
            if known[i][0].get("name") != name:
                continue
            if known[i][1] is None:
                known[i][1] = canonical_arguments(known[i][0].get("arguments"))
            if known[i][1] == wanted:
                part["id"] = known[i][0]["id"]
                end = i
                break
    seen: dict[tuple[Any, str], int] = {}
    for part, key in zip(calls, keys):
        seen[key] = count = seen.get(key, 0) + 1
        if not part.get("id"):
            part["id"] = stable_call_id(key[0], key[1], count)
    unanswered: list[dict[str, Any]] = []
    for part in _in_order(messages):
        if part.get("type") == "tool_call":
            unanswered.append(part)
        elif part.get("id"):
            unanswered = [call for call in unanswered if call["id"] != part["id"]]
        else:
            name = part.get("name")
            call = next((c for c in unanswered if name is None or c.get("name") == name), None)
            if call is not None:  # (a result whose call is not in the history answers nothing here: no id)
                unanswered.remove(call)
                part["id"] = call["id"]


def _in_order(messages: Any) -> Iterable[dict[str, Any]]:
    """The tool call and tool result parts of GenAI messages, in order."""
    for message in messages if isinstance(messages, list) else ():
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and part.get("type") in ("tool_call", "tool_call_response"):
                yield part


def _tool_parts(messages: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(tool call parts, tool result parts) of GenAI messages."""
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in _in_order(messages):
        (calls if part["type"] == "tool_call" else results).append(part)
    return calls, results


# -- short forms for tables -------------------------------------------------------------------------
def _compact(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _parts_text(message: Mapping[str, Any]) -> str:
    pieces = []
    for part in message.get("parts") or []:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            pieces.append(str(part.get("content", "")))
        elif kind == "tool_call":
            pieces.append(f"→ {part.get('name')}({_compact(part.get('arguments'))})")
        elif kind == "tool_call_response":
            pieces.append(f"← {_compact(part.get('response'))}")
    if not pieces and "content" in message:
        pieces.append(_compact(message.get("content")))
    return " ".join(pieces)


def summarize(value: Any, width: int = 60, *, last: bool = False) -> str:
    """One line for a table cell: message text and tool calls for chat payloads, compact JSON otherwise."""
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
        messages = value[-1:] if last else value
        text = " | ".join(_parts_text(m) for m in messages)
    else:
        text = _compact(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
