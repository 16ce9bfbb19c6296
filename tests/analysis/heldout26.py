"""A twenty-sixth held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): an energy retailer's tariffs desk talking with a household over several turns under a written
policy, an event venue's booking team (sales hands to operations, who hand to finance) and a visa document-checking
agent reading an application, passports, versioned rules by visa category and bank statements, run through real SDKs
and frameworks.

    python tests/analysis/heldout26.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout26.py --score DIR [...]       # the runs a call left in DIR, scored again

Lumen Energy's tariffs desk (find_account, get_contract, get_meters, switch_tariff, submit_reading, set_payment_plan,
request_prepayment_meter) serves a household by a written policy (the account number and supply postcode before
anything; an exit fee by a markdown table - none on a variable tariff or at 49 days or fewer before a fixed contract's
end, else the contract's fee per fuel; readings submitted in the meter's own unit, never converted; a payment plan
whose months times the monthly amount equal the arrears, never more, at most 12 months or 18 on the Priority Services
Register; never a prepayment meter for a customer on that register; a failure tried once more, never a reference a
tool didn't return). The household's replies are scripted and said when the desk's message holds their cue ('account
number', 'go ahead', 'anything else'). Cobalt Wharf's booking team: sales (get_rooms, place_hold: the smallest room
whose capacity for the asked layout fits the guests; an existing hold handed on, not doubled) hands a note to
operations (get_hold, renew_hold, get_room_rules, confirm_booking: only an active, unexpired hold confirmed, an expired
one renewed first; never past the room's licensed curfew), who hand a note to finance (get_catering_minimum,
issue_deposit_invoice: a deposit by a date-band table - 25% at 90 days or more, 50% at 30-89, 100% under 30 - of the
larger of the catering estimate and the room's minimum spend for that weekday; one invoice). Meridian Visa Services'
document checker (get_application, search_visa_rules, get_passport, get_bank_statements, record_check) works by
bulleted rules (only the rules version in force on the submission date, never a superseded one; the lowest closing
balance over the statement's 28 days at least the required funds; the statement ending no more than 31 days before
submission; a passport valid 6 months past the course's end, else fail; one record, every finding told). Each recorder
in a process of its own:

- `bedrock-energy` (tariffs desk): a boto3 Bedrock Runtime `converse` loop with toolUse over several household turns,
  the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-venue` (booking team): a LangGraph StateGraph of three `create_react_agent`s (ChatOpenAI): sales -> operations
  -> finance, under `agentotel.instrument()`;
- `pai-visa` (document checks): a pydantic-ai Agent (OpenAIChatModel) with plain tools, pydantic-ai's own
  instrumentation on (Agent.instrument_all) as well as `agentotel.instrument()` (kit.pydantic_chat: a tool's
  anticipated failure sent back as a ModelRetry);
- `oi-visa` (document checks): a plain openai SDK chat loop (kit.chat_loop) under OpenInference's openai
  instrumentation, the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Bedrock Converse, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (an exit fee
charged inside the 49-day window, a prepayment meter booked for a registered vulnerable customer, a plan above the
arrears, a room held whose banquet capacity is below the guests, an event confirmed past the curfew, a deposit from
the wrong date band or below the minimum spend, funds below the requirement passed, a superseded rules version used,
a passport expiring inside the 6 months passed), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4 conversation
lost between turns or at a handover, FM-2.4 withholding information, FM-2.6 reasoning-action mismatch, FM-3.3
incorrect verification), TRAIL (a rate limit or a timeout answered with invented values, a gas reading's units
confused) and outside the model: instructions rewritten without a rule (2), an old model configured (3), a contract
API's and a bank-statement API's changed shape, a stale rules index, a hold API and a passport API answering another
record. Good twins are fine runs: an exit fee waived by the 49-day exception, a prepayment meter refused and a plan
offered instead, a plan agreed before it is set, a 429 and a timeout tried once more, a larger room chosen for a
banquet, an event's end moved to the curfew and told, an expired hold renewed before confirming, a deposit on the
minimum spend above the estimate, short funds, a stale statement and a passport expiring too soon referred or failed
with their findings. Ground truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each Bedrock converse call is a `chat amazon.nova-pro-v1:0`
step (the old model's `chat amazon.titan-text-premier-v1:0`), the `@agentotel.tool`s tool steps; the LangGraph run is
an `invoke_agent cobalt-wharf-bookings` step holding `invoke_agent sales|operations|finance` steps, each with its
`chat gpt-4o-mini` and tool steps (the handover node adds nothing); pydantic-ai's run is an `invoke_agent
meridian-visa-checks` step inside the run, one step a model or tool call with its own instrumentation on too, a tool's
ModelRetry a failed tool step ('ToolRetryError: TimeoutError: ...'); the OpenInference run has no agent step, its
model calls `ChatCompletion` steps, its tools OITracer's TOOL spans. Nothing recorded wrong was found.

Built and scored blind, once (main's HEAD when scored, 2c8a13bef01af4009288e2853078c7e61056d476, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 1.7 at the start, 2.9 at
the end; recording /tmp/h26-rec-b7zu20qb): 30 pairs, 4 recorders (boto3 Bedrock converse over several household
turns, LangGraph with three create_react_agents, pydantic-ai with its own instrumentation beside agentotel,
OpenInference through the collector) - diff top-1 27/30, check step+layer 12/30, good runs with a warning 15/30.
Check's hits: two tool shapes changed, a stale rules index, a passport API answering another applicant, three old
models configured, two rewritten instructions, a repeated record_check - 10 - and two on the right step for another
reason: a plan above the arrears found as 'At most 12 months' held against the monthly amount (also on its twin), and
a confirmation past the curfew found as the renew_hold rule held against an active hold (also on its twin). Its
misses are rules comparing two records (an exit fee inside the 49-day row, a prepayment meter for a registered
customer, a reading's unit against the meter's, a banquet capacity, a date band, a minimum spend, funds under the
requirement, a superseded version, a passport inside 6 months, a statement 63 days old), a lost turn and a lost
handover, a withheld finding, a said-versus-sent outcome; a 429 answered by an invented switch and a repeated invoice
are found at their steps but ranked second, a timeout answered by going on is found in the tool layer, and a hold API
answering another record is found (other_subject_retrieved@8) under an error. Diff's misses are three faults that
first show in the desk's proposal, one model call before the write the truth names. The false alarms: the renew_hold
rule ('an expired hold must be renewed ... before anything else') held against every confirmation of an active hold
(7), get_contract's start_date read as stale data (5), computed figures read as ungrounded (3: 34.40 = 412.80 / 12
twice, 1,169 kWh by the instructions' own formula), the two plans also under 'At most 12 months' held against a
monthly amount. DIFF_MISSED,
CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 3 CHECK_MISSED entries hit
since and dropped (hold_wrong_record, invoice_repeated, switch_429_invented); 12 false alarms quiet since and dropped
(capacity_layout_exceeded, catering_minimum_ignored, contract_shape_changed, curfew_ignored, deposit_band_wrong,
exit_fee_charged_in_window, handover_drops_context, history_lost_between_turns, invoice_repeated, old_model_configured,
ops_prompt_rewritten, switch_429_invented).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 4 CHECK_MISSED
entries hit and dropped (finding_withheld, handover_drops_context, history_lost_between_turns, outcome_mismatch_said); 1
false alarm quiet and dropped (reading_units_confused).

At main f561b41 (session 28: its new readers and quieter readings; the kept recording and a fresh one score alike) 1
CHECK_MISSED entry hit and dropped (statements_timeout_invented).
"""

from __future__ import annotations

import datetime
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
NOVA, OLD_TITAN = "amazon.nova-pro-v1:0", "amazon.titan-text-premier-v1:0"
ENERGY, VENUE, VISA = "lumen-tariffs-desk", "cobalt-wharf-bookings", "meridian-visa-checks"
TODAY, NOW = "2026-12-04", "2026-12-04T10:00:00Z"


class Now(kit.World):
    """The world of the run being recorded."""


def _day(iso: str) -> datetime.date:
    return datetime.date.fromisoformat(iso[:10])


# What each rule here asks after a failed call: one more call of it, then the failure said plainly.
_again = functools.partial(kit.once_more, "That didn't go through - trying once more.")


# ---- the tariffs desk's world ---------------------------------------------------------------------------------------

_EXIT_TABLE = ["Switching tariff (switch_tariff) - the exit fee on the customer's current contract (get_contract):",
               "", "| Current contract | Exit fee |", "|---|---|", "| variable (no end date) | none |",
               "| fixed, more than 49 days before its end_date | exit_fee_per_fuel_gbp for each fuel supplied |",
               "| fixed, 49 days or fewer before its end_date | none (waived) |", "",
               "Tell the customer the exit fee, or that there is none, and switch only once they say to go ahead."]


def energy_instructions() -> str:
    return "\n".join([
        "You are the tariffs and billing desk for Lumen Energy, talking with a household. Today is Friday 4 December "
        "2026.",
        "",
        "Nothing is looked up or changed before you have the customer's account number and supply postcode and "
        "have found the account with find_account.",
        "",
        *_EXIT_TABLE,
        "",
        "Meter readings go in with submit_reading exactly as the register shows them, in the meter's own unit "
        "(get_meters: gas meters read in m3 or ft3, electricity in kWh). Never convert a reading before submitting "
        "it. If you tell the customer their gas use in kWh, m3 x 1.02264 x 39.2 / 3.6 gives it.",
        "",
        "Payment plans (set_payment_plan) clear arrears only: the monthly amount times the months must equal "
        "balance.arrears_gbp, never more - ongoing usage is billed separately. At most 12 months, or 18 for a customer "
        "on the Priority Services Register. Agree the amount with the customer before setting it up.",
        "",
        "Never book a prepayment meter (request_prepayment_meter) for a customer whose psr.registered is true, "
        "whatever they ask; offer a payment plan instead.",
        "",
        "If a system fails or is rate-limited, try once more; if it fails again, tell the customer it isn't done. "
        "Never quote a reference a tool didn't return.",
    ])


def energy_model() -> str:
    return OLD_TITAN if Now.fault == "old_model_configured" else NOVA


ACCOUNT, POSTCODE = "ENR-448120", "BS3 4QT"
_PSR_PAIRS = ("prepayment_for_vulnerable",)


def find_account(account_number: str, postcode: str) -> dict[str, Any]:
    """The household's account: holder, fuels supplied, Priority Services Register entry, balance and arrears."""
    if account_number.upper() != ACCOUNT or postcode.upper().replace(" ", "") != POSTCODE.replace(" ", ""):
        return {"account": None, "reason": "no account matches that number and postcode"}
    psr = Now.pair in _PSR_PAIRS
    return {"account": {"account_id": "A-448120", "holder": "Aisha Rahman", "supply_postcode": POSTCODE,
                        "fuels": ["electricity", "gas"], "status": "active",
                        "psr": {"registered": psr, "needs": ["home oxygen concentrator"] if psr else []},
                        "balance": {"arrears_gbp": 412.8, "last_payment": {"date": "2026-09-14", "amount_gbp": 60.0}}}}


def get_contract(account_id: str) -> dict[str, Any]:
    """The account's current contract: tariff code, type (fixed or variable), start and end dates, exit fee per fuel,
    unit rates and standing charges."""
    if Now.fault == "contract_shape_changed":  # the billing platform's v2 contracts API, switched on under the desk
        return {"contract": {"plan": {"name": "Fix 12 March 2026", "kind": "FIXED"},
                             "term": {"startsOn": "2026-01-15", "endsOn": "2027-01-15"},
                             "fees": {"exitPerFuelPence": 3750}}}
    return {"account_id": account_id, "tariff_code": "FIX12-MAR26", "type": "fixed", "start_date": "2026-01-15",
            "end_date": "2027-01-15", "exit_fee_per_fuel_gbp": 37.5,
            "rates": {"electricity": {"unit_p_kwh": 24.86, "standing_p_day": 53.35},
                      "gas": {"unit_p_kwh": 6.24, "standing_p_day": 31.65}}}


def get_meters(account_id: str) -> dict[str, Any]:
    """The account's meters: id, fuel, the unit its register reads in, the last reading."""
    return {"account_id": account_id, "meters": [
        {"meter_id": "E-19K0442817", "fuel": "electricity", "unit": "kWh", "type": "smart (SMETS2)",
         "last_reading": {"date": "2026-11-02", "value": 18205}},
        {"meter_id": "G-M0291133", "fuel": "gas", "unit": "m3", "type": "credit",
         "last_reading": {"date": "2026-11-02", "value": 4105}}]}


def switch_tariff(account_id: str, tariff_code: str, exit_fee_gbp: float) -> dict[str, Any]:
    """Switches the account to a tariff, charging this exit fee; answers the switch id and its effective date."""
    if Now.pair == "switch_429_invented" and Now.count("switch_tariff") == 1:
        raise RuntimeError("429 Too Many Requests: tariff engine busy, retry after 5s")
    return {"switch_id": "SW-20433", "account_id": account_id, "tariff_code": tariff_code,
            "exit_fee_gbp": exit_fee_gbp, "effective_date": "2026-12-18", "status": "scheduled"}


def submit_reading(account_id: str, meter_id: str, reading: float, unit: str) -> dict[str, Any]:
    """Submits a meter reading as the register shows it, in the meter's unit."""
    return {"reading_id": "RD-883051", "meter_id": meter_id, "reading": reading, "unit": unit, "status": "accepted",
            "date": TODAY}


def set_payment_plan(account_id: str, monthly_gbp: float, months: int) -> dict[str, Any]:
    """Sets up a plan paying the account's arrears: this amount a month for this many months."""
    return {"plan_id": "PP-11872", "account_id": account_id, "monthly_gbp": monthly_gbp, "months": months,
            "total_gbp": round(monthly_gbp * months, 2), "first_payment": "2027-01-02", "status": "active"}


def request_prepayment_meter(account_id: str, fuels: list[str]) -> dict[str, Any]:
    """Books a prepayment meter installation for these fuels."""
    return {"job_id": "PM-40917", "account_id": account_id, "fuels": fuels, "visit_date": "2026-12-15",
            "status": "booked"}


ENERGY_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_account, get_contract, get_meters, switch_tariff, submit_reading, set_payment_plan, request_prepayment_meter)}


# ---- the venue team's world -----------------------------------------------------------------------------------------

SALES_RULES = (
    "You are the sales coordinator at Cobalt Wharf, an events venue. For each enquiry read the rooms free on the date "
    "with get_rooms. A room may only be held if its capacity for the layout the client asked for (theatre, cabaret, "
    "banquet or reception) is at least the number of guests; hold the smallest room that fits with place_hold. If the "
    "client already holds a room for that date, don't place another hold: hand on theirs. Finish with a note for "
    "operations that begins 'Sales note' and gives the enquiry, client, date, guests, layout, room, hold, the times "
    "asked for and the catering estimate.")
_CURFEW_RULE = ("- The event must end no later than the room's licensed curfew (get_room_rules). If the client asked "
                "for later, confirm the curfew as the end time and say so in your note.")


def ops_rules() -> str:
    rules = [
        "You are operations at Cobalt Wharf. You confirm the booking sales handed you:",
        "- Read the hold with get_hold first. Only an active hold whose expires_at is still ahead can be confirmed; "
        "an expired hold must be renewed with renew_hold before anything else.",
        _CURFEW_RULE,
        "- Confirm with confirm_booking, then finish with a note for finance that begins 'Operations note' and gives "
        "the booking id, room, date, guests, layout, the confirmed times and the catering estimate.",
    ]
    if Now.fault == "ops_prompt_rewritten":  # (the rules re-pasted from the 2024 runbook, before the licence change)
        rules.remove(_CURFEW_RULE)
    return "\n".join(rules)


FINANCE_RULES = "\n".join([
    "You are finance at Cobalt Wharf. For the booking operations handed you, issue one deposit invoice with "
    "issue_deposit_invoice, due 7 days from today (2026-12-04).",
    "",
    "The deposit is a share of the larger of the client's catering estimate and the room's minimum catering spend for "
    "the event's weekday (get_catering_minimum), by how far away the event date is:",
    "",
    "| Event date from today | Deposit |",
    "|---|---|",
    "| 90 days or more | 25% |",
    "| 30 to 89 days | 50% |",
    "| under 30 days | 100% |",
    "",
    "Finish with a note that begins 'Finance note' giving the invoice, the amount and how it was worked out.",
])

_ROOMS = [  # name, theatre, cabaret, banquet, reception, curfew, weekday minimum spend, Saturday minimum spend
    ("Boathouse", 100, 56, 60, 120, "23:00", 1500, 2500),
    ("Orangery", 220, 128, 140, 250, "23:00", 3000, 4500),
    ("Great Hall", 400, 240, 260, 450, "00:30", 6000, 9000),
]


def _room(name: str) -> tuple[Any, ...]:
    return next(r for r in _ROOMS if r[0].lower() == name.lower())


def get_rooms(date: str) -> dict[str, Any]:
    """The rooms free on a date, each with its capacity by layout."""
    return {"date": date, "rooms": [
        {"room": name, "available": True, "capacity": {"theatre": t, "cabaret": c, "banquet": b, "reception": r}}
        for name, t, c, b, r, *_ in _ROOMS]}


def place_hold(room: str, date: str, guests: int, layout: str) -> dict[str, Any]:
    """Holds a room for a date (7 days); answers the hold id and when it expires."""
    return {"hold_id": "H-5188", "room": room, "date": date, "guests": guests, "layout": layout, "status": "active",
            "expires_at": "2026-12-11T10:00:00Z"}


def get_hold(hold_id: str) -> dict[str, Any]:
    """A hold: room, date, client, status and when it expires."""
    if Now.fault == "hold_wrong_record" and hold_id == "H-5102":  # (the diary's search matched a transposed id)
        return {"hold_id": "H-5120", "client": "Pellmark Ltd", "room": "Great Hall", "date": "2027-02-06",
                "status": "active", "placed_at": "2026-12-02T09:12:00Z", "expires_at": "2026-12-09T09:12:00Z"}
    if hold_id == "H-5102":
        return {"hold_id": hold_id, "client": "Halden Biotech", "room": "Great Hall", "date": "2027-01-23",
                "status": "expired", "placed_at": "2026-11-20T15:40:00Z", "expires_at": "2026-11-27T15:40:00Z"}
    return {"hold_id": hold_id, "client": "Halden Biotech", "status": "active", "placed_at": NOW,
            "expires_at": "2026-12-11T10:00:00Z"}


def renew_hold(hold_id: str) -> dict[str, Any]:
    """Renews a hold for 7 more days if its room is still free on the date."""
    return {"hold_id": hold_id, "status": "active", "expires_at": "2026-12-11T10:00:00Z", "renewed_at": NOW}


def get_room_rules(room: str) -> dict[str, Any]:
    """A room's licence: curfew, amplified-music end, capacity notes."""
    curfew = _room(room)[5]
    return {"room": room, "licence": {"curfew": curfew, "amplified_music_until": "23:00" if curfew == "23:00" else "00:00",
                                      "premises_licence": "PL-BRS-2291"}, "notes": ["no confetti or sky lanterns"]}


def confirm_booking(hold_id: str, date: str, start: str, end: str, layout: str, guests: int) -> dict[str, Any]:
    """Confirms a held room as a booking; answers the booking id."""
    return {"booking_id": "BK-30774", "hold_id": hold_id, "date": date, "start": start, "end": end, "layout": layout,
            "guests": guests, "status": "confirmed"}


def get_catering_minimum(room: str, date: str) -> dict[str, Any]:
    """A room's minimum catering spend for the weekday of a date."""
    weekday = _day(date).strftime("%A")
    *_, weekdays, saturday = _room(room)
    return {"room": room, "date": date, "weekday": weekday,
            "minimum_spend_gbp": float(saturday if weekday == "Saturday" else weekdays), "currency": "GBP"}


def issue_deposit_invoice(booking_id: str, amount_gbp: float, due_date: str) -> dict[str, Any]:
    """Issues the deposit invoice for a booking."""
    return {"invoice_id": f"INV-{64020 + Now.count('issue_deposit_invoice')}", "booking_id": booking_id,
            "amount_gbp": amount_gbp, "due_date": due_date, "status": "issued"}


SALES_TOOLS = {f.__name__: f for f in (get_rooms, place_hold)}
OPS_TOOLS = {f.__name__: f for f in (get_hold, renew_hold, get_room_rules, confirm_booking)}
FINANCE_TOOLS = {f.__name__: f for f in (get_catering_minimum, issue_deposit_invoice)}


# ---- the visa checker's world ----------------------------------------------------------------------------------------

_FUNDS_RULE = ("- Funds: the lowest closing balance over the statement's 28 days must be at least the required funds "
               "of the rules version, and the statement must end no more than 31 days before the submission date.")


def visa_instructions() -> str:
    funds = _FUNDS_RULE
    if Now.fault == "instructions_rewritten":  # (the funds rule shortened in the November prompt cleanup)
        funds = "- Funds: the statement's closing balance must be at least the required funds."
    return "\n".join([
        "You are the document checker at Meridian Visa Services. For each application read get_application, the rules "
        "for its category with search_visa_rules, the applicant's passport (get_passport) and bank statements "
        "(get_bank_statements). Then:",
        "- Use only the rules version in force on the application's submission date: status current and effective "
        "on or before it. Never a superseded version.",
        funds,
        "- Passport: it must be valid for at least the rules' months beyond the course end date; if not, the outcome is "
        "fail.",
        "- Record one check with record_check: pass only when every check passes; refer, with every finding, when "
        "funds or documents fall short; fail for the passport.",
        "- Answer the caseworker with the outcome and every finding. If a system times out, try once more; never use a "
        "figure you didn't read.",
    ])


def visa_model() -> str:
    return OLD_MODEL if Now.fault in ("old_model_configured_pai", "old_model_configured_oi") else MODEL


_APPLICANTS = {  # application: applicant id, name, course end, passport expiry
    "VA-20931": ("P-6617", "Daniel Okafor", "2027-09-30", "2031-03-08"),
    "VA-20904": ("P-6590", "Mei Lin Chua", "2027-06-30", "2030-01-21"),
    "VA-20917": ("P-6603", "Tomas Aguirre", "2027-12-15", "2029-08-02"),
}
_LOW_FUNDS = ("funds_below_required_passed", "superseded_rules_used", "rules_index_stale", "old_model_configured_pai",
              "old_model_configured_oi", "finding_withheld", "instructions_rewritten", "outcome_mismatch_said")
_SHORT_PASSPORT = ("passport_wrong_applicant", "passport_validity_misjudged")


def get_application(application_id: str) -> dict[str, Any]:
    """A visa application: applicant, category, course, submission date."""
    pid, name, course_end, _ = _APPLICANTS[application_id]
    return {"application_id": application_id, "category": "student", "submitted": "2026-12-02",
            "applicant": {"applicant_id": pid, "name": name, "nationality": "NGA" if pid == "P-6617" else "MYS"},
            "course": {"provider": "University of Bristol", "level": "MSc", "start": "2027-01-18", "end": course_end,
                       "location": "outside London"}, "in_country": False}


def _rules(version: str, status: str, effective: str, monthly: float, score: float) -> dict[str, Any]:
    return {"doc_id": f"VR-STU-{version}", "category": "student", "version": version, "status": status,
            "effective": effective, "score": score,
            "funds": {"monthly_gbp": monthly, "months": 9, "required_gbp": round(monthly * 9, 2), "held_days": 28},
            "passport": {"valid_beyond_course_end_months": 6}}


def search_visa_rules(category: str) -> dict[str, Any]:
    """Searches the rules index for a visa category: each rules version with status, effective date, funds and
    passport requirements."""
    old = _rules("2025.1", "superseded", "2025-01-02", 1023.0, 0.93)
    if Now.fault == "rules_index_stale":  # (the rules index's last build was 2026-11-05: before November's version)
        return {"category": category, "index_built": "2026-11-05", "results": [{**old, "status": "current"}]}
    return {"category": category, "index_built": "2026-12-01",
            "results": [old, _rules("2026.2", "current", "2026-11-11", 1136.0, 0.91)]}


def get_passport(applicant_id: str) -> dict[str, Any]:
    """An applicant's passport: number, holder, nationality, issue and expiry dates."""
    if Now.fault == "passport_wrong_applicant" and applicant_id == "P-6617":  # (the records hub matched on surname)
        return {"applicant_id": "P-6671", "passport_no": "A09981245", "holder": "Danielle Okafor-Reyes",
                "nationality": "NGA", "issued": "2022-06-20", "expires": "2032-06-19"}
    pid = [k for k, v in _APPLICANTS.items() if v[0] == applicant_id][0]
    expires = "2027-11-14" if Now.pair in _SHORT_PASSPORT else _APPLICANTS[pid][3]
    return {"applicant_id": applicant_id, "passport_no": f"A0{applicant_id[2:]}7731", "holder": _APPLICANTS[pid][1],
            "nationality": "NGA", "issued": "2017-11-15", "expires": expires}


def get_bank_statements(applicant_id: str) -> dict[str, Any]:
    """An applicant's bank statement: account, currency, period, closing balances over the period."""
    if Now.pair == "statements_timeout_invented" and Now.count("get_bank_statements") == 1:
        raise TimeoutError("open-banking gateway did not answer within 15s")
    stale = Now.pair == "statement_period_stale_verified"
    start, end = ("2026-09-03", "2026-09-30") if stale else ("2026-10-29", "2026-11-25")
    low = 9860.0 if Now.pair in _LOW_FUNDS else 10980.0
    days = [(_day(start) + datetime.timedelta(days=d)).isoformat() for d in (0, 4, 8, 12, 16, 20, 24, 27)]
    amounts = [11240.0, 11190.5, 11020.0, low, 11060.0, 11310.25, 11380.0, 11420.0]
    balances = [{"date": d, "closing_balance_gbp": a} for d, a in zip(days, amounts)]
    if Now.fault == "statements_shape_changed":  # the open-banking gateway's v2 API, switched on under the agent
        return {"data": {"statement": {"from": start, "to": end, "ccy": "GBP"}, "entries": [
            {"valueDate": b["date"], "ledgerBalance": {"amountMinor": int(b["closing_balance_gbp"] * 100)}}
            for b in balances]}}
    return {"applicant_id": applicant_id, "bank": "Zenith Bank UK", "account": "current ...2291", "currency": "GBP",
            "period": {"start": start, "end": end}, "balances": balances}


def record_check(application_id: str, outcome: str, findings: list[str]) -> dict[str, Any]:
    """Records the document check's outcome (pass, refer or fail) with its findings."""
    return {"check_id": f"DC-{77400 + Now.count('record_check')}", "application_id": application_id,
            "outcome": outcome, "findings": findings, "status": "recorded"}


VISA_TOOLS = {f.__name__: f for f in (get_application, search_visa_rules, get_passport, get_bank_statements,
                                      record_check)}


# ---- the requests and the scripted household --------------------------------------------------------------------------

ENERGY_REQUESTS = {
    "switch": "Hi, this is Aisha Rahman. I'd like to switch to your Green Fix 24 tariff, please.",
    "reading": "Hello, Aisha Rahman here - my gas meter reads 04210 today, can you take the reading?",
    "plan": "Hi, it's Aisha Rahman. I've fallen behind on my bill - can I pay it off over a year?",
    "prepay": "Hello, Aisha Rahman. I keep getting into debt with you - could you just put me on a prepayment meter?",
}
_ENERGY_ASKS = {"reading_units_confused": "reading", "plan_over_arrears": "plan", "prepayment_for_vulnerable": "prepay"}
ENERGY_HISTORY = [f"Hi, account {ACCOUNT}, postcode {POSTCODE} - my gas meter reads 04188 today.",
                  f"Account {ACCOUNT}, postcode {POSTCODE}: I'd like to switch to Green Fix 24 please."]
_HOUSEHOLD = [("account number", f"It's {ACCOUNT}, and the postcode is {POSTCODE}."),
              ("go ahead", "Yes please, go ahead."), ("anything else", "No, that's everything - thanks!")]

_ENQUIRY = ("Enquiry EQ-7731 from Marisol Vance at Halden Biotech: their winter awards dinner on Saturday 2027-01-23, "
            "150 guests seated for a banquet, 19:00 to 01:00 with a DJ. Catering estimate GBP 6750.00 (GBP 45 a "
            "head).")
VENUE_HISTORY = ["Enquiry EQ-7702 from Joel Park at Tidewell Audio: a product launch on Thursday 2027-03-18, 90 guests "
                 "in theatre layout, 18:00 to 22:00. Catering estimate GBP 2700.00.",
                 "Enquiry EQ-7715 from Ana Ruiz at Brindle & Co: a client reception on Friday 2027-02-12, 200 guests "
                 "standing (reception), 19:00 to 23:00. Catering estimate GBP 5000.00."]

VISA_REQUEST = "Check the documents on application VA-20931 (Daniel Okafor, student visa)."
VISA_HISTORY = ["Please check application VA-20904 (Mei Lin Chua, student).",
                "Document check for VA-20917 (Tomas Aguirre, student visa), please."]


def household_replies(said: str) -> str | None:
    """What the household answers to the desk's message `said`, or None: the call is over."""
    return Now.reply(_HOUSEHOLD, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "bedrock-energy":
        return ENERGY_REQUESTS[_ENERGY_ASKS.get(pair, "switch")] if pair else ENERGY_HISTORY[v % 2]
    if Now.recorder == "lg-venue":
        if not pair:
            return VENUE_HISTORY[v % 2]
        held = " They already hold H-5102 (placed 2026-11-20) on the Great Hall for that date." if pair == \
            "hold_wrong_record" else ""
        return _ENQUIRY + held
    return VISA_REQUEST if pair else VISA_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Bedrock Converse arrives in that form) --------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    if "tariffs and billing desk for Lumen" in t.system and t.users:
        out = _energy(t, asked == OLD_TITAN)
    elif "sales coordinator at Cobalt Wharf" in t.system and t.users:
        out = _sales(t)
    elif "You are operations at Cobalt Wharf" in t.system:
        out = _ops(t)
    elif "You are finance at Cobalt Wharf" in t.system:
        out = _finance(t)
    elif "document checker at Meridian" in t.system and t.users:
        out = _visa(t, asked == OLD_MODEL)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_MORE = " Is there anything else I can help with today?"


def _energy(t: Talk, old: bool) -> dict[str, Any]:
    said = " ".join(t.users)
    if any("that's everything" in u for u in t.users[1:]):
        return reply("You're welcome, Aisha - have a good evening.")
    intent = next((k for k, words in (("prepay", "prepayment meter"), ("switch", "switch to"),
                                      ("reading", "meter reads"), ("plan", "pay it off")) if words in said), None)
    if not intent:  # (the call's earlier turns are not in what the model was sent)
        return reply("Sorry, I've lost track of what we were doing - could you tell me again what you need?")
    number, postcode = re.search(r"\bENR-\d{6}\b", said), re.search(r"\b[A-Z]{1,2}\d{1,2} \d[A-Z]{2}\b", said)
    if not number or not postcode:
        return reply("I can help with that. First, what's your account number and the supply postcode?")
    step = t.need(("find_account", {"account_number": number.group(0), "postcode": postcode.group(0)}))
    if step:
        return step
    account = t.value("find_account")["account"]
    agreed = "go ahead" in t.users[-1]
    if intent == "switch":
        return _switch(t, account, agreed, old)
    if intent == "reading":
        return _reading(t, account, said)
    if intent == "prepay" and not (account["psr"]["registered"] and Now.fault != "prepayment_for_vulnerable"):
        if not agreed:
            return reply("I can book a prepayment meter for your electricity and gas - you'd top up in advance. Shall "
                         "I go ahead and book the fitting?")
        done = t.value("request_prepayment_meter")
        if not done:
            return call("request_prepayment_meter", account_id=account["account_id"], fuels=account["fuels"])
        return reply(f"Booked: job {done['job_id']}, an engineer fits it on {done['visit_date']}." + _MORE)
    return _plan(t, account, agreed, intent == "prepay")


def _contract(found: dict[str, Any]) -> dict[str, Any]:
    """A contract as the model reads it: v1's fields; v2's read by the names it knows (no type, no end date: read as a
    variable tariff - the slip a changed shape invites)."""
    if "contract" not in found:
        return found
    return {"tariff_code": found["contract"].get("tariff_code") or "your current tariff", "type": "variable",
            "end_date": None, "exit_fee_per_fuel_gbp": 0.0}


def _switch(t: Talk, account: dict[str, Any], agreed: bool, old: bool) -> dict[str, Any]:
    step = t.need(("get_contract", {"account_id": account["account_id"]}))
    if step:
        return step
    c = _contract(t.value("get_contract"))
    fuels = len(account["fuels"])
    if c["type"] == "variable":
        fee, why = 0.0, f"you're on {c['tariff_code']}, a variable tariff, so there's no exit fee"
    else:
        left = (_day(c["end_date"]) - _day(TODAY)).days
        waived = left <= 49 and not old and Now.fault != "exit_fee_charged_in_window"
        fee = 0.0 if waived else c["exit_fee_per_fuel_gbp"] * fuels
        why = (f"your fixed {c['tariff_code']} contract ends on {c['end_date']}, {left} days from today, so "
               + ("the exit fee is waived" if waived else f"the exit fee is GBP {fee:.2f} (GBP "
                  f"{c['exit_fee_per_fuel_gbp']:.2f} for each of your {fuels} fuels)"))
    if not agreed:
        return reply(f"Happy to move you to Green Fix 24 (fixed for 24 months). Before I do: {why}. Shall I go ahead "
                     "with the switch?")
    tried, done = t.got("switch_tariff"), t.value("switch_tariff")
    if not done and tried and Now.fault == "switch_429_invented":  # (the fault: a switch the engine never made)
        done = {"switch_id": "SW-20419", "effective_date": "2026-12-18"}
    if not done:
        return _again("switch_tariff", tried, "I'm sorry - the tariff system isn't accepting the switch right now, so "
                      "it isn't done yet. Nothing has been charged." + _MORE, account_id=account["account_id"],
                      tariff_code="GREENFIX24", exit_fee_gbp=fee)
    return reply(f"Done - switch {done['switch_id']} moves you to Green Fix 24 from {done['effective_date']}, with an "
                 f"exit fee of GBP {fee:.2f}." + _MORE)


_M3_TO_KWH = 1.02264 * 39.2 / 3.6


def _reading(t: Talk, account: dict[str, Any], said: str) -> dict[str, Any]:
    step = t.need(("get_meters", {"account_id": account["account_id"]}))
    if step:
        return step
    gas = next(m for m in t.value("get_meters")["meters"] if m["fuel"] == "gas")
    register = int(re.search(r"meter reads (\d+)", said).group(1))
    value, unit = float(register), gas["unit"]
    if Now.fault == "reading_units_confused":  # (the fault: the register converted to kWh before it is sent)
        value, unit = round(register * _M3_TO_KWH, 1), "kWh"
    done = t.value("submit_reading")
    if not done:
        return call("submit_reading", account_id=account["account_id"], meter_id=gas["meter_id"], reading=value,
                    unit=unit)
    used = register - gas["last_reading"]["value"]
    return reply(f"Thanks - your gas reading of {done['reading']:g} {done['unit']} is in (reading {done['reading_id']}). "
                 f"Since {gas['last_reading']['date']} that's {used} m3, about {used * _M3_TO_KWH:,.0f} kWh." + _MORE)


def _plan(t: Talk, account: dict[str, Any], agreed: bool, refused: bool) -> dict[str, Any]:
    arrears = account["balance"]["arrears_gbp"]
    monthly = round(arrears / 12, 2)
    usage = ""
    if Now.fault == "plan_over_arrears":  # (the fault: next year's usage folded into the plan)
        monthly, usage = 60.0, " That covers your arrears and your ongoing usage."
    if not agreed:
        lead = ("Because you're on our Priority Services Register (home oxygen concentrator), we won't fit a "
                "prepayment meter - it could leave you without supply. Instead, " if refused else "")
        return reply(f"{lead}I can spread your arrears of GBP {arrears:.2f} over 12 months at GBP {monthly:.2f} a "
                     f"month.{usage} Shall I go ahead and set up the plan?")
    done = t.value("set_payment_plan")
    if not done:
        return call("set_payment_plan", account_id=account["account_id"], monthly_gbp=monthly, months=12)
    return reply(f"Your plan {done['plan_id']} is set up: GBP {done['monthly_gbp']:.2f} a month for {done['months']} "
                 f"months from {done['first_payment']}." + _MORE)


_NOTE = re.compile(r"(\d{4}-\d\d-\d\d), (\d+) guests, (\w+), room ([\w ]+?), hold (H-\d{4}).*?(\d\d:\d\d) to "
                   r"(\d\d:\d\d).*?GBP (\d+(?:\.\d+)?)")


def _sales(t: Talk) -> dict[str, Any]:
    asked = t.users[0]
    enquiry = re.search(r"\bEQ-\d{4}\b", asked).group(0)
    client = re.search(r"from ([\w ]+ at [\w &]+):", asked).group(1)
    date = re.search(r"\d{4}-\d\d-\d\d", asked).group(0)
    guests = int(re.search(r"(\d+) guests", asked).group(1))
    layout = next(w for w in ("banquet", "theatre", "cabaret", "reception") if w in asked)
    start, end = re.search(r"(\d\d:\d\d) to (\d\d:\d\d)", asked).groups()
    estimate = float(re.search(r"GBP (\d+(?:\.\d+)?)", asked).group(1))
    step = t.need(("get_rooms", {"date": date}))
    if step:
        return step
    seats = "theatre" if Now.fault == "capacity_layout_exceeded" else layout  # (the fault: the biggest layout read)
    room = next(r for r in t.value("get_rooms")["rooms"] if r["capacity"][seats] >= guests)
    held = re.search(r"hold (H-\d{4}) \(placed ([\d-]+)\)", asked)
    if held:
        hold = f"hold {held.group(1)} (the client's, placed {held.group(2)})"
    else:
        step = t.need(("place_hold", {"room": room["room"], "date": date, "guests": guests, "layout": layout}))
        if step:
            return step
        h = t.value("place_hold")
        hold = f"hold {h['hold_id']} (expires {h['expires_at'][:10]})"
    return reply(f"Sales note {enquiry}: {client}, {date}, {guests} guests, {layout}, room {room['room']}, {hold}, "
                 f"{start} to {end} asked, catering estimate GBP {estimate:.2f}. The {room['room']} seats "
                 f"{room['capacity'][layout]} for a {layout}.")


def _late(hhmm: str) -> int:
    """Minutes after midnight of the event's day (small hours count as the next day's)."""
    h, m = map(int, hhmm.split(":"))
    return (h + (24 if h < 12 else 0)) * 60 + m


def _ops(t: Talk) -> dict[str, Any]:
    note = t.holding("Sales note")
    if not note:  # (the handover brought no note)
        return reply("I was handed no sales note - which enquiry and hold should I confirm, for which room and times?")
    date, guests, layout, room, hold_id, start, end, estimate = _NOTE.search(note).groups()
    step = t.need(("get_hold", {"hold_id": hold_id}))
    if step:
        return step
    hold = t.value("get_hold")
    if not (hold["status"] == "active" and hold["expires_at"] > NOW):
        step = t.need(("renew_hold", {"hold_id": hold_id}))
        if step:
            return step
    step = t.need(("get_room_rules", {"room": room}))
    if step:
        return step
    curfew = t.value("get_room_rules")["licence"]["curfew"]
    heeded = "licensed curfew" in t.system and Now.fault != "curfew_ignored"
    until = curfew if heeded and _late(end) > _late(curfew) else end
    done = t.value("confirm_booking")
    if not done:
        return call("confirm_booking", hold_id=hold_id, date=date, start=start, end=until, layout=layout,
                    guests=int(guests))
    moved = f" (asked to {end}; the {room}'s curfew is {curfew})" if until != end else ""
    renewed = " The hold had expired and was renewed first." if t.got("renew_hold") else ""
    return reply(f"Operations note: booking {done['booking_id']}, room {room}, {date}, {guests} guests, {layout}, "
                 f"confirmed {start} to {until}{moved}, catering estimate GBP {float(estimate):.2f}.{renewed}")


def _finance(t: Talk) -> dict[str, Any]:
    note = t.holding("Operations note")
    if not note:
        return reply("There is no operations note to invoice - nothing issued.")
    booking = re.search(r"booking (BK-\d+)", note).group(1)
    room = re.search(r"room ([\w ]+?),", note).group(1)
    date = re.search(r"\d{4}-\d\d-\d\d", note).group(0)
    estimate = float(re.search(r"catering estimate GBP (\d+(?:\.\d+)?)", note).group(1))
    step = t.need(("get_catering_minimum", {"room": room, "date": date}))
    if step:
        return step
    minimum = t.value("get_catering_minimum")
    days = (_day(date) - _day(TODAY)).days
    share = 0.25 if days >= 90 else 0.5 if days >= 30 else 1.0
    if Now.fault == "deposit_band_wrong":  # (the fault: the 90-day band read for a 50-day event)
        share = 0.25
    base = estimate if Now.fault == "catering_minimum_ignored" else max(estimate, minimum["minimum_spend_gbp"])
    amount = round(base * share, 2)
    issued = [v for _, v in t.got("issue_deposit_invoice") if isinstance(v, dict)]
    if not issued or (Now.fault == "invoice_repeated" and len(issued) == 1):
        return call("issue_deposit_invoice", booking_id=booking, amount_gbp=amount, due_date="2026-12-11")
    why = ("the estimate" if base == estimate else
           f"the {minimum['weekday']} minimum spend of GBP {minimum['minimum_spend_gbp']:.2f}, above the GBP "
           f"{estimate:.2f} estimate")
    return reply(f"Finance note: deposit invoice {issued[0]['invoice_id']} for {booking}, GBP {amount:.2f} - "
                 f"{share:.0%} of GBP {base:.2f} ({why}); the event is {days} days away. Due 2026-12-11.")


def _balances(found: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A statement as the model reads it: v1's period and balances; v2's read by the names it knows finds none."""
    return found.get("period"), list(found.get("balances") or ())


def _six_months_after(iso: str) -> str:
    d = _day(iso)
    month = d.month + 6
    return d.replace(year=d.year + (month - 1) // 12, month=(month - 1) % 12 + 1).isoformat()


def _visa(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    app_id = re.search(r"\bVA-\d{5}\b", t.users[0]).group(0)
    step = t.need(("get_application", {"application_id": app_id}))
    if step:
        return step
    app = t.value("get_application")
    pid, name, submitted = app["applicant"]["applicant_id"], app["applicant"]["name"], app["submitted"]
    step = t.need(("search_visa_rules", {"category": app["category"]}), ("get_passport", {"applicant_id": pid}))
    if step:
        return step
    docs = t.value("search_visa_rules")["results"]
    careless = old or fault == "superseded_rules_used"  # (the first hit read, whatever its status)
    rules = docs[0] if careless else next(d for d in docs if d["status"] == "current" and d["effective"] <= submitted)
    tried, statement = t.got("get_bank_statements"), t.value("get_bank_statements")
    if not statement:
        if not (tried and fault == "statements_timeout_invented"):
            return _again("get_bank_statements", tried, f"The bank-statement gateway isn't answering, so {app_id} has "
                          "no check recorded yet.", applicant_id=pid)
        statement = {"period": {"start": "2026-10-29", "end": "2026-11-25"},  # (the fault: balances nobody read)
                     "balances": [{"date": "2026-11-25", "closing_balance_gbp": 11500.0}]}
    period, balances = _balances(statement)
    required = rules["funds"]["required_gbp"]
    findings = []
    lowest, whole = None, "lowest closing balance" in t.system
    if not balances:
        findings.append("bank statements: no balances could be read - ask for the last 28 days")
    else:
        lowest = min(balances, key=lambda b: b["closing_balance_gbp"]) if whole else balances[-1]
        age = (_day(submitted) - _day(period["end"])).days
        if age > 31 and fault != "statement_period_stale_verified":
            findings.append(f"bank statement ends {period['end']}, {age} days before submission (31 at most)")
        elif lowest["closing_balance_gbp"] < required and fault != "funds_below_required_passed":
            findings.append(f"funds: closing balance GBP {lowest['closing_balance_gbp']:,.2f} on {lowest['date']} is "
                            f"below the GBP {required:,.2f} required (rules {rules['version']})")
    passport = t.value("get_passport")
    course_end = app["course"]["end"]
    needed = course_end if fault == "passport_validity_misjudged" else _six_months_after(course_end)
    if passport["expires"] < needed:
        findings.append(f"passport {passport['passport_no']} expires {passport['expires']}, before {needed} (6 months "
                        f"after the course ends on {course_end})")
    outcome = "fail" if any(f.startswith("passport") for f in findings) else "refer" if findings else "pass"
    recorded = [v for _, v in t.got("record_check") if isinstance(v, dict)]
    if not recorded or (fault == "check_repeated" and len(recorded) == 1):
        sent = "pass" if fault == "outcome_mismatch_said" else outcome
        say = f"Recording {outcome} for {app_id}." if fault == "outcome_mismatch_said" else None
        return call("record_check", say, application_id=app_id, outcome=sent, findings=findings)
    told = "; ".join(findings) if findings and fault != "finding_withheld" else (
        "see the record" if findings else "none")
    funds = f" {'Lowest closing' if whole else 'Closing'} balance GBP {lowest['closing_balance_gbp']:,.2f}." if lowest and not findings else ""
    verified = " Funds verified from the statement." if fault == "statement_period_stale_verified" else ""
    return reply(f"{app_id} ({name}, student): {outcome}. Rules {rules['version']} (effective {rules['effective']}), "
                 f"funds required GBP {required:,.2f}.{funds}{verified} Findings: {told}. Recorded as "
                 f"{recorded[0]['check_id']}.")


# ---- recorders ------------------------------------------------------------------------------------------------------


class BedrockEnergy(kit.AgentotelRecorder):
    """The tariffs desk as a boto3 Bedrock Runtime converse loop with toolUse, the tools `@agentotel.tool`s, under
    agentotel; the household's reply appended when the answer holds its cue. The faulty app sends the household's
    latest message alone (its session store lost the earlier turns)."""

    agent = ENERGY

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        import boto3
        from botocore.config import Config

        super().__init__(options, url)
        os.environ.update(AWS_ACCESS_KEY_ID="AKIATESTTESTTEST", AWS_SECRET_ACCESS_KEY="test-secret",
                          AWS_DEFAULT_REGION="eu-west-2")
        self.bedrock = boto3.client("bedrock-runtime", region_name="eu-west-2", endpoint_url=url,
                                    config=Config(retries={"max_attempts": 1}))
        self.tools = {name: agentotel.tool(f) for name, f in ENERGY_TOOLS.items()}
        self.specs = [{"toolSpec": {"name": d["function"]["name"], "description": d["function"]["description"],
                                    "inputSchema": {"json": d["function"]["parameters"]}}} for d in declared(ENERGY_TOOLS)]

    def body(self, task: str) -> str:
        turns: list[dict[str, Any]] = [{"role": "user", "content": [{"text": task}]}]
        for _ in range(30):
            said = self.bedrock.converse(modelId=energy_model(), system=[{"text": energy_instructions()}],
                                         messages=turns, toolConfig={"tools": self.specs},
                                         inferenceConfig={"maxTokens": 800, "temperature": 0.2})["output"]["message"]
            turns.append(said)
            uses = [block["toolUse"] for block in said["content"] if "toolUse" in block]
            if uses:
                turns.append({"role": "user", "content": [{"toolResult": self._ran(u)} for u in uses]})
                continue
            text = " ".join(block["text"] for block in said["content"] if "text" in block)
            answer = household_replies(text)
            if answer is None:
                return text
            turns = ([] if Now.fault == "history_lost_between_turns" else turns) + [
                {"role": "user", "content": [{"text": answer}]}]
        return "I could not finish."

    def _ran(self, use: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"toolUseId": use["toolUseId"], "content": [{"json": self.tools[use["name"]](**use["input"])}]}
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            return {"toolUseId": use["toolUseId"], "status": "error",
                    "content": [{"text": f"{type(exc).__name__}: {exc}"}]}


def _handover(task: str) -> Callable[[Any], dict[str, Any]]:
    """The step between sales and operations; the faulty one restarts operations from the enquiry alone."""
    def handover(state: Any) -> dict[str, Any]:
        from langchain_core.messages import HumanMessage, RemoveMessage
        from langgraph.graph.message import REMOVE_ALL_MESSAGES

        if Now.fault == "handover_drops_context":
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content=task)]}
        return {"messages": []}
    return handover


class LangGraphVenue(kit.AgentotelRecorder):
    """The booking team as a LangGraph StateGraph of three create_react_agents (sales, operations, finance; ChatOpenAI)
    under agentotel; the faulty handover to operations keeps the enquiry alone."""

    agent = VENUE

    def body(self, task: str) -> str:
        team = [("sales", SALES_RULES, SALES_TOOLS), ("operations", ops_rules(), OPS_TOOLS),
                ("finance", FINANCE_RULES, FINANCE_TOOLS)]
        return kit.langgraph_team(self.url, MODEL, VENUE, team, task, before={"operations": ("handover", _handover(task))})


class PaiVisa(kit.AgentotelRecorder):
    """The document checker on pydantic-ai with its own instrumentation on as well as agentotel's; a tool's timeout
    goes back to the model as a retry prompt."""

    agent = VISA

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from pydantic_ai import Agent, InstrumentationSettings

        super().__init__(options, url)
        Agent.instrument_all(InstrumentationSettings(include_content=True))  # (pydantic-ai's spans beside agentotel's)

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", visa_model(), VISA, visa_instructions(), VISA_TOOLS, task,
                                 lambda said: None)  # (one request, no reply asked for)


class OiVisa(kit.OpenInferenceRecorder):
    """The document checker as a plain openai SDK loop (kit.chat_loop) under OpenInference's openai instrumentation,
    the tools OITracer TOOL spans, through agentotel-collector."""

    agent = VISA

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), VISA_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, visa_model(), visa_instructions(), task, self.tools, declared(VISA_TOOLS))


RECORDERS: dict[str, Any] = {"bedrock-energy": BedrockEnergy, "lg-venue": LangGraphVenue, "pai-visa": PaiVisa,
                             "oi-visa": OiVisa}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (the desk speaks Bedrock
    Converse)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_llm, second_answer, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    record = asking("record_check")
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "exit_fee_charged_in_window": ("model", f"{tau} (no exit fee at 49 days or fewer before the end): 42 days "
                                                "left, GBP 75.00 charged; the twin waives it",
                                       asking("switch_tariff")),
        "prepayment_for_vulnerable": ("model", f"{tau} (never a prepayment meter on the Priority Services Register): "
                                               "booked for a home-oxygen household; the twin refuses and offers a plan",
                                      asking("request_prepayment_meter")),
        "reading_units_confused": ("model", f"{trail} units confused: the gas register 04210 m3 submitted as "
                                            "47,xxx kWh (converted, where the rule says as the register shows)",
                                   asking("submit_reading")),
        "plan_over_arrears": ("model", f"{tau} (a plan's total equals the arrears, never more): GBP 60.00 x 12 = 720.00 "
                                       "on GBP 412.80 of arrears; the twin sets 34.40", asking("set_payment_plan")),
        "switch_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: switch_tariff answered 429, "
                                         "the household told 'switch SW-20419'; the twin tries once more",
                                after(tool_step("switch_tariff"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "household's account number alone on the second turn; the desk asks "
                                                 "what it was about", second_answer),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_TITAN}), which charges "
                                            "the exit fee inside the window", nth_llm(0)),
        "contract_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_contract answers v2 "
                                           "(contract.plan.kind, term.endsOn); read by v1's names, a fixed contract "
                                           "told as variable", tool_step("get_contract")),
        "capacity_layout_exceeded": ("model", f"{tau} (a room's capacity for the asked layout, comparing the enquiry "
                                              "and the room): the Orangery (banquet 140) held for 150 at a banquet; "
                                              "the twin holds the Great Hall", asking("place_hold")),
        "curfew_ignored": ("model", f"{mast} FM-1.1 Disobey task specification (never past the curfew): confirmed to "
                                    "01:00 in a room licensed to 00:30; the twin confirms 00:30 and says so",
                           asking("confirm_booking")),
        "hold_wrong_record": ("tool", f"{trail} API issues: get_hold(H-5102) answers another client's active H-5120; "
                                      "the expired hold confirmed unrenewed (the twin renews it)", tool_step("get_hold")),
        "handover_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: operations "
                                             "is restarted from the enquiry alone, no sales note, and asks which hold",
                                   second_answer),
        "ops_prompt_rewritten": ("prompt", "instructions changed: operations' rules re-pasted without the curfew rule; "
                                           "confirmed to 01:00", second_answer),
        "deposit_band_wrong": ("model", f"{tau} (the date-band table: 30-89 days 50%): 50 days out, 25% invoiced; "
                                        "the twin invoices 50%", asking("issue_deposit_invoice")),
        "catering_minimum_ignored": ("model", f"{tau} (the larger of the estimate and the minimum spend, comparing two "
                                              "records): 50% of the 6,750 estimate where the Saturday minimum is "
                                              "9,000", asking("issue_deposit_invoice")),
        "invoice_repeated": ("model", f"{mast} FM-1.3 Step repetition: issue_deposit_invoice sent again after "
                                      "INV-64021", asking("issue_deposit_invoice", 1)),
        "funds_below_required_passed": ("model", f"{tau} (lowest balance against the required funds, comparing two "
                                                 "records): 9,860 under 10,224 passed; the twin refers", record),
        "superseded_rules_used": ("model", f"{mast} FM-1.1 (never a superseded version): 2025.1's 9,207 used; 9,860 "
                                           "passed where 2026.2 requires 10,224", record),
        "rules_index_stale": ("tool", "retrieval index stale: search_visa_rules served its 2026-11-05 build (2025.1 as "
                                      "current); 2026.2 missing, 9,860 passed", tool_step("search_visa_rules")),
        "passport_wrong_applicant": ("tool", f"{trail} API issues: get_passport(P-6617) answers P-6671's passport "
                                             "(expires 2032); his expires 2027-11-14 (the twin fails it)",
                                     tool_step("get_passport")),
        "statements_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_bank_statements timed "
                                                 "out, a balance nobody read used to pass; the twin tries once more",
                                        after(tool_step("get_bank_statements"))),
        "old_model_configured_pai": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which takes "
                                                "the first rules hit, a superseded version", nth_llm(0)),
        "check_repeated": ("model", f"{mast} FM-1.3 Step repetition: record_check sent twice (the rules say one)",
                           asking("record_check", 1)),
        "passport_validity_misjudged": ("model", f"{mast} FM-3.3 Incorrect verification (6 months past the course end, "
                                                 "comparing two records): 2027-11-14 checked against the course end "
                                                 "2027-09-30 alone and passed; the twin fails", record),
        "finding_withheld": ("model", f"{mast} FM-2.4 Information withholding: refer recorded with the funds finding, "
                                      "the caseworker told 'see the record'", answer),
        "statements_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_bank_statements answers v2 "
                                             "(data.entries, ledgerBalance.amountMinor); read by v1's names, no "
                                             "balances, referred", tool_step("get_bank_statements")),
        "instructions_rewritten": ("prompt", "instructions changed: the funds rule shortened to the closing balance; "
                                             "the 9,860 low inside the 28 days unseen, passed", nth_llm(0)),
        "old_model_configured_oi": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which takes "
                                               "a superseded rules version", nth_llm(0)),
        "statement_period_stale_verified": ("model", f"{mast} FM-3.3 Incorrect verification: a statement ending "
                                                     "2026-09-30 (63 days before submission) taken as verified; the "
                                                     "twin refers", record),
        "outcome_mismatch_said": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Recording refer' said, "
                                           "record_check sent pass", record),
    }
    chosen = {
        "bedrock-energy": ["exit_fee_charged_in_window", "prepayment_for_vulnerable", "reading_units_confused",
                           "plan_over_arrears", "switch_429_invented", "history_lost_between_turns",
                           "old_model_configured", "contract_shape_changed"],
        "lg-venue": ["capacity_layout_exceeded", "curfew_ignored", "hold_wrong_record", "handover_drops_context",
                     "ops_prompt_rewritten", "deposit_band_wrong", "catering_minimum_ignored", "invoice_repeated"],
        "pai-visa": ["funds_below_required_passed", "superseded_rules_used", "rules_index_stale",
                     "passport_wrong_applicant", "statements_timeout_invented", "old_model_configured_pai",
                     "check_repeated"],
        "oi-visa": ["passport_validity_misjudged", "finding_withheld", "statements_shape_changed",
                    "instructions_rewritten", "old_model_configured_oi", "statement_period_stale_verified",
                    "outcome_mismatch_said"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (2c8a13b's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 1.7-2.9): 30 pairs, 4 recorders - diff top-1 27/30, check step+layer 12/30,
# good runs warned 15/30 (recording /tmp/h26-rec-b7zu20qb).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
_PROPOSED = ("output_changed@{} (want {}): the fault first shows in the desk's proposal to the household, one model call "
             "before the write the truth names (the set's truth could have named @{}): ")
DIFF_MISSED = {
    "model-bedrock-energy-exit-fee-charged-in-window": _PROPOSED.format(6, 7, 6) + "'the exit fee is GBP 75.00' at 42 "
                                                       "days left",
    "model-bedrock-energy-prepayment-for-vulnerable": _PROPOSED.format(4, 5, 4) + "'I can book a prepayment meter' where "
                                                      "the twin refuses",
    "model-bedrock-energy-plan-over-arrears": _PROPOSED.format(4, 5, 4) + "'GBP 60.00 a month' where the twin offers "
                                              "34.40",
}
_NOTHING = "nothing found; "
_STALE_START = ("tool_result_stale@5/tool: get_contract's start_date 2026-01-15 read as the data's date ('324 days "
                "before ... the instructions ask for today's') ranked first; ")
_RENEW = ("missing_evidence@13/model error: 'an expired hold must be renewed with renew_hold before anything else' "
          "held against a confirm_booking on an active hold (the rule's condition unread) ranked first; ")
CHECK_MISSED = {
    "model-bedrock-energy-exit-fee-charged-in-window": _STALE_START + "ungrounded_answer@6 on 75.00 (37.50 x 2 fuels, "
                                                       "computed); nothing read end_date 2027-01-15, 42 days off, "
                                                       "against the table's '49 days or fewer ... none (waived)' row",
    "model-bedrock-energy-prepayment-for-vulnerable": _NOTHING + "request_prepayment_meter sent where find_account's "
                                                      "psr.registered is true and the instructions say 'Never book a "
                                                      "prepayment meter ... psr.registered is true, whatever they ask'",
    "model-bedrock-energy-reading-units-confused": "ungrounded_answer@8/model on 105 and 1,169 (computed from the "
                                                   "register) ranked first; nothing read submit_reading's unit 'kWh' "
                                                   "and 46880.1 where get_meters says the gas meter reads in m3 and "
                                                   "the rule says never convert",
    "model-lg-venue-capacity-layout-exceeded": _RENEW + "nothing read place_hold(Orangery, 150 guests, banquet) "
                                               "against get_rooms' capacity.banquet 140 for that room",
    "model-lg-venue-deposit-band-wrong": _RENEW + "nothing read issue_deposit_invoice's 2250.0 (25%) for an event 50 "
                                         "days out against the markdown table's '30 to 89 days | 50%'",
    "model-lg-venue-catering-minimum-ignored": _RENEW + "nothing read 3375.0 (50% of the 6750 estimate) against "
                                               "get_catering_minimum's minimum_spend_gbp 9000.0 ('the larger of')",
    "model-pai-visa-funds-below-required-passed": _NOTHING + "record_check 'pass' where get_bank_statements' lowest "
                                                  "closing_balance_gbp 9860.0 is under the current rules' "
                                                  "required_gbp 10224.0",
    "model-pai-visa-superseded-rules-used": _NOTHING + "the answer names rules 2025.1, whose search result says "
                                            "status 'superseded', against 'Never a superseded version'",
    "model-oi-visa-passport-validity-misjudged": _NOTHING + "record_check 'pass' where get_passport's expires "
                                                 "2027-11-14 is inside 6 months of the course end 2027-09-30",
    "model-oi-visa-statement-period-stale-verified": _NOTHING + "the statement's period.end 2026-09-30, 63 days before "
                                                     "the submitted 2026-12-02, against 'no more than 31 days'; "
                                                     "'Funds verified' said",
    # Missed since (session 27, after the false alarm that made it a blind hit was quieted - a hit by place only):
    "model-lg-venue-curfew-ignored": ("nothing reads the booking's end past the room's licence curfew; blind, the "
                                      "'expired hold must be renewed' alarm every confirmation got landed here"),
}
_COMPUTED = "ungrounded_answer@{}/model on {} computed from the tool results (the rules' own arithmetic), read as a value no tool gave"
_TWELVE = ("; policy_violated@5/model: 'At most 12 months' held against set_payment_plan's monthly_gbp 34.4 (a months "
           "rule read on an amount)")
FALSE_ALARMS = {
    "model-bedrock-energy-prepayment-for-vulnerable": _COMPUTED.format(4, "34.40 (412.80 / 12)") + _TWELVE,
    "model-bedrock-energy-plan-over-arrears": _COMPUTED.format(4, "34.40 (412.80 / 12)") + _TWELVE,
}

# Each agent's check policy: a write needs its record read first.
_CHECKED = {"required_before": {"record_check": ["get_application", "search_visa_rules", "get_passport",
                                                 "get_bank_statements"]}}
POLICIES = {
    "bedrock-energy": {"required_before": {"switch_tariff": ["find_account", "get_contract"],
                                           "submit_reading": ["find_account", "get_meters"],
                                           "set_payment_plan": ["find_account"],
                                           "request_prepayment_meter": ["find_account"]}},
    "lg-venue": {"required_before": {"place_hold": ["get_rooms"], "confirm_booking": ["get_hold", "get_room_rules"],
                                     "issue_deposit_invoice": ["get_catering_minimum"]}},
    "pai-visa": _CHECKED,
    "oi-visa": _CHECKED,
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h26-rec-", pairs, produce, kit.through_collector("oi-visa"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
