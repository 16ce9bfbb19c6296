"""Where two runs diverged, and why: their trajectories aligned (agentotel.analysis.align), each pair
compared on what the step was given as well as what it did.

For a pair of model calls that means the instructions, the tools offered, the request parameters and
the messages added since the previous model call (history dropped or rewritten between turns shows)
before the output. A pair's status is the first difference in that order, so when the cause lies in
what a model call was given, the first divergence is that model call, not the later change in
behaviour it caused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from agentotel._context import canonical_arguments
from agentotel.analysis._steps import type_name
from agentotel.analysis.align import align, arguments, recoveries, who
from agentotel.analysis.calls import CallInput, model_inputs

if TYPE_CHECKING:  # the query layer imports this package: only its types here
    from agentotel.query.trajectory import Step, Trajectory

SAME = "same"
STEP_ADDED = "step_added"
STEP_REMOVED = "step_removed"
TOOL_CHANGED = "tool_changed"
MODEL_CHANGED = "model_changed"
INSTRUCTIONS_CHANGED = "instructions_changed"
TOOLS_OFFERED_CHANGED = "tools_offered_changed"
PARAMS_CHANGED = "params_changed"
HISTORY_CHANGED = "history_changed"
ARGUMENTS_CHANGED = "arguments_changed"
STATUS_CHANGED = "status_changed"
OUTPUT_EMPTY = "output_empty"
OUTPUT_CHANGED = "output_changed"
OUTPUT_SHAPE_CHANGED = "output_shape_changed"

KINDS = (
    STEP_ADDED, STEP_REMOVED, TOOL_CHANGED, MODEL_CHANGED, INSTRUCTIONS_CHANGED, TOOLS_OFFERED_CHANGED,
    PARAMS_CHANGED, HISTORY_CHANGED, ARGUMENTS_CHANGED, STATUS_CHANGED, OUTPUT_EMPTY, OUTPUT_CHANGED,
    OUTPUT_SHAPE_CHANGED,
)

_TOTALS = ("steps", "model_calls", "tool_calls", "retrievals", "input_tokens", "output_tokens", "cost_usd",
           "duration_ms", "errors")
_MAX_CHANGES = 50  # per pair: enough to see what changed without copying two whole documents


@dataclass
class Pair:
    """Two aligned steps (one side None for a step only one run has), with what differs between them."""

    index_a: int | None
    index_b: int | None
    status: str  # same, or the divergence kind
    changes: list[dict[str, Any]] = field(default_factory=list)  # {"path", "a", "b"} per JSON path
    delta: dict[str, Any] = field(default_factory=dict)  # B minus A: input_tokens, output_tokens, cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {"index_a": self.index_a, "index_b": self.index_b, "status": self.status, "changes": self.changes,
                "delta": self.delta}


@dataclass
class RunDiff:
    """The comparison of two runs; `to_dict()` is the `--json` form (ARCHITECTURE.md, "Query")."""

    a: Trajectory
    b: Trajectory
    pairs: list[Pair]
    first_divergence: dict[str, Any] | None
    environment: dict[str, Any]
    totals: dict[str, dict[str, Any]]
    environment_lines: list[str] = field(default_factory=list)  # the environment differences, for people

    @property
    def differences(self) -> list[Pair]:
        return [p for p in self.pairs if p.status != SAME]

    def to_dict(self) -> dict[str, Any]:
        from agentotel.query.trajectory import jsonable

        return {
            "a": jsonable(self.a.run),
            "b": jsonable(self.b.run),
            "first_divergence": self.first_divergence,
            "pairs": [p.to_dict() for p in self.pairs],
            "environment": self.environment,
            "totals": self.totals,
        }


# -- JSON comparison ------------------------------------------------------------------------------------
def _without_call_ids(value: Any) -> Any:
    # Tool-call ids are minted afresh by the provider on every run; they say nothing about behaviour.
    if isinstance(value, dict):
        drop = value.get("type") in ("tool_call", "tool_call_response")
        return {k: _without_call_ids(v) for k, v in value.items() if not (drop and k == "id")}
    if isinstance(value, list):
        return [_without_call_ids(v) for v in value]
    return value


def _output(step: Step) -> Any:
    """What a step produced, for comparison (a model's tool-call ids left out)."""
    return _without_call_ids(step.output) if step.type == "llm" else step.output


def _list(value: Any) -> list:
    """`value` when it is a list, else none: a message's parts as a sender may have mangled them."""
    return value if isinstance(value, list) else []


def _empty(step: Step) -> bool:
    """Whether a step produced nothing: a model answer with no text and no tool call, an empty result."""
    value = step.output
    if step.type == "llm" and isinstance(value, list):
        return not any(
            (p.get("type") != "text" or (isinstance(p.get("content"), str) and p["content"].strip()))
            for m in value if isinstance(m, dict) for p in _list(m.get("parts")) if isinstance(p, dict)
        )
    return value is None or value == "" or value == [] or value == {} or (isinstance(value, str) and not value.strip())


def shape(value: Any) -> Any:
    """A JSON value's structure: objects keep their keys, every leaf becomes its type name."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        shapes = []
        for item in value:
            s = shape(item)
            if s not in shapes:
                shapes.append(s)
        return shapes
    return type_name(value)


def json_changes(a: Any, b: Any, path: str = "$") -> Iterator[dict[str, Any]]:
    """Every JSON path where a and b differ, as {"path", "a", "b"} (a missing side is absent, not null)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if str(key).isidentifier() else f"{path}[{json.dumps(key)}]"
            if key not in a:
                yield {"path": sub, "b": b[key]}
            elif key not in b:
                yield {"path": sub, "a": a[key]}
            else:
                yield from json_changes(a[key], b[key], sub)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a):
                yield {"path": sub, "b": b[i]}
            elif i >= len(b):
                yield {"path": sub, "a": a[i]}
            else:
                yield from json_changes(a[i], b[i], sub)
    elif a != b or type(a) is not type(b):
        yield {"path": path, "a": a, "b": b}


# -- one pair ---------------------------------------------------------------------------------------------
_NO_INPUT = CallInput()


def _given(a: CallInput, b: CallInput) -> list[tuple[str, list[dict[str, Any]]]]:
    """What differs in what two model calls were given, as (kind, changes) in the order a cause is named.

    A side the record says nothing about (content capture off) is not a difference."""
    found: list[tuple[str, list[dict[str, Any]]]] = []
    if a.instructions != b.instructions and a.instructions is not None and b.instructions is not None:
        found.append((INSTRUCTIONS_CHANGED, [{"path": "$.instructions", "a": a.instructions, "b": b.instructions}]))
    if a.tools != b.tools and a.tools is not None and b.tools is not None:
        found.append((TOOLS_OFFERED_CHANGED, list(json_changes(a.tools, b.tools, "$.tools"))))
    if a.params != b.params:
        found.append((PARAMS_CHANGED, list(json_changes(a.params, b.params, "$.params"))))
    if a.dropped is not None and b.dropped is not None:
        if len(a.dropped) != len(b.dropped):
            found.append((HISTORY_CHANGED, [{"path": "$.history.dropped", "a": a.dropped, "b": b.dropped}]))
        elif len(a.elided or ()) != len(b.elided or ()):
            found.append((HISTORY_CHANGED, [{"path": "$.history.elided", "a": a.elided, "b": b.elided}]))
        if a.added != b.added:
            found.append((ARGUMENTS_CHANGED, list(json_changes(a.added, b.added, "$.input.added"))))
    return found


def _compare(a: Step, b: Step, given_a: CallInput, given_b: CallInput) -> tuple[str, list[dict[str, Any]]]:
    """The pair's status (the first difference, causes first) and every change found."""
    kinds: list[str] = []
    changes: list[dict[str, Any]] = []
    for label, left, right in (("type", a.type, b.type), ("tool_name", a.tool_name, b.tool_name),
                               ("model", a.model, b.model)):  # fmt: skip
        if left != right:
            changes.append({"path": f"$.{label}", "a": left, "b": right})
    if a.type != b.type or (a.type not in ("llm", "embedding") and who(a) != who(b)):
        kinds.append(TOOL_CHANGED)
    elif a.type in ("llm", "embedding") and a.model != b.model:
        kinds.append(MODEL_CHANGED)
    if a.type == "llm" and b.type == "llm":
        for kind, found in _given(given_a, given_b):
            kinds.append(kind)
            changes.extend(found)
    elif canonical_arguments(arguments(a)) != canonical_arguments(arguments(b)):
        kinds.append(ARGUMENTS_CHANGED)
        changes.extend(json_changes(a.input, b.input, "$.input"))
    for label, left, right in (("status", a.status, b.status), ("error_type", a.error_type, b.error_type),
                               ("error", a.error, b.error)):  # fmt: skip
        if left != right:
            changes.append({"path": f"$.{label}", "a": left, "b": right})
    if a.status != b.status:
        kinds.append(STATUS_CHANGED)
    elif a.status == "error" and _failure(a) != _failure(b):
        # Both failed, but not in the same way (a 503 in one run, a permission refused in the other): the
        # failure is what the step gave back, so another failure is another output, whatever the output column
        # holds (a framework may hand the model the same generic text for every error).
        kinds.append(OUTPUT_CHANGED)
    out_a, out_b = _output(a), _output(b)
    if out_a != out_b:
        if _empty(a) != _empty(b):
            kinds.append(OUTPUT_EMPTY)
        elif a.type in ("tool", "retrieval") and shape(a.output) != shape(b.output):
            kinds.append(OUTPUT_SHAPE_CHANGED)
        else:
            kinds.append(OUTPUT_CHANGED)
        changes.extend(json_changes(out_a, out_b, "$.output"))
    return (kinds[0] if kinds else SAME), changes[:_MAX_CHANGES]


def _failure(step: Step) -> str:
    """What kind of failure a failed step had: its error type, else its message's first line with the numbers and
    hex ids masked (two runs' identical failures differ in request ids and times, not in these)."""
    if step.error_type:
        return step.error_type
    first = (step.error or "").strip().splitlines()[:1]
    return re.sub(r"[0-9a-f]{6,}|\d+", "#", first[0]) if first else ""


def _delta(a: Step | None, b: Step | None) -> dict[str, Any]:
    """B minus A in tokens and cost (a side that is absent counts nothing); empty when neither says."""
    delta: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens", "cost_usd"):
        va, vb = getattr(a, key, None), getattr(b, key, None)
        if va is None and vb is None:
            continue
        value = (vb or 0) - (va or 0)
        delta[key] = round(value, 10) if isinstance(value, float) else value
    return delta


# -- what to say ---------------------------------------------------------------------------------------------
def _label(step: Step) -> str:
    text = f"{step.type} {who(step)}"
    if step.error:
        text += f" (failed: {_excerpt(step.error, 80)})"
    return text


def _excerpt(text: Any, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text_change(a: str, b: str, width: int = 60) -> str:
    """Where two texts first differ, as `"…a…" → "…b…"` around that place."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    start = max(0, start - 15)

    def cut(text: str) -> str:
        piece = text[start:start + width]
        return ("…" if start else "") + " ".join(piece.split()) + ("…" if start + width < len(text) else "")

    return f"{json.dumps(cut(a), ensure_ascii=False)} → {json.dumps(cut(b), ensure_ascii=False)}"


def _value(value: Any) -> str:
    return _excerpt(json.dumps(value, ensure_ascii=False, default=str), 40)


def _side(change: dict[str, Any], side: str) -> str:
    """One side of a change, `(unset)` where that side lacks the path."""
    return _value(change[side]) if side in change else "(unset)"


def _detail(kind: str, a: Step | None, b: Step | None, changes: list[dict[str, Any]]) -> str:
    elided = next((c for c in changes if c["path"] == "$.history.elided"), None)
    if kind == HISTORY_CHANGED and elided is not None:
        return "; ".join(_elided_text(step, elided.get(side)) for side, step in (("a", a), ("b", b))
                         if step is not None and elided.get(side))
    if kind == STEP_ADDED and b is not None:
        return f"run B has an extra step {b.index}: {_label(b)}"
    if kind == STEP_REMOVED and a is not None:
        return f"run B lacks step {a.index} of run A: {_label(a)}"
    assert a is not None and b is not None
    paths = ", ".join(c["path"] for c in changes[:5]) or "(no captured content)"
    if kind == TOOL_CHANGED:
        return f"step {a.index} called {who(a)} in run A but {who(b)} in run B"
    if kind == MODEL_CHANGED:
        return f"step {a.index} used model {a.model} in run A but {b.model} in run B"
    if kind == INSTRUCTIONS_CHANGED:
        change = next(c for c in changes if c["path"] == "$.instructions")
        return f"the system prompt of model call {a.index} changed: {_text_change(change['a'], change['b'])}"
    if kind == TOOLS_OFFERED_CHANGED:
        return f"the tools offered to model call {a.index} changed: {_tool_changes(changes)}"
    if kind == PARAMS_CHANGED:
        found = [c for c in changes if c["path"].startswith("$.params")]
        listed = ", ".join(f"{c['path'][len('$.params.'):]} {_side(c, 'a')} → {_side(c, 'b')}" for c in found[:4])
        return f"the request parameters of model call {a.index} changed: {listed}"
    if kind == HISTORY_CHANGED:
        change = next(c for c in changes if c["path"] == "$.history.dropped")
        return (f"model call {a.index} was given the earlier turns differently: {len(change['a'])} earlier message part(s) "
                f"dropped or rewritten in run A, {len(change['b'])} in run B")
    if kind == STATUS_CHANGED:
        ended = f"{who(a)} ended {a.status} in run A but {b.status} in run B"
        failed = b.error if b.status == "error" else a.error
        return ended + (f": {_excerpt(failed, 120)}" if failed else "")
    if kind == OUTPUT_EMPTY:
        empty, other = ("B", "A") if _empty(b) else ("A", "B")
        return f"{who(a)} returned nothing in run {empty} (it answered in run {other})"
    if kind == ARGUMENTS_CHANGED:
        if a.type == "llm":
            return f"model call {a.index} was given different new messages: {paths}"
        return f"{who(a)} was called with different arguments: {paths}"
    if kind == OUTPUT_SHAPE_CHANGED:
        return f"{who(a)} returned output of a different shape (schema drift): {paths}"
    return f"{who(a)} returned different output: {paths}"


def _elided_text(step: Step, elided: list[dict[str, Any]]) -> str:
    cut = ", ".join(f"{e['tool']} of step {e['step']} as {_value(e['given'])}" for e in elided[:3])
    return f"model call {step.index} was given {len(elided)} tool result(s) cut short of what the tool returned: {cut}"


def describe_changes(changes: list[dict[str, Any]], limit: int = 3) -> str:
    """A pair's changes in words, causes first: `system prompt: "…" → "…"; temperature 0 → 0.7; …`."""
    said: list[str] = []
    for c in changes:
        path = c["path"]
        if path.startswith("$.tools"):
            if not any(text.startswith("tools offered") for text in said):
                said.append("tools offered: " + _tool_changes(changes))
        elif path == "$.instructions":
            said.append(f"system prompt: {_text_change(c['a'], c['b'], 40)}")
        elif path.startswith("$.params."):
            said.append(f"{path[len('$.params.'):]} {_side(c, 'a')} → {_side(c, 'b')}")
        elif path == "$.history.dropped":
            said.append(f"earlier turns dropped or rewritten: {len(c['a'])} part(s) in A, {len(c['b'])} in B")
        elif path == "$.history.elided":
            said.append(f"tool results cut short: {len(c.get('a') or [])} in A, {len(c.get('b') or [])} in B")
        elif path.startswith("$.input.added"):
            if not any(text.startswith("new messages") for text in said):
                added = [x for x in changes if x["path"].startswith("$.input.added")]
                said.append(f"new messages since the previous model call differ ({len(added)} change(s), first "
                            f"{path[len('$.input.added'):]}: {_side(c, 'a')} → {_side(c, 'b')})")
        elif path == "$.error":
            said.append("; ".join(f"error in {side.upper()}: {_excerpt(c[side], 80)}" for side in ("a", "b") if c.get(side)))
        elif "a" not in c:
            said.append(f"{path} added")
        elif "b" not in c:
            said.append(f"{path} removed")
        else:
            said.append(f"{path}: {_value(c['a'])} → {_value(c['b'])}")
    said = [text for text in said if text]
    return "; ".join(said[:limit]) + (f"; +{len(said) - limit} more" if len(said) > limit else "")


def _tool_changes(changes: list[dict[str, Any]]) -> str:
    said = []
    for c in changes:
        if not c["path"].startswith("$.tools"):
            continue
        rest = c["path"][len("$.tools."):]
        name, _, part = rest.partition(".")
        if not part:
            said.append(f"{name} {'added' if 'a' not in c else 'removed'}")
        elif part == "description":
            said.append(f"{name} description {_text_change(c.get('a') or '', c.get('b') or '', 40)}")
        else:
            said.append(f"{name} {part.split('.')[0]} changed")
    unique = list(dict.fromkeys(said))
    return "; ".join(unique[:4]) + (f"; +{len(unique) - 4} more" if len(unique) > 4 else "")


# -- environment and totals ---------------------------------------------------------------------------
def run_snapshot(trajectory: Trajectory) -> dict[str, Any] | None:
    """The run's environment snapshot plus the models its steps used (models are recorded per call)."""
    from agentotel.environment import snapshot_from_attributes

    snapshot = snapshot_from_attributes(trajectory.environment)
    if snapshot is None:
        return None
    return {**snapshot, "models": _models(trajectory)}


def compare_environments(a: Trajectory, b: Trajectory) -> Any:
    """agentotel.environment's comparison of two runs' snapshots (models included), or None when either
    has none. The hashes are the ones the runs recorded (`runs` and `diff` show them): the models added
    here are not part of what was hashed at record time."""
    import dataclasses

    from agentotel.environment import diff as env_diff

    snap_a, snap_b = run_snapshot(a), run_snapshot(b)
    if snap_a is None or snap_b is None:
        return None
    result = env_diff(snap_a, snap_b)
    return dataclasses.replace(result, hash_a=a.run.get("env_hash") or result.hash_a,
                               hash_b=b.run.get("env_hash") or result.hash_b)


def _models(trajectory: Trajectory) -> list[str]:
    return sorted({step.model for step in trajectory.steps if step.model})


def _environment(a: Trajectory, b: Trajectory) -> tuple[dict[str, Any], list[str]]:
    """The environment comparison (agentotel.environment's, when both runs have a snapshot) and its lines."""
    hash_a, hash_b = a.run.get("env_hash"), b.run.get("env_hash")
    if hash_a and hash_a == hash_b and _models(a) == _models(b):
        # The same environment and models: no need to read and compare the snapshots.
        return {"same": True, "hash_a": hash_a, "hash_b": hash_b, "changes": []}, []
    try:
        result = compare_environments(a, b)
        if result is not None:
            return result.to_dict(), ([] if result.same else list(result.lines()))
    except (ImportError, NotImplementedError):
        pass  # the environment comparison is not available in this build: compare the attributes
    keys = sorted(set(a.environment) | set(b.environment))
    changes = [
        {"key": k, "a": a.environment.get(k), "b": b.environment.get(k)}
        for k in keys
        if a.environment.get(k) != b.environment.get(k)
    ]
    return {"same": not changes, "changes": changes}, [f"{c['key']}: {c['a']} → {c['b']}" for c in changes]


def _totals(a: Trajectory, b: Trajectory) -> dict[str, dict[str, Any]]:
    def value(t: Trajectory, key: str) -> Any:
        if key == "steps":
            return len(t.steps)
        found = t.run.get(key)
        return found if found is not None else (0 if key != "cost_usd" else None)

    return {key: {"a": value(a, key), "b": value(b, key)} for key in _TOTALS}


def _divergence(aligned: list[tuple[Step | None, Step | None]], position: int, pair: Pair, aside_b: set[int]) -> dict[str, Any]:
    left, right = aligned[position]
    divergence = {
        "index_a": pair.index_a,
        "index_b": pair.index_b if pair.index_b is not None else _where_b_went(aligned, position, aside_b),
        "kind": pair.status,
        "detail": _detail(pair.status, left, right, pair.changes),
    }
    if pair.status == STEP_REMOVED and divergence["index_b"] is not None and all(r is None for _l, r in aligned[position:]):
        divergence["detail"] = f"run B ended after its step {divergence['index_b']}; " + divergence["detail"].replace("run B lacks", "it lacks")
    return divergence


def _earliest_of_its_calls(first: dict[str, Any] | None, aligned: list[tuple[Step | None, Step | None]], pairs: list[Pair],
                           aside_b: set[int]) -> dict[str, Any] | None:
    """Tool calls one model call asked for together are aligned in argument order, not as they ran: when the
    first divergence is one of them, it is the one of them that differs and ran first in B."""
    if first is None or first.get("index_b") is None:
        return first
    at = next((n for n, (_l, r) in enumerate(aligned) if r is not None and r.index == first["index_b"]), None)
    right = aligned[at][1] if at is not None else None
    if right is None or right.type != "tool" or right.requested_by is None:
        return first
    siblings = [n for n, (_l, r) in enumerate(aligned) if r is not None and r.type == "tool" and r.requested_by == right.requested_by
                and pairs[n].status != SAME and r.index < right.index and n not in (at,)]
    if not siblings:
        return first
    chosen = min(siblings, key=lambda n: aligned[n][1].index)  # type: ignore[union-attr]
    return _divergence(aligned, chosen, pairs[chosen], aside_b)


def diff_trajectories(a: Trajectory, b: Trajectory) -> RunDiff:
    """Align two trajectories and report the first divergence, every pair, environment and totals."""
    aside_a, aside_b = recoveries(a.steps, b.steps), recoveries(b.steps, a.steps)
    aligned = align(a.steps, b.steps, aside_a, aside_b)
    has_llm = any(left is not None and right is not None and left.type == right.type == "llm" for left, right in aligned)
    inputs_a = model_inputs(a, aside_a) if has_llm else {}
    inputs_b = model_inputs(b, aside_b) if has_llm else {}
    pairs: list[Pair] = []
    first: dict[str, Any] | None = None
    retried: dict[str, Any] | None = None  # the first difference that is only a failed attempt made again
    held: list[tuple[dict[str, Any], Step, Step]] = []  # agent steps whose outcome changed: their steps say why
    # Tool steps with a model or an agent inside them (an agent called as a tool, a tool that asks a model) are held
    # alike: their output is what the model inside made. (A tool reading through a retriever of its own stays the
    # unit: its failure on what the retriever gave is the tool's.)
    holding_a = {s.parent_index for s in a.steps if s.parent_index is not None and s.type in ("llm", "agent")}
    holding_b = {s.parent_index for s in b.steps if s.parent_index is not None and s.type in ("llm", "agent")}
    for position, (left, right) in enumerate(aligned):
        if left is None:
            assert right is not None
            pair = Pair(None, right.index, STEP_ADDED, _error_changes(None, right), _delta(None, right))
            _set_aside_given(pair, right, "b", aside_b, inputs_b, inputs_a)
        elif right is None:
            pair = Pair(left.index, None, STEP_REMOVED, _error_changes(left, None), _delta(left, None))
            _set_aside_given(pair, left, "a", aside_a, inputs_a, inputs_b)
        else:
            status, changes = _compare(left, right, inputs_a.get(left.index, _NO_INPUT), inputs_b.get(right.index, _NO_INPUT))
            pair = Pair(left.index, right.index, status, changes if status != SAME else [], _delta(left, right))
        pairs.append(pair)
        if first is not None or pair.status == SAME:
            continue
        divergence = _divergence(aligned, position, pair, aside_b)
        # A 429 or a timeout and its retry in one run is not where the runs went different ways: report it
        # only when nothing else differs.
        if pair.status in (STEP_ADDED, STEP_REMOVED) and (pair.index_a in aside_a or pair.index_b in aside_b):
            retried = retried or divergence
        elif pair.status in _OUTCOMES and left is not None and right is not None and left.type == right.type and (
                left.type == "agent" or (left.type == "tool" and left.index in holding_a and right.index in holding_b)):
            held.append((divergence, left, right))
        else:
            # A difference outside an agent that failed with nothing inside it different: the agent's failure
            # came first. (An agent whose output differs with every step inside it the same differs by what its
            # framework writes there, message ids and timestamps: not behaviour.)
            first = next((d for d, left_agent, right_agent in held if d["kind"] == STATUS_CHANGED
                          and not (_inside(left, left_agent, a.steps) or _inside(right, right_agent, b.steps))), divergence)
    failed_agent = next((d for d, _l, _r in held if d["kind"] == STATUS_CHANGED), None)
    first = first or failed_agent or (held[0][0] if held else None) or retried
    first = _earliest_of_its_calls(first, aligned, pairs, aside_b)
    environment, lines = _environment(a, b)
    return RunDiff(a=a, b=b, pairs=pairs, first_divergence=first, environment=environment,
                   totals=_totals(a, b), environment_lines=lines)


# What an agent step (a framework's invoke_agent) changes only because a step inside it did: its status (a
# failure inside), its output (the answer given inside). The first difference inside it is the cause.
_OUTCOMES = (STATUS_CHANGED, OUTPUT_CHANGED, OUTPUT_SHAPE_CHANGED, OUTPUT_EMPTY)


def _inside(step: Step | None, container: Step | None, steps: list[Step]) -> bool:
    """Whether a step is one of a container step's descendants (its parent chain reaches it)."""
    if step is None or container is None:
        return False
    parents = {s.index: s.parent_index for s in steps}
    at = step.parent_index
    while at is not None:
        if at == container.index:
            return True
        at = parents.get(at)
    return False


def _error_changes(a: Step | None, b: Step | None) -> list[dict[str, Any]]:
    """A one-sided step's error, as a change (so the --json form shows why a failed attempt is extra)."""
    if a is not None and a.error:
        return [{"path": "$.error", "a": a.error}]
    if b is not None and b.error:
        return [{"path": "$.error", "b": b.error}]
    return []


def _set_aside_given(pair: Pair, step: Step, side: str, aside: set[int], inputs: dict[int, CallInput],
                     other: dict[int, CallInput]) -> None:
    """A model call set aside as asking again is still a cause when it was given tool results cut short and
    the other run's calls never were: the pair becomes `history_changed`, a divergence never passed over."""
    elided = inputs[step.index].elided if step.index in aside and step.index in inputs else None
    if elided and not any(call.elided for call in other.values()):
        pair.status = HISTORY_CHANGED
        pair.changes = [{"path": "$.history.elided", side: elided}, *pair.changes]


def _where_b_went(aligned: list[tuple[Step | None, Step | None]], position: int, aside: set[int]) -> int | None:
    """For a step B lacks: the step of B where it went another way. When B goes on, its next model call
    (the first given the conversation without that step; else its next step); when B ended, its last
    step; None only when B has no steps. Attempts B made again are passed over."""
    after = [right for _left, right in aligned[position + 1:] if right is not None and right.index not in aside]
    if after:
        return next((s.index for s in after if s.type == "llm"), after[0].index)
    before = [right.index for _left, right in aligned[:position] if right is not None]
    if before:
        return max(before)  # parallel calls pair in canonical order: the latest step, not the last pair's
    for _left, right in aligned[position + 1:]:
        if right is not None:
            return right.index
    return None
