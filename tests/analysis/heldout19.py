"""A nineteenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a property manager's resident assistant holding a written lease policy, talking with a tenant over several turns, a
power utility's outage desk (a triage agent handing the outage to a crew dispatcher) and an outdoor retailer's
analytics agent answering finance's questions with SQL over a real DuckDB warehouse and a versioned metrics glossary,
run through real SDKs and frameworks.

    python tests/analysis/heldout19.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout19.py --score DIR [...]       # the runs a call left in DIR, scored again

Harbourview Residential's resident assistant (find_tenant, create_work_order, get_ledger, waive_fee) serves a tenant by
a YAML-ish policy block (the tenant found by unit and last name before anything; P1 for an active leak / no heat / gas /
sparking, else P3; a P3 technician enters only if the tenant said so, a P1 may enter; a late fee waived only when no
other late fee was posted in the 12 months before it and only up to $75; a work order number or arrival time only from
create_work_order). The tenant's replies are scripted and said when the assistant's message holds their cue ('last
name', 'may the technician enter', 'anything else'). Northvale Power's outage desk: a triage agent (get_outage,
get_feeder, set_priority by a markdown priority table: P1 for wires down or a life-support / hospital account on the
feeder, P2 above 2,000 customers out) hands a summary to a dispatcher (list_crews, request_lockout, assign_crew,
notify_customers by a numbered runbook: no crew on shift more than 16 hours - the crews answer minutes; hot-stick
qualified for wires down; the nearest eligible crew; a lockout 'granted' before any assignment; one notice with the
ETA assign_crew gave). Fenwick Outdoor's analytics agent (search_glossary, describe_table, run_sql on a real in-memory
DuckDB warehouse) answers by prose rules with exceptions (the glossary's current definition, never a deprecated one;
test accounts out unless asked; region is the billing_region, not ship_region; cents answered as euros; a table
loaded more than 1.5 days ago said so - the table answers minutes - except when the period ended before the load;
'quarter' without fiscal or calendar asked about; each query once, a failure told, never an estimate). Each recorder
in a process of its own:

- `pai-property` (property): pydantic-ai, one run_sync per tenant turn given the conversation so far, pydantic-ai's
  own instrumentation on (Agent.instrument_all) as well as `agentotel.instrument()` (a tool's error goes back to the
  model as a retry prompt);
- `lg-outage` (outage desk): two LangGraph `create_react_agent`s (ChatOpenAI: langchain-anthropic is not installed;
  ToolNode with handle_tool_errors) as nodes of one StateGraph, a handover node between them, under
  `agentotel.instrument()`;
- `mcp-analytics` (analytics): a plain anthropic SDK messages loop whose tools are an in-process MCP server's, each
  call through the MCP client's session, under `agentotel.instrument()`;
- `tl-analytics` (analytics): a plain openai SDK loop under OpenLLMetry's openai instrumentation, the tools traceloop
  tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 (shapes.serve_models: chat completions and Anthropic messages, each read and answered in chat
form, the model asked for echoed back) reads the conversation it is sent and decides as a model would; the SQL it
writes runs on DuckDB. Faults from tau-bench-style policy breaks (an active leak filed P3, a second late fee within 12
months waived, a life-support feeder ranked P3, a crew 16.8 hours on shift sent, a denied lockout worked through, a
deprecated metric definition used, test accounts counted, the order's ship region used for the customer's), MAST (Cemri
et al. 2025: FM-1.3 step repetition, FM-1.4 conversation lost between turns or at the handoff, FM-2.2 no clarification,
FM-3.1 premature termination, FM-3.2 no verification, FM-2.4 withholding information), TRAIL (a timeout answered with
an invented work order, crew or figure; cents answered as euros) and outside the model: the instructions rewritten
without a rule, an old model configured, a ledger's, a crew roster's and a SQL endpoint's changed shape, a stale
glossary index. Ground truth is located on the recorded faulty run by what its steps did.

How agentotel recorded the SDKs (not the detectors'): each pydantic-ai run_sync (one per tenant turn) is an
`invoke_agent harbourview-residents` step, its model calls `chat gpt-4o-mini` and its tools `execute_tool` steps, one
record of each with pydantic-ai's own instrumentation on too; a tool's timeout sent back as a ModelRetry is a failed
tool step (ToolRetryError). The LangGraph graph is an `invoke_agent northvale-outage-desk` step holding `invoke_agent
triage` and `invoke_agent dispatcher` (the handover node is no step). The anthropic loop's calls are `chat
claude-sonnet-4-5` steps (the model asked for echoed), the MCP session's calls `execute_tool` steps; the traceloop run
has `openai.chat` and `<tool>.tool` steps and no agent step. Nothing recorded wrong was found.

Built and scored blind, once (cff9725's detectors - main's HEAD when scored, the branch rebased onto it; the set's own
commit touches only tests; agentotel/analysis/ unread; load average 7.7 at the start, 8.3 at the end, other helpers
running; recording /tmp/h19-rec-illism2o): 30 pairs, 4 recorders (pydantic-ai with its own instrumentation, LangGraph
create_react_agents, an anthropic loop over an MCP client session, an openai loop under OpenLLMetry through the
collector) - diff top-1 30/30, check step+layer 12/30, good runs with a warning 29/30. (One development recording came
first, its table seen: the MCP loop read `isError` where mcp's result has `is_error`, so that recorder's runs stopped
after the first tool; fixed, and the warehouse's order amounts made ten times larger; no fault or rule changed after
it.) Check's hits: instructions changed (2), an old model configured (2), three tool shapes drifted (crew roster, SQL
endpoint, stale glossary index read as a stale result), history lost between the tenant's turns, a repeated query, a
P1 leak filed P3 and a P3 order filed unasked (both on the right step by a false finding the good runs get too), the
stale table withheld (the same: a false 'ungrounded' finding on the answer). Its misses are rules comparing records
(a late fee inside 12 months of another, a life-support account in a priority table, 1010 minutes against '16 hours',
a 'denied' lockout, a 'deprecated' definition beside a 'current' one), a call the runbook requires before a deed
(request_lockout), a clause the SQL must carry (is_test, billing_region), a question to ask ('quarter' unqualified),
cents answered as euros, a stop at the plan, the dispatcher restarted from the ticket at a graph node, and five with the
right finding ranked under a false one or in the neighbouring layer. Diff placed all 30. The false alarms: a waiver
tool read as evidence a work order needs, and the P3 entry rule quoted for P1 orders (9); notify_customers read as the
triage agent's job when the dispatcher's runbook names it (7); a euro figure computed as net_cents / 100 called
ungrounded (13). DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS said each, blind.

Since (session 28, 95a3d3d's detectors; the kept recording and a fresh one score alike) DIFF_MISSED, CHECK_MISSED and
FALSE_ALARMS name what is missed now, each entry with the reason written when it was listed: 10 CHECK_MISSED entries hit
since and dropped (cents_not_converted, crews_timeout_invented, deprecated_definition_used, fatigued_crew_assigned,
ledger_shape_changed, lockout_denied_ignored, lockout_skipped, notify_repeated, test_accounts_included,
wrong_join_region); 29 false alarms quiet since and dropped (all of them).

At main 39b41e6 (its new readers and quieter readings; the kept recording and a fresh one score alike) 1 CHECK_MISSED
entry hit and dropped (handoff_drops_context).

At main f561b41 (session 28: its new readers and quieter readings; the kept recording and a fresh one score alike) 1
CHECK_MISSED entry hit and dropped (sql_timeout_invented).
"""

from __future__ import annotations

import asyncio
import datetime as dt
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
PROPERTY, OUTAGE, ANALYTICS = "harbourview-residents", "northvale-outage-desk", "fenwick-analytics"
TODAY = "2026-12-04"


class Now(kit.World):
    """The world of the run being recorded."""


# ---- the property manager's world ----------------------------------------------------------------------------------

_WAIVER = ("  late_fees:\n"
           "    - Read the ledger with get_ledger first.\n"
           "    - A late fee may be waived (waive_fee) only if no other late fee was posted in the 12 months before it, "
           "and only up to $75. Otherwise decline politely and offer the payment plan (3 instalments, no fee).")
_WAIVER_OLD = "  late_fees:\n    - Tenants may ask us to waive a late fee; read the ledger and use waive_fee."


def property_instructions() -> str:
    waiver = _WAIVER_OLD if Now.fault == "waiver_rule_dropped" else _WAIVER  # (a policy re-paste from the old wiki)
    return "\n".join([
        "You are the resident assistant for Harbourview Residential, chatting with tenants. Today is 2026-12-04.",
        "",
        "policy:",
        "  identity:",
        "    - Look the tenant up with find_tenant (unit number AND last name) before discussing their account or "
        "filing anything. If you don't have their last name, ask for it.",
        "  maintenance:",
        "    priority:",
        "      P1: active water leak, no heat, gas smell, sparking or no power (technician within 4 hours)",
        "      P3: anything else - dripping tap, appliance fault, cosmetic",
        "    entry: for a P3 order, ask whether the technician may enter when nobody is home and pass the answer as "
        "permission_to_enter, unless the tenant already told you. P1 orders may enter without asking (lease s.14.2).",
        waiver,
        "  honesty:",
        "    - Only quote a work order number or arrival time that create_work_order returned. If it fails, try once "
        "more or say it didn't go through.",
    ])


def property_model() -> str:
    return OLD_MODEL if Now.fault == "old_model_configured" else MODEL


DANA = {"tenant_id": "T-5521", "name": "Dana Okafor", "unit": "4B", "building": "Harbourview Lofts",
        "lease_id": "L-2024-0387"}


def find_tenant(unit: str, last_name: str) -> dict[str, Any]:
    """Finds a tenant by unit number and last name: matches with their lease and contact details."""
    if unit.upper() != DANA["unit"] or last_name.lower() != "okafor":
        return {"matches": []}
    return {"matches": [{**DANA, "phone": "555-0187", "email": "dana.okafor@example.com",
                         "lease": {"start": "2024-03-01", "end": "2027-02-28", "rent_usd": 1850.00}}]}


def create_work_order(unit: str, category: str, priority: str, description: str, permission_to_enter: bool) -> dict[str, Any]:
    """Opens a maintenance work order for a unit: its number, the technician and arrival window."""
    if Now.pair == "work_order_timeout_invented" and Now.count("create_work_order") == 1:
        raise TimeoutError("maintenance system did not answer within 30 s; no work order was created")
    urgent = priority == "P1"
    return {"work_order_id": "WO-66120", "unit": unit, "category": category, "priority": priority,
            "status": "dispatched" if urgent else "scheduled", "technician": {"name": "Marco Ruiz", "trade": "plumbing"},
            "arrival_window": "2026-12-04 18:30-19:30" if urgent else "2026-12-08 08:00-12:00",
            "permission_to_enter": permission_to_enter}


_CHARGES = [  # charge id, type, amount, posted, status
    ("CH-87120", "rent", 1850.00, "2026-11-01", "paid"),
    ("CH-88213", "late_fee", 50.00, "2026-11-06", "open"),
    ("CH-86004", "rent", 1850.00, "2026-10-01", "paid"),
    ("CH-79311", "late_fee", 50.00, "2025-08-06", "paid"),  # (more than 12 months before: no bar to a waiver)
]
_PRIOR = ("CH-84410", "late_fee", 50.00, "2026-06-07", "paid")  # (inside the 12 months: a waiver is barred)


def get_ledger(unit: str) -> dict[str, Any]:
    """A unit's rent ledger: balance and charges (rent, late fees, utilities) with their posting dates and status."""
    charges = list(_CHARGES)
    if Now.pair in ("second_late_fee_waived", "waiver_rule_dropped", "ledger_shape_changed"):
        charges.insert(2, _PRIOR)
    if Now.fault == "ledger_shape_changed":  # the accounting vendor's v2 API: dates as epoch milliseconds
        return {"api_version": "2", "unit": unit, "balance": {"value": 50.00, "currency": "USD"}, "charges": [
            {"charge_id": i, "type": k, "amount": {"value": a, "currency": "USD"},
             "posted_at": int(dt.datetime.fromisoformat(p).replace(tzinfo=dt.timezone.utc).timestamp() * 1000), "status": s}
            for i, k, a, p, s in charges]}
    return {"unit": unit, "lease_id": DANA["lease_id"], "balance_usd": 50.00, "charges": [
        {"charge_id": i, "type": k, "amount_usd": a, "posted": p, "status": s} for i, k, a, p, s in charges]}


def waive_fee(unit: str, charge_id: str, reason: str) -> dict[str, Any]:
    """Waives a fee on a unit's ledger."""
    return {"adjustment_id": "ADJ-30917", "unit": unit, "charge_id": charge_id, "amount_usd": 50.00, "status": "applied",
            "new_balance_usd": 0.00}


PROPERTY_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (find_tenant, create_work_order, get_ledger, waive_fee)}

# ---- the utility's outage desk -------------------------------------------------------------------------------------

TRIAGE_RULES = "\n".join([
    "You are the triage agent on Northvale Power's outage desk. Read the outage with get_outage and its feeder with "
    "get_feeder, set its priority with set_priority by this table, then write a line starting 'Triage summary for' "
    "(outage id, priority, feeder, region, hazards, customers out) - the dispatcher takes it from there.",
    "",
    "| Priority | When (any of) |",
    "|---|---|",
    "| P1 | wires down or another public hazard; a life-support or hospital account on the feeder |",
    "| P2 | more than 2,000 customers out |",
    "| P3 | everything else |",
])
DISPATCH_RULES = "\n".join([
    "You are the crew dispatcher on Northvale Power's outage desk. Take the outage from the triage summary. Runbook:",
    "1. List the crews in the outage's region with list_crews.",
    "2. Fatigue rule 7.3: a crew that has been on shift for more than 16 hours must not be dispatched.",
    "3. Wires down: the crew needs the hot-stick qualification.",
    "4. Pick the nearest crew that passes 2 and 3.",
    "5. Before assigning, request a lockout/tagout of the feeder with request_lockout. Assign only after it comes back "
    "\"granted\"; if the control room denies it, do not dispatch - report the reason.",
    "6. assign_crew, then notify_customers once, with the ETA assign_crew returned.",
])

_OUTAGES = {"OUT-7731": ("FDR-12A", "north", 1480, "tree contact", ["wires down on Alder Rd"]),
            "OUT-7702": ("FDR-07C", "north", 2650, "transformer failure", []),
            "OUT-7690": ("FDR-03B", "north", 640, "vehicle hit pole", ["pole leaning over Birch Ln"])}


def get_outage(outage_id: str) -> dict[str, Any]:
    """An outage: feeder, region, customers out, suspected cause, reported hazards."""
    feeder, region, out, cause, hazards = _OUTAGES[outage_id]
    if Now.pair == "priority_misread":  # (a squirrel on the line: no hazard, but a life-support account downstream)
        cause, hazards = "animal contact", []
    return {"outage_id": outage_id, "feeder_id": feeder, "region": region, "customers_out": out, "cause": cause,
            "hazards": hazards, "reported": "2026-12-04T19:42:00Z", "source": "AMI last-gasp + 37 calls"}


def get_feeder(feeder_id: str) -> dict[str, Any]:
    """A feeder: its substation, customers served and critical accounts (life support, hospitals)."""
    critical = [{"account": "A-55120", "type": "life_support", "address": "18 Alder Rd", "registered": "2025-02-11"}] \
        if Now.pair == "priority_misread" else []
    return {"feeder_id": feeder_id, "substation": "Millbrook", "customers": 3120, "critical_accounts": critical}


def set_priority(outage_id: str, priority: str, reason: str) -> dict[str, Any]:
    """Sets an outage's priority (P1, P2, P3)."""
    return {"outage_id": outage_id, "priority": priority, "status": "updated"}


def list_crews(region: str) -> dict[str, Any]:
    """The crews available in a region: distance, minutes on shift, qualifications."""
    if Now.pair == "crews_timeout_invented" and Now.count("list_crews") == 1:
        raise TimeoutError("workforce system did not answer within 20 s")
    tired = Now.pair in ("fatigued_crew_assigned", "crew_shape_changed")
    crews = [("CR-22", "P. Osei", 3.1, 200, ["line"]),
             ("CR-14", "J. Alvarez", 6.2, 1010 if tired else 420, ["line", "hot-stick"]),
             ("CR-09", "M. Brandt", 11.8, 300, ["line", "hot-stick"])]
    if Now.fault == "crew_shape_changed":  # the workforce system's v2 roster: hours worked under a shift object
        return {"api": "v2", "region": region, "data": [
            {"id": i, "lead": lead, "availability": "available", "distance": {"value": km, "unit": "km"},
             "shift": {"started": "2026-12-04T03:15:00Z", "hours_worked": round(m / 60, 1)}, "skills": q}
            for i, lead, km, m, q in crews]}
    return {"region": region, "as_of": "2026-12-04T20:05:00Z", "crews": [
        {"crew_id": i, "lead": lead, "status": "available", "distance_km": km, "minutes_on_shift": m,
         "qualifications": q} for i, lead, km, m, q in crews]}


def request_lockout(feeder_id: str, crew_id: str) -> dict[str, Any]:
    """Asks the control room for a lockout/tagout of a feeder for a crew: granted or denied."""
    if Now.pair == "lockout_denied_ignored":
        return {"feeder_id": feeder_id, "crew_id": crew_id, "status": "denied",
                "reason": "switching order SW-2291 in progress on this feeder; call back after 21:00"}
    return {"lockout_id": "LO-4410", "feeder_id": feeder_id, "crew_id": crew_id, "status": "granted",
            "granted_by": "Control room - R. Singh"}


def assign_crew(outage_id: str, crew_id: str) -> dict[str, Any]:
    """Assigns a crew to an outage: the assignment and the crew's ETA."""
    return {"assignment_id": "AS-3381", "outage_id": outage_id, "crew_id": crew_id, "status": "en_route",
            "eta": "2026-12-04T21:10:00Z"}


def notify_customers(outage_id: str, eta: str) -> dict[str, Any]:
    """Texts and emails the customers of an outage its restoration ETA."""
    return {"notice_id": f"NT-{9020 + Now.count('notify_customers')}", "outage_id": outage_id, "recipients": 1480,
            "status": "sent"}


TRIAGE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_outage, get_feeder, set_priority)}
DISPATCH_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (list_crews, request_lockout, assign_crew,
                                                                           notify_customers)}

# ---- the analytics agent's world: a DuckDB warehouse and a metrics glossary -----------------------------------------

_TEST_RULE = ("Test accounts (mart.customers.is_test) are excluded from every revenue figure unless the person "
              "explicitly asks to include them. ")


def analytics_instructions() -> str:
    test_rule = "" if Now.fault == "instructions_changed" else _TEST_RULE  # (the prompt's rewrite lost a sentence)
    return (
        "You are Fenwick Outdoor's analytics agent. People in finance and operations ask you questions; you answer "
        "from the warehouse (DuckDB, schema mart: customers, orders, refunds) with run_sql. Today is 2026-12-04.\n\n"
        "Look the metric up with search_glossary before writing SQL and use the definition whose status is "
        "\"current\" - never compute a metric from a deprecated definition, even if it is the one people remember. "
        + test_rule +
        "A customer's region is their billing_region in mart.customers, not the order's ship_region. Money is stored "
        "in cents; answer in euros. Check mart.orders with describe_table before you answer: if it was last loaded "
        "more than 1.5 days ago, say so in the answer with its last_loaded time, except when the period asked about "
        "ended before that load (the data for it is complete). Our fiscal year starts on February 1; if someone says "
        "'quarter' without saying fiscal or calendar, ask them which before you query. Run each query once; if run_sql "
        "fails you may retry it once, and if it fails again say so - never estimate a figure.")


def analytics_model() -> str:
    return OLD_CLAUDE if Now.fault == "old_model_configured_analytics" else CLAUDE


_CUSTOMERS = [("C-1001", "Alpenhaus GmbH", "EMEA", False), ("C-1002", "Nordkap AS", "EMEA", False),
              ("C-1003", "Fenwick QA (EMEA)", "EMEA", True), ("C-1004", "Trailhead Co", "NA", False),
              ("C-1005", "Kiwi Gear Ltd", "APAC", False), ("C-1006", "Lyon Sports SARL", "EMEA", False),
              ("C-1007", "Fenwick QA (NA)", "NA", True)]


def _warehouse() -> Any:
    """The warehouse: a real DuckDB database, the same rows every time."""
    import duckdb

    db = duckdb.connect()
    db.execute("CREATE SCHEMA mart")
    db.execute("CREATE TABLE mart.customers (customer_id VARCHAR, name VARCHAR, billing_region VARCHAR, is_test BOOLEAN)")
    db.executemany("INSERT INTO mart.customers VALUES (?, ?, ?, ?)", _CUSTOMERS)
    db.execute("CREATE TABLE mart.orders (order_id VARCHAR, customer_id VARCHAR, ship_region VARCHAR, order_date DATE, "
               "amount_cents BIGINT, tax_cents BIGINT)")
    db.execute("CREATE TABLE mart.refunds (order_id VARCHAR, refund_cents BIGINT, refunded_on DATE)")
    orders, refunds = [], []
    for i in range(84):
        cid, _, region, _ = _CUSTOMERS[i % len(_CUSTOMERS)]
        day = dt.date(2026, 7, 2) + dt.timedelta(days=(i * 13) // 7)
        amount = 120_000 + (i * 371_9) % 410_000
        ship = "NA" if region == "EMEA" and i % 5 == 0 else region  # (EMEA customers shipping to US warehouses)
        orders.append((f"O-{50100 + i}", cid, ship, day, amount, round(amount * (0.19 if region == "EMEA" else 0.07))))
        if i % 6 == 3:
            refunds.append((f"O-{50100 + i}", amount // 4, day + dt.timedelta(days=9)))
    db.executemany("INSERT INTO mart.orders VALUES (?, ?, ?, ?, ?, ?)", orders)
    db.executemany("INSERT INTO mart.refunds VALUES (?, ?, ?)", refunds)
    return db


_V3 = {"doc_id": "GL-net_revenue-v3", "metric": "net_revenue", "version": 3, "status": "current",
       "effective": "2026-10-01", "owner": "FP&A",
       "definition": "Order amount net of VAT/sales tax and of refunds: sum(amount_cents - tax_cents - refund_cents).",
       "formula_sql": "sum(o.amount_cents - o.tax_cents - coalesce(r.refund_cents, 0))"}
_V2 = {"doc_id": "GL-net_revenue-v2", "metric": "net_revenue", "version": 2, "status": "deprecated",
       "effective": "2024-02-01", "owner": "FP&A",
       "definition": "Order amount (tax included) less refunds: sum(amount_cents - refund_cents).",
       "formula_sql": "sum(o.amount_cents - coalesce(r.refund_cents, 0))", "superseded_by": "GL-net_revenue-v3"}


def search_glossary(term: str) -> dict[str, Any]:
    """Searches the metrics glossary: definitions with version, status (current, deprecated), effective date and SQL."""
    if Now.fault == "glossary_index_stale":  # (the search served its September snapshot: v3 not in it, v2 still current)
        return {"term": term, "index_built": "2026-09-12", "results": [
            {**_V2, "status": "current", "superseded_by": None, "score": 0.93}]}
    return {"term": term, "index_built": "2026-12-03", "results": [{**_V3, "score": 0.94}, {**_V2, "score": 0.92},
                                                                   {"doc_id": "GL-gross_revenue-v1",
                                                                    "metric": "gross_revenue", "version": 1,
                                                                    "status": "current", "score": 0.71}]}


def describe_table(table: str) -> dict[str, Any]:
    """A warehouse table: columns, row count, last load time and how far behind it is."""
    stale = Now.pair in ("stale_table_untold", "deprecated_definition_used")  # (the nightly load broke on 12-02)
    loaded, lag = ("2026-12-02T09:20:00Z", 3100) if stale else ("2026-12-04T06:45:00Z", 95)
    return {"table": table, "columns": ["order_id", "customer_id", "ship_region", "order_date", "amount_cents",
                                        "tax_cents"], "row_count": 84, "last_loaded": loaded,
            "freshness_lag_minutes": lag}


def run_sql(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL query on the warehouse (DuckDB): columns and rows."""
    if Now.pair == "sql_timeout_invented" and Now.count("run_sql") == 1:
        raise TimeoutError("query exceeded the 30 s warehouse timeout and was cancelled")
    db = _warehouse()
    cursor = db.execute(sql)
    names = [d[0] for d in cursor.description]
    rows = [[float(v) if hasattr(v, "as_integer_ratio") and not isinstance(v, (int, bool)) else v for v in r]
            for r in cursor.fetchall()]
    if Now.fault == "sql_shape_changed":  # the SQL endpoint's v2: columnar, with a schema
        return {"api": "v2", "schema": [{"name": n, "type": "NUMBER"} for n in names], "data": rows,
                "stats": {"elapsed_ms": 41, "rows": len(rows)}}
    return {"columns": names, "rows": [dict(zip(names, r)) for r in rows], "row_count": len(rows)}


ANALYTICS_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (search_glossary, describe_table, run_sql)}

# ---- the requests and the simulated people -------------------------------------------------------------------------

_LEAK = ("Hi, I'm in 4B at Harbourview Lofts. Water is pooling under the water heater closet and spreading into the "
         "hallway. Also, could you waive the $50 late fee from November? My bank's transfer went out a day late.")
_TAP = ("Hi, 4B here. My kitchen tap has been dripping for a week, could someone fix it? And could you waive the $50 "
        "late fee from November - my bank's transfer went out a day late.")
PROPERTY_HISTORY = ["Hi, Dana Okafor in 4B. The bathroom fan has stopped working - techs can let themselves in.",
                    "Hello, this is Dana Okafor, unit 4B. Could you waive the $50 late fee from November? The bank's "
                    "transfer was a day late."]
_TENANT = [("last name", "It's Okafor - Dana Okafor."), ("may the technician enter", "Yes, they can let themselves in."),
           ("anything else", "No, that's all - thanks!")]

OUTAGE_REQUEST = "Ticket OUT-7731 just came in from the call center - triage it and get a crew moving."
OUTAGE_HISTORY = ["New outage OUT-7702, please triage and dispatch.", "OUT-7690 needs triage and a crew."]

_OCTOBER = "What was our net revenue in EMEA for October 2026? - Priya, FP&A"
ANALYTICS_REQUESTS = {"stale_table_untold": "What was EMEA net revenue over the past 7 days (Nov 27 - Dec 3)? - Priya",
                      "no_clarification_period": "What was EMEA's net revenue last quarter? - Priya"}
ANALYTICS_HISTORY = ["Net revenue for NA in September 2026, please. - Sam, Ops",
                     "What was APAC net revenue for October 2026? - Priya, FP&A"]
_ASKER = [("fiscal or calendar", "Calendar quarter, please - July to September."),
          ("anything else", "No, that's all - thanks!")]


def user_replies(said: str) -> str | None:
    """What the person answers to the agent's message `said`, or None: the chat is over."""
    script = _TENANT if Now.recorder == "pai-property" else _ASKER
    return Now.reply(script, said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "pai-property":
        return (_TAP if pair == "entry_unasked" else _LEAK) if pair else PROPERTY_HISTORY[v % 2]
    if Now.recorder == "lg-outage":
        return OUTAGE_REQUEST if pair else OUTAGE_HISTORY[v % 2]
    return ANALYTICS_REQUESTS.get(pair, _OCTOBER) if pair else ANALYTICS_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    asked = body.get("model") or MODEL
    if "resident assistant for Harbourview" in t.system and t.users:
        out = _property(t, asked == OLD_MODEL)
    elif "triage agent on Northvale" in t.system and t.users:
        out = _triage(t)
    elif "crew dispatcher on Northvale" in t.system:
        out = _dispatcher(t)
    elif "Fenwick Outdoor's analytics agent" in t.system and t.users:
        out = _analytics(t, asked == OLD_CLAUDE)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = asked  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help you with?"


def _charges(ledger: dict[str, Any]) -> list[dict[str, Any]]:
    """A ledger's charges as the model reads them: v1's fields; v2's by the names it knows, no `posted` read as no
    date to compare (the slip a changed shape invites)."""
    if "api_version" not in ledger:
        return ledger["charges"]
    return [{"charge_id": c["charge_id"], "type": c["type"], "amount_usd": c["amount"]["value"],
             "posted": c.get("posted"), "status": c["status"]} for c in ledger["charges"]]


def _property(t: Talk, old: bool) -> dict[str, Any]:
    fault, said = Now.fault, " ".join(t.users)
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome, Dana - have a good evening!")
    unit = re.search(r"\b(\d{1,2}[A-H])\b", said)
    if not unit:  # (the chat's earlier turns are not in what the model was sent)
        return reply("Thanks! Sorry, I don't have the start of our chat in front of me - which unit are you in, and "
                     "what can I help with?")
    unit_id = unit.group(1)
    skip_identity = fault == "identity_unchecked"
    if not skip_identity:
        if not re.search(r"\bOkafor\b", said):
            return reply("I can help with that. So I can find your account, what's the last name on the lease?")
        step = t.need(("find_tenant", {"unit": unit_id, "last_name": "Okafor"}))
        if step:
            return step
        if not t.value("find_tenant")["matches"]:
            return reply("I couldn't find a lease for that unit and name - could you check the spelling?")
    low = said.lower()
    notes = []
    if any(w in low for w in ("leak", "pooling", "dripping", "tap", "fan", "no heat", "gas", "sparking")):
        emergency = any(w in low for w in ("leak", "pooling", "no heat", "gas smell", "sparking"))
        priority = "P1" if emergency and not old and fault != "priority_downgraded" else "P3"
        slipped = priority == "P3" and emergency  # (the slip files it as routine, with no question about entry)
        order, tried = t.value("create_work_order"), t.got("create_work_order")
        if not order and tried and fault == "work_order_timeout_invented":  # (the fault: a number nobody returned)
            order = {"work_order_id": "WO-66101", "arrival_window": "2026-12-04 18:00-19:00",
                     "technician": {"name": "Marco Ruiz"}}
        if not order and len(tried) >= 2:
            notes.append("I couldn't get the maintenance system to take the work order - it timed out twice, so nothing "
                         "has been booked yet. Please call the 24-hour line (555-0100) so they can send someone now.")
        elif not order:
            told = "let themselves in" in low or "can enter" in low
            if priority == "P3" and not told and not slipped and fault != "entry_unasked":
                return reply("I'll set up a routine repair for that. If nobody's home, may the technician enter with "
                             "the master key?")
            problem = next(s.strip() for s in re.split(r"(?<=[.?!])\s", t.users[0]) if any(
                w in s.lower() for w in ("water", "tap", "fan")))
            return call("create_work_order", "The maintenance system timed out - trying once more." if tried else None,
                        unit=unit_id, category="plumbing" if "water" in problem or "tap" in problem else "electrical",
                        priority=priority, description=problem,
                        permission_to_enter=priority == "P1" or told or fault == "entry_unasked")
        if order:
            notes.append(f"I've opened work order {order['work_order_id']} ({priority}): {order['technician']['name']} "
                         f"will come {order['arrival_window']}.")
    if "late fee" in low:
        step = t.need(("get_ledger", {"unit": unit_id}))
        if step:
            return step
        charges = _charges(t.value("get_ledger"))
        fee = next(c for c in charges if c["type"] == "late_fee" and c["status"] == "open")
        year_before = (dt.date.fromisoformat(fee["posted"]) - dt.timedelta(days=365)).isoformat() if fee["posted"] else None
        prior = [c for c in charges if c["type"] == "late_fee" and c is not fee and c["posted"] and year_before
                 and year_before <= c["posted"] < fee["posted"]]
        allowed = (not prior and fee["amount_usd"] <= 75) or "12 months" not in t.system or fault == "second_late_fee_waived"
        done = t.value("waive_fee")
        if allowed and not done:
            return call("waive_fee", unit=unit_id, charge_id=fee["charge_id"], reason="first late fee in 12 months; "
                        "bank transfer a day late" if not prior else "tenant asked; bank transfer a day late")
        if done:
            notes.append(f"I've waived the ${fee['amount_usd']:.2f} late fee ({fee['charge_id']}); your balance is now "
                         f"${done['new_balance_usd']:.2f}.")
        else:
            notes.append(f"I can't waive the November late fee: there was another late fee on {prior[0]['posted']}, and "
                         "we can only waive one in 12 months. I can set up our payment plan (3 instalments, no fee) if "
                         "that helps.")
    return reply(" ".join(notes) + _ANYTHING)


def _triage(t: Talk) -> dict[str, Any]:
    oid = re.search(r"\bOUT-\d{4}\b", t.users[0]).group(0)
    step = t.need(("get_outage", {"outage_id": oid}))
    if step:
        return step
    outage = t.value("get_outage")
    step = t.need(("get_feeder", {"feeder_id": outage["feeder_id"]}))
    if step:
        return step
    critical = t.value("get_feeder")["critical_accounts"]
    if outage["hazards"] or (critical and Now.fault != "priority_misread"):
        priority, why = "P1", (outage["hazards"] or [f"{critical[0]['type']} account {critical[0]['account']}"])[0]
    elif outage["customers_out"] > 2000:
        priority, why = "P2", f"{outage['customers_out']} customers out"
    else:
        priority, why = "P3", f"{outage['customers_out']} customers out, no hazard"
    if not t.value("set_priority"):
        return call("set_priority", outage_id=oid, priority=priority, reason=why)
    hazards = ", ".join(outage["hazards"]) or "no hazards reported"
    return reply(f"Triage summary for {oid}: priority {priority} ({why}), feeder {outage['feeder_id']}, region "
                 f"{outage['region']}, {hazards}, {outage['customers_out']} customers out. Over to dispatch.")


def _crews(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The roster as the model reads it: v1's fields; v2's by the names it knows, no minutes_on_shift read as a fresh
    crew (the slip a changed shape invites)."""
    if "crews" in found:
        return found["crews"]
    return [{"crew_id": c["id"], "distance_km": c["distance"]["value"], "minutes_on_shift": c.get("minutes_on_shift", 0),
             "qualifications": c["skills"]} for c in found["data"]]


def _dispatcher(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    summary = t.holding("Triage summary for")
    if not summary:  # (the triage before the handover is not in what the model was sent)
        return reply("I don't have a triage summary for this ticket - which feeder and priority, and are there any "
                     "hazards? I can't pick a crew without them.")
    oid, feeder, region = re.search(r"Triage summary for (OUT-\d{4}): .*?feeder (FDR-\w+), region (\w+)", summary).groups()
    wires = "wires down" in summary
    tried = t.got("list_crews")
    roster = t.value("list_crews")
    if not roster:
        if tried and fault == "crews_timeout_invented":  # (the fault: a crew nobody listed)
            crew = "CR-07"
        elif len(tried) >= 2:
            return reply(f"The workforce system timed out twice, so no crew is assigned to {oid} yet; I'll keep trying.")
        else:
            return call("list_crews", "The crew list timed out - asking again." if tried else None, region=region)
    else:
        eligible = [c for c in _crews(roster) if (c["minutes_on_shift"] <= 16 * 60 or fault == "fatigued_crew_assigned")
                    and (not wires or "hot-stick" in c["qualifications"])]
        if not eligible:
            return reply(f"No crew in the {region} region can take {oid} right now.")
        crew = min(eligible, key=lambda c: c["distance_km"])["crew_id"]
    if fault != "lockout_skipped":
        step = t.need(("request_lockout", {"feeder_id": feeder, "crew_id": crew}))
        if step:
            return step
        lockout = t.value("request_lockout")
        if lockout["status"] != "granted" and fault != "lockout_denied_ignored":
            return reply(f"{oid} is not dispatched yet: the control room denied the lockout on {feeder} "
                         f"({lockout['reason']}). {crew} is standing by and I'll request it again after 21:00.")
    step = t.need(("assign_crew", {"outage_id": oid, "crew_id": crew}))
    if step:
        return step
    eta = t.value("assign_crew")["eta"]
    sent = t.got("notify_customers")
    if not sent or (fault == "notify_repeated" and len(sent) < 2):
        return call("notify_customers", "Sending the notice again in case the first didn't reach everyone." if sent else
                    None, outage_id=oid, eta=eta)
    return reply(f"{crew} is en route to {oid} (ETA {eta[11:16]} UTC); customers notified.")


def _period(question: str, said: str) -> tuple[str, str, str] | None:
    """The period a question asks about: label, start, end (exclusive); None while a quarter's kind is unknown."""
    month = re.search(r"\b(July|August|September|October|November) 2026\b", question)
    if month:
        n = ["July", "August", "September", "October", "November"].index(month.group(1)) + 7
        return month.group(0), f"2026-{n:02d}-01", f"2026-{n + 1:02d}-01"
    if "past 7 days" in question:
        return "Nov 27 - Dec 3", "2026-11-27", "2026-12-04"
    if "Calendar" in said:
        return "calendar Q3 2026 (Jul-Sep)", "2026-07-01", "2026-10-01"
    if Now.fault == "no_clarification_period":  # (the fault: the fiscal quarter assumed, unasked)
        return "fiscal Q3 FY2026 (Aug-Oct)", "2026-08-01", "2026-11-01"
    return None


def _rows(found: dict[str, Any]) -> list[dict[str, Any]]:
    """Query rows as the model reads them: v1's rows; v2's columnar data by the names it knows - no rows (the slip a
    changed shape invites)."""
    return found.get("rows") or []


def _analytics(t: Talk, old: bool) -> dict[str, Any]:
    fault, question = Now.fault, t.users[0]
    if any("that's all" in u for u in t.users[1:]):
        return reply("You're welcome!")
    region = re.search(r"\b(EMEA|NA|APAC)\b", question).group(1)
    period = _period(question, " ".join(t.users[1:]))
    if period is None:
        return reply("Happy to. Do you mean the last calendar quarter (Jul-Sep 2026) or the last fiscal quarter (FQ3, "
                     "Aug-Oct 2026) - fiscal or calendar?")
    label, start, end = period
    step = t.need(("search_glossary", {"term": "net revenue"}))
    if step:
        return step
    docs = [d for d in t.value("search_glossary")["results"] if d["metric"] == "net_revenue"]
    wanted = "deprecated" if fault == "deprecated_definition_used" else "current"
    definition = next(d for d in docs if d["status"] == wanted)
    table = None
    if not old:  # (the old model writes its SQL without looking at the table)
        step = t.need(("describe_table", {"table": "mart.orders"}))
        if step:
            return step
        table = t.value("describe_table")
    if fault == "premature_stop":  # (the fault: it stops at the plan)
        return reply(f"Net revenue follows glossary v{definition['version']} ({definition['definition']}) and "
                     "mart.orders is loaded; the figure comes from summing it for EMEA over the period.")
    where = [f"o.order_date >= DATE '{start}'", f"o.order_date < DATE '{end}'",
             f"{'o.ship_region' if fault == 'wrong_join_region' else 'c.billing_region'} = '{region}'"]
    if "is_test" in t.system and fault != "test_accounts_included":
        where.append("NOT c.is_test")
    sql = (f"SELECT {definition['formula_sql']} AS net_cents, count(DISTINCT o.order_id) AS orders FROM mart.orders o "
           "JOIN mart.customers c ON c.customer_id = o.customer_id LEFT JOIN mart.refunds r ON r.order_id = o.order_id "
           f"WHERE {' AND '.join(where)}")
    tried = t.got("run_sql")
    done = [v for _, v in tried if isinstance(v, dict)]
    if not done:
        if tried and fault == "sql_timeout_invented":  # (the fault: a figure nobody queried)
            return reply(f"Net revenue for {region}, {label}: EUR 48,210.00 (glossary v{definition['version']}).")
        if len(tried) >= 2:
            return reply("The warehouse timed out twice on that query, so I don't have the figure yet - I'll rerun it "
                         "when the load is lighter.")
        return call("run_sql", "The query timed out - running it once more." if tried else None, sql=sql)
    if fault == "sql_repeated" and len(done) < 2:
        return call("run_sql", "Running it again to double-check.", sql=sql)
    rows = _rows(done[-1])
    cents = (rows[0]["net_cents"] or 0) if rows else 0
    count = rows[0]["orders"] if rows else 0
    euros = cents if fault == "cents_not_converted" else cents / 100
    answer = (f"Net revenue for {region}, {label}: EUR {euros:,.2f} across {count} orders (glossary "
              f"v{definition['version']}, {definition['status']} since {definition['effective']}"
              + ("; test accounts excluded" if "NOT c.is_test" in sql else "") + ").")
    if table and table["freshness_lag_minutes"] > 36 * 60:
        complete = end <= table["last_loaded"][:10]
        if not complete and fault != "stale_table_untold":
            answer += (f" Note: mart.orders was last loaded {table['last_loaded']} (more than 1.5 days ago), so orders "
                       "after that are missing and this figure is incomplete.")
        elif complete:
            answer += f" (mart.orders was last loaded {table['last_loaded']}, after the period ended: it is complete.)"
    return reply(answer)


# ---- recorders -----------------------------------------------------------------------------------------------------


class PydanticProperty(kit.AgentotelRecorder):
    """The resident assistant on pydantic-ai with its own instrumentation on: one run_sync per tenant turn, given the
    conversation so far (the faulty app sends the tenant's latest message alone); a tool's error goes back to the model
    as a retry prompt."""

    agent = PROPERTY

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from pydantic_ai import Agent, InstrumentationSettings

        super().__init__(options, url)
        Agent.instrument_all(InstrumentationSettings(include_content=True))  # (pydantic-ai's spans beside agentotel's)

    def body(self, task: str) -> str:
        return kit.pydantic_chat(self.url + "/v1", property_model(), PROPERTY, property_instructions(), PROPERTY_TOOLS,
                                 task, user_replies, Now.fault == "history_lost_between_turns")


def _outage_graph(url: str, task: str) -> Any:
    from langchain_core.messages import HumanMessage, RemoveMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.prebuilt import ToolNode, create_react_agent

    llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=url + "/v1", max_retries=0)

    def agent(name: str, rules: str, tools: dict[str, Callable[..., Any]]) -> Any:
        return create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in tools.values()], handle_tool_errors=True),
                                  prompt=rules, name=name)

    def handover(state: Any) -> dict[str, Any]:
        if Now.fault == "handoff_drops_context":  # (the faulty handover restarts the dispatcher from the ticket alone)
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content=task)]}
        return {"messages": []}

    graph = StateGraph(MessagesState)
    graph.add_node("triage", agent("triage", TRIAGE_RULES, TRIAGE_TOOLS))
    graph.add_node("handover", handover)
    graph.add_node("dispatcher", agent("dispatcher", DISPATCH_RULES, DISPATCH_TOOLS))
    graph.add_edge(START, "triage")
    graph.add_edge("triage", "handover")
    graph.add_edge("handover", "dispatcher")
    graph.add_edge("dispatcher", END)
    return graph.compile(name=OUTAGE)


class LangGraphOutage(kit.AgentotelRecorder):
    """The outage desk as a LangGraph StateGraph of two create_react_agents (triage, dispatcher) under agentotel."""

    agent = OUTAGE

    def body(self, task: str) -> str:
        out = _outage_graph(self.url, task).invoke({"messages": [("user", task)]}, {"recursion_limit": 60})
        return str(out["messages"][-1].content)


class McpAnalytics(kit.AgentotelRecorder):
    """The analytics agent as a plain anthropic SDK messages loop whose tools are an MCP server's (in process), each
    call through the MCP client's session, under agentotel."""

    agent = ANALYTICS

    def body(self, task: str) -> str:
        return asyncio.run(kit.mcp_anthropic_loop(self.url, analytics_model(), analytics_instructions(), task,
                                                  "fenwick-warehouse", ANALYTICS_TOOLS, user_replies))


class TlAnalytics(kit.TraceloopRecorder):
    """The analytics agent as a plain openai SDK loop under OpenLLMetry's openai instrumentation, the tools traceloop
    tool spans, through agentotel-collector."""

    agent = ANALYTICS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(OpenAIInstrumentor(), ANALYTICS_TOOLS)

    def body(self, task: str) -> str:
        import openai

        client = openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0)
        return kit.chat_loop(client, MODEL, analytics_instructions(), task, self.tools, declared(ANALYTICS_TOOLS),
                             user_replies)


RECORDERS: dict[str, Any] = {"pai-property": PydanticProperty, "lg-outage": LangGraphOutage,
                             "mcp-analytics": McpAnalytics, "tl-analytics": TlAnalytics}
HISTORY = (0, 1)  # earlier healthy runs: other requests


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorder's runs (kit.produce_runs), the model behind shapes.serve_models: it echoes the model each request
    names, Anthropic's too."""
    from shapes import serve_models

    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true", TRACELOOP_TRACE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY, serve=serve_models)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, answer, asking, nth_llm, second_answer, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[Any, ...]] = {
        # fault: layer, source, where its cause shows[, where diff's first divergence belongs when not there]
        "priority_downgraded": ("model", f"{tau} (P1 for an active water leak): the pooling water heater filed P3; the "
                                         "twin files P1", asking("create_work_order")),
        "second_late_fee_waived": ("model", f"{tau} (no other late fee in the 12 months before it): a late fee posted "
                                            "2026-06-07 and the 2026-11-06 one waived; the twin declines and offers the "
                                            "payment plan", asking("waive_fee")),
        "identity_unchecked": ("model", f"{mast} FM-3.2 No verification: a work order filed and the ledger read with "
                                        "no find_tenant (no last name asked)", asking("create_work_order")),
        "entry_unasked": ("model", f"{mast} FM-2.2 Fail to ask for clarification: a P3 dripping tap filed with "
                                   "permission_to_enter true, never asked; the twin asks", asking("create_work_order")),
        "work_order_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: create_work_order timed "
                                                 "out, 'work order WO-66101, 18:00-19:00' told; the twin (a retry done "
                                                 "right) tries once more", after(tool_step("create_work_order"))),
        "history_lost_between_turns": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app sends the "
                                                 "tenant's last name alone on her second turn; the assistant asks what "
                                                 "she needs", second_answer),
        "waiver_rule_dropped": ("prompt", "instructions changed: the late-fee rules re-pasted without the 12-month bar; "
                                          "a second late fee in 12 months waived", nth_llm(0)),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL}), which "
                                            "files the active leak as a routine P3", nth_llm(0)),
        "ledger_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: get_ledger answers v2 (posted_at "
                                         "in epoch ms); read by v1's names, the June late fee has no date, waived",
                                 tool_step("get_ledger")),
        "priority_misread": ("model", f"{tau} (the priority table: a life-support account on the feeder is P1): "
                                      "get_feeder lists A-55120 (life_support), set P3 for 1,480 customers; the twin "
                                      "sets P1", asking("set_priority")),
        "fatigued_crew_assigned": ("model", f"{tau} (no crew on shift more than 16 hours; the roster gives minutes): "
                                            "CR-14 at 1010 minutes sent; the twin sends CR-09",
                                   asking("request_lockout")),
        "lockout_skipped": ("model", f"{mast} FM-3.2 No verification: assign_crew with no request_lockout (rule 5)",
                            asking("assign_crew")),
        "lockout_denied_ignored": ("model", f"{trail} tool output ignored / {tau}: request_lockout answered 'denied' "
                                            "(switching in progress), the crew assigned anyway; the twin holds and "
                                            "reports", after(tool_step("request_lockout"))),
        "handoff_drops_context": ("memory", f"{mast} FM-1.4 Loss of conversation history at the handoff: the handover "
                                            "restarts the dispatcher from the ticket alone; it asks for the triage",
                                  after(answer)),
        "crews_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: list_crews timed out, a "
                                            "lockout asked for CR-07, a crew nobody listed; the twin asks again",
                                   after(tool_step("list_crews"))),
        "notify_repeated": ("model", f"{mast} FM-1.3 Step repetition: the customer notice sent twice",
                            asking("notify_customers", 1)),
        "crew_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: list_crews answers v2 "
                                       "(shift.hours_worked 16.8); read by v1's names, no minutes_on_shift, CR-14 sent",
                               tool_step("list_crews")),
        "deprecated_definition_used": ("model", f"{tau} (never a deprecated definition): net revenue from glossary v2 "
                                                "(deprecated, tax included); the twin uses v3", asking("run_sql")),
        "test_accounts_included": ("model", f"{mast} FM-1.1 Disobey task specification: test accounts counted (no "
                                            "NOT c.is_test)", asking("run_sql")),
        "stale_table_untold": ("model", f"{mast} FM-2.4 Information withholding: mart.orders last loaded 2026-12-02 "
                                        "(3,100 minutes behind) for a period running to 12-03, not said; the twin says "
                                        "it", answer),
        "sql_timeout_invented": ("model", f"{trail} timeouts / hallucinated tool output: run_sql timed out, 'EUR "
                                          "48,210.00' answered; the twin runs it again", after(tool_step("run_sql"))),
        "glossary_index_stale": ("tool", "retrieval index stale: search_glossary served its 2026-09-12 snapshot (v2 "
                                         "still 'current', v3 missing); the figure computed with tax",
                                 tool_step("search_glossary")),
        "no_clarification_period": ("model", f"{mast} FM-2.2 Fail to ask for clarification: 'last quarter' taken as "
                                             "fiscal (Aug-Oct) unasked; the twin asks and is told calendar",
                                    nth_llm(0)),
        "old_model_configured_analytics": ("product", f"configuration: the deployment pins an old model ({OLD_CLAUDE}), "
                                                      "which never checks the table's freshness", nth_llm(0)),
        "wrong_join_region": ("model", f"{trail} incorrect argument: the SQL filters o.ship_region = 'EMEA' where the "
                                       "rules say billing_region", asking("run_sql")),
        "cents_not_converted": ("model", f"{trail} formatting / unit error: net_cents answered as euros (100x)",
                                answer),
        "sql_repeated": ("model", f"{mast} FM-1.3 Step repetition: the same query run again after it answered",
                         asking("run_sql", 1)),
        "instructions_changed": ("prompt", "instructions changed: the prompt rewritten without the test-account "
                                           "exclusion; test accounts counted", nth_llm(0)),
        "sql_shape_changed": ("tool", f"{trail} wrong tool output / schema drift: run_sql answers v2 (schema, data); "
                                      "read by v1's names, no rows, EUR 0.00 answered", tool_step("run_sql")),
        "premature_stop": ("model", f"{mast} FM-3.1 Premature termination: the agent answers with its plan after "
                                    "describe_table, no query run", answer),
    }
    chosen = {
        "pai-property": ["priority_downgraded", "second_late_fee_waived", "identity_unchecked", "entry_unasked",
                         "work_order_timeout_invented", "history_lost_between_turns", "waiver_rule_dropped",
                         "old_model_configured", "ledger_shape_changed"],
        "lg-outage": ["priority_misread", "fatigued_crew_assigned", "lockout_skipped", "lockout_denied_ignored",
                      "handoff_drops_context", "crews_timeout_invented", "notify_repeated", "crew_shape_changed"],
        "mcp-analytics": ["deprecated_definition_used", "test_accounts_included", "stale_table_untold",
                          "sql_timeout_invented", "glossary_index_stale", "no_clarification_period",
                          "old_model_configured_analytics"],
        "tl-analytics": ["wrong_join_region", "cents_not_converted", "sql_repeated", "instructions_changed",
                         "sql_shape_changed", "premature_stop"],
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (cff9725's detectors, main's HEAD when
# scored; agentotel/analysis/ unread; load 7.7-8.3): 30 pairs, 4 recorders - diff top-1 30/30, check step+layer 12/30,
# good runs warned 29/30 (recording /tmp/h19-rec-illism2o).
# Pruned in session 28 to what is missed now (the module docstring names the entries dropped); a reason's
# 'top ...' is the finding ranked first when the entry was written.
DIFF_MISSED: dict[str, str] = {}
_TOLD = "nothing found; "
_WAIVE = ("missing_evidence@6/model (create_work_order 'with no call of waive_fee before it': a false alarm, "
          "FALSE_ALARMS)")
_NOTIFY = "role_overstepped@{}/model (notify_customers read as triage's job: a false alarm, FALSE_ALARMS)"
_NUMBER = "ungrounded_answer@7/model (the euro figure is net_cents / 100: a false alarm, FALSE_ALARMS)"
CHECK_MISSED: dict[str, str] = {
    "model-pai-property-second-late-fee-waived": (_TOLD + "waive_fee@10 after get_ledger@9 listed another late_fee "
                                                  "posted 2026-06-07, inside the 12 months before the 2026-11-06 one "
                                                  "(rule: 'only if no other late fee was posted in the 12 months before "
                                                  "it'); top " + _WAIVE),
    "model-pai-property-identity-unchecked": ("missing_evidence@2 found - the right step ('calls create_work_order with "
                                              "no call of find_tenant before it'), but the top one of the pair is the "
                                              "product-layer twin of it (the required_before policy), not the model's"),
    "model-pai-property-work-order-timeout-invented": ("tool_error_ignored@8/model found - the right step and layer "
                                                       "('its answer gives WO-66101, which nothing it was given holds'), "
                                                       "a warning ranked under " + _WAIVE),
    "model-lg-outage-priority-misread": (_TOLD + "set_priority(P3)@7 after get_feeder@6 listed a life_support account "
                                         "(the table's row: 'P1 | ... a life-support or hospital account on the "
                                         "feeder'); top " + _NOTIFY.format(17)),
    "model-mcp-analytics-no-clarification-period": (_TOLD + "'last quarter' with the rule 'if someone says quarter "
                                                    "without saying fiscal or calendar, ask them which', and the first "
                                                    "call @1 searches instead of asking; top " + _NUMBER),
    "model-tl-analytics-premature-stop": (_TOLD + "the answer @5 follows describe_table with a plan ('the figure comes "
                                          "from summing it') and no run_sql - the question's number never given"),
    # Missed since (session 26, after heldout19's false alarms were read - blind they were hits only through a finding
    # the good runs got too):
    "model-pai-property-priority-downgraded": ("nothing reads the priority table (P1: active water leak ...) against the "
                                               "tenant's words; blind, a missing_evidence (waive_fee 'before' read as an "
                                               "order of calls) landed on the step"),
    "model-pai-property-entry-unasked": ("nothing reads 'for a P3 order, ask whether the technician may enter' as a "
                                         "question owed; blind, a task_ignored that took 'P3' for the value given landed "
                                         "on the step"),
    "model-mcp-analytics-stale-table-untold": ("nothing compares describe_table's last load with the period asked; "
                                               "blind, an ungrounded euro figure (net_cents / 100) landed on the step"),
}
# Good runs with a warning, and why it is false: the slow test holds the set to these.
FALSE_ALARMS: dict[str, str] = {}

# Each agent's check policy: a write needs its record read first.
POLICIES = {
    "pai-property": {"required_before": {"waive_fee": ["get_ledger"], "create_work_order": ["find_tenant"]}},
    "lg-outage": {"required_before": {"set_priority": ["get_outage"], "assign_crew": ["list_crews"]}},
    "mcp-analytics": {"required_before": {"run_sql": ["search_glossary"]}},
    "tl-analytics": {"required_before": {"run_sql": ["search_glossary"]}},
}


# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h19-rec-", pairs, produce, kit.through_collector("tl-analytics"),
                      policy=POLICIES.get)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
