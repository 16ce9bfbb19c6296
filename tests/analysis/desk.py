"""A meeting-room desk agent for the cause tests: the real openai SDK against a scripted model on 127.0.0.1.

Another shape than the support agent of `scripted.py` and than the benchmark's agents: a templated
system prompt per company and employee, a memory recall and a handbook retrieval, parallel tool calls,
multi-turn conversations and a summariser on another model. Each test scripts the model turn by turn
and switches on one harness fault; the recorded run is what a real agent would leave.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import openai

import agentotel
from agentotel.demo import completion

MODEL = "gpt-4o-mini"
SUMMARY_MODEL = "gpt-4o"
SYSTEM = ("You are the facilities desk of {company}. Find and book meeting rooms for {employee}; "
          "confirm the room, the slot and the confirmation code.")


class Desk:
    """What the tools answer; tests change it between runs."""

    rooms: dict[str, Any] = {}
    notes: list[dict[str, Any]] = []
    handbook: list[dict[str, Any]] = []
    bookings = 0
    taken: set[str] = set()


def reset() -> None:
    Desk.rooms = {"building": "HQ", "rooms": [{"room_id": "R-0412", "seats": 6, "floor": 4},
                                              {"room_id": "R-0413", "seats": 16, "floor": 4}]}
    Desk.notes = [{"id": "note-E-20417", "content": "E-20417 prefers rooms near the lifts."}]
    Desk.handbook = [{"id": "hb-11", "score": 0.9, "content": "Rooms are released when nobody checks in."}]
    Desk.bookings, Desk.taken = 0, set()


@agentotel.tool
def find_rooms(building: str, seats: int) -> dict[str, Any]:
    """Free meeting rooms of a building with at least that many seats."""
    return dict(Desk.rooms)


@agentotel.tool
def book_room(room_id: str, slot: str) -> dict[str, Any]:
    """Book a meeting room for a time slot."""
    if room_id in Desk.taken:
        raise RuntimeError(f"{room_id} was taken a moment ago")
    Desk.bookings += 1
    return {"room_id": room_id, "slot": slot, "confirmation": f"CF-{Desk.bookings:05d}{room_id[-2:]}"}


@agentotel.retrieval(data_source="desk-notes")
def recall_notes(employee_id: str) -> list[dict[str, Any]]:
    """What the desk remembers about an employee."""
    return list(Desk.notes)


@agentotel.retrieval(data_source="facilities-handbook")
def search_handbook(query: str) -> list[dict[str, Any]]:
    """Handbook passages for a question."""
    return list(Desk.handbook)


TOOLS = {"find_rooms": find_rooms, "book_room": book_room}


def offered(empty_parameters: bool = False) -> list[dict[str, Any]]:
    from agentotel.tools import registered_tools

    known = registered_tools()
    return [{"type": "function", "function": {"name": name, "description": known[name].description,
                                              "parameters": {"type": "object"} if empty_parameters else known[name].schema["parameters"]}}
            for name in TOOLS]


def desk(client: openai.OpenAI, turns: list[str], *, system: str, fault: str | None = None, max_turns: int = 6,
         empty_parameters: bool = False, employee: str = "E-20417", handbook: bool = False, memory: bool = False,
         summary_system: str | None = None, repr_results: bool = False) -> str:
    """An ordinary tool-calling loop over user turns, with one harness fault switched on by name."""
    if memory:
        system += "\nNotes: " + " ".join(n["content"] for n in recall_notes(employee))
    if handbook:
        system += "\nHandbook: " + " ".join(d["content"] for d in search_handbook(turns[0]))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    answer, calls_made, nudged = "", 0, False
    for number, text in enumerate(turns):
        if fault == "restart" and number > 0:
            messages = [messages[0]]  # the harness builds each turn's request from the new message only
        messages.append({"role": "user", "content": text})
        for _ in range(max_turns):
            if fault == "retrieve_each_call" and calls_made > 0:
                search_handbook(turns[0])  # the loop re-runs the retrieval before every model call
            sent = messages
            if fault == "window" and len(messages) > 4:
                sent = [messages[0]] + messages[-3:]  # "keep the last three messages": the question goes
            if fault == "elide":
                sent = [dict(m, content="[omitted to save space]") if m.get("role") == "tool" else m for m in messages]
            response = client.chat.completions.create(model=MODEL, messages=sent, tools=offered(empty_parameters))
            calls_made += 1
            message = response.choices[0].message
            if not message.tool_calls:
                answer = message.content or ""
                if fault == "nudge" and not nudged:
                    nudged = True
                    messages += [message.model_dump(exclude_none=True), {"role": "user", "content": "Please continue."}]
                    continue
                messages.append(message.model_dump(exclude_none=True))
                break
            messages.append(message.model_dump(exclude_none=True))
            chosen = message.tool_calls[:1] if fault == "drop_parallel" else message.tool_calls
            for call in chosen:
                content = _use(call.function.name, call.function.arguments, repr_results)
                if fault == "rerun" and call.function.name == "book_room":
                    content = _use(call.function.name, call.function.arguments, repr_results)  # at-least-once redelivery
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        else:
            return "Sorry, the desk is busy right now."
    if summary_system is not None:
        response = client.chat.completions.create(model=SUMMARY_MODEL, messages=[
            {"role": "system", "content": summary_system}, {"role": "user", "content": answer}])
        return response.choices[0].message.content or answer
    return answer


def says(text: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The model answers with text (as the model the request asked for, as an API does)."""
    return lambda request: completion(text, prompt_tokens=_tokens(request), completion_tokens=20, model=request["model"])


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The model asks for these tool calls (in parallel when more than one)."""
    return lambda request: completion(None, list(tool_calls), prompt_tokens=_tokens(request), completion_tokens=15,
                                      model=request["model"])


def _tokens(request: dict[str, Any]) -> int:
    return len(json.dumps(request.get("messages") or [])) // 4


def _use(name: str, raw: str, repr_results: bool) -> str:
    try:
        result = TOOLS[name](**json.loads(raw))
    except Exception as exc:  # noqa: BLE001 - the model is told, as agent frameworks do
        return f"Error: {type(exc).__name__}: {exc}"
    return str(result) if repr_results else json.dumps(result)
