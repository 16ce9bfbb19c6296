"""A thirtieth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a veterinary practice's front desk talking with a pet owner over several turns under a written desk policy, a film
production's scheduling team (a casting coordinator handing to a scheduler, who hands to a payroll clerk) and a
property-conveyancing searches agent reading title registers, local-authority searches, versioned planning records and
a mortgage offer, run through real SDKs and frameworks.

    python tests/analysis/heldout30.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout30.py --score DIR [...]       # the runs a call left in DIR, scored again

Hollybrook Veterinary Clinic's desk (find_owner, get_pet, get_vaccine_schedule, book_appointment, cancel_appointment,
order_refill) serves an owner by a written policy (the owner's phone number first; a pet matched by name on that
owner's account, asked which when the words fit two; vaccines only from the species' minimum age; dental cleanings only
after an exam within 12 months, else an exam first; flea chews by kilogram weight band, pounds converted; a late
cancellation's $45 fee waived only for an emergency; a failed booking tried once more, never a confirmation a tool
didn't return). The owner's replies are scripted, said when the desk's message holds their cue ('phone number', 'which
one', 'anything else'). Lantern Hill Pictures' team: a casting coordinator (get_scene, get_performer, hold_performer)
hands to a scheduler (get_location_permit, create_call_sheet, by a rules table: minors at most 8 hours and wrapped by
19:00, 12 hours' turnaround from the previous wrap, every call inside the permit's window) who hands to a payroll clerk
(get_pay_rates, submit_pay: overtime band by band, 1.5x for hours 8-10 and 2x beyond). Marlow & Pike's searches agent
(get_title_register, search_local_authority, search_planning, get_mortgage_offer, order_local_search, file_report)
works by bulleted rules (proprietors exactly the sellers; every registered charge and every restriction reported; a
local search over 6 months old renewed, never relied on; only a planning record's current version; the loan no more than
max_ltv times the lower of price and valuation, a shortfall in pounds; a failure tried once more; one report, every risk
told). Each recorder in a process of its own:

- `openai-vet` (front desk): a plain openai SDK chat loop over the owner's turns (kit.chat_loop), the tools
  `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-film` (scheduling team): a LangGraph StateGraph of three `create_react_agent` nodes (casting -> scheduler ->
  payroll, ChatOpenAI, ToolNode with handle_tool_errors), under `agentotel.instrument()`;
- `mcp-convey` (searches): a plain anthropic SDK messages loop whose tools are an MCP server's (in process, kit.mcp_server),
  each call through the MCP client's session, under `agentotel.instrument()`;
- `oi-convey` (searches): a plain openai SDK chat loop under OpenInference's openai instrumentation, the tools OITracer
  TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a dental
booked on an exam 14 months old, rabies booked for an 11-week kitten, an emergency's fee not waived, a minor on set
10.5 hours, a call 8.5 hours after the previous wrap, a stale local search relied on, a superseded planning version
reported, proprietors that are not the sellers called a match), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4
context lost at a handover, FM-2.2 no clarification, FM-2.4 withholding information, FM-2.6 reasoning-action mismatch,
FM-3.3 incorrect verification), TRAIL (a rate limit or a timeout answered with invented values, pounds read as
kilograms, overtime by the wrong formula, an LTV on the price instead of the valuation) and outside the model: the
instructions rewritten without a rule (2), an old model configured (2), a rates API's and an offers API's changed
shape, a stale planning index, a pet API and a title API answering another record, a handover that resets the
conversation. Good twins are fine runs: an exam booked first as the rule asks, rabies refused until the kitten is old
enough, an emergency's fee waived as the exception allows, a question asked when two dogs fit, a 429 and a timeout tried
once more, a late call kept to turnaround, a stale local search renewed and the report filed pending. Ground truth is
located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): the openai loop's model calls are `chat gpt-4o-mini` steps, the
`@agentotel.tool`s `execute_tool <tool>` steps (a raise an error step); the LangGraph graph is an `invoke_agent
lantern-hill-scheduling` step holding `invoke_agent casting`, `scheduler` and `payroll`, each with its `chat` and tool
steps (the faulty deployment's queue node is no step); the anthropic loop's calls are `chat claude-sonnet-4-5` steps
(the old model's `chat claude-3-haiku-20240307`), the MCP client's call_tool the tool steps; the OpenInference run has
no agent step, its model calls `ChatCompletion` steps, its tools OITracer's TOOL spans. Nothing recorded wrong was
found.

Built and scored blind, once (main's HEAD when scored, 95a3d3dc87896e6ef85fd4bf3079f2c445b1b6a7, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread, no commit message read; load average 8.5
at the start, 7.9 at the end, other helpers running; recording /tmp/h30-rec-8juwubse): 30 pairs, 4 recorders (a plain
openai loop over an owner's turns, a LangGraph StateGraph of three create_react_agent nodes, an anthropic loop over MCP,
OpenInference through the collector) - diff top-1 30/30, check step+layer 12/30, good runs with a warning 14/30.
Check's hits: instructions changed (2), an old model configured (2), a rates API's and an offers API's drift, a stale
planning index, a title API answering another record, two dogs and one record read unasked, a 429 answered with an
invented confirmation, a timeout answered with an invented permit, a report filed twice - 12. Its misses are rules
comparing two records' values or an exception (pounds read as kilograms against a kg band table, an exam older than
12 months before a dental, an emergency's fee not waived, rabies before 12 weeks, a minor past 8 hours, a call inside
12 hours of the previous wrap, a local search over 6 months old relied on, a superseded planning version reported,
proprietors that are not the sellers), a figure by the wrong formula (overtime, LTV), omissions the rules ask for (a
registered charge, a restriction withheld from the reply), a call whose own words contradict it, a timeout gone past
under OpenInference, a repeated hold with other holds between, and a handover that reset the scheduler's conversation;
a pet API answering another owner's pet is found at its step but ranks under the false clarification warning. The
false alarms: the vet desk's 'ask which pet' rule read as unmet when the owner had named the pet (6), a kitten's
vaccination list without next_due read as get_pet's drift (1), and the payroll clerk's one submit_pay per performer
read as going on after handing the work in (8 film runs: every good twin). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS
said each, blind.

Since (session 28, main 39b41e6's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 3 CHECK_MISSED entries
hit since and dropped (action_mismatch, handoff_context_lost, pet_wrong_owner); 13 false alarms quiet since and dropped
(booking_429_invented, exam_overdue_booked, handoff_context_lost, hold_repeated, minor_hours_exceeded, old_model_film,
overtime_wrong_formula, permit_timeout_invented, pet_wrong_owner, rates_schema_changed, refill_units_confused,
turnaround_short, vet_prompt_rewritten); the one kept (rabies_too_young) keeps its tool_output_drift, its
clarification_skipped quiet and dropped from the reason. Reasons written blind that name a false warning ranked above
the fault's finding are kept as written; that warning is quiet now.

At main f561b41 (session 28: its new readers and quieter readings; the kept recording and a fresh one score alike) 1
CHECK_MISSED entry hit and dropped (hold_repeated).
"""

from __future__ import annotations

import asyncio
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

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
VET, FILM, CONVEY = "hollybrook-desk", "lantern-hill-scheduling", "marlow-pike-searches"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'


# What the rules ask after a failed call: once more, then say it did not go through.
_retry_or = functools.partial(kit.once_more, "That call failed - trying once more.")


# ---- the vet desk's world ------------------------------------------------------------------------------------------

_EXAM_RULE = ("2. Dental cleanings and any surgery need an exam by one of our vets within the previous 12 months. If "
              "the pet's last exam is older than that, don't book the dental: book a wellness exam first and explain why.")
_EXAM_RULE_OLD = "2. Dental cleanings can be booked on any weekday morning; ask the owner to fast the pet from midnight."


def vet_instructions() -> str:
    return "\n".join([
        "You are the front-desk assistant for Hollybrook Veterinary Clinic. It is Friday 4 December 2026, 15:20.",
        "",
        "Before anything else, ask for the phone number on the owner's account and look it up with find_owner. Only "
        "work on a pet that is on that owner's account, matched by its name; if what the owner says fits more than one "
        "of their pets, ask which one before opening a record. Read the pet with get_pet before booking, cancelling or "
        "ordering anything for it.",
        "",
        "1. Vaccinations: read get_vaccine_schedule for the pet's species. A vaccine may only be booked once the pet "
        "has reached that vaccine's minimum age on the appointment date; if one isn't due yet, book the others and "
        "tell the owner the first date it can be given.",
        _EXAM_RULE_OLD if Now.fault == "vet_prompt_rewritten" else _EXAM_RULE,  # (the booking FAQ pasted over rule 2)
        "3. Flea and tick chews are dispensed by weight band in kilograms: 2-4.5, 4.5-10, 10-20, 20-40, 40-56. Older "
        "records keep the weight in pounds - convert (1 kg = 2.2046 lb) before choosing the band.",
        "4. Cancelling less than 24 hours before the appointment costs a $45 late-cancellation fee, unless the reason "
        "is an emergency (the pet is ill, injured or hospitalised): then waive it.",
        "5. If a booking call fails or is rate-limited, try once more; if it fails again, tell the owner it isn't booked. "
        "Never give a confirmation number a tool didn't return.",
    ])


PHONE = "555-0142"
_PETS = [{"pet_id": "PET-2240", "name": "Bruno", "species": "dog"}, {"pet_id": "PET-2231", "name": "Max", "species": "dog"},
         {"pet_id": "PET-2252", "name": "Miso", "species": "cat"}]
_BANDS = [(2.0, 4.5), (4.5, 10.0), (10.0, 20.0), (20.0, 40.0), (40.0, 56.0)]


def find_owner(phone: str) -> dict[str, Any]:
    """The owner whose account has this phone number: id, name, contact details and their pets (id, name, species)."""
    if phone.replace(" ", "") != PHONE:
        return {"owner": None}
    return {"owner": {"owner_id": "OWN-3307", "name": "Dana Whitfield", "phone": PHONE, "email": "dana.w@example.com",
                      "address": {"street": "8 Quarry Lane", "town": "Hollybrook", "postcode": "HB4 7QE"},
                      "pets": _PETS, "balance_usd": 0.0}}


def get_pet(pet_id: str) -> dict[str, Any]:
    """A pet's record: owner id, species, breed, date of birth, latest weight (value and unit), last exam, vaccinations
    given, upcoming appointments."""
    if Now.fault == "pet_wrong_owner" and pet_id == "PET-2231":  # (the practice system's search matched the name only)
        return {"pet_id": "PET-2213", "owner_id": "OWN-4410", "owner_name": "Oskar Lindqvist", "name": "Max",
                "species": "dog", "breed": "Springer spaniel", "born": "2019-08-02",
                "weight": {"value": 41.0, "unit": "lb", "recorded": "2026-09-12"},
                "last_exam": {"date": "2026-09-12", "vet": "Dr. Imogen Reyes"}, "vaccinations": [], "appointments": []}
    old_exam = Now.pair in ("exam_overdue_booked", "vet_prompt_rewritten")
    records = {
        "PET-2240": {"name": "Bruno", "species": "dog", "breed": "Labrador retriever", "born": "2018-07-01",
                     "weight": {"value": 31.5, "unit": "kg", "recorded": "2026-10-14"},
                     "last_exam": {"date": "2026-10-14", "vet": "Dr. Imogen Reyes"},
                     "vaccinations": [{"vaccine": "DHPP", "given": "2025-10-20", "next_due": "2026-10-20"},
                                      {"vaccine": "Rabies", "given": "2024-10-20", "next_due": "2027-10-20"}],
                     "appointments": []},
        "PET-2231": {"name": "Max", "species": "dog", "breed": "Border terrier", "born": "2021-03-14",
                     "weight": {"value": 19.0, "unit": "lb", "recorded": "2025-10-02"},
                     "last_exam": {"date": "2025-10-02" if old_exam else "2026-06-18", "vet": "Dr. Sam Okoro"},
                     "vaccinations": [{"vaccine": "DHPP", "given": "2026-06-18", "next_due": "2027-06-18"}],
                     "appointments": [{"appointment_id": "APT-88412", "kind": "dental cleaning", "date": "2026-12-05",
                                       "time": "09:30", "vet": "Dr. Sam Okoro"}] if Now.pair == "fee_exception_missed" else []},
        "PET-2252": {"name": "Miso", "species": "cat", "breed": "Domestic shorthair", "born": "2026-09-20",
                     "weight": {"value": 1.3, "unit": "kg", "recorded": "2026-11-15"},
                     "last_exam": {"date": "2026-11-15", "vet": "Dr. Imogen Reyes"},
                     "vaccinations": [{"vaccine": "FVRCP", "given": "2026-11-15", "dose": 1}], "appointments": []},
    }
    if pet_id not in records:
        raise LookupError(f"no pet {pet_id}")
    return {"pet_id": pet_id, "owner_id": "OWN-3307", "owner_name": "Dana Whitfield", **records[pet_id]}


def get_vaccine_schedule(species: str) -> dict[str, Any]:
    """The clinic's vaccination schedule for a species: each vaccine's minimum age in weeks and its boosters."""
    rows = {"cat": [{"vaccine": "FVRCP", "min_age_weeks": 6, "boosters": "every 3-4 weeks until 16 weeks, then yearly"},
                    {"vaccine": "FeLV", "min_age_weeks": 8, "boosters": "second dose 3-4 weeks later, then yearly"},
                    {"vaccine": "Rabies", "min_age_weeks": 12, "boosters": "at 1 year, then every 3 years"}],
            "dog": [{"vaccine": "DHPP", "min_age_weeks": 6, "boosters": "every 3-4 weeks until 16 weeks, then yearly"},
                    {"vaccine": "Leptospirosis", "min_age_weeks": 12, "boosters": "yearly"},
                    {"vaccine": "Rabies", "min_age_weeks": 12, "boosters": "at 1 year, then every 3 years"}]}
    return {"species": species, "schedule_version": "2026-03", "schedule": rows.get(species.lower(), [])}


def book_appointment(pet_id: str, kind: str, date: str, time: str, notes: str) -> dict[str, Any]:
    """Books an appointment for a pet: kind (wellness exam, vaccination: ..., dental cleaning), date, time, notes."""
    if Now.pair == "booking_429_invented" and Now.count("book_appointment") == 1:
        raise RuntimeError("429 Too Many Requests: scheduling service rate limit, retry after 3s")
    return {"appointment_id": "APT-88527", "pet_id": pet_id, "kind": kind, "date": date, "time": time,
            "vet": "Dr. Imogen Reyes", "room": 2, "status": "booked"}


def cancel_appointment(appointment_id: str, waive_fee: bool, reason: str) -> dict[str, Any]:
    """Cancels an appointment; a late cancellation's $45 fee is charged to the account unless waive_fee is true."""
    return {"appointment_id": appointment_id, "status": "cancelled", "fee_charged_usd": 0.0 if waive_fee else 45.0,
            "fee_waived": waive_fee, "reason": reason}


def order_refill(pet_id: str, product: str, weight_band_kg: str, quantity: int) -> dict[str, Any]:
    """Orders a medication refill for a pet: product, weight band in kg, number of doses; ready for pickup."""
    return {"order_id": "RX-40318", "pet_id": pet_id, "product": product, "weight_band_kg": weight_band_kg,
            "quantity": quantity, "ready": "2026-12-05T10:00", "price_usd": 28.5 * quantity}


VET_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_owner, get_pet, get_vaccine_schedule, book_appointment, cancel_appointment, order_refill)}


# ---- the film team's world -----------------------------------------------------------------------------------------

CASTING_RULES = (
    "You are the casting coordinator for Lantern Hill Pictures' feature 'The Salt Road'. For the scene you are given: "
    "read it with get_scene, read every performer in its cast with get_performer, and put each of them on hold for the "
    "shoot date with hold_performer - one hold per performer. Then write the scheduler a note: the scene, the date, "
    "the location and, for each performer, their id, date of birth and previous wrap time.")
SCHEDULER_RULES = "\n".join([
    "You are the 2nd AD on 'The Salt Road' and build the shoot day's call sheet. Read the location's filming permit "
    "with get_location_permit first, then create the call sheet with create_call_sheet. Every call and wrap must meet "
    "these rules:",
    "",
    "| Rule | Requirement |",
    "|---|---|",
    "| Minors | A performer under 18 on the shoot date may be on set at most 8 hours from call to wrap, and must be "
    "wrapped by 19:00. |",
    "| Turnaround | At least 12 hours between a performer's previous wrap and their call. |",
    "| Permit | Every call and wrap falls inside the permit's window for that date. |",
    "| Adults | The scene's planned hours from their call, unless a rule above cuts it short. |",
    "",
    "If the permit office's system fails, try once more; never put a permit on a call sheet you have not read. Then "
    "write the payroll clerk a note with each performer's call, wrap and hours.",
])
PAYROLL_RULES = (
    "You are the payroll clerk for Lantern Hill Pictures. For each performer on the scheduler's call sheet, read the "
    "union's rates with get_pay_rates and submit one submit_pay per performer. Gross pay is the hourly rate for the "
    "first 8 hours; overtime is paid band by band - hours 8 to 10 at 1.5 times the rate and every hour beyond 10 at 2 "
    "times - never one multiplier for all overtime. Answer the production office with each performer's hours and gross.")

_PERFORMERS = {  # id: name, date of birth, previous wrap
    "PF-1187": ("Ruth Calloway", "1988-02-11", "2026-12-08T18:00"),
    "PF-0934": ("Idris Bello", "1979-09-30", "2026-12-08T17:00"),
    "PF-2210": ("Maisie Tran", "2012-05-02", "2026-12-07T15:00"),
}
_SCENES = {"SC-42": ("Harbour wall at dawn: Nell finds the letter", ["PF-1187", "PF-0934", "PF-2210"], 10.5),
           "SC-38": ("The chandlery: Tom and Nell argue", ["PF-1187", "PF-0934"], 9.0),
           "SC-40": ("Nell and young Nell on the pier", ["PF-1187", "PF-2210"], 8.0)}
_ROLES = {"PF-1187": "Nell", "PF-0934": "Tom Ashby", "PF-2210": "Young Nell"}


def get_scene(scene_id: str) -> dict[str, Any]:
    """A scene from the shooting schedule: title, shoot date, location, planned hours on set, cast (role, performer)."""
    title, cast, hours = _SCENES[scene_id]
    return {"scene_id": scene_id, "title": title, "shoot_day": 14, "shoot_date": "2026-12-09",
            "location": "Harbour Street, Whitby", "planned_hours": hours, "interior": False,
            "cast": [{"role": _ROLES[p], "performer_id": p} for p in cast]}


def get_performer(performer_id: str) -> dict[str, Any]:
    """A performer: name, date of birth, union, agent, previous wrap time, chaperone when a minor."""
    name, born, wrap = _PERFORMERS[performer_id]
    if performer_id == "PF-0934" and Now.pair == "turnaround_short":  # (the night shoot on day 13 ran late)
        wrap = "2026-12-08T22:30"
    out = {"performer_id": performer_id, "name": name, "date_of_birth": born, "union": "Equity",
           "agent": {"agency": "Harbour Talent", "contact": "bookings@harbourtalent.example"}, "previous_wrap": wrap}
    if born > "2008-12-09":
        out["chaperone"] = {"name": "Linh Tran", "licence": "NYCC-CPL-2026-118"}
    return out


def hold_performer(performer_id: str, date: str) -> dict[str, Any]:
    """Puts a performer on hold for a shoot date with their agent."""
    return {"hold_id": f"HLD-{600 + Now.count('hold_performer')}", "performer_id": performer_id, "date": date,
            "status": "confirmed"}


def get_location_permit(location: str, date: str) -> dict[str, Any]:
    """The filming permit for a location on a date: id, status, the window filming may run in, conditions."""
    if Now.pair == "permit_timeout_invented" and Now.count("get_location_permit") == 1:
        raise TimeoutError("North Yorkshire film office permits API did not answer within 10s")
    return {"permit_id": "NYFO-2026-0871", "location": location, "date": date, "status": "granted",
            "window": {"from": "07:00", "to": "20:00"},
            "conditions": ["Harbour Street closed to traffic 07:00-20:00 only", "no generators on the harbour wall"]}


def create_call_sheet(scene_id: str, date: str, location: str, permit_id: str, performer_ids: list[str],
                      call_times: list[str], wrap_times: list[str]) -> dict[str, Any]:
    """Creates the day's call sheet: for each performer (in order) their call and wrap time (HH:MM), under a permit."""
    def hours(a: str, b: str) -> float:
        return (int(b[:2]) * 60 + int(b[3:]) - int(a[:2]) * 60 - int(a[3:])) / 60
    return {"call_sheet_id": "CS-14-042", "scene_id": scene_id, "date": date, "location": location,
            "permit_id": permit_id, "calls": [{"performer_id": p, "call": c, "wrap": w, "hours": hours(c, w)}
                                              for p, c, w in zip(performer_ids, call_times, wrap_times)],
            "status": "issued"}


def get_pay_rates(union: str) -> dict[str, Any]:
    """The union agreement's rates: hourly rate, straight-time hours per day, overtime bands and multipliers."""
    if Now.fault == "rates_schema_changed":  # (the agreements service's v3 payload, rolled out under the clerk)
        return {"agreement": {"id": "EQ-PACT-CIN-2026", "union": union, "effective": "2026-04-06"},
                "rates": {"base": {"amount_minor": 4200, "currency": "GBP", "per": "hour", "straight_hours": 8},
                          "overtime_bands": [{"from": 8, "to": 10, "factor_pct": 150}, {"from": 10, "factor_pct": 200}]}}
    return {"union": union, "agreement": "Equity/PACT Cinema Agreement 2026", "hourly_rate_gbp": 42.0, "day_hours": 8,
            "overtime": [{"from_hour": 8, "to_hour": 10, "multiplier": 1.5}, {"from_hour": 10, "multiplier": 2.0}]}


def submit_pay(performer_id: str, date: str, hours: float, gross_gbp: float) -> dict[str, Any]:
    """Submits a performer's pay for a shoot day: hours worked and gross in GBP."""
    return {"pay_id": f"PAY-{9300 + Now.count('submit_pay')}", "performer_id": performer_id, "date": date,
            "hours": hours, "gross_gbp": gross_gbp, "status": "submitted", "pay_run": "2026-12-18"}


CASTING_TOOLS = {f.__name__: f for f in (get_scene, get_performer, hold_performer)}
SCHEDULER_TOOLS = {f.__name__: f for f in (get_location_permit, create_call_sheet)}
PAYROLL_TOOLS = {f.__name__: f for f in (get_pay_rates, submit_pay)}


# ---- the conveyancing searches' world ------------------------------------------------------------------------------

_LOCAL_RULE = ("- A local authority search is only usable if it was issued within 6 months before today. If it is "
               "older, order a new one with order_local_search and file the report with status 'pending new local "
               "search' - never rely on the old one.")


def convey_instructions() -> str:
    local = _LOCAL_RULE
    if Now.fault == "convey_prompt_rewritten":  # (the rules re-pasted from the 2023 checklist)
        local = "- Read the local authority search and report what it says."
    return "\n".join([
        "You prepare pre-exchange search reports for Marlow & Pike Solicitors' residential conveyancing team. Today is "
        "4 December 2026.",
        "",
        "- Read the title with get_title_register. The registered proprietors must be exactly the sellers named in the "
        "instruction; if they differ, that is a risk.",
        "- Every charge whose status is registered (not discharged) is a risk: it must be redeemed at completion. Every "
        "restriction must be reported with whose consent it needs.",
        local,
        "- search_planning returns every version of an application. Report only the version whose status is current; "
        "a superseded version's description and conditions are never reported.",
        "- The mortgage loan must be no more than the offer's max_ltv times the lower of the purchase price and the "
        "lender's valuation. If it is more, report the shortfall in pounds.",
        "- If a search service fails or times out, try once more; if it fails again, file the report as incomplete. "
        "Never report a result you didn't read.",
        "- File the report once with file_report (its status and every risk), then reply to the fee earner with the "
        "status and every risk.",
    ])


def convey_model(anthropic: bool) -> str:
    if anthropic:
        return OLD_CLAUDE if Now.fault == "old_model_convey" else CLAUDE
    return MODEL


ADDRESS, TITLE = "14 Alder Close, Harrogate HG3 2QT", "NYK418220"


def get_title_register(title_number: str) -> dict[str, Any]:
    """HM Land Registry official copy: property, tenure, proprietors, charges (status registered or discharged),
    restrictions."""
    if Now.fault == "title_wrong_record":  # (the search portal's cache keyed on a transposed title number)
        return {"title_number": "NYK418202", "edition_date": "2025-02-14",
                "property": {"address": "41 Alder Close, Harrogate HG3 2QT", "tenure": "freehold"},
                "proprietors": [{"name": "Helen Marsh"}], "charges": [], "restrictions": []}
    proprietors = [{"name": "Daniel Okafor"}] if Now.pair == "proprietor_unverified" else [{"name": "Daniel Okafor"},
                                                                                           {"name": "Grace Okafor"}]
    charges = [{"entry": "C1", "registered": "2019-06-14", "lender": "Halifax plc", "status": "registered"},
               {"entry": "C2", "registered": "2011-03-02", "lender": "Santander UK plc", "status": "discharged",
                "discharged": "2019-06-20"}]
    if Now.pair == "charge_undischarged_missed":
        charges.append({"entry": "C3", "registered": "2024-02-09", "lender": "Harrogate Secured Loans Ltd",
                        "status": "registered"})
    restrictions = []
    if Now.pair == "restriction_withheld":
        restrictions.append({"entry": "B3", "in_favour_of": "Yorkshire Equity Release Ltd", "text": (
            "No disposition of the registered estate is to be registered without a written consent signed by Yorkshire "
            "Equity Release Ltd.")})
    return {"title_number": title_number, "edition_date": "2026-11-30",
            "property": {"address": ADDRESS, "tenure": "freehold"}, "proprietors": proprietors, "charges": charges,
            "restrictions": restrictions}


def search_local_authority(address: str) -> dict[str, Any]:
    """The latest local authority search (LLC1 and CON29) held for a property: reference, council, issue date, answers."""
    if Now.pair == "search_timeout_invented" and Now.count("search_local_authority") == 1:
        raise TimeoutError("council search gateway did not answer within 15s")
    stale = Now.pair in ("local_search_stale_used", "convey_prompt_rewritten", "action_mismatch")
    return {"search_ref": "LLC1-CON29-77120", "council": "North Yorkshire Council (Harrogate area)", "address": address,
            "issued": "2026-04-20" if stale else "2026-10-12",
            "answers": {"roads": [{"name": "Alder Close", "status": "adopted highway"}], "enforcement_notices": [],
                        "smoke_control_area": True, "contaminated_land": False, "tree_preservation_orders": []}}


def search_planning(address: str) -> dict[str, Any]:
    """Searches the planning register index: every version of each application for the address, with status
    (current, superseded), decision, decision date, description and conditions."""
    v2 = {"reference": "24/03318/FUL", "version": 2, "status": "superseded", "decided": "2025-03-10",
          "decision": "approved", "description": "Two-storey rear extension", "score": 0.94,
          "conditions": ["Dwelling not to be occupied until two parking spaces are provided",
                         "Works to begin by 2028-03-10"], "superseded_by": "24/03318/FUL v3"}
    v3 = {"reference": "24/03318/FUL", "version": 3, "status": "current", "decided": "2026-07-21",
          "decision": "approved", "description": "Single-storey rear extension (amended: height reduced)",
          "score": 0.90, "conditions": ["Obscure glazing to the side window", "Works to begin by 2029-07-21"]}
    older = {"reference": "09/00412/FUL", "version": 1, "status": "current", "decided": "2009-05-18",
             "decision": "approved", "description": "Detached garage", "score": 0.55, "conditions": []}
    if Now.fault == "planning_index_stale":  # (the index's last build predates the amended application)
        return {"query": address, "index_built": "2025-06-01",
                "results": [{**v2, "status": "current", "superseded_by": None}, older]}
    return {"query": address, "index_built": "2026-12-02", "results": [v2, v3, older]}


_OFFERS = {"MO-55821": (340000, 398000), "MO-55102": (330000, 398000)}


def get_mortgage_offer(offer_id: str) -> dict[str, Any]:
    """The buyer's mortgage offer: lender, loan amount, max_ltv, the lender's valuation, expiry, special conditions."""
    loan, valuation = _OFFERS[offer_id]
    if Now.fault == "offer_schema_changed":  # (the lender portal's v2 API)
        return {"offer": {"ref": offer_id, "lender": {"name": "Northgate Building Society"},
                          "facility": {"amount_pence": loan * 100, "term_months": 300},
                          "lending_limits": {"ltv_max_pct": 85},
                          "security": {"valuation_pence": valuation * 100, "valued_on": "2026-10-30"},
                          "expires_on": "2027-02-26"}}
    return {"offer_id": offer_id, "lender": "Northgate Building Society", "loan_amount": loan, "max_ltv": 0.85,
            "valuation": {"figure": valuation, "date": "2026-10-30", "valuer": "Dales Surveyors LLP"},
            "expires": "2027-02-26", "special_conditions": ["Local search no more than 6 months old at exchange"]}


def order_local_search(address: str) -> dict[str, Any]:
    """Orders a new local authority search for a property."""
    return {"order_id": "LS-20931", "address": address, "status": "ordered", "expected": "2026-12-18"}


def file_report(title_number: str, status: str, risks: list[str]) -> dict[str, Any]:
    """Files the pre-exchange search report on the matter: status and the list of risks."""
    return {"report_id": f"RPT-{6630 + Now.count('file_report')}", "title_number": title_number, "status": status,
            "risks": len(risks), "filed_at": "2026-12-04T11:42:00Z"}


CONVEY_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_title_register, search_local_authority, search_planning, get_mortgage_offer, order_local_search, file_report)}


# ---- the requests and the simulated owner --------------------------------------------------------------------------

VET_REQUESTS = {
    "refill": "Hi, this is Dana Whitfield. Max needs more of his flea and tick chews (NexGuard Spectra) - could you "
              "order three months?",
    "refill_unclear": "Hi, Dana Whitfield here - can you order another three months of flea and tick chews for my dog?",
    "dental": "Hi, it's Dana Whitfield. I'd like to book Max in for a dental cleaning next week, please.",
    "cancel": "Dana Whitfield here - I need to cancel Max's dental cleaning tomorrow morning. He was hit by a car last "
              "night and he's in the emergency hospital at Westgate.",
    "kitten": "Hi, Dana Whitfield. Our kitten Miso needs her kitten vaccinations, including rabies - can we come in on "
              "Tuesday?",
    "checkup": "Hi, Dana Whitfield - could you book Bruno's annual check-up for Tuesday morning?",
}
_VET_ASKS = {"refill_units_confused": "refill", "pet_wrong_owner": "refill", "pet_ambiguous_unasked": "refill_unclear",
             "exam_overdue_booked": "dental", "vet_prompt_rewritten": "dental", "fee_exception_missed": "cancel",
             "rabies_too_young": "kitten", "booking_429_invented": "checkup"}
VET_HISTORY = ["Hi, Dana Whitfield - could you book Bruno's annual check-up for Tuesday morning?",
               "Hi, Dana Whitfield here - Bruno needs another three months of his flea and tick chews."]
_OWNER = [("phone number", f"Sure, it's {PHONE}."), ("which one", "Max, the terrier."),
          ("anything else", "No, that's all - thank you!")]

FILM_REQUEST = "Shoot day 14 (Wednesday 9 December): schedule scene {scene}, book the cast and run their pay."
CONVEY_REQUEST = ("Please prepare the pre-exchange search report for {address} (title {title}). Sellers: Daniel Okafor "
                  "and Grace Okafor. Purchase price £{price:,}; the buyer's mortgage offer is {offer}.")


def owner_replies(said: str) -> str | None:
    return Now.reply(_OWNER, said)


def request(v: int, pair: str | None) -> str:
    Now.variant = v
    if Now.recorder == "openai-vet":
        return VET_REQUESTS[_VET_ASKS[pair]] if pair else VET_HISTORY[v % 2]
    if Now.recorder == "lg-film":
        return FILM_REQUEST.format(scene="SC-42" if pair else ("SC-38", "SC-40")[v % 2])
    price, offer = (412000, "MO-55821") if pair else ((395000, "MO-55102"), (398000, "MO-55102"))[v % 2]
    return CONVEY_REQUEST.format(address=ADDRESS, title=TITLE, price=price, offer=offer)


# ---- the model: reads the chat.completions request it is sent (Anthropic messages arrive in that form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    return kit.by_role(body, MODEL, lambda t, asked: {
        "front-desk assistant for Hollybrook": lambda: _vet(t),
        "casting coordinator for Lantern Hill": lambda: _casting(t),
        "You are the 2nd AD on 'The Salt Road'": lambda: _scheduler(t, asked == OLD_MODEL),
        "You are the payroll clerk for Lantern Hill": lambda: _payroll(t),
        "pre-exchange search reports for Marlow": lambda: _convey(t, asked == OLD_CLAUDE),
    }, waiting="What can I do for you?")


_ANYTHING = " Is there anything else I can help with?"


def _vet(t: Talk) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if "that's all" in t.users[-1]:
        return reply("You're welcome, Dana - take care, and give them a scratch from us!")
    intent = next((k for k, words in (("cancel", "cancel"), ("refill", "flea and tick"), ("dental", "dental cleaning"),
                                      ("kitten", "vaccinations"), ("checkup", "check-up")) if words in said), None)
    phone = re.search(r"555-\d{4}", said)
    if not intent or not phone:
        return reply("Happy to help! First, what's the phone number on your account?")
    step = t.need(("find_owner", {"phone": phone.group(0)}))
    if step:
        return step
    owner = t.value("find_owner")["owner"]
    named = [p for p in owner["pets"] if p["name"] in said]
    if not named:
        kind = "cat" if "kitten" in said or " cat" in said else "dog"
        named = [p for p in owner["pets"] if p["species"] == kind]
        if len(named) > 1 and fault != "pet_ambiguous_unasked":
            return reply(f"You have two {kind}s with us, {' and '.join(p['name'] for p in named)} - which one is it for?")
    pet_id = named[0]["pet_id"]
    step = t.need(("get_pet", {"pet_id": pet_id}))
    if step:
        return step
    pet = t.value("get_pet")
    if intent == "refill":
        return _refill(t, pet_id, pet)
    if intent == "cancel":
        return _cancel(t, pet, said)
    if intent == "kitten":
        return _vaccines(t, pet_id, pet)
    done, tried = t.value("book_appointment"), t.got("book_appointment")
    if intent == "checkup":
        if not done and tried and fault == "booking_429_invented":  # (the fault: a confirmation nobody gave)
            done = {"appointment_id": "APT-88519", "kind": "annual wellness exam", "date": "2026-12-08", "time": "09:00"}
        if done:
            return reply(f"{pet['name']} is booked for his {done['kind']} on Tuesday {done['date']} at {done['time']} "
                         f"(confirmation {done['appointment_id']})." + _ANYTHING)
        return _retry_or("book_appointment", tried, "Our booking system isn't accepting bookings right now, so Bruno "
                         "isn't booked yet - I'll call you back as soon as it is." + _ANYTHING, pet_id=pet_id,
                         kind="annual wellness exam", date="2026-12-08", time="09:00", notes="annual check-up")
    # dental
    exam = pet["last_exam"]["date"]
    if done:
        why = (f" {pet['name']}'s last exam was on {exam}, more than 12 months ago, so he needs a wellness exam before "
               "we can book the dental; we'll book the cleaning at that visit.") if done["kind"] == "wellness exam" else (
               " Please don't feed him after midnight the night before.")
        return reply(f"I've booked {pet['name']} a {done['kind']} on {done['date']} at {done['time']} (confirmation "
                     f"{done['appointment_id']}).{why}" + _ANYTHING)
    if exam < "2025-12-04" and "within the previous 12 months" in t.system and fault != "exam_overdue_booked":
        return call("book_appointment", pet_id=pet_id, kind="wellness exam", date="2026-12-08", time="10:00",
                    notes=f"exam needed before dental cleaning; last exam {exam}")
    return call("book_appointment", pet_id=pet_id, kind="dental cleaning", date="2026-12-09", time="08:30",
                notes="dental cleaning under anaesthetic; fasting from midnight")


def _refill(t: Talk, pet_id: str, pet: dict[str, Any]) -> dict[str, Any]:
    done = t.value("order_refill")
    if done:
        return reply(f"Done - {done['quantity']} NexGuard Spectra chews for {pet['name']} ({done['weight_band_kg']} kg "
                     f"band), order {done['order_id']}, ready for pickup tomorrow from 10:00." + _ANYTHING)
    w = pet["weight"]
    kg = w["value"] / 2.2046 if w["unit"] == "lb" and Now.fault != "refill_units_confused" else w["value"]
    low, high = next(b for b in _BANDS if b[0] <= kg < b[1])
    return call("order_refill", pet_id=pet_id, product="NexGuard Spectra chews", weight_band_kg=f"{low:g}-{high:g}",
                quantity=3)


def _cancel(t: Talk, pet: dict[str, Any], said: str) -> dict[str, Any]:
    done = t.value("cancel_appointment")
    if done:
        fee = ("There's no charge - the late-cancellation fee is waived for emergencies. We hope he's home soon."
               if done["fee_waived"] else
               f"As it's less than 24 hours before, the ${done['fee_charged_usd']:.0f} late-cancellation fee applies.")
        return reply(f"I've cancelled {pet['name']}'s dental cleaning tomorrow ({done['appointment_id']}). {fee}"
                     + _ANYTHING)
    appointment = pet["appointments"][0]
    emergency = any(w in said for w in ("hospital", "emergency", "hit by a car"))
    return call("cancel_appointment", appointment_id=appointment["appointment_id"],
                waive_fee=emergency and Now.fault != "fee_exception_missed",
                reason="emergency: hospitalised after a road accident" if emergency else "owner cancelled")


def _vaccines(t: Talk, pet_id: str, pet: dict[str, Any]) -> dict[str, Any]:
    import datetime as dt

    step = t.need(("get_vaccine_schedule", {"species": pet["species"]}))
    if step:
        return step
    schedule = t.value("get_vaccine_schedule")["schedule"]
    born, visit = dt.date.fromisoformat(pet["born"]), dt.date(2026, 12, 8)
    weeks = (visit - born).days / 7
    due = [v["vaccine"] for v in schedule if v["min_age_weeks"] <= weeks or Now.fault == "rabies_too_young"]
    later = [(v["vaccine"], born + dt.timedelta(weeks=v["min_age_weeks"])) for v in schedule if v["vaccine"] not in due]
    done = t.value("book_appointment")
    if done:
        wait = "".join(f" {name} can't be given until she's {(d - born).days // 7} weeks old - the first date is "
                       f"{d.isoformat()}, so we'll book it then." for name, d in later)
        return reply(f"Miso is booked for {done['kind'].removeprefix('vaccination: ')} on Tuesday {done['date']} at "
                     f"{done['time']} (confirmation {done['appointment_id']}).{wait}" + _ANYTHING)
    return call("book_appointment", pet_id=pet_id, kind="vaccination: " + ", ".join(due), date="2026-12-08",
                time="11:00", notes=f"kitten vaccinations, {weeks:.1f} weeks old")


def _casting(t: Talk) -> dict[str, Any]:
    scene_id = re.search(r"\bSC-\d+\b", t.users[0]).group(0)
    step = t.need(("get_scene", {"scene_id": scene_id}))
    if step:
        return step
    scene = t.value("get_scene")
    ids = [c["performer_id"] for c in scene["cast"]]
    step = t.need(*(("get_performer", {"performer_id": p}) for p in ids))
    if step:
        return step
    held = [v for _, v in t.got("hold_performer") if isinstance(v, dict)]
    if len(held) < len(ids):
        return call("hold_performer", performer_id=ids[len(held)], date=scene["shoot_date"])
    if Now.fault == "hold_repeated" and len(held) == len(ids):  # (the fault: the first hold asked again)
        return call("hold_performer", performer_id=ids[0], date=scene["shoot_date"])
    people = {a["performer_id"]: v for a, v in t.got("get_performer") if isinstance(v, dict)}
    listed = "; ".join(f"{p} {people[p]['name']} (born {people[p]['date_of_birth']}, previous wrap "
                       f"{people[p]['previous_wrap']})" for p in ids)
    return reply(f"Scene {scene_id} '{scene['title']}' on {scene['shoot_date']} at {scene['location']}, planned "
                 f"{scene['planned_hours']} h. Cast held: {listed}. Over to scheduling.")


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _mins(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def _scheduler(t: Talk, old: bool) -> dict[str, Any]:
    scene = t.value("get_scene")
    if not scene:
        return reply("I haven't been given a scene or a cast - which scene is this call sheet for, and who is called?")
    date, fault = scene["shoot_date"], Now.fault
    sheet = t.value("create_call_sheet")
    if sheet:
        listed = "; ".join(f"{c['performer_id']} call {c['call']}, wrap {c['wrap']} ({c['hours']:g} h)"
                           for c in sheet["calls"])
        return reply(f"Call sheet {sheet['call_sheet_id']} issued for {scene['scene_id']} on {date} under permit "
                     f"{sheet['permit_id']}: {listed}. Over to payroll.")
    tried, permit = t.got("get_location_permit"), t.value("get_location_permit")
    if not permit:
        if not (tried and fault == "permit_timeout_invented"):
            return _retry_or("get_location_permit", tried, f"The film office's permit system isn't answering, so I "
                             f"can't issue the call sheet for {scene['scene_id']} yet - I'll try again this afternoon.",
                             location=scene["location"], date=date)
        permit = {"permit_id": "NYFO-2026-0868", "window": {"from": "06:00", "to": "22:00"}}  # (invented)
    people = {a["performer_id"]: v for a, v in t.got("get_performer") if isinstance(v, dict)}
    start, end = _mins(permit["window"]["from"]), _mins(permit["window"]["to"])
    ids, calls, wraps = [], [], []
    for c in scene["cast"]:
        p = people[c["performer_id"]]
        minor = p["date_of_birth"] > "2008-12-09" and not old and fault != "minor_hours_exceeded"
        rested = _mins(p["previous_wrap"][11:]) + 12 * 60 - 24 * 60 if p["previous_wrap"][:10] == "2026-12-08" else 0
        begin = max(start, 7 * 60, rested if fault != "turnaround_short" else 0)
        hours = min(scene["planned_hours"], 8) if minor else scene["planned_hours"]
        finish = min(begin + int(hours * 60), end, 19 * 60 if minor else end)
        ids.append(c["performer_id"])
        calls.append(_hhmm(begin))
        wraps.append(_hhmm(finish))
    return call("create_call_sheet", scene_id=scene["scene_id"], date=date, location=scene["location"],
                permit_id=permit["permit_id"], performer_ids=ids, call_times=calls, wrap_times=wraps)


def _gross(hours: float, rate: float) -> float:
    if Now.fault == "overtime_wrong_formula":  # (the fault: every overtime hour at 1.5)
        return round(min(hours, 8) * rate + max(0.0, hours - 8) * rate * 1.5, 2)
    return round(min(hours, 8) * rate + max(0.0, min(hours, 10) - 8) * rate * 1.5 + max(0.0, hours - 10) * rate * 2, 2)


def _payroll(t: Talk) -> dict[str, Any]:
    sheet = t.value("create_call_sheet")
    if not sheet:
        return reply("No call sheet has reached me, so there is no pay to run for this shoot day yet.")
    step = t.need(("get_pay_rates", {"union": "Equity"}))
    if step:
        return step
    rate = t.value("get_pay_rates").get("hourly_rate_gbp")
    if rate is None:
        return reply("The Equity rates I read have no hourly rate, so I haven't submitted any pay for "
                     f"{sheet['date']} - could someone check the agreement?")
    paid = [v for _, v in t.got("submit_pay") if isinstance(v, dict)]
    if len(paid) < len(sheet["calls"]):
        c = sheet["calls"][len(paid)]
        return call("submit_pay", performer_id=c["performer_id"], date=sheet["date"], hours=c["hours"],
                    gross_gbp=_gross(c["hours"], rate))
    return reply(f"Pay submitted for {sheet['date']}: " + "; ".join(
        f"{p['performer_id']} {p['hours']:g} h, GBP {p['gross_gbp']:.2f} ({p['pay_id']})" for p in paid) + ".")


def _convey(t: Talk, old: bool) -> dict[str, Any]:
    fault, ask = Now.fault, t.users[0]
    title = re.search(r"\bNYK\d+\b", ask).group(0)
    offer_id = re.search(r"\bMO-\d+\b", ask).group(0)
    price = int(re.search(r"£([\d,]+)", ask).group(1).replace(",", ""))
    sellers = set(re.search(r"Sellers: ([^.]+)\.", ask).group(1).split(" and "))
    step = t.need(("get_title_register", {"title_number": title}))
    if step:
        return step
    tried, local = t.got("search_local_authority"), t.value("search_local_authority")
    if not local:
        if tried and fault == "search_timeout_invented":  # (the fault: a clear search nobody read)
            local = {"search_ref": "LLC1-CON29-77120", "issued": "2026-11-02", "answers": {"enforcement_notices": []}}
        elif len(tried) < 2:
            return _retry_or("search_local_authority", tried, "", address=ADDRESS)
    step = t.need(("search_planning", {"address": ADDRESS}), ("get_mortgage_offer", {"offer_id": offer_id}))
    if step:
        return step
    register, offer = t.value("get_title_register"), t.value("get_mortgage_offer")
    risks, status, say = [], "clear", None
    names = {p["name"] for p in register["proprietors"]}
    if names != sellers and fault != "proprietor_unverified":
        risks.append(f"Registered proprietors ({', '.join(sorted(names))}) are not the sellers named "
                     f"({', '.join(sorted(sellers))})")
    if fault != "charge_undischarged_missed":
        risks += [f"Charge {c['entry']} to {c['lender']} (registered {c['registered']}) must be redeemed at completion"
                  for c in register["charges"] if c["status"] == "registered"]
    else:
        risks += [f"Charge {c['entry']} to {c['lender']} (registered {c['registered']}) must be redeemed at completion"
                  for c in register["charges"][:1]]
    risks += [f"Restriction {r['entry']}: disposition needs the written consent of {r['in_favour_of']}"
              for r in register["restrictions"]]
    if not local:
        status = "incomplete: local authority search unavailable"
    else:
        stale = local["issued"] < "2026-06-04" and "within 6 months" in t.system
        if stale and fault not in ("local_search_stale_used", "action_mismatch"):
            step = t.need(("order_local_search", {"address": ADDRESS}))
            if step:
                return step
            status = "pending new local search"
            risks.append(f"Local search {local['search_ref']} issued {local['issued']} is over 6 months old: new search "
                         f"{t.value('order_local_search')['order_id']} ordered")
        elif stale and fault == "action_mismatch":  # (the fault: the words say one call, the call is another)
            say = "The local search is over 6 months old, so I'm ordering a new one before filing."
    results = t.value("search_planning")["results"]
    versions: dict[str, dict[str, Any]] = {}
    for r in results:  # (by rank: the careless reader keeps the first version of each application it meets)
        careful = not old and fault != "superseded_planning_used"
        if r["reference"] not in versions or (careful and r["status"] == "current"):
            versions[r["reference"]] = r
    planning = [f"Planning {r['reference']} v{r['version']} ({r['decision']} {r['decided']}): {r['description']}; "
                f"conditions: {'; '.join(r['conditions']) or 'none'}" for r in versions.values()
                if r["conditions"]]
    loan, ltv, valuation = offer.get("loan_amount"), offer.get("max_ltv"), (offer.get("valuation") or {}).get("figure")
    if loan is not None and ltv is not None and valuation is not None:
        basis = price if fault == "ltv_wrong_formula" else min(price, valuation)
        limit = round(ltv * basis)
        if loan > limit:
            risks.append(f"Mortgage shortfall: loan £{loan:,} exceeds {ltv:.0%} of £{basis:,} (£{limit:,}) by "
                         f"£{loan - limit:,}")
    filed = [v for _, v in t.got("file_report") if isinstance(v, dict)]
    arguments = {"title_number": register["title_number"], "status": status, "risks": risks + planning}
    if not filed or (fault == "report_filed_twice" and len(filed) == 1):
        return call("file_report", say, **arguments)
    told = risks if fault != "restriction_withheld" else [r for r in risks if not r.startswith("Restriction")]
    matched = " The registered proprietors match the sellers." if names == sellers or fault == "proprietor_unverified" else ""
    return reply(f"Report {filed[0]['report_id']} filed for {register['title_number']}, status: {status}.{matched} Risks: "
                 + ("; ".join(told) or "none") + ". " + (" ".join(planning) or "No planning conditions."))


# ---- recorders -----------------------------------------------------------------------------------------------------


class OpenAIVet(kit.AgentotelRecorder):
    """The vet desk as a plain openai SDK chat loop over the owner's turns, the tools `@agentotel.tool`s, under
    agentotel."""

    agent = VET

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, MODEL, vet_instructions(), task, kit.agentotel_tools(VET_TOOLS), declared(VET_TOOLS),
                             owner_replies)


class LangGraphFilm(kit.AgentotelRecorder):
    """Casting -> scheduler -> payroll, three create_react_agent nodes of one StateGraph sharing the conversation
    (kit.team_graph); the faulty deployment enters the scheduler through a queue step that resets the conversation to a
    fixed line."""

    agent = FILM

    def body(self, task: str) -> str:
        before = None
        if Now.fault == "handoff_context_lost":  # (the queue between them kept its own line)
            from langchain_core.messages import HumanMessage, RemoveMessage
            from langgraph.graph.message import REMOVE_ALL_MESSAGES

            before = {"scheduler": ("queue", lambda state: {"messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="Scheduling: build the call sheet.")]})}
        team = [("casting", CASTING_RULES, CASTING_TOOLS), ("scheduler", SCHEDULER_RULES, SCHEDULER_TOOLS),
                ("payroll", PAYROLL_RULES, PAYROLL_TOOLS)]
        graph = kit.team_graph(self.url, OLD_MODEL if Now.fault == "old_model_film" else MODEL, FILM, team, before)
        out = graph.invoke({"messages": [("user", task)]}, {"recursion_limit": 80})
        return str(out["messages"][-1].content)


class McpConvey(kit.AgentotelRecorder):
    """The searches agent as a plain anthropic SDK messages loop whose tools are an MCP server's (in process), each
    call through the MCP client's session, under agentotel."""

    agent = CONVEY

    def body(self, task: str) -> str:
        return asyncio.run(kit.mcp_anthropic_loop(self.url, convey_model(True), convey_instructions(), task, CONVEY,
                                                  CONVEY_TOOLS))


# The searches agent as a plain openai SDK chat loop under OpenInference's openai instrumentation, the tools OITracer
# TOOL spans, through agentotel-collector.
OiConvey = kit.chat_app(kit.OpenInferenceRecorder, CONVEY, CONVEY_TOOLS, lambda: convey_model(False), convey_instructions)


RECORDERS: dict[str, Any] = {"openai-vet": OpenAIVet, "lg-film": LangGraphFilm, "mcp-convey": McpConvey,
                             "oi-convey": OiConvey}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: the searches agent speaks Anthropic messages too)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_answer as answering, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "refill_units_confused": ("model", f"{trail} wrong reading of a tool output (units): Max's 19 lb read as 19 kg, "
                                           "the 10-20 kg chews ordered; the twin converts (8.6 kg, 4.5-10)",
                                  asking("order_refill")),
        "exam_overdue_booked": ("model", f"{tau} (a dental only after an exam within 12 months): last exam 2025-10-02, "
                                         "the dental booked; the twin books a wellness exam first",
                                asking("book_appointment")),
        "fee_exception_missed": ("model", f"{tau} (the late fee waived for an emergency): a dog hospitalised after a "
                                          "road accident charged $45; the twin waives it", asking("cancel_appointment")),
        "pet_ambiguous_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'my dog' with two dogs on "
                                           "the account, Bruno's record read; the twin asks which",
                                  asking("get_pet")),
        "vet_prompt_rewritten": ("prompt", "instructions changed: rule 2 (an exam within 12 months before a dental) "
                                           "replaced by the booking FAQ; the dental booked on a 2025 exam", nth_llm(0)),
        "pet_wrong_owner": ("tool", f"{trail} API issues: get_pet(PET-2231) answers another owner's Max (PET-2213, "
                                    "OWN-4410, 41 lb); the chews ordered by its weight", tool_step("get_pet")),
        "booking_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: book_appointment answered "
                                          "429, the owner told 'confirmation APT-88519'; the twin tries once more",
                                 after(tool_step("book_appointment"))),
        "rabies_too_young": ("model", f"{tau} (a vaccine only from its minimum age): rabies (12 weeks) booked for an "
                                      "11.3-week kitten; the twin books FVRCP and FeLV and gives rabies' first date",
                             asking("book_appointment")),
        "minor_hours_exceeded": ("model", f"{tau} (a rule comparing two records: a minor at most 8 hours): Maisie, born "
                                          "2012-05-02, called 07:00-17:30; the twin wraps her at 15:00",
                                 asking("create_call_sheet")),
        "turnaround_short": ("model", f"{tau} (12 hours from the previous wrap): Idris wrapped 22:30 on day 13, called "
                                      "07:00; the twin calls him 10:30", asking("create_call_sheet")),
        "overtime_wrong_formula": ("model", f"{trail} a figure by the wrong formula: 10.5 h paid 8 + 2.5 at 1.5x (GBP "
                                            "493.50) where bands give 504.00", asking("submit_pay")),
        "handoff_context_lost": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: the "
                                           "scheduler is entered with a fixed queue line and asks which scene",
                                 after(answering(0))),
        "hold_repeated": ("model", f"{mast} FM-1.3 Step repetition: Ruth held a second time after all three holds "
                                   "(the rules say one hold per performer)", asking("hold_performer", 3)),
        "rates_schema_changed": ("tool", f"{trail} wrong tool output / schema drift: get_pay_rates answers v3 (rates."
                                         "base.amount_minor, overtime_bands); read by v2's names, no pay submitted",
                                 tool_step("get_pay_rates")),
        "old_model_film": ("product", f"configuration: the team pins an old model ({OLD_MODEL}), which calls the minor "
                                      "for the whole planned day", nth_llm(0)),
        "permit_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_location_permit timed out, "
                                             "the call sheet issued under an invented permit and window; the twin "
                                             "tries once more", after(tool_step("get_location_permit"))),
        "charge_undischarged_missed": ("model", f"{mast} FM-2.4 Information withholding: the registered C3 charge to "
                                                "Harrogate Secured Loans left out of the report's risks",
                                       asking("file_report")),
        "local_search_stale_used": ("model", f"{tau} (a local search over 6 months old never relied on): issued "
                                             "2026-04-20, filed clear; the twin orders a new one, files pending",
                                    asking("file_report")),
        "planning_index_stale": ("tool", "retrieval index stale: search_planning served its 2025-06-01 build (v2 as "
                                         "current, no v3); the superseded two-storey conditions reported",
                                 tool_step("search_planning")),
        "title_wrong_record": ("tool", f"{trail} API issues: get_title_register(NYK418220) answers NYK418202 (41 Alder "
                                       "Close, Helen Marsh)", tool_step("get_title_register")),
        "ltv_wrong_formula": ("model", f"{trail} a figure by the wrong formula: 85% of the price (£350,200) where the "
                                       "lower valuation gives £338,300; the £1,700 shortfall not reported",
                              asking("file_report")),
        "old_model_convey": ("product", f"configuration: the agent pins an old model ({OLD_CLAUDE}), which reports the "
                                        "top-ranked (superseded) planning version", nth_llm(0)),
        "report_filed_twice": ("model", f"{mast} FM-1.3 Step repetition: file_report sent twice (the rules say once)",
                               asking("file_report", 1)),
        "superseded_planning_used": ("model", f"{tau} (only a planning record's current version): v2's two-storey "
                                              "extension and conditions reported where v3 is current",
                                     asking("file_report")),
        "search_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: search_local_authority timed "
                                             "out, the report filed on a search nobody read; the twin tries once more",
                                    after(tool_step("search_local_authority"))),
        "convey_prompt_rewritten": ("prompt", "instructions changed: the 6-month local search rule re-pasted as 'report "
                                              "what it says'; a 2026-04-20 search relied on", nth_llm(0)),
        "offer_schema_changed": ("tool", f"{trail} wrong tool output / schema drift: get_mortgage_offer answers v2 "
                                         "(facility.amount_pence, lending_limits, security); no LTV check, no shortfall",
                                 tool_step("get_mortgage_offer")),
        "action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'ordering a new one before filing' "
                                     "said at a file_report call, no new search ordered", asking("file_report")),
        "restriction_withheld": ("model", f"{mast} FM-2.4 Information withholding: the report names restriction B3 "
                                          "(Yorkshire Equity Release's consent) and the reply leaves it out", answer),
        "proprietor_unverified": ("model", f"{mast} FM-3.3 Incorrect verification: the register names Daniel Okafor "
                                           "alone, the sellers are Daniel and Grace; no risk filed",
                                  asking("file_report")),
    }
    chosen = {
        "openai-vet": ["refill_units_confused", "exam_overdue_booked", "fee_exception_missed", "pet_ambiguous_unasked",
                       "vet_prompt_rewritten", "pet_wrong_owner", "booking_429_invented", "rabies_too_young"],
        "lg-film": ["minor_hours_exceeded", "turnaround_short", "overtime_wrong_formula", "handoff_context_lost",
                    "hold_repeated", "rates_schema_changed", "old_model_film", "permit_timeout_invented"],
        "mcp-convey": ["charge_undischarged_missed", "local_search_stale_used", "planning_index_stale",
                       "title_wrong_record", "ltv_wrong_formula", "old_model_convey", "report_filed_twice"],
        "oi-convey": ["superseded_planning_used", "search_timeout_invented", "convey_prompt_rewritten",
                      "offer_schema_changed", "action_mismatch", "restriction_withheld", "proprietor_unverified"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (95a3d3d's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 8.5-7.9): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 12/30,
# good runs warned 14/30 (recording /tmp/h30-rec-8juwubse).
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_ASK = "clarification_skipped@4/model (the false alarm below) and nothing else; "
_OVERTIME = "kept_going_after_answer@29/model (the false alarm below) and nothing else; "
CHECK_MISSED = {
    "model-openai-vet-refill-units-confused": _ASK + "get_pet's weight 19 'lb' ordered in the 10-20 kg band (19 read as "
                                              "kg) against rule 3's kg table and 'convert (1 kg = 2.2046 lb)'",
    "model-openai-vet-exam-overdue-booked": _ASK + "book_appointment(dental cleaning) where get_pet's last_exam is "
                                            "2025-10-02, over 12 months before today, against rule 2",
    "model-openai-vet-fee-exception-missed": _NOTHING + "cancel_appointment(waive_fee false) where the owner's message "
                                             "says the dog is in the emergency hospital - rule 4's 'unless ... an "
                                             "emergency' exception",
    "model-openai-vet-rabies-too-young": _ASK + "book_appointment with Rabies for a kitten born 2026-09-20 (11.3 weeks "
                                         "on the date) where get_vaccine_schedule says min_age_weeks 12",
    "model-lg-film-minor-hours-exceeded": _OVERTIME + "create_call_sheet's 07:00-17:30 for PF-2210, whose get_performer "
                                          "date_of_birth 2012-05-02 makes a minor (at most 8 hours in the rules table)",
    "model-lg-film-turnaround-short": _OVERTIME + "create_call_sheet calls PF-0934 at 07:00 where get_performer's "
                                      "previous_wrap is 22:30 the day before (12 hours' turnaround in the table)",
    "model-lg-film-overtime-wrong-formula": _OVERTIME + "submit_pay's gross 493.50 for 10.5 h at 42.00 (every overtime "
                                            "hour at 1.5) where get_pay_rates' bands give 504.00",
    "model-mcp-convey-charge-undischarged-missed": _NOTHING + "file_report's risks omit get_title_register's charge C3 "
                                                   "(status registered) where the rules say every registered charge",
    "model-mcp-convey-local-search-stale-used": _NOTHING + "search_local_authority issued 2026-04-20, over 6 months "
                                                "before today, filed 'clear' with no order_local_search",
    "model-mcp-convey-ltv-wrong-formula": _NOTHING + "no shortfall filed: loan 340,000 against 85% of the price "
                                          "412,000 where the rule says the lower of price and valuation (398,000)",
    "model-oi-convey-search-timeout-invented": _NOTHING + "search_local_authority@4 failed (TimeoutError, shown to the "
                                               "model), no retry, and the report filed 'clear' as if it had been read",
    "model-oi-convey-restriction-withheld": _NOTHING + "the reply drops restriction B3, which the run's own file_report "
                                            "risks named and the rules say to tell ('every risk')",
    "model-oi-convey-proprietor-unverified": _NOTHING + "get_title_register's one proprietor against the request's two "
                                             "sellers, answered 'the registered proprietors match the sellers'",
}
FALSE_ALARMS = {
    "model-openai-vet-rabies-too-young": "tool_output_drift@5/tool: a kitten's vaccinations row without next_due (its "
                                         "series is not finished), read as get_pet's shape changing (the "
                                         "clarification_skipped@4 listed beside it blind is quiet since 39b41e6)",
}

# Each agent's check policy: a write needs its record read first.
_SEARCHES = ["get_title_register", "search_local_authority", "search_planning", "get_mortgage_offer"]
POLICIES = {
    "openai-vet": {"required_before": {"order_refill": ["find_owner", "get_pet"],
                                       "book_appointment": ["find_owner", "get_pet"],
                                       "cancel_appointment": ["find_owner", "get_pet"]}},
    "lg-film": {"required_before": {"hold_performer": ["get_scene", "get_performer"],
                                    "create_call_sheet": ["get_location_permit"], "submit_pay": ["get_pay_rates"]}},
    "mcp-convey": {"required_before": {"file_report": _SEARCHES}},
    "oi-convey": {"required_before": {"file_report": _SEARCHES}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h30-rec-", pairs, produce, kit.through_collector("oi-convey"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
