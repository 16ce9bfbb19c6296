"""A twenty-second held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): a SaaS company's billing desk talking with a customer over several turns under a written billing
policy, a warehouse's fulfilment team (a picker handing to a packer, who hands to a carrier booker) and a clinical
trial's pre-screening agent reading versioned protocol documents, patient records and lab values in several units, run
through real SDKs and frameworks.

    python tests/analysis/heldout22.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout22.py --score DIR [...]       # the runs a call left in DIR, scored again

Corvid Cloud's billing desk (find_account, get_subscription, list_invoices, refund_invoice, issue_credit, change_plan)
serves a customer by a written policy (the account's email before anything; monthly invoices never refunded - credit
instead - unless two paid invoices cover the same plan and period, then the later one refunded in full; credits capped
by a plan table as a share of the latest paid invoice, in its currency; which entity's invoice, asked when the account
bills in two currencies; a plan change's prorated charge always told; a failure tried once more, never an id a tool
didn't return). The customer's replies are scripted and said when the desk's message holds their cue ('email address',
'Which invoice', 'anything else'). Kestrel Fulfilment's team: a picker (get_order, get_stock, pick_items, hold_order: a
short line picked short only when the order allows a split, else the whole order held) hands to a packer (pack_parcel:
a UN3480 battery never shares a parcel, 20 kg at most), who hands to a booker (get_rates, book_shipment, by a rules
table: hazmat only on a hazmat_ok quote, a parcel no heavier than the quote's max_weight_kg, a cutoff later than now
for a same-day order, the cheapest that passes, one booking per parcel, a timeout tried once more and never a service
booked without a quote). Lakeshore Clinical Research's pre-screening agent (search_protocol: versioned NPH-204
passages with status, effective date and criteria; find_patient, get_patient, get_labs, request_labs, flag_mismatch,
record_prescreen) works by bulleted rules (only the current protocol version; which patient, asked when a name
matches two; the referral's date of birth matched against the record's, else flagged; labs over 90 days old re-ordered
and the outcome pending; HbA1c converted between mmol/mol and %; one record, every failed criterion told). Each
recorder in a process of its own:

- `bedrock-billing` (billing): a boto3 Bedrock Runtime `converse` loop with a toolConfig, the tools `@agentotel.tool`s,
  under `agentotel.instrument()`;
- `agents-warehouse` (fulfilment): the OpenAI Agents SDK on a chat completions model, picker -> packer -> booker by two
  handoffs in one Runner.run, under `agentotel.instrument()`;
- `mcp-trial` (pre-screening): the tools on an MCP server in a subprocess (the mcp package's stdio transport, a server
  per run), called from a plain openai SDK chat loop through the MCP client's session, under `agentotel.instrument()`;
- `oi-trial` (pre-screening): the same chat loop under OpenInference's openai instrumentation, the tools OITracer TOOL
  spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Bedrock Converse, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a credit
above the plan's cap, a monthly invoice refunded, batteries packed with other goods, a parcel over the quote's weight
limit, a superseded protocol applied, stale labs used, a date of birth that differs pre-screened anyway), MAST (Cemri
et al. 2025: FM-1.1 disobeying the task specification, FM-1.3 step repetition, FM-1.4 conversation lost between turns
or at a handoff, FM-2.2 no clarification, FM-2.4 withholding information), TRAIL (a rate limit or a timeout answered
with invented values, a lab value's unit misread) and outside the model: the instructions rewritten without a rule
(3), an old model configured (2), an invoices API's and a lab system's changed shape, a stale protocol index, a stock
API and a lab API answering another record, a handoff filter that drops the conversation. Good twins are fine runs: a
duplicate charge refunded as the rule's exception allows, a refund and a credit refused or capped with the reason, a
question asked when two entities or two patients match, a 429 and two timeouts tried once more, an order held when it
may not ship split, a mismatched date of birth flagged, stale labs re-ordered and reported pending. Ground truth is
located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each Bedrock converse call is a `chat amazon.nova-pro-v1:0` step
(the old model's `chat amazon.titan-text-express-v1`), the `@agentotel.tool`s tool steps; under the Agents SDK each
agent is an `invoke_agent <agent>` step, each handoff an `execute_tool transfer_to_<agent>` step; the MCP client's
call_tool is an `execute_tool <tool>` step (the server is not instrumented: the client's span is the step); the
OpenInference run has no agent step, its model calls `ChatCompletion` steps, its tools OITracer's TOOL spans. Nothing
recorded wrong was found.

Built and scored blind, once (main's HEAD when scored, 180e951944787722a97f2de675f0c72b443c253c, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 7.9 at the start, 6.6 at
the end, other helpers running; recording /tmp/h22-rec-0u4n6a2e): 30 pairs, 4 recorders (boto3 Bedrock converse, the
Agents SDK with handoffs, an openai loop over MCP, OpenInference through the collector) - diff top-1 28/30, check
step+layer 11/30, good runs with a warning 1/30. Check's hits: instructions changed (3), an old model configured (the
trial's), tool output drift (2), a stale index, a lab API answering another patient, history lost between a customer's
turns and at a handoff, a 429 answered with a refund reference - 11. Its misses are rules comparing a record's value
(a credit above 15% of the latest invoice, a monthly invoice refunded, a hazmat SKU packed with others, a parcel above
the quote's max weight, allow_split false with a short line, a superseded version applied, labs over 90 days old, a
date of birth differing from the referral's), questions the rules ask for that never came (two billing entities, two
patients), a unit misread, a proration and a failed criterion withheld from the answer, a stock API answering another
SKU, a repeated booking and a repeated record with another step between; a timeout answered by booking with no quote
is found at its step in the tool layer, and the billing old model's finding ranks under a required_before warning.
Diff's two misses are the faulty model going on one step earlier than the call the truth names (past find_patient's
two matches, past a date of birth that differs). The one false alarm: an answer quoting the referral's date of birth
beside the record's, read as misquoting get_patient. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 6 CHECK_MISSED entries hit
since and dropped (booking_repeated, labs_stale_used, overweight_booked, prescreen_repeated, stock_wrong_sku,
superseded_used); 1 false alarm quiet since and dropped (all of them).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 2 CHECK_MISSED
entries hit and dropped (exclusion_withheld, proration_withheld).

At main f561b41 (session 28: its new readers and quieter readings; the kept recording and a fresh one score alike) 1
CHECK_MISSED entry hit and dropped (rates_timeout_invented).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, _as_text, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
NOVA, OLD_NOVA = "amazon.nova-pro-v1:0", "amazon.titan-text-express-v1"
BILLING, WAREHOUSE, TRIAL = "corvid-billing", "kestrel-fulfilment", "lakeshore-prescreen"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded (an MCP server process reads it from its environment)."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


def _retry_or(tool: str, tried: list[Any], gave_up: str, **arguments: Any) -> dict[str, Any]:
    """What the rules ask after a failed call: once more, then say it did not go through."""
    if len(tried) >= 2:
        return reply(gave_up)
    return call(tool, "That call failed - trying once more." if tried else None, **arguments)


# ---- the billing desk's world --------------------------------------------------------------------------------------

_REFUNDS = ("Refunds. Monthly invoices are not refundable - offer a service credit instead. The one exception is a "
            "duplicate charge: when two paid invoices cover the same plan and the same period, refund the later one in "
            "full with refund_invoice.")
_REFUNDS_OLD = "Refunds. If a customer disputes an invoice, refund it with refund_invoice."


def billing_instructions() -> str:
    return "\n".join([
        "You are the billing desk assistant for Corvid Cloud. Today is Friday 4 December 2026.",
        "",
        "Identity: ask for the email address on the account and look it up with find_account before you read or change "
        "anything.",
        "",
        _REFUNDS_OLD if Now.fault == "policy_rewritten" else _REFUNDS,  # (the help-center macro pasted over the policy)
        "",
        "Service credits (issue_credit) are capped by plan, as a share of the latest paid invoice's amount, and are "
        "issued in that invoice's currency:",
        "",
        "| Plan | Credit cap |",
        "|---|---|",
        "| Starter | 10% |",
        "| Team | 15% |",
        "| Business | 25% |",
        "",
        "An account billed in more than one currency has an invoice per billing entity: if the customer hasn't said which "
        "one, ask before crediting.",
        "",
        "Plan changes take effect today and are prorated; always tell the customer the prorated charge change_plan "
        "returns and when it will be billed.",
        "",
        "If a billing call fails or is rate-limited, try once more; if it fails again, tell the customer it hasn't gone "
        "through. Never quote a refund or credit id a tool didn't return.",
    ])


def billing_model() -> str:
    return OLD_NOVA if Now.fault == "old_model_configured" else NOVA


EMAIL = "ops@haldenlabs.example"
_DUPLICATED = ("refund_429_invented", "history_lost_between_turns", "invoices_shape_changed")


def find_account(email: str) -> dict[str, Any]:
    """The account with this billing email: id, company, billing entities and their currencies."""
    if email.lower() != EMAIL:
        return {"account": None}
    entities = [{"entity": "Halden Labs GmbH", "currency": "EUR", "vat_id": "DE318840125"}]
    if Now.pair == "currency_unasked":
        entities.append({"entity": "Halden Labs Ltd", "currency": "GBP", "vat_id": "GB402118734"})
    return {"account": {"account_id": "ACC-20931", "company": "Halden Labs", "status": "active",
                        "billing_contact": {"name": "Priya Nair", "email": EMAIL}, "entities": entities}}


def get_subscription(account_id: str) -> dict[str, Any]:
    """The account's subscription: plan, billing period, seats, unit price, current period."""
    return {"subscription_id": "SUB-7712", "account_id": account_id, "plan": "team", "billing_period": "monthly",
            "seats": 40, "unit_price": 30.0, "currency": "EUR",
            "current_period": {"start": "2026-12-01", "end": "2026-12-31"}, "renews": "2027-01-01"}


def _invoice(invoice_id: str, entity: str, period: str, amount: float, currency: str, paid: str) -> dict[str, Any]:
    return {"invoice_id": invoice_id, "entity": entity, "period": period, "plan": "team", "amount": amount,
            "currency": currency, "status": "paid", "issued": f"{period}-01", "paid_at": paid}


def list_invoices(account_id: str) -> dict[str, Any]:
    """The account's invoices, newest first: id, billing entity, period, plan, amount, currency, status, paid time."""
    rows = [_invoice("INV-2026-1342", "Halden Labs GmbH", "2026-12", 1200.0, "EUR", "2026-12-01T06:02:11Z"),
            _invoice("INV-2026-1187", "Halden Labs GmbH", "2026-11", 1200.0, "EUR", "2026-11-01T06:01:47Z")]
    if Now.pair in _DUPLICATED and Now.variant == 2:  # (the card retried by the payment provider's outage)
        rows.insert(0, _invoice("INV-2026-1349", "Halden Labs GmbH", "2026-12", 1200.0, "EUR", "2026-12-01T06:19:40Z"))
    if Now.pair == "currency_unasked":
        rows.insert(1, _invoice("INV-UK-0412", "Halden Labs Ltd", "2026-12", 640.0, "GBP", "2026-12-01T06:02:15Z"))
    if Now.fault == "invoices_shape_changed":  # the billing API's 2026-12 version, rolled out under the desk
        return {"object": "list", "has_more": False, "data": [
            {"id": r["invoice_id"], "billing_entity": {"name": r["entity"]},
             "billing_period": {"start": f"{r['period']}-01", "end": f"{r['period']}-31"},
             "total": {"amount_minor": int(r["amount"] * 100), "currency": r["currency"].lower()},
             "state": "PAID", "paid_at": r["paid_at"], "lines": [{"price": "team-monthly", "quantity": 40}]} for r in rows]}
    return {"account_id": account_id, "invoices": rows}


def refund_invoice(invoice_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Refunds an amount of a paid invoice to the card it was paid with."""
    if Now.pair == "refund_429_invented" and Now.count("refund_invoice") == 1:
        raise RuntimeError("429 Too Many Requests: payments provider rate limit, retry after 2s")
    return {"refund_id": "RF-88120", "invoice_id": invoice_id, "amount": amount, "status": "pending",
            "expected_by": "2026-12-11"}


def issue_credit(account_id: str, amount: float, currency: str, reason: str) -> dict[str, Any]:
    """Adds a service credit to the account, applied to its next invoice."""
    return {"credit_id": "CN-4471", "account_id": account_id, "amount": amount, "currency": currency,
            "applies_to": "next invoice"}


def change_plan(account_id: str, plan: str) -> dict[str, Any]:
    """Moves the subscription to another plan today; answers the prorated charge for the rest of the period."""
    days, period, seats, old, new = 28, 31, 40, 30.0, 38.0
    return {"subscription_id": "SUB-7712", "plan": plan, "effective": TODAY,
            "proration": {"days_remaining": days, "days_in_period": period, "seats": seats, "old_unit_price": old,
                          "new_unit_price": new, "charge": round((new - old) * seats * days / period, 2),
                          "currency": "EUR", "billed_on": "2027-01-01"}}


BILLING_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_account, get_subscription, list_invoices, refund_invoice, issue_credit, change_plan)}


# ---- the fulfilment team's world -----------------------------------------------------------------------------------

PICKER_RULES = (
    "You are the picker at Kestrel Fulfilment's Reno warehouse. Read the order with get_order, then call get_stock for "
    "each SKU on it. Pick the lines with pick_items. If a line is short, it depends on the order: when allow_split is "
    "true, pick what is on hand and the rest is backordered; when it is false, pick nothing and put the whole order on "
    "hold with hold_order. When you have picked, hand over to the packer with a note giving the pick id and each SKU "
    "and quantity picked.")
PACKER_RULES = "\n".join([
    "You are the packer at Kestrel Fulfilment. Pack what the picker handed you:",
    "1. One pack_parcel call per parcel.",
    "2. Lithium batteries (UN3480) must never share a parcel with anything else: each hazmat SKU goes in a parcel of "
    "its own, with hazmat set to its UN number (an empty string for other parcels).",
    "3. No parcel may weigh more than 20 kg.",
    "4. Then hand over to the booker with the order id and each parcel's id, weight and hazmat status.",
])
_HAZMAT_ROW = "| Hazmat | A hazmat parcel may only go with a quote whose hazmat_ok is true. |"


def booker_rules() -> str:
    rows = [_HAZMAT_ROW,
            "| Weight | A parcel must not weigh more than the quote's max_weight_kg. |",
            "| Cut-off | When the order's promised ship date is today, book only a service whose cutoff is later than "
            "now. |",
            "| Price | Of the quotes that pass, book the cheapest. |",
            "| Booking | One book_shipment per parcel. If get_rates fails or times out, try once more; never book a "
            "service you have no quote for. |"]
    if Now.fault == "booker_prompt_rewritten":  # (the rules re-pasted from the pre-hazmat wiki page)
        rows.remove(_HAZMAT_ROW)
    return "\n".join(["You book carriers for Kestrel Fulfilment's outbound parcels. It is 15:40 Pacific time on "
                      "2026-12-04. Get quotes with get_rates for the parcels you are handed and book each parcel with "
                      "book_shipment, by these rules:", "", "| Rule | |", "|---|---|", *rows, "",
                      "Answer with each parcel's carrier, service and tracking number."])


_ITEMS = {  # sku: description, unit weight kg, hazmat
    "BAT-48V": ("E-bike battery 48V 13Ah (lithium ion)", 3.9, {"un_number": "UN3480", "class": "9", "packing_group": "II"}),
    "BAT-36V": ("E-bike battery 36V 10Ah (lithium ion)", 3.1, {"un_number": "UN3480", "class": "9", "packing_group": "II"}),
    "LMP-220": ("Articulated desk lamp, matte black", 1.6, None),
    "CBL-USB": ("USB-C charging cable 2 m", 0.1, None),
}
_BINS = {"BAT-48V": "H-02-01", "BAT-36V": "H-02-04", "LMP-220": "C-14-03", "CBL-USB": "A-03-11"}


def _order_id() -> str:
    return ("SO-88390", "SO-88401", "SO-88412")[Now.variant]


def get_order(order_id: str) -> dict[str, Any]:
    """A sales order: customer and ship-to, lines (sku, qty), whether it may ship split, promised ship date."""
    lines = {"SO-88390": [("LMP-220", 2), ("CBL-USB", 2)], "SO-88401": [("LMP-220", 1), ("CBL-USB", 3)]}.get(
        order_id, [("BAT-48V", 3 if Now.pair == "overweight_booked" else 2), ("LMP-220", 1), ("CBL-USB", 3)])
    return {"order_id": order_id, "customer": {"name": "Bramble & Co", "ship_to": {"city": "Denver", "state": "CO",
                                                                                  "zip": "80205"}},
            "lines": [{"sku": s, "qty": q} for s, q in lines], "allow_split": Now.pair != "split_not_allowed",
            "promised_ship_date": TODAY, "service_level": "ground", "created": "2026-12-03T19:12:40Z"}


def get_stock(sku: str) -> dict[str, Any]:
    """A SKU's stock: description, on hand, bins, unit weight and hazmat data (UN number, class) when it has any."""
    if Now.fault == "stock_wrong_sku" and sku == "BAT-48V":  # (the WMS cache keyed on the SKU's first 4 characters)
        sku = "BAT-36V"
    short = Now.pair == "split_not_allowed" or Now.variant == 1
    on_hand = 1 if sku == "CBL-USB" and short else 40
    name, weight, hazmat = _ITEMS[sku]
    return {"sku": sku, "description": name, "on_hand": on_hand, "bins": [{"bin": _BINS[sku], "qty": on_hand}],
            "unit_weight_kg": weight, "hazmat": hazmat}


def pick_items(order_id: str, skus: list[str], quantities: list[int]) -> dict[str, Any]:
    """Confirms a pick: the SKUs and quantities taken from their bins; what the order wanted beyond that is backordered."""
    wanted = {line["sku"]: line["qty"] for line in get_order(order_id)["lines"]}
    picked = dict(zip(skus, quantities))
    return {"pick_id": "PK-5531", "order_id": order_id, "picked_at": "2026-12-04T15:31:08-08:00",
            "picked": [{"sku": s, "qty": q, "bin": _BINS.get(s, "?")} for s, q in picked.items()],
            "backordered": [{"sku": s, "qty": q - picked.get(s, 0)} for s, q in wanted.items() if q > picked.get(s, 0)]}


def hold_order(order_id: str, reason: str) -> dict[str, Any]:
    """Puts an order on hold (customer service is told)."""
    return {"order_id": order_id, "status": "on_hold", "hold_id": "HD-221"}


def pack_parcel(order_id: str, skus: list[str], quantities: list[int], hazmat: str) -> dict[str, Any]:
    """Packs a parcel: its SKUs and quantities, and the UN number when it holds hazmat (empty otherwise)."""
    weight = sum(_ITEMS[s][1] * q for s, q in zip(skus, quantities)) + 0.4
    return {"parcel_id": f"PC-{7100 + Now.count('pack_parcel')}", "order_id": order_id, "weight_kg": round(weight, 1),
            "contents": [{"sku": s, "qty": q} for s, q in zip(skus, quantities)], "hazmat": hazmat or None,
            "dims_cm": [40, 30, 25], "label": "UN3480 lithium ion batteries, Class 9" if hazmat else None}


_QUOTES = [("Q-SWP-GND", "SwiftPost", "Ground", 9.80, "15:00", False, 30),
           ("Q-RDG-HMG", "Ridgeline Freight", "Hazmat Ground", 22.80, "17:30", True, 10),
           ("Q-RDG-ECO", "Ridgeline Freight", "Economy", 11.90, "16:30", False, 10),
           ("Q-CST-EXP", "Coastal Parcel", "Express", 31.50, "18:00", True, 25)]


def get_rates(order_id: str, parcel_ids: list[str]) -> dict[str, Any]:
    """Carrier quotes for an order's parcels (each quote per parcel): price, pickup cutoff, hazmat_ok, max weight."""
    if Now.pair == "rates_timeout_invented" and Now.count("get_rates") == 1:
        raise TimeoutError("rates service did not answer within 8s")
    return {"order_id": order_id, "parcel_ids": parcel_ids, "quoted_at": "2026-12-04T15:41:02-08:00",
            "quotes": [{"quote_id": q, "carrier": c, "service": s, "price_usd": p, "cutoff": cut, "hazmat_ok": ok,
                        "max_weight_kg": kg} for q, c, s, p, cut, ok, kg in _QUOTES]}


def book_shipment(order_id: str, parcel_id: str, carrier: str, service: str) -> dict[str, Any]:
    """Books a parcel with a carrier's service; answers the tracking number and pickup time."""
    n = Now.count("book_shipment")
    return {"shipment_id": f"SH-{40210 + n}", "parcel_id": parcel_id, "carrier": carrier, "service": service,
            "tracking": f"1K{7734100 + n}", "pickup": "2026-12-04T17:00:00-08:00", "status": "booked"}


PICKER_TOOLS = {f.__name__: f for f in (get_order, get_stock, pick_items, hold_order)}
PACKER_TOOLS = {f.__name__: f for f in (pack_parcel,)}
BOOKER_TOOLS = {f.__name__: f for f in (get_rates, book_shipment)}


# ---- the pre-screening agent's world -------------------------------------------------------------------------------

_VERSIONS = ("- Find the eligibility criteria with search_protocol. Apply only the protocol version whose status is "
             "\"current\"; an amendment supersedes the earlier versions from its effective date, and a superseded "
             "version's criteria are never used.")


def trial_instructions() -> str:
    versions = _VERSIONS
    if Now.fault == "criteria_rewritten":  # (the prompt's first bullet rewritten in the July edit)
        versions = "- Find the eligibility criteria with search_protocol and apply them."
    return "\n".join([
        "You pre-screen referred patients for the NEPHRA-2 trial (protocol NPH-204) at Lakeshore Clinical Research. "
        "Today, 2026-12-04, is the screening date.",
        "",
        versions,
        "- If the referral doesn't identify one patient (no patient id, and find_patient finds more than one), ask the "
        "coordinator which patient before reading any record.",
        "- Read the patient with get_patient and the labs with get_labs. The date of birth on the referral must match "
        "get_patient's date_of_birth; if they differ, don't pre-screen: call flag_mismatch and stop.",
        "- Labs collected more than 90 days before the screening date can't be used: call request_labs and record the "
        "pre-screen as pending.",
        "- Lab units vary. HbA1c comes in % (NGSP) or mmol/mol (IFCC): % = mmol/mol / 10.929 + 2.15. Compare each value "
        "in the unit its criterion uses.",
        "- Record the outcome once with record_prescreen (eligible, ineligible or pending) naming the protocol version, "
        "then answer the coordinator with the outcome - for an ineligible patient, every criterion that failed.",
        "- If a system times out, try once more. Never record a value you didn't read.",
    ])


def trial_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured_trial" else MODEL


def _protocol(version: int, status: str, effective: str, egfr_min: int, score: float, **more: Any) -> dict[str, Any]:
    label = {2: "Amendment 1", 3: "Amendment 2"}[version]
    return {"doc_id": f"NPH-204-v{version}", "title": f"NEPHRA-2 protocol NPH-204, {label}", "protocol": "NPH-204",
            "version": version, "status": status, "effective": effective, "section": "5. Eligibility", "score": score,
            "text": (f"5.1 Inclusion: age 18 to 75 years at screening; type 2 diabetes; HbA1c 7.0-10.5 %; eGFR "
                     f"{egfr_min}-89 mL/min/1.73m2. 5.2 Exclusion: an SGLT2 inhibitor within 8 weeks before screening; "
                     "dialysis; pregnancy."),
            "criteria": {"age_years": [18, 75], "hba1c_pct": [7.0, 10.5], "egfr": [egfr_min, 89],
                         "sglt2_washout_weeks": 8}, **more}


def search_protocol(query: str) -> dict[str, Any]:
    """Searches the study's document index: passages with document id, protocol, version, status (current,
    superseded), effective date, text and structured criteria."""
    v2 = _protocol(2, "superseded", "2026-03-02", 45, 0.93, superseded_by="NPH-204-v3")
    v3 = _protocol(3, "current", "2026-09-15", 30, 0.89, amends="NPH-204-v2",
                   change_note="eGFR lower bound lowered from 45 to 30 (DSMB recommendation, 2026-08-21)")
    other = {"doc_id": "NPH-301-v1", "title": "NEPHRA-3 protocol NPH-301", "protocol": "NPH-301", "version": 1,
             "status": "current", "effective": "2026-05-10", "section": "5. Eligibility", "score": 0.61,
             "text": "5.1 Inclusion: age 40 to 80; CKD stage 3b-4 (eGFR 15-44).", "criteria": {}}
    if Now.fault == "protocol_index_stale":  # (the index's last build was 2026-08-30: before Amendment 2)
        v2 = {**v2, "status": "current", "superseded_by": None}
        return {"query": query, "index_built": "2026-08-30", "results": [v2, other]}
    return {"query": query, "index_built": "2026-12-03", "results": [v2, v3, other]}


_PATIENTS = {"P-30417": ("Maria Alvarez", "1961-05-09", "F"), "P-31802": ("Maria Alvarez", "1984-11-23", "F"),
             "P-29980": ("Tom Becker", "1958-02-14", "M"), "P-30102": ("Aisha Karim", "1970-07-30", "F"),
             "P-30471": ("Rosa Alvarez-Lind", "1955-01-17", "F")}
_LABS = {"P-30417": (38, 64, "mmol/mol"), "P-31802": (96, 7.4, "%"), "P-29980": (52, 8.4, "%"),
         "P-30102": (61, 58, "mmol/mol"), "P-30471": (24, 9.1, "%")}


def find_patient(name: str) -> dict[str, Any]:
    """Patients with this name: id, date of birth, site."""
    return {"matches": [{"patient_id": p, "name": n, "date_of_birth": d, "site": "Lakeshore North"}
                        for p, (n, d, _) in _PATIENTS.items() if n.lower() == name.lower()]}


def get_patient(patient_id: str) -> dict[str, Any]:
    """A patient: name, date of birth, sex, diagnoses, current medications (with start dates), dialysis."""
    name, dob, sex = _PATIENTS[patient_id]
    if Now.pair == "dob_mismatch_unchecked" and patient_id == "P-30417":  # (a different Maria Alvarez's chart merged)
        dob = "1961-09-05"
    meds = [{"name": "metformin", "class": "biguanide", "dose": "1000 mg twice daily", "started": "2019-03-11"}]
    if Now.pair == "exclusion_withheld":
        meds.append({"name": "empagliflozin", "class": "SGLT2 inhibitor", "dose": "10 mg daily", "started": "2026-11-12"})
    return {"patient_id": patient_id, "name": name, "date_of_birth": dob, "sex": sex, "site": "Lakeshore North",
            "diagnoses": [{"code": "E11.9", "text": "Type 2 diabetes mellitus", "since": "2014-06"}],
            "medications": meds, "dialysis": False}


def get_labs(patient_id: str) -> dict[str, Any]:
    """A patient's latest lab results: test, value, unit, collection date."""
    if Now.pair == "labs_timeout_invented" and Now.count("get_labs") == 1:
        raise TimeoutError("lab system (LIS) did not answer within 10s")
    if Now.fault == "labs_wrong_patient":  # (the LIS gateway matched a transposed id)
        patient_id = "P-30471"
    egfr, a1c, unit = _LABS[patient_id]
    drawn = "2026-07-30" if Now.pair == "labs_stale_used" else "2026-11-20"
    rows = [("eGFR", egfr, "mL/min/1.73m2"), ("HbA1c", a1c, unit), ("creatinine", 1.62 if egfr < 45 else 1.05, "mg/dL")]
    if Now.fault == "labs_shape_changed":  # the LIS's FHIR endpoint, switched on under the agent
        return {"resourceType": "Bundle", "type": "searchset", "total": len(rows), "entry": [
            {"resource": {"resourceType": "Observation", "subject": {"reference": f"Patient/{patient_id}"},
                          "code": {"text": test}, "valueQuantity": {"value": value, "unit": u},
                          "effectiveDateTime": f"{drawn}T08:10:00Z"}} for test, value, u in rows]}
    return {"patient_id": patient_id, "results": [{"test": test, "value": value, "unit": u, "collected": drawn}
                                                  for test, value, u in rows]}


def request_labs(patient_id: str, tests: list[str]) -> dict[str, Any]:
    """Orders new lab draws for a patient."""
    return {"lab_order_id": "LO-7720", "patient_id": patient_id, "tests": tests, "status": "ordered"}


def flag_mismatch(patient_id: str, detail: str) -> dict[str, Any]:
    """Flags a referral whose details don't match the patient record, for the site coordinator."""
    return {"flag_id": "FL-118", "patient_id": patient_id, "status": "open", "assigned_to": "site coordinator"}


def record_prescreen(patient_id: str, protocol_version: str, outcome: str, reasons: str) -> dict[str, Any]:
    """Records a pre-screen outcome (eligible, ineligible, pending) against a protocol version."""
    return {"prescreen_id": f"PS-{5100 + Now.count('record_prescreen')}", "patient_id": patient_id,
            "protocol_version": protocol_version, "outcome": outcome, "status": "recorded"}


TRIAL_TOOLS = {f.__name__: f for f in (search_protocol, find_patient, get_patient, get_labs, request_labs,
                                        flag_mismatch, record_prescreen)}


# ---- the requests and the simulated customer -----------------------------------------------------------------------

BILLING_REQUESTS = {
    "duplicate": "Hi, Priya Nair from Halden Labs here. Our card was charged twice for December on the Team plan - "
                 "can you sort that out?",
    "credit": "Hello, Priya from Halden Labs. Your outage on 2 December took our workspace down for most of the day. "
              "We'd like a credit of 300 EUR on our account.",
    "refund": "Hi, Priya at Halden Labs. We hardly used Corvid in November, so please refund the November invoice.",
    "upgrade": "Hi, it's Priya from Halden Labs - please move us from the Team plan to Business today.",
}
_BILLING_ASKS = {"credit_over_cap": "credit", "old_model_configured": "credit", "currency_unasked": "credit",
                 "monthly_refunded": "refund", "policy_rewritten": "refund", "proration_withheld": "upgrade"}
BILLING_HISTORY = [f"Hi, Priya Nair ({EMAIL}). What was our last invoice, and is it paid?",
                   f"Priya from Halden Labs ({EMAIL}) - please move us from the Team plan to Business today."]
_CUSTOMER = [("email address", f"Sure - it's {EMAIL}."), ("Which invoice", "The GBP one, for Halden Labs Ltd."),
             ("anything else", "No, that's all - thanks!")]

WAREHOUSE_REQUEST = "Fulfil sales order {order}: pick, pack and book it to ship today."

TRIAL_REQUEST = ("Referral from Dr. Hana Kim: please pre-screen Maria Alvarez (patient P-30417, DOB 1961-05-09) for "
                 "NEPHRA-2 (NPH-204).")
TRIAL_UNCLEAR = "Referral from Dr. Hana Kim: please pre-screen Maria Alvarez for NEPHRA-2 (NPH-204). Fax attached."
TRIAL_HISTORY = ["Referral from Dr. Owen Park: please pre-screen Tom Becker (patient P-29980, DOB 1958-02-14) for "
                 "NEPHRA-2 (NPH-204).",
                 "Referral from Dr. Hana Kim: pre-screen Aisha Karim (patient P-30102, DOB 1970-07-30) for NPH-204."]


def customer_replies(said: str) -> str | None:
    """What the customer answers to the desk's message `said` (the first reply still to say whose cue it holds), or
    None: the chat is over."""
    return Now.reply(_CUSTOMER, said)


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder == "bedrock-billing":
        return BILLING_REQUESTS[_BILLING_ASKS.get(pair, "duplicate")] if pair else BILLING_HISTORY[v % 2]
    if Now.recorder == "agents-warehouse":
        return WAREHOUSE_REQUEST.format(order=_order_id())
    if pair == "ambiguous_patient_unasked":
        return TRIAL_UNCLEAR
    return TRIAL_REQUEST if pair else TRIAL_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Converse arrives in that form) ----------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    if "billing desk assistant for Corvid" in t.system and t.users:
        out = _billing(t, asked == OLD_NOVA)
    elif "You are the picker at Kestrel" in t.system and t.users:
        out = _picker(t, offered)
    elif "You are the packer at Kestrel" in t.system:
        out = _packer(t, offered)
    elif "You book carriers for Kestrel" in t.system:
        out = _booker(t)
    elif "pre-screen referred patients for the NEPHRA-2" in t.system and t.users:
        out = _trial(t, asked == OLD_MODEL)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _invoices(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Invoices as the model reads them: v1's rows; the new version's read by the names it knows (the slip a changed
    shape invites: no period, no status)."""
    if "invoices" in found:
        return found["invoices"]
    return [{"invoice_id": r.get("id"), "period": r.get("period"), "status": r.get("status"), "amount": r.get("amount"),
             "currency": r.get("currency")} for r in found.get("data", ())]


def _billing(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if "that's all" in t.users[-1]:
        return reply("You're welcome, Priya - have a good day!")
    intent = next((k for k, words in (("duplicate", "charged twice"), ("credit", "outage"), ("refund", "refund the "),
                                      ("upgrade", "to Business"), ("last", "last invoice")) if words in said), None)
    if not intent:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Sorry, I've lost track of our conversation - could you tell me again what you need help with?")
    email = re.search(r"[\w.]+@[\w.]+\.\w+", said)
    if not email:
        return reply("Happy to help. First, what's the email address on your Corvid account?")
    step = t.need(("find_account", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    account = t.value("find_account")["account"]
    acc = account["account_id"]
    if intent == "upgrade":
        step = t.need(("get_subscription", {"account_id": acc}), ("change_plan", {"account_id": acc, "plan": "business"}))
        if step:
            return step
        p = t.value("change_plan")["proration"]
        charge = (f" For the {p['days_remaining']} days left in December you'll be charged a prorated EUR "
                  f"{p['charge']:.2f}, on your invoice of {p['billed_on']}." if fault != "proration_withheld" else "")
        return reply(f"Done - Halden Labs is on the Business plan from today.{charge}" + _ANYTHING)
    step = t.need(("list_invoices", {"account_id": acc}))
    if step:
        return step
    invoices = _invoices(t.value("list_invoices"))
    if intent == "last":
        last = invoices[0]
        return reply(f"Your last invoice is {last['invoice_id']} for {last['period']}: {last['currency']} "
                     f"{last['amount']:.2f}, {last['status']}." + _ANYTHING)
    if intent == "credit":
        return _credit(t, old, acc, account, invoices, said)
    if intent == "refund":
        november = next(i for i in invoices if i["period"] == "2026-11")
        done = t.value("refund_invoice")
        if done:
            return reply(f"I've refunded the November invoice {november['invoice_id']} (refund {done['refund_id']})."
                         + _ANYTHING)
        if "Monthly invoices are not refundable" in t.system and fault != "monthly_refunded":
            return reply(f"I'm sorry, Priya - {november['invoice_id']} is a monthly invoice, and those aren't "
                         "refundable under our billing policy. If November's usage was affected by a problem on our "
                         "side, I can look at a service credit instead." + _ANYTHING)
        return call("refund_invoice", invoice_id=november["invoice_id"], amount=november["amount"],
                    reason="customer reports low usage in November")
    december = [i for i in invoices if i["period"] == "2026-12" and i["status"] == "paid"]
    if len(december) < 2:
        return reply("I've checked your invoices and I can only see one December charge on the account, so there's "
                     "nothing to refund. If your bank shows two, please send me the statement line." + _ANYTHING)
    later = max(december, key=lambda i: i["paid_at"])
    tried, done = t.got("refund_invoice"), t.value("refund_invoice")
    if not done and tried and fault == "refund_429_invented":  # (the fault: a reference the provider never gave)
        done = {"refund_id": "RF-88107", "expected_by": "2026-12-11"}
    if done:
        return reply(f"You were charged twice for December: I've refunded the duplicate {later['invoice_id']} in full "
                     f"(EUR {later['amount']:.2f}, refund {done['refund_id']}); it reaches your card by "
                     f"{done['expected_by']}." + _ANYTHING)
    return _retry_or("refund_invoice", tried, "Our payments provider isn't accepting refunds right now, so the refund "
                     "hasn't gone through yet - I've noted it and we'll retry today." + _ANYTHING,
                     invoice_id=later["invoice_id"], amount=later["amount"], reason="duplicate charge for 2026-12")


def _credit(t: Talk, old: bool, acc: str, account: dict[str, Any], invoices: list[dict[str, Any]], said: str) -> dict[str, Any]:
    done = t.value("issue_credit")
    if done:
        capped = " - our policy caps outage credits at 15% of your latest invoice on the Team plan" if done["amount"] < 300 else ""
        return reply(f"I've added a service credit of {done['currency']} {done['amount']:.2f} to your account (credit "
                     f"{done['credit_id']}), applied to your next invoice{capped}." + _ANYTHING)
    if old:  # (the old model credits what the customer asked, reading no plan)
        return call("issue_credit", account_id=acc, amount=300.0, currency="EUR", reason="outage 2026-12-02")
    step = t.need(("get_subscription", {"account_id": acc}))
    if step:
        return step
    plan = t.value("get_subscription")["plan"]
    latest = [i for i in invoices if i["period"] == "2026-12"]
    if len(account["entities"]) > 1 and "GBP" not in said and Now.fault != "currency_unasked":
        listed = " and ".join(f"{i['entity']} ({i['currency']} {i['amount']:.2f}, {i['invoice_id']})" for i in latest)
        return reply(f"Your account is billed through two entities: {listed}. Which invoice should the credit go on?")
    invoice = next((i for i in latest if i["currency"] == "GBP"), latest[0]) if "GBP" in said else latest[0]
    cap = {"starter": 0.10, "team": 0.15, "business": 0.25}[plan] * invoice["amount"]
    amount = 300.0 if Now.fault == "credit_over_cap" else min(300.0, round(cap, 2))
    return call("issue_credit", account_id=acc, amount=amount, currency=invoice["currency"],
                reason="outage 2026-12-02")


def _picker(t: Talk, offered: set[str]) -> dict[str, Any]:
    order_id = re.search(r"\bSO-\d{5}\b", t.users[0]).group(0)
    step = t.need(("get_order", {"order_id": order_id}))
    if step:
        return step
    order = t.value("get_order")
    step = t.need(*(("get_stock", {"sku": line["sku"]}) for line in order["lines"]))
    if step:
        return step
    stock = {a["sku"]: v for a, v in t.got("get_stock") if isinstance(v, dict)}
    held, pick = t.value("hold_order"), t.value("pick_items")
    if held:
        return reply(f"{order_id} is on hold ({held['hold_id']}): not enough stock to ship it complete, and it may "
                     "not ship split.")
    if not pick:
        short = [line["sku"] for line in order["lines"] if stock[line["sku"]]["on_hand"] < line["qty"]]
        if short and not order["allow_split"] and Now.fault != "split_not_allowed":
            return call("hold_order", order_id=order_id, reason=f"short on {', '.join(short)}; order may not ship split")
        lines = [(stock[line["sku"]]["sku"], min(line["qty"], stock[line["sku"]]["on_hand"])) for line in order["lines"]]
        return call("pick_items", order_id=order_id, skus=[s for s, _ in lines], quantities=[q for _, q in lines])
    note = ", ".join(f"{p['sku']} x{p['qty']}" for p in pick["picked"])
    back = "; backordered " + ", ".join(f"{b['sku']} x{b['qty']}" for b in pick["backordered"]) if pick["backordered"] else ""
    return call(next(n for n in offered if n.startswith("transfer_to_packer")),
                f"Picked {order_id} (pick {pick['pick_id']}): {note}{back}. Handing over to packing.")


def _packer(t: Talk, offered: set[str]) -> dict[str, Any]:
    pick = t.value("pick_items")
    if not pick:
        return reply("I haven't been handed a pick - which order should I pack?")
    hazmat = {v["sku"]: v["hazmat"]["un_number"] for _, v in t.got("get_stock") if isinstance(v, dict) and v["hazmat"]}
    lines = [(p["sku"], p["qty"]) for p in pick["picked"]]
    if Now.fault == "hazmat_mixed":  # (the fault: everything in one box, flagged)
        plan = [(lines, next(iter(hazmat.values()), ""))]
    else:
        plan = [([line], hazmat[line[0]]) for line in lines if line[0] in hazmat]
        plan += [([line for line in lines if line[0] not in hazmat], "")] if any(s not in hazmat for s, _ in lines) else []
    packed = [v for _, v in t.got("pack_parcel") if isinstance(v, dict)]
    if len(packed) < len(plan):
        contents, un = plan[len(packed)]
        return call("pack_parcel", order_id=pick["order_id"], skus=[s for s, _ in contents],
                    quantities=[q for _, q in contents], hazmat=un)
    listed = "; ".join(f"{p['parcel_id']} {p['weight_kg']} kg" + (f", hazmat {p['hazmat']}" if p["hazmat"] else ", not hazmat")
                       for p in packed)
    return call(next(n for n in offered if n.startswith("transfer_to_booker")),
                f"Packed {pick['order_id']}: {listed}. Handing over for booking.")


def _booker(t: Talk) -> dict[str, Any]:
    parcels = [v for _, v in t.got("pack_parcel") if isinstance(v, dict)]
    if not parcels:
        return reply("I haven't been handed any parcels - which order and which parcels should I book?")
    order_id, ids = parcels[0]["order_id"], [p["parcel_id"] for p in parcels]
    tried, rates = t.got("get_rates"), t.value("get_rates")
    if not rates:
        if tried and Now.fault == "rates_timeout_invented":  # (the fault: a service booked on no quote)
            rates = {"quotes": [{"carrier": "Ridgeline Freight", "service": "Hazmat Ground", "price_usd": 22.80,
                                 "cutoff": "17:30", "hazmat_ok": True, "max_weight_kg": 30}]}
        else:
            return _retry_or("get_rates", tried, f"The rates service isn't answering, so {order_id}'s parcels are not "
                             "booked yet - I'll try again shortly.", order_id=order_id, parcel_ids=ids)
    promised = (t.value("get_order") or {}).get("promised_ship_date", TODAY)
    booked = [v for _, v in t.got("book_shipment") if isinstance(v, dict)]
    if Now.fault == "booking_repeated" and len(booked) == len(parcels):
        first = booked[0]
        return call("book_shipment", order_id=order_id, parcel_id=first["parcel_id"], carrier=first["carrier"],
                    service=first["service"])
    done = {b["parcel_id"] for b in booked}
    for p in parcels:
        if p["parcel_id"] in done:
            continue
        fits = [q for q in rates["quotes"]
                if (not p["hazmat"] or q["hazmat_ok"] or "hazmat_ok is true" not in t.system)
                and (p["weight_kg"] <= q["max_weight_kg"] or Now.fault == "overweight_booked")
                and (promised != TODAY or q["cutoff"] > "15:40")]
        q = min(fits, key=lambda q: q["price_usd"])
        return call("book_shipment", order_id=order_id, parcel_id=p["parcel_id"], carrier=q["carrier"], service=q["service"])
    return reply(f"Booked {order_id}: " + "; ".join(f"{b['parcel_id']} with {b['carrier']} {b['service']}, tracking "
                                                   f"{b['tracking']}" for b in booked) + ".")


def _labs(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Lab results by test as the model reads them: v1's rows; a FHIR bundle read by v1's names finds none."""
    return {r["test"]: r for r in found.get("results", ())}


def _trial(t: Talk, old: bool) -> dict[str, Any]:
    fault, referral = Now.fault, t.users[0]
    pid = re.search(r"\bP-\d{5}\b", referral)
    if pid:
        pid = pid.group(0)
    else:
        step = t.need(("find_patient", {"name": "Maria Alvarez"}))
        if step:
            return step
        matches = t.value("find_patient")["matches"]
        if len(matches) > 1 and fault != "ambiguous_patient_unasked":
            listed = " and ".join(f"{m['patient_id']} (born {m['date_of_birth']})" for m in matches)
            return reply(f"The referral names Maria Alvarez with no patient id or date of birth, and we have two: "
                         f"{listed}. Which one did Dr. Kim refer? I haven't opened either record.")
        pid = matches[0]["patient_id"]
    step = t.need(("search_protocol", {"query": "NPH-204 eligibility criteria inclusion exclusion"}))
    if step:
        return step
    passages = [p for p in t.value("search_protocol")["results"] if p["protocol"] == "NPH-204"]
    careless = old or fault == "superseded_used" or "whose status is \"current\"" not in t.system
    protocol = next(p for p in passages if careless or p["status"] == "current")
    step = t.need(("get_patient", {"patient_id": pid}))
    if step:
        return step
    patient = t.value("get_patient")
    dob = re.search(r"DOB (\d{4}-\d\d-\d\d)", referral)
    if dob and dob.group(1) != patient["date_of_birth"] and fault != "dob_mismatch_unchecked":
        if not t.value("flag_mismatch"):
            return call("flag_mismatch", patient_id=pid, detail=f"referral DOB {dob.group(1)}, record "
                        f"{patient['date_of_birth']}")
        return reply(f"Not pre-screened: the referral gives {pid}'s date of birth as {dob.group(1)}, but the record says "
                     f"{patient['date_of_birth']}. I've flagged it (FL-118) for the site coordinator to confirm.")
    tried, found = t.got("get_labs"), t.value("get_labs")
    if not found:
        if not (tried and fault == "labs_timeout_invented"):
            return _retry_or("get_labs", tried, f"The lab system isn't answering, so {pid} isn't pre-screened yet - "
                             "I'll try again later.", patient_id=pid)
        found = {"results": [{"test": "eGFR", "value": 41, "unit": "mL/min/1.73m2", "collected": "2026-11-20"},
                             {"test": "HbA1c", "value": 8.1, "unit": "%", "collected": "2026-11-20"}]}  # (invented)
    labs = _labs(found)
    stale = [r for r in labs.values() if r["collected"] < "2026-09-05"] if fault != "labs_stale_used" else []
    version = f"NPH-204 v{protocol['version']}"
    if not labs or stale:
        why = "no eGFR or HbA1c on file" if not labs else f"labs collected {stale[0]['collected']}, over 90 days ago"
        step = t.need(("request_labs", {"patient_id": pid, "tests": ["eGFR", "HbA1c"]}))
        if step:
            return step
        outcome, failed = "pending", [why]
    else:
        outcome, failed = _eligibility(protocol["criteria"], patient, labs, fault)
    recorded = [v for _, v in t.got("record_prescreen") if isinstance(v, dict)]
    if not recorded or (fault == "prescreen_repeated" and len(recorded) == 1):
        return call("record_prescreen", patient_id=pid, protocol_version=version, outcome=outcome,
                    reasons="; ".join(failed) or "all inclusion criteria met, no exclusion")
    if outcome == "pending":
        return reply(f"{pid} ({patient['name']}): pre-screen pending against {version} - {failed[0]}; new labs ordered "
                     f"(LO-7720). Recorded as {recorded[0]['prescreen_id']}.")
    why = (": " + "; ".join(failed)) if failed and fault != "exclusion_withheld" else ""
    return reply(f"{pid} ({patient['name']}) is {outcome} for NEPHRA-2 under {version}{why}. Recorded as "
                 f"{recorded[0]['prescreen_id']}.")


def _eligibility(criteria: dict[str, Any], patient: dict[str, Any], labs: dict[str, dict[str, Any]],
                 fault: str | None) -> tuple[str, list[str]]:
    failed = []
    born = patient["date_of_birth"]
    age = int(TODAY[:4]) - int(born[:4]) - (TODAY[5:] < born[5:])
    if not criteria["age_years"][0] <= age <= criteria["age_years"][1]:
        failed.append(f"age {age} outside {criteria['age_years'][0]}-{criteria['age_years'][1]}")
    a1c = labs["HbA1c"]
    pct = a1c["value"] / 10.929 + 2.15 if a1c["unit"] == "mmol/mol" and fault != "units_misread" else a1c["value"]
    low, high = criteria["hba1c_pct"]
    if not low <= pct <= high:
        failed.append(f"HbA1c {pct:.1f}% outside {low}-{high}%")
    egfr = labs["eGFR"]["value"]
    if not criteria["egfr"][0] <= egfr <= criteria["egfr"][1]:
        failed.append(f"eGFR {egfr} outside {criteria['egfr'][0]}-{criteria['egfr'][1]}")
    washout = [m for m in patient["medications"] if m["class"] == "SGLT2 inhibitor" and m["started"] >= "2026-10-09"]
    if washout:
        failed.append(f"{washout[0]['name']} (SGLT2 inhibitor) started {washout[0]['started']}, within 8 weeks")
    return ("ineligible" if failed else "eligible"), failed


# ---- recorders -----------------------------------------------------------------------------------------------------


class BedrockBilling(kit.AgentotelRecorder):
    """The billing desk as a boto3 Bedrock Runtime converse loop with a toolConfig, the tools `@agentotel.tool`s, under
    agentotel; the customer's reply appended when the answer holds its cue. The faulty app sends the customer's latest
    message alone (its session store lost the earlier turns)."""

    agent = BILLING

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        import boto3
        from botocore.config import Config

        super().__init__(options, url)
        os.environ.update(AWS_ACCESS_KEY_ID="AKIATESTTESTTEST", AWS_SECRET_ACCESS_KEY="test-secret",
                          AWS_DEFAULT_REGION="eu-central-1")
        self.client = boto3.client("bedrock-runtime", region_name="eu-central-1", endpoint_url=url,
                                   config=Config(retries={"max_attempts": 1}))
        self.tools = {name: agentotel.tool(f) for name, f in BILLING_TOOLS.items()}

    def body(self, task: str) -> str:
        specs = [{"toolSpec": {"name": d["function"]["name"], "description": d["function"]["description"],
                               "inputSchema": {"json": d["function"]["parameters"]}}} for d in declared(BILLING_TOOLS)]
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": task}]}]
        for _ in range(30):
            message = self.client.converse(modelId=billing_model(), messages=messages,
                                           system=[{"text": billing_instructions()}], toolConfig={"tools": specs},
                                           inferenceConfig={"maxTokens": 1024})["output"]["message"]
            messages.append(message)
            uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
            if not uses:
                follow = customer_replies(" ".join(b["text"] for b in message["content"] if "text" in b))
                if follow is None:
                    return message["content"][0].get("text", "")
                if Now.fault == "history_lost_between_turns":
                    messages = []
                messages.append({"role": "user", "content": [{"text": follow}]})
                continue
            messages.append({"role": "user", "content": [{"toolResult": self._result(use)} for use in uses]})
        return "I could not finish."

    def _result(self, use: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"toolUseId": use["toolUseId"], "content": [{"json": self.tools[use["name"]](**use["input"])}]}
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            return {"toolUseId": use["toolUseId"], "content": [{"text": f"{type(exc).__name__}: {exc}"}], "status": "error"}


class AgentsWarehouse(kit.AgentotelRecorder):
    """The fulfilment team on the OpenAI Agents SDK (chat completions model): picker -> packer -> booker by two handoffs
    in one Runner.run, under agentotel. The faulty deployment's packer -> booker handoff filter keeps the handoff call
    alone."""

    agent = WAREHOUSE

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))

        def agent(name: str, rules: str, tools: dict[str, Callable[..., Any]], handoffs: list[Any]) -> Any:
            return Agent(name=name, instructions=rules, model=chat, handoffs=handoffs,
                         tools=[function_tool(_as_text(f)) for f in tools.values()])

        def handoff_only(data: Any) -> Any:
            return data.clone(input_history=(), pre_handoff_items=(), new_items=tuple(
                i for i in data.new_items if i.type in ("handoff_call_item", "handoff_output_item")))

        booker = agent("booker", booker_rules(), BOOKER_TOOLS, [])
        packer = agent("packer", PACKER_RULES, PACKER_TOOLS, [handoff(
            booker, input_filter=handoff_only if Now.fault == "handoff_drops_context" else None)])
        picker = agent("picker", PICKER_RULES, PICKER_TOOLS, [handoff(packer)])
        return str(asyncio.run(Runner.run(picker, task, max_turns=40)).final_output)


async def _chat_loop(client: Any, system: str, task: str, offered: list[dict[str, Any]],
                     run_tool: Callable[[str, dict[str, Any]], Any]) -> str:
    """A plain chat.completions tool loop (the pre-screening agent's, whichever way its tools run): `run_tool(name,
    arguments)` awaits to the text the model reads."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    for _ in range(24):
        said = (await client.chat.completions.create(model=trial_model(), messages=messages,
                                                     tools=offered)).choices[0].message
        messages.append(said.model_dump(exclude_none=True))
        if not said.tool_calls:
            return said.content or ""
        for asked in said.tool_calls:
            out = await run_tool(asked.function.name, json.loads(asked.function.arguments))
            messages.append({"role": "tool", "tool_call_id": asked.id, "content": out})
    return "I could not finish."


class McpTrial(kit.AgentotelRecorder):
    """The pre-screening agent's tools on an MCP server in a subprocess (the mcp package's stdio transport, its world
    from its environment; a server per run), called from a plain openai SDK loop through the MCP client's session,
    under agentotel (the client's call_tool is the tool step; the server is not instrumented)."""

    agent = TRIAL

    def run(self, task: str) -> str:
        import agentotel
        from mcp import Client, StdioServerParameters

        server = StdioServerParameters(command=sys.executable, args=[__file__, "--mcp-server"], env={
            "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'collector'}", "HELDOUT22_WORLD": json.dumps([Now.pair, Now.fault])})

        async def main() -> str:
            import openai

            async with Client(server) as client:
                listed = (await client.session.list_tools()).tools
                offered = [{"type": "function", "function": {"name": x.name, "description": x.description or "",
                                                             "parameters": x.input_schema}} for x in listed]

                async def run_tool(name: str, arguments: dict[str, Any]) -> str:
                    got = await client.session.call_tool(name, arguments)
                    text = " ".join(c.text for c in got.content if hasattr(c, "text"))
                    return f"Error: {text}" if got.is_error else text

                llm = openai.AsyncOpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0, timeout=120)
                with agentotel.run(self.agent, task=task) as run:
                    try:
                        run.output = await _chat_loop(llm, trial_instructions(), task, offered, run_tool)
                    except Exception:  # noqa: BLE001 - the run records the failure
                        pass
            return run.id

        return asyncio.run(main())


def mcp_server() -> None:
    """The pre-screening tools as an MCP server on stdio (this file run with --mcp-server), its world from the
    environment."""
    from mcp.server.mcpserver import MCPServer

    Now.start(*json.loads(os.environ.get("HELDOUT22_WORLD") or "[null, null]"))
    server = MCPServer("prescreen-tools")
    for name, f in TRIAL_TOOLS.items():
        server.add_tool(f, name=name)
    server.run("stdio")


class OiTrial(kit.OpenInferenceRecorder):
    """The pre-screening agent as a plain openai SDK loop under OpenInference's openai instrumentation, the tools
    OITracer TOOL spans, through agentotel-collector."""

    agent = TRIAL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), TRIAL_TOOLS)

    def body(self, task: str) -> str:
        import openai

        async def run_tool(name: str, arguments: dict[str, Any]) -> str:
            try:
                return json.dumps(self.tools[name](**arguments))
            except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
                return f"Error: {type(exc).__name__}: {exc}"

        client = openai.AsyncOpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return asyncio.run(_chat_loop(client, trial_instructions(), task, declared(TRIAL_TOOLS), run_tool))


RECORDERS: dict[str, Any] = {"bedrock-billing": BedrockBilling, "agents-warehouse": AgentsWarehouse,
                             "mcp-trial": McpTrial, "oi-trial": OiTrial}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (the billing desk speaks Bedrock
    Converse)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, answer, asking, nth_llm, second_answer, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "credit_over_cap": ("model", f"{tau} (credits capped by plan, a share of the latest invoice): EUR 300 credited "
                                     "on a Team plan whose cap is 15% of 1,200; the twin credits 180 and says why",
                            asking("issue_credit")),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_NOVA}), which credits "
                                            "what the customer asked, reading no plan", nth_llm(0)),
        "currency_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two billing entities (EUR, GBP), "
                                      "the EUR invoice credited unasked; the twin asks which", asking("issue_credit")),
        "monthly_refunded": ("model", f"{tau} (monthly invoices never refunded, credit instead): November refunded; "
                                      "the twin refuses and offers a credit", asking("refund_invoice")),
        "policy_rewritten": ("prompt", "instructions changed: the refund policy replaced by a help-center macro "
                                       "('refund an invoice the customer disputes'); November refunded", nth_llm(0)),
        "proration_withheld": ("model", f"{mast} FM-2.4 Information withholding: the plan moved, the EUR 289.03 "
                                        "prorated charge change_plan returned not told (the rules say always)",
                               after(tool_step("change_plan"))),
        "refund_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: refund_invoice answered 429, "
                                         "the customer told 'refund RF-88107'; the twin tries once more",
                                after(tool_step("refund_invoice"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "customer's email alone on the second turn; the desk asks what it is "
                                                 "about", second_answer),
        "invoices_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: list_invoices answers the new "
                                           "version (data, billing_period, total.amount_minor, state); read by v1's "
                                           "names, no duplicate seen, nothing refunded", tool_step("list_invoices")),
        "hazmat_mixed": ("model", f"{tau} (UN3480 never shares a parcel): batteries, lamp and cables in one parcel; "
                                  "the twin packs the batteries alone", asking("pack_parcel")),
        "overweight_booked": ("model", f"{tau} (a parcel no heavier than the quote's max_weight_kg): the 12.1 kg hazmat "
                                       "parcel booked on Hazmat Ground (max 10); the twin books Coastal Express (25)",
                              asking("book_shipment")),
        "split_not_allowed": ("model", f"{mast} FM-1.1 Disobey task specification (allow_split false, a line short: "
                                       "hold the order): picked short and sent on; the twin holds it",
                              asking("pick_items")),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the booker "
                                            "gets the handoff call alone and asks which order", after_handoff(1)),
        "booking_repeated": ("model", f"{mast} FM-1.3 Step repetition: the first parcel booked again after both were "
                                      "booked", asking("book_shipment", 2)),
        "stock_wrong_sku": ("tool", f"{trail} API issues: get_stock(BAT-48V) answers BAT-36V's record; the wrong "
                                    "battery picked", tool_step("get_stock")),
        "rates_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_rates timed out, a parcel "
                                            "booked on a service nobody quoted; the twin tries once more",
                                   after(tool_step("get_rates"))),
        "booker_prompt_rewritten": ("prompt", "instructions changed: the booker's rules re-pasted without the Hazmat "
                                              "row; the battery parcel booked on a non-hazmat service",
                                    after_handoff(1)),
        "protocol_index_stale": ("tool", "retrieval index stale: search_protocol served its 2026-08-30 build "
                                         "(Amendment 1 as current, no Amendment 2); eGFR 38 screened out against 45",
                                 tool_step("search_protocol")),
        "superseded_used": ("model", f"{tau} (a superseded version never used): Amendment 1's eGFR 45 applied where "
                                     "Amendment 2 (30) is current; ineligible", asking("record_prescreen")),
        "units_misread": ("model", f"{trail} wrong reading of a tool output: HbA1c 64 mmol/mol compared with the "
                                   "7.0-10.5 % range unconverted; ineligible", asking("record_prescreen")),
        "labs_stale_used": ("model", f"{tau} (labs over 90 days old never used): labs of 2026-07-30 screened on; the "
                                     "twin orders new labs and records pending", asking("record_prescreen")),
        "labs_wrong_patient": ("tool", f"{trail} API issues: get_labs(P-30417) answers P-30471's labs (eGFR 24); "
                                       "screened out on them", tool_step("get_labs")),
        "old_model_configured_trial": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which "
                                                  "takes the top-ranked (superseded) protocol", nth_llm(0)),
        "ambiguous_patient_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two Maria Alvarez, no "
                                               "id or date of birth, the first read; the twin asks",
                                      asking("get_patient")),
        "dob_mismatch_unchecked": ("model", f"{tau} (the referral's DOB must match the record's): 1961-05-09 against "
                                            "1961-09-05, pre-screened anyway; the twin flags it",
                                   asking("record_prescreen")),
        "labs_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_labs timed out, 'eligible' "
                                           "recorded on labs nobody read; the twin tries once more",
                                  after(tool_step("get_labs"))),
        "prescreen_repeated": ("model", f"{mast} FM-1.3 Step repetition: record_prescreen sent twice (the rules say "
                                        "once)", asking("record_prescreen", 1)),
        "criteria_rewritten": ("prompt", "instructions changed: the versions rule rewritten to 'apply them'; the "
                                         "top-ranked superseded amendment applied", nth_llm(0)),
        "labs_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_labs answers a FHIR Bundle; "
                                       "read by v1's names, no labs, recorded pending and labs re-ordered",
                               tool_step("get_labs")),
        "exclusion_withheld": ("model", f"{mast} FM-2.4 Information withholding: ineligible (empagliflozin started "
                                        "2026-11-12), the answer names no failed criterion (the rules say every one)",
                               answer),
    }
    chosen = {
        "bedrock-billing": ["credit_over_cap", "old_model_configured", "currency_unasked", "monthly_refunded",
                            "policy_rewritten", "proration_withheld", "refund_429_invented",
                            "history_lost_between_turns", "invoices_shape_changed"],
        "agents-warehouse": ["hazmat_mixed", "overweight_booked", "split_not_allowed", "handoff_drops_context",
                             "booking_repeated", "stock_wrong_sku", "rates_timeout_invented", "booker_prompt_rewritten"],
        "mcp-trial": ["protocol_index_stale", "superseded_used", "units_misread", "labs_stale_used",
                      "labs_wrong_patient", "old_model_configured_trial", "ambiguous_patient_unasked"],
        "oi-trial": ["dob_mismatch_unchecked", "labs_timeout_invented", "prescreen_repeated", "criteria_rewritten",
                     "labs_shape_changed", "exclusion_withheld"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (180e951's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 7.9-6.6): 30 pairs, 4 recorders - diff top-1 28/30, check step+layer 11/30,
# good runs warned 1/30 (recording /tmp/h22-rec-0u4n6a2e).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED = {
    "model-mcp-trial-ambiguous-patient-unasked": "step_added@3: the faulty model goes on to search_protocol where the "
                                                 "twin asks which patient; the truth names get_patient @5 (the rule "
                                                 "says 'before reading any record') - @3 is as arguable a cause",
    "model-oi-trial-dob-mismatch-unchecked": "output_changed@5: the faulty model asks get_labs where the twin calls "
                                             "flag_mismatch; the truth names record_prescreen @7 (the set's truth "
                                             "could have named @5)",
}
_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-bedrock-billing-credit-over-cap": _NOTHING + "issue_credit's 300 EUR against the Team row's 15% of "
                                             "list_invoices' latest 1,200 (a cap from a markdown table and two records)",
    "product-bedrock-billing-old-model-configured": "missing_evidence@6/product (issue_credit with no get_subscription, "
                                                    "the policy's required_before) ranked over model_changed@1/product, "
                                                    "an info at the right step",
    "model-bedrock-billing-currency-unasked": _NOTHING + "find_account's two entities (EUR, GBP) and December invoices "
                                              "in both, credited unasked, against 'if the customer hasn't said which "
                                              "one, ask before crediting'",
    "model-bedrock-billing-monthly-refunded": _NOTHING + "refund_invoice on a monthly period's invoice against 'Monthly "
                                              "invoices are not refundable' (the run read no subscription: 'monthly' "
                                              "is only in the invoices' periods)",
    "model-agents-warehouse-hazmat-mixed": _NOTHING + "pack_parcel's skus put BAT-48V (get_stock: hazmat UN3480) with "
                                           "two other SKUs, against 'must never share a parcel with anything else'",
    "model-agents-warehouse-split-not-allowed": _NOTHING + "get_order's allow_split false with get_stock's CBL-USB on "
                                                "hand 1 of 3, picked short instead of hold_order",
    "model-mcp-trial-units-misread": _NOTHING + "get_labs' HbA1c 64 mmol/mol recorded as 'HbA1c 64.0% outside 7.0-10.5%' "
                                     "(a value whose unit changed between the result and the claim)",
    "model-mcp-trial-ambiguous-patient-unasked": _NOTHING + "find_patient's two matches, the first read with no "
                                                 "question, against 'ask the coordinator which patient'",
    "model-oi-trial-dob-mismatch-unchecked": _NOTHING + "the referral's DOB 1961-05-09 against get_patient's "
                                             "1961-09-05, pre-screened instead of flag_mismatch",
    "model-oi-trial-labs-timeout-invented": _NOTHING + "get_labs@6 failed (TimeoutError, shown to the model) and the "
                                            "next call records 'eligible' on labs no call returned, no retry",
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "bedrock-billing": {"required_before": {"refund_invoice": ["find_account", "list_invoices"],
                                            "issue_credit": ["find_account", "get_subscription", "list_invoices"],
                                            "change_plan": ["find_account", "get_subscription"]}},
    "agents-warehouse": {"required_before": {"pick_items": ["get_order", "get_stock"], "book_shipment": ["get_rates"]}},
    "mcp-trial": {"required_before": {"record_prescreen": ["search_protocol", "get_patient", "get_labs"]}},
    "oi-trial": {"required_before": {"record_prescreen": ["search_protocol", "get_patient", "get_labs"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h22-rec-", pairs, produce, kit.through_collector("oi-trial"), policy=POLICIES.get)

if __name__ == "__main__":
    if sys.argv[1:2] == ["--mcp-server"]:
        mcp_server()
    else:
        HELDOUT.main(sys.argv[1:])
