"""Checking a run against a case: every gate passed or failed, with the evidence from the trace.

    report = check(case, agentotel.open())       # judges the latest replay of the case
    print("\\n".join(report.lines())); assert report.passed

Expected tool calls compare with the calls the run made in one of four trajectory-match modes:
`strict` (the same calls in the same order), `unordered` (the same calls in any order), `subset`
(every call made was expected) and `superset` (every expected call was made; others allowed). Each
call's arguments compare `exact`ly, as a `subset` (the expected keys, recursively), or are `ignore`d.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from agentotel import semconv
from agentotel._context import canonical_arguments
from agentotel.cases._record import STATUS_MESSAGE, RunRecord, load_run, sql
from agentotel.cases._steps import LLM, TOOL, final_text, is_error, parse_json, tool_name
from agentotel.cases.case import Case, CaseError, ExpectedCall
from agentotel.analysis.detectors import totals

__all__ = ["check", "check_record", "CheckReport", "Gate", "trajectory_match", "arguments_match"]

_REPLAY_ERRORS = ("ReplayMismatch", "ReplayMiss")
_REPLAY_MARK = "agentotel replay of "
_FRONTIER = "ReplayFrontier"
_DEPARTED = "departs from the recording"

PASS, FAIL, NOT_REACHED = "pass", "fail", "not_reached"


@dataclass(frozen=True)
class Gate:
    """One assertion of a case: `pass`, `fail` or `not_reached` (the replayed run stopped before it could
    be decided: `hint` says what would reach it), and why."""

    name: str
    status: str
    evidence: str
    hint: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASS


@dataclass
class CheckReport:
    """The verdict on one run: every gate with its evidence. It passes only when every gate was reached
    and passed."""

    case: str
    run_id: str | None
    gates: list[Gate] = field(default_factory=list)
    stop: dict[str, Any] | None = None  # where a replay with frozen models stopped: kind, step, detail
    errors: list[str] = field(default_factory=list)  # the run's failed steps, with their messages
    metrics: dict[str, Any] = field(default_factory=dict)  # steps, tool calls, latency, cost (for suites)
    store: str | None = None  # the store the run is in (a replay's own)

    @property
    def passed(self) -> bool:
        return bool(self.gates) and all(g.passed for g in self.gates)

    @property
    def failures(self) -> list[Gate]:
        return [g for g in self.gates if not g.passed]

    def lines(self) -> list[str]:
        head = f"case {self.case} on run {self.run_id}: {'PASS' if self.passed else 'FAIL'}"
        out = [head]
        if self.stop:
            out.append(f"  replay stopped at step {self.stop['step']} ({self.stop['kind']}): {self.stop['detail']}")
        for g in self.gates:
            label = {PASS: "pass", FAIL: "FAIL", NOT_REACHED: "NOT REACHED"}[g.status]
            out.append(f"  {label}  {g.name}: {g.evidence}" + (f" -- to reach it: {g.hint}" if g.hint else ""))
        out += [f"  error at {e}" for e in self.errors]
        if self.store and self.run_id:
            out.append(f"  replayed run {self.run_id} in {self.store}: agentotel trajectory {self.run_id} --dir {self.store}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "run_id": self.run_id,
            "passed": self.passed,
            "store": self.store,
            "stop": self.stop,
            "gates": [{"name": g.name, "status": g.status, "passed": g.passed, "evidence": g.evidence,
                       **({"hint": g.hint} if g.hint else {})} for g in self.gates],
            "errors": self.errors,
            "metrics": self.metrics,
        }


def latest_replay(traces: Any, case: Case) -> str | None:
    """The run id of the most recent replay of the case in the store, or None."""
    rows = traces.sql(sql("replays_of_case"), {"case_attribute": semconv.AGENTOTEL_REPLAY_CASE, "case": case.ref}).fetchall()
    return rows[0][0] if rows else None


def check(case: Case | str | Path, traces: Any, run: str | None = None, *, replayer: Any = None) -> CheckReport:
    """Every assertion of the case against a run of the store (default: the case's latest replay).

    `traces` is the store the run is in: replays are recorded in their own (`<store>/replays`)."""
    if not isinstance(case, Case):
        case = Case.load(case)
    if run is None:
        run = (replayer.run_id if replayer is not None else None) or latest_replay(traces, case)
        if run is None:
            raise CaseError(f"no replay of case {case.ref!r} in the store: replay it first, or name a run")
    return check_record(case, load_run(traces, run, nested=False), replayer=replayer)


class _Judge:
    """Decides a gate from what the run did. A gate the run violated fails; one it satisfied passes. When
    the replay stopped early (frozen models with no answer) the rest is unknown: a gate about what
    happens by the end is not reached; a gate about what must never happen is judged on the steps made
    only when the replay departed from the recording and the case's evidence gate passed at that point
    (the fix changed what the model is shown, to what it must be shown); otherwise it is not reached."""

    def __init__(self, stop: Mapping[str, Any] | None, evidence_passed: bool, has_evidence: bool) -> None:
        self.stop = stop
        self.evidence_passed = evidence_passed
        self.has_evidence = has_evidence

    def never(self, name: str, violated: bool, evidence: str) -> Gate:
        if violated or self.stop is None:
            return Gate(name, FAIL if violated else PASS, evidence)
        step = self.stop["step"]
        if self.stop["kind"] == "departed" and self.evidence_passed:
            return Gate(name, PASS, f"{evidence} (up to step {step}, where the replay departed from the recording with the required evidence)")
        return Gate(name, NOT_REACHED, f"{evidence} before the replay stopped at step {step}", self.hint(for_never=True))

    def eventually(self, name: str, satisfied: bool, evidence: str) -> Gate:
        if satisfied or self.stop is None:
            return Gate(name, PASS if satisfied else FAIL, evidence)
        return Gate(name, NOT_REACHED, f"{evidence} before the replay stopped at step {self.stop['step']}", self.hint(for_never=False))

    def hint(self, for_never: bool) -> str:
        if self.stop is None:
            return ""
        if self.stop["kind"] == "departed":
            if for_never and not self.has_evidence:
                return (f"say what the model must be shown at step {self.stop['step']} (case new --evidence TEXT, or "
                        "required_evidence in the file), or run the models live (--models live)")
            return "the rest of the run needs a model: run with --models live"
        return ("the recording ends here: run the code the fix is in live (--tools live), cut the case at an earlier "
                "step, or judge what the model is shown here (--evidence TEXT)")


def check_record(case: Case, record: RunRecord, *, replayer: Any = None) -> CheckReport:
    """Every assertion of the case against one run's record (plain data; see `check` for a store)."""
    a = case.assertions
    stop_step = _frontier(record)
    stop = _stop(record, stop_step)
    # The request a frozen replay stopped at got no answer: it is where the run ended, not a step it made.
    steps = [s for s in record.steps if s is not stop_step]
    calls = [(str(tool_name(s)), parse_json(s.get("input")), s["index"]) for s in steps if s.get("type") == TOOL]
    gates = [_replay_gate(record, replayer)]
    evidence = _evidence_gate(a.required_evidence, record, case.at_step) if a.required_evidence else None
    judge = _Judge(stop, evidence is not None and evidence.passed, evidence is not None)

    if a.final_status is not None:
        errored = record.status == "error" or any(is_error(s) for s in steps[-1:])
        ended = "error" if errored else "ok"
        text = f"run ended {ended}, expected {a.final_status}"
        if a.final_status == "ok":
            gates.append(judge.never("final_status", errored, text if errored or stop is None else "no error"))
        else:
            gates.append(judge.eventually("final_status", errored, text))
    if a.forbidden_tools:
        hits = [(n, i) for n, _args, i in calls if n in a.forbidden_tools]
        gates.append(judge.never("forbidden_tools", bool(hits), _where(hits) if hits else f"none of {', '.join(a.forbidden_tools)} called"))
    if a.forbidden_arguments:
        hits = [(f"{n} {canonical_arguments(args)}", i) for n, args, i in calls if any(_forbidden(rule, n, args) for rule in a.forbidden_arguments)]
        gates.append(judge.never("forbidden_arguments", bool(hits), _where(hits) if hits else "no call with forbidden arguments"))
    if a.must_call_before:
        gates.append(_before_gate(judge, a.must_call_before, calls))
    if a.required_tools:
        made = {n for n, _args, _i in calls}
        missing = [t for t in a.required_tools if t not in made]
        gates.append(judge.eventually("required_tools", not missing, f"never called {', '.join(missing)}" if missing else "all called"))
    used = totals(steps)
    latency = _latency_s(record)
    for name, limit, value in (
        ("max_tool_calls", a.max_tool_calls, used["tool_calls"]),
        ("max_steps", a.max_steps, used["steps"]),
        ("max_cost_usd", a.max_cost_usd, used["cost_usd"] or 0.0),
        ("max_latency_s", a.max_latency_s, latency),
    ):
        if limit is not None:
            if value is None:
                gates.append(Gate(name, NOT_REACHED, "the run's duration is not recorded", "record the run inside agentotel.run()"))
            else:
                gates.append(judge.never(name, value > limit, f"{round(value, 3)} (limit {limit})"))
    if a.must_not_repeat:
        repeats = _repeats(a.must_not_repeat, calls)
        gates.append(judge.never("must_not_repeat", bool(repeats), repeats or f"no repeated call of {', '.join(a.must_not_repeat)}"))
    if a.expected_tool_calls:
        made = [(n, args) for n, args, _i in calls]
        ok, text = trajectory_match(a.expected_tool_calls, made, a.trajectory_match)
        name = f"expected_tool_calls ({a.trajectory_match})"
        # A call made that is not allowed is a violation already; an expected call still missing may come later.
        if a.trajectory_match == "subset":
            gates.append(judge.never(name, not ok, text))
        elif a.trajectory_match == "strict":
            prefix = len(made) < len(a.expected_tool_calls) and trajectory_match(a.expected_tool_calls[: len(made)], made, "strict")[0]
            gates.append(judge.eventually(name, ok, text) if ok or prefix else Gate(name, FAIL, text))
        else:
            gates.append(judge.eventually(name, ok, text) if "not expected" not in text else Gate(name, FAIL, text))
    if evidence is not None:
        gates.append(evidence)
    if a.final_output_contains:
        text = _final_output(record) if stop is None else ""
        missing = [t for t in a.final_output_contains if t not in text]
        gates.append(judge.eventually("final_output_contains", not missing,
                                      (f"missing {missing!r} in {text[:200]!r}" if stop is None else "no final answer")
                                      if missing else "all present"))
    errors = [f"step {s['index']} ({s.get('name')}): {_error_message(record, s)}" for s in steps if is_error(s)]
    metrics = {
        "steps": used["steps"],
        "tool_calls": used["tool_calls"],
        "latency_s": latency,
        "cost_usd": used["cost_usd"] or 0.0,
        "recorded_cost_usd": _recorded_cost(record, steps),
    }
    store = str(replayer.directory) if replayer is not None and getattr(replayer, "directory", None) else None
    return CheckReport(case.name, record.run_id, gates, stop, errors, metrics, store)


def _stop(record: RunRecord, step: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if step is None:
        return None
    detail = _error_message(record, step)
    detail = detail.split(": ", 1)[1] if detail.startswith(_FRONTIER) else detail
    detail = detail.split(": ", 1)[1] if detail.startswith("agentotel replay frontier of ") else detail
    return {"kind": "departed" if _DEPARTED in detail else "frontier", "step": step["index"], "detail": detail}


def _error_message(record: RunRecord, step: Mapping[str, Any]) -> str:
    attributes = record.span_attributes.get(str(step.get("span_id")), {})
    message = str(step.get("error") or attributes.get(STATUS_MESSAGE) or "")
    kind = str(step.get("error_type") or attributes.get(semconv.ERROR_TYPE) or "").rsplit(".", 1)[-1]
    if kind and not message.startswith(kind):
        message = f"{kind}: {message}" if message else kind
    return message or "error"


def _latency_s(record: RunRecord) -> float | None:
    duration = record.run.get("duration_ms")
    return round(float(duration) / 1e3, 3) if duration is not None else None


def _recorded_cost(record: RunRecord, steps: Sequence[Mapping[str, Any]]) -> float:
    total = 0.0
    for step in steps:
        value = record.attribute(step, semconv.AGENTOTEL_REPLAY_RECORDED_COST_USD)
        if value not in (None, ""):
            total += float(value)
    return round(total, 10)


def _forbidden(rule: Mapping[str, Any], name: str, arguments: Any) -> bool:
    """A call matches a forbidden-arguments rule: its tool (or "*"), and every argument the rule names
    with an equal value (a string value of the rule is a glob: "prod-*")."""
    if rule.get("tool", "*") not in ("*", name):
        return False
    return _argument_fits(arguments, rule.get("arguments") or {})


def _argument_fits(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and _argument_fits(actual[k], v) for k, v in wanted.items())
    if isinstance(wanted, str):
        return fnmatch.fnmatchcase(actual if isinstance(actual, str) else canonical_arguments(actual), wanted)
    return canonical_arguments(wanted) == canonical_arguments(actual)


def _before_gate(judge: _Judge, rules: Mapping[str, Sequence[str]], calls: Sequence[tuple[str, Any, int]]) -> Gate:
    """Evidence before action: every call of a tool in `rules` came after a call of each tool it names."""
    seen: set[str] = set()
    missing = []
    for name, _args, index in calls:
        needed = rules.get(name)
        if needed:
            absent = [t for t in ([needed] if isinstance(needed, str) else needed) if t not in seen]
            if absent:
                missing.append(f"{name} at step {index} before {', '.join(absent)}")
        seen.add(name)
    rule_text = "; ".join(f"{', '.join([v] if isinstance(v, str) else v)} before {k}" for k, v in rules.items())
    return judge.never("must_call_before", bool(missing), "; ".join(missing) if missing else rule_text)


def _frontier(record: RunRecord) -> dict[str, Any] | None:
    """The step a replay with frozen models stopped at (it ended in ReplayFrontier), if any."""
    for step in record.steps:
        if str(step.get("error_type") or record.attribute(step, semconv.ERROR_TYPE) or "").endswith(_FRONTIER):
            return step
    return None


def _evidence_gate(wanted: Sequence[str], record: RunRecord, at: int | None) -> Gate:
    """The failure step (the first model request at or after the cut) was shown the evidence."""
    step = next((s for s in record.steps if s.get("type") == LLM and (at is None or s["index"] >= at)), None)
    if step is None:
        return Gate("required_evidence", NOT_REACHED, f"the run made no model request at or after step {at}",
                    "the agent must reach the failure step: check the replay gate and the errors below")
    shown = json.dumps(parse_json(step.get("input")), ensure_ascii=False)
    missing = [text for text in wanted if text not in shown and json.dumps(text)[1:-1] not in shown]
    if not missing:
        return Gate("required_evidence", PASS, f"step {step['index']} was shown {', '.join(map(repr, wanted))}")
    last = _last_message_text(step)
    return Gate("required_evidence", FAIL, f"step {step['index']} was not shown {', '.join(map(repr, missing))}; its last message: {last[:200]!r}")


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
    return Gate("replay", FAIL if refused else PASS, "refused " + "; ".join(refused) if refused else "every recorded call matched")


def steps_with_errors(record: RunRecord) -> list[dict[str, Any]]:
    return [s for s in record.steps if str(s.get("status") or "").lower() == "error"]


def _repeats(tools: list[str], calls: Sequence[tuple[str, Any, int]]) -> str:
    """The calls of `tools` ("*": any) made more than once with the same arguments, or ""."""
    seen: dict[tuple[str, str], list[int]] = {}
    for name, args, index in calls:
        if "*" in tools or name in tools:
            seen.setdefault((name, canonical_arguments(args)), []).append(index)
    repeats = {key: idx for key, idx in seen.items() if len(idx) > 1}
    return "; ".join(f"{name} {args} at steps {', '.join(map(str, idx))}" for (name, args), idx in repeats.items())


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
