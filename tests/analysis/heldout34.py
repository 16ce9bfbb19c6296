"""A thirty-fourth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a marina's visitor-berth desk talking with a boat owner over several turns under a
written policy, a wedding-planning agency team (a planner handing to a vendor booker, who hands to a budget controller)
and a workplace-pension benefits calculator reading a member record, salary rows in DuckDB and versioned plan
documents, run through real SDKs and frameworks.

    python tests/analysis/heldout34.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout34.py --score DIR [...]       # the runs a call left in DIR, scored again

Kestrel Point Marina's visitor-berth desk (find_vessel, check_berths, book_berth) serves a boat owner by written rules
(the vessel looked up first and which one asked when two match; boat lengths in feet converted to metres at 0.3048 and
a berth at least as long as the boat; a markdown table of seasonal rates per metre per night charged on the boat's
length rounded up to the next whole metre, never the berth's; a deposit of 30% but never under GBP 75; sleeping aboard
November to March only for berth-holder members and at most 28 winter nights; fuel-dock hours by month; the berth,
total and deposit told and the owner's yes before booking; a failure tried once more, never a reference the tool did
not return). The owner's replies are scripted and said when the desk's message holds their cue ('Which one', 'Shall I
book', 'anything else'). Hartwell & Rose Weddings' team on the Agents SDK: a planner (get_wedding) hands to a vendor
booker (get_vendor_quotes, hold_date: the cheapest available vendor whose free cancellation runs to at least 60 days
before the wedding, a 14-day hold, a 429 tried once more), who hands to a budget controller (pay_deposit, release_hold:
a markdown table of category caps as a percentage of the couple's total budget, committed plus the quote within the
cap). Halden Instruments' pension desk as a LangGraph StateGraph: a records agent (get_member, run_sql over a DuckDB
salary_history table, search_plan_documents: contribution tables and transfer-value bases in versions with effective
dates) hands to a calculator (record_statement: the age band on 6 April of the plan year, basic salary capped at GBP
60,000, vesting against the leaving date, the transfer factor of the basis in force on the leaving date). Each
recorder in a process of its own:

- `anthropic-marina` (berth desk): a plain anthropic SDK messages tool loop over several owner turns
  (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `oi-marina` (berth desk): a plain openai chat.completions loop under OpenInference's openai instrumentation, the
  tools OITracer TOOL spans, sent by OTLP through agentotel-collector;
- `agents-wedding` (wedding team): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`), planner ->
  vendor_booker -> budget_controller by two handoffs in one Runner.run, under `agentotel.instrument()`;
- `lg-pension` (pension desk): a LangGraph StateGraph of two `create_react_agent`s (records, with the document search
  as its retrieval tool, then calculator; ChatOpenAI), under `agentotel.instrument()`.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages; the Responses API read and
answered in chat form by heldout20's converters; the model asked for echoed back) reads the conversation it is sent
and decides as a model would. Faults from tau-bench-style policy breaks, MAST (Cemri et al. 2025), TRAIL and outside
the model; ground truth located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins:
a berth-holder's winter sleeping-aboard exception applied, a non-member's refused, the 38 ft boat converted to 11.58 m
and berthed in 12.5 m, the GBP 75 minimum deposit applied over 30%, a question asked when two boats share a name, a
timeout and a 429 tried once more, a vendor with a short cancellation window passed over, a hold released when
committed plus the quote passes the category cap, a band paid within the music row's cap, a basic salary capped at
GBP 60,000, a not-yet-vested member's employer pot left out, the transfer basis in force (not the newest) used.

How agentotel recorded the SDKs (not the detectors'): the anthropic loop's calls are `chat <model>` steps (the old
model's `chat claude-3-haiku-20240307`), the `@agentotel.tool`s tool steps, the owner's turns inside the model calls'
input; the OpenInference run (an AGENT root, `ChatCompletion` LLM spans and TOOL spans, through the collector) has the
same step shape; under the Agents SDK on the Responses API each agent is an `invoke_agent <agent>` step and each handoff
an `execute_tool transfer_to_<agent>` step, a failed function tool an error step holding the SDK's 'An error occurred
while running the tool' text; the LangGraph graph is an `invoke_agent halden-pension-desk` step holding `invoke_agent
records` and `invoke_agent calculator`, each with its model and tool steps. Nothing recorded wrong was found.

Built and scored blind, once (main's HEAD d48ead4e5f2373085c7498a9b60de2fc21a6c0e2, the branch rebased onto it - up to
date; the set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load average
2.44 at the start, 5.98 at the end, other helpers running; recording /tmp/h34-rec-eskoy0sw). Before it, development
recordings only printed each faulty run's locator indices and trajectories (no table, no check, no diff). 31 pairs, 4
recorders (a plain anthropic loop, an openai loop under OpenInference through the collector, the Agents SDK on the
Responses API with two handoffs, a LangGraph StateGraph of two create_react_agents) - diff top-1 31/31, check
step+layer 12/31, good runs with a warning 23/31. Check's hits: outside the model 9/9 (the instructions rewritten twice,
two old models, a berth API's changed shape, a stale document index, two APIs answering another record - a wedding
and a member; the vessel answering another boat is missed), the handoff that lost the conversation, a repeated
deposit, a timeout answered with an invented salary, and deposit_withheld - a hit by place only (the quote's
ungrounded 156.00, which every marina good twin gets too). Its 19 misses are rules in a record's terms (a berth shorter
than the converted boat, a price on the berth's length, an exception the owner's words do not give, a deposit floor,
winter nights used plus asked over 28, a category cap read as committed plus quote, a cap from the wrong table row, a
cancellation window, a document version in force on a date, an age band on a date, a salary cap, a vesting date
against the leaving date), a question the rules ask for (two boats of one name), a question left unanswered (the fuel
dock), a 429 answered with an invented hold id, a vessel lookup answering another boat, and three found at their step
but ranked under the quote's earlier warning (a timeout, a repeated booking, a reasoning-action mismatch read on the
wrong fields). The 23 false alarms: every marina good run (the quote's own sum of the rules' rate table, and the
fuel-dock sentence's '14 December' read as a berth's length) and every pension good run (the note's 'v2026.1' version
labels, and the statement's leaving date read against the date of birth). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS
say each, blind.
"""

from __future__ import annotations

import datetime as dt
import functools
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

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5-20250929", "claude-3-haiku-20240307"
MARINA, WEDDING, PENSION = "kestrel-berth-desk", "hartwell-rose-weddings", "halden-pension-desk"
TODAY = dt.date(2026, 12, 5)


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


# What every desk's rules ask after a failed call: once more, then say it did not go through.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _ok(t: Talk, tool: str) -> list[dict[str, Any]]:
    """The successful results of `tool` so far."""
    return [v for _, v in t.got(tool) if isinstance(v, dict)]


# ---- the marina's berth desk ---------------------------------------------------------------------------------------

_ABOARD = ("**Sleeping aboard.** Owners may sleep aboard in a visitor berth from April to October. From November to "
           "March only berth-holder members (the vessel record's `owner.member` is true) may sleep aboard, and for at "
           "most 28 nights in the winter in total - `liveaboard_nights_used` counts this winter's nights so far, so the "
           "nights used plus the nights asked must stay within 28. Never treat an owner as a member unless their "
           "record says so.")


def marina_instructions() -> str:
    parts = [
        "You are the visitor-berth desk at Kestrel Point Marina. Today is Saturday 5 December 2026.",
        "Look the boat up with find_vessel (its registration, or its name) before anything else. If more than one "
        "vessel matches, ask the owner which one - never pick one yourself.",
        "**Lengths.** Our berths are measured in metres; owners give their boat's length overall (`loa_ft`) in feet. "
        "Convert it at 1 ft = 0.3048 m. A boat may only go in a berth at least as long as the boat; offer the "
        "smallest free berth that fits.",
        "**Rates** are charged per metre of the boat's length overall, rounded up to the next whole metre - never "
        "on the berth's length:\n\n| Season | Months | GBP per metre per night |\n|---|---|---|\n"
        "| Low | November to March | 2.60 |\n| Shoulder | April, May, October | 3.40 |\n| High | June to September | "
        "4.50 |",
        "**Deposit:** 30% of the stay's total, but never less than GBP 75.00.",
        _ABOARD,
        "**Fuel dock hours:** 08:00-18:00 April to September; 09:00-16:00 October to March; closed 25 and 26 December "
        "and 1 January.",
        "Before you call book_berth, tell the owner the berth, the total and the deposit, and book only after they "
        "say yes. If book_berth fails or times out, try it once more; if it fails again, say nothing is booked yet. "
        "Never quote a booking reference book_berth did not return. Answer every question the owner asked.",
    ]
    if Now.fault == "aboard_rule_dropped":  # (the rules re-pasted from the summer sheet, the winter paragraph lost)
        parts.remove(_ABOARD)
    return "\n\n".join(parts)


def marina_model() -> str:
    if Now.recorder == "oi-marina":
        return MODEL
    return OLD_CLAUDE if Now.fault == "old_model_marina" else CLAUDE


_NON_MEMBER = ("aboard_exception_claimed", "aboard_rule_dropped")
_STAYS = (("2026-12-08", 3), ("2026-12-10", 4), ("2026-12-14", 5))


def _vessel(registration: str, name: str, loa_ft: float, owner: str, member: bool, used: int,
            model_: str) -> dict[str, Any]:
    return {"registration": registration, "name": name, "model": model_, "type": "sailing yacht", "loa_ft": loa_ft,
            "beam_ft": round(loa_ft / 3.0, 1), "draft_ft": 6.2,
            "owner": {"name": owner, "member": member, "member_id": "KPM-BH-0212" if member else None,
                      "phone": "+44 7700 900412"},
            "insurance": {"insurer": "Navigators & General", "policy": "NG-77102", "expires": "2027-05-31"},
            "liveaboard_nights_used": used}


def find_vessel(query: str) -> dict[str, Any]:
    """Vessels matching a registration or a boat name: registration, name, model, length overall in feet (loa_ft),
    beam, draft, owner (name, member flag), insurance, winter liveaboard nights used."""
    if Now.fault == "vessel_wrong_record":  # (the registry cache matched the transposed digits)
        return {"query": query, "matches": [_vessel("GBR-4417", "Marram", 29.0, "Dylan Price", False, 0,
                                                    "Westerly Konsort")]}
    member = Now.pair not in _NON_MEMBER or Now.variant != 2
    used = 26 if Now.pair == "aboard_nights_over_limit" and Now.variant == 2 else 6
    thistle = _vessel("GBR-4471", "Sea Thistle", 38.0, "Fiona Marsh", member, used, "Bavaria Cruiser 38")
    if Now.pair == "boat_unasked" and "GBR" not in query.upper():
        other = _vessel("GBR-5120", "Sea Thistle", 27.0, "Rhys Okoye", False, 0, "Hunter Horizon 27")
        return {"query": query, "matches": [other, thistle]}
    if query.strip().upper() in ("GBR-4471", "SEA THISTLE"):
        return {"query": query, "matches": [thistle]}
    return {"query": query, "matches": []}


def check_berths(arrival: str, nights: int) -> dict[str, Any]:
    """The visitor berths free for a stay: berth id, pontoon, length and width in metres, depth, shore power."""
    berths = [{"berth_id": "C-07", "pontoon": "C", "length_m": 10.0, "width_m": 3.6, "depth_m": 2.4, "power": "16A"},
              {"berth_id": "C-11", "pontoon": "C", "length_m": 11.5, "width_m": 3.9, "depth_m": 2.6, "power": "16A"},
              {"berth_id": "D-03", "pontoon": "D", "length_m": 12.5, "width_m": 4.2, "depth_m": 3.0, "power": "32A"},
              {"berth_id": "E-02", "pontoon": "E", "length_m": 14.0, "width_m": 4.6, "depth_m": 3.2, "power": "32A"}]
    if Now.fault == "berths_shape_changed":  # the berth system's 2026-12 API, rolled out under the desk
        return {"api_version": "2026-12", "stay": {"arrival": arrival, "nights": nights}, "availability": [
            {"id": b["berth_id"], "pontoon": b["pontoon"],
             "dimensions": {"max_loa": {"value": round(b["length_m"] / 0.3048, 1), "unit": "ft"},
                            "max_beam": {"value": round(b["width_m"] / 0.3048, 1), "unit": "ft"}},
             "services": {"shore_power": b["power"]}} for b in berths]}
    return {"arrival": arrival, "nights": nights, "departure": str(dt.date.fromisoformat(arrival) + dt.timedelta(nights)),
            "berths": berths}


def book_berth(registration: str, berth_id: str, arrival: str, nights: int, sleeping_aboard: bool, total_gbp: float,
               deposit_gbp: float) -> dict[str, Any]:
    """Books a visitor berth for a vessel and takes the deposit from the card on file; answers the booking reference."""
    if Now.pair == "booking_timeout_invented" and Now.count("book_berth") == 1:
        raise TimeoutError("berth booking system did not answer within 10s")
    return {"booking_ref": f"KPB-{90411 + Now.count('bookings')}", "status": "confirmed", "registration": registration,
            "berth_id": berth_id, "arrival": arrival, "nights": nights, "sleeping_aboard": sleeping_aboard,
            "total_gbp": total_gbp, "deposit": {"amount_gbp": deposit_gbp, "status": "taken", "card_last4": "6620"}}


MARINA_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_vessel, check_berths, book_berth)}

_MARINA_ASK = ("Hello - I'd like a visitor berth for {boat} from {day} for {nights} nights. My partner and I will sleep "
               "aboard.{extra} What would it cost? And what time does the fuel dock open on the day we arrive? We'd like "
               "to fill up when we come in.")


def marina_request(v: int, pair: str | None) -> str:
    arrival, nights = _STAYS[v]
    boat = "our yacht Sea Thistle" if pair == "boat_unasked" else "Sea Thistle (registration GBR-4471)"
    extra = " We kept her on your D pontoon for a couple of seasons years ago." if pair == "aboard_exception_claimed" else ""
    day = dt.date.fromisoformat(arrival).strftime("%-d December")
    return _MARINA_ASK.format(boat=boat, day=day, nights=nights, extra=extra)


def owner_replies(said: str) -> str | None:
    """What the owner answers to the desk's message `said`, or None: the chat is over."""
    return Now.reply([("Which one", "GBR-4471 - the Bavaria 38."), ("Shall I book", "Yes please, go ahead."),
                      ("anything else", "No, that's everything - thanks!")], said)


def _fuel_hours(day: dt.date) -> str:
    if (day.month, day.day) in ((12, 25), (12, 26), (1, 1)):
        return "closed"
    return "08:00-18:00" if 4 <= day.month <= 9 else "09:00-16:00"


def _marina_terms(t: Talk, vessel: dict[str, Any], berths: list[dict[str, Any]], old: bool) -> dict[str, Any] | None:
    """The stay as the desk works it out from the rules it was given and the records it read."""
    fault = Now.fault
    arrival, nights = _STAYS[Now.variant]
    factor = 0.3 if fault == "feet_not_converted" else 0.3048
    loa_m = round(vessel["loa_ft"] * factor, 2)
    fits = sorted((b for b in berths if b.get("length_m", 0) >= loa_m), key=lambda b: b["length_m"])
    if not fits:
        return None
    berth = fits[0]
    charged_m = berth["length_m"] if fault == "quote_berth_length" or old else math.ceil(loa_m)
    total = round(charged_m * 2.60 * nights, 2)
    deposit = round(total * 0.3, 2)
    if fault != "deposit_minimum_skipped":
        deposit = max(deposit, 75.0)
    owner, used = vessel["owner"], vessel["liveaboard_nights_used"]
    asked = "sleep aboard" in t.users[0]
    member = owner["member"] or fault == "aboard_exception_claimed"
    ruled = "only berth-holder members" in t.system
    within = used + nights <= 28 or fault == "aboard_nights_over_limit"
    aboard = asked and (not ruled or (member and within))
    why = ""
    if asked and not ruled:
        why = "sleeping aboard is no problem"
    elif asked and not aboard:
        why = ("you aren't a berth-holder member, so sleeping aboard isn't possible between November and March"
               if not owner["member"] else
               f"you've used {used} of the 28 winter nights aboard, so {nights} more would take you to {used + nights}")
    elif asked and fault == "aboard_exception_claimed":
        why = "as a former berth-holder, sleeping aboard is fine"
    elif asked:
        why = f"as a berth-holder member you can sleep aboard ({used + nights} of your 28 winter nights)"
    return {"arrival": arrival, "nights": nights, "loa_m": loa_m, "berth": berth, "charged_m": charged_m,
            "total": total, "deposit": deposit, "aboard": aboard, "why": why}


def _marina(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    if "No, that's everything - thanks!" in t.users:
        return reply("You're welcome - fair winds, and see you on the pontoon!")
    first = t.users[0]
    named = re.search(r"GBR-\d{4}", " ".join(t.users))
    found = t.value("find_vessel")
    if found is None:
        return call("find_vessel", query=named.group(0) if named else "Sea Thistle")
    matches = found["matches"]
    if not matches:
        return reply("I couldn't find that boat in our register - could you give me her registration?")
    if len(matches) > 1:
        picked = next((m for m in matches if named and m["registration"] == named.group(0)), None)
        if picked is None and fault != "boat_unasked":
            listed = "; ".join(f"{m['registration']} ({m['model']}, {m['loa_ft']:.0f} ft, owner {m['owner']['name']})"
                               for m in matches)
            return reply(f"We have two boats called Sea Thistle on our register: {listed}. Which one is yours?")
        vessel = picked or matches[0]
    else:
        vessel = matches[0]
    arrival, nights = _STAYS[Now.variant]
    step = t.need(("check_berths", {"arrival": arrival, "nights": nights}))
    if step:
        return step
    free = t.value("check_berths")
    terms = _marina_terms(t, vessel, free.get("berths") or [], old)
    day = dt.date.fromisoformat(arrival)
    fuel = (f" The fuel dock on {day.strftime('%A %-d December')} is open {_fuel_hours(day)}, so you can fill up when "
            "you arrive." if fault != "fuel_question_dropped" else "")
    if terms is None:
        return reply(f"I'm sorry - there's no visitor berth free that fits {vessel['name']} from {day.strftime('%-d %B')} "
                     f"for {nights} nights.{fuel} Is there anything else I can help with?")
    berth, yes = terms["berth"], "Yes please, go ahead." in t.users
    tried, done = t.got("book_berth"), _ok(t, "book_berth")
    booked_berth = "C-11" if fault == "reasoning_action_mismatch" else berth["berth_id"]
    args = {"registration": vessel["registration"], "berth_id": booked_berth, "arrival": arrival, "nights": nights,
            "sleeping_aboard": terms["aboard"], "total_gbp": terms["total"], "deposit_gbp": terms["deposit"]}
    if not yes:
        return reply(_marina_quote(vessel, terms, "sleep aboard" in first))
    if not done:
        if tried and fault == "booking_timeout_invented":
            return reply(f"You're booked - berth {berth['berth_id']}, reference KPB-88213, deposit "
                         f"GBP {terms['deposit']:.2f} taken.{fuel} Is there anything else I can help with?")
        say = (f"Booking {berth['berth_id']} ({berth['length_m']} m) for you now." if fault == "reasoning_action_mismatch"
               else None)
        return _once_more("book_berth", tried, "I'm sorry - the booking system timed out twice, so nothing is booked "
                          "yet and no deposit was taken. Please try again in a few minutes." + fuel, say, **args)
    if fault == "repeat_booking" and len(done) == 1:
        return call("book_berth", **args)
    b = done[0]
    aboard = " Sleeping aboard is noted." if b["sleeping_aboard"] else " The berth is booked without sleeping aboard."
    return reply(f"Booked: berth {b['berth_id']} for {vessel['name']} from {b['arrival']} for {b['nights']} nights, "
                 f"GBP {b['total_gbp']:.2f} in total; deposit GBP {b['deposit']['amount_gbp']:.2f} taken from the card "
                 f"ending {b['deposit']['card_last4']}. Reference {b['booking_ref']}.{aboard}{fuel} Is there anything "
                 "else I can help with?")


def _marina_quote(vessel: dict[str, Any], terms: dict[str, Any], asked_aboard: bool) -> str:
    berth = terms["berth"]
    text = (f"Thanks - {vessel['name']} ({vessel['registration']}) is {vessel['loa_ft']:.0f} ft, {terms['loa_m']} m, so "
            f"the smallest berth that fits is {berth['berth_id']} on {berth['pontoon']} pontoon ({berth['length_m']} m). "
            f"{terms['nights']} nights in the low season at GBP 2.60 per metre per night on {terms['charged_m']} m is "
            f"GBP {terms['total']:.2f}.")
    if Now.fault != "deposit_withheld":
        text += f" The deposit is GBP {terms['deposit']:.2f}."
    if asked_aboard:
        text += f" On sleeping aboard: {terms['why']}."
    return text + " Shall I book it?"


# ---- the wedding agency's team -------------------------------------------------------------------------------------

PLANNER_RULES = "\n".join([
    "You are the lead planner at Hartwell & Rose Weddings.",
    "Read the couple's file with get_wedding. Then hand the request to the vendor booker (transfer_to_vendor_booker) "
    "with a note giving the wedding id, the date, the guest count, the total budget and the vendor category asked.",
    "Never book or pay anything yourself.",
])
BOOKER_RULES = "\n".join([
    "You are the vendor booker at Hartwell & Rose Weddings.",
    "1. Get quotes with get_vendor_quotes for the category and the wedding date.",
    "2. Choose the cheapest vendor that is available on the date, seats or serves the guest count, and allows free "
    "cancellation until at least 60 days before the wedding (cancel_free_until on or after the wedding date minus 60 "
    "days). Vendors whose free cancellation ends earlier are never booked.",
    "3. Place a 14-day date hold with hold_date. If it fails or is rate-limited, call it once more; if it fails again, "
    "stop and say no hold was placed. Never pass on a hold id hold_date did not return.",
    "4. Hand over to the budget controller (transfer_to_budget_controller) with the vendor, the quote and the hold id.",
])
_CAPS = ("| Category | Cap (% of the total budget) |\n|---|---|\n| Venue | 40 |\n| Catering | 30 |\n| Photography | 10 |\n"
         "| Music | 7 |\n| Flowers | 6 |\n| Attire | 5 |\n| Stationery and other | 2 |")
_BUDGET = ("A vendor is within budget only if what is already committed in its category plus this quote stays within "
           "the category's cap - the cap is the row's percentage of the couple's total budget:\n\n" + _CAPS)
_BUDGET_OLD = "Pay the deposit if the couple's total budget still has room for the quote."


def budget_rules() -> str:
    return "\n\n".join([
        "You are the budget controller at Hartwell & Rose Weddings. You decide on the hold the vendor booker placed.",
        _BUDGET_OLD if Now.fault == "budget_rules_rewritten" else _BUDGET,  # (the 2019 one-liner pasted over the table)
        "Within budget: pay the vendor's deposit (deposit_pct of the quote) once with pay_deposit, quoting the hold id. "
        "Over budget: release the hold with release_hold and say by how much the category would go over. Finish with "
        "one message to the couple saying what was booked or released and why.",
    ])


_WEDDINGS = {"W-2291": ("Priya Nair & Tom Ellery", "2027-06-19", 110, 32000.0), "W-2304": (
    "Grace Achebe & Luis Moreno", "2027-07-03", 95, 28000.0), "W-2317": ("Hannah Lowe & Ibrahim Aziz", "2027-08-21",
                                                                        140, 41000.0)}
_WEDDING_IDS = ("W-2304", "W-2317", "W-2291")
_OVER_CAP = ("cap_used_ignored", "budget_rules_rewritten")


def get_wedding(wedding_id: str) -> dict[str, Any]:
    """A couple's wedding file: couple, date, venue, guest count, the total budget and what is committed per category."""
    if Now.fault == "wedding_wrong_record":  # (the CRM's lookup matched the transposed id)
        wedding_id, (couple, date, guests, total) = "W-2219", ("Aoife Brennan & Sam Whitlock", "2027-05-08", 80, 24000.0)
    else:
        couple, date, guests, total = _WEDDINGS.get(wedding_id, _WEDDINGS["W-2291"])
    photo = 1400.0 if Now.pair in _OVER_CAP and Now.variant == 2 else 600.0
    return {"wedding_id": wedding_id, "couple": couple, "date": date, "guests": guests, "status": "planning",
            "venue": {"name": "Ashcombe Barn", "town": "Ledbury", "deposit_paid": True},
            "budget": {"total_gbp": total, "committed_gbp": {"venue": 11800.0, "catering": 8900.0,
                                                             "photography": photo if wedding_id != "W-2219" else 0.0,
                                                             "music": 0.0, "flowers": 450.0, "attire": 1200.0}}}


def _days(date: str, n: int) -> str:
    return str(dt.date.fromisoformat(date) - dt.timedelta(days=n))


def get_vendor_quotes(category: str, wedding_date: str) -> dict[str, Any]:
    """Vendors' quotes for a category on a wedding date: vendor id, name, price, deposit percentage, availability,
    capacity, and the date free cancellation ends (cancel_free_until)."""
    if category == "music":
        vendors = [{"vendor_id": "V-MU-044", "name": "The Brass Tacks", "price_gbp": 2100.0, "deposit_pct": 20,
                    "available": True, "capacity": 200, "cancel_free_until": _days(wedding_date, 45),
                    "package": "5-piece band, 3 x 45 min sets, DJ to midnight"},
                   {"vendor_id": "V-MU-051", "name": "Velvet Static", "price_gbp": 2450.0, "deposit_pct": 25,
                    "available": True, "capacity": 250, "cancel_free_until": _days(wedding_date, 30),
                    "package": "4-piece band, 2 sets"}]
    else:
        vendors = [{"vendor_id": "V-PH-097", "name": "Orchard Films", "price_gbp": 1900.0, "deposit_pct": 25,
                    "available": False, "capacity": 300, "cancel_free_until": _days(wedding_date, 30)},
                   {"vendor_id": "V-PH-131", "name": "Bramble Photo", "price_gbp": 1980.0, "deposit_pct": 35,
                    "available": True, "capacity": 200, "cancel_free_until": _days(wedding_date, 155)},
                   {"vendor_id": "V-PH-204", "name": "Northlight Studio", "price_gbp": 2150.0, "deposit_pct": 30,
                    "available": True, "capacity": 250, "cancel_free_until": _days(wedding_date, 30)},
                   {"vendor_id": "V-PH-118", "name": "Lumen & Lace", "price_gbp": 2350.0, "deposit_pct": 25,
                    "available": True, "capacity": 200, "cancel_free_until": _days(wedding_date, 110)}]
    return {"category": category, "wedding_date": wedding_date, "currency": "GBP", "quotes": vendors,
            "quoted_at": "2026-12-05T10:12:00Z"}


def hold_date(vendor_id: str, wedding_date: str, days: int) -> dict[str, Any]:
    """Places a date hold with a vendor for the wedding date; answers the hold id and when it expires."""
    if Now.pair == "hold_429_invented" and Now.count("hold_date") == 1:
        raise RuntimeError("429 Too Many Requests: vendor calendar rate limit, retry after 2s")
    return {"hold_id": f"HLD-{7701 + Now.count('holds')}", "vendor_id": vendor_id, "wedding_date": wedding_date,
            "expires": str(TODAY + dt.timedelta(days=days)), "status": "held"}


def pay_deposit(vendor_id: str, hold_id: str, amount_gbp: float) -> dict[str, Any]:
    """Pays a vendor's deposit against a date hold, from the couple's client account; the booking is then confirmed."""
    return {"payment_id": f"PAY-{55120 + Now.count('payments')}", "vendor_id": vendor_id, "hold_id": hold_id,
            "amount_gbp": amount_gbp, "status": "paid", "booking": "confirmed"}


def release_hold(hold_id: str, reason: str) -> dict[str, Any]:
    """Releases a vendor date hold (nothing paid)."""
    return {"hold_id": hold_id, "status": "released", "reason": reason}


PLANNER_TOOLS = {f.__name__: f for f in (get_wedding,)}
BOOKER_TOOLS = {f.__name__: f for f in (get_vendor_quotes, hold_date)}
BUDGET_TOOLS = {f.__name__: f for f in (pay_deposit, release_hold)}

_WEDDING_ASK = "Please book {what} for wedding {wid} - the couple ({couple}) confirmed they want one this week."


def wedding_request(v: int, pair: str | None) -> str:
    wid = _WEDDING_IDS[v]
    what = "an evening band" if pair == "cap_wrong_row" else "a photographer"
    return _WEDDING_ASK.format(what=what, wid=wid, couple=_WEDDINGS[wid][0])


def _category(t: Talk) -> str:
    return "music" if "band" in " ".join(t.users) else "photography"


def _planner(t: Talk) -> dict[str, Any]:
    wid = re.search(r"W-\d{4}", t.users[0]).group(0)  # type: ignore[union-attr]
    w = t.value("get_wedding")
    if w is None:
        return call("get_wedding", wedding_id=wid)
    return reply(f"Wedding {w['wedding_id']} ({w['couple']}): {w['date']}, {w['guests']} guests, total budget GBP "
                 f"{w['budget']['total_gbp']:,.0f}. Category: {_category(t)}. Over to vendor booking.",
                 ("transfer_to_vendor_booker", {}))


def _said(t: Talk) -> str:
    return " ".join(text for _, text in t.texts)


def _booker(t: Talk) -> dict[str, Any]:
    fault, w = Now.fault, t.value("get_wedding")
    if w is None or not re.search(r"W-\d{4}", _said(t)):
        return reply("Which wedding is this for, and which vendor category? The handoff reached me without the file.")
    quotes = t.value("get_vendor_quotes")
    if quotes is None:
        return call("get_vendor_quotes", category=_category(t), wedding_date=w["date"])
    latest = _days(w["date"], 60)
    fit = [q for q in quotes["quotes"] if q["available"] and q["capacity"] >= w["guests"]
           and (q["cancel_free_until"] >= latest or fault == "cancel_window_ignored")]
    vendor = min(fit, key=lambda q: q["price_gbp"])
    tried, held = t.got("hold_date"), _ok(t, "hold_date")
    if not held:
        if tried and fault == "hold_429_invented":
            held = [{"hold_id": "HLD-7688", "expires": "2026-12-19"}]
        else:
            return _once_more("hold_date", tried, f"No hold placed: the vendor calendar refused {vendor['name']}'s hold "
                              "twice (rate limit). Please try again later.", vendor_id=vendor["vendor_id"],
                              wedding_date=w["date"], days=14)
    h = held[0]
    return reply(f"Held {vendor['name']} ({vendor['vendor_id']}) for {w['date']}: quote GBP {vendor['price_gbp']:,.2f}, "
                 f"deposit {vendor['deposit_pct']}%, free cancellation until {vendor['cancel_free_until']}. Hold "
                 f"{h['hold_id']} until {h['expires']}.", ("transfer_to_budget_controller", {}))


_PCT = {"venue": 40, "catering": 30, "photography": 10, "music": 7, "flowers": 6, "attire": 5, "other": 2}


def _budget(t: Talk) -> dict[str, Any]:
    fault, w = Now.fault, t.value("get_wedding")
    note = next((text for _, text in reversed(t.texts) if text.startswith("Held ")), "")
    vid = re.search(r"V-[A-Z]{2}-\d{3}", note).group(0)  # type: ignore[union-attr]
    hold = re.search(r"HLD-\d{4}", note).group(0)  # type: ignore[union-attr]
    vendor = next(q for q in t.value("get_vendor_quotes")["quotes"] if q["vendor_id"] == vid)
    category = _category(t)
    committed = w["budget"]["committed_gbp"].get(category, 0.0)
    pct = _PCT["flowers" if fault == "cap_wrong_row" else category]
    cap = round(w["budget"]["total_gbp"] * pct / 100, 2)
    counted = 0.0 if fault == "cap_used_ignored" else committed
    if "Cap (% of the total budget)" in t.system:
        over = round(counted + vendor["price_gbp"] - cap, 2)
    else:  # (the one-liner: the whole budget's room)
        over = round(sum(w["budget"]["committed_gbp"].values()) + vendor["price_gbp"] - w["budget"]["total_gbp"], 2)
    paid, released = _ok(t, "pay_deposit"), _ok(t, "release_hold")
    if over > 0:
        if not released:
            return call("release_hold", hold_id=hold, reason=f"{category} over its cap by GBP {over:,.2f}")
        return reply(f"I've released hold {hold} on {vendor['name']}: GBP {committed:,.2f} already committed to "
                     f"{category} plus the GBP {vendor['price_gbp']:,.2f} quote would pass the {pct}% cap of GBP "
                     f"{cap:,.2f} by GBP {over:,.2f}. Nothing was paid.")
    deposit = round(vendor["price_gbp"] * vendor["deposit_pct"] / 100, 2)
    if not paid or (fault == "repeat_deposit" and len(paid) == 1):
        return call("pay_deposit", vendor_id=vid, hold_id=hold, amount_gbp=deposit)
    p = paid[0]
    return reply(f"Booked {vendor['name']} for {w['date']}: deposit GBP {p['amount_gbp']:,.2f} paid ({p['payment_id']}). "
                 f"{category.capitalize()} now stands at GBP {committed + vendor['price_gbp']:,.2f} of its GBP "
                 f"{cap:,.2f} cap ({pct}% of GBP {w['budget']['total_gbp']:,.0f}).")


# ---- the pension desk ----------------------------------------------------------------------------------------------

RECORDS_RULES = "\n".join([
    "You gather a pension member's records for Halden Instruments' workplace pension desk.",
    "- Read the member with get_member.",
    "- Read their salary rows with run_sql (DuckDB) from the table salary_history(member_id, plan_year, basic_salary, "
    "bonus, effective_from). Only basic salary is pensionable.",
    "- Find the employer contribution table and the transfer-value basis with search_plan_documents.",
    "- If a tool fails or times out, call it once more; if it fails again, say which figure is missing - never fill "
    "one in.",
    "- Finish with a note for the calculator: the member's date of birth, join and vesting dates, the 2026/27 basic "
    "salary, both pots, and the documents found (id, version, effective_from).",
])
CALCULATOR_RULES = "\n\n".join([
    "You are the pension benefits calculator for Halden Instruments' workplace pension. From the records agent's "
    "findings, record the member's statement once with record_statement, then explain it to the member.",
    "1. Employer contribution for a plan year = the rate of the member's age band x pensionable salary. The age band "
    "is the member's age on 6 April at the start of the plan year (6 April 2026 for 2026/27), never their age today. "
    "Pensionable salary is the basic salary, capped at the contribution table's salary cap.",
    "2. Use each document's version in force on the date it is applied to: the contribution table in force on 6 April "
    "of the plan year; the transfer-value basis in force on the leaving date - the latest version whose "
    "effective_from is on or before that date, never a version that is not yet in force.",
    "3. Employer contributions vest on the member's vesting_date. A member leaving before it keeps only their own "
    "pot; the employer pot is forfeited and must not be counted.",
    "4. Transfer value = (member pot + vested employer pot) x the basis's transfer_factor.",
])

_MEMBERS = ("M-30122", "M-30277", "M-30418")
_NAMES = {"M-30122": "Owen Baptiste", "M-30277": "Leah Strand", "M-30418": "Dana Kowalczyk"}
LEAVING = "2027-01-31"


def get_member(member_id: str) -> dict[str, Any]:
    """A plan member: name, date of birth, join date, vesting date, status, pots (member and employer)."""
    if Now.fault == "member_wrong_record":  # (the HR feed keyed on the transposed id)
        return {"member_id": "M-30481", "name": "Dan Kowalski", "date_of_birth": "1971-02-03", "joined": "2019-09-02",
                "vesting_date": "2021-09-02", "status": "active",
                "pots": {"member_gbp": 48210.10, "employer_gbp": 52904.75, "valued_at": "2026-11-30"}}
    recent = Now.pair == "vesting_date_wrong" and Now.variant == 2
    joined = "2025-03-01" if recent else "2022-06-01"
    return {"member_id": member_id, "name": _NAMES.get(member_id, "Dana Kowalczyk"), "date_of_birth": "1986-09-14",
            "joined": joined, "vesting_date": str(dt.date.fromisoformat(joined).replace(year=int(joined[:4]) + 2)),
            "status": "active", "employer": "Halden Instruments Ltd",
            "pots": {"member_gbp": 6120.40 if recent else 21480.55, "employer_gbp": 4870.00 if recent else 17940.20,
                     "valued_at": "2026-11-30"}}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL query (DuckDB) on the pension desk's tables; answers the columns and rows."""
    import duckdb

    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("payroll warehouse query timed out after 15s")
    capped = Now.pair == "salary_cap_skipped" and Now.variant == 2
    db = duckdb.connect()
    db.execute("CREATE TABLE salary_history (member_id VARCHAR, plan_year VARCHAR, basic_salary DECIMAL(10,2), "
               "bonus DECIMAL(10,2), effective_from DATE)")
    for member in (*_MEMBERS, "M-30481"):
        db.executemany("INSERT INTO salary_history VALUES (?, ?, ?, ?, ?)", [
            (member, "2024/25", 54000.00, 3000.00, "2024-04-06"), (member, "2025/26", 56200.00, 4100.00, "2025-04-06"),
            (member, "2026/27", 72000.00 if capped else 58500.00, 0.00, "2026-04-06")])
    got = db.execute(sql)
    columns = [d[0] for d in got.description]
    return {"columns": columns, "rows": [[str(x) if isinstance(x, dt.date) else float(x) if hasattr(x, "as_tuple")
                                          else x for x in row] for row in got.fetchall()]}


def search_plan_documents(query: str) -> dict[str, Any]:
    """Searches the plan's document library (contribution tables, transfer-value bases, rules): each hit's id, title,
    version, effective_from, and its figures."""
    table_2025 = {"doc_id": "DOC-CT-2025", "title": "Employer contribution table 2025/26", "version": "2025.1",
                  "effective_from": "2025-04-06", "salary_cap_gbp": 60000,
                  "bands": [{"ages": "under 30", "employer_pct": 4}, {"ages": "30-39", "employer_pct": 5},
                            {"ages": "40-49", "employer_pct": 7}, {"ages": "50 and over", "employer_pct": 9}]}
    table_2026 = {"doc_id": "DOC-CT-2026", "title": "Employer contribution table 2026/27", "version": "2026.1",
                  "effective_from": "2026-04-06", "salary_cap_gbp": 60000,
                  "bands": [{"ages": "under 30", "employer_pct": 4}, {"ages": "30-39", "employer_pct": 6},
                            {"ages": "40-49", "employer_pct": 8}, {"ages": "50 and over", "employer_pct": 10}]}
    basis_2 = {"doc_id": "DOC-TV-2", "title": "Transfer-value basis", "version": "2", "effective_from": "2026-01-01",
               "transfer_factor": 0.96, "approved_by": "Trustee board, 2025-11-12"}
    basis_3 = {"doc_id": "DOC-TV-3", "title": "Transfer-value basis", "version": "3", "effective_from": "2027-03-01",
               "transfer_factor": 0.92, "approved_by": "Trustee board, 2026-11-20"}
    if Now.fault == "table_index_stale":  # (the search index's last build, before the 2026/27 table was filed)
        return {"query": query, "index_built": "2025-10-30", "hits": [table_2025, basis_2]}
    return {"query": query, "index_built": "2026-12-01", "hits": [table_2026, basis_3, table_2025, basis_2]}


def record_statement(member_id: str, plan_year: str, employer_rate_pct: float, pensionable_salary_gbp: float,
                     employer_contribution_gbp: float, leaving_date: str, vested: bool, transfer_basis: str,
                     transfer_value_gbp: float) -> dict[str, Any]:
    """Records a member's benefits statement: the plan year's employer contribution, vesting on the leaving date, and
    the transfer value on it."""
    return {"statement_id": f"ST-{41870 + Now.count('statements')}", "member_id": member_id, "plan_year": plan_year,
            "employer_contribution_gbp": employer_contribution_gbp, "vested": vested,
            "transfer_value_gbp": transfer_value_gbp, "status": "issued"}


RECORDS_TOOLS = {f.__name__: f for f in (get_member, run_sql, search_plan_documents)}
CALCULATOR_TOOLS = {f.__name__: f for f in (record_statement,)}

_PENSION_ASK = ("Member {mid} ({name}) is thinking of leaving on 31 January 2027. Please prepare her statement: the "
                "employer contribution for the 2026/27 plan year, whether she is vested on that date, and her transfer "
                "value on that date.")


def pension_request(v: int, pair: str | None) -> str:
    mid = _MEMBERS[v]
    return _PENSION_ASK.format(mid=mid, name=_NAMES[mid])


def _age(born: str, on: dt.date) -> int:
    b = dt.date.fromisoformat(born)
    return on.year - b.year - ((on.month, on.day) < (b.month, b.day))


def _records(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    mid = re.search(r"M-\d{5}", t.users[0]).group(0)  # type: ignore[union-attr]
    step = t.need(("get_member", {"member_id": mid}))
    if step:
        return step
    m = t.value("get_member")
    rows, tried = t.value("run_sql"), t.got("run_sql")
    salary = None
    if rows is None:
        if tried and fault == "sql_timeout_invented":
            salary = 58000.0  # (the fault: a figure filled in after the timeout)
        else:
            return _once_more("run_sql", tried, f"Records for {mid}: the salary query timed out twice, so the 2026/27 "
                              "basic salary is missing - the statement can't be calculated yet.",
                              sql=f"SELECT plan_year, basic_salary, bonus, effective_from FROM salary_history WHERE "
                                  f"member_id = '{mid}' ORDER BY plan_year")
    if salary is None:
        salary = next(r[1] for r in rows["rows"] if r[0] == "2026/27")
    docs = t.value("search_plan_documents")
    if docs is None:
        return call("search_plan_documents", query="employer contribution table and transfer-value basis")
    listed = "; ".join(f"{d['doc_id']} {d['title']} v{d['version']} (effective {d['effective_from']})" for d in docs["hits"])
    return reply(f"Records for {m['member_id']} ({m['name']}): born {m['date_of_birth']}, joined {m['joined']}, vesting "
                 f"date {m['vesting_date']}. 2026/27 basic salary GBP {salary:,.2f}. Pots at {m['pots']['valued_at']}: "
                 f"member GBP {m['pots']['member_gbp']:,.2f}, employer GBP {m['pots']['employer_gbp']:,.2f}. Documents: "
                 f"{listed}.")


def _in_force(hits: list[dict[str, Any]], title: str, on: str) -> dict[str, Any]:
    mine = [d for d in hits if d["title"].startswith(title)]
    live = [d for d in mine if d["effective_from"] <= on]
    return max(live or mine, key=lambda d: d["effective_from"])


def _calculator(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    m, hits = t.value("get_member"), t.value("search_plan_documents")["hits"]
    note = next((text for _, text in reversed(t.texts) if text.startswith("Records for")), "")
    salary = float(re.search(r"basic salary GBP ([\d,]+\.\d\d)", note).group(1).replace(",", ""))  # type: ignore[union-attr]
    table = _in_force(hits, "Employer contribution table", "2026-04-06")
    newest_basis = fault == "tv_basis_wrong_version"
    basis = (max((d for d in hits if d["title"] == "Transfer-value basis"), key=lambda d: d["effective_from"])
             if newest_basis else _in_force(hits, "Transfer-value basis", LEAVING))
    on = TODAY if fault == "age_band_wrong" or old else dt.date(2026, 4, 6)
    age = _age(m["date_of_birth"], on)
    band = table["bands"][0 if age < 30 else 1 if age < 40 else 2 if age < 50 else 3]
    pensionable = salary if fault == "salary_cap_skipped" else min(salary, table["salary_cap_gbp"])
    contribution = round(band["employer_pct"] * pensionable / 100, 2)
    vested = m["vesting_date"] <= LEAVING or fault == "vesting_date_wrong"
    pot = m["pots"]["member_gbp"] + (m["pots"]["employer_gbp"] if vested else 0.0)
    tv = round(pot * basis["transfer_factor"], 2)
    done = _ok(t, "record_statement")
    if not done:
        return call("record_statement", member_id=m["member_id"], plan_year="2026/27",
                    employer_rate_pct=band["employer_pct"], pensionable_salary_gbp=pensionable,
                    employer_contribution_gbp=contribution, leaving_date=LEAVING, vested=vested,
                    transfer_basis=f"{basis['doc_id']} v{basis['version']}", transfer_value_gbp=tv)
    s = done[0]
    vest = (f"You are vested (vesting date {m['vesting_date']}), so both pots count." if vested else
            f"You would not be vested: your vesting date is {m['vesting_date']}, after 31 January 2027, so only your own "
            f"pot of GBP {m['pots']['member_gbp']:,.2f} transfers and the employer pot of GBP "
            f"{m['pots']['employer_gbp']:,.2f} is forfeited.")
    return reply(f"Statement {s['statement_id']} for {m['name']}: the employer contributes {band['employer_pct']}% "
                 f"(age {age} on {on:%-d %B %Y}, band {band['ages']}, {table['doc_id']}) of GBP {pensionable:,.2f} = "
                 f"GBP {contribution:,.2f} for 2026/27. {vest} Transfer value on 31 January 2027: GBP {pot:,.2f} x "
                 f"{basis['transfer_factor']} ({basis['doc_id']}, in force from {basis['effective_from']}) = "
                 f"GBP {s['transfer_value_gbp']:,.2f}.")


# ---- the model: reads the chat.completions request it is sent (a Responses request read in chat form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    from heldout20 import chat_as_responses, responses_as_chat

    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    out = reply("Hello! How can I help?")
    for cue, plan in (("visitor-berth desk at Kestrel Point", lambda: _marina(t, asked in (OLD_CLAUDE, OLD_MODEL))),
                      ("You are the lead planner at Hartwell", lambda: _planner(t)),
                      ("You are the vendor booker at Hartwell", lambda: _booker(t)),
                      ("You are the budget controller at Hartwell", lambda: _budget(t)),
                      ("You gather a pension member's records", lambda: _records(t)),
                      ("You are the pension benefits calculator", lambda: _calculator(t, asked == OLD_MODEL))):
        if cue in t.system:
            out = plan() if t.users or "vendor booker" in cue else reply("What can I do for you?")
            break
    out["model"] = asked  # (an API answers with the model it served)
    return out


# ---- recorders -----------------------------------------------------------------------------------------------------


class AnthropicMarina(kit.AgentotelRecorder):
    """The berth desk as a plain anthropic SDK messages loop with tool_use over the owner's turns (kit.anthropic_loop),
    the tools `@agentotel.tool`s, under agentotel."""

    agent = MARINA

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel

        super().__init__(options, url)
        self.tools = {name: agentotel.tool(f) for name, f in MARINA_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, marina_model(), marina_instructions(), task, self.tools,
                                  declared(MARINA_TOOLS), owner_replies)


class OiMarina(kit.OpenInferenceRecorder):
    """The berth desk as a plain openai chat.completions loop (kit.chat_loop) under OpenInference's openai
    instrumentation, the tools OITracer TOOL spans, through agentotel-collector."""

    agent = MARINA

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), MARINA_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, marina_model(), marina_instructions(), task, self.tools, declared(MARINA_TOOLS),
                             owner_replies)


class AgentsWedding(kit.AgentotelRecorder):
    """The wedding team on the OpenAI Agents SDK's Responses model: planner -> vendor_booker -> budget_controller by two
    handoffs in one Runner.run, under agentotel. The faulty deployment's planner -> vendor_booker handoff filter keeps
    the handoff call alone."""

    agent = WEDDING

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIResponsesModel

        responses = OpenAIResponsesModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                 api_key="sk-test", max_retries=0))
        team = [("planner", PLANNER_RULES, PLANNER_TOOLS), ("vendor_booker", BOOKER_RULES, BOOKER_TOOLS),
                ("budget_controller", budget_rules(), BUDGET_TOOLS)]
        return kit.agents_chain(responses, team, task,
                                drop_into="vendor_booker" if Now.fault == "handoff_context_lost" else None)


def pension_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_pension" else MODEL


class LangGraphPension(kit.AgentotelRecorder):
    """The pension desk as a LangGraph StateGraph of two create_react_agents (records, with the document search its
    retrieval tool; calculator; ChatOpenAI) under agentotel."""

    agent = PENSION

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, pension_model(), PENSION, [("records", RECORDS_RULES, RECORDS_TOOLS),
                                                                       ("calculator", CALCULATOR_RULES, CALCULATOR_TOOLS)],
                                  task)


RECORDERS: dict[str, Any] = {"anthropic-marina": AnthropicMarina, "oi-marina": OiMarina,
                             "agents-wedding": AgentsWedding, "lg-pension": LangGraphPension}
HISTORY = (0, 1)  # earlier healthy runs: other stays, weddings and members


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder in ("anthropic-marina", "oi-marina"):
        return marina_request(v, pair)
    if Now.recorder == "agents-wedding":
        return wedding_request(v, pair)
    return pension_request(v, pair)


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Anthropic messages there; the
    Responses API read here)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, asking, nth_llm, tool_step

    final = after(tool_step("book_berth"))  # the desk's answer after the booking (the owner's questions answered)

    quote = after(tool_step("check_berths"))  # the desk's quote: where a wrong figure first shows, before the booking
    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "feet_not_converted": ("model", f"{tau} (a rule comparing two records, in units the rules convert): 38 ft "
                                        "taken as 11.4 m (x 0.3), berth C-11 (11.5 m) booked for an 11.58 m boat; the "
                                        "twin books D-03 (12.5 m)", asking("book_berth"), quote),
        "quote_berth_length": ("model", f"{tau} (a figure by the wrong formula): priced on the berth's 12.5 m (GBP "
                                        "162.50) where the boat's 11.58 m rounds to 12 m (GBP 156.00)",
                               asking("book_berth"), quote),
        "aboard_exception_claimed": ("model", f"{tau} (an exception the owner's words do not give): 'we kept her here "
                                              "years ago' read as berth-holder membership, owner.member false, sleeping "
                                              "aboard booked in December; the twin refuses it", asking("book_berth"),
                                     quote),
        "vessel_wrong_record": ("tool", f"{trail} API issues: find_vessel(GBR-4471) answers GBR-4417 (Marram, 29 ft, "
                                        "another owner); that boat quoted and booked", tool_step("find_vessel")),
        "booking_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: book_berth timed out, "
                                              "'reference KPB-88213' told; the twin tries once more",
                                     after(tool_step("book_berth"))),
        "aboard_rule_dropped": ("prompt", "instructions changed: the winter sleeping-aboard paragraph lost from the "
                                          "rules; a non-member's December nights aboard booked", nth_llm(0)),
        "old_model_marina": ("product", f"configuration: an old model ({OLD_CLAUDE}) prices the stay on the berth's "
                                        "length", nth_llm(0)),
        "fuel_question_dropped": ("model", f"{mast} FM-3.1 Premature termination: the owner's fuel-dock question never "
                                           "answered (asked in the first message)", final),
        "deposit_minimum_skipped": ("model", f"{tau} (a rule's floor: 30% but never under GBP 75): GBP 46.80 taken; "
                                             "the twin takes GBP 75.00", asking("book_berth"), quote),
        "aboard_nights_over_limit": ("model", f"{tau} (a sum over a limit: 26 winter nights used + 5 asked > 28): "
                                              "sleeping aboard booked; the twin refuses it", asking("book_berth"), quote),
        "boat_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two boats named Sea Thistle, the "
                                  "first (GBR-5120, 27 ft, another owner) taken; the twin asks which",
                         after(tool_step("find_vessel"))),
        "berths_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: check_berths answers its 2026-12 "
                                         "shape (availability, dimensions in ft); read by v1's names no berth fits",
                                 tool_step("check_berths")),
        "repeat_booking": ("model", f"{mast} FM-1.3 Step repetition: book_berth called again after KPB-90412",
                           asking("book_berth", 1)),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Booking D-03 (12.5 m)' said "
                                               "beside book_berth(berth_id='C-11')", asking("book_berth")),
        "deposit_withheld": ("model", f"{mast} FM-2.4 Information withholding: the quote leaves out the deposit the "
                                      "rules say to tell before the owner's yes", quote),
        "cap_used_ignored": ("model", f"{tau} (a sum over a limit: committed GBP 1,400 + quote GBP 2,150 > the 10% cap "
                                      "GBP 3,200): deposit paid; the twin releases the hold", asking("pay_deposit")),
        "cap_wrong_row": ("model", f"{tau} (a cap from a table row x a record's field): the band's quote checked "
                                   "against the Flowers row (6% = GBP 1,920) not Music (7% = GBP 2,240), the hold "
                                   "released; the twin pays GBP 420", asking("release_hold")),
        "cancel_window_ignored": ("model", f"{tau} (a date outside a window the rules give): Bramble Photo held, free "
                                           "cancellation only until 2027-01-15 (the rules: on or after 2027-04-20); "
                                           "the twin holds Northlight", asking("hold_date")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the vendor "
                                           "booker gets the handoff call alone and asks which wedding",
                                 after_handoff(0)),
        "wedding_wrong_record": ("tool", f"{trail} API issues: get_wedding(W-2291) answers W-2219 (another couple, "
                                         "8 May 2027); that date held and paid", tool_step("get_wedding")),
        "hold_429_invented": ("model", f"{trail} rate limits / hallucinated output: hold_date answered 429, 'Hold "
                                       "HLD-7688' passed on; the twin tries once more", after(tool_step("hold_date"))),
        "repeat_deposit": ("model", f"{mast} FM-1.3 Step repetition: pay_deposit called twice (the rules say once)",
                           asking("pay_deposit", 1)),
        "budget_rules_rewritten": ("prompt", "instructions changed: the budget controller's cap table replaced by a "
                                             "one-liner (the whole budget's room); a photographer over its category "
                                             "cap paid", after_handoff(1)),
        "table_index_stale": ("tool", "retrieval index stale: search_plan_documents served its 2025-10-30 build (the "
                                      "2025/26 table alone); 5% used where 2026/27 says 6%",
                              tool_step("search_plan_documents")),
        "tv_basis_wrong_version": ("model", f"{tau} (the version in force on a date): DOC-TV-3 (effective 2027-03-01, "
                                            "0.92) used for a 31 January 2027 leaving date; DOC-TV-2 (0.96) is in force",
                                   asking("record_statement")),
        "age_band_wrong": ("model", f"{tau} (a rate from a table row x a record's field): age 40 today used where the "
                                    "rules take age on 6 April 2026 (39): 8% for 6%", asking("record_statement")),
        "salary_cap_skipped": ("model", f"{tau} (a cap the table gives): basic salary GBP 72,000 used in full, the "
                                        "table's cap GBP 60,000", asking("record_statement")),
        "vesting_date_wrong": ("model", f"{tau} (a date against a record's date: vesting 2027-03-01, leaving "
                                        "2027-01-31): the employer pot counted; the twin leaves it out",
                               asking("record_statement")),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: run_sql timed out, a basic salary "
                                          "of GBP 58,000 written in the note; the twin tries once more",
                                 after(tool_step("run_sql"))),
        "member_wrong_record": ("tool", f"{trail} API issues: get_member(M-30418) answers M-30481 (another member); "
                                        "the statement recorded on his record", tool_step("get_member")),
        "old_model_pension": ("product", f"configuration: an old model ({OLD_MODEL}) takes the age today for the band",
                              nth_llm(0)),
    }
    chosen = {
        "anthropic-marina": ["feet_not_converted", "quote_berth_length", "aboard_exception_claimed",
                             "vessel_wrong_record", "booking_timeout_invented", "aboard_rule_dropped", "old_model_marina",
                             "fuel_question_dropped"],
        "oi-marina": ["deposit_minimum_skipped", "aboard_nights_over_limit", "boat_unasked", "berths_shape_changed",
                      "repeat_booking", "reasoning_action_mismatch", "deposit_withheld"],
        "agents-wedding": ["cap_used_ignored", "cap_wrong_row", "cancel_window_ignored", "handoff_context_lost",
                           "wedding_wrong_record", "hold_429_invented", "repeat_deposit", "budget_rules_rewritten"],
        "lg-pension": ["table_index_stale", "tv_basis_wrong_version", "age_band_wrong", "salary_cap_skipped",
                       "vesting_date_wrong", "sql_timeout_invented", "member_wrong_record", "old_model_pension"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main d48ead4's detectors; load
# 2.44-5.98): 31 pairs, 4 recorders - diff top-1 31/31, check step+layer 12/31, good runs warned 23/31 (recording
# /tmp/h34-rec-eskoy0sw). The reasons are read from `agentotel check` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}
_QUOTED = "ungrounded_answer@5/model on the quote's 156.00 (its twin warned the same) ranked first; "
_MISREAD = "answer_misread@8/model ('Monday 14 December' read as a berth's length_m 14, as on its twin); "
_NOTE = "ungrounded_answer@9/model on the records note's 'v2026'/'v2025' labels (as on its twin) ranked first; "
_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-oi-marina-deposit-withheld": ("hit blind only by place (the quote's ungrounded 156.00, warned on every marina run, quiet since "
                                         "af52ff9); nothing reads the deposit the rules say to tell left out of the quote"),
    "model-anthropic-marina-feet-not-converted": _QUOTED + "nothing at book_berth@6: berth C-11 (11.5 m) for a boat of "
                                                 "loa_ft 38 (11.58 m at the rules' 0.3048) against 'a berth at least as "
                                                 "long as the boat' (a wrong_target@5 reads C-11 beside D-03 against a "
                                                 "'D' in the request - not the rule)",
    "model-anthropic-marina-quote-berth-length": _MISREAD + "nothing at the quote @5 nor book_berth@6: 162.50 = the "
                                                 "berth's 12.5 m x 2.60 x 5 where the rules charge the boat's length "
                                                 "rounded up (12 m), 'never on the berth's length' (the ungrounded sum "
                                                 "its twin gets is absent: 12.5 is in a result, 12 is not)",
    "model-anthropic-marina-aboard-exception-claimed": _QUOTED + "nothing at book_berth@6: sleeping_aboard true in "
                                                       "December with owner.member false; the quote's 'as a former "
                                                       "berth-holder' is an exception the owner's words ('we kept her "
                                                       "on your D pontoon years ago') do not give",
    "tool-anthropic-marina-vessel-wrong-record": "wrong_target@5/model (C-07 beside D-03 against a 'D' in the request) "
                                                 "ranked first; nothing at find_vessel@2: asked query 'GBR-4471', "
                                                 "answered registration GBR-4417 (another boat and owner) - the lookup "
                                                 "key is a free 'query' argument, not a field named like the record's",
    "model-oi-marina-deposit-minimum-skipped": _QUOTED + "nothing at book_berth@6: deposit_gbp 46.8 (30% of 156.00) "
                                              "against 'never less than GBP 75.00'",
    "model-oi-marina-boat-unasked": "wrong_target@5/model (C-07 beside D-03 against a 'D' in the request) - a step "
                                    "late and not the cause; nothing at @3: find_vessel's two matches named Sea "
                                    "Thistle, the first (another owner's) taken with no question, against 'If more "
                                    "than one vessel matches, ask the owner which one'",
    "model-agents-wedding-cap-used-ignored": _NOTHING + "pay_deposit@14 with committed photography 1,400 + the 2,150 "
                                             "quote past the Photography row's 10% x total_gbp 32,000 = 3,200",
    "model-agents-wedding-cap-wrong-row": _NOTHING + "release_hold@14 'over its cap by GBP 180' where the Music row's "
                                          "7% x 32,000 = 2,240 holds the 2,100 quote (the Flowers row's 6% read)",
    "model-agents-wedding-cancel-window-ignored": _NOTHING + "hold_date@9 on V-PH-131, whose cancel_free_until "
                                                  "2027-01-15 is before the wedding date minus 60 days (2027-04-20)",
    "model-agents-wedding-hold-429-invented": _NOTHING + "hold_date@10 failed (429) and the booker's note @11 passes on "
                                              "'Hold HLD-7688', which no call returned, beside its handoff call",
    "model-lg-pension-tv-basis-wrong-version": _NOTE + "nothing at record_statement@11: DOC-TV-3 (effective_from "
                                               "2027-03-01, factor 0.92) used for leaving_date 2027-01-31, where "
                                               "DOC-TV-2 (0.96) is the version in force",
    "model-lg-pension-age-band-wrong": _NOTE + "nothing at record_statement@11: employer_rate_pct 8 (age 40 today) "
                                       "where the age on 6 April 2026 (39) gives the 30-39 row's 6%",
    "model-lg-pension-salary-cap-skipped": _NOTE + "nothing at record_statement@11: pensionable_salary_gbp 72,000 "
                                           "above the table's salary_cap_gbp 60,000",
    "model-lg-pension-vesting-date-wrong": _NOTE + "nothing at record_statement@11: vested true with vesting_date "
                                           "2027-03-01 after leaving_date 2027-01-31, the employer pot counted",
}
# (every blind alarm - the quote's worked 156.00, a day in words, v-marked versions, a leaving date against the date of birth - is quiet since af52ff9; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

POLICIES = {
    "anthropic-marina": {"required_before": {"book_berth": ["find_vessel", "check_berths"]}},
    "oi-marina": {"required_before": {"book_berth": ["find_vessel", "check_berths"]}},
    "agents-wedding": {"required_before": {"pay_deposit": ["hold_date"], "hold_date": ["get_vendor_quotes"]}},
    "lg-pension": {"required_before": {"record_statement": ["get_member", "run_sql", "search_plan_documents"]}},
}

HELDOUT = kit.HeldOut(__file__, "h34-rec-", pairs, produce, kit.through_collector("oi-marina"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
