"""An accounts-payable agent's rules and records (heldout10's misses): a payment past the money limit the
instructions write, a payment the instructions allow only on one answer of a check made on another, a payment to
another vendor than the invoice names, a USD invoice paid as the same figure in EUR - each beside the legitimate
run that looks like it (exactly the limit, a match, a renamed vendor paid by the invoice's id, a converted amount).
Hand-built runs."""

from __future__ import annotations

import json

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, llm, record, text_message, tool, tool_loop

RULES = ("You are OurCo's accounts-payable agent. Today is Friday 2026-12-04. Pay vendor invoices from OurCo's EUR account:\n"
         "1. Pay an invoice only when match_po answers 'matched' for its purchase order; otherwise flag it for review.\n"
         "2. Pay in EUR: convert another currency with today's fx_rate.\n"
         "3. You may schedule a payment of up to EUR 10,000.00; above that, flag it for the controller's approval.")
INVOICE = {"invoice_id": "BL-7781", "vendor_id": "V-220", "vendor_name": "Brightline Logistics", "po_number": "PO-5601",
           "currency": "EUR", "amount": 9000.0, "due": "2026-12-18"}


def _run(*turns, ask: str = "Pay invoice BL-7781."):
    shown = [text_message("system", RULES), text_message("user", ask)]
    steps = tool_loop(shown, turns, "Done.")
    return record(*steps, task=ask)


def _paid(invoice=INVOICE, match="matched", **payment):
    arguments = {"vendor_id": invoice["vendor_id"], "invoice_id": invoice["invoice_id"], "amount": invoice["amount"],
                 "currency": invoice["currency"], "pay_on": invoice["due"], **payment}
    return _run(("get_invoice", {"invoice_id": invoice["invoice_id"]}, invoice),
                ("match_po", {"invoice_id": invoice["invoice_id"], "po_number": invoice["po_number"]}, {"result": match}),
                ("schedule_payment", arguments, dict(arguments, payment_id="P-1", status="scheduled")))


def _found(run, kind):
    return [(f.index, f.layer) for f in detect(run) if f.kind == kind], format_findings(detect(run))


def test_a_payment_past_the_money_limit_the_instructions_write_is_a_policy_violated():
    over = _paid(dict(INVOICE, amount=14800.0))
    assert _found(over, "policy_violated")[0] == [(5, "model")], _found(over, "policy_violated")[1]
    for run in (_paid(dict(INVOICE, amount=10000.0)), _paid(dict(INVOICE, amount=14800.0, currency="NOK"))):
        assert _found(run, "policy_violated")[0] == [], _found(run, "policy_violated")[1]


def test_a_payment_after_the_gating_check_answered_otherwise_is_a_policy_violated():
    found, report = _found(_paid(match="partial"), "policy_violated")
    assert found == [(5, "model")], report
    assert "partial" in report
    assert _found(_paid(match="matched"), "policy_violated")[0] == []


def test_a_payment_to_another_vendor_than_the_invoice_names_is_a_wrong_target():
    found, report = _found(_paid(vendor_id="V-207"), "wrong_target")
    assert found == [(5, "model")], report
    # the vendor renamed since: paid by the invoice's own id, whatever its name is now
    renamed = _paid(vendor_name="Brightline Freight GmbH")
    assert _found(renamed, "wrong_target")[0] == [], _found(renamed, "wrong_target")[1]
    # an update sets a new value on the thing it names on purpose
    moved = _run(("get_invoice", {"invoice_id": "BL-7781"}, INVOICE),
                 ("update_invoice", {"invoice_id": "BL-7781", "vendor_id": "V-207"}, {"status": "updated"}),
                 ask="BL-7781 belongs to V-207: fix it.")
    assert _found(moved, "wrong_target")[0] == [], _found(moved, "wrong_target")[1]


def test_an_amount_paid_under_another_currency_unconverted_is_a_value_not_converted():
    usd = dict(INVOICE, currency="USD", amount=7250.0)
    found, report = _found(_paid(usd, currency="EUR"), "value_not_converted")
    assert found == [(5, "model")], report
    converted = _paid(usd, currency="EUR", amount=6691.75)
    assert _found(converted, "value_not_converted")[0] == [], _found(converted, "value_not_converted")[1]


TIMEOUT = "TimeoutError: payment gateway timed out after 30 s; the payment may or may not have been created - check list_payments before you retry"
PAYMENT = {"vendor_id": "V-220", "invoice_id": "BL-7781", "amount": 9000.0, "currency": "EUR", "pay_on": "2026-12-18"}


def _after_failure(error: str, *then, answer: str):
    shown = [text_message("system", RULES), text_message("user", "Pay invoice BL-7781.")]
    steps = [llm(1, calls=[("schedule_payment", PAYMENT, "c1")], messages=shown),
             tool(2, "schedule_payment", PAYMENT, None, status="error", error=error, requested_by=1, call_id="c1")]
    for name, arguments, result in then:
        index = len(steps) + 1
        steps += [llm(index, calls=[(name, arguments, f"c{index}")], messages=shown),
                  tool(index + 1, name, arguments, result, requested_by=index, call_id=f"c{index}")]
    steps.append(llm(len(steps) + 1, text=answer, messages=shown))
    offered = definitions_attr(*((n, {"type": "object"}) for n in ("schedule_payment", "list_payments")))
    return record(*steps, task="Pay invoice BL-7781.", attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"})


def test_a_failed_payment_answered_as_scheduled_is_the_models_action_not_taken():
    rejected = _after_failure("PermissionError: rejected: the vendor's bank account is on hold; do not pay it",
                              answer="BL-7781: scheduled EUR 9,000.00 to V-220 on 2026-12-18")
    assert _found(rejected, "action_not_taken")[0] == [(3, "model")], _found(rejected, "action_not_taken")[1]
    # the tool's failure is the claim's to answer for, not a second cause
    assert "tool_error_ignored" not in {f.kind for f in detect(rejected)}, format_findings(detect(rejected))
    # a read after the timeout shows the payment made after all
    made = _after_failure(TIMEOUT, ("list_payments", {"vendor_id": "V-220"}, {"payments": [dict(PAYMENT, payment_id="P-1", status="scheduled")]}),
                          answer="BL-7781: scheduled EUR 9,000.00 to V-220 (P-1; the gateway timed out, but the payment was made)")
    assert _found(made, "action_not_taken")[0] == [], _found(made, "action_not_taken")[1]


def test_a_retry_without_the_check_the_error_asked_for_is_an_input_ignored():
    blind = _after_failure(TIMEOUT, ("schedule_payment", PAYMENT, dict(PAYMENT, payment_id="P-2", status="scheduled")),
                           answer="Scheduled (P-2).")
    assert _found(blind, "input_ignored")[0] == [(3, "model")], _found(blind, "input_ignored")[1]
    checked = _after_failure(TIMEOUT, ("list_payments", {"vendor_id": "V-220"}, {"payments": []}),
                             ("schedule_payment", PAYMENT, dict(PAYMENT, payment_id="P-2", status="scheduled")), answer="Scheduled (P-2).")
    assert _found(checked, "input_ignored")[0] == [], _found(checked, "input_ignored")[1]


def test_a_payment_with_no_call_of_the_check_the_instructions_ask_first_is_missing_evidence():
    rules = RULES + "\n4. Check list_payments first: never pay an invoice twice."
    def paying(*turns):
        run = _run(*turns)
        for step in run.steps:
            if step["type"] == "llm":
                step["input"] = step["input"].replace(json.dumps(RULES)[1:-1], json.dumps(rules)[1:-1])
        offered = definitions_attr(*((n, {"type": "object"}) for n in ("get_invoice", "list_payments", "schedule_payment")))
        return record(*run.steps, task=run.run["task"], attributes={s["span_id"]: offered for s in run.steps if s["type"] == "llm"})
    payment = ("schedule_payment", {"vendor_id": "V-220", "invoice_id": "BL-7781", "amount": 9000.0, "currency": "EUR"}, {"status": "scheduled"})
    unchecked = paying(("get_invoice", {"invoice_id": "BL-7781"}, INVOICE), payment)
    assert _found(unchecked, "missing_evidence")[0] == [(3, "model")], _found(unchecked, "missing_evidence")[1]
    checked = paying(("get_invoice", {"invoice_id": "BL-7781"}, INVOICE), ("list_payments", {"vendor_id": "V-220"}, {"payments": []}), payment)
    assert _found(checked, "missing_evidence")[0] == [], _found(checked, "missing_evidence")[1]
    # a read of another kind needs no such check
    looked = paying(("get_invoice", {"invoice_id": "BL-7781"}, INVOICE), ("get_invoice", {"invoice_id": "BL-7782"}, INVOICE))
    assert _found(looked, "missing_evidence")[0] == [], _found(looked, "missing_evidence")[1]


def test_a_day_first_date_of_a_result_paid_month_first_is_a_task_ignored():
    german = dict(INVOICE, due="04.01.2027", terms="Zahlbar bis 04.01.2027 ohne Abzug")
    swapped = _paid(german, pay_on="2027-04-01")
    assert _found(swapped, "task_ignored")[0] == [(5, "model")], _found(swapped, "task_ignored")[1]
    assert _found(_paid(german, pay_on="2027-01-04"), "task_ignored")[0] == []
    # a date no result or request gave, day and month alike or not, is not judged here
    assert _found(_paid(dict(INVOICE, due="2026-12-18"), pay_on="2026-12-18"), "task_ignored")[0] == []


def test_an_answer_ending_with_one_of_the_requested_invoices_never_paid_nor_named_is_a_task_ignored():
    ask = "Pay Kestrel's approved invoices KO-4501, KO-4502 and KO-4503."
    def paid(*ids, answer):
        turns = [("schedule_payment", {"vendor_id": "V-330", "invoice_id": i, "amount": 100.0, "currency": "EUR"}, {"status": "scheduled"})
                 for i in ids]
        run = _run(*turns, ask=ask)
        run.steps[-1]["output"] = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])
        return run
    short = paid("KO-4501", "KO-4502", answer="All three invoices are paid: KO-4501 (P-1), KO-4502 (P-2).")
    assert _found(short, "task_ignored")[0] == [(5, "model")], _found(short, "task_ignored")[1]
    for run in (paid("KO-4501", "KO-4502", "KO-4503", answer="Paid KO-4501, KO-4502 and KO-4503."),
                paid("KO-4501", "KO-4502", answer="Paid KO-4501 and KO-4502; KO-4503 was already paid on 1 December.")):
        assert _found(run, "task_ignored")[0] == [], _found(run, "task_ignored")[1]
