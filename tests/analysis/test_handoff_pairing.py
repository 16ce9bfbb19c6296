"""An Agents SDK handoff is a tool step paired with the `transfer_to_<agent>` call that asked for it, whichever
instrumentation recorded the run.

Real runs: the OpenAI Agents SDK's triage agent hands over to the order desk (tests/analysis/twins_producer.py,
against the scripted model on 127.0.0.1), recorded by `agentotel.instrument()` (the integration's handoff span,
with the call's id) and by OpenInference's openai-agents instrumentation (a TOOL span "handoff to orders" that
keeps only the two agents' names, and `{}` arguments left out of the flattened messages). The trajectory
gives the handoff step the call's name, id and asking step; the call's arguments read `{}`, not null.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentotel
from agentotel.query.trajectory import build_trajectory
from twins import produce


@pytest.fixture(scope="module", params=["agentotel", "openinference"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[Any]]:
    """Three runs of the handing-over agent (two good, one repeating its lookup) under one instrumentation."""
    store = tmp_path_factory.mktemp(request.param) / "store"
    store.mkdir()
    manifest = produce(store, "agents", request.param, ["repeat"])
    traces = agentotel.open(store)
    runs = traces.sql("SELECT run_id FROM runs WHERE name = 'orders-repeat' ORDER BY start_time").fetchall()
    assert len(runs) == len(manifest) == 3
    return traces, [traces.trajectory(run) for (run,) in runs]


def _calls(messages: Any) -> list[dict[str, Any]]:
    return [p for m in messages or () for p in m["parts"] if p["type"] == "tool_call"]


def test_the_handoff_step_answers_the_transfer_call(recorded: tuple[Any, list[Any]]) -> None:
    _traces, trajectories = recorded
    for trajectory in trajectories:
        steps = trajectory.steps
        asking = next(s for s in steps if s.type == "llm")
        (call,) = _calls(asking.output)
        assert (call["name"], call["arguments"]) == ("transfer_to_orders", {})
        handoff = steps[asking.index]  # the step right after it
        assert handoff.type == "tool"
        assert (handoff.tool_name, handoff.tool_call_id, handoff.requested_by) == ("transfer_to_orders", call["id"], asking.index)
        # the next agent takes over after it, and its model call is sent the same call back
        assert steps[handoff.index].type == "agent"
        sent_back = next(s for s in steps if s.type == "llm" and s.index > handoff.index)
        assert [(c["id"], c["arguments"]) for c in _calls(sent_back.input)] == [(call["id"], {})]


def test_check_sees_the_handoff_as_a_run_call(recorded: tuple[Any, list[Any]]) -> None:
    traces, trajectories = recorded
    good = trajectories[1]  # the first run is history for the second
    assert [f.kind for f in traces.findings(good.run["run_id"])] == []
    kinds = {f.kind for f in traces.findings(trajectories[2].run["run_id"])}
    assert "repeated_tool_call" in kinds and "unanswered_tool_calls" not in kinds


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
