"""Each detector over plain step data: a run that triggers it at the cause, in the right layer, and a run
near it that must not."""

from __future__ import annotations

import pytest

from agentotel._config import ConfigError
from agentotel.analysis._record import History
from agentotel.analysis.detectors import Policy, detect, format_findings, worst
from agentotel.analysis.policy import load_policy
from runs_build import definitions_attr, llm, record, schema_hash_attr, text_message, tool

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"customer": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["customer"],
    "additionalProperties": False,
}


def kinds(found):
    return [f.kind for f in found]


def only(found, kind):
    chosen = [f for f in found if f.kind == kind]
    assert len(chosen) == 1, format_findings(found)
    return chosen[0]


def healthy_run(run_id="run-b", output=None):
    return record(
        llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")]),
        tool(2, "search_orders", {"customer": "acme"}, output or {"orders": [{"id": 1, "total": 10.5}]}, requested_by=1, call_id="c1"),
        llm(3, text="acme has one order"),
        run_id=run_id,
    )


def test_a_healthy_run_has_no_findings():
    assert detect(healthy_run()) == []
    assert format_findings([]) == "no findings" and worst([]) is None


def test_the_model_asking_again_after_a_good_answer_is_a_model_loop_at_the_step_that_asked():
    steps = [llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")])]
    for n in range(3):
        steps += [tool(2 + 2 * n, "search_orders", {"customer": "acme"}, {"orders": []}, requested_by=1 + 2 * n, call_id=f"c{n + 1}"),
                  llm(3 + 2 * n, calls=[("search_orders", {"customer": "acme"}, f"c{n + 2}")] if n < 2 else (), text=None if n < 2 else "none")]
    loop = only(detect(record(*steps)), "repeated_tool_call")
    assert (loop.index, loop.layer) == (3, "model")
    assert loop.steps == (3, 2, 4, 6) and loop.evidence["count"] == 3 and loop.evidence["tool"] == "search_orders"


def test_the_loop_running_a_call_again_without_the_model_asking_is_a_workflow_loop():
    run = record(
        llm(1, calls=[("search_orders", {"customer": "acme"}, "c1")]),
        tool(2, "search_orders", {"customer": "acme"}, {"orders": [1]}, requested_by=1, call_id="c1"),
        tool(3, "search_orders", {"customer": "acme"}, {"orders": [1]}),
        llm(4, text="acme has an order"),
    )
    loop = only(detect(run), "repeated_tool_call")
    assert (loop.index, loop.layer) == (3, "workflow")


def test_polling_until_the_answer_changes_is_not_a_loop_but_a_policy_threshold_counts():
    polls = [tool(i, "job_status", {"id": 7}, {"state": s}) for i, s in ((1, "queued"), (2, "running"))]
    assert "repeated_tool_call" not in kinds(detect(record(*polls, llm(3, text="running"))))
    assert "repeated_tool_call" in kinds(detect(record(*polls, llm(3, text="running")), policy=Policy(repeated_tool_calls=2)))
    assert "repeated_tool_call" not in kinds(detect(record(*[tool(i, "search", {"q": f"c{i}"}, []) for i in range(1, 5)])))


def test_the_same_model_request_sent_again_is_flagged_where_it_was_sent_again():
    same = [text_message("user", "hi")]
    repeated = only(detect(record(llm(1, messages=same, text="a"), llm(2, messages=same, text="a"))), "repeated_model_request")
    assert (repeated.index, repeated.layer) == (2, "workflow")
    other = [text_message("user", "hello")]
    assert "repeated_model_request" not in kinds(detect(record(llm(1, messages=same, text="a"), llm(2, messages=other, text="b"))))
    retried = record(llm(1, messages=same, status="error", error="429 Too Many Requests"), llm(2, messages=same, text="ok"))
    assert detect(retried) == []  # a retried model call after an error is a recovery, not a loop and not a failure


def test_a_tool_failing_again_and_again_is_a_retry_loop_with_its_error():
    failing = [tool(i, "fetch", {"url": f"u{i}"}, None, status="error", error="TimeoutError: slow") for i in range(1, 4)]
    retry = only(detect(record(*failing, llm(4, text="The fetch failed: timeouts."))), "retry_loop")
    assert (retry.index, retry.layer) == (1, "tool") and "TimeoutError: slow" in retry.message
    recovered = failing[:2] + [tool(3, "fetch", {"url": "u3"}, {"ok": True}), llm(4, text="fetched")]
    assert detect(record(*recovered)) == []


def test_a_tool_error_the_model_went_on_past_is_found_at_the_model_step():
    run = record(
        llm(1, calls=[("charge_card", {"amount": 5}, "c1")]),
        tool(2, "charge_card", {"amount": 5}, None, status="error", call_id="c1", requested_by=1, error="PaymentError: declined"),
        llm(3, text="Payment done!", messages=[text_message("user", "pay"), {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "PaymentError: declined"}]}]),
    )
    ignored = only(detect(run), "tool_error_ignored")
    assert (ignored.index, ignored.layer) == (3, "tool") and ignored.evidence["error"] == "PaymentError: declined"
    hidden = record(*run.steps[:2], llm(3, text="Payment done!", messages=[text_message("user", "pay")]))
    assert only(detect(hidden), "tool_error_ignored").layer == "workflow"  # the loop kept the error from the model
    admitted = record(*run.steps[:2], llm(3, text="Sorry, the payment was declined."))
    assert detect(admitted) == []


def _timed_out_then(sent: dict, answer: str):
    shown = [text_message("user", "Book the cheapest courier for parcel P-7.")]
    response = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "TimeoutError: rates did not answer"}]}
    return record(
        llm(1, calls=[("get_rates", {"route": "LDN-MAN"}, "c1")], messages=shown),
        tool(2, "get_rates", {"route": "LDN-MAN"}, None, status="error", call_id="c1", requested_by=1, error="TimeoutError: rates did not answer"),
        llm(3, calls=[("book_courier", sent, "c2")], messages=[*shown, response]),
        tool(4, "book_courier", sent, {"booking": "BK-1", "status": "booked"}, call_id="c2", requested_by=3),
        llm(5, text=answer, messages=[*shown, response, {"role": "assistant", "parts": [
            {"type": "tool_call", "id": "c2", "name": "book_courier", "arguments": sent}]}, {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "c2", "response": '{"booking": "BK-1", "status": "booked"}'}]}]))


def test_a_value_sent_or_said_after_a_timeout_that_nothing_gave_is_the_models_invention():
    """The tool failed honestly; a carrier, a price or an id no call returned, sent by the next action or said in the
    answer, is the model's (TRAIL's hallucinated tool output): the layer goes with the invention."""
    invented = only(detect(_timed_out_then({"parcel": "P-7", "carrier": "Ridgeline Freight"}, "Booked BK-1.")), "tool_error_ignored")
    assert (invented.index, invented.layer) == (3, "model") and "Ridgeline Freight" in invented.message
    priced = only(detect(_timed_out_then({"parcel": "P-7"}, "Booked BK-1 at 48.50 EUR.")), "tool_error_ignored")
    assert (priced.index, priced.layer) == (3, "model") and "48.50" in priced.message
    honest = only(detect(_timed_out_then({"parcel": "P-7"}, "Booked BK-1.")), "tool_error_ignored")
    assert (honest.index, honest.layer) == (3, "tool")  # nothing made up: the failure went unsaid, the tool's


def test_a_lookup_of_the_next_item_after_a_rate_limited_one_is_no_retry_of_it():
    def run_of(second: str):
        reviews = {"reviews": [{"review_id": "RV-7", "reviewer_id": "REV-301"}, {"review_id": "RV-8", "reviewer_id": "REV-344"}]}
        shown = [text_message("user", "Check the reviewers of JAH-418.")]
        steps = [llm(1, calls=[("search_reviews", {"manuscript_id": "JAH-418"}, "c0")], messages=shown),
                 tool(2, "search_reviews", {"manuscript_id": "JAH-418"}, reviews, call_id="c0", requested_by=1),
                 llm(3, calls=[("get_reviewer", {"reviewer_id": "REV-301"}, "c1")], messages=shown),
                 tool(4, "get_reviewer", {"reviewer_id": "REV-301"}, None, status="error", call_id="c1", requested_by=3,
                      error="RuntimeError: 429 Too Many Requests, retry after 1s")]
        shown = [*shown, {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_reviewer", "arguments": {"reviewer_id": "REV-301"}}]},
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "429 Too Many Requests, retry after 1s"}]}]
        steps += [llm(5, calls=[("get_reviewer", {"reviewer_id": second}, "c2")], messages=shown),
                  tool(6, "get_reviewer", {"reviewer_id": second}, {"reviewer_id": second, "name": "Dr. Lind"}, call_id="c2", requested_by=5),
                  llm(7, text="Both reviews checked: no conflicts.", messages=shown)]
        return record(*steps)
    moved_on = only(detect(run_of("REV-344")), "tool_error_ignored")
    assert (moved_on.index, moved_on.layer) == (5, "model")  # the error said to retry
    assert [f for f in detect(run_of("REV-301")) if f.kind == "tool_error_ignored"] == []  # retried


def test_a_failed_run_always_gets_a_finding_with_its_error():
    crashed = record(llm(1, calls=[("charge_card", {"amount": 5}, "c1")]),
                     tool(2, "charge_card", {"amount": 5}, None, status="error", error="PaymentError: declined"), status="error")
    failed = only(detect(crashed), "run_failed")
    assert (failed.index, failed.layer, failed.severity) == (2, "tool", "error") and "PaymentError: declined" in failed.message
    rate_limited = record(llm(1, status="error", error="Error code: 429 - rate limit reached"))
    assert (only(detect(rate_limited), "run_failed").layer) == "model"
    abandoned = record(llm(1, text="partial"))
    abandoned.steps[0]["error_type"] = "abandoned_stream"
    assert only(detect(abandoned), "run_failed").layer == "workflow"
    own_code = record(llm(1, text="done"), status="error")
    own_code.run["error"] = "KeyError: 'x'"
    assert only(detect(own_code), "run_failed").message.endswith("KeyError: 'x'")


def test_output_drift_is_judged_against_a_schema_learned_from_every_earlier_run():
    earlier = [healthy_run(f"run-{n}", output={"orders": [{"id": 1, "delivered": d}]})
               for n, d in enumerate(("2026-01-02", None, "2026-01-05"))]
    history = History.from_records(earlier)
    optional = [healthy_run("new-1", output={"orders": [{"id": 1, "delivered": None}]}),
                healthy_run("new-2", output={"orders": [{"id": 3}]}),  # absent: it was sometimes null
                healthy_run("new-3", output={"orders": []}),
                healthy_run("new-4", output={"orders": [{"id": 2, "delivered": "2026-02-01"}], "page": 1})]
    for run in optional:
        assert "tool_output_drift" not in kinds(detect(run, history)), run.run_id
    moved = only(detect(healthy_run("bad", output={"data": {"orders": [{"id": 1}]}, "next": None}), history), "tool_output_drift")
    assert (moved.index, moved.layer) == (2, "tool")
    assert moved.evidence["missing"] == ["$.orders"] and moved.evidence["new_structures"] == ["$.data"]
    retyped = only(detect(healthy_run("bad2", output={"orders": [{"id": "1"}]}), history), "tool_output_drift")
    assert retyped.evidence["new_types"] == {"$.orders[].id": {"before": ["number"], "now": "string"}}
    assert "tool_output_drift" not in kinds(detect(healthy_run("first")))  # nothing learned yet


def test_tool_interface_drift_when_the_schema_hash_changes():
    def run(run_id, digest):
        r = healthy_run(run_id)
        r.span_attributes["s2"] = schema_hash_attr(digest)
        return r

    history = History.from_records([run("run-a", "aaaa")])
    drift = only(detect(run("run-b", "bbbb"), history), "tool_interface_drift")
    assert drift.evidence["before"] == "aaaa" and drift.evidence["after"] == "bbbb" and drift.severity == "info"
    assert detect(run("run-c", "aaaa"), history) == []


def test_wrong_tool_call_forms_against_the_definitions_sent_to_the_model():
    attrs = {f"s{i}": definitions_attr(("search_orders", SEARCH_SCHEMA)) for i in (1, 2, 3, 4)}
    run = record(
        llm(1, calls=[("search_order", {"customer": "acme"})]),
        llm(2, calls=[("search_orders", '{"customer": "acme"')]),
        llm(3, calls=[("search_orders", {"customer": 42, "page": 2})]),
        llm(4, calls=[("search_orders", {"limit": 3})]),
        attributes=attrs,
    )
    found = {f.index: f for f in detect(run) if f.layer in ("model", "tool")}
    assert found[1].kind == "unknown_tool" and found[1].evidence["available"] == ["search_orders"]
    assert found[2].kind == "invalid_arguments_json"
    assert found[3].kind == "wrong_arguments"
    assert "argument 'customer' is int, expected string" in found[3].evidence["problems"]
    assert "unknown argument 'page'" in found[3].evidence["problems"]
    assert found[4].evidence["problems"] == ["missing required argument 'customer'"]


def test_a_well_formed_tool_call_is_not_flagged():
    run = record(
        llm(1, calls=[("search_orders", {"customer": "acme", "limit": 2}, "c1")]),
        tool(2, "search_orders", {"customer": "acme", "limit": 2}, {"orders": []}, requested_by=1, call_id="c1"),
        llm(3, text="acme has no orders"),
        attributes={"s1": definitions_attr(("search_orders", SEARCH_SCHEMA))},
    )
    assert detect(run) == []


def test_kept_going_after_a_final_answer_is_found_where_the_loop_went_on():
    run = record(llm(1, calls=[("calc", {"x": "2+2"}, "c1")]), tool(2, "calc", {"x": "2+2"}, 4, requested_by=1, call_id="c1"),
                 llm(3, text="The answer is 4."), tool(4, "save", {"x": 4}, {"ok": True}), llm(5, text="Saved 4."))
    found = only(detect(run), "kept_going_after_answer")
    assert (found.index, found.layer) == (4, "workflow") and found.evidence["answer"] == "The answer is 4."


def test_a_text_agent_thinking_aloud_between_tool_calls_is_not_answering():
    # ReAct and code agents ask for tools in text: only their last model step is the answer.
    run = record(llm(1, text="Thought: look it up. Action: calc 2+2"), tool(2, "calc", {"x": "2+2"}, 4),
                 llm(3, text="Thought: it is 4. Final Answer: 4"))
    assert detect(run) == []


def test_tool_calls_left_unanswered_at_any_step():
    mid_run = record(
        llm(1, calls=[("search_orders", {"customer": "acme"}, "c1"), ("refund", {"id": 1}, "c2")]),
        tool(2, "search_orders", {"customer": "acme"}, {"orders": []}, requested_by=1, call_id="c1"),
        llm(3, text="acme has no orders"),
    )
    found = only(detect(mid_run), "unanswered_tool_calls")
    assert (found.index, found.layer) == (3, "workflow") and found.evidence["calls"] == [{"id": "c2", "name": "refund"}]
    assert "final answer" in found.message
    # Results sent back to the model count as answered even when the tool itself was not instrumented.
    answered = [text_message("user", "x"), {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}]}]
    assert detect(record(llm(1, calls=[("lookup", {"id": 1}, "c1")]), llm(2, messages=answered, text="done"))) == []


def test_budgets_point_at_the_step_that_caused_the_excess():
    run = record(
        llm(1, calls=[("search_docs", {"q": "refunds"}, "c1")], tokens=(200, 20)),
        tool(2, "search_docs", {"q": "refunds"}, [{"id": f"d{n}", "text": "lorem ipsum " * 40} for n in range(40)], requested_by=1, call_id="c1"),
        llm(3, text="Refunds take 5 days.", tokens=(5200, 30)),
    )
    budget = only(detect(run, policy=Policy(max_tokens=3000)), "budget_exceeded")
    assert (budget.index, budget.layer) == (2, "product") and budget.evidence["over_at"] == 3
    counted = detect(healthy_run(), policy=Policy(max_steps=2, max_tool_calls=0))
    assert {(f.evidence["budget"], f.index, f.layer) for f in counted} == {("steps", 3, "product"), ("tool_calls", 1, "product")}
    assert detect(healthy_run(), policy=Policy(max_steps=3, max_tool_calls=1, max_tokens=240)) == []


def test_a_sub_agent_answer_does_not_end_the_run():
    sub_answer = llm(2, text="sub-agent done", parent=1)
    agent_step = {"index": 1, "type": "agent", "name": "invoke_agent helper", "span_id": "s1", "status": "ok", "parent_index": None}
    run = record(agent_step, sub_answer, tool(3, "save", {"x": 1}, {"ok": True}), llm(4, text="all done"))
    assert detect(run) == []


def test_history_dropped_between_turns_is_a_memory_finding():
    first = [text_message("user", "Refund order A-1042"), text_message("assistant", "Which reason?"), text_message("user", "damaged")]
    kept = first + [text_message("assistant", "Done."), text_message("user", "thanks, and the invoice?")]
    dropped = [first[0], text_message("user", "thanks, and the invoice?")]
    good = record(llm(1, messages=first, text="Done."), llm(2, messages=kept, text="Sent."))
    assert detect(good) == []
    lost = only(detect(record(llm(1, messages=first, text="Done."), llm(2, messages=dropped, text="Sent."))), "history_lost")
    assert (lost.index, lost.layer) == (2, "memory") and lost.evidence["lost"][0]["text"] == "Which reason?"


def test_instructions_changed_mid_run_is_a_prompt_finding_but_a_clock_in_the_prompt_is_not():
    def turn(index, system):
        said = [text_message("user", "hi")] + [text_message("assistant", "ok"), text_message("user", "and?")] * (index - 1)
        return llm(index, messages=[text_message("system", system), *said], text="ok")

    changed = only(detect(record(turn(1, "You are a refunds agent. Never refund twice."), turn(2, "You are a refunds agent."))),
                   "instructions_changed")
    assert (changed.index, changed.layer) == (2, "prompt")
    assert detect(record(turn(1, "Agent. Time 10:01"), turn(2, "Agent. Time 10:02"))) == []


def test_policy_forbidden_tools_and_required_evidence():
    policy = Policy(forbidden_tools=("refund",), required_tools=("lookup_order",))
    run = record(llm(1, calls=[("refund", {"id": 1}, "c1")]), tool(2, "refund", {"id": 1}, {"ok": True}, requested_by=1, call_id="c1"),
                 llm(3, text="Refunded."))
    found = detect(run, policy=policy)
    assert (only(found, "forbidden_tool").index, only(found, "forbidden_tool").layer) == (1, "product")  # the model chose it
    assert only(found, "missing_evidence").index == 3 and worst(found) == "error"
    compliant = record(llm(1, calls=[("lookup_order", {"id": 1}, "c1")]), tool(2, "lookup_order", {"id": 1}, {"ok": True}, requested_by=1, call_id="c1"),
                       llm(3, text="Order found."))
    assert detect(compliant, policy=policy) == []
    assert detect(run, policy=Policy(ignore=("forbidden_tool",), forbidden_tools=("refund",))) == []


def test_policy_per_agent_from_pyproject_and_agentotel_toml(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.agentotel.check]\nmax_tool_calls = 5\nforbidden_tools = ["rm"]\n'
        '[tool.agentotel.check.agents.orders]\nmax_tool_calls = 2\nrequired-tools = ["lookup"]\n')
    nested = tmp_path / "src" / "pkg"
    nested.mkdir(parents=True)
    orders = load_policy("orders", start=nested)
    assert (orders.max_tool_calls, orders.forbidden_tools, orders.required_tools) == (2, ("rm",), ("lookup",))
    assert load_policy("other", start=nested).max_tool_calls == 5
    (nested / "agentotel.toml").write_text("[check]\nmax_steps = 9\n")
    assert load_policy("orders", start=nested).max_steps == 9 and load_policy("orders", start=nested).max_tool_calls is None
    (nested / "agentotel.toml").write_text("[check]\nmax_stepz = 9\n")
    with pytest.raises(ConfigError, match="unknown setting 'max_stepz'"):
        load_policy("orders", start=nested)


def test_acting_before_the_evidence_the_policy_requires_first():
    policy = Policy.from_mapping({"required_before": {"update_address": ["check_identity"]}})
    hasty = record(llm(1, calls=[("update_address", {"to": "x"}, "c1")]),
                   tool(2, "update_address", {"to": "x"}, {"ok": True}, requested_by=1, call_id="c1"), llm(3, text="Updated."))
    found = only(detect(hasty, policy=policy), "missing_evidence")
    assert (found.index, found.layer, found.severity) == (1, "product", "error")
    careful = record(llm(1, calls=[("check_identity", {"who": "me"}, "c1")]),
                     tool(2, "check_identity", {"who": "me"}, {"ok": True}, requested_by=1, call_id="c1"),
                     llm(3, calls=[("update_address", {"to": "x"}, "c2")]),
                     tool(4, "update_address", {"to": "x"}, {"ok": True}, requested_by=3, call_id="c2"), llm(5, text="Updated."))
    assert detect(careful, policy=policy) == []
