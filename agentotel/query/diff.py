"""Where two runs diverged: their trajectories aligned step by step, not position by position.

Steps are aligned on their signature — type, tool or model, and canonical arguments — with a sequence
alignment (difflib's SequenceMatcher, junk heuristics off), so one inserted step leaves every later
step paired with its counterpart. Model calls are aligned without their input messages: those repeat
the whole history, so one changed tool result would make every later model call look different.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Iterator, Sequence

from agentotel._context import canonical_arguments
from agentotel.query.trajectory import Step, Trajectory, jsonable

SAME = "same"
STEP_ADDED = "step_added"
STEP_REMOVED = "step_removed"
TOOL_CHANGED = "tool_changed"
MODEL_CHANGED = "model_changed"
ARGUMENTS_CHANGED = "arguments_changed"
OUTPUT_CHANGED = "output_changed"
OUTPUT_SHAPE_CHANGED = "output_shape_changed"
STATUS_CHANGED = "status_changed"

KINDS = (
    STEP_ADDED, STEP_REMOVED, TOOL_CHANGED, MODEL_CHANGED, ARGUMENTS_CHANGED,
    OUTPUT_CHANGED, OUTPUT_SHAPE_CHANGED, STATUS_CHANGED,
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

    def to_dict(self) -> dict[str, Any]:
        return {"index_a": self.index_a, "index_b": self.index_b, "status": self.status, "changes": self.changes}


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
        return {
            "a": jsonable(self.a.run),
            "b": jsonable(self.b.run),
            "first_divergence": self.first_divergence,
            "pairs": [p.to_dict() for p in self.pairs],
            "environment": self.environment,
            "totals": self.totals,
        }


# -- signatures and JSON comparison -------------------------------------------------------------------
def _who(step: Step) -> str:
    if step.type == "llm" or step.type == "embedding":
        return step.model or step.name
    return step.tool_name or step.name


def _arguments(step: Step) -> Any:
    """What a step was asked to do, for comparison: tool arguments, a retrieval query; nothing for models."""
    if step.type in ("llm", "embedding", "agent"):
        return None
    return step.input


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


def _signature(step: Step) -> tuple[str, str, str]:
    return step.type, _who(step), canonical_arguments(_arguments(step))


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
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


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


def _changes(a: Step, b: Step) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for label, left, right in (
        ("type", a.type, b.type),
        ("tool_name", a.tool_name, b.tool_name),
        ("model", a.model, b.model),
        ("status", a.status, b.status),
        ("error_type", a.error_type, b.error_type),
    ):
        if left != right:
            changes.append({"path": f"$.{label}", "a": left, "b": right})
    if _arguments(a) is not None or _arguments(b) is not None:
        changes.extend(json_changes(a.input, b.input, "$.input"))
    changes.extend(json_changes(_output(a), _output(b), "$.output"))
    return changes[:_MAX_CHANGES]


def _pair_status(a: Step, b: Step) -> str:
    if a.type != b.type or (a.type not in ("llm", "embedding") and _who(a) != _who(b)):
        return TOOL_CHANGED
    if a.type in ("llm", "embedding") and a.model != b.model:
        return MODEL_CHANGED
    if canonical_arguments(_arguments(a)) != canonical_arguments(_arguments(b)):
        return ARGUMENTS_CHANGED
    if a.status != b.status:
        return STATUS_CHANGED
    if _output(a) != _output(b):
        if a.type in ("tool", "retrieval") and shape(a.output) != shape(b.output):
            return OUTPUT_SHAPE_CHANGED
        return OUTPUT_CHANGED
    return SAME


# -- alignment --------------------------------------------------------------------------------------
def _align(a: Sequence[Step], b: Sequence[Step]) -> list[tuple[Step | None, Step | None]]:
    """Aligned (a, b) step pairs in order; a step only one side has is paired with None."""
    pairs: list[tuple[Step | None, Step | None]] = []
    matcher = SequenceMatcher(None, [_signature(s) for s in a], [_signature(s) for s in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pairs.extend(zip(a[i1:i2], b[j1:j2]))
        else:
            pairs.extend(_align_block(a[i1:i2], b[j1:j2]))
    return pairs


def _align_block(a: Sequence[Step], b: Sequence[Step]) -> list[tuple[Step | None, Step | None]]:
    """Inside a differing block, pair steps of the same tool or model (changed arguments), then by position."""
    pairs: list[tuple[Step | None, Step | None]] = []
    matcher = SequenceMatcher(None, [(s.type, _who(s)) for s in a], [(s.type, _who(s)) for s in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = list(a[i1:i2]), list(b[j1:j2])
        if op == "equal" or op == "replace":
            n = min(len(left), len(right))
            pairs.extend(zip(left[:n], right[:n]))
            left, right = left[n:], right[n:]
        pairs.extend((s, None) for s in left)
        pairs.extend((None, s) for s in right)
    return pairs


def _detail(kind: str, a: Step | None, b: Step | None, changes: list[dict[str, Any]]) -> str:
    if kind == STEP_ADDED and b is not None:
        return f"run B has an extra step {b.index}: {b.type} {_who(b)}"
    if kind == STEP_REMOVED and a is not None:
        return f"run B lacks step {a.index} of run A: {a.type} {_who(a)}"
    assert a is not None and b is not None
    if kind == TOOL_CHANGED:
        return f"step {a.index} called {_who(a)} in run A but {_who(b)} in run B"
    if kind == MODEL_CHANGED:
        return f"step {a.index} used model {a.model} in run A but {b.model} in run B"
    if kind == STATUS_CHANGED:
        return f"{_who(a)} ended {a.status} in run A but {b.status} in run B"
    paths = ", ".join(c["path"] for c in changes[:5]) or "(no captured content)"
    if kind == ARGUMENTS_CHANGED:
        return f"{_who(a)} was called with different arguments: {paths}"
    if kind == OUTPUT_SHAPE_CHANGED:
        return f"{_who(a)} returned output of a different shape (schema drift): {paths}"
    return f"{_who(a)} returned different output: {paths}"


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


def diff_trajectories(a: Trajectory, b: Trajectory) -> RunDiff:
    """Align two trajectories and report the first divergence, every pair, environment and totals."""
    pairs: list[Pair] = []
    first: dict[str, Any] | None = None
    for left, right in _align(a.steps, b.steps):
        if left is None:
            assert right is not None
            pair, changes = Pair(None, right.index, STEP_ADDED), []
        elif right is None:
            pair, changes = Pair(left.index, None, STEP_REMOVED), []
        else:
            status = _pair_status(left, right)
            changes = _changes(left, right) if status != SAME else []
            pair = Pair(left.index, right.index, status, changes)
        pairs.append(pair)
        if first is None and pair.status != SAME:
            first = {
                "index_a": pair.index_a,
                "index_b": pair.index_b,
                "kind": pair.status,
                "detail": _detail(pair.status, left, right, changes),
            }
    environment, lines = _environment(a, b)
    return RunDiff(a=a, b=b, pairs=pairs, first_divergence=first, environment=environment,
                   totals=_totals(a, b), environment_lines=lines)
