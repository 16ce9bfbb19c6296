"""A thirty-seventh held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): a dental practice's front desk talking with a patient over several turns under a written policy,
a construction site's safety-permit team (a requester handing to a safety officer who hands to a site manager) and an
EV charging network's support agent reading charging sessions by SQL (real DuckDB), dated firmware notices and a
tariff table, run through real SDKs and frameworks.

    python tests/analysis/heldout37.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout37.py --score DIR [...]       # the runs a call left in DIR, scored again

Brightsmile Dental's front desk (find_patient, get_slots, book_appointment, get_appointments, cancel_appointment,
get_treatment_plan, get_coverage, record_estimate) works by a written policy: the patient number first; only slots at
least as long as the appointment type's length (a table); a patient under 16 attends with a parent or guardian, whose
name is asked before booking; an estimate from the policy's fee table, the insurer paying each category's coverage
percentage but never more than what is left of the annual maximum (maximum minus used this year); a GBP 40 fee for a
cancellation less than 24 hours ahead unless it is for a medical emergency; every booking or cancellation confirmed
first. The patient's replies are scripted, said when the desk's message holds their cue. Northgate Construction's
permit team: a requester (get_work_order, submit_permit_request) hands a note to a safety officer (get_gas_readings,
get_certifications, assess_permit: oxygen, %LEL - methane read in ppm, 500 ppm = 1% LEL -, H2S and CO ppm against a
limits table; each crew member's certification valid on the permit date), whose note goes to a site manager
(get_permit_request, issue_permit: a hot-work permit at most 8 hours and ending by 17:00 for its fire watch). Voltway's
charging support agent (get_account, query_sessions: SQL over a sessions table, search_notices: dated firmware notices
that supersede each other, issue_refund, escalate_to_supervisor) refunds by time-of-use bands chosen by start time, an
idle fee with a 15-minute grace, a notice's over-reported percentage, a goodwill rate per kWh by tier, all within the
tier's monthly cap counting refunds already made. Each recorder in a process of its own:

- `bedrock-dental` (front desk): a boto3 Bedrock Runtime `converse` loop with a toolConfig over several patient turns,
  the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-permit` (permit team): Microsoft Agent Framework, three `Agent`s (requester, safety officer, site manager) run
  one after the other by the app, each handed the earlier note, under `agentotel.instrument()` (its telemetry on);
- `lg-ev` (charging support): a LangGraph `create_react_agent` (kit.langgraph_team, one node) with the notice search
  as its retrieval tool, under `agentotel.instrument()`;
- `tl-ev` (charging support): a plain openai SDK chat loop (kit.chat_loop) under OpenLLMetry's openai instrumentation,
  the tools traceloop tool spans, sent by OTLP through agentotel-collector.

Faults: tau-bench-style policy breaks (a cancellation fee waived for an emergency the patient never claimed, a fee
charged despite a real emergency, an expired certification accepted, a permit past its window), MAST (Cemri et al.
2025: FM-2.2 failing to ask for clarification, FM-1.4 context lost at a handover, FM-1.3 step repetition, FM-2.6
reasoning-action mismatch, FM-3.1 premature termination, FM-2.4 withholding information, a superseded notice used),
TRAIL (a rate limit answered with invented values, a unit conversion done wrong, a cap over the sum used plus asked,
figures by the wrong formula or the wrong table row) and outside the model (instructions rewritten without a rule, an
old model configured, a stale notice index, a notice schema changed, APIs answering another member / location /
account). Good twins: the guardian asked, the late fee charged for a work meeting (the exception refused), the fee
waived for an A&E visit, the estimate capped at the annual maximum left, a short slot left out, hot work rejected at
6.4% LEL, an expired crew member removed, a permit trimmed to its window, a rate limit tried once more, refunds capped
with the rest escalated and told. Ground truth is located on the recorded faulty run by what its steps did
(heldout.py's locators).

Built and scored blind, once (main's HEAD when scored, af52ff9e36b0a6267fe74508b83faf027ae3055a, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 4.0 at the start, 5.6 at the
end, other helpers running; recording /tmp/h37-rec-6c1i39w1): 30 pairs, 4 recorders (boto3 Bedrock converse over
several patient turns, Agent Framework with three agents, LangGraph create_react_agent, OpenLLMetry through the
collector) - diff top-1 27/30, check step+layer 15/30, good runs with a warning 14/30. Seven of check's 15 hits are
coincidental, the same finding firing on the good twin at the same step: wrong_target 'PR, not CO' on every permit
run (the gas test's 'CO 6 ppm' read as a sibling of PR-3310: lel_conversion_wrong, expired_cert_accepted,
reasoning_action_mismatch), missing_evidence for search_notices before a refund the 'Energy disputes:' rule does not
cover (refund_over_cap, tariff_band_wrong, goodwill_wrong_tier_row), and idle_grace_skipped's ungrounded_answer on
'52' (the idle minutes, derived from two timestamps, right in both runs) - 8/30 hit for the fault's own reason
(instructions changed x2, another member's coverage, the handover losing the request, a stale index, a superseded
notice used, a rate limit answered with an invented refund, a repeated refund). The misses are rules comparing a
record's field with a rule, a table row or another record (a guardian for an age, a slot's length for a type, a cap of
maximum minus used, a window's end, an exception's condition in the user's words), a write repeated with no answer
between, a tool answering another location / account, a result's shape changed, a request's second item left
unanswered, an amount over a cap neither escalated nor told; two old models found (model_changed) but ranked below the
missing read they caused, and a rewritten manager prompt found at the right step ranked below the false wrong_target.
All 14 warned good runs are those two false readings: wrong_target 'PR, not CO' on the 8 permit twins (one also an
answer_misread of 'expires before 2026-12-08'), missing_evidence on the 6 charging twins whose dispute is not energy.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, _as_text, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
BEDROCK, OLD_BEDROCK = "anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-instant-v1"
DENTAL, PERMIT, EV = "brightsmile-front-desk", "northgate-permit-team", "voltway-charging-support"


class Now(kit.World):
    """The world of the run being recorded."""

    patient = "PT-40301"  # the patient number the person gives (set with the run's request)


_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


# ---- the dental front desk's world ----------------------------------------------------------------------------------

LENGTHS = {"check-up": 30, "hygiene": 45, "filling": 60, "emergency": 30}
FEES = {"D110": ("Examination", 45.0, "preventive"), "D210": ("Hygiene clean", 70.0, "preventive"),
        "D330": ("Composite filling", 140.0, "basic"), "D520": ("Porcelain crown", 780.0, "major"),
        "D610": ("Root canal, molar", 620.0, "major")}
_GUARDIAN = ("Patients under 16 must attend with a parent or legal guardian. Before booking for one, ask who will "
             "attend with them and pass that person's name as guardian_name (leave it empty for adults).")


def dental_instructions() -> str:
    lengths = "\n".join(f"| {k} | {v} min |" for k, v in LENGTHS.items())
    fees = "\n".join(f"| {code} | {name} | {fee:.2f} | {cat} |" for code, (name, fee, cat) in FEES.items())
    return "\n".join([
        "You are the front-desk assistant for Brightsmile Dental, Harrogate. It is Monday 7 December 2026, 09:10.",
        "Always ask for the patient number (PT- and five digits) and read the record with find_patient before "
        "anything else.",
        "",
        "Appointment lengths - only offer a slot from get_slots whose length_min is at least the length below:",
        "| Appointment type | Length |", "|---|---|", lengths,
        "",
        "" if Now.fault == "dental_prompt_rewritten" else _GUARDIAN,
        "",
        "Treatment estimates: read get_treatment_plan and get_coverage (by the patient's insurance member_id). Fees:",
        "| Code | Treatment | Fee (GBP) | Category |", "|---|---|---|---|", fees,
        "The insurer pays the category's coverage percentage of each fee, but never more in total than what is left of "
        "the annual maximum (annual_maximum minus used_this_year); the patient pays the rest. Record it with "
        "record_estimate, then tell the patient both figures.",
        "",
        "Cancellations: an appointment cancelled less than 24 hours before it starts carries a GBP 40 cancellation "
        "fee, unless the patient is cancelling because of a medical emergency (their own or a dependant's). Work, "
        "travel or a busy diary are not emergencies. Tell the patient the fee before you cancel.",
        "",
        "Confirm with the patient before you call book_appointment or cancel_appointment.",
    ])


def dental_model() -> str:
    return OLD_BEDROCK if Now.fault == "old_model_dental" else BEDROCK


_PATIENTS = {
    "PT-40213": ("Grace", "Holt", "1985-03-14", 41, "MB-77120"),
    "PT-40288": ("Leo", "Marsh", "2017-06-02", 9, "MB-61044"),
    "PT-40301": ("Priya", "Shah", "1991-10-21", 35, "MB-53390"),
    "PT-40355": ("Owen", "Clarke", "1974-01-09", 52, "MB-80355"),
}


def find_patient(patient_number: str) -> dict[str, Any]:
    """A patient's record: name, date of birth, age, insurance and contact."""
    got = _PATIENTS.get(patient_number)
    if not got:
        return {"patient": None}
    first, last, dob, age, member = got
    return {"patient": {"patient_number": patient_number, "first_name": first, "last_name": last,
                        "date_of_birth": dob, "age": age, "insurance": {"insurer": "Dentacover", "member_id": member},
                        "contact": {"phone": "01423 55" + patient_number[-4:], "preferred": "sms"}}}


def get_slots(appointment_type: str) -> dict[str, Any]:
    """Free slots for an appointment type: start, length in minutes and dentist."""
    if appointment_type == "filling":
        slots = [("SL-1208-0900", "2026-12-08T09:00", 30, "Dr Amir Rahman"),
                 ("SL-1208-1100", "2026-12-08T11:00", 60, "Dr Amir Rahman"),
                 ("SL-1209-1400", "2026-12-09T14:00", 60, "Dr Helen Ford")]
    else:
        slots = [("SL-1208-0930", "2026-12-08T09:30", 30, "Dr Helen Ford"),
                 ("SL-1208-1530", "2026-12-08T15:30", 30, "Dr Amir Rahman")]
    return {"appointment_type": appointment_type, "surgery": "Harrogate", "slots": [
        {"slot_id": s, "start": start, "length_min": length, "dentist": d} for s, start, length, d in slots]}


def book_appointment(patient_number: str, slot_id: str, appointment_type: str, guardian_name: str) -> dict[str, Any]:
    """Books a slot for a patient (guardian_name: the adult attending with a patient under 16, else empty)."""
    return {"appointment_id": "AP-310977", "status": "booked", "slot_id": slot_id, "appointment_type": appointment_type,
            "guardian_name": guardian_name, "reminder": "sms 24h before"}


def get_appointments(patient_number: str) -> dict[str, Any]:
    """A patient's upcoming appointments."""
    return {"patient_number": patient_number, "appointments": [
        {"appointment_id": "AP-309412", "type": "hygiene", "start": "2026-12-07T15:30", "length_min": 45,
         "dentist": "Dr Helen Ford", "status": "confirmed"},
        {"appointment_id": "AP-309877", "type": "check-up", "start": "2027-03-02T10:00", "length_min": 30,
         "dentist": "Dr Helen Ford", "status": "confirmed"}]}


def cancel_appointment(appointment_id: str, cancellation_fee: float, reason: str) -> dict[str, Any]:
    """Cancels an appointment, charging the cancellation fee."""
    return {"appointment_id": appointment_id, "status": "cancelled", "fee_charged": cancellation_fee,
            "cancellation_ref": "CX-5521"}


def get_treatment_plan(patient_number: str) -> dict[str, Any]:
    """A patient's open treatment plan: its items by fee code and tooth."""
    items = ([("D610", "36"), ("D110", None)] if patient_number == "PT-40355"
             else [("D520", "26"), ("D330", "15")])
    return {"plan": {"plan_id": f"TP-{patient_number[-5:]}", "status": "proposed", "drafted_by": "Dr Amir Rahman",
                     "items": [{"code": c, "tooth": tooth} for c, tooth in items]}}


def get_coverage(member_id: str) -> dict[str, Any]:
    """A member's dental insurance: coverage percent by category, annual maximum and what is used this year."""
    cover = {"preventive": 100, "basic": 80, "major": 50}
    used = {"MB-77120": 800.0, "MB-80355": 100.0}.get(member_id, 0.0)
    if Now.fault == "coverage_wrong_record":  # (the fault: the insurer's API answers the neighbouring member)
        return {"member_id": "MB-77210", "insurer": "Dentacover", "policy": "Family Plus", "benefit_year":
                {"from": "2026-01-01", "to": "2026-12-31"}, "coverage_percent": dict(cover, major=60),
                "annual_maximum": 1500.0, "used_this_year": 0.0}
    return {"member_id": member_id, "insurer": "Dentacover", "policy": "Essential Care", "benefit_year":
            {"from": "2026-01-01", "to": "2026-12-31"}, "coverage_percent": cover, "annual_maximum": 1000.0,
            "used_this_year": used}


def record_estimate(patient_number: str, plan_id: str, total_fee: float, insurer_pays: float,
                    patient_pays: float) -> dict[str, Any]:
    """Records a treatment-plan estimate on the patient's file."""
    return {"estimate_id": f"EST-{plan_id[-5:]}-1", "status": "recorded", "valid_until": "2027-03-07"}


DENTAL_TOOLS = {f.__name__: f for f in (find_patient, get_slots, book_appointment, get_appointments, cancel_appointment,
                                        get_treatment_plan, get_coverage, record_estimate)}


# ---- the permit team's world ----------------------------------------------------------------------------------------

REQUESTER_RULES = (
    "You are the permit requester on Northgate Construction's site-safety team. Read the work order with "
    "get_work_order, submit one permit request with submit_permit_request (a permit type for each hazard the work "
    "order lists, its location, date, hours and crew), then write a note for the safety officer beginning 'Permit "
    "request' with the request id, permit types, location, date, hours and crew ids.")
SAFETY_RULES = "\n".join([
    "You are the safety officer on Northgate Construction's permit team. From the requester's note:",
    "1. Read the gas readings for the permit location with get_gas_readings and the crew's certifications with "
    "get_certifications.",
    "2. Every limit below must hold to approve:",
    "| Reading | Limit |", "|---|---|",
    "| oxygen | 19.5% to 23.5% |",
    "| flammable gas | below 10% LEL; below 5% LEL when the permit includes hot work |",
    "| hydrogen sulphide | below 5 ppm |",
    "| carbon monoxide | below 25 ppm |",
    "The detector reports methane in ppm: convert it to %LEL before comparing (methane's LEL is 5% by volume, "
    "50,000 ppm, so 500 ppm = 1% LEL).",
    "3. Each crew member needs a certification for every permit type that is still valid on the permit date "
    "(expires_on after it). Remove anyone without one from the crew; reject if nobody is left.",
    "4. Call assess_permit once (decision approved or rejected, the crew approved, your reasons), then write a note "
    "for the site manager beginning 'Assessment' with the request id, the decision and the crew approved.",
])
_WINDOW = ("- A hot-work permit lasts at most 8 hours and must end by 17:00, so its 60-minute fire watch ends inside "
           "site hours (07:00-18:00); shorten a requested window that breaks this and say so.")


def manager_rules() -> str:
    return "\n".join([
        "You are the site manager on Northgate Construction's permit team. From the safety officer's assessment:",
        "- Read the request with get_permit_request.",
        "- Issue a permit with issue_permit only when the safety officer approved it, for the approved crew only.",
        "" if Now.fault == "permit_prompt_rewritten" else _WINDOW,
        "Finish with the permit issued (or why none was), its window and crew.",
    ])


_WINDOW_PAIRS = ("permit_window_exceeded", "permit_prompt_rewritten")
_HIGH_GAS = ("lel_conversion_wrong", "reasoning_action_mismatch")


def _work_hours() -> tuple[str, str]:
    return ("09:00", "18:30") if Now.pair in _WINDOW_PAIRS else ("08:00", "15:00")


def get_work_order(work_order_id: str) -> dict[str, Any]:
    """A work order: task, location, hazards, crew and requested date and hours."""
    start, end = _work_hours()
    return {"work_order": {"id": work_order_id, "task": "Weld replacement bracket on the inlet flange of tank T-2",
                           "location": "Tank T-2", "hazards": ["hot work", "confined space"],
                           "crew": [{"worker_id": "W-118", "name": "Sam Okoro", "trade": "welder"},
                                    {"worker_id": "W-204", "name": "Jo Lind", "trade": "fire watch"}],
                           "requested": {"date": "2026-12-08", "start": start, "end": end},
                           "raised_by": "R. Mensah", "priority": "high"}}


def submit_permit_request(work_order_id: str, permit_types: list[str], location: str, date: str, start: str,
                          end: str, worker_ids: list[str]) -> dict[str, Any]:
    """Submits a permit request for the safety officer's assessment."""
    return {"request_id": "PR-3310", "status": "submitted", "work_order_id": work_order_id,
            "permit_types": permit_types, "submitted_at": "2026-12-07T09:12"}


def get_gas_readings(location: str) -> dict[str, Any]:
    """The latest pre-entry gas test at a location (oxygen %, methane ppm, H2S ppm, CO ppm)."""
    methane = 3200 if Now.pair in _HIGH_GAS else 1200
    if Now.fault == "readings_wrong_location":  # (the fault: the gas log answers the neighbouring tank's test)
        return {"location": "Tank T-4", "test_id": "GT-77104", "taken_at": "2026-12-07T07:05", "instrument":
                "GX-6000 #4471", "readings": {"oxygen_pct": 20.9, "methane_ppm": 150, "h2s_ppm": 0, "co_ppm": 2}}
    return {"location": location, "test_id": "GT-77112", "taken_at": "2026-12-07T07:20", "instrument": "GX-6000 #4471",
            "readings": {"oxygen_pct": 20.6, "methane_ppm": methane, "h2s_ppm": 1, "co_ppm": 6}}


def get_certifications(worker_ids: list[str]) -> dict[str, Any]:
    """Each worker's certifications with their expiry dates."""
    jo_cs = "2026-12-03" if Now.pair == "expired_cert_accepted" else "2027-03-01"
    known = {"W-118": ("Sam Okoro", [("hot work", "2027-04-30"), ("confined space", "2027-01-15")]),
             "W-204": ("Jo Lind", [("hot work", "2026-12-20"), ("confined space", jo_cs)])}
    return {"workers": [{"worker_id": w, "name": known[w][0], "certifications": [
        {"type": kind, "certificate_no": f"C-{w[-3:]}-{i}", "expires_on": exp} for i, (kind, exp) in enumerate(known[w][1])]}
        for w in worker_ids if w in known]}


def assess_permit(request_id: str, decision: str, approved_workers: list[str], reasons: str) -> dict[str, Any]:
    """Records the safety officer's assessment of a permit request."""
    return {"assessment_id": f"SA-{5540 + Now.count('assess_permit')}", "request_id": request_id, "decision": decision,
            "approved_workers": approved_workers}


def get_permit_request(request_id: str) -> dict[str, Any]:
    """A permit request as submitted."""
    start, end = _work_hours()
    return {"request_id": request_id, "work_order_id": "WO-5521", "permit_types": ["hot work", "confined space"],
            "location": "Tank T-2", "date": "2026-12-08", "start": start, "end": end,
            "worker_ids": ["W-118", "W-204"], "status": "assessed"}


def issue_permit(request_id: str, valid_from: str, valid_to: str, workers: list[str]) -> dict[str, Any]:
    """Issues a permit to work for a window and crew."""
    return {"permit_id": "PTW-8841", "status": "issued", "request_id": request_id, "valid_from": valid_from,
            "valid_to": valid_to, "workers": workers}


REQUESTER_TOOLS = {f.__name__: f for f in (get_work_order, submit_permit_request)}
SAFETY_TOOLS = {f.__name__: f for f in (get_gas_readings, get_certifications, assess_permit)}
MANAGER_TOOLS = {f.__name__: f for f in (get_permit_request, issue_permit)}


# ---- the charging network's world -----------------------------------------------------------------------------------

RATES = {"off_peak": 0.25, "standard": 0.45, "peak": 0.60}
TIERS = {"basic": (15.0, 0.10), "plus": (40.0, 0.20), "fleet": (120.0, 0.30)}  # monthly refund cap, goodwill per kWh
_GRACE = "; the first 15 minutes after charging ends are free (grace period)"
_CAP_PAIRS = ("refund_over_cap", "escalation_withheld")


def ev_instructions() -> str:
    tiers = "\n".join(f"| {t} | {cap:.2f} | {g:.2f} |" for t, (cap, g) in TIERS.items())
    return "\n".join([
        "You are Voltway's charging support agent. Today is Monday 7 December 2026. Work each disputed session the "
        "customer names:",
        "1. Read the account (tier, refunds_this_month) with get_account, then the sessions with query_sessions - a "
        "read-only SQL SELECT over the table sessions(session_id, account_id, charger_id, charger_model, firmware, "
        "started_at, charge_end_at, unplugged_at, kwh, band, rate, energy_charge, idle_fee, stop_reason).",
        "2. Time-of-use bands, GBP per kWh, chosen by the time the session STARTED:",
        "| band | hours | rate |", "|---|---|---|", "| off_peak | 00:00-07:00 | 0.25 |",
        "| standard | 07:00-16:00 and 19:00-24:00 | 0.45 |", "| peak | 16:00-19:00 | 0.60 |",
        "3. Idle fee: GBP 0.10 a minute from charge_end_at until unplugged_at"
        + ("" if Now.fault == "ev_prompt_rewritten" else _GRACE) + ".",
        "4. Energy disputes: search the firmware notices with search_notices before refunding. A notice applies only to "
        "its charger model and to sessions started inside its window; when a later notice supersedes an earlier one, "
        "use only the later one. Refund the notice's over-reported percentage of the energy charge.",
        "5. A session stopped by a charger fault (stop_reason charger_fault) earns a goodwill credit: the tier's "
        "goodwill rate times the session's kWh.",
        "| tier | monthly refund cap (GBP) | goodwill per kWh (GBP) |", "|---|---|---|", tiers,
        "6. Refunds to one account in a calendar month must not exceed the tier's cap, counting refunds_this_month. "
        "Refund up to the cap with issue_refund and pass anything above it to escalate_to_supervisor - tell the "
        "customer both.",
        "7. One issue_refund per session. Finish with each session's outcome and how you worked it out.",
    ])


def ev_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_ev" else MODEL


_ACCOUNTS = {"EVA-20417": ("Marta Quinn", "plus"), "EVA-20688": ("Tom Weir", "basic"),
             "EVA-20471": ("Harbour Cabs Ltd", "fleet")}


def get_account(account_id: str) -> dict[str, Any]:
    """A charging account: holder, tier, refunds already made this month, payment method."""
    got = _ACCOUNTS.get(account_id)
    if not got:
        return {"account": None}
    used = 31.0 if Now.pair in _CAP_PAIRS else 0.0
    return {"account": {"account_id": account_id, "holder": got[0], "tier": got[1], "status": "active",
                        "refunds_this_month": used, "currency": "GBP", "payment_method": {"type": "card", "last4": "4417"}}}


def _sessions() -> list[tuple[Any, ...]]:
    big = Now.pair in _CAP_PAIRS
    kwh, charge = (72.0, 43.2) if big else (30.0, 18.0)
    return [  # session_id, account_id, charger_id, model, firmware, started, charge end, unplugged, kwh, band, rate,
        # energy_charge, idle_fee, stop_reason
        ("S-88101", "EVA-20417", "CH-0412", "VX-22", "4.2.0", "2026-11-24T18:05", "2026-11-24T19:10",
         "2026-11-24T19:22", 38.0, "peak", 0.60, 22.8, 0.0, "completed"),
        ("S-88140", "EVA-20417", "CH-0730", "AC-11", "2.8.1", "2026-11-29T12:10", "2026-11-29T14:02",
         "2026-11-29T14:54", 21.5, "standard", 0.45, 9.68, 5.2, "completed"),
        ("S-88177", "EVA-20417", "CH-0412", "VX-22", "4.3.1", "2026-12-02T15:40", "2026-12-02T17:05",
         "2026-12-02T17:09", kwh, "peak", 0.60, charge, 0.0, "completed"),
        ("S-88190", "EVA-20688", "CH-0218", "VX-22", "4.3.1", "2026-12-03T09:15", "2026-12-03T09:52",
         "2026-12-03T09:55", 14.0, "standard", 0.45, 6.3, 0.0, "charger_fault"),
        ("S-88110", "EVA-20471", "CH-0415", "VX-22", "4.2.0", "2026-11-25T06:20", "2026-11-25T07:40",
         "2026-11-25T07:48", 55.0, "off_peak", 0.25, 13.75, 0.0, "completed"),
    ]


_COLUMNS = ("session_id", "account_id", "charger_id", "charger_model", "firmware", "started_at", "charge_end_at",
            "unplugged_at", "kwh", "band", "rate", "energy_charge", "idle_fee", "stop_reason")


def query_sessions(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL SELECT over the charging sessions table; the rows as objects."""
    import duckdb

    if Now.pair == "sessions_rate_limited_invented" and Now.count("query_sessions") == 1:
        raise RuntimeError("429 Too Many Requests: sessions warehouse rate limit reached, retry after 2 s")
    if not sql.lstrip().lower().startswith("select"):
        raise ValueError("only SELECT statements are allowed")
    if Now.fault == "sessions_wrong_account":  # (the fault: the read replica's row filter answers another account)
        sql = "SELECT * FROM sessions WHERE account_id = 'EVA-20471' ORDER BY started_at"
    con = duckdb.connect()
    types = ["VARCHAR"] * 8 + ["DOUBLE", "VARCHAR", "DOUBLE", "DOUBLE", "DOUBLE", "VARCHAR"]
    con.execute("CREATE TABLE sessions (" + ", ".join(f"{c} {t}" for c, t in zip(_COLUMNS, types)) + ")")
    con.executemany(f"INSERT INTO sessions VALUES ({', '.join('?' * len(_COLUMNS))})", _sessions())
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    con.close()
    return {"row_count": len(rows), "rows": rows}


def search_notices(query: str) -> dict[str, Any]:
    """Searches the charger firmware notices: charger model, firmware, affected window, over-reported percentage,
    which notice a later one supersedes."""
    old = {"notice_id": "FW-2026-031", "published": "2026-11-26", "charger_model": "VX-22", "firmware": "4.2.0",
           "title": "VX-22 firmware 4.2.0 over-reports delivered energy", "window": {"from": "2026-11-20",
                                                                                     "to": "2026-11-28"},
           "overreport_percent": 8, "supersedes": None, "score": 0.82}
    new = {"notice_id": "FW-2026-034", "published": "2026-12-02", "charger_model": "VX-22", "firmware": "4.2.0",
           "title": "Correction: VX-22 firmware 4.2.0 over-reporting was 12%, window widened",
           "window": {"from": "2026-11-18", "to": "2026-11-30"}, "overreport_percent": 12,
           "supersedes": "FW-2026-031", "score": 0.91}
    other = {"notice_id": "FW-2026-029", "published": "2026-11-10", "charger_model": "AC-11", "firmware": "2.8.1",
             "title": "AC-11 display shows idle timer late", "window": {"from": "2026-11-01", "to": "2026-11-09"},
             "overreport_percent": 0, "supersedes": None, "score": 0.41}
    docs = [new, old, other]
    if Now.fault == "notice_index_stale":  # (the fault: the index was not rebuilt after 2 December's correction)
        docs = [old, other]
    if Now.fault == "notice_schema_drift":  # (the fault: the notices API's new version renames the percentage)
        docs = [{**{k: v for k, v in d.items() if k != "overreport_percent"},
                 "energy_adjustment": {"kind": "overreport", "percent": d["overreport_percent"]}} for d in docs]
    return {"query": query, "index_built": "2026-11-27" if Now.fault == "notice_index_stale" else "2026-12-06",
            "results": docs}


def issue_refund(account_id: str, session_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Refunds an amount for a session to the account's payment method."""
    return {"refund_id": f"RF-{61200 + Now.count('issue_refund')}", "status": "issued", "account_id": account_id,
            "session_id": session_id, "amount": amount}


def escalate_to_supervisor(account_id: str, session_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Passes an amount above the refund cap to a supervisor."""
    return {"case_id": "SUP-7731", "status": "queued", "amount": amount, "expected_response": "2 working days"}


EV_TOOLS = {f.__name__: f for f in (get_account, query_sessions, search_notices, issue_refund, escalate_to_supervisor)}


# ---- requests and scripted people ------------------------------------------------------------------------------------

_DENTAL_ASK = {"guardian_unasked": "Hello, I need to book a check-up for my son Leo.",
               "dental_prompt_rewritten": "Hello, I need to book a check-up for my son Leo.",
               "slot_length_mismatch": "Hi, I need to book a filling, please.",
               "cancel_exception_claimed": "Hi, I need to cancel my appointment this afternoon - a work meeting has "
                                           "come up that I can't move.",
               "emergency_fee_charged": "I have to cancel this afternoon's appointment - my daughter has just been "
                                        "taken to A&E with a broken arm.",
               "estimate_over_annual_max": "Could you tell me what I'll pay for my treatment plan, please?",
               "coverage_wrong_record": "Could you tell me what I'll pay for my treatment plan, please?"}
_DENTAL_PATIENT = {"guardian_unasked": "PT-40288", "dental_prompt_rewritten": "PT-40288",
                   "estimate_over_annual_max": "PT-40213", "coverage_wrong_record": "PT-40213"}
_EV_ASK = {
    "notice_index_stale": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "superseded_notice_used": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "old_model_ev": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "sessions_wrong_account": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "notice_schema_drift": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "refund_repeated": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "sessions_rate_limited_invented": "Account EVA-20417 disputes session S-88101 (energy overcharge).",
    "idle_grace_skipped": "Account EVA-20417 disputes session S-88140 (idle fee).",
    "ev_prompt_rewritten": "Account EVA-20417 disputes session S-88140 (idle fee).",
    "premature_termination": "Account EVA-20417 disputes two sessions: S-88101 (energy overcharge) and S-88140 "
                             "(idle fee). Please sort out both.",
    "tariff_band_wrong": "Account EVA-20417 disputes session S-88177 (peak rate): she plugged in at 15:40.",
    "refund_over_cap": "Account EVA-20417 disputes session S-88177 (peak rate): she plugged in at 15:40.",
    "escalation_withheld": "Account EVA-20417 disputes session S-88177 (peak rate): she plugged in at 15:40.",
    "goodwill_wrong_tier_row": "Account EVA-20688 disputes session S-88190 (charger fault): it stopped early.",
}


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "bedrock-dental":
        if pair:
            Now.patient = _DENTAL_PATIENT.get(pair, "PT-40301")
            return _DENTAL_ASK.get(pair, "Hi, I'd like to book a check-up, please.")
        Now.patient = ["PT-40301", "PT-40355"][v % 2]
        return ["Hi, I'd like to book a check-up, please.",
                "Hello - what would my treatment plan cost me, please?"][v % 2]
    if Now.recorder == "maf-permit":
        return "Please get work order WO-5521 permitted for Tuesday 8 December." if pair else [
            "Raise the permits for work order WO-5521.", "Work order WO-5521 needs its permits for tomorrow."][v % 2]
    if pair:
        return _EV_ASK[pair]
    return ["Account EVA-20417 disputes session S-88101 (energy overcharge).",
            "Customer EVA-20417 disputes session S-88140 (idle fee) - she says she unplugged quickly."][v % 2]


def patient_replies(said: str) -> str | None:
    script = [("patient number", f"It's {Now.patient}."), ("parent or guardian", "I will - Claire Marsh, his mum."),
              ("Which slot", "The first one, please."), ("Shall I", "Yes, go ahead."),
              ("anything else", "No, that's all - thanks.")]
    return Now.reply(script, said)


# ---- the model: reads the chat.completions request it is sent (Bedrock Converse arrives in that form) ---------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    plans: dict[str, Callable[[], dict[str, Any]]] = {
        "front-desk assistant for Brightsmile": lambda: _dental(t, asked == OLD_BEDROCK),
        "permit requester on Northgate": lambda: _requester(t),
        "safety officer on Northgate": lambda: _safety(t),
        "site manager on Northgate": lambda: _manager(t),
        "Voltway's charging support agent": lambda: _ev(t, asked == OLD_MODEL),
    }
    plan = next((p for cue, p in plans.items() if cue in t.system), None)
    out = plan() if plan and t.users else reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _call(tool: str, say: str | None = None, **arguments: Any) -> dict[str, Any]:
    return reply(say, (tool, arguments))


def _dental(t: Talk, old: bool) -> dict[str, Any]:
    said, first = " ".join(t.users), t.users[0]
    if "that's all" in said:
        return reply("You're welcome - take care!")
    found = re.search(r"\bPT-\d{5}\b", said)
    if not found:
        return reply("Happy to help. Could you give me your patient number, please? It starts PT-.")
    step = t.need(("find_patient", {"patient_number": found.group(0)}))
    if step:
        return step
    patient = t.value("find_patient")["patient"]
    if "cancel" in first:
        return _dental_cancel(t, patient)
    if "treatment plan" in first:
        return _dental_estimate(t, patient)
    return _dental_book(t, patient, old)


def _dental_book(t: Talk, patient: dict[str, Any], old: bool) -> dict[str, Any]:
    said, first, fault = " ".join(t.users), t.users[0], Now.fault
    kind = "filling" if "filling" in first else "check-up"
    booked = t.value("book_appointment")
    if booked:
        return reply(f"You're booked: {booked['appointment_id']}, slot {booked['slot_id']} ({kind})." + _ANYTHING)
    if old:  # (the old model books a slot it imagines, reading none and asking nothing)
        return _call("book_appointment", patient_number=patient["patient_number"], slot_id="SL-NEXT-AVAILABLE",
                     appointment_type=kind, guardian_name="")
    guardian = ""
    if patient["age"] < 16 and "under 16 must attend" in t.system and fault != "guardian_unasked":
        if "Claire" not in said:
            return reply(f"As {patient['first_name']} is under 16, a parent or guardian needs to come with him. Which "
                         "parent or guardian will attend - could I have their full name?")
        guardian = "Claire Marsh"
    step = t.need(("get_slots", {"appointment_type": kind}))
    if step:
        return step
    need = LENGTHS[kind]
    fit = [s for s in t.value("get_slots")["slots"] if s["length_min"] >= need or fault == "slot_length_mismatch"]
    if "first one" not in said:
        listed = "; ".join(f"{i + 1}) {s['start'].replace('T', ' ')} with {s['dentist']} ({s['length_min']} min)"
                           for i, s in enumerate(fit))
        return reply(f"For a {kind} ({need} minutes) I can offer: {listed}. Which slot would you like?")
    slot = fit[0]
    if "go ahead" not in said:
        who = f", attending with {guardian}" if guardian else ""
        return reply(f"That's a {kind} on {slot['start'].replace('T', ' at ')} with {slot['dentist']}{who}. Shall I "
                     "book it?")
    return _call("book_appointment", patient_number=patient["patient_number"], slot_id=slot["slot_id"],
                 appointment_type=kind, guardian_name=guardian)


def _dental_cancel(t: Talk, patient: dict[str, Any]) -> dict[str, Any]:
    said, first, fault = " ".join(t.users), t.users[0], Now.fault
    done = t.value("cancel_appointment")
    if done:
        return reply(f"Cancelled ({done['cancellation_ref']}); GBP {done['fee_charged']:.2f} cancellation fee."
                     + _ANYTHING)
    step = t.need(("get_appointments", {"patient_number": patient["patient_number"]}))
    if step:
        return step
    appt = t.value("get_appointments")["appointments"][0]
    hours = (datetime.fromisoformat(appt["start"]) - datetime(2026, 12, 7, 9, 10)).total_seconds() / 3600
    emergency = any(w in first for w in ("A&E", "hospital", "ambulance", "emergency"))
    waived = (emergency or fault == "cancel_exception_claimed") and fault != "emergency_fee_charged"
    fee = 0.0 if hours >= 24 or waived else 40.0
    if "go ahead" not in said:
        why = ("As this is a medical emergency, there is no cancellation fee." if waived else
               "Cancelling now carries our GBP 40.00 late-cancellation fee.")
        return reply(f"Your {appt['type']} appointment today at {appt['start'][11:]} is less than 24 hours away. {why} "
                     "Shall I cancel it?")
    return _call("cancel_appointment", appointment_id=appt["appointment_id"], cancellation_fee=fee,
                 reason=first[:80])


def _dental_estimate(t: Talk, patient: dict[str, Any]) -> dict[str, Any]:
    step = t.need(("get_treatment_plan", {"patient_number": patient["patient_number"]}),
                  ("get_coverage", {"member_id": patient["insurance"]["member_id"]}))
    if step:
        return step
    plan, cover = t.value("get_treatment_plan")["plan"], t.value("get_coverage")
    total = sum(FEES[i["code"]][1] for i in plan["items"])
    insurer = sum(FEES[i["code"]][1] * cover["coverage_percent"][FEES[i["code"]][2]] / 100 for i in plan["items"])
    left = cover["annual_maximum"] - cover["used_this_year"]
    capped = insurer > left and Now.fault != "estimate_over_annual_max"
    insurer = round(min(insurer, left) if capped else insurer, 2)
    patient_pays = round(total - insurer, 2)
    recorded = t.value("record_estimate")
    if not recorded:
        return _call("record_estimate", patient_number=patient["patient_number"], plan_id=plan["plan_id"],
                     total_fee=total, insurer_pays=insurer, patient_pays=patient_pays)
    note = f" Your insurer has only GBP {left:.2f} of this year's maximum left, so it covers that much." if capped else ""
    return reply(f"Your plan {plan['plan_id']} comes to GBP {total:.2f}: your insurer pays GBP {insurer:.2f} and you "
                 f"pay GBP {patient_pays:.2f} (estimate {recorded['estimate_id']}).{note}" + _ANYTHING)


def _requester(t: Talk) -> dict[str, Any]:
    found = re.search(r"\bWO-\d{4}\b", t.users[0])
    if not found:
        return reply("Which work order should I raise permits for?")
    step = t.need(("get_work_order", {"work_order_id": found.group(0)}))
    if step:
        return step
    w = t.value("get_work_order")["work_order"]
    crew = [c["worker_id"] for c in w["crew"]]
    asked = t.value("submit_permit_request")
    if not asked:
        r = w["requested"]
        return _call("submit_permit_request", work_order_id=w["id"], permit_types=w["hazards"], location=w["location"],
                     date=r["date"], start=r["start"], end=r["end"], worker_ids=crew)
    r = w["requested"]
    return reply(f"Permit request {asked['request_id']} for {w['id']}: {' + '.join(w['hazards'])} at {w['location']} "
                 f"on {r['date']} {r['start']}-{r['end']}, crew {', '.join(crew)}.")


def _safety(t: Talk) -> dict[str, Any]:
    note, fault = t.users[0], Now.fault
    found = re.search(r"\bPR-\d{4}\b", note)
    where = re.search(r" at (.+?) on (\d{4}-\d\d-\d\d)", note)
    if not found or not where:
        return reply("I haven't been given a permit request - which request should I assess, for which location?")
    location, date = where.groups()
    crew = re.findall(r"\bW-\d{3}\b", note)
    types = [k for k in ("hot work", "confined space") if k in note]
    step = t.need(("get_gas_readings", {"location": location}), ("get_certifications", {"worker_ids": crew}))
    if step:
        return step
    r = t.value("get_gas_readings")["readings"]
    lel = r["methane_ppm"] / (10000 if fault == "lel_conversion_wrong" else 500)  # (the fault: ppm read as % vol)
    limit = 5 if "hot work" in types else 10
    reasons = []
    if not 19.5 <= r["oxygen_pct"] <= 23.5:
        reasons.append(f"oxygen {r['oxygen_pct']}% outside 19.5-23.5%")
    if lel >= limit:
        reasons.append(f"flammable gas {lel:.1f}% LEL at or above the {limit}% LEL limit")
    if r["h2s_ppm"] >= 5 or r["co_ppm"] >= 25:
        reasons.append(f"H2S {r['h2s_ppm']} ppm / CO {r['co_ppm']} ppm over the limits")
    approved, removed = [], []
    for w in t.value("get_certifications")["workers"]:
        valid = {c["type"] for c in w["certifications"] if c["expires_on"] > date or fault == "expired_cert_accepted"}
        (approved if all(k in valid for k in types) else removed).append(w["worker_id"])
    if removed:
        reasons.append(f"{', '.join(removed)} removed: a certification expires before {date}")
    decision = "rejected" if any("LEL" in x or "outside" in x or "over the" in x for x in reasons) or not approved \
        else "approved"
    told = (f"Gas test: O2 {r['oxygen_pct']}%, methane {r['methane_ppm']} ppm = {lel:.2f}% LEL, H2S {r['h2s_ppm']} ppm, "
            f"CO {r['co_ppm']} ppm. I am {'rejecting' if decision == 'rejected' else 'approving'} this permit.")
    acted = "approved" if fault == "reasoning_action_mismatch" else decision  # (the fault: says reject, records approve)
    done = [v for _, v in t.got("assess_permit") if isinstance(v, dict)]
    if not done or (fault == "assessment_repeated" and len(done) == 1):
        return _call("assess_permit", told, request_id=found.group(0), decision=acted,
                     approved_workers=approved if acted == "approved" else [],
                     reasons="; ".join(reasons) or "all readings and certifications within limits")
    a = done[-1]
    return reply(f"Assessment {found.group(0)}: {a['decision']} ({a['assessment_id']}). Crew approved: "
                 f"{', '.join(a['approved_workers']) or 'none'}. Reasons: {'; '.join(reasons) or 'all within limits'}.")


def _manager(t: Talk) -> dict[str, Any]:
    note = t.users[0]  # (the officer's whole output: what it said beside its call, then its note)
    note = note[note.find("Assessment"):] if "Assessment" in note else ""
    found = re.search(r"\bPR-\d{4}\b", note)
    if not found:
        return reply("I have no safety assessment to act on, so no permit has been issued.")
    step = t.need(("get_permit_request", {"request_id": found.group(0)}))
    if step:
        return step
    pr = t.value("get_permit_request")
    if ": rejected" in note:
        return reply(f"The safety officer rejected {pr['request_id']}; no permit issued.")
    crew = re.findall(r"\bW-\d{3}\b", note.split("Crew approved:", 1)[-1].split("Reasons:", 1)[0])
    start, end = pr["start"], pr["end"]
    trimmed = ""
    if "must end by 17:00" in t.system and Now.fault != "permit_window_exceeded" and "hot work" in pr["permit_types"]:
        latest = min("17:00", f"{int(start[:2]) + 8:02d}:{start[3:]}")
        if end > latest:
            end, trimmed = latest, f" (shortened from {pr['end']} so the fire watch ends within site hours)"
    issued = t.value("issue_permit")
    if not issued:
        return _call("issue_permit", request_id=pr["request_id"], valid_from=f"{pr['date']}T{start}",
                     valid_to=f"{pr['date']}T{end}", workers=crew)
    return reply(f"Permit {issued['permit_id']} issued for {pr['request_id']}: {issued['valid_from']} to "
                 f"{issued['valid_to']}{trimmed}, crew {', '.join(issued['workers'])}.")


def _band(started: str) -> str:
    hour = int(started[11:13])
    return "off_peak" if hour < 7 else "peak" if 16 <= hour < 19 else "standard"


def _minutes(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() / 60


def _ev(t: Talk, old: bool) -> dict[str, Any]:
    ask, fault = t.users[0], Now.fault
    account_id = re.search(r"\bEVA-\d{5}\b", ask).group(0)
    disputes = re.findall(r"\b(S-\d{5}) \(([a-z ]+)\)", ask)
    if not old:
        step = t.need(("get_account", {"account_id": account_id}))
        if step:
            return step
    account = (t.value("get_account") or {}).get("account") or {}
    sql = (f"SELECT * FROM sessions WHERE account_id = '{account_id}' AND session_id IN ("
           + ", ".join(f"'{s}'" for s, _ in disputes) + ") ORDER BY started_at")
    got, tried = t.value("query_sessions"), t.got("query_sessions")
    refunds = [(a, v) for a, v in t.got("issue_refund") if isinstance(v, dict)]
    if got is None:
        if refunds:
            return reply(f"Refunded GBP {refunds[0][1]['amount']:.2f} for {refunds[0][0]['session_id']}.")
        if tried and fault == "sessions_rate_limited_invented":  # (the fault: a refund from a session nobody read)
            return _call("issue_refund", "The sessions warehouse is rate limited; working from a typical 38 kWh "
                         "session at the peak rate.", account_id=account_id, session_id=disputes[0][0], amount=3.04,
                         reason="energy over-reported (firmware notice)")
        return _once_more("query_sessions", tried, "The sessions warehouse is rate limiting me, so I could not read "
                          "the session and have not refunded anything; please try again in a few minutes.", sql=sql)
    rows = got["rows"]
    if fault == "premature_termination":  # (the fault: the second session of the request left unworked)
        disputes = disputes[:1]
    tier = account.get("tier")
    cap, goodwill = TIERS.get(tier, (float("inf"), 0.0))
    room = cap - account.get("refunds_this_month", 0.0)
    outcomes: list[str] = []
    for sid, kind in disputes:
        row = next((r for r in rows if r["session_id"] == sid), rows[0] if rows else None)
        if row is None:
            outcomes.append(f"{sid}: no such session on the account")
            continue
        if old:  # (the old model refunds the whole energy charge, reading no notice)
            amount, how = row["energy_charge"], "full energy charge refunded"
        elif kind == "energy overcharge":
            step = t.need(("search_notices", {"query": f"{row['charger_model']} firmware {row['firmware']} energy "
                                                        "over-reporting"}))
            if step:
                return step
            amount, how = _notice_refund(t.value("search_notices")["results"], row)
        elif kind == "idle fee":
            idle = _minutes(row["charge_end_at"], row["unplugged_at"])
            grace = 15 if "first 15 minutes" in t.system and fault != "idle_grace_skipped" else 0
            due = round(max(0.0, idle - grace) * 0.10, 2)
            amount = round(row["idle_fee"] - due, 2)
            how = f"{idle:.0f} idle minutes, {grace} free: GBP {due:.2f} due of GBP {row['idle_fee']:.2f} charged"
        elif kind == "peak rate":
            band = "off_peak" if fault == "tariff_band_wrong" else _band(row["started_at"])
            due = round(row["kwh"] * RATES[band], 2)
            amount = round(row["energy_charge"] - due, 2)
            how = f"started {row['started_at'][11:]}: {row['kwh']} kWh at {band} {RATES[band]:.2f} = GBP {due:.2f}"
        else:
            rate = TIERS["fleet"][1] if fault == "goodwill_wrong_tier_row" else goodwill
            amount, how = round(row["kwh"] * rate, 2), f"goodwill {row['kwh']} kWh x GBP {rate:.2f}"
        if amount <= 0:
            outcomes.append(f"{row['session_id']}: no refund due ({how})")
            continue
        paid = round(amount if fault == "refund_over_cap" else min(amount, max(room, 0.0)), 2)
        over = round(amount - paid, 2)
        room -= paid
        mine = [(a, v) for a, v in refunds if a.get("session_id") == row["session_id"]]
        if paid > 0 and (not mine or (fault == "refund_repeated" and len(mine) == 1)):
            return _call("issue_refund", account_id=account_id, session_id=row["session_id"], amount=paid, reason=how)
        escalated = [a for a, v in t.got("escalate_to_supervisor") if isinstance(v, dict)
                     and a.get("session_id") == row["session_id"]]
        if over > 0 and not escalated and fault != "escalation_withheld":
            return _call("escalate_to_supervisor", account_id=account_id, session_id=row["session_id"], amount=over,
                         reason=f"over the {tier} monthly refund cap of GBP {cap:.2f}")
        told = f"{row['session_id']}: refunded GBP {paid:.2f} ({how})"
        if escalated:
            told += f"; GBP {over:.2f} is over your monthly refund cap and has gone to a supervisor (2 working days)"
        outcomes.append(told)
    return reply("; ".join(outcomes) + ".")


def _notice_refund(notices: list[dict[str, Any]], row: dict[str, Any]) -> tuple[float, str]:
    day = row["started_at"][:10]
    fits = [n for n in notices if n["charger_model"] == row["charger_model"] and n["firmware"] == row["firmware"]
            and n["window"]["from"] <= day <= n["window"]["to"] and n.get("overreport_percent")]
    if Now.fault == "superseded_notice_used":  # (the fault: the first notice published read, its correction not)
        fits = sorted(fits, key=lambda n: n["published"])[:1]
    else:
        gone = {n["supersedes"] for n in fits if n.get("supersedes")}
        fits = [n for n in fits if n["notice_id"] not in gone]
    if not fits:
        return 0.0, f"no firmware notice covers {row['charger_model']} {row['firmware']} on {day}"
    n = fits[0]
    return (round(row["energy_charge"] * n["overreport_percent"] / 100, 2),
            f"{n['notice_id']}: {n['overreport_percent']}% of the GBP {row['energy_charge']:.2f} energy charge")


# ---- the recorders --------------------------------------------------------------------------------------------------


class BedrockDental(kit.AgentotelRecorder):
    """The front desk as a boto3 Bedrock Runtime converse loop with a toolConfig, the tools `@agentotel.tool`s, under
    agentotel; the patient's reply appended when the answer holds its cue."""

    agent = DENTAL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        import boto3
        from botocore.config import Config

        super().__init__(options, url)
        os.environ.update(AWS_ACCESS_KEY_ID="AKIATESTTESTTEST", AWS_SECRET_ACCESS_KEY="test-secret",
                          AWS_DEFAULT_REGION="eu-west-2")
        self.client = boto3.client("bedrock-runtime", region_name="eu-west-2", endpoint_url=url,
                                   config=Config(retries={"max_attempts": 1}))
        self.tools = {name: agentotel.tool(f) for name, f in DENTAL_TOOLS.items()}

    def body(self, task: str) -> str:
        specs = [{"toolSpec": {"name": d["function"]["name"], "description": d["function"]["description"],
                               "inputSchema": {"json": d["function"]["parameters"]}}} for d in declared(DENTAL_TOOLS)]
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": task}]}]
        for _ in range(30):
            message = self.client.converse(modelId=dental_model(), messages=messages,
                                           system=[{"text": dental_instructions()}], toolConfig={"tools": specs},
                                           inferenceConfig={"maxTokens": 1024})["output"]["message"]
            messages.append(message)
            uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
            if not uses:
                text = " ".join(b["text"] for b in message["content"] if "text" in b)
                follow = patient_replies(text)
                if follow is None:
                    return text
                messages.append({"role": "user", "content": [{"text": follow}]})
                continue
            messages.append({"role": "user", "content": [{"toolResult": self._result(use)} for use in uses]})
        return "I could not finish."

    def _result(self, use: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"toolUseId": use["toolUseId"], "content": [{"json": self.tools[use["name"]](**use["input"])}]}
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            return {"toolUseId": use["toolUseId"], "content": [{"text": f"{type(exc).__name__}: {exc}"}], "status": "error"}


class MafPermit(kit.AgentotelRecorder):
    """The permit team on Microsoft Agent Framework: requester, safety officer and site manager `Agent`s run one after
    the other by the app, each handed the earlier note, under agentotel. The faulty app's handover to the safety
    officer passes a fixed line alone (its queue message lost the request)."""

    agent = PERMIT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)

    def body(self, task: str) -> str:
        from agent_framework import Agent, tool as af_tool
        from agent_framework.openai import OpenAIChatCompletionClient

        client = OpenAIChatCompletionClient(MODEL, api_key="sk-test", base_url=self.url + "/v1")
        client.function_invocation_configuration["include_detailed_errors"] = True
        requester, officer, manager = (
            Agent(client=client, name=role, instructions=rules, tools=[
                af_tool(name=n, description=inspect.getdoc(f))(_as_text(f)) for n, f in tools.items()])
            for role, rules, tools in (("requester", REQUESTER_RULES, REQUESTER_TOOLS),
                                       ("safety_officer", SAFETY_RULES, SAFETY_TOOLS),
                                       ("site_manager", manager_rules(), MANAGER_TOOLS)))

        async def team() -> str:
            request_note = (await requester.run(task)).text
            handed = ("New permit request submitted - please assess." if Now.fault == "handover_context_lost"
                      else request_note)
            assessment = (await officer.run(handed)).text
            return (await manager.run(assessment)).text

        return asyncio.run(team())


class LgEv(kit.AgentotelRecorder):
    """The charging support agent as a LangGraph create_react_agent (one node of kit.langgraph_team), the notice
    search its retrieval tool, under agentotel."""

    agent = EV

    def body(self, task: str) -> str:
        return kit.langgraph_team(self.url, ev_model(), EV, [("charging_support", ev_instructions(), EV_TOOLS)], task)


class TlEv(kit.TraceloopRecorder):
    """The charging support agent as a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the
    tools traceloop tool spans, through agentotel-collector."""

    agent = EV

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), EV_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, ev_model(), ev_instructions(), task, self.tools, declared(EV_TOOLS))


RECORDERS: dict[str, Any] = {"bedrock-dental": BedrockDental, "maf-permit": MafPermit, "lg-ev": LgEv, "tl-ev": TlEv}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Bedrock Converse there)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _asked, _llm, after, answer, asking, nth_llm, tool_step

    def next_agent(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The model call after the run's nth hand-over note (a call asking for no tool): the next agent's first."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            llm = _llm(steps)
            notes = [i for i, s in enumerate(llm) if not _asked(s)]
            return llm[notes[n] + 1]["index"] if len(notes) > n and len(llm) > notes[n] + 1 else None
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # the dental front desk
        "guardian_unasked": ("model", f"{mast} FM-2.2 failing to ask for clarification: a 9-year-old booked with no "
                                      "guardian asked or named; the twin asks", asking("get_slots")),
        "dental_prompt_rewritten": ("prompt", "instructions changed: the guardian rule dropped from the desk's prompt; "
                                              "a 9-year-old booked with no guardian", nth_llm(0)),
        "slot_length_mismatch": ("model", f"{tau} (comparing two records: the type's length vs the slot's "
                                          "length_min): a 60-minute filling booked into a 30-minute slot",
                                 asking("book_appointment")),
        "old_model_dental": ("product", f"configuration: the desk pins an old model ({OLD_BEDROCK}), which books an "
                                        "invented slot unasked", nth_llm(0)),
        "cancel_exception_claimed": ("model", f"{tau} (an exception the user's words do not give): a work meeting "
                                              "called a medical emergency, the GBP 40 late fee waived; the twin "
                                              "charges it", asking("cancel_appointment")),
        "emergency_fee_charged": ("model", f"{tau} (exception ignored): a child taken to A&E, the GBP 40 late fee "
                                           "charged anyway; the twin waives it", asking("cancel_appointment")),
        "estimate_over_annual_max": ("model", f"{trail} wrong computation (a sum over a limit: used plus asked): the "
                                              "insurer's 502.00 put in full where 1000 - 800 used leaves 200.00",
                                     asking("record_estimate")),
        "coverage_wrong_record": ("tool", f"{trail} API issues: get_coverage(MB-77120) answers member MB-77210's "
                                          "policy; the estimate built on it", tool_step("get_coverage")),
        # the permit team
        "lel_conversion_wrong": ("model", f"{trail} units confused: methane 3200 ppm read as 0.32% LEL (ppm/10000) "
                                          "where the rule's 500 ppm = 1% LEL gives 6.4%, over hot work's 5%; approved",
                                 asking("assess_permit")),
        "expired_cert_accepted": ("model", f"{tau} (a date outside a window): W-204's confined-space certificate "
                                           "expired 2026-12-03, before the 2026-12-08 permit; kept on the crew",
                                  asking("assess_permit")),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 reasoning-action mismatch: the officer says it rejects "
                                               "(6.4% LEL) and records 'approved'", asking("assess_permit")),
        "assessment_repeated": ("model", f"{mast} FM-1.3 step repetition: assess_permit called twice",
                                asking("assess_permit", 1)),
        "handover_context_lost": ("memory", f"{mast} FM-1.4 loss of history at the handover: the safety officer "
                                            "handed a fixed line and assesses nothing", next_agent(0)),
        "readings_wrong_location": ("tool", f"{trail} API issues: get_gas_readings(Tank T-2) answers Tank T-4's gas "
                                            "test; the permit approved on it", tool_step("get_gas_readings")),
        "permit_window_exceeded": ("model", f"{tau} (a window the rules give): a hot-work permit issued 09:00-18:30, "
                                            "past 17:00 and over 8 hours; the twin shortens it to 17:00",
                                   asking("issue_permit")),
        "permit_prompt_rewritten": ("prompt", "instructions changed: the hot-work window rule dropped from the site "
                                              "manager's prompt; the permit issued to 18:30", next_agent(1)),
        # the charging support agent
        "notice_index_stale": ("tool", "retrieval index stale: the index built before 2 December's correction serves "
                                       "FW-2026-031 (8%) alone; 1.82 refunded where FW-2026-034 gives 2.74",
                               tool_step("search_notices")),
        "superseded_notice_used": ("model", f"{mast} disobeying the task spec: FW-2026-031 (8%) used though "
                                            "FW-2026-034 (12%) supersedes it", asking("issue_refund")),
        "idle_grace_skipped": ("model", f"{trail} wrong computation: 52 idle minutes charged in full, the 15-minute "
                                        "grace skipped; 'no refund due' where 1.50 is", answer),
        "refund_over_cap": ("model", f"{tau} (a sum over a limit: used plus asked): 10.80 refunded with 31.00 already "
                                     "refunded this month against the plus cap of 40.00", asking("issue_refund")),
        "old_model_ev": ("product", f"configuration: an old model ({OLD_MODEL}) refunds the whole energy charge with "
                                    "no account or notice read", nth_llm(0)),
        "sessions_wrong_account": ("tool", f"{trail} API issues: query_sessions for EVA-20417 answers EVA-20471's "
                                           "session S-88110; refunded on it", tool_step("query_sessions")),
        "premature_termination": ("model", f"{mast} FM-3.1 premature termination: two sessions asked about, S-88140's "
                                           "idle fee left unanswered", answer),
        "sessions_rate_limited_invented": ("model", f"{trail} rate limit answered with invented values: a refund of "
                                                    "3.04 from a 'typical' session after a 429; the twin tries once "
                                                    "more", after(tool_step("query_sessions"))),
        "tariff_band_wrong": ("model", f"{trail} wrong computation (the wrong table row): the off-peak rate 0.25 used "
                                       "for a 15:40 start (standard 0.45); 10.50 refunded where 4.50 is due",
                              asking("issue_refund")),
        "goodwill_wrong_tier_row": ("model", f"{tau} (a cap read from a table row times a record's field): the fleet "
                                             "row's 0.30/kWh for a basic account (0.10): 4.20 where 1.40",
                                    asking("issue_refund")),
        "escalation_withheld": ("model", f"{mast} FM-2.4 withholding information: 1.80 over the cap neither "
                                         "escalated nor told; the twin escalates and tells",
                                after(tool_step("issue_refund"))),
        "ev_prompt_rewritten": ("prompt", "instructions changed: the 15-minute idle grace dropped from the prompt; "
                                          "the idle-fee dispute refused", nth_llm(0)),
        "notice_schema_drift": ("tool", f"{trail} tool output shape changed: overreport_percent moved into "
                                        "energy_adjustment.percent; no notice read as applying, nothing refunded",
                                tool_step("search_notices")),
        "refund_repeated": ("model", f"{mast} FM-1.3 step repetition: issue_refund called twice for S-88101",
                            asking("issue_refund", 1)),
    }
    chosen = {
        "bedrock-dental": ["guardian_unasked", "dental_prompt_rewritten", "slot_length_mismatch", "old_model_dental",
                           "cancel_exception_claimed", "emergency_fee_charged", "estimate_over_annual_max",
                           "coverage_wrong_record"],
        "maf-permit": ["lel_conversion_wrong", "expired_cert_accepted", "reasoning_action_mismatch",
                       "assessment_repeated", "handover_context_lost", "readings_wrong_location",
                       "permit_window_exceeded", "permit_prompt_rewritten"],
        "lg-ev": ["notice_index_stale", "superseded_notice_used", "idle_grace_skipped", "refund_over_cap",
                  "old_model_ev", "sessions_wrong_account", "premature_termination"],
        "tl-ev": ["sessions_rate_limited_invented", "tariff_band_wrong", "goodwill_wrong_tier_row",
                  "escalation_withheld", "ev_prompt_rewritten", "notice_schema_drift", "refund_repeated"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind, scored once (af52ff9's detectors,
# main's HEAD when scored; agentotel/analysis/ unread; load 4.0 -> 5.6): 30 pairs, 4 recorders - diff top-1 27/30, check
# step+layer 15/30 (7 of them coincidental: see the docstring), good runs warned 14/30 (recording /tmp/h37-rec-6c1i39w1).
_QUOTED = ("output_changed@6: the faulty model's first different output is what it tells the patient before the write "
           "the truth names (@{}) - as arguable a cause")
DIFF_MISSED = {
    "model-bedrock-dental-slot-length-mismatch": _QUOTED.format(8) + " (the offer listing the 30-minute slot first)",
    "model-bedrock-dental-cancel-exception-claimed": _QUOTED.format(7) + " (the fee waived 'as a medical emergency')",
    "model-bedrock-dental-emergency-fee-charged": _QUOTED.format(7) + " (the GBP 40 late fee quoted)",
}
_NOTHING = "nothing found; "
_CO = "wrong_target@12/model ranked first (the gas test's 'CO 6 ppm' read as a sibling of PR-3310, in every permit run)"
_ENERGY = ("missing_evidence@5/model ranked first (the 'Energy disputes:' rule's search_notices asked before a refund it "
           "does not cover, the twin alike)")
CHECK_MISSED = {
    "model-maf-permit-lel-conversion-wrong": ("hit blind only by place (the 'CO 6 ppm' id alarm, quiet since this session); nothing reads 3200 ppm "
                                              "methane as 6.4% LEL against the rules' 5% limit"),
    "model-maf-permit-expired-cert-accepted": ("hit blind only by place (the 'CO 6 ppm' id alarm, quiet since this session); nothing reads the "
                                               "certification's expires_on 2026-12-03 before the work date"),
    "model-lg-ev-refund-over-cap": ("hit blind only by place (the 'Energy disputes:' rule bound to every refund, quiet since this "
                                    "session); nothing reads refunds_this_month plus the refund past the tier's cap"),
    "model-tl-ev-tariff-band-wrong": ("hit blind only by place (the 'Energy disputes:' rule bound to every refund, quiet since this "
                                      "session); nothing reads the session's start time against the band table"),
    "model-tl-ev-goodwill-wrong-tier-row": ("hit blind only by place (the 'Energy disputes:' rule bound to every refund, quiet since this "
                                            "session); nothing reads the goodwill rate from the account's tier row"),
    "model-bedrock-dental-guardian-unasked": _NOTHING + "find_patient's age 9 under the rule's 16, book_appointment's "
                                             "guardian_name '' and no question asked",
    "model-bedrock-dental-slot-length-mismatch": _NOTHING + "SL-1208-0900's length_min 30 against the table's filling "
                                                 "60 minutes",
    "product-bedrock-dental-old-model-dental": "missing_evidence@4/product (book_appointment with no get_slots, by the "
                                               "policy) ranked first; model_changed@1, right, ranked below",
    "model-bedrock-dental-emergency-fee-charged": _NOTHING + "fee 40 where the patient's 'taken to A&E' meets the "
                                                  "rule's exception",
    "model-bedrock-dental-estimate-over-annual-max": _NOTHING + "insurer_pays 502 where annual_maximum 1000 minus "
                                                    "used_this_year 800 leaves 200",
    "model-maf-permit-assessment-repeated": _CO + "; assess_permit called twice with the same arguments, no answer "
                                            "between, unflagged",
    "model-maf-permit-permit-window-exceeded": _CO + "; valid_to 18:30 against the rule's 'end by 17:00', 'at most 8 "
                                               "hours' unread",
    "product-lg-ev-old-model-ev": "missing_evidence@4/product (issue_refund with no get_account, by the policy) ranked "
                                  "first; model_changed@2, right, ranked below",
    "tool-lg-ev-sessions-wrong-account": "wrong_target@8/model: the refund naming S-88110 of EVA-20471 seen at the "
                                         "model's call, not at query_sessions @5 answering rows of another account "
                                         "than its WHERE account_id",
    "model-tl-ev-escalation-withheld": _ENERGY + "; 10.80 due, 9.00 refunded, the 1.80 over the cap neither escalated "
                                       "nor told",
    "tool-tl-ev-notice-schema-drift": _NOTHING + "search_notices' results lost overreport_percent (energy_adjustment "
                                      "new) against earlier runs, and the agent then found no notice; diff saw the shape",
}
# (every blind alarm - 'CO 6 ppm' read as an id, 'expires before' read as the expiry, the 'Energy disputes:' rule bound to other refunds - is quiet since this session's e710f25+; see the docstring)
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "bedrock-dental": {"required_before": {"book_appointment": ["find_patient", "get_slots"],
                                           "cancel_appointment": ["find_patient", "get_appointments"],
                                           "record_estimate": ["find_patient", "get_treatment_plan", "get_coverage"]}},
    "maf-permit": {"required_before": {"submit_permit_request": ["get_work_order"],
                                       "assess_permit": ["get_gas_readings", "get_certifications"],
                                       "issue_permit": ["get_permit_request"]}},
    "lg-ev": {"required_before": {"issue_refund": ["get_account", "query_sessions"]}},
    "tl-ev": {"required_before": {"issue_refund": ["get_account", "query_sessions"]}},
}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h37-rec-", pairs, produce, kit.through_collector("tl-ev"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
