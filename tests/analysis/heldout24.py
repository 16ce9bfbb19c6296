"""A twenty-fourth held-out fault-injection set for `diff` and `check`, built blind (without reading
agentotel/analysis/): a restaurant caterer's orders desk talking with a client over several turns under a written
booking and cancellation policy, an HR leave-and-benefits team (an intake agent handing to a policy checker, who hands
to a payroll adjuster) and a mortgage-underwriting agent reading pay stubs, bank statements, a credit report, an
appraisal, a rate lock and versioned rate sheets, run through real SDKs and frameworks.

    python tests/analysis/heldout24.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout24.py --score DIR [...]       # the runs a call left in DIR, scored again

Saffron & Salt Catering's orders desk (find_client, get_menu, check_delivery, place_order, take_deposit, get_order,
cancel_order) serves a client by a written policy (the account's email before anything; a menu's minimum headcount,
down to 15 for a repeat client - 3 or more completed orders in 12 months; delivery within 25 km, 40 km for a repeat
client; a menu holding an allergen a guest has never booked - its alternative offered and booked once the client
agrees; a booking confirmed by a 30% deposit, a failed deposit tried once more and never a reference take_deposit
didn't return; a cancellation's deposit refund by a notice table: 100% at 14 days or more, 50% at 7-13, none under 7).
The client's replies are scripted and said when the desk's message holds their cue ('email address', 'instead?',
'anything else'). Northfield Foods' leave team: an intake agent (get_employee) writes a note, a policy checker
(get_leave_balance, get_blackout_periods, request_manager_approval, record_leave_decision: balances in hours, a day
costing the employee's scheduled hours; no leave in a team blackout unless listed as an exception; more than 5
consecutive working days needs the manager's yes; one decision) hands to a payroll adjuster (post_leave_deduction: in
hours, once; what stays above the 40-hour carry-over cap told as forfeited). Keystone Home Lending's underwriting
agent (get_application, get_pay_stubs, get_credit_report, get_appraisal, search_documents, get_rate_lock,
search_rate_sheets, record_decision) works by a rules table comparing records (income from the two latest stubs, never
the stated income, and suspended when the latest stub is over 30 days old; the lock's rate only while unexpired, else
the current sheet, never a superseded one; DTI at most 43%; LTV on the lower of the purchase price and the appraisal,
mortgage insurance above 80%; a deposit above half the monthly income needs a letter of explanation; one decision,
every condition told). Each recorder in a process of its own:

- `anthropic-catering` (catering): a plain anthropic SDK `messages.create` loop with tool_use over several client turns
  (kit.anthropic_loop), the tools `@agentotel.tool`s, under `agentotel.instrument()`;
- `maf-leave` (leave team): Microsoft Agent Framework, three `Agent`s (intake, checker, payroll) run one after the
  other by the app, each handed the earlier notes, under `agentotel.instrument()` (the framework's telemetry on);
- `pai-mortgage` (underwriting): a pydantic-ai Agent (OpenAIChatModel) with plain tools, under `agentotel.instrument()`
  only (kit.pydantic_chat: a tool's anticipated failure sent back as a ModelRetry);
- `oi-mortgage` (underwriting): a plain openai SDK chat loop (kit.chat_loop) under OpenInference's openai
  instrumentation, the tools OITracer TOOL spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages, the model asked for echoed back)
reads the conversation it is sent and decides as a model would. Faults from tau-bench-style policy breaks (a deposit
refunded in full at 9 days' notice, a menu with tree nuts booked for a nut allergy, an address beyond the radius
booked, leave approved inside a blackout, DTI over 43% approved, LTV taken on the appraisal above the lower purchase
price, an expired lock's rate used), MAST (Cemri et al. 2025: FM-1.1 disobeying the task specification, FM-1.3 step
repetition, FM-1.4 conversation lost between turns or at a handover, FM-2.4 withholding information, FM-2.6
reasoning-action mismatch, FM-3.3 incorrect verification), TRAIL (a rate limit or a timeout answered with invented
values, days posted as hours) and outside the model: instructions rewritten without a rule (3), an old model
configured (3), a menu API's and a pay-stub API's changed shape, a stale rate-sheet index, a balance API and a pay-stub
API answering another person. Good twins are fine runs: a repeat client's exception applied (18 guests, 20 minimum), a
far address and a blackout request refused, an allergen menu swapped once the client agrees, a partial deposit refund,
a 429 and two timeouts tried once more, a manager's approval asked before a long leave, a request over the balance
declined, an expired lock repriced, mortgage insurance made a condition, a file with old pay stubs suspended. Ground
truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each anthropic messages call is a `chat claude-sonnet-4-5` step
(the old model's `chat claude-3-haiku-20240307`; the SDK's own span counted once), the `@agentotel.tool`s tool steps;
under Agent Framework each agent is an `invoke_agent intake|checker|payroll` step holding its `chat gpt-4o-mini` and
tool steps, the three one after the other in one run (the agent step's output carries a tool call's arguments as a JSON
string where the chat step's carries them parsed); pydantic-ai's run is an `invoke_agent keystone-underwriting` step
inside the run, a tool's ModelRetry a failed tool step ('ToolRetryError: TimeoutError: ...'); the OpenInference run has
no agent step, its model calls `ChatCompletion` steps (model gpt-4o-mini), its tools OITracer's TOOL spans. Nothing
recorded wrong was found.

Built and scored blind, once (main's HEAD when scored, a880f08a8ab8e207fca8f0cab24a50b6a30a955f, the branch rebased
onto it; the set's own commit touches only tests; agentotel/analysis/ unread; load average 4.3 at the start, 5.7 at
the end, other helpers running; recording /tmp/h24-rec-emff7en5): 30 pairs, 4 recorders (a plain anthropic loop over
several client turns, Agent Framework with three agents, pydantic-ai under agentotel alone, OpenInference through the
collector) - diff top-1 29/30, check step+layer 15/30, good runs with a warning 13/30. Check's hits: instructions
changed (2), history lost between a client's turns, tool output drift (2), two APIs answering another person, a 429
answered with an invented deposit reference, two repeated writes, a reasoning-action mismatch (6.625 said, 6.125 sent),
an old model configured (the caterer's) - 12 - and three on the right step for another reason: a blackout approval and
a skipped manager approval both found as 'more than 5 consecutive working days' without request_manager_approval (the
blackout request is 5 days: the same finding fires on its good twin), and a withheld condition found as the answer's
computed income (11,250.00) no tool gave (also on its good twin). Its misses are rules comparing two records (a notice
period against a refund table, a menu's allergens against the client's allergy, a distance against the repeat-client
radius, days posted as hours against the scheduled hours, DTI over 43%, LTV on the appraisal above the lower purchase
price, an expired lock's rate, stubs over 30 days old taken as verified), a handover that lost the decision, an
approval invented after a timeout (Agent Framework: nothing found), a stale rate index with no earlier search to compare
with; an old model configured is found as info under a policy error twice, a timeout answered by going on is found at
its step in the tool layer, and the rewritten checker prompt is found (instructions_changed@6) under the 5-day error.
Diff's miss is the faulty model going on past stale stubs one call before the record_decision the truth names. The
false alarms: the computed monthly income (gross x 26 / 12, the rules' own formula) read as a number no tool gave (8);
'more than 5 consecutive working days' applied to a 5-day request, and to an 8-day request declined on its balance (3);
and (2) a true finding against the set: the allergy twin's script quotes the Harvest menu's GBP 22.00 before reading it.
DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 2 CHECK_MISSED entries hit
since and dropped (checker_prompt_rewritten, stale_paystub_verified); 2 false alarms quiet since and dropped
(blackout_approved, checker_prompt_rewritten).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 1 CHECK_MISSED
entry hit and dropped (handover_drops_context); 8 false alarms quiet and dropped (credit_timeout_invented,
decision_repeated, deposit_unexplained_withheld, documents_shape_changed, dti_over_limit, ltv_purchase_price_ignored,
old_model_configured_pai, paystub_wrong_borrower).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
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
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-3-haiku-20240307"
CATERING, LEAVE, MORTGAGE = "saffron-catering-desk", "northfield-leave-team", "keystone-underwriting"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# What every rule here asks after a failed call: the call once more, then the failure told.
_once_more = functools.partial(kit.once_more, "That call failed - trying it once more.")


def _of(t: Talk, tool: str, **arguments: Any) -> Any:
    """The successful result of `tool` called with these arguments (None: not yet)."""
    return next((v for a, v in reversed(t.got(tool)) if a == arguments and isinstance(v, (dict, list))), None)


# ---- the catering desk's world -------------------------------------------------------------------------------------

_NOTICE_TABLE = ["Cancellations (cancel_order) refund part of the deposit, by how much notice the client gives before "
                 "the event date:", "", "| Notice before the event | Deposit refunded |", "|---|---|",
                 "| 14 days or more | 100% |", "| 7 to 13 days | 50% |", "| under 7 days | none |"]


def catering_instructions() -> str:
    cancellations = _NOTICE_TABLE
    if Now.fault == "policy_rewritten":  # (the winter menu update pasted the 2023 page over the table)
        cancellations = ["Cancellations: refund the client's deposit with cancel_order."]
    return "\n".join([
        "You are the catering-orders desk for Saffron & Salt Catering in Leeds. Today is Friday 4 December 2026.",
        "",
        "Before you look anything up, ask the client for the email address on their account and find it with "
        "find_client.",
        "",
        "Booking an event with place_order:",
        "1. Every menu has a minimum headcount (min_guests on get_menu). Repeat clients - those with 3 or more "
        "completed orders in the last 12 months - may book down to 15 guests on any menu.",
        "2. We deliver within 25 km of our kitchen (check_delivery gives the distance); repeat clients get 40 km. Never "
        "book an address beyond that.",
        "3. If the client tells you a guest has an allergy, check the menu's allergens and never book a menu that "
        "contains it. Offer the menu's alternative instead, and book it only once the client agrees.",
        "4. A booking is confirmed only when the 30% deposit is taken with take_deposit. If take_deposit fails or is "
        "rate-limited, try once more; if it fails again, tell the client the order is held but not confirmed. Never "
        "quote a deposit reference take_deposit didn't return.",
        "",
        *cancellations,
    ])


def catering_model() -> str:
    return OLD_CLAUDE if Now.fault == "old_model_configured" else CLAUDE


EMAIL = "omar.haddad@brightwaterlegal.example"
_MENUS = {  # code: name, price per guest, minimum guests, allergens, alternative
    "LEVANT": ("Levant sharing lunch", 24.5, 20, ["sesame", "tree nuts (pistachio)", "gluten", "milk"], "HARVEST"),
    "HARVEST": ("Harvest seasonal lunch", 22.0, 20, ["gluten", "milk", "celery"], None),
}
_POSTCODES = {"LS1 4DY": 3.2, "LS6 2AB": 5.9, "YO1 7HH": 46.8}


def find_client(email: str) -> dict[str, Any]:
    """The client account with this email: id, company, contact, completed orders in the last 12 months."""
    if email.lower() != EMAIL:
        return {"client": None}
    return {"client": {"client_id": "CL-3318", "company": "Brightwater Legal LLP", "contact": "Omar Haddad",
                       "since": "2023-02-10", "completed_orders_12m": 4, "account_status": "good_standing"}}


def get_menu(menu_code: str) -> dict[str, Any]:
    """A menu: name, price per guest (GBP), minimum guests, allergens, its alternative menu."""
    name, price, minimum, allergens, alternative = _MENUS[menu_code.upper()]
    if Now.fault == "menu_shape_changed":  # the kitchen system's v2 menus API, switched on under the desk
        return {"menu": {"code": menu_code.upper(), "title": name, "pricing": {"per_guest_pence": int(price * 100)},
                         "rules": {"minimum_covers": minimum}, "swap_to": alternative,
                         "dishes": [{"name": "mezze board", "contains": allergens[:2]},
                                    {"name": "flatbreads and labneh", "contains": allergens[2:]}]}}
    return {"menu_code": menu_code.upper(), "name": name, "price_per_guest": price, "currency": "GBP",
            "min_guests": minimum, "allergens": allergens, "alternative": alternative}


def check_delivery(postcode: str) -> dict[str, Any]:
    """The road distance in km from our kitchen to a postcode."""
    return {"postcode": postcode.upper(), "distance_km": _POSTCODES.get(postcode.upper(), 12.0), "kitchen": "LS11 5QN"}


def place_order(client_id: str, menu_code: str, guests: int, event_date: str, postcode: str) -> dict[str, Any]:
    """Holds an event order; answers its id, total and the 30% deposit due."""
    total = _MENUS[menu_code][1] * guests
    return {"order_id": "CT-50712", "client_id": client_id, "menu_code": menu_code, "guests": guests,
            "event_date": event_date, "postcode": postcode, "status": "held", "total": round(total, 2),
            "deposit_due": round(total * 0.3, 2), "currency": "GBP"}


def take_deposit(order_id: str, amount: float) -> dict[str, Any]:
    """Charges the deposit to the card on file; the order is confirmed once it is captured."""
    if Now.pair == "deposit_429_invented" and Now.count("take_deposit") == 1:
        raise RuntimeError("429 Too Many Requests: card processor rate limit, retry after 2s")
    return {"deposit_id": "DP-77310", "order_id": order_id, "amount": amount, "status": "captured",
            "order_status": "confirmed"}


def get_order(order_id: str) -> dict[str, Any]:
    """An event order: client, event date, menu, guests, total, deposit paid, status."""
    return {"order_id": order_id, "client_id": "CL-3318", "event_date": "2026-12-13", "menu_code": "HARVEST",
            "guests": 40, "total": 880.0, "deposit_paid": 264.0, "currency": "GBP", "status": "confirmed",
            "postcode": "LS1 4DY"}


def cancel_order(order_id: str, refund_amount: float) -> dict[str, Any]:
    """Cancels an order and refunds this much of its deposit."""
    return {"order_id": order_id, "status": "cancelled", "refund_id": "RF-61102", "refund_amount": refund_amount,
            "currency": "GBP"}


CATERING_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    find_client, get_menu, check_delivery, place_order, take_deposit, get_order, cancel_order)}


# ---- the leave team's world ----------------------------------------------------------------------------------------

INTAKE_RULES = (
    "You are the intake agent on Northfield Foods' HR leave team. For each leave request, read the employee with "
    "get_employee and write a handover note for the policy checker. The note begins 'Intake' and gives the employee "
    "id, name, team, scheduled hours per day, the dates and the number of working days asked for. Decide nothing.")
_BLACKOUT_RULE = ("3. No annual leave may fall inside a blackout period of the employee's team (get_blackout_periods) "
                  "unless that period lists the employee under exceptions.")


def checker_rules() -> str:
    rules = [
        "You are the leave policy checker at Northfield Foods. Decide the request handed to you:",
        "1. Balances are kept in hours. A working day of leave costs the employee's scheduled hours per day, never a "
        "flat 8.",
        "2. Read the balance with get_leave_balance: the hours asked for must not exceed balance_hours, or the request "
        "is declined.",
        _BLACKOUT_RULE,
        "4. A request of more than 5 consecutive working days needs the manager's approval: call "
        "request_manager_approval before deciding, and decline if the manager declines.",
        "5. Record the decision once with record_leave_decision, then answer with a note for payroll that begins "
        "'Decision' and gives the employee id, the dates, the working days, the hours and the decision with its "
        "reason.",
        "If a system times out, try once more; never record an approval nobody gave.",
    ]
    if Now.fault == "checker_prompt_rewritten":  # (the rules re-pasted from the 2025 handbook, before blackouts)
        rules.remove(_BLACKOUT_RULE)
    return "\n".join(rules)


PAYROLL_RULES = (
    "You are the payroll adjuster at Northfield Foods. When the decision note you are handed says approved, post the "
    "leave once with post_leave_deduction, in hours: the working days times the employee's scheduled hours per day. "
    "Balances carry over into the new year up to a cap of 40 hours; whatever is above the cap on 31 December is "
    "forfeited, never paid out. Answer the employee with the hours deducted, the balance left and the hours they will "
    "forfeit. For a declined request, post nothing and say so.")

_EMPLOYEES = {  # id: name, team, scheduled hours a day, manager
    "E-1042": ("Lena Ortiz", "finance", 7.5, "Priya Shah"), "E-1024": ("Leo Ortez", "logistics", 8.0, "Dan Kerr"),
    "E-1107": ("Sam Patel", "finance", 7.5, "Priya Shah")}


def get_employee(employee_id: str) -> dict[str, Any]:
    """An employee: name, team, contract, scheduled hours per day, manager."""
    name, team, hours, manager = _EMPLOYEES[employee_id]
    return {"employee_id": employee_id, "name": name, "team": team, "contract": "permanent",
            "schedule": {"hours_per_day": hours, "days_per_week": 5}, "manager": {"name": manager, "id": "M-220"},
            "location": "Leeds"}


def get_leave_balance(employee_id: str) -> dict[str, Any]:
    """An employee's annual-leave balance in hours, accrual rate, carry-over cap and year end."""
    if Now.fault == "balance_wrong_employee" and employee_id == "E-1042":  # (the HRIS cache matched a transposed id)
        employee_id = "E-1024"
    hours = {"E-1042": 45.0 if Now.pair == "balance_wrong_employee" else 112.5, "E-1024": 127.5, "E-1107": 90.0}
    return {"employee_id": employee_id, "as_of": TODAY, "annual_leave": {
        "balance_hours": hours[employee_id], "accrual_hours_per_month": 15.0, "unit": "hours"},
        "carryover_cap_hours": 40, "year_end": "2026-12-31"}


def get_blackout_periods(team: str) -> dict[str, Any]:
    """A team's leave blackout periods, each with its reason and the employees excepted from it."""
    return {"team": team, "periods": [{"start": "2026-12-28", "end": "2027-01-08", "reason": "year-end close",
                                       "exceptions": ["E-1107"] if team == "finance" else []}]}


def request_manager_approval(employee_id: str, start: str, end: str, hours: float) -> dict[str, Any]:
    """Asks the employee's manager to approve a leave request; answers the manager's decision."""
    if Now.pair == "approval_timeout_invented" and Now.count("request_manager_approval") == 1:
        raise TimeoutError("approvals service did not answer within 10s")
    return {"approval_id": "AP-3391", "employee_id": employee_id, "manager": "Priya Shah", "status": "approved",
            "decided_at": "2026-12-04T10:12:40Z"}


def record_leave_decision(employee_id: str, start: str, end: str, hours: float, decision: str, reason: str) -> dict[str, Any]:
    """Records the decision on a leave request (approved or declined)."""
    return {"decision_id": f"LD-{6100 + Now.count('record_leave_decision')}", "employee_id": employee_id,
            "decision": decision, "hours": hours, "status": "recorded"}


def post_leave_deduction(employee_id: str, hours: float, start: str, end: str) -> dict[str, Any]:
    """Posts approved leave to payroll: deducts the hours from the balance; answers the balance after."""
    before = get_leave_balance(employee_id)["annual_leave"]["balance_hours"]
    return {"posting_id": f"PL-{7780 + Now.count('post_leave_deduction')}", "employee_id": employee_id,
            "hours": hours, "balance_after_hours": round(before - hours, 2), "period": f"{start}/{end}"}


INTAKE_TOOLS = {f.__name__: f for f in (get_employee,)}
CHECKER_TOOLS = {f.__name__: f for f in (get_leave_balance, get_blackout_periods, request_manager_approval,
                                         record_leave_decision)}
PAYROLL_TOOLS = {f.__name__: f for f in (post_leave_deduction,)}


# ---- the underwriting agent's world --------------------------------------------------------------------------------

_RATE_ROW = ("| Rate | Use the lock's rate only if the lock's expires date is on or after the decision date. Otherwise "
             "reprice from search_rate_sheets: the sheet whose status is \"current\" for the product - never a "
             "superseded sheet. |")


def mortgage_instructions() -> str:
    rate = _RATE_ROW
    if Now.fault == "instructions_rewritten":  # (the prompt's rate row rewritten in the November cleanup)
        rate = "| Rate | Price the loan at the rate on the borrower's lock (get_rate_lock). |"
    return "\n".join([
        "You are the underwriting assistant for Keystone Home Lending. Today, 2026-12-04, is the decision date.",
        "",
        "Work each loan file from its records: get_application, get_pay_stubs, get_credit_report, get_appraisal, "
        "search_documents (bank statements) and get_rate_lock. Apply these rules:",
        "",
        "| Check | Rule |",
        "|---|---|",
        "| Income | Monthly income is verified from the two latest pay stubs (biweekly gross x 26 / 12), never the "
        "application's stated income. If the latest stub's pay_date is more than 30 days before the decision date, "
        "don't decide: record \"suspended\" with the condition \"current pay stubs\". |",
        rate,
        "| DTI | (the credit report's monthly payments + the housing payment) / verified monthly income must be 43% or "
        "less, or the loan is declined. Housing payment = principal and interest at the rate over 360 months + the "
        "application's monthly escrow (+ mortgage insurance when required). |",
        "| LTV | loan amount / the LOWER of the purchase price and the appraised value. Above 80% requires mortgage "
        "insurance (0.55% of the loan a year) as a condition; above 95% decline. |",
        "| Assets | Any single deposit on the bank statements larger than half the verified monthly income needs a "
        "letter of explanation: add the condition \"LOE for deposit of <amount> on <date>\". |",
        "",
        "Record one decision with record_decision (approved, declined or suspended) giving the DTI, LTV, rate and "
        "conditions, then answer the loan officer with the decision, the figures and every condition.",
        "If a system times out, try once more; never use a figure you didn't read.",
    ])


def mortgage_model() -> str:
    return OLD_MODEL if Now.fault in ("old_model_configured_pai", "old_model_configured_oi") else MODEL


_EXPIRED = ("expired_lock_used", "rate_index_stale", "instructions_rewritten", "rate_mismatch_said",
            "old_model_configured_oi")
_HIGH_DEBT = ("dti_over_limit", "paystub_wrong_borrower")
_LOANS = {  # loan id: borrower id, name, loan amount, purchase price, appraised value, escrow
    "LN-88213": ("B-5521", "Ruth Mensah", 380000, 495000, 520000, 640.0),
    "LN-88190": ("B-5480", "Tomasz Wojcik", 288000, 360000, 372000, 510.0),
    "LN-88204": ("B-5502", "Grace Ilunga", 312000, 415000, 409000, 575.0),
}
_GROSS = {"B-5521": 5192.31, "B-5512": 7884.62, "B-5480": 4615.38, "B-5502": 5576.92}  # biweekly gross pay


def get_application(loan_id: str) -> dict[str, Any]:
    """A loan application: borrower, employer, property, purchase price, loan amount, product, lock, stated income,
    monthly escrow."""
    bid, name, amount, price, _, escrow = _LOANS[loan_id]
    if Now.pair == "ltv_purchase_price_ignored" and loan_id == "LN-88213":
        amount = 400000
    return {"loan_id": loan_id, "borrower": {"borrower_id": bid, "name": name, "employer": "Halcyon Health Partners"},
            "purpose": "purchase", "property": {"address": "14 Alder Row, Columbus OH 43215", "purchase_price": price,
                                                "type": "single_family"},
            "loan_amount": amount, "product": "30Y-FIXED", "lock_id": f"LK-{loan_id[3:]}",
            "stated_monthly_income": 12500.0, "monthly_escrow": escrow, "submitted": "2026-11-20"}


def get_pay_stubs(borrower_id: str) -> dict[str, Any]:
    """A borrower's pay stubs, newest first: pay date, period, frequency, gross pay, year-to-date gross."""
    if Now.fault == "paystub_wrong_borrower" and borrower_id == "B-5521":  # (the payroll vendor matched on surname)
        borrower_id = "B-5512"
    gross = _GROSS[borrower_id]
    dates = (("2026-10-16", "2026-10-02") if Now.pair == "stale_paystub_verified" else ("2026-11-27", "2026-11-13"))
    stubs = [{"pay_date": d, "period_end": d, "frequency": "biweekly", "gross": gross,
              "ytd_gross": round(gross * (22 - i), 2)} for i, d in enumerate(dates)]
    if Now.fault == "documents_shape_changed":  # the payroll vendor's v3 API, switched on under the agent
        return {"data": {"worker": {"id": borrower_id}, "items": [
            {"payDate": s["pay_date"], "grossPay": {"amountCents": int(s["gross"] * 100), "currency": "USD"},
             "payFrequency": "BIWEEKLY"} for s in stubs]}}
    return {"borrower_id": borrower_id, "employer": "Halcyon Health Partners", "stubs": stubs}


def get_credit_report(borrower_id: str) -> dict[str, Any]:
    """A borrower's credit report: score, pull date, tradelines with their monthly payments."""
    if Now.pair == "credit_timeout_invented" and Now.count("get_credit_report") == 1:
        raise TimeoutError("credit bureau did not answer within 12s")
    lines = [("auto", "Ally Auto", 485.0), ("student_loan", "Nelnet", 310.0), ("revolving", "Chase Freedom", 95.0)]
    if Now.pair in _HIGH_DEBT and borrower_id == "B-5521":
        lines.append(("auto", "Toyota Financial", 1400.0))
    return {"borrower_id": borrower_id, "score": 742, "pulled": "2026-11-30", "tradelines": [
        {"type": kind, "creditor": who, "monthly_payment": pay, "status": "current"} for kind, who, pay in lines]}


def get_appraisal(loan_id: str) -> dict[str, Any]:
    """The property's appraisal: appraised value, date, appraiser."""
    return {"loan_id": loan_id, "appraised_value": _LOANS[loan_id][4], "effective_date": "2026-11-24",
            "appraiser": "R. Castillo, OH-AL-2231", "condition": "C3"}


def search_documents(loan_id: str, query: str) -> dict[str, Any]:
    """Searches the loan file's documents (bank statements, letters): each with id, type, period, balance, deposits."""
    deposits = [[("2026-11-13", 3911.27, "HALCYON HEALTH PAYROLL"), ("2026-11-27", 3911.27, "HALCYON HEALTH PAYROLL")],
                [("2026-10-16", 3911.27, "HALCYON HEALTH PAYROLL"), ("2026-10-30", 3911.27, "HALCYON HEALTH PAYROLL")]]
    if Now.pair == "deposit_unexplained_withheld":
        deposits[0].append(("2026-11-19", 9800.0, "MOBILE DEPOSIT"))
    months = (("2026-11", 61240.18, 0.91), ("2026-10", 52118.40, 0.88))
    return {"loan_id": loan_id, "query": query, "results": [
        {"doc_id": f"BS-{loan_id[3:]}-{m}", "type": "bank_statement", "account": "checking ...4471",
         "period": {"start": f"{m}-01", "end": f"{m}-30" if m.endswith("11") else f"{m}-31"}, "ending_balance": bal,
         "deposits": [{"date": d, "amount": a, "description": what} for d, a, what in dep], "score": score}
        for (m, bal, score), dep in zip(months, deposits)]}


def get_rate_lock(lock_id: str) -> dict[str, Any]:
    """A rate lock: locked rate, the sheet it came from, locked and expiry dates."""
    expires = "2026-12-01" if Now.pair in _EXPIRED else "2026-12-18"
    return {"lock_id": lock_id, "product": "30Y-FIXED", "rate": 6.125, "sheet_id": "RS-2026-11-03", "points": 0.0,
            "locked": "2026-11-03", "expires": expires}


def _sheet(sheet_id: str, version: int, status: str, effective: str, rate: float, score: float) -> dict[str, Any]:
    return {"sheet_id": sheet_id, "version": version, "status": status, "effective": effective, "product": "30Y-FIXED",
            "rate": rate, "points": 0.0, "score": score}


def search_rate_sheets(product: str) -> dict[str, Any]:
    """Searches the pricing index: rate sheets for a product, each with id, version, status, effective date, rate."""
    old = _sheet("RS-2026-11-17", 1, "superseded", "2026-11-17", 6.375, 0.94)
    new = _sheet("RS-2026-12-01", 2, "current", "2026-12-01", 6.625, 0.9)
    if Now.fault == "rate_index_stale":  # (the pricing index's last build was 2026-11-28: before December's sheet)
        return {"product": product, "index_built": "2026-11-28", "results": [{**old, "status": "current"}]}
    return {"product": product, "index_built": "2026-12-03", "results": [old, new]}


def record_decision(loan_id: str, decision: str, dti_pct: float, ltv_pct: float, rate_pct: float,
                    conditions: list[str]) -> dict[str, Any]:
    """Records the underwriting decision (approved, declined, suspended) with its figures and conditions."""
    return {"decision_id": f"UW-{31200 + Now.count('record_decision')}", "loan_id": loan_id, "decision": decision,
            "status": "recorded", "conditions": conditions}


MORTGAGE_TOOLS = {f.__name__: f for f in (get_application, get_pay_stubs, get_credit_report, get_appraisal,
                                          search_documents, get_rate_lock, search_rate_sheets, record_decision)}


# ---- the requests and the simulated client -------------------------------------------------------------------------

CATERING_REQUESTS = {
    "book": "Hello, this is Omar Haddad at Brightwater Legal. We'd like the Harvest lunch for 18 people on Thursday 17 "
            "December, delivered to our office at LS1 4DY.",
    "allergy": "Hi, Omar from Brightwater Legal. Could we book the Levant sharing lunch for 30 on Thursday 17 December "
               "at LS1 4DY? One of our guests has a tree nut allergy.",
    "far": "Hi, Omar at Brightwater Legal. We need the Harvest lunch for 40 at our York office, YO1 7HH, on Thursday 17 "
           "December.",
    "cancel": "Hello, Omar from Brightwater Legal - I'm afraid we need to cancel order CT-50688, the lunch on 13 "
              "December.",
}
_CATERING_ASKS = {"cancel_refund_over_window": "cancel", "policy_rewritten": "cancel", "old_model_configured": "cancel",
                  "allergen_menu_booked": "allergy", "menu_shape_changed": "allergy", "outside_radius_booked": "far"}
CATERING_HISTORY = [f"Hi, Omar ({EMAIL}) - what's the minimum headcount for the Levant lunch?",
                    f"Omar at Brightwater Legal ({EMAIL}): please book the Harvest lunch for 25 on Thursday 17 December "
                    "at LS6 2AB."]
_CLIENT = [("email address", f"Sure - it's {EMAIL}."), ("instead?", "Yes, please book the Harvest menu instead."),
           ("anything else", "No, that's everything - thank you!")]

LEAVE_REQUESTS = {
    "long": "Leave request from Lena Ortiz (E-1042): annual leave from Monday 2026-12-14 to Wednesday 2026-12-23, 8 "
            "working days.",
    "blackout": "Leave request from Lena Ortiz (E-1042): annual leave from Monday 2026-12-28 to Friday 2027-01-01, 5 "
                "working days.",
}
LEAVE_HISTORY = ["Leave request from Sam Patel (E-1107): annual leave from Wednesday 2026-12-09 to Friday 2026-12-11, "
                 "3 working days.",
                 "Leave request from Lena Ortiz (E-1042): annual leave from Thursday 2026-12-10 to Friday 2026-12-11, "
                 "2 working days."]

MORTGAGE_REQUEST = "Underwrite loan LN-88213 (Ruth Mensah, purchase of 14 Alder Row) for a decision today."
MORTGAGE_HISTORY = ["Underwrite loan LN-88190 (Tomasz Wojcik) for a decision today.",
                    "Please underwrite LN-88204 (Grace Ilunga, purchase) - decision due today."]


def client_replies(said: str) -> str | None:
    """What the client answers to the desk's message `said` (the first reply still to say whose cue it holds), or
    None: the chat is over."""
    return Now.reply(_CLIENT, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "anthropic-catering":
        return CATERING_REQUESTS[_CATERING_ASKS.get(pair, "book")] if pair else CATERING_HISTORY[v % 2]
    if Now.recorder == "maf-leave":
        if not pair:
            return LEAVE_HISTORY[v % 2]
        return LEAVE_REQUESTS["blackout" if pair in ("blackout_approved", "checker_prompt_rewritten") else "long"]
    return MORTGAGE_REQUEST if pair else MORTGAGE_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent (Anthropic messages arrive in that form) ------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    if "catering-orders desk for Saffron" in t.system and t.users:
        out = _catering(t, asked == OLD_CLAUDE)
    elif "intake agent on Northfield" in t.system and t.users:
        out = _intake(t)
    elif "leave policy checker at Northfield" in t.system and t.users:
        out = _checker(t)
    elif "payroll adjuster at Northfield" in t.system and t.users:
        out = _payroll(t)
    elif "underwriting assistant for Keystone" in t.system and t.users:
        out = _underwrite(t, asked == OLD_MODEL)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _menu(found: dict[str, Any]) -> dict[str, Any]:
    """A menu as the model reads it: v1's fields; v2's read by the names it knows (no allergens seen: the slip a
    changed shape invites)."""
    if "menu" not in found:
        return found
    m = found["menu"]
    return {"menu_code": m.get("code"), "name": m.get("title"), "price_per_guest": found.get("price_per_guest") or 0.0,
            "min_guests": found.get("min_guests") or 0, "allergens": found.get("allergens") or [],
            "alternative": found.get("alternative")}


def _catering(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's everything" in u for u in t.users[1:]):
        return reply("You're welcome, Omar - enjoy the lunch!")
    intent = next((k for k, words in (("cancel", "cancel order"), ("minimum", "minimum headcount"),
                                      ("book", " lunch for ")) if words in said), None)
    if not intent:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Sorry, I've lost track of our conversation - could you tell me again what you'd like to book or "
                     "change?")
    email = re.search(r"[\w.]+@[\w.]+\.\w+", said)
    if not email:
        return reply("Happy to help. First, what's the email address on your Saffron & Salt account?")
    step = t.need(("find_client", {"email": email.group(0).rstrip(".")}))
    if step:
        return step
    client = t.value("find_client")["client"]
    repeat = client["completed_orders_12m"] >= 3
    if intent == "cancel":
        return _cancel(t, old)
    if intent == "minimum":
        step = t.need(("get_menu", {"menu_code": "LEVANT"}))
        if step:
            return step
        m = _menu(t.value("get_menu"))
        return reply(f"The {m['name']} needs at least {m['min_guests']} guests. As a repeat client you can book any "
                     "menu for as few as 15." + _ANYTHING)
    swapped = "Harvest menu instead" in said
    code = "HARVEST" if swapped or "Harvest lunch" in said else "LEVANT"
    guests = int(re.search(r"for (\d+)", said).group(1))
    postcode = re.search(r"\b(LS\d+ \d[A-Z]{2}|YO\d+ \d[A-Z]{2})\b", said).group(1)
    step = t.need(("get_menu", {"menu_code": code}), ("check_delivery", {"postcode": postcode}))
    if step:
        return step
    menu, km = _menu(_of(t, "get_menu", menu_code=code)), t.value("check_delivery")["distance_km"]
    order, deposit = t.value("place_order"), t.value("take_deposit")
    if not order:
        reach = 40 if repeat else 25
        if km > reach and fault != "outside_radius_booked":
            return reply(f"I'm sorry, Omar - {postcode} is {km} km from our kitchen, and we deliver up to {reach} km "
                         "(that's already the repeat-client distance), so I can't book this one. We could deliver to "
                         "your Leeds office instead." + _ANYTHING)
        nuts = [a for a in menu["allergens"] if "tree nut" in a]
        if "nut allergy" in said and nuts and fault != "allergen_menu_booked":
            alt = _MENUS[menu["alternative"]]
            return reply(f"The {menu['name']} contains {nuts[0]}, so I can't book it with a guest who has a tree nut "
                         f"allergy. Its alternative is our {alt[0]} (GBP {alt[1]:.2f} a guest, no nuts). Shall I book "
                         "the Harvest menu instead?")
        if guests < (15 if repeat else menu["min_guests"]):
            return reply(f"The {menu['name']} needs at least {menu['min_guests']} guests, so I can't book {guests}."
                         + _ANYTHING)
        return call("place_order", client_id=client["client_id"], menu_code=code, guests=guests,
                    event_date="2026-12-17", postcode=postcode)
    tried = t.got("take_deposit")
    if not deposit and tried and fault == "deposit_429_invented":  # (the fault: a reference the processor never gave)
        deposit = {"deposit_id": "DP-77288", "amount": order["deposit_due"]}
    if not deposit:
        return _once_more("take_deposit", tried, f"Order {order['order_id']} is held, but the card processor isn't "
                          "taking the deposit right now, so it isn't confirmed yet - I'll try again this afternoon."
                          + _ANYTHING, order_id=order["order_id"], amount=order["deposit_due"])
    below = (f" As a repeat client you can book below the usual {menu['min_guests']}-guest minimum."
             if guests < menu["min_guests"] else "")
    return reply(f"Booked: order {order['order_id']}, the {_MENUS[code][0]} for {guests} on Thursday 17 December at "
                 f"{postcode}, GBP {order['total']:.2f} in all.{below} Your 30% deposit of GBP {deposit['amount']:.2f} "
                 f"is taken (deposit {deposit['deposit_id']}), so the order is confirmed." + _ANYTHING)


def _cancel(t: Talk, old: bool) -> dict[str, Any]:
    step = t.need(("get_order", {"order_id": "CT-50688"}))
    if step:
        return step
    order, done = t.value("get_order"), t.value("cancel_order")
    notice = (int(order["event_date"][8:]) - int(TODAY[8:]))  # (both in December)
    share = 1.0 if notice >= 14 else 0.5 if notice >= 7 else 0.0
    if old or "| Deposit refunded |" not in t.system or Now.fault == "cancel_refund_over_window":
        share = 1.0  # (the old model, the rewritten page and the fault: the deposit back, whatever the notice)
    if not done:
        return call("cancel_order", order_id=order["order_id"], refund_amount=round(order["deposit_paid"] * share, 2))
    part = ("your deposit of GBP {0:.2f} is refunded in full" if done["refund_amount"] >= order["deposit_paid"] else
            f"with {notice} days' notice 50% of your GBP {{0:.2f}} deposit is refunded").format(order["deposit_paid"])
    return reply(f"Order {order['order_id']} (the lunch on 13 December) is cancelled, and {part}: GBP "
                 f"{done['refund_amount']:.2f}, refund {done['refund_id']}." + _ANYTHING)


_DATES = re.compile(r"(20\d\d-\d\d-\d\d) to \w* ?(20\d\d-\d\d-\d\d)")


def _intake(t: Talk) -> dict[str, Any]:
    asked = t.users[0]
    emp = re.search(r"\bE-\d{4}\b", asked).group(0)
    step = t.need(("get_employee", {"employee_id": emp}))
    if step:
        return step
    e = t.value("get_employee")
    start, end = _DATES.search(asked).groups()
    days = int(re.search(r"(\d+) working days", asked).group(1))
    return reply(f"Intake {emp} {e['name']} ({e['team']} team), scheduled {e['schedule']['hours_per_day']} h a day: "
                 f"annual leave {start} to {end}, {days} working days.")


def _checker(t: Talk) -> dict[str, Any]:
    note, fault = t.users[0], Now.fault
    emp = re.search(r"\bE-\d{4}\b", note).group(0)
    team = re.search(r"\((\w+) team\)", note).group(1)
    per_day = float(re.search(r"scheduled ([\d.]+) h", note).group(1))
    start, end = _DATES.search(note).groups()
    days = int(re.search(r"(\d+) working days", note).group(1))
    hours = days * per_day
    step = t.need(("get_leave_balance", {"employee_id": emp}), ("get_blackout_periods", {"team": team}))
    if step:
        return step
    balance = t.value("get_leave_balance")["annual_leave"]["balance_hours"]
    blocked = [p for p in t.value("get_blackout_periods")["periods"]
               if start <= p["end"] and end >= p["start"] and emp not in p["exceptions"]]
    why, approval = "", None
    if hours > balance:
        why = f"{hours} hours asked for, {balance} hours of balance"
    elif blocked and "blackout period" in t.system and fault != "blackout_approved":
        why = f"inside the {blocked[0]['reason']} blackout ({blocked[0]['start']} to {blocked[0]['end']})"
    elif days > 5 and fault != "approval_skipped":
        tried, approval = t.got("request_manager_approval"), t.value("request_manager_approval")
        if not approval and tried and fault == "approval_timeout_invented":  # (the fault: an approval nobody gave)
            approval = {"approval_id": "AP-3380", "manager": "Priya Shah", "status": "approved"}
        if not approval:
            return _once_more("request_manager_approval", tried, f"The approvals service isn't answering, so {emp}'s "
                              "request stays undecided for now.", employee_id=emp, start=start, end=end, hours=hours)
        if approval["status"] != "approved":
            why = "the manager declined"
    decision = "declined" if why else "approved"
    recorded = [v for _, v in t.got("record_leave_decision") if isinstance(v, dict)]
    if not recorded:
        return call("record_leave_decision", employee_id=emp, start=start, end=end, hours=hours, decision=decision,
                    reason=why or (f"manager approval {approval['approval_id']}" if approval else "within policy"))
    because = why or (f"manager approval {approval['approval_id']} ({approval['manager']})" if approval else
                      "within policy")
    return reply(f"Decision {emp}: annual leave {start} to {end}, {days} working days, {hours} hours - {decision} "
                 f"({because}; balance {balance} hours). Recorded as {recorded[0]['decision_id']}.")


def _payroll(t: Talk) -> dict[str, Any]:
    note = " ".join(t.users)
    decided = re.search(r"Decision (E-\d{4}): annual leave (\S+) to (\S+), (\d+) working days, ([\d.]+) hours - (\w+)",
                        note)
    if not decided:
        return reply("I was handed no leave decision - which employee, which dates, and was it approved?")
    emp, start, end, days, hours, decision = decided.groups()
    if decision != "approved":
        return reply(f"{emp}'s leave from {start} to {end} was declined, so nothing is posted to payroll.")
    posted = [v for _, v in t.got("post_leave_deduction") if isinstance(v, dict)]
    amount = float(days) if Now.fault == "days_as_hours" else float(hours)  # (the fault: the days posted as hours)
    if not posted or (Now.fault == "posting_repeated" and len(posted) == 1):
        return call("post_leave_deduction", employee_id=emp, hours=amount, start=start, end=end)
    left = posted[0]["balance_after_hours"]
    lost = max(0.0, left - 40)
    return reply(f"Posted {posted[0]['posting_id']}: {amount} hours of annual leave for {emp} ({start} to {end}). "
                 f"Balance left: {left} hours" + (f"; {lost} hours above the 40-hour carry-over cap will be forfeited "
                                                   "on 31 December unless used." if lost else "."))


def _stubs(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Pay stubs as the model reads them: v1's rows, newest first; v3's read by the names it knows finds none."""
    return sorted(found.get("stubs", ()), key=lambda s: s["pay_date"], reverse=True)


def _payment(loan: float, rate: float) -> float:
    r = rate / 100 / 12
    return round(loan * r / (1 - (1 + r) ** -360), 2)


def _underwrite(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    loan_id = re.search(r"\bLN-\d{5}\b", t.users[0]).group(0)
    step = t.need(("get_application", {"loan_id": loan_id}))
    if step:
        return step
    app = t.value("get_application")
    bid, name = app["borrower"]["borrower_id"], app["borrower"]["name"]
    decided = [v for _, v in t.got("record_decision") if isinstance(v, dict)]
    if old:  # (the old model takes the stated income, reading no stub)
        income = app["stated_monthly_income"]
    else:
        step = t.need(("get_pay_stubs", {"borrower_id": bid}))
        if step:
            return step
        stubs = _stubs(t.value("get_pay_stubs"))
        stale = bool(stubs) and stubs[0]["pay_date"] < "2026-11-04" and fault != "stale_paystub_verified"
        if not stubs or stale:
            why = (f"the latest pay stub is dated {stubs[0]['pay_date']}, over 30 days before today" if stubs else
                   "no pay stubs could be read from the file")
            if not decided:
                return call("record_decision", loan_id=loan_id, decision="suspended", dti_pct=0.0, ltv_pct=0.0,
                            rate_pct=0.0, conditions=["current pay stubs"])
            return reply(f"{loan_id} ({name}): suspended - {why}, so income can't be verified yet. Condition: current "
                         f"pay stubs (the two latest). Recorded as {decided[0]['decision_id']}.")
        income = round(sum(s["gross"] for s in stubs[:2]) / 2 * 26 / 12, 2)
    tried, credit = t.got("get_credit_report"), t.value("get_credit_report")
    if not credit:
        if not (tried and fault == "credit_timeout_invented"):
            return _once_more("get_credit_report", tried, f"The credit bureau isn't answering, so {loan_id} has no "
                              "decision yet.", borrower_id=bid)
        credit = {"tradelines": []}  # (the fault: no debts, on a report nobody read)
    step = t.need(("get_appraisal", {"loan_id": loan_id}),
                  ("search_documents", {"loan_id": loan_id, "query": "bank statements last two months"}),
                  ("get_rate_lock", {"lock_id": app["lock_id"]}))
    if step:
        return step
    lock = t.value("get_rate_lock")
    rate, source = lock["rate"], f"lock {lock['lock_id']}"
    careless = old or fault == "expired_lock_used" or "Use the lock's rate only if" not in t.system
    if lock["expires"] < TODAY and not careless:
        step = t.need(("search_rate_sheets", {"product": app["product"]}))
        if step:
            return step
        sheet = next(s for s in t.value("search_rate_sheets")["results"] if s["status"] == "current")
        rate, source = sheet["rate"], f"sheet {sheet['sheet_id']}, the lock expired {lock['expires']}"
    said_rate, recorded_rate = rate, (lock["rate"] if fault == "rate_mismatch_said" else rate)
    loan, escrow = app["loan_amount"], app["monthly_escrow"]
    appraised = t.value("get_appraisal")["appraised_value"]
    value = appraised if fault == "ltv_purchase_price_ignored" else min(appraised, app["property"]["purchase_price"])
    ltv = round(loan / value * 100, 1)
    conditions, mi = [], 0.0
    if ltv > 80:
        mi = round(loan * 0.0055 / 12, 2)
        conditions.append(f"mortgage insurance (LTV {ltv}%), USD {mi:.2f} a month")
    debts = sum(x["monthly_payment"] for x in credit["tradelines"])
    dti = round((debts + _payment(loan, recorded_rate) + escrow + mi) / income * 100, 1)
    for doc in t.value("search_documents")["results"]:
        conditions += [f"LOE for deposit of {d['amount']:.2f} on {d['date']}" for d in doc["deposits"]
                       if d["amount"] > income / 2]
    decision = "declined" if (dti > 43 and fault != "dti_over_limit") or ltv > 95 else "approved"
    if not decided or (fault == "decision_repeated" and len(decided) == 1):
        return call("record_decision", f"Pricing at {said_rate:.3f}% ({source})." if fault == "rate_mismatch_said"
                    else None, loan_id=loan_id, decision=decision, dti_pct=dti, ltv_pct=ltv, rate_pct=recorded_rate,
                    conditions=conditions)
    why = f" - DTI {dti}% is above the 43% limit" if decision == "declined" else ""
    told = [c for c in conditions if not (fault == "deposit_unexplained_withheld" and c.startswith("LOE"))]
    verified = " Income verified from the two latest pay stubs." if fault == "stale_paystub_verified" else ""
    return reply(f"{loan_id} ({name}): {decision}{why}. DTI {dti}%, LTV {ltv}%, rate {said_rate:.3f}% ({source}), "
                 f"monthly income USD {income:,.2f}.{verified} Conditions: {'; '.join(told) or 'none'}. Recorded as "
                 f"{decided[0]['decision_id']}.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class AnthropicCatering(kit.AgentotelRecorder):
    """The orders desk as a plain anthropic SDK messages loop with tool_use (kit.anthropic_loop), the tools
    `@agentotel.tool`s, under agentotel; the client's reply appended when the answer holds its cue. The faulty app sends
    the client's latest message alone (its chat store lost the earlier turns)."""

    agent = CATERING

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel

        super().__init__(options, url)
        self.tools = {name: agentotel.tool(f) for name, f in CATERING_TOOLS.items()}

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, catering_model(), catering_instructions(), task, self.tools,
                                  declared(CATERING_TOOLS), client_replies,
                                  forget=Now.fault == "history_lost_between_turns")


class MafLeave(kit.AgentotelRecorder):
    """The leave team on Microsoft Agent Framework: intake, checker and payroll `Agent`s run one after the other by the
    app, each handed the earlier notes, under agentotel (the framework's telemetry on, with the messages). The faulty
    app's handover to payroll passes a fixed line alone (its template lost its fields)."""

    agent = LEAVE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)

    def body(self, task: str) -> str:
        from agent_framework import Agent, tool as af_tool
        from agent_framework.openai import OpenAIChatCompletionClient

        client = OpenAIChatCompletionClient(MODEL, api_key="sk-test", base_url=self.url + "/v1")
        client.function_invocation_configuration["include_detailed_errors"] = True
        intake, checker, payroll = (
            Agent(client=client, name=role, instructions=rules, tools=[
                af_tool(name=n, description=inspect.getdoc(f))(_as_text(f)) for n, f in tools.items()])
            for role, rules, tools in (("intake", INTAKE_RULES, INTAKE_TOOLS), ("checker", checker_rules(), CHECKER_TOOLS),
                                       ("payroll", PAYROLL_RULES, PAYROLL_TOOLS)))

        async def team() -> str:
            note = (await intake.run(task)).text
            decision = (await checker.run(f"{note}\n\nRequest: {task}")).text
            handed = ("Leave decision recorded - please process it." if Now.fault == "handover_drops_context"
                      else f"{note}\n\n{decision}")
            return (await payroll.run(handed)).text

        return asyncio.run(team())


class PaiMortgage(kit.AgentotelRecorder):
    """The underwriting agent on pydantic-ai under agentotel only (no pydantic-ai instrumentation of its own); a tool's
    timeout goes back to the model as a retry prompt."""

    agent = MORTGAGE

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", mortgage_model(), MORTGAGE, mortgage_instructions(), MORTGAGE_TOOLS,
                                 task, lambda said: None)  # (one request, no reply asked for)


class OiMortgage(kit.OpenInferenceRecorder):
    """The underwriting agent as a plain openai SDK loop (kit.chat_loop) under OpenInference's openai instrumentation,
    the tools OITracer TOOL spans, through agentotel-collector."""

    agent = MORTGAGE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), MORTGAGE_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, mortgage_model(), mortgage_instructions(), task, self.tools,
                             declared(MORTGAGE_TOOLS))


RECORDERS: dict[str, Any] = {"anthropic-catering": AnthropicCatering, "maf-leave": MafLeave,
                             "pai-mortgage": PaiMortgage, "oi-mortgage": OiMortgage}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models (Anthropic messages there)."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    os.environ.pop("OPENAI_API_KEY", None)
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import _asked, _llm, after, answer, asking, nth_llm, second_answer, tool_step

    def next_agent(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The model call after the run's nth hand-over note (a call asking for no tool): the next agent's first."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            llm = _llm(steps)
            notes = [i for i, s in enumerate(llm) if not _asked(s)]
            return llm[notes[n] + 1]["index"] if len(notes) > n and len(llm) > notes[n] + 1 else None
        return find

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "cancel_refund_over_window": ("model", f"{tau} (deposit refund by notice: 7-13 days 50%): 9 days' notice, the "
                                               "GBP 264 deposit refunded in full; the twin refunds 132",
                                      asking("cancel_order")),
        "allergen_menu_booked": ("model", f"{tau} / {mast} FM-1.1 (never book a menu holding a guest's allergen): "
                                          "Levant (pistachio) booked for a nut allergy; the twin offers Harvest and "
                                          "books it once the client agrees", asking("place_order")),
        "outside_radius_booked": ("model", f"{tau} (40 km for a repeat client, never beyond): YO1 7HH at 46.8 km "
                                           "booked; the twin refuses", asking("place_order")),
        "deposit_429_invented": ("model", f"{trail} rate limits / hallucinated tool output: take_deposit answered 429, "
                                          "the client told 'deposit DP-77288'; the twin tries once more (and applies "
                                          "the repeat client's 15-guest exception)", after(tool_step("take_deposit"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "client's email alone on the second turn; the desk asks what it is "
                                                 "about", second_answer),
        "policy_rewritten": ("prompt", "instructions changed: the notice table replaced by 'refund the client's "
                                       "deposit'; refunded in full at 9 days", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the desk pins an old model ({OLD_CLAUDE}), which refunds "
                                            "the whole deposit", nth_llm(0)),
        "menu_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_menu answers v2 (dishes[].contains,"
                                       " pricing.per_guest_pence); read by v1's names, no allergen seen, the nut menu "
                                       "booked", tool_step("get_menu")),
        "days_as_hours": ("model", f"{trail} wrong reading of units: 8 working days posted as 8.0 hours where a day is "
                                   "7.5 hours (60.0)", asking("post_leave_deduction")),
        "blackout_approved": ("model", f"{tau} (no leave inside the team's blackout unless excepted): 28 Dec - 1 Jan "
                                       "approved inside the year-end close; the twin declines",
                              asking("record_leave_decision")),
        "approval_skipped": ("model", f"{mast} FM-1.1 Disobey task specification (more than 5 days: the manager's "
                                      "approval first): 8 days approved with no request_manager_approval",
                             asking("record_leave_decision")),
        "handover_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: payroll is "
                                             "handed a fixed line alone and asks which decision", next_agent(1)),
        "posting_repeated": ("model", f"{mast} FM-1.3 Step repetition: post_leave_deduction sent again after PL-7781",
                             asking("post_leave_deduction", 1)),
        "balance_wrong_employee": ("tool", f"{trail} API issues: get_leave_balance(E-1042) answers E-1024's 127.5 "
                                           "hours; 60 hours approved on a 45-hour balance (the twin declines)",
                                   tool_step("get_leave_balance")),
        "checker_prompt_rewritten": ("prompt", "instructions changed: the checker's rules re-pasted without the "
                                               "blackout rule; leave approved inside the close", next_agent(0)),
        "approval_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: request_manager_approval timed "
                                               "out, 'approved (AP-3380)' recorded; the twin tries once more",
                                      after(tool_step("request_manager_approval"))),
        "dti_over_limit": ("model", f"{tau} (DTI at most 43%, comparing the credit report and the stubs): 46.6% "
                                    "approved; the twin declines", asking("record_decision")),
        "ltv_purchase_price_ignored": ("model", f"{tau} (LTV on the lower of purchase price and appraisal): 400,000 on "
                                                "the 520,000 appraisal (76.9%) where the 495,000 price gives 80.8%; no "
                                                "mortgage insurance", asking("record_decision")),
        "expired_lock_used": ("model", f"{tau} (a lock's rate only while unexpired): the lock expired 2026-12-01, its "
                                       "6.125% used; the twin reprices at the current 6.625%", asking("record_decision")),
        "rate_index_stale": ("tool", "retrieval index stale: search_rate_sheets served its 2026-11-28 build (the "
                                     "November sheet as current, 6.375%); December's 6.625% missing",
                             tool_step("search_rate_sheets")),
        "paystub_wrong_borrower": ("tool", f"{trail} API issues: get_pay_stubs(B-5521) answers B-5512's stubs; DTI "
                                           "30.7% approved where hers is 46.6% (the twin declines)",
                                   tool_step("get_pay_stubs")),
        "old_model_configured_pai": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which takes "
                                                "the application's stated income, reading no stub", nth_llm(0)),
        "credit_timeout_invented": ("model", f"{trail} timeouts / hallucinated values: get_credit_report timed out, "
                                             "the DTI worked on no debts nobody read; the twin tries once more",
                                    after(tool_step("get_credit_report"))),
        "stale_paystub_verified": ("model", f"{mast} FM-3.3 Incorrect verification: stubs of 2026-10-16 (49 days "
                                            "old) taken as verified income and approved; the twin suspends",
                                   asking("record_decision")),
        "documents_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_pay_stubs answers v3 "
                                            "(data.items, grossPay.amountCents); read by v1's names, no stubs, "
                                            "suspended", tool_step("get_pay_stubs")),
        "instructions_rewritten": ("prompt", "instructions changed: the rate row rewritten to 'the rate on the lock'; "
                                             "an expired lock's 6.125% used", nth_llm(0)),
        "decision_repeated": ("model", f"{mast} FM-1.3 Step repetition: record_decision sent twice (the rules say one)",
                              asking("record_decision", 1)),
        "deposit_unexplained_withheld": ("model", f"{mast} FM-2.4 Information withholding: the 9,800 deposit's LOE "
                                                  "condition recorded but not told to the loan officer", answer),
        "old_model_configured_oi": ("product", f"configuration: the agent pins an old model ({OLD_MODEL}), which "
                                               "takes the stated income and an expired lock's rate", nth_llm(0)),
        "rate_mismatch_said": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Pricing at 6.625%' said, "
                                        "record_decision sent rate 6.125", asking("record_decision")),
    }
    chosen = {
        "anthropic-catering": ["cancel_refund_over_window", "allergen_menu_booked", "outside_radius_booked",
                               "deposit_429_invented", "history_lost_between_turns", "policy_rewritten",
                               "old_model_configured", "menu_shape_changed"],
        "maf-leave": ["days_as_hours", "blackout_approved", "approval_skipped", "handover_drops_context",
                      "posting_repeated", "balance_wrong_employee", "checker_prompt_rewritten",
                      "approval_timeout_invented"],
        "pai-mortgage": ["dti_over_limit", "ltv_purchase_price_ignored", "expired_lock_used", "rate_index_stale",
                         "paystub_wrong_borrower", "old_model_configured_pai", "credit_timeout_invented"],
        "oi-mortgage": ["stale_paystub_verified", "documents_shape_changed", "instructions_rewritten",
                        "decision_repeated", "deposit_unexplained_withheld", "old_model_configured_oi",
                        "rate_mismatch_said"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (a880f08's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 4.3-5.7): 30 pairs, 4 recorders - diff top-1 29/30, check step+layer 15/30,
# good runs warned 13/30 (recording /tmp/h24-rec-emff7en5).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED = {
    "model-oi-mortgage-stale-paystub-verified": "step_added@5: the faulty model goes on to get_credit_report past stubs "
                                                "of 2026-10-16 where the twin records 'suspended'; the truth names "
                                                "record_decision @13 (the set's truth could have named @5)",
}
_NOTHING = "nothing found; "
_INCOME = ("ungrounded_answer@{}/model on the answer's monthly income 11,250.00 (stubs' gross x 26 / 12, the rules' own "
           "formula: a computed figure) ranked first; ")
_FIVE_DAYS = ("missing_evidence@10/model error: 'more than 5 consecutive working days needs the manager's approval' "
              "held against ")
CHECK_MISSED = {
    "model-anthropic-catering-cancel-refund-over-window": _NOTHING + "cancel_order's refund_amount 264.0 (all of "
                                                          "get_order's deposit_paid) with event_date 2026-12-13, 9 days "
                                                          "after today, where the markdown table gives 50% for 7-13 days",
    "model-anthropic-catering-allergen-menu-booked": _NOTHING + "place_order(LEVANT) where get_menu's allergens list "
                                                     "'tree nuts (pistachio)' and the client said a guest has a tree "
                                                     "nut allergy ('never book a menu that contains it')",
    "model-anthropic-catering-outside-radius-booked": _NOTHING + "place_order for YO1 7HH, check_delivery's distance_km "
                                                      "46.8, above the 40 km a repeat client gets ('Never book an "
                                                      "address beyond that')",
    "model-maf-leave-days-as-hours": _NOTHING + "post_leave_deduction hours 8.0 where the note says 8 working days and "
                                    "'60.0 hours' (scheduled 7.5 h a day): a day count sent in an hours field",
    "model-maf-leave-approval-timeout-invented": _NOTHING + "request_manager_approval@11 failed (TimeoutError) and the "
                                                 "next call records 'approved' with 'manager approval AP-3380', an id "
                                                 "no call returned, no retry (the same shape was found under the "
                                                 "anthropic loop and pydantic-ai, not under Agent Framework)",
    "model-pai-mortgage-dti-over-limit": _INCOME.format(16) + "nothing read record_decision's dti_pct 46.6 'approved' "
                                         "against 'must be 43% or less, or the loan is declined'",
    "model-pai-mortgage-ltv-purchase-price-ignored": _INCOME.format(16) + "nothing read ltv_pct 76.9 (400,000 over the "
                                                     "520,000 appraisal) where the rule takes the lower purchase_price "
                                                     "495,000 (80.8%: mortgage insurance)",
    "model-pai-mortgage-expired-lock-used": _INCOME.format(16) + "nothing read get_rate_lock's expires 2026-12-01, "
                                            "before the decision date, with its rate 6.125 recorded",
    "tool-pai-mortgage-rate-index-stale": _INCOME.format(18) + "search_rate_sheets' index_built 2026-11-28 and a "
                                          "November sheet as 'current'; no earlier run searched the sheets (their "
                                          "locks were live) to compare with",
    "product-pai-mortgage-old-model-configured-pai": "missing_evidence@12/product (record_decision with no "
                                                     "get_pay_stubs, the policy's required_before) error ranked over "
                                                     "model_changed@2/product, an info at the right step",
    "model-pai-mortgage-credit-timeout-invented": "tool_error_ignored@8/tool: the right step, the tool layer (a "
                                                  "timeout reads as the tool's); the model went on to a DTI on debts no "
                                                  "report gave where the rules say try once more",
    "product-oi-mortgage-old-model-configured-oi": "missing_evidence@11/product (record_decision with no get_pay_stubs) "
                                                   "error ranked over model_changed@1/product, an info at the right "
                                                   "step",
}
_OWN_FLAW = ("ungrounded_answer@8/model: TRUE - the set's good twin quotes the Harvest menu's GBP 22.00 before it reads "
             "get_menu(HARVEST) (the script's slip, not the detector's)")
FALSE_ALARMS = {
    "model-anthropic-catering-allergen-menu-booked": _OWN_FLAW,
    "tool-anthropic-catering-menu-shape-changed": _OWN_FLAW,
    "tool-maf-leave-balance-wrong-employee": _FIVE_DAYS + "an 8-day request declined on its 45-hour balance (arguable: "
                                             "the rule says 'before deciding'; no manager is asked about a request "
                                             "already refused)",
}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "anthropic-catering": {"required_before": {"place_order": ["find_client", "get_menu", "check_delivery"],
                                               "cancel_order": ["find_client", "get_order"],
                                               "take_deposit": ["place_order"]}},
    "maf-leave": {"required_before": {"record_leave_decision": ["get_leave_balance", "get_blackout_periods"],
                                      "post_leave_deduction": ["record_leave_decision"]}},
    "pai-mortgage": {"required_before": {"record_decision": ["get_application", "get_pay_stubs"]}},
    "oi-mortgage": {"required_before": {"record_decision": ["get_application", "get_pay_stubs"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h24-rec-", pairs, produce, kit.through_collector("oi-mortgage"), policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
