"""What each model call of a run was given: instructions, tools offered, request parameters, history.

A model call's input repeats the conversation so far. Split against the previous model call of the same
conversation (its input and output), it is the history carried over, the messages added since, and the
earlier messages that were dropped or rewritten. Instructions come from `gen_ai.system_instructions`,
else from the leading system/developer messages (chat completions keep the system prompt there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Collection, Mapping

from agentotel import _json, semconv
from agentotel._context import canonical_arguments

if TYPE_CHECKING:  # the query layer imports this package: only its types here
    from agentotel.query.trajectory import Step, Trajectory

_REQUEST_PREFIX = semconv.GEN_AI_REQUEST_MODEL.rpartition(".")[0] + "."  # gen_ai.request.
# Request parameters compared by a diff, by a short name: every gen_ai.request.* but the model (a model
# change is its own kind), plus these.
_EXTRA_PARAMETERS = {semconv.GEN_AI_OUTPUT_TYPE: "output_type", semconv.AGENTOTEL_REQUEST_TOOL_CHOICE: "tool_choice"}
_SYSTEM_ROLES = ("system", "developer")
_CALL, _RESPONSE = "tool_call", "tool_call_response"


@dataclass
class CallInput:
    """What one model call was given. None where the record does not say (content capture off)."""

    instructions: str | None = None
    tools: dict[str, dict[str, Any]] | None = None  # name -> {"type", "description", "parameters"}
    params: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, tool_choice, ...
    added: list[Any] | None = None  # messages ({"role", **part} items) added since the previous call
    carried: int | None = None  # items of the previous call's conversation carried over unchanged
    dropped: list[Any] | None = None  # items of the previous call's conversation it was not given again
    elided: list[Any] | None = None  # tool results it was the first given, cut short of what the tool returned


def model_inputs(trajectory: Trajectory, set_aside: Collection[int] = ()) -> dict[int, CallInput]:
    """Every model step's CallInput, by step index (reads the model calls' attributes once).

    `set_aside` are steps that only made a failed attempt again (`align.recoveries`): their exchanges (the
    failed call's error result, the model's message asking again) are left out of the conversation, and a
    set-aside model call is not the previous call the next one is measured against. So the call after a
    timeout and its retry was given the same new messages as the call of a run that had no timeout."""
    attributes = trajectory.model_attributes
    out: dict[int, CallInput] = {}
    previous: dict[int | None, list[dict[str, Any]]] = {}  # the latest answered call's conversation, per parent step
    tools_seen: dict[str, dict[str, dict[str, Any]] | None] = {}  # calls of a run mostly offer the same tools
    hidden = _set_aside_ids(trajectory, set_aside)
    returned = {s.tool_call_id: s for s in trajectory.steps
                if s.type == "tool" and s.tool_call_id and s.status == "ok" and s.output is not None}  # fmt: skip
    delivered: set[str] = set()  # tool-call ids whose results a model call was given already
    for step in trajectory.steps:
        if step.type != "llm":
            continue
        found = attributes.get(step.index, {})
        system, messages = _split(step.input)
        raw_tools = found.get(semconv.GEN_AI_TOOL_DEFINITIONS)
        if raw_tools not in tools_seen:
            tools_seen[raw_tools] = _tools(raw_tools)
        call = CallInput(instructions=_instructions(found) or _text(system), tools=tools_seen[raw_tools],
                         params=_params(found))
        if messages is not None:
            # Content was captured: no instructions or tools recorded means none were given.
            call.instructions = call.instructions or ""
            call.tools = call.tools if call.tools is not None else {}
            context = previous.get(step.parent_index, [])
            items = _items(messages, hidden)
            carried = _common_prefix(context, items)
            added = items[carried:]
            # Past the carried prefix, an earlier item the call was given again (moved, say) is not lost.
            dropped = [item for item in context[carried:] if item not in added]
            call.carried, call.dropped, call.added = carried, dropped, _unordered_calls(added)
            call.elided = _elided(messages, returned, delivered)
            answered = step.status == "ok" and step.output is not None  # a failed attempt is not what a retry continues
            if answered and step.index not in set_aside:
                previous[step.parent_index] = items + _items(step.output if isinstance(step.output, list) else [], hidden)
        out[step.index] = call
    return out


def _elided(messages: list[Any], returned: Mapping[str, Step], delivered: set[str]) -> list[Any]:
    """The tool results a call is the first given that are shorter than what the tool returned and not a
    plain rendering of it (a context budget cut them, a summary replaced them): memory lost on the way."""
    found = []
    for message in messages:
        for part in (message.get("parts") or []) if isinstance(message, dict) else []:
            if not isinstance(part, dict) or part.get("type") != _RESPONSE or str(part.get("id")) not in returned:
                continue
            key = str(part.get("id"))
            if key in delivered:
                continue
            delivered.add(key)
            step = returned[key]
            if _cut_short(part.get("response"), step.output):
                found.append({"tool": step.tool_name, "step": step.index, "given": part.get("response")})
    return found


def _cut_short(given: Any, output: Any) -> bool:
    value = _json.parse(given)
    if value == output:
        return False
    if isinstance(value, (dict, list)):
        given_text = canonical_arguments(value)
    else:
        given_text = "" if value is None else str(value).strip()
    full = output if isinstance(output, str) else canonical_arguments(output)
    if len(given_text) >= len(full):
        return False
    leaves = _strings(output)
    # A rendering of the result (its text, one text field of it) is what the tool returned, not a cut.
    return given_text not in (str(output).strip(), "\n".join(leaves).strip()) and given_text not in (x.strip() for x in leaves)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _set_aside_ids(trajectory: Trajectory, set_aside: Collection[int]) -> set[tuple[str, str]]:
    """(part type, tool-call id) of the conversation parts that belong to set-aside attempts: a failed tool
    call's result, and the tool calls a set-aside model call asked for."""
    hidden: set[tuple[str, str]] = set()
    # A failure is an exchange of its own only when the model was given it and asked again (its next model
    # call is set aside); a harness that retried the call itself sent back the retry's result under its id.
    kept = {s.tool_call_id for s in trajectory.steps if s.index not in set_aside and s.tool_call_id}
    models = [s.index for s in trajectory.steps if s.type == "llm"]
    for step in trajectory.steps:
        if step.index not in set_aside:
            continue
        if step.type != "llm" and step.tool_call_id and step.tool_call_id not in kept:
            if next((m for m in models if m > step.index), None) in set_aside:
                hidden.add((_RESPONSE, step.tool_call_id))
        elif step.type == "llm" and isinstance(step.output, list):
            for message in step.output:
                for part in (message.get("parts") or []) if isinstance(message, dict) else []:
                    if isinstance(part, dict) and part.get("type") == _CALL and part.get("id"):
                        hidden.add((_CALL, str(part["id"])))
    return hidden


def _split(value: Any) -> tuple[list[Any], list[Any] | None]:
    """(leading system/developer messages, the rest) of a chat input; the rest is None when not messages."""
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        return [], None
    n = 0
    while n < len(value) and value[n].get("role") in _SYSTEM_ROLES:
        n += 1
    return value[:n], value[n:]


def _text(messages: list[Any]) -> str | None:
    texts = [p.get("content") for m in messages for p in (m.get("parts") or ())
             if isinstance(p, dict) and isinstance(p.get("content"), str)]  # fmt: skip
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
        if isinstance(definition, dict) and definition.get("name"):
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


def _items(messages: list[Any], hidden: Collection[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """Messages as one item per part ({"role", **part}), tool-call ids and finish reasons left out: an SDK
    re-sends an answer as one message or several (the Responses API: one item per call), with ids
    minted afresh by each run. A message holding a `hidden` part (a set-aside attempt) is left out whole."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            out.append({"role": "", "content": message})
            continue
        role = message.get("role") or ""
        parts = message.get("parts")
        if not isinstance(parts, list):
            out.append({"role": role, "content": message.get("content")})
            continue
        if hidden and any(isinstance(part, dict) and (part.get("type"), str(part.get("id"))) in hidden for part in parts):
            if all(isinstance(part, dict) and part.get("type") == _RESPONSE for part in parts):
                # Tool results sent together: leave out only the set-aside ones.
                parts = [part for part in parts if (_RESPONSE, str(part.get("id"))) not in hidden]
            else:
                continue
        for part in parts:
            if not isinstance(part, dict):
                out.append({"role": role, "content": part})
                continue
            drop_id = part.get("type") in (_CALL, _RESPONSE)
            item = {"role": role, **{k: v for k, v in part.items() if not (drop_id and k == "id")}}
            if part.get("type") == _RESPONSE and isinstance(item.get("response"), str):
                item["response"] = _same_json(item["response"])
            out.append(item)
    return out


@lru_cache(maxsize=4096)  # every later call of a run repeats the results: parse each once
def _same_json(text: str) -> str:
    """A tool result sent as JSON text, in canonical form (the same data with its keys in another order
    is the same result); any other text unchanged."""
    if text[:1] not in ("{", "["):
        return text
    value = _json.parse(text)
    return canonical_arguments(value) if isinstance(value, (dict, list)) else text


def _unordered_calls(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items with each stretch of tool calls (or of tool results) in one canonical order: parallel calls
    finish, and are sent back, in whatever order they happen to."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(items):
        kind = items[i].get("type")
        j = i + 1
        if kind in (_CALL, _RESPONSE):
            while j < len(items) and items[j].get("type") == kind and items[j].get("role") == items[i].get("role"):
                j += 1
        out.extend(sorted(items[i:j], key=canonical_arguments) if j - i > 1 else items[i:j])
        i = j
    return out


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
