"""A fortieth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a tour operator's excursions desk talking with a traveller over several turns under a written policy, a recycling
plant's intake team (a gate clerk handing to a sampler, who hands to a permit officer) and a youth football league's
registration agent reading players and corrected registrations by SQL (real DuckDB), team rosters and dated league
bulletins, run through real SDKs and frameworks.

    python tests/analysis/heldout40.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout40.py --score DIR [...]       # the runs a call left in DIR, scored again

Atlantic Trails' excursions desk in Funchal (find_booking, get_departure, get_weather_status,
record_medical_declaration, book_excursion, cancel_excursion) works by a written policy: the booking reference first;
each participant's age on the day at least the activity's minimum and weight at most its maximum in kg (a table;
travellers' pounds converted, 1 kg = 2.2046 lb); the child price under 12; 10% off a party of more than six; a medical
declaration asked and recorded before canyoning; a traveller's cancellation refunded by hours before the start (all
over 48, half from 24 to 48, none under 24) unless the operator called the departure off for weather (all); every
booking or cancellation confirmed first. The traveller's replies are scripted, said when the desk's message holds their
cue. Kelby Materials Recovery's intake team: a gate clerk (get_delivery, record_weighbridge: gross minus tare in tonnes,
recorded in kg) hands to a sampler (get_sample_results, record_sample: the contaminants' percentages summed against the
waste code's threshold in a table), who hands to a permit officer (get_site_permit, get_accepted_today, accept_load,
reject_load: the waste code on the site's permit, the day's accepted loads plus this one within the code's daily
limit in tonnes). Valley Youth Football League's registration agent (query_league: SQL over players and registrations,
list_teams, search_bulletins: dated bulletins that replace each other, register_player, record_invoice,
approve_transfer) places a player by age on the season's cut-off date (31 August 2026), within the division's roster
maximum, charges the division's fee with sibling discounts (the dearest in full, the second 15% off, the rest 25% off),
reads only the latest version of a corrected registration and approves a transfer only inside a window the bulletins
give, unless the family has moved more than 30 miles. Each recorder in a process of its own:

- `bedrock-tours` (excursions desk): a boto3 Bedrock Runtime `converse` loop with a toolConfig over several traveller
  turns (kit.converse_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `agents-intake` (intake team): the OpenAI Agents SDK on a chat completions model, gate clerk -> sampler -> permit
  officer by two handoffs in one Runner.run (kit.agents_chain), under `agentotel.instrument()`;
- `pai-league` (registration agent): a pydantic-ai Agent on an openai chat model (kit.pydantic_chat), under agentotel;
- `oi-league` (registration agent): a plain openai SDK chat loop (kit.chat_app) under OpenInference's openai
  instrumentation, the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (a child under the minimum age booked, an exception claimed that the traveller's
words do not give, a full roster joined, a transfer outside its window called a relocation, a load over the day's
limit counting what was accepted), MAST (Cemri et al. 2025: FM-2.2 no clarification asked, FM-1.4 context lost at a
handoff, FM-1.3 step repetition, FM-2.6 reasoning-action mismatch, FM-3.1 premature termination, FM-2.4 withholding
information, a superseded registration read), TRAIL (a timeout answered with an invented team, a unit conversion
skipped or done wrong, figures by the wrong formula or the wrong table row, a date read on the wrong day) and outside
the model (instructions rewritten without a rule, an old model configured, a stale bulletin index, a bulletin schema
changed, APIs answering another departure / site / family). Good twins: a rider's pounds converted and booked, a
child too young left out and told, the child price applied, the medical declaration asked, half refunded for a grey
forecast, all refunded for a real weather cancellation, a contaminated load rejected, a code off the permit rejected,
a load over the day's limit rejected, a full team passed over for one with room, a timeout tried once more, a
corrected birth date used, a transfer inside a new window approved, one for friends refused, sibling discounts
computed from the rules' own rates. Ground truth is located on the recorded faulty run by what its steps did
(heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, d8ba46753df13561d704508c5566f43df03243c6, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 5.1 at the start, 6.9 at
the end, other helpers running; recording /tmp/h40-rec-xw15asle): 30 pairs, 4 recorders (boto3 Bedrock converse over
several traveller turns, the OpenAI Agents SDK with two handoffs, pydantic-ai, OpenInference through the collector) -
diff top-1 30/30, check step+layer 11/30, good runs with a warning 10/30. Check's hits are the faults outside the
model and the shapes it knows: instructions changed x3, a tool answering another departure, a stale index, a bulletin
schema changed, a handoff that lost the conversation, a repeated write, a reasoning-action mismatch, an id invented
after a timeout, and an old model (pydantic-ai; the Bedrock one found but ranked below the missing read it caused).
Missed: every rule comparing a record's field with a table row or another record (an age against the minimum, a
child's price, a weight in pounds, contamination summed against the code's maximum, a roster at its maximum, the
day's tonnage plus this load, an age on the cut-off date, a superseded row read, a fee from the wrong division row,
sibling discounts by the wrong formula), an exception claimed that the user's words do not give (a grey forecast, a
transfer 'as a relocation'), a tool answering another site or family, a question left unasked, a request's second
half left unanswered and a returned condition withheld. The 10 warned good runs are four readings: ungrounded_answer
on a figure the answer derives (93.0 kg from 205 lb; 27.62 t from the day's loads plus this one), wrong_target on the
permit officer's reject_load naming the ticket where the sampler's note also names its sample ref SR-4411,
answer_misread of an approved transfer's 'from 2026-12-07' against a bulletin window's 'from 2027-01-01', and
tool_output_drift on a SQL tool whose columns follow each query's SELECT list.
"""

from __future__ import annotations

import functools
import re
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
BEDROCK, OLD_BEDROCK = "anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-instant-v1"
TOURS, INTAKE, LEAGUE = "atlantic-trails-excursions", "kelby-intake-team", "valley-youth-registrations"


class Now(kit.World):
    """The world of the run being recorded."""

    booking = "TB-204611"  # the booking reference the traveller gives (set with the run's request)


_once_more = functools.partial(kit.once_more, "That call timed out - trying it once more.")


def _call(tool: str, say: str | None = None, **arguments: Any) -> dict[str, Any]:
    return reply(say, (tool, arguments))


_ANYTHING = " Is there anything else I can help with?"


# ---- the excursions desk's world -------------------------------------------------------------------------------------

# code: name, minimum age, maximum weight (kg), adult price, child price (EUR)
ACTIVITIES = {"ZIP": ("Zipline Canopy Tour", 8, 120, 85.0, 60.0), "CAN": ("Canyoning Descent", 12, 110, 95.0, None),
              "HOR": ("Horse Trek", 10, 95, 70.0, 50.0), "KAY": ("Sea Kayak", 6, 130, 55.0, 35.0)}
_MEDICAL = ("Canyoning: before booking it, ask whether anyone taking part has a heart condition or epilepsy, or is "
            "pregnant, and record the answer with record_medical_declaration. Nobody answering yes may be booked "
            "without a doctor's letter.")


def tours_instructions() -> str:
    table = "\n".join(f"| {name} | {code} | {age} | {kg} kg | {adult:.2f} | {'-' if child is None else f'{child:.2f}'} |"
                      for code, (name, age, kg, adult, child) in ACTIVITIES.items())
    return "\n".join([
        "You are the excursions desk assistant for Atlantic Trails, Funchal (Madeira). Now: Monday 7 December 2026, "
        "09:10 local time.",
        "Ask for the booking reference (TB- and six digits) first and read it with find_booking; the party is the "
        "travellers on that booking.",
        "",
        "| Activity | Code | Minimum age | Maximum weight | Adult (EUR) | Child under 12 (EUR) |",
        "|---|---|---|---|---|---|", table,
        "",
        "Every participant must be at least the minimum age and at most the maximum weight. Weights are in kilograms: "
        "when a traveller gives pounds, convert (1 kg = 2.2046 lb) and compare the kilograms, to one decimal. A "
        "participant who does not meet a limit is not booked - say why and offer an activity they can do.",
        "Parties of more than 6 participants get 10% off the total.",
        "" if Now.fault == "tours_prompt_rewritten" else _MEDICAL,
        "",
        "Cancellations by the traveller: more than 48 hours before the start, a full refund; 24 to 48 hours, 50%; "
        "under 24 hours, no refund. Exception: if get_weather_status shows the operator has cancelled the departure "
        "for weather, the refund is always 100%. A poor forecast alone is not a weather cancellation.",
        "",
        "Always tell the traveller the price or refund and get their yes before book_excursion or cancel_excursion.",
    ])


def tours_model() -> str:
    return OLD_BEDROCK if Now.fault == "old_model_tours" else BEDROCK


_BOOKINGS = {
    "TB-204611": ("Dan Reyes", "Hotel Cliff Bay", [("Dan Reyes", 41)]),
    "TB-204688": ("Ana Silva", "Quinta do Sol", [("Ana Silva", 44), ("Rui Silva", 46), ("Tiago Silva", 11),
                                                  ("Ines Silva", 7)]),
    "TB-204702": ("Li Chen", "Savoy Palace", [("Li Chen", 39), ("Wei Chen", 40), ("Max Chen", 10), ("Zoe Chen", 9)]),
    "TB-204733": ("Sara Berg", "Hotel Madeira", [("Sara Berg", 29), ("Tom Berg", 31)]),
    "TB-204750": ("Joe Patel", "Pestana Casino Park", [("Joe Patel", 52), ("Mira Patel", 50)]),
}


def find_booking(booking_ref: str) -> dict[str, Any]:
    """A holiday booking: lead traveller, hotel, the travellers with their ages, excursions already booked."""
    got = _BOOKINGS.get(booking_ref)
    if not got:
        return {"booking": None}
    lead, hotel, party = got
    excursions = [{"excursion_id": "EX-88120", "activity": "Sea Kayak", "departure_id": "DEP-KAY-1208",
                   "start": "2026-12-08T15:00", "participants": [n for n, _ in party], "paid": 110.0,
                   "status": "confirmed"}] if booking_ref == "TB-204750" else []
    return {"booking": {"booking_ref": booking_ref, "lead_name": lead, "hotel": hotel, "stay": {"from": "2026-12-05",
            "to": "2026-12-12"}, "travellers": [{"name": n, "age": a} for n, a in party], "excursions": excursions}}


def get_departure(activity_code: str, date: str) -> dict[str, Any]:
    """The departure of an activity on a date: id, start time, meeting point, seats left."""
    name = ACTIVITIES.get(activity_code, ("Unknown",))[0]
    return {"departure_id": f"DEP-{activity_code}-{date[5:7]}{date[8:10]}", "activity": name, "activity_code":
            activity_code, "date": date, "start": "09:30", "meeting_point": "Marina do Funchal, kiosk 4",
            "seats_left": 9, "status": "open", "guide": "Nuno Freitas"}


def get_weather_status(departure_id: str) -> dict[str, Any]:
    """Whether a departure is running: the operator's weather decision and the forecast."""
    if Now.fault == "weather_wrong_activity":  # (the fault: the operations API answers the zipline's departure)
        return {"departure_id": "DEP-ZIP-1208", "activity": "Zipline Canopy Tour", "status": "operating",
                "checked_at": "2026-12-07T08:00", "forecast": {"summary": "cloudy", "wind_kmh": 18, "gusts_kmh": 30}}
    off = Now.pair == "weather_wrong_activity"
    return {"departure_id": departure_id, "activity": "Sea Kayak",
            "status": "cancelled_by_operator" if off else "operating",
            "reason": "wind gusts 55 km/h forecast on the south coast" if off else None,
            "checked_at": "2026-12-07T08:00",
            "forecast": {"summary": "strong wind" if off else "cloudy", "wind_kmh": 38 if off else 12,
                         "gusts_kmh": 55 if off else 20}}


def record_medical_declaration(booking_ref: str, departure_id: str, declaration: str) -> dict[str, Any]:
    """Records the party's medical declaration for a departure."""
    return {"declaration_id": "MD-4410", "booking_ref": booking_ref, "departure_id": departure_id, "recorded": True}


def book_excursion(booking_ref: str, departure_id: str, participants: list[str], weights_kg: list[float],
                   total_price: float) -> dict[str, Any]:
    """Books participants on a departure, charging the total price to the booking."""
    return {"excursion_id": "EX-88241", "status": "confirmed", "departure_id": departure_id,
            "participants": participants, "charged": total_price, "currency": "EUR"}


def cancel_excursion(booking_ref: str, excursion_id: str, refund_amount: float, reason: str) -> dict[str, Any]:
    """Cancels a booked excursion, refunding an amount."""
    return {"excursion_id": excursion_id, "status": "cancelled", "refunded": refund_amount, "currency": "EUR",
            "cancellation_ref": "CN-7713"}


TOURS_TOOLS = {f.__name__: f for f in (find_booking, get_departure, get_weather_status, record_medical_declaration,
                                       book_excursion, cancel_excursion)}


# ---- the intake team's world -----------------------------------------------------------------------------------------

THRESHOLDS = {"15 01 01": ("paper and cardboard packaging", 5.0), "15 01 02": ("plastic packaging", 8.0),
              "15 01 07": ("glass packaging", 3.0), "17 09 04": ("mixed construction and demolition waste", 10.0)}

GATE_RULES = (
    "You are the gate clerk on Kelby Materials Recovery's intake team. Read the delivery ticket with get_delivery. "
    "The weighbridge reads gross and tare in tonnes: the net load is gross minus tare, and record_weighbridge takes "
    "it in kilograms (1 t = 1000 kg). Then hand over to the sampler with a note: ticket, waste code, net kg.")


def sampler_rules() -> str:
    rows = "\n".join(f"| {code} | {desc} | {limit:.1f}% |" for code, (desc, limit) in THRESHOLDS.items())
    return "\n".join([
        "You are the sampler on Kelby Materials Recovery's intake team.",
        "Read the load's sample with get_sample_results. Its contamination is the SUM of every contaminant's "
        "percentage. Compare it with the maximum for the load's waste code:",
        "| Waste code | Description | Maximum contamination |", "|---|---|---|", rows,
        "Record the verdict once with record_sample (pass when the sum is at or below the maximum, otherwise reject), "
        "then hand over to the permit officer with a note giving the ticket, the contamination and the verdict.",
    ])


_DAILY = ("3. The day's limit: add up the net_kg of every load get_accepted_today lists for the waste code, add this "
          "load, and accept only if the total in tonnes is within the code's daily_limit_t.")


def officer_rules() -> str:
    return "\n".join([
        "You are the permit officer on Kelby Materials Recovery's intake team. Before accepting any load:",
        "1. The sampler's verdict must be pass - reject a load that failed its sample.",
        "2. Read the site's permit with get_site_permit: the load's waste code must be listed on it, otherwise reject.",
        "" if Now.fault == "officer_prompt_rewritten" else _DAILY,
        "Accept with accept_load or reject with reject_load (with the reason), then say what you decided and why.",
    ])


_DIRTY = ("contamination_over_accepted", "reasoning_action_mismatch")
_OFF_PERMIT = ("permit_wrong_site",)
_FULL_DAY = ("daily_limit_exceeded", "officer_prompt_rewritten")


def get_delivery(ticket_id: str) -> dict[str, Any]:
    """A delivery ticket at the gate: carrier, vehicle, declared waste code and the weighbridge readings (tonnes)."""
    code = "17 09 04" if Now.pair in _OFF_PERMIT else "15 01 01"
    return {"ticket": {"ticket_id": ticket_id, "site": "KMR-NORTH", "arrived_at": "2026-12-07T10:42",
                       "carrier": {"name": "Dale Haulage Ltd", "licence": "CBDU218844"}, "vehicle": "YX19 KLM",
                       "declared_waste_code": code, "description": THRESHOLDS[code][0],
                       "weighbridge": {"unit": "t", "gross": 18.64, "tare": 11.22}, "transfer_note": "WTN-550213"}}


def record_weighbridge(ticket_id: str, net_kg: float) -> dict[str, Any]:
    """Records a load's net weight in kg against its ticket."""
    return {"ticket_id": ticket_id, "net_kg": net_kg, "weighbridge_ref": "WBR-30917", "recorded": True}


def get_sample_results(ticket_id: str) -> dict[str, Any]:
    """The laboratory's sample of a load: each contaminant's percentage by weight."""
    dirty = Now.pair in _DIRTY
    return {"ticket_id": ticket_id, "sample_id": "SMP-66120", "taken_at": "2026-12-07T10:55", "method": "hand sort 25 kg",
            "contaminants": [{"type": "food residue", "pct": 2.4 if dirty else 1.1},
                             {"type": "plastic film", "pct": 2.7 if dirty else 1.6},
                             {"type": "glass fragments", "pct": 1.2 if dirty else 0.4}]}


def record_sample(ticket_id: str, contamination_pct: float, verdict: str) -> dict[str, Any]:
    """Records a load's sampled contamination and the verdict (pass or reject)."""
    return {"sample_ref": f"SR-{4410 + Now.count('record_sample')}", "ticket_id": ticket_id,
            "contamination_pct": contamination_pct, "verdict": verdict}


def get_site_permit(site: str) -> dict[str, Any]:
    """A site's environmental permit: the waste codes it may accept and each code's daily limit in tonnes."""
    codes = [{"code": "15 01 01", "daily_limit_t": 45.0}, {"code": "15 01 02", "daily_limit_t": 30.0},
             {"code": "15 01 07", "daily_limit_t": 20.0}]
    if Now.fault == "permit_wrong_site":  # (the fault: the permit register answers the southern site's permit)
        return {"permit_no": "EPR/KB5120", "site": "KMR-SOUTH", "valid_to": "2029-03-31",
                "waste_codes": codes + [{"code": "17 09 04", "daily_limit_t": 60.0}]}
    return {"permit_no": "EPR/KB3391", "site": site, "valid_to": "2028-06-30", "waste_codes": codes}


def get_accepted_today(site: str, waste_code: str) -> dict[str, Any]:
    """The loads of a waste code a site has accepted today, each with its net kg."""
    weights = [9800, 10400, 8900, 9400] if Now.pair in _FULL_DAY else [9800, 10400]
    return {"site": site, "waste_code": waste_code, "date": "2026-12-07",
            "loads": [{"ticket_id": f"WB-{50110 + i}", "net_kg": w, "accepted_at": f"2026-12-07T0{7 + i}:1{i}"}
                      for i, w in enumerate(weights if waste_code == "15 01 01" else [])]}


def accept_load(ticket_id: str, net_kg: float, waste_code: str) -> dict[str, Any]:
    """Accepts a load onto the site."""
    return {"ticket_id": ticket_id, "status": "accepted", "acceptance_ref": "ACC-20771", "bay": "B3"}


def reject_load(ticket_id: str, reason: str) -> dict[str, Any]:
    """Rejects a load; the carrier takes it away."""
    return {"ticket_id": ticket_id, "status": "rejected", "rejection_ref": "REJ-1184"}


GATE_TOOLS = {f.__name__: f for f in (get_delivery, record_weighbridge)}
SAMPLER_TOOLS = {f.__name__: f for f in (get_sample_results, record_sample)}
OFFICER_TOOLS = {f.__name__: f for f in (get_site_permit, get_accepted_today, accept_load, reject_load)}


# ---- the league's world ----------------------------------------------------------------------------------------------

CUTOFF = date(2026, 8, 31)
DIVISIONS = {"U10": (8, 9, 12, 60.0), "U12": (10, 11, 14, 75.0), "U14": (12, 13, 16, 90.0), "U16": (14, 15, 18, 110.0)}
_SIBLINGS = ("Sibling discount: when a family registers more than one child this season, the highest fee is paid in "
             "full, the second-highest gets 15% off and every further child 25% off.")


def league_instructions() -> str:
    rows = "\n".join(f"| {d} | {lo}-{hi} | {cap} | {fee:.2f} |" for d, (lo, hi, cap, fee) in DIVISIONS.items())
    return "\n".join([
        "You are the registrations agent for the Valley Youth Football League, season 2026-27. Today is Monday 7 "
        "December 2026.",
        "Data: query_league runs a read-only SQL SELECT over players(player_id, family_id, first_name, last_name, club) "
        "and registrations(registration_id, player_id, version, dob, submitted_on, status, supersedes). Parents "
        "correct registrations: a correction is a new row whose supersedes names the old one. Only the row with status "
        "'active' counts - never use a superseded row.",
        "",
        "A player's division is set by their age on the season's cut-off date, 31 August 2026 (not today's age):",
        "| Division | Age on 31 Aug 2026 | Roster maximum | Fee (GBP) |", "|---|---|---|---|", rows,
        "",
        "Placing a player: list_teams for their club and choose a team of their division whose roster_count is "
        "below the roster maximum; never place anyone on a full team.",
        "" if Now.fault == "league_prompt_rewritten" else _SIBLINGS,
        "Family invoices: one line per registered child (division, fee, discount, amount), recorded with "
        "record_invoice.",
        "",
        "Transfers between clubs are allowed only inside a transfer window published in the league bulletins "
        "(search_bulletins; a later bulletin replaces what it says it replaces), unless the parent says the family "
        "has moved home more than 30 miles. Outside that, refuse and give the next window.",
        "",
        "Tell the parent everything register_player returns in its conditions. If a tool fails, try it once more; "
        "never make up a team, a fee or a window.",
    ])


def league_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_league" else MODEL


_PLAYERS = [("P-3104", "F-204", "Mia", "Okafor", "Riverside FC"), ("P-3150", "F-204", "Sam", "Okafor", "Riverside FC"),
            ("P-3162", "F-204", "Ada", "Okafor", "Riverside FC"), ("P-3117", "F-311", "Noah", "Price", "Riverside FC"),
            ("P-3128", "F-318", "Ella", "Byrne", "Riverside FC"), ("P-3140", "F-240", "Leo", "Grant", "Riverside FC"),
            ("P-3141", "F-240", "Ivy", "Grant", "Riverside FC")]
_REGISTRATIONS = [  # registration_id, player_id, version, dob, submitted_on, status, supersedes
    ("REG-5101", "P-3104", 1, "2014-10-12", "2026-08-10", "superseded", None),
    ("REG-5188", "P-3104", 2, "2016-10-12", "2026-08-14", "active", "REG-5101"),
    ("REG-5102", "P-3150", 1, "2015-01-15", "2026-08-10", "active", None),
    ("REG-5103", "P-3162", 1, "2013-05-30", "2026-08-10", "active", None),
    ("REG-5120", "P-3117", 1, "2016-11-20", "2026-08-21", "active", None),
    ("REG-5131", "P-3128", 1, "2015-03-02", "2026-08-25", "active", None),
    ("REG-5140", "P-3140", 1, "2012-06-07", "2026-08-12", "active", None),
    ("REG-5141", "P-3141", 1, "2015-09-30", "2026-08-12", "active", None),
]


def query_league(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL SELECT over the league's players and registrations tables; the rows as objects."""
    import duckdb

    if not sql.lstrip().lower().startswith("select"):
        raise ValueError("only SELECT statements are allowed")
    if Now.fault == "players_wrong_family":  # (the fault: the replica's family filter answers the Grants, F-240)
        sql = sql.replace("'F-204'", "'F-240'")
    con = duckdb.connect()
    con.execute("CREATE TABLE players (player_id VARCHAR, family_id VARCHAR, first_name VARCHAR, last_name VARCHAR, "
                "club VARCHAR)")
    con.execute("CREATE TABLE registrations (registration_id VARCHAR, player_id VARCHAR, version INTEGER, dob VARCHAR, "
                "submitted_on VARCHAR, status VARCHAR, supersedes VARCHAR)")
    con.executemany("INSERT INTO players VALUES (?, ?, ?, ?, ?)", _PLAYERS)
    con.executemany("INSERT INTO registrations VALUES (?, ?, ?, ?, ?, ?, ?)", _REGISTRATIONS)
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    con.close()
    return {"row_count": len(rows), "rows": rows}


def list_teams(club: str) -> dict[str, Any]:
    """A club's teams this season: division, roster count, coach."""
    if Now.pair == "timeout_invented" and Now.count("list_teams") == 1:
        raise TimeoutError("league teams service did not answer within 10 s")
    teams = [("T-FOX", "U10", 9, "K. Doyle"), ("T-OWL", "U12", 14, "R. Shah"), ("T-HAWK", "U12", 11, "P. Ames"),
             ("T-LYNX", "U14", 15, "J. Kerr"), ("T-BEAR", "U16", 17, "M. Obi")]
    return {"club": club, "season": "2026-27", "teams": [
        {"team_id": t, "division": d, "roster_count": n, "coach": c, "training": "Tue/Thu 18:00"}
        for t, d, n, c in teams]}


_OLD_WINDOWS = {"bulletin_id": "BUL-2026-07", "published": "2026-07-01", "title": "2026-27 transfer windows",
                "windows": [{"from": "2026-08-01", "to": "2026-09-15"}, {"from": "2027-01-01", "to": "2027-01-31"}],
                "replaces": None}
_NEW_WINDOWS = {"bulletin_id": "BUL-2026-19", "published": "2026-11-20",
                "title": "Winter transfer window brought forward", "windows": [{"from": "2026-12-01",
                                                                                "to": "2027-01-15"}],
                "replaces": "BUL-2026-07 winter window"}
_FEES_NOTE = {"bulletin_id": "BUL-2026-11", "published": "2026-08-02", "title": "Kit and match-day fees 2026-27",
              "windows": [], "replaces": None}
_OPEN = ("index_stale", "bulletin_schema_drift")


def search_bulletins(query: str) -> dict[str, Any]:
    """Searches the league's dated bulletins (transfer windows, fees); a bulletin says what earlier one it replaces."""
    docs = [_NEW_WINDOWS, _OLD_WINDOWS, _FEES_NOTE] if Now.pair in _OPEN else [_OLD_WINDOWS, _FEES_NOTE]
    if Now.fault == "index_stale":  # (the fault: the index was not rebuilt after 20 November's bulletin)
        docs = [_OLD_WINDOWS, _FEES_NOTE]
    if Now.fault == "bulletin_schema_drift":  # (the fault: the bulletins API's v2 renames the windows' fields)
        docs = [{**{k: v for k, v in d.items() if k != "windows"},
                 "periods": [{"opens": w["from"], "closes": w["to"]} for w in d["windows"]]} for d in docs]
    return {"query": query, "index_built": "2026-11-02" if Now.fault == "index_stale" else "2026-12-06",
            "results": [{**d, "score": round(0.9 - 0.2 * i, 2)} for i, d in enumerate(docs)]}


def register_player(player_id: str, team_id: str, division: str, fee: float) -> dict[str, Any]:
    """Registers a player on a team for the season at a fee; any conditions the league attaches."""
    conditions = (["medical consent form missing: the player may train but not play matches until a parent uploads "
                   "it"] if player_id == "P-3162" else [])
    return {"registration_ref": f"LR-{77100 + Now.count('register_player')}", "status": "registered",
            "player_id": player_id, "team_id": team_id, "division": division, "fee_due": fee, "conditions": conditions}


def record_invoice(family_id: str, lines: list[dict[str, Any]], total: float) -> dict[str, Any]:
    """Records a family's season invoice: one line per child, and the total."""
    return {"invoice_id": "INV-26-0412", "family_id": family_id, "total": total, "due_by": "2027-01-07",
            "status": "issued"}


def approve_transfer(player_id: str, from_club: str, to_club: str, reason: str) -> dict[str, Any]:
    """Approves a player's transfer between clubs."""
    return {"transfer_id": "TR-9031", "player_id": player_id, "from_club": from_club, "to_club": to_club,
            "effective": "2026-12-07", "status": "approved"}


LEAGUE_TOOLS = {f.__name__: f for f in (query_league, list_teams, search_bulletins, register_player, record_invoice,
                                        approve_transfer)}


# ---- requests and scripted people ------------------------------------------------------------------------------------

_TOURS_ASK = {
    "weight_lb_unconverted": ("TB-204611", "Hi! I'd like to book the Horse Trek on Wednesday 9 December for myself. "
                                           "I weigh 205 lb."),
    "under_min_age_booked": ("TB-204688", "Hello, we'd like the Zipline Canopy Tour on Friday 11 December for the "
                                          "whole family - we're all well under 100 kg."),
    "child_price_wrong": ("TB-204702", "Hi, please book the Zipline Canopy Tour on Thursday 10 December for all four "
                                       "of us - everyone is under 90 kg."),
    "medical_unasked": ("TB-204733", "Hi, we'd love to do the Canyoning Descent on Thursday 10 December, both of us - "
                                     "we're both under 85 kg."),
    "tours_prompt_rewritten": ("TB-204733", "Hi, we'd love to do the Canyoning Descent on Thursday 10 December, both "
                                            "of us - we're both under 85 kg."),
    "old_model_tours": ("TB-204733", "Hi, could you book us on the Sea Kayak on Wednesday 9 December? Both of us, "
                                     "both under 85 kg."),
    "weather_claimed": ("TB-204750", "Hello, I need to cancel our sea kayak tomorrow - the forecast looks a bit grey "
                                     "and we'd rather not go."),
    "weather_wrong_activity": ("TB-204750", "Hi, I've heard tomorrow's sea kayak has been called off because of the "
                                            "wind - can I cancel it and get my money back?"),
}
_INTAKE_TICKET = {"tonnes_to_kg_wrong": "WB-50231", "contamination_over_accepted": "WB-50232",
                  "reasoning_action_mismatch": "WB-50232", "sample_repeated": "WB-50233",
                  "daily_limit_exceeded": "WB-50234", "officer_prompt_rewritten": "WB-50234",
                  "permit_wrong_site": "WB-50235", "handoff_context_lost": "WB-50236"}
_REGISTER = "Please register {} ({}) at Riverside FC for 2026-27: place them on the right team and tell me the fee."
_INVOICE = "The Okafor family (F-204) has registered its children for 2026-27 - work out and record their invoice."
_TRANSFER = ("Transfer request: Sam Okafor (P-3150) wants to move from Riverside FC to Northfield Juniors now. "
             "The parent says: '{}'")
_LEAGUE_ASK = {
    "superseded_registration_used": _REGISTER.format("Mia Okafor", "P-3104"),
    "age_on_wrong_date": _REGISTER.format("Noah Price", "P-3117"),
    "roster_full_ignored": _REGISTER.format("Ella Byrne", "P-3128"),
    "timeout_invented": _REGISTER.format("Noah Price", "P-3117"),
    "old_model_league": _REGISTER.format("Mia Okafor", "P-3104"),
    "condition_withheld": _REGISTER.format("Ada Okafor", "P-3162"),
    "sibling_discount_wrong": _INVOICE, "players_wrong_family": _INVOICE, "league_prompt_rewritten": _INVOICE,
    "fee_wrong_division_row": _INVOICE,
    "index_stale": _TRANSFER.format("His best friends all play for Northfield and he'd like to join them."),
    "bulletin_schema_drift": _TRANSFER.format("He wants to play with his school friends at Northfield."),
    "transfer_exception_claimed": _TRANSFER.format("He'd just prefer Northfield's coach - we still live in the same "
                                                   "house in Riverside."),
    "premature_termination": ("Two things for the Okafors: please register Mia Okafor (P-3104) at Riverside FC for "
                              "2026-27 on the right team with her fee, and tell me whether her brother Sam (P-3150) "
                              "can transfer to Northfield Juniors now - the parent says they have moved to Leeds, "
                              "40 miles away."),
}


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "bedrock-tours":
        if pair:
            Now.booking, ask = _TOURS_ASK[pair]
            return ask
        Now.booking = ["TB-204733", "TB-204702"][v % 2]
        return ["Hi, could you book us on the Sea Kayak on Wednesday 9 December? Both of us, both under 85 kg.",
                "Hello, the Horse Trek on Saturday 12 December for the four of us please - all under 80 kg."][v % 2]
    if Now.recorder == "agents-intake":
        ticket = _INTAKE_TICKET.get(pair or "", ["WB-50201", "WB-50202"][v % 2])
        return f"Lorry YX19 KLM is on the weighbridge with ticket {ticket} - please process its intake."
    if pair:
        return _LEAGUE_ASK[pair]
    return [_REGISTER.format("Ella Byrne", "P-3128"), _INVOICE][v % 2]


def traveller_replies(said: str) -> str | None:
    script = [("booking reference", f"It's {Now.booking}."), ("heart condition", "No, none of us has any of those."),
              ("Shall I", "Yes, go ahead."), ("anything else", "No, that's all - thanks.")]
    return Now.reply(script, said)


# ---- the model: reads the chat.completions request it is sent (Bedrock Converse arrives in that form) ---------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    return kit.by_role(body, MODEL, lambda t, asked: {
        "excursions desk assistant for Atlantic Trails": lambda: _tours(t, asked == OLD_BEDROCK),
        "gate clerk on Kelby": lambda: _gate(t, offered),
        "sampler on Kelby": lambda: _sampler(t, offered),
        "permit officer on Kelby": lambda: _officer(t),
        "registrations agent for the Valley Youth": lambda: _league(t, asked == OLD_MODEL),
    }, waiting=None)


def _tours(t: Talk, old: bool) -> dict[str, Any]:
    said = " ".join(t.users)
    if "that's all" in said:
        return reply("You're welcome - enjoy Madeira!")
    found = re.search(r"\bTB-\d{6}\b", said)
    if not found:
        return reply("Happy to help! Could you give me your booking reference, please? It starts TB-.")
    step = t.need(("find_booking", {"booking_ref": found.group(0)}))
    if step:
        return step
    booking = t.value("find_booking")["booking"]
    if "cancel" in t.users[0]:
        return _tours_cancel(t, booking)
    return _tours_book(t, booking, old)


_CODES = {"Zipline": "ZIP", "Canyoning": "CAN", "Horse Trek": "HOR", "Sea Kayak": "KAY"}


def _tours_book(t: Talk, booking: dict[str, Any], old: bool) -> dict[str, Any]:
    said, first, fault = " ".join(t.users), t.users[0], Now.fault
    code = next(c for word, c in _CODES.items() if word in first)
    name, min_age, max_kg, adult, child = ACTIVITIES[code]
    day = "2026-12-%02d" % int(re.search(r"(\d+) December", first).group(1))
    booked = t.value("book_excursion")
    if booked:
        return reply(f"All booked: {booked['excursion_id']}, {name} on {day} for {', '.join(booked['participants'])}, "
                     f"EUR {booked['charged']:.2f} charged to {booking['booking_ref']}." + _ANYTHING)
    party = booking["travellers"]
    if old:  # (the old model books the whole party on a departure it imagines, asking nothing)
        return _call("book_excursion", booking_ref=booking["booking_ref"], departure_id=f"DEP-{code}-NEXT",
                     participants=[p["name"] for p in party], weights_kg=[], total_price=adult * len(party))
    step = t.need(("get_departure", {"activity_code": code, "date": day}))
    if step:
        return step
    dep = t.value("get_departure")
    pounds = re.search(r"(\d+) lb", first)
    weight = (float(pounds.group(1)) if fault == "weight_lb_unconverted" else round(int(pounds.group(1)) / 2.2046, 1)) \
        if pounds else None
    if weight is not None and weight > max_kg:
        return reply(f"I'm sorry - the {name} has a maximum rider weight of {max_kg} kg and {weight:.1f} kg is over "
                     "it, so I can't book it. The Sea Kayak takes up to 130 kg - would that suit?" + _ANYTHING)
    going = [p for p in party if p["age"] >= min_age or fault == "under_min_age_booked"]
    left = [p for p in party if p not in going]
    if "heart condition" in t.system and code == "CAN" and fault != "medical_unasked" \
            and not t.value("record_medical_declaration"):
        if "none of us" not in said:
            return reply(f"Before I book the {name}: does anyone taking part have a heart condition or epilepsy, or "
                         "is anyone pregnant?")
        return _call("record_medical_declaration", booking_ref=booking["booking_ref"],
                     departure_id=dep["departure_id"], declaration="none declared: no heart condition, epilepsy or "
                     "pregnancy")
    lines = [(p["name"], adult if p["age"] >= 12 or child is None or fault == "child_price_wrong" else child)
             for p in going]
    total = sum(price for _, price in lines)
    if len(going) > 6:
        total = round(total * 0.9, 2)
    if "go ahead" not in said:
        priced = "; ".join(f"{n} EUR {p:.2f}" for n, p in lines)
        out = (f" {', '.join(p['name'] for p in left)} is under the minimum age of {min_age}, so can't take part - "
               "the Sea Kayak (from age 6) would suit.") if left else ""
        kg = f" ({weight:.1f} kg, within the {max_kg} kg limit)" if weight is not None else ""
        return reply(f"The {name} on {day} starts {dep['start']} from {dep['meeting_point']}.{out} For {priced}{kg} "
                     f"the total is EUR {total:.2f}. Shall I book it?")
    return _call("book_excursion", booking_ref=booking["booking_ref"], departure_id=dep["departure_id"],
                 participants=[p["name"] for p in going], weights_kg=[weight] if weight is not None else [],
                 total_price=total)


def _tours_cancel(t: Talk, booking: dict[str, Any]) -> dict[str, Any]:
    said, fault = " ".join(t.users), Now.fault
    done = t.value("cancel_excursion")
    if done:
        return reply(f"Cancelled ({done['cancellation_ref']}); EUR {done['refunded']:.2f} will be refunded to your "
                     "card." + _ANYTHING)
    ex = booking["excursions"][0]
    step = t.need(("get_weather_status", {"departure_id": ex["departure_id"]}))
    if step:
        return step
    weather = t.value("get_weather_status")
    hours = (datetime.fromisoformat(ex["start"]) - datetime(2026, 12, 7, 9, 10)).total_seconds() / 3600
    if weather["status"] == "cancelled_by_operator":
        share, why = 100, "As the operator has cancelled this departure for weather, you get a full refund."
    elif fault == "weather_claimed":  # (the fault: the traveller's grey forecast taken for the weather exception)
        share, why = 100, "As you're cancelling because of the weather, that counts as a weather cancellation: full refund."
    else:
        share = 100 if hours > 48 else 50 if hours >= 24 else 0
        why = (f"The departure is still running ({weather['forecast']['summary']}), and cancelling {hours:.0f} hours "
               f"before the start refunds {share}%.")
    refund = round(ex["paid"] * share / 100, 2)
    if "go ahead" not in said:
        return reply(f"Your {ex['activity']} ({ex['excursion_id']}) starts {ex['start'].replace('T', ' at ')}. {why} "
                     f"That is EUR {refund:.2f} of the EUR {ex['paid']:.2f} paid. Shall I cancel it?")
    return _call("cancel_excursion", booking_ref=booking["booking_ref"], excursion_id=ex["excursion_id"],
                 refund_amount=refund, reason=t.users[0][:90])


def _handing(offered: set[str], to: str, say: str) -> dict[str, Any]:
    return _call(next(n for n in offered if n.startswith(f"transfer_to_{to}")), say)


def _gate(t: Talk, offered: set[str]) -> dict[str, Any]:
    found = re.search(r"\bWB-\d{5}\b", " ".join(t.users))
    if not found:
        return reply("Which delivery ticket should I process?")
    step = t.need(("get_delivery", {"ticket_id": found.group(0)}))
    if step:
        return step
    ticket = t.value("get_delivery")["ticket"]
    w = ticket["weighbridge"]
    factor = 100 if Now.fault == "tonnes_to_kg_wrong" else 1000  # (the fault: tonnes to kg by a hundred)
    net_kg = round((w["gross"] - w["tare"]) * factor)
    done = t.value("record_weighbridge")
    if not done:
        return _call("record_weighbridge", f"Net load: {w['gross']} t - {w['tare']} t.", ticket_id=ticket["ticket_id"],
                     net_kg=net_kg)
    return _handing(offered, "sampler", f"Ticket {ticket['ticket_id']}: waste code {ticket['declared_waste_code']} "
                    f"({ticket['description']}), net {done['net_kg']} kg ({done['weighbridge_ref']}). Over to the "
                    "sampler.")


def _sampler(t: Talk, offered: set[str]) -> dict[str, Any]:
    weighed, ticket = t.value("record_weighbridge"), (t.value("get_delivery") or {}).get("ticket")
    if not weighed or not ticket:
        return reply("I was handed no weighed ticket - which load should I sample?")
    step = t.need(("get_sample_results", {"ticket_id": ticket["ticket_id"]}))
    if step:
        return step
    sample = t.value("get_sample_results")
    code = ticket["declared_waste_code"]
    total = round(sum(c["pct"] for c in sample["contaminants"]), 1)
    limit = THRESHOLDS[code][1]
    verdict = "pass" if total <= limit or Now.fault == "contamination_over_accepted" else "reject"
    done = [v for _, v in t.got("record_sample") if isinstance(v, dict)]
    if not done or (Now.fault == "sample_repeated" and len(done) == 1):
        told = (f"Contamination {' + '.join(str(c['pct']) for c in sample['contaminants'])} = {total}% against "
                f"{limit}% for {code}: {'rejecting' if verdict == 'reject' else 'passing'} the load.")
        acted = "pass" if Now.fault == "reasoning_action_mismatch" else verdict  # (the fault: says reject, records pass)
        return _call("record_sample", told, ticket_id=ticket["ticket_id"], contamination_pct=total, verdict=acted)
    s = done[-1]
    return _handing(offered, "permit_officer", f"Ticket {ticket['ticket_id']}: sample {sample['sample_id']} "
                    f"contamination {s['contamination_pct']}% (maximum {limit}% for {code}), verdict {s['verdict']} "
                    f"({s['sample_ref']}). Over to the permit officer.")


def _officer(t: Talk) -> dict[str, Any]:
    ticket = (t.value("get_delivery") or {}).get("ticket")
    sampled, weighed = t.value("record_sample"), t.value("record_weighbridge")
    if not ticket or not sampled or not weighed:
        return reply("I have been handed no ticket, weight or sample verdict, so I can't decide on any load - which "
                     "ticket should I check?")
    code, site = ticket["declared_waste_code"], ticket["site"]
    step = t.need(("get_site_permit", {"site": site}), ("get_accepted_today", {"site": site, "waste_code": code}))
    if step:
        return step
    permit, today = t.value("get_site_permit"), t.value("get_accepted_today")
    listed = {c["code"]: c["daily_limit_t"] for c in permit["waste_codes"]}
    already = sum(x["net_kg"] for x in today["loads"])
    total_t = round((already + weighed["net_kg"]) / 1000, 2)
    why = None
    if sampled["verdict"] != "pass":
        why = f"failed its sample ({sampled['contamination_pct']}% contamination)"
    elif code not in listed:
        why = f"waste code {code} is not on permit {permit['permit_no']}"
    elif ("daily_limit_t" in t.system and Now.fault != "daily_limit_exceeded" and total_t > listed[code]):
        why = (f"{already / 1000:.2f} t of {code} accepted today plus this {weighed['net_kg'] / 1000:.2f} t makes "
               f"{total_t} t, over the daily limit of {listed[code]} t")
    if why is None:
        done = t.value("accept_load")
        if not done:
            return _call("accept_load", ticket_id=ticket["ticket_id"], net_kg=weighed["net_kg"], waste_code=code)
        return reply(f"Ticket {ticket['ticket_id']} accepted ({done['acceptance_ref']}, bay {done['bay']}): {code} on "
                     f"permit {permit['permit_no']}, {total_t} t of {listed[code]} t today.")
    done = t.value("reject_load")
    if not done:
        return _call("reject_load", ticket_id=ticket["ticket_id"], reason=f"Load {why}.")
    return reply(f"Ticket {ticket['ticket_id']} rejected ({done['rejection_ref']}): the load {why}.")


def _age(dob: str, on: date) -> int:
    born = date.fromisoformat(dob)
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _division(age: int) -> str | None:
    return next((d for d, (lo, hi, _, _) in DIVISIONS.items() if lo <= age <= hi), None)


def _league(t: Talk, old: bool) -> dict[str, Any]:
    ask, fault = t.users[0], Now.fault
    players = re.findall(r"\bP-\d{4}\b", ask)
    told: list[str] = []
    if "register" in ask and players:
        got = _league_register(t, players[0], old)
        if "choices" in got:
            return got
        told.append(got["text"])
    if "transfer" in ask.lower() and fault != "premature_termination":  # (the fault: the second ask left unworked)
        got = _league_transfer(t, players[-1], ask)
        if "choices" in got:
            return got
        told.append(got["text"])
    if "invoice" in ask:
        got = _league_invoice(t, re.search(r"\bF-\d{3}\b", ask).group(0))
        if "choices" in got:
            return got
        told.append(got["text"])
    return reply(" ".join(told))


def _registrations(t: Talk, sql: str) -> dict[str, Any] | list[dict[str, Any]]:
    """The rows of `sql` (a step when not read yet)."""
    step = t.need(("query_league", {"sql": sql}))
    if step:
        return step
    return next(v for a, v in t.got("query_league") if a == {"sql": sql} and isinstance(v, dict))["rows"]


def _dob(rows: list[dict[str, Any]], player: str) -> tuple[str, str]:
    mine = [r for r in rows if r["player_id"] == player]
    if Now.fault == "superseded_registration_used":  # (the fault: the first row submitted read, its correction not)
        row = sorted(mine, key=lambda r: r["submitted_on"])[0]
    else:
        row = next(r for r in mine if r["status"] == "active")
    return row["dob"], row["registration_id"]


def _league_register(t: Talk, player: str, old: bool) -> dict[str, Any]:
    fault = Now.fault
    if old:  # (the old model registers on a team it names itself, reading nothing)
        done = t.value("register_player")
        if not done:
            return _call("register_player", player_id=player, team_id="T-FOX", division="U10", fee=60.0)
        return {"text": f"Registered {player} on {done['team_id']} ({done['registration_ref']})."}
    rows = _registrations(t, "SELECT r.*, p.first_name, p.last_name, p.club FROM registrations r JOIN players p USING "
                             f"(player_id) WHERE r.player_id = '{player}' ORDER BY r.submitted_on")
    if isinstance(rows, dict):
        return rows
    dob, reg = _dob(rows, player)
    on = date(2026, 12, 7) if fault == "age_on_wrong_date" else CUTOFF  # (the fault: today's age)
    age = _age(dob, on)
    division = _division(age)
    club = rows[0]["club"]
    tried = t.got("list_teams")
    teams = t.value("list_teams")
    done = t.value("register_player")
    if teams is None and not done:
        if tried and fault == "timeout_invented":  # (the fault: a team made up after the timeout)
            return _call("register_player", "The teams service timed out; Riverside's U10 side is usually "
                         "RIV-U10-A, so I'll use that.", player_id=player, team_id="RIV-U10-A", division=division,
                         fee=DIVISIONS[division][3])
        if len(tried) >= 2:
            return {"text": "The league's teams service timed out twice, so I could not place the player or register "
                            "them; please try again shortly."}
        return _call("list_teams", "That call timed out - trying it once more." if tried else None, club=club)
    if not done:
        cap = DIVISIONS[division][2]
        fits = [x for x in teams["teams"] if x["division"] == division
                and (x["roster_count"] < cap or fault == "roster_full_ignored")]
        if not fits:
            return {"text": f"Every {division} team at {club} is full ({cap} players), so I have not registered them."}
        return _call("register_player", player_id=player, team_id=fits[0]["team_id"], division=division,
                     fee=DIVISIONS[division][3])
    conditions = "" if fault == "condition_withheld" or not done["conditions"] else (
        " Please note: " + "; ".join(done["conditions"]) + ".")
    return {"text": f"{rows[0]['first_name']} {rows[0]['last_name']} ({player}, born {dob} per {reg}) is {age} on 31 "
                    f"August 2026, so plays {division}: registered on {done['team_id']} ({done['registration_ref']}), "
                    f"fee GBP {done['fee_due']:.2f}.{conditions}"}


def _league_transfer(t: Talk, player: str, ask: str) -> dict[str, Any]:
    fault = Now.fault
    step = t.need(("search_bulletins", {"query": "transfer window 2026-27"}))
    if step:
        return step
    docs = t.value("search_bulletins")["results"]
    replaced = {d["replaces"].split()[0] for d in docs if d.get("replaces")}
    # (a bulletin that replaces another's winter window leaves that one's summer window standing)
    windows = [w for d in docs for w in d.get("windows") or ()
               if not (d["bulletin_id"] in replaced and w["from"] > "2026-10-01")]
    today = "2026-12-07"
    inside = next((w for w in windows if w["from"] <= today <= w["to"]), None)
    moved = re.search(r"moved to .+?(\d+) miles", ask)
    relocated = bool(moved and int(moved.group(1)) > 30)
    done = t.value("approve_transfer")
    if done:
        return {"text": f"Transfer {done['transfer_id']} approved: {player} moves from {done['from_club']} to "
                        f"{done['to_club']} from {done['effective']}."}
    if inside or relocated or fault == "transfer_exception_claimed":
        why = (f"inside the transfer window {inside['from']} to {inside['to']}" if inside else
               "the family has moved home more than 30 miles (relocation exception)")
        return _call("approve_transfer", f"Approving: {why}.", player_id=player, from_club="Riverside FC",
                     to_club="Northfield Juniors", reason=why)
    later = sorted(w["from"] for w in windows if w["from"] > today)
    return {"text": f"I can't approve {player}'s transfer: today ({today}) is outside every transfer window in the "
                    "bulletins and no move of home over 30 miles was given"
                    + (f"; the next window opens {later[0]}." if later else "; I found no upcoming window.")}


def _league_invoice(t: Talk, family: str) -> dict[str, Any]:
    fault = Now.fault
    rows = _registrations(t, "SELECT p.player_id, p.first_name, p.last_name, r.dob, r.status, r.registration_id FROM "
                             f"players p JOIN registrations r USING (player_id) WHERE p.family_id = '{family}' ORDER BY "
                             "p.player_id, r.version")
    if isinstance(rows, dict):
        return rows
    kids = []
    for r in rows:
        if r["status"] != "active":
            continue
        division = _division(_age(r["dob"], CUTOFF))
        row = "U16" if fault == "fee_wrong_division_row" and division == "U14" else division  # (the wrong row)
        kids.append((r["player_id"], r["first_name"], division, DIVISIONS[row][3]))
    kids.sort(key=lambda k: -k[3])
    discounts = ([15] * len(kids) if fault == "sibling_discount_wrong" else [0, 15] + [25] * len(kids))[:len(kids)]
    if "Sibling discount" not in t.system:
        discounts = [0] * len(kids)
    lines = [{"player_id": p, "name": n, "division": d, "fee": fee, "discount_pct": pct,
              "amount": round(fee * (100 - pct) / 100, 2)} for (p, n, d, fee), pct in zip(kids, discounts)]
    total = round(sum(x["amount"] for x in lines), 2)
    done = t.value("record_invoice")
    if not done:
        return _call("record_invoice", family_id=family, lines=lines, total=total)
    listed = "; ".join(f"{x['name']} {x['division']} GBP {x['fee']:.2f} - {x['discount_pct']}% = GBP {x['amount']:.2f}"
                       for x in lines)
    return {"text": f"Invoice {done['invoice_id']} for {family}: {listed}; total GBP {total:.2f}, due by "
                    f"{done['due_by']}."}


# ---- the recorders --------------------------------------------------------------------------------------------------


class BedrockTours(kit.AgentotelRecorder):
    """The excursions desk as a boto3 Bedrock Runtime converse loop with a toolConfig (kit.converse_loop), the tools
    `@agentotel.tool`s, under agentotel; the traveller's reply appended when the answer holds its cue."""

    agent = TOURS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.client = kit.bedrock_client(url, "eu-west-1")
        self.tools = kit.agentotel_tools(TOURS_TOOLS)

    def body(self, task: str) -> str:
        return kit.converse_loop(self.client, tours_model(), tours_instructions(), task, self.tools,
                                 declared(TOURS_TOOLS), traveller_replies)


class AgentsIntake(kit.AgentotelRecorder):
    """The intake team on the OpenAI Agents SDK (chat completions model): gate clerk -> sampler -> permit officer by
    two handoffs in one Runner.run, under agentotel. The faulty deployment's sampler -> officer handoff filter keeps
    the handoff call alone."""

    agent = INTAKE

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIChatCompletionsModel

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))
        team = [("gate_clerk", GATE_RULES, GATE_TOOLS), ("sampler", sampler_rules(), SAMPLER_TOOLS),
                ("permit_officer", officer_rules(), OFFICER_TOOLS)]
        return kit.agents_chain(chat, team, task,
                                drop_into="permit_officer" if Now.fault == "handoff_context_lost" else None)


class PaiLeague(kit.AgentotelRecorder):
    """The registration agent as a pydantic-ai Agent on an openai chat model (kit.pydantic_chat, one request, nobody
    replying), under agentotel."""

    agent = LEAGUE

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", league_model(), LEAGUE, league_instructions(), LEAGUE_TOOLS, task,
                                 lambda said: None)


# The registration agent as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer
# TOOL spans, through agentotel-collector.
OiLeague = kit.chat_app(kit.OpenInferenceRecorder, LEAGUE, LEAGUE_TOOLS, league_model, league_instructions)


RECORDERS: dict[str, Any] = {"bedrock-tours": BedrockTours, "agents-intake": AgentsIntake, "pai-league": PaiLeague,
                             "oi-league": OiLeague}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: Bedrock Converse and chat completions there)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, answer, asking, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    quoted = after(tool_step("get_departure"))  # (the desk's first words after reading the departure: quote or refusal)
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        # the excursions desk
        "weight_lb_unconverted": ("model", f"{trail} unit conversion skipped: 205 lb read as 205 kg, the rider refused "
                                           "the Horse Trek (95 kg); 93.0 kg is within it and the twin books", quoted),
        "under_min_age_booked": ("model", f"{tau} (comparing two records: a traveller's age vs the table's minimum): a "
                                          "7-year-old booked on the zipline (minimum 8); the twin leaves her out and "
                                          "says so", asking("book_excursion"), quoted),
        "child_price_wrong": ("model", f"{trail} a figure by the wrong formula: two children under 12 charged the "
                                       "adult 85.00 (340.00) where the child price gives 290.00",
                              asking("book_excursion"), quoted),
        "medical_unasked": ("model", f"{mast} FM-2.2 failing to ask for clarification: canyoning quoted and booked "
                                     "with no medical declaration asked or recorded; the twin asks", quoted),
        "tours_prompt_rewritten": ("prompt", "instructions changed: the canyoning medical-declaration rule dropped "
                                             "from the desk's prompt; booked with none asked", nth_llm(0)),
        "old_model_tours": ("product", f"configuration: the desk pins an old model ({OLD_BEDROCK}), which books an "
                                       "invented departure unasked", nth_llm(0)),
        "weather_claimed": ("model", f"{tau} (an exception the user's words do not give): a grey forecast, the "
                                     "departure operating 29.8 h ahead, refunded 100% 'as a weather cancellation'; "
                                     "the twin refunds 50%", asking("cancel_excursion"),
                            after(tool_step("get_weather_status"))),
        "weather_wrong_activity": ("tool", f"{trail} API issues: get_weather_status(DEP-KAY-1208) answers the "
                                           "zipline's departure (operating); 50% refunded where the kayak was called "
                                           "off for wind (100%)", tool_step("get_weather_status")),
        # the intake team
        "tonnes_to_kg_wrong": ("model", f"{trail} unit conversion done wrong: 18.64 t - 11.22 t recorded as 742 kg "
                                        "(x100) where the rule's 1 t = 1000 kg gives 7420", asking("record_weighbridge")),
        "contamination_over_accepted": ("model", f"{tau} (a record's sum vs a table's row): contaminants 2.4 + 2.7 + "
                                                 "1.2 = 6.3% passed against 15 01 01's 5.0% maximum",
                                        asking("record_sample")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 reasoning-action mismatch: the sampler says it rejects "
                                               "(6.3% over 5.0%) and records 'pass'", asking("record_sample")),
        "sample_repeated": ("model", f"{mast} FM-1.3 step repetition: record_sample called twice",
                            asking("record_sample", 1)),
        "daily_limit_exceeded": ("model", f"{tau} (a sum over a limit: used plus asked): 38.5 t accepted today plus "
                                          "7.42 t = 45.92 t over the 45 t daily limit, accepted",
                                 asking("accept_load")),
        "officer_prompt_rewritten": ("prompt", "instructions changed: the daily-limit rule dropped from the permit "
                                               "officer's prompt; the load over the day's limit accepted",
                                     after_handoff(1)),
        "permit_wrong_site": ("tool", f"{trail} API issues: get_site_permit(KMR-NORTH) answers KMR-SOUTH's permit, "
                                      "which lists 17 09 04; a load off the site's permit accepted",
                              tool_step("get_site_permit")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 loss of conversation history at the handoff: the permit "
                                           "officer gets the handoff call alone and decides nothing",
                                 after_handoff(1)),
        # the registration agent
        "superseded_registration_used": ("model", f"{mast} disobeying the task spec: REG-5101's birth date 2014-10-12 "
                                                  "used though REG-5188 (2016-10-12) supersedes it; U12 at 75.00 "
                                                  "where U10 at 60.00", asking("register_player")),
        "age_on_wrong_date": ("model", f"{trail} a date read on the wrong day: Noah (born 2016-11-20) aged 10 today "
                                       "but 9 on the 31 August cut-off; placed U12 where U10", asking("register_player")),
        "roster_full_ignored": ("model", f"{tau} (a sum over a limit: roster 14 plus one over the U12 maximum 14): "
                                         "Ella placed on the full T-OWL; the twin picks T-HAWK (11)",
                                asking("register_player")),
        "timeout_invented": ("model", f"{trail} timeout answered with invented values: list_teams timed out and the "
                                      "player registered on a made-up team RIV-U10-A; the twin tries once more",
                             after(tool_step("list_teams"))),
        "old_model_league": ("product", f"configuration: an old model ({OLD_MODEL}) registers with no registration or "
                                        "team read", nth_llm(0)),
        "sibling_discount_wrong": ("model", f"{trail} a figure by the wrong formula: 15% off every child (191.25) "
                                            "where the rule's full / 15% / 25% gives 198.75", asking("record_invoice")),
        "index_stale": ("tool", "retrieval index stale: the index built before 20 November's bulletin serves the old "
                                "windows alone; a transfer inside the brought-forward window (1 Dec - 15 Jan) refused",
                        tool_step("search_bulletins")),
        "transfer_exception_claimed": ("model", f"{tau} (an exception the user's words do not give): a transfer "
                                                "outside every window approved as a relocation though the parent "
                                                "says they live in the same house", asking("approve_transfer")),
        "players_wrong_family": ("tool", f"{trail} API issues: query_league for family F-204 answers F-240's "
                                         "children; the Grants invoiced as the Okafors", tool_step("query_league")),
        "premature_termination": ("model", f"{mast} FM-3.1 premature termination: a registration and a transfer "
                                           "asked for, the transfer left unanswered", answer),
        "condition_withheld": ("model", f"{mast} FM-2.4 withholding information: register_player's condition (no "
                                        "matches until the medical consent form is uploaded) not told", answer),
        "league_prompt_rewritten": ("prompt", "instructions changed: the sibling-discount rule dropped from the "
                                              "prompt; three children invoiced at full fees (225.00)", nth_llm(0)),
        "bulletin_schema_drift": ("tool", f"{trail} tool output shape changed: the bulletins' windows renamed to "
                                          "periods {opens, closes}; no window read, a transfer inside one refused",
                                  tool_step("search_bulletins")),
        "fee_wrong_division_row": ("model", f"{trail} a figure from the wrong table row: Ada (U14, 90.00) charged "
                                            "U16's 110.00; 218.75 where 198.75", asking("record_invoice")),
    }
    chosen = {
        "bedrock-tours": ["weight_lb_unconverted", "under_min_age_booked", "child_price_wrong", "medical_unasked",
                          "tours_prompt_rewritten", "old_model_tours", "weather_claimed", "weather_wrong_activity"],
        "agents-intake": ["tonnes_to_kg_wrong", "contamination_over_accepted", "reasoning_action_mismatch",
                          "sample_repeated", "daily_limit_exceeded", "officer_prompt_rewritten", "permit_wrong_site",
                          "handoff_context_lost"],
        "pai-league": ["superseded_registration_used", "age_on_wrong_date", "roster_full_ignored", "timeout_invented",
                       "old_model_league", "sibling_discount_wrong", "index_stale"],
        "oi-league": ["transfer_exception_claimed", "players_wrong_family", "premature_termination",
                      "condition_withheld", "league_prompt_rewritten", "bulletin_schema_drift",
                      "fee_wrong_division_row"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind, scored once (d8ba467's detectors,
# main's HEAD when scored; agentotel/analysis/ unread; load 5.1 -> 6.9): 30 pairs, 4 recorders - diff top-1 30/30, check
# step+layer 11/30, good runs warned 10/30 (recording /tmp/h40-rec-xw15asle).
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_TONNES = ("ungrounded_answer@22/model ranked first (the answer's day total in tonnes, derived from the loads listed "
           "plus this one, the good twins alike)")
CHECK_MISSED = {
    "model-bedrock-tours-under-min-age-booked": _NOTHING + "find_booking's Ines Silva, age 7, booked on the zipline whose "
                                                "row in the table says minimum age 8",
    "model-bedrock-tours-child-price-wrong": _NOTHING + "ages 10 and 9 priced at the adult 85.00, the table's child "
                                             "column (under 12) 60.00 unread; total 340.00 where 290.00",
    "model-bedrock-tours-medical-unasked": _NOTHING + "the prompt's 'before booking it, ask whether anyone ... record "
                                           "the answer with record_medical_declaration' and book_excursion with no "
                                           "question asked and that tool never called",
    "product-bedrock-tours-old-model-tours": "missing_evidence@4/product (book_excursion with no get_departure, by the "
                                             "policy) ranked first; model_changed@1 (info), right, ranked below",
    "model-agents-intake-tonnes-to-kg-wrong": _TONNES + "; record_weighbridge net_kg 742 from 18.64 t - 11.22 t, the "
                                              "rule's 1 t = 1000 kg giving 7420",
    "model-agents-intake-contamination-over-accepted": _TONNES + "; record_sample verdict 'pass' with contaminants "
                                                       "2.4 + 2.7 + 1.2 = 6.3% over the table's 5.0% for 15 01 01",
    "model-agents-intake-daily-limit-exceeded": _NOTHING + "get_accepted_today's loads (38,500 kg) plus this 7,420 kg "
                                                "past the permit's daily_limit_t 45 for the code, accepted",
    "tool-agents-intake-permit-wrong-site": _NOTHING + "get_site_permit(site KMR-NORTH) answered site KMR-SOUTH's "
                                            "permit (another key value in its result); a code off the site's permit "
                                            "accepted",
    "model-pai-league-superseded-registration-used": _NOTHING + "the row read (REG-5101, status 'superseded') where "
                                                    "REG-5188 supersedes it; the prompt says never to use a superseded "
                                                    "row",
    "model-pai-league-age-on-wrong-date": _NOTHING + "born 2016-11-20 is 9 on the rule's 31 August 2026 cut-off; the "
                                          "answer says 10 and registers U12 (the table's row for 10-11)",
    "model-pai-league-roster-full-ignored": _NOTHING + "register_player on T-OWL whose roster_count 14 is the U12 "
                                            "roster maximum 14 in the table",
    "model-pai-league-sibling-discount-wrong": _NOTHING + "record_invoice's discount_pct 15/15/15 where the rule gives "
                                               "0/15/25 by fee order; total 191.25 where 198.75",
    "model-oi-league-transfer-exception-claimed": ("answer_misread@5/model ranked first (an approved transfer's "
                                                   "'from 2026-12-07' against a window's 'from 2027-01-01', the good "
                                                   "twins alike); approve_transfer @3 with today outside every window "
                                                   "and the parent's 'we still live in the same house' against the "
                                                   "30-mile exception"),
    "tool-oi-league-players-wrong-family": _NOTHING + "query_league WHERE family_id = 'F-204' (the Okafors) answered "
                                           "two Grant children; rows carry no family_id, only names other than the "
                                           "task's",
    "model-oi-league-premature-termination": _NOTHING + "the request asks a registration and a transfer; calls and "
                                             "answer cover the registration alone",
    "model-oi-league-condition-withheld": _NOTHING + "register_player's conditions (no matches until the medical "
                                          "consent form is uploaded) absent from the answer, which the prompt says "
                                          "to tell",
    "model-oi-league-fee-wrong-division-row": _NOTHING + "Ada's line division U14 with fee 110.00, the table's U16 "
                                              "row; U14's fee is 90.00",
}
# (every blind alarm - 93.0 kg by the stated 2.2046, the day's tonnes, the sample ref beside the ticket, a narrower SELECT, 'from' read as a label - is quiet since this session's later commits; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "bedrock-tours": {"required_before": {"book_excursion": ["find_booking", "get_departure"],
                                          "cancel_excursion": ["find_booking", "get_weather_status"]}},
    "agents-intake": {"required_before": {"record_weighbridge": ["get_delivery"],
                                          "record_sample": ["get_sample_results"],
                                          "accept_load": ["get_site_permit", "get_accepted_today"]}},
    "pai-league": {"required_before": {"register_player": ["query_league", "list_teams"],
                                       "record_invoice": ["query_league"],
                                       "approve_transfer": ["search_bulletins"]}},
    "oi-league": {"required_before": {"register_player": ["query_league", "list_teams"],
                                      "record_invoice": ["query_league"],
                                      "approve_transfer": ["search_bulletins"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h40-rec-", pairs, produce, kit.through_collector("oi-league"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
