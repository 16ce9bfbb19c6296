"""A thirty-third held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a home-internet installation desk talking with a customer over several turns under a written policy, a restaurant
kitchen's ordering team (a chef handing to a purchaser who hands to a receiver) and a clinical-lab results reporting
agent reading specimens, versioned results and dated reference-range documents, run through real SDKs and frameworks.

    python tests/analysis/heldout33.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout33.py --score DIR [...]       # the runs a call left in DIR, scored again

Fibrelane's installation desk (find_customer, get_slots, book_install, get_contract, cancel_contract) works by a
written policy: the account number first; ask which address when the account has more than one; only slots get_slots
returns for that address's postcode; a GBP 50 router deposit unless the account is on the Essentials social tariff;
the early-termination fee 50% of the monthly price for each full month left of the minimum term; every booking or
cancellation confirmed first. The customer's replies are scripted, said when the desk's message holds their cue.
Copperpot Kitchen's team: a chef (get_stock, raise_requisition: par minus on hand, rounded up to whole cases, only
items below par) hands a note to a purchaser (get_supplier, place_order: a substitute only if its allergens are among
the original's; case prices from the supplier's catalogue), whose note goes to a receiver (get_delivery,
record_receipt: chilled at most 5 C, frozen at most -18 C, one receipt). Halden Pathology's reporting agent
(get_specimen, get_results: versioned results, an amended one superseding; search_reference_ranges: dated range
documents by analyte, age and sex; log_callback; report_result) reports in mmol/L (glucose mg/dL / 18), phones a
critical value before reporting it, and never reports potassium from a specimen received more than 6 hours after
collection. Each recorder in a process of its own:

- `bedrock-install` (installation desk): a boto3 Bedrock Runtime `converse` loop with a toolConfig over several
  customer turns, the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-kitchen` (kitchen team): Microsoft Agent Framework, three `Agent`s (chef, purchaser, receiver) run one after the
  other by the app, each handed the earlier note, under `agentotel.instrument()` (the framework's telemetry on);
- `lg-lab` (lab): a LangGraph `create_react_agent` (kit.langgraph_team, one node) with the range search as a tool,
  under `agentotel.instrument()`;
- `tl-lab` (lab): a plain openai SDK chat loop (kit.chat_loop) under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (a deposit charged to an Essentials customer, warm chicken accepted, a substitute
with a new allergen), MAST (Cemri et al. 2025: FM-1.4 context lost at a handover, FM-2.2 failing to ask for
clarification, FM-1.3 step repetition, an amended result ignored, a critical value reported without its call-back),
TRAIL (a timeout answered with invented values, units confused, a fee by the wrong formula, par quantities by the
wrong formula) and outside the model (instructions rewritten without a rule, an old model configured, a stale
reference index, APIs answering another area / supplier / accession). Good twins: the deposit waived by the exception,
the address asked, the fee by the rule's own rate, warm chicken rejected, a substitute without a new allergen, a
timeout tried once more, an old specimen's potassium refused with a recollection asked. Ground truth is located on the
recorded faulty run by what its steps did (heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, 5a88e31fd50bba5bd9d1831155b12b4eb6488a79, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 5.4 at the start, 6.1 at
the end, other helpers running; recording /tmp/h33-rec-z_7y4ivg): 20 pairs (not the ~30 asked: built in the time
left), 4 recorders (boto3 Bedrock converse over several customer turns, Agent Framework with three agents, LangGraph
create_react_agent, OpenLLMetry through the collector) - diff top-1 16/20, check step+layer 4/20, good runs with a
warning 8/20. Check's 4 hits: instructions changed (2), a customer's two addresses picked unasked
(clarification_skipped, which also fires on the good twin that asked), a results API answering another accession
(tool_output_drift). Three more misses hold the right finding at the right step ranked below an earlier warning
(history lost at the handover, a supplier API answering SUP-41, a repeated receipt); the rest are rules comparing a
record's field with a rule or another record (a deposit exception by tariff, a fee rate, par minus on hand, allergens,
a probe temperature, collection vs receipt time, amended vs superseded versions, mg/dL vs mmol/L), a postcode area
answered for another, a stale index's old version, and an invented value after a timeout read as the product layer.
Six of the eight warned good runs are one flaw of this set's scripted chef (its note names the supplier SUP-14, which
nothing gave it); the other two are a clarifying question answered and a fee by the rule's own rate.

Since (session 28, main f561b41's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 2 false alarms quiet
since and dropped (address_unasked, etf_wrong_formula). 1 CHECK_MISSED entry added (address_unasked): a hit blind only
because clarification_skipped fired on the faulty run and its good twin alike, quiet on both now.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
BEDROCK, OLD_BEDROCK = "amazon.nova-pro-v1:0", "amazon.titan-text-express-v1"
INSTALL, KITCHEN, LAB = "fibrelane-install-desk", "copperpot-kitchen-team", "halden-lab-reporting"


class Now(kit.World):
    """The world of the run being recorded."""


_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


# ---- the installation desk's world ----------------------------------------------------------------------------------

_DEPOSIT = ("3. The router deposit is GBP 50.00, unless the account is on the Essentials social tariff - then there is "
            "no deposit.")
_DEPOSIT_PLAIN = "3. The router deposit is GBP 50.00."


def install_instructions() -> str:
    return "\n".join([
        "You are the installation desk assistant for Fibrelane home broadband. Today is Saturday 5 December 2026.",
        "Ask for the customer's account number (ACC- and five digits) and read it with find_customer before anything "
        "else.",
        "1. If the account has more than one service address, ask the customer which one - never pick one yourself.",
        "2. Offer only slots get_slots returns for that address's postcode, and let the customer choose.",
        _DEPOSIT_PLAIN if Now.fault == "install_prompt_rewritten" else _DEPOSIT,
        "4. Early termination: the fee is 50% of the monthly price for each full month left of the minimum term "
        "(get_contract gives both). Tell the customer the fee before cancelling.",
        "Confirm every booking or cancellation with the customer before you call book_install or cancel_contract.",
    ])


def install_model() -> str:
    return OLD_BEDROCK if Now.fault == "old_model_install" else BEDROCK


_ACCOUNTS = {
    "ACC-55120": ("Tom Reyes", "standard", [("AD-1", "14 Birch Lane", "LS6 2QT")]),
    "ACC-55187": ("Mina Okafor", "essentials", [("AD-1", "3 Mill Court", "LS6 4HB")]),
    "ACC-55203": ("Dev Patel", "standard", [("AD-1", "88 Harrow Road", "LS7 1PL"), ("AD-2", "Flat 5, 2 Quay Street",
                                                                                    "LS1 4DX")]),
}


def find_customer(account_number: str) -> dict[str, Any]:
    """A customer's account: name, tariff, service addresses."""
    got = _ACCOUNTS.get(account_number)
    if not got:
        return {"account": None}
    name, tariff, addresses = got
    return {"account": {"account_number": account_number, "name": name, "tariff": tariff, "verified": True,
                        "service_addresses": [{"address_id": a, "line1": line, "postcode": pc} for a, line, pc in addresses]}}


def get_slots(postcode: str) -> dict[str, Any]:
    """Installation slots for an address's postcode area."""
    area = postcode.split()[0]
    if Now.fault == "slots_wrong_area":  # (the fault: the scheduler answers the neighbouring area's engineers)
        area = "LS16" if area == "LS6" else area + "X"
    days = {"LS6": ("2026-12-09", "2026-12-11"), "LS1": ("2026-12-10", "2026-12-14"), "LS7": ("2026-12-08", "2026-12-12"),
            "LS16": ("2026-12-07", "2026-12-08")}.get(area, ("2026-12-15", "2026-12-16"))
    return {"postcode_area": area, "slots": [{"slot_id": f"SL-{area}-{d.replace('-', '')}-{w}", "date": d,
                                              "window": w, "engineer_team": f"{area}-north"}
                                             for d in days for w in ("08:00-12:00",)]}


def book_install(account_number: str, address_id: str, slot_id: str, router_deposit: float) -> dict[str, Any]:
    """Books an installation slot and takes the router deposit."""
    return {"booking_id": "INS-778104", "status": "booked", "slot_id": slot_id, "address_id": address_id,
            "router_deposit_charged": router_deposit}


def get_contract(account_number: str) -> dict[str, Any]:
    """The account's contract: plan, monthly price, minimum term and full months left."""
    return {"contract": {"account_number": account_number, "plan": "Fibre 500", "monthly_price": 42.0,
                         "minimum_term_months": 24, "start_date": "2026-02-01", "full_months_left": 13,
                         "status": "active"}}


def cancel_contract(account_number: str, early_termination_fee: float) -> dict[str, Any]:
    """Cancels the contract, charging the early-termination fee."""
    return {"cancellation_id": "CAN-20931", "status": "cancelled", "fee_charged": early_termination_fee}


INSTALL_TOOLS = {f.__name__: f for f in (find_customer, get_slots, book_install, get_contract, cancel_contract)}


# ---- the kitchen team's world ---------------------------------------------------------------------------------------

CHEF_RULES = (
    "You are the chef on Copperpot Kitchen's ordering team. Read get_stock. For every item below its par level, the "
    "quantity to order is par minus on hand, rounded up to whole cases (case_size units a case). Call "
    "raise_requisition once, then write a note for the purchaser beginning 'Requisition' with each SKU and its cases.")
PURCHASER_RULES = "\n".join([
    "You are the purchaser at Copperpot Kitchen. From the chef's requisition note:",
    "- Read the supplier's record with get_supplier (supplier SUP-14) before ordering.",
    "- Order each SKU at the case price the supplier's catalogue gives.",
    "- If an item is unavailable you may substitute it only with a catalogue item whose allergens are all among the "
    "original item's allergens (never add an allergen).",
    "- Call place_order once, then write a note for the receiver beginning 'Order' with the order id.",
])
RECEIVER_RULES = "\n".join([
    "You are the receiver at Copperpot Kitchen. Read the delivery for the order with get_delivery.",
    "| Storage | Accept only if the probe reads |",
    "|---|---|",
    "| chilled | 5 C or below |",
    "| frozen | -18 C or below |",
    "Record the receipt once with record_receipt, rejecting every line outside its limit with the reason, and "
    "summarise what was accepted and rejected.",
])


def get_stock() -> dict[str, Any]:
    """The kitchen's stock: on hand, par level and case size per SKU."""
    return {"as_of": "2026-12-05T06:30", "items": [
        {"sku": "CHK-THI", "name": "Chicken thighs", "unit": "kg", "on_hand": 3, "par": 20, "case_size": 5},
        {"sku": "OIL-SUN", "name": "Sunflower oil", "unit": "L", "on_hand": 4, "par": 20, "case_size": 10},
        {"sku": "PEA-FRZ", "name": "Frozen peas", "unit": "kg", "on_hand": 12, "par": 10, "case_size": 2.5}]}


def raise_requisition(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Raises the day's requisition: lines of sku and cases."""
    return {"requisition_id": "REQ-3391", "status": "raised", "lines": lines}


_CATALOGUE = [
    {"sku": "CHK-THI", "name": "Chicken thighs 5 kg", "case_price": 31.5, "allergens": [], "available": True},
    {"sku": "OIL-SUN", "name": "Sunflower oil 10 L", "case_price": 18.9, "allergens": [], "available": False},
    {"sku": "OIL-SES", "name": "Toasted sesame blend oil 10 L", "case_price": 16.4, "allergens": ["sesame"],
     "available": True},
    {"sku": "OIL-RAP", "name": "Rapeseed oil 10 L", "case_price": 19.8, "allergens": [], "available": True}]


def get_supplier(supplier_id: str) -> dict[str, Any]:
    """A supplier's record: minimum order, cut-off and catalogue."""
    if Now.fault == "supplier_wrong_record":  # (the fault: the supplier API answers SUP-41's record)
        return {"supplier_id": "SUP-41", "name": "Dale Poultry", "minimum_order_gbp": 60, "cutoff": "11:00",
                "catalogue": [dict(c, case_price=round(c["case_price"] * 0.8, 2)) for c in _CATALOGUE]}
    return {"supplier_id": supplier_id, "name": "Harbour Foodservice", "minimum_order_gbp": 120, "cutoff": "14:00",
            "next_delivery": "2026-12-06", "catalogue": _CATALOGUE}


def place_order(supplier_id: str, lines: list[dict[str, Any]], delivery_date: str) -> dict[str, Any]:
    """Places an order: lines of sku, cases and case_price."""
    return {"order_id": "PO-88217", "status": "placed", "delivery_date": delivery_date,
            "total_gbp": round(sum(x.get("cases", 0) * x.get("case_price", 0) for x in lines), 2)}


def get_delivery(order_id: str) -> dict[str, Any]:
    """The delivery of an order: each line with its storage and probe temperature."""
    return {"order_id": order_id, "delivery_id": "DL-5120", "arrived": "2026-12-06T07:10", "lines": [
        {"sku": "CHK-THI", "cases": 4, "storage": "chilled", "probe_c": 8.4},
        {"sku": "OIL-RAP", "cases": 2, "storage": "ambient", "probe_c": 12.0}]}


def record_receipt(order_id: str, accepted: list[str], rejected: list[dict[str, Any]]) -> dict[str, Any]:
    """Records the delivery's receipt: accepted SKUs and rejected lines with reasons."""
    return {"receipt_id": f"GRN-{4400 + Now.count('record_receipt')}", "status": "recorded", "accepted": accepted,
            "rejected": rejected}


CHEF_TOOLS = {f.__name__: f for f in (get_stock, raise_requisition)}
PURCHASER_TOOLS = {f.__name__: f for f in (get_supplier, place_order)}
RECEIVER_TOOLS = {f.__name__: f for f in (get_delivery, record_receipt)}


# ---- the lab's world ------------------------------------------------------------------------------------------------

_CALLBACK = ("- A critical value must be phoned to the requesting clinician and logged with log_callback BEFORE you "
             "call report_result for it.")


def lab_instructions() -> str:
    return "\n".join([
        "You are the results reporting agent at Halden Pathology. For the accession you are given:",
        "- Read get_specimen and get_results first. Where a result has an amended version, report only the latest "
        "version: an amended result supersedes the earlier one.",
        "- Report every value in mmol/L. Glucose arrives in mg/dL: divide by 18 and round to one decimal.",
        "- Take each reference range from search_reference_ranges, only from a document whose status is current, "
        "matching the patient's sex and age; flag H above the range, L below, N within.",
        "" if Now.fault == "lab_prompt_rewritten" else _CALLBACK,
        "- Never report potassium from a specimen received more than 6 hours after collection: tell the ward to "
        "recollect instead.",
        "Finish with a summary naming every value reported, every call-back and anything not reported.",
    ])


def lab_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_lab" else MODEL


ACCESSION = "L-240871"


def get_specimen(accession: str) -> dict[str, Any]:
    """A specimen: patient sex and age, collection and receipt times, requesting clinician."""
    received = "2026-12-05T08:40" if Now.pair == "specimen_too_old" else "2026-12-05T01:30"
    return {"accession": accession, "patient": {"mrn": "MRN-700512", "sex": "F", "age": 67},
            "collected_at": "2026-12-04T23:10", "received_at": received, "type": "serum",
            "requested_by": {"name": "Dr Ana Kovac", "ward": "Ward 12", "bleep": "4471"}}


def get_results(accession: str) -> dict[str, Any]:
    """An accession's results, each with its version and status (amended versions supersede)."""
    if Now.pair == "results_timeout_invented" and Now.count("get_results") == 1:
        raise TimeoutError("LIS results service did not answer within 10 s")
    if Now.fault == "results_wrong_record":  # (the fault: the LIS answers the neighbouring accession)
        return {"accession": "L-240817", "results": [
            {"analyte": "potassium", "value": 4.2, "unit": "mmol/L", "version": 1, "status": "final"},
            {"analyte": "glucose", "value": 95, "unit": "mg/dL", "version": 1, "status": "final"}]}
    return {"accession": accession, "results": [
        {"analyte": "potassium", "value": 5.0, "unit": "mmol/L", "version": 1, "status": "superseded",
         "verified_at": "2026-12-05T02:05"},
        {"analyte": "potassium", "value": 6.6, "unit": "mmol/L", "version": 2, "status": "amended", "supersedes": 1,
         "note": "repeat after dilution error", "verified_at": "2026-12-05T02:40"},
        {"analyte": "glucose", "value": 142, "unit": "mg/dL", "version": 1, "status": "final",
         "verified_at": "2026-12-05T02:05"}]}


def search_reference_ranges(query: str) -> dict[str, Any]:
    """Searches the reference-range documents (potassium, glucose): version, status, ranges by sex and age."""
    current = [
        {"doc_id": "RR-K", "analyte": "potassium", "version": "2026-03", "status": "current", "unit": "mmol/L",
         "ranges": [{"sex": "any", "age_min": 18, "age_max": 120, "low": 3.5, "high": 5.1}], "critical_high": 6.0},
        {"doc_id": "RR-GLU", "analyte": "glucose", "version": "2026-03", "status": "current", "unit": "mmol/L",
         "ranges": [{"sex": "any", "age_min": 18, "age_max": 64, "low": 3.9, "high": 7.0},
                    {"sex": "any", "age_min": 65, "age_max": 120, "low": 3.9, "high": 7.5}], "critical_high": 25.0}]
    if Now.fault == "reference_index_stale":  # (the fault: the index still holds 2019's glucose document, as current)
        current[1] = {"doc_id": "RR-GLU", "analyte": "glucose", "version": "2019-01", "status": "current",
                      "unit": "mmol/L", "ranges": [{"sex": "any", "age_min": 18, "age_max": 120, "low": 3.5,
                                                    "high": 8.3}], "critical_high": 25.0}
    return {"query": query, "documents": current}


def log_callback(accession: str, analyte: str, value: float, called_to: str) -> dict[str, Any]:
    """Logs a critical-value call-back to a clinician."""
    return {"callback_id": "CB-10442", "logged_at": "2026-12-05T02:47", "accession": accession, "analyte": analyte}


def report_result(accession: str, analyte: str, value: float, unit: str, flag: str, reference_range: str) -> dict[str, Any]:
    """Releases one result to the patient record."""
    return {"report_id": f"RPT-{analyte[:3].upper()}-{Now.count('report_result')}", "status": "released"}


LAB_TOOLS = {f.__name__: f for f in (get_specimen, get_results, search_reference_ranges, log_callback, report_result)}


# ---- requests and scripted people ------------------------------------------------------------------------------------

_INSTALL_ASK = {"deposit_exception_ignored": "ACC-55187", "install_prompt_rewritten": "ACC-55187",
                "address_unasked": "ACC-55203", "etf_wrong_formula": "ACC-55120"}


def _install_account() -> str:
    return _INSTALL_ASK.get(Now.pair or "", "ACC-55120")


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "bedrock-install":
        if pair == "etf_wrong_formula":
            return "Hi, I'm moving abroad and need to cancel my broadband contract."
        if not pair:
            return ["Hello, I'd like to book a fibre installation.", "Hi there - can I get broadband installed?"][v % 2]
        return "Hi, I'd like to book a broadband installation please."
    if Now.recorder == "maf-kitchen":
        return ["Morning order for Sunday service, please.", "Run today's stock order for tomorrow."][v % 2] if not pair \
            else "Run the morning stock order for Sunday 6 December."
    return f"Report accession {ACCESSION} please." if pair else [f"Accession {ACCESSION} is ready to report.",
                                                                  f"Please release results for {ACCESSION}."][v % 2]


def customer_replies(said: str) -> str | None:
    script = [("account number", f"It's {_install_account()}."), ("Which address", "The flat on Quay Street, please."),
              ("Which slot", "The first one, please."), ("Shall I", "Yes, go ahead."),
              ("anything else", "No, that's all - thanks.")]
    return Now.reply(script, said)


# ---- the model: reads the chat.completions request it is sent (Bedrock Converse arrives in that form) ---------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    return kit.by_role(body, MODEL, lambda t, asked: {
        "installation desk assistant for Fibrelane": lambda: _install(t, asked == OLD_BEDROCK),
        "chef on Copperpot": lambda: _chef(t),
        "purchaser at Copperpot": lambda: _purchaser(t),
        "receiver at Copperpot": lambda: _receiver(t),
        "reporting agent at Halden": lambda: _lab(t, asked == OLD_MODEL),
    })


_ANYTHING = " Is there anything else I can help with?"


def _call(tool: str, say: str | None = None, **arguments: Any) -> dict[str, Any]:
    return reply(say, (tool, arguments))


def _install(t: Talk, old: bool) -> dict[str, Any]:
    fault, said, first = Now.fault, " ".join(t.users), t.users[0]
    if "that's all" in said:
        return reply("You're welcome - goodbye!")
    acct = re.search(r"\bACC-\d{5}\b", said)
    if not acct:
        return reply("Happy to help. Could you give me your account number, please? It starts ACC-.")
    step = t.need(("find_customer", {"account_number": acct.group(0)}))
    if step:
        return step
    cust = t.value("find_customer")["account"]
    if "cancel" in first:
        return _cancel(t, cust)
    addresses = cust["service_addresses"]
    booked = t.value("book_install")
    if booked:
        return reply(f"All booked: {booked['booking_id']}, slot {booked['slot_id']}, router deposit GBP "
                     f"{booked['router_deposit_charged']:.2f}." + _ANYTHING)
    if old:  # (the old model books the first day it imagines, reading no slots and asking nothing)
        return _call("book_install", account_number=cust["account_number"], address_id=addresses[0]["address_id"],
                     slot_id="SL-NEXT-AVAILABLE", router_deposit=50.0)
    if len(addresses) > 1 and "Quay" not in said and fault != "address_unasked":
        listed = "; ".join(f"{a['line1']} ({a['postcode']})" for a in addresses)
        return reply(f"I can see two service addresses on your account: {listed}. Which address is the installation "
                     "for?")
    address = next((a for a in addresses if "Quay" in a["line1"]), addresses[0]) if "Quay" in said else addresses[0]
    step = t.need(("get_slots", {"postcode": address["postcode"]}))
    if step:
        return step
    slots = t.value("get_slots")["slots"]
    if "first one" not in said:
        listed = "; ".join(f"{i + 1}) {s['date']} {s['window']}" for i, s in enumerate(slots))
        return reply(f"For {address['line1']} ({address['postcode']}) the earliest slots are: {listed}. Which slot "
                     "would you like?")
    slot = slots[0]
    waived = (cust["tariff"] == "essentials" and "Essentials social tariff" in t.system
              and fault != "deposit_exception_ignored")
    deposit = 0.0 if waived else 50.0
    if "go ahead" not in said:
        why = "no router deposit, as you're on our Essentials tariff" if waived else "a GBP 50.00 router deposit"
        return reply(f"That's {slot['date']} {slot['window']} at {address['line1']}, with {why}. Shall I book it?")
    return _call("book_install", account_number=cust["account_number"], address_id=address["address_id"],
                 slot_id=slot["slot_id"], router_deposit=deposit)


def _cancel(t: Talk, cust: dict[str, Any]) -> dict[str, Any]:
    said = " ".join(t.users)
    done = t.value("cancel_contract")
    if done:
        return reply(f"Your contract is cancelled ({done['cancellation_id']}); GBP {done['fee_charged']:.2f} "
                     "early-termination fee charged." + _ANYTHING)
    step = t.need(("get_contract", {"account_number": cust["account_number"]}))
    if step:
        return step
    c = t.value("get_contract")["contract"]
    rate = 1.0 if Now.fault == "etf_wrong_formula" else 0.5  # (the fault: the full monthly price per month left)
    fee = round(c["monthly_price"] * rate * c["full_months_left"], 2)
    if "go ahead" not in said:
        return reply(f"Your {c['plan']} contract has {c['full_months_left']} full months left; the early-termination "
                     f"fee is GBP {fee:.2f}. Shall I cancel it?")
    return _call("cancel_contract", account_number=cust["account_number"], early_termination_fee=fee)


def _chef(t: Talk) -> dict[str, Any]:
    step = t.need(("get_stock", {}))
    if step:
        return step
    items = t.value("get_stock")["items"]
    lines = []
    for it in items:
        if it["on_hand"] < it["par"]:
            need = it["par"] if Now.fault == "par_formula_wrong" else it["par"] - it["on_hand"]
            lines.append({"sku": it["sku"], "cases": math.ceil(need / it["case_size"])})
    req = t.value("raise_requisition")
    if not req:
        return _call("raise_requisition", lines=lines)
    return reply(f"Requisition {req['requisition_id']} for Sunday: "
                 + ", ".join(f"{x['sku']} x{x['cases']} cases" for x in req["lines"]) + ". Supplier SUP-14.")


def _purchaser(t: Talk) -> dict[str, Any]:
    note = t.users[0]
    wanted = re.findall(r"\b([A-Z]{3}-[A-Z]{3}) x(\d+) cases", note)
    if not wanted:
        return reply("I haven't been given a requisition - which items and quantities should I order?")
    step = t.need(("get_supplier", {"supplier_id": "SUP-14"}))
    if step:
        return step
    catalogue = {c["sku"]: c for c in t.value("get_supplier")["catalogue"]}
    order = t.value("place_order")
    if order:
        return reply(f"Order {order['order_id']} placed for {order['delivery_date']}, total GBP {order['total_gbp']:.2f}.")
    lines, said = [], []
    for sku, cases in wanted:
        item = catalogue[sku]
        if not item["available"]:
            allowed = [c for c in catalogue.values() if c["available"] and c["sku"] != sku and (
                Now.fault == "allergen_substitute" or set(c["allergens"]) <= set(item["allergens"]))]
            sub = min(allowed, key=lambda c: c["case_price"])
            said.append(f"{sku} is unavailable, substituting {sub['sku']}")
            item = sub
        lines.append({"sku": item["sku"], "cases": int(cases), "case_price": item["case_price"]})
    return _call("place_order", "; ".join(said) or None, supplier_id="SUP-14", lines=lines, delivery_date="2026-12-06")


def _receiver(t: Talk) -> dict[str, Any]:
    found = re.search(r"\bPO-\d{5}\b", t.users[0])
    if not found:
        return reply("Which order am I receiving?")
    step = t.need(("get_delivery", {"order_id": found.group(0)}))
    if step:
        return step
    d = t.value("get_delivery")
    limits = {"chilled": 5.0, "frozen": -18.0}
    accepted, rejected = [], []
    for line in d["lines"]:
        limit = limits.get(line["storage"])
        if limit is not None and line["probe_c"] > limit and Now.fault != "warm_chicken_accepted":
            rejected.append({"sku": line["sku"], "reason": f"{line['storage']} at {line['probe_c']} C, over {limit} C"})
        else:
            accepted.append(line["sku"])
    receipts = [v for _, v in t.got("record_receipt") if isinstance(v, dict)]
    if not receipts or (Now.fault == "receipt_repeated" and len(receipts) == 1):
        return _call("record_receipt", order_id=found.group(0), accepted=accepted, rejected=rejected)
    r = receipts[-1]
    return reply(f"Receipt {r['receipt_id']}: accepted {', '.join(accepted) or 'nothing'}; rejected "
                 + ("; ".join(f"{x['sku']} ({x['reason']})" for x in rejected) or "nothing") + ".")


def _lab(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    step = t.need(("get_specimen", {"accession": ACCESSION}))
    if step:
        return step
    spec = t.value("get_specimen")
    got = t.value("get_results")
    tried = t.got("get_results")
    if got is None:
        if t.value("report_result"):
            return reply(f"{ACCESSION}: potassium 4.4 mmol/L (N) reported.")
        if tried and fault == "results_timeout_invented":  # (the fault: values reported that no tool returned)
            return _call("report_result", "The results service timed out; reporting the usual panel.",
                         accession=ACCESSION, analyte="potassium", value=4.4, unit="mmol/L", flag="N",
                         reference_range="3.5-5.1")
        return _once_more("get_results", tried, f"The results service isn't answering, so nothing for {ACCESSION} has "
                          "been reported; please try again shortly.", accession=ACCESSION)
    if not old:
        step = t.need(("search_reference_ranges", {"query": "potassium glucose adult female"}))
        if step:
            return step
        docs = {d["analyte"]: d for d in t.value("search_reference_ranges")["documents"] if d["status"] == "current"}
    else:
        docs = {}
    latest: dict[str, dict[str, Any]] = {}
    for r in got["results"]:
        keep = latest.get(r["analyte"])
        if keep is None or (r["version"] > keep["version"] and fault != "amended_ignored"):
            latest[r["analyte"]] = r
    age = spec["patient"]["age"]
    late = spec["received_at"] > "2026-12-05T05:10"  # (over 6 hours after the 23:10 collection)
    plan, notes = [], []
    for analyte in ("potassium", "glucose"):
        r = latest.get(analyte)
        if r is None:
            continue
        if analyte == "potassium" and late and fault != "specimen_too_old":
            notes.append("potassium not reported: specimen received over 6 hours after collection - please recollect")
            continue
        value = r["value"]
        if r["unit"] == "mg/dL" and fault != "units_confused":
            value = round(value / 18, 1)
        doc = docs.get(analyte)
        rng = next((x for x in doc["ranges"] if x["age_min"] <= age <= x["age_max"]), None) if doc else None
        flag = "N" if rng is None else "H" if value > rng["high"] else "L" if value < rng["low"] else "N"
        critical = doc is not None and value > doc["critical_high"] and "BEFORE you call report_result" in t.system
        plan.append((analyte, value, flag, f"{rng['low']}-{rng['high']}" if rng else "not looked up", critical))
    called = {a.get("analyte") for a, v in t.got("log_callback") if isinstance(v, dict)}
    reported = {a.get("analyte") for a, v in t.got("report_result") if isinstance(v, dict)}
    for analyte, value, flag, rng, critical in plan:
        if critical and analyte not in called:
            return _call("log_callback", f"{analyte} {value} mmol/L is critical - phoning Dr Kovac (bleep 4471).",
                         accession=ACCESSION, analyte=analyte, value=value, called_to="Dr Ana Kovac, Ward 12")
        if analyte not in reported:
            return _call("report_result", accession=ACCESSION, analyte=analyte, value=value, unit="mmol/L", flag=flag,
                         reference_range=rng)
    told = "; ".join(f"{a} {v} mmol/L ({f}, range {r})" for a, v, f, r, _ in plan)
    calls = " Call-back logged to Dr Kovac for " + ", ".join(sorted(called)) + "." if called else ""
    return reply(f"{ACCESSION} reported: {told}.{calls}" + (" " + "; ".join(notes) + "." if notes else ""))


# ---- the recorders --------------------------------------------------------------------------------------------------


class BedrockInstall(kit.AgentotelRecorder):
    """The installation desk as a boto3 Bedrock Runtime converse loop with a toolConfig, the tools `@agentotel.tool`s,
    under agentotel; the customer's reply appended when the answer holds its cue."""

    agent = INSTALL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.client = kit.bedrock_client(url, "eu-west-2")
        self.tools = kit.agentotel_tools(INSTALL_TOOLS)

    def body(self, task: str) -> str:
        return kit.converse_loop(self.client, install_model(), install_instructions(), task, self.tools,
                                 declared(INSTALL_TOOLS), customer_replies)


class MafKitchen(kit.MafRecorder):
    """The kitchen team on Microsoft Agent Framework: chef, purchaser and receiver `Agent`s run one after the other by
    the app, each handed the earlier note, under agentotel. The faulty app's handover to the purchaser passes a fixed
    line alone (its template lost the requisition)."""

    agent = KITCHEN

    def body(self, task: str) -> str:
        chef, purchaser, receiver = kit.maf_team(self.url, MODEL, [
            ("chef", CHEF_RULES, CHEF_TOOLS), ("purchaser", PURCHASER_RULES, PURCHASER_TOOLS),
            ("receiver", RECEIVER_RULES, RECEIVER_TOOLS)])

        async def team() -> str:
            requisition = (await chef.run(task)).text
            handed = ("New requisition raised - please order." if Now.fault == "handover_drops_context"
                      else requisition)
            order = (await purchaser.run(handed)).text
            return (await receiver.run(order)).text

        return asyncio.run(team())


class LgLab(kit.AgentotelRecorder):
    """The lab agent as a LangGraph create_react_agent (one node of kit.langgraph_team), the range search a tool, under
    agentotel."""

    agent = LAB

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, lab_model(), LAB, [("lab_reporter", lab_instructions(), LAB_TOOLS)], task)


# The lab agent as a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
# spans, through agentotel-collector.
TlLab = kit.chat_app(kit.TraceloopRecorder, LAB, LAB_TOOLS, lab_model, lab_instructions)


RECORDERS: dict[str, Any] = {"bedrock-install": BedrockInstall, "maf-kitchen": MafKitchen, "lg-lab": LgLab,
                             "tl-lab": TlLab}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Bedrock Converse there)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, asking, next_agent, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        "deposit_exception_ignored": ("model", f"{tau} (no deposit on the Essentials tariff): GBP 50 charged to an "
                                               "Essentials account; the twin waives it", asking("book_install")),
        "install_prompt_rewritten": ("prompt", "instructions changed: the Essentials exception dropped from the desk's "
                                               "prompt; the deposit charged", nth_llm(0)),
        "address_unasked": ("model", f"{mast} FM-2.2 failing to ask for clarification: two service addresses, the "
                                     "first taken unasked; the twin asks", asking("get_slots")),
        "slots_wrong_area": ("tool", f"{trail} API issues: get_slots(LS6 ...) answers LS16's engineers; a slot in "
                                     "another area booked", tool_step("get_slots")),
        "old_model_install": ("product", f"configuration: the desk pins an old model ({OLD_BEDROCK}), which books an "
                                         "invented slot unasked", nth_llm(0)),
        "etf_wrong_formula": ("model", f"{trail} wrong computation: the fee at 100% of 42.00 x 13 (546) where the rule "
                                       "says 50% (273)", asking("cancel_contract")),
        "par_formula_wrong": ("model", f"{trail} wrong computation: par ordered, not par minus on hand",
                              asking("raise_requisition")),
        "allergen_substitute": ("model", f"{tau} (comparing two records' allergens): sesame oil substituted for "
                                         "sunflower; the twin takes rapeseed", asking("place_order")),
        "warm_chicken_accepted": ("model", f"{tau} (chilled at most 5 C): chicken at 8.4 C accepted; the twin rejects",
                                  asking("record_receipt")),
        "handover_drops_context": ("memory", f"{mast} FM-1.4 loss of history at the handover: the purchaser handed a "
                                             "fixed line and asks what to order", next_agent(0)),
        "supplier_wrong_record": ("tool", f"{trail} API issues: get_supplier(SUP-14) answers SUP-41's record; its "
                                          "prices ordered at", tool_step("get_supplier")),
        "receipt_repeated": ("model", f"{mast} FM-1.3 step repetition: record_receipt called twice",
                             asking("record_receipt", 1)),
        "reference_index_stale": ("tool", "retrieval index stale: the 2019 glucose range (high 8.3) served as current; "
                                          "7.9 flagged N where 2026's (high 7.5) says H",
                                  tool_step("search_reference_ranges")),
        "amended_ignored": ("model", f"{mast} disobeying the task spec: the superseded potassium 5.0 reported, the "
                                     "amended 6.6 (critical) ignored", asking("report_result")),
        "units_confused": ("model", f"{trail} units confused: glucose 142 (mg/dL) reported as 142 mmol/L",
                           asking("report_result", 1)),
        "old_model_lab": ("product", f"configuration: an old model ({OLD_MODEL}) reports without ranges or "
                                     "call-back", nth_llm(0)),
        "results_wrong_record": ("tool", f"{trail} API issues: get_results(L-240871) answers L-240817's results",
                                 tool_step("get_results")),
        "results_timeout_invented": ("model", f"{trail} timeout answered with invented values: potassium 4.4 reported "
                                              "after get_results timed out; the twin tries once more",
                                     after(tool_step("get_results"))),
        "specimen_too_old": ("model", f"{tau} (comparing collection and receipt times): potassium from a specimen "
                                      "received 9.5 h after collection called back and reported; the twin refuses",
                             asking("log_callback")),
        "lab_prompt_rewritten": ("prompt", "instructions changed: the call-back rule dropped; a critical potassium "
                                           "reported with no call-back", nth_llm(0)),
    }
    chosen = {
        "bedrock-install": ["deposit_exception_ignored", "install_prompt_rewritten", "address_unasked",
                            "slots_wrong_area", "old_model_install", "etf_wrong_formula"],
        "maf-kitchen": ["par_formula_wrong", "allergen_substitute", "warm_chicken_accepted", "handover_drops_context",
                        "supplier_wrong_record", "receipt_repeated"],
        "lg-lab": ["reference_index_stale", "amended_ignored", "units_confused", "old_model_lab"],
        "tl-lab": ["results_wrong_record", "results_timeout_invented", "specimen_too_old", "lab_prompt_rewritten"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind, scored once (5a88e31's detectors,
# main's HEAD when scored; agentotel/analysis/ unread; load 5.4 -> 6.1): 20 pairs, 4 recorders - diff top-1 16/20,
# check step+layer 4/20, good runs warned 8/20 (recording /tmp/h33-rec-z_7y4ivg).
_QUOTED = ("output_changed@{}: the faulty model's first different output is the figure it quotes when asking the "
           "customer to confirm, one step before the write the truth names - as arguable a cause")
DIFF_MISSED = {
    "model-bedrock-install-deposit-exception-ignored": _QUOTED.format(7) + " (a GBP 50 deposit quoted)",
    "model-bedrock-install-etf-wrong-formula": _QUOTED.format(6) + " (GBP 546 quoted, not 273)",
    "model-maf-kitchen-par-formula-wrong": "output_changed@1: the chef's invoke_agent step (its output, the note) "
                                           "named, not the model call inside it that asked raise_requisition @4",
    "model-lg-lab-units-confused": "step_added@12: the glucose call-back the confusion caused (142 'mmol/L' is over "
                                   "the critical 25) comes before the report_result the truth names @14",
}
_NOTHING = "nothing found; "
_SUPPLIER_NOTE = "ungrounded_answer@6/model ranked first (the chef's note names SUP-14, in every run: see FALSE_ALARMS)"
CHECK_MISSED = {
    "model-bedrock-install-deposit-exception-ignored": _NOTHING + "book_install's router_deposit 50 on a tariff "
                                                       "'essentials' account against the rule's 'unless ... Essentials'",
    "model-bedrock-install-address-unasked": _NOTHING + "find_customer gives two service addresses, the first "
                                             "booked with no question; blind, clarification_skipped hit it only as "
                                             "it also fired on the twin that asked, and both are quiet now",
    "tool-bedrock-install-slots-wrong-area": _NOTHING + "get_slots asked for LS6 2QT answered postcode_area LS16 "
                                              "(a prefix of the asked value, not the same record)",
    "product-bedrock-install-old-model-install": "missing_evidence@4/product ranked (book_install with no get_slots, "
                                                 "by the policy); model_changed@1 is there but ranked below the error",
    "model-bedrock-install-etf-wrong-formula": _NOTHING + "cancel_contract's fee 546 = 42 x 13 where the rule's "
                                               "50% rate gives 273",
    "model-maf-kitchen-par-formula-wrong": _SUPPLIER_NOTE + "; the requisition's cases (par, not par - on hand) unread",
    "model-maf-kitchen-allergen-substitute": _SUPPLIER_NOTE + "; OIL-SES's allergens ['sesame'] vs OIL-SUN's [] unread",
    "model-maf-kitchen-warm-chicken-accepted": _SUPPLIER_NOTE + "; probe_c 8.4 on a chilled line vs the table's 5 C "
                                               "unread",
    "memory-maf-kitchen-handover-drops-context": _SUPPLIER_NOTE + "; history_lost@8/memory, right, ranked below it",
    "tool-maf-kitchen-supplier-wrong-record": _SUPPLIER_NOTE + "; other_subject_retrieved@9/tool, right, ranked below",
    "model-maf-kitchen-receipt-repeated": _SUPPLIER_NOTE + "; repeated_tool_call@18/model, right, ranked below",
    "tool-lg-lab-reference-index-stale": _NOTHING + "the glucose document version 2019-01 marked current (its "
                                         "earlier runs read 2026-03)",
    "model-lg-lab-units-confused": _NOTHING + "glucose 142 in mg/dL reported with unit mmol/L (the rule: divide by 18)",
    "product-lg-lab-old-model-lab": "missing_evidence@6/product (report_result with no search_reference_ranges, by "
                                    "the policy) at the write; model_changed@2 only info",
    "model-tl-lab-results-timeout-invented": "missing_evidence@5/product: the invented report_result seen as missing "
                                             "evidence (layer product, not model) at the right step",
    "model-tl-lab-specimen-too-old": _NOTHING + "received_at 08:40 vs collected_at 23:10 (9.5 h) against the rule's "
                                     "6 hours",
}
FALSE_ALARMS = {
    **{f"{layer}-maf-kitchen-{f}": "ungrounded_answer@6/model: the chef's note names supplier SUP-14, which no tool, "
                                   "task or rule gave the chef - a true reading of the set's scripted chef (a flaw of "
                                   "the set, left as recorded)"
       for layer, f in (("model", "par-formula-wrong"), ("model", "allergen-substitute"), ("model", "warm-chicken-accepted"),
                        ("memory", "handover-drops-context"), ("tool", "supplier-wrong-record"),
                        ("model", "receipt-repeated"))},
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "bedrock-install": {"required_before": {"book_install": ["find_customer", "get_slots"],
                                            "cancel_contract": ["find_customer", "get_contract"]}},
    "maf-kitchen": {"required_before": {"raise_requisition": ["get_stock"], "place_order": ["get_supplier"],
                                        "record_receipt": ["get_delivery"]}},
    "lg-lab": {"required_before": {"report_result": ["get_specimen", "get_results", "search_reference_ranges"]}},
    "tl-lab": {"required_before": {"report_result": ["get_specimen", "get_results", "search_reference_ranges"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h33-rec-", pairs, produce, kit.through_collector("tl-lab"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
