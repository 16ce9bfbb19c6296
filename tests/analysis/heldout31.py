"""A thirty-first held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/,
git log, or the detectors' tests): a bike-share operator's support desk talking with a rider over several turns under a
written policy, a wind-farm maintenance team (an inspector handing a turbine to a work planner, who hands the crew and
part to a dispatcher) and a journal editorial office recording a decision from versioned manuscripts, reviews with
conflicts of interest and a similarity-check table in DuckDB, run through real SDKs and frameworks.

    python tests/analysis/heldout31.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout31.py --score DIR [...]       # the runs a call left in DIR, scored again

Spokewise Bikes' support desk (find_rider, get_ride, refund_ride, get_membership, pause_membership) serves a rider by
written rules (email and the card's last four digits before anything; a disputed ride refunded only for the minutes the
GPS trace shows the bike docked, at the plan's per-minute rate, to the original payment method; pauses at most 60 days
in a membership year; a failure tried once more, never a refund id refund_ride didn't return). Northgale Wind's
maintenance team: an inspector (get_turbine, get_wind, issue_lockout: no climb above 12 m/s hub wind, a lockout permit
before any handover), a work planner (get_crews, book_work: a crew holding every qualification the work needs) and a
dispatcher (get_stock, dispatch_crew: the part from the turbine's site, the permit id on the dispatch). The Journal of
Applied Hydrology's editorial office (get_manuscript, search_reviews, get_reviewer, run_sql over a DuckDB
similarity_checks table, record_decision) records a decision by a markdown table of reviewer recommendations, on the
latest version only, a reviewer sharing an institution with an author not counted, similarity over 25% never accepted,
the embargo the later of the authors' request and decision + 14 days. Each recorder in a process of its own:

- `genai-bikes` (support desk): a google-genai generate_content loop with function declarations, `@agentotel.tool`s,
  under `agentotel.instrument()`, the rider's replies scripted;
- `lg-wind` (maintenance team): a LangGraph StateGraph of three `create_react_agent` nodes, under agentotel;
- `pai-journal` (editorial office): a pydantic-ai Agent with plain tools, under agentotel only;
- `tl-journal` (editorial office): a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, through agentotel-collector.

Ground truth is located on the recorded faulty run by what its steps did (heldout.py's locators). Good twins: a
clarifying question asked (which ride), a refund computed from the plan's own rate (52 min x $0.15 = $7.80) to the card,
a timeout retried once, a pause refused with the days left offered, a climb refused for wind, a qualified crew chosen
over the first listed, a similarity score over 25% turned into major_revision, an editor's COI waiver applied.

Built and scored blind, once (main's HEAD 5a88e31fd50bba5bd9d1831155b12b4eb6488a79, the branch rebased onto it; the
set's commit touches only tests; agentotel/analysis/, git log and the detectors' tests unread; load average 2.75 at the
start, 4.72 at the end, other helpers running; recording /tmp/h31-rec-qaox95gb): 26 pairs, 4 recorders (google-genai,
a LangGraph StateGraph of three agents, pydantic-ai under agentotel alone, OpenLLMetry through the collector) - diff
top-1 26/26, check step+layer 12/26, good runs with a warning 1/26. Check's hits: outside the model 9/9 (two
instructions rewritten, two old models, two APIs answering another record, a stock API's drift, a stale review index,
the planner's handover reset), a repeated dispatch and a repeated decision, and coi_review_counted - a hit by chance:
its finding (wrong_target, 'record_decision with 2 where the words say 418', the version read as a sibling id) is not
the conflict of interest, and the same finding warns a good run. Its 14 misses are in CHECK_MISSED, each with why.

After the blind score (session 28, readers written since): CHECK_MISSED's pai-journal similarity_over_limit and
reviewer_429_assumed hit and dropped; the lists name what is missed now.
"""

from __future__ import annotations

import datetime as dt
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
BIKES, WIND, JOURNAL = "spokewise-support", "northgale-maintenance", "jah-editorial"
TODAY = "2026-12-05"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the bike-share desk ------------------------------------------------------------------------------------------

_REFUND = ("**Ride disputes.** A disputed ride is refunded only for the minutes after the GPS trace shows the bike "
           "inside a dock (`gps.docked_at`) - billed minutes minus GPS minutes, at the rider plan's `per_minute_usd`. "
           "Refunds go back to the original payment method of the ride, never to wallet credit unless the rider asks "
           "for credit.")
_REFUND_OLD = "**Ride disputes.** If a rider disputes a ride, refund the whole fare."


def bikes_instructions() -> str:
    refund = _REFUND_OLD if Now.fault == "refund_rule_rewritten" else _REFUND
    return "\n\n".join([
        "You are Spokewise Bikes' rider support agent. Today is Saturday 5 December 2026.",
        "**Identity.** Before you look up anything, ask the rider for the email on their account and the last four "
        "digits of the card on file; find_rider must show the same last four, otherwise stop.",
        refund,
        "**Membership pauses.** A membership can be paused for at most 60 days in a membership year in total "
        "(`pause_days_used` counts this year's). Only pause if the days used plus the days asked stay within 60; "
        "otherwise say how many days are left.",
        "**Failures.** If a tool errors or times out, call it once more. If it fails again, tell the rider nothing was "
        "refunded yet. Never quote a refund id that refund_ride didn't return.",
    ])


def bikes_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_bikes" else GEMINI


RIDER_EMAIL, LAST4 = "tomas.reyes@proton.me", "4417"


def find_rider(email: str) -> dict[str, Any]:
    """The rider account with this email: rider id, name, plan, card on file (last four) and recent rides."""
    if email.lower() != RIDER_EMAIL:
        return {"riders": []}
    return {"rider_id": "R-55102", "name": "Tomás Reyes", "plan": {"name": "Commuter", "per_minute_usd": 0.15},
            "card": {"brand": "visa", "last4": LAST4}, "recent_rides": [
                {"ride_id": "RD-88093", "date": "2026-12-04", "billed_minutes": 18, "fare_usd": 2.70},
                {"ride_id": "RD-88120", "date": "2026-12-03", "billed_minutes": 74, "fare_usd": 11.10}]}


def get_ride(ride_id: str) -> dict[str, Any]:
    """A ride: bike, start and end stations, billed minutes, fare, payment, and the GPS trace summary."""
    if Now.fault == "ride_wrong_record":  # (the rides cache answered the previous ride of the same bike)
        ride_id = "RD-88061"
        return {"ride_id": ride_id, "rider_id": "R-30448", "bike": "B-2207", "billed_minutes": 38, "fare_usd": 5.70,
                "payment": {"method": "card", "last4": "9031", "charge_id": "CH-77105"},
                "gps": {"docked_at_minute": 12, "dock": "Harbor St"}, "status": "completed"}
    if ride_id == "RD-88093":
        return {"ride_id": ride_id, "rider_id": "R-55102", "bike": "B-1184", "started": "2026-12-04T17:40:00Z",
                "start_station": "Quay Sq", "end_station": "Mill Ave", "billed_minutes": 18, "fare_usd": 2.70,
                "payment": {"method": "card", "last4": LAST4, "charge_id": "CH-77301"},
                "gps": {"docked_at_minute": 15, "dock": "Mill Ave", "lock_signal": "ok"}, "status": "completed"}
    return {"ride_id": ride_id, "rider_id": "R-55102", "bike": "B-2207", "started": "2026-12-03T08:02:00Z",
            "start_station": "Mill Ave", "end_station": "Harbor St", "billed_minutes": 74, "fare_usd": 11.10,
            "payment": {"method": "card", "last4": LAST4, "charge_id": "CH-77214"},
            "gps": {"docked_at_minute": 22, "dock": "Harbor St", "lock_signal": "missed"}, "status": "completed"}


def refund_ride(ride_id: str, amount_usd: float, destination: str) -> dict[str, Any]:
    """Refunds part of a ride's fare to a destination: original_payment or wallet_credit."""
    if Now.pair == "refund_timeout_invented" and Now.count("refund_ride") == 1:
        raise TimeoutError("payments gateway did not answer within 10s")
    return {"refund_id": "RF-40912", "ride_id": ride_id, "amount_usd": amount_usd, "destination": destination,
            "status": "issued"}


def get_membership(rider_id: str) -> dict[str, Any]:
    """A rider's membership: plan, year start, status and pause days used this membership year."""
    used = 45 if Now.pair == "pause_over_limit" else 10
    return {"rider_id": rider_id, "plan": "Commuter annual", "year_start": "2026-03-01", "status": "active",
            "pause_days_used": used, "pauses": [{"from": "2026-07-01", "days": used}]}


def pause_membership(rider_id: str, days: int) -> dict[str, Any]:
    """Pauses a membership for a number of days from today."""
    return {"rider_id": rider_id, "paused_days": days, "resumes": "2027-01-04", "status": "paused"}


BIKES_TOOLS = {f.__name__: f for f in (find_rider, get_ride, refund_ride, get_membership, pause_membership)}

_RIDER = [("email", f"It's {RIDER_EMAIL}, card ending {LAST4}."),
          ("Which ride", "The long one, RD-88120 on Thursday."),
          ("anything else", "No, that's everything, thanks.")]
BIKES_REQUEST = ("Hi - ride RD-88120 on Thursday charged me for 74 minutes but I docked the bike at Harbor St after about "
                 "20 minutes, the lock just didn't click. Can I get that fixed? Also I'd like to pause my membership "
                 "for 30 days over the holidays.")
BIKES_HISTORY = ["Hello, RD-88120 overcharged me - I docked at Harbor St early. And please pause my membership 30 days.",
                 "Hi, ride RD-88120 was billed too long (docked at Harbor St). Could you also pause me for 30 days?"]


def _bikes(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's everything" in u for u in t.users[1:]):
        return reply("You're welcome, Tomás - ride safe!")
    email, last4 = re.search(r"[\w.]+@[\w.]+\.\w+", said), re.search(r"ending (\d{4})", said)
    if not (email and last4):
        return reply("I can help with both. First, what's the email on your Spokewise account, and the last four "
                     "digits of the card on file?")
    step = t.need(("find_rider", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    rider = t.value("find_rider")
    if rider.get("card", {}).get("last4") != last4.group(1):
        return reply("Sorry, those details don't match the account, so I can't go on.")
    named = re.search(r"RD-\d{5}", said)
    if not named and fault != "which_ride_unasked":
        rides = ", ".join(f"{r['ride_id']} ({r['date']}, {r['billed_minutes']} min)" for r in rider["recent_rides"])
        return reply(f"Thanks, Tomás. Which ride do you mean? Your recent rides are {rides}.")
    ride_id = named.group(0) if named else rider["recent_rides"][0]["ride_id"]  # (the fault: the latest, unasked)
    step = t.need(("get_ride", {"ride_id": ride_id}))
    if step:
        return step
    ride, notes = t.value("get_ride"), []
    rate = rider["plan"]["per_minute_usd"]
    if "whole fare" in t.system or old:
        amount = ride["fare_usd"]
    else:
        amount = round((ride["billed_minutes"] - ride["gps"]["docked_at_minute"]) * rate, 2)
    destination = "wallet_credit" if fault == "refund_to_credit" else "original_payment"
    done, tried = t.value("refund_ride"), t.got("refund_ride")
    if not done and tried and fault == "refund_timeout_invented":  # (the fault: a refund id nobody returned)
        done = {"refund_id": "RF-40877", "amount_usd": amount}
    if not done:
        if len(tried) >= 2:
            return reply("The payments system isn't answering, so nothing has been refunded yet." + _ANYTHING)
        return call("refund_ride", "The payments gateway timed out - trying once more." if tried else
                    f"GPS shows the bike docked at minute {ride['gps']['docked_at_minute']} of "
                    f"{ride['billed_minutes']} billed.", ride_id=ride_id, amount_usd=amount, destination=destination)
    where = "to your wallet credit" if destination == "wallet_credit" else f"to your card ending {ride['payment']['last4']}"
    notes.append(f"I've refunded ${done['amount_usd']:.2f} {where} (refund {done['refund_id']}).")
    if fault == "premature_end_bikes":  # (the fault: the pause asked for is never looked at)
        return reply(" ".join(notes) + _ANYTHING)
    step = t.need(("get_membership", {"rider_id": rider["rider_id"]}))
    if step:
        return step
    m = t.value("get_membership")
    left = 60 - m["pause_days_used"]
    if (30 <= left or fault == "pause_over_limit" or old) and not t.value("pause_membership"):
        return call("pause_membership", rider_id=rider["rider_id"], days=30)
    if t.value("pause_membership"):
        notes.append("Your membership is paused for 30 days; it resumes on 4 January.")
    else:
        notes.append(f"I can't pause it for 30 days: you've used {m['pause_days_used']} of the 60 pause days this "
                     f"membership year, so {left} days are left - I can pause it for {left} if you like.")
    return reply(" ".join(notes) + _ANYTHING)


_ANYTHING = " Is there anything else I can help you with?"


# ---- the wind-farm team -------------------------------------------------------------------------------------------

INSPECTOR_RULES = "\n".join([
    "You are the turbine inspector on Northgale Wind's maintenance team.",
    "1. Read the turbine (get_turbine) and the site's hub-height wind (get_wind).",
    "2. Nobody climbs when the hub-height wind or gust is above 12 m/s. If it is, say 'No climb today' and why.",
    "3. Before you hand over, issue a lockout permit with issue_lockout - no work without one.",
    "4. Hand over with a note starting 'Inspected', with the turbine id, site, fault code, the permit id and the wind.",
])
PLANNER_RULES = "\n".join([
    "You plan turbine work for Northgale Wind. Work needs these qualifications:",
    "",
    "| Fault | Work | Qualifications every crew member needs |",
    "|---|---|---|",
    "| PIT-114 (pitch motor) | replace pitch motor | GWO-WAH, GWO-FA, HV-AP |",
    "| YAW-031 (yaw brake) | replace yaw brake pads | GWO-WAH, GWO-FA |",
    "",
    "Read the site's crews (get_crews) and book the work (book_work) with a crew in which every member holds every "
    "qualification, unexpired on the work date. Then answer with a note starting 'Planned', naming the booking, the "
    "crew, the permit id and 'Part: PART-NUMBER'. Part by fault: PIT-114 needs PM-4410; YAW-031 needs YB-220.",
])
DISPATCH_RULES = ("You dispatch crews for Northgale Wind. Check the part's stock at the turbine's site with get_stock; "
                  "dispatch only when the site has it in stock, else report that the part must be transferred first. "
                  "Call dispatch_crew once, with the permit id from the note. Report the dispatch id exactly as "
                  "dispatch_crew returned it.")

_TURBINES = {"WT-07": ("Cairnhill", "PIT-114"), "WT-12": ("Cairnhill", "YAW-031")}


def get_turbine(turbine_id: str) -> dict[str, Any]:
    """A turbine: site, model, status and its active fault."""
    site, code = _TURBINES[turbine_id]
    return {"turbine_id": turbine_id, "site": site, "model": "V117-4.2MW", "status": "stopped",
            "active_fault": {"code": code, "since": f"{TODAY}T05:14:00Z"}}


def get_wind(site: str) -> dict[str, Any]:
    """The site's current wind at hub height (m/s), mean and gust."""
    gust = 14.6 if Now.pair == "climb_over_wind" else 9.1
    return {"site": site, "measured_at": f"{TODAY}T06:50:00Z", "hub_height_m": 91,
            "wind": {"mean_ms": 8.2 if gust < 12 else 11.4, "gust_ms": gust}}


def issue_lockout(turbine_id: str, reason: str) -> dict[str, Any]:
    """Issues a lockout/tagout permit for a turbine."""
    return {"permit_id": f"LOTO-{turbine_id[-2:]}-3391", "turbine_id": turbine_id, "status": "active"}


def get_crews(site: str) -> dict[str, Any]:
    """The site's crews: members with their qualifications and expiry dates."""
    lapsed = "2026-11-30"
    return {"site": site, "crews": [
        {"crew_id": "CR-A", "members": [
            {"name": "I. Brodie", "quals": {"GWO-WAH": "2027-04-01", "GWO-FA": "2027-04-01", "HV-AP": "2027-02-10"}},
            {"name": "K. Moyo", "quals": {"GWO-WAH": "2027-06-01", "GWO-FA": "2027-06-01", "HV-AP": lapsed}}]},
        {"crew_id": "CR-B", "members": [
            {"name": "S. Lindqvist", "quals": {"GWO-WAH": "2027-08-01", "GWO-FA": "2027-08-01", "HV-AP": "2027-09-01"}},
            {"name": "P. Okafor", "quals": {"GWO-WAH": "2027-05-01", "GWO-FA": "2027-05-01", "HV-AP": "2027-03-15"}}]}]}


def book_work(turbine_id: str, crew_id: str, date: str, work: str) -> dict[str, Any]:
    """Books a turbine job for a crew on a date."""
    return {"booking_id": "JOB-7720", "turbine_id": turbine_id, "crew_id": crew_id, "date": date, "work": work}


def get_stock(part_number: str, site: str) -> dict[str, Any]:
    """A part's stock by site."""
    if Now.fault == "stock_shape_changed":  # (the inventory API's v2 rolled out under the dispatcher)
        return {"apiVersion": "2", "item": {"sku": part_number}, "locations": [
            {"loc": {"code": "CAIRN"}, "qty": {"available": 0, "reserved": 1}},
            {"loc": {"code": "DUNMOR"}, "qty": {"available": 3, "reserved": 0}}]}
    return {"part_number": part_number, "by_site": [{"site": "Cairnhill", "on_hand": 2}, {"site": "Dunmore", "on_hand": 3}]}


def dispatch_crew(booking_id: str, crew_id: str, permit_id: str, part_number: str) -> dict[str, Any]:
    """Dispatches a crew to a booked job with its permit and part."""
    n = Now.calls["dispatch"] = Now.calls.get("dispatch", 0) + 1
    return {"dispatch_id": f"DSP-{5500 + n}", "booking_id": booking_id, "crew_id": crew_id, "status": "en_route"}


INSPECTOR_TOOLS = {f.__name__: f for f in (get_turbine, get_wind, issue_lockout)}
PLANNER_TOOLS = {f.__name__: f for f in (get_crews, book_work)}
DISPATCH_TOOLS = {f.__name__: f for f in (get_stock, dispatch_crew)}
WIND_REQUEST = "WT-07 at Cairnhill tripped on a fault this morning. Inspect, plan and dispatch, please."
WIND_HISTORY = ["WT-12 at Cairnhill has stopped - please inspect, plan the job and dispatch a crew.",
                "Please handle WT-12 (Cairnhill): inspection, plan, dispatch."]
_NEEDS = {"PIT-114": (("GWO-WAH", "GWO-FA", "HV-AP"), "PM-4410", "replace pitch motor"),
          "YAW-031": (("GWO-WAH", "GWO-FA"), "YB-220", "replace yaw brake pads")}


def _inspector(t: Talk) -> dict[str, Any]:
    tid = re.search(r"\bWT-\d{2}\b", t.users[0]).group(0)
    step = t.need(("get_turbine", {"turbine_id": tid}))
    if step:
        return step
    turbine = t.value("get_turbine")
    step = t.need(("get_wind", {"site": turbine["site"]}))
    if step:
        return step
    wind = t.value("get_wind")["wind"]
    if wind["gust_ms"] > 12 and Now.fault != "climb_over_wind":
        return reply(f"No climb today on {tid}: hub-height gusts {wind['gust_ms']} m/s, above the 12 m/s limit. "
                     "Not handing over for dispatch; re-check the wind this afternoon.")
    permit = t.value("issue_lockout")
    if not permit:
        return call("issue_lockout", turbine_id=tid, reason=f"{turbine['active_fault']['code']} repair")
    return reply(f"Inspected {tid} at {turbine['site']}: fault {turbine['active_fault']['code']}, permit "
                 f"{permit['permit_id']}, hub wind {wind['mean_ms']} m/s gusting {wind['gust_ms']} m/s.")


def _planner(t: Talk) -> dict[str, Any]:
    note = t.holding("Inspected")
    if not note:
        if t.holding("No climb today"):
            return reply("Nothing to plan: the inspector stopped the climb for wind.")
        return reply("I have no inspection note - which turbine, what fault and which permit?")
    tid, site = re.search(r"WT-\d{2}", note).group(0), re.search(r" at (\w+):", note).group(1)
    code, permit = re.search(r"fault ([A-Z]{3}-\d{3})", note).group(1), re.search(r"LOTO-\S+?(?=,)", note).group(0)
    step = t.need(("get_crews", {"site": site}))
    if step:
        return step
    quals, part, work = _NEEDS[code]
    date = "2026-12-07"

    def fit(crew: dict[str, Any]) -> bool:
        return all(m["quals"].get(q, "") >= date for m in crew["members"] for q in quals)
    crews = t.value("get_crews")["crews"]
    crew = crews[0] if Now.fault == "unqualified_crew" else next(c for c in crews if fit(c))
    booked = t.value("book_work")
    if not booked:
        return call("book_work", turbine_id=tid, crew_id=crew["crew_id"], date=date, work=work)
    if Now.fault == "premature_end_wind":  # (the fault: the planner stops before its hand-over note)
        return reply(f"Booked {booked['booking_id']} for {tid}.")
    return reply(f"Planned {tid}: booking {booked['booking_id']} on {date}, crew {crew['crew_id']}, permit {permit}, "
                 f"site {site}. Part: {part}")


def _dispatcher(t: Talk) -> dict[str, Any]:
    note = t.holding("Planned")
    if not note:
        return reply("No plan reached me, so nothing was dispatched.")
    booking, crew = re.search(r"JOB-\d+", note).group(0), re.search(r"crew (CR-\w)", note).group(1)
    permit, part = re.search(r"LOTO-\S+?(?=,)", note).group(0), re.search(r"Part: (\S+)", note).group(1)
    site = re.search(r"site (\w+)", note).group(1)
    step = t.need(("get_stock", {"part_number": part, "site": site}))
    if step:
        return step
    stock = t.value("get_stock")
    on_hand = next((s["on_hand"] for s in stock.get("by_site", ()) if s["site"] == site), None)
    if on_hand is None:  # (v2's answer read by v1's names: nothing found taken as in stock - the slip a drift invites)
        on_hand = 1
    if on_hand < 1:
        return reply(f"{part} is not in stock at {site}; it must be transferred before dispatch.")
    done = [v for _, v in t.got("dispatch_crew") if isinstance(v, dict)]
    if not done or (Now.fault == "repeat_dispatch" and len(done) == 1):
        return call("dispatch_crew", booking_id=booking, crew_id=crew, permit_id=permit, part_number=part)
    return reply(f"Dispatched {crew} for {booking} with {part} from {site}: {done[-1]['dispatch_id']}.")


# ---- the editorial office -----------------------------------------------------------------------------------------

_COI = ("Conflicts of interest: before counting a review, read its reviewer with get_reviewer. A reviewer whose "
        "institution is the same as any author's institution on the manuscript has a conflict; their review is not "
        "counted (unless the handling editor waived it: coi_waived true on the review).")


def journal_instructions() -> str:
    rules = [
        "You are the editorial office assistant of the Journal of Applied Hydrology. Today is 2026-12-05.",
        "Decide only on the manuscript's latest version (highest `version` in get_manuscript); reviews of an earlier "
        "version do not count.",
        _COI,
        "Similarity: query the similarity_checks table with run_sql for the latest version. A score above 25 (per "
        "cent) means the manuscript cannot be accepted whatever the reviews say - the decision is major_revision.",
        "Decision by the counted recommendations:",
        "",
        "| Counted recommendations | Decision |",
        "|---|---|",
        "| all accept | accept |",
        "| any reject | reject |",
        "| otherwise | the most severe of minor_revision / major_revision recommended |",
        "",
        "Embargo (accept only): the later of the authors' requested embargo date and the decision date + 14 days.",
        "Record the decision once with record_decision. If a tool fails, try once more; never decide without the data.",
        "Reply with the decision, the reviews counted and any review left out and why.",
    ]
    if Now.fault == "instructions_rewritten":  # (the prompt trimmed into a new template; the COI paragraph lost)
        rules.remove(_COI)
    return "\n".join(rules)


def journal_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_journal" else MODEL


def get_manuscript(manuscript_id: str) -> dict[str, Any]:
    """A manuscript: title, authors with institutions, its versions (number, submitted date) and requested embargo."""
    if Now.fault == "manuscript_wrong_record":  # (the submissions API's cache answered a neighbouring id)
        return {"manuscript_id": "JAH-2026-0419", "title": "Karst spring recession under drought", "authors": [
            {"name": "L. Ferrante", "institution": "Univ. of Padova"}], "versions": [{"version": 1, "submitted": "2026-10-01"}],
            "requested_embargo": None, "status": "under_review"}
    return {"manuscript_id": manuscript_id, "title": "Groundwater recharge estimates from GRACE-FO downscaling",
            "authors": [{"name": "A. Mensah", "institution": "Univ. of Ghana"},
                        {"name": "J. Hartley", "institution": "Lancaster University"}],
            "versions": [{"version": 1, "submitted": "2026-06-11"}, {"version": 2, "submitted": "2026-10-29"}],
            "requested_embargo": "2026-12-10", "status": "under_review"}


def search_reviews(manuscript_id: str) -> dict[str, Any]:
    """The reviews of a manuscript: reviewer id, version reviewed, recommendation, submitted date, coi_waived."""
    if Now.fault == "review_index_stale":  # (the reviews index last rebuilt 2026-10-20: version 1's reviews only)
        return {"manuscript_id": manuscript_id, "index_built": "2026-10-20", "reviews": [
            {"review_id": "RV-1", "reviewer_id": "REV-301", "version": 1, "recommendation": "accept", "submitted": "2026-08-02", "coi_waived": False},
            {"review_id": "RV-2", "reviewer_id": "REV-318", "version": 1, "recommendation": "accept", "submitted": "2026-08-09", "coi_waived": False}]}
    third = "reject" if Now.pair in ("coi_review_counted", "instructions_rewritten", "old_model_journal",
                                     "reasoning_action_mismatch", "coi_waiver_ignored") else "accept"
    waived = Now.pair == "coi_waiver_ignored"
    return {"manuscript_id": manuscript_id, "index_built": "2026-12-04", "reviews": [
        {"review_id": "RV-1", "reviewer_id": "REV-301", "version": 1, "recommendation": "major_revision", "submitted": "2026-08-02", "coi_waived": False},
        {"review_id": "RV-7", "reviewer_id": "REV-301", "version": 2, "recommendation": "accept", "submitted": "2026-11-20", "coi_waived": False},
        {"review_id": "RV-8", "reviewer_id": "REV-344", "version": 2, "recommendation": "accept", "submitted": "2026-11-24", "coi_waived": False},
        {"review_id": "RV-9", "reviewer_id": "REV-350", "version": 2, "recommendation": third, "submitted": "2026-11-28", "coi_waived": waived}]}


_REVIEWERS = {"REV-301": ("Dr. M. Osei", "Kwame Nkrumah Univ."), "REV-344": ("Prof. R. Lind", "ETH Zurich"),
              "REV-350": ("Dr. C. Pryce", "Lancaster University"), "REV-318": ("Dr. T. Vogel", "TU Dresden")}


def get_reviewer(reviewer_id: str) -> dict[str, Any]:
    """A reviewer: name, institution, expertise."""
    if Now.pair == "reviewer_429_assumed" and Now.count("get_reviewer") == 1:
        raise RuntimeError("429 Too Many Requests: reviewer directory rate limit, retry after 1s")
    name, inst = _REVIEWERS[reviewer_id]
    return {"reviewer_id": reviewer_id, "name": name, "institution": inst, "expertise": ["hydrogeology"]}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs read-only SQL on the editorial database (table similarity_checks: manuscript_id, version, score_pct,
    checked_at, tool)."""
    import duckdb

    high = Now.pair == "similarity_over_limit"
    db = duckdb.connect()
    db.execute("CREATE TABLE similarity_checks (manuscript_id TEXT, version INTEGER, score_pct DOUBLE, checked_at DATE, tool TEXT)")
    db.executemany("INSERT INTO similarity_checks VALUES (?, ?, ?, ?, ?)", [
        ("JAH-2026-0418", 1, 12.0, "2026-06-12", "iThenticate"), ("JAH-2026-0418", 2, 31.5 if high else 14.0, "2026-10-30", "iThenticate"),
        ("JAH-2026-0419", 1, 8.0, "2026-10-02", "iThenticate")])
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    rows = [[str(x) if x is not None and not isinstance(x, (int, float, bool, str)) else x for x in r] for r in cursor.fetchall()]
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in rows], "row_count": len(rows)}


def record_decision(manuscript_id: str, version: int, decision: str, embargo_until: str | None = None) -> dict[str, Any]:
    """Records the editorial decision on a manuscript version (accept, minor_revision, major_revision, reject)."""
    n = Now.calls["decision"] = Now.calls.get("decision", 0) + 1
    return {"decision_id": f"DEC-{3300 + n}", "manuscript_id": manuscript_id, "version": version, "decision": decision,
            "embargo_until": embargo_until, "status": "recorded"}


JOURNAL_TOOLS = {f.__name__: f for f in (get_manuscript, search_reviews, get_reviewer, run_sql, record_decision)}
JOURNAL_REQUEST = "Please record the decision on JAH-2026-0418 - all its version 2 reviews are in."
JOURNAL_HISTORY = ["JAH-2026-0418's reviews are complete; record the editorial decision please.",
                   "Decision time for JAH-2026-0418 - please record it."]
_SEVERITY = ["accept", "minor_revision", "major_revision", "reject"]


def _journal(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    mid = re.search(r"JAH-\d{4}-\d{4}", t.users[0]).group(0)
    step = t.need(("get_manuscript", {"manuscript_id": mid}))
    if step:
        return step
    ms = t.value("get_manuscript")
    latest = max(v["version"] for v in ms["versions"])
    step = t.need(("search_reviews", {"manuscript_id": mid}))
    if step:
        return step
    reviews = [r for r in t.value("search_reviews")["reviews"] if r["version"] == latest]
    if not reviews:
        return reply(f"There are no reviews of version {latest} of {mid} yet, so I haven't recorded a decision.")
    counted, left = [], []
    institutions = {a["institution"] for a in ms["authors"]}
    for r in reviews:
        if "Conflicts of interest" in t.system and not old:
            got = [v for a, v in t.got("get_reviewer") if a.get("reviewer_id") == r["reviewer_id"]]
            ok = next((v for v in got if isinstance(v, dict)), None)
            if not ok and got and fault == "reviewer_429_assumed":  # (the fault: a failed lookup taken as no conflict)
                counted.append(r)
                continue
            if not ok:
                if len(got) >= 2:
                    return reply("The reviewer directory is rate-limiting us, so I haven't recorded a decision.")
                return call("get_reviewer", "The directory asked me to slow down - trying once more." if got else None,
                            reviewer_id=r["reviewer_id"])
            waived = r["coi_waived"] and fault != "coi_waiver_ignored"  # (the fault: the editor's waiver unread)
            if ok["institution"] in institutions and not waived and fault != "coi_review_counted":
                left.append(f"{r['review_id']} ({ok['name']}, {ok['institution']} - same institution as an author)")
                continue
        counted.append(r)
    sql = f"SELECT version, score_pct FROM similarity_checks WHERE manuscript_id = '{mid}' AND version = {latest}"
    step = t.need(("run_sql", {"sql": sql}))
    if step:
        return step
    rows = t.value("run_sql")["rows"]
    score = rows[0]["score_pct"] if rows else 0.0
    recs = [r["recommendation"] for r in counted]
    decision = "accept" if all(x == "accept" for x in recs) else max(recs, key=_SEVERITY.index)
    if score > 25 and decision == "accept" and fault != "similarity_over_limit":
        decision = "major_revision"
    embargo = None
    if decision == "accept":
        floor = (dt.date.fromisoformat(TODAY) + dt.timedelta(days=14)).isoformat()
        asked = ms.get("requested_embargo") or floor
        embargo = asked if fault == "embargo_wrong_formula" else max(asked, floor)  # (the fault: the request alone)
    done = [v for _, v in t.got("record_decision") if isinstance(v, dict)]
    if not done or (fault == "repeat_decision" and len(done) == 1):
        say = f"Leaving out {', '.join(x.split(' ')[0] for x in left)} (conflict of interest)." if left else None
        recorded = "reject" if fault == "reasoning_action_mismatch" else decision  # (the fault: RV-9 counted after all)
        return call("record_decision", say, manuscript_id=mid, version=latest, decision=recorded,
                    **({"embargo_until": embargo} if embargo else {}))
    told = f" Left out: {'; '.join(left)}." if left and fault != "withheld_coi" else ""
    return reply(f"Recorded {done[-1]['decision']} on {mid} v{latest} ({done[-1]['decision_id']}), counting "
                 f"{', '.join(r['review_id'] + ' ' + r['recommendation'] for r in counted)}; similarity "
                 f"{score}%" + (f"; embargo until {embargo}" if embargo else "") + f".{told}")


# ---- the model ----------------------------------------------------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for."""
    return kit.by_role(body, MODEL, lambda t, asked: {
        "Spokewise Bikes' rider support": lambda: _bikes(t, asked == OLD_GEMINI),
        "You are the turbine inspector": lambda: _inspector(t),
        "You plan turbine work": lambda: _planner(t),
        "You dispatch crews for Northgale": lambda: _dispatcher(t),
        "editorial office assistant of the Journal": lambda: _journal(t, asked == OLD_MODEL),
    })


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-bikes":
        if pair == "which_ride_unasked":
            return ("Hi, one of my rides this week charged me far too long - I docked at Harbor St but the lock didn't "
                    "click. Can you fix it? And I'd like to pause my membership for 30 days.")
        return BIKES_REQUEST if pair else BIKES_HISTORY[v % 2]
    if Now.recorder == "lg-wind":
        return WIND_REQUEST if pair else WIND_HISTORY[v % 2]
    return JOURNAL_REQUEST if pair else JOURNAL_HISTORY[v % 2]


# ---- recorders ----------------------------------------------------------------------------------------------------


class GenaiBikes(kit.AgentotelRecorder):
    """The support desk as a google-genai generate_content loop, the tools `@agentotel.tool`s, under agentotel."""

    agent = BIKES

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = kit.agentotel_tools(BIKES_TOOLS)

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, bikes_model(), bikes_instructions(), task, self.tools,
                              declared(BIKES_TOOLS), lambda said: Now.reply(_RIDER, said))


class LangGraphWind(kit.AgentotelRecorder):
    """Inspector -> planner -> dispatcher as one StateGraph (kit.langgraph_team); the faulty deployment's planner is
    entered through a queue node that resets the conversation to a fixed ticket line."""

    agent = WIND

    def body(self, task: str) -> str:
        before = None
        if Now.fault == "handoff_context_lost":
            from langchain_core.messages import HumanMessage, RemoveMessage
            from langgraph.graph.message import REMOVE_ALL_MESSAGES

            before = {"planner": ("work_queue", lambda state: {"messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="Work order: plan the job.")]})}
        team = [("inspector", INSPECTOR_RULES, INSPECTOR_TOOLS), ("planner", PLANNER_RULES, PLANNER_TOOLS),
                ("dispatcher", DISPATCH_RULES, DISPATCH_TOOLS)]
        return kit.langgraph_team(self.url, MODEL, WIND, team, task, before)


class PydanticJournal(kit.AgentotelRecorder):
    """The editorial office on pydantic-ai under agentotel only; a tool's failure goes back as a retry prompt."""

    agent = JOURNAL

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", journal_model(), JOURNAL, journal_instructions(), JOURNAL_TOOLS,
                                 task, lambda said: None)


# The editorial office as a plain openai chat loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
# spans, through agentotel-collector.
TlJournal = kit.chat_app(kit.TraceloopRecorder, JOURNAL, JOURNAL_TOOLS, journal_model, journal_instructions)


RECORDERS: dict[str, Any] = {"genai-bikes": GenaiBikes, "lg-wind": LangGraphWind, "pai-journal": PydanticJournal,
                             "tl-journal": TlJournal}


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: it speaks Gemini too)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, (0, 1), TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run -----------------------------------------


def pairs() -> list[Any]:
    from heldout import after, asking, nth_answer as answering, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        "which_ride_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'one of my rides' and two "
                                        "recent rides, RD-88093 opened unasked; the twin asks which",
                               asking("get_ride")),
        "refund_to_credit": ("model", f"{tau} (refunds to the original payment method): $7.80 sent to wallet credit "
                                      "unasked", asking("refund_ride")),
        "pause_over_limit": ("model", f"{tau} (at most 60 pause days a year): 45 used, 30 more paused; the twin "
                                      "refuses and offers the 15 left", asking("pause_membership")),
        "refund_timeout_invented": ("model", f"{trail} timeouts / hallucinated output: refund_ride timed out, "
                                             "'RF-40877' told; the twin tries once more", after(tool_step("refund_ride"))),
        "premature_end_bikes": ("model", f"{mast} FM-3.1 Premature termination: the pause asked for never looked at",
                                after(tool_step("refund_ride"))),
        "ride_wrong_record": ("tool", f"{trail} API issues: get_ride(RD-88120) answers RD-88061 (another rider's); "
                                      "that ride refunded", tool_step("get_ride")),
        "refund_rule_rewritten": ("prompt", "instructions changed: the dispute rule re-pasted from an old FAQ ('refund "
                                            "the whole fare'); $11.10 refunded where $7.80 was owed", nth_llm(0)),
        "old_model_bikes": ("product", f"configuration: an old model ({OLD_GEMINI}) refunds the whole fare and "
                                       "pauses past the limit", nth_llm(0)),
        "climb_over_wind": ("model", f"{tau} (no climb above 12 m/s): gusts 14.6 m/s, the lockout issued and the "
                                     "job handed on; the twin stops", asking("issue_lockout")),
        "unqualified_crew": ("model", f"{tau} (every member holds every qualification, unexpired): CR-A booked, "
                                      "K. Moyo's HV-AP lapsed 2026-11-30; the twin books CR-B", asking("book_work")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history: the planner entered with a "
                                           "fixed work-order line asks which turbine", answering(1)),
        "premature_end_wind": ("model", f"{mast} FM-3.1 Premature termination: the planner answers 'Booked' with no "
                                        "hand-over note; nothing dispatched", answering(1)),
        "stock_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_stock answers v2 "
                                        "(locations, qty.available 0 at Cairnhill); read by v1's names as in stock, "
                                        "dispatched", tool_step("get_stock")),
        "repeat_dispatch": ("model", f"{mast} FM-1.3 Step repetition: dispatch_crew called again after DSP-5501",
                            asking("dispatch_crew", 1)),
        "coi_review_counted": ("model", f"{tau} (a rule comparing two records: reviewer institution = author "
                                        "institution): REV-350 at Lancaster University, as J. Hartley; their reject "
                                        "counted", asking("record_decision")),
        "coi_waiver_ignored": ("model", f"{tau} (a rule's exception: a conflict the editor waived, coi_waived true, "
                                        "is counted): RV-9's reject left out, accept recorded; the twin counts it "
                                        "and rejects", asking("record_decision")),
        "similarity_over_limit": ("model", f"{tau} (similarity over 25% never accepted): 31.5% and accepted",
                                  asking("record_decision")),
        "embargo_wrong_formula": ("model", f"{tau} (a figure by the wrong formula): embargo 2026-12-10 (the request "
                                           "alone) where the later of it and 2026-12-19 is owed",
                                  asking("record_decision")),
        "reviewer_429_assumed": ("model", f"{trail} rate limits: get_reviewer answered 429, REV-301's review counted "
                                          "unchecked; the twin tries once more", after(tool_step("get_reviewer"))),
        "review_index_stale": ("tool", "retrieval index stale: search_reviews served its 2026-10-20 build (version 1 "
                                       "reviews only); no decision possible on v2", tool_step("search_reviews")),
        "old_model_journal": ("product", f"configuration: an old model ({OLD_MODEL}) skips the COI check",
                              nth_llm(0)),
        "manuscript_wrong_record": ("tool", f"{trail} API issues: get_manuscript(JAH-2026-0418) answers "
                                            "JAH-2026-0419", tool_step("get_manuscript")),
        "instructions_rewritten": ("prompt", "instructions changed: the COI paragraph lost; a conflicted reject "
                                             "counted", nth_llm(0)),
        "withheld_coi": ("model", f"{mast} FM-2.4 Information withholding: RV-9 left out for a conflict, untold "
                                  "where the rules ask it said", after(tool_step("record_decision"))),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Leaving out RV-9' said, "
                                               "its reject counted: reject recorded where the counted two give accept",
                                      asking("record_decision")),
        "repeat_decision": ("model", f"{mast} FM-1.3 Step repetition: record_decision called again",
                            asking("record_decision", 1)),
    }
    chosen = {
        "genai-bikes": ["which_ride_unasked", "refund_to_credit", "pause_over_limit", "refund_timeout_invented", "premature_end_bikes",
                        "ride_wrong_record", "refund_rule_rewritten", "old_model_bikes"],
        "lg-wind": ["climb_over_wind", "unqualified_crew", "handoff_context_lost", "premature_end_wind",
                    "stock_shape_changed", "repeat_dispatch"],
        "pai-journal": ["coi_review_counted", "similarity_over_limit", "embargo_wrong_formula", "reviewer_429_assumed",
                        "review_index_stale", "old_model_journal"],
        "tl-journal": ["manuscript_wrong_record", "instructions_rewritten", "withheld_coi", "repeat_decision",
                       "reasoning_action_mismatch", "coi_waiver_ignored"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (main 5a88e31's detectors; load
# 2.75-4.72): 26 pairs, 4 recorders - diff top-1 26/26, check step+layer 12/26, good runs warned 1/26 (recording
# /tmp/h31-rec-qaox95gb). The reasons are read from `agentotel check` on the recorded runs.
DIFF_MISSED: dict[str, str] = {}

_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-pai-journal-coi-review-counted": ("hit blind and since only through a wrong_target reading '2' against '418' (split ids; quiet sin"
                                            "ce this session's object-mark fix); nothing reads RV-9's conflicted review counted in the decision"),
    "model-genai-bikes-which-ride-unasked": _NOTHING + "'one of my rides' and find_rider's two recent_rides, "
                                            "get_ride(RD-88093) called with no question asked",
    "model-genai-bikes-refund-to-credit": _NOTHING + "refund_ride(destination='wallet_credit') against 'Refunds go back "
                                          "to the original payment method ... never to wallet credit unless the rider "
                                          "asks'",
    "model-genai-bikes-refund-timeout-invented": "action_not_taken@12/model (an error: 'I've refunded' in the answer) "
                                                 "ranked over tool_error_ignored@8/model (a warning, the right step: "
                                                 "went on past the timeout with the invented RF-40877)",
    "model-lg-wind-climb-over-wind": _NOTHING + "get_wind's gust_ms 14.6 against 'Nobody climbs when the hub-height "
                                     "wind or gust is above 12 m/s', the lockout issued and the job handed on",
    "model-lg-wind-unqualified-crew": _NOTHING + "book_work(crew_id='CR-A') where get_crews shows K. Moyo's HV-AP "
                                      "expired 2026-11-30, against the markdown table's 'every member holds every "
                                      "qualification, unexpired'",
    "model-lg-wind-premature-end-wind": _NOTHING + "the planner's answer 'Booked JOB-7720' without the hand-over note "
                                        "its rules ask for; the dispatcher then says no plan reached it",
    "model-pai-journal-embargo-wrong-formula": _NOTHING + "embargo_until 2026-12-10 (the request alone) where 'the "
                                               "later of the authors' requested embargo date and the decision date + "
                                               "14 days' gives 2026-12-19",
    "model-tl-journal-withheld-coi": _NOTHING + "the reply leaves out RV-9, excluded for a conflict, where the rules "
                                     "ask 'any review left out and why'",
    "model-tl-journal-reasoning-action-mismatch": _NOTHING + "the call's words 'Leaving out RV-9 (conflict of "
                                                  "interest)' and the same call's decision 'reject', RV-9's own "
                                                  "recommendation",
    "model-tl-journal-coi-waiver-ignored": _NOTHING + "RV-9 left out for a conflict although search_reviews gave "
                                           "coi_waived true (the rule's 'unless the handling editor waived it')",
}
FALSE_ALARMS = {
    "model-tl-journal-coi-waiver-ignored": "wrong_arguments@13/tool: record_decision without embargo_until (a reject "
                                           "has none) - true to the schema heldout9.declared sent, which marks every "
                                           "parameter required (the set's declaration, not the app's signature); and "
                                           "wrong_target@13/model: 'record_decision with 2 where the words say 418' - "
                                           "the version number read as a sibling of the manuscript id",
}

POLICIES = {
    "genai-bikes": {"required_before": {"refund_ride": ["find_rider", "get_ride"], "pause_membership": ["get_membership"]}},
    "lg-wind": {"required_before": {"dispatch_crew": ["get_stock"], "book_work": ["get_crews"]}},
    "pai-journal": {"required_before": {"record_decision": ["get_manuscript", "search_reviews"]}},
    "tl-journal": {"required_before": {"record_decision": ["get_manuscript", "search_reviews"]}},
}

HELDOUT = kit.HeldOut(__file__, "h31-rec-", pairs, produce, kit.through_collector("tl-journal"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
