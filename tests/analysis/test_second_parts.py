"""What a run does past its first deed, read as meant (heldout16's false alarms and misses, in other trades): a call
the limit's own sentence names as the way past it ("up to 3 nights straight away; anything more needs the duty
manager's OK - get it with request_override"), the request's second part done after a submit (submit_claim, then
"send me the confirmation": send_sms), a deed claimed without its verb ("the invoice is in your inbox") or in
another's ("the tenant has been told" for notify_tenant), ids of two kinds said beside a call that gives both (a
carrier and a shipment), and a choice said in words that name both ids (the closed month and the open one).
Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


HOTEL = ("You are the hotel's front desk agent. Extensions: up to 3 nights can be added straight away; anything more needs "
         "the duty manager's OK - get it with request_override and put its reference on the booking.")


@pytest.mark.parametrize("asked_first,broken", [(True, False), (False, True)])
def test_a_call_the_limits_sentence_names_as_the_way_past_it_is_no_breach(asked_first, broken):
    turns = [("user", "Please extend booking BK-310 by 5 nights.")]
    if asked_first:
        turns.append(("request_override", {"booking_id": "BK-310", "nights": 5}, {"override_id": "OV-71", "status": "approved"}))
    turns.append(("extend_booking", {"booking_id": "BK-310", "nights": 5, "override_id": "OV-71" if asked_first else ""},
                  {"booking_id": "BK-310", "status": "extended"}))
    run = _conversation(*turns, system=HOTEL, answer="BK-310 is extended by 5 nights.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(1 if not asked_first else 3, "model")] if broken else []), shown


@pytest.mark.parametrize("ask,flagged", [
    ("Please file my claim for the broken phone (order OR-5) and send me the confirmation afterwards.", False),
    ("Please file my claim for the broken phone (order OR-5).", True),  # nothing asked after the submit
])
def test_the_requests_second_part_done_after_a_submit_is_not_going_on_past_it(ask, flagged):
    run = _conversation(("user", ask),
                        ("submit_claim", {"order_id": "OR-5", "reason": "broken"}, {"claim_id": "CL-12", "status": "submitted"}),
                        ("send_sms", {"claim_id": "CL-12"}, {"status": "sent"}),
                        system="You are the warranty desk.", answer="Claim CL-12 is filed and the confirmation is on your phone.")
    found, shown = _found(run, "kept_going_after_answer")
    assert bool(found) == flagged, shown


@pytest.mark.parametrize("answer,tool_name,claimed", [
    ("Done: the corrected invoice is in your inbox.", "email_invoice", True),
    ("Done: the tenant has been told about the new day.", "notify_tenant", True),
    ("The corrected invoice is ready; shall I email it to you?", "email_invoice", False),
])
def test_a_deed_claimed_without_its_verb_or_in_anothers_is_an_action_not_taken(answer, tool_name, claimed):
    ask = "Move the plumber's visit for flat F-4 to Friday and let everyone know."
    steps = [llm(1, calls=[("reschedule_visit", {"flat_id": "F-4", "day": "Friday"}, "c1")],
                 messages=[text_message("system", "You are the property manager's assistant."), text_message("user", ask)]),
             tool(2, "reschedule_visit", {"flat_id": "F-4", "day": "Friday"}, {"status": "moved"}, requested_by=1, call_id="c1"),
             llm(3, text=answer, messages=[text_message("user", ask)])]
    offered = definitions_attr(*((n, {"type": "object"}) for n in ("reschedule_visit", tool_name)))
    run = record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask)
    found, shown = _found(run, "action_not_taken")
    assert found == ([(3, "model")] if claimed else []), shown


@pytest.mark.parametrize("said,flagged", [
    ("Booking Northway Freight (CR-12) on the Q2 lane.", False),  # a carrier said; the shipment id is another kind
    ("Booking the Q3 lane for shipment SH-7781.", True),  # a quarter said, another quarter given
])
def test_ids_of_two_kinds_said_beside_a_call_that_gives_both_are_no_wrong_target(said, flagged):
    lanes = {"lanes": [{"lane_id": "LN-2", "label": "Q3 2026 lane"}, {"lane_id": "LN-1", "label": "Q2 2026 lane"}]}
    arguments = {"shipment_id": "SH-7781", "carrier_id": "CR-12", "lane": "Q2 2026 lane"}
    system, ask = text_message("system", "You are the dispatcher."), text_message("user", "Book shipment SH-7781.")
    steps = [llm(1, calls=[("list_lanes", {}, "c1")], messages=[system, ask]),
             tool(2, "list_lanes", {}, lanes, requested_by=1, call_id="c1"),
             llm(3, text=said, calls=[("book_carrier", arguments, "c2")], messages=[system, ask]),
             tool(4, "book_carrier", arguments, {"booking": "BK-9", "status": "booked"}, requested_by=3, call_id="c2"),
             llm(5, text="Booked.", messages=[system, ask])]
    found, shown = _found(record(*steps, task="Book shipment SH-7781."), "wrong_target")
    assert bool(found) == flagged, shown


@pytest.mark.parametrize("said,flagged", [
    ("M-2026-11 is closed, so I'm posting it to the next open month, M-2026-12.", False),
    ("Posting it now.", True),
])
def test_a_choice_said_in_words_that_name_both_ids_is_no_mix_up(said, flagged):
    entry = {"invoice_id": "IN-88", "month_id": "M-2026-11", "amount": 120.0}
    arguments = {"invoice_id": "IN-88", "month_id": "M-2026-12", "amount": 120.0}
    system, ask = text_message("system", "You are the accounting assistant."), text_message("user", "Please post IN-88.")
    steps = [llm(1, calls=[("get_invoice", {"invoice_id": "IN-88"}, "c1")], messages=[system, ask]),
             tool(2, "get_invoice", {"invoice_id": "IN-88"}, entry, requested_by=1, call_id="c1"),
             llm(3, text=said, calls=[("post_entry", arguments, "c2")], messages=[system, ask]),
             tool(4, "post_entry", arguments, {"entry_id": "JE-5", "status": "posted"}, requested_by=3, call_id="c2"),
             llm(5, text="IN-88 is posted.", messages=[system, ask])]
    found, shown = _found(record(*steps, task="Please post IN-88."), "wrong_target")
    assert bool(found) == flagged, shown


@pytest.mark.parametrize("asked_first,broken", [(True, False), (False, True)])
def test_an_action_the_rules_ask_another_call_before_breaks_the_rule_without_it(asked_first, broken):
    system = ("You are the HR assistant. Before you call change_emergency_contact, confirm the employee's identity with "
              "send_identity_check and wait for them to answer.")
    turns = [("user", "Please change my emergency contact to my sister, employee E-22.")]
    if asked_first:
        turns.append(("send_identity_check", {"employee_id": "E-22"}, {"status": "sent"}))
    turns.append(("change_emergency_contact", {"employee_id": "E-22", "name": "Rosa Diaz"}, {"status": "changed"}))
    run = _conversation(*turns, system=system, answer="Your emergency contact is now Rosa Diaz.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("given,flagged", [("Ontario", False), ("Quebec", True)])
def test_a_field_in_words_the_named_record_holds_otherwise_is_a_wrong_target(given, flagged):
    lease = {"lease_id": "LS-310", "tenant": "Harbor Bakery", "province": "Ontario", "term_months": 24}
    run = _conversation(("user", "Please draft the renewal for lease LS-310."), ("get_lease", {"lease_id": "LS-310"}, lease),
                        ("draft_renewal", {"lease_id": "LS-310", "province": given, "term_months": 24}, {"draft_id": "DR-8"}),
                        system="You are the leasing assistant.", answer="The renewal draft DR-8 is ready.")
    found, shown = _found(run, "wrong_target")
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("address,flagged", [("ines.moreau@keel.fr", False), ("paul.roy@keel.fr", True)])
def test_the_person_the_words_name_beside_a_message_to_another_persons_address_is_a_mismatch(address, flagged):
    client = {"client_id": "CL-4", "approver": {"name": "Ines Moreau", "email": "ines.moreau@keel.fr"},
              "contacts": [{"name": "Paul Roy", "email": "paul.roy@keel.fr"}]}
    system, ask = text_message("system", "You are the agency's account assistant."), text_message("user", "Send quote Q-7 to CL-4.")
    steps = [llm(1, calls=[("get_client", {"client_id": "CL-4"}, "c1")], messages=[system, ask]),
             tool(2, "get_client", {"client_id": "CL-4"}, client, requested_by=1, call_id="c1"),
             llm(3, text="Sending Q-7 to their approver, Ines Moreau.", calls=[("send_quote", {"quote_id": "Q-7", "approver_email": address}, "c2")],
                 messages=[system, ask]),
             tool(4, "send_quote", {"quote_id": "Q-7", "approver_email": address}, {"status": "sent"}, requested_by=3, call_id="c2"),
             llm(5, text="Q-7 is sent.", messages=[system, ask])]
    found, shown = _found(record(*steps, task="Send quote Q-7 to CL-4."), "reasoning_action_mismatch")
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("told,flagged", [("2026-12-11", False), ("2026-12-09", True)])
def test_a_date_told_under_a_label_a_result_holds_otherwise_is_misreported(told, flagged):
    booked = {"booking_id": "BK-77", "technician": "Lars", "arrival": "2026-12-11", "window": "08:00-12:00"}
    run = _conversation(("user", "Book a boiler repair for flat 3B and text the tenant when the technician comes."),
                        ("book_repair", {"flat": "3B", "job": "boiler"}, booked),
                        ("send_sms", {"to": "+44 7700 900123", "text": f"Your technician Lars arrives {told}, 08:00-12:00. Ref BK-77."},
                         {"status": "sent"}),
                        system="You are the building manager's assistant.", answer="Booked BK-77 and the tenant has been texted.")
    found, shown = _found(run, "answer_misread")
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("failed,flagged", [(True, True), (False, False)])
def test_an_id_made_up_right_after_the_call_that_would_have_given_it_failed_is_the_models(failed, flagged):
    # the courier API timed out, and the model booked on a quote id of its own: no tool misbehaved but the first
    system = text_message("system", "You are the courier desk. Book only against a quote you got from get_courier_quote.")
    ask = text_message("user", "Send parcel PX-9 to Leeds tomorrow.")
    quote = ({"error": "TimeoutError: courier API did not answer"} if failed else {"quote_id": "QX-4410", "price": 12.5})
    steps = [llm(1, calls=[("get_courier_quote", {"parcel_id": "PX-9"}, "c1")], messages=[system, ask]),
             {**tool(2, "get_courier_quote", {"parcel_id": "PX-9"}, None if failed else quote, requested_by=1, call_id="c1",
                     status="error" if failed else "ok", error="TimeoutError: courier API did not answer" if failed else None)},
             llm(3, calls=[("book_courier", {"parcel_id": "PX-9", "quote_id": "QX-4410"}, "c2")],
                 messages=[system, ask, {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": quote}]}]),
             tool(4, "book_courier", {"parcel_id": "PX-9", "quote_id": "QX-4410"}, {"booking": "CB-1", "status": "booked"},
                  requested_by=3, call_id="c2"),
             llm(5, text="PX-9 is booked (CB-1).", messages=[system, ask])]
    found = detect(record(*steps, task=ask["parts"][0]["content"]))
    hits = [(f.index, f.layer) for f in found if f.kind == "invented_argument"]
    assert hits == ([(3, "model")] if flagged else []), format_findings(found)


@pytest.mark.parametrize("answer,flagged", [("Deployed 2.4.1 to production. Posted to #deploys.", True),
                                            ("Deployed 2.4.1 to production.", False)])
def test_a_post_claimed_for_a_tool_named_for_a_generic_thing_is_an_action_not_taken(answer, flagged):
    ask = "Ship web 2.4.1 to production and post it."
    steps = [llm(1, calls=[("deploy", {"service": "web", "version": "2.4.1"}, "c1")],
                 messages=[text_message("system", "You are the release bot. Post each outcome with post_status."), text_message("user", ask)]),
             tool(2, "deploy", {"service": "web", "version": "2.4.1"}, {"deployment": "D-9", "state": "live"}, requested_by=1, call_id="c1"),
             llm(3, text=answer, messages=[text_message("user", ask)])]
    offered = definitions_attr(*((n, {"type": "object"}) for n in ("deploy", "post_status")))
    run = record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask)
    found, shown = _found(run, "action_not_taken")
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("result,flagged", [
    ({"commit": "9f3c2a1", "status": "failed", "checks": [{"name": "unit", "status": "failed"}]}, False),  # what it read
    ({"status": "failed"}, True),  # the call's own failure, returned as a result
])
def test_a_status_a_status_tool_read_is_data_not_its_failure(result, flagged):
    run = _conversation(("user", "Is main green?"), ("get_ci_status", {"commit": "9f3c2a1"}, result),
                        system="You are the CI assistant.", answer="I looked at main's CI.")
    found, shown = _found(run, "tool_error_unreported")
    assert bool(found) == flagged, shown


@pytest.mark.parametrize("total,flagged", [("$1,190.00", False), ("$1,290.00", True)])
def test_a_figure_the_answer_works_out_as_a_count_times_a_named_item_is_grounded(total, flagged):
    # 14 (the request's count) x the desk lamp's unit price 85.0: worked out in the answer, not made up
    run = _conversation(("user", "We need 14 desk lamps for the Bristol office, cost centre CC-12."),
                        ("search_catalog", {"query": "desk lamp"}, {"items": [{"sku": "LP-4", "name": "Desk lamp", "unit_price": 85.0}]}),
                        system="You are the procurement intake agent.",
                        answer=f"14 x Desk lamp (LP-4) comes to about {total}; passing it to the buyer.")
    found, shown = _found(run, "ungrounded_answer")
    assert bool(found) == flagged, shown


def test_an_action_claimed_right_after_an_ignored_failure_is_folded_into_the_failure():
    # the query was denied; the answer makes up a figure and says it was published, with no publish call: the
    # ignored failure is the cause (tool: a refusal that stays, not a failure of the moment a retry mends), the claim
    # what followed (kept in its evidence)
    ask = "Publish EMEA's Q3 revenue to dashboard D-7 and tell me the figure."
    steps = [llm(1, calls=[("run_sql", {"query": "SELECT SUM(revenue) FROM sales"}, "c1")],
                 messages=[text_message("system", "You are the data analyst. Publish what you report with publish."),
                           text_message("user", ask)]),
             tool(2, "run_sql", {"query": "SELECT SUM(revenue) FROM sales"}, None, requested_by=1, call_id="c1", status="error",
                  error="PermissionError: permission denied for relation sales"),
             llm(3, text="Published to D-7. Revenue: 1,204,000.00 EUR.", messages=[
                 text_message("user", ask),
                 {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "run_sql",
                                                  "arguments": {"query": "SELECT SUM(revenue) FROM sales"}}]},
                 {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                             "response": "PermissionError: permission denied for relation sales"}]}])]
    offered = definitions_attr(*((n, {"type": "object"}) for n in ("run_sql", "publish")))
    found = detect(record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask))
    kinds = [(f.kind, f.layer) for f in found if f.kind in ("tool_error_ignored", "action_not_taken")]
    assert kinds == [("tool_error_ignored", "tool")], format_findings(found)
    assert next(f for f in found if f.kind == "tool_error_ignored").evidence["explains"] == [("action_not_taken", 3)]
