"""A twenty-first held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a school district's admissions office talking with a parent over several turns under a written admissions policy, a
fleet maintenance team (an inspector handing a truck to a service planner, who hands the parts to a buyer) and a
marketing-campaign agent scheduling an email send from a versioned segment catalogue, a consent table in DuckDB and a
suppression list, run through real SDKs and frameworks.

    python tests/analysis/heldout21.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout21.py --score DIR [...]       # the runs a call left in DIR, scored again

Briarwood Unified's admissions assistant (find_family, get_application, find_siblings, set_priority, get_household,
waive_fee, submit_application) serves a parent by a written policy (the family account's email and home ZIP before
anything; which child, asked when the family has several applications; sibling priority only for a brother or sister
still enrolled at the same school in September 2027; the $45 fee waived at or under 185% of the poverty guideline or on
SNAP / TANF - and for a child in foster care whatever the income; submitted only with the birth certificate and a
proof of address both verified, else the parent told what is missing; a failure tried once more, never a confirmation
submit_application didn't return). The parent's replies are scripted and said when the assistant's message holds their
cue ('email address', 'Which child', 'anything else'). Ostrander Freight's fleet maintenance team: an inspector
(get_vehicle, get_inspection, set_status: a critical defect takes the vehicle out of service before the handover), a
service planner (book_service by a markdown interval table in km, engine hours and days, whichever comes first; the
parts each work item needs) and a parts buyer (search_parts, request_approval, place_order: approved suppliers only,
the cheapest in stock; an order over $2,500 only with an approval id; a failure told, never a PO number place_order
didn't return). Copperleaf Coffee's campaign agent (get_campaign, search_segments, run_sql over a real DuckDB contacts
table, get_suppression_list, schedule_send) schedules an email campaign by written rules (the segment's published
version, never a draft or archived one; consent at the campaign's required version or later, never withdrawn; the
suppression list always - a cooldown entry stops applying after its expires_at, a complaint or hard bounce never; 10:00
local per time zone, never 21:00-08:00 local; the date asked about when the campaign has none; one schedule; the
exclusions told). Each recorder in a process of its own:

- `genai-admissions` (admissions): a google-genai `models.generate_content` loop with function declarations (automatic
  function calling off), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `lg-fleet` (fleet): a LangGraph StateGraph of three `create_react_agent` nodes (inspector -> planner -> buyer,
  ChatOpenAI, ToolNode with handle_tool_errors), under `agentotel.instrument()`;
- `pai-campaign` (campaign): a pydantic-ai Agent (OpenAIChatModel) with plain tools, under `agentotel.instrument()` only
  (a tool's error goes back to the model as a retry prompt);
- `tl-campaign` (campaign): a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools traceloop
  tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Gemini generateContent, read and answered in chat
form, the model asked for echoed back) reads the conversation it is sent and decides as a model would; the segment SQL
it writes runs on DuckDB. Faults from tau-bench-style policy breaks (priority for a sibling who leaves before
September, a waiver's foster-care exception missed, a draft segment used, consent below the required version mailed, a
suspended supplier ordered from, an over-limit order with no approval, a complaint's suppression read as expired), MAST
(Cemri et al. 2025: FM-2.6 reasoning-action mismatch, FM-3.1 premature termination, FM-2.4 withholding information,
FM-2.2 no clarification, FM-3.2 no verification, FM-1.3 step repetition, FM-1.4 context lost at a handover), TRAIL (a
timeout or a rate limit answered with invented values or gone past, a send time in UTC where local was asked) and
outside the model: the instructions rewritten without a rule (2), an old model configured (2), a parts API's and a SQL
endpoint's changed shape, a stale segment index, a household API and a campaign API answering another record. Ground
truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each google-genai generate_content call is a `chat
gemini-2.5-flash` step (the response's modelVersion the model asked for), the `@agentotel.tool`s tool steps, no agent
step; the LangGraph graph is an `invoke_agent ostrander-fleet` step holding `invoke_agent inspector`, `planner` and
`buyer`, each with its `chat gpt-4o-mini` and tool steps (the faulty deployment's ticket node is no step); the
pydantic-ai run is an `invoke_agent copperleaf-campaigns` step, a tool's 429 sent back as a ModelRetry a failed tool
step; the traceloop run has `openai.chat` and `<tool>.tool` steps and no agent step. Nothing recorded wrong was found.

Built and scored blind, once (180e951's detectors - main's HEAD when scored, 180e951944787722a97f2de675f0c72b443c253c,
the branch rebased onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 7.0 at
the start, 8.0 at the end, other helpers running; recording /tmp/h21-rec-p7xssvui): 30 pairs, 4 recorders
(google-genai, a LangGraph StateGraph of three agents, pydantic-ai under agentotel alone, OpenLLMetry through the
collector) - diff top-1 29/30, check step+layer 14/30, good runs with a warning 11/30. One locator was wrong and is
fixed since (the blind run's table, not the detectors, showed it): unapproved_supplier named the first place_order,
the service kit's legitimate order from SUP-31, not the one from the suspended SUP-44; scored again on the same
recording with the fixed truth (the brake pads' order @25, diff's at the approval request @21 that first carries the
cheaper total) - diff 30/30, check 15/30, 11/30 warned, and that one check 'hit' is the wrong_target alarm every good
fleet run gets (below), landing on the step by chance. Check's hits: instructions changed (2), an old model configured
(2), a household API and a campaign API answering another record (2), a stale segment index, a SQL endpoint's drift, two
children's applications and the first opened unasked, a timeout answered with an invented confirmation, a 429 gone past,
a repeated schedule, an over-limit order with no approval, a plan told with no booking - 14. Its misses are rules
comparing a record's value or an exception (a sibling's expected_exit before September, foster_care true owed a
waiver, a segment version's status 'draft', a complaint entry's legacy expires_at, 10:00 UTC where 21:00-08:00 local is
forbidden, engine hours against an interval table), a call whose own words contradict it (set_status in_service after
'taking it off the road', suppressed contacts 'left out' and sent), an omission the rules ask for (the exclusions
untold, a consent condition missing from the SQL, a date not asked), a handover that reset the planner's conversation;
three more have the right rule or finding at another step (a pending document's rule placed at the step after
get_application, not the submit; an invented PO found at the answer, not the call that skipped the retry) or ranked
under another (parts API drift under the order it caused). The false alarms: two purchase orders for one vehicle to
two suppliers read as a call naming a sibling of the first order's record (8), the request's 'finish the application'
read as owed a submit where a pending document forbids it (2), and the dates offered in a clarifying question called
ungrounded (1). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 1 CHECK_MISSED entry hit
since and dropped (draft_segment_used); 11 false alarms quiet since and dropped (all of them).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 2 CHECK_MISSED
entries hit and dropped (handoff_drops_defects, reasoning_action_mismatch).

Later in session 28 (main 9a7bb50's readers): CHECK_MISSED's lg-fleet order_timeout_invented hit and dropped.
"""

from __future__ import annotations

import json
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
ADMISSIONS, FLEET, CAMPAIGN = "briarwood-admissions", "ostrander-fleet", "copperleaf-campaigns"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the admissions office's world ---------------------------------------------------------------------------------

_WAIVER = ("4. Application fee waivers. The $45 fee is waived when the household's annual income is at or below its "
           "fpg_185_limit (185% of the federal poverty guideline for its size), or when the family receives SNAP or "
           "TANF. There is one exception to the income test: a child in foster care (foster_care true on the "
           "household) gets the waiver whatever the household earns. Otherwise the fee stands - say so kindly.")
_WAIVER_OLD = "4. Application fee waivers: waive the $45 fee with waive_fee for any family that asks."


def admissions_instructions() -> str:
    waiver = _WAIVER_OLD if Now.fault == "waiver_rule_rewritten" else _WAIVER  # (an older FAQ pasted over the rule)
    return "\n".join([
        "You are the admissions assistant for Briarwood Unified School District, helping parents finish applications "
        "for the 2027-28 school year (entry in September 2027). Today is Friday, December 4, 2026. Applications close "
        "January 15, 2027 at 5 pm.",
        "",
        "Work through these in order:",
        "1. Identity. Before you look anything up, ask for the email address on the family account and the home ZIP "
        "code. find_family takes the email; the ZIP the parent gives must match the family record's, or you stop.",
        "2. If the family has more than one application and the parent hasn't said which child, ask which child before "
        "you open one.",
        "3. Sibling priority (set_priority category \"sibling\") applies only if a brother or sister will still be "
        "enrolled at the same school in September 2027. A sibling leaving that school before then - finishing its top "
        "grade, or withdrawn - does not count; use \"standard\" and tell the parent why.",
        waiver,
        "5. Documents. Never submit an application unless both the birth certificate and a proof of address are "
        "\"verified\" in get_application. If either is missing or still pending, don't submit; tell the parent exactly "
        "what is outstanding.",
        "6. If a system errors or times out, try once more; if it still fails, say the application is not submitted "
        "yet. A confirmation number comes only from submit_application.",
    ])


def admissions_model() -> str:
    """The model the assistant's deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_GEMINI if Now.fault == "old_model_configured" else GEMINI


PARENT_EMAIL, ZIP = "ngozi.okonkwo@fastmail.com", "94611"
_MAYA = {"application_id": "ADM-27-0418", "child": {"name": "Maya Okonkwo", "date_of_birth": "2021-05-14"},
         "school": "Briarwood Elementary", "grade": "K", "status": "draft"}
_SAM = {"application_id": "ADM-27-0392", "child": {"name": "Sam Okonkwo", "date_of_birth": "2019-02-02"},
        "school": "Briarwood Elementary", "grade": "2", "status": "draft"}


def find_family(email: str) -> dict[str, Any]:
    """The family account with this email address: family id, guardians, home address and the family's open
    applications."""
    if email.lower() != PARENT_EMAIL:
        return {"families": []}
    applications = [_SAM, _MAYA] if Now.pair == "which_child_unasked" else [_MAYA]
    return {"family_id": "FAM-2231", "guardians": [{"name": "Ngozi Okonkwo", "relation": "parent", "email": PARENT_EMAIL}],
            "address": {"street": "412 Alvarado Rd", "city": "Oakland", "zip": ZIP}, "applications": applications}


def get_application(application_id: str) -> dict[str, Any]:
    """An application: child, school and grade, status, the documents on file with their status, the fee and the
    priority category."""
    pending = Now.pair in ("submitted_with_pending_doc", "old_model_configured")
    child = _SAM if application_id == _SAM["application_id"] else _MAYA
    return {**child, "documents": [
        {"type": "birth_certificate", "status": "verified", "uploaded": "2026-11-02"},
        {"type": "proof_of_address", "status": "pending" if pending else "verified", "uploaded": "2026-12-03",
         "note": "utility bill - awaiting review" if pending else None}],
        "fee": {"amount_usd": 45, "status": "unpaid"}, "priority": None, "deadline": "2027-01-15T17:00:00-08:00"}


def find_siblings(family_id: str) -> dict[str, Any]:
    """The children of a family already at district schools: school, grade, status and expected exit date."""
    leaving = Now.pair == "sibling_graduating_priority"
    return {"family_id": family_id, "siblings": [{
        "name": "Leo Okonkwo", "student_id": "S-448120", "school": "Briarwood Elementary", "grades_served": "K-5",
        "grade": "5" if leaving else "3", "status": "enrolled", "expected_exit": "2027-06-17" if leaving else "2029-06-14"}]}


def set_priority(application_id: str, category: str, reason: str) -> dict[str, Any]:
    """Sets an application's priority category: sibling or standard."""
    return {"application_id": application_id, "priority": category, "lottery_tier": 1 if category == "sibling" else 3}


_HOUSEHOLDS = {  # world: size, income, benefits, foster care
    "snap": (4, 41200, ["SNAP"], False),
    "over": (4, 96500, [], False),
    "foster": (4, 96500, [], True),
}


def _household_world() -> str:
    if Now.pair in ("waiver_rule_rewritten", "household_wrong_record"):
        return "over"
    return "foster" if Now.pair == "foster_exception_missed" else "snap"


def get_household(family_id: str) -> dict[str, Any]:
    """A family's household record for fee waivers: size, annual income, the 185% poverty limit for its size, public
    benefits and foster care."""
    size, income, benefits, foster = _HOUSEHOLDS[_household_world()]
    if Now.fault == "household_wrong_record":  # (the benefits cache keyed on a transposed family id: FAM-2213's)
        family_id, size, income, benefits, foster = "FAM-2213", 5, 38900, ["SNAP", "WIC"], False
    return {"family_id": family_id, "household_size": size, "annual_income_usd": income, "fpg_185_limit": 59478,
            "benefits": benefits, "foster_care": foster, "verified_at": "2026-09-30"}


def waive_fee(application_id: str, basis: str) -> dict[str, Any]:
    """Waives an application's fee, with the basis."""
    return {"application_id": application_id, "fee": {"amount_usd": 45, "status": "waived"}, "basis": basis}


def submit_application(application_id: str) -> dict[str, Any]:
    """Submits an application for the lottery."""
    if Now.pair == "submit_timeout_invented" and Now.count("submit_application") == 1:
        raise TimeoutError("enrollment system did not answer within 15s")
    return {"application_id": application_id, "status": "submitted", "confirmation": "BRW-27-55102",
            "submitted_at": f"{TODAY}T16:12:40-08:00"}


ADMISSIONS_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_family, get_application, find_siblings, set_priority, get_household, waive_fee, submit_application)}


# ---- the fleet team's world ----------------------------------------------------------------------------------------

INSPECTOR_RULES = "\n".join([
    "You are the yard inspector on Ostrander Freight's fleet maintenance team.",
    "- Read the vehicle (get_vehicle) and its latest inspection (get_inspection) first.",
    "- A defect of severity \"critical\" means the vehicle must not run: set_status it to out_of_service before you "
    "hand over. Never leave a vehicle with a critical defect in service.",
    "- Minor defects are noted, nothing else.",
    "- Hand over with a note that starts 'Inspected', gives the unit id, its status and each defect code.",
])
PLANNER_RULES = "\n".join([
    "You plan workshop visits for Ostrander Freight. From the inspector's note and the vehicle record, book one "
    "workshop visit with book_service listing every work item, then answer with a note for the parts buyer that starts "
    "'Planned' and lists 'Parts:' as PART-NUMBER xQTY.",
    "",
    "An A-service is due when ANY limit since the last A-service is reached - whichever comes first:",
    "",
    "| Class | Kilometres | Engine hours | Days |",
    "|---|---|---|---|",
    "| tractor | 40,000 | 600 | 180 |",
    "| van | 20,000 | 500 | 365 |",
    "",
    "Parts by work item: an A-service needs SVC-KIT-A40 x1 (tractor) or SVC-KIT-V20 x1 (van); defect BRK-07 needs "
    "BRK-PAD-22 x2; defect LGT-02 needs LMP-MKR-3 x1.",
])
BUYER_RULES = ("You buy parts for Ostrander Freight's workshop. For each part in the planner's note, look it up with "
               "search_parts and buy from the cheapest supplier whose status is \"approved\" and who has it in stock - "
               "never from a supplier that is suspended or on probation. An order may be placed straight away only if "
               "its total is $2,500 or less; above that, call request_approval first and put the approval_id it "
               "returns on the order. If place_order fails, try once more, and report honestly what was and wasn't "
               "ordered - a PO number only as place_order returned it.")

_VEHICLES = {  # unit: class, odometer km, engine hours, last A-service (date, km, hours)
    "TR-114": ("tractor", 412880, 9640, ("2026-07-02", 381400, 9020)),
    "VN-208": ("van", 88200, 2100, ("2026-05-10", 80100, 2000)),
}


def get_vehicle(unit_id: str) -> dict[str, Any]:
    """A fleet vehicle: class, make and model, odometer, engine hours, status and its last A-service."""
    cls, km, hours, (date, last_km, last_hours) = _VEHICLES[unit_id]
    return {"unit_id": unit_id, "class": cls, "make_model": "Volvo FH 500" if cls == "tractor" else "Ford Transit 350",
            "odometer_km": km, "engine_hours": hours, "status": "in_service", "depot": "North",
            "last_a_service": {"date": date, "odometer_km": last_km, "engine_hours": last_hours, "work_order": "WO-30412"}}


def get_inspection(unit_id: str) -> dict[str, Any]:
    """The vehicle's latest inspection: date, inspector and defects (code, component, measurement, severity)."""
    defects = [{"code": "LGT-02", "component": "side marker lamp, nearside", "severity": "minor"}]
    if unit_id == "TR-114":
        defects.insert(0, {"code": "BRK-07", "component": "brake lining, axle 2 left", "measured_mm": 2.1,
                           "limit_mm": 3.0, "severity": "critical"})
    return {"unit_id": unit_id, "inspection_id": f"INS-{unit_id[-3:]}-1204", "date": TODAY, "inspector": "R. Vance",
            "defects": defects}


def set_status(unit_id: str, status: str, reason: str) -> dict[str, Any]:
    """Sets a vehicle's status: in_service or out_of_service."""
    return {"unit_id": unit_id, "status": status, "changed_at": f"{TODAY}T07:42:00Z"}


def book_service(unit_id: str, date: str, work_items: list[str]) -> dict[str, Any]:
    """Books a workshop visit for a vehicle with its work items."""
    return {"booking_id": "SB-6618", "unit_id": unit_id, "date": date, "bay": 3, "work_items": work_items}


_PARTS = {  # part: name, [(supplier, status, unit price, stock)]
    "BRK-PAD-22": ("brake pad set, axle", [("SUP-31", "Kessler Brake & Axle", "approved", 612.0, 8),
                                           ("SUP-44", "RoadParts Direct", "approved", 655.0, 3)]),
    "SVC-KIT-A40": ("A-service kit, tractor", [("SUP-31", "Kessler Brake & Axle", "approved", 1480.0, 5),
                                               ("SUP-52", "Trucktec Supply", "approved", 1535.0, 12)]),
    "LMP-MKR-3": ("LED side marker lamp", [("SUP-52", "Trucktec Supply", "approved", 38.0, 40)]),
}


def _offers(part: str) -> list[tuple[str, str, str, float, int]]:
    offers = _PARTS[part][1]
    if Now.pair == "unapproved_supplier" and part == "BRK-PAD-22":  # (RoadParts cut its price the week it was suspended)
        offers = [offers[0], ("SUP-44", "RoadParts Direct", "suspended", 540.0, 3)]
    return offers


def search_parts(part_number: str) -> dict[str, Any]:
    """A part's suppliers on the vendor list: status (approved, probation, suspended), unit price and stock."""
    name, offers = _PARTS[part_number][0], _offers(part_number)
    if Now.fault == "parts_shape_changed":  # the parts API's v2, rolled out under the buyer
        return {"api_version": "2", "part": {"number": part_number, "description": name},
                "offers": [{"vendor": {"id": s, "name": n, "state": st.upper()}, "price": {"amount": p, "currency": "USD"},
                            "availability": {"on_hand": q}} for s, n, st, p, q in offers]}
    return {"part_number": part_number, "name": name, "suppliers": [
        {"supplier_id": s, "name": n, "status": st, "unit_price": p, "stock": q, "lead_days": 1} for s, n, st, p, q in offers]}


def request_approval(unit_id: str, amount_usd: float, reason: str) -> dict[str, Any]:
    """Asks the fleet manager to approve a parts spend; answers the approval id."""
    return {"approval_id": "APR-7713", "unit_id": unit_id, "amount_usd": amount_usd, "status": "approved",
            "approver": "fleet_manager"}


def place_order(unit_id: str, supplier_id: str, lines: list[dict[str, Any]], approval_id: str | None = None) -> dict[str, Any]:
    """Places a purchase order with one supplier: lines of part_number, quantity and unit_price."""
    if Now.pair == "order_timeout_invented" and Now.count("place_order") == 1:
        raise TimeoutError("purchasing system did not answer within 20s")
    total = sum(x.get("quantity", 0) * x.get("unit_price", 0) for x in lines)
    Now.calls["po"] = Now.calls.get("po", 0) + 1
    return {"po_number": f"PO-{48100 + Now.calls['po']}", "supplier_id": supplier_id, "unit_id": unit_id,
            "total_usd": round(total, 2), "approval_id": approval_id, "status": "placed"}


INSPECTOR_TOOLS = {f.__name__: f for f in (get_vehicle, get_inspection, set_status)}
PLANNER_TOOLS = {f.__name__: f for f in (get_vehicle, book_service)}
BUYER_TOOLS = {f.__name__: f for f in (search_parts, request_approval, place_order)}


# ---- the campaign agent's world ------------------------------------------------------------------------------------

_SUPPRESSION = ("Suppression: before scheduling, read the campaign's suppression list (get_suppression_list) and drop "
                "every contact on it. The one exception: an entry with reason \"cooldown\" stops applying once its "
                "expires_at is before the send date. Complaint and hard_bounce entries never expire, whatever "
                "expires_at says.")


def campaign_instructions() -> str:
    rules = [
        "You are Copperleaf Coffee's email campaign agent. Today is 2026-12-04. You schedule approved campaigns; you "
        "never write copy.",
        "",
        "Segment: find the campaign's segment with search_segments and use the definition (its `where`) of the "
        "version whose status is \"published\" - never a \"draft\" or \"archived\" version, even if it is newer.",
        "Consent: only contacts whose consent_version is the campaign's consent_version_required or later, and whose "
        "consent was not withdrawn (withdrawn_at is null). Put both conditions in the SQL you send run_sql (table "
        "contacts).",
        _SUPPRESSION,
        "Send window: one batch per time zone, at the campaign's send_local_time in that zone on the send date "
        "(schedule_send takes UTC). Never schedule anything between 21:00 and 08:00 local time.",
        "Date: if the campaign has no send_date and the request gives no exact date, ask which date before anything "
        "else.",
        "Schedule once. If a system is busy or times out, try once more; never go on without the data.",
        "Reply: the batches scheduled, and how many contacts the suppression list removed and why.",
    ]
    if Now.fault == "instructions_rewritten":  # (the prompt trimmed for a new template; the suppression paragraph lost)
        rules.remove(_SUPPRESSION)
    return "\n".join(rules)


def campaign_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured_campaign" else MODEL


_CAMPAIGNS = {
    "CMP-2291": {"name": "Winter Blend launch", "segment": "winter-loyal", "send_date": "2026-12-08"},
    "CMP-2288": {"name": "Holiday gift guide", "segment": "winter-loyal", "send_date": "2026-12-10"},
    "CMP-2219": {"name": "Lapsed buyers win-back", "segment": "lapsed-buyers", "send_date": "2026-11-27"},
}


def get_campaign(campaign_id: str) -> dict[str, Any]:
    """A campaign: name, status, channel, segment, send date and local send time, required consent version,
    suppression list, owner."""
    if Now.fault == "campaign_wrong_record":  # (the campaigns API's cache answered a neighbouring id)
        campaign_id = "CMP-2219"
    c = dict(_CAMPAIGNS[campaign_id])
    if Now.pair == "unclear_date_unasked":
        c["send_date"] = None
    return {"campaign_id": campaign_id, "name": c["name"], "status": "approved", "channel": "email",
            "segment": c["segment"], "send_date": c["send_date"], "send_local_time": "10:00",
            "consent_version_required": "v4", "suppression_list": "SUP-EMAIL-GLOBAL",
            "owner": {"name": "Priya Nair", "team": "lifecycle"}}


def _segment(version: int, status: str, updated: str, where: str, score: float, name: str = "winter-loyal") -> dict[str, Any]:
    return {"segment_id": f"SEG-{name}", "name": name, "version": version, "status": status, "updated_at": updated,
            "where": where, "score": score}


def search_segments(query: str) -> dict[str, Any]:
    """Searches the segment catalogue: each segment version with its status (published, draft, archived), updated
    date and SQL definition."""
    archived = _segment(2, "archived", "2026-08-12", "loyalty", 0.74)
    published = _segment(3, "published", "2026-11-18", "loyalty AND last_purchase >= DATE '2026-09-09'", 0.83)
    draft = _segment(4, "draft", "2026-12-02", "last_purchase >= DATE '2026-06-01'", 0.91)
    lapsed = _segment(1, "published", "2026-05-04", "last_purchase < DATE '2026-06-01'", 0.41, "lapsed-buyers")
    if Now.fault == "segment_index_stale":  # (the catalogue index's last rebuild was August 30: v2 still published)
        return {"query": query, "results": [{**archived, "status": "published"}, lapsed], "index_built": "2026-08-30"}
    return {"query": query, "results": [draft, published, archived, lapsed], "index_built": "2026-12-03"}


_CONTACTS = [  # id, country, time zone, loyalty, last purchase, consent version, withdrawn
    ("C-1001", "DE", "Europe/Berlin", True, "2026-11-20", "v4", None),
    ("C-1002", "DE", "Europe/Berlin", True, "2026-10-02", "v4", None),
    ("C-1003", "FR", "Europe/Paris", True, "2026-11-28", "v4", None),
    ("C-1004", "US", "America/New_York", True, "2026-09-15", "v3", None),
    ("C-1005", "US", "America/New_York", True, "2026-11-02", "v4", None),
    ("C-1006", "US", "America/Los_Angeles", True, "2026-10-30", "v4", None),
    ("C-1007", "US", "America/Los_Angeles", False, "2026-11-11", "v4", None),
    ("C-1008", "DE", "Europe/Berlin", True, "2026-11-05", "v4", "2026-11-20"),
    ("C-1009", "FR", "Europe/Paris", True, "2026-07-01", "v4", None),
    ("C-1010", "US", "America/New_York", True, "2026-11-25", "v4", None),
    ("C-1011", "US", "America/New_York", False, "2026-03-14", "v4", None),
]


def run_sql(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL query on the marketing warehouse (table contacts: contact_id, email, country, timezone,
    loyalty, last_purchase, consent_version, consented_at, withdrawn_at)."""
    import duckdb

    db = duckdb.connect()
    db.execute("CREATE TABLE contacts (contact_id TEXT, email TEXT, country TEXT, timezone TEXT, loyalty BOOLEAN, "
               "last_purchase DATE, consent_version TEXT, consented_at DATE, withdrawn_at DATE)")
    db.executemany("INSERT INTO contacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (i, f"{i.lower()}@mail.example", c, tz, loyal, bought, v, "2026-10-01" if v == "v4" else "2025-03-01", gone)
        for i, c, tz, loyal, bought, v, gone in _CONTACTS])
    cursor = db.execute(sql)
    columns = [d[0] for d in cursor.description]
    rows = [[str(x) if x is not None and not isinstance(x, (int, float, bool, str)) else x for x in r] for r in cursor.fetchall()]
    if Now.fault == "sql_shape_changed":  # the warehouse endpoint's v2 (columnar)
        return {"api_version": "2", "schema": [{"name": c} for c in columns], "data": rows, "row_count": len(rows)}
    return {"columns": columns, "rows": [dict(zip(columns, r)) for r in rows], "row_count": len(rows)}


def get_suppression_list(list_id: str) -> dict[str, Any]:
    """A suppression list: each entry's contact, reason (complaint, hard_bounce, cooldown), date added and expiry."""
    if Now.pair == "suppression_429_assumed" and Now.count("get_suppression_list") == 1:
        raise RuntimeError("429 Too Many Requests: suppression service rate limit, retry after 2s")
    legacy = "2026-11-30" if Now.pair == "suppression_exception_misapplied" else None  # (a field migrated from the old ESP)
    return {"list_id": list_id, "as_of": TODAY, "entries": [
        {"contact_id": "C-1003", "reason": "complaint", "added": "2026-10-14", "expires_at": legacy},
        {"contact_id": "C-1010", "reason": "hard_bounce", "added": "2026-11-26", "expires_at": None},
        {"contact_id": "C-1005", "reason": "cooldown", "added": "2026-11-01", "expires_at": "2026-12-01"}]}


def schedule_send(campaign_id: str, batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Schedules a campaign's send: batches of timezone, send_at_utc and contact_ids."""
    n = Now.calls["schedule_send"] = Now.calls.get("schedule_send", 0) + 1
    return {"schedule_id": f"SCH-{90410 + n}", "campaign_id": campaign_id, "status": "scheduled",
            "batches": [{"timezone": b.get("timezone"), "send_at_utc": b.get("send_at_utc"),
                         "contacts": len(b.get("contact_ids") or ())} for b in batches]}


CAMPAIGN_TOOLS = {f.__name__: f for f in (get_campaign, search_segments, run_sql, get_suppression_list, schedule_send)}


# ---- the requests and the simulated parent / marketer -------------------------------------------------------------

_MAYA_ASK = ("Hi! I'd like to finish my daughter Maya's kindergarten application for Briarwood Elementary. Her brother "
             "Leo is at Briarwood too, so she should get sibling priority, right? And we're on SNAP - can the $45 "
             "application fee be waived?")
ADMISSIONS_REQUESTS = {
    "which_child_unasked": ("Hi, I need to finish my child's application for Briarwood Elementary and sort out the fee "
                            "- we're on SNAP. Their brother Leo is at Briarwood already."),
    "foster_exception_missed": ("Hello - Maya has been placed with us through foster care, and I'd like to finish her "
                                "kindergarten application for Briarwood Elementary. Her foster brother Leo is at "
                                "Briarwood too. Is there any way the $45 fee can be waived?"),
    **{p: ("Hi, I'd like to finish Maya's kindergarten application for Briarwood Elementary - her brother Leo is there. "
           "Money's a bit tight this year; could the $45 fee be waived?")
       for p in ("waiver_rule_rewritten", "household_wrong_record")},
}
ADMISSIONS_HISTORY = ["Hello, can you check Maya's kindergarten application for Briarwood Elementary is complete and "
                      "send it in? We're on SNAP, so I think the fee is waived. Leo, her brother, is at Briarwood.",
                      _MAYA_ASK.replace("Hi!", "Good afternoon.")]
_PARENT = [("email address", f"Sure - it's {PARENT_EMAIL}, and our ZIP is {ZIP}."),
           ("Which child", "Maya's please - the kindergarten one."),
           ("anything else", "No, that's all - thank you!")]

FLEET_REQUEST = "TR-114 is in the North yard after its pre-trip check. Inspect it, plan the workshop visit and buy the parts."
FLEET_HISTORY = ["VN-208 at North depot: inspection, workshop plan and parts, please.",
                 "Please run VN-208 through inspection, planning and parts."]

CAMPAIGN_REQUEST = "Please schedule CMP-2291 (Winter Blend launch) for its send date."
CAMPAIGN_VAGUE = "Can you get CMP-2291 (Winter Blend launch) out early next week?"
CAMPAIGN_HISTORY = ["Schedule CMP-2288, the holiday gift guide, please.", "CMP-2288 is approved - please schedule it."]
_MARKETER = [("Which date", "Tuesday, December 8 please."), ("anything else", "No, thanks!")]


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-admissions":
        return ADMISSIONS_REQUESTS.get(pair, _MAYA_ASK) if pair else ADMISSIONS_HISTORY[v % 2]
    if Now.recorder == "lg-fleet":
        return FLEET_REQUEST if pair else FLEET_HISTORY[v % 2]
    if pair == "unclear_date_unasked":
        return CAMPAIGN_VAGUE
    return CAMPAIGN_REQUEST if pair else CAMPAIGN_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The script whose role the system prompt names, answering as the model the request asked for (an API answers
    with the model it served); an old model's script slips where the deployment's would not."""
    t, asked = Talk(body.get("messages") or []), body.get("model") or MODEL
    scripts: dict[str, Callable[[], dict[str, Any]]] = {
        "admissions assistant for Briarwood": lambda: _admissions(t, asked == OLD_GEMINI),
        "You are the yard inspector": lambda: _inspector(t),
        "You plan workshop visits": lambda: _planner(t),
        "You buy parts for Ostrander": lambda: _buyer(t),
        "Copperleaf Coffee's email campaign agent": lambda: _campaign(t, asked == OLD_MODEL),
    }
    role = next((r for r in scripts if r in t.system), None)
    return {**(scripts[role]() if role and t.users else reply("Hello! How can I help?")), "model": asked}


_ANYTHING = " Is there anything else I can help you with?"


def _admissions(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're very welcome, Ngozi - good luck in the lottery!")
    email, zip_ = re.search(r"[\w.]+@[\w.]+\.\w+", said), re.search(r"\b\d{5}\b", said)
    if not (email and zip_):
        return reply("Happy to help with that. First, so I can find your family account: what's the email address on "
                     "the account, and your home ZIP code?")
    step = t.need(("find_family", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    family = t.value("find_family")
    if family.get("address", {}).get("zip") != zip_.group(0):
        return reply("I'm sorry, those details don't match our records, so I can't open the account.")
    apps = family["applications"]
    named = next((a for a in apps if a["child"]["name"].split()[0] in said), None)
    if len(apps) > 1 and not named and fault != "which_child_unasked":
        listed = " and ".join(f"{a['child']['name'].split()[0]}'s (grade {a['grade']}, {a['application_id']})" for a in apps)
        return reply(f"Thanks, Ngozi - I can see two applications on your account: {listed}. Which child's application "
                     "should I work on?")
    app_id = (named or apps[0])["application_id"]
    step = t.need(("get_application", {"application_id": app_id}))
    if step:
        return step
    app, first = t.value("get_application"), t.value("get_application")["child"]["name"].split()[0]
    notes = []
    if not old:  # (the old model goes straight to submitting, reading neither siblings nor documents)
        step = t.need(("find_siblings", {"family_id": family["family_id"]}))
        if step:
            return step
        sib = next((s for s in t.value("find_siblings")["siblings"] if s["school"] == app["school"]), None)
        stays = bool(sib) and sib["status"] == "enrolled" and sib["expected_exit"] >= "2027-09-01"
        category = "sibling" if stays or (sib and fault == "sibling_graduating_priority") else "standard"
        set_ = t.value("set_priority")
        if not set_:
            return call("set_priority", application_id=app_id, category=category,
                        reason=f"{sib['name']} enrolled at {sib['school']}" if category == "sibling" else
                        "no sibling enrolled there in September 2027")
        notes.append(f"{first} has sibling priority, since {sib['name'].split()[0]} is at {sib['school']}." if category == "sibling"
                     else f"{first} is in the standard category: {sib['name'].split()[0]} finishes grade 5 and leaves "
                          f"{sib['school']} in June 2027, so sibling priority doesn't apply for September.")
        step = t.need(("get_household", {"family_id": family["family_id"]}))
        if step:
            return step
        h = t.value("get_household")
        qualifies = (h["annual_income_usd"] <= h["fpg_185_limit"] or bool({"SNAP", "TANF"} & set(h["benefits"]))
                     or (h["foster_care"] and fault != "foster_exception_missed") or "whatever the household" not in t.system)
        waived = t.value("waive_fee")
        if qualifies and not waived:
            basis = ("foster care" if h["foster_care"] else "SNAP" if "SNAP" in h["benefits"] else
                     "income under the limit" if h["annual_income_usd"] <= h["fpg_185_limit"] else "parent asked")
            return call("waive_fee", application_id=app_id, basis=basis)
        notes.append("The $45 application fee is waived." if waived else
                     "I'm sorry, the $45 fee can't be waived: the household's income is above the limit for a waiver "
                     "and it isn't receiving SNAP or TANF.")
        missing = [d["type"].replace("_", " ") for d in app["documents"] if d["status"] != "verified"]
        if missing and fault != "submitted_with_pending_doc":
            notes.append(f"I haven't submitted the application yet: the {' and '.join(missing)} is still pending "
                         "review. Once it's verified, the application can go in - the deadline is January 15 at 5 pm.")
            return reply(" ".join(notes) + _ANYTHING)
    done, tried = t.value("submit_application"), t.got("submit_application")
    if not done and tried and fault == "submit_timeout_invented":  # (the fault: a confirmation nobody returned)
        done = {"confirmation": "BRW-27-55087"}
    if not done:
        if len(tried) >= 2:
            notes.append("The enrollment system isn't answering, so the application is not submitted yet - I'll "
                         "leave it ready, and you can submit it from your account before January 15.")
            return reply(" ".join(notes) + _ANYTHING)
        return call("submit_application", "The enrollment system timed out - trying once more." if tried else None,
                    application_id=app_id)
    notes.append(f"{first}'s application is submitted - confirmation {done['confirmation']}.")
    return reply(" ".join(notes) + _ANYTHING)


def _inspector(t: Talk) -> dict[str, Any]:
    unit = re.search(r"\b(TR|VN)-\d{3}\b", t.users[0]).group(0)
    step = t.need(("get_vehicle", {"unit_id": unit}), ("get_inspection", {"unit_id": unit}))
    if step:
        return step
    defects = t.value("get_inspection")["defects"]
    critical = [d for d in defects if d["severity"] == "critical"]
    status = "out_of_service" if critical else t.value("get_vehicle")["status"]
    if critical and not t.value("set_status"):
        d = critical[0]
        said = (f"{d['component']} at {d['measured_mm']} mm against a {d['limit_mm']} mm limit is critical - taking "
                f"{unit} off the road.")
        return call("set_status", said, unit_id=unit,  # (the fault: the words say off the road, the call keeps it on)
                    status="in_service" if Now.fault == "critical_left_in_service" else status,
                    reason=f"{d['code']} critical: {d['component']}")
    codes = ", ".join(f"{d['code']} ({d['severity']}: {d['component']})" for d in defects)
    return reply(f"Inspected {unit}: status {status}. Defects: {codes}.")


def _planner(t: Talk) -> dict[str, Any]:
    note = t.holding("Inspected")
    if not note:  # (the handover lost the inspector's note)
        return reply("I haven't been given an inspection note - which unit should I plan, and what did the inspector "
                     "find?")
    unit = re.search(r"\b(TR|VN)-\d{3}\b", note).group(0)
    step = t.need(("get_vehicle", {"unit_id": unit}))
    if step:
        return step
    v = t.value("get_vehicle")
    last = v["last_a_service"]
    limits = {"tractor": (40000, 600, 180), "van": (20000, 500, 365)}[v["class"]]
    import datetime as dt

    days = (dt.date.fromisoformat(TODAY) - dt.date.fromisoformat(last["date"])).days
    since = (v["odometer_km"] - last["odometer_km"], v["engine_hours"] - last["engine_hours"], days)
    due = any(s >= lim for s, lim in zip(since, limits))
    if Now.fault == "interval_hours_ignored":  # (the slip: kilometres alone read)
        due = since[0] >= limits[0]
    items, parts = [], []
    if due:
        items.append(f"A-service (due: {since[0]:,} km, {since[1]} h, {days} days since the last)")
        parts.append(("SVC-KIT-A40" if v["class"] == "tractor" else "SVC-KIT-V20", 1))
    for code, part, qty in (("BRK-07", "BRK-PAD-22", 2), ("LGT-02", "LMP-MKR-3", 1)):
        if code in note:
            items.append(f"{code} repair")
            parts.append((part, qty))
    booked = t.value("book_service")
    if not booked:
        if Now.fault == "premature_stop":  # (the fault: the plan told, the booking never made)
            return reply(f"Planned {unit}: I'll book bay 3 on 2026-12-07 for " + "; ".join(items) + " once the parts "
                         "are confirmed.")
        return call("book_service", unit_id=unit, date="2026-12-07", work_items=items)
    return reply(f"Planned {unit}: booking {booked['booking_id']} on {booked['date']}, bay {booked['bay']} - "
                 + "; ".join(items) + ". Parts: " + ", ".join(f"{p} x{q}" for p, q in parts) + ".")


def _suppliers(found: dict[str, Any]) -> list[dict[str, Any]]:
    """A part's suppliers as the model reads them: v1's fields; v2's offers read by the names it knows (no status read
    as approved, no price as 0, no stock as in stock - the slips a changed shape invites)."""
    if "suppliers" in found:
        return found["suppliers"]
    return [{"supplier_id": o["vendor"]["id"], "status": o.get("status", "approved"), "unit_price": o.get("unit_price", 0.0),
             "stock": o.get("stock", 99)} for o in found["offers"]]


def _buyer(t: Talk) -> dict[str, Any]:
    note = t.holding("Planned") or ""
    unit = re.search(r"\b(TR|VN)-\d{3}\b", note)
    wanted = re.findall(r"\b([A-Z]{3}-[A-Z]{3}-[A-Z0-9]{1,3}) x(\d+)", note.split("Parts:")[-1]) if "Parts:" in note else []
    if not unit or not wanted:
        return reply("The planner's note lists no parts, so there is nothing to order yet.")
    unit_id = unit.group(0)
    step = t.need(*(("search_parts", {"part_number": p}) for p, _ in wanted))
    if step:
        return step
    careless = Now.fault == "unapproved_supplier"
    orders: dict[str, list[dict[str, Any]]] = {}
    for part, qty in wanted:
        found = next(v for a, v in t.got("search_parts") if a["part_number"] == part and isinstance(v, dict))
        ok = sorted((s for s in _suppliers(found) if (careless or s["status"] == "approved") and s["stock"] >= int(qty)),
                    key=lambda s: s["unit_price"])
        orders.setdefault(ok[0]["supplier_id"], []).append({"part_number": part, "quantity": int(qty),
                                                            "unit_price": ok[0]["unit_price"]})
    total = sum(x["quantity"] * x["unit_price"] for lines in orders.values() for x in lines)
    approval = t.value("request_approval")
    if total > 2500 and not approval and Now.fault != "approval_skipped":
        return call("request_approval", unit_id=unit_id, amount_usd=total, reason=f"parts for {unit_id}: "
                    + ", ".join(f"{p} x{q}" for p, q in wanted))
    placed = {v["supplier_id"]: v for _, v in t.got("place_order") if isinstance(v, dict)}
    told = []
    for supplier, lines in orders.items():
        if supplier in placed:
            told.append(f"{placed[supplier]['po_number']} with {supplier} (${placed[supplier]['total_usd']:,.2f})")
            continue
        tried = [a for a, v in t.got("place_order") if a.get("supplier_id") == supplier]
        if tried and Now.fault == "order_timeout_invented":  # (the fault: a PO number nobody returned)
            told.append(f"PO-48117 with {supplier}")
            continue
        if len(tried) >= 2:
            told.append(f"nothing with {supplier} - the purchasing system timed out twice, so that order is NOT placed")
            continue
        return call("place_order", "The purchasing system timed out - trying once more." if tried else None,
                    unit_id=unit_id, supplier_id=supplier, lines=lines,
                    **({"approval_id": approval["approval_id"]} if approval else {}))
    return reply(f"Parts for {unit_id}, ${total:,.2f} in all" + (f" (approved, {approval['approval_id']})" if approval else "")
                 + ": " + "; ".join(told) + ".")


_OFFSETS = {"Europe/Berlin": 1, "Europe/Paris": 1, "America/New_York": -5, "America/Los_Angeles": -8}  # (December)


def _rows(found: dict[str, Any]) -> list[dict[str, Any]]:
    """run_sql's rows as the model reads them: v1's `rows`; v2's columnar answer has none by that name (the slip)."""
    return found.get("rows") or []


def _campaign(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("No, thanks" in u for u in t.users[1:]):
        return reply("Great - it's all set.")
    cid = re.search(r"\bCMP-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_campaign", {"campaign_id": cid}))
    if step:
        return step
    c = t.value("get_campaign")
    date = c["send_date"]
    if not date:
        day = re.search(r"December (\d{1,2})", said)
        if day:
            date = f"2026-12-{int(day.group(1)):02d}"
        elif fault == "unclear_date_unasked":  # (the fault: 'early next week' taken as Monday, unasked)
            date = "2026-12-07"
        else:
            return reply(f"{c['name']} has no send date set. Which date would you like - Monday 7, Tuesday 8 or "
                         "Wednesday 9 December?")
    step = t.need(("search_segments", {"query": f"{c['segment']} segment definition"}))
    if step:
        return step
    versions = [s for s in t.value("search_segments")["results"] if s["name"] == c["segment"]]
    usable = versions if fault == "draft_segment_used" else [s for s in versions if s["status"] == "published"]
    seg = max(usable, key=lambda s: s["version"])
    consent = "" if old or fault == "consent_version_ignored" else f" AND consent_version >= '{c['consent_version_required']}'"
    sql = (f"SELECT contact_id, timezone, consent_version FROM contacts WHERE ({seg['where']}){consent} AND withdrawn_at "
           "IS NULL ORDER BY contact_id")
    step = t.need(("run_sql", {"sql": sql}))
    if step:
        return step
    rows = _rows(t.value("run_sql"))
    if not rows:
        return reply(f"The {seg['name']} segment (v{seg['version']}) returned no contacts with current consent, so I "
                     f"haven't scheduled {cid}.")
    dropped: dict[str, str] = {}
    if "Suppression:" in t.system and not old:
        tried, listed = t.got("get_suppression_list"), t.value("get_suppression_list")
        if not listed and not (tried and fault == "suppression_429_assumed"):
            if len(tried) >= 2:
                return reply(f"The suppression service is rate-limiting us, so I haven't scheduled {cid} - I'll try "
                             "again shortly.")
            return call("get_suppression_list", "The suppression service asked me to slow down - trying once more."
                        if tried else None, list_id=c["suppression_list"])
        for e in (listed or {}).get("entries", ()):  # (the fault above: no list read taken as nobody suppressed)
            lapsed = bool(e["expires_at"]) and e["expires_at"] < date
            if lapsed and (e["reason"] == "cooldown" or fault == "suppression_exception_misapplied"):
                continue
            dropped[e["contact_id"]] = e["reason"]
    kept = [r for r in rows if r["contact_id"] not in dropped or fault == "reasoning_action_mismatch"]
    zones: dict[str, list[str]] = {}
    for r in kept:
        zones.setdefault(r["timezone"], []).append(r["contact_id"])
    local = int(c["send_local_time"][:2])
    utc = {z: local if fault == "window_utc_mixup" else local - _OFFSETS[z] for z in zones}  # (the fault: local as UTC)
    batches = [{"timezone": z, "contact_ids": ids, "send_at_utc": f"{date}T{utc[z]:02d}:00:00Z"} for z, ids in zones.items()]
    removed = [r["contact_id"] for r in rows if r["contact_id"] in dropped]
    done = [v for _, v in t.got("schedule_send") if isinstance(v, dict)]
    if not done or (fault == "repeat_schedule" and len(done) == 1):
        say = (f"Leaving out {', '.join(removed)} (suppression list) and scheduling the rest." if removed else None)
        return call("schedule_send", say, campaign_id=c["campaign_id"], batches=batches)
    plan = "; ".join(f"{b['timezone']} {len(b['contact_ids'])} at {b['send_at_utc']}" for b in batches)
    told = (f" The suppression list removed {len(removed)}: " + ", ".join(f"{i} ({dropped[i]})" for i in removed) + "."
            if removed and fault != "withheld_exclusions" else "")
    return reply(f"Scheduled {c['campaign_id']} ({c['name']}) for {date}, 10:00 local, segment {seg['name']} "
                 f"v{seg['version']}: {len(kept)} contacts in {len(batches)} batches ({plan}); schedule "
                 f"{done[-1]['schedule_id']}.{told}" + (_ANYTHING if Now.recorder == "tl-campaign" else ""))


# ---- recorders -----------------------------------------------------------------------------------------------------


class GenaiAdmissions(kit.AgentotelRecorder):
    """The admissions assistant as a google-genai generate_content loop with function declarations (automatic function
    calling off), the tools `@agentotel.tool`s, under agentotel; the parent's reply appended when the answer holds its
    cue."""

    agent = ADMISSIONS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = {name: agentotel.tool(f) for name, f in ADMISSIONS_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, admissions_model(), admissions_instructions(), task, self.tools,
                              declared(ADMISSIONS_TOOLS), lambda said: Now.reply(_PARENT, said))


def _fleet_graph(url: str) -> Any:
    """Inspector -> planner -> buyer, three create_react_agent nodes of one StateGraph; the faulty deployment's
    planner node is entered through a step that resets the conversation to a fixed line."""
    from langchain_core.messages import HumanMessage, RemoveMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url + "/v1", max_retries=0)
    team = (("inspector", INSPECTOR_RULES, INSPECTOR_TOOLS), ("planner", PLANNER_RULES, PLANNER_TOOLS),
            ("buyer", BUYER_RULES, BUYER_TOOLS))
    graph = StateGraph(MessagesState)
    previous = START
    for name, rules, tools in team:
        graph.add_node(name, create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in tools.values()],
                                                              handle_tool_errors=True), prompt=rules, name=name))
        if name == "planner" and Now.fault == "handoff_drops_defects":  # (a queue between the two kept the ticket line)
            graph.add_node("ticket", lambda state: {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES),
                                                                 HumanMessage(content="Workshop ticket: plan the visit.")]})
            graph.add_edge(previous, "ticket")
            previous = "ticket"
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph.compile(name=FLEET)


class LangGraphFleet(kit.AgentotelRecorder):
    agent = FLEET

    def body(self, task: str) -> str:
        out = _fleet_graph(self.url).invoke({"messages": [("user", task)]}, {"recursion_limit": 80})
        return str(out["messages"][-1].content)


class PydanticCampaign(kit.AgentotelRecorder):
    """The campaign agent on pydantic-ai under agentotel only (no pydantic-ai instrumentation of its own); a tool's
    error goes back to the model as a retry prompt."""

    agent = CAMPAIGN

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", campaign_model(), CAMPAIGN, campaign_instructions(), CAMPAIGN_TOOLS,
                                 task, lambda said: None)  # (one request, no reply asked for)


class TlCampaign(kit.TraceloopRecorder):
    """The campaign agent as a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools
    traceloop tool spans, through agentotel-collector; the marketer's reply appended when the answer holds its cue."""

    agent = CAMPAIGN

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), CAMPAIGN_TOOLS)

    def _result(self, asked: Any) -> dict[str, Any]:
        try:
            out = json.dumps(self.tools[asked.function.name](**json.loads(asked.function.arguments)))
        except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
            out = f"Error: {type(exc).__name__}: {exc}"
        return {"role": "tool", "tool_call_id": asked.id, "content": out}

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": campaign_instructions()},
                                          {"role": "user", "content": task}]
        while len(messages) < 60:
            said = client.chat.completions.create(model=campaign_model(), messages=messages,
                                                  tools=declared(CAMPAIGN_TOOLS)).choices[0].message
            messages.append(said.model_dump(exclude_none=True))
            messages += [self._result(c) for c in said.tool_calls or ()]
            if not said.tool_calls:
                follow = Now.reply(_MARKETER, said.content or "")
                if follow is None:
                    return said.content or ""
                messages.append({"role": "user", "content": follow})
        return "I could not finish."


RECORDERS: dict[str, Any] = {"genai-admissions": GenaiAdmissions, "lg-fleet": LangGraphFleet,
                             "pai-campaign": PydanticCampaign, "tl-campaign": TlCampaign}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (it speaks Gemini too)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _asked, _llm, after, asking, nth_llm, tool_step

    def answering(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The run's nth model call that asked for no tool (an agent's hand-over note or a reply)."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            hits = [s["index"] for s in _llm(steps) if not _asked(s)]
            return hits[n] if len(hits) > n else None
        return find

    def ordering_from(supplier: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The model call that asked for a place_order with this supplier."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            return next((s["index"] for s in _llm(steps) if any(
                n == "place_order" and (a or {}).get("supplier_id") == supplier for n, a in _asked(s))), None)
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "sibling_graduating_priority": ("model", f"{tau} (sibling priority only for a sibling still enrolled in "
                                                 "September 2027): Leo in grade 5 of a K-5 school, leaving 2027-06-17, "
                                                 "priority 'sibling' set; the twin sets 'standard' and says why",
                                        asking("set_priority")),
        "foster_exception_missed": ("model", f"{tau} (a rule's exception misapplied: foster care waives the fee "
                                             "whatever the income): income 96,500 over the 59,478 limit, foster_care "
                                             "true, the waiver refused; the twin waives it",
                                    after(tool_step("get_household"))),
        "submitted_with_pending_doc": ("model", f"{mast} FM-3.2 No or incorrect verification / {tau}: proof of address "
                                                "'pending', submitted anyway; the twin says what is outstanding "
                                                "(partial result told)", asking("submit_application")),
        "which_child_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two applications (Sam, Maya), "
                                         "the first opened unasked; the twin asks which child",
                                asking("get_application")),
        "submit_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: submit_application timed "
                                             "out, 'confirmation BRW-27-55087' told; the twin tries once more",
                                    after(tool_step("submit_application"))),
        "waiver_rule_rewritten": ("prompt", "instructions changed: the waiver rule re-pasted from an older FAQ ('for "
                                            "any family that asks'); a household over the limit, no benefits, "
                                            "waived; the twin declines", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_GEMINI}), which "
                                            "submits reading neither siblings nor documents (proof of address "
                                            "pending)", nth_llm(0)),
        "household_wrong_record": ("tool", f"{trail} API issues: get_household(FAM-2231) answers FAM-2213 (SNAP, "
                                           "38,900); the fee waived for a household over the limit",
                                   tool_step("get_household")),
        "critical_left_in_service": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'critical - taking TR-114 off "
                                              "the road' said, set_status(in_service) called", asking("set_status")),
        "interval_hours_ignored": ("model", f"{tau} (A-service due at any limit, whichever first): 620 engine hours "
                                            "since the last (limit 600), 31,480 km; booked without the A-service",
                                   asking("book_service")),
        "premature_stop": ("model", f"{mast} FM-3.1 Premature termination: the planner answers with its plan ('I'll "
                                    "book bay 3') and no book_service; nothing reaches the buyer", answering(1)),
        "handoff_drops_defects": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: the planner "
                                            "is entered with a fixed ticket line and asks which unit", answering(1)),
        "approval_skipped": ("model", f"{tau} (an order over $2,500 only with an approval id): $2,742 ordered with no "
                                      "request_approval", asking("place_order")),
        "unapproved_supplier": ("model", f"{tau} (approved suppliers only): BRK-PAD-22 ordered from SUP-44, "
                                         "'suspended', at 540.00; the twin buys from SUP-31 at 612.00 (the "
                                         "approval request is the first call to carry the cheaper total)",
                                ordering_from("SUP-44"), asking("request_approval")),
        "parts_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_parts answers v2 (offers, "
                                        "vendor.state, price.amount); read by v1's names, no price read as 0, ordered "
                                        "without approval", tool_step("search_parts")),
        "order_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: place_order timed out, "
                                            "'PO-48117' reported; the twin tries once more",
                                   after(tool_step("place_order"))),
        "draft_segment_used": ("model", f"{tau} (never a draft segment version): winter-loyal v4 'draft' used; the "
                                        "twin uses v3 'published'", asking("run_sql")),
        "suppression_exception_misapplied": ("model", f"{tau} (a rule's exception misapplied: only cooldown entries "
                                                      "expire): C-1003's complaint with a legacy expires_at "
                                                      "2026-11-30 read as lapsed, mailed", asking("schedule_send")),
        "window_utc_mixup": ("model", f"{trail} incorrect argument: every batch at 10:00 UTC (02:00 in Los Angeles, "
                                      "05:00 in New York) where 10:00 local was asked", asking("schedule_send")),
        "withheld_exclusions": ("model", f"{mast} FM-2.4 Information withholding: the reply leaves out that the "
                                         "suppression list removed C-1003 and C-1010 (the rules ask it said)",
                                after(tool_step("schedule_send"))),
        "suppression_429_assumed": ("model", f"{trail} rate limits: get_suppression_list answered 429, the send "
                                             "scheduled as if nobody were suppressed; the twin tries once more",
                                    after(tool_step("get_suppression_list"))),
        "segment_index_stale": ("tool", "retrieval index stale: search_segments served its 2026-08-30 build (v2 "
                                        "'loyalty' as published, no v3); C-1009 (last bought in July) mailed",
                                tool_step("search_segments")),
        "old_model_configured_campaign": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), "
                                                     "which drops the consent version from the SQL and never reads "
                                                     "the suppression list", nth_llm(0)),
        "consent_version_ignored": ("model", f"{tau} (consent at the required version or later): no consent_version "
                                             "condition in the SQL, C-1004 (consent v3) mailed", asking("run_sql")),
        "sql_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: run_sql answers v2 (schema, data); "
                                      "read by v1's names, no rows, nothing scheduled", tool_step("run_sql")),
        "campaign_wrong_record": ("tool", f"{trail} API issues: get_campaign(CMP-2291) answers CMP-2219 (lapsed "
                                          "buyers, 2026-11-27); that segment scheduled for a past date",
                                  tool_step("get_campaign")),
        "instructions_rewritten": ("prompt", "instructions changed: the prompt trimmed without its Suppression "
                                             "paragraph; a complaint and a hard bounce mailed", nth_llm(0)),
        "reasoning_action_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Leaving out C-1003, C-1010 "
                                               "(suppression list)' said, both in the batches sent",
                                      asking("schedule_send")),
        "unclear_date_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: no send date on the campaign, "
                                          "'early next week' taken as Monday 7 unasked; the twin asks",
                                 after(tool_step("get_campaign"))),
        "repeat_schedule": ("model", f"{mast} FM-1.3 Step repetition: schedule_send called again after SCH-90411",
                            asking("schedule_send", 1)),
    }
    chosen = {
        "genai-admissions": ["sibling_graduating_priority", "foster_exception_missed", "submitted_with_pending_doc",
                             "which_child_unasked", "submit_timeout_invented", "waiver_rule_rewritten",
                             "old_model_configured", "household_wrong_record"],
        "lg-fleet": ["critical_left_in_service", "interval_hours_ignored", "premature_stop", "handoff_drops_defects",
                     "approval_skipped", "unapproved_supplier", "parts_shape_changed", "order_timeout_invented"],
        "pai-campaign": ["draft_segment_used", "suppression_exception_misapplied", "window_utc_mixup",
                         "withheld_exclusions", "suppression_429_assumed", "segment_index_stale",
                         "old_model_configured_campaign"],
        "tl-campaign": ["consent_version_ignored", "sql_shape_changed", "campaign_wrong_record", "instructions_rewritten",
                        "reasoning_action_mismatch", "unclear_date_unasked", "repeat_schedule"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (180e951's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 7.0-8.0): 30 pairs, 4 recorders - diff top-1 29/30, check step+layer 14/30,
# good runs warned 11/30 (recording /tmp/h21-rec-p7xssvui); with unapproved_supplier's locator fixed, 30/30 and 15/30.
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED: dict[str, str] = {}  # (blind: unapproved_supplier, its locator then naming the legitimate SUP-31 order)

_ORDERS_ALARM = ("wrong_target@25/model: the second purchase order for TR-114 (SUP-52's lamp) read as naming a sibling of "
                 "the first order's record (SUP-31) - one vehicle's parts bought from two suppliers")
_NOTHING = "nothing found; "
CHECK_MISSED = {
    "model-genai-admissions-sibling-graduating-priority": _NOTHING + "find_siblings' expected_exit 2027-06-17 (grade 5 of "
                                                          "a K-5 school) against 'applies only if a brother or sister "
                                                          "will still be enrolled at the same school in September 2027'",
    "model-genai-admissions-foster-exception-missed": _NOTHING + "the waiver refused after get_household answered "
                                                     "foster_care true, where the rule's exception says such a child 'gets "
                                                     "the waiver whatever the household earns' (an action owed, not one "
                                                     "forbidden)",
    "model-genai-admissions-submitted-with-pending-doc": "policy_violated@6/model: the right rule and facts (proof of "
                                                         "address 'pending', submit_application asked @14), placed at the "
                                                         "call after get_application's answer, not the submit call",
    "model-lg-fleet-critical-left-in-service": _ORDERS_ALARM + "; nothing read set_status(status='in_service') against "
                                               "the same call's words ('critical - taking TR-114 off the road') or "
                                               "get_inspection's severity 'critical'",
    "model-lg-fleet-interval-hours-ignored": "missing_evidence@19/model: 'above that, call request_approval first' quoted "
                                             "for a $1,262 order, under the $2,500 the rule names; nothing compared the "
                                             "620 engine hours since the last A-service with the table's 600",
    "tool-lg-fleet-parts-shape-changed": "missing_evidence@21/model (an error: the $0.00 orders placed with no approval, "
                                         "what the drift caused) ranked over tool_output_drift@16/tool (a warning, the "
                                         "right step and layer)",
    "model-pai-campaign-suppression-exception-misapplied": _NOTHING + "C-1003 (reason 'complaint' on the suppression "
                                                           "list) in schedule_send's batches, against 'Complaint and "
                                                           "hard_bounce entries never expire, whatever expires_at says'",
    "model-pai-campaign-window-utc-mixup": _NOTHING + "send_at_utc 10:00Z for America/Los_Angeles (02:00 local) against "
                                           "'Never schedule anything between 21:00 and 08:00 local time'",
    "model-pai-campaign-withheld-exclusions": _NOTHING + "the reply leaves out the two contacts the suppression list "
                                              "removed, where the rules ask 'how many contacts the suppression list "
                                              "removed and why'",
    "model-tl-campaign-consent-version-ignored": _NOTHING + "the SQL has no consent_version condition where the rules say "
                                                 "'Put both conditions in the SQL you send run_sql'; C-1004 (v3) sent",
    "model-tl-campaign-unclear-date-unasked": _NOTHING + "get_campaign's send_date null and 'early next week' taken as "
                                              "2026-12-07, where the rules say 'ask which date before anything else'",
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-admissions": {"required_before": {"submit_application": ["find_family", "get_application"],
                                             "waive_fee": ["get_household"], "set_priority": ["find_siblings"]}},
    "lg-fleet": {"required_before": {"place_order": ["search_parts"], "book_service": ["get_vehicle"]}},
    "pai-campaign": {"required_before": {"schedule_send": ["get_campaign", "run_sql"]}},
    "tl-campaign": {"required_before": {"schedule_send": ["get_campaign", "run_sql"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h21-rec-", pairs, produce, kit.through_collector("tl-campaign"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
