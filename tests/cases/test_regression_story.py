"""The story issue 9 is for: a run that looped on a tool whose output changed shape becomes a committed
regression case that fails on the bug and passes on the fix — no network, no live tool call."""

from __future__ import annotations

import pytest

import agentotel
from agentotel.cases import Case, findings, load_run, new_case, run_case, suggest_cut
from orders_agent import TASK, World, buggy_agent, fixed_agent


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    World.shape, World.live_calls = 1, 0
    yield directory
    agentotel.shutdown()


def record_two_runs(directory):
    with agentotel.run("orders", task=TASK) as good:
        good.output = buggy_agent(TASK)
    World.shape = 2  # the orders API changed its answer
    with agentotel.run("orders", task=TASK) as bad:
        bad.output = buggy_agent(TASK)
    assert agentotel.flush()
    return good, bad


def test_the_detectors_name_the_loop_and_the_drift(store):
    good, bad = record_two_runs(store)
    assert good.output == "acme has 2 orders" and bad.output == "acme has no orders"
    found = {f.kind: f for f in findings(agentotel.open(store), bad.id)}
    assert found["tool_output_drift"].steps == (2,) and found["tool_output_drift"].layer == "tool"
    assert found["tool_output_drift"].evidence["earlier_run"] == good.id
    assert found["tool_output_drift"].evidence["missing"] == ["$.orders"]
    assert found["repeated_tool_call"].index == 3 and found["repeated_tool_call"].layer == "model"  # asked again
    assert "tool_result_cut" not in found  # "no orders found" is the agent's reading of the new shape, not a cut result
    assert not findings(agentotel.open(store), good.id)


def test_a_case_cut_at_the_first_affected_step_fails_on_the_bug_and_passes_on_the_fix(store, tmp_path):
    _good, bad = record_two_runs(store)
    traces = agentotel.open(store)
    record = load_run(traces, bad.id)
    found = findings(traces, bad.id)
    at = suggest_cut(record, found)
    assert at == 3  # the first model call that saw the new shape
    path = new_case(record, at=at, layer="tool", name="orders-shape-drift", found=found).save(tmp_path / "cases" / "orders.yaml")
    case = Case.load(path)
    assert [t.step for t in case.tools] == [2, 4, 6, 8] and [m.step for m in case.models] == [1, 3, 5, 7, 9]
    assert case.assertions.must_not_repeat == ["search_orders"]

    live_before = World.live_calls
    World.shape = 1  # whatever the live API says now, replay must not ask it
    buggy = run_case(case, agent=buggy_agent, directory=store)
    offline = run_case(case, agent=fixed_agent, directory=store)
    fixed = run_case(case, agent=fixed_agent, directory=store, models="live")
    assert World.live_calls == live_before

    assert not buggy.passed
    assert [g.name for g in buggy.failures] == ["must_not_repeat"]
    # Offline the fix departs from the recording at step 3; with no evidence gate the rest is not reached.
    assert not offline.passed and {g.status for g in offline.failures} == {"not_reached"}
    assert fixed.passed, fixed.lines()
    # the replayed runs are recorded in the replay store and linked to the case
    replayed = load_run(agentotel.open(store / "replays"), fixed.run_id)
    assert replayed.steps[1]["type"] == "tool" and replayed.steps[1]["output"] == {"data": {"orders": [{"id": 1, "total": 10.5}, {"id": 2, "total": 3.0}]}, "next": None}
