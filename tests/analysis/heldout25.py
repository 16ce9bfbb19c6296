"""A twenty-fifth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a university's course-registration desk talking with a student over several turns under a written registration
policy, a food-delivery dispatch team (an order router handing to a courier assigner, who hands to a customer notifier)
and a brokerage trade-surveillance agent reading trades, a versioned restricted list, positions and limits, run through
real SDKs and frameworks.

    python tests/analysis/heldout25.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout25.py --score DIR [...]       # the runs a call left in DIR, scored again

Halden University's registration desk (find_student, search_sections, enroll, add_to_waitlist) serves a student by a
written policy in prose and a numbered list (the student ID before anything; which section, asked when the student
named none; every prerequisite passed with C or better; a full section never enrolled - the waitlist offered and used
only once the student agrees; 18 credits a term, or an advisor's override's max_credits while the override is
unexpired; an enroll failure tried once more, never a confirmation enroll didn't return). The student's replies are
scripted and said when the desk's message holds their cue ('student ID', 'Which section', 'waitlist?', 'anything
else'). Forkful's dispatch team: a router (get_order, route_order, reject_order: the customer's distance against the
restaurant's own max_radius_km) hands to an assigner (list_couriers, assign_courier: hot and cold items together only
with split bags, no bike beyond 5 km, the nearest courier that fits), who hands to a notifier (get_eta, issue_refund,
notify_customer: more than 15 minutes late refunds the delivery fee once, unless the customer changed the address; a
timeout tried once more, never an ETA nobody gave). Ashgrove Securities' surveillance agent (get_alert, get_trades,
search_restricted_list, get_position, get_limits, file_finding) works an alert by a rules table comparing records (a
trade on a restricted symbol under the highest list version in force on the trade date, never a superseded one; an
employee's sale within 30 days of the buy, unless pre-cleared for that symbol; the position against the account's
max_position_qty, not its order limit; one finding listing every breach, every breach told).

- `genai-registrar` (registration): a google-genai `models.generate_content` loop with function declarations
  (automatic function calling off) over several student turns, the tools `@agentotel.tool`s, under
  `agentotel.instrument()`;
- `agents-dispatch` (dispatch team): the OpenAI Agents SDK on chat completions, router -> assigner -> notifier by two
  handoffs in one Runner.run, under `agentotel.instrument()`;
- `mcp-surveillance` (surveillance): the tools on an MCP server (in process) called through the MCP client's session
  from a plain anthropic SDK messages loop, under `agentotel.instrument()`;
- `tl-surveillance` (surveillance): a plain openai SDK chat loop under OpenLLMetry's openai instrumentation, the tools
  traceloop tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions, Anthropic messages and Gemini, the model asked for echoed
back) reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a
prerequisite passed with D enrolled, a full section enrolled, an expired credit override applied, an order beyond the
restaurant's radius routed, hot and cold food on a bike without split bags, a late refund given where the customer
moved the address, a superseded restricted-list version read, a 12-day sale not flagged, a position compared with the
order limit), MAST (FM-1.3 step repetition, FM-1.4 context lost at a handoff, FM-2.2 no clarification, FM-2.4
withholding information, FM-2.6 reasoning-action mismatch, FM-3.1 premature termination), TRAIL (a 429 answered with an
invented confirmation, a timeout answered with an invented ETA or position, a rate limit answered with 'no trades', a
wrong argument) and outside the model: instructions rewritten without a rule (3), old models configured (2), a trades
API's changed shape, a stale restricted-list index, APIs answering another student, zone and account. Good twins are
fine runs: a prerequisite refusal, a waitlist offered and joined once the student agrees, a section asked for, a
valid credit override applied, a 429 tried once more, an order out of radius rejected, a split-bag courier chosen over
a nearer bike, a refund withheld under the exception, a timeout tried once more, a rate-limited check reported as
incomplete, escalations filed and told in full. Ground truth is located on the recorded faulty run by what its steps
did.

How agentotel recorded the SDKs (not the detectors'): each google-genai generate_content call is a `chat
gemini-2.5-flash` step (the old model's `chat gemini-1.5-flash-002`), the `@agentotel.tool`s tool steps, no agent step;
under the Agents SDK each agent is an `invoke_agent router|assigner|notifier` step, each handoff an `execute_tool
transfer_to_<agent>` step, a tool's raised timeout an error step (the SDK sends its words to the model); the MCP
client's call_tool is an `execute_tool <tool>` step beside `chat claude-sonnet-4-5` steps; the OpenLLMetry run's model
calls are `openai.chat` steps (model gpt-4o-mini) and its tools traceloop's `<tool>.tool` spans. Nothing recorded wrong
was found.

Built and scored blind, once (main's HEAD when scored, 2c8a13bef01af4009288e2853078c7e61056d476, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 2.0 at the start, 2.1 at the
end; recording /tmp/h25-rec-d47kjix6): 32 pairs, 4 recorders (google-genai over several student turns, the Agents SDK
with two handoffs, an anthropic loop over an MCP client session, OpenLLMetry through the collector) - diff top-1
32/32, check step+layer 14/32, good runs with a warning 1/32. Check's hits: instructions changed (3), an old model
configured (2), three APIs answering another record (student, zone, account), a trades API's changed shape, a lost
handoff, two repeated writes, a 429 answered with an invented enroll confirmation, a 429 answered with 'no trades' -
14. Its misses are rules comparing a record's fields with the written policy (a D against 'C or better', a full
section's enrolled = capacity, an expired override's valid_until, a distance over the restaurant's max_radius_km, a
bike without split compartments for hot and cold items, a refund where the delay's cause is the exception, a
superseded list version, a 12-day sale, a position against the wrong limit field, a pre-clearance for another symbol),
a clarification not asked, a stale restricted-list index, an ETA invented after a timeout (Agents SDK: nothing found),
a position invented after a timeout (found at its step in the tool layer), a breach filed but not told, 'Escalating'
said with 'close' sent, a close filed before two of three rules were checked, and a wrong symbol argument. One check
finding on a miss is true against the set: the expired-override twin's script quotes a hard-coded 'valid until
2027-01-31' in its answer. The false alarm: a good twin that tried a 429 once more and then told the officer the check
was incomplete read as a tool error ignored. DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 1 CHECK_MISSED entry hit
since and dropped (outside_radius_routed).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 2 CHECK_MISSED
entries hit and dropped (breach_withheld, rationale_mismatch).
"""

from __future__ import annotations

import asyncio
from datetime import date
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

MODEL = "gpt-4o-mini"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
GEMINI, OLD_GEMINI = "gemini-2.5-flash", "gemini-1.5-flash-002"
REGISTRAR, DISPATCH, SURVEILLANCE = "halden-registration-desk", "forkful-dispatch-team", "ashgrove-surveillance"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# What every policy here asks after a failed call: the call once more, then the failure told.
_retry_or = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _ok(t: Talk, tool: str) -> list[dict[str, Any]]:
    """The successful results of `tool` so far."""
    return [v for _, v in t.got(tool) if isinstance(v, (dict, list))]


# ---- the registration desk's world ---------------------------------------------------------------------------------

_PREREQ_RULE = ("2. Prerequisites: every course in a section's prerequisites must be on the student's record with a "
                "grade of C or better (C-, D and F do not count). Never enroll a student who is missing one.")


def registrar_instructions() -> str:
    rules = [
        "You are the registration desk of Halden University's Office of the Registrar. Today is 4 December 2026 and "
        "registration for the Spring 2027 term (2027-SP) is open.",
        "",
        "Before you look anything up, ask the student for their student ID and find their record with find_student. "
        "If the student names a course but not a section and the course has more than one section, ask which section "
        "they want - don't pick one for them.",
        "",
        "Rules for adding a course (enroll):",
        "1. Check the section with search_sections.",
        _PREREQ_RULE,
        "3. Seat caps: a section whose enrolled count has reached its capacity is full. Never enroll anyone into a full "
        "section; offer the waitlist instead, and call add_to_waitlist only if the student says yes.",
        "4. Credit limit: a student may carry at most 18 credits in a term, counting the new course. The only exception "
        "is an advisor's credit override on the student's record, which raises the limit to its max_credits - but only "
        "if its valid_until date is on or after today.",
        "5. If enroll fails or is rate-limited, try once more; if it still fails, tell the student they are not "
        "enrolled yet. Never quote a confirmation number enroll didn't return.",
    ]
    if Now.fault == "registrar_prompt_rewritten":  # (the fall page pasted back, before the prerequisite audit rule)
        rules.remove(_PREREQ_RULE)
    return "\n".join(rules)


def registrar_model() -> str:
    return OLD_GEMINI if Now.fault == "old_model_registrar" else GEMINI


STUDENT = "S-20417"
_D_GRADE = ("prereq_ignored", "student_wrong_record", "registrar_prompt_rewritten", "old_model_registrar")


def find_student(student_id: str) -> dict[str, Any]:
    """A student's record: name, program, standing, this term's credits, completed courses with grades, overrides."""
    if Now.fault == "student_wrong_record" and student_id == STUDENT:  # (the SIS cache matched a transposed id)
        student_id = "S-20471"
    math = "D" if Now.pair in _D_GRADE and student_id == STUDENT else "B"
    credits = 16 if Now.pair in ("expired_override_used", "enroll_429_invented") else 12
    overrides = []
    if Now.pair in ("expired_override_used", "enroll_429_invented"):
        overrides = [{"type": "credit_overload", "max_credits": 20, "approved_by": "Dr. R. Iyer (advisor)",
                      "valid_until": "2026-11-30" if Now.pair == "expired_override_used" else "2027-01-31"}]
    name = {"S-20417": "Maya Okafor", "S-20471": "Mason O'Keefe"}.get(student_id, "Unknown")
    return {"student_id": student_id, "name": name, "program": "BSc Computer Science", "standing": "good",
            "term": {"term": "2027-SP", "credits_enrolled": credits},
            "completed": [{"course": "CS 201", "grade": "A-", "term": "2025-FA"},
                          {"course": "MATH 221", "grade": math, "term": "2026-SP"},
                          {"course": "CS 210", "grade": "B+", "term": "2026-FA"}],
            "overrides": overrides, "holds": []}


def search_sections(course: str, term: str) -> dict[str, Any]:
    """The sections of a course in a term: id, meeting times, instructor, capacity, enrolled, waitlist, prerequisites,
    credits."""
    full = Now.pair == "full_section_enrolled"
    rows = [("001", "MWF 09:00-09:50", "Prof. L. Brandt", 40, 31), ("002", "TTh 14:00-15:15", "Dr. A. Novak", 35,
                                                                    35 if full else 29)]
    return {"course": course.upper(), "term": term, "title": "Operating Systems", "credits": 4,
            "prerequisites": ["CS 201", "MATH 221"], "sections": [
                {"section_id": f"{course.upper().replace(' ', '')}-{n}", "meets": meets, "instructor": who,
                 "capacity": cap, "enrolled": enrolled, "waitlist": 3 if enrolled >= cap else 0}
                for n, meets, who, cap, enrolled in rows]}


def enroll(student_id: str, section_id: str) -> dict[str, Any]:
    """Enrolls a student in a section; answers the enrollment's confirmation number and the term's credits."""
    if Now.pair == "enroll_429_invented" and Now.count("enroll") == 1:
        raise RuntimeError("429 Too Many Requests: registration service busy, retry after 3s")
    return {"confirmation": "EN-774210", "student_id": student_id, "section_id": section_id, "status": "enrolled"}


def add_to_waitlist(student_id: str, section_id: str) -> dict[str, Any]:
    """Adds a student to a full section's waitlist; answers their position."""
    return {"waitlist_id": "WL-30918", "student_id": student_id, "section_id": section_id, "position": 4}


REGISTRAR_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_student, search_sections, enroll,
                                                                          add_to_waitlist)}


# ---- the dispatch team's world -------------------------------------------------------------------------------------

ROUTER_RULES = (
    "You are the order router on Forkful's dispatch team. Read the order with get_order. Route it with route_order to "
    "its zone only if the customer's distance_km is within the restaurant's own max_radius_km; otherwise reject it with "
    "reject_order and stop. Once routed, hand the order to the courier assigner.")
_SPLIT_RULE = ("- An order holding both hot and cold items goes only to a courier whose bag has split_compartments "
               "(hot and cold kept apart).")


def assigner_rules() -> str:
    rules = [
        "You are the courier assigner on Forkful's dispatch team. For the routed order, list the zone's couriers with "
        "list_couriers and assign one with assign_courier:",
        "- A bike never takes an order more than 5 km away.",
        _SPLIT_RULE,
        "- Among the couriers that fit, take the one with the smallest eta_to_restaurant_min.",
        "Then hand the order to the customer notifier.",
    ]
    if Now.fault == "assigner_prompt_rewritten":  # (the summer rules re-pasted, from before the split-bag fleet)
        rules.remove(_SPLIT_RULE)
    return "\n".join(rules)


NOTIFIER_RULES = (
    "You are the customer notifier on Forkful's dispatch team. Read the order's ETA with get_eta. If the ETA is more "
    "than 15 minutes after promised_at, refund the delivery fee once with issue_refund - unless the delay's cause is "
    "that the customer changed the delivery address, in which case no refund is owed. Then tell the customer the "
    "courier and the ETA with notify_customer, and answer with a short summary for the dispatch log. If get_eta times "
    "out, try once more; never tell a customer an ETA you didn't read.")

def get_order(order_id: str) -> dict[str, Any]:
    """An order: restaurant (with its max delivery radius), customer, distance, zone, items with temperature and
    weight, promised time, delivery fee."""
    far = Now.pair == "outside_radius_routed"
    return {"order_id": order_id, "placed_at": "2026-12-04T18:52:00Z",
            "restaurant": {"id": "R-118", "name": "Basil & Brine", "zone": "central", "max_radius_km": 7.0},
            "customer": {"id": "C-55120", "name": "Jonah Reyes", "address": "41 Tanner Street, flat 3"},
            "distance_km": 9.4 if far else 4.1, "items": [
                {"name": "Lamb shawarma plate", "temperature": "hot", "weight_kg": 0.9},
                {"name": "Falafel wrap", "temperature": "hot", "weight_kg": 0.4},
                {"name": "Tabbouleh", "temperature": "cold", "weight_kg": 0.35},
                {"name": "Pistachio ice cream 500ml", "temperature": "cold", "weight_kg": 0.55}],
            "promised_at": "19:30", "delivery_fee": 3.99, "currency": "GBP"}


def route_order(order_id: str, zone: str) -> dict[str, Any]:
    """Routes an order into a zone's dispatch queue."""
    return {"order_id": order_id, "zone": zone, "status": "routed", "queue_position": 2}


def reject_order(order_id: str, reason: str) -> dict[str, Any]:
    """Rejects an order the dispatch team can't deliver (the customer is refunded in full by the platform)."""
    return {"order_id": order_id, "status": "rejected", "reason": reason, "refund": "full, automatic"}


def list_couriers(zone: str) -> dict[str, Any]:
    """The couriers free in a zone: id, name, vehicle, bag, minutes to the restaurant."""
    if Now.fault == "couriers_wrong_zone" and zone == "central":  # (the fleet service's zone cache served a neighbour)
        zone = "riverside"
    rows = {"central": [("K-301", "Ana", "bike", False, 4), ("K-322", "Tomas", "scooter", True, 9),
                        ("K-340", "Priya", "car", True, 13)],
            "riverside": [("K-411", "Femi", "scooter", True, 22), ("K-415", "Lou", "car", True, 26)]}[zone]
    return {"zone": zone, "as_of": "2026-12-04T18:55:10Z", "couriers": [
        {"courier_id": cid, "name": name, "vehicle": vehicle, "bag": {"split_compartments": split},
         "eta_to_restaurant_min": eta} for cid, name, vehicle, split, eta in rows]}


def assign_courier(order_id: str, courier_id: str) -> dict[str, Any]:
    """Assigns a courier to an order."""
    return {"order_id": order_id, "courier_id": courier_id, "status": "assigned", "assignment_id": "AS-90317"}


_LATE = ("late_refund_exception_misapplied", "refund_repeated", "handoff_drops_context")


def get_eta(order_id: str) -> dict[str, Any]:
    """An order's delivery ETA against its promised time, with the delay's cause."""
    if Now.pair == "eta_timeout_invented" and Now.count("get_eta") == 1:
        raise TimeoutError("tracking service did not answer within 8s")
    late = Now.pair in _LATE
    cause = "customer_changed_address" if Now.pair == "late_refund_exception_misapplied" else "kitchen_backlog"
    return {"order_id": order_id, "promised_at": "19:30", "eta": "19:52" if late else "19:36",
            "minutes_late": 22 if late else 6, "delay_cause": cause if late else None}


def issue_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Refunds part of an order to the customer's card."""
    return {"refund_id": f"RF-{41200 + Now.count('issue_refund')}", "order_id": order_id, "amount": amount,
            "status": "issued"}


def notify_customer(order_id: str, message: str) -> dict[str, Any]:
    """Sends the customer an app notification and SMS."""
    return {"order_id": order_id, "notification_id": "NT-66201", "channels": ["push", "sms"], "status": "sent"}


ROUTER_TOOLS = {f.__name__: f for f in (get_order, route_order, reject_order)}
ASSIGNER_TOOLS = {f.__name__: f for f in (list_couriers, assign_courier)}
NOTIFIER_TOOLS = {f.__name__: f for f in (get_eta, issue_refund, notify_customer)}


# ---- the surveillance agent's world --------------------------------------------------------------------------------

_HOLDING_ROW = ("| Holding period | An employee account's sale of a symbol within 30 calendar days of its latest buy of "
                "that symbol is a breach, unless the sale carries a preclearance_id whose pre-clearance (on the trade) "
                "names the same symbol. |")


def surveillance_instructions() -> str:
    holding = None if Now.fault == "surveillance_prompt_rewritten" else _HOLDING_ROW  # (the 2024 table re-pasted)
    return "\n".join(line for line in [
        "You are the trade-surveillance analyst agent at Ashgrove Securities' compliance desk. Today is 2026-12-04.",
        "",
        "Work each alert from its records: get_alert, then get_trades, search_restricted_list, get_position and "
        "get_limits for the alert's account and symbol. Apply every rule:",
        "",
        "| Rule | How to apply it |",
        "|---|---|",
        "| Restricted list | A trade breaches when, on its trade date, the symbol is restricted under the highest "
        "list_version in force that day (effective_from on or before the date, effective_to after it or null). Never "
        "decide on a version marked superseded. |",
        holding,
        "| Position limit | The position after the latest trade (get_position's position_qty) must not exceed the "
        "account's max_position_qty for the symbol (get_limits). max_order_qty is a different limit - never compare "
        "the position with it. |",
        "",
        "File exactly one finding with file_finding: disposition \"escalate\" if any trade breaches, \"close\" only when "
        "every rule was checked and none breaches, listing every breaching trade id. Then answer the compliance officer "
        "with the disposition and each breach (rule and trade id).",
        "If a system times out or is rate-limited, try once more; if it still fails, file nothing and say which check "
        "is incomplete. Never use a figure you didn't read.",
    ] if line is not None)


def surveillance_model() -> str:
    if Now.recorder == "mcp-surveillance":
        return OLD_CLAUDE if Now.fault == "old_model_mcp" else CLAUDE
    return MODEL


ALERT, ACCOUNT, SYMBOL = "ALR-5590", "A-7731", "KSTR"
_RESTRICTED = ("restricted_version_superseded", "restricted_index_stale", "wrong_symbol_argument", "old_model_mcp",
               "breach_withheld")
_HOLDING = ("holding_period_missed", "trades_shape_changed", "preclearance_other_symbol", "surveillance_prompt_rewritten", "premature_close",
            "breach_withheld", "rationale_mismatch", "trades_wrong_account")
_OVER_LIMIT = ("position_compared_with_order_limit", "position_timeout_invented")


def get_alert(alert_id: str) -> dict[str, Any]:
    """A surveillance alert: the account, its owner and type, the symbol and issuer, what raised it."""
    return {"alert_id": alert_id, "raised": "2026-12-03T22:10:00Z", "trigger": "employee trading in covered issuer",
            "account": {"account_id": ACCOUNT, "type": "employee", "owner": "Dana Whitfield",
                        "desk": "equity research"}, "symbol": SYMBOL, "issuer": "Kestrel Robotics Inc."}


def get_trades(account_id: str, symbol: str) -> dict[str, Any]:
    """An account's trades in a symbol, oldest first: id, side, quantity, price, trade date, pre-clearance."""
    if Now.pair == "trades_429_partial" and Now.count("get_trades") <= 2:
        raise RuntimeError("429 Too Many Requests: trade store rate limit, retry after 30s")
    if Now.fault == "trades_wrong_account" and account_id == ACCOUNT:  # (the trade store matched on the owner's surname)
        account_id = "A-7713"
    holding = Now.pair in _HOLDING and account_id == ACCOUNT
    clearance = None
    if Now.pair == "preclearance_other_symbol":
        clearance = {"preclearance_id": "PC-2219", "symbol": "KSTL", "approved": "2026-11-18"}
    rows = [("T-60311", "BUY", 500, 41.20, "2026-11-10" if holding else "2026-10-05", None),
            ("T-60388", "SELL", 500, 44.85, "2026-11-22" if holding else "2026-11-20", clearance),
            ("T-60402", "BUY", 3000, 43.10, "2026-12-02", None)]
    trades = [{"trade_id": tid, "side": side, "qty": qty, "price": price, "trade_date": date, "preclearance": pc}
              for tid, side, qty, price, date, pc in rows]
    if Now.fault == "trades_shape_changed":  # the trade store's v2 API, switched on under the agent
        return {"data": {"account": account_id, "executions": [
            {"execId": x["trade_id"], "buySell": x["side"][0], "fill": {"qty": x["qty"], "px": x["price"]},
             "tradeDt": x["trade_date"]} for x in trades]}}
    return {"account_id": account_id, "symbol": symbol, "trades": trades}


def search_restricted_list(symbol: str) -> dict[str, Any]:
    """Searches the restricted list's index: every version's entry for a symbol, each with version, status, effective
    dates and reason."""
    if symbol.upper() != SYMBOL:
        return {"symbol": symbol, "index_built": "2026-12-03", "results": []}
    v41 = {"list_version": 41, "status": "superseded", "symbol": SYMBOL, "restricted": False,
           "effective_from": "2026-09-15", "effective_to": "2026-12-01", "reason": "removed after the secondary closed"}
    v43 = {"list_version": 43, "status": "current", "symbol": SYMBOL, "restricted": True,
           "effective_from": "2026-12-01", "effective_to": None, "reason": "research initiation pending"}
    if Now.pair not in _RESTRICTED:
        v43 = {**v43, "effective_from": "2026-12-05", "reason": "research initiation scheduled"}
    if Now.fault == "restricted_index_stale":  # (the index's last build was 2026-11-29: before version 43)
        return {"symbol": symbol, "index_built": "2026-11-29", "results": [{**v41, "status": "current",
                                                                            "effective_to": None}]}
    return {"symbol": symbol, "index_built": "2026-12-03", "results": [v43, v41]}


def get_position(account_id: str, symbol: str) -> dict[str, Any]:
    """An account's position in a symbol after its latest trade."""
    if Now.pair == "position_timeout_invented" and Now.count("get_position") == 1:
        raise TimeoutError("positions service did not answer within 10s")
    qty = 5500 if Now.pair in _OVER_LIMIT else 3000
    return {"account_id": account_id, "symbol": symbol, "position_qty": qty, "as_of": "2026-12-03", "avg_cost": 42.77}


def get_limits(account_id: str) -> dict[str, Any]:
    """An account's trading limits per symbol: max position and max single order."""
    return {"account_id": account_id, "limits": [{"symbol": SYMBOL, "max_position_qty": 5000, "max_order_qty": 10000},
                                                 {"symbol": "*", "max_position_qty": 2000, "max_order_qty": 5000}]}


def file_finding(alert_id: str, disposition: str, breaching_trades: list[str], summary: str) -> dict[str, Any]:
    """Files the alert's finding (escalate or close) with the breaching trades."""
    return {"finding_id": f"FN-{8800 + Now.count('file_finding')}", "alert_id": alert_id, "disposition": disposition,
            "status": "filed"}


SURVEILLANCE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_alert, get_trades, search_restricted_list, get_position, get_limits, file_finding)}


# ---- the requests and the scripted student -------------------------------------------------------------------------

REGISTRAR_REQUESTS = {
    "section": "Hi! I'd like to add CS 340 section 001 (Operating Systems) for spring.",
    "full": "Hello, can I get into CS 340 section 002 for the spring term?",
    "course": "Hi, I want to add CS 340 for spring 2027.",
}
_REGISTRAR_ASKS = {"full_section_enrolled": "full", "section_not_asked": "course"}
REGISTRAR_HISTORY = ["Hi, I'd like to add CS 340 section 001 for spring please.",
                     "Hello - could I register for CS 340 section 002 next term?"]
_STUDENT = [("student ID", f"Sure, it's {STUDENT}."), ("Which section", "Section 001, please."),
            ("waitlist?", "Yes, please put me on the waitlist."), ("anything else", "No, that's all - thanks!")]

DISPATCH_REQUEST = "Dispatch order ORD-88412."
DISPATCH_HISTORY = ["Dispatch order ORD-88377.", "Please dispatch ORD-88390."]

SURVEILLANCE_REQUEST = f"Work surveillance alert {ALERT} and file the finding."
SURVEILLANCE_HISTORY = [f"Work surveillance alert {ALERT} and file the finding.",
                        f"Please review alert {ALERT} (employee account) and file a finding."]


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "genai-registrar":
        return REGISTRAR_REQUESTS[_REGISTRAR_ASKS.get(pair, "section")] if pair else REGISTRAR_HISTORY[v % 2]
    if Now.recorder == "agents-dispatch":
        return DISPATCH_REQUEST if pair else DISPATCH_HISTORY[v % 2]
    return SURVEILLANCE_REQUEST if pair else SURVEILLANCE_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Gemini and Anthropic arrive in that form) ------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    offered = {x.get("function", {}).get("name") for x in body.get("tools") or ()}
    plans: dict[str, Callable[[], dict[str, Any]]] = {
        "registration desk of Halden": lambda: _registrar(t, asked == OLD_GEMINI),
        "order router on Forkful": lambda: _router(t, offered),
        "courier assigner on Forkful": lambda: _assigner(t, offered),
        "customer notifier on Forkful": lambda: _notifier(t),
        "trade-surveillance analyst agent at Ashgrove": lambda: _surveil(t, asked == OLD_CLAUDE),
    }
    plan = next((p for cue, p in plans.items() if cue in t.system), None)
    out = plan() if plan else reply("Hello! How can I help?")  # (a notifier handed nothing still answers)
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _registrar(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if "that's all" in said:
        return reply("You're welcome - good luck this spring!")
    sid = re.search(r"\bS-\d{5}\b", said)
    if not sid:
        return reply("Happy to help with that. First, could you tell me your student ID?")
    step = t.need(("find_student", {"student_id": sid.group(0)}), ("search_sections", {"course": "CS 340",
                                                                                       "term": "2027-SP"}))
    if step:
        return step
    student, found = t.value("find_student"), t.value("search_sections")
    named = re.search(r"section (00\d)", said, re.I)
    if not named and fault != "section_not_asked":
        sections = "; ".join(f"{s['section_id'][-3:]} ({s['meets']}, {s['instructor']})" for s in found["sections"])
        return reply(f"CS 340 has two sections this spring: {sections}. Which section would you like?")
    number = named.group(1) if named else "001"
    section = next(s for s in found["sections"] if s["section_id"].endswith(number))
    done, waited = _ok(t, "enroll"), _ok(t, "add_to_waitlist")
    if waited:
        w = waited[0]
        return reply(f"You're on the waitlist for {section['section_id']} at position {w['position']} ({w['waitlist_id']})."
                     " If a seat opens you'll be enrolled automatically and emailed." + _ANYTHING)
    if not done:
        tried = t.got("enroll")
        if not tried:
            grades = {c["course"]: c["grade"] for c in student["completed"]}
            missing = [p for p in found["prerequisites"] if grades.get(p, "F") not in ("A", "A-", "B+", "B", "B-", "C+", "C")]
            if missing and not old and "Prerequisites:" in t.system and fault != "prereq_ignored":
                return reply(f"I can't add CS 340: it needs {' and '.join(found['prerequisites'])} with a C or better, "
                             f"and your record shows {missing[0]} with a {grades.get(missing[0])}. You could ask "
                             f"{section['instructor']} for a prerequisite waiver." + _ANYTHING)
            if section["enrolled"] >= section["capacity"] and fault != "full_section_enrolled":
                if "waitlist" in said:
                    return call("add_to_waitlist", student_id=student["student_id"], section_id=section["section_id"])
                return reply(f"Section {section['section_id']} is full ({section['enrolled']}/{section['capacity']}, "
                             f"{section['waitlist']} on the waitlist). Would you like me to add you to the waitlist?")
            valid = [o for o in student["overrides"] if fault == "expired_override_used" or o["valid_until"] >= TODAY]
            limit = max([18] + [o["max_credits"] for o in valid])
            total = student["term"]["credits_enrolled"] + found["credits"]
            if total > limit:
                lapsed = student["overrides"][0]["valid_until"] if student["overrides"] else None
                why = f" (your advisor's override to 20 expired on {lapsed})" if lapsed else ""
                return reply(f"Adding CS 340 would take you to {total} credits, over the 18-credit limit{why}, so I "
                             "can't enroll you. Your advisor can renew the override." + _ANYTHING)
        elif fault == "enroll_429_invented":  # (the fault: a confirmation the service never gave)
            return reply(f"You're enrolled in {section['section_id']} (confirmation EN-774198)." + _ANYTHING)
        return _retry_or("enroll", tried, "The registration service isn't answering, so you're not enrolled yet - please "
                         "try again later today." + _ANYTHING, student_id=student["student_id"],
                         section_id=section["section_id"])
    over = (" Your advisor's credit override (to 20 credits, valid until 2027-01-31) covers the overload."
            if student["term"]["credits_enrolled"] + found["credits"] > 18 else "")
    return reply(f"Done: you're enrolled in {section['section_id']} ({section['meets']}), confirmation "
                 f"{done[0]['confirmation']}.{over}" + _ANYTHING)


def _handing(offered: set[str], to: str, say: str) -> dict[str, Any]:
    return call(next(n for n in offered if n.startswith(f"transfer_to_{to}")), say)


def _order_id(t: Talk) -> str | None:
    found = re.search(r"\bORD-\d{5}\b", " ".join(t.users))
    return found.group(0) if found else None


def _router(t: Talk, offered: set[str]) -> dict[str, Any]:
    order_id = _order_id(t)
    step = t.need(("get_order", {"order_id": order_id}))
    if step:
        return step
    order, rejected, routed = t.value("get_order"), t.value("reject_order"), t.value("route_order")
    radius = order["restaurant"]["max_radius_km"]
    if rejected:
        return reply(f"{order_id} rejected: {order['distance_km']} km is beyond {order['restaurant']['name']}'s "
                     f"{radius} km radius; the customer is refunded in full automatically.")
    if not routed:
        if order["distance_km"] > radius and Now.fault != "outside_radius_routed":
            return call("reject_order", order_id=order_id, reason=f"{order['distance_km']} km, beyond the restaurant's "
                        f"{radius} km radius")
        return call("route_order", order_id=order_id, zone=order["restaurant"]["zone"])
    return _handing(offered, "assigner", f"Routed {order_id} to {routed['zone']} ({order['distance_km']} km). Handing "
                                         "to the courier assigner.")


def _assigner(t: Talk, offered: set[str]) -> dict[str, Any]:
    order = t.value("get_order")
    if not order:
        return reply("I haven't been handed an order - which order should I assign a courier to?")
    zone = order["restaurant"]["zone"]
    step = t.need(("list_couriers", {"zone": zone}))
    if step:
        return step
    assigned = t.value("assign_courier")
    couriers = sorted(t.value("list_couriers")["couriers"], key=lambda c: c["eta_to_restaurant_min"])
    if not assigned:
        mixed = {i["temperature"] for i in order["items"]} >= {"hot", "cold"}
        careful = "split_compartments" in t.system and Now.fault != "hot_cold_mixed"
        fit = [c for c in couriers if not (c["vehicle"] == "bike" and order["distance_km"] > 5)
               and not (careful and mixed and not c["bag"]["split_compartments"])]
        return call("assign_courier", order_id=order["order_id"], courier_id=fit[0]["courier_id"])
    who = next(c for c in couriers if c["courier_id"] == assigned["courier_id"])
    return _handing(offered, "notifier", f"Assigned {who['courier_id']} ({who['name']}, {who['vehicle']}, "
                                         f"{who['eta_to_restaurant_min']} min to the restaurant) to {order['order_id']}.")


def _notifier(t: Talk) -> dict[str, Any]:
    order, assigned = t.value("get_order"), t.value("assign_courier")
    if not order or not assigned:
        return reply("I have no order handed to me - which order, and which courier, should I tell the customer about?")
    order_id = order["order_id"]
    tried, eta = t.got("get_eta"), t.value("get_eta")
    if not eta:
        if tried and Now.fault == "eta_timeout_invented":  # (the fault: an ETA nobody read)
            eta = {"eta": "19:40", "minutes_late": 10, "delay_cause": None}
        else:
            return _retry_or("get_eta", tried, f"Couldn't read {order_id}'s ETA (tracking timed out twice); the "
                             "customer is not yet notified.", order_id=order_id)
    refunds = _ok(t, "issue_refund")
    owed = eta["minutes_late"] > 15 and (eta["delay_cause"] != "customer_changed_address"
                                        or Now.fault == "late_refund_exception_misapplied")
    if owed and (not refunds or (Now.fault == "refund_repeated" and len(refunds) == 1)):
        return call("issue_refund", order_id=order_id, amount=order["delivery_fee"],
                    reason=f"{eta['minutes_late']} minutes late")
    sent = t.value("notify_customer")
    refund = f" We've refunded your GBP {order['delivery_fee']:.2f} delivery fee for the delay." if refunds else ""
    if not sent:
        return call("notify_customer", order_id=order_id, message=f"Your Basil & Brine order is on its way with "
                    f"courier {assigned['courier_id']}, arriving about {eta['eta']}.{refund}")
    why = ""
    if eta["minutes_late"] > 15 and not refunds:
        why = " No refund: the delay follows the customer's change of address."
    return reply(f"{order_id}: customer notified ({sent['notification_id']}), courier {assigned['courier_id']}, ETA "
                 f"{eta['eta']} ({eta['minutes_late']} min after the promised 19:30)."
                 + (f" Delivery fee refunded: {', '.join(r['refund_id'] for r in refunds)}." if refunds else why))


def _in_force(entries: list[dict[str, Any]], date: str, careless: bool) -> dict[str, Any] | None:
    """The restricted-list entry deciding a trade date: the highest version in force that day (the careless reader
    takes the superseded one)."""
    live = [e for e in entries if e["effective_from"] <= date and (e["effective_to"] is None or e["effective_to"] > date)
            and (careless or e["status"] != "superseded")]
    if careless:
        live = [e for e in entries if e["status"] == "superseded"] or live
    return max(live, key=lambda e: e["list_version"]) if live else None


def _surveil(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    step = t.need(("get_alert", {"alert_id": ALERT}))
    if step:
        return step
    alert = t.value("get_alert")
    account, symbol = alert["account"]["account_id"], alert["symbol"]
    tried, got = t.got("get_trades"), t.value("get_trades")
    if not got:
        if tried and fault == "trades_429_partial":
            got = {"trades": []}  # (the fault: 'no trades' after a rate limit nobody cleared)
        else:
            return _retry_or("get_trades", tried, f"{ALERT}: the trade store is rate-limiting us (429 twice), so no "
                             "rule could be checked and nothing is filed yet - the alert stays open; I'll retry after the "
                             "limit clears.", account_id=account, symbol=symbol)
    trades = got.get("trades", [])  # (v2's data.executions read by v1's name: none)
    looked = "KSTL" if fault == "wrong_symbol_argument" else symbol
    step = t.need(("search_restricted_list", {"symbol": looked}))
    if step:
        return step
    breaches: list[tuple[str, str]] = []
    entries = t.value("search_restricted_list")["results"]
    for x in trades:
        e = None if old else _in_force(entries, x["trade_date"], fault == "restricted_version_superseded")
        if x["side"] == "BUY" and e and e["restricted"]:
            breaches.append((x["trade_id"], f"restricted list v{e['list_version']} ({e['reason']})"))
    finished = [v for _, v in t.got("file_finding") if isinstance(v, dict)]
    if fault != "premature_close":  # (the fault: filed on the restricted list alone)
        holding = "| Holding period |" in t.system and fault != "holding_period_missed"
        for sale in (x for x in trades if x["side"] == "SELL" and holding):
            buys = [b["trade_date"] for b in trades if b["side"] == "BUY" and b["trade_date"] <= sale["trade_date"]]
            days = (date.fromisoformat(sale["trade_date"]) - date.fromisoformat(max(buys))).days if buys else 99
            pc = sale["preclearance"]
            cleared = pc is not None and (pc["symbol"] == symbol or fault == "preclearance_other_symbol")
            if days < 30 and not cleared:
                breaches.append((sale["trade_id"], f"holding period ({days} days after the buy)"))
        tried_pos, pos = t.got("get_position"), t.value("get_position")
        if not pos:
            if tried_pos and fault == "position_timeout_invented":
                pos = {"position_qty": 3000}  # (the fault: the latest trade's size taken for the position)
            else:
                return _retry_or("get_position", tried_pos, f"{ALERT}: the positions service timed out twice, so the "
                                 "position-limit check is incomplete and nothing is filed yet.", account_id=account,
                                 symbol=symbol)
        step = t.need(("get_limits", {"account_id": account}))
        if step:
            return step
        limit = next(x for x in t.value("get_limits")["limits"] if x["symbol"] == symbol)
        cap = limit["max_order_qty" if fault == "position_compared_with_order_limit" else "max_position_qty"]
        if pos["position_qty"] > cap and trades:
            breaches.append((trades[-1]["trade_id"], f"position {pos['position_qty']} over max_position_qty "
                                                     f"{limit['max_position_qty']}"))
    disposition = "escalate" if breaches else "close"
    ids = [b for b, _ in breaches]
    if not finished or (fault == "finding_repeated" and len(finished) == 1):
        filed = "close" if fault == "rationale_mismatch" else disposition
        words = (f"Escalating {ALERT}: {', '.join(ids)} breach the policy." if fault == "rationale_mismatch" else None)
        return call("file_finding", words, alert_id=ALERT, disposition=filed, breaching_trades=ids if filed ==
                    "escalate" else [], summary="; ".join(f"{b}: {why}" for b, why in breaches) or "no breach found")
    told = breaches[:1] if fault == "breach_withheld" else breaches
    listed = "; ".join(f"{b} - {why}" for b, why in told)
    return reply(f"{ALERT} ({alert['account']['owner']}, {account}, {symbol}): {disposition}d as "
                 f"{finished[0]['finding_id']}." + (f" Breaches: {listed}." if told else
                                                     f" {len(trades)} trades checked against every rule; none breaches."))


# ---- recorders -----------------------------------------------------------------------------------------------------


class GenaiRegistrar(kit.AgentotelRecorder):
    """The registration desk as a google-genai generate_content loop with function declarations (automatic function
    calling off), the tools `@agentotel.tool`s, under agentotel; the student's reply appended when the answer holds its
    cue."""

    agent = REGISTRAR

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel
        from google import genai

        super().__init__(options, url)
        self.client = genai.Client(api_key="test-key", http_options={"base_url": url})
        self.tools = {name: agentotel.tool(f) for name, f in REGISTRAR_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.genai_loop(self.client, registrar_model(), registrar_instructions(), task, self.tools,
                              declared(REGISTRAR_TOOLS), lambda said: Now.reply(_STUDENT, said))


class AgentsDispatch(kit.AgentotelRecorder):
    """The dispatch team on the OpenAI Agents SDK (chat completions model): router -> assigner -> notifier by two
    handoffs in one Runner.run, under agentotel. The faulty deployment's assigner -> notifier handoff filter keeps the
    handoff call alone."""

    agent = DISPATCH

    def body(self, task: str) -> str:
        import openai
        from agents import OpenAIChatCompletionsModel

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url + "/v1",
                                                                                  api_key="sk-test", max_retries=0))
        team = [("router", ROUTER_RULES, ROUTER_TOOLS), ("assigner", assigner_rules(), ASSIGNER_TOOLS),
                ("notifier", NOTIFIER_RULES, NOTIFIER_TOOLS)]
        # (the fault: a queue between the assigner and the notifier passed the handoff alone)
        return kit.agents_chain(chat, team, task, drop_into="notifier" if Now.fault == "handoff_drops_context" else None)


class McpSurveillance(kit.AgentotelRecorder):
    """The surveillance agent as a plain anthropic SDK messages loop whose tools are an MCP server's (in process), each
    call through the MCP client's session, under agentotel."""

    agent = SURVEILLANCE

    def body(self, task: str) -> str:
        return asyncio.run(kit.mcp_anthropic_loop(self.url, surveillance_model(), surveillance_instructions(), task,
                                                  "ashgrove-surveillance", SURVEILLANCE_TOOLS))


class TlSurveillance(kit.TraceloopRecorder):
    """The surveillance agent as a plain openai SDK chat loop (kit.chat_loop) under OpenLLMetry's openai
    instrumentation, the tools traceloop tool spans, through agentotel-collector."""

    agent = SURVEILLANCE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), SURVEILLANCE_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, surveillance_model(), surveillance_instructions(), task, self.tools,
                             declared(SURVEILLANCE_TOOLS))


RECORDERS: dict[str, Any] = {"genai-registrar": GenaiRegistrar, "agents-dispatch": AgentsDispatch,
                             "mcp-surveillance": McpSurveillance, "tl-surveillance": TlSurveillance}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Gemini and Anthropic there)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)  # (the Agents SDK's own trace export stays off: no key, no network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, after_handoff, answer, asking, nth_llm, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "prereq_ignored": ("model", f"{tau} (prerequisites with C or better): MATH 221 passed with D, CS 340 enrolled; "
                                    "the twin refuses", asking("enroll")),
        "full_section_enrolled": ("model", f"{tau} (never enroll into a full section): 35/35 enrolled into; the twin "
                                           "offers the waitlist and adds the student once they agree",
                                  asking("enroll")),
        "section_not_asked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'add CS 340' with two sections, "
                                       "001 picked; the twin asks which", asking("enroll")),
        "expired_override_used": ("model", f"{tau} (an exception misapplied: the override only while valid): 20 "
                                           "credits enrolled on an override that expired 2026-11-30; the twin refuses",
                                  asking("enroll")),
        "student_wrong_record": ("tool", f"{trail} API issues: find_student(S-20417) answers S-20471's record (MATH 221 "
                                         "B); the student's D missed and CS 340 enrolled (the twin refuses)",
                                 tool_step("find_student")),
        "registrar_prompt_rewritten": ("prompt", "instructions changed: the prerequisite rule dropped from the desk's "
                                                 "prompt; a D-grade student enrolled", nth_llm(0)),
        "old_model_registrar": ("product", f"configuration: the desk pins an old model ({OLD_GEMINI}), which enrolls "
                                           "without reading the grades", nth_llm(0)),
        "enroll_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: enroll answered 429, the "
                                         "student told 'confirmation EN-774198'; the twin tries once more (and applies "
                                         "the valid credit override)", after(tool_step("enroll"))),
        "outside_radius_routed": ("model", f"{tau} (distance within the restaurant's max_radius_km): 9.4 km routed "
                                           "against a 7 km radius; the twin rejects", asking("route_order")),
        "hot_cold_mixed": ("model", f"{tau} / {mast} FM-1.1 (hot and cold only with split bags): the nearest bike "
                                    "without split compartments assigned; the twin takes the scooter",
                           asking("assign_courier")),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the notifier "
                                            "gets the handoff call alone and asks which order", after_handoff(1)),
        "late_refund_exception_misapplied": ("model", f"{tau} (no refund when the customer changed the address): the "
                                                      "fee refunded for a delay the customer caused; the twin refunds "
                                                      "nothing and says why", asking("issue_refund")),
        "refund_repeated": ("model", f"{mast} FM-1.3 Step repetition: issue_refund sent twice (the rules say once)",
                            asking("issue_refund", 1)),
        "couriers_wrong_zone": ("tool", f"{trail} API issues: list_couriers(central) answers riverside's couriers; one "
                                        "22 minutes away assigned", tool_step("list_couriers")),
        "assigner_prompt_rewritten": ("prompt", "instructions changed: the assigner's split-bag rule dropped; hot and "
                                                "cold food on a bike", after_handoff(0)),
        "eta_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_eta timed out, the customer "
                                          "told 'arriving about 19:40'; the twin tries once more",
                                 after(tool_step("get_eta"))),
        "restricted_version_superseded": ("model", f"{tau} (never decide on a superseded list version): v41 (not "
                                                   "restricted) read for 2026-12-02 where v43 restricts; closed",
                                          asking("file_finding")),
        "holding_period_missed": ("model", f"{tau} (a sale within 30 days of the buy): T-60388 sold 12 days after the "
                                           "buy, not flagged; closed", asking("file_finding")),
        "position_compared_with_order_limit": ("model", f"{tau} (comparing two records' fields): position 5,500 held "
                                                        "against max_order_qty 10,000, not max_position_qty 5,000; "
                                                        "closed", asking("file_finding")),
        "restricted_index_stale": ("tool", "retrieval index stale: search_restricted_list served its 2026-11-29 build "
                                           "(v41 as current); v43 missing, the restricted buy closed",
                                   tool_step("search_restricted_list")),
        "trades_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_trades answers v2 "
                                         "(data.executions); read by v1's names, no trades, closed",
                                 tool_step("get_trades")),
        "finding_repeated": ("model", f"{mast} FM-1.3 Step repetition: file_finding sent twice (the rules say one)",
                             asking("file_finding", 1)),
        "old_model_mcp": ("product", f"configuration: the agent pins an old model ({OLD_CLAUDE}), which never applies "
                                     "the restricted list", nth_llm(0)),
        "position_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_position timed out, the "
                                               "last trade's 3,000 used as the position; the twin tries once more and "
                                               "escalates 5,500", after(tool_step("get_position"))),
        "preclearance_other_symbol": ("model", f"{tau} (an exception misapplied: pre-clearance for the same symbol): a "
                                               "KSTL pre-clearance taken for the KSTR sale; closed",
                                      asking("file_finding")),
        "breach_withheld": ("model", f"{mast} FM-2.4 Information withholding: two breaches filed, one told", answer),
        "rationale_mismatch": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Escalating ALR-5590' said, "
                                        "file_finding sent 'close'", asking("file_finding")),
        "premature_close": ("model", f"{mast} FM-3.1 Premature termination: closed after the restricted list alone, "
                                     "holding period and position never checked", asking("file_finding")),
        "trades_wrong_account": ("tool", f"{trail} API issues: get_trades(A-7731) answers A-7713's trades; the 12-day "
                                         "sale missed, closed", tool_step("get_trades")),
        "surveillance_prompt_rewritten": ("prompt", "instructions changed: the holding-period row dropped; the 12-day "
                                                    "sale closed", nth_llm(0)),
        "trades_429_partial": ("model", f"{trail} rate limits / hallucinated values: get_trades 429 twice, 'no trades' "
                                        "closed; the twin reports the alert incomplete", after(tool_step("get_trades"))),
        "wrong_symbol_argument": ("model", f"{trail} wrong arguments: search_restricted_list asked for KSTL, not the "
                                           "alert's KSTR; nothing found, closed", asking("search_restricted_list")),
    }
    chosen = {
        "genai-registrar": ["prereq_ignored", "full_section_enrolled", "section_not_asked", "expired_override_used",
                            "student_wrong_record", "registrar_prompt_rewritten", "old_model_registrar",
                            "enroll_429_invented"],
        "agents-dispatch": ["outside_radius_routed", "hot_cold_mixed", "handoff_drops_context",
                            "late_refund_exception_misapplied", "refund_repeated", "couriers_wrong_zone",
                            "assigner_prompt_rewritten", "eta_timeout_invented"],
        "mcp-surveillance": ["restricted_version_superseded", "holding_period_missed",
                             "position_compared_with_order_limit", "restricted_index_stale", "trades_shape_changed",
                             "finding_repeated", "old_model_mcp", "position_timeout_invented"],
        "tl-surveillance": ["preclearance_other_symbol", "breach_withheld", "rationale_mismatch", "premature_close",
                            "trades_wrong_account", "surveillance_prompt_rewritten", "wrong_symbol_argument",
                            "trades_429_partial"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (2c8a13b's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 2.0-2.1): 32 pairs, 4 recorders - diff top-1 32/32, check step+layer 14/32,
# good runs warned 1/32 (recording /tmp/h25-rec-d47kjix6).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED: dict[str, str] = {}
_NOTHING = "nothing found; "
_CLOSED = _NOTHING + "file_finding 'close' where "
CHECK_MISSED = {
    "model-genai-registrar-prereq-ignored": _NOTHING + "enroll where find_student's MATH 221 grade is D and the prompt "
                                            "says 'C or better (C-, D and F do not count)'",
    "model-genai-registrar-full-section-enrolled": _NOTHING + "enroll into CS340-002 whose enrolled 35 equals its "
                                                   "capacity 35 ('Never enroll anyone into a full section')",
    "model-genai-registrar-section-not-asked": _NOTHING + "the student named no section, search_sections listed two, "
                                               "enroll picked 001 ('ask which section they want - don't pick one')",
    "model-genai-registrar-expired-override-used": "answer_misread@8/model ranked (TRUE against the set's script: the "
                                                   "answer's hard-coded 'valid until 2027-01-31'); nothing read enroll@6 "
                                                   "at 16 + 4 = 20 credits on an override whose valid_until 2026-11-30 "
                                                   "is before today",
    "model-agents-dispatch-hot-cold-mixed": _NOTHING + "assign_courier(K-301), a bike whose bag.split_compartments is "
                                            "false, for an order with hot and cold items",
    "model-agents-dispatch-late-refund-exception-misapplied": _NOTHING + "issue_refund after get_eta's delay_cause "
                                                              "'customer_changed_address' ('no refund is owed')",
    "model-agents-dispatch-eta-timeout-invented": _NOTHING + "get_eta@17 failed (TimeoutError) and notify_customer told "
                                                  "'arriving about 19:40', a time no call returned (the same shape was "
                                                  "found under MCP and OpenLLMetry, not under the Agents SDK)",
    "model-mcp-surveillance-restricted-version-superseded": _CLOSED + "search_restricted_list's current v43 (restricted "
                                                            "from 2026-12-01) covers T-60402 of 2026-12-02; the close "
                                                            "rests on v41, marked superseded",
    "model-mcp-surveillance-holding-period-missed": _CLOSED + "T-60388 SELL of 2026-11-22 is 12 days after the BUY "
                                                    "T-60311 of 2026-11-10, no preclearance",
    "model-mcp-surveillance-position-compared-with-order-limit": _CLOSED + "get_position's position_qty 5500 is over "
                                                                 "get_limits' max_position_qty 5000",
    "tool-mcp-surveillance-restricted-index-stale": _NOTHING + "search_restricted_list's index_built 2026-11-29 with v41 "
                                                    "as 'current' (effective_to null), where the history runs' search "
                                                    "was built 2026-12-03 and listed v43 (diff found the step)",
    "model-mcp-surveillance-position-timeout-invented": "tool_error_ignored@9/tool: the right step, the tool layer (a "
                                                        "timeout reads as the tool's); the model closed on a position "
                                                        "no call returned where the rules say try once more",
    "model-tl-surveillance-preclearance-other-symbol": _CLOSED + "T-60388's preclearance names KSTL, not the alert's "
                                                       "KSTR ('names the same symbol')",
    "model-tl-surveillance-premature-close": _NOTHING + "file_finding 'close' after get_alert, get_trades and "
                                             "search_restricted_list only; get_position and get_limits never called "
                                             "('close only when every rule was checked')",
    "model-tl-surveillance-wrong-symbol-argument": _NOTHING + "search_restricted_list(symbol='KSTL') where get_alert's "
                                                   "symbol is KSTR; its empty results read as not restricted",
}
FALSE_ALARMS = {
    "model-tl-surveillance-trades-429-partial": "tool_error_ignored@7/model: the good twin tried get_trades once more "
                                                "(429 again) and answered 'rate-limiting us (429 twice), so no rule "
                                                "could be checked and nothing is filed yet' - the failure told, read "
                                                "as going on without saying so (the error's 'retry after 30s')",
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "genai-registrar": {"required_before": {"enroll": ["find_student", "search_sections"],
                                            "add_to_waitlist": ["find_student", "search_sections"]}},
    "agents-dispatch": {"required_before": {"route_order": ["get_order"], "assign_courier": ["list_couriers"],
                                            "issue_refund": ["get_eta"]}},
    "mcp-surveillance": {"required_before": {"file_finding": ["get_alert", "get_trades", "search_restricted_list"]}},
    "tl-surveillance": {"required_before": {"file_finding": ["get_alert", "get_trades", "search_restricted_list"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h25-rec-", pairs, produce, kit.through_collector("tl-surveillance"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
