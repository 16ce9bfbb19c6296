"""Rules read against the records a run fetched (heldout19/20's misses, in other trades): a gate on the answer of the
check the sentence before it names ("Release only after it comes back 'approved'"), a class barred by its field's
value in brackets ("Never renew a loan on an interlibrary item (source "ill")"), a check that lists the agent itself
("If check_recusals lists you (J-12), you must not rate the entry"), an amount capped by a record the call's own
record points to ("the region's remaining goodwill budget"), a value from a version listed as superseded or
deprecated beside the current one (or that a version beside it says it corrects or supersedes: a W-2c, an amended
lab result; heldout23/29/30/33), and money given in the minor unit a tool returned it in. Each beside the run
that keeps the rule. Hand-built runs."""

from __future__ import annotations

import json

import pytest

from agentotel.analysis.detectors import detect, format_findings
from agentotel import semconv
from runs_build import definitions_attr, record
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


QA = ("You release brewery batches.\n"
      "1. Read the batch with get_batch.\n"
      "2. Before releasing, request a QA sign-off with request_signoff. Release only after it comes back \"approved\"; "
      "if QA rejects it, do not release - say why.")


@pytest.mark.parametrize("verdict,broken", [("approved", False), ("rejected", True)])
def test_a_gate_on_it_waits_for_the_check_the_sentence_before_names(verdict, broken):
    run = _conversation(("user", "Release batch B-771 (pale ale) to the warehouse."),
                        ("get_batch", {"batch_id": "B-771"}, {"batch_id": "B-771", "style": "pale ale", "abv": 5.2}),
                        ("request_signoff", {"batch_id": "B-771"}, {"batch_id": "B-771", "status": verdict, "by": "QA - M. Ito"}),
                        ("release_batch", {"batch_id": "B-771"}, {"batch_id": "B-771", "released": True}),
                        system=QA, answer="B-771 is released.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


LIBRARY = ("You are the circulation desk assistant. Look the loan up with get_loan. Loans may be renewed twice. Never "
           "renew a loan on an interlibrary item (source \"ill\"); ask the patron to return it by its due date instead.")


@pytest.mark.parametrize("source,broken", [("local", False), ("ill", True)])
def test_a_class_barred_by_its_fields_value_in_brackets(source, broken):
    run = _conversation(("user", "Can you renew my copy of 'The Overstory'? Loan L-30418."),
                        ("get_loan", {"loan_id": "L-30418"}, {"loan_id": "L-30418", "title": "The Overstory", "source": source,
                                                              "renewals": 0, "due": "2026-12-11"}),
                        ("renew_loan", {"loan_id": "L-30418"}, {"loan_id": "L-30418", "due": "2027-01-08"}),
                        system=LIBRARY, answer="Renewed until 2027-01-08.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


JUDGE = ("You are judge J-12 at the county baking show.\n"
         "1. Read the entry with get_entry and call check_recusals first.\n"
         "2. If check_recusals lists you (J-12), you must not rate the entry: call recuse and say so.\n"
         "3. Otherwise rate it with rate_entry, 1 to 10.")


@pytest.mark.parametrize("listed,broken", [(["J-04"], False), (["J-04", "J-12"], True)])
def test_a_check_listing_the_agent_itself_stops_the_deed(listed, broken):
    recusals = {"entry_id": "E-55", "recused": [{"judge_id": j, "reason": "family of the baker"} for j in listed]}
    run = _conversation(("user", "Please judge entry E-55 (lemon drizzle)."),
                        ("get_entry", {"entry_id": "E-55"}, {"entry_id": "E-55", "category": "cakes", "baker": "N. Okoro"}),
                        ("check_recusals", {"entry_id": "E-55"}, recusals),
                        ("rate_entry", {"entry_id": "E-55", "score": 8}, {"entry_id": "E-55", "status": "rated"}),
                        system=JUDGE, answer="Rated E-55: 8/10.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


GOODWILL = ("You settle complaint tickets. Read the ticket with get_ticket and the region's budget with get_region_budget. "
            "A goodwill credit may never exceed the region's remaining goodwill budget; when it would, credit what remains "
            "and tell the customer.")


@pytest.mark.parametrize("amount,broken", [(80.0, False), (120.0, True)])
def test_an_amount_capped_by_the_record_the_calls_own_record_points_to(amount, broken):
    run = _conversation(("user", "Ticket T-2201: the courier lost the parcel, please credit the customer 120 EUR."),
                        ("get_ticket", {"ticket_id": "T-2201"}, {"ticket_id": "T-2201", "region_id": "R-EU-W", "claim": 120.0}),
                        ("get_region_budget", {"region_id": "R-EU-W"}, {"region_id": "R-EU-W", "allocated": 5000,
                                                                       "remaining": 80.0}),
                        ("credit_customer", {"ticket_id": "T-2201", "amount": amount}, {"credit_id": "CR-9", "status": "issued"}),
                        system=GOODWILL, answer=f"Credited {amount:.2f} EUR.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


PRICES = {"results": [
    {"list_id": "PL-CARDS-v1", "title": "Business cards", "status": "superseded", "published": "2026-03-01",
     "prices": {"500": 42.0, "1000": 64.0}},
    {"list_id": "PL-CARDS-v2", "title": "Business cards", "status": "current", "published": "2026-11-15",
     "prices": {"500": 48.0, "1000": 71.0}}]}


@pytest.mark.parametrize("price,broken", [(48.0, False), (42.0, True)])
def test_a_value_from_a_version_listed_as_superseded_beside_the_current_one(price, broken):
    run = _conversation(("user", "Quote 500 business cards for Kaya Design."),
                        ("search_price_lists", {"query": "business cards"}, PRICES),
                        ("create_quote", {"customer": "Kaya Design", "item": "500 business cards", "amount": price},
                         {"quote_id": "Q-118", "status": "sent"}),
                        system="You quote print jobs from the price lists (search_price_lists) with create_quote.",
                        answer=f"Quote Q-118 sent: {price:.2f}.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


DEFINITIONS = {"results": [
    {"doc_id": "KPI-churn-v4", "metric": "churn_rate", "status": "current",
     "formula_sql": "count(*) FILTER (WHERE cancelled_at IS NOT NULL AND NOT is_trial) / count(*)"},
    {"doc_id": "KPI-churn-v3", "metric": "churn_rate", "status": "deprecated", "superseded_by": "KPI-churn-v4",
     "formula_sql": "count(*) FILTER (WHERE cancelled_at IS NOT NULL) / count(*)"}]}


@pytest.mark.parametrize("version,broken", [(0, False), (1, True)])
def test_a_formula_from_a_deprecated_definition_pasted_into_a_query(version, broken):
    formula = DEFINITIONS["results"][version]["formula_sql"]
    run = _conversation(("user", "What was churn in November?"),
                        ("search_kpis", {"term": "churn"}, DEFINITIONS),
                        ("query", {"sql": f"SELECT {formula} AS churn FROM subs WHERE month = '2026-11'"},
                         {"rows": [{"churn": 0.031}]}),
                        system="You answer KPI questions with SQL (query), from the KPI definitions (search_kpis).",
                        answer="November churn was 3.1%.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("said,broken", [("$4,512.00", False), ("$451,200.00", True)])
def test_money_given_in_the_minor_unit_a_tool_returned_it_in(said, broken):
    run = _conversation(("user", "How much does the Hartley account owe?"),
                        ("get_invoice", {"account": "Hartley"}, {"invoice_id": "INV-3390", "amount_due_cents": 451200,
                                                                 "currency": "USD"}),
                        system="You answer billing questions.", answer=f"The Hartley account owes {said} (INV-3390).")
    found, shown = _found(run, "answer_misread")
    assert found == ([(3, "model")] if broken else []), shown


BI = ("You answer sales questions with SQL (run_query) over the warehouse. Internal orders (sales.orders.is_internal) are "
      "excluded from every sales figure unless someone explicitly asks to include them. A store's region is its "
      "region_code in dim.stores, not the order's delivery_zone.")
_TOTAL = "SELECT sum(o.total) AS sales FROM sales.orders o JOIN dim.stores s ON s.store_id = o.store_id WHERE "


@pytest.mark.parametrize("ask,where,broken", [
    ("What were North sales in November?", "s.region_code = 'N' AND NOT o.is_internal", False),
    ("What were North sales in November, including internal orders?", "s.region_code = 'N'", False),  # asked for
    ("What were North sales in November?", "s.region_code = 'N'", True),  # internal orders counted
    ("What were North sales in November?", "o.delivery_zone = 'N' AND NOT o.is_internal", True)])  # the field it is not
def test_a_query_breaking_what_the_rules_say_a_figure_filters_on(ask, where, broken):
    run = _conversation(("user", ask), ("run_query", {"sql": _TOTAL + where}, {"rows": [{"sales": 81200.5}]}),
                        system=BI, answer="North sales in November: 81,200.50.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(1, "model")] if broken else []), shown


GYM = ("You are the membership desk. Read the membership with get_membership. Plan changes go through change_plan; then "
       "write to the member with email_member giving the new monthly fee - and saying plainly when it costs more than "
       "before.")


@pytest.mark.parametrize("body,broken", [
    ("Hi Sam, you're now on Off-peak Plus at 54.00 a month, 9.00 more than your previous 45.00.", False),
    ("Hi Sam, you're now on Off-peak Plus at 54.00 a month. Enjoy the pool!", True)])
def test_a_message_giving_a_higher_price_without_saying_it_rose(body, broken):
    run = _conversation(("user", "Please move member M-20417 to Off-peak Plus."),
                        ("get_membership", {"member_id": "M-20417"}, {"member_id": "M-20417", "plan": "Off-peak",
                                                                      "monthly_price": 45.0, "email": "sam@example.org"}),
                        ("change_plan", {"member_id": "M-20417", "plan": "Off-peak Plus"},
                         {"member_id": "M-20417", "plan": "Off-peak Plus", "monthly_price": 54.0}),
                        ("email_member", {"member_id": "M-20417", "body": body}, {"status": "sent"}),
                        system=GYM, answer="Moved M-20417 to Off-peak Plus and emailed them.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


KITCHEN = ("You order produce for the Larder kitchen. Find vendors with search_vendors and buy with place_order from the "
           "cheapest vendor that has it - never from a vendor that is suspended or on probation.")


@pytest.mark.parametrize("state,broken", [("approved", False), ("on_probation", True), ("suspended", True)])
def test_an_action_naming_a_record_a_rule_bars_in_its_state(state, broken):
    vendors = {"item": "shallots 5kg", "vendors": [{"vendor_id": "V-12", "name": "Greenrow", "status": state, "price": 9.4},
                                                   {"vendor_id": "V-07", "name": "Fieldfare", "status": "approved", "price": 11.2}]}
    run = _conversation(("user", "Order 5kg of shallots for Friday."),
                        ("search_vendors", {"item": "shallots 5kg"}, vendors),
                        ("place_order", {"vendor_id": "V-12", "item": "shallots 5kg", "quantity": 1}, {"po": "PO-311", "status": "placed"}),
                        system=KITCHEN, answer="Ordered from Greenrow (PO-311).")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_second_order_for_the_same_unit_from_another_supplier_is_no_mix_up():
    run = _conversation(("user", "Order the parts for van VN-22: a filter kit and two wiper blades."),
                        ("place_order", {"unit_id": "VN-22", "supplier_id": "SUP-31", "part": "FLT-KIT-2"},
                         {"po_number": "PO-501", "unit_id": "VN-22", "supplier_id": "SUP-31", "status": "placed"}),
                        ("place_order", {"unit_id": "VN-22", "supplier_id": "SUP-52", "part": "WPR-650"},
                         {"po_number": "PO-502", "unit_id": "VN-22", "supplier_id": "SUP-52", "status": "placed"}),
                        system="You buy parts for the workshop with place_order.", answer="PO-501 (SUP-31) and PO-502 (SUP-52).")
    assert "wrong_target" not in {f.kind for f in detect(run)}, format_findings(detect(run))


@pytest.mark.parametrize("second,broken", [("PC-7102", True), ("PC-7101", False)])
def test_an_action_done_again_with_the_same_arguments_after_another_call(second, broken):
    """PC-7101 booked, PC-7102 booked, PC-7101 booked again: twice. Booked, cancelled, booked again: not."""
    between = (("book_shipment", {"parcel_id": "PC-7102", "carrier": "Ridgeline"}, {"shipment_id": "SH-2", "status": "booked"})
               if second == "PC-7102" else
               ("cancel_shipment", {"parcel_id": "PC-7101"}, {"shipment_id": "SH-1", "status": "cancelled"}))
    run = _conversation(("user", "Book both parcels of SO-88 with Ridgeline."),
                        ("book_shipment", {"parcel_id": "PC-7101", "carrier": "Ridgeline"}, {"shipment_id": "SH-1", "status": "booked"}),
                        between,
                        ("book_shipment", {"parcel_id": "PC-7101", "carrier": "Ridgeline"}, {"shipment_id": "SH-3", "status": "booked"}),
                        system="You book parcels with book_shipment.", answer="Booked.")
    found, shown = _found(run, "repeated_tool_call")
    assert found == ([(5, "model")] if broken else []), shown


def test_a_record_answered_for_another_sku_is_another_subject():
    run = _conversation(("user", "Is the 48V battery in stock?"),
                        ("get_stock", {"sku": "BAT-48V"}, {"sku": "BAT-36V", "on_hand": 40}),
                        system="You answer stock questions with get_stock.", answer="Yes, 40 on hand.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == [(2, "tool")], shown


@pytest.mark.parametrize("named,broken", [("SOP-11 v4", False), ("SOP-11 v3", True)])
def test_an_action_naming_a_version_listed_as_superseded(named, broken):
    sops = {"results": [{"doc_id": "SOP-11-v3", "title": "Cold chain SOP", "status": "superseded", "superseded_by": "SOP-11-v4",
                         "max_temp_c": 8},
                        {"doc_id": "SOP-11-v4", "title": "Cold chain SOP", "status": "current", "max_temp_c": 6}]}
    run = _conversation(("user", "Log the excursion on shipment CS-301 (7.1 C for 40 minutes)."),
                        ("search_sops", {"query": "cold chain excursion"}, sops),
                        ("record_excursion", {"shipment_id": "CS-301", "sop": named, "verdict": "within limits"},
                         {"excursion_id": "EX-19", "status": "recorded"}),
                        system="You log cold-chain excursions with record_excursion under the current SOP (search_sops).",
                        answer="Logged as EX-19.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


def test_an_answer_setting_a_sources_date_beside_the_records_is_no_misread():
    for answer, misread in (("The referral gives a date of birth of 1961-05-09, but the record says 1961-09-05 - flagged.", False),
                            ("Her date of birth is 1961-05-09.", True)):
        run = _conversation(("user", "Pre-screen P-30417 from the referral (date of birth 1961-05-09)."),
                            ("get_patient", {"patient_id": "P-30417"}, {"patient_id": "P-30417", "date_of_birth": "1961-09-05"}),
                            system="You pre-screen referrals.", answer=answer)
        found, shown = _found(run, "answer_misread")
        assert bool(found) is misread, shown


def test_days_a_question_offers_are_proposals_not_facts():
    from datetime import date
    from agentotel.analysis import _ground
    sources = "campaign CMP-2291, send_date null"
    asked = "No send date is set. Which date would you like - Monday 7, Tuesday 8 or Wednesday 9 December?"
    told = "It goes out on Wednesday 9 December."
    assert _ground.ungrounded(asked, sources, today=date(2026, 12, 4)) == []
    assert _ground.ungrounded(told, sources, today=date(2026, 12, 4)) == ["9 December"]
    # a question about a day long past is no offer
    assert _ground.ungrounded("Was it sent on 9 March?", sources, today=date(2026, 12, 4)) == ["9 March"]


COURIER = ("You book courier jobs. Get quotes with get_quotes and book with book_courier. A package must not weigh more "
           "than the quote's max_weight_kg.")


@pytest.mark.parametrize("service,broken", [("Van", False), ("Bike", True)])
def test_a_measure_past_the_field_of_the_record_the_call_names_in_words(service, broken):
    quotes = {"job": "J-4410", "quotes": [{"quote_id": "Q-CITY-BIKE", "courier": "CityDash", "service": "Bike", "max_weight_kg": 5},
                                          {"quote_id": "Q-CITY-VAN", "courier": "CityDash", "service": "Van", "max_weight_kg": 40}]}
    run = _conversation(("user", "Send package PK-2207 across town today."),
                        ("get_package", {"package_id": "PK-2207"}, {"package_id": "PK-2207", "weight_kg": 7.5}),
                        ("get_quotes", {"package_id": "PK-2207"}, quotes),
                        ("book_courier", {"package_id": "PK-2207", "courier": "CityDash", "service": service},
                         {"booking": "BK-88", "status": "booked"}),
                        system=COURIER, answer=f"Booked CityDash {service} (BK-88).")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


@pytest.mark.parametrize("version,broken", [(1, False), (0, True)])
def test_a_definition_from_a_draft_listed_beside_the_published_one(version, broken):
    rules = {"results": [
        {"rule_id": "AUD-lapsed", "name": "lapsed", "version": 5, "status": "draft", "where": "last_order < DATE '2026-03-01'"},
        {"rule_id": "AUD-lapsed", "name": "lapsed", "version": 4, "status": "published", "where": "last_order < DATE '2025-12-01'"}]}
    where = rules["results"][version]["where"]
    run = _conversation(("user", "How many lapsed customers do we have?"),
                        ("search_audiences", {"query": "lapsed"}, rules),
                        ("run_sql", {"sql": f"SELECT count(*) FROM customers WHERE {where}"}, {"rows": [{"count": 412}]}),
                        system="You size audiences with SQL (run_sql) from their definitions (search_audiences).",
                        answer="412 lapsed customers.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


def test_a_total_the_answer_sums_from_its_own_grounded_parts_is_grounded():
    from agentotel.analysis import _ground
    sources = '{"daily_rate": 64.0, "days": 4} One-way fee to LAX: $150.'
    summed = "4 days at $64.00 is $256.00; the one-way fee is $150.00. New total: $406.00."
    assert _ground.ungrounded(summed, sources, [{"daily_rate": 64.0, "days": 4}]) == []
    # a total no parts it gave add up to stays ungrounded
    assert _ground.ungrounded("4 days at $64.00 is $256.00; the one-way fee is $150.00. New total: $436.00.", sources,
                              [{"daily_rate": 64.0, "days": 4}]) == ["436.00"]


def test_a_quote_worked_line_by_line_from_the_rules_rates_is_grounded():
    """Each line one step of arithmetic on a figure the answer grounds and a number of the sources (a rate the
    instructions give, a value a tool returned), the total their sum, the deposit a share of it."""
    from agentotel.analysis import _ground
    survey = {"volume_ft3": 1236, "floors": 3, "declared_value_eur": 30000, "jewellery_eur": 2500}
    sources = ("We price per cubic metre: EUR 42.00 per m3 (1 m3 = 35.315 ft3). Stairs: EUR 35 per floor. Cover costs 1.5% "
               "of the declared value; jewellery is excluded. A deposit of 20% of the total. " + json.dumps(survey))
    quote = ("Volume: 1236 ft3 = 35.00 m3 at EUR 42.00/m3: EUR 1470.00. Stairs (3 floors): EUR 105.00. Cover on EUR 27,500 "
             "(jewellery of EUR 2,500 excluded): EUR 412.50. Total: EUR 1987.50. Deposit: EUR 397.50.")
    assert _ground.ungrounded(quote, sources, [survey]) == []
    # a line no step of arithmetic on the answer's own figures gives stays ungrounded
    # (and the total no longer the sum of the lines, nor the deposit a share of a grounded total)
    assert _ground.ungrounded(quote.replace("EUR 105.00", "EUR 118.00"), sources, [survey]) == ["118.00", "1987.50", "397.50"]


def test_a_count_written_with_a_times_prefix_is_a_number_not_an_id():
    from agentotel.analysis import _ground
    priced = '{"lines": [{"sku": "PLB-12", "quantity": 130}]}'
    assert _ground.ungrounded("PLB-12 x130", priced) == []
    assert _ground.ungrounded("PLB-12 x131", priced) == ["131"]


def test_a_figure_by_a_formula_the_instructions_write_is_grounded():
    from agentotel.analysis import _ground
    stubs = {"stubs": [{"gross": 2884.62}, {"gross": 2884.62}]}
    sources = "Monthly income is weekly gross x 52 / 12 from the latest stubs. " + json.dumps(stubs)
    assert _ground.ungrounded("Monthly income: USD 12,500.02.", sources, [stubs]) == []
    assert _ground.ungrounded("Monthly income: USD 12,750.00.", sources, [stubs]) == ["12,750.00"]


CLINIC_ORDER = ("You book vaccination appointments. Read the patient's record with get_record. Doses go in this order: "
                "first, second, booster - never book one before every earlier one has been given; if one was missed, book "
                "it first. Book with book_dose.")


@pytest.mark.parametrize("dose,second,broken", [("booster", "given", False), ("second", "missed", False),
                                                ("booster", "missed", True)])
def test_a_step_of_a_written_order_taken_before_the_ones_ahead_of_it(dose, second, broken):
    record_ = {"patient_id": "PT-118", "doses": [{"dose": "first", "status": "given", "date": "2026-06-02"},
                                                 {"dose": "second", "status": second, "date": "2026-09-01"}]}
    run = _conversation(("user", "Book PT-118's next dose."), ("get_record", {"patient_id": "PT-118"}, record_),
                        ("book_dose", {"patient_id": "PT-118", "dose": dose, "date": "2026-12-10"}, {"booking": "BK-4", "status": "booked"}),
                        system=CLINIC_ORDER, answer=f"Booked the {dose} dose for 2026-12-10 (BK-4).")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


LEAVE = ("You decide leave requests with record_decision. A request of more than 5 consecutive working days needs the "
         "manager's approval: call request_manager_approval before deciding.")


@pytest.mark.parametrize("end,broken", [("2027-01-08", False), ("2027-01-11", True)])
def test_a_check_written_for_longer_spans_is_not_owed_by_a_shorter_one(end, broken):
    """2027-01-04 (Monday) to 01-08 is 5 working days: no approval owed; to 01-11 is 6."""
    built = _conversation(("user", "Leave request LR-77 for E-1042, please decide it."),
                          ("record_decision", {"request_id": "LR-77", "start": "2027-01-04", "end": end, "decision": "approved"},
                           {"decision_id": "LD-1", "status": "recorded"}),
                          system=LEAVE, answer="Approved.")
    offered = definitions_attr(("record_decision", {"type": "object"}), ("request_manager_approval", {"type": "object"}))
    run = record(*built.steps, attributes={s["span_id"]: offered for s in built.steps if s["type"] == "llm"}, task=json.loads(built.run["task"]))
    found, shown = _found(run, "missing_evidence")
    assert found == ([(1, "model")] if broken else []), shown


@pytest.mark.parametrize("found_as,other", [("SR-48213", False), ("SR-48231", True)])
def test_a_search_by_an_exact_id_answering_one_of_the_same_form(found_as, other):
    result = {"query": "SR-48213", "count": 1, "reservations": [{"confirmation": found_as, "car_class": "midsize"}]}
    run = _conversation(("user", "Change my booking SR-48213 please."), ("find_reservations", {"query": "SR-48213"}, result),
                        system="You run the rental desk.", answer=f"Found {found_as}.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == ([(2, "tool")] if other else []), shown


@pytest.mark.parametrize("answered,other", [("TP-2208", False), ("TP-2280", True)])
def test_a_record_asked_by_owner_id_answering_another_owner(answered, other):
    result = {"taxpayer": {"id": answered, "name": "Dana W."}, "tax_year": 2025, "documents": [{"doc_id": "D-1", "form": "W-2"}]}
    run = _conversation(("user", "Prepare TP-2208's 2025 return."),
                        ("search_documents", {"taxpayer_id": "TP-2208", "tax_year": 2025}, result),
                        system="You prepare returns.", answer="Documents found: D-1.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == ([(2, "tool")] if other else []), shown


APPRAISAL = ("You value claims for the insurer. Today is 2026-12-04. Photos taken more than 30 days before the claim date "
             "can't be used: call request_photos and record the claim as pending. Record the valuation with record_valuation.")


@pytest.mark.parametrize("taken,outcome,broken", [("2026-11-28", "valued", False), ("2026-09-02", "pending", False),
                                                   ("2026-09-02", "valued", True)])
def test_an_action_on_data_a_rule_says_is_too_old_to_use(taken, outcome, broken):
    run = _conversation(("user", "Value claim CL-5512."),
                        ("get_photos", {"claim_id": "CL-5512"}, {"claim_id": "CL-5512", "photos": [{"photo_id": "PH-1", "taken": taken}]}),
                        ("record_valuation", {"claim_id": "CL-5512", "status": outcome, "amount": 1840.0}, {"status": "recorded"}),
                        system=APPRAISAL, answer=f"CL-5512 recorded as {outcome}.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


CRANE = ("You schedule crane lifts. Read the lift with get_lift. Book it with book_lift only if the load_kg is within the "
         "crane's max_load_kg; otherwise escalate it with escalate_lift.")


@pytest.mark.parametrize("load,deed,broken", [(3200.0, "book_lift", False), (5400.0, "escalate_lift", False),
                                              (5400.0, "book_lift", True)])
def test_a_call_going_on_past_the_limit_a_record_sets_and_the_rules_name(load, deed, broken):
    lift = {"lift_id": "LF-207", "load_kg": load, "crane": {"crane_id": "CR-3", "max_load_kg": 5000.0}}
    run = _conversation(("user", "Schedule lift LF-207 for Monday."), ("get_lift", {"lift_id": "LF-207"}, lift),
                        (deed, {"lift_id": "LF-207"}, {"lift_id": "LF-207", "status": "done"}),
                        system=CRANE, answer="Done.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


VENUE = ("You confirm venue bookings. Read the hold with get_hold; an expired hold must be renewed with renew_hold before "
         "anything else. Confirm with confirm_booking.")


@pytest.mark.parametrize("status,expires,owed", [("active", "2026-12-11T10:00:00Z", False), ("expired", "2026-12-01T10:00:00Z", True)])
def test_a_check_written_for_a_record_in_a_state_is_owed_only_in_it(status, expires, owed):
    built = _conversation(("user", "Today is 2026-12-04. Confirm hold H-5188."),
                          ("get_hold", {"hold_id": "H-5188"}, {"hold_id": "H-5188", "status": status, "expires_at": expires}),
                          ("confirm_booking", {"hold_id": "H-5188"}, {"booking_id": "BK-1", "status": "confirmed"}),
                          system=VENUE, answer="Confirmed BK-1.")
    offered = definitions_attr(("get_hold", {"type": "object"}), ("renew_hold", {"type": "object"}), ("confirm_booking", {"type": "object"}))
    run = record(*built.steps, attributes={s["span_id"]: offered for s in built.steps if s["type"] == "llm"}, task=json.loads(built.run["task"]))
    found, shown = _found(run, "missing_evidence")
    assert found == ([(3, "model")] if owed else []), shown


@pytest.mark.parametrize("key,stale", [("start_date", False), ("as_of", True)])
def test_a_date_of_the_thing_described_is_not_the_datas_age(key, stale):
    run = _conversation(("user", "What is my current tariff?"),
                        ("get_tariff", {"account": "AC-3301"}, {"account": "AC-3301", "tariff": "Fix 24", key: "2026-01-15"}),
                        system="You are the energy desk. Today is 2026-12-04. Quote the customer's current tariff.",
                        answer="You are on Fix 24.")
    found, shown = _found(run, "tool_result_stale")
    assert found == ([(2, "tool")] if stale else []), shown


def _said_beside(system, reads, said, name, arguments, result, answer, offered=None):
    """A run whose model says `said` in the step that calls `name`: the reads first (each a call and its result), then
    the call with its words, then the answer. `offered` is the tool definitions every model step is given."""
    built = _conversation(("user", "Please handle it."), *reads, (name, arguments, result), system=system, answer=answer)
    steps = [dict(s) for s in built.steps]
    output = json.loads(steps[-3]["output"])
    output[0]["parts"].insert(0, {"type": "text", "content": said})
    steps[-3]["output"] = json.dumps(output)
    attributes = {s["span_id"]: {semconv.GEN_AI_TOOL_DEFINITIONS: json.dumps(offered)} for s in steps if s["type"] == "llm"} if offered else None
    return record(*steps, attributes=attributes, task="Please handle it.")


INSPECTION = "You are the food-safety inspection assistant. Read the visit with get_visit, then record its outcome with record_outcome."
OUTCOME_TOOLS = [{"type": "function", "name": "get_visit", "parameters": {"type": "object"}},
                 {"type": "function", "name": "record_outcome", "description": "Records a visit's outcome (compliant, conditional "
                  "or closure) with the inspector's notes.", "parameters": {"type": "object", "properties": {
                      "visit_id": {"type": "string"}, "outcome": {"type": "string"}}}}]
VISIT = ("get_visit", {"visit_id": "V-118"}, {"visit_id": "V-118", "premises": "Harbour Noodle Bar", "cold_store_c": 9.5})


@pytest.mark.parametrize("sent,broken", [("conditional", False), ("compliant", True)])
def test_words_beside_a_call_choosing_one_of_its_fields_choices_while_it_sends_another(sent, broken):
    """The choices come from the tool's description: "(compliant, conditional or closure)"."""
    run = _said_beside(INSPECTION, [VISIT], "Cold store at 9.5 C: issuing conditional for V-118.", "record_outcome",
                       {"visit_id": "V-118", "outcome": sent}, {"visit_id": "V-118", "status": "recorded"},
                       f"V-118 recorded as {sent}.", OUTCOME_TOOLS)
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(3, "model")] if broken else []), shown


LENDING = ('You review micro-loan applications. Read it with get_application, then call decide with verdict "approve" when '
           'the applicant\'s income covers three instalments, "decline" otherwise.')
APPLICATION = ("get_application", {"application_id": "L-77"}, {"application_id": "L-77", "monthly_income": 900, "instalment": 410})


@pytest.mark.parametrize("said,broken", [("Declining L-77: income covers only two instalments.", True),
                                         ("Not declining L-77 after all: approving it.", False),
                                         ("Approving L-77.", False)])
def test_a_choice_the_instructions_quote_said_and_another_sent(said, broken):
    """The choices come from the quoted words of the rule's sentence; a clause putting one aside says nothing."""
    run = _said_beside(LENDING, [APPLICATION], said, "decide", {"application_id": "L-77", "verdict": "approve"},
                       {"application_id": "L-77", "status": "decided"}, "L-77 decided.")
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(3, "model")] if broken else []), shown


NEWSLETTER = "You send the parish newsletter. Read the mailing list with get_list and the opt-outs with get_opt_outs, never send to an opt-out."
MAILING = ("get_list", {"list_id": "ML-3"}, {"list_id": "ML-3", "members": ["M-201", "M-204", "M-208", "M-215"]})
OPT_OUTS = ("get_opt_outs", {"list_id": "ML-3"}, {"list_id": "ML-3", "opted_out": ["M-204", "M-208"]})


@pytest.mark.parametrize("name,arguments,broken", [
    ("send_newsletter", {"issue": "Advent", "recipients": ["M-201", "M-215"]}, False),
    ("send_newsletter", {"issue": "Advent", "recipients": ["M-201", "M-208", "M-215"]}, True),
    # the call's field lists what is left out: that is the words' deed, not a slip
    ("send_newsletter", {"issue": "Advent", "recipients": ["M-201", "M-215"], "exclude": ["M-204", "M-208"]}, False),
    ("remove_members", {"list_id": "ML-3", "member_ids": ["M-204", "M-208"]}, False)])
def test_ids_the_words_leave_out_of_the_call_it_sends_anyway(name, arguments, broken):
    run = _said_beside(NEWSLETTER, [MAILING, OPT_OUTS], "Leaving out M-204 and M-208 (opted out) and sending to the rest.",
                       name, arguments, {"status": "sent"}, "Sent.")
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(5, "model")] if broken else []), shown


QC = ("You are the QC assistant of a contract brewery. Read the batch with get_batch, log the QC review with record_qc, "
      "then reply to the lab manager with the batch status and every deviation you logged.")
QC_LOGGED = ("record_qc", {"batch_id": "B-902", "status": "hold", "deviations": ["DEV-311 dissolved oxygen 145 ppb", "DEV-318 pH 4.9"]},
             {"qc_id": "QC-5520", "status": "recorded"})


@pytest.mark.parametrize("answer,broken", [
    ("B-902 is on hold: DEV-311 (dissolved oxygen 145 ppb) and DEV-318 (pH 4.9). Logged as QC-5520.", False),
    ("B-902 is on hold: DEV-311, dissolved oxygen at 145 ppb. Logged as QC-5520.", True),
    ("B-902 is on hold; the deviations are in QC-5520.", True)])
def test_an_answer_leaving_out_part_of_what_the_rules_say_to_tell_every_of(answer, broken):
    run = _conversation(("user", "QC review for B-902 please."),
                        ("get_batch", {"batch_id": "B-902"}, {"batch_id": "B-902", "style": "lager", "do_ppb": 145, "ph": 4.9}),
                        QC_LOGGED, system=QC, answer=answer)
    found, shown = _found(run, "information_withheld")
    assert found == ([(5, "model")] if broken else []), shown


FERRY = ("You are the ferry line's booking assistant. Cancel with cancel_booking when asked; always tell the passenger "
         "the cancellation fee it returns and when the refund arrives.")


@pytest.mark.parametrize("answer,broken", [("Cancelled FB-4410. A cancellation fee of EUR 18.50 applies; the refund arrives in 5 days.", False),
                                           ("Cancelled FB-4410; the refund arrives in 5 days.", True)])
def test_an_answer_leaving_out_the_figure_the_rules_say_always_to_tell(answer, broken):
    run = _conversation(("user", "Please cancel my crossing FB-4410."),
                        ("cancel_booking", {"booking_id": "FB-4410"},
                         {"booking_id": "FB-4410", "status": "cancelled", "cancellation": {"fee": 18.5, "currency": "EUR"},
                          "refund": {"amount": 55.5, "days": 5}}),
                        system=FERRY, answer=answer)
    found, shown = _found(run, "information_withheld")
    assert found == ([(3, "model")] if broken else []), shown


SURVEYS = [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in ("get_search", "order_search", "file_report")]


@pytest.mark.parametrize("said,broken", [("The drainage search is 9 months old, so I'm ordering a new one before filing.", True),
                                         ("The drainage search is current, so I'm filing the report.", False),
                                         ("I'll order a new search after the report is filed.", False)])
def test_words_doing_another_offered_tools_deed_by_its_verb_while_the_call_does_another(said, broken):
    run = _said_beside("You file conveyancing reports.", [("get_search", {"case_id": "CV-71"}, {"issued": "2026-03-02"})],
                       said, "file_report", {"case_id": "CV-71", "result": "clear"}, {"report_id": "RP-5"}, "Filed RP-5.", SURVEYS)
    found, shown = _found(run, "reasoning_action_mismatch")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("again,repeated", [("T-1", True), ("T-4", False)])
def test_a_deed_done_again_on_the_same_record_after_the_same_deed_on_others(again, repeated):
    holds = [("hold_table", {"table_id": t, "time": "19:30"}, {"hold_id": f"H-{t}", "status": "held"}) for t in ("T-1", "T-2", "T-3", again)]
    run = _conversation(("user", "Hold the tables for the Okafor party tonight at 19:30."), *holds,
                        system="You hold restaurant tables with hold_table; one hold per table.", answer="Held.")
    found, shown = _found(run, "repeated_tool_call")
    assert found == ([(7, "model")] if repeated else []), shown


COLD_ROOM = ("You run the cold room. Read the probe with get_probe. A delivery above 5 C at the probe cannot be accepted - "
           "reject it with record_receipt (decision reject).")


@pytest.mark.parametrize("temp,decision,broken", [(4.1, "accept", False), (8.4, "reject", False), (8.4, "accept", True)])
def test_a_deed_the_rules_bar_past_a_threshold_done_on_a_figure_past_it(temp, decision, broken):
    run = _conversation(("user", "Chicken delivery DL-88 is at the door."),
                        ("get_probe", {"delivery_id": "DL-88"}, {"delivery_id": "DL-88", "probe_temp_c": temp}),
                        ("record_receipt", {"delivery_id": "DL-88", "decision": decision}, {"receipt_id": "RC-1", "status": "recorded"}),
                        system=COLD_ROOM, answer=f"DL-88: {decision}.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


TAX_FORMS = {"documents": [
    {"doc_id": "D-5501", "form": "W-2", "payer": "Brightline Logistics", "corrected": False,
     "boxes": {"1_wages": 98400.0, "2_federal_withheld": 14210.0}},
    {"doc_id": "D-5588", "form": "W-2c", "payer": "Brightline Logistics", "corrected": True, "corrects": "D-5501",
     "boxes": {"1_wages": 96900.0, "2_federal_withheld": 14210.0}},
    {"doc_id": "D-5520", "form": "1099-INT", "payer": "Coastline Credit Union", "boxes": {"1_interest": 1240.0}}]}


@pytest.mark.parametrize("answer,broken", [
    ("Brightline W-2 (D-5501, corrected by D-5588): wages 96,900.00, federal withheld 14,210.00.", False),
    ("Brightline W-2 (D-5501): wages 98,400.00, federal withheld 14,210.00; interest 1,240.00.", True),
    # both told: the change said, not the old figure taken for the one in force
    ("The W-2 said 98,400.00; the W-2c corrects it to 96,900.00.", False),
])
def test_a_figure_written_from_a_form_a_corrected_one_beside_it_replaces(answer, broken):
    # (heldout23's W-2c: no status on the old form; the new one names it in corrects)
    run = _conversation(("user", "List Dana's 2025 income forms."),
                        ("search_documents", {"taxpayer_id": "TP-2208", "tax_year": 2025}, TAX_FORMS),
                        system="You list a taxpayer's forms for the preparer.", answer=answer)
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


LAB = {"accession": "L-240871", "results": [
    {"analyte": "potassium", "value": 5.0, "unit": "mmol/L", "version": 1, "status": "superseded"},
    {"analyte": "potassium", "value": 6.6, "unit": "mmol/L", "version": 2, "status": "amended", "supersedes": 1},
    {"analyte": "glucose", "value": 7.9, "unit": "mmol/L", "version": 1, "status": "final"}]}


@pytest.mark.parametrize("analyte,value,broken", [("potassium", 6.6, False), ("potassium", 5.0, True), ("glucose", 7.9, False)])
def test_a_small_figure_reported_from_a_result_its_amended_version_supersedes(analyte, value, broken):
    # a figure under 10 counts when the call puts it in a field of the record's own name; the amended version is of
    # the same analyte (glucose's version 1 is no potassium's predecessor though `supersedes` is 1)
    run = _conversation(("user", "Report L-240871."),
                        ("get_results", {"accession": "L-240871"}, LAB),
                        ("report_result", {"accession": "L-240871", "analyte": analyte, "value": value, "unit": "mmol/L"},
                         {"report_id": "RPT-1", "status": "released"}),
                        system="You report lab results with report_result.", answer="Reported.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


PLANNING = {"results": [
    {"reference": "24/03318/FUL", "version": 2, "status": "superseded", "decision": "approved",
     "description": "Two-storey rear extension", "superseded_by": "24/03318/FUL v3"},
    {"reference": "24/03318/FUL", "version": 3, "status": "current", "decision": "approved",
     "description": "Single-storey rear extension (amended: height reduced)"},
    {"reference": "09/00412/FUL", "version": 1, "status": "current", "decision": "approved", "description": "Detached garage"}]}


@pytest.mark.parametrize("version,broken", [(1, False), (0, True)])
def test_an_action_carrying_a_version_whose_successor_is_named_by_reference_and_version(version, broken):
    # superseded_by '24/03318/FUL v3' names no listed value whole: the version of the same reference beside it
    description = PLANNING["results"][version]["description"]
    run = _conversation(("user", "File the searches report for 14 Alder Close."),
                        ("search_planning", {"address": "14 Alder Close"}, PLANNING),
                        ("file_report", {"address": "14 Alder Close", "risks": [f"Planning 24/03318/FUL: {description}"]},
                         {"report_id": "RPT-6631"}),
                        system="You file conveyancing search reports with file_report.", answer="Filed RPT-6631.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


DIRECTIVES = {"results": [
    {"ad_id": "EASA AD 2026-0148R1", "revision": 1, "status": "superseded", "applicability": "ATR 72-212A"},
    {"ad_id": "EASA AD 2026-0148R2", "revision": 2, "status": "current", "applicability": "ATR 72-212A"},
    {"ad_id": "EASA AD 2025-0233", "revision": 0, "status": "current", "applicability": "ATR 72-212A"}]}


@pytest.mark.parametrize("cited,broken", [("EASA AD 2026-0148R2", False), ("EASA AD 2026-0148R1", True)])
def test_an_answer_citing_a_revision_superseded_beside_another_current_record_still_cites_it(cited, broken):
    # the revision's successor is the id that differs only in its mark (R1 -> R2); another current AD named beside
    # the old revision does not clear it
    run = _conversation(("user", "Which ADs does EI-NWD comply with?"),
                        ("search_directives", {"query": "ATR 72-600"}, DIRECTIVES),
                        system="You review aircraft records.", answer=f"Complied with: EASA AD 2025-0233, {cited}.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if broken else []), shown


PAUSES = ("You run the bike-share desk. A membership can be paused for at most 60 days in a membership year in total "
          "(pause_days_used counts this year's); otherwise offer what is left.")
FREEZES = ("You run the gym's membership desk.\n1. A member may freeze for at most 3 months at a time.\n"
           "2. No more than 3 months of freezes in total may fall in one membership year - count the freezes already taken.")


@pytest.mark.parametrize("system,used,asked,broken", [
    (PAUSES, 45, 30, True), (PAUSES, 45, 15, False), (PAUSES, 10, 30, False),
    # a limit on each pause alone ("at a time") does not count the ones before
    (PAUSES.replace(" in a membership year in total (pause_days_used counts this year's)", " at a time"), 45, 30, False),
])
def test_a_limit_in_total_counts_what_the_record_says_is_used_already(system, used, asked, broken):
    run = _conversation(("user", f"Please pause my membership for {asked} days - rider R-118."),
                        ("get_membership", {"rider_id": "R-118"}, {"rider_id": "R-118", "plan": "Annual", "pause_days_used": used}),
                        ("pause_membership", {"rider_id": "R-118", "days": asked}, {"rider_id": "R-118", "status": "paused"}),
                        system=system, answer="Paused.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("earlier,asked,broken", [
    ([("2026-06-01", 2)], 2, True), ([("2026-06-01", 2)], 1, False),
    # a freeze of an earlier membership year is not counted against this one
    ([("2025-06-01", 2)], 2, False),
])
def test_a_limit_in_total_sums_the_deeds_earlier_items_inside_the_records_period(earlier, asked, broken):
    membership = {"member_id": "HL-40721", "membership_year": {"start": "2026-04-01", "end": "2027-03-31"},
                  "freezes": [{"reference": f"FZ-{n}", "start": start, "months": months} for n, (start, months) in enumerate(earlier)]}
    run = _conversation(("user", f"Freeze my membership for {asked} months from January - HL-40721."),
                        ("get_membership", {"member_id": "HL-40721"}, membership),
                        ("freeze_membership", {"member_id": "HL-40721", "start_date": "2027-01-01", "months": asked},
                         {"reference": "FZ-2290", "status": "scheduled"}),
                        system=FREEZES, answer="Frozen.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
