"""An Agents SDK handoff is a tool step paired with the `transfer_to_<agent>` call that asked for it, whichever
instrumentation recorded the run.

Real runs (the triage agent hands over to the order desk, recorded by `agentotel.instrument()` and by OpenInference's
openai-agents instrumentation) are tested in test_framework_twins.py, on twins the framework twins' Agents SDK
recordings make in the same process. Here: the pairing of a tool step that names no tool (OpenInference's
"handoff to <agent>" span), on the span rows build_trajectory reads.
"""

from __future__ import annotations

from typing import Any

from agentotel.query.trajectory import build_trajectory


# -- a tool step that names no tool pairs only with a call it can be ------------------------------------------


def _rows(asked: list[tuple[str, str]], output: str, tool_steps: list[str | None] = ()) -> list[dict[str, Any]]:
    """A model step asking for `asked` (id, name) calls, then a name-less tool step giving `output`, then tool
    steps named `tool_steps` - the span rows build_trajectory reads."""
    def row(i: int, kind: str, **more: Any) -> dict[str, Any]:
        return {"trace_id": "t", "span_id": f"s{i}", "parent_span_id": "root", "name": more.pop("name", kind),
                "step_type": kind, "step_run": "r", "start_ns": i, "status_code": "OK", **more}

    calls = ",".join(f'{{"type":"tool_call","id":"{i}","name":"{n}","arguments":{{}}}}' for i, n in asked)
    rows = [{"trace_id": "t", "span_id": "root", "name": "run", "is_root": True, "run_id": "r", "start_ns": 0},
            row(1, "llm", output=f'[{{"role":"assistant","parts":[{calls}]}}]'),
            row(2, "tool", name="handoff to someone", input='"triage"', output=output)]
    rows += [row(3 + i, "tool", tool_name=name, name=f"execute_tool {name}") for i, name in enumerate(tool_steps)]
    return rows


def _nameless(rows: list[dict[str, Any]]) -> Any:
    return build_trajectory(rows, "r").steps[1]


def test_a_nameless_tool_step_pairs_with_the_call_naming_its_agent() -> None:
    step = _nameless(_rows([("c1", "transfer_to_billing"), ("c2", "transfer_to_order_desk")], '"Order Desk"'))
    assert (step.tool_name, step.tool_call_id, step.requested_by) == ("transfer_to_order_desk", "c2", 1)


def test_a_nameless_tool_step_stays_unpaired_when_the_call_is_not_clear() -> None:
    # two calls, neither naming the agent it gives
    step = _nameless(_rows([("c1", "transfer_to_billing"), ("c2", "escalate")], '"orders"'))
    assert (step.tool_name, step.tool_call_id, step.requested_by) == (None, None, None)
    # the only loose call is one a named tool step runs: not this step's
    step = _nameless(_rows([("c1", "get_order")], '"orders"', ["get_order"]))
    assert (step.tool_name, step.tool_call_id, step.requested_by) == (None, None, None)


def test_a_nameless_tool_step_takes_the_only_call_left() -> None:
    step = _nameless(_rows([("c1", "get_order"), ("c2", "escalate_now")], '"Human desk"', ["get_order"]))
    assert (step.tool_name, step.tool_call_id, step.requested_by) == ("escalate_now", "c2", 1)
