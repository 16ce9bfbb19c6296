"""Reading trajectory steps: JSON payloads, the tool calls a model step asked for, and JSON shapes.

Detectors, case cutting and checking all look at steps the same way; this module is that one way.
A step is a plain mapping with the fields ARCHITECTURE.md gives a trajectory step (`index`, `type`,
`name`, `status`, `tool_name`, `input`, `output`, ...); `input`/`output` may be JSON text or parsed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from agentotel import _json
from agentotel._context import canonical_arguments

LLM, TOOL, RETRIEVAL, AGENT = "llm", "tool", "retrieval", "agent"


parse_json = _json.parse  # a payload as Python data: JSON text parsed, anything else unchanged


def recorded(step: Mapping[str, Any], column: str) -> Any:
    """A step's payload exactly as recorded (its raw JSON parsed once), for serving it back on replay."""
    raw = step.get(f"raw_{column}")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return parse_json(step.get(column))


def tool_payload(value: Any) -> Any:
    """A tool's result as data: a tool that returns JSON *text* is read as the JSON it holds."""
    value = parse_json(value)
    if isinstance(value, str):
        inner = parse_json(value)
        if isinstance(inner, (dict, list)):
            return inner
    return value


def is_error(step: Mapping[str, Any]) -> bool:
    return str(step.get("status") or "").lower() == "error"


def tool_name(step: Mapping[str, Any]) -> str | None:
    return step.get("tool_name") or (step.get("name") or "").removeprefix("execute_tool ").strip() or None


def call_key(name: str, arguments: Any) -> str:
    """The key a tool call is known by: its name and canonical arguments."""
    return f"{name} {canonical_arguments(arguments)}"


def retrieval_call(data_source: str, query: Any) -> tuple[str, dict[str, Any]]:
    """A retrieval as replay keys it, a call of its own (name, arguments): the data source and the query.

    The query text is what a retrieval span records of its input, so it is all a recording can match on.
    """
    return f"{RETRIEVAL} {data_source}", {"query": query}


def sha(text: str, length: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


# ---- model messages (the GenAI input/output-messages shape) ------------------------------------------


@dataclass(frozen=True)
class RequestedCall:
    """A tool call a model step asked for."""

    id: str | None
    name: str
    arguments: Any  # parsed dict, or the raw text when the model sent invalid JSON
    valid_json: bool


def _parts(message: Any) -> list[Mapping[str, Any]]:
    if not isinstance(message, Mapping):
        return []
    parts = message.get("parts")
    if isinstance(parts, list):
        return [p for p in parts if isinstance(p, Mapping)]
    return []


def output_messages(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out = parse_json(step.get("output"))
    if isinstance(out, Mapping):
        out = [out]
    return [m for m in out if isinstance(m, Mapping)] if isinstance(out, list) else []


def requested_calls(step: Mapping[str, Any]) -> list[RequestedCall]:
    """The tool calls an llm step's response asked for, in order."""
    calls = []
    for message in output_messages(step):
        for part in _parts(message):
            if part.get("type") != "tool_call":
                continue
            raw = part.get("arguments")
            valid = True
            if isinstance(raw, str):
                try:
                    raw = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    valid = False
            calls.append(RequestedCall(part.get("id"), str(part.get("name") or ""), raw, valid))
    return calls


def final_text(step: Mapping[str, Any]) -> str | None:
    """The answer text of an llm step that asked for no tool call (a final answer), else None."""
    if step.get("type") != LLM or is_error(step) or requested_calls(step):
        return None
    texts = [
        str(part.get("content"))
        for message in output_messages(step)
        for part in _parts(message)
        if part.get("type") == "text" and part.get("content")
    ]
    return "".join(texts) if texts else None


# ---- JSON shapes --------------------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"  # JSON has one number type; 10 and 10.5 are the same shape
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def shape(value: Any) -> dict[str, str]:
    """The structure of a JSON value: every path (`$.orders[].id`) with its type; arrays merge their items.

    An empty array maps to `array(empty)` so that "no items this time" is not mistaken for drift.
    """
    paths: dict[str, str] = {}

    def walk(node: Any, path: str) -> None:
        kind = _type_name(node)
        if kind == "array" and not node:
            kind = "array(empty)"
        previous = paths.get(path)
        if previous is not None and previous != kind:
            if {previous, kind} == {"array", "array(empty)"}:
                kind = "array"
            else:
                kind = "|".join(sorted(set(previous.split("|")) | {kind}))
        paths[path] = kind
        if isinstance(node, Mapping):
            for key, child in node.items():
                walk(child, f"{path}.{key}")
        elif isinstance(node, (list, tuple)):
            for child in node:
                walk(child, f"{path}[]")

    walk(value, "$")
    return paths


@dataclass(frozen=True)
class ShapeChange:
    added: dict[str, str]
    removed: dict[str, str]
    changed: dict[str, tuple[str, str]]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "changed": {path: {"before": a, "after": b} for path, a, b in ((p, *v) for p, v in self.changed.items())},
        }

    def summary(self) -> str:
        """One line: the outermost paths removed, added and changed (children of those left out)."""
        bits = []
        if self.removed:
            bits.append("removed " + ", ".join(_outermost(self.removed)))
        if self.added:
            bits.append("added " + ", ".join(_outermost(self.added)))
        if self.changed:
            bits.append("changed " + ", ".join(f"{p} {a}->{b}" for p, (a, b) in sorted(self.changed.items())))
        return "; ".join(bits)


def _parent(path: str) -> str:
    if path.endswith("[]"):
        return path[:-2]
    return path.rsplit(".", 1)[0] if "." in path else path


def _outermost(paths: Mapping[str, str]) -> list[str]:
    return sorted(p for p in paths if _parent(p) == p or _parent(p) not in paths)


def _under_empty_array(path: str, other: Mapping[str, str]) -> bool:
    """True when the path sits under an array that is empty on the other side (nothing to compare)."""
    cut = path.rfind("[]")
    while cut != -1:
        if other.get(path[:cut]) == "array(empty)":
            return True
        cut = path.rfind("[]", 0, cut)
    return False


def compare_shapes(before: Mapping[str, str], after: Mapping[str, str]) -> ShapeChange:
    """How a JSON structure changed between two shapes (paths added, removed, or of another type)."""
    added = {p: t for p, t in after.items() if p not in before and not _under_empty_array(p, before)}
    removed = {p: t for p, t in before.items() if p not in after and not _under_empty_array(p, after)}
    changed = {}
    for path in before.keys() & after.keys():
        a, b = before[path], after[path]
        if a != b and {a, b} != {"array", "array(empty)"}:
            changed[path] = (a, b)
    return ShapeChange(added, removed, changed)
