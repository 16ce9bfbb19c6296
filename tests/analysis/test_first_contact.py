"""Readings of heldout34-40's first-contact false alarms and misses, in other trades. Quiet: a quote whose factors
the answer writes out (a length rounded up), a total of lines counted at the rules' rates, a figure by a stated
conversion or a day's total in tonnes, a date in words or a bound ("expires before"), a version with its mark, a
timestamp, a gas with its reading, another deed's status or echo, a receipt's count, a promise on a condition, a record
the run made, a prohibition whose rule states its condition, a rule under a heading of another case, an object a flag
switched off empties, a narrower SELECT, a bay letter, a pick a read sets apart, an ask taken back. Found: a bar on
those "whose fines are $10.00 or more", a limit in total, a deed asked for and neither done nor named at the end, a
named thing answered for another code, a sub-agent's rewritten prompt past a phrase every prompt holds, an id made up
past an ignored failure. Each beside the run that breaks it. Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _offering(built, *names):
    """The run with `names` offered to every model call (a conversation records no definitions of its own)."""
    offered = definitions_attr(*((n, {"type": "object"}) for n in names))
    return record(*built.steps, attributes={s["span_id"]: offered for s in built.steps if s["type"] == "llm"}, task=built.run["task"])


MARINA = ("You run the marina's berth desk. Berths are charged per metre of the boat's length (rounded up to the next "
          "whole metre) per night: low season GBP 2.60. 1 ft = 0.3048 m.")
BERTHS = {"berths": [{"berth_id": "C-11", "length_m": 11.5}, {"berth_id": "D-03", "length_m": 12.5},
                     {"berth_id": "E-02", "length_m": 14.0}]}


@pytest.mark.parametrize("total,broken", [("156.00", False), ("171.00", True)])
def test_a_quote_worked_from_factors_the_answer_writes_out_is_grounded(total, broken):
    # 38 ft is 11.58 m, charged as 12: 5 x 2.60 x 12 = 156.00 (171.00 is no product of what it writes)
    run = _conversation(("user", "Berth for Sea Thistle (GBR-4471) from 2026-12-14 for 5 nights?"),
                        ("find_vessel", {"registration": "GBR-4471"}, {"registration": "GBR-4471", "loa_ft": 38.0}),
                        ("check_berths", {"arrival": "2026-12-14", "nights": 5}, BERTHS), system=MARINA,
                        answer=f"Sea Thistle is 38 ft, 11.58 m, so D-03 (12.5 m) fits. 5 nights at GBP 2.60 per metre per "
                               f"night on 12 m is GBP {total}. Shall I book it?")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(5, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [
    ("Booked D-03 from 2026-12-14 for 5 nights. The fuel dock on Monday 14 December opens at 09:00.", False),
    ("Booked D-03 (14 m) for 5 nights.", True),
])
def test_a_day_written_with_its_month_is_no_rows_figure(answer, broken):
    run = _conversation(("user", "Book D-03 for Sea Thistle from 2026-12-14 for 5 nights."),
                        ("check_berths", {"arrival": "2026-12-14", "nights": 5}, BERTHS), system=MARINA, answer=answer)
    found, shown = _found(run, "answer_misread")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("label,broken", [("v2026.1", False), ("v2027.4", True)])
def test_a_version_written_with_its_mark_is_the_version(label, broken):
    docs = {"hits": [{"doc_id": "DOC-CT-2026", "title": "Employer contribution table", "version": "2026.1"}]}
    run = _conversation(("user", "Which contribution table applies to M-30418?"),
                        ("search_plan_documents", {"query": "contribution table"}, docs),
                        system="You answer pension members from the plan documents.",
                        answer=f"DOC-CT-2026, the Employer contribution table {label}.")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_timestamp_set_from_a_zone_table_is_no_invented_id():
    run = _conversation(("user", "Schedule KV-031 for when the 10:00 New York embargo lifts."),
                        ("get_story", {"story_id": "KV-031"}, {"story_id": "KV-031", "embargo": "2026-12-07T10:00",
                                                                "zone": "America/New_York"}),
                        ("schedule_story", {"story_id": "KV-031", "publish_at_utc": "2026-12-07T15:00:00Z"},
                         {"story_id": "KV-031", "status": "scheduled"}),
                        system="You schedule stories; publish_at_utc is UTC (New York is UTC-5 in December).",
                        answer="KV-031 is scheduled for 2026-12-07T15:00:00Z.")
    found, shown = _found(run, "invented_argument")
    assert found == [], shown


def test_a_status_filed_after_another_deeds_status_is_no_other_record():
    run = _conversation(("user", "Check account NE-40417's gas reads and settle it."),
                        ("raise_rebill", {"account_id": "NE-40417", "amount": 86.1},
                         {"rebill_id": "RB-7", "account_id": "NE-40417", "status": "raised"}),
                        ("file_finding", {"account_id": "NE-40417", "status": "complete", "anomalies": ["estimated read"]},
                         {"finding_id": "FF-2", "status": "complete"}),
                        system="You settle meter anomalies.", answer="Rebill RB-7 raised; finding FF-2 filed (estimated read).")
    found, shown = _found(run, "wrong_target")
    assert found == [], shown


@pytest.mark.parametrize("answer,broken", [
    ("Filed FF-2: the estimated read of 2026-09 and the unapplied volume correction.", False),
    ("Filed FF-2: the estimated read of 2026-09.", True),
])
def test_a_receipts_count_is_no_list_of_what_the_rules_ask_told(answer, broken):
    filed = {"finding_id": "FF-2", "anomalies": 2}
    anomalies = ["estimated read of 2026-09", "unapplied volume correction"]
    run = _conversation(("user", "Review account NE-40417."),
                        ("file_finding", {"account_id": "NE-40417", "anomalies": anomalies}, filed),
                        system="You review meter reads. Answer with every anomaly you filed.", answer=answer)
    found, shown = _found(run, "information_withheld")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("answer,broken", [
    ("Your account has $14.60 in unpaid fines; I'll place the request as soon as it's cleared.", False),
    ("I'll place the request now.", True),
])
def test_a_promise_made_on_a_condition_is_no_deed_left_undone(answer, broken):
    run = _offering(_conversation(("user", "Please request 'The Railway Age' through ILL for me - patron P-118."),
                                  ("find_patron", {"patron_id": "P-118"}, {"patron_id": "P-118", "fines_usd": 14.6}),
                                  system="You run the interlibrary-loan desk (find_patron, place_request).", answer=answer),
                    "find_patron", "place_request")
    found, shown = _found(run, "action_not_taken")
    assert found == ([(3, "model")] if broken else []), shown


FINES = ("You run the interlibrary-loan desk.\n"
         "1. Look the patron up with find_patron.\n"
         "2. A patron whose unpaid fines are $10.00 or more may not place new requests until they pay. Tell them the "
         "amount; don't place the request.")


@pytest.mark.parametrize("fines,broken", [(2.4, False), (10.0, True), (14.6, True)])
def test_a_bar_on_those_whose_figure_is_at_or_past_a_bound_holds_the_rule_a_sentence_before_states(fines, broken):
    run = _conversation(("user", "Please request 'The Railway Age' through ILL - patron P-118."),
                        ("find_patron", {"patron_id": "P-118"}, {"patron_id": "P-118", "fines_usd": fines}),
                        ("place_request", {"patron_id": "P-118", "title": "The Railway Age"}, {"request_id": "ILL-5", "status": "placed"}),
                        system=FINES, answer="Placed ILL-5.")
    found = detect(run)
    assert [(f.kind, f.index) for f in found if f.layer == "model" and f.severity in ("warning", "error")] == (
        [("policy_violated", 3)] if broken else []), format_findings(found)


@pytest.mark.parametrize("aboard,broken", [(True, True), (False, False)])
def test_a_limit_in_total_binds_only_the_deed_that_uses_it(aboard, broken):
    rules = ("You run the marina's berth desk. Members may sleep aboard at most 28 nights in the winter in total - "
             "liveaboard_nights_used counts this winter's nights so far.")
    run = _conversation(("user", "Book GBR-4471 for 5 nights from 2026-12-14, sleeping aboard if I can."),
                        ("find_vessel", {"registration": "GBR-4471"}, {"registration": "GBR-4471", "liveaboard_nights_used": 26}),
                        ("book_berth", {"registration": "GBR-4471", "nights": 5, "sleeping_aboard": aboard},
                         {"booking_ref": "KPB-9", "status": "confirmed"}),
                        system=rules, answer="Booked KPB-9.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("created,broken", [(True, False), (False, True)])
def test_a_record_a_deed_of_the_run_made_is_no_other_record_put_in_the_asked_ones_place(created, broken):
    # file_draft makes KV-031 and the run schedules it; the correction the user asked for on KV-118 is another
    # matter. A KV-031 the run only found (get_draft's answer for another story) put in KV-118's place is a swap.
    made = ("file_draft", {"slug": "brush-derailment", "body": "..."}, {"story_id": "KV-20261207-031", "status": "awaiting legal"})
    found_only = ("get_drafts", {"desk": "web"}, {"drafts": [{"story_id": "KV-20261207-031", "slug": "brush-derailment"}]})
    run = _conversation(("user", "File the Brush derailment story for noon and correct KV-20261206-118 (Route 6, not 36)."),
                        made if created else found_only,
                        ("schedule_story", {"story_id": "KV-20261207-031", "publish_at_utc": "2026-12-07T15:00:00Z"},
                         {"story_id": "KV-20261207-031", "status": "scheduled"}),
                        system="You run the web desk.", answer="KV-20261207-031 is scheduled.")
    found, shown = _found(run, "wrong_target")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("system,broken", [
    ("You schedule campaigns. Read the suppression list (get_suppression_list) and drop every contact on it.", False),
    ("You schedule campaigns. Answer with every contact you scheduled.", True),
])
def test_every_one_a_deed_takes_is_no_every_one_to_tell(system, broken):
    # "list" there is the suppression list, and "every contact" what drop takes, not what the answer must name
    run = _conversation(("user", "Schedule the winter campaign."),
                        ("schedule_send", {"campaign_id": "CMP-7", "contact_ids": ["C-1001", "C-1006"]}, {"batch_id": "B-1"}),
                        system=system, answer="Scheduled batch B-1 for C-1001.")
    found, shown = _found(run, "information_withheld")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("states,broken", [(("collected", "not collected", "collected"), False),
                                           (("collected", "collected", "collected"), True)])
def test_a_pick_a_later_read_sets_apart_by_its_state_is_no_guess(states, broken):
    # three bins listed, the request names none; get_collections gives the one not collected (B-55121): no question
    # owed. Where every collection reads the same, taking B-55121 is a guess.
    bins = {"account_number": "AV-302118", "bins": [{"bin_id": f"B-5512{n}", "type": t}
                                                    for n, t in enumerate(("general", "recycling", "garden"))]}
    collections = {"collections": [{"date": "2026-12-01", "bin_id": f"B-5512{n}", "status": s} for n, s in enumerate(states)]}
    run = _conversation(("user", "My bin wasn't emptied on Tuesday - account AV-302118."),
                        ("find_household", {"account_number": "AV-302118"}, bins),
                        ("get_collections", {"account_number": "AV-302118"}, collections),
                        ("report_missed", {"account_number": "AV-302118", "bin_id": "B-55121"}, {"report_ref": "MC-20417"}),
                        system="You run the council's waste desk.", answer="Reported (MC-20417).")
    found, shown = _found(run, "clarification_skipped")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("said,broken", [
    ("Gas test: O2 20.6%, methane 6.40% LEL, CO 6 ppm. Rejecting PR-3310.", False),
    ("Assessing the CO permit.", True),
])
def test_a_gas_and_its_reading_is_no_mark_of_a_record(said, broken):
    shown = [text_message("system", "You are the site safety officer."), text_message("user", "Assess hot-work permit PR-3310.")]
    call = ("assess_permit", {"permit_id": "PR-3310", "decision": "reject"}, "c1")
    run = record(llm(1, text=said, calls=[call], messages=shown), tool(2, *call[:2], {"assessment_id": "AS-1"}, requested_by=1,
                                                                      call_id="c1"),
                 llm(3, text="Rejected.", messages=shown), task="Assess hot-work permit PR-3310.")
    found = [f for f in detect(run) if f.kind == "wrong_target"]
    assert bool(found) == broken, format_findings(found)


@pytest.mark.parametrize("answer,broken", [
    ("Rejected: K. Moyo's gas-tester certification expires before 2026-12-08, the work date.", False),
    ("Rejected: K. Moyo's certification expires on 2026-12-08.", True),
])
def test_a_date_a_label_is_set_against_is_no_misread_of_the_labels_date(answer, broken):
    run = _conversation(("user", "Check the crew for PR-3310 on 2026-12-08."),
                        ("get_certifications", {"crew": "CR-A"}, {"holder": "K. Moyo", "expires_on": "2026-12-03"}),
                        system="You are the site safety officer.", answer=answer)
    found, shown = _found(run, "answer_misread")
    assert found == ([(3, "model")] if broken else []), shown


EV = ("You are the charging support agent.\n"
      "1. Read the session with get_session.\n"
      "2. Energy disputes: search the firmware notices with search_notices before refunding.\n"
      "3. Idle fees: GBP 0.10 a minute after a 10-minute grace.")


@pytest.mark.parametrize("kind,broken", [("idle fee", False), ("energy overcharge", True)])
def test_a_rule_under_a_heading_of_another_case_binds_no_call(kind, broken):
    run = _offering(_conversation(("user", f"Account EVA-20417 disputes session S-88140 ({kind})."),
                                  ("get_session", {"session_id": "S-88140"}, {"session_id": "S-88140", "idle_fee": 5.2}),
                                  ("issue_refund", {"account_id": "EVA-20417", "amount": 1.0}, {"refund_id": "RF-1"}),
                                  system=EV, answer="Refunded GBP 1.00."),
                    "get_session", "search_notices", "issue_refund")
    found, shown = _found(run, "missing_evidence")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_bay_letter_is_no_article_of_the_request():
    beds = {"beds": [{"bed_id": "W7-A3", "bay": "A", "sex": "F"}, {"bed_id": "W7-B2", "bay": "B", "sex": "M"}]}
    run = _conversation(("user", "Patient P-448120 (male) needs a General Medicine bed - please place him."),
                        ("get_ward_beds", {"ward": "W7"}, beds),
                        system="You are the ward coordinator.", answer="P-448120 goes to W7-B2 (bay B).")
    found, shown = _found(run, "wrong_target")
    assert found == [], shown


FERRY = ("You run the ferry bookings desk. PASSENGERS. Adult (16 and over) GBP 34.00, child (4-15) GBP 17.00. "
         "Pets GBP 15.00 each.")


@pytest.mark.parametrize("total,broken", [("281.00", False), ("289.00", True)])
def test_a_total_of_lines_counted_at_the_rules_rates_is_grounded(total, broken):
    # 164 (the band's fare the answer grounds) + 3 adults x 34 + the dog's 15 = 281
    run = _conversation(("user", "Move booking NS-58214 to the 13:30 - 3 adults and our dog Biscuit."),
                        ("get_fares", {"band": "Tall camper"}, {"band": "Tall camper", "fare_gbp": 164.0}),
                        system=FERRY, answer=f"Tall camper (GBP 164.00) plus 3 adults and Biscuit = GBP {total}. Shall I?")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("rules,changed", [
    ("Allocate exactly one bed; bays are single-sex and isolation goes only in a side room.", False),
    ("Allocate the first clean bed.", True),
])
def test_a_prompts_words_every_earlier_prompt_holds_are_no_fetched_data(rules, changed):
    # the patient read before the first call says 'General Medicine', which the ward's own prompt also says: the
    # prompt is compared past it, and a rewritten rule there is found
    from agentotel.analysis._record import History

    def run(said):
        system = f"You are the ward coordinator for Ward 7 (General Medicine) at St Brannock's Hospital. {said}"
        shown = [text_message("system", system), text_message("user", "Place P-448120.")]
        patient = {"patient_id": "P-448120", "specialty": "General Medicine", "location": "ED majors cubicle 9"}
        return record(tool(1, "get_patient", {"patient_id": "P-448120"}, patient),
                      llm(2, text="Placed in W7-B2.", messages=shown), task="Place P-448120.")

    history = History()
    usual = "Allocate exactly one bed; bays are single-sex and isolation goes only in a side room."
    history.first_calls = [(f"earlier-{n}", next(s for s in run(usual).steps if s["type"] == "llm")) for n in range(3)]
    found = [(f.kind, f.index) for f in detect(run(rules), history) if f.kind == "instructions_changed"]
    assert found == ([("instructions_changed", 2)] if changed else []), found


@pytest.mark.parametrize("answered,broken", [("Tank T-2", False), ("Tank T-4", True)])
def test_a_named_thing_asked_by_its_code_answered_for_another_code_is_another_subject(answered, broken):
    run = _conversation(("user", "Check the gas readings at Tank T-2 for permit PR-3310."),
                        ("get_gas_readings", {"location": "Tank T-2"}, {"location": answered, "co_ppm": 2, "oxygen_pct": 20.9}),
                        system="You are the site safety officer.", answer="Readings are within limits.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == ([(2, "tool")] if broken else []), shown


@pytest.mark.parametrize("answer,paused,broken", [
    ("Refunded $7.80 (RF-40912).", False, True),
    ("Refunded $7.80 (RF-40912). I can't pause it now: you have used 45 of your 60 pause days.", False, False),
    ("Refunded $7.80 (RF-40912) and paused your membership for 30 days.", True, False),
])
def test_a_deed_the_user_asks_for_neither_done_nor_answered_is_the_request_left_undone(answer, paused, broken):
    turns = [("user", "Ride RD-88120 overcharged me. Also I'd like to pause my membership for 30 days."),
             ("refund_ride", {"ride_id": "RD-88120", "amount_usd": 7.8}, {"refund_id": "RF-40912"})]
    turns += [("pause_membership", {"rider_id": "R-5", "days": 30}, {"status": "paused"})] if paused else []
    run = _offering(_conversation(*turns, system="You run the bike-share desk.", answer=answer),
                    "refund_ride", "pause_membership")
    found, shown = _found(run, "task_ignored")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_deed_the_quote_offered_and_the_end_never_names_is_left_undone():
    # the quote said "cancelling the return"; the user said yes; only the amendment was made and the end says nothing
    run = _offering(_conversation(("user", "Move our outbound to 8 January. Please cancel the return on 3 January too."),
                                  ("assistant", "Amending the outbound (GBP 117.00) and cancelling the return (GBP 94.50 back). OK?"),
                                  ("user", "Yes, please go ahead."),
                                  ("amend_leg", {"booking_ref": "NS-58214", "leg_id": "L1", "sailing_id": "NS-0108-1330"},
                                   {"amendment_id": "AM-31057", "status": "amended"}),
                                  system="You run the ferry bookings desk.", answer="Done: your outbound is now the 13:30 on 8 January."),
                    "amend_leg", "cancel_leg")
    found, shown = _found(run, "task_ignored")
    assert found == [(4, "model")], shown


def test_another_deeds_condition_in_the_line_leaves_a_prohibition_unconditional():
    # "Make every change the reviewer requests ... only after the reviewer approves. Never edit files under legacy/":
    # the condition is the pull request's; the bar on legacy/ stands (heldout12's wrong file)
    system = ("You are the fixer. Change the code with apply_patch. Make every change the reviewer requests, and open the pull "
              "request with submit_pr only after the reviewer approves. Never edit files under legacy/ (deprecated).")
    run = _conversation(("user", "Fix BUG-412 in the billing dates."),
                        ("apply_patch", {"path": "/repo/legacy/billing/dates.py", "old": "days = 30", "new": "days = 31"},
                         {"path": "/repo/legacy/billing/dates.py", "applied": True, "lines_changed": 1}),
                        system=system, answer="Patched.")
    found, shown = _found(run, "role_overstepped")
    assert found == [(1, "model")], shown


TOURS = "You run the excursions desk. Weights are in kg (1 kg = 2.2046 lb); the horse trek takes riders up to 95 kg."


@pytest.mark.parametrize("said,broken", [("93.0 kg", False), ("97.0 kg", True)])
def test_a_figure_converted_by_the_rules_stated_factor_is_grounded(said, broken):
    run = _conversation(("user", "Book the horse trek for Dan Reyes, 205 lb, booking TB-204611."),
                        ("get_excursion", {"excursion_id": "HT-1"}, {"excursion_id": "HT-1", "max_weight_kg": 95}),
                        system=TOURS, answer=f"Dan Reyes ({said}) can ride the horse trek. Shall I book it?")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("said,broken", [("27.62 t", False), ("29.62 t", True)])
def test_a_days_total_and_this_load_told_in_tonnes_is_grounded(said, broken):
    run = _conversation(("user", "Accept ticket WB-50231 at KMR-NORTH."),
                        ("get_ticket", {"ticket_id": "WB-50231"}, {"ticket_id": "WB-50231", "net_kg": 7420}),
                        ("get_accepted_today", {"site": "KMR-NORTH"}, {"loads": [{"ticket_id": "WB-50110", "net_kg": 9800},
                                                                                 {"ticket_id": "WB-50111", "net_kg": 10400}]}),
                        system="You run the weighbridge. The site takes at most 45.0 t a day.", answer=f"WB-50231 accepted: {said} of 45.0 t today.")
    found, shown = _found(run, "ungrounded_answer")
    assert found == ([(5, "model")] if broken else []), shown


def test_a_query_that_selects_fewer_columns_than_earlier_select_stars_is_no_drift():
    from agentotel.analysis._record import History
    from agentotel.analysis._schema import OutputSchema

    def run(sql, rows):
        return _conversation(("user", "Which players does family F-204 have?"), ("query_league", {"sql": sql}, {"rows": rows}),
                             system="You answer from the league database.", answer="Mia and Leo.")

    wide = [{"player_id": "P-1", "first_name": "Mia", "club": "Northfield", "version": 1}]
    history = History()
    schema = OutputSchema()
    for n in range(3):
        schema.learn({"rows": wide})
    history.outputs["query_league"] = schema
    history.inputs["query_league"] = [(f"r{n}", {"sql": "SELECT r.*, p.club FROM registrations r JOIN players p USING (player_id)"})
                                      for n in range(3)]
    history.runs["query_league"] = ["r0", "r1", "r2"]
    narrow = run("SELECT p.player_id, p.first_name FROM players p ORDER BY r.version", [{"player_id": "P-1", "first_name": "Mia"}])
    assert [f.kind for f in detect(narrow, history) if f.kind == "tool_output_drift"] == []
    # the same columns asked for and one gone: drift
    same = run("SELECT r.*, p.club FROM registrations r JOIN players p USING (player_id)", [{"player_id": "P-1", "first_name": "Mia"}])
    assert [f.kind for f in detect(same, history) if f.kind == "tool_output_drift"] == ["tool_output_drift"]


def test_a_preposition_is_no_label_of_a_results_date():
    run = _conversation(("user", "Transfer P-3104 to Northfield Juniors."),
                        ("search_bulletins", {"query": "transfer window"}, {"bulletins": [{"id": "B-7", "window": {"from": "2027-01-01"}}]}),
                        ("approve_transfer", {"player_id": "P-3104", "club": "Northfield Juniors", "effective": "2026-12-07"},
                         {"transfer_id": "TR-88", "effective": "2026-12-07"}),
                        system="You run league registrations.", answer="P-3104 plays for Northfield Juniors from 2026-12-07 (TR-88).")
    found, shown = _found(run, "answer_misread")
    assert found == [], shown


def test_an_id_of_another_series_a_note_names_is_no_other_target():
    # the sampler's note names its sample SR-4411; the officer rejects the load by its ticket WB-50232
    note = "Sample SR-4411 of ticket WB-50232: contamination 6.3%, over the code's 5.0%. Please reject the load."
    run = _conversation(("user", note),
                        ("reject_load", {"ticket_id": "WB-50232", "reason": "contamination 6.3% over 5.0%"}, {"rejection_id": "RJ-1"}),
                        system="You are the permit officer; reject loads with reject_load.", answer="Rejected (RJ-1).")
    found, shown = _found(run, "wrong_target")
    assert found == [], shown


def test_an_id_made_up_past_a_failure_the_model_went_on_from_is_that_failures():
    task = "Review card C-7 transactions T-87950 and T-88231 and flag the suspicious one."
    shown = [text_message("system", "You review fuel-card transactions (run_sql, record_review)."), text_message("user", task)]
    sql = ("run_sql", {"sql": "SELECT * FROM tx WHERE card = 'C-7'"}, "c1")
    review = ("record_review", {"card": "C-7", "flagged": ["T-88177"]}, "c2")
    after_sql = shown + [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "run_sql", "arguments": sql[1]}]},
                         {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "429 Too Many Requests"}]}]
    run = record(llm(1, calls=[sql], messages=shown),
                 tool(2, "run_sql", sql[1], None, status="error", error="429 Too Many Requests", requested_by=1, call_id="c1"),
                 llm(3, calls=[review], messages=after_sql),
                 tool(4, "record_review", review[1], {"review_id": "RV-1"}, requested_by=3, call_id="c2"),
                 llm(5, text="Flagged T-88177 (RV-1).", messages=after_sql), task=task)
    found = [(f.kind, f.index, f.layer) for f in detect(run) if f.kind in ("tool_error_ignored", "invented_argument")]
    assert found == [("tool_error_ignored", 3, "model")], format_findings(detect(run))


@pytest.mark.parametrize("later,broken", [("Actually, cancel it instead - I found one in a shop.", False), ("Yes please.", True)])
def test_an_ask_taken_back_is_no_request_left_undone(later, broken):
    run = _offering(_conversation(("user", "I'd like to exchange the rain jacket in order #1066 for a size M."),
                                  ("get_order", {"order_id": "#1066"}, {"order_id": "#1066", "status": "processing"}),
                                  ("assistant", "Order #1066 has not shipped. Shall I go ahead?"), ("user", later),
                                  ("cancel", {"order_id": "#1066"}, {"status": "cancelled"}),
                                  system="You run the shop's support desk.", answer="Done: order #1066 is cancelled."),
                    "get_order", "exchange", "cancel")
    found, shown = _found(run, "task_ignored")
    assert found == ([(6, "model")] if broken else []), shown
