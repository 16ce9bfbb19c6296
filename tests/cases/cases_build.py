"""Step builders for the cases tests: trajectories written as data, in the ARCHITECTURE step shape."""

from __future__ import annotations

import json
from typing import Any

from agentotel import semconv
from agentotel.cases._record import RunRecord


def llm(index: int, *, calls: tuple = (), text: str | None = None, messages: Any = None, tokens=(100, 20), cost=None,
        status: str = "ok", finish: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"type": "text", "content": text})
    for number, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{index}_{number}"
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
    output = [{"role": "assistant", "parts": parts, "finish_reason": finish or ("tool_call" if calls else "stop")}]
    return {
        "index": index, "type": "llm", "name": "chat gpt-4o-mini", "span_id": f"s{index}", "status": status,
        "model": "gpt-4o-mini", "tool_name": None, "tool_call_id": None, "requested_by": None,
        "input_tokens": tokens[0], "output_tokens": tokens[1], "cost_usd": cost,
        "input": json.dumps(messages if messages is not None else [{"role": "user", "parts": [{"type": "text", "content": f"m{index}"}]}]),
        "output": json.dumps(output),
    }


def tool(index: int, name: str, arguments: Any, output: Any, *, status: str = "ok", requested_by: int | None = None,
         call_id: str | None = None) -> dict[str, Any]:
    return {
        "index": index, "type": "tool", "name": f"execute_tool {name}", "span_id": f"s{index}", "status": status,
        "model": None, "tool_name": name, "tool_call_id": call_id, "requested_by": requested_by,
        "input_tokens": None, "output_tokens": None, "cost_usd": None,
        "input": json.dumps(arguments), "output": output if isinstance(output, str) and status == "error" else json.dumps(output),
    }


def record(*steps: dict[str, Any], run_id: str = "run-b", status: str = "ok", attributes: dict | None = None,
           root: dict | None = None, task: Any = "find acme's orders") -> RunRecord:
    return RunRecord(
        {"run_id": run_id, "trace_id": "t" + run_id, "status": status, "task": json.dumps(task)},
        list(steps),
        {k: dict(v) for k, v in (attributes or {}).items()},
        dict(root or {}),
    )


def schema_hash_attr(value: str) -> dict[str, str]:
    return {semconv.AGENTOTEL_TOOL_SCHEMA_HASH: value}


def definitions_attr(*tools: tuple[str, dict]) -> dict[str, str]:
    return {semconv.GEN_AI_TOOL_DEFINITIONS: json.dumps(
        [{"type": "function", "name": name, "parameters": params} for name, params in tools])}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def assistant_calls(*calls: tuple[str, dict, str]) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a} for n, a, i in calls]}


def tool_reply(call_id: str, response: Any) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}


NEW_SHAPE = {"data": {"orders": [{"id": 1, "total": 10.5}]}, "next": None}


def looping_run(run_id: str = "run-b", loops: int = 3) -> RunRecord:
    """The buggy agent's run: search_orders now answers in a new shape; the agent sees no orders and retries."""
    task = "How many orders does acme have?"
    messages = [user(task)]
    steps = [llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")], messages=list(messages))]
    index = 2
    for n in range(loops):
        call_id = f"c{n + 1}"
        messages = messages + [assistant_calls(("search_orders", {"customer": "acme"}, call_id)), tool_reply(call_id, "no orders found")]
        steps.append(tool(index, "search_orders", {"customer": "acme"}, NEW_SHAPE, requested_by=index - 1, call_id=call_id))
        last = n == loops - 1
        steps.append(llm(index + 1, messages=list(messages), text="acme has no orders" if last else None,
                         calls=() if last else [("search_orders", {"customer": "acme"}, f"c{n + 2}")]))
        index += 2
    return record(*steps, run_id=run_id, task=task)


def healthy_run_for_history() -> RunRecord:
    """The same agent a day earlier, when search_orders still answered {"orders": [...]}."""
    return record(
        llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")], messages=[user("How many orders does acme have?")]),
        tool(2, "search_orders", {"customer": "acme"}, {"orders": [{"id": 1, "total": 10.5}]}, requested_by=1, call_id="c1"),
        llm(3, text="acme has 1 order"),
        run_id="run-a",
    )
