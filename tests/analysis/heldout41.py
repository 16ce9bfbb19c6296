"""A forty-first held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a scuba-diving charter desk talking with a diver over several turns under a written
policy, a grain elevator's intake team (a truck grader handing to a moisture/quality tester, who hands to a contract
officer) and a tenancy-deposit dispute adjudicator reading the tenancy, its agreement, addenda and inventory reports
from a document search and the landlord's claims from SQL rows, run through real SDKs and frameworks.

    python tests/analysis/heldout41.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout41.py --score DIR [...]       # the runs a call left in DIR, scored again

Saltwater Reef Charters' desk in Key Largo (find_diver, get_trips, record_medical, book_trip, get_bookings,
cancel_booking) serves a diver by written rules: the diver number first; the maximum depth by certification from a
markdown table in FEET (junior divers by their age on the dive day) against site depths the schedule gives in metres
(1 m = 3.2808 ft); each trip's minimum age on the dive day; nitrox only with an Enriched Air Nitrox certificate; a
medical questionnaire expiring before the dive re-asked and recorded before booking; a refresher ($45) for anyone whose
last logged dive is more than 365 days before the dive; a cancellation refunded by hours before departure (72+ all,
24-72 half, under 24 none) unless the captain cancelled for weather (all); every booking or cancellation confirmed
first; a failure tried once more, never a trip a tool did not return. The diver's replies are scripted, said when the
desk's message holds their cue. Prairie Gold Co-op's elevator at Hastings: a truck grader (get_truck_ticket,
record_grade: gross minus tare in lb, 56 lb to the bushel of corn) hands to a quality tester (get_sample_results,
record_quality: a moisture discount per bushel from a table, a load over 20 ppb aflatoxin rejected), who hands to a
contract officer (get_contract, apply_delivery, buy_spot, reject_load: bushels to tonnes at 0.0254 t, the contract's
balance counting what was already delivered, its delivery window, the rest bought at the day's spot bid). The Northern
Deposit Protection Scheme's adjudicator (get_tenancy, search_documents: the tenancy agreement, addenda that replace its
clauses, check-in and check-out reports; run_sql over a DuckDB claims table; record_decision) awards each claimed item
by fair wear (claimed x (1 - age / useful life)), refuses a defect the check-in report already noted, evidence dated
outside the tenancy (or more than 14 days after it), a clause an addendum replaced, and caps the total by the deposit
held. Each recorder in a process of its own:

- `genai-dive` (charter desk): a google-genai generate_content loop with function declarations over several diver
  turns (kit.genai_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-grain` (intake team): Microsoft Agent Framework, three `Agent`s (grader, tester, contract officer) run one after
  the other by the app, each handed the earlier note, under `agentotel.instrument()` (its telemetry on);
- `pai-deposit` (adjudicator): a pydantic-ai Agent on an openai chat model (kit.pydantic_chat), under agentotel;
- `tl-deposit` (adjudicator): a plain openai SDK chat loop (kit.chat_app) under OpenLLMetry's openai instrumentation,
  the tools traceloop tool spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (nitrox booked without its certificate, a weather exception the diver's words do
not give, a real weather cancellation refunded by the fee table, a junior aged by birth year, late evidence relied on,
a defect noted at check-in charged), MAST (Cemri et al. 2025: FM-2.2 failing to ask for clarification, FM-1.4 context
lost at a handover, FM-1.3 step repetition, FM-2.6 reasoning-action mismatch, FM-3.1 premature termination, FM-2.4
withholding information, FM-1.1 disobeying the task spec: a replaced clause applied), TRAIL (a depth unit conversion
skipped, a moisture discount from the wrong table row, a contract's delivered plus this load over its quantity, a
bushel converted at wheat's weight, a delivery outside the contract's window, fair wear by the wrong formula, a total
over the deposit, a timeout and a rate limit answered with invented values) and outside the model (instructions
rewritten without a rule, an old model configured, a stale document index, a document schema changed, APIs answering
another ticket / case). Good twins: a depth converted (29 m = 95.1 ft) and a shallower site offered, nitrox refused for
air, the 50% fee charged, a weather cancellation refunded in full, a junior refused by her age on the day and a site
she may dive offered, an expired medical asked and recorded, a refresher added, a timeout and a 429 tried once more,
a contaminated load rejected, a load split between the contract's balance and the spot bid, a late load bought at spot,
a claim capped at the deposit and the landlord told, refused items told with their reasons. Ground truth is located on
the recorded faulty run by what its steps did (heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, cd1fda5c280bb9609492c916182eadf8737df4c9, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load
average 6.6 at the start, 7.4 at the end, other helpers running; recording /tmp/h41-rec-44ukzt3q): 30 pairs, 4
recorders (google-genai generate_content over several diver turns, Agent Framework with three agents, pydantic-ai,
OpenLLMetry through the collector) - diff top-1 30/30, check step+layer 15/30, good runs with a warning 8/30. Five of
check's 15 hits are coincidental, the same finding firing on the good twin at the same write: missing_evidence for
record_medical before every book_trip / cancel_booking (the rule 'If it expires before, ask ... and record the answers
with record_medical before you book' read without its condition: depth_unconverted, nitrox_without_cert,
weather_exception_claimed, weather_refund_denied, junior_age_by_year) - 10/30 hit for the fault's own reason (an old
model x2, a timeout answered with an invented trip id, a rate limit answered with invented awards, the handover losing
the ticket, another ticket's sample, a stale document index, a case left undecided, a rewritten prompt, a repeated
decision). The misses are rules comparing a record's field with a rule, a table row or another record (a moisture row,
an aflatoxin limit against the words beside the write, a contract balance of quantity minus delivered, a bushel factor,
a delivery window, an addendum superseding a clause, an evidence date past the tenancy's end plus 14 days, a fair-wear
formula, a cap by the deposit held, a defect the check-in report notes), a tool answering another case, a result's
shape changed (diff saw it, check did not), refused claims left untold; a rewritten desk prompt found (instructions_
changed@1) but ranked below the unconditional record_medical reading, and a medical never re-asked found at the booking
(@7), not at the turn that should have asked (@4). All 8 warned good runs are the charter desk's: that record_medical
reading on every booking or cancellation, twice with wrong_target (a refused site's alternative offered and booked, the
request naming the other site).
Session 30 (after the blind score, main's final code of that session): check step+layer 12/30, good runs warned 0/30 -
the five coincidental hits are listed missed (the conditional 'If it expires before' rule is read as conditional now),
the grain desk's 'I am rejecting' beside decision 'accepted' and the rewritten prompt now found.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
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
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.0-pro-002"
DIVE, GRAIN, DEPOSIT = "saltwater-reef-desk", "prairie-gold-intake", "ndps-deposit-adjudicator"


class Now(kit.World):
    """The world of the run being recorded."""

    diver = "D-3301"  # the diver number the person gives (set with the run's request)


# What every rule set here asks after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _ok(t: Talk, tool: str) -> list[Any]:
    return kit.succeeded(t, tool)


# ---- the dive charter desk -------------------------------------------------------------------------------------------

FT_PER_M = 3.2808
TODAY = dt.datetime(2026, 12, 7, 10, 0)
DIVE_DAY = "2026-12-09"
# certification -> maximum depth in feet (juniors: by age on the dive day)
_LIMITS = [("Junior Open Water, aged 10-11", 40), ("Junior Open Water, aged 12-14", 70), ("Open Water", 60),
           ("Advanced Open Water", 100), ("Deep Diver", 130)]
REFRESHER_USD = 45.0


def dive_instructions() -> str:
    limits = "\n".join(f"| {level} | {ft} ft |" for level, ft in _LIMITS)
    refresher = ("" if Now.fault == "dive_prompt_rewritten" else
                 f"- A diver whose last logged dive is more than 365 days before the dive day must take a refresher "
                 f"(${REFRESHER_USD:.0f}, in the water before the first dive): book with refresher true and say so.\n")
    return (
        "You are the booking desk assistant for Saltwater Reef Charters, Key Largo. It is Monday 7 December 2026, "
        "10:00.\nAsk for the diver number (D- and four digits) and read the record with find_diver before anything "
        "else.\n\n"
        "Depth limits by certification (a diver may only join a trip whose site maximum depth is within their limit):\n"
        "| Certification | Maximum depth |\n|---|---|\n" + limits + "\n\n"
        "The trip schedule (get_trips) gives site depths in metres; convert to feet (1 m = 3.2808 ft) before you "
        "compare. Junior divers' limit depends on their age on the dive day, not today.\n\n"
        "Booking rules:\n"
        "- Each trip has a min_age: the diver must have reached it on the dive day.\n"
        "- Nitrox (enriched air) is only ever filled for a diver holding an Enriched Air Nitrox certificate; anyone "
        "else dives on air.\n"
        "- The medical questionnaire on file must be valid on the dive day. If it expires before, ask the diver the "
        "questionnaire's questions and record the answers with record_medical before you book.\n"
        + refresher +
        "- If the trip asked for breaks a rule, say why and offer a trip that fits instead.\n\n"
        "Cancellations by the diver are refunded by the time left before departure: 72 hours or more - 100%; 24 to 72 "
        "hours - 50%; under 24 hours - nothing. If the captain cancelled the trip for weather (trip_status "
        "cancelled_weather), the refund is always 100%. A diver's own plans changing is never weather.\n\n"
        "Confirm the trip or cancellation and its price or refund with the diver before book_trip or cancel_booking. "
        "If a tool fails, try it once more; never make up a trip or price a tool did not give you.")


def dive_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_dive" else GEMINI


_DIVERS = {  # name, level, certificates, date of birth, last logged dive, medical expires
    "D-3301": ("Maya Ortiz", "Open Water", ["Open Water"], "1990-04-11", "2026-10-02", "2027-05-01"),
    "D-3318": ("Ben Carter", "Advanced Open Water", ["Open Water", "Advanced Open Water", "Enriched Air Nitrox"],
               "1983-08-30", "2026-11-14", "2027-02-10"),
    "D-3342": ("Sofia Reyes", "Advanced Open Water", ["Open Water", "Advanced Open Water"], "1996-01-22",
               "2026-09-20", "2027-06-30"),
    "D-3356": ("Tom Hale", "Open Water", ["Open Water"], "1979-05-05", "2025-09-28", "2027-01-31"),
    "D-3360": ("Lily Hale", "Junior Open Water", ["Junior Open Water"], "2014-12-20", "2026-08-10", "2027-08-01"),
    "D-3371": ("Ana Silva", "Open Water", ["Open Water"], "1988-11-03", "2026-10-18", "2026-11-30"),
}


def find_diver(diver_number: str) -> dict[str, Any]:
    """A diver's record: certification level and certificates, date of birth, last logged dive, medical on file."""
    got = _DIVERS.get(diver_number)
    if not got:
        return {"diver": None}
    name, level, certs, dob, last, medical = got
    return {"diver": {"diver_number": diver_number, "name": name, "date_of_birth": dob,
                      "certification": {"level": level, "agency": "PADI", "certificates": certs},
                      "logbook": {"last_dive": last, "dives_logged": 14 if level.startswith("Junior") else 62},
                      "medical": {"form": "RSTC diver medical", "signed": "2025-11-30" if medical < "2027" else "2026-05-01",
                                  "expires": medical}, "emergency_contact": {"name": "on file", "phone": "+1 305 555 0"
                                                                            + diver_number[-3:]}}}


_TRIPS = [("T-1209-A", "Molasses Reef", 10.0, 10, 95.0, "08:00"), ("T-1209-B", "Benwood wreck", 15.0, 12, 110.0, "08:00"),
          ("T-1209-C", "Spiegel Grove wreck", 29.0, 15, 140.0, "13:00")]


def get_trips(date: str) -> dict[str, Any]:
    """The charter's trips on a date: site, site maximum depth in metres, minimum age, price, nitrox fills."""
    if Now.pair == "trips_timeout_invented" and Now.count("get_trips") == 1:
        raise TimeoutError("schedule service did not answer within 10 s")
    return {"date": date, "boat": "MV Reef Runner", "trips": [
        {"trip_id": tid, "site": site, "site_max_depth_m": depth, "min_age": age, "price_usd": price,
         "departs": f"{date}T{at}", "nitrox_available": True, "spaces_left": 4} for tid, site, depth, age, price, at
        in _TRIPS]}


def record_medical(diver_number: str, answers: str, signed_on: str) -> dict[str, Any]:
    """Records a new medical questionnaire the diver answered (answers: what they said to each question)."""
    return {"diver_number": diver_number, "form_id": f"MED-{diver_number[-4:]}-27", "status": "valid",
            "expires": "2027-12-07"}


def book_trip(diver_number: str, trip_id: str, gas: str, refresher: bool, price_usd: float) -> dict[str, Any]:
    """Books a diver on a trip (gas: air or nitrox; refresher: a refresher session before the first dive)."""
    return {"booking_id": f"BK-{7800 + Now.count('book_trip')}", "status": "confirmed", "trip_id": trip_id,
            "gas": gas, "refresher": refresher, "price_usd": price_usd}


def get_bookings(diver_number: str) -> dict[str, Any]:
    """A diver's upcoming bookings, with each trip's departure and status."""
    status = "cancelled_weather" if Now.pair == "weather_refund_denied" else "go"
    return {"diver_number": diver_number, "bookings": [
        {"booking_id": "BK-7710", "trip_id": "T-1208-C", "site": "Spiegel Grove wreck", "departs": "2026-12-08T16:00",
         "price_paid_usd": 140.0, "trip_status": status,
         "captain_note": "small-craft advisory, NE 25 kt" if status != "go" else None}]}


def cancel_booking(booking_id: str, refund_usd: float, reason: str) -> dict[str, Any]:
    """Cancels a booking and refunds the amount to the card it was paid with."""
    return {"booking_id": booking_id, "status": "cancelled", "refund_usd": refund_usd, "refund_ref": "RF-22091"}


DIVE_TOOLS = {f.__name__: f for f in (find_diver, get_trips, record_medical, book_trip, get_bookings, cancel_booking)}

_DIVE_ASK = {
    "depth_unconverted": ("D-3301", "Hi! I'd like to dive the Spiegel Grove wreck on Wednesday."),
    "nitrox_without_cert": ("D-3342", "Hello, please book me on the Spiegel Grove wreck on Wednesday, on nitrox."),
    "weather_exception_claimed": ("D-3318", "I need to cancel tomorrow afternoon's trip - my flight home got moved "
                                            "up a day."),
    "weather_refund_denied": ("D-3318", "I got a text that tomorrow afternoon's trip is off because of the wind - "
                                        "please cancel it and refund me."),
    "junior_age_by_year": ("D-3360", "Hi, I'd like to book my daughter Lily on the Benwood wreck on Wednesday."),
    "medical_unasked": ("D-3371", "Hello - can you book me on Molasses Reef on Wednesday?"),
    "old_model_dive": ("D-3301", "Hi, can you book me on Molasses Reef on Wednesday?"),
    "dive_prompt_rewritten": ("D-3356", "Hi there, I'd like the Benwood wreck on Wednesday please."),
    "trips_timeout_invented": ("D-3301", "Hi! Can I get on the Benwood wreck trip on Wednesday?"),
}
_DIVE_HISTORY = [("D-3318", "Hi, book me on the Spiegel Grove wreck on Wednesday, on nitrox please."),
                 ("D-3301", "Hello, is there room on Molasses Reef on Wednesday? I'd like to book.")]


def diver_replies(said: str) -> str | None:
    script = [("diver number", f"Sure, it's {Now.diver}."), ("questionnaire's questions", "No to all of them."),
              ("on air", "Air is fine then."), ("instead", "Yes, that one instead please."),
              ("Shall I", "Yes, please go ahead."), ("anything else", "No, that's everything - thanks!")]
    return Now.reply(script, said)


def _age(dob: str, on: str) -> int:
    b, d = dt.date.fromisoformat(dob), dt.date.fromisoformat(on)
    return d.year - b.year - ((d.month, d.day) < (b.month, b.day))


def _limit_ft(diver: dict[str, Any], age: int) -> int:
    level = diver["certification"]["level"]
    if level.startswith("Junior"):
        return 40 if age < 12 else 70
    return dict(_LIMITS)[level]


_ANYTHING = " Is there anything else I can help with?"


def _dive(t: Talk, old: bool) -> dict[str, Any]:
    said, first = " ".join(t.users), t.users[0]
    if "that's everything" in said:
        return reply("You're welcome - see you on the boat!")
    if old:  # (the old model books what it imagines, reading nothing and confirming nothing)
        return call("book_trip", "Booking you on Molasses Reef now.", diver_number=Now.diver, trip_id="T-MOLASSES-AM",
                    gas="air", refresher=False, price_usd=89.0) if not t.got("book_trip") else reply(
            "You're booked on Molasses Reef." + _ANYTHING)
    found = re.search(r"\bD-\d{4}\b", said)
    if not found:
        return reply("Happy to help! Could I have your diver number, please? It starts D- and has four digits.")
    step = t.need(("find_diver", {"diver_number": found.group(0)}))
    if step:
        return step
    diver = t.value("find_diver")["diver"]
    if "cancel" in first:
        return _dive_cancel(t, diver)
    return _dive_book(t, diver)


def _dive_cancel(t: Talk, diver: dict[str, Any]) -> dict[str, Any]:
    said, first, fault = " ".join(t.users), t.users[0], Now.fault
    done = t.value("cancel_booking")
    if done:
        return reply(f"Cancelled ({done['refund_ref']}): ${done['refund_usd']:.2f} back to your card." + _ANYTHING)
    step = t.need(("get_bookings", {"diver_number": diver["diver_number"]}))
    if step:
        return step
    b = t.value("get_bookings")["bookings"][0]
    hours = (dt.datetime.fromisoformat(b["departs"]) - TODAY).total_seconds() / 3600
    weather = b["trip_status"] == "cancelled_weather" or fault == "weather_exception_claimed"
    if fault == "weather_refund_denied":  # (the fault: the captain's weather call unread, the fee table applied)
        weather = False
    share = 1.0 if weather or hours >= 72 else 0.5 if hours >= 24 else 0.0
    refund = round(b["price_paid_usd"] * share, 2)
    if "go ahead" not in said:
        why = ("As the trip is off for weather, you get a full refund" if weather else
               f"Departure is {hours:.0f} hours away, so the refund is {share:.0%} of ${b['price_paid_usd']:.2f}")
        return reply(f"Your {b['site']} trip ({b['booking_id']}) departs {b['departs'].replace('T', ' at ')}. {why}: "
                     f"${refund:.2f}. Shall I cancel it?")
    return call("cancel_booking", booking_id=b["booking_id"], refund_usd=refund, reason=first[:80])


def _dive_book(t: Talk, diver: dict[str, Any]) -> dict[str, Any]:
    said, first, fault = " ".join(t.users), t.users[0], Now.fault
    booked = t.value("book_trip")
    if booked:
        return reply(f"You're booked: {booked['booking_id']} on trip {booked['trip_id']} ({booked['gas']}"
                     f"{', refresher first' if booked['refresher'] else ''}), ${booked['price_usd']:.2f}." + _ANYTHING)
    dn = diver["diver_number"]
    medical_ok = diver["medical"]["expires"] >= DIVE_DAY
    if not medical_ok and fault != "medical_unasked":
        if "No to all" not in said:
            return reply(f"Your medical questionnaire on file expired on {diver['medical']['expires']}, before "
                         "Wednesday's dive. I need to ask you the questionnaire's questions: in the last year, have you "
                         "had any lung, heart or ear problems, surgery, or taken medication that affects diving? Please "
                         "answer yes or no.")
        step = t.need(("record_medical", {"diver_number": dn, "answers": "no to all questions",
                                          "signed_on": "2026-12-07"}))
        if step:
            return step
    tried = t.got("get_trips")
    trips = _ok(t, "get_trips")
    if not trips:
        if tried and fault == "trips_timeout_invented":  # (the fault: a trip booked from nothing the schedule said)
            return call("book_trip", "The schedule timed out; the Benwood usually goes at 08:00 for $110, so I'll book "
                        "that.", diver_number=dn, trip_id="T-1209-BENWOOD", gas="air", refresher=False, price_usd=110.0)
        return _once_more("get_trips", tried, "I'm sorry - our schedule isn't answering, so I can't book anything "
                          "right now. Please try again shortly.", date=DIVE_DAY)
    schedule = trips[-1]["trips"]
    age = _age(diver["date_of_birth"], DIVE_DAY)
    if fault == "junior_age_by_year":  # (the fault: aged by birth year, not by the dive day)
        age = int(DIVE_DAY[:4]) - int(diver["date_of_birth"][:4])
    limit = _limit_ft(diver, age)
    nitrox_cert = "Enriched Air Nitrox" in diver["certification"]["certificates"]

    def depth_ft(trip: dict[str, Any]) -> float:
        m = trip["site_max_depth_m"]
        return m if fault == "depth_unconverted" else round(m * FT_PER_M, 1)  # (the fault: metres read as feet)

    def fits(trip: dict[str, Any]) -> list[str]:
        why = []
        if depth_ft(trip) > limit:
            why.append(f"its {trip['site_max_depth_m']:.0f} m ({trip['site_max_depth_m'] * FT_PER_M:.1f} ft) is "
                       f"deeper than your {limit} ft limit")
        if age < trip["min_age"]:
            why.append(f"the minimum age is {trip['min_age']} and {diver['name'].split()[0]} will be {age} on the day")
        return why

    wanted = next((x for x in schedule if x["site"].split()[0] in first), schedule[0])
    problems = fits(wanted)
    trip = wanted
    if problems:
        trip = next(x for x in sorted(schedule, key=lambda x: -x["site_max_depth_m"]) if not fits(x))
        if "instead" not in said:
            return reply(f"I can't book {wanted['site']}: {' and '.join(problems)}. I can offer {trip['site']} "
                         f"({trip['site_max_depth_m']:.0f} m = {trip['site_max_depth_m'] * FT_PER_M:.1f} ft, "
                         f"${trip['price_usd']:.2f}) instead - would you like that?")
    gas = "air"
    if "nitrox" in first:
        if nitrox_cert or fault == "nitrox_without_cert":
            gas = "nitrox"
        elif "Air is fine" not in said:
            return reply("Nitrox fills are only for divers with an Enriched Air Nitrox certificate, and I don't see "
                         "one on your record. Would you like to dive on air?")
    last = dt.date.fromisoformat(diver["logbook"]["last_dive"])
    refresher = ((dt.date.fromisoformat(DIVE_DAY) - last).days > 365 and "more than 365 days" in t.system)
    price = trip["price_usd"] + (REFRESHER_USD if refresher else 0.0)
    if "go ahead" not in said:
        extra = (f" Your last logged dive was {diver['logbook']['last_dive']}, more than a year before the dive, so a "
                 f"${REFRESHER_USD:.0f} refresher comes first." if refresher else "")
        return reply(f"That's {trip['site']} on Wednesday {trip['departs'][11:]} ({trip['site_max_depth_m']:.0f} m), "
                     f"breathing {gas}, ${price:.2f}.{extra} Shall I book it?")
    return call("book_trip", diver_number=dn, trip_id=trip["trip_id"], gas=gas, refresher=refresher, price_usd=price)


# ---- the grain elevator's intake team --------------------------------------------------------------------------------

LB_PER_BU, T_PER_BU, WHEAT_T_PER_BU, SPOT_BID = 56, 0.0254, 0.0272, 4.05
# (moisture up to %, discount $/bu); over the last row: rejected
_MOISTURE = [(15.5, 0.00), (17.0, 0.06), (19.0, 0.14), (21.0, 0.25)]

GRADER_RULES = (
    "You are the truck grader at Prairie Gold Co-op's Hastings elevator. Read the scale ticket with get_truck_ticket. "
    "Net weight is gross minus tare in pounds; yellow corn is bought by the 56-lb bushel, so bushels = net lb / 56 "
    "(two decimals). Record it once with record_grade, then write a note for the quality tester beginning 'Intake "
    "ticket' with the ticket id, grower, contract id, net pounds and bushels.")
TESTER_RULES = "\n".join([
    "You are the quality tester at Prairie Gold Co-op. From the grader's note, read the probe sample with "
    "get_sample_results for that ticket and record one result with record_quality.",
    "Moisture discounts (per bushel, on the whole load):",
    "| Moisture | Discount |", "|---|---|",
    *(f"| {lo} - {hi}% | ${d:.2f}/bu |" for lo, (hi, d) in zip(["0.0", "15.6", "17.1", "19.1"], _MOISTURE)),
    "| over 21.0% | reject |",
    "Aflatoxin: any load testing over 20 ppb must be rejected, whatever its moisture. Never accept a rejected load.",
    "Write a note for the contract officer beginning 'Quality' with the ticket id, accepted or rejected, moisture, the "
    "discount per bushel, the bushels and the contract id.",
])
OFFICER_RULES = "\n".join([
    "You are the contract officer at Prairie Gold Co-op. Today is Monday 7 December 2026. From the tester's note:",
    "1. A rejected load goes to reject_load with the reason; nothing is paid.",
    "2. Otherwise read the contract with get_contract. Contracts are in metric tonnes: 1 bushel of corn = 0.0254 t.",
    "3. Only a load that arrives inside the contract's delivery window counts against it. What is left on a contract "
    "is quantity_t minus delivered_t; never apply more than that.",
    "4. apply_delivery the bushels that fit, at the contract price minus the moisture discount; anything outside the "
    "window or over the balance is bought with buy_spot at today's spot bid of $4.05/bu minus the same discount.",
    "Finish with what was applied, what was bought at spot, and the amounts.",
])


def _ticket() -> dict[str, Any]:
    return {"ticket_id": "TK-88213", "grower": {"id": "G-1407", "name": "Kessler Family Farms"}, "contract_id": "CT-2611",
            "commodity": "yellow corn", "truck": {"plate": "NE 4-A1187", "driver": "R. Kessler"},
            "scale": {"gross_lb": 79800, "tare_lb": 30520, "scale_id": "S-2"}, "arrived": "2026-12-07T08:40"}


def get_truck_ticket(ticket_id: str) -> dict[str, Any]:
    """A truck's scale ticket: grower, contract, commodity, gross and tare in pounds, arrival time."""
    return {"ticket": _ticket()}


def record_grade(ticket_id: str, net_lb: int, bushels: float, grade: str) -> dict[str, Any]:
    """Records the graded net weight of a load."""
    return {"ticket_id": ticket_id, "status": "graded", "net_lb": net_lb, "bushels": bushels, "grade": grade}


def get_sample_results(ticket_id: str) -> dict[str, Any]:
    """The probe sample of a load: moisture %, test weight, aflatoxin ppb, foreign material %."""
    if Now.fault == "sample_wrong_ticket":  # (the fault: the lab system answers the next truck's sample)
        return {"ticket_id": "TK-88231", "probe_id": "PR-55190", "moisture_pct": 14.1, "test_weight_lb_bu": 57.2,
                "aflatoxin_ppb": 3, "foreign_material_pct": 1.1, "tested_at": "2026-12-07T08:58"}
    moisture = 17.4 if Now.pair in ("moisture_row_wrong", "sample_wrong_ticket") else 15.2
    toxin = 26 if Now.pair == "reasoning_action_mismatch" else 6
    return {"ticket_id": ticket_id, "probe_id": "PR-55187", "moisture_pct": moisture, "test_weight_lb_bu": 56.4,
            "aflatoxin_ppb": toxin, "foreign_material_pct": 1.6, "tested_at": "2026-12-07T08:52"}


def record_quality(ticket_id: str, moisture_pct: float, discount_per_bu: float, decision: str,
                   reasons: str) -> dict[str, Any]:
    """Records a load's quality result (decision: accepted or rejected)."""
    return {"ticket_id": ticket_id, "quality_id": f"Q-{40210 + Now.count('record_quality')}", "decision": decision}


def get_contract(contract_id: str) -> dict[str, Any]:
    """A grower's forward contract: quantity and delivered so far in tonnes, delivery window, price per bushel."""
    delivered = 490.0 if Now.pair == "contract_over_quantity" else 310.0
    window = ("2026-09-15", "2026-11-30") if Now.pair == "window_outside" else ("2026-11-15", "2026-12-31")
    return {"contract": {"contract_id": contract_id, "grower_id": "G-1407", "commodity": "yellow corn",
                         "quantity_t": 500.0, "delivered_t": delivered, "price_per_bu": 4.42,
                         "delivery_window": {"from": window[0], "to": window[1]}, "status": "open"}}


def apply_delivery(contract_id: str, ticket_id: str, bushels: float, tonnes: float, price_per_bu: float,
                   discount_per_bu: float, amount_usd: float) -> dict[str, Any]:
    """Applies bushels of a load against a contract and schedules the payment."""
    return {"settlement_id": f"ST-{61700 + Now.count('apply_delivery')}", "contract_id": contract_id,
            "tonnes": tonnes, "amount_usd": amount_usd, "status": "scheduled"}


def buy_spot(ticket_id: str, bushels: float, price_per_bu: float, discount_per_bu: float,
             amount_usd: float) -> dict[str, Any]:
    """Buys bushels of a load at the spot bid."""
    return {"spot_id": "SP-30928", "bushels": bushels, "amount_usd": amount_usd, "status": "scheduled"}


def reject_load(ticket_id: str, reason: str) -> dict[str, Any]:
    """Rejects a load: the truck is turned away unpaid."""
    return {"ticket_id": ticket_id, "status": "rejected", "rejection_id": "RJ-1182"}


GRADER_TOOLS = {f.__name__: f for f in (get_truck_ticket, record_grade)}
TESTER_TOOLS = {f.__name__: f for f in (get_sample_results, record_quality)}
OFFICER_TOOLS = {f.__name__: f for f in (get_contract, apply_delivery, buy_spot, reject_load)}


def _grader(t: Talk) -> dict[str, Any]:
    found = re.search(r"\bTK-\d{5}\b", t.users[0])
    if not found:
        return reply("Which scale ticket should I grade?")
    step = t.need(("get_truck_ticket", {"ticket_id": found.group(0)}))
    if step:
        return step
    k = t.value("get_truck_ticket")["ticket"]
    net = k["scale"]["gross_lb"] - k["scale"]["tare_lb"]
    bushels = round(net / LB_PER_BU, 2)
    if not _ok(t, "record_grade"):
        return call("record_grade", ticket_id=k["ticket_id"], net_lb=net, bushels=bushels, grade="US No. 2 yellow")
    return reply(f"Intake ticket {k['ticket_id']}: grower {k['grower']['id']} ({k['grower']['name']}), contract "
                 f"{k['contract_id']}, net {net} lb = {bushels} bu of yellow corn, arrived {k['arrived']}.")


def _tester(t: Talk) -> dict[str, Any]:
    note, fault = t.users[0], Now.fault
    found = re.search(r"\bTK-\d{5}\b", note)
    bushels = re.search(r"= ([\d.]+) bu", note)
    contract = re.search(r"\bCT-\d{4}\b", note)
    if not found or not bushels or not contract:
        return reply("I haven't been given a ticket - which load should I test? Nothing recorded.")
    step = t.need(("get_sample_results", {"ticket_id": found.group(0)}))
    if step:
        return step
    s = t.value("get_sample_results")
    m = s["moisture_pct"]
    row = next((r for r in _MOISTURE if m <= r[0]), None)
    if fault == "moisture_row_wrong":
        row = _MOISTURE[1]  # (the fault: 17.4% read on the 15.6-17.0 row)
    reasons = []
    if row is None:
        reasons.append(f"moisture {m}% over 21.0%")
    if s["aflatoxin_ppb"] > 20:
        reasons.append(f"aflatoxin {s['aflatoxin_ppb']} ppb over the 20 ppb limit")
    decision = "rejected" if reasons else "accepted"
    discount = 0.0 if row is None else row[1]
    acted = "accepted" if fault == "reasoning_action_mismatch" else decision  # (the fault: says reject, records accept)
    told = (f"Sample {s['probe_id']}: moisture {m}%, aflatoxin {s['aflatoxin_ppb']} ppb. I am "
            f"{'rejecting' if decision == 'rejected' else 'accepting'} this load.")
    done = _ok(t, "record_quality")
    if not done:
        return call("record_quality", told, ticket_id=found.group(0), moisture_pct=m, discount_per_bu=discount,
                    decision=acted, reasons="; ".join(reasons) or f"moisture {m}%: ${discount:.2f}/bu discount")
    return reply(f"Quality {found.group(0)}: {acted}, moisture {m}%, discount ${discount:.2f}/bu, {bushels.group(1)} bu, "
                 f"contract {contract.group(0)}. Reasons: {'; '.join(reasons) or 'within limits'}.")


def _officer(t: Talk) -> dict[str, Any]:
    note, fault = t.users[0], Now.fault
    note = note[note.find("Quality"):] if "Quality" in note else ""
    found = re.search(r"\bTK-\d{5}\b", note)
    if not found:
        return reply("I have no quality result to act on, so nothing has been applied or paid.")
    ticket = found.group(0)
    if ": rejected" in note:
        done = _ok(t, "reject_load")
        if not done:
            return call("reject_load", ticket_id=ticket, reason=note.split("Reasons:", 1)[-1].strip())
        return reply(f"Load {ticket} rejected ({done[-1]['rejection_id']}); nothing paid.")
    bushels = float(re.search(r"([\d.]+) bu,", note).group(1))
    discount = float(re.search(r"discount \$([\d.]+)/bu", note).group(1))
    contract_id = re.search(r"\bCT-\d{4}\b", note).group(0)
    step = t.need(("get_contract", {"contract_id": contract_id}))
    if step:
        return step
    c = t.value("get_contract")["contract"]
    factor = WHEAT_T_PER_BU if fault == "bushel_factor_wrong" else T_PER_BU  # (the fault: wheat's 60-lb bushel)
    inside = c["delivery_window"]["from"] <= "2026-12-07" <= c["delivery_window"]["to"] or fault == "window_outside"
    left_t = round(c["quantity_t"] - c["delivered_t"], 3)
    fit = bushels if fault == "contract_over_quantity" else min(bushels, round(left_t / factor, 2))
    on_contract = fit if inside else 0.0
    spot = round(bushels - on_contract, 2)
    price = round(c["price_per_bu"] - discount, 2)
    applied, bought = _ok(t, "apply_delivery"), _ok(t, "buy_spot")
    if on_contract > 0 and not applied:
        return call("apply_delivery", ticket_id=ticket, contract_id=contract_id, bushels=on_contract,
                    tonnes=round(on_contract * factor, 3), price_per_bu=c["price_per_bu"], discount_per_bu=discount,
                    amount_usd=round(on_contract * price, 2))
    spot_price = round(SPOT_BID - discount, 2)
    if spot > 0 and not bought:
        return call("buy_spot", ticket_id=ticket, bushels=spot, price_per_bu=SPOT_BID, discount_per_bu=discount,
                    amount_usd=round(spot * spot_price, 2))
    parts = []
    if applied:
        a = applied[-1]
        parts.append(f"{on_contract} bu ({a['tonnes']} t) applied to {contract_id} at ${price:.2f}/bu = "
                     f"${a['amount_usd']:.2f} ({a['settlement_id']})")
    if bought:
        why = "outside the contract's delivery window" if not inside else "over the contract's balance"
        parts.append(f"{spot} bu bought at spot, ${spot_price:.2f}/bu = ${bought[-1]['amount_usd']:.2f} ({why})")
    return reply(f"Ticket {ticket}: " + "; ".join(parts) + ".")


# ---- the deposit dispute adjudicator ---------------------------------------------------------------------------------

EVIDENCE_DAYS = 14
_EVIDENCE = ("4. Evidence (photographs, invoices, reports) counts only if it is dated within the tenancy or at most "
             f"{EVIDENCE_DAYS} days after it ended; never rely on anything dated before the tenancy began or later "
             "than that.\n")


def deposit_instructions() -> str:
    return (
        "You are an adjudicator for the Northern Deposit Protection Scheme. Decide each dispute case you are given "
        "from the evidence alone.\n"
        "1. Read the tenancy with get_tenancy, the documents with search_documents (the tenancy agreement, any "
        "addenda, the check-in and check-out reports) and the landlord's claims with run_sql - a read-only SELECT "
        "over claims(case_id, claim_id, item, category, claimed_gbp, item_age_years, useful_life_years, evidence_date, "
        "checkin_note, checkout_note).\n"
        "2. An addendum replaces the clauses it names: when a later document supersedes an earlier clause, only the "
        "later wording applies.\n"
        "3. A tenant is never charged for a defect the check-in report already records.\n"
        + ("" if Now.fault == "deposit_prompt_rewritten" else _EVIDENCE) +
        "5. Fair wear and tear: for an item with a useful life, award claimed_gbp x (1 - item_age_years / "
        "useful_life_years), and nothing once the item is past its useful life. Items without a useful life (cleaning, "
        "keys) are awarded at cost only if the agreement that applies provides for them.\n"
        "6. The total awarded to the landlord can never exceed the deposit held; say so if the claims come to more "
        "(the rest is a matter for the courts).\n"
        "7. Record one decision per case with record_decision (awards by claim_id, to_landlord, to_tenant = deposit "
        "minus to_landlord), then tell both parties every claim's outcome - including each refused one and why.\n"
        "If a tool fails, try it once more; never decide on figures a tool did not return.")


def deposit_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_deposit" else MODEL


_CASES = {  # tenancy start, end, deposit, property, tenant, landlord
    "DC-5102": ("2024-10-01", "2026-09-30", 1200.0, "Flat 2, 14 Albion Road, Leeds LS6 1AB", "Joel Pryce",
                "Harrow Lettings Ltd"),
    "DC-5117": ("2025-02-01", "2026-10-31", 900.0, "7 Mill Lane, Otley LS21 3DE", "Asha Begum", "P. Whitcombe"),
    "DC-5120": ("2025-01-10", "2026-11-15", 950.0, "Flat 9, Carlton Court, Leeds LS7 2QP", "Dan Moore",
                "Carlton Court Mgmt"),
}


def get_tenancy(case_id: str) -> dict[str, Any]:
    """A dispute case's tenancy: parties, property, start and end dates, the deposit held."""
    if Now.fault == "tenancy_wrong_case":  # (the fault: the case API answers the neighbouring case)
        case_id = "DC-5120"
    got = _CASES.get(case_id)
    if not got:
        return {"case": None}
    start, end, deposit, prop, tenant, landlord = got
    if Now.pair == "cap_exceeded" and case_id == "DC-5102":
        deposit = 400.0
    return {"case": {"case_id": case_id, "property": prop, "tenant": tenant, "landlord": landlord,
                     "tenancy": {"start": start, "end": end}, "deposit_held_gbp": deposit, "scheme_ref": "NDPS-"
                     + case_id[3:], "status": "awaiting adjudication"}}


def _documents(case_id: str) -> list[dict[str, Any]]:
    if case_id == "DC-5117":
        return [{"doc_id": "AG-5117", "type": "tenancy agreement", "date": "2025-01-20", "supersedes": None,
                 "text": "Clause 12: the tenant returns all keys and fobs; lost ones are replaced at the tenant's cost."},
                {"doc_id": "CO-5117", "type": "check-out report", "date": "2026-10-31", "supersedes": None,
                 "text": "Front door fob not returned."}]
    return [
        {"doc_id": "AG-5102", "type": "tenancy agreement", "date": "2024-09-20", "supersedes": None,
         "text": "Clause 14: at the end of the tenancy the property is professionally cleaned at the tenant's cost. "
                 "Clause 15: the tenant keeps the garden tidy."},
        {"doc_id": "AD-5102-1", "type": "addendum", "date": "2026-08-20", "supersedes": "AG-5102 clause 14",
         "text": "Clause 14 is replaced: the tenant returns the property as clean as it was at check-in; no "
                 "professional-cleaning charge may be made."},
        {"doc_id": "CI-5102", "type": "check-in report", "date": "2024-10-01", "supersedes": None,
         "text": "Hallway carpet: light stain by the front door. Lounge carpet: good. Blinds: worn, 2 slats bent."},
        {"doc_id": "CO-5102", "type": "check-out report", "date": "2026-09-30", "supersedes": None,
         "text": "Lounge carpet: burn mark 6 cm. Bedroom walls: marked, need repainting. Hallway carpet: stain by the "
                 "door. Oven dirty."},
    ]


def search_documents(query: str) -> dict[str, Any]:
    """Searches a case's documents (agreement, addenda, inventory reports): type, date, which clause a document
    supersedes, text."""
    found = re.search(r"\bDC-\d{4}\b", query)
    case_id = found.group(0) if found else "DC-5102"
    docs = _documents(case_id)
    built = "2026-12-06"
    if Now.fault == "document_index_stale":  # (the fault: the index not rebuilt since before the addendum)
        docs, built = [d for d in docs if d["type"] != "addendum"], "2026-08-01"
    if Now.fault == "docs_schema_drift":  # (the fault: the documents API's new version nests the supersession)
        docs = [{**{k: v for k, v in d.items() if k != "supersedes"}, "relations": {"replaces": d["supersedes"]}}
                for d in docs]
    return {"query": query, "case_id": case_id, "index_built": built, "results": docs}


def _claims() -> list[tuple[Any, ...]]:
    late = Now.pair in ("evidence_outside_tenancy", "deposit_prompt_rewritten")
    return [  # case, claim, item, category, claimed, age, life, evidence date, check-in note, check-out note
        ("DC-5102", "CL-1", "End-of-tenancy professional clean", "cleaning", 240.0, None, None, "2026-09-30", "clean",
         "oven dirty"),
        ("DC-5102", "CL-2", "Lounge carpet - burn mark", "damage", 600.0, 4.0, 10.0,
         "2026-10-22" if late else "2026-10-02", "good", "burn mark 6 cm"),
        ("DC-5102", "CL-3", "Bedroom walls - repaint", "damage", 300.0, 3.0, 5.0, "2026-09-30", "freshly painted",
         "marked"),
        ("DC-5102", "CL-4", "Hallway carpet - stain", "damage", 150.0, 4.0, 10.0, "2026-09-30",
         "light stain by front door", "stain by door"),
        ("DC-5102", "CL-5", "Lounge blinds", "damage", 45.0, 6.0, 5.0, "2026-09-30", "worn, 2 slats bent",
         "slats bent"),
        ("DC-5117", "CL-6", "Replacement door fob", "keys", 60.0, None, None, "2026-10-31", "2 fobs issued",
         "1 fob returned"),
    ]


_CLAIM_COLUMNS = ("case_id", "claim_id", "item", "category", "claimed_gbp", "item_age_years", "useful_life_years",
                  "evidence_date", "checkin_note", "checkout_note")


def run_sql(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL SELECT over the claims table; the rows as objects."""
    import duckdb

    if Now.pair == "sql_rate_limited_invented" and Now.count("run_sql") == 1:
        raise RuntimeError("429 Too Many Requests: claims database rate limit reached, retry after 2 s")
    if not sql.lstrip().lower().startswith("select"):
        raise ValueError("only SELECT statements are allowed")
    con = duckdb.connect()
    types = ["VARCHAR"] * 4 + ["DOUBLE"] * 3 + ["VARCHAR"] * 3
    con.execute("CREATE TABLE claims (" + ", ".join(f"{c} {k}" for c, k in zip(_CLAIM_COLUMNS, types)) + ")")
    con.executemany(f"INSERT INTO claims VALUES ({', '.join('?' * len(_CLAIM_COLUMNS))})", _claims())
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    con.close()
    return {"row_count": len(rows), "rows": rows}


def record_decision(case_id: str, awards: dict[str, float], to_landlord: float, to_tenant: float,
                    reasons: str) -> dict[str, Any]:
    """Records the adjudicator's decision on a case (awards: GBP awarded to the landlord by claim_id)."""
    return {"decision_id": f"ADJ-{case_id[3:]}-{Now.count('record_decision')}", "case_id": case_id,
            "status": "issued", "to_landlord": to_landlord, "to_tenant": to_tenant}


DEPOSIT_TOOLS = {f.__name__: f for f in (get_tenancy, search_documents, run_sql, record_decision)}


def _replaced(docs: list[dict[str, Any]]) -> set[str]:
    """The agreement clauses a later document supersedes, as 'AG-xxxx clause N'."""
    if Now.fault == "addendum_ignored":  # (the fault: the agreement read as written, the addendum not applied)
        return set()
    return {d["supersedes"] for d in docs if d.get("supersedes")}


def _adjudge(case: dict[str, Any], docs: list[dict[str, Any]], rows: list[dict[str, Any]],
             rule_text: str) -> tuple[dict[str, float], list[str], float, float]:
    """Each claim's award and outcome, the total to the landlord and to the tenant."""
    fault = Now.fault
    end = dt.date.fromisoformat(case["tenancy"]["end"])
    start = case["tenancy"]["start"]
    latest = (end + dt.timedelta(days=EVIDENCE_DAYS)).isoformat()
    gone = _replaced(docs)
    agreement = next((d for d in docs if d["type"] == "tenancy agreement"), None)
    awards: dict[str, float] = {}
    told: list[str] = []
    for r in rows:
        cid, item, claimed = r["claim_id"], r["item"], r["claimed_gbp"]
        late = not start <= r["evidence_date"] <= latest
        if late and "days after it ended" in rule_text and fault != "evidence_outside_tenancy":
            awards[cid] = 0.0
            told.append(f"{cid} {item}: refused - its evidence is dated {r['evidence_date']}, more than "
                        f"{EVIDENCE_DAYS} days after the tenancy ended on {case['tenancy']['end']}")
            continue
        noted = r["checkin_note"] and any(w in r["checkin_note"] for w in ("stain", "bent", "worn", "damaged"))
        if noted and r["useful_life_years"] is not None and fault != "checkin_defect_charged" and \
                r["item_age_years"] < r["useful_life_years"]:
            awards[cid] = 0.0
            told.append(f"{cid} {item}: refused - the check-in report already records '{r['checkin_note']}'")
            continue
        if r["useful_life_years"] is None:
            clause = "clause 14" if r["category"] == "cleaning" else "clause 12"
            provided = agreement is not None and clause in agreement["text"].lower() and \
                f"{agreement['doc_id']} {clause}" not in gone
            if r["category"] == "cleaning" and provided:
                awards[cid] = claimed
                told.append(f"{cid} {item}: GBP {claimed:.2f} under {agreement['doc_id']} {clause}")
            elif provided:
                awards[cid] = claimed
                told.append(f"{cid} {item}: GBP {claimed:.2f} at cost ({agreement['doc_id']} {clause})")
            else:
                awards[cid] = 0.0
                told.append(f"{cid} {item}: refused - {clause} was replaced by an addendum; no cleaning charge may be "
                            "made")
            continue
        age, life = r["item_age_years"], r["useful_life_years"]
        worn = fault == "fair_wear_formula"  # (the fault: the worn-out share awarded, not what was left)
        share = age / life if worn else 1 - age / life
        award = round(claimed * max(0.0, share), 2)
        awards[cid] = award
        formula = f"{age:g}/{life:g}" if worn else f"(1 - {age:g}/{life:g})"
        told.append(f"{cid} {item}: GBP {award:.2f} ({claimed:.2f} x {formula})" if award else
                    f"{cid} {item}: refused - past its {life:g}-year useful life (age {age:g})")
    total = round(sum(awards.values()), 2)
    deposit = case["deposit_held_gbp"]
    if total > deposit and fault != "cap_exceeded":
        told.append(f"the awards come to GBP {total:.2f}, more than the GBP {deposit:.2f} deposit held: GBP "
                    f"{deposit:.2f} is awarded and the remaining GBP {total - deposit:.2f} is a matter for the courts")
        total = deposit
    return awards, told, total, round(deposit - total, 2)


def _deposit(t: Talk, old: bool) -> dict[str, Any]:
    ask, fault = t.users[0], Now.fault
    cases = list(dict.fromkeys(re.findall(r"\bDC-\d{4}\b", ask)))
    if fault == "premature_termination":  # (the fault: the second case of the request left undecided)
        cases = cases[:1]
    if old:  # (the old model awards the claims as made, reading nothing but the claims)
        done = _ok(t, "record_decision")
        if not done:
            return call("record_decision", case_id=cases[0], awards={"CL-1": 240.0, "CL-2": 600.0, "CL-3": 300.0},
                        to_landlord=1140.0, to_tenant=60.0, reasons="claims as submitted")
        return reply(f"{cases[0]}: GBP 1140.00 to the landlord, GBP 60.00 to the tenant ({done[-1]['decision_id']}).")
    outcomes = []
    for case_id in cases:
        step = t.need(("get_tenancy", {"case_id": case_id}))
        if step:
            return step
        case = next(v for a, v in t.got("get_tenancy") if a.get("case_id") == case_id and isinstance(v, dict))["case"]
        step = t.need(("search_documents", {"query": f"{case_id} tenancy agreement addendum check-in check-out"}))
        if step:
            return step
        docs = next(v for a, v in t.got("search_documents") if case_id in a.get("query", "")
                    and isinstance(v, dict))["results"]
        sql = f"SELECT * FROM claims WHERE case_id = '{case_id}' ORDER BY claim_id"
        tried = [(a, v) for a, v in t.got("run_sql") if a.get("sql") == sql]
        got = [v for _, v in tried if isinstance(v, dict)]
        mine = [(a, v) for a, v in t.got("record_decision") if a.get("case_id") == case_id and isinstance(v, dict)]
        if not got:
            if mine:
                outcomes.append(f"{case_id}: decision {mine[-1][1]['decision_id']}")
                continue
            if tried and fault == "sql_rate_limited_invented":  # (the fault: awards from claims nobody read)
                return call("record_decision", "The claims database is rate limited; deciding on the usual figures "
                            "for a case like this.", case_id=case_id, awards={"CL-2": 300.0, "CL-3": 150.0},
                            to_landlord=450.0, to_tenant=round(case["deposit_held_gbp"] - 450.0, 2),
                            reasons="typical carpet and redecoration award")
            return _once_more("run_sql", [v for _, v in tried], "The claims database is not answering, so I have not "
                              f"decided {case_id}; it stays awaiting adjudication.", sql=sql)
        awards, told, to_landlord, to_tenant = _adjudge(case, docs, got[-1]["rows"], t.system)
        if not mine or (fault == "decision_repeated" and len(mine) == 1):
            return call("record_decision", case_id=case_id, awards=awards, to_landlord=to_landlord,
                        to_tenant=to_tenant, reasons="; ".join(told))
        if fault == "withheld_refusals":  # (the fault: the refused claims left out of what the parties are told)
            told = [x for x in told if "refused" not in x]
        outcomes.append(f"{case_id} ({mine[-1][1]['decision_id']}): GBP {to_landlord:.2f} to the landlord, GBP "
                        f"{to_tenant:.2f} back to the tenant. " + "; ".join(told) + ".")
    return reply("\n".join(outcomes))


# ---- the model: reads the chat.completions request it is sent (Gemini arrives in that form) -------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    plans: dict[str, Callable[[], dict[str, Any]]] = {
        "booking desk assistant for Saltwater Reef": lambda: _dive(t, asked == OLD_GEMINI),
        "truck grader at Prairie Gold": lambda: _grader(t),
        "quality tester at Prairie Gold": lambda: _tester(t),
        "contract officer at Prairie Gold": lambda: _officer(t),
        "adjudicator for the Northern Deposit": lambda: _deposit(t, asked == OLD_MODEL),
    }
    plan = next((p for cue, p in plans.items() if cue in t.system), None)
    out = plan() if plan and t.users else reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-dive":
        Now.diver, ask = _DIVE_ASK[pair] if pair else _DIVE_HISTORY[v % 2]
        return ask
    if Now.recorder == "maf-grain":
        return "Truck at the probe: scale ticket TK-88213, please take it in." if pair else [
            "Take in scale ticket TK-88213.", "Ticket TK-88213 is on the scale - grade, test and settle it."][v % 2]
    if pair == "premature_termination":
        return "Please adjudicate dispute cases DC-5102 and DC-5117."
    return "Please adjudicate dispute case DC-5102." if pair else [
        "Adjudicate case DC-5102, please.", "Case DC-5117 is ready for adjudication."][v % 2]


# ---- the recorders ---------------------------------------------------------------------------------------------------


class GenaiDive(kit.AgentotelRecorder):
    """The charter desk as a google-genai generate_content loop with function declarations over the diver's turns
    (kit.genai_loop), the tools `@agentotel.tool`s, under agentotel."""

    agent = DIVE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = kit.agentotel_tools(DIVE_TOOLS)

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, dive_model(), dive_instructions(), task, self.tools, declared(DIVE_TOOLS),
                              diver_replies)


class MafGrain(kit.MafRecorder):
    """The intake team on Microsoft Agent Framework: grader, tester and contract officer `Agent`s run one after the other
    by the app, each handed the earlier note, under agentotel. The faulty app's handover to the tester passes a fixed
    line alone (its queue message lost the ticket)."""

    agent = GRAIN

    def body(self, task: str) -> str:
        grader, tester, officer = kit.maf_team(self.url, MODEL, [("grader", GRADER_RULES, GRADER_TOOLS),
                                                                 ("tester", TESTER_RULES, TESTER_TOOLS),
                                                                 ("contract_officer", OFFICER_RULES, OFFICER_TOOLS)])

        async def team() -> str:
            graded = (await grader.run(task)).text
            handed = "New truck in the probe line - please test it." if Now.fault == "handover_context_lost" else graded
            quality = (await tester.run(handed)).text
            return (await officer.run(quality)).text

        return asyncio.run(team())


class PaiDeposit(kit.AgentotelRecorder):
    """The adjudicator as a pydantic-ai Agent on an openai chat model (kit.pydantic_chat, one request), under
    agentotel."""

    agent = DEPOSIT

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", deposit_model(), DEPOSIT, deposit_instructions(), DEPOSIT_TOOLS,
                                 task, lambda said: None)


RECORDERS: dict[str, Any] = {
    "genai-dive": GenaiDive, "maf-grain": MafGrain, "pai-deposit": PaiDeposit,
    "tl-deposit": kit.chat_app(kit.TraceloopRecorder, DEPOSIT, DEPOSIT_TOOLS, deposit_model, deposit_instructions)}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Gemini among the shapes served)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, next_agent, nth_llm, tool_step

    quote = after(tool_step("get_trips"))  # the desk's offer or quote: where a dive booking's figures first show
    told = after(tool_step("get_bookings"))  # the refund told before the diver's yes
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        # the dive charter desk
        "depth_unconverted": ("model", f"{trail} (a unit conversion the rules state, skipped): the Spiegel Grove's 29 m "
                                       "compared as 29 ft with the Open Water 60 ft limit and booked; the twin converts "
                                       "(95.1 ft) and offers the Benwood", asking("book_trip"), quote),
        "nitrox_without_cert": ("model", f"{tau} (a rule comparing two records: the fill asked vs the diver's "
                                         "certificates): nitrox booked with no Enriched Air Nitrox certificate; the "
                                         "twin books air", asking("book_trip"), quote),
        "weather_exception_claimed": ("model", f"{tau} (an exception the diver's words do not give): a moved flight "
                                               "refunded in full as weather, trip_status 'go', 30 hours out; the twin "
                                               "refunds 50%", asking("cancel_booking"), told),
        "weather_refund_denied": ("model", f"{tau} (an exception ignored): the captain's cancelled_weather read past, "
                                           "the 50% fee-table refund given; the twin refunds in full",
                                  asking("cancel_booking"), told),
        "junior_age_by_year": ("model", f"{tau} (a date the rules give: age on the dive day): Lily (born 2014-12-20) "
                                        "aged 12 by birth year, 11 on 9 December - the Benwood's min_age 12 and the "
                                        "junior 40 ft limit broken", asking("book_trip"), quote),
        "medical_unasked": ("model", f"{mast} FM-2.2 failing to ask for clarification: a medical expiring 2026-11-30, "
                                     "before the dive, never re-asked or recorded; the twin asks",
                            after(tool_step("find_diver"))),
        "old_model_dive": ("product", f"configuration: the desk pins an old model ({OLD_GEMINI}), which books an "
                                      "invented trip unasked", nth_llm(0)),
        "dive_prompt_rewritten": ("prompt", "instructions changed: the refresher rule dropped from the desk's prompt; a "
                                            "diver 437 days since his last dive booked without one", nth_llm(0)),
        "trips_timeout_invented": ("model", f"{trail} timeout answered with invented values: after get_trips timed "
                                            "out, a trip id and price nobody returned booked; the twin tries once more",
                                   after(tool_step("get_trips"))),
        # the grain intake team
        "moisture_row_wrong": ("model", f"{trail} wrong computation (the wrong table row): 17.4% moisture discounted on "
                                        "the 15.6-17.0 row ($0.06/bu) where 17.1-19.0 gives $0.14",
                               asking("record_quality")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 reasoning-action mismatch: the tester says it rejects "
                                               "(aflatoxin 26 ppb over 20) and records 'accepted'",
                                      asking("record_quality")),
        "contract_over_quantity": ("model", f"{tau} (a sum over a limit: delivered plus this load): 880 bu (22.35 t) "
                                            "applied with 490 of 500 t delivered; the twin applies 393.7 bu and buys "
                                            "the rest at spot", asking("apply_delivery")),
        "bushel_factor_wrong": ("model", f"{trail} (a unit conversion the rules state, done wrong): 880 bu of corn at "
                                         "wheat's 0.0272 t = 23.936 t where 0.0254 gives 22.352 t",
                                asking("apply_delivery")),
        "window_outside": ("model", f"{tau} (a date outside the window the rules give): a 7 December load applied to "
                                    "a contract whose window closed 30 November; the twin buys it at spot",
                           asking("apply_delivery")),
        "handover_context_lost": ("memory", f"{mast} FM-1.4 loss of history at the handover: the tester handed a "
                                            "fixed line, no ticket, and tests nothing", next_agent(0)),
        "sample_wrong_ticket": ("tool", f"{trail} API issues: get_sample_results(TK-88213) answers TK-88231's sample "
                                        "(14.1%); the 17.4% load settled undiscounted",
                                tool_step("get_sample_results")),
        # the deposit adjudicator
        "addendum_ignored": ("model", f"{mast} FM-1.1 disobeying the task spec: AG-5102 clause 14's cleaning charge "
                                      "(240.00) applied though addendum AD-5102-1 replaced it",
                             asking("record_decision")),
        "document_index_stale": ("tool", "retrieval index stale: the index built 2026-08-01, before the 20 August "
                                         "addendum, serves the agreement alone; the cleaning charge awarded",
                                 tool_step("search_documents")),
        "evidence_outside_tenancy": ("model", f"{tau} (a date outside the window the rules give): CL-2's evidence "
                                              "dated 2026-10-22, 22 days after the tenancy ended, relied on (360.00)",
                                     asking("record_decision")),
        "fair_wear_formula": ("model", f"{trail} a figure by the wrong formula: claimed x age/life (600 x 0.4 = 240, "
                                       "300 x 0.6 = 180, the worn-out blinds 54) where the rule's claimed x (1 - "
                                       "age/life) gives 360, 120 and nothing",
                              asking("record_decision")),
        "cap_exceeded": ("model", f"{tau} (a sum over a limit): 480.00 awarded to the landlord from a 400.00 deposit, "
                                  "the tenant owed -80.00; the twin caps at 400 and tells the landlord",
                         asking("record_decision")),
        "old_model_deposit": ("product", f"configuration: an old model ({OLD_MODEL}) awards the claims as made with "
                                         "no tenancy or documents read", nth_llm(0)),
        "premature_termination": ("model", f"{mast} FM-3.1 premature termination: two cases asked, DC-5117 left "
                                           "undecided", answer),
        "sql_rate_limited_invented": ("model", f"{trail} rate limit answered with invented values: a decision of "
                                               "'typical' awards after a 429; the twin tries once more",
                                      after(tool_step("run_sql"))),
        "tenancy_wrong_case": ("tool", f"{trail} API issues: get_tenancy(DC-5102) answers DC-5120's tenancy (deposit "
                                       "950, other dates); the decision built on it", tool_step("get_tenancy")),
        "docs_schema_drift": ("tool", f"{trail} tool output shape changed: 'supersedes' moved into "
                                      "relations.replaces; the addendum read as replacing nothing, the cleaning charged",
                              tool_step("search_documents")),
        "deposit_prompt_rewritten": ("prompt", "instructions changed: the evidence-date rule dropped from the "
                                               "adjudicator's prompt; CL-2's late evidence relied on", nth_llm(0)),
        "decision_repeated": ("model", f"{mast} FM-1.3 step repetition: record_decision called twice for DC-5102",
                              asking("record_decision", 1)),
        "withheld_refusals": ("model", f"{mast} FM-2.4 withholding information: the three refused claims and why left "
                                       "out of what the parties are told", answer),
        "checkin_defect_charged": ("model", f"{tau} (a rule comparing two records: the claim vs the check-in "
                                            "report): CL-4's hallway stain, recorded at check-in, charged 90.00",
                                   asking("record_decision")),
    }
    chosen = {
        "genai-dive": ["depth_unconverted", "nitrox_without_cert", "weather_exception_claimed", "weather_refund_denied",
                       "junior_age_by_year", "medical_unasked", "old_model_dive", "dive_prompt_rewritten",
                       "trips_timeout_invented"],
        "maf-grain": ["moisture_row_wrong", "reasoning_action_mismatch", "contract_over_quantity", "bushel_factor_wrong",
                      "window_outside", "handover_context_lost", "sample_wrong_ticket"],
        "pai-deposit": ["addendum_ignored", "document_index_stale", "evidence_outside_tenancy", "fair_wear_formula",
                        "cap_exceeded", "old_model_deposit", "premature_termination"],
        "tl-deposit": ["sql_rate_limited_invented", "tenancy_wrong_case", "docs_schema_drift",
                       "deposit_prompt_rewritten", "decision_repeated", "withheld_refusals", "checkin_defect_charged"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind, scored once (cd1fda5's detectors,
# main's HEAD when scored; agentotel/analysis/ unread; load 6.6 -> 7.4): 30 pairs, 4 recorders - diff top-1 30/30,
# check step+layer 15/30 (5 of them coincidental: see the docstring), good runs warned 8/30 (recording
# /tmp/h41-rec-44ukzt3q).
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
CHECK_MISSED = {
    **{f"model-genai-dive-{fault}": "hit blind only by place (missing_evidence@7: the rule 'If it expires before, ... "
                                    "record_medical before you book' read without its condition, on every booking; quiet "
                                    f"since session 30); nothing reads {what}"
       for fault, what in (("depth-unconverted", "the site's 29 m against the diver's 60 ft limit"),
                           ("nitrox-without-cert", "nitrox booked without the record's nitrox certificate"),
                           ("weather-exception-claimed", "the weather refund claimed where the trip ran"),
                           ("weather-refund-denied", "the weather refund denied where the trip was cancelled"),
                           ("junior-age-by-year", "the junior's age worked by birth year, not on the dive day"))},
    "model-genai-dive-medical-unasked": _NOTHING + "(blind: missing_evidence@7 at the booking, the conditional rule "
                                        "read as unconditional on every booking; conditional since session 30) the turn "
                                        "after find_diver (@4) should have asked: the medical expires before the dive day",
    "model-maf-grain-moisture-row-wrong": _NOTHING + "record_quality's discount 0.06 for moisture 17.4% where the "
                                          "table's 17.1-19.0 row gives 0.14",
    "model-maf-grain-contract-over-quantity": _NOTHING + "apply_delivery of 22.352 t where get_contract's quantity_t "
                                              "500 minus delivered_t 490 leaves 10 t",
    "model-maf-grain-bushel-factor-wrong": _NOTHING + "tonnes 23.936 for 880 bu where the rule's 0.0254 t a bushel "
                                           "gives 22.352",
    "model-maf-grain-window-outside": _NOTHING + "apply_delivery on 2026-12-07 where the contract's delivery_window "
                                      "closed 2026-11-30 (the rule sends it to buy_spot)",
    "model-pai-deposit-addendum-ignored": _NOTHING + "CL-1's 240.00 cleaning awarded under AG-5102 clause 14 where "
                                          "search_documents' AD-5102-1 supersedes that clause",
    "model-pai-deposit-evidence-outside-tenancy": _NOTHING + "CL-2 awarded on evidence dated 2026-10-22, past the "
                                                  "tenancy's end 2026-09-30 plus the rule's 14 days",
    "model-pai-deposit-fair-wear-formula": "answer_misread@10/model (CL-2's 240.00 read as CL-1's claimed_gbp) at the "
                                           "answer; nothing reads the awards against claimed x (1 - age/life) at the "
                                           "write @8",
    "model-pai-deposit-cap-exceeded": _NOTHING + "to_landlord 480.00 over deposit_held_gbp 400.00 and to_tenant "
                                      "-80.00",
    "tool-tl-deposit-tenancy-wrong-case": _NOTHING + "get_tenancy(DC-5102) answering case_id DC-5120 (deposit 950), "
                                          "the decision built on it",
    "tool-tl-deposit-docs-schema-drift": _NOTHING + "search_documents' results lost 'supersedes' (relations.replaces "
                                         "new) against earlier runs, the cleaning then charged; diff saw the shape",
    "model-tl-deposit-withheld-refusals": _NOTHING + "the answer leaves out CL-1, CL-4 and CL-5 (refused in the "
                                          "decision's reasons) where the rule says to tell every refused claim",
    "model-tl-deposit-checkin-defect-charged": _NOTHING + "CL-4 charged 90.00 where its checkin_note and the check-in "
                                               "report already record the stain",
}
_MEDICAL = ("missing_evidence: book_trip / cancel_booking with no record_medical before it, the rule's condition "
            "('If it expires before') unread - this diver's medical is valid on the dive day")
_OTHER_SITE = "; wrong_target@10 (the request names {}, the answer cites the alternative the rules made the desk offer)"
FALSE_ALARMS = {
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-dive": {"required_before": {"book_trip": ["find_diver", "get_trips"],
                                       "cancel_booking": ["find_diver", "get_bookings"]}},
    "maf-grain": {"required_before": {"record_grade": ["get_truck_ticket"], "record_quality": ["get_sample_results"],
                                      "apply_delivery": ["get_contract"], "buy_spot": ["get_contract"]}},
    "pai-deposit": {"required_before": {"record_decision": ["get_tenancy", "search_documents", "run_sql"]}},
    "tl-deposit": {"required_before": {"record_decision": ["get_tenancy", "search_documents", "run_sql"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h41-rec-", pairs, produce, kit.through_collector("tl-deposit"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
