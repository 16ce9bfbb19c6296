"""A lead agent against its written instructions and its workers' answers (heldout10's supervisor misses, in other
trades): a field the instructions say to ask about left empty and the lead went on; a worker's verdict the
instructions map to a tool ('BREACH: ...' -> escalate_incident) passed over; a worker not given what the
instructions say to give it; words that say one value beside a call that gives another; an action allowed only on a
worker's verdict taken without it; a run ending on 'Next: ...'; a worker answering with the outcome of a tool that
failed. Each beside the legitimate run that looks like it. Hand-built runs."""

from __future__ import annotations

import json

from agentotel.analysis.detectors import detect, format_findings
from runs_build import agent, definitions_attr, llm, record, text_message, tool, tool_loop


def _run(instructions: str, turns, answer: str, *, offered=(), task: str = "Handle case CS-3391.", said: str | None = None):
    steps = tool_loop([text_message("system", instructions), text_message("user", task)], turns, answer)
    if said is not None:  # the model's words beside its last call
        last = max(i for i, s in enumerate(steps) if s["type"] == "llm" and s["output"] and '"tool_call"' in s["output"])
        steps[last] = llm(steps[last]["index"], text=said, calls=[(c["name"], c["arguments"], c["id"]) for m in
                          json.loads(steps[last]["output"]) for c in m["parts"] if c["type"] == "tool_call"],
                          messages=json.loads(steps[last]["input"]))
    attributes = {s["span_id"]: definitions_attr(*((n, {"type": "object"}) for n in offered)) for s in steps if s["type"] == "llm"}
    return record(*steps, attributes=attributes if offered else None, task=task)


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


INTAKE = ("You are the on-call intake agent. Read the ticket with get_ticket. If it has no hostname or no error message, ask the "
          "requester with ask_requester and stop. Otherwise restart the service with restart_service.")
INTAKE_TOOLS = ("get_ticket", "ask_requester", "restart_service")


def test_a_field_the_instructions_say_to_ask_about_left_empty_and_the_lead_going_on_is_clarification_skipped():
    blank = {"ticket_id": "OPS-88", "hostname": "", "error_message": "disk full", "service": "ingest"}
    guessed = _run(INTAKE, [("get_ticket", {"ticket_id": "OPS-88"}, blank),
                            ("restart_service", {"service": "ingest", "host": "ingest-01"}, {"status": "restarted"})],
                   "Restarted ingest on ingest-01.", offered=INTAKE_TOOLS)
    assert _found(guessed, "clarification_skipped")[0] == [(3, "model")], _found(guessed, "clarification_skipped")[1]
    # asked as told; or nothing missing
    asked = _run(INTAKE, [("get_ticket", {"ticket_id": "OPS-88"}, blank),
                          ("ask_requester", {"ticket_id": "OPS-88", "question": "Which host?"}, {"status": "sent"})],
                 "Asked the requester which host.", offered=INTAKE_TOOLS)
    assert _found(asked, "clarification_skipped")[0] == [], _found(asked, "clarification_skipped")[1]
    whole = _run(INTAKE, [("get_ticket", {"ticket_id": "OPS-88"}, dict(blank, hostname="ingest-01")),
                          ("restart_service", {"service": "ingest", "host": "ingest-01"}, {"status": "restarted"})],
                 "Restarted ingest on ingest-01.", offered=INTAKE_TOOLS)
    assert _found(whole, "clarification_skipped")[0] == [], _found(whole, "clarification_skipped")[1]


SOC = ("You are the SOC lead. Ask scan_agent about the alert. Escalate a breach to the incident team with escalate_incident. "
       "Close an alert with close_alert only when nothing was found.")
SOC_TOOLS = ("scan_agent", "escalate_incident", "close_alert")


def test_a_workers_verdict_the_instructions_map_to_a_tool_passed_over_is_input_ignored():
    verdict = "BREACH: credentials of svc-backup used from 203.0.113.7 at 02:14."
    closed = _run(SOC, [("scan_agent", {"input": "Scan alert AL-5120."}, verdict),
                        ("close_alert", {"alert_id": "AL-5120", "reason": "benign"}, {"status": "closed"})],
                  "Closed AL-5120.", offered=SOC_TOOLS)
    assert _found(closed, "input_ignored")[0] == [(3, "model")], _found(closed, "input_ignored")[1]
    # a hedged verdict, a denial, or the breach escalated: nothing passed over
    for answer in ("POSSIBLE BREACH: one odd login, from the office VPN.", "NO BREACH: the login was the backup job."):
        hedged = _run(SOC, [("scan_agent", {"input": "Scan alert AL-5120."}, answer),
                            ("close_alert", {"alert_id": "AL-5120", "reason": "benign"}, {"status": "closed"})],
                      "Closed AL-5120.", offered=SOC_TOOLS)
        assert _found(hedged, "input_ignored")[0] == [], _found(hedged, "input_ignored")[1]
    escalated = _run(SOC, [("scan_agent", {"input": "Scan alert AL-5120."}, verdict),
                           ("escalate_incident", {"alert_id": "AL-5120"}, {"status": "paged"})],
                     "Escalated AL-5120.", offered=SOC_TOOLS)
    assert _found(escalated, "input_ignored")[0] == [], _found(escalated, "input_ignored")[1]


SHOP = ("You are the fulfilment lead. Ask verify_agent to verify the payment; when it could not verify it, hold the order "
        "with hold_order. Ship a verified order with ship_order.")


def test_a_worker_answering_it_could_not_and_the_lead_doing_the_other_thing_is_input_ignored():
    shipped = _run(SHOP, [("verify_agent", {"input": "Verify the payment of order 6120."}, "NOT VERIFIED: the card holder differs."),
                          ("ship_order", {"order_id": "6120"}, {"status": "shipped"})],
                   "Order 6120 shipped.", offered=("verify_agent", "hold_order", "ship_order"))
    assert _found(shipped, "input_ignored")[0] == [(3, "model")], _found(shipped, "input_ignored")[1]
    fine = _run(SHOP, [("verify_agent", {"input": "Verify the payment of order 6120."}, "VERIFIED: 3-D Secure passed."),
                       ("ship_order", {"order_id": "6120"}, {"status": "shipped"})],
                "Order 6120 shipped.", offered=("verify_agent", "hold_order", "ship_order"))
    assert _found(fine, "input_ignored")[0] == [], _found(fine, "input_ignored")[1]


DESK = ("You are the support lead. Read the case with get_case, then ask research_agent to look into it - give it the "
        "customer id, the region and the error code. Answer the customer.")
CASE = {"case_id": "CS-3391", "customer_id": "C-4411", "region": "eu-central", "error_code": "E-1403", "text": "Uploads fail."}


def test_a_worker_not_given_what_the_instructions_say_to_give_it_is_information_withheld():
    blind = _run(DESK, [("get_case", {"case_id": "CS-3391"}, CASE),
                        ("research_agent", {"input": "Look into case CS-3391."}, "NOTHING FOUND.")],
                 "We are looking into it.", offered=("get_case", "research_agent"))
    assert _found(blind, "information_withheld")[0] == [(3, "model")], _found(blind, "information_withheld")[1]
    for brief in ("Customer C-4411 in eu-central gets E-1403 on uploads.", "C-4411 (EU central region) hits error E-1403."):
        briefed = _run(DESK, [("get_case", {"case_id": "CS-3391"}, CASE),
                              ("research_agent", {"input": brief}, "KNOWN: E-1403 is the eu-central quota.")],
                       "It is the regional quota.", offered=("get_case", "research_agent"))
        assert _found(briefed, "information_withheld")[0] == [], _found(briefed, "information_withheld")[1]


def test_words_giving_one_value_beside_a_call_giving_another_are_a_reasoning_action_mismatch():
    task = "Ticket T-77: the billing page shows last month's invoice twice."
    turns = [("assign_ticket", {"ticket_id": "T-77", "queue": "security"}, {"status": "assigned"})]
    mixed = _run("You route support tickets with assign_ticket.", turns, "Routed.", task=task, said="Routing it to the billing queue.")
    assert _found(mixed, "reasoning_action_mismatch")[0] == [(1, "model")], _found(mixed, "reasoning_action_mismatch")[1]
    turns = [("assign_ticket", {"ticket_id": "T-77", "queue": "billing"}, {"status": "assigned"})]
    same = _run("You route support tickets with assign_ticket.", turns, "Routed.", task=task, said="Routing it to the billing queue.")
    assert _found(same, "reasoning_action_mismatch")[0] == [], _found(same, "reasoning_action_mismatch")[1]
    turns = [("assign_ticket", {"ticket_id": "T-77", "queue": "security"}, {"status": "assigned"})]
    vague = _run("You route support tickets with assign_ticket.", turns, "Routed.", task=task, said="Routing it to the right queue.")
    assert _found(vague, "reasoning_action_mismatch")[0] == [], _found(vague, "reasoning_action_mismatch")[1]


RELEASE = ("You are the release lead. Ask qa_agent to test the build. Publish a release with publish_release only for a build "
           "the qa agent approved; otherwise report what failed.")
RELEASE_TOOLS = ("qa_agent", "publish_release")


def test_an_action_allowed_only_on_a_workers_verdict_taken_without_it_or_against_it():
    publish = ("publish_release", {"build": "b-2207"}, {"status": "published"})
    unasked = _run(RELEASE, [publish], "Published b-2207.", offered=RELEASE_TOOLS)
    assert _found(unasked, "missing_evidence")[0] == [(1, "model")], _found(unasked, "missing_evidence")[1]
    refused = _run(RELEASE, [("qa_agent", {"input": "Test build b-2207."}, "NOT APPROVED: 3 of 212 tests fail."), publish],
                   "Published b-2207.", offered=RELEASE_TOOLS)
    assert _found(refused, "policy_violated")[0] == [(3, "model")], _found(refused, "policy_violated")[1]
    approved = _run(RELEASE, [("qa_agent", {"input": "Test build b-2207."}, "APPROVED: 212 of 212 tests pass."), publish],
                    "Published b-2207.", offered=RELEASE_TOOLS)
    found = detect(approved)
    assert not [f for f in found if f.kind in ("missing_evidence", "policy_violated")], format_findings(found)


def test_a_run_ending_on_next_steps_it_had_the_tools_for_is_action_not_taken():
    tools = ("get_change", "deploy_service", "notify_team")
    turns = [("get_change", {"change_id": "CHG-19"}, {"change_id": "CHG-19", "service": "ledger", "approved": True})]
    stopped = _run("You carry out approved changes: deploy with deploy_service, then tell the team with notify_team.", turns,
                   "CHG-19 is approved. Next: deploy it and notify the team.", offered=tools)
    assert _found(stopped, "action_not_taken")[0] == [(3, "model")], _found(stopped, "action_not_taken")[1]
    waiting = _run("You carry out approved changes: deploy with deploy_service, then tell the team with notify_team.", turns,
                   "CHG-19 is approved. Next: deploy it once the change window opens at 22:00.", offered=tools)
    assert _found(waiting, "action_not_taken")[0] == [], _found(waiting, "action_not_taken")[1]
    # the deed in the tool name's other word (roll_out_release: release; apply_patch: patch)
    released = _run("You carry out approved changes with roll_out_release.", turns, "CHG-19 is approved. Next: release it tonight.",
                    offered=("get_change", "roll_out_release"))
    assert _found(released, "action_not_taken")[0] == [(3, "model")], _found(released, "action_not_taken")[1]


def _worker_run(result_status: str, answer: str):
    """A lead calling a worker as a tool; the worker's own validate_schema call fails or not, then it answers."""
    shown = [text_message("system", "You are the schema worker: validate with validate_schema."), text_message("user", "Validate v7.")]
    failed = result_status == "error"
    steps = [agent(1, "lead"), llm(2, calls=[("schema_agent", {"input": "Validate v7."}, "a2")], parent=1),
             dict(tool(3, "schema_agent", {"input": "Validate v7."}, answer, requested_by=2, call_id="a2"), parent_index=1),
             dict(agent(4, "schema"), parent_index=3),
             llm(5, calls=[("validate_schema", {"version": "v7"}, "v5")], messages=shown, parent=4),
             dict(tool(6, "validate_schema", {"version": "v7"}, {"valid": True}, status=result_status, requested_by=5, call_id="v5",
                       error="RuntimeError: validator unavailable" if failed else None), parent_index=4),
             llm(7, text=answer, messages=shown, parent=4),
             llm(8, text=f"The worker said: {answer}", parent=1)]
    return record(*steps, task="Validate v7.")


def test_a_worker_answering_with_the_outcome_of_a_tool_that_failed_is_the_models_claim():
    made_up = _worker_run("error", "VALIDATED: schema v7 matches the contract.")
    assert _found(made_up, "action_not_taken")[0] == [(7, "model")], _found(made_up, "action_not_taken")[1]
    assert _found(made_up, "tool_error_ignored")[0] == [], _found(made_up, "tool_error_ignored")[1]  # the claim explains it
    honest = _worker_run("error", "COULD NOT RUN: the validator is unavailable.")
    assert _found(honest, "action_not_taken")[0] == [], _found(honest, "action_not_taken")[1]
    ran = _worker_run("ok", "VALIDATED: schema v7 matches the contract.")
    assert _found(ran, "action_not_taken")[0] == [], _found(ran, "action_not_taken")[1]


BILLING = "You are the billing agent. Collect what each account owes with collect_payment, net of any open adjustment."
CHARGES = {"account_id": "AC-7710", "items": [{"charge_id": "CH-881", "amount": 120.0, "currency": "EUR"},
                                              {"adjustment_id": "ADJ-12", "amount": -20.0, "applies_to": "CH-881", "status": "open"}]}


def test_a_charge_collected_gross_past_an_open_credit_against_it_is_input_ignored():
    def collected(amount, charges=CHARGES):
        return _run(BILLING, [("list_charges", {"account_id": "AC-7710"}, charges),
                              ("collect_payment", {"charge_id": "CH-881", "amount": amount}, {"status": "collected"})],
                    "Collected.", offered=("list_charges", "collect_payment"))
    assert _found(collected(120.0), "input_ignored")[0] == [(3, "model")], _found(collected(120.0), "input_ignored")[1]
    assert _found(collected(100.0), "input_ignored")[0] == [], _found(collected(100.0), "input_ignored")[1]
    used = {"account_id": "AC-7710", "items": [CHARGES["items"][0], dict(CHARGES["items"][1], status="applied")]}
    assert _found(collected(120.0, used), "input_ignored")[0] == [], _found(collected(120.0, used), "input_ignored")[1]


def test_a_question_about_a_record_answered_with_its_state_and_no_lookup_is_missing_evidence():
    ask = "Has shipment SH-40921 been delivered?"
    tools = ("track_shipment", "list_shipments")
    guessed = _run("You answer questions about shipments.", [], "Yes - SH-40921 was delivered on 2026-11-28.", offered=tools, task=ask)
    assert _found(guessed, "missing_evidence")[0] == [(1, "model")], _found(guessed, "missing_evidence")[1]
    looked = _run("You answer questions about shipments.", [("track_shipment", {"shipment_id": "SH-40921"},
                                                            {"shipment_id": "SH-40921", "status": "delivered"})],
                  "Yes - SH-40921 was delivered on 2026-11-28.", offered=tools, task=ask)
    assert _found(looked, "missing_evidence")[0] == [], _found(looked, "missing_evidence")[1]
    no_tools = _run("You answer questions about shipments.", [], "Yes - SH-40921 was delivered on 2026-11-28.", task=ask)
    assert _found(no_tools, "missing_evidence")[0] == [], _found(no_tools, "missing_evidence")[1]
    unsure = _run("You answer questions about shipments.", [], "I can't say whether SH-40921 was delivered.", offered=tools, task=ask)
    assert _found(unsure, "missing_evidence")[0] == [], _found(unsure, "missing_evidence")[1]


def test_a_tool_answering_with_old_data_where_the_instructions_ask_for_the_current_is_a_tool_result_stale():
    def quoted(updated):
        return _run("Today is 2026-12-04. Quote customers the current price from get_price.",
                    [("get_price", {"sku": "A-1"}, {"sku": "A-1", "price": 19.9, "updated": updated})], "A-1 is 19.90.",
                    offered=("get_price",), task="What does A-1 cost?")
    assert _found(quoted("2026-06-01"), "tool_result_stale")[0] == [(2, "tool")], _found(quoted("2026-06-01"), "tool_result_stale")[1]
    assert _found(quoted("2026-12-03"), "tool_result_stale")[0] == [], _found(quoted("2026-12-03"), "tool_result_stale")[1]
    plain = _run("Today is 2026-12-04. Quote customers the price from get_price.",
                 [("get_price", {"sku": "A-1"}, {"sku": "A-1", "price": 19.9, "updated": "2026-06-01"})], "A-1 is 19.90.",
                 offered=("get_price",), task="What does A-1 cost?")
    assert _found(plain, "tool_result_stale")[0] == [], _found(plain, "tool_result_stale")[1]
    # the question asks for now; a page served from a cache fetched months ago (any tool), not a record's own dates
    def page(fetched, task="What is the exchange's listed fee today?"):
        return _run("Today is 2026-12-04. You answer from web pages.",
                    [("open_url", {"url": "https://fees.example"}, {"status": 200, "cache": "HIT", "fetched": fetched})],
                    "The fee is 0.25%.", offered=("open_url",), task=task)
    assert _found(page("2026-06-02T08:40:11Z"), "tool_result_stale")[0] == [(2, "tool")], _found(page("2026-06-02T08:40:11Z"), "tool_result_stale")[1]
    assert _found(page("2026-12-04T10:15:02Z"), "tool_result_stale")[0] == []
    assert _found(page("2026-06-02T08:40:11Z", task="What was the listed fee in June?"), "tool_result_stale")[0] == []
    order = _run("Today is 2026-12-04. You answer about orders.", [("get_order", {"id": "#12"}, {"id": "#12", "created_at": "2026-06-02"})],
                 "Order #12 is shipped.", offered=("get_order",), task="Where is my order #12 today?")
    assert _found(order, "tool_result_stale")[0] == [], _found(order, "tool_result_stale")[1]


PHARMACY = ("You are the pharmacy's order assistant: look orders up with get_order and reorder with reorder. Hand the chat "
            "to a pharmacist (call_pharmacist) if the customer mentions a reaction (rash, swelling, breathing trouble).")
PHARMACY_TOOLS = ("get_order", "reorder", "call_pharmacist")


def test_what_the_user_reported_that_the_instructions_route_to_a_tool_handled_otherwise_is_a_policy_violated():
    order = ("get_order", {"order_id": "RX-5521"}, {"order_id": "RX-5521", "item": "amoxicillin 500 mg", "status": "delivered"})

    def handled(said: str, tool):
        return _run(PHARMACY, [order, tool], "Done.", offered=PHARMACY_TOOLS, task=said)
    reaction = "Please reorder RX-5521 - though I got a rash and some swelling after the last box."
    reordered = handled(reaction, ("reorder", {"order_id": "RX-5521"}, {"status": "ordered"}))
    assert _found(reordered, "policy_violated")[0] == [(3, "model")], _found(reordered, "policy_violated")[1]
    routed = handled(reaction, ("call_pharmacist", {"summary": "rash and swelling after amoxicillin"}, {"status": "queued"}))
    assert _found(routed, "policy_violated")[0] == [], _found(routed, "policy_violated")[1]
    plain = handled("Please reorder RX-5521.", ("reorder", {"order_id": "RX-5521"}, {"status": "ordered"}))
    assert _found(plain, "policy_violated")[0] == [], _found(plain, "policy_violated")[1]


def test_an_answer_giving_one_of_two_namesakes_figures_without_asking_is_clarification_skipped():
    docs = [{"id": "K-1", "text": "Orion X1 (the laptop) comes with a warranty of 24 months from delivery."},
            {"id": "K-2", "text": "Orion Buds (the earphones) come with a warranty of 12 months from delivery."}]

    def answered(ask, answer):
        return _run("You answer product questions from search_kb.", [("search_kb", {"query": "Orion warranty"}, docs)], answer,
                    offered=("search_kb",), task=ask)
    picked = answered("How long is the warranty on the Orion?", "The Orion has a warranty of 24 months [K-1].")
    assert _found(picked, "clarification_skipped")[0] == [(3, "model")], _found(picked, "clarification_skipped")[1]
    for ask, answer in (("How long is the warranty on the Orion?", "Orion X1: 24 months; Orion Buds: 12 months. Which one is yours?"),
                        ("How long is the warranty on the Orion X1?", "The Orion X1 has a warranty of 24 months [K-1]."),
                        ("How long is the warranty on the Orion?", "Orion X1 has 24 months, Orion Buds 12 months.")):
        fine = answered(ask, answer)
        assert _found(fine, "clarification_skipped")[0] == [], (answer, _found(fine, "clarification_skipped")[1])


def test_a_figure_passed_on_without_its_passages_caveat_is_information_withheld():
    def told(passage, answer):
        return _run("You brief the board from find_figures.", [("find_figures", {"query": "Q4 revenue"}, [{"id": "F-9", "text": passage}])],
                    answer, offered=("find_figures",), task="What was Q4 revenue?")
    dropped = told("PRELIMINARY, not final: Q4 revenue came to 2.4 million EUR.", "Q4 revenue was 2.4 million EUR [F-9].")
    assert _found(dropped, "information_withheld")[0] == [(3, "model")], _found(dropped, "information_withheld")[1]
    kept = told("PRELIMINARY, not final: Q4 revenue came to 2.4 million EUR.", "Preliminary Q4 revenue: 2.4 million EUR [F-9].")
    assert _found(kept, "information_withheld")[0] == [], _found(kept, "information_withheld")[1]
    final = told("Audited: Q4 revenue came to 2.4 million EUR.", "Q4 revenue was 2.4 million EUR [F-9].")
    assert _found(final, "information_withheld")[0] == [], _found(final, "information_withheld")[1]


def test_a_version_stated_after_an_empty_search_is_an_answer_without_evidence():
    def answered(passages, answer):
        return _run("You answer from search_docs.", [("search_docs", {"query": "Orion SDK 5.4 driver"}, {"query": "x", "passages": passages})],
                    answer, offered=("search_docs",), task="Which driver version do I need for Orion SDK 5.4?")
    made_up = answered([], "You need driver 3.0 or later.")
    assert _found(made_up, "answer_without_evidence")[0] == [(3, "product")], _found(made_up, "answer_without_evidence")[1]
    honest = answered([], "The documents do not say which driver 5.4 needs.")
    assert _found(honest, "answer_without_evidence")[0] == [], _found(honest, "answer_without_evidence")[1]
    found = answered([{"id": "P-1", "text": "Orion SDK 5.4 needs driver 3.0 or later."}], "You need driver 3.0 or later [P-1].")
    assert [f for f in detect(found) if f.severity != "info"] == [], format_findings(detect(found))
