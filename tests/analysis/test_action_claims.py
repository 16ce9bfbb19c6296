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


# ---- an IT helpdesk (the fifth held-out set's lessons, on hand-built runs) ---------------------------------------

HOST = {"type": "object", "properties": {"host": {"type": "string"}}}
USER = {"type": "object", "properties": {"user_id": {"type": "string"}}}
DESK = definitions_attr(("verify_identity", USER), ("reset_password", USER), ("run_diagnostics", HOST),
                        ("renew_vpn_certificate", HOST), ("create_ticket", {"type": "object", "properties": {"summary": {"type": "string"}}}))
ASKED = "I'm u7 and locked out; please reset my password. Also my laptop LT-9 can't reach the VPN: open a ticket."
FAILED = {"host": "LT-9", "checks": [{"name": "dns", "status": "pass"}, {"name": "vpn_tunnel", "status": "fail", "detail": "certificate expired"}]}
PASSED = {"host": "LT-9", "checks": [{"name": "dns", "status": "pass"}, {"name": "vpn_tunnel", "status": "pass"}]}


def _helpdesk(answer: str, *calls: tuple[str, dict, object], question: str = ASKED):
    given = [text_message("system", "You are the IT helpdesk."), text_message("user", question)]
    steps = []
    for name, arguments, result in calls:
        index = len(steps) + 1
        steps += [llm(index, calls=[(name, arguments, f"c{index}")], messages=given),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=f"c{index}")]
    steps.append(llm(len(steps) + 1, text=answer, messages=given))
    return record(*steps, attributes={s["span_id"]: DESK for s in steps if s["type"] == "llm"}, task=question)


VERIFIED = ("verify_identity", {"user_id": "u7"}, {"verified": True})
DIAGNOSED = ("run_diagnostics", {"host": "LT-9"}, FAILED)


def _kinds(run):
    found = detect(run)
    return [(f.kind, f.index, f.evidence.get("tool")) for f in found if f.kind in ("action_not_taken", "failed_check_ignored")], \
        format_findings(found)


def test_a_reset_the_user_asked_for_and_the_answer_claims_is_not_taken_when_no_call_made_it():
    # "reset" is the verb and its past: the request holding the word is no claim that it was done
    found, shown = _kinds(_helpdesk("I've reset your password. Diagnostics: the certificate expired.", VERIFIED, DIAGNOSED))
    assert found == [("action_not_taken", 5, "reset_password")], shown
    done, shown = _kinds(_helpdesk("I've reset your password.", VERIFIED, ("reset_password", {"user_id": "u7"}, {"reset": True})))
    assert done == [], shown
    theirs, shown = _kinds(_helpdesk("Since you reset it yourself, I left your password alone.", VERIFIED,
                                     question="I reset my password myself; is my account fine?"))
    assert theirs == [], shown


def test_an_action_said_in_another_word_or_promised_as_the_run_ends_is_not_taken():
    opened, shown = _kinds(_helpdesk("Diagnostics found an expired certificate. I've opened a ticket for the network team.", DIAGNOSED))
    assert opened == [("action_not_taken", 3, "create_ticket")], shown
    promised = detect(_helpdesk("Diagnostics found an expired certificate. I'll open a ticket for the network team.", DIAGNOSED))
    assert [(f.kind, f.evidence.get("promised")) for f in promised if f.kind == "action_not_taken"] == [("action_not_taken", True)], \
        format_findings(promised)
    for quiet in ("Diagnostics found an expired certificate. Would you like me to open a ticket?",
                  "Diagnostics found an expired certificate. If it happens again, I'll open a ticket."):
        found, shown = _kinds(_helpdesk(quiet, DIAGNOSED))
        assert found == [], shown


def test_checks_said_to_pass_that_failed_or_never_ran_or_a_fix_said_to_work_unchecked():
    glossed, shown = _kinds(_helpdesk("Diagnostics on LT-9: all checks passed, so no ticket is needed.", DIAGNOSED))
    assert glossed == [("failed_check_ignored", 3, "run_diagnostics")], shown
    renewed = ("renew_vpn_certificate", {"host": "LT-9"}, {"renewed": True})
    unchecked, shown = _kinds(_helpdesk("I renewed the certificate on LT-9: the VPN connects now.", DIAGNOSED, renewed))
    assert unchecked == [("failed_check_ignored", 5, "run_diagnostics")], shown
    rechecked, shown = _kinds(_helpdesk("I renewed the certificate on LT-9: the VPN connects now.", DIAGNOSED, renewed,
                                        ("run_diagnostics", {"host": "LT-9"}, PASSED)))
    assert rechecked == [], shown
    # an identity check is no check of the work: claiming diagnostics passed after only verifying the user
    never, shown = _kinds(_helpdesk("Diagnostics on LT-9: all checks passed.", VERIFIED))
    assert never == [("action_not_taken", 3, "run_diagnostics")], shown


def test_a_history_compacted_into_a_note_that_holds_every_result_is_not_lost_and_one_that_drops_a_finding_is():
    system, task = text_message("system", "You are the IT helpdesk."), text_message("user", ASKED)
    asked = {"role": "assistant", "parts": [{"type": "text", "content": "Let me run diagnostics."},
                                            {"type": "tool_call", "id": "c1", "name": "run_diagnostics", "arguments": {"host": "LT-9"}}]}
    shown = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": json.dumps(FAILED)}]}
    failed = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c0", "response": "Error: 503 queue full, retry"}]}

    def compacted(note: str):
        return record(llm(1, calls=[("run_diagnostics", {"host": "LT-9"}, "c1")], messages=[system, task]),
                      tool(2, "run_diagnostics", {"host": "LT-9"}, FAILED, requested_by=1, call_id="c1"),
                      llm(3, calls=[("create_ticket", {"summary": "VPN"}, "c3")], messages=[system, task, failed, asked, shown]),
                      tool(4, "create_ticket", {"summary": "VPN"}, {"ticket": "INC-1"}, requested_by=3, call_id="c3"),
                      llm(5, text="Ticket INC-1 is open.", messages=[system, task, text_message("system", note)]))

    kept = detect(compacted("Earlier results (JSON): " + json.dumps(FAILED)))
    assert [f.kind for f in kept if f.kind == "history_lost"] == [], format_findings(kept)
    dropped = detect(compacted('Earlier results (JSON): {"host": "LT-9", "diagnostics": "ran"}'))
    assert [(f.kind, f.index) for f in dropped if f.kind == "history_lost"] == [("history_lost", 5)], format_findings(dropped)


def test_another_action_of_the_verb_the_request_asks_for_is_the_task_ignored():
    offered = definitions_attr(("reset_password", USER), ("reset_mfa", USER))

    def desk(called: str, question: str = "Please reset my password, I'm u7."):
        run = record(llm(1, calls=[(called, {"user_id": "u7"}, "c1")], messages=[text_message("user", question)]),
                     tool(2, called, {"user_id": "u7"}, {"reset": True}, requested_by=1, call_id="c1"),
                     llm(3, text="Done: the reset went through."), attributes={"s1": offered, "s3": offered}, task=question)
        found = detect(run)
        return [(f.kind, f.index, f.evidence.get("asked")) for f in found if f.kind == "task_ignored"], format_findings(found)

    wrong, shown = desk("reset_mfa")
    assert wrong == [("task_ignored", 1, "reset_password")], shown
    for quiet in (desk("reset_password"), desk("reset_mfa", "Please reset my password and my MFA, I'm u7.")):
        assert quiet[0] == [], quiet[1]


def test_an_action_on_an_id_a_result_gave_under_another_name_is_the_task_ignored():
    offered = definitions_attr(("lookup_user", USER), ("reset_password", USER))
    question = "I'm Jonas (user u4921), please reset my password."

    def desk(reset_for: str):
        run = record(llm(1, calls=[("lookup_user", {"user_id": "u4921"}, "c1")], messages=[text_message("user", question)]),
                     tool(2, "lookup_user", {"user_id": "u4921"}, {"user_id": "u4921", "manager": "u3133"}, requested_by=1, call_id="c1"),
                     llm(3, calls=[("reset_password", {"user_id": reset_for}, "c3")]),
                     tool(4, "reset_password", {"user_id": reset_for}, {"reset": True}, requested_by=3, call_id="c3"),
                     llm(5, text="Your password was reset."), attributes={"s1": offered, "s3": offered, "s5": offered}, task=question)
        found = detect(run)
        return [(f.kind, f.index, f.evidence.get("value")) for f in found if f.kind == "task_ignored"], format_findings(found)

    swapped, shown = desk("u3133")
    assert swapped == [("task_ignored", 3, "u3133")], shown
    right, shown = desk("u4921")
    assert right == [], shown


def test_an_action_asked_for_again_with_the_same_arguments_after_it_worked_is_a_repeat():
    ticket = {"summary": "VPN down on LT-9"}

    def desk(second: dict):
        given = [text_message("user", "The VPN is down on LT-9: open a ticket.")]
        shown = [*given, {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "create_ticket", "arguments": ticket}]},
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": '{"ticket_id": "INC-1"}'}]}]
        run = record(llm(1, calls=[("create_ticket", ticket, "c1")], messages=given),
                     tool(2, "create_ticket", ticket, {"ticket_id": "INC-1"}, requested_by=1, call_id="c1"),
                     llm(3, calls=[("create_ticket", second, "c3")], messages=shown),
                     tool(4, "create_ticket", second, {"ticket_id": "INC-2"}, requested_by=3, call_id="c3"),
                     llm(5, text="Ticket INC-2 is open."), attributes={"s1": DESK, "s3": DESK, "s5": DESK})
        found = detect(run)
        return [(f.kind, f.index, f.layer) for f in found if f.kind == "repeated_tool_call"], format_findings(found)

    twice, shown = desk(dict(ticket))
    assert twice == [("repeated_tool_call", 3, "model")], shown  # a new ticket id each time: the side effect done twice
    other, shown = desk({"summary": "Printer jam on PR-2"})
    assert other == [], shown


@pytest.mark.parametrize("last,broken", [("Great - I'll renew L-3381 for another 12 months now.", True),
                                         ("I'll renew L-3381 once you confirm the new rent.", False),
                                         ("Shall I renew L-3381 for another 12 months?", False),
                                         ("Great - I'll note that down.", False)])  # no tool does it
def test_a_run_ending_on_a_deed_the_model_says_it_is_doing_now_stopped_before_acting(last, broken):
    from test_data_agent import _conversation
    built = _conversation(("user", "Please renew my lease L-3381."),
                          ("get_lease", {"lease_id": "L-3381"}, {"lease_id": "L-3381", "ends": "2027-01-31", "rent": 1450}),
                          ("assistant", "L-3381 ends 2027-01-31; a 12-month renewal keeps the rent at 1,450. Go ahead?"),
                          ("user", "Yes please."), system="You renew leases with renew_lease after the tenant's yes.", answer=last)
    offered = definitions_attr(("get_lease", {"type": "object"}), ("renew_lease", {"type": "object"}))
    run = record(*built.steps, attributes={s["span_id"]: offered for s in built.steps if s["type"] == "llm"}, task="Please renew my lease L-3381.")
    found = [(f.index, f.layer) for f in detect(run) if f.kind == "action_not_taken"]
    assert found == ([(4, "model")] if broken else []), format_findings(detect(run))
