"""An answer that says an action is done (cancelled, refunded, sent) which no model call of the run asked a tool
for: `action_not_taken` at the answer. Recorded through the real openai SDK, and on hand-built runs of a shop
desk, each with runs near it that must stay quiet."""

from __future__ import annotations

import json

import pytest

import agentotel
from agentotel.analysis.detectors import detect, findings, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool
from scripted import Shop, calls, default_order, says, scripted_client, support_agent

ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
OFFERED = definitions_attr(("get_order", ORDER), ("cancel_order", ORDER), ("issue_refund", ORDER), ("search_help", ORDER))
QUESTION = "Please cancel order W-1042 and refund me."


def _desk(answer: str, *, acted: tuple[str, ...] = (), status: str = "pending", question: str = QUESTION,
          earlier: list | None = None):
    """A shop desk run: the order looked up, then each tool in `acted` asked for and run, then `answer`."""
    given = [text_message("system", "You are the shop desk. Use the tools."), *(earlier or []), text_message("user", question)]
    steps = [llm(1, calls=[("get_order", {"order_id": "W-1042"}, "c1")], messages=given),
             tool(2, "get_order", {"order_id": "W-1042"}, {"order_id": "W-1042", "status": status}, requested_by=1, call_id="c1")]
    shown = [*given, {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "get_order", "arguments": {"order_id": "W-1042"}}]},
             {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": json.dumps({"status": status})}]}]
    for name in acted:
        index, call_id = len(steps) + 1, f"c{len(steps) + 1}"
        steps += [llm(index, calls=[(name, {"order_id": "W-1042"}, call_id)], messages=list(shown)),
                  tool(index + 1, name, {"order_id": "W-1042"}, {"ok": True}, requested_by=index, call_id=call_id)]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": name, "arguments": {"order_id": "W-1042"}}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": '{"ok": true}'}]}]
    steps.append(llm(len(steps) + 1, text=answer, messages=shown))
    return record(*steps, attributes={s["span_id"]: OFFERED for s in steps if s["type"] == "llm"}, task=question)


def _claims(run):
    found = detect(run)
    return [(f.index, f.layer, f.evidence["tool"]) for f in found if f.kind == "action_not_taken"], format_findings(found)


def test_an_answer_saying_it_cancelled_what_no_call_cancelled_is_action_not_taken_at_the_answer():
    claimed, shown = _claims(_desk("I've cancelled your order W-1042 and issued a full refund."))
    assert claimed == [(3, "model", "cancel_order")], shown
    both, _ = _claims(_desk("I've cancelled your order W-1042 and issued a full refund.", acted=("cancel_order", "issue_refund")))
    assert both == []


@pytest.mark.parametrize("answer", ["Your order W-1042 has been cancelled. A refund has been issued.",
                                    "Done! Cancelled your order W-1042 and refunded it.",
                                    "We have successfully canceled order W-1042; the refund was issued too."])
def test_the_claim_in_other_words_is_found_too(answer):
    claimed, shown = _claims(_desk(answer))
    assert [c[2] for c in claimed] == ["cancel_order"], shown


def test_the_action_taken_and_another_only_said_names_the_other():
    claimed, shown = _claims(_desk("Your order W-1042 has been cancelled and the refund was issued.", acted=("cancel_order",)))
    assert claimed == [(5, "model", "issue_refund")], shown


@pytest.mark.parametrize("answer", [
    "Order W-1042 is still pending. Would you like me to cancel it?",  # a question
    "I could not cancel order W-1042: it has already shipped.",  # denied
    "Once you confirm, order W-1042 will be cancelled and refunded.",  # deferred
    "I can cancel order W-1042 for you if you confirm.",  # offered
    "Order W-1042 is pending; I have looked it up for you.",  # a reading verb: no tool does it
])
def test_a_question_a_refusal_a_promise_or_a_report_claims_nothing(answer):
    claimed, shown = _claims(_desk(answer))
    assert claimed == [], shown


def test_words_the_run_was_given_are_no_claim_of_its_own():
    # the status came from the lookup; the user says they cancelled it themselves
    from_data, shown = _claims(_desk("Order W-1042 was cancelled already.", status="cancelled"))
    assert from_data == [], shown
    from_user, shown = _claims(_desk("Since you cancelled order W-1042 yourself, it is closed.",
                                     question="I cancelled order W-1042 myself, is it closed?"))
    assert from_user == [], shown


def test_a_cancel_asked_for_in_an_earlier_turn_is_taken():
    earlier = [text_message("user", "Cancel order W-1042."),
               {"role": "assistant", "parts": [{"type": "tool_call", "id": "c0", "name": "cancel_order", "arguments": {"order_id": "W-1042"}}]},
               {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c0", "response": '{"ok": true}'}]},
               text_message("assistant", "Done.")]
    claimed, shown = _claims(_desk("Yes, your order W-1042 has been cancelled.", question="Is it really done?", earlier=earlier))
    assert claimed == [], shown


def test_the_same_action_on_the_same_thing_through_another_tool_is_taken():
    offered = definitions_attr(("cancel_order", ORDER), ("cancel_pending_order", ORDER))
    run = record(llm(1, calls=[("cancel_pending_order", {"order_id": "W-1042"}, "c1")]),
                 tool(2, "cancel_pending_order", {"order_id": "W-1042"}, {"ok": True}, requested_by=1, call_id="c1"),
                 llm(3, text="I've cancelled your order W-1042."),
                 attributes={"s1": offered, "s3": offered})
    assert [f.kind for f in detect(run) if f.kind == "action_not_taken"] == []


# ---- recorded through the real openai SDK --------------------------------------------------------------------


@pytest.fixture
def recorded(tmp_path):
    directory = tmp_path / "traces"
    agentotel.instrument(directory)
    Shop.order, Shop.documents, Shop.card_declined = default_order(), [], False
    with scripted_client() as (client, model):

        def run(*turns):
            model.script(*turns)
            with agentotel.run("billing", task="Charge my card 20 for the express upgrade.") as handle:
                handle.output = support_agent(client, "Charge my card 20 for the express upgrade.")
            agentotel.flush()
            return findings(agentotel.open(directory), handle.id)

        yield run
    agentotel.shutdown()


def test_a_recorded_agent_claiming_a_charge_it_never_made_is_found_and_the_one_that_made_it_is_not(recorded):
    claimed = recorded(says("I've charged your card 20 for the express upgrade."))
    assert [(f.kind, f.index, f.layer, f.evidence["tool"]) for f in claimed] == [("action_not_taken", 1, "model", "charge_card")], \
        format_findings(claimed)
    done = recorded(calls(("charge_card", {"amount": 20})), says("I've charged your card 20 for the express upgrade."))
    assert done == [], format_findings(done)


# ---- a check that failed, reported as passing ------------------------------------------------------------------

PYTEST_FAILED = "F..\n=================================== FAILURES ===================================\n" \
                "____ test_parse ____\nAssertionError: assert 3 == 4\n=========== 1 failed, 2 passed in 0.12s ==========="
PYTEST_PASSED = "...\n=========== 3 passed in 0.10s ==========="


def _fixer(answer: str, *outputs: str, tool_name: str = "bash"):
    """A coding agent: edits a file, then runs the tests once per output in `outputs`, then answers."""
    steps = [llm(1, calls=[(tool_name, {"command": "sed -i 's/3/4/' parse.py"}, "c1")]),
             tool(2, tool_name, {"command": "sed -i 's/3/4/' parse.py"}, "", requested_by=1, call_id="c1")]
    for printed in outputs:
        index = len(steps) + 1
        steps += [llm(index, calls=[(tool_name, {"command": "python -m pytest tests/"}, f"c{index}")]),
                  tool(index + 1, tool_name, {"command": "python -m pytest tests/"}, printed, requested_by=index, call_id=f"c{index}")]
    steps.append(llm(len(steps) + 1, text=answer))
    return record(*steps, task="Fix the parser bug in parse.py.")


def _failed_checks(run):
    found = detect(run)
    return [(f.index, f.layer, f.evidence["check_step"]) for f in found if f.kind == "failed_check_ignored"], format_findings(found)


def test_an_answer_saying_the_tests_pass_after_they_failed_is_failed_check_ignored():
    claimed, shown = _failed_checks(_fixer("Fixed the off-by-one in parse.py; all tests pass now.", PYTEST_FAILED))
    assert claimed == [(5, "model", 4)], shown


def test_tests_run_again_and_passing_or_an_answer_owning_the_failure_are_quiet():
    for run in (_fixer("Fixed parse.py; all tests pass now.", PYTEST_FAILED, PYTEST_PASSED),
                _fixer("I changed parse.py but test_parse still fails: 1 failed, 2 passed.", PYTEST_FAILED),
                _fixer("I changed parse.py; once the fixture is updated the tests should pass.", PYTEST_FAILED),
                _fixer("Fixed parse.py; all tests pass now.")):  # never ran the tests: no check to contradict
        claimed, shown = _failed_checks(run)
        assert claimed == [], shown


def test_a_validator_tool_that_said_invalid_counts_as_a_failed_check():
    run = record(llm(1, calls=[("validate_config", {"path": "deploy.yaml"}, "c1")]),
                 tool(2, "validate_config", {"path": "deploy.yaml"}, {"valid": False, "problems": ["replicas must be >= 1"]},
                      requested_by=1, call_id="c1"),
                 llm(3, text="deploy.yaml is valid and ready to apply."), task="Check deploy.yaml before we apply it.")
    claimed, shown = _failed_checks(run)
    assert claimed == [(3, "model", 2)], shown


# ---- the model saying one tool and calling another --------------------------------------------------------------


def _said(text: str, called: str):
    run = record(llm(1, text=text, calls=[(called, {"order_id": "W-1042"}, "c1")]),
                 tool(2, called, {"order_id": "W-1042"}, {"ok": True}, requested_by=1, call_id="c1"),
                 llm(3, text="Order W-1042 is pending."), attributes={"s1": OFFERED, "s3": OFFERED})
    found = detect(run)
    return [(f.index, f.layer, f.evidence["said"]) for f in found if f.kind == "reasoning_action_mismatch"], format_findings(found)


def test_a_model_saying_it_will_look_the_order_up_and_cancelling_it_is_a_reasoning_action_mismatch():
    mismatch, shown = _said("First I'll look at the order with get_order before doing anything.", "cancel_order")
    assert mismatch == [(1, "model", "get_order")], shown
    spelled, shown = _said("Let me get order W-1042's details.", "cancel_order")
    assert spelled == [(1, "model", "get_order")], shown


@pytest.mark.parametrize("text", ["First I'll look at the order with get_order.",  # said and done
                                  "I will not use get_order again; cancelling as asked.",  # said it won't
                                  "get_order failed, so I'll use cancel_order directly.",  # named both
                                  "Let me handle the order now."])  # names no tool
def test_saying_what_it_does_or_naming_no_tool_is_no_mismatch(text):
    called = "get_order" if text.startswith("First") else "cancel_order"
    mismatch, shown = _said(text, called)
    assert mismatch == [], shown


def test_without_recorded_definitions_the_tools_earlier_runs_ran_are_the_agent_s():
    from agentotel.analysis._record import History

    history = History()  # what a run another instrumentation recorded learns from its earlier runs: every tool they ran
    history.add("run-a", "cancel_order", {"ok": True}, None, False, {"order_id": "W-7"})
    run = record(llm(1, calls=[("get_order", {"order_id": "W-1042"}, "c1")]),
                 tool(2, "get_order", {"order_id": "W-1042"}, {"status": "pending"}, requested_by=1, call_id="c1"),
                 llm(3, text="I've cancelled your order W-1042."))
    assert [f.kind for f in detect(run) if f.kind == "action_not_taken"] == []  # nothing says the agent can cancel
    assert [(f.kind, f.index) for f in detect(run, history) if f.kind == "action_not_taken"] == [("action_not_taken", 3)]
