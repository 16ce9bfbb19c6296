"""Checking a run against a case: every gate passed or failed, with the evidence from the trace.

    report = check(case, agentotel.open())       # judges the latest replay of the case
    print("\\n".join(report.lines())); assert report.passed

Expected tool calls compare with the calls the run made in one of four trajectory-match modes:
`strict` (the same calls in the same order), `unordered` (the same calls in any order), `subset`
(every call made was expected) and `superset` (every expected call was made; others allowed). Each
call's arguments compare `exact`ly, as a `subset` (the expected keys, recursively), or are `ignore`d.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from agentotel import semconv
from agentotel._context import canonical_arguments
from agentotel.cases._record import STATUS_MESSAGE, RunRecord, load_run, sql
from agentotel.cases._steps import LLM, final_text, parse_json, tool_name
from agentotel.cases.case import Case, CaseError, ExpectedCall
from agentotel.analysis.detectors import totals

__all__ = ["check", "check_record", "CheckReport", "Gate", "trajectory_match", "arguments_match"]

_REPLAY_ERRORS = ("ReplayMismatch", "ReplayMiss")
_REPLAY_MARK = "agentotel replay of "
_FRONTIER = "ReplayFrontier"


@dataclass(frozen=True)
class Gate:
    """One assertion of a case: its name, whether the run passed it, and why."""

    name: str
    passed: bool
    evidence: str


@dataclass
class CheckReport:
    """The verdict on one run: every gate with its evidence."""

    case: str
    run_id: str | None
    gates: list[Gate] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def failures(self) -> list[Gate]:
        return [g for g in self.gates if not g.passed]

    def lines(self) -> list[str]:
        head = f"case {self.case} on run {self.run_id}: {'PASS' if self.passed else 'FAIL'}"
        return [head] + [f"  {'pass' if g.passed else 'FAIL'}  {g.name}: {g.evidence}" for g in self.gates]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "run_id": self.run_id,
            "passed": self.passed,
            "gates": [{"name": g.name, "passed": g.passed, "evidence": g.evidence} for g in self.gates],
        }


def latest_replay(traces: Any, case: Case) -> str | None:
    """The run id of the most recent replay of the case in the store, or None."""
    rows = traces.sql(sql("replays_of_case"), {"case_attribute": semconv.AGENTOTEL_REPLAY_CASE, "case": case.ref}).fetchall()
    return rows[0][0] if rows else None


def check(case: Case | str | Path, traces: Any, run: str | None = None, *, replayer: Any = None) -> CheckReport:
    """Every assertion of the case against a run of the store (default: the case's latest replay)."""
    if not isinstance(case, Case):
        case = Case.load(case)
    if run is None:
        run = (replayer.run_id if replayer is not None else None) or latest_replay(traces, case)
        if run is None:
            raise CaseError(f"no replay of case {case.ref!r} in the store: replay it first, or name a run")
    return check_record(case, load_run(traces, run, nested=False), replayer=replayer)


def check_record(case: Case, record: RunRecord, *, replayer: Any = None) -> CheckReport:
    """Every assertion of the case against one run's record (plain data; see `check` for a store)."""
    a = case.assertions
    steps = record.steps
    calls = [(str(tool_name(s)), parse_json(s.get("input")), s["index"]) for s in record.tool_steps()]
    gates = [_replay_gate(record, replayer)]
    frontier = _frontier(record)

    if a.final_status is not None:
        if frontier is not None:
            gates.append(Gate("final_status", True, f"not reached: the frozen replay stopped at step {frontier['index']}"))
        else:
            gates.append(Gate("final_status", record.status == a.final_status, f"run ended {record.status}, expected {a.final_status}"))
    if a.forbidden_tools:
        hits = [(n, i) for n, _args, i in calls if n in a.forbidden_tools]
        gates.append(Gate("forbidden_tools", not hits, _where(hits) if hits else f"none of {', '.join(a.forbidden_tools)} called"))
    if a.required_tools:
        made = {n for n, _args, _i in calls}
        missing = [t for t in a.required_tools if t not in made]
        gates.append(Gate("required_tools", not missing, f"never called {', '.join(missing)}" if missing else "all called"))
    used = totals(steps)
    for name, limit, value in (
        ("max_tool_calls", a.max_tool_calls, used["tool_calls"]),
        ("max_steps", a.max_steps, used["steps"]),
        ("max_cost_usd", a.max_cost_usd, used["cost_usd"] or 0.0),
    ):
        if limit is not None:
            gates.append(Gate(name, value <= limit, f"{value} (limit {limit})"))
    if a.must_not_repeat:
        gates.append(_repeat_gate(a.must_not_repeat, calls))
    if a.expected_tool_calls:
        ok, evidence = trajectory_match(a.expected_tool_calls, [(n, args) for n, args, _i in calls], a.trajectory_match)
        gates.append(Gate(f"expected_tool_calls ({a.trajectory_match})", ok, evidence))
    if a.required_evidence:
        gates.append(_evidence_gate(a.required_evidence, record, len(case.models)))
    if a.final_output_contains:
        text = _final_output(record)
        missing = [t for t in a.final_output_contains if t not in text]
        gates.append(Gate("final_output_contains", not missing,
                          f"missing {missing!r} in {text[:200]!r}" if missing else "all present"))
    return CheckReport(case.name, record.run_id, gates)


def _frontier(record: RunRecord) -> dict[str, Any] | None:
    """The model step a frozen replay stopped at (it ended in ReplayFrontier), if any."""
    for step in record.steps:
        if step.get("type") == LLM and str(step.get("error_type") or "").endswith(_FRONTIER):
            return step
    return None


def _evidence_gate(wanted: Sequence[str], record: RunRecord, recorded_answers: int) -> Gate:
    """The failure step (the first model request past the case's recorded answers) was shown the evidence."""
    llm_steps = [s for s in record.steps if s.get("type") == LLM]
    if len(llm_steps) <= recorded_answers:
        return Gate("required_evidence", False, f"the run made no model request past the {recorded_answers} recorded one(s)")
    step = llm_steps[recorded_answers]
    shown = json.dumps(parse_json(step.get("input")), ensure_ascii=False)
    missing = [text for text in wanted if text not in shown and json.dumps(text)[1:-1] not in shown]
    if not missing:
        return Gate("required_evidence", True, f"step {step['index']} was shown {', '.join(map(repr, wanted))}")
    last = _last_message_text(step)
    return Gate("required_evidence", False, f"step {step['index']} was not shown {', '.join(map(repr, missing))}; its last message: {last[:200]!r}")


def _last_message_text(step: Mapping[str, Any]) -> str:
    messages = parse_json(step.get("input"))
    if not isinstance(messages, list) or not messages:
        return ""
    parts = messages[-1].get("parts") if isinstance(messages[-1], Mapping) else None
    texts = []
    for part in parts or ():
        if isinstance(part, Mapping):
            value = part.get("content", part.get("response"))
            texts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return " ".join(texts)


def _where(hits: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{name} at step {index}" for name, index in hits)


def _replay_gate(record: RunRecord, replayer: Any) -> Gate:
    """The run stayed on the case's recorded path: no call the replay policy refused."""
    refused = []
    for step in steps_with_errors(record):
        attributes = record.span_attributes.get(str(step.get("span_id")), {})
        error_type = str(step.get("error_type") or attributes.get(semconv.ERROR_TYPE) or "")
        message = str(attributes.get(STATUS_MESSAGE) or step.get("output") or "")
        if error_type.rsplit(".", 1)[-1] in _REPLAY_ERRORS or _REPLAY_MARK in message:
            refused.append(f"step {step['index']} ({step.get('name')})")
    if replayer is not None:
        refused += [f"{e.kind} {e.name}: {e.detail}" for e in replayer.violations if e.detail not in " ".join(refused)]
    return Gate("replay", not refused, "refused " + "; ".join(refused) if refused else "every recorded call matched")


def steps_with_errors(record: RunRecord) -> list[dict[str, Any]]:
    return [s for s in record.steps if str(s.get("status") or "").lower() == "error"]


def _repeat_gate(tools: list[str], calls: Sequence[tuple[str, Any, int]]) -> Gate:
    seen: dict[tuple[str, str], list[int]] = {}
    for name, args, index in calls:
        if "*" in tools or name in tools:
            seen.setdefault((name, canonical_arguments(args)), []).append(index)
    repeats = {key: idx for key, idx in seen.items() if len(idx) > 1}
    if not repeats:
        return Gate("must_not_repeat", True, f"no repeated call of {', '.join(tools)}")
    evidence = "; ".join(f"{name} {args} at steps {', '.join(map(str, idx))}" for (name, args), idx in repeats.items())
    return Gate("must_not_repeat", False, evidence)


def _final_output(record: RunRecord) -> str:
    output = parse_json(record.run.get("output"))
    if output not in (None, ""):
        return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    for step in reversed(record.steps):
        if step.get("type") == LLM:
            return final_text(step) or ""
    return ""


# ---- trajectory match --------------------------------------------------------------------------------


def arguments_match(expected: Any, actual: Any, mode: str = "exact") -> bool:
    """Whether a call's actual arguments fit the expected ones under `exact`, `subset` or `ignore`."""
    if mode == "ignore":
        return True
    expected, actual = parse_json(expected), parse_json(actual)
    if mode == "exact":
        return canonical_arguments(expected) == canonical_arguments(actual)
    if mode == "subset":
        return _contains(actual, expected)
    raise ValueError(f"argument match {mode!r}: use exact, subset or ignore")


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and _contains(actual[k], v) for k, v in expected.items())
    return canonical_arguments(expected) == canonical_arguments(actual)


def _fits(expected: ExpectedCall, call: tuple[str, Any]) -> bool:
    return expected.name == call[0] and arguments_match(expected.arguments, call[1], expected.match)


def _matching(expected: Sequence[ExpectedCall], actual: Sequence[tuple[str, Any]]) -> dict[int, int]:
    """A maximum one-to-one pairing of expected calls with actual calls (expected index -> actual index)."""
    pair_of_actual: dict[int, int] = {}

    def augment(e: int, visited: set[int]) -> bool:
        for j, call in enumerate(actual):
            if j in visited or not _fits(expected[e], call):
                continue
            visited.add(j)
            if j not in pair_of_actual or augment(pair_of_actual[j], visited):
                pair_of_actual[j] = e
                return True
        return False

    for e in range(len(expected)):
        augment(e, set())
    return {e: j for j, e in pair_of_actual.items()}


def _show(call: ExpectedCall | tuple[str, Any]) -> str:
    if isinstance(call, ExpectedCall):
        return call.name if call.match == "ignore" else f"{call.name} {canonical_arguments(call.arguments)}"
    return f"{call[0]} {canonical_arguments(call[1])}"


def trajectory_match(expected: Sequence[ExpectedCall], actual: Sequence[tuple[str, Any]], mode: str = "superset") -> tuple[bool, str]:
    """Whether the calls made match the expected calls under `strict`, `unordered`, `subset` or `superset`."""
    if mode == "strict":
        if len(expected) != len(actual):
            return False, f"{len(actual)} calls made, {len(expected)} expected: {[_show(c) for c in actual]}"
        for position, (e, call) in enumerate(zip(expected, actual), 1):
            if not _fits(e, call):
                return False, f"call {position} is {_show(call)}, expected {_show(e)}"
        return True, f"the {len(expected)} expected calls, in order"
    pairs = _matching(expected, actual)
    unmatched_expected = [_show(e) for i, e in enumerate(expected) if i not in pairs]
    paired_actual = set(pairs.values())
    extra = [_show(c) for j, c in enumerate(actual) if j not in paired_actual]
    if mode == "unordered":
        ok = not unmatched_expected and not extra
    elif mode == "superset":
        ok = not unmatched_expected
    elif mode == "subset":
        ok = not extra
    else:
        raise ValueError(f"trajectory match {mode!r}: use strict, unordered, subset or superset")
    if ok:
        return True, f"{len(pairs)} expected call(s) matched ({mode})"
    bits = []
    if unmatched_expected and mode in ("unordered", "superset"):
        bits.append("not made: " + ", ".join(unmatched_expected))
    if extra and mode in ("unordered", "subset"):
        bits.append("not expected: " + ", ".join(extra))
    return False, "; ".join(bits)
