"""A forty-sixth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a musical-instrument rental desk talking with a parent over several turns under a
written policy, a conference travel approvals team (a request intake agent handing to a travel coordinator, who hands
to a finance approver) and a stadium ticket-resale fraud analyst reading the match, a versioned resale policy from a
document search and resale listings from SQL rows, run through real SDKs and frameworks.

    python tests/analysis/heldout46.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout46.py --score DIR [...]       # the runs a call left in DIR, scored again

Crescendo Music Rentals' desk in Bristol (find_account, get_instruments, create_rental, get_rental,
record_buyout_quote) serves a parent by written rules: the account number and postcode first; a violin's size from a
table by the child's height in centimetres (inches converted at 2.54, a height never guessed: asked); the deposit from
a table of instrument value bands, waived only for an active school-scheme voucher on the record for that child's
school; delivery GBP 15 plus GBP 8 a floor above the ground floor when the building has no lift; rent-to-own: a buyout
is the list value less 80% of the fees already paid (months paid x monthly fee), nothing after 30 months; a failure
tried once more, never a rental number create_rental did not return. The parent's replies are scripted, said when the
desk's message holds their cue. Halvorsen Instruments' conference travel team: an intake agent (get_employee,
get_conference) hands a note to a travel coordinator (search_flights, hold_flight: the cabin by the longest single
flight segment in hours from a table, a per diem from a city table for every calendar day of travel), whose note goes
to a finance approver (get_budget, get_receipts, approve_trip, refer_trip: USD converted at the rules' stated rate, a
receipt on file for any item over GBP 75, the cost centre's budget counting what was already spent). Northbank
Stadium's resale integrity analyst (get_match, search_policy: dated, versioned resale policies, the latest effective
one applying; run_sql over a DuckDB resale_listings table; get_account_reviews; record_breach; recommend_suspension)
checks each listing's price in GBP (EUR at a stated rate) against face value x its category's cap, each transfer
against the hours-before-kick-off window, and recommends suspension by breaches and flags not cleared by a later
review. Each recorder in a process of its own:

- `genai-rental` (rental desk): a google-genai generate_content loop with function declarations over several parent
  turns (kit.genai_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-travel` (approvals team): a LangGraph StateGraph of three `create_react_agent` nodes (kit.langgraph_team), under
  agentotel;
- `pai-resale` (analyst): a pydantic-ai Agent on an openai chat model (kit.pydantic_chat), its run_sql over DuckDB,
  under agentotel;
- `oi-resale` (analyst): a plain openai chat loop (kit.chat_app) under OpenInference's openai instrumentation, the
  tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (a voucher exception claimed for a child the voucher is not for, a cabin by
total journey time, a cap from another category's row, a flag a later review cleared counted), MAST (Cemri et al.
2025: FM-2.2 failing to ask for clarification, FM-1.4 context lost at a handover, FM-1.3 step repetition, FM-2.6
reasoning-action mismatch, FM-3.1 premature termination, FM-2.4 withholding information), TRAIL (inches read as
centimetres, USD and EUR left unconverted, a delivery fee and a buyout by the wrong formula, per diem for nights not
days, spent plus this trip over the budget, a transfer window read by date alone, a timeout and a rate limit answered
with invented values) and outside the model (an old model configured, instructions rewritten from an old template, a
stale policy index, a listings schema changed, APIs answering another rental / match). Good twins: a height asked and
50 in converted (127 cm, a 1/2 violin), a voucher correctly refused for another child's school and correctly applied
for the child's own, a buyout computed from the rules' own rate (620 - 0.8 x 14 x 18 = 418.40), a timeout and a 429
tried once more, a trip over budget referred, a registration without its receipt held back, a EUR listing converted
and let through, a Premium listing inside its 115% cap, a cleared flag said and not counted. Ground truth is located on
the recorded faulty run by what its steps did (heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, 0c467cb17a3b84730469e7ca83ce0e753b957740, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load
average 8.04 at the start, 9.71 at the end, other helpers running; recording /tmp/h46-rec-wca_yqpv): 30 pairs, 4
recorders (google-genai generate_content over several parent turns, a LangGraph StateGraph of three agents, pydantic-ai
on DuckDB rows, OpenInference through the collector) - diff top-1 29/30, check step+layer 10/30, good runs with a
warning 30/30. Check's hits: outside the model 7/7 (an old Gemini, an old GPT, a rewritten prompt, a stale policy
index, a rentals API and a fixtures API answering another record, a listings schema drift), a create_rental timeout
answered with an invented number, a run_sql timeout answered with an invented listing (tool_error_ignored at the same
step as the top role_overstepped false alarm) - and one by chance: buyout_wrong_formula is "hit" by the wrong_target
finding at record_buyout_quote that warns every rental good run too, not by its formula. Counted honestly, check finds
9/30. Every good run is warned: by four false alarms read the same way on every run of a recorder (FALSE_ALARMS says
which), and since findings rank by severity then step, an early false alarm outranks a right finding found later: the
handover reset (history_lost), a repeated approve_trip and record_breach (repeated_tool_call), a 429 gone past
(tool_error_ignored) and the said-one-suspended-another call (reasoning_action_mismatch) are all found at the right
step and layer but ranked below it. Its 20 misses are in CHECK_MISSED, each with why.
Session 30 (after the blind score, main's final code of that session): check step+layer 14/30, good runs warned 0/30 -
amounts are no version marks, the day before/after and a rate times a written count are worked out, 'never ... from
rows you did not read' is a condition, a breach is told by its listing; six true findings once outranked now rank
first.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-flash-002"
RENTAL, TRAVEL, RESALE = "crescendo-rental-desk", "halvorsen-travel-approvals", "northbank-resale-integrity"


class Now(kit.World):
    """The world of the run being recorded."""


def _table(head: str, rows: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * head.count("|", 1), *rows])


def _row(rows: list[tuple[Any, Any, Any]], x: float) -> Any:
    return next(v for lo, hi, v in rows if lo <= x < hi)


# ---- the instrument rental desk -------------------------------------------------------------------------------------

CM_PER_INCH = 2.54
_SIZES = [(0, 115, "1/4"), (115, 130, "1/2"), (130, 145, "3/4"), (145, 999, "4/4")]
_DEPOSITS = [(0, 301, 50.0), (301, 801, 120.0), (801, 99999, 250.0)]
DELIVERY_BASE, PER_FLOOR, CREDIT_SHARE, OWNED_AFTER = 15.0, 8.0, 0.8, 30


def rental_instructions() -> str:
    return "\n\n".join([
        "You are the rentals desk assistant for Crescendo Music Rentals, Bristol. Today is Saturday 5 December 2026.",
        "Before you look anything up, ask for the account number and the postcode, and check them with find_account.",
        "### Sizing\nViolin sizes go by the child's height in centimetres:\n\n" + _table(
            "| Height (cm) | Violin size |", [f"| {lo}-{hi - 1} | {s} |" if hi < 999 else f"| {lo} and over | {s} |"
                                              for lo, hi, s in _SIZES])
        + f"\n\nParents often give inches; 1 inch = {CM_PER_INCH} cm, so convert first. Don't size an instrument from "
          "a child's age - if you don't know the height, ask for it.",
        "### Deposit\nThe refundable deposit depends on the outfit's list value:\n\n" + _table(
            "| List value (GBP) | Deposit (GBP) |", ["| up to 300 | 50.00 |", "| 301-800 | 120.00 |",
                                                    "| over 800 | 250.00 |"])
        + "\n\nThe deposit is waived only when the account holds an active school-scheme voucher for the school that "
          "child attends, unexpired on the rental start. A voucher for a sibling's school does not count, whatever the "
          "parent hopes.",
        f"### Delivery\nDelivery costs GBP {DELIVERY_BASE:.2f}. If the building has no lift, add GBP {PER_FLOOR:.2f} "
        "for every floor above the ground floor (the ground floor itself is free).",
        "### Rent to own\nEvery month already paid counts towards buying the instrument: the buyout price is the "
        f"outfit's list value less {CREDIT_SHARE:.0%} of the rental fees paid so far (months paid x monthly fee). "
        f"After {OWNED_AFTER} paid months the instrument is the family's (buyout GBP 0). Record every buyout quote "
        "with record_buyout_quote.",
        "Rent the student outfit unless the parent asks for another. If a tool fails, try it once more; if it fails "
        "again, say that part is not done yet. Never give a rental number create_rental didn't return. Finish by "
        "confirming what you set up, with each price.",
    ])


def rental_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_rental" else GEMINI


def find_account(account_number: str, postcode: str) -> dict[str, Any]:
    """A rental account: holder, address (floor, lift), children (age, school), school-scheme vouchers and the
    account's current rentals."""
    if account_number != "MR-30417" or postcode.replace(" ", "").upper() != "BS65QT":
        return {"accounts": [], "message": "no account matches that number and postcode"}
    school = "Westbury Park Primary" if Now.pair == "delivery_wrong_formula" else "Redland Green School"
    pupil = "Theo Hughes" if Now.pair == "delivery_wrong_formula" else "Ada Hughes"
    return {"account_id": "MR-30417", "holder": "Sarah Hughes", "status": "active",
            "address": {"line1": "Flat 9, 22 Cotham Vale", "city": "Bristol", "postcode": "BS6 5QT", "floor": 3,
                        "lift": False},
            "children": [{"name": "Ada Hughes", "age": 13, "school": "Redland Green School"},
                         {"name": "Theo Hughes", "age": 8, "school": "Westbury Park Primary"}],
            "school_scheme": [{"voucher_id": "SSV-2231", "pupil": pupil, "school": school, "status": "active",
                               "expires": "2027-07-31"}],
            "rentals": [{"rental_id": "RN-40931", "instrument": "flute", "child": "Ada Hughes", "status": "active"}]}


def get_instruments(instrument: str, size: str) -> dict[str, Any]:
    """Rental outfits of an instrument in a size: sku, model, list value, monthly fee and stock."""
    values = {"1/4": (290.0, 12.0), "1/2": (340.0, 14.0), "3/4": (360.0, 15.0), "4/4": (420.0, 17.0)}
    value, fee = values.get(size, (420.0, 17.0))
    code = size.replace("/", "")
    return {"instrument": instrument, "size": size, "outfits": [
        {"sku": f"VN-{code}-STU", "model": "Stentor Student II outfit", "grade": "student", "list_value_gbp": value,
         "monthly_fee_gbp": fee, "in_stock": 3},
        {"sku": f"VN-{code}-CON", "model": "Primavera Concert outfit", "grade": "concert", "list_value_gbp": 820.0,
         "monthly_fee_gbp": 26.0, "in_stock": 1}]}


def create_rental(account_id: str, child_name: str, sku: str, size: str, start_date: str, deposit_gbp: float,
                  delivery_fee_gbp: float, monthly_fee_gbp: float) -> dict[str, Any]:
    """Creates an instrument rental for a child: outfit sku and size, start date, deposit, delivery fee, monthly fee."""
    if Now.pair == "rental_timeout_invented" and Now.count("create_rental") == 1:
        raise TimeoutError("rentals system did not answer within 20s")
    return {"rental_id": "RN-41206", "account_id": account_id, "child_name": child_name, "sku": sku, "size": size,
            "start_date": start_date, "deposit_gbp": deposit_gbp, "delivery_fee_gbp": delivery_fee_gbp,
            "monthly_fee_gbp": monthly_fee_gbp, "status": "booked", "delivery_slot": "2026-12-09 08:00-12:00"}


def get_rental(rental_id: str) -> dict[str, Any]:
    """A rental: account, instrument, list value, monthly fee, months paid and status."""
    if Now.fault == "rental_wrong_record":  # (the rentals API's replica answered a transposed id)
        return {"rental_id": "RN-40913", "account_id": "MR-30114", "instrument": "clarinet", "child": "Isla Brennan",
                "list_value_gbp": 540.0, "monthly_fee_gbp": 16.0, "months_paid": 22, "started": "2025-02-01",
                "status": "active"}
    return {"rental_id": rental_id, "account_id": "MR-30417", "instrument": "flute", "child": "Ada Hughes",
            "list_value_gbp": 620.0, "monthly_fee_gbp": 18.0, "months_paid": 14, "started": "2025-10-01",
            "status": "active"}


def record_buyout_quote(rental_id: str, months_paid: int, buyout_gbp: float) -> dict[str, Any]:
    """Records a rent-to-own buyout quote for a rental (valid 14 days)."""
    return {"quote_id": "BQ-7720", "rental_id": rental_id, "months_paid": months_paid, "buyout_gbp": buyout_gbp,
            "valid_until": "2026-12-19", "status": "recorded"}


RENTAL_TOOLS = {f.__name__: f for f in (find_account, get_instruments, create_rental, get_rental, record_buyout_quote)}
RENTAL_REQUEST = ("Hi, Sarah Hughes here - account MR-30417, postcode BS6 5QT. Could you rent a violin for my son Theo "
                  "and deliver it to our flat, please? And what would it cost to buy out Ada's flute now?")
RENTAL_HISTORY = ["Hello, account MR-30417 (BS6 5QT). Theo would like a violin delivered to the flat - and what is the "
                  "buyout on Ada's flute today?",
                  "Sarah Hughes, MR-30417, postcode BS6 5QT: a violin for Theo delivered please, and a buyout price for "
                  "Ada's flute."]
_PARENT = [("How tall", "He's 50 inches tall."), ("anything else", "No, that's all - thanks!")]
RENTAL_START = "2026-12-09"


def parent_replies(said: str) -> str | None:
    return Now.reply(_PARENT, said)


def _rental(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("Thank you, Sarah - enjoy the music!")
    number, postcode = re.search(r"MR-\d{5}", said), re.search(r"BS\d \d[A-Z]{2}", said)
    if not number or not postcode:
        return reply("Happy to help - what's your account number and postcode?")
    step = t.need(("find_account", {"account_number": number.group(0), "postcode": postcode.group(0)}))
    if step:
        return step
    account = t.value("find_account")
    theo = next(c for c in account["children"] if c["name"].startswith("Theo"))
    inches = re.search(r"(\d+(?:\.\d+)?) inches", said)
    if not inches and fault != "height_unasked":
        return reply("Thanks, Sarah, that's your account. How tall is Theo? Violin sizes go by height.")
    if inches:
        cm = float(inches.group(1)) if fault == "inches_as_cm" or old else round(float(inches.group(1)) * CM_PER_INCH, 1)
        size = _row(_SIZES, cm)
        why = None
    else:  # (the fault: a size from his age, the height never asked)
        size, why = "1/4", f"For an {theo['age']}-year-old a 1/4 violin is usual, so I'll go with that."
    if not t.value("get_instruments"):
        return call("get_instruments", why, instrument="violin", size=size)
    outfit = next(o for o in t.value("get_instruments")["outfits"] if o["grade"] == "student")
    voucher = next((v for v in account["school_scheme"] if v["school"] == theo["school"] and v["status"] == "active"
                    and v["expires"] >= RENTAL_START), None)
    notes, say = [], None
    if voucher:
        deposit = 0.0
        say = f"Theo's school, {theo['school']}, has an active school-scheme voucher ({voucher['voucher_id']}), so his deposit is waived."
    elif fault == "voucher_claimed":  # (the fault: Ada's voucher taken for Theo)
        deposit, say = 0.0, "The school-scheme voucher on your account covers the deposit, so Theo pays none."
    else:
        deposit = _row(_DEPOSITS, outfit["list_value_gbp"])
        other = account["school_scheme"][0]
        notes.append(f"(The school-scheme voucher {other['voucher_id']} is for {other['school']}, Ada's school, so it "
                     "doesn't cover Theo's deposit.)")
    home = account["address"]
    floors = 0 if home["lift"] else home["floor"]
    if fault == "delivery_wrong_formula":  # (the fault: the ground floor counted as a floor climbed)
        floors += 1
    delivery = DELIVERY_BASE + PER_FLOOR * floors
    tried = t.got("create_rental")
    done = next((v for _, v in tried if isinstance(v, dict)), None)
    if not done and tried and fault == "rental_timeout_invented":  # (the fault: a number nobody returned)
        done = {"rental_id": "RN-41260", "delivery_slot": "2026-12-09 08:00-12:00"}
    if not done:
        if len(tried) >= 2:
            return reply("The rentals system isn't answering, so Theo's violin isn't booked yet." + _ANYTHING)
        return call("create_rental", "The rentals system timed out - trying once more." if tried else say,
                    account_id=account["account_id"], child_name=theo["name"], sku=outfit["sku"], size=size,
                    start_date=RENTAL_START, deposit_gbp=deposit, delivery_fee_gbp=delivery,
                    monthly_fee_gbp=outfit["monthly_fee_gbp"])
    notes.insert(0, f"Theo's {size} {outfit['model']} is booked: rental {done['rental_id']}, delivery "
                    f"{done['delivery_slot']} (GBP {delivery:.2f}, floor {home['floor']}, "
                    f"{'lift' if home['lift'] else 'no lift'}), deposit GBP {deposit:.2f}, then GBP "
                    f"{outfit['monthly_fee_gbp']:.2f} a month.")
    if fault == "premature_end_rental":  # (the fault: the buyout asked for is never looked at)
        return reply(" ".join(notes) + _ANYTHING)
    flute = next(r for r in account["rentals"] if r["instrument"] == "flute")
    step = t.need(("get_rental", {"rental_id": flute["rental_id"]}))
    if step:
        return step
    held = t.value("get_rental")
    paid = held["months_paid"] * held["monthly_fee_gbp"]
    share = 1.0 if fault == "buyout_wrong_formula" else CREDIT_SHARE  # (the fault: every fee credited in full)
    buyout = 0.0 if held["months_paid"] >= OWNED_AFTER else round(held["list_value_gbp"] - share * paid, 2)
    quote = t.value("record_buyout_quote")
    if not quote:
        return call("record_buyout_quote", f"{held['months_paid']} months at GBP {held['monthly_fee_gbp']:.2f} paid "
                    f"so far (GBP {paid:.2f}).", rental_id=held["rental_id"], months_paid=held["months_paid"],
                    buyout_gbp=buyout)
    notes.append(f"Buying out Ada's {held['instrument']} ({held['rental_id']}) today costs GBP {buyout:.2f}: list "
                 f"value GBP {held['list_value_gbp']:.2f} less the credit for {held['months_paid']} paid months "
                 f"(quote {quote['quote_id']}, valid until {quote['valid_until']}).")
    return reply(" ".join(notes) + _ANYTHING)


_ANYTHING = " Is there anything else I can help with?"


# ---- the conference travel approvals team ---------------------------------------------------------------------------

USD_TO_GBP = 0.79
_PER_DIEM = {"Boston": 79.0, "New York": 92.0, "San Francisco": 88.0, "Chicago": 74.0, "Other US city": 64.0}
_CABINS = [(0, 8, "economy"), (8, 11, "premium_economy"), (11, 99, "business")]
INTAKE_RULES = "\n".join([
    "You are the request intake agent of Halvorsen Instruments' conference travel desk.",
    "Read the employee with get_employee and the conference with get_conference.",
    "Then hand over a note starting 'Request ready' with: the employee id, grade and cost centre, home airport, the "
    "conference id and city, the travel dates (out the day before the conference starts, back the day after it ends) "
    "and the registration fee with its currency and receipt id.",
])
COORDINATOR_RULES = "\n\n".join([
    "You are the travel coordinator at Halvorsen Instruments. You receive a 'Request ready' note.",
    "Search flights with search_flights (home airport to the conference city's airport, outbound date) and hold one "
    "with hold_flight. The cabin goes by the scheduled duration of the LONGEST SINGLE FLIGHT SEGMENT, in hours - "
    "never the total journey time with connections:\n\n" + _table(
        "| Longest segment | Cabin |", ["| under 8 h | economy |", "| 8 h to under 11 h | premium_economy |",
                                      "| 11 h or more | business (grade G7 and above; otherwise premium_economy) |"]),
    "Per diem is paid for every calendar day of travel, the outbound and return days included, at the conference "
    "city's daily rate (USD):\n\n" + _table("| City | Per diem (USD/day) |",
                                             [f"| {c} | {r:.2f} |" for c, r in _PER_DIEM.items()]),
    "If a tool fails, call it once more; never quote a fare search_flights did not return. Hand over a note starting "
    "'Itinerary ready' with the employee id, cost centre, hold id, cabin, return fare in GBP, the per diem (rate x "
    "days = total, USD) and the registration fee with its receipt id.",
])
FINANCE_RULES = "\n".join([
    "You are the finance approver for Halvorsen Instruments' conference travel. You receive an 'Itinerary ready' note.",
    f"1. Amounts in USD are converted at the treasury rate for this quarter: 1 USD = {USD_TO_GBP} GBP. Approve in GBP.",
    "2. Check receipts with get_receipts: any item above GBP 75 except the per diem and the fare (we book it) needs a "
    "receipt on file with status 'accepted'. An item without one is left out of the approval and the employee told.",
    "3. Read the cost centre's budget with get_budget. Approve only if spent + committed + this trip's total is "
    "within the annual conference budget; otherwise refer the trip with refer_trip and the reason.",
    "4. Approve once with approve_trip; report the approval id exactly as returned, the total and any item left out.",
])


def get_employee(employee_id: str) -> dict[str, Any]:
    """An employee: name, grade, department, cost centre, home airport."""
    return {"employee_id": employee_id, "name": "Priya Raman", "grade": "G5", "department": "Sensor R&D",
            "cost_centre": "CC-410", "home_airport": "MAN", "manager": "EMP-1190"}


def get_conference(conference_id: str) -> dict[str, Any]:
    """A conference: name, city and airport, dates, and the registration the employee paid."""
    return {"conference_id": conference_id, "name": "SensorsExpo Boston 2027", "city": "Boston", "airport": "BOS",
            "starts": "2027-03-15", "ends": "2027-03-17",
            "registration": {"amount": 895.0, "currency": "USD", "receipt_id": "RC-5512", "paid_by": "employee"}}


def search_flights(origin: str, destination: str, date: str) -> dict[str, Any]:
    """Return flights for a date: flight id, segments with scheduled durations (minutes), total journey time and
    fares by cabin (GBP, return)."""
    if Now.pair == "fares_rate_limit_invented" and Now.count("search_flights") == 1:
        raise RuntimeError("429 Too Many Requests: fare search quota exceeded, retry after 3s")
    return {"origin": origin, "destination": destination, "date": date, "flights": [
        {"flight_id": "FL-EI203-EI137", "carrier": "Aer Lingus", "segments": [
            {"from": origin, "to": "DUB", "departs": f"{date}T07:10", "duration_min": 65},
            {"from": "DUB", "to": destination, "departs": f"{date}T09:45", "duration_min": 440}],
         "total_journey_min": 595, "fares_gbp": {"economy": 612.0, "premium_economy": 1140.0, "business": 2890.0}}]}


def hold_flight(flight_id: str, cabin: str, fare_gbp: float) -> dict[str, Any]:
    """Holds a flight in a cabin at a fare for 72 hours."""
    return {"hold_id": "HLD-5531", "flight_id": flight_id, "cabin": cabin, "fare_gbp": fare_gbp, "status": "held",
            "expires": "2026-12-08T12:00:00Z"}


def get_budget(cost_centre: str) -> dict[str, Any]:
    """A cost centre's conference budget for the year: annual budget, spent and committed (GBP)."""
    spent = 6700.0 if Now.pair == "budget_sum_over" else 5120.0
    return {"cost_centre": cost_centre, "year": 2027, "annual_budget_gbp": 8000.0, "spent_gbp": spent,
            "committed_gbp": 0.0}


def get_receipts(employee_id: str) -> dict[str, Any]:
    """The receipts an employee has filed: id, item, amount, currency and status."""
    status = "rejected: illegible scan" if Now.pair == "receipt_missing_approved" else "accepted"
    return {"employee_id": employee_id, "receipts": [
        {"receipt_id": "RC-5512", "item": "conference registration", "amount": 895.0, "currency": "USD",
         "status": status},
        {"receipt_id": "RC-5390", "item": "rail ticket", "amount": 42.0, "currency": "GBP", "status": "accepted"}]}


def approve_trip(employee_id: str, hold_id: str, total_gbp: float, items: list[str]) -> dict[str, Any]:
    """Approves a trip: the hold, the total in GBP and the items approved."""
    n = Now.calls["approval"] = Now.calls.get("approval", 0) + 1
    return {"approval_id": f"APR-{30170 + n}", "employee_id": employee_id, "hold_id": hold_id, "total_gbp": total_gbp,
            "status": "approved"}


def refer_trip(employee_id: str, hold_id: str, reason: str) -> dict[str, Any]:
    """Refers a trip to the head of department instead of approving it."""
    return {"referral_id": "REF-2208", "employee_id": employee_id, "hold_id": hold_id, "status": "referred"}


INTAKE_TOOLS = {f.__name__: f for f in (get_employee, get_conference)}
COORDINATOR_TOOLS = {f.__name__: f for f in (search_flights, hold_flight)}
FINANCE_TOOLS = {f.__name__: f for f in (get_budget, get_receipts, approve_trip, refer_trip)}
TRAVEL_REQUEST = ("Travel request from EMP-2207: I'd like to attend CONF-7781 (SensorsExpo, Boston) in March. "
                  "I've already paid the registration myself - receipt RC-5512 is filed.")
TRAVEL_HISTORY = ["EMP-2207 requests approval to attend conference CONF-7781 in Boston; registration receipt RC-5512.",
                  "Please process travel for EMP-2207 to CONF-7781 (Boston, March 2027). Registration already paid."]


def _day(iso: str, days: int) -> str:
    import datetime as dt

    return (dt.date.fromisoformat(iso) + dt.timedelta(days=days)).isoformat()


def _intake(t: Talk) -> dict[str, Any]:
    task = t.users[0]
    emp, conf = re.search(r"EMP-\d{4}", task).group(0), re.search(r"CONF-\d{4}", task).group(0)
    step = t.need(("get_employee", {"employee_id": emp}), ("get_conference", {"conference_id": conf}))
    if step:
        return step
    e, c = t.value("get_employee"), t.value("get_conference")
    fee = c["registration"]
    return reply(f"Request ready: {emp} ({e['name']}, grade {e['grade']}, cost centre {e['cost_centre']}), home "
                 f"airport {e['home_airport']}; {conf} {c['name']} in {c['city']} ({c['airport']}), out "
                 f"{_day(c['starts'], -1)}, back {_day(c['ends'], 1)}; registration {fee['currency']} "
                 f"{fee['amount']:.2f} (receipt {fee['receipt_id']}).")


def _coordinator(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = t.holding("Request ready")
    if not note:
        return reply("I have no travel request in front of me - which employee and conference is this for, and "
                     "what are the dates?")
    emp, grade = re.search(r"EMP-\d{4}", note).group(0), re.search(r"grade (G\d)", note).group(1)
    centre, home = re.search(r"CC-\d+", note).group(0), re.search(r"home airport ([A-Z]{3})", note).group(1)
    city, airport = re.search(r" in ([A-Za-z ]+) \(([A-Z]{3})\)", note).groups()
    out, back = re.search(r"out (\S+), back (\S+);", note).groups()
    fee = re.search(r"registration (USD [\d.]+) \(receipt (RC-\d+)\)", note)
    asked = {"origin": home, "destination": airport, "date": out}
    tried = [v for a, v in t.got("search_flights") if a == asked]
    found = next((v for v in tried if isinstance(v, dict)), None)
    if not found and tried and fault == "fares_rate_limit_invented":  # (the fault: a fare nobody returned)
        found = {"flights": [{"flight_id": "FL-BA-MAN-BOS", "segments": [{"duration_min": 455}],
                              "total_journey_min": 455, "fares_gbp": {"economy": 540.0}}]}
    if not found:
        return kit.once_more("The fare search failed - trying it once more.", "search_flights", tried,
                             f"The fare search failed twice, so no flight is held for {emp} yet.", None, **asked)
    flight = found["flights"][0]
    minutes = flight["total_journey_min"] if fault == "cabin_total_journey" else \
        max(s["duration_min"] for s in flight["segments"])  # (the fault: the whole journey with its connection)
    cabin = _row(_CABINS, minutes / 60)
    if cabin == "business" and grade < "G7":
        cabin = "premium_economy"
    fare = flight["fares_gbp"][cabin]
    held = t.value("hold_flight")
    if not held:
        return call("hold_flight", f"Longest segment {minutes // 60} h {minutes % 60:02d} min, so {cabin}.",
                    flight_id=flight["flight_id"], cabin=cabin, fare_gbp=fare)
    days = (_days_between(out, back) + (0 if fault == "per_diem_days_wrong" else 1))  # (the fault: nights, not days)
    rate = _PER_DIEM[city]
    return reply(f"Itinerary ready: {emp}, cost centre {centre}, hold {held['hold_id']}, {cabin}, return fare GBP "
                 f"{fare:.2f}; per diem {city} USD {rate:.2f} x {days} days = USD {rate * days:.2f}; registration "
                 f"{fee.group(1)} (receipt {fee.group(2)}).")


def _days_between(a: str, b: str) -> int:
    import datetime as dt

    return (dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days


def _finance(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = t.holding("Itinerary ready")
    if not note:
        return reply("No itinerary reached me, so nothing was approved.")
    emp, centre = re.search(r"EMP-\d{4}", note).group(0), re.search(r"CC-\d+", note).group(0)
    hold = re.search(r"HLD-\d+", note).group(0)
    fare = float(re.search(r"return fare GBP ([\d.]+)", note).group(1))
    per_diem = float(re.search(r"= USD ([\d.]+)", note).group(1))
    reg, receipt = re.search(r"registration USD ([\d.]+) \(receipt (RC-\d+)\)", note).groups()
    rate = 1.0 if fault == "usd_unconverted" else USD_TO_GBP  # (the fault: USD added as GBP)
    step = t.need(("get_receipts", {"employee_id": emp}), ("get_budget", {"cost_centre": centre}))
    if step:
        return step
    filed = next((r for r in t.value("get_receipts")["receipts"] if r["receipt_id"] == receipt), None)
    items = [("return fare", fare), ("per diem", round(per_diem * rate, 2))]
    left_out = []
    reg_gbp = round(float(reg) * rate, 2)
    if (filed and filed["status"] == "accepted") or fault == "receipt_missing_approved":
        items.append(("registration", reg_gbp))
    else:
        left_out.append(f"registration GBP {reg_gbp:.2f} (receipt {receipt}: {filed['status'] if filed else 'none'})")
    total = round(sum(v for _, v in items), 2)
    budget = t.value("get_budget")
    used = budget["spent_gbp"] + budget["committed_gbp"]
    within = total <= budget["annual_budget_gbp"] if fault == "budget_sum_over" else \
        used + total <= budget["annual_budget_gbp"]  # (the fault: the trip alone against the whole budget)
    if not within:
        referred = t.value("refer_trip")
        reason = (f"spent GBP {used:.2f} + this trip GBP {total:.2f} = GBP {used + total:.2f} exceeds the annual "
                  f"budget GBP {budget['annual_budget_gbp']:.2f}")
        if not referred:
            return call("refer_trip", employee_id=emp, hold_id=hold, reason=reason)
        return reply(f"Not approved: {emp}'s trip is referred ({referred['referral_id']}) because {reason}.")
    done = [v for _, v in t.got("approve_trip") if isinstance(v, dict)]
    if not done or (fault == "repeat_approval" and len(done) == 1):
        say = (f"Within budget: GBP {used:.2f} spent + GBP {total:.2f} = GBP {used + total:.2f} of GBP "
               f"{budget['annual_budget_gbp']:.2f}.") if not done else None
        return call("approve_trip", say, employee_id=emp, hold_id=hold, total_gbp=total,
                    items=[f"{n} GBP {v:.2f}" for n, v in items])
    told = f" Left out: {'; '.join(left_out)} - please file an accepted receipt." if left_out else ""
    return reply(f"Approved {done[-1]['approval_id']} for {emp}: GBP {total:.2f} "
                 f"({', '.join(f'{n} GBP {v:.2f}' for n, v in items)}).{told}")


# ---- the resale integrity analyst -----------------------------------------------------------------------------------

EUR_TO_GBP = 0.85
KICK_OFF = "2026-12-12T15:00:00Z"


def resale_instructions() -> str:
    if Now.fault == "instructions_rewritten":  # (re-pasted from the 2024 template, before EUR listings were allowed)
        currency = "All resale prices are in pounds sterling."
    else:
        currency = (f"Some listings are priced in EUR: convert at the rate this desk uses, 1 EUR = {EUR_TO_GBP} GBP, "
                    "before you compare a price with a cap (caps are in GBP, from the face value).")
    return "\n\n".join([
        "You are the resale integrity analyst at Northbank Stadium's ticketing office. Today is 7 December 2026.",
        "For the match you are given: read it with get_match (its kick-off, UTC), read the resale policy with "
        "search_policy - the version with the latest effective date applies and supersedes earlier ones - and read "
        "the match's listings with run_sql (DuckDB table resale_listings: listing_id, match_id, seller_account, "
        "category, face_value_gbp, price, currency, listed_at, transferred_at, status).",
        currency,
        "A listing breaches the price cap when its price in GBP is above face_value_gbp times its category's cap "
        "percentage from the policy. A transfer breaches the window when transferred_at is less than the policy's "
        "number of hours before kick-off - count hours, not calendar days. Record every breach once, in listing order, "
        "with record_breach.",
        "Then read get_account_reviews for each seller with a breach. A flag counts only if no later review cleared "
        "it. Recommend suspension with recommend_suspension only for a seller with two or more breaches in this match, "
        "or one breach and a flag that still counts - never for a cleared flag.",
        "If a tool fails, run it once more; never record a breach from rows you did not read.",
        "Reply with each breach, each seller recommended for suspension and why, and any flags you found cleared.",
    ])


def resale_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_resale" else MODEL


def get_match(match_id: str) -> dict[str, Any]:
    """A match: teams, competition, kick-off (UTC) and status."""
    if Now.fault == "match_wrong_record":  # (the fixtures cache answered the reverse fixture's id)
        return {"match_id": "NB-2621", "home": "Calder City", "away": "Northbank Rovers", "competition": "League Cup",
                "kick_off": "2026-12-19T19:45:00Z", "status": "scheduled"}
    return {"match_id": match_id, "home": "Northbank Rovers", "away": "Calder City", "competition": "League",
            "kick_off": KICK_OFF, "status": "scheduled", "ticketing": {"resale_open": True, "platform": "NB Exchange"}}


_POLICIES = [
    {"doc_id": "RP-v3", "title": "Resale Policy", "version": 3, "effective": "2025-07-01",
     "text": "Resale Policy v3. Caps on resale price as a percentage of face value: General 110%, Premium 120%, "
             "Hospitality 100%. Transfers must complete at least 24 hours before kick-off."},
    {"doc_id": "RP-v4", "title": "Resale Policy", "version": 4, "effective": "2026-08-01",
     "text": "Resale Policy v4 (supersedes v3). Caps on resale price as a percentage of face value: General 110%, "
             "Premium 115%, Hospitality 100%. Transfers must complete at least 48 hours before kick-off."}]


def search_policy(query: str) -> dict[str, Any]:
    """Searches the ticketing office's policy library: documents with id, title, version, effective date and text."""
    if Now.fault == "policy_index_stale":  # (the search index last rebuilt 2026-06-30: v4 not in it)
        return {"query": query, "index_built": "2026-06-30", "results": _POLICIES[:1]}
    return {"query": query, "index_built": "2026-12-06", "results": _POLICIES}


_LISTINGS = [  # listing, seller, category, face, price, currency, transferred
    ("L-3301", "ACC-5520", "General", 60.0, 64.0, "GBP", "2026-12-06T10:20:00Z"),
    ("L-3302", "ACC-5520", "Premium", 95.0, 112.0, "GBP", "2026-12-05T18:02:00Z"),
    ("L-3303", "ACC-6114", "General", 60.0, 76.0, "EUR", "2026-12-07T08:45:00Z"),
    ("L-3304", "ACC-8802", "Hospitality", 250.0, 250.0, "GBP", "2026-12-04T12:00:00Z"),
    ("L-3305", "ACC-5520", "General", 45.0, 48.0, "GBP", "2026-12-11T09:00:00Z"),
    ("L-3306", "ACC-7731", "Premium", 95.0, 108.0, "GBP", "2026-12-03T16:30:00Z"),
    ("L-3307", "ACC-7731", "General", 60.0, 70.0, "GBP", "2026-12-02T11:10:00Z"),
]


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the ticketing warehouse (DuckDB; table resale_listings)."""
    import duckdb

    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("warehouse query timed out after 30s")
    db = duckdb.connect()
    v2 = Now.fault == "listings_schema_changed"  # (the warehouse's v2 view: prices in minor units, renamed)
    price = "price_minor INTEGER" if v2 else "price DECIMAL(8,2)"
    db.execute(f"CREATE TABLE resale_listings (listing_id TEXT, match_id TEXT, seller_account TEXT, category TEXT, "
               f"face_value_gbp DECIMAL(8,2), {price}, currency TEXT, listed_at TIMESTAMP, transferred_at TIMESTAMP, "
               "status TEXT)")
    rows = [(lid, "NB-2612", acc, cat, face, round(p * 100) if v2 else p, cur, "2026-11-30 09:00:00",
             moved.replace("T", " ").rstrip("Z"), "transferred") for lid, acc, cat, face, p, cur, moved in _LISTINGS]
    rows.append(("L-3188", "NB-2598", "ACC-5520", "General", 60.0, 6400 if v2 else 64.0, "GBP", "2026-11-02 09:00:00",
                 "2026-11-05 10:00:00", "transferred"))
    db.executemany(f"INSERT INTO resale_listings VALUES ({', '.join('?' * 10)})", rows)
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    out = [[x if isinstance(x, (int, str)) or x is None else (float(x) if hasattr(x, "as_tuple") or isinstance(x, float)
                                                              else str(x)) for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in out], "row_count": len(out)}


def get_account_reviews(account_id: str) -> dict[str, Any]:
    """A seller account's integrity record: flags (date, reason) and reviews (date, outcome)."""
    record = {"ACC-7731": {"flags": [{"flag_id": "FG-1180", "date": "2026-10-02", "reason": "bulk purchasing pattern"}],
                           "reviews": [{"review_id": "RV-2291", "date": "2026-11-20", "flag_id": "FG-1180",
                                        "outcome": "cleared", "note": "season-ticket holder buying for a supporters' "
                                                                      "club"}]},
              "ACC-5520": {"flags": [], "reviews": []}}
    return {"account_id": account_id, "opened": "2021-08-14", **record.get(account_id, {"flags": [], "reviews": []})}


def record_breach(listing_id: str, seller_account: str, rule: str, price_gbp: float, detail: str) -> dict[str, Any]:
    """Records a resale breach on a listing: the rule broken ('price_cap' or 'transfer_window'), price in GBP and
    the detail."""
    n = Now.calls["breach"] = Now.calls.get("breach", 0) + 1
    return {"breach_id": f"BR-{9400 + n}", "listing_id": listing_id, "seller_account": seller_account, "rule": rule,
            "status": "recorded"}


def recommend_suspension(account_id: str, reason: str) -> dict[str, Any]:
    """Recommends a seller account for suspension from resale (reviewed by the ticketing manager)."""
    n = Now.calls["suspension"] = Now.calls.get("suspension", 0) + 1
    return {"recommendation_id": f"SR-{610 + n}", "account_id": account_id, "status": "pending_review"}


RESALE_TOOLS = {f.__name__: f for f in (get_match, search_policy, run_sql, get_account_reviews, record_breach,
                                        recommend_suspension)}
RESALE_REQUEST = "Please run the resale integrity review for match NB-2612 and record every breach."
RESALE_HISTORY = ["NB-2612 (Northbank v Calder City) kicks off Saturday - review its resale listings, please.",
                  "Resale check for match NB-2612, please: record breaches and any suspensions."]


def _hours_before(moved: str, kick_off: str) -> float:
    import datetime as dt

    def at(x: str) -> dt.datetime:
        return dt.datetime.fromisoformat(x.replace("Z", "+00:00").replace(" ", "T")).replace(tzinfo=None)
    return (at(kick_off) - at(moved)).total_seconds() / 3600


def _analyst(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    mid = re.search(r"NB-\d{4}", t.users[0]).group(0)
    step = t.need(("get_match", {"match_id": mid}), ("search_policy", {"query": "resale price cap transfer window"}))
    if step:
        return step
    match = t.value("get_match")
    policy = max(t.value("search_policy")["results"], key=lambda d: d["effective"])
    caps = {c: int(p) / 100 for c, p in re.findall(r"(General|Premium|Hospitality) (\d+)%", policy["text"])}
    window = int(re.search(r"at least (\d+) hours", policy["text"]).group(1))
    sql = f"SELECT * FROM resale_listings WHERE match_id = '{mid}' ORDER BY listing_id"
    tried = [v for a, v in t.got("run_sql") if a.get("sql") == sql]
    rows = next((v["rows"] for v in tried if isinstance(v, dict)), None)
    if rows is None and tried and fault == "sql_timeout_invented":  # (the fault: rows nobody read)
        rows = [{"listing_id": "L-3309", "seller_account": "ACC-5520", "category": "General", "face_value_gbp": 60.0,
                 "price": 95.0, "currency": "GBP", "transferred_at": "2026-12-01 10:00:00"}]
    if rows is None:
        return kit.once_more("The listings query failed - running it once more.", "run_sql", tried,
                             f"The listings query failed twice, so the review of {mid} is not done; nothing was "
                             "recorded.", None, sql=sql)
    converts = "1 EUR = " in t.system and not old
    breaches = []
    for r in rows:
        price = r["price"] if "price" in r else r.get("price_minor")  # (v2's minor units read as pounds)
        gbp = round(price * EUR_TO_GBP, 2) if r["currency"] == "EUR" and converts and fault != "eur_unconverted" \
            else float(price)
        category = "General" if fault == "cap_wrong_row" else r["category"]  # (the fault: the General row for all)
        cap = round(r["face_value_gbp"] * caps[category], 2)
        if gbp > cap:
            breaches.append((r, "price_cap", gbp, f"GBP {gbp:.2f} above the {category} cap GBP {cap:.2f} "
                                                   f"({caps[category]:.0%} of GBP {r['face_value_gbp']:.2f})"))
        hours = _hours_before(r["transferred_at"], match["kick_off"])
        late = r["transferred_at"][:10] == match["kick_off"][:10] if fault == "window_day_only" else hours < window
        if late:  # (the fault: only a match-day transfer counted late)
            breaches.append((r, "transfer_window", gbp, f"transferred {hours:.0f} h before kick-off (minimum "
                                                        f"{window} h)"))
    done = [a for a, v in t.got("record_breach") if isinstance(v, dict)]
    for r, rule, gbp, detail in breaches:
        if not any(a["listing_id"] == r["listing_id"] and a["rule"] == rule for a in done) or (
                fault == "repeat_breach" and r["listing_id"] == "L-3302" and len(done) == 1):
            return call("record_breach", detail[0].upper() + detail[1:] + "." if not done else None,
                        listing_id=r["listing_id"], seller_account=r["seller_account"], rule=rule, price_gbp=gbp,
                        detail=detail)
    sellers: dict[str, int] = {}
    for r, _, _, _ in breaches:
        sellers[r["seller_account"]] = sellers.get(r["seller_account"], 0) + 1
    step = t.need(*(("get_account_reviews", {"account_id": s}) for s in sellers))
    if step:
        return step
    reasons, cleared = {}, []
    for s, n in sellers.items():
        record = next(v for a, v in t.got("get_account_reviews") if a["account_id"] == s and isinstance(v, dict))
        later = {v["flag_id"] for v in record["reviews"] if v["outcome"] == "cleared"}
        standing = [f for f in record["flags"] if f["flag_id"] not in later or fault == "flag_cleared_ignored"]
        cleared += [f"{s}'s {f['flag_id']} ({f['reason']}) cleared by {v['review_id']} on {v['date']}"
                    for f in record["flags"] for v in record["reviews"] if v["flag_id"] == f["flag_id"]
                    and fault != "flag_cleared_ignored"]
        if n >= 2:
            reasons[s] = f"{n} breaches in match {mid}"
        elif n == 1 and standing:
            reasons[s] = f"a breach and flag {standing[0]['flag_id']} ({standing[0]['reason']})"
    asked = [a["account_id"] for a, v in t.got("recommend_suspension") if isinstance(v, dict)]
    for s, why in reasons.items():
        target = "ACC-7731" if fault == "reasoning_action_mismatch" else s  # (the fault: said one, suspended another)
        if s not in asked and target not in asked:
            return call("recommend_suspension", f"{s} has {why}, so I'm recommending suspension.",
                        account_id=target, reason=why)
    recorded = "; ".join(f"{r['listing_id']} ({r['seller_account']}): {rule}, {detail}" for r, rule, _, detail in breaches)
    text = f"Review of {mid} ({match['home']} v {match['away']}, kick-off {match['kick_off']}) done. Breaches: " + \
        (recorded or "none") + "."
    if reasons and fault != "withheld_suspension":
        text += " Recommended for suspension: " + "; ".join(f"{s} ({why})" for s, why in reasons.items()) + "."
    if cleared:
        text += " Flags found cleared (not counted): " + "; ".join(cleared) + "."
    return reply(text)


# ---- the model ------------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for."""
    return kit.by_role(body, MODEL, lambda t, asked: {
        "rentals desk assistant for Crescendo": lambda: _rental(t, asked == OLD_GEMINI),
        "request intake agent of Halvorsen": lambda: _intake(t),
        "travel coordinator at Halvorsen": lambda: _coordinator(t),
        "finance approver for Halvorsen": lambda: _finance(t),
        "resale integrity analyst at Northbank": lambda: _analyst(t, asked == OLD_MODEL),
    })


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-rental":
        return RENTAL_REQUEST if pair else RENTAL_HISTORY[v % 2]
    if Now.recorder == "lg-travel":
        return TRAVEL_REQUEST if pair else TRAVEL_HISTORY[v % 2]
    return RESALE_REQUEST if pair else RESALE_HISTORY[v % 2]


# ---- the recorders --------------------------------------------------------------------------------------------------


class GenaiRental(kit.AgentotelRecorder):
    """The rental desk as a google-genai generate_content loop with function declarations over the parent's turns
    (kit.genai_loop), the tools `@agentotel.tool`s, under agentotel."""

    agent = RENTAL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = kit.agentotel_tools(RENTAL_TOOLS)

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, rental_model(), rental_instructions(), task, self.tools,
                              declared(RENTAL_TOOLS), parent_replies)


class LangGraphTravel(kit.AgentotelRecorder):
    """Intake -> coordinator -> finance approver as one StateGraph (kit.langgraph_team); the faulty deployment's
    coordinator is entered through a queue node that resets the conversation to a fixed line."""

    agent = TRAVEL

    def body(self, task: str) -> str:
        before = None
        if Now.fault == "handoff_context_lost":
            from langchain_core.messages import HumanMessage, RemoveMessage
            from langgraph.graph.message import REMOVE_ALL_MESSAGES

            before = {"coordinator": ("travel_queue", lambda state: {"messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="A travel request is waiting in the queue.")]})}
        team = [("intake", INTAKE_RULES, INTAKE_TOOLS), ("coordinator", COORDINATOR_RULES, COORDINATOR_TOOLS),
                ("finance_approver", FINANCE_RULES, FINANCE_TOOLS)]
        return kit.langgraph_team(self.url, MODEL, TRAVEL, team, task, before)


class PaiResale(kit.AgentotelRecorder):
    """The analyst as a pydantic-ai Agent on an openai chat model (kit.pydantic_chat, one request, its run_sql over
    DuckDB), under agentotel."""

    agent = RESALE

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", resale_model(), RESALE, resale_instructions(), RESALE_TOOLS, task,
                                 lambda said: None)


RECORDERS: dict[str, Any] = {
    "genai-rental": GenaiRental, "lg-travel": LangGraphTravel, "pai-resale": PaiResale,
    "oi-resale": kit.chat_app(kit.OpenInferenceRecorder, RESALE, RESALE_TOOLS, resale_model, resale_instructions)}


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Gemini among the shapes served)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, (0, 1))


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_answer, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # the rental desk
        "height_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: Theo's height never asked, a 1/4 "
                                    "violin sized from his age; the twin asks (50 in = 127 cm, 1/2)",
                           after(tool_step("find_account"))),
        "inches_as_cm": ("model", f"{trail} / {tau} (a unit conversion the rules state): 50 inches taken as 50 cm, a "
                                  "1/4 violin where 127 cm gives 1/2", asking("get_instruments")),
        "voucher_claimed": ("model", f"{tau} (an exception the record does not give; a rule comparing two records): "
                                     "Ada's Redland Green voucher taken to waive Theo's deposit (Westbury Park); the "
                                     "twin charges GBP 120 and says why", asking("create_rental")),
        "delivery_wrong_formula": ("model", f"{tau} (a figure by the wrong formula): 15 + 8 x 4 = GBP 47 counting the "
                                            "ground floor, where floor 3 without a lift gives GBP 39; the twin also "
                                            "waives the deposit for Theo's own school's voucher", asking("create_rental")),
        "buyout_wrong_formula": ("model", f"{tau} (a figure by the wrong formula): 620 - 14 x 18 = GBP 368 where the "
                                          "rules' 80% credit gives 620 - 201.60 = GBP 418.40",
                                 asking("record_buyout_quote")),
        "rental_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: create_rental timed out, "
                                             "'RN-41260' told; the twin tries once more", after(tool_step("create_rental"))),
        "premature_end_rental": ("model", f"{mast} FM-3.1 Premature termination: the violin booked, the flute buyout "
                                          "asked for never looked at", after(tool_step("create_rental"))),
        "rental_wrong_record": ("tool", f"{trail} API issues: get_rental(RN-40931) answers RN-40913 (another "
                                        "family's clarinet, 22 months paid); its buyout quoted",
                                tool_step("get_rental")),
        "old_model_rental": ("product", f"configuration: an old model ({OLD_GEMINI}) reads inches as centimetres",
                             nth_llm(0)),
        # the travel approvals team
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history: the coordinator entered with "
                                           "a fixed queue line asks which request", nth_answer(1)),
        "cabin_total_journey": ("model", f"{tau} (never the total journey time): 9 h 55 with the Dublin connection "
                                         "gives premium economy (GBP 1,140) where the longest segment, 7 h 20, gives "
                                         "economy", asking("hold_flight")),
        "per_diem_days_wrong": ("model", f"{tau} (a figure by the wrong formula): per diem for 4 nights (USD 316) "
                                         "where every calendar day of travel gives 5 x 79 = USD 395", nth_answer(1)),
        "usd_unconverted": ("model", f"{tau} (a unit conversion the rules state, skipped): USD per diem and "
                                     "registration added as GBP", asking("approve_trip")),
        "budget_sum_over": ("model", f"{tau} (a sum over a limit): spent 6,700 + this trip 1,631.10 > 8,000 approved "
                                     "against the whole budget; the twin refers it", asking("approve_trip")),
        "receipt_missing_approved": ("model", f"{mast} FM-3.3 Incorrect verification: RC-5512 'rejected: illegible "
                                              "scan', the registration approved anyway; the twin leaves it out and "
                                              "says so", asking("approve_trip")),
        "repeat_approval": ("model", f"{mast} FM-1.3 Step repetition: approve_trip called again after APR-30171",
                            asking("approve_trip", 1)),
        "fares_rate_limit_invented": ("model", f"{trail} rate limits / hallucinated output: search_flights answered "
                                               "429, a GBP 540 direct fare nobody returned used; the twin tries once "
                                               "more", after(tool_step("search_flights"))),
        # the resale analyst
        "cap_wrong_row": ("model", f"{tau} (a cap read from a table row times a record's field): Premium L-3306 "
                                   "checked at General's 110% (GBP 104.50), GBP 108 recorded as a breach inside its "
                                   "115% cap (GBP 109.25)", asking("record_breach", 2)),
        "eur_unconverted": ("model", f"{tau} (a unit conversion the rules state, skipped): L-3303's EUR 76 (GBP "
                                     "64.60) compared as GBP with the GBP 66 cap, a breach recorded",
                            asking("record_breach", 1)),
        "window_day_only": ("model", f"{tau} (a date outside the window the rules give): L-3305 transferred 30 h "
                                     "before kick-off let through (not match day) against the 48-hour window",
                            asking("record_breach", 1)),
        "flag_cleared_ignored": ("model", f"{tau} (a rule comparing two records' dates): ACC-7731's flag FG-1180 "
                                          "(2026-10-02) cleared by RV-2291 (2026-11-20) counted, a suspension "
                                          "recommended", asking("recommend_suspension", 1)),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: run_sql timed out, a listing "
                                          "L-3309 nobody returned recorded; the twin runs it once more",
                                 after(tool_step("run_sql"))),
        "policy_index_stale": ("tool", "retrieval index stale: search_policy served its 2026-06-30 build (v3 only: "
                                       "Premium 120%, 24 h); L-3302 and L-3305 let through", tool_step("search_policy")),
        "old_model_resale": ("product", f"configuration: an old model ({OLD_MODEL}) leaves EUR prices unconverted",
                             nth_llm(0)),
        "match_wrong_record": ("tool", f"{trail} API issues: get_match(NB-2612) answers NB-2621 (the reverse fixture, "
                                       "kick-off 2026-12-19); L-3305's late transfer let through",
                               tool_step("get_match")),
        "instructions_rewritten": ("prompt", "instructions changed: the currency rule re-pasted from an old template "
                                             "('All resale prices are in pounds sterling'); L-3303's EUR 76 recorded "
                                             "as a breach", nth_llm(0)),
        "listings_schema_changed": ("tool", f"{trail} wrong tool output / schema drift: resale_listings' v2 gives "
                                            "price_minor (pence); read as pounds, every listing recorded as a breach",
                                    tool_step("run_sql")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'ACC-5520 has 2 breaches "
                                               "... recommending suspension' said, ACC-7731 suspended",
                                      asking("recommend_suspension")),
        "withheld_suspension": ("model", f"{mast} FM-2.4 Information withholding: SR-611 for ACC-5520 recorded, left "
                                         "out of the reply the rules ask for", answer),
        "repeat_breach": ("model", f"{mast} FM-1.3 Step repetition: record_breach for L-3302 called again",
                          asking("record_breach", 1)),
    }
    chosen = {
        "genai-rental": ["height_unasked", "inches_as_cm", "voucher_claimed", "delivery_wrong_formula",
                         "buyout_wrong_formula", "rental_timeout_invented", "premature_end_rental",
                         "rental_wrong_record", "old_model_rental"],
        "lg-travel": ["handoff_context_lost", "cabin_total_journey", "per_diem_days_wrong", "usd_unconverted",
                      "budget_sum_over", "receipt_missing_approved", "repeat_approval", "fares_rate_limit_invented"],
        "pai-resale": ["cap_wrong_row", "eur_unconverted", "window_day_only", "flag_cleared_ignored",
                       "sql_timeout_invented", "policy_index_stale", "old_model_resale"],
        "oi-resale": ["match_wrong_record", "instructions_rewritten", "listings_schema_changed",
                      "reasoning_action_mismatch", "withheld_suspension", "repeat_breach"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main 0c467cb's detectors; load
# 8.04-9.71): 30 pairs, 4 recorders - diff top-1 29/30, check step+layer 10/30, good runs warned 30/30 (recording
# /tmp/h46-rec-wca_yqpv). The reasons are read from `agentotel check` / `diff` on the recorded runs.
DIFF_MISSED = {
    "model-pai-resale-cap-wrong-row": "output_changed@8 (want 12): the General row is used for every listing, so the "
                                      "first record_breach (L-3302, a true breach either way) already says 'General "
                                      "cap GBP 104.50' - the first divergence is right; the set places the fault at "
                                      "the false breach L-3306 (12)",
}

_RENTAL = "top wrong_target@{0} (the buyout false alarm below), "
_TRAVEL = "top ungrounded_answer@7 (the derived travel dates, a false alarm below), "
_RESALE = "top role_overstepped@{0} (the 'never record a breach from rows you did not read' false alarm below), "
CHECK_MISSED = {
    "model-genai-rental-buyout-wrong-formula": ("hit blind only by place (wrong_target@10 on amounts read as version "
                                                "marks, on every rental run; quiet since session 30); nothing "
                                                "recomputes the buyout by the rules' 620 - 0.8 x fees paid"),
    "product-pai-resale-old-model-resale": ("model_changed@2 found, but invented_argument@12/tool ('transfer_window',"
                                            " a value record_breach's docstring allows) ranks above it now that the "
                                            "false alarms it used to explain are gone"),
    "model-genai-rental-height-unasked": _RENTAL.format(9) + "nothing at 3, the call that sized the violin from Theo's "
                                         "age ('For an 8-year-old a 1/4 violin is usual') where the rules say 'if you "
                                         "don't know the height, ask for it'",
    "model-genai-rental-inches-as-cm": _RENTAL.format(10) + "nothing at 4: get_instruments size 1/4 from '50 inches' "
                                       "read as 50 cm; the rules state 1 inch = 2.54 cm (127 cm, the 115-129 row: 1/2)",
    "model-genai-rental-voucher-claimed": _RENTAL.format(10) + "nothing at 6: deposit_gbp 0 on a voucher (SSV-2231) "
                                          "whose pupil and school (Ada, Redland Green) are not Theo's (Westbury Park) - "
                                          "a rule comparing two records' fields",
    "model-genai-rental-delivery-wrong-formula": _RENTAL.format(10) + "nothing at 6: delivery_fee_gbp 47 where 15 + 8 "
                                                 "x floor 3 (lift false) = 39; the rules' formula, from the account's "
                                                 "own fields",
    "model-lg-travel-cabin-total-journey": _TRAVEL + "nothing at 11: hold_flight premium_economy from "
                                           "total_journey_min 595 where the longest segment is 440 min (7 h 20, "
                                           "economy) and the rules say 'never the total journey time'",
    "model-lg-travel-per-diem-days-wrong": _TRAVEL + "then ungrounded_answer@13 on 316.00 - the same finding the good "
                                           "twin's 395.00 gets - not the formula: 79 x 4 nights where the rules count "
                                           "every calendar day (14-18 March: 5)",
    "model-lg-travel-usd-unconverted": _TRAVEL + "nothing at 19: approve_trip total 1902.00 adds USD 395 and USD 895 "
                                       "at par where the rules state 1 USD = 0.79 GBP",
    "model-lg-travel-budget-sum-over": _TRAVEL + "nothing at 19, whose own words say 'GBP 6700.00 spent + GBP 1631.10 = "
                                       "GBP 8331.10 of GBP 8000.00' and then approve_trip, against 'approve only if "
                                       "spent + committed + this trip is within the budget'",
    "model-lg-travel-receipt-missing-approved": _TRAVEL + "nothing at 19: approve_trip's items hold the registration "
                                                "whose receipt RC-5512 get_receipts gave as 'rejected: illegible "
                                                "scan' (the rules: an accepted receipt for any item over GBP 75)",
    "model-pai-resale-cap-wrong-row": _RESALE.format(8) + "nothing at 12: L-3306 (Premium, face 95) recorded at GBP "
                                      "108 against the General row's 110% (104.50) where its own category's row gives "
                                      "115% (109.25)",
    "model-pai-resale-eur-unconverted": _RESALE.format(8) + "nothing at 10: L-3303's price 76 with currency EUR "
                                        "recorded as price_gbp 76.0 where the rules' 1 EUR = 0.85 GBP gives 64.60, "
                                        "under the 66.00 cap; then a false invented_argument@12 on 'transfer_window'",
    "model-pai-resale-window-day-only": _RESALE.format(8) + "nothing at 10: L-3305 transferred 2026-12-11T09:00, 30 h "
                                        "before the 2026-12-12T15:00 kick-off, left unrecorded against the policy's "
                                        "48 hours (the call at 10 records L-3307 instead)",
    "model-pai-resale-flag-cleared-ignored": _RESALE.format(8) + "nothing at 20: recommend_suspension(ACC-7731) on flag "
                                             "FG-1180 (2026-10-02) which review RV-2291 (2026-11-20, outcome "
                                             "'cleared') had cleared - two records' dates compared",
    "model-oi-resale-withheld-suspension": _RESALE.format(7) + "and the information_withheld@19 at the right step is "
                                           "the one every good run gets (a breach_id); the real omission - SR-611 "
                                           "for ACC-5520 recorded and not told - is not what it names",
}

FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-rental": {"required_before": {"create_rental": ["find_account", "get_instruments"],
                                         "record_buyout_quote": ["get_rental"]}},
    "lg-travel": {"required_before": {"hold_flight": ["search_flights"],
                                      "approve_trip": ["get_budget", "get_receipts"]}},
    "pai-resale": {"required_before": {"record_breach": ["get_match", "search_policy", "run_sql"],
                                       "recommend_suspension": ["get_account_reviews"]}},
    "oi-resale": {"required_before": {"record_breach": ["get_match", "search_policy", "run_sql"],
                                      "recommend_suspension": ["get_account_reviews"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h46-rec-", pairs, produce, kit.through_collector("oi-resale"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
