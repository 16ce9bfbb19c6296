"""Reading trajectory steps: JSON payloads, the messages a model was given and gave, the tool calls it asked for.

Detectors, case cutting and checking all look at steps the same way; this module is that one way.
A step is a plain mapping with the fields ARCHITECTURE.md gives a trajectory step (`index`, `type`,
`name`, `status`, `tool_name`, `input`, `output`, `error`, ...); `input`/`output` may be JSON text or parsed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from collections.abc import Iterable, Mapping
from typing import Any

from agentotel import _json
from agentotel._context import canonical_arguments

LLM, TOOL, RETRIEVAL, AGENT = "llm", "tool", "retrieval", "agent"


parse_json = _json.parse  # a payload as Python data: JSON text parsed, anything else unchanged


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


def agent_of(step: Mapping[str, Any], by_index: Mapping[int, Mapping[str, Any]]) -> str | None:
    """The name of the agent step a step is in (the nearest enclosing one), None outside any: a handed-off
    sub-agent's model calls are that agent's, not the one that handed over (history_spans.sql, same rule)."""
    seen: set[int] = set()
    at = step.get("parent_index")
    while at is not None and at not in seen:
        seen.add(at)
        parent = by_index.get(at)
        if parent is None:
            return None
        if parent.get("type") == AGENT:
            return parent.get("name")
        at = parent.get("parent_index")
    return None


def call_key(name: str, arguments: Any) -> str:
    """The key a tool call is known by: its name and canonical arguments."""
    return f"{name} {canonical_arguments(arguments)}"


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


def parts(message: Any) -> list[Mapping[str, Any]]:
    """A GenAI message's parts (text, tool_call, tool_call_response, ...)."""
    if not isinstance(message, Mapping):
        return []
    found = message.get("parts")
    if isinstance(found, list):
        return [_response_named(p) for p in found if isinstance(p, Mapping)]
    return []


def _response_named(part: Mapping[str, Any]) -> Mapping[str, Any]:
    # An earlier version of the GenAI conventions (pydantic-ai's own instrumentation writes it) names a tool
    # call response's value `result`; the current one `response`.
    if part.get("type") == "tool_call_response" and "response" not in part and "result" in part:
        return {**part, "response": part["result"]}
    return part


def _messages(value: Any) -> list[Mapping[str, Any]]:
    value = parse_json(value)
    if isinstance(value, Mapping):
        value = [value]
    return [m for m in value if isinstance(m, Mapping)] if isinstance(value, list) else []


def input_messages(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The messages an llm step sent to the model (GenAI form), or [] when not captured."""
    return _messages(step.get("input"))


def output_messages(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _messages(step.get("output"))


def message_text(message: Mapping[str, Any]) -> str:
    """Everything a message says as one text: text parts, tool calls and tool responses (compact JSON)."""
    pieces = []
    for part in parts(message):
        kind = part.get("type")
        if kind == "tool_call":
            pieces.append(f"{part.get('name')} {_compact(part.get('arguments'))}")
        elif kind == "tool_call_response":
            pieces.append(_compact(part.get("response")))
        elif part.get("content") is not None:
            pieces.append(_compact(part.get("content")))
    if not pieces and message.get("content") is not None:
        pieces.append(_compact(message.get("content")))
    return "\n".join(pieces)


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def requested_calls(step: Mapping[str, Any]) -> list[RequestedCall]:
    """The tool calls an llm step's response asked for, in order."""
    calls = []
    for message in output_messages(step):
        for part in parts(message):
            if part.get("type") != "tool_call":
                continue
            raw = part.get("arguments")
            valid = True
            if isinstance(raw, str):
                try:
                    raw = json.loads(raw) if raw.strip() else {}
                except (ValueError, RecursionError):  # nested deeper than Python recurses: not valid arguments
                    valid = False
            calls.append(RequestedCall(part.get("id"), str(part.get("name") or ""), raw, valid))
    return calls


def answered_ids(step: Mapping[str, Any]) -> set[str]:
    """The tool call ids whose results an llm step's input carries back to the model."""
    return {
        str(part.get("id"))
        for message in input_messages(step)
        for part in parts(message)
        if part.get("type") == "tool_call_response" and part.get("id") is not None
    }


def final_text(step: Mapping[str, Any]) -> str | None:
    """The answer text of an llm step that asked for no tool call (a final answer), else None."""
    if step.get("type") != LLM or is_error(step) or requested_calls(step):
        return None
    texts = [
        str(part.get("content"))
        for message in output_messages(step)
        for part in parts(message)
        if part.get("type") == "text" and part.get("content")
    ]
    return "".join(texts) if texts else None


def text_of(value: Any) -> str:
    """Any payload as searchable text: strings as they are, data as compact JSON (parsed first)."""
    value = tool_payload(value)
    if value is None:
        return ""
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "role" in m for m in value):
        return "\n".join(message_text(m) for m in value)
    return _compact(value)


# ---- JSON shapes ----------------------------------------------------------------------------------------


# The types json.loads returns, by exact type: one dict lookup where a chain of isinstance checks against
# typing ABCs (Mapping) cost most of the time of learning a tool's output schema from its history.
_JSON_TYPE_NAMES = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string",
                    dict: "object", list: "array", tuple: "array"}


def type_name(value: Any) -> str:
    """The JSON type of a value; JSON has one number type, so 10 and 10.5 are the same shape."""
    name = _JSON_TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def observe(value: Any) -> dict[str, set[str]]:
    """Every JSON path of a value (`$.orders[].id`) with the types seen there; array items are merged.

    An empty array adds no item paths, so "no items this time" never looks like a field gone.
    """
    paths: dict[str, set[str]] = {}

    def walk(node: Any, path: str) -> None:
        paths.setdefault(path, set()).add(type_name(node))
        if isinstance(node, Mapping):
            for key, child in node.items():
                walk(child, f"{path}.{key}")
        elif isinstance(node, (list, tuple)):
            for child in node:
                walk(child, f"{path}[]")

    walk(value, "$")
    return paths


def parent_path(path: str) -> str:
    if path.endswith("[]"):
        return path[:-2]
    return path.rsplit(".", 1)[0] if "." in path else path


def outermost(paths: Iterable[str]) -> list[str]:
    """The paths none of whose ancestors is in the set (a removed object, not each of its fields)."""
    chosen = set(paths)

    def has_ancestor(path: str) -> bool:
        parent = parent_path(path)
        while parent != path:
            if parent in chosen:
                return True
            path, parent = parent, parent_path(parent)
        return False

    return sorted(p for p in chosen if not has_ancestor(p))
