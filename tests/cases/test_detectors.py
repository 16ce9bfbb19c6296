"""Each detector: a run that triggers it, and a run that must not."""

from __future__ import annotations

from agentotel.cases._record import History
from agentotel.cases.detectors import Thresholds, detect, format_findings
from cases_build import definitions_attr, llm, record, schema_hash_attr, tool

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"customer": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["customer"],
    "additionalProperties": False,
}


def kinds(found):
    return [f.kind for f in found]


def healthy_run(run_id="run-b", output=None):
    return record(
        llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")]),
        tool(2, "search_orders", {"customer": "acme"}, output or {"orders": [{"id": 1, "total": 10.5}]}, requested_by=1, call_id="c1"),
        llm(3, text="acme has one order"),
        run_id=run_id,
    )


def test_a_healthy_run_has_no_findings():
    assert detect(healthy_run()) == []
    assert format_findings([]) == "no findings"


def test_same_tool_same_arguments_again_and_again_is_a_loop():
    steps = [llm(1, calls=[("search_orders", {"customer": "acme"})])]
    for n in range(4):
        steps += [tool(2 + 2 * n, "search_orders", {"customer": "acme"}, {"orders": []}), llm(3 + 2 * n, calls=[("search_orders", {"customer": "acme"})] if n < 3 else (), text=None if n < 3 else "none")]
    found = detect(record(*steps))
    loop = [f for f in found if f.kind == "repeated_tool_call"]
    assert len(loop) == 1
    assert loop[0].steps == (2, 4, 6, 8) and loop[0].layer == "workflow"
    assert loop[0].evidence["count"] == 4 and loop[0].evidence["tool"] == "search_orders"


def test_same_tool_with_different_arguments_is_not_a_loop():
    steps = [tool(i, "search_orders", {"customer": f"c{i}"}, {"orders": []}) for i in range(1, 6)]
    assert "repeated_tool_call" not in kinds(detect(record(*steps)))


def test_loop_threshold_is_configurable():
    steps = [tool(i, "search_orders", {"customer": "acme"}, {"orders": []}) for i in range(1, 3)]
    assert "repeated_tool_call" not in kinds(detect(record(*steps)))
    assert "repeated_tool_call" in kinds(detect(record(*steps), thresholds=Thresholds(repeated_tool_calls=2)))


def test_the_same_model_request_twice_is_flagged():
    same = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    found = detect(record(llm(1, messages=same, text="a"), llm(2, messages=same, text="a")))
    repeated = [f for f in found if f.kind == "repeated_model_request"]
    assert repeated and repeated[0].steps == (1, 2)
    other = [{"role": "user", "parts": [{"type": "text", "content": "hello"}]}]
    assert "repeated_model_request" not in kinds(detect(record(llm(1, messages=same, text="a"), llm(2, messages=other, text="b"))))


def test_a_tool_failing_again_and_again_is_a_retry_loop():
    failing = [tool(i, "fetch", {"url": f"u{i}"}, "TimeoutError: slow", status="error") for i in range(1, 4)]
    found = detect(record(*failing, llm(4, text="gave up")))
    retry = [f for f in found if f.kind == "retry_loop"]
    assert retry and retry[0].steps == (1, 2, 3) and retry[0].layer == "tool"
    recovered = failing[:2] + [tool(3, "fetch", {"url": "u3"}, {"ok": True})]
    assert "retry_loop" not in kinds(detect(record(*recovered)))


def test_a_tool_error_the_agent_carried_on_past():
    run = record(
        llm(1, calls=[("charge_card", {"amount": 5})]),
        tool(2, "charge_card", {"amount": 5}, "PaymentError: declined", status="error"),
        llm(3, text="Payment done!"),
    )
    found = [f for f in detect(run) if f.kind == "tool_error_ignored"]
    assert found and found[0].steps == (2,) and found[0].evidence["following_steps"] == [3]


def test_a_retried_tool_error_or_one_that_ended_the_run_is_not_ignored():
    retried = record(
        tool(1, "charge_card", {"amount": 5}, "PaymentError: declined", status="error"),
        tool(2, "charge_card", {"amount": 5}, {"ok": True}),
        llm(3, text="done"),
    )
    ended = record(llm(1, calls=[("charge_card", {"amount": 5})]), tool(2, "charge_card", {"amount": 5}, "boom", status="error"))
    assert "tool_error_ignored" not in kinds(detect(retried))
    assert "tool_error_ignored" not in kinds(detect(ended))


def test_tool_output_shape_drift_against_the_previous_run():
    before = healthy_run("run-a")
    after = healthy_run("run-b", output={"data": {"orders": [{"id": 1, "total": 10.5}]}, "next": None})
    history = History.from_records([before])
    drift = [f for f in detect(after, history) if f.kind == "tool_output_drift"]
    assert len(drift) == 1 and drift[0].steps == (2,) and drift[0].layer == "tool"
    assert "$.orders" in drift[0].evidence["removed"] and "$.data.orders[].id" in drift[0].evidence["added"]
    assert drift[0].evidence["earlier_run"] == "run-a"


def test_same_shape_with_other_values_or_an_empty_list_is_not_drift():
    before = healthy_run("run-a")
    same_shape = healthy_run("run-b", output={"orders": [{"id": 7, "total": 3}, {"id": 8, "total": 4}]})
    empty = healthy_run("run-c", output={"orders": []})
    history = History.from_records([before])
    assert "tool_output_drift" not in kinds(detect(same_shape, history))
    assert "tool_output_drift" not in kinds(detect(empty, history))
    assert "tool_output_drift" not in kinds(detect(same_shape))  # no earlier run: nothing to drift from


def test_tool_interface_drift_when_the_schema_hash_changes():
    def run(run_id, digest):
        r = healthy_run(run_id)
        r.span_attributes["s2"] = schema_hash_attr(digest)
        return r

    history = History.from_records([run("run-a", "aaaa")])
    drift = [f for f in detect(run("run-b", "bbbb"), history) if f.kind == "tool_interface_drift"]
    assert drift and drift[0].evidence["before"] == "aaaa" and drift[0].evidence["after"] == "bbbb"
    assert "tool_interface_drift" not in kinds(detect(run("run-c", "aaaa"), history))


def test_wrong_tool_call_forms_against_the_definitions_sent_to_the_model():
    attrs = {f"s{i}": definitions_attr(("search_orders", SEARCH_SCHEMA)) for i in (1, 2, 3, 4)}
    run = record(
        llm(1, calls=[("search_order", {"customer": "acme"})]),
        llm(2, calls=[("search_orders", '{"customer": "acme"')]),
        llm(3, calls=[("search_orders", {"customer": 42, "page": 2})]),
        llm(4, calls=[("search_orders", {"limit": 3})]),
        attributes=attrs,
    )
    found = {f.steps[0]: f for f in detect(run) if f.layer == "model"}
    assert found[1].kind == "unknown_tool" and found[1].evidence["available"] == ["search_orders"]
    assert found[2].kind == "invalid_arguments_json"
    assert found[3].kind == "wrong_arguments"
    assert "argument 'customer' is int, expected string" in found[3].evidence["problems"]
    assert "unknown argument 'page'" in found[3].evidence["problems"]
    assert found[4].evidence["problems"] == ["missing required argument 'customer'"]


def test_a_well_formed_tool_call_is_not_flagged():
    run = record(
        llm(1, calls=[("search_orders", {"customer": "acme", "limit": 2})]),
        tool(2, "search_orders", {"customer": "acme", "limit": 2}, {"orders": []}, requested_by=1),
        llm(3, text="none"),
        attributes={"s1": definitions_attr(("search_orders", SEARCH_SCHEMA))},
    )
    assert detect(run) == []


def test_kept_going_after_a_final_answer():
    run = record(llm(1, text="The answer is 4."), tool(2, "calc", {"x": "2+2"}, 4), llm(3, text="4"))
    found = [f for f in detect(run) if f.kind == "kept_going_after_answer"]
    assert found and found[0].steps == (1, 2, 3) and found[0].evidence["answer"] == "The answer is 4."


def test_stopped_with_tool_calls_unanswered():
    run = record(llm(1, calls=[("search_orders", {"customer": "acme"}, "c1"), ("refund", {"id": 1}, "c2")]),
                 tool(2, "search_orders", {"customer": "acme"}, {"orders": []}, requested_by=1, call_id="c1"))
    found = [f for f in detect(run) if f.kind == "unanswered_tool_calls"]
    assert found and found[0].steps == (1,) and found[0].evidence["calls"] == [{"id": "c2", "name": "refund"}]
    assert "unanswered_tool_calls" not in kinds(detect(healthy_run()))
    assert "kept_going_after_answer" not in kinds(detect(healthy_run()))


def test_budget_breaches_name_the_step_that_went_over():
    run = healthy_run()
    for step, cost in zip(run.steps, (0.01, None, 0.02)):
        step["cost_usd"] = cost
    found = detect(run, thresholds=Thresholds(max_steps=2, max_tool_calls=0, max_tokens=200, max_cost_usd=0.015))
    budgets = {f.evidence["budget"]: f for f in found if f.kind == "budget_exceeded"}
    assert set(budgets) == {"steps", "tool_calls", "tokens", "cost_usd"}
    assert budgets["steps"].steps == (3,) and budgets["tool_calls"].steps == (2,)
    assert budgets["tokens"].steps == (3,) and budgets["cost_usd"].steps == (3,)
    assert budgets["cost_usd"].layer == "product"
    within = Thresholds(max_steps=3, max_tool_calls=1, max_tokens=240, max_cost_usd=0.05)
    assert detect(run, thresholds=within) == []


def test_a_sub_agent_answer_does_not_end_the_run_and_a_retried_request_is_no_loop():
    same = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    sub_answer = llm(2, text="sub-agent done", messages=same)
    sub_answer["parent_index"] = 1
    agent_step = {"index": 1, "type": "agent", "name": "invoke_agent helper", "span_id": "s1", "status": "ok", "parent_index": None}
    run = record(agent_step, sub_answer, tool(3, "save", {"x": 1}, {"ok": True}), llm(4, text="all done"))
    assert "kept_going_after_answer" not in kinds(detect(run))
    failed = llm(1, messages=same, status="error")
    assert "repeated_model_request" not in kinds(detect(record(failed, llm(2, messages=same, text="ok"))))
