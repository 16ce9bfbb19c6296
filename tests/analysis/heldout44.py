"""A forty-fourth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
an RV park and campground's reservations desk talking with a guest over several turns under a written policy, an
aircraft charter quoting team (a sales agent delegating to an operations agent and a crew scheduler) and a water
utility's leak analytics agent reading district meter flows by SQL (real DuckDB), dated network classification notes
and work orders, run through real SDKs and frameworks.

    python tests/analysis/heldout44.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout44.py --score DIR [...]       # the runs a call left in DIR, scored again

Pinecrest Lakeside RV Park's desk (find_reservation, check_availability, record_medical_document, book_pitch,
cancel_reservation) works by a written policy: a pitch-type table (maximum rig length in metres, maximum occupancy,
pets, hookup amps, nightly rate); a guest's rig length in feet converted (1 ft = 0.3048 m); pets only on pitch types
marked yes; a 3-night minimum stay for arrivals in peak season (15 June - 15 September); cancellation refunds by days
before arrival from a table, unless the guest gives a documented medical emergency (a doctor's or hospital's document
reference, recorded first); every booking or cancellation quoted and agreed first. The guest's replies are scripted,
said when the desk's message holds their cue. Northwind Air Charter's quoting team: the sales agent (get_quote: a
quote's revisions, the latest current one superseding the others; issue_quote with the deposit from a band table by
trip value) delegates to an operations agent (get_aircraft: payload in lb, required runway in m; get_airport: runway in
ft; passengers' and bags' kilograms converted, 1 kg = 2.2046 lb, 1 m = 3.2808 ft) and to a crew scheduler
(get_crew_roster, assign_crew: duty already flown today plus the trip's block hours plus 1.5 h within 12 h). Harbour
Water's leak analytics agent (query_meters: SQL over districts and hourly flows, some meters in US gallons per minute;
search_network_notes: dated, versioned classification notes; list_work_orders; raise_work_order) takes a district's
night flow as the mean of its readings from 02:00 to 04:00 only, in m3/h (1 US gpm = 0.2271 m3/h), against a threshold
of the district type's rate per km of mains (a table) times the district's mains_km, the type from the latest note;
closed and superseded work orders do not count as open. Each recorder in a process of its own:

- `openai-rv` (reservations desk): a plain openai SDK chat.completions tool loop over several guest turns
  (kit.chat_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `pai-charter` (quoting team): pydantic-ai agents under agentotel, the sales agent delegating to the operations agent
  and the crew scheduler from inside its ask_operations / ask_crew tools (each awaits the sub-agent's run);
- `lg-leak` (leak analytics): a LangGraph StateGraph with one create_react_agent (ChatOpenAI) under agentotel;
- `oi-leak` (leak analytics): a plain openai SDK chat loop (kit.chat_app) under OpenInference's openai
  instrumentation, the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (pets on a no-pets pitch, a party over the table's occupancy, a minimum stay in
peak season skipped, an exception claimed that the guest's words do not give, a documented exception ignored, a crew
over its duty limit counting duty flown, a deposit from the wrong band), MAST (Cemri et al. 2025: FM-1.4 context lost
at a handoff, FM-1.3 step repetition, FM-2.2 no clarification asked, FM-3.1 premature termination, FM-2.4 withholding
information, a superseded quote revision / work order read as current), TRAIL (a unit conversion done wrong or
skipped, a timeout answered with an invented crew, a rate limit answered with an invented open order, a reading
window ignored, a threshold from the wrong table row) and outside the model (instructions rewritten without the
night-window rule, old models configured, a stale notes index, a SQL API's result shape changed, APIs answering
another reservation / district). Good twins: a long rig moved to a pitch that fits, a dog and a too-long rig refused,
a party of seven refused, a stay extended to the peak minimum after asking, a 50% refund for a cold, a full refund
for a documented hospital admission, a payload over the limit refused, a short runway refused, a crew over its limit
passed over, a timed-out roster and a rate-limited work-order list tried once more, gpm converted, a reclassified
district's threshold used, an ambiguous district name asked about, a valve notice told. Ground truth is located on the
recorded faulty run by what its steps did (heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, 8fb16fac7fd9d1e2f3e4d1ada59de35ed02d11d6, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 7.7 at the start, 10.1 at
the end, other helpers running; recording /tmp/h44-rec-vb4wgnpd): 30 pairs, 4 recorders (a plain openai chat loop over
several guest turns, pydantic-ai delegation to two sub-agents, LangGraph, OpenInference through the collector) - diff
top-1 30/30, check step+layer 17/30, good runs with a warning 15/30. Of check's 17, six RV hits (a too-long rig, a dog
on a no-pets pitch, seven on a six-person pitch, a short peak stay, a cold refunded as an emergency, a documented
emergency refused) are missing_evidence at the write, from the prompt's 'read a reservation with find_reservation and
a pitch with check_availability' read as both reads before every write - the good twins that write get it too, so the
step is right for a reason that is not the fault's; two charter hits (kg read as lb, a runway divided by 3) are
ungrounded_answer on the operations agent's figures, which fires on good twins alike. Hits for the fault's own reason:
instructions changed, a stale index, a SQL API's shape changed, a handoff that lost the brief, a rate limit ignored, a
superseded work order cited, and the three old models (found by a missing read under the policy, or model_changed).
Missed: every rule comparing a record's field with the instructions (duty flown plus the trip over 12 h, a deposit
from the wrong band, a superseded quote revision issued, gpm taken as m3/h, the whole day averaged outside the night
window, a threshold from the wrong row), a crew invented after a timeout, a repeated work order, a tool answering
another reservation or district, a notice withheld, a second district left unanswered and a question left unasked.
The 15 warned good runs are three readings: missing_evidence from the paired-reads rule above (6), ungrounded_answer on
the operations agent's kg sum and its lb conversion (7), and ungrounded_answer on a threshold that is a table rate
times the district's mains_km (2).
Session 30 (after the blind score, main's final code of that session): check step+layer 9/30, good runs warned 2/30 -
the eight hits by place are listed missed (a read a rule pairs with one thing is needed for that thing only; a sub-
agent's total of the brief's weights and its stated conversion are grounded); the leak desk's table rate x mains_km
threshold is still read as ungrounded.
"""

from __future__ import annotations

import functools
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
from heldout9 import Talk, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
RV, CHARTER, LEAK = "pinecrest-rv-desk", "northwind-charter-quotes", "harbour-water-leak-analytics"
OPS, CREW = "northwind-operations", "northwind-crew-scheduler"
TODAY = date(2027, 6, 1)


class Now(kit.World):
    """The world of the run being recorded."""

    guest = "Dana Whitfield"


_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _call(tool: str, say: str | None = None, **arguments: Any) -> dict[str, Any]:
    return reply(say, (tool, arguments))


def _got(t: Talk, tool: str, arguments: dict[str, Any]) -> Any:
    """The latest successful result of `tool` called with exactly `arguments`."""
    ok = [v for a, v in t.got(tool) if a == arguments and isinstance(v, (dict, list))]
    return ok[-1] if ok else None


# ---- the RV park's world --------------------------------------------------------------------------------------------

# code: name, maximum rig length (m; 0 = no rigs), maximum occupancy, pets, amps, nightly (USD)
PITCHES = {"FH": ("Full hookup (back-in)", 12.0, 6, True, 50, 68.0), "PT": ("Pull-through", 14.0, 6, False, 50, 74.0),
           "EL": ("Electric only", 9.0, 4, True, 30, 48.0), "TN": ("Tent", 0.0, 4, True, 0, 28.0)}
_PETS = ("Pets: only on pitch types whose Pets column says yes. Never place a guest travelling with a dog or a cat on a "
         "pitch type marked no, whatever else fits.")


def rv_instructions() -> str:
    rows = "\n".join(f"| {name} | {code} | {'no rigs' if m == 0 else f'{m:.1f} m'} | {occ} | {'yes' if pets else 'no'} "
                     f"| {amps or 'none'} A | {rate:.2f} |" for code, (name, m, occ, pets, amps, rate) in PITCHES.items())
    return "\n".join([
        "You are the reservations assistant at Pinecrest Lakeside RV Park & Campground. Today is Tuesday 1 June 2027.",
        "",
        "| Pitch type | Code | Max rig length | Max occupancy | Pets | Hookup | Nightly (USD) |",
        "|---|---|---|---|---|---|---|", rows,
        "",
        "How to place a guest:",
        "1. Rig lengths: guests give feet. Convert to metres (1 ft = 0.3048 m, two decimals) and compare with the "
        "pitch type's max rig length; a rig longer than that does not fit.",
        "2. The whole party (adults and children) must be within the pitch type's max occupancy.",
        "3. A rig that needs 50 amp service only goes on a 50 A pitch type.",
        _PETS,
        "4. Peak season runs 15 June to 15 September inclusive. An arrival in peak season must stay at least 3 nights - "
        "ask the guest whether they will extend before you book anything shorter; never book it short.",
        "If the requested pitch type does not fit, offer the first type in the table that does; if none does, say so "
        "and book nothing.",
        "",
        "Cancellations - refund of what was paid, by whole days from today to the arrival date:",
        "| Days before arrival | Refund |", "|---|---|",
        "| 30 or more | 100% less a 15.00 fee |", "| 8 to 29 | 50% |", "| 7 or fewer | none |",
        "The only exception is a documented medical emergency: when the guest gives the reference of a doctor's or "
        "hospital's document, record it with record_medical_document first and refund 100% with no fee. Feeling unwell "
        "without a document is not the exception.",
        "",
        "Always read a reservation with find_reservation and a pitch with check_availability before acting on them, tell "
        "the guest the price or refund and get their yes before book_pitch or cancel_reservation.",
    ])


def rv_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_rv" else MODEL


_RESERVATIONS = {  # confirmation: guest, pitch, type, arrive, nights, paid
    "PC-40133": ("Marta Lindqvist", "B-07", "FH", "2027-06-13", 3, 204.0),
    "PC-40147": ("Owen Tremblay", "C-02", "PT", "2027-06-05", 3, 222.0),
    "PC-40112": ("Dana Whitfield", "B-11", "FH", "2027-06-20", 5, 340.0),
    "PC-40121": ("Greg Alvarez", "B-03", "FH", "2027-07-20", 5, 340.0),
    "PC-40160": ("Priya Natarajan", "A-05", "EL", "2027-07-30", 3, 144.0),
}


def find_reservation(confirmation: str) -> dict[str, Any]:
    """A reservation by its confirmation number: guest, pitch, arrival, nights, amount paid, party."""
    if Now.fault == "reservation_wrong_record" and confirmation == "PC-40112":  # (the fault: the PMS answers PC-40121)
        confirmation = "PC-40121"
    got = _RESERVATIONS.get(confirmation)
    if not got:
        return {"reservation": None}
    guest, pitch, kind, arrive, nights, paid = got
    return {"reservation": {"confirmation": confirmation, "guest": {"name": guest, "email": f"{guest.split()[0].lower()}"
            "@example.com"}, "pitch": {"pitch_id": pitch, "type": kind}, "arrive": arrive, "nights": nights,
            "status": "confirmed", "payment": {"paid_usd": paid, "method": "card", "last4": "4417"},
            "party": {"adults": 2, "children": 0, "pets": 0}}}


def check_availability(pitch_type: str, arrive: str, nights: int) -> dict[str, Any]:
    """Free pitches of a type for the stay: each pitch's length, hookup and pet rule; the nightly rate."""
    name, m, occ, pets, amps, rate = PITCHES[pitch_type]
    free = [{"pitch_id": f"{'ABCD'[i]}-{10 + 3 * i:02d}", "length_m": m, "amps": amps, "pets_allowed": pets,
             "surface": "gravel", "shade": i % 2 == 0} for i in range(2)]
    return {"pitch_type": pitch_type, "name": name, "arrive": arrive, "nights": nights, "available": free,
            "nightly_usd": rate, "max_occupancy": occ}


def record_medical_document(confirmation: str, document_ref: str, description: str) -> dict[str, Any]:
    """Records a medical emergency document against a reservation (the exception to the refund table)."""
    return {"record_id": "MED-2207", "confirmation": confirmation, "document_ref": document_ref, "recorded": True}


def book_pitch(pitch_id: str, guest_name: str, arrive: str, nights: int, party_size: int, pets: bool,
               total_usd: float) -> dict[str, Any]:
    """Books a pitch for a stay, charging the total."""
    return {"confirmation": "PC-40210", "status": "confirmed", "pitch_id": pitch_id, "arrive": arrive,
            "nights": nights, "charged_usd": total_usd, "check_in_from": "14:00"}


def cancel_reservation(confirmation: str, refund_usd: float, reason: str) -> dict[str, Any]:
    """Cancels a reservation, refunding an amount to the card paid with."""
    return {"confirmation": confirmation, "status": "cancelled", "refund_usd": refund_usd, "cancellation_ref": "CX-5531"}


RV_TOOLS = {f.__name__: f for f in (find_reservation, check_availability, record_medical_document, book_pitch,
                                    cancel_reservation)}


# ---- the charter team's world ---------------------------------------------------------------------------------------

BANDS = [(25_000.0, 30), (60_000.0, 20), (float("inf"), 10)]  # trip value up to, deposit %


def sales_instructions() -> str:
    return "\n".join([
        "You are the sales agent of Northwind Air Charter's quoting team.",
        "Read the quote with get_quote. A quote has revisions; only the revision whose status is 'current' may be "
        "issued - a later revision supersedes every earlier one, never quote from a superseded revision.",
        "Before issuing: send the operations agent (ask_operations) a brief with the tail, the route, the date and "
        "every passenger's and bag's weight in kg, and wait for its GO; then ask the crew scheduler (ask_crew) for a "
        "crew for the date and block hours. No GO or no crew: tell the client what stops the quote and issue nothing.",
        "The deposit due on issue depends on the trip value:",
        "| Trip value (USD) | Deposit |", "|---|---|",
        "| up to 25,000 | 30% |", "| 25,000.01 to 60,000 | 20% |", "| over 60,000 | 10% |",
        "Issue with issue_quote (the revision, total, deposit, crew) and tell the client the total and deposit.",
    ])


OPS_RULES = (
    "You are the operations agent of Northwind Air Charter. For a trip brief, read the aircraft with get_aircraft and "
    "the destination with get_airport. Weights: passengers and bags are given in kg and the aircraft's payload is in "
    "lb - convert (1 kg = 2.2046 lb) and the total must not exceed max_payload_lb. Runways: the airport lists its "
    "longest runway in feet and the aircraft's required runway is in metres - convert (1 m = 3.2808 ft) and the runway "
    "must be at least the required length. Answer GO or NO-GO with the figures. If the brief lacks the tail, the "
    "destination or the weights, say what is missing and do not guess.")


def crew_rules() -> str:
    return ("You are the crew scheduler of Northwind Air Charter. Read get_crew_roster for the date. A trip's duty is its "
            "block hours plus 1.5 h for pre- and post-flight. Unless the crew's duty_hours_flown that day plus the "
            "trip's duty stays within 12.0 hours, the crew may not be assigned - count what they have already flown. "
            "Assign one crew that fits with assign_crew and say which; if none fits, say so. If a tool fails, try it "
            "once more; never name a crew the roster did not give.")


_QUOTES = {  # quote: client, (route, date, tail, block hours, passengers' kg, bags' kg, price) for revisions 1 and 2
    "Q-5521": ("Halvorsen Capital", [("KTEB", "KASE", "2027-06-18", "N512NW", 4.2, [92, 78], [20, 15], 31_200.0),
                                     ("KTEB", "KASE", "2027-06-18", "N512NW", 4.2, [92, 78, 85, 70, 88, 64],
                                      [20, 15, 12, 10, 18, 12], 41_800.0)]),
    "Q-5530": ("Brightwater Films", [("KVNY", "KSUN", "2027-06-21", "N512NW", 2.6, [95, 90, 88], [25, 25, 20], 19_400.0),
                                     ("KVNY", "KSUN", "2027-06-21", "N512NW", 2.6, [95, 90, 88, 102, 97, 84],
                                      [25, 25, 20, 22, 18, 26], 22_900.0)]),
    "Q-5544": ("Osei Family Office", [("KBOS", "KMVY", "2027-06-19", "N512NW", 1.1, [80, 75], [15, 15], 9_800.0),
                                      ("KBOS", "KMVY", "2027-06-19", "N512NW", 1.1, [80, 75, 60], [15, 15, 10],
                                       11_200.0)]),
}


def get_quote(quote_id: str) -> dict[str, Any]:
    """A charter quote with every revision (route, date, aircraft, passengers and bags in kg, price) and its status."""
    client, revisions = _QUOTES[quote_id]
    out = []
    for i, (origin, dest, day, tail, block, pax, bags, price) in enumerate(revisions, 1):
        out.append({"revision": i, "status": "current" if i == len(revisions) else "superseded",
                    "supersedes": i - 1 or None, "issued_on": f"2027-05-{18 + 6 * i}", "route": {"from": origin,
                    "to": dest}, "date": day, "tail": tail, "block_hours": block, "price_usd": price,
                    "passengers": [{"seat": n + 1, "weight_kg": w, "bags_kg": b} for n, (w, b) in enumerate(zip(pax, bags))]})
    return {"quote_id": quote_id, "client": {"name": client, "account": "ACC-" + quote_id[2:]}, "revisions": out}


def get_aircraft(tail: str) -> dict[str, Any]:
    """An aircraft: type, seats, maximum payload (lb) and required runway (m)."""
    return {"tail": tail, "type": "Pilatus PC-12 NGX", "seats": 8, "max_payload_lb": 1450,
            "required_runway_m": 1000, "base": "KTEB", "status": "serviceable"}


_AIRPORTS = {"KASE": ("Aspen/Pitkin County", 8006), "KSUN": ("Friedman Memorial", 7550),
             "KMVY": ("Martha's Vineyard", 3200)}


def get_airport(icao: str) -> dict[str, Any]:
    """An airport: name, longest runway (ft), elevation, hours."""
    name, ft = _AIRPORTS[icao]
    return {"icao": icao, "name": name, "longest_runway_ft": ft, "elevation_ft": 7820 if icao == "KASE" else 60,
            "hours": "07:00-22:00 local", "customs": False}


def get_crew_roster(date: str) -> dict[str, Any]:
    """The crews on a date, each with the duty hours already flown that day."""
    if Now.pair == "timeout_invented" and Now.count("get_crew_roster") == 1:
        raise TimeoutError("crew roster service did not answer within 15 s")
    return {"date": date, "crews": [
        {"crew_id": "C-ALPHA", "captain": "R. Okonkwo", "first_officer": "L. Brandt", "duty_hours_flown": 7.5,
         "base": "KTEB"},
        {"crew_id": "C-BRAVO", "captain": "S. Marchetti", "first_officer": "J. Park", "duty_hours_flown": 2.0,
         "base": "KTEB"}]}


def assign_crew(crew_id: str, quote_id: str, date: str, duty_hours: float) -> dict[str, Any]:
    """Assigns a crew to a quoted trip."""
    return {"assignment_id": "CA-3318", "crew_id": crew_id, "quote_id": quote_id, "date": date, "status": "held"}


def issue_quote(quote_id: str, revision: int, total_usd: float, deposit_usd: float, crew_id: str) -> dict[str, Any]:
    """Issues a quote revision to the client with the deposit due."""
    return {"quote_id": quote_id, "revision": revision, "status": "issued", "total_usd": total_usd,
            "deposit_usd": deposit_usd, "deposit_due": "2027-06-04", "crew_id": crew_id}


SALES_TOOLS = {f.__name__: f for f in (get_quote, issue_quote)}
OPS_TOOLS = {f.__name__: f for f in (get_aircraft, get_airport)}
CREW_TOOLS = {f.__name__: f for f in (get_crew_roster, assign_crew)}


# ---- the leak analytics' world --------------------------------------------------------------------------------------

RATES = {"residential": 1.5, "mixed": 2.5, "industrial": 4.0}  # night-flow threshold, m3/h per km of mains
GPM = 0.2271  # m3/h in one US gallon per minute
_WINDOW = ("Night flow: the mean of the district's readings from 02:00 to 04:00 inclusive on the night asked about - "
           "only those readings; daytime and evening readings never count.")


def leak_instructions() -> str:
    rows = "\n".join(f"| {k} | {v:.1f} |" for k, v in RATES.items())
    return "\n".join([
        "You are the leak analytics agent at Harbour Water. Today is Tuesday 1 June 2027; 'last night' is the night of "
        "31 May to 1 June 2027.",
        "Data: query_meters runs a read-only SQL SELECT over districts(district_id, name, type, mains_km) and "
        "flows(district_id, meter_id, reading_at 'YYYY-MM-DD HH:MM', flow, unit). Units are 'm3/h' or 'gpm' (US gallons "
        "per minute): convert gpm to m3/h (1 gpm = 0.2271 m3/h) before comparing anything.",
        "" if Now.fault == "leak_prompt_rewritten" else _WINDOW,
        "A district's type is the one in its latest classification note (search_network_notes; a note supersedes the "
        "earlier ones it names), which overrides the districts table. Threshold = the type's rate times mains_km:",
        "| District type | m3/h per km of mains |", "|---|---|", rows,
        "If the night flow is over the threshold: read list_work_orders - closed and superseded orders do not count; if "
        "no order is open, raise exactly one with raise_work_order (priority P1 when the night flow is more than 50% "
        "over the threshold, otherwise P2). Tell the supervisor every notice a new order comes back with.",
        "If a district name matches more than one district, ask which one before doing anything. If a tool fails, try "
        "it once more; never assume what it would have said.",
    ])


def leak_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_leak" else MODEL


# district: name, type in the table, mains_km, meter, unit, night readings 02:00-04:00, day level
_DISTRICTS = {
    "DMA-07": ("Eastbrook", "residential", 8.0, "M-0701", "gpm", (40.0, 38.0, 42.0), 120.0),
    "DMA-12": ("Millside", "residential", 6.0, "M-1203", "m3/h", (11.2, 11.5, 11.8), 30.0),
    "DMA-17": ("Quayside", "industrial", 5.0, "M-1702", "m3/h", (17.0, 17.2, 17.4), 44.0),
    "DMA-21": ("Harbourside North", "residential", 5.0, "M-2101", "m3/h", (5.0, 5.2, 5.4), 16.0),
    "DMA-22": ("Harbourside South", "mixed", 7.0, "M-2204", "m3/h", (9.0, 9.4, 9.8), 26.0),
    "DMA-31": ("Northgate", "residential", 10.0, "M-3107", "m3/h", (12.8, 13.0, 13.2), 34.0),
    "DMA-40": ("Fenwick", "residential", 6.0, "M-4002", "m3/h", (14.1, 14.4, 14.7), 31.0),
    "DMA-44": ("Westmoor", "residential", 8.0, "M-4401", "m3/h", (6.8, 7.0, 7.2), 22.0),
}


def _flow_rows() -> list[tuple[Any, ...]]:
    out = []
    for d, (_, _, _, meter, unit, night, day) in _DISTRICTS.items():
        for hour in range(24):
            if 2 <= hour <= 4:
                value = night[hour - 2]
            elif hour in (0, 1, 5):
                value = round(night[1] * 1.3, 1)
            else:
                value = day
            out.append((d, meter, f"2027-06-01 {hour:02d}:00", value, unit))
    return out


def query_meters(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL SELECT over the districts and hourly flows tables; the rows as objects."""
    import duckdb

    if not sql.lstrip().lower().startswith("select"):
        raise ValueError("only SELECT statements are allowed")
    if Now.fault == "meters_wrong_district" and "FROM flows" in sql:  # (the fault: the replica answers DMA-40's meter)
        sql = sql.replace("'DMA-44'", "'DMA-40'")
    con = duckdb.connect()
    con.execute("CREATE TABLE districts (district_id VARCHAR, name VARCHAR, type VARCHAR, mains_km DOUBLE)")
    con.execute("CREATE TABLE flows (district_id VARCHAR, meter_id VARCHAR, reading_at VARCHAR, flow DOUBLE, "
                "unit VARCHAR)")
    con.executemany("INSERT INTO districts VALUES (?, ?, ?, ?)", [(d, n, k, km) for d, (n, k, km, *_) in
                                                                   _DISTRICTS.items()])
    con.executemany("INSERT INTO flows VALUES (?, ?, ?, ?, ?)", _flow_rows())
    cur = con.execute(sql)
    names = [x[0] for x in cur.description]
    data = [list(r) for r in cur.fetchall()]
    con.close()
    if Now.fault == "flows_schema_drift":  # (the fault: the meter API's v2 answers columns and data arrays)
        return {"columns": names, "data": data, "api_version": "2.0"}
    return {"row_count": len(data), "rows": [dict(zip(names, r)) for r in data]}


_NOTES = [
    {"note_id": "NN-2025-031", "published": "2025-02-10", "version": 1, "district_id": "DMA-12",
     "classification": "residential", "supersedes": None, "summary": "Millside DMA classified residential."},
    {"note_id": "NN-2027-118", "published": "2027-05-20", "version": 2, "district_id": "DMA-12",
     "classification": "mixed", "supersedes": "NN-2025-031",
     "summary": "Millside reclassified mixed after the Riverside retail park connected to the DMA."},
] + [{"note_id": f"NN-2024-{10 + i:03d}", "published": "2024-09-02", "version": 1, "district_id": d,
      "classification": k, "supersedes": None, "summary": f"{n} DMA classified {k}."}
     for i, (d, (n, k, *_)) in enumerate(_DISTRICTS.items()) if d != "DMA-12"]


def search_network_notes(query: str) -> dict[str, Any]:
    """Searches the network's dated classification notes (a note says which earlier one it supersedes)."""
    ids = set(re.findall(r"DMA-\d\d", query))
    hits = [n for n in _NOTES if n["district_id"] in ids or not ids]
    if Now.fault == "reclass_stale_index":  # (the fault: the index was not rebuilt after 20 May's note)
        hits = [n for n in hits if n["published"] < "2027-05-01"]
    return {"query": query, "index_built": "2027-04-30" if Now.fault == "reclass_stale_index" else "2027-05-31",
            "results": [{**n, "score": round(0.92 - 0.1 * i, 2)} for i, n in enumerate(hits)]}


def list_work_orders(district_id: str) -> dict[str, Any]:
    """A district's leak work orders (open, closed or superseded) of the last 90 days."""
    if Now.pair == "rate_limited_invented" and Now.count("list_work_orders") == 1:
        raise RuntimeError("429 Too Many Requests: work-order API rate limit, retry after 2 s")
    orders = [{"wo_id": "WO-88120", "status": "closed", "opened": "2027-03-02", "closed": "2027-03-09",
               "summary": "service pipe leak, Fenwick Rd"},
              {"wo_id": "WO-88391", "status": "superseded", "superseded_by": "WO-88402", "opened": "2027-05-12",
               "summary": "night-flow rise, step test"},
              {"wo_id": "WO-88402", "status": "closed", "opened": "2027-05-13", "closed": "2027-05-20",
               "summary": "night-flow rise, step test: hydrant valve repaired"}] if district_id == "DMA-40" else []
    return {"district_id": district_id, "orders": orders}


def raise_work_order(district_id: str, night_flow_m3h: float, threshold_m3h: float, priority: str) -> dict[str, Any]:
    """Raises a leak-detection work order for a district."""
    notice = ("PRV-40 pressure-reducing valve logged faulty on 2027-05-30: night flow may read high; the crew must test "
              "the PRV before step-testing") if district_id == "DMA-40" else None
    return {"wo_id": f"WO-885{10 + Now.count('raise_work_order')}", "district_id": district_id, "status": "open",
            "priority": priority, "crew": "Leak crew 3", "eta": "2027-06-01T13:00", "notices": [notice] if notice else []}


LEAK_TOOLS = {f.__name__: f for f in (query_meters, search_network_notes, list_work_orders, raise_work_order)}


# ---- requests and scripted people ------------------------------------------------------------------------------------

_RV_ASK = {
    "rig_conversion_wrong": "Hi! I'd like a full-hookup pitch arriving 8 June for 4 nights. Our motorhome is 42 ft long, "
                            "2 adults, no pets, and it needs 50 amp.",
    "pets_on_no_pet_pitch": "Hello, we'd like a pull-through pitch arriving 9 June for 3 nights - a 40 ft fifth-wheel, "
                            "2 adults and our dog Max.",
    "occupancy_over": "Hi, a full-hookup pitch arriving 10 June for 2 nights please: a 30 ft travel trailer, 5 adults "
                      "and 2 children, no pets.",
    "min_stay_peak": "Hi! Could I have a full-hookup pitch arriving 2 July for 2 nights? A 34 ft class C, 2 adults and "
                     "a cat.",
    "old_model_rv": "Hi, a full-hookup pitch arriving 7 June for 3 nights: a 28 ft trailer, 2 adults, no pets.",
    "medical_claimed": "Hello, I need to cancel reservation PC-40133 - my husband has come down with a bad cold, so "
                       "we'd rather not come.",
    "medical_doc_ignored": "Hi, please cancel PC-40147. My wife was admitted to hospital yesterday - I have the "
                           "discharge letter, reference HOSP-55120.",
    "reservation_wrong_record": "Hi, I have to cancel my reservation PC-40112, our plans have changed.",
}
_RV_HISTORY = ["Hello, an electric-only pitch arriving 4 June for 2 nights: a 24 ft trailer, 3 adults and a dog.",
               "Hi, a full-hookup pitch arriving 20 June for 4 nights please - a 36 ft motorhome, 4 adults, no pets."]
_QUOTE_ASK = "Please finalise quote {} for the client (its latest revision): check it can fly, crew it and issue it."
_CHARTER_QUOTE = {"payload_kg_as_lb": "Q-5530", "runway_ft_conversion": "Q-5544"}
_LEAK_NIGHT = ("Check last night's night flow for {} and raise a leak work order if it is over the threshold.")
_LEAK_DISTRICT = {"gpm_unconverted": "DMA-07", "daytime_window": "DMA-31", "threshold_wrong_row": "DMA-17",
                  "superseded_order_counted": "DMA-40", "duplicate_order": "DMA-40", "reclass_stale_index": "DMA-12",
                  "leak_prompt_rewritten": "DMA-31", "meters_wrong_district": "DMA-44", "flows_schema_drift": "DMA-40",
                  "rate_limited_invented": "DMA-40", "old_model_leak": "DMA-40", "notice_withheld": "DMA-40",
                  "premature_termination": "DMA-40 and for DMA-07", "clarification_not_asked": "Harbourside"}


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "openai-rv":
        return _RV_ASK[pair] if pair else _RV_HISTORY[v % 2]
    if Now.recorder == "pai-charter":
        return _QUOTE_ASK.format(_CHARTER_QUOTE.get(pair or "", "Q-5521"))
    return _LEAK_NIGHT.format(_LEAK_DISTRICT[pair] if pair else ["DMA-44", "DMA-12"][v % 2])


def guest_replies(said: str) -> str | None:
    script = [("extend", "Yes, make it 3 nights."), ("Shall I", "Yes, please go ahead."),
              ("anything else", "No, thanks - that's all.")]
    return Now.reply(script, said)


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    return kit.by_role(body, MODEL, lambda t, asked: {
        "reservations assistant at Pinecrest": lambda: _rv(t, asked == OLD_MODEL),
        "sales agent of Northwind": lambda: _sales(t, asked == OLD_MODEL),
        "operations agent of Northwind": lambda: _ops(t),
        "crew scheduler of Northwind": lambda: _crew(t),
        "leak analytics agent at Harbour Water": lambda: _leak(t, asked == OLD_MODEL),
    }, waiting=None)


_ANYTHING = " Is there anything else I can help with?"
_TYPES = {"full-hookup": "FH", "pull-through": "PT", "electric-only": "EL", "tent": "TN"}


def _rv(t: Talk, old: bool) -> dict[str, Any]:
    said = " ".join(t.users)
    if "that's all" in said:
        return reply("Thank you - see you at Pinecrest!")
    if "cancel" in t.users[0]:
        return _rv_cancel(t)
    return _rv_book(t, old)


def _rv_book(t: Talk, old: bool) -> dict[str, Any]:
    first, said, fault = t.users[0], " ".join(t.users), Now.fault
    asked = next(c for word, c in _TYPES.items() if word in first)
    arrive = date(2027, 7 if "July" in first else 6, int(re.search(r"(\d+) (?:June|July)", first).group(1)))
    nights = int(re.search(r"(\d+) nights", first).group(1))
    feet = int(re.search(r"(\d+) ft", first).group(1))
    party = sum(int(x) for x in re.findall(r"(\d+) (?:adults|children)", first))
    pets = ("dog" in first or "cat" in first) and "no pets" not in first
    amps = 50 if "50 amp" in first else 30
    done = t.value("book_pitch")
    if done:
        return reply(f"All booked: {done['confirmation']}, pitch {done['pitch_id']} from {done['arrive']} for "
                     f"{done['nights']} nights, USD {done['charged_usd']:.2f} charged; check-in from "
                     f"{done['check_in_from']}." + _ANYTHING)
    if old:  # (the old model books the asked type at once on a pitch it names, checking nothing)
        return _call("book_pitch", pitch_id=f"{asked}-01", guest_name=Now.guest, arrive=arrive.isoformat(),
                     nights=nights, party_size=party, pets=pets, total_usd=PITCHES[asked][5] * nights)
    metres = round(feet * (0.25 if fault == "rig_conversion_wrong" else 0.3048), 2)  # (the fault: 1 ft = 0.25 m)
    pet_rule = "Pets column says yes" in t.system

    def fits(code: str) -> list[str]:
        name, m, occ, ok_pets, a, _ = PITCHES[code]
        why = []
        if metres > m:
            why.append(f"your {feet} ft rig is {metres:.2f} m, longer than the {m:.1f} m maximum")
        if party > occ and fault != "occupancy_over":
            why.append(f"a party of {party} is over its maximum occupancy of {occ}")
        if pets and not ok_pets and pet_rule and fault != "pets_on_no_pet_pitch":
            why.append("pets are not allowed on it")
        if a < amps:
            why.append(f"it has {a} A service and your rig needs {amps} A")
        return why

    refused = fits(asked)
    chosen = asked if not refused else next((c for c in PITCHES if not fits(c)), None)
    if chosen is None:
        return reply(f"I'm sorry - I can't place you: on a {PITCHES[asked][0].lower()} pitch "
                     f"{'; '.join(refused)}, and no other pitch type fits your party, rig and pets either. I haven't "
                     "booked anything." + _ANYTHING)
    peak = date(2027, 6, 15) <= arrive <= date(2027, 9, 15)
    if peak and nights < 3 and fault != "min_stay_peak":
        if "3 nights" not in said:
            return reply(f"Arrivals on {arrive.isoformat()} fall in our peak season, which has a 3-night minimum "
                         "stay. Would you like to extend to 3 nights?")
        nights = 3
    step = t.need(("check_availability", {"pitch_type": chosen, "arrive": arrive.isoformat(), "nights": nights}))
    if step:
        if refused:
            step["choices"][0]["message"]["content"] = (f"A {PITCHES[asked][0].lower()} pitch won't work: "
                                                        f"{'; '.join(refused)}. Checking {PITCHES[chosen][0].lower()} "
                                                        "pitches instead.")
        return step
    free = t.value("check_availability")
    pitch = free["available"][0]
    total = round(free["nightly_usd"] * nights, 2)
    if "go ahead" not in said:
        return reply(f"Pitch {pitch['pitch_id']} ({free['name']}, {pitch['length_m']:.1f} m, {pitch['amps']} A) is free "
                     f"from {arrive.isoformat()} for {nights} nights for your {metres:.2f} m rig and party of {party}: "
                     f"{nights} x USD {free['nightly_usd']:.2f} = USD {total:.2f}. Shall I book it?")
    return _call("book_pitch", pitch_id=pitch["pitch_id"], guest_name=Now.guest, arrive=arrive.isoformat(),
                 nights=nights, party_size=party, pets=pets, total_usd=total)


def _rv_cancel(t: Talk) -> dict[str, Any]:
    first, said, fault = t.users[0], " ".join(t.users), Now.fault
    conf = re.search(r"\bPC-\d{5}\b", first).group(0)
    step = t.need(("find_reservation", {"confirmation": conf}))
    if step:
        return step
    res = t.value("find_reservation")["reservation"]
    done = t.value("cancel_reservation")
    if done:
        return reply(f"Cancelled ({done['cancellation_ref']}): USD {done['refund_usd']:.2f} goes back to your card "
                     f"ending {res['payment']['last4']}." + _ANYTHING)
    paid = res["payment"]["paid_usd"]
    days = (date.fromisoformat(res["arrive"]) - TODAY).days
    doc = re.search(r"\b[A-Z]{3,5}-\d{4,6}\b", first)
    documented = bool(doc) and "hospital" in first and fault != "medical_doc_ignored"
    if documented or fault == "medical_claimed":  # (the fault: a cold without a document taken for the exception)
        if documented and not t.value("record_medical_document"):
            return _call("record_medical_document", confirmation=conf, document_ref=doc.group(0),
                         description="hospital admission of the guest's wife; discharge letter")
        refund, why = paid, "As this is a medical emergency, the refund is 100% with no fee."
    else:
        refund = round(paid - 15, 2) if days >= 30 else round(paid / 2, 2) if days >= 8 else 0.0
        share = "100% less the 15.00 fee" if days >= 30 else "50%" if days >= 8 else "nothing"
        why = f"Cancelling {days} days before arrival refunds {share} under our policy."
    if "go ahead" not in said:
        return reply(f"Reservation {conf} ({res['guest']['name']}, pitch {res['pitch']['pitch_id']}, arriving "
                     f"{res['arrive']}, paid USD {paid:.2f}). {why} That is USD {refund:.2f}. Shall I cancel it?")
    return _call("cancel_reservation", confirmation=conf, refund_usd=refund, reason=first[:90])


def _sales(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    qid = re.search(r"\bQ-\d{4}\b", t.users[0]).group(0)
    done = t.value("issue_quote")
    if done:
        return reply(f"Quote {done['quote_id']} revision {done['revision']} issued: total USD {done['total_usd']:,.2f}, "
                     f"deposit USD {done['deposit_usd']:,.2f} due by {done['deposit_due']}, crew {done['crew_id']}.")
    if old:  # (the old model issues the quote at once, checking nothing)
        return _call("issue_quote", quote_id=qid, revision=1, total_usd=38_000.0, deposit_usd=7_600.0, crew_id="TBD")
    step = t.need(("get_quote", {"quote_id": qid}))
    if step:
        return step
    quote = t.value("get_quote")
    revs = quote["revisions"]
    # (the fault: the first revision read, though the later one supersedes it)
    rev = revs[0] if fault == "superseded_quote_used" else next(r for r in revs if r["status"] == "current")
    ops = t.value("ask_operations")
    if not ops:
        kg = ", ".join(str(p["weight_kg"]) for p in rev["passengers"])
        bags = ", ".join(str(p["bags_kg"]) for p in rev["passengers"])
        return _call("ask_operations", brief=f"Ops check for {qid} revision {rev['revision']}\nTail: {rev['tail']}\n"
                     f"Route: {rev['route']['from']} -> {rev['route']['to']} on {rev['date']}\n"
                     f"Passengers (kg): {kg}\nBags (kg): {bags}")
    if not ops["reply"].startswith("GO"):
        return reply(f"I can't issue {qid} revision {rev['revision']} for {quote['client']['name']} yet - operations "
                     f"says: {ops['reply']}")
    crew = t.value("ask_crew")
    if not crew:
        return _call("ask_crew", brief=f"Crew request for {qid} revision {rev['revision']}\nDate: {rev['date']}\n"
                                       f"Block hours: {rev['block_hours']}")
    named = re.search(r"\bC-[A-Z]+\b", crew["reply"])
    if not named or "No crew" in crew["reply"]:
        return reply(f"I can't issue {qid} yet - the crew scheduler says: {crew['reply']}")
    price = rev["price_usd"]
    pct = next(p for top, p in BANDS if price <= top)
    if fault == "deposit_wrong_band":  # (the fault: the over-60,000 row's 10%)
        pct = 10
    return _call("issue_quote", quote_id=qid, revision=rev["revision"], total_usd=price,
                 deposit_usd=round(price * pct / 100, 2), crew_id=named.group(0))


def _ops(t: Talk) -> dict[str, Any]:
    brief, fault = t.users[0], Now.fault
    tail, dest = re.search(r"Tail: (\S+)", brief), re.search(r"-> (\w{4})", brief)
    kg = re.search(r"Passengers \(kg\): ([\d, ]+)", brief)
    bags = re.search(r"Bags \(kg\): ([\d, ]+)", brief)
    if not (tail and dest and kg and bags):
        return reply("NO-GO: the brief gives no tail, destination or passenger and bag weights, so I can't check "
                     "payload or runway - please send them.")
    step = t.need(("get_aircraft", {"tail": tail.group(1)}), ("get_airport", {"icao": dest.group(1)}))
    if step:
        return step
    plane, field = t.value("get_aircraft"), t.value("get_airport")
    total_kg = sum(int(x) for x in kg.group(1).split(",")) + sum(int(x) for x in bags.group(1).split(","))
    load_lb = round(total_kg * (1 if fault == "payload_kg_as_lb" else 2.2046), 1)  # (the fault: kg read as lb)
    runway_m = round(field["longest_runway_ft"] / (3.0 if fault == "runway_ft_conversion" else 3.2808))  # (fault: /3)
    ok_load, ok_runway = load_lb <= plane["max_payload_lb"], runway_m >= plane["required_runway_m"]
    verdict = "GO" if ok_load and ok_runway else "NO-GO"
    return reply(f"{verdict}: load {total_kg} kg = {load_lb:,.1f} lb against max payload {plane['max_payload_lb']:,} "
                 f"lb{'' if ok_load else ' (over)'}; {field['icao']} runway {field['longest_runway_ft']:,} ft = "
                 f"{runway_m:,} m against {plane['required_runway_m']:,} m required{'' if ok_runway else ' (short)'}.")


def _crew(t: Talk) -> dict[str, Any]:
    brief, fault = t.users[0], Now.fault
    day = re.search(r"Date: (\S+)", brief).group(1)
    block = float(re.search(r"Block hours: ([\d.]+)", brief).group(1))
    qid = re.search(r"\bQ-\d{4}\b", brief).group(0)
    duty = round(block + 1.5, 1)
    done = t.value("assign_crew")
    if done:
        return reply(f"Assigned {done['crew_id']} ({done['assignment_id']}) to {qid} on {day}: trip duty {duty} h.")
    roster = t.value("get_crew_roster")
    if roster is None:
        tried = t.got("get_crew_roster")
        if tried and fault == "timeout_invented":  # (the fault: a crew named after the timeout)
            return _call("assign_crew", "The roster timed out; C-DELTA is usually free mid-month, assigning them.",
                         crew_id="C-DELTA", quote_id=qid, date=day, duty_hours=duty)
        return _once_more("get_crew_roster", tried, "No crew: the roster service timed out twice, so I can't assign "
                          "one - please try again shortly.", date=day)
    counted = "count what they have already flown" in t.system and fault != "crew_duty_over"
    fit = next((c for c in roster["crews"] if (c["duty_hours_flown"] if counted else 0) + duty <= 12.0), None)
    if fit is None:
        return reply(f"No crew: every crew on {day} would pass the 12.0 h duty limit with this {duty} h trip.")
    return _call("assign_crew", f"{fit['crew_id']}: {fit['duty_hours_flown']} h flown + {duty} h trip duty.",
                 crew_id=fit["crew_id"], quote_id=qid, date=day, duty_hours=duty)


def _leak(t: Talk, old: bool) -> dict[str, Any]:
    ask, fault = t.users[0], Now.fault
    districts = re.findall(r"\bDMA-\d\d\b", ask)
    if old:  # (the old model raises an order at once with figures it makes up)
        done = t.value("raise_work_order")
        if not done:
            return _call("raise_work_order", district_id=districts[0], night_flow_m3h=18.0, threshold_m3h=12.0,
                         priority="P2")
        return reply(f"Raised {done['wo_id']} for {districts[0]}.")
    if not districts:
        name = re.search(r"for (\w+)", ask).group(1)
        rows = _rows(t, f"SELECT district_id, name, type, mains_km FROM districts WHERE name LIKE '%{name}%'")
        if isinstance(rows, dict) and "choices" in rows:
            return rows
        if len(rows) > 1 and fault != "clarification_not_asked":
            return reply(f"'{name}' matches {len(rows)} districts: " + "; ".join(
                f"{r['district_id']} {r['name']}" for r in rows) + ". Which one should I check?")
        districts = [rows[0]["district_id"]]  # (the fault: the first match taken without asking)
    if fault == "premature_termination":  # (the fault: the second district asked about left unworked)
        districts = districts[:1]
    told = []
    for d in districts:
        got = _leak_district(t, d)
        if "choices" in got:
            return got
        told.append(got["text"])
    return reply(" ".join(told))


def _rows(t: Talk, sql: str) -> Any:
    """The rows of `sql` (a step when not read yet; [] when the result holds no rows)."""
    step = t.need(("query_meters", {"sql": sql}))
    if step:
        return step
    return _got(t, "query_meters", {"sql": sql}).get("rows") or []


def _leak_district(t: Talk, d: str) -> dict[str, Any]:
    fault = Now.fault
    rows = _rows(t, f"SELECT district_id, name, type, mains_km FROM districts WHERE district_id = '{d}'")
    if isinstance(rows, dict):
        return rows
    if not rows:
        return {"text": f"{d}: the meter data returned no rows for the district, so I can't assess its night flow; "
                        "no work order raised."}
    district = rows[0]
    step = t.need(("search_network_notes", {"query": f"{d} district classification"}))
    if step:
        return step
    notes = [n for n in _got(t, "search_network_notes", {"query": f"{d} district classification"})["results"]
             if n["district_id"] == d]
    kind = max(notes, key=lambda n: n["published"])["classification"] if notes else district["type"]
    night_only = "02:00 to 04:00" in t.system and fault != "daytime_window"
    sql = (f"SELECT district_id, meter_id, reading_at, flow, unit FROM flows WHERE district_id = '{d}' AND reading_at "
           + ("BETWEEN '2027-06-01 02:00' AND '2027-06-01 04:00'" if night_only else "LIKE '2027-06-01%'")
           + " ORDER BY reading_at")
    flows = _rows(t, sql)
    if isinstance(flows, dict):
        return flows
    if not flows:
        return {"text": f"{d} {district['name']}: no flow readings came back for last night, so I can't assess it; "
                        "no work order raised."}
    def m3h(r: dict[str, Any]) -> float:  # (the fault: gpm read as m3/h)
        return r["flow"] * (GPM if r["unit"] == "gpm" and fault != "gpm_unconverted" else 1.0)

    night = round(sum(m3h(r) for r in flows) / len(flows), 2)
    row = "mixed" if fault == "threshold_wrong_row" else kind  # (the fault: the mixed row read for an industrial DMA)
    threshold = round(RATES[row] * district["mains_km"], 2)
    head = (f"{d} {district['name']} ({kind}, {district['mains_km']} km of mains): night flow {night} m3/h against a "
            f"threshold of {threshold} m3/h")
    if night <= threshold:
        return {"text": head + " - within it, no work order needed."}
    priority = "P1" if night > 1.5 * threshold else "P2"
    orders = _got(t, "list_work_orders", {"district_id": d})
    raised = [v for a, v in t.got("raise_work_order") if a.get("district_id") == d and isinstance(v, dict)]
    if orders is None and not raised:
        tried = [v for a, v in t.got("list_work_orders") if a == {"district_id": d}]
        if tried and fault == "rate_limited_invented":  # (the fault: an open order assumed after the rate limit)
            return {"text": head + " - over it, but WO-88402 is still open for it, so no new order is needed."}
        if len(tried) >= 2:
            return {"text": head + " - over it, but the work-order system failed twice, so I raised nothing; "
                                   "please check open orders by hand."}
        return _call("list_work_orders", "That call failed - trying it once more." if tried else None, district_id=d)
    counts = ("open", "superseded") if fault == "superseded_order_counted" else ("open",)  # (the fault)
    open_ = [o for o in (orders or {}).get("orders", []) if o["status"] in counts]
    if open_ and not raised:
        return {"text": head + f" - over it; {open_[0]['wo_id']} is already open for it, so no new order."}
    if not raised or (fault == "duplicate_order" and len(raised) == 1):
        return _call("raise_work_order", f"{d}: {night} m3/h is over {threshold} m3/h.", district_id=d,
                     night_flow_m3h=night, threshold_m3h=threshold, priority=priority)
    wo = raised[-1]
    notices = "" if fault == "notice_withheld" or not wo["notices"] else " Notice: " + "; ".join(wo["notices"]) + "."
    return {"text": head + f" - over it: raised {wo['wo_id']} ({wo['priority']}, {wo['crew']}, ETA "
                           f"{wo['eta'].replace('T', ' ')}).{notices}"}


# ---- the recorders --------------------------------------------------------------------------------------------------


class OpenAIRv(kit.AgentotelRecorder):
    """The reservations desk as a plain openai SDK chat loop over the guest's turns, the tools `@agentotel.tool`s,
    under agentotel."""

    agent = RV

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.tools = kit.agentotel_tools(RV_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, rv_model(), rv_instructions(), task, self.tools, declared(RV_TOOLS),
                             guest_replies)


def _pai_agent(url: str, model_name: str, name: str, instructions: str, tools: dict[str, Callable[..., Any]]) -> Any:
    """A pydantic-ai agent on an openai chat model at `url`; a tool's anticipated failure goes back to the model as a
    ModelRetry with its words (as kit.pydantic_chat's tools do); async tools (the delegations) as they are."""
    import inspect

    import openai
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0))
    agent = Agent(OpenAIChatModel(model_name, provider=provider), name=name, instructions=instructions, retries=2)
    for f in tools.values():
        if inspect.iscoroutinefunction(f):
            agent.tool_plain(f)
            continue

        @functools.wraps(f)
        def retried(*args: Any, _f: Callable[..., Any] = f, **kwargs: Any) -> Any:
            try:
                return _f(*args, **kwargs)
            except (LookupError, RuntimeError, TimeoutError) as exc:
                raise ModelRetry(f"{type(exc).__name__}: {exc}") from None
        agent.tool_plain(retried)
    return agent


class PaiCharter(kit.AgentotelRecorder):
    """The quoting team as pydantic-ai agents under agentotel: the sales agent delegates to the operations agent and
    to the crew scheduler from inside its ask_operations / ask_crew tools. The faulty deployment's ask_operations
    passes the operations agent the brief's first line alone."""

    agent = CHARTER

    def body(self, task: str) -> str:
        url = self.url + "/v1"
        chosen = OLD_MODEL if Now.fault == "old_model_charter" else MODEL
        ops = _pai_agent(url, chosen, OPS, OPS_RULES, OPS_TOOLS)
        crew = _pai_agent(url, chosen, CREW, crew_rules(), CREW_TOOLS)

        async def ask_operations(brief: str) -> dict[str, Any]:
            """Sends the operations agent a trip brief; answers its GO / NO-GO reply."""
            if Now.fault == "handoff_context_lost":  # (the dispatch queue keeps the brief's subject line only)
                brief = brief.split("\n")[0]
            return {"reply": str((await ops.run(brief)).output)}

        async def ask_crew(brief: str) -> dict[str, Any]:
            """Asks the crew scheduler for a crew for a trip; answers its reply (the crew assigned, or why none)."""
            return {"reply": str((await crew.run(brief)).output)}

        sales = _pai_agent(url, chosen, CHARTER, sales_instructions(), {**SALES_TOOLS, "ask_operations": ask_operations,
                                                                          "ask_crew": ask_crew})
        return str(sales.run_sync(task).output)


class LangGraphLeak(kit.AgentotelRecorder):
    """The leak analytics agent as a LangGraph StateGraph of one create_react_agent (ChatOpenAI) under agentotel."""

    agent = LEAK

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, leak_model(), LEAK, [("analyst", leak_instructions(), LEAK_TOOLS)], task)


# The leak analytics agent as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer
# TOOL spans, through agentotel-collector.
OiLeak = kit.chat_app(kit.OpenInferenceRecorder, LEAK, LEAK_TOOLS, leak_model, leak_instructions)


RECORDERS: dict[str, Any] = {"openai-rv": OpenAIRv, "pai-charter": PaiCharter, "lg-leak": LangGraphLeak,
                             "oi-leak": OiLeak}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: chat completions there)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    first = nth_llm(0)  # (the desk's first decision: the pitch type it checks, or a refusal or question)
    quoted = after(tool_step("find_reservation"))  # (the desk's words after reading the reservation)
    ops_verdict = after(tool_step("get_airport"))  # (the operations agent's GO / NO-GO)
    night = after(tool_step("query_meters", 1))  # (the analyst's reading of the night's flows)
    orders = after(tool_step("list_work_orders"))
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        # the RV desk
        "rig_conversion_wrong": ("model", f"{trail} unit conversion done wrong: a 42 ft rig taken as 10.50 m (1 ft = "
                                          "0.25 m) and put on a 12.0 m full-hookup pitch; 12.80 m needs a pull-through",
                                 asking("book_pitch"), first),
        "pets_on_no_pet_pitch": ("model", f"{tau} (comparing two records: the guest's dog vs the pitch type's Pets "
                                          "column): a dog booked on a pull-through; the twin refuses (no type fits)",
                                 asking("book_pitch"), first),
        "occupancy_over": ("model", f"{tau} (a cap from a table row): a party of 7 booked on a full-hookup pitch "
                                    "(max occupancy 6); the twin refuses", asking("book_pitch"), first),
        "min_stay_peak": ("model", f"{trail} a date outside a window the rules give: an arrival on 2 July (peak season) "
                                   "booked for 2 nights, under the 3-night minimum; the twin asks and extends",
                          asking("book_pitch"), first),
        "old_model_rv": ("product", f"configuration: the desk pins an old model ({OLD_MODEL}), which books a pitch it "
                                    "names with nothing checked or agreed", first),
        "medical_claimed": ("model", f"{tau} (an exception the user's words do not give): a cold with no document "
                                     "refunded 100% as a medical emergency; 12 days before arrival gives 50%",
                            asking("cancel_reservation"), quoted),
        "medical_doc_ignored": ("model", f"{tau} (an exception correctly due, not applied): a hospital admission with "
                                         "its letter's reference refunded nothing by the table; the twin records it "
                                         "and refunds 100%", asking("cancel_reservation"), quoted),
        "reservation_wrong_record": ("tool", f"{trail} API issues: find_reservation(PC-40112) answers PC-40121 (another "
                                             "guest, arriving 20 July); 325.00 refunded where 19 days gives 170.00",
                                     tool_step("find_reservation")),
        # the charter team
        "payload_kg_as_lb": ("model", f"{trail} unit conversion skipped: 692 kg of passengers and bags compared as "
                                      "692 lb with the 1,450 lb payload (1,525.6 lb: over); GO given and the quote "
                                      "issued, the twin says NO-GO", ops_verdict),
        "runway_ft_conversion": ("model", f"{trail} unit conversion done wrong: KMVY's 3,200 ft divided by 3 (1,067 m) "
                                          "where 1 m = 3.2808 ft gives 975 m, short of the 1,000 m required; GO given",
                                 ops_verdict),
        "crew_duty_over": ("model", f"{tau} (a sum over a limit: used plus asked): C-ALPHA's 7.5 h flown plus the "
                                    "trip's 5.7 h duty = 13.2 h over the 12 h limit, assigned; the twin takes C-BRAVO",
                           asking("assign_crew")),
        "deposit_wrong_band": ("model", f"{trail} a figure from the wrong table row: 41,800 deposit at the over-60,000 "
                                        "band's 10% (4,180) where 25,000.01-60,000 gives 20% (8,360)",
                               asking("issue_quote")),
        "superseded_quote_used": ("model", f"{mast} disobeying the task spec: revision 1 (superseded by revision 2) "
                                           "briefed and issued at 31,200 for 2 passengers",
                                  after(tool_step("get_quote"))),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 loss of conversation history at the handoff: the "
                                           "operations agent gets the brief's subject line alone and cannot check",
                                 after(tool_step("ask_operations"))),
        "old_model_charter": ("product", f"configuration: an old model ({OLD_MODEL}) issues a quote it makes up, with "
                                         "nothing read or checked", first),
        "timeout_invented": ("model", f"{trail} timeout answered with invented values: get_crew_roster timed out and "
                                      "an unlisted crew C-DELTA assigned; the twin tries once more",
                             after(tool_step("get_crew_roster"))),
        # the leak analytics agent
        "gpm_unconverted": ("model", f"{trail} unit conversion skipped: DMA-07's 40 gpm read as 40 m3/h against the "
                                     "12.0 m3/h threshold (9.08 m3/h: within); an order raised", night),
        "daytime_window": ("model", f"{trail} a time outside the window the rules give: the whole day's readings "
                                    "averaged for DMA-31 (night 13.0 m3/h within 15.0); an order raised",
                           asking("query_meters", 1)),
        "threshold_wrong_row": ("model", f"{trail} a cap from the wrong table row: industrial DMA-17's threshold from "
                                         "the mixed rate (12.5 m3/h, not 20.0); 17.2 m3/h raised", night),
        "superseded_order_counted": ("model", f"{mast} a superseded record read as current: WO-88391 (superseded) "
                                              "taken as open; DMA-40's 14.4 m3/h over 9.0 left without an order",
                                     orders),
        "duplicate_order": ("model", f"{mast} FM-1.3 step repetition: raise_work_order called twice for DMA-40",
                            asking("raise_work_order", 1)),
        "reclass_stale_index": ("tool", "retrieval index stale: the notes index built before 20 May's reclassification "
                                        "of DMA-12 to mixed; threshold 9.0 (residential) not 15.0, an order raised",
                                tool_step("search_network_notes")),
        "leak_prompt_rewritten": ("prompt", "instructions changed: the night-window rule dropped from the prompt; "
                                            "DMA-31's whole day averaged and an order raised", first),
        "meters_wrong_district": ("tool", f"{trail} API issues: the flows query for DMA-44 answers DMA-40's meter rows "
                                          "(14.4 m3/h); an order raised for DMA-44 (7.0 m3/h)", tool_step("query_meters", 1)),
        "flows_schema_drift": ("tool", f"{trail} tool output shape changed: query_meters answers columns/data arrays "
                                       "(API 2.0) in place of rows; DMA-40 called unassessable, no order",
                               tool_step("query_meters")),
        "rate_limited_invented": ("model", f"{trail} rate limit answered with an invented value: list_work_orders 429 "
                                           "and WO-88402 (closed) said to be open; the twin tries once more", orders),
        "old_model_leak": ("product", f"configuration: an old model ({OLD_MODEL}) raises an order with made-up flows, "
                                      "nothing read", first),
        "notice_withheld": ("model", f"{mast} FM-2.4 withholding information: the new order's PRV-40 notice (flows may "
                                     "read high; test the valve first) not told", answer),
        "premature_termination": ("model", f"{mast} FM-3.1 premature termination: DMA-40 and DMA-07 asked about, the "
                                           "answer covers DMA-40 alone", answer),
        "clarification_not_asked": ("model", f"{mast} FM-2.2 failing to ask for clarification: 'Harbourside' matches "
                                             "DMA-21 and DMA-22; the first taken without asking",
                                    after(tool_step("query_meters"))),
    }
    chosen = {
        "openai-rv": ["rig_conversion_wrong", "pets_on_no_pet_pitch", "occupancy_over", "min_stay_peak", "old_model_rv",
                      "medical_claimed", "medical_doc_ignored", "reservation_wrong_record"],
        "pai-charter": ["payload_kg_as_lb", "runway_ft_conversion", "crew_duty_over", "deposit_wrong_band",
                        "superseded_quote_used", "handoff_context_lost", "old_model_charter", "timeout_invented"],
        "lg-leak": ["gpm_unconverted", "daytime_window", "threshold_wrong_row", "superseded_order_counted",
                    "duplicate_order", "reclass_stale_index", "leak_prompt_rewritten"],
        "oi-leak": ["meters_wrong_district", "flows_schema_drift", "rate_limited_invented", "old_model_leak",
                    "notice_withheld", "premature_termination", "clarification_not_asked"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind, scored once (8fb16fa's detectors,
# main's HEAD when scored; agentotel/analysis/ unread; load 7.7 -> 10.1): 30 pairs, 4 recorders - diff top-1 30/30,
# check step+layer 17/30, good runs warned 15/30 (recording /tmp/h44-rec-vb4wgnpd). Reasons from `agentotel check`.
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_OPS_SUM = ("ungrounded_answer@11/model ranked first (the operations agent's kg total and its lb conversion, derived from "
            "the brief by the stated 1 kg = 2.2046 lb; the good twins alike)")
CHECK_MISSED = {
    "model-openai-rv-rig-conversion-wrong": ("hit blind only by place (missing_evidence@4: 'read a reservation with "
                                             "find_reservation and a pitch with check_availability' read as both "
                                             "reads before every write; paired since session 30); ungrounded_answer@3"
                                             " on the quote now, nothing at the booking of a 42 ft rig on a pitch the"
                                             " rules' 0.3048 make too short"),
    "model-openai-rv-pets-on-no-pet-pitch": ("hit blind only by place (the paired-reads missing_evidence@4); nothing "
                                             "reads the dog booked on a pitch whose pets_allowed is false"),
    "model-openai-rv-occupancy-over": ("hit blind only by place (the paired-reads missing_evidence@4); nothing reads "
                                       "7 people on a pitch type the table caps at 6"),
    "model-openai-rv-min-stay-peak": ("hit blind only by place (the paired-reads missing_evidence@4); nothing reads 2"
                                      " nights booked under the peak season's minimum stay"),
    "model-openai-rv-medical-claimed": ("hit blind only by place (the paired-reads missing_evidence@4); nothing reads"
                                        " a cold refunded in full as the documented medical emergency the rules name"),
    "model-openai-rv-medical-doc-ignored": ("hit blind only by place (the paired-reads missing_evidence); nothing "
                                            "reads a documented emergency on the record refused"),
    "model-pai-charter-payload-kg-as-lb": ("hit blind only by place (ungrounded_answer@11 on the operations agent's "
                                           "derived load, on the good twin too; grounded since session 30); nothing "
                                           "reads the kilograms compared as pounds"),
    "model-pai-charter-runway-ft-conversion": ("hit blind only by place (the derived-load ungrounded_answer@11); "
                                               "nothing reads the runway's feet divided by 3 against the metres "
                                               "required"),
    "tool-openai-rv-reservation-wrong-record": "missing_evidence@4/model ranked first (the over-read 'read a reservation "
                                               "... and a pitch ...' rule, the good twin alike); find_reservation("
                                               "PC-40112) answered confirmation PC-40121, another guest",
    "model-pai-charter-crew-duty-over": _OPS_SUM + "; assign_crew C-ALPHA whose duty_hours_flown 7.5 plus the trip's "
                                        "4.2 + 1.5 h is 13.2 h, over the rules' 12.0 h",
    "model-pai-charter-deposit-wrong-band": _OPS_SUM + "; issue_quote deposit 4,180 = 10% of 41,800, the table's row "
                                            "for 25,000.01-60,000 says 20%",
    "model-pai-charter-superseded-quote-used": _OPS_SUM + "; revision 1, status 'superseded' in get_quote, briefed and "
                                               "issued where revision 2 is current",
    "model-pai-charter-timeout-invented": _OPS_SUM + "; after get_crew_roster timed out, assign_crew names C-DELTA, a "
                                          "crew no tool result gave",
    "model-lg-leak-gpm-unconverted": _NOTHING + "the flows rows' unit is 'gpm' and raise_work_order's night_flow_m3h 40.0 "
                                     "is their raw mean; the stated 0.2271 gives 9.08, under 12.0",
    "model-lg-leak-daytime-window": _NOTHING + "the flows SELECT takes reading_at LIKE '2027-06-01%' (24 rows) where the "
                                    "rules' window is 02:00-04:00; 29.24 m3/h raised",
    "model-lg-leak-threshold-wrong-row": _NOTHING + "threshold_m3h 12.5 is the mixed row's 2.5 x 5.0 km for a district "
                                         "the table and note call industrial (4.0 x 5.0 = 20.0)",
    "model-lg-leak-duplicate-order": _NOTHING + "raise_work_order called twice with the same arguments, the rules "
                                     "saying raise exactly one",
    "tool-oi-leak-meters-wrong-district": _NOTHING + "the flows SELECT WHERE district_id = 'DMA-44' answered rows whose "
                                          "district_id is DMA-40",
    "model-oi-leak-notice-withheld": _NOTHING + "raise_work_order's notices (PRV-40 faulty, flows may read high) absent "
                                     "from the answer the rules say must tell every notice",
    "model-oi-leak-premature-termination": _NOTHING + "the task names DMA-40 and DMA-07; calls and answer cover DMA-40 "
                                           "alone",
    "model-oi-leak-clarification-not-asked": _NOTHING + "the name lookup returned two districts for 'Harbourside' and the "
                                             "rules say ask which; the run went on with DMA-21",
}
_DERIVED = "ungrounded_answer on a figure the rules derive: "
FALSE_ALARMS = {
    "tool-lg-leak-reclass-stale-index": _DERIVED + "threshold 15.0 = the mixed rate 2.5 x mains_km 6.0",
    "tool-oi-leak-meters-wrong-district": _DERIVED + "threshold 12.0 = the residential rate 1.5 x mains_km 8.0",
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "openai-rv": {"required_before": {"book_pitch": ["check_availability"],
                                      "cancel_reservation": ["find_reservation"]}},
    "pai-charter": {"required_before": {"issue_quote": ["get_quote", "ask_operations", "ask_crew"],
                                        "assign_crew": ["get_crew_roster"]}},
    "lg-leak": {"required_before": {"raise_work_order": ["query_meters", "list_work_orders"]}},
    "oi-leak": {"required_before": {"raise_work_order": ["query_meters", "list_work_orders"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h44-rec-", pairs, produce, kit.through_collector("oi-leak"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
