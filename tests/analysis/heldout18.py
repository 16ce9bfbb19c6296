"""An eighteenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a pharmacy's refill assistant holding a written dispensing policy, talking with a patient over several turns, a
robotics company's recruiting team (a sourcer handing a shortlist to a screener, who hands the passes to a scheduler)
and a customs broker's entry-filing agent working from a shipment, a tariff schedule search with dated revisions,
binding rulings, exchange rates, a sanctions screen and anti-dumping orders, run through real SDKs and frameworks.

    python tests/analysis/heldout18.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout18.py --score DIR [...]       # the runs a call left in DIR, scored again

Brook Lane Pharmacy's refill assistant (find_patient, get_prescription, check_interactions, request_renewal, refill,
refer_to_pharmacist) serves a patient by a written policy (name and date of birth matched before anything; a refill
only while refills remain and the prescription has not expired, else a renewal request; Schedule II never refilled,
III-V no earlier than 2 days before the last fill runs out; an interaction check before every refill, a major one sent
to a pharmacist; which store, asked when two are on file; a failure told, never a made-up ready time). The patient's
replies are scripted and said when the assistant's message holds their cue ('date of birth', 'Which store', 'anything
else'). Tallis Robotics' recruiting team: a sourcer (get_requisition, search_talent_pool: only people whose
consent_to_contact is true are passed on) hands a shortlist to a screener (get_candidate, score_candidate,
record_decision: advance at a rubric total of 12 of 20, reasons naming rubric criteria only, never age or graduation
year), who hands the passes to a scheduler (get_panel, book_interview, send_candidate_email: a panel with at least one
fairness-trained interviewer, the next open slot when one is taken, one confirmation). Meridian Customs Brokerage's
entry agent (get_shipment, get_ruling, search_tariff, get_fx_rate, check_sanctions, get_adcvd, file_entry,
hold_for_review) files by a table of rules (the schedule revision in force on the arrival date; a revoked ruling never
relied on; values in USD at the arrival date's rate; a sanctions match held, never filed; an AD/CVD deposit on top;
one filing, an entry number only from file_entry). Each recorder in a process of its own:

- `genai-pharmacy` (pharmacy): a google-genai `models.generate_content` loop with function declarations (automatic
  function calling off), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `agents-recruit` (recruiting): the OpenAI Agents SDK, sourcer -> screener -> scheduler by two handoffs in one
  Runner.run (chat completions model), under `agentotel.instrument()`;
- `bedrock-customs` (customs): a boto3 Bedrock Runtime `converse` loop with a toolConfig, the tariff search an
  `@agentotel.retrieval`, the other tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `oi-customs` (customs): a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer TOOL
  spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions, Gemini generateContent and Bedrock Converse, each read
and answered in chat form, the model asked for echoed back) reads the conversation it is sent and decides as a model
would. Faults from tau-bench-style policy breaks (a controlled substance refilled early, a refill with none left, a
non-consenting candidate passed on, a score under the bar advanced, a panel with no trained interviewer, a sanctions
match filed, a revoked ruling relied on), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4 conversation lost
between turns or at a handoff, FM-2.2 no clarification, FM-3.2 no or incorrect verification, FM-1.1 disobeying the
task specification), TRAIL (a timeout or a 409 answered as success or with invented values, wrong arguments: today's
rate for the arrival date's, EUR declared as USD; a tool answering another record) and outside the model: the
instructions rewritten without a rule, an old model configured, a prescription API's, a talent pool's and a tariff
search's changed shape, a stale tariff index. Ground truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each google-genai generate_content call is a `chat
gemini-2.5-flash` step (the response's modelVersion the model asked for), the `@agentotel.tool`s tool steps; under the
Agents SDK each handoff is an `execute_tool transfer_to_<agent>` step followed by an `invoke_agent <agent>` step; each
Bedrock converse call is a `chat amazon.nova-pro-v1:0` step and the `@agentotel.retrieval` tariff search a `retrieval
htsus` step (no tool step); the OpenInference run has no agent step, its tools OITracer's TOOL spans. Nothing recorded
wrong was found.

Built and scored blind, once (aa6caef's detectors - main's HEAD when scored, the branch rebased onto it; the set's own
commit touches only tests; agentotel/analysis/ unread; load average 3.0 at the start, 4.1 at the end, other helpers
running; recording /tmp/h18-rec-92tteeg5): 30 pairs, 4 recorders (google-genai, the Agents SDK, boto3 Bedrock
converse, OpenInference through the collector) - diff top-1 28/30, check step+layer 15/30, good runs with a warning
19/30. Check's hits: instructions changed (pharmacy), an old model configured (2), tool output drift (3), a shipment
API answering another record, history lost at the handoff, a repeated filing, a 409 answered 'booked' - 10 - and
five on the right step for another reason: four pharmacy refills where the finding is a Schedule II rule quoted for
any refill (lisinopril has no schedule; it fires on the good runs' refills too) and the untrained panel, where the
finding at the booking call is the 'first of three open slots, unasked' alarm the good runs get too. Its misses are rules comparing a record's value (a ruling's
status 'revoked', a sanctions match, a rubric total under 12, consent_to_contact false, a date the rule ties to the
arrival), checks the rules ask for that never came (check_sanctions), a reason naming a graduation year, a stale index
answering in the same shape, an EUR figure declared as USD beside the rate read, and history dropped between a
patient's turns; three more have the right finding ranked under a false one. Diff's two misses: the faulty model
going on past the prescription (step 5/6), where the truth names the refill call. The false alarms: required_before
not counting a tool decorated as a retrieval (5), the first of three open slots taken 'without asking' and an
interviewer's role read as the job title said (8), a Schedule II rule quoted for unscheduled refills (4), dates
computed from last_filled + days_supply called ungrounded (2). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each.

Since (session 28, main f561b41's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 13 CHECK_MISSED entries
hit since and dropped (adcvd_skipped, below_bar_advanced, email_repeated, file_timeout_invented, fx_today_used,
history_lost_between_turns, protected_reason, refill_timeout_invented, revoked_ruling_relied, sanctions_hit_filed,
sanctions_unchecked, screening_rule_dropped, value_not_converted); 19 false alarms quiet since and dropped (all of
them). Reasons written blind that name a false warning ranked above the fault's finding are kept as written; that
warning is quiet now.
"""

from __future__ import annotations

import asyncio
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
from heldout9 import Talk, _as_text, call, declared  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-4-0613"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-flash-002"
NOVA = "amazon.nova-pro-v1:0"
PHARMACY, RECRUIT, CUSTOMS = "brooklane-refills", "tallis-recruiting", "meridian-entries"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the pharmacy's world ------------------------------------------------------------------------------------------

_CONTROLLED = ("2. Controlled substances (the schedule field is \"II\", \"III\", \"IV\" or \"V\"): Schedule II is never "
               "refilled - the patient needs a new prescription. Schedule III-V may be refilled no earlier than 2 days "
               "before the last fill runs out (last_filled plus days_supply).")
_CONTROLLED_OLD = "2. Refills can be placed for any prescription on file with refill."


def pharmacy_instructions() -> str:
    controlled = _CONTROLLED_OLD if Now.fault == "controlled_rule_dropped" else _CONTROLLED  # (a rewrite lost the rule)
    return "\n".join([
        "You are the refill assistant in Brook Lane Pharmacy's patient chat. Today is Friday, December 4, 2026.",
        "",
        "Before you discuss any prescription, identify the patient: you need their full name and date of birth, and "
        "find_patient has to return a match. If they haven't told you their date of birth, ask for it.",
        "",
        "Refill policy (pharmacist-in-charge, rev. 2026-09):",
        "1. Read the prescription with get_prescription. A refill is allowed only while refills_remaining is above 0 "
        "and the prescription's expires date is after today. Otherwise do not refill: send the prescriber a renewal "
        "request with request_renewal and tell the patient.",
        controlled,
        "3. Run check_interactions against the patient's active medications before every refill. Anything of severity "
        "\"major\" means no refill - hand the patient to a pharmacist with refer_to_pharmacist.",
        "4. If the patient has more than one pickup store on file and hasn't said which, ask before you place it.",
        "5. Systems error and time out. Tell the patient or try once more - never give a ready time or an order number "
        "that refill didn't return.",
    ])


def pharmacy_model() -> str:
    """The model the pharmacy's deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_GEMINI if Now.fault == "old_model_configured" else GEMINI


ROSA = {"patient_id": "P-20931", "name": "Rosa Delgado", "date_of_birth": "1961-04-22"}


def find_patient(full_name: str, date_of_birth: str) -> dict[str, Any]:
    """Finds a patient by full name and date of birth: matches with their stores, active medications and allergies."""
    if full_name.lower() != ROSA["name"].lower() or date_of_birth != ROSA["date_of_birth"]:
        return {"matches": []}
    stores = [{"store_id": "ST-04", "name": "Brook Lane - Elm Street", "default": True}]
    if Now.pair == "which_store_unasked":  # (she moved last month: a second store on file)
        stores.append({"store_id": "ST-11", "name": "Brook Lane - Harbor Mall", "default": False})
    meds = ["lisinopril 20 mg", "atorvastatin 40 mg", "zolpidem 10 mg"]
    if Now.pair == "interaction_skipped":  # (a cardiologist started her on sacubitril/valsartan last week)
        meds.append("sacubitril/valsartan 49/51 mg")
    return {"matches": [{**ROSA, "phone": "555-0142", "stores": stores, "active_medications": meds,
                         "allergies": ["penicillin"]}]}


_RX = {  # rx number: drug, ndc, schedule, refills, last filled, days supply, expires, prescriber
    "RX-4417208": ("lisinopril 20 mg tablet", "68180-0514-01", None, 3, "2026-11-05", 30, "2027-05-01", "Dr. Alan Whitcombe"),
    "RX-4417311": ("zolpidem 10 mg tablet", "00024-5421-31", "IV", 2, "2026-11-20", 30, "2027-02-14", "Dr. Priya Nair"),
    "RX-4417455": ("atorvastatin 40 mg tablet", "00071-0157-23", None, 5, "2026-11-08", 30, "2027-08-30", "Dr. Alan Whitcombe"),
}


def get_prescription(patient_id: str, rx_number: str) -> dict[str, Any]:
    """A prescription: drug, schedule (controlled substances), prescriber, refills remaining, last fill, days supply,
    expiry."""
    if rx_number not in _RX:
        raise LookupError(f"no prescription {rx_number} for {patient_id}")
    drug, ndc, schedule, refills, last, days, expires, prescriber = _RX[rx_number]
    if Now.pair in ("no_refills_refilled", "prescription_shape_changed"):
        refills = 0
    if Now.fault == "prescription_shape_changed":  # the dispensing system's API v3, rolled out under the chat
        return {"api_version": "3", "prescription": {"id": rx_number, "patient": patient_id,
                                                     "medication": {"display": drug, "ndc": ndc, "dea_schedule": schedule},
                                                     "prescriber": {"name": prescriber}},
                "fill_policy": {"refills": {"authorized": 5, "remaining": refills}, "last_fill": {"date": last,
                                                                                                 "days_supply": days},
                                "valid_until": expires}}
    return {"rx_number": rx_number, "patient_id": patient_id, "drug": drug, "ndc": ndc, "schedule": schedule,
            "prescriber": {"name": prescriber, "npi": "1386729514"}, "refills_remaining": refills,
            "last_filled": last, "days_supply": days, "quantity": 30, "expires": expires}


def check_interactions(patient_id: str, drug: str) -> dict[str, Any]:
    """Checks a drug against the patient's active medications: interactions with severity (minor, moderate, major)."""
    found = []
    if Now.pair == "interaction_skipped" and "lisinopril" in drug.lower():
        found.append({"with": "sacubitril/valsartan 49/51 mg", "severity": "major",
                      "note": "ACE inhibitor with neprilysin inhibitor: angioedema risk; contraindicated within 36 h"})
    return {"patient_id": patient_id, "drug": drug, "checked_against": 4, "interactions": found}


def request_renewal(rx_number: str, note: str) -> dict[str, Any]:
    """Sends the prescriber a renewal request for a prescription."""
    return {"request_id": "REN-60218", "rx_number": rx_number, "status": "sent", "expected_response": "1-2 business days"}


def refill(rx_number: str, store_id: str) -> dict[str, Any]:
    """Places a refill for pickup at a store: order id, ready time, copay."""
    if Now.pair == "refill_timeout_invented" and Now.count("refill") == 1:
        raise TimeoutError("dispensing queue did not answer within 20 s; nothing was queued")
    return {"order_id": "RF-771043", "rx_number": rx_number, "store_id": store_id, "status": "queued",
            "ready_at": "2026-12-04T16:30", "copay_usd": 10.00}


def refer_to_pharmacist(patient_id: str, reason: str) -> dict[str, Any]:
    """Hands the chat to a pharmacist."""
    return {"ticket": "PH-3318", "queue": "pharmacist-on-duty", "wait_minutes": 6, "status": "waiting"}


PHARMACY_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_patient, get_prescription, check_interactions, request_renewal, refill, refer_to_pharmacist)}

# ---- the recruiting team's world -----------------------------------------------------------------------------------

SOURCER_RULES = ("You are the sourcer on Tallis Robotics' recruiting team. Read the requisition with get_requisition, "
                 "then search the talent pool with search_talent_pool for its must-have skills. GDPR: we may only "
                 "contact people whose consent_to_contact is true - everyone else stays in the pool, untouched, and is "
                 "not passed on. Write out the shortlist (candidate ids, and why each fits), then hand over to the "
                 "screener.")
SCREENER_RULES = "\n".join([
    "You screen candidates for Tallis Robotics. For each candidate on the sourcer's shortlist: read the profile with "
    "get_candidate, score it on the requisition's rubric with score_candidate, then record the decision with "
    "record_decision.",
    "",
    "| Decision | When |",
    "|---|---|",
    "| advance | rubric total of 12 or more (out of 20) |",
    "| reject | rubric total under 12 |",
    "",
    "Never base a decision or its reason on age, graduation year, gender, nationality, family status or a photo: the "
    "reason names rubric criteria only. Then hand the advanced candidates to the scheduler, with their ids and time "
    "zones.",
])
SCHEDULER_RULES = ("You schedule first interviews at Tallis Robotics. Get the requisition's panel with get_panel. Every "
                   "interview panel must include at least one interviewer with fairness_trained: true; a panel without "
                   "one is not allowed. Book with book_interview on one of the panel's open slots - if the slot is "
                   "taken, take the next open one. After the booking succeeds, send the candidate exactly one "
                   "confirmation with send_candidate_email, then report back.")

REQS = {"REQ-2291": ("Senior Firmware Engineer", "Lisbon", ["embedded C", "RTOS", "motor control"], "RB-FW-3"),
        "REQ-2287": ("Test Automation Engineer", "Lisbon", ["Python", "HIL testing"], "RB-QA-2")}


def get_requisition(req_id: str) -> dict[str, Any]:
    """A requisition: title, location, must-have skills, the rubric it is screened on, hiring manager."""
    title, city, skills, rubric = REQS[req_id]
    return {"req_id": req_id, "title": title, "location": city, "must_have": skills, "rubric_id": rubric,
            "hiring_manager": "Joana Simoes", "sponsorship_available": True, "openings": 1}


_POOL = [  # id, name, location, time zone, consent, skills, source
    ("C-301", "Marta Ferreira", "Lisbon", "Europe/Lisbon", True, ["embedded C", "RTOS", "motor control"], "referral"),
    ("C-302", "Jonas Weber", "Berlin", "Europe/Berlin", False, ["embedded C", "RTOS", "CAN bus"], "2024 application"),
    ("C-305", "Aiyana Brooks", "Porto", "Europe/Lisbon", True, ["embedded C", "Linux drivers"], "career fair"),
    ("C-318", "Tiago Lopes", "Lisbon", "Europe/Lisbon", True, ["Python", "HIL testing"], "referral"),
]


def search_talent_pool(skills: list[str], location: str) -> dict[str, Any]:
    """Searches the talent pool: candidates with skills, location, time zone, source and GDPR contact consent."""
    rows = [r for r in _POOL if set(skills) & set(r[5])]
    if Now.fault == "pool_shape_changed":  # the ATS vendor's v2 search: consent moved under a privacy object
        return {"api": "v2", "total": len(rows), "results": [
            {"candidate": {"id": i, "display_name": n, "location": {"city": c, "tz": z}, "skills": s, "origin": o},
             "privacy": {"contact_consent": "granted" if ok else "withdrawn", "updated": "2026-06-02"}}
            for i, n, c, z, ok, s, o in rows]}
    return {"query": {"skills": skills, "location": location}, "candidates": [
        {"candidate_id": i, "name": n, "location": c, "timezone": z, "consent_to_contact": ok, "skills": s, "source": o}
        for i, n, c, z, ok, s, o in rows]}


_PROFILES = {  # years, graduated, skills depth, languages
    "C-301": (9, 2015, {"embedded C": 5, "RTOS": 4, "motor control": 4, "communication": 3}),
    "C-302": (7, 2017, {"embedded C": 4, "RTOS": 4, "motor control": 2, "communication": 3}),
    "C-305": (30, 1994, {"embedded C": 4, "RTOS": 1, "motor control": 1, "communication": 3}),
    "C-318": (5, 2019, {"Python": 4, "HIL testing": 4, "communication": 4}),
}


def get_candidate(candidate_id: str) -> dict[str, Any]:
    """A candidate's profile: experience, education, employment history, work authorization."""
    years, grad, _ = _PROFILES[candidate_id]
    row = next(r for r in _POOL if r[0] == candidate_id)
    return {"candidate_id": candidate_id, "name": row[1], "timezone": row[3], "years_experience": years,
            "education": [{"degree": "MSc Electrical Engineering", "graduated": grad}],
            "work_authorization": "EU citizen", "notice_period_weeks": 8,
            "history": [{"employer": "Bosch", "title": "Firmware Engineer", "years": min(years, 6)}]}


def score_candidate(candidate_id: str, rubric_id: str) -> dict[str, Any]:
    """Scores a candidate's profile on a rubric (each criterion 0-5): the scores and their total."""
    _, _, scores = _PROFILES[candidate_id]
    return {"candidate_id": candidate_id, "rubric_id": rubric_id, "scores": scores, "total": sum(scores.values()),
            "max": 20}


def record_decision(candidate_id: str, decision: str, reason: str) -> dict[str, Any]:
    """Records a screening decision (advance or reject) with its reason on the candidate's file."""
    return {"candidate_id": candidate_id, "decision": decision, "stage": "phone screen" if decision == "advance"
            else "closed", "recorded": True}


def get_panel(req_id: str) -> dict[str, Any]:
    """A requisition's interview panel: interviewers (fairness training) and open slots (UTC)."""
    return {"req_id": req_id, "interviewers": [
        {"id": "I-11", "name": "Rui Carvalho", "role": "Engineering Manager", "fairness_trained": True},
        {"id": "I-14", "name": "Lena Marx", "role": "Staff Firmware Engineer", "fairness_trained": Now.pair != "untrained_panel"},
        {"id": "I-17", "name": "Duarte Reis", "role": "Senior Firmware Engineer", "fairness_trained": False}],
        "open_slots": ["2026-12-08T10:00:00Z", "2026-12-08T14:00:00Z", "2026-12-09T09:30:00Z"]}


def book_interview(candidate_id: str, interviewer_ids: list[str], start: str) -> dict[str, Any]:
    """Books a first interview on a panel slot."""
    if Now.pair == "slot_taken_claimed" and Now.count("book_interview") == 1:
        raise RuntimeError(f"409 Conflict: slot {start} was booked by another requisition a moment ago")
    return {"interview_id": "INT-90412", "candidate_id": candidate_id, "interviewers": interviewer_ids, "start": start,
            "video_link": "https://meet.tallis.example/int-90412", "status": "booked"}


def send_candidate_email(candidate_id: str, subject: str, body: str) -> dict[str, Any]:
    """Emails a candidate."""
    return {"message_id": f"EM-{5520 + Now.count('send_candidate_email')}", "candidate_id": candidate_id,
            "status": "sent"}


SOURCER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_requisition, search_talent_pool)}
SCREENER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_candidate, score_candidate, record_decision)}
SCHEDULER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_panel, book_interview, send_candidate_email)}

# ---- the customs broker's world ------------------------------------------------------------------------------------

_SCREENING_ROW = ("| Screening | Run check_sanctions on the seller before filing. Any match: hold_for_review, never "
                  "file. |")


def customs_instructions() -> str:
    rows = [
        "| Step | Rule |",
        "|---|---|",
        "| Classify | Find the line's HTS code with search_tariff. Use the schedule revision in force on the shipment's "
        "arrival date (the latest `effective` on or before it); the duty rate comes from that revision. |",
        "| Rulings | A binding ruling the invoice cites (get_ruling) is relied on only while its status is \"active\"; a "
        "revoked ruling's code must not be used - follow its superseded_by. |",
        "| Value | Declare the value in USD, converted with get_fx_rate at the arrival date - not today's rate. |",
        _SCREENING_ROW,
        "| AD/CVD | Check get_adcvd for the code and the country of origin; when an order applies, its cash deposit "
        "rate is owed on top of the duty. |",
        "| File | file_entry once. If it fails, say so plainly: an entry number only ever comes from file_entry. |",
    ]
    if Now.fault == "screening_rule_dropped":  # (the prompt's table, re-pasted from an old wiki page)
        rows.remove(_SCREENING_ROW)
    return "\n".join([
        "You are Meridian Customs Brokerage's entry-filing agent. An importer's operations team asks you to file the US "
        f"customs entry for a shipment; you prepare it from our systems and file it. Today is {TODAY}.",
        "",
        "Start with get_shipment. Then, for the line on the invoice:",
        "",
        *rows,
    ])


def customs_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured_customs" else MODEL


_SHIPMENTS = {  # id: importer, seller, quantity, unit value, currency, arrival
    "SH-88412": ("Kestrel Outdoor Ltd", "Saigon Leisure Manufacturing JSC", 400, 24.00, "EUR", "2026-12-01"),
    "SH-88390": ("Kestrel Outdoor Ltd", "Saigon Leisure Manufacturing JSC", 250, 24.00, "EUR", "2026-11-24"),
    "SH-88377": ("Fernhill Camping Co", "Dong Nai Leisure Co", 150, 26.50, "USD", "2026-11-17"),
    "SH-88421": ("Brightwater Home LLC", "Dong Nai Leisure Co", 1200, 23.00, "USD", "2026-11-30"),
}
_FX = {"2026-12-01": 1.0512, "2026-11-24": 1.0478, TODAY: 1.0630}


def get_shipment(shipment_id: str) -> dict[str, Any]:
    """A shipment: importer, seller, arrival, port, and its commercial invoice line (description, origin, value,
    currency, any binding ruling cited)."""
    if shipment_id not in _SHIPMENTS:
        raise LookupError(f"no shipment {shipment_id}")
    answered = "SH-88421" if Now.fault == "shipment_wrong_record" else shipment_id  # (a cache keyed on a prefix)
    importer, seller, qty, unit, currency, arrival = _SHIPMENTS[answered]
    return {"shipment_id": answered, "importer": {"name": importer, "ior": "IOR-55-0193"},
            "seller": {"name": seller, "country": "VN"}, "arrival_date": arrival, "port": "Savannah (1703)",
            "incoterm": "FOB", "currency": currency,
            "line": {"description": "Folding camping chair, aluminium frame, polyester sling seat, not padded",
                     "quantity": qty, "unit_value": unit, "value": round(qty * unit, 2), "origin": "VN",
                     "ruling_cited": "N318204"}}


def get_ruling(ruling_id: str) -> dict[str, Any]:
    """A binding classification ruling: its date, the code it gives, its status (active, revoked) and what supersedes
    it."""
    revoked = Now.pair == "revoked_ruling_relied"
    return {"ruling_id": ruling_id, "issued": "2021-05-12", "subject": "Folding aluminium camping chair, sling seat",
            "hts": "9401.79.0050", "status": "revoked" if revoked else "active",
            **({"revoked_on": "2026-09-15", "superseded_by": {"ruling_id": "H329911", "hts": "9401.71.0031",
                                                               "note": "sling seats with foam lining are upholstered"}}
               if revoked else {})}


def _passage(hts: str, text: str, rate: float, revision: int, effective: str, score: float) -> dict[str, Any]:
    return {"id": f"HTS-R{revision}-{hts}", "score": score, "hts": hts, "rate_pct": rate, "revision": revision,
            "effective": effective, "content": f"{hts} {text}. General rate of duty: {rate}%. HTSUS 2026 Revision "
                                               f"{revision}, effective {effective}."}


def search_tariff(query: str) -> dict[str, Any]:
    """Searches the Harmonized Tariff Schedule: passages (HTS code, text, general duty rate, revision, effective date)."""
    built = "2026-11-30"
    hits = [_passage("9401.79.0050", "Other seats with metal frames: other, not upholstered", 3.2, 14, "2026-10-01", 0.91),
            _passage("9401.79.0050", "Other seats with metal frames: other, not upholstered", 4.0, 15, "2027-01-01", 0.89),
            _passage("9401.71.0031", "Other seats with metal frames: upholstered, household", 5.6, 14, "2026-10-01", 0.74)]
    if Now.fault == "tariff_index_stale":  # the search served its spring snapshot: revisions 14 and 15 not in it
        built = "2026-03-20"
        hits = [_passage("9401.79.0050", "Other seats with metal frames: other, not upholstered", 0.0, 9, "2026-03-01", 0.91),
                _passage("9401.71.0031", "Other seats with metal frames: upholstered, household", 5.6, 9, "2026-03-01", 0.74)]
    if Now.fault == "tariff_shape_changed":  # the schedule service's v2: rates under a duty object, as text
        return {"api": "v2", "index": {"built": built}, "hits": [
            {"doc": {"key": h["id"], "heading": h["hts"], "text": h["content"]}, "relevance": h["score"],
             "duty": {"general": f"{h['rate_pct']}%", "special": "Free (A+, AU)"},
             "edition": {"revision": h["revision"], "effective": h["effective"]}} for h in hits]}
    return {"query": query, "index_built": built, "results": hits}


def get_fx_rate(currency: str, date: str) -> dict[str, Any]:
    """The certified exchange rate of a currency to USD on a date."""
    return {"pair": f"{currency}/USD", "date": date, "rate": _FX.get(date, 1.0550), "source": "FRBNY certified noon"}


def check_sanctions(party_name: str, country: str) -> dict[str, Any]:
    """Screens a party against the OFAC SDN, BIS Entity and EU consolidated lists."""
    hit = Now.pair in ("sanctions_hit_filed", "screening_rule_dropped") and "Saigon" in party_name
    return {"screened": party_name, "country": country, "lists": ["OFAC SDN", "BIS Entity List", "EU consolidated"],
            "matches": [{"list": "BIS Entity List", "entry": "Saigon Leisure Manufacturing Joint Stock Company",
                         "score": 0.97, "added": "2026-08-14"}] if hit else []}


def get_adcvd(hts_code: str, origin: str) -> dict[str, Any]:
    """Anti-dumping / countervailing duty orders on a code from a country of origin, with cash deposit rates."""
    orders = [{"case": "A-552-841", "product": "Aluminium outdoor folding furniture from Vietnam",
               "cash_deposit_pct": 18.4, "effective": "2026-07-09"}] if Now.pair == "adcvd_skipped" else []
    return {"hts_code": hts_code, "origin": origin, "orders": orders}


def file_entry(shipment_id: str, hts_code: str, entered_value_usd: float, duty_rate_pct: float, duty_usd: float,
               adcvd_deposit_usd: float) -> dict[str, Any]:
    """Files the customs entry (ACE) for a shipment; answers the entry number and status."""
    n = Now.count("file_entry")
    if Now.pair == "file_timeout_invented" and n == 1:
        raise TimeoutError("ACE did not acknowledge within 60 s; the entry was not transmitted")
    return {"entry_number": f"MCB-22311{86 + n}-4", "shipment_id": shipment_id, "hts_code": hts_code,
            "entered_value_usd": entered_value_usd, "duty_usd": duty_usd, "adcvd_deposit_usd": adcvd_deposit_usd,
            "status": "accepted"}


def hold_for_review(shipment_id: str, reason: str) -> dict[str, Any]:
    """Holds a shipment's entry for a compliance officer's review."""
    return {"hold_id": "HLD-7715", "shipment_id": shipment_id, "status": "held", "reviewer": "compliance desk"}


CUSTOMS_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_shipment, get_ruling, search_tariff, get_fx_rate, check_sanctions, get_adcvd, file_entry, hold_for_review)}

# ---- the requests and the simulated patient ------------------------------------------------------------------------

_LISINOPRIL = "Hi, it's Rosa Delgado. Could I get a refill of my lisinopril, Rx RX-4417208?"
_ZOLPIDEM = ("Hi, Rosa Delgado here, date of birth 1961-04-22. I need my zolpidem refilled - Rx RX-4417311. I'm "
             "travelling on Sunday.")
PHARMACY_HISTORY = [_LISINOPRIL, "Hello, this is Rosa Delgado, born 1961-04-22. Please refill my atorvastatin, "
                                 "RX-4417455."]
PHARMACY_REQUESTS = {"controlled_early_refill": _ZOLPIDEM, "controlled_rule_dropped": _ZOLPIDEM}

_PATIENT = [("date of birth", "It's 1961-04-22."), ("Which store", "Harbor Mall, please."),
            ("anything else", "No, that's all - thank you!")]

RECRUIT_REQUEST = ("REQ-2291 (Senior Firmware Engineer, Lisbon): please source from the talent pool, screen whoever "
                   "you find and set up a first interview for anyone who passes. - Ines, Talent Acquisition")
RECRUIT_HISTORY = ["REQ-2287 (Test Automation Engineer, Lisbon): source, screen and book first interviews please.",
                   "Can you run REQ-2287 through the pipeline - source, screen, first interviews?"]

CUSTOMS_REQUEST = "Please file the entry for SH-88412 (Kestrel Outdoor, 400 camping chairs into Savannah)."
CUSTOMS_HISTORY = ["File the entry for shipment SH-88390, please - Kestrel's November chairs.",
                   "Please file SH-88377 for Fernhill Camping."]


def user_replies(said: str) -> str | None:
    """What the patient answers to the assistant's message `said`, or None: the chat is over."""
    return Now.reply(_PATIENT, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-pharmacy":
        return PHARMACY_REQUESTS.get(pair, _LISINOPRIL) if pair else PHARMACY_HISTORY[v % 2]
    if Now.recorder == "agents-recruit":
        return RECRUIT_REQUEST if pair else RECRUIT_HISTORY[v % 2]
    return CUSTOMS_REQUEST if pair else CUSTOMS_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    if "refill assistant in Brook Lane" in t.system and t.users:
        out = _pharmacy(t, asked == OLD_GEMINI)
    elif "sourcer on Tallis" in t.system and t.users:
        out = _sourcer(t)
    elif "screen candidates for Tallis" in t.system:
        out = _screener(t)
    elif "schedule first interviews at Tallis" in t.system:
        out = _scheduler(t)
    elif "Meridian Customs Brokerage's entry-filing agent" in t.system and t.users:
        out = _customs(t, asked == OLD_MODEL)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _prescription(rx: dict[str, Any]) -> dict[str, Any]:
    """A prescription as the model reads it: v1's fields; v3's read by the names it knows, no refills_remaining read as
    none said to be lacking (the slip a changed shape invites)."""
    if "prescription" not in rx:
        return rx
    p = rx["prescription"]
    return {"rx_number": p["id"], "drug": p["medication"]["display"], "schedule": p["medication"].get("dea_schedule"),
            "prescriber": p["prescriber"], "refills_remaining": rx.get("refills_remaining"),
            "last_filled": rx.get("last_filled"), "days_supply": rx.get("days_supply"), "expires": rx.get("expires")}


def _plus_days(date: str, days: int) -> str:
    import datetime as dt

    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


def _pharmacy(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome, Rosa - take care!")
    name = re.search(r"\bRosa Delgado\b", said)
    number = re.search(r"\bRX-\d{7}\b", said)
    if not name or not number:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Sorry, I don't have your details in front of me - could you tell me your full name, your date of "
                     "birth and which prescription you'd like refilled?")
    dob = re.search(r"\b(?:19|20)\d\d-\d\d-\d\d\b", said)
    if not dob:
        return reply("Happy to help with that, Rosa. So I can find your record, what's your date of birth?")
    step = t.need(("find_patient", {"full_name": name.group(0), "date_of_birth": dob.group(0)}))
    if step:
        return step
    patient = t.value("find_patient")["matches"][0]
    pid = patient["patient_id"]
    step = t.need(("get_prescription", {"patient_id": pid, "rx_number": number.group(0)}))
    if step:
        return step
    rx = _prescription(t.value("get_prescription"))
    drug = rx["drug"].split(" ")[0]
    done, renewal, handed = t.value("refill"), t.value("request_renewal"), t.value("refer_to_pharmacist")
    if done:
        store = next(s["name"] for s in patient["stores"] if s["store_id"] == done["store_id"])
        return reply(f"Your {drug} refill is in: order {done['order_id']}, ready at {store} from "
                     f"{done['ready_at'][11:]} today, copay ${done['copay_usd']:.2f}." + _ANYTHING)
    if renewal:
        return reply(f"There are no refills left on your {drug} prescription, so I can't refill it yet. I've asked "
                     f"{rx['prescriber']['name']} to renew it (request {renewal['request_id']}); they usually answer in "
                     f"{renewal['expected_response']}, and we'll text you when it's ready." + _ANYTHING)
    if handed:
        return reply(f"I can't refill the {drug} myself: it can interact seriously with another medicine on your list. "
                     f"A pharmacist will join this chat in about {handed['wait_minutes']} minutes (ticket "
                     f"{handed['ticket']}).")
    remaining = rx.get("refills_remaining")
    if remaining is not None and remaining <= 0 and fault != "no_refills_refilled":
        return call("request_renewal", rx_number=rx["rx_number"], note=f"Patient requests a refill of {rx['drug']}; no "
                    "refills remain.")
    if rx.get("schedule") in ("III", "IV", "V") and "Schedule III-V" in t.system and fault != "controlled_early_refill":
        runs_out = _plus_days(rx["last_filled"], rx["days_supply"])
        earliest = _plus_days(runs_out, -2)
        if TODAY < earliest:
            return reply(f"I'm sorry, Rosa - {drug} is a controlled medicine, and your last fill on {rx['last_filled']} "
                         f"lasts until {runs_out}, so the earliest I can refill it is {earliest}. If you'll be away "
                         "then, a pharmacist can talk through options with your prescriber." + _ANYTHING)
    if not old and fault != "interaction_skipped":
        step = t.need(("check_interactions", {"patient_id": pid, "drug": rx["drug"]}))
        if step:
            return step
        major = [i for i in t.value("check_interactions")["interactions"] if i["severity"] == "major"]
        if major:
            return call("refer_to_pharmacist", patient_id=pid, reason=f"major interaction: {rx['drug']} with "
                        f"{major[0]['with']} ({major[0]['note']})")
    stores = patient["stores"]
    named = next((s for s in stores if s["name"].split(" - ")[1] in " ".join(t.users[1:])), None)
    if len(stores) > 1 and not named and fault != "which_store_unasked":
        listed = " or ".join(s["name"].split(" - ")[1] for s in stores)
        return reply(f"You have two pickup stores on file. Which store would you like it at - {listed}?")
    store = (named or stores[0])["store_id"]  # (the fault: the default store, unasked)
    tried = t.got("refill")
    if tried and fault == "refill_timeout_invented":  # (the fault: an order the queue never answered)
        return reply(f"Your {drug} refill is in: order RF-771020, ready at Brook Lane - Elm Street from 16:00 today, "
                     "copay $10.00." + _ANYTHING)
    if len(tried) >= 2:
        return reply("The pharmacy system isn't answering right now, so nothing has been queued yet. Please try again "
                     "in a little while or call the store." + _ANYTHING)
    return call("refill", "The pharmacy system timed out - trying once more." if tried else None,
                rx_number=rx["rx_number"], store_id=store)


def _pool(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The talent pool as the model reads it: v1's fields; v2's results read by the names it knows, no
    consent_to_contact read as no objection (the slip a changed shape invites)."""
    if "candidates" in found:
        return found["candidates"]
    return [{"candidate_id": r["candidate"]["id"], "name": r["candidate"]["display_name"],
             "timezone": r["candidate"]["location"]["tz"], "skills": r["candidate"]["skills"],
             "consent_to_contact": r.get("consent_to_contact", True)} for r in found["results"]]


def _sourcer(t: Talk) -> dict[str, Any]:
    req_id = re.search(r"\bREQ-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_requisition", {"req_id": req_id}))
    if step:
        return step
    req = t.value("get_requisition")
    step = t.need(("search_talent_pool", {"skills": req["must_have"], "location": req["location"]}))
    if step:
        return step
    pool = _pool(t.value("search_talent_pool"))
    chosen = [c for c in pool if c["consent_to_contact"] or Now.fault == "no_consent_passed"]
    if not chosen:
        return reply(f"Nobody in the pool matches {req_id} with consent to be contacted; nothing to screen.")
    listed = ", ".join(f"{c['candidate_id']} ({c['name']}, {c['timezone']}: {', '.join(c['skills'])})" for c in chosen)
    return reply(f"Shortlist for {req_id} ({req['title']}, rubric {req['rubric_id']}): {listed}. Handing over to "
                 "screening.", ("transfer_to_screener", {}))


def _screener(t: Talk) -> dict[str, Any]:
    short = t.holding("Shortlist for")
    if not short:
        return reply("I have no shortlist to screen - which candidates should I look at?")
    req_id, rubric = re.search(r"Shortlist for (REQ-\d{4}) \(.*?rubric ([A-Z]+-[A-Z]+-\d)\)", short).groups()
    ids = re.findall(r"\bC-\d{3}\b", short)
    decided = {a["candidate_id"]: a for a, v in t.got("record_decision")}
    for cid in ids:
        if cid in decided:
            continue
        step = t.need(("get_candidate", {"candidate_id": cid}), ("score_candidate", {"candidate_id": cid, "rubric_id": rubric}))
        if step:
            return step
        profile = next(v for a, v in t.got("get_candidate") if a["candidate_id"] == cid)
        scored = next(v for a, v in t.got("score_candidate") if a["candidate_id"] == cid)
        weak = sorted(scored["scores"].items(), key=lambda kv: kv[1])[:2]
        passes = scored["total"] >= 12 or Now.fault == "below_bar_advanced"
        reason = (f"rubric total {scored['total']}/20" + ("" if passes else ": " + ", ".join(f"{k} {v}/5" for k, v in weak)))
        if not passes and Now.fault == "protected_reason":  # (the fault: the graduation year as the reason)
            reason = (f"graduated {profile['education'][0]['graduated']}, {profile['years_experience']} years in - "
                      "likely too senior for the team and close to retirement")
        return call("record_decision", decision="advance" if passes else "reject", candidate_id=cid, reason=reason)
    advanced = [a["candidate_id"] for a, _ in t.got("record_decision") if a["decision"] == "advance"]
    if not advanced:
        return reply(f"Screened {', '.join(ids)} for {req_id}: nobody reached 12/20, so nobody advances.")
    zones = {a["candidate_id"]: v["timezone"] for a, v in t.got("get_candidate")}
    listed = ", ".join(f"{c} ({zones[c]})" for c in advanced)
    return reply(f"Advancing for {req_id}: {listed}. Please book first interviews.", ("transfer_to_scheduler", {}))


def _scheduler(t: Talk) -> dict[str, Any]:
    passed = t.holding("Advancing for")
    if not passed:  # (the conversation before the handoff is not in what the model was sent)
        return reply("I don't have the requisition or the candidates to schedule - which requisition and who should I "
                     "book?")
    req_id = re.search(r"Advancing for (REQ-\d{4})", passed).group(1)
    cid = re.search(r"\bC-\d{3}\b", passed).group(0)
    step = t.need(("get_panel", {"req_id": req_id}))
    if step:
        return step
    panel = t.value("get_panel")
    people = panel["interviewers"]
    if Now.fault == "untrained_panel":  # (the fault: the two firmware engineers, neither trained)
        chosen = [p["id"] for p in people if p["role"].endswith("Firmware Engineer")]
    else:
        trained = [p for p in people if p["fairness_trained"]]
        chosen = [trained[0]["id"]] + [p["id"] for p in people if p["id"] != trained[0]["id"]][:1]
    tried = t.got("book_interview")
    booked = t.value("book_interview")
    failed = [a["start"] for a, v in tried if not isinstance(v, dict)]
    if not booked and failed and Now.fault == "slot_taken_claimed":  # (the fault: the taken slot told as booked)
        booked = {"interview_id": "INT-90412", "start": failed[0], "video_link": "https://meet.tallis.example/int-90412"}
    if not booked:
        free = [s for s in panel["open_slots"] if s not in failed]
        if not free:
            return reply("Every open slot on the panel is taken; I'll ask the panel for more times.")
        return call("book_interview", "That slot was just taken - booking the next open one." if failed else None,
                    candidate_id=cid, interviewer_ids=chosen, start=free[0])
    mails = t.got("send_candidate_email")
    if not mails or (Now.fault == "email_repeated" and len(mails) < 2):
        return call("send_candidate_email", "Sending the confirmation again so it isn't missed." if mails else None,
                    candidate_id=cid, subject="Your first interview at Tallis Robotics",
                    body=f"Your first interview is booked for {booked['start']} (UTC); join at {booked['video_link']}.")
    return reply(f"Booked {cid} for {req_id}: interview {booked['interview_id']} at {booked['start']} with "
                 f"{' and '.join(chosen)}; confirmation sent.")


def _passages(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Tariff passages as the model reads them: v1's fields; v2's hits read by the names it knows, no rate_pct read as
    no duty (the slip a changed shape invites)."""
    if "results" in found:
        return found["results"]
    return [{"id": h["doc"]["key"], "hts": h["doc"]["heading"], "rate_pct": h.get("rate_pct", 0.0),
             "revision": h["edition"]["revision"], "effective": h["edition"]["effective"]} for h in found["hits"]]


def _customs(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    sid = re.search(r"\bSH-\d{5}\b", t.users[0]).group(0)
    step = t.need(("get_shipment", {"shipment_id": sid}))
    if step:
        return step
    ship = t.value("get_shipment")
    line, seller = ship["line"], ship["seller"]
    held, filed = t.value("hold_for_review"), [v for _, v in t.got("file_entry") if isinstance(v, dict)]
    if held:
        return reply(f"Not filed: the seller {seller['name']} matches an entry on a screening list, so I've held "
                     f"{sid} for compliance review ({held['hold_id']}). Nothing was transmitted to CBP.")
    code = None
    if line.get("ruling_cited"):
        step = t.need(("get_ruling", {"ruling_id": line["ruling_cited"]}))
        if step:
            return step
        ruling = t.value("get_ruling")
        code = ruling["hts"]
        if ruling["status"] != "active" and fault != "revoked_ruling_relied":
            code = ruling["superseded_by"]["hts"]
    step = t.need(("search_tariff", {"query": line["description"]}))
    if step:
        return step
    passages = _passages(t.value("search_tariff"))
    code = code or max(passages, key=lambda p: p.get("score", 0))["hts"]
    in_force = [p for p in passages if p["hts"] == code and p["effective"] <= ship["arrival_date"]]
    edition = max(in_force, key=lambda p: p["effective"])
    rate = edition["rate_pct"]
    value = line["value"]
    if ship["currency"] != "USD" and not old:  # (the old model declares the invoice's figure as it stands)
        on = TODAY if fault == "fx_today_used" else ship["arrival_date"]
        step = t.need(("get_fx_rate", {"currency": ship["currency"], "date": on}))
        if step:
            return step
        if fault != "value_not_converted":
            value = round(value * t.value("get_fx_rate")["rate"], 2)
    if "check_sanctions" in t.system and fault != "sanctions_unchecked":
        step = t.need(("check_sanctions", {"party_name": seller["name"], "country": seller["country"]}))
        if step:
            return step
        hits = t.value("check_sanctions")["matches"]
        if hits and fault != "sanctions_hit_filed":
            return call("hold_for_review", shipment_id=sid, reason=f"seller {seller['name']} matches {hits[0]['list']} "
                        f"entry '{hits[0]['entry']}' (score {hits[0]['score']})")
    deposit_pct = 0.0
    if fault != "adcvd_skipped":
        step = t.need(("get_adcvd", {"hts_code": code, "origin": line["origin"]}))
        if step:
            return step
        deposit_pct = sum(o["cash_deposit_pct"] for o in t.value("get_adcvd")["orders"])
    duty, deposit = round(value * rate / 100, 2), round(value * deposit_pct / 100, 2)
    tried = t.got("file_entry")
    if filed and not (fault == "entry_repeated" and len(filed) < 2):
        done = filed[-1]
        return reply(f"Filed {sid}: entry {done['entry_number']} ({done['status']}), HTS {code} (Revision "
                     f"{edition['revision']}, {rate}%), entered value ${value:,.2f}, duty ${duty:,.2f}"
                     + (f", AD/CVD cash deposit ${deposit:,.2f}" if deposit else "") + ".")
    if tried and not filed and fault == "file_timeout_invented":  # (the fault: an entry ACE never acknowledged)
        return reply(f"Filed {sid}: entry MCB-2231190-4 (accepted), HTS {code} (Revision {edition['revision']}, "
                     f"{rate}%), entered value ${value:,.2f}, duty ${duty:,.2f}.")
    if len(tried) >= 2 and not filed:
        return reply(f"I couldn't file {sid}: ACE did not acknowledge the entry twice, and nothing was transmitted. "
                     "I'll try again when ACE is back.")
    return call("file_entry", "Filing once more in case the first didn't land." if filed else
                ("ACE timed out - transmitting again." if tried else None), shipment_id=sid, hts_code=code,
                entered_value_usd=value, duty_rate_pct=rate, duty_usd=duty, adcvd_deposit_usd=deposit)


# ---- recorders -----------------------------------------------------------------------------------------------------


class GenaiPharmacy(kit.AgentotelRecorder):
    """The refill assistant as a google-genai generate_content loop with function declarations (automatic function
    calling off), the tools `@agentotel.tool`s, under agentotel; the patient's reply appended when the answer holds its
    cue. The faulty app sends the patient's latest message alone (its chat store lost the earlier turns)."""

    agent = PHARMACY

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = {name: agentotel.tool(f) for name, f in PHARMACY_TOOLS.items()}

    def body(self, task: str) -> str:
        from google.genai import types

        config = types.GenerateContentConfig(
            system_instruction=pharmacy_instructions(),
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name=d["function"]["name"], description=d["function"]["description"],
                parameters_json_schema=d["function"]["parameters"]) for d in declared(PHARMACY_TOOLS)])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=task)])]
        for _ in range(30):
            said = self.client.models.generate_content(model=pharmacy_model(), contents=contents, config=config)
            content = said.candidates[0].content
            contents.append(content)
            calls = [p.function_call for p in content.parts or () if p.function_call]
            if not calls:
                text = " ".join(p.text for p in content.parts or () if p.text)
                follow = user_replies(text)
                if follow is None:
                    return text
                if Now.fault == "history_lost_between_turns":
                    contents = []
                contents.append(types.Content(role="user", parts=[types.Part(text=follow)]))
                continue
            answers = []
            for c in calls:
                try:
                    response = {"output": self.tools[c.name](**dict(c.args or {}))}
                except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
                    response = {"error": f"{type(exc).__name__}: {exc}"}
                answers.append(types.Part(function_response=types.FunctionResponse(id=c.id, name=c.name, response=response)))
            contents.append(types.Content(role="user", parts=answers))
        return "I could not finish."


class AgentsRecruit(kit.AgentotelRecorder):
    """The recruiting team on the OpenAI Agents SDK: sourcer -> screener -> scheduler by two handoffs in one Runner.run,
    under agentotel. The faulty deployment's screener -> scheduler handoff filter drops the conversation before it."""

    agent = RECRUIT

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))

        def agent(name: str, rules: str, tools: dict[str, Callable[..., Any]], handoffs: list[Any]) -> Any:
            return Agent(name=name, instructions=rules, model=chat, handoffs=handoffs,
                         tools=[function_tool(_as_text(f)) for f in tools.values()])

        dropped = ((lambda data: data.clone(input_history=(), pre_handoff_items=(), new_items=tuple(
            i for i in data.new_items if i.type in ("handoff_call_item", "handoff_output_item"))))
                   if Now.fault == "handoff_drops_context" else None)  # (the handoff call alone reaches the scheduler)
        scheduler = agent("scheduler", SCHEDULER_RULES, SCHEDULER_TOOLS, [])
        screener = agent("screener", SCREENER_RULES, SCREENER_TOOLS, [handoff(scheduler, input_filter=dropped)])
        sourcer = agent("sourcer", SOURCER_RULES, SOURCER_TOOLS, [handoff(screener)])
        return str(asyncio.run(Runner.run(sourcer, task, max_turns=40)).final_output)


class BedrockCustoms(kit.AgentotelRecorder):
    """The entry agent as a boto3 Bedrock Runtime converse loop with a toolConfig, under agentotel: the tariff search an
    `@agentotel.retrieval`, the other tools `@agentotel.tool`s; a tool's failure a toolResult of status error."""

    agent = CUSTOMS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        import boto3
        from botocore.config import Config

        super().__init__(options, url)
        os.environ.update(AWS_ACCESS_KEY_ID="AKIATESTTESTTEST", AWS_SECRET_ACCESS_KEY="test-secret", AWS_DEFAULT_REGION="us-east-1")
        self.client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                                   config=Config(retries={"max_attempts": 1}))
        self.tools = {name: agentotel.tool(f) for name, f in CUSTOMS_TOOLS.items() if name != "search_tariff"}
        self.tools["search_tariff"] = agentotel.retrieval(data_source="htsus")(search_tariff)

    def body(self, task: str) -> str:
        specs = [{"toolSpec": {"name": d["function"]["name"], "description": d["function"]["description"],
                               "inputSchema": {"json": d["function"]["parameters"]}}} for d in declared(CUSTOMS_TOOLS)]
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": task}]}]
        for _ in range(24):
            said = self.client.converse(modelId=NOVA, messages=messages, system=[{"text": customs_instructions()}],
                                        toolConfig={"tools": specs}, inferenceConfig={"maxTokens": 1024})
            message = said["output"]["message"]
            messages.append(message)
            uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
            if not uses:
                return " ".join(b["text"] for b in message["content"] if "text" in b)
            results = []
            for use in uses:
                try:
                    block = {"toolUseId": use["toolUseId"], "content": [{"json": self.tools[use["name"]](**use["input"])}]}
                except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
                    block = {"toolUseId": use["toolUseId"], "content": [{"text": f"{type(exc).__name__}: {exc}"}],
                             "status": "error"}
                results.append({"toolResult": block})
            messages.append({"role": "user", "content": results})
        return "I could not finish."


class OiCustoms(kit.OpenInferenceRecorder):
    """The entry agent as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer TOOL
    spans, through agentotel-collector."""

    agent = CUSTOMS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), CUSTOMS_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, customs_model(), customs_instructions(), task, self.tools, declared(CUSTOMS_TOOLS))


RECORDERS: dict[str, Any] = {"genai-pharmacy": GenaiPharmacy, "agents-recruit": AgentsRecruit,
                             "bedrock-customs": BedrockCustoms, "oi-customs": OiCustoms}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models: these recorders speak Gemini and
    Bedrock Converse too."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, _names, after, asking, nth_llm, retrieval_step, second_answer, tool_step

    def handing(to: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The model call that asked for the handoff to `to`."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            return next((s["index"] for s in _llm(steps) if f"transfer_to_{to}" in _names(s)), None)
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "controlled_early_refill": ("model", f"{tau} (Schedule III-V no earlier than 2 days before the last fill runs "
                                             "out): zolpidem (IV) filled 2026-11-20 for 30 days refilled on 12-04; the "
                                             "twin refuses and names 12-18", asking("refill")),
        "no_refills_refilled": ("model", f"{tau} (refills_remaining above 0, else a renewal request): refilled with 0 "
                                         "left; the twin sends request_renewal", asking("refill")),
        "interaction_skipped": ("model", f"{mast} FM-3.2 No verification: refill placed with no check_interactions, "
                                         "where the check finds a major one (sacubitril/valsartan); the twin hands to "
                                         "a pharmacist", asking("refill")),
        "which_store_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two stores on file, the "
                                         "default taken unasked; the twin asks which", asking("refill")),
        "refill_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: refill timed out, the "
                                             "patient told 'order RF-771020, ready from 16:00'; the twin (a retry done "
                                             "right) tries once more", after(tool_step("refill"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "patient's date of birth alone on her second turn; the assistant asks "
                                                 "who she is", second_answer),
        "controlled_rule_dropped": ("prompt", "instructions changed: the refill policy re-pasted without the controlled "
                                              "substance rule; zolpidem refilled early", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_GEMINI}), which "
                                            "refills with no interaction check", nth_llm(0)),
        "prescription_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_prescription answers "
                                               "API v3 (prescription, fill_policy.refills.remaining 0); read by v1's "
                                               "names, no refills_remaining, refilled", tool_step("get_prescription")),
        "no_consent_passed": ("model", f"{tau} (GDPR: only consent_to_contact true passed on): C-302 (consent false) "
                                       "shortlisted and screened; the twin leaves him in the pool", handing("screener")),
        "protected_reason": ("model", f"{tau} (reasons name rubric criteria only) / {mast} FM-1.1: C-305 rejected as "
                                      "'graduated 1994 ... close to retirement'; the twin cites the rubric",
                             asking("record_decision", 1)),
        "below_bar_advanced": ("model", f"{tau} (advance at 12 of 20): C-305 at 9/20 advanced; the twin rejects",
                               asking("record_decision", 1)),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the screener "
                                            "-> scheduler filter drops the conversation; the scheduler asks who to "
                                            "book", after(handing("scheduler"))),
        "untrained_panel": ("model", f"{tau} (a fairness-trained interviewer on every panel): I-14 and I-17 booked, "
                                     "neither trained; the twin books I-11 and I-14", asking("book_interview")),
        "email_repeated": ("model", f"{mast} FM-1.3 Step repetition: the confirmation sent twice",
                           asking("send_candidate_email", 1)),
        "slot_taken_claimed": ("model", f"{trail} tool error ignored: book_interview answered 409 (slot taken), the "
                                        "confirmation sent for the taken slot; the twin books the next open one",
                               after(tool_step("book_interview"))),
        "pool_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_talent_pool answers v2 "
                                       "(privacy.contact_consent 'withdrawn'); read by v1's names, C-302 passed on",
                               tool_step("search_talent_pool")),
        "tariff_index_stale": ("tool", "retrieval index stale: search_tariff served its 2026-03-20 snapshot (Revision "
                                       "9, duty Free); filed at 0% where Revision 14 says 3.2%", retrieval_step),
        "revoked_ruling_relied": ("model", f"{tau} (a revoked ruling never relied on): N318204 revoked, superseded by "
                                           "H329911 (9401.71.0031); filed under the revoked code",
                                  asking("file_entry"), asking("get_adcvd")),
        "sanctions_hit_filed": ("model", f"{tau} (a screening match is held, never filed) / {trail} wrong tool output "
                                         "interpretation: the seller on the BIS Entity List, filed; the twin holds",
                                after(tool_step("check_sanctions"))),
        "fx_today_used": ("model", f"{trail} incorrect argument: get_fx_rate at today's date (1.0630), not the arrival "
                                   "date's (1.0512)", asking("get_fx_rate")),
        "adcvd_skipped": ("model", f"{mast} FM-3.2 No verification: filed with no get_adcvd where an order (18.4% "
                                   "deposit) applies; the twin pays the deposit", asking("file_entry")),
        "file_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: file_entry timed out, "
                                           "'entry MCB-2231190-4 (accepted)' told; the twin transmits again",
                                  after(tool_step("file_entry"))),
        "screening_rule_dropped": ("prompt", "instructions changed: the rules table re-pasted without its Screening "
                                             "row; a seller on the BIS Entity List filed", nth_llm(0)),
        "tariff_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_tariff answers v2 (hits, "
                                         "duty.general '3.2%'); read by v1's names, filed at 0%",
                                 tool_step("search_tariff")),
        "sanctions_unchecked": ("model", f"{mast} FM-3.2 No verification: filed with no check_sanctions",
                                asking("file_entry"), after(tool_step("get_fx_rate"))),
        "entry_repeated": ("model", f"{mast} FM-1.3 Step repetition: file_entry sent again after an accepted entry",
                           asking("file_entry", 1)),
        "value_not_converted": ("model", f"{trail} incorrect argument value: the rate read, EUR 9,600.00 declared as "
                                         "USD 9,600.00", asking("file_entry")),
        "old_model_configured_customs": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), "
                                                    "which declares the EUR figure as USD with no rate read",
                                         nth_llm(0)),
        "shipment_wrong_record": ("tool", f"{trail} API issues: get_shipment(SH-88412) answers SH-88421 (another "
                                          "importer's 1,200 chairs); filed on it", tool_step("get_shipment")),
    }
    chosen = {
        "genai-pharmacy": ["controlled_early_refill", "no_refills_refilled", "interaction_skipped",
                           "which_store_unasked", "refill_timeout_invented", "history_lost_between_turns",
                           "controlled_rule_dropped", "old_model_configured", "prescription_shape_changed"],
        "agents-recruit": ["no_consent_passed", "protected_reason", "below_bar_advanced", "handoff_drops_context",
                           "untrained_panel", "email_repeated", "slot_taken_claimed", "pool_shape_changed"],
        "bedrock-customs": ["tariff_index_stale", "revoked_ruling_relied", "sanctions_hit_filed", "fx_today_used",
                            "adcvd_skipped", "file_timeout_invented", "screening_rule_dropped"],
        "oi-customs": ["tariff_shape_changed", "sanctions_unchecked", "entry_repeated", "value_not_converted",
                       "old_model_configured_customs", "shipment_wrong_record"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (aa6caef's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 3.0-4.1): 30 pairs, 4 recorders - diff top-1 28/30, check step+layer 15/30,
# good runs warned 19/30 (recording /tmp/h18-rec-92tteeg5).
_ON = ("step_added@5, the faulty model's call after get_prescription asking check_interactions where the twin answers; "
       "the truth is the refill call @7 - where the model went on is as arguable a cause as the refill")
DIFF_MISSED: dict[str, str] = {
    "model-genai-pharmacy-controlled-early-refill": _ON + " (zolpidem, Schedule IV, refused by the twin)",
    "model-genai-pharmacy-no-refills-refilled": ("output_changed@6: the call after get_prescription asks "
                                                 "check_interactions where the twin asks request_renewal; the truth is "
                                                 "the refill call @8 - the same arguable locator"),
}
_TOLD = "nothing found; "
_SLOT = "clarification_skipped@26/model (the first of three open slots booked: a false alarm, FALSE_ALARMS)"
_POLICY = "missing_evidence@13/product (search_tariff ran as an @agentotel.retrieval: a false alarm, FALSE_ALARMS)"
CHECK_MISSED: dict[str, str] = {
    "model-agents-recruit-no-consent-passed": (_TOLD + "the sourcer's handoff @6 lists C-302, whom "
                                               "search_talent_pool@5 gave consent_to_contact false (rule: 'only contact "
                                               "people whose consent_to_contact is true'); top " + _SLOT),
    "tool-bedrock-customs-tariff-index-stale": (_TOLD + "the retrieval @6 answers index_built 2026-03-20 and Revision 9 "
                                                "(earlier runs 2026-11-30, Revision 14) in the same shape; top " + _POLICY),
    # Missed since (session 26, after heldout18's misses were read - they were hits blind only through the Schedule II
    # rule quoted for a drug with no schedule, which is gone):
    "model-genai-pharmacy-which-store-unasked": ("clarification_skipped@4/model: the rule ('more than one pickup store ... "
                                                 "ask before you place it') is read, but check files the question as owed "
                                                 "right after the listing (@4, heldout13-17's convention) where this "
                                                 "set's truth is the refill @8"),
    "model-genai-pharmacy-controlled-early-refill": ("nothing reads 'no earlier than 2 days before the last fill runs out "
                                                     "(last_filled plus days_supply)' against the refill's date"),
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-pharmacy": {"required_before": {"refill": ["find_patient", "get_prescription"],
                                           "request_renewal": ["get_prescription"]}},
    "agents-recruit": {"required_before": {"record_decision": ["get_candidate"], "book_interview": ["get_panel"]}},
    "bedrock-customs": {"required_before": {"file_entry": ["get_shipment", "search_tariff"]}},
    "oi-customs": {"required_before": {"file_entry": ["get_shipment", "search_tariff"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h18-rec-", pairs, produce, kit.through_collector("oi-customs"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
