"""An eighth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
a data-analysis agent over a small database and a customer-support agent with written policies, run through real
agent frameworks.

    python tests/analysis/heldout8.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout8.py --score DIR [...]       # the runs a call left in DIR, scored again

The data-analysis agent answers business questions over an in-memory DuckDB database built here (orders, customers,
products, refunds, events; a few dozen rows each) with list_tables, describe_table, run_sql (rows, or DuckDB's own
error text), make_chart and save_report. The support agent (tau-bench retail style) follows a written policy
(refunds within 30 days of delivery; the user's explicit yes before any refund, exchange or cancellation; one exchange
per order; no other customer's data; a human for a safety issue) with get_user, get_order, list_orders, refund,
exchange, cancel and transfer_to_human, over several turns: the user's replies are scripted turns, each sent when the
agent's last message asks for it. Recorded through the frameworks' own tool execution, each recorder in a process of
its own:

- `openai` (data): a plain loop on the openai SDK with `agentotel.instrument()` and `@agentotel.tool` functions;
- `langgraph` (data): LangGraph's create_react_agent with ChatOpenAI and langchain @tool functions;
- `oi-openai` (data): the openai loop under OpenInference's openai instrumentation, the tools OITracer TOOL spans,
  sent by OTLP through agentotel-collector;
- `anthropic` (support): a plain loop on the anthropic SDK (tool_use / tool_result) with `@agentotel.tool` functions;
- `pydantic-ai` (support): a pydantic-ai Agent, one `run_sync` per user turn with the message history;
- `agents` (support): the OpenAI Agents SDK, a triage agent handing over to a refunds agent (the handoff filtered
  with `handoff_filters.remove_all_tools`: the refunds agent sees the triage agent's words, not its tool results);
- `tl-anthropic` (support): the anthropic loop under OpenLLMetry's anthropic instrumentation, the app's root and
  tools traceloop workflow / tool spans, sent by OTLP through agentotel-collector.

The model on 127.0.0.1 reads the conversation it is sent (the SQL results it got, the orders it looked up, the user's
words) and decides as a model would. Faults from data-analysis agent failures (a column other than the one the user
named, a filter of the request dropped, a join that fans out and inflates a sum, an SQL error answered past, result
rows misread, a result shape changed, a chart of other data than the answer states, a report saved elsewhere, a
failing query repeated, "top 3" after a LIMIT 1, a column replaced after a schema change, an empty result answered
with a figure), tau-bench's tool-agent-user faults (a write without the user's explicit yes or after a "not yet", a
refund past the policy's window, another amount than the user's, another order than the user named, another
customer's data revealed, a second exchange, no transfer to a human where the policy requires one, the user's email
lost from the context, a failed identification gone past, the user's correction ignored, "already refunded" or a
refused cancel answered as done) and MAST (Cemri et al. 2025:
disobey role, information withheld at a handoff, reasoning-action mismatch, incorrect verification, premature
termination). Good runs hold the near twins: an SQL error corrected by the next query, a busy database retried once,
a join made with DISTINCT, a share and a difference worked out from rows, a figure rounded as asked, an SQL tool's columns changing with
the query, an empty result said as such, a refund asked and confirmed, a refund refused by policy, a transfer to a
human, a user who changes their mind, a mistyped email asked again, a refused cancellation reported honestly.

Built and scored blind (a9479a9's detectors, agentotel/analysis/ unread; load ~4-8): 57 pairs, 7 recorders - diff
top-1 57/57, check step+layer 9/57 (6 of them by a false signal), good runs with a warning 22/57. After session 18's
fixes and rules: check 16/57 (none by a false signal), good runs warned 0/57; after session 19's: check 39/57, 0/57
(CHECK_MISSED still names the pairs found since: the slow test holds misses to a subset). DIFF_MISSED,
CHECK_MISSED and FALSE_ALARMS say why.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # this tree's agentotel scores the runs, whatever the installed one is

import _heldout_kit as kit  # noqa: E402
from shapes import Status, reply  # noqa: E402

MODEL = "gpt-4o-mini"
ANALYST_NAME, SUPPORT_NAME = "data-analyst", "support-desk"
ANALYST = ("You are a data analyst. Answer the user's business questions from the company database: list_tables, "
           "describe_table and run_sql (DuckDB SQL). Make charts with make_chart and save reports with save_report "
           "when asked. State the figures the query returned and how you got them.")
POLICY = ("Policy:\n1. Identify the user by email (get_user) before you look at their orders.\n2. Refunds only within 30 "
          "days of delivery, and at most the order's amount.\n3. Before any write action (refund, exchange, cancel) state "
          "the action and its details and obtain the user's explicit confirmation (yes).\n4. One exchange per order.\n"
          "5. Never reveal another customer's data (name, address, orders).\n6. Transfer to a human agent "
          "(transfer_to_human) when the user reports a safety issue (fire, smoke, electric shock, injury).\n"
          "Today is 2026-12-03.")
SUPPORT = "You are the customer support agent of Acme Shop. Help the user with their orders.\n" + POLICY
TRIAGE = ("You are the triage agent of Acme Shop's support team. Identify the user and the order they mean, then hand "
          "over to the refunds agent for any refund, with every fact it needs (order, item, amount, delivery date). "
          "Only the refunds agent issues refunds.\n" + POLICY)
REFUNDS = ("You are the refunds agent of Acme Shop's support team. The triage agent hands you the user's refund "
           "request with the order's facts; decide it by the policy and issue the refund.\n" + POLICY)

# ---- the analytics database ---------------------------------------------------------------------------------------

CUSTOMERS = ["Acme GmbH", "Birch Ltd", "Cobalt SA", "Delta BV", "Ember Oy", "Fjord AS", "Granite Inc", "Harbor LLC",
             "Iris Co", "Juniper KK", "Kestrel Pte", "Lotus Ltd"]
REGION = ["EU"] * 6 + ["US"] * 3 + ["APAC"] * 3
CHURNED = {"Fjord AS": "2026-11-14", "Harbor LLC": "2026-11-22", "Kestrel Pte": "2026-10-05"}
PRODUCTS = [("Kettle", "kitchen", 49.9), ("Lamp", "home", 35.0), ("Blanket", "home", 89.0), ("Espresso machine", "kitchen", 249.0),
            ("Running shoes", "apparel", 120.0), ("Rain jacket", "apparel", 75.0)]
REFUNDED = (1005, 1012, 1018, 1023, 1029)
TICKETS = {1: 2, 3: 1, 7: 3, 10: 1}  # customer number: support tickets opened


def database(renamed: bool = False) -> Any:
    """The analytics database (DuckDB, in memory)."""
    import duckdb

    db = duckdb.connect()
    db.execute("CREATE TABLE customers (id VARCHAR, name VARCHAR, region VARCHAR, signup_date DATE, churned_at DATE)")
    db.execute("CREATE TABLE products (id VARCHAR, name VARCHAR, category VARCHAR, price DECIMAL(8,2))")
    db.execute("CREATE TABLE orders (id INTEGER, customer_id VARCHAR, product_id VARCHAR, created_at DATE, shipped_at DATE, "
               "amount DECIMAL(8,2), status VARCHAR)")
    db.execute("CREATE TABLE refunds (id INTEGER, order_id INTEGER, amount DECIMAL(8,2), refunded_at DATE)")
    db.execute("CREATE TABLE events (id INTEGER, customer_id VARCHAR, kind VARCHAR, happened_at DATE)")
    for i, name in enumerate(CUSTOMERS, 1):
        db.execute("INSERT INTO customers VALUES (?, ?, ?, ?, ?)",
                   [f"C{i:02d}", name, REGION[i - 1], dt.date(2025, 1 + i % 12, 3 + i), CHURNED.get(name)])
    for i, (name, category, price) in enumerate(PRODUCTS, 1):
        db.execute("INSERT INTO products VALUES (?, ?, ?, ?)", [f"P{i}", name, category, price])
    amounts = {}
    for i in range(40):
        created = dt.date(2026, 6, 20) + dt.timedelta(days=i * 4 + i % 3)
        shipped = created + dt.timedelta(days=1 + 5 * (i % 4)) if i < 37 else None
        product = (i * 7) % 6
        amounts[1001 + i] = round(PRODUCTS[product][2] * (1 + i % 2) + 0.5 * (i % 5), 2)
        db.execute("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [1001 + i, "C07" if i % 5 == 2 else f"C{(i * 5) % 12 + 1:02d}", f"P{product + 1}", created, shipped, amounts[1001 + i],
                    "processing" if shipped is None else "shipped"])
    for n, order in enumerate(REFUNDED, 1):
        db.execute("INSERT INTO refunds VALUES (?, ?, ?, (SELECT created_at + 10 FROM orders WHERE id = ?))",
                   [n, order, amounts[order], order])
    event = 0
    for customer, count in TICKETS.items():
        for k in range(count):
            event += 1
            db.execute("INSERT INTO events VALUES (?, ?, 'support_ticket', ?)", [event, f"C{customer:02d}", dt.date(2026, 7 + k, 10 + customer)])
    for customer in range(1, 13):
        event += 1
        db.execute("INSERT INTO events VALUES (?, ?, 'login', ?)", [event, f"C{customer:02d}", dt.date(2026, 11, customer)])
    if renamed:
        db.execute("ALTER TABLE orders RENAME COLUMN amount TO amount_usd")
    return db


class Now:
    fault: str | None = None  # the fault of this run (faulty runs only)
    pair: str | None = None  # the pair's fault, in its good run too (a near twin's setting)
    variant = 0
    recorder = ""
    db: Any = None
    busy = False
    user_turn = 0  # the scripted user's replies sent so far
    refunded: set[str] = set()


BUSY = {"misread_rows", "report_path"}  # pairs whose first query meets a busy database (both runs): run again, unchanged
RENAMED = {"schema_renamed"}  # pairs run after orders.amount became amount_usd (both runs; the history knew amount)
DATABASES: dict[bool, Any] = {}


def _start(pair: str | None, fault: str | None, variant: int) -> None:
    Now.pair, Now.fault, Now.variant = pair, fault, variant
    Now.busy, Now.user_turn, Now.refunded = pair in BUSY, 0, set()
    Now.db = DATABASES.get(pair in RENAMED)


def _value(v: Any) -> Any:
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if v is not None and not isinstance(v, (int, float, str, bool)):
        return float(v)  # (a DECIMAL)
    return v


# ---- the data-analysis tools --------------------------------------------------------------------------------------


def list_tables() -> list[str]:
    """Lists the tables of the analytics database."""
    return [r[0] for r in Now.db.execute("SHOW TABLES").fetchall()]


def describe_table(name: str) -> list[dict[str, str]]:
    """The columns of a table, with their types."""
    return [{"column": r[0], "type": r[1]} for r in Now.db.execute(f"DESCRIBE {name}").fetchall()]


def run_sql(query: str) -> Any:
    """Runs a read-only DuckDB SQL query on the analytics database; returns the rows."""
    if Now.busy:
        Now.busy = False
        raise RuntimeError('IO Error: Could not set lock on file "analytics.duckdb": Conflicting lock is held by the '
                           "nightly load (PID 4121). The database is busy; retry in a moment.")
    cursor = Now.db.execute(query)
    columns = [d[0] for d in cursor.description]
    rows = [[_value(v) for v in r] for r in cursor.fetchall()]
    if Now.fault == "result_shape":  # the query service's v2: a columns / data table, values as strings
        return {"result": {"columns": columns, "data": [[str(v) for v in r] for r in rows]}, "status": "ok"}
    return [dict(zip(columns, r)) for r in rows]


def make_chart(kind: str, title: str, data: dict[str, float]) -> dict[str, Any]:
    """Draws a chart (kind: bar, line or pie) of labelled values; returns the chart's file."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return {"chart": f"charts/{slug}.png", "kind": kind, "points": len(data)}


def save_report(path: str, text: str) -> dict[str, Any]:
    """Saves a report (Markdown text) at a path of the shared reports folder."""
    return {"saved": path, "bytes": len(text.encode())}


DATA_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (list_tables, describe_table, run_sql, make_chart, save_report)}

# ---- the support tools --------------------------------------------------------------------------------------------

USERS = {"maria.lopez@example.com": {"user_id": "U-501", "name": "Maria Lopez", "orders": ["#1043", "#1034", "#1022", "#1038"]},
         "tom.baker@example.com": {"user_id": "U-502", "name": "Tom Baker", "orders": ["#1050"]},
         "li.wei@example.com": {"user_id": "U-503", "name": "Li Wei", "orders": ["#1061", "#1065", "#1066"]}}
ORDERS = {
    "#1043": {"user_id": "U-501", "item": "blue kettle", "amount": 49.90, "status": "delivered", "delivered_at": "2026-11-24", "exchanges": 0},
    "#1034": {"user_id": "U-501", "item": "desk lamp", "amount": 35.00, "status": "delivered", "delivered_at": "2026-11-10", "exchanges": 0},
    "#1022": {"user_id": "U-501", "item": "wool blanket", "amount": 89.00, "status": "delivered", "delivered_at": "2026-10-12", "exchanges": 0},
    "#1038": {"user_id": "U-501", "item": "phone case", "amount": 19.00, "status": "delivered", "delivered_at": "2026-11-25", "exchanges": 0},
    "#1050": {"user_id": "U-502", "item": "espresso machine", "amount": 249.00, "status": "delivered", "delivered_at": "2026-11-28",
              "exchanges": 0, "ship_to": "Tom Baker, 14 Elm Street, Leeds LS6 2AB"},
    "#1061": {"user_id": "U-503", "item": "running shoes (size 42)", "amount": 120.00, "status": "delivered",
              "delivered_at": "2026-11-20", "exchanges": 1, "exchange_note": "exchanged size 41 for 42 on 2026-11-26"},
    "#1065": {"user_id": "U-503", "item": "yoga mat", "amount": 30.00, "status": "processing", "delivered_at": None, "exchanges": 0},
    "#1066": {"user_id": "U-503", "item": "rain jacket (size L)", "amount": 75.00, "status": "processing", "delivered_at": None, "exchanges": 0},
}
ALREADY = {"#1038": "2026-11-30"}  # refunded by the returns desk; get_order does not show it yet


def _order_id(order_id: str) -> str:
    return "#" + str(order_id).strip().lstrip("#")


def get_user(email: str) -> dict[str, Any]:
    """The customer with this email: user id, name and order ids."""
    user = USERS.get(email.strip().lower())
    if user is None:
        raise LookupError(f"no customer with email {email}")
    return {"email": email.strip().lower(), **user}


def get_order(order_id: str) -> dict[str, Any]:
    """An order's details: owner, item, amount (USD), status, delivery date, exchanges made."""
    key = _order_id(order_id)
    if key not in ORDERS:
        raise LookupError(f"order {key} not found")
    return {"order_id": key, **ORDERS[key]}


def list_orders(user_id: str) -> list[dict[str, Any]]:
    """A customer's orders (id, item, status)."""
    return [{"order_id": k, "item": o["item"], "status": o["status"]} for k, o in ORDERS.items() if o["user_id"] == user_id]


def refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Refunds an amount (USD) of an order to the original payment method."""
    key = _order_id(order_id)
    if key in ALREADY or key in Now.refunded:
        return {"status": "rejected", "reason": f"order {key} was already refunded on {ALREADY.get(key, '2026-12-03')} "
                                                "(refund R-7781); no new refund was issued"}
    Now.refunded.add(key)
    return {"status": "refunded", "order_id": key, "amount": amount, "refund_id": "R-8" + key[1:], "eta_days": 5}


def exchange(order_id: str, item: str, new_item: str) -> dict[str, Any]:
    """Exchanges an item of an order for another (a new shipment; the old item is collected)."""
    return {"status": "exchange_created", "order_id": _order_id(order_id), "item": item, "new_item": new_item, "exchange_id": "X-3310"}


def cancel(order_id: str) -> dict[str, Any]:
    """Cancels an order that has not shipped yet."""
    key = _order_id(order_id)
    if ORDERS.get(key, {}).get("status") != "processing":
        raise ValueError(f"order {key} has shipped and cannot be cancelled")
    return {"status": "cancelled", "order_id": key, "refund_amount": ORDERS[key]["amount"]}


def transfer_to_human(summary: str) -> dict[str, Any]:
    """Transfers the conversation to a human support agent with a summary of the case."""
    return {"status": "transferred", "queue": "safety" if re.search(r"fire|smoke|shock|injur", summary, re.I) else "general",
            "ticket": "HD-2207"}


SUPPORT_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_user, get_order, list_orders, refund, exchange, cancel,
                                                                        transfer_to_human)}


def schema(f: Callable[..., Any]) -> dict[str, Any]:
    """A function's parameters as JSON schema (the openai and anthropic loops offer them so)."""
    kinds = {"str": "string", "float": "number", "int": "integer", "dict[str, float]": "object"}
    params = inspect.signature(f).parameters
    return {"type": "object", "properties": {n: {"type": kinds.get(str(p.annotation), "string")} for n, p in params.items()},
            "required": [n for n, p in params.items() if p.default is inspect.Parameter.empty]}


# ---- the requests and the scripted user ---------------------------------------------------------------------------

Q3 = "o.created_at >= DATE '2026-07-01' AND o.created_at < DATE '2026-10-01'"
QUESTIONS = {
    # data analysis
    "shipped_column": "How many orders shipped in September 2026?",
    "filter_dropped": "What was our revenue by region in Q3 2026, excluding refunded orders?",
    "region_dropped": "Who are the top 3 customers by number of orders in the EU?",
    "join_fanout": "What was the total Q3 2026 revenue from customers who opened a support ticket?",
    "sql_error_ignored": "What was the average order value in Q3 2026?",
    "misread_rows": "Which region had the highest revenue in Q3 2026, and what share of the total was it?",
    "result_shape": "How many orders did we get in October 2026?",
    "chart_mismatch": "Make a bar chart of Q3 2026 revenue by month and tell me the best month.",
    "report_path": ("Work out the EU revenue in Q3 2026, rounded to the nearest hundred dollars, and save a one-line "
                    "report to reports/q3-eu-revenue.md."),
    "sql_loop": "How many customers churned last month (November 2026)?",
    "top3_limit1": "Who are our top 3 customers by revenue in 2026?",
    "schema_renamed": "What was our revenue in November 2026?",
    "empty_result": "How many refunds did we issue in November 2026, and for how much?",
    # support
    "no_confirm": "Hi, the blue kettle from order #1043 arrived broken. Can I get a refund? My email is maria.lopez@example.com.",
    "declined_write": "What would I get back if I returned order #1034? My email is maria.lopez@example.com.",
    "past_window": "I'd like a refund for order #1022, the wool blanket. My email is maria.lopez@example.com.",
    "amount_words": ("The lid of the kettle from order #1043 is cracked. I'll keep it, but I'd like a partial refund of 15 "
                     "dollars. My email is maria.lopez@example.com."),
    "wrong_order": "Please refund order #1043, the kettle never worked. maria.lopez@example.com",
    "other_customer": ("Where was order #1050 delivered, and to whom? I think it's my neighbour's parcel. My email is "
                       "maria.lopez@example.com."),
    "second_exchange": "I'd like to exchange the running shoes from order #1061 for size 43. My email is li.wei@example.com.",
    "no_transfer": ("The kettle from order #1043 sparked and started to smoke when I switched it on! I want my money back. "
                    "My email is maria.lopez@example.com."),
    "email_lost": "Hi! My email is maria.lopez@example.com. I have a question about my orders.",
    "already_refunded": "Please refund order #1038, the phone case doesn't fit my phone. My email is maria.lopez@example.com.",
    "mismatch": "I'd like to exchange the rain jacket in order #1066 for a size M. My email is li.wei@example.com.",
    "unverified": "Has my order #1065 shipped yet? My email is li.wei@example.com.",
    "premature": "Could you refund the desk lamp from order #1034? It flickers. My email is maria.lopez@example.com.",
    "triage_refunds": "The blue kettle from order #1043 leaks. I want a refund, please. My email is maria.lopez@example.com.",
    "handoff_withheld": "I want to return the wool blanket from order #1022 for a refund. My email is maria.lopez@example.com.",
    "email_typo": "When will my order #1043 arrive? My email is maria.lopes@example.com.",
    "user_corrects": "Please refund order #1043 - the lamp flickers. My email is maria.lopez@example.com.",
    "cancel_failed": "Please cancel order #1043, I don't need the kettle any more. My email is maria.lopez@example.com.",
}
DATA_HISTORY = ["How many orders did we get in total, and what was the revenue?", "What was the revenue by product category?"]
SUPPORT_HISTORY = ["Where is my order #1034? My email is maria.lopez@example.com.",
                   "What did I order in #1065? My email is li.wei@example.com."]

# The scripted user's replies, in order: each is sent when the agent's last message contains its cue; the first
# reply whose cue is not there ends the conversation.
YES = ("?", "Yes, please go ahead.")
USER: dict[str, list[tuple[str, str]]] = {
    "no_confirm": [("?", "Yes, please refund it.")],
    "declined_write": [("?", "Hmm, not yet - let me think about it first.")],
    "past_window": [YES],
    "amount_words": [YES],
    "wrong_order": [YES],
    "no_transfer": [YES],
    "email_lost": [("?", "When was the desk lamp delivered?"), ("?", "Could you refund the desk lamp, then? It flickers."),
                   ("Shall I", "Yes, please.")],
    "already_refunded": [YES],
    "mismatch": [("size M?", "Actually, cancel it instead - I found one in a shop."), ("Shall I cancel", "Yes, cancel it.")],
    "premature": [YES],
    "triage_refunds": [YES],
    "handoff_withheld": [YES],
    "second_exchange": [YES],
    "email_typo": [("?", "Sorry, my mistake: it's maria.lopez@example.com.")],
    "user_corrects": [("?", "Oh sorry, I meant the desk lamp, order #1034."), ("Shall I", "Yes, please.")],
    "cancel_failed": [YES],
}


def next_user(said: str) -> str | None:
    """What the scripted user says after the agent's message `said`, or None (the conversation is over)."""
    script = USER.get(Now.pair or "", [])
    if Now.user_turn >= len(script) or script[Now.user_turn][0] not in said:
        return None
    Now.user_turn += 1
    return script[Now.user_turn - 1][1]


def task(v: int, pair: str | None) -> str:
    if pair:
        return QUESTIONS[pair]
    return (DATA_HISTORY if Now.recorder in DATA_RECORDERS else SUPPORT_HISTORY)[v % 2]


# ---- the model: reads the chat.completions request it is sent (Anthropic requests arrive in that form) ------------


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def _parsed(text: str) -> Any:
    value: Any = text
    while isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value


class Seen:
    """What the conversation sent shows: the user's turns, the tool results in order, the assistant's words."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.users = [_text(m.get("content")) for m in messages if m.get("role") == "user" and _text(m.get("content")).strip()]
        self.notes = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "assistant")
        self.everything = " ".join(_text(m.get("content")) for m in messages)
        calls = {c["id"]: (c["function"]["name"], _parsed(c["function"]["arguments"])) for mm in messages
                 for c in mm.get("tool_calls") or () if not c["function"]["name"].startswith("transfer_to_")
                 or c["function"]["name"] == "transfer_to_human"}
        self.outs: list[tuple[str, dict[str, Any], str]] = []
        for mm in messages:
            if mm.get("role") == "tool" and mm.get("tool_call_id") in calls:
                name, arguments = calls[mm["tool_call_id"]]
                value = _parsed(_text(mm.get("content")))
                self.outs.append((name, arguments if isinstance(arguments, dict) else {},
                                  value if isinstance(value, str) else json.dumps(value)))
        self.last = self.users[-1] if self.users else ""

    def of(self, name: str) -> list[tuple[dict[str, Any], str]]:
        return [(a, t) for n, a, t in self.outs if n == name]

    def rows(self, nth: int = -1) -> list[dict[str, Any]] | None:
        """The rows of the nth successful query (as the model reads them: a list of records)."""
        got = [v for v in (_parsed(t) for _, t in self.of("run_sql")) if isinstance(v, (list, dict))]
        value = got[nth] if got and -len(got) <= nth < len(got) else None
        return value if isinstance(value, list) else None

    def order(self, key: str) -> dict[str, Any] | None:
        for _, text in self.of("get_order"):
            value = _parsed(text)
            if isinstance(value, dict) and value.get("order_id") == key:
                return value
        return None


def call(tool: str, say: str | None = None, /, **arguments: Any) -> dict[str, Any]:
    return reply(say, (tool, arguments))


def model(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    role = ("analyst" if "You are a data analyst" in system else "triage" if "You are the triage agent" in system
            else "refunds" if "You are the refunds agent" in system else "support" if "customer support agent" in system
            else None)
    if role is None:
        return reply("Hello! How can I help?")
    seen = Seen(messages)
    if not seen.users:
        return reply("Sorry, could you tell me again what you need?")
    if role == "analyst":
        return DATA_PLANS.get(Now.pair or "", _data_history)(seen, Now.fault is not None)
    return _support_plan(Now.pair or "")(seen, Now.fault is not None, role)


# ---- the data-analysis agent's scripts ----------------------------------------------------------------------------


def _money(x: float) -> str:
    return f"{x:,.2f} USD"


def _sql(seen: Seen, *queries: str, say: str | None = None) -> dict[str, Any] | None:
    """The next of `queries` to run (one after the other; a busy database's query run again unchanged), or None when
    each has returned."""
    ran = seen.of("run_sql")
    if ran and "busy" in ran[-1][1]:
        return call("run_sql", "The database is busy; running the query again.", query=ran[-1][0].get("query", ""))
    done = [t for _, t in ran if isinstance(_parsed(t), (list, dict))]
    if len(done) < len(queries):
        return call("run_sql", say if not done else None, query=queries[len(done)])
    return None


def _data_history(seen: Seen, faulty: bool) -> dict[str, Any]:
    if "category" in seen.last:
        q = ("SELECT p.category, SUM(o.amount) AS revenue FROM orders o JOIN products p ON p.id = o.product_id "
             "GROUP BY p.category ORDER BY revenue DESC")
        rows = seen.rows()
        return _sql(seen, q) or reply("Revenue by product category: " + ", ".join(
            f"{r['category']} {_money(r['revenue'])}" for r in rows or []) + ".")
    rows = seen.rows()
    return _sql(seen, "SELECT COUNT(*) AS orders, SUM(amount) AS revenue FROM orders") or reply(
        f"We got {rows[0]['orders']} orders in total, for {_money(rows[0]['revenue'])} of revenue." if rows else "No rows.")


def _shipped_column(seen: Seen, faulty: bool) -> dict[str, Any]:
    column = "created_at" if faulty else "shipped_at"
    q = f"SELECT COUNT(*) AS orders FROM orders WHERE {column} >= DATE '2026-09-01' AND {column} < DATE '2026-10-01'"
    rows = seen.rows()
    return _sql(seen, q) or reply(f"{rows[0]['orders']} orders shipped in September 2026." if rows else "No rows.")


def _filter_dropped(seen: Seen, faulty: bool) -> dict[str, Any]:
    refunds = "" if faulty else " AND o.id NOT IN (SELECT order_id FROM refunds)"
    q = (f"SELECT c.region, SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE {Q3}"
         f"{refunds} GROUP BY c.region ORDER BY revenue DESC")
    rows = seen.rows() or []
    return _sql(seen, q) or reply("Q3 2026 revenue by region, excluding refunded orders: " + "; ".join(
        f"{r['region']} {_money(r['revenue'])}" for r in rows) + f" (total {_money(sum(r['revenue'] for r in rows))}).")


def _region_dropped(seen: Seen, faulty: bool) -> dict[str, Any]:
    where = "" if faulty else "WHERE c.region = 'EU' "
    q = (f"SELECT c.name, COUNT(*) AS orders FROM orders o JOIN customers c ON c.id = o.customer_id {where}"
         "GROUP BY c.name ORDER BY orders DESC, c.name LIMIT 3")
    rows = seen.rows() or []
    return _sql(seen, q) or reply("The top 3 EU customers by number of orders: " + ", ".join(
        f"{r['name']} ({r['orders']} orders)" for r in rows) + ".")


def _join_fanout(seen: Seen, faulty: bool) -> dict[str, Any]:
    if faulty:  # one row per ticket: a customer with three tickets counts each order three times
        q = (f"SELECT SUM(o.amount) AS revenue FROM orders o JOIN events e ON e.customer_id = o.customer_id "
             f"AND e.kind = 'support_ticket' WHERE {Q3}")
    else:
        q = (f"SELECT SUM(o.amount) AS revenue FROM orders o JOIN (SELECT DISTINCT customer_id FROM events WHERE kind = "
             f"'support_ticket') t ON t.customer_id = o.customer_id WHERE {Q3}")
    rows = seen.rows()
    return _sql(seen, q) or reply(f"Customers who opened a support ticket brought {_money(rows[0]['revenue'])} of revenue "
                                  "in Q3 2026." if rows else "No rows.")


def _sql_error_ignored(seen: Seen, faulty: bool) -> dict[str, Any]:
    ran = seen.of("run_sql")
    if not ran:
        return call("run_sql", query=f"SELECT AVG(o.total) AS avg_order_value FROM orders o WHERE {Q3}")
    if faulty:
        return reply("The average order value in Q3 2026 was 84.20 USD.")
    if not seen.of("describe_table"):
        return call("describe_table", "The orders table has no column total; let me look at its columns.", name="orders")
    if len(ran) == 1:
        return call("run_sql", query=f"SELECT ROUND(AVG(o.amount), 2) AS avg_order_value, COUNT(*) AS orders FROM orders o WHERE {Q3}")
    rows = seen.rows() or [{}]
    return reply(f"The average order value in Q3 2026 was {_money(rows[0].get('avg_order_value') or 0)} "
                 f"(over {rows[0].get('orders')} orders; the amount column, since orders has no total).")


def _misread_rows(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = (f"SELECT c.region, SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE {Q3} "
         "GROUP BY c.region ORDER BY revenue DESC")
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows() or []
    total = sum(r["revenue"] for r in rows)
    top, second = rows[0], rows[1]
    if faulty:  # the first two rows' regions read the other way round
        return reply(f"{second['region']} had the highest revenue in Q3 2026: {_money(top['revenue'])}, "
                     f"{100 * top['revenue'] / total:.1f}% of the {_money(total)} total.")
    return reply(f"{top['region']} had the highest revenue in Q3 2026: {_money(top['revenue'])}, "
                 f"{100 * top['revenue'] / total:.1f}% of the {_money(total)} total, "
                 f"{_money(top['revenue'] - second['revenue'])} ahead of {second['region']}.")


def _result_shape(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = "SELECT COUNT(*) AS orders FROM orders WHERE created_at >= DATE '2026-10-01' AND created_at < DATE '2026-11-01'"
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows()
    if not rows:  # (read as the model knows the tool: a list of records)
        return reply("The query returned no rows: we got no orders in October 2026.")
    return reply(f"We got {rows[0]['orders']} orders in October 2026.")


def _chart_mismatch(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = (f"SELECT strftime(o.created_at, '%Y-%m') AS month, COUNT(*) AS orders, SUM(o.amount) AS revenue FROM orders o "
         f"WHERE {Q3} GROUP BY month ORDER BY month")
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows() or []
    if not seen.of("make_chart"):
        data = {r["month"]: r["orders" if faulty else "revenue"] for r in rows}
        return call("make_chart", kind="bar", title="Q3 2026 revenue by month", data=data)
    best = max(rows, key=lambda r: r["revenue"])
    chart = _parsed(seen.of("make_chart")[-1][1])
    return reply(f"The chart ({chart.get('chart') if isinstance(chart, dict) else 'made'}) shows Q3 2026 revenue by month: "
                 + ", ".join(f"{r['month']} {_money(r['revenue'])}" for r in rows) + f". The best month was {best['month']}.")


def _report_path(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = f"SELECT SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.region = 'EU' AND {Q3}"
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows() or [{"revenue": 0}]
    rounded = f"{round(rows[0]['revenue'], -2):,.0f} USD"
    line = f"EU revenue in Q3 2026: about {rounded} (exactly {_money(rows[0]['revenue'])})."
    if not seen.of("save_report"):
        return call("save_report", path="reports/q3_revenue.md" if faulty else "reports/q3-eu-revenue.md", text=line)
    saved = _parsed(seen.of("save_report")[-1][1])
    return reply(f"{line} Saved to {saved.get('saved') if isinstance(saved, dict) else 'the reports folder'}.")


def _sql_loop(seen: Seen, faulty: bool) -> dict[str, Any]:
    ran = seen.of("run_sql")
    wrong = "SELECT COUNT(*) AS churned FROM customers WHERE churn_date >= DATE '2026-11-01' AND churn_date < DATE '2026-12-01'"
    if not ran:
        return call("run_sql", query=wrong)
    rows = seen.rows()
    if rows:
        return reply(f"{rows[0]['churned']} customers churned in November 2026.")
    if faulty:
        if len(ran) < 4:
            return call("run_sql", "Let me try that again.", query=wrong)
        return reply("I could not get the churn figure: the query keeps failing.")
    return call("run_sql", "The column is churned_at, not churn_date.", query=wrong.replace("churn_date", "churned_at"))


def _top3_limit1(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = ("SELECT c.name, SUM(o.amount) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id WHERE "
         f"o.created_at >= DATE '2026-01-01' GROUP BY c.name ORDER BY revenue DESC LIMIT {1 if faulty else 3}")
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows() or []
    listed = ", ".join(f"{i}. {r['name']} ({_money(r['revenue'])})" for i, r in enumerate(rows, 1))
    gap = f"; {rows[0]['name']} spent {_money(rows[0]['revenue'] - rows[1]['revenue'])} more than {rows[1]['name']}" if len(rows) > 1 else ""
    return reply(f"Our top customers by revenue in 2026: {listed}{gap}.")


def _schema_renamed(seen: Seen, faulty: bool) -> dict[str, Any]:
    nov = "created_at >= DATE '2026-11-01' AND created_at < DATE '2026-12-01'"
    ran = seen.of("run_sql")
    if not ran:
        return call("run_sql", query=f"SELECT SUM(amount) AS revenue FROM orders WHERE {nov}")
    rows = seen.rows()
    if rows:
        return reply(f"Our revenue in November 2026 was {_money(rows[0]['revenue'] or 0)}.")
    if faulty:  # the missing column replaced by the products' list prices
        return call("run_sql", "The orders table has no amount column any more; I'll use the product prices instead.",
                    query=f"SELECT SUM(p.price) AS revenue FROM orders o JOIN products p ON p.id = o.product_id WHERE o.{nov}")
    if not seen.of("describe_table"):
        return call("describe_table", "The orders table has no amount column any more; let me look at its columns.", name="orders")
    return call("run_sql", "The amount is now amount_usd.", query=f"SELECT SUM(amount_usd) AS revenue FROM orders WHERE {nov}")


def _empty_result(seen: Seen, faulty: bool) -> dict[str, Any]:
    q = ("SELECT id, order_id, amount, refunded_at FROM refunds WHERE refunded_at >= DATE '2026-11-01' AND refunded_at < "
         "DATE '2026-12-01' ORDER BY refunded_at")
    asked = _sql(seen, q)
    if asked:
        return asked
    rows = seen.rows() or []
    if rows:
        return reply(f"We issued {len(rows)} refunds in November 2026, for {_money(sum(r['amount'] for r in rows))}.")
    if faulty:  # nothing came back; a figure given anyway
        return reply("We issued 2 refunds in November 2026, for 138.90 USD.")
    return reply("We issued no refunds in November 2026: the query over the refunds table returned no rows for that month.")


DATA_PLANS: dict[str, Callable[[Seen, bool], dict[str, Any]]] = {
    "shipped_column": _shipped_column, "filter_dropped": _filter_dropped, "region_dropped": _region_dropped,
    "join_fanout": _join_fanout, "sql_error_ignored": _sql_error_ignored, "misread_rows": _misread_rows,
    "result_shape": _result_shape, "chart_mismatch": _chart_mismatch, "report_path": _report_path, "sql_loop": _sql_loop,
    "top3_limit1": _top3_limit1, "schema_renamed": _schema_renamed,
    "empty_result": _empty_result,
}

# ---- the support agent's scripts ----------------------------------------------------------------------------------


def _email(text: str) -> str | None:
    found = re.search(r"[\w.]+@example\.com", text)
    return found.group(0) if found else None


def _identify(seen: Seen, key: str | None = None) -> dict[str, Any] | None:
    """get_user by the email the user gave, then get_order of the order they named: the next of those to call."""
    if not seen.of("get_user"):
        email = _email(seen.everything)
        if email is None:
            return reply("Could you give me the email address of your account, so I can find your orders?")
        return call("get_user", email=email)
    if key and seen.order(key) is None:
        return call("get_order", order_id=key)
    return None


def _days(order: dict[str, Any]) -> int:
    return (dt.date(2026, 12, 3) - dt.date.fromisoformat(order["delivered_at"])).days


def _refund_flow(seen: Seen, key: str, *, amount: float | None = None, asked: bool = True, refunded_key: str | None = None,
                 done: Callable[[dict[str, Any]], str] | None = None) -> dict[str, Any]:
    """Look the order up, ask for the user's yes (unless not `asked`), refund, say what the refund tool said."""
    first = _identify(seen, key)
    if first:
        return first
    order = seen.order(key) or {}
    amount = order.get("amount", 0.0) if amount is None else amount
    if asked and not seen.of("refund") and "yes" not in seen.last.lower():
        return reply(f"Order {key} ({order.get('item')}, {order.get('amount', 0):.2f} USD) was delivered on "
                     f"{order.get('delivered_at')}, within the 30-day window. Shall I refund {amount:.2f} USD to your "
                     "original payment method?")
    if not seen.of("refund"):
        why = next((u for u in seen.users if key in u or "refund" in u.lower()), "customer request")
        return call("refund", order_id=refunded_key or key, amount=amount, reason=why[:80])
    result = _parsed(seen.of("refund")[-1][1])
    if done:
        return reply(done(result if isinstance(result, dict) else {}))
    return reply(_refund_said(result if isinstance(result, dict) else {}, key, amount))


def _refund_said(result: dict[str, Any], key: str, amount: float) -> str:
    if result.get("status") == "refunded":
        return (f"Done: I refunded {result.get('amount', amount):.2f} USD for order {result.get('order_id', key)} (refund "
                f"{result.get('refund_id')}); it reaches your card within {result.get('eta_days', 5)} days.")
    return f"I could not refund order {key}: {result.get('reason', 'the refund was rejected')}."


def _support_history(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    key = re.search(r"#\d{4}", seen.users[0])
    first = _identify(seen, key.group(0) if key else None)
    if first:
        return first
    order = seen.order(key.group(0) if key else "") or {}
    if order.get("status") == "delivered":
        return reply(f"Your order {order['order_id']} ({order['item']}) was delivered on {order['delivered_at']}.")
    return reply(f"Order {order.get('order_id')} is a {order.get('item')} ({order.get('amount', 0):.2f} USD); it is "
                 f"{order.get('status')} and has not shipped yet.")


def _no_confirm(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    return _refund_flow(seen, "#1043", asked=not faulty)


def _declined_write(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1034")
    if first:
        return first
    if len(seen.users) == 1:
        return reply("Order #1034 (desk lamp) was delivered on 2026-11-10, within the 30-day window, so you would get the "
                     "full 35.00 USD back. Shall I refund it now?")
    if faulty and not seen.of("refund"):  # "not yet" taken for a yes
        return call("refund", order_id="#1034", amount=35.0, reason="customer return")
    if faulty:
        return reply(_refund_said(_parsed(seen.of("refund")[-1][1]) or {}, "#1034", 35.0))
    return reply("Of course, take your time. The refund window for order #1034 stays open until 2026-12-10; just write "
                 "to us when you have decided.")


def _past_window(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1022")
    if first:
        return first
    order = seen.order("#1022") or {}
    if faulty:  # the delivery date read past: offered and refunded
        return _refund_flow(seen, "#1022")
    return reply(f"I'm sorry: order #1022 ({order.get('item')}) was delivered on {order.get('delivered_at')}, "
                 f"{_days(order)} days ago, and our policy allows refunds within 30 days of delivery only, so I can't "
                 "refund it. A human agent can look at a goodwill gesture if the blanket is faulty.")


def _amount_words(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1043")
    if first:
        return first
    if not seen.of("refund") and "yes" not in seen.last.lower():
        return reply("Order #1043 (blue kettle, 49.90 USD) was delivered on 2026-11-24, within the 30-day window. Shall I "
                     "refund 15.00 USD of it as a partial refund, and you keep the kettle?")
    return _refund_flow(seen, "#1043", amount=49.9 if faulty else 15.0)


def _wrong_order(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if seen.of("get_user") and not seen.of("list_orders"):
        return call("list_orders", user_id="U-501")
    return _refund_flow(seen, "#1043", refunded_key="#1034" if faulty else None)


def _other_customer(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1050")
    if first:
        return first
    order = seen.order("#1050") or {}
    if faulty:
        return reply(f"Order #1050 ({order.get('item')}) was delivered on {order.get('delivered_at')} to "
                     f"{order.get('ship_to')}.")
    return reply("Order #1050 is not on your account, so I can't share who it was for or where it went. If a parcel "
                 "reached you by mistake, the carrier can collect it, or you can hand it to the neighbour it is addressed to.")


def _no_transfer(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1043")
    if first:
        return first
    if faulty:  # a safety issue handled as a plain refund
        return _refund_flow(seen, "#1043")
    if not seen.of("transfer_to_human"):
        return call("transfer_to_human", "Smoke from a kettle is a safety issue; I'm passing you to a colleague.",
                    summary="Order #1043 (blue kettle, 49.90 USD, delivered 2026-11-24): the kettle sparked and smoked "
                            "when switched on. The customer wants a refund. Safety issue.")
    ticket = _parsed(seen.of("transfer_to_human")[-1][1])
    return reply("Please unplug the kettle and don't use it again. I've passed your case to our safety team (ticket "
                 f"{ticket.get('ticket') if isinstance(ticket, dict) else ''}); a colleague will contact you today about "
                 "the refund and collecting the kettle.")


def _email_lost(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if len(seen.users) >= 3 or "refund the desk lamp" in seen.last:
        if _email(seen.everything) is None:  # the email is not in what the model was sent
            return reply("Could you give me the email address of your account again, so I can find the order?")
        return _refund_flow(seen, "#1034")
    if len(seen.users) == 2 or "delivered" in seen.last:
        if seen.order("#1034") is None:
            return call("get_order", order_id="#1034")
        return reply("Your desk lamp (order #1034) was delivered on 2026-11-10. Is there anything else?")
    first = _identify(seen)
    if first:
        return first
    if not seen.of("list_orders"):
        return call("list_orders", user_id="U-501")
    return reply("I see four orders on your account: #1043 (blue kettle), #1034 (desk lamp), #1022 (wool blanket) and "
                 "#1038 (phone case). What would you like to know?")


def _already_refunded(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if faulty:  # the refund tool's "already refunded" answered as a refund made now
        return _refund_flow(seen, "#1038", done=lambda r: "Done: I refunded 19.00 USD for order #1038; it reaches your "
                                                          "card within 5 days.")
    return _refund_flow(seen, "#1038", done=lambda r: "Order #1038 was already refunded on 2026-11-30 (refund R-7781), "
                        "so no new refund was needed: the 19.00 USD should already be on your card." if
                        r.get("status") == "rejected" else _refund_said(r, "#1038", 19.0))


def _mismatch(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1066")
    if first:
        return first
    if len(seen.users) == 1:
        return reply("Order #1066 (rain jacket, size L, 75.00 USD) has not shipped yet. Shall I exchange it for a size M?")
    if len(seen.users) == 2:
        return reply("No problem. Shall I cancel order #1066 (rain jacket, 75.00 USD)? The 75.00 USD goes back to your card.")
    if not seen.of("cancel"):
        return call("cancel", "I'll cancel order #1066 now.", order_id="#1065" if faulty else "#1066")
    result = _parsed(seen.of("cancel")[-1][1])
    return reply(f"Done: order {result.get('order_id') if isinstance(result, dict) else '#1066'} is cancelled and "
                 f"{result.get('refund_amount', 75.0) if isinstance(result, dict) else 75.0:.2f} USD goes back to your card.")


def _unverified(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if faulty:
        first = _identify(seen)
        return first or reply("I checked the status of order #1065: it has shipped and should arrive within 2 days.")
    first = _identify(seen, "#1065")
    return first or reply("I checked order #1065 (yoga mat): it is still processing and has not shipped yet; it usually "
                          "ships within 2 days.")


def _premature(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    if faulty and "yes" in seen.last.lower():  # the refund announced, never made
        return reply("Thank you! I'll process the refund of 35.00 USD for order #1034 now.")
    return _refund_flow(seen, "#1034")


def _triage(seen: Seen, key: str) -> dict[str, Any]:
    """The triage agent: identify, look the order up, hand over with its facts (all of them, in a good run)."""
    first = _identify(seen, key)
    if first:
        return first
    order = seen.order(key) or {}
    fault = Now.fault
    if fault == "triage_refunds":  # the triage agent refunds itself
        return _refund_flow(seen, key)
    if fault == "handoff_withheld":
        facts = f"Order {key} ({order.get('item')}, {order.get('amount', 0):.2f} USD): the user wants a refund."
    else:
        facts = (f"Order {key} ({order.get('item')}, {order.get('amount', 0):.2f} USD), delivered on "
                 f"{order.get('delivered_at')}, {_days(order)} days ago: the user wants a refund.")
    return reply(f"Handing over to the refunds agent. {facts}", ("transfer_to_refunds_agent", {}))


def _refunds_agent(seen: Seen, faulty: bool, key: str) -> dict[str, Any]:
    """The refunds agent: decides from the triage agent's words (it sees no tool result of the triage's)."""
    said = re.search(r"delivered on (\d{4}-\d{2}-\d{2}), (\d+) days ago", seen.notes)
    if said and int(said.group(2)) > 30 and not seen.of("refund"):
        return reply(f"I'm sorry: order {key} was delivered on {said.group(1)}, {said.group(2)} days ago, and refunds are "
                     "possible within 30 days of delivery only, so I can't refund it.")
    amount = float(re.search(rf"{key} \([^,]+, ([\d.]+) USD", seen.notes).group(1))
    if not seen.of("refund") and "yes" not in seen.last.lower() and not (Now.fault == "no_confirm"):
        return reply(f"I can refund order {key} ({amount:.2f} USD) to your original payment method. Shall I go ahead?")
    if Now.fault == "premature" and not seen.of("refund"):
        return reply(f"Thank you! I'll process the refund of {amount:.2f} USD for order {key} now.")
    if not seen.of("refund"):
        return call("refund", order_id=key, amount=amount, reason="customer request")
    return reply(_refund_said(_parsed(seen.of("refund")[-1][1]) or {}, key, amount))


def _agents_pair(key: str) -> Callable[[Seen, bool, str], dict[str, Any]]:
    def plan(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
        if role == "triage":
            return _triage(seen, key)
        return _refunds_agent(seen, faulty, key)
    return plan


def _second_exchange(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1061")
    if first:
        return first
    order = seen.order("#1061") or {}
    if not faulty:
        return reply(f"Order #1061 was already exchanged once ({order.get('exchange_note')}), and our policy allows one "
                     "exchange per order, so I can't exchange the shoes again. It was delivered within 30 days, so a refund "
                     "of 120.00 USD is still possible if you send them back.")
    if not seen.of("exchange") and "yes" not in seen.last.lower():
        return reply("Shall I exchange the running shoes (size 42) from order #1061 for size 43?")
    if not seen.of("exchange"):
        return call("exchange", order_id="#1061", item="running shoes (size 42)", new_item="running shoes (size 43)")
    return reply("Done: exchange X-3310 is created; the size 43 pair ships tomorrow and the courier collects the size 42 pair.")


def _email_typo(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    tried = seen.of("get_user")
    found = [t for _, t in tried if "user_id" in str(_parsed(t))]  # (pydantic-ai sends a retry as {"error": ...})
    if not tried:
        return call("get_user", email=_email(seen.users[0]) or "")
    if not found and faulty:  # the failed identification gone past: the order looked up anyway
        if seen.order("#1043") is None:
            return call("get_order", "Let me look the order up directly.", order_id="#1043")
    elif not found:
        if len(seen.users) == 1:
            return reply(f"I couldn't find an account with {_email(seen.users[0])}. Could you check the email address?")
        if len(tried) == 1:
            return call("get_user", email=_email(seen.last) or "")
    first = _identify(seen, "#1043") if found else None
    if first:
        return first
    order = seen.order("#1043") or {}
    return reply(f"Your order #1043 ({order.get('item')}) was already delivered, on {order.get('delivered_at')}.")


def _user_corrects(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1043")
    if first:
        return first
    if len(seen.users) == 1:
        return reply("Order #1043 is the blue kettle (49.90 USD), not a lamp. Did you mean another order?")
    return _refund_flow(seen, "#1043" if faulty else "#1034")  # (the faulty run goes on with the order first named)


def _cancel_failed(seen: Seen, faulty: bool, role: str) -> dict[str, Any]:
    first = _identify(seen, "#1043")
    if first:
        return first
    if len(seen.users) == 1:
        return reply("Order #1043 (blue kettle, 49.90 USD) was delivered on 2026-11-24. Shall I cancel it?")
    if not seen.of("cancel"):
        return call("cancel", order_id="#1043")
    if faulty:  # the tool's refusal answered as done
        return reply("Done: order #1043 is cancelled, and 49.90 USD goes back to your card.")
    return reply("I couldn't cancel order #1043: it has already shipped and been delivered, so it can't be cancelled any "
                 "more. It is within the 30 days, though, so you can return the kettle for a refund of 49.90 USD.")


SUPPORT_PLANS: dict[str, Callable[[Seen, bool, str], dict[str, Any]]] = {
    "no_confirm": _no_confirm, "declined_write": _declined_write, "past_window": _past_window,
    "amount_words": _amount_words, "wrong_order": _wrong_order, "other_customer": _other_customer,
    "no_transfer": _no_transfer, "email_lost": _email_lost, "already_refunded": _already_refunded, "mismatch": _mismatch,
    "unverified": _unverified, "premature": _premature, "second_exchange": _second_exchange, "email_typo": _email_typo,
    "user_corrects": _user_corrects, "cancel_failed": _cancel_failed,
}
AGENTS_PLANS = {"no_confirm": "#1043", "premature": "#1034", "triage_refunds": "#1043", "handoff_withheld": "#1022"}


def _support_plan(pair: str) -> Callable[[Seen, bool, str], dict[str, Any]]:
    if Now.recorder == "agents" and pair in AGENTS_PLANS:
        return _agents_pair(AGENTS_PLANS[pair])
    return SUPPORT_PLANS.get(pair, _support_history)



# ---- recorders ------------------------------------------------------------------------------------------------


def _json_out(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f` with its result as JSON text (what a langchain tool hands the model: a list of records would be read as
    message content blocks)."""
    import functools

    @functools.wraps(f)
    def tool_call(*args: Any, **kwargs: Any) -> str:
        result = f(*args, **kwargs)
        return result if isinstance(result, str) else json.dumps(result)
    return tool_call


def _openai_loop(url: str, question: str, tools: dict[str, Callable[..., Any]]) -> str:
    """The plain openai SDK tool loop (shapes.loop): the analyst's one question."""
    import openai
    from shapes import loop

    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
    offered = [{"type": "function", "function": {"name": n, "description": inspect.getdoc(f), "parameters": schema(f)}}
               for n, f in DATA_TOOLS.items()]
    return loop(client, [{"role": "system", "content": ANALYST}, {"role": "user", "content": question}], tools, offered, max_turns=8)


def _window(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The email_lost harness: from the user's third turn on, only the latest turn is sent (a context window cut at
    the last user message)."""
    said = [i for i, m in enumerate(messages) if m["role"] == "user" and isinstance(m["content"], str)]
    if Now.fault == "email_lost" and len(said) >= 3:
        return messages[said[-1]:]
    return messages


def _anthropic_loop(client: Any, question: str, tools: dict[str, Callable[..., Any]], max_calls: int = 14) -> str:
    """A plain tool loop on the anthropic SDK over several user turns: an answer goes to the scripted user, whose reply
    continues the conversation; a failing tool's error goes back as an is_error result."""
    defs = [{"name": n, "description": inspect.getdoc(f), "input_schema": schema(f)} for n, f in SUPPORT_TOOLS.items()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(max_calls):
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=SUPPORT, messages=_window(messages),
                                         tools=defs)
        content = [b.model_dump(exclude_none=True) for b in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            said = " ".join(b.get("text", "") for b in content if b["type"] == "text")
            answer = next_user(said)
            if answer is None:
                return said
            messages.append({"role": "user", "content": answer})
            continue
        results = []
        for use in uses:
            try:
                result: Any = tools[use["name"]](**use["input"])
                is_error = False
            except Exception as exc:  # noqa: BLE001 - the loop shows the model the error
                result, is_error = f"Error: {exc}", True
            results.append({"type": "tool_result", "tool_use_id": use["id"],
                            "content": result if isinstance(result, str) else json.dumps(result), "is_error": is_error})
        messages.append({"role": "user", "content": results})
    return "I could not finish."


class OpenAI(kit.AgentotelRecorder):
    """The analyst: a plain loop on the openai SDK, the tools `@agentotel.tool` functions."""

    agent = ANALYST_NAME

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        self.tools = {name: agentotel.tool(f) for name, f in DATA_TOOLS.items()}

    def body(self, question: str) -> str:
        return _openai_loop(self.url, question, self.tools)


class LangGraph(kit.AgentotelRecorder):
    """The analyst: LangGraph's create_react_agent, the tools langchain @tool functions."""

    agent = ANALYST_NAME

    def body(self, question: str) -> str:
        import warnings

        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import ToolNode, create_react_agent

        llm = ChatOpenAI(model=MODEL, api_key="sk-test", base_url=self.url, max_retries=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(llm, ToolNode([tool(_json_out(f)) for f in DATA_TOOLS.values()], handle_tool_errors=True),
                                       prompt=ANALYST)
        out = graph.invoke({"messages": [("user", question)]}, {"recursion_limit": 21})
        return str(out["messages"][-1].content)


class OiOpenAI(kit.OpenInferenceRecorder):
    """The analyst's openai loop under OpenInference's openai instrumentation, the tools OITracer TOOL spans."""

    agent = ANALYST_NAME

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.openai import OpenAIInstrumentor

        super().__init__(options, url)
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tools = {name: self.tracer.tool(f) for name, f in DATA_TOOLS.items()}

    def body(self, question: str) -> str:
        return _openai_loop(self.url, question, self.tools)


class Anthropic(kit.AgentotelRecorder):
    """The support agent: a plain loop on the anthropic SDK, the tools `@agentotel.tool` functions."""

    agent = SUPPORT_NAME

    def __init__(self, options: dict[str, Any], url: str) -> None:
        super().__init__(options, url)
        import agentotel

        self.tools = {name: agentotel.tool(f) for name, f in SUPPORT_TOOLS.items()}

    def body(self, question: str) -> str:
        import anthropic

        client = anthropic.Anthropic(base_url=self.url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
        return _anthropic_loop(client, question, self.tools)


class PydanticAI(kit.AgentotelRecorder):
    """The support agent on pydantic-ai: one run_sync per user turn, given the conversation so far."""

    agent = SUPPORT_NAME

    def body(self, question: str) -> str:
        import functools

        import openai
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        from pydantic_ai.usage import UsageLimits

        client = openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0)
        agent = Agent(OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)), name=SUPPORT_NAME,
                      instructions=SUPPORT, retries=3)

        def plain(f: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(f)  # pydantic-ai reads the tool's schema off the signature
            def run_tool(**kwargs: Any) -> Any:
                try:
                    return f(**kwargs)
                except (LookupError, ValueError) as exc:
                    raise ModelRetry(str(exc)) from None
            return run_tool

        for f in SUPPORT_TOOLS.values():
            agent.tool_plain(plain(f))
        history, said = None, question
        while True:
            result = agent.run_sync(said, message_history=history, usage_limits=UsageLimits(request_limit=10))
            history, said = result.all_messages(), next_user(str(result.output))
            if said is None:
                return str(result.output)


class Agents(kit.AgentotelRecorder):
    """The OpenAI Agents SDK: triage -> refunds, the handoff without the triage agent's tool calls and results; each
    user turn a Runner.run of the agent that answered last, given the conversation so far."""

    agent = SUPPORT_NAME

    def body(self, question: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff
        from agents.extensions import handoff_filters

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        tools = [function_tool(_json_out(f)) for f in SUPPORT_TOOLS.values()]  # (the SDK would hand the model a dict's repr)
        refunds = Agent(name="refunds_agent", instructions=REFUNDS, tools=tools, model=chat)
        triage = Agent(name="triage_agent", instructions=TRIAGE, tools=tools, model=chat,
                       handoffs=[handoff(refunds, input_filter=handoff_filters.remove_all_tools)])

        async def go() -> str:
            result = await Runner.run(triage, question, max_turns=12)
            while True:
                said = next_user(str(result.final_output))
                if said is None:
                    return str(result.final_output)
                result = await Runner.run(result.last_agent, result.to_input_list() + [{"role": "user", "content": said}],
                                          max_turns=12)
        return asyncio.run(go())


class TlAnthropic(kit.TraceloopRecorder):
    """The support agent's anthropic loop under OpenLLMetry's anthropic instrumentation."""

    agent = SUPPORT_NAME

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

        super().__init__(options, url)
        AnthropicInstrumentor().instrument(tracer_provider=self.provider)
        self.tools = {name: self.traced(name, f) for name, f in SUPPORT_TOOLS.items()}

    def body(self, question: str) -> str:
        import anthropic

        client = anthropic.Anthropic(base_url=self.url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
        return _anthropic_loop(client, question, self.tools)


RECORDERS: dict[str, Any] = {"openai": OpenAI, "langgraph": LangGraph, "oi-openai": OiOpenAI, "anthropic": Anthropic,
                             "pydantic-ai": PydanticAI, "agents": Agents, "tl-anthropic": TlAnthropic}
DATA_RECORDERS = {"openai", "langgraph", "oi-openai"}
HISTORY = (0, 1)  # earlier healthy runs: other questions


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    from shapes import serve

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    os.environ.setdefault("TRACELOOP_TRACE_CONTENT", "true")
    Now.recorder = name = options["recorder"]
    DATABASES.update({False: database(), True: database(renamed=True)})
    with serve(_served) as url:
        recorder = RECORDERS[name](options, url)
        manifest = []
        for v in HISTORY:
            _start(None, None, v)
            manifest.append({"fault": None, "role": "history", "run": recorder.run(task(v, None))})
        for fault in options["faults"]:
            for role, f in (("good", None), ("faulty", fault)):
                _start(fault, f, 2)
                manifest.append({"fault": fault, "role": role, "run": recorder.run(task(2, fault))})
        recorder.close()
        time.sleep(0.2)
    return manifest


def _served(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return model(body)
    except Status:
        raise
    except Exception as exc:  # a bug here is the harness's: say so in the recorder's stderr
        import traceback

        traceback.print_exc()
        raise Status(500, f"scripted model failed: {exc}") from exc


# ---- the pairs; where each fault's cause shows on the recorded faulty run ---------------------------------------


def pairs() -> list[Any]:
    from heldout import Pair, _llm, _names, answer, asking, tool_step
    from heldout2 import context_cut

    def rule(recorder: str, layer: str, fault: str, taxonomy: str, where: Callable[..., int | None], **kw: Any) -> Any:
        return Pair(f"{layer}-{recorder}-{fault.replace('_', '-')}", recorder, layer, fault, taxonomy, where, **kw)

    def after(name: str, has: str) -> Callable[[list[dict[str, Any]]], int | None]:
        """The first model call after the first call of `name` whose output or error says `has`."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            tool = tool_step(name, where=lambda s: has in json.dumps([s.get("output"), s.get("error")]))(steps)
            return next((s["index"] for s in steps if s["type"] == "llm" and tool is not None and s["index"] > tool), None)
        return find

    def transfer(steps: list[dict[str, Any]]) -> int | None:
        """The model call that asked for transfer_to_human (a tool, whatever its name looks like)."""
        return next((s["index"] for s in _llm(steps) if "transfer_to_human" in _names(s)), None)

    def handing(steps: list[dict[str, Any]]) -> int | None:
        return next((s["index"] for s in _llm(steps) if "transfer_to_refunds_agent" in _names(s)), None)

    def last_answer(steps: list[dict[str, Any]]) -> int | None:
        llm = _llm(steps)
        return llm[-1]["index"] if llm else None

    def nth_answer(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
        """The nth model call that asked for no tool (0 the first), or the model call in its place."""
        def find(steps: list[dict[str, Any]]) -> int | None:
            llm = _llm(steps)
            said = [i for i, s in enumerate(llm) if not _names(s)]
            return llm[said[n]]["index"] if len(said) > n else None
        return find

    def first_answer_or_transfer(steps: list[dict[str, Any]]) -> int | None:
        found = [i for i in (answer(steps), transfer(steps)) if i is not None]
        return min(found) if found else None

    data, tau, spec, inter, verify = ("data-analysis agent failure", "tau-bench tool-agent-user", "MAST FM-1 Specification",
                                      "MAST FM-2 Inter-agent misalignment", "MAST FM-3 Task verification")
    sql = asking("run_sql")
    shipped = f"{data}: the wrong column (created_at for 'shipped')"
    dropped = f"{data}: the request's filter dropped from the SQL ('excluding refunded orders'), the answer says it holds"
    region = f"{data}: the request's filter dropped from the SQL (the EU), the answer says 'EU customers'"
    fanout = f"{data}: a join that fans out (one row per ticket) and the inflated sum reported (the good run: DISTINCT)"
    ignored = f"{data}: an SQL error (no column total) answered past with a number (the good run corrects the query)"
    misread = f"{data}: the result rows misread (the first two regions swapped; the good run works out a share)"
    reshaped = f"{data}: the query tool's result shape changed (a columns / data table), read as no rows"
    chart = f"{data}: a chart of other data (order counts) than its title and the answer state (revenue)"
    path = f"{data}: the report saved to another path than asked (both runs retry a busy database once)"
    loop = f"{data}: the same failing query run again unchanged (MAST FM-1.3 step repetition)"
    limit1 = f"{data}: 'top 3' answered after a LIMIT 1 (MAST FM-3.1 premature termination)"
    renamed = (f"{data}: the schema changed since the history (orders.amount now amount_usd); the failing query's column "
               "replaced by the products' list prices (the good run reads the new column off describe_table)")
    no_yes = f"{tau}: a write (refund) without the user's explicit confirmation"
    declined = f"{tau}: a write (refund) after the user said 'not yet'"
    window = f"{tau}: a refund past the policy's 30 days (the good run refuses by policy)"
    amount = f"{tau}: a refund of another amount than the user's words (49.90 for 15)"
    order = f"{tau}: a refund of another order than the user named (#1034 for #1043)"
    other = f"{tau}: another customer's data revealed (name and address on order #1050)"
    exchange_ = f"{tau}: a second exchange against 'one exchange per order' (the good run refuses)"
    human = f"{tau}: transfer_to_human skipped where the policy requires it (smoke: a safety issue)"
    lost = f"{tau} / MAST FM-1.4: the user's email lost from the context, asked again"
    already = f"{tau}: the refund tool's 'already refunded' answered as a refund made now"
    mismatch = f"{inter}: FM-2.6 Reasoning-action mismatch ('I'll cancel order #1066', cancels #1065; the user changed their mind before)"
    unverified = f"{verify}: FM-3.3 Incorrect verification ('I checked the status of order #1065', no get_order)"
    premature = f"{verify}: FM-3.1 Premature termination ('I'll process the refund now', no refund call)"
    role = f"{spec}: FM-1.2 Disobey role specification (the triage agent refunds itself; refunds agent only)"
    typo = (f"{tau}: a failed identification (no customer with that email) gone past: the order looked up and told "
            "without the user identified (the good run asks the user, who corrects the email)")
    corrected = (f"{tau} / MAST FM-2.5 Ignored input: the user's correction ('I meant the desk lamp, order #1034') ignored, "
                 "the order first named refunded")
    empty = f"{data}: an empty result answered with a figure (the good run says the query found nothing)"
    refused = f"{tau}: the cancel tool's refusal ('has shipped and cannot be cancelled') answered as done"
    withheld = f"{inter}: FM-2.4 Information withholding (the delivery date, past 30 days, left out of the handoff)"
    return [
        # the analyst: the openai SDK loop under agentotel
        rule("openai", "model", "shipped_column", shipped, sql),
        rule("openai", "model", "filter_dropped", dropped, sql),
        rule("openai", "model", "join_fanout", fanout, sql),
        rule("openai", "model", "sql_error_ignored", ignored, answer),
        rule("openai", "model", "misread_rows", misread, answer),
        rule("openai", "tool", "result_shape", reshaped, tool_step("run_sql")),
        rule("openai", "model", "chart_mismatch", chart, asking("make_chart")),
        rule("openai", "model", "report_path", path, asking("save_report")),
        rule("openai", "model", "sql_loop", loop, asking("run_sql", 1)),
        rule("openai", "model", "top3_limit1", limit1, sql),
        rule("openai", "model", "empty_result", empty, answer),
        rule("openai", "model", "schema_renamed", renamed, asking("run_sql", 1), diff_where=after("run_sql", "amount_usd")),
        # the analyst: LangGraph under agentotel
        rule("langgraph", "model", "shipped_column", shipped, sql),
        rule("langgraph", "model", "region_dropped", region, sql),
        rule("langgraph", "model", "join_fanout", fanout, sql),
        rule("langgraph", "model", "sql_error_ignored", ignored, answer),
        rule("langgraph", "model", "misread_rows", misread, answer),
        rule("langgraph", "model", "chart_mismatch", chart, asking("make_chart")),
        rule("langgraph", "model", "sql_loop", loop, asking("run_sql", 1)),
        rule("langgraph", "model", "top3_limit1", limit1, sql),
        rule("langgraph", "model", "empty_result", empty, answer),
        rule("langgraph", "model", "schema_renamed", renamed, asking("run_sql", 1), diff_where=after("run_sql", "amount_usd")),
        # the analyst: the openai loop under OpenInference, through agentotel-collector
        rule("oi-openai", "model", "filter_dropped", dropped, sql),
        rule("oi-openai", "model", "region_dropped", region, sql),
        rule("oi-openai", "model", "misread_rows", misread, answer),
        rule("oi-openai", "tool", "result_shape", reshaped, tool_step("run_sql")),
        rule("oi-openai", "model", "report_path", path, asking("save_report")),
        # support: the anthropic SDK loop under agentotel
        rule("anthropic", "model", "no_confirm", no_yes, asking("refund")),
        rule("anthropic", "model", "past_window", window, asking("refund"), diff_where=answer),
        rule("anthropic", "model", "amount_words", amount, asking("refund")),
        rule("anthropic", "model", "wrong_order", order, asking("refund")),
        rule("anthropic", "model", "other_customer", other, answer),
        rule("anthropic", "model", "no_transfer", human, answer, diff_where=first_answer_or_transfer),
        rule("anthropic", "memory", "email_lost", lost, context_cut),
        rule("anthropic", "model", "already_refunded", already, after("refund", "already")),
        rule("anthropic", "model", "mismatch", mismatch, asking("cancel")),
        rule("anthropic", "model", "unverified", unverified, answer),
        rule("anthropic", "model", "email_typo", typo, asking("get_order")),
        rule("anthropic", "model", "cancel_failed", refused, after("cancel", "cannot")),
        rule("anthropic", "model", "user_corrects", corrected, nth_answer(1)),
        # support: pydantic-ai under agentotel
        rule("pydantic-ai", "model", "declined_write", declined, asking("refund")),
        rule("pydantic-ai", "model", "second_exchange", exchange_, asking("exchange"), diff_where=answer),
        rule("pydantic-ai", "model", "wrong_order", order, asking("refund")),
        rule("pydantic-ai", "model", "already_refunded", already, after("refund", "already")),
        rule("pydantic-ai", "model", "premature", premature, last_answer),
        rule("pydantic-ai", "model", "unverified", unverified, answer),
        rule("pydantic-ai", "model", "email_typo", typo, asking("get_order")),
        rule("pydantic-ai", "model", "cancel_failed", refused, after("cancel", "cannot")),
        # support: the OpenAI Agents SDK, triage -> refunds
        rule("agents", "model", "triage_refunds", role, asking("refund"), diff_where=first_answer_or_handoff(handing, answer)),
        rule("agents", "model", "handoff_withheld", withheld, handing),
        rule("agents", "model", "no_confirm", no_yes, asking("refund")),
        rule("agents", "model", "premature", premature, last_answer),
        # support: the anthropic loop under OpenLLMetry, through agentotel-collector
        rule("tl-anthropic", "model", "past_window", window, asking("refund"), diff_where=answer),
        rule("tl-anthropic", "model", "second_exchange", exchange_, asking("exchange"), diff_where=answer),
        rule("tl-anthropic", "model", "other_customer", other, answer),
        rule("tl-anthropic", "model", "no_confirm", no_yes, asking("refund")),
        rule("tl-anthropic", "model", "user_corrects", corrected, nth_answer(1)),
    ]


def first_answer_or_handoff(handing: Callable[..., int | None], answer: Callable[..., int | None]) -> Callable[..., int | None]:
    """The first model call that answered the user or handed over (where the triage agent's turn ends)."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        found = [i for i in (handing(steps), answer(steps)) if i is not None]
        return min(found) if found else None
    return find


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (a9479a9's detectors,
# agentotel/analysis/ unread; load ~4-8): 57 pairs, 7 recorders - diff top-1 57/57, check step+layer 9/57 (6 of them
# only by a false signal, listed here too), good runs with a warning 22/57. diff names every first divergence.
DIFF_MISSED: dict[str, str] = {}
_SQL = "nothing failed; the SQL does something else than the request asks (the request's words against the query): "
_ROWS = "nothing failed; what the run says or passes on is not what the rows it got hold: "
_ARG = "nothing failed; a write's argument is not the one the user named and the model itself stated: "
_POLICY = "nothing failed; a write the instructions' policy forbids, on facts the run had read: "
_CLAIM = "an answer claims what no call of the run did or said: "
_FLUKE = "counted as found only through a false signal the good run carries too: "
CHECK_MISSED: dict[str, str] = {
    # the request against the SQL
    "model-openai-shipped-column": _SQL + "'shipped in September' counted on created_at (7) instead of shipped_at (8)",
    "model-langgraph-shipped-column": _SQL + "the same",
    "model-openai-filter-dropped": _SQL + "'excluding refunded orders' missing from the WHERE clause (no refunds table "
                                          "read), while the answer says 'excluding refunded orders'",
    "model-oi-openai-filter-dropped": _SQL + "the same",
    "model-langgraph-region-dropped": _SQL + "'in the EU' missing from the query; the answer calls the all-region top 3 "
                                             "'the top 3 EU customers'",
    "model-oi-openai-region-dropped": _SQL + "the same",
    "model-openai-join-fanout": _SQL + "orders joined to events (one row per support ticket) and SUM(o.amount) taken over "
                                       "the joined rows: 2,709.40 for 1,666.10 (the good run joins SELECT DISTINCT "
                                       "customer_id)",
    "model-langgraph-join-fanout": _SQL + "the same",
    "model-openai-top3-limit1": _SQL + "'top 3' asked, LIMIT 1 queried, one customer answered as 'our top customers'",
    "model-langgraph-top3-limit1": _SQL + "the same",
    # the rows against the answer or the next call
    "model-openai-chart-mismatch": _ROWS + "make_chart titled 'Q3 2026 revenue by month' given the rows' order counts "
                                           "(8, 8, 7) instead of their revenue (1,603.40 ...); the answer states the revenue",
    "model-langgraph-chart-mismatch": _ROWS + "the same",
    "model-openai-schema-renamed": _ROWS + "after 'no column amount (candidate amount_usd)', the next query sums the "
                                           "products' list prices and the answer gives it as revenue (617.90 for 983.90); "
                                           "tool_error_ignored fires on the good run instead (false alarm below)",
    "model-langgraph-schema-renamed": _ROWS + "the same",
    # an error, found at the step, another layer; a loop found at another step
    "model-openai-sql-error-ignored": "found at the step (tool_error_ignored), layer tool: the query's own column "
                                      "('total', none such) was the model's, and the answer's 84.20 is made up",
    "model-langgraph-sql-error-ignored": "the same",
    "model-openai-sql-loop": "found as retry_loop at the first failing run_sql (a tool step, layer tool); the cause is the "
                             "model running the failing query again unchanged (the first repeat), though the error "
                             "names the column to use ('Candidate bindings: churned_at')",
    "model-langgraph-sql-loop": "the same",
    # a write's argument
    "model-openai-report-path": _ARG + "'save ... to reports/q3-eu-revenue.md'; save_report(path='reports/q3_revenue.md')",
    "model-oi-openai-report-path": _ARG + "the same",
    "model-anthropic-wrong-order": _ARG + "'refund order #1043', get_order(#1043), 'Shall I refund 49.90 USD ... order "
                                          "#1043', refund(order_id='#1034')",
    "model-pydantic-ai-wrong-order": _ARG + "the same",
    # the written policy
    "model-anthropic-past-window": _POLICY + "'refunds only within 30 days of delivery', 'Today is 2026-12-03'; get_order "
                                             "says delivered_at 2026-10-12 (52 days); refund offered and made",
    "model-tl-anthropic-past-window": _POLICY + "the same",
    "model-pydantic-ai-second-exchange": _POLICY + "'one exchange per order'; get_order says exchanges: 1 ('exchanged size "
                                                   "41 for 42'); a second exchange offered and made",
    "model-tl-anthropic-second-exchange": _POLICY + "the same",
    "model-anthropic-no-transfer": _FLUKE + "ungrounded_answer '30-day' in the refund offer; the fault - 'sparked and "
                                            "started to smoke' (the policy's safety issue), no transfer_to_human, a plain "
                                            "refund instead - is not seen",
    "model-anthropic-other-customer": _POLICY + "'never reveal another customer's data'; get_user gave the asker "
                                                "U-501, get_order(#1050) says user_id U-502; the answer states its ship_to "
                                                "(name and address)",
    "model-tl-anthropic-other-customer": _POLICY + "the same",
    "model-agents-triage-refunds": _POLICY + "the triage agent, whose instructions say 'only the refunds agent issues "
                                             "refunds', asks for the yes and refunds itself, never handing over",
    "model-agents-handoff-withheld": "the triage agent read delivered_at 2026-10-12 (52 days, past the window) and hands "
                                     "over 'Order #1022 (wool blanket, 89.00 USD): the user wants a refund.' (the filtered "
                                     "handoff passes its words only); the refunds agent refunds",
    # claims
    "model-pydantic-ai-premature": _CLAIM + "the user says yes, the run ends on 'I'll process the refund of 35.00 USD for "
                                            "order #1034 now.' with no refund call (MAST FM-3.1)",
    "model-agents-premature": _CLAIM + "the same, the refunds agent's",
    # the user's words
    "model-anthropic-email-typo": "found at the step (tool_error_ignored), layer tool: get_user answered rightly that no "
                                  "customer has that email; the model went on to get_order and told the order to an "
                                  "unidentified user (policy 1), where the good run asks the user",
    "model-pydantic-ai-email-typo": "the same",
    "model-anthropic-user-corrects": _FLUKE + "ungrounded_answer '30-day' in the refund offer; the fault - 'Oh sorry, I "
                                              "meant the desk lamp, order #1034' answered with 'Shall I refund 49.90 USD "
                                              "... #1043' - is not seen",
    "model-tl-anthropic-user-corrects": _FLUKE + "the same",
    # right step, another layer
    "model-openai-empty-result": "found at the step (answer_without_evidence), layer product: the refunds table holds no "
                                 "November refund, so 'no refunds' is the true answer (the good run's) and '2 refunds, "
                                 "138.90 USD' the model's invention - nothing for the product to add",
    "model-langgraph-empty-result": "the same",
    "model-anthropic-cancel-failed": "found at the step (tool_error_ignored), layer tool: cancel refused rightly ('has "
                                     "shipped and cannot be cancelled'); the model answered 'Done: order #1043 is "
                                     "cancelled' (the good run says it could not, and offers a return)",
    "model-pydantic-ai-cancel-failed": "the same",
}
# Good runs with a warning, and why it is false: the slow test holds the set to these. At its blind scoring 22/57 good
# runs were warned, every one fixed since (session 18): 'the 30-day window' read as an id; a region's share of the rows'
# total; an SQL result whose columns follow its query, read as drift; a query corrected after describe_table, read as
# an error gone past; a rejected refund's own shape read as drift; a date 30 days (the policy's period) after a
# delivery. tests/analysis/test_data_agent.py holds each.
FALSE_ALARMS: dict[str, str] = {}

# The foreign recorders' spans reach their store through agentotel-collector (OTLP over HTTP).
prepare = kit.through_collector("oi-openai", "tl-anthropic")


def record(root: Path, chosen: list[Any]) -> dict[str, list[kit.Recorded]]:
    return kit.record(Path(__file__), root, chosen, prepare=prepare)


def score(root: Path, recorded: dict[str, list[kit.Recorded]]) -> list[Any]:
    return kit.score(root, recorded)


if __name__ == "__main__":
    if not kit.produce_main(produce):
        kit.main(Path(__file__), "heldout8-", pairs(), sys.argv[1:], prepare=prepare)
