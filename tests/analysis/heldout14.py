"""A fourteenth held-out fault-injection set for `diff` and `check`, built blind (without reading agentotel/analysis/):
an insurance claims agent holding written settlement rules, talking with a claimant over several turns, a data
pipeline (ETL) agent rebuilding a warehouse table for an analyst, and a help-center support agent answering from a
retriever, run through real agent frameworks.

    python tests/analysis/heldout14.py [RECORDER|PAIR ...]     # records the pairs, prints the table
    python tests/analysis/heldout14.py --score DIR [...]       # the runs a call left in DIR, scored again

Harbor Mutual's claims agent (get_policy, get_claim, list_claims, estimate_damage, approve_claim, deny_claim,
request_documents, schedule_adjuster, send_letter) settles home claims by seven written rules (read the claim and its
policy first; pay the estimate less the deductible; an estimate over $10,000 needs an adjuster's visit before any
approval; flood is not covered without the flood rider; a claim filed more than 30 days after the loss is denied
unless the claimant was in hospital; never approve a claim twice; write to the claimant with the decision). The
claimant's replies are scripted and said when the agent's message holds their cue ('Which claim', 'anything else').
Quarry's pipeline agent (list_tables, describe_table, run_query, create_table_as, drop_table, run_job, get_job_status,
notify_channel) rebuilds analytics.daily_revenue for an analyst by six (describe the sources first; join orders to
customers on customer_id; build in staging, never drop a table outside it; publish with the publish job and call it
done only when get_job_status says succeeded; rows_loaded must equal rows_expected; announce in #analytics only then).
Lumen's support agent (search_kb, create_ticket) answers smart-home customers by four (answer only from the articles
search_kb returns; never from a superseded version; match the customer's product; say so and open a ticket when the
articles do not answer). Each recorder in a process of its own:

- `langgraph` (claims): LangGraph's create_react_agent with ChatOpenAI, invoked once per claimant turn with the
  conversation so far, under `agentotel.instrument()` (the langchain integration makes the tool steps);
- `oi-anthropic` (claims): a plain anthropic SDK loop under OpenInference's anthropic instrumentation, the tools
  OITracer TOOL spans, sent by OTLP through agentotel-collector;
- `maf` (pipeline): the Microsoft Agent Framework's Agent on its chat completions client (its own telemetry on, with
  the messages), under `agentotel.instrument()`; one run per request;
- `agents-kb` (help center): the OpenAI Agents SDK, its search_kb function tool calling an `agentotel.retrieval`
  retriever, under `agentotel.instrument()`; one Runner.run per question.

The model on 127.0.0.1 reads the conversation it is sent and decides as a model would. Faults from tau-bench-style
policy breaks (the deductible not taken off, an approval over the adjuster limit, flood paid without the rider, a late
claim paid, a hospital exception ignored), MAST (Cemri et al. 2025: FM-1.1, FM-1.3 step repetition, FM-1.5 unaware of
termination, FM-2.2 fail to ask for clarification, FM-3.1 premature termination, FM-3.2 no verification, FM-3.3
incorrect verification; FM-1.4 the conversation lost between turns), TRAIL (an API error and a rate limit answered as
success, a timeout answered with an invented deductible, a tool answering another claim's estimate, an upstream column
rename, a wrong join key; poor retrieval: a stale index, a superseded article or another product's answered from, a
query that finds the wrong article, weak hits answered from, an answer the passages do not hold) and outside the
model: the instructions' flood, staging or version rule missing, the deployment configured with an old model.

How agentotel recorded the frameworks (not the detectors'): LangGraph's invoke per claimant turn is an `invoke_agent
harbor-claims` step per turn under the run's root, its tools the langchain integration's execute_tool steps; under
OpenInference the anthropic SDK's own spans (com.anthropic.sdk.python) and OpenInference's LLM spans describe each
call once in the trajectory, the run has no agent step (its AGENT span is the run); the Agent Framework's own
invoke_agent, chat and execute_tool spans and agentotel's openai client spans make one step per call (its chat spans
the 'genai+duplicate' dialect); under the Agents SDK the search_kb tool step holds a `retrieval help-center` step (the
documents' id, score and content; the articles' versions only in the tool's result). Nothing recorded wrong was found:
tool errors keep their words in status_message, nothing is redacted.

Built and scored blind, once (8051e15's detectors, agentotel/analysis/ unread; load ~5.8-8.6; recording
/tmp/h14-rec-q8dsl33n, the agents-kb recorder recorded after the others and copied in): 37 pairs, 4 recorders (4
frameworks) - diff top-1 36/37, check step+layer 12/37, good runs with a warning 19/37. Seven of the twelve check hits
are right by chance: a missing_evidence error that reads rule 7 ('Write to the claimant with send_letter ... before
you answer') as 'send_letter before approve_claim/deny_claim' lands on the faulty decision step, and fires the same
on the good twin; the honest count is 5/37 (the conversation lost twice, the repeated status poll, the 429 answered
as success, the help center's version rule missing).

After session 24's rules, written against those misses in general form, each with a hand-built test in another
trade (tests/analysis/test_scoped_rules.py, test_work_state.py, test_class_rules.py), the same recording scores
check 30/37 and 0 good runs warned; DIFF_MISSED, CHECK_MISSED and FALSE_ALARMS say what is left and why.
"""

from __future__ import annotations

import asyncio
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

MODEL, OLD_MODEL = "gpt-4o-mini", "gpt-3.5-turbo-0613"
CLAUDE, OLD_CLAUDE = "claude-sonnet-4-5", "claude-2.1"  # (what the faulty deployment's configuration pins)
CLAIMS, PIPELINE, KB_AGENT = "harbor-claims", "quarry-pipeline", "lumen-support"
TODAY = "2026-12-04"
ADJUSTER_LIMIT = 10_000
EXPECTED = 412  # the rows of a complete analytics.daily_revenue


class Now(kit.World):
    """The world of the run being recorded."""

    approvals = 0
    polls = 0
    jobs = 0
    staged = EXPECTED  # the rows create_table_as built into staging
    # the help center's retriever (a recorder makes it an agentotel.retrieval)
    retriever: Callable[[str], list[dict[str, Any]]] = staticmethod(lambda query: retrieve(query))

    @classmethod
    def start(cls, pair: str | None, fault: str | None) -> None:
        super().start(pair, fault)
        cls.approvals, cls.polls, cls.jobs, cls.staged = 0, 0, 0, EXPECTED


# ---- the claims desk's world ---------------------------------------------------------------------------------------

CLAIM_RULES = [
    "1. Read the claim with get_claim and its policy with get_policy before any decision.",
    "2. Pay the damage estimate (estimate_damage) less the policy's deductible.",
    f"3. A claim whose estimate is over ${ADJUSTER_LIMIT:,} must not be approved before an adjuster has inspected it "
    "(the claim's adjuster_visit 'done'): schedule one with schedule_adjuster and tell the claimant.",
    "4. Flood damage is not covered unless the policy has the flood rider: deny such a claim with deny_claim.",
    "5. A claim filed more than 30 days after the loss is denied, unless the claim's notes record a hospital stay of "
    "the claimant.",
    "6. Never approve a claim twice: if approve_claim did not answer, read the claim again before anything else.",
    "7. Write to the claimant with send_letter stating the decision (and the amount paid) before you answer.",
]


def claim_instructions() -> str:
    rules = list(CLAIM_RULES)
    if Now.fault == "flood_rule_missing":  # an older prompt version, before the flood exclusion was written in
        rules = rules[:3] + [f"{i}. {r[3:]}" for i, r in enumerate(rules[4:], 4)]
    return (f"You are the claims agent of Harbor Mutual, a home insurer. Today is {TODAY}. Settle the claimant's home "
            "claim by these rules:\n" + "\n".join(rules))


def claims_model(anthropic: bool = False) -> str:
    """The model the deployment is configured with (one fault's configuration pins an old one)."""
    if Now.fault == "old_model_configured":
        return OLD_CLAUDE if anthropic else OLD_MODEL
    return CLAUDE if anthropic else MODEL


POLICIES = {  # holder, deductible, flood rider
    "HP-4471": ("Maria Lopez", 1000.0, False),
    "HP-5120": ("Ken Adams", 500.0, True),
}


def _claims_of(policy_id: str) -> dict[str, dict[str, Any]]:
    """The policy's claims as the claims system holds them in this run's world."""
    if policy_id == "HP-5120":
        return {"CL-8870": {"cause": "hail damage to the roof", "loss_date": "2026-11-02", "filed": "2026-11-04",
                            "notes": "", "adjuster_visit": None, "estimate": 3200.0}}
    pair = Now.pair or ""
    kitchen = {"cause": "burst pipe, water damage in the kitchen", "loss_date": "2026-11-20", "filed": "2026-11-22",
               "notes": "", "adjuster_visit": None, "estimate": 6450.0}
    if pair in ("adjuster_skipped", "old_model_configured"):
        kitchen["estimate"] = 14200.0
    if pair in ("flood_approved", "flood_rule_missing"):
        kitchen["cause"] = "flood: the river overflowed into the kitchen"
    if pair in ("late_filing_approved", "late_excuse_ignored"):
        kitchen.update(loss_date="2026-10-14", filed="2026-11-25")
    if pair == "late_excuse_ignored":
        kitchen["notes"] = "Claimant in hospital from 2026-10-14 to 2026-11-19 (discharge letter on file)."
    out = {"CL-9013": kitchen}
    if pair in ("no_clarification", "context_trimmed"):
        out["CL-9027"] = {"cause": "storm damage to the roof", "loss_date": "2026-11-28", "filed": "2026-11-30",
                          "notes": "", "adjuster_visit": None, "estimate": 2900.0}
    return out


def _claim(claim_id: str) -> tuple[str, dict[str, Any]]:
    for policy_id in POLICIES:
        found = _claims_of(policy_id).get(claim_id)
        if found:
            return policy_id, found
    raise LookupError(f"no claim {claim_id}")


def get_policy(policy_id: str) -> dict[str, Any]:
    """A home policy: holder, deductible (US dollars), riders."""
    if Now.pair == "hallucinated_policy":
        raise TimeoutError("policy service did not answer within 20 s")
    if policy_id not in POLICIES:
        raise LookupError(f"no policy {policy_id}")
    holder, deductible, flood = POLICIES[policy_id]
    return {"policy_id": policy_id, "holder": holder, "deductible": deductible,
            "riders": ["flood"] if flood else [], "status": "active"}


def get_claim(claim_id: str) -> dict[str, Any]:
    """A claim: policy, cause of loss, loss date, filing date, notes, adjuster visit, status."""
    policy_id, c = _claim(claim_id)
    approved = Now.approvals > 0
    return {"claim_id": claim_id, "policy_id": policy_id, "cause": c["cause"], "loss_date": c["loss_date"],
            "filed_date": c["filed"], "notes": c["notes"], "adjuster_visit": c["adjuster_visit"],
            "status": "approved" if approved else "open"}


def list_claims(policy_id: str) -> dict[str, Any]:
    """A policy's claims (id, cause, status)."""
    return {"claims": [{"claim_id": k, "cause": v["cause"], "status": "open"} for k, v in _claims_of(policy_id).items()]}


def estimate_damage(claim_id: str) -> dict[str, Any]:
    """The damage estimate of a claim (US dollars, before the deductible)."""
    _, c = _claim(claim_id)
    if Now.fault == "wrong_claim_estimate":  # the estimating service answers another claim's record
        return {"claim_id": "CL-9031", "estimate": 2180.0, "currency": "USD", "basis": "contractor quote"}
    return {"claim_id": claim_id, "estimate": c["estimate"], "currency": "USD", "basis": "contractor quote"}


def approve_claim(claim_id: str, amount: float) -> dict[str, Any]:
    """Approves a claim and pays `amount` US dollars to the claimant."""
    if Now.pair == "error_as_success":
        raise RuntimeError("500 payments service error: the claim was NOT approved and no payment was made")
    Now.approvals += 1
    if Now.pair == "approved_twice" and Now.approvals == 1:  # the payment went through; the answer never came
        raise TimeoutError("payments service did not answer within 20 s")
    return {"claim_id": claim_id, "amount": amount, "status": "approved", "payment_id": f"PAY-{77119 + Now.approvals}"}


def deny_claim(claim_id: str, reason: str) -> dict[str, Any]:
    """Denies a claim, with the reason the claimant is told."""
    return {"claim_id": claim_id, "status": "denied", "reason": reason}


def request_documents(claim_id: str, documents: str) -> dict[str, Any]:
    """Asks the claimant for documents (photos, receipts, medical letters)."""
    return {"claim_id": claim_id, "requested": documents, "status": "sent"}


def schedule_adjuster(claim_id: str, date: str) -> dict[str, Any]:
    """Books an adjuster's visit to inspect the damage on `date` (YYYY-MM-DD)."""
    return {"claim_id": claim_id, "visit_id": "ADJ-3306", "date": date, "adjuster": "Sam Okoro", "status": "booked"}


def send_letter(claim_id: str, text: str) -> dict[str, Any]:
    """Sends the claimant a letter about their claim."""
    return {"claim_id": claim_id, "letter_id": f"LT-{len(text) * 13 % 9000 + 1000}", "status": "sent"}


CLAIM_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    get_policy, get_claim, list_claims, estimate_damage, approve_claim, deny_claim, request_documents, schedule_adjuster,
    send_letter)}

# ---- the pipeline's world ------------------------------------------------------------------------------------------

PIPE_RULES = [
    "1. Describe every source table with describe_table before you query it.",
    "2. Join raw.orders to raw.customers on customer_id.",
    "3. Build into the staging schema: drop and recreate staging.daily_revenue, never drop a table outside staging.",
    "4. Publish with run_job('publish_daily_revenue'); the table is ready only when get_job_status says 'succeeded'.",
    "5. Check the load: rows_loaded must equal rows_expected. A partial load is a failure: report it, do not announce it.",
    "6. Announce in #analytics with notify_channel only a complete, published table.",
]


def pipe_instructions() -> str:
    rules = list(PIPE_RULES)
    if Now.fault == "drop_rule_missing":  # an older prompt: rebuild in place, before the staging rule
        rules[2] = "3. Rebuild the target table: drop it and recreate it with create_table_as."
    return "You are the data pipeline agent of Quarry's analytics warehouse. Follow these rules:\n" + "\n".join(rules)


TABLES = {
    "raw.orders": [("order_id", "BIGINT"), ("customer_id", "BIGINT"), ("order_date", "DATE"), ("amount_usd", "DECIMAL(10,2)")],
    "raw.customers": [("customer_id", "BIGINT"), ("region", "VARCHAR"), ("name", "VARCHAR")],
    "staging.daily_revenue": [("day", "DATE"), ("region", "VARCHAR"), ("revenue_usd", "DECIMAL(12,2)")],
    "analytics.daily_revenue": [("day", "DATE"), ("region", "VARCHAR"), ("revenue_usd", "DECIMAL(12,2)")],
}
ROWS = {"raw.orders": 48_210, "raw.customers": 6_904, "staging.daily_revenue": 408, "analytics.daily_revenue": 408}


def list_tables(schema: str) -> dict[str, Any]:
    """The tables of a schema (raw, staging, analytics)."""
    return {"schema": schema, "tables": [t for t in TABLES if t.startswith(schema + ".")]}


def describe_table(table: str) -> dict[str, Any]:
    """A table's columns (name, type) and row count, from the warehouse catalog."""
    if table not in TABLES:
        raise LookupError(f"Catalog Error: Table {table} does not exist")
    return {"table": table, "columns": [{"name": n, "type": t} for n, t in TABLES[table]], "row_count": ROWS[table]}


def run_query(sql: str) -> dict[str, Any]:
    """Runs a read-only SQL query; answers its rows."""
    if "count" in sql.lower():
        return {"columns": ["n"], "rows": [[1_204]]}
    return {"columns": [], "rows": []}


def create_table_as(table: str, sql: str) -> dict[str, Any]:
    """Creates `table` from a SELECT."""
    if Now.fault == "column_renamed":  # upstream renamed raw.customers.customer_id; the catalog still shows the old name
        raise RuntimeError('Binder Error: Table "c" does not have a column named "customer_id". Candidate bindings: '
                           '"c.cust_id"')
    Now.staged = 6_120 if "o.order_id = c.customer_id" in sql else EXPECTED  # (a wrong key fans the join out)
    return {"table": table, "status": "created", "rows": Now.staged}


def drop_table(table: str) -> dict[str, Any]:
    """Drops a table."""
    return {"table": table, "status": "dropped"}


def run_job(job: str) -> dict[str, Any]:
    """Starts a scheduled job by name; answers its job id."""
    Now.jobs += 1
    if Now.pair == "job_429_as_success" and Now.jobs == 1:
        raise RuntimeError("429 Too Many Requests: job publish_daily_revenue was NOT started; retry in 5 s")
    return {"job": job, "job_id": "J-5531", "status": "queued"}


def get_job_status(job_id: str) -> dict[str, Any]:
    """A job's state (queued, running, succeeded, failed) and its load counts."""
    Now.polls += 1
    if Now.polls == 1:
        return {"job_id": job_id, "status": "running", "rows_loaded": 120, "rows_expected": Now.staged}
    loaded = Now.staged - 24 if Now.pair == "partial_load_as_complete" else Now.staged
    return {"job_id": job_id, "status": "succeeded", "rows_loaded": loaded, "rows_expected": Now.staged,
            "rejected_rows": Now.staged - loaded}


def notify_channel(channel: str, text: str) -> dict[str, Any]:
    """Posts a message in a team chat channel."""
    return {"channel": channel, "status": "posted", "ts": "1764856201.004"}


PIPE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (
    list_tables, describe_table, run_query, create_table_as, drop_table, run_job, get_job_status, notify_channel)}

# ---- the help center's world ---------------------------------------------------------------------------------------

KB_RULES = [
    "1. Search the help center with search_kb before you answer, and answer only from the articles it returns; cite "
    "the article id.",
    "2. Use an article's current version: never one marked superseded.",
    "3. Match the customer's product (the Lumen Hub 2 is not the first-generation Lumen Hub).",
    "4. If the articles do not answer the question, say so and open a ticket with create_ticket.",
]


def kb_instructions() -> str:
    rules = list(KB_RULES)
    if Now.fault == "superseded_rule_missing":  # an older prompt, before article versions were written in
        rules = [rules[0]] + [f"{i}. {r[3:]}" for i, r in enumerate(rules[2:], 2)]
    return "You are the support agent of Lumen, a smart-home company. Follow these rules:\n" + "\n".join(rules)


ARTICLES = {  # id: title, product, version, updated, superseded_by, text
    "KB-101": ("Factory reset the Lumen Hub 2", "Hub 2", 3, "2026-09-14", None,
               "Hold the pairing button for 15 seconds until the ring flashes amber, then release it. The hub restarts "
               "with factory settings in about 2 minutes."),
    "KB-101-v2": ("Factory reset the Lumen Hub 2", "Hub 2", 2, "2024-03-02", "KB-101",
                  "Press the reset pin on the back for 5 seconds with a paperclip. The LED turns white when done."),
    "KB-087": ("Factory reset the Lumen Hub (1st generation)", "Hub", 1, "2023-05-20", None,
               "Unplug the hub, hold its only button and plug it back in; keep holding for 10 seconds."),
    "KB-220": ("Lumen Hub 2 warranty", "Hub 2", 1, "2026-01-10", None,
               "The Lumen Hub 2 has a 2-year limited warranty from the date of purchase; refurbished units 1 year. "
               "Claims need the order number."),
    "KB-305": ("Change your Lumen account password", "account", 1, "2026-06-01", None,
               "Open the Lumen app, go to Settings > Account > Password and follow the steps."),
    "KB-412": ("Lumen Hub 2 LED colours", "Hub 2", 1, "2026-02-11", None,
               "Blue: connected. Amber flashing: resetting. Red: no internet."),
}


def _hits(query: str) -> list[str]:
    """The article ids the index ranks for `query` in this run's world."""
    q, pair = query.lower(), Now.pair or ""
    if "password" in q:
        return ["KB-305"]
    if "warranty" in q:
        return ["KB-220"]
    if "led" in q or "light" in q:
        return ["KB-412"]
    if "reset" in q:
        if Now.fault == "stale_index":  # the index was last built before v3: it holds v2 as the current article
            return ["KB-101-v2"]
        if pair in ("superseded_used", "superseded_rule_missing"):
            return ["KB-101-v2", "KB-101"]
        if pair == "wrong_product":
            return ["KB-087", "KB-101"]
        return ["KB-101", "KB-087"]
    return ["KB-412"]


def retrieve(query: str) -> list[dict[str, Any]]:
    """The help center's index: ranked documents (id, score, content, title, version, updated, superseded_by)."""
    out = []
    for rank, aid in enumerate(_hits(query)):
        title, product, version, updated, superseded_by, text = ARTICLES[aid]
        out.append({"id": aid.split("-v")[0] if Now.fault == "stale_index" else aid, "score": round(0.91 - 0.17 * rank, 2),
                    "title": title, "product": product, "version": version, "updated": updated,
                    "superseded_by": None if Now.fault == "stale_index" else superseded_by, "content": text})
    return out


def search_kb(query: str) -> dict[str, Any]:
    """Searches the Lumen help center; answers the best articles (id, title, product, version, updated, superseded_by,
    score, content)."""
    return {"query": query, "articles": Now.retriever(query)}


def create_ticket(subject: str, details: str) -> dict[str, Any]:
    """Opens a support ticket for a specialist to answer the customer."""
    return {"ticket_id": f"LUM-{5000 + len(subject) % 97}", "status": "open"}


KB_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (search_kb, create_ticket)}

# ---- the requests and the simulated claimant -----------------------------------------------------------------------

_SETTLE = "Hi, this is Maria Lopez, policy HP-4471. Can you settle my claim CL-9013 for the damage in my kitchen?"
_OPEN = "Hi, this is Maria Lopez, policy HP-4471. Can you settle my open claim, please?"
_REBUILD = ("Please rebuild analytics.daily_revenue (revenue per day and region, from raw.orders joined to "
            "raw.customers) and post in #analytics when it's ready.")
CLAIM_HISTORY = ["Hi, Ken Adams here, policy HP-5120. What's my deductible, and is my roof claim still open?",
                 "Hi, Ken Adams, policy HP-5120. Can you settle my claim CL-8870 for the hail damage?"]
PIPE_HISTORY = ["How many orders are in raw.orders for 2026-12-03?", _REBUILD]
_HUB_RESET = "How do I factory reset my Lumen Hub 2? It keeps dropping off the Wi-Fi."
KB_REQUESTS = {"not_in_passages": "Does the Lumen Hub 2 warranty cover water damage? Mine got wet.",
               "weak_hits": "My Lumen Hub 2 is stuck - how do I wipe it and start over?"}
KB_HISTORY = ["What do the LED colours on my Lumen Hub 2 mean?", _HUB_RESET]
_WHICH = ("Which claim", "The kitchen one - CL-9013.")
_BYE = ("anything else", "No, that's all - thanks.")


def user_replies(said: str) -> str | None:
    """What the claimant answers to the agent's message `said`, or None: the conversation is over."""
    return Now.reply([_WHICH, _BYE], said)


def request(v: int, pair: str | None) -> str:
    if Now.recorder == "maf":
        return _REBUILD if pair else PIPE_HISTORY[v % 2]
    if Now.recorder == "agents-kb":
        return KB_REQUESTS.get(pair, _HUB_RESET) if pair else KB_HISTORY[v % 2]
    if pair:
        return _OPEN if pair in ("no_clarification", "context_trimmed") else _SETTLE
    return CLAIM_HISTORY[v % 2]


# ---- the model: reads the chat.completions request it is sent -------------------------------------------------------


def model(body: dict[str, Any]) -> dict[str, Any]:
    t = Talk(body.get("messages") or [])
    if not t.users:
        out = reply("Hello! How can I help?")
    elif "claims agent of Harbor Mutual" in t.system:
        out = _claims(t, body.get("model") in (OLD_MODEL, OLD_CLAUDE))
    elif "data pipeline agent of Quarry" in t.system:
        out = _pipeline(t)
    elif "support agent of Lumen" in t.system:
        out = _kb(t)
    else:
        out = reply("Hello! How can I help?")
    out["model"] = body.get("model") or MODEL  # (an API answers with the model it served)
    return out


_ANYTHING = " Is there anything else I can help with?"


def _claims(t: Talk, old: bool) -> dict[str, Any]:
    fault = Now.fault
    said = " ".join(t.users)
    policy_m, claim_m = re.search(r"\bHP-\d{4}\b", said), re.findall(r"\bCL-\d{4}\b", said)
    if not policy_m:  # (the conversation lost: a claim id with no policy nor name)
        return reply("I'm sorry, I don't have your details. Could you tell me your name and your policy number?")
    pid = policy_m.group(0)
    if any("that's all" in u for u in t.users[1:]):  # the claimant is done
        letters = t.got("send_letter")
        if fault == "not_terminating" and len(letters) < 2:
            cid = letters[-1][0]["claim_id"]
            return call("send_letter", "Let me send you a summary letter as well.", claim_id=cid,
                        text=f"Dear {POLICIES[pid][0]}, a summary of your claim {cid}: settled as agreed. Harbor Mutual")
        return reply("You're welcome - take care!")
    if not claim_m:  # no claim named: the policy's claims looked up
        step = t.need(("list_claims", {"policy_id": pid}))
        if step:
            return step
        if "deductible" in said:  # (history: a question, no settlement)
            step = t.need(("get_policy", {"policy_id": pid}))
            if step:
                return step
        found = [c["claim_id"] for c in t.value("list_claims")["claims"]]
        if "deductible" in said:
            policy = t.value("get_policy")
            return reply(f"Your deductible is ${policy['deductible']:,.0f}, and claim {found[0]} is open." + _ANYTHING)
        if len(found) > 1 and fault != "no_clarification":
            return reply(f"You have {len(found)} open claims: " + " and ".join(found) + ". Which claim would you like me to "
                         "settle?")
        claim_m = found[-1:]  # (the fault: the latest taken, unasked)
    cid = claim_m[-1]
    step = t.need(("get_claim", {"claim_id": cid}))
    if step:
        return step
    tried = t.got("get_policy")
    if not tried:
        return call("get_policy", policy_id=pid)
    policy, claim = t.value("get_policy"), t.value("get_claim")
    name = POLICIES[pid][0]
    if policy is None and fault != "hallucinated_policy":
        return reply(f"I'm sorry - I couldn't reach our policy system ({tried[-1][1][:80]}), so I can't settle {cid} "
                     "right now. Please try again in an hour.")
    deductible = policy["deductible"] if policy else 500.0  # (the fault: a deductible nobody read)
    riders = policy["riders"] if policy else []
    return _decide(t, cid, name, claim, deductible, riders, old)


def _days(a: str, b: str) -> int:
    from datetime import date

    return (date.fromisoformat(b) - date.fromisoformat(a)).days


def _decide(t: Talk, cid: str, name: str, claim: dict[str, Any], deductible: float, riders: list[str],
            old: bool) -> dict[str, Any]:
    fault = Now.fault
    denied = t.value("deny_claim")
    letters = [v for _, v in t.got("send_letter") if isinstance(v, dict)]
    if denied:
        if not letters:
            return call("send_letter", claim_id=cid, text=f"Dear {name}, we are sorry to tell you that claim {cid} is denied: "
                        f"{denied['reason']} Harbor Mutual")
        return reply(f"I'm sorry - claim {cid} is denied: {denied['reason']} A letter is on its way." + _ANYTHING)
    flood = "flood" in claim["cause"] and "flood" not in riders and "not covered unless" in t.system
    if flood and fault != "flood_approved":
        return call("deny_claim", "Your policy has no flood rider, so flood damage is not covered.", claim_id=cid,
                    reason="flood damage is not covered by your policy, which has no flood rider.")
    late = _days(claim["loss_date"], claim["filed_date"]) > 30
    excused = "hospital" in claim["notes"]
    if late and (fault == "late_excuse_ignored" or (not excused and fault != "late_filing_approved")):
        return call("deny_claim", f"The claim was filed {_days(claim['loss_date'], claim['filed_date'])} days after the loss.",
                    claim_id=cid, reason=f"the claim was filed on {claim['filed_date']}, more than 30 days after the "
                                         f"loss on {claim['loss_date']}.")
    step = t.need(("estimate_damage", {"claim_id": cid}))
    if step:
        return step
    estimate = t.value("estimate_damage")["estimate"]
    booked = t.value("schedule_adjuster")
    needs_visit = (estimate > ADJUSTER_LIMIT and claim.get("adjuster_visit") != "done" and not old
                   and fault != "adjuster_skipped")
    if needs_visit:
        if not booked:
            return call("schedule_adjuster", f"The estimate is over ${ADJUSTER_LIMIT:,}, so an adjuster must inspect first.",
                        claim_id=cid, date="2026-12-08")
        if not letters:
            return call("send_letter", claim_id=cid, text=f"Dear {name}, an adjuster ({booked['adjuster']}) will inspect the "
                        f"damage of claim {cid} on {booked['date']}; we decide after the visit. Harbor Mutual")
        return reply(f"Your estimate is ${estimate:,.2f}, over our ${ADJUSTER_LIMIT:,} limit for settling without an "
                     f"inspection, so I've booked an adjuster, {booked['adjuster']}, for {booked['date']}. We'll settle "
                     "after the visit." + _ANYTHING)
    amount = estimate if fault == "deductible_not_subtracted" else round(estimate - deductible, 2)
    tried = t.got("approve_claim")
    approved = [v for _, v in tried if isinstance(v, dict)]
    if not tried:
        return call("approve_claim", f"Approving ${amount:,.2f}: the estimate ${estimate:,.2f} less the "
                    f"${deductible:,.0f} deductible.", claim_id=cid, amount=amount)
    if not approved:
        last = tried[-1][1]
        if "did not answer" in last:  # rule 6: read the claim again before anything else
            if fault == "approved_twice" and len(tried) < 2:
                return call("approve_claim", "The payments service timed out; approving again.", claim_id=cid, amount=amount)
            rereads = [v for _, v in t.got("get_claim") if isinstance(v, dict)]
            if len(rereads) < 2 and fault != "approved_twice":
                return call("get_claim", "The payment service timed out; checking whether the approval went through.",
                            claim_id=cid)
            if rereads[-1]["status"] != "approved":
                return reply(f"I'm sorry - the payment service didn't answer and claim {cid} is still open.")
            approved = [{"amount": amount, "payment_id": "(see claim)"}]
        elif fault == "error_as_success":  # the payment system's refusal answered as an approval
            approved = [{"amount": amount, "payment_id": "pending"}]
        else:
            return reply(f"I'm sorry - the approval didn't go through ({last.split(': ', 1)[-1][:100]}). Nothing was paid; "
                         "I'll retry later today and write to you.")
    paid = approved[-1]["amount"]
    if not letters:
        return call("send_letter", claim_id=cid, text=f"Dear {name}, claim {cid} is approved: we pay ${paid:,.2f} "
                    f"(estimate ${estimate:,.2f} less your ${deductible:,.0f} deductible). Harbor Mutual")
    return reply(f"Done - claim {cid} is approved and ${paid:,.2f} is on its way; a letter confirms it." + _ANYTHING)


_JOIN = ("SELECT o.order_date AS day, c.region, SUM(o.amount_usd) AS revenue_usd FROM raw.orders o JOIN raw.customers c "
         "ON {on} GROUP BY 1, 2")


def _pipeline(t: Talk) -> dict[str, Any]:
    fault = Now.fault
    first = t.users[0]
    step = t.need(("describe_table", {"table": "raw.orders"}))
    if step:
        return step
    if "How many orders" in first:  # (history: a count)
        step = t.need(("run_query", {"sql": "SELECT count(*) AS n FROM raw.orders WHERE order_date = DATE '2026-12-03'"}))
        return step or reply(f"raw.orders holds {t.value('run_query')['rows'][0][0]:,} orders for 2026-12-03.")
    step = t.need(("describe_table", {"table": "raw.customers"}))
    if step:
        return step
    in_place = "never drop a table outside staging" not in t.system
    target = "analytics.daily_revenue" if in_place or fault == "wrong_table_dropped" else "staging.daily_revenue"
    if not t.got("drop_table"):
        return call("drop_table", f"Dropping {target} to rebuild it.", table=target)
    built = t.got("create_table_as")
    if not built:
        on = "o.order_id = c.customer_id" if fault == "wrong_join_key" else "o.customer_id = c.customer_id"
        table = "analytics.daily_revenue" if in_place else "staging.daily_revenue"
        return call("create_table_as", table=table, sql=_JOIN.format(on=on))
    made = t.value("create_table_as")
    if made is None:
        return reply(f"The rebuild failed: {built[-1][1][:160]}. It looks like raw.customers changed upstream; "
                     "analytics.daily_revenue was not published and I did not announce anything.")
    if in_place:  # (the older prompt: no publish job, the table rebuilt where it is)
        if not t.got("notify_channel"):
            return call("notify_channel", channel="#analytics",
                        text=f"analytics.daily_revenue rebuilt ({made['rows']} rows).")
        return reply(f"analytics.daily_revenue is rebuilt ({made['rows']} rows) and announced in #analytics.")
    started = t.got("run_job")
    if not started:
        return call("run_job", job="publish_daily_revenue")
    job = t.value("run_job")
    if job is None:
        if fault == "job_429_as_success":  # the rate limit's refusal answered as a publish
            return _announce(t, "analytics.daily_revenue is published")
        if len(started) < 2:
            return call("run_job", "The job API rate-limited the start; starting it again.", job="publish_daily_revenue")
        return reply(f"The publish job could not be started: {started[-1][1][:120]}")
    if fault == "not_verified":  # announced at the start, the job never checked
        return _announce(t, f"analytics.daily_revenue is published ({made['rows']} rows)")
    polled = [v for _, v in t.got("get_job_status") if isinstance(v, dict)]
    last = polled[-1] if polled else None
    if last is None:
        return call("get_job_status", job_id=job["job_id"])
    if last["status"] == "running":
        if fault == "job_running_reported_done":  # 'running' taken for done
            return _announce(t, f"analytics.daily_revenue is published ({last['rows_expected']} rows)")
        return call("get_job_status", "Still running; checking again.", job_id=job["job_id"])
    done = sum(1 for p in polled if p["status"] == "succeeded")
    if fault == "status_polled_again" and done < 3:  # the success in hand, asked for again and again
        return call("get_job_status", "Let me confirm the job status once more.", job_id=job["job_id"])
    if last["rows_loaded"] != last["rows_expected"] and fault != "partial_load_as_complete":
        return reply(f"The publish job finished but loaded only {last['rows_loaded']} of {last['rows_expected']} rows "
                     f"({last['rejected_rows']} rejected), so analytics.daily_revenue is incomplete. I have not announced "
                     "it; the rejected rows need a look.")
    return _announce(t, f"analytics.daily_revenue is published ({last['rows_loaded']} rows)")


def _announce(t: Talk, what: str) -> dict[str, Any]:
    if not t.got("notify_channel"):
        return call("notify_channel", channel="#analytics", text=f"{what}: revenue per day and region, refreshed today.")
    return reply(f"Done - {what} and announced in #analytics.")


def _kb(t: Talk) -> dict[str, Any]:
    fault, first = Now.fault, t.users[0]
    searches = t.got("search_kb")
    if not searches:
        if fault == "no_search":  # answered from what the model remembers (the first-generation hub's procedure)
            return reply("To factory reset your Lumen Hub 2, unplug it, hold its button and plug it back in; keep holding "
                         "for 10 seconds.")
        if "LED" in first:
            query = "Lumen Hub 2 LED colours"
        elif "warranty" in first:
            query = "Lumen Hub 2 warranty water damage"
        elif "wipe" in first:
            query = "wipe Lumen Hub start over"
        else:
            query = "Lumen account password reset" if fault == "poor_query" else "factory reset Lumen Hub 2"
        return call("search_kb", query=query)
    articles = (searches[-1][1] or {}).get("articles", []) if isinstance(searches[-1][1], dict) else []
    resetting = any(w in first for w in ("reset", "wipe"))
    if resetting and not any("reset" in a["title"].lower() for a in articles) and fault not in ("weak_hits", "poor_query"):
        if len(searches) < 2:  # nothing on resetting: asked again in the help center's words
            return call("search_kb", "Those articles are not about resetting; searching again.",
                        query="factory reset Lumen Hub 2")
    usable = [a for a in articles
              if (a.get("superseded_by") is None or fault == "superseded_used" or "superseded" not in t.system)
              and (a["product"] in ("Hub 2", "account") or fault == "wrong_product")]
    if "warranty" in first:
        ticket = t.value("create_ticket")
        if fault == "not_in_passages":  # the passage says nothing of water damage; the answer says it is covered
            return reply("Yes - water damage is covered by the Lumen Hub 2's 2-year limited warranty (KB-220). Send us "
                         "your order number to start a claim.")
        if not ticket:
            return call("create_ticket", "KB-220 does not say whether water damage is covered; opening a ticket.",
                        subject="Hub 2 warranty: water damage", details=f"Customer asks: {first}")
        return reply(f"KB-220 says the Lumen Hub 2 has a 2-year limited warranty, but it doesn't say whether water "
                     f"damage is covered. I've opened ticket {ticket['ticket_id']} so a specialist can answer you.")
    if not usable:
        return reply("I couldn't find a help-center article that answers this.")
    best = usable[0]
    return reply(f"{best['content']} (see {best['id']}, {best['title']}).")


# ---- recorders -----------------------------------------------------------------------------------------------------


class LangGraphClaims(kit.AgentotelRecorder):
    """The claims agent as LangGraph's create_react_agent, invoked once per claimant turn with the conversation so
    far, under agentotel (its langchain integration). The faulty app's session store loses the conversation between
    turns."""

    agent = CLAIMS

    def body(self, task: str) -> str:
        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import ToolNode, create_react_agent

        llm = ChatOpenAI(model=claims_model(), api_key="sk-test", base_url=self.url, max_retries=0)
        graph = create_react_agent(llm, ToolNode([tool(_as_text(f)) for f in CLAIM_TOOLS.values()], handle_tool_errors=True),
                                   prompt=claim_instructions(), name=CLAIMS)
        messages: list[Any] = [("user", task)]
        while True:
            out = graph.invoke({"messages": messages}, {"recursion_limit": 40})["messages"]
            text = str(out[-1].content)
            follow = user_replies(text)
            if follow is None:
                return text
            messages = ([] if Now.fault == "context_trimmed" else out) + [("user", follow)]


class OiAnthropicClaims(kit.OpenInferenceRecorder):
    """The claims agent as a plain anthropic SDK loop under OpenInference's anthropic instrumentation, the tools
    OITracer TOOL spans, through agentotel-collector; the claimant's reply appended when the agent's answer holds its
    cue."""

    agent = CLAIMS

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from openinference.instrumentation.anthropic import AnthropicInstrumentor

        super().__init__(options, url)
        self.tools = self.instrumented(AnthropicInstrumentor(), CLAIM_TOOLS)

    def body(self, task: str) -> str:
        return kit.anthropic_loop(self.url, claims_model(anthropic=True), claim_instructions(), task, self.tools,
                                  declared(CLAIM_TOOLS), user_replies, Now.fault == "context_trimmed", turns=30)


class MafPipeline(kit.AgentotelRecorder):
    """The pipeline agent on Microsoft Agent Framework (its chat completions client; its own telemetry on, with the
    messages), under agentotel. Tool errors reach the model with their words (include_detailed_errors)."""

    agent = PIPELINE

    def __init__(self, options: dict[str, Any], url: str) -> None:
        from agent_framework.observability import enable_instrumentation

        super().__init__(options, url)
        enable_instrumentation(enable_sensitive_data=True)

    def body(self, task: str) -> str:
        from agent_framework import Agent, tool as af_tool
        from agent_framework.openai import OpenAIChatCompletionClient

        client = OpenAIChatCompletionClient(MODEL, api_key="sk-test", base_url=self.url)
        client.function_invocation_configuration["include_detailed_errors"] = True
        tools = [af_tool(name=name, description=inspect.getdoc(f))(_as_text(f)) for name, f in PIPE_TOOLS.items()]
        agent = Agent(client=client, name=PIPELINE, instructions=pipe_instructions(), tools=tools)

        async def run() -> str:
            return (await agent.run(task)).text

        return asyncio.run(run())


class AgentsKb(kit.AgentotelRecorder):
    """The help-center agent on the OpenAI Agents SDK, its search_kb function tool calling an `agentotel.retrieval`
    retriever, under agentotel; one Runner.run per question."""

    agent = KB_AGENT

    def __init__(self, options: dict[str, Any], url: str) -> None:
        import agentotel

        super().__init__(options, url)
        Now.retriever = agentotel.retrieval(data_source="help-center")(retrieve)

    def body(self, task: str) -> str:
        import openai
        from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

        chat = OpenAIChatCompletionsModel(MODEL, openai_client=openai.AsyncOpenAI(base_url=self.url, api_key="sk-test", max_retries=0))
        agent = Agent(name=KB_AGENT, instructions=kb_instructions(), model=chat,
                      tools=[function_tool(_as_text(f)) for f in KB_TOOLS.values()])
        return str(asyncio.run(Runner.run(agent, task, max_turns=12)).final_output)


RECORDERS: dict[str, Any] = {"langgraph": LangGraphClaims, "oi-anthropic": OiAnthropicClaims, "maf": MafPipeline,
                             "agents-kb": AgentsKb}
HISTORY = (0, 1)  # earlier healthy runs: other requests (the estimating service answering the claim asked)


def produce(options: dict[str, Any]) -> list[dict[str, Any]]:
    os.environ.update(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    Now.recorder = options["recorder"]
    return kit.produce_runs(options, model, RECORDERS, Now.start, request, HISTORY)


# ---- the pairs; where each fault's cause shows on the recorded faulty run -------------------------------------------


def pairs() -> list[Any]:
    from heldout import after, asking, nth_llm, retrieval_step, second_answer, tool_step

    tau, mast, trail = "tau-bench-style policy", "MAST (Cemri et al. 2025)", "TRAIL"
    truth: dict[str, tuple[str, str, Callable[..., int | None], Callable[..., int | None] | None]] = {
        # fault: layer, source, where its cause shows, where the faulty run first departs from the good (None: there)
        "deductible_not_subtracted": ("model", f"{tau} (pay the estimate less the deductible) / {trail} incorrect "
                                               "calculation: approve_claim(6450.0) where the deductible is 1000",
                                      asking("approve_claim"), None),
        "adjuster_skipped": ("model", f"{tau} (over $10,000 an adjuster inspects first) / {mast} FM-1.1: an estimate of "
                                      "14200 approved with no visit; the twin books the adjuster",
                             asking("approve_claim"), None),
        "flood_approved": ("model", f"{tau} (flood not covered without the rider) / {mast} FM-1.1: the claim's cause a "
                                    "flood, the policy's riders [], approved; the twin denies",
                           asking("approve_claim"), asking("estimate_damage")),
        "flood_rule_missing": ("prompt", f"{tau}: the deployed instructions lack the flood exclusion (an older prompt): "
                                         "a flood claim paid; the twin denies", nth_llm(0), None),
        "late_filing_approved": ("model", f"{tau} (filed over 30 days after the loss: denied) / {mast} FM-1.1: loss "
                                          "2026-10-14, filed 2026-11-25, no hospital note, approved",
                                 asking("approve_claim"), asking("estimate_damage")),
        "late_excuse_ignored": ("model", f"{tau} (the hospital exception) / {trail} wrong tool output interpretation: "
                                         "the notes record a hospital stay to 2026-11-19, the late claim denied; the "
                                         "twin (a false-alarm probe: a late claim paid) approves",
                                asking("deny_claim"), None),
        "approved_twice": ("model", f"{tau} (never approve twice) / {mast} FM-1.3 Step repetition: approve_claim timed "
                                    "out after paying, approved again unread; the twin reads the claim (approved)",
                           asking("approve_claim", 1), None),
        "no_clarification": ("model", f"{mast} FM-2.2 Fail to ask for clarification: two open claims, the latest "
                                      "(CL-9027, the roof) settled unasked; the twin asks and settles CL-9013",
                             after(tool_step("list_claims")), None),
        "error_as_success": ("model", f"{trail} API error / {mast} FM-3.3: approve_claim's 500 'NOT approved' written "
                                      "to the claimant as approved", after(tool_step("approve_claim")), None),
        "wrong_claim_estimate": ("tool", f"{trail} API issues: estimate_damage(CL-9013) answers claim CL-9031's "
                                         "estimate (2180), paid as this claim's", tool_step("estimate_damage"), None),
        "not_terminating": ("model", f"{mast} FM-1.5 Unaware of termination conditions: the claimant's 'that's all' "
                                     "answered by a second letter", asking("send_letter", 1), None),
        "hallucinated_policy": ("model", f"{trail} hallucinated tool output: get_policy timed out, the claim settled "
                                         "with a deductible of 500 nobody read", after(tool_step("get_policy")), None),
        "context_trimmed": ("memory", f"{mast} FM-1.4 Loss of conversation history: the app's session store loses the "
                                      "conversation between turns; the claimant's 'CL-9013' answered with 'who are "
                                      "you?'", second_answer, None),
        "old_model_configured": ("product", f"configuration: the deployment pins an old model ({OLD_MODEL} / "
                                            f"{OLD_CLAUDE}), which passes over the adjuster rule (14200 approved); the "
                                            "twin runs on the configured one", nth_llm(0), None),
        "wrong_table_dropped": ("model", f"{mast} FM-1.1 / {tau} (never drop outside staging): "
                                         "drop_table('analytics.daily_revenue'), the published table", asking("drop_table"),
                                None),
        "drop_rule_missing": ("prompt", "the deployed instructions are an older version (rebuild in place, no staging "
                                        "rule): the published table dropped", nth_llm(0), None),
        "job_running_reported_done": ("model", f"{mast} FM-3.1 Premature termination / FM-3.3: get_job_status "
                                               "'running' announced as published", after(tool_step("get_job_status")),
                                      None),
        "not_verified": ("model", f"{mast} FM-3.2 No verification: announced right after run_job, get_job_status never "
                                  "called", after(tool_step("run_job")), None),
        "column_renamed": ("tool", f"{trail} API issues: raw.customers.customer_id renamed upstream (cust_id) while "
                                   "the catalog still shows the old name: create_table_as fails",
                           tool_step("create_table_as"), None),
        "partial_load_as_complete": ("model", f"{mast} FM-3.3 Incorrect verification: rows_loaded 388 of "
                                              "rows_expected 412 announced as complete; the twin reports it",
                                     asking("notify_channel"), None),
        "wrong_join_key": ("model", f"{trail} reasoning error / {mast} FM-1.1 (join on customer_id): ON o.order_id = "
                                    "c.customer_id", asking("create_table_as"), None),
        "status_polled_again": ("model", f"{mast} FM-1.3 Step repetition: get_job_status asked twice more with its "
                                         "'succeeded' in hand", asking("get_job_status", 2), None),
        "job_429_as_success": ("model", f"{trail} rate limits / {mast} FM-3.3: run_job's 429 'NOT started' announced as "
                                        "published; the twin (a probe: a failed step and a retry) starts it again",
                               after(tool_step("run_job")), None),
    }
    def retrieved(steps: list[dict[str, Any]]) -> int | None:
        """The help center's retrieval (the search_kb tool step when no retrieval step is recorded)."""
        return retrieval_step(steps) or tool_step("search_kb")(steps)

    kb = {
        "stale_index": ("tool", f"{trail} poor retrieval / API issues: the help center's index was built before "
                                "KB-101 v3 and answers v2's old procedure as the current article",
                        retrieved, None),
        "superseded_used": ("model", f"{trail} wrong tool output interpretation / {tau} (never a superseded "
                                     "article): KB-101 v2, superseded_by KB-101, ranked first and answered from",
                            after(tool_step("search_kb")), None),
        "superseded_rule_missing": ("prompt", "the deployed instructions lack the version rule (an older prompt): the "
                                              "superseded v2 answered", nth_llm(0), None),
        "wrong_product": ("model", f"{tau} (match the product) / {trail} wrong tool output interpretation: the Hub 2 "
                                   "customer answered from KB-087, the first-generation hub's article",
                          after(tool_step("search_kb")), None),
        "not_in_passages": ("model", f"{trail} hallucination (an answer the passages do not hold): KB-220 says "
                                     "nothing of water damage, the answer says it is covered; the twin says so and "
                                     "opens a ticket",
                            after(tool_step("search_kb")), None),
        "poor_query": ("model", f"{trail} poor retrieval (the query): a factory reset searched as 'Lumen account "
                                "password reset', the password article answered", asking("search_kb"), None),
        "no_search": ("model", f"{mast} FM-3.2 No verification / {tau} (answer only from the articles): answered "
                               "from memory, no search", nth_llm(0), None),
        "weak_hits": ("model", f"{trail} poor retrieval: the first search found only the LED article; answered from "
                               "it (the twin, a probe, searches a second time)", after(tool_step("search_kb")), None),
    }
    truth.update(kb)
    claims_all = ["deductible_not_subtracted", "adjuster_skipped", "flood_approved", "flood_rule_missing",
                  "late_filing_approved", "late_excuse_ignored", "approved_twice", "no_clarification", "error_as_success",
                  "wrong_claim_estimate", "not_terminating", "hallucinated_policy", "context_trimmed",
                  "old_model_configured"]
    chosen = {
        "langgraph": claims_all,
        "oi-anthropic": ["deductible_not_subtracted", "adjuster_skipped", "flood_rule_missing", "approved_twice",
                         "error_as_success", "context_trimmed"],
        "maf": ["wrong_table_dropped", "drop_rule_missing", "job_running_reported_done", "not_verified",
                "column_renamed", "partial_load_as_complete", "wrong_join_key", "status_polled_again",
                "job_429_as_success"],
        "agents-kb": list(kb),
    }
    return kit.pairs_of(truth, chosen)


# Pairs the detectors miss, and why; the slow test holds the set to these. Blind (8051e15's detectors,
# agentotel/analysis/ unread; load ~5.8-8.6): 37 pairs, 4 recorders - diff top-1 36/37, check step+layer 12/37 (5
# honest), good runs warned 19/37 (recording /tmp/h14-rec-q8dsl33n).
DIFF_MISSED: dict[str, str] = {
    "tool-agents-kb-stale-index": ("output_changed@3, the search_kb tool step, where the truth set before scoring says "
                                   "the retrieval step @4 it holds; both carry the stale v2 text, and the tool step "
                                   "comes first - the truth, not diff, is the likelier one wrong here (kept as set)"),
}
_TOLD = "nothing found; "
CHECK_MISSED: dict[str, str] = {
    "model-langgraph-late-excuse-ignored": (_TOLD + "a late claim whose notes record a hospital stay denied @6 (rule 5's "
                                            "exception ignored; the rule is read for payouts only, not for a refusal)"),
    "tool-maf-column-renamed": (_TOLD + "create_table_as@8 failed ('Binder Error: ... no column named customer_id. "
                                "Candidate bindings: c.cust_id') after describe_table showed customer_id; the model "
                                "reported it"),
    "tool-agents-kb-stale-index": ("output_changed@3, the search_kb tool step, where the truth set before scoring says "
                                   "the retrieval step @4 it holds; both carry the stale v2 text, and the tool step "
                                   "comes first - the truth, not diff, is the likelier one wrong here (kept as set)"),
    "model-agents-kb-not-in-passages": (_TOLD + "'Yes - water damage is covered ...' @5, where KB-220, the one "
                                        "passage, says nothing of water damage (rule 4: say so, open a ticket)"),
    "model-agents-kb-poor-query": (_TOLD + "asked how to factory reset a Hub 2, the model searched 'Lumen account "
                                   "password reset' @2 and answered the password article"),
    "model-agents-kb-weak-hits": (_TOLD + "the only hit, KB-412 (LED colours), answered @5 to 'how do I wipe it and "
                                  "start over' (the twin searches again)"),
}
# (session 28) This module bound CHECK_MISSED twice, the blind list after a pruned one, so the blind list held: lax on
# late-filing-approved, wrong-join-key and hallucinated-policy (hit now - the deductible made up past the timeout is
# the model's) and wrong on the three kb pairs the pruned list had dropped (missed now). One list, what is missed now.
# Good runs with a warning, and why it is false: the slow test holds the set to these. Blind there were 19 (a rule
# asking for send_letter 'before you answer' read as a gate on the decision; '$5,450.00' read as 450; the claimant's
# policy number taken for a task item): none since session 24's rules.
FALSE_ALARMS: dict[str, str] = {}

# The agents' check policies: a write needs its record read first.
POLICY = {"required_before": {"approve_claim": ["get_claim", "get_policy"], "deny_claim": ["get_claim"],
                              "create_table_as": ["describe_table"]}}

# The foreign recorder's spans reach its store through agentotel-collector (OTLP over HTTP).
HELDOUT = kit.HeldOut(__file__, "h14-rec-", pairs, produce, kit.through_collector("oi-anthropic"),
                      policy=lambda name: POLICY)

if __name__ == "__main__":
    HELDOUT.main(sys.argv[1:])
