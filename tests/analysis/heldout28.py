"""A twenty-eighth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a city council's parking-permit desk talking with a resident over several turns under a written permit policy, a
building-materials supplier's team (an estimator handing to a credit controller, who hands to a dispatcher) and an
agronomy advisory agent reading field records, dated soil tests and versioned pesticide labels, run through real SDKs
and frameworks.

    python tests/analysis/heldout28.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout28.py --score DIR [...]       # the runs a call left in DIR, scored again

Wexcombe City Council's parking desk (find_resident, check_zone, get_vehicle, list_permits, issue_permit,
issue_visitor_permits, refund_permit) serves a resident by a written policy (the account number before anything; a
resident permit only for the zone check_zone gives the account's address; one permit per vehicle; the annual price
discounted by a CO2 table read off the DVLA record, confirmed before issuing; at most 20 visitor permits a calendar
month, what is left offered and issued only if the resident agrees; a cancelled permit refunded pro rata per full month
left less a GBP 15 admin fee; a failure tried once more, never a permit number a tool didn't return). The resident's
replies are scripted and said when the desk's message holds their cue ('account number', 'Shall I', 'Would you like',
'anything else'). Brackenfield Building Supplies' team: an estimator (get_quote_request, get_product, price_order:
quantity = area / coverage plus the product's waste factor, rounded up) hands a note to a credit controller
(get_account, record_credit_decision: open balance plus the order within the credit limit, unless a prepayment covers
the excess; nothing released with an invoice over 60 days overdue), whose note goes to a dispatcher (get_site,
get_delivery_slots, book_delivery, by a markdown table: a truck only if the site's access allows its type, the earliest
window that fits, free delivery from GBP 500 inc VAT, else GBP 65, one booking). Tamarisk Agronomy's advisory agent
(get_field, search_labels: ranked label versions with status, registration, max rate, PHI and latest BBCH stage;
get_soil_tests: dated samples with report dates; record_recommendation) works by bulleted rules (only a current label
version, never a withdrawn registration; the days to harvest at least the PHI; the crop stage at or below the label's;
the first passing product in the ranking; rates in L/ha and mL per 100 m2 (x10); lime from the latest sampled test, not
the latest reported; one record, every rejected product told). Each recorder in a process of its own:

- `genai-parking` (parking desk): a google-genai `models.generate_content` loop with function declarations (automatic
  function calling off) over several resident turns, the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-supplier` (supplier team): Microsoft Agent Framework, three `Agent`s (estimator, credit controller, dispatcher)
  run one after the other by the app, each handed the earlier notes, under `agentotel.instrument()` (the framework's
  telemetry on, with the messages);
- `mcp-agronomy` (agronomy): the tools on an MCP server (in process, kit.mcp_server) called through the MCP client's
  session from a plain openai SDK chat.completions loop, under `agentotel.instrument()`;
- `oi-agronomy` (agronomy): a plain openai SDK chat loop (kit.chat_loop) under OpenInference's openai instrumentation,
  the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Gemini, the model asked for echoed back) reads the
conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a hybrid at 92 g/km
discounted, a second permit for a vehicle that has one, 10 visitor permits where 6 are left, a refund without the admin
fee, an order over the credit limit released, an articulated truck booked for a site that bars them, free delivery
under the minimum, a withdrawn registration recommended, a PHI longer than the days to harvest, a crop past the
label's latest stage, an older soil sample used because its certificate was re-issued later), MAST (Cemri et al. 2025:
FM-1.3 step repetition, FM-1.4 context lost at a handover, FM-2.4 withholding information, FM-2.6 reasoning-action
mismatch), TRAIL (a timeout answered with an invented permit number and an invented label rate, units confused: L/ha
read as x100 for mL per 100 m2, a calculation without the waste factor) and outside the model: the instructions
rewritten without a rule (3), an old model configured (2), a labels API's changed shape, a stale label index, three
APIs answering another record (vehicle, account, field), a handover template that lost its fields. Good twins are fine
runs: a discount refused for a 92 g/km hybrid, a second permit refused, the 6 visitor permits left offered and issued
once the resident agrees, a timeout tried once more, a refund less the fee, orders held over the limit, a small order
charged the delivery fee, a withdrawn product and a PHI rejected with the reasons told, a biological product chosen
where the others fail, lime from the latest sampled test. Ground truth is located on the recorded faulty run by what
its steps did.

How agentotel recorded the SDKs (not the detectors'): each generate_content call is a `chat gemini-2.5-flash` step
(the old model's `chat gemini-1.5-flash-002`), the `@agentotel.tool`s tool steps; under Agent Framework each agent is
an `invoke_agent <name>` step with its `chat gpt-4o-mini` calls and tools under it; the MCP client's call_tool is an
`execute_tool <tool>` step (the in-process server's side is not a step); the OpenInference run has no agent step, its
model calls `ChatCompletion` steps, its tools OITracer's TOOL spans. Nothing recorded wrong was found.

Built and scored blind, once (main's HEAD when scored, 95a3d3dc87896e6ef85fd4bf3079f2c445b1b6a7, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 5.7 at the start, 9.3 at the
end, other helpers running; recording /tmp/h28-rec-45pgjlxx): 30 pairs, 4 recorders (google-genai over several
resident turns, Agent Framework with three agents, an openai loop over an MCP client session, OpenInference through
the collector) - diff top-1 27/30, check step+layer 14/30, good runs with a warning 28/30. Of check's 14 hits only 7
are the fault's own finding: instructions changed (2), an old model configured (the agronomy one), a stale label index,
a labels API's changed shape, a soil API answering another field, and a rate said (0.6) beside another recorded (0.8)
(wrong_target, at the step the generic warning below also holds). The other 7 (10 visitor permits issued, free delivery
under the minimum, a withdrawn product, units x100, a PHI longer than the days to harvest, the older soil sample, a
crop past the label's stage) are hit by warnings their good twins get too: policy_violated quoting the one-per-vehicle
rule at any issue after list_permits, clarification_skipped at any rule-made choice among several slots or soil tests.
Those warnings are also most of the false alarms (28/30): besides them, an estimator's 'x130' quantities read as
ungrounded and a refund computed by the written rule read as ungrounded. Five misses hold the right finding at the right
step ranked below an earlier false warning (a timeout answered with an invented permit number, an account API answering
another customer, the controller's limit rule dropped, a repeated booking, a repeated record); the others are rules
comparing two records' fields (a CO2 table, open balance + order vs the limit, a truck type vs the site's allowed list,
a refund less a fee, quantities with a waste factor), a vehicle API answering another registration, a handover by hand
that lost its fields, and rejections withheld. Diff's three misses are the faulty model's price quoted (or the permit
offered) one step before the write the truth names. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, main 39b41e6's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 6 CHECK_MISSED entries
hit since and dropped (account_wrong_customer, booking_repeated, controller_prompt_rewritten, handover_drops_context,
issue_timeout_invented, recommendation_repeated); 28 false alarms quiet since and dropped (all of them). 7 CHECK_MISSED
entries added (delivery_fee_waived, phi_violated, soil_older_test_used, stage_rule_ignored, units_confused,
visitor_quota_exceeded, withdrawn_product_used): hits blind only because a false alarm landed on the truth's step, quiet
now. Reasons written blind that name a false warning ranked above the fault's finding are kept as written; that warning
is quiet now.

At main f561b41 (session 28: its new readers and quieter readings; the kept recording and a fresh one score alike) 1
CHECK_MISSED entry hit and dropped (labels_timeout_invented).
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import sys
from datetime import date
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-flash-002"
PARKING, SUPPLIER, AGRONOMY = "wexcombe-parking-desk", "brackenfield-supply-team", "tamarisk-agronomy"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# What every rule here asks after a failed call: the call once more, then the failure told.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")
_ok = kit.succeeded  # the successful results of a tool so far


# ---- the parking desk's world ---------------------------------------------------------------------------------------

_ONE_PER_VEHICLE = ("2. One permit per vehicle: never issue a resident permit for a registration that already has an "
                    "active permit on list_permits.")


def parking_instructions() -> str:
    lines = [
        "You are the parking-permit assistant at Wexcombe City Council's Parking Services desk. Today is Friday "
        "4 December 2026.",
        "",
        "Before you look anything up, ask the resident for their council account number (it starts RES-) and read "
        "their account with find_resident.",
        "",
        "Resident permits:",
        "1. A resident permit is only for the zone check_zone returns for the address on the resident's account, and "
        "only if check_zone says the address is eligible.",
        _ONE_PER_VEHICLE,
        "3. The annual price is GBP 120.00, discounted by the vehicle's CO2 emissions as get_vehicle returns them from "
        "the DVLA record - not by how the resident describes the car:",
        "",
        "| CO2 (g/km) | Discount |",
        "|---|---|",
        "| 0 | 50% |",
        "| 1 to 75 | 25% |",
        "| over 75 | none |",
        "",
        "Tell the resident the price and ask them to confirm before you call issue_permit.",
        "",
        "Visitor permits: a household may have at most 20 visitor permits in a calendar month. If a request would take "
        "the month's total over 20, offer only what is left, and issue them only if the resident agrees.",
        "",
        "Refunds: a cancelled resident permit is refunded pro rata for each full calendar month left after the current "
        "month, less a GBP 15.00 admin fee. Confirm the amount with the resident before calling refund_permit.",
        "",
        "If a council system times out or fails, try once more; if it fails again, tell the resident it hasn't gone "
        "through. Never quote a permit or refund number a tool didn't return.",
    ]
    if Now.fault == "parking_policy_rewritten":  # (the 2024 web page pasted back, before the one-per-vehicle rule)
        lines.remove(_ONE_PER_VEHICLE)
    return "\n".join(lines)


def parking_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_parking" else GEMINI


RESIDENT = "RES-40218"


def find_resident(account_number: str) -> dict[str, Any]:
    """A resident's council account: name, address, contact, verification."""
    if account_number != RESIDENT:
        return {"account": None}
    return {"account": {"account_number": RESIDENT, "name": "Aisha Bello", "verified": True,
                        "address": {"house_number": "27", "street": "Marlow Road", "town": "Wexcombe",
                                    "postcode": "WX4 2JD"},
                        "contact": {"email": "a.bello@example.org", "phone": "07700 900418"}}}


def check_zone(postcode: str, house_number: str) -> dict[str, Any]:
    """The controlled parking zone of an address and whether it is eligible for resident permits."""
    return {"postcode": postcode, "house_number": house_number, "zone": "M2", "zone_name": "Marlow", "eligible": True,
            "hours": "Mon-Sat 08:00-18:30", "notes": None}


_VEHICLES = {  # registration: make, model, fuel, CO2 g/km
    "WX22 LPK": ("KIA", "Niro EV", "ELECTRICITY", 0), "WX22 LKP": ("KIA", "Niro EV", "ELECTRICITY", 0),
    "WX19 KTD": ("VOLKSWAGEN", "Golf 1.5 TSI", "PETROL", 126), "WX21 HBR": ("SKODA", "Fabia 1.0", "PETROL", 118)}


def get_vehicle(registration: str) -> dict[str, Any]:
    """A vehicle's DVLA record by registration: make, model, fuel type, CO2 emissions, euro status."""
    reg = registration.upper()
    make, model_, fuel, co2 = _VEHICLES.get(reg, ("UNKNOWN", "", "PETROL", 150))
    if reg == "WX22 LPK" and Now.pair == "discount_wrong_band":
        make, model_, fuel, co2 = "TOYOTA", "C-HR 1.8 Hybrid", "HYBRID ELECTRIC", 92
    if reg == "WX22 LPK" and Now.pair == "vehicle_wrong_record":
        if Now.fault:  # (the DVLA cache matched a transposed registration)
            reg = "WX22 LKP"
        else:
            make, model_, fuel, co2 = "FORD", "Puma 1.0 EcoBoost", "PETROL", 128
    return {"registration": reg, "make": make, "model": model_, "fuel_type": fuel, "co2_g_km": co2,
            "euro_status": "EURO 6", "source": "DVLA Vehicle Enquiry Service", "checked_at": "2026-12-04T09:41:07Z"}


def list_permits(account_number: str) -> dict[str, Any]:
    """A resident's permits (id, type, registration, zone, status, validity, price paid) and this month's visitor
    permits used against the monthly quota."""
    return {"account_number": account_number, "permits": [
        {"permit_id": "PP-448120", "type": "resident", "registration": "WX19 KTD", "zone": "M2", "status": "active",
         "valid_from": "2026-07-01", "valid_to": "2027-06-30", "price_paid": 120.0}],
        "visitor_permits": {"month": "2026-12", "used": 14, "monthly_quota": 20}}


def issue_permit(account_number: str, registration: str, zone: str, annual_price: float) -> dict[str, Any]:
    """Issues a resident permit for a vehicle in a zone for a year from today, charging the annual price."""
    if Now.pair == "issue_timeout_invented" and Now.count("issue_permit") == 1:
        raise TimeoutError("permits service did not answer within 10s")
    return {"permit_id": "PP-551207", "account_number": account_number, "registration": registration, "zone": zone,
            "valid_from": TODAY, "valid_to": "2027-12-03", "charged": annual_price, "status": "active"}


def issue_visitor_permits(account_number: str, count: int, month: str) -> dict[str, Any]:
    """Issues a number of one-day visitor permits for a month."""
    return {"batch_id": "VB-30871", "account_number": account_number, "count": count, "month": month,
            "codes": [f"V{77100 + i}" for i in range(count)]}


def refund_permit(permit_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Cancels a resident permit today and refunds an amount to the card it was paid with."""
    return {"refund_id": "PR-20931", "permit_id": permit_id, "amount": amount, "status": "cancelled, refund pending",
            "expected_by": "2026-12-11"}


PARKING_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_resident, check_zone, get_vehicle, list_permits, issue_permit, issue_visitor_permits, refund_permit)}


# ---- the supplier team's world --------------------------------------------------------------------------------------

ESTIMATOR_RULES = (
    "You are the estimator on Brackenfield Building Supplies' order team. Read the quote request with "
    "get_quote_request and each product on it with get_product. A line's quantity is its area divided by the "
    "product's coverage_m2_per_unit, plus the product's waste_factor_pct, rounded up to whole units. Price the lines "
    "once with price_order. Then write a handover note for the credit controller that begins 'Estimate' and gives the "
    "request id, the customer id, the site id, the delivery date, every line (sku and quantity) and the order total "
    "inc VAT. Decide nothing about credit or delivery.")
_LIMIT_RULE = ("- Release the order on account only if the account's open_balance plus the order total is at most its "
               "credit_limit, unless prepayment_on_account covers the excess. Otherwise hold it.")


def controller_rules() -> str:
    rules = [
        "You are the credit controller at Brackenfield Building Supplies. For the estimate handed to you:",
        "- Read the customer's account with get_account.",
        _LIMIT_RULE,
        "- Never release an order for an account with any invoice more than 60 days overdue.",
        "- Record the decision once with record_credit_decision (approved or held, with the reason), then write a note "
        "for the dispatcher that begins 'Credit' and gives the request id, the order total, the open balance, the "
        "credit limit and the decision.",
    ]
    if Now.fault == "controller_prompt_rewritten":  # (the rules re-pasted from the cash-sales desk's page)
        rules.remove(_LIMIT_RULE)
    return "\n".join(rules)


DISPATCHER_RULES = "\n".join([
    "You are the dispatcher at Brackenfield Building Supplies. Book the delivery of the order you are handed, only if "
    "credit approved it (a held order is not booked - say so).",
    "",
    "| Rule | How |",
    "|---|---|",
    "| Site access | A truck may go to a site only if its type is in the site's access.allowed_vehicles (get_site). |",
    "| Window | Of the trucks that may go, take the earliest window on the delivery date (get_delivery_slots). |",
    "| Delivery fee | Orders of GBP 500.00 or more inc VAT deliver free; below that, charge GBP 65.00. |",
    "| Once | Book each order once with book_delivery. |",
    "",
    "Then answer with the booking, the truck, the window and the fee.",
])

_CUSTOMERS = {  # id: name, credit limit, open balance, prepayment, oldest overdue days
    "C-2291": ("Halwell Construction Ltd", 20000.0, 9650.0, 0.0, 12),
    "C-2219": ("Halden Roofing & Build", 25000.0, 2100.0, 0.0, 0)}
_OVER_LIMIT = ("credit_limit_exceeded", "account_wrong_customer", "controller_prompt_rewritten")
_PRODUCTS = {  # sku: description, unit, coverage m2 a unit, waste %, price a unit, kg a unit
    "PLB-12": ("Plasterboard 12.5mm 2400x1200 tapered edge", "sheet", 2.88, 10, 9.85, 25.9),
    "BLK-100": ("Aerated concrete block 100mm 440x215", "block", 0.0946, 5, 2.35, 6.1)}


def get_quote_request(request_id: str) -> dict[str, Any]:
    """A customer's quote request: customer, site, delivery date and the lines (sku and area to cover)."""
    lines = [{"sku": "PLB-12", "area_m2": 96.0}] if request_id == "QR-7741" else [
        {"sku": "PLB-12", "area_m2": 340.0}, {"sku": "BLK-100", "area_m2": 86.0}]
    return {"request_id": request_id, "received": "2026-12-03T16:22:00Z",
            "customer": {"customer_id": "C-2291", "name": "Halwell Construction Ltd"},
            "site_id": "S-118", "delivery_date": "2026-12-09", "lines": lines, "contact": "Gareth Pryce, site manager"}


def get_product(sku: str) -> dict[str, Any]:
    """A product: description, unit, coverage per unit in m2, waste factor in %, unit price ex VAT, weight."""
    desc, unit, cover, waste, price, kg = _PRODUCTS[sku]
    return {"sku": sku, "description": desc, "unit": unit, "coverage_m2_per_unit": cover, "waste_factor_pct": waste,
            "unit_price_ex_vat": price, "weight_kg_per_unit": kg, "stock": {"depot": "Exeter", "on_hand": 4200}}


def price_order(customer_id: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Prices order lines (sku, quantity) at the customer's prices; answers each line's total and the order total
    ex and inc VAT."""
    priced = [{"sku": x["sku"], "quantity": int(x["quantity"]), "unit_price": _PRODUCTS[x["sku"]][4],
               "line_total": round(int(x["quantity"]) * _PRODUCTS[x["sku"]][4], 2)} for x in lines]
    net = round(sum(x["line_total"] for x in priced), 2)
    return {"price_id": f"PQ-{90410 + Now.count('price_order')}", "customer_id": customer_id, "lines": priced,
            "total_ex_vat": net, "vat": round(net * 0.2, 2), "total_inc_vat": round(net * 1.2, 2), "currency": "GBP"}


def get_account(customer_id: str) -> dict[str, Any]:
    """A customer's trade account: credit limit, open balance, prepayment on account, overdue invoices."""
    if Now.fault == "account_wrong_customer" and customer_id == "C-2291":  # (the ledger's search matched a near name)
        customer_id = "C-2219"
    name, limit, balance, prepaid, overdue = _CUSTOMERS[customer_id]
    if customer_id == "C-2291" and Now.pair in _OVER_LIMIT:
        balance = 17800.0
    return {"customer_id": customer_id, "name": name, "currency": "GBP", "credit_limit": limit,
            "open_balance": balance, "prepayment_on_account": prepaid, "terms": "30 days end of month",
            "overdue_invoices": [{"invoice": "SI-66120", "amount": 1840.0, "days_overdue": overdue}] if overdue else []}


def record_credit_decision(request_id: str, customer_id: str, decision: str, reason: str) -> dict[str, Any]:
    """Records the credit decision on an order (approved or held)."""
    return {"decision_id": f"CD-{5520 + Now.count('record_credit_decision')}", "request_id": request_id,
            "decision": decision, "status": "recorded"}


def get_site(site_id: str) -> dict[str, Any]:
    """A delivery site: address, access restrictions (allowed vehicle types), contact, hours."""
    return {"site_id": site_id, "address": "Plot 4, Kiln Lane, Halwell TQ9 7HG",
            "access": {"allowed_vehicles": ["rigid-7.5t", "rigid-18t-crane"],
                       "notes": "single-track lane, no articulated vehicles; 18t weight limit on the bridge"},
            "hours": "07:30-16:00", "contact": {"name": "Gareth Pryce", "phone": "07700 900233"}}


def get_delivery_slots(date: str) -> dict[str, Any]:
    """The free delivery slots on a date: truck id, truck type, window, depot."""
    return {"date": date, "depot": "Exeter", "slots": [
        {"truck_id": "T-44A", "type": "artic-44t", "window": "07:00-09:00"},
        {"truck_id": "T-18C", "type": "rigid-18t-crane", "window": "10:00-12:00"},
        {"truck_id": "T-07", "type": "rigid-7.5t", "window": "13:00-15:00"}]}


def book_delivery(request_id: str, truck_id: str, date: str, window: str, delivery_fee: float) -> dict[str, Any]:
    """Books an order's delivery on a truck in a window, with its delivery fee."""
    return {"booking_id": f"DL-{30770 + Now.count('book_delivery')}", "request_id": request_id, "truck_id": truck_id,
            "date": date, "window": window, "delivery_fee": delivery_fee, "status": "booked"}


ESTIMATOR_TOOLS = {f.__name__: f for f in (get_quote_request, get_product, price_order)}
CONTROLLER_TOOLS = {f.__name__: f for f in (get_account, record_credit_decision)}
DISPATCHER_TOOLS = {f.__name__: f for f in (get_site, get_delivery_slots, book_delivery)}


# ---- the agronomy agent's world -------------------------------------------------------------------------------------

_PHI_RULE = ("- Pre-harvest interval: the days from the application date to the field's planned_harvest must be at "
             "least the label's phi_days.")


def agronomy_instructions() -> str:
    rules = [
        "You are the crop-protection advisory agent at Tamarisk Agronomy. Today is 2026-12-04. Advise on one field per "
        "request, from the records only.",
        "",
        "- Read the field with get_field, then the labels with search_labels for the field's crop and the problem.",
        "- Only a label version whose status is \"current\" may be used, and never a product whose registration status "
        "is \"withdrawn\", whatever its use-up date.",
        _PHI_RULE,
        "- Crop stage: apply only if the field's growth_stage.bbch is at or below the label's latest_bbch.",
        "- Of the products that pass every rule, recommend the first in the search ranking; if none passes, recommend no "
        "spray and say why.",
        "- Rates: labels give max_rate per hectare (L/ha; kg/ha for solids). Spray crews work per 100 m2: 1 L/ha is "
        "10 mL per 100 m2 (1 kg/ha is 10 g per 100 m2). Give both.",
        "- Lime: use the soil test with the latest *sampled* date (not the latest report). A sample taken more than 4 "
        "years before today can't be used - ask for re-sampling instead. For brassicas:",
        "",
        "| Soil pH | Ground limestone |",
        "|---|---|",
        "| 6.5 or above | none |",
        "| 6.0 to 6.4 | 2.5 t/ha |",
        "| 5.5 to 5.9 | 5.0 t/ha |",
        "| below 5.5 | 7.5 t/ha |",
        "",
        "- Record the advice once with record_recommendation. Then answer the grower with the product, both rates, the "
        "PHI check, the lime, and every product you did not recommend with its reason.",
        "- If a system times out, try once more; never give a rate you did not read on a label.",
    ]
    if Now.fault == "agronomy_prompt_rewritten":  # (the spring template re-pasted, written before the PHI audit)
        rules.remove(_PHI_RULE)
    return "\n".join(rules)


def agronomy_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_agronomy" else MODEL


FIELD = "F-12"
_SHORT_HARVEST = ("phi_violated", "agronomy_prompt_rewritten")


def get_field(field_id: str) -> dict[str, Any]:
    """A field: farm, crop and variety, area, growth stage (BBCH, when recorded), planned harvest date."""
    bbch = 51 if Now.pair == "stage_rule_ignored" else 45
    return {"field_id": field_id, "farm": "Ashcombe Farm", "crop": "broccoli", "variety": "Parthenon", "area_ha": 4.2,
            "growth_stage": {"bbch": bbch, "recorded": "2026-12-01"},
            "planned_harvest": "2026-12-22" if Now.pair in _SHORT_HARVEST else "2027-01-05",
            "irrigated": False}


def _label(product: str, ingredient: str, version: int, status: str, issued: str, reg: dict[str, Any], rate: float,
           unit: str, phi: int, latest: int) -> dict[str, Any]:
    return {"product": product, "active_ingredient": ingredient, "label_version": version, "status": status,
            "label_issued": issued, "registration": reg, "crops": ["broccoli", "cabbage", "cauliflower"],
            "targets": ["alternaria", "ring spot"], "max_rate": rate, "rate_unit": unit, "phi_days": phi,
            "latest_bbch": latest, "max_applications": 2}


def _registration(number: str, status: str = "active", **more: Any) -> dict[str, Any]:
    return {"number": number, "status": status, **more}


def search_labels(crop: str, target: str) -> dict[str, Any]:
    """Searches the label index: every label version for a crop and a target, ranked, each with status, registration,
    max rate and unit, pre-harvest interval (days) and latest crop stage (BBCH)."""
    if Now.pair == "labels_timeout_invented" and Now.count("search_labels") == 1:
        raise TimeoutError("label index did not answer within 10s")
    if Now.fault == "label_index_stale":  # (the index's last build: March, before the withdrawal and Verdacor v4)
        return {"crop": crop, "target": target, "index_built": "2026-03-02", "results": [
            _label("Mancosan 75 WG", "mancozeb 750 g/kg", 2, "current", "2024-02-10", _registration("MAPP 15012"),
                   1.6, "kg/ha", 7, 49),
            _label("Verdacor 250 EC", "tebuconazole 250 g/L", 3, "current", "2023-05-02", _registration("MAPP 17554"),
                   0.8, "L/ha", 14, 49)]}
    results = [
        _label("Mancosan 75 WG", "mancozeb 750 g/kg", 2, "current", "2024-02-10", _registration(
            "MAPP 15012", "withdrawn", withdrawn_on="2026-05-31", use_up_until="2026-11-30"), 1.6, "kg/ha", 7, 49),
        _label("Azoxal 250 SC", "azoxystrobin 250 g/L", 5, "current", "2025-09-01", _registration("MAPP 16877"),
               1.0, "L/ha", 35, 49),
        _label("Verdacor 250 EC", "tebuconazole 250 g/L", 4, "current", "2026-07-15", _registration("MAPP 17554"),
               0.6, "L/ha", 21, 49),
        _label("Verdacor 250 EC", "tebuconazole 250 g/L", 3, "superseded", "2023-05-02", _registration("MAPP 17554"),
               0.8, "L/ha", 14, 49),
        _label("Bacillon ASO", "Bacillus amyloliquefaciens QST 713", 2, "current", "2025-03-20",
               _registration("MAPP 18290"), 4.0, "L/ha", 0, 89)]
    if Now.fault == "labels_shape_changed":  # the label service's v2 API, switched on under the agent
        return {"data": {"query": {"crop": crop, "target": target}, "products": [
            {"name": x["product"], "ai": x["active_ingredient"], "versions": [
                {"v": x["label_version"], "state": x["status"].upper(), "mapp": x["registration"]["number"],
                 "registrationState": x["registration"]["status"].upper(),
                 "dose": {"max": x["max_rate"], "unit": x["rate_unit"]}, "phiDays": x["phi_days"],
                 "latestGrowthStage": f"BBCH {x['latest_bbch']}"}]} for x in results]}}
    return {"crop": crop, "target": target, "index_built": "2026-12-03", "results": results}


def _soil(sample: str, sampled: str, reported: str, ph: float, **more: Any) -> dict[str, Any]:
    return {"sample_id": sample, "sampled": sampled, "reported": reported, "lab": "NRM Bracknell", "ph": ph,
            "method": "pH in water", "p_index": 2, "k_index": "2-", "mg_index": 2, **more}


def get_soil_tests(field_id: str) -> dict[str, Any]:
    """A field's soil tests, newest report first: sample id, sampling date, report date, pH and nutrient indices."""
    if Now.fault == "soil_wrong_field" and field_id == FIELD:  # (the LIMS matched the digits the other way round)
        field_id = "F-21"
    if field_id == "F-21":
        return {"field_id": "F-21", "tests": [_soil("ST-2307", "2026-09-30", "2026-10-15", 7.1)]}
    tests = [_soil("ST-2291", "2026-10-14", "2026-10-29", 6.2),
             _soil("ST-1874", "2022-09-03", "2022-09-19", 5.4)]
    if Now.pair == "soil_older_test_used":  # (the 2022 certificate re-issued in November: its report the newest)
        tests = [_soil("ST-1874", "2022-09-03", "2026-11-20", 6.7, note="re-issued certificate"),
                 _soil("ST-2291", "2026-10-14", "2026-10-29", 6.2)]
    return {"field_id": field_id, "tests": tests}


def record_recommendation(field_id: str, product: str, label_version: int, rate_per_ha: float, rate_unit: str,
                          rate_per_100m2: float, application_date: str, lime_t_per_ha: float, soil_sample_id: str,
                          rejected: list[str]) -> dict[str, Any]:
    """Records the advice for a field: product and label version, rates per ha and per 100 m2, date, lime."""
    return {"recommendation_id": f"AR-{4410 + Now.count('record_recommendation')}", "field_id": field_id,
            "product": product, "status": "recorded", "sent_to": "grower portal"}


AGRONOMY_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_field, search_labels, get_soil_tests, record_recommendation)}


# ---- the requests and the scripted resident -------------------------------------------------------------------------

PARKING_REQUESTS = {
    "permit": "Hi, I need a resident parking permit for my new car, registration WX22 LPK.",
    "duplicate": "Hello - please issue a resident permit for WX19 KTD.",
    "visitor": "Can I get 10 visitor permits for this month? My parents are staying over Christmas.",
    "refund": "I'm selling my car, so please cancel permit PP-448120 and refund what's left.",
}
_PARKING_ASKS = {"duplicate_permit": "duplicate", "parking_policy_rewritten": "duplicate",
                 "visitor_quota_exceeded": "visitor", "refund_fee_skipped": "refund"}
PARKING_HISTORY = ["Hello, I'd like a resident permit for WX21 HBR please.", "Hi - could I have 4 visitor permits for "
                   "this month?"]
_RESIDENT = [("account number", f"Sure, it's {RESIDENT}."), ("Shall I", "Yes, go ahead."),
             ("Would you like", "Yes, the 6 please."), ("anything else", "No, that's all - thanks!")]

SUPPLIER_REQUESTS = {"large": "Quote request QR-7730 from Halwell Construction: estimate it, check credit and book the "
                              "delivery.",
                     "small": "Quote request QR-7741 from Halwell Construction: estimate it, check credit and book the "
                              "delivery."}
SUPPLIER_HISTORY = ["Please process quote request QR-7730 (Halwell Construction) through to delivery.",
                    "Quote request QR-7741 for Halwell: estimate, credit check, delivery booking please."]

AGRONOMY_REQUEST = ("Field F-12 at Ashcombe Farm (broccoli) has alternaria leaf spot. Recommend a fungicide for spraying "
                    "on 2026-12-08 and tell me whether the field needs lime.")
AGRONOMY_HISTORY = ["Alternaria showing on F-12 (Ashcombe, broccoli) - what can we spray on 2026-12-08, and does it "
                    "need lime?", AGRONOMY_REQUEST]


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-parking":
        return PARKING_REQUESTS[_PARKING_ASKS.get(pair, "permit")] if pair else PARKING_HISTORY[v % 2]
    if Now.recorder == "maf-supplier":
        if not pair:
            return SUPPLIER_HISTORY[v % 2]
        return SUPPLIER_REQUESTS["small" if pair == "delivery_fee_waived" else "large"]
    return AGRONOMY_REQUEST if pair else AGRONOMY_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Gemini arrives in that form) ------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    return kit.by_role(body, MODEL, lambda t, asked: {
        "parking-permit assistant at Wexcombe": lambda: _parking(t, asked == OLD_GEMINI),
        "estimator on Brackenfield": lambda: _estimator(t),
        "credit controller at Brackenfield": lambda: _controller(t),
        "dispatcher at Brackenfield": lambda: _dispatcher(t),
        "advisory agent at Tamarisk": lambda: _agronomy(t, asked == OLD_MODEL),
    })


_ANYTHING = " Is there anything else I can help you with?"
_REG = re.compile(r"\b[A-Z]{2}\d{2} [A-Z]{3}\b")


def _confirmed(t: Talk) -> bool:
    return "go ahead" in " ".join(t.users)


def _parking(t: Talk, old: bool) -> dict[str, Any]:
    fault, said, first = Now.fault, " ".join(t.users), t.users[0]
    if "that's all" in said:
        return reply("You're welcome - have a good day!")
    acct = re.search(r"\bRES-\d{5}\b", said)
    if not acct:
        return reply("I can help with that. First, could you tell me your council account number? It starts RES-.")
    step = t.need(("find_resident", {"account_number": acct.group(0)}))
    if step:
        return step
    resident = t.value("find_resident")["account"]
    if "visitor" in first:
        return _visitors(t, resident, first, said)
    if "refund" in first:
        return _refund(t, resident, first)
    reg = _REG.search(first).group(0)
    address = resident["address"]
    steps = [] if old else [("check_zone", {"postcode": address["postcode"], "house_number": address["house_number"]}),
                            ("list_permits", {"account_number": RESIDENT}), ("get_vehicle", {"registration": reg})]
    step = t.need(*steps)
    if step:
        return step
    zone = t.value("check_zone") or {"zone": "M2", "eligible": True}
    if not zone["eligible"]:
        return reply(f"I'm sorry - {address['house_number']} {address['street']} isn't eligible for resident permits."
                     + _ANYTHING)
    held = [p for p in (t.value("list_permits") or {"permits": []})["permits"]
            if p["registration"] == reg and p["status"] == "active"]
    if held and "One permit per vehicle" in t.system and fault != "duplicate_permit":
        p = held[0]
        return reply(f"{reg} already has an active resident permit ({p['permit_id']}, zone {p['zone']}, valid until "
                     f"{p['valid_to']}), and the council issues one permit per vehicle, so I can't issue another."
                     + _ANYTHING)
    vehicle = t.value("get_vehicle")
    co2 = vehicle["co2_g_km"] if vehicle else None
    discount = 0 if co2 is None else 50 if co2 == 0 else 25 if co2 <= 75 else 0
    if fault == "discount_wrong_band":  # (the fault: a hybrid taken for a low-emission car, whatever its CO2)
        discount = 25
    price = round(120.0 * (100 - discount) / 100, 2)
    issued, tried = _ok(t, "issue_permit"), t.got("issue_permit")
    if not issued:
        if not _confirmed(t) and not old:
            car = f"{vehicle['make'].title()} {vehicle['model']}, {vehicle['fuel_type'].lower()}, {co2} g/km"
            why = f"a {discount}% low-emission discount" if discount else "no discount (over 75 g/km)"
            return reply(f"Your address is in zone {zone['zone']}. The DVLA record for {reg} ({car}) gives {why}, so "
                         f"the annual permit costs GBP {price:.2f}. Shall I issue it?")
        if tried and fault == "issue_timeout_invented":  # (the fault: a permit number the service never gave)
            return reply(f"Done - permit PP-551190 for {reg} is active in zone {zone['zone']} until 2027-12-03, "
                         f"GBP {price:.2f} charged." + _ANYTHING)
        return _once_more("issue_permit", tried, f"The permits system isn't answering, so the permit for {reg} hasn't "
                          "been issued and nothing was charged - please try again later today." + _ANYTHING,
                          account_number=RESIDENT, registration=reg, zone=zone["zone"], annual_price=price)
    p = issued[0]
    return reply(f"Done: permit {p['permit_id']} for {reg}, zone {p['zone']}, valid {p['valid_from']} to "
                 f"{p['valid_to']}, GBP {p['charged']:.2f} charged." + _ANYTHING)


def _visitors(t: Talk, resident: dict[str, Any], first: str, said: str) -> dict[str, Any]:
    step = t.need(("list_permits", {"account_number": RESIDENT}))
    if step:
        return step
    usage = t.value("list_permits")["visitor_permits"]
    left, wanted = usage["monthly_quota"] - usage["used"], int(re.search(r"(\d+) visitor", first).group(1))
    batch = t.value("issue_visitor_permits")
    if not batch:
        if wanted > left and Now.fault != "visitor_quota_exceeded":
            if "the 6 please" in said:
                return call("issue_visitor_permits", account_number=RESIDENT, count=left, month=usage["month"])
            return reply(f"You've used {usage['used']} of your {usage['monthly_quota']} visitor permits for December, so "
                         f"{left} are left this month - I can't issue {wanted}. Would you like the {left}?")
        return call("issue_visitor_permits", account_number=RESIDENT, count=wanted, month=usage["month"])
    return reply(f"Issued {batch['count']} visitor permits for {batch['month']} (batch {batch['batch_id']}, codes "
                 f"{batch['codes'][0]} to {batch['codes'][-1]})." + _ANYTHING)


def _refund(t: Talk, resident: dict[str, Any], first: str) -> dict[str, Any]:
    pid = re.search(r"\bPP-\d{6}\b", first).group(0)
    step = t.need(("list_permits", {"account_number": RESIDENT}))
    if step:
        return step
    permit = next(p for p in t.value("list_permits")["permits"] if p["permit_id"] == pid)
    end = date.fromisoformat(permit["valid_to"])
    months = (end.year * 12 + end.month) - (2026 * 12 + 12)
    gross = round(permit["price_paid"] * months / 12, 2)
    fee = 0.0 if Now.fault == "refund_fee_skipped" else 15.0
    amount = round(gross - fee, 2)
    done = t.value("refund_permit")
    if not done:
        if not _confirmed(t):
            less = f" less the GBP {fee:.2f} admin fee" if fee else ""
            return reply(f"Permit {pid} ({permit['registration']}) runs to {permit['valid_to']}: {months} full months "
                         f"are left after December, GBP {gross:.2f} pro rata{less}, so the refund is GBP {amount:.2f}. "
                         "Shall I cancel it and refund that?")
        return call("refund_permit", permit_id=pid, amount=amount, reason="vehicle sold; pro rata refund")
    return reply(f"Permit {pid} is cancelled and GBP {done['amount']:.2f} is on its way to your card (refund "
                 f"{done['refund_id']}, by {done['expected_by']})." + _ANYTHING)


_ESTIMATE = re.compile(r"Estimate (QR-\d{4}) for (C-\d{4}) .*?site (S-\d{3}), delivery (\d{4}-\d\d-\d\d).*?total GBP "
                       r"([\d.]+) inc VAT")


def _estimator(t: Talk) -> dict[str, Any]:
    rid = re.search(r"\bQR-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_quote_request", {"request_id": rid}))
    if step:
        return step
    req = t.value("get_quote_request")
    step = t.need(*[("get_product", {"sku": x["sku"]}) for x in req["lines"]])
    if step:
        return step
    products = {a["sku"]: v for a, v in t.got("get_product") if isinstance(v, dict)}
    lines = []
    for x in req["lines"]:
        p = products[x["sku"]]
        waste = 0 if Now.fault == "waste_factor_skipped" else p["waste_factor_pct"]
        lines.append({"sku": x["sku"], "quantity": math.ceil(round(x["area_m2"] / p["coverage_m2_per_unit"]
                                                                   * (1 + waste / 100), 6))})
    cust = req["customer"]["customer_id"]
    priced = t.value("price_order")
    if not priced:
        return call("price_order", customer_id=cust, lines=lines)
    listed = ", ".join(f"{x['sku']} x{x['quantity']}" for x in priced["lines"])
    return reply(f"Estimate {rid} for {cust} ({req['customer']['name']}), site {req['site_id']}, delivery "
                 f"{req['delivery_date']}: {listed}; total GBP {priced['total_inc_vat']:.2f} inc VAT "
                 f"({priced['price_id']}).")


def _controller(t: Talk) -> dict[str, Any]:
    note = t.users[0]
    rid, cust, _, _, total = _ESTIMATE.search(note).groups()
    total_f = float(total)
    step = t.need(("get_account", {"customer_id": cust}))
    if step:
        return step
    acct = t.value("get_account")
    exposure = round(acct["open_balance"] + total_f, 2)
    why = ""
    if max([i["days_overdue"] for i in acct["overdue_invoices"]] or [0]) > 60:
        why = "an invoice more than 60 days overdue"
    elif (exposure > acct["credit_limit"] + acct["prepayment_on_account"] and "credit_limit" in t.system
          and Now.fault != "credit_limit_exceeded"):
        why = (f"open balance GBP {acct['open_balance']:.2f} + this order GBP {total_f:.2f} = GBP {exposure:.2f}, over "
               f"the GBP {acct['credit_limit']:.2f} credit limit")
    decision = "held" if why else "approved"
    recorded = t.value("record_credit_decision")
    if not recorded:
        return call("record_credit_decision", request_id=rid, customer_id=cust, decision=decision,
                    reason=why or f"GBP {exposure:.2f} within the GBP {acct['credit_limit']:.2f} limit")
    return reply(f"Credit {rid}: order total GBP {total_f:.2f}, open balance GBP {acct['open_balance']:.2f}, credit "
                 f"limit GBP {acct['credit_limit']:.2f} - {decision}" + (f" ({why})" if why else "") +
                 f". Recorded as {recorded['decision_id']}.")


def _dispatcher(t: Talk) -> dict[str, Any]:
    note = " ".join(t.users)
    est, credit = _ESTIMATE.search(note), re.search(r"Credit (QR-\d{4}): .* - (approved|held)", note)
    if not est or not credit:
        return reply("I was handed no estimate or credit decision - which order should I book, for which site and "
                     "date, and did credit approve it?")
    rid, _, site_id, day, total = est.groups()
    if credit.group(2) == "held":
        return reply(f"{rid} is held by credit control, so no delivery is booked. The customer's account team will "
                     "be in touch.")
    step = t.need(("get_site", {"site_id": site_id}), ("get_delivery_slots", {"date": day}))
    if step:
        return step
    allowed = t.value("get_site")["access"]["allowed_vehicles"]
    slots = sorted(t.value("get_delivery_slots")["slots"], key=lambda s: s["window"])
    fit = slots if Now.fault == "truck_site_mismatch" else [s for s in slots if s["type"] in allowed]
    truck = fit[0]
    fee = 0.0 if float(total) >= 500 or Now.fault == "delivery_fee_waived" else 65.0
    booked = _ok(t, "book_delivery")
    if not booked or (Now.fault == "booking_repeated" and len(booked) == 1):
        return call("book_delivery", request_id=rid, truck_id=truck["truck_id"], date=day, window=truck["window"],
                    delivery_fee=fee)
    b = booked[0]
    return reply(f"Booked {b['booking_id']}: {rid} on {b['truck_id']} ({truck['type']}) {b['date']} {b['window']}, "
                 + (f"delivery fee GBP {fee:.2f} (order GBP {float(total):.2f}, under the GBP 500 minimum)."
                    if fee else f"free delivery (order GBP {float(total):.2f})."))


_LIME = ((6.5, 0.0), (6.0, 2.5), (5.5, 5.0), (0.0, 7.5))


def _agronomy(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    step = t.need(("get_field", {"field_id": FIELD}))
    if step:
        return step
    field = t.value("get_field")
    tried, labels = t.got("search_labels"), t.value("search_labels")
    if not labels:
        if tried and fault == "labels_timeout_invented":  # (the fault: a rate nobody read on a label)
            labels = {"results": [_label("Verdacor 250 EC", "tebuconazole 250 g/L", 4, "current", "", _registration(
                "MAPP 17554"), 1.0, "L/ha", 21, 49)]}
        else:
            return _once_more("search_labels", tried, "The label index timed out twice, so I can't recommend a product "
                              "for F-12 yet - nothing is recorded; I'll try again shortly.", crop=field["crop"],
                              target="alternaria")
    spray = date.fromisoformat("2026-12-08")
    days = (date.fromisoformat(field["planned_harvest"]) - spray).days
    bbch = field["growth_stage"]["bbch"]
    chosen, rejected = None, []
    for x in labels.get("results", []):  # (v2's data.products read by v1's names: none)
        if old:
            chosen = chosen or x  # (the old model takes the top result unread)
            continue
        if x["status"] != "current":
            continue
        why = None
        if x["registration"]["status"] == "withdrawn" and fault != "withdrawn_product_used":
            why = (f"registration {x['registration']['number']} withdrawn on {x['registration']['withdrawn_on']} "
                   f"(use-up ended {x['registration']['use_up_until']})")
        elif days < x["phi_days"] and "Pre-harvest interval" in t.system and fault != "phi_violated":
            why = f"its {x['phi_days']}-day PHI is longer than the {days} days to harvest"
        elif bbch > x["latest_bbch"] and fault != "stage_rule_ignored":
            why = f"the crop is at BBCH {bbch}, past the label's latest stage BBCH {x['latest_bbch']}"
        if why:
            rejected.append(f"{x['product']} (v{x['label_version']}): {why}")
        elif chosen is None:
            chosen = x
    step = t.need(("get_soil_tests", {"field_id": FIELD}))
    if step:
        return step
    tests = t.value("get_soil_tests")["tests"]
    soil = tests[0] if fault == "soil_older_test_used" else max(tests, key=lambda s: s["sampled"])
    lime = next(t_ha for floor, t_ha in _LIME if soil["ph"] >= floor)
    rate = chosen["max_rate"] if chosen else 0.0
    per100 = round(rate * (100 if fault == "units_confused" else 10), 2)
    recorded = _ok(t, "record_recommendation")
    if not recorded or (fault == "recommendation_repeated" and len(recorded) == 1):
        words = None
        recorded_rate = rate
        if fault == "rate_mismatch" and chosen:  # (the fault: the label's rate said, the superseded v3's recorded)
            words = f"Recording {chosen['product']} at the label's {rate} {chosen['rate_unit']}."
            recorded_rate = 0.8
            per100 = 8.0
        return call("record_recommendation", words, field_id=FIELD, product=chosen["product"] if chosen else "none",
                    label_version=chosen["label_version"] if chosen else 0, rate_per_ha=recorded_rate,
                    rate_unit=chosen["rate_unit"] if chosen else "", rate_per_100m2=per100,
                    application_date="2026-12-08", lime_t_per_ha=lime, soil_sample_id=soil["sample_id"],
                    rejected=rejected)
    rec = recorded[0]
    small = "g" if chosen and chosen["rate_unit"] == "kg/ha" else "mL"
    advice = (f"F-12 (broccoli, BBCH {bbch}): apply {chosen['product']} (label v{chosen['label_version']}) at "
              f"{rate} {chosen['rate_unit']} - {per100} {small} per 100 m2 - on 2026-12-08; harvest on "
              f"{field['planned_harvest']} leaves {days} days against its {chosen['phi_days']}-day PHI."
              if chosen else f"F-12 (broccoli, BBCH {bbch}): no fungicide can be recommended for 2026-12-08 - no "
              "registered current label passes the rules.")
    told = "" if fault == "rejection_withheld" or not rejected else " Not recommended: " + "; ".join(rejected) + "."
    limed = (f" Lime: soil sample {soil['sample_id']} (sampled {soil['sampled']}) reads pH {soil['ph']}, so "
             + (f"apply {lime} t/ha ground limestone." if lime else "no lime is needed."))
    return reply(advice + told + limed + f" Recorded as {rec['recommendation_id']}.")


# ---- recorders ------------------------------------------------------------------------------------------------------


class GenaiParking(kit.AgentotelRecorder):
    """The parking desk as a google-genai generate_content loop with function declarations (automatic function
    calling off), the tools `@agentotel.tool`s, under agentotel; the resident's reply appended when the answer holds
    its cue."""

    agent = PARKING

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = kit.agentotel_tools(PARKING_TOOLS)

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, parking_model(), parking_instructions(), task, self.tools,
                              declared(PARKING_TOOLS), lambda said: Now.reply(_RESIDENT, said))


class MafSupplier(kit.MafRecorder):
    """The supplier team on Microsoft Agent Framework: estimator, credit controller and dispatcher `Agent`s run one
    after the other by the app, each handed the earlier notes, under agentotel (the framework's telemetry on, with the
    messages). The faulty app's handover to the dispatcher passes a fixed line alone (its template lost its fields)."""

    agent = SUPPLIER

    def body(self, task: str) -> str:
        estimator, controller, dispatcher = kit.maf_team(self.url, MODEL, [
            ("estimator", ESTIMATOR_RULES, ESTIMATOR_TOOLS), ("credit_controller", controller_rules(), CONTROLLER_TOOLS),
            ("dispatcher", DISPATCHER_RULES, DISPATCHER_TOOLS)])

        async def team() -> str:
            estimate = (await estimator.run(task)).text
            credit = (await controller.run(f"{estimate}\n\nRequest: {task}")).text
            handed = ("Order cleared by credit - please book the delivery." if Now.fault == "handover_drops_context"
                      else f"{estimate}\n\n{credit}")
            return (await dispatcher.run(handed)).text

        return asyncio.run(team())


class McpAgronomy(kit.AgentotelRecorder):
    """The agronomy agent as a plain openai SDK chat.completions loop whose tools are an MCP server's (in process),
    each call through the MCP client's session, under agentotel."""

    agent = AGRONOMY

    def body(self, task: str) -> str:
        return kit.mcp_chat_loop(self.url + "/v1", agronomy_model(), agronomy_instructions(), task, "tamarisk-agronomy",
                                 AGRONOMY_TOOLS)


# The agronomy agent as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer TOOL
# spans, through agentotel-collector.
OiAgronomy = kit.chat_app(kit.OpenInferenceRecorder, AGRONOMY, AGRONOMY_TOOLS, agronomy_model, agronomy_instructions)


RECORDERS: dict[str, Any] = {"genai-parking": GenaiParking, "maf-supplier": MafSupplier,
                             "mcp-agronomy": McpAgronomy, "oi-agronomy": OiAgronomy}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Gemini there)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, next_agent, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "discount_wrong_band": ("model", f"{tau} (the discount by the DVLA CO2 table): a 92 g/km hybrid charged GBP "
                                         "90 (25%); the twin charges GBP 120 and says why", asking("issue_permit")),
        "duplicate_permit": ("model", f"{tau} (one permit per vehicle, comparing the request with list_permits): WX19 "
                                      "KTD issued a second permit; the twin refuses", asking("issue_permit")),
        "visitor_quota_exceeded": ("model", f"{tau} (at most 20 a month; offer what is left, only if agreed): 10 issued "
                                            "on 14 used; the twin offers 6 and issues them once agreed",
                                   asking("issue_visitor_permits")),
        "refund_fee_skipped": ("model", f"{tau} (pro rata less the GBP 15 admin fee): GBP 60 refunded; the twin "
                                        "refunds GBP 45", asking("refund_permit")),
        "parking_policy_rewritten": ("prompt", "instructions changed: the one-per-vehicle rule dropped from the desk's "
                                               "prompt; WX19 KTD issued a second permit", nth_llm(0)),
        "old_model_parking": ("product", f"configuration: the desk pins an old model ({OLD_GEMINI}), which issues at "
                                         "full price unasked, reading neither zone, permits nor vehicle", nth_llm(0)),
        "vehicle_wrong_record": ("tool", f"{trail} API issues: get_vehicle(WX22 LPK) answers WX22 LKP's record (an "
                                         "EV); a 128 g/km petrol car discounted 50%", tool_step("get_vehicle")),
        "issue_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: issue_permit timed out, the "
                                            "resident told 'permit PP-551190 is active'; the twin tries once more",
                                   after(tool_step("issue_permit"))),
        "waste_factor_skipped": ("model", f"{trail} wrong computation / {tau} (area / coverage plus the waste factor): "
                                          "119 sheets and 910 blocks priced where 130 and 955 are due",
                                 asking("price_order")),
        "credit_limit_exceeded": ("model", f"{tau} (comparing two records: open balance plus the order within the "
                                           "limit): 17,800 + 4,229.70 released on a 20,000 limit; the twin holds",
                                  asking("record_credit_decision")),
        "truck_site_mismatch": ("model", f"{tau} (a truck only if the site allows its type): the 07:00 artic booked "
                                         "for a site barring articulated vehicles; the twin books the 10:00 crane "
                                         "rigid", asking("book_delivery")),
        "delivery_fee_waived": ("model", f"{tau} (free delivery only from GBP 500 inc VAT): a GBP 437.34 order "
                                         "delivered free; the twin charges GBP 65", asking("book_delivery")),
        "handover_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: the "
                                             "dispatcher is handed a fixed line alone and asks which order",
                                   next_agent(1)),
        "account_wrong_customer": ("tool", f"{trail} API issues: get_account(C-2291) answers C-2219's account (open "
                                           "2,100 of 25,000); the over-limit order released (the twin holds)",
                                   tool_step("get_account")),
        "controller_prompt_rewritten": ("prompt", "instructions changed: the credit controller's limit rule dropped; "
                                                  "the over-limit order released", next_agent(0)),
        "booking_repeated": ("model", f"{mast} FM-1.3 Step repetition: book_delivery sent again after DL-30771",
                             asking("book_delivery", 1)),
        "label_index_stale": ("tool", "retrieval index stale: search_labels served its 2026-03-02 build (Mancosan "
                                      "registered, Verdacor v3 current); the withdrawn Mancosan recommended",
                              tool_step("search_labels")),
        "withdrawn_product_used": ("model", f"{tau} (never a withdrawn registration): Mancosan (withdrawn 2026-05-31) "
                                            "recommended; the twin rejects it and recommends Verdacor v4",
                                   asking("record_recommendation")),
        "units_confused": ("model", f"{trail} wrong reading of units: 0.6 L/ha recorded as 60 mL per 100 m2 (x100, "
                                    "not x10)", asking("record_recommendation")),
        "phi_violated": ("model", f"{tau} (days to harvest at least the PHI, comparing the field and the label): Azoxal "
                                  "(PHI 35) recommended 14 days before harvest; the twin recommends Bacillon (PHI 0)",
                         asking("record_recommendation")),
        "soil_older_test_used": ("model", f"{tau} (lime from the latest *sampled* test): the 2022 sample (pH 6.7, "
                                          "re-issued certificate listed first) used, no lime; the twin reads the "
                                          "2026-10-14 sample (pH 6.2, 2.5 t/ha)", asking("record_recommendation")),
        "old_model_agronomy": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which takes the "
                                          "top-ranked (withdrawn) product unread", nth_llm(0)),
        "labels_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: search_labels timed out, Verdacor "
                                             "recorded at 1.0 L/ha no label gave; the twin tries once more",
                                    after(tool_step("search_labels"))),
        "stage_rule_ignored": ("model", f"{tau} (crop stage at or below the label's latest BBCH): Verdacor (BBCH 49) on "
                                        "a BBCH 51 crop; the twin recommends Bacillon (BBCH 89)",
                               asking("record_recommendation")),
        "soil_wrong_field": ("tool", f"{trail} API issues: get_soil_tests(F-12) answers F-21's tests (pH 7.1); no lime "
                                     "where F-12's pH 6.2 needs 2.5 t/ha", tool_step("get_soil_tests")),
        "recommendation_repeated": ("model", f"{mast} FM-1.3 Step repetition: record_recommendation sent twice (the "
                                             "rules say once)", asking("record_recommendation", 1)),
        "agronomy_prompt_rewritten": ("prompt", "instructions changed: the PHI rule dropped; Azoxal (PHI 35) "
                                                "recommended 14 days before harvest", nth_llm(0)),
        "labels_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_labels answers v2 "
                                         "(data.products[].versions); read by v1's names, no product found, 'no spray' "
                                         "recorded", tool_step("search_labels")),
        "rejection_withheld": ("model", f"{mast} FM-2.4 Information withholding: Mancosan (withdrawn) and Azoxal (PHI) "
                                        "rejected and recorded, the answer names neither (the rules say every one)",
                               answer),
        "rate_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'at the label's 0.6 L/ha' said, 0.8 "
                                   "L/ha (superseded v3's) recorded", asking("record_recommendation")),
    }
    chosen = {
        "genai-parking": ["discount_wrong_band", "duplicate_permit", "visitor_quota_exceeded", "refund_fee_skipped",
                          "parking_policy_rewritten", "old_model_parking", "vehicle_wrong_record",
                          "issue_timeout_invented"],
        "maf-supplier": ["waste_factor_skipped", "credit_limit_exceeded", "truck_site_mismatch", "delivery_fee_waived",
                         "handover_drops_context", "account_wrong_customer", "controller_prompt_rewritten",
                         "booking_repeated"],
        "mcp-agronomy": ["label_index_stale", "withdrawn_product_used", "units_confused", "phi_violated",
                         "soil_older_test_used", "old_model_agronomy", "labels_timeout_invented"],
        "oi-agronomy": ["stage_rule_ignored", "soil_wrong_field", "recommendation_repeated",
                        "agronomy_prompt_rewritten", "labels_shape_changed", "rejection_withheld", "rate_mismatch"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (95a3d3d's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 5.7-9.3): 30 pairs, 4 recorders - diff top-1 27/30, check step+layer 14/30
# (7 of them by a warning its good twin gets too), good runs warned 28/30 (recording /tmp/h28-rec-45pgjlxx).
_QUOTED = ("the faulty model's first different output is the price it quotes when asking the resident to confirm, one "
           "step before the write the truth names - @{} is as arguable a cause")
DIFF_MISSED = {
    "model-genai-parking-discount-wrong-band": "output_changed@10: " + _QUOTED.format(10) + " (GBP 90 quoted, not 120)",
    "model-genai-parking-duplicate-permit": "output_changed@10: the faulty model asks 'Shall I issue it?' where the twin "
                                            "refuses; the truth names issue_permit @11",
    "model-genai-parking-refund-fee-skipped": "output_changed@6: " + _QUOTED.format(6) + " (GBP 60 quoted, not 45)",
}
_NOTHING = "nothing found; "
_PERMIT_RULE = ("policy_violated@8/model ranked (its good twin has it too: list_permits lists WX19 KTD's permit, the "
                "permit issued is for WX22 LPK)")
_QUANTITIES = "ungrounded_answer@10/model ranked (the estimator's 'x130, x955', in every run)"
_SOIL_PICK = "clarification_skipped@7/model ranked (the soil-test pick, in every run)"
CHECK_MISSED = {
    "model-genai-parking-discount-wrong-band": _PERMIT_RULE + "; nothing read issue_permit's 90.0 against the CO2 table "
                                               "(get_vehicle's 92 g/km is 'over 75 | none')",
    "model-genai-parking-duplicate-permit": _PERMIT_RULE + " at @8, the step before the faulty issue_permit @11 - the "
                                            "right rule, the wrong step",
    "model-genai-parking-refund-fee-skipped": _NOTHING + "refund_permit 60.0 where 'less a GBP 15.00 admin fee' gives "
                                              "45 (6 months of 120 / 12, less 15)",
    "product-genai-parking-old-model-parking": "missing_evidence@4/product (the set's required_before: issue_permit with "
                                               "no check_zone/list_permits/get_vehicle) ranked over model_changed@1/"
                                               "product, an info-level hit at the right step",
    "tool-genai-parking-vehicle-wrong-record": _PERMIT_RULE + "; nothing read get_vehicle asked for WX22 LPK answering "
                                              "registration WX22 LKP (found for a customer id and a field id here)",
    "model-maf-supplier-waste-factor-skipped": _QUANTITIES + "; nothing read price_order's 119 and 910 against "
                                               "area / coverage x (1 + waste_factor_pct) = 130 and 955",
    "model-maf-supplier-credit-limit-exceeded": _QUANTITIES + "; nothing read 'approved' with open_balance 17,800 + "
                                                "4,229.70 over credit_limit 20,000 (two records' fields)",
    "model-maf-supplier-truck-site-mismatch": _QUANTITIES + "; nothing read book_delivery's T-44A (type artic-44t) "
                                              "against get_site's access.allowed_vehicles",
    "model-oi-agronomy-rejection-withheld": _SOIL_PICK + "; nothing read the answer naming none of the two rejections "
                                            "record_recommendation's 'rejected' listed ('every product ... with its "
                                            "reason')",
    "model-genai-parking-visitor-quota-exceeded": _NOTHING + "hit blind only through the one-per-vehicle rule's "
                                                  "policy_violated@6 false alarm (quiet since 39b41e6); nothing reads "
                                                  "10 issued on 14 used of the monthly_quota 20",
    "model-maf-supplier-delivery-fee-waived": _NOTHING + "hit blind only through the slot pick's clarification_skipped@20 "
                                              "false alarm (quiet since 39b41e6); nothing reads free delivery on a GBP "
                                              "437.34 order against 'free delivery only from GBP 500 inc VAT'",
    "model-mcp-agronomy-withdrawn-product-used": _NOTHING + "hit blind only through the soil-test pick's "
                                                 "clarification_skipped@7 false alarm (quiet since 39b41e6); nothing "
                                                 "reads a product whose registration status is 'withdrawn' recommended",
    "model-mcp-agronomy-units-confused": _NOTHING + "hit blind only through the soil-test pick's clarification_skipped@7 "
                                         "false alarm (quiet since 39b41e6); nothing reads 0.6 L/ha recorded as 60 mL "
                                         "per 100 m2 (x100, not x10)",
    "model-mcp-agronomy-phi-violated": _NOTHING + "hit blind only through the soil-test pick's clarification_skipped@7 "
                                       "false alarm (quiet since 39b41e6); nothing reads a 35-day PHI against 14 days "
                                       "to the field's planned_harvest (two records' fields)",
    "model-mcp-agronomy-soil-older-test-used": _NOTHING + "hit blind only through the soil-test pick's "
                                               "clarification_skipped@7 false alarm (quiet since 39b41e6); nothing "
                                               "reads the rule's latest sampled test against the one used (2022)",
    "model-oi-agronomy-stage-rule-ignored": _NOTHING + "hit blind only through the soil-test pick's "
                                            "clarification_skipped@7 false alarm (quiet since 39b41e6); nothing reads "
                                            "the field's BBCH 51 past the label's latest_bbch 49",
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-parking": {"required_before": {"issue_permit": ["find_resident", "check_zone", "list_permits", "get_vehicle"],
                                          "issue_visitor_permits": ["find_resident", "list_permits"],
                                          "refund_permit": ["find_resident", "list_permits"]}},
    "maf-supplier": {"required_before": {"price_order": ["get_quote_request", "get_product"],
                                         "record_credit_decision": ["get_account"],
                                         "book_delivery": ["get_site", "get_delivery_slots"]}},
    "mcp-agronomy": {"required_before": {"record_recommendation": ["get_field", "search_labels", "get_soil_tests"]}},
    "oi-agronomy": {"required_before": {"record_recommendation": ["get_field", "search_labels", "get_soil_tests"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h28-rec-", pairs, produce, kit.through_collector("oi-agronomy"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
