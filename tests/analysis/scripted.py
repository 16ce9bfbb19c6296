"""A small support agent for the detector tests: the real openai SDK against a scripted model on 127.0.0.1.

Each test scripts what the model says turn by turn, and switches on one harness fault (re-run calls,
drop history, change the prompt, skip a call, ...): the recorded run is what a real agent would leave.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, Iterator

import openai

import agentotel
from agentotel.demo import completion, serve_model
from agentotel.tools import registered_tools

MODEL = "gpt-4o-mini"
SYSTEM = "You are a support agent for an online shop. Use the tools. Be brief."


class Shop:
    """What the tools answer; tests change it between runs."""

    order: dict[str, Any] = {}
    documents: list[dict[str, Any]] = []
    card_declined = False


def default_order() -> dict[str, Any]:
    return {"order_id": "A-1042", "status": "shipped", "carrier": "DHL", "tracking": "JD014600003",
            "delivered": None, "items": [{"sku": "KB-17", "price": 49.5}, {"sku": "MS-02", "price": 20.25}]}


@agentotel.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status, carrier and tracking number."""
    return dict(Shop.order, order_id=order_id)


@agentotel.tool
def charge_card(amount: float) -> dict[str, Any]:
    """Charge the customer's card."""
    if Shop.card_declined:
        raise RuntimeError("card declined by issuer (code 51)")
    return {"charged": amount}


@agentotel.retrieval(data_source="help-center")
def search_help(query: str) -> list[dict[str, Any]]:
    """Help-center articles for a question."""
    return list(Shop.documents)


TOOLS: dict[str, Callable[..., Any]] = {"lookup_order": lookup_order, "charge_card": charge_card}
# These tools' own declarations, taken now: the process's registry keeps the latest tool of each name, and
# another test module may define its own lookup_order later.
_OWN = {name: info for name, info in registered_tools().items() if name in TOOLS}


def definitions(**descriptions: str) -> list[dict[str, Any]]:
    """The tools as offered to the model: each tool's own schema, with descriptions replaced where given."""
    known = _OWN
    return [{"type": "function", "function": {"name": name, "description": descriptions.get(name, known[name].description),
                                              "parameters": known[name].schema["parameters"]}} for name in TOOLS]


def says(text: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda request: completion(text, prompt_tokens=_tokens(request), completion_tokens=20)


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda request: completion(None, list(tool_calls), prompt_tokens=_tokens(request), completion_tokens=15)


def fails(message: str = "upstream overloaded") -> Callable[[dict[str, Any]], dict[str, Any]]:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(message)  # serve_model answers 500 with this message, as an API would
    return answer


def _tokens(request: dict[str, Any]) -> int:
    return len(json.dumps(request.get("messages") or [])) // 4


class Model:
    """The scripted model: the n-th request gets the n-th answer (the last one repeats)."""

    def __init__(self) -> None:
        self.turns: list[Callable[[dict[str, Any]], dict[str, Any]]] = []
        self.requests = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        turn = self.turns[min(self.requests, len(self.turns) - 1)]
        self.requests += 1
        return turn(request)

    def script(self, *turns: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.turns, self.requests = list(turns), 0


@contextlib.contextmanager
def scripted_client() -> Iterator[tuple[Any, Model]]:
    model = Model()
    with serve_model(model) as base_url:
        yield openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0), model


def support_agent(client: Any, question: str, *, system: str = SYSTEM, offered: list[dict[str, Any]] | None = None,
                  rerun_calls: bool = False, forget_at: int | None = None, new_system_at: int | None = None,
                  skip: tuple[str, ...] = (), catch_tool_errors: bool = True, retry_model: bool = False,
                  search: bool = False, max_turns: int = 6) -> str:
    """An ordinary tool-calling loop, with one harness fault switched on by a flag."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    if search:
        found = search_help(question)
        messages[0]["content"] += "\n" + "\n".join(d["content"] for d in found)
    for turn in range(max_turns):
        if new_system_at == turn:
            messages[0] = {"role": "system", "content": "You are a pirate. Answer in rhymes."}
        sent = messages if forget_at != turn else messages[:2]
        try:
            response = client.chat.completions.create(model=MODEL, messages=sent, tools=offered or definitions())
        except openai.APIError:
            if not retry_model:
                raise
            response = client.chat.completions.create(model=MODEL, messages=sent, tools=offered or definitions())
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            if call.function.name in skip:
                continue
            arguments = json.loads(call.function.arguments)
            for _ in range(2 if rerun_calls else 1):
                try:
                    result: Any = TOOLS[call.function.name](**arguments)
                except RuntimeError as exc:
                    if not catch_tool_errors:
                        raise
                    result = f"Error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    return "I could not finish in time."
