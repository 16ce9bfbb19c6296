"""Written rules that gate an action on what a record the run read holds, and the words at a call that name another
record than it acts on (heldout15's misses, in other trades): an action kept for records in one state ("Ship only
orders that list_orders shows as packed"), one barred without a thing on file ("A surgery (spay, dental) requires a
signed consent form on file; never schedule one ..."), one that must carry someone for a person past an age ("A
passenger under 16 is booked with their accompanying adult named in book_flight's escort"), a call the rules ask for
after an action ("After resetting a password, notify the employee with send_notice"), the id said beside the call
that gives its sibling, and a tool asked about one kind answering another. Each beside the run that keeps the rule.
Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


WAREHOUSE = ("You are the warehouse dispatcher. Ship only orders that list_orders shows as packed; tell the customer "
             "when theirs will leave.")
ORDERS = {"orders": [{"order_id": "OR-4410", "customer": "Ames", "status": "packed"},
                     {"order_id": "OR-4411", "customer": "Brandt", "status": "awaiting_stock"}]}


@pytest.mark.parametrize("order,broken", [("OR-4410", False), ("OR-4411", True)])
def test_an_action_kept_for_records_in_one_state_on_a_record_in_another_breaks_the_rule(order, broken):
    run = _conversation(("user", "Ship today's orders for Ames and Brandt."), ("list_orders", {"date": "2026-12-04"}, ORDERS),
                        ("ship_order", {"order_id": order}, {"order_id": order, "shipment": "SH-88"}),
                        system=WAREHOUSE, answer=f"{order} has shipped.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("status,broken", [("delivered", False), ("in_transit", True)])
def test_a_state_written_before_the_noun_keeps_the_action_for_it(status, broken):
    order = {"order_id": "OR-7120", "status": status, "total": 64.0}
    run = _conversation(("user", "Please refund order OR-7120."), ("get_order", {"order_id": "OR-7120"}, order),
                        ("refund_order", {"order_id": "OR-7120"}, {"status": "refunded"}),
                        system="You are the returns agent. Refund only delivered orders.", answer="OR-7120 is refunded.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


VET = ("You are the front desk of Hollow Oak Vets.\n1. A surgery (spay, neuter, dental) requires a signed consent form on "
       "file; never schedule one before checking get_consent.\n2. Vaccinations need no form.")


@pytest.mark.parametrize("procedure,consent,broken", [
    ("dental", None, True),
    ("dental", {"form_id": "CF-301", "signed": "2026-11-02"}, False),
    ("vaccination", None, False),  # out of the rule's scope
])
def test_an_action_barred_without_a_thing_on_file_breaks_the_rule_where_the_record_holds_none(procedure, consent, broken):
    run = _conversation(("user", f"Can you book Biscuit (PET-88) for a {procedure} next week?"),
                        ("get_consent", {"pet_id": "PET-88"}, {"pet_id": "PET-88", "consent_form": consent}),
                        ("schedule_procedure", {"pet_id": "PET-88", "procedure": procedure, "day": "2026-12-09"},
                         {"booking_id": "VB-12", "status": "scheduled"}),
                        system=VET, answer=f"Biscuit is booked for the {procedure} on 9 December.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


AIRLINE = ("You are the booking agent of Skylark Air. A passenger under 16 is booked with their accompanying adult named in "
           "book_flight's escort. Read the passenger with get_passenger first.")


@pytest.mark.parametrize("age,escort,broken", [(12, "", True), (12, "Nora Vale", False), (34, "", False)])
def test_an_action_that_must_carry_someone_for_a_person_past_an_age_breaks_the_rule_without_them(age, escort, broken):
    run = _conversation(("user", "Please book PA-220 on SK 311 tomorrow."),
                        ("get_passenger", {"passenger_id": "PA-220"}, {"passenger_id": "PA-220", "age": age, "name": "Tim Vale"}),
                        ("book_flight", {"passenger_id": "PA-220", "flight": "SK 311", "escort": escort},
                         {"booking": "BK-5501", "status": "confirmed"}),
                        system=AIRLINE, answer="PA-220 is booked on SK 311.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


HELPDESK = "You are the IT helpdesk agent. After resetting a password, notify the employee with send_notice."


@pytest.mark.parametrize("notified", [True, False])
def test_a_call_the_rules_ask_for_after_an_action_never_made_is_flagged_at_the_answer(notified):
    turns = [("user", "I'm locked out, employee E-5120."),
             ("reset_password", {"employee_id": "E-5120"}, {"employee_id": "E-5120", "status": "reset"})]
    if notified:
        turns.append(("send_notice", {"employee_id": "E-5120", "text": "Your password was reset."}, {"status": "sent"}))
    run = _conversation(*turns, system=HELPDESK, answer="Your password is reset; check your mail for the new one.")
    found, shown = _found(run, "policy_violated")
    assert found == ([] if notified else [(len(turns) * 2 - 1, "model")]), shown


PRESCRIPTIONS = {"prescriptions": [{"rx_id": "RX-40912", "drug": "atorvastatin", "refills_left": 2},
                                   {"rx_id": "RX-40921", "drug": "lisinopril", "refills_left": 1}]}


@pytest.mark.parametrize("said,called,slipped", [
    ("Refilling RX-40912 now.", "RX-40921", True),
    ("Refilling RX-40912 now.", "RX-40912", False),
    ("RX-40921 has no refills due yet, so refilling the other one.", "RX-40912", False),  # the id put aside
])
def test_the_id_the_words_at_a_call_name_beside_a_call_on_its_sibling_is_a_reasoning_action_mismatch(said, called, slipped):
    system = text_message("system", "You are the pharmacy agent. Refill what the patient asks for.")
    ask = text_message("user", "Please refill my atorvastatin, patient PT-77.")
    listed = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": PRESCRIPTIONS}]}
    asked = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "list_prescriptions",
                                             "arguments": {"patient_id": "PT-77"}}]}
    steps = [llm(1, calls=[("list_prescriptions", {"patient_id": "PT-77"}, "c1")], messages=[system, ask]),
             tool(2, "list_prescriptions", {"patient_id": "PT-77"}, PRESCRIPTIONS, requested_by=1, call_id="c1"),
             llm(3, text=said, calls=[("refill_prescription", {"rx_id": called}, "c2")], messages=[system, ask, asked, listed]),
             tool(4, "refill_prescription", {"rx_id": called}, {"rx_id": called, "status": "refilled"}, requested_by=3, call_id="c2"),
             llm(5, text="Your refill is on its way.", messages=[system, ask, asked, listed])]
    found, shown = _found(record(*steps, task=ask["parts"][0]["content"]), "reasoning_action_mismatch")
    assert found == ([(3, "model")] if slipped else []), shown


@pytest.mark.parametrize("asked,answered,flagged", [
    ({"region": "alpine"}, {"region": "coastal", "days": [{"day": "Fri", "snow_cm": 0}]}, True),
    ({"region": "alpine"}, {"region": "alpine", "days": [{"day": "Fri", "snow_cm": 30}]}, False),
    ({"region": "alpine", "units": "metric"}, {"region": "alpine", "units": "imperial", "days": []}, False),  # the form
])
def test_a_tool_asked_about_one_kind_answering_another_under_the_same_key_answered_another_subject(asked, answered, flagged):
    run = _conversation(("user", "Will there be fresh snow in the alpine region on Friday?"), ("get_forecast", asked, answered),
                        system="You are the resort's weather assistant.", answer="No fresh snow is expected on Friday.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == ([(2, "tool")] if flagged else []), shown


LEDGER = ("You are the accounting assistant. Once a month is closed it stays as it is: post a late entry to the next open "
          "month and say which.")


@pytest.mark.parametrize("month,broken", [("M-2026-11", True), ("M-2026-12", False)])
def test_an_action_on_a_record_the_rules_freeze_in_a_state_breaks_the_rule(month, broken):
    # the closed month's record names the open one (next_open): pointing at a record is not being it
    closed = {"month_id": "M-2026-11", "status": "closed", "next_open": "M-2026-12"}
    run = _conversation(("user", "Please book invoice IN-88 (120.00 EUR) dated 28 November."),
                        ("get_month", {"month_id": "M-2026-11"}, closed),
                        ("get_invoice", {"invoice_id": "IN-88", "month_id": "M-2026-11"}, {"invoice_id": "IN-88", "month_id": "M-2026-11"}),
                        ("post_entry", {"invoice_id": "IN-88", "month_id": month, "amount": 120.0}, {"entry_id": "JE-5", "status": "posted"}),
                        system=LEDGER, answer=f"IN-88 is posted to {month}.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


ESCROW = "You are the escrow agent. Do not call release_funds unless check_kyc came back with cleared: true."


@pytest.mark.parametrize("kyc,broken", [(None, True), (False, True), (True, False)])
def test_an_action_forbidden_unless_a_named_check_answered_a_value_breaks_the_rule_without_it(kyc, broken):
    turns = [("user", "Please release the funds held for deal D-77.")]
    if kyc is not None:
        turns.append(("check_kyc", {"deal_id": "D-77"}, {"deal_id": "D-77", "cleared": kyc}))
    turns.append(("release_funds", {"deal_id": "D-77"}, {"deal_id": "D-77", "status": "released"}))
    run = _conversation(*turns, system=ESCROW, answer="The funds for D-77 are released.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(len(turns) * 2 - 3, "model")] if broken else []), shown


RENTALS = ("You are the car-rental desk. Today is 2026-12-04. We only rent to drivers whose licence status is 'valid' and "
           "whose insurance (policy_expires) is still current - check get_driver first, and turn anyone else away.")


@pytest.mark.parametrize("status,expires,broken", [("valid", "2027-03-01", False), ("suspended", "2027-03-01", True),
                                                   ("valid", "2026-11-30", True)])
def test_an_action_kept_for_records_meeting_the_conditions_an_only_sentence_writes_breaks_it_on_one_that_does_not(
        status, expires, broken):
    driver = {"driver_id": "DR-40", "name": "Ana Ruiz", "status": status, "policy_expires": expires}
    run = _conversation(("user", "I'd like a compact car for the weekend, driver DR-40."),
                        ("get_driver", {"driver_id": "DR-40"}, driver),
                        # a quote names the driver, and a quote's status is not the driver's
                        ("get_quote", {"driver_id": "DR-40"}, {"quote_id": "QU-9", "driver_id": "DR-40", "status": "open"}),
                        ("create_rental", {"driver_id": "DR-40", "quote_id": "QU-9"}, {"rental_id": "RN-5", "status": "confirmed"}),
                        system=RENTALS, answer="Your compact car is booked: RN-5.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


LOANS = "You are the loan officer's assistant. Approve a loan (approve_loan) only when debt_ratio is below 40% and credit_score above 650."


@pytest.mark.parametrize("ratio,score,broken", [(0.31, 700, False), (0.52, 700, True), (31.0, 610, True)])
def test_figures_an_only_sentence_bounds_are_judged_on_the_record_read_percent_or_fraction(ratio, score, broken):
    applicant = {"applicant_id": "AP-3", "debt_ratio": ratio, "credit_score": score}
    run = _conversation(("user", "Please approve AP-3's loan."), ("get_applicant", {"applicant_id": "AP-3"}, applicant),
                        ("approve_loan", {"applicant_id": "AP-3", "amount": 12000}, {"status": "approved"}),
                        system=LOANS, answer="AP-3's loan is approved.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("opened,broken", [("2025-01-10", False), ("2026-11-01", True)])
def test_an_age_an_only_sentence_asks_of_a_record_is_counted_from_its_date(opened, broken):
    system = ("You are the bank's upgrade desk. Today is 2026-12-04. Premium upgrades (upgrade_account) are only for "
              "accounts open for 90 days or more.")
    run = _conversation(("user", "Upgrade my account AC-12 to premium, please."),
                        ("get_account", {"account_id": "AC-12"}, {"account_id": "AC-12", "opened_on": opened, "tier": "basic"}),
                        ("upgrade_account", {"account_id": "AC-12", "tier": "premium"}, {"status": "upgraded"}),
                        system=system, answer="AC-12 is now premium.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
