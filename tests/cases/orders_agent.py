"""A small tool-using agent for the regression story: the real openai SDK against a scripted model.

`search_orders` changed the shape of its answer (orders moved under `data`); the buggy agent reads the
old shape, sees no orders and keeps searching; the fixed agent reads both shapes.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx2
import openai

import agentotel

TASK = "How many orders does acme have?"
MODEL = "gpt-4o-mini"
TOOLS = [{"type": "function", "function": {
    "name": "search_orders", "description": "Orders of a customer.",
    "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]}}}]

ORDERS = [{"id": 1, "total": 10.5}, {"id": 2, "total": 3.0}]


class World:
    """What the live tool answers, and how often its body really ran."""

    shape = 1
    live_calls = 0
    model_calls = 0  # requests that reached the scripted model (not answered by a replay)


@agentotel.tool
def search_orders(customer: str) -> dict:
    """Orders of a customer."""
    World.live_calls += 1
    if World.shape == 1:
        return {"orders": ORDERS}
    return {"data": {"orders": ORDERS}, "next": None}  # the new API shape


def scripted_model(request: httpx2.Request) -> httpx2.Response:
    """A deterministic model: search first; answer once the tool reported orders; retry otherwise."""
    World.model_calls += 1
    messages = json.loads(request.content)["messages"]
    last = messages[-1]
    searches = sum(1 for m in messages if m["role"] == "tool")
    if last["role"] == "tool" and "orders:" in last["content"]:
        message: dict[str, Any] = {"role": "assistant", "content": f"acme has {last['content'].split()[0]} orders"}
    elif searches < 4:
        call = {"id": f"call_{searches + 1}", "type": "function",
                "function": {"name": "search_orders", "arguments": json.dumps({"customer": "acme"})}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": "acme has no orders"}
    body = {"id": f"chatcmpl-{len(messages)}", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": 50 + 10 * len(messages), "completion_tokens": 12, "total_tokens": 62 + 10 * len(messages)}}
    return httpx2.Response(200, json=body)


def client() -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url="http://model.test/v1", max_retries=0,
                         http_client=httpx2.Client(transport=httpx2.MockTransport(scripted_model)))


def buggy_parse(result: dict) -> list:
    return result.get("orders", [])


def fixed_parse(result: dict) -> list:
    return result.get("orders") or (result.get("data") or {}).get("orders", [])


def make_agent(parse: Callable[[dict], list]) -> Callable[[str], str]:
    def agent(task: str) -> str:
        llm = client()
        messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
        for _ in range(10):
            reply = llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS).choices[0].message
            if not reply.tool_calls:
                return reply.content or ""
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in reply.tool_calls]})
            for call in reply.tool_calls:
                orders = parse(search_orders(**json.loads(call.function.arguments)))
                content = f"{len(orders)} orders: {json.dumps(orders)}" if orders else "no orders found"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return "gave up"

    return agent


buggy_agent = make_agent(buggy_parse)
fixed_agent = make_agent(fixed_parse)
