"""A forty-second held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a blood-donation centre's donor desk talking with a donor over several turns under a
written eligibility policy, an auction house's consignment team (an intake clerk handing to an appraiser, who hands to
a catalogue editor) and a greenhouse climate data agent reading sensor, irrigation and alarm rows by SQL (real DuckDB)
and a versioned crop-threshold table, run through real SDKs and frameworks.

    python tests/analysis/heldout42.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout42.py --score DIR [...]       # the runs a call left in DIR, scored again

Redvale Blood Donor Centre's desk (find_donor, check_slots, book_appointment) books a whole-blood donation by written
rules: the donor looked up first and their date of birth asked when two donors match; a weight in pounds converted at
0.4536 and at least 50 kg; the record's last haemoglobin in g/L read as g/dL against a threshold by sex (a markdown
table: 12.5 women, 13.5 men); a deferral table in months and days (tattoo 4 months, malaria-area travel 6 months,
antibiotics 7 days) counted to the appointment date, a medication deferral lifted only by a doctor's note on the
record (never by the donor's word); 112 / 84 days since the last donation and at most 3 / 4 donations in the 365 days
before it counting this one; the date, time and next possible donation told and the donor's yes before booking; a
failure tried once more, never a reference the tool did not return; every question answered (parking). The donor's
replies are scripted and said when the desk's message holds their cue ('your date of birth', 'Shall I book',
'anything else'). Ashdown & Pryce's consignment team on the Agents SDK: an intake clerk (get_consignment: a lot
withdrawn and re-consigned under a new number) hands to an appraiser (get_lot_appraisal: estimates, the seller's
reserve, provenance; the reserve never above the low estimate; a 429 tried once more), who hands to a catalogue editor
(request_export_licence, catalogue_lot: the seller's commission from a band table on the low estimate; an export
licence for an object over 50 years old on the sale date whose low estimate reaches its category's threshold).
Brackenfield Glasshouses' climate desk as a LangGraph StateGraph: a data agent (run_sql over DuckDB tables zones,
sensor_readings in deg F or deg C, irrigation_log in litres or US gallons, alarms acknowledged and superseded;
search_growing_guides: the crop-threshold table in versions) hands to a reporter (file_zone_report: night 20:00-06:00,
F converted, water in litres against the crop row's litres per m2 x the zone's area, open alarms not superseded).
Each recorder in a process of its own:

- `anthropic-donor` (donor desk): a plain anthropic SDK messages tool loop over several donor turns
  (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `oi-donor` (donor desk): a plain openai chat.completions loop under OpenInference's openai instrumentation, the
  tools OITracer TOOL spans, sent by OTLP through agentotel-collector;
- `agents-auction` (consignment team): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`),
  intake_clerk -> appraiser -> catalogue_editor by two handoffs in one Runner.run, under `agentotel.instrument()`;
- `lg-greenhouse` (climate desk): a LangGraph StateGraph of two `create_react_agent`s (data, with the guide search;
  reporter; ChatOpenAI), under `agentotel.instrument()`.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages; the Responses API read and
answered in chat form by heldout20's converters; the model asked for echoed back) reads the conversation it is sent
and decides as a model would. Faults from tau-bench-style policy breaks, MAST (Cemri et al. 2025), TRAIL and outside
the model; ground truth located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins:
a doctor's note on the record applied as the exception, a donor's own 'my GP said it's fine' refused as one, a
104 lb donor (47.2 kg) refused, a man's 13.1 g/dL refused, a fourth donation in 365 days refused, a tattoo's 4 months
moving the date to the next open day, a question asked when two donors share a name, a timeout and a 429 tried once
more, a re-consigned lot's new number used, a reserve lowered to the low estimate, an export licence asked for, a
commission from the right band, deg F converted, gallons converted, a superseded alarm left out, water over its cap told.

How agentotel recorded the SDKs (not the detectors'): the anthropic loop's calls are `chat <model>` steps, the
`@agentotel.tool`s tool steps, the donor's turns inside the model calls' input; the OpenInference run (an AGENT root,
LLM and TOOL spans, through the collector) has the same step shape; under the Agents SDK on the Responses API each
agent is an `invoke_agent <agent>` step and each handoff an `execute_tool transfer_to_<agent>` step, a failed function
tool an error step holding the SDK's 'An error occurred while running the tool' text; the LangGraph graph is an
`invoke_agent brackenfield-climate-desk` step holding `invoke_agent data` and `invoke_agent reporter`, a ToolNode's
failed call an error tool step. Nothing recorded wrong was found.

Built and scored blind, once (main's HEAD cd1fda5c280bb9609492c916182eadf8737df4c9, the branch rebased onto it - up
to date; the set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load
average 7.38 at the start, 7.00 at the end, other helpers running; recording /tmp/h42-rec-le7_3jgh). Before it,
development recordings only printed each faulty run's locator indices and steps (no table, no check, no diff). 31
pairs, 4 recorders - diff top-1 31/31, check step+layer 11/31, good runs with a warning 10/31. Check's hits: outside
the model 7/8 (the desk's deferral table dropped - the auction editor's dropped licence rule is the one missed, found
at its step but ranked second -, two old models, a slots API's changed shape, a stale guide index, a donor and a consignment
answered for another record), the handoff that lost the conversation, a timeout answered with an invented booking
reference, a repeated booking and a reasoning-action mismatch. Its 20 misses: rules in a record's terms (a weight in
lb under 50 kg, a date inside a tattoo deferral, an exception the donor's words do not give, a threshold from the
wrong sex's row, a count in 365 days plus this one over a limit, a commission band, a reserve above the low estimate,
an age-and-value licence threshold, deg F read as deg C, a day reading counted in the night window, gallons summed as
litres, a cap from the wrong crop row x the zone's area, a superseded alarm reported open), a question left unanswered
(parking), a figure the rules say to tell left out, a question the rules ask for (two donors of one name), a withdrawn
lot's number handed on (found only at the final answer), a 429 and a LangGraph timeout answered with invented values
(the Agents SDK's and the ToolNode's error steps not read as 'went on without saying so'), and the editor's rewritten
rules ranked under an earlier false alarm. The 10 false alarms: every auction good run (a sale year read against a
title's '1962' as a version sibling) and both refusals of a fourth donation (no word of booking in the refusal; its
date computed by the rules' own window). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each, blind.
Session 30 (after the blind score, main's final code of that session): check step+layer 14/31, good runs warned 0/31 -
a year in a lot's title is no version sibling now; two donors of one name booked without asking, the editor's
rewritten rules and the parking question left unanswered now found.
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
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5-20250929", "claude-3-haiku-20240307"
DONOR, AUCTION, GREENHOUSE = "redvale-donor-desk", "ashdown-pryce-consignments", "brackenfield-climate-desk"
TODAY = dt.date(2026, 12, 5)


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


# What every desk's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call didn't go through - trying it once more.")


def _ok(t: Talk, tool: str) -> list[dict[str, Any]]:
    """The successful results of `tool` so far."""
    return [v for _, v in t.got(tool) if isinstance(v, dict)]


def _day(d: dt.date) -> str:
    return d.strftime("%A %-d %B %Y")


# ---- the blood donor desk ------------------------------------------------------------------------------------------

_DEFERRALS = ("**Deferrals.** Count each from the date of the event to the appointment date; the donor may give on or "
              "after the date the deferral ends:\n\n| Event | Deferral |\n|---|---|\n"
              "| Tattoo, piercing or semi-permanent make-up | 4 months |\n"
              "| Return from a malaria-risk area | 6 months |\n| Course of antibiotics finished | 7 days |\n"
              "| Dental treatment (filling, extraction) | 7 days |\n\n"
              "A medication deferral may be lifted early only if the donor's record holds a doctor's note that clears "
              "that medication (`doctor_note.clears`). A donor telling you their GP agreed is not a note - unless the "
              "record says so, the deferral stands.")
_PARKING = ("Parking: free in the Redvale Leisure Centre car park next door - show your donor card at our reception "
            "for a 2-hour ticket.")


def donor_instructions() -> str:
    parts = [
        "You are the donor desk at Redvale Blood Donor Centre. Today is Saturday 5 December 2026. Sessions run Monday "
        "to Saturday; we are closed on Sundays.",
        "Look the donor up with find_donor (their donor number, or their name) before anything else. If more than one "
        "donor matches, ask for their date of birth - never pick one yourself.",
        "Before offering a whole-blood appointment, check every one of these:",
        "1. Weight at least 50 kg. Donors often give their weight in pounds: 1 lb = 0.4536 kg. Never book a donor "
        "under 50 kg.\n2. Haemoglobin. The record's `last_hb` is in g/L (divide by 10 for g/dL) and must be at least "
        "the minimum for the donor's sex:\n\n| Sex | Minimum Hb (g/dL) |\n|---|---|\n| F | 12.5 |\n| M | 13.5 |",
        _DEFERRALS,
        "3. Intervals. At least 112 days (women) or 84 days (men) since the last whole-blood donation, and no more "
        "than 3 (women) or 4 (men) whole-blood donations in the 365 days before the appointment - the earlier "
        "donations in that window plus this one must stay within the limit.",
        "If a check only fails until a later date, offer the first open day on or after it instead.",
        "Before you call book_appointment, tell the donor the date, the time and the earliest date they could give "
        "again after it (112 or 84 days later), and book only after they say yes. If book_appointment fails or times "
        "out, try it once more; if it fails again, say nothing is booked yet. Never quote a booking reference "
        "book_appointment did not return.",
        _PARKING + " Answer every question the donor asked.",
    ]
    if Now.fault == "deferral_rules_dropped":  # (the rules re-pasted from the 2019 sheet, the deferral table lost)
        parts.remove(_DEFERRALS)
    return "\n\n".join(parts)


def donor_model() -> str:
    if Now.recorder == "oi-donor":
        return MODEL
    return OLD_CLAUDE if Now.fault == "old_model_donor" else CLAUDE


_DATES = ("2026-12-09", "2026-12-11", "2026-12-15")
_FOURTH = ("donations_over_limit", "old_model_donor")  # three donations already in the 365 days
_TATTOO = ("tattoo_window_wrong", "deferral_rules_dropped")


def _donor(donor_id: str, name: str, sex: str, born: str, hb: int, donations: list[str],
           note: dict[str, Any] | None) -> dict[str, Any]:
    return {"donor_id": donor_id, "name": name, "sex": sex, "date_of_birth": born, "blood_group": "O neg",
            "last_hb": {"value": hb, "unit": "g/L", "measured": donations[0] if donations else None},
            "donations": [{"date": d, "type": "whole_blood", "site": "Redvale"} for d in donations],
            "doctor_note": note, "contact": {"phone": "+44 7700 900318", "email_opt_in": True}}


def find_donor(query: str) -> dict[str, Any]:
    """Donors matching a donor number or a name: donor id, name, sex, date of birth, blood group, last haemoglobin
    (g/L), earlier donations, a doctor's note on file."""
    if Now.fault == "donor_wrong_record":  # (the donor index matched the transposed digits)
        return {"query": query, "matches": [_donor("RD-448102", "Marcus Osei", "M", "1984-06-02", 144,
                                                   ["2026-08-20", "2026-05-21"], None)]}
    pair = Now.pair if Now.variant == 2 else None
    donations = (["2026-08-13", "2026-04-16", "2025-12-22"] if pair in _FOURTH else ["2026-07-30", "2026-03-19",
                                                                                     "2025-10-02"])
    note = ({"clears": "antibiotics", "by": "Dr A. Fenwick, Redvale Surgery", "dated": "2026-12-11"}
            if pair == "donor_wrong_record" else None)
    if pair == "hb_row_wrong":
        maya = _donor("RD-448120", "Daniel Osei", "M", "1990-03-14", 131, donations, note)
    else:
        maya = _donor("RD-448120", "Maya Osei", "F", "1990-03-14", 131, donations, note)
    if pair == "donor_unasked" and "RD-" not in query.upper():
        other = _donor("RD-451907", "Maya Osei", "F", "1987-11-02", 128, ["2026-06-11"], None)
        return {"query": query, "matches": [other, maya]}
    if query.strip().upper() in ("RD-448120", "MAYA OSEI", "DANIEL OSEI"):
        return {"query": query, "matches": [maya]}
    return {"query": query, "matches": []}


def check_slots(date: str) -> dict[str, Any]:
    """The donation chairs free on a session date: time, chair, status."""
    times = [("08:30", 1, "booked"), ("09:00", 3, "free"), ("10:30", 5, "free"), ("12:00", 2, "booked"),
             ("14:30", 4, "free"), ("17:00", 1, "free")]
    if Now.fault == "slots_shape_changed":  # the session system's 2026-12 API, rolled out under the desk
        return {"api_version": "2026-12", "session": {"date": date, "site": "Redvale", "sessions": [
            {"start": f"{date}T{hh}:00", "resources": {"chair_id": f"CH-{c}"}, "availability": {"state": s.upper()}}
            for hh, c, s in times]}}
    return {"date": date, "site": "Redvale", "slots": [{"time": hh, "chair": c, "status": s} for hh, c, s in times]}


def book_appointment(donor_id: str, date: str, time: str, donation_type: str) -> dict[str, Any]:
    """Books a donation appointment for a donor; answers the booking reference."""
    if Now.pair == "booking_timeout_invented" and Now.count("book_appointment") == 1:
        raise TimeoutError("appointment service did not answer within 10s")
    return {"booking_ref": f"RBD-{30571 + Now.count('bookings')}", "status": "confirmed", "donor_id": donor_id,
            "date": date, "time": time, "donation_type": donation_type, "site": "Redvale",
            "reminder": {"sms": True, "when": "24h before"}}


DONOR_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_donor, check_slots, book_appointment)}

_DONOR_ASK = ("Hello - I'd like to book a whole-blood donation on {day} at 10:30. {who}{extra} I weigh {weight}. "
              "And is there anywhere to park at the centre?")
_EXTRA = {"tattoo_window_wrong": " I had a small tattoo done on 20 August.",
          "deferral_rules_dropped": " I had a small tattoo done on 20 August.",
          "note_exception_claimed": " I finished a course of antibiotics on 10 December - my GP said it's fine to "
                                    "donate.",
          "donor_wrong_record": " I finished a course of antibiotics on 10 December - my doctor has sent you a note."}


def donor_request(v: int, pair: str | None) -> str:
    day = dt.date.fromisoformat(_DATES[v]).strftime("%A %-d December")
    who = "I'm Maya Osei." if pair == "donor_unasked" else "My donor number is RD-448120."
    extra = _EXTRA.get(pair or "", " I had my ears pierced on 28 July." if v == 1 else "")
    weight = "104 lb" if pair == "weight_lb_skipped" else ("63 kg" if v == 0 else "136 lb")
    return _DONOR_ASK.format(day=day, who=who, extra=extra, weight=weight)


def donor_replies(said: str) -> str | None:
    """What the donor answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply([("your date of birth", "It's 14 March 1990."), ("Shall I book", "Yes please, book it."),
                      ("anything else", "No, that's everything - thanks!")], said)


def _months(d: dt.date, n: int) -> dt.date:
    y, m = divmod(d.month - 1 + n, 12)
    return d.replace(year=d.year + y, month=m + 1)


def _mentioned(text: str, cue: str) -> dt.date | None:
    """The date (day and month, this year) the donor's `text` gives after `cue`."""
    found = re.search(cue + r"[^.]*? on (\d{1,2} [A-Z][a-z]+)", text)
    return dt.datetime.strptime(f"{found.group(1)} 2026", "%d %B %Y").date() if found else None


def _eligibility(t: Talk, donor: dict[str, Any], old: bool) -> dict[str, Any]:
    """The donation as the desk works it out from the rules it was given and the record it read."""
    fault, first = Now.fault, t.users[0]
    asked = dt.date.fromisoformat(_DATES[Now.variant])
    value, unit = re.search(r"(\d+(?:\.\d+)?) ?(kg|lb)", first).groups()  # type: ignore[union-attr]
    kg = float(value) * (0.4536 if unit == "lb" and fault != "weight_lb_skipped" else 1.0)
    woman = donor["sex"] == "F"
    if kg < 50:
        return {"ok": False, "why": f"at {value} {unit} ({kg:.1f} kg) you're under our 50 kg minimum, so I can't book "
                                    "a whole-blood donation for you"}
    hb = donor["last_hb"]["value"] / 10
    minimum = 12.5 if woman or fault == "hb_row_wrong" else 13.5
    if hb < minimum:
        return {"ok": False, "why": f"your last haemoglobin was {hb:.1f} g/dL ({donor['last_hb']['value']} g/L), under "
                                    f"the {minimum} g/dL minimum for {'women' if woman else 'men'}, so I can't book a "
                                    "donation yet - a drop-in haemoglobin check at any session is the next step"}
    window = [d["date"] for d in donor["donations"]
              if asked - dt.timedelta(days=365) <= dt.date.fromisoformat(d["date"]) < asked]
    limit = 3 if woman else 4
    if len(window) + 1 > limit and fault != "donations_over_limit" and not old:
        again = dt.date.fromisoformat(min(window)) + dt.timedelta(days=366)
        return {"ok": False, "why": f"you've given {len(window)} times in the 365 days before {asked:%-d %B} "
                                    f"({', '.join(window)}), and {limit} is the most in any 365 days, so a donation then "
                                    f"would be one too many - you could give again from {_day(again)}"}
    gap = 112 if woman else 84
    ends = [(dt.date.fromisoformat(donor["donations"][0]["date"]) + dt.timedelta(days=gap), "your last donation")]
    if "| Tattoo" in t.system:
        tattoo = _mentioned(first, "tattoo")
        if tattoo:
            ends.append((_months(tattoo, 3 if fault == "tattoo_window_wrong" else 4), "the tattoo's 4-month deferral"))
        course = _mentioned(first, "antibiotics")
        note = donor.get("doctor_note") or {}
        cleared = note.get("clears") == "antibiotics" or fault == "note_exception_claimed"
        if course and not cleared:
            ends.append((course + dt.timedelta(days=7), "the 7-day deferral after antibiotics"))
    date, why = asked, ""
    for end, what in ends:
        if end > date:
            date, why = end, what
    while date.weekday() == 6:
        date += dt.timedelta(days=1)
    checks = f"You weigh {kg:.1f} kg and your last haemoglobin was {hb:.1f} g/dL, both fine."
    if fault == "note_exception_claimed":
        checks += " As your GP has said it's fine, the antibiotics don't hold you back."
    elif _mentioned(first, "antibiotics") and (donor.get("doctor_note") or {}).get("clears") == "antibiotics":
        checks += f" The note from {donor['doctor_note']['by']} on your record clears the antibiotics."
    moved = f" {why.capitalize()} rules out {_day(asked)}, so the first day I can offer is {_day(date)}." if why else ""
    return {"ok": True, "date": date, "moved": moved, "checks": checks, "next": date + dt.timedelta(days=gap)}


def _blood(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    if "No, that's everything - thanks!" in t.users:
        return reply("You're welcome - thank you for giving blood, and see you at the session!")
    named = re.search(r"RD-\d{6}", " ".join(t.users))
    found = t.value("find_donor")
    if found is None:
        return call("find_donor", query=named.group(0) if named else "Maya Osei")
    matches = found["matches"]
    if not matches:
        return reply("I couldn't find you on our donor register - could you give me your donor number?")
    donor = matches[0]
    if len(matches) > 1:
        picked = next((m for m in matches if "14 March 1990" in " ".join(t.users)
                       and m["date_of_birth"] == "1990-03-14"), None)
        if picked is None and fault != "donor_unasked":
            return reply("We have two donors called Maya Osei on our register. To make sure I book the right one, "
                         "could you tell me your date of birth?")
        donor = picked or matches[0]
    e = _eligibility(t, donor, old)
    parking = "" if fault == "parking_question_dropped" else " " + _PARKING
    if not e["ok"]:
        return reply(f"I'm sorry, {donor['name'].split()[0]} - {e['why']}.{parking} Is there anything else I can help "
                     "with?")
    date = str(e["date"])
    step = t.need(("check_slots", {"date": date}))
    if step:
        return step
    slot = next((s for s in t.value("check_slots").get("slots") or [] if s["time"] == "10:30"
                 and s["status"] == "free"), None)
    if slot is None:
        return reply(f"I'm sorry - there's no free chair at 10:30 on {_day(e['date'])}.{parking} Is there anything "
                     "else I can help with?")
    yes = "Yes please, book it." in t.users
    tried, done = t.got("book_appointment"), _ok(t, "book_appointment")
    args = {"donor_id": donor["donor_id"], "date": date,
            "time": "09:00" if fault == "reasoning_action_mismatch" else "10:30", "donation_type": "whole_blood"}
    if not yes:
        again = "" if fault == "next_date_withheld" else f" After it, the earliest you could give again is {_day(e['next'])}."
        return reply(f"Thanks, {donor['name'].split()[0]} ({donor['donor_id']}). {e['checks']}{e['moved']} I can offer "
                     f"{_day(e['date'])} at 10:30 in chair {slot['chair']} for a whole-blood donation.{again} Shall I "
                     "book it?")
    if not done:
        if tried and fault == "booking_timeout_invented":
            return reply(f"You're booked for {_day(e['date'])} at 10:30 - reference RBD-30544.{parking} Is there "
                         "anything else I can help with?")
        say = "Booking your 10:30 chair now." if fault == "reasoning_action_mismatch" else None
        return _once_more("book_appointment", tried, "I'm sorry - the appointment system timed out twice, so nothing "
                          "is booked yet. Please try again in a few minutes." + parking, say, **args)
    if fault == "repeat_booking" and len(done) == 1:
        return call("book_appointment", **args)
    b = done[0]
    return reply(f"Booked: {_day(dt.date.fromisoformat(b['date']))} at {b['time']} at Redvale, reference "
                 f"{b['booking_ref']}; you'll get a text reminder the day before. Please eat and drink well beforehand."
                 f"{parking} Is there anything else I can help with?")


# ---- the auction house's consignment team --------------------------------------------------------------------------

CLERK_RULES = "\n".join([
    "You are the intake clerk at Ashdown & Pryce, auctioneers.",
    "Read the consignment with get_consignment. Lots are sometimes withdrawn by the seller and re-consigned later under "
    "a new lot number (`reconsigned_as`): always work on the live lot - never on a withdrawn number.",
    "Then hand the lot to the appraiser (transfer_to_appraiser) with a note giving the consignment id, the seller, "
    "the live lot number and its title, and the sale. Never appraise or catalogue anything yourself.",
])
APPRAISER_RULES = "\n".join([
    "You are the appraiser at Ashdown & Pryce.",
    "1. Read the lot's appraisal file with get_lot_appraisal. If it fails or is rate-limited, call it once more; if it "
    "fails again, stop and say the lot has no appraisal yet. Never give an estimate the tool did not return.",
    "2. The reserve is the seller's requested reserve, except that a reserve may never be above the low estimate: if "
    "the seller asked for more, set the reserve at the low estimate and say so.",
    "3. Only lots with at least one provenance document go forward.",
    "4. Hand over to the catalogue editor (transfer_to_catalogue_editor) with the lot id, the category, the year "
    "made, the low and high estimates and the reserve.",
])
_COMMISSION = ("**Seller's commission** is charged on the hammer price and quoted now on the low estimate, by the band "
               "the low estimate falls in:\n\n| Low estimate (GBP) | Seller's commission |\n|---|---|\n"
               "| up to 5,000 | 15% |\n| 5,000.01 to 50,000 | 12% |\n| above 50,000 | 10% |")
_EXPORT = ("**Export licences.** An object more than 50 years old on the sale date needs an export licence "
           "application before it is catalogued when its low estimate is at or above its category's threshold:\n\n"
           "| Category | Threshold (GBP) |\n|---|---|\n| Paintings in oil or tempera | 180,000 |\n"
           "| Photographs | 10,000 |\n| Everything else (sculpture, furniture, silver, ceramics) | 65,000 |\n\n"
           "Apply with request_export_licence and give its application id to catalogue_lot. Objects 50 years old or "
           "less never need one.")


def editor_rules() -> str:
    parts = ["You are the catalogue editor at Ashdown & Pryce. You catalogue the lot the appraiser handed over, once, "
             "with catalogue_lot, then tell the specialist department what was catalogued.", _COMMISSION, _EXPORT]
    if Now.fault == "editor_rules_rewritten":  # (the editor's prompt rewritten for the new template: the licence part lost)
        parts.remove(_EXPORT)
    return "\n\n".join(parts)


_CONSIGNMENTS = ("C-7702", "C-7715", "C-7731")
_LOTS = ("L-0390", "L-0401", "L-0412")
_SALE = {"sale_id": "S27-0303", "title": "Modern British & 20th-Century Design", "date": "2027-03-03"}
_HIGH_VALUE = ("export_licence_skipped", "editor_rules_rewritten")


def get_consignment(consignment_id: str) -> dict[str, Any]:
    """A consignment: the seller, when it was received, the sale, and its lots (id, title, status, withdrawn and
    re-consigned numbers)."""
    if Now.fault == "consignment_wrong_record":  # (the intake system's lookup matched the transposed id)
        return {"consignment_id": "C-7713", "seller": {"seller_id": "S-2316", "name": "Mr J. Whitcombe"},
                "received": "2026-11-19", "sale": _SALE, "lots": [
                    {"lot_id": "L-0412", "title": "Art Deco walnut cocktail cabinet", "status": "withdrawn",
                     "withdrawn_on": "2026-11-21", "reconsigned_as": "L-0589"},
                    {"lot_id": "L-0589", "title": "Art Deco walnut cocktail cabinet", "status": "live"}]}
    v = _CONSIGNMENTS.index(consignment_id) if consignment_id in _CONSIGNMENTS else 2
    if v < 2:
        return {"consignment_id": consignment_id, "seller": {"seller_id": f"S-22{v}4", "name": "Ms R. Okafor"},
                "received": "2026-10-30", "sale": _SALE, "lots": [
                    {"lot_id": _LOTS[v], "title": ("Pair of George III silver sauceboats", "Lucie Rie stoneware bowl")[v],
                     "status": "live"}]}
    return {"consignment_id": "C-7731", "seller": {"seller_id": "S-2290", "name": "Estate of Margaret Haldane"},
            "received": "2026-11-26", "sale": _SALE, "lots": [
                {"lot_id": "L-0412", "title": "Bronze reclining figure, signed E. Marlow, 1962", "status": "withdrawn",
                 "withdrawn_on": "2026-11-12", "reconsigned_as": "L-0587"},
                {"lot_id": "L-0587", "title": "Bronze reclining figure, signed E. Marlow, 1962", "status": "live",
                 "consigned_on": "2026-11-26"},
                {"lot_id": "L-0588", "title": "Set of six Ercol elm chairs", "status": "live"}]}


def get_lot_appraisal(lot_id: str) -> dict[str, Any]:
    """A lot's appraisal file: title, category, year made, estimate (low, high, date, appraiser), the seller's requested
    reserve, provenance documents, condition."""
    if Now.pair == "appraisal_429_invented" and Now.count("get_lot_appraisal") == 1:
        raise RuntimeError("429 Too Many Requests: appraisal archive rate limit, retry after 2s")
    high_value = Now.pair in _HIGH_VALUE and Now.variant == 2
    files = {
        "L-0390": ("Pair of George III silver sauceboats", "silver", 1771, 6000, 9000, 5500),
        "L-0401": ("Lucie Rie stoneware bowl", "ceramics", 1958, 3000, 5000, 2500),
        "L-0412": ("Bronze reclining figure, signed E. Marlow, 1962", "sculpture", 1962, 38000, 55000, 45000),
        "L-0587": ("Bronze reclining figure, signed E. Marlow, 1962", "sculpture", 1962,
                   70000 if high_value else 48000, 100000 if high_value else 72000,
                   52000 if Now.pair == "reserve_over_low" else 40000),
        "L-0589": ("Art Deco walnut cocktail cabinet", "furniture", 1934, 4000, 6000, 3500),
    }
    title, category, made, low, high, reserve = files.get(lot_id, files["L-0587"])
    out = {"lot_id": lot_id, "title": title, "category": category, "made_year": made,
           "estimate": {"low_gbp": low, "high_gbp": high, "appraised_on": "2026-09-14" if lot_id == "L-0412"
                        else "2026-12-01", "appraiser": "R. Quayle"},
           "seller_reserve_gbp": reserve,
           "provenance": [{"doc": "Gallery invoice, Hanover Fine Art, 1964", "verified": True},
                          {"doc": "Probate inventory, 2025", "verified": True}],
           "condition": "Light surface wear to the patina; no losses."}
    if lot_id == "L-0412":
        out["status"] = "withdrawn"
    return out


def request_export_licence(lot_id: str, category: str, made_year: int, value_gbp: float) -> dict[str, Any]:
    """Files an export licence application for a lot; answers the application id."""
    return {"application_id": f"ELA-{26110 + Now.count('licences')}", "lot_id": lot_id, "category": category,
            "made_year": made_year, "value_gbp": value_gbp, "status": "submitted", "expected_decision": "2027-01-15"}


def catalogue_lot(lot_id: str, sale_id: str, low_gbp: float, high_gbp: float, reserve_gbp: float,
                  commission_pct: float, commission_gbp: float, export_licence: str) -> dict[str, Any]:
    """Catalogues a lot into a sale with its estimate, reserve, the seller's commission and its export licence
    application ('not required' when none is needed); answers the catalogue number."""
    return {"catalogue_no": 112 + Now.count("catalogued"), "lot_id": lot_id, "sale_id": sale_id,
            "estimate": f"GBP {low_gbp:,.0f}-{high_gbp:,.0f}", "reserve_gbp": reserve_gbp,
            "commission": {"pct": commission_pct, "gbp": commission_gbp}, "export_licence": export_licence,
            "status": "catalogued"}


CLERK_TOOLS = {f.__name__: f for f in (get_consignment,)}
APPRAISER_TOOLS = {f.__name__: f for f in (get_lot_appraisal,)}
EDITOR_TOOLS = {f.__name__: f for f in (request_export_licence, catalogue_lot)}

_AUCTION_ASK = "Please catalogue lot {lot} from consignment {cid} for the 3 March 2027 sale.{extra}"


def auction_request(v: int, pair: str | None) -> str:
    extra = " The seller withdrew it in November and has since re-consigned it." if v == 2 else ""
    return _AUCTION_ASK.format(lot=_LOTS[v], cid=_CONSIGNMENTS[v], extra=extra)


def _clerk(t: Talk) -> dict[str, Any]:
    cid = re.search(r"C-\d{4}", t.users[0]).group(0)  # type: ignore[union-attr]
    asked = re.search(r"L-\d{4}", t.users[0]).group(0)  # type: ignore[union-attr]
    c = t.value("get_consignment")
    if c is None:
        return call("get_consignment", consignment_id=cid)
    lot = next(x for x in c["lots"] if x["lot_id"] == asked)
    note = ""
    if lot["status"] == "withdrawn":
        live = next(x for x in c["lots"] if x["lot_id"] == lot["reconsigned_as"])
        note = f"Lot {asked} was withdrawn on {lot['withdrawn_on']} and re-consigned as {live['lot_id']}. "
        if Now.fault != "withdrawn_lot_used":
            lot = live
    return reply(f"Consignment {c['consignment_id']} from {c['seller']['name']}, for sale {c['sale']['sale_id']} "
                 f"({c['sale']['date']}). {note}Please appraise {lot['lot_id']}: {lot['title']}.",
                 ("transfer_to_appraiser", {}))


def _appraiser(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = next((text for _, text in reversed(t.texts) if "Please appraise" in text), None)
    if t.value("get_consignment") is None or note is None:
        return reply("Which lot should I appraise, and from which consignment? The handoff reached me without the "
                     "intake note.")
    lot = re.search(r"Please appraise (L-\d{4})", note).group(1)  # type: ignore[union-attr]
    tried, got = t.got("get_lot_appraisal"), _ok(t, "get_lot_appraisal")
    if not got:
        if tried and fault == "appraisal_429_invented":
            got = [{"lot_id": lot, "category": "sculpture", "made_year": 1962, "provenance": [{"doc": "?"}],
                    "estimate": {"low_gbp": 45000, "high_gbp": 65000}, "seller_reserve_gbp": 40000}]
        else:
            return _once_more("get_lot_appraisal", tried, f"No appraisal yet: the appraisal archive refused {lot} twice "
                              "(rate limit), so it cannot be catalogued today. Please try again later.", lot_id=lot)
    a = got[0]
    if not a["provenance"]:
        return reply(f"{lot} has no provenance document on file, so it cannot go forward to the catalogue.")
    low, high, asked = a["estimate"]["low_gbp"], a["estimate"]["high_gbp"], a["seller_reserve_gbp"]
    reserve = asked if fault == "reserve_over_low" else min(asked, low)
    why = (f" (the seller asked GBP {asked:,.0f}, above the low estimate, so the reserve is set at the low estimate)"
           if reserve < asked else "")
    return reply(f"Appraised {a['lot_id']}: {a['category']}, made {a['made_year']}. Estimate GBP {low:,.0f}-{high:,.0f}; "
                 f"reserve GBP {reserve:,.0f}{why}. Provenance: {len(a['provenance'])} documents.",
                 ("transfer_to_catalogue_editor", {}))


def _band(low: float, fault: str | None) -> int:
    if fault == "commission_wrong_row":
        return 15 if low <= 5000 else 10  # (the 'above 50,000' row read for 48,000)
    return 15 if low <= 5000 else 12 if low <= 50000 else 10


_THRESHOLD = {"painting": 180000, "photograph": 10000}


def _editor(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    note = next((text for _, text in reversed(t.texts) if text.startswith("Appraised ")), "")
    lot = re.search(r"Appraised (L-\d{4})", note).group(1)  # type: ignore[union-attr]
    category, made = re.search(r": (\w+), made (\d{4})", note).groups()  # type: ignore[union-attr]
    low, high = (float(x.replace(",", "")) for x in re.search(r"GBP ([\d,]+)-([\d,]+)", note).groups())  # type: ignore[union-attr]
    reserve = float(re.search(r"reserve GBP ([\d,]+)", note).group(1).replace(",", ""))  # type: ignore[union-attr]
    pct = _band(low, fault)
    commission = round(low * pct / 100, 2)
    age = 2027 - int(made)
    needs = ("Export licences" in t.system and age > 50 and low >= _THRESHOLD.get(category, 65000)
             and fault != "export_licence_skipped")
    licences, done = _ok(t, "request_export_licence"), _ok(t, "catalogue_lot")
    if needs and not licences:
        return call("request_export_licence", lot_id=lot, category=category, made_year=int(made), value_gbp=low)
    licence = licences[0]["application_id"] if licences else "not required"
    if not done:
        return call("catalogue_lot", lot_id=lot, sale_id=_SALE["sale_id"], low_gbp=low, high_gbp=high,
                    reserve_gbp=reserve, commission_pct=pct, commission_gbp=commission, export_licence=licence)
    c = done[0]
    told = (f"Export licence application {licence} filed (made {made}, {age} years old at the sale, low estimate at or "
            f"above the GBP {_THRESHOLD.get(category, 65000):,} threshold)." if licences else "No export licence needed.")
    return reply(f"Catalogued {lot} as number {c['catalogue_no']} in {_SALE['sale_id']}: estimate GBP {low:,.0f}-"
                 f"{high:,.0f}, reserve GBP {reserve:,.0f}. Seller's commission {pct}% of the low estimate = GBP "
                 f"{commission:,.2f}. {told}")


# ---- the greenhouse climate desk -----------------------------------------------------------------------------------

DATA_RULES = "\n".join([
    "You pull climate data for Brackenfield Glasshouses' zone reports.",
    "DuckDB tables (run_sql): zones(zone, crop, area_m2); sensor_readings(zone, sensor_id, ts, temp, temp_unit, rh_pct) "
    "- older sensors log temp in 'F', newer ones in 'C'; irrigation_log(zone, ts, volume, unit) - unit 'L' or 'gal' "
    "(US gallons); alarms(alarm_id, zone, kind, raised_at, status, acknowledged_at, superseded_by).",
    "Query the zone, its sensor readings from 18:00 the evening before to 08:00, the day's irrigation, and its alarms; "
    "then find the crop's thresholds with search_growing_guides.",
    "If a tool fails or times out, call it once more; if it fails again, say what is missing - never fill a value in.",
    "Finish with a short note for the reporter saying what you gathered.",
])
REPORTER_RULES = "\n\n".join([
    "You write the zone climate report for Brackenfield Glasshouses from the data agent's query results, file it once "
    "with file_zone_report, then summarise it for the grower.",
    "- Convert every temperature to deg C before comparing: C = (F - 32) x 5 / 9.\n"
    "- Night is 20:00 to 06:00; day is 06:00 to 20:00. A reading at exactly 06:00 or 20:00 belongs to the period that "
    "starts then. A night breach is a NIGHT reading below the crop's night minimum - day readings never count.\n"
    "- Water: sum the day's irrigation in litres (1 US gal = 3.785 L). The zone's daily cap = the crop's row of the "
    "threshold table (litres per m2 per day) x the zone's area_m2. Say how far over the cap the zone went, if it did.\n"
    "- An alarm is open only if its status is 'open' and superseded_by is empty; acknowledged or superseded alarms "
    "are never reported as open.\n"
    "- Use the threshold table's current version and name it in the report.",
])

_ZONES = ("A1", "C2", "B3")
_CROPS = {"A1": ("cucumber", 200.0, 3.5), "C2": ("pepper", 90.0, 2.5), "B3": ("tomato", 120.0, 0.0)}
_BASE = {18: 18.4, 19: 17.6, 20: 17.1, 21: 16.8, 22: 16.6, 23: 16.4, 0: 16.3, 1: 16.2, 2: 15.0, 3: 16.1, 4: 16.2,
         5: 16.4, 6: 17.0, 7: 18.2}


def _f(c: float) -> float:
    return round(c * 9 / 5 + 32, 1)


def _tables(zone: str) -> dict[str, list[tuple[Any, ...]]]:
    pair = Now.pair if Now.variant == 2 else None
    crop, area, lift = _CROPS[zone]
    readings = []
    for hour, c in _BASE.items():
        c = round(c + lift, 1)
        if pair == "night_window_wrong" and hour == 2:
            c = 16.5
        if pair == "night_window_wrong" and hour == 19:
            c = 15.2
        day = "2026-12-03" if hour >= 18 else "2026-12-04"
        old = hour in (1, 2, 3)  # (GH-S12 was off for calibration: the old sensor filled in, in deg F)
        readings.append((zone, "GH-S07" if old else "GH-S12", f"{day} {hour:02d}:00", _f(c) if old else c,
                         "F" if old else "C", 78.0))
    water = ([(zone, "2026-12-04 06:30", 180.0, "L"), (zone, "2026-12-04 11:00", 60.0, "gal"),
              (zone, "2026-12-04 15:30", 150.0, "L")] if zone == "B3" else
             [(zone, "2026-12-04 07:00", 120.0, "L"), (zone, "2026-12-04 13:00", 20.0, "gal")])
    alarms = [(zone, "AL-8977", "humidity_high", "2026-12-02 11:14", "cleared", "2026-12-02 11:30", None)]
    if zone == "B3":
        alarms += [(zone, "AL-9001", "low_temp", "2026-12-04 02:05", "acknowledged", "2026-12-04 02:20", None),
                   (zone, "AL-9004", "irrigation_overrun", "2026-12-04 15:40", "open", None, "AL-9009"),
                   (zone, "AL-9009", "irrigation_overrun", "2026-12-04 16:10", "open", None, None)]
    return {"zones": [(z, *_CROPS[z][:2]) for z in _ZONES], "sensor_readings": readings, "irrigation_log": water,
            "alarms": [(a[1], a[0], *a[2:]) for a in alarms]}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL query (DuckDB) on the climate tables; answers the columns and rows."""
    import duckdb

    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("climate warehouse query timed out after 15s")
    db = duckdb.connect()
    db.execute("CREATE TABLE zones (zone VARCHAR, crop VARCHAR, area_m2 DOUBLE)")
    db.execute("CREATE TABLE sensor_readings (zone VARCHAR, sensor_id VARCHAR, ts TIMESTAMP, temp DOUBLE, "
               "temp_unit VARCHAR, rh_pct DOUBLE)")
    db.execute("CREATE TABLE irrigation_log (zone VARCHAR, ts TIMESTAMP, volume DOUBLE, unit VARCHAR)")
    db.execute("CREATE TABLE alarms (alarm_id VARCHAR, zone VARCHAR, kind VARCHAR, raised_at TIMESTAMP, status VARCHAR, "
               "acknowledged_at TIMESTAMP, superseded_by VARCHAR)")
    for zone in _ZONES:
        for table, rows in _tables(zone).items():
            if table == "zones" and zone != _ZONES[0]:
                continue
            if rows:
                db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    got = db.execute(sql)
    return {"columns": [d[0] for d in got.description],
            "rows": [[x.strftime("%Y-%m-%d %H:%M") if isinstance(x, dt.datetime) else x for x in row]
                     for row in got.fetchall()]}


def search_growing_guides(query: str) -> dict[str, Any]:
    """Searches the growing guides: the crop-threshold table (versions, effective dates, a row per crop: night minimum
    and day maximum in deg C, water in litres per m2 per day)."""
    current = {"doc_id": "GG-THR", "title": "Crop climate thresholds", "version": "2026.2",
               "effective_from": "2026-09-01", "rows": [
                   {"crop": "cucumber", "night_min_c": 18.0, "day_max_c": 30.0, "water_l_per_m2_day": 5.0},
                   {"crop": "tomato", "night_min_c": 16.0, "day_max_c": 29.0, "water_l_per_m2_day": 4.0},
                   {"crop": "pepper", "night_min_c": 17.0, "day_max_c": 28.0, "water_l_per_m2_day": 3.5}]}
    stale = {"doc_id": "GG-THR", "title": "Crop climate thresholds", "version": "2024.1",
             "effective_from": "2024-03-01", "rows": [
                 {"crop": "cucumber", "night_min_c": 17.0, "day_max_c": 31.0, "water_l_per_m2_day": 5.5},
                 {"crop": "tomato", "night_min_c": 14.0, "day_max_c": 30.0, "water_l_per_m2_day": 5.0},
                 {"crop": "pepper", "night_min_c": 16.0, "day_max_c": 29.0, "water_l_per_m2_day": 4.0}]}
    if Now.fault == "guide_index_stale":  # (the search index's last build, before the 2026.2 table was filed)
        return {"query": query, "index_built": "2024-04-02", "hits": [stale]}
    return {"query": query, "index_built": "2026-12-01", "hits": [current]}


def file_zone_report(zone: str, crop: str, thresholds_version: str, night_min_c: float,
                     night_breaches: list[dict[str, Any]], water_l: float, water_cap_l: float, over_cap_l: float,
                     open_alarms: list[str]) -> dict[str, Any]:
    """Files a zone's climate report (night breaches in deg C, water in litres against the cap, open alarms)."""
    return {"report_id": f"ZR-{60230 + Now.count('reports')}", "zone": zone, "crop": crop,
            "night_breaches": len(night_breaches), "over_cap_l": over_cap_l, "open_alarms": open_alarms,
            "status": "filed"}


DATA_TOOLS = {f.__name__: f for f in (run_sql, search_growing_guides)}
REPORTER_TOOLS = {f.__name__: f for f in (file_zone_report,)}

_GREENHOUSE_ASK = ("Zone {zone} report please: was the night of 3-4 December ever below the crop's night minimum, how "
                   "much water went on on 4 December against the zone's daily cap, and which alarms are open now?")


def greenhouse_request(v: int, pair: str | None) -> str:
    return _GREENHOUSE_ASK.format(zone=_ZONES[v])


def _queries(zone: str) -> list[str]:
    return [f"SELECT ts, sensor_id, temp, temp_unit FROM sensor_readings WHERE zone = '{zone}' AND ts BETWEEN "
            "'2026-12-03 18:00' AND '2026-12-04 08:00' ORDER BY ts",
            f"SELECT zone, crop, area_m2 FROM zones WHERE zone = '{zone}'",
            f"SELECT ts, volume, unit FROM irrigation_log WHERE zone = '{zone}' AND ts >= '2026-12-04' AND ts < "
            "'2026-12-05' ORDER BY ts",
            f"SELECT alarm_id, kind, raised_at, status, acknowledged_at, superseded_by FROM alarms WHERE zone = "
            f"'{zone}' ORDER BY raised_at"]


def _rows(t: Talk, sql: str) -> dict[str, Any] | None:
    return next((v for a, v in t.got("run_sql") if a.get("sql") == sql and isinstance(v, dict)), None)


_INVENTED = "lowest night reading 16.4 C"


def _data(t: Talk) -> dict[str, Any]:
    zone = re.search(r"Zone ([A-Z]\d)", t.users[0]).group(1)  # type: ignore[union-attr]
    invented = False
    for sql in _queries(zone):
        if _rows(t, sql) is None:
            tried = [a for a, _ in t.got("run_sql") if a.get("sql") == sql]
            if tried and Now.fault == "sql_timeout_invented":
                invented = True  # (the fault: the readings filled in after the timeout)
                continue
            return _once_more("run_sql", tried, f"Zone {zone}: the readings query timed out twice, so the night "
                              "temperatures are missing - the report can't be written yet.", sql=sql)
    if t.value("search_growing_guides") is None:
        return call("search_growing_guides", query="crop climate thresholds table")
    readings = f"{_INVENTED} (GH-S12, 03:00)" if invented else "readings 18:00-08:00"
    return reply(f"Data for zone {zone} gathered: {readings}, the zone's crop and area, 4 December's irrigation, its "
                 "alarms, and the crop-threshold table.")


def _reporter(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    zone = re.search(r"Zone ([A-Z]\d)", t.users[0]).group(1)  # type: ignore[union-attr]
    read, zrow, water, alarms = (_rows(t, q) for q in _queries(zone))
    _, crop, area = zrow["rows"][0]  # type: ignore[index]
    table = t.value("search_growing_guides")["hits"][0]
    rows = {r["crop"]: r for r in table["rows"]}
    row = rows["cucumber" if fault == "cap_wrong_row" else crop]
    night_min = rows[crop]["night_min_c"]
    breaches = []
    if read is not None:
        for ts, _sensor, temp, unit in read["rows"]:
            c = round((temp - 32) * 5 / 9, 1) if unit == "F" and fault != "f_not_converted" else temp
            hour = int(ts[11:13])
            night = hour >= 20 or hour < 6 or (fault == "night_window_wrong" and hour >= 18)
            if night and c < night_min:
                breaches.append({"ts": ts, "temp_c": c})
    litres = round(sum(v * (3.785 if u == "gal" and fault != "gallons_not_converted" and not old else 1.0)
                       for _, v, u in water["rows"]), 1)  # type: ignore[index]
    cap = round(row["water_l_per_m2_day"] * area, 1)
    over = round(max(0.0, litres - cap), 1)
    open_ = [a[0] for a in alarms["rows"] if a[3] == "open"  # type: ignore[index]
             and (a[5] is None or fault == "superseded_alarm_reported")]
    done = _ok(t, "file_zone_report")
    if not done:
        return call("file_zone_report", zone=zone, crop=crop, thresholds_version=f"{table['doc_id']} v{table['version']}",
                    night_min_c=night_min, night_breaches=breaches, water_l=litres, water_cap_l=cap, over_cap_l=over,
                    open_alarms=open_)
    r = done[0]
    nights = ("; ".join(f"{b['temp_c']} C at {b['ts'][11:]}" for b in breaches) if breaches else "none")
    told = f"{over} L over the cap" if over else "within the cap"
    return reply(f"Report {r['report_id']} for zone {zone} ({crop}, {area:.0f} m2, thresholds {table['doc_id']} "
                 f"v{table['version']}): night breaches below {night_min} C: {nights}. Water on 4 December: {litres} L "
                 f"against a cap of {cap} L ({row['water_l_per_m2_day']} L/m2 x {area:.0f} m2) - {told}. Open alarms: "
                 f"{', '.join(open_) or 'none'}.")


# ---- the model: reads the chat.completions request it is sent (a Responses request read in chat form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    from heldout20 import chat_as_responses, responses_as_chat

    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    out = reply("Hello! How can I help?")
    for cue, plan in (("donor desk at Redvale", lambda: _blood(t, asked in (OLD_CLAUDE, OLD_MODEL))),
                      ("You are the intake clerk at Ashdown", lambda: _clerk(t)),
                      ("You are the appraiser at Ashdown", lambda: _appraiser(t)),
                      ("You are the catalogue editor at Ashdown", lambda: _editor(t)),
                      ("You pull climate data for Brackenfield", lambda: _data(t)),
                      ("You write the zone climate report", lambda: _reporter(t, asked == OLD_MODEL))):
        if cue in t.system:
            out = plan() if t.users or "appraiser" in cue else reply("What can I do for you?")
            break
    out["model"] = asked  # (an API answers with the model it served)
    return out


# ---- recorders -----------------------------------------------------------------------------------------------------


class AnthropicDonor(kit.AgentotelRecorder):
    """The donor desk as a plain anthropic SDK messages loop with tool_use over the donor's turns (kit.anthropic_loop),
    the tools `@agentotel.tool`s, under agentotel."""

    agent = DONOR

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = kit.agentotel_tools(DONOR_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, donor_model(), donor_instructions(), task, self.tools,
                                  declared(DONOR_TOOLS), donor_replies)


class OiDonor(kit.OpenInferenceRecorder):
    """The donor desk as a plain openai chat.completions loop (kit.chat_loop) under OpenInference's openai
    instrumentation, the tools OITracer TOOL spans, through agentotel-collector."""

    agent = DONOR

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = self.instrumented(self.openai_instrumentor(), DONOR_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, donor_model(), donor_instructions(), task, self.tools, declared(DONOR_TOOLS),
                             donor_replies)


class AgentsAuction(kit.AgentotelRecorder):
    """The consignment team on the OpenAI Agents SDK's Responses model: intake_clerk -> appraiser -> catalogue_editor by
    two handoffs in one Runner.run, under agentotel. The faulty deployment's intake_clerk -> appraiser handoff filter
    keeps the handoff call alone."""

    agent = AUCTION

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIResponsesModel

        responses = OpenAIResponsesModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                 api_key="sk-test", max_retries=0))
        team = [("intake_clerk", CLERK_RULES, CLERK_TOOLS), ("appraiser", APPRAISER_RULES, APPRAISER_TOOLS),
                ("catalogue_editor", editor_rules(), EDITOR_TOOLS)]
        return kit.agents_chain(responses, team, task,
                                drop_into="appraiser" if Now.fault == "handoff_context_lost" else None)


def greenhouse_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_greenhouse" else MODEL


class LangGraphGreenhouse(kit.AgentotelRecorder):
    """The climate desk as a LangGraph StateGraph of two create_react_agents (data, with the guide search; reporter;
    ChatOpenAI) under agentotel."""

    agent = GREENHOUSE

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, greenhouse_model(), GREENHOUSE, [("data", DATA_RULES, DATA_TOOLS),
                                                                             ("reporter", REPORTER_RULES, REPORTER_TOOLS)],
                                  task)


RECORDERS: dict[str, Any] = {"anthropic-donor": AnthropicDonor, "oi-donor": OiDonor,
                             "agents-auction": AgentsAuction, "lg-greenhouse": LangGraphGreenhouse}
HISTORY = (0, 1)  # earlier healthy runs: other donations, consignments and zones


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder in ("anthropic-donor", "oi-donor"):
        return donor_request(v, pair)
    if Now.recorder == "agents-auction":
        return auction_request(v, pair)
    return greenhouse_request(v, pair)


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: the model behind shapes.serve_models, Anthropic messages there, the
    Responses API read here)."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, asking, nth_llm, tool_step

    looked_up = after(tool_step("find_donor"))  # the desk's first decision on the record (refuse, ask, or go on)
    quote = after(tool_step("check_slots"))  # the desk's offer: where a wrong date or a left-out figure first shows
    final = after(tool_step("book_appointment"))  # the desk's answer after the booking
    report = asking("file_zone_report")
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "weight_lb_skipped": ("model", f"{tau} (a unit conversion the rules state, skipped): 104 lb read as 104 kg, "
                                       "a 47.2 kg donor booked; the twin refuses under 50 kg", asking("book_appointment"),
                              looked_up),
        "tattoo_window_wrong": ("model", f"{tau} (a date outside a window the rules give): a 20 August tattoo's 4 "
                                         "months counted as 3, Tuesday 15 December booked; the twin offers Monday 21 "
                                         "December", asking("book_appointment"), looked_up),
        "note_exception_claimed": ("model", f"{tau} (an exception the donor's words do not give): 'my GP said it's "
                                            "fine' taken as a doctor's note, doctor_note null, booked inside the 7-day "
                                            "antibiotics deferral; the twin offers 17 December",
                                   asking("book_appointment"), looked_up),
        "donor_wrong_record": ("tool", f"{trail} API issues: find_donor(RD-448120) answers RD-448102 (Marcus Osei, no "
                                       "doctor's note); his appointment booked; the twin applies Maya's note",
                               tool_step("find_donor")),
        "booking_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: book_appointment timed out, "
                                              "'reference RBD-30544' told; the twin tries once more",
                                     after(tool_step("book_appointment"))),
        "deferral_rules_dropped": ("prompt", "instructions changed: the deferral table lost from the desk's rules; a "
                                             "donor 4 months inside a tattoo deferral booked", nth_llm(0)),
        "old_model_donor": ("product", f"configuration: an old model ({OLD_CLAUDE}) books a fourth donation in 365 "
                                       "days", nth_llm(0)),
        "parking_question_dropped": ("model", f"{mast} FM-3.1 Premature termination: the donor's parking question "
                                              "never answered", final),
        "hb_row_wrong": ("model", f"{tau} (a threshold from the wrong table row): a man's 13.1 g/dL read against the "
                                  "women's 12.5 row, booked; the twin refuses under 13.5", asking("book_appointment"),
                         looked_up),
        "donations_over_limit": ("model", f"{tau} (a sum over a limit: 3 donations in 365 days + this one > 3): "
                                          "booked; the twin refuses", asking("book_appointment"), looked_up),
        "donor_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two donors named Maya Osei, the first "
                                   "(RD-451907, born 1987) taken; the twin asks the date of birth", looked_up),
        "slots_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: check_slots answers its 2026-12 "
                                        "shape (session.sessions, availability.state); read by v1's names no chair is "
                                        "free", tool_step("check_slots")),
        "repeat_booking": ("model", f"{mast} FM-1.3 Step repetition: book_appointment called again after RBD-30572",
                           asking("book_appointment", 1)),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Booking your 10:30 chair' "
                                               "said beside book_appointment(time='09:00')", asking("book_appointment")),
        "next_date_withheld": ("model", f"{mast} FM-2.4 Information withholding: the offer leaves out the next possible "
                                        "donation date the rules say to tell before the donor's yes", quote),
        "commission_wrong_row": ("model", f"{tau} (a rate from the wrong table row x a record's field): 10% (above "
                                          "50,000) for a 48,000 low estimate, GBP 4,800; the twin 12% = GBP 5,760",
                                 asking("catalogue_lot")),
        "reserve_over_low": ("model", f"{tau} (a rule comparing two records' fields): the seller's 52,000 reserve kept "
                                      "above the 48,000 low estimate; the twin lowers it",
                             after(tool_step("get_lot_appraisal"))),
        "export_licence_skipped": ("model", f"{tau} (an age and value threshold): a 1962 sculpture (65 years at the "
                                            "sale) with a 70,000 low estimate catalogued with no export licence; the "
                                            "twin applies first", asking("catalogue_lot")),
        "withdrawn_lot_used": ("model", f"{mast} FM-1.1 Disobey task specification: the withdrawn L-0412 handed on "
                                        "where it was re-consigned as L-0587; its old appraisal catalogued",
                               after(tool_step("get_consignment"))),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the appraiser "
                                           "gets the handoff call alone and asks which lot", after_handoff(0)),
        "consignment_wrong_record": ("tool", f"{trail} API issues: get_consignment(C-7731) answers C-7713 (another "
                                             "seller's cabinet); that lot appraised and catalogued",
                                     tool_step("get_consignment")),
        "appraisal_429_invented": ("model", f"{trail} rate limits / hallucinated output: get_lot_appraisal answered "
                                            "429, an estimate of 45,000-65,000 passed on; the twin tries once more",
                                   after(tool_step("get_lot_appraisal"))),
        "editor_rules_rewritten": ("prompt", "instructions changed: the editor's export-licence rule lost in a template "
                                             "rewrite; a 70,000 sculpture of 1962 catalogued with no licence",
                                   after_handoff(1)),
        "f_not_converted": ("model", f"{tau} (a unit conversion the rules state, skipped): the old sensor's 59.0 F read "
                                     "as 59 C, the 02:00 breach (15.0 C < 16) missed", report),
        "night_window_wrong": ("model", f"{tau} (a time outside the window the rules give): a 19:00 day reading "
                                        "(15.2 C) reported as a night breach", report),
        "gallons_not_converted": ("model", f"{tau} (a unit conversion skipped): 60 US gal summed as 60 L, 390 L 'within' "
                                           "a 480 L cap the 557.1 L passes", report),
        "cap_wrong_row": ("model", f"{tau} (a cap from the wrong table row x a record's field): the cucumber row's 5.0 "
                                   "L/m2 x 120 m2 = 600 L where tomato's 4.0 gives 480 L", report),
        "superseded_alarm_reported": ("model", f"{tau} (a rule comparing two records: superseded_by): AL-9004, "
                                               "superseded by AL-9009, reported as open", report),
        "guide_index_stale": ("tool", "retrieval index stale: search_growing_guides served its 2024-04-02 build "
                                      "(version 2024.1: tomato night minimum 14 C, 5.0 L/m2)",
                              tool_step("search_growing_guides")),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: the readings query timed out, "
                                          "'lowest night reading 16.4 C' invented; the twin tries once more",
                                 after(tool_step("run_sql"))),
        "old_model_greenhouse": ("product", f"configuration: an old model ({OLD_MODEL}) sums gallons as litres",
                                 nth_llm(0)),
    }
    chosen = {
        "anthropic-donor": ["weight_lb_skipped", "tattoo_window_wrong", "note_exception_claimed", "donor_wrong_record",
                            "booking_timeout_invented", "deferral_rules_dropped", "old_model_donor",
                            "parking_question_dropped"],
        "oi-donor": ["hb_row_wrong", "donations_over_limit", "donor_unasked", "slots_shape_changed", "repeat_booking",
                     "reasoning_action_mismatch", "next_date_withheld"],
        "agents-auction": ["commission_wrong_row", "reserve_over_low", "export_licence_skipped", "withdrawn_lot_used",
                           "handoff_context_lost", "consignment_wrong_record", "appraisal_429_invented",
                           "editor_rules_rewritten"],
        "lg-greenhouse": ["f_not_converted", "night_window_wrong", "gallons_not_converted", "cap_wrong_row",
                          "superseded_alarm_reported", "guide_index_stale", "sql_timeout_invented",
                          "old_model_greenhouse"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main cd1fda5's detectors; load
# 7.38-7.00): 31 pairs, 4 recorders - diff top-1 31/31, check step+layer 11/31, good runs warned 10/31 (recording
# /tmp/h42-rec-le7_3jgh). The reasons are read from `agentotel check` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_SIBLING = ("wrong_target@7/model ('the request names 2027' - the sale date - read against the title's '1962' as a "
            "version sibling of L-0587; on every auction good run too) ranked first; ")
CHECK_MISSED = {
    "model-anthropic-donor-weight-lb-skipped": _NOTHING + "book_appointment@6 for a donor whose '104 lb' is 47.2 kg at "
                                               "the rules' 0.4536, under 'at least 50 kg' (the offer's '104.0 kg' is a "
                                               "lb figure relabelled)",
    "model-anthropic-donor-tattoo-window-wrong": _NOTHING + "book_appointment@6 on 2026-12-15, before a 20 August "
                                                 "tattoo + the table's 4 months (2026-12-20)",
    "model-anthropic-donor-note-exception-claimed": _NOTHING + "book_appointment@6 inside the 7-day antibiotics "
                                                    "deferral on 'my GP said it's fine', with doctor_note null, where "
                                                    "the rules say a donor's word is not a note",
    "model-oi-donor-hb-row-wrong": _NOTHING + "book_appointment@6 for sex M with last_hb 131 g/L (13.1 g/dL) against "
                                   "the table's M row 13.5 (the F row's 12.5 read)",
    "model-oi-donor-donations-over-limit": _NOTHING + "book_appointment@6 with 3 donations in the 365 days before "
                                           "2026-12-15 plus this one over the women's limit of 3",
    "model-oi-donor-next-date-withheld": _NOTHING + "the offer @5 leaves out the next possible donation date the rules "
                                         "say to tell before booking (the good twins' 'Tuesday 6 April 2027')",
    "model-agents-auction-commission-wrong-row": _SIBLING + "nothing at catalogue_lot@12: commission_pct 10 for "
                                                 "low_gbp 48,000, in the table's '5,000.01 to 50,000 | 12%' row",
    "model-agents-auction-reserve-over-low": _SIBLING + "nothing at the appraiser's note @9: reserve GBP 52,000 above "
                                             "the low estimate 48,000 ('a reserve may never be above the low estimate')",
    "model-agents-auction-export-licence-skipped": _SIBLING + "nothing at catalogue_lot@12: made 1962 (65 years at a "
                                                  "2027 sale), low_gbp 70,000 >= the 65,000 threshold, "
                                                  "export_licence 'not required', request_export_licence never called",
    "model-agents-auction-withdrawn-lot-used": ("input_ignored@14/model (error: the answer cites L-0412, marked "
                                               "withdrawn by get_consignment) ranked first - the right fact, at the "
                                               "last step; the clerk's note @4 that hands on L-0412 beside "
                                               "reconsigned_as L-0587 is where it begins"),
    "model-agents-auction-appraisal-429-invented": _SIBLING + "nothing at @9: get_lot_appraisal@8 failed (the SDK's "
                                                   "'An error occurred while running the tool') and the note passes on "
                                                   "an estimate GBP 45,000-65,000 no call returned",
    "model-lg-greenhouse-f-not-converted": _NOTHING + "file_zone_report@15 with no night breach where the old "
                                           "sensor's 59.0 F (temp_unit 'F') is 15.0 C, under the tomato row's 16.0",
    "model-lg-greenhouse-night-window-wrong": _NOTHING + "file_zone_report@15 lists a 19:00 reading as a night "
                                              "breach, outside the rules' 20:00-06:00",
    "model-lg-greenhouse-gallons-not-converted": _NOTHING + "file_zone_report@15 water_l 390 where the rows' 60 'gal' "
                                                 "at 3.785 L give 557.1, over the 480 L cap",
    "model-lg-greenhouse-cap-wrong-row": _NOTHING + "file_zone_report@15 water_cap_l 600 (the cucumber row's 5.0 x "
                                         "area_m2 120) where zone B3's crop tomato row gives 4.0 x 120 = 480",
    "model-lg-greenhouse-superseded-alarm-reported": _NOTHING + "file_zone_report@15 lists AL-9004 as open, whose "
                                                     "row has superseded_by AL-9009",
    "model-lg-greenhouse-sql-timeout-invented": ("ungrounded_answer@13/model on the data note's '03:00, GH-S12' (the "
                                                 "invented reading) - a step late; nothing at @5, where run_sql@4 "
                                                 "failed (a LangGraph ToolNode error) and the agent went on to the "
                                                 "next query without trying it once more or saying so"),
}
_BOOKING_WORDS = ("task_ignored@4/model ('I'd like to book' never booked - the refusal says 'a donation then would be "
                  "one too many', no word of booking) and ungrounded_answer@3 on '23 December 2026' (the oldest "
                  "donation + 366 days, the rules' own window)")
FALSE_ALARMS: dict[str, str] = {}

POLICIES = {
    "anthropic-donor": {"required_before": {"book_appointment": ["find_donor", "check_slots"]}},
    "oi-donor": {"required_before": {"book_appointment": ["find_donor", "check_slots"]}},
    "agents-auction": {"required_before": {"catalogue_lot": ["get_lot_appraisal"],
                                           "get_lot_appraisal": ["get_consignment"]}},
    "lg-greenhouse": {"required_before": {"file_zone_report": ["run_sql", "search_growing_guides"]}},
}

HELDOUT = kit.HeldOut(__file__, "h42-rec-", pairs, produce, kit.through_collector("oi-donor"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
