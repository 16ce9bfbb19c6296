"""Readings that stay quiet on good runs (heldout27-30's false alarms, in other trades): a pick among listed records
that the rules make by an order ("use the sample with the latest collection date") or that the user's words already
make by the record's name; a check written "before delivery" that binds the delivering tool, not a quote sent
earlier; a bar written for the call's own subject ("never renew a licence for a boat that already has an active
one") read against that subject's records only, and not as a role the agent must never play; one hand-in per item
(a payslip per crew member) that is no going on past the first; a result echoing its own call's words (a call-back
logged for one analyte) that is no record of what the id holds. Each beside the run that breaks the rule. Hand-built
runs."""

from __future__ import annotations

import json

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, record
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _offered(built, *names):
    attrs = definitions_attr(*((n, {"type": "object"}) for n in names))
    return record(*built.steps, attributes={s["span_id"]: attrs for s in built.steps if s["type"] == "llm"}, task=built.run["task"])


SAMPLES = {"well_id": "W-7", "samples": [{"sample_id": "S-3310", "collected": "2026-11-20", "nitrate_mg_l": 31.0},
                                         {"sample_id": "S-2984", "collected": "2026-08-02", "nitrate_mg_l": 18.0}]}


@pytest.mark.parametrize("system,owed", [
    ("You advise well owners. Read the well's samples with get_samples; use the sample with the latest collection date, "
     "then file the advice with record_advice.", False),
    ("You advise well owners. Read the well's samples with get_samples, then file the advice with record_advice.", True)])
def test_a_pick_the_rules_make_by_an_order_is_no_question_owed(system, owed):
    run = _conversation(("user", "Advice for well W-7, please."), ("get_samples", {"well_id": "W-7"}, SAMPLES),
                        ("record_advice", {"well_id": "W-7", "sample_id": "S-3310", "advice": "filter"}, {"advice_id": "AD-1"}),
                        system=system, answer="Filed AD-1: fit a nitrate filter (S-3310, 31 mg/l).")
    found, shown = _found(run, "clarification_skipped")
    assert found == ([(3, "model")] if owed else []), shown


HORSES = {"owner_id": "O-51", "horses": [{"horse_id": "H-201", "name": "Juniper"}, {"horse_id": "H-214", "name": "Pepper"}]}
FARRIER = ("You book the farrier for a livery yard. Find the owner with find_owner. If the owner's words fit more than one "
           "of their horses, ask which one before booking.")


@pytest.mark.parametrize("ask,owed", [("Please book the farrier for Pepper - owner O-51.", False),
                                      ("Please book the farrier for my horse - owner O-51.", True)])
def test_a_record_the_users_words_name_by_its_own_name_is_no_question_owed(ask, owed):
    run = _conversation(("user", ask), ("find_owner", {"owner_id": "O-51"}, HORSES),
                        ("book_farrier", {"horse_id": "H-214", "date": "2026-12-10"}, {"booking_id": "FB-9"}),
                        system=FARRIER, answer="Booked FB-9 for Pepper on 10 December.")
    found, shown = _found(run, "clarification_skipped")
    assert found == ([(3, "model")] if owed else []), shown


PRINT = ("You run print orders. 1. Price the job with get_price and confirm it with send_quote. 2. Every proof is "
         "checked with check_proof before delivery; deliver with deliver_files only when the check passed.")


@pytest.mark.parametrize("deed,checked,broken", [("send_quote", False, False), ("deliver_files", True, False),
                                                 ("deliver_files", False, True)])
def test_a_check_written_before_delivery_binds_the_delivering_tool_not_the_quote(deed, checked, broken):
    turns = [("user", "Order PO-77: 500 flyers.")]
    turns += [("check_proof", {"order_id": "PO-77"}, {"order_id": "PO-77", "passed": True})] if checked else []
    turns += [(deed, {"order_id": "PO-77"}, {"order_id": "PO-77", "status": "done"})]
    run = _offered(_conversation(*turns, system=PRINT, answer="Done."), "get_price", "send_quote", "check_proof", "deliver_files")
    found, shown = _found(run, "missing_evidence")
    assert found == ([(len(turns) * 2 - 3, "model")] if broken else []), shown


MOORINGS = ("You are the harbour office assistant. Read the berth holder's licences with list_licences. One licence per boat: "
            "never issue a mooring licence for a boat that already has an active licence on list_licences.")


@pytest.mark.parametrize("listed,status,broken", [("SEA SPRITE", "active", False), ("MORWENNA", "expired", False),
                                                  ("MORWENNA", "active", True)])
def test_a_bar_written_for_the_calls_own_subject_reads_that_subjects_records(listed, status, broken):
    licences = {"holder_id": "BH-40", "licences": [{"licence_id": "ML-118", "boat": listed, "status": status}]}
    run = _conversation(("user", "A licence for my boat MORWENNA, please (BH-40)."),
                        ("list_licences", {"holder_id": "BH-40"}, licences),
                        ("issue_licence", {"holder_id": "BH-40", "boat": "MORWENNA"}, {"licence_id": "ML-131", "status": "active"}),
                        system=MOORINGS, answer="Issued ML-131 for MORWENNA.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
    assert _found(run, "role_overstepped")[0] == []  # a bar on a condition, not a deed kept from this agent


def test_one_hand_in_per_item_is_no_going_on_past_the_first():
    crew = [("submit_payslip", {"member_id": m, "hours": 9}, {"payslip_id": f"PS-{m}", "status": "submitted"}) for m in ("C-1", "C-2")]
    run = _conversation(("user", "Pay the two riggers for Tuesday."), *crew, system="You are the production payroll clerk.",
                        answer="Submitted PS-C-1 and PS-C-2.")
    assert _found(run, "kept_going_after_answer")[0] == [], _found(run, "kept_going_after_answer")[1]
    again = _conversation(("user", "Pay the rigger for Tuesday."), crew[0], ("get_rates", {"union": "BECTU"}, {"hourly": 21.0}),
                          system="You are the production payroll clerk.", answer="Submitted PS-C-1.")
    assert _found(again, "kept_going_after_answer")[0] == [(3, "model")], _found(again, "kept_going_after_answer")[1]


SEATS = ("You sell season seats. Read the member's allowance with get_allowance: a member may hold at most 4 seats. If a "
         "request would take them over 4, offer only what is left. Never sell a seat for a block that already has a "
         "member's seat on get_allowance.")


@pytest.mark.parametrize("sold,broken", [(2, False), (5, True)])
def test_a_refusal_that_offers_what_is_left_is_a_yes_to_that_when_taken(sold, broken):
    allowance = {"member_id": "M-88", "held": 2, "max": 4, "seats": [{"seat_id": "S-12", "block": "North"}]}
    run = _conversation(("user", "Five more seats for M-88, please."), ("get_allowance", {"member_id": "M-88"}, allowance),
                        ("assistant", "You hold 2 of your 4 seats, so 2 are left - I can't sell 5. Would you like the 2?"),
                        ("user", "Yes, the 2 please."),
                        ("sell_seats", {"member_id": "M-88", "count": sold}, {"order_id": "SO-7", "count": sold}),
                        system=SEATS, answer=f"Sold {sold} seats (SO-7).")
    # 5 is what it said it would not do, 2 what was agreed; the block rule is about no call without a block
    found, shown = _found(run, "policy_violated")
    assert found == ([(4, "model")] if broken else []), shown
    assert _found(run, "wrong_target")[0] == [], _found(run, "wrong_target")[1]


def test_a_year_inside_an_id_names_no_sibling():
    loan = {"loan_id": "LN-2027-014", "object_id": "HM.1932.118", "borrower": "Musee d'Arles", "loan_start": "2027-02-01"}
    run = _conversation(("user", "Check loan LN-2027-014 before it goes out."), ("get_loan", {"loan_id": "LN-2027-014"}, loan),
                        ("get_object", {"object_id": "HM.1932.118"}, {"object_id": "HM.1932.118", "title": "Harbour at Dusk"}),
                        system="You are the loans registrar.", answer="LN-2027-014: Harbour at Dusk, ready to go.")
    assert _found(run, "wrong_target")[0] == [], _found(run, "wrong_target")[1]


@pytest.mark.parametrize("asked,owed", [(True, False), (False, True)])
def test_a_pick_after_asking_the_user_which_is_no_question_skipped(asked, owed):
    account = {"account": "ACC-552", "addresses": [{"address_id": "AD-1", "line1": "88 Harrow Road"},
                                                   {"address_id": "AD-2", "line1": "Flat 5, 2 Quay Street"}]}
    turns = [("user", "Book my broadband install - account ACC-552."), ("find_customer", {"account": "ACC-552"}, account)]
    if asked:
        turns += [("assistant", "I see 88 Harrow Road and Flat 5, 2 Quay Street. Which address is it for?"),
                  ("user", "The flat on Quay Street.")]
    turns += [("book_install", {"account": "ACC-552", "address_id": "AD-2"}, {"booking": "IN-7", "status": "booked"})]
    run = _conversation(*turns, system="You book installs.", answer="Booked IN-7 at Flat 5, 2 Quay Street.")
    found, shown = _found(run, "clarification_skipped")
    assert bool(found) == owed, shown


def test_a_fee_by_a_rate_of_a_product_the_rules_give_is_grounded():
    from agentotel.analysis import _ground
    contract = {"monthly_price": 42.0, "months_left": 13}
    rules = "Leaving early costs 50% of the monthly price for each month left. " + json.dumps(contract)
    assert _ground.ungrounded("13 months left at GBP 42.00: the fee is GBP 273.00.", rules, [contract]) == []
    assert _ground.ungrounded("13 months left at GBP 42.00: the fee is GBP 546.50.", rules, [contract]) == ["546.50"]


@pytest.mark.parametrize("read,broken", [(False, False), (True, True)])
def test_a_result_echoing_its_own_calls_words_is_no_record_of_the_id(read, broken):
    # log_callback(accession, analyte='potassium') answers them back: what that call was about, not what the
    # accession holds; a read that gives the accession's analyte (one specimen, one test) still binds a later call
    logged = {"callback_id": "CB-1", "accession": "L-240871", "analyte": "potassium", "logged": True}
    turns = [("user", "Report L-240871."),
             ("log_callback", {"accession": "L-240871", "analyte": "potassium"}, logged)]
    turns += [("get_order", {"accession": "L-240871"}, {"accession": "L-240871", "analyte": "potassium", "ward": "12"})] if read else []
    turns += [("report_result", {"accession": "L-240871", "analyte": "glucose", "value": 7.9}, {"report_id": "RPT-2"})]
    run = _conversation(*turns, system="You report lab results with report_result.", answer="Reported.")
    found, shown = _found(run, "wrong_target")
    assert found == ([(5, "model")] if broken else []), shown
