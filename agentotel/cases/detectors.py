"""Findings: the silent failures a run's record shows — loops, ignored errors, drift, bad calls, overruns.

    from agentotel.cases.detectors import findings, Thresholds
    for f in findings(agentotel.open(), "5f1c2a8e", thresholds=Thresholds(max_tool_calls=10)):
        print(f.kind, f.layer, f.steps, f.message)

Each finding names the step(s) it points at, a kind, the harness layer most likely at fault
(`prompt`, `tool`, `workflow`, `memory`, `model`, `product`) and the evidence. Detectors only read the
record; `detect(record, history)` runs them over plain data, `findings(traces, run)` over a store.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping

from agentotel import semconv
from agentotel.cases._record import STATUS_MESSAGE, History, RunRecord, load_history, load_run
from agentotel.cases._steps import (
    LLM,
    TOOL,
    call_key,
    compare_shapes,
    final_text,
    is_error,
    parse_json,
    requested_calls,
    shape,
    sha,
    tool_name,
    tool_payload,
)
from agentotel._context import canonical_arguments

__all__ = ["Finding", "Thresholds", "LAYERS", "KINDS", "detect", "findings", "findings_table"]

LAYERS = ("prompt", "tool", "workflow", "memory", "model", "product")

# kind -> the layer a finding of that kind is labelled with (the most likely place to fix it).
KINDS: dict[str, str] = {
    "repeated_tool_call": "workflow",  # the harness let the same call run again and again
    "repeated_model_request": "workflow",  # the same request sent to the model again: no progress
    "retry_loop": "tool",  # a tool failing again and again
    "tool_error_ignored": "workflow",  # a failed tool call the agent carried on past
    "tool_output_drift": "tool",  # a tool's output structure changed since earlier runs
    "tool_interface_drift": "tool",  # a tool's schema changed since earlier runs
    "unknown_tool": "model",  # the model called a tool it was not given
    "invalid_arguments_json": "model",
    "wrong_arguments": "model",  # argument names or types that do not fit the tool's schema
    "kept_going_after_answer": "workflow",
    "unanswered_tool_calls": "workflow",
    "budget_exceeded": "product",
}


@dataclass(frozen=True)
class Thresholds:
    """Detector settings. Budgets (the `max_*` fields) are off unless given."""

    repeated_tool_calls: int = 3  # the same tool with the same arguments this many times is a loop
    repeated_model_requests: int = 2  # the same messages sent to the model this many times
    retry_errors: int = 3  # a tool failing this many times in a row
    max_steps: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass(frozen=True)
class Finding:
    """One problem in a run: which steps, what kind, which harness layer, and the evidence."""

    kind: str
    layer: str
    steps: tuple[int, ...]
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["steps"] = list(self.steps)
        return data


def _finding(kind: str, steps: Iterable[int], message: str, **evidence: Any) -> Finding:
    return Finding(kind, KINDS[kind], tuple(sorted(set(steps))), message, evidence)


def findings(traces: Any, run: str, *, thresholds: Thresholds | None = None) -> list[Finding]:
    """Every finding for a run of the store, compared with the earlier runs in the same store."""
    record = load_run(traces, run, nested=False)
    return detect(record, load_history(traces, record), thresholds=thresholds)


def detect(record: RunRecord, history: History | None = None, *, thresholds: Thresholds | None = None) -> list[Finding]:
    """Every finding for one run, ordered by the first step it points at."""
    limits = thresholds or Thresholds()
    history = history or History()
    out: list[Finding] = []
    for detector in _DETECTORS:
        out.extend(detector(record, history, limits))
    return sorted(out, key=lambda f: (f.steps[0] if f.steps else 0, f.kind))


# ---- loops -------------------------------------------------------------------------------------------


def _repetition(record: RunRecord, _history: History, limits: Thresholds) -> list[Finding]:
    out = []
    calls: dict[str, list[int]] = defaultdict(list)
    names: dict[str, str] = {}
    for step in record.tool_steps():
        key = call_key(str(tool_name(step)), parse_json(step.get("input")))
        calls[key].append(step["index"])
        names[key] = str(tool_name(step))
    for key, indexes in calls.items():
        if len(indexes) >= limits.repeated_tool_calls:
            arguments = key.split(" ", 1)[1]
            out.append(
                _finding(
                    "repeated_tool_call",
                    indexes,
                    f"{names[key]} called {len(indexes)} times with the same arguments {arguments}",
                    tool=names[key],
                    arguments=arguments,
                    count=len(indexes),
                )
            )
    requests: dict[str, list[int]] = defaultdict(list)
    for step in record.steps:
        # A request retried after an error (a 429, a timeout) is a retry, not the agent going round.
        if step.get("type") == LLM and step.get("input") is not None and not is_error(step):
            requests[sha(canonical_arguments(parse_json(step.get("input"))))].append(step["index"])
    for digest, indexes in requests.items():
        if len(indexes) >= limits.repeated_model_requests:
            out.append(
                _finding(
                    "repeated_model_request",
                    indexes,
                    f"the same messages were sent to the model {len(indexes)} times",
                    request_hash=digest,
                    count=len(indexes),
                )
            )
    return out


def _retry_loops(record: RunRecord, _history: History, limits: Thresholds) -> list[Finding]:
    out = []
    streak: dict[str, list[int]] = defaultdict(list)
    reported: dict[str, list[list[int]]] = defaultdict(list)
    for step in record.tool_steps():
        name = str(tool_name(step))
        if is_error(step):
            streak[name].append(step["index"])
            continue
        if len(streak[name]) >= limits.retry_errors:
            reported[name].append(streak[name])
        streak[name] = []
    for name, run in streak.items():
        if len(run) >= limits.retry_errors:
            reported[name].append(run)
    for name, runs in reported.items():
        for indexes in runs:
            out.append(
                _finding("retry_loop", indexes, f"{name} failed {len(indexes)} times in a row", tool=name, count=len(indexes))
            )
    return out


# ---- errors carried past -----------------------------------------------------------------------------


def _ignored_errors(record: RunRecord, _history: History, _limits: Thresholds) -> list[Finding]:
    out = []
    steps = record.steps
    for position, step in enumerate(steps):
        if step.get("type") != TOOL or not is_error(step):
            continue
        later = steps[position + 1 :]
        name = tool_name(step)
        if not later or any(s.get("type") == TOOL and tool_name(s) == name for s in later):
            continue  # the run ended there, or the agent tried the tool again
        out.append(
            _finding(
                "tool_error_ignored",
                [step["index"]],
                f"{name} failed at step {step['index']} and the run went on for {len(later)} more steps without retrying it",
                tool=name,
                error=record.attribute(step, STATUS_MESSAGE) or step.get("error_type"),
                following_steps=[s.get("index") for s in later],
            )
        )
    return out


# ---- drift against earlier runs ----------------------------------------------------------------------


def _output_drift(record: RunRecord, history: History, _limits: Thresholds) -> list[Finding]:
    out = []
    seen: set[str] = set()
    for step in record.tool_steps():
        name = str(tool_name(step))
        if name in seen or is_error(step) or step.get("output") is None:
            continue
        earlier = history.latest(name)
        if earlier is None or earlier.output is None:
            continue
        change = compare_shapes(shape(earlier.output), shape(tool_payload(step.get("output"))))
        if not change:
            continue
        seen.add(name)  # one finding per tool: the first step whose output no longer has the old shape
        out.append(
            _finding(
                "tool_output_drift",
                [step["index"]],
                f"{name} output changed shape since run {earlier.run_id[:8]}: {change.summary()}",
                tool=name,
                earlier_run=earlier.run_id,
                **change.to_dict(),
            )
        )
    return out


def _interface_drift(record: RunRecord, history: History, _limits: Thresholds) -> list[Finding]:
    out = []
    seen: set[str] = set()
    for step in record.tool_steps():
        name = str(tool_name(step))
        current = record.attribute(step, semconv.AGENTOTEL_TOOL_SCHEMA_HASH)
        if name in seen or not current:
            continue
        earlier = next((s for s in history.tools.get(name, ()) if s.schema_hash), None)
        if earlier is None or earlier.schema_hash == current:
            continue
        seen.add(name)
        out.append(
            _finding(
                "tool_interface_drift",
                [step["index"]],
                f"{name} schema changed since run {earlier.run_id[:8]} ({earlier.schema_hash} -> {current})",
                tool=name,
                earlier_run=earlier.run_id,
                before=earlier.schema_hash,
                after=current,
            )
        )
    return out


# ---- wrong tool-call form ----------------------------------------------------------------------------


def tool_schemas(definitions: Any) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON schema of its parameters, from `gen_ai.tool.definitions` (GenAI or OpenAI form)."""
    schemas: dict[str, dict[str, Any]] = {}
    for item in parse_json(definitions) or ():
        if not isinstance(item, Mapping):
            continue
        fn = item.get("function") if isinstance(item.get("function"), Mapping) else item
        name = fn.get("name")
        if name:
            params = fn.get("parameters") or fn.get("input_schema") or {}
            schemas[str(name)] = dict(params) if isinstance(params, Mapping) else {}
    return schemas


def _registered_schemas() -> dict[str, dict[str, Any]]:
    try:
        from agentotel.tools import registered_tools
    except ImportError:  # the instrumentation half is absent: only the record's definitions count
        return {}
    return {name: dict(info.schema or {}) for name, info in registered_tools().items()}


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def argument_problems(arguments: Any, schema: Mapping[str, Any]) -> list[str]:
    """What is wrong with a call's arguments against its tool's parameter schema (top level), or []."""
    if not isinstance(arguments, Mapping):
        return [f"arguments are {type(arguments).__name__}, not an object"]
    properties = schema.get("properties") or {}
    problems = [f"missing required argument {name!r}" for name in schema.get("required") or () if name not in arguments]
    for name, value in arguments.items():
        spec = properties.get(name)
        if spec is None:
            if properties or schema.get("additionalProperties") is False:
                problems.append(f"unknown argument {name!r}")
            continue
        wanted = spec.get("type") if isinstance(spec, Mapping) else None
        types = [wanted] if isinstance(wanted, str) else list(wanted or ())
        if types and not any(_JSON_TYPES.get(t, lambda _v: True)(value) for t in types):
            problems.append(f"argument {name!r} is {type(value).__name__}, expected {'|'.join(types)}")
        enum = spec.get("enum") if isinstance(spec, Mapping) else None
        if enum and value not in enum:
            problems.append(f"argument {name!r}={value!r} is not one of {enum}")
    return problems


def _call_form(record: RunRecord, _history: History, _limits: Thresholds) -> list[Finding]:
    out = []
    registered = _registered_schemas()
    for step in record.steps:
        if step.get("type") != LLM:
            continue
        offered = tool_schemas(record.attribute(step, semconv.GEN_AI_TOOL_DEFINITIONS))
        known = offered or registered
        for call in requested_calls(step):
            index = [step["index"]]
            if not call.valid_json:
                out.append(
                    _finding(
                        "invalid_arguments_json",
                        index,
                        f"the model called {call.name} with arguments that are not valid JSON",
                        tool=call.name,
                        arguments=str(call.arguments)[:500],
                    )
                )
                continue
            if known and call.name not in known:
                out.append(
                    _finding(
                        "unknown_tool",
                        index,
                        f"the model called {call.name!r}, which is not one of its tools ({', '.join(sorted(known))})",
                        tool=call.name,
                        available=sorted(known),
                    )
                )
                continue
            schema = known.get(call.name)
            problems = argument_problems(call.arguments, schema) if schema else []
            if problems:
                out.append(
                    _finding(
                        "wrong_arguments",
                        index,
                        f"the model called {call.name} with {'; '.join(problems)}",
                        tool=call.name,
                        arguments=call.arguments,
                        problems=problems,
                    )
                )
    return out


# ---- termination -------------------------------------------------------------------------------------


def _termination(record: RunRecord, _history: History, _limits: Thresholds) -> list[Finding]:
    out = []
    steps = [s for s in record.steps if s.get("type") in (LLM, TOOL)]
    for position, step in enumerate(steps):
        answer = final_text(step)
        if answer is None:
            continue
        # Only the answering model's own level counts: a sub-agent's answer ends the sub-agent, not the run.
        later = [s for s in steps[position + 1 :] if s.get("parent_index") == step.get("parent_index")]
        if not later:
            continue
        out.append(
            _finding(
                "kept_going_after_answer",
                [step["index"], *(s["index"] for s in later)],
                f"the model gave a final answer at step {step['index']} and the run went on for {len(later)} more steps",
                answer=answer[:500],
            )
        )
        break
    llm_steps = [s for s in steps if s.get("type") == LLM]
    if llm_steps:
        last = llm_steps[-1]
        asked = requested_calls(last)
        answered_ids = {s.get("tool_call_id") for s in steps if s.get("type") == TOOL and s.get("tool_call_id")}
        answered_by = Counter(
            tool_name(s) for s in steps if s.get("type") == TOOL and s.get("requested_by") == last["index"]
        )
        after = Counter(tool_name(s) for s in steps if s.get("type") == TOOL and s["index"] > last["index"])
        missing = []
        for call in asked:
            if call.id and call.id in answered_ids:
                continue
            if answered_by[call.name] > 0:
                answered_by[call.name] -= 1
                continue
            if after[call.name] > 0:
                after[call.name] -= 1
                continue
            missing.append({"id": call.id, "name": call.name})
        if missing:
            out.append(
                _finding(
                    "unanswered_tool_calls",
                    [last["index"]],
                    f"the run stopped with {len(missing)} tool call(s) the model asked for at step {last['index']} unanswered: "
                    + ", ".join(m["name"] for m in missing),
                    calls=missing,
                )
            )
    return out


# ---- budgets -----------------------------------------------------------------------------------------


def totals(steps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Steps, tool calls, tokens and cost of a list of steps."""
    steps = list(steps)
    cost = [float(s["cost_usd"]) for s in steps if s.get("cost_usd") is not None]
    return {
        "steps": len(steps),
        "tool_calls": sum(1 for s in steps if s.get("type") == TOOL),
        "tokens": sum(int(s.get("input_tokens") or 0) + int(s.get("output_tokens") or 0) for s in steps),
        "cost_usd": round(sum(cost), 10) if cost else None,
    }


def _first_over(steps: list[Mapping[str, Any]], amount: Callable[[Mapping[str, Any]], float], limit: float) -> int | None:
    """The index of the step at which the running total first went over the limit."""
    running = 0.0
    for step in steps:
        running += amount(step)
        if running > limit:
            return step["index"]
    return None


def _budgets(record: RunRecord, _history: History, limits: Thresholds) -> list[Finding]:
    out = []
    used = totals(record.steps)
    measures: list[tuple[str, float | None, Any, Callable[[Mapping[str, Any]], float]]] = [
        ("steps", limits.max_steps, used["steps"], lambda s: 1),
        ("tool_calls", limits.max_tool_calls, used["tool_calls"], lambda s: s.get("type") == TOOL),
        ("tokens", limits.max_tokens, used["tokens"], lambda s: int(s.get("input_tokens") or 0) + int(s.get("output_tokens") or 0)),
        ("cost_usd", limits.max_cost_usd, used["cost_usd"] or 0.0, lambda s: float(s.get("cost_usd") or 0.0)),
    ]
    for what, limit, value, amount in measures:
        if limit is None or value <= limit:
            continue
        at = _first_over(record.steps, amount, limit)
        out.append(
            _finding(
                "budget_exceeded",
                [at] if at is not None else [],
                f"{what} {value} over the budget of {limit} (first over at step {at})",
                budget=what,
                limit=limit,
                used=value,
            )
        )
    return out


_DETECTORS = (_repetition, _retry_loops, _ignored_errors, _output_drift, _interface_drift, _call_form, _termination, _budgets)


def findings_table(traces: Any, runs: Iterable[str] | None = None, *, thresholds: Thresholds | None = None) -> Any:
    """Findings of many runs (default: every run in the store) as an Arrow table, for a `findings` view.

    Columns: run_id, kind, layer, first_step, steps (list), message, evidence (JSON). Detectors are
    Python, so this is computed when asked for — register it as a view for SQL over one store snapshot.
    """
    import pyarrow as pa

    if runs is None:
        runs = [row[0] for row in traces.sql("SELECT run_id FROM runs ORDER BY start_time").fetchall()]
    rows: dict[str, list[Any]] = {k: [] for k in ("run_id", "kind", "layer", "first_step", "steps", "message", "evidence")}
    for run in runs:
        record = load_run(traces, run, nested=False)
        for f in detect(record, load_history(traces, record), thresholds=thresholds):
            rows["run_id"].append(record.run_id)
            rows["kind"].append(f.kind)
            rows["layer"].append(f.layer)
            rows["first_step"].append(f.steps[0] if f.steps else None)
            rows["steps"].append(list(f.steps))
            rows["message"].append(f.message)
            rows["evidence"].append(json.dumps(f.evidence, default=str, ensure_ascii=False))
    schema = pa.schema([("run_id", pa.string()), ("kind", pa.string()), ("layer", pa.string()), ("first_step", pa.int64()),
                        ("steps", pa.list_(pa.int64())), ("message", pa.string()), ("evidence", pa.string())])
    return pa.table(rows, schema=schema)


def format_findings(items: Iterable[Finding]) -> str:
    """Findings as readable lines (what `agentotel check` prints)."""
    lines = [
        f"[{f.layer}] {f.kind} at step{'s' if len(f.steps) > 1 else ''} {','.join(map(str, f.steps))}: {f.message}"
        for f in items
    ]
    return "\n".join(lines) if lines else "no findings"
