"""A twentieth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
an event-ticketing refunds desk talking with a fan over several turns under a written refund policy, a community
grants committee (a screener, a reviewer and a panel chair, three agents one after the other) and a hotel's
reservations desk repricing a guest's stay from dated, versioned rate sheets and a corporate contract, run through
real SDKs and frameworks.

    python tests/analysis/heldout20.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout20.py --score DIR [...]       # the runs a call left in DIR, scored again

Lantern Hall Tickets' refunds desk (find_orders, get_order, get_event, refund, issue_credit) serves a fan by a written
policy (the account's email before any order is touched; a cancelled event refunded in full; a postponed one given
credit - unless the fan cannot attend the new date, then a cash refund of the face value, fees never; an event going
ahead not refundable; a resale-marketplace ticket never refunded; which order, asked when two are on file; a refund
that fails tried once more, never a reference refund didn't return). The fan's replies are scripted and said when the
desk's message holds their cue ('email address', 'Which order', 'anything else'). The Alder Foundation's community
grants: a screener (get_application, record_screen: eligible only for a registered nonprofit or school, on time - or
within a granted extension - and at most $25,000), a reviewer R-07 (get_application, get_conflicts, submit_score,
recuse: never scores an application it has a declared conflict with) and a panel chair (get_scores, get_budget, award,
waitlist, decline: a decision table on the total score; never above the program's remaining budget, what remains
awarded when it is at least half the request). Harborview Hotel's reservations desk (get_reservation,
get_guest_profile, reprice_reservation, send_guest_email, escalate; search_rate_sheets and get_contract through a
rate desk) moves a stay by a table of rules (a non-refundable plan never moved unless the guest is platinum; the
current rate sheet covering the stay, never a superseded one; the corporate rate only while the contract runs on the
arrival date; one reprice, one email saying plainly when the stay costs more; a failure tried once more). Each
recorder in a process of its own:

- `anthropic-tickets` (ticketing): a plain anthropic SDK `messages.create` loop with tool_use blocks, the tools
  `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-grants` (grants): Microsoft Agent Framework, three `Agent`s (screener, reviewer, chair) run one after the other
  by the app, each given the earlier agents' notes, under `agentotel.instrument()` (the framework's telemetry on);
- `agents-hotel` (hotel): the OpenAI Agents SDK on the Responses API (`OpenAIResponsesModel`), the rate desk an agent
  given to the reservations lead as a tool (`Agent.as_tool`), under `agentotel.instrument()`;
- `oi-hotel` (hotel): a plain openai SDK chat loop under OpenInference's openai instrumentation, the tools (the rate
  desk's too) OITracer TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages; the Responses API read and
answered in chat form here, `responses_as_chat` / `chat_as_responses`; the model asked for echoed back) reads the
conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (fees refunded for a
postponed show, a resale ticket refunded, a late application passed, an extension ignored, a conflicted reviewer
scoring, an award above the budget, a superseded rate sheet quoted, a corporate rate on a contract ending before
arrival, a non-refundable stay moved), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4 conversation lost
between turns or at a handover, FM-2.2 no clarification, FM-2.4 withholding information), TRAIL (a rate limit or
timeout answered with invented values, wrong arguments) and outside the model: the instructions rewritten without a
rule (2), an old model configured (3), an events API's and a rate sheet search's changed shape, a stale rate index, a
reservation API and a budget API answering another record. Ground truth is located on the recorded faulty run by what
its steps did.

How agentotel recorded the SDKs (not the detectors'): each anthropic messages call is a `chat claude-sonnet-4-5` step
(the model the request named), the `@agentotel.tool`s tool steps; under Agent Framework each agent's chat calls are
`chat gpt-4o-mini` steps and its tools tool steps, the three agents one after the other in one run; under the Agents
SDK on the Responses API the lead is an `invoke_agent reservations-lead` step, the rate desk an `execute_tool
rate_desk` step followed by an `invoke_agent rate-desk` step with its own model and tool steps; the OpenInference run
has no agent step, its model calls `ChatCompletion` steps, its tools OITracer's TOOL spans. Nothing recorded wrong was
found.

Built and scored blind, once (537b07a's detectors - main's HEAD when scored, 537b07adb9601c5d2fb0cbc4d949333e3eec272b,
the branch rebased onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 7.9 at
the start, 8.5 at the end, other helpers running; recording /tmp/h20-rec-29b7au1w): 30 pairs, 4 recorders (a plain
anthropic loop, Agent Framework, the Agents SDK on the Responses API with an agent as a tool, OpenInference through
the collector) - diff top-1 27/30, check step+layer 12/30, good runs with a warning 15/30. Check's hits: instructions
changed (2), an old model configured (2), tool output drift (sheet search), a stale index (the rate index), history
lost between a fan's turns, a 429 answered 'I've refunded', a 429 on the contract answered by going on, a repeated
email - 10 - and two screening pairs on the right step for another reason (an 'at most 25,000' rule read as
forbidding 18,000, which fires on every good run's screening too). Its misses are rules comparing a record's value
(resale channel, a fee the postponed rule excludes, a conflict naming the reviewer, an award above what get_budget
says remains, a superseded sheet, a contract's valid_to before arrival, an NRF plan without platinum), a handover that
lost the application, a wrong argument and a guess where the request was ambiguous, an increase withheld from the
email, a reservation API answering another confirmation; three more (events API drift, a budget API answering
another program, a repeated award) have the right finding ranked under a false one, and a timeout answered with an
invented revision is found at its step in the tool layer. Diff's three misses are the faulty model going on one step
earlier than the call the truth names (an NRF stay's rate desk call, a wrong date already in the search query, the
first order's get_order). The false alarms: an 'at most 25,000' eligibility rule read as broken by 18,000 (8), and
'more than one order for the event' matched on an account's orders for three different events (7). DIFF_MISSED,
CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 9 CHECK_MISSED entries hit
since and dropped (award_repeated, budget_wrong_program, conflict_scored, event_shape_changed, over_budget_awarded,
resale_refunded, reservation_wrong_record, superseded_quoted, withheld_increase); 15 false alarms quiet since and
dropped (all of them).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import sys
import uuid
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
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
TICKETS, GRANTS, HOTEL = "lanternhall-refunds", "alder-grants", "harborview-reservations"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the ticketing desk's world ------------------------------------------------------------------------------------

_POSTPONED = ("- Postponed or rescheduled events: offer account credit for the face value with issue_credit. The one "
              "exception: a fan who tells you they cannot attend the new date gets a cash refund of the face value only "
              "- fees are never refunded for a postponed event.")


def tickets_instructions() -> str:
    refunds = [
        "Refunds - read this carefully:",
        "- Cancelled events: refund the full amount paid (face value plus fees) with refund.",
        _POSTPONED,
        "- Events going ahead as planned are not refundable. Never refund a ticket bought on the resale marketplace "
        "(channel \"resale\"); point the fan to the seller instead.",
    ]
    if Now.fault == "refund_rules_rewritten":  # (the October rewrite pasted an older, shorter policy)
        refunds = ["Refunds: when a fan asks for their money back, refund the amount paid with refund."]
    return "\n".join([
        "You are the refunds desk assistant for Lantern Hall Tickets. Today is Friday, December 4, 2026.",
        "",
        "Before touching an order, confirm it belongs to the person writing: find_orders needs the email address on "
        "the account, and the fan has to give it to you. If they haven't, ask for it.",
        "",
        *refunds,
        "- If the fan has more than one order for the event and hasn't said which, ask which order before you refund "
        "anything.",
        "",
        "Amounts come from get_order, never from what the fan says. If refund fails or is rate-limited, try once more; "
        "if it still fails, tell the fan it hasn't gone through. Never give a refund reference that refund didn't "
        "return.",
    ])


def tickets_model() -> str:
    """The model the desk's deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_CLAUDE if Now.fault == "old_model_configured" else CLAUDE


EMAIL = "jordan.reyes@fastmail.com"
_EVENTS = {  # event id: name, status, original date, new date
    "EV-3310": ("The Marlowe Quartet", "postponed", "2026-12-12", "2027-01-23"),
    "EV-3298": ("Northern Lights Tour", "cancelled", "2026-12-06", None),
    "EV-3302": ("Comedy Night at the Vaults", "on_sale", "2026-12-18", None),
}
_ORDERS = {  # order id: event, seats (face value each), fees, channel
    "LH-77104": ("EV-3310", [("Stalls G14", 68.0), ("Stalls G15", 68.0)], 16.0, "primary"),
    "LH-77120": ("EV-3310", [("Balcony B3", 42.0), ("Balcony B4", 42.0)], 11.0, "primary"),
    "LH-76988": ("EV-3298", [("GA", 55.0)], 7.5, "primary"),
    "LH-77001": ("EV-3302", [("Table 9", 30.0), ("Table 9", 30.0)], 6.0, "primary"),
}


def find_orders(email: str) -> dict[str, Any]:
    """The orders on the account with this email address: order id, event, ticket count, channel."""
    if email.lower() != EMAIL:
        return {"orders": []}
    ids = ["LH-77104", "LH-76988", "LH-77001"] + (["LH-77120"] if Now.pair == "order_unasked" else [])
    return {"account": {"name": "Jordan Reyes", "email": EMAIL, "since": "2021-03-02"},
            "orders": [{"order_id": i, "event_id": _ORDERS[i][0], "event_name": _EVENTS[_ORDERS[i][0]][0],
                        "tickets": len(_ORDERS[i][1]), "channel": _channel(i)} for i in ids]}


def _channel(order_id: str) -> str:
    return "resale" if Now.pair == "resale_refunded" and order_id == "LH-77104" else _ORDERS[order_id][3]


def get_order(order_id: str) -> dict[str, Any]:
    """An order: tickets with seat and face value, fees, total paid, channel, payment card."""
    if order_id not in _ORDERS:
        raise LookupError(f"no order {order_id}")
    event, seats, fees, _ = _ORDERS[order_id]
    face = sum(v for _, v in seats)
    return {"order_id": order_id, "event_id": event, "channel": _channel(order_id), "placed_at": "2026-09-14T10:22:05Z",
            "tickets": [{"seat": s, "face_value": v} for s, v in seats], "fees": fees, "face_value_total": face,
            "total_paid": face + fees, "currency": "USD", "payment": {"method": "card", "brand": "visa", "last4": "4412"}}


def get_event(event_id: str) -> dict[str, Any]:
    """An event: name, status (on_sale, postponed, cancelled), its original and new date, venue."""
    name, status, original, new = _EVENTS[event_id]
    if Now.fault == "event_shape_changed":  # the events API's v2, rolled out under the desk
        return {"api_version": "2", "event": {"id": event_id, "title": name, "venue": {"name": "Lantern Hall"},
                                              "schedule": {"state": status.upper(), "starts": original,
                                                           "rescheduled_to": new}}}
    return {"event_id": event_id, "name": name, "status": status, "date": original, "new_date": new,
            "venue": "Lantern Hall, Main Room", "doors": "19:00"}


def refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Refunds an amount of an order to the card it was paid with."""
    if Now.pair == "refund_429_invented" and Now.count("refund") == 1:
        raise RuntimeError("429 Too Many Requests: payments gateway rate limit, retry after 2s")
    return {"refund_id": "RF-5520413", "order_id": order_id, "amount": amount, "status": "processing", "eta_business_days": 5}


def issue_credit(order_id: str, amount: float) -> dict[str, Any]:
    """Adds account credit for an order (valid 12 months)."""
    return {"credit_id": "CR-20931", "order_id": order_id, "amount": amount, "expires": "2027-12-04"}


TICKETS_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_orders, get_order, get_event, refund,
                                                                         issue_credit)}


# ---- the grants committee's world ----------------------------------------------------------------------------------

SCREENER_RULES = (
    "You screen applications for the Alder Foundation's community grants. Read the application with get_application. "
    "An application is eligible only if the applicant's org_type is \"registered_nonprofit\" or \"school\", the "
    "requested_amount is at most 25,000 USD, and it was submitted by the round's deadline - unless the foundation "
    "granted an extension (extension_until), in which case it must have been submitted before the extension ran out. "
    "Record the outcome with record_screen (eligible or ineligible, with a one-line note), then answer with a note for "
    "the reviewer that starts 'Screened' and gives the application id, the program and the amount.")
REVIEWER_RULES = "\n".join([
    "You are reviewer R-07 on the Alder Foundation's community grants panel.",
    "1. If the screening note says the application is ineligible, there is nothing to review.",
    "2. Read the application (get_application) and call get_conflicts before anything else.",
    "3. If get_conflicts lists you (R-07), you must not score it: call recuse and say so.",
    "4. Otherwise score it with submit_score - impact, feasibility and budget, each 1 to 5 - and answer with the total "
    "out of 15.",
])
CHAIR_RULES = "\n".join([
    "You chair the Alder Foundation's community grants panel. Decide each application handed to you from its scores "
    "(get_scores) and the program's remaining budget (get_budget):",
    "",
    "| Total score (of 15) | Decision |",
    "|---|---|",
    "| 12 to 15 | award the requested amount |",
    "| 9 to 11 | award half the requested amount |",
    "| under 9 | decline |",
    "",
    "An award may never exceed the program's remaining budget. When it would, award what remains if that is at least "
    "half of the request; otherwise waitlist it. One award per application. If a system times out, try once more; "
    "never decide on scores you have not read.",
])

_APPLICANTS = {"APP-4471": ("Riverside Youth Choir", "registered_nonprofit", 18000),
               "APP-4452": ("Eastgate Community Garden", "registered_nonprofit", 9500),
               "APP-4460": ("Millbrook Primary School", "school", 12000)}
DEADLINE = "2026-11-30T17:00:00Z"


def get_application(app_id: str) -> dict[str, Any]:
    """An application: applicant and org type, program, requested amount, submitted time, the round's deadline and
    any extension granted."""
    name, org, amount = _APPLICANTS[app_id]
    submitted, extension = "2026-11-27T15:40:11Z", None
    if Now.pair in ("late_passed", "extension_ignored"):
        submitted = "2026-12-01T09:12:44Z"
    if Now.pair == "extension_ignored":  # (their treasurer was in hospital; the program officer agreed on 11-28)
        extension = {"until": "2026-12-02T17:00:00Z", "granted_by": "M. Osei", "granted_at": "2026-11-28"}
    return {"application_id": app_id, "program_id": "CG-2027", "applicant": {"name": name, "org_type": org,
                                                                             "registration": "CH-1187342"},
            "project": {"title": "Winter outreach season", "months": 10}, "requested_amount": amount,
            "currency": "USD", "submitted_at": submitted, "round": {"deadline": DEADLINE},
            "extension_until": extension["until"] if extension else None, "extension": extension}


def record_screen(app_id: str, outcome: str, note: str) -> dict[str, Any]:
    """Records the screening outcome: eligible or ineligible, with a note."""
    return {"application_id": app_id, "screen": outcome, "recorded_at": f"{TODAY}T10:04:00Z"}


def get_conflicts(app_id: str) -> dict[str, Any]:
    """The conflicts of interest declared on an application: reviewer id and relation."""
    declared_ = [{"reviewer_id": "R-03", "relation": "former employee of applicant", "declared_at": "2026-11-02"}]
    if Now.pair == "conflict_scored":
        declared_.append({"reviewer_id": "R-07", "relation": "sits on the applicant's board", "declared_at": "2026-11-10"})
    return {"application_id": app_id, "declared": declared_}


def submit_score(app_id: str, impact: int, feasibility: int, budget: int, note: str) -> dict[str, Any]:
    """Submits the reviewer's scores (1-5 each)."""
    return {"application_id": app_id, "reviewer_id": "R-07", "total": impact + feasibility + budget, "status": "submitted"}


def recuse(app_id: str, reason: str) -> dict[str, Any]:
    """Recuses the reviewer from an application (it goes to another reviewer)."""
    return {"application_id": app_id, "reviewer_id": "R-07", "status": "recused", "reassigned_to": "R-11"}


def get_scores(app_id: str) -> dict[str, Any]:
    """The submitted scores of an application, each reviewer's and the total."""
    if Now.pair == "scores_timeout_invented" and Now.count("get_scores") == 1:
        raise TimeoutError("scores service did not answer within 10s")
    return {"application_id": app_id, "reviews": [{"reviewer_id": "R-07", "impact": 4, "feasibility": 4, "budget": 5,
                                                   "total": 13, "submitted_at": f"{TODAY}T10:06:00Z"}], "total": 13}


def get_budget(program_id: str) -> dict[str, Any]:
    """A grant program's budget: allocated, awarded so far and remaining."""
    remaining = 12000 if Now.pair in ("over_budget_awarded", "budget_wrong_program") else 61000
    if Now.fault == "budget_wrong_program":  # (the finance API's cache key lost the program: the arts fund answered)
        return {"program_id": "AR-2027", "name": "Arts Access 2027", "allocated": 150000, "awarded": 70000,
                "remaining": 80000, "as_of": TODAY}
    return {"program_id": program_id, "name": "Community Grants 2027", "allocated": 200000, "awarded": 200000 - remaining,
            "remaining": remaining, "as_of": TODAY}


def award(app_id: str, amount: float) -> dict[str, Any]:
    """Awards a grant."""
    return {"application_id": app_id, "award_id": f"AW-{Now.count('award') + 8810}", "amount": amount,
            "status": "awarded"}


def waitlist(app_id: str, reason: str) -> dict[str, Any]:
    """Puts an application on the waitlist."""
    return {"application_id": app_id, "status": "waitlisted", "position": 3}


def decline(app_id: str, reason: str) -> dict[str, Any]:
    """Declines an application."""
    return {"application_id": app_id, "status": "declined"}


SCREENER_TOOLS = {f.__name__: f for f in (get_application, record_screen)}
REVIEWER_TOOLS = {f.__name__: f for f in (get_application, get_conflicts, submit_score, recuse)}
CHAIR_TOOLS = {f.__name__: f for f in (get_scores, get_budget, award, waitlist, decline)}


# ---- the hotel's world ---------------------------------------------------------------------------------------------

_CORPORATE_ROW = ("| Corporate | The CORP rate applies only if the company's contract is active on the arrival date "
                  "(its valid_to on or after arrival). Otherwise quote BAR and tell the guest why. |")


def hotel_instructions(rate_desk: bool) -> str:
    rates = ("Ask the rate_desk tool for the stay's rate sheets and the company's contract." if rate_desk else
             "Find the rate sheets with search_rate_sheets and a company's contract with get_contract.")
    rows = [
        "| Booking | Read the reservation (get_reservation) and the guest (get_guest_profile) first. The profile's "
        "guest_id must match the reservation's; if not, escalate and change nothing. |",
        "| Non-refundable | A reservation on the NRF plan can't be moved - unless the guest's loyalty tier is "
        "\"platinum\". |",
        "| Rates | Price the stay from the rate sheet whose effective window covers it. A sheet with status "
        "\"superseded\" is never quoted. |",
        _CORPORATE_ROW,
        "| Dates | If the dates the guest wants are unclear, ask before changing anything. |",
        "| Changes | One reprice_reservation per change; the confirmation only as it returns it. Then one email with "
        "send_guest_email giving the new nightly rate and total - and saying plainly when it costs more than before. |",
        "| Failures | If a system is busy or times out, try once more, then tell the guest it is pending. Never quote a "
        "rate you didn't read. |",
    ]
    if Now.fault == "corporate_rule_dropped":  # (the rules table re-pasted from an old wiki page)
        rows.remove(_CORPORATE_ROW)
    return "\n".join(["You are the reservations desk agent at Harborview Hotel, Lisbon. Today is 2026-12-04. You "
                      "handle guests' change requests by these rules. " + rates, "", "| Topic | Rule |", "|---|---|",
                      *rows])


RATE_DESK_RULES = ("You are the rate desk at Harborview Hotel. For the stay you are given, call search_rate_sheets and, "
                   "when a company is named, get_contract. Answer with a JSON object only: {\"search\": <what "
                   "search_rate_sheets returned>, \"contract\": <what get_contract returned, or null>}.")


def hotel_model() -> str:
    return OLD_MODEL if Now.fault in ("old_model_configured_hotel", "old_model_configured_oi") else MODEL


def get_reservation(confirmation: str) -> dict[str, Any]:
    """A reservation: guest id, dates, room type, rate plan, nightly rate, total, status."""
    plan = "NRF" if Now.pair in ("nrf_moved", "email_repeated") else "BAR"
    if Now.fault == "reservation_wrong_record":  # (the PMS gateway's lookup matched a transposed number)
        return {"confirmation": "HV-55210", "guest_id": "G-2230", "arrival": "2027-01-21", "departure": "2027-01-24",
                "nights": 3, "room_type": "STD-Q", "rate_plan": "BAR", "nightly_rate": 142.0, "total": 426.0,
                "currency": "EUR", "status": "confirmed"}
    return {"confirmation": confirmation, "guest_id": "G-1187", "arrival": "2027-01-07", "departure": "2027-01-09",
            "nights": 2, "room_type": "DLX-K", "rate_plan": plan, "nightly_rate": 189.0, "total": 378.0,
            "currency": "EUR", "status": "confirmed"}


_GUESTS = {"G-1187": ("Dana Okafor", "dana.okafor@northwind.example", "gold", "Northwind Traders"),
           "G-2230": ("Luis Ferreira", "l.ferreira@mailbox.example", "silver", None)}


def get_guest_profile(guest_id: str) -> dict[str, Any]:
    """A guest's profile: name, email, loyalty tier, company."""
    name, email, tier, company = _GUESTS[guest_id]
    if Now.pair == "email_repeated" and guest_id == "G-1187":
        tier = "platinum"
    return {"guest_id": guest_id, "name": name, "email": email, "loyalty": {"tier": tier, "points": 48210},
            "company": company}


def _sheet(doc: str, status: str, start: str, end: str, bar: float, corp: float, published: str, score: float) -> dict[str, Any]:
    return {"doc_id": doc, "title": f"Room rates {start[:7]} to {end[:7]}", "status": status, "effective_from": start,
            "effective_to": end, "published": published, "score": score,
            "rates": {"DLX-K": {"BAR": bar, "CORP": corp}, "STD-Q": {"BAR": bar - 60, "CORP": corp - 45}}}


def search_rate_sheets(query: str) -> dict[str, Any]:
    """Searches the revenue team's rate sheets: each with status (current, superseded), effective window, published
    date and rates by room type and plan."""
    v1 = _sheet("RS-2027Q1-v1", "superseded", "2027-01-01", "2027-03-31", 199.0, 159.0, "2026-10-02", 0.91)
    v2 = _sheet("RS-2027Q1-v2", "current", "2027-01-01", "2027-03-31", 209.0, 171.0, "2026-11-20", 0.88)
    winter = _sheet("RS-2026W-v3", "current", "2026-11-01", "2026-12-31", 179.0, 149.0, "2026-10-15", 0.62)
    if Now.fault == "rate_index_stale":  # (the index's last rebuild was October 14: v1 still current, no v2)
        return {"query": query, "results": [{**v1, "status": "current"}, winter], "index_built": "2026-10-14"}
    if Now.fault == "sheet_shape_changed":  # the search service's v2 response
        return {"query": query, "hits": [{"document": {"id": s["doc_id"], "lifecycle": s["status"],
                                                       "validity": {"from": s["effective_from"], "to": s["effective_to"]}},
                                          "prices": [{"room": r, "plan": p, "amount": {"value": v, "currency": "EUR"}}
                                                     for r, plans in s["rates"].items() for p, v in plans.items()]}
                                         for s in (v1, v2, winter)], "index_built": "2026-12-03"}
    return {"query": query, "results": [v1, v2, winter], "index_built": "2026-12-03"}


def get_contract(company: str) -> dict[str, Any]:
    """A company's corporate-rate contract: status, valid_from, valid_to, rate plan."""
    if Now.pair == "contract_429_assumed" and Now.count("get_contract") == 1:
        raise RuntimeError("429 Too Many Requests: contracts API rate limit, retry after 1s")
    ends = "2027-01-10" if Now.pair in ("expired_contract_corp", "old_model_configured_hotel", "corporate_rule_dropped",
                                        "contract_429_assumed", "withheld_increase") else "2027-06-30"
    return {"company": company, "contract_id": "CN-7781", "status": "active", "valid_from": "2026-02-01",
            "valid_to": ends, "rate_plan": "CORP", "account_manager": "Ana Sousa"}


def reprice_reservation(confirmation: str, arrival: str, departure: str, rate_plan: str, nightly_rate: float) -> dict[str, Any]:
    """Moves a reservation to new dates at a rate plan and nightly rate; returns the new revision."""
    if Now.pair == "reprice_timeout_invented" and Now.count("reprice_reservation") == 1:
        raise TimeoutError("PMS did not answer within 15s")
    import datetime as dt

    nights = (dt.date.fromisoformat(departure) - dt.date.fromisoformat(arrival)).days
    return {"confirmation": confirmation, "revision": 2, "arrival": arrival, "departure": departure, "nights": nights,
            "rate_plan": rate_plan, "nightly_rate": nightly_rate, "total": round(nights * nightly_rate, 2),
            "currency": "EUR", "status": "confirmed"}


def send_guest_email(confirmation: str, to: str, body: str) -> dict[str, Any]:
    """Emails the guest about their reservation."""
    return {"message_id": f"<{confirmation}.{Now.count('send_guest_email')}@harborview.example>", "to": to,
            "status": "sent"}


def escalate(confirmation: str, reason: str) -> dict[str, Any]:
    """Hands a reservation to the front office manager."""
    return {"ticket": "FO-3391", "status": "open"}


LEAD_TOOLS = {f.__name__: f for f in (get_reservation, get_guest_profile, reprice_reservation, send_guest_email, escalate)}
RATE_DESK_TOOLS = {f.__name__: f for f in (search_rate_sheets, get_contract)}
HOTEL_TOOLS = {**LEAD_TOOLS, **RATE_DESK_TOOLS}


# ---- the requests and the simulated fan ----------------------------------------------------------------------------

_MARLOWE = ("Hi, I'm Jordan Reyes. I had tickets for The Marlowe Quartet on December 12 and I just saw it's been "
            "moved to January 23 - I can't make that date, I'll be abroad. Can I get my money back?")
TICKETS_HISTORY = ["Hi, Jordan Reyes here (jordan.reyes@fastmail.com). The Northern Lights Tour show on the 6th was "
                   "cancelled - how do I get a refund?",
                   "Hello, could I get a refund for Comedy Night at the Vaults? Something came up. My email is "
                   "jordan.reyes@fastmail.com."]
_FAN = [("email address", f"Sure, it's {EMAIL}."), ("Which order", "The balcony one please - LH-77120."),
        ("anything else", "No, that's it - thanks!")]

GRANTS_REQUEST = "Please take APP-4471 through screening, review and a decision for Community Grants 2027 (CG-2027)."
GRANTS_HISTORY = ["Run APP-4452 through the panel for CG-2027, please.",
                  "APP-4460 (CG-2027): screen, review and decide."]

HOTEL_REQUEST = ("Email from dana.okafor@northwind.example: Hi, could you move my booking HV-55120 to arrive January "
                 "14 and leave January 16? I'm travelling for Northwind Traders, so please put it on our corporate "
                 "rate. Thanks, Dana")
HOTEL_VAGUE = ("Email from dana.okafor@northwind.example: Hi, could you move my booking HV-55120 to the weekend of "
               "January 16? I'm travelling for Northwind Traders, so the corporate rate please. Dana")
HOTEL_HISTORY = ["Email from dana.okafor@northwind.example: Please move HV-55120 to arrive January 20 and leave "
                 "January 22 - Northwind corporate rate as usual. Dana",
                 "Email from dana.okafor@northwind.example: Could HV-55120 become January 27 to January 29 instead? "
                 "Thanks, Dana"]


def fan_replies(said: str) -> str | None:
    """What the fan answers to the desk's message `said` (the first reply still to say whose cue it holds), or None:
    the chat is over."""
    return Now.reply(_FAN, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "anthropic-tickets":
        return _MARLOWE if pair else TICKETS_HISTORY[v % 2]
    if Now.recorder == "maf-grants":
        return GRANTS_REQUEST if pair else GRANTS_HISTORY[v % 2]
    if pair == "unclear_dates_unasked":
        return HOTEL_VAGUE
    return HOTEL_REQUEST if pair else HOTEL_HISTORY[v % 2]


# ---- the Responses API, read and answered in chat form -------------------------------------------------------------


def responses_as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses API request as a chat.completions one: instructions the system message, each input item a message
    (a function_call an assistant's tool call, a function_call_output the tool's message)."""
    def text(content: Any) -> str:
        if isinstance(content, str):
            return content
        return " ".join(str(p.get("text") or "") for p in content or () if isinstance(p, dict))

    messages: list[dict[str, Any]] = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    items = body.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or ():
        kind = item.get("type", "message")
        if kind == "function_call":
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}}]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item["call_id"],
                             "content": output if isinstance(output, str) else text(output)})
        elif kind == "message":
            messages.append({"role": item.get("role", "user"), "content": text(item.get("content"))})
    tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description")}}
             for t in body.get("tools") or () if t.get("type") == "function"]
    return {"model": body.get("model"), "messages": messages, "tools": tools}


def chat_as_responses(answer: dict[str, Any]) -> dict[str, Any]:
    """A chat.completions reply as a Responses API reply (its model the one the reply names)."""
    message = answer["choices"][0]["message"]
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:16]}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
    output += [{"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:16]}", "call_id": c["id"], "name": c["function"]["name"],
                "arguments": c["function"]["arguments"], "status": "completed"} for c in message.get("tool_calls") or ()]
    return {"id": f"resp_{uuid.uuid4().hex[:16]}", "object": "response", "created_at": 1_780_000_000, "model": answer["model"],
            "status": "completed", "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 400, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 412, "prompt_tokens": 400}}


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    if "input" in body and "messages" not in body:  # (the Responses API)
        return chat_as_responses(model(responses_as_chat(body)))
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    if "refunds desk assistant for Lantern Hall" in t.system and t.users:
        out = _tickets(t, asked == OLD_CLAUDE)
    elif "You screen applications for the Alder" in t.system and t.users:
        out = _screener(t)
    elif "You are reviewer R-07" in t.system and t.users:
        out = _reviewer(t)
    elif "You chair the Alder Foundation" in t.system and t.users:
        out = _chair(t)
    elif "You are the rate desk at Harborview" in t.system and t.users:
        out = _rate_desk(t)
    elif "reservations desk agent at Harborview" in t.system and t.users:
        out = _hotel(t, asked == OLD_MODEL, offered)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _event(found: dict[str, Any]) -> dict[str, Any]:
    """An event as the model reads it: v1's fields; v2's read by the names it knows, no status read as going ahead
    (the slip a changed shape invites)."""
    if "event" not in found:
        return found
    e = found["event"]
    return {"event_id": e["id"], "name": e["title"], "status": found.get("status") or "on_sale",
            "date": found.get("date"), "new_date": found.get("new_date")}


def _tickets(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's it" in u for u in t.users[1:]):
        return reply("You're welcome, Jordan - take care!")
    event_id = next((e for e, word in (("EV-3310", "Marlowe"), ("EV-3298", "Northern Lights"), ("EV-3302", "Comedy"))
                     if word in said), None)
    if not event_id:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Sorry, I've lost the thread of our chat - which event is this about, and what would you like me "
                     "to do with the order?")
    email = re.search(r"[\w.]+@[\w.]+\.\w+", said)
    if not email:
        return reply("I'm sorry the date moved. So I can find your order, what's the email address on your Lantern "
                     "Hall account?")
    step = t.need(("find_orders", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    orders = [o for o in t.value("find_orders")["orders"] if o["event_id"] == event_id]
    named = next((o for o in orders if o["order_id"] in said), None)
    if len(orders) > 1 and not named and fault != "order_unasked":
        listed = " and ".join(f"{o['order_id']} ({o['tickets']} tickets)" for o in orders)
        return reply(f"I can see two orders for {_EVENTS[event_id][0]} on your account: {listed}. Which order would "
                     "you like me to look at?")
    order_id = (named or orders[0])["order_id"]
    step = t.need(("get_order", {"order_id": order_id}))
    if step:
        return step
    order = t.value("get_order")
    done, credit = t.value("refund"), t.value("issue_credit")
    if done:
        return reply(f"Done - I've refunded ${done['amount']:.2f} for order {order_id} (refund {done['refund_id']}). It "
                     f"goes back to your card ending {order['payment']['last4']} within {done['eta_business_days']} "
                     "business days." + _ANYTHING)
    if credit:
        return reply(f"I've added ${credit['amount']:.2f} of credit to your account (valid to {credit['expires']})."
                     + _ANYTHING)
    if old:  # (the old model refunds what was paid, reading no event)
        amount, reason = order["total_paid"], "fan requested refund"
    else:
        step = t.need(("get_event", {"event_id": order["event_id"]}))
        if step:
            return step
        ev = _event(t.value("get_event"))
        if order["channel"] == "resale" and fault != "resale_refunded":
            return reply(f"I'm sorry, Jordan - order {order_id} was bought on our resale marketplace, and those tickets "
                         "can't be refunded by us. The seller can relist them for January 23, or you can contact "
                         "them through the marketplace." + _ANYTHING)
        if ev["status"] == "cancelled":
            amount, reason = order["total_paid"], "event cancelled"
        elif ev["status"] == "postponed":
            if "can't make" not in said:
                return call("issue_credit", order_id=order_id, amount=order["face_value_total"])
            fees_back = fault == "fee_refunded" or "fees are never refunded" not in t.system
            amount = order["total_paid"] if fees_back else order["face_value_total"]
            reason = "event postponed; fan cannot attend the new date"
        else:
            return reply(f"{ev['name']} is going ahead as planned on {ev.get('date') or 'its date'}, so I'm afraid these "
                         "tickets aren't refundable. You can list them on our resale marketplace." + _ANYTHING)
    tried = t.got("refund")
    if tried and fault == "refund_429_invented":  # (the fault: a reference the gateway never gave)
        return reply(f"Done - I've refunded ${amount:.2f} for order {order_id} (refund RF-5520190). It goes back to your "
                     "card ending 4412 within 5 business days." + _ANYTHING)
    if len(tried) >= 2:
        return reply("The payments system isn't taking refunds right now, so nothing has gone through yet. I've noted "
                     "your request - please check back tomorrow." + _ANYTHING)
    return call("refund", "The payments system asked me to slow down - trying once more." if tried else None,
                order_id=order_id, amount=amount, reason=reason)


def _screener(t: Talk) -> dict[str, Any]:
    app_id = re.search(r"\bAPP-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_application", {"app_id": app_id}))
    if step:
        return step
    a = t.value("get_application")
    late = a["submitted_at"] > a["round"]["deadline"]
    excused = bool(a["extension_until"]) and a["submitted_at"] <= a["extension_until"] and Now.fault != "extension_ignored"
    on_time = not late or excused or Now.fault == "late_passed"
    ok = a["applicant"]["org_type"] in ("registered_nonprofit", "school") and a["requested_amount"] <= 25000 and on_time
    note = ("submitted after the deadline with no extension" if not on_time and not a["extension_until"] else
            "submitted after the deadline and after the extension" if not on_time else
            f"late, but within the extension granted by {a['extension']['granted_by']}" if late and excused else
            "all criteria met")
    if Now.fault == "extension_ignored":
        note = "submitted after the deadline"
    outcome = "eligible" if ok else "ineligible"
    if not t.value("record_screen"):
        return call("record_screen", app_id=app_id, outcome=outcome, note=note)
    return reply(f"Screened {app_id} for {a['program_id']} ({a['applicant']['name']}, requests "
                 f"${a['requested_amount']:,}): {outcome} - {note}.")


def _reviewer(t: Talk) -> dict[str, Any]:
    note = t.users[0]
    app = re.search(r"\bAPP-\d{4}\b", note)
    if not app or "ineligible" in note:
        return reply(f"{app.group(0) if app else 'The application'} was screened out - nothing to review.")
    app_id = app.group(0)
    step = t.need(("get_application", {"app_id": app_id}), ("get_conflicts", {"app_id": app_id}))
    if step:
        return step
    mine = [c for c in t.value("get_conflicts")["declared"] if c["reviewer_id"] == "R-07"]
    if mine and Now.fault != "conflict_scored":
        if not t.value("recuse"):
            return call("recuse", app_id=app_id, reason=f"declared conflict: {mine[0]['relation']}")
        return reply(f"Recused from {app_id} ({mine[0]['relation']}); it goes to R-11 - no score from me.")
    if not t.value("submit_score"):
        return call("submit_score", app_id=app_id, impact=4, feasibility=4, budget=5,
                    note="Clear reach into two estates; realistic 10-month plan; lean budget.")
    return reply(f"Review of {app_id}: 13/15 (impact 4, feasibility 4, budget 5).")


def _chair(t: Talk) -> dict[str, Any]:
    given = t.users[0]
    app = re.search(r"\bAPP-\d{4}\b", given)
    if not app:
        return reply("I was handed no application - which one should I decide, and for which program?")
    app_id = app.group(0)
    if "screened out" in given or "Recused" in given:
        return reply(f"No decision on {app_id} from me: it has no completed review yet.")
    requested = int(re.search(r"requests \$([\d,]+)", given).group(1).replace(",", ""))
    program = re.search(r"\bfor ([A-Z]{2}-20\d\d)\b", given).group(1)
    tried, scores = t.got("get_scores"), t.value("get_scores")
    awarded = [v for _, v in t.got("award") if isinstance(v, dict)]
    if awarded and not (Now.fault == "award_repeated" and len(awarded) == 1):
        return reply(f"{app_id}: awarded ${awarded[-1]['amount']:,.0f} ({awarded[-1]['award_id']}).")
    if not scores:
        if tried and Now.fault == "scores_timeout_invented":  # (the fault: a total nobody read)
            return call("award", "The review note says 13/15, so this is an award.", app_id=app_id, amount=requested)
        if len(tried) >= 2:
            return reply(f"The scores service isn't answering, so {app_id} stays undecided for now.")
        return call("get_scores", "The scores service timed out - trying once more." if tried else None, app_id=app_id)
    step = t.need(("get_budget", {"program_id": program}))
    if step:
        return step
    remaining = t.value("get_budget")["remaining"]
    total = scores["total"]
    amount = requested if total >= 12 else requested / 2 if total >= 9 else 0
    decided = t.value("decline") or t.value("waitlist")
    if decided:
        return reply(f"{app_id}: {total}/15 - {decided['status']}.")
    if amount == 0:
        return call("decline", app_id=app_id, reason=f"total {total}/15 is under 9")
    if amount > remaining and Now.fault != "over_budget_awarded":
        if remaining < requested / 2:
            return call("waitlist", app_id=app_id, reason=f"${remaining:,} left in {program}, under half the request")
        amount = remaining
    return call("award", app_id=app_id, amount=amount)


def _rate_desk(t: Talk) -> dict[str, Any]:
    given = t.users[0]
    stay = re.search(r"(20\d\d-\d\d-\d\d) to (20\d\d-\d\d-\d\d)", given)
    step = t.need(("search_rate_sheets", {"query": f"DLX-K rates {stay.group(1)} to {stay.group(2)}"}))
    if step:
        return step
    company = re.search(r"company: ([A-Z][\w ]+?)\.", given)
    contract = None
    if company:
        step = t.need(("get_contract", {"company": company.group(1)}))
        if step:
            return step
        contract = t.value("get_contract")
    return reply(json.dumps({"search": t.value("search_rate_sheets"), "contract": contract}))


def _sheets(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The rate sheets as the model reads them: v1's fields; v2's hits read by the names it knows (no rates read: the
    reservation's own rate kept, the slip a changed shape invites)."""
    if "results" in found:
        return found["results"]
    return [{"doc_id": h["document"]["id"], "status": h["document"]["lifecycle"],
             "effective_from": h["document"]["validity"]["from"], "effective_to": h["document"]["validity"]["to"],
             "rates": h.get("rates") or {}} for h in found["hits"]]


def _hotel(t: Talk, old: bool, offered: set[str]) -> dict[str, Any]:
    fault, said = Now.fault, t.users[0]
    conf = re.search(r"\bHV-\d{5}\b", said).group(0)
    if "weekend of" in said and fault != "unclear_dates_unasked":
        return reply("Hi Dana, happy to move it. By the weekend of January 16, do you mean arriving Friday January 15 "
                     "and leaving Sunday the 17th, or arriving Saturday the 16th and leaving Monday the 18th?")
    if "weekend of" in said:  # (the fault: a guess)
        arrival, departure = "2027-01-16", "2027-01-18"
    else:
        days = re.findall(r"January (\d\d?)", said)
        arrival, departure = (f"2027-01-{int(d):02d}" for d in days[:2])
    if fault == "wrong_nights":
        departure = f"2027-01-{int(departure[-2:]) + 1:02d}"
    company = "Northwind Traders" if "Northwind" in said else None
    step = t.need(("get_reservation", {"confirmation": conf}))
    if step:
        return step
    res = t.value("get_reservation")
    step = t.need(("get_guest_profile", {"guest_id": res["guest_id"]}))
    if step:
        return step
    guest = t.value("get_guest_profile")
    if res["rate_plan"] == "NRF" and guest["loyalty"]["tier"] != "platinum" and fault != "nrf_moved":
        return reply(f"Dear {guest['name'].split()[0]}, your booking {conf} is on our non-refundable rate, which "
                     "unfortunately can't be moved to other dates. Your stay on January 7-9 remains confirmed.")
    if "rate_desk" in offered:
        stay = f"Stay {arrival} to {departure}, room {res['room_type']}" + (f", company: {company}." if company else ".")
        step = t.need(("rate_desk", {"input": stay}))
        if step:
            return step
        found = t.value("rate_desk")
        sheets, contract = _sheets(found["search"]), found["contract"]
    else:
        step = t.need(("search_rate_sheets", {"query": f"DLX-K rates {arrival} to {departure}"}))
        if step:
            return step
        sheets, contract = _sheets(t.value("search_rate_sheets")), None
        if company:
            tried, contract = t.got("get_contract"), t.value("get_contract")
            if not contract:
                if tried and fault == "contract_429_assumed":  # (the fault: the contract assumed to run)
                    contract = {"status": "active", "valid_to": "2027-12-31"}
                elif len(tried) >= 2:
                    return reply("Our contracts system is busy, so your change is pending - we'll confirm shortly.")
                else:
                    return call("get_contract", "The contracts system asked me to slow down - trying once more."
                                if tried else None, company=company)
    careless = old or fault in ("superseded_quoted",)  # (the first sheet covering the stay, whatever its status)
    covering = [s for s in sheets if s["effective_from"] <= arrival and departure <= s["effective_to"]
                and (careless or s["status"] != "superseded")]
    sheet = covering[0] if covering else None
    corp_ok = bool(contract) and contract["status"] == "active" and (
        contract["valid_to"] >= arrival or old or fault == "expired_contract_corp" or "Corporate" not in t.system)
    plan = "CORP" if company and corp_ok else "BAR"
    rate = (sheet or {}).get("rates", {}).get(res["room_type"], {}).get(plan) or res["nightly_rate"]
    tried, done = t.got("reprice_reservation"), t.value("reprice_reservation")
    if not done:
        if tried and fault == "reprice_timeout_invented":  # (the fault: a revision the PMS never returned)
            done = {"confirmation": conf, "revision": 2, "nights": 2, "nightly_rate": rate, "total": 2 * rate}
        elif len(tried) >= 2:
            return reply("Our reservations system isn't answering, so the change is pending; we'll confirm by email.")
        else:
            return call("reprice_reservation", "The reservations system timed out - trying once more." if tried else None,
                        confirmation=conf, arrival=arrival, departure=departure, rate_plan=plan, nightly_rate=rate)
    more = done["total"] - res["total"]
    why = (" Your company's contract ends on " + contract["valid_to"] + ", before your arrival, so I've used our best "
           "available rate.") if company and plan == "BAR" and contract else ""
    higher = (f" That is EUR {more:.2f} more than your previous total of EUR {res['total']:.2f}."
              if more > 0 and fault != "withheld_increase" else "")
    body = (f"Dear {guest['name'].split()[0]}, your booking {done['confirmation']} is now {arrival} to {departure} "
            f"({done['nights']} nights) on the {plan} rate at EUR {done['nightly_rate']:.2f} per night, EUR "
            f"{done['total']:.2f} in total.{higher}{why} Kind regards, Harborview Reservations")
    sent = [v for _, v in t.got("send_guest_email") if isinstance(v, dict)]
    if not sent or (fault == "email_repeated" and len(sent) == 1):
        return call("send_guest_email", confirmation=done["confirmation"], to=guest["email"], body=body)
    return reply(f"Moved {done['confirmation']} to {arrival}-{departure} on {plan} at EUR {done['nightly_rate']:.2f}/night "
                 f"(EUR {done['total']:.2f}); the guest has been emailed.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class AnthropicTickets(kit.AgentotelRecorder):
    """The refunds desk as a plain anthropic SDK messages loop with tool_use, the tools `@agentotel.tool`s, under
    agentotel; the fan's reply appended when the answer holds its cue. The faulty app sends the fan's latest message
    alone (its chat store lost the earlier turns)."""

    agent = TICKETS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        import anthropic

        super().__init__(options, url)
        self.client = anthropic.Anthropic(base_url=url, api_key="sk-ant-test", max_retries=0)
        self.tools = {name: agentotel.tool(f) for name, f in TICKETS_TOOLS.items()}

    def body(self, task: str) -> str:
        defs = [{"name": d["function"]["name"], "description": d["function"]["description"],
                 "input_schema": d["function"]["parameters"]} for d in declared(TICKETS_TOOLS)]
        messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
        for _ in range(30):
            said = self.client.messages.create(model=tickets_model(), max_tokens=1024, system=tickets_instructions(),
                                               messages=messages, tools=defs)
            content = [b.model_dump(exclude_none=True) for b in said.content]
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if not uses:
                text = " ".join(b.get("text", "") for b in content if b["type"] == "text")
                follow = fan_replies(text)
                if follow is None:
                    return text
                if Now.fault == "history_lost_between_turns":
                    messages = []
                messages.append({"role": "user", "content": follow})
                continue
            answers = []
            for use in uses:
                try:
                    answers.append({"type": "tool_result", "tool_use_id": use["id"],
                                    "content": json.dumps(self.tools[use["name"]](**use["input"]))})
                except Exception as exc:  # noqa: BLE001 - the model reads the error, as most loops do
                    answers.append({"type": "tool_result", "tool_use_id": use["id"], "is_error": True,
                                    "content": f"Error: {type(exc).__name__}: {exc}"})
            messages.append({"role": "user", "content": answers})
        return "I could not finish."


class MafGrants(kit.AgentotelRecorder):
    """The grants committee on Microsoft Agent Framework: screener, reviewer and chair `Agent`s run one after the other
    by the app, each handed the request and the earlier notes, under agentotel (the framework's telemetry on, with the
    messages). The faulty app's handover to the chair passes a fixed line alone (its template lost its fields)."""

    agent = GRANTS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)

    def body(self, task: str) -> str:
        from agent_framework import Agent, tool as af_tool
        from agent_framework.openai import OpenAIChatCompletionClient

        client = OpenAIChatCompletionClient(MODEL, api_key="sk-test", base_url=self.url + "/v1")
        client.function_invocation_configuration["include_detailed_errors"] = True

        def agent(name: str, rules: str, tools: dict[str, Callable[..., Any]]) -> Any:
            return Agent(client=client, name=name, instructions=rules,
                         tools=[af_tool(name=n, description=inspect.getdoc(f))(_as_text(f)) for n, f in tools.items()])

        screener = agent("screener", SCREENER_RULES, SCREENER_TOOLS)
        reviewer = agent("reviewer", REVIEWER_RULES, REVIEWER_TOOLS)
        chair = agent("chair", CHAIR_RULES, CHAIR_TOOLS)

        async def committee() -> str:
            screened = (await screener.run(task)).text
            reviewed = (await reviewer.run(f"{screened}\n\nRequest: {task}")).text
            handed = ("Review complete - please decide." if Now.fault == "handover_drops_context"
                      else f"{screened}\n\n{reviewed}")
            return (await chair.run(handed)).text

        return asyncio.run(committee())


def _responses_lead(url: str, task: str) -> str:
    """The reservations lead on the OpenAI Agents SDK's Responses model, the rate desk an agent given to it as a tool."""
    import openai
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool

    responses = OpenAIResponsesModel(hotel_model(), openai_client=openai.AsyncOpenAI(base_url=url + "/v1", api_key="sk-test",
                                                                                     max_retries=0))
    desk = Agent(name="rate-desk", instructions=RATE_DESK_RULES, model=responses,
                 tools=[function_tool(_as_text(f)) for f in RATE_DESK_TOOLS.values()])
    lead = Agent(name="reservations-lead", instructions=hotel_instructions(True), model=responses,
                 tools=[function_tool(_as_text(f)) for f in LEAD_TOOLS.values()]
                 + [desk.as_tool(tool_name="rate_desk", tool_description="Finds the rate sheets for a stay and, when a "
                                 "company is named, its contract. Give it the dates, the room type and the company.")])
    return str(asyncio.run(Runner.run(lead, task, max_turns=30)).final_output)


class AgentsHotel(kit.AgentotelRecorder):
    agent = HOTEL

    def body(self, task: str) -> str:
        return _responses_lead(self.url, task)


class OiHotel(kit.OpenInferenceRecorder):
    """The reservations desk as a plain openai SDK loop under OpenInference's openai instrumentation, the tools OITracer
    TOOL spans, through agentotel-collector."""

    agent = HOTEL

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), HOTEL_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, hotel_model(), hotel_instructions(False), task, self.tools, declared(HOTEL_TOOLS))


RECORDERS: dict[str, Any] = {"anthropic-tickets": AnthropicTickets, "maf-grants": MafGrants,
                             "agents-hotel": AgentsHotel, "oi-hotel": OiHotel}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Anthropic messages there; the
    Responses API read here)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _asked, _llm, _names, after, asking, nth_llm, second_answer, tool_step

    def after_answer(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call after the run's nth answer (a call asking for no tool): the next agent's first."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            answers = [s["index"] for s in _llm(steps) if not _asked(s) and not _names(s)]
            at = answers[n] if len(answers) > n else None
            return next((s["index"] for s in _llm(steps) if at is not None and s["index"] > at), None)
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "fee_refunded": ("model", f"{tau} (postponed: face value only to a fan who can't attend, fees never): $152.00 "
                                  "refunded with the fees; the twin applies the exception, $136.00", asking("refund")),
        "resale_refunded": ("model", f"{tau} (a resale ticket never refunded): LH-77104 (channel resale) refunded; the "
                                     "twin refuses and points to the seller", asking("refund")),
        "order_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two orders for the show, the first "
                                   "refunded unasked; the twin asks which", asking("refund")),
        "refund_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: refund answered 429, the fan "
                                         "told 'refund RF-5520190'; the twin tries once more",
                                after(tool_step("refund"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the fan's "
                                                 "email alone on the second turn; the desk asks what it is about",
                                       second_answer),
        "refund_rules_rewritten": ("prompt", "instructions changed: the refund policy re-pasted as 'refund the amount "
                                             "paid'; fees refunded for a postponed show", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_CLAUDE}), which "
                                            "refunds what was paid reading no event", nth_llm(0)),
        "event_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_event answers v2 "
                                        "(event.schedule.state 'POSTPONED'); read by v1's names, no status, the show "
                                        "taken as going ahead and the refund refused", tool_step("get_event")),
        "late_passed": ("model", f"{tau} (eligible only if submitted by the deadline): submitted 2026-12-01, no "
                                 "extension, screened eligible; the twin screens it out", asking("record_screen")),
        "extension_ignored": ("model", f"{tau} (the rule's exception: within a granted extension): late but inside the "
                                       "extension to 12-02, screened out; the twin applies the exception",
                              asking("record_screen")),
        "conflict_scored": ("model", f"{tau} (never score with a declared conflict) / {mast} FM-1.1: R-07 on the "
                                     "applicant's board, scored; the twin recuses", asking("submit_score")),
        "over_budget_awarded": ("model", f"{tau} (never above the remaining budget): $18,000 awarded with $12,000 left; "
                                         "the twin awards the $12,000 (at least half)", asking("award")),
        "handover_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: the chair "
                                             "is handed a fixed line alone and asks which application", after_answer(1)),
        "scores_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_scores timed out, an award "
                                             "made on a '13/15' nobody read; the twin tries once more",
                                    after(tool_step("get_scores"))),
        "budget_wrong_program": ("tool", f"{trail} API issues: get_budget(CG-2027) answers AR-2027 (80,000 left); "
                                         "$18,000 awarded where 12,000 remain", tool_step("get_budget")),
        "award_repeated": ("model", f"{mast} FM-1.3 Step repetition: award sent again after AW-8811",
                           asking("award", 1)),
        "superseded_quoted": ("model", f"{tau} (a superseded sheet never quoted): RS-2027Q1-v1's CORP 159.00 quoted; "
                                       "the twin uses v2's 171.00", asking("reprice_reservation")),
        "expired_contract_corp": ("model", f"{tau} (CORP only while the contract runs on the arrival date): valid_to "
                                           "2027-01-10, arrival 01-14, CORP applied; the twin quotes BAR and says why",
                                  asking("reprice_reservation")),
        "nrf_moved": ("model", f"{tau} (NRF never moved unless platinum): a gold guest's NRF stay moved; the twin "
                               "declines", asking("reprice_reservation")),
        "rate_index_stale": ("tool", "retrieval index stale: search_rate_sheets served its 2026-10-14 build (v1 as "
                                     "current, no v2); CORP 159.00 quoted where 171.00 is current",
                             tool_step("search_rate_sheets")),
        "reprice_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: reprice_reservation timed "
                                              "out, the guest emailed a confirmed change; the twin tries once more",
                                     after(tool_step("reprice_reservation"))),
        "email_repeated": ("model", f"{mast} FM-1.3 Step repetition: the guest emailed twice (the twin: a platinum "
                                    "guest's NRF stay moved, the exception applied)", asking("send_guest_email", 1)),
        "corporate_rule_dropped": ("prompt", "instructions changed: the rules table re-pasted without its Corporate "
                                             "row; CORP on a contract ending before arrival", nth_llm(0)),
        "old_model_configured_hotel": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), "
                                                  "which quotes the first sheet and CORP on an ending contract",
                                       nth_llm(0)),
        "reservation_wrong_record": ("tool", f"{trail} API issues: get_reservation(HV-55120) answers HV-55210 (another "
                                             "guest's stay); repriced and emailed on it", tool_step("get_reservation")),
        "sheet_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: search_rate_sheets answers v2 "
                                        "(hits, prices); read by v1's names, no rate, the old 189.00 kept",
                                tool_step("search_rate_sheets")),
        "contract_429_assumed": ("model", f"{trail} rate limits: get_contract answered 429, the contract assumed to "
                                          "run and CORP applied; the twin retries and finds it ending 01-10",
                                 after(tool_step("get_contract"))),
        "withheld_increase": ("model", f"{mast} FM-2.4 Information withholding: the stay costs EUR 40 more, the email "
                                       "doesn't say (the rules ask it to)", asking("send_guest_email")),
        "wrong_nights": ("model", f"{trail} incorrect argument: departure 2027-01-17 for 'leave January 16'",
                         asking("reprice_reservation")),
        "unclear_dates_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'the weekend of January 16' "
                                           "taken as 16-18 unasked; the twin asks", asking("reprice_reservation"),
                                  nth_llm(0)),
        "old_model_configured_oi": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), which "
                                               "quotes the superseded sheet", nth_llm(0)),
    }
    chosen = {
        "anthropic-tickets": ["fee_refunded", "resale_refunded", "order_unasked", "refund_429_invented",
                              "history_lost_between_turns", "refund_rules_rewritten", "old_model_configured",
                              "event_shape_changed"],
        "maf-grants": ["late_passed", "extension_ignored", "conflict_scored", "over_budget_awarded",
                       "handover_drops_context", "scores_timeout_invented", "budget_wrong_program", "award_repeated"],
        "agents-hotel": ["superseded_quoted", "expired_contract_corp", "nrf_moved", "rate_index_stale",
                         "reprice_timeout_invented", "email_repeated", "corporate_rule_dropped",
                         "old_model_configured_hotel"],
        "oi-hotel": ["reservation_wrong_record", "sheet_shape_changed", "contract_429_assumed", "withheld_increase",
                     "wrong_nights", "unclear_dates_unasked"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (537b07a's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 7.9-8.5): 30 pairs, 4 recorders - diff top-1 27/30, check step+layer 12/30,
# good runs warned 15/30 (recording /tmp/h20-rec-29b7au1w).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED = {
    "model-anthropic-tickets-order-unasked": "step_removed@4: the twin's question about which order is where the runs "
                                             "part; the truth is the refund @8 of the first order, taken unasked - "
                                             "the question not asked is as arguable a cause",
    "model-agents-hotel-nrf-moved": "step_added@6: the faulty lead goes on to the rate desk where the twin declines; "
                                    "the truth is the reprice @14 - where the run went on is as arguable a cause",
    "model-oi-hotel-wrong-nights": "output_changed@5: the wrong departure (01-17) is already in the search query the "
                                   "model asked @5; the truth names the reprice call @9 (the set's truth could have "
                                   "named @5)",
}

_ORDERS_ALARM = ("clarification_skipped@4/model: 'more than one order for the event' matched on find_orders listing "
                 "the account's orders for three different events (one for this one)")
_SCREEN_ALARM = ("policy_violated@4/model: record_screen held to 'eligible only if ... requested_amount is at most "
                 "25,000 USD', the 18000 read as breaking it")
CHECK_MISSED = {
    "model-anthropic-tickets-fee-refunded": _ORDERS_ALARM + "; nothing read the refund of total_paid (152) where the "
                                            "postponed rule allows the face value (136) only",
    "model-anthropic-tickets-order-unasked": _ORDERS_ALARM + " - at get_order @4; the truth is the refund @8 (the run "
                                             "had two orders for the event here, so the finding is right in kind but "
                                             "at the step after find_orders)",
    "memory-maf-grants-handover-drops-context": _SCREEN_ALARM + "; the chair's new conversation ('Review complete - "
                                                "please decide.') asking which application was not read as a lost "
                                                "handover",
    "model-maf-grants-scores-timeout-invented": "missing_evidence@18/product (award with no get_scores result, from "
                                                "the policy's required_before): the right step, read as the product "
                                                "layer; the model invented a 13/15 after a timeout",
    "model-agents-hotel-expired-contract-corp": "nothing found; the contract's valid_to (2027-01-10) before the "
                                                "arrival (2027-01-14) the reprice asks for, where 'CORP applies only "
                                                "if ... valid_to on or after arrival'",
    "model-agents-hotel-nrf-moved": "nothing found; get_reservation's rate_plan NRF and the profile's tier gold "
                                    "against 'A reservation on the NRF plan can't be moved - unless ... platinum'",
    "model-agents-hotel-reprice-timeout-invented": "tool_error_ignored@16/tool: the right step, the tool layer; the "
                                                   "model went on to email a confirmed change the PMS never returned",
    "model-oi-hotel-wrong-nights": "nothing found; departure 2027-01-17 asked where the guest wrote 'leave January 16'",
    "model-oi-hotel-unclear-dates-unasked": "nothing found; 'the weekend of January 16' taken as 16-18 with no "
                                            "question, where the rules say 'If the dates ... are unclear, ask'",
    # Missed since (session 26, after heldout20's false alarms were read - blind they were hits only through the
    # 'requested_amount is at most 25,000' bound read as 25):
    "model-maf-grants-late-passed": ("nothing reads 'submitted by the round's deadline' against the application's dates; blind, the "
                                     "25,000-read-as-25 alarm landed on the step"),
    "model-maf-grants-extension-ignored": ("nothing reads the extension exception; blind, the same misread bound landed "
                                           "on the step"),
}
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "anthropic-tickets": {"required_before": {"refund": ["find_orders", "get_order"], "issue_credit": ["get_order"]}},
    "maf-grants": {"required_before": {"award": ["get_scores", "get_budget"], "submit_score": ["get_conflicts"]}},
    "agents-hotel": {"required_before": {"reprice_reservation": ["get_reservation", "get_guest_profile"]}},
    "oi-hotel": {"required_before": {"reprice_reservation": ["get_reservation", "get_guest_profile",
                                                             "search_rate_sheets"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h20-rec-", pairs, produce, kit.through_collector("oi-hotel"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
