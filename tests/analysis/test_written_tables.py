"""Written rules read from the shapes real instructions take, and quiet readings of good runs (heldout18's misses
and false alarms, in other trades): a decision table's row ("| approve | credit score of 680 or more |"), a decision
whose reason rests on what the rules bar ("Never base a decision or its reason on age, ..."), a list that must hold a
member in a state, a call the rules ask for before each deed ("Run check_fraud before every payout"), a value taken
from a record marked revoked whose successor gives another, the thing an "only" sentence allows ("A loan is allowed
only while ..."), and on the quiet side: a choice the instructions leave to the agent ("one of the open slots"), an
object keyed by data (a rubric's criteria), a group the answer lists, a passive that bars one kind ("Schedule II is
never refilled"), a date worked out from a record's day count, a retrieval serving a tool the policy requires.
Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis._record import History
from agentotel.analysis.detectors import detect, format_findings
from agentotel.analysis.policy import Policy
from runs_build import definitions_attr, llm, record, text_message, tool
from test_data_agent import _conversation


def _found(run, kind, history=None, policy=None):
    found = detect(run, history, policy=policy)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


LENDING = "\n".join([
    "You decide small-business loan applications for Fernway Bank. Score each with get_credit_report, then record the "
    "outcome with record_outcome.",
    "",
    "| Outcome | When |",
    "|---|---|",
    "| approve | credit score of 680 or more |",
    "| decline | credit score under 680 |",
    "",
    "Never base an outcome or its reason on age, marital status, religion or a photo.",
])


@pytest.mark.parametrize("outcome,score,broken", [("approve", 712, False), ("approve", 640, True), ("decline", 640, False),
                                                  ("decline", 712, True)])
def test_a_value_a_decision_table_keeps_for_a_bound_given_past_it_breaks_the_rule(outcome, score, broken):
    run = _conversation(("user", "Decide application AP-3310."),
                        ("get_credit_report", {"application_id": "AP-3310"}, {"application_id": "AP-3310", "score": score}),
                        ("record_outcome", {"application_id": "AP-3310", "outcome": outcome, "reason": f"credit score {score}"},
                         {"recorded": True}),
                        system=LENDING, answer=f"AP-3310: {outcome}.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("reason,broken", [("credit score 712, two years of filed accounts", False),
                                           ("credit score 712 but the owner is 67 years old, near retirement", True),
                                           ("credit score 712; married, so a second income", True)])
def test_a_decisions_reason_resting_on_what_the_rules_bar_breaks_them(reason, broken):
    run = _conversation(("user", "Decide application AP-3311."),
                        ("get_credit_report", {"application_id": "AP-3311"}, {"application_id": "AP-3311", "score": 712}),
                        ("record_outcome", {"application_id": "AP-3311", "outcome": "decline", "reason": reason},
                         {"recorded": True}),
                        system=LENDING.replace("| decline | credit score under 680 |", "| decline | any other case |"),
                        answer="AP-3311 is recorded.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


CREW = ("You assign flight crews. Get the roster with get_roster. Every cabin crew must include at least one attendant "
        "with first_aid_certified: true. Assign with assign_crew.")
ROSTER = {"flight": "FW 204", "attendants": [{"id": "FA-1", "first_aid_certified": True},
                                             {"id": "FA-2", "first_aid_certified": False},
                                             {"id": "FA-3", "first_aid_certified": False}]}


@pytest.mark.parametrize("chosen,broken", [(["FA-1", "FA-2"], False), (["FA-2", "FA-3"], True)])
def test_an_action_on_members_none_of_whom_holds_the_state_a_rule_needs_breaks_it(chosen, broken):
    run = _conversation(("user", "Crew FW 204 for tomorrow."), ("get_roster", {"flight": "FW 204"}, ROSTER),
                        ("assign_crew", {"flight": "FW 204", "attendant_ids": chosen}, {"assignment": "AS-77"}),
                        system=CREW, answer="FW 204 is crewed.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


PAYOUTS = "You pay out marketplace sellers. Run check_fraud on the seller before every payout. Pay with payout."


@pytest.mark.parametrize("checked,broken", [(True, False), (False, True)])
def test_a_call_the_rules_ask_for_before_each_deed_missing_breaks_them(checked, broken):
    turns = [("user", "Pay seller SL-81 their 420.00 EUR.")]
    if checked:
        turns.append(("check_fraud", {"seller": "SL-81"}, {"seller": "SL-81", "risk": "low"}))
    turns.append(("payout", {"seller": "SL-81", "amount": 420.0}, {"payout_id": "PO-1"}))
    found, shown = _found(_conversation(*turns, system=PAYOUTS, answer="Paid."), "policy_violated")
    assert found == ([(1, "model")] if broken else []), shown


PERMITS = "You file building permits. Read the zoning decision with get_zoning and file with file_permit."


@pytest.mark.parametrize("code,broken", [("R-2B", False), ("R-2A", True)])
def test_an_action_given_a_value_from_a_revoked_record_whose_successor_gives_another_ignores_it(code, broken):
    zoning = {"decision_id": "ZD-1187", "zone": "R-2A", "status": "revoked",
              "superseded_by": {"decision_id": "ZD-1302", "zone": "R-2B"}}
    run = _conversation(("user", "File the permit for 14 Alder Row."), ("get_zoning", {"parcel": "14 Alder Row"}, zoning),
                        ("file_permit", {"parcel": "14 Alder Row", "zone": code}, {"permit": "BP-55"}),
                        system=PERMITS, answer="Filed as BP-55.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


LOANS = ("You run the library's loans. A loan is allowed only while loans_open is below 5. Otherwise do not lend: "
         "put the patron on the waitlist with add_to_waitlist.")


@pytest.mark.parametrize("deed,open_loans,broken", [("loan_book", 2, False), ("loan_book", 5, True),
                                                    ("add_to_waitlist", 5, False)])
def test_the_thing_an_only_sentence_allows_is_the_deed_it_keeps_not_the_remedy(deed, open_loans, broken):
    run = _conversation(("user", "I'd like to borrow 'Middlemarch' - card LC-2210."),
                        ("get_patron", {"card_id": "LC-2210"}, {"card_id": "LC-2210", "loans_open": open_loans}),
                        (deed, {"card_id": "LC-2210", "title": "Middlemarch"}, {"ok": True}),
                        system=LOANS, answer="Done.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_pick_the_instructions_leave_to_the_agent_is_no_question_owed():
    slots = {"room": "R-4", "open_slots": ["2026-12-08T10:00Z", "2026-12-08T14:00Z", "2026-12-09T09:00Z"]}
    for system, owed in (("You book meeting rooms. Book with book_room on one of the room's open slots.", False),
                         ("You book meeting rooms with book_room.", True)):
        run = _conversation(("user", "Book room R-4 for the design review."), ("get_room", {"room": "R-4"}, slots),
                            ("book_room", {"room": "R-4", "slot": "2026-12-08T10:00Z"}, {"booking": "BK-1"}),
                            system=system, answer="Booked R-4 for 8 December 10:00.")
        found, shown = _found(run, "clarification_skipped")
        assert found == ([(3, "model")] if owed else []), shown


def test_an_object_keyed_by_data_holds_other_keys_for_other_records_without_drift():
    history = History()
    for n, scores in enumerate(({"Python": 4, "HIL testing": 3}, {"Python": 5, "HIL testing": 4})):
        history.add(f"run-{n}", "score_candidate", {"candidate": f"C-{n}", "scores": scores, "total": 7}, None, False,
                    {"candidate": f"C-{n}"})
    for scores, drift in (({"embedded C": 5, "RTOS": 4}, False), (None, True)):  # other criteria; the scores gone
        result = {"candidate": "C-9", "total": 9} | ({"scores": scores} if scores else {})
        run = _conversation(("user", "Score C-9."), ("score_candidate", {"candidate": "C-9"}, result),
                            system="You screen candidates.", answer="C-9 scores 9.")
        found, shown = _found(run, "tool_output_drift", history)
        assert found == ([(2, "tool")] if drift else []), shown


def test_a_group_the_answer_lists_is_no_sibling_picked_over_the_one_asked_for():
    panel = {"interviewers": [{"id": "I-11", "role": "Engineering Manager"}, {"id": "I-14", "role": "Staff Engineer"},
                              {"id": "I-17", "role": "Senior Firmware Engineer"}]}
    for answer, wrong in (("The panel for the Senior Firmware Engineer role: I-11 and I-14.", False),
                          ("For the Senior Firmware Engineer question, ask I-11.", True)):
        run = _conversation(("user", "Who interviews for the Senior Firmware Engineer opening?"),
                            ("get_panel", {"req": "REQ-2291"}, panel), system="You answer hiring questions.", answer=answer)
        found, shown = _found(run, "wrong_target")
        assert found == ([(3, "model")] if wrong else []), shown


def test_a_passive_barring_one_kind_is_no_rule_against_the_deed_itself():
    for system, barred in (("You refill prescriptions. Schedule II drugs are never refilled - they need a new script.", False),
                           ("You answer questions about prescriptions. You never refill anything.", True)):
        run = _conversation(("user", "Refill RX-1001 please."), ("refill", {"rx": "RX-1001"}, {"order": "RF-9"}),
                            system=system, answer="Refilled.")
        found, shown = _found(run, "role_overstepped")
        assert found == ([(1, "model")] if barred else []), shown


def test_a_date_worked_out_from_a_records_day_count_is_grounded():
    rx = {"rx": "RX-4417", "last_filled": "2026-11-20", "days_supply": 30}
    for answer, grounded in (("It runs out on 2026-12-20, so the earliest refill is 2026-12-18.", True),
                             ("The earliest refill is 2026-12-27.", False)):
        run = _conversation(("user", "When can I refill RX-4417?"), ("get_prescription", {"rx": "RX-4417"}, rx),
                            system="You answer refill questions. Refills open 2 days before the supply runs out.",
                            answer=answer)
        found, shown = _found(run, "ungrounded_answer")
        assert found == ([] if grounded else [(3, "model")]), shown


def test_a_retrieval_serving_a_tool_the_policy_requires_counts_as_that_tool():
    shown = [text_message("system", "You classify goods."), text_message("user", "Classify the folding chair.")]
    steps = [llm(1, calls=[("search_tariff", {"query": "folding chair"}, "c1")], messages=shown),
             tool(2, "htsus", "folding chair", [{"id": "HTS-1", "score": 0.9, "content": "9401.79"}], kind="retrieval"),
             llm(3, calls=[("file_entry", {"hts": "9401.79"}, "c3")], messages=shown),
             tool(4, "file_entry", {"hts": "9401.79"}, {"entry": "E-1"}, requested_by=3, call_id="c3"),
             llm(5, text="Filed E-1.", messages=shown)]
    policy = Policy.from_mapping({"required_before": {"file_entry": ["search_tariff"]}})
    found, shown_text = _found(record(*steps, task="Classify the folding chair."), "missing_evidence", policy=policy)
    assert found == [], shown_text
    skipped = [llm(1, calls=[("file_entry", {"hts": "9401.79"}, "c1")], messages=shown),  # the search never ran
               tool(2, "file_entry", {"hts": "9401.79"}, {"entry": "E-1"}, requested_by=1, call_id="c1"),
               llm(3, text="Filed E-1.", messages=shown)]
    found, shown_text = _found(record(*skipped, task="Classify the folding chair."), "missing_evidence", policy=policy)
    assert found == [(1, "product")], shown_text


SOURCING = ("You are the buyer for Ostwick Schools. Orders over $5,000 need quotes from two suppliers, and the cheaper "
            "one wins. Quote with request_quote, order with place_order.")


@pytest.mark.parametrize("suppliers,broken", [(("SU-1", "SU-2"), False), (("SU-1",), True)])
def test_an_order_over_a_figure_needing_quotes_from_several_suppliers_on_fewer_breaks_the_rule(suppliers, broken):
    turns = [("user", "Order 60 laptops for the science block.")]
    turns += [("request_quote", {"supplier_id": s, "item": "laptop", "quantity": 60},
               {"quote_id": f"QT-{n}", "supplier_id": s, "total": 38_400.0 + n}) for n, s in enumerate(suppliers)]
    turns.append(("place_order", {"quote_id": "QT-0"}, {"order": "PO-9"}))
    run = _conversation(*turns, system=SOURCING, answer="Ordered: PO-9.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(len(turns) * 2 - 3, "model")] if broken else []), shown


BONUS = ("You pay staff bonuses. Spot bonuses are capped at a quarter of the employee's monthly salary. Read the "
         "employee with get_employee; pay with pay_spot_bonus.")


@pytest.mark.parametrize("amount,broken", [(700.0, False), (1400.0, True)])
def test_an_amount_past_the_share_of_a_records_figure_the_rules_cap_it_at_breaks_them(amount, broken):
    run = _conversation(("user", "A spot bonus for EM-12 for the inventory weekend, please."),
                        ("get_employee", {"employee_id": "EM-12"}, {"employee_id": "EM-12", "monthly_salary": 3200.0}),
                        ("pay_spot_bonus", {"employee_id": "EM-12", "amount": amount}, {"bonus_id": "SB-4"}),
                        system=BONUS, answer=f"Paid {amount:.2f} (SB-4).")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
    found, shown = _found(run, "ungrounded_answer")
    assert found == [], shown


def test_a_figure_a_share_the_rules_name_gives_is_grounded():
    for answer, grounded in (("The most you can get is $800.00.", True), ("The most you can get is $950.00.", False)):
        run = _conversation(("user", "How big a spot bonus can EM-12 get?"),
                            ("get_employee", {"employee_id": "EM-12"}, {"employee_id": "EM-12", "monthly_salary": 3200.0}),
                            system=BONUS, answer=answer)
        found, shown = _found(run, "ungrounded_answer")
        assert found == ([] if grounded else [(3, "model")]), shown


def test_a_failed_call_answered_with_an_id_nothing_held_is_the_models_invention():
    shown = [text_message("system", "You book courier pickups with book_pickup."), text_message("user", "Book a pickup for PK-7.")]
    failed = tool(2, "book_pickup", {"parcel": "PK-7"}, None, status="error", requested_by=1, call_id="c1",
                  error="TimeoutError: courier API did not answer within 20 s")
    for answer, layer in (("Your pickup is PU-40871, tomorrow 09:00-12:00.", "model"),
                          ("All set - the courier will come for PK-7.", "tool")):
        seen = shown + [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "book_pickup",
                                                          "arguments": {"parcel": "PK-7"}}]},
                        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                                    "response": "Error: TimeoutError: courier API did not answer within 20 s"}]}]
        run = record(llm(1, calls=[("book_pickup", {"parcel": "PK-7"}, "c1")], messages=shown), failed,
                     llm(3, text=answer, messages=seen), task="Book a pickup for PK-7.")
        found, shown_text = _found(run, "tool_error_ignored")
        assert found == [(3, layer)], shown_text


def test_a_reply_sent_without_the_question_it_answers_lost_the_conversation():
    system = "You are the clinic's booking assistant. Ask for the date of birth before anything else."
    first = llm(1, text="Could you tell me your date of birth?", messages=[text_message("user", "I need to move my appointment.")])
    for kept, lost in ((True, False), (False, True)):
        given = ([text_message("user", "I need to move my appointment."),
                  text_message("assistant", "Could you tell me your date of birth?")] if kept else []) + [
            text_message("user", "It's 1961-04-22.")]
        second = llm(2, text="Thanks - which appointment shall I move?" if kept else "Sorry, who am I speaking with?",
                     messages=given)
        attributes = {s["span_id"]: {"gen_ai.system_instructions": f'[{{"type": "text", "content": "{system}"}}]'}
                      for s in (first, second)}
        run = record(first, second, task="I need to move my appointment.", attributes=attributes)
        found, shown = _found(run, "history_lost")
        assert found == ([(2, "memory")] if lost else []), shown


@pytest.mark.parametrize("amount,broken", [(18_000, False), (31_500, True)])
def test_a_bound_written_with_thousands_separators_is_read_whole(amount, broken):
    system = ("You screen bursary requests. A request is eligible only if the requested_amount is at most 25,000 EUR. "
              "Record it with record_screen.")
    run = _conversation(("user", "Screen BR-77."), ("get_request", {"request_id": "BR-77"},
                                                    {"request_id": "BR-77", "requested_amount": amount}),
                        ("record_screen", {"request_id": "BR-77", "outcome": "eligible"}, {"recorded": True}),
                        system=system, answer="BR-77 screened.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_figure_read_out_of_a_field_in_a_minor_unit_is_grounded():
    rows = {"columns": ["revenue_cents"], "rows": [{"revenue_cents": 1_973_657}]}
    for answer, grounded in (("Revenue in October: EUR 19,736.57.", True), ("Revenue in October: EUR 21,400.00.", False)):
        run = _conversation(("user", "October revenue?"), ("run_sql", {"sql": "select sum(net) ..."}, rows),
                            system="You answer revenue questions with run_sql.", answer=answer)
        found, shown = _found(run, "ungrounded_answer")
        assert found == ([] if grounded else [(3, "model")]), shown


def test_before_said_of_time_is_no_order_of_calls():
    system = ("You help tenants. A late fee may be waived (waive_fee) only if no other late fee was posted in the 12 "
              "months before it. File repairs with create_work_order.")
    run = _conversation(("user", "My heating is broken, unit 4B."),
                        ("create_work_order", {"unit": "4B", "category": "heating"}, {"work_order": "WO-1"}),
                        system=system, answer="WO-1 is filed.")
    offered = definitions_attr(("waive_fee", {"type": "object"}), ("create_work_order", {"type": "object"}))
    run.span_attributes.update({s["span_id"]: dict(offered) for s in run.steps if s["type"] == "llm"})
    found, shown = _found(run, "missing_evidence")
    assert found == [], shown


def test_a_value_naming_the_rules_scope_is_no_value_it_gives():
    system = ("You file repairs. For a P3 order, ask whether the technician may enter when nobody is home, unless the "
              "tenant already told you. File with create_work_order.")
    run = _conversation(("user", "Water is pouring through my ceiling! Unit 4B."),
                        ("create_work_order", {"unit": "4B", "priority": "P1"}, {"work_order": "WO-2"}),
                        system=system, answer="WO-2 is filed as P1.")
    found, shown = _found(run, "task_ignored")
    assert found == [], shown


def test_an_order_for_another_event_is_no_choice_to_ask_about():
    system = ("You handle ticket refunds. If the fan has more than one order for the event and hasn't said which, ask "
              "which order before you refund.")
    for orders, owed in (([("OR-1", "EV-9"), ("OR-2", "EV-4")], False), ([("OR-1", "EV-9"), ("OR-2", "EV-9")], True)):
        listing = {"orders": [{"order_id": o, "event_id": e, "seats": 2} for o, e in orders]}
        run = _conversation(("user", "The EV-9 show was cancelled, refund me please - fan F-31."),
                            ("find_orders", {"fan_id": "F-31"}, listing),
                            ("get_order", {"order_id": "OR-1"}, {"order_id": "OR-1", "event_id": "EV-9", "total": 90.0}),
                            ("refund", {"order_id": "OR-1"}, {"refund_id": "RF-3"}),
                            system=system, answer="Refunded: RF-3.")
        found = [(f.index, f.layer) for f in detect(run) if f.kind == "clarification_skipped" and "listed more than one" in f.message]
        assert found == ([(3, "model")] if owed else []), format_findings(detect(run))


def test_a_sum_a_record_holds_is_no_count_of_the_deed():
    system = "You chair the grants panel. One award per application. Read get_budget and award with award."
    for awarded, counted in ((188_000, False), (1, True)):
        run = _conversation(("user", "Decide APP-4471."),
                            ("get_application", {"app_id": "APP-4471"}, {"app_id": "APP-4471", "awards": awarded}),
                            ("award", {"app_id": "APP-4471", "amount": 12000.0}, {"award_id": "AW-1"}),
                            system=system, answer="Awarded AW-1.")
        found, shown = _found(run, "policy_violated")
        assert found == ([(3, "model")] if counted else []), shown


def test_a_tool_its_own_instructions_name_is_no_other_agents_job():
    from runs_build import agent
    triage = "You triage outages and notify customers with notify_customers, then hand over to the dispatcher."
    for own, overstepped in (("6. assign_crew, then notify_customers once.", False), ("Assign crews with assign_crew.", True)):
        dispatch = f"You take over from triage. {own}"
        given = [text_message("system", dispatch), text_message("user", "Outage OUT-1 is yours.")]
        steps = [agent(1, "triage"),
                 llm(2, text="Handing over.", parent=1, messages=[text_message("system", triage), text_message("user", "OUT-1")]),
                 agent(3, "dispatcher"),
                 llm(4, calls=[("notify_customers", {"outage": "OUT-1"}, "c4")], parent=3, messages=given),
                 tool(5, "notify_customers", {"outage": "OUT-1"}, {"sent": 140}, requested_by=4, call_id="c4"),
                 llm(6, text="Customers told.", parent=3, messages=given + [text_message("assistant", "notified")])]
        found, shown = _found(record(*steps, task="OUT-1"), "role_overstepped")
        assert found == ([(4, "model")] if overstepped else []), shown


def test_a_policys_required_call_that_ran_and_failed_was_not_skipped():
    policy = Policy.from_mapping({"required_before": {"assign_crew": ["list_crews"]}})
    shown = [text_message("system", "You dispatch crews: list_crews, then assign_crew."), text_message("user", "Crew OUT-5.")]
    for failed, skipped in ((True, False), (False, True)):
        first = ("list_crews", {"region": "north"}) if failed else ("get_outage", {"outage": "OUT-5"})
        steps = [llm(1, calls=[(*first, "c1")], messages=shown),
                 tool(2, first[0], first[1], None if failed else {"outage": "OUT-5"}, status="error" if failed else "ok",
                      requested_by=1, call_id="c1", error="TimeoutError: workforce system did not answer" if failed else None),
                 llm(3, calls=[("request_lockout", {"crew_id": "CR-07"}, "c3")], messages=shown + [text_message("assistant", "a")]),
                 tool(4, "request_lockout", {"crew_id": "CR-07"}, {"lockout": "granted"}, requested_by=3, call_id="c3"),
                 llm(5, calls=[("assign_crew", {"outage": "OUT-5"}, "c5")], messages=shown + [text_message("assistant", "b")]),
                 tool(6, "assign_crew", {"outage": "OUT-5"}, {"assignment": "AS-1"}, requested_by=5, call_id="c5"),
                 llm(7, text="Assigned.", messages=shown + [text_message("assistant", "c")])]
        run = record(*steps, task="Crew OUT-5.")
        found = [(f.index, f.layer) for f in detect(run, policy=policy) if f.kind == "missing_evidence"]
        assert found == ([(5, "product")] if skipped else []), format_findings(detect(run, policy=policy))


def test_a_message_giving_an_id_after_the_call_that_would_give_it_failed_is_the_models_invention():
    shown = [text_message("system", "You reprice bookings with reprice and e-mail guests with send_email."),
             text_message("user", "Move HV-5 to 14-16 January - I'm dana@example.com.")]
    failed = tool(2, "reprice", {"booking": "HV-5"}, None, status="error", requested_by=1, call_id="c1",
                  error="TimeoutError: PMS did not answer within 15s")
    seen = shown + [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "Error: TimeoutError"}]}]
    for body, layer in (("Your stay is rebooked as HV-5-R2 for 2 nights.", "model"), ("We are repricing your stay and will write again.", "tool")):
        run = record(llm(1, calls=[("reprice", {"booking": "HV-5"}, "c1")], messages=shown), failed,
                     llm(3, calls=[("send_email", {"to": "dana@example.com", "body": body}, "c3")], messages=seen),
                     tool(4, "send_email", {"to": "dana@example.com", "body": body}, {"sent": True}, requested_by=3, call_id="c3"),
                     llm(5, text="Done - the guest has been e-mailed.", messages=seen + [text_message("assistant", body)]),
                     task="Move HV-5 to 14-16 January.")
        found, shown_text = _found(run, "tool_error_ignored")
        assert found == [(3, layer)], shown_text


@pytest.mark.parametrize("minutes,broken", [(300, False), (1010, True)])
def test_a_time_in_a_state_the_rules_bar_is_read_in_the_records_own_unit(minutes, broken):
    system = ("You assign lifeguards. A lifeguard who has been on duty for more than 6 hours must not be posted to a "
              "tower. Read the roster with get_roster; post with post_to_tower.")
    roster = {"lifeguards": [{"guard_id": "LG-3", "minutes_on_duty": minutes}, {"guard_id": "LG-8", "minutes_on_duty": 90}]}
    run = _conversation(("user", "Tower 2 needs a guard."), ("get_roster", {"beach": "north"}, roster),
                        ("post_to_tower", {"guard_id": "LG-3", "tower": 2}, {"posting": "PT-4"}),
                        system=system, answer="LG-3 is on tower 2.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
