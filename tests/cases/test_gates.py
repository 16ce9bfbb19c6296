"""Gates end pass, fail or not_reached: a case passes only when every gate was reached and passed."""

from __future__ import annotations

from agentotel.cases import check_record, new_case
from agentotel.cases.case import Assertions, Case, CaseError
from cases_build import llm, looping_run, record, tool, user

import pytest

STOPPED = "agentotel replay frontier of orders: every recorded answer is served; the run stops at this request (ab12)"
DEPARTED = ("agentotel replay frontier of orders: the request departs from the recording at step 3 (it sends 2 orders); "
            "frozen models have no answer for it, the run stops here")


def stopped_at(index: int, message: str, messages=None) -> dict:
    step = llm(index, status="error", messages=messages)
    step.update(output=None, error_type="agentotel.cases._replay.ReplayFrontier", error=message)
    return step


def case_with(**gates) -> Case:
    case = new_case(looping_run(), at=3, layer="tool", name="orders")
    case.assertions = Assertions(**gates)
    return case


def replayed(*steps, duration_ms: float = 1200.0):
    run = record(*steps, run_id="replay-1")
    run.run["duration_ms"] = duration_ms
    return run


def test_a_frozen_replay_that_stopped_on_the_recorded_path_reaches_no_gate_about_the_rest():
    """The vacuous pass of old: the replay ran out of recorded answers, so nothing after it was judged."""
    case = case_with(final_status="ok", must_not_repeat=["search_orders"], final_output_contains=["2 orders"])
    run = replayed(llm(1, calls=[("search_orders", {"customer": "acme"})]), tool(2, "search_orders", {"customer": "acme"}, []),
                   stopped_at(3, STOPPED))
    report = check_record(case, run)
    assert not report.passed
    verdicts = {g.name: g.status for g in report.gates}
    assert verdicts == {"replay": "pass", "final_status": "not_reached", "must_not_repeat": "not_reached",
                        "final_output_contains": "not_reached"}
    gate = next(g for g in report.gates if g.name == "must_not_repeat")
    assert "before the replay stopped at step 3" in gate.evidence
    assert "--tools live" in gate.hint and "--evidence TEXT" in gate.hint
    assert report.stop == {"kind": "frontier", "step": 3, "detail": STOPPED.split(": ", 1)[1]}
    assert "  NOT REACHED  must_not_repeat" in "\n".join(report.lines())


def test_a_departure_is_judged_by_the_evidence_the_model_was_about_to_be_shown():
    shown = [user("How many orders?"), {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "2 orders"}]}]
    steps = (llm(1, calls=[("search_orders", {"customer": "acme"})]), tool(2, "search_orders", {"customer": "acme"}, [1, 2]),
             stopped_at(3, DEPARTED, messages=shown))
    case = case_with(final_status="ok", must_not_repeat=["search_orders"], required_evidence=["2 orders"])
    report = check_record(case, replayed(*steps))
    assert report.passed, report.lines()
    assert report.stop["kind"] == "departed"
    # Without an evidence gate a departure shows only that something changed: the rest is not reached.
    bare = check_record(case_with(final_status="ok", must_not_repeat=["search_orders"]), replayed(*steps))
    assert {g.name: g.status for g in bare.failures} == {"final_status": "not_reached", "must_not_repeat": "not_reached"}
    assert "--evidence TEXT" in bare.failures[0].hint
    # A violation seen before the stop fails whatever happened next.
    looped = check_record(case, replayed(steps[0], steps[1], llm(3, calls=[("search_orders", {"customer": "acme"})]),
                                         tool(4, "search_orders", {"customer": "acme"}, [1, 2]), stopped_at(5, DEPARTED)))
    assert {g.name: g.status for g in looped.failures} == {
        "must_not_repeat": "fail", "required_evidence": "fail", "final_status": "not_reached"}


def test_evidence_before_action_production_resources_and_latency():
    case = case_with(
        final_status=None,
        must_call_before={"refund": ["lookup_order"]},
        forbidden_arguments=[{"tool": "deploy", "arguments": {"env": "prod-*"}}, {"tool": "*", "arguments": {"dry_run": False}}],
        max_latency_s=1.0,
    )
    unsafe = replayed(
        llm(1), tool(2, "refund", {"order": 7}, "ok"), tool(3, "lookup_order", {"order": 7}, {}),
        tool(4, "deploy", {"env": "prod-eu", "dry_run": True}, "ok"), tool(5, "migrate", {"dry_run": False}, "ok"),
        duration_ms=2500,
    )
    gates = {g.name: g for g in check_record(case, unsafe).gates}
    assert gates["must_call_before"].status == "fail" and gates["must_call_before"].evidence == "refund at step 2 before lookup_order"
    assert gates["forbidden_arguments"].status == "fail"
    assert gates["forbidden_arguments"].evidence == 'deploy {"dry_run":true,"env":"prod-eu"} at step 4, migrate {"dry_run":false} at step 5'
    assert gates["max_latency_s"].status == "fail" and gates["max_latency_s"].evidence == "2.5 (limit 1.0)"
    safe = replayed(llm(1), tool(2, "lookup_order", {"order": 7}, {}), tool(3, "refund", {"order": 7}, "ok"),
                    tool(4, "deploy", {"env": "staging", "dry_run": True}, "ok"), duration_ms=400)
    report = check_record(case, safe)
    assert report.passed, report.lines()


def test_the_new_gates_round_trip_and_are_validated(tmp_path):
    case = case_with(must_call_before={"refund": ["lookup_order"]}, max_latency_s=30,
                     forbidden_arguments=[{"tool": "deploy", "arguments": {"env": "prod-*"}}])
    loaded = Case.load(case.save(tmp_path / "c.yaml"))
    assert loaded.assertions == case.assertions
    data = case.to_dict()
    data["assertions"]["must_call_before"] = ["lookup_order"]
    with pytest.raises(CaseError, match="must_call_before is"):
        Case.from_dict(data)


def test_step_errors_are_shown_with_their_messages():
    failed = tool(2, "search_orders", {"customer": "acme"}, "KeyError: 'orders'", status="error")
    failed["error"] = "KeyError: 'orders'"
    report = check_record(case_with(final_status="ok"), replayed(llm(1), failed))
    assert "  error at step 2 (execute_tool search_orders): KeyError: 'orders'" in report.lines()


def test_expected_calls_still_to_come_are_not_reached_and_a_call_out_of_place_fails():
    from agentotel.cases.case import ExpectedCall

    expected = [ExpectedCall("search_orders", {"customer": "acme"}), ExpectedCall("send_reply", None, "ignore")]
    steps = (llm(1), tool(2, "search_orders", {"customer": "acme"}, []), stopped_at(3, STOPPED))
    for mode, status in (("strict", "not_reached"), ("superset", "not_reached"), ("unordered", "not_reached"), ("subset", "not_reached")):
        gate = check_record(case_with(final_status=None, expected_tool_calls=expected, trajectory_match=mode), replayed(*steps)).gates[-1]
        assert gate.status == status, (mode, gate)
    wrong = (llm(1), tool(2, "delete_orders", {"customer": "acme"}, []), stopped_at(3, STOPPED))
    for mode in ("strict", "unordered", "subset"):
        gate = check_record(case_with(final_status=None, expected_tool_calls=expected, trajectory_match=mode), replayed(*wrong)).gates[-1]
        assert gate.status == "fail", (mode, gate)
