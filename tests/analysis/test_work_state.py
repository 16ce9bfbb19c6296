"""Work said done against how the run read it stands, and rules about what comes before an answer, how an amount is
netted and what a timed-out write means (heldout14's misses, in other trades): a deployment announced while its last
status read 'in_progress', a backfill reported complete at 9,200 of 12,000 rows, an answer given without the search
the instructions ask for first, a reimbursement paid gross of the advance, a transfer sent again after a timeout -
each beside the run that does it right. Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, record, text_message, tool_loop
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


@pytest.mark.parametrize("last,flagged", [("in_progress", True), ("succeeded", False)])
def test_a_deployment_announced_while_its_last_status_read_says_in_progress_is_input_ignored(last, flagged):
    run = _conversation(("user", "Please roll out web-frontend 4.2 and tell #releases when it is live."),
                        ("start_rollout", {"service": "web-frontend", "version": "4.2"}, {"rollout_id": "R-881", "status": "started"}),
                        ("get_rollout_status", {"rollout_id": "R-881"}, {"rollout_id": "R-881", "status": last, "pods_ready": 6}),
                        ("post_message", {"channel": "#releases", "text": "web-frontend 4.2 is live on all pods."}, {"ok": True}),
                        system="You are the release agent.", answer="web-frontend 4.2 is live and announced in #releases.")
    found, shown = _found(run, "input_ignored")
    assert found == ([(5, "model")] if flagged else []), shown


@pytest.mark.parametrize("copied,answer,flagged", [
    (9200, "The backfill of events_2026 has completed: the table is ready.", True),
    (12000, "The backfill of events_2026 has completed: the table is ready.", False),
    (9200, "The backfill stopped at 9,200 of 12,000 rows - it is partial, I have not marked it ready.", False),
])
def test_work_reported_complete_at_a_count_short_of_the_expected_is_input_ignored(copied, answer, flagged):
    run = _conversation(("user", "Backfill events_2026 from the archive."),
                        ("run_backfill", {"table": "events_2026"}, {"task_id": "T-19", "status": "done", "rows_copied": copied,
                                                                   "rows_total": 12000}),
                        system="You are the data engineer's agent.", answer=answer)
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if flagged else []), shown


LIBRARY = ("You are the library's reference agent. Search the catalogue with search_catalog before you answer, and "
           "answer only from what it returns.")


@pytest.mark.parametrize("searched,answer,flagged", [
    (False, "Yes - 'The Salt Road' is on the shelf at the main branch.", True),
    (True, "Yes - 'The Salt Road' is on the shelf at the main branch.", False),
    (False, "Which branch do you mean - the main one or Eastside?", False),  # a question back answers nothing yet
])
def test_an_answer_given_without_the_search_the_instructions_ask_for_first_is_missing_evidence(searched, answer, flagged):
    ask = "Is 'The Salt Road' available?"
    turns = [("search_catalog", {"query": "The Salt Road"}, [{"title": "The Salt Road", "branch": "main", "status": "on shelf"}])]
    steps = tool_loop([text_message("system", LIBRARY), text_message("user", ask)], turns if searched else [], answer)
    offered = definitions_attr(("search_catalog", {"type": "object"}), ("place_hold", {"type": "object"}))
    run = record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask)
    found, shown = _found(run, "missing_evidence")
    assert bool(found) == flagged, shown


EXPENSES = "You are the expenses agent. Reimburse the claimed total less any travel advance already paid."


@pytest.mark.parametrize("amount,broken", [(840.0, True), (540.0, False)])
def test_an_amount_the_rules_net_of_another_given_gross_is_a_policy_violated(amount, broken):
    run = _conversation(("user", "Please reimburse expense report EX-220."),
                        ("get_expense_report", {"report_id": "EX-220"}, {"report_id": "EX-220", "claimed_total": 840.0,
                                                                         "employee_id": "E-31"}),
                        ("get_employee", {"employee_id": "E-31"}, {"employee_id": "E-31", "travel_advance": 300.0}),
                        ("reimburse", {"report_id": "EX-220", "amount": amount}, {"status": "paid"}),
                        system=EXPENSES, answer=f"EX-220 is reimbursed: {amount:.2f} EUR.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


@pytest.mark.parametrize("system,between,blind", [
    ("You are the treasury agent. Never transfer funds twice: if transfer_funds times out, check list_transfers first.",
     False, True),
    ("You are the treasury agent. Never transfer funds twice: if transfer_funds times out, check list_transfers first.",
     True, False),
    ("You are the treasury agent.", False, False),  # no rule against it: a retry after a timeout is fair recovery
])
def test_a_write_sent_again_after_a_timeout_with_nothing_checked_where_the_rules_forbid_it_twice_is_input_ignored(
        system, between, blind):
    transfer = ("transfer_funds", {"from": "ACC-1", "to": "ACC-7", "amount": 2500.0})
    turns = [("user", "Move 2,500 EUR from ACC-1 to ACC-7."), (*transfer, "Error: TimeoutError('bank gateway timed out after 30 s')")]
    turns += [("list_transfers", {"account": "ACC-1"}, {"transfers": []})] if between else []
    turns += [(*transfer, {"status": "completed", "transfer_id": "TR-5510"})]
    run = _conversation(*turns, system=system, answer="Done: 2,500 EUR moved to ACC-7 (TR-5510).")
    found, shown = _found(run, "input_ignored")
    assert bool(found) == blind, shown


@pytest.mark.parametrize("answer,flagged", [
    ("You get 25 days of leave a year (see HR-12).", True),
    ("You get 28 days of leave a year (see HR-19).", False),
    ("You get 28 days of leave a year (HR-19; the older HR-12 said 25, but it is superseded).", False),
])
def test_an_answer_citing_a_document_its_results_mark_superseded_beside_the_current_one_is_input_ignored(answer, flagged):
    found_docs = {"results": [{"doc_id": "HR-12", "title": "Annual leave", "text": "25 days of annual leave.", "superseded_by": "HR-19"},
                              {"doc_id": "HR-19", "title": "Annual leave (2026)", "text": "28 days of annual leave.", "superseded_by": None}]}
    run = _conversation(("user", "How many days of annual leave do I get?"), ("search_policies", {"query": "annual leave"}, found_docs),
                        system="You are the HR assistant. Answer from the policies search_policies finds.", answer=answer)
    found, shown = _found(run, "input_ignored")
    assert found == ([(3, "model")] if flagged else []), shown


def test_a_model_slip_a_rule_the_instructions_lost_used_to_forbid_is_explained_by_the_loss():
    # the same cited superseded document: the model's slip while the rule stands; the prompt's when earlier runs of
    # the agent had the rule and this one's instructions lost it
    from agentotel.analysis._record import History

    rule = " Use a policy's current version: never one marked superseded."
    base = "You are the HR assistant. Answer from the policies search_policies finds. Cite the policy id."
    docs = {"results": [{"doc_id": "HR-12", "title": "Annual leave", "text": "25 days.", "superseded_by": "HR-19"},
                        {"doc_id": "HR-19", "title": "Annual leave (2026)", "text": "28 days.", "superseded_by": None}]}

    def run(system):
        return _conversation(("user", "How many days of annual leave do I get?"), ("search_policies", {"query": "annual leave"}, docs),
                             system=system, answer="You get 25 days of leave a year (see HR-12).")

    history = History()
    history.first_calls = [(f"earlier-{n}", run(base + rule).steps[0]) for n in range(3)]
    assert [(f.kind, f.layer) for f in detect(run(base + rule), history)] == [("input_ignored", "model")]
    lost = detect(run(base), history)
    assert [(f.kind, f.index, f.layer) for f in lost] == [("instructions_changed", 1, "prompt")], format_findings(lost)


def test_a_model_slip_on_a_run_moved_to_another_model_than_every_earlier_run_is_the_change_s():
    from agentotel.analysis._record import History

    def run(model):
        built = _conversation(("user", "Please reimburse expense report EX-220."),
                              ("get_expense_report", {"report_id": "EX-220"}, {"report_id": "EX-220", "claimed_total": 840.0}),
                              ("get_employee", {"employee_id": "E-31"}, {"employee_id": "E-31", "travel_advance": 300.0}),
                              ("reimburse", {"report_id": "EX-220", "amount": 840.0}, {"status": "paid"}),
                              system=EXPENSES, answer="EX-220 is reimbursed: 840.00 EUR.")
        for step in built.steps:
            if step["type"] == "llm":
                step["model"] = model
        return built

    history = History()
    history.first_calls = [(f"earlier-{n}", {**run("gpt-4.1").steps[0], "agent": None}) for n in range(3)]
    # on the model every earlier run used: the model's own slip
    assert [(f.kind, f.layer) for f in detect(run("gpt-4.1"), history)] == [("policy_violated", "model")]
    moved = detect(run("gpt-3.5-turbo"), history)
    assert [(f.kind, f.index, f.layer, f.severity) for f in moved] == [("model_changed", 1, "product", "warning")], format_findings(moved)
    assert moved[0].evidence["explains"] == [("policy_violated", 5)]


@pytest.mark.parametrize("result,letter,flagged", [
    ({"status": "failed", "reason": "card processor error: the refund was NOT issued"}, "Your refund of 80.00 EUR is issued.", True),
    ({"status": "refunded", "refund_id": "RF-7"}, "Your refund of 80.00 EUR is issued.", False),
    # an action whose own deed is a refusal: its outcome 'declined' is the deed done
    (None, "We are sorry: your request R-3 is declined.", False),
])
def test_a_message_sent_saying_an_action_done_that_answered_not_done_is_action_not_taken(result, letter, flagged):
    act = ("issue_refund", {"order_id": "#5120", "amount": 80.0}, result) if result else \
        ("decline_request", {"request_id": "R-3"}, {"request_id": "R-3", "status": "declined"})
    run = _conversation(("user", "Please sort out my order #5120."), act,
                        ("send_email", {"to": "kim@example.com", "body": letter}, {"status": "sent"}),
                        ("assistant", "All done - an e-mail confirms it. Anything else?"), ("user", "No, that's all - thanks."),
                        system="You are the returns desk.", answer="You're welcome!")
    found, shown = _found(run, "action_not_taken")
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("asked,flagged", [(False, True), (True, False)])
def test_one_of_several_records_a_listing_gave_taken_unasked_is_clarification_skipped_where_it_was_picked(asked, flagged):
    bookings = {"bookings": [{"booking_id": "BK-5520", "car": "compact", "status": "active"},
                             {"booking_id": "BK-5561", "car": "van", "status": "active"}]}
    turns = [("user", "Hi, customer C-881 here: please extend my rental by two days."),
             ("list_bookings", {"customer_id": "C-881"}, bookings)]
    if asked:
        turns += [("assistant", "You have two active rentals, BK-5520 and BK-5561. Which one?"), ("user", "The van, BK-5561.")]
    turns += [("get_booking", {"booking_id": "BK-5561"}, {"booking_id": "BK-5561", "car": "van", "return": "2026-12-06"}),
              ("extend_booking", {"booking_id": "BK-5561", "days": 2}, {"status": "extended", "return": "2026-12-08"})]
    run = _conversation(*turns, system="You are the rental desk.", answer="Done: BK-5561 now returns on 2026-12-08.")
    found, shown = _found(run, "clarification_skipped")
    # picked where the model first took it: the read of the one it chose
    assert found == ([(3, "model")] if flagged else []), shown


@pytest.mark.parametrize("answered,flagged", [("SH-4401", True), ("SH-4410", False)])
def test_a_tool_asked_about_one_record_answering_about_another_is_other_subject_retrieved(answered, flagged):
    run = _conversation(("user", "Where is shipment SH-4410?"),
                        ("get_shipment", {"shipment_id": "SH-4410"}, {"shipment_id": answered, "status": "in transit", "eta": "2026-12-06"}),
                        system="You are the logistics desk.", answer="SH-4410 is in transit, due on 2026-12-06.")
    found, shown = _found(run, "other_subject_retrieved")
    assert found == ([(2, "tool")] if flagged else []), shown


@pytest.mark.parametrize("cited,flagged", [("PL-20", True), ("PL-21", False)])
def test_an_answer_citing_the_sibling_of_the_thing_the_request_names_is_a_wrong_target(cited, flagged):
    plans = {"plans": [{"plan_id": "PL-20", "name": "Fibre", "speed": "300 Mbit/s", "price": 29.0},
                       {"plan_id": "PL-21", "name": "Fibre Pro", "speed": "1 Gbit/s", "price": 45.0}]}
    answer = {"PL-20": "Fibre costs 29.00 EUR a month (PL-20).", "PL-21": "Fibre Pro costs 45.00 EUR a month (PL-21)."}[cited]
    run = _conversation(("user", "What does Fibre Pro cost per month?"), ("search_plans", {"query": "Fibre Pro"}, plans),
                        system="You are the sales desk. Cite the plan id.", answer=answer)
    found, shown = _found(run, "wrong_target")
    assert found == ([(3, "model")] if flagged else []), shown
