"""A thirty-eighth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a ferry operator's ticketing desk talking with a traveller over several turns under a
written policy, a hospital bed-management team (a bed manager handing to a ward coordinator, who hands to patient
transport) and a scientific core facility's instrument booking agent reading a user's certifications, a project's
quota, used hours from SQL rows and versioned maintenance notices, run through real SDKs and frameworks.

    python tests/analysis/heldout38.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout38.py --score DIR [...]       # the runs a call left in DIR, scored again

Northsound Ferries' bookings desk (find_booking, get_sailings, amend_leg, cancel_leg) serves a traveller by written rules:
the reference and surname first; vehicle bands from a markdown table by length AND height in metres (feet and inches
converted at 0.3048 / 0.0254, a size never guessed: asked); passenger fares by age on the day of the sailing travelled;
dogs only in the vehicle or a pet cabin; the earliest sailing whose check-in closes at or after the time the traveller
can reach the port; an amendment fee and a cancellation refund from one table by days before the sailing changed, the
fee waived only on the booking's operator_change; the quote told and a yes before acting; a failure tried once more,
never a number a tool did not return. The traveller's replies are scripted, said when the desk's message holds their
cue ('length and height', 'Shall I go ahead', 'anything else'). St Brannock's Hospital's bed team on the Agents SDK: a
bed manager (get_patient, get_site_occupancy, raise_escalation: OPEL levels from a table of (occupied + awaiting_bed) /
open_beds) hands to a ward coordinator (get_ward_beds, allocate_bed: isolation in a side room, C. difficile only after an
enhanced HPV clean, single-sex bays, never a bed awaiting its clean), who hands to patient transport
(get_transport_slots, book_transport: pickup at or after the bed's ready time and within 4 hours of the decision to
admit, an infection-control crew for isolation, a 429 tried once more). The Aldgate Structural Biology Core Facility's
booking agent (get_user, get_project, search_notices: maintenance notices reissued in versions, run_sql over a DuckDB
bookings table, book_instrument) books by the project's quarterly quota (completed + booked hours in the period, plus the
hours asked), a training record unexpired on the session date (else an assisted session at GBP 45/h staff time, and
the user told to re-certify), the hourly rate from a table row by the user's user_type, and the latest notice version's
maintenance window. Each recorder in a process of its own:

- `genai-ferry` (ferry desk): a google-genai generate_content loop with function declarations over several traveller
  turns (kit.genai_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `agents-beds` (bed team): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`), bed_manager ->
  ward_coordinator -> patient_transport by two handoffs in one Runner.run (kit.agents_chain), under agentotel;
- `pai-core` (booking agent): a pydantic-ai Agent on an openai chat model (kit.pydantic_chat), under agentotel;
- `oi-core` (booking agent): a plain openai chat loop under OpenInference's openai instrumentation, the tools OITracer
  TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Gemini; the Responses API read and answered in chat
form by heldout20's converters; the model asked for echoed back) reads the conversation it is sent and decides as a
model would. Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators). Good
twins: a clarifying question asked (the camper van's size), 19 ft 6 in x 7 ft 11 in converted to 5.94 x 2.41 m (Tall
camper, not Van), a 15-year-old charged as an adult because he is 16 on the sailing day, the 13:30 sailing chosen over
the 10:00 whose check-in closes before the traveller arrives, the quote computed from the rules' own tables (164 + 3 x
34 + 15 = GBP 281, difference 92 + fee 25; refund 50% of 189 = 94.50), a dog refused the lounge, a timeout and a 429
tried once more, an escalation raised at 96.0%, a side room held for its enhanced clean and the transfer timed after
it, a man put in the male bay, a booking refused with 4 quota hours left, a session moved off a reissued maintenance
day, an expired certification booked as assisted at GBP 163/h and told.

Built and scored blind, once (main's HEAD af52ff9e36b0a6267fe74508b83faf027ae3055a, the branch rebased onto it - up to
date; the set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load average
3.18 at the start, 5.47 at the end, other helpers running; recording /tmp/h38-rec-fflkt4ui). Before it, development
recordings only printed each faulty run's locator indices, tool calls and answers (no table, no check, no diff). 32
pairs, 4 recorders (google-genai over traveller turns, the Agents SDK on the Responses API with two handoffs,
pydantic-ai, an openai loop under OpenInference through the collector) - diff top-1 32/32, check step+layer 10/32,
good runs with a warning 10/32. Check's hits: outside the model 5/7 (two old models, a patient API and a user API
answering another record, a rewritten rates table; missed: the ward coordinator's rewritten rules mid-run, the stale
notice index), the handover that lost the conversation, two repeated writes, a 429 answered with an invented transport
id, and reasoning_action_mismatch - a hit by place only: its wrong_target reads 'PRJ-117' against the words' 'GBP', not
the rate 62 against the words' 118. Counted honestly, check finds 9/32. Its 22 misses are in CHECK_MISSED, each with
why; the 10 false alarms (every ferry good run's quote, and one bed good run) in FALSE_ALARMS.
"""

from __future__ import annotations

import datetime as dt
import functools
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

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-pro-001"
FERRY, BEDS, CORE = "northsound-ferry-desk", "st-brannocks-bed-team", "aldgate-cryo-core-booking"
TODAY = dt.date(2026, 12, 5)


class Now(kit.World):
    """The world of the run being recorded."""


# What every rule set here asks after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _ok(t: Talk, tool: str) -> list[dict[str, Any]]:
    """The successful results of `tool` so far."""
    return [v for _, v in t.got(tool) if isinstance(v, dict)]


def _table(head: str, rows: list[str]) -> str:
    return "\n".join([head, "|" + "---|" * head.count("|", 1), *rows])


# ---- the ferry ticketing desk ----------------------------------------------------------------------------------------

# (band, max length m, max height m, single fare GBP): a vehicle takes the first row both its length and height fit
_BANDS = [("Car", 5.00, 1.85, 89.0), ("Car high", 5.00, 2.40, 112.0), ("Van or camper", 6.00, 2.40, 138.0),
          ("Tall camper", 6.00, 3.20, 164.0), ("Long vehicle", 8.00, 3.20, 215.0)]
_FARES = {"adult": 34.0, "child": 17.0, "infant": 0.0, "pet": 15.0}
# (from days, to days, amendment fee GBP, cancellation refund share)
_CHANGES = [(30, 10**4, 0.0, 0.90), (14, 29, 25.0, 0.50), (0, 13, 45.0, 0.0)]
M_PER_FT, M_PER_IN = 0.3048, 0.0254


def ferry_instructions() -> str:
    return "\n\n".join([
        "You are the bookings desk assistant for Northsound Ferries (Portmarrow - Kilbrannan). Today is Saturday 5 "
        "December 2026.",
        "First get the booking reference and the lead passenger's surname and check them with find_booking; if they "
        "don't match, go no further.",
        "VEHICLES. Fares go by the vehicle's length AND height in metres - a vehicle takes the first band below that "
        "both fit:\n\n" + _table("| Band | Max length (m) | Max height (m) | Single fare (GBP) |", [
            f"| {b} | {ln:.2f} | {h:.2f} | {f:.2f} |" for b, ln, h, f in _BANDS])
        + "\n\nTravellers usually give feet and inches. 1 ft = 0.3048 m and 1 in = 0.0254 m exactly; do not round "
          "before comparing with the table, and include roof boxes and bike racks. Never guess a vehicle's size - if "
          "the traveller hasn't given both length and height, ask.",
        "PASSENGERS. Adult (16 and over) GBP 34.00, child (4-15) GBP 17.00, infant (under 4) free - by the passenger's "
        "age on the day of the sailing they travel on, not today. Pets GBP 15.00 each; dogs travel only in the vehicle "
        "or a pet-friendly cabin and are never allowed in the lounges or on deck.",
        "SAILINGS. Vehicle check-in closes 45 minutes before departure (get_sailings gives checkin_closes). Book the "
        "earliest sailing on the day asked whose check-in closes at or after the time the traveller says they can "
        "reach the port.",
        "CHANGES AND CANCELLATIONS. Count the days from today to the date of the sailing being changed or cancelled "
        "(a plain date difference):\n\n" + _table("| Days before sailing | Amendment fee | Cancellation refund |", [
            f"| {lo}+ | GBP {fee:.2f} | {share:.0%} of the leg's fare |" if hi > 1000 else
            f"| {lo}-{hi} | GBP {fee:.2f} | {share:.0%} of the leg's fare |" for lo, hi, fee, share in _CHANGES])
        + "\n\nAn amended leg also pays the fare difference (new fare minus what was paid for the leg) when the new "
          "fare is higher; a lower fare is not refunded. The amendment fee is waived only when the booking's "
          "operator_change is true (we retimed or cancelled the original sailing) - never on the traveller's say-so.",
        "Tell the traveller the new sailing and its check-in time, the fare, the fee and any refund, and get their yes "
        "before you call amend_leg or cancel_leg. If a tool fails, call it once more; if it fails again, say that part "
        "is not done. Never give an amendment or cancellation number a tool didn't return.",
    ])


def ferry_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_ferry" else GEMINI


def find_booking(booking_ref: str) -> dict[str, Any]:
    """A ferry booking: lead surname, status, whether the operator changed its sailings, passengers (dates of birth),
    pets and its legs (sailing, date, vehicle, fare paid)."""
    if booking_ref != "NS-58214":
        return {"bookings": [], "query": booking_ref}
    return {"booking_ref": booking_ref, "lead_surname": "Okafor", "status": "confirmed", "operator_change": False,
            "contact": {"email": "c.okafor@example.org", "card_last4": "4417"},
            "passengers": [{"name": "Chidi Okafor", "dob": "1981-04-02"}, {"name": "Ruth Okafor", "dob": "1983-09-19"},
                           {"name": "Dara Okafor", "dob": "2011-01-06"}],
            "pets": [{"name": "Biscuit", "type": "dog"}],
            "legs": [{"leg_id": "L1", "direction": "outbound", "route": "PMW-KLB", "sailing_id": "NS-1223-1000",
                      "date": "2026-12-23", "departs": "10:00", "vehicle": {"band": "Car", "reg": "KX19 TRU"},
                      "passengers": {"adult": 2, "child": 1, "infant": 0}, "pets": 1, "paid_gbp": 189.0},
                     {"leg_id": "L2", "direction": "return", "route": "KLB-PMW", "sailing_id": "NS-0103-1600",
                      "date": "2027-01-03", "departs": "16:00", "vehicle": {"band": "Car", "reg": "KX19 TRU"},
                      "passengers": {"adult": 2, "child": 1, "infant": 0}, "pets": 1, "paid_gbp": 189.0}]}


def get_sailings(route: str, date: str) -> dict[str, Any]:
    """The sailings on a route and date: sailing id, departure, when vehicle check-in closes, status and deck space."""
    day = date[5:7] + date[8:]
    return {"route": route, "date": date, "sailings": [
        {"sailing_id": f"NS-{day}-{hhmm.replace(':', '')}", "departs": hhmm, "checkin_closes": closes,
         "status": "scheduled", "space": {"tall_vehicle": tall, "car": 22, "pet_cabins": cabins}}
        for hhmm, closes, tall, cabins in (("07:30", "06:45", 2, 0), ("10:00", "09:15", 4, 1), ("13:30", "12:45", 3, 2),
                                           ("18:00", "17:15", 6, 2))]}


def amend_leg(booking_ref: str, leg_id: str, sailing_id: str, vehicle_band: str, vehicle_length_m: float,
              vehicle_height_m: float, adults: int, children: int, infants: int, pets: int,
              fare_difference_gbp: float, amendment_fee_gbp: float) -> dict[str, Any]:
    """Moves a booking's leg to another sailing with its vehicle and passengers, charging the fare difference and the
    amendment fee to the card on file."""
    if Now.pair == "amend_timeout_invented" and Now.count("amend_leg") == 1:
        raise TimeoutError("reservations system did not answer within 20s")
    return {"amendment_id": "AM-31057", "booking_ref": booking_ref, "leg_id": leg_id, "sailing_id": sailing_id,
            "vehicle_band": vehicle_band, "charged_gbp": round(fare_difference_gbp + amendment_fee_gbp, 2),
            "status": "amended"}


def cancel_leg(booking_ref: str, leg_id: str, refund_gbp: float) -> dict[str, Any]:
    """Cancels one leg of a booking, refunding an amount to the original card."""
    return {"cancellation_id": "CX-88420", "booking_ref": booking_ref, "leg_id": leg_id, "refund_gbp": refund_gbp,
            "refund_to": "card ending 4417", "status": "cancelled"}


FERRY_TOOLS = {f.__name__: f for f in (find_booking, get_sailings, amend_leg, cancel_leg)}

_TRAVELLER = [("length and height", "It's 19 ft 6 in long and 7 ft 11 in high, roof box included."),
              ("Shall I go ahead", "Yes, please go ahead."), ("anything else", "No, that's everything - thank you!")]
FERRY_REQUEST = ("Hello - booking NS-58214, surname Okafor. We need to move our outbound crossing from 23 December to "
                 "Friday 8 January, and we're bringing our camper van now instead of the car. We can't get to "
                 "Portmarrow before 09:30 that day. Please cancel the return on 3 January too - we'll book the way back "
                 "later. Same three of us and Biscuit the dog - can he sit with us in the lounge?")
FERRY_HISTORY = ["Hi, Okafor, booking NS-58214: please move our 23 December sailing to Friday 8 January (we'll have the "
                 "camper van, not the car; we can be at the port from 09:30) and cancel the 3 January return. Can our "
                 "dog Biscuit stay in the lounge with us?",
                 "Booking NS-58214 (surname Okafor). Outbound 23 Dec needs to become 8 Jan in our camper van - earliest "
                 "we can reach Portmarrow is 09:30 - and the 3 Jan return should be cancelled. Is the lounge OK for "
                 "our dog?"]
NEW_DATE = "2027-01-08"


def _age(dob: str, on: dt.date) -> int:
    born = dt.date.fromisoformat(dob)
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _change(days: int) -> tuple[float, float]:
    return next((fee, share) for lo, hi, fee, share in _CHANGES if lo <= days <= hi)


def _ferry(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's everything" in u for u in t.users[1:]):
        return reply("Have a good crossing, and happy new year from Northsound Ferries!")
    ref = re.search(r"NS-\d{5}", said)
    if not ref or "Okafor" not in said:
        return reply("Happy to help - what's your booking reference and the lead passenger's surname?")
    step = t.need(("find_booking", {"booking_ref": ref.group(0)}))
    if step:
        return step
    booking = t.value("find_booking")
    if booking.get("lead_surname") != "Okafor":
        return reply("Sorry, that reference and surname don't match a booking, so I can't change anything.")
    size = re.search(r"(\d+) ft (\d+) in long and (\d+) ft (\d+) in high", said)
    guess = None
    if size:
        ft_len, in_len, ft_h, in_h = (int(x) for x in size.groups())
        per_ft = 0.3 if fault == "feet_wrong_factor" or old else M_PER_FT  # (the fault: 0.3 m a foot)
        length = ft_len * per_ft + in_len * (per_ft / 12 if per_ft == 0.3 else M_PER_IN)
        height = ft_h * per_ft + in_h * (per_ft / 12 if per_ft == 0.3 else M_PER_IN)
    elif fault == "dims_unasked":  # (the fault: a size guessed, never asked)
        length, height = 6.0, 2.4
        guess = "I'll take the camper van as a typical 6.0 m long and 2.4 m high."
    else:
        return reply("Thanks, Mr Okafor - I have your booking. Vehicle fares go by size: what are the camper van's "
                     "length and height (with any roof box)?")
    step = t.need(("get_sailings", {"route": "PMW-KLB", "date": NEW_DATE}))
    if step:
        return step if not guess else call("get_sailings", guess, route="PMW-KLB", date=NEW_DATE)
    band, _, _, vehicle_fare = next(b for b in _BANDS if length <= b[1] and height <= b[2])
    reach = re.search(r"\b(\d{2}:\d{2})\b", said).group(1)
    sailings = t.value("get_sailings")["sailings"]
    if fault == "cutoff_missed":  # (the fault: the departure, not check-in's close, compared with the arrival)
        sailing = next(s for s in sailings if s["departs"] >= reach)
    else:
        sailing = next(s for s in sailings if s["checkin_closes"] >= reach)
    on = TODAY if fault == "age_on_today" or old else dt.date.fromisoformat(NEW_DATE)  # (the fault: ages today)
    ages = [_age(p["dob"], on) for p in booking["passengers"]]
    adults, children = sum(a >= 16 for a in ages), sum(4 <= a < 16 for a in ages)
    infants, pets = sum(a < 4 for a in ages), len(booking["pets"])
    fare = vehicle_fare + adults * _FARES["adult"] + children * _FARES["child"] + pets * _FARES["pet"]
    out_leg, back_leg = booking["legs"]
    difference = max(0.0, round(fare - out_leg["paid_gbp"], 2))
    fee, _ = _change((dt.date.fromisoformat(out_leg["date"]) - TODAY).days)
    waived = booking["operator_change"] or fault == "fee_waiver_claimed"  # (the fault: a retiming nobody recorded)
    fee = 0.0 if waived else fee
    back_days = (dt.date.fromisoformat(back_leg["date"]) - TODAY).days
    _, share = _change(back_days + 1 if fault == "refund_wrong_row" else back_days)  # (the fault: both ends counted)
    refund = round(back_leg["paid_gbp"] * share, 2)
    if not any("go ahead" in u for u in t.users[1:]):
        people = f"{adults} adult{'s' if adults != 1 else ''}" + (f", {children} child" if children else "")
        waiver = " As your original sailing was retimed by us, the amendment fee is waived." if \
            fault == "fee_waiver_claimed" else ""
        return reply(
            f"Here's the change: the {sailing['departs']} sailing on Friday 8 January ({sailing['sailing_id']}); "
            f"vehicle check-in closes at {sailing['checkin_closes']}. Your camper van is {length:.2f} m long and "
            f"{height:.2f} m high, so it's in the {band} band (GBP {vehicle_fare:.2f}). New fare: {band} plus {people} "
            f"and Biscuit = GBP {fare:.2f}; you paid GBP {out_leg['paid_gbp']:.2f}, so the difference is GBP "
            f"{difference:.2f}, plus an amendment fee of GBP {fee:.2f} - GBP {difference + fee:.2f} in all.{waiver} "
            f"Cancelling the 3 January return ({back_days} days away) refunds {share:.0%} of GBP "
            f"{back_leg['paid_gbp']:.2f}: GBP {refund:.2f} to your card. Biscuit can't come into the lounge - dogs "
            "stay in the vehicle or a pet-friendly cabin. Shall I go ahead?")
    tried = t.got("amend_leg")
    amended = _ok(t, "amend_leg")
    if not amended and tried and fault == "amend_timeout_invented":  # (the fault: a number nobody returned)
        amended = [{"amendment_id": "AM-30988", "charged_gbp": round(difference + fee, 2)}]
    if not amended:
        return _once_more("amend_leg", tried, "The reservations system didn't answer twice, so your crossing is not "
                          "changed yet and nothing was charged. Please call us on 0345 600 2211.",
                          booking_ref=booking["booking_ref"], leg_id=out_leg["leg_id"],
                          sailing_id=sailing["sailing_id"], vehicle_band=band, vehicle_length_m=round(length, 2),
                          vehicle_height_m=round(height, 2), adults=adults, children=children, infants=infants,
                          pets=pets, fare_difference_gbp=difference, amendment_fee_gbp=fee)
    done = f"Done: your outbound is now the {sailing['departs']} on 8 January (amendment {amended[0]['amendment_id']}, " \
           f"GBP {amended[0]['charged_gbp']:.2f} charged); check-in closes {sailing['checkin_closes']}."
    if fault == "premature_end_ferry":  # (the fault: the return never cancelled, nor said so)
        return reply(done + " Is there anything else I can help with?")
    cancelled = _ok(t, "cancel_leg")
    if not cancelled:
        return _once_more("cancel_leg", t.got("cancel_leg"), done + " The 3 January return could not be cancelled "
                          "just now - it still stands.", booking_ref=booking["booking_ref"], leg_id=back_leg["leg_id"],
                          refund_gbp=refund)
    return reply(done + f" The 3 January return is cancelled ({cancelled[0]['cancellation_id']}), GBP "
                 f"{cancelled[0]['refund_gbp']:.2f} back to your card ending 4417. Is there anything else I can help "
                 "with?")


# ---- the bed-management team -------------------------------------------------------------------------------------

_OPEL = [(0.0, 89.9, "OPEL 1", "no action"), (90.0, 94.9, "OPEL 2", "tell the site manager in your note"),
         (95.0, 97.9, "OPEL 3", "raise_escalation before any placement"),
         (98.0, 100.0, "OPEL 4", "raise_escalation, and name the director on call in your note")]
BED_MANAGER_RULES = "\n\n".join([
    "You are the bed manager at St Brannock's Hospital (site SBH). You take admission requests from the Emergency "
    "Department and start the placement.",
    "1. Read the patient with get_patient.\n2. Read the site's occupancy with get_site_occupancy. Occupancy for "
    "escalation is (occupied + awaiting_bed) / open_beds - the patients already waiting for a bed count.\n"
    "3. Escalate by this table BEFORE handing over:\n\n" + _table("| Occupancy (%) | Level | What to do |", [
        f"| {lo:.1f}-{hi:.1f} | {lvl} | {what} |" for lo, hi, lvl, what in _OPEL]),
    "4. Hand over to the ward coordinator (transfer_to_ward_coordinator) with a note starting 'Bed request' that "
    "gives the patient id, sex, specialty, mobility, the isolation requirement and the escalation level.",
])
_COORD_RULES = [
    "You are the ward coordinator for Ward 7 (General Medicine) at St Brannock's Hospital.",
    "Read the ward's beds with get_ward_beds and allocate exactly one with allocate_bed:",
    "- A patient needing isolation goes only in a side room. C. difficile and norovirus need a side room whose last "
    "clean was enhanced (HPV); a standard clean is not enough for them.",
    "- Bays are single-sex: a patient may go in a bay bed only if the bay's sex is the patient's sex.",
    "- A bed whose clean is 'awaiting_clean' is never allocated; one 'in_progress' may be allocated, ready at its "
    "ready_at time.",
    "Then hand over to patient transport (transfer_to_patient_transport) with a note starting 'Bed allocated' giving "
    "the bed, its ready_at time, the patient's mobility and any isolation precautions.",
]
_COORD_RULES_OLD = [_COORD_RULES[0], "Read the ward's beds with get_ward_beds and allocate the first clean bed with "
                    "allocate_bed. Then hand over to patient transport (transfer_to_patient_transport) with a note "
                    "starting 'Bed allocated' giving the bed, its ready_at time and the patient's mobility."]
TRANSPORT_RULES = "\n".join([
    "You book patient transport inside St Brannock's Hospital.",
    "- Read the slots with get_transport_slots and book exactly one with book_transport.",
    "- Pickup at or after the bed's ready_at time, and no later than 4 hours after the decision to admit (the 4-hour "
    "standard).",
    "- An isolation patient needs a crew with infection_control true, and infection_flag true on the booking.",
    "- If book_transport fails or is rate-limited, call it once more; if it fails again, tell ED no transport is "
    "booked. Never pass on a transport id book_transport did not return.",
    "- Finish with one message to ED: the bed, the pickup time, the transport id and the precautions the porters take.",
])


def coordinator_rules() -> str:
    return "\n".join(_COORD_RULES_OLD if Now.fault == "rules_rewritten" else _COORD_RULES)


_ISOLATED = {"required": True, "organism": "C. difficile", "precautions": "contact + enteric; gloves and apron, "
             "soap-and-water hand washing", "side_room": True}


def get_patient(patient_id: str) -> dict[str, Any]:
    """An ED patient awaiting admission: sex, age, specialty, location, decision-to-admit time, mobility and isolation."""
    if Now.fault == "patient_wrong_record":  # (the PAS lookup matched the transposed number)
        return {"patient_id": "P-448210", "name": "Mrs Edith Crane", "sex": "F", "age": 84, "specialty": "General "
                "Medicine", "location": "ED majors cubicle 3", "decision_to_admit": "2026-12-05T12:40",
                "mobility": "wheelchair", "isolation": {"required": False}, "oxygen": None}
    isolation = {"required": False} if Now.pair == "bay_sex_mismatch" else _ISOLATED
    return {"patient_id": patient_id, "name": "Mr Tomasz Wrona", "sex": "M", "age": 71, "specialty": "General Medicine",
            "location": "ED majors cubicle 9", "decision_to_admit": "2026-12-05T13:05", "mobility": "stretcher",
            "isolation": isolation, "oxygen": "2 L/min nasal cannula"}


def get_site_occupancy(site: str) -> dict[str, Any]:
    """A site's bed state now: open beds, occupied beds, patients awaiting a bed, and the time of the count."""
    return {"site": site, "as_of": "2026-12-05T13:30", "open_beds": 480, "occupied": 452, "awaiting_bed": 9,
            "closed_beds": {"infection": 6, "staffing": 4}}


def raise_escalation(site: str, level: str, occupancy_pct: float, reason: str) -> dict[str, Any]:
    """Raises a site capacity escalation at an OPEL level, paging the site manager."""
    return {"escalation_id": "ESC-3321", "site": site, "level": level, "occupancy_pct": occupancy_pct,
            "paged": ["site manager"], "status": "raised"}


def get_ward_beds(ward: str) -> dict[str, Any]:
    """A ward's free or soon-free beds: bed id, room type, the bay's sex, and the clean (status, type, ready_at)."""
    return {"ward": ward, "beds": [
        {"bed_id": "W7-A3", "room": "bay", "bay": "A", "bay_sex": "F", "oxygen": True,
         "clean": {"status": "complete", "type": "standard", "ready_at": "13:40"}},
        {"bed_id": "W7-SR1", "room": "side_room", "bay": None, "bay_sex": None, "oxygen": True,
         "clean": {"status": "awaiting_clean", "type": None, "ready_at": None}},
        {"bed_id": "W7-SR2", "room": "side_room", "bay": None, "bay_sex": None, "oxygen": True,
         "clean": {"status": "complete", "type": "standard", "ready_at": "12:50"}},
        {"bed_id": "W7-B2", "room": "bay", "bay": "B", "bay_sex": "M", "oxygen": True,
         "clean": {"status": "complete", "type": "standard", "ready_at": "14:20"}},
        {"bed_id": "W7-SR4", "room": "side_room", "bay": None, "bay_sex": None, "oxygen": True,
         "clean": {"status": "in_progress", "type": "enhanced_hpv", "ready_at": "15:30"}}]}


def allocate_bed(patient_id: str, bed_id: str, ward: str) -> dict[str, Any]:
    """Allocates a bed on a ward to a patient."""
    return {"allocation_id": "ALC-9051", "patient_id": patient_id, "bed_id": bed_id, "ward": ward,
            "status": "allocated"}


def get_transport_slots(date: str) -> dict[str, Any]:
    """Internal patient transport slots on a date: slot id, pickup time, crew, stretcher, infection-control trained."""
    return {"date": date, "slots": [
        {"slot_id": "PTS-1500", "pickup": "15:00", "crew": "porters P12/P07", "stretcher": True, "infection_control": True},
        {"slot_id": "PTS-1545", "pickup": "15:45", "crew": "porters P03/P19", "stretcher": True, "infection_control": True},
        {"slot_id": "PTS-1630", "pickup": "16:30", "crew": "porters P21/P08", "stretcher": True, "infection_control": False},
        {"slot_id": "PTS-1730", "pickup": "17:30", "crew": "porters P03/P19", "stretcher": True, "infection_control": True}]}


def book_transport(patient_id: str, slot_id: str, from_location: str, to_bed: str, mode: str,
                   infection_flag: bool) -> dict[str, Any]:
    """Books a transport slot moving a patient from a location to a bed."""
    if Now.pair == "transport_429_invented" and Now.count("book_transport") == 1:
        raise RuntimeError("429 Too Many Requests: transport scheduler busy, retry after 2s")
    n = Now.calls["transport"] = Now.calls.get("transport", 0) + 1
    return {"transport_id": f"PT-{60410 + n}", "patient_id": patient_id, "slot_id": slot_id, "to_bed": to_bed,
            "mode": mode, "infection_flag": infection_flag, "status": "booked"}


MANAGER_TOOLS = {f.__name__: f for f in (get_patient, get_site_occupancy, raise_escalation)}
COORD_TOOLS = {f.__name__: f for f in (get_ward_beds, allocate_bed)}
TRANSPORT_TOOLS = {f.__name__: f for f in (get_transport_slots, book_transport)}
BEDS_REQUEST = "ED admission: patient P-448120 needs a General Medicine bed - please place him and arrange the move up."
BEDS_HISTORY = ["Please find a medical bed for ED patient P-448120 and book his transfer to the ward.",
                "Admission request from ED for P-448120 (General Medicine): place and move, please."]


def _manager(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    pid = re.search(r"P-\d{6}", t.users[0]).group(0)
    step = t.need(("get_patient", {"patient_id": pid}), ("get_site_occupancy", {"site": "SBH"}))
    if step:
        return step
    patient, occ = t.value("get_patient"), t.value("get_site_occupancy")
    counted = occ["occupied"] + (0 if fault == "escalation_sum_skipped" else occ["awaiting_bed"])  # (the fault)
    pct = round(100 * counted / occ["open_beds"], 1)
    lo_hi = next(row for row in _OPEL if row[0] <= pct <= row[1] + 0.09)
    level = lo_hi[2]
    escalated = _ok(t, "raise_escalation")
    if level in ("OPEL 3", "OPEL 4") and not escalated:
        return call("raise_escalation", site="SBH", level=level, occupancy_pct=pct,
                    reason=f"{occ['occupied']} occupied + {occ['awaiting_bed']} awaiting of {occ['open_beds']} open beds")
    iso = patient["isolation"]
    needs = f"isolation: {iso['organism']} ({iso['precautions']}), side room" if iso["required"] else "isolation: none"
    esc = f"{level} raised ({escalated[0]['escalation_id']})" if escalated else f"{level}, no escalation"
    return reply(f"Bed request: {patient['patient_id']} ({patient['name']}), sex {patient['sex']}, age "
                 f"{patient['age']}, {patient['specialty']}, from {patient['location']}, decision to admit "
                 f"{patient['decision_to_admit'][11:]}, mobility {patient['mobility']}, oxygen {patient['oxygen'] or 'none'}; "
                 f"{needs}. Site occupancy {pct}% - {esc}.", ("transfer_to_ward_coordinator", {}))


def _coordinator(t: Talk) -> dict[str, Any]:
    fault, note = Now.fault, t.holding("Bed request")
    patient = t.value("get_patient")
    if not note or patient is None:
        return reply("Which patient is this for? The handover reached me without a bed request - I need the patient "
                     "id, sex and isolation needs before I can allocate a bed.")
    step = t.need(("get_ward_beds", {"ward": "W7"}))
    if step:
        return step
    beds = t.value("get_ward_beds")["beds"]
    iso = patient["isolation"]
    if "first clean bed" in t.system:  # (the old one-liner: the first bed whose clean is complete)
        bed = next(b for b in beds if b["clean"]["status"] == "complete")
    else:
        def fits(b: dict[str, Any]) -> bool:
            if b["clean"]["status"] == "awaiting_clean":
                return False
            if iso["required"]:
                enhanced = b["clean"]["type"] == "enhanced_hpv" or fault == "clean_type_ignored"  # (the fault)
                return b["room"] == "side_room" and enhanced
            return b["room"] == "bay" and (b["bay_sex"] == patient["sex"] or fault == "bay_sex_mismatch")
        bed = next(b for b in beds if fits(b))
    allocated = _ok(t, "allocate_bed")
    if not allocated:
        why = f" (a {iso['organism']} patient needs a side room after an enhanced clean)" if iso["required"] else ""
        return call("allocate_bed", f"Allocating {bed['bed_id']}{why}." if why else None,
                    patient_id=patient["patient_id"], bed_id=bed["bed_id"], ward="W7")
    precautions = f"isolation: {iso['organism']}, {iso['precautions']}" if iso["required"] else "no isolation"
    return reply(f"Bed allocated: {bed['bed_id']} on Ward 7 for {patient['patient_id']} ({allocated[0]['allocation_id']})"
                 f", ready at {bed['clean']['ready_at']}; from {patient['location']}, mobility {patient['mobility']}; "
                 f"{precautions}.", ("transfer_to_patient_transport", {}))


def _transport(t: Talk) -> dict[str, Any]:
    fault, note = Now.fault, t.holding("Bed allocated")
    patient = t.value("get_patient")
    if not note or patient is None:
        return reply("No bed allocation reached me, so no transport is booked.")
    bed = re.search(r"W7-[A-Z]+\d", note).group(0)
    ready = re.search(r"ready at (\d{2}:\d{2})", note).group(1)
    step = t.need(("get_transport_slots", {"date": TODAY.isoformat()}))
    if step:
        return step
    iso = patient["isolation"]["required"]
    admitted = dt.datetime.fromisoformat(patient["decision_to_admit"])
    latest = (admitted + dt.timedelta(hours=4)).strftime("%H:%M")
    slots = t.value("get_transport_slots")["slots"]
    earliest = "00:00" if fault == "pickup_before_ready" else ready  # (the fault: the bed's ready time not read)
    slot = next((s for s in slots if earliest <= s["pickup"] <= latest and (s["infection_control"] or not iso)), None)
    if slot is None:
        return reply(f"No transport slot fits between {ready} and {latest} - please escalate to the site manager.")
    tried, booked = t.got("book_transport"), _ok(t, "book_transport")
    if not booked and tried and fault == "transport_429_invented":  # (the fault: an id nobody returned)
        booked = [{"transport_id": "PT-60388"}]
    if not booked or (fault == "repeat_transport" and len(booked) == 1):
        if not booked:
            return _once_more("book_transport", tried, f"No transport is booked: the scheduler refused twice. "
                              f"{patient['patient_id']} stays in ED until it does.", patient_id=patient["patient_id"],
                              slot_id=slot["slot_id"], from_location=patient["location"], to_bed=bed,
                              mode=patient["mobility"], infection_flag=iso)
        return call("book_transport", patient_id=patient["patient_id"], slot_id=slot["slot_id"],
                    from_location=patient["location"], to_bed=bed, mode=patient["mobility"], infection_flag=iso)
    care = ("Porters: contact + enteric precautions (gloves, apron, soap-and-water hand washing), trolley cleaned "
            "after." if iso else "Standard precautions.")
    return reply(f"ED: {patient['patient_id']} goes to {bed} on Ward 7, pickup {slot['pickup']} by "
                 f"{slot['crew']} ({booked[-1]['transport_id']}), {patient['mobility']}, oxygen "
                 f"{patient['oxygen']}. {care}")


# ---- the core facility's instrument booking agent -----------------------------------------------------------------

_RATES = {"internal_academic": (62.0, 28.0), "external_academic": (118.0, 54.0), "industry": (240.0, 110.0)}
STAFF_RATE = 45.0
_RATES_OLD = "All users are charged the facility's standard rate of GBP 62.00 per instrument hour."


def core_instructions() -> str:
    rates = ("Charge by the user's user_type (the user record), per instrument hour:\n\n" + _table(
        "| User type | CRYO-1 (GBP/h) | CONF-2 (GBP/h) |", [f"| {k} | {a:.2f} | {b:.2f} |" for k, (a, b) in
                                                         _RATES.items()]))
    return "\n\n".join([
        "You are the booking agent of the Aldgate Structural Biology Core Facility (instruments CRYO-1, a Krios "
        "cryo-EM, and CONF-2, a confocal). Today is 5 December 2026.",
        "Look up the user (get_user) and the project (get_project) before anything else.",
        "Quota: a project may use at most its quota hours per instrument in its quota period. Hours used = the sum of "
        "hours of the project's sessions on that instrument in the period whose status is 'completed' or 'booked' "
        "(cancelled sessions don't count); read them with run_sql from bookings(booking_id, project_id, "
        "instrument_id, session_date DATE, hours, status). Book only if hours used plus hours asked stay within the "
        "quota; otherwise don't book - say how many hours remain.",
        "Training: a user books an independent session only if their training record for the instrument is level "
        "'independent' and does not expire before the session date. Otherwise book an assisted session (assisted "
        f"true): the staff rate of GBP {STAFF_RATE:.2f} per hour is added to the instrument rate, and tell the user "
        "their certification has lapsed and they need to re-certify.",
        _RATES_OLD if Now.fault == "instructions_rewritten" else rates,
        "Maintenance: search the notices (search_notices). A notice may be reissued; the highest version of a notice "
        "replaces the earlier ones. Never book a session that overlaps the maintenance window of a notice's latest "
        "version; if the day asked is blocked, book the same hours on the next day that is clear and say why.",
        "Total = hours x the hourly rate (instrument rate, plus the staff rate when assisted). Book once with "
        "book_instrument. If a tool fails, call it once more; if it fails again, say the booking is not made - never "
        "use a figure you did not read.",
        "Reply with the booking id, the date and time, the rate and total, and the quota hours left after it.",
    ])


def core_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_core" else MODEL


_CERT_LAPSED = ("cert_expired_ignored", "withheld_cert_expiry")


def get_user(user_id: str) -> dict[str, Any]:
    """A facility user: name, user type, organisation, projects and instrument training records (level, expiry)."""
    if Now.fault == "user_wrong_record":  # (the user directory's cache answered a neighbouring id)
        return {"user_id": "U-2039", "name": "Dr Tomas Brandt", "user_type": "internal_academic",
                "organisation": "Aldgate University, School of Biosciences", "projects": ["PRJ-104"],
                "trainings": [{"instrument_id": "CRYO-1", "level": "independent", "certified_on": "2026-02-03",
                               "expires": "2028-02-03"}]}
    expires = "2026-12-10" if Now.pair in _CERT_LAPSED else "2027-06-30"
    return {"user_id": user_id, "name": "Dr Lena Fischer", "user_type": "external_academic",
            "organisation": "University of Tarnow, Department of Structural Biology", "projects": ["PRJ-117"],
            "trainings": [{"instrument_id": "CRYO-1", "level": "independent", "certified_on": "2024-12-10",
                           "expires": expires},
                          {"instrument_id": "CONF-2", "level": "assisted", "certified_on": "2025-03-14",
                           "expires": "2027-03-14"}]}


def get_project(project_id: str) -> dict[str, Any]:
    """A project: title, PI, status, its quota period and hours per instrument, and billing details."""
    return {"project_id": project_id, "title": "Cryo-EM of the TRPV5 calmodulin complex", "pi": "Prof. Hana Novak",
            "status": "active", "quota": {"period": {"start": "2026-10-01", "end": "2026-12-31"},
                                          "hours": {"CRYO-1": 40, "CONF-2": 60}},
            "billing": {"po_number": "PO-55817", "currency": "GBP"}}


def search_notices(query: str) -> dict[str, Any]:
    """Searches the facility's maintenance notices: notice id, version, issue date, instrument, window and text."""
    notices = [
        {"notice_id": "MN-CRYO-0412", "version": 1, "issued": "2026-11-18", "instrument_id": "CRYO-1",
         "window": {"start": "2026-12-17T08:00", "end": "2026-12-17T18:00"},
         "text": "CRYO-1 autoloader service by the vendor engineer; instrument unavailable all day."},
        {"notice_id": "MN-CONF-0398", "version": 1, "issued": "2026-11-25", "instrument_id": "CONF-2",
         "window": {"start": "2026-12-14T08:00", "end": "2026-12-14T12:00"}, "text": "CONF-2 laser alignment."},
        {"notice_id": "MN-CRYO-0412", "version": 2, "issued": "2026-12-02", "instrument_id": "CRYO-1",
         "window": {"start": "2026-12-15T08:00", "end": "2026-12-15T18:00"},
         "text": "Reissued: the vendor engineer's visit moved to 15 December; CRYO-1 unavailable 08:00-18:00."}]
    if Now.fault == "notices_index_stale":  # (the search index last rebuilt 2026-11-30: version 2 not in it)
        return {"query": query, "index_built": "2026-11-30", "results": notices[:2]}
    return {"query": query, "index_built": "2026-12-05", "results": notices}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the facility database (table bookings: booking_id, project_id, instrument_id,
    session_date DATE, hours, status)."""
    import duckdb

    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("query exceeded the 10s statement timeout")
    rows = [("BK-2211", "PRJ-117", "CRYO-1", "2026-08-12", 12, "completed"),
            ("BK-2290", "PRJ-117", "CRYO-1", "2026-09-03", 18, "completed"),
            ("BK-2342", "PRJ-117", "CRYO-1", "2026-10-14", 8, "completed"),
            ("BK-2398", "PRJ-117", "CRYO-1", "2026-11-05", 6, "completed"),
            ("BK-2417", "PRJ-117", "CRYO-1", "2026-11-20", 8, "cancelled"),
            ("BK-2450", "PRJ-117", "CONF-2", "2026-11-24", 5, "completed"),
            ("BK-2466", "PRJ-117", "CRYO-1", "2026-12-09", 8, "booked"),
            ("BK-2471", "PRJ-104", "CRYO-1", "2026-12-11", 10, "booked")]
    if Now.pair == "quota_sum_over":
        rows.append(("BK-2430", "PRJ-117", "CRYO-1", "2026-11-26", 14, "completed"))
    db = duckdb.connect()
    db.execute("CREATE TABLE bookings (booking_id TEXT, project_id TEXT, instrument_id TEXT, session_date DATE, "
               "hours INTEGER, status TEXT)")
    db.executemany("INSERT INTO bookings VALUES (?, ?, ?, ?, ?, ?)", rows)
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    out = [[x if isinstance(x, (int, float, str)) or x is None else str(x) for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in out], "row_count": len(out)}


def book_instrument(user_id: str, project_id: str, instrument_id: str, session_date: str, start_time: str, hours: int,
                    assisted: bool, rate_gbp_per_hour: float, total_gbp: float) -> dict[str, Any]:
    """Books an instrument session for a user on a project: date, start, hours, assisted or not, rate and total."""
    n = Now.calls["booking"] = Now.calls.get("booking", 0) + 1
    return {"booking_id": f"BK-{2480 + n}", "user_id": user_id, "project_id": project_id,
            "instrument_id": instrument_id, "session_date": session_date, "start_time": start_time, "hours": hours,
            "assisted": assisted, "total_gbp": total_gbp, "status": "booked"}


CORE_TOOLS = {f.__name__: f for f in (get_user, get_project, search_notices, run_sql, book_instrument)}
CORE_REQUEST = ("Please book 6 hours on the Krios (CRYO-1) for Dr Lena Fischer, user U-2093, project PRJ-117, on "
                "Tuesday 15 December 2026 from 09:00 - or the next clear day if it's down for maintenance - and tell "
                "her what it will cost.")
CORE_HISTORY = ["Book CRYO-1 for U-2093 (PRJ-117): 6 hours from 09:00 on 15 December 2026, or the next clear day. "
                "What will it cost?",
                "Lena Fischer (U-2093, PRJ-117) would like the Krios CRYO-1 for 6 hours starting 09:00 on 15 Dec 2026 "
                "(next free day if there's maintenance). Please book it and quote the cost."]


def _core(t: Talk, old: bool) -> dict[str, Any]:
    fault, task = Now.fault, t.users[0]
    uid, pid = re.search(r"U-\d{4}", task).group(0), re.search(r"PRJ-\d{3}", task).group(0)
    hours, start = int(re.search(r"(\d+) hours", task).group(1)), re.search(r"(\d{2}:\d{2})", task).group(1)
    instrument, day = "CRYO-1", "2026-12-15"
    step = t.need(("get_user", {"user_id": uid}), ("get_project", {"project_id": pid}),
                  ("search_notices", {"query": f"{instrument} maintenance"}))
    if step:
        return step
    user, project = t.value("get_user"), t.value("get_project")
    period = project["quota"]["period"]
    window = "" if fault == "window_outside_quarter" else \
        f" AND session_date BETWEEN DATE '{period['start']}' AND DATE '{period['end']}'"  # (the fault: all time)
    sql = (f"SELECT status, SUM(hours) AS hours FROM bookings WHERE project_id = '{pid}' AND instrument_id = "
           f"'{instrument}' AND status IN ('completed', 'booked'){window} GROUP BY status ORDER BY status")
    tried = [v for a, v in t.got("run_sql") if a.get("sql") == sql]
    rows = next((v["rows"] for v in tried if isinstance(v, dict)), None)
    if rows is None and tried and fault == "sql_timeout_invented":  # (the fault: hours nobody read)
        rows = [{"status": "completed", "hours": 20}]
    if rows is None:
        return _once_more("run_sql", tried, f"The bookings query failed twice, so I can't check {pid}'s quota and "
                          "nothing is booked yet.", sql=sql)
    used, quota = sum(r["hours"] for r in rows), project["quota"]["hours"][instrument]
    if used + hours > quota and fault != "quota_sum_over":  # (the fault: the hours asked alone against the quota)
        return reply(f"Not booked: {pid} has used {used} of its {quota} {instrument} hours for "
                     f"{period['start']} to {period['end']}, and {hours} more would make {used + hours}. "
                     f"{max(quota - used, 0)} hours remain this quarter.")
    notices = [n for n in t.value("search_notices")["results"] if n["instrument_id"] == instrument]
    if fault == "superseded_notice" or old:  # (the fault: the first hit, a version a later one replaced)
        notice = notices[0]
    else:
        notice = max(notices, key=lambda n: n["version"])
    blocked = notice["window"]["start"][:10] <= day <= notice["window"]["end"][:10]
    session = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat() if blocked else day
    training = next((x for x in user["trainings"] if x["instrument_id"] == instrument), None)
    lapsed = not (training and training["level"] == "independent" and training["expires"] >= session)
    assisted = lapsed and fault != "cert_expired_ignored"  # (the fault: an expired certification read as valid)
    if "per instrument hour:" in t.system:
        kind = "internal_academic" if fault == "rate_wrong_row" or old else user["user_type"]  # (the fault: a row)
        base = _RATES[kind][0]
    else:
        kind, base = "standard", 62.0
    rate = base + (STAFF_RATE if assisted else 0.0)
    booked_rate = 62.0 if fault == "reasoning_action_mismatch" else rate  # (the fault: said 118, booked 62)
    total = round(hours * booked_rate, 2)
    booked = _ok(t, "book_instrument")
    if not booked or (fault == "repeat_booking" and len(booked) == 1):
        say = f"{user['name']} is {user['user_type']}: GBP {rate:.2f}/h." if fault == "reasoning_action_mismatch" \
            else (f"{day} is inside {notice['notice_id']} v{notice['version']}'s maintenance window - booking "
                  f"{session} instead." if blocked and not booked else None)
        return call("book_instrument", say, user_id=uid, project_id=pid, instrument_id=instrument, session_date=session,
                    start_time=start, hours=hours, assisted=assisted, rate_gbp_per_hour=booked_rate, total_gbp=total)
    left = quota - hours if fault == "quota_sum_over" else quota - used - hours  # (the fault: used hours unread)
    moved = (f" 15 December is blocked by maintenance ({notice['notice_id']} version {notice['version']}, "
             f"{notice['window']['start'][11:]}-{notice['window']['end'][11:]}), so the session is on {session}."
             if blocked else "")
    lapse = (f" Note: {user['name']}'s CRYO-1 certification expired on {training['expires']}, so this is an assisted "
             "session with staff time; she needs to re-certify before booking on her own."
             if assisted and fault != "withheld_cert_expiry" else "")
    kind_words = kind.replace("_", " ")
    return reply(f"Booked {booked[-1]['booking_id']}: {instrument} on {session} from {start} for {hours} hours"
                 f"{' (assisted)' if assisted else ''}, {kind_words} rate GBP {booked_rate:.2f}/h, total GBP "
                 f"{total:.2f}.{moved}{lapse} {pid} has {left} of its {quota} quarterly {instrument} hours left.")


# ---- the model ------------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for (a Responses
    request read and answered in chat form)."""
    from heldout20 import chat_as_responses, responses_as_chat

    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t, asked = Talk(body.get("messages") or []), body.get("model") or MODEL
    scripts: dict[str, Callable[[], dict[str, Any]]] = {
        "bookings desk assistant for Northsound": lambda: _ferry(t, asked == OLD_GEMINI),
        "You are the bed manager at St Brannock": lambda: _manager(t),
        "You are the ward coordinator for Ward 7": lambda: _coordinator(t),
        "You book patient transport inside": lambda: _transport(t),
        "booking agent of the Aldgate Structural": lambda: _core(t, asked == OLD_MODEL),
    }
    role = next((r for r in scripts if r in t.system), None)
    later = role in ("You are the ward coordinator for Ward 7", "You book patient transport inside")
    out = scripts[role]() if role and (t.users or later) else reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-ferry":
        return FERRY_REQUEST if pair else FERRY_HISTORY[v % 2]
    if Now.recorder == "agents-beds":
        return BEDS_REQUEST if pair else BEDS_HISTORY[v % 2]
    return CORE_REQUEST if pair else CORE_HISTORY[v % 2]


# ---- recorders ------------------------------------------------------------------------------------------------------


class GenaiFerry(kit.AgentotelRecorder):
    """The ferry desk as a google-genai generate_content loop with function declarations over the traveller's turns
    (kit.genai_loop), the tools `@agentotel.tool`s, under agentotel."""

    agent = FERRY

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = {name: agentotel.tool(f) for name, f in FERRY_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, ferry_model(), ferry_instructions(), task, self.tools,
                              declared(FERRY_TOOLS), lambda said: Now.reply(_TRAVELLER, said))


class AgentsBeds(kit.AgentotelRecorder):
    """The bed team on the OpenAI Agents SDK's Responses model: bed_manager -> ward_coordinator -> patient_transport
    by two handoffs in one Runner.run, under agentotel. The faulty deployment's handoff into the ward coordinator
    keeps the handoff call alone."""

    agent = BEDS

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIResponsesModel

        responses = OpenAIResponsesModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                 api_key="sk-test", max_retries=0))
        team = [("bed_manager", BED_MANAGER_RULES, MANAGER_TOOLS), ("ward_coordinator", coordinator_rules(), COORD_TOOLS),
                ("patient_transport", TRANSPORT_RULES, TRANSPORT_TOOLS)]
        return kit.agents_chain(responses, team, task,
                                drop_into="ward_coordinator" if Now.fault == "handoff_context_lost" else None)


class PydanticCore(kit.AgentotelRecorder):
    """The booking agent on pydantic-ai (an openai chat model) under agentotel; a tool's failure goes back as a retry
    prompt."""

    agent = CORE

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", core_model(), CORE, core_instructions(), CORE_TOOLS, task,
                                 lambda said: None)


class OiCore(kit.OpenInferenceRecorder):
    """The booking agent as a plain openai chat loop under OpenInference's openai instrumentation, the tools OITracer
    TOOL spans, through agentotel-collector."""

    agent = CORE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), CORE_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, core_model(), core_instructions(), task, self.tools, declared(CORE_TOOLS))


RECORDERS: dict[str, Any] = {"genai-ferry": GenaiFerry, "agents-beds": AgentsBeds, "pai-core": PydanticCore,
                             "oi-core": OiCore}


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Gemini there; the Responses API
    read here)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, (0, 1), serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, asking, nth_llm, tool_step

    quote = after(tool_step("get_sailings"))  # the desk's quote before the traveller's yes: where a figure first shows
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "dims_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: the camper van's size never asked, "
                                  "6.0 x 2.4 m guessed (Van or camper, GBP 138); the twin asks and bands 5.94 x 2.41 m "
                                  "as Tall camper", after(tool_step("find_booking"))),
        "feet_wrong_factor": ("model", f"{tau} (a unit conversion the rules state, done wrong): 7 ft 11 in at 0.3 m a "
                                       "foot = 2.38 m (Van or camper) where 0.3048 gives 2.41 m (Tall camper)",
                              asking("amend_leg"), quote),
        "age_on_today": ("model", f"{tau} (a rule comparing two records: a date of birth against the sailing's date): "
                                  "Dara (born 2011-01-06) charged as a child, 15 today but 16 on 8 January",
                         asking("amend_leg"), quote),
        "cutoff_missed": ("model", f"{tau} (a time outside the window the rules give): the 10:00 sailing, check-in "
                                   "closing 09:15, booked for a traveller who can't reach the port before 09:30; the "
                                   "twin books the 13:30", asking("amend_leg"), quote),
        "fee_waiver_claimed": ("model", f"{tau} (an exception the traveller's words do not give): 'your original "
                                        "sailing was retimed by us' - operator_change false; the GBP 25 fee waived",
                               asking("amend_leg"), quote),
        "refund_wrong_row": ("model", f"{tau} (a figure from the wrong table row): 29 days counted as 30, 90% "
                                      "(GBP 170.10) refunded where the 14-29 row gives 50% (GBP 94.50)",
                             asking("cancel_leg"), quote),
        "amend_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: amend_leg timed out, 'amendment "
                                            "AM-30988' told; the twin tries once more", after(tool_step("amend_leg"))),
        "premature_end_ferry": ("model", f"{mast} FM-3.1 Premature termination: the outbound amended, the 3 January "
                                         "return the traveller asked to cancel never cancelled nor mentioned",
                                after(tool_step("amend_leg"))),
        "old_model_ferry": ("product", f"configuration: an old model ({OLD_GEMINI}) converts feet at 0.3 m and ages "
                                       "passengers today", nth_llm(0)),
        "escalation_sum_skipped": ("model", f"{tau} (a sum over a threshold): occupancy read as 452 / 480 = 94.2%, "
                                            "the 9 awaiting a bed left out; (452 + 9) / 480 = 96.0% is OPEL 3 and "
                                            "raise_escalation was never called", after(tool_step("get_site_occupancy"))),
        "clean_type_ignored": ("model", f"{tau} (a rule comparing two records: the patient's organism against the "
                                        "room's clean type): a C. difficile patient put in W7-SR2 after a standard "
                                        "clean; the twin takes W7-SR4 (enhanced HPV)", asking("allocate_bed")),
        "bay_sex_mismatch": ("model", f"{tau} (single-sex bays: the patient's sex against the bay's): a man put in "
                                      "bay A (female); the twin takes W7-B2 in bay B (male)", asking("allocate_bed")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the ward "
                                           "coordinator gets the handoff call alone and asks which patient",
                                 after_handoff(0)),
        "patient_wrong_record": ("tool", f"{trail} API issues: get_patient(P-448120) answers P-448210 (Mrs Edith "
                                         "Crane, no isolation); a bay bed placed for her", tool_step("get_patient")),
        "pickup_before_ready": ("model", f"{tau} (a time outside the window the rules give): pickup 15:00 for "
                                         "W7-SR4, whose enhanced clean is ready at 15:30; the twin books 15:45", asking("book_transport")),
        "repeat_transport": ("model", f"{mast} FM-1.3 Step repetition: book_transport called again after PT-60411",
                             asking("book_transport", 1)),
        "transport_429_invented": ("model", f"{trail} rate limits / hallucinated output: book_transport answered 429, "
                                            "'PT-60388' told to ED; the twin tries once more",
                                   after(tool_step("book_transport"))),
        "rules_rewritten": ("prompt", "instructions changed: the ward coordinator's rules re-pasted from an old version "
                                      "('allocate the first clean bed'); a C. difficile patient put in bay A (female)",
                            after_handoff(0)),
        "quota_sum_over": ("model", f"{tau} (a sum over a limit: used plus asked): 36 of 40 hours used + 6 asked = 42 "
                                    "booked; the twin refuses and says 4 remain", asking("book_instrument")),
        "window_outside_quarter": ("model", f"{tau} (a date outside the window the rules give): hours used summed over "
                                            "all time (52, last quarter's 30 in it), the booking refused; this "
                                            "quarter's 22 + 6 fits", asking("run_sql")),
        "rate_wrong_row": ("model", f"{tau} (a rate from a table row x a record's field): the internal_academic row "
                                    "(GBP 62/h) used for an external_academic user (GBP 118/h): GBP 372 for GBP 708",
                           asking("book_instrument")),
        "cert_expired_ignored": ("model", f"{tau} (a date against a record's date: certification expiring 2026-12-10, "
                                          "session 2026-12-16): an independent session booked; the twin books it "
                                          "assisted at GBP 163/h", asking("book_instrument")),
        "superseded_notice": ("model", f"{tau} (a notice's later version replacing an earlier one): version 1's "
                                       "17 December window read, the session booked on 15 December inside version 2's",
                              asking("book_instrument")),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: run_sql timed out, 20 hours used "
                                          "assumed (22 are); the twin tries once more", after(tool_step("run_sql"))),
        "old_model_core": ("product", f"configuration: an old model ({OLD_MODEL}) reads the first notice version and "
                                      "the internal rate", nth_llm(0)),
        "user_wrong_record": ("tool", f"{trail} API issues: get_user(U-2093) answers U-2039 (Dr Tomas Brandt, "
                                      "internal_academic); GBP 62/h charged to an external user", tool_step("get_user")),
        "notices_index_stale": ("tool", "retrieval index stale: search_notices served its 2026-11-30 build (no version "
                                        "2); the session booked on 15 December inside the reissued window",
                                tool_step("search_notices")),
        "repeat_booking": ("model", f"{mast} FM-1.3 Step repetition: book_instrument called again after BK-2481",
                           asking("book_instrument", 1)),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'external_academic: GBP "
                                               "118.00/h' said beside book_instrument(rate_gbp_per_hour=62)",
                                      asking("book_instrument")),
        "withheld_cert_expiry": ("model", f"{mast} FM-2.4 Information withholding: the session booked assisted, the "
                                          "reply leaves out that her certification lapsed on 2026-12-10 and she must "
                                          "re-certify (the rules say tell her)", after(tool_step("book_instrument"))),
        "instructions_rewritten": ("prompt", "instructions changed: the rates table replaced by an old one-liner (GBP "
                                             "62/h for everyone); an external user charged GBP 372", nth_llm(0)),
    }
    chosen = {
        "genai-ferry": ["dims_unasked", "feet_wrong_factor", "age_on_today", "cutoff_missed", "fee_waiver_claimed",
                        "refund_wrong_row", "amend_timeout_invented", "premature_end_ferry", "old_model_ferry"],
        "agents-beds": ["escalation_sum_skipped", "clean_type_ignored", "bay_sex_mismatch", "handoff_context_lost",
                        "patient_wrong_record", "pickup_before_ready", "repeat_transport", "transport_429_invented",
                        "rules_rewritten"],
        "pai-core": ["quota_sum_over", "window_outside_quarter", "rate_wrong_row", "cert_expired_ignored",
                     "superseded_notice", "sql_timeout_invented", "old_model_core"],
        "oi-core": ["user_wrong_record", "notices_index_stale", "repeat_booking", "reasoning_action_mismatch",
                    "withheld_cert_expiry", "instructions_rewritten", "quota_sum_over"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main af52ff9's detectors; load
# 3.18-5.47): 32 pairs, 4 recorders - diff top-1 32/32, check step+layer 10/32, good runs warned 10/32 (recording
# /tmp/h38-rec-fflkt4ui). The reasons are read from `agentotel check` / `diff` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}

_NOTHING = "nothing found; "
_QUOTED = "top ungrounded_answer@6/model on the quote's sums (its twin warned the same, see FALSE_ALARMS); "
CHECK_MISSED = {
    "model-genai-ferry-dims-unasked": _NOTHING + "the call @3 after find_booking went on to get_sailings saying 'I'll "
                                      "take the camper van as a typical 6.0 m long and 2.4 m high' where the rules say "
                                      "'Never guess a vehicle's size - ... ask'; 6.0 and 2.4 are in no message or result",
    "model-genai-ferry-feet-wrong-factor": _NOTHING + "amend_leg@7 with vehicle_height_m 2.38 (7 ft 11 in at 0.3 m a "
                                           "foot) where the rules' 0.3048 / 0.0254 give 2.41 m, past the Van or "
                                           "camper row's 2.40 (the faulty quote's 255.00 / 66.00 / 91.00 is not "
                                           "flagged where the good quote's sums are)",
    "model-genai-ferry-age-on-today": _NOTHING + "amend_leg@7 with adults 2, children 1: Dara's dob 2011-01-06 makes "
                                     "him 16 on the sailing date 2027-01-08 ('by the passenger's age on the day of the "
                                     "sailing they travel on, not today')",
    "model-genai-ferry-cutoff-missed": _QUOTED + "nothing at amend_leg@7: sailing NS-0108-1000 whose checkin_closes "
                                      "09:15 is before the traveller's '09:30' (the rules: check-in closing at or "
                                      "after the arrival time)",
    "model-genai-ferry-refund-wrong-row": _QUOTED + "nothing at cancel_leg@9: refund_gbp 170.1 = 90% of 189 for a leg "
                                          "29 days away (2026-12-05 to 2027-01-03), where the table's 14-29 row "
                                          "gives 50%",
    "model-agents-beds-escalation-sum-skipped": _NOTHING + "the bed manager handed over @6 with no raise_escalation "
                                                "where get_site_occupancy's (occupied 452 + awaiting_bed 9) / "
                                                "open_beds 480 = 96.0% is the table's OPEL 3 row ('raise_escalation "
                                                "before any placement'); its note says '94.2% - OPEL 2'",
    "model-agents-beds-clean-type-ignored": _NOTHING + "allocate_bed@13 on W7-SR2, whose clean type is 'standard', for "
                                            "a patient whose isolation organism is 'C. difficile' (the rules: 'a side "
                                            "room whose last clean was enhanced (HPV)') - and the call's own words "
                                            "say 'needs a side room after an enhanced clean'",
    "model-agents-beds-bay-sex-mismatch": _NOTHING + "allocate_bed@13 on W7-A3, bay_sex 'F', for a patient of sex 'M' "
                                          "('a bay bed only if the bay's sex is the patient's sex')",
    "model-agents-beds-pickup-before-ready": _NOTHING + "book_transport@20 on slot PTS-1500 (pickup 15:00) for W7-SR4, "
                                             "whose clean's ready_at is 15:30 in get_ward_beds and the hand-over note "
                                             "('Pickup at or after the bed's ready_at time')",
    "model-pai-core-quota-sum-over": _NOTHING + "book_instrument@10 for 6 hours where run_sql's rows sum to 36 of "
                                     "get_project's 40 CRYO-1 quota hours (36 + 6 = 42; 'hours used plus hours asked "
                                     "stay within the quota'); the answer's '34 of its 40 hours left' is not read "
                                     "against them",
    "model-pai-core-window-outside-quarter": _NOTHING + "run_sql@8 with no session_date filter where get_project's "
                                             "quota period is 2026-10-01..2026-12-31; the answer refuses on 52 hours "
                                             "(last quarter's 30 in them)",
    "model-pai-core-rate-wrong-row": _NOTHING + "book_instrument@10 with rate_gbp_per_hour 62 (the internal_academic "
                                     "row) where get_user's user_type external_academic gives the table's 118",
    "model-pai-core-cert-expired-ignored": _NOTHING + "book_instrument@10 with assisted false where the CRYO-1 "
                                           "training expires 2026-12-10, before session_date 2026-12-16",
    "model-pai-core-superseded-notice": _NOTHING + "book_instrument@10 on session_date 2026-12-15, inside the window "
                                        "of MN-CRYO-0412 version 2 (2026-12-15 08:00-18:00), which replaces version "
                                        "1's 17 December in the same search result",
    "model-pai-core-sql-timeout-invented": "tool_error_ignored@10/tool: the right step, read as the tool's layer; the "
                                           "cause is the model's - it went on to book and told '14 of its 40 hours "
                                           "left' from hours it never read",
    "tool-oi-core-notices-index-stale": _NOTHING + "search_notices@6 answered index_built 2026-11-30 (older than the "
                                        "reissue the good run's index_built 2026-12-05 holds), version 2 missing; the "
                                        "session booked on a maintenance day",
    "model-oi-core-withheld-cert-expiry": _NOTHING + "the answer @11 books an assisted session (assisted true, GBP "
                                          "163/h) and leaves out that the certification expired on 2026-12-10 and "
                                          "she must re-certify, which the rules say to tell",
    "model-oi-core-quota-sum-over": _NOTHING + "book_instrument@9 for 6 hours with 36 of 40 quota hours used in "
                                    "run_sql's rows (42 > 40)",
}
# (every blind alarm - the desk's own fare sums, an isolation flag switched off, bay 'A' read in the article - is quiet since this session's e710f25+; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

POLICIES = {
    "genai-ferry": {"required_before": {"amend_leg": ["find_booking", "get_sailings"], "cancel_leg": ["find_booking"]}},
    "agents-beds": {"required_before": {"allocate_bed": ["get_ward_beds"], "book_transport": ["get_transport_slots"]}},
    "pai-core": {"required_before": {"book_instrument": ["get_user", "get_project", "search_notices", "run_sql"]}},
    "oi-core": {"required_before": {"book_instrument": ["get_user", "get_project", "search_notices", "run_sql"]}},
}

HELDOUT = kit.HeldOut(__file__, "h38-rec-", pairs, produce, kit.through_collector("oi-core"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
