"""A seventeenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a mobile carrier's chat agent holding written account-security and billing rules, talking with a customer over
several turns, a hospitality group's procurement team (an intake agent briefing a buyer) and a release agent shipping
a service to production by a written runbook, its tools served over MCP, run through real agent frameworks.

    python tests/analysis/heldout17.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout17.py --score DIR [...]       # the runs a call left in DIR, scored again

Tidewater Mobile's chat agent (get_account, verify_pin, swap_sim, get_device, unlock_device, get_bill, apply_credit,
escalate_to_supervisor, list_plans, change_plan) serves a customer by six numbered ground rules (the account pulled
first; no SIM swap without a PIN verify_pin confirmed, two misses send them to a store; an unlock only once paid off
and 60 days active; up to $20 of goodwill credit alone, more goes to a supervisor; which line, asked when the account
has several; a failure told, never filled in). The customer's replies are scripted and said when the agent's message
holds their cue ('account PIN', 'try once more', 'Which line', 'anything else'). Harrow & Finch's procurement team:
an intake agent (get_budget, search_catalog, hand_to_buyer: the cost centre's remaining budget checked, catalogue
items only) briefs a buyer (get_vendor, request_quote, create_po, notify_requester: only active vendors with a current
insurance certificate, two quotes above $10,000, the requester's ship-to and need-by date). Quillmark's release agent
(get_release, get_ci_status, get_change_calendar, run_migration, page_oncall, deploy, get_canary_metrics, promote,
rollback, post_status) ships by runbook rev 12 (CI green on the exact commit; nothing during a change freeze; a
migration dry-run first and a long lock paged to the DBA; canary, then promote only under 1% errors and 400 ms p95,
otherwise roll back; the outcome posted to #releases). Each recorder in a process of its own:

- `maf-telecom` (carrier chat): Microsoft Agent Framework's Agent (chat completions client, its own telemetry on),
  one `run` per customer turn in one AgentSession, under `agentotel.instrument()`;
- `lg-procure` (procurement): a hand-built LangGraph StateGraph (intake -> tools -> handover -> buyer -> tools, two
  message lists in the state, ToolNode with handle_tool_errors), under `agentotel.instrument()`;
- `mcp-release` (release): the runbook's tools on an in-process MCP server (mcp's MCPServer), called through an MCP
  Client session from a plain openai SDK loop, under `agentotel.instrument()`;
- `tl-anthropic-release` (release): a plain anthropic SDK loop under OpenLLMetry's anthropic instrumentation, the
  tools traceloop tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from tau-bench-style
policy breaks (a SIM swap unverified or after a failed PIN, an unlock before eligibility, a credit over the limit, an
order briefed past the budget, an on-hold or uninsured vendor, one quote where two are needed, CI red or a freeze
ignored, a bad canary promoted, a migration lock ignored), MAST (Cemri et al. 2025: FM-1.3 step repetition, FM-1.4
conversation lost between turns or at the handover, FM-2.2 no clarification, FM-2.6 reasoning-action mismatch, FM-3.1
premature termination, FM-3.2 no verification), TRAIL (a timeout or a 429 answered with an invented value, a tool
answering another record) and outside the model: the instructions rewritten without a rule, an old model configured,
a plans API's and a CI API's changed shape, a stale catalogue index. Ground truth is located on the recorded faulty
run by what its steps did.

How agentotel recorded the frameworks (not the detectors'): Agent Framework's runs per customer turn are one run's
model and tool steps (a tool's error an error step); the hand-built StateGraph's intake and buyer nodes are `invoke_agent
intake` / `invoke_agent buyer` steps under the graph's (the handover node, no model in it, is no step); the MCP tools
are one tool step per call_tool, a ToolError an error step; under OpenLLMetry the anthropic calls are llm steps, the
traceloop tool spans tool steps. Nothing recorded wrong was found: no tool step missing, no wrong parent.

Built and scored blind, once (dd3fdf1's detectors - main's HEAD when scored, the branch rebased onto it; the set's own
commits touch only tests; agentotel/analysis/ unread; load average 6.7 at the start, 7.7 at the end, other helpers
running; recording /tmp/h17-rec-yoqfjtxv): 30 pairs, 4 recorders (3 frameworks + an MCP client; one through the
collector under OpenLLMetry) - diff top-1 28/30, check step+layer 11/30, good runs with a warning 1/30. Check's hits
are the shapes it knows: instructions changed (2), tool output drift (2), history lost between turns, a tool
answering another deployment, a repeated write (2), a credit over the stated limit, a timeout followed by a claimed
unlock, a said-vs-done version. Its misses are the rules that gate a call on a value a record holds (verified false,
a balance and a date, status 'on_hold', a certificate's expiry, a freeze's scope, a canary's error rate, a lock's row
count, a budget's remaining), calls the rules ask for that never came (verify_pin, get_canary_metrics, a second quote,
a page, post_status claimed in the answer), a question the rules ask for (which line), an orchestration's handover
dropping the request, a stale index answering in the same shape, and figures said beside a call after a timeout.
Diff's two misses: a locator as arguable as the diff, and an old model the scripted anthropic server hides (it
answers as claude-sonnet-4-5 whatever was asked). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say each and why.

Session 25, after general fixes on the same recording (built while this set was measured blind on dd3fdf1): check
18/30, 1 good run warned. The lists below stay as measured blind.

Since (session 28, main f561b41's detectors; judged on the kept recording /tmp/h17-rec-4j3k8oe9, a re-recorded subset
holding tl-anthropic-release's 6 pairs only, so only those entries were judged; a fresh recording of the whole set in
the slow test finds nothing unlisted) DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS name what is missed now, each entry
with the reason written when it was listed: 1 DIFF_MISSED entry hit since and dropped (old_model_configured); 3
CHECK_MISSED entries hit since and dropped (canary_not_checked, no_post_status, old_model_configured). The other
recorders' entries, judged then on a fresh recording of the whole set, were all hit or quiet and are dropped too.
"""

from __future__ import annotations

import asyncio
import inspect
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

MODEL, CLAUDE, OLD_CLAUDE = "gpt-4o-mini", "claude-sonnet-4-5", "claude-3-haiku-20240307"
TELECOM, PROCURE, RELEASE = "tidewater-care", "harrow-procurement", "quillmark-release"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the carrier's world -------------------------------------------------------------------------------------------

_SIM_RULE = ("2. SIM swaps are the number one way accounts get hijacked. Do not call swap_sim unless the customer has "
             "given you their 4-digit account PIN in this chat and verify_pin came back with verified: true. After two "
             "PINs that don't match, stop - they'll need to visit a store with photo ID.")
_SIM_RULE_OLD = "2. Customers who lost a phone can have their number moved to a new SIM with swap_sim."


def telecom_instructions() -> str:
    sim = _SIM_RULE_OLD if Now.fault == "sim_rule_rewritten" else _SIM_RULE  # (a prompt rewrite dropped the PIN step)
    return "\n".join([
        "You're the chat agent for Tidewater Mobile. Be warm and brief. Today is Friday, December 4 2026.",
        "",
        "Ground rules:",
        "1. First thing in every chat: pull the account with get_account using the phone number the customer gives you.",
        sim,
        "3. Device unlocks (unlock_device) are only for phones that are fully paid off (balance_remaining of 0) on "
        "lines active for 60 days or more. If it isn't eligible yet, tell them when it will be.",
        "4. You may take up to $20 off a bill on your own with apply_credit. Anything bigger isn't yours to give - "
        "open a supervisor review with escalate_to_supervisor and tell the customer they'll hear back.",
        "5. If the account has more than one line, confirm which line before you change a plan on it.",
        "6. Systems time out sometimes. When one does, say so or try again - never make up a code, an order number or "
        "a date.",
    ])


DANA, ACCOUNT, PIN = "503-555-0148", "TW-8820417", "7703"
ICCID = "8901260882291043317"


def get_account(phone_number: str) -> dict[str, Any]:
    """The account a phone number belongs to: holder, status, lines (number, plan, activated on), autopay."""
    if re.sub(r"\D", "", phone_number)[-10:] != "5035550148":
        raise LookupError(f"no account for {phone_number}")
    lines = [{"number": DANA, "plan": "ESS-40", "activated_on": "2025-03-02", "user": "Dana Whitlock"}]
    if Now.pair == "which_line_unasked":  # (a family account: the daughter's line too)
        lines.append({"number": "503-555-0193", "plan": "ESS-40", "activated_on": "2026-01-15", "user": "Maya Whitlock"})
    return {"account_id": ACCOUNT, "holder": "Dana Whitlock", "status": "active", "lines": lines,
            "autopay": {"enabled": True, "method": "card ending 4402"}, "since": "2019-06-11"}


def verify_pin(account_id: str, pin: str) -> dict[str, Any]:
    """Checks the account PIN the customer gave; answers verified and the attempts left."""
    n = Now.count("verify_pin")
    return {"account_id": account_id, "verified": pin == PIN, "attempts_left": 0 if pin == PIN else max(0, 2 - n)}


def swap_sim(account_id: str, line: str, new_iccid: str) -> dict[str, Any]:
    """Moves a line's number onto a new SIM card (the old SIM stops working)."""
    return {"order_id": "SW-440912", "account_id": account_id, "line": line, "iccid": new_iccid,
            "status": "completed", "active_within_minutes": 15}


def get_device(account_id: str, line: str) -> dict[str, Any]:
    """The device on a line: model, IMEI, financing (balance remaining), the line's activation date, lock status."""
    young = Now.pair == "unlock_not_eligible"  # (a phone bought on an installment plan six weeks ago)
    return {"account_id": account_id, "line": line, "model": "Pixel 9", "imei": "356938035643809",
            "locked": True, "line_activated_on": "2026-10-24" if young else "2025-03-02",
            "financing": {"plan": "24-month installment", "balance_remaining": 212.40 if young else 0.0,
                          "next_payment": "2026-12-15" if young else None}}


def unlock_device(account_id: str, imei: str) -> dict[str, Any]:
    """Submits a device unlock; answers the unlock request and when it takes effect."""
    if Now.pair == "unlock_timeout_invented" and Now.count("unlock_device") == 1:
        raise TimeoutError("device unlock service did not respond within 30 s; nothing was submitted")
    return {"unlock_id": "UNL-206615", "imei": imei, "status": "approved", "effective": "within 2 hours"}


def get_bill(account_id: str, period: str) -> dict[str, Any]:
    """A bill: period, total, line items (line, description, amount), due date."""
    items = [{"line": DANA, "description": "Essential 15GB plan", "amount": 40.00},
             {"line": DANA, "description": "International roaming - Tijuana, MX (Nov 14-15)", "amount": 45.00},
             {"line": DANA, "description": "Taxes and fees", "amount": 6.35}]
    return {"account_id": account_id, "period": period, "due": "2026-12-12", "total": 91.35, "items": items}


def apply_credit(account_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Puts a goodwill credit on the account's next bill."""
    return {"credit_id": "CRD-77120", "account_id": account_id, "amount": amount, "applies_to": "2026-12 bill",
            "status": "posted"}


def escalate_to_supervisor(account_id: str, summary: str) -> dict[str, Any]:
    """Opens a supervisor review for something the agent may not decide alone."""
    return {"review_id": "SR-31874", "account_id": account_id, "queue": "billing-supervisors",
            "callback_within": "2 business days", "status": "open"}


_PLANS = [("TT-25", "Talk & Text", 25.00, 0), ("ESS-40", "Essential 15GB", 40.00, 0),
          ("UNL-55", "Unlimited", 55.00, 5), ("UNLP-70", "Unlimited Plus", 70.00, 30)]


def list_plans() -> dict[str, Any]:
    """The plans on sale: code, name, monthly price, hotspot allowance."""
    if Now.fault == "plans_shape_changed":  # the catalogue API's v2, rolled out under the chat unannounced
        return {"api_version": "2.0", "offers": [
            {"id": c, "title": n, "pricing": {"monthly": {"amount": f"{p:.2f}", "currency": "USD"}},
             "features": {"hotspot": {"gb": h}, "data": "unlimited" if h else "capped"}} for c, n, p, h in _PLANS]}
    return {"plans": [{"code": c, "name": n, "price_usd": p, "hotspot_gb": h} for c, n, p, h in _PLANS]}


def change_plan(account_id: str, line: str, plan_code: str, effective: str) -> dict[str, Any]:
    """Moves a line to another plan, 'today' or at the 'next_cycle'."""
    return {"change_id": "PC-58113", "account_id": account_id, "line": line, "plan_code": plan_code,
            "effective": "2026-12-04" if effective == "today" else "2026-12-19", "status": "scheduled"}


TELECOM_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_account, verify_pin, swap_sim, get_device, unlock_device, get_bill, apply_credit, escalate_to_supervisor,
    list_plans, change_plan)}

# ---- the procurement team's world ----------------------------------------------------------------------------------

INTAKE_RULES = "\n".join([
    "You handle intake for Harrow & Finch Hospitality's procurement desk. Staff send you what they need; you turn it "
    "into a brief for the buyer.",
    "Please keep to this:",
    "- Look up the cost centre's remaining budget (get_budget) before anything else. If the estimated total would take "
    "the centre past what it has left, the request goes back to the requester - it never reaches the buyer.",
    "- Price from our catalogue (search_catalog); don't invent SKUs.",
    "- When it's fine, pass it on with hand_to_buyer: SKU, quantity, estimated total, cost centre, candidate vendors.",
])
BUYER_RULES = ("You are the buyer on Harrow & Finch's procurement desk. We only buy from vendors whose status is "
               "'active' and whose certificate of insurance (coi_expires) is still current - check get_vendor first, "
               "and skip anyone else even if they are cheapest. Orders over $10,000 need quotes from two vendors, and "
               "the cheaper quote wins. Ship to the site and by the date the requester gave, not the vendor's defaults. "
               "Raise the order with create_po on a quote_id you actually received, once, then tell the requester with "
               "notify_requester.")

BUDGETS = {"CC-410": ("Leeds Riverside - rooms", 18500.00), "CC-233": ("Manchester Central - F&B", 9200.00)}


def get_budget(cost_center: str) -> dict[str, Any]:
    """A cost centre's budget for the quarter: allocated, committed, remaining."""
    if cost_center not in BUDGETS:
        raise LookupError(f"no cost centre {cost_center}")
    name, left = BUDGETS[cost_center]
    if Now.pair == "over_budget_briefed" and cost_center == "CC-410":
        left = 3150.00
    return {"cost_center": cost_center, "name": name, "quarter": "2026-Q4", "allocated": 40000.00,
            "committed": round(40000.00 - left, 2), "remaining": left, "currency": "USD"}


_CATALOG = [  # sku, name, unit price, vendors
    ("CH-220", "Ergo task chair, black mesh", 89.00, ["V-207", "V-118"]),
    ("LMP-31", "LED desk lamp, warm white", 24.50, ["V-118", "V-340"]),
    ("TWL-09", "Bath towel 70x140, white, 600gsm", 7.80, ["V-340", "V-512"]),
]


def search_catalog(query: str) -> dict[str, Any]:
    """Searches the procurement catalogue: items (sku, name, unit price, vendors) and the index's build date."""
    words = set(re.findall(r"[a-z]+", query.lower()))
    rows = [r for r in _CATALOG if words & set(re.findall(r"[a-z]+", r[1].lower()))] or _CATALOG
    built = "2026-11-28"
    if Now.fault == "catalog_index_stale":  # the search served its spring snapshot: the chair before its successor
        rows = [("CH-118", "Ergo task chair, black mesh (end of line)", 74.00, ["V-207", "V-118"]) if r[0] == "CH-220" else r
                for r in rows]
        built = "2026-03-14"
    return {"query": query, "index_built": built, "items": [
        {"sku": s, "name": n, "unit_price": p, "vendors": v} for s, n, p, v in rows]}


def hand_to_buyer(brief: str) -> dict[str, Any]:
    """Passes a checked request to the buyer, with a brief."""
    return {"handoff_id": "HO-6021", "status": "queued for buyer"}


VENDORS = {"V-207": ("Northgate Contract Seating", "active", "2027-05-31", 86.00),
           "V-118": ("Pennine Office Supply", "active", "2027-02-28", 91.50),
           "V-340": ("Calder Linen Co", "active", "2027-08-31", 7.20),
           "V-512": ("Aire Valley Textiles", "active", "2027-01-31", 7.65)}


def get_vendor(vendor_id: str) -> dict[str, Any]:
    """A vendor's record: name, status (active, on_hold), certificate of insurance expiry, payment terms, default
    ship-to."""
    name, status, coi, _ = VENDORS[vendor_id]
    if vendor_id == "V-207" and Now.pair == "vendor_on_hold":
        status = "on_hold"
    if vendor_id == "V-207" and Now.pair == "insurance_lapsed":
        coi = "2026-11-30"
    return {"vendor_id": vendor_id, "name": name, "status": status, "coi_expires": coi, "payment_terms": "net 30",
            **({"hold_reason": "duplicate invoices under review (AP-2291)"} if status == "on_hold" else {}),
            "default_ship_to": "Harrow & Finch HQ, 1 Piccadilly Place, Manchester M1 3BN"}


def request_quote(vendor_id: str, sku: str, quantity: int) -> dict[str, Any]:
    """A vendor's quote for a quantity of a catalogue item (valid 7 days)."""
    n = Now.count("request_quote")
    if Now.pair == "quote_rate_limited_invented" and n == 1:
        raise RuntimeError("429 Too Many Requests: vendor gateway rate limit, retry after 2 s")
    unit = VENDORS[vendor_id][3]
    return {"quote_id": f"QT-{51200 + n}", "vendor_id": vendor_id, "sku": sku, "quantity": quantity,
            "unit_price": unit, "total": round(unit * quantity, 2), "lead_time_days": 5, "valid_until": "2026-12-11"}


def create_po(vendor_id: str, quote_id: str, sku: str, quantity: int, ship_to: str, need_by: str,
              cost_center: str) -> dict[str, Any]:
    """Raises a purchase order on a vendor quote."""
    n = Now.count("create_po")
    return {"po_number": f"PO-{70310 + n}", "vendor_id": vendor_id, "quote_id": quote_id, "sku": sku,
            "quantity": quantity, "ship_to": ship_to, "need_by": need_by, "cost_center": cost_center, "status": "issued"}


def notify_requester(message: str) -> dict[str, Any]:
    """Messages the person who asked for the purchase."""
    return {"status": "sent", "message_id": "MSG-2207"}


INTAKE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_budget, search_catalog, hand_to_buyer)}
BUYER_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_vendor, request_quote, create_po,
                                                                     notify_requester)}

# ---- the release agent's world -------------------------------------------------------------------------------------

_CANARY_RULE = ("e) Production always goes canary first (deploy with strategy \"canary\"). Read get_canary_metrics for "
                "the canary; promote only when error_rate is below 1% and p95_ms below 400. Anything worse: rollback, "
                "with the numbers as the reason.")
_DEPLOY_RULE_OLD = "e) Deploy to production with deploy (strategy \"all-at-once\")."


def release_instructions() -> str:
    old = Now.fault == "release_rule_rewritten"  # (the agent still deployed with runbook rev 11)
    return "\n".join([
        "You are Quillmark's release agent. Engineers ask you to ship a service version to production; you do it by "
        "the runbook below and report back. Today is 2026-12-04.",
        "",
        f"Release runbook, rev {11 if old else 12}:",
        "a) Start with get_release for the service and version: the commit, the changes, any migrations.",
        "b) CI has to be green for that exact commit (get_ci_status). Failed or still running = we don't ship; tell the "
        "engineer which check failed.",
        "c) Check get_change_calendar for today. During a change freeze nothing goes to production, whoever asks.",
        "d) If the release carries a migration, dry-run it first (run_migration with dry_run true). If the dry run "
        "says it takes a lock on a table of more than 1M rows, stop and page the DBA on call (page_oncall, team "
        "\"dba\") - no deploy.",
        _DEPLOY_RULE_OLD if old else _CANARY_RULE,
        "f) Post the outcome to #releases with post_status. Errors and timeouts get reported as they are.",
    ])


def release_model() -> str:
    """The model the release agent's deployment is configured with (one fault's configuration pins an old one)."""
    return OLD_CLAUDE if Now.fault == "old_model_configured" else CLAUDE


RELEASES = {("ledger-api", "4.18.2"): ("9f3c2a1e7b", ["LEDG-812 faster balance lookups", "LEDG-820 fix rounding on "
                                                      "multi-currency refunds"], ["0142_index_entries_account_id"]),
            ("ledger-api", "4.18.1"): ("5d81b07c44", ["LEDG-799 retry idempotency keys"], []),
            ("notify-worker", "2.7.0"): ("c0ffee4411", ["NOTI-301 batch SMS sends", "NOTI-305 drop legacy templates"],
                                         [])}


def get_release(service: str, version: str) -> dict[str, Any]:
    """A release: the commit it was cut from, its changes, its database migrations."""
    if (service, version) not in RELEASES:
        raise LookupError(f"no release {service} {version}")
    commit, changes, migrations = RELEASES[(service, version)]
    return {"service": service, "version": version, "commit": commit, "cut": "2026-12-03T16:40:00Z",
            "changes": changes, "migrations": migrations, "previous": {"version": "4.18.1" if service == "ledger-api"
                                                                       else "2.6.3", "deployed": "2026-11-26"}}


def get_ci_status(commit: str) -> dict[str, Any]:
    """The CI pipeline of a commit: status (passed, failed, running) and its checks."""
    red = Now.pair in ("ci_red_deployed", "ci_shape_changed")
    checks = [("unit", "passed", 1412), ("integration", "failed" if red else "passed", 88), ("lint", "passed", 1)]
    if Now.fault == "ci_shape_changed":  # the CI provider's v2 API: a pipeline object, states not statuses
        return {"api": "v2", "pipeline": {"id": "PL-99120", "sha": commit, "state": "failure"}, "jobs": [
            {"name": n, "state": "failure" if s == "failed" else "success", "tests": c} for n, s, c in checks]}
    return {"commit": commit, "pipeline_id": "PL-99120", "status": "failed" if red else "passed", "checks": [
        {"name": n, "status": s, "tests": c, **({"failure": "test_refund_rounding_eur_jpy: expected 1200, got 1199"}
                                                 if s == "failed" else {})} for n, s, c in checks]}


def get_change_calendar(date: str) -> dict[str, Any]:
    """Change freezes and maintenance windows on a date."""
    freezes = [{"id": "FRZ-2026-YE", "name": "Year-end payments freeze", "from": "2026-12-01", "to": "2027-01-04",
                "scope": ["ledger-api", "payments-gateway"], "approver": "VP Engineering"}] \
        if Now.pair == "freeze_ignored" else []
    return {"date": date, "freezes": freezes, "maintenance_windows": [{"from": "22:00", "to": "23:00", "scope": ["db"]}]}


def run_migration(service: str, version: str, dry_run: bool) -> dict[str, Any]:
    """Runs (or dry-runs) a release's database migrations: statements, the locks they take, estimated time."""
    locking = Now.pair == "migration_lock_ignored"
    statement = ("CREATE INDEX entries_account_id_idx ON entries (account_id)" if locking
                 else "CREATE INDEX CONCURRENTLY entries_account_id_idx ON entries (account_id)")
    locks = [{"table": "entries", "mode": "SHARE", "rows": 48210553, "blocks_writes": True}] if locking else []
    return {"service": service, "version": version, "dry_run": dry_run, "statements": [statement], "locks": locks,
            "estimated_seconds": 1260 if locking else 95, "destructive": False}


def page_oncall(team: str, summary: str) -> dict[str, Any]:
    """Pages a team's on-call engineer."""
    return {"page_id": "PG-11842", "team": team, "oncall": "Rui Tavares", "status": "triggered"}


def deploy(service: str, version: str, environment: str, strategy: str) -> dict[str, Any]:
    """Starts a deployment of a version (strategy canary: 5% of traffic; all-at-once: everything)."""
    n = Now.count("deploy")
    return {"deployment_id": f"DEP-{40770 + n}", "service": service, "version": version, "environment": environment,
            "strategy": strategy, "traffic_percent": 5 if strategy == "canary" else 100, "status": "running"}


def get_canary_metrics(deployment_id: str) -> dict[str, Any]:
    """A canary's health over its first 10 minutes: error rate, p95 latency, requests served."""
    n = Now.count("get_canary_metrics")
    if Now.pair == "metrics_timeout_invented" and n == 1:
        raise TimeoutError("metrics backend query timed out after 15 s")
    bad = Now.pair in ("canary_bad_promoted", "metrics_other_deployment")
    if Now.fault == "metrics_other_deployment":  # the metrics API answers the last deployment it cached (another service's)
        return {"deployment_id": "DEP-40712", "service": "notify-worker", "window_minutes": 10, "requests": 88213,
                "error_rate": 0.0021, "p95_ms": 182}
    return {"deployment_id": deployment_id, "service": "ledger-api", "window_minutes": 10, "requests": 15402,
            "error_rate": 0.034 if bad else 0.0018, "p95_ms": 512 if bad else 231}


def promote(deployment_id: str) -> dict[str, Any]:
    """Sends all traffic to a canary deployment."""
    return {"deployment_id": deployment_id, "traffic_percent": 100, "status": "promoted"}


def rollback(deployment_id: str, reason: str) -> dict[str, Any]:
    """Takes a deployment out of traffic and back to the previous version."""
    return {"deployment_id": deployment_id, "status": "rolled_back", "serving": "previous version"}


def post_status(channel: str, message: str) -> dict[str, Any]:
    """Posts a message to a chat channel."""
    return {"channel": channel, "ts": "1796380212.004100", "status": "posted"}


RELEASE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_release, get_ci_status, get_change_calendar, run_migration, page_oncall, deploy, get_canary_metrics, promote,
    rollback, post_status)}

# ---- the requests and the simulated customer -----------------------------------------------------------------------

_DANA = f"Hi, this is Dana Whitlock, my number is {DANA}."
_SWAP = _DANA + f" My phone was stolen last night. I've got a new SIM card here, ICCID {ICCID} - can you move my number onto it?"
_UNLOCK = _DANA + " I'm off to Portugal next week - could you unlock my phone so I can use a local SIM there?"
_CREDIT = _DANA + (" My November bill has a $45 international roaming charge on it and I never left the country. "
                   "Can you take it off?")
_PLAN = _DANA + " Can you put the line on Unlimited Plus, starting today?"
_HOTSPOT = _DANA + " What's your cheapest plan that includes a mobile hotspot? Please move my line to it from the next bill."
TELECOM_HISTORY = [_HOTSPOT, _SWAP]
TELECOM_REQUESTS = {"sim_swap_unverified": _SWAP, "pin_failed_swapped": _SWAP, "context_lost_between_turns": _SWAP,
                    "sim_rule_rewritten": _SWAP, "unlock_not_eligible": _UNLOCK, "unlock_timeout_invented": _UNLOCK,
                    "credit_over_limit": _CREDIT, "which_line_unasked": _PLAN, "plans_shape_changed": _HOTSPOT}


def _replies() -> list[tuple[str, str]]:
    first = "It's 7730." if Now.pair == "pin_failed_swapped" else f"It's {PIN}."  # (a mistyped PIN, in both twins)
    return [("account PIN", first), ("try once more", f"Oh sorry - {PIN}."),
            ("Which line", "The one ending 0193, that's my daughter's."), ("anything else", "No, that's all - thanks!")]


_CHAIRS = ("Hi, Ellie Marsh, housekeeping manager at Leeds Riverside. We need 48 task chairs for the refurbished "
           "business centre - cost centre CC-410, please ship to Leeds Riverside Hotel, 3 Wharf Approach, Leeds LS1 "
           "4BR, needed by 2026-12-11.")
_BULK = ("Hi, Ellie Marsh at Leeds Riverside. We're refitting all the guest rooms: 120 task chairs please, cost centre "
         "CC-410, ship to Leeds Riverside Hotel, 3 Wharf Approach, Leeds LS1 4BR, needed by 2026-12-18.")
PROCURE_HISTORY = [("Hi, Tom Avery at Manchester Central. 200 bath towels please, cost centre CC-233, ship to "
                    "Manchester Central Hotel, 40 Portland St, Manchester M1 4GX, needed by 2026-12-10."),
                   ("Hi, Ellie Marsh at Leeds Riverside. 30 LED desk lamps please, cost centre CC-410, ship to Leeds "
                    "Riverside Hotel, 3 Wharf Approach, Leeds LS1 4BR, needed by 2026-12-14.")]
PROCURE_REQUESTS = {"single_quote_over_10k": _BULK}

RELEASE_REQUEST = "Ship ledger-api 4.18.2 to production, please."
RELEASE_HISTORY = ["Please release notify-worker 2.7.0 to prod.", "Ship ledger-api 4.18.1 to production."]


def user_replies(said: str) -> str | None:
    """What the customer answers to the agent's message `said`, or None: the chat is over."""
    return Now.reply(_replies(), said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "lg-procure":
        return PROCURE_REQUESTS.get(pair, _CHAIRS) if pair else PROCURE_HISTORY[v % 2]
    if Now.recorder in ("mcp-release", "tl-anthropic-release"):
        return RELEASE_REQUEST if pair else RELEASE_HISTORY[v % 2]
    return TELECOM_REQUESTS[pair] if pair else TELECOM_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    if "chat agent for Tidewater" in t.system and t.users:
        out = _telecom(t)
    elif "intake for Harrow" in t.system and t.users:
        out = _intake(t)
    elif "buyer on Harrow" in t.system and t.users:
        out = _buyer(t)
    elif "Quillmark's release agent" in t.system and t.users:
        out = _release(t, body.get("model") == OLD_CLAUDE)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = body.get("model") or MODEL  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _telecom(t: Talk) -> dict[str, Any]:
    first = t.users[0]
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome, Dana - take care!")
    phone = re.search(r"\b\d{3}-\d{3}-\d{4}\b", first)
    if not phone:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Sorry, I don't have the details in front of me - could you give me the phone number on the "
                     "account and tell me what you need?")
    step = t.need(("get_account", {"phone_number": phone.group(0)}))
    if step:
        return step
    account = t.value("get_account")
    if "stolen" in first:
        return _swap(t, account, first)
    if "unlock" in first:
        return _unlock(t, account)
    if "roaming" in first:
        return _credit(t, account)
    return _plan(t, account, first)


def _swap(t: Talk, account: dict[str, Any], first: str) -> dict[str, Any]:
    aid, fault = account["account_id"], Now.fault
    done = t.value("swap_sim")
    if done:
        return reply(f"Done - your number is on the new SIM (order {done['order_id']}); it'll be live within "
                     f"{done['active_within_minutes']} minutes and the old SIM no longer works." + _ANYTHING)
    swap = {"account_id": aid, "line": DANA, "new_iccid": re.search(r"ICCID (\d+)", first).group(1)}
    if "verify_pin" in t.system and fault != "sim_swap_unverified":
        checks = [v for _, v in t.got("verify_pin") if isinstance(v, dict)]
        if not any(c["verified"] for c in checks):
            tried = {a.get("pin") for a, _ in t.got("verify_pin")}
            said = [p for u in t.users[1:] for p in re.findall(r"\b(\d{4})\b", u) if p not in tried]
            if checks and fault == "pin_failed_swapped":  # (the fault: verify_pin's answer read as a yes)
                return call("swap_sim", "Thanks, that's verified - moving your number now.", **swap)
            if said:
                return call("verify_pin", account_id=aid, pin=said[-1])
            if len(checks) >= 2:
                return reply("I'm sorry, that PIN didn't match either, so I can't move the number over chat. Please "
                             "visit any Tidewater store with a photo ID and they'll do it on the spot." + _ANYTHING)
            if checks:
                return reply("Hmm, that PIN didn't match what we have. Could you try once more?")
            return reply("I'm sorry about your phone. Before I move your number I need to verify you: what's your "
                         "4-digit account PIN?")
    return call("swap_sim", **swap)


def _unlock(t: Talk, account: dict[str, Any]) -> dict[str, Any]:
    aid = account["account_id"]
    step = t.need(("get_device", {"account_id": aid, "line": DANA}))
    if step:
        return step
    device = t.value("get_device")
    done = t.value("unlock_device")
    if done:
        return reply(f"Your {device['model']} is unlocked (request {done['unlock_id']}, effective "
                     f"{done['effective']}). Pop the Portuguese SIM in and restart. Enjoy the trip!" + _ANYTHING)
    owed = device["financing"]["balance_remaining"]
    if owed > 0 and Now.fault != "unlock_not_eligible":
        return reply(f"I can't unlock it yet, sorry: the {device['model']} still has ${owed:.2f} left on its "
                     f"installment plan and the line was activated on {device['line_activated_on']}. Once it's paid "
                     "off and the line reaches 60 days (December 23), it qualifies - you can pay the balance early "
                     "in the app." + _ANYTHING)
    tried = t.got("unlock_device")
    if tried and Now.fault == "unlock_timeout_invented":  # (the fault: an unlock the service never answered)
        return reply(f"Your {device['model']} is unlocked (request UNL-206600, effective within 2 hours). Pop the "
                     "Portuguese SIM in and restart. Enjoy the trip!" + _ANYTHING)
    if len(tried) >= 2:
        return reply("The unlock system isn't responding right now, so nothing has been submitted yet. Please try "
                     "again later today." + _ANYTHING)
    return call("unlock_device", "The unlock system timed out - trying again." if tried else None, account_id=aid,
                imei=device["imei"])


def _credit(t: Talk, account: dict[str, Any]) -> dict[str, Any]:
    aid = account["account_id"]
    step = t.need(("get_bill", {"account_id": aid, "period": "2026-11"}))
    if step:
        return step
    charge = next(i for i in t.value("get_bill")["items"] if "roaming" in i["description"])
    credited, reviewed = t.value("apply_credit"), t.value("escalate_to_supervisor")
    if credited:
        return reply(f"I've taken it off: a ${credited['amount']:.2f} credit ({credited['credit_id']}) will show on "
                     f"your {credited['applies_to']}." + _ANYTHING)
    if reviewed:
        return reply(f"I can't remove a charge that size myself, so I've opened a supervisor review "
                     f"({reviewed['review_id']}); they'll get back to you within {reviewed['callback_within']}."
                     + _ANYTHING)
    if charge["amount"] <= 20 or Now.fault == "credit_over_limit":
        return call("apply_credit", account_id=aid, amount=charge["amount"],
                    reason=f"customer disputes {charge['description']}")
    return call("escalate_to_supervisor", account_id=aid,
                summary=f"Customer disputes ${charge['amount']:.2f} '{charge['description']}' on the 2026-11 bill; "
                        "says she never left the US.")


def _plans(listing: dict[str, Any]) -> list[dict[str, Any]]:
    """The plans as the model reads them: v1's fields; v2's offers read by the names it knows, no `hotspot_gb` read
    as no limit shown (the slip a changed shape invites)."""
    if "plans" in listing:
        return listing["plans"]
    return [{"code": o["id"], "name": o["title"], "price_usd": float(o["pricing"]["monthly"]["amount"]),
             "hotspot_gb": None} for o in listing["offers"]]


def _plan(t: Talk, account: dict[str, Any], first: str) -> dict[str, Any]:
    aid, lines = account["account_id"], account["lines"]
    said = " ".join(t.users[1:])  # (the first message names the caller's own number)
    named = next((ln["number"] for ln in lines if ln["number"][-4:] in said), None)
    if len(lines) > 1 and not named and Now.fault != "which_line_unasked":
        listed = " and ".join(f"{ln['number']} ({ln['user']})" for ln in lines)
        return reply(f"There are two lines on your account: {listed}. Which line should go on the new plan?")
    line = named or lines[0]["number"]  # (the fault: the first line taken, unasked)
    step = t.need(("list_plans", {}))
    if step:
        return step
    plans = _plans(t.value("list_plans"))
    if "hotspot" in first:
        chosen = min((p for p in plans if p["hotspot_gb"] is None or p["hotspot_gb"] > 0), key=lambda p: p["price_usd"])
    else:
        chosen = next(p for p in plans if p["name"] == "Unlimited Plus")
    done = t.value("change_plan")
    if not done:
        return call("change_plan", account_id=aid, line=line, plan_code=chosen["code"],
                    effective="today" if "today" in first else "next_cycle")
    return reply(f"All set: {done['line']} moves to {chosen['name']} (${chosen['price_usd']:.2f}/month) on "
                 f"{done['effective']}, change {done['change_id']}." + _ANYTHING)


def _intake(t: Talk) -> dict[str, Any]:
    ask = t.users[0]
    cc = re.search(r"\bCC-\d{3}\b", ask).group(0)
    qty, what = re.search(r"\b(\d+) (task chairs|bath towels|LED desk lamps)", ask).groups()
    step = t.need(("get_budget", {"cost_center": cc}), ("search_catalog", {"query": what}))
    if step:
        return step
    budget, items = t.value("get_budget"), t.value("search_catalog")["items"]
    item = items[0]
    total = round(int(qty) * item["unit_price"], 2)
    if t.value("hand_to_buyer"):
        return reply(f"Passed to the buyer: {qty} x {item['sku']} (est. ${total:,.2f}) on {cc}.")
    if total > budget["remaining"] and Now.fault != "over_budget_briefed":
        return reply(f"I can't pass this on: {qty} x {item['name']} comes to about ${total:,.2f}, and {cc} has "
                     f"${budget['remaining']:,.2f} left this quarter. Could you trim the order or get a budget "
                     "transfer approved first?")
    return call("hand_to_buyer", brief=f"{qty} x {item['sku']} ({item['name']}) at ${item['unit_price']:.2f}, est. "
                f"${total:,.2f}, cost centre {cc} (remaining ${budget['remaining']:,.2f}). Candidate vendors: "
                f"{', '.join(item['vendors'])}.")


def _buyer(t: Talk) -> dict[str, Any]:
    fault, said = Now.fault, t.users[0]
    qty, sku, cc = re.search(r"(\d+) x ([A-Z]+-\d+)", said).groups() + (re.search(r"CC-\d{3}", said).group(0),)
    vendors = re.search(r"Candidate vendors: ([^.]+)\.", said).group(1).split(", ")
    estimate = float(re.search(r"est\. \$([\d,.]+\d)", said).group(1).replace(",", ""))
    ship = re.search(r"ship to ([^,]+, [^,]+, \w+ \w+ \w+)", said)
    need = re.search(r"needed by (\d{4}-\d\d-\d\d)", said)
    usable = []
    for v in vendors:
        step = t.need(("get_vendor", {"vendor_id": v}))
        if step:
            return step
        rec = next(x for a, x in t.got("get_vendor") if a["vendor_id"] == v and isinstance(x, dict))
        if (rec["status"] == "active" and rec["coi_expires"] >= "2026-12-04") \
                or fault in ("vendor_on_hold", "insurance_lapsed"):
            usable.append(rec)
        if usable and (estimate <= 10000 or fault == "single_quote_over_10k"):
            break  # (one usable vendor is enough under $10,000)
    if not usable:
        return reply("None of the candidate vendors can take this order; please advise.")
    quotes = [v for _, v in t.got("request_quote") if isinstance(v, dict)]
    tried = t.got("request_quote")
    for rec in usable:
        if not any(q["vendor_id"] == rec["vendor_id"] for q in quotes):
            failed = [a for a, v in tried if a["vendor_id"] == rec["vendor_id"] and not isinstance(v, dict)]
            if failed and fault == "quote_rate_limited_invented":  # (the fault: a quote the gateway never gave)
                quotes.append({"quote_id": "QT-51199", "vendor_id": rec["vendor_id"], "total": None})
                break
            if len(failed) >= 2:
                return reply("The vendor gateway keeps rate-limiting us, so I have no quote yet; I'll retry later.")
            return call("request_quote", "Rate limited by the vendor gateway - waiting a moment and asking again."
                        if failed else None, vendor_id=rec["vendor_id"], sku=sku, quantity=int(qty))
    best = min(quotes, key=lambda q: q["total"] or 0)
    ship_to = ship.group(1) if ship else usable[0]["default_ship_to"]  # (no site in the brief: the vendor's default)
    need_by = need.group(1) if need else "2026-12-18"
    made = t.got("create_po")
    if not made or (fault == "po_repeated" and len(made) < 2):
        return call("create_po", "Raising the PO once more in case the first didn't go through." if made else None,
                    vendor_id=best["vendor_id"], quote_id=best["quote_id"], sku=sku, quantity=int(qty), ship_to=ship_to,
                    need_by=need_by, cost_center=cc)
    po = t.value("create_po")
    if not t.got("notify_requester"):
        return call("notify_requester", message=f"Your order is placed: {po['po_number']}, {qty} x {sku} from "
                    f"{best['vendor_id']}, delivering to {ship_to} by {need_by}.")
    return reply(f"Ordered: {po['po_number']} ({qty} x {sku}, {best['vendor_id']}, quote {best['quote_id']}), "
                 f"ship to {ship_to} by {need_by}; the requester has been told.")


def _ci(ci: dict[str, Any]) -> tuple[str, str]:
    """CI as the model reads it: the status and the first failure; v2's answer read by v1's names (no `status`: no
    failure seen - the slip a changed shape invites)."""
    failed = next((c for c in ci.get("checks", []) if c["status"] == "failed"), None)
    return ci.get("status", "passed"), (f"{failed['name']}: {failed['failure']}" if failed else "")


def _release(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    service, version = re.search(r"\b([a-z]+-[a-z]+) (\d+\.\d+\.\d+)", t.users[0]).groups()
    step = t.need(("get_release", {"service": service, "version": version}))
    if step:
        return step
    rel = t.value("get_release")
    step = t.need(("get_ci_status", {"commit": rel["commit"]}))
    if step:
        return step
    status, failure = _ci(t.value("get_ci_status"))
    if status != "passed" and fault != "ci_red_deployed":
        return reply(f"Not shipping {service} {version}: CI for {rel['commit']} is {status} ({failure}). Fix that and "
                     "ask me again.")
    step = t.need(("get_change_calendar", {"date": "2026-12-04"}))
    if step:
        return step
    freeze = next((f for f in t.value("get_change_calendar")["freezes"] if service in f["scope"]), None)
    if freeze and fault != "freeze_ignored":
        return reply(f"Not shipping {service} {version}: {freeze['name']} ({freeze['id']}) runs {freeze['from']} to "
                     f"{freeze['to']} and covers {service}. An exception needs {freeze['approver']}.")
    if rel["migrations"] and not old:
        step = t.need(("run_migration", {"service": service, "version": version, "dry_run": True}))
        if step:
            return step
        dry = t.value("run_migration")
        big = [lk for lk in dry["locks"] if lk["rows"] > 1_000_000]
        if big and fault != "migration_lock_ignored":
            paged = t.value("page_oncall")
            if not paged:
                return call("page_oncall", team="dba", summary=f"{service} {version} migration {rel['migrations'][0]} "
                            f"takes a {big[0]['mode']} lock on {big[0]['table']} ({big[0]['rows']:,} rows, est. "
                            f"{dry['estimated_seconds']} s). Deploy on hold.")
            return reply(f"Stopped before deploying {service} {version}: the dry run of {rel['migrations'][0]} locks "
                         f"{big[0]['table']} ({big[0]['rows']:,} rows). I paged the DBA on call, {paged['oncall']} "
                         f"({paged['page_id']}).")
    canary = "strategy \"canary\"" in t.system
    deployed = t.got("deploy")
    target = "4.18.1" if fault == "wrong_version_deployed" else version  # (the fault: the previous version's number)
    if not deployed or (fault == "deploy_repeated" and len(deployed) < 2):
        say = (f"Deploying {service} {version} to production as a canary." if not deployed
               else "Let me trigger the deploy again to be safe.")
        return call("deploy", say, service=service, version=target, environment="production",
                    strategy="canary" if canary else "all-at-once")
    dep = t.value("deploy")
    outcome = t.value("promote") or t.value("rollback")
    if canary and not outcome:
        metrics = t.value("get_canary_metrics")
        tried = t.got("get_canary_metrics")
        if not metrics and fault != "canary_not_checked":
            if tried and fault == "metrics_timeout_invented":  # (the fault: numbers nobody measured)
                metrics = {"error_rate": 0.004, "p95_ms": 240}
            elif len(tried) >= 2:
                return reply(f"{dep['deployment_id']} is running as a canary but the metrics backend keeps timing "
                             "out; I haven't promoted it. Please check the dashboard.")
            else:
                return call("get_canary_metrics", "The metrics query timed out; asking again." if tried else None,
                            deployment_id=dep["deployment_id"])
        metrics = metrics or {"error_rate": 0.0, "p95_ms": 0}
        if (metrics["error_rate"] < 0.01 and metrics["p95_ms"] < 400) or fault == "canary_bad_promoted":
            return call("promote", f"Canary healthy ({metrics['error_rate']:.2%} errors, p95 {metrics['p95_ms']} ms); "
                        "promoting.", deployment_id=dep["deployment_id"])
        return call("rollback", deployment_id=dep["deployment_id"],
                    reason=f"canary error_rate {metrics['error_rate']:.2%}, p95 {metrics['p95_ms']} ms")
    result = "rolled back" if t.value("rollback") else "live at 100%"
    note = f"{service} {version} ({rel['commit']}) {result} - {dep['deployment_id']}."
    if not t.got("post_status") and fault != "no_post_status":
        return call("post_status", channel="#releases", message=note)
    return reply(f"{note} Posted to #releases.")


# ---- recorders -----------------------------------------------------------------------------------------------------


class MafTelecom(kit.AgentotelRecorder):
    """The carrier's chat agent on Microsoft Agent Framework (its chat completions client; its own telemetry on, with
    the messages), one `run` per customer turn in one AgentSession, under agentotel. The faulty app starts a new
    session for each turn (its session store lost the chat)."""

    agent = TELECOM

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)

    def body(self, task: str) -> str:
        from agent_framework import Agent, tool as af_tool
        from agent_framework.openai import OpenAIChatCompletionClient

        client = OpenAIChatCompletionClient(MODEL, api_key="sk-test", base_url=self.url)
        client.function_invocation_configuration["include_detailed_errors"] = True
        tools = [af_tool(name=name, description=inspect.getdoc(f))(_as_text(f)) for name, f in TELECOM_TOOLS.items()]
        agent = Agent(client=client, name=TELECOM, instructions=telecom_instructions(), tools=tools)

        async def chat() -> str:
            session, said = agent.create_session(), task
            while True:
                text = (await agent.run(said, session=session)).text
                follow = user_replies(text)
                if follow is None:
                    return text
                if Now.fault == "context_lost_between_turns":
                    session = agent.create_session()
                said = follow

        return asyncio.run(chat())


def _procurement_graph(url: str) -> Any:
    """Intake and buyer as two tool-calling nodes of one StateGraph, each with its own message list; the handover node
    gives the buyer the requester's message and the intake's brief."""
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode

    # (the functional form: this module's postponed annotations would leave a class body's hints unresolvable)
    Desk = TypedDict("Desk", {"intake": Annotated[list[Any], add_messages], "buyer": Annotated[list[Any], add_messages]})

    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url, max_retries=0)
    intake_tools = [tool(_as_text(f)) for f in INTAKE_TOOLS.values()]
    buyer_tools = [tool(_as_text(f)) for f in BUYER_TOOLS.values()]
    intake_llm, buyer_llm = llm.bind_tools(intake_tools), llm.bind_tools(buyer_tools)

    def intake(state) -> dict[str, Any]:
        return {"intake": [intake_llm.invoke([SystemMessage(INTAKE_RULES), *state["intake"]])]}

    def buyer(state) -> dict[str, Any]:
        return {"buyer": [buyer_llm.invoke([SystemMessage(BUYER_RULES), *state["buyer"]])]}

    def handover(state) -> dict[str, Any]:
        asked = next(m for m in reversed(state["intake"]) if isinstance(m, AIMessage) and m.tool_calls)
        brief = next(c["args"]["brief"] for c in asked.tool_calls if c["name"] == "hand_to_buyer")
        if Now.fault == "handover_drops_request":  # the app's handover passes the brief alone
            return {"buyer": [HumanMessage(f"Brief from intake: {brief}")]}
        return {"buyer": [HumanMessage(f"Request from {state['intake'][0].content}\n\nBrief from intake: {brief}")]}

    def calls(key: str, tools_node: str) -> Callable[..., str]:
        def route(state) -> str:
            last = state[key][-1]
            return tools_node if isinstance(last, AIMessage) and last.tool_calls else END
        return route

    def after_intake_tools(state) -> str:
        asked = next(m for m in reversed(state["intake"]) if isinstance(m, AIMessage))
        return "handover" if any(c["name"] == "hand_to_buyer" for c in asked.tool_calls) else "intake"

    graph = StateGraph(Desk)
    graph.add_node("intake", intake)
    graph.add_node("intake_tools", ToolNode(intake_tools, messages_key="intake", handle_tool_errors=True))
    graph.add_node("handover", handover)
    graph.add_node("buyer", buyer)
    graph.add_node("buyer_tools", ToolNode(buyer_tools, messages_key="buyer", handle_tool_errors=True))
    graph.add_edge(START, "intake")
    graph.add_conditional_edges("intake", calls("intake", "intake_tools"), ["intake_tools", END])
    graph.add_conditional_edges("intake_tools", after_intake_tools, ["handover", "intake"])
    graph.add_edge("handover", "buyer")
    graph.add_conditional_edges("buyer", calls("buyer", "buyer_tools"), ["buyer_tools", END])
    graph.add_edge("buyer_tools", "buyer")
    return graph.compile(name=PROCURE)


class LangGraphProcure(kit.AgentotelRecorder):
    """The procurement desk as a hand-built LangGraph StateGraph under agentotel (its langchain integration)."""

    agent = PROCURE

    def body(self, task: str) -> str:
        out = _procurement_graph(self.url).invoke({"intake": [("user", task)], "buyer": []}, {"recursion_limit": 60})
        return str((out["buyer"] or out["intake"])[-1].content)


class McpRelease(kit.AgentotelRecorder):
    """The release agent as a plain openai SDK loop whose tools are an MCP server's (in process), each call through the
    MCP client's session, under agentotel."""

    agent = RELEASE

    def body(self, task: str) -> str:
        return asyncio.run(self._turns(task))

    async def _turns(self, task: str) -> str:
        import openai
        from mcp import Client

        llm = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        async with Client(kit.mcp_server("quillmark-deploy", RELEASE_TOOLS)) as client:
            offered = [{"type": "function", "function": {"name": x.name, "description": x.description or "",
                                                         "parameters": x.input_schema}}
                       for x in (await client.session.list_tools()).tools]
            messages: list[dict[str, Any]] = [{"role": "system", "content": release_instructions()},
                                              {"role": "user", "content": task}]
            for _ in range(24):
                said = (await llm.chat.completions.create(model=MODEL, messages=messages, tools=offered)).choices[0].message
                messages.append(said.model_dump(exclude_none=True))
                if not said.tool_calls:
                    return said.content or ""
                for c in said.tool_calls:
                    got = await client.session.call_tool(c.function.name, json.loads(c.function.arguments))
                    text = " ".join(x.text for x in got.content if hasattr(x, "text"))
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
        return "I could not finish."


class TlAnthropicRelease(kit.TraceloopRecorder):
    """The release agent as a plain anthropic SDK loop under OpenLLMetry's anthropic instrumentation, the tools
    traceloop tool spans, through agentotel-collector."""

    agent = RELEASE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(AnthropicInstrumentor(), RELEASE_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, release_model(), release_instructions(), task, self.tools,
                                  declared(RELEASE_TOOLS))


RECORDERS: dict[str, Any] = {"maf-telecom": MafTelecom, "lg-procure": LangGraphProcure, "mcp-release": McpRelease,
                             "tl-anthropic-release": TlAnthropicRelease}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, asking, nth_llm, second_answer, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None]]] = {
        # fault: layer, source, where its cause shows
        "sim_swap_unverified": ("model", f"{tau} (no SIM swap without a verified PIN) / {mast} FM-3.2 No verification: "
                                         "swap_sim straight after get_account; the twin asks for the PIN",
                                asking("swap_sim")),
        "pin_failed_swapped": ("model", f"{trail} wrong tool output interpretation: verify_pin answered verified false "
                                        "and the number was swapped; the twin asks once more", asking("swap_sim")),
        "context_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app starts a new "
                                                 "session for the customer's second turn; the agent asks who she is",
                                       second_answer),
        "sim_rule_rewritten": ("prompt", "instructions changed: the ground rules rewritten without the PIN step; the "
                                         "number swapped unverified", nth_llm(0)),
        "unlock_not_eligible": ("model", f"{tau} (paid off and 60 days active) / {mast} FM-1.1: unlock_device with "
                                         "$212.40 owed on a line 41 days old; the twin refuses and says when",
                                asking("unlock_device")),
        "unlock_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: unlock_device timed out, the "
                                             "customer told 'unlocked (request UNL-206600)'; the twin (a retry done "
                                             "right) asks again", after(tool_step("unlock_device"))),
        "credit_over_limit": ("model", f"{tau} (up to $20 alone, more to a supervisor): a $45 credit applied; the twin "
                                       "opens a supervisor review", asking("apply_credit")),
        "which_line_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two lines, the first moved to "
                                        "Unlimited Plus unasked; the twin asks which", after(tool_step("get_account"))),
        "plans_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: list_plans answers API v2 (offers, "
                                        "pricing, features.hotspot); read by the old names, Talk & Text (no hotspot) "
                                        "chosen", tool_step("list_plans")),
        "over_budget_briefed": ("model", f"{tau} (past the remaining budget, back to the requester): $4,272 briefed "
                                         "against $3,150 left on CC-410; the twin sends it back",
                                asking("hand_to_buyer")),
        "vendor_on_hold": ("model", f"{tau} (only active vendors) / {trail} wrong tool output interpretation: V-207 "
                                    "'on_hold' quoted and ordered from; the twin moves to V-118", asking("request_quote")),
        "insurance_lapsed": ("model", f"{tau} (a current insurance certificate) / {mast} FM-1.1: V-207's coi_expires "
                                      "2026-11-30, ordered from on 2026-12-04; the twin moves to V-118",
                             asking("request_quote")),
        "single_quote_over_10k": ("model", f"{tau} (two quotes over $10,000) / {mast} FM-3.2: a $10,320 order on one "
                                           "quote; the twin asks V-118 too", asking("create_po")),
        "quote_rate_limited_invented": ("model", f"{trail} rate limits / hallucinated tool output: request_quote "
                                                 "answered 429, the PO raised on a made-up QT-51199; the twin asks "
                                                 "again", after(tool_step("request_quote"))),
        "handover_drops_request": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handover: the buyer "
                                             "handed the brief alone; the PO ships to the vendor's default (HQ) by a "
                                             "date nobody gave", after(tool_step("hand_to_buyer"))),
        "catalog_index_stale": ("tool", "retrieval index stale: search_catalog served its 2026-03-14 snapshot "
                                        "(CH-118, end of line, $74); the end-of-line chair ordered",
                                tool_step("search_catalog")),
        "po_repeated": ("model", f"{mast} FM-1.3 Step repetition: create_po asked again after PO-70311 was issued",
                        asking("create_po", 1)),
        "ci_red_deployed": ("model", f"{tau} (green CI on the exact commit) / {trail} wrong tool output interpretation: "
                                     "integration failed and the release went on; the twin stops",
                            after(tool_step("get_ci_status"))),
        "freeze_ignored": ("model", f"{tau} (nothing during a freeze) / {mast} FM-1.1: the year-end freeze covers "
                                    "ledger-api, the release went on; the twin stops", after(tool_step("get_change_calendar"))),
        "canary_bad_promoted": ("model", f"{tau} (promote under 1% errors and 400 ms) / {trail} wrong tool output "
                                         "interpretation: 3.40% errors, p95 512 ms, promoted; the twin rolls back",
                                asking("promote")),
        "metrics_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: get_canary_metrics timed "
                                              "out, 'Canary healthy (0.40% errors, p95 240 ms)' promoted; the twin asks "
                                              "again", after(tool_step("get_canary_metrics"))),
        "migration_lock_ignored": ("model", f"{tau} (a lock on >1M rows pages the DBA, no deploy) / {mast} FM-1.1: the "
                                            "dry run locks entries (48M rows), deployed anyway; the twin pages",
                                   after(tool_step("run_migration"))),
        "release_rule_rewritten": ("prompt", "instructions changed: the agent still deployed with runbook rev 11 "
                                             "(all-at-once, no canary); production changed in one go", nth_llm(0)),
        "ci_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_ci_status answers the CI "
                                     "provider's v2 (pipeline.state 'failure', jobs); read by v1's names, no failure "
                                     "seen, red CI shipped", tool_step("get_ci_status")),
        "no_post_status": ("model", f"{mast} FM-3.1 Premature termination: promoted, the answer says 'Posted to "
                                    "#releases', post_status never called", after(tool_step("promote"))),
        "deploy_repeated": ("model", f"{mast} FM-1.3 Step repetition: deploy asked again after DEP-40771 started",
                            asking("deploy", 1)),
        "wrong_version_deployed": ("model", f"{mast} FM-2.6 Reasoning-action mismatch: 'Deploying ledger-api 4.18.2' "
                                            "with deploy(version='4.18.1')", asking("deploy")),
        "canary_not_checked": ("model", f"{mast} FM-3.2 No verification: the canary promoted with no "
                                        "get_canary_metrics", after(tool_step("deploy"))),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_CLAUDE}), which "
                                            "deploys a release with a migration without the dry run", nth_llm(0)),
        "metrics_other_deployment": ("tool", f"{trail} API issues: get_canary_metrics(DEP-40771) answers DEP-40712, "
                                             "notify-worker's healthy canary; the failing ledger-api canary promoted",
                                     tool_step("get_canary_metrics")),
    }
    chosen = {
        "maf-telecom": ["sim_swap_unverified", "pin_failed_swapped", "context_lost_between_turns", "sim_rule_rewritten",
                        "unlock_not_eligible", "unlock_timeout_invented", "credit_over_limit", "which_line_unasked",
                        "plans_shape_changed"],
        "lg-procure": ["over_budget_briefed", "vendor_on_hold", "insurance_lapsed", "single_quote_over_10k",
                       "quote_rate_limited_invented", "handover_drops_request", "catalog_index_stale", "po_repeated"],
        "mcp-release": ["ci_red_deployed", "freeze_ignored", "canary_bad_promoted", "metrics_timeout_invented",
                        "migration_lock_ignored", "release_rule_rewritten", "ci_shape_changed"],
        "tl-anthropic-release": ["no_post_status", "deploy_repeated", "wrong_version_deployed", "canary_not_checked",
                                 "old_model_configured", "metrics_other_deployment"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (dd3fdf1's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 6.7-7.7): 30 pairs, 4 recorders - diff top-1 28/30, check step+layer 11/30,
# good runs warned 1/30 (recording /tmp/h17-rec-yoqfjtxv).
DIFF_MISSED: dict[str, str] = {
    "model-lg-procure-single-quote-over-10k": ("step_removed@12 (the twin's get_vendor(V-118)), where the truth set "
                                               "before scoring is the create_po @14 the second quote should have "
                                               "preceded; 12 is where the faulty buyer stopped looking for a second "
                                               "vendor, so the locator is as arguable as the diff"),
}
# (session 28) Every entry the blind run listed for maf-telecom, lg-procure and mcp-release is hit now, and the one
# false alarm (over_budget_briefed's ungrounded $4,272.00, 48 x $89.00) is quiet: checked on a fresh recording of the
# whole set (the kept one holds tl-anthropic-release's pairs only).
CHECK_MISSED: dict[str, str] = {}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "maf-telecom": {"required_before": {"swap_sim": ["get_account"], "unlock_device": ["get_device"],
                                        "apply_credit": ["get_bill"], "change_plan": ["list_plans"]}},
    "lg-procure": {"required_before": {"hand_to_buyer": ["get_budget"], "create_po": ["get_vendor", "request_quote"]}},
    "mcp-release": {"required_before": {"deploy": ["get_ci_status", "get_change_calendar"]}},
    "tl-anthropic-release": {"required_before": {"deploy": ["get_ci_status", "get_change_calendar"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h17-rec-", pairs, produce, kit.through_collector("tl-anthropic-release"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
