"""Step builders for the analysis tests: trajectories written as data, in the ARCHITECTURE step shape."""

from __future__ import annotations

import json
from typing import Any

from agentotel import semconv
from agentotel.analysis._record import RunRecord


def text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def llm(index: int, *, calls: tuple = (), text: str | None = None, messages: Any = None, tokens=(100, 20), cost=None,
        status: str = "ok", error: str | None = None, parent: int | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"type": "text", "content": text})
    for number, call in enumerate(calls):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{index}_{number}"
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
    output = [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if calls else "stop"}]
    return {
        "index": index, "type": "llm", "name": "chat gpt-4o-mini", "span_id": f"s{index}", "status": status,
        "parent_index": parent, "model": "gpt-4o-mini", "tool_name": None, "tool_call_id": None, "requested_by": None,
        "input_tokens": tokens[0], "output_tokens": tokens[1], "cost_usd": cost, "error": error,
        "input": json.dumps(messages if messages is not None else [text_message("user", f"m{index}")]),
        "output": None if status == "error" else json.dumps(output),
    }


def tool(index: int, name: str, arguments: Any, output: Any, *, status: str = "ok", requested_by: int | None = None,
         call_id: str | None = None, error: str | None = None, kind: str = "tool") -> dict[str, Any]:
    return {
        "index": index, "type": kind, "name": f"execute_tool {name}" if kind == "tool" else f"retrieval {name}",
        "span_id": f"s{index}", "status": status, "parent_index": None, "model": None,
        "tool_name": name if kind == "tool" else None, "tool_call_id": call_id, "requested_by": requested_by,
        "input_tokens": None, "output_tokens": None, "cost_usd": None, "error": error,
        "input": json.dumps(arguments), "output": None if status == "error" else json.dumps(output),
    }


def agent(index: int, name: str) -> dict[str, Any]:
    return {"index": index, "type": "agent", "name": f"invoke_agent {name}", "span_id": f"s{index}", "status": "ok",
            "parent_index": None, "model": None, "tool_name": None, "tool_call_id": None, "requested_by": None,
            "input_tokens": None, "output_tokens": None, "cost_usd": None, "error": None, "input": None, "output": None}


def record(*steps: dict[str, Any], run_id: str = "run-b", status: str = "ok", attributes: dict | None = None,
           root: dict | None = None, task: Any = "find acme's orders") -> RunRecord:
    return RunRecord(
        {"run_id": run_id, "trace_id": "t" + run_id, "status": status, "task": json.dumps(task), "name": "orders"},
        list(steps),
        {k: dict(v) for k, v in (attributes or {}).items()},
        dict(root or {}),
    )


def definitions_attr(*tools: tuple[str, dict]) -> dict[str, str]:
    return {semconv.GEN_AI_TOOL_DEFINITIONS: json.dumps(
        [{"type": "function", "name": name, "parameters": params} for name, params in tools])}


def schema_hash_attr(value: str) -> dict[str, str]:
    return {semconv.AGENTOTEL_TOOL_SCHEMA_HASH: value}


def tool_loop(shown: list[dict[str, Any]], turns: Any, answer: str) -> list[dict[str, Any]]:
    """A plain tool loop's steps: one model call per (tool, arguments, result) asked for and run, each seeing the
    conversation so far (`shown`, then the calls and results), then the model's `answer`."""
    shown, steps = list(shown), []
    for name, arguments, result in turns:
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, arguments, call_id)], messages=list(shown)),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=call_id)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": json.dumps(result)}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=shown))
    return steps
