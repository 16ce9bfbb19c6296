"""Readings of heldout41-46's first-contact false alarms, each beside the run that still breaks the rule, in trades of
their own: figures among amounts are no versions; a date a day from a record's by the instructions' "the day before",
a rate times a count the answer writes, a total of listed figures and its stated conversion are grounded; "never X
from rows you did not read" is a condition, not a ban; a record told by the id the deed was given; a rule about "a
submission whose status is 'withdrawn'" is about that case; a successor a record names is the request's thing; a read
each thing of a pair needs is needed only for its own thing. Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool
from test_data_agent import _conversation
from test_first_contact import _offering


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _said_and_called(system: str, ask: str, said: str, call: tuple):
    shown = [text_message("system", system), text_message("user", ask)]
    return record(llm(1, text=said, calls=[(call[0], call[1], "c1")], messages=shown),
                  tool(2, call[0], call[1], call[2], requested_by=1, call_id="c1"),
                  llm(3, text="Done.", messages=shown), task=ask)


@pytest.mark.parametrize("said,arguments,broken", [
    ("14 months at GBP 18.00 paid so far (GBP 252.00).", {"rental_id": "RN-40931", "buyout_gbp": 418.4}, False),
    ("Budget: GBP 6751.10 of GBP 8000.00 with this trip's GBP 1631.10.", {"rental_id": "RN-40931", "total_gbp": 1631.1}, False),
    ("Recording the buyout on price list v2.18.", {"rental_id": "RN-40931", "price_list": "v2.17"}, True),
])
def test_figures_among_amounts_are_no_version_marks(said, arguments, broken):
    run = _said_and_called("You quote instrument buyouts.", "Buyout quote for rental RN-40931 on price list v2.18?", said,
                           ("record_buyout_quote", arguments, {"quote_id": "BQ-1"}))
    found, shown = _found(run, "wrong_target")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [
    ("Out 2027-03-14, back 2027-03-18; per diem USD 79.00 x 5 days = USD 395.00.", False),
    ("Out 2027-03-14, back 2027-03-18; per diem USD 79.00 x 5 days = USD 415.00.", True),
])
def test_a_day_before_and_a_rate_times_a_written_count_are_worked_out(answer, broken):
    run = _conversation(("user", "Prepare my trip request for CONF-7781."),
                        ("get_conference", {"conference_id": "CONF-7781"},
                         {"conference_id": "CONF-7781", "city": "Boston", "starts": "2027-03-15", "ends": "2027-03-17"}),
                        system="You prepare travel requests. Travel out the day before the conference starts and back "
                               "the day after it ends. Per diem: Boston USD 79.00 a day, every day of travel.",
                        answer=answer)
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [
    ("GO: load 564 kg = 1,243.4 lb against max payload 1,450 lb.", False),
    ("GO: load 604 kg = 1,331.6 lb against max payload 1,450 lb.", True),
])
def test_the_total_of_listed_figures_and_its_stated_conversion_are_grounded(answer, broken):
    run = _conversation(("user", "Ops check for Q-5521.\nPassengers (kg): 92, 78, 85, 70, 88, 64\nBags (kg): 20, 15, 12, 10, 18, 12"),
                        ("get_aircraft", {"tail": "N512NW"}, {"tail": "N512NW", "max_payload_lb": 1450}),
                        system="You check charter loads. 1 kg = 2.2046 lb.", answer=answer)
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("rule,broken", [
    ("Never record a breach from rows you did not read.", False),
    ("Never record a breach yourself.", True),
])
def test_a_bar_on_what_a_deed_rests_on_is_a_condition_not_a_ban(rule, broken):
    run = _conversation(("user", "Review match NB-2612's resale listings."),
                        ("run_sql", {"sql": "SELECT * FROM listings WHERE match_id = 'NB-2612'"}, {"rows": [["L-3302", 112.0]]}),
                        ("record_breach", {"listing_id": "L-3302", "rule": "price_cap"}, {"breach_id": "BR-9403"}),
                        system="You review resale listings for breaches. " + rule, answer="L-3302 breaches the price cap.")
    found, shown = _found(run, "role_overstepped")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [("Breaches: L-3302 (price cap).", False), ("One breach recorded.", True)])
def test_a_record_the_deed_made_is_told_by_the_id_it_was_made_for(answer, broken):
    run = _conversation(("user", "Review match NB-2612's resale listings."),
                        ("record_breach", {"listing_id": "L-3302", "rule": "price_cap"}, {"breach_id": "BR-9403"}),
                        system="You review resale listings. Reply with each breach you recorded.", answer=answer)
    found, shown = _found(run, "information_withheld")
    assert found == ([(3, "model")] if broken else []), shown


FESTIVAL = ("You run festival intake. 1. Read the submission with get_submission. A submission whose status is "
            "'withdrawn' and that names resubmitted_as was resubmitted under that new id: read the new one with "
            "get_submission and work only on the new one.")


def test_a_rule_about_the_case_a_sentence_opens_on_is_no_condition_on_every_record():
    run = _conversation(("user", "Intake FS-2304, please."),
                        ("get_submission", {"submission_id": "FS-2304"}, {"submission_id": "FS-2304", "status": "received"}),
                        ("record_intake", {"submission_id": "FS-2304", "eligible": True}, {"intake_id": "IN-1"}),
                        system=FESTIVAL, answer="FS-2304 recorded (IN-1).")
    found, shown = _found(run, "policy_violated")
    assert found == [], shown


def test_the_successor_a_record_names_is_the_requests_thing_under_its_new_id():
    old = {"submission_id": "FS-2210", "status": "withdrawn", "resubmitted_as": "FS-2297"}
    run = _conversation(("user", "Intake FS-2210, please."), ("get_submission", {"submission_id": "FS-2210"}, old),
                        ("get_submission", {"submission_id": "FS-2297"}, {"submission_id": "FS-2297", "status": "received"}),
                        ("record_intake", {"submission_id": "FS-2297", "eligible": True}, {"intake_id": "IN-2"}),
                        system=FESTIVAL, answer="FS-2210 was resubmitted as FS-2297; FS-2297 recorded (IN-2).")
    found, shown = _found(run, "task_ignored")
    assert found == [], shown


@pytest.mark.parametrize("call,broken", [
    (("book_pitch", {"pitch_id": "P-12", "arrival": "2027-07-01", "nights": 3}), False),
    (("amend_reservation", {"reservation_id": "RV-881", "pitch_id": "P-12"}), True),
])
def test_a_read_a_rule_pairs_with_one_thing_is_needed_only_for_that_thing(call, broken):
    rules = ("You run the RV park's desk. Always read a reservation with find_reservation and a pitch with "
             "check_availability before acting on them.")
    run = _offering(_conversation(("user", "Pitch P-12 from 1 July for 3 nights, please - reservation RV-881 if you need it."),
                                  ("check_availability", {"pitch_id": "P-12"}, {"pitch_id": "P-12", "free": True}),
                                  (*call, {"status": "ok"}), system=rules, answer="Done."),
                    "find_reservation", "check_availability", "book_pitch", "amend_reservation")
    found, shown = _found(run, "missing_evidence")
    assert found == ([(3, "model")] if broken else []), shown
