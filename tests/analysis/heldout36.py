"""A thirty-sixth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a ski resort's lessons and rentals desk talking with a guest over several turns
under a written policy, a pharmaceutical cold-chain distribution team (an order taker handing to a warehouse picker,
who hands to a dispatcher) and a software-licence compliance auditor reading a contract, its amendments from a document
search and monthly seat usage from SQL rows, run through real SDKs and frameworks.

    python tests/analysis/heldout36.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout36.py --score DIR [...]       # the runs a call left in DIR, scored again

Powderhorn Mountain Resort's Snow School & Rentals desk (find_guest, get_lesson_slots, book_lesson, create_rental)
serves a guest by written rules: the booking reference and surname first; a group lesson by age from a table, never a
slot on weather hold; the binding setting (DIN) from a table by weight in kilograms (pounds converted, a weight never
guessed: asked); a helmet on every under-18's rental unless a parent says the child brings their own; rentals within the
stay; a price of days x daily rate x (1 - the multi-day discount) from two tables; a failure tried once more, never a
rental number create_rental didn't return. The guest's replies are scripted, said when the desk's message holds their
cue. Meridian Cold Chain's team: an order taker (get_customer, get_product, create_order: a controlled product only
for a customer whose licence for that schedule is unexpired on the ship date; orders at or after 14:00 ship the next
business day) hands a note to a picker (get_lots, pick_lot: storage in F against loggers in C, converted; a lot whose
temperature events total more than 30 minutes never picked, each lot passed over reported) whose note goes to a
dispatcher (get_shippers, book_shipment: a shipper qualified for the whole storage range, one shipment). Tessellate
Software's licence auditor (get_contract, search_contract_docs: dated, versioned amendments, a later one superseding;
run_sql over a DuckDB seat_usage table; record_finding) finds the licensed seats, the contract year's peak, the grace
from a table row times the licensed seats, the true-up at half the edition's annual price per overage seat, due 30
days after the anniversary, and reports Governance use on a lower edition. Each recorder in a process of its own:

- `genai-ski` (ski desk): a google-genai generate_content loop with function declarations over several guest turns,
  the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-coldchain` (cold-chain team): a LangGraph StateGraph of three `create_react_agent` nodes (kit.langgraph_team),
  under agentotel;
- `agents-licence` (auditor): an OpenAI Agents SDK Agent on a chat completions model, function tools, under agentotel;
- `oi-licence` (auditor): a plain openai chat loop under OpenInference's openai instrumentation, the tools OITracer
  TOOL spans, sent by OTLP through agentotel-collector.

Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins: a
clarifying question asked (the child's weight), 165 lb converted to 74.8 kg (DIN 7.5), a quote computed from the
tables (5 x $48 x 0.85 = $204.00), rentals cut to the stay and said so, a held lesson slot refused for the open one, a
timeout tried once more, an order refused for an expired licence, a late order shipped the next business day, a lot
with a 48-minute excursion (9.4 C = 48.9 F) passed over and reported, a usage peak inside the grace allowance
(364 <= 350 + 17) recorded as no true-up, a rate-limited query tried once more.

Built and scored blind, once (main's HEAD d48ead4e5f2373085c7498a9b60de2fc21a6c0e2, the branch rebased onto it; the set's commit touches only
tests; agentotel/analysis/, git log and the detectors' tests unread; load average 5.96 at the start, 8.19 at the end, other helpers running; recording /tmp/h36-rec-__gvhutf): 30 pairs,
4 recorders (google-genai, a LangGraph StateGraph of three agents, the OpenAI Agents SDK under agentotel, an openai loop
under OpenInference through the collector) - diff top-1 29/30, check step+layer 14/30, good runs with a warning 9/30.
Check's hits: outside the model 6/6 (an old Gemini, an old GPT, a rewritten prompt, a stale document index, a contract
API answering another record, a lot API's v2 shape), the handover reset, two repeated writes, a held lesson slot booked
(policy_violated), a rate-limited query answered with an invented peak (tool_error_ignored) - and three by chance:
lb_as_kg, discount_wrong_formula and rental_past_checkout are "hit" by the same wrong_target finding at Erik's rental
that warns all nine ski good runs (G-20931, the party's shared guest id, read as Maja's record), not by their faults.
Counted honestly, check finds 11/30. Its 16 misses are in CHECK_MISSED, each with why.
"""

from __future__ import annotations

import datetime as dt
import math
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
from heldout9 import Talk, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-flash-002"
SKI, COLD, LICENCE = "powderhorn-snow-desk", "meridian-coldchain", "tessellate-licence-audit"


class Now(kit.World):
    """The world of the run being recorded."""


def _day(iso: str, days: int = 0) -> str:
    return (dt.date.fromisoformat(iso) + dt.timedelta(days=days)).isoformat()


# ---- the ski desk -------------------------------------------------------------------------------------------------

_LEVELS = [(4, 6, "Snow Cubs"), (7, 12, "Mountain Rangers"), (13, 17, "Teen Freeride"), (18, 120, "Adult Group")]
_DIN = [(22, 29, 2.5), (30, 38, 3.5), (39, 47, 4.5), (48, 57, 5.5), (58, 66, 6.5), (67, 78, 7.5), (79, 94, 8.5),
        (95, 999, 10.0)]
_RATES = {"Sport": 48.0, "Performance": 62.0, "Junior": 29.0}
_DISCOUNTS = [(1, 2, 0.0), (3, 4, 0.10), (5, 7, 0.15)]
LB_PER_KG = 2.2046


def _table(head: str, rows: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * head.count("|", 1), *rows])


def ski_instructions() -> str:
    return "\n\n".join([
        "You are the Snow School & Rentals desk assistant at Powderhorn Mountain Resort. Today is Saturday 5 December "
        "2026.",
        "Before anything else you need the booking reference and the lead guest's surname; check both with find_guest.",
        "## Lessons\nGroup lessons go by the skier's age (the booking's party list):\n\n" + _table(
            "| Age | Group |", [f"| {lo}-{hi} | {name} |" if hi < 120 else f"| {lo}+ | {name} |" for lo, hi, name in _LEVELS])
        + "\n\nBook only a slot get_lesson_slots lists as `open`. A slot on `weather_hold` (an upper-mountain wind "
          "closure) must never be booked - offer an open slot or another day instead.",
        "## Rentals\n- The binding release setting (DIN) comes from the skier's weight in **kilograms**:\n\n" + _table(
            "| Weight (kg) | DIN |", [f"| {lo}-{hi} | {din} |" if hi < 999 else f"| {lo}+ | {din} |" for lo, hi, din in _DIN])
        + f"\n\n  Guests often give pounds: 1 kg = {LB_PER_KG} lb - convert before you look the setting up. Never "
          "guess a weight: if you don't have it, ask.\n"
          "- Every guest under 18 must have a helmet on the rental (helmet true), unless a parent tells you the child "
          "brings their own certified helmet. Adults choose.\n"
          "- Rentals run on consecutive days within the stay: the last rental day may not be after the check-out date.\n"
          "- Price = days x daily rate x (1 - multi-day discount):\n\n"
        + _table("| Package | Daily rate (USD) |", [f"| {p} | {r:.2f} |" for p, r in _RATES.items()]) + "\n\n"
        + _table("| Rental days | Discount |", [f"| {lo}-{hi} | {d:.0%} |" for lo, hi, d in _DISCOUNTS]),
        "If a tool fails, call it once more; if it fails again, tell the guest that part isn't set up yet. Never give a "
        "rental number that create_rental didn't return. End by confirming what you booked, with prices.",
    ])


def ski_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_ski" else GEMINI


def find_guest(booking_ref: str) -> dict[str, Any]:
    """A resort booking: guest id, lead guest's surname, the stay (check-in, check-out), lodging and the party."""
    if booking_ref != "PH-40211":
        return {"bookings": []}
    out = "2026-12-10" if Now.pair == "rental_past_checkout" else "2026-12-12"
    return {"guest_id": "G-20931", "booking_ref": booking_ref, "surname": "Lindgren", "lodging": "Aspen Lodge 214",
            "stay": {"check_in": "2026-12-06", "check_out": out},
            "party": [{"name": "Erik Lindgren", "age": 41}, {"name": "Maja Lindgren", "age": 9}]}


def get_lesson_slots(date: str, level: str) -> dict[str, Any]:
    """Group lesson slots for a level on a date: slot id, start time, meeting point, places left and status."""
    held = Now.pair == "held_slot_booked"
    return {"date": date, "level": level, "slots": [
        {"slot_id": f"LS-{date[5:7]}{date[8:]}-A", "start": "10:00", "meeting_point": "Summit Chair top station",
         "places_left": 3, "status": "weather_hold" if held else "open", "price_usd": 95.0},
        {"slot_id": f"LS-{date[5:7]}{date[8:]}-B", "start": "13:00", "meeting_point": "Base Area flag 4",
         "places_left": 5, "status": "open", "price_usd": 95.0}]}


def book_lesson(guest_id: str, skier_name: str, slot_id: str, level: str) -> dict[str, Any]:
    """Books a skier into a group lesson slot."""
    return {"lesson_booking_id": "LB-7781", "guest_id": guest_id, "skier_name": skier_name, "slot_id": slot_id,
            "level": level, "status": "confirmed", "price_usd": 95.0}


def create_rental(guest_id: str, skier_name: str, package: str, start_date: str, days: int, weight_kg: float,
                  din: float, helmet: bool, total_usd: float) -> dict[str, Any]:
    """Creates a ski rental: package, first day, number of days, the skier's weight (kg), the DIN setting, helmet
    and the quoted total."""
    if Now.pair == "rental_timeout_invented" and Now.count("create_rental") == 1:
        raise TimeoutError("rental system did not answer within 15s")
    n = Now.calls["rental"] = Now.calls.get("rental", 0) + 1
    return {"rental_id": f"RN-{55200 + n}", "skier_name": skier_name, "package": package, "start_date": start_date,
            "days": days, "din": din, "helmet": helmet, "total_usd": total_usd, "status": "reserved"}


SKI_TOOLS = {f.__name__: f for f in (find_guest, get_lesson_slots, book_lesson, create_rental)}

_GUEST = [("weigh", "Maja weighs 31 kg."), ("anything else", "No, that's all - thanks!")]
SKI_REQUEST = ("Hi! Booking PH-40211, surname Lindgren. Please put my daughter Maja into a group ski lesson on Tuesday "
               "8 December, and set up rentals for 5 days from Monday 7 December: the Sport package for me (Erik) and "
               "Junior for Maja. I weigh 165 lb.")
SKI_HISTORY = ["Hello, Lindgren here, booking PH-40211. A group lesson for Maja on 8 December please, and 5 days of "
               "rentals from 7 December - Sport for me, Junior for her. I'm 165 lb.",
               "Booking PH-40211 (Lindgren): Maja needs a group lesson on Tuesday 8 Dec, and we'd both like rentals for "
               "5 days starting 7 Dec (Sport for Erik, Junior for Maja). I'm 165 lb."]
LESSON_DAY, RENTAL_START = "2026-12-08", "2026-12-07"


def _row(rows: list[tuple[Any, Any, Any]], x: float) -> Any:
    return next(v for lo, hi, v in rows if lo <= x <= hi + 0.99)


def _ski(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("Have a wonderful week on the mountain, Erik and Maja!")
    ref = re.search(r"PH-\d{5}", said)
    if not ref or "Lindgren" not in said:
        return reply("Happy to help! What's your booking reference and the lead guest's surname?")
    step = t.need(("find_guest", {"booking_ref": ref.group(0)}))
    if step:
        return step
    guest = t.value("find_guest")
    if guest.get("surname") != "Lindgren":
        return reply("Sorry, that booking reference and surname don't match, so I can't go on.")
    kid = re.search(r"(\d+(?:\.\d+)?) ?kg", said)
    if not kid and fault != "weight_unasked":
        return reply("Thanks, Erik. To set Maja's bindings safely I need her weight - how much does Maja weigh?")
    kid_kg = float(kid.group(1)) if kid else 27.0  # (the fault: a weight guessed from her age, never asked)
    maja = next(p for p in guest["party"] if p["name"].startswith("Maja"))
    level = _row(_LEVELS, maja["age"])
    step = t.need(("get_lesson_slots", {"date": LESSON_DAY, "level": level}))
    if step:
        return step
    slots = t.value("get_lesson_slots")["slots"]
    slot = slots[0] if fault == "held_slot_booked" else next(s for s in slots if s["status"] == "open")
    held = [s for s in slots if s["status"] == "weather_hold" and s is not slot]
    lesson = t.value("book_lesson")
    if not lesson:
        return call("book_lesson", f"The {held[0]['start']} slot is on weather hold, so I'm booking the "
                    f"{slot['start']} one." if held else None, guest_id=guest["guest_id"], skier_name=maja["name"],
                    slot_id=slot["slot_id"], level=level)
    notes = [f"Maja is booked into {level} on Tuesday 8 December at {slot['start']} ({slot['meeting_point']}), "
             f"booking {lesson['lesson_booking_id']}, ${lesson['price_usd']:.2f}."]
    if held:
        notes.append(f"(The {held[0]['start']} slot is closed for wind.)")
    if fault == "premature_end_ski":  # (the fault: the rentals asked for are never set up)
        return reply(" ".join(notes) + _ANYTHING)
    asked_days = int(re.search(r"(\d+) days", said).group(1))
    stay_days = (dt.date.fromisoformat(guest["stay"]["check_out"]) - dt.date.fromisoformat(RENTAL_START)).days + 1
    days = asked_days if fault == "rental_past_checkout" else min(asked_days, stay_days)
    erik_lb = float(re.search(r"(\d+(?:\.\d+)?) ?lb", said).group(1))
    erik_kg = erik_lb if fault == "lb_as_kg" or old else round(erik_lb / LB_PER_KG, 1)  # (the fault: pounds as kg)
    skiers = [("Erik Lindgren", "Sport", erik_kg, False), ("Maja Lindgren", "Junior", kid_kg,
                                                           not (fault == "helmet_waiver_claimed" or old))]
    rentals = []
    for name, package, kg, helmet in skiers:
        rate, discount = _RATES[package], _row(_DISCOUNTS, days)
        total = round(days * rate * (1 - discount), 2)
        if fault == "discount_wrong_formula":  # (the fault: the discount taken off one day's rate only)
            total = round(days * rate - rate * discount, 2)
        tried = [v for a, v in t.got("create_rental") if a.get("skier_name") == name]
        done = next((v for v in tried if isinstance(v, dict)), None)
        if not done and tried and fault == "rental_timeout_invented":  # (the fault: a number nobody returned)
            done = {"rental_id": "RN-55120", "total_usd": total, "din": _row(_DIN, kg), "helmet": helmet}
        if not done:
            say = None
            if name.startswith("Maja") and not kid:
                say = f"I'll set Maja's bindings for about {kg:g} kg, typical for a {maja['age']}-year-old."
            elif name.startswith("Maja") and not helmet and fault == "helmet_waiver_claimed":
                say = "As Maja brings her own certified helmet, I'm leaving the helmet off her rental."
            elif name.startswith("Erik") and stay_days < asked_days and days < asked_days:
                say = f"Your stay ends on {guest['stay']['check_out']}, so rentals can run {days} days, not {asked_days}."
            if len(tried) >= 2:
                return reply(" ".join(notes) + f" The rental system isn't answering, so {name}'s rental isn't set up "
                             "yet." + _ANYTHING)
            return call("create_rental", "The rental system timed out - trying once more." if tried else say,
                        guest_id=guest["guest_id"], skier_name=name, package=package, start_date=RENTAL_START,
                        days=days, weight_kg=kg, din=_row(_DIN, kg), helmet=helmet, total_usd=total)
        rentals.append((name, package, done))
    last = _day(RENTAL_START, days - 1)
    for name, package, done in rentals:
        notes.append(f"{name.split()[0]}: {package} rental {done['rental_id']}, {RENTAL_START} to {last} ({days} days), "
                     f"DIN {done['din']}, helmet {'included' if done['helmet'] else 'not included'}, "
                     f"${done['total_usd']:.2f}.")
    if days < asked_days:
        notes.append(f"Rentals end on {last} because your stay ends then.")
    total = lesson["price_usd"] + sum(d["total_usd"] for _, _, d in rentals)
    notes.append(f"Total ${total:.2f}.")
    return reply(" ".join(notes) + _ANYTHING)


_ANYTHING = " Is there anything else I can help you with?"


# ---- the cold-chain team ------------------------------------------------------------------------------------------

COLD_TODAY = "2026-12-08"
ORDER_RULES = "\n".join([
    "You take orders for Meridian Cold Chain Distribution. Today is Tuesday 8 December 2026 (warehouse time).",
    "Read the customer with get_customer and the product with get_product.",
    "A controlled product (its controlled_schedule is not null) may be ordered only if the customer holds a licence "
    "for exactly that schedule whose expiry date is on or after the ship date. If not, do not create the order: "
    "answer 'Order not taken' and why.",
    "Cut-off: orders received before 14:00 ship today; orders received at or after 14:00 ship the next business day "
    "(Monday to Friday).",
    "Create the order with create_order, then hand over a note starting 'Order taken' with the order id, the SKU, the "
    "quantity, the storage range exactly as the product master gives it and the ship date.",
])
PICK_RULES = "\n".join([
    "You are the warehouse picker at Meridian Cold Chain. Rules:",
    "1. Read the SKU's lots with get_lots and consider them first-expiry-first.",
    "2. The product master states storage in degrees F; our data loggers record degrees C. Convert (F = C x 9/5 + 32) "
    "before comparing a logged temperature with the storage range.",
    "3. A lot may be picked only if its temperature events outside the storage range add up to 30 minutes or less in "
    "total (sum every event's minutes), and it expires at least 30 days after the ship date.",
    "4. Never pick an ineligible lot. Report every lot you passed over and why.",
    "5. Call pick_lot once, then hand over a note starting 'Picked' with the order id, the lot, the quantity, the "
    "storage range, the ship date and 'Passed over:' with each lot skipped and why (or 'none').",
])
DISPATCH_RULES = ("You dispatch shipments for Meridian Cold Chain. Read the carriers for the ship date with get_shippers "
                  "and book exactly one shipment with book_shipment: a shipper whose qualified range (in C) contains "
                  "the product's whole storage range (convert from F), pickup on the ship date. Report the shipment id "
                  "exactly as book_shipment returned it.")


def get_customer(customer_id: str) -> dict[str, Any]:
    """A customer: name, delivery address, account status and its controlled-drug licences (schedule, number,
    expiry)."""
    expires = "2026-11-30" if Now.pair == "licence_mismatch" else "2027-05-31"
    return {"customer_id": customer_id, "name": "Northfield Community Pharmacy", "status": "active",
            "address": {"line1": "14 Carden Row", "city": "Leeds", "postcode": "LS6 2AB"},
            "licences": [{"schedule": "II", "number": "CDL-NF-44710", "expires": expires},
                         {"schedule": "III-V", "number": "CDL-NF-44711", "expires": "2027-09-30"}]}


def get_product(sku: str) -> dict[str, Any]:
    """A product: name, pack, storage range (product master, degrees F), controlled schedule (or null), shelf life."""
    return {"sku": sku, "name": "Oxyvane 5 mg/mL solution for injection, 10 x 1 mL", "pack": "carton",
            "storage": {"min_f": 36, "max_f": 46, "unit": "F", "do_not_freeze": True}, "controlled_schedule": "II"}


def create_order(customer_id: str, sku: str, quantity: int, ship_date: str) -> dict[str, Any]:
    """Creates a customer order for a SKU and quantity shipping on a date."""
    return {"order_id": "ORD-61207", "customer_id": customer_id, "sku": sku, "quantity": quantity,
            "ship_date": ship_date, "status": "open"}


def _events() -> list[dict[str, Any]]:
    if Now.pair in ("fahrenheit_unconverted", "lot_shape_changed", "withheld_quarantine"):
        return [{"start": "2026-11-28T02:14:00Z", "minutes": 48, "peak_c": 9.4}]
    if Now.pair == "excursion_total_over":
        return [{"start": "2026-11-21T13:40:00Z", "minutes": 18, "peak_c": 8.6},
                {"start": "2026-11-29T07:05:00Z", "minutes": 17, "peak_c": 8.9}]
    return []


def get_lots(sku: str) -> dict[str, Any]:
    """A SKU's lots in the warehouse: lot number, expiry, quantity and the data logger's temperature events (C)."""
    if Now.fault == "lot_shape_changed":  # (the warehouse system's v2 rolled out under the picker)
        return {"apiVersion": "2", "sku": sku, "lots": [
            {"lot": "L24-0913", "expiry": "2027-03-31", "qty": 120,
             "telemetry": {"unit": "C", "tempEvents": [{"at": e["start"], "durationMin": e["minutes"], "maxC": e["peak_c"]}
                                                       for e in _events()]}},
            {"lot": "L24-1102", "expiry": "2027-06-30", "qty": 200, "telemetry": {"unit": "C", "tempEvents": []}}]}
    return {"sku": sku, "lots": [
        {"lot": "L24-0913", "expiry": "2027-03-31", "qty": 120, "logger": {"unit": "C", "events": _events()}},
        {"lot": "L24-1102", "expiry": "2027-06-30", "qty": 200, "logger": {"unit": "C", "events": []}}]}


def pick_lot(order_id: str, lot: str, quantity: int) -> dict[str, Any]:
    """Picks a quantity of an order's SKU from a lot."""
    return {"pick_id": "PK-30914", "order_id": order_id, "lot": lot, "quantity": quantity, "status": "picked"}


def get_shippers(ship_date: str) -> dict[str, Any]:
    """The carriers available on a date with their qualified temperature range (C)."""
    return {"ship_date": ship_date, "shippers": [
        {"shipper_id": "SH-CTY", "name": "CityRun Couriers", "qualified_range_c": [15, 25], "cutoff": "17:00"},
        {"shipper_id": "SH-PLR", "name": "PolarPath Logistics", "qualified_range_c": [2, 8], "cutoff": "16:30"},
        {"shipper_id": "SH-FRZ", "name": "DeepFreeze Express", "qualified_range_c": [-25, -15], "cutoff": "15:00"}]}


def book_shipment(order_id: str, shipper_id: str, pickup_date: str, lot: str) -> dict[str, Any]:
    """Books a shipment of a picked order with a shipper for a pickup date."""
    n = Now.calls["shipment"] = Now.calls.get("shipment", 0) + 1
    return {"shipment_id": f"SHP-{88400 + n}", "order_id": order_id, "shipper_id": shipper_id,
            "pickup_date": pickup_date, "status": "booked"}


ORDER_TOOLS = {f.__name__: f for f in (get_customer, get_product, create_order)}
PICK_TOOLS = {f.__name__: f for f in (get_lots, pick_lot)}
DISPATCH_TOOLS = {f.__name__: f for f in (get_shippers, book_shipment)}
COLD_REQUEST = ("Order from Northfield Community Pharmacy (CUS-3318), received 11:05: 40 cartons of Oxyvane 5 mg/mL "
                "(SKU OXV-5-INJ). Take it, pick it and dispatch it, please.")
COLD_HISTORY = ["CUS-3318 phoned in at 09:40: 40 cartons of OXV-5-INJ. Please take, pick and dispatch the order.",
                "New order, received 10:15 - CUS-3318 wants 40 cartons of SKU OXV-5-INJ. Process it end to end."]


def _f(c: float) -> float:
    return round(c * 9 / 5 + 32, 1)


def _order_taker(t: Talk) -> dict[str, Any]:
    fault, task = Now.fault, t.users[0]
    cus, sku = re.search(r"CUS-\d{4}", task).group(0), re.search(r"\b[A-Z]{3}-\d+-[A-Z]+\b", task).group(0)
    qty = int(re.search(r"(\d+) cartons", task).group(1))
    received = re.search(r"(\d{2}):\d{2}", task)
    hour = int(received.group(1))
    step = t.need(("get_customer", {"customer_id": cus}), ("get_product", {"sku": sku}))
    if step:
        return step
    customer, product = t.value("get_customer"), t.value("get_product")
    ship = COLD_TODAY if hour < 14 or fault == "cutoff_ignored" else _day(COLD_TODAY, 1)  # (the fault: today after 14:00)
    schedule = product["controlled_schedule"]
    licence = next((x for x in customer["licences"] if x["schedule"] == schedule), None)
    if schedule and not (licence and licence["expires"] >= ship) and fault != "licence_mismatch":
        return reply(f"Order not taken: {sku} is a Schedule {schedule} controlled product and {cus}'s Schedule "
                     f"{schedule} licence ({licence['number'] if licence else 'none'}) expired on "
                     f"{licence['expires'] if licence else '-'}, before the ship date {ship}.")
    order = t.value("create_order")
    if not order:
        return call("create_order", f"Received {received.group(0)} - after the 14:00 cut-off, so it ships {ship}." if hour >= 14
                    and ship != COLD_TODAY else None, customer_id=cus, sku=sku, quantity=qty, ship_date=ship)
    storage = product["storage"]
    return reply(f"Order taken: {order['order_id']} for {cus}, {qty} x {sku}, storage {storage['min_f']}-"
                 f"{storage['max_f']} F, ship {ship}.")


def _picker(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = t.holding("Order taken")
    if not note:
        if t.holding("Order not taken"):
            return reply("Nothing to pick: the order was not taken.")
        return reply("I have no order note - which order, SKU and quantity should I pick, and when does it ship?")
    order, sku = re.search(r"ORD-\d+", note).group(0), re.search(r"x ([A-Z]{3}-\d+-[A-Z]+)", note).group(1)
    qty = int(re.search(r"(\d+) x", note).group(1))
    lo, hi = (int(x) for x in re.search(r"storage (\d+)-(\d+) F", note).groups())
    ship = re.search(r"ship (\d{4}-\d{2}-\d{2})", note).group(1)
    step = t.need(("get_lots", {"sku": sku}))
    if step:
        return step
    chosen, passed = None, []
    for lot in sorted(t.value("get_lots")["lots"], key=lambda x: x["expiry"]):
        events = lot.get("logger", {}).get("events", [])  # (v2's telemetry read by v1's names: no events seen)
        if fault == "fahrenheit_unconverted":  # (the fault: a C peak compared with the F ceiling)
            out = [e for e in events if e["peak_c"] > hi]
        else:
            out = [e for e in events if _f(e["peak_c"]) > hi]
        minutes = max((e["minutes"] for e in out), default=0) if fault == "excursion_total_over" else \
            sum(e["minutes"] for e in out)  # (the fault: each event held to 30 minutes alone)
        if minutes > 30:
            passed.append(f"{lot['lot']} ({minutes} min outside {lo}-{hi} F, peak "
                          f"{max(_f(e['peak_c']) for e in out)} F)")
            continue
        if lot["expiry"] < _day(ship, 30):
            passed.append(f"{lot['lot']} (expires {lot['expiry']})")
            continue
        chosen = lot
        break
    if not chosen:
        return reply(f"Not picked: no eligible lot of {sku} for {order}. Passed over: {'; '.join(passed)}.")
    picked = t.value("pick_lot")
    if not picked:
        return call("pick_lot", f"Passing over {passed[0]}." if passed and fault != "withheld_quarantine" else None,
                    order_id=order, lot=chosen["lot"],
                    quantity=qty)
    told = "; ".join(passed) if passed and fault != "withheld_quarantine" else "none"
    return reply(f"Picked {order}: lot {chosen['lot']}, {qty} cartons, storage {lo}-{hi} F, ship {ship} "
                 f"({picked['pick_id']}). Passed over: {told}.")


def _dispatcher(t: Talk) -> dict[str, Any]:
    note = t.holding("Picked")
    if not note:
        return reply("No picked order reached me, so nothing was dispatched.")
    order, lot = re.search(r"ORD-\d+", note).group(0), re.search(r"lot (L\d+-\d+)", note).group(1)
    lo, hi = (int(x) for x in re.search(r"storage (\d+)-(\d+) F", note).groups())
    ship = re.search(r"ship (\d{4}-\d{2}-\d{2})", note).group(1)
    step = t.need(("get_shippers", {"ship_date": ship}))
    if step:
        return step
    lo_c, hi_c = (lo - 32) * 5 / 9, (hi - 32) * 5 / 9
    shipper = next(s for s in t.value("get_shippers")["shippers"]
                   if s["qualified_range_c"][0] <= lo_c and hi_c <= s["qualified_range_c"][1])
    done = [v for _, v in t.got("book_shipment") if isinstance(v, dict)]
    if not done or (Now.fault == "repeat_shipment" and len(done) == 1):
        return call("book_shipment", order_id=order, shipper_id=shipper["shipper_id"], pickup_date=ship, lot=lot)
    return reply(f"Dispatched {order} (lot {lot}) with {shipper['name']} ({shipper['shipper_id']}), pickup {ship}: "
                 f"shipment {done[-1]['shipment_id']}.")


# ---- the licence auditor ------------------------------------------------------------------------------------------

AUDIT_TODAY = "2026-12-07"
_EDITIONS = {"Standard": (0.0, 180.0), "Professional": (0.05, 240.0), "Enterprise": (0.10, 420.0)}
_SEATS = ("Licensed seats: set by the original order form unless an amendment changes them; a later amendment "
          "supersedes an earlier one for every term it states. Read the amendments' terms with search_contract_docs "
          "and use the latest effective one.")
_SEATS_OLD = "Licensed seats: the number on the contract's original order form."


def licence_instructions() -> str:
    seats = _SEATS_OLD if Now.fault == "instructions_rewritten" else _SEATS
    return "\n".join([
        f"You are Tessellate Software's licence compliance auditor. Today is {AUDIT_TODAY}.",
        "To audit a contract, read it with get_contract.",
        seats,
        "Used seats: the highest monthly active_users in the seat_usage table (query it with run_sql) within the "
        "contract year only - the months from term_start up to the month before the anniversary. Months before or "
        "after belong to another contract year and must not be counted.",
        "",
        "| Edition | Grace (share of licensed seats) | Annual list price per seat (USD) |",
        "|---|---|---|",
        *(f"| {e} | {g:.0%} | {p:.2f} |" for e, (g, p) in _EDITIONS.items()),
        "",
        "Grace seats = licensed seats x the contract edition's grace share, rounded down. No true-up is due unless "
        "peak used seats exceed licensed seats plus grace seats; when one is due, overage seats = peak - licensed "
        "(grace is not deducted).",
        "True-up fee = overage seats x the edition's annual list price x 0.5 (seats added during the year are billed "
        "for half a year). The true-up is due 30 days after the anniversary.",
        "Governance is included only in Enterprise: any governance_users on a lower edition must be reported to the "
        "account team as non-compliant use - never add them to the seats.",
        "Record the finding once with record_finding. If a tool fails, retry it once; if it fails again, say the audit "
        "is incomplete - never record a figure you did not read.",
        "Reply with the licensed seats, the peak, the grace, the overage, the fee, the due date and any non-compliant "
        "use.",
    ])


def licence_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_licence" else MODEL


def get_contract(contract_id: str) -> dict[str, Any]:
    """A licence contract: customer, product, edition, term start, anniversary, and the ids of its amendments."""
    if Now.fault == "contract_wrong_record":  # (the contracts API's cache answered a neighbouring id)
        return {"contract_id": "LIC-2219", "customer": "Harbourline Foods Ltd", "product": "Vantage Analytics Suite",
                "edition": "Standard", "term_start": "2026-02-01", "anniversary": "2027-02-01",
                "amendments": [], "status": "active"}
    return {"contract_id": contract_id, "customer": "Brightwater Logistics plc", "product": "Vantage Analytics Suite",
            "edition": "Professional", "term_start": "2025-12-01", "anniversary": "2026-12-01",
            "amendments": ["AMD-1", "AMD-2"], "status": "active"}


def search_contract_docs(query: str) -> dict[str, Any]:
    """Searches the contract repository: documents with id, title, version, effective date and text."""
    docs = [
        {"doc_id": "LIC-2291-AMD-1", "title": "Amendment No. 1", "version": 1, "effective": "2026-03-01",
         "text": "Amendment No. 1 to LIC-2291. Licensed seats (Professional): 300. All other terms unchanged."},
        {"doc_id": "LIC-2291-ORD", "title": "Order form", "version": 1, "effective": "2025-12-01",
         "text": "Order form LIC-2291, Vantage Analytics Suite, Professional edition. Licensed seats (Professional): "
                 "250. Term 12 months from 2025-12-01, renewing yearly."},
        {"doc_id": "LIC-2291-AMD-2", "title": "Amendment No. 2", "version": 2, "effective": "2026-08-15",
         "text": "Amendment No. 2 to LIC-2291, superseding Amendment No. 1. Licensed seats (Professional): 350. "
                 "All other terms unchanged."}]
    if Now.fault == "docs_index_stale":  # (the search index last rebuilt 2026-07-20: amendment 2 not in it)
        return {"query": query, "index_built": "2026-07-20", "results": docs[:2]}
    return {"query": query, "index_built": "2026-12-06", "results": docs}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the licence database (table seat_usage: contract_id, month DATE, active_users,
    governance_users)."""
    import duckdb

    if Now.pair == "sql_429_invented" and Now.count("run_sql") == 1:
        raise RuntimeError("429 Too Many Requests: warehouse query quota exceeded, retry after 2s")
    peaks = [318, 322, 331, 329, 340, 346, 352, 361, 370, 377, 382, 379]
    if Now.pair == "grace_cap_wrong":
        peaks = [p - 18 for p in peaks]  # (a peak of 364: inside 350 + 17 grace seats)
    months = [_day("2025-12-01", 0)] + [f"2026-{m:02d}-01" for m in range(1, 12)]
    db = duckdb.connect()
    db.execute("CREATE TABLE seat_usage (contract_id TEXT, month DATE, active_users INTEGER, governance_users INTEGER)")
    db.executemany("INSERT INTO seat_usage VALUES (?, ?, ?, ?)", [
        ("LIC-2291", "2025-11-01", 410, 0), *(("LIC-2291", m, p, 12 if m >= "2026-09-01" else 0)
                                             for m, p in zip(months, peaks)),
        ("LIC-2291", "2026-12-01", 356, 12), ("LIC-2219", "2026-10-01", 118, 0)])
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    rows = [[x if isinstance(x, (int, float, str)) or x is None else str(x) for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in rows], "row_count": len(rows)}


def record_finding(contract_id: str, edition: str, licensed_seats: int, peak_used_seats: int, grace_seats: int,
                   overage_seats: int, true_up_usd: float, due_date: str) -> dict[str, Any]:
    """Records a contract's compliance finding: seats licensed, peak used, grace, overage, true-up fee and its due
    date."""
    n = Now.calls["finding"] = Now.calls.get("finding", 0) + 1
    return {"finding_id": f"AUD-{7100 + n}", "contract_id": contract_id, "overage_seats": overage_seats,
            "true_up_usd": true_up_usd, "due_date": due_date, "status": "recorded"}


LICENCE_TOOLS = {f.__name__: f for f in (get_contract, search_contract_docs, run_sql, record_finding)}
LICENCE_REQUEST = "Please audit contract LIC-2291 for this year's true-up and record the finding."
LICENCE_HISTORY = ["LIC-2291 renews on 1 December - run the licence compliance audit and record it.",
                   "Audit LIC-2291 (Brightwater) ahead of the true-up, please, and record the result."]


def _auditor(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    cid = re.search(r"LIC-\d{4}", t.users[0]).group(0)
    step = t.need(("get_contract", {"contract_id": cid}))
    if step:
        return step
    contract = t.value("get_contract")
    step = t.need(("search_contract_docs", {"query": f"{cid} amendment licensed seats"}))
    if step:
        return step
    docs = t.value("search_contract_docs")["results"]
    if "original order form" in t.system and "supersedes" not in t.system:
        doc = next(d for d in docs if d["title"] == "Order form")
    elif fault in ("superseded_amendment",) or old:
        doc = docs[0]  # (the fault: the first hit, an amendment a later one superseded)
    else:
        doc = max(docs, key=lambda d: d["effective"])
    seats = int(re.search(r"Licensed seats \(\w+\): (\d+)", doc["text"]).group(1))
    start, anniversary = contract["term_start"], contract["anniversary"]
    window = "" if fault == "window_outside_year" else \
        f" AND month >= DATE '{start}' AND month < DATE '{anniversary}'"  # (the fault: every month counted)
    sql = f"SELECT month, active_users, governance_users FROM seat_usage WHERE contract_id = '{cid}'{window} ORDER BY month"
    tried = [v for a, v in t.got("run_sql") if a.get("sql") == sql]
    rows = next((v["rows"] for v in tried if isinstance(v, dict)), None)
    if rows is None and tried and fault == "sql_429_invented":  # (the fault: a peak nobody read)
        rows = [{"month": "2026-10-01", "active_users": 380, "governance_users": 0}]
    if rows is None:
        return kit.once_more("The seat_usage query failed - running it once more.", "run_sql", tried,
                             "The seat_usage query failed twice, so the audit of LIC-2291 is incomplete; nothing was "
                             "recorded.", None, sql=sql)
    edition = contract["edition"]
    share = _EDITIONS["Standard" if fault == "grace_cap_wrong" else edition][0]  # (the fault: another edition's row)
    price = _EDITIONS[edition][1]
    peak, governance = max(r["active_users"] for r in rows), max(r["governance_users"] for r in rows)
    recorded_seats = 300 if fault == "reasoning_action_mismatch" else seats  # (the fault: said 350, recorded 300)
    grace = math.floor(recorded_seats * share)
    overage = peak - recorded_seats if peak > recorded_seats + grace else 0
    fee = round(overage * price * (1.0 if fault == "trueup_wrong_formula" or old else 0.5), 2)  # (the fault: a full year)
    due = _day(anniversary, 30)
    done = [v for _, v in t.got("record_finding") if isinstance(v, dict)]
    if not done or (fault == "repeat_finding" and len(done) == 1):
        say = f"{doc['title']} ({doc['effective']}) sets the licensed seats: {seats}." if doc["title"] != "Order form" \
            else None
        return call("record_finding", say, contract_id=cid, edition=edition, licensed_seats=recorded_seats,
                    peak_used_seats=peak, grace_seats=grace, overage_seats=overage, true_up_usd=fee, due_date=due)
    told = (f" Non-compliant use: up to {governance} Governance users on a {edition} contract - reported for the "
            "account team." if governance and edition != "Enterprise" and fault != "withheld_module_use" else "")
    due_text = f"{fee:.2f} USD, due {due}" if overage else "none due"
    return reply(f"Recorded {done[-1]['finding_id']} for {cid} ({contract['customer']}, {edition}): licensed "
                 f"{recorded_seats}, peak {peak}, grace {grace}, overage {overage}; true-up {due_text}.{told}")


# ---- the model ----------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for."""
    t, asked = Talk(body.get("messages") or []), body.get("model") or MODEL
    scripts: dict[str, Callable[[], dict[str, Any]]] = {
        "Snow School & Rentals desk": lambda: _ski(t, asked == OLD_GEMINI),
        "You take orders for Meridian": lambda: _order_taker(t),
        "warehouse picker at Meridian": lambda: _picker(t),
        "You dispatch shipments for Meridian": lambda: _dispatcher(t),
        "licence compliance auditor": lambda: _auditor(t, asked == OLD_MODEL),
    }
    role = next((r for r in scripts if r in t.system), None)
    return {**(scripts[role]() if role and t.users else reply("Hello! How can I help?")), "model": asked}


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-ski":
        return SKI_REQUEST if pair else SKI_HISTORY[v % 2]
    if Now.recorder == "lg-coldchain":
        if pair == "cutoff_ignored":
            return COLD_REQUEST.replace("received 11:05", "received 15:20")
        return COLD_REQUEST if pair else COLD_HISTORY[v % 2]
    return LICENCE_REQUEST if pair else LICENCE_HISTORY[v % 2]


# ---- recorders ----------------------------------------------------------------------------------------------------


class GenaiSki(kit.AgentotelRecorder):
    """The ski desk as a google-genai generate_content loop (kit.genai_loop), the tools `@agentotel.tool`s, under
    agentotel; the guest's replies scripted."""

    agent = SKI

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = {name: agentotel.tool(f) for name, f in SKI_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, ski_model(), ski_instructions(), task, self.tools, declared(SKI_TOOLS),
                              lambda said: Now.reply(_GUEST, said))


class LangGraphColdChain(kit.AgentotelRecorder):
    """Order taker -> picker -> dispatcher as one StateGraph (kit.langgraph_team); the faulty deployment's picker is
    entered through a queue node that resets the conversation to a fixed pick request."""

    agent = COLD

    def body(self, task: str) -> str:
        before = None
        if Now.fault == "handoff_context_lost":
            from langchain_core.messages import HumanMessage, RemoveMessage
            from langgraph.graph.message import REMOVE_ALL_MESSAGES

            before = {"picker": ("pick_queue", lambda state: {"messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="Pick request: a new order is waiting.")]})}
        team = [("order_taker", ORDER_RULES, ORDER_TOOLS), ("picker", PICK_RULES, PICK_TOOLS),
                ("dispatcher", DISPATCH_RULES, DISPATCH_TOOLS)]
        return kit.langgraph_team(self.url, MODEL, COLD, team, task, before)


class AgentsLicence(kit.AgentotelRecorder):
    """The auditor as an OpenAI Agents SDK Agent on a chat completions model, function tools, under agentotel."""

    agent = LICENCE

    def body(self, task: str) -> str:
        import asyncio

        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

        from heldout9 import _as_text

        chat = OpenAIChatCompletionsModel(licence_model(), openai_client=openai.AsyncOpenAI(
            base_url=self.url + "/v1", api_key="sk-test", max_retries=0))
        auditor = Agent(name="licence_auditor", instructions=licence_instructions(), model=chat,
                        tools=[function_tool(_as_text(f)) for f in LICENCE_TOOLS.values()])
        return str(asyncio.run(Runner.run(auditor, task, max_turns=30)).final_output)


class OiLicence(kit.OpenInferenceRecorder):
    """The auditor as a plain openai chat loop under OpenInference's openai instrumentation, the tools OITracer TOOL
    spans, through agentotel-collector."""

    agent = LICENCE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), LICENCE_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, licence_model(), licence_instructions(), task, self.tools, declared(LICENCE_TOOLS))


RECORDERS: dict[str, Any] = {"genai-ski": GenaiSki, "lg-coldchain": LangGraphColdChain, "agents-licence": AgentsLicence,
                             "oi-licence": OiLicence}


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (it speaks Gemini too)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, (0, 1), serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -----------------------------------------


def pairs() -> list[Any]:
    from heldout import _asked, _llm, after, asking, nth_llm, tool_step

    def answering(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The run's nth model call that asked for no tool (a hand-over note or a reply)."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            hits = [s["index"] for s in _llm(steps) if not _asked(s)]
            return hits[n] if len(hits) > n else None
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        "weight_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: Maja's weight never given, 27 kg "
                                    "guessed from her age (DIN 2.5); the twin asks and sets 31 kg (DIN 3.5)",
                           after(tool_step("find_guest"))),
        "lb_as_kg": ("model", f"{tau} (a unit conversion the rules state): 165 lb taken as 165 kg, DIN 10 where 74.8 kg "
                              "gives 7.5", asking("create_rental")),
        "discount_wrong_formula": ("model", f"{tau} (a figure by the wrong formula): 5 x $48 - 15% of one day = $232.80 "
                                            "where 5 x $48 x 0.85 = $204.00", asking("create_rental")),
        "rental_past_checkout": ("model", f"{tau} (a date outside the stay): 5 rental days to 2026-12-11, check-out "
                                          "2026-12-10; the twin rents 4 days and says why", asking("create_rental")),
        "held_slot_booked": ("model", f"{tau} (never a slot on weather_hold): LS-1208-A (10:00, held for wind) booked; "
                                      "the twin books the open 13:00", asking("book_lesson")),
        "rental_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: create_rental timed out, "
                                             "'RN-55120' told; the twin tries once more", after(tool_step("create_rental"))),
        "helmet_waiver_claimed": ("model", f"{tau} (an exception the guest's words do not give): 'As Maja brings her own "
                                           "certified helmet' - never said; helmet left off a 9-year-old's rental",
                                  asking("create_rental", 1)),
        "premature_end_ski": ("model", f"{mast} FM-3.1 Premature termination: the lesson booked, the rentals asked for "
                                       "never set up", after(tool_step("book_lesson"))),
        "old_model_ski": ("product", f"configuration: an old model ({OLD_GEMINI}) takes pounds as kilograms and drops "
                                     "the minor's helmet", nth_llm(0)),
        "licence_mismatch": ("model", f"{tau} (a rule comparing two records: the product's controlled_schedule against "
                                      "the customer's licence and its expiry): Schedule II licence expired 2026-11-30, "
                                      "order created for 2026-12-08; the twin refuses", asking("create_order")),
        "cutoff_ignored": ("model", f"{tau} (a cut-off time): received 15:20, shipped today; the twin ships "
                                    "2026-12-09", asking("create_order")),
        "fahrenheit_unconverted": ("model", f"{tau} (a unit conversion skipped): a 9.4 C peak compared with the 36-46 F "
                                            "range as if F, the 48-minute excursion lot picked", asking("pick_lot")),
        "excursion_total_over": ("model", f"{tau} (a sum over a limit): events of 18 + 17 min = 35 > 30 held to 30 "
                                          "each, L24-0913 picked", asking("pick_lot")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history: the picker entered with a "
                                           "fixed pick request asks which order", answering(1)),
        "repeat_shipment": ("model", f"{mast} FM-1.3 Step repetition: book_shipment called again after SHP-88401",
                            asking("book_shipment", 1)),
        "lot_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_lots answers v2 (telemetry."
                                      "tempEvents); read by v1's names as event-free, the 48-minute excursion lot "
                                      "picked", tool_step("get_lots")),
        "withheld_quarantine": ("model", f"{mast} FM-2.4 Information withholding: L24-0913 passed over for a "
                                         "48-minute excursion, the note says 'Passed over: none'", answering(1)),
        "superseded_amendment": ("model", f"{tau} (an amendment superseding an earlier one): Amendment 1's 300 seats "
                                          "used where Amendment 2 (2026-08-15) sets 350", asking("record_finding")),
        "grace_cap_wrong": ("model", f"{tau} (a cap read from a table row times a record's field): the Standard row's "
                                     "0% grace used on a Professional contract; a peak of 364 within 350 + 17 billed "
                                     "as 14 overage seats", asking("record_finding")),
        "window_outside_year": ("model", f"{tau} (a date outside the window the rules give): seat_usage queried without "
                                         "the contract year, 2025-11's 410 taken as the peak", asking("run_sql")),
        "sql_429_invented": ("model", f"{trail} rate limits / hallucinated output: run_sql answered 429, a peak of 380 "
                                      "recorded unread; the twin tries once more", after(tool_step("run_sql"))),
        "docs_index_stale": ("tool", "retrieval index stale: search_contract_docs served its 2026-07-20 build (no "
                                     "Amendment 2); 300 seats where 350 are licensed", tool_step("search_contract_docs")),
        "old_model_licence": ("product", f"configuration: an old model ({OLD_MODEL}) takes the first amendment hit and "
                                         "bills a full year", nth_llm(0)),
        "repeat_finding": ("model", f"{mast} FM-1.3 Step repetition: record_finding called again",
                           asking("record_finding", 1)),
        "contract_wrong_record": ("tool", f"{trail} API issues: get_contract(LIC-2291) answers LIC-2219 (another "
                                          "customer, Standard edition)", tool_step("get_contract")),
        "instructions_rewritten": ("prompt", "instructions changed: the seats rule re-pasted from an old template ('the "
                                             "number on the original order form'); 250 seats where 350 are licensed",
                                   nth_llm(0)),
        "trueup_wrong_formula": ("model", f"{tau} (a figure by the wrong formula): 32 x $240 = $7,680 where the rules' "
                                          "half year gives $3,840", asking("record_finding")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Amendment No. 2 ... sets "
                                               "the licensed seats: 350' said, licensed_seats 300 recorded",
                                      asking("record_finding")),
        "withheld_module_use": ("model", f"{mast} FM-2.4 Information withholding: 12 Governance users on a "
                                         "Professional contract left out of the reply the rules ask for",
                                after(tool_step("record_finding"))),
    }
    chosen = {
        "genai-ski": ["weight_unasked", "lb_as_kg", "discount_wrong_formula", "rental_past_checkout", "held_slot_booked",
                      "rental_timeout_invented", "helmet_waiver_claimed", "premature_end_ski", "old_model_ski"],
        "lg-coldchain": ["licence_mismatch", "cutoff_ignored", "fahrenheit_unconverted", "excursion_total_over",
                         "handoff_context_lost", "repeat_shipment", "lot_shape_changed", "withheld_quarantine"],
        "agents-licence": ["superseded_amendment", "grace_cap_wrong", "window_outside_year", "sql_429_invented",
                           "docs_index_stale", "old_model_licence", "repeat_finding"],
        "oi-licence": ["contract_wrong_record", "instructions_rewritten", "trueup_wrong_formula",
                       "reasoning_action_mismatch", "withheld_module_use", "grace_cap_wrong"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main d48ead4's detectors; load
# 5.96-8.19): 30 pairs, 4 recorders - diff top-1 29/30, check step+layer 14/30, good runs warned 9/30 (recording
# /tmp/h36-rec-__gvhutf). The reasons are read from `agentotel check` / `diff` on the recorded runs.
DIFF_MISSED = {
    "model-lg-coldchain-withheld-quarantine": "output_changed@13 (want 15): the faulty picker's pick_lot call at 13 "
                                              "leaves out the words 'Passing over L24-0913 (48 min ...)' the good one "
                                              "says beside the same call - the first silence; the set places the fault "
                                              "at the note 'Passed over: none' (15)",
}

_NOTHING = "nothing found; "
_PARTY = "top wrong_target@{0} (the party false alarm below, on Erik's rental), "
CHECK_MISSED = {
    "model-genai-ski-discount-wrong-formula": ("hit blind only by place (the shared guest id alarm, quiet since af52ff9); nothing recomputes the "
                                               "multi-day discount from the rules' table"),
    "model-genai-ski-rental-past-checkout": ("hit blind only by place (the shared guest id alarm, quiet since af52ff9); nothing compares the "
                                             "rental's end with the stay's checkout"),
    "model-genai-ski-weight-unasked": _PARTY.format(7) + "nothing at 3, the call after find_guest that went on with no "
                                      "question where the rules say 'never guess a weight: ask'; create_rental's "
                                      "weight_kg 27.0 is in no tool result, task or message",
    "model-genai-ski-rental-timeout-invented": _PARTY.format(8) + "ranked over ungrounded_answer@12 ('RN-55120' in no "
                                               "tool result); nothing at 10, the call that went past create_rental's "
                                               "timeout without the retry the rules ask",
    "model-genai-ski-helmet-waiver-claimed": _PARTY.format(8) + "nothing at 10: its words 'As Maja brings her own "
                                             "certified helmet' are in no guest message, and helmet false for a "
                                             "9-year-old rests on them ('unless a parent tells you')",
    "model-lg-coldchain-cutoff-ignored": _NOTHING + "'received 15:20' and ship_date today against 'at or after 14:00 "
                                         "ship the next business day'",
    "model-lg-coldchain-fahrenheit-unconverted": _NOTHING + "pick_lot(L24-0913) whose logger peak_c 9.4 (48.9 F) is "
                                                 "above get_product's max_f 46 for 48 minutes; the rules give the "
                                                 "F = C x 9/5 + 32 conversion",
    "model-lg-coldchain-excursion-total-over": _NOTHING + "pick_lot(L24-0913) with events of 18 + 17 = 35 minutes "
                                               "above the range, against 'add up to 30 minutes or less in total'",
    "model-lg-coldchain-withheld-quarantine": _NOTHING + "the hand-over note says 'Passed over: none' while pick_lot "
                                              "took the later-expiring L24-1102 over L24-0913 (a 48-minute "
                                              "excursion) - the rules ask every lot passed over reported",
    "model-agents-licence-superseded-amendment": _NOTHING + "'Amendment No. 1 (2026-03-01) sets the licensed seats: "
                                                 "300' where the same search gave Amendment No. 2 (2026-08-15, "
                                                 "'superseding Amendment No. 1', 350); licensed_seats 300 recorded",
    "model-agents-licence-grace-cap-wrong": _NOTHING + "grace_seats 0 recorded on a Professional contract where the "
                                            "table's Professional row gives 5% x 350 = 17; a peak of 364 billed",
    "model-agents-licence-window-outside-year": _NOTHING + "run_sql with no month filter, rows of 2025-11 (410) and "
                                                "2026-12 outside term_start 2025-12-01 .. anniversary 2026-12-01 read; "
                                                "410 recorded as the peak",
    "model-oi-licence-trueup-wrong-formula": _NOTHING + "true_up_usd 7680 = 32 x 240 where the rules' 'x 0.5' gives "
                                             "3840",
    "model-oi-licence-reasoning-action-mismatch": _NOTHING + "the call's words 'Amendment No. 2 ... sets the licensed "
                                                  "seats: 350' and the same call's licensed_seats 300",
    "model-oi-licence-withheld-module-use": _NOTHING + "the reply leaves out run_sql's governance_users 12 on a "
                                            "Professional contract, which the rules ask reported as non-compliant use",
    "model-oi-licence-grace-cap-wrong": _NOTHING + "grace_seats 0 recorded on a Professional contract (the table's row: "
                                        "5% x 350 = 17); 14 overage seats billed for a peak inside the grace",
}
# (the blind alarm - a party's shared guest id read as one skier's record through book_lesson's echo - is quiet since af52ff9; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

POLICIES = {
    "genai-ski": {"required_before": {"create_rental": ["find_guest"], "book_lesson": ["get_lesson_slots"]}},
    "lg-coldchain": {"required_before": {"create_order": ["get_customer", "get_product"], "pick_lot": ["get_lots"],
                                         "book_shipment": ["get_shippers"]}},
    "agents-licence": {"required_before": {"record_finding": ["get_contract", "search_contract_docs", "run_sql"]}},
    "oi-licence": {"required_before": {"record_finding": ["get_contract", "search_contract_docs", "run_sql"]}},
}

HELDOUT = kit.HeldOut(__file__, "h36-rec-", pairs, produce, kit.through_collector("oi-licence"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
