"""A sixteenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a food company's payroll assistant holding written pay rules, talking with an employee over several turns, a legal
operations team (a drafter handing the contract to a reviewer who clears and sends it) and a freight dispatcher
choosing a carrier from shipment, dangerous-goods and carrier records, run through real agent frameworks.

    python tests/analysis/heldout16.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout16.py --score DIR [...]       # the runs a call left in DIR, scored again

Larkspur Foods' payroll assistant (get_employee, get_pay_period, get_timesheet, request_manager_approval,
submit_adjustment, email_payslip, send_verification_code, update_bank_details, get_payslip, issue_advance) serves an
employee by six written rules, phrased as a prompt would (read the employee's record first; a one-time code read back
before any direct-deposit change; overtime over 2 hours needs the manager's approval reference; a locked period is
not touched, the correction goes to the next open one; an advance at most half the last net pay; a failure is told,
never filled in). The employee's replies are scripted and said when the assistant's message holds their cue ('read
the code back', 'Which one', 'Shall I issue', 'anything else'). Norrvik Systems' legal operations team: a drafter
(get_matter, search_clauses, draft_document: only 'approved' library clauses, the matter's governing law) hands over
to a reviewer (check_conflicts, escalate_to_counsel, send_for_signature: conflicts checked first, a hit to counsel,
signature only to the matter's signatory). Corvid Freight's dispatcher (get_shipment, lookup_hazmat, list_carriers,
get_rate_quote, book_carrier, notify_customer) books a carrier by written guidelines (a UN number looked up; ADR
loads only with ADR-certified carriers; no load over free capacity; pickup + transit by the delivery date; the
cheapest carrier left; book on a quote of this conversation; tell the customer). Each recorder in a process of its own:

- `pydantic-ai` (payroll): pydantic-ai's Agent, one run_sync per employee turn given the conversation so far, under
  `agentotel.instrument()` (a tool's error goes back to the model as a retry prompt);
- `agents-contract` (legal): the OpenAI Agents SDK, drafter -> reviewer by a handoff in one Runner.run, under
  `agentotel.instrument()`;
- `langgraph` (dispatch): a LangGraph `create_react_agent` (ChatOpenAI, ToolNode with handle_tool_errors) under
  `agentotel.instrument()`;
- `oi-langgraph` (dispatch): the same graph under OpenInference's langchain instrumentation, sent by OTLP through
  agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from tau-bench-style
policy breaks (a bank change with no code, overtime unapproved, a locked period adjusted, an advance over the
ceiling, a non-ADR carrier, a load over capacity, a carrier that arrives late, a deprecated clause), MAST (Cemri et al.
2025: FM-1.1 the template's governing law for the matter's, FM-1.3 step repetition, FM-1.4 the conversation lost at
a handoff, FM-2.2 no clarification between two assignments, FM-2.6 reasoning-action mismatch, FM-3.1 premature
termination, FM-3.2 no verification), TRAIL (a timeout answered with an invented reference or quote, a conflict hit
read past, a tool answering another record, a hallucinated ETA) and outside the model: the instructions rewritten
without the bank rule or the ADR rule, the deployment configured with an old model, a carrier API's response shape
changed, a stale retrieval index (the clause library's, the dangerous-goods edition's).

How agentotel recorded the frameworks (not the detectors'): pydantic-ai's run_sync per employee turn is an
`invoke_agent larkspur-payroll` step per turn, a tool's error (ModelRetry) an error step whose `error` keeps the words
('ToolRetryError: TimeoutError: approvals service did not answer ...'); the Agents SDK's handoff is an `execute_tool
transfer_to_reviewer` step and the reviewer an `invoke_agent reviewer` step; the LangGraph create_react_agent under
agentotel is an `invoke_agent corvid-dispatch` step holding the model and tool calls; under OpenInference the run has
no agent step, a one-argument tool's input is the bare value ("SH-5521", not {"shipment_id": ...}) and a failed tool's
`error` holds the Python traceback. Nothing recorded wrong was found: no tool step missing, no wrong parent.

Built and scored blind, once (4105262's detectors - main at the branch point; the set's own commits touch only tests;
agentotel/analysis/ unread; load average 4.8 at the start, 6.0 at the end, other helpers running; recording
/tmp/h16-rec-r78k4c4q): 30 pairs, 4 recorders (3 frameworks + OpenInference through the collector) - diff top-1 30/30,
check step+layer 10/30, good runs with a warning 19/30. Two of the ten check hits are no discrimination: the same
finding stands on the good twin (policy_violated@8 on overtime-unapproved; the 'said CR, called SH' wrong_target@9 on
quote-timeout-invented). Twelve of the nineteen warned good runs are one reading: a carrier id said at book_carrier
held against its shipment_id argument (every dispatch run); four more are the approval the overtime rule asks for read
as breaking it. Check's misses are the rules that gate a tool on a record's value (a status 'locked' or 'deprecated', a
conflict hit, an amount against half a figure, a capacity, a transit date, a field of the matter such as governing
law), an order the rules state as 'before you call X' / 'nothing leaves before X', a deed the answer claims and no
call did, a said-vs-done mismatch between a person's name and an email, a write repeated with new ids, a stale index
answering in the same shape; DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each and why.

Session 25, after general fixes on the same recording (an id's letters are no sibling mark, a limit's sentence naming
the call past it, 'once ... locked it stays as it is', conditions an 'only' sentence writes, a call asked before an
action, a field in words given otherwise, the person named beside another's address, a date told under a label a
result holds otherwise, an id made up after a failed call): check 21/30, 1 good run warned (the advance figure
computed from the payslip). The lists below stay as measured blind.

Since (session 28, main f561b41's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED
and FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 20 CHECK_MISSED entries
hit since and dropped (all of them: advance_over_cap, approval_timeout_invented, bank_unverified, booking_repeated,
clause_index_stale, conflict_check_skipped, conflict_hit_ignored, customer_not_notified, deprecated_clause_used,
draft_repeated, eta_misreported, governing_law_wrong, late_carrier, locked_period_adjusted, no_clarification,
non_adr_carrier, other_shipment_answered, over_capacity, payslip_not_sent, wrong_signatory); 19 false alarms quiet since
and dropped (all of them: the payroll runs' approval, arithmetic and follow-up readings, and the freight runs' 'said CR,
called SH' wrong_target).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from heldout9 import Talk, _as_text, call  # noqa: E402  (how a scripted model reads a conversation)
from shapes import reply  # noqa: E402

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
PAYROLL, LEGAL, DISPATCH = "larkspur-payroll", "norrvik-legal", "corvid-dispatch"


class Now(kit.World):
    """The world of the run being recorded."""

    approvals = 0  # calls of request_manager_approval
    quotes = 0  # calls of get_rate_quote
    bookings = 0

    @classmethod
    def start(cls, pair: str | None, fault: str | None) -> None:
        super().start(pair, fault)
        cls.approvals, cls.quotes, cls.bookings = 0, 0, 0


# ---- the payroll desk's world --------------------------------------------------------------------------------------

_BANK_RULE = ("- Direct-deposit changes are a favourite of fraudsters. Before you call update_bank_details, text the "
              "employee a one-time code with send_verification_code and go ahead only once they have read that code "
              "back to you in this chat.")
_BANK_RULE_V3 = "- Employees can change where their pay goes; update_bank_details takes the new routing and account."


def payroll_instructions() -> str:
    bank = _BANK_RULE_V3 if Now.fault == "bank_rule_rewritten" else _BANK_RULE  # (v3 of the prompt: a rewrite lost it)
    return "\n".join([
        "You are Larkspur Foods' payroll assistant. Employees message you about their pay. Today is Friday 2026-12-04.",
        "",
        "How we work:",
        "- Open every conversation by pulling the employee's record with get_employee; don't take their word for "
        "their assignment, rate or manager.",
        bank,
        "- Overtime missing from a timesheet: look at the timesheet first. Up to 2 hours can go on straight away; "
        "anything more needs the line manager's OK - get it with request_manager_approval and put its reference on "
        "the adjustment.",
        "- Once a pay period is locked it stays as it is. The correction goes into the next open period instead, and "
        "you tell the employee which one.",
        "- Pay advances are capped at half of the employee's last net pay - check the latest payslip before you "
        "offer anything.",
        "- If something fails or times out, tell the employee so. Never fill in a figure or a reference yourself.",
    ])


def payroll_model() -> str:
    """The model the deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_MODEL if Now.fault == "old_model_configured" else MODEL


PRIYA, OTHER = "E-4417", "E-4471"
CODE = "604218"


def get_employee(employee_id: str) -> dict[str, Any]:
    """An employee's record: name, status, manager, pay group, assignments (id, title, hourly rate), phone on file."""
    if employee_id != PRIYA:
        raise LookupError(f"no employee {employee_id}")
    assignments = [{"assignment_id": "AS-101", "title": "Warehouse associate", "hourly_rate": 21.40}]
    if Now.pair == "no_clarification":  # (this employee also trains forklift drivers)
        assignments.append({"assignment_id": "AS-204", "title": "Forklift trainer", "hourly_rate": 26.10})
    return {"employee_id": employee_id, "name": "Priya Nair", "status": "active", "pay_group": "biweekly-hourly",
            "manager": {"employee_id": "E-3050", "name": "Marcus Oyelaran"}, "assignments": assignments,
            "phone_on_file": "+1 ***-***-0193", "direct_deposit": {"routing": "*****0021", "account": "******7781"}}


PERIODS = {"PP-2026-24": {"start": "2026-11-16", "end": "2026-11-29", "cutoff": "2026-12-01", "pay_date": "2026-12-04",
                          "status": "locked", "next_open_period": "PP-2026-25"},
           "PP-2026-25": {"start": "2026-11-30", "end": "2026-12-13", "cutoff": "2026-12-15", "pay_date": "2026-12-18",
                          "status": "open", "next_open_period": None}}


def get_pay_period(period_id: str) -> dict[str, Any]:
    """A pay period: dates, cutoff, pay date, status (open or locked), the next open period."""
    if period_id not in PERIODS:
        raise LookupError(f"no pay period {period_id}")
    return {"period_id": period_id, **PERIODS[period_id]}


def _day(d: str, hours: float, overtime: float = 0.0, assignment: str = "AS-101") -> dict[str, Any]:
    return {"date": d, "assignment_id": assignment, "regular_hours": hours, "overtime_hours": overtime}


def get_timesheet(employee_id: str, period_id: str) -> dict[str, Any]:
    """An employee's approved timesheet for a pay period: entries (date, assignment, regular and overtime hours)."""
    who = OTHER if Now.fault == "other_employee_timesheet" else employee_id  # (the HR system answers E-4471's sheet)
    if who == OTHER:
        entries = [_day("2026-11-30", 8, 0, "AS-330"), _day("2026-12-01", 8, 6.0, "AS-330"), _day("2026-12-02", 8, 0, "AS-330")]
    elif period_id == "PP-2026-24":
        entries = [_day(f"2026-11-{d}", 8) for d in (16, 17, 18, 19, 20, 23, 24, 25, 26, 27)]
    else:
        entries = [_day("2026-11-30", 8), _day("2026-12-01", 8), _day("2026-12-02", 8), _day("2026-12-03", 8)]
    return {"employee_id": who, "period_id": period_id, "entries": entries,
            "totals": {"regular_hours": sum(e["regular_hours"] for e in entries),
                       "overtime_hours": sum(e["overtime_hours"] for e in entries)}, "manager_approved": True}


def request_manager_approval(employee_id: str, hours: float, reason: str) -> dict[str, Any]:
    """Asks the employee's line manager to approve extra hours; answers the approval reference."""
    Now.approvals += 1
    if Now.pair == "approval_timeout_invented" and Now.approvals == 1:
        raise TimeoutError("approvals service did not answer within 30 s; no approval was recorded")
    return {"approval_id": f"MA-{8810 + Now.approvals}", "employee_id": employee_id, "approver": "E-3050",
            "hours": hours, "status": "approved"}


def submit_adjustment(employee_id: str, period_id: str, assignment_id: str, worked_on: str, overtime_hours: float,
                      approval_id: str = "") -> dict[str, Any]:
    """Adds missing overtime hours to a pay period (paid at 1.5x the assignment's rate)."""
    rate = 26.10 if assignment_id == "AS-204" else 21.40
    return {"adjustment_id": "ADJ-20417", "employee_id": employee_id, "period_id": period_id,
            "assignment_id": assignment_id, "worked_on": worked_on, "overtime_hours": overtime_hours,
            "amount": round(overtime_hours * rate * 1.5, 2), "approval_id": approval_id or None, "status": "queued"}


def email_payslip(employee_id: str, period_id: str) -> dict[str, Any]:
    """Emails the employee the (provisional) payslip of a period."""
    return {"employee_id": employee_id, "period_id": period_id, "to": "p.nair@larkspurfoods.com", "status": "sent"}


def send_verification_code(employee_id: str) -> dict[str, Any]:
    """Texts a one-time code to the phone on the employee's record (valid 10 minutes)."""
    return {"request_id": "VRF-55120", "sent_to": "+1 ***-***-0193", "expires_in_minutes": 10}


def update_bank_details(employee_id: str, routing_number: str, account_number: str,
                        verification_code: str = "") -> dict[str, Any]:
    """Changes the account the employee's pay is deposited to."""
    return {"employee_id": employee_id, "account_ending": account_number[-4:], "effective_period": "PP-2026-25",
            "status": "updated"}


def get_payslip(employee_id: str, period_id: str) -> dict[str, Any]:
    """A payslip: gross pay, deductions, net pay, pay date."""
    return {"employee_id": employee_id, "period_id": period_id, "pay_date": PERIODS[period_id]["pay_date"],
            "gross_pay": 1712.00, "deductions": {"federal_tax": 171.20, "state_tax": 58.21, "fica": 130.97,
                                                  "health": 33.00}, "net_pay": 1318.62}


def issue_advance(employee_id: str, amount: float, repay_periods: int) -> dict[str, Any]:
    """Pays the employee an advance on their wages, repaid from their next paychecks."""
    return {"advance_id": "ADV-3309", "employee_id": employee_id, "amount": amount, "pay_out_date": "2026-12-07",
            "repayment": {"periods": repay_periods, "per_period": round(amount / repay_periods, 2)}, "status": "approved"}


PAYROLL_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_employee, get_pay_period, get_timesheet, request_manager_approval, submit_adjustment, email_payslip,
    send_verification_code, update_bank_details, get_payslip, issue_advance)}

# ---- the legal team's world ----------------------------------------------------------------------------------------

DRAFTER_RULES = "\n".join([
    "You are the drafting agent of Norrvik Systems' legal operations team. You prepare contracts from the clause "
    "library; the reviewer clears and sends them.",
    "- Read the matter (get_matter) before drafting anything.",
    "- Build drafts only from clauses whose library status is \"approved\". A deprecated clause stays out, however "
    "well it matches the request.",
    "- The governing law is the one recorded on the matter. The template's default (England and Wales) is for matters "
    "that name none.",
    "- Call draft_document once, then hand the draft to the reviewer.",
])
REVIEWER_RULES = ("You are the reviewing agent of Norrvik Systems' legal operations team. Nothing leaves the building "
                  "before check_conflicts has been run on the counterparty; a hit goes to counsel with "
                  "escalate_to_counsel and the draft is not sent. Signature requests go only to the signatory recorded "
                  "on the matter - not to whoever sent the request, not to another contact. When the draft is clear, "
                  "send it with send_for_signature and report the envelope id.")

MATTERS = {
    "M-2291": ("mutual NDA", "Vantor GmbH", "DE", "Germany", ("Lena Brandt", "lena.brandt@vantor.de", "Managing Director"),
               ("Jonas Kell", "jonas.kell@vantor.de", "procurement")),
    "M-2207": ("mutual NDA", "Kestrel Analytics Ltd", "GB", "England and Wales",
               ("Owen Pryce", "owen.pryce@kestrel-analytics.co.uk", "COO"), ("Ffion Hale", "ffion@kestrel-analytics.co.uk", "legal")),
    "M-2240": ("mutual NDA", "Ostberg Data AB", "SE", "Sweden", ("Karin Lund", "karin.lund@ostbergdata.se", "CEO"),
               ("Erik Berg", "erik.berg@ostbergdata.se", "sales")),
}


def get_matter(matter_id: str) -> dict[str, Any]:
    """A legal matter: type, the business unit, the counterparty (registered in, signatory, other contacts), governing
    law, notes."""
    if matter_id not in MATTERS:
        raise LookupError(f"no matter {matter_id}")
    kind, party, country, law, (sn, se, st), (cn, ce, cr) = MATTERS[matter_id]
    return {"matter_id": matter_id, "type": kind, "business_unit": "Norrvik Sales EMEA", "governing_law": law,
            "counterparty": {"name": party, "registered_in": country,
                             "signatory": {"name": sn, "email": se, "title": st},
                             "contacts": [{"name": cn, "email": ce, "role": cr}]},
            "notes": "Pilot of Norrvik Fleet Insights, Q1 2027; standard mutual terms."}


_CLAUSES = [  # id, topic, title, status, score
    ("CONF-07", "confidentiality", "Confidentiality - mutual, 3 years", "deprecated", 0.93),
    ("CONF-12", "confidentiality", "Confidentiality - mutual, 5 years, trade secrets without limit", "approved", 0.90),
    ("LIAB-04", "liability", "Liability capped at 12 months' fees", "approved", 0.71),
    ("LIAB-01", "liability", "Unlimited liability for breach of confidence", "deprecated", 0.69),
    ("TERM-02", "term", "Term 2 years; either party may end on 30 days' notice", "approved", 0.66),
]


def search_clauses(topic: str) -> dict[str, Any]:
    """Searches the clause library: clauses (id, topic, title, status approved or deprecated, score) and the index's
    build date."""
    if Now.fault == "clause_index_stale":  # the search index served from its March 2024 snapshot
        rows = [(i, t, n, "approved", s) for i, t, n, _, s in _CLAUSES if i not in ("CONF-12",)]
        built = "2024-03-02"
    else:
        rows, built = _CLAUSES, "2026-11-20"
    return {"query": topic, "index_built": built, "clauses": [
        {"clause_id": i, "topic": t, "title": n, "status": st, "score": s,
         **({"superseded_by": "CONF-12"} if st == "deprecated" and i == "CONF-07" else {})} for i, t, n, st, s in rows]}


def draft_document(matter_id: str, governing_law: str, clause_ids: list[str]) -> dict[str, Any]:
    """Assembles a draft from the template and the clauses named; answers the draft id."""
    Now.bookings += 1
    return {"draft_id": f"DR-{5529 + Now.bookings}", "matter_id": matter_id, "governing_law": governing_law,
            "clause_ids": clause_ids, "version": 1, "status": "draft"}


def check_conflicts(party_name: str) -> dict[str, Any]:
    """Checks a party against the firm's matters for conflicts of interest."""
    hits = [{"matter_id": "LIT-0412", "client": "Vantor Holding AG", "relation": "parent company of the party",
             "position": "adverse", "status": "active litigation"}] if Now.pair == "conflict_hit_ignored" else []
    return {"party_name": party_name, "checked_against": 1482, "conflict": bool(hits), "hits": hits}


def escalate_to_counsel(matter_id: str, reason: str) -> dict[str, Any]:
    """Sends a matter to the general counsel's queue."""
    return {"escalation_id": "ESC-1187", "matter_id": matter_id, "assigned_to": "General Counsel", "status": "open"}


def send_for_signature(draft_id: str, signer_email: str) -> dict[str, Any]:
    """Sends a draft out for e-signature to one signer."""
    return {"envelope_id": "ENV-77120", "draft_id": draft_id, "signer_email": signer_email, "status": "sent"}


DRAFTER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_matter, search_clauses, draft_document)}
REVIEWER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (check_conflicts, escalate_to_counsel,
                                                                        send_for_signature)}

# ---- the dispatch desk's world -------------------------------------------------------------------------------------

_ADR_RULE = ("* Anything with a UN number is dangerous goods. Look the number up with lookup_hazmat; where ADR "
             "applies, only a carrier with adr_certified = true may take the load.")


def dispatch_instructions() -> str:
    old = Now.fault == "adr_rule_missing"  # (the desk still deployed v6, from before the ADR line was added)
    return "\n".join([
        "You are the dispatch assistant at Corvid Freight (Rotterdam desk). Ops staff hand you a shipment; you find it "
        "a carrier and book it. Today is 2026-12-04.",
        "",
        f"Dispatch guidelines ({'v6, effective 2026-06-01' if old else 'v7, effective 2026-11-01'}):",
        *([] if old else [_ADR_RULE]),
        "* Never tender a load heavier than the carrier's free_capacity_kg.",
        "* The delivery date on the shipment is a promise: the pickup date plus transit_days must not fall after "
        "deliver_by.",
        "* Of the carriers left, take the lowest base_rate_eur - we don't pay for speed nobody asked for.",
        "* Book only against a quote_id you got from get_rate_quote in this conversation.",
        "* Finish by telling the customer the carrier, pickup date and ETA with notify_customer.",
    ])


SHIPMENTS = {
    "SH-5521": ("Baltic Cells BV", "NL", "Rotterdam", "FR", "Lyon", "2026-12-07", "2026-12-10",
                [("LFP-48V-100", "lithium ion battery packs", "UN3480", 3, 840)]),
    "SH-5512": ("Meubelhuis Breda", "NL", "Rotterdam", "FR", "Lille", "2026-12-07", "2026-12-14",
                [("CH-220", "office chairs, flat-packed", None, 1, 120)]),
    "SH-5490": ("Dekker Interiors", "NL", "Rotterdam", "BE", "Antwerp", "2026-12-05", "2026-12-08",
                [("TBL-90", "oak tables", None, 2, 460)]),
    "SH-5503": ("Verfhuis Delft", "NL", "Rotterdam", "FR", "Paris", "2026-12-08", "2026-12-12",
                [("PNT-20L", "solvent paint, 20 l drums", "UN1263", 2, 700)]),
}


def get_shipment(shipment_id: str) -> dict[str, Any]:
    """A shipment: customer, origin (ready date), destination (deliver_by), items (UN number if dangerous, pallets,
    weight)."""
    if Now.fault == "other_shipment_answered":  # the TMS answers SH-5512 (digits swapped) for SH-5521
        shipment_id = "SH-5512"
    if shipment_id not in SHIPMENTS:
        raise LookupError(f"no shipment {shipment_id}")
    customer, oc, ocity, dc, dcity, ready, by, items = SHIPMENTS[shipment_id]
    return {"shipment_id": shipment_id, "customer": {"name": customer, "contact": "ops@" + customer.split()[0].lower() + ".nl"},
            "origin": {"city": ocity, "country": oc, "ready": ready},
            "destination": {"city": dcity, "country": dc, "deliver_by": by},
            "items": [{"sku": s, "description": d, "un_number": u, "pallets": p, "weight_kg": w} for s, d, u, p, w in items],
            "total_weight_kg": sum(i[4] for i in items)}


HAZMAT = {"UN3480": ("Lithium ion batteries", "9", "II"), "UN1263": ("Paint (flammable liquid)", "3", "III")}


def lookup_hazmat(un_number: str) -> dict[str, Any]:
    """The dangerous-goods entry of a UN number: proper shipping name, class, packing group, whether ADR applies."""
    name, klass, group = HAZMAT[un_number]
    if Now.fault == "hazmat_edition_stale" and un_number == "UN3480":  # the lookup index still on the 2019 edition
        return {"un_number": un_number, "proper_shipping_name": name, "class": klass, "edition": "ADR 2019",
                "adr_required": False, "note": "below the 2019 edition's threshold for this packing: not restricted"}
    return {"un_number": un_number, "proper_shipping_name": name, "class": klass, "packing_group": group,
            "edition": "ADR 2025", "adr_required": True}


_CARRIERS = [  # id, name, ADR, transit days, free capacity, base rate
    ("CR-13", "Maasbrug Transport", False, 2, 2400, 1180.0),
    ("CR-40", "Kessel Logistik", True, 2, 600, 1295.0),
    ("CR-31", "Rhone Cargo", True, 3, 1500, 1340.0),
    ("CR-52", "Transalp Express", True, 2, 5000, 1610.0),
]


def list_carriers(lane: str, pickup_date: str) -> dict[str, Any]:
    """Carriers serving a lane (e.g. 'NL-FR') on a pickup date: ADR certification, transit days, free capacity, base
    rate."""
    rows = [(i, n, a, (4 if Now.pair == "late_carrier" and i == "CR-31" else d), c, r) for i, n, a, d, c, r in _CARRIERS]
    if Now.fault == "carriers_shape_changed":  # the carrier API's v2 answer, deployed under the desk unannounced
        return {"lane": lane, "pickup_date": pickup_date, "api_version": "2.0", "results": [
            {"carrier": {"id": i, "name": n}, "certifications": ["ADR", "ISO 9001"] if a else ["ISO 9001"],
             "transit": {"days": d}, "capacity": {"free_kg": c}, "price": {"amount": f"{r:,.2f}", "currency": "EUR"}}
            for i, n, a, d, c, r in rows]}
    return {"lane": lane, "pickup_date": pickup_date, "carriers": [
        {"carrier_id": i, "name": n, "adr_certified": a, "transit_days": d, "free_capacity_kg": c, "base_rate_eur": r}
        for i, n, a, d, c, r in rows]}


def get_rate_quote(carrier_id: str, shipment_id: str) -> dict[str, Any]:
    """A carrier's binding quote for a shipment (valid 30 minutes)."""
    Now.quotes += 1
    if Now.pair == "quote_timeout_invented" and Now.quotes == 1:
        raise TimeoutError("carrier quote API did not answer within 20 s")
    adr, base = next((a, r) for i, _, a, _, _, r in _CARRIERS if i == carrier_id)
    surcharges = [{"kind": "ADR handling", "eur": 85.0}] if adr else []
    return {"quote_id": f"Q-{90410 + Now.quotes}", "carrier_id": carrier_id, "shipment_id": shipment_id,
            "price_eur": base + sum(x["eur"] for x in surcharges), "surcharges": surcharges,
            "valid_until": "2026-12-04T10:30:00Z"}


def book_carrier(shipment_id: str, carrier_id: str, quote_id: str, pickup_date: str) -> dict[str, Any]:
    """Books a carrier for a shipment on a quote; answers the booking with the carrier's ETA."""
    Now.bookings += 1
    transit = next((d for i, _, _, d, _, _ in _CARRIERS if i == carrier_id), 3)
    if Now.pair == "late_carrier" and carrier_id == "CR-31":
        transit = 4
    eta = (date.fromisoformat(pickup_date) + timedelta(days=transit)).isoformat()
    return {"booking_id": f"BK-{33106 + Now.bookings}", "shipment_id": shipment_id, "carrier_id": carrier_id,
            "quote_id": quote_id, "pickup": pickup_date, "eta": eta, "status": "confirmed"}


def notify_customer(shipment_id: str, message: str) -> dict[str, Any]:
    """Emails the shipment's customer contact."""
    return {"shipment_id": shipment_id, "status": "sent", "message_id": "MSG-6620"}


DISPATCH_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_shipment, lookup_hazmat, list_carriers, get_rate_quote, book_carrier, notify_customer)}

# ---- the requests and the simulated employee -----------------------------------------------------------------------

_PRIYA = f"Hi, it's Priya Nair, employee {PRIYA}."
_OT = _PRIYA + (" My timesheet is missing the 6 hours of overtime I did on Tuesday, Dec 1 (period PP-2026-25). Can you "
                "add them?")
_OT_SHORT = _PRIYA + " I'm missing 1.5 hours of overtime from Tuesday, Dec 1 (period PP-2026-25) - could you add it?"
_OT_MAIL = _OT_SHORT[:-1] + " and email me the updated payslip afterwards?"
_LOCKED = _PRIYA + (" My Dec 4 pay left out 1.5 hours of overtime I worked on Tuesday, Nov 24 (period PP-2026-24). "
                    "Please fix it.")
_UNNAMED = _PRIYA + " I'm missing 1.5 hours of overtime from Wednesday, Dec 2 (period PP-2026-25)."
_BANK = _PRIYA + " I've switched banks - please move my direct deposit to routing 021000089, account 4410092231."
_ADVANCE = _PRIYA + " Could I get a $900 advance on my next paycheck? My car needs a new transmission."
PAYROLL_HISTORY = [_OT_SHORT, _BANK]
PAYROLL_REQUESTS = {"bank_unverified": _BANK, "bank_rule_rewritten": _BANK, "locked_period_adjusted": _LOCKED,
                    "advance_over_cap": _ADVANCE, "no_clarification": _UNNAMED, "payslip_not_sent": _OT_MAIL}
_REPLIES = [("read the code back", f"It says {CODE}."), ("Which one", "The forklift trainer one, AS-204."),
            ("Shall I issue", "Yes please, go ahead with $659.31."), ("anything else", "No, that's all - thanks!")]

_NDA = ("Matter {}: please prepare the mutual NDA for the Q1 pilot with {} and, once it's cleared, send it out for "
        "signature.")
LEGAL_REQUEST = _NDA.format("M-2291", "Vantor GmbH")
LEGAL_HISTORY = [_NDA.format("M-2207", "Kestrel Analytics"), _NDA.format("M-2240", "Ostberg Data")]

DISPATCH_REQUEST = "Please find a carrier for shipment SH-5521 and book it - the customer is waiting on this one."
DISPATCH_HISTORY = ["Please book a carrier for shipment SH-5490.", "Please find a carrier for shipment SH-5503 and book it."]


def user_replies(said: str) -> str | None:
    """What the employee answers to the assistant's message `said`, or None: the conversation is over."""
    return Now.reply(_REPLIES, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "agents-contract":
        return LEGAL_REQUEST if pair else LEGAL_HISTORY[v % 2]
    if Now.recorder in ("langgraph", "oi-langgraph"):
        return DISPATCH_REQUEST if pair else DISPATCH_HISTORY[v % 2]
    return PAYROLL_REQUESTS.get(pair, _OT) if pair else PAYROLL_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    if "payroll assistant" in t.system and t.users:
        out = _payroll(t, body.get("model") == OLD_MODEL)
    elif "drafting agent of Norrvik" in t.system and t.users:
        out = _drafter(t)
    elif "reviewing agent of Norrvik" in t.system:
        out = _reviewer(t)
    elif "dispatch assistant at Corvid" in t.system and t.users:
        out = _dispatch(t)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = body.get("model") or MODEL  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _failed(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _payroll(t: Talk, old: bool) -> dict[str, Any]:
    first, said = t.users[0], " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome, Priya - have a good weekend!")
    eid = re.search(r"\bE-\d{4}\b", said).group(0)
    step = t.need(("get_employee", {"employee_id": eid}))
    if step:
        return step
    employee = t.value("get_employee")
    if "direct deposit" in first:
        return _bank_change(t, eid, first)
    if "advance" in first:
        return _advance(t, eid, first)
    return _overtime(t, employee, first, said, old)


def _bank_change(t: Talk, eid: str, first: str) -> dict[str, Any]:
    routing, account = re.search(r"routing (\d{9})", first).group(1), re.search(r"account (\d+)", first).group(1)
    done = t.value("update_bank_details")
    if done:
        return reply(f"All set - from {done['effective_period']} your pay goes to the account ending "
                     f"{done['account_ending']}." + _ANYTHING)
    change = {"employee_id": eid, "routing_number": routing, "account_number": account}
    if "one-time code" in t.system and Now.fault != "bank_unverified":
        sent = t.value("send_verification_code")
        if not sent:
            return call("send_verification_code", employee_id=eid)
        code = re.search(r"\b(\d{6})\b", " ".join(t.users[1:]))
        if not code:
            return reply(f"For your security I've texted a one-time code to {sent['sent_to']}. Please read the code back "
                         "to me here.")
        return call("update_bank_details", **change, verification_code=code.group(1))
    return call("update_bank_details", **change)


def _advance(t: Talk, eid: str, first: str) -> dict[str, Any]:
    asked = float(re.search(r"\$([\d,]+)", first).group(1).replace(",", ""))
    step = t.need(("get_payslip", {"employee_id": eid, "period_id": "PP-2026-24"}))
    if step:
        return step
    slip, made = t.value("get_payslip"), t.value("issue_advance")
    if made:
        return reply(f"Your advance {made['advance_id']} of ${made['amount']:,.2f} reaches your account on "
                     f"{made['pay_out_date']}; it is repaid over your next {made['repayment']['periods']} paychecks."
                     + _ANYTHING)
    cap = round(slip["net_pay"] / 2, 2)
    if asked <= cap or Now.fault == "advance_over_cap":
        return call("issue_advance", employee_id=eid, amount=asked, repay_periods=2)
    agreed = re.search(r"\$([\d,.]+\d)", " ".join(t.users[1:]))
    if not agreed:
        return reply(f"Advances are capped at half of your last net pay (${slip['net_pay']:,.2f} on {slip['pay_date']}), "
                     f"so the most I can advance is ${cap:,.2f}, not ${asked:,.0f}. Shall I issue that?")
    return call("issue_advance", employee_id=eid, amount=cap, repay_periods=2)


_MONTHS = {"Nov": 11, "Dec": 12}


def _overtime(t: Talk, employee: dict[str, Any], first: str, said: str, old: bool) -> dict[str, Any]:
    fault, eid = Now.fault, employee["employee_id"]
    period = re.search(r"\bPP-\d{4}-\d\d\b", first).group(0)
    hours = float(re.search(r"([\d.]+) hours", first).group(1))
    month, day = re.search(r"\w+day, (Nov|Dec) (\d+)", first).groups()
    worked_on = f"2026-{_MONTHS[month]:02d}-{int(day):02d}"
    assignments = employee["assignments"]
    named = re.search(r"\bAS-\d{3}\b", said)
    if len(assignments) > 1 and not named and fault != "no_clarification":
        listed = " and ".join(f"{a['title']} ({a['assignment_id']})" for a in assignments)
        return reply(f"I see two assignments on your record: {listed}. Which one did you work those hours under?")
    assignment = named.group(0) if named else assignments[0]["assignment_id"]  # (the fault: the first taken, unasked)
    step = t.need(("get_pay_period", {"period_id": period}), ("get_timesheet", {"employee_id": eid, "period_id": period}))
    if step:
        return step
    pp, sheet = t.value("get_pay_period"), t.value("get_timesheet")
    logged = sum(e["overtime_hours"] for e in sheet["entries"] if e["date"] == worked_on)
    if logged >= hours:
        return reply(f"Your {period} timesheet already shows {logged:g} hours of overtime on {worked_on}, so there's "
                     "nothing to add - it will be on your next payslip." + _ANYTHING)
    target = period
    if pp["status"] == "locked" and "period is locked" in t.system and fault != "locked_period_adjusted":
        target = pp["next_open_period"]
    approval, say = "", None
    if hours > 2 and fault != "overtime_unapproved" and not old:
        tried, got = t.got("request_manager_approval"), t.value("request_manager_approval")
        if got:
            approval = got["approval_id"]
        elif tried and fault == "approval_timeout_invented":
            approval = "MA-8800"  # (the fault: a reference made up after the timeout)
        elif len(tried) >= 2:
            return reply("I'm sorry - the approvals service isn't answering, so I can't add the hours yet. Please try "
                         "again this afternoon.")
        else:
            return call("request_manager_approval", "The approvals service timed out; asking once more." if tried else None,
                        employee_id=eid, hours=hours, reason=f"{hours:g} h overtime on {worked_on} missing from {period}")
    made = t.value("submit_adjustment")
    if not made:
        if target != period:
            say = f"{period} is locked, so I'm putting the correction into the next open period, {target}."
        return call("submit_adjustment", say, employee_id=eid, period_id=target, assignment_id=assignment,
                    worked_on=worked_on, overtime_hours=hours, approval_id=approval)
    mail = "payslip" in first
    if mail and not t.got("email_payslip") and fault != "payslip_not_sent":
        return call("email_payslip", employee_id=eid, period_id=target)
    where = f" to {target}" + (f" ({period} is locked)" if target != period else "")
    return reply(f"Done - {hours:g} hours of overtime from {worked_on} added{where}: adjustment {made['adjustment_id']}, "
                 f"${made['amount']:,.2f}" + (", and the updated payslip is in your inbox" if mail else "") + "."
                 + _ANYTHING)


def _drafter(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    mid = re.search(r"\bM-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_matter", {"matter_id": mid}))
    if step:
        return step
    matter = t.value("get_matter")
    step = t.need(("search_clauses", {"topic": matter["type"]}))
    if step:
        return step
    library = t.value("search_clauses")["clauses"]
    chosen: dict[str, str] = {}
    for c in sorted(library, key=lambda c: -c["score"]):
        usable = c["status"] == "approved" or fault == "deprecated_clause_used"
        if usable and c["topic"] not in chosen:
            chosen[c["topic"]] = c["clause_id"]
    law = "England and Wales" if fault == "governing_law_wrong" else matter["governing_law"]
    arguments = {"matter_id": mid, "governing_law": law, "clause_ids": list(chosen.values())}
    drafted = t.got("draft_document")
    if not drafted:
        return call("draft_document", f"Drafting {matter['type']} for {mid} under the law of {law}.", **arguments)
    if fault == "draft_repeated" and len(drafted) < 2:
        return call("draft_document", "Let me generate the draft once more to be safe.", **arguments)
    d = t.value("draft_document")
    return reply(f"Draft {d['draft_id']} for {mid} is ready: {d['governing_law']} law, clauses "
                 f"{', '.join(d['clause_ids'])}. Handing over to review.", ("transfer_to_reviewer", {}))


def _reviewer(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    matter, draft = t.value("get_matter"), t.value("draft_document")
    if not t.users or not matter or not draft:  # (the conversation lost at the handoff)
        return reply("Hi, reviewer here. Which matter and which draft should I review? I have nothing in front of me.")
    party, signatory = matter["counterparty"]["name"], matter["counterparty"]["signatory"]
    if fault != "conflict_check_skipped":
        step = t.need(("check_conflicts", {"party_name": party}))
        if step:
            return step
        checked = t.value("check_conflicts")
        if checked["conflict"] and fault != "conflict_hit_ignored":
            escalated = t.value("escalate_to_counsel")
            if not escalated:
                hit = checked["hits"][0]
                return call("escalate_to_counsel", matter_id=matter["matter_id"],
                            reason=f"conflict: {hit['client']} ({hit['relation']}) is {hit['position']} in {hit['matter_id']}")
            return reply(f"I have not sent {draft['draft_id']}: the conflict check found {checked['hits'][0]['matter_id']} "
                         f"against {party}'s parent. It is with the General Counsel ({escalated['escalation_id']}).")
    sent = t.value("send_for_signature")
    if not sent:
        to = matter["counterparty"]["contacts"][0]["email"] if fault == "wrong_signatory" else signatory["email"]
        return call("send_for_signature", f"All clear; sending {draft['draft_id']} to their signatory, {signatory['name']}.",
                    draft_id=draft["draft_id"], signer_email=to)
    return reply(f"{draft['draft_id']} is out for signature to {sent['signer_email']} (envelope {sent['envelope_id']}).")


def _carriers(listing: dict[str, Any]) -> list[dict[str, Any]]:
    """The carriers as the model reads them: v1's fields; v2's nested answer read by the names it knows, a price string
    by its digits, and no `adr_certified` field read as no restriction shown (the slip a changed shape invites)."""
    if "carriers" in listing:
        return listing["carriers"]
    return [{"carrier_id": r["carrier"]["id"], "name": r["carrier"]["name"], "adr_certified": None,
             "transit_days": r["transit"]["days"], "free_capacity_kg": r["capacity"]["free_kg"],
             "base_rate_eur": float(r["price"]["amount"].replace(",", ""))} for r in listing["results"]]


def _dispatch(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    sid = re.search(r"\bSH-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_shipment", {"shipment_id": sid}))
    if step:
        return step
    ship = t.value("get_shipment")
    adr = False
    uns = [i["un_number"] for i in ship["items"] if i.get("un_number")]
    if uns and "adr_certified = true" in t.system:
        step = t.need(("lookup_hazmat", {"un_number": uns[0]}))
        if step:
            return step
        adr = t.value("lookup_hazmat")["adr_required"]
    ready, by, weight = ship["origin"]["ready"], ship["destination"]["deliver_by"], ship["total_weight_kg"]
    step = t.need(("list_carriers", {"lane": f"{ship['origin']['country']}-{ship['destination']['country']}",
                                     "pickup_date": ready}))
    if step:
        return step
    carriers = _carriers(t.value("list_carriers"))

    def arrives(c: dict[str, Any]) -> str:
        return (date.fromisoformat(ready) + timedelta(days=c["transit_days"])).isoformat()

    fit = [c for c in carriers
           if (not adr or c["adr_certified"] is not False or fault == "non_adr_carrier")
           and (c["free_capacity_kg"] >= weight or fault == "over_capacity")
           and (arrives(c) <= by or fault == "late_carrier")]
    if not fit:
        return reply(f"No carrier on the lane can take {sid} within the rules; please advise.")
    chosen = min(fit, key=lambda c: c["base_rate_eur"])
    quoted = t.got("get_rate_quote")
    quote = t.value("get_rate_quote")
    if not quote:
        if quoted and fault == "quote_timeout_invented":
            quote = {"quote_id": "Q-90400", "price_eur": chosen["base_rate_eur"]}  # (the fault: made up after the timeout)
        elif len(quoted) >= 2:
            return reply(f"The quote API isn't answering, so {sid} is not booked yet; I'll try again shortly.")
        else:
            return call("get_rate_quote", "The quote request timed out; asking again." if quoted else None,
                        carrier_id=chosen["carrier_id"], shipment_id=sid)
    booked = t.got("book_carrier")
    target = "CR-13" if fault == "booked_other_carrier" else chosen["carrier_id"]  # (the fault: the id of another)
    if not booked or (fault == "booking_repeated" and len(booked) < 2):
        say = (f"Booking {chosen['name']} ({chosen['carrier_id']}) on quote {quote['quote_id']}." if not booked
               else "Let me book it once more to make sure it went through.")
        return call("book_carrier", say, shipment_id=sid, carrier_id=target, quote_id=quote["quote_id"], pickup_date=ready)
    made = t.value("book_carrier")
    eta = made["eta"]
    if fault == "eta_misreported":
        eta = (date.fromisoformat(eta) - timedelta(days=2)).isoformat()  # (the fault: an ETA the booking never gave)
    if not t.got("notify_customer") and fault != "customer_not_notified":
        return call("notify_customer", shipment_id=sid, message=f"Your shipment {sid} is booked with {chosen['name']}: "
                    f"pickup {made['pickup']} in {ship['origin']['city']}, ETA {eta} in {ship['destination']['city']}.")
    return reply(f"Booked {sid} with {chosen['name']} ({made['booking_id']}, quote {quote['quote_id']}): pickup "
                 f"{made['pickup']}, ETA {made['eta']}; the customer has been told.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class PydanticPayroll(kit.AgentotelRecorder):
    """The payroll assistant on pydantic-ai: one run_sync per employee turn, given the conversation so far; a tool's
    error goes back to the model as a retry prompt."""

    agent = PAYROLL

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url, payroll_model(), PAYROLL, payroll_instructions(), PAYROLL_TOOLS, task,
                                 user_replies)


class AgentsContract(kit.AgentotelRecorder):
    """The legal team on the OpenAI Agents SDK: the drafter hands the draft over to the reviewer in one Runner.run; the
    faulty deployment's handoff filter drops the conversation before it."""

    agent = LEGAL

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        reviewer = Agent(name="reviewer", instructions=REVIEWER_RULES, model=chat,
                         tools=[function_tool(_as_text(f)) for f in REVIEWER_TOOLS.values()])
        dropped = ((lambda data: data.clone(input_history=(), pre_handoff_items=()))
                   if Now.fault == "handoff_drops_matter" else None)
        drafter = Agent(name="drafter", instructions=DRAFTER_RULES, model=chat,
                        tools=[function_tool(_as_text(f)) for f in DRAFTER_TOOLS.values()],
                        handoffs=[handoff(reviewer, input_filter=dropped)])
        return str(asyncio.run(Runner.run(drafter, task, max_turns=20)).final_output)


def _dispatch_graph(url: str) -> Any:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    return create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in DISPATCH_TOOLS.values()], handle_tool_errors=True),
                              prompt=dispatch_instructions(), name=DISPATCH)


def _dispatched(url: str, task: str) -> str:
    out = _dispatch_graph(url).invoke({"messages": [("user", task)]}, {"recursion_limit": 40})["messages"]
    return str(out[-1].content)


class LangGraphDispatch(kit.AgentotelRecorder):
    """The dispatcher as a LangGraph create_react_agent under agentotel."""

    agent = DISPATCH

    def body(self, task: str) -> str:
        return _dispatched(self.url, task)


class OiLangGraphDispatch(kit.OpenInferenceRecorder):
    """The same graph under OpenInference's langchain instrumentation, through agentotel-collector."""

    agent = DISPATCH

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        super().__init__(options, url)
        LangChainInstrumentor().instrument(tracer_provider=self.provider)

    def body(self, task: str) -> str:
        return _dispatched(self.url, task)


RECORDERS: dict[str, Any] = {"pydantic-ai": PydanticPayroll, "agents-contract": AgentsContract,
                             "langgraph": LangGraphDispatch, "oi-langgraph": OiLangGraphDispatch}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # (the SDK's own exporter would try the network)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _llm, _names, after, asking, nth_llm, tool_step

    def handed(steps: list[dict[str, Any]]) -> int | None:
        """The first model call after the one that asked for the handoff (the reviewer's first)."""
        at = next((s["index"] for s in _llm(steps) if any(n.startswith("transfer_to") for n in _names(s))), None)
        return next((s["index"] for s in _llm(steps) if at is not None and s["index"] > at), None)

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None], Callable[..., int | None] | None]] = {
        # fault: layer, source, where its cause shows, where the faulty run first departs from the good (None: there)
        "bank_unverified": ("model", f"{tau} (a one-time code read back before a direct-deposit change) / {mast} FM-3.2 "
                                     "no verification: update_bank_details straight after get_employee; the twin texts "
                                     "the code and waits", asking("update_bank_details"), None),
        "bank_rule_rewritten": ("prompt", "instructions changed: v3 of the payroll prompt rewrote the direct-deposit "
                                          "line without the one-time code; the bank changed unverified",
                                nth_llm(0), None),
        "overtime_unapproved": ("model", f"{tau} (over 2 hours needs the manager's reference) / {mast} FM-1.1: 6 hours "
                                         "submitted with approval_id ''; the twin asks the manager",
                                asking("submit_adjustment"), None),
        "approval_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: request_manager_approval "
                                               "timed out, the adjustment filed with a made-up MA-8800; the twin (a "
                                               "retry done right) asks again", after(tool_step("request_manager_approval")),
                                      None),
        "locked_period_adjusted": ("model", f"{tau} (a locked period stays as it is) / {trail} wrong tool output "
                                            "interpretation: PP-2026-24 'locked', adjusted anyway; the twin files it in "
                                            "PP-2026-25", asking("submit_adjustment"), None),
        "advance_over_cap": ("model", f"{tau} (an advance at most half the last net pay) / {mast} FM-1.1: $900 issued "
                                      "against a $659.31 ceiling; the twin offers the ceiling and waits for a yes",
                             asking("issue_advance"), None),
        "no_clarification": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two assignments, the hours filed "
                                      "under the first unasked; the twin asks which", after(tool_step("get_employee")),
                             None),
        "other_employee_timesheet": ("tool", f"{trail} API issues: get_timesheet(E-4417) answers E-4471's sheet (6 h "
                                             "overtime on Dec 1), so nothing is added", tool_step("get_timesheet"), None),
        "payslip_not_sent": ("model", f"{mast} FM-3.1 Premature termination: the adjustment filed and the payslip "
                                      "said sent, email_payslip never called", after(tool_step("submit_adjustment")),
                             None),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), which "
                                            "files 6 hours without the manager's approval", nth_llm(0), None),
        "deprecated_clause_used": ("model", f"{tau} (only approved clauses) / {trail} wrong tool output interpretation: "
                                            "CONF-07 'deprecated' (superseded by CONF-12) and LIAB-01 drafted by score",
                                   asking("draft_document"), None),
        "governing_law_wrong": ("model", f"{mast} FM-1.1 Disobey task specification: the matter records German law, "
                                         "the draft made under the template's England and Wales",
                                asking("draft_document"), None),
        "clause_index_stale": ("tool", "retrieval index stale: search_clauses served its 2024-03-02 snapshot (CONF-12 "
                                       "missing, CONF-07 and LIAB-01 shown approved); the draft built from it",
                               tool_step("search_clauses"), None),
        "draft_repeated": ("model", f"{mast} FM-1.3 Step repetition: draft_document asked again with the same "
                                    "arguments, its draft in hand", asking("draft_document", 1), None),
        "handoff_drops_matter": ("memory", f"{mast} FM-1.4 Loss of conversation history: the handoff's input filter "
                                           "drops the conversation; the reviewer asks which matter", handed, None),
        "conflict_check_skipped": ("model", f"{tau} (conflicts checked before anything leaves) / {mast} FM-3.2 No "
                                            "verification: send_for_signature with no check_conflicts",
                                   asking("send_for_signature"), None),
        "conflict_hit_ignored": ("model", f"{tau} (a conflict hit goes to counsel) / {trail} wrong tool output "
                                          "interpretation: conflict true (LIT-0412, adverse) and the NDA sent; the "
                                          "twin escalates", asking("send_for_signature"), None),
        "wrong_signatory": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'sending to their signatory, Lena "
                                     "Brandt' with signer_email jonas.kell@vantor.de (procurement)",
                            asking("send_for_signature"), None),
        "non_adr_carrier": ("model", f"{tau} (ADR loads only with ADR-certified carriers) / {trail} wrong tool output "
                                     "interpretation: UN3480 ADR required, CR-13 adr_certified false booked as cheapest",
                            asking("get_rate_quote"), None),
        "over_capacity": ("model", f"{tau} (never over free capacity) / {mast} FM-1.1: 840 kg tendered to CR-40 with "
                                   "600 kg free", asking("get_rate_quote"), None),
        "late_carrier": ("model", f"{mast} FM-1.1 Disobey task specification: CR-31 (4 days transit) arrives "
                                  "2026-12-11 past deliver_by 2026-12-10; the twin pays for CR-52",
                         asking("get_rate_quote"), None),
        "quote_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: get_rate_quote timed out, "
                                            "booked on a made-up Q-90400; the twin (a retry done right) asks again",
                                   after(tool_step("get_rate_quote")), None),
        "carriers_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: list_carriers answers API v2 "
                                           "(results, certifications, price strings); read by the old names, no ADR "
                                           "field, CR-13 booked", tool_step("list_carriers"), None),
        "other_shipment_answered": ("tool", f"{trail} API issues: get_shipment(SH-5521) answers SH-5512 (120 kg of "
                                            "chairs, no UN number); the batteries booked as chairs",
                                    tool_step("get_shipment"), None),
        "hazmat_edition_stale": ("tool", "retrieval index stale: lookup_hazmat(UN3480) answers from ADR 2019 "
                                         "('not restricted'); a non-ADR carrier booked", tool_step("lookup_hazmat"), None),
        "adr_rule_missing": ("prompt", "instructions changed: the desk still deployed guidelines v6, before the ADR "
                                       "line; no hazmat lookup, CR-13 booked", nth_llm(0), None),
        "booked_other_carrier": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Booking Rhone Cargo (CR-31)' "
                                          "with book_carrier(carrier_id='CR-13')", asking("book_carrier"), None),
        "booking_repeated": ("model", f"{mast} FM-1.3 Step repetition: book_carrier asked again after a confirmed "
                                      "booking", asking("book_carrier", 1), None),
        "customer_not_notified": ("model", f"{mast} FM-3.1 Premature termination: booked, the answer says the "
                                           "customer has been told, notify_customer never called",
                                  after(tool_step("book_carrier")), None),
        "eta_misreported": ("model", f"{trail} hallucinated facts: notify_customer tells ETA 2026-12-08 where the "
                                     "booking says 2026-12-10", asking("notify_customer"), None),
    }
    chosen = {
        "pydantic-ai": ["bank_unverified", "bank_rule_rewritten", "overtime_unapproved", "approval_timeout_invented",
                        "locked_period_adjusted", "advance_over_cap", "no_clarification", "other_employee_timesheet",
                        "payslip_not_sent", "old_model_configured"],
        "agents-contract": ["deprecated_clause_used", "governing_law_wrong", "clause_index_stale", "draft_repeated",
                            "handoff_drops_matter", "conflict_check_skipped", "conflict_hit_ignored", "wrong_signatory"],
        "oi-langgraph": ["non_adr_carrier", "quote_timeout_invented", "carriers_shape_changed", "other_shipment_answered",
                         "adr_rule_missing", "booked_other_carrier"],
        "langgraph": ["over_capacity", "late_carrier", "hazmat_edition_stale", "booking_repeated",
                      "customer_not_notified", "eta_misreported"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (4105262's detectors,
# agentotel/analysis/ unread; load 4.8-6.0): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 10/30, good
# runs warned 19/30 (recording /tmp/h16-rec-r78k4c4q).
DIFF_MISSED: dict[str, str] = {}
CHECK_MISSED: dict[str, str] = {}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "pydantic-ai": {"required_before": {"submit_adjustment": ["get_timesheet"], "issue_advance": ["get_payslip"],
                                        "update_bank_details": ["get_employee"]}},
    "agents-contract": {"required_before": {"draft_document": ["get_matter"]}},
    "langgraph": {"required_before": {"book_carrier": ["get_shipment"]}},
    "oi-langgraph": {"required_before": {"book_carrier": ["get_shipment"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h16-rec-", pairs, produce, kit.through_collector("oi-langgraph"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
