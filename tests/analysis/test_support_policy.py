"""A support agent's conversation over several user turns (heldout8's misses): what the user agreed to and what they
corrected, against what the agent then did - each fault beside the near twin that is none. Hand-built runs."""

from __future__ import annotations

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, record
from test_data_agent import ASK_REFUND, LOOKED_UP, REFUND, REFUNDED_1043, _conversation

LAMP = {"order_id": "#1034", "item": "desk lamp", "amount": 35.0, "status": "delivered", "delivered_at": "2026-11-20"}
OFFER_1043 = ("assistant", "Order #1043 (blue kettle, 49.90 USD) was delivered on 2026-11-24, within the 30-day window. "
                           "Shall I refund 49.90 USD to your original payment method?")
YES = ("user", "Yes, please go ahead.")


def _found(run, kind):
    return [(f.index, f.layer) for f in detect(run) if f.kind == kind], format_findings(detect(run))


def test_an_action_on_another_order_than_the_statement_the_user_said_yes_to_is_a_wrong_target():
    # the order stands at the statement's start, the verb with the amount only at its end
    sibling = ("refund", {"order_id": "#1034", "amount": 49.9}, dict(REFUNDED_1043, order_id="#1034"))
    found, report = _found(_conversation(ASK_REFUND, LOOKED_UP, OFFER_1043, YES, sibling), "wrong_target")
    assert found == [(4, "model")], report
    assert _found(_conversation(ASK_REFUND, LOOKED_UP, OFFER_1043, YES, REFUND), "wrong_target")[0] == []
    # a statement naming both orders leaves which one open: no target was agreed
    both = ("assistant", "Order #1043 is the kettle and #1034 the lamp. Shall I refund 49.90 USD?")
    assert _found(_conversation(ASK_REFUND, LOOKED_UP, both, YES, sibling), "wrong_target")[0] == []
    # a statement without the action's verb agreed to nothing about it
    told = ("assistant", "Order #1043 (blue kettle, 49.90 USD) was delivered on 2026-11-24. Anything else?")
    assert _found(_conversation(ASK_REFUND, LOOKED_UP, told, YES, sibling), "wrong_target")[0] == []


def test_the_users_correction_answered_about_the_order_they_named_before_is_a_correction_ignored():
    not_a_lamp = ("assistant", "Order #1043 is the blue kettle (49.90 USD), not a lamp. Did you mean another order?")
    corrected = ("user", "Oh sorry, I meant the desk lamp, order #1034.")
    ask = ("user", "Please refund order #1043 - the lamp flickers.")
    found, report = _found(_conversation(ask, LOOKED_UP, not_a_lamp, corrected, OFFER_1043, YES, REFUND), "correction_ignored")
    assert found == [(4, "model")], report
    # followed: the next words are about the order the user named last
    followed = ("assistant", "Order #1034 (desk lamp, 35.00 USD) is within the 30-day window. Shall I refund 35.00 USD?")
    lamp_refund = ("refund", {"order_id": "#1034", "amount": 35.0}, dict(REFUNDED_1043, order_id="#1034", amount=35.0))
    run = _conversation(ask, LOOKED_UP, not_a_lamp, corrected, ("get_order", {"order_id": "#1034"}, LAMP), followed, YES, lamp_refund)
    assert _found(run, "correction_ignored")[0] == [], _found(run, "correction_ignored")[1]
    # both named in the reply (the model sets them side by side), or a user turn naming no order: no correction
    side_by_side = ("assistant", "Order #1034 is the desk lamp; #1043 was the kettle. Shall I refund the lamp, 35.00 USD?")
    assert _found(_conversation(ask, LOOKED_UP, not_a_lamp, corrected, side_by_side), "correction_ignored")[0] == []
    assert _found(_conversation(ask, LOOKED_UP, not_a_lamp, ("user", "Yes, the kettle."), OFFER_1043), "correction_ignored")[0] == []


def _went_past(error: str, *before, arguments=None):
    """get_order failing with `error` after the turns `before`, and the model telling the order's state anyway."""
    from runs_build import llm, record, text_message, tool

    arguments = arguments or {"order_id": "#1043"}
    steps, shown = [], [text_message("system", "You are the support agent."), text_message("user", "Where is order #1043?")]
    for name, args, result in before:
        n = len(steps) + 1
        steps += [llm(n, calls=[(name, args, f"c{n}")], messages=list(shown)),
                  tool(n + 1, name, args, result, requested_by=n, call_id=f"c{n}")]
        shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{n}", "name": name, "arguments": args}]},
                  {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{n}", "response": result}]}]
    n = len(steps) + 1
    steps += [llm(n, calls=[("get_order", arguments, f"c{n}")], messages=list(shown)),
              tool(n + 1, "get_order", arguments, None, status="error", error=error, requested_by=n, call_id=f"c{n}")]
    shown += [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{n}", "name": "get_order", "arguments": arguments}]},
              {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{n}", "response": error}]}]
    steps.append(llm(n + 2, text="Order #1043 is on its way and arrives on Friday.", messages=shown))
    return record(*steps)


def test_an_error_about_the_calls_own_input_gone_past_is_the_models_and_the_tools_own_failure_the_tools():
    # the tool answered rightly about what the call asked (no such order, a state that forbids it): the model's
    for error in ("LookupError: no order #1043 for this customer", "ValueError: order #1043 has shipped and cannot be changed"):
        assert _found(_went_past(error), "tool_error_ignored")[0] == [(3, "model")], _found(_went_past(error), "tool_error_ignored")[1]
    # a long argument: the error quotes a name the query uses
    query = {"query": "SELECT o.total FROM orders o WHERE o.id = 1043"}
    run = _went_past('BinderException: Table "o" does not have a column named "total"', arguments=query)
    assert _found(run, "tool_error_ignored")[0] == [(3, "model")], _found(run, "tool_error_ignored")[1]
    # the tool could not do its work, whatever was asked (even naming the call's own order): the tool's
    for error in ("TimeoutError: order service timed out fetching #1043", "PermissionError: permission denied for #1043",
                  "ConnectionError: orders-db unreachable", "RuntimeError: internal error"):
        assert _found(_went_past(error), "tool_error_ignored")[0] == [(3, "tool")], _found(_went_past(error), "tool_error_ignored")[1]
    # said not to exist, though an earlier result of the run gave it: the tools disagree - the tool's side
    listed = ("list_orders", {"user_id": "U-501"}, [{"order_id": "#1043", "status": "shipped"}])
    run = _went_past("LookupError: no order #1043", listed)
    assert _found(run, "tool_error_ignored")[0] == [(5, "tool")], _found(run, "tool_error_ignored")[1]


def _offering(run):
    """The run with get_order and refund offered to its model calls (their recorded definitions)."""
    offered = definitions_attr(("get_order", {"type": "object"}), ("refund", {"type": "object"}))
    return record(*run.steps, attributes={s["span_id"]: offered for s in run.steps if s["type"] == "llm"}, task=run.run["task"])


def test_a_run_ending_on_the_promise_of_an_action_after_the_users_yes_is_an_action_not_taken():
    for promise in ("Thank you! I'll process the refund of 49.90 USD for order #1043 now.", "I will refund it right away."):
        run = _offering(_conversation(ASK_REFUND, LOOKED_UP, OFFER_1043, YES, answer=promise))
        assert _found(run, "action_not_taken")[0] == [(4, "model")], _found(run, "action_not_taken")[1]
    # done, asked, or promised under a condition: no promise left hanging
    done = _offering(_conversation(ASK_REFUND, LOOKED_UP, OFFER_1043, YES, REFUND, answer="Done: I refunded 49.90 USD for order #1043."))
    assert _found(done, "action_not_taken")[0] == [], _found(done, "action_not_taken")[1]
    for answer in ("I'll refund 49.90 USD to your card - shall I go ahead?", "I'll process the refund once you confirm."):
        run = _offering(_conversation(ASK_REFUND, LOOKED_UP, answer=answer))
        assert _found(run, "action_not_taken")[0] == [], _found(run, "action_not_taken")[1]


def test_an_action_the_instructions_keep_for_another_agent_done_by_this_one_is_a_role_overstepped():
    triage = "You are the triage agent. Identify the user and hand refunds over. Only the refunds agent issues refunds."
    run = _conversation(ASK_REFUND, LOOKED_UP, REFUND, system=triage)
    assert _found(run, "role_overstepped")[0] == [(3, "model")], _found(run, "role_overstepped")[1]
    for system in ("You are the refunds agent. Only the refunds agent issues refunds.",  # its own job
                   "You are the support agent. Only refund orders delivered within 30 days.",  # a condition, no role
                   "You are the triage agent. Only a manager may issue refunds over 500 USD."):  # a condition on it
        run = _conversation(ASK_REFUND, LOOKED_UP, REFUND, system=system)
        assert _found(run, "role_overstepped")[0] == [], (system, _found(run, "role_overstepped")[1])


RULES = ("You are the support agent. Policy: 1. Identify the user by email (get_user). 2. Refunds only within 30 days of "
         "delivery. 3. One exchange per order. 4. Never reveal another customer's data (name, address, orders). "
         "Today is 2026-12-03.")
BLANKET = {"order_id": "#1022", "user_id": "U-501", "item": "wool blanket", "amount": 89.0, "delivered_at": "2026-10-12",
           "exchanges": 0}
ASK_1022 = ("user", "I'd like a refund for order #1022, the wool blanket.")


def test_an_action_the_written_rule_forbids_on_the_facts_read_is_a_policy_violated():
    late = _conversation(ASK_1022, ("get_order", {"order_id": "#1022"}, BLANKET),
                         ("refund", {"order_id": "#1022", "amount": 89.0}, {"status": "refunded"}), system=RULES)
    found, report = _found(late, "policy_violated")
    assert found == [(3, "model")] and "52 days" in report, report
    in_time = dict(BLANKET, delivered_at="2026-11-20")
    run = _conversation(ASK_1022, ("get_order", {"order_id": "#1022"}, in_time),
                        ("refund", {"order_id": "#1022", "amount": 89.0}, {"status": "refunded"}), system=RULES)
    assert _found(run, "policy_violated")[0] == [], _found(run, "policy_violated")[1]
    # a second exchange where one per order is the rule; the first is none
    swap = ("exchange", {"order_id": "#1022", "new_item": "wool blanket, grey"}, {"status": "exchanged"})
    for exchanges, expected in ((1, [(3, "model")]), (0, [])):
        run = _conversation(ASK_1022, ("get_order", {"order_id": "#1022"}, dict(BLANKET, delivered_at="2026-11-20",
                                                                                exchanges=exchanges)), swap, system=RULES)
        assert _found(run, "policy_violated")[0] == expected, _found(run, "policy_violated")[1]
    # no window written: nothing to break
    run = _conversation(ASK_1022, ("get_order", {"order_id": "#1022"}, BLANKET),
                        ("refund", {"order_id": "#1022", "amount": 89.0}, {"status": "refunded"}), system=SUPPORT_PLAIN)
    assert _found(run, "policy_violated")[0] == [], _found(run, "policy_violated")[1]


SUPPORT_PLAIN = "You are the support agent. Refund broken items."


def test_another_customers_record_told_to_the_user_is_a_policy_violated():
    user = ("get_user", {"email": "maria.lopez@example.com"}, {"user_id": "U-501", "name": "Maria Lopez"})
    theirs = ("get_order", {"order_id": "#1050"}, {"order_id": "#1050", "user_id": "U-502", "item": "espresso machine",
                                                   "ship_to": "Tom Baker, 14 Elm Street, Leeds LS6 2AB"})
    ask = ("user", "Where was order #1050 delivered, and to whom? maria.lopez@example.com")
    told = _conversation(ask, user, theirs, answer="Order #1050 was delivered to Tom Baker, 14 Elm Street, Leeds LS6 2AB.",
                         system=RULES)
    found, report = _found(told, "policy_violated")
    assert found == [(5, "model")] and "Tom Baker" in report, report
    for answer, system in (("Order #1050 is not on your account, so I can't share who it was for.", RULES),
                           ("Order #1050 was delivered to Tom Baker, 14 Elm Street, Leeds LS6 2AB.", SUPPORT_PLAIN)):
        run = _conversation(ask, user, theirs, answer=answer, system=system)
        assert _found(run, "policy_violated")[0] == [], _found(run, "policy_violated")[1]
    # the user's own order: their own data
    mine = ("get_order", {"order_id": "#1050"}, dict(theirs[2], user_id="U-501"))
    run = _conversation(ask, user, mine, answer="Order #1050 was delivered to Tom Baker, 14 Elm Street, Leeds LS6 2AB.", system=RULES)
    assert _found(run, "policy_violated")[0] == [], _found(run, "policy_violated")[1]


def test_a_rule_broken_by_an_agent_never_shown_the_fact_a_handoff_left_out_is_the_handoffs_information_withheld():
    import json

    from runs_build import agent, llm, text_message, tool

    def team(handed: str):
        ask = text_message("user", ASK_1022[1])
        read = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "g1", "name": "get_order", "arguments": {"order_id": "#1022"}}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "g1", "response": json.dumps(BLANKET)}]}]
        triage = [text_message("system", "You are triage. Hand refunds to the refunds agent."), ask]
        refunds = [text_message("system", RULES.replace("support agent", "refunds agent")), ask, text_message("assistant", handed)]
        steps = [agent(1, "triage"), llm(2, calls=[("get_order", {"order_id": "#1022"}, "g1")], messages=triage, parent=1),
                 dict(tool(3, "get_order", {"order_id": "#1022"}, BLANKET, requested_by=2, call_id="g1"), parent_index=1),
                 llm(4, text=handed, calls=[("transfer_to_refunds", {}, "h1")], messages=[*triage, *read], parent=1),
                 dict(tool(5, "transfer_to_refunds", {}, {"assistant": "refunds"}, requested_by=4, call_id="h1"), parent_index=1),
                 agent(6, "refunds"), llm(7, calls=[("refund", {"order_id": "#1022", "amount": 89.0}, "r1")], messages=refunds, parent=6),
                 dict(tool(8, "refund", {"order_id": "#1022", "amount": 89.0}, {"status": "refunded"}, requested_by=7, call_id="r1"),
                      parent_index=6),
                 llm(9, text="Refunded 89.00 USD.", parent=6)]
        return record(*steps, task=ASK_1022[1])

    withheld = team("Order #1022 (wool blanket, 89.00 USD): the user wants a refund.")
    assert _found(withheld, "information_withheld")[0] == [(4, "model")], _found(withheld, "information_withheld")[1]
    # the date handed on: the refunds agent broke the rule on what it was shown
    told = team("Order #1022 (wool blanket, 89.00 USD, delivered 2026-10-12): the user wants a refund.")
    assert _found(told, "policy_violated")[0] == [(7, "model")], _found(told, "policy_violated")[1]
    assert _found(told, "information_withheld")[0] == [], _found(told, "information_withheld")[1]


def test_a_refund_proposed_unseen_after_a_handoff_that_left_the_date_out_stays_the_handoffs_when_the_next_turn_shows_it():
    import json

    from runs_build import agent, llm, text_message, tool

    def team(handed: str):
        ask = text_message("user", ASK_1022[1])
        read = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "g1", "name": "get_order", "arguments": {"order_id": "#1022"}}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "g1", "response": json.dumps(BLANKET)}]}]
        triage = [text_message("system", "You are triage. Hand refunds to the refunds agent."), ask]
        refunds = [text_message("system", RULES.replace("support agent", "refunds agent")), ask, text_message("assistant", handed)]
        offer = "I can refund order #1022 (89.00 USD) to your original payment method. Shall I go ahead?"
        # the user's yes starts a turn the app gives the whole history, the date included
        later = [refunds[0], ask, *read, text_message("assistant", handed), text_message("assistant", offer), text_message("user", YES[1])]
        steps = [agent(1, "triage"), llm(2, calls=[("get_order", {"order_id": "#1022"}, "g1")], messages=triage, parent=1),
                 dict(tool(3, "get_order", {"order_id": "#1022"}, BLANKET, requested_by=2, call_id="g1"), parent_index=1),
                 llm(4, text=handed, calls=[("transfer_to_refunds", {}, "h1")], messages=[*triage, *read], parent=1),
                 dict(tool(5, "transfer_to_refunds", {}, {"assistant": "refunds"}, requested_by=4, call_id="h1"), parent_index=1),
                 agent(6, "refunds"), llm(7, text=offer, messages=refunds, parent=6),
                 agent(8, "refunds"), llm(9, calls=[("refund", {"order_id": "#1022", "amount": 89.0}, "r1")], messages=later, parent=8),
                 dict(tool(10, "refund", {"order_id": "#1022", "amount": 89.0}, {"status": "refunded"}, requested_by=9, call_id="r1"),
                      parent_index=8),
                 llm(11, text="Refunded 89.00 USD.", parent=8)]
        return record(*steps, task=ASK_1022[1])

    withheld = team("Order #1022 (wool blanket, 89.00 USD): the user wants a refund.")
    assert _found(withheld, "information_withheld")[0] == [(4, "model")], _found(withheld, "information_withheld")[1]
    told = team("Order #1022 (wool blanket, 89.00 USD, delivered 2026-10-12): the user wants a refund.")
    assert _found(told, "information_withheld")[0] == [], _found(told, "information_withheld")[1]
    assert _found(told, "policy_violated")[0] == [(9, "model")], _found(told, "policy_violated")[1]


def test_a_day_other_than_the_one_the_user_said_yes_to_is_a_wrong_target():
    from test_data_agent import _conversation

    def moved(day: str):
        delivery = {"order_id": "#1043", "delivery_date": "2026-12-18", "slot": "morning"}
        return _conversation(("user", "Please move the delivery of order #1043 to December 22."),
                             ("get_delivery", {"order_id": "#1043"}, delivery),
                             ("assistant", "I can move order #1043 from 2026-12-18 to 2026-12-22, morning slot. Shall I?"),
                             ("user", "Yes, please go ahead."),
                             ("change_delivery_date", {"order_id": "#1043", "date": day}, {"status": "rescheduled", "date": day}),
                             answer=f"Done: order #1043 arrives on {day}.")
    assert _found(moved("2026-12-12"), "wrong_target")[0] == [(4, "model")], _found(moved("2026-12-12"), "wrong_target")[1]
    assert _found(moved("2026-12-22"), "wrong_target")[0] == [], _found(moved("2026-12-22"), "wrong_target")[1]


def test_a_write_that_may_have_gone_through_made_again_unlooked_is_input_ignored():
    from runs_build import llm, record, tool

    pay = {"invoice_id": "INV-2231", "amount": 1240.0}

    def paid(between: list):
        steps = [llm(1, calls=[("pay_invoice", pay, "p1")]),
                 tool(2, "pay_invoice", pay, None, requested_by=1, call_id="p1", error="TimeoutError: payment gateway timed out; "
                                                                                   "the payment may have gone through")]
        for name, arguments, result in between:
            at = len(steps) + 1
            steps += [llm(at, calls=[(name, arguments, f"c{at}")]), tool(at + 1, name, arguments, result, requested_by=at, call_id=f"c{at}")]
        at = len(steps) + 1
        steps += [llm(at, calls=[("pay_invoice", pay, "p2")]),
                  tool(at + 1, "pay_invoice", pay, {"status": "paid", "payment_id": "PAY-7"}, requested_by=at, call_id="p2"),
                  llm(at + 2, text="INV-2231 is paid.")]
        return record(*steps, task="Pay invoice INV-2231.")

    blind = paid([])
    assert _found(blind, "input_ignored")[0] == [(3, "model")], _found(blind, "input_ignored")[1]
    looked = paid([("list_payments", {"invoice_id": "INV-2231"}, {"payments": []})])
    assert _found(looked, "input_ignored")[0] == [], _found(looked, "input_ignored")[1]


def test_a_condition_reported_in_the_users_own_words_calls_for_the_tool_the_rules_name():
    rules = ("You rebook trains. If the user reports a medical emergency, do not refuse or decide yourself: transfer them with "
             "transfer_to_human.")
    ask = ("user", "I have to cancel ticket TK-4410 - my father was taken to hospital last night.")
    ticket = ("get_ticket", {"ticket_id": "TK-4410"}, {"ticket_id": "TK-4410", "fare": "saver", "refundable": False})
    refused = _conversation(ask, ticket, system=rules, answer="Sorry, TK-4410 is a saver fare and cannot be refunded.")
    assert _found(refused, "policy_violated")[0] == [(3, "model")], _found(refused, "policy_violated")[1]
    handed = _conversation(ask, ticket, ("transfer_to_human", {"summary": "medical emergency, TK-4410"}, {"status": "transferred"}),
                           system=rules, answer="I've passed you to a colleague who can help.")
    assert _found(handed, "policy_violated")[0] == [], _found(handed, "policy_violated")[1]
