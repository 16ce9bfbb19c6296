"""What each model call of a run was given: instructions, tools offered, request parameters, history.

A model call's input repeats the conversation so far. Split against the previous model call of the same
conversation (its input and output), it is the history carried over, the messages added since, and the
earlier messages that were dropped or rewritten. Instructions come from `gen_ai.system_instructions`,
else from the leading system/developer messages (chat completions keep the system prompt there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from agentotel import _json, semconv

if TYPE_CHECKING:  # the query layer imports this package: only its types here
    from agentotel.query.trajectory import Step, Trajectory

_REQUEST_PREFIX = semconv.GEN_AI_REQUEST_MODEL.rpartition(".")[0] + "."  # gen_ai.request.
# Request parameters compared by a diff, by a short name: every gen_ai.request.* but the model (a model
# change is its own kind), plus these.
_EXTRA_PARAMETERS = {semconv.GEN_AI_OUTPUT_TYPE: "output_type", semconv.AGENTOTEL_REQUEST_TOOL_CHOICE: "tool_choice"}
_SYSTEM_ROLES = ("system", "developer")


@dataclass
class CallInput:
    """What one model call was given. None where the record does not say (content capture off)."""

    instructions: str | None = None
    tools: dict[str, dict[str, Any]] | None = None  # name -> {"type", "description", "parameters"}
    params: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, tool_choice, ...
    added: list[Any] | None = None  # messages ({"role", **part} items) added since the previous call
    carried: int | None = None  # items of the previous call's conversation carried over unchanged
    dropped: list[Any] | None = None  # items of the previous call's conversation it was not given again


def model_inputs(trajectory: Trajectory) -> dict[int, CallInput]:
    """Every model step's CallInput, by step index (reads the model calls' attributes once)."""
    attributes = trajectory.model_attributes
    out: dict[int, CallInput] = {}
    previous: dict[int | None, Step] = {}  # the latest answered model call, per conversation (parent step)
    for step in trajectory.steps:
        if step.type != "llm":
            continue
        found = attributes.get(step.index, {})
        system, messages = _split(step.input)
        call = CallInput(
            instructions=_instructions(found) or _text(system),
            tools=_tools(found.get(semconv.GEN_AI_TOOL_DEFINITIONS)),
            params=_params(found),
        )
        if messages is not None:
            before = previous.get(step.parent_index)
            context: list[Any] = []
            if before is not None:
                context = _items(_split(before.input)[1] or []) + _items(before.output if isinstance(before.output, list) else [])
            items = _items(messages)
            carried = _common_prefix(context, items)
            added = items[carried:]
            # Past the carried prefix, an earlier item the call was given again (moved, say) is not lost.
            dropped = [item for item in context[carried:] if item not in added]
            call.carried, call.dropped, call.added = carried, dropped, added
        out[step.index] = call
        if step.status == "ok" and step.output is not None:  # a failed attempt is not what a retry continues
            previous[step.parent_index] = step
    return out


def _split(value: Any) -> tuple[list[Any], list[Any] | None]:
    """(leading system/developer messages, the rest) of a chat input; the rest is None when not messages."""
    if not isinstance(value, list) or not all(isinstance(m, Mapping) for m in value):
        return [], None
    n = 0
    while n < len(value) and value[n].get("role") in _SYSTEM_ROLES:
        n += 1
    return value[:n], value[n:]


def _text(messages: list[Any]) -> str | None:
    texts = [p.get("content") for m in messages for p in (m.get("parts") or ())
             if isinstance(p, Mapping) and isinstance(p.get("content"), str)]  # fmt: skip
    if not texts and messages:  # a message in another shape: {"role", "content"}
        texts = [m.get("content") for m in messages if isinstance(m.get("content"), str)]
    return "\n".join(texts) if texts else None


def _instructions(attributes: Mapping[str, str]) -> str | None:
    value = _json.parse(attributes.get(semconv.GEN_AI_SYSTEM_INSTRUCTIONS))
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        return _text([{"parts": value}]) or None
    return None


def _tools(raw: str | None) -> dict[str, dict[str, Any]] | None:
    value = _json.parse(raw)
    if not isinstance(value, list):
        return None
    tools = {}
    for definition in value:
        if isinstance(definition, Mapping) and definition.get("name"):
            tools[str(definition["name"])] = {k: v for k, v in definition.items() if k != "name"}
    return tools


def _params(attributes: Mapping[str, str]) -> dict[str, Any]:
    params = {}
    for key, value in attributes.items():
        if key.startswith(_REQUEST_PREFIX) and key != semconv.GEN_AI_REQUEST_MODEL:
            params[key[len(_REQUEST_PREFIX):]] = _json.parse(value)
        elif key in _EXTRA_PARAMETERS:
            params[_EXTRA_PARAMETERS[key]] = _json.parse(value)
    return dict(sorted(params.items()))


def _items(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages as one item per part ({"role", **part}), tool-call ids and finish reasons left out: an SDK
    re-sends an answer as one message or several (the Responses API: one item per call), with ids
    minted afresh by each run."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            out.append({"role": "", "content": message})
            continue
        role = message.get("role") or ""
        parts = message.get("parts")
        if not isinstance(parts, list):
            out.append({"role": role, "content": message.get("content")})
            continue
        for part in parts:
            if not isinstance(part, Mapping):
                out.append({"role": role, "content": part})
                continue
            drop_id = part.get("type") in ("tool_call", "tool_call_response")
            out.append({"role": role, **{k: v for k, v in part.items() if not (drop_id and k == "id")}})
    return out


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
