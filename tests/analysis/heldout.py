"""A held-out fault-injection set for `diff` and `check`: run shapes and faults the detectors were not tuned on.

    python tests/analysis/heldout.py            # records every pair into a temporary store, prints the table

Not the diagnosis benchmark's generator, not the framework twins: four other agents in other domains, recorded
through the real SDKs against a model on 127.0.0.1 (tests/analysis/shapes.py's server) that answers from the
conversation it is sent:

- `oncall`: an SRE agent on the openai SDK (parallel tool calls, a runbook retrieval, a model call the loop
  retries after a 500, metrics whose `deploy` field is sometimes null);
- `ledger`: a long run (16 days read one by one: 34+ steps) whose faults sit in the middle and whose symptom
  may show many steps after the cause;
- `netdesk`: the OpenAI Agents SDK, a triage agent handing over to a network specialist that pings hosts in
  parallel;
- `expenses`: the anthropic SDK, parallel receipts and conversions, an approval the policy guards;
- `kb`: retrieval-augmented answers, streamed.

Faults are drawn from the taxonomies the diagnosis benchmark covers least (MAST: no verification,
reasoning-action mismatch, ignored input, unaware of termination, premature termination; TRAIL: timeouts,
auth errors, rate limits, formatting errors, resource abuse, context handling, hallucinated outputs;
ToolScan / AgentErrorTaxonomy: missing required arguments, invalid values, infinite loops). Every good run
varies legitimately from the agent's earlier runs (other ids and numbers, a null optional field, a retried
model call, another valid order of parallel calls, paraphrased answers). Ground truth is located on the
recorded faulty run by what its steps did (`Pair.where`), never by position.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

sys.path.insert(0, str(Path(__file__).parent))

import anthropic  # noqa: E402

import agentotel  # noqa: E402
from agentotel.tools import registered_tools  # noqa: E402
from shapes import Recorder, Status, reply, results, serve, system, users  # noqa: E402

# ---- what the run in progress is -------------------------------------------------------------------------


class Now:
    fault: str | None = None
    variant = 0
    calls = 0  # model requests of this run
    restarted = False
    failed_once: set[str] = set()


def _start(fault: str | None, variant: int) -> None:
    Now.fault, Now.variant, Now.calls, Now.restarted, Now.failed_once = fault, variant, 0, False, set()


SERVICES = ["checkout-api", "search-api", "billing-api", "profile-api"]
ALERTS = ["5xx spike on /pay", "p99 latency over 2 s", "queue backlog growing", "pod crash loop"]

# ---- oncall: the tools ---------------------------------------------------------------------------------


@agentotel.tool
def list_alerts(service: str) -> dict[str, Any]:
    """Open alerts of a service."""
    if Now.fault == "alerts_429":
        raise RuntimeError("429 Too Many Requests: alerting API rate limit (60/min) exceeded")
    v = Now.variant
    return {"service": service, "alerts": [{"id": f"AL-{7310 + v}", "title": ALERTS[v % 4], "severity": "critical"}]}


@agentotel.tool
def get_metrics(service: str, window: Literal["5m", "15m", "1h"]) -> dict[str, Any]:
    """Error rate (percent) and p99 latency of a service over a window."""
    if window not in ("5m", "15m", "1h"):
        raise ValueError(f"window must be one of 5m, 15m, 1h, not {window!r}")
    if Now.fault == "metrics_timeout" and not Now.restarted:
        raise TimeoutError("metrics backend did not answer within 10 s")
    v = Now.variant
    rate = round(12.5 + 3.1 * v, 1) if not Now.restarted else round(0.4 + 0.1 * v, 1)
    return {"service": service, "window": window, "error_rate_pct": rate, "p99_ms": 2140 + 97 * v if not Now.restarted else 310 + 11 * v,
            "deploy": None if v % 2 else f"v2.{v}.{3 + v}"}


@agentotel.retrieval(data_source="runbooks")
def search_runbooks(query: str) -> list[dict[str, Any]]:
    """Runbooks matching an alert."""
    v = Now.variant
    return [{"id": f"RB-{40 + v}", "score": 0.91, "content": f"Runbook for '{query}': restart the service, then verify the error rate."},
            {"id": f"RB-{60 + v}", "score": 0.47, "content": "Escalation contacts for the payments team."}]


@agentotel.tool
def restart_service(service: str, reason: str) -> dict[str, Any]:
    """Rolling restart of a service's pods."""
    if Now.fault == "restart_forbidden":
        return {"error": "403 Forbidden: token lacks the ops:restart scope"}
    Now.restarted = True
    return {"service": service, "restarted_pods": 3 + Now.variant, "reason": reason}


@agentotel.tool
def get_logs(service: str, lines: int) -> str:
    """The last lines of a service's log."""
    return "\n".join(f"2026-06-15T10:{i % 60:02d}:{i % 59:02d}Z {service} ERROR upstream reset by peer (conn {i})" for i in range(lines))


@agentotel.tool
def rollback_deploy(service: str) -> dict[str, Any]:
    """Roll a service back to its previous deploy."""
    return {"service": service, "rolled_back": True}


ONCALL_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (list_alerts, get_metrics, search_runbooks, restart_service,
                                                                       get_logs, rollback_deploy)}
ONCALL_SYSTEM = ("You are the on-call assistant. For an alerting service: read its alerts, check metrics and the runbook, "
                 "mitigate as the runbook says, then verify with fresh metrics before you report.")


def offered(tools: dict[str, Callable[..., Any]], *names: str) -> list[dict[str, Any]]:
    known = _own()
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}  # a retrieval
    return [{"type": "function", "function": {"name": n, "description": known[n].description if n in known else tools[n].__doc__,
                                              "parameters": known[n].schema["parameters"] if n in known else query}}
            for n in names or tools]


def _parsed(body: dict[str, Any]) -> list[Any]:
    out = []
    for r in results(body):
        if isinstance(r, str) and r.startswith("{"):
            try:
                r = json.loads(r)
            except ValueError:
                pass
        out.append(r)
    return out


def oncall_model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault, v = Now.fault, Now.variant
    if Now.variant >= 2 and Now.calls == 2 and "retried" not in Now.failed_once:
        Now.failed_once.add("retried")
        raise Status(500, "The server had an error while processing your request.")  # the loop retries: a good variation
    task = " ".join(users(body))
    service = re.search(r"\b[a-z]+-api\b", task)
    if service is None or "on-call" not in system(body):
        return reply("Arr, which ship be ye askin' about?")
    service = service.group(0)
    found = _parsed(body)
    alerts = [r for r in found if isinstance(r, dict) and "alerts" in r]
    metrics = [r for r in found if isinstance(r, dict) and "error_rate_pct" in r]
    books = [r for r in found if isinstance(r, list) and r and isinstance(r[0], dict) and "id" in r[0]]
    restarts = [r for r in found if isinstance(r, dict) and ("restarted_pods" in r or "error" in r)]
    errors = [r for r in found if isinstance(r, str) and r.startswith("Error")]
    if fault == "loop_alerts" and alerts:
        return reply(None, ("list_alerts", {"service": service}))  # the model asks again and again
    if not alerts:
        if errors and fault == "alerts_429":
            return reply(None, ("list_alerts", {"service": service}))
        return reply(None, ("list_alerts", {"service": service}))
    alert = alerts[-1]["alerts"][0]["title"]
    went_on = fault == "metrics_timeout" and bool(errors)  # the faulty model goes on as if it had the metrics
    if (not metrics and not went_on) or not books:
        if fault == "bad_window" and not errors:
            return reply(None, ("get_metrics", {"service": service, "window": "15 minutes"}), ("search_runbooks", {"query": alert}))
        if errors and fault == "bad_window":
            return reply(None, ("get_metrics", {"service": service, "window": "15m"}))
        else:
            calls = [("get_metrics", {"service": service, "window": "15m"}), ("search_runbooks", {"query": alert})]
            if v % 2:
                calls.reverse()  # another valid order
            if fault == "huge_logs":
                calls.append(("get_logs", {"service": service, "lines": 4000}))
            elif v >= 1:
                calls.append(("get_logs", {"service": service, "lines": 20}))
            return reply(None, *calls)
    if not restarts:
        if fault == "wrong_target":
            return reply(f"I will restart {service} now.", ("restart_service", {"service": "payments-worker", "reason": alert}))
        if fault == "forbidden_rollback":
            return reply(None, ("rollback_deploy", {"service": service}))
        if fault == "missing_reason" and not errors:
            return reply(None, ("restart_service", {"service": service}))
        return reply(None, ("restart_service", {"service": service, "reason": alert}))
    before = metrics[0]["error_rate_pct"] if metrics else None
    if fault == "restart_forbidden" and restarts and "error" in restarts[-1]:
        return reply(f"Restarted {service} ({alert}); error rate is back to normal.")  # ignores the 403
    if fault == "no_verify":
        return reply(f"Restarted {service} after '{alert}'. The error rate went from {before}% to {round(0.4 + 0.1 * v, 1)}%.")
    if len(metrics) < (1 if went_on else 2):
        return reply(None, ("get_metrics", {"service": service, "window": "5m"}))
    after = metrics[-1]["error_rate_pct"]
    if fault == "metrics_timeout":
        return reply(f"Restarted {service}; the error rate fell from 14.2% to {after}%.")
    if v % 2:
        return reply(f"{service}: pods restarted for '{alert}'. Error rate now {after}% (was {before}%).")
    return reply(f"Restarted {service} after '{alert}'. The error rate went from {before}% to {after}%.")


def oncall(rec: Recorder, fault: str | None, variant: int) -> str:
    _start(fault, variant)
    service = SERVICES[variant % 4]
    task = f"{service} is alerting. Investigate and mitigate."
    client = rec.client()

    def body() -> str:
        messages = [{"role": "system", "content": ONCALL_SYSTEM}, {"role": "user", "content": task}]
        turns = 2 if fault == "premature_stop" else 10

        def retried(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sent

        return _loop_retrying(client, messages, ONCALL_TOOLS, offered(ONCALL_TOOLS), max_turns=turns,
                              keep_going=fault == "keep_going")
    return rec.run("oncall", task, body)


def _loop_retrying(client: Any, messages: list[dict[str, Any]], tools: dict[str, Callable[..., Any]], offered_: list[dict[str, Any]], *,
                   max_turns: int, keep_going: bool = False, before_call: Callable[[int, list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
                   run_only: int | None = None, catch: bool = True) -> str:
    """A tool loop that retries a model call once after a 500 (as many agents do)."""
    import openai

    answer = ""
    for turn in range(max_turns):
        sent = before_call(turn, messages) if before_call else messages
        try:
            response = client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=offered_)
        except openai.InternalServerError:
            response = client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=offered_)
        message = response.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            answer = message.get("content") or ""
            if keep_going and turn < max_turns - 1 and sum(1 for m in messages if m.get("role") == "assistant" and not m.get("tool_calls")) < 3:
                messages.append({"role": "user", "content": "Continue."})  # the fault: the loop does not stop at the answer
                continue
            return answer
        for call in calls[:run_only]:
            arguments = json.loads(call["function"]["arguments"])
            try:
                result: Any = tools[call["function"]["name"]](**arguments)
            except Exception as exc:  # noqa: BLE001 - the model is shown the error, as most agents do
                if not catch:
                    raise
                result = f"Error: {exc}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return answer or "I could not finish."


# ---- ledger: a long run --------------------------------------------------------------------------------

DAYS = [f"2026-03-{d:02d}" for d in range(1, 17)]
STORES = ["S-14", "S-22", "S-31", "S-47"]


def _refunds(store: str, date: str) -> float:
    n = int(date[-2:]) + int(store[2:])
    return round(100 + (n * 37) % 250 + (n % 7) * 0.25, 2)


@agentotel.tool
def read_day(store: str, date: str) -> dict[str, Any]:
    """A store's refunds on one day."""
    amount = _refunds(store, date)
    if Now.fault == "shape_change" and date >= DAYS[8]:
        return {"date": date, "store": store, "refunds": {"cents": int(amount * 100), "currency": "EUR"}}
    note = None if int(date[-2:]) % 3 else "cash register closed early"
    out = {"date": date, "store": store, "refunds_eur": amount, "count": int(amount // 23), "note": note}
    if int(date[-2:]) % 5 == 0:
        del out["note"]  # absent on some days
    return out


LEDGER_SYSTEM = "You are a bookkeeping assistant. Read each day of the range with read_day, one day per call, then report the total."


def ledger_model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault = Now.fault
    task = " ".join(users(body))
    store = re.search(r"S-\d+", task)
    if store is None or "bookkeeping" not in system(body):
        return reply("Bonjour ! Que voulez-vous résumer ?")
    store = store.group(0)
    days = [r for r in _parsed(body) if isinstance(r, dict) and "date" in r]
    seen = [d["date"] for d in days]
    if fault == "repeat_day" and len(seen) == 8 and seen.count(seen[-1]) == 1:
        return reply(None, ("read_day", {"store": store, "date": seen[-1]}))  # asks for the day it just read
    todo = [d for d in DAYS if d not in seen]
    if todo:
        return reply(None, ("read_day", {"store": store, "date": todo[0]}))
    total = round(sum(d.get("refunds_eur", 0) for d in days if d["date"] in DAYS and d is days[[x["date"] for x in days].index(d["date"])]), 2)
    if fault == "wrong_total":
        total = round(total + 1375.5, 2)
    top = max((d for d in days if "refunds_eur" in d), key=lambda d: d["refunds_eur"])
    return reply(f"Store {store} refunded EUR {total:.2f} from {DAYS[0]} to {DAYS[-1]}; the highest day was {top['date']} "
                 f"(EUR {top['refunds_eur']:.2f}).")


def ledger(rec: Recorder, fault: str | None, variant: int) -> str:
    _start(fault, variant)
    store = STORES[variant % 4]
    task = f"Total the refunds of store {store} from {DAYS[0]} to {DAYS[-1]}."
    client = rec.client()

    def before_call(turn: int, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if fault == "drop_results" and turn == 10:
            del messages[2:-2]  # a 'compaction' that drops every earlier day without a summary (for good)
        if fault == "swap_prompt" and turn >= 10:
            messages[0] = {"role": "system", "content": "Réponds en français, en une phrase courte."}
        return messages

    def body() -> str:
        messages = [{"role": "system", "content": LEDGER_SYSTEM}, {"role": "user", "content": task}]
        return _loop_retrying(client, messages, {"read_day": read_day}, offered({"read_day": read_day}), max_turns=40,
                              before_call=before_call)
    return rec.run("ledger", task, body)


# ---- netdesk: the Agents SDK, a handoff -----------------------------------------------------------------

HOSTS = ["vpn-gw-2", "core-sw-1", "dns-3", "proxy-7"]


def netdesk_model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault = Now.fault
    names = [t["function"]["name"] for t in body.get("tools") or ()]
    if "transfer_to_network" in names:
        return reply(None, ("transfer_to_network", {}))
    asked = " ".join(users(body))
    host = re.search(r"\b[a-z]+-[a-z]+-\d\b|\bdns-\d\b|\bproxy-\d\b", asked)
    if "network specialist" not in system(body):
        return reply("I route requests to the right team. Please tell me what you need.")
    if host is None:
        return reply("Hello! Which host is the problem with?")
    host = host.group(0)
    found = [r for r in _parsed(body) if isinstance(r, dict) and "host" in r]
    failed = [r for r in results(body) if isinstance(r, str) and "error" in r.lower()]
    if not found and not failed:
        gateway = "core-sw-1" if host != "core-sw-1" else "dns-3"
        return reply(None, ("ping_host", {"host": host}), ("ping_host", {"host": gateway}))
    if fault == "ping_down" and failed:
        return reply(f"{host} answers pings in 12 ms; the problem must be on the client side.")  # ignores the error
    mine = next((r for r in found if r["host"] == host), None)
    if mine is None:
        return reply(f"I could not reach {host}: the ping tool failed. Please retry later.")
    if mine["loss_pct"] > 50:
        return reply(f"{host} drops {mine['loss_pct']}% of pings: escalating to the network team.")
    return reply(f"{host} is up ({mine['rtt_ms']} ms, {mine['loss_pct']}% loss); the gateway is fine too.")


def netdesk(rec: Recorder, fault: str | None, variant: int) -> str:
    from agents import Agent, Runner, function_tool, handoff, set_tracing_disabled
    from agents.extensions import handoff_filters
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    _start(fault, variant)

    @function_tool
    def ping_host(host: str) -> str:
        """Round-trip time and packet loss to a host."""
        if fault == "ping_down":
            raise ConnectionError("ICMP probe service unreachable (connection refused)")
        v = Now.variant + len(host)
        return json.dumps({"host": host, "rtt_ms": 9 + v, "loss_pct": 0 if v % 3 else 2, "via": None if v % 2 else "edge-1"})

    client = AsyncOpenAI(api_key="sk-test", base_url=rec.base_url, max_retries=0)
    chat = OpenAIChatCompletionsModel("gpt-4o-mini", client)
    TRIAGE = "You are the helpdesk triage. Route network problems to the network team."
    specialist = TRIAGE if fault == "role_swap" else "You are the network specialist. Ping the host and its gateway, then report."
    network = Agent(name="network", instructions=specialist, tools=[ping_host], model=chat)

    def forget(data: Any) -> Any:  # the fault: the handoff's input filter drops the whole conversation
        return data.clone(input_history=(), pre_handoff_items=(), new_items=())

    chosen = forget if fault == "handoff_forgets" else handoff_filters.remove_all_tools
    triage = Agent(name="triage", instructions=TRIAGE, handoffs=[handoff(network, input_filter=chosen)], model=chat)
    host = HOSTS[variant % 4]
    question = f"Nobody in building B can reach {host} since 9:00."
    return rec.run("netdesk", question, lambda: asyncio.run(Runner.run(triage, question)).final_output)


# ---- expenses: the anthropic SDK -----------------------------------------------------------------------

REPORTS = {v: {"report_id": f"R-{880 + v}", "employee": ["dana", "lee", "kim", "ola"][v % 4],
               "receipts": [f"RC-{5100 + 10 * v}", f"RC-{5101 + 10 * v}"]} for v in range(4)}


@agentotel.tool
def get_report(report_id: str) -> dict[str, Any]:
    """An expense report: employee and receipt ids."""
    return REPORTS[int(report_id[2:]) - 880]


@agentotel.tool
def get_receipt(receipt_id: str) -> dict[str, Any]:
    """One receipt: merchant, amount and currency."""
    if Now.fault == "receipts_401":
        raise PermissionError("401 Unauthorized: the receipts API key has expired")
    n = int(receipt_id[3:])
    return {"receipt_id": receipt_id, "merchant": ["Rail Europe", "Hotel Lumen", "Cafe Nord"][n % 3], "amount": round(40 + (n % 17) * 3.15, 2),
            "currency": "EUR", "vat": None if n % 2 else round((n % 17) * 0.5, 2)}


@agentotel.tool
def convert_currency(amount: float, from_currency: str, to_currency: Literal["GBP", "USD", "EUR"]) -> dict[str, Any]:
    """Convert an amount between currencies at today's rate."""
    rate = {"GBP": 0.85, "USD": 1.08, "EUR": 1.0}[to_currency]
    return {"amount": round(amount * rate, 2), "currency": to_currency}


@agentotel.tool
def approve_report(report_id: str, total: float, currency: str) -> dict[str, Any]:
    """Approve an expense report for payment."""
    return {"report_id": report_id, "approved": True, "total": total, "currency": currency}


EXPENSE_TOOLS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (get_report, get_receipt, convert_currency, approve_report)}
EXPENSE_SYSTEM = "You review expense reports: read the report and every receipt, convert amounts to the currency asked, approve, report the total."


def expenses_model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault = Now.fault
    if fault == "model_429" and Now.calls == 3:
        raise Status(429, "rate_limit_error: Number of request tokens has exceeded your per-minute rate limit")
    task = " ".join(users(body))
    report = re.search(r"R-\d+", task)
    want = re.search(r"\bin (GBP|USD|EUR)\b", task)
    if report is None or want is None:
        return reply("Which report?")
    report, want = report.group(0), want.group(1)
    if fault == "ignore_currency":
        want = "USD"  # the model ignores the currency the user asked for
    found = _parsed(body)
    rep = next((r for r in found if isinstance(r, dict) and "receipts" in r), None)
    receipts = [r for r in found if isinstance(r, dict) and "merchant" in r]
    converted = [r for r in found if isinstance(r, dict) and set(r) == {"amount", "currency"}]
    approved = [r for r in found if isinstance(r, dict) and r.get("approved")]
    errors = [r for r in found if isinstance(r, str) and r.startswith("Error")]
    if rep is None:
        return reply(None, ("get_report", {"report_id": report}))
    if fault == "approve_early" and not approved:
        return reply(None, ("approve_report", {"report_id": report, "total": 0.0, "currency": want}))
    if len(receipts) < len(rep["receipts"]):
        return reply(None, *[("get_receipt", {"receipt_id": r}) for r in rep["receipts"]])
    if len(converted) < len(receipts):
        if fault == "missing_to" and not errors:
            return reply(None, *[("convert_currency", {"amount": r["amount"], "from_currency": r["currency"]}) for r in receipts])
        if fault == "amount_text" and not errors:
            return reply(None, *[("convert_currency", {"amount": f"{r['currency']} {r['amount']}", "from_currency": r["currency"],
                                                       "to_currency": want}) for r in receipts])
        return reply(None, *[("convert_currency", {"amount": r["amount"], "from_currency": r["currency"], "to_currency": want})
                             for r in receipts])
    total = round(sum(c["amount"] for c in converted[-len(receipts):]), 2)
    if not approved:
        return reply(None, ("approve_report", {"report_id": report, "total": total, "currency": want}))
    merchants = ", ".join(r["merchant"] for r in receipts)
    return reply(f"Approved {report}: {want} {total:.2f} ({merchants}).")


def _anthropic_loop(client: Any, system_: str, question: str, tools: dict[str, Callable[..., Any]], *, catch: bool = True,
                    max_turns: int = 8) -> str:
    known = _own()
    defs = [{"name": n, "description": known[n].description, "input_schema": known[n].schema["parameters"]} for n in tools]
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(max_turns):
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, system=system_, messages=messages, tools=defs)
        content = [b.model_dump(exclude_none=True) for b in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [b for b in content if b["type"] == "tool_use"]
        if not uses:
            return " ".join(b.get("text", "") for b in content if b["type"] == "text")
        answers = []
        for use in uses:
            try:
                result: Any = tools[use["name"]](**use["input"])
                is_error = False
            except Exception as exc:  # noqa: BLE001
                if not catch:
                    raise
                result, is_error = f"Error: {exc}", True
            answers.append({"type": "tool_result", "tool_use_id": use["id"], "content": json.dumps(result), "is_error": is_error})
        messages.append({"role": "user", "content": answers})
    return ""


def expenses(rec: Recorder, fault: str | None, variant: int) -> str:
    _start(fault, variant)
    report = REPORTS[variant % 4]["report_id"]
    currency = ["GBP", "GBP", "GBP", "GBP"][variant % 4]
    question = f"Please review expense report {report} and approve it; give me the total in {currency}."
    client = anthropic.Anthropic(base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-test", max_retries=0)
    return rec.run("expenses", question, lambda: _anthropic_loop(client, EXPENSE_SYSTEM, question, EXPENSE_TOOLS,
                                                                 catch=fault != "receipts_401"))


# ---- kb: retrieval-augmented answers, streamed ----------------------------------------------------------

ARTICLES = {v: [{"id": f"KB-{300 + 7 * v + i}", "score": round(0.88 - 0.09 * i, 2), "title": t,
                 "url": f"https://help.example.com/kb/{300 + 7 * v + i}",
                 "content": c.format(days=14 + v)} for i, (t, c) in enumerate([
                     ("Returns", "Items can be returned within {days} days of delivery."),
                     ("Refund timing", "Refunds reach the card 3 to 5 business days after the return arrives."),
                     ("Damaged items", "Damaged items are replaced for free; photos help.")])] for v in range(4)}
QUESTIONS = ["How long do I have to return a lamp?", "How many days for a return of shoes?", "Return window for a sofa?",
             "Can I still return a kettle I got last week?"]


class Kb:
    weak = False


@agentotel.retrieval(data_source="help-articles")
def search_articles(query: str) -> list[dict[str, Any]]:
    """Help articles for a question, best first."""
    docs = [dict(d) for d in ARTICLES[Now.variant % 4]]
    if Now.fault == "weak_hits":
        for d in docs:
            d["score"] = round(d["score"] / 9, 3)
            d["content"] = "Gift cards cannot be exchanged for cash."
    return docs


KB_SYSTEM = "Answer the customer's question from the help articles given below. Cite the article id and link."


def kb_model(body: dict[str, Any]) -> dict[str, Any]:
    Now.calls += 1
    fault = Now.fault
    context = system(body)
    docs = re.findall(r"\[(KB-\d+)\] ([^\n]*) \((https://[^)]+)\)", context)
    if fault == "made_up_link":
        return reply("You have 30 days to return it: see https://help.example.com/kb/returns-policy-2025 (KB-999).")
    if not docs:
        return reply("You can return items within 30 days of delivery.")  # nothing given: the model answers from memory
    first = docs[0]
    days = re.search(r"within (\d+) days", first[1])
    if days is None:
        return reply(f"Our help center says: {first[1]} See {first[0]} ({first[2]}).")
    if Now.variant % 2:
        return reply(f"Within {days.group(1)} days of delivery ({first[0]}, {first[2]}).")
    return reply(f"You can return it within {days.group(1)} days of delivery, see {first[0]}: {first[2]}")


def kb(rec: Recorder, fault: str | None, variant: int) -> str:
    _start(fault, variant)
    question = QUESTIONS[variant % 4]
    client = rec.client()

    def body() -> str:
        found = search_articles(question)
        given = KB_SYSTEM
        if fault != "context_dropped":  # the fault: the retrieved articles never reach the prompt
            given += "\n" + "\n".join(f"[{d['id']}] {d['content']} ({d['url']})" for d in found)
        stream = client.chat.completions.create(model="gpt-4o-mini", stream=True, stream_options={"include_usage": True},
                                                messages=[{"role": "system", "content": given}, {"role": "user", "content": question}])
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    return rec.run("kb", question, body)


def _own() -> dict[str, Any]:
    """These tools' own declarations, taken at import: the process's registry keeps the latest tool of each
    name, and another module may declare its own convert_currency later."""
    return _OWN


_OWN = {name: info for name, info in registered_tools().items() if name in {*ONCALL_TOOLS, *EXPENSE_TOOLS, "read_day"}}

MODELS = {"oncall": oncall_model, "ledger": ledger_model, "netdesk": netdesk_model, "expenses": expenses_model, "kb": kb_model}
AGENTS = {"oncall": oncall, "ledger": ledger, "netdesk": netdesk, "expenses": expenses, "kb": kb}
POLICIES: dict[str, dict[str, Any]] = {
    "oncall": {"forbidden_tools": ("rollback_deploy",), "max_tokens": 60_000},
    "expenses": {"required_before": {"approve_report": ["get_receipt"]}},
    "kb": {"min_retrieval_score": 0.3},
}


# ---- where a fault's cause shows, on the recorded faulty run ----------------------------------------------


def _asked(step: dict[str, Any]) -> list[tuple[str, Any]]:
    from agentotel.analysis._steps import requested_calls

    return [(c.name, c.arguments) for c in requested_calls(step) if not c.name.startswith("transfer_to")]


def _llm(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in steps if s["type"] == "llm" and s["status"] == "ok"]


def asking(name: str, nth: int = 0) -> Callable[[list[dict[str, Any]]], int | None]:
    """The nth model call that asked for a call of `name`."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        hits = [s["index"] for s in _llm(steps) if any(n == name for n, _ in _asked(s))]
        return hits[nth] if len(hits) > nth else None
    return find


def after(found: Callable[[list[dict[str, Any]]], int | None]) -> Callable[[list[dict[str, Any]]], int | None]:
    """The first model call after the step `found` names."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        at = found(steps)
        return next((s["index"] for s in _llm(steps) if at is not None and s["index"] > at), None)
    return find


def answer(steps: list[dict[str, Any]]) -> int | None:
    """The first model call that answered (asked for no tool)."""
    return next((s["index"] for s in _llm(steps) if not _asked(s) and not any(
        c.startswith("transfer_to") for c in _names(s))), None)


def _names(step: dict[str, Any]) -> list[str]:
    from agentotel.analysis._steps import requested_calls

    return [c.name for c in requested_calls(step)]


def nth_llm(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
    def find(steps: list[dict[str, Any]]) -> int | None:
        llm = [s for s in steps if s["type"] == "llm"]
        return llm[n]["index"] if len(llm) > n else None
    return find


def tool_step(name: str, nth: int = 0, *, where: Callable[[dict[str, Any]], bool] = lambda s: True) -> Callable[[list[dict[str, Any]]], int | None]:
    def find(steps: list[dict[str, Any]]) -> int | None:
        hits = [s["index"] for s in steps if s["type"] in ("tool", "retrieval") and (s.get("tool_name") == name or s["name"].endswith(name))
                and where(s)]
        return hits[nth] if len(hits) > nth else None
    return find


def retrieval_step(steps: list[dict[str, Any]]) -> int | None:
    return next((s["index"] for s in steps if s["type"] == "retrieval"), None)


def failed_step(steps: list[dict[str, Any]]) -> int | None:
    return next((s["index"] for s in reversed(steps) if s["status"] == "error" and s["type"] != "agent"), None)


def agent_first_llm(agent_has: str) -> Callable[[list[dict[str, Any]]], int | None]:
    """The first model call made after the handoff (the specialist's first)."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        llm = [s for s in steps if s["type"] == "llm"]
        handed = next((i for i, s in enumerate(llm) if any(n.startswith("transfer_to") for n in _names(s))), None)
        return llm[handed + 1]["index"] if handed is not None and len(llm) > handed + 1 else None
    return find


def after_handoff(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
    """The first model call after the run's nth handoff (the next agent's first)."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        handed = [s["index"] for s in _llm(steps) if any(c.startswith("transfer_to") for c in _names(s))]
        at = handed[n] if len(handed) > n else None
        return next((s["index"] for s in _llm(steps) if at is not None and s["index"] > at), None)
    return find


def llm_of_turn(turn: int) -> Callable[[list[dict[str, Any]]], int | None]:
    return nth_llm(turn)


def second_answer(steps: list[dict[str, Any]]) -> int | None:
    """The first model call made after the run's first answer (the loop went on)."""
    first = answer(steps)
    return next((s["index"] for s in steps if s["type"] == "llm" and first is not None and s["index"] > first), None)


def last_step(steps: list[dict[str, Any]]) -> int | None:
    return steps[-1]["index"] if steps else None


def last_llm(steps: list[dict[str, Any]]) -> int | None:
    """The run's last model call (the answer it ended on)."""
    llm = _llm(steps)
    return llm[-1]["index"] if llm else None


def nth_answer(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
    """The run's nth model call that asked for no tool (an agent's hand-over note or a reply)."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        hits = [s["index"] for s in _llm(steps) if not _asked(s)]
        return hits[n] if len(hits) > n else None
    return find


def next_agent(n: int) -> Callable[[list[dict[str, Any]]], int | None]:
    """The model call after the run's nth hand-over note (a call asking for no tool): the next agent's first, in a team
    the app runs one agent after another."""
    def find(steps: list[dict[str, Any]]) -> int | None:
        llm = _llm(steps)
        notes = [i for i, s in enumerate(llm) if not _asked(s)]
        return llm[notes[n] + 1]["index"] if len(notes) > n and len(llm) > notes[n] + 1 else None
    return find


@dataclass(frozen=True)
class Pair:
    id: str
    agent: str
    layer: str
    fault: str
    taxonomy: str
    where: Callable[[list[dict[str, Any]]], int | None]  # the step of the faulty run where the cause shows
    diff_where: Callable[[list[dict[str, Any]]], int | None] | None = None  # where diff's first divergence belongs, when not there
    check_missed: str = ""  # why check misses this one still (the diff is still held to it)


# Pairs the default test run records (each exercises a rule added for this set); the slow test records all.
FAST = ("prompt-netdesk-specialist-given-triage-prompt", "memory-netdesk-handoff-drops-conversation",
        "model-oncall-metrics-timeout-invented", "tool-oncall-alerts-api-429-retried-forever",
        "workflow-oncall-stops-before-verifying", "workflow-kb-retrieved-context-never-sent",
        "model-oncall-claims-unverified-recovery", "model-oncall-restarts-another-service",
        "model-expenses-ignores-asked-currency", "product-kb-answer-from-weak-hits", "model-netdesk-ping-error-invented")


PAIRS: list[Pair] = [
    # prompt
    Pair("prompt-netdesk-specialist-given-triage-prompt", "netdesk", "prompt", "role_swap", "MAST FM-1.2 Disobey role specification",
         agent_first_llm("network")),
    Pair("prompt-ledger-prompt-swapped-mid-run", "ledger", "prompt", "swap_prompt", "MAST FM-1.1 Disobey task specification", nth_llm(10)),
    # tool
    # (the model goes on with metrics no call returned after the timeout: its invention, as heldout14-30 file a value
    # made up after a failure - was "tool-", the timeout's layer)
    Pair("model-oncall-metrics-timeout-invented", "oncall", "model", "metrics_timeout", "TRAIL Timeouts (error ignored)", asking("restart_service"),
         diff_where=tool_step("get_metrics")),
    Pair("tool-oncall-restart-403-unreported", "oncall", "tool", "restart_forbidden", "TRAIL Authentication errors", tool_step("restart_service")),
    Pair("tool-oncall-window-not-in-enum", "oncall", "tool", "bad_window", "ToolScan IAV Invalid argument value", asking("get_metrics")),
    Pair("tool-oncall-restart-missing-reason", "oncall", "tool", "missing_reason", "ToolScan Missing required argument", asking("restart_service")),
    # ('I will restart checkout-api now.', restart_service(service='payments-worker')): the model's words at the call
    # name its object, so the slip is the model's, as every later set has FM-2.6 (was "tool-": the invented name)
    Pair("model-oncall-restarts-another-service", "oncall", "model", "wrong_target", "MAST FM-2.6 Reasoning-action mismatch", asking("restart_service")),
    # ("answers pings in 12 ms" after the probe failed: a figure made up, the model's - was "tool-")
    Pair("model-netdesk-ping-error-invented", "netdesk", "model", "ping_down", "AgentErrorTaxonomy Reflection: tool error ignored", answer,
         diff_where=tool_step("ping_host")),
    Pair("tool-expenses-missing-target-currency", "expenses", "tool", "missing_to", "ToolScan Missing required argument", asking("convert_currency")),
    Pair("tool-expenses-receipts-401-uncaught", "expenses", "tool", "receipts_401", "TRAIL Authentication errors", failed_step),
    Pair("tool-ledger-output-shape-changed-mid-run", "ledger", "tool", "shape_change", "TRAIL API issues (service response changed)",
         tool_step("read_day", 8)),
    # workflow
    Pair("workflow-oncall-stops-before-verifying", "oncall", "workflow", "premature_stop", "MAST FM-3.1 Premature termination", last_step),
    Pair("workflow-oncall-loop-ignores-final-answer", "oncall", "workflow", "keep_going", "MAST FM-1.5 Unaware of termination conditions",
         second_answer),
    Pair("tool-oncall-alerts-api-429-retried-forever", "oncall", "tool", "alerts_429", "TRAIL Rate limiting (retried without backoff)",
         tool_step("list_alerts")),
    Pair("workflow-kb-retrieved-context-never-sent", "kb", "memory", "context_dropped", "TRAIL Context handling failures", nth_llm(0)),
    # memory
    Pair("memory-netdesk-handoff-drops-conversation", "netdesk", "memory", "handoff_forgets", "MAST FM-1.4 Loss of conversation history",
         agent_first_llm("network")),
    Pair("memory-ledger-compaction-drops-results-mid-run", "ledger", "memory", "drop_results", "AgentErrorTaxonomy Memory: context compaction",
         nth_llm(10)),
    # model
    Pair("model-oncall-claims-unverified-recovery", "oncall", "model", "no_verify", "MAST FM-3.3 No or incorrect verification", answer),
    Pair("model-oncall-asks-alerts-forever", "oncall", "model", "loop_alerts", "ToolScan Infinite loop / repeated identical calls",
         asking("list_alerts", 1)),
    Pair("model-ledger-rereads-a-day-mid-run", "ledger", "model", "repeat_day", "MAST FM-1.3 Step repetition", asking("read_day", 8)),
    Pair("model-ledger-hallucinated-total", "ledger", "model", "wrong_total", "TRAIL Hallucinated facts", answer),
    Pair("tool-expenses-amount-as-text", "expenses", "tool", "amount_text", "TRAIL Formatting errors", asking("convert_currency")),
    Pair("model-expenses-ignores-asked-currency", "expenses", "model", "ignore_currency", "MAST FM-1.1 / ignored input", asking("convert_currency")),
    Pair("model-expenses-429-not-recovered", "expenses", "model", "model_429", "TRAIL Rate limits", failed_step),
    Pair("model-kb-made-up-link", "kb", "model", "made_up_link", "TRAIL Hallucinated facts (language-only)", nth_llm(0)),
    # product
    Pair("product-oncall-forbidden-rollback", "oncall", "product", "forbidden_rollback", "MAST FM-1.2 Disobey role specification (forbidden action)",
         asking("rollback_deploy")),
    Pair("product-oncall-4000-log-lines", "oncall", "product", "huge_logs", "TRAIL Resource abuse", tool_step("get_logs"),
         diff_where=asking("get_logs")),  # the budget is blown by the output; the first difference is the request for 4,000 lines
    Pair("product-expenses-approved-before-receipts", "expenses", "product", "approve_early", "AgentErrorTaxonomy Planning: constraint ignorance",
         asking("approve_report")),
    Pair("product-kb-answer-from-weak-hits", "kb", "product", "weak_hits", "TRAIL Poor information retrieval", nth_llm(0),
         diff_where=retrieval_step),  # the documents differ first; the answer that used them is the fault
]

HISTORY = (0, 1)  # earlier healthy runs of each agent, other ids and numbers
VARIANT = 2  # the good and the faulty run: a retried model call, a null field, another valid order where the agent has one


@dataclass
class Recorded:
    pair: Pair
    good: str
    faulty: str
    history: list[str] = field(default_factory=list)


def record(rec: Recorder, pairs: list[Pair]) -> list[Recorded]:
    """Each pair: its agent's earlier healthy runs (once per agent), the good run, the faulty run."""
    from agentotel import tools

    saved = dict(tools._registry)
    tools._registry.update(_OWN)  # a run's environment lists these tools, whatever other modules declared
    try:
        return _record(rec, pairs)
    finally:
        tools._registry.clear()
        tools._registry.update(saved)


def _record(rec: Recorder, pairs: list[Pair]) -> list[Recorded]:
    done: dict[str, list[str]] = {}
    out = []
    for pair in pairs:
        run = AGENTS[pair.agent]
        Model.answer = MODELS[pair.agent]
        if pair.agent not in done:
            done[pair.agent] = [run(rec, None, v) for v in HISTORY]
        good = run(rec, None, VARIANT)
        faulty = run(rec, pair.fault, VARIANT)
        out.append(Recorded(pair, good, faulty, done[pair.agent]))
    return out


class Model:
    answer: Callable[[dict[str, Any]], dict[str, Any]] = staticmethod(lambda body: reply("ok"))

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        return type(self).answer(body)


@dataclass
class Score:
    pair: Pair
    expected: int | None
    diff_expected: int | None
    divergence: dict[str, Any] | None
    top: Any
    faulty: list[Any]
    good: list[Any]

    @property
    def diff_ok(self) -> bool:
        return self.diff_expected is not None and (self.divergence or {}).get("index_b") == self.diff_expected

    @property
    def check_ok(self) -> bool:
        return self.top is not None and self.top.index == self.expected and self.top.layer == self.pair.layer

    @property
    def alarms(self) -> list[Any]:
        return [f for f in self.good if f.severity in ("warning", "error")]


_RANK = {"error": 3, "warning": 2, "info": 1}


def score(traces: Any, recorded: list[Recorded]) -> list[Score]:
    from agentotel.analysis.detectors import findings

    out = []
    for r in recorded:
        steps = traces.trajectory(r.faulty).to_dict()["steps"]
        expected = r.pair.where(steps)
        diff_expected = (r.pair.diff_where or r.pair.where)(steps)
        divergence = traces.diff(r.good, r.faulty).to_dict().get("first_divergence")
        policy = POLICIES.get(r.pair.agent)
        found = findings(traces, r.faulty, policy=policy)
        ranked = sorted(found, key=lambda f: (-_RANK.get(f.severity, 2), f.index if f.index is not None else 10**9))
        good = findings(traces, r.good, policy=policy)
        out.append(Score(r.pair, expected, diff_expected, divergence, ranked[0] if ranked else None, found, good))
    return out


def table(scores: list[Score]) -> str:
    lines = []
    for s in scores:
        top = f"{s.top.kind}@{s.top.index}/{s.top.layer}" if s.top else "-"
        div = s.divergence or {}
        lines.append(f"{'D' if s.diff_ok else '.'}{'C' if s.check_ok else '.'}{'!' if s.alarms else ' '} {s.pair.id:55} "
                     f"want {s.expected}/{s.pair.layer:8} top {top:40} diff {div.get('kind')}@{div.get('index_b')} (want {s.diff_expected})"
                     + (f"  ALARM {[(f.kind, f.index) for f in s.alarms]}" if s.alarms else ""))
    n = len(scores)
    lines.append(f"diff top-1 {sum(s.diff_ok for s in scores)}/{n}, check step+layer {sum(s.check_ok for s in scores)}/{n}, "
                 f"good runs with a warning {sum(bool(s.alarms) for s in scores)}/{n}")
    return "\n".join(lines)


def main(ids: list[str]) -> None:
    chosen = [p for p in PAIRS if not ids or p.id in ids or p.agent in ids]
    directory = Path(tempfile.mkdtemp(prefix="heldout-")) / "traces"
    agentotel.instrument(directory)
    with serve(Model()) as base_url:
        recorded = record(Recorder(directory, base_url), chosen)
    agentotel.flush()
    (directory.parent / "pairs.json").write_text(json.dumps({r.pair.id: [r.good, r.faulty] for r in recorded}))
    with agentotel.open(directory) as traces:
        print(table(score(traces, recorded)))
    print(directory)
    agentotel.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
