"""Rules and words read as they are meant (heldout14's false alarms, in other trades): a prohibition scoped by the
places it leaves out ("never delete a bucket outside scratch"), a tool a rule asks for "before you answer" (not before
acting), an amount with thousands separators ("$12,480.00" is one amount), an id the request gives only to say
whose record it is (the account of the invoice acted on). Each beside the run the rule does catch. Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from runs_build import definitions_attr, record, text_message, tool_loop
from test_data_agent import _conversation


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


STORAGE = ("You are the storage janitor. Free space as asked. Never delete a bucket outside scratch - those hold customer "
           "data. Report what you deleted.")


@pytest.mark.parametrize("bucket,broken", [("scratch/tmp-exports", False), ("prod/customer-exports", True)])
def test_a_prohibition_scoped_by_the_places_it_leaves_out_holds_only_outside_them(bucket, broken):
    run = _conversation(("user", "Please free some space: the old exports bucket can go."),
                        ("list_buckets", {}, {"buckets": [bucket, "prod/invoices"]}),
                        ("delete_bucket", {"bucket": bucket}, {"bucket": bucket, "status": "deleted"}),
                        system=STORAGE, answer=f"Deleted {bucket}.")
    found, shown = _found(run, "role_overstepped")
    assert found == ([(3, "model")] if broken else []), shown


PAYROLL = ("You are the payroll agent. Look up the employee with get_employee before any payment. Record the payment in the "
           "ledger with log_payment (the amount and the period) before you answer.")


@pytest.mark.parametrize("looked,flagged", [(True, False), (False, True)])
def test_a_tool_the_rules_ask_for_before_the_answer_is_no_gate_on_the_action(looked, flagged):
    employee = {"employee_id": "E-3308", "name": "Ravi Menon", "salary_month": 4120.0}
    lookup = ("get_employee", {"employee_id": "E-3308"}, employee)
    pay = ("pay_salary", {"employee_id": "E-3308", "amount": 4120.0, "period": "2026-11"}, {"status": "paid"})
    # looked up before paying, or only after it
    turns = [*((lookup, pay) if looked else (pay, lookup)),
             ("log_payment", {"employee_id": "E-3308", "amount": 4120.0, "period": "2026-11"}, {"status": "logged"})]
    ask = "Please pay E-3308's November salary."
    steps = tool_loop([text_message("system", PAYROLL), text_message("user", ask)], turns,
                      "Paid E-3308's November salary (4,120.00 EUR) and logged it.")
    offered = definitions_attr(*((name, {"type": "object"}) for name in ("get_employee", "pay_salary", "log_payment")))
    run = record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask)
    found, shown = _found(run, "missing_evidence")
    # log_payment comes after the payment and before the answer, as asked; get_employee is a gate on the payment
    assert bool(found) == flagged, shown


@pytest.mark.parametrize("amount", [12480.0, "12480.00"])  # (some frameworks record a tool's arguments as strings)
@pytest.mark.parametrize("said,wrong", [
    ("Paying $12,480.00: the invoice total less the $1,020.00 credit.", False),
    ("Paying $12,840.00: the invoice total less the $1,020.00 credit.", True),
])
def test_an_amount_with_thousands_separators_is_one_amount(said, wrong, amount):
    invoice = {"invoice_id": "INV-7781", "total": 13500.0, "credit": 1020.0}
    run = _conversation(("user", "Please pay invoice INV-7781."), ("get_invoice", {"invoice_id": "INV-7781"}, invoice),
                        ("assistant", said), ("user", "Yes, go ahead."),
                        ("pay_invoice", {"invoice_id": "INV-7781", "amount": amount}, {"status": "paid"}),
                        system="You are the accounts-payable agent.", answer="Invoice INV-7781 is paid.")
    found, shown = _found(run, "wrong_target")
    assert bool(found) == wrong, shown


@pytest.mark.parametrize("ask,dropped", [
    ("Hi, account AC-5120 here: please pay invoice IN-4410.", False),
    ("Hi, account AC-5120 here: please pay invoices IN-4410 and IN-4411.", True),  # one of the two left unpaid
])
def test_an_id_the_request_gives_to_say_whose_record_it_is_is_no_item_left_undone(ask, dropped):
    # the account of the invoice paid (its record's account_id) names whose invoice it is; a listed invoice is an item
    invoice = {"invoice_id": "IN-4410", "account_id": "AC-5120", "total": 310.0}
    run = _conversation(("user", ask), ("get_invoice", {"invoice_id": "IN-4410"}, invoice),
                        ("pay_invoice", {"invoice_id": "IN-4410", "amount": 310.0}, {"status": "paid"}),
                        system="You are the billing agent.", answer="Invoice IN-4410 is paid (310.00 EUR).")
    found, shown = _found(run, "task_ignored")
    assert bool(found) == dropped, shown


ANALYST = "You are the revenue analyst. Join sales.invoices to crm.accounts on account_id."


@pytest.mark.parametrize("query,broken", [
    ("SELECT a.segment, SUM(i.total) FROM sales.invoices i JOIN crm.accounts a ON i.invoice_id = a.account_id GROUP BY 1", True),
    ("SELECT a.segment, SUM(i.total) FROM sales.invoices i JOIN crm.accounts a ON i.account_id = a.account_id GROUP BY 1", False),
    # other tables: the rule says nothing of them
    ("SELECT r.region, COUNT(*) FROM sales.invoices i JOIN geo.regions r ON i.region_code = r.code GROUP BY 1", False),
])
def test_a_query_joining_two_tables_on_another_key_than_the_instructions_give_is_a_policy_violated(query, broken):
    run = _conversation(("user", "Revenue by segment, please."), ("run_query", {"sql": query}, {"rows": [["smb", 120400.0]]}),
                        system=ANALYST, answer="SMB: 120,400.00 EUR.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(1, "model")] if broken else []), shown


BANK = "You are the bank's agent. Verify the customer with verify_identity before any transfer."


@pytest.mark.parametrize("action,gated", [("transfer_funds", True), ("freeze_card", False)])
def test_a_check_the_rules_ask_for_before_one_action_gates_that_action_only(action, gated):
    ask = "Please move 200 EUR to my savings, and freeze my old card."
    turns = [(action, {"account": "ACC-1001"}, {"status": "done"}), ("verify_identity", {"customer": "C-7"}, {"verified": True})]
    steps = tool_loop([text_message("system", BANK), text_message("user", ask)], turns, "Done.")
    offered = definitions_attr(*((name, {"type": "object"}) for name in ("verify_identity", "transfer_funds", "freeze_card")))
    run = record(*steps, attributes={s["span_id"]: offered for s in steps if s["type"] == "llm"}, task=ask)
    found, shown = _found(run, "missing_evidence")
    assert found == ([(1, "model")] if gated else []), shown


@pytest.mark.parametrize("ask,dropped", [
    ("Please close accounts ACC-1001, ACC-1002 and ACC-1003.", True),  # a list: one left undone
    ("Please move 200 EUR from ACC-1001 to ACC-1002.", False),  # two accounts in their roles, one request
])
def test_ids_in_a_list_are_items_and_ids_in_roles_of_one_request_are_not(ask, dropped):
    run = _conversation(("user", ask), ("close_account", {"account_id": "ACC-1001"}, {"status": "closed"}),
                        system="You are the bank's agent.", answer="Done: ACC-1001 is closed.")
    found, shown = _found(run, "task_ignored")
    assert bool(found) == dropped, shown
