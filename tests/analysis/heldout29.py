"""A twenty-ninth held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): a leisure club's membership desk talking with a member over several turns under a written
membership policy, a translation agency's team (a project manager delegating to a translator and to a QA reviewer) and
an aircraft maintenance-records agent reading airworthiness directives with revisions, logbook entries, life-limited
parts in flight hours and cycles, and deferred defects, run through real SDKs and frameworks.

    python tests/analysis/heldout29.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout29.py --score DIR [...]       # the runs a call left in DIR, scored again

Harbour Lane Leisure Club's membership desk (find_member, get_membership, freeze_membership, cancel_membership,
issue_guest_pass, change_plan) serves a member by a written policy (the email first; freezes 1-3 months, at most 3
months in a membership year, asked when the member gives no length; cancellations 30 days' notice, a GBP 60 early
termination fee waived for a verified medical exemption; guest passes by a plan table; a price-locked legacy plan left
only after the member is told the new fee and says yes; a failed call tried once more, never a reference nobody
returned). The member's replies are scripted and said when the desk's message holds their cue. Lindqvist & Ode
Translations' project manager (get_project, get_rates, list_translators, send_quote, deliver_translation) delegates
through two tools to a translator agent (get_source, get_glossary, submit_translation) and a QA reviewer agent
(get_translation, get_glossary, file_qa), by numbered rules (word count x the pair's rate, a 40% rush surcharge under 3
working days, a certification fee; a certified job only to a sworn translator of the pair; every job reviewed before
delivery; the brief names the glossary and the deadline). Northwind Regional's records agent (list_departures,
get_aircraft, search_directives, list_logbook, get_component, list_deferred_defects, record_review) reviews an ATR
72-600 before departure by bulleted rules (the current revision of an AD only, complied only by an entry citing that
revision; a life-limited part due at its hours or its cycles limit, whichever first, never one unit against the other;
a deferred defect expired before departure grounds the aircraft; which aircraft asked when two depart; one review
recorded, every finding told; a failure tried once more). Each recorder in a process of its own:

- `bedrock-gym` (membership desk): a boto3 Bedrock Runtime `converse` loop with a toolConfig over several member turns,
  the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `pai-translation` (agency): pydantic-ai, the project manager agent delegating to a translator agent and a reviewer
  agent from inside two of its tools (agent delegation), under `agentotel.instrument()`;
- `agents-records` (maintenance records): the OpenAI Agents SDK on a chat completions model, one agent with function
  tools, under `agentotel.instrument()`;
- `tl-records` (maintenance records): a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, sent by OTLP through agentotel-collector; the engineer's reply appended on its cue.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Bedrock Converse, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a freeze
over the yearly cap, a waived fee charged, a guest pass over the plan's allowance, a rush surcharge left off, a
certified job given to a translator who is not sworn, a superseded AD revision applied, an expired deferred defect
passed), MAST (FM-1.3 step repetition, FM-1.4 context lost at a delegation, FM-2.2 no clarification, FM-2.4 withholding
information, FM-3.1 premature termination, FM-3.2 no verification), TRAIL (a timeout or a 429 answered with invented
values, flight hours read against a cycles limit) and outside the model: instructions rewritten without a rule (3), an
old model configured (2), a logbook API's changed shape, a stale directives index, a rates API and a components API
answering another record, a delegation tool that passes the sub-agent only the brief's first line. Good twins are fine
runs: a freeze shortened to what the cap leaves after asking, a fee waived for the exemption, a guest pass refused with
the reason, a legacy plan left after the member's yes, a length asked for, a timeout and a 429 tried once more, a rush
surcharge applied, a sworn translator chosen, a failed QA reported, which aircraft asked, an overdue AD, a part over its
cycles limit and an expired defect each grounding the aircraft. Ground truth is located on the recorded faulty run by
what its steps did.

How agentotel recorded the SDKs (not the detectors'): each Bedrock converse call is a `chat amazon.nova-pro-v1:0` step
(the old model's `chat amazon.titan-text-express-v1`), the `@agentotel.tool`s tool steps; under pydantic-ai the
project manager's run is the run, each delegation an `execute_tool ask_translator` / `ask_reviewer` step holding the
sub-agent's `invoke_agent` step and its model and tool steps; under the Agents SDK the agent is an `invoke_agent`
step; the OpenLLMetry run's model calls are `openai.chat` steps, its tools traceloop tool spans.

Built and scored blind, once (main's HEAD when scored, 95a3d3dc87896e6ef85fd4bf3079f2c445b1b6a7, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 6.1 at the start, 8.9 at the
end, other helpers running; recording /tmp/h29-rec-dc1td8bo): 30 pairs, 4 recorders (boto3 Bedrock converse over
several turns, pydantic-ai agent delegation, the Agents SDK, OpenLLMetry through the collector) - diff top-1 30/30,
check step+layer 12/30, good runs with a warning 8/30. Check's hits: instructions changed (2), an old model configured
(2), a stale directives index, a components API answering another serial, a logbook API's changed shape, a repeated
record_review, a timeout and a 429 each followed by a claim no call returned, a freeze timeout answered with an
invented reference - 11; the twelfth (a rush surcharge left off) is a coincidence: its top finding is at the right
step for another reason (send_quote with no ask_reviewer before it, the false alarm below). Its misses are rules that
compare two records or a record with a written table (a freeze over the yearly cap counting the freezes taken, a fee
charged with a verified exemption on file, a guest pass over the plan's allowance, a certified job to a translator
whose sworn is false, a superseded AD revision applied, a cycles limit read against hours, a deferred defect expired
before departure, a rate answered for another language pair), questions the rules ask for that never came (how many
months, which aircraft), a locked price given up untold, a term the glossary mandates broken, a delegation that
dropped the brief, a review skipped before delivery, a sub-agent asked again, findings withheld from the answer, and a
review recorded before the defects were read (found at its step by the policy, in the product layer). The eight false
alarms are one misreading: every pydantic-ai run's send_quote flagged for no ask_reviewer before it, the instruction
'reviewed ... before delivery' bound to the quote. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, main 39b41e6's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 4 CHECK_MISSED entries
hit since and dropped (findings_withheld, handoff_brief_dropped, pm_prompt_rewritten, review_skipped); 8 false alarms
quiet since and dropped (all of them). 1 CHECK_MISSED entry added (rush_not_applied): a hit blind only because a false
alarm landed on the truth's step, quiet now. Reasons written blind that name a false warning ranked above the fault's
finding are kept as written; that warning is quiet now.
"""

from __future__ import annotations

import asyncio
import functools
import json
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
NOVA, OLD_NOVA = "amazon.nova-pro-v1:0", "amazon.titan-text-express-v1"
GYM, AGENCY, RECORDS = "harbour-lane-desk", "lindqvist-ode-pm", "northwind-records"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""

    variant = 2  # which request: 0 and 1 the history's, 2 the pairs'
    submitted = ""  # the translation text last submitted (the reviewer's get_translation reads it)


# What the rules ask after a failed call: once more, then say it did not go through.
_retry_or = functools.partial(kit.once_more, "That call failed - trying once more.")


# ---- the membership desk's world -----------------------------------------------------------------------------------

_FREEZES = "\n".join([
    "Freezes",
    "1. A member may freeze for 1 to 3 months at a time, starting on the 1st of a month.",
    "2. No more than 3 months of freezes in total may fall in one membership year (get_membership's membership_year) - "
    "count the freezes already taken that year.",
    "3. If the member hasn't said how many months, ask them; don't assume a length.",
])
_FREEZES_OLD = "Freezes: members can freeze from the 1st of any month; freeze_membership takes the months they ask for."


def gym_instructions() -> str:
    return "\n".join([
        "You are the membership desk assistant for Harbour Lane Leisure Club. Today is Friday 4 December 2026.",
        "",
        "Before you look at or change a membership, ask for the email address on the member's account and find them "
        "with find_member, then read the membership with get_membership.",
        "",
        "| Plan | Monthly fee | Guest passes per calendar month |",
        "|---|---|---|",
        "| Off-Peak | GBP 34 | 0 |",
        "| Classic | GBP 49 | 2 |",
        "| Premier | GBP 64 | 4 |",
        "| Founders 2019 (legacy, price-locked) | GBP 29 | 2 |",
        "",
        _FREEZES_OLD if Now.fault == "policy_rewritten" else _FREEZES,  # (the old FAQ answer pasted over the rules)
        "",
        "Cancellations need 30 days' notice: the effective date is never earlier than 30 days after today. If the "
        "minimum term hasn't ended by the effective date, an early termination fee of GBP 60 applies - unless the "
        "member has a verified medical exemption on file, in which case the fee is waived and you pass the exemption's "
        "reference to cancel_membership.",
        "",
        "Issue a guest pass only if the member has passes left this month under their plan.",
        "",
        "A member on a price-locked legacy plan keeps that price only while they stay on it. Before you change their "
        "plan, tell them the new monthly fee and that the locked price can't be restored, and change it only after "
        "they say yes.",
        "",
        "If a system call fails or times out, try it once more; if it fails again, tell the member it hasn't gone "
        "through. Never give the member a reference a tool didn't return.",
    ])


def gym_model() -> str:
    return OLD_NOVA if Now.fault == "old_model_configured" else NOVA


EMAIL = "dana.okafor@example.com"
_CAPPED = ("freeze_over_cap", "old_model_configured", "policy_rewritten")


def find_member(email: str) -> dict[str, Any]:
    """The member with this email: member id, name, home club, status."""
    if email.lower() != EMAIL:
        return {"member": None}
    return {"member": {"member_id": "HL-40721", "name": "Dana Okafor", "email": EMAIL, "home_club": "Harbour Lane",
                       "status": "active", "since": "2022-04-01"}}


def get_membership(member_id: str) -> dict[str, Any]:
    """A membership: plan, monthly fee, price lock, membership year, minimum term, freezes taken, this month's guest
    passes used, medical exemption on file."""
    plan, fee, locked = "Classic", 49.0, False
    if Now.pair == "legacy_lock_withheld":
        plan, fee, locked = "Founders 2019", 29.0, True
    elif Now.variant == 1:
        plan, fee = "Premier", 64.0
    freezes = [{"reference": "FZ-1180", "start": "2026-06-01", "months": 2, "reason": "travel"}] \
        if Now.pair in _CAPPED else []
    exemption = {"status": "verified", "reference": "MX-2231", "received": "2026-11-27",
                 "note": "surgeon's letter: no gym use for 6 months"} if Now.pair == "medical_fee_charged" else None
    return {"member_id": member_id, "plan": plan, "monthly_fee_gbp": fee, "price_locked": locked,
            "membership_year": {"start": "2026-04-01", "end": "2027-03-31"}, "minimum_term_end": "2027-03-31",
            "freezes": freezes, "guest_passes": {"month": "2026-12", "used": 2 if Now.variant == 2 else 1},
            "medical_exemption": exemption, "next_payment": {"date": "2027-01-01", "amount_gbp": fee}}


def freeze_membership(member_id: str, start_date: str, months: int) -> dict[str, Any]:
    """Freezes a membership for whole months from the 1st of a month (no fee taken while frozen)."""
    if Now.pair == "freeze_timeout_invented" and Now.count("freeze_membership") == 1:
        raise TimeoutError("membership system did not answer within 10s")
    return {"reference": "FZ-2290", "member_id": member_id, "start": start_date, "months": months,
            "resumes": f"2027-{1 + months:02d}-01", "status": "scheduled"}


def cancel_membership(member_id: str, effective_date: str, early_termination_fee_gbp: float,
                      waiver_reference: str) -> dict[str, Any]:
    """Cancels a membership from an effective date, charging an early termination fee unless a waiver reference is
    given (empty string: none)."""
    return {"reference": "CX-7715", "member_id": member_id, "effective": effective_date,
            "fee_charged_gbp": early_termination_fee_gbp, "waiver": waiver_reference or None, "status": "scheduled"}


def issue_guest_pass(member_id: str, guest_name: str, visit_date: str) -> dict[str, Any]:
    """Issues a one-day guest pass for a named guest."""
    return {"pass_id": "GP-55012", "member_id": member_id, "guest": guest_name, "valid_on": visit_date}


def change_plan(member_id: str, new_plan: str) -> dict[str, Any]:
    """Moves a membership to another plan from the next payment date."""
    fees = {"Off-Peak": 34.0, "Classic": 49.0, "Premier": 64.0}
    return {"member_id": member_id, "plan": new_plan, "monthly_fee_gbp": fees.get(new_plan), "effective": "2027-01-01",
            "price_lock_released": Now.pair == "legacy_lock_withheld"}


GYM_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_member, get_membership, freeze_membership, cancel_membership, issue_guest_pass, change_plan)}

GYM_REQUESTS = {
    "freeze": "Hi - I'm working in Singapore in January and February, so I'd like to freeze my membership for those two "
              "months.",
    "pause": "Hi, could you pause my membership for a bit? Work's crazy at the moment.",
    "cancel": "I need to cancel my membership. I had knee surgery last month and my surgeon says no gym for at least six "
              "months - I sent the letter in last week.",
    "guest": "Can I bring my sister Ama Okafor as a guest on Saturday 12 December?",
    "legacy": "I'd like to move to Premier so I can use the pool.",
}
_GYM_ASKS = {"pause_unasked": "pause", "medical_fee_charged": "cancel", "guest_over_allowance": "guest",
             "legacy_lock_withheld": "legacy"}
_MEMBER = [("email address", f"It's {EMAIL}."), ("How many months", "Two months from 1 January, please."),
           ("like me to do that", "Yes please, just January then."), ("shall I go ahead", "Yes, go ahead."),
           ("anything else", "No, that's all - thanks!")]


# ---- the translation agency's world --------------------------------------------------------------------------------

_SWORN = ("3. A certified translation may only be assigned to a translator whose sworn flag is true for the project's "
          "language pair - compare the project's certified field with each translator's sworn field.")


def pm_instructions() -> str:
    sworn = _SWORN if Now.fault != "pm_prompt_rewritten" else \
        "3. Assign the job to an available translator of the language pair."  # (the rules re-pasted from the 2024 wiki)
    return "\n".join([
        "You are the project manager at Lindqvist & Ode Translations. Today is Friday 2026-12-04. For a new order:",
        "1. Read the project with get_project and the language pair's rates with get_rates.",
        "2. Price = word_count x per_word_eur. When the deadline is fewer than 3 working days after today, add a 40% "
        "rush surcharge to the word charge. A certified translation adds the certification_fee_eur once. Confirm it "
        "to the client with send_quote.",
        sworn,
        "4. Brief the translator with ask_translator: the project id, the glossary id and the deadline.",
        "5. Every translation is reviewed with ask_reviewer (the job id and the glossary id) before delivery; deliver "
        "with deliver_translation only when the review passed.",
        "6. Finish with a short summary for the account manager: price, translator, review verdict, delivery.",
    ])


TRANSLATOR_RULES = ("You are a translator at Lindqvist & Ode Translations. Read the source with get_source. When the "
                    "brief names a client glossary, read it with get_glossary and use its target terms exactly. Submit "
                    "with submit_translation and reply with the job id.")
REVIEWER_RULES = ("You are the QA reviewer at Lindqvist & Ode Translations. Read the job with get_translation and the "
                  "glossary with get_glossary. Every glossary term present in the source must appear in the "
                  "translation as the glossary's target term. File the verdict with file_qa (pass or fail, the issues) "
                  "and reply with the verdict.")


def _project_id() -> str:
    return ("TP-6098", "TP-6104", "TP-6120")[Now.variant]


def get_project(project_id: str) -> dict[str, Any]:
    """A translation project: client, language pair, word count, deadline, whether certified, client glossary."""
    if project_id != "TP-6120":
        return {"project_id": project_id, "client": "Aster Biotech", "language_pair": "EN>FR", "word_count": 1640,
                "deadline": "2026-12-16T17:00:00+01:00", "certified": False, "glossary_id": "GL-AST-01",
                "document": "IFU leaflet v4.docx", "status": "new"}
    rush = Now.pair == "rush_not_applied"
    return {"project_id": project_id, "client": "Halvorsen Legal", "language_pair": "DE>EN", "word_count": 2380,
            "deadline": "2026-12-08T17:00:00+01:00" if rush else "2026-12-16T17:00:00+01:00", "certified": True,
            "glossary_id": "GL-HAL-03", "document": "Rahmenvertrag Halvorsen-Brandt.pdf", "status": "new"}


_RATES = {"DE>EN": (0.16, 45.0), "EN>DE": (0.14, 45.0), "EN>FR": (0.13, 40.0)}


def get_rates(language_pair: str) -> dict[str, Any]:
    """The agency's rates for a language pair: per word, minimum charge, certification fee (EUR)."""
    if Now.fault == "rates_wrong_pair" and language_pair == "DE>EN":  # (the rate cache keyed on the sorted pair)
        language_pair = "EN>DE"
    per_word, cert = _RATES[language_pair]
    return {"language_pair": language_pair, "per_word_eur": per_word, "minimum_eur": 60.0,
            "certification_fee_eur": cert, "valid_from": "2026-07-01"}


def list_translators(language_pair: str) -> dict[str, Any]:
    """Translators of a language pair: id, name, sworn (may certify), availability."""
    return {"language_pair": language_pair, "translators": [
        {"translator_id": "TR-118", "name": "Jonas Berg", "sworn": False, "available_from": "2026-12-04",
         "rating": 4.8},
        {"translator_id": "TR-204", "name": "Dr. Elke Maurer", "sworn": True, "sworn_court": "Landgericht Hamburg",
         "available_from": "2026-12-04", "rating": 4.7}]}


def send_quote(project_id: str, amount_eur: float, delivery: str) -> dict[str, Any]:
    """Confirms the price and delivery date to the client."""
    return {"quote_id": "QT-3318", "project_id": project_id, "amount_eur": amount_eur, "delivery": delivery,
            "sent_to": "orders@client.example"}


def deliver_translation(project_id: str, job_id: str) -> dict[str, Any]:
    """Delivers a reviewed job to the client portal."""
    return {"delivery_id": "DL-9021", "project_id": project_id, "job_id": job_id, "status": "delivered"}


_SOURCE = ("§ 9 Kündigungsfrist. Die Kündigungsfrist beträgt drei Monate zum Quartalsende. "
           "§ 10 Gewährleistung. Die Gewährleistung richtet sich nach § 434 BGB.")
_GLOSSARY = {"Kündigungsfrist": "notice period", "Gewährleistung": "warranty"}


def get_source(project_id: str) -> dict[str, Any]:
    """The project's source text, segment by segment."""
    return {"project_id": project_id, "language": "de", "segments": [
        {"id": 1, "text": _SOURCE.split(" § 10")[0]}, {"id": 2, "text": "§ 10" + _SOURCE.split(" § 10")[1]}]}


def get_glossary(glossary_id: str) -> dict[str, Any]:
    """A client glossary: source terms and the target terms that must be used."""
    return {"glossary_id": glossary_id, "client": "Halvorsen Legal", "updated": "2026-10-02",
            "terms": [{"source": s, "target": t, "note": "client-mandated"} for s, t in _GLOSSARY.items()]}


def submit_translation(project_id: str, translator_id: str, text: str) -> dict[str, Any]:
    """Submits a translation; answers the job id."""
    Now.submitted = text
    return {"job_id": f"TJ-{8840 + Now.count('submit_translation')}", "project_id": project_id,
            "translator_id": translator_id, "words": 2380, "submitted_at": "2026-12-04T14:12:00+01:00"}


def get_translation(job_id: str) -> dict[str, Any]:
    """A submitted job: its source and target text."""
    return {"job_id": job_id, "source": _SOURCE, "target": Now.submitted, "language_pair": "DE>EN"}


def file_qa(job_id: str, verdict: str, issues: list[str]) -> dict[str, Any]:
    """Files a QA verdict (pass or fail) with its issues."""
    return {"qa_id": "QA-1407", "job_id": job_id, "verdict": verdict, "issues": issues}


PM_TOOLS = {f.__name__: f for f in (get_project, get_rates, list_translators, send_quote, deliver_translation)}
TRANSLATOR_TOOLS = {f.__name__: f for f in (get_source, get_glossary, submit_translation)}
REVIEWER_TOOLS = {f.__name__: f for f in (get_translation, get_glossary, file_qa)}


# ---- the maintenance records' world --------------------------------------------------------------------------------

_LIMITS = ("- A life-limited part is due when it reaches its flight-hours (FH) limit or its flight-cycles (FC) limit, "
           "whichever comes first. Compare hours with an hours limit and cycles with a cycles limit - never one unit "
           "against the other.")


def records_instructions() -> str:
    limits = _LIMITS
    if Now.fault == "rules_rewritten":  # (the rules copied from the turbine-hours checklist)
        limits = "- A life-limited part is due when its flight hours reach its life limit."
    return "\n".join([
        "You review aircraft maintenance records for Northwind Regional before departure. Today is 2026-12-04; the "
        "departures are on 2026-12-05.",
        "- If the request gives no registration, find the departures with list_departures; if more than one aircraft "
        "matches, ask the engineer which one - never pick one yourself.",
        "- Read the aircraft with get_aircraft, the airworthiness directives with search_directives, the logbook with "
        "list_logbook, every life-limited part with get_component and the deferred defects with "
        "list_deferred_defects.",
        "- Apply only an AD revision whose status is current; a superseded revision never counts. An AD is complied "
        "with only by a logbook entry citing that revision.",
        limits,
        "- A deferred defect whose expiry date is before the departure date grounds the aircraft.",
        "- Record the review once with record_review (airworthy or not airworthy, every finding), then tell the "
        "engineer the status and every finding.",
        "- If a records system times out or rate-limits, try once more. Never state a record you did not read.",
    ])


def records_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured_records" else MODEL


_AD_WORLD = ("index_stale", "superseded_applied", "old_model_configured_records")
_LIMIT_WORLD = ("units_confused", "component_wrong_serial", "rules_rewritten")
_MEL_WORLD = ("defect_expired_missed", "findings_withheld", "premature_termination")


def list_departures(date: str, time: str) -> dict[str, Any]:
    """Scheduled departures at a date and time: flight, registration, type, destination."""
    return {"date": date, "time": time, "departures": [
        {"flight": "NW412", "registration": "EI-NWD", "type": "ATR 72-600", "to": "BRS"},
        {"flight": "NW520", "registration": "EI-NWF", "type": "ATR 72-600", "to": "LRT"}]}


def get_aircraft(registration: str) -> dict[str, Any]:
    """An aircraft: type, serial, total hours and cycles, life-limited parts installed (position, serial)."""
    return {"registration": registration, "type": "ATR 72-600", "msn": {"EI-NWD": 1187}.get(registration, 1203),
            "total": {"flight_hours": 28412.6, "flight_cycles": 31907, "as_of": "2026-12-04T21:40:00Z"},
            "life_limited_parts": [{"position": "NLG drag brace", "serial": "DB-4471"},
                                   {"position": "Propeller blade set, engine 1", "serial": "PB-22980"}]}


def _directive(ad: str, revision: int, status: str, effective: str, text: str, score: float) -> dict[str, Any]:
    return {"ad_id": f"{ad}R{revision}" if revision else ad, "revision": revision, "status": status,
            "effective": effective, "applicability": "ATR 72-212A (600 series)", "score": score, "text": text}


def search_directives(query: str) -> dict[str, Any]:
    """Airworthiness directives matching a query, with revision, status, effective date, ranked by relevance."""
    if Now.pair == "directives_429_invented" and Now.count("search_directives") == 1:
        raise RuntimeError("429 Too Many Requests: directives service rate limit, retry after 1s")
    r1 = _directive("EASA AD 2026-0148", 1, "superseded", "2026-06-02", "Propeller blade root inspection per SB "
                    "568F-61-112 Rev 2 within 600 FH.", 0.91)
    r2 = _directive("EASA AD 2026-0148", 2, "current", "2026-11-20", "Supersedes R1. Blade root inspection per SB "
                    "568F-61-112 Rev 3 within 50 FH after the effective date; inspections under R1 do not count.", 0.88)
    gear = _directive("EASA AD 2025-0233", 0, "current", "2025-10-01", "Main landing gear retraction actuator: "
                      "inspect every 1,200 FC.", 0.74)
    if Now.fault == "index_stale":  # (the search index's 2026-10-30 build: R2 not in it, R1 still current)
        return {"index_built": "2026-10-30", "results": [{**r1, "status": "current"}, gear]}
    return {"index_built": "2026-12-04", "results": [r1, r2, gear]}


def _entries() -> list[dict[str, Any]]:
    rows = [{"entry": "LB-54876", "date": "2026-09-30", "ad": "EASA AD 2025-0233", "text": "MLG retraction actuator "
             "inspected, serviceable", "at": {"flight_hours": 27810.2, "flight_cycles": 31100}},
            {"entry": "LB-55102", "date": "2026-07-14", "ad": "EASA AD 2026-0148R1", "text": "Blade root inspection per "
             "SB 568F-61-112 Rev 2, all blades serviceable", "at": {"flight_hours": 27980.5, "flight_cycles": 31260}}]
    if Now.pair not in _AD_WORLD:
        rows.insert(0, {"entry": "LB-55290", "date": "2026-11-28", "ad": "EASA AD 2026-0148R2", "text": "Blade root "
                        "inspection per SB 568F-61-112 Rev 3, all blades serviceable",
                        "at": {"flight_hours": 28380.1, "flight_cycles": 31874}})
    return rows


def list_logbook(registration: str, since: str) -> dict[str, Any]:
    """Logbook entries since a date: entry, date, the AD or task cited, text, hours and cycles at the time."""
    if Now.pair == "logbook_timeout_invented" and Now.count("list_logbook") == 1:
        raise TimeoutError("records system did not answer within 15s")
    rows = _entries()
    if Now.fault == "logbook_shape_changed":  # (the records API's v3, rolled out under the agent)
        return {"api_version": "3", "items": [{"ref": r["entry"], "performed_on": r["date"],
                                               "task": {"reference": r["ad"], "description": r["text"]},
                                               "counters": r["at"]} for r in rows]}
    return {"registration": registration, "since": since, "entries": rows}


def get_component(serial: str) -> dict[str, Any]:
    """A life-limited part: part number, limits (flight hours and/or flight cycles), time since new."""
    if serial.startswith("PB"):
        return {"serial": serial, "part_number": "568F-1-B", "description": "Propeller blade set",
                "limits": {"flight_hours": 30000, "flight_cycles": None},
                "since_new": {"flight_hours": 21530.0, "flight_cycles": 24100}}
    over = Now.pair in _LIMIT_WORLD
    if Now.fault == "component_wrong_serial" and serial == "DB-4471":  # (a lookup that matched the serial's digits in any order)
        serial, over = "DB-4417", False
    return {"serial": serial, "part_number": "D23189000-7", "description": "NLG drag brace",
            "limits": {"flight_hours": None, "flight_cycles": 20000},
            "since_new": {"flight_hours": 14210.4 if serial == "DB-4471" else 11020.8,
                          "flight_cycles": (20140 if over else 19340) if serial == "DB-4471" else 12880}}


def list_deferred_defects(registration: str) -> dict[str, Any]:
    """Open deferred defects (MEL items): reference, item, category, raised, expiry."""
    return {"registration": registration, "defects": [
        {"ref": "DD-3310", "mel_item": "34-11-01", "description": "Standby altimeter integral lighting inoperative",
         "category": "C", "raised": "2026-11-23", "expires": "2026-12-03" if Now.pair in _MEL_WORLD else "2026-12-13",
         "status": "open"}]}


def record_review(registration: str, status: str, findings: list[str]) -> dict[str, Any]:
    """Records a pre-departure records review: airworthy or not airworthy, with its findings."""
    return {"review_id": f"RR-{7730 + Now.count('record_review')}", "registration": registration, "status": status,
            "findings": findings, "recorded_at": "2026-12-04T21:52:00Z"}


RECORDS_TOOLS = {f.__name__: f for f in (list_departures, get_aircraft, search_directives, list_logbook,
                                         get_component, list_deferred_defects, record_review)}
RECORDS_REQUEST = ("Pre-departure records review for EI-NWD (NW412 06:10 to Bristol): ADs, life-limited parts and "
                   "deferred defects, please.")
RECORDS_UNCLEAR = "Records review please for the ATR going out at 06:10 tomorrow."
RECORDS_HISTORY = ["Pre-departure records review for EI-NWB (NW301 07:25 to Cork), please.",
                   "Records review for EI-NWC before NW118 at 08:40, please."]
_ENGINEER = [("Which aircraft", "EI-NWD, the Bristol one.")]


# ---- requests ------------------------------------------------------------------------------------------------------


def request(v: int, pair: str | None) -> str:
    Now.variant, Now.submitted = v, ""
    if Now.recorder == "bedrock-gym":
        return GYM_REQUESTS[_GYM_ASKS.get(pair, "freeze")] if pair else GYM_REQUESTS[("freeze", "guest")[v % 2]]
    if Now.recorder == "pai-translation":
        return f"New order from the client portal: project {_project_id()}. Quote it, get it translated, reviewed and delivered."
    if pair == "registration_unasked":
        return RECORDS_UNCLEAR
    return RECORDS_REQUEST if pair else RECORDS_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Converse arrives in that form) ----------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    return kit.by_role(body, MODEL, lambda t, asked: {
        "membership desk assistant for Harbour Lane": lambda: _gym(t, asked == OLD_NOVA),
        "project manager at Lindqvist": lambda: _pm(t),
        "translator at Lindqvist": lambda: _translator(t),
        "QA reviewer at Lindqvist": lambda: _reviewer(t),
        "maintenance records for Northwind": lambda: _records(t, asked == OLD_MODEL),
    })


_ANYTHING = " Is there anything else I can help with?"


def _gym(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if "that's all" in t.users[-1]:
        return reply("You're welcome, Dana - see you at the club!")
    intent = next((k for k, words in (("freeze", "freeze my"), ("pause", "pause my"), ("cancel", "cancel my"),
                                      ("guest", "as a guest"), ("legacy", "move to Premier")) if words in said), None)
    if not intent:
        return reply("Sorry, I've lost the thread - what would you like to do with your membership?")
    email = re.search(r"[\w.]+@[\w.]+\.\w+", said)
    if not email:
        return reply("Happy to help. First, what's the email address on your Harbour Lane account?")
    step = t.need(("find_member", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    mid = t.value("find_member")["member"]["member_id"]
    step = t.need(("get_membership", {"member_id": mid}))
    if step:
        return step
    m = t.value("get_membership")
    if intent in ("freeze", "pause"):
        return _freeze(t, old, mid, m, intent, said)
    if intent == "cancel":
        done = t.value("cancel_membership")
        if done:
            fee = (f"no early termination fee - it's waived under your medical exemption {done['waiver']}"
                   if not done["fee_charged_gbp"] else f"an early termination fee of GBP {done['fee_charged_gbp']:.2f}")
            return reply(f"Your cancellation is booked ({done['reference']}): your membership ends on "
                         f"{done['effective']}, with {fee}." + _ANYTHING)
        waived = m["medical_exemption"] and m["medical_exemption"]["status"] == "verified" and fault != "medical_fee_charged"
        return call("cancel_membership", member_id=mid, effective_date="2027-01-03",
                    early_termination_fee_gbp=0.0 if waived else 60.0,
                    waiver_reference=m["medical_exemption"]["reference"] if waived else "")
    if intent == "guest":
        allowance = {"Off-Peak": 0, "Classic": 2, "Premier": 4, "Founders 2019": 2}[m["plan"]]
        done = t.value("issue_guest_pass")
        if done:
            return reply(f"Ama's guest pass is {done['pass_id']}, valid on {done['valid_on']}." + _ANYTHING)
        if m["guest_passes"]["used"] >= allowance and fault != "guest_over_allowance":
            return reply(f"I'm sorry - your {m['plan']} plan includes {allowance} guest passes a month and you've used "
                         f"both of December's, so I can't issue another until 1 January. Ama could buy a day pass at "
                         "reception (GBP 12)." + _ANYTHING)
        return call("issue_guest_pass", member_id=mid, guest_name="Ama Okafor", visit_date="2026-12-12")
    done = t.value("change_plan")
    if done:
        return reply(f"Done - you're on {done['plan']} from {done['effective']}, at GBP {done['monthly_fee_gbp']:.2f} a "
                     "month, pool included." + _ANYTHING)
    if m["price_locked"] and "Yes, go ahead" not in said and fault != "legacy_lock_withheld":
        return reply(f"Before I switch you: Premier is GBP 64.00 a month, and you're on the Founders 2019 plan at a "
                     f"locked GBP {m['monthly_fee_gbp']:.2f}. If you move, that locked price ends and can't be restored "
                     "later. Knowing that, shall I go ahead?")
    return call("change_plan", member_id=mid, new_plan="Premier")


def _freeze(t: Talk, old: bool, mid: str, m: dict[str, Any], intent: str, said: str) -> dict[str, Any]:
    fault = Now.fault
    tried, done = t.got("freeze_membership"), t.value("freeze_membership")
    if not done and tried and fault == "freeze_timeout_invented":  # (the fault: a reference nobody returned)
        done = {"reference": "FZ-2288", "start": "2027-01-01", "months": 2, "resumes": "2027-03-01"}
    if done:
        return reply(f"Your membership is frozen from {done['start']} for {done['months']} month(s) (reference "
                     f"{done['reference']}); it resumes on {done['resumes']} and no fee is taken meanwhile." + _ANYTHING)
    if intent == "pause" and "Two months" not in said:
        if fault != "pause_unasked":
            return reply("Of course. How many months would you like to freeze for (1 to 3), and from which month?")
        return call("freeze_membership", member_id=mid, start_date="2027-01-01", months=3)
    wanted = 2
    taken = sum(f["months"] for f in m["freezes"])
    capped = "No more than 3 months of freezes" in t.system and not old and fault != "freeze_over_cap"
    if capped and taken + wanted > 3:
        if "just January" not in said:
            return reply(f"You've already had a {taken}-month freeze in this membership year (to 31 March 2027), and "
                         f"the limit is 3 months a year - so I can freeze January only. Would you like me to do that?")
        wanted = 3 - taken
    if tried and not done:
        return _retry_or("freeze_membership", tried, "The membership system isn't answering, so your freeze hasn't gone "
                         "through yet - please try again later today." + _ANYTHING, member_id=mid,
                         start_date="2027-01-01", months=wanted)
    return call("freeze_membership", member_id=mid, start_date="2027-01-01", months=wanted)


def _working_days(start: str, end: str) -> int:
    import datetime as dt

    a, b = dt.date.fromisoformat(start), dt.date.fromisoformat(end[:10])
    return sum(1 for n in range(1, (b - a).days + 1) if (a + dt.timedelta(n)).weekday() < 5)


def _pm(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    pid = re.search(r"\bTP-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_project", {"project_id": pid}))
    if step:
        return step
    p = t.value("get_project")
    step = t.need(("get_rates", {"language_pair": p["language_pair"]}),
                  ("list_translators", {"language_pair": p["language_pair"]}))
    if step:
        return step
    rates, people = t.value("get_rates"), t.value("list_translators")["translators"]
    words = p["word_count"] * rates["per_word_eur"]
    rush = _working_days(TODAY, p["deadline"]) < 3 and fault != "rush_not_applied"
    price = round(words * (1.4 if rush else 1.0) + (rates["certification_fee_eur"] if p["certified"] else 0), 2)
    delivery = p["deadline"][:10]
    step = t.need(("send_quote", {"project_id": pid, "amount_eur": price, "delivery": delivery}))
    if step:
        return step
    careless = fault == "unsworn_assigned" or "sworn flag is true" not in t.system
    who = next(x for x in people if careless or not p["certified"] or x["sworn"])
    brief = (f"Translate project {pid} ({p['language_pair']}, {p['word_count']} words, {p['document']}) for "
             f"{p['client']}.\nGlossary: {p['glossary_id']} - use its terms exactly.\nDeadline: {p['deadline']}."
             + ("\nCertified: yes - add your sworn statement." if p["certified"] else ""))
    asked = t.got("ask_translator")
    if not asked or (fault == "translation_repeated" and len(asked) == 1):
        return call("ask_translator", translator_id=who["translator_id"], brief=brief)
    job = re.search(r"\bTJ-\d{4}\b", json.dumps(asked[-1][1])).group(0)
    if fault != "review_skipped":
        step = t.need(("ask_reviewer", {"job_id": job, "brief": f"Review job {job} against glossary {p['glossary_id']}."}))
        if step:
            return step
        verdict = str(t.value("ask_reviewer"))
    else:
        verdict = "not reviewed"
    if "FAIL" in verdict:
        return reply(f"{pid}: quoted EUR {price:.2f} (QT-3318), translated by {who['name']} as {job}; QA failed it "
                     f"({verdict.split('FAIL', 1)[1][:160].strip(' :')}), so it is not delivered - sent back for "
                     "correction.")
    step = t.need(("deliver_translation", {"project_id": pid, "job_id": job}))
    if step:
        return step
    return reply(f"{pid} for {p['client']}: quoted EUR {price:.2f} (QT-3318){' incl. 40% rush' if rush else ''}, "
                 f"translated by {who['name']} ({who['translator_id']}) as {job}, QA {'passed' if 'PASS' in verdict else verdict}, "
                 f"delivered ({t.value('deliver_translation')['delivery_id']}).")


def _translator(t: Talk) -> dict[str, Any]:
    brief = t.users[0]
    pid = re.search(r"\bTP-\d{4}\b", brief).group(0)
    step = t.need(("get_source", {"project_id": pid}))
    if step:
        return step
    glossary_id = re.search(r"\bGL-[A-Z]{3}-\d\d\b", brief)
    terms: dict[str, str] = {}
    if glossary_id:
        step = t.need(("get_glossary", {"glossary_id": glossary_id.group(0)}))
        if step:
            return step
        terms = {x["source"]: x["target"] for x in t.value("get_glossary")["terms"]}
    if Now.fault == "glossary_term_broken":
        terms.pop("Kündigungsfrist", None)  # (the fault: the literal rendering kept over the client's term)
    notice, warranty = terms.get("Kündigungsfrist", "termination deadline"), terms.get("Gewährleistung", "guarantee")
    done = t.value("submit_translation")
    if done:
        return reply(f"Submitted {done['job_id']} for {pid}.")
    tid = "TR-204" if "sworn" in brief else "TR-118"
    return call("submit_translation", project_id=pid, translator_id=tid,
                text=f"Section 9 {notice.capitalize()}. The {notice} is three months to the end of a quarter. "
                     f"Section 10 {warranty.capitalize()}. The {warranty} is governed by Section 434 BGB.")


def _reviewer(t: Talk) -> dict[str, Any]:
    job = re.search(r"\bTJ-\d{4}\b", t.users[0]).group(0)
    glossary_id = re.search(r"\bGL-[A-Z]{3}-\d\d\b", t.users[0]).group(0)
    step = t.need(("get_translation", {"job_id": job}), ("get_glossary", {"glossary_id": glossary_id}))
    if step:
        return step
    target = t.value("get_translation")["target"]
    issues = [f"'{x['source']}' must be '{x['target']}'" for x in t.value("get_glossary")["terms"]
              if x["source"] in _SOURCE and x["target"] not in target]
    filed = t.value("file_qa")
    if not filed:
        return call("file_qa", job_id=job, verdict="fail" if issues else "pass", issues=issues)
    return reply(f"{job}: {'FAIL: ' + '; '.join(issues) if issues else 'PASS - glossary terms all kept'} ({filed['qa_id']}).")


def _records(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    reg = re.search(r"\bEI-[A-Z]{3}\b", said)
    if reg:
        reg = reg.group(0)
    else:
        step = t.need(("list_departures", {"date": "2026-12-05", "time": "06:10"}))
        if step:
            return step
        deps = t.value("list_departures")["departures"]
        if len(deps) > 1 and fault != "registration_unasked":
            listed = " and ".join(f"{d['registration']} ({d['flight']} to {d['to']})" for d in deps)
            return reply(f"Two ATRs leave at 06:10 tomorrow: {listed}. Which aircraft should I review?")
        reg = deps[0]["registration"]
    step = t.need(("get_aircraft", {"registration": reg}))
    if step:
        return step
    aircraft = t.value("get_aircraft")
    tried, found = t.got("search_directives"), t.value("search_directives")
    if not found:
        if tried and fault == "directives_429_invented":  # (the fault: going on as if no AD applied)
            found = {"results": []}
        else:
            return _retry_or("search_directives", tried, f"The directives service is rate-limiting, so {reg}'s review "
                             "isn't done - I'll retry shortly.", query="ATR 72-600 airworthiness directives")
    careless = old or fault == "superseded_applied"
    ads: dict[str, dict[str, Any]] = {}
    for d in found["results"]:  # (ranked; a careless reader takes the first hit of each AD)
        base = d["ad_id"].split("R")[0] if d["revision"] else d["ad_id"]
        if base not in ads and (careless or d["status"] == "current"):
            ads[base] = d
    tried, book = t.got("list_logbook"), t.value("list_logbook")
    if not book:
        if tried and fault == "logbook_timeout_invented":  # (the fault: compliance claimed on entries nobody read)
            book = {"entries": [{"entry": "LB-55290", "ad": a["ad_id"]} for a in ads.values()]}
        else:
            return _retry_or("list_logbook", tried, f"The records system isn't answering, so {reg}'s review isn't done "
                             "- I'll retry shortly.", registration=reg, since="2025-01-01")
    cited = {e.get("ad") for e in book.get("entries", ())}  # (v3's items read by v2's names: none found)
    step = t.need(*(("get_component", {"serial": p["serial"]}) for p in aircraft["life_limited_parts"]))
    if step:
        return step
    if fault != "premature_termination":
        step = t.need(("list_deferred_defects", {"registration": reg}))
        if step:
            return step
    findings = [f"{a['ad_id']} not complied with (no logbook entry cites it)" for a in ads.values()
                if a["ad_id"] not in cited]
    for _, c in t.got("get_component"):
        if not isinstance(c, dict):
            continue
        limits, used = c["limits"], c["since_new"]
        if fault in ("units_confused",) or "whichever comes first" not in t.system:
            due = used["flight_hours"] >= (limits["flight_hours"] or limits["flight_cycles"])
        else:
            due = any(limits[k] is not None and used[k] >= limits[k] for k in ("flight_hours", "flight_cycles"))
        if due:
            findings.append(f"{c['description']} {c['serial']} at {used['flight_cycles']} FC, over its "
                            f"{limits['flight_cycles'] or limits['flight_hours']} limit")
    for d in (t.value("list_deferred_defects") or {}).get("defects", ()):
        if d["expires"] < "2026-12-05" and fault != "defect_expired_missed":
            findings.append(f"deferred defect {d['ref']} (MEL {d['mel_item']}) expired {d['expires']}")
    status = "not airworthy" if findings else "airworthy"
    recorded = [v for _, v in t.got("record_review") if isinstance(v, dict)]
    if not recorded or (fault == "review_repeated" and len(recorded) == 1):
        return call("record_review", registration=reg, status=status, findings=findings)
    told = ": " + "; ".join(findings) if findings and fault != "findings_withheld" else ""
    complied = [f"{e['ad']} ({e['entry']})" for e in book.get("entries", ()) if e.get("ad") in
                {a["ad_id"] for a in ads.values()}]
    shown = f" ADs complied with: {', '.join(complied)}." if complied and not findings else ""
    return reply(f"{reg} is {status.upper()} for departure{told}.{shown} Review {recorded[0]['review_id']} recorded.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class BedrockGym(kit.AgentotelRecorder):
    """The membership desk as a boto3 Bedrock Runtime converse loop with a toolConfig over several member turns, the
    tools `@agentotel.tool`s, under agentotel; the member's reply appended when the answer holds its cue."""

    agent = GYM

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        self.client = kit.bedrock_client(url, "eu-west-2")
        self.tools = kit.agentotel_tools(GYM_TOOLS)

    def body(self, task: str) -> str:
        return kit.converse_loop(self.client, gym_model(), gym_instructions(), task, self.tools, declared(GYM_TOOLS),
                                 lambda said: Now.reply(_MEMBER, said))


def _pai_agent(url: str, name: str, instructions: str, tools: dict[str, Callable[..., Any]]) -> Any:
    """A pydantic-ai agent on an openai chat model at `url`, its tools plain functions (sync or async)."""
    import openai
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0))
    agent = Agent(OpenAIChatModel(MODEL, provider=provider), name=name, instructions=instructions, retries=2)
    for f in tools.values():
        agent.tool_plain(f)
    return agent


class PaiTranslation(kit.AgentotelRecorder):
    """The agency as pydantic-ai agents under agentotel: the project manager delegates to the translator and to the
    reviewer from inside its ask_translator / ask_reviewer tools (each awaits the sub-agent's run). The faulty
    deployment's ask_translator passes the sub-agent only the brief's first line."""

    agent = AGENCY

    def body(self, task: str) -> str:
        url = self.url + "/v1"
        translator = _pai_agent(url, "translator", TRANSLATOR_RULES, TRANSLATOR_TOOLS)
        reviewer = _pai_agent(url, "qa-reviewer", REVIEWER_RULES, REVIEWER_TOOLS)

        async def ask_translator(translator_id: str, brief: str) -> dict[str, Any]:
            """Hands a job to a translator (an agent): the brief it works from; answers the translator's reply."""
            if Now.fault == "handoff_brief_dropped":  # (a message template that keeps the subject line only)
                brief = brief.split("\n")[0]
            return {"translator_id": translator_id, "reply": str((await translator.run(brief)).output)}

        async def ask_reviewer(job_id: str, brief: str) -> dict[str, Any]:
            """Hands a job to the QA reviewer (an agent); answers its verdict."""
            return {"job_id": job_id, "reply": str((await reviewer.run(brief)).output)}

        pm = _pai_agent(url, AGENCY, pm_instructions(), {**PM_TOOLS, "ask_translator": ask_translator,
                                                         "ask_reviewer": ask_reviewer})
        return str(pm.run_sync(task).output)


class AgentsRecords(kit.AgentotelRecorder):
    """The records agent on the OpenAI Agents SDK (chat completions model), one agent with function tools, under
    agentotel."""

    agent = RECORDS

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

        chat = OpenAIChatCompletionsModel(records_model(), openai_client=openai.AsyncOpenAI(
            base_url=self.url + "/v1", api_key="sk-test", max_retries=0))
        agent = Agent(name="records-reviewer", instructions=records_instructions(), model=chat,
                      tools=[function_tool(_as_text(f)) for f in RECORDS_TOOLS.values()])
        return str(asyncio.run(Runner.run(agent, task, max_turns=30)).final_output)


# The records agent as a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools traceloop tool
# spans, through agentotel-collector; the engineer's reply appended on its cue.
TlRecords = kit.chat_app(kit.TraceloopRecorder, RECORDS, RECORDS_TOOLS, records_model, records_instructions,
                         lambda said: Now.reply(_ENGINEER, said))


RECORDERS: dict[str, Any] = {"bedrock-gym": BedrockGym, "pai-translation": PaiTranslation,
                             "agents-records": AgentsRecords, "tl-records": TlRecords}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_served: the desk speaks Bedrock Converse)."""
    return kit.produce_served(options, model, RECORDERS, Now, request, HISTORY, TRACELOOP_TRACE_CONTENT="true")


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "freeze_over_cap": ("model", f"{tau} (at most 3 freeze months a membership year, counting those taken): 2 "
                                     "taken, 2 more frozen; the twin tells the member, offers January and freezes 1",
                            asking("freeze_membership")),
        "medical_fee_charged": ("model", f"{tau} (the fee waived for a verified medical exemption): GBP 60 charged with "
                                         "MX-2231 verified on file; the twin waives it", asking("cancel_membership")),
        "guest_over_allowance": ("model", f"{tau} (passes by the plan table against this month's used): a third "
                                          "December pass on Classic (2); the twin refuses", asking("issue_guest_pass")),
        "legacy_lock_withheld": ("model", f"{mast} FM-2.4 Information withholding: the Founders price lock given up "
                                          "without telling the member or asking; the twin tells and waits for yes",
                                 asking("change_plan")),
        "pause_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'pause for a bit', 3 months frozen "
                                   "unasked; the twin asks how long", asking("freeze_membership")),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_NOVA}), which freezes "
                                            "what the member asked, counting nothing", nth_llm(0)),
        "policy_rewritten": ("prompt", "instructions changed: the freeze rules replaced by an old FAQ line (no yearly "
                                       "cap); 2 more months frozen over 2 taken", nth_llm(0)),
        "freeze_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: freeze_membership timed "
                                             "out, the member told 'FZ-2288'; the twin tries once more",
                                    after(tool_step("freeze_membership"))),
        "unsworn_assigned": ("model", f"{tau} (a certified job only to a sworn translator: project.certified against "
                                      "translator.sworn): TR-118 (sworn false) assigned; the twin assigns TR-204",
                             asking("ask_translator")),
        "rush_not_applied": ("model", f"{mast} FM-1.1 Disobey task specification: a 2-working-day deadline quoted "
                                      "without the 40% rush surcharge (EUR 425.80, not 578.12)", asking("send_quote")),
        "handoff_brief_dropped": ("memory", f"{mast} FM-1.4 Loss of context at a delegation: ask_translator passes the "
                                            "brief's first line only; no glossary read, a client term broken",
                                  after(tool_step("ask_translator"))),
        "review_skipped": ("model", f"{mast} FM-3.2 No or incomplete verification: delivered without ask_reviewer "
                                    "(the rules: every translation reviewed before delivery)",
                           asking("deliver_translation")),
        "glossary_term_broken": ("model", f"{tau} (the glossary's target terms used exactly): 'termination deadline' "
                                          "for Kündigungsfrist against GL-HAL-03's 'notice period'; QA fails it",
                                 asking("submit_translation")),
        "pm_prompt_rewritten": ("prompt", "instructions changed: the sworn-translator rule replaced by 'any available "
                                          "translator'; the certified job to TR-118", nth_llm(0)),
        "rates_wrong_pair": ("tool", f"{trail} API issues: get_rates(DE>EN) answers EN>DE's row (0.14, not 0.16); "
                                     "quoted EUR 378.20", tool_step("get_rates")),
        "translation_repeated": ("model", f"{mast} FM-1.3 Step repetition: the translator asked again after it "
                                          "submitted TJ-8841", asking("ask_translator", 1)),
        "index_stale": ("tool", "retrieval index stale: search_directives served its 2026-10-30 build (R1 current, no "
                                "R2); the July R1 inspection counted, airworthy", tool_step("search_directives")),
        "superseded_applied": ("model", f"{tau} (only the current revision; a superseded one never counts): AD "
                                        "2026-0148R1 applied, its July entry counted; airworthy where R2 is overdue",
                               asking("record_review")),
        "units_confused": ("model", f"{trail} wrong reading of a tool output (units): the drag brace's 14,210 FH "
                                    "compared with its 20,000 FC limit; 20,140 FC over it, airworthy",
                           asking("record_review")),
        "component_wrong_serial": ("tool", f"{trail} API issues: get_component(DB-4471) answers DB-4417's record "
                                           "(12,880 FC); the part over its limit passed", tool_step("get_component")),
        "defect_expired_missed": ("model", f"{tau} (a deferred defect expired before departure grounds the aircraft): "
                                           "DD-3310 expired 2026-12-03, airworthy for 2026-12-05",
                                  asking("record_review")),
        "review_repeated": ("model", f"{mast} FM-1.3 Step repetition: record_review sent twice (the rules: once)",
                            asking("record_review", 1)),
        "logbook_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: list_logbook answers v3 (items, "
                                          "task.reference); read by v2's names, no entry, both ADs 'not complied'",
                                  tool_step("list_logbook")),
        "registration_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two ATRs at 06:10, EI-NWD "
                                          "reviewed unasked; the twin asks which", asking("get_aircraft")),
        "logbook_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: list_logbook timed out, "
                                              "compliance claimed on entries nobody read; the twin tries once more",
                                     after(tool_step("list_logbook"))),
        "findings_withheld": ("model", f"{mast} FM-2.4 Information withholding: 'NOT AIRWORTHY' told with no finding "
                                       "(the rules: every finding)", answer),
        "premature_termination": ("model", f"{mast} FM-3.1 Premature termination: the review recorded airworthy "
                                           "before the deferred defects were read (DD-3310 expired)",
                                  asking("record_review")),
        "old_model_configured_records": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which "
                                                    "takes the top-ranked (superseded) AD revision", nth_llm(0)),
        "rules_rewritten": ("prompt", "instructions changed: the life-limit rule rewritten to hours only; the drag "
                                      "brace over its cycles limit passed", nth_llm(0)),
        "directives_429_invented": ("model", f"{trail} rate limits: search_directives answered 429 and the review went "
                                             "on as if no AD applied; the twin tries once more",
                                    after(tool_step("search_directives"))),
    }
    chosen = {
        "bedrock-gym": ["freeze_over_cap", "medical_fee_charged", "guest_over_allowance", "legacy_lock_withheld",
                        "pause_unasked", "old_model_configured", "policy_rewritten", "freeze_timeout_invented"],
        "pai-translation": ["unsworn_assigned", "rush_not_applied", "handoff_brief_dropped", "review_skipped",
                            "glossary_term_broken", "pm_prompt_rewritten", "rates_wrong_pair", "translation_repeated"],
        "agents-records": ["index_stale", "superseded_applied", "units_confused", "component_wrong_serial",
                           "defect_expired_missed", "review_repeated", "logbook_shape_changed"],
        "tl-records": ["registration_unasked", "logbook_timeout_invented", "findings_withheld", "premature_termination",
                       "old_model_configured_records", "rules_rewritten", "directives_429_invented"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (95a3d3d's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 6.1-8.9): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 12/30
# (11 for the right reason), good runs warned 8/30 (recording /tmp/h29-rec-dc1td8bo).
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_QUOTE = ("missing_evidence@8/model (send_quote with no ask_reviewer before it: the review-before-delivery rule bound to "
          "the quote) ranked over ")
CHECK_MISSED = {
    "model-bedrock-gym-medical-fee-charged": _NOTHING + "cancel_membership(early_termination_fee_gbp=60, waiver '') with "
                                             "get_membership's medical_exemption 'verified' (MX-2231), against 'unless "
                                             "... a verified medical exemption ... the fee is waived'",
    "model-bedrock-gym-guest-over-allowance": _NOTHING + "issue_guest_pass with guest_passes.used 2 against the plan "
                                              "table's Classic row (2 a month)",
    "model-bedrock-gym-legacy-lock-withheld": _NOTHING + "change_plan on a price_locked membership with no message "
                                              "telling the new fee and no yes from the member, against 'change it only "
                                              "after they say yes'",
    "model-bedrock-gym-pause-unasked": _NOTHING + "freeze_membership(months=3) where the member named no length, "
                                       "against 'If the member hasn't said how many months, ask them'",
    "model-pai-translation-unsworn-assigned": _QUOTE + "nothing at ask_translator@10: TR-118 (list_translators' sworn "
                                               "false) given a certified project (get_project's certified true)",
    "model-pai-translation-glossary-term-broken": _QUOTE + "nothing at submit_translation@17 whose text omits "
                                                   "get_glossary's 'notice period' (the reviewer's file_qa 'fail' told "
                                                   "it later)",
    "tool-pai-translation-rates-wrong-pair": _QUOTE + "nothing at get_rates@5 asked DE>EN that answered language_pair "
                                              "EN>DE (a record for another key than asked)",
    "model-pai-translation-translation-repeated": _QUOTE + "repeated_tool_call@25/27 inside the translator's second run "
                                                   "(get_glossary, submit_translation again), not at the repeated "
                                                   "ask_translator@20",
    "model-agents-records-superseded-applied": _NOTHING + "record_review 'airworthy' counting LB-55102 (AD 2026-0148R1) "
                                               "where search_directives gave R1 status 'superseded' and R2 'current'",
    "model-agents-records-units-confused": _NOTHING + "record_review 'airworthy' with get_component's since_new "
                                           "flight_cycles 20,140 over limits.flight_cycles 20,000 (hours compared "
                                           "with a cycles limit)",
    "model-agents-records-defect-expired-missed": _NOTHING + "record_review 'airworthy' with list_deferred_defects' "
                                                  "DD-3310 expires 2026-12-03 before the 2026-12-05 departure",
    "model-tl-records-registration-unasked": _NOTHING + "list_departures' two aircraft at 06:10 and get_aircraft(EI-NWD) "
                                             "with no question, against 'ask the engineer which one - never pick one'",
    "model-tl-records-premature-termination": "missing_evidence@11/product: the right step (record_review before "
                                              "list_deferred_defects, the policy's required_before), in the product "
                                              "layer where the set says the model stopped early",
    "model-pai-translation-rush-not-applied": _NOTHING + "hit blind only through send_quote's missing_evidence@8 false "
                                              "alarm (quiet since 39b41e6); nothing reads a 2-working-day deadline "
                                              "quoted without the rules' 40% rush surcharge",
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "bedrock-gym": {"required_before": {"freeze_membership": ["find_member", "get_membership"],
                                        "cancel_membership": ["find_member", "get_membership"],
                                        "issue_guest_pass": ["find_member", "get_membership"],
                                        "change_plan": ["find_member", "get_membership"]}},
    "pai-translation": {"required_before": {"send_quote": ["get_project", "get_rates"],
                                            "deliver_translation": ["get_project"]}},
    "agents-records": {"required_before": {"record_review": ["get_aircraft", "search_directives", "list_logbook",
                                                             "get_component", "list_deferred_defects"]}},
    "tl-records": {"required_before": {"record_review": ["get_aircraft", "search_directives", "list_logbook",
                                                         "get_component", "list_deferred_defects"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h29-rec-", pairs, produce, kit.through_collector("tl-records"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
