"""Exceptions granted on grounds the run never had, and figures that changed unit without their conversion (the
general forms behind heldout34-40's 'an exception the user's words do not give' and 'a unit conversion skipped').
Found: the user's reason one the rules name as none ("Holidays, work trips or a change of plans are not medical
reasons") and the exception granted all the same; an exception kept for a record's field granted on a record saying
otherwise; the user's 31 lb booked as weight_kg 31, a record's loa_ft 42 as length_m 42, 480 kg compared with a 1,200 lb
limit. Quiet: the exception refused or stated as the rule, a reason the rules do not name, the field as the rule
needs it, figures converted or given in both units. Hand-built runs, in trades of their own."""

from __future__ import annotations

import pytest

from agentotel.analysis import _rules
from agentotel.analysis.detectors import detect, format_findings
from runs_build import llm, record, text_message, tool
from test_data_agent import _conversation
from test_first_contact import _offering


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


GYM = ("You run the gym's membership desk. A membership may be frozen for 1 to 3 months. The freeze fee (GBP 15) is "
       "waived only for medical reasons. Holidays, work trips or a change of plans are not medical reasons. Tell the "
       "member the fee before you freeze.")
MEMBER = ("get_member", {"member_id": "GM-3310"}, {"member_id": "GM-3310", "status": "active", "plan": "off-peak"})


@pytest.mark.parametrize("asked,said,broken", [
    ("I'm away on a work trip for a month - can you freeze GM-3310 without the fee?",
     "As this is for medical reasons, the freeze fee is waived. Shall I freeze it from 1 January?", True),
    ("I'm away on a work trip for a month - can you freeze GM-3310 without the fee?",
     "A work trip isn't a medical reason, so the GBP 15 freeze fee applies. Shall I freeze it from 1 January?", False),
    ("I've broken my ankle and can't train for two months - please freeze GM-3310.",
     "As this is for medical reasons, the freeze fee is waived. Shall I freeze it from 1 January?", False),
    ("I'm away on a work trip for a month - can you freeze GM-3310?",
     "The GBP 15 fee is waived only for medical reasons. Shall I freeze it from 1 January?", False),
])
def test_an_exception_granted_on_a_reason_the_rules_name_as_none_breaks_the_rule(asked, said, broken):
    run = _conversation(("user", asked), MEMBER, system=GYM, answer=said)
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


def test_the_reasons_read_are_the_ones_listed_and_a_class_barred_names_none():
    assert _rules.read(GYM).not_reasons == (
        ("Holidays, work trips or a change of plans are not medical reasons", ("medical", "reasons"),
         ("holidays", "work trips", "change plans")),)
    assert _rules.read("Monthly invoices are not refundable. Refunds are allowed only on annual plans.").not_reasons == ()
    waived = _rules.read("The late fee is waived only for members whose tier is gold - not for students, first "
                         "offences or any other reason.").not_reasons
    assert [(w, r) for _s, w, r in waived] == [(("waived",), ("students", "first offences"))]


PARKING = ("You run the council's parking permits. Visitor permits carry a GBP 4.00 surcharge per day. The surcharge is "
           "waived only when the permit holder's blue_badge is true.")


@pytest.mark.parametrize("badge,said,broken", [
    (False, "Your visitor permit for 3 days is ready to issue; the surcharge is waived. Shall I issue it?", True),
    (True, "Your visitor permit for 3 days is ready to issue; the surcharge is waived. Shall I issue it?", False),
    (False, "Your visitor permit for 3 days costs GBP 12.00 - the surcharge can only be waived for Blue Badge holders. "
            "Shall I issue it?", False),
])
def test_an_exception_kept_for_a_records_field_granted_on_a_record_saying_otherwise_breaks_the_rule(badge, said, broken):
    holder = ("get_permit_holder", {"holder_id": "PH-2207"}, {"holder_id": "PH-2207", "zone": "K", "blue_badge": badge})
    run = _conversation(("user", "A visitor permit for 3 days from Friday for PH-2207, please."), holder,
                        system=PARKING, answer=said)
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


BIKES = "You book bike racks on the coach. Bikes over 25 kg go in the hold. 1 kg = 2.2046 lb."


@pytest.mark.parametrize("weight,broken", [(31.0, True), (14.1, False)])
def test_the_users_figure_booked_in_another_unit_unconverted_is_a_unit_mismatch(weight, broken):
    run = _conversation(("user", "Add my e-bike to booking CB-5520 - it weighs 31 lb."),
                        ("add_bike", {"booking_ref": "CB-5520", "weight_kg": weight}, {"bike_id": "BK-1", "status": "added"}),
                        system=BIKES, answer="Your e-bike is added (BK-1).")
    found, shown = _found(run, "unit_mismatch")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("length,broken", [(42.0, True), (12.8, False)])
def test_a_records_figure_put_in_a_field_of_another_unit_is_a_unit_mismatch(length, broken):
    run = _conversation(("user", "Reserve a berth for Kittiwake (GBR-2214) on Saturday."),
                        ("get_vessel", {"registration": "GBR-2214"}, {"registration": "GBR-2214", "loa_ft": 42.0}),
                        ("reserve_berth", {"registration": "GBR-2214", "length_m": length}, {"reservation_id": "RS-1"}),
                        system="You reserve marina berths by the boat's length in metres (1 ft = 0.3048 m).",
                        answer="Reserved (RS-1).")
    found, shown = _found(run, "unit_mismatch")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("said,broken", [
    ("The pallet is 480 kg, under the 1,200 lb floor limit, so it can go on the mezzanine.", True),
    ("The pallet is 480 kg (1,058 lb), under the 1,200 lb floor limit, so it can go on the mezzanine.", False),
])
def test_figures_compared_across_units_are_a_unit_mismatch(said, broken):
    run = _conversation(("user", "Can pallet PL-88 go on the mezzanine?"),
                        ("get_pallet", {"pallet_id": "PL-88"}, {"pallet_id": "PL-88", "gross_kg": 480}),
                        system="You place pallets. The mezzanine floor takes at most 1,200 lb a pallet.", answer=said)
    found, shown = _found(run, "unit_mismatch")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_figure_a_record_gives_in_both_units_is_no_mismatch():
    run = _conversation(("user", "Book the zipline for traveller TR-7 tomorrow."),
                        ("get_traveller", {"traveller_id": "TR-7"}, {"traveller_id": "TR-7", "weight_kg": 93.0, "weight_lb": 205.0}),
                        ("book_activity", {"traveller_id": "TR-7", "activity": "zipline", "weight_kg": 93.0}, {"booking": "ZB-1"}),
                        system="You book activities; the zipline takes at most 95 kg.", answer="Booked (ZB-1): 93 kg is within 95 kg.")
    found, shown = _found(run, "unit_mismatch")
    assert found == [], shown


VENUE = ("You book caterers for the hall's events. A caterer's food-hygiene certificate must not expire before the event "
         "date; if it does, book nothing and tell the organiser.")


@pytest.mark.parametrize("expires,broken", [("2026-12-10", True), ("2027-03-01", False)])
def test_a_deed_dated_after_the_expiry_of_the_record_it_rests_on_breaks_the_rule(expires, broken):
    caterer = {"caterer_id": "CT-410", "name": "Fennel & Fig", "hygiene": {"rating": 5, "certificate_expires": expires}}
    run = _conversation(("user", "Book Fennel & Fig (CT-410) for our dinner on 18 December."),
                        ("get_caterer", {"caterer_id": "CT-410"}, caterer),
                        ("book_caterer", {"caterer_id": "CT-410", "event_date": "2026-12-18", "covers": 80},
                         {"booking_id": "BC-7", "status": "booked"}),
                        system=VENUE, answer="Booked (BC-7).")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


def test_the_deeds_day_is_the_date_of_the_record_it_names_and_a_remedy_argument_keeps_it_quiet():
    slots = {"slots": [{"slot_id": "SL-1216", "date": "2026-12-16", "instrument": "CRYO-1"},
                       {"slot_id": "SL-1203", "date": "2026-12-03", "instrument": "CRYO-1"}]}
    user = {"user_id": "U-88", "training": [{"instrument": "CRYO-1", "expires": "2026-12-10"}]}
    rules = ("You book instrument sessions. An unassisted session needs training on the instrument that does not "
             "expire before the session date.")
    for slot, extra, broken in (("SL-1216", {}, True), ("SL-1203", {}, False),
                                ("SL-1216", {"assisted": True}, False)):
        told = rules + (" Otherwise book an assisted session (assisted true)." if extra else "")
        run = _conversation(("user", "Book me a CRYO-1 session, user U-88."), ("get_user", {"user_id": "U-88"}, user),
                            ("list_slots", {"instrument": "CRYO-1"}, slots),
                            ("book_session", {"user_id": "U-88", "slot_id": slot, **extra}, {"session_id": "BS-1"}),
                            system=told, answer="Booked (BS-1).")
        found, shown = _found(run, "policy_violated")
        assert found == ([(5, "model")] if broken else []), (slot, extra, shown)


def test_an_exception_granted_in_an_offer_is_found_at_the_deed_that_carries_it_out():
    holder = ("get_permit_holder", {"holder_id": "PH-2207"}, {"holder_id": "PH-2207", "zone": "K", "blue_badge": False})
    run = _conversation(("user", "A visitor permit for 3 days from Friday for PH-2207, please."), holder,
                        ("assistant", "A 3-day visitor permit from Friday; the surcharge is waived. Shall I issue it?"),
                        ("user", "Yes please."),
                        ("issue_permit", {"holder_id": "PH-2207", "days": 3, "surcharge_gbp": 0.0}, {"permit_id": "VP-91"}),
                        system=PARKING, answer="Issued (VP-91).")
    found, shown = _found(run, "policy_violated")
    assert found == [(4, "model")], shown


@pytest.mark.parametrize("rule,broken", [
    ("The medical form on file must be valid on the trip day. If it expires before, ask the diver the form's questions "
     "and record the answers with record_medical before you book.", False),
    ("Ask the diver the form's questions and record the answers with record_medical before you book.", True),
])
def test_a_check_asked_for_on_a_condition_of_another_thing_is_no_check_skipped(rule, broken):
    diver = ("find_diver", {"diver_id": "D-3301"}, {"diver_id": "D-3301", "medical": {"expires": "2027-06-30"}})
    book = ("book_trip", {"diver_id": "D-3301", "trip_id": "T-1209-B"}, {"booking_id": "BK-1", "status": "booked"})
    run = _offering(_conversation(("user", "Book me on Wednesday's Benwood trip, diver D-3301."), diver, book,
                                  system="You book dive trips. " + rule, answer="Booked (BK-1)."),
                    "find_diver", "record_medical", "book_trip")
    found, shown = _found(run, "missing_evidence")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("title,broken", [("Catalogue raisonné, 2026 edition", True), ("Bronze reclining figure, 1962", False)])
def test_a_year_in_a_records_title_is_a_sibling_only_beside_a_record_titled_with_the_year_asked(title, broken):
    listing = {"sale": {"sale_id": "S27-0303", "date": "2027-03-03"},
               "lots": [{"lot_id": "L-0587", "title": title}, {"lot_id": "L-0588", "title": "Catalogue raisonné, 2027 edition"
                                                                                              if broken else "Set of six elm chairs"}]}
    run = _conversation(("user", "Appraise the lot for the 2027 sale in consignment C-7731."),
                        ("get_consignment", {"consignment_id": "C-7731"}, listing),
                        ("get_lot_appraisal", {"lot_id": "L-0587"}, {"lot_id": "L-0587", "low_gbp": 48000}),
                        system="You appraise consigned lots.", answer="L-0587: GBP 48,000 low estimate.")
    found, shown = _found(run, "wrong_target")
    assert found == ([(3, "model")] if broken else []), shown


def test_an_expiry_that_lifts_a_block_is_no_expired_thing_acted_on():
    rules = ("You schedule e-mail sends. Never send to a contact on the suppression list; a cooldown entry stops applying "
             "after its expires_at, so it must not expire before the send date to still block.")
    listed = {"list_id": "SUP-1", "entries": [{"contact_id": "C-1005", "reason": "cooldown", "expires_at": "2026-12-01"}]}
    run = _conversation(("user", "Send campaign CP-7 to C-1005 on 8 December."), ("get_suppression_list", {"list_id": "SUP-1"}, listed),
                        ("schedule_send", {"campaign_id": "CP-7", "contact_ids": ["C-1005"], "send_date": "2026-12-08"},
                         {"send_id": "SD-1"}), system=rules, answer="Scheduled (SD-1).")
    found, shown = _found(run, "policy_violated")
    assert found == [], shown


FEES = ("You run the driving school's desk. A lesson cancelled late pays a fee from this table:\n\n"
        "| Notice before the lesson | Fee |\n|---|---|\n| 48 hours or more | none |\n"
        "| 24 to under 48 hours | 50% of the lesson price |\n| under 24 hours | 100% of the lesson price |\n")


@pytest.mark.parametrize("said,broken", [
    ("Cancelling LS-88410: fee 42.00 (30 hours' notice, 100% of 42.00). Shall I go ahead?", True),
    ("Cancelling LS-88410: fee 21.00 (30 hours' notice, 50% of 42.00). Shall I go ahead?", False),
    ("Cancelling LS-88410: fee 42.00 (20 hours' notice, 100% of 42.00). Shall I go ahead?", False),
    ("Fees: 50% from 24 to under 48 hours' notice, 100% under 24 hours. Which lesson?", False),
])
def test_a_figure_from_another_band_of_the_instructions_table_breaks_the_rule(said, broken):
    run = _conversation(("user", "Cancel my lesson LS-88410, please."),
                        ("get_bookings", {"learner_id": "L-40917"}, {"bookings": [{"lesson_id": "LS-88410", "price_gbp": 42.0}]}),
                        system=FEES, answer=said)
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


LEAGUE = ("You register players. Fees by division:\n\n| Division | Fee |\n|---|---|\n| U12 | $70.00 |\n| U14 | $90.00 |\n"
          "| U16 | $110.00 |\n")


@pytest.mark.parametrize("fee,broken", [(110.0, True), (90.0, False)])
def test_an_argument_naming_a_tables_row_with_another_rows_figure_breaks_the_rule(fee, broken):
    run = _conversation(("user", "Register Ada (2012-05-02) for the spring season."),
                        ("record_invoice", {"family_id": "F-204", "lines": [{"player": "Ada", "division": "U14", "fee": fee}]},
                         {"invoice_id": "INV-9"}), system=LEAGUE, answer="Invoice INV-9.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("day,broken", [("2027-01-20", False), ("2027-01-27", True)])
def test_a_date_a_stated_number_of_months_from_a_records_date_is_grounded(day, broken):
    run = _conversation(("user", "When can I take my test? Learner L-40917."),
                        ("find_learner", {"learner_id": "L-40917"}, {"learner_id": "L-40917", "permit_issued": "2026-07-20"}),
                        system="You book driving tests. A learner must have held the permit six months before a test.",
                        answer=f"Your permit was issued 2026-07-20, so the earliest test date is {day}.")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


def test_an_offer_the_user_took_up_is_no_sibling_of_what_they_first_asked_for():
    trips = {"trips": [{"trip_id": "T-1209-B", "site": "Benwood wreck", "depth_m": 15},
                       {"trip_id": "T-1209-C", "site": "Spiegel Grove wreck", "depth_m": 29}]}
    turns = [("user", "Book me on Wednesday's Spiegel Grove wreck trip - diver D-3301."), ("get_trips", {"date": "2026-12-09"}, trips),
             ("assistant", "Spiegel Grove wreck is deeper than your limit. I can offer Benwood wreck instead - would you like that?")]
    for taken, broken in (([("user", "Yes, Benwood is fine.")], False), ([], True)):
        run = _conversation(*turns, *taken, answer="You're booked on T-1209-B.")
        found, shown = _found(run, "wrong_target")
        assert found == ([(len(run.steps), "model")] if broken else []), (taken, shown)


@pytest.mark.parametrize("answer,broken", [
    ("I'm sorry, Maya - you've given 3 times in the 365 days before 15 December, so a donation then would be one too many.", False),
    ("You've given 3 times in the 365 days before 15 December. Parking is free next door.", True),
])
def test_a_refusal_said_as_an_apology_is_no_request_left_undone(answer, broken):
    run = _offering(_conversation(("user", "I'd like to book a donation for 15 December - donor RD-448120."),
                                  ("find_donor", {"donor_id": "RD-448120"}, {"donor_id": "RD-448120", "donations_365d": 3}),
                                  system="You book blood donations (find_donor, book_appointment).", answer=answer),
                    "find_donor", "book_appointment")
    found, shown = _found(run, "task_ignored")
    assert found == ([(3, "model")] if broken else []), shown


def _said_and_called(system: str, ask: str, said: str, call: tuple):
    """A run whose one model step both says something and makes `call` (name, arguments, result), then answers."""
    shown = [text_message("system", system), text_message("user", ask)]
    return record(llm(1, text=said, calls=[(call[0], call[1], "c1")], messages=shown),
                  tool(2, call[0], call[1], call[2], requested_by=1, call_id="c1"),
                  llm(3, text="Done.", messages=shown), task=ask)


@pytest.mark.parametrize("said,decision,broken", [
    ("Moisture 15.2%, aflatoxin 26 ppb. I am rejecting this load.", "accepted", True),
    ("Moisture 15.2%, aflatoxin 26 ppb. I am rejecting this load.", "rejected", False),
    ("Aflatoxin 26 ppb - I'm not approving this load.", "rejected", False),
])
def test_a_verdict_said_and_the_other_recorded_in_the_same_step_is_a_reasoning_action_mismatch(said, decision, broken):
    run = _said_and_called("You grade grain loads; reject any load over 20 ppb aflatoxin.", "Grade ticket TK-88213.", said,
                           ("record_quality", {"ticket_id": "TK-88213", "decision": decision}, {"quality_id": "Q-1"}))
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("flags,broken", [(["overdue"], True), (["overdue", "posting_review"], False)])
def test_an_item_the_words_flag_and_the_call_leaves_out_is_a_reasoning_action_mismatch(flags, broken):
    said = "Flagging overdue: IR-0933 + 6 months = 2026-11-20, before today; posting_review: PO-771 20 t exceeds 19.5 t."
    run = _said_and_called("You assess bridges and record flags.", "Assess BR-0417.", said,
                           ("record_assessment", {"structure_id": "BR-0417", "flags": flags}, {"assessment_id": "BA-1"}))
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(1, "model")] if broken else []), shown


DONORS = {"query": "Maya Osei", "matches": [
    {"donor_id": "RD-451907", "name": "Maya Osei", "date_of_birth": "1987-11-02", "town": "Redvale"},
    {"donor_id": "RD-448120", "name": "Maya Osei", "date_of_birth": "1990-03-14", "town": "Ashby"}]}


@pytest.mark.parametrize("ask,broken", [
    ("Hello - I'm Maya Osei and I'd like to book a donation on 15 December.", True),
    ("Hello - I'm Maya Osei from Redvale and I'd like to book a donation on 15 December.", False),
])
def test_a_name_two_records_share_leaves_the_pick_to_the_user(ask, broken):
    rules = ("You book blood donations. Look the donor up with find_donor. If more than one donor matches, ask for "
             "their date of birth - never pick one yourself. Offer the earliest slot of the day they ask for.")
    run = _conversation(("user", ask), ("find_donor", {"query": "Maya Osei"}, DONORS),
                        ("assistant", "Thanks, Maya (RD-451907). I can offer 15 December at 10:30. Shall I book it?"),
                        ("user", "Yes please."),
                        ("book_appointment", {"donor_id": "RD-451907", "date": "2026-12-15"}, {"booking_ref": "RBD-1"}),
                        system=rules, answer="Booked (RBD-1).")
    found, shown = _found(run, "clarification_skipped")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [
    ("Booked for Friday at 10:00 (SV-12).", True),
    ("Booked for Friday at 10:00 (SV-12). We stock 700c inner tubes at GBP 6.00 each.", False),
])
def test_a_question_the_user_asks_beside_the_request_left_unanswered_is_task_ignored(answer, broken):
    run = _conversation(("user", "Can you book my bike in for a service on Friday? And do you sell inner tubes for 700c wheels?"),
                        ("book_service", {"day": "2026-12-11"}, {"service_id": "SV-12", "time": "10:00"}),
                        system="You run the bike shop's desk.", answer=answer)
    found, shown = _found(run, "task_ignored")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_question_of_one_telling_word_is_not_judged():
    run = _conversation(("user", "Book my bike in for a service on Friday. What's the total?"),
                        ("book_service", {"day": "2026-12-11"}, {"service_id": "SV-12", "price_gbp": 45.0}),
                        system="You run the bike shop's desk.", answer="Booked (SV-12): GBP 45.00.")
    found, shown = _found(run, "task_ignored")
    assert found == [], shown
